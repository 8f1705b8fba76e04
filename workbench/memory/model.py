"""The memory model: nodes, facts with evidence, supersession and retraction, as journal deltas
(registered with ``workbench.deltas``: versioned, upcastable), and the ``Memory`` State.

Times are unix microseconds (ints) or timezone-aware datetimes, given by the caller or taken
when the delta is built (so a replay never depends on the clock). Nothing is ever deleted: a
superseded or retracted fact stays in the state with when and why, and every view is computed
from that full record (``workbench.memory.view``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta
from operator import itemgetter
from typing import Any

from .. import deltas
from ..deltas import delta
from ..errors import InvalidValue
from ..events import State

MAX_CONFIDENCE = 10_000  # basis points
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def micros(value: Any, what: str) -> int:
    """A time as unix microseconds: an int as it is, a timezone-aware datetime converted."""
    if isinstance(value, bool):
        raise InvalidValue(f"{what} is unix microseconds or an aware datetime, not {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise InvalidValue(f"{what}: a datetime needs a timezone (e.g. tzinfo=timezone.utc)")
        return (value - _EPOCH) // timedelta(microseconds=1)  # exact, no float rounding
    raise InvalidValue(f"{what} is unix microseconds or an aware datetime, not {value!r}")


def _now() -> int:
    return time.time_ns() // 1000


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidValue(f"{what} is a non-empty str, not {value!r}")
    return value


@dataclass(frozen=True)
class Evidence:
    """Where a fact comes from: ``kind`` (test, user, document, model...), a ``locator``
    (a path, URL, message id), an optional content ``digest``, ``span`` [start, end) (byte
    offsets into the UTF-8 text) and the extraction ``provider`` that read it."""

    kind: str
    locator: str
    digest: str | None = None
    span: list[int] | None = None
    provider: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "locator": self.locator}
        if self.digest is not None:
            out["digest"] = self.digest
        if self.span is not None:
            out["span"] = list(self.span)
        if self.provider is not None:
            out["provider"] = self.provider
        return out


def evidence(
    kind: str,
    locator: str,
    digest: str | None = None,
    span: Sequence[int] | None = None,
    provider: str | None = None,
) -> dict[str, Any]:
    """One evidence record (checked now)."""
    _text(kind, "evidence kind")
    _text(locator, "evidence locator")
    if digest is not None:
        _text(digest, "evidence digest")
    if provider is not None:
        _text(provider, "evidence provider")
    if span is not None:
        if (
            not isinstance(span, (list, tuple))
            or len(span) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in span)
            or span[0] > span[1]
        ):
            raise InvalidValue(f"an evidence span is [start, end] with start <= end, not {span!r}")
    out: dict[str, Any] = {"kind": kind, "locator": locator}
    if digest is not None:
        out["digest"] = digest
    if span is not None:
        out["span"] = [span[0], span[1]]
    if provider is not None:
        out["provider"] = provider
    return out


def _evidence_list(items: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(items, (list, tuple)) or not items:
        raise InvalidValue(
            f"{what} needs evidence: pass evidence=[evidence(kind, locator)] (at least one)"
        )
    out = []
    for e in items:
        if isinstance(e, Evidence):
            e = e.to_json()
        if not isinstance(e, Mapping) or "kind" not in e or "locator" not in e:
            raise InvalidValue(f"{what}: {e!r} is not an evidence record; use evidence(...)")
        out.append(
            evidence(e["kind"], e["locator"], e.get("digest"), e.get("span"), e.get("provider"))
        )
    return out


@delta("memory.node", plain=True)
@dataclass(frozen=True)
class NodeUpserted:
    """A node created, or updated in place (its label, aliases, external ids or scope)."""

    id: str
    kind: str
    label: str
    aliases: list[str] = field(default_factory=list)
    external_ids: dict[str, str] = field(default_factory=dict)
    scope: dict[str, str] = field(default_factory=dict)
    recorded_at: int = 0


def node(
    id: str,
    kind: str,
    label: str,
    *,
    aliases: Sequence[str] = (),
    external_ids: Mapping[str, str] | None = None,
    repository: str | None = None,
    branch: str | None = None,
    recorded_at: int | datetime | None = None,
) -> NodeUpserted:
    """A node upsert: an entity the memory knows (a task, a file, a person...)."""
    for v, w in ((id, "a node id"), (kind, "a node kind"), (label, "a node label")):
        _text(v, w)
    scope = {k: v for k, v in (("repository", repository), ("branch", branch)) if v is not None}
    ext = dict(external_ids or {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in ext.items()):
        raise InvalidValue("external_ids maps system names to ids, both str")
    return NodeUpserted(
        id,
        kind,
        label,
        [_text(a, "an alias") for a in aliases],
        ext,
        scope,
        micros(recorded_at, "recorded_at") if recorded_at is not None else _now(),
    )


@delta("memory.fact", plain=True)
@dataclass(frozen=True)
class FactRecorded:
    """A fact: ``subject --predicate--> object`` valid in ``[valid_from, valid_to)``, with its
    evidence; ``supersedes`` names the fact it replaces (which stays, marked superseded)."""

    id: str
    subject: str
    predicate: str
    object: str
    evidence: list[dict[str, Any]]
    valid_from: int | None = None
    valid_to: int | None = None
    observed_at: int | None = None
    recorded_at: int = 0
    agent: str | None = None
    session: str | None = None
    confidence: int = MAX_CONFIDENCE
    supersedes: str | None = None


def fact(
    id: str,
    subject: str,
    predicate: str,
    object: str,
    *,
    evidence: Sequence[Any],
    valid_from: int | datetime | None = None,
    valid_to: int | datetime | None = None,
    observed_at: int | datetime | None = None,
    recorded_at: int | datetime | None = None,
    agent: str | None = None,
    session: str | None = None,
    confidence: int = MAX_CONFIDENCE,
    supersedes: str | None = None,
) -> FactRecorded:
    """A fact recorded (checked now; its endpoints are checked when it is applied)."""
    for v, w in ((id, "a fact id"), (subject, "subject"), (predicate, "predicate")):
        _text(v, w)
    _text(object, "object")
    ev_list = _evidence_list(evidence, f"fact {id!r}")
    vf = micros(valid_from, "valid_from") if valid_from is not None else None
    vt = micros(valid_to, "valid_to") if valid_to is not None else None
    if vf is not None and vt is not None and vt <= vf:
        raise InvalidValue(f"fact {id!r}: valid_to ({vt}) must come after valid_from ({vf})")
    if isinstance(confidence, bool) or not isinstance(confidence, int):
        raise InvalidValue(f"confidence is basis points 0..10000, not {confidence!r}")
    if not 0 <= confidence <= MAX_CONFIDENCE:
        raise InvalidValue(f"confidence is basis points 0..10000, not {confidence!r}")
    for optional, w in ((agent, "agent"), (session, "session"), (supersedes, "supersedes")):
        if optional is not None:
            _text(optional, w)
    return FactRecorded(
        id,
        subject,
        predicate,
        object,
        ev_list,
        vf,
        vt,
        micros(observed_at, "observed_at") if observed_at is not None else None,
        micros(recorded_at, "recorded_at") if recorded_at is not None else _now(),
        agent,
        session,
        confidence,
        supersedes,
    )


@delta("memory.retract", plain=True)
@dataclass(frozen=True)
class FactRetracted:
    """A fact withdrawn (it stays in the record, marked retracted, with the evidence why)."""

    fact: str
    evidence: list[dict[str, Any]]
    recorded_at: int = 0
    agent: str | None = None


def retract(
    fact_id: str,
    *,
    evidence: Sequence[Any],
    recorded_at: int | datetime | None = None,
    agent: str | None = None,
) -> FactRetracted:
    """Withdraw a fact; needs evidence, like a fact."""
    _text(fact_id, "the retracted fact's id")
    return FactRetracted(
        fact_id,
        _evidence_list(evidence, f"the retraction of {fact_id!r}"),
        micros(recorded_at, "recorded_at") if recorded_at is not None else _now(),
        agent,
    )


@delta("memory.predicate", plain=True)
@dataclass(frozen=True)
class PredicateDeclared:
    """A predicate's rules: ``functional`` = one object per subject at a time."""

    name: str
    functional: bool = False


def predicate(name: str, functional: bool = False) -> PredicateDeclared:
    """Declare a predicate (``functional=True``: at any valid time, the fact with the latest
    ``valid_from`` is in force, whatever order facts were recorded in)."""
    _text(name, "a predicate name")
    if not isinstance(functional, bool):
        raise InvalidValue(f"functional is True or False, not {functional!r}")
    return PredicateDeclared(name, functional)


_EVIDENCE_KEYS = frozenset({"kind", "locator", "digest", "span", "provider"})


def _well_formed(items: Any) -> bool:
    """Whether an evidence list is exactly what ``evidence(...)`` builds (the fast check every
    applied fact passes, replays included; ``_evidence_list`` says what is wrong if not)."""
    if type(items) is not list or not items:
        return False
    for e in items:
        if type(e) is not dict:
            return False
        kind, locator = e.get("kind"), e.get("locator")
        if type(kind) is not str or not kind or type(locator) is not str or not locator:
            return False
        if len(e) > 2:
            if not e.keys() <= _EVIDENCE_KEYS:
                return False
            for name in ("digest", "provider"):
                if name in e and (type(e[name]) is not str or not e[name]):
                    return False
            if "span" in e:
                span = e["span"]
                if (
                    type(span) is not list
                    or len(span) != 2
                    or type(span[0]) is not int
                    or type(span[1]) is not int
                    or span[0] > span[1]
                ):
                    return False
    return True


# What a stored v1 delta holds: its tag, its version and its fields. One itemgetter call checks
# them all (KeyError if one is missing; with the length, exactly these); another reads the
# fields a fact's checks need.
_NODE_KEYS = ("@type", "@v", *(f.name for f in fields(NodeUpserted)))
_FACT_KEYS = ("@type", "@v", *(f.name for f in fields(FactRecorded)))
_NODE_STORED, _FACT_STORED = itemgetter(*_NODE_KEYS), itemgetter(*_FACT_KEYS)
_OURS = [-1, False]  # (delta registry generation, whether it still holds our v1 classes)


def _ours() -> bool:
    """Whether memory.node and memory.fact are still this module's version-1 classes (code
    that registers a new version of either must be decoded and upcast instead)."""
    gen = deltas.generation()
    if _OURS[0] != gen:
        _OURS[:] = [
            gen,
            deltas.registered("memory.node") == (1, NodeUpserted)
            and deltas.registered("memory.fact") == (1, FactRecorded),
        ]
    return bool(_OURS[1])


def _v1(stored: dict[str, Any], keys: tuple[str, ...], fields_of: itemgetter[Any]) -> bool:
    """Whether a stored delta holds exactly ``keys`` (``fields_of`` reads them all) at
    version 1, and its kind is still this module's class."""
    try:
        return len(stored) == len(keys) and fields_of(stored)[1] == 1 and _ours()
    except KeyError:
        return False


_FACT_CHECKED = itemgetter(
    "id", "subject", "object", "evidence", "valid_from", "valid_to", "confidence", "supersedes"
)


@dataclass
class Memory(State):
    """What an agent knows: nodes, facts (with their supersession and retraction records) and
    predicate rules. ``view(valid=t, known=k)`` answers bitemporal questions."""

    state_name = "lithify.memory/1"
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    predicates: dict[str, dict[str, Any]] = field(default_factory=dict)

    def apply(self, d: Any) -> None:
        self.__dict__.pop("_source", None)  # a changed state is no longer the point it was read at
        if isinstance(d, NodeUpserted):
            record = dict(d.__dict__)  # the delta's fields, one C-level copy
            record["aliases"] = list(d.aliases)
            record["external_ids"] = dict(d.external_ids)
            record["scope"] = dict(d.scope)
            self.nodes[d.id] = record
        elif isinstance(d, FactRecorded):
            record = dict(d.__dict__)  # the delta's fields, one C-level copy
            record["evidence"] = list(d.evidence)
            self._record(record)
        elif isinstance(d, FactRetracted):
            if not _well_formed(d.evidence):
                _evidence_list(d.evidence, f"the retraction of {d.fact!r}")
                raise InvalidValue(f"the retraction of {d.fact!r} has malformed evidence")
            f = self.facts.get(d.fact)
            if f is None:
                raise InvalidValue(f"no fact {d.fact!r} to retract", name=d.fact)
            if f.get("retracted") is not None:
                raise InvalidValue(f"fact {d.fact!r} is already retracted", name=d.fact)
            f["retracted"] = {
                "at": d.recorded_at,
                "evidence": list(d.evidence),
                "agent": d.agent,
            }
        elif isinstance(d, PredicateDeclared):
            self.predicates[d.name] = {"functional": d.functional}
        else:
            raise InvalidValue(
                f"a Memory journal takes node(), fact(), retract() and predicate() deltas, not "
                f"{d!r}"
            )

    def apply_stored(self, stored: dict[str, Any]) -> bool:
        """Replay's fast path for node and fact deltas (see ``State.apply_stored``): the
        parsed JSON becomes the record itself, with every check ``apply`` makes. Only for
        exactly the fields of the version-1 deltas this module registers (another shape, or
        kinds registered anew, take the decoding path)."""
        kind = stored.get("@type")
        if kind == "memory.fact":
            fits = _v1(stored, _FACT_KEYS, _FACT_STORED) and type(stored["evidence"]) is list
        elif kind == "memory.node":
            fits = (
                _v1(stored, _NODE_KEYS, _NODE_STORED)
                and type(stored["aliases"]) is list
                and type(stored["external_ids"]) is dict
                and type(stored["scope"]) is dict
            )
        else:
            return False
        if not fits:
            return False
        self.__dict__.pop("_source", None)
        del stored["@type"], stored["@v"]
        if kind == "memory.fact":
            self._record(stored)
        else:
            self.nodes[stored["id"]] = stored
        return True

    def _record(self, f: dict[str, Any]) -> None:
        """Record a fact from its fields (a fresh dict this state keeps), after what ``fact()``
        checks (a FactRecorded built by hand, by a plan, or read from a journal must meet the
        same contract)."""
        fid, subject, obj, ev, vf, vt, c, supersedes = _FACT_CHECKED(f)
        if not _well_formed(ev):
            _evidence_list(ev, f"fact {fid!r}")  # raises with what is wrong, if it can
            raise InvalidValue(f"fact {fid!r} has malformed evidence; build it with evidence(...)")
        if vf is not None and vt is not None and vt <= vf:
            raise InvalidValue(f"fact {fid!r}: valid_to must come after valid_from")
        if type(c) is not int or not 0 <= c <= MAX_CONFIDENCE:
            raise InvalidValue(f"fact {fid!r}: confidence is basis points 0..10000")
        facts = self.facts
        if fid in facts:
            raise InvalidValue(f"fact {fid!r} exists; supersede it with a new id", name=fid)
        nodes = self.nodes
        if subject not in nodes or obj not in nodes:
            end, what = (subject, "subject") if subject not in nodes else (obj, "object")
            raise InvalidValue(
                f"fact {fid!r}: its {what} {end!r} is not a node; add it with node(...) first",
                name=end,
            )
        if supersedes is not None:
            old = facts.get(supersedes)
            if old is None:
                raise InvalidValue(f"fact {fid!r} supersedes {supersedes!r}, which is unknown")
            if old.get("superseded_by") is not None:
                raise InvalidValue(
                    f"fact {supersedes!r} is already superseded by {old['superseded_by']!r}; "
                    f"supersede that one instead",
                    name=supersedes,
                )
            if old.get("retracted") is not None:
                raise InvalidValue(f"fact {supersedes!r} is retracted; it cannot be superseded")
            if (old["subject"], old["predicate"]) != (subject, f["predicate"]):
                raise InvalidValue(
                    f"fact {fid!r} supersedes {supersedes!r}, a fact about another subject "
                    "or predicate"
                )
            old["superseded_by"] = fid
            old["superseded_at"] = f["recorded_at"]
        f["superseded_by"] = f["superseded_at"] = f["retracted"] = None
        facts[fid] = f

    def bind_source(self, source: dict[str, Any]) -> None:
        """Where this state was read from (called by ``Branch.state`` and ``at``): views and
        their receipts name it. Not part of the state's value."""
        object.__setattr__(self, "_source", source)

    def view(self, valid: Any = None, known: Any = None) -> Any:
        """The facts in force at valid time ``valid`` as known at ``known`` (either may be
        None: any valid time / everything recorded)."""
        from .view import View

        v = View(
            self,
            micros(valid, "valid") if valid is not None else None,
            micros(known, "known") if known is not None else None,
        )
        v.source = self.__dict__.get("_source")
        return v

    def valid_at(self, t: Any) -> Any:
        """What was true in the world at ``t`` (by valid intervals, whatever the record order)."""
        return self.view(valid=t)

    def known_at(self, k: Any) -> Any:
        """What had been recorded by ``k``."""
        return self.view(known=k)
