"""``Journal``: one append-only, content-addressed event log in SQLite, with branches.

A journal owns one SQLite connection. Many processes may open the same file; each branch has
one writer at a time (a stale handle is refused, never interleaved).
"""

from __future__ import annotations

import dataclasses
import json
import os
from datetime import datetime, timezone
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import deltas
from . import events as ev
from .branch import Branch
from .errors import (
    BranchConflict,
    Conflict,
    Corrupt,
    IntegrityError,
    InvalidValue,
    NotFound,
    StateMismatch,
    StateUnavailable,
    WorkbenchError,
)
from .storage import BranchRow, EventRow, Segment, Storage, StoredEvent, now_ms

if TYPE_CHECKING:
    import polars as pl

    from .subscriptions import Subscription

DURABILITY = ("process", "fsync", "lazy")
LAZY_BUFFER = 512
PLAIN_STATE = "@json"  # the state name of a journal written without a State class (merge patches)


def built_from(cls: type | None) -> str:
    """What a snapshot is built from: the registered delta versions and the State's schema (its
    ``state_version`` and dataclass fields). A snapshot built from something else is not used:
    the state is rebuilt from events (upcast as the current code upcasts them)."""
    fields = None
    if cls is not None and dataclasses.is_dataclass(cls):
        fields = sorted(f.name for f in dataclasses.fields(cls))
    version = getattr(cls, "state_version", None) if cls is not None else None
    versions = deltas.versions()
    if not versions and fields is None and version is None:
        return ""  # what journals recorded before snapshots said what they were built from
    return ev.canonical({"deltas": versions, "fields": fields, "version": version}, "built")


def state_name_of(cls: type) -> str:
    """The name a journal records for a State class: its ``state_name``, else its qualname."""
    name = getattr(cls, "state_name", None)
    return name if isinstance(name, str) and name else cls.__qualname__


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """Result of ``Journal.verify``: ok, and problems as (branch, seq, what), first bad first."""

    ok: bool
    problems: list[tuple[int, int, str]] = field(default_factory=list)
    events: int = 0
    branches: int = 0
    snapshots: int = 0
    heads: list[tuple[int, int, str]] = field(default_factory=list)  # (branch, head seq, head hash)
    anchored: list[tuple[int, int, str]] = field(default_factory=list)  # expected hashes found: (branch, seq, hash)

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


@dataclass(frozen=True, slots=True)
class SweepInfo:
    """A recorded sweep: forks of ``base`` at ``at``, one per parameter set."""

    id: int
    base: int
    at: int
    spec: dict[str, Any]
    created: int
    branches: list[int]


def record_of(row: StoredEvent) -> ev.Record:
    """Decode a stored event row into a Record."""
    position, branch, seq, kind, h, ph, ts, payload = row
    return ev.Record(branch, seq, kind, h.hex(), ph.hex(), ts, ev.loads(payload), position)


class Journal:
    """An append-only journal of events on branches; see ``Journal.open``."""

    def __init__(
        self, storage: Storage, state: type | None, snapshot_every: int, durability: str,
        state_known: bool = True,
    ) -> None:
        self._storage = storage
        self.state_class = state
        self.snapshot_every = snapshot_every
        self.durability = durability
        self._state_known = state_known
        self._built: tuple[int, str] = (-1, "")  # (delta registry generation, built_from(state))
        self._clock: Callable[[], int | float | datetime] | None = None
        # One lock for the connection and for everything here that threads share: the lazy
        # buffer, the branch caches, the refusal counters.
        self._lock = storage._lock
        self._rows: dict[int, BranchRow] = {}
        self._segments: dict[int, list[Segment]] = {}
        self._pending: dict[int, list[tuple[EventRow, str]]] = {}
        self._tips: dict[int, tuple[int, bytes]] = {}  # branch -> (seq, hash) of its last buffered event
        self._refused: dict[int, int] = {}  # branch id -> how many buffered batches were refused
        self._npending = 0
        self._closed = False
        self._lazy = durability == "lazy"

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
        clock: Callable[[], int | float | datetime] | None = None,
    ) -> Journal:
        """Open (or create) the journal at ``path``.

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
        """
        path = os.fspath(path)
        if path == ":memory:":
            return cls.in_memory(state, snapshot_every=snapshot_every, clock=clock)
        if os.path.isdir(path):
            raise InvalidValue(f"{path} is a directory; pass the path of a journal file", path=path)
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise NotFound(f"the folder {parent} does not exist; create it first", path=path)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < 1e7:
            raise InvalidValue(f"timeout is a positive number of seconds, not {timeout!r}")
        if callable(key):
            key = key()
        return cls._make(path, state, durability, snapshot_every, source, key, create=create,
                         readonly=readonly or raw, raw=raw, timeout=float(timeout), clock=clock)

    @classmethod
    def in_memory(cls, state: type | None = None, *, snapshot_every: int = 128,
                  clock: Callable[[], int | float | datetime] | None = None) -> Journal:
        """A journal in memory: the same code path as a file, gone when closed."""
        return cls._make(":memory:", state, "process", snapshot_every, clock=clock)

    @classmethod
    def _make(cls, path: str, state: type | None, durability: str, snapshot_every: int,
              source: str | None = None, key: str | bytes | None = None, *, create: bool | None = None,
              readonly: bool = False, raw: bool = False, timeout: float = 30.0,
              clock: Callable[[], int | float | datetime] | None = None) -> Journal:
        if durability not in DURABILITY:
            raise InvalidValue(
                f"durability={durability!r} is not one of {', '.join(DURABILITY)}",
                durability=durability,
            )
        if isinstance(snapshot_every, bool) or not isinstance(snapshot_every, int) or snapshot_every < 1:
            raise InvalidValue(f"snapshot_every must be a positive int, not {snapshot_every!r}")
        if create not in (None, True, False):
            raise InvalidValue(f"create is None, True or False, not {create!r}")
        if clock is not None and not callable(clock):
            raise InvalidValue(f"clock is a function returning unix ms or a datetime, not {clock!r}")
        if state is not None and raw:
            raise InvalidValue("raw=True reads states as plain JSON; pass no State class with it")
        if state is not None and (not isinstance(state, type) or not callable(getattr(state, "apply", None))):
            raise InvalidValue(
                f"{getattr(state, '__name__', state)!r} has no apply(self, delta) method; a "
                "State class must define how a delta changes it",
            )
        initial_text = None
        digest = b""
        name = PLAIN_STATE
        if state is not None:
            name = state_name_of(state)
            initial_text = ev.canonical(ev.encode_state(state()), "state")
            digest = ev.snapshot_digest(ev.ZERO_HASH, initial_text)
        storage = Storage(path, durability, int(timeout * 1000), source=source, key=key, readonly=readonly,
                          create=create, schema=(name, initial_text, digest, built_from(state)))
        try:
            state, known = cls._state_for(storage, state, raw)
        except BaseException:
            storage.close()
            raise
        j = cls(storage, state, snapshot_every, durability, known)
        j._clock = clock
        return j

    @staticmethod
    def _state_for(storage: Storage, state: type | None, raw: bool) -> tuple[type | None, bool]:
        """(the State class to use, whether states can be built) for what the journal recorded."""
        stored = storage.meta.get("state_name", "")
        if raw:
            return None, True
        if state is not None:
            given = state_name_of(state)
            if stored == "":  # written before names were recorded: take the caller's word for it
                if not storage.readonly:
                    storage.set_meta("state_name", given)
                return state, True
            if stored != given:
                what = "plain JSON states (no State class)" if stored == PLAIN_STATE else f"the State {stored!r}"
                raise StateMismatch(
                    f"{storage.path} was written with {what}, not {given!r}: open it with that class"
                    + ("" if stored == PLAIN_STATE else
                       f", or, if {state.__qualname__} is a compatible successor, set "
                       f"`state_name = {stored!r}` on it to declare so"),
                    path=storage.path, stored=stored, given=given)
            return state, True
        if stored in ("", PLAIN_STATE):
            return ev.registered_state(stored) if stored else None, True
        found = ev.registered_state(stored)
        return found, found is not None

    @property
    def state_name(self) -> str:
        """The name of the State the journal was written with ("@json": plain JSON states)."""
        return self._storage.meta.get("state_name", "") or (
            state_name_of(self.state_class) if self.state_class is not None else PLAIN_STATE)

    @property
    def readonly(self) -> bool:
        """True when opened read-only (nothing can be written through this journal)."""
        return self._storage.readonly

    def _need_state(self) -> None:
        if not self._state_known:
            name = self._storage.meta.get("state_name")
            raise StateUnavailable(
                f"{self.path} holds states of {name!r}, a State class this process does not know: "
                "pass it (Journal.open(path, YourState); the CLI's --state module:Class), import the "
                "module that defines it, or read plain JSON with Journal.open(path, raw=True) "
                "(the CLI's --raw)", path=self.path, state_name=name)

    @property
    def path(self) -> str:
        """The journal file's path (":memory:" for an in-memory journal)."""
        return self._storage.path

    def close(self) -> None:
        """Flush buffered events and close the connection; safe to call twice."""
        with self._lock:
            if self._closed:
                return
            try:
                self.flush()
                if not self.readonly:
                    self._compact_intents()
            finally:
                self._closed = True
                self._storage.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Journal({self.path!r}, durability={self.durability!r})"

    def _db(self) -> Storage:
        if self._closed:
            raise WorkbenchError("this journal is closed; open it again with Journal.open(path)")
        return self._storage

    # -- writing (used by Branch) -----------------------------------------------------------

    def _write(self, row: EventRow, shape: str, buffered: bool) -> None:
        """Append one event: buffered in lazy mode for deltas and observations. A buffered
        event must follow the branch's last buffered (else durable) event, or it is refused
        here, before it can spoil the buffer of an up-to-date handle."""
        if buffered and self._lazy:
            with self._lock:
                branch, seq = row[0], row[1]
                tip = self._tips.get(branch)
                if tip is None:
                    tip = self._durable_head(branch)
                if seq != tip[0] + 1 or row[4] != tip[1]:
                    raise BranchConflict(
                        f"branch {branch} moved: this handle expected head {seq - 1} but the journal's "
                        f"head is {tip[0]} (another handle appended); take a fresh handle with "
                        f"journal.branch({branch}) and decide again",
                        branch=branch, expected=seq - 1, actual=tip[0])
                self._pending.setdefault(branch, []).append((row, shape))
                self._tips[branch] = (seq, row[3])
                self._npending += 1
                if self._npending >= LAZY_BUFFER:
                    self.flush()
            return
        if self._npending:
            self.flush()
        self._db().append(row, shape)

    def _now(self) -> int:
        """Unix ms for an event's recorded time: the system clock, or the one given to open()."""
        if self._clock is None:
            return now_ms()
        value = self._clock()
        if isinstance(value, datetime):
            if value.tzinfo is None:
                value = value.replace(tzinfo=timezone.utc)
            return int(value.timestamp() * 1000)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise InvalidValue(f"the clock given to Journal.open returned {value!r}; it must return unix "
                               "milliseconds or a datetime")
        return int(value)

    def _durable_head(self, branch: int) -> tuple[int, bytes]:
        head = self._db().head(branch)
        if head is not None:
            return head
        row = self._row(branch)
        return row[3], (self.hash_at(row[2], row[3]) if row[2] is not None else ev.ZERO_HASH)

    def flush(self) -> None:
        """Write buffered ("lazy") events now.

        A branch's buffer is written whole or not at all. When one cannot be written (another
        writer appended first, a full disk...), the error says how many buffered events were
        lost, and every handle of that branch is stale from then on (``BranchConflict``): a
        fresh handle starts at the branch's durable head, and nothing is ever written past a gap.
        """
        if not self._npending:
            return
        with self._lock:
            if not self._npending:
                return
            pending, self._pending, self._npending = self._pending, {}, 0
            self._tips = {}
            lost: dict[int, int] = {}
            first_error: BaseException | None = None
            for branch_id, rows in pending.items():
                if first_error is not None and not isinstance(first_error, WorkbenchError):
                    lost[branch_id] = len(rows)  # interrupted: the rest is not tried
                    continue
                try:
                    self._db().append_many(rows)
                except BaseException as e:
                    lost[branch_id] = len(rows)
                    first_error = first_error or e
            if first_error is None:
                return
            for branch_id in lost:  # handles that buffered these events are stale for good
                self._refused[branch_id] = self._refused.get(branch_id, 0) + 1
        if not isinstance(first_error, WorkbenchError):
            raise first_error
        n = sum(lost.values())
        where = ", ".join(f"branch {b}: {k}" for b, k in sorted(lost.items()))
        raise type(first_error)(
            f"{n} buffered event(s) were not written ({where}): {first_error.message} Handles of "
            "these branches are stale: take a fresh one with journal.branch(id) (it starts at the "
            "last durable event) and redo what was lost",
            **{**first_error.fields, "lost": n, "lost_by_branch": lost})

    # -- branches -------------------------------------------------------------------------

    def _row(self, branch_id: int) -> BranchRow:
        row = self._rows.get(branch_id)
        if row is None:
            row = self._db().branch_row(branch_id)
            if row is None:
                raise NotFound(
                    f"there is no branch {branch_id} in {self.path}; list them with "
                    "journal.branches() or `lithify branches`",
                    branch=branch_id,
                )
            self._rows[branch_id] = row
        return row

    def segments(self, branch_id: int) -> list[Segment]:
        """The resolved history of a branch as (branch, first_seq, last_seq) pieces, root first."""
        segs = self._segments.get(branch_id)
        if segs is None:
            segs = []
            row = self._row(branch_id)
            last: int | None = None
            while True:
                bid, _, parent, fork_seq = row[0], row[1], row[2], row[3]
                segs.append((bid, 0 if parent is None else fork_seq + 1, last))
                if parent is None:
                    break
                # An ancestor is visible only up to the lowest fork point below it.
                last = fork_seq if last is None else min(last, fork_seq)
                row = self._row(parent)
            segs.reverse()
            self._segments[branch_id] = segs
        return segs

    def _resolve(self, ref: int | str | Branch) -> int:
        if isinstance(ref, Branch):
            return ref.id
        if isinstance(ref, bool) or not isinstance(ref, (int, str)):
            raise InvalidValue(f"a branch is named by its id (int) or name (str), not {ref!r}")
        if isinstance(ref, int):
            return self._row(ref)[0]
        row = self._db().branch_by_name(ref)
        if row is None:
            if ref.isdigit():
                return self._row(int(ref))[0]
            raise NotFound(
                f"there is no branch named {ref!r} in {self.path}; list them with "
                "journal.branches() or `lithify branches`",
                name=ref,
            )
        self._rows[row[0]] = row
        return row[0]

    def branch(self, ref: int | str) -> Branch:
        """A fresh handle on a branch, by id or name, at the branch's current head."""
        self.flush()
        return Branch(self, self._row(self._resolve(ref)))

    def root(self) -> Branch:
        """Branch 0, named "main", created with the journal."""
        return self.branch(0)

    def hash_at(self, branch_id: int, seq: int) -> bytes:
        """The hash of the event at seq in a branch's resolved history (zeros at seq 0)."""
        if seq == 0:
            return ev.ZERO_HASH
        row = self._db().event_at(*self._owner(branch_id, seq))
        if row is None:
            raise NotFound(f"branch {branch_id} has no event at seq {seq}", branch=branch_id, seq=seq)
        return row[4]

    def _info(self, row: BranchRow, heads: Mapping[int, tuple[int, bytes]]) -> ev.BranchInfo:
        bid, name, parent, fork_seq, params, created, sweep = row
        if bid in heads:
            head, h = heads[bid]
        else:
            head, h = fork_seq, (self.hash_at(parent, fork_seq) if parent is not None else ev.ZERO_HASH)
        return ev.BranchInfo(bid, name, parent, fork_seq, head, h.hex(), ev.loads(params), created, sweep)

    def info(self, ref: int | str) -> ev.BranchInfo:
        """The BranchInfo of one branch, with its current head."""
        self.flush()
        row = self._row(self._resolve(ref))
        head = self._db().head(row[0])
        return self._info(row, {row[0]: head} if head else {})

    def branches(self) -> list[ev.BranchInfo]:
        """Every branch with its current head, by id."""
        self.flush()
        db = self._db()
        rows = db.branch_rows()
        for r in rows:
            self._rows.setdefault(r[0], r)
        heads = db.heads()
        return [self._info(r, heads) for r in rows]

    def children(self, ref: int | str) -> list[ev.BranchInfo]:
        """The direct forks of a branch, by id."""
        self.flush()
        bid = self._resolve(ref)
        db = self._db()
        rows = db.branch_rows(parent=bid)
        heads = db.heads() if rows else {}
        return [self._info(r, heads) for r in rows]

    def _fork_rows(
        self,
        base: Branch,
        at: int,
        specs: Sequence[tuple[str | None, Mapping[str, Any] | None]],
        sweep: int | None = None,
    ) -> list[Branch]:
        base._check_seq(at, "fork at")
        rows = []
        for name, params in specs:
            if name is not None and (ev.check_text(name, "a branch name").isdigit()):
                raise InvalidValue(f"a branch name is a non-empty, non-numeric str, not {name!r}")
            p = {} if params is None else params
            if not isinstance(p, Mapping):
                raise InvalidValue(f"params must be a dict of JSON-safe values, not {type(p).__name__}")
            rows.append((name, base.id, at, ev.canonical(dict(p), "params"), sweep))
        self.flush()
        ids = self._db().insert_branches(rows)
        at_hash = base._hash_at(at)
        out = []
        for bid, (name, parent, fork_seq, params, sw) in zip(ids, rows):
            row: BranchRow = (bid, name, parent, fork_seq, params, 0, sw)
            self._rows[bid] = row
            out.append(Branch(self, row, head=(fork_seq, at_hash)))
        return out

    def sweep(
        self, base: Branch | int | str, at: int, params: Iterable[Mapping[str, Any]],
        spec: Mapping[str, Any] | None = None,
    ) -> list[Branch]:
        """Fork ``base`` at ``at`` once per parameter set (rows only) and record the sweep."""
        b = base if isinstance(base, Branch) else self.branch(base)
        plist = [dict(p) for p in params]
        if not plist:
            raise InvalidValue("a sweep needs at least one parameter set")
        b._check_seq(at, "sweep at")
        doc = {"params": plist, **(dict(spec) if spec else {})}
        text = ev.canonical(doc, "sweep")
        with self._db().atomic():
            sweep_id = self._db().insert_sweep(b.id, at, text)
            return self._fork_rows(b, at, [(None, p) for p in plist], sweep=sweep_id)

    def sweeps(self) -> list[SweepInfo]:
        """Every recorded sweep with the ids of its forks."""
        self.flush()
        by_sweep: dict[int, list[int]] = {}
        for r in self._db().branch_rows():
            if r[6] is not None:
                by_sweep.setdefault(r[6], []).append(r[0])
        return [
            SweepInfo(i, base, at, ev.loads(spec), created, by_sweep.get(i, []))
            for i, base, at, spec, created in self._db().sweep_rows()
        ]

    def _unknown_outcomes(self, branch_id: int) -> list[str]:
        db = self._db()
        announced = db.intents.pending(branch_id)
        if not announced:
            return []
        done = db.committed_keys(branch_id, [kh for _, kh in announced])
        return [key for (_, kh), key in announced.items() if kh not in done]

    def _compact_intents(self, force: bool = False) -> None:
        """Drop resolved lines from the intent log once it has grown large."""
        db = self._db()
        if db.intents.size() < (1 if force else db.intents.COMPACT_BYTES):
            return

        def still_open(announced: dict[tuple[int, bytes], str]) -> dict[tuple[int, bytes], str]:
            by_branch: dict[int, list[bytes]] = {}
            for b, kh in announced:
                by_branch.setdefault(b, []).append(kh)
            done = {(b, kh) for b, khs in by_branch.items() for kh in db.committed_keys(b, khs)}
            return {k: v for k, v in announced.items() if k not in done}

        db.intents.compact(still_open)

    # -- reading --------------------------------------------------------------------------

    def built(self) -> str:
        """What snapshots written now are built from (see ``built_from``)."""
        gen = deltas.generation()
        if self._built[0] != gen:
            self._built = (gen, built_from(self.state_class))
        return self._built[1]

    def _state_at(self, branch_id: int, seq: int) -> tuple[Any, int]:
        """(state, seq of the snapshot used) as of seq in a branch's resolved history.

        Snapshots built from other delta versions or another state schema are not used: the
        state is rebuilt from the events (each upcast), and such snapshots passed on the way
        are rewritten (unless the journal is read-only)."""
        self._need_state()
        segs = self.segments(branch_id)
        db = self._db()
        cls = self.state_class
        built = self.built()
        snap = db.nearest_snapshot(segs, seq)
        stale: list[tuple[int, int]] = []
        if snap is not None and (snap[5] or "") != built:
            snap = db.nearest_snapshot(segs, seq, built)
            stale = db.stale_snapshots(segs, snap[1] if snap else -1, seq, built) if not self.readonly else []
        if snap is not None:
            base = snap[1]
            state = ev.decode_state(cls, ev.loads(self._sealed(snap)))
        else:
            base = 0
            state = cls() if cls is not None else {}
        todo = sorted(stale, key=lambda bs: bs[1])
        for row in db.events(segs, base + 1, seq, state_only=True):
            while todo and todo[0][1] < row[2]:  # a stale snapshot at an event that is not a delta
                self._resnapshot(todo.pop(0), state, built)
            payload = ev.loads(row[7])
            if row[3] == "compact":
                state = ev.decode_state(cls, payload["state"])
            else:
                state = self._apply(state, payload)
            if todo and todo[0][1] == row[2]:
                self._resnapshot(todo.pop(0), state, built, row[4])
        for left in todo:
            self._resnapshot(left, state, built)
        return state, base

    def _resnapshot(self, at: tuple[int, int], state: Any, built: str, event_hash: bytes | None = None) -> None:
        """Rewrite a stale snapshot with the state rebuilt now (a failure only leaves it stale)."""
        branch, seq = at
        try:
            text = ev.canonical(ev.encode_state(state), "state")
            h = event_hash if event_hash is not None else self.hash_at(branch, seq)
            self._db().put_snapshot(branch, seq, text, ev.snapshot_digest(h, text), built, replace=True)
        except WorkbenchError:
            pass

    def rebuild_snapshots(self) -> int:
        """Rebuild every snapshot built from other delta versions or another state schema than
        this process's (what ``state()`` and ``at()`` also do, lazily); returns how many."""
        self._need_state()
        if self.readonly:
            self._db().writable()
        self.flush()
        stale = self._db().all_stale_snapshots(self.built())
        for branch, seq in stale:
            self._state_at(branch, seq)
        return len(stale)

    def _sealed(self, snap: tuple[int, int, str, bytes, bytes | None, str | None]) -> str:
        """A snapshot's state text, after checking its seal (a changed byte raises)."""
        branch, seq, text, digest, at_hash, _ = snap
        if ev.snapshot_digest(ev.ZERO_HASH if seq == 0 else (at_hash or b""), text) != digest:
            raise IntegrityError(
                f"the snapshot of branch {branch} at seq {seq} in {self.path} does not match its seal "
                "(its state was changed after it was written); run `lithify verify`, and restore the "
                "journal from a copy", branch=branch, seq=seq)
        return text

    def _initial(self) -> Any:
        self._need_state()
        snap = self._db().nearest_snapshot([(0, 0, 0)], 0, self.built())
        if snap is not None:
            return ev.decode_state(self.state_class, ev.loads(self._sealed(snap)))
        return self.state_class() if self.state_class is not None else {}

    def _valid_at(self, branch_id: int, head: int, when: int, known: int | None = None) -> Any:
        """The state built from the deltas whose world time is at or before ``when`` (recorded by
        ``known``), applied in world order."""
        state = self._initial()
        for _, kind, payload, _ in self._db().world_events(self.segments(branch_id), head, when, known):
            doc = ev.loads(payload)
            state = ev.decode_state(self.state_class, doc["state"]) if kind == "compact" else self._apply(state, doc)
        return state

    def _apply(self, state: Any, delta: Any) -> Any:
        if not self._state_known:
            self._need_state()
        if self.state_class is None:
            return ev.merge_patch(state, delta)
        out = state.apply(deltas.decode(delta))
        return state if out is None else out

    def _applier(self) -> Callable[[Any, Any], Any]:
        """``_apply`` with its checks hoisted, for applying many deltas in a row."""
        self._need_state()
        if self.state_class is None or deltas.any_registered():
            return self._apply

        def apply(state: Any, delta: Any) -> Any:
            out = state.apply(delta)
            return state if out is None else out

        return apply

    def resolve(self, ref: str, default_branch: int | str = 0) -> tuple[int, int]:
        """(branch, seq) a ref names: head, head~N, BRANCH, BRANCH@SEQ, LABEL or a hash prefix."""
        from .refs import resolve

        self.flush()
        return resolve(self, ref, default_branch)

    def record(self, ref: str | tuple[int, int]) -> ev.Record:
        """The event a ref names (resolved through the branch's ancestors)."""
        branch, seq = ref if isinstance(ref, tuple) else self.resolve(ref)
        if seq == 0:
            raise NotFound(f"seq 0 is the initial state, not an event (branch {branch})")
        row = self._db().event_at(*self._owner(branch, seq))
        if row is None:
            raise NotFound(f"branch {branch} has no event at seq {seq}")
        return record_of(row)

    def receipt(self, ref: str | tuple[int, int]) -> dict[str, Any]:
        """The receipt journaled with the effect a ref names: what the model saw for that call."""
        rec = self.record(ref)
        if rec.kind != "effect" or "receipt" not in rec.payload:
            raise NotFound(f"event {rec.branch}@{rec.seq} ({rec.kind}) carries no receipt; receipts are "
                           "journaled with effects run inside `with branch.receipt(r):`")
        receipt = dict(rec.payload["receipt"])
        row = self._db().provenance(rec.branch, rec.seq)
        if row is not None and row[7] is not None:
            # kept beside the event rather than in it: a duration would make identical histories
            # hash differently
            receipt["projection_ms"] = row[7]
        return {"branch": rec.branch, "seq": rec.seq, "key": rec.payload.get("key"), "receipt": receipt}

    def state(self, ref: str | tuple[int, int]) -> Any:
        """The state at any ref (``main@40``, ``head~3``, a label, a hash prefix...)."""
        branch, seq = ref if isinstance(ref, tuple) else self.resolve(ref)
        return self.branch(branch).at(seq)

    def diff(self, ref_a: str | tuple[int, int], ref_b: str | tuple[int, int]) -> list[Any]:
        """Changes between the states at two refs, on the same branch or across branches."""
        from .diff import diff

        return diff(self.state(ref_a), self.state(ref_b))

    def provenance(self, ref: str | tuple[int, int], path: str | None = None) -> dict[str, Any]:
        """Who wrote the event at ``ref`` and, with ``path`` (e.g. ``notes[3]``), the chain of
        events that produced that value of the state: each event that changed it, and the
        effects whose results it carries."""
        from .diff import iter_diff

        branch, seq = ref if isinstance(ref, tuple) else self.resolve(ref)
        out: dict[str, Any] = {"branch": branch, "seq": seq}
        if seq > 0:
            out["event"] = self._event_provenance(self.record((branch, seq)))
        if path is None:
            return out
        chain: list[dict[str, Any]] = []
        b = self.branch(branch)
        effects: list[ev.Record] = []
        prev = b.at(0)
        for rec in b.history(1, seq):
            if rec.kind == "effect":
                effects.append(rec)
                continue
            if rec.kind not in ("delta", "compact"):
                continue
            now = b.at(rec.seq)
            touched = [c for c in iter_diff(prev, now) if c.path == path or c.path.startswith(path + ".")
                       or c.path.startswith(path + "[") or path.startswith(c.path + "[") or path.startswith(c.path + ".")]
            if touched:
                value = json.dumps(touched[0].after, default=str)
                sources = [self._event_provenance(e) for e in effects
                           if json.dumps(e.payload.get("result"), default=str) in value
                           or (isinstance(e.payload.get("result"), str) and e.payload["result"] in value)]
                chain.append({**self._event_provenance(rec), "change": touched[0].op, "from_effects": sources[-3:]})
            prev = now
        if not chain:
            raise NotFound(f"no event up to {branch}@{seq} changed {path!r}; check the path (e.g. notes[0])")
        out["path"] = path
        out["chain"] = chain
        return out

    def _event_provenance(self, rec: ev.Record) -> dict[str, Any]:
        row = self._db().provenance(rec.branch, rec.seq)
        doc: dict[str, Any] = {"branch": rec.branch, "seq": rec.seq, "kind": rec.kind, "hash": rec.hash, "ts": rec.ts,
                               "summary": rec.summary(80)}
        if row is not None:
            doc.update({"writer": row[0], "pid": row[1], "source": row[2]})
            if row[6] is not None:
                doc["occurred_at"] = row[6]
            if row[8] is not None:
                doc["id"] = row[8]
            if rec.kind == "effect":
                doc.update({"key": rec.payload.get("key"), "duration_ms": row[4], "attempts": row[5]})
        return doc

    def rekey(self, new_key: str | bytes) -> None:
        """Re-encrypt this (encrypted) journal under ``new_key``; the old key stops working."""
        self.flush()
        self._db().rekey(new_key)

    def vacuum(self) -> tuple[int, int]:
        """Checkpoint, rebuild the file compactly and trim the intent log: (bytes before, after)."""
        self.flush()
        size = (lambda: os.path.getsize(self.path) + (os.path.getsize(self.path + "-wal")
                if os.path.exists(self.path + "-wal") else 0)) if self.path != ":memory:" else (lambda: 0)
        before = size()
        self._compact_intents(force=True)  # first: it writes (the effect index catches up)
        self._db().vacuum()
        return before, size()

    def subscribe(self, name: str) -> Subscription:
        """A durable, named consumer of every event, resuming at its acknowledged position."""
        from .subscriptions import Subscription

        self.flush()
        return Subscription(self, name)

    def lookup_hash(self, prefix: str) -> tuple[int, int]:
        """(branch, seq) of the earliest event whose hash starts with a hex prefix (>= 8)."""
        p = prefix.lower() if isinstance(prefix, str) else ""
        if not (8 <= len(p) <= 64) or any(c not in "0123456789abcdef" for c in p):
            raise InvalidValue(
                f"{prefix!r} is not a hash prefix: give 8 to 64 hex characters", prefix=prefix
            )
        self.flush()
        lo = bytes.fromhex((p + "0" * 64)[:64])
        top = int(p, 16) + 1
        hi = None if top >= 16 ** len(p) else bytes.fromhex((f"{top:0{len(p)}x}" + "0" * 64)[:64])
        rows = self._db().by_hash_prefix(lo, hi)
        hashes = list(dict.fromkeys(bytes(r[0]) for r in rows))
        if not hashes:
            raise NotFound(f"no event hash starts with {p}", prefix=p)
        if len(hashes) > 1:
            raise Conflict(
                f"the prefix {p} is ambiguous; it matches {', '.join(h.hex()[:16] for h in hashes[:8])}"
                "; give more characters",
                prefix=p,
                candidates=[h.hex() for h in hashes],
            )
        events = list(dict.fromkeys((r[1], r[2]) for r in rows))
        if len(events) > 1:
            # Identical histories have identical hashes: two forks that appended the same event
            # share its hash, and a hash alone cannot say which one is meant.
            where = ", ".join(f"{b}@{q}" for b, q in events[:8])
            raise Conflict(f"the hash {p} names {len(events)} events ({where}): forks that appended the "
                           "same event share its hash; write BRANCH@SEQ", prefix=p,
                           candidates=[f"{b}@{q}" for b, q in events])
        return rows[0][1], rows[0][2]

    def tail(self, cursor: int = 0, limit: int | None = None) -> tuple[list[ev.Record], int]:
        """Events committed after a global position, and the cursor to pass next time."""
        if not isinstance(cursor, int) or cursor < 0:
            raise InvalidValue(f"cursor must be an int >= 0, not {cursor!r}")
        self.flush()
        rows = self._db().tail(cursor, limit)
        return [record_of(r) for r in rows], (rows[-1][0] if rows else cursor)

    def matrix(self, **options: Any) -> pl.DataFrame:
        """Observations joined to each branch's merged params (see workbench.matrix)."""
        from .matrix import build_matrix

        return build_matrix(self, **options)

    # -- integrity ------------------------------------------------------------------------

    def verify(self, expect: Mapping[int | str, str] | None = None) -> VerifyReport:
        """Recompute every hash, chain link and snapshot seal, and let SQLite check its pages;
        report the first bad seq per branch, and every branch's head hash.

        ``expect`` maps branches (id or name) to a head hash recorded outside the journal (a
        hex prefix of 8+ characters): each must still be in that branch's history, which proves
        the history up to it was not rewritten, something the journal cannot prove about itself.
        """
        self.flush()
        anchors = self._anchors(expect)
        db = self._db()
        problems: list[tuple[int, int, str]] = []
        heads: list[tuple[int, int, str]] = []
        found: list[tuple[int, int, str]] = []
        n_events = 0
        rows: list[BranchRow] = []
        snaps: list[tuple[int, int, str, bytes]] = []
        try:
            rows = db.branch_rows()
            for r in rows:
                self._rows.setdefault(r[0], r)
            snaps = db.snapshots()
            # Keep only the hashes something else chains to: fork points and snapshot seqs.
            needed = {self._owner(r[2], r[3]) for r in rows if r[2] is not None and r[3] > 0}
            needed.update((b, s) for b, s, _, _ in snaps)
            hashes: dict[tuple[int, int], bytes] = {}
            prefixes = {p for _, p in anchors}
            for bid, _, parent, fork_seq, _, _, _ in rows:
                if parent is None or fork_seq == 0:
                    prev: bytes | None = ev.ZERO_HASH
                else:
                    prev = hashes.get(self._owner(parent, fork_seq))
                expect_seq = fork_seq + 1
                for _, _, seq, kind, h, ph, _, payload, kh, metric, value in db.own_events(bid):
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
                        problems.append((bid, seq, what))
                        break
                    if (bid, seq) in needed:
                        hashes[(bid, seq)] = h
                    if prefixes:
                        hx = h.hex()
                        found.extend((bid, seq, hx) for p in prefixes if hx.startswith(p))
                    prev = h
                    expect_seq = seq + 1
            for bid, seq, state, digest in snaps:
                at = ev.ZERO_HASH if seq == 0 else hashes.get((bid, seq))
                if at is None or ev.snapshot_digest(at, state) != digest:
                    problems.append((bid, seq, "snapshot does not match its seal (state changed)"))
            for r in rows:
                head = db.head(r[0])
                if head is None:
                    seq, h = r[3], (ev.ZERO_HASH if r[2] is None else self.hash_at(r[2], r[3]))
                else:
                    seq, h = head
                heads.append((r[0], seq, h.hex()))
            for what in db.quick_check():
                problems.append((-1, 0, f"damaged: SQLite's quick_check says {what}"))
        except Corrupt as e:
            problems.append((-1, 0, f"damaged: {e}"))
        anchored = []
        for bid, prefix in anchors:
            head_seq = next((s for b, s, _ in heads if b == bid), None)
            hit = next(((b, s, h) for b, s, h in found if h.startswith(prefix) and head_seq is not None
                        and s <= head_seq and self._owner(bid, s) == (b, s)), None)
            if hit is None:
                problems.append((bid, head_seq or 0, f"expected hash {prefix} is not in branch {bid}'s "
                                 "history: it was rewritten, or this is another journal"))
            else:
                anchored.append((bid, hit[1], hit[2]))
        problems.sort()
        return VerifyReport(not problems, problems, n_events, len(rows), len(snaps), heads, anchored)

    def _anchors(self, expect: Mapping[int | str, str] | None) -> list[tuple[int, str]]:
        if expect is None:
            return []
        if not isinstance(expect, Mapping):
            raise InvalidValue("expect maps branches (id or name) to expected head hashes")
        out = []
        for ref, h in expect.items():
            p = h.lower() if isinstance(h, str) else ""
            if not (8 <= len(p) <= 64) or any(c not in "0123456789abcdef" for c in p):
                raise InvalidValue(f"expected hash {h!r} for branch {ref!r} is not 8 to 64 hex characters")
            out.append((self._resolve(ref), p))
        return out

    def _owner(self, branch: int, seq: int) -> tuple[int, int]:
        """(branch that wrote seq, seq) in a branch's resolved history."""
        for bid, first, last in reversed(self.segments(branch)):
            if first <= seq and (last is None or seq <= last):
                return bid, seq
        return branch, seq


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
