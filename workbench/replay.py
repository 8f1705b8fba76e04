"""Replay: a fork function run again on a branch that already holds its writes reads them back
instead of appending them again (durable execution, as DBOS and Temporal replay a workflow's
recorded steps).

A runner *arms* each fork run: ``arm(run)`` (or ``armed(location, branch, start)``) around a
call in this thread or asyncio task (a context variable: forks running side by side in one
process each see their own), or the ``LITHIFY_FORK`` environment variable for a fresh process
or kernel (``fork_env``).
Every ``Branch`` handle this process then opens on that branch starts at the run's ``start``
event (where the trial began: its fork point, or for a member of an evolving population the
study's start) instead of the branch's head, and each write it makes is matched with the next
recorded event of the branch's resolved history:

- on the branch's own events (a resumed run), a delta must be the recorded delta, an effect
  must have the recorded key (its recorded result is returned, ``fn`` never runs), an
  observation the recorded name and step (the recorded value stands: a measurement committed
  once is not measured twice), a compaction must be a compaction;
- on events the branch inherits past ``start`` (a population member fast-forwarding through
  the leader's lineage it was forked from), the kind must match and the recorded event
  stands whatever the function writes there: the state is the leader's, as PBT copies a
  checkpoint.

Anything else raises ``ReplayDiverged`` and writes nothing. Reads see the branch as of the
replayed point (``state()``, ``head``, ``history()``), as an uninterrupted run would. Once the
recorded events are used up, the handles write as usual. Handles of the same branch in one
process share one cursor, so opening ``journal.branch(id)`` twice does not replay twice.
"""

from __future__ import annotations

import contextvars
import json
import os
import threading
import uuid
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import events as ev
from .errors import ReplayDiverged
from .storage import StoredEvent, is_url

if TYPE_CHECKING:
    from .port import JournalPort

FORK_ENV = "LITHIFY_FORK"  # {"journal", "branch", "start", "run"} of the fork this process runs
_CHUNK = 256  # recorded events read at a time


@dataclass(frozen=True)
class ForkRun:
    """The fork run this process (or thread) executes: a journal location, a branch, the seq
    its run starts from (None: the branch's fork point) and a token naming this attempt."""

    journal: str
    branch: int
    start: int | None
    run: str

    def to_env(self) -> str:
        return json.dumps(
            {"journal": self.journal, "branch": self.branch, "start": self.start, "run": self.run}
        )


def new_run(journal: str, branch: int, start: int | None) -> ForkRun:
    """A fresh attempt at running ``branch`` from ``start`` (its own token: a second attempt in
    the same warm process replays from the start again)."""
    return ForkRun(journal, branch, start, uuid.uuid4().hex)


def fork_env(run: ForkRun) -> dict[str, str]:
    """The environment variable that arms ``run`` in a child process or kernel."""
    return {FORK_ENV: run.to_env()}


_armed: contextvars.ContextVar[ForkRun | None] = contextvars.ContextVar(
    "lithify_fork_run", default=None
)
_cursors: dict[tuple[str, int, str], Cursor] = {}
_env_cache: tuple[str, ForkRun | None] = ("", None)
_lock = threading.Lock()


@contextmanager
def arm(run: ForkRun) -> Iterator[ForkRun]:
    """Arm ``run`` for this thread or task while the block runs (runners that call fork
    functions in their own process: pool workers, tests); its cursors go with it."""
    token = _armed.set(run)
    try:
        yield run
    finally:
        _armed.reset(token)
        with _lock:
            for key in [k for k in _cursors if k[2] == run.run]:
                del _cursors[key]


@contextmanager
def armed(journal: str, branch: int, start: int | None) -> Iterator[ForkRun]:
    """``arm`` a fresh attempt at running ``branch`` from ``start``."""
    with arm(new_run(journal, branch, start)) as run:
        yield run


def _from_env() -> ForkRun | None:
    global _env_cache
    text = os.environ.get(FORK_ENV, "")
    if not text:
        return None
    if _env_cache[0] == text:
        return _env_cache[1]
    try:
        doc = json.loads(text)
        run: ForkRun | None = ForkRun(
            str(doc["journal"]),
            int(doc["branch"]),
            None if doc.get("start") is None else int(doc["start"]),
            str(doc["run"]),
        )
    except (ValueError, KeyError, TypeError):
        run = None  # not ours to judge: a malformed variable arms nothing
    _env_cache = (text, run)
    return run


def current() -> ForkRun | None:
    """The fork run armed for this thread or task (or, failing that, this process), if any."""
    run = _armed.get()
    return run if run is not None else _from_env()


def _same_place(a: str, b: str) -> bool:
    if a == b:
        return True
    if is_url(a) or is_url(b) or a == ":memory:" or b == ":memory:":
        return False
    return os.path.realpath(a) == os.path.realpath(b)


def cursor_for(journal: JournalPort, branch: int) -> Cursor | None:
    """The replay cursor a new handle on ``branch`` shares, when this process runs that fork
    and its recorded events are not used up yet; else None."""
    run = current()
    if run is None or run.branch != branch or not _same_place(run.journal, journal.location):
        return None
    key = (journal.location, branch, run.run)
    with _lock:
        cursor = _cursors.get(key)
        if cursor is None:
            cursor = _cursors[key] = Cursor(journal, branch, run.start)
    return cursor if cursor.replaying else None


class Cursor:
    """Where a rerun stands in the recorded events of one branch: the replayed point (``seq``,
    ``hash``), the recorded end, and the events between read ahead in chunks."""

    def __init__(self, journal: JournalPort, branch: int, start: int | None) -> None:
        history = journal.history
        row = history.row(branch)
        first = row.fork_seq if start is None else start
        if not 0 <= first <= row.fork_seq:
            first = row.fork_seq  # a start past the fork point is not in this branch's run
        self.journal = journal
        self.branch = branch
        self.fork_seq = row.fork_seq
        self.end = journal.durable_head(branch)[0]
        self.seq = first
        self.hash = history.hash_at(branch, first)
        self._segments = history.segments(branch)
        self._ahead: deque[StoredEvent] = deque()
        self.lock = threading.RLock()

    @property
    def replaying(self) -> bool:
        """Whether recorded events remain past the replayed point."""
        return self.seq < self.end

    def peek(self) -> StoredEvent:
        """The next recorded event (call only while ``replaying``)."""
        if not self._ahead:
            hi = min(self.end, self.seq + _CHUNK)
            self._ahead.extend(self.journal.storage.events(self._segments, self.seq + 1, hi))
        return self._ahead[0]

    def take(self) -> StoredEvent:
        """Step past the next recorded event."""
        event = self.peek()
        self._ahead.popleft()
        self.seq, self.hash = event.seq, event.hash
        return event

    def own(self, event: StoredEvent) -> bool:
        """Whether the event is the branch's own (a resumed run) rather than inherited."""
        return event.seq > self.fork_seq

    def diverged(self, event: StoredEvent, wrote: str) -> ReplayDiverged:
        """The error for a write that does not match the recorded ``event``."""
        recorded = f"{event.kind} {ev.record_of(event).summary(100)}"
        where = "its own" if self.own(event) else f"inherited from branch {event.branch}"
        return ReplayDiverged(
            f"branch {self.branch}: the fork function, run again, wrote {wrote} at seq "
            f"{event.seq}, where the run before it recorded {recorded} ({where} events); a fork "
            "function must make the same writes in the same order when it runs again (take "
            "what varies from effects: branch.effect(key, fn)); nothing was written. To run it "
            "afresh, fork the trial's start point again",
            branch=self.branch,
            seq=event.seq,
            recorded=recorded,
            wrote=wrote,
        )


def describe(kind: str, payload: Mapping[str, Any] | str) -> str:
    """A short description of a write, for ``ReplayDiverged``."""
    text = payload if isinstance(payload, str) else json.dumps(payload, sort_keys=True)
    text = " ".join(text.split())
    return f"{kind} {text[:99] + '…' if len(text) > 100 else text}"
