"""BM25 as the ``bm25s`` library scores it, built with whole-array operations.

The lexical and graph providers rank with it; a test holds its scores equal to ``bm25s``'s.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from itertools import chain
from typing import Any

_WORD = re.compile(r"\w\w+", re.UNICODE)


def words(text: str) -> list[str]:
    """Lowercased words of two or more characters."""
    return _WORD.findall(text.lower())


def _bm25(texts: list[str]) -> BM25Index:
    return _bm25_of([words(t) for t in texts])


# BM25 as bm25s computes it by default: Lucene's idf and term weight, k1 1.5, b 0.75, scores
# kept as float32 in compressed columns (per word: the documents holding it, in order).
BM25_K1, BM25_B = 1.5, 0.75


@dataclass(frozen=True)
class BM25Index:
    """Each word's BM25 score in each document holding it (``scores``: ``indptr``,
    ``indices``, ``data`` by word id, and ``num_docs``; ``vocab_dict``: word -> id): the
    shape of a ``bm25s`` index, which ``_scores`` reads."""

    vocab_dict: dict[str, int]
    scores: dict[str, Any]


@dataclass(frozen=True)
class _Postings:
    """Tokenized documents by word: ``vocab`` (word -> id, by first appearance), and for each
    distinct (word, document) pair, sorted by word then document, its ``word``, ``doc`` and
    count ``tf``; ``df`` per word, ``indptr`` (word id -> its pairs), document ``lengths``."""

    vocab: dict[str, int]
    word: Any
    doc: Any
    tf: Any
    df: Any
    indptr: Any
    lengths: Any


def _postings(docs: list[list[str]]) -> _Postings:
    """Count every (word, document) pair at once (one np.unique over their codes)."""
    import numpy as np

    n = len(docs)
    flat = list(chain.from_iterable(docs))
    vocab = {w: i for i, w in enumerate(dict.fromkeys(flat))}
    ids = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))
    lengths = np.fromiter(map(len, docs), dtype=np.int64, count=n)
    pairs, tf = np.unique(
        ids * max(n, 1) + np.repeat(np.arange(n, dtype=np.int64), lengths), return_counts=True
    )
    word, doc = np.divmod(pairs, max(n, 1))
    df = np.bincount(word, minlength=len(vocab))
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    return _Postings(vocab, word, doc, tf, df, indptr, lengths)


def _bm25_of(tokens: list[list[str]]) -> BM25Index:
    """The BM25 index of tokenized documents (an empty one counts as the word "_"), built
    with whole-array operations: the per-word, per-document scores ``bm25s`` computes one
    document at a time, value for value (the same float64 steps rounded to float32; a test
    holds them equal), several times faster on a conversation's turns."""
    import numpy as np

    p = _postings([t or ["_"] for t in tokens])
    n = len(p.lengths)
    idf = np.array(
        [math.log(1 + (n - x + 0.5) / (x + 0.5)) for x in p.df.tolist()], dtype=np.float32
    )
    l_avg = p.lengths.mean() if n else 1.0  # no documents: nothing is scored
    norm = BM25_K1 * ((1 - BM25_B) + BM25_B * p.lengths / l_avg)
    tf32 = p.tf.astype(np.float32)
    data = (idf[p.word] * (tf32 / (norm[p.doc] + tf32))).astype(np.float32)
    return BM25Index(p.vocab, {"indptr": p.indptr, "indices": p.doc, "data": data, "num_docs": n})


def _scores(index: Any, query: str, n: int) -> Any:
    """BM25 scores of every document for a query: the sum, over the query's words (repeats
    count again, as in bm25s), of each word's precomputed per-document scores. One bincount
    over the words' postings instead of bm25s's per-word accumulation: the same sums, several
    times faster on the small corpora a conversation makes."""
    import numpy as np

    vocab = index.vocab_dict
    ids = [vocab[w] for w in words(query) if w in vocab]
    if not ids:
        return np.zeros(n)
    s = index.scores
    indptr, indices, data = s["indptr"], s["indices"], s["data"]
    spans = [(int(indptr[t]), int(indptr[t + 1])) for t in ids]
    docs = np.concatenate([indices[a:b] for a, b in spans])
    weights = np.concatenate([data[a:b] for a, b in spans])
    return np.bincount(docs, weights=weights, minlength=n)
