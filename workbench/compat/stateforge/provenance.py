"""Provenance of units: where a unit came from, derived from the journal (its source, the
snapshot event that first stored it and who wrote that, every snapshot holding it, the effect
whose result it is, linked by the effect's key), and records written with
``write_provenance`` (the latest one is what ``get_provenance`` returns)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from ... import units
from ...errors import InvalidValue
from ...events import Record, iso_ms
from .exceptions import MemoryUnitNotFoundError
from .models import ProvenanceHop, ProvenanceRecord, Session, json_safe

if TYPE_CHECKING:
    from ...journal import Journal


class StateForge(Protocol):
    """What provenance reads and writes through: the client's journal, its sessions, a
    branch's writer and the lock that keeps one snapshot at a time (the client satisfies it;
    naming it here keeps this module from importing the client that imports it)."""

    journal: Journal
    _lock: threading.RLock

    def sessions_sync(self) -> list[Session]: ...

    def writer(self, branch_id: int) -> Any: ...


__all__ = ["find_unit", "get_provenance", "provenance", "write_provenance"]


def _records(b: Any) -> list[Record]:
    return [
        r
        for r in b.history(1, b.head)
        if r.kind == "delta" and r.payload.get("op") in ("snapshot", "provenance")
    ]


def find_unit(sf: StateForge, unit_id: str) -> tuple[Session, list[Record], dict[str, Any]] | None:
    """The session that stored a unit, its snapshot records and the unit's stored doc."""
    if not isinstance(unit_id, str) or not unit_id:
        raise InvalidValue(f"a unit id is a non-empty str, not {unit_id!r}")
    for s in sf.sessions_sync():
        recs = _records(sf.journal.branch(s.branch))
        for r in recs:
            if r.payload.get("op") != "snapshot":
                continue
            for d in r.payload.get("put", []):
                if d["id"] == unit_id:
                    return s, recs, d
    return None


def provenance(sf: StateForge, unit_id: str) -> dict[str, Any]:
    """Where a unit comes from: its content and source, the event (writer, process, time)
    that first stored it, every snapshot that holds it, and the effect whose result it is
    (found by the effect's key, never by matching values)."""
    found = find_unit(sf, unit_id)
    if found is None:
        raise MemoryUnitNotFoundError(f"no unit {unit_id!r} in any session", ref=unit_id)
    s, recs, doc = found
    b = sf.journal.branch(s.branch)
    held: list[str] = []
    first: Record | None = None
    current: dict[str, str] = {}
    written: list[dict[str, Any]] = []
    for r in recs:
        op = r.payload.get("op")
        if op == "provenance" and r.payload.get("unit") == unit_id:
            written.append({**r.payload, "hash": r.hash})
        if op != "snapshot":
            continue
        for ident in r.payload.get("drop", []):
            current.pop(ident, None)
        for d in r.payload.get("put", []):
            current[units.identity(d["key"], d["type"])] = d["id"]
            if d["id"] == unit_id and first is None:
                first = r
        if unit_id in current.values():
            held.append(r.hash)
    assert first is not None
    who = sf.journal.provenance((first.branch, first.seq))["event"]
    out: dict[str, Any] = {
        "unit": doc,
        "session": s.id,
        "source": doc.get("source"),
        "written": {
            "snapshot": first.hash,
            "at": iso_ms(first.ts),
            "writer": who.get("writer"),
            "pid": who.get("pid"),
            "process_source": who.get("source"),
        },
        "snapshots": held,
        "effect": None,
        "records": written,
    }
    key = doc.get("effect")
    if key is not None:
        fx = [
            e for e in b.history(1, first.seq) if e.kind == "effect" and e.payload.get("key") == key
        ]
        if fx:
            e = fx[-1]
            p = sf.journal.provenance((e.branch, e.seq))["event"]
            out["effect"] = {
                "key": key,
                "branch": e.branch,
                "seq": e.seq,
                "hash": e.hash,
                "result": e.payload.get("result"),
                "duration_ms": p.get("duration_ms"),
                "attempts": p.get("attempts"),
            }
        else:
            out["effect"] = {"key": key, "missing": True}
    return out


def get_provenance(sf: StateForge, unit_id: str) -> ProvenanceRecord:
    """A unit's provenance record: the latest written with ``write_provenance``, else one
    derived from the journal (hop 0 the unit's source, hop 1 the effect it came from)."""
    p = provenance(sf, unit_id)
    if p["records"]:
        r = p["records"][-1]
        return ProvenanceRecord(
            id=r["id"],
            memory_unit_id=unit_id,
            source=r["source"],
            source_ref=r.get("source_ref"),
            ingested_at=datetime.fromisoformat(r["ingested_at"]),
            trace=[ProvenanceHop(h["index"], h["source"], h.get("source_ref")) for h in r["trace"]],
        )
    doc = p["unit"]
    trace = [ProvenanceHop(0, doc.get("source") or "unknown", doc.get("source_ref"))]
    if p["effect"] is not None:
        trace.append(ProvenanceHop(1, "effect", p["effect"]["key"]))
    return ProvenanceRecord(
        id=p["written"]["snapshot"],
        memory_unit_id=unit_id,
        source=doc.get("source") or "unknown",
        source_ref=doc.get("source_ref"),
        ingested_at=datetime.fromisoformat(p["written"]["at"]),
        trace=trace,
    )


def write_provenance(sf: StateForge, record: ProvenanceRecord) -> None:
    """Record where a unit came from (appended to its session; ``get_provenance`` returns
    the latest record written for the unit)."""
    if not isinstance(record, ProvenanceRecord):
        raise InvalidValue(f"write_provenance takes a ProvenanceRecord, not {record!r}")
    found = find_unit(sf, record.memory_unit_id)
    if found is None:
        raise MemoryUnitNotFoundError(
            f"no unit {record.memory_unit_id!r} in any session", ref=record.memory_unit_id
        )
    ingested = record.ingested_at
    if ingested.tzinfo is None:
        ingested = ingested.replace(tzinfo=UTC)
    event = json_safe(
        {
            "op": "provenance",
            "id": record.id,
            "unit": record.memory_unit_id,
            "source": record.source,
            "source_ref": record.source_ref,
            "ingested_at": ingested.isoformat(),
            "trace": [
                {"index": h.index, "source": h.source, "source_ref": h.source_ref}
                for h in record.trace
            ],
        },
        "provenance record",
    )
    with sf._lock:
        sf.writer(found[0].branch).apply(event)
