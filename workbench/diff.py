"""Structural diff of two states on their JSON form: added, modified and removed paths.

Dicts are compared key by key; lists item by item, except lists whose items are all dicts
carrying an identity field (``key`` or ``id`` by default, or the State's ``diff_keys``), which
are matched by that identity so an insertion does not show as a cascade of modifications.
Paths look like ``notes[3]`` or ``items[key=abc].count``; the order is deterministic (dict
keys sorted, list items in order). Identical states diff empty.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .events import encode_state

DEFAULT_KEYS = ("key", "id")


@dataclass(frozen=True)
class Change:
    """One difference: ``op`` is "added", "modified" or "removed"."""

    op: str
    path: str
    before: Any = None
    after: Any = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "path": self.path}
        if self.op != "added":
            out["before"] = self.before
        if self.op != "removed":
            out["after"] = self.after
        return out


def _plain(state: Any) -> Any:
    return json.loads(json.dumps(encode_state(state), default=str))


def _identity(a: list[Any], b: list[Any], keys: Sequence[str]) -> str | None:
    """The field that identifies items in both lists (present, scalar, unique within each)."""
    if not (a or b) or not all(isinstance(x, dict) for x in a + b):
        return None
    for k in keys:
        ok = True
        for items in (a, b):
            values = [x.get(k) for x in items]
            if not all(
                isinstance(v, (str, int)) and not isinstance(v, bool) for v in values
            ) or len(set(values)) != len(values):
                ok = False
        if ok:
            return k
    return None


_MISSING: Any = object()


def _pair(a: Any, b: Any, path: str, keys: Sequence[str]) -> Iterator[Change]:
    """One slot on both sides: removed, added, or compared further (_MISSING marks absence)."""
    if b is _MISSING:
        yield Change("removed", path, before=a)
    elif a is _MISSING:
        yield Change("added", path, after=b)
    else:
        yield from _walk(a, b, path, keys)


def _walk(a: Any, b: Any, path: str, keys: Sequence[str]) -> Iterator[Change]:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            yield from _pair(
                a.get(k, _MISSING), b.get(k, _MISSING), f"{path}.{k}" if path else str(k), keys
            )
        return
    if isinstance(a, list) and isinstance(b, list):
        ident = _identity(a, b, keys)
        if ident is not None:
            before = {x[ident]: x for x in a}
            after = {x[ident]: x for x in b}
            for v in [x[ident] for x in a] + [x[ident] for x in b if x[ident] not in before]:
                yield from _pair(
                    before.get(v, _MISSING), after.get(v, _MISSING), f"{path}[{ident}={v}]", keys
                )
            return
        for i in range(max(len(a), len(b))):
            yield from _pair(
                a[i] if i < len(a) else _MISSING,
                b[i] if i < len(b) else _MISSING,
                f"{path}[{i}]",
                keys,
            )
        return
    if a != b or type(a) is not type(b):
        yield Change("modified", path or "$", before=a, after=b)


def iter_diff(before: Any, after: Any, keys: Sequence[str] | None = None) -> Iterator[Change]:
    """The changes from ``before`` to ``after``, one at a time (the streaming form)."""
    ks = (
        tuple(keys)
        if keys is not None
        else tuple(getattr(after, "diff_keys", None) or DEFAULT_KEYS)
    )
    yield from _walk(_plain(before), _plain(after), "", ks)


def diff(before: Any, after: Any, keys: Sequence[str] | None = None) -> list[Change]:
    """All changes from ``before`` to ``after`` (same result as ``iter_diff``)."""
    return list(iter_diff(before, after, keys))
