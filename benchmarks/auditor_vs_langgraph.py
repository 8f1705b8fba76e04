"""The auditor on lithify vs the same agent on LangGraph's graph API with SqliteSaver.

Both agents make the same calls through the same tools and mock model (one LangGraph
node per step, as LangGraph agents are usually written: read, plan, count and analyze inside
the step node; a compact node; a report node). Printed side by side: files, model calls,
compactions, findings, recall (identical by construction, and checked), wall ms of the run
excluding imports (median of --repeats; the timed runs write no call trace, an untimed first
run of each is traced to count its calls), commits/checkpoints, database size, and, for
--trials crash trials of --kills SIGKILLs each (20 ms model latency), the model and tool calls
each re-executed. Both agents observe the same metrics when they finish (LangGraph: a score node).
LangGraph runs with durability="sync" and SQLite synchronous=NORMAL, the durability of lithify's
"process" level (committed before going on, surviving kill -9); its default durability="async"
(checkpoints written while the next step runs) and its default sync level (FULL) are reported.

    pip install -e '.[bench]'
    python benchmarks/auditor_vs_langgraph.py [--repo DIR] [--repeats 5] [--trials 3] [--kills 8]

Results: benchmarks/results/auditor_vs_langgraph.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypedDict

from workbench import Journal
from workbench.agents.auditor import AuditState, Calls, MockModel, agent, logic

RESULTS = Path(__file__).parent / "results"
HERE = Path(__file__).resolve()


# -- the same agent on LangGraph -------------------------------------------------------------

# LangGraph configurations timed: (SQLite synchronous, LangGraph durability). "langgraph" is the
# same durability as lithify's "process": every step's checkpoint is committed before the next
# step starts, at the same SQLite sync level (lithify commits every call before it returns).
CONFIGS: dict[str, tuple[str, str]] = {
    "lithify": ("NORMAL", "process"),
    "langgraph": ("NORMAL", "sync"),
    "langgraph_async_normal": ("NORMAL", "async"),
    "langgraph_defaults": ("FULL", "async"),
}


class GraphState(TypedDict):
    root: str
    budget: int
    pending: list[str]
    done: list[str]
    notes: list[str]
    report: str | None
    compactions: int
    model_calls: int
    tokens_in: int
    metrics: dict[str, float] | None


def build_graph(calls: Calls, saver: Any) -> Any:
    from langgraph.graph import END, START, StateGraph

    def step(s: GraphState) -> dict[str, Any]:
        path = s["pending"][0]
        text = calls.read(s["root"], path)
        cats = calls.plan(path, text, f"plan:{path}")
        counts = {c: calls.count(path, text, c) for c in cats}
        note = calls.analyze(path, text, counts, f"analyze:{path}")
        return {
            "pending": s["pending"][1:],
            "done": [*s["done"], path],
            "notes": [*s["notes"], note],
            "model_calls": s["model_calls"] + 2,
            "tokens_in": s["tokens_in"] + 2 * logic.tokens(text) + logic.context_size(s["notes"]),
        }

    def compact(s: GraphState) -> dict[str, Any]:
        key = f"summarize:{len(s['notes'])}:{len(s['done'])}"
        summary = calls.summarize(s["notes"], s["budget"], key)
        return {
            "notes": [summary],
            "compactions": s["compactions"] + 1,
            "model_calls": s["model_calls"] + 1,
            "tokens_in": s["tokens_in"] + logic.context_size(s["notes"]),
        }

    def report(s: GraphState) -> dict[str, Any]:
        text = calls.report(s["notes"], "report")
        return {
            "report": text,
            "model_calls": s["model_calls"] + 1,
            "tokens_in": s["tokens_in"] + logic.context_size(s["notes"]),
        }

    def score(s: GraphState) -> dict[str, Any]:
        # The lithify agent observes its metrics when it finishes; so does this one (into its
        # state). Ground truth comes from the files, re-read outside the traced tools.
        truth = logic.ground_truth(s["root"], s["done"])
        recall, precision, _ = logic.score(truth, s["report"] or "")
        return {
            "metrics": {
                "recall": recall,
                "precision": precision,
                "compactions": s["compactions"],
                "model_calls": s["model_calls"],
                "tokens_in": s["tokens_in"],
                "files": len(s["done"]),
                "budget": s["budget"],
            }
        }

    def route(s: GraphState) -> str:
        if not s["pending"]:
            return "report"
        return "compact" if logic.context_size(s["notes"]) > s["budget"] else "step"

    g = StateGraph(GraphState)
    g.add_node("step", step)
    g.add_node("compact", compact)
    g.add_node("report", report)
    g.add_node("score", score)
    g.add_conditional_edges(START, lambda s: "step" if s["pending"] else "report")
    g.add_conditional_edges("step", route)
    g.add_conditional_edges("compact", lambda s: "step" if s["pending"] else "report")
    g.add_edge("report", "score")
    g.add_edge("score", END)
    return g.compile(checkpointer=saver)


def run_langgraph(
    db: str,
    repo: str,
    budget: int,
    max_files: int,
    calls: Calls,
    synchronous: str = "NORMAL",
    clock: list[float] | None = None,
    durability: str = "sync",
) -> dict[str, Any]:
    """Run (or resume) the LangGraph auditor on thread "audit" of an SqliteSaver file;
    appends the seconds the run took (open and close excluded) to ``clock``. ``durability``
    is LangGraph's: "sync" persists each step's checkpoint before the next step starts,
    "async" (its default) while the next step runs."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(db, check_same_thread=False)
    conn.execute(f"PRAGMA synchronous={synchronous}")
    saver = SqliteSaver(conn)
    graph = build_graph(calls, saver)
    config = {"configurable": {"thread_id": "audit"}, "recursion_limit": 100_000}
    t = time.perf_counter()
    snapshot = graph.get_state(config)
    if snapshot.values and not snapshot.next:
        final = snapshot.values
    elif snapshot.values:
        final = graph.invoke(None, config, durability=durability)
    else:
        first = {
            "root": repo,
            "budget": budget,
            "pending": logic.select_files(repo, max_files),
            "done": [],
            "notes": [],
            "report": None,
            "compactions": 0,
            "model_calls": 0,
            "tokens_in": 0,
            "metrics": None,
        }
        final = graph.invoke(first, config, durability=durability)
    if clock is not None:
        clock.append(time.perf_counter() - t)
    conn.close()
    return dict(final)


def run_lithify(
    db: str, repo: str, budget: int, max_files: int, calls: Calls, clock: list[float] | None = None
) -> AuditState:
    """Run (or resume) the lithify auditor; appends the run's seconds (open/close excluded)."""
    with Journal.open(db, AuditState) as j:
        t = time.perf_counter()
        b = j.root()
        agent.start(b, repo, budget, max_files)
        agent.run(b, calls)
        if clock is not None:
            clock.append(time.perf_counter() - t)
        return b.state()


def score(root: str, state: Any) -> dict[str, Any]:
    get = state.get if isinstance(state, dict) else lambda k: getattr(state, k)
    truth = logic.ground_truth(root, get("done"))
    recall, _, findings = logic.score(truth, get("report") or "")
    return {
        "files": len(get("done")),
        "model_calls": get("model_calls"),
        "compactions": get("compactions"),
        "findings": findings,
        "recall": recall,
    }


def commits(db: str, which: str) -> int:
    con = sqlite3.connect(db)
    try:
        if which == "langgraph":
            return con.execute(
                "SELECT (SELECT count(*) FROM checkpoints) + (SELECT count(*) FROM writes)"
            ).fetchone()[0]
        return con.execute("SELECT count(*) FROM events").fetchone()[0]
    finally:
        con.close()


def checkpoints(db: str) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    finally:
        con.close()


def fresh(path: Path) -> str:
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    return str(path)


# -- crash trials ----------------------------------------------------------------------------


def child(args: argparse.Namespace) -> None:
    calls = Calls(MockModel(), args.trace)
    if args.child == "langgraph":
        state: Any = run_langgraph(args.db, args.repo, args.budget, args.max_files, calls)
    else:
        state = run_lithify(args.db, args.repo, args.budget, args.max_files, calls)
    calls.close()
    print(json.dumps(score(args.repo, state)))


def crash_trial(
    which: str,
    tmp: Path,
    repo: str,
    budget: int,
    max_files: int,
    kills: int,
    interval_ms: int,
    seed: int,
    clean: dict[str, int],
) -> dict[str, int]:
    rng = random.Random(seed)
    db, trace = fresh(tmp / f"crash-{which}-{seed}.db"), tmp / f"crash-{which}-{seed}.trace"
    trace.unlink(missing_ok=True)
    env = {**os.environ, "AUDITOR_SLOW_MS": "20"}
    cmd = [
        sys.executable,
        str(HERE),
        "--child",
        which,
        "--db",
        db,
        "--trace",
        str(trace),
        "--repo",
        repo,
        "--budget",
        str(budget),
        "--max-files",
        str(max_files),
    ]
    landed = 0
    for _ in range(kills):
        before = trace.stat().st_size if trace.exists() else 0
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while (not trace.exists() or trace.stat().st_size <= before) and p.poll() is None:
            time.sleep(0.002)
        if p.poll() is not None:
            break
        time.sleep(rng.uniform(0.2, 1.8) * interval_ms / 1000)
        p.send_signal(signal.SIGKILL)
        p.wait()
        landed += 1
    done = subprocess.run(
        [*cmd],
        env={**os.environ, "AUDITOR_SLOW_MS": "0"},
        check=True,
        capture_output=True,
        text=True,
    )
    final = json.loads(done.stdout.strip().splitlines()[-1])
    lines = trace.read_text().splitlines()
    model = sum(line.startswith("model ") for line in lines)
    tool = sum(line.startswith("tool ") for line in lines)
    # A resumed run that stops short makes fewer calls than a clean run: say so rather than
    # report a negative re-run count.
    complete = final == clean["result"]
    return {
        "kills": landed,
        "complete": complete,
        "final": final,
        "model_rerun": model - clean["model"] if complete else None,
        "tool_rerun": tool - clean["tool"] if complete else None,
    }


# -- main ------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repo", default=None, help="source tree (default: the bundled data/corpus)")
    ap.add_argument("--budget", type=int, default=logic.DEFAULT_BUDGET)
    ap.add_argument("--max-files", type=int, default=logic.DEFAULT_MAX_FILES)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--kills", type=int, default=8)
    ap.add_argument("--interval-ms", type=int, default=150)
    ap.add_argument("--child", choices=["lithify", "langgraph"], help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    ap.add_argument("--trace", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.repo = os.path.abspath(args.repo or agent.bundled_corpus())
    if args.child:
        child(args)
        return
    repo_root = HERE.parents[1]
    shown = (
        os.path.relpath(args.repo, repo_root)
        if Path(args.repo).is_relative_to(repo_root)
        else Path(args.repo).name
    )  # no machine-specific path in the committed results
    out: dict[str, Any] = {"repo": shown, "budget": args.budget, "max_files": args.max_files}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        runs: dict[str, dict[str, Any]] = {}
        walls: dict[str, list[float]] = {name: [] for name in CONFIGS}
        totals: dict[str, list[float]] = {k: [] for k in walls}
        clean_calls: dict[str, int] = {}
        for r in range(args.repeats + 1):  # run 0 is traced (call counts) and not timed
            for which in walls:
                db = fresh(tmp / f"{which}-{r}.db")
                trace = tmp / f"{which}-{r}.trace"
                trace.unlink(missing_ok=True)
                calls = Calls(MockModel(), trace if r == 0 else None)
                clock: list[float] = []
                gc.collect()  # start every run from the same heap, whichever ran before it
                t = time.perf_counter()
                if which == "lithify":
                    state: Any = run_lithify(
                        db, args.repo, args.budget, args.max_files, calls, clock
                    )
                else:
                    sync, durability = CONFIGS[which]
                    state = run_langgraph(
                        db, args.repo, args.budget, args.max_files, calls, sync, clock, durability
                    )
                if r > 0:
                    totals[which].append((time.perf_counter() - t) * 1000)
                    walls[which].append(clock[0] * 1000)
                calls.close()
                if r == 0:
                    lines = trace.read_text().splitlines()
                    clean_calls = {
                        "model": sum(x.startswith("model ") for x in lines),
                        "tool": sum(x.startswith("tool ") for x in lines),
                        "result": score(args.repo, state),
                    }
                    name = "langgraph" if which.startswith("langgraph") else "lithify"
                    runs[which] = {
                        **score(args.repo, state),
                        "commits": commits(db, name),
                        "db_bytes": os.path.getsize(db),
                    }
                    if name == "langgraph":
                        runs[which]["checkpoints"] = checkpoints(db)
        same = ("files", "model_calls", "compactions", "findings", "recall")
        identical = all(runs["lithify"][k] == runs["langgraph"][k] for k in same)
        crash: dict[str, list[dict[str, int]]] = {"lithify": [], "langgraph": []}
        for trial in range(args.trials):
            for which in crash:
                crash[which].append(
                    crash_trial(
                        which,
                        tmp,
                        args.repo,
                        args.budget,
                        args.max_files,
                        args.kills,
                        args.interval_ms,
                        1000 + trial,
                        clean_calls,
                    )
                )
    med = {k: statistics.median(v) for k, v in walls.items()}
    med_total = {k: statistics.median(v) for k, v in totals.items()}
    out.update(
        {
            "runs": runs,
            "identical_results": identical,
            "wall_ms_median": med,
            "wall_ms_all": walls,
            "wall_ms_with_open_close_median": med_total,
            "wall_ratio_lithify_over_langgraph": med["lithify"] / med["langgraph"],
            "wall_ratio_lithify_over_langgraph_async_normal": med["lithify"]
            / med["langgraph_async_normal"],
            "wall_ratio_lithify_over_langgraph_defaults": med["lithify"]
            / med["langgraph_defaults"],
            "configurations": {
                name: {"sqlite_synchronous": c[0], "langgraph_durability": c[1]}
                for name, c in CONFIGS.items()
            },
            "crash_trials": crash,
            "targets": {
                "wall_ratio_le_0.5": med["lithify"] / med["langgraph"] <= 0.5,
                "lithify_tool_reruns_zero": all(
                    c["complete"] and c["tool_rerun"] == 0 for c in crash["lithify"]
                ),
                "lithify_model_reruns_le_1_per_kill": all(
                    c["complete"] and c["model_rerun"] <= c["kills"] for c in crash["lithify"]
                ),
                "db_not_larger": runs["lithify"]["db_bytes"] <= runs["langgraph"]["db_bytes"],
            },
        }
    )
    rows = [
        ("files", runs["lithify"]["files"], runs["langgraph"]["files"]),
        ("model calls", runs["lithify"]["model_calls"], runs["langgraph"]["model_calls"]),
        ("compactions", runs["lithify"]["compactions"], runs["langgraph"]["compactions"]),
        ("findings", runs["lithify"]["findings"], runs["langgraph"]["findings"]),
        ("recall", f"{runs['lithify']['recall']:.3f}", f"{runs['langgraph']['recall']:.3f}"),
        (f"wall ms (median of {args.repeats})", f"{med['lithify']:.1f}", f"{med['langgraph']:.1f}"),
        ("  LangGraph durability=async, NORMAL", "", f"{med['langgraph_async_normal']:.1f}"),
        ("  LangGraph defaults (async, FULL)", "", f"{med['langgraph_defaults']:.1f}"),
        (
            "wall ms incl. open + close",
            f"{med_total['lithify']:.1f}",
            f"{med_total['langgraph']:.1f}",
        ),
        (
            "commits (events | checkpoints+writes)",
            runs["lithify"]["commits"],
            runs["langgraph"]["commits"],
        ),
        ("database bytes", runs["lithify"]["db_bytes"], runs["langgraph"]["db_bytes"]),
    ]

    def shown(trial: dict[str, Any], what: str) -> Any:
        return trial[what] if trial["complete"] else "incomplete"

    for t, (a, b) in enumerate(zip(crash["lithify"], crash["langgraph"], strict=True), 1):
        rows.append(
            (
                f"trial {t}: model calls re-run ({a['kills']}/{b['kills']} kills)",
                shown(a, "model_rerun"),
                shown(b, "model_rerun"),
            )
        )
        rows.append(
            (f"trial {t}: tool calls re-run", shown(a, "tool_rerun"), shown(b, "tool_rerun"))
        )
    print(f"{'':<44}{'lithify':>14}{'LangGraph':>14}")
    for label, a, b in rows:
        print(f"{label:<44}{a!s:>14}{b!s:>14}")
    print(
        f"\nidentical results: {identical}; wall ratio lithify/LangGraph: "
        f"{med['lithify'] / med['langgraph']:.2f} at the same durability (target <= 0.5), "
        f"{med['lithify'] / med['langgraph_async_normal']:.2f} against durability=async at the "
        f"same SQLite sync, {med['lithify'] / med['langgraph_defaults']:.2f} against LangGraph's "
        f"defaults"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "auditor_vs_langgraph.json").write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {RESULTS / 'auditor_vs_langgraph.json'}")


if __name__ == "__main__":
    main()
