"""The resolved history of a branch, over a ``Storage``: which branch wrote each seq, the hash at
any seq, and the state at any seq (snapshots, sealed and checked when loaded, then replay). A
snapshot only caches what the events give: a damaged one is passed over with a warning and
``rebuild_snapshots`` rewrites it.

A branch's resolved history is its parent's resolved history up to the fork point, then its
own events; seqs continue the parent's numbering. States are rebuilt by the journal's State
class (``apply``), or as plain JSON updated by RFC 7386 merge patches for a class-less journal.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import threading
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple, NoReturn

from . import deltas
from . import events as ev
from .errors import Corrupt, IntegrityError, NotFound, StateUnavailable, WorkbenchError
from .storage import BranchRow, Segment, SnapshotRow, Storage


class DamagedSnapshotWarning(UserWarning):
    """A snapshot could not be used (its seal broken, its state not decompressing or decoding):
    the state was rebuilt from the events without it. ``journal.rebuild_snapshots()`` repairs
    it."""


_BROKEN_SEAL = "its state does not match its seal: it changed after it was written"
_NO_DECOMPRESS = "its compressed state does not decompress"


class Rebuilt(NamedTuple):
    """A state rebuilt at a seq, and what it cost: the snapshot it started from (``base``, 0
    for none; ``base_bytes`` long) and the bytes of deltas replayed after it (``since_bytes``).
    A branch spaces its automatic snapshots by these (see ``Branch.apply``)."""

    state: Any
    base: int
    base_bytes: int
    since_bytes: int


def built_from(cls: type | None) -> str:
    """What a snapshot is built from: the versions of the delta kinds the State declares
    (``delta_kinds``; else every kind that has evolved: a version above 1 or an upcaster) and
    the State's schema (its ``state_version`` and dataclass fields). A snapshot built from
    something incompatible is not used: the state is rebuilt from events (upcast as the current
    code upcasts them)."""
    fields = None
    if cls is not None and dataclasses.is_dataclass(cls):
        fields = sorted(f.name for f in dataclasses.fields(cls))
    version = getattr(cls, "state_version", None) if cls is not None else None
    kinds = getattr(cls, "delta_kinds", None) if cls is not None else None
    versions = deltas.versions(kinds)
    if not versions and fields is None and version is None:
        return ""  # what journals recorded before snapshots said what they were built from
    return ev.canonical({"deltas": versions, "fields": fields, "version": version}, "built")


@functools.lru_cache(maxsize=256)
def _parsed(built: str) -> tuple[dict[str, int], Any, Any]:
    if not built:
        return {}, None, None
    doc = ev.loads(built)
    return dict(doc.get("deltas") or {}), doc.get("fields"), doc.get("version")


def compatible(then: str | None, now: str) -> bool:
    """Whether a snapshot built from ``then`` holds what a replay by code built from ``now``
    would: the same state schema, and every delta kind ``now`` names at the version it had
    then (a kind a snapshot does not name was at version 1)."""
    if (then or "") == now:
        return True
    t_deltas, t_fields, t_version = _parsed(then or "")
    n_deltas, n_fields, n_version = _parsed(now)
    return (
        t_fields == n_fields
        and t_version == n_version
        and all(t_deltas.get(k, 1) == v for k, v in n_deltas.items())
    )


class History:
    """Resolved histories and states of one journal's branches (caches shared by its handles)."""

    def __init__(self, storage: Storage, state: type | None, state_known: bool = True) -> None:
        self.storage = storage
        self.state_class = state
        self.state_known = state_known
        self._rows: dict[int, BranchRow] = {}
        self._segments: dict[int, list[Segment]] = {}
        self._built: tuple[int, str] = (-1, "")  # (delta registry generation, built_from(state))
        self._lock = threading.Lock()
        self.warm: Any = None  # a pool worker's WarmCache (states at fork points), else None

    # -- branches ---------------------------------------------------------------------------

    def row(self, branch_id: int) -> BranchRow:
        """A branch's row (cached: rows never change)."""
        row = self._rows.get(branch_id)
        if row is None:
            row = self.storage.branch_row(branch_id)
            if row is None:
                raise NotFound(
                    f"there is no branch {branch_id} in {self.storage.path}; list them with "
                    "journal.branches() or `lithify branches`",
                    branch=branch_id,
                )
            self._rows[branch_id] = row
        return row

    def remember(self, row: BranchRow) -> None:
        """Cache a row read or written elsewhere."""
        self._rows.setdefault(row.id, row)

    def segments(self, branch_id: int) -> list[Segment]:
        """The resolved history of a branch as (branch, first_seq, last_seq) pieces, root first."""
        segs = self._segments.get(branch_id)
        if segs is None:
            segs = []
            row = self.row(branch_id)
            last: int | None = None
            while True:
                segs.append((row.id, 0 if row.parent is None else row.fork_seq + 1, last))
                if row.parent is None:
                    break
                # An ancestor is visible only up to the lowest fork point below it.
                last = row.fork_seq if last is None else min(last, row.fork_seq)
                row = self.row(row.parent)
            segs.reverse()
            self._segments[branch_id] = segs
        return segs

    def owner(self, branch: int, seq: int) -> tuple[int, int]:
        """(branch that wrote seq, seq) in a branch's resolved history."""
        for bid, first, last in reversed(self.segments(branch)):
            if first <= seq and (last is None or seq <= last):
                return bid, seq
        return branch, seq

    def hash_at(self, branch: int, seq: int) -> bytes:
        """The hash of the event at seq in a branch's resolved history (zeros at seq 0)."""
        if seq == 0:
            return ev.ZERO_HASH
        event = self.storage.event_at(*self.owner(branch, seq))
        if event is None:
            raise NotFound(f"branch {branch} has no event at seq {seq}", branch=branch, seq=seq)
        return event.hash

    def fork_point(self, branch: int) -> tuple[int, bytes]:
        """(seq, hash) a branch starts from: its fork point (the root's is 0 and zeros)."""
        row = self.row(branch)
        return row.fork_seq, (
            self.hash_at(row.parent, row.fork_seq) if row.parent is not None else ev.ZERO_HASH
        )

    # -- states -----------------------------------------------------------------------------

    def need_state(self) -> None:
        """Raise StateUnavailable when this process does not know the journal's State class."""
        if not self.state_known:
            name = self.storage.meta.get("state_name")
            raise StateUnavailable(
                f"{self.storage.path} holds states of {name!r}, a State class this process does "
                f"not "
                "know: pass it (Journal.open(path, YourState); the CLI's --state module:Class), "
                "import "
                "the module that defines it, or read plain JSON with Journal.open(path, raw=True) "
                "(the CLI's --raw)",
                path=self.storage.path,
                state_name=name,
            )

    def built(self) -> str:
        """What snapshots written now are built from (see ``built_from``)."""
        gen = deltas.generation()
        if self._built[0] != gen:
            self._built = (gen, built_from(self.state_class))
        return self._built[1]

    def apply(self, state: Any, delta: Any) -> Any:
        """The state after one stored delta (decoded and upcast as replays do)."""
        if not self.state_known:
            self.need_state()
        if self.state_class is None:
            return ev.merge_patch(state, delta)
        out = state.apply(deltas.decode(delta))
        return state if out is None else out

    def applier(self) -> Callable[[Any, Any], Any]:
        """``apply`` with its checks hoisted, for applying many deltas in a row."""
        self.need_state()
        if self.state_class is None or deltas.any_registered():
            return self.apply

        def apply(state: Any, delta: Any) -> Any:
            out = state.apply(delta)
            return state if out is None else out

        return apply

    def stored_applier(self) -> Callable[[Any, dict[str, Any]], bool] | None:
        """The State class's ``apply_stored`` when it defines one for its own ``apply`` (None:
        decode every delta). A subclass that overrides ``apply`` but inherits ``apply_stored``
        gets no fast path: the inherited one would skip its ``apply``."""
        cls = self.state_class
        if cls is None or not isinstance(cls, type) or not issubclass(cls, ev.State):
            return None
        if cls.apply_stored is ev.State.apply_stored:
            return None
        owner = next(c for c in cls.__mro__ if "apply_stored" in c.__dict__)
        if cls.apply is not owner.apply:  # type: ignore[attr-defined]
            return None
        return cls.apply_stored

    def decode(self, data: Any) -> Any:
        """A state from its JSON form."""
        return ev.decode_state(self.state_class, data)

    def fresh(self) -> Any:
        """The initial state of a new journal."""
        return self.state_class() if self.state_class is not None else {}

    def state_at(self, branch: int, seq: int) -> Rebuilt:
        """The state as of seq in a branch's resolved history, with the snapshot it was rebuilt
        from and the bytes of deltas replayed after that snapshot.

        Snapshots built from other delta versions or another state schema are not used: the
        state is rebuilt from the events (each upcast), and such snapshots passed on the way
        are rewritten (unless the journal is read-only). A damaged snapshot (its seal broken,
        its state not decompressing or decoding) is passed over with a DamagedSnapshotWarning,
        and left as it is for ``verify`` to report until ``rebuild_snapshots`` repairs it.

        In a pool worker the state at a point a branch inherits (a fork point) is built once
        and copied for every later fork from it (``workbench.warmcache``)."""
        warm = self.warm
        if warm is not None and seq > 0:
            owner = self.owner(branch, seq)[0]
            if owner != branch:
                key = (owner, seq, self.hash_at(branch, seq), self.built())
                return warm.state(  # type: ignore[no-any-return]
                    key,
                    lambda: self._state_at(branch, seq, warn=True),
                    lambda r: r.base_bytes + r.since_bytes,
                )
        return self._state_at(branch, seq, warn=True)

    def _state_at(self, branch: int, seq: int, warn: bool) -> Rebuilt:
        self.need_state()
        segs = self.segments(branch)
        db = self.storage
        built = self.built()
        stale: list[tuple[int, int]] = []  # passed over on the way down; rebuilt on the way up
        # A replay allocates a container or more per event and frees most of them at once,
        # and a snapshot's parse builds the whole state at once: the cyclic collector would
        # rescan the growing state again and again for nothing (a third of a 10^5-event
        # replay, half of a large snapshot's load). Paused until the state is built.
        collecting = gc.isenabled()
        gc.disable()
        try:
            start = self._start(segs, seq, built, stale, warn)
            if db.readonly:
                stale = []
            return self._rebuild(segs, seq, start, stale, built)
        finally:
            if collecting:
                gc.enable()

    def _start(
        self,
        segs: list[Segment],
        seq: int,
        built: str,
        stale: list[tuple[int, int]],
        warn: bool,
    ) -> tuple[int, int, Any] | None:
        """(seq, characters, state) of the newest usable snapshot at or before ``seq``, or None
        (replay from the start). Incompatible snapshots passed on the way are added to
        ``stale``; a damaged one (its seal broken, its bytes not decompressing, its state not
        decoding) is passed with a warning: a snapshot only caches what the events give."""
        db = self.storage
        try:
            snap = db.nearest_snapshot(segs, seq)
        except Corrupt as e:  # a compressed state that does not decompress: which one, below
            snap, skip = None, None
            fault: Exception | None = e
        else:
            if snap is None:
                return None
            skip, fault = (snap.branch, snap.seq), None
            if compatible(snap.built, built):
                loaded = self._load(snap, warn)
                if loaded is not None:
                    return snap.seq, *loaded
            else:
                skip = None  # met again first among the marks: stale
        for mark_branch, mark_seq, mark_built in db.snapshot_marks(segs, seq):
            if (mark_branch, mark_seq) == skip:
                continue  # the nearest one, damaged: warned about above
            if not compatible(mark_built, built):
                stale.append((mark_branch, mark_seq))
                continue
            try:
                row = db.snapshot_at(mark_branch, mark_seq)
            except Corrupt:
                if warn:
                    self._warn_damaged(mark_branch, mark_seq, _NO_DECOMPRESS)
                fault = None  # found: the snapshot the nearest one's query met
                continue
            if row is not None:
                loaded = self._load(row, warn)
                if loaded is not None:
                    return row.seq, *loaded
        if fault is not None:
            raise fault  # no snapshot was found damaged after all: a fault of its own kind
        return None

    def _load(self, snap: SnapshotRow, warn: bool) -> tuple[int, Any] | None:
        """(characters, state) of a snapshot, or None (with a warning) when it is damaged."""
        try:
            text = self.sealed(snap)
        except IntegrityError:
            if warn:
                self._warn_damaged(snap.branch, snap.seq, _BROKEN_SEAL)
            return None
        try:
            return len(text), self.decode(ev.loads(text))
        except Exception as e:  # noqa: BLE001 (whatever the State raises: the events rebuild it)
            if warn:
                err = ev.describe(str(e), 120)
                self._warn_damaged(
                    snap.branch, snap.seq, f"its state does not decode ({type(e).__name__}: {err})"
                )
            return None

    def _warn_damaged(self, branch: int, seq: int, why: str) -> None:
        warnings.warn(
            f"the snapshot of branch {branch} at seq {seq} in {self.storage.path} is damaged "
            f"({why}) and was not used: the state was rebuilt from the events, which a snapshot "
            "only caches; journal.rebuild_snapshots() (`lithify snapshots rebuild`) repairs it, "
            "and `lithify verify` lists every damaged part of the journal",
            DamagedSnapshotWarning,
            stacklevel=2,
        )

    def _rebuild(
        self,
        segs: list[Segment],
        seq: int,
        start: tuple[int, int, Any] | None,
        stale: list[tuple[int, int]],
        built: str,
    ) -> Rebuilt:
        """``state_at``'s work once the snapshot to start from is chosen and loaded."""
        db = self.storage
        if start is not None:
            base, base_bytes, state = start
        else:
            base = base_bytes = 0
            state = self.fresh()
        since = 0
        todo = sorted(stale, key=lambda at: at[1])
        stored = self.stored_applier()
        loads = ev.loads
        # Every event from the start point on, checked against its chain before it is replayed
        # (``checked``): a gap or a changed payload raises, never replays into a wrong state.
        # The event at the snapshot's seq only anchors the chain (the snapshot is sealed to it).
        events = checked(self, segs, base, db.replay_events(segs, base if base > 0 else 1, seq))
        # A stale snapshot rewritten on the way is the newest one then: the result says so.
        for event_seq, kind, payload in events:
            while todo and todo[0][1] < event_seq:  # at an event that is not a delta
                at = todo.pop(0)
                if (n := self._resnapshot(at, state, built)) is not None:
                    base, base_bytes, since = at[1], n, 0
            if payload is None:
                continue  # an observation, an effect...: nothing to apply
            doc = loads(payload)
            if kind == "compact":
                state = self.decode(doc["state"])
                base, base_bytes, since = event_seq, len(payload), 0  # stored with its snapshot
            else:
                since += len(payload)
                if stored is None or type(doc) is not dict or not stored(state, doc):
                    state = self.apply(state, doc)
            if todo and todo[0][1] == event_seq:
                if (n := self._resnapshot(todo.pop(0), state, built)) is not None:
                    base, base_bytes, since = event_seq, n, 0
        for left in todo:
            if (n := self._resnapshot(left, state, built)) is not None:
                base, base_bytes, since = left[1], n, 0
        return Rebuilt(state, base, base_bytes, since)

    def _resnapshot(self, at: tuple[int, int], state: Any, built: str) -> int | None:
        """Rewrite a stale snapshot with the state rebuilt now; the characters written, or
        None: a failure only leaves it stale."""
        try:
            return self._rewrite(at, state, built)
        except WorkbenchError:
            return None

    def _rewrite(self, at: tuple[int, int], state: Any, built: str) -> int:
        """Store the snapshot at (branch, seq) anew from ``state``; the characters written."""
        branch, seq = at
        text = ev.canonical(ev.encode_state(state), "state")
        h = self.hash_at(branch, seq)
        self.storage.put_snapshot(
            branch, seq, text, ev.snapshot_digest(h, text), built, replace=True
        )
        return len(text)

    def rebuild_snapshots(self) -> int:
        """Rebuild every snapshot built from something other than ``built()`` (rewritten on the
        way by ``state_at``) and every damaged one (a broken seal, a state that does not
        decompress or decode: rebuilt from the events without it); how many."""
        self.need_state()
        self.storage.writable()
        built = self.built()
        stale, damaged = [], []
        for b, q, then in self.storage.all_snapshot_marks():
            if not compatible(then, built):
                stale.append((b, q))
                continue
            try:
                row = self.storage.snapshot_at(b, q)
            except Corrupt:
                row = None
            if row is None or self._load(row, warn=False) is None:
                damaged.append((b, q))
        for branch, seq in stale:
            self.state_at(branch, seq)
        for at in damaged:
            self._rewrite(at, self._state_at(*at, warn=False).state, built)
        return len(stale) + len(damaged)

    def sealed(self, snap: SnapshotRow) -> str:
        """A snapshot's state text, after checking its seal (a changed byte raises)."""
        at = ev.ZERO_HASH if snap.seq == 0 else (snap.event_hash or b"")
        # not text: compressed bytes whose size was lost, or this code is older than the file
        if type(snap.state) is not str or ev.snapshot_digest(at, snap.state) != snap.digest:
            raise IntegrityError(
                f"the snapshot of branch {snap.branch} at seq {snap.seq} in {self.storage.path} "
                f"does not "
                "match its seal (its state was changed after it was written); run `lithify "
                "verify`, and restore the journal from a copy",
                branch=snap.branch,
                seq=snap.seq,
            )
        return snap.state

    def initial(self) -> Any:
        """The state before the first event (the journal's first snapshot, or a fresh state)."""
        self.need_state()
        try:
            snap = self.storage.snapshot_at(0, 0)
        except Corrupt:
            self._warn_damaged(0, 0, _NO_DECOMPRESS)
            return self.fresh()
        if snap is None or not compatible(snap.built, self.built()):
            return self.fresh()
        loaded = self._load(snap, warn=True)
        return self.fresh() if loaded is None else loaded[1]

    def valid_at(self, branch: int, head: int, when: int, known: int | None = None) -> Any:
        """The state built from the deltas whose world time is at or before ``when`` (recorded by
        ``known``), applied in world order."""
        state = self.initial()
        for _, kind, payload, _ in self.storage.world_events(
            self.segments(branch), head, when, known
        ):
            doc = ev.loads(payload)
            state = self.decode(doc["state"]) if kind == "compact" else self.apply(state, doc)
        return state


def checked(
    history: History, segs: list[Segment], base: int, events: list[Any]
) -> list[tuple[int, str, str | None]]:
    """The events of a replay, after checking them: seqs without a gap from the start point,
    each event's parent hash the previous event's hash, and each delta's and compaction's hash
    recomputed from its stored payload. ``IntegrityError`` names the first event that fails
    (what ``verify`` reports first there), so an ordinary read never returns a state built over
    a missing or changed event. ``events``: ``replay_events`` from ``base`` (the event a
    snapshot is sealed to, which only anchors the chain) or from 1 (``base`` 0). Checked a
    whole list at a time (the comparisons in C), then event by event only to name a failure.
    Gives (seq, kind, payload or None) from ``base + 1``."""
    anchor = ev.ZERO_HASH
    if base > 0:
        if not events or events[0][0] != base:
            _damaged(history, segs, base, "it is missing (the event a snapshot was taken at)")
        anchor = bytes(events[0][2])
        events = events[1:]
    if not events:
        return []
    seqs = [e[0] for e in events]
    links = [e[3] for e in events]
    hashes = [e[2] for e in events]
    state = [e for e in events if e[4] is not None]
    ok = (
        seqs[0] == base + 1
        and seqs[-1] == base + len(seqs)
        and seqs == list(range(base + 1, base + 1 + len(seqs)))
        and links[0] == anchor
        and links[1:] == hashes[:-1]
        and [e[2] for e in state] == [ev.event_hash(e[3], e[1], e[4]) for e in state]
    )
    if not ok:
        _first_damage(history, segs, base, anchor, events)
    return [(e[0], e[1], e[4]) for e in events]


def _first_damage(
    history: History, segs: list[Segment], base: int, anchor: bytes, events: list[Any]
) -> None:
    """Raise for the first event of ``events`` that fails its check (one does)."""
    expect, prev = base + 1, anchor
    for seq, kind, h, ph, payload in events:
        if seq != expect:
            _damaged(history, segs, expect, f"it is missing: seq {seq} follows {expect - 1}")
        if ph != prev:
            _damaged(history, segs, seq, "its parent hash is not the previous event's hash")
        if payload is not None and ev.event_hash(ph, kind, payload) != h:
            why = "its hash does not match its stored payload (payload changed)"
            _damaged(history, segs, seq, why)
        prev, expect = h, seq + 1
    raise AssertionError("the replay's check failed, yet no event fails it")  # pragma: no cover


def _damaged(history: History, segs: list[Segment], seq: int, why: str) -> NoReturn:
    branch = next(
        (b for b, first, last in segs if first <= seq and (last is None or seq <= last)),
        segs[-1][0] if segs else 0,
    )
    raise IntegrityError(
        f"event {seq} of branch {branch} in {history.storage.path} is damaged: {why}; the "
        "state cannot be replayed past it. `lithify verify` lists every damaged part of the "
        "journal; restore it from a copy or a replica (`lithify pull`)",
        branch=branch,
        seq=seq,
    )
