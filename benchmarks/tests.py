"""The fast test loop: how long ``pytest -m "not slow" -q -p no:cacheprovider`` takes, run N
times in a subprocess from the repository's root. Wall seconds (what a developer waits) and CPU
seconds (user + system of pytest and its children: what the loop costs whatever else the
machine is doing). Baseline: the goal, 30 s on a quiet 2-core machine; with ``--baseline REF``
also the loop of that git commit (its files extracted to a temporary folder), its runs
interleaved with this tree's so both see the same load. Writes benchmarks/results/tests.json.

    python benchmarks/tests.py [--runs 3] [--goal 30] [--baseline REF]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).parent / "results"
COMMAND = ["-m", "pytest", "-m", "not slow", "-q", "-p", "no:cacheprovider"]


def children_cpu() -> float:
    """CPU seconds (user + system) of every waited-for child process so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_loop(where: Path) -> dict:
    """One run of the fast loop in ``where``: wall and CPU seconds, exit code, pytest's tally."""
    cpu0, t0 = children_cpu(), time.perf_counter()
    done = subprocess.run(
        [sys.executable, *COMMAND], cwd=where, capture_output=True, text=True, check=False
    )
    wall, cpu = time.perf_counter() - t0, children_cpu() - cpu0
    lines = done.stdout.strip().splitlines()
    tally = lines[-1] if lines else done.stderr.strip()[-300:]
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "exit_code": done.returncode,
        "tally": re.sub(r"=+", "", tally).strip(),
    }


def extract(ref: str, into: Path) -> str:
    """The files of commit ``ref`` in ``into`` (no work tree, no index touched); its hash."""
    commit = subprocess.run(
        ["git", "rev-parse", "--verify", f"{ref}^{{commit}}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit], cwd=ROOT, capture_output=True, check=True
    ).stdout
    tar = into / "tree.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as t:
        t.extractall(into / "tree", filter="data")
    return commit


def summary(runs: list[dict]) -> dict:
    return {
        "median_wall_s": statistics.median(r["wall_s"] for r in runs),
        "median_cpu_s": statistics.median(r["cpu_s"] for r in runs),
        "all_passed": all(r["exit_code"] == 0 for r in runs),
        "runs": runs,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--goal", type=float, default=30.0, help="seconds (the baseline)")
    ap.add_argument("--baseline", help="a git ref whose fast loop runs alongside, interleaved")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs is at least 1")
    load_before = os.getloadavg()
    trees: dict[str, Path] = {"this tree": ROOT}
    with tempfile.TemporaryDirectory(prefix="lithify-bench-tests-") as tmp:
        base_commit = None
        if args.baseline:
            base_commit = extract(args.baseline, Path(tmp))
            trees = {f"{args.baseline} ({base_commit[:10]})": Path(tmp) / "tree", **trees}
        runs: dict[str, list[dict]] = {name: [] for name in trees}
        for i in range(args.runs):
            for name, where in trees.items():
                r = run_loop(where)
                runs[name].append(r)
                print(
                    f"run {i + 1}/{args.runs} {name}: {r['wall_s']:.1f} s wall, "
                    f"{r['cpu_s']:.1f} s CPU, {r['tally']}",
                    flush=True,
                )
    load_after = os.getloadavg()
    results = {name: summary(rs) for name, rs in runs.items()}
    print(
        f"\npython -m pytest -m 'not slow' -q -p no:cacheprovider: median of {args.runs} "
        f"(load average {load_before[0]:.1f} before, {load_after[0]:.1f} after, "
        f"{os.cpu_count()} CPUs)"
    )
    print(f"{'tree':<30}{'wall s':>9}{'CPU s':>9}{'goal s':>9}{'wall/goal':>11}  passed")
    for name, s in results.items():
        print(
            f"{name:<30}{s['median_wall_s']:>9.1f}{s['median_cpu_s']:>9.1f}{args.goal:>9.0f}"
            f"{s['median_wall_s'] / args.goal:>11.2f}  {'yes' if s['all_passed'] else 'NO'}"
        )
    doc = {
        "command": ["python", *COMMAND],
        "runs": args.runs,
        "goal_s": args.goal,
        "baseline_ref": args.baseline,
        "baseline_commit": base_commit,
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "trees": results,
    }
    if args.baseline:
        this, base = results["this tree"], next(iter(results.values()))
        doc["ratio_to_baseline_ref"] = {
            "wall": this["median_wall_s"] / base["median_wall_s"],
            "cpu": this["median_cpu_s"] / base["median_cpu_s"],
        }
        print(
            f"this tree / {args.baseline}: {doc['ratio_to_baseline_ref']['wall']:.2f} wall, "
            f"{doc['ratio_to_baseline_ref']['cpu']:.2f} CPU"
        )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "tests.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {RESULTS / 'tests.json'}")


if __name__ == "__main__":
    main()
