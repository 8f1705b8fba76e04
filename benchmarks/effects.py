"""Effects on one long branch: is the 100,000th effect as fast as the 1,000th?

One branch gets effects with new keys (each one looked up, announced, run and committed). At
each mark (1,000th, 20,000th, 50,000th, 100,000th effect) three windows of 1,000 effects are
measured:

- running: the handle that wrote every effect so far, up to the mark;
- resumed: a new process that opens the journal and writes the next 1,000 effects (what a
  restarted agent does: no in-memory map of its history);
- fresh handle: a new handle in this process (``journal.root()`` after reopening), next 1,000.

The baseline is measured in the same run, interleaved with every window: 100 effects on the
long branch, then 100 on a fork of a branch with 1,000 effects of history (a second journal of
the same backend), ten times over. Each cell gives the long branch's effects/s (median slice)
and its ratio to the baseline slices taken at the same moment (median of the ten ratios):
this machine is shared with other work, and its speed swings 2-3x between minutes, not between
neighbouring slices. Goal: every ratio >= 0.67 (the 100,000th effect within 1.5x of one with
1,000 effects of history). CPU time (this process's, plus its PostgreSQL backend's, from /proc)
gives a second ratio. After the last mark, a fork at the branch's midpoint runs new effects and
reads inherited ones (hits through the fork chain). Both backends: SQLite (durability
"process") and PostgreSQL (a server of its own; durability "lazy", i.e. synchronous_commit off,
so the rates show the lookups rather than the disk's fsync time).

    python benchmarks/effects.py [--quick] [--backend sqlite|postgres|both] [--marks 1000,...]

Writes benchmarks/results/effects.json (``--out NAME`` for another name).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"
WINDOW = 1000
SLICES = 10
BASE_HISTORY = 1000
COLUMNS = ("running", "resumed", "fresh_handle")


def cpu_seconds(j: Any) -> float:
    """CPU time of this process, plus that of its PostgreSQL server backend (read from /proc)."""
    used = time.process_time()
    backend = getattr(j.storage, "backend", "") or ""
    if backend:
        try:
            with open(f"/proc/{int(backend.split('|')[0])}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            used += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            pass
    return used


class Baseline:
    """Effects on a fork of a branch with BASE_HISTORY effects: what an effect costs with a
    short history, measured slice by slice next to the long branch's."""

    def __init__(self, where: str, durability: str) -> None:
        from workbench import Journal

        self.j = Journal.open(where, durability=durability)
        root = self.j.root()
        while root.head < BASE_HISTORY:
            root.effect(f"base:{root.head}", lambda: {"i": 1})
        self.n = 0

    def slice(self, size: int) -> tuple[float, float]:
        """(effects/s, effects per CPU-second) of ``size`` new effects on a fresh fork."""
        b = self.j.root().fork_at(BASE_HISTORY)
        b.effect("warm", lambda: 0)  # its first lookup maps the inherited effects
        t, c = time.perf_counter(), cpu_seconds(self.j)
        for _ in range(size):
            self.n += 1
            b.effect(f"slice:{self.n}", lambda: {"i": 1})
        cpu = cpu_seconds(self.j) - c
        return size / (time.perf_counter() - t), size / cpu if cpu > 0 else 0.0

    def close(self) -> None:
        self.j.close()


def window(
    j: Any, do: Callable[[int], object], lo: int, hi: int, base: Baseline
) -> dict[str, float]:
    """Call do(i) for lo <= i < hi in SLICES equal slices (any rest first), a baseline slice
    after each: the long branch's median effects/s and the medians of its ratios to the
    baseline, by the wall clock and by CPU time."""
    size = (hi - lo) // SLICES
    i = lo
    while i < hi - size * SLICES:
        do(i)
        i += 1
    rates, ratios, cpu_ratios = [], [], []
    for _ in range(SLICES):
        t, c = time.perf_counter(), cpu_seconds(j)
        for k in range(i, i + size):
            do(k)
        wall, cpu = time.perf_counter() - t, cpu_seconds(j) - c
        i += size
        base_wall, base_cpu = base.slice(size)
        rates.append(size / wall)
        ratios.append(size / wall / base_wall)
        if cpu > 0 and base_cpu > 0:
            cpu_ratios.append(size / cpu / base_cpu)
    return {
        "rate": statistics.median(rates),
        "ratio": statistics.median(ratios),
        "cpu_ratio": statistics.median(cpu_ratios) if cpu_ratios else 0.0,
    }


def resumed(where: str, base_where: str, durability: str, lo: int, hi: int) -> dict[str, float]:
    """In this (new) process: open the journal, take the branch, write keys lo..hi-1."""
    from workbench import Journal

    base = Baseline(base_where, durability)
    with Journal.open(where, durability=durability) as j:
        t0 = time.perf_counter()
        b = j.root()
        b.effect(f"step:{lo}", lambda: {"i": lo})
        first_ms = (time.perf_counter() - t0) * 1000
        out = window(j, lambda k: b.effect(f"step:{k}", lambda: {"i": k}), lo + 1, hi, base)
    base.close()
    return {**out, "first_ms": first_ms}


def bench_backend(where: str, base_where: str, durability: str, marks: list[int]) -> dict:
    from workbench import Journal

    def step(b: Any) -> Callable[[int], object]:
        return lambda k: b.effect(f"step:{k}", lambda: {"i": k})

    base = Baseline(base_where, durability)
    out: dict[str, Any] = {"marks": {}}
    j = Journal.open(where, durability=durability)
    b = j.root()
    done = 0  # keys step:0 .. step:done-1 are committed
    t_build, built = 0.0, 0
    for mark in marks:
        t = time.perf_counter()
        while done < mark - WINDOW:
            b.effect(f"step:{done}", lambda d=done: {"i": d})
            done += 1
            built += 1
        t_build += time.perf_counter() - t
        running = window(j, step(b), done, mark, base)
        done = mark
        j.close()
        base.close()  # the resumed process opens the baseline journal itself
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--resumed",
                where,
                base_where,
                durability,
                str(done),
                str(done + WINDOW),
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        again = json.loads(proc.stdout.strip().splitlines()[-1])
        done += WINDOW
        base = Baseline(base_where, durability)
        j = Journal.open(where, durability=durability)
        t0 = time.perf_counter()
        b = j.root()
        b.effect(f"step:{done}", lambda d=done: {"i": d})
        fresh_first_ms = (time.perf_counter() - t0) * 1000
        fresh = window(j, step(b), done + 1, done + WINDOW, base)
        done += WINDOW
        row = {c: w for c, w in zip(COLUMNS, (running, again, fresh), strict=True)}
        out["marks"][str(mark)] = {
            **{f"{c}_effects_per_s": w["rate"] for c, w in row.items()},
            **{f"{c}_ratio": w["ratio"] for c, w in row.items()},
            **{f"{c}_cpu_ratio": w["cpu_ratio"] for c, w in row.items()},
            "resumed_first_effect_ms": again["first_ms"],
            "fresh_first_effect_ms": fresh_first_ms,
        }
        print(f"  {where.rsplit('/', 1)[-1]} @{mark}: {out['marks'][str(mark)]}", flush=True)
    out["build_effects_per_s"] = built / t_build if t_build else None
    # A fork at the midpoint: new effects, and hits on the effects it inherits.
    mid = done // 2
    fork = b.fork_at(mid)
    new = window(j, lambda k: fork.effect(f"fork:{k}", lambda: {"k": k}), 0, WINDOW, base)
    inherited = [f"step:{k}" for k in range(0, mid - mid % 10, max(mid // WINDOW, 1))]
    calls: list[int] = []
    hits = window(
        j,
        lambda k: fork.effect(inherited[k % len(inherited)], lambda: calls.append(k)),
        0,
        WINDOW,
        base,
    )
    # The parent's effects after the fork point are invisible: fn runs for them on the fork.
    after = [f"step:{k}" for k in range(mid + 1, mid + 11)]
    reran = sum(fork.effect(key, lambda: "ran") == "ran" for key in after)
    out["fork_at_midpoint"] = {
        "history": done,
        "fork_seq": mid,
        "new_effects_per_s": new["rate"],
        "new_effects_ratio": new["ratio"],
        "inherited_hits_per_s": hits["rate"],
        "inherited_hits_ran_fn": len(calls),
        "parent_effects_after_fork_point_ran_fn": reran,
    }
    j.close()
    base.close()
    return out


def table(name: str, result: dict[str, Any]) -> None:
    marks: dict[str, dict[str, float]] = result["marks"]
    print(
        f"\n{name}: effects/s on the long branch (ratio to the baseline, {BASE_HISTORY:,} "
        "effects of history, measured alongside; CPU-time ratio after the slash)"
    )
    print(f"{'mark':>8}  " + "  ".join(f"{c:>26}" for c in COLUMNS) + "  first resumed")
    for mark, row in marks.items():
        cells = [
            f"{row[c + '_effects_per_s']:>9,.0f} ({row[c + '_ratio']:4.2f}x / "
            f"{row[c + '_cpu_ratio']:4.2f}x)"
            for c in COLUMNS
        ]
        print(
            f"{int(mark):>8,}  "
            + "  ".join(f"{c:>26}" for c in cells)
            + f"  {row['resumed_first_effect_ms']:.0f} ms"
        )
    fork = result["fork_at_midpoint"]
    print(
        f"fork at {fork['fork_seq']:,} of {fork['history']:,}: new {fork['new_effects_per_s']:,.0f}"
        f"/s ({fork['new_effects_ratio']:.2f}x), inherited hits "
        f"{fork['inherited_hits_per_s']:,.0f}/s"
    )


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    marks: dict[str, dict[str, float]] = result["marks"]
    worst = {
        unit: min(row[f"{c}{suffix}"] for row in marks.values() for c in COLUMNS)
        for unit, suffix in (("wall", "_ratio"), ("cpu", "_cpu_ratio"))
    }
    return {
        "baseline": f"effects on a fork of a branch with {BASE_HISTORY} effects of history, "
        "measured slice by slice alongside each window",
        "goal": "every ratio >= 0.67 (within 1.5x of the baseline)",
        "worst_ratio": worst,
        "pass": worst["wall"] >= 1 / 1.5,
    }


def main() -> None:
    if sys.argv[1:2] == ["--resumed"]:  # the resumed process of bench_backend
        where, base_where, durability, lo, hi = sys.argv[2:7]
        print(json.dumps(resumed(where, base_where, durability, int(lo), int(hi))))
        return
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="marks 1,000 and 25,000 only")
    ap.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    ap.add_argument("--marks", help="comma-separated effect counts (default 1000,20000,...)")
    ap.add_argument("--out", default="effects", help="results file name (without .json)")
    ap.add_argument("--label", default="this checkout", help="what code was measured")
    args = ap.parse_args()
    marks = (
        [int(m) for m in args.marks.split(",")]
        if args.marks
        else ([1000, 25_000] if args.quick else [1000, 20_000, 50_000, 100_000])
    )
    # after a mark come the resumed and the fresh-handle windows, then the next running one
    if marks[0] < WINDOW or any(b - a < 3 * WINDOW for a, b in itertools.pairwise(marks)):
        raise SystemExit(f"marks must start at >= {WINDOW} and be >= {3 * WINDOW} apart")
    result: dict[str, Any] = {
        "python": platform.python_version(),
        "code": args.label,
        "window": WINDOW,
        "slices": SLICES,
        "marks": marks,
    }
    if args.backend in ("sqlite", "both"):
        with tempfile.TemporaryDirectory() as tmp:
            r = bench_backend(
                str(Path(tmp) / "effects.db"), str(Path(tmp) / "base.db"), "process", marks
            )
        r["durability"] = "process"
        r["summary"] = summarize(r)
        result["sqlite"] = r
        table("SQLite", r)
    if args.backend in ("postgres", "both"):
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from pg_server import pg_server

        with pg_server() as pg:
            db = pg.create_database("bench")
            r = bench_backend(
                pg.url(db, journal="effects"), pg.url(db, journal="base"), "lazy", marks
            )
        r["durability"] = "lazy (synchronous_commit off)"
        r["summary"] = summarize(r)
        result["postgres"] = r
        table("PostgreSQL", r)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{args.out}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
