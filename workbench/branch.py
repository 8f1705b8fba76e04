"""``Branch``: a handle for appending to and reading one branch of a journal.

A handle remembers the head it last wrote or read. Appends go to ``head + 1``; if another
writer advanced the branch meanwhile, the unique ``(branch, seq)`` key refuses the write and
``BranchConflict`` says to take a fresh handle.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from . import deltas, replay
from . import events as ev
from .annotations import Annotations, notes_past
from .diff import diff as diff_states
from .effects import Effects
from .errors import BranchConflict, Conflict, InvalidValue, WorkbenchError
from .refs import HEX_REF
from .storage import BranchRow

if TYPE_CHECKING:
    from .port import JournalPort

_UNSET: Any = object()
BATCH_CHUNK = 512  # apply_many prepares this many deltas while the chunk before is inserted
# An automatic snapshot comes after ``snapshot_every`` events, and once the deltas since the
# last snapshot add up to at least 1/SNAPSHOT_SPACING of its size. A state that grows with its
# deltas (a memory) would otherwise store itself whole every ``snapshot_every`` events: bytes
# quadratic in its history (10^5 memory events: 13 GB on disk, and growing, when stopped). So
# snapshots stay within about SNAPSHOT_SPACING times the bytes of the deltas, and a replay
# from the nearest one applies at most 1/SNAPSHOT_SPACING of its size in deltas (or
# ``snapshot_every`` events). A small state is snapshotted every ``snapshot_every`` events.
SNAPSHOT_SPACING = 2


def _snapshot_due(events_since: int, chars_since: int, snap_chars: int, every: int) -> bool:
    """Whether an automatic snapshot is due (the rule above), ``events_since`` and
    ``chars_since`` counting the deltas after the last snapshot of ``snap_chars`` characters."""
    return events_since >= every and chars_since * SNAPSHOT_SPACING >= snap_chars


# (occurred_at given, id given) -> the storage shape of a delta event
_DELTA_SHAPES = {
    (False, False): "plain",
    (True, False): "dated",
    (False, True): "identified",
    (True, True): "dated_identified",
}


class Branch(Effects, Annotations):
    """One branch of a journal: apply deltas, run journaled effects, observe, note, attach,
    fork, read."""

    def __init__(
        self, journal: JournalPort, row: BranchRow, head: tuple[int, bytes] | None = None
    ) -> None:
        self._j = journal
        self.id: int = row.id
        self.name: str | None = row.name
        self.parent: int | None = row.parent
        self.fork_seq: int = row.fork_seq
        self._segments = journal.history.segments(self.id)
        # a fork run replaying its recorded events starts where the run started (see replay)
        self._replay = replay.cursor_for(journal, self.id) if head is None else None
        if self._replay is not None:
            head = (self._replay.seq, self._replay.hash)
        elif head is None:
            head = journal.durable_head(self.id)
        self._head, self._head_hash = head
        self._state: Any = _UNSET
        self._snap_seq = 0
        self._snap_bytes = 0  # the size of the snapshot at _snap_seq (0: none)
        self._since_bytes = 0  # bytes of deltas applied after it
        self._receipt: Any = None
        self._receipt_ms: float | None = None
        self._receipt_of: Any = None  # the last receipt encoded, and its canonical text
        self._receipt_text = ""
        self._attempt = 1
        self._announcement = ""  # the intent-log id of the effect this handle is running
        self._started = 0.0
        # Effects in this handle's history, key hash -> (branch, seq); see _lookup.
        self._fx: dict[bytes, tuple[int, int]] | None = None
        self._fx_indexed = 0  # effects up to this global position are in effect_index
        self._expecting: int | str | None = None  # expect= of the effect this handle is running
        self._refused = journal.refusals(self.id)  # see Journal.flush

    def __repr__(self) -> str:
        name = f" {self.name!r}" if self.name else ""
        return f"<Branch {self.id}{name} head={self._head}>"

    # -- identity -------------------------------------------------------------------------

    @property
    def journal(self) -> JournalPort:
        """The journal this branch belongs to."""
        return self._j

    @property
    def head(self) -> int:
        """The seq this handle last wrote or read (fork_seq for a fork with no events)."""
        return self._head

    @property
    def head_hash(self) -> str:
        """Hex hash of the head event: names the whole history up to it."""
        return self._head_hash.hex()

    @property
    def info(self) -> ev.BranchInfo:
        """This branch's row with the journal's current head."""
        return self._j.info(self.id)

    @property
    def params(self) -> dict[str, Any]:
        """This branch's own params (the matrix merges ancestors' params under them)."""
        params: dict[str, Any] = ev.loads(self._j.history.row(self.id).params)
        return params

    # -- writing --------------------------------------------------------------------------

    def _append(
        self,
        kind: str,
        payload: str,
        buffered: bool,
        shape: str = "plain",
        extra: tuple[Any, ...] = (),
    ) -> int:
        """Chain and write one event; ``extra`` holds the columns of its storage shape. Every
        single event passes here: the journal's size limit is checked once, for all kinds."""
        ev.check_size(payload, self._j.max_event_bytes, f"this {kind} event")
        j = self._j
        if j.refusals(self.id) != self._refused:
            raise self._stale()
        while True:
            seq = self._head + 1
            parent = self._head_hash
            h = ev.event_hash(parent, kind, payload)
            try:
                j.write((self.id, seq, kind, h, parent, j.now(), payload, *extra), shape, buffered)
                break
            except BranchConflict:  # written past by notes alone (a person's, from the Lab)?
                past = notes_past(j.storage, self.id, self._head, self._head_hash)
                if past is None:
                    raise
                self._head, self._head_hash = past  # they move no state: write after them
        self._head, self._head_hash = seq, h
        return seq

    def _ready(self) -> JournalPort:
        """The journal with buffered events written, refusing a handle whose buffer was refused."""
        j = self._j
        j.flush(self.id)
        if j.refusals(self.id) != self._refused:
            raise self._stale()
        return j

    # -- replay (see workbench.replay) ----------------------------------------------------

    def _replaying(
        self, expect: int | str | None = None, note: bool = False
    ) -> replay.Cursor | None:
        """The replay cursor while recorded events remain (this handle moved to its point),
        else None (and this handle writes as usual from then on). ``expect`` is checked
        against the replayed point, as the first run checked it against its head. A write that
        is not a ``note`` steps past recorded notes: one the Lab added to a failed fork's
        branch is no write of the fork function's (a note the function writes is matched with
        the next recorded note, whatever its text: a time in it may differ)."""
        cursor = self._replay
        if cursor is None:
            return None
        with cursor.lock:
            while not note and cursor.replaying and cursor.peek().kind == "note":
                cursor.take()
            if (cursor.seq, cursor.hash) != (self._head, self._head_hash):
                self._head, self._head_hash = cursor.seq, cursor.hash
                self._state, self._fx = _UNSET, None
            if not cursor.replaying:
                self._replay = None
                return None
        if expect is not None:
            want = self.fork_seq if expect == "new" else expect
            if want != self._head:
                raise BranchConflict(
                    f"branch {self.id}: expected head {want}, but the head is {self._head}; "
                    "nothing was written",
                    branch=self.id,
                    expected=want,
                    actual=self._head,
                )
        return cursor

    def _replayed(
        self, cursor: replay.Cursor, kind: str, text: str, doc: Mapping[str, Any] | None = None
    ) -> int:
        """Match one write with the next recorded event and step past it (nothing is written);
        its seq. A delta or compaction moves the state to the recorded one."""
        with cursor.lock:
            event = cursor.peek()
            own = cursor.own(event)
            match = event.kind == kind
            if match and own and kind == "delta":
                match = event.payload == text
            elif match and own and kind == "observe" and doc is not None:
                stored = ev.loads(event.payload)
                match = stored.get("name") == doc["name"] and stored.get("step") == doc.get("step")
            elif match and own and kind == "attach":  # the same name (its bytes may differ)
                match = ev.loads(event.payload).get("name") == ev.loads(text).get("name")
            if not match:
                raise cursor.diverged(event, replay.describe(kind, text))
            cursor.take()
        if kind == "delta":
            state = self._state if self._state is not _UNSET else self._live()
            self._state = self._j.history.apply(state, ev.loads(event.payload))
        elif kind == "compact":
            stored = ev.loads(event.payload)
            self._state = self._j.history.decode(stored["state"])
        self._head, self._head_hash = event.seq, event.hash
        return event.seq

    def _stale(self) -> BranchConflict:
        lost = self._j.lost(self.id)
        why = (
            f"{lost[0]} event(s) buffered on it were not written ({lost[1]})"
            if lost
            else "events buffered on it were not written"
        )
        return BranchConflict(
            f"branch {self.id}: {why}, so this handle's head is gone; take a fresh handle with "
            f"journal.branch({self.id}) (it starts at the last durable event) and redo what was "
            f"lost",
            branch=self.id,
            lost=lost[0] if lost else None,
        )

    def _expected(self, expect: int | str | None, before_side_effect: bool = False) -> bool:
        """Check an explicit expected head (``expect=``) before appending: the branch's stored
        head must be ``expect`` ("new": no events of its own yet). Returns whether one was given
        (such appends are written at once, so the database checks them as they land). An append
        from a handle at ``expect`` needs no query: the database refuses it if the head moved;
        before a side effect (an effect's ``fn``) the stored head is asked all the same."""
        if expect is None:
            return False
        if expect == "new":
            want = self.fork_seq
        elif isinstance(expect, int) and not isinstance(expect, bool) and expect >= 0:
            want = expect
        else:
            raise InvalidValue(f"expect= takes a seq (int >= 0), 'new' or None, not {expect!r}")
        j = self._ready()
        if self._head != want or before_side_effect:
            stored = j.durable_head(self.id)[0]
            if stored != want:
                raise BranchConflict(
                    f"branch {self.id}: expected head {want}, but the head is {stored}; nothing "
                    f"was written",
                    branch=self.id,
                    expected=want,
                    actual=stored,
                )
            self._sync()  # this handle was behind the head the caller expects
        return True

    def _known_id(self, event_id: str, kind: str, text: str) -> int | None:
        """The seq of the event a caller id already names (an idempotent retry), else None;
        Conflict when the id names another event."""
        found = self._j.storage.event_by_id(ev.check_text(event_id, "an event id"))
        if found is None:
            return None
        if (
            found.kind == kind
            and found.payload == text
            and self._in_history(found.branch, found.seq)
        ):
            return found.seq
        raise Conflict(
            f"event id {event_id!r} is already used by {found.branch}@{found.seq} ({found.kind}) "
            f"with another payload or on another branch; ids are unique per journal",
            event_id=event_id,
            branch=found.branch,
            seq=found.seq,
        )

    def apply(
        self,
        delta: Any,
        occurred_at: int | datetime | None = None,
        *,
        expect: int | str | None = None,
        id: str | None = None,
    ) -> int:
        """Apply a JSON-safe delta to the state and journal it; returns the new event's seq.

        ``occurred_at`` (unix ms or a datetime) is when it happened in the world, if not now;
        ``valid_at`` queries use it. Registered dataclass deltas are stored tagged with their
        kind and version (see workbench.deltas). ``expect``: append only if the branch's head
        is this seq ("new": the branch has no events of its own), else ``BranchConflict``.
        ``id``: a caller's id for the event, unique per journal; applying the same id and delta
        again returns the existing seq (an importer can replay its log twice)."""
        text = ev.canonical(deltas.encode(delta), "delta")
        j = self._j
        ev.check_size(text, j.max_event_bytes, "delta")
        when = ev.unix_ms(occurred_at, "occurred_at") if occurred_at is not None else None
        if (cursor := self._replaying(expect)) is not None:
            return self._replayed(cursor, "delta", text)
        if id is not None:
            seq = self._known_id(id, "delta", text)
            if seq is not None:
                return seq
        immediate = False
        shape = "plain"
        extra: tuple[Any, ...] = ()
        if when is not None or id is not None or expect is not None:
            immediate = self._expected(expect) or id is not None
            shape = _DELTA_SHAPES[(when is not None, id is not None)]
            extra = tuple(v for v in (when, id) if v is not None)
        state = self._state if self._state is not _UNSET else self._live()
        try:
            # Apply the decoded delta, exactly what a replay will apply.
            self._state = j.history.apply(state, ev.loads(text))
            seq = self._append("delta", text, not immediate, shape, extra)
        except BaseException:
            self._state = _UNSET  # rebuilt from the journal on next use
            raise
        self._since_bytes += len(text)
        since = seq - self._snap_seq
        if _snapshot_due(since, self._since_bytes, self._snap_bytes, j.snapshot_every):
            self._try_snapshot()
        return seq

    def apply_many(self, items: Iterable[Any], *, expect: int | str | None = None) -> int:
        """Apply several deltas as consecutive events written in one transaction; returns the
        last seq (the head when there are none). ``expect`` as for ``apply``.

        All or nothing: an unsafe value or a failing ``State.apply`` anywhere in the batch
        writes none of it (and the error names ``deltas[i]``). Snapshots fall inside the batch
        as they would with ``apply``. The fast way to import a history: deltas are encoded,
        hashed and applied while the ones before them are being inserted."""
        values = deltas.encode_many(list(items))
        if self._replaying(expect) is not None:
            while values and self._replaying() is not None:  # the recorded ones are read back
                self.apply(values.pop(0))
            expect = None
        self._expected(expect)
        if not values:
            return self._head
        j = self._ready()
        first = self._head + 1
        state = self._state if self._state is not _UNSET else self._live()
        snapshots: list[tuple[int, str, bytes]] = []
        done = {
            "state": state,
            "snap": (self._snap_seq, self._snap_bytes, self._since_bytes),
            "hash": self._head_hash,
        }

        def chunks() -> Iterator[tuple[list[bytes], list[str]]]:
            apply, loads, every = j.history.applier(), ev.loads, j.snapshot_every
            state, h = done["state"], done["hash"]
            snap, snap_bytes, since = done["snap"]
            for lo in range(0, len(values), BATCH_CHUNK):
                part = values[lo : lo + BATCH_CHUNK]
                texts, raw, hashes = ev.chain_payloads(
                    h, "delta", part, "deltas", offset=lo, max_bytes=j.max_event_bytes
                )
                seq = first + lo  # the seq of raw[0]
                for i, data in enumerate(raw):  # snapshots where apply() would take them
                    state = apply(state, loads(data))  # what a replay applies
                    since += len(texts[i])  # characters, as apply and a replay count them
                    if _snapshot_due(seq + i - snap, since, snap_bytes, every):
                        stext = ev.canonical(ev.encode_state(state), "state")
                        snapshots.append((seq + i, stext, ev.snapshot_digest(hashes[i], stext)))
                        snap, snap_bytes, since = seq + i, len(stext), 0
                h = hashes[-1]
                yield hashes, texts
            done.update(state=state, snap=(snap, snap_bytes, since), hash=h)

        try:
            j.storage.append_batch(
                self.id,
                first,
                "delta",
                self._head_hash,
                j.now(),
                chunks(),
                snapshots,
                j.history.built(),
                rows=len(values),
            )
        except BaseException:
            self._state = _UNSET  # rebuilt from the journal on next use
            raise
        self._state = done["state"]
        self._snap_seq, self._snap_bytes, self._since_bytes = done["snap"]
        self._head, self._head_hash = first + len(values) - 1, done["hash"]
        return self._head

    def observe(
        self,
        name: str,
        value: float,
        *,
        step: int | None = None,
        expect: int | str | None = None,
        id: str | None = None,
    ) -> int:
        """Record a measurement (a row of the results matrix); returns its seq. ``step`` says
        where in a run it was taken (learning curves, pruning: see ``sweep.report``);
        ``expect`` and ``id`` as for ``apply``."""
        ev.check_text(name, "an observation name")
        if step is not None and (isinstance(step, bool) or not isinstance(step, int) or step < 0):
            raise InvalidValue(f"step is a whole number >= 0, not {step!r}", name=name)
        ev.check_observed_int(name, value)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise InvalidValue(
                f"observation {name!r} needs a finite number, not {ev.describe(value)}", name=name
            )
        v = float(value)
        doc: dict[str, Any] = {"name": name, "value": v}
        if step is not None:
            doc["step"] = step
        text = ev.canonical(doc, "observation")
        if (cursor := self._replaying(expect)) is not None:
            return self._replayed(cursor, "observe", text, doc)
        if id is not None:
            seq = self._known_id(id, "observe", text)
            if seq is not None:
                return seq
            self._expected(expect)
            return self._append("observe", text, False, "observe_identified", (name, v, id))
        return self._append("observe", text, not self._expected(expect), "observe", (name, v))

    def diff(self, a: int | str, b: int | str | None = None) -> list[Any]:
        """Changes in the state from ``a`` to ``b`` (seqs or refs; default: the head): added,
        modified and removed paths, structurally (see workbench.diff)."""
        a = self._seq(a, "diff from")
        self._check_seq(a, "diff from")
        to = self._head if b is None else self._seq(b, "diff to")
        self._check_seq(to, "diff to")
        return diff_states(self.at(a), self.at(to))

    def rollback(self, to: int | str | tuple[int, int], from_other_branch: bool = False) -> int:
        """Restore the state at ``to`` by appending an event (nothing is removed: the history
        stays readable and the rollback is the newest event); returns its seq.

        ``to`` is a seq of this branch, a ref, or (branch, seq). Restoring another branch's
        state here must be asked for with ``from_other_branch=True``."""
        if isinstance(to, tuple):
            branch, seq = to
        elif isinstance(to, str):
            branch, seq = self._j.resolve(to, default_branch=self.id)
        else:
            branch, seq = self.id, to
        if branch != self.id and not self._in_history(branch, seq) and not from_other_branch:
            raise InvalidValue(
                f"{branch}@{seq} is on branch {branch}, not in branch {self.id}'s history; pass "
                "from_other_branch=True to restore that state here, or fork it instead",
                branch=branch,
                seq=seq,
            )
        source = self._j.branch(branch)
        source._check_seq(seq, "rollback to")
        text = ev.canonical(ev.encode_state(source.at(seq)), "state")
        mark = ev.canonical(
            {"branch": branch, "seq": seq, "hash": self._j.history.hash_at(branch, seq).hex()},
            "rollback",
        )
        return self._replace_state('{"rollback":' + mark + ',"state":' + text + "}", text)

    def _in_history(self, branch: int, seq: int) -> bool:
        return self._j.history.owner(self.id, seq)[0] == branch

    def tag(self, label: str, seq: int | str | None = None) -> int:
        """Name an event (default: the head) so refs can use ``label``; returns its seq."""
        ev.check_text(label, "a label")
        if any(c in label for c in "@~ \t\n") or label == "head":
            raise InvalidValue(
                f"a label is a word without '@', '~' or spaces (and not 'head'), not {label!r}"
            )
        if HEX_REF.match(label):
            raise InvalidValue(
                f"{label!r} looks like a hash prefix; pick a label that is not 8+ hex characters"
            )
        at = self._head if seq is None else self._seq(seq, "tag")
        self._check_seq(at, "tag")
        self._j.flush(self.id)
        self._j.storage.put_tag(label, self.id, at)
        return at

    def unknown_outcomes(self) -> list[str]:
        """Effect keys started on this branch whose result was never committed."""
        return self._j.unknown_outcomes(self.id)

    def compact(self, compactor: Callable[[Branch, Any], Any]) -> int:
        """Replace the state with ``compactor(branch, state)``; returns the compact event's seq.

        The compactor may call ``branch.effect``. ``at(seq - 1)`` stays the state before.
        """
        new = compactor(self, self._live())
        if new is None:
            raise InvalidValue("the compactor returned None; it must return the new state")
        text = ev.canonical(ev.encode_state(new), "state")
        return self._replace_state('{"state":' + text + "}", text)

    def _replace_state(self, payload: str, text: str) -> int:
        """Append a compact event and its snapshot in one transaction (both, or neither)."""
        if (cursor := self._replaying()) is not None:
            return self._replayed(cursor, "compact", payload)
        j = self._j
        j.flush(self.id)
        db = j.storage
        head, head_hash = self._head, self._head_hash
        try:
            with db.atomic():
                seq = self._append("compact", payload, buffered=False)
                db.put_snapshot(
                    self.id, seq, text, ev.snapshot_digest(self._head_hash, text), j.history.built()
                )
        except BaseException as e:
            if self._head == head or not db.landed(self.id, self._head, self._head_hash, e):
                self._head, self._head_hash = head, head_hash  # rolled back: nothing was written
                self._state = _UNSET
                raise
        self._state = j.history.decode(ev.loads(text))
        self._snap_seq, self._snap_bytes, self._since_bytes = seq, len(text), 0
        return seq

    def snapshot(self) -> int:
        """Store the state at the head so ``at`` replays from here; returns the head seq."""
        self._live()
        self._j.flush(self.id)
        self._write_snapshot()
        return self._head

    def _write_snapshot(self) -> None:
        self._j.flush(self.id)
        text = ev.canonical(ev.encode_state(self._state), "state")
        owner, seq = self._j.history.owner(self.id, self._head)
        self._j.storage.put_snapshot(
            owner, seq, text, ev.snapshot_digest(self._head_hash, text), self._j.history.built()
        )
        self._snap_seq, self._snap_bytes, self._since_bytes = seq, len(text), 0

    def _try_snapshot(self) -> None:
        """The automatic snapshot after an append: the event is committed already, so a failed
        snapshot (a full disk, a state too deep to store) must not fail the call; the next
        append tries again. A failed flush of buffered events still raises: they were lost."""
        self._j.flush(self.id)
        try:
            self._write_snapshot()
        except WorkbenchError:
            pass

    # -- reading --------------------------------------------------------------------------

    def _live(self) -> Any:
        if self._state is _UNSET:
            self._j.flush(self.id)  # the state at our head includes what we buffered
            rebuilt = self._j.history.state_at(self.id, self._head)
            self._state, self._snap_seq = rebuilt.state, rebuilt.base
            self._snap_bytes, self._since_bytes = rebuilt.base_bytes, rebuilt.since_bytes
        return self._state

    def state(self) -> Any:
        """The live state at this handle's head (do not mutate it; apply deltas instead)."""
        state = self._live()
        return self._bind(state, self._head, self._head_hash)

    def _bind(self, state: Any, seq: int, event_hash: bytes) -> Any:
        """Tell a state that asks (``bind_source``) which point of which branch it is, so what
        it derives (a memory view's receipts) can name its source."""
        bind = getattr(state, "bind_source", None)
        if callable(bind):
            bind({"branch": self.id, "seq": seq, "head_hash": bytes(event_hash).hex()})
        return state

    def _sync(self) -> None:
        """Catch up with events other writers appended to this branch (a replaying handle
        stays at its replayed point: the events past it are its own run's, still to come)."""
        if self._replaying() is not None:
            return
        self._j.flush(self.id)
        head = self._j.storage.head(self.id)
        if head is not None and head.seq > self._head:
            self._head, self._head_hash = head.seq, head.hash
            self._fx = None
            self._state = _UNSET

    def _seq(self, point: int | str, what: str) -> int:
        """A seq of this branch from a seq or a ref (``head~3``, a label, ``BRANCH@SEQ``...)."""
        if isinstance(point, str):
            branch, seq = self._j.resolve(point, default_branch=self.id)
            if branch != self.id and not self._in_history(branch, seq):
                raise InvalidValue(
                    f"{what} {point!r}: {branch}@{seq} is not in branch {self.id}'s history",
                    ref=point,
                )
            return seq
        return point

    def _check_seq(self, seq: int, what: str) -> None:
        if isinstance(seq, bool) or not isinstance(seq, int):
            raise InvalidValue(f"{what}: seq must be an int, not {seq!r}")
        if seq > self._head:
            self._sync()
        if not 0 <= seq <= self._head:
            raise InvalidValue(
                f"{what} {seq}: branch {self.id} has seqs 0..{self._head}; pick one in that range",
                seq=seq,
                head=self._head,
            )

    def _hash_at(self, seq: int) -> bytes:
        return self._head_hash if seq == self._head else self._j.history.hash_at(self.id, seq)

    def at(self, seq: int | str) -> Any:
        """The state as of event ``seq`` (0 is the initial state; a ref works too), rebuilt
        from the journal."""
        seq = self._seq(seq, "at")
        self._check_seq(seq, "at")
        self._j.flush(self.id)
        state = self._j.history.state_at(self.id, seq)[0]
        return self._bind(state, seq, self._hash_at(seq))

    def as_of(self, when: int | float | datetime) -> Any:
        """The state as it was known at a wall-clock time (unix ms or a datetime): the state
        after the last event committed at or before it."""
        t = ev.unix_ms(when, "as_of")
        self._sync()
        seq = min(self._j.storage.last_seq_at_time(self._segments, t), self._head)
        return self._j.history.state_at(self.id, seq)[0]

    def valid_at(self, when: int | float | datetime) -> Any:
        """The state of the world at a time, as known now: the deltas whose ``occurred_at`` (or,
        without one, commit time) is at or before it, replayed in world order (ties in the order
        they were recorded), so a late-recorded earlier fact never overrides a later one."""
        t = ev.unix_ms(when, "valid_at")
        self._sync()
        return self._j.history.valid_at(self.id, self._head, t)

    def view_at(self, valid: int | float | datetime, known: int | float | datetime) -> Any:
        """What was true at ``valid`` as known at ``known`` (both unix ms or datetimes): the
        deltas recorded by ``known`` whose world time is at or before ``valid``, in world order."""
        t = ev.unix_ms(valid, "valid")
        k = ev.unix_ms(known, "known")
        self._sync()
        return self._j.history.valid_at(self.id, self._head, t, k)

    def history(self, lo: int = 1, hi: int | None = None) -> list[ev.Record]:
        """Events lo..hi (inclusive) of the resolved history, inherited ones included."""
        if hi is None:
            self._sync()
            hi = self._head
        self._check_seq(hi, "history to")
        if isinstance(lo, bool) or not isinstance(lo, int) or lo < 0:
            raise InvalidValue(f"history from: lo must be an int >= 0, not {lo!r}")
        self._j.flush(self.id)
        return [ev.record_of(e) for e in self._j.storage.events(self._segments, lo, hi)]

    # -- forking --------------------------------------------------------------------------

    def fork(self, name: str | None = None, params: Mapping[str, Any] | None = None) -> Branch:
        """A new branch from this handle's head: one row, nothing copied."""
        return self.fork_at(self._head, name, params)

    def fork_at(
        self, seq: int | str, name: str | None = None, params: Mapping[str, Any] | None = None
    ) -> Branch:
        """New branch at event ``seq``; it inherits the prefix's state and effects."""
        forked: Branch = self._j.fork(self, self._seq(seq, "fork at"), [(name, params)])[0]
        return forked
