"""JournalSaver (and StateForgeCheckpointer, which also keeps every checkpoint's fields as
units) vs LangGraph's SqliteSaver on a 100-step graph: time per step and file size.

The graph loops one node 100 times; each step appends a line to a list channel and bumps a
counter (so state grows like a conversation). SqliteSaver runs at SQLite's synchronous=NORMAL,
the same durability as the journal's default, and at its own default (FULL). Also measures
resolving ``head~N`` at depth 10,000. Writes benchmarks/results/langgraph_saver.json.

    pip install -e '.[bench]'
    python benchmarks/langgraph_saver.py [--steps 100] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import operator
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Annotated, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

from workbench import Journal
from workbench.adapters.langgraph import JournalSaver, ThreadState
from workbench.compat.stateforge import StateForge
from workbench.compat.stateforge.adapters.langgraph import StateForgeCheckpointer

RESULTS = Path(__file__).parent / "results"


class S(TypedDict):
    lines: Annotated[list[str], operator.add]
    n: int


def graph(saver, steps: int):
    g = StateGraph(S)
    g.add_node("step", lambda s: {"lines": [f"step {s['n']}: " + "x" * 60], "n": s["n"] + 1})
    g.add_edge(START, "step")
    g.add_conditional_edges("step", lambda s: END if s["n"] >= steps else "step")
    return g.compile(checkpointer=saver)


def size(path: Path) -> int:
    return sum(
        p.stat().st_size
        for p in path.parent.glob(path.name + "*")
        if not p.name.endswith("-intents")
    )


def run(kind: str, path: Path, steps: int) -> tuple[float, int]:
    if kind == "journal":
        j = Journal.open(path, ThreadState)
        saver = JournalSaver(j)
    elif kind == "stateforge":
        sf = StateForge(path)
        saver = StateForgeCheckpointer(sf)
    else:
        con = sqlite3.connect(path, check_same_thread=False)
        if kind == "sqlite_normal":
            con.execute("PRAGMA synchronous=NORMAL")
        saver = SqliteSaver(con)
    g = graph(saver, steps)
    t = time.perf_counter()
    g.invoke(
        {"lines": [], "n": 0}, {"configurable": {"thread_id": "t"}, "recursion_limit": steps * 3}
    )
    per_step = (time.perf_counter() - t) / steps
    if kind == "journal":
        j.close()
    elif kind == "stateforge":
        sf.close_sync()
    else:
        con.close()
    return per_step, size(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as d:
        for kind in ("journal", "stateforge", "sqlite_normal", "sqlite_default"):
            times, sizes = [], []
            for r in range(args.repeats):
                t, b = run(kind, Path(d) / f"{kind}-{r}.db", args.steps)
                times.append(t)
                sizes.append(b)
            out[kind] = {
                "ms_per_step": statistics.median(times) * 1000,
                "bytes": statistics.median(sizes),
            }
        with Journal.open(Path(d) / "deep.db", durability="lazy") as j:
            b = j.root()
            for i in range(10_050):
                b.apply({"i": i})
        with Journal.open(Path(d) / "deep.db") as j:
            ts = []
            for _ in range(50):
                t = time.perf_counter()
                j.resolve("head~10000")
                ts.append(time.perf_counter() - t)
            head_n_us = statistics.median(ts) * 1e6
    base = out["sqlite_normal"]
    print(
        f"{args.steps}-step graph, median of {args.repeats}        ms/step      bytes   vs "
        f"SqliteSaver(NORMAL)"
    )
    for kind, r in out.items():
        print(
            f"  {kind:<34}{r['ms_per_step']:>8.2f} {int(r['bytes']):>10,}   "
            f"{r['ms_per_step'] / base['ms_per_step']:.2f}x time, "
            f"{r['bytes'] / base['bytes']:.2f}x size"
        )
    print(f"resolve head~10000 on a 10,050-event branch: {head_n_us:.0f} µs")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "langgraph_saver.json").write_text(
        json.dumps(
            {"steps": args.steps, "results": out, "head_tilde_10000_us": head_n_us}, indent=2
        )
        + "\n"
    )
    print(f"\nwrote {RESULTS / 'langgraph_saver.json'}")


if __name__ == "__main__":
    main()
