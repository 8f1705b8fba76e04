"""The values of the StateForge API: ``Session``, ``Snapshot``, ``MemoryDiff`` (``Diff``),
``DiffEntry``, ``ProvenanceRecord`` and ``ProvenanceHop``, with the design's field names (and a
few of ours: a snapshot's ``seq``, ``branch``, ``unit_ids`` and ``rollback_of``). ``MemoryUnit``
is ``workbench.units.Unit``. Times are aware UTC datetimes; ``to_json`` gives ISO text."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from ...errors import InvalidValue, ValueTypeError
from ...events import canonical
from ...units import Unit

MemoryUnit = Unit

__all__ = [
    "Diff",
    "DiffEntry",
    "MemoryDiff",
    "MemoryUnit",
    "ProvenanceHop",
    "ProvenanceRecord",
    "Session",
    "Snapshot",
    "iso",
    "json_safe",
    "when",
]


def json_safe(value: Any, what: str) -> Any:
    """``value`` if it is JSON-safe, else ``ValueTypeError`` naming where (nothing written)."""
    try:
        canonical(value, what)
    except InvalidValue as e:
        raise ValueTypeError(str(e)) from None
    return value


def when(ms: int) -> datetime:
    """An event's time (unix milliseconds) as an aware UTC datetime."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def iso(t: datetime) -> str:
    """A time as ISO 8601 text to the millisecond (what the journal records)."""
    return t.isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Session:
    """A session: a head pointer over its snapshots (a branch of the journal)."""

    id: str
    label: str | None
    head_snapshot_id: str | None
    created_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict)
    branch: int = 0

    @property
    def head_id(self) -> str | None:
        """``head_snapshot_id`` (the name lithify used first)."""
        return self.head_snapshot_id

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "head_snapshot_id": self.head_snapshot_id,
            "created_at": iso(self.created_at),
            "metadata": self.metadata,
            "branch": self.branch,
            "head": self.head_snapshot_id,
        }


@dataclass(frozen=True)
class Snapshot:
    """An immutable set of units of one session (an event: ``id`` is its hash)."""

    id: str
    session_id: str
    label: str | None
    parent_id: str | None
    created_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict)
    seq: int = 0
    branch: int = 0
    unit_ids: tuple[str, ...] = ()
    rollback_of: str | None = None

    @property
    def short_id(self) -> str:
        return self.id[:8]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "short_id": self.short_id,
            "session_id": self.session_id,
            "label": self.label,
            "parent_id": self.parent_id,
            "created_at": iso(self.created_at),
            "metadata": self.metadata,
            "seq": self.seq,
            "branch": self.branch,
            "units": list(self.unit_ids),
            "rollback_of": self.rollback_of,
        }


@dataclass(frozen=True)
class Diff:
    """What changed between two snapshots, by unit identity (``type/key``)."""

    from_id: str
    to_id: str
    added: list[Unit] = field(default_factory=list)
    modified: list[tuple[Unit, Unit]] = field(default_factory=list)
    removed: list[Unit] = field(default_factory=list)
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @property
    def from_snapshot_id(self) -> str:
        return self.from_id

    @property
    def to_snapshot_id(self) -> str:
        return self.to_id

    def __str__(self) -> str:
        return (
            f"added: {len(self.added)} modified: {len(self.modified)} removed: {len(self.removed)}"
        )

    def entries(self) -> list[DiffEntry]:
        """The changes one by one: added, then modified, then removed."""
        return (
            [DiffEntry("added", None, u) for u in self.added]
            + [DiffEntry("modified", a, b) for a, b in self.modified]
            + [DiffEntry("removed", u, None) for u in self.removed]
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.from_id,
            "to": self.to_id,
            "added": [unit_json(u) for u in self.added],
            "modified": [{"before": unit_json(a), "after": unit_json(b)} for a, b in self.modified],
            "removed": [unit_json(u) for u in self.removed],
            "summary": {
                "added": len(self.added),
                "modified": len(self.modified),
                "removed": len(self.removed),
            },
        }


MemoryDiff = Diff


@dataclass(frozen=True)
class DiffEntry:
    """One change of a diff (``diff_iter`` yields them)."""

    change: Literal["added", "removed", "modified"]
    before: Unit | None
    after: Unit | None


@dataclass(frozen=True)
class ProvenanceHop:
    """One step of where a unit came from (0: its own source; then what it was derived from)."""

    index: int
    source: str
    source_ref: str | None = None


@dataclass(frozen=True)
class ProvenanceRecord:
    """Where a unit came from: written with ``write_provenance``, or (when none was) derived
    from the journal: the unit's source, the effect whose result it is, when it was stored."""

    id: str
    memory_unit_id: str
    source: str
    source_ref: str | None
    ingested_at: datetime
    trace: list[ProvenanceHop] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "memory_unit_id": self.memory_unit_id,
            "source": self.source,
            "source_ref": self.source_ref,
            "ingested_at": self.ingested_at.isoformat(),
            "trace": [
                {"index": h.index, "source": h.source, "source_ref": h.source_ref}
                for h in self.trace
            ],
        }


def unit_json(u: Unit) -> dict[str, Any]:
    """A unit as JSON with every field of the design's (``session_id``, ``source_ref``,
    ``embedding`` and ``created_at`` present even when empty)."""
    return {
        "embedding": None,
        "created_at": None,
        **u.to_json(),
        "session_id": u.session,
        "source_ref": u.source_ref,
    }
