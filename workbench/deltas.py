"""Evolving deltas: dataclass deltas registered with a kind name and a version, and upcasters
that turn old payloads into new ones on replay.

    @delta("note.added", version=2)
    @dataclass
    class NoteAdded:
        text: str
        source: str = "user"

    @upcaster("note.added", 1)          # version 1 payload -> version 2 payload
    def _(payload: dict) -> dict:
        return {**payload, "source": "legacy"}

A registered delta is stored as ``{"@type": "note.added", "@v": 2, ...fields}``; the hash is
that of the stored bytes, so upcasting on replay never changes history. ``State.apply``
receives the dataclass instance (upcast to the newest version); unregistered deltas arrive as
the plain JSON they were stored as. Kind names are stable strings, never Python import paths.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from .errors import InvalidValue, NotFound

T = TypeVar("T")
TYPE, VERSION = "@type", "@v"

_classes: dict[str, tuple[int, type]] = {}
_plain: dict[type, frozenset[str]] = {}  # classes decode may fill directly -> their fields
_generation = [0]  # bumped whenever a delta class or upcaster is registered
_by_class: dict[type, tuple[str, int]] = {}
_upcasters: dict[tuple[str, int], Callable[[dict[str, Any]], dict[str, Any]]] = {}


def delta(kind: str, version: int = 1, *, plain: bool = False) -> Callable[[type[T]], type[T]]:
    """Register a dataclass as the current version of a delta kind. ``plain=True`` promises
    that constructing it does nothing but store its fields (no ``__post_init__``, no custom
    ``__init__``): replay then fills a stored delta's fields in directly, several times faster
    (a stored delta with other fields still goes through the constructor, and its error)."""
    if not isinstance(kind, str) or not kind or kind.startswith("@"):
        raise InvalidValue(f"a delta kind is a non-empty name like 'note.added', not {kind!r}")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise InvalidValue(f"a delta version is an int >= 1, not {version!r}")

    def register(cls: type[T]) -> type[T]:
        if not dataclasses.is_dataclass(cls):
            raise InvalidValue(
                f"{cls.__name__} must be a dataclass to be registered as delta {kind!r}"
            )
        old = _classes.get(kind)
        if old is not None and old[1] is not cls:
            _by_class.pop(old[1], None)
            _plain.pop(old[1], None)
        if plain:
            if hasattr(cls, "__post_init__") or "__slots__" in cls.__dict__:
                raise InvalidValue(
                    f"{cls.__name__} has __post_init__ or __slots__: register it without plain"
                )
            _plain[cls] = frozenset(f.name for f in dataclasses.fields(cls) if f.init)
        _classes[kind] = (version, cls)
        _by_class[cls] = (kind, version)
        _generation[0] += 1
        return cls

    return register


def upcaster(
    kind: str, from_version: int
) -> Callable[
    [Callable[[dict[str, Any]], dict[str, Any]]], Callable[[dict[str, Any]], dict[str, Any]]
]:
    """Register the function that turns a ``from_version`` payload of ``kind`` into the next."""

    def register(
        fn: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> Callable[[dict[str, Any]], dict[str, Any]]:
        _upcasters[(kind, from_version)] = fn
        _generation[0] += 1
        return fn

    return register


def encode(value: Any) -> Any:
    """A registered delta as its tagged JSON form; anything else unchanged."""
    tag = _by_class.get(type(value))
    if tag is None:
        return value
    fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return {TYPE: tag[0], VERSION: tag[1], **fields}


def encode_many(values: list[Any]) -> list[Any]:
    """``encode`` over a list (the list itself while no delta class is registered)."""
    return [encode(v) for v in values] if _by_class else values


def versions(kinds: Iterable[str] | None = None) -> dict[str, int]:
    """The version of these delta kinds (default: every kind that has evolved, i.e. has a
    version above 1 or an upcaster): what a snapshot built now was built from."""
    if kinds is None:
        evolved = {k for k, _ in _upcasters} | {k for k, (v, _) in _classes.items() if v > 1}
        return {k: _classes[k][0] if k in _classes else 1 for k in sorted(evolved)}
    return {k: _classes[k][0] if k in _classes else 1 for k in sorted(set(kinds))}


def generation() -> int:
    """Changes whenever the registry does (to cache what depends on it)."""
    return _generation[0]


def registered(kind: str) -> tuple[int, type] | None:
    """(version, class) registered now for a delta kind, or None."""
    return _classes.get(kind)


def any_registered() -> bool:
    """Whether any delta class is registered (else decode returns payloads unchanged)."""
    return bool(_classes)


def decode(payload: Any) -> Any:
    """A stored delta as what State.apply receives: the upcast dataclass, or the plain JSON."""
    if not isinstance(payload, dict) or TYPE not in payload:
        return payload
    kind = payload[TYPE]
    current = _classes.get(kind)
    if current is None:
        return payload  # nobody registered this kind here: hand over the JSON as stored
    version, cls = current
    have = payload.get(VERSION, 1)
    body = payload.copy()  # faster than a filtering comprehension on the replay path
    del body[TYPE]
    body.pop(VERSION, None)
    if have == version:
        fields = _plain.get(cls)
        if fields is not None and body.keys() == fields:
            made: Any = object.__new__(cls)
            made.__dict__.update(body)  # what its generated __init__ would store
            return made
    while have < version:
        step = _upcasters.get((kind, have))
        if step is None:
            raise NotFound(
                f"delta {kind!r} was stored as version {have} but this process knows version "
                f"{version} "
                f"and has no upcaster from {have}; register one with @upcaster({kind!r}, {have})",
                kind=kind,
                version=have,
            )
        body = step(body)
        have += 1
    if have > version:
        raise InvalidValue(
            f"delta {kind!r} was stored as version {have}, newer than this code's version "
            f"{version}; upgrade the code that defines it",
            kind=kind,
            version=have,
        )
    try:
        return cls(**body)
    except TypeError as e:
        raise InvalidValue(
            f"stored delta {kind!r} v{have} does not fit {cls.__name__}: {e}"
        ) from None
