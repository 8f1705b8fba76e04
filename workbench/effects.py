"""Journaled effects and what a model saw: the part of a ``Branch`` that runs side effects.

``effect(key, fn)`` returns the committed result of ``key`` if this branch's history (its
ancestors' included) holds one; otherwise it announces the call in the intent store, checks
that no other writer moved the branch, runs ``fn``, and commits the result before returning
it, so a killed process resumes without running a committed effect again. A result whose
branch moved while ``fn`` ran is committed after the other writer's events, never dropped.
``render`` builds the context a model would see under a token budget, with a receipt that
``with branch.receipt(r):`` journals beside the effects.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar, cast

from . import events as ev
from .context import CharEstimator, default_renderer, make_receipt, render_parts
from .errors import BranchConflict, Busy, EffectInFlight, StorageError, WorkbenchError

if TYPE_CHECKING:
    from .port import JournalPort
    from .storage import Storage

T = TypeVar("T")
_CHARS = CharEstimator()  # the default estimator (stateless)
_IMMUTABLE = (str, int, float, bool, type(None))
FX_MAP_MAX = 20_000  # effects a handle maps in memory; the rest are found through effect_index
_MOVED_RETRIES = 100  # appends tried for an effect whose branch another writer keeps moving
_quote: Callable[[str], str] = json.encoder.encode_basestring


class Effects:
    """Effects, render and receipts, for ``Branch`` (which owns the attributes below)."""

    id: int
    _j: JournalPort
    _head: int
    _segments: list[tuple[int, int, int | None]]
    _fx: dict[bytes, tuple[int, int]] | None
    _fx_indexed: int
    _expecting: int | str | None
    _attempt: int
    fork_seq: int
    _announcement: str
    _started: float
    _receipt: Any
    _receipt_ms: float | None
    _receipt_of: Any
    _receipt_text: str
    _append: Callable[..., int]
    _replaying: Callable[..., Any]
    _head_hash: bytes
    _ready: Callable[[], JournalPort]
    _expected: Callable[..., bool]
    _check_seq: Callable[[int, str], None]
    _live: Callable[[], Any]
    _hash_at: Callable[[int], bytes]
    at: Callable[[int | str], Any]

    def _lookup(self, key: str, expect: int | str | None = None) -> tuple[bool, Any, bytes]:
        kh = ev.key_hash(ev.check_key(key, self._j.max_key_bytes))
        if (cursor := self._replaying(expect)) is not None:
            return True, self._replay_effect(cursor, key, kh), kh
        self._expected(expect, before_side_effect=True)
        self._expecting = expect
        j = self._ready()
        db = j.storage
        warm = j.warm
        if warm is not None:  # a pool worker: an inherited result is decoded once per worker
            where = (self._fx if self._fx is not None else self._load_fx(db)).get(kh)
            if where is not None and where[0] != self.id:
                payload = warm.result(where, lambda: db.effect_payload(*where), ev.loads)
                return True, payload["result"], kh
        payload, stored = self._find(db, kh)
        if payload is not None:
            return True, ev.loads(payload)["result"], kh
        if db.readonly:
            db.writable()
        fx = self._fx
        if fx is not None and len(fx) >= FX_MAP_MAX:
            # The map is full: move what it holds into the effect index (a write, made before
            # fn runs: when it fails, fn did not run and nothing of this call was written).
            self._fx_indexed = db.catch_up_effect_index()
            fx.clear()
        try:
            compact_intents(db, due=True)
        except WorkbenchError:
            pass  # tried again once the store grows further; a compaction loses nothing
        if stored is None:
            head = db.head(self.id)
            stored = head.seq if head is not None else self.fork_seq
        # Before fn runs, the branch must still be at this handle's head: if another writer
        # appended since, fn's result could not be committed where this handle writes, and a
        # retry would run fn again. A writer that appends after this check is met at the
        # commit (the result is then committed after its events); one that committed this very
        # key after it announced the key before us: it is the holder, or, if it has exited
        # since, an earlier attempt; either way its result is looked for.
        intents = db.intents
        attempt, ann, holder = intents.announce(self.id, kh, key)
        try:
            moved = stored != self._head
            look = moved or holder is not None or attempt > 1
            after = db.find_effect_after(kh, self.id, self._head) if look else None
        except BaseException:
            self._withdraw(kh, ann)
            raise
        if after is not None or holder is not None or stored != self._head:
            self._withdraw(kh, ann)
            if after is not None:  # another writer committed it past our head: its result
                return True, ev.loads(after.payload)["result"], kh
            if holder is not None:
                # Announced first by a process that is still running it, with no result
                # committed yet: running fn here too would run it twice.
                raise EffectInFlight(
                    f"effect {key!r} on branch {self.id} is running now (announced by {holder}, "
                    "still alive) and has not committed a result; fn did not run here; wait for "
                    f"it and read the result with a fresh handle (journal.branch({self.id})), or "
                    "give this call another key",
                    branch=self.id,
                    key=key,
                    holder=holder,
                )
            raise BranchConflict(
                f"branch {self.id} moved: this handle's head is {self._head} but the journal's "
                f"head is {stored} (another writer appended); effect {key!r} did not run fn and "
                f"wrote nothing; take a fresh handle with journal.branch({self.id}) and call "
                "effect again",
                branch=self.id,
                expected=self._head,
                actual=stored,
                key=key,
                ran=False,
            )
        self._attempt, self._announcement = attempt, ann
        self._started = time.perf_counter()
        return False, None, kh

    def _replay_effect(self, cursor: Any, key: str, kh: bytes) -> Any:
        """An effect called while its fork run replays (see ``workbench.replay``): the next
        recorded event when it is this effect (or, inherited, any effect: the leader's result
        stands), else a result already in the history up to the replayed point; ``fn`` never
        runs. Anything else diverges."""
        db = self._j.storage
        with cursor.lock:
            event = cursor.peek()
            doc = ev.loads(event.payload) if event.kind == "effect" else None
            if doc is not None and doc.get("key_hash") == kh.hex():
                cursor.take()
            else:
                found = self._found_before_head(db, kh)
                if found is not None:
                    return ev.loads(found)["result"]
                if doc is None or cursor.own(event):
                    raise cursor.diverged(event, f"effect {key!r}")
                cursor.take()
        self._head, self._head_hash = event.seq, event.hash
        if self._fx is not None:
            self._fx[bytes.fromhex(str(doc["key_hash"]))] = (event.branch, event.seq)
        return doc["result"]

    def _found_before_head(self, db: Any, kh: bytes) -> str | None:
        """The payload of an effect with this key hash at or before this handle's head."""
        fx = self._fx if self._fx is not None else self._load_fx(db)
        where = fx.get(kh)
        if where is not None:
            return str(db.effect_payload(*where))
        if self._fx_indexed:
            hit, _ = db.find_effect_with_head(kh, self._segments, self._fx_indexed, self.id)
            if hit is not None and hit.seq <= self._head:
                return str(hit.payload)
        return None

    def _find(self, db: Any, kh: bytes) -> tuple[str | None, int | None]:
        """(The payload of the newest effect with this key hash in this handle's history, up to
        its head, or past it where the effect index covers another writer's appends; and the
        branch's stored head when the database was asked anyway, else None.)"""
        fx = self._fx
        if fx is None:
            fx = self._load_fx(db)
        where = fx.get(kh)
        if where is not None:
            return db.effect_payload(*where), None
        if not self._fx_indexed:
            return None, None  # the map holds the whole history: a miss needs no query
        hit, head = db.find_effect_with_head(kh, self._segments, self._fx_indexed, self.id)
        if hit is not None:
            return hit.payload, None
        return None, head if head is not None else self.fork_seq

    def _load_fx(self, db: Any) -> dict[bytes, tuple[int, int]]:
        # A short history is mapped whole (a read of at most FX_MAP_MAX events); a long one is
        # left to the effect index, caught up now, and the map holds what the index lacks:
        # nothing for a writer, the effects after the index's last catch-up for a read-only
        # open or when the index cannot be written (a full disk must not stop a replay).
        if self._head <= FX_MAP_MAX:
            self._fx_indexed = 0
            warm = self._j.warm
            segs = self._segments
            if warm is not None and len(segs) > 1 and self._head >= self.fork_seq:
                # a pool worker: the inherited part is read once per fork point
                prefix = tuple(segs[:-1])
                fx = warm.prefix_effects(
                    prefix, lambda: db.effect_keys(list(prefix), self.fork_seq)
                )
                fx.update(db.effect_keys(segs[-1:], self._head))
                self._fx = fx
            else:
                self._fx = db.effect_keys(segs, self._head)
            return self._fx
        try:
            indexed = db.catch_up_effect_index()
        except WorkbenchError:
            indexed = db.catch_up_effect_index(write=False)
        self._fx = db.effect_keys(self._segments, self._head, after_position=indexed)
        self._fx_indexed = indexed
        return self._fx

    def _commit(self, key: str, kh: bytes, result: Any) -> Any:
        j = self._j
        intents = j.storage.intents
        ann = self._announcement
        moved: BranchConflict | None = None
        try:
            # An unsafe result raises; the call happened, so its intent stays: an unknown outcome.
            text, plain = ev.canonical_plain(result, "result")
            payload = '{"key":' + _quote(key) + ',"key_hash":"' + kh.hex() + '"'
            if self._receipt is not None:
                payload += ',"receipt":' + self._receipt
            payload += ',"result":' + text + "}"
            took = round((time.perf_counter() - self._started) * 1000, 3)
            shape, extra = (
                ("effect", (kh, took, self._attempt))
                if self._receipt_ms is None
                else ("effect_rendered", (kh, took, self._attempt, self._receipt_ms))
            )
            try:
                self._append("effect", payload, False, shape, extra)
            except BranchConflict:
                # Another writer appended while fn ran: fn has run, so its result is kept.
                moved = self._commit_past_others(key, payload, shape, extra)
        except StorageError as e:
            try:
                intents.settle(self.id, kh, ann)
            except WorkbenchError:
                pass
            # "Nothing was written" is true of the journal, not of the world: say that fn ran.
            raise type(e)(
                f"{e.message}; effect {key!r} ran fn, and its result was not committed: an "
                "unknown outcome (unknown_outcomes() lists it; calling effect again runs fn again)",
                **e.fields,
            ) from e
        except BaseException:
            try:
                intents.settle(self.id, kh, ann)
            except WorkbenchError:
                pass  # the unknown outcome stays announced: as after a crash
            raise
        intents.finished(self.id, kh, ann)
        if moved is not None:
            raise moved
        fx = self._fx
        if fx is not None:  # committed at our head + 1: nobody else has written to this branch
            fx[kh] = (self.id, self._head)
        # Return what every replay returns: the JSON round trip (the value itself when equal).
        return result if plain and type(result) in _IMMUTABLE else ev.loads(text)

    def _commit_past_others(
        self, key: str, payload: str, shape: str, extra: tuple[Any, ...]
    ) -> BranchConflict:
        """Commit an effect whose fn ran while another writer moved the branch: after the
        branch's stored head (effects change no state, so where it lands changes no state
        either). Returns the error that tells the caller this handle is stale, with where the
        result went; raises when it cannot be committed (then it is an unknown outcome)."""
        j = self._j
        b = self.id
        if self._expecting is not None:
            actual = j.durable_head(b)[0]
            raise BranchConflict(
                f"branch {b} moved while effect {key!r} ran (expected head {self._expecting}, "
                f"now {actual}): fn ran, and with expect= its result is committed nowhere else; "
                f"it is an unknown outcome (unknown_outcomes() lists it); take a fresh handle "
                f"with journal.branch({b}) and decide whether to run it again",
                branch=b,
                expected=self._head,
                actual=actual,
                key=key,
                ran=True,
            )
        for _ in range(_MOVED_RETRIES):
            at, parent = j.durable_head(b)
            h = ev.event_hash(parent, "effect", payload)
            try:
                j.write((b, at + 1, "effect", h, parent, j.now(), payload, *extra), shape, False)
            except BranchConflict:
                continue  # it moved again: the other writer is still appending
            return BranchConflict(
                f"branch {b} moved while effect {key!r} ran (this handle's head is {self._head}, "
                f"the journal's was {at}): fn ran once and its result is committed at {b}@"
                f"{at + 1}, after the other writer's events; this handle is stale: take a fresh "
                f"handle with journal.branch({b}); effect({key!r}) there returns the result "
                "without running fn",
                branch=b,
                seq=at + 1,
                expected=self._head,
                actual=at,
                key=key,
                ran=True,
            )
        raise BranchConflict(
            f"branch {b} kept moving while effect {key!r} was committed ({_MOVED_RETRIES} "
            "tries): fn ran, and its result is not committed; it is an unknown outcome "
            f"(unknown_outcomes() lists it); take a fresh handle with journal.branch({b})",
            branch=b,
            expected=self._head,
            key=key,
            ran=True,
        )

    def effect(
        self,
        key: str,
        fn: Callable[..., T],
        *args: Any,
        expect: int | str | None = None,
        **kwargs: Any,
    ) -> T:
        """Return the journaled result for ``key``, or call ``fn`` once and journal its result.

        The result is committed before this returns; after a crash or in a fork, the committed
        result is returned without calling ``fn``. If ``fn`` raises, nothing is committed.
        ``expect`` (as for ``apply``) is checked before ``fn`` runs; it is this method's own
        keyword, never passed to ``fn``. A branch another writer moved is refused before ``fn``
        runs (``BranchConflict``, ``ran=False``); one moved while ``fn`` ran gets the result
        committed after the other writer's events (``BranchConflict``, ``ran=True``, ``seq``),
        so a fresh handle returns it without calling ``fn`` again.
        """
        found, value, kh = self._lookup(key, expect)
        if found:
            return cast(T, value)
        try:
            result = fn(*args, **kwargs)
        except BaseException:
            self._withdraw(kh)
            raise
        return cast(T, self._commit(key, kh, result))

    async def aeffect(
        self,
        key: str,
        fn: Callable[..., Awaitable[T]],
        *args: Any,
        expect: int | str | None = None,
        **kwargs: Any,
    ) -> T:
        """``effect`` for a coroutine function."""
        found, value, kh = self._lookup(key, expect)
        if found:
            return cast(T, value)
        try:
            result = await fn(*args, **kwargs)
        except BaseException:
            self._withdraw(kh)
            raise
        return cast(T, self._commit(key, kh, result))

    def _withdraw(self, kh: bytes, ann: str | None = None) -> None:
        try:
            self._j.storage.intents.withdraw(self.id, kh, ann or self._announcement)
        except WorkbenchError:
            pass  # the intent stays: an unknown outcome, as after a crash; fn's error matters more

    def render(
        self,
        budget: int,
        estimator: Callable[[str], int] | None = None,
        renderer: Callable[[Any], Sequence[Any]] | None = None,
        seq: int | None = None,
        messages: bool = False,
        separator: str = "\n",
        scope: str | Sequence[str] | None = None,
        filter: Callable[[Any], bool] | None = None,
    ) -> tuple[Any, Any]:
        """The context a model would see from the state at ``seq`` (default: the head), never
        over ``budget`` tokens, and a Receipt of what was included and omitted, and why.

        ``scope`` leaves out parts of other scopes; ``filter(part)`` False leaves a part out.
        Returns (text, receipt), or (list of {"role", "content"} messages, receipt)."""
        t0 = time.perf_counter()
        est = estimator or _CHARS
        at = self._head if seq is None else seq
        self._check_seq(at, "render at")
        state = self._live() if at == self._head else self.at(at)
        parts = list((renderer or default_renderer)(state))
        kept, inc, omi, used = render_parts(parts, budget, est, separator, scope, filter)
        receipt = make_receipt(
            self.id,
            at,
            self._hash_at(at).hex(),
            est,
            budget,
            inc,
            omi,
            used,
            len(parts),
            (time.perf_counter() - t0) * 1000,
        )
        if messages:
            return [{"role": p.role, "content": p.text} for p in kept], receipt
        return separator.join(p.text for p in kept), receipt

    @contextmanager
    def receipt(self, receipt: Any) -> Iterator[None]:
        """Journal ``receipt`` with the effects committed inside this block (what the model saw)."""
        if receipt is not self._receipt_of:  # encoded once, however many calls and blocks use it
            # The projection time is kept beside each effect, not in it: identical histories
            # must hash the same, however long a render took.
            doc = (
                receipt.to_json(timing=False)
                if hasattr(receipt, "projection_ms")
                else receipt.to_json()
            )
            self._receipt_of, self._receipt_text = receipt, ev.canonical(doc, "receipt")
        previous = self._receipt, self._receipt_ms
        self._receipt, self._receipt_ms = (
            self._receipt_text,
            getattr(receipt, "projection_ms", None),
        )
        try:
            yield
        finally:
            self._receipt, self._receipt_ms = previous


def unknown_outcomes(db: Storage, branch_id: int) -> list[str]:
    """Effect keys started on a branch whose result was never committed (a read: it writes
    nothing, so it answers while another process holds a write transaction)."""
    announced = db.intents.pending(branch_id)
    if not announced:
        return []
    done = db.committed_keys(branch_id, [kh for _, kh in announced])
    return [key for (_, kh), key in announced.items() if kh not in done]


def compact_intents(db: Storage, force: bool = False, due: bool = False) -> None:
    """Drop resolved announcements from the intent store: when it has grown large (a journal
    closing), when the store says it is ``due`` (before an effect: a long-lived process keeps
    it small as it goes), or always (``force``, vacuum)."""
    if db.readonly:
        return
    if due:
        if not db.intents.due():
            return
    elif db.intents.size() < (1 if force else db.intents.COMPACT_BYTES):
        return
    try:
        db.catch_up_effect_index()  # so the check below reads the index, not the events
    except Busy:
        if force:  # vacuum: it would wait for the same lock again; one wait, then Busy
            raise
    except WorkbenchError:
        pass  # it reads the events the index lacks instead

    def still_open(announced: dict[tuple[int, bytes], str]) -> dict[tuple[int, bytes], str]:
        by_branch: dict[int, list[bytes]] = {}
        for b, kh in announced:
            by_branch.setdefault(b, []).append(kh)
        done = {(b, kh) for b, khs in by_branch.items() for kh in db.committed_keys(b, khs)}
        return {k: v for k, v in announced.items() if k not in done}

    db.intents.compact(still_open)
