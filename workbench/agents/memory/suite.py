"""The coding-agent regression suite: a small bundled memory of a coding agent's work (which
file defines what, which decision holds and which one it superseded, who owns what, which test
covers which bug) and questions about it, scored with the experiment's metrics.

    from workbench.agents.memory import suite
    cases, table = suite.run("graph+lexical", budget=400)

A case asks about the memory as it stands, or as it was known at ``known`` (what was decided
before a change: the superseded fact is in force there). Its ranking is the ids of the facts
the compiled context holds, in order; ``relevant`` are fact ids. ``stale`` facts (superseded
decisions) must never reach the context of a question about the present: a case that lets one
in counts in the ``stale`` column.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import bundled
from ...errors import InvalidValue
from ...eval import evaluate
from ...memory import (
    ContextCompiler,
    ContextRequest,
    Memory,
    configuration,
    evidence,
    predicate,
    retract,
)
from ...memory import fact as make_fact
from ...memory import node as make_node

KS = (1, 5, 10)


@dataclass(frozen=True)
class Suite:
    """A suite: its memory, as deltas in the order they happened, and its cases."""

    name: str
    deltas: list[Any]
    cases: list[dict[str, Any]] = field(default_factory=list)


def load_suite(path: str | Path | None = None) -> Suite:
    """A suite file (default: the bundled coding-agent suite), checked: every delta is built
    by the memory's own constructors, and every case names facts the memory holds."""
    target = Path(path) if path is not None else bundled.memory_suite()
    try:
        doc = json.loads(target.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidValue(f"no suite file at {target}") from None
    except ValueError as e:
        raise InvalidValue(f"{target} is not JSON: {e}") from None
    try:
        deltas: list[Any] = [predicate(p, functional=True) for p in doc.get("functional", [])]
        deltas += [make_node(i, k, label, recorded_at=0) for i, k, label in doc["nodes"]]
        timed: list[tuple[int, int, Any]] = []
        for n, row in enumerate(doc["facts"]):
            fid, s, p, o, at, ev = row[:6]
            timed.append(
                (
                    at,
                    n,
                    make_fact(
                        fid,
                        s,
                        p,
                        o,
                        evidence=[evidence(k, loc) for k, loc in ev],
                        recorded_at=at,
                        supersedes=row[6] if len(row) > 6 else None,
                    ),
                )
            )
        for n, (fid, at, ev) in enumerate(doc.get("retractions", [])):
            timed.append(
                (
                    at,
                    len(doc["facts"]) + n,
                    retract(fid, evidence=[evidence(k, loc) for k, loc in ev], recorded_at=at),
                )
            )
        deltas += [d for _, _, d in sorted(timed, key=lambda x: (x[0], x[1]))]
        cases = list(doc["cases"])
    except (KeyError, TypeError, ValueError) as e:
        raise InvalidValue(f"{target}: not a memory suite ({e!r})") from None
    ids = {d.id for d in deltas if hasattr(d, "subject")}
    for c in cases:
        unknown = [x for x in [*c.get("relevant", []), *c.get("stale", [])] if x not in ids]
        if unknown:
            raise InvalidValue(f"{target}: case {c.get('id')!r} names unknown facts {unknown}")
    return Suite(str(doc.get("name", target.stem)), deltas, cases)


def answer(
    memory: Memory, suite: Suite, retrieval: str, budget: int = 400, top_k: int | None = None
) -> list[dict[str, Any]]:
    """One evaluation case per suite case: the fact ids of its compiled context, in order."""
    compiler = ContextCompiler()
    out = []
    for c in suite.cases:
        view = memory.view(known=c.get("known"))
        providers = configuration(retrieval, memory=view)
        request = ContextRequest(
            query=c["question"], budget=budget, providers=providers, depth=0, top_k=top_k
        )
        ranked = [f["id"] for f in compiler.compile(view, request).facts]
        out.append(
            {
                "id": c["id"],
                "category": c.get("category"),
                "relevant": list(c["relevant"]),
                "ranked": ranked,
                "stale": sorted(set(c.get("stale", [])) & set(ranked)),
            }
        )
    return out


def run(
    retrieval: str = "graph+lexical",
    budget: int = 400,
    path: str | Path | None = None,
) -> tuple[list[dict[str, Any]], Any]:
    """Build the suite's memory in a fresh in-memory journal, answer every case, and score them
    (``workbench.eval.evaluate`` plus a ``stale`` column: the share of cases whose context
    held a superseded fact)."""
    from ...journal import Journal

    suite = load_suite(path)
    with Journal.in_memory(Memory) as j:
        j.root().apply_many(suite.deltas)
        cases = answer(j.root().state(), suite, retrieval, budget)
    import polars as pl

    table = evaluate(cases, KS)
    stale: dict[str, list[dict[str, Any]]] = {"all": list(cases)}
    for c in cases:
        stale.setdefault(str(c["category"]), []).append(c)
    column = [
        sum(1 for c in stale.get(g, []) if c["stale"]) / max(1, len(stale.get(g, [])))
        for g in table["group"].to_list()
    ]
    return cases, table.with_columns(pl.Series("stale", column))
