"""Memory units, snapshots and sessions on the journal.

A **unit** is one immutable piece of memory (a message, a KV fact, an embedding, a tool result,
a summary): ``key``, ``type``, ``value``, ``source``, metadata, and for embeddings a packed
float32 vector. Its identity is ``(session, key, type)``; its id is the content hash of all of
it (``u`` + 32 hex), so the same content is the same unit wherever it appears.

A **session** is a branch (``session:<id>``); a **snapshot** is one event on it whose payload
records what changed against the session's previous snapshot: the units put (whole, the first
time they appear) and the identities dropped. So 200 snapshots of a 1,000-unit session that each
change one unit store about 200 units, not 200,000 references; the set of units a snapshot
holds is the session's state at that event, rebuilt like any state (forks, time travel, verify,
encryption, replication and sweeps apply unchanged). A snapshot's id is its event's hash.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import blake3
import orjson

from . import embeddings
from .errors import InvalidValue
from .events import State, canonical

KINDS = ("message", "kv", "embedding", "tool_result", "summary")
SESSION_PREFIX = "session:"


def identity(key: str, kind: str) -> str:
    """The identity of a unit within its session, as a dict key: ``type/key``."""
    return f"{kind}/{key}"


@dataclass(frozen=True)
class Unit:
    """One memory unit (immutable). ``id`` is the content hash of everything else."""

    session: str
    key: str
    type: str
    value: Any
    source: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    embedding: Any = None  # {"@f32": base64} for type "embedding"
    effect: str | None = None  # the key of the effect whose result this value is
    id: str = ""

    def __post_init__(self) -> None:
        if self.type not in KINDS:
            raise InvalidValue(f"a unit's type is one of {', '.join(KINDS)}, not {self.type!r}")
        for name in ("session", "key"):
            v = getattr(self, name)
            if not isinstance(v, str) or not v:
                raise InvalidValue(f"a unit's {name} is a non-empty str, not {v!r}")
        if self.source is not None and not isinstance(self.source, str):
            raise InvalidValue(f"a unit's source is a str, not {self.source!r}")
        if not isinstance(self.metadata, Mapping):
            raise InvalidValue(f"a unit's metadata is a dict, not {self.metadata!r}")
        doc = self.body()
        text = canonical(doc, f"unit {self.key!r}")  # JSON-safe, refused with its path
        # a copy of what was hashed: the caller's objects may change later, the unit may not
        frozen = orjson.loads(text)
        object.__setattr__(self, "value", frozen["value"])
        object.__setattr__(self, "metadata", frozen["metadata"])
        if "embedding" in frozen:
            object.__setattr__(self, "embedding", frozen["embedding"])
        digest = "u" + blake3.blake3(text.encode("utf-8")).hexdigest()[:32]
        if self.id and self.id != digest:
            raise InvalidValue(f"unit {self.key!r}: id {self.id!r} does not match its content")
        object.__setattr__(self, "id", digest)

    def body(self) -> dict[str, Any]:
        """The unit without its id, as stored."""
        doc: dict[str, Any] = {
            "session": self.session,
            "key": self.key,
            "type": self.type,
            "value": self.value,
            "source": self.source,
            "metadata": dict(self.metadata),
        }
        if self.embedding is not None:
            doc["embedding"] = self.embedding
        if self.effect is not None:
            doc["effect"] = self.effect
        return doc

    def to_json(self) -> dict[str, Any]:
        """The unit with its id."""
        return {"id": self.id, **self.body()}

    @property
    def identity(self) -> str:
        """``type/key``: what a later unit of the same session replaces."""
        return identity(self.key, self.type)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Unit:
        """A unit from its stored form (its id is checked against its content)."""
        return cls(
            session=doc["session"],
            key=doc["key"],
            type=doc["type"],
            value=doc.get("value"),
            source=doc.get("source"),
            metadata=doc.get("metadata") or {},
            embedding=doc.get("embedding"),
            effect=doc.get("effect"),
            id=doc.get("id", ""),
        )


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


def latest_by_identity(units: Iterable[Unit]) -> dict[str, Unit]:
    """Units by identity; of two with one identity, the later wins."""
    out: dict[str, Unit] = {}
    if isinstance(units, Unit) or units is None or isinstance(units, (str, bytes, dict)):
        raise InvalidValue("a snapshot takes a list of units, e.g. [units.message(...)]")
    for u in units:
        if not isinstance(u, Unit):
            raise InvalidValue(f"a snapshot takes units (workbench.units.message(...)), not {u!r}")
        out[u.identity] = u
    return out


def changes(before: Mapping[str, dict[str, Any]], after: Mapping[str, Unit]) -> dict[str, Any]:
    """The snapshot delta that turns a unit set ``before`` into ``after``: units put (new or
    changed) and identities dropped."""
    put = [u.to_json() for ident, u in after.items() if before.get(ident, {}).get("id") != u.id]
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


def _unit(
    kind: str,
    session: Any,
    key: str,
    value: Any,
    source: str | None,
    metadata: Mapping[str, Any] | None,
    **extra: Any,
) -> Unit:
    sid = getattr(session, "id", session)
    if not isinstance(sid, str) or not sid:
        raise InvalidValue(f"a unit's session is a session (or its id), not {session!r}")
    return Unit(
        session=sid,
        key=key,
        type=kind,
        value=value,
        source=source,
        metadata=dict(metadata or {}),
        **extra,
    )


def message(
    session: Any,
    key: str,
    value: Any,
    source: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Unit:
    """A message (``value``: its text, or any JSON-safe form of it)."""
    return _unit("message", session, key, value, source, metadata)


def kv(
    session: Any,
    key: str,
    value: Any,
    source: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Unit:
    """A key/value fact."""
    return _unit("kv", session, key, value, source, metadata)


def embedding(
    session: Any,
    key: str,
    vector: Sequence[float] | Mapping[str, str],
    value: Any = None,
    source: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Unit:
    """An embedding (stored packed as float32) with an optional value (e.g. the text)."""
    if embeddings.is_packed(vector):
        packed = vector
    else:
        if isinstance(vector, (str, bytes)) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in vector
        ):
            raise InvalidValue(
                f"an embedding is a list of numbers (or a packed one), not {vector!r}"
            )
        packed = embeddings.pack(vector)  # type: ignore[arg-type]
    return _unit("embedding", session, key, value, source, metadata, embedding=packed)


def tool_result(
    session: Any,
    key: str,
    value: Any,
    source: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    effect: str | None = None,
) -> Unit:
    """A tool's result; ``effect``: the key of the journaled effect that produced it (what its
    provenance links to, exactly)."""
    return _unit("tool_result", session, key, value, source, metadata, effect=effect)


def summary(
    session: Any,
    key: str,
    value: Any,
    source: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Unit:
    """A summary of other units."""
    return _unit("summary", session, key, value, source, metadata)
