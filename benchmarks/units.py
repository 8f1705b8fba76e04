"""Units benchmark: a 1,000-unit session, 200 snapshots each changing one unit.

Measures how much the journal grows per snapshot (file size after a checkpoint, so WAL frames
are not counted) against the size of one unit as stored, and the median time of a snapshot,
a diff of two snapshots and a rollback at that size. Baseline for growth: the design this API
follows stores a reference row per unit per snapshot, i.e. ~1,000 rows per snapshot; here a
snapshot stores what changed against its parent.
Writes benchmarks/results/units.json.

    python benchmarks/units.py [--units 1000] [--snapshots 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from workbench.compat.stateforge import StateForge, units
from workbench.events import canonical

RESULTS = Path(__file__).parent / "results"


def size_after_checkpoint(sf: StateForge) -> int:
    sf.journal.vacuum()
    return sf.journal.storage.size_bytes()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--units", type=int, default=1000)
    ap.add_argument("--snapshots", type=int, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        sf = StateForge(db_path=Path(d) / "units.db")
        s = sf.create_session_sync("bench")
        current = [
            units.kv(s.id, key=f"fact:{i}", value={"text": f"fact number {i}", "score": i % 7})
            for i in range(args.units)
        ]
        first = sf.snapshot_sync(s.id, current, label="base")
        unit_bytes = statistics.median(len(canonical(u.to_json())) for u in current)
        before = size_after_checkpoint(sf)
        snap_s = []
        for step in range(args.snapshots):
            i = step % args.units
            current[i] = units.kv(s.id, key=f"fact:{i}", value={"text": f"step {step}", "score": 0})
            t = time.perf_counter()
            last = sf.snapshot_sync(s.id, current)
            snap_s.append(time.perf_counter() - t)
        after = size_after_checkpoint(sf)
        diff_s, rollback_s = [], []
        for _ in range(5):
            t = time.perf_counter()
            d_ = sf.diff_sync(first.id, last.id)
            diff_s.append(time.perf_counter() - t)
        for _ in range(5):
            t = time.perf_counter()
            sf.rollback_sync(s.id, first.id)
            rollback_s.append(time.perf_counter() - t)
        sf.close_sync()
    growth = (after - before) / args.snapshots
    doc = {
        "units": args.units,
        "snapshots": args.snapshots,
        "unit_bytes_median": unit_bytes,
        "growth_bytes_per_snapshot": growth,
        "growth_in_units": growth / unit_bytes,
        "reference_rows_baseline_per_snapshot": args.units,
        "snapshot_ms_median": statistics.median(snap_s) * 1e3,
        "diff_ms_median": statistics.median(diff_s) * 1e3,
        "rollback_ms_median": statistics.median(rollback_s) * 1e3,
        "diff": {"modified": len(d_.modified), "added": len(d_.added)},
    }
    print(f"{args.units}-unit session, {args.snapshots} snapshots changing one unit each")
    print(f"{'measure':<36}{'value':>14}")
    print(f"{'one unit as stored (median)':<36}{unit_bytes:>12.0f} B")
    print(
        f"{'journal growth per snapshot':<36}{growth:>12.0f} B   ({growth / unit_bytes:.1f} units)"
    )
    print(f"{'reference-row design per snapshot':<36}{args.units:>10} rows")
    print(f"{'snapshot (median)':<36}{doc['snapshot_ms_median']:>11.2f} ms")
    print(f"{'diff of first and last (median)':<36}{doc['diff_ms_median']:>11.2f} ms")
    print(f"{'rollback to the first (median)':<36}{doc['rollback_ms_median']:>11.2f} ms")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "units.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {RESULTS / 'units.json'}")


if __name__ == "__main__":
    main()
