"""The write buffer of a "lazy" journal: events of each branch held in memory and written
together, whole or not at all, and what a branch lost when its buffer could not be written.

A buffered event must follow its branch's last buffered (else durable) event, or it is refused
before it can spoil the buffer of an up-to-date handle. A buffer that fails to be written is
dropped whole; the branch's refusal count goes up, which makes every handle that buffered on it
stale (``Branch`` compares the count it saw), and the loss is kept until one of those handles
reports it. At a normal interpreter exit, every open buffer is written.
"""

from __future__ import annotations

import atexit
import sys
import threading
import weakref
from collections.abc import Callable

from .errors import BranchConflict, WorkbenchError
from .storage import EventRow, Storage

LAZY_BUFFER = 512  # buffered events of one branch written together

_OPEN: weakref.WeakSet[LazyBuffer] = weakref.WeakSet()


@atexit.register
def _write_at_exit() -> None:
    for buf in list(_OPEN):
        if buf.count and not buf.closed:
            try:
                buf.flush(None, report=True)
            except BaseException as e:  # noqa: BLE001 (exiting: say it, do not raise)
                sys.stderr.write(
                    f"lithify: buffered events of {buf.storage.path} could not be written at "
                    f"exit: {e}\n"
                )


class LazyBuffer:
    """Per-branch buffers over one Storage; ``durable_head(branch)`` gives (seq, hash) of a
    branch's last stored event, or its fork point. Thread-safe under the storage's lock."""

    def __init__(self, storage: Storage, durable_head: Callable[[int], tuple[int, bytes]]) -> None:
        self.storage = storage
        self._durable_head = durable_head
        self._lock: threading.RLock = storage.lock
        self._pending: dict[int, list[tuple[EventRow, str]]] = {}
        self._tips: dict[int, tuple[int, bytes]] = {}  # branch -> its last buffered (seq, hash)
        self.refused: dict[int, int] = {}  # branch -> how many of its buffers were refused
        self._lost: dict[int, tuple[int, str]] = {}  # branch -> (events lost, why) unreported
        self.count = 0
        self.closed = False
        _OPEN.add(self)

    def add(self, row: EventRow, shape: str) -> None:
        """Buffer one event (written when its branch's buffer is full, or at a flush)."""
        with self._lock:
            branch, seq, _, event_hash, parent = row[:5]
            tip = self._tips.get(branch)
            if tip is None:
                tip = self._durable_head(branch)
            if seq != tip[0] + 1 or parent != tip[1]:
                raise BranchConflict(
                    f"branch {branch} moved: this handle expected head {seq - 1} but the "
                    f"journal's head is {tip[0]} (another handle appended); take a fresh handle "
                    f"with journal.branch({branch}) and decide again",
                    branch=branch,
                    expected=seq - 1,
                    actual=tip[0],
                )
            buffer = self._pending.setdefault(branch, [])
            buffer.append((row, shape))
            self._tips[branch] = (seq, event_hash)
            self.count += 1
            if len(buffer) >= LAZY_BUFFER:
                self.flush(branch, report=True)

    def flush(self, branch: int | None, report: bool) -> None:
        """Write one branch's buffer, or every buffer. With ``report``, a failure raises an
        error that says how many events were lost; without, it is kept for the branch's own
        handles to report (what reads do: they must not raise another writer's loss)."""
        failed = self._write(branch)
        if failed and report:
            self._raise_lost(failed)

    def lost(self, branch: int) -> tuple[int, str] | None:
        """(events, why) a branch lost in a flush nobody reported yet; forgotten once asked."""
        return self._lost.pop(branch, None)

    def _write(self, branch: int | None) -> dict[int, tuple[int, BaseException]]:
        if not self.count:
            return {}
        with self._lock:
            if branch is None:
                todo = list(self._pending)
            else:
                todo = [branch] if branch in self._pending else []
            if not todo:
                return {}
            if self.storage.in_transaction:
                raise WorkbenchError(
                    "buffered events cannot be written inside another write transaction; "
                    "flush the journal before opening one"
                )
            failed: dict[int, tuple[int, BaseException]] = {}
            interrupted: BaseException | None = None
            for b in todo:
                rows = self._pending.pop(b)
                self.count -= len(rows)
                self._tips.pop(b, None)
                if interrupted is None:
                    try:
                        self.storage.append_many(rows)
                        continue
                    except Exception as e:
                        failed[b] = (len(rows), e)
                    except BaseException as e:  # KeyboardInterrupt: what is left is not tried
                        interrupted = e
                        failed[b] = (len(rows), e)
                else:
                    failed[b] = (len(rows), interrupted)
            # handles that buffered these events are stale for good
            for b, (n, err) in failed.items():
                self.refused[b] = self.refused.get(b, 0) + 1
                self._lost[b] = (self._lost.get(b, (0, ""))[0] + n, str(err))
        if interrupted is not None:
            raise interrupted
        return failed

    def _raise_lost(self, failed: dict[int, tuple[int, BaseException]]) -> None:
        for b in failed:
            self._lost.pop(b, None)  # reported here
        n = sum(k for k, _ in failed.values())
        where = ", ".join(f"branch {b}: {k}" for b, (k, _) in sorted(failed.items()))
        first = next(iter(failed.values()))[1]
        message = (
            f"{n} buffered event(s) were not written ({where}): {first} Handles of these "
            "branches are stale: take a fresh one with journal.branch(id) (it starts at the last "
            "durable event) and redo what was lost"
        )
        lost = {b: k for b, (k, _) in failed.items()}
        if isinstance(first, WorkbenchError):
            raise type(first)(message, **{**first.fields, "lost": n, "lost_by_branch": lost})
        raise WorkbenchError(message, lost=n, lost_by_branch=lost) from first
