"""Entity linking for extraction output: mentions resolved to nodes, never guessed.

A mention is matched, in this order of strength, by stable node id (1.0), external id (1.0),
normalized label within its scope (0.95), alias (0.9), then by word overlap with labels and
aliases (0.8 × the share of the mention's words in the name × (1 + the share of the name's
words the mention and its hint cover) / 2). A mention is resolved when its best candidate scores
at least ``min_score`` and beats the second by at least ``margin``; otherwise it is reported as
ambiguous (with the candidates) or unresolved. The result is a reviewable ``LinkPlan`` whose
events (aliases learned from mentions resolved by their text: a label or word match, never an id
or external id) are appended atomically with ``apply``.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Any

from ..errors import InvalidValue
from .model import NodeUpserted

_SPACE = re.compile(r"[^\w]+", re.UNICODE)
TEXT_MATCHES = frozenset({"label", "words"})  # the matches that may teach an alias


def normalize(text: str) -> str:
    """Lowercase, accents folded, punctuation to single spaces."""
    if text.isascii():  # nothing to fold (most names): skip the decomposition
        return _SPACE.sub(" ", text.lower()).strip()
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
        """Node upserts adding a resolved mention's text as an alias where it is new. Only a
        match on the mention's text against the node's names (``label``, ``words``) teaches an
        alias: a mention resolved by stable or external id may carry any text ("someone", the
        id itself), which is not a name of the node."""
        learned: dict[str, list[str]] = {}
        for link in self.resolved:
            if link.how != "words":
                continue  # of TEXT_MATCHES, a label match's text is the label's, normalized
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
        head: int = branch.apply_many(events) if events else branch.head
        return head

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
        self.by_word: dict[str, set[str]] = {}  # word -> nodes with it in a name
        # every name (a label or an alias) is a row: its node, its word count, the rows of each
        # word, and each node's rows; word overlap is counted over these in C (sets, Counter)
        self.row_node: list[str] = []
        self.row_len: list[int] = []
        self.rows_by_word: dict[str, set[int]] = {}
        self.rows_of: dict[str, tuple[int, ...]] = {}
        row_node, row_len, rows_by_word, by_word = (
            self.row_node,
            self.row_len,
            self.rows_by_word,
            self.by_word,
        )
        for node_id, n in nodes.items():
            label = normalize(n["label"])
            self.by_label.setdefault(label, []).append(node_id)
            names = [label]
            for a in n["aliases"]:
                alias = normalize(a)
                self.by_alias.setdefault(alias, []).append(node_id)
                names.append(alias)
            for system, ext in n["external_ids"].items():
                self.by_external.setdefault((system, ext), []).append(node_id)
            first = len(row_node)
            for name in names:
                row = len(row_node)
                ws = set(name.split())
                row_node.append(node_id)
                row_len.append(len(ws))
                for w in ws:
                    held = rows_by_word.get(w)
                    if held is None:
                        rows_by_word[w] = {row}
                        by_word[w] = {node_id}
                    else:
                        held.add(row)
                        by_word[w].add(node_id)
            self.rows_of[node_id] = tuple(range(first, len(row_node)))
        self._arrays: tuple[Any, Any] | None = None

    def _row_arrays(self) -> tuple[Any, Any]:
        """Each row's word count, and its node's place in node id order (ranking ties go by
        node id), as numpy arrays; built on the first word match."""
        if self._arrays is None:
            import numpy as np

            place = {node_id: k for k, node_id in enumerate(sorted(self.rows_of))}
            self._arrays = (
                np.asarray(self.row_len, dtype=np.float64),
                np.fromiter(map(place.__getitem__, self.row_node), np.int64, len(self.row_node)),
            )
        return self._arrays

    def _fits(self, node_id: str, m: Mention) -> bool:
        n = self.nodes[node_id]
        if m.kind is not None and n["kind"] != m.kind:
            return False
        if m.scope:
            have = n.get("scope") or {}
            return all(have.get(k) in (None, v) for k, v in m.scope.items())
        return True

    def candidates(self, m: Mention, limit: int | None = None) -> list[tuple[str, float, str]]:
        """(node, score, how) for a mention, best first, ties by node id (the first ``limit``)."""
        if m.id is not None and m.id in self.nodes and self._fits(m.id, m):
            return [(m.id, 1.0, "id")]  # the extractor's stable id: nothing else competes
        best: dict[str, tuple[float, str]] = {}

        def offer(ids: Iterable[str], score: float, how: str) -> None:
            for i in ids:
                if self._fits(i, m) and score > best.get(i, (0.0, ""))[0]:
                    best[i] = (score, how)

        if m.external_id is not None:
            offer(self.by_external.get(tuple(m.external_id), []), 1.0, "external_id")  # type: ignore[arg-type]
        key = normalize(m.text)
        offer(self.by_label.get(key, []), 0.95, "label")
        offer(self.by_alias.get(key, []), 0.9, "alias")
        if best:
            # an exact match (>= 0.9): word overlap scores at most 0.8 and cannot compete
            exact = sorted((-s, i, h) for i, (s, h) in best.items())
            return [(i, -s, h) for s, i, h in exact[:limit]]
        mention_words = set(key.split())
        if not mention_words:
            return []
        words = mention_words | set(normalize(m.hint or "").split())
        # candidates from the mention's distinctive words (a word most names share finds
        # nothing by itself); the rarest one when all are common
        by_word = self.by_word
        known = sorted((len(by_word[w]), w) for w in words if w in by_word)
        cap = max(50, len(self.nodes) // 100)
        chosen = [w for n, w in known if n <= cap] or [w for _, w in known[:1]]
        # the names (rows) with a mention word, of the nodes with a chosen word (all of them
        # when every known mention word is chosen); each one's shared mention words (hits)
        # and covered words of the mention and its hint; counted in C
        rows_by_word = self.rows_by_word
        found = [w for w in mention_words if w in rows_by_word]
        if not found:
            return []
        if set(found) <= set(chosen):
            in_pool = [rows_by_word[w] for w in found]
        else:
            pool = set().union(*(by_word[w] for w in chosen))
            pool_rows = set(chain.from_iterable(map(self.rows_of.__getitem__, pool)))
            in_pool = [pool_rows & rows_by_word[w] for w in found]
        if len(in_pool) == 1:  # one mention word (most mentions): each row shares it once
            rows = list(in_pool[0])
            shared = [1] * len(rows)
        else:
            hits = Counter(chain.from_iterable(in_pool))
            rows, shared = list(hits), list(hits.values())
        if not rows:
            return []
        # the hint's other words each row has: covered = shared + those (a word every row has
        # counts once for all, the others row by row)
        others = [w for w in words if w not in mention_words and w in rows_by_word]
        everywhere = 0
        extra: dict[int, int] = {}
        if others:
            hit_rows = in_pool[0] if len(in_pool) == 1 else set(rows)
            partial = []
            for w in others:
                common = hit_rows & rows_by_word[w]
                if len(common) == len(rows):
                    everywhere += 1
                elif common:
                    partial.append(common)
            if partial:
                extra = Counter(chain.from_iterable(partial))
        # a name scores shared x (1 + the share of its words covered), a node its best name:
        # computed over arrays, ordered best first, ties by node id; then each node's first
        # (best) row, until ``limit`` nodes that fit the mention
        import numpy as np

        lens, ranks = self._row_arrays()
        at = np.fromiter(rows, np.int64, len(rows))
        s = np.fromiter(shared, np.float64, len(rows))
        e = np.fromiter(map(extra.get, rows, repeat(0)), np.float64, len(rows))
        values = s * (1.0 + (s + (e + everywhere)) / lens[at])
        order = np.lexsort((ranks[at], -values))
        check = m.kind is not None or bool(m.scope)
        seen: set[str] = set()
        ranked: list[tuple[float, str]] = []
        row_node = self.row_node
        for row, value in zip(at[order].tolist(), values[order].tolist(), strict=True):
            if limit is not None and len(ranked) >= limit:
                break
            i = row_node[row]
            if i in seen:
                continue
            seen.add(i)
            if check and not self._fits(i, m):
                continue
            ranked.append((value, i))
        share = 0.4 / len(mention_words)  # 0.8 x (0.5 + 0.5 x covered) = 0.4 x (1 + covered)
        return [(i, round(share * value, 6), "words") for value, i in ranked]

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
            cands = self.candidates(m, 5)
            if not cands or cands[0][1] < min_score:
                plan.unresolved.append(m)
            elif len(cands) > 1 and cands[0][1] - cands[1][1] < margin:
                plan.ambiguous.append((m, [(c, s) for c, s, _ in cands]))
            else:
                plan.resolved.append(Link(m, cands[0][0], cands[0][1], cands[0][2]))
        return plan


def link(
    mentions: Sequence[Mention],
    memory: Any,
    min_score: float = 0.6,
    margin: float = 0.1,
) -> LinkPlan:
    """Resolve mentions against a Memory's (or a view's) nodes."""
    return Linker(memory.nodes).link(mentions, min_score, margin)
