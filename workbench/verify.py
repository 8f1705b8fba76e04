"""Integrity: recompute every hash, chain link, fork point and snapshot seal of a journal, let
the database check its own pages, and check hashes recorded outside the journal (anchors).

What this proves, and what it cannot: a stored byte that changed is found; a history rewritten
consistently from some event on (every hash recomputed) is not, unless a head hash recorded
elsewhere is checked: it must still be in its branch's history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import events as ev
from .errors import Corrupt, NotAJournal
from .history import History
from .storage import Storage


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """Result of ``Journal.verify``: ok, and problems as (branch, seq, what), first bad first."""

    ok: bool
    problems: list[tuple[int, int, str]] = field(default_factory=list)
    events: int = 0
    branches: int = 0
    snapshots: int = 0
    heads: list[tuple[int, int, str]] = field(default_factory=list)  # (branch, head seq, head hash)
    anchored: list[tuple[int, int, str]] = field(
        default_factory=list
    )  # expected hashes found: (branch, seq, hash)

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON object."""
        return {
            "ok": self.ok,
            "events": self.events,
            "branches": self.branches,
            "snapshots": self.snapshots,
            "heads": [{"branch": b, "seq": s, "hash": h} for b, s, h in self.heads],
            "anchored": [{"branch": b, "seq": s, "hash": h} for b, s, h in self.anchored],
            "problems": [{"branch": b, "seq": s, "what": w} for b, s, w in self.problems],
        }


def verify(db: Storage, history: History, anchors: list[tuple[int, str]]) -> VerifyReport:
    """Check everything stored; ``anchors``: (branch id, expected hash hex prefix) pairs."""
    problems: list[tuple[int, int, str]] = []
    heads: list[tuple[int, int, str]] = []
    found: list[tuple[int, int, str]] = []
    n_events = 0
    rows = []
    snaps = []
    try:
        rows = db.branch_rows()
        for r in rows:
            history.remember(r)
        snaps = db.snapshots()
        # Keep only the hashes something else chains to: fork points and snapshot seqs.
        needed = {
            history.owner(r.parent, r.fork_seq)
            for r in rows
            if r.parent is not None and r.fork_seq > 0
        }
        needed.update((s.branch, s.seq) for s in snaps)
        hashes: dict[tuple[int, int], bytes] = {}
        prefixes = {p for _, p in anchors}
        for r in rows:
            if r.parent is None or r.fork_seq == 0:
                prev: bytes | None = ev.ZERO_HASH
            else:
                prev = hashes.get(history.owner(r.parent, r.fork_seq))
            expect_seq = r.fork_seq + 1
            for seq, kind, h, ph, payload, kh, metric, value in db.own_events(r.id):
                n_events += 1
                what = None
                if seq != expect_seq:
                    what = f"seq {seq} follows {expect_seq - 1}: events are missing"
                elif kind not in ev.KINDS:
                    what = f"unknown kind {kind!r}"
                elif prev is not None and ph != prev:
                    what = "parent hash does not match the previous event's hash"
                elif ev.event_hash(ph, kind, payload) != h:
                    what = "hash does not match the stored payload (payload changed)"
                else:
                    what = _check_columns(kind, payload, kh, metric, value)
                if what is not None:
                    problems.append((r.id, seq, what))
                    break
                if (r.id, seq) in needed:
                    hashes[(r.id, seq)] = h
                if prefixes:
                    hx = h.hex()
                    found.extend((r.id, seq, hx) for p in prefixes if hx.startswith(p))
                prev = h
                expect_seq = seq + 1
        for s in snaps:
            at = ev.ZERO_HASH if s.seq == 0 else hashes.get((s.branch, s.seq))
            if at is None or ev.snapshot_digest(at, s.state) != s.digest:
                problems.append(
                    (s.branch, s.seq, "snapshot does not match its seal (state changed)")
                )
        stored = db.heads()
        for r in rows:
            head = stored.get(r.id)
            seq, h = (head.seq, head.hash) if head is not None else history.fork_point(r.id)
            heads.append((r.id, seq, h.hex()))
        for what in db.quick_check():
            problems.append((-1, 0, f"damaged: SQLite's quick_check says {what}"))
    except (Corrupt, NotAJournal) as e:  # SQLite met a damaged page while reading
        problems.append((-1, 0, f"damaged: {e}"))
    anchored = []
    for bid, prefix in anchors:
        head_seq = next((s for b, s, _ in heads if b == bid), None)
        hit = next(
            (
                (b, s, h)
                for b, s, h in found
                if h.startswith(prefix)
                and head_seq is not None
                and s <= head_seq
                and history.owner(bid, s) == (b, s)
            ),
            None,
        )
        if hit is None:
            problems.append(
                (
                    bid,
                    head_seq or 0,
                    f"expected hash {prefix} is not in branch {bid}'s "
                    "history: it was rewritten, or this is another journal",
                )
            )
        else:
            _, seq, event_hash = hit
            anchored.append((bid, seq, event_hash))
    problems.sort()
    return VerifyReport(not problems, problems, n_events, len(rows), len(snaps), heads, anchored)


def _check_columns(
    kind: str, payload: str, kh: bytes | None, metric: str | None, value: float | None
) -> str | None:
    """The derived columns (effect key hash, metric, value) must agree with the payload."""
    if kind == "effect":
        if kh != ev.key_hash(ev.loads(payload).get("key", "")):
            return "effect key index does not match the payload"
    elif kind == "observe":
        p = ev.loads(payload)
        if metric != p.get("name") or value != float(p.get("value", "nan")):
            return "observation columns do not match the payload"
    elif kh is not None or metric is not None:
        return "derived columns set on an event that has none"
    return None
