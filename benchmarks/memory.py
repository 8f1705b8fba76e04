"""Graph memory benchmark.

- replay: 100,000 memory events (node upserts and facts) rebuilt from the journal by
  ``branch.at(head)`` with no snapshot to start from (baseline: the same deltas applied to a
  fresh ``Memory`` in this process, no journal);
- projection: a view of 100,000 nodes / 300,000 facts projected to the CSR graph;
- compile: depth-2 compile around one seed on that graph, median over 200 seeds (goal <= 2 ms;
  the design's Rust reference reports 0.29 ms, a Python memory library 6.75 ms);
- linking: 10,000 mentions against a 100,000-entity catalog (index built once): a quarter each
  by label, alias, external id, and by words with a hint only.
Writes benchmarks/results/memory.json.

    python benchmarks/memory.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from workbench import Journal
from workbench.memory import ContextCompiler, ContextRequest, Memory, evidence, fact, node
from workbench.memory.linking import Linker, Mention
from workbench.memory.view import Graph

RESULTS = Path(__file__).parent / "results"
EV = [evidence("bench", "generated")]


def graph_memory(n_nodes: int, n_facts: int, rng: random.Random) -> Memory:
    """A Memory built in process (no journal): n nodes, n_facts random relations."""
    m = Memory()
    for i in range(n_nodes):
        m.apply(node(f"n{i}", "entity", f"entity {i} of kind {i % 17}", recorded_at=i))
    preds = ["uses", "owns", "calls", "mentions", "depends_on"]
    for k in range(n_facts):
        a, b = rng.randrange(n_nodes), rng.randrange(n_nodes)
        m.apply(fact(f"f{k}", f"n{a}", preds[k % 5], f"n{b}", evidence=EV, recorded_at=n_nodes + k))
    return m


def _correct(plan: object, mentions: list[Mention], expected: list[str]) -> int:
    where = {id(m): e for m, e in zip(mentions, expected, strict=True)}
    return sum(link.node == where[id(link.mention)] for link in plan.resolved)  # type: ignore[attr-defined]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="a tenth of the sizes (a smoke run)")
    args = ap.parse_args()
    scale = 10 if args.quick else 1
    n_events, n_nodes, n_facts = 100_000 // scale, 100_000 // scale, 300_000 // scale
    n_mentions, n_catalog = 10_000 // scale, 100_000 // scale
    rng = random.Random(7)
    doc: dict = {"quick": args.quick}

    # -- replay -------------------------------------------------------------------------------
    deltas = [node(f"r{i}", "entity", f"replayed {i}", recorded_at=i) for i in range(n_events // 4)]
    deltas += [
        fact(
            f"rf{k}",
            f"r{rng.randrange(n_events // 4)}",
            "rel",
            f"r{rng.randrange(n_events // 4)}",
            evidence=EV,
            recorded_at=n_events + k,
        )
        for k in range(n_events - len(deltas))
    ]
    t = time.perf_counter()
    baseline = Memory()
    for d in deltas:
        baseline.apply(d)
    inline_s = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as d:
        with Journal.open(Path(d) / "replay.db", Memory, snapshot_every=10**9) as j:
            j.root().apply_many(deltas)
            t = time.perf_counter()
            state = j.root().at(j.root().head)
            replay_s = time.perf_counter() - t
            assert len(state.facts) == len(baseline.facts)
    doc["replay"] = {
        "events": n_events,
        "journal_s": replay_s,
        "inline_s": inline_s,
        "ratio": inline_s / replay_s,
    }

    # -- projection and compile ---------------------------------------------------------------
    m = graph_memory(n_nodes, n_facts, rng)
    view = m.view()
    t = time.perf_counter()
    graph = view.graph()
    project_s = time.perf_counter() - t
    compiler = ContextCompiler()
    samples = []
    selected = []
    for _ in range(200):
        seed = f"n{rng.randrange(n_nodes)}"
        t = time.perf_counter()
        b = compiler.compile(view, ContextRequest(seeds=[seed], budget=2000, depth=2))
        samples.append(time.perf_counter() - t)
        selected.append(len(b.facts))
    doc["compile"] = {
        "nodes": n_nodes,
        "facts": n_facts,
        "projection_s": project_s,
        "depth2_median_ms": statistics.median(samples) * 1e3,
        "depth2_p90_ms": sorted(samples)[int(len(samples) * 0.9)] * 1e3,
        "facts_selected_median": statistics.median(selected),
        "goal_ms": 2.0,
        "references_ms": {"rust_reference": 0.29, "python_library": 6.75},
    }
    assert isinstance(graph, Graph)

    # -- linking ------------------------------------------------------------------------------
    catalog = {
        f"e{i}": {
            "id": f"e{i}",
            "kind": "person",
            "label": f"Person {i} Surname{i % 997}",
            "aliases": [f"P{i}"],
            "external_ids": {"crm": f"C{i}"},
            "scope": {},
            "recorded_at": 0,
        }
        for i in range(n_catalog)
    }
    t = time.perf_counter()
    linker = Linker(catalog)
    index_s = time.perf_counter() - t
    mentions, expected = [], []
    for k in range(n_mentions):
        i = rng.randrange(n_catalog)
        expected.append(f"e{i}")
        pick = k % 4
        mentions.append(
            Mention(f"person {i} surname{i % 997}")
            if pick == 0  # a label
            else Mention(f"P{i}")
            if pick == 1  # an alias
            else Mention("someone", external_id=("crm", f"C{i}"))
            if pick == 2
            else Mention(f"Surname{i % 997}", hint=f"the person numbered {i}")  # words only
        )
    t = time.perf_counter()
    plan = linker.link(mentions)
    link_s = time.perf_counter() - t
    doc["linking"] = {
        "mentions": n_mentions,
        "catalog": n_catalog,
        "index_s": index_s,
        "link_s": link_s,
        "per_mention_us": link_s / n_mentions * 1e6,
        "resolved": len(plan.resolved),
        "resolved_correctly": _correct(plan, mentions, expected),
        "ambiguous": len(plan.ambiguous),
        "unresolved": len(plan.unresolved),
    }

    r, c, lk = doc["replay"], doc["compile"], doc["linking"]
    rows = [
        (f"replay of {n_events:,} events (journal, no snapshot)", f"{r['journal_s']:.2f} s", ""),
        (
            "  same deltas applied in process (baseline)",
            f"{r['inline_s']:.2f} s",
            f"ratio {r['ratio']:.2f}",
        ),
        (f"projection of {n_nodes:,} nodes / {n_facts:,} facts", f"{c['projection_s']:.2f} s", ""),
        (
            "depth-2 compile around one seed (median)",
            f"{c['depth2_median_ms']:.3f} ms",
            "goal <= 2 ms",
        ),
        ("  p90", f"{c['depth2_p90_ms']:.3f} ms", ""),
        (
            f"link {n_mentions:,} mentions against {n_catalog:,} entities",
            f"{lk['link_s']:.2f} s",
            f"{lk['per_mention_us']:.0f} us each; index {lk['index_s']:.2f} s",
        ),
    ]
    print(f"{'measure':<52}{'value':>12}")
    for name, value, note in rows:
        print(f"{name:<52}{value:>12}  {note}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "memory.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {RESULTS / 'memory.json'}")


if __name__ == "__main__":
    main()
