"""Matrix benchmark: 10^6 observations across 10^4 branches (forks several levels deep).

Measures the long and the wide matrix on a handle's first call (what a new process pays) and
called again after another writer added 1,000 observations (what a notebook, the Lab's charts
or a study's report pay: a handle reads only what arrived since its last call), and a
LiveMatrix refresh after 1,000 new observations. The baseline, measured in the same run, is a
plain sqlite3 ``SELECT`` of the observation rows into a polars frame (also printed: the SELECT
alone, no frame), its runs interleaved with the first calls' (this machine's speed swings
within minutes). Writes benchmarks/results/matrix.json.

    python benchmarks/matrix.py [--branches N] [--per-branch N]
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

import polars as pl

from workbench import Journal
from workbench.matrix import LiveMatrix
from workbench.storage import observation_schema

RESULTS = Path(__file__).parent / "results"


def build(path: Path, n_branches: int, per_branch: int) -> None:
    rng = random.Random(11)
    with Journal.open(path, durability="lazy") as j:
        root = j.root()
        root.apply({"start": True})
        handles = [root]
        depth = {0: 0}
        for i in range(1, n_branches):
            parent = handles[rng.randrange(len(handles))] if i > 8 else root
            if depth[parent.id] >= 5:
                parent = root
            child = parent.fork(
                params={"budget": 100 * (i % 7 + 1), "seed": i % 3, "model": f"m{i % 4}"}
            )
            depth[child.id] = depth[parent.id] + 1
            handles.append(child)
        for b in handles:
            for k in range(per_branch):
                b.observe("recall" if k % 2 else "cost", rng.random())


def timed(fn, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--branches", type=int, default=10_000)
    ap.add_argument("--per-branch", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "matrix.db"
        t = time.perf_counter()
        build(path, args.branches, args.per_branch)
        build_s = time.perf_counter() - t
        select = (
            "SELECT position, branch, seq, metric, value, ts FROM events "
            "WHERE metric IS NOT NULL ORDER BY position"
        )

        def first(wide: bool) -> float:
            """matrix() on a handle that has read nothing yet (a new process's first call)."""
            with Journal.open(path) as fresh:
                t = time.perf_counter()
                fresh.matrix(wide=wide)
                return time.perf_counter() - t

        raw: list[float] = []
        raw_polars: list[float] = []
        long_first: list[float] = []
        wide_first: list[float] = []
        for _ in range(args.repeats):  # interleaved: each meets the machine as the others do
            raw += timed(lambda: sqlite3.connect(path).execute(select).fetchall(), 1)
            raw_polars += timed(
                lambda: pl.DataFrame(
                    sqlite3.connect(path).execute(select).fetchall(),
                    schema=observation_schema(),
                    orient="row",
                ),
                1,
            )
            long_first.append(first(False))
            wide_first.append(first(True))
        with Journal.open(path) as j, Journal.open(path) as writer:
            j.matrix()
            b = writer.branch(args.branches - 1)
            again: dict[str, list[float]] = {"long": [], "wide": []}
            for _ in range(args.repeats):
                for wide, key in ((False, "long"), (True, "wide")):
                    for k in range(1000):  # another writer adds 1,000 observations
                        b.observe("recall", k / 1000)
                    writer.flush()
                    t = time.perf_counter()
                    j.matrix(wide=wide)
                    again[key].append(time.perf_counter() - t)
            n_obs = len(j.matrix())
            live = LiveMatrix(j)
            refresh = []
            for _ in range(args.repeats):
                for k in range(1000):
                    b.observe("recall", k / 1000)
                writer.flush()
                t = time.perf_counter()
                got = live.refresh()
                _ = live.frame
                refresh.append(time.perf_counter() - t)
                assert got == 1000
    med = {
        k: statistics.median(v)
        for k, v in {
            "raw_select": raw,
            "raw_select_into_polars": raw_polars,
            "long_first_call": long_first,
            "wide_first_call": wide_first,
            "long_again_after_1000": again["long"],
            "wide_again_after_1000": again["wide"],
            "live_refresh_1000": refresh,
        }.items()
    }
    timed_cases = [k for k in med if k.startswith(("long", "wide"))]
    result = {
        "observations": n_obs,
        "branches": args.branches,
        "build_s": build_s,
        "median_s": med,
        "baseline": "raw_select_into_polars",
        "goal_ratio": 0.4,
        "ratio_to_raw_select_into_polars": {
            k: med[k] / med["raw_select_into_polars"] for k in timed_cases
        },
        "ratio_to_raw_select": {k: med[k] / med["raw_select"] for k in timed_cases},
    }
    print(f"{n_obs:,} observations on {args.branches:,} branches (built in {build_s:.1f} s)")
    base = med["raw_select_into_polars"]
    print(f"{'case':<40}{'median':>10}{'vs SELECT into polars':>24}")
    for k in med:
        ratio = f"{med[k] / base:.2f}x" if k != "live_refresh_1000" else ""
        print(f"{k.replace('_', ' '):<40}{med[k] * 1000:>8.0f}ms{ratio:>24}")
    print("goal: matrix() <= 0.40x the SELECT into polars")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "matrix.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {RESULTS / 'matrix.json'}")


if __name__ == "__main__":
    main()
