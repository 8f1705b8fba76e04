"""Matrix benchmark: 10^6 observations across 10^4 branches (forks several levels deep).

Measures building the long and the wide matrix, and a LiveMatrix refresh after 1,000 new
observations on top of the full matrix; the baseline is a plain ``SELECT`` of the observation
rows with sqlite3 (no params, no frame), measured in the same run. Writes
benchmarks/results/matrix.json.

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

from workbench import Journal
from workbench.matrix import LiveMatrix

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
        with Journal.open(path) as j:
            raw = timed(
                lambda: (
                    sqlite3.connect(path)
                    .execute(
                        "SELECT branch, seq, metric, value, ts FROM events WHERE metric IS NOT NULL"
                    )
                    .fetchall()
                ),
                args.repeats,
            )
            long = timed(lambda: j.matrix(), args.repeats)
            wide = timed(lambda: j.matrix(wide=True), args.repeats)
            n_obs = len(j.matrix())
            live = LiveMatrix(j)
            writer = Journal.open(path)
            b = writer.branch(args.branches - 1)
            refresh = []
            for _ in range(args.repeats):
                for k in range(1000):
                    b.observe("recall", k / 1000)
                t = time.perf_counter()
                got = live.refresh()
                _ = live.frame
                refresh.append(time.perf_counter() - t)
                assert got == 1000
            writer.close()
    med = {
        k: statistics.median(v)
        for k, v in {
            "raw_select": raw,
            "long": long,
            "wide": wide,
            "live_refresh_1000": refresh,
        }.items()
    }
    result = {
        "observations": n_obs,
        "branches": args.branches,
        "build_s": build_s,
        "median_s": med,
        "targets_s": {"long": 1.0, "wide": 1.5, "live_refresh_1000": 0.05},
        "pass": {
            "long": med["long"] <= 1.0,
            "wide": med["wide"] <= 1.5,
            "live_refresh_1000": med["live_refresh_1000"] <= 0.05,
        },
        "ratio_to_raw_select": {k: med[k] / med["raw_select"] for k in ("long", "wide")},
    }
    print(f"{n_obs:,} observations on {args.branches:,} branches (built in {build_s:.1f} s)")
    print(f"{'case':<28}{'median':>12}{'vs raw SELECT':>16}{'target':>10}")
    print(f"{'raw sqlite3 SELECT':<28}{med['raw_select'] * 1000:>10.0f}ms{'1.00x':>16}{'':>10}")
    for k, label, target in (
        ("long", "matrix() long", "1000ms"),
        ("wide", "matrix(wide=True)", "1500ms"),
        ("live_refresh_1000", "LiveMatrix.refresh (+1000)", "50ms"),
    ):
        ratio = f"{med[k] / med['raw_select']:.2f}x" if k != "live_refresh_1000" else ""
        print(f"{label:<28}{med[k] * 1000:>10.0f}ms{ratio:>16}{target:>10}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "matrix.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {RESULTS / 'matrix.json'}")


if __name__ == "__main__":
    main()
