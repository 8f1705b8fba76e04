"""Effects on one long branch: is the 100,000th effect as fast as the 1,000th?

One branch gets effects with new keys (each one looked up, announced, run and committed). At
each mark (1,000th, 20,000th, 50,000th, 100,000th effect) three rates are measured:

- running: the handle that wrote every effect so far, over the 1,000 effects up to the mark;
- resumed: a new process that opens the journal and writes the next 1,000 effects (what a
  restarted agent does: no in-memory map of its history);
- fresh handle: a new handle in this process (``journal.root()`` after reopening), next 1,000.

Each rate is given twice: the median of five 200-effect slices by the wall clock, and the
1,000 effects per CPU-second they took (this process's CPU time, plus its PostgreSQL server
backend's): on a machine shared with other work the wall clock swings 2-3x from run to run,
the CPU time an effect costs does not. The baseline is the running handle's rate at the first
mark, measured in the same run; every rate is shown with its ratio to it (goal: the last mark
within 1.5x of the baseline in every column). After the last mark, a fork at the
branch's midpoint runs new effects and reads inherited ones (hits through the fork chain).
Both backends: SQLite (durability "process") and PostgreSQL (a server of its own; durability
"lazy", i.e. synchronous_commit off, so the rates show the lookups rather than the disk's
fsync time, which this machine shares with other work).

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

RESULTS = Path(__file__).parent / "results"
WINDOW = 1000
SLICES = 5


def cpu_seconds(j: object) -> float:
    """CPU time of this process, plus that of its PostgreSQL server backend (read from /proc):
    the work an effect costs, which other processes on a busy machine do not inflate."""
    used = time.process_time()
    backend = getattr(getattr(j, "storage", None), "backend", "") or ""
    if backend:
        try:
            with open(f"/proc/{int(backend.split('|')[0])}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            used += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            pass
    return used


def window(j: object, do: Callable[[int], object], lo: int, hi: int) -> dict[str, float]:
    """Call do(i) for lo <= i < hi in SLICES equal slices (any rest first, unmeasured): the
    median slice's wall-clock rate, and the rate per CPU-second over all slices."""
    size = (hi - lo) // SLICES
    i = lo
    while i < hi - size * SLICES:
        do(i)
        i += 1
    rates = []
    cpu0 = cpu_seconds(j)
    for _ in range(SLICES):
        t = time.perf_counter()
        for k in range(i, i + size):
            do(k)
        rates.append(size / (time.perf_counter() - t))
        i += size
    cpu = cpu_seconds(j) - cpu0
    return {"wall": statistics.median(rates), "cpu": size * SLICES / cpu if cpu > 0 else 0.0}


def resumed(where: str, durability: str, lo: int, hi: int) -> dict[str, float]:
    """In this (new) process: open the journal, take the branch, write keys lo..hi-1."""
    from workbench import Journal

    with Journal.open(where, durability=durability) as j:
        t0 = time.perf_counter()
        b = j.root()
        b.effect(f"step:{lo}", lambda: {"i": lo})
        first_ms = (time.perf_counter() - t0) * 1000
        out = window(j, lambda k: b.effect(f"step:{k}", lambda: {"i": k}), lo + 1, hi)
    return {**out, "first_ms": first_ms}


def bench_backend(where: str, durability: str, marks: list[int]) -> dict[str, object]:
    from workbench import Journal

    def step(b: object) -> Callable[[int], object]:
        return lambda k: b.effect(f"step:{k}", lambda: {"i": k})  # type: ignore[attr-defined]

    out: dict[str, object] = {"marks": {}}
    j = Journal.open(where, durability=durability)
    b = j.root()
    done = 0  # keys step:0 .. step:done-1 are committed
    build_s = 0.0
    for mark in marks:
        t = time.perf_counter()
        while done < mark - WINDOW:
            b.effect(f"step:{done}", lambda d=done: {"i": d})
            done += 1
        build_s += time.perf_counter() - t
        running = window(j, step(b), done, mark)
        done = mark
        j.close()
        proc = subprocess.run(
            [
                sys.executable,
                __file__,
                "--resumed",
                where,
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
        j = Journal.open(where, durability=durability)
        t0 = time.perf_counter()
        b = j.root()
        b.effect(f"step:{done}", lambda d=done: {"i": d})
        fresh_first_ms = (time.perf_counter() - t0) * 1000
        fresh = window(j, step(b), done + 1, done + WINDOW)
        done += WINDOW
        out["marks"][str(mark)] = {  # type: ignore[index]
            "running": running["wall"],
            "resumed": again["wall"],
            "fresh_handle": fresh["wall"],
            "running_cpu": running["cpu"],
            "resumed_cpu": again["cpu"],
            "fresh_handle_cpu": fresh["cpu"],
            "resumed_first_effect_ms": again["first_ms"],
            "fresh_first_effect_ms": fresh_first_ms,
        }
        print(f"  {where.rsplit('/', 1)[-1]} @{mark}: {out['marks'][str(mark)]}", flush=True)
    out["build_effects_per_s"] = (marks[-1] - len(marks) * WINDOW) / build_s if build_s else None
    # A fork at the midpoint: new effects, and hits on the effects it inherits.
    mid = done // 2
    fork = b.fork_at(mid)
    new = window(j, lambda k: fork.effect(f"fork:{k}", lambda: {"k": k}), 0, WINDOW)
    inherited_keys = [f"step:{k}" for k in range(0, mid - mid % 10, max(mid // WINDOW, 1))]
    calls = []
    hits = window(
        j,
        lambda k: fork.effect(inherited_keys[k % len(inherited_keys)], lambda: calls.append(k)),
        0,
        WINDOW,
    )
    # The parent's effects after the fork point are invisible: fn runs for them on the fork.
    after = [f"step:{k}" for k in range(mid + 1, mid + 11)]
    reran = sum(fork.effect(key, lambda: "ran") == "ran" for key in after)
    out["fork_at_midpoint"] = {
        "history": done,
        "fork_seq": mid,
        "new_effects_per_s": new["wall"],
        "inherited_hits_per_s": hits["wall"],
        "inherited_hits_ran_fn": len(calls),
        "parent_effects_after_fork_point_ran_fn": reran,
    }
    j.close()
    return out


COLUMNS = ("running", "resumed", "fresh_handle")


def table(name: str, result: dict[str, object]) -> None:
    marks: dict[str, dict[str, float]] = result["marks"]  # type: ignore[assignment]
    first = next(iter(marks.values()))
    for unit, suffix in (("wall clock", ""), ("per CPU-second", "_cpu")):
        base = first["running" + suffix]
        print(
            f"\n{name}: effects/s, {unit} (ratio to the running handle at the first mark, "
            f"{base:,.0f}/s)"
        )
        print(f"{'mark':>8}  " + "  ".join(f"{c:>22}" for c in COLUMNS) + "  first resumed")
        for mark, row in marks.items():
            cells = [f"{row[c + suffix]:>12,.0f} ({row[c + suffix] / base:4.2f}x)" for c in COLUMNS]
            print(
                f"{int(mark):>8,}  "
                + "  ".join(f"{c:>22}" for c in cells)
                + f"  {row['resumed_first_effect_ms']:.0f} ms"
            )
    fork = result["fork_at_midpoint"]
    print(
        f"fork at {fork['fork_seq']:,} of {fork['history']:,}: "  # type: ignore[index]
        f"new {fork['new_effects_per_s']:,.0f}/s, inherited hits "  # type: ignore[index]
        f"{fork['inherited_hits_per_s']:,.0f}/s"  # type: ignore[index]
    )


def summarize(result: dict[str, object]) -> dict[str, object]:
    marks: dict[str, dict[str, float]] = result["marks"]  # type: ignore[assignment]
    first, last = next(iter(marks.values())), list(marks.values())[-1]
    out: dict[str, object] = {
        "baseline": "running handle at the first mark, measured in the same run",
        "goal": "the last mark within 1.5x of the baseline, in every column",
    }
    for unit, suffix in (("wall", ""), ("cpu", "_cpu")):
        base = first["running" + suffix]
        slowdown = {c: base / last[c + suffix] for c in COLUMNS}
        out[unit] = {
            "baseline_effects_per_s": base,
            "slowdown_at_last_mark": slowdown,
            "pass": all(r <= 1.5 for r in slowdown.values()),
        }
    return out


def main() -> None:
    if sys.argv[1:2] == ["--resumed"]:  # the resumed process of bench_backend
        where, durability, lo, hi = sys.argv[2:6]
        print(json.dumps(resumed(where, durability, int(lo), int(hi))))
        return
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="marks 1,000 and 25,000 only")
    ap.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    ap.add_argument("--marks", help="comma-separated effect counts (default 1000,20000,...)")
    ap.add_argument("--out", default="effects", help="results file name (without .json)")
    args = ap.parse_args()
    marks = (
        [int(m) for m in args.marks.split(",")]
        if args.marks
        else ([1000, 25_000] if args.quick else [1000, 20_000, 50_000, 100_000])
    )
    # after a mark come the resumed and the fresh-handle windows, then the next running one
    if marks[0] < WINDOW or any(b - a < 3 * WINDOW for a, b in itertools.pairwise(marks)):
        raise SystemExit(f"marks must start at >= {WINDOW} and be >= {3 * WINDOW} apart")
    import workbench

    result: dict[str, object] = {
        "python": platform.python_version(),
        "workbench": str(Path(workbench.__file__).parent),
        "window": WINDOW,
        "slices": SLICES,
        "marks": marks,
    }
    if args.backend in ("sqlite", "both"):
        with tempfile.TemporaryDirectory() as tmp:
            r = bench_backend(str(Path(tmp) / "effects.db"), "process", marks)
        r["durability"] = "process"
        r["summary"] = summarize(r)
        result["sqlite"] = r
        table("SQLite", r)
    if args.backend in ("postgres", "both"):
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from pg_server import pg_server

        with pg_server() as pg:
            db = pg.create_database("bench")
            r = bench_backend(pg.url(db, journal="effects"), "lazy", marks)
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
