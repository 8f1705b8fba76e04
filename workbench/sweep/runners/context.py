"""What a runner needs for one fork (``ForkContext``): where to write, how to report progress,
how to be stopped, and how to arm the fork's run for replay; and where executed notebooks go."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import replay
from ...storage import is_url


@dataclass(frozen=True)
class Fork:
    """One fork of a sweep: its branch, its own params, and the seq its run starts from (None:
    its fork point; a population member's run starts at the study's start, see
    ``workbench.replay``)."""

    branch: int
    params: dict[str, Any]
    start: int | None = None


class ForkContext:
    """What a runner needs for one fork: where to write, how to report, how to be stopped."""

    def __init__(
        self,
        journal_path: str,
        fork: Fork,
        out_dir: Path,
        cancel: threading.Event,
        timeout: float | None,
    ) -> None:
        self.journal_path = journal_path
        self.fork = fork
        self.out_dir = out_dir
        self.cancel = cancel
        self.timeout = timeout
        self.progress_file = out_dir / f"{fork.branch}.progress.json"
        self.notebook_out = out_dir / f"{fork.branch}.ipynb"
        self._stop: Callable[[], None] | None = None
        self._lock = threading.Lock()
        self.function: str | None = None
        self.run = replay.new_run(journal_path, fork.branch, fork.start)

    def fork_env(self) -> dict[str, str]:
        """What arms this fork's run in a child process or kernel (see ``workbench.replay``):
        a rerun reads back what the branch already holds instead of appending it again."""
        return replay.fork_env(self.run)

    def on_stop(self, stop: Callable[[], None] | None) -> None:
        with self._lock:
            self._stop = stop
        if stop is not None and self.cancel.is_set():
            stop()

    def stop(self) -> None:
        with self._lock:
            stop = self._stop
        if stop is not None:
            stop()

    @property
    def parameters(self) -> dict[str, Any]:
        """What the template receives: journal, branch, the fork's params, and all of them as
        JSON in ``fork_params`` (for generic templates)."""
        out = {
            "journal": self.journal_path,
            "branch": self.fork.branch,
            **self.fork.params,
            "fork_params": json.dumps(self.fork.params),
        }
        if self.function is not None:
            out["function"] = self.function
        return out


def tidy(out_dir: Path, contexts: Iterable[ForkContext], journal: str) -> None:
    """After a sweep's forks ended: their progress files go (they are read while forks run),
    and the sweep's folder too when nothing else is in it (executed notebooks stay), with the
    default runs folder when that is empty then, so a sweep of fork functions leaves no empty
    folder behind."""
    for ctx in contexts:
        ctx.progress_file.unlink(missing_ok=True)
    folders = [out_dir]
    if out_dir.parent == out_dir_for(journal):
        folders.append(out_dir.parent)
    for folder in folders:
        try:
            folder.rmdir()  # only an empty folder: anything kept stops it
        except OSError:
            return


def out_dir_for(journal: str) -> Path:
    """Where executed notebooks go by default: beside a journal file, or ./lithify-runs for a
    PostgreSQL journal."""
    if is_url(journal):
        return Path(os.getcwd()) / "lithify-runs"
    return Path(journal).resolve().parent / "runs"
