"""Integrity: recompute every hash, chain link, fork point and snapshot seal of a journal, let
the database check its own pages, and check hashes recorded outside the journal (anchors).

What this proves, and what it cannot: a stored byte that changed is found; a history rewritten
consistently from some event on (every hash recomputed) is not, unless a head hash recorded
elsewhere is checked: it must still be in its branch's history.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

from . import events as ev
from .annotations import check_artifacts
from .errors import InvalidValue, StorageError
from .history import History
from .storage import Storage
from .storage.base import BranchRow, Head, SnapshotRecord, VerifyEvent


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


ANCHOR_HEX = 32  # hex characters of an expected hash, at least: 128 bits nobody can grind


def expected_heads(
    expect: Mapping[int | str, str] | None, resolve: Callable[[int | str], int]
) -> list[tuple[int, str]]:
    """The anchors of ``Journal.verify(expect=...)``: (branch id, lowercase hex prefix) pairs,
    each checked (at least ANCHOR_HEX hex characters) before anything is read."""
    if expect is None:
        return []
    if not isinstance(expect, Mapping):
        raise InvalidValue("expect maps branches (id or name) to expected head hashes")
    out = []
    for ref, h in expect.items():
        p = h.lower() if isinstance(h, str) else ""
        if not (ANCHOR_HEX <= len(p) <= 64) or any(c not in "0123456789abcdef" for c in p):
            raise InvalidValue(
                f"expected hash {h!r} for branch {ref!r} is not {ANCHOR_HEX} to 64 hex "
                "characters (a shorter prefix could be matched by a forged history)"
            )
        out.append((resolve(ref), p))
    return out


def verify(db: Storage, history: History, anchors: list[tuple[int, str]]) -> VerifyReport:
    """Check everything stored; ``anchors``: (branch id, expected hash hex prefix) pairs.

    A damaged file is read as far as it goes: a part that cannot be read (a damaged page, bytes
    that are not text) is reported where it is (each unreadable seq, the table, SQLite's pages)
    and the rest is still checked; nothing here raises a storage fault."""
    problems: list[tuple[int, int, str]] = []
    heads: list[tuple[int, int, str]] = []
    found: list[tuple[int, int, str]] = []
    n_events = 0
    rows: list[BranchRow] = _read(problems, "the branches table", db.branch_rows, [])
    for r in rows:
        history.remember(r)
    snaps: list[SnapshotRecord] = _read(problems, "the snapshots table", db.snapshots, [])
    stored: dict[int, Head] | None = _read(
        problems, "", db.heads, None
    )  # the branches' heads, per branch if this fails
    # Keep only the hashes something else chains to: fork points and snapshot seqs.
    needed = {
        history.owner(r.parent, r.fork_seq) for r in rows if r.parent is not None and r.fork_seq > 0
    }
    needed.update((s.branch, s.seq) for s in snaps)
    hashes: dict[tuple[int, int], bytes] = {}
    damaged: set[tuple[int, int]] = set()
    prefixes = {p for _, p in anchors}
    attached: list[tuple[int, int, str]] = []  # attach events: their bytes are checked below
    for r in rows:
        if r.parent is None or r.fork_seq == 0:
            prev: bytes | None = ev.ZERO_HASH
        else:
            prev = hashes.get(history.owner(r.parent, r.fork_seq))
        head = (
            stored.get(r.id) if stored is not None else _read([], "", partial(db.head, r.id), None)
        )
        expect_seq, last = r.fork_seq + 1, r.fork_seq
        for item in _own_events(db, r.id, r.fork_seq, head.seq if head is not None else None):
            if isinstance(item, _Unreadable):
                damaged.add((r.id, item.seq))
                problems.append((r.id, item.seq, f"unreadable: {item.why}"))
                prev, expect_seq, last = None, item.seq + 1, item.seq  # the chain is broken here
                continue
            seq, kind, h, ph, payload, kh, metric, value = item
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
            if kind == "attach":
                attached.append((r.id, seq, payload))
            if (r.id, seq) in needed:
                hashes[(r.id, seq)] = h
            if prefixes:
                hx = h.hex()
                found.extend((r.id, seq, hx) for p in prefixes if hx.startswith(p))
            prev, expect_seq, last = h, seq + 1, seq
        if head is not None:
            heads.append((r.id, head.seq, bytes(head.hash).hex()))
        elif last == r.fork_seq:
            seq, fh = history.fork_point(r.id)
            heads.append((r.id, seq, fh.hex()))
    for s in snaps:
        if (s.branch, s.seq) in damaged:
            continue  # its event is reported unreadable: there is nothing to seal it to
        at = ev.ZERO_HASH if s.seq == 0 else hashes.get((s.branch, s.seq))
        if at is None or ev.snapshot_digest(at, s.state) != s.digest:
            problems.append((s.branch, s.seq, "snapshot does not match its seal (state changed)"))
    problems.extend(_read(problems, "the blobs table", partial(check_artifacts, db, attached), []))
    cut = getattr(db, "truncation", None)  # SQLite files: shorter than their header records?
    said = cut() if cut is not None else None
    if said:
        problems.append((-1, 0, said))
    checked: list[str] = _read(problems, "the file's pages", db.quick_check, [])
    for what in checked:
        problems.append((-1, 0, f"damaged: SQLite's quick_check says {what}"))
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


@dataclass(frozen=True, slots=True)
class _Unreadable:
    seq: int
    why: str


T = TypeVar("T")


def damage_of(err: StorageError) -> str:
    """What a storage fault says is damaged, without advice (a report shows where instead)."""
    damage = getattr(err, "damage", None)
    return damage if isinstance(damage, str) and damage else " ".join(str(err).split())


def _read(problems: list[tuple[int, int, str]], what: str, read: Callable[[], T], empty: T) -> T:
    """``read()``, or ``empty`` with the fault reported as a problem of the file (``what``
    empty: not reported, the caller reads the same rows another way)."""
    try:
        return read()
    except StorageError as e:
        if what:
            problems.append((-1, 0, f"{what}: unreadable: {damage_of(e)}"))
        return empty


BATCH = 512  # events read at once once a branch has met damage


def _own_events(
    db: Storage, branch: int, fork_seq: int, head: int | None
) -> Iterator[VerifyEvent | _Unreadable]:
    """A branch's own events in seq order, streamed; once a read fails, the rest in batches,
    and a failing batch one event at a time: each seq that cannot be read is an _Unreadable.
    ``head``: the branch's last seq, when known (else reading stops at the first seq past a
    run of MAX_UNREADABLE unreadable ones)."""
    last = fork_seq
    try:
        for row in db.own_events(branch):
            yield row
            last = row[0]
        return
    except StorageError:
        pass  # read the rest around the damage
    misses = 0
    while head is None or last < head:
        try:
            batch = db.events_after(branch, last, BATCH)
        except StorageError:
            try:
                batch = db.events_after(branch, last, 1)
            except StorageError as e:
                last += 1
                yield _Unreadable(last, damage_of(e))
                misses += 1
                if head is None and misses >= MAX_UNREADABLE:
                    return
                continue
        if not batch:
            return
        misses = 0
        for x in batch:
            yield (x.seq, x.kind, x.hash, x.parent_hash, x.payload, x.key_hash, x.metric, x.value)
            last = x.seq


MAX_UNREADABLE = 10_000  # with no head to read up to, this many unreadable seqs in a row end it


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
