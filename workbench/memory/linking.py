"""Entity linking for extraction output: mentions resolved to nodes, never guessed.

A mention is matched, in this order of strength, by stable node id (1.0), external id (1.0),
normalized label within its scope (0.95), alias (0.9), then by word overlap with labels and
aliases (0.8 × the share of the mention's words in the name × (1 + the share of the name's
words the mention and its hint cover) / 2). A mention is resolved when its best candidate scores
at least ``min_score`` and beats the second by at least ``margin``; otherwise it is reported as
ambiguous (with the candidates) or unresolved. The result is a reviewable ``LinkPlan`` whose
events (aliases learned from resolved mentions) are appended atomically with ``apply``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidValue
from .model import NodeUpserted

_SPACE = re.compile(r"[^\w]+", re.UNICODE)


def normalize(text: str) -> str:
    """Lowercase, accents folded, punctuation to single spaces."""
    folded = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in folded if not unicodedata.combining(c))
    return _SPACE.sub(" ", plain.lower()).strip()


@dataclass(frozen=True)
class Mention:
    """Something an extractor found: its text, and whatever else it knows."""

    text: str
    kind: str | None = None
    id: str | None = None  # a stable node id, if the extractor has one
    external_id: tuple[str, str] | None = None  # (system, id)
    hint: str | None = None  # context words that help tell candidates apart
    scope: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise InvalidValue(f"a mention's text is a str, not {self.text!r}")
        if self.hint is not None and not isinstance(self.hint, str):
            raise InvalidValue(f"a mention's hint is a str, not {self.hint!r}")


@dataclass(frozen=True)
class Link:
    mention: Mention
    node: str
    score: float
    how: str


@dataclass
class LinkPlan:
    """Resolved, ambiguous and unresolved mentions, and the events resolution implies."""

    resolved: list[Link] = field(default_factory=list)
    ambiguous: list[tuple[Mention, list[tuple[str, float]]]] = field(default_factory=list)
    unresolved: list[Mention] = field(default_factory=list)
    _nodes: Mapping[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    def events(self) -> list[NodeUpserted]:
        """Node upserts adding each resolved mention's text as an alias where it is new."""
        learned: dict[str, list[str]] = {}
        for link in self.resolved:
            n = self._nodes[link.node]
            known = {normalize(n["label"]), *(normalize(a) for a in n["aliases"])}
            have = learned.setdefault(link.node, list(n["aliases"]))
            if normalize(link.mention.text) not in known | {normalize(a) for a in have}:
                have.append(link.mention.text)
        out = []
        for node_id, aliases in sorted(learned.items()):
            n = self._nodes[node_id]
            if aliases != list(n["aliases"]):
                out.append(
                    NodeUpserted(
                        node_id,
                        n["kind"],
                        n["label"],
                        aliases,
                        dict(n["external_ids"]),
                        dict(n["scope"]),
                        n["recorded_at"],
                    )
                )
        return out

    def apply(self, branch: Any) -> int:
        """Append the plan's events in one transaction; the branch's new head."""
        events = self.events()
        return branch.apply_many(events) if events else branch.head

    def to_json(self) -> dict[str, Any]:
        return {
            "resolved": [
                {"text": x.mention.text, "node": x.node, "score": x.score, "how": x.how}
                for x in self.resolved
            ],
            "ambiguous": [
                {"text": m.text, "candidates": [[c, s] for c, s in cands]}
                for m, cands in self.ambiguous
            ],
            "unresolved": [m.text for m in self.unresolved],
        }


class Linker:
    """Indexes a catalog of nodes once; ``link`` resolves mentions against it."""

    def __init__(self, nodes: Mapping[str, dict[str, Any]]) -> None:
        self.nodes = nodes
        self.by_label: dict[str, list[str]] = {}
        self.by_alias: dict[str, list[str]] = {}
        self.by_external: dict[tuple[str, str], list[str]] = {}
        self.by_word: dict[str, set[str]] = {}
        for node_id, n in nodes.items():
            self.by_label.setdefault(normalize(n["label"]), []).append(node_id)
            for a in n["aliases"]:
                self.by_alias.setdefault(normalize(a), []).append(node_id)
            for system, ext in n["external_ids"].items():
                self.by_external.setdefault((system, ext), []).append(node_id)
            for text in (n["label"], *n["aliases"]):
                for w in normalize(text).split():
                    self.by_word.setdefault(w, set()).add(node_id)

    def _fits(self, node_id: str, m: Mention) -> bool:
        n = self.nodes[node_id]
        if m.kind is not None and n["kind"] != m.kind:
            return False
        if m.scope:
            have = n.get("scope") or {}
            return all(have.get(k) in (None, v) for k, v in m.scope.items())
        return True

    def candidates(self, m: Mention) -> list[tuple[str, float, str]]:
        """(node, score, how) for a mention, best first, ties by node id."""
        best: dict[str, tuple[float, str]] = {}

        def offer(ids: Iterable[str], score: float, how: str) -> None:
            for i in ids:
                if self._fits(i, m) and score > best.get(i, (0.0, ""))[0]:
                    best[i] = (score, how)

        if m.id is not None and m.id in self.nodes and self._fits(m.id, m):
            return [(m.id, 1.0, "id")]  # the extractor's stable id: nothing else competes
        if m.external_id is not None:
            offer(self.by_external.get(tuple(m.external_id), []), 1.0, "external_id")  # type: ignore[arg-type]
        key = normalize(m.text)
        offer(self.by_label.get(key, []), 0.95, "label")
        offer(self.by_alias.get(key, []), 0.9, "alias")
        if best and max(s for s, _ in best.values()) >= 0.9:
            # an exact match: word overlap scores at most 0.8, and cannot make it ambiguous
            return sorted(((i, s, h) for i, (s, h) in best.items()), key=lambda x: (-x[1], x[0]))
        mention_words = set(key.split())
        words = mention_words | set(normalize(m.hint or "").split())
        # candidates from the mention's distinctive words (a word most names share finds
        # nothing by itself); the rarest one when all are common
        known = sorted((len(self.by_word[w]), w) for w in words if w in self.by_word)
        cap = max(50, len(self.nodes) // 100)
        chosen = [w for n, w in known if n <= cap] or [w for _, w in known[:1]]
        pool: set[str] = set()
        for w in chosen:
            pool |= self.by_word[w]
        for i in pool:
            n = self.nodes[i]
            score = max(
                _overlap(mention_words, set(normalize(t).split()), words)
                for t in (n["label"], *n["aliases"])
            )
            offer([i], round(0.8 * score, 6), "words")
        return sorted(((i, s, h) for i, (s, h) in best.items()), key=lambda x: (-x[1], x[0]))

    def link(
        self, mentions: Sequence[Mention], min_score: float = 0.6, margin: float = 0.1
    ) -> LinkPlan:
        """Resolve each mention (see the module docstring)."""
        if not 0 <= min_score <= 1 or not 0 <= margin <= 1:
            raise InvalidValue("min_score and margin are between 0 and 1")
        plan = LinkPlan(_nodes=self.nodes)
        for m in mentions:
            if not isinstance(m, Mention):
                raise InvalidValue(f"link takes Mention(...) values, not {m!r}")
            cands = self.candidates(m)
            if not cands or cands[0][1] < min_score:
                plan.unresolved.append(m)
            elif len(cands) > 1 and cands[0][1] - cands[1][1] < margin:
                plan.ambiguous.append((m, [(c, s) for c, s, _ in cands[:5]]))
            else:
                plan.resolved.append(Link(m, cands[0][0], cands[0][1], cands[0][2]))
        return plan


def _overlap(mention: set[str], name: set[str], context: set[str]) -> float:
    """How well a name matches a mention: the share of the mention's words in the name, times
    how much of the name the mention and its hint cover (half weight)."""
    if not mention or not name:
        return 0.0
    contained = len(mention & name) / len(mention)
    covered = len(context & name) / len(name)
    return contained * (0.5 + 0.5 * covered)


def link(
    mentions: Sequence[Mention],
    memory: Any,
    min_score: float = 0.6,
    margin: float = 0.1,
) -> LinkPlan:
    """Resolve mentions against a Memory's (or a view's) nodes."""
    return Linker(memory.nodes).link(mentions, min_score, margin)
