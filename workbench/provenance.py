"""Provenance: who wrote an event (writer, process, source, effect timing, world time, caller id)
and which events, and which effects' results, produced a value of the state."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from . import events as ev
from .diff import iter_diff
from .errors import NotFound

if TYPE_CHECKING:
    from .port import JournalPort


def event_provenance(journal: JournalPort, rec: ev.Record) -> dict[str, Any]:
    """One event's record and who wrote it."""
    p = journal.storage.provenance(rec.branch, rec.seq)
    doc: dict[str, Any] = {
        "branch": rec.branch,
        "seq": rec.seq,
        "kind": rec.kind,
        "hash": rec.hash,
        "ts": rec.ts,
        "summary": rec.summary(80),
    }
    if p is not None:
        doc.update({"writer": p.writer, "pid": p.pid, "source": p.source})
        if p.occurred_at is not None:
            doc["occurred_at"] = p.occurred_at
        if p.event_id is not None:
            doc["id"] = p.event_id
        if rec.kind == "effect":
            doc.update(
                {"key": rec.payload.get("key"), "duration_ms": p.fx_ms, "attempts": p.attempts}
            )
    return doc


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _carries(value: Any, result: Any) -> bool:
    """Whether a changed value is an effect's result: equal to it, or holding it as one item
    of a list or one value of a dict. Never a substring match (a result 1 is not in 10)."""
    if _same(value, result):
        return True
    if isinstance(value, list):
        return any(_same(item, result) for item in value)
    if isinstance(value, dict):
        return any(_same(item, result) for item in value.values())
    return False


def provenance(
    journal: JournalPort, branch: int, seq: int, path: str | None = None
) -> dict[str, Any]:
    """Who wrote the event at (branch, seq) and, with ``path`` (e.g. ``notes[3]``), the chain of
    events that produced that value of the state: each event that changed it, and the effects
    whose results it carries."""
    out: dict[str, Any] = {"branch": branch, "seq": seq}
    if seq > 0:
        out["event"] = event_provenance(journal, journal.record((branch, seq)))
    if path is None:
        return out
    chain: list[dict[str, Any]] = []
    b = journal.branch(branch)
    effects: list[ev.Record] = []
    prev = b.at(0)
    for rec in b.history(1, seq):
        if rec.kind == "effect":
            effects.append(rec)
            continue
        if rec.kind not in ("delta", "compact"):
            continue
        now = b.at(rec.seq)
        touched = [
            c
            for c in iter_diff(prev, now)
            if c.path == path
            or c.path.startswith((path + ".", path + "["))
            or path.startswith((c.path + "[", c.path + "."))
        ]
        if touched:
            value = touched[0].after
            sources = [
                event_provenance(journal, e)
                for e in effects
                if _carries(value, e.payload.get("result"))
            ]
            chain.append(
                {
                    **event_provenance(journal, rec),
                    "change": touched[0].op,
                    "from_effects": sources[-3:],
                }
            )
        prev = now
    if not chain:
        raise NotFound(
            f"no event up to {branch}@{seq} changed {path!r}; check the path (e.g. notes[0])"
        )
    out["path"] = path
    out["chain"] = chain
    return out
