"""The ``"process"`` runner: ``fn(journal_path, branch_id, params)`` in a fresh worker process
per fork (``python -m workbench.sweep.worker``): full isolation, and an interpreter's start-up
and the function's imports paid by every fork. A worker's death is reported with the signal
and its last lines on stderr (``worker_error``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from ...errors import ForkFailed
from ...forkrun import PARENT_ENV, PROGRESS_ENV
from .context import ForkContext


class ProcessRunner:
    """Runs ``fn(journal_path, branch_id, params)`` in a fresh worker process per fork."""

    name = "process"

    def __init__(self, fn: str) -> None:
        self.fn = fn

    def run_fork(self, ctx: ForkContext) -> str | None:
        env = {
            **os.environ,
            PROGRESS_ENV: str(ctx.progress_file),
            PARENT_ENV: str(os.getpid()),
            **ctx.fork_env(),
        }
        cmd = [
            sys.executable,
            "-m",
            "workbench.sweep.worker",
            self.fn,
            ctx.journal_path,
            str(ctx.fork.branch),
            json.dumps(ctx.fork.params),
        ]
        p = subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        ctx.on_stop(p.kill)
        try:
            _, err = p.communicate(timeout=ctx.timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise ForkFailed(
                "timed out", ename="TimeoutError", evalue=f"fork ran longer than {ctx.timeout} s"
            ) from None
        finally:
            ctx.on_stop(None)
        if p.returncode != 0:
            raise ForkFailed("worker failed", **_worker_error(err, p.returncode))
        return None

    def close(self) -> None:
        pass


def _worker_error(stderr: str, code: int) -> dict[str, Any]:
    for line in reversed(stderr.strip().splitlines()):
        if line.startswith("LITHIFY_ERROR "):
            try:
                doc = json.loads(line[len("LITHIFY_ERROR ") :])
            except ValueError:
                break
            keep = ("ename", "evalue", "where", "traceback")
            return {k: doc[k] for k in keep if k in doc} if isinstance(doc, dict) else {}
    tail = stderr.strip().splitlines()[-STDERR_LINES:]
    if code < 0:
        return killed(-code, tail)
    return {
        "ename": "WorkerError",
        "evalue": f"the worker exited with code {code}"
        + (f": {tail[-1][:500]}" if tail else " and wrote nothing on stderr"),
        "stderr": tail,
    }


STDERR_LINES = 20  # the last lines of a dead worker's stderr kept with its error


def killed(signum: int, tail: list[str]) -> dict[str, Any]:
    """The error document of a fork whose worker a signal ended (not the fork's own error)."""
    import signal

    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    return {
        "ename": "Killed",
        "evalue": f"the worker was killed by {name} ({signum})"
        + (
            f"; its last line on stderr: {tail[-1][:300]}"
            if tail
            else "; it wrote nothing on stderr"
        ),
        "signal": signum,
        "stderr": tail,
    }
