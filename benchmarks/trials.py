"""Trials benchmark: what a trial costs beyond its own work, side by side with Optuna in one run.

1. Throughput: a 1 ms objective, 200 trials, 2 workers, the random and TPE samplers (seeded):
   Optuna in process (``study.optimize``, the baseline), Optuna with an SQLite storage and
   ``n_jobs=2``, ``lithify optimize`` on the pool runner (its workers kept warm from an earlier
   study of the function, as in a notebook session, and, reported, fresh workers started by
   the study), and (fewer trials, reported) on the process runner. Trials per second, median of
   ``--repeats`` runs; goals: the pool >= 0.5x Optuna in process (random) and >= 3x Optuna with
   SQLite storage.
2. Per-fork overhead from a 10^4-event prefix: a sweep of forks of the last of 10^4 events,
   each reading its state and an inherited effect and observing a value; overhead per fork =
   sweep wall x workers / forks - the fork function's own time in this process (the kernel
   client libraries imported beforehand, once per process; the kernels start inside the wall).
   Goals: pool <= 10 ms, warm papermill <= 150 ms; process reported.
3. The ML case (needs scikit-learn): a 3 s preprocessing effect, then 30 TPE trials of a
   logistic regression with 3-fold cross-validation; the baseline is the Optuna script that
   hoists the preprocessing by hand. Goal: total wall <= 1.5x the baseline, the same best
   within noise.
4. I/O-bound forks: ``--async-forks`` forks (1,000) of ten simulated 200 ms model calls each
   (journaled effects), 2 workers, concurrency 100; the ideal is forks x calls x 0.2 s / (2 x
   100). Goal: wall <= 3x the ideal. Then the same sweep's coordinator SIGKILLed midway and
   resumed: no committed call runs again.

Writes benchmarks/results/trials.json.

    python benchmarks/trials.py [--repeats 3] [--skip ml,async] [--async-forks 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


# -- the objectives (imported by the runners' workers as trials:NAME) --------------------------


def busy(seconds: float) -> None:
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        pass


def value_of(x: float, y: float) -> float:
    return (x - 0.3) ** 2 + (y - 0.6) ** 2


def objective_1ms(journal: str, branch: int, params: dict[str, Any]) -> dict[str, float]:
    """A lithify fork: 1 ms of work, its value returned (observed by the runner)."""
    busy(0.001)
    return {"value": value_of(float(params["x"]), float(params["y"]))}


def prefix_fork(journal: str, branch: int, params: dict[str, Any]) -> None:
    """A fork of the 10^4-event prefix: its state, an inherited effect, one observation."""
    from workbench import Journal

    with Journal.open(journal) as j:
        b = j.branch(branch)
        state = b.state()
        seen = b.effect("draw:17", lambda: None)
        b.observe("n", float(len(state.get("items", [])) + seen[0] + params["k"]))


def dataset() -> dict[str, Any]:
    """The preprocessing: a synthetic classification set, scaled (3 s of work in all)."""
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import StandardScaler

    t = time.perf_counter()
    x, y = make_classification(n_samples=3000, n_features=30, n_informative=12, random_state=0)
    x = StandardScaler().fit_transform(x)
    time.sleep(max(0.0, 3.0 - (time.perf_counter() - t)))  # the rest of a 3 s preprocessing
    return {"x": [[round(v, 6) for v in row] for row in x.tolist()], "y": y.tolist()}


def cv_score(data: dict[str, Any], c: float, l1_ratio: float) -> float:
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score

    model = LogisticRegression(
        C=c, l1_ratio=l1_ratio, penalty="elasticnet", solver="saga", max_iter=200
    )
    x, y = np.asarray(data["x"]), np.asarray(data["y"])
    return float(cross_val_score(model, x, y, cv=3).mean())


def ml_fork(journal: str, branch: int, params: dict[str, Any]) -> dict[str, float]:
    """A trial of the ML case: the preprocessed data read back (inherited), a CV score."""
    from workbench import Journal

    with Journal.open(journal) as j:
        data = j.branch(branch).effect("preprocess", dataset)
    return {"accuracy": cv_score(data, float(params["c"]), float(params["l1_ratio"]))}


async def model_calls(journal: str, branch: int, params: dict[str, Any]) -> None:
    """An I/O-bound fork: ten simulated 200 ms model calls, each a journaled effect (a line in
    $TRIALS_CALLS when it really runs), each reply applied as a delta."""
    from workbench import Journal

    log = os.environ.get("TRIALS_CALLS")
    with Journal.open(journal) as j:
        b = j.branch(branch)
        for i in range(10):

            async def call(i: int = i) -> str:
                if log:
                    with open(log, "a") as f:
                        f.write(f"{branch}:{i}\n")
                await asyncio.sleep(float(params.get("latency", 0.2)))
                return f"reply {i}"

            b.apply({"reply": await b.aeffect(f"model:{i}", call)})


# -- measurements -------------------------------------------------------------------------------


def optuna_in_process(sampler: str, trials: int) -> float:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    s = _sampler(sampler)
    study = optuna.create_study(sampler=s)
    t = time.perf_counter()
    study.optimize(
        lambda tr: (
            busy(0.001),
            value_of(tr.suggest_float("x", 0, 1), tr.suggest_float("y", 0, 1)),
        )[1],
        n_trials=trials,
    )
    return trials / (time.perf_counter() - t)


def optuna_sqlite(sampler: str, trials: int, folder: Path) -> float:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = f"sqlite:///{folder / f'optuna-{sampler}-{time.time_ns()}.sqlite3'}"
    study = optuna.create_study(sampler=_sampler(sampler), storage=url)
    t = time.perf_counter()
    study.optimize(
        lambda tr: (
            busy(0.001),
            value_of(tr.suggest_float("x", 0, 1), tr.suggest_float("y", 0, 1)),
        )[1],
        n_trials=trials,
        n_jobs=2,
    )
    return trials / (time.perf_counter() - t)


def _sampler(name: str) -> Any:
    import optuna

    return (
        optuna.samplers.RandomSampler(seed=0)
        if name == "random"
        else optuna.samplers.TPESampler(seed=0)
    )


def lithify_study(
    sampler: str, trials: int, runner: str, folder: Path, fresh: bool = False
) -> float:
    """Trials per second of one study. ``fresh``: its pool starts its own workers (none kept
    warm from an earlier study of the same function: $LITHIFY_POOL_KEEP_S=0)."""
    from workbench import Journal, sweep

    before = os.environ.get("LITHIFY_POOL_KEEP_S")
    if fresh:
        os.environ["LITHIFY_POOL_KEEP_S"] = "0"

    with Journal.open(folder / f"study-{runner}-{sampler}-{time.time_ns()}.db") as j:
        j.root().apply({"start": True})
        t = time.perf_counter()
        study = sweep.optimize(
            j,
            1,
            {"x": sweep.Float(0.0, 1.0), "y": sweep.Float(0.0, 1.0)},
            "value",
            "minimize",
            forks=trials,
            workers=2,
            sampler=sampler,
            pruner="none",
            seed=0,
            fn="trials:objective_1ms",
            runner=runner,
            progress=False,
        )
        wall = time.perf_counter() - t
        assert all(tr.state == "complete" for tr in study.trials), study
    if fresh:
        if before is None:
            os.environ.pop("LITHIFY_POOL_KEEP_S", None)
        else:
            os.environ["LITHIFY_POOL_KEEP_S"] = before
    return trials / wall


def throughput(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for sampler in ("random", "tpe"):
        runs: dict[str, list[float]] = {
            k: [] for k in ("optuna", "optuna-sqlite", "pool", "pool-fresh", "process")
        }
        lithify_study(sampler, 20, "pool", folder)  # the pool's workers, kept warm from here
        for _ in range(args.repeats):  # interleaved: the machine's speed drifts within minutes
            runs["optuna"].append(optuna_in_process(sampler, args.trials))
            runs["optuna-sqlite"].append(optuna_sqlite(sampler, args.trials, folder))
            runs["pool"].append(lithify_study(sampler, args.trials, "pool", folder))
            runs["pool-fresh"].append(
                lithify_study(sampler, args.trials, "pool", folder, fresh=True)
            )
            if sampler == "random":
                runs["process"].append(lithify_study(sampler, 20, "process", folder))
        med = {k: statistics.median(v) for k, v in runs.items() if v}
        rows[sampler] = {
            "trials_per_s": med,
            "runs": runs,
            "pool_vs_optuna": med["pool"] / med["optuna"],
            "pool_fresh_vs_optuna": med["pool-fresh"] / med["optuna"],
            "pool_vs_optuna_sqlite": med["pool"] / med["optuna-sqlite"],
        }
    print(f"\n1 ms objective, {args.trials} trials, 2 workers (trials/s, median of {args.repeats})")
    print(f"{'contender':<40}{'random':>10}{'tpe':>10}")
    for key, label in (
        ("optuna", "Optuna in process (baseline)"),
        ("optuna-sqlite", "Optuna, SQLite storage, n_jobs=2"),
        ("pool", "lithify optimize, pool (kept warm)"),
        ("pool-fresh", "lithify optimize, pool (fresh workers)"),
        ("process", "lithify optimize, process runner"),
    ):
        cells = [rows[s]["trials_per_s"].get(key) for s in ("random", "tpe")]
        print(f"{label:<40}" + "".join(f"{c:>10.1f}" if c else f"{'-':>10}" for c in cells))
    for s in ("random", "tpe"):
        r = rows[s]
        print(
            f"  {s}: pool {r['pool_vs_optuna']:.2f}x Optuna in process (goal >= 0.5 for random; "
            f"{r['pool_fresh_vs_optuna']:.2f}x with fresh workers), "
            f"{r['pool_vs_optuna_sqlite']:.1f}x Optuna with SQLite storage (goal >= 3)"
        )
    return rows


def prefix_journal(path: Path) -> int:
    from workbench import Journal

    with Journal.open(path) as j:
        main = j.root()
        main.apply({"items": []})
        for i in range(9_900):
            if i % 100 == 0:
                main.effect(f"draw:{i // 100}", lambda i=i: [i, "x" * 50])
            else:
                main.apply({"n": i})
        return main.head


def overhead(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    from workbench import Journal, sweep

    path = folder / "prefix.db"
    at = prefix_journal(path)
    forks = {"pool": 60, "warm": 60, "process": 12}  # warm as pool: kernels start once
    # the fork's own time: the same function on fresh forks in this process
    with Journal.open(path) as j:
        own = []
        for k in range(5):
            b = j.root().fork_at(at, params={"k": k})
            t = time.perf_counter()
            prefix_fork(str(path), b.id, {"k": k})
            own.append(time.perf_counter() - t)
    fn_s = statistics.median(own)
    # The kernel runners' client libraries (jupyter_client, zmq, nbformat: about a second) are
    # imported once per process, as optuna is before the in-process baseline; each sweep still
    # starts its kernels inside the timed wall.
    from workbench.sweep.runners.kernels import _import_kernel_machinery

    _import_kernel_machinery()
    import nbformat  # noqa: F401

    rows: dict[str, Any] = {"events": at, "fork_fn_ms": fn_s * 1000}
    for runner, n in forks.items():
        if runner in args.skip:
            continue
        with Journal.open(path) as j:
            p = sweep.plan(j, 0, at, {"k": list(range(n))}, fn="trials:prefix_fork")
            nb = "generic_fork" if runner == "warm" else None
            t = time.perf_counter()
            result = sweep.run(p, runner=runner, notebook=nb, workers=2, progress=False)
            wall = time.perf_counter() - t
            assert result.ok, result
        rows[runner] = {"forks": n, "wall_s": wall, "overhead_ms": (wall * 2 / n - fn_s) * 1000}
    print(
        f"\nPer-fork overhead from a {at}-event prefix, 2 workers (the fork's own work "
        f"{fn_s * 1000:.1f} ms in process)"
    )
    print(f"{'runner':<10}{'forks':>7}{'wall s':>9}{'overhead/fork ms':>18}{'goal':>8}")
    for runner, goal in (("pool", "<= 10"), ("warm", "<= 150"), ("process", "-")):
        if runner in rows:
            r = rows[runner]
            print(
                f"{runner:<10}{r['forks']:>7}{r['wall_s']:>9.2f}{r['overhead_ms']:>18.1f}{goal:>8}"
            )
    return rows


def ml_case(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    import optuna

    from workbench import Journal, sweep

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    space = {
        "c": optuna.distributions.FloatDistribution(1e-3, 10, log=True),
        "l1_ratio": optuna.distributions.FloatDistribution(0.0, 1.0),
    }
    # baseline: the Optuna script that hoists the preprocessing by hand
    t = time.perf_counter()
    data = dataset()
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=0))
    study.optimize(
        lambda tr: cv_score(
            data, tr.suggest_float("c", 1e-3, 10, log=True), tr.suggest_float("l1_ratio", 0.0, 1.0)
        ),
        n_trials=30,
    )
    baseline = time.perf_counter() - t
    del space
    # lithify: the preprocessing an effect on main, paid once; 30 trials fork after it
    t = time.perf_counter()
    with Journal.open(folder / "ml.db") as j:
        main = j.root()
        main.effect("preprocess", dataset)
        result = sweep.optimize(
            j,
            main.head,
            {"c": sweep.Float(1e-3, 10, log=True), "l1_ratio": sweep.Float(0.0, 1.0)},
            "accuracy",
            "maximize",
            forks=30,
            workers=2,
            sampler="tpe",
            pruner="none",
            seed=0,
            fn="trials:ml_fork",
            progress=False,
        )
    wall = time.perf_counter() - t
    row = {
        "optuna_s": baseline,
        "lithify_s": wall,
        "ratio": wall / baseline,
        "optuna_best": study.best_value,
        "lithify_best": result.best.value if result.best else None,
    }
    print("\nThe ML case: a 3 s preprocessing effect, then 30 TPE trials (3-fold CV)")
    best = study.best_value
    print(f"Optuna, preprocessing hoisted by hand (baseline): {baseline:.1f} s, best {best:.4f}")
    print(
        f"lithify optimize (pool, 2 workers): {wall:.1f} s, best {row['lithify_best']:.4f}; "
        f"{row['ratio']:.2f}x the baseline (goal <= 1.5)"
    )
    return row


def async_case(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    from workbench import Journal, sweep

    n = args.async_forks
    ideal = n * 10 * 0.2 / (2 * 100)
    path = folder / "async.db"
    with Journal.open(path) as j:
        j.root().apply({"start": True})
        p = sweep.plan(j, 0, 1, {"k": list(range(n))}, fn="trials:model_calls")
        t = time.perf_counter()
        result = sweep.run(p, runner="pool", workers=2, concurrency=100, progress=False)
        wall = time.perf_counter() - t
        assert result.ok, result
    row: dict[str, Any] = {"forks": n, "ideal_s": ideal, "wall_s": wall, "ratio": wall / ideal}
    # the same sweep, its coordinator SIGKILLed midway, then resumed
    path2 = folder / "async-killed.db"
    calls = folder / "calls.log"
    with Journal.open(path2) as j:
        j.root().apply({"start": True})
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "from workbench import Journal, sweep\n"
        f"j = Journal.open({str(path2)!r})\n"
        f"p = sweep.plan(j, 0, 1, {{'k': list(range({n}))}}, fn='trials:model_calls')\n"
        "sweep.run(p, runner='pool', workers=2, concurrency=100, progress=False)\n"
    )
    env = {**os.environ, "TRIALS_CALLS": str(calls)}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if calls.exists() and len(calls.read_text().split()) >= n * 5:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    time.sleep(1)  # the workers see their coordinator gone and exit
    before = calls.read_text().split()
    with Journal.open(path2) as j:
        committed = {
            f"{b.id}:{r.payload['key'].split(':')[1]}"
            for b in j.branches()
            if b.id
            for r in j.branch(b.id).history(2)
            if r.kind == "effect"
        }
        os.environ["TRIALS_CALLS"] = str(calls)
        t = time.perf_counter()
        resumed = sweep.resume(j, 1, progress=False)
        resume_wall = time.perf_counter() - t
        del os.environ["TRIALS_CALLS"]
        assert resumed.ok
    again = calls.read_text().split()[len(before) :]
    row.update(
        killed_after_calls=len(before),
        committed_before_resume=len(committed),
        committed_run_again=len(committed & set(again)),
        resume_wall_s=resume_wall,
    )
    print(f"\n{n} async forks x ten 200 ms model calls, 2 workers x concurrency 100")
    print(f"wall {wall:.1f} s against the ideal {ideal:.1f} s: {row['ratio']:.2f}x (goal <= 3)")
    print(
        f"SIGKILLed after {len(before)} calls ({len(committed)} committed), resumed in "
        f"{resume_wall:.1f} s: committed calls run again: {row['committed_run_again']} (goal 0)"
    )
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--async-forks", type=int, default=1000)
    ap.add_argument("--skip", default="", help="comma-separated: throughput,overhead,ml,async")
    args = ap.parse_args()
    args.skip = set(filter(None, args.skip.split(",")))
    os.environ["PYTHONPATH"] = str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", "")
    sys.path.insert(0, str(HERE))
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        if "throughput" not in args.skip:
            out["throughput"] = throughput(args, folder)
        if "overhead" not in args.skip:
            out["overhead"] = overhead(args, folder)
        if "ml" not in args.skip:
            try:
                import sklearn  # noqa: F401
            except ImportError:
                print("\nThe ML case needs scikit-learn: pip install scikit-learn")
            else:
                out["ml"] = ml_case(args, folder)
        if "async" not in args.skip:
            out["async"] = async_case(args, folder)
    RESULTS.mkdir(exist_ok=True)
    target = RESULTS / "trials.json"
    previous = json.loads(target.read_text()) if target.exists() else {}
    target.write_text(json.dumps({**previous, **out}, indent=2) + "\n")


if __name__ == "__main__":
    main()
