"""Extraction: filling the memory from text, through a plan a person (or a test) can review.

An ``ExtractionProvider`` reads an evidence text and proposes an ``Extraction``: typed entity
mentions (optionally with byte spans into the UTF-8 text, a stable id, an external id and a
candidate hint) and relation candidates between them, each with a confidence. The
``AutoExtractionEngine`` checks what the provider proposed before anything is written:

- the provider is one the engine knows, and the extraction names that provider;
- every span is ``[start, end)`` inside the text's UTF-8 bytes, on character boundaries, and
  covers exactly the mention's text; every validity interval ends after it starts;
- mention keys are unique and every relation's endpoints are mention keys; ids, kinds,
  predicates and confidences are well formed.

It then links each mention through the ``Linker`` (stable id, external id, scoped label, alias,
words with the hint) with a minimum score and a winner margin. A mention whose best candidate
does not clear the margin is *ambiguous*: the plan reports its candidates and refuses to apply
until the reviewer picks one (``plan.choose``). A mention with no candidate above the minimum is
*unresolved*: the plan creates a node for it under a deterministic id (the same text, kind and
scope give the same id in every run). Each relation becomes a fact with a deterministic id (its
endpoints, predicate, source, digest, provider and span) and full provenance: the evidence
record holds the source kind, locator, digest of the text, span and provider; the fact holds
the agent, session and confidence. Facts already in the memory are skipped, so extracting the
same text twice adds nothing. ``plan.apply(branch)`` appends everything in one transaction,
refused if the branch moved since the plan was made.

A provider whose output may differ between runs (a model) is called through
``branch.effect``: its answer is journaled, so a rerun, or a run resumed after a kill, reads it
back instead of asking again (``extractors.ModelProvider``).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import blake3

from ..errors import InvalidValue
from ..events import canonical
from .linking import Linker, Mention, normalize
from .model import MAX_CONFIDENCE, FactRecorded, NodeUpserted, evidence, micros

_MAX_ID = 200
ANY_KIND = "entity"  # a mention of this kind links to a node of any kind (its type is unknown)


@dataclass(frozen=True)
class EntityMention:
    """An entity the provider found. ``key`` names it within the extraction (relations refer
    to it); ``kind`` its type (``"entity"``: unknown, links to a node of any kind); ``span`` is
    [start, end) in bytes of the UTF-8 evidence text; ``id`` a stable node
    id the provider knows (used as the new node's id when nothing matches); ``hint`` words that
    tell candidates apart; ``confidence`` in basis points."""

    key: str
    text: str
    kind: str
    span: tuple[int, int] | None = None
    id: str | None = None
    external_id: tuple[str, str] | None = None
    hint: str | None = None
    scope: Mapping[str, str] | None = None
    confidence: int = MAX_CONFIDENCE

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "text": self.text, "kind": self.kind}
        for name in ("id", "hint"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if self.span is not None:
            out["span"] = list(self.span)
        if self.external_id is not None:
            out["external_id"] = list(self.external_id)
        if self.scope:
            out["scope"] = dict(self.scope)
        out["confidence"] = self.confidence
        return out


@dataclass(frozen=True)
class RelationCandidate:
    """``subject --predicate--> object`` between two mention keys, optionally valid in
    ``[valid_from, valid_to)`` (unix microseconds or aware datetimes) and with its own span."""

    subject: str
    predicate: str
    object: str
    confidence: int = MAX_CONFIDENCE
    span: tuple[int, int] | None = None
    valid_from: int | datetime | None = None
    valid_to: int | datetime | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
            "confidence": self.confidence,
        }
        if self.span is not None:
            out["span"] = list(self.span)
        for name in ("valid_from", "valid_to"):
            value = getattr(self, name)
            if value is not None:
                out[name] = micros(value, name)
        return out


@dataclass(frozen=True)
class Extraction:
    """What one provider proposed for one text."""

    provider: str
    mentions: list[EntityMention] = field(default_factory=list)
    relations: list[RelationCandidate] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "mentions": [m.to_json() for m in self.mentions],
            "relations": [r.to_json() for r in self.relations],
        }

    @classmethod
    def from_json(cls, doc: Any) -> Extraction:
        """An extraction from its JSON form (a journaled provider answer); malformed input is
        refused with what is wrong."""
        if not isinstance(doc, Mapping):
            raise InvalidValue(f"an extraction is an object, not {type(doc).__name__}")
        try:
            mentions = [
                EntityMention(
                    key=m["key"],
                    text=m["text"],
                    kind=m["kind"],
                    span=_pair(m.get("span"), "span"),
                    id=m.get("id"),
                    external_id=_pair(m.get("external_id"), "external_id"),
                    hint=m.get("hint"),
                    scope=m.get("scope"),
                    confidence=m.get("confidence", MAX_CONFIDENCE),
                )
                for m in doc.get("mentions") or []
            ]
            relations = [
                RelationCandidate(
                    subject=r["subject"],
                    predicate=r["predicate"],
                    object=r["object"],
                    confidence=r.get("confidence", MAX_CONFIDENCE),
                    span=_pair(r.get("span"), "span"),
                    valid_from=r.get("valid_from"),
                    valid_to=r.get("valid_to"),
                )
                for r in doc.get("relations") or []
            ]
        except (KeyError, TypeError, AttributeError) as e:
            raise InvalidValue(f"a malformed extraction ({e!r}): {str(doc)[:200]}") from None
        return cls(str(doc.get("provider", "")), mentions, relations)


def _pair(value: Any, what: str) -> Any:
    if value is None:
        return None
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return (value[0], value[1])
    raise InvalidValue(f"{what} is a pair, not {value!r}")


class ExtractionProvider(Protocol):
    """Reads an evidence text and proposes mentions and relations. ``name`` is its identity
    (checked against what it returns); ``deterministic`` says whether the same text always
    gives the same answer (if not, the engine journals each answer as an effect)."""

    name: str
    deterministic: bool

    def extract(self, text: str, key: str) -> Extraction:
        """What the provider finds in ``text``; ``key`` names the call (the effect key a model
        provider sends as its idempotency key)."""
        ...


@dataclass(frozen=True)
class _Checked:
    """A validated extraction, spans normalized to tuples, times to micros."""

    mentions: list[EntityMention]
    relations: list[tuple[RelationCandidate, int | None, int | None]]


def check_extraction(
    extraction: Any, provider: str, text: str, data: bytes | None = None
) -> _Checked:
    """Validate an extraction against its provider's identity and its evidence text (the
    module docstring lists what is checked); the first problem is raised."""
    if not isinstance(extraction, Extraction):
        raise InvalidValue(
            f"provider {provider!r} returned {type(extraction).__name__}, not an Extraction"
        )
    if extraction.provider != provider:
        raise InvalidValue(
            f"an extraction from provider {provider!r} says it comes from "
            f"{extraction.provider!r}; a provider names itself in what it returns"
        )
    raw = data if data is not None else text.encode("utf-8")
    keys: set[str] = set()
    for m in extraction.mentions:
        if not isinstance(m, EntityMention):
            raise InvalidValue(f"a mention is an EntityMention, not {m!r}")
        _ident(m.key, "a mention key")
        if m.key in keys:
            raise InvalidValue(f"two mentions share the key {m.key!r}; keys name one mention")
        keys.add(m.key)
        if not isinstance(m.text, str) or not m.text.strip():
            raise InvalidValue(f"mention {m.key!r}: its text is a non-empty str")
        _ident(m.kind, f"mention {m.key!r}: a kind")
        if m.id is not None:
            _ident(m.id, f"mention {m.key!r}: a stable id")
        if m.external_id is not None:
            system, ext = m.external_id
            _ident(system, f"mention {m.key!r}: an external id's system")
            _ident(ext, f"mention {m.key!r}: an external id")
        if m.hint is not None and not isinstance(m.hint, str):
            raise InvalidValue(f"mention {m.key!r}: a hint is a str, not {m.hint!r}")
        if m.scope is not None and not (
            isinstance(m.scope, Mapping)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in m.scope.items())
        ):
            raise InvalidValue(f"mention {m.key!r}: scope maps names to str values")
        _confidence(m.confidence, f"mention {m.key!r}")
        if m.span is not None:
            _span(m.span, raw, f"mention {m.key!r}", m.text)
    relations = []
    for r in extraction.relations:
        if not isinstance(r, RelationCandidate):
            raise InvalidValue(f"a relation is a RelationCandidate, not {r!r}")
        what = f"relation {r.subject!r} {r.predicate!r} {r.object!r}"
        for end in (r.subject, r.object):
            if end not in keys:
                raise InvalidValue(f"{what}: {end!r} is not one of the extraction's mentions")
        _ident(r.predicate, f"{what}: a predicate")
        _confidence(r.confidence, what)
        if r.span is not None:
            _span(r.span, raw, what, None)
        vf = micros(r.valid_from, "valid_from") if r.valid_from is not None else None
        vt = micros(r.valid_to, "valid_to") if r.valid_to is not None else None
        if vf is not None and vt is not None and vt <= vf:
            raise InvalidValue(f"{what}: its interval ends ({vt}) before it starts ({vf})")
        relations.append((r, vf, vt))
    return _Checked(list(extraction.mentions), relations)


_IDENT = re.compile(r"[^\s](?:[^\n\r\t]*[^\s])?")


def _ident(value: Any, what: str) -> None:
    if type(value) is not str or len(value) > _MAX_ID or _IDENT.fullmatch(value) is None:
        raise InvalidValue(
            f"{what} is a non-empty str of at most {_MAX_ID} characters without surrounding "
            f"spaces or line breaks, not {value!r}"
        )


def _confidence(value: Any, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CONFIDENCE:
        raise InvalidValue(f"{what}: confidence is basis points 0..10000, not {value!r}")


def _span(span: Any, raw: bytes, what: str, expected: str | None) -> None:
    ok = (
        isinstance(span, tuple)
        and len(span) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in span)
    )
    if not ok or not 0 <= span[0] < span[1] <= len(raw):
        raise InvalidValue(
            f"{what}: span {span!r} is not [start, end) with 0 <= start < end <= "
            f"{len(raw)} (the evidence's length in UTF-8 bytes)"
        )
    start, end = span
    # a UTF-8 continuation byte is 0b10xxxxxx: a span may neither start nor end inside a char
    if (raw[start] & 0xC0) == 0x80 or (end < len(raw) and (raw[end] & 0xC0) == 0x80):
        raise InvalidValue(f"{what}: span {list(span)} cuts a UTF-8 character in two")
    if expected is not None and raw[start:end].decode("utf-8") != expected:
        got = raw[start:end].decode("utf-8")
        raise InvalidValue(
            f"{what}: span {list(span)} covers {got!r} in the evidence, not {expected!r}"
        )


def node_id_for(kind: str, text: str, scope: Mapping[str, str] | None = None) -> str:
    """The deterministic id of a new node for an unmatched entity: its kind, a readable slug
    and a hash of (kind, normalized text, scope)."""
    norm = normalize(text)
    digest = blake3.blake3(
        canonical([kind, norm, dict(scope or {})], "node identity").encode()
    ).hexdigest()
    slug = "-".join(norm.split())[:40] or "entity"
    return f"{kind}:{slug}:{digest[:12]}"


def fact_id_for(
    subject: str,
    predicate: str,
    object: str,
    locator: str,
    digest: str,
    provider: str,
    span: Sequence[int] | None,
) -> str:
    """The deterministic id of an extracted fact: what it says and exactly where it was read."""
    doc = [subject, predicate, object, locator, digest, provider, list(span) if span else None]
    return "fact:" + blake3.blake3(canonical(doc, "fact identity").encode()).hexdigest()[:24]


@dataclass(frozen=True)
class ExtractionPlan:
    """What applying an extraction would write, for review: ``links`` (mentions resolved to
    existing nodes), ``ambiguous`` (mentions with several close candidates: refused until
    ``choose``), ``unresolved`` (mentions given a new node), the new ``nodes``, the learned
    ``aliases``, the ``facts`` and the ``skipped`` fact ids (already in the memory)."""

    provider: str
    source: dict[str, Any]
    links: list[dict[str, Any]]
    ambiguous: list[dict[str, Any]]
    unresolved: list[dict[str, Any]]
    nodes: list[NodeUpserted]
    aliases: list[NodeUpserted]
    facts: list[FactRecorded]
    skipped: list[str]
    based_on: dict[str, Any] | None
    _draft: _Draft = field(repr=False)

    def choose(self, key: str, node_id: str) -> ExtractionPlan:
        """The plan with an ambiguous mention resolved by review to one of its candidates
        (review before applying: the facts are rebuilt against the memory planned from)."""
        held = next((a for a in self.ambiguous if a["key"] == key), None)
        if held is None:
            raise InvalidValue(
                f"mention {key!r} is not ambiguous in this plan; ambiguous: "
                f"{[a['key'] for a in self.ambiguous] or 'none'}"
            )
        if node_id not in [c for c, _ in held["candidates"]]:
            raise InvalidValue(
                f"mention {key!r}: {node_id!r} is not one of its candidates "
                f"{[c for c, _ in held['candidates']]}"
            )
        link = {"key": key, "text": held["text"], "node": node_id, "score": None, "how": "review"}
        draft = dataclasses.replace(self._draft, resolved={**self._draft.resolved, key: node_id})
        facts, skipped = draft.facts()
        return dataclasses.replace(
            self,
            links=[*self.links, link],
            ambiguous=[a for a in self.ambiguous if a["key"] != key],
            facts=facts,
            skipped=skipped,
            _draft=draft,
        )

    def events(self) -> list[Any]:
        """The deltas, in order: new nodes, learned aliases, facts."""
        return [*self.nodes, *self.aliases, *self.facts]

    def apply(self, branch: Any) -> int:
        """Append the plan's events in one transaction (all or nothing); refused while a
        mention is ambiguous, and if the branch moved since the plan was made from it.
        Returns the branch's head."""
        if self.ambiguous:
            raise InvalidValue(
                "the plan has ambiguous mentions ("
                + ", ".join(
                    f"{a['text']!r}: {[c for c, _ in a['candidates']]}" for a in self.ambiguous
                )
                + "); pick one each with plan.choose(key, node) before applying"
            )
        events = self.events()
        expect = None
        if self.based_on is not None and self.based_on.get("branch") == getattr(branch, "id", None):
            expect = self.based_on["seq"]
        if not events:
            return int(branch.head)
        return int(branch.apply_many(events, expect=expect))

    def to_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "source": self.source,
            "based_on": self.based_on,
            "links": self.links,
            "ambiguous": self.ambiguous,
            "unresolved": self.unresolved,
            "nodes": [n.id for n in self.nodes],
            "aliases": [n.id for n in self.aliases],
            "facts": [
                {
                    "id": f.id,
                    "subject": f.subject,
                    "predicate": f.predicate,
                    "object": f.object,
                    "confidence": f.confidence,
                    "evidence": f.evidence,
                }
                for f in self.facts
            ],
            "skipped": self.skipped,
        }


@dataclass(frozen=True)
class _Draft:
    """What a plan's facts are built from (kept so that ``choose`` can rebuild them)."""

    provider: str
    source: dict[str, Any]
    meta: dict[str, Any]
    mentions: dict[str, EntityMention]
    relations: list[tuple[RelationCandidate, int | None, int | None]]
    resolved: dict[str, str]  # mention key -> node id
    known: Mapping[str, Any]  # the memory's facts (to skip what is already recorded)

    def facts(self) -> tuple[list[FactRecorded], list[str]]:
        facts: dict[str, FactRecorded] = {}
        skipped: set[str] = set()
        src, meta = self.source, self.meta
        for r, vf, vt in self.relations:
            s = self.resolved.get(r.subject)
            o = self.resolved.get(r.object)
            if s is None or o is None:
                continue  # an ambiguous endpoint: apply refuses until it is chosen
            span = (
                list(r.span)
                if r.span is not None
                else _cover(self.mentions[r.subject].span, self.mentions[r.object].span)
            )
            fid = fact_id_for(s, r.predicate, o, src["locator"], src["digest"], self.provider, span)
            if fid in self.known:
                skipped.add(fid)
            elif fid not in facts:  # the same relation proposed twice at one place: once
                ev = evidence(src["kind"], src["locator"], src["digest"], span, self.provider)
                facts[fid] = FactRecorded(
                    fid,
                    s,
                    r.predicate,
                    o,
                    [ev],
                    vf,
                    vt,
                    meta["observed_at"],
                    meta["recorded_at"],
                    meta["agent"],
                    meta["session"],
                    r.confidence,
                    None,
                )
        return [facts[k] for k in sorted(facts)], sorted(skipped)


def _cover(a: tuple[int, int] | None, b: tuple[int, int] | None) -> list[int] | None:
    if a is None or b is None:
        return None
    return [min(a[0], b[0]), max(a[1], b[1])]


class AutoExtractionEngine:
    """Runs registered providers over evidence texts and turns what they propose into
    reviewable plans (see the module docstring)."""

    def __init__(
        self,
        providers: Sequence[ExtractionProvider],
        *,
        min_score: float = 0.6,
        margin: float = 0.1,
    ) -> None:
        if not 0 <= min_score <= 1 or not 0 <= margin <= 1:
            raise InvalidValue("min_score and margin are between 0 and 1")
        self.providers: dict[str, ExtractionProvider] = {}
        for p in providers:
            name = getattr(p, "name", None)
            if not isinstance(name, str) or not name or not callable(getattr(p, "extract", None)):
                raise InvalidValue(
                    f"{p!r} is not an extraction provider (a name and extract(text, key))"
                )
            if name in self.providers:
                raise InvalidValue(f"two extraction providers are named {name!r}")
            self.providers[name] = p
        self.min_score = min_score
        self.margin = margin
        self._linker: tuple[Any, Linker] | None = None

    def _linker_for(self, memory: Any) -> Linker:
        # A state read at one point of a branch does not change: its linker index is kept.
        # Anything else (a Memory being built in process) is indexed afresh.
        source = memory.__dict__.get("_source") if hasattr(memory, "__dict__") else None
        token = (source["branch"], source["seq"], id(memory)) if source else None
        if token is not None and self._linker is not None and self._linker[0] == token:
            return self._linker[1]
        linker = Linker(memory.nodes)
        self._linker = (token, linker) if token is not None else None
        return linker

    def plan(
        self,
        target: Any,
        text: str,
        *,
        provider: str,
        locator: str,
        source: str = "document",
        agent: str | None = None,
        session: str | None = None,
        recorded_at: int | datetime | None = None,
        observed_at: int | datetime | None = None,
    ) -> ExtractionPlan:
        """The plan for what ``provider`` finds in ``text`` (read from ``locator``), against
        ``target``: a branch (its state; a non-deterministic provider's answer is journaled
        on it as an effect) or a Memory. Nothing is written; ``plan.apply(branch)`` writes."""
        p = self.providers.get(provider) if isinstance(provider, str) else None
        if p is None:
            raise InvalidValue(
                f"unknown extraction provider {provider!r}; this engine has "
                f"{', '.join(sorted(self.providers)) or 'none'}"
            )
        if not isinstance(text, str) or not text:
            raise InvalidValue("extraction needs the evidence text (a non-empty str)")
        for value, what in ((locator, "locator"), (source, "source")):
            if not isinstance(value, str) or not value:
                raise InvalidValue(f"{what} is a non-empty str, not {value!r}")
        for who, what in ((agent, "agent"), (session, "session")):
            if who is not None and (not isinstance(who, str) or not who):
                raise InvalidValue(f"{what} is a non-empty str, not {who!r}")
        data = text.encode("utf-8")
        digest = blake3.blake3(data).hexdigest()
        branch = target if hasattr(target, "effect") else None
        memory = target.state() if branch is not None else target
        if not hasattr(memory, "nodes") or not hasattr(memory, "facts"):
            raise InvalidValue("extraction plans against a Memory branch or a Memory state")
        key = f"extract:{provider}:{locator}:{digest[:32]}"
        if getattr(p, "deterministic", False):
            found = p.extract(text, key)
        else:
            if branch is None:
                raise InvalidValue(
                    f"provider {provider!r} is not deterministic: its answers are journaled as "
                    "effects, so plan against the branch (engine.plan(branch, ...))"
                )
            found = Extraction.from_json(
                branch.effect(key, lambda: _answer(p, text, key, provider))
            )
            memory = branch.state()  # the plan follows the effect's event
        checked = check_extraction(found, provider, text, data)
        at = micros(recorded_at, "recorded_at") if recorded_at is not None else _now()
        meta = {
            "recorded_at": at,
            "observed_at": micros(observed_at, "observed_at") if observed_at is not None else None,
            "agent": agent,
            "session": session,
        }
        return self._plan(
            memory, checked, provider, {"kind": source, "locator": locator, "digest": digest}, meta
        )

    def _plan(
        self,
        memory: Any,
        checked: _Checked,
        provider: str,
        source: dict[str, Any],
        meta: dict[str, Any],
    ) -> ExtractionPlan:
        linker = self._linker_for(memory)
        mentions = {m.key: m for m in checked.mentions}
        queries = [
            Mention(
                m.text, None if m.kind == ANY_KIND else m.kind, m.id, m.external_id, m.hint, m.scope
            )
            for m in checked.mentions
        ]
        linked = linker.link(queries, self.min_score, self.margin)
        keys = {id(q): m.key for q, m in zip(queries, checked.mentions, strict=True)}
        resolved: dict[str, str] = {}
        links, ambiguous, unresolved = [], [], []
        for x in linked.resolved:
            k = keys[id(x.mention)]
            resolved[k] = x.node
            links.append(
                {"key": k, "text": x.mention.text, "node": x.node, "score": x.score, "how": x.how}
            )
        for q, cands in linked.ambiguous:
            k = keys[id(q)]
            ambiguous.append({"key": k, "text": q.text, "candidates": [list(c) for c in cands]})
        new: dict[str, NodeUpserted] = {}
        for q in linked.unresolved:
            k = keys[id(q)]
            m = mentions[k]
            nid = m.id if m.id is not None else node_id_for(m.kind, m.text, m.scope)
            scope = dict(m.scope or {})
            if nid not in new and nid not in memory.nodes:
                ext = {m.external_id[0]: m.external_id[1]} if m.external_id else {}
                new[nid] = NodeUpserted(nid, m.kind, m.text, [], ext, scope, meta["recorded_at"])
            resolved[k] = nid
            unresolved.append({"key": k, "text": m.text, "node": nid})
        based_on = memory.__dict__.get("_source") if hasattr(memory, "__dict__") else None
        draft = _Draft(provider, source, meta, mentions, checked.relations, resolved, memory.facts)
        facts, skipped = draft.facts()
        return ExtractionPlan(
            provider=provider,
            source=source,
            links=links,
            ambiguous=ambiguous,
            unresolved=unresolved,
            nodes=[new[k] for k in sorted(new)],
            aliases=linked.events(),
            facts=facts,
            skipped=skipped,
            based_on=dict(based_on) if based_on else None,
            _draft=draft,
        )


def _answer(p: ExtractionProvider, text: str, key: str, provider: str) -> dict[str, Any]:
    found = p.extract(text, key)
    if not isinstance(found, Extraction):
        raise InvalidValue(
            f"provider {provider!r} returned {type(found).__name__}, not an Extraction"
        )
    return found.to_json()


def _now() -> int:
    return time.time_ns() // 1000
