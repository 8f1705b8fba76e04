"""Widget benchmark: JournalExplorer on a 100,000-event journal (open, page, select, diff),
and how soon the LiveResults view shows an observation written by another process.

Baseline: one plain ``branch.history(lo, hi)`` page read (what a page must at least cost).
Writes benchmarks/results/widgets.json.

    python benchmarks/widgets.py [--events 100000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workbench import Journal
from workbench.widgets import JournalExplorer, LiveResults

RESULTS = Path(__file__).parent / "results"


def ms(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--events", type=int, default=100_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "big.db"
        with Journal.open(path, durability="lazy") as j:
            b = j.root()
            for i in range(args.events):
                b.apply({"i": i, "note": f"step {i}"})
        with Journal.open(path) as j:
            open_ms = ms(lambda: JournalExplorer(j))
            ex = JournalExplorer(j)
            pages = ex.page.max
            page_ms = [
                ms(lambda p=p: ex.go_page(p))
                for p in (1, pages // 2, pages, 2, pages - 1, pages // 3)
            ]
            select_ms = [
                ms(lambda s=s: ex.select(0, s)) for s in (1, args.events // 2, args.events)
            ]
            ex.compare_mode.value = "diff vs previous"
            diff_ms = [ms(lambda s=s: ex.select(0, s)) for s in (10, args.events // 2, args.events)]
            base_ms = [
                ms(lambda lo=lo: j.root().history(lo, lo + 49))
                for lo in (1, args.events // 2, args.events - 50)
            ]
            live = LiveResults(j, interval=0.05)
            code = (
                "import sys, time\nfrom workbench import Journal\nwith Journal.open(sys.argv[1]) "
                "as j:\n"
                "    f = j.root().fork(params={'budget': 7})\n    print(time.time(), flush=True)\n"
                "    f.observe('recall', 0.5)\n"
            )
            lat = []
            for _ in range(5):
                before = live.rows
                out = subprocess.run(
                    [sys.executable, "-c", code, str(path)],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                written = float(out.strip())
                while live.rows == before:
                    time.sleep(0.005)
                lat.append((time.time() - written) * 1000)
            live.stop()
    res = {
        "events": args.events,
        "open_ms": open_ms,
        "page_ms": page_ms,
        "select_ms": select_ms,
        "diff_ms": diff_ms,
        "baseline_history_page_ms": base_ms,
        "live_update_latency_ms": lat,
        "targets": {"page_ms": 300, "live_update_ms": 1000},
        "pass": {"page": max(page_ms + select_ms + diff_ms) < 300, "live": max(lat) < 1000},
    }
    med = statistics.median
    print(
        f"JournalExplorer on {args.events:,} events (baseline: one 50-event history page read, "
        f"median {med(base_ms):.1f} ms)"
    )
    for label, vals in (
        ("open", [open_ms]),
        ("page", page_ms),
        ("select event", select_ms),
        ("select + diff", diff_ms),
    ):
        print(
            f"  {label:<14} median {med(vals):7.1f} ms   max {max(vals):7.1f} ms   "
            f"{med(vals) / med(base_ms):5.1f}x baseline   target < 300 ms"
        )
    print(
        f"LiveResults sees a worker's observation after median {med(lat):.0f} ms, max "
        f"{max(lat):.0f} ms (target < 1000 ms)"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "widgets.json").write_text(json.dumps(res, indent=2) + "\n")
    print(f"\nwrote {RESULTS / 'widgets.json'}")


if __name__ == "__main__":
    main()
