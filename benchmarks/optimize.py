"""Adaptive sweeps benchmark: does letting Optuna choose beat a hand-typed grid, and does
pruning save work without losing the best?

1. A deterministic three-parameter objective (Branin over two floats plus an offset per
   category, minimized; its global minimum is 0.398 in category "a"), every trial a real fork
   run by the process runner, reporting the objective at 10 steps that close in on its value:
   - TPE with 30 forks (median of 5 seeds) vs the baseline, a 75-point grid (5 x 5 x 3);
   - the median pruner on vs off, 30 forks, with the random sampler (it samples the same
     points either way, so the pruner's saving is measured alone) and with TPE (whose later
     trials depend on what was pruned): fork-steps run and best value.
2. The memory experiment (the bundled LoCoMo-format sample): budget (10..150 tokens, log) x
   retrieval configuration, recall maximized: TPE with 15 forks (median of 3 seeds) vs a
   15-point grid over the same ranges, and the median pruner on vs off with the random sampler
   (questions answered, best recall).

Also draws the best value so far by fork (TPE, TPE with pruning, the grid in its order) to
docs/img/optimize-best-so-far.png.

Goal (issue 24): TPE's best at 30 forks at least as good as the grid's at 75; pruning saves
>= 30% of fork-steps with the same best. Writes benchmarks/results/optimize.json.

    python benchmarks/optimize.py [--seeds 5] [--workers 2] [--skip-memory]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
STEPS = 10
GRID = {
    "x1": [-5.0, -1.25, 2.5, 6.25, 10.0],
    "x2": [0.0, 3.75, 7.5, 11.25, 15.0],
    "kind": ["a", "b", "c"],
}


def branin(x1: float, x2: float, kind: str) -> float:
    a, b, c = 1.0, 5.1 / (4 * math.pi**2), 5 / math.pi
    value = a * (x2 - b * x1**2 + c * x1 - 6.0) ** 2 + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1)
    return value + 10 + {"a": 0.0, "b": 5.0, "c": 20.0}[kind]


def branin_fork(journal: str, branch: int, params: dict) -> None:
    """A trial: the objective reported at 10 steps, approaching its value from above (what a
    training run's loss does), then observed."""
    from workbench import Journal, sweep

    value = branin(float(params["x1"]), float(params["x2"]), str(params["kind"]))
    with Journal.open(journal) as j:
        b = j.branch(branch)
        for step in range(1, STEPS + 1):
            sweep.report(b, value + 30.0 / step, step, metric="loss")
        b.observe("loss", value)


def _journal(path: Path) -> None:
    from workbench import Journal

    with Journal.open(path) as j:
        j.root().apply({"start": True})


def _fork_steps(study) -> int:
    return sum(
        STEPS if t.state == "complete" else (t.step or 0)
        for t in study.trials
        if t.state in ("complete", "pruned")
    )


def branin_runs(seeds: int, workers: int, tmp: Path) -> dict:
    from workbench import Journal, sweep

    space = {
        "x1": sweep.Float(-5.0, 10.0),
        "x2": sweep.Float(0.0, 15.0),
        "kind": sweep.Categorical(["a", "b", "c"]),
    }
    out: dict = {"grid": {}, "tpe": [], "tpe_pruned": []}
    grid_values: list[float] = []
    db = tmp / "grid.db"
    _journal(db)
    t = time.perf_counter()
    with Journal.open(db) as j:
        plan = sweep.plan(j, 0, 1, GRID, fn="optimize:branin_fork")
        sweep.run(plan, workers=workers, progress=False)
        wide = j.matrix(sweep=plan.id, wide=True, metrics=["loss"]).sort("branch")
        losses = wide["loss"].to_list()
        grid_values = list(losses)
    out["grid"] = {
        "forks": 75,
        "best": min(losses),
        "fork_steps": 75 * STEPS,
        "wall_s": time.perf_counter() - t,
    }
    out["random"], out["random_pruned"] = [], []
    for sampler, pruner, key in (
        ("tpe", "none", "tpe"),
        ("tpe", "median", "tpe_pruned"),
        ("random", "none", "random"),
        ("random", "median", "random_pruned"),
    ):
        for seed in range(seeds):
            db = tmp / f"{key}-{seed}.db"
            _journal(db)
            t = time.perf_counter()
            with Journal.open(db) as j:
                study = sweep.optimize(
                    j,
                    1,
                    space,
                    "loss",
                    "minimize",
                    forks=30,
                    workers=workers,
                    sampler=sampler,
                    pruner=pruner,
                    seed=seed,
                    fn="optimize:branin_fork",
                    progress=False,
                )
            out[key].append(
                {
                    "seed": seed,
                    "best": study.best.value,
                    "fork_steps": _fork_steps(study),
                    "pruned": sum(x.state == "pruned" for x in study.trials),
                    "values": [x.value for x in study.trials],
                    "wall_s": time.perf_counter() - t,
                }
            )
            print(f"  branin {key} seed {seed}: best {study.best.value:.4f}", file=sys.stderr)
    out["grid"]["values"] = grid_values
    return out


def memory_runs(seeds: int, workers: int, tmp: Path) -> dict:
    from workbench import Journal, plugins, sweep
    from workbench.agents.memory import ingest, load
    from workbench.memory import Memory

    agent = plugins.agent_for(Memory.state_name)
    assert agent is not None
    db = tmp / "memory.db"
    with Journal.open(db, Memory) as j:
        at = ingest(j.root(), load(fmt="locomo"))
    space = {
        "budget": sweep.Int(10, 150, log=True),
        "retrieval": sweep.Categorical(list(agent.grid["retrieval"])),
    }
    grid = {"budget": [10, 20, 40, 80, 150], "retrieval": list(agent.grid["retrieval"])}
    out: dict = {"grid": {}, "tpe": [], "random": [], "random_pruned": []}
    with Journal.open(db, Memory) as j:
        t = time.perf_counter()
        plan = sweep.plan(j, 0, at, grid, fn=agent.fork)
        sweep.run(plan, workers=workers, progress=False)
        recalls = j.matrix(sweep=plan.id, wide=True, metrics=["recall"])["recall"].to_list()
        out["grid"] = {
            "forks": len(plan.forks),
            "best": max(recalls),
            "wall_s": time.perf_counter() - t,
        }
        for sampler, pruner, key in (
            ("tpe", "none", "tpe"),
            ("random", "none", "random"),
            ("random", "median", "random_pruned"),
        ):
            for seed in range(seeds):
                t = time.perf_counter()
                study = sweep.optimize(
                    j,
                    at,
                    space,
                    "recall",
                    "maximize",
                    forks=15,
                    workers=workers,
                    sampler=sampler,
                    pruner=pruner,
                    seed=seed,
                    fn=agent.fork,
                    progress=False,
                )
                questions = sum(
                    (max(x.intermediate) if x.intermediate else 0)
                    for x in study.trials
                    if x.state in ("complete", "pruned")
                )
                out[key].append(
                    {
                        "seed": seed,
                        "best": study.best.value,
                        "questions": questions,
                        "pruned": sum(x.state == "pruned" for x in study.trials),
                        "wall_s": time.perf_counter() - t,
                    }
                )
                print(f"  memory {key} seed {seed}: best {study.best.value:.4f}", file=sys.stderr)
    return out


def best_so_far_chart(b: dict) -> None:
    """Best loss so far by fork: TPE and TPE with pruning (median over seeds), the grid."""
    import altair as alt
    import polars as pl

    from workbench import charts

    rows = []
    for key, label in (("tpe", "TPE"), ("tpe_pruned", "TPE + median pruner")):
        curves = []
        for run in b[key]:
            best, curve = math.inf, []
            for v in run["values"]:
                best = min(best, v) if v is not None else best
                curve.append(best)
            curves.append(curve)
        for i in range(len(curves[0])):
            vals = [c[i] for c in curves if math.isfinite(c[i])]
            if vals:
                rows.append({"fork": i + 1, "best": statistics.median(vals), "run": label})
    best = math.inf
    for i, v in enumerate(b["grid"]["values"]):
        best = min(best, v)
        rows.append({"fork": i + 1, "best": best, "run": "grid of 75 (its order)"})
    chart = (
        alt.Chart(pl.DataFrame(rows))
        .mark_line(point=True)
        .encode(
            x=alt.X("fork:Q", title="forks run"),
            y=alt.Y(
                "best:Q", title="best loss so far (median of seeds)", scale=alt.Scale(type="log")
            ),
            color=alt.Color("run:N", title=None),
        )
        .properties(width=460, height=260, title="Letting the sweep choose: Branin + category")
    )
    out = HERE.parent / "docs" / "img" / "optimize-best-so-far.png"
    out.parent.mkdir(parents=True, exist_ok=True)
    charts.save(chart, out)


def _median(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--skip-memory", action="store_true")
    args = ap.parse_args()
    os.environ["PYTHONPATH"] = str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", "")
    sys.path.insert(0, str(HERE))
    results: dict = {"steps": STEPS, "workers": args.workers, "seeds": args.seeds}
    with tempfile.TemporaryDirectory() as d:
        results["branin"] = branin_runs(args.seeds, args.workers, Path(d))
        if not args.skip_memory:
            results["memory"] = memory_runs(max(1, min(3, args.seeds)), args.workers, Path(d))
    b = results["branin"]
    grid = b["grid"]
    print("\nBranin + category offset (minimize; the optimum is 0.398), 30 forks per study")
    print(f"{'run':<36}{'forks':>7}{'best (median)':>15}{'fork-steps':>12}{'vs grid':>9}")
    print(f"{'grid of 75 points (baseline)':<36}{75:>7}{grid['best']:>15.4f}{750:>12}{1:>9.2f}")
    for key, name in (
        ("tpe", "TPE"),
        ("tpe_pruned", "TPE + median pruner"),
        ("random", "random"),
        ("random_pruned", "random + median pruner"),
    ):
        rows = b[key]
        steps = _median(rows, "fork_steps")
        print(f"{name:<36}{30:>7}{_median(rows, 'best'):>15.4f}{steps:>12.0f}{steps / 750:>9.2f}")
    saved_random = 1 - _median(b["random_pruned"], "fork_steps") / _median(
        b["random"], "fork_steps"
    )
    saved_tpe = 1 - _median(b["tpe_pruned"], "fork_steps") / _median(b["tpe"], "fork_steps")
    same_best = all(
        p["best"] == q["best"] for p, q in zip(b["random"], b["random_pruned"], strict=True)
    )
    beats = _median(b["tpe"], "best") <= grid["best"]
    print(
        f"TPE's best at 30 <= the grid's at 75: {beats}; the median pruner saves "
        f"{saved_random:.0%} of fork-steps with the random sampler (same best in every seed: "
        f"{same_best}), {saved_tpe:.0%} with TPE"
    )
    results["summary"] = {
        "tpe_best_median": _median(b["tpe"], "best"),
        "tpe_pruned_best_median": _median(b["tpe_pruned"], "best"),
        "grid_best": grid["best"],
        "tpe_beats_grid": beats,
        "pruning_saves_random": saved_random,
        "pruning_same_best_random": same_best,
        "pruning_saves_tpe": saved_tpe,
    }
    best_so_far_chart(b)
    if "memory" in results:
        m = results["memory"]
        msaved = 1 - _median(m["random_pruned"], "questions") / _median(m["random"], "questions")
        msame = all(
            p["best"] == q["best"] for p, q in zip(m["random"], m["random_pruned"], strict=True)
        )
        print("\nMemory experiment (recall, maximize), 15 forks per study")
        print(f"{'run':<36}{'forks':>7}{'best (median)':>15}{'questions':>12}")
        print(
            f"{'grid of 15 points (baseline)':<36}{m['grid']['forks']:>7}{m['grid']['best']:>15.4f}"
        )
        for key, name in (
            ("tpe", "TPE"),
            ("random", "random"),
            ("random_pruned", "random + median pruner"),
        ):
            best, asked = _median(m[key], "best"), _median(m[key], "questions")
            print(f"{name:<36}{15:>7}{best:>15.4f}{asked:>12.0f}")
        print(
            f"the median pruner saves {msaved:.0%} of the questions answered (same best: {msame})"
        )
        results["summary"].update(
            {
                "memory_grid_best": m["grid"]["best"],
                "memory_tpe_best_median": _median(m["tpe"], "best"),
                "memory_pruning_saves": msaved,
                "memory_pruning_same_best": msame,
            }
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "optimize.json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
