"""The storage seam: what a journal backend must do, role by role (``StoreCore``, ``EventLog``,
``BranchCatalog``, ``SnapshotStore``, ``EffectIndex``, ``RunLog``), what it gets for free
(``Storage``: the six roles' required methods and the defaults built on them), the optional
roles (``FullTextSearch``, ``ObservationReader``) and the intent store beside it
(``IntentStore``); the rows they return, by name, are ``rows.py``'s (and importable from here).

Two tiers, as optuna's ``BaseStorage`` has them: a backend inherits ``Storage`` and writes the
abstract methods of the six roles (30 primitives); every other method of the contract is a
default built on those, which a backend overrides where it has a faster query of its own (both
of ours do for most: one query where the default takes several).

Everything above this package (journal, branch, history, sweeps, matrix, CLI, server) reaches a
backend only through ``Storage``. A backend translates its driver's faults into
``StorageError`` subclasses and holds the invariants it can: a unique ``(branch, seq)``, appends
only after the stored head, events never updated or deleted. The contract tests
(``tests/storage_contract.py``, one class per role) say the same in code; a new backend runs
them as ``tests/test_storage_contract.py`` and ``tests/test_postgres.py`` do, and
``tests/test_storage_tiers.py`` runs them on the defaults alone.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

import orjson

from ..errors import BranchConflict, InvalidValue, NotFound, ReadOnly, StorageError, WorkbenchError
from .rows import (
    EVENT_SHAPES,
    RUN_FIELDS,
    BranchRow,
    EffectHit,
    EventRow,
    FullEvent,
    HashHit,
    Head,
    IdentifiedEvent,
    Observation,
    Provenance,
    ReplayEvent,
    RunRow,
    SearchHit,
    Segment,
    SnapshotRecord,
    SnapshotRow,
    StoredEvent,
    SweepRow,
    VerifyEvent,
    in_segments,
    observation_schema,
)

__all__ = [
    "EVENT_SHAPES",
    "RUN_FIELDS",
    "BranchCatalog",
    "BranchRow",
    "EffectHit",
    "EffectIndex",
    "EventLog",
    "EventRow",
    "FullEvent",
    "FullTextSearch",
    "HashHit",
    "Head",
    "IdentifiedEvent",
    "IntentStore",
    "Observation",
    "ObservationReader",
    "Provenance",
    "RunLog",
    "RunRow",
    "SearchHit",
    "Segment",
    "SnapshotRecord",
    "SnapshotRow",
    "SnapshotStore",
    "ReplayEvent",
    "Storage",
    "StoreCore",
    "StoredEvent",
    "SweepRow",
    "VerifyEvent",
    "in_segments",
    "observation_schema",
    "observations_frame",
    "read_observations",
]


class IntentStore(Protocol):
    """Where effects are announced before they run (durably), so a crash leaves their keys as
    unknown outcomes and a second live announcer of the same effect is refused."""

    COMPACT_BYTES: int  # the size past which a journal compacts the store when it closes

    def announce(self, branch: int, key_hash: bytes, key: str) -> tuple[int, str, str | None]:
        """(attempt number, this announcement's id, id of a live earlier announcement or None)."""
        ...

    def finished(self, branch: int, key_hash: bytes, ann: str) -> None:
        """The announced effect committed."""
        ...

    def withdraw(self, branch: int, key_hash: bytes, ann: str) -> None:
        """The announced effect committed nothing and has no outcome."""
        ...

    def settle(self, branch: int, key_hash: bytes, ann: str) -> None:
        """The announced effect ran but its result could not be committed."""
        ...

    def pending(self, branch: int | None = None) -> dict[tuple[int, bytes], str]:
        """Announced, not withdrawn: {(branch, key hash): key}."""
        ...

    def due(self) -> bool:
        """Whether the store has grown enough to compact now (asked before every effect, so
        cheap: no query)."""
        ...

    def compact(
        self, still_open: Callable[[dict[tuple[int, bytes], str]], dict[tuple[int, bytes], str]]
    ) -> bool:
        """Keep only what ``still_open(announced)`` returns; False when it could not now (opened
        read-only, or another process holds what it would rewrite)."""
        ...

    def size(self) -> int:
        """Bytes (or an estimate) the store holds, to decide when to compact."""
        ...

    def close(self) -> None:
        """Release the store."""
        ...


# -- the roles of a backend ---------------------------------------------------------------------
# Six roles make a ``Storage``. Each role class below holds only what a backend must write for
# it (abstract methods: the primitives); ``Storage`` adds the defaults built on them, which a
# backend may override with a faster query of its own. Two more roles are optional (a backend
# may leave them out, and ``read_observations``/``observations_frame`` and ``Journal.search``
# cope). Each role has its own part of the contract suite (tests/storage_contract.py).

_PAGE = 4096  # rows a default reads per query when it walks events
_ANY_SEQ = 2**63 - 1  # past any seq (a bound both backends' integers hold)
_STATE_KINDS = ("delta", "compact")  # the events a state is replayed from


class StoreCore(ABC):
    """Required of the store as a whole: where it is and how it was opened, one write
    transaction, locks across processes, metadata and its size. Every method is safe to call
    from several threads."""

    path: str  # what messages show (a URL without its password)
    location: str  # what another process opens: the path, or the full URL
    readonly: bool
    encrypted: bool
    durability: str
    meta: dict[str, str]
    lock: threading.RLock

    @abstractmethod
    def close(self) -> None:
        """Close the connection (idempotent)."""

    @property
    @abstractmethod
    def in_transaction(self) -> bool:
        """Whether an ``atomic()`` block is open."""

    @abstractmethod
    def atomic(self) -> AbstractContextManager[None]:
        """One write transaction; nested calls are savepoints. ReadOnly when opened read-only."""

    @abstractmethod
    def set_meta(self, key: str, value: str) -> None:
        """Record one metadata value (``meta`` shows it, now and after reopening)."""

    @abstractmethod
    def exclusive(self, name: str) -> AbstractContextManager[None]:
        """Hold the journal-wide lock ``name`` (other processes and machines asking for it
        wait): for work longer than one transaction that must not interleave (replication)."""

    @abstractmethod
    def size_bytes(self) -> int:
        """Bytes the journal takes (a file and its WAL; a server's tables and indexes)."""


class EventLog(ABC):
    """Required of events: appends that follow the branch's stored head, all or nothing, and
    reads by resolved history, by global position and by caller id."""

    @abstractmethod
    def append_many(self, rows: Sequence[tuple[EventRow, str]]) -> None:
        """Insert consecutive events of one branch, all or nothing; BranchConflict unless the
        first follows the branch's stored head."""

    @abstractmethod
    def head(self, branch: int) -> Head | None:
        """The branch's own last event."""

    @abstractmethod
    def events(self, segments: Sequence[Segment], lo: int, hi: int) -> list[StoredEvent]:
        """Events of a resolved history with lo <= seq <= hi, in seq order."""

    @abstractmethod
    def events_after(self, branch: int, after_seq: int, limit: int) -> list[FullEvent]:
        """Up to ``limit`` of a branch's own events after a seq, every column, in seq order."""

    @abstractmethod
    def event_by_id(self, event_id: str) -> IdentifiedEvent | None:
        """The event a caller id names."""

    @abstractmethod
    def tail(self, cursor: int, limit: int | None) -> list[StoredEvent]:
        """Events after a global position, in order."""

    @abstractmethod
    def provenance(self, branch: int, seq: int) -> Provenance | None:
        """Who wrote an event, and how."""


class BranchCatalog(ABC):
    """Required of the catalog: branches and sweeps as rows, and the labels and subscriber
    positions beside them."""

    @abstractmethod
    def branch_row(self, branch_id: int) -> BranchRow | None:
        """One branch."""

    @abstractmethod
    def branch_rows(self, parent: int | None = None, since_id: int = -1) -> list[BranchRow]:
        """Branches by id (the forks of ``parent``, or those with ids after ``since_id``)."""

    @abstractmethod
    def insert_branches(
        self, rows: Sequence[tuple[str | None, int, int, str, int | None]]
    ) -> list[int]:
        """Insert forks (name, parent, fork_seq, params, sweep), all or nothing; their ids.
        Conflict for a name in use, NotFound for a parent that is not a branch."""

    @abstractmethod
    def insert_sweep(self, base: int, at: int, spec: str, created: int | None = None) -> int:
        """Record a sweep (created now, or at unix-ms ``created``: a copied one); its id."""

    @abstractmethod
    def sweep_rows(self) -> list[SweepRow]:
        """Every sweep."""

    @abstractmethod
    def set_sweep_how(self, sweep: int, how: str) -> None:
        """Record how a sweep was run (runner, template or function, workers, timeout; JSON)."""

    @abstractmethod
    def put_tag(self, label: str, branch: int, seq: int) -> None:
        """Point a label at an event (moving it if it exists)."""

    @abstractmethod
    def tags(self) -> list[tuple[str, int, int]]:
        """Every label: (label, branch, seq), by label."""

    @abstractmethod
    def subscription(self, name: str) -> int:
        """A subscriber's acknowledged position (0 on first use)."""

    @abstractmethod
    def ack(self, name: str, position: int) -> None:
        """Move a subscriber's acknowledged position."""


class SnapshotStore(ABC):
    """Required of snapshots: a state sealed to the event it was built at, found by history
    and seq."""

    @abstractmethod
    def put_snapshot(
        self,
        branch: int,
        seq: int,
        state: str,
        digest: bytes,
        built: str | None = None,
        replace: bool = False,
    ) -> None:
        """Store a snapshot (one that exists is kept unless ``replace``)."""

    @abstractmethod
    def nearest_snapshot(self, segments: Sequence[Segment], seq: int) -> SnapshotRow | None:
        """The latest snapshot at or before a seq in a resolved history."""

    @abstractmethod
    def snapshot_marks(
        self, segments: Sequence[Segment], hi: int
    ) -> Iterator[tuple[int, int, str | None]]:
        """(branch, seq, built) of the snapshots at or before a seq of a history, newest first."""


class EffectIndex(ABC):
    """Required of effects: found by key through a fork chain (never re-run), and announced
    before they run (``intents``)."""

    intents: IntentStore

    @abstractmethod
    def find_effect_indexed(
        self, key_hash: bytes, segments: Sequence[Segment], upto_position: int
    ) -> EffectHit | None:
        """The newest indexed effect with this key in a history, found from the key (its cost
        does not grow with the history)."""

    @abstractmethod
    def catch_up_effect_index(self, write: bool = True) -> int:
        """Index the effects stored since the last catch-up; the position covered
        (``write=False``: only the position covered). A backend whose key index every append
        keeps current returns its ``top_position()``."""


class RunLog(ABC):
    """Required of run records: how each fork of a sweep ran, one record per fork, created and
    then updated."""

    @abstractmethod
    def put_run(self, branch: int, sweep: int, status: str, **fields: Any) -> None:
        """Create or update a fork's run record (``fields``: any of RUN_FIELDS)."""

    @abstractmethod
    def runs(self, sweep: int | None = None) -> list[RunRow]:
        """Fork run records (of one sweep), by branch."""


@runtime_checkable
class FullTextSearch(Protocol):
    """Optional: full-text search of event payloads (without it, ``Journal.search`` says the
    backend cannot search)."""

    def search(
        self, query: str, segments: Sequence[Segment] | None = None, limit: int = 50
    ) -> list[SearchHit]:
        """Events whose payload matches a full-text query (in a resolved history, if given)."""
        ...


@runtime_checkable
class ObservationReader(Protocol):
    """Optional: observations read by their own query (without it, they are read from the
    tail of events: ``read_observations``)."""

    def observations(self, since: int = 0) -> list[Observation]:
        """Observations after a global position."""
        ...

    def observations_frame(self) -> Any:
        """Every observation as a polars frame."""
        ...


class Storage(StoreCore, EventLog, BranchCatalog, SnapshotStore, EffectIndex, RunLog):
    """A journal backend: the required methods of the six roles (their abstract methods, 30 in
    all: what a new backend writes) and the defaults below, built on them the way optuna's
    ``BaseStorage`` builds its conveniences on its abstract methods. Both backends inherit it
    and override a default where they have a faster query (the answer must be the same: the
    contract suite also runs on a backend that keeps every default). Rows come back as the
    named tuples above; faults arrive as ``StorageError`` subclasses.

    Defaults, by role:

    - StoreCore: ``writable``, ``rekey``, ``vacuum``, ``quick_check``
    - EventLog: ``append``, ``append_runs``, ``append_batch``, ``landed``, ``heads``,
      ``event_at``, ``hashes_at``, ``replay_events``, ``own_events``, ``last_seq_at_time``,
      ``world_events``, ``top_position``, ``by_hash_prefix``
    - BranchCatalog: ``branch_by_name``, ``fork_seq``, ``tag``
    - SnapshotStore: ``snapshot_at``, ``all_snapshot_marks``, ``snapshots``
    - EffectIndex: ``effect_keys``, ``effect_payload``, ``find_effect_after``,
      ``find_effect_with_head``, ``committed_keys``
    """

    # -- StoreCore ------------------------------------------------------------------------------

    def writable(self) -> None:
        """Raise ReadOnly when opened read-only, before anything else happens."""
        if self.readonly:
            raise ReadOnly(
                f"{self.path} was opened read-only; open it without readonly=True to change it",
                path=self.path,
            )

    def rekey(self, new_key: str | bytes) -> None:
        """Re-encrypt an encrypted journal (by default refused: a backend that encrypts
        overrides it)."""
        raise InvalidValue(
            "this journal is not encrypted; rekey changes the key of an encrypted one"
        )

    def vacuum(self) -> None:
        """Rebuild the store compactly (by default nothing: a store that reclaims its own
        space); ReadOnly when opened read-only."""
        self.writable()

    def quick_check(self) -> list[str]:
        """What the database finds wrong with its pages, empty when sound (by default empty: a
        database that checks its own pages; ``verify`` checks every hash regardless)."""
        return []

    # -- EventLog -------------------------------------------------------------------------------

    def append(self, row: EventRow, shape: str) -> None:
        """Insert one event; BranchConflict unless it follows the branch's stored head."""
        self.append_many([(row, shape)])

    def append_runs(self, runs: Sequence[Sequence[tuple[EventRow, str]]]) -> None:
        """``append_many`` of several branches' runs in one transaction, all or nothing (a
        backend that pays per statement writes them at once: replication's cost follows its
        events, not its branches)."""
        with self.atomic():
            for run in runs:
                self.append_many(run)

    def append_batch(
        self,
        branch: int,
        first_seq: int,
        kind: str,
        parent: bytes,
        ts: int,
        chunks: Iterable[tuple[Sequence[bytes], Sequence[str]]],
        snapshots: Sequence[tuple[int, str, bytes]],
        built: str | None = None,
        rows: int = 0,
    ) -> None:
        """Insert consecutive plain events (and their snapshots, replacing any at their seqs) of
        one branch, all or nothing. ``chunks`` yields (hashes, payload texts) in order, each
        event's parent the hash before it; ``snapshots`` is read once they are exhausted.
        ``rows``: how many events to expect, a hint. Not inside an open transaction."""
        if self.in_transaction:
            raise WorkbenchError("append_batch cannot join an open transaction")
        seq, previous = first_seq, parent
        with self.atomic():
            for hashes, texts in chunks:
                batch: list[tuple[EventRow, str]] = []
                for h, text in zip(hashes, texts, strict=True):
                    batch.append(((branch, seq, kind, h, previous, ts, text), "plain"))
                    seq, previous = seq + 1, h
                if batch:
                    self.append_many(batch)
            for at, state, digest in snapshots:
                self.put_snapshot(branch, at, state, digest, built, replace=True)

    def landed(
        self, branch: int, seq: int, event_hash: bytes, err: BaseException | None = None
    ) -> bool:
        """Whether an event reported as failed (with ``err``) is stored anyway: never after a
        BranchConflict or an error that is not the store's."""
        if isinstance(err, BranchConflict) or not (err is None or isinstance(err, StorageError)):
            return False
        try:
            found = self.hashes_at([(branch, seq)]).get((branch, seq))
        except WorkbenchError:
            return False
        return found is not None and bytes(found) == bytes(event_hash)

    def heads(self) -> dict[int, Head]:
        """Every branch's own last event (branches without events of their own are left out)."""
        return {r.id: h for r in self.branch_rows() if (h := self.head(r.id)) is not None}

    def event_at(self, branch: int, seq: int) -> StoredEvent | None:
        """The event a branch itself wrote at seq (not one it inherits)."""
        found = self.events([(branch, seq, seq)], seq, seq)
        return found[0] if found else None

    def hashes_at(self, points: Sequence[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
        """The hashes of the events branches wrote themselves at these (branch, seq) points
        (points with no such event are left out); a backend overrides it to read them at once."""
        out: dict[tuple[int, int], bytes] = {}
        for branch, seq in dict.fromkeys(points):
            event = self.event_at(branch, seq)
            if event is not None:
                out[(branch, seq)] = bytes(event.hash)
        return out

    def replay_events(self, segments: Sequence[Segment], lo: int, hi: int) -> list[ReplayEvent]:
        """(seq, kind, hash, parent_hash, payload) of every event of a resolved history with
        lo <= seq <= hi, in seq order, the payload only of deltas and compactions: what a state
        is replayed from, with what a replay checks its chain by."""
        return [
            (e.seq, e.kind, bytes(e.hash), bytes(e.parent_hash), e.payload)
            if e.kind in _STATE_KINDS
            else (e.seq, e.kind, bytes(e.hash), bytes(e.parent_hash), None)
            for e in self.events(segments, lo, hi)
        ]

    def own_events(self, branch: int) -> Iterator[VerifyEvent]:
        """(seq, kind, hash, parent_hash, payload, key_hash, metric, value) of a branch's own
        events, streamed in seq order (what verify reads)."""
        for e in self._own_range(branch, 0, None):
            yield (e.seq, e.kind, e.hash, e.parent_hash, e.payload, e.key_hash, e.metric, e.value)

    def last_seq_at_time(self, segments: Sequence[Segment], ts: int) -> int:
        """The highest seq of a resolved history recorded at or before unix-ms ``ts`` (0 when
        none was)."""
        best = 0
        for branch, first, last in segments:
            for e in self._own_range(branch, first, last):
                if e.ts <= ts:
                    best = max(best, e.seq)
        return best

    def world_events(
        self, segments: Sequence[Segment], hi: int, valid: int, known: int | None = None
    ) -> list[tuple[int, str, str, int]]:
        """(seq, kind, payload, world ms) of the state events of a resolved history up to seq
        ``hi`` that happened by ``valid`` (their occurred time, else their commit time) and
        were recorded by ``known``, in world order (ties by seq)."""
        out: list[tuple[int, str, str, int]] = []
        for branch, first, last in segments:
            for e in self._own_range(branch, first, hi if last is None else min(hi, last)):
                world = e.ts if e.occurred_at is None else e.occurred_at
                if e.kind in _STATE_KINDS and world <= valid and (known is None or e.ts <= known):
                    out.append((e.seq, e.kind, e.payload, world))
        out.sort(key=lambda r: (r[3], r[0]))
        return out

    def top_position(self) -> int:
        """The global position of the last stored event (0 when there is none): found through
        ``tail`` in a number of reads that grows with the log of the position."""
        first = self.tail(0, 1)
        if not first:
            return 0
        lo, step = first[0].position, 1  # an event is at lo
        while later := self.tail(lo + step, 1):
            lo, step = later[0].position, step * 2
        hi = lo + step  # none is after hi
        while lo < hi:
            mid = (lo + hi) // 2
            later = self.tail(mid, 1)
            if later:
                lo = later[0].position
            else:
                hi = mid
        return lo

    def by_hash_prefix(self, lo: bytes, hi: bytes | None, limit: int = 50) -> list[HashHit]:
        """Events whose hash lies in [lo, hi) (to the end when ``hi`` is None), earliest first,
        at most ``limit``."""
        hits: list[HashHit] = []
        cursor = 0
        while len(hits) < limit and (page := self.tail(cursor, _PAGE)):
            for e in page:
                h = bytes(e.hash)
                if h >= lo and (hi is None or h < hi):
                    hits.append(HashHit(h, e.branch, e.seq))
                    if len(hits) == limit:
                        break
            cursor = page[-1].position
        return hits

    def _own_range(self, branch: int, first: int, last: int | None) -> Iterator[FullEvent]:
        """A branch's own events with first <= seq <= last (to its head when None), a page at a
        time."""
        after = first - 1
        while page := self.events_after(branch, after, _PAGE):
            for e in page:
                if last is not None and e.seq > last:
                    return
                yield e
            after = page[-1].seq

    # -- BranchCatalog --------------------------------------------------------------------------

    def branch_by_name(self, name: str) -> BranchRow | None:
        """One branch, by name."""
        return next((r for r in self.branch_rows() if r.name == name), None)

    def fork_seq(self, branch: int) -> int | None:
        """Where a branch forked (its head while it has no events of its own)."""
        row = self.branch_row(branch)
        return None if row is None else row.fork_seq

    def tag(self, label: str) -> tuple[int, int] | None:
        """(branch, seq) a label points at."""
        return next(((b, s) for name, b, s in self.tags() if name == label), None)

    # -- SnapshotStore --------------------------------------------------------------------------

    def snapshot_at(self, branch: int, seq: int) -> SnapshotRow | None:
        """The snapshot stored at (branch, seq): the nearest one of a history of that one seq."""
        return self.nearest_snapshot([(branch, seq, seq)], seq)

    def all_snapshot_marks(self) -> list[tuple[int, int, str | None]]:
        """(branch, seq, built) of every snapshot, by branch and seq."""
        marks: list[tuple[int, int, str | None]] = []
        for row in self.branch_rows():
            own = list(self.snapshot_marks([(row.id, 0, None)], _ANY_SEQ))
            marks.extend(reversed(own))
        return marks

    def snapshots(self) -> list[SnapshotRecord]:
        """Every snapshot (what verify checks), by branch and seq."""
        out: list[SnapshotRecord] = []
        for branch, seq, _ in self.all_snapshot_marks():
            snap = self.snapshot_at(branch, seq)
            if snap is not None:
                out.append(SnapshotRecord(branch, seq, snap.state, snap.digest))
        return out

    # -- EffectIndex ----------------------------------------------------------------------------

    def effect_keys(
        self, segments: Sequence[Segment], upto: int, after_position: int = 0
    ) -> dict[bytes, tuple[int, int]]:
        """{key hash: (branch, seq)} of the newest effect per key in a resolved history up to a
        seq (only those stored after global position ``after_position``, when given: what the
        key index lacks)."""
        out: dict[bytes, tuple[int, int]] = {}
        if after_position:
            points = sorted(
                (e.seq, e.branch)
                for e in self._tail_from(after_position)
                if in_segments(segments, e.branch, e.seq, upto)
            )
            for seq, branch in points:
                (e,) = self.events_after(branch, seq - 1, 1)
                if e.key_hash is not None:
                    out[bytes(e.key_hash)] = (branch, seq)
            return out
        for branch, first, last in reversed(segments):  # oldest first: newer entries win
            for e in self._own_range(branch, first, upto if last is None else min(last, upto)):
                if e.key_hash is not None:
                    out[bytes(e.key_hash)] = (branch, e.seq)
        return out

    def effect_payload(self, branch: int, seq: int) -> str:
        """The payload of the effect stored at (branch, seq)."""
        event = self.event_at(branch, seq)
        if event is None:
            raise NotFound(f"no event at seq {seq} of branch {branch}", branch=branch, seq=seq)
        return event.payload

    def find_effect_after(self, key_hash: bytes, branch: int, seq: int) -> EffectHit | None:
        """The newest effect with this key a branch stored after a seq (what another writer
        appended past a handle's head)."""
        hit = None
        for e in self._own_range(branch, seq + 1, None):
            if e.key_hash is not None and bytes(e.key_hash) == key_hash:
                hit = EffectHit(branch, e.seq, e.payload)
        return hit

    def find_effect_with_head(
        self, key_hash: bytes, segments: Sequence[Segment], upto_position: int, branch: int | None
    ) -> tuple[EffectHit | None, int | None]:
        """``find_effect_indexed``, and the branch's own last seq (None: no events, or no
        branch), at once; a backend overrides it to ask both in one round trip."""
        hit = self.find_effect_indexed(key_hash, segments, upto_position)
        head = None if branch is None else self.head(branch)
        return hit, None if head is None else head.seq

    def committed_keys(self, branch: int, key_hashes: Sequence[bytes]) -> set[bytes]:
        """Which of these effect keys a branch committed itself (a read: writes nothing)."""
        wanted = {bytes(k) for k in key_hashes}
        return {
            bytes(e.key_hash)
            for e in self._own_range(branch, 0, None)
            if e.key_hash is not None and bytes(e.key_hash) in wanted
        }

    def _tail_from(self, position: int) -> Iterator[StoredEvent]:
        """Every event after a global position, a page at a time."""
        while page := self.tail(position, _PAGE):
            yield from page
            position = page[-1].position


def read_observations(storage: Storage, since: int = 0) -> list[Observation]:
    """Observations after a global position, in order: the backend's own query where it has
    one (``ObservationReader``), else read from the tail of events."""
    if isinstance(storage, ObservationReader):
        return storage.observations(since)
    out: list[Observation] = []
    for e in storage.tail(since, None):
        if e.kind == "observe":
            doc = orjson.loads(e.payload)
            out.append(
                Observation(e.position, e.branch, e.seq, doc["name"], float(doc["value"]), e.ts)
            )
    return out


def observations_frame(storage: Storage) -> Any:
    """Every observation as a polars frame (``observation_schema``), by the backend's own path
    where it has one."""
    if isinstance(storage, ObservationReader):
        return storage.observations_frame()
    import polars as pl

    return pl.DataFrame(read_observations(storage), schema=observation_schema(), orient="row")
