"""Sweep benchmark: 6 auditor forks with 200 ms model latency on 2 workers, per runner.

For each runner (process, papermill, warm, dask) the sweep's wall time is compared with the ideal
parallel time (the forks' own work, measured in this process, divided by the workers); the
difference, spread over the forks, is the runner's overhead per fork (start-up included).
"steady/fork" is the median fork's wall minus the median fork's own work: the cost of one
more fork once the runner is up (for the warm pool, with its kernels already started).
The dask runner's wall includes starting its LocalCluster (2 worker processes); "dask (warm
cluster)" runs on a cluster started before the clock starts, as a team's running cluster is.
Baseline: the same forks run one after another in this process.
Writes benchmarks/results/sweep.json (only the runners run are replaced).

    python benchmarks/sweep.py [--forks 6] [--workers 2] [--latency-ms 200] [--runners a,b]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from workbench import Journal, sweep
from workbench.agents.auditor import AuditState, Calls, MockModel, fork_seq_after_files, run, start

RESULTS = Path(__file__).parent / "results"
TEMPLATE = Path(__file__).resolve().parents[1] / "notebooks" / "templates" / "auditor_fork.ipynb"
BUDGETS = [300, 600, 1200, 2400, 4800, 9600]


def base_journal(path: Path) -> int:
    with Journal.open(path, AuditState) as j:
        b = j.root()
        start(b, None, 3000, 4)
        run(b, Calls(MockModel(), slow_ms=0))
        return fork_seq_after_files(b, 1)


def inline_work(path: Path, at: int, n: int, latency_ms: int) -> list[float]:
    """Seconds each fork takes when run directly in this process (no runner)."""
    out = []
    with Journal.open(path, AuditState) as j:
        for i in range(n):
            f = j.root().fork_at(at, params={"budget": BUDGETS[i % len(BUDGETS)]})
            t = time.perf_counter()
            start(f, budget=BUDGETS[i % len(BUDGETS)])
            run(f, Calls(MockModel(), slow_ms=latency_ms))
            out.append(time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--forks", type=int, default=6)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--latency-ms", type=int, default=200)
    ap.add_argument("--runners", default="process,papermill,warm,dask,dask-warm")
    args = ap.parse_args()
    chosen = args.runners.split(",")
    os.environ["AUDITOR_SLOW_MS"] = str(args.latency_ms)
    budgets = [BUDGETS[i % len(BUDGETS)] for i in range(args.forks)]
    rows = {}
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "sweep.db"
        at = base_journal(path)
        work = inline_work(path, at, args.forks, args.latency_ms)
        sequential = sum(work)
        ideal = sequential / args.workers
        for name in chosen:
            runner = "dask" if name.startswith("dask") else name
            uses_fn = runner in ("process", "dask")
            client = None
            if name == "dask-warm":
                import distributed

                cluster = distributed.LocalCluster(
                    n_workers=args.workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",
                    silence_logs=40,
                )
                client = distributed.Client(cluster)
            with Journal.open(path, AuditState) as j:
                p = sweep.plan(
                    j,
                    0,
                    at,
                    {"budget": budgets},
                    notebook=None if uses_fn else TEMPLATE,
                    fn="workbench.agents.auditor:run_fork" if uses_fn else None,
                )
                t = time.perf_counter()
                result = sweep.run(
                    p, runner=runner, workers=args.workers, progress=False, scheduler=client
                )
                wall = time.perf_counter() - t
            if client is not None:
                client.close()
                cluster.close()
                assert result.ok, result
            overhead = max(0.0, (wall - ideal) * args.workers / args.forks)
            fork_median = statistics.median(f.wall_s or 0 for f in result.forks)
            rows[name] = {
                "wall_s": wall,
                "ideal_s": ideal,
                "efficiency": ideal / wall,
                "overhead_per_fork_s": overhead,
                "fork_wall_median_s": fork_median,
                "steady_overhead_per_fork_s": max(0.0, fork_median - statistics.median(work)),
            }
    targets = {"process_efficiency": 0.8, "papermill_overhead_s": 1.0, "warm_overhead_s": 0.25}
    previous = RESULTS / "sweep.json"
    if previous.exists():  # keep the runners not run this time
        rows = {**json.loads(previous.read_text()).get("runners", {}), **rows}
    result_doc = {
        "forks": args.forks,
        "workers": args.workers,
        "latency_ms": args.latency_ms,
        "inline_work_s": work,
        "sequential_s": sequential,
        "runners": rows,
        "targets": targets,
        "pass": {
            "process_efficiency": rows["process"]["efficiency"] >= 0.8,
            "papermill_overhead": rows["papermill"]["overhead_per_fork_s"] <= 1.0,
            "warm_overhead": rows["warm"]["overhead_per_fork_s"] <= 0.25,
            "warm_steady_overhead": rows["warm"]["steady_overhead_per_fork_s"] <= 0.25,
        }
        if {"process", "papermill", "warm"} <= set(rows)
        else {},
    }
    print(
        f"{args.forks} forks x ~{statistics.median(work):.2f} s of work ({args.latency_ms} ms "
        f"model latency), "
        f"{args.workers} workers; sequential in-process baseline {sequential:.2f} s, ideal "
        f"{ideal:.2f} s"
    )
    print(
        f"{'runner':<12}{'wall s':>9}{'speedup':>10}{'of ideal':>10}{'overhead/fork':>15}"
        f"{'steady/fork':>13}{'target':>14}"
    )
    goal = {"process": "≥ 80% ideal", "papermill": "≤ 1 s", "warm": "≤ 0.25 s"}
    for runner, r in rows.items():
        if runner not in chosen:
            continue
        print(
            f"{runner:<12}{r['wall_s']:>9.2f}{sequential / r['wall_s']:>9.2f}x"
            f"{r['efficiency']:>9.0%}"
            f"{r['overhead_per_fork_s']:>14.2f}s{r['steady_overhead_per_fork_s']:>12.2f}s"
            f"{goal.get(runner, ''):>14}"
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "sweep.json").write_text(json.dumps(result_doc, indent=2) + "\n")
    print(f"\nwrote {RESULTS / 'sweep.json'}")


if __name__ == "__main__":
    main()
