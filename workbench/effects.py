"""Journaled effects and what a model saw: the part of a ``Branch`` that runs side effects.

``effect(key, fn)`` returns the committed result of ``key`` if this branch's history (its
ancestors' included) holds one; otherwise it announces the call in the intent store, runs
``fn``, and commits the result before returning it, so a killed process resumes without
running a committed effect again. ``render`` builds the context a model would see under a
token budget, with a receipt that ``with branch.receipt(r):`` journals beside the effects.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from . import events as ev
from .context import CharEstimator, default_renderer, make_receipt, render_parts
from .errors import EffectInFlight, WorkbenchError

if TYPE_CHECKING:
    from .journal import Journal

T = TypeVar("T")
_CHARS = CharEstimator()  # the default estimator (stateless)
_IMMUTABLE = (str, int, float, bool, type(None))
FX_MAP_MAX = 20_000  # effects a handle maps in memory; older ones are found through effect_index
_quote: Callable[[str], str] = json.encoder.encode_basestring


class Effects:
    """Effects, render and receipts, for ``Branch`` (which owns the attributes below)."""

    id: int
    _j: Journal
    _head: int
    _segments: list[tuple[int, int, int | None]]
    _fx: dict[bytes, tuple[int, int]] | None
    _fx_indexed: int
    _log_mark: tuple[int, int] | None
    _attempt: int
    _announcement: str
    _started: float
    _receipt: Any
    _receipt_ms: float | None
    _receipt_of: Any
    _receipt_text: str
    _append: Callable[..., int]
    _ready: Callable[[], Journal]
    _expected: Callable[..., bool]
    _check_seq: Callable[[int, str], None]
    _live: Callable[[], Any]
    _hash_at: Callable[[int], bytes]
    at: Callable[[int | str], Any]

    def _lookup(self, key: str, expect: int | str | None = None) -> tuple[bool, Any, bytes]:
        kh = ev.key_hash(ev.check_key(key, self._j.max_key_bytes))
        self._expected(expect, before_side_effect=True)
        j = self._ready()
        db = j.storage
        # The handle maps its history's effects (key hash -> where) when it first looks one up;
        # past FX_MAP_MAX effects, older ones are left to the effect_index table. Anyone else's
        # append to this branch takes the seq after our head (and makes our next append fail),
        # so that is the one place left to look, and only if someone announced an effect in the
        # intent log since this handle's last line there (every effect is announced before it
        # commits): our announcement's line tells, as it starts where our last one ended or not.
        fx = self._fx
        if fx is None:
            fx = self._load_fx(db)
        where = fx.get(kh)
        if where is not None:
            return True, ev.loads(db.effect_payload(*where))["result"], kh
        if self._fx_indexed:
            hit = db.find_effect_indexed(kh, self._segments, self._fx_indexed)
            if hit is not None:
                return True, ev.loads(hit.payload)["result"], kh
        if db.readonly:
            db.writable()
        intents = db.intents
        previous = self._log_mark
        attempt, ann, holder = intents.announce(self.id, kh, key)
        self._log_mark = intents.mark
        if holder is not None or previous is None or previous != intents.start_mark:
            after = db.find_effect_after(kh, self.id, self._head)
            if after is not None or holder is not None:
                intents.withdraw(self.id, kh, ann)
                self._log_mark = None
            if after is not None:
                return True, ev.loads(after.payload)["result"], kh
            if holder is not None:
                # Announced first by a process that is still running it, with no result
                # committed yet: running fn here too would run it twice.
                raise EffectInFlight(
                    f"effect {key!r} on branch {self.id} is running now (announced by {holder}, "
                    "still alive) and has not committed a result; wait for it and read the result "
                    f"with a fresh handle (journal.branch({self.id})), or give this call another "
                    f"key",
                    branch=self.id,
                    key=key,
                    holder=holder,
                )
        self._attempt, self._announcement = attempt, ann
        self._started = time.perf_counter()
        return False, None, kh

    def _load_fx(self, db: Any) -> dict[bytes, tuple[int, int]]:
        self._log_mark = None  # until our next announcement, ask the database
        if self._head <= FX_MAP_MAX:
            self._fx_indexed = 0
            self._fx = db.effect_keys(self._segments, self._head)
        else:
            self._fx_indexed = db.catch_up_effect_index()
            self._fx = {}
        return self._fx

    def _commit(self, key: str, kh: bytes, result: Any) -> Any:
        intents = self._j.storage.intents
        ann = self._announcement
        try:
            # An unsafe result raises; the call happened, so its intent stays: an unknown outcome.
            text, plain = ev.canonical_plain(result, "result")
            payload = '{"key":' + _quote(key) + ',"key_hash":"' + kh.hex() + '"'
            if self._receipt is not None:
                payload += ',"receipt":' + self._receipt
            payload += ',"result":' + text + "}"
            took = round((time.perf_counter() - self._started) * 1000, 3)
            if self._receipt_ms is None:
                self._append("effect", payload, False, "effect", (kh, took, self._attempt))
            else:
                self._append(
                    "effect",
                    payload,
                    False,
                    "effect_rendered",
                    (kh, took, self._attempt, self._receipt_ms),
                )
        except BaseException:
            try:
                intents.settle(self.id, kh, ann)
            except WorkbenchError:
                pass  # the unknown outcome stays announced: as after a crash
            raise
        intents.finished(self.id, kh, ann)
        fx = self._fx
        if fx is not None:  # committed at our head + 1: nobody else has written to this branch
            fx[kh] = (self.id, self._head)
            if len(fx) > FX_MAP_MAX:
                self._fx_indexed = self._j.storage.catch_up_effect_index()
                fx.clear()
        # Return what every replay returns: the JSON round trip (the value itself when equal).
        return result if plain and type(result) in _IMMUTABLE else ev.loads(text)

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
        keyword, never passed to ``fn``.
        """
        found, value, kh = self._lookup(key, expect)
        if found:
            return value
        try:
            result = fn(*args, **kwargs)
        except BaseException:
            self._withdraw(kh)
            raise
        return self._commit(key, kh, result)

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
            return value
        try:
            result = await fn(*args, **kwargs)
        except BaseException:
            self._withdraw(kh)
            raise
        return self._commit(key, kh, result)

    def _withdraw(self, kh: bytes) -> None:
        try:
            self._j.storage.intents.withdraw(self.id, kh, self._announcement)
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
