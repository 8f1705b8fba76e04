"""Memory units, snapshots and sessions on the journal.

A **unit** is one immutable piece of memory (a message, a KV fact, an embedding, a tool result,
a summary): ``key``, ``type``, ``value``, ``source``, metadata, and for embeddings a vector:
``unit.embedding`` is a list of floats, stored as the float64 values given (exactly), or packed
as float32 when asked (``dtype="float32"``: about a fifth of the text, each value rounded once).
Journals written when every vector was packed (``{"@f32": base64}``) read the same way: a list
of floats, under the id it was stored with. Its identity is ``(session, key, type)``; its id is
the content hash of all of it but its ``created_at`` (``u`` + 32 hex), so the same content is
the same unit wherever it appears; of two units of one identity in a snapshot, the one created
later wins.

A **session** is a branch (``session:<id>``); a **snapshot** is one event on it whose payload
records what changed against the session's previous snapshot: the units put (whole, the first
time they appear) and the identities dropped. So 200 snapshots of a 1,000-unit session that each
change one unit store about 200 units, not 200,000 references; the set of units a snapshot
holds is the session's state at that event, rebuilt like any state (forks, time travel, verify,
encryption, replication and sweeps apply unchanged). A snapshot's id is its event's hash.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import blake3
import orjson

from . import embeddings
from .errors import InvalidValue, ValueTypeError
from .events import State, canonical

KINDS = ("message", "kv", "embedding", "tool_result", "summary")
SESSION_PREFIX = "session:"


class UnitType(enum.StrEnum):
    """The five kinds of unit; a member equals its string (``UnitType.KV == "kv"``)."""

    MESSAGE = "message"
    KV = "kv"
    EMBEDDING = "embedding"
    TOOL_RESULT = "tool_result"
    SUMMARY = "summary"


def identity(key: str, kind: str) -> str:
    """The identity of a unit within its session, as a dict key: ``type/key``."""
    return f"{kind}/{key}"


def _when(value: Any) -> datetime | None:
    """A unit's creation time as an aware UTC datetime (ISO text accepted, naive = UTC)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidValue(f"a unit's created_at is an ISO 8601 time, not {value!r}") from None
    if not isinstance(value, datetime):
        raise InvalidValue(f"a unit's created_at is a datetime, not {value!r}")
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


@dataclass(frozen=True)
class Unit:
    """One memory unit (immutable). ``id`` is the content hash of its content: everything but
    ``id`` and ``created_at``, so the same content is one unit however often it is built;
    ``created_at`` is when it was built (of two units of one identity, the later wins)."""

    session: str
    key: str
    type: str
    value: Any
    source: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    # an embedding's floats; also accepts a stored encoding ({"@f32": base64} or "@f64")
    embedding: list[float] | None = None
    effect: str | None = None  # the key of the effect whose result this value is
    id: str = ""
    source_ref: str | None = None  # what within the source (a tool's name, a message type)
    created_at: datetime | None = None
    # an embedding with no value of its own reads its vector as ``value`` (never stored twice)
    _vector_value: bool = field(default=False, init=False, repr=False, compare=False)
    # the embedding as stored and hashed: a list of floats, or packed (see the module docstring)
    _stored: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.type not in KINDS:
            raise InvalidValue(f"a unit's type is one of {', '.join(KINDS)}, not {self.type!r}")
        object.__setattr__(self, "type", UnitType(self.type))
        for name in ("session", "key"):
            v = getattr(self, name)
            if not isinstance(v, str) or not v:
                raise InvalidValue(f"a unit's {name} is a non-empty str, not {v!r}")
        for name in ("source", "source_ref"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, str):
                raise InvalidValue(f"a unit's {name} is a str, not {v!r}")
        if not isinstance(self.metadata, Mapping):
            raise ValueTypeError(f"a unit's metadata is a dict, not {self.metadata!r}")
        object.__setattr__(self, "created_at", _when(self.created_at))
        object.__setattr__(self, "_stored", _encoded(self.embedding))
        if self.type == "embedding" and self.value is not None and self._is_its_vector():
            object.__setattr__(self, "value", None)  # the vector read back as value: not content
        doc = self.body()
        try:
            text = canonical(doc, f"unit {self.key!r}")  # JSON-safe, refused with its path
        except InvalidValue as e:
            raise ValueTypeError(str(e)) from None
        # a copy of what was hashed: the caller's objects may change later, the unit may not
        frozen = orjson.loads(text)
        object.__setattr__(self, "value", frozen["value"])
        object.__setattr__(self, "metadata", frozen["metadata"])
        if "embedding" in frozen:
            floats = _floats(frozen["embedding"])
            object.__setattr__(self, "_stored", frozen["embedding"])
            object.__setattr__(self, "embedding", floats)
            if self.type == "embedding" and frozen["value"] is None:
                object.__setattr__(self, "value", list(floats))
                object.__setattr__(self, "_vector_value", True)
        digest = "u" + blake3.blake3(text.encode("utf-8")).hexdigest()[:32]
        if self.id and self.id != digest:
            raise InvalidValue(f"unit {self.key!r}: id {self.id!r} does not match its content")
        object.__setattr__(self, "id", digest)

    def _is_its_vector(self) -> bool:
        if self._stored is None or not isinstance(self.value, list):
            return False
        try:
            return [float(x) for x in self.value] == _floats(self._stored)
        except (TypeError, ValueError):
            return False

    def body(self) -> dict[str, Any]:
        """The unit's content (what its id hashes): everything but ``id`` and ``created_at``."""
        doc: dict[str, Any] = {
            "session": self.session,
            "key": self.key,
            "type": str(self.type.value if isinstance(self.type, UnitType) else self.type),
            "value": None if self._vector_value else self.value,
            "source": self.source,
            "metadata": dict(self.metadata),
        }
        if self._stored is not None:
            doc["embedding"] = self._stored
        if self.effect is not None:
            doc["effect"] = self.effect
        if self.source_ref is not None:
            doc["source_ref"] = self.source_ref
        return doc

    def stored(self) -> dict[str, Any]:
        """The unit as stored: its id, its content (the embedding in its stored encoding) and
        (when known) ``created_at``."""
        doc = {"id": self.id, **self.body()}
        if self.created_at is not None:
            doc["created_at"] = self.created_at.isoformat()
        return doc

    def to_json(self) -> dict[str, Any]:
        """The unit as JSON, its embedding a list of floats (``from_json`` reads it back, to
        the same id, whichever encoding it was stored in)."""
        doc = self.stored()
        if self.embedding is not None:
            doc["embedding"] = list(self.embedding)
        return doc

    @property
    def identity(self) -> str:
        """``type/key``: what a later unit of the same session replaces."""
        return identity(self.key, self.type)

    @property
    def session_id(self) -> str:
        """The session's id (the StateForge design's name for ``session``)."""
        return self.session

    @property
    def vector(self) -> list[float] | None:
        """An embedding unit's floats (``embedding``; also its ``value`` when it was given no
        other, text say)."""
        return None if self.embedding is None else list(self.embedding)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Unit:
        """A unit from its stored form or its ``to_json`` (its id is checked against its
        content; an embedding given as floats is matched to the encoding the id was made with)."""
        fields: dict[str, Any] = {
            "session": doc["session"],
            "key": doc["key"],
            "type": doc["type"],
            "value": doc.get("value"),
            "source": doc.get("source"),
            "metadata": doc.get("metadata") or {},
            "embedding": doc.get("embedding"),
            "effect": doc.get("effect"),
            "id": doc.get("id", ""),
            "source_ref": doc.get("source_ref"),
            "created_at": doc.get("created_at"),
        }
        vector = fields["embedding"]
        if not fields["id"] or not isinstance(vector, list) or not _is_numbers(vector):
            return cls(**fields)
        try:
            return cls(**fields)
        except InvalidValue:
            # floats read from a packed unit: packed again, they give back its stored bytes
            for dtype in ("float32", "float64"):
                try:
                    packed = embeddings.pack(vector, dtype)
                    if _floats(packed) == [float(x) for x in vector]:
                        return cls(**{**fields, "embedding": packed})
                except InvalidValue:
                    continue
            raise


@dataclass
class SessionState(State):
    """A session's units by identity (``type/key`` -> unit as JSON) and its label (a snapshot's
    own label and position are its event's). Deltas: ``{"op": "session", ...}`` (the first
    event), ``{"op": "snapshot", "label", "put": [units], "drop": [identities],
    "rollback_of"}``."""

    state_name = "lithify.units.session/1"
    session: str = ""
    label: str | None = None
    units: dict[str, dict[str, Any]] = field(default_factory=dict)

    def apply(self, delta: dict[str, Any]) -> None:
        op = delta.get("op")
        if op == "session":
            self.session = delta["id"]
            self.label = delta.get("label")
            return
        if op == "snapshot":
            for ident in delta.get("drop", []):
                self.units.pop(ident, None)
            for doc in delta.get("put", []):
                self.units[identity(doc["key"], doc["type"])] = doc


_NEVER = datetime.min.replace(tzinfo=UTC)


def latest_by_identity(units: Iterable[Unit]) -> dict[str, Unit]:
    """Units by identity; of two with one identity, the one created later wins (by
    ``created_at``; a unit without one counts as oldest; of two created at the same moment,
    the later in the list)."""
    out: dict[str, Unit] = {}
    if isinstance(units, Unit) or units is None or isinstance(units, (str, bytes, dict)):
        raise InvalidValue("a snapshot takes a list of units, e.g. [units.message(...)]")
    for u in units:
        if not isinstance(u, Unit):
            raise InvalidValue(f"a snapshot takes units (workbench.units.message(...)), not {u!r}")
        held = out.get(u.identity)
        if held is None or (u.created_at or _NEVER) >= (held.created_at or _NEVER):
            out[u.identity] = u
    return out


def changes(before: Mapping[str, dict[str, Any]], after: Mapping[str, Unit]) -> dict[str, Any]:
    """The snapshot delta that turns a unit set ``before`` into ``after``: units put (new or
    changed) and identities dropped."""
    put = [u.stored() for ident, u in after.items() if before.get(ident, {}).get("id") != u.id]
    drop = sorted(ident for ident in before if ident not in after)
    return {"put": put, "drop": drop}


def diff_units(
    a: Mapping[str, dict[str, Any]], b: Mapping[str, dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """Added, modified and removed units between two unit sets, by identity. Modified: the
    same identity with another value, metadata or embedding."""

    def content(doc: dict[str, Any]) -> tuple[str, str, str]:
        return (
            canonical(doc.get("value"), "value"),
            canonical(doc.get("metadata") or {}, "metadata"),
            canonical(doc.get("embedding"), "embedding"),
        )

    added = [b[i] for i in sorted(b) if i not in a]
    removed = [a[i] for i in sorted(a) if i not in b]
    modified = [
        {"identity": i, "before": a[i], "after": b[i]}
        for i in sorted(a)
        if i in b and content(a[i]) != content(b[i])
    ]
    return {"added": added, "modified": modified, "removed": removed}


# -- constructors (``from workbench.units import message``; also ``stateforge.units``) ---------
# Their signatures are the StateForge design's: (session_id, key, value, source, source_ref,
# metadata), so a call written for it works unchanged, positional or by keyword.


def _unit(
    kind: str,
    session_id: Any,
    key: str,
    value: Any,
    source: str | None,
    source_ref: str | None,
    metadata: Mapping[str, Any] | None,
    **extra: Any,
) -> Unit:
    sid = getattr(session_id, "id", session_id)
    if not isinstance(sid, str) or not sid:
        raise InvalidValue(f"a unit's session is a session (or its id), not {session_id!r}")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise ValueTypeError(f"a unit's metadata is a dict, not {metadata!r}")
    return Unit(
        session=sid,
        key=key,
        type=kind,
        value=value,
        source=source,
        metadata=dict(metadata or {}),
        source_ref=source_ref,
        created_at=datetime.now(UTC),
        **extra,
    )


def message(
    session_id: Any,
    key: str,
    value: Any,
    source: str | None = "user",
    source_ref: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Unit:
    """A message (``value``: its text, or any JSON-safe form of it)."""
    return _unit("message", session_id, key, value, source, source_ref, metadata)


def kv(
    session_id: Any,
    key: str,
    value: Any,
    source: str | None = "agent",
    source_ref: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Unit:
    """A key/value fact."""
    return _unit("kv", session_id, key, value, source, source_ref, metadata)


def _is_numbers(v: Any) -> bool:
    return (
        isinstance(v, Sequence)
        and not isinstance(v, (str, bytes))
        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
    )


def embedding(
    session_id: Any,
    key: str,
    vector: Sequence[float] | bytes | Mapping[str, str] | None = None,
    source: str | None = None,
    source_ref: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    *,
    value: Any = None,
    dtype: str = "float64",
) -> Unit:
    """An embedding: ``vector`` (a list of numbers, packed little-endian float32 bytes, or a
    packed dict), or the numbers as ``value=[...]`` when no vector is given; with a vector,
    ``value`` is what it embeds (e.g. the text). ``unit.embedding`` gives the floats back as a
    list. Stored as given, every float64 exactly, by default; ``dtype="float32"`` packs them
    as float32 (about a fifth of the JSON text; each value rounded to float32 once). Bytes are
    float32 unless ``dtype="float64"``."""
    if dtype not in embeddings.DTYPES:
        raise InvalidValue(f"an embedding's dtype is float32 or float64, not {dtype!r}")
    if vector is None and _is_numbers(value):
        vector, value = value, None
    if vector is None:
        raise InvalidValue("an embedding needs its numbers: vector=[...] (or value=[...])")
    stored: list[float] | dict[str, str]
    if embeddings.is_packed(vector):
        stored = dict(vector)  # type: ignore[arg-type]
    elif isinstance(vector, (bytes, bytearray)):
        stored = embeddings.pack_bytes(bytes(vector), dtype if dtype == "float64" else "float32")
    elif _is_numbers(vector) and dtype == "float32":
        stored = embeddings.pack(vector, "float32")  # type: ignore[arg-type]
    elif _is_numbers(vector):
        stored = _checked(vector)  # type: ignore[arg-type]
    else:
        raise ValueTypeError(
            f"an embedding is a list of numbers (or packed bytes, or a packed dict), not {vector!r}"
        )
    return _unit(
        "embedding", session_id, key, value, source, source_ref, metadata, embedding=stored
    )


def _checked(vector: Sequence[float]) -> list[float]:
    """The numbers of a vector as floats, refused when one is not finite."""
    floats = [float(x) for x in vector]
    if not all(math.isfinite(x) for x in floats):
        raise InvalidValue("an embedding must be finite numbers (no NaN or infinity)")
    return floats


def _encoded(vector: Any) -> list[float] | dict[str, str] | None:
    """An embedding's stored encoding: a packed dict as given (checked), else its floats."""
    if vector is None:
        return None
    if embeddings.is_packed(vector):
        embeddings.unpack(vector)  # refused here when its bytes are not floats
        return dict(vector)
    if _is_numbers(vector):
        return _checked(vector)
    raise ValueTypeError(
        f"a unit's embedding is a list of numbers (or a packed dict), not {vector!r}"
    )


def _floats(stored: Any) -> list[float]:
    """The floats of an embedding as stored: packed, or a list (JSON gives 1.0 back as 1)."""
    if embeddings.is_packed(stored):
        return embeddings.unpack(stored)
    return [float(x) for x in stored]


def tool_result(
    session_id: Any,
    key: str,
    value: Any,
    source: str | None = None,
    source_ref: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    effect: str | None = None,
) -> Unit:
    """A tool's result; ``effect``: the key of the journaled effect that produced it (what its
    provenance links to, exactly)."""
    return _unit("tool_result", session_id, key, value, source, source_ref, metadata, effect=effect)


def summary(
    session_id: Any,
    key: str,
    value: Any,
    source: str | None = None,
    source_ref: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Unit:
    """A summary of other units."""
    return _unit("summary", session_id, key, value, source, source_ref, metadata)
