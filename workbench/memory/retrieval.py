"""Retrieval providers behind one small protocol, and fusion led by the first provider.

A provider ranks documents ``(id, text)`` for a query: ``literal`` (query words found whole),
``lexical`` (BM25, scored as the ``bm25s`` library scores it), ``graph`` (BM25 over each fact's
neighbourhood in the memory: what cites it, what it follows; see ``GraphProvider``) and
``semantic`` (cosine similarity of a user-supplied embedding function, such as
``journaled_embedding`` over an OpenAI-compatible endpoint; ``hashed`` is a deterministic bag
of words for tests). A ``Ranking`` fuses the providers of a configuration as far as it is
read (a compile reads as far as its budget goes): each provider's scores as a share of its best
for the query, the first provider's counted whole and every other's weighted by how far its
first ten hits agree with the first provider's first ten, merged best first; it keeps, for each
hit, every provider's channel, rank and raw score. ``search`` gives its first ``top_k``.
``fuse`` is integer reciprocal-rank fusion (``sum(SCALE // (K + rank))``), the symmetric
alternative.

Why not RRF for configurations: it counts a rank the same whatever the list's quality and
rewards agreement, so a weak provider's head (BM25 on small talk) pushes a strong provider's
best hits (the graph's, which already read each document's own words) out of a small budget:
``graph+lexical`` fell below ``graph`` at every budget. Led by its first provider, a fusion
takes the others' hits where they score as high as the leader's, in proportion to how far they
agree with it, and no further.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import InvalidValue
from .bm25 import _bm25, _bm25_of, _postings, _scores, words

RRF_K = 60
RRF_SCALE = 1_000_000
SCORE_SCALE = 1_000_000_000  # a fused hit's score: its weighted share of the best, in these units
AGREE = 10  # how many first hits of each provider a fusion compares with the leader's

Docs = Sequence[tuple[str, str]]


class Provider(Protocol):
    """Ranks documents for a query: [(doc id, raw score)], best first, ties by id; with
    ``limit``, only the first ``limit`` (a provider may ignore it: ``search`` cuts anyway)."""

    name: str
    channel: str

    def rank(self, query: str, docs: Docs, limit: int | None = None) -> list[tuple[str, float]]: ...


class _Corpus:
    """What a provider keeps about the documents it ranked last: their ids, the order of the
    ids (for ties) and whatever index it built. The same list again is recognized by identity,
    any other by its content (ids and a hash of the texts)."""

    def __init__(self, docs: Docs, index: Any) -> None:
        import numpy as np

        self.docs = docs
        self.length = len(docs)
        self.ids = [i for i, _ in docs]
        self.key = _content_key(docs)
        order = sorted(range(len(self.ids)), key=self.ids.__getitem__)
        tie = np.empty(len(order), dtype=np.int64)
        tie[order] = np.arange(len(order))
        self.tie = tie
        self.index = index

    def same(self, docs: Docs) -> bool:
        if docs is self.docs and len(docs) == self.length:
            return True
        return len(docs) == self.length and _content_key(docs) == self.key

    def top(self, scores: Any, limit: int | None) -> list[tuple[str, float]]:
        """(id, score) of the documents scoring above 0, best first, ties by id."""
        import numpy as np

        pos = np.nonzero(scores > 0)[0]
        if limit is not None and len(pos) > limit:
            cut = np.partition(scores[pos], len(pos) - limit)[len(pos) - limit]
            pos = pos[scores[pos] >= cut]  # the best ``limit``, and whatever ties the last
        pos = pos[np.lexsort((self.tie[pos], -scores[pos]))]
        if limit is not None:
            pos = pos[:limit]
        ids = self.ids
        return [(ids[i], float(scores[i])) for i in pos.tolist()]


def _content_key(docs: Docs) -> tuple[str, ...]:
    import blake3

    return (
        *(i for i, _ in docs),
        blake3.blake3("\x00".join(t for _, t in docs).encode()).hexdigest(),
    )


class LiteralProvider:
    """Documents holding query words, ranked by how many distinct ones."""

    name = "literal"
    channel = "text"

    def __init__(self) -> None:
        self._corpus: _Corpus | None = None

    def rank(self, query: str, docs: Docs, limit: int | None = None) -> list[tuple[str, float]]:
        import numpy as np

        q = set(words(query))
        if not q or not docs:
            return []
        if self._corpus is None or not self._corpus.same(docs):
            self._corpus = _Corpus(docs, _postings([words(t) for _, t in docs]))
        p = self._corpus.index
        counts = np.zeros(len(docs))
        for w in q:
            t = p.vocab.get(w)
            if t is not None:
                counts[p.doc[p.indptr[t] : p.indptr[t + 1]]] += 1.0
        return self._corpus.top(counts, limit)


class LexicalProvider:
    """BM25 over the documents' words (``bm25s``'s scores, see ``BM25Index``); the index is
    kept while the documents are the same."""

    name = "lexical"
    channel = "bm25"

    def __init__(self) -> None:
        self._corpus: _Corpus | None = None

    def rank(self, query: str, docs: Docs, limit: int | None = None) -> list[tuple[str, float]]:
        if not docs:
            return []
        if self._corpus is None or not self._corpus.same(docs):
            self._corpus = _Corpus(docs, _bm25([t for _, t in docs]))
        return self._corpus.top(_scores(self._corpus.index, query, len(docs)), limit)


class SemanticProvider:
    """Cosine similarity of ``embed(texts) -> vectors`` (any embedding function); vectors are
    kept per text, so each text is embedded once."""

    channel = "embedding"

    def __init__(
        self, embed: Callable[[list[str]], Sequence[Sequence[float]]], name: str = "semantic"
    ) -> None:
        if not callable(embed):
            raise InvalidValue("SemanticProvider takes an embedding function: texts -> vectors")
        self.embed = embed
        self.name = name
        self._cache: dict[str, Any] = {}
        self._corpus: _Corpus | None = None

    def _vectors(self, texts: list[str]) -> list[Any]:
        import numpy as np

        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            got = self.embed(missing)
            if len(got) != len(missing):
                raise InvalidValue(
                    f"the embedding function returned {len(got)} vectors for {len(missing)} texts"
                )
            for t, v in zip(missing, got, strict=True):
                vec = np.asarray(v, dtype=np.float64)
                norm = float(np.linalg.norm(vec))
                self._cache[t] = vec / norm if norm else vec
        return [self._cache[t] for t in texts]

    def rank(self, query: str, docs: Docs, limit: int | None = None) -> list[tuple[str, float]]:
        import numpy as np

        if not docs:
            return []
        if self._corpus is None or not self._corpus.same(docs):
            self._corpus = _Corpus(docs, np.vstack(self._vectors([t for _, t in docs])))
        matrix = self._corpus.index
        (qv,) = self._vectors([query])
        if qv.shape[0] != matrix.shape[1]:
            raise InvalidValue(
                f"the query's embedding has {qv.shape[0]} dimensions, the documents' "
                f"{matrix.shape[1]}: one embedding function for both"
            )
        # rounded: the same order on any machine whatever its last bits of float arithmetic
        return self._corpus.top(np.round(matrix @ qv, 12), limit)


def hashed_embedding(dim: int = 64) -> Callable[[list[str]], list[list[float]]]:
    """A deterministic bag-of-words embedding (words hashed into ``dim`` buckets): for tests
    and offline runs, not for quality (the ``hashed`` configuration)."""
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


def journaled_embedding(
    branch: Any, embedder: Any, name: str, batch: int = 64
) -> Callable[[list[str]], list[list[float]]]:
    """An embedding function whose every call is journaled as an effect on ``branch`` (a batch
    of texts per effect, its key naming ``name`` and a hash of the texts; vectors stored as
    packed float32), so a rerun or a resumed run reads the vectors back and never embeds a text
    twice. ``embedder``: a function ``texts -> vectors``, or a client with ``embed(key,
    texts)`` (such as ``OpenAIModel``, which sends the key's hash as ``Idempotency-Key``)."""
    import blake3

    from ..embeddings import pack, unpack

    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise InvalidValue(f"batch is a positive int, not {batch!r}")
    client = getattr(embedder, "embed", None)
    if not callable(client) and not callable(embedder):
        raise InvalidValue("an embedder is a function texts -> vectors, or has embed(key, texts)")

    def call(key: str, part: list[str]) -> list[dict[str, str]]:
        got = client(key, part) if callable(client) else embedder(part)
        if len(got) != len(part):
            raise InvalidValue(f"{len(got)} vectors came back for {len(part)} texts ({key})")
        return [pack(v) for v in got]

    def run(texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for lo in range(0, len(texts), batch):
            part = list(texts[lo : lo + batch])
            digest = blake3.blake3("\x00".join(part).encode()).hexdigest()[:32]
            key = f"embed:{name}:{digest}"
            out.extend(unpack(r) for r in branch.effect(key, call, key, part))
        return out

    return run


class GraphProvider:
    """Ranks facts by their neighbourhood in the memory graph. A fact is described by its
    own text, the statements of the facts whose evidence cites it or its object (at most
    ``specific`` citations each: an observation about a dialogue turn), and the text of the
    nodes its object leads to through ``follow`` predicates (the turn a turn replies to); BM25
    ranks those descriptions. Facts citing more (a session's summary) raise all they cite by
    ``prior`` times their own BM25 score. Scores are each channel's share of its best."""

    name = "graph"
    channel = "graph"

    def __init__(
        self,
        memory: Any,
        *,
        follow: Sequence[str] = ("replies_to",),
        specific: int = 4,
        prior: float = 0.3,
    ) -> None:
        view = (
            memory.view() if hasattr(memory, "view") and not hasattr(memory, "in_force") else memory
        )
        if not hasattr(view, "in_force") or not hasattr(view, "nodes"):
            raise InvalidValue(
                "graph retrieval walks a memory: pass a Memory or a view "
                "(configuration('graph', memory=state))"
            )
        self.view = view
        self.follow = frozenset(follow)
        self.specific = specific
        self.prior = prior
        self._index: tuple[Any, ...] | None = None
        self._corpus: _Corpus | None = None
        self._words: dict[str, list[str]] = {}

    def _graph(self) -> tuple[Any, ...]:
        """Statements of citing facts by what they cite, and where follow edges lead."""
        if self._index is not None:
            return self._index
        nodes = self.view.nodes
        facts = self.view.in_force()
        by_id = {f["id"]: f for f in facts}

        def label(n: str) -> str:
            held = nodes.get(n)
            return held["label"] if held else n

        statements: list[str] = []
        owners: list[str] = []
        width: list[int] = []
        citing: dict[str, list[int]] = {}
        after: dict[str, list[str]] = {}
        for f in facts:
            if f["predicate"] in self.follow:
                after.setdefault(f["subject"], []).append(f["object"])
                continue  # structure, not a statement about what it points to
            cited = {
                e["locator"]
                for e in f["evidence"]
                if e["locator"] != f["id"] and (e["locator"] in nodes or e["locator"] in by_id)
            }
            if not cited:
                continue
            k = len(statements)
            statements.append(f"{label(f['subject'])} {f['predicate']} {label(f['object'])}")
            owners.append(f["id"])
            width.append(len(cited))
            for c in cited:
                citing.setdefault(c, []).append(k)
        self._index = (by_id, label, statements, owners, width, citing, after)
        return self._index

    def _prepare(self, docs: Docs) -> _Corpus:
        import numpy as np

        if self._corpus is not None and self._corpus.same(docs):
            return self._corpus
        by_id, label, statements, owners, width, citing, after = self._graph()
        tokens = self._tokens
        texts: list[list[str]] = []
        broad_of: list[list[int]] = []
        broad: dict[int, int] = {}  # statement -> its position among the broad ones
        for doc_id, text in docs:
            f = by_id.get(doc_id)
            anchors = [doc_id] if f is None else [doc_id, f["object"]]
            parts, mine = list(words(text)), []
            for a in anchors:
                for k in citing.get(a, ()):
                    if owners[k] == doc_id:
                        continue  # the fact itself (its evidence names its own object)
                    if width[k] <= self.specific:
                        parts += tokens(statements[k])
                    else:
                        mine.append(broad.setdefault(k, len(broad)))
                if f is not None and a == f["object"]:
                    for n in after.get(a, ()):
                        parts += tokens(label(n))
            texts.append(parts)
            broad_of.append(sorted(set(mine)))
        order = sorted(broad, key=lambda k: broad[k])
        prior = _bm25_of([tokens(statements[k]) for k in order]) if order else None
        # which broad statements cite each document, padded with len(order) (scored 0)
        width_of = max((len(b) for b in broad_of), default=0)
        cited_by = np.full((len(docs), max(1, width_of)), len(order), dtype=np.int64)
        for row, b in enumerate(broad_of):
            cited_by[row, : len(b)] = b
        self._corpus = _Corpus(docs, (_bm25_of(texts), prior, cited_by))
        return self._corpus

    def _tokens(self, text: str) -> list[str]:
        """A statement's or a label's words, split once (each is read by several documents)."""
        held = self._words.get(text)
        if held is None:
            held = self._words[text] = words(text)
        return held

    def rank(self, query: str, docs: Docs, limit: int | None = None) -> list[tuple[str, float]]:
        import numpy as np

        if not docs:
            return []
        corpus = self._prepare(docs)
        index, prior, cited_by = corpus.index
        scores = _scores(index, query, len(docs))
        top = float(scores.max())
        total = scores / top if top > 0 else scores
        if prior is not None and self.prior:
            broad = _scores(prior, query, prior.scores["num_docs"])
            best = float(broad.max()) if len(broad) else 0.0
            if best > 0:
                lift = np.append(broad, 0.0)[cited_by].max(axis=1)
                total = total + self.prior * lift / best
        return corpus.top(np.round(total, 12), limit)


@dataclass(frozen=True)
class Hit:
    """A fused hit: its integer score (``Ranking``: its weighted share of the best score in
    units of ``SCORE_SCALE``; ``fuse``: RRF) and, per provider, (provider, channel, rank, raw)."""

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
    first, ties by id. Symmetric, so it rewards agreement over quality; configurations fuse
    with ``Ranking`` instead (see the module docstring)."""
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
    """The first ``top_k`` hits of the providers' fused ranking (see ``Ranking``)."""
    return Ranking(providers, query, docs).first(top_k)


class _Member:
    """One provider's ranking in a fusion, fetched as deep as the fusion has read."""

    def __init__(self, provider: Provider, index: int) -> None:
        self.provider = provider
        self.index = index
        self.ranked: list[tuple[str, float]] = []  # as the provider ranked them
        self.order: list[int] = []  # the positions the merge reads, in its order
        self.rank: dict[str, int] = {}  # id -> the provider's rank of it (from 0)
        self.complete = False
        self.limit = 0
        self.next = 0  # where the merge reads on in ``order``
        self.top = 0.0
        self.weight = 1.0

    def fetch(self, query: str, docs: Docs, limit: int | None) -> None:
        p = self.provider
        if self.complete or (limit is not None and limit <= self.limit):
            return
        if limit is not None and _takes_limit(p):
            got = list(p.rank(query, docs, limit))
            self.complete = len(got) < limit
        else:
            got = list(p.rank(query, docs) if not _takes_limit(p) else p.rank(query, docs, None))
            self.complete = True
        self.limit = limit if limit is not None else len(got)
        self.ranked = got
        self.rank = {}
        for k, (i, _) in enumerate(got):
            self.rank.setdefault(i, k)
        self.top = float(got[0][1]) if got else 0.0

    def arrange(self, leader: _Member | None) -> None:
        """The order the merge reads: the provider's, but hits of equal score in the order
        the leader ranks them (an order among equals by id says nothing; the leader's does),
        and only whole groups of equal score until the ranking is complete."""
        got = self.ranked
        usable = len(got)
        if not self.complete and got:
            last = got[-1][1]
            while usable and got[usable - 1][1] == last:
                usable -= 1  # the last group may go on past the limit
        if leader is None or leader is self:
            self.order = list(range(usable))
        else:
            far = len(leader.rank)
            self.order = sorted(
                range(usable), key=lambda k: (-got[k][1], leader.rank.get(got[k][0], far), k)
            )
        self.next = 0

    def share(self, k: int) -> float:
        """The weighted share of the best score of the hit at position ``k``."""
        raw = float(self.ranked[k][1])
        if not self.top > 0 or not raw > 0:
            return 0.0
        return self.weight * min(1.0, raw / self.top)


def agreement(a: Sequence[str], b: Sequence[str]) -> float:
    """How far two rankings' heads agree, from 0 to 1: the mean, over each depth d up to the
    longer head, of the share of their first d ids they have in common (average overlap: the
    first places count in every term, so they count most)."""
    depth = max(len(a), len(b))
    if not depth:
        return 0.0
    return sum(len(set(a[:d]) & set(b[:d])) / d for d in range(1, depth + 1)) / depth


class Ranking:
    """The fused ranking of ``docs`` for ``query``, computed as far as it is read.

    A single provider's ranking is its own. Several are led by the first that finds anything:
    each hit's score is its share of its provider's best score for the query, the leader's
    counted whole and every other provider's weighted by how far its first ``AGREE`` hits agree
    with the leader's (``agreement``: a provider that disagrees with the leader's head only
    adds below it); hits are merged best first (ties: the earlier provider, then its
    order), each once, at its best; hits a provider scores equally are taken in the leader's
    order. The first ``n`` hits depend only on the first hits of each provider (the leader's
    ranking is read whole), so a longer read never reorders a shorter one: a compile with more
    budget only adds hits. Providers are asked for more (four times as many) when the merge runs
    out."""

    def __init__(self, providers: Sequence[Provider], query: str, docs: Docs) -> None:
        names = [p.name for p in providers]
        if len(set(names)) != len(names):
            raise InvalidValue(f"two retrieval providers share a name ({names}); name them apart")
        self.query = query
        self.docs = docs
        self.members = [_Member(p, k) for k, p in enumerate(providers)]
        self.hits: list[Hit] = []
        self._seen: set[str] = set()
        self._leader: _Member | None = None
        self._heap: list[tuple[float, int, int]] = []  # each member's head, best first
        self._weighed = False

    def _weigh(self) -> None:
        leader = None
        for m in self.members:
            # the leader is read whole (its order settles the others' ties), the rest in part
            whole = leader is None and len(self.members) > 1
            m.fetch(self.query, self.docs, None if whole else 4 * AGREE)
            if leader is None and m.ranked:
                leader = m
        if leader is not None and len(self.members) > 1:
            head = [i for i, _ in leader.ranked[:AGREE]]
            for m in self.members:
                if m is not leader:
                    m.weight = agreement(head, [i for i, _ in m.ranked[:AGREE]])
        self._leader = leader
        for m in self.members:
            m.arrange(leader)
            k = self._head(m)
            if k is not None and len(self.members) > 1:
                self._heap.append(self._key(m, k))
        heapq.heapify(self._heap)
        self._weighed = True

    def _head(self, m: _Member) -> int | None:
        """The position of the member's best hit not yet merged (fetching more if needed)."""
        while True:
            while m.next < len(m.order) and m.ranked[m.order[m.next]][0] in self._seen:
                m.next += 1
            if m.next < len(m.order):
                return m.order[m.next]
            if m.complete:
                return None
            m.fetch(self.query, self.docs, 4 * m.limit)
            m.arrange(self._leader)

    def first(self, n: int) -> list[Hit]:
        """The first ``n`` hits (fewer when the providers have no more)."""
        if not self._weighed:
            self._weigh()
        if len(self.members) == 1:
            self._alone(n)
        heap = self._heap
        while len(self.hits) < n and heap:
            key = heapq.heappop(heap)
            m = self.members[key[1]]
            k = self._head(m)
            if k is None:
                continue
            now = self._key(m, k)
            if now != key:  # its head was merged from another provider meanwhile
                heapq.heappush(heap, now)
                continue
            doc_id = m.ranked[k][0]
            self._seen.add(doc_id)
            sources = []
            for other in self.members:
                at = other.rank.get(doc_id)
                if at is not None:
                    p = other.provider
                    sources.append((p.name, p.channel, at + 1, float(other.ranked[at][1])))
            self.hits.append(Hit(doc_id, round(-key[0] * SCORE_SCALE), sources))
            k = self._head(m)
            if k is not None:
                heapq.heappush(heap, self._key(m, k))
        return self.hits[:n]

    @staticmethod
    def _key(m: _Member, k: int) -> tuple[float, int, int]:
        """Where a member's head stands in the merge: best share first, then the earlier
        provider, then its own order."""
        return (-m.share(k), m.index, m.next)

    def _alone(self, n: int) -> None:
        """``first`` for a single provider: its ranking as it is, read in bulk."""
        (m,) = self.members
        p = m.provider
        while len(self.hits) < n:
            if m.next >= len(m.order):
                if m.complete:
                    return
                read = m.next
                m.fetch(self.query, self.docs, 4 * m.limit)
                m.arrange(None)  # the provider's order: what was read stays where it was
                m.next = read
                continue
            stop = min(len(m.order), m.next + n - len(self.hits))
            for k in m.order[m.next : stop]:
                doc_id, raw = m.ranked[k]
                if doc_id not in self._seen:
                    self._seen.add(doc_id)
                    score = round(m.share(k) * SCORE_SCALE)
                    self.hits.append(Hit(doc_id, score, [(p.name, p.channel, k + 1, raw)]))
            m.next = stop

    def has_more(self, n: int) -> bool:
        """Whether there is a hit after the first ``n``."""
        return len(self.first(n + 1)) > n


_LIMITS: dict[type, bool] = {}


def _takes_limit(p: Any) -> bool:
    """Whether a provider's ``rank`` accepts ``limit`` (a provider written to the first
    protocol, ``rank(query, docs)``, still works)."""
    held = _LIMITS.get(type(p))
    if held is None:
        import inspect

        try:
            held = "limit" in inspect.signature(p.rank).parameters
        except (TypeError, ValueError):
            held = False
        _LIMITS[type(p)] = held
    return held


NAMES = ("literal", "lexical", "graph", "semantic", "hashed")
# what "fused" means: all that need no model, the one that reads most first (it leads)
DEFAULT_FUSED = ("graph", "lexical", "literal")


def configuration(
    name: str,
    *,
    memory: Any = None,
    embed: Callable[[list[str]], Sequence[Sequence[float]]] | None = None,
) -> list[Provider]:
    """Providers by configuration name: ``literal``, ``lexical`` (BM25), ``graph`` (needs the
    ``memory``), ``semantic`` (needs an ``embed`` function), ``hashed`` (a hashed bag of words:
    for tests), or several joined by "+" (fused, led by the first: name the one you trust
    most first), e.g. "graph+lexical"; "fused" is graph+lexical+literal. A configuration that
    cannot run says what it needs."""
    if not isinstance(name, str) or not name:
        raise InvalidValue(f"a retrieval configuration is a name, not {name!r}")
    parts = list(DEFAULT_FUSED) if name == "fused" else name.split("+")
    unknown = [p for p in parts if p not in NAMES]
    if unknown or not parts:
        raise InvalidValue(
            f"retrieval configuration {name!r}: use {', '.join(NAMES)}, fused, or a "
            "'+'-joined list of them (e.g. graph+lexical)"
        )
    out: list[Provider] = []
    for p in parts:
        if p == "literal":
            out.append(LiteralProvider())
        elif p == "lexical":
            out.append(LexicalProvider())
        elif p == "hashed":
            out.append(SemanticProvider(hashed_embedding(), name="hashed"))
        elif p == "graph":
            if memory is None:
                raise InvalidValue(
                    f"retrieval configuration {name!r}: graph walks the memory it ranks; pass "
                    "memory= (the Memory or a view of it)"
                )
            out.append(GraphProvider(memory))
        else:
            if embed is None:
                raise InvalidValue(
                    f"retrieval configuration {name!r}: semantic needs a real embedding; pass "
                    "embed= (CLI: --embed module:function, or --embed openai[:MODEL] for an "
                    "OpenAI-compatible /v1/embeddings at LITHIFY_OPENAI_BASE_URL); 'hashed' is "
                    "the offline bag of words"
                )
            out.append(SemanticProvider(embed))
    return out
