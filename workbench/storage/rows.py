"""The rows of the storage seam, by name: what a backend stores and returns (events, branches,
heads, snapshots, runs, sweeps, provenance, hits), the shapes an event row is written in, and
the pieces of a resolved history (``Segment``). Plain data: no backend, no SQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

# (branch, first_seq, last_seq or None): one piece of a resolved history, seqs inclusive.
Segment = tuple[int, int, int | None]
# An event to write: (branch, seq, kind, hash, parent_hash, ts, payload) followed by the
# columns of its shape (see EVENT_SHAPES); a plain tuple, as it is built on every append.
EventRow = tuple[Any, ...]
# An event of a replay: (seq, kind, hash, parent_hash, payload: the stored text of a delta or
# a compaction, None for every other kind); unpacked, never indexed.
ReplayEvent = tuple[int, str, bytes, bytes, str | None]
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


def in_segments(segments: Sequence[Segment], branch: int, seq: int, upto: int) -> bool:
    """Whether (branch, seq) is an event of the resolved history ``segments`` up to seq
    ``upto`` (the parent's events after a fork point are not)."""
    if seq > upto:
        return False
    for b, first, last in segments:
        if b == branch:
            return first <= seq and (last is None or seq <= last)
    return False


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
