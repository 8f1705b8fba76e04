"""Graph memory benchmark.

- replay: 100,000 memory events (node upserts and facts) rebuilt from the journal by
  ``branch.at(head)`` with no snapshot to start from (baseline: the same deltas applied to a
  fresh ``Memory`` in this process, no journal; goal <= 0.4 s); then the same history with
  the default automatic snapshots: what they add to the file (against the deltas' bytes) and
  the state at the head from a fresh handle (against the replay without);
- projection: a view of 100,000 nodes / 300,000 facts projected to the CSR graph;
- compile: depth-2 compile around one seed on that graph, median over 200 seeds (goal <= 2 ms;
  the design's Rust reference reports 0.29 ms, a Python memory library 6.75 ms);
- linking: 10,000 mentions against a 100,000-entity catalog (index built once): a quarter each
  by label, alias, external id, and by words with a hint only (goal <= 0.3 s);
- extraction: 10,000 mentions found by the rule provider in one text and planned by the
  engine against a 10,000-node memory, half of them known (the design: 69 ms);
- experiment: every question of a LoCoMo file (``--dataset PATH``, e.g. the published
  locomo10.json, which is not shipped; default: a generated file of its size, 5,882 turns and
  1,986 questions) answered per retrieval configuration at each budget (default 100, 400,
  1,600 and 6,400 tokens): context recall, Hit@1/5, Recall@5, MRR, the context's mean tokens,
  why contexts stopped (budget, or candidates exhausted) and questions per second (indexing
  included), against plain BM25 (``bm25s`` over each conversation's turns, top 10, indexing
  included) measured in the same run, the median of 3 such pairs per cell (goals: recall rises
  with the budget while evidence remains; a fusion's recall is never below its best member's;
  at up to 400 tokens >= 0.3x plain BM25's questions/s; ``graph+lexical`` recall at 400 tokens
  >= plain BM25's + 0.10); our ``literal`` beside the literal baseline the design reports on
  the published file; and what the loader did with the file's evidence (strings split or
  corrected, ids that name no turn).
Writes benchmarks/results/memory.json (figures only: no dataset text). The baseline needs
``bm25s`` (``pip install -e '.[bench]'``; lithify's own BM25 gives its scores without it).

    python benchmarks/memory.py [--quick] [--dataset locomo10.json] [--budgets 100,400,1600]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workbench import Journal
from workbench.agents.memory import answer, context_recall, ingest, load, synthetic
from workbench.eval import Dataset, evaluate
from workbench.memory import (
    AutoExtractionEngine,
    ContextCompiler,
    ContextRequest,
    Extraction,
    Memory,
    RuleProvider,
    evidence,
    fact,
    node,
)
from workbench.memory.bm25 import words
from workbench.memory.linking import Linker, Mention
from workbench.memory.view import Graph

RESULTS = Path(__file__).parent / "results"
EV = [evidence("bench", "generated")]
CONFIGURATIONS = ("literal", "lexical", "graph", "graph+lexical", "fused")
# the literal baseline the design reports on the published locomo10.json
DESIGN_LITERAL = {"hit@1": 0.223, "hit@5": 0.392, "recall@5": 0.356, "mrr": 0.298}


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


def extraction(n_mentions: int, n_known: int) -> dict:
    """The rule provider over one text of ``n_mentions`` capitalised names, and the engine's
    plan against a memory that knows ``n_known`` of them."""
    names = [f"Person{i} Surname{i % 997}" for i in range(n_mentions)]
    text = " ".join(f"{name} met the team." for name in names)
    memory = Memory()
    for i in range(n_known):
        memory.apply(node(f"p{i}", "person", names[i], recorded_at=0))
    provider = RuleProvider()
    t = time.perf_counter()
    found = provider.extract(text, "bench")
    provide_s = time.perf_counter() - t
    engine = AutoExtractionEngine([_Given(found)])
    t = time.perf_counter()
    plan = engine.plan(memory, text, provider="rules", locator="bench.txt", recorded_at=1)
    plan_s = time.perf_counter() - t
    return {
        "mentions": len(found.mentions),
        "known": n_known,
        "provider_s": provide_s,
        "plan_s": plan_s,
        "total_s": provide_s + plan_s,
        "linked": len(plan.links),
        "new_nodes": len(plan.nodes),
        "design_ms": 69,
    }


class _Given:
    """The rule provider's answer, handed over as is (the engine's share timed alone)."""

    name = "rules"
    deterministic = True

    def __init__(self, found: Extraction) -> None:
        self.found = found

    def extract(self, text: str, key: str) -> Extraction:
        return self.found


def plain_bm25(data: Dataset, k: int = 10) -> tuple[list[dict], float]:
    """Cases of BM25 (bm25s) over each conversation's turns, top ``k`` per question, and the
    seconds it took from the loaded dataset: each conversation indexed once, every question
    answered (as the experiment's own time counts its indexes)."""
    import bm25s

    t, cpu = time.perf_counter(), time.process_time()
    docs = {d.id: d for d in data.documents}
    pools: dict[tuple[str, ...], Any] = {}
    cases = []
    for q in data.questions:
        pool = tuple(data.groups[q.id])
        index = pools.get(pool)
        if index is None:
            index = pools[pool] = bm25s.BM25()
            index.index([words(docs[i].text) or ["_"] for i in pool], show_progress=False)
        terms = [w for w in words(q.question) if w in index.vocab_dict]
        ranked = []
        if terms:
            found, scores = index.retrieve([terms], k=min(k, len(pool)), show_progress=False)
            ranked = [pool[int(j)] for j, s in zip(found[0], scores[0], strict=True) if s > 0]
        cases.append({"id": q.id, "category": q.category, "relevant": q.relevant, "ranked": ranked})
    PLAIN_CPU.append(time.process_time() - cpu)
    return cases, time.perf_counter() - t


PLAIN_CPU: list[float] = []  # the process time of each plain BM25 run (steadier under load)
REPEATS = 3  # pairs (plain BM25, a configuration) per cell of the table; the median is kept


def experiment(path: Path, budgets: list[int]) -> dict:
    data = load(path, "locomo")
    memory = Memory()
    deltas: list = []

    class Collect:  # ingest into a Memory in process: the journal is measured by replay
        head = 0

        def apply_many(self, items: list) -> int:
            deltas.extend(items)
            return len(deltas)

    ingest(Collect(), data)
    for d in deltas:
        memory.apply(d)
    base_cases, base_s = plain_bm25(data)
    base = evaluate(base_cases, (1, 5, 10)).row(0, named=True)
    out: dict = {
        "turns": len(data.documents),
        "questions": len(data.questions),
        "notes": len(data.notes),
        "evidence": {
            "repaired": data.repaired,
            "unread": len(data.unread),
            "unreadable": sum(u.reason == "unreadable" for u in data.unread),
            "no_such_turn": sum(u.reason == "no such turn" for u in data.unread),
        },
        "plain_bm25": {
            "recall@10": base["recall@10"],
            "hit@1": base["hit@1"],
            "mrr": base["mrr"],
            "questions_per_s": len(base_cases) / base_s,
        },
        "configurations": {},
    }
    plain_rates = []
    for name in CONFIGURATIONS:
        rows = {}
        for budget in budgets:
            # plain BM25 again right before each run: on a shared machine the load drifts, and
            # each ratio compares two runs a second apart; the median of REPEATS such pairs
            ratios, cpu_ratios, rates = [], [], []
            for _ in range(REPEATS):
                _, plain_s = plain_bm25(data)
                plain_rate = len(data.questions) / plain_s
                plain_rates.append(plain_rate)
                plain_cpu = PLAIN_CPU[-1]
                t, cpu = time.perf_counter(), time.process_time()
                cases = answer(memory, data, budget, name)  # from the memory: indexing included
                took, took_cpu = time.perf_counter() - t, time.process_time() - cpu
                rates.append(len(cases) / took)
                ratios.append((len(cases) / took) / plain_rate)
                cpu_ratios.append(plain_cpu / took_cpu)
            m = evaluate(cases, (1, 5, 10)).row(0, named=True)
            stopped: dict[str, int] = {}
            for c in cases:
                stopped[c["stopped"]] = stopped.get(c["stopped"], 0) + 1
            rows[str(budget)] = {
                "recall": context_recall(cases),
                "context_tokens": sum(c["tokens"] for c in cases) / len(cases),
                "stopped": stopped,
                "hit@1": m["hit@1"],
                "hit@5": m["hit@5"],
                "recall@5": m["recall@5"],
                "mrr": m["mrr"],
                "questions_per_s": statistics.median(rates),
                "plain_bm25_questions_per_s": statistics.median(plain_rates[-REPEATS:]),
                "vs_plain_bm25_speed": statistics.median(ratios),
                "vs_plain_bm25_cpu": statistics.median(cpu_ratios),
            }
        out["configurations"][name] = rows
    out["plain_bm25"]["questions_per_s"] = statistics.median(plain_rates)
    return out


def _timed_replay(j: Journal) -> float:
    """Seconds to rebuild the head's state from the events (``at`` replays every time; the
    journal has no snapshot)."""
    t = time.perf_counter()
    j.root().at(j.root().head)
    return time.perf_counter() - t


@contextlib.contextmanager
def _checks_off() -> Iterator[None]:
    """A replay without its damage checks (the events passed through as read): what they
    cost, measured against it. Only here: the product always checks."""
    import workbench.history as history

    def unchecked(_h: Any, _s: Any, base: int, events: list[Any]) -> list[Any]:
        return [(e[0], e[1], e[4]) for e in (events[1:] if base > 0 else events)]

    kept = history.checked
    history.checked = unchecked
    try:
        yield
    finally:
        history.checked = kept


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="a tenth of the sizes (a smoke run)")
    ap.add_argument("--dataset", type=Path, help="a LoCoMo file (default: a generated one)")
    ap.add_argument("--budgets", default="100,400,1600,6400", help="budgets of the recall table")
    args = ap.parse_args()
    scale = 10 if args.quick else 1
    n_events, n_nodes, n_facts = 100_000 // scale, 100_000 // scale, 300_000 // scale
    n_mentions, n_catalog = 10_000 // scale, 100_000 // scale
    rng = random.Random(7)
    doc: dict = {"quick": args.quick}

    # -- replay -------------------------------------------------------------------------------
    deltas: list[Any] = [
        node(f"r{i}", "entity", f"replayed {i}", recorded_at=i) for i in range(n_events // 4)
    ]
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
            checked, unchecked = [], []
            for _ in range(3):  # the replay's damage checks, on and off, in turns
                checked.append(_timed_replay(j))
                with _checks_off():
                    unchecked.append(_timed_replay(j))
        # The same history with the default automatic snapshots (every 128 events, spaced out
        # as the state grows): what it writes, and the state at the head from a fresh handle.
        path = Path(d) / "snapshots.db"
        t = time.perf_counter()
        with Journal.open(path, Memory) as j:
            j.root().apply_many(deltas)
        snap_build_s = time.perf_counter() - t
        with Journal.open(path, Memory) as j:
            t = time.perf_counter()
            head = j.root().at(j.root().head)
            snap_replay_s = time.perf_counter() - t
            assert len(head.facts) == len(baseline.facts)
        with sqlite3.connect(path) as raw:
            snaps, snap_chars, snap_stored = raw.execute(
                "SELECT count(*), sum(coalesce(state_size, length(state))), sum(length(state)) "
                "FROM snapshots WHERE seq > 0"
            ).fetchone()
            (delta_chars,) = raw.execute(
                "SELECT sum(length(payload)) FROM events WHERE kind = 'delta'"
            ).fetchone()
        file_mb = (path.stat().st_size + Path(f"{path}-wal").stat().st_size) / 1e6
    doc["replay"] = {
        "events": n_events,
        "journal_s": replay_s,
        "checks": {  # seq continuity, chain links and each delta's hash, in every replay
            "checked_s": statistics.median(checked),
            "unchecked_s": statistics.median(unchecked),
            "cost": statistics.median(checked) / statistics.median(unchecked) - 1,
        },
        "inline_s": inline_s,
        "ratio": inline_s / replay_s,
        "with_snapshots": {
            "build_s": snap_build_s,
            "head_s": snap_replay_s,
            "snapshots": snaps,
            "snapshot_chars_per_delta_char": snap_chars / delta_chars,
            "snapshot_stored_bytes_per_delta_char": snap_stored / delta_chars,
            "file_mb": file_mb,
        },
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

    # -- extraction -----------------------------------------------------------------------------
    doc["extraction"] = extraction(10_000 // scale, 5_000 // scale)

    # -- the memory experiment ------------------------------------------------------------------
    # The sections above leave millions of objects alive (a 10^5-node memory, its graph, a
    # 10^5-entity linker, the replayed states): each full pass of the garbage collector would
    # walk them in the middle of a timed configuration, which the experiment alone never pays.
    del deltas, baseline, state, head, m, view, graph, linker, catalog, mentions, plan
    gc.collect()
    budgets = [int(b) for b in args.budgets.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        path = args.dataset
        if path is None:
            path = Path(scratch) / "locomo-sized.json"
            sizes = synthetic.LOCOMO_SIZES[: 1 if args.quick else None]
            path.write_text(json.dumps(synthetic.locomo(20261201, sizes)))
        doc["experiment"] = experiment(path, budgets)
        doc["experiment"]["dataset"] = "given" if args.dataset else "generated (LoCoMo-sized)"

    r, c, lk, ex = doc["replay"], doc["compile"], doc["linking"], doc["extraction"]
    rows = [
        (
            f"replay of {n_events:,} events (journal, no snapshot)",
            f"{r['journal_s']:.2f} s",
            "goal <= 0.4 s",
        ),
        (
            "  the replay's damage checks (hash chain, seqs)",
            f"{r['checks']['checked_s']:.2f} s",
            f"+{r['checks']['cost']:.1%} against {r['checks']['unchecked_s']:.2f} s without "
            "(goal <= 10%)",
        ),
        (
            "  same deltas applied in process (baseline)",
            f"{r['inline_s']:.2f} s",
            f"ratio {r['ratio']:.2f}",
        ),
        (
            "  with default snapshots: state at the head",
            f"{r['with_snapshots']['head_s']:.2f} s",
            f"{r['with_snapshots']['head_s'] / r['journal_s']:.2f}x the replay without",
        ),
        (
            "  with default snapshots: written",
            f"{r['with_snapshots']['file_mb']:.0f} MB",
            f"{r['with_snapshots']['snapshots']} snapshots, "
            f"{r['with_snapshots']['snapshot_chars_per_delta_char']:.1f}x the deltas' bytes "
            f"({r['with_snapshots']['snapshot_stored_bytes_per_delta_char']:.2f}x stored); "
            f"built in {r['with_snapshots']['build_s']:.1f} s",
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
            f"{lk['per_mention_us']:.0f} us each; index {lk['index_s']:.2f} s; goal <= 0.3 s",
        ),
    ]
    rows.append(
        (
            f"extract {ex['mentions']:,} mentions (rules) and plan them",
            f"{ex['total_s'] * 1e3:.0f} ms",
            f"provider {ex['provider_s'] * 1e3:.0f} ms, engine {ex['plan_s'] * 1e3:.0f} ms; "
            f"the design: 69 ms",
        )
    )
    print(f"{'measure':<52}{'value':>12}")
    for name, value, note in rows:
        print(f"{name:<52}{value:>12}  {note}")
    e = doc["experiment"]
    pb = e["plain_bm25"]
    print(
        f"\nmemory experiment: {e['dataset']}, {e['turns']:,} turns, {e['questions']:,} "
        f"questions, {e['notes']:,} observations and summaries"
    )
    print(
        f"plain BM25 over the turns (top 10): recall@10 {pb['recall@10']:.3f}, "
        f"{pb['questions_per_s']:.0f} questions/s (median; x BM25: against the run just before)"
    )
    ev = e["evidence"]
    print(
        f"evidence: {ev['repaired']} strings split or corrected into turn ids, {ev['unread']} "
        f"ids that name no turn ({ev['unreadable']} unreadable, {ev['no_such_turn']} no such "
        "turn)"
    )
    print(
        f"{'configuration':<15}{'budget':>7}{'recall':>8}{'tokens':>8}{'full':>6}{'hit@1':>7}"
        f"{'hit@5':>7}{'R@5':>7}{'MRR':>7}{'q/s':>7}{'x BM25':>8}{'(cpu)':>7}"
    )
    for name, per in e["configurations"].items():
        for budget, m in per.items():
            full = m["stopped"].get("budget", 0) / max(1, sum(m["stopped"].values()))
            print(
                f"{name:<15}{budget:>7}{m['recall']:>8.3f}{m['context_tokens']:>8.0f}"
                f"{full:>6.0%}{m['hit@1']:>7.3f}{m['hit@5']:>7.3f}"
                f"{m['recall@5']:>7.3f}{m['mrr']:>7.3f}{m['questions_per_s']:>7.0f}"
                f"{m['vs_plain_bm25_speed']:>8.2f}{m['vs_plain_bm25_cpu']:>7.2f}"
            )
    for fusion, members in (
        ("graph+lexical", ("graph", "lexical")),
        ("fused", ("graph", "lexical", "literal")),
    ):
        per = e["configurations"].get(fusion)
        if per and all(m in e["configurations"] for m in members):
            gaps = [
                per[b]["recall"] - max(e["configurations"][m][b]["recall"] for m in members)
                for b in per
            ]
            print(
                f"{fusion} against its best member: "
                + ", ".join(f"{b} {g:+.4f}" for b, g in zip(per, gaps, strict=True))
            )
    if "literal" in e["configurations"] and "400" in e["configurations"]["literal"]:
        lit = e["configurations"]["literal"]["400"]
        print(
            "literal beside the design's literal baseline (published file): "
            + ", ".join(f"{k} {lit[k]:.3f} vs {v:.3f}" for k, v in DESIGN_LITERAL.items())
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "memory.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {RESULTS / 'memory.json'}")


if __name__ == "__main__":
    main()
