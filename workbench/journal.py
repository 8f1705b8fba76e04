"""``Journal``: one append-only, content-addressed event log, with branches.

A journal owns one backend (``journal.storage``, see ``workbench.storage``) and the resolved
histories of its branches (``journal.history``). Many processes may open the same file; each
branch has one writer at a time (a stale handle is refused, never interleaved). A ``Journal``
may be shared between threads; a ``Branch`` handle belongs to one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from . import events as ev
from . import forking, opening, refs
from .branch import Branch
from .buffer import LazyBuffer
from .diff import diff as diff_states
from .effects import compact_intents, unknown_outcomes
from .errors import InvalidValue, NotFound, WorkbenchError
from .events import SweepInfo
from .history import History, built_from
from .opening import (
    DURABILITY,
    PLAIN_STATE,
    Clock,
    check_limits,
    check_options,
    check_place,
    check_timeout,
    new_journal_schema,
    state_for,
    state_name_of,
)
from .storage import (
    BranchRow,
    EventRow,
    FullTextSearch,
    RunRow,
    SearchHit,
    Storage,
    is_url,
    now_ms,
    open_storage,
)
from .warmcache import WarmCache

if TYPE_CHECKING:
    import polars as pl

    from .subscriptions import Subscription
    from .verify import VerifyReport

__all__ = [
    "DURABILITY",
    "PLAIN_STATE",
    "Journal",
    "SweepInfo",
    "built_from",
    "record_of",
    "state_name_of",
]

record_of = ev.record_of


class Journal:
    """An append-only journal of events on branches; see ``Journal.open``.

    What a ``Branch`` and the modules around it use of their journal is named, and held by the
    type checker, in ``workbench.port.JournalPort``; this class is one."""

    def __init__(
        self,
        storage: Storage,
        state: type | None,
        snapshot_every: int,
        durability: str,
        state_known: bool = True,
        clock: Clock | None = None,
        limits: tuple[int, int] = (ev.MAX_EVENT_BYTES, ev.MAX_KEY_BYTES),
    ) -> None:
        self._storage = storage
        self.history = History(storage, state, state_known)
        self.snapshot_every = snapshot_every
        self.max_event_bytes, self.max_key_bytes = limits
        self.durability = durability
        self._clock = clock
        self._lock = storage.lock  # the connection's: shared with the buffer
        self._closed = False
        self._lazy = durability == "lazy"
        self._buffer = LazyBuffer(storage, self.durable_head, signals=self._lazy)
        self._keep = False  # kept open by a pool worker (close only flushes)
        self.warm: WarmCache | None = None  # what a pool worker keeps between forks

    # -- opening --------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        state: type | None = None,
        *,
        durability: str = "process",
        snapshot_every: int = 128,
        source: str | None = None,
        key: str | bytes | Callable[[], str | bytes] | None = None,
        create: bool | None = None,
        readonly: bool = False,
        raw: bool = False,
        timeout: float = 30.0,
        clock: Clock | None = None,
        max_event_bytes: int = ev.MAX_EVENT_BYTES,
        max_key_bytes: int = ev.MAX_KEY_BYTES,
    ) -> Journal:
        """Open (or create) the journal at ``path``: a file, or a PostgreSQL URL
        ``postgresql://user@host:port/dbname?journal=NAME`` (one schema per journal, "main"
        by default; ``pip install 'lithify-workbench[postgres]'``).

        ``state`` is the State class deltas are applied to. The journal records its name
        (``state_name``, else the class's qualname) and refuses another class
        (``StateMismatch``). Without one, the class registered under the recorded name is used;
        if there is none, event-level reads work and state-level ones raise
        ``StateUnavailable``. ``raw=True`` reads states as plain JSON updated by RFC 7386 merge
        patches (a read-only view). ``durability``: "process" (survives kill -9), "fsync"
        (also power loss) or "lazy" (buffers deltas and observations).

        ``create``: None (default) creates a missing file but refuses an existing empty one
        (what truncation looks like); True also starts a journal in an empty file; False
        requires a journal. ``readonly`` never writes (it also works on read-only files and
        folders). ``timeout``: seconds to wait for another connection's lock (``Busy`` after).
        ``clock``: where events' recorded times come from (unix ms or a datetime), for tests
        and imports that replay recorded times; the system clock when not given.
        ``max_event_bytes`` (16 MiB) and ``max_key_bytes`` (4 KiB): the most one event's payload
        and one effect key may take as stored UTF-8; a larger one is refused (``InvalidValue``)
        before anything is written. They bound what this handle writes, not what it reads.
        """
        path = os.fspath(path)
        limits = check_limits(max_event_bytes, max_key_bytes)
        if path == ":memory:":
            return cls.in_memory(
                state,
                snapshot_every=snapshot_every,
                clock=clock,
                max_event_bytes=max_event_bytes,
                max_key_bytes=max_key_bytes,
            )
        check_place(path)
        timeout = check_timeout(timeout)
        if callable(key):
            key = key()
        if clock is None and not raw:  # in a pool worker, the journal kept open is reused
            place = path if is_url(path) else os.path.realpath(path)
            arguments = (place, state, durability, snapshot_every, source, key, create, readonly)
            journal = opening.kept(
                (*arguments, float(timeout), limits),
                lambda: cls._make(
                    path,
                    state,
                    durability,
                    snapshot_every,
                    source,
                    key,
                    create=create,
                    readonly=readonly,
                    timeout=float(timeout),
                    limits=limits,
                )._kept_open(),
            )
            if journal is not None:
                return journal
        return cls._make(
            path,
            state,
            durability,
            snapshot_every,
            source,
            key,
            create=create,
            readonly=readonly or raw,
            raw=raw,
            timeout=float(timeout),
            clock=clock,
            limits=limits,
        )

    @classmethod
    def in_memory(
        cls,
        state: type | None = None,
        *,
        snapshot_every: int = 128,
        clock: Clock | None = None,
        max_event_bytes: int = ev.MAX_EVENT_BYTES,
        max_key_bytes: int = ev.MAX_KEY_BYTES,
    ) -> Journal:
        """A journal in memory: the same code path as a file, gone when closed."""
        limits = check_limits(max_event_bytes, max_key_bytes)
        return cls._make(":memory:", state, "process", snapshot_every, clock=clock, limits=limits)

    @classmethod
    def _make(
        cls,
        path: str,
        state: type | None,
        durability: str,
        snapshot_every: int,
        source: str | None = None,
        key: str | bytes | None = None,
        *,
        create: bool | None = None,
        readonly: bool = False,
        raw: bool = False,
        timeout: float = 30.0,
        clock: Clock | None = None,
        limits: tuple[int, int] = (ev.MAX_EVENT_BYTES, ev.MAX_KEY_BYTES),
    ) -> Journal:
        check_options(durability, snapshot_every, create, clock, state, raw)
        storage = open_storage(
            path,
            durability,
            int(timeout * 1000),
            source=source,
            key=key,
            readonly=readonly,
            create=create,
            schema=new_journal_schema(state),
        )
        try:
            state, known = state_for(storage, state, raw)
        except BaseException:
            storage.close()
            raise
        return cls(storage, state, snapshot_every, durability, known, clock, limits)

    @property
    def path(self) -> str:
        """The journal file's path (":memory:" for an in-memory journal)."""
        return self._storage.path

    @property
    def location(self) -> str:
        """Where another process opens this journal: the file's path, or the PostgreSQL URL
        with its password (``path`` shows it without)."""
        return self._storage.location

    @property
    def storage(self) -> Storage:
        """The backend (see ``workbench.storage.Storage``); raises once the journal is closed."""
        if self._closed:
            raise WorkbenchError("this journal is closed; open it again with Journal.open(path)")
        return self._storage

    @property
    def state_class(self) -> type | None:
        """The State class states are rebuilt with (None: plain JSON)."""
        return self.history.state_class

    @property
    def state_name(self) -> str:
        """The name of the State the journal was written with ("@json": plain JSON states)."""
        return self._storage.meta.get("state_name", "") or (
            state_name_of(self.state_class) if self.state_class is not None else PLAIN_STATE
        )

    @property
    def readonly(self) -> bool:
        """True when opened read-only (nothing can be written through this journal)."""
        return self._storage.readonly

    def _kept_open(self) -> Journal:
        """This journal, kept open by a pool worker: ``close`` only flushes it, and it carries
        the worker's warm caches."""
        self._keep, self.warm = True, WarmCache()
        self.history.warm = self.warm
        return self

    def close(self) -> None:
        """Flush buffered events and close the connection; safe to call twice. (A journal a
        pool worker keeps open is only flushed: see ``keep_journals_open``.)"""
        with self._lock:
            if self._closed:
                return
            if self._keep:
                self.flush()
                return
            try:
                self.flush()
                if not self.readonly:
                    compact_intents(self._storage)
            finally:
                self._closed = True
                self._buffer.close()
                self._storage.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Journal({self.path!r}, durability={self.durability!r})"

    # -- writing (what a Branch uses) ---------------------------------------------------------

    def now(self) -> int:
        """Unix ms for an event's recorded time: the system clock, or the one given to open()."""
        if self._clock is None:
            return now_ms()
        value = self._clock()
        if (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and abs(value) <= ev.MAX_TIME_MS
        ):
            return int(value)  # milliseconds, however small
        if isinstance(value, datetime):
            return ev.unix_ms(value, "the clock's time")
        raise InvalidValue(
            f"the clock given to Journal.open returned {value!r}; it must return unix "
            "milliseconds or a datetime"
        )

    def refusals(self, branch: int) -> int:
        """How many times buffered events of a branch were refused (a handle that saw fewer is
        stale: what it buffered is gone)."""
        return self._buffer.refused.get(branch, 0)

    def write(self, row: EventRow, shape: str, buffered: bool) -> None:
        """Append one event: buffered in lazy mode for deltas and observations (see
        ``workbench.buffer``); anything else is written now, after the branch's buffer."""
        buf = self._buffer
        if buffered and self._lazy:
            buf.add(row, shape)
            return
        if buf.count:
            buf.flush(row[0], report=True)  # the row's branch
        self.storage.append(row, shape)

    def durable_head(self, branch: int) -> tuple[int, bytes]:
        """(seq, hash) of a branch's last stored event (its fork point when it has none)."""
        head = self.storage.head(branch)
        return (head.seq, head.hash) if head is not None else self.history.fork_point(branch)

    def flush(self, branch: int | None = None) -> None:
        """Write buffered ("lazy") events now: one branch's, or every branch's.

        A branch's buffer is written whole or not at all. When one cannot be written (another
        writer appended first, a full disk...), this raises an error that says how many
        buffered events were lost, and every handle of that branch is stale from then on
        (``BranchConflict``): a fresh handle starts at the branch's durable head, and nothing is
        ever written past a gap. Reads that write buffers first keep a failure for the branch's
        own handles to report, rather than raising it at whoever read."""
        self._buffer.flush(branch, report=True)

    def settle(self) -> None:
        """Before a read: write every buffer; a failure is kept for its branch's handles."""
        if self._buffer.count:
            self._buffer.flush(None, report=False)

    def lost(self, branch: int) -> tuple[int, str] | None:
        """(events, why) a branch lost from its buffer in a flush nobody reported yet; reported
        (and forgotten) by the branch's stale handles."""
        return self._buffer.lost(branch)

    # -- branches -------------------------------------------------------------------------

    def _resolve(self, ref: int | str | Branch) -> int:
        if isinstance(ref, Branch):
            return ref.id
        if isinstance(ref, bool) or not isinstance(ref, (int, str)):
            raise InvalidValue(f"a branch is named by its id (int) or name (str), not {ref!r}")
        if isinstance(ref, int):
            return self.history.row(ref).id
        row = self.storage.branch_by_name(ref)
        if row is None:
            if ref.isdigit():
                return self.history.row(int(ref)).id
            raise NotFound(
                f"there is no branch named {ref!r} in {self.path}; list them with "
                "journal.branches() or `lithify branches`",
                name=ref,
            )
        self.history.remember(row)
        return row.id

    def branch(self, ref: int | str) -> Branch:
        """A fresh handle on a branch, by id or name, at the branch's current head."""
        self.settle()
        return Branch(self, self.history.row(self._resolve(ref)))

    def root(self) -> Branch:
        """Branch 0, named "main", created with the journal."""
        return self.branch(0)

    def segments(self, branch_id: int) -> list[tuple[int, int, int | None]]:
        """The resolved history of a branch as (branch, first_seq, last_seq) pieces, root first."""
        return self.history.segments(branch_id)

    def hash_at(self, branch_id: int, seq: int) -> bytes:
        """The hash of the event at seq in a branch's resolved history (zeros at seq 0)."""
        return self.history.hash_at(branch_id, seq)

    def _info(self, row: BranchRow, heads: Mapping[int, Any]) -> ev.BranchInfo:
        head = heads.get(row.id)
        seq, h = (head.seq, head.hash) if head is not None else self.history.fork_point(row.id)
        return ev.BranchInfo(
            row.id,
            row.name,
            row.parent,
            row.fork_seq,
            seq,
            h.hex(),
            ev.loads(row.params),
            row.created,
            row.sweep,
        )

    def info(self, ref: int | str) -> ev.BranchInfo:
        """The BranchInfo of one branch, with its current head."""
        self.settle()
        row = self.history.row(self._resolve(ref))
        head = self.storage.head(row.id)
        return self._info(row, {row.id: head} if head else {})

    def branches(self) -> list[ev.BranchInfo]:
        """Every branch with its current head, by id."""
        self.settle()
        rows = self.storage.branch_rows()
        for r in rows:
            self.history.remember(r)
        heads = self.storage.heads()
        return [self._info(r, heads) for r in rows]

    def children(self, ref: int | str) -> list[ev.BranchInfo]:
        """The direct forks of a branch, by id."""
        self.settle()
        rows = self.storage.branch_rows(parent=self._resolve(ref))
        heads = self.storage.heads() if rows else {}
        return [self._info(r, heads) for r in rows]

    def fork(
        self,
        base: Branch,
        at: int,
        specs: Sequence[tuple[str | None, Mapping[str, Any] | None]],
        sweep: int | None = None,
    ) -> list[Branch]:
        """Fork ``base`` at ``at`` once per (name, params): one row each, nothing copied."""
        return forking.fork(self, base, at, specs, sweep)

    def sweep(
        self,
        base: Branch | int | str,
        at: int,
        params: Iterable[Mapping[str, Any]],
        spec: Mapping[str, Any] | None = None,
        how: Mapping[str, Any] | None = None,
    ) -> list[Branch]:
        """Fork ``base`` at ``at`` once per parameter set (rows only) and record the sweep; with
        ``how`` (runner, workers, target...), also how it runs and a pending run per fork, in
        the same transaction (a coordinator killed right after planning resumes the same way)."""
        return forking.sweep(self, base, at, params, spec, how)

    def open_sweep(
        self,
        base: Branch | int | str,
        at: int,
        spec: Mapping[str, Any],
        how: Mapping[str, Any],
    ) -> int:
        """Record an adaptive sweep before its first fork (its trials are forked one at a time
        with ``sweep_fork``); returns its id."""
        return forking.open_sweep(self, base, at, spec, how)

    def sweep_fork(
        self,
        sweep: int,
        base: Branch | int | str,
        at: int,
        params: Mapping[str, Any],
        runner: str | None = None,
    ) -> Branch:
        """Add one fork of ``base`` at ``at`` to a recorded sweep, with its pending run, in one
        transaction (an adaptive sweep's next trial)."""
        return forking.sweep_fork(self, sweep, base, at, params, runner)

    def runs(self, sweep: int | None = None) -> list[RunRow]:
        """The run records of a sweep's forks (or of every sweep): status, times, error."""
        self.settle()
        return self.storage.runs(sweep)

    def record_run(self, branch: int, sweep: int, status: str, **fields: Any) -> None:
        """Create or update a fork's run record (for an agent that runs a sweep's forks itself;
        the sweep runners record theirs)."""
        self.storage.put_run(branch, sweep, status, **fields)

    def record_how(self, sweep: int, how: Mapping[str, Any]) -> None:
        """Record how a sweep runs (runner, workers, target...), so a rerun or a resume runs it
        the same way."""
        self.storage.set_sweep_how(sweep, ev.canonical(dict(how), "how"))

    def end(self) -> int:
        """The tail position after the newest event: where a live view starts following."""
        self.settle()
        return self.storage.top_position()

    def tags(self) -> list[tuple[str, int, int]]:
        """Every label: (label, branch, seq)."""
        return list(self.storage.tags())

    @property
    def encrypted(self) -> bool:
        """Whether the journal is encrypted at rest (SQLCipher)."""
        return bool(self.storage.encrypted)

    def sweeps(self) -> list[SweepInfo]:
        """Every recorded sweep with the ids of its forks."""
        return forking.sweeps(self)

    def unknown_outcomes(self, branch_id: int) -> list[str]:
        """Effect keys started on a branch whose result was never committed.

        A read: it writes nothing (buffered events stay buffered: effects are never buffered),
        so it answers at once while another process holds a write transaction."""
        return unknown_outcomes(self.storage, branch_id)

    # -- reading --------------------------------------------------------------------------

    def rebuild_snapshots(self) -> int:
        """Rebuild every snapshot built from other delta versions or another state schema than
        this process's (what ``state()`` and ``at()`` also do, lazily), and every damaged one
        (which reads pass over with a warning); returns how many."""
        self.settle()
        return self.history.rebuild_snapshots()

    def resolve(self, ref: str, default_branch: int | str = 0) -> tuple[int, int]:
        """(branch, seq) a ref names: head, head~N, BRANCH, BRANCH@SEQ, LABEL or a hash prefix."""
        self.settle()
        return refs.resolve(self, ref, default_branch)

    def record(self, ref: str | tuple[int, int]) -> ev.Record:
        """The event a ref names (resolved through the branch's ancestors)."""
        branch, seq = ref if isinstance(ref, tuple) else self.resolve(ref)
        if seq == 0:
            raise NotFound(f"seq 0 is the initial state, not an event (branch {branch})")
        event = self.storage.event_at(*self.history.owner(branch, seq))
        if event is None:
            raise NotFound(f"branch {branch} has no event at seq {seq}")
        return record_of(event)

    def receipt(self, ref: str | tuple[int, int]) -> dict[str, Any]:
        """The receipt journaled with the effect a ref names: what the model saw for that call."""
        rec = self.record(ref)
        if rec.kind != "effect" or "receipt" not in rec.payload:
            raise NotFound(
                f"event {rec.branch}@{rec.seq} ({rec.kind}) carries no receipt; receipts are "
                "journaled with effects run inside `with branch.receipt(r):`"
            )
        receipt = dict(rec.payload["receipt"])
        p = self.storage.provenance(rec.branch, rec.seq)
        if p is not None and p.render_ms is not None:
            # kept beside the event rather than in it: a duration would make identical histories
            # hash differently
            receipt["projection_ms"] = p.render_ms
        return {
            "branch": rec.branch,
            "seq": rec.seq,
            "key": rec.payload.get("key"),
            "receipt": receipt,
        }

    def state(self, ref: str | tuple[int, int]) -> Any:
        """The state at any ref (``main@40``, ``head~3``, a label, a hash prefix...)."""
        branch, seq = ref if isinstance(ref, tuple) else self.resolve(ref)
        return self.branch(branch).at(seq)

    def diff(self, ref_a: str | tuple[int, int], ref_b: str | tuple[int, int]) -> list[Any]:
        """Changes between the states at two refs, on the same branch or across branches."""
        return diff_states(self.state(ref_a), self.state(ref_b))

    def provenance(self, ref: str | tuple[int, int], path: str | None = None) -> dict[str, Any]:
        """Who wrote the event at ``ref`` and, with ``path`` (e.g. ``notes[3]``), the chain of
        events that produced that value of the state (see workbench.provenance)."""
        branch, seq = ref if isinstance(ref, tuple) else self.resolve(ref)
        from .provenance import provenance as trace_provenance

        return trace_provenance(self, branch, seq, path)

    def rekey(self, new_key: str | bytes) -> None:
        """Re-encrypt this (encrypted) journal under ``new_key``; the old key stops working."""
        self.flush()
        self.storage.rekey(new_key)

    def vacuum(self) -> tuple[int, int]:
        """Checkpoint, rebuild the file compactly and trim the intent log: (bytes before, after)."""
        self.flush()
        self.storage.writable()

        before = self.storage.size_bytes()
        # first: it writes (the new intent log, the effect index)
        compact_intents(self.storage, force=True)
        self.storage.vacuum()
        return before, self.storage.size_bytes()

    def subscribe(self, name: str) -> Subscription:
        """A durable, named consumer of every event, resuming at its acknowledged position."""
        self.settle()
        from .subscriptions import Subscription

        return Subscription(self, name)

    def lookup_hash(self, prefix: str) -> tuple[int, int]:
        """(branch, seq) of the one event whose hash starts with a hex prefix (8+ characters)."""
        self.settle()
        return refs.lookup_hash(self.storage, prefix)

    def head_of(self, ref: int | str) -> tuple[int, int]:
        """(branch id, head seq) of a branch by id or name (what resolving a ref asks)."""
        bid = self._resolve(ref)
        return bid, self.durable_head(bid)[0]

    def labelled(self, label: str) -> tuple[int, int] | None:
        """(branch, seq) a label set with ``branch.tag`` points at, if any."""
        return self.storage.tag(label)

    def tail(self, cursor: int = 0, limit: int | None = None) -> tuple[list[ev.Record], int]:
        """Events committed after a global position, and the cursor to pass next time."""
        if isinstance(cursor, bool) or not isinstance(cursor, int) or cursor < 0:
            raise InvalidValue(f"cursor must be an int >= 0, not {cursor!r}")
        self.settle()
        events = self.storage.tail(cursor, limit)
        return [record_of(e) for e in events], (events[-1].position if events else cursor)

    def search(
        self, text: str, branch: int | str | None = None, limit: int = 50
    ) -> list[ev.Record]:
        """Events whose payload matches a full-text query (SQLite FTS5 syntax: words, "a phrase",
        prefix*, AND/OR/NOT), best first; with ``branch``, only in that branch's resolved history.
        The index is built on demand (like the hash index), never on the append path."""
        if not isinstance(text, str) or not text.strip():
            raise InvalidValue("search takes a non-empty query, like: timeout OR deadlock")
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidValue(f"limit is a positive int, not {limit!r}")
        self.settle()
        segments = None if branch is None else self.history.segments(self._resolve(branch))
        storage = self.storage
        if not isinstance(storage, FullTextSearch):
            raise WorkbenchError(
                f"{self.path}: this journal's backend has no full-text search; find events with "
                "journal.tail() or journal.record() instead"
            )
        hits: list[SearchHit] = storage.search(text, segments, limit)
        return [self.record((h.branch, h.seq)) for h in hits]

    def matrix(self, **options: Any) -> pl.DataFrame:
        """Observations joined to each branch's merged params (see workbench.matrix)."""
        from .matrix import build_matrix

        return build_matrix(self, **options)

    # -- integrity ------------------------------------------------------------------------

    def verify(self, expect: Mapping[int | str, str] | None = None) -> VerifyReport:
        """Recompute every hash, chain link and snapshot seal, and let SQLite check its pages;
        report the first bad seq per branch, and every branch's head hash. A damaged file is
        read as far as it goes: every seq that cannot be read is reported, the rest checked.

        ``expect`` maps branches (id or name) to a head hash recorded outside the journal (the
        whole hash, or a prefix of at least 32 hex characters): each must still be in that
        branch's history, which proves the history up to it was not rewritten, something the
        journal cannot prove about itself.
        """
        self.settle()
        from .verify import expected_heads, verify

        return verify(self.storage, self.history, expected_heads(expect, self._resolve))
