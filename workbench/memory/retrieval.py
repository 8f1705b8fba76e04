"""Retrieval providers behind one small protocol, and integer reciprocal-rank fusion.

A provider ranks documents ``(id, text)`` for a query: ``literal`` (query words found whole),
``lexical`` (BM25, through the ``bm25s`` library) and ``semantic`` (cosine similarity of a
user-supplied embedding function; tests use a deterministic one). ``fuse`` combines rankings
with integer RRF (``sum(SCALE // (K + rank))``, so the same inputs give the same order on any
machine) and keeps, for each hit, every provider's channel, rank and raw score.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import InvalidValue

RRF_K = 60
RRF_SCALE = 1_000_000
_WORD = re.compile(r"\w\w+", re.UNICODE)

Docs = Sequence[tuple[str, str]]


def words(text: str) -> list[str]:
    """Lowercased words of two or more characters."""
    return _WORD.findall(text.lower())


class Provider(Protocol):
    """Ranks documents for a query: [(doc id, raw score)], best first, ties by id."""

    name: str
    channel: str

    def rank(self, query: str, docs: Docs) -> list[tuple[str, float]]: ...


class LiteralProvider:
    """Documents holding query words, ranked by how many distinct ones."""

    name = "literal"
    channel = "text"

    def rank(self, query: str, docs: Docs) -> list[tuple[str, float]]:
        q = set(words(query))
        if not q:
            return []
        scored = [(i, float(len(q & set(words(t))))) for i, t in docs]
        return sorted(((i, s) for i, s in scored if s > 0), key=lambda x: (-x[1], x[0]))


class LexicalProvider:
    """BM25 (``bm25s``) over the documents' words; the index is kept while the documents are
    the same."""

    name = "lexical"
    channel = "bm25"

    def __init__(self) -> None:
        self._key: tuple[str, ...] | None = None  # the documents' ids and a hash of their texts
        self._index: Any = None

    def rank(self, query: str, docs: Docs) -> list[tuple[str, float]]:
        import blake3
        import bm25s

        if not docs:
            return []
        ids = tuple(i for i, _ in docs)
        key = (*ids, blake3.blake3("\x00".join(t for _, t in docs).encode()).hexdigest())
        if key != self._key:
            corpus = [" ".join(words(t)) or "_" for _, t in docs]
            tokens = bm25s.tokenize(corpus, stopwords=None, show_progress=False)
            index = bm25s.BM25()
            index.index(tokens, show_progress=False)
            self._key, self._index = key, index
        q = [w for w in words(query) if w in self._index.vocab_dict]
        if not q:
            return []
        found, scores = self._index.retrieve([q], k=len(docs), show_progress=False)
        out = [(ids[int(j)], float(s)) for j, s in zip(found[0], scores[0], strict=True) if s > 0]
        return sorted(out, key=lambda x: (-x[1], x[0]))


class SemanticProvider:
    """Cosine similarity of ``embed(texts) -> vectors`` (any embedding function)."""

    channel = "embedding"

    def __init__(
        self, embed: Callable[[list[str]], Sequence[Sequence[float]]], name: str = "semantic"
    ) -> None:
        if not callable(embed):
            raise InvalidValue("SemanticProvider takes an embedding function: texts -> vectors")
        self.embed = embed
        self.name = name
        self._cache: dict[str, list[float]] = {}

    def _vectors(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in texts if t not in self._cache]
        if missing:
            for t, v in zip(missing, self.embed(missing), strict=True):
                self._cache[t] = [float(x) for x in v]
        return [self._cache[t] for t in texts]

    def rank(self, query: str, docs: Docs) -> list[tuple[str, float]]:
        if not docs:
            return []
        (qv,) = self._vectors([query])
        dv = self._vectors([t for _, t in docs])
        qn = math.sqrt(sum(x * x for x in qv)) or 1.0
        out = []
        for (i, _), v in zip(docs, dv, strict=True):
            n = math.sqrt(sum(x * x for x in v)) or 1.0
            s = sum(a * b for a, b in zip(qv, v, strict=True)) / (qn * n)
            if s > 0:
                out.append((i, round(s, 12)))
        return sorted(out, key=lambda x: (-x[1], x[0]))


def hashed_embedding(dim: int = 64) -> Callable[[list[str]], list[list[float]]]:
    """A deterministic bag-of-words embedding (words hashed into ``dim`` buckets): for tests
    and offline runs, not for quality."""
    import blake3

    def embed(texts: list[str]) -> list[list[float]]:
        out = []
        for t in texts:
            v = [0.0] * dim
            for w in words(t):
                h = blake3.blake3(w.encode()).digest()
                v[int.from_bytes(h[:4], "little") % dim] += 1.0 if h[4] & 1 else -1.0
            out.append(v)
        return out

    return embed


@dataclass(frozen=True)
class Hit:
    """A fused hit: its integer RRF score and, per provider, (provider, channel, rank, raw)."""

    id: str
    score: int
    sources: list[tuple[str, str, int, float]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "score": self.score,
            "sources": [
                {"provider": p, "channel": c, "rank": r, "raw": raw}
                for p, c, r, raw in self.sources
            ],
        }


def fuse(rankings: Mapping[str, tuple[str, list[tuple[str, float]]]], k: int = RRF_K) -> list[Hit]:
    """Integer reciprocal-rank fusion of {provider: (channel, [(id, raw)] best first)}: best
    first, ties by id."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidValue(f"the RRF constant k is a positive int, not {k!r}")
    scores: dict[str, int] = {}
    sources: dict[str, list[tuple[str, str, int, float]]] = {}
    for provider in sorted(rankings):
        channel, ranked = rankings[provider]
        for rank, (i, raw) in enumerate(ranked, start=1):
            scores[i] = scores.get(i, 0) + RRF_SCALE // (k + rank)
            sources.setdefault(i, []).append((provider, channel, rank, raw))
    return [Hit(i, scores[i], sources[i]) for i in sorted(scores, key=lambda i: (-scores[i], i))]


def search(providers: Sequence[Provider], query: str, docs: Docs, top_k: int) -> list[Hit]:
    """Each provider's ranking, fused; the first ``top_k`` hits."""
    names = [p.name for p in providers]
    if len(set(names)) != len(names):
        raise InvalidValue(f"two retrieval providers share a name ({names}); name them apart")
    rankings = {p.name: (p.channel, p.rank(query, docs)) for p in providers}
    return fuse(rankings)[:top_k]


PROVIDERS: dict[str, Callable[[], Provider]] = {
    "literal": LiteralProvider,
    "lexical": LexicalProvider,
    "semantic": lambda: SemanticProvider(hashed_embedding()),
}


def configuration(name: str) -> list[Provider]:
    """Providers by configuration name: literal, lexical, semantic, or several joined by "+"
    (fused), e.g. "literal+lexical"; "fused" is all three."""
    parts = ["literal", "lexical", "semantic"] if name == "fused" else name.split("+")
    unknown = [p for p in parts if p not in PROVIDERS]
    if unknown or not parts:
        raise InvalidValue(
            f"retrieval configuration {name!r}: use literal, lexical, semantic, fused or a "
            "'+'-joined list of them"
        )
    return [PROVIDERS[p]() for p in parts]
