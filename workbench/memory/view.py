"""Bitemporal views of a ``Memory`` and their projection to a graph.

A fact is **known** at ``k`` when it was recorded at or before ``k``; its supersession and its
retraction count only once they too were recorded by ``k``. It is **valid** at ``t`` when
``valid_from <= t < valid_to`` (open ends are unbounded). For a functional predicate, among the
known, valid, neither superseded nor retracted facts of one subject, the one with the latest
``valid_from`` is in force, whatever order they were recorded in (a late-arriving earlier fact
never overrides a later one).

``View.graph()`` projects the facts in force to a ``Graph``: CSR indexes in both directions
(numpy) and a canonical, hashable form (same facts, same digest).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import blake3
import numpy as np

from ..errors import InvalidValue
from ..events import canonical


class View:
    """The facts of a Memory in force at valid time ``valid`` as known at ``known``."""

    def __init__(self, memory: Any, valid: int | None, known: int | None) -> None:
        self.memory = memory
        self.valid = valid
        self.known = known
        self.source: dict[str, Any] | None = None  # set by compile(..., source=branch)
        self._facts: list[dict[str, Any]] | None = None
        self._graph: Graph | None = None

    def _known(self, at: int | None) -> bool:
        return at is not None and (self.known is None or at <= self.known)

    def in_force(self) -> list[dict[str, Any]]:
        """The facts in force, ordered by id."""
        if self._facts is not None:
            return self._facts
        m = self.memory
        live = []
        for f in m.facts.values():
            if self.known is not None and f["recorded_at"] > self.known:
                continue
            if self._known(f["superseded_at"]) or (
                f["retracted"] is not None and self._known(f["retracted"]["at"])
            ):
                continue
            t = self.valid
            if t is not None:
                if f["valid_from"] is not None and t < f["valid_from"]:
                    continue
                if f["valid_to"] is not None and t >= f["valid_to"]:
                    continue
            live.append(f)
        functional = {name for name, rule in m.predicates.items() if rule.get("functional")}
        if functional:
            best: dict[tuple[str, str], dict[str, Any]] = {}
            rest = []
            for f in live:
                if f["predicate"] not in functional:
                    rest.append(f)
                    continue
                key = (f["subject"], f["predicate"])
                rank = (
                    f["valid_from"] if f["valid_from"] is not None else -(2**62),
                    f["recorded_at"],
                    f["id"],
                )
                held = best.get(key)
                if held is None or rank > (
                    held["valid_from"] if held["valid_from"] is not None else -(2**62),
                    held["recorded_at"],
                    held["id"],
                ):
                    best[key] = f
            live = rest + list(best.values())
        self._facts = sorted(live, key=lambda f: f["id"])
        return self._facts

    def facts(
        self, subject: str | None = None, predicate: str | None = None
    ) -> list[dict[str, Any]]:
        """The facts in force (of one subject and/or predicate)."""
        return [
            f
            for f in self.in_force()
            if (subject is None or f["subject"] == subject)
            and (predicate is None or f["predicate"] == predicate)
        ]

    def value(self, subject: str, predicate: str) -> str | None:
        """The object of a functional predicate in force for a subject (None if none)."""
        found = self.facts(subject, predicate)
        return found[-1]["object"] if found else None

    @property
    def nodes(self) -> dict[str, dict[str, Any]]:
        """Every node (entities are not bitemporal here: what is known about them is facts)."""
        nodes: dict[str, dict[str, Any]] = self.memory.nodes
        return nodes

    def graph(self, facts: Iterable[dict[str, Any]] | None = None) -> Graph:
        """The facts in force (or the given ones) as a graph; the view's own is projected once
        and kept (a view does not change)."""
        if facts is not None:
            return Graph.build(self.nodes, list(facts))
        if self._graph is None:
            self._graph = Graph.build(self.nodes, list(self.in_force()))
        return self._graph

    def digest(self) -> str:
        """A hash of the view's canonical form (same facts and nodes, same digest)."""
        return self.graph().digest()


@dataclass(frozen=True)
class Graph:
    """Nodes and facts as a directed graph with CSR indexes in both directions: ``out_ptr`` /
    ``out_idx`` / ``out_edge`` (targets and fact positions of each node's outgoing edges, by
    node position), and the same for incoming edges."""

    node_ids: list[str]
    nodes: dict[str, dict[str, Any]]
    facts: list[dict[str, Any]]
    out_ptr: np.ndarray
    out_idx: np.ndarray
    out_edge: np.ndarray
    in_ptr: np.ndarray
    in_idx: np.ndarray
    in_edge: np.ndarray

    @classmethod
    def build(cls, nodes: Mapping[str, dict[str, Any]], facts: list[dict[str, Any]]) -> Graph:
        """The graph of these facts over these nodes. Refused, like a fact applied to a Memory:
        an endpoint that is not among ``nodes`` (a dangling edge) and two facts with one id."""
        facts = sorted(facts, key=lambda f: f["id"])
        for f, g in zip(facts, facts[1:], strict=False):
            if f["id"] == g["id"]:
                raise InvalidValue(
                    f"two facts share the id {f['id']!r}; a graph takes each fact once "
                    "(pass a view's facts, or give the facts distinct ids)",
                    name=f["id"],
                )
        for f in facts:
            for end, what in ((f["subject"], "subject"), (f["object"], "object")):
                if end not in nodes:
                    raise InvalidValue(
                        f"fact {f['id']!r}: its {what} {end!r} is not among the graph's nodes; "
                        "pass every endpoint's node (e.g. a view's nodes)",
                        name=end,
                    )
        ids = sorted(nodes)
        pos = {n: i for i, n in enumerate(ids)}
        n = len(ids)
        src = np.fromiter((pos[f["subject"]] for f in facts), dtype=np.int64, count=len(facts))
        dst = np.fromiter((pos[f["object"]] for f in facts), dtype=np.int64, count=len(facts))
        edge = np.arange(len(facts), dtype=np.int64)

        def csr(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            order = np.lexsort((edge, a))
            ptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.bincount(a, minlength=n), out=ptr[1:])
            return ptr, b[order], edge[order]

        op, oi, oe = csr(src, dst)
        ip, ii, ie = csr(dst, src)
        return cls(ids, {k: nodes[k] for k in ids}, facts, op, oi, oe, ip, ii, ie)

    @cached_property
    def position(self) -> dict[str, int]:
        """Node id -> its position in the CSR arrays."""
        return {n: i for i, n in enumerate(self.node_ids)}

    @cached_property
    def fact_position(self) -> dict[str, int]:
        """Fact id -> its position (edge number)."""
        return {f["id"]: i for i, f in enumerate(self.facts)}

    @cached_property
    def documents(self) -> list[tuple[str, str]]:
        """(fact id, its line of context) per fact, in fact order: what retrieval ranks and
        the compiler renders (built once per graph; do not modify)."""
        return [(f["id"], fact_line(f, self.nodes)) for f in self.facts]

    def node_count(self) -> int:
        return len(self.node_ids)

    def edge_count(self) -> int:
        return len(self.facts)

    def out_edges(self, node_id: str) -> list[dict[str, Any]]:
        """Facts with this node as subject."""
        i = self.position[node_id]
        return [self.facts[e] for e in self.out_edge[self.out_ptr[i] : self.out_ptr[i + 1]]]

    def in_edges(self, node_id: str) -> list[dict[str, Any]]:
        """Facts with this node as object."""
        i = self.position[node_id]
        return [self.facts[e] for e in self.in_edge[self.in_ptr[i] : self.in_ptr[i + 1]]]

    def canonical(self) -> str:
        """The graph as canonical JSON: nodes (without when they were recorded) and facts,
        sorted by id."""
        nodes = [
            {k: v for k, v in self.nodes[n].items() if k != "recorded_at"}
            for n in self.node_ids
            if n in self.nodes
        ]  # a node's content, not when it was written down
        return canonical({"nodes": nodes, "facts": self.facts}, "graph")

    def digest(self) -> str:
        """blake3 of the canonical form."""
        return blake3.blake3(self.canonical().encode("utf-8")).hexdigest()


def _label(nodes: Mapping[str, dict[str, Any]], node_id: str) -> str:
    n = nodes.get(node_id)
    return n["label"] if n else node_id


def fact_line(f: Mapping[str, Any], nodes: Mapping[str, dict[str, Any]]) -> str:
    """One fact as a line of context, with its validity, confidence and evidence."""
    ev = ", ".join(f"{e['kind']}:{e['locator']}" for e in f["evidence"])
    when = f" from {f['valid_from']}" if f["valid_from"] is not None else ""
    until = f" until {f['valid_to']}" if f["valid_to"] is not None else ""
    conf = f" conf {f['confidence'] / 100:g}%" if f["confidence"] < 10_000 else ""
    return (
        f"- {_label(nodes, f['subject'])} {f['predicate']} {_label(nodes, f['object'])}"
        f"{when}{until}{conf} [{ev}] ({f['id']})"
    )
