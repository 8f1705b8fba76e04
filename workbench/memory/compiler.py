"""Compiling the smallest context that answers a task within a token budget.

``ContextCompiler().compile(view, ContextRequest(seeds=[...], query=..., budget=2000))``:
seed entities (and, with a query, the facts the retrieval providers find, fused) are the
starting points; relations are traversed in both directions up to ``depth``; facts are ranked
deterministically (hops from a seed, retrieval rank, confidence, amount of evidence, recency,
id) and rendered one line each, with their evidence, until the next one would pass the budget.

The candidates follow the budget: a query's hits are taken in rounds (the first ``ROUND``, then
twice as many each round), each round's hits and the facts walked from them ranked after the
rounds before, until the budget is full or the hits run out (``top_k`` caps them at one round
of that many). So more budget only adds facts, and a large budget is used while evidence
remains. The receipt says where the view came from, which estimator counted, how many facts
were examined and selected, why the context stopped (``stopped``: ``budget``, ``candidates
exhausted`` or ``top_k``), every omission with its reason (``budget``, ``confidence``,
``predicate``) and what the scope excluded; journal it with the call that used it, like any
receipt (``branch.receipt(bundle.receipt)``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..context import CharEstimator
from ..errors import InvalidValue
from .retrieval import Hit, Provider, Ranking
from .view import Graph, View, fact_line  # noqa: F401  (fact_line: re-exported, it lived here)


@dataclass(frozen=True)
class ContextRequest:
    """What to compile: seed node ids and/or a query, the token budget, how far to walk."""

    seeds: Sequence[str] = ()
    query: str | None = None
    budget: int = 2000
    estimator: Any = None  # tokens of a text; default ceil(chars / 4)
    depth: int = 2
    predicates: Sequence[str] | None = None  # relations to walk (None: all)
    min_confidence: int = 0  # basis points
    scope: Mapping[str, str] | None = None  # {"repository": ..., "branch": ...}
    providers: Sequence[Provider] = ()
    top_k: int | None = None  # hits to consider at most (None: as many as the budget holds)

    def check(self) -> None:
        if self.seeds is None or isinstance(self.seeds, str):
            raise InvalidValue("seeds is a list of node ids (empty for a query alone)")
        if self.predicates is not None and isinstance(self.predicates, str):
            raise InvalidValue("predicates is a list of predicate names, not one str")
        if self.top_k is not None and (
            isinstance(self.top_k, bool) or not isinstance(self.top_k, int) or self.top_k < 1
        ):
            raise InvalidValue(
                f"top_k is a positive int (or None: as many as the budget holds), not "
                f"{self.top_k!r}"
            )
        if isinstance(self.budget, bool) or not isinstance(self.budget, int) or self.budget < 0:
            raise InvalidValue(f"budget is a number of tokens >= 0, not {self.budget!r}")
        if isinstance(self.depth, bool) or not isinstance(self.depth, int) or self.depth < 0:
            raise InvalidValue(f"depth is an int >= 0, not {self.depth!r}")
        if not self.seeds and not self.query:
            raise InvalidValue("a context request needs seeds, a query, or both")
        if self.query is not None and not self.providers:
            raise InvalidValue(
                "a query needs retrieval providers: providers=configuration('lexical')"
            )


@dataclass(frozen=True)
class MemoryReceipt:
    """What a compile included and left out, and why."""

    source: dict[str, Any] | None
    estimator: str
    budget: int
    estimated_tokens: int
    examined: int  # facts the walk and the retrieval reached
    selected: int  # facts in the context
    selected_ids: list[str]  # their ids, in context order
    omitted: list[dict[str, Any]]
    excluded_by_scope: list[str]
    hits: list[dict[str, Any]]
    projection_ms: float = 0.0
    # why the context ends where it does: "budget" (the next fact did not fit), "candidates
    # exhausted" (every fact reached is in, or left out for the reasons in omitted), "top_k"
    # (the request's cap on hits, with more hits to be had)
    stopped: str = "candidates exhausted"

    def to_json(self, timing: bool = True) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "source": self.source,
            "estimator": self.estimator,
            "budget": self.budget,
            "estimated_tokens": self.estimated_tokens,
            "examined": self.examined,
            "selected": self.selected,
            "selected_ids": self.selected_ids,
            "omitted": self.omitted,
            "excluded_by_scope": self.excluded_by_scope,
            "hits": self.hits,
            "stopped": self.stopped,
        }
        if timing:
            doc["projection_ms"] = self.projection_ms
        return doc


@dataclass(frozen=True)
class Bundle:
    """The compiled context: its text, the selected facts (``graph``: as a graph, projected
    when first asked for), and the receipt."""

    text: str
    facts: list[dict[str, Any]]
    receipt: MemoryReceipt
    hits: list[Hit] = field(default_factory=list)
    nodes: Mapping[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    @cached_property
    def graph(self) -> Graph:
        """The selected facts and their endpoints as a ``Graph``."""
        ends = {k for f in self.facts for k in (f["subject"], f["object"])}
        return Graph.build({k: self.nodes[k] for k in ends if k in self.nodes}, self.facts)


def _in_scope(node: dict[str, Any] | None, scope: Mapping[str, str] | None) -> bool:
    if not scope or node is None:
        return True
    have = node.get("scope") or {}
    return all(have.get(k) in (None, v) for k, v in scope.items())


ROUND = 10  # the hits a compile's first round takes; each further round takes twice as many


class ContextCompiler:
    """Compiles views into budgeted context bundles (see the module docstring)."""

    def compile(self, view: View, request: ContextRequest, source: Any = None) -> Bundle:
        """The bundle for ``request`` from ``view``; ``source``: the branch the view came from
        (its id, head and head hash go into the receipt)."""
        if source is None and view.source is not None:
            source = view.source
        return self.compile_graph(view.graph(), request, source)

    def compile_graph(self, graph: Graph, request: ContextRequest, source: Any = None) -> Bundle:
        """``compile`` over a graph already projected (a view's, or a part of it)."""
        t0 = time.perf_counter()
        request.check()
        estimator = request.estimator or CharEstimator()
        nodes = graph.nodes
        allowed = set(request.predicates) if request.predicates is not None else None
        ranking = (
            Ranking(request.providers, request.query, graph.documents) if request.query else None
        )
        lines: list[str] = []
        for s in request.seeds:
            if s in nodes and _in_scope(nodes[s], request.scope):
                n = nodes[s]
                lines.append(f"# {n['label']} ({n['kind']} {s})")
        # Counted line by line (each line's tokens plus a separator's): never below what the
        # joined text costs, and linear however many facts are selected.
        sep = estimator("\n")
        used = sum(estimator(x) for x in lines) + sep * max(0, len(lines) - 1)
        placed: set[str] = set()  # facts ranked in a round before this one
        skipped_predicate: set[str] = set()
        omitted: list[dict[str, Any]] = []
        excluded: list[str] = []
        selected: list[dict[str, Any]] = []
        examined = 0
        frontier = {s: 0 for s in request.seeds if s in nodes}
        taken = 0  # hits read so far
        window = request.top_k if request.top_k is not None else ROUND
        lines_of = graph.documents
        position = graph.fact_position
        stopped = ""
        while not stopped:
            found: dict[str, tuple[int, int]] = {}  # fact id -> (hops, retrieval rank)
            if ranking is not None:
                for rank, h in enumerate(ranking.first(taken + window)[taken:], start=taken):
                    if h.id in placed:
                        continue
                    f = graph.facts[position[h.id]]
                    if allowed is not None and f["predicate"] not in allowed:
                        skipped_predicate.add(h.id)
                        continue
                    found[h.id] = (0, rank)
                    for end in (f["subject"], f["object"]):
                        frontier.setdefault(end, 1)
                taken += window
            _walk(graph, frontier, request.depth, allowed, found, skipped_predicate, placed)
            candidates = [graph.facts[position[i]] for i in found]
            placed.update(found)
            examined += len(candidates)
            out = sorted(
                f["id"]
                for f in candidates
                if not (
                    _in_scope(nodes.get(f["subject"]), request.scope)
                    and _in_scope(nodes.get(f["object"]), request.scope)
                )
            )
            excluded += out
            gone = set(out)
            ranked = []
            for f in candidates:
                if f["id"] in gone:
                    continue
                if f["confidence"] < request.min_confidence:
                    omitted.append({"id": f["id"], "reason": "confidence"})
                    continue
                hops, rank = found[f["id"]]
                recency = f["valid_from"] if f["valid_from"] is not None else f["recorded_at"]
                ranked.append(
                    ((hops, rank, -f["confidence"], -len(f["evidence"]), -recency, f["id"]), f)
                )
            ranked.sort(key=lambda x: x[0])
            for _, f in ranked:
                line = lines_of[position[f["id"]]][1]
                tokens = estimator(line)
                cost = used + tokens + (sep if lines else 0)
                if stopped or cost > request.budget:
                    stopped = "budget"  # stop at the first that does not fit: more budget, more
                    omitted.append({"id": f["id"], "reason": "budget", "tokens": tokens})
                    continue
                lines.append(line)
                used = cost
                selected.append(f)
            if stopped:
                break
            if ranking is None or not ranking.has_more(taken):
                stopped = "candidates exhausted"
            elif request.top_k is not None:
                stopped = "top_k"
            else:
                frontier = {}
                window *= 2
        if used > request.budget:  # the seed headers alone do not fit
            lines, selected, used, stopped = [], [], 0, "budget"
        omitted = [{"id": i, "reason": "predicate"} for i in sorted(skipped_predicate)] + omitted
        text = "\n".join(lines)
        src = None
        if isinstance(source, dict):
            src = source
        elif source is not None:
            src = {"branch": source.id, "seq": source.head, "head_hash": source.head_hash}
        hits: list[Hit] = ranking.hits[:taken] if ranking is not None else []
        receipt = MemoryReceipt(
            source=src,
            estimator=str(getattr(estimator, "name", type(estimator).__name__)),
            budget=request.budget,
            estimated_tokens=used,
            examined=examined,
            selected=len(selected),
            selected_ids=[f["id"] for f in selected],
            omitted=omitted,
            excluded_by_scope=sorted(excluded),
            hits=[h.to_json() for h in hits],
            projection_ms=round((time.perf_counter() - t0) * 1000, 3),
            stopped=stopped,
        )
        return Bundle(text, selected, receipt, hits, nodes)


def _walk(
    graph: Graph,
    frontier: dict[str, int],
    depth: int,
    allowed: set[str] | None,
    found: dict[str, tuple[int, int]],
    skipped: set[str],
    placed: set[str],
) -> None:
    """Breadth-first over the CSR indexes, both directions, in order of hops: each node is
    expanded at its lowest hop count, and each fact found gets the hop count at which it was
    first reached (1 = touching a seed); facts ``placed`` by an earlier round are left there."""
    index = graph.position
    best = {index[n]: hops for n, hops in frontier.items() if n in index}
    no_rank = 1 << 30
    level = 0
    while True:
        current = sorted(i for i, h in best.items() if h == level)
        if not current or level >= depth:
            if not any(h > level for h in best.values()) or level >= depth:
                return
            level += 1
            continue
        for i in current:
            for ptr, idx, edge in (
                (graph.out_ptr, graph.out_idx, graph.out_edge),
                (graph.in_ptr, graph.in_idx, graph.in_edge),
            ):
                lo, hi = int(ptr[i]), int(ptr[i + 1])
                for other, e in zip(idx[lo:hi].tolist(), edge[lo:hi].tolist(), strict=True):
                    f = graph.facts[e]
                    if allowed is not None and f["predicate"] not in allowed:
                        skipped.add(f["id"])
                        continue
                    held = found.get(f["id"])
                    if f["id"] in placed:
                        pass  # walked through, where an earlier round ranked it
                    elif held is None or (held[1] == no_rank and held[0] > level + 1):
                        found[f["id"]] = (level + 1, no_rank)
                    if best.get(other, level + 2) > level + 1:
                        best[other] = level + 1
        level += 1
