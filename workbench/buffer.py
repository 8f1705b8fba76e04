"""The write buffer of a "lazy" journal: events of each branch held in memory and written
together, whole or not at all, and what a branch lost when its buffer could not be written.

A buffered event must follow its branch's last buffered (else durable) event, or it is refused
before it can spoil the buffer of an up-to-date handle. A buffer that fails to be written is
dropped whole; the branch's refusal count goes up, which makes every handle that buffered on it
stale (``Branch`` compares the count it saw), and the loss is kept until one of those handles
reports it. At a normal interpreter exit, every open buffer is written.

SIGTERM and SIGHUP end a process without that exit (SIGINT raises KeyboardInterrupt, which
reaches it). While a lazy journal is open, and where the process lets us (handlers are set from
the main thread only), those signals first write every buffer, then do what they did before:
the program's own handler, or the default (the process ends by that signal, and no other thread
buffers anything in between). A signal that arrives while the main thread is inside the journal
(a write half done) is answered from a helper thread once the main thread leaves it. The
previous handlers come back when the last lazy journal closes, unless the program has replaced
ours meanwhile.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable
from types import FrameType
from typing import Any

from .errors import BranchConflict, WorkbenchError
from .storage import EventRow, Storage

LAZY_BUFFER = 512  # buffered events of one branch written together

_OPEN: weakref.WeakSet[LazyBuffer] = weakref.WeakSet()


def _write_all(when: str) -> None:
    """Write every open buffer (a failure is said on stderr, never raised)."""
    for buf in list(_OPEN):
        if not buf.count or buf.closed:
            continue
        try:
            buf.flush(None, report=True)
        except BaseException as e:  # noqa: BLE001 (exiting: say it, do not raise)
            sys.stderr.write(
                f"lithify: buffered events of {buf.storage.path} could not be written {when}: {e}\n"
            )


@atexit.register
def _write_at_exit() -> None:
    _write_all("at exit")


# -- SIGTERM and SIGHUP ---------------------------------------------------------------------

_SIGNALS = tuple(
    s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s
)
_previous: dict[int, Any] = {}  # signal -> the handler ours replaced
_users = 0  # open lazy buffers that asked for the handlers
_owner_pid = 0  # the process that installed them (a forked child inherits them, not the buffers)
_answered: set[int] = set()  # signals the helper thread re-sent after writing the buffers


def _held_here(buf: LazyBuffer) -> bool:
    """Whether this thread is inside the journal's lock (a write may be half done)."""
    owned = getattr(buf._lock, "_is_owned", None)
    return bool(owned()) if owned is not None else False


def _write_holding(buffers: list[LazyBuffer], name: str, keep: bool) -> None:
    """Take every buffer's lock (other threads finish the step they are in), write them all,
    and with ``keep`` hold the locks for good: the process is ending, and an event another
    thread buffered after this write would be lost with it."""
    taken = []
    try:
        for buf in buffers:
            buf._lock.acquire()
            taken.append(buf)
        _write_all(f"on {name}")
    finally:
        if not keep:
            for buf in reversed(taken):
                buf._lock.release()


def _on_signal(signum: int, frame: FrameType | None) -> None:
    previous = _previous.get(signum, signal.SIG_DFL)
    ending = not callable(previous)  # the default: the process ends by this signal
    if os.getpid() == _owner_pid and signum not in _answered:
        name = signal.Signals(signum).name
        buffers = [buf for buf in list(_OPEN) if buf.lazy and not buf.closed]
        if any(_held_here(buf) for buf in buffers):
            # The main thread was interrupted inside the journal (a write may be half done):
            # a helper thread writes once it leaves, then sends the signal again to go on. It
            # goes to the main thread itself: the only one that runs Python's handlers, and,
            # while the helper holds the locks for good, one blocked taking them. A signal sent
            # to the process could be taken by the helper instead, which does not wake a
            # blocked main thread: it then waited forever (seen under load).
            # While the process is ending, it is sent again until it ends: one that lands
            # just before the main thread starts waiting for the locks this thread keeps
            # wakes nothing (Python's handler only notes it), and the wait never ends.
            main = threading.main_thread().ident

            def finish() -> None:
                _write_holding(buffers, name, keep=ending)
                _answered.add(signum)
                if main is None:  # no main thread known: the process, as before
                    os.kill(os.getpid(), signum)
                    return
                try:
                    signal.pthread_kill(main, signum)
                    while ending:
                        time.sleep(0.05)
                        signal.pthread_kill(main, signum)
                except OSError:
                    pass  # the main thread is gone: the process is ending anyway

            threading.Thread(target=finish, name=f"lithify-{name}", daemon=True).start()
            return
        _write_holding(buffers, name, keep=ending)
    _answered.discard(signum)
    if callable(previous):
        previous(signum, frame)
    else:  # end by this signal, as without us (an ignored one was never routed here)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


def _install() -> bool:
    """Route SIGTERM and SIGHUP through ``_on_signal`` (main thread only); whether this call
    counts as a user (and must ``_uninstall``)."""
    global _users, _owner_pid
    if threading.current_thread() is not threading.main_thread():
        return False
    if _users == 0:
        for sig in _SIGNALS:
            current = signal.getsignal(sig)
            if current is None or current == signal.SIG_IGN or current is _on_signal:
                continue  # set outside Python, or ignored: nothing ends the process
            _previous[sig] = current
            signal.signal(sig, _on_signal)
        _owner_pid = os.getpid()
    _users += 1
    return True


def _uninstall() -> None:
    global _users
    _users -= 1
    if _users > 0 or threading.current_thread() is not threading.main_thread():
        return  # (from another thread ours stays: with no buffer open it only passes on)
    for sig, previous in list(_previous.items()):
        if signal.getsignal(sig) is _on_signal:  # not replaced by the program since
            signal.signal(sig, previous)
        del _previous[sig]


class LazyBuffer:
    """Per-branch buffers over one Storage; ``durable_head(branch)`` gives (seq, hash) of a
    branch's last stored event, or its fork point. Thread-safe under the storage's lock."""

    def __init__(
        self,
        storage: Storage,
        durable_head: Callable[[int], tuple[int, bytes]],
        signals: bool = False,
    ) -> None:
        """``signals``: a lazy journal's buffer, written on SIGTERM and SIGHUP too (see the
        module docstring)."""
        self.storage = storage
        self.lazy = signals
        self._durable_head = durable_head
        self._lock: threading.RLock = storage.lock
        self._pending: dict[int, list[tuple[EventRow, str]]] = {}
        self._tips: dict[int, tuple[int, bytes]] = {}  # branch -> its last buffered (seq, hash)
        self.refused: dict[int, int] = {}  # branch -> how many of its buffers were refused
        self._lost: dict[int, tuple[int, str]] = {}  # branch -> (events lost, why) unreported
        self.count = 0
        self.closed = False
        # a journal dropped without close() hands the signals back when it is collected
        self._signals = weakref.finalize(self, _uninstall) if signals and _install() else None
        _OPEN.add(self)

    def close(self) -> None:
        """No more writes (the journal closed); hand the signals back when it was the last."""
        self.closed = True
        if self._signals is not None:
            self._signals()  # once: a finalizer runs at most once

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
