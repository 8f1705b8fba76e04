"""The storage seam: what a journal backend must do, role by role (``StoreCore``, ``EventLog``,
``BranchCatalog``, ``SnapshotStore``, ``EffectIndex``, ``RunLog``; ``Storage`` is all six, and
``FullTextSearch`` and ``ObservationReader`` are optional), the intent store beside it
(``IntentStore``), and the rows they return, by name.

Everything above this package (journal, branch, history, sweeps, matrix, CLI, server) reaches a
backend only through these protocols. A backend translates its driver's faults into
``StorageError`` subclasses and holds the invariants it can: a unique ``(branch, seq)``, appends
only after the stored head, events never updated or deleted. The contract tests
(``tests/storage_contract.py``, one class per role) say the same in code; a new backend runs
them as ``tests/test_storage_contract.py`` and ``tests/test_postgres.py`` do.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple, Protocol, runtime_checkable

import orjson

# (branch, first_seq, last_seq or None): one piece of a resolved history, seqs inclusive.
Segment = tuple[int, int, int | None]
# An event to write: (branch, seq, kind, hash, parent_hash, ts, payload) followed by the
# columns of its shape (see EVENT_SHAPES); a plain tuple, as it is built on every append.
EventRow = tuple[Any, ...]
# An event to replay: (seq, kind, payload); unpacked, never indexed.
StateEvent = tuple[int, str, str]
# What verify reads: (seq, kind, hash, parent_hash, payload, key_hash, metric, value).
VerifyEvent = tuple[int, str, bytes, bytes, str, bytes | None, str | None, float | None]


# The shapes an event row comes in: the optional columns that follow its seven common ones.
# Columns a shape leaves out are NULL.
EVENT_SHAPES: dict[str, tuple[str, ...]] = {
    "plain": (),
    "dated": ("occurred_at",),
    "identified": ("event_id",),
    "dated_identified": ("occurred_at", "event_id"),
    "effect": ("key_hash", "fx_ms", "attempts"),
    "effect_rendered": ("key_hash", "fx_ms", "attempts", "render_ms"),
    "observe": ("metric", "value"),
    "observe_identified": ("metric", "value", "event_id"),
}


# The fields of a fork's run record besides its branch, sweep and status.
RUN_FIELDS = ("runner", "notebook", "error", "started", "finished", "wall_ms")


class StoredEvent(NamedTuple):
    """One stored event; ``position`` is its place in the journal's global order."""

    position: int
    branch: int
    seq: int
    kind: str
    hash: bytes
    parent_hash: bytes
    ts: int
    payload: str


class BranchRow(NamedTuple):
    """A branch as stored: where it forked, its own params (canonical JSON), its sweep."""

    id: int
    name: str | None
    parent: int | None
    fork_seq: int
    params: str
    created: int
    sweep: int | None


class Head(NamedTuple):
    """A branch's own last event."""

    seq: int
    hash: bytes


class SnapshotRow(NamedTuple):
    """A snapshot, the hash of the event it seals to, and what it was built from."""

    branch: int
    seq: int
    state: str
    digest: bytes
    event_hash: bytes | None
    built: str | None


class SnapshotRecord(NamedTuple):
    """A stored snapshot (what verify checks)."""

    branch: int
    seq: int
    state: str
    digest: bytes


class RunRow(NamedTuple):
    """How one fork of a sweep ran."""

    branch: int
    sweep: int
    status: str
    runner: str | None
    notebook: str | None
    error: str | None
    started: int | None
    finished: int | None
    wall_ms: float | None


class SweepRow(NamedTuple):
    """A recorded sweep (its spec as canonical JSON; ``how``: how it was last run, as JSON)."""

    id: int
    base: int
    at: int
    spec: str
    created: int
    how: str | None


class Provenance(NamedTuple):
    """Who wrote an event and how: the writer, effect timing, world time, ids."""

    writer: str | None
    pid: int | None
    source: str | None
    ts: int
    fx_ms: float | None
    attempts: int | None
    occurred_at: int | None
    render_ms: float | None
    event_id: str | None


class FullEvent(NamedTuple):
    """Every stored column of an event but its position and writer (what replication copies)."""

    branch: int
    seq: int
    kind: str
    hash: bytes
    parent_hash: bytes
    ts: int
    payload: str
    key_hash: bytes | None
    metric: str | None
    value: float | None
    occurred_at: int | None
    fx_ms: float | None
    attempts: int | None
    event_id: str | None
    render_ms: float | None


class EffectHit(NamedTuple):
    """A stored effect found by its key."""

    branch: int
    seq: int
    payload: str


class HashHit(NamedTuple):
    """An event whose hash matched a looked-up prefix."""

    hash: bytes
    branch: int
    seq: int


class IdentifiedEvent(NamedTuple):
    """The event a caller id names."""

    branch: int
    seq: int
    kind: str
    payload: str


class Observation(NamedTuple):
    """One measurement."""

    position: int
    branch: int
    seq: int
    metric: str
    value: float
    ts: int


def observation_schema() -> dict[str, Any]:
    """The polars schema of observations as frames (``Observation``'s fields, typed)."""
    import polars as pl

    return {
        "position": pl.Int64,
        "branch": pl.Int64,
        "seq": pl.Int64,
        "metric": pl.Utf8,
        "value": pl.Float64,
        "ts": pl.Int64,
    }


class SearchHit(NamedTuple):
    """An event whose payload matched a full-text search."""

    branch: int
    seq: int
    kind: str
    payload: str
    rank: float


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
# Six required roles make a ``Storage``; two more are optional (a backend may leave them out,
# and ``read_observations``/``observations_frame`` and ``Journal.search`` cope). Each role has
# its own part of the contract suite (tests/storage_contract.py).


class StoreCore(Protocol):
    """The store as a whole: where it is and how it was opened, one write transaction, locks
    across processes, metadata and upkeep. Every method is safe to call from several threads."""

    path: str  # what messages show (a URL without its password)
    location: str  # what another process opens: the path, or the full URL
    readonly: bool
    encrypted: bool
    durability: str
    meta: dict[str, str]
    lock: threading.RLock

    def close(self) -> None:
        """Close the connection (idempotent)."""
        ...

    @property
    def in_transaction(self) -> bool:
        """Whether an ``atomic()`` block is open."""
        ...

    def writable(self) -> None:
        """Raise ReadOnly when opened read-only, before anything else happens."""
        ...

    def atomic(self) -> AbstractContextManager[None]:
        """One write transaction; nested calls are savepoints."""
        ...

    def set_meta(self, key: str, value: str) -> None:
        """Record one metadata value."""
        ...

    def exclusive(self, name: str) -> AbstractContextManager[None]:
        """Hold the journal-wide lock ``name`` (other processes and machines asking for it
        wait): for work longer than one transaction that must not interleave (replication)."""
        ...

    def rekey(self, new_key: str | bytes) -> None:
        """Re-encrypt an encrypted journal."""
        ...

    def vacuum(self) -> None:
        """Rebuild the store compactly."""
        ...

    def quick_check(self) -> list[str]:
        """What the database finds wrong with its pages (empty when sound)."""
        ...

    def size_bytes(self) -> int:
        """Bytes the journal takes (a file and its WAL; a server's tables and indexes)."""
        ...


class EventLog(Protocol):
    """Events and heads: appends that follow the branch's stored head, all or nothing, and
    reads by resolved history, by global position and by hash."""

    def append(self, row: EventRow, shape: str) -> None:
        """Insert one event; BranchConflict unless it follows the branch's stored head."""
        ...

    def append_many(self, rows: Sequence[tuple[EventRow, str]]) -> None:
        """Insert consecutive events of one branch, all or nothing."""
        ...

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
        """Insert consecutive plain events (and their snapshots) of one branch, all or nothing."""
        ...

    def landed(
        self, branch: int, seq: int, event_hash: bytes, err: BaseException | None = None
    ) -> bool:
        """Whether an event reported as failed is stored anyway."""
        ...

    def head(self, branch: int) -> Head | None:
        """The branch's own last event."""
        ...

    def heads(self) -> dict[int, Head]:
        """Every branch's own last event."""
        ...

    def event_at(self, branch: int, seq: int) -> StoredEvent | None:
        """The event a branch itself wrote at seq."""
        ...

    def hashes_at(self, points: Sequence[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
        """The hashes of the events branches wrote themselves at these (branch, seq) points, in
        one read (points with no such event are left out)."""
        ...

    def events(self, segments: Sequence[Segment], lo: int, hi: int) -> list[StoredEvent]:
        """Events of a resolved history with lo <= seq <= hi, in seq order."""
        ...

    def state_events(self, segments: Sequence[Segment], lo: int, hi: int) -> list[StateEvent]:
        """Deltas and compactions of a resolved history with lo <= seq <= hi, in seq order."""
        ...

    def events_after(self, branch: int, after_seq: int, limit: int) -> list[FullEvent]:
        """Up to ``limit`` of a branch's own events after a seq, every column, in seq order."""
        ...

    def own_events(self, branch: int) -> Iterator[VerifyEvent]:
        """A branch's own events with their derived columns, streamed in seq order."""
        ...

    def last_seq_at_time(self, segments: Sequence[Segment], ts: int) -> int:
        """The highest seq recorded at or before unix-ms ts."""
        ...

    def world_events(
        self, segments: Sequence[Segment], hi: int, valid: int, known: int | None = None
    ) -> list[tuple[int, str, str, int]]:
        """(seq, kind, payload, world ms) of state events by world time, in world order."""
        ...

    def event_by_id(self, event_id: str) -> IdentifiedEvent | None:
        """The event a caller id names."""
        ...

    def tail(self, cursor: int, limit: int | None) -> list[StoredEvent]:
        """Events after a global position, in order."""
        ...

    def top_position(self) -> int:
        """The global position of the last stored event (0 when there is none)."""
        ...

    def by_hash_prefix(self, lo: bytes, hi: bytes | None, limit: int = 50) -> list[HashHit]:
        """Events whose hash lies in [lo, hi), earliest first."""
        ...

    def provenance(self, branch: int, seq: int) -> Provenance | None:
        """Who wrote an event, and how."""
        ...


class BranchCatalog(Protocol):
    """Branches and sweeps as rows, and the labels and subscriber positions beside them."""

    def branch_row(self, branch_id: int) -> BranchRow | None:
        """One branch."""
        ...

    def branch_by_name(self, name: str) -> BranchRow | None:
        """One branch, by name."""
        ...

    def branch_rows(self, parent: int | None = None, since_id: int = -1) -> list[BranchRow]:
        """Branches (the forks of ``parent``, or with ids after ``since_id``)."""
        ...

    def fork_seq(self, branch: int) -> int | None:
        """Where a branch forked."""
        ...

    def insert_branches(
        self, rows: Sequence[tuple[str | None, int, int, str, int | None]]
    ) -> list[int]:
        """Insert forks (name, parent, fork_seq, params, sweep), all or nothing; their ids.
        Conflict for a name in use, NotFound for a parent that is not a branch."""
        ...

    def insert_sweep(self, base: int, at: int, spec: str, created: int | None = None) -> int:
        """Record a sweep (created now, or at unix-ms ``created``: a copied one); its id."""
        ...

    def sweep_rows(self) -> list[SweepRow]:
        """Every sweep."""
        ...

    def set_sweep_how(self, sweep: int, how: str) -> None:
        """Record how a sweep was run (runner, template or function, workers, timeout; JSON)."""
        ...

    def put_tag(self, label: str, branch: int, seq: int) -> None:
        """Point a label at an event."""
        ...

    def tag(self, label: str) -> tuple[int, int] | None:
        """(branch, seq) a label points at."""
        ...

    def tags(self) -> list[tuple[str, int, int]]:
        """Every label: (label, branch, seq), by label."""
        ...

    def subscription(self, name: str) -> int:
        """A subscriber's acknowledged position."""
        ...

    def ack(self, name: str, position: int) -> None:
        """Move a subscriber's acknowledged position."""
        ...


class SnapshotStore(Protocol):
    """Snapshots: a state sealed to the event it was built at, found by history and seq."""

    def put_snapshot(
        self,
        branch: int,
        seq: int,
        state: str,
        digest: bytes,
        built: str | None = None,
        replace: bool = False,
    ) -> None:
        """Store a snapshot."""
        ...

    def nearest_snapshot(self, segments: Sequence[Segment], seq: int) -> SnapshotRow | None:
        """The latest snapshot at or before a seq in a resolved history."""
        ...

    def snapshot_marks(
        self, segments: Sequence[Segment], hi: int
    ) -> Iterator[tuple[int, int, str | None]]:
        """(branch, seq, built) of the snapshots at or before a seq of a history, newest first."""
        ...

    def all_snapshot_marks(self) -> list[tuple[int, int, str | None]]:
        """(branch, seq, built) of every snapshot."""
        ...

    def snapshot_at(self, branch: int, seq: int) -> SnapshotRow | None:
        """The snapshot stored at (branch, seq)."""
        ...

    def snapshots(self) -> list[SnapshotRecord]:
        """Every snapshot."""
        ...


class EffectIndex(Protocol):
    """Effects found by key through a fork chain (never re-run), and where they are announced
    before they run (``intents``)."""

    intents: IntentStore

    def effect_keys(
        self, segments: Sequence[Segment], upto: int, after_position: int = 0
    ) -> dict[bytes, tuple[int, int]]:
        """{key hash: (branch, seq)} of the effects in a resolved history up to a seq (only
        those stored after ``after_position``, when given: what the key index lacks)."""
        ...

    def effect_payload(self, branch: int, seq: int) -> str:
        """The payload of a stored effect."""
        ...

    def find_effect_after(self, key_hash: bytes, branch: int, seq: int) -> EffectHit | None:
        """The newest effect with this key a branch stored after a seq."""
        ...

    def find_effect_indexed(
        self, key_hash: bytes, segments: Sequence[Segment], upto_position: int
    ) -> EffectHit | None:
        """The newest indexed effect with this key in a history, found from the key (its cost
        does not grow with the history)."""
        ...

    def find_effect_with_head(
        self, key_hash: bytes, segments: Sequence[Segment], upto_position: int, branch: int | None
    ) -> tuple[EffectHit | None, int | None]:
        """``find_effect_indexed``, and the branch's own last seq (None: no events), at once."""
        ...

    def catch_up_effect_index(self, write: bool = True) -> int:
        """Index the effects stored since the last catch-up; the position covered
        (``write=False``: only the position covered)."""
        ...

    def committed_keys(self, branch: int, key_hashes: Sequence[bytes]) -> set[bytes]:
        """Which of these effect keys a branch committed itself (a read: writes nothing)."""
        ...


class RunLog(Protocol):
    """How each fork of a sweep ran: one record per fork, created and then updated."""

    def put_run(self, branch: int, sweep: int, status: str, **fields: Any) -> None:
        """Create or update a fork's run record (``fields``: any of RUN_FIELDS)."""
        ...

    def runs(self, sweep: int | None = None) -> list[RunRow]:
        """Fork run records (of one sweep), by branch."""
        ...


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


class Storage(StoreCore, EventLog, BranchCatalog, SnapshotStore, EffectIndex, RunLog, Protocol):
    """What a journal backend must do: every required role. Rows come back as the named tuples
    above; faults arrive as ``StorageError`` subclasses."""


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
