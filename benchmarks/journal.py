"""Journal benchmark: append, batched append (Branch.apply_many, and the lazy apply loop),
fork, at(seq) (also through a read-only handle) and effect lookup.

Prints a table of medians and ratios against raw sqlite3 measured in the same process run,
and writes benchmarks/results/journal.json.

    python benchmarks/journal.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from workbench import Journal, State
from workbench.storage import PAGE_SIZE, WAL_AUTOCHECKPOINT_BYTES

RESULTS = Path(__file__).parent / "results"


@dataclass
class Counter(State):
    """A fixed-size state, so append timings measure the journal, not snapshot growth."""

    n: int = 0
    last: int = 0

    def apply(self, delta: dict) -> None:
        self.n += 1
        self.last = delta["x"]


@dataclass
class Log(State):
    items: list[int] = field(default_factory=list)

    def apply(self, delta: dict) -> None:
        self.items.append(delta["x"])


def median_us(samples: list[float]) -> float:
    return statistics.median(samples) * 1e6


def raw_single(
    path: Path,
    synchronous: str,
    n: int,
    autocheckpoint: int | None = None,
    page_size: int | None = None,
) -> float:
    """Seconds per one-row INSERT + COMMIT with the journal's journal mode and sync level
    (and optionally its autocheckpoint interval and page size too)."""
    con = sqlite3.connect(path)
    if page_size is not None:
        con.execute(f"PRAGMA page_size={page_size}")
    con.execute("PRAGMA journal_mode=WAL")
    con.execute(f"PRAGMA synchronous={synchronous}")
    if autocheckpoint is not None:
        con.execute(f"PRAGMA wal_autocheckpoint={autocheckpoint}")
    con.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, payload TEXT)")
    con.commit()
    t = time.perf_counter()
    for i in range(n):
        con.execute("INSERT INTO t (payload) VALUES (?)", (f'{{"x":{i}}}',))
        con.commit()
    dt = (time.perf_counter() - t) / n
    con.close()
    return dt


def ours_single(path: Path, durability: str, n: int, expect: bool = False) -> float:
    """Seconds per apply; with ``expect``, each append names the head it expects."""
    with Journal.open(path, Counter, durability=durability) as j:
        b = j.root()
        for i in range(50):  # materialize the state outside the timing
            b.apply({"x": i})
        t = time.perf_counter()
        if expect:
            for i in range(n):
                b.apply({"x": i}, expect=b.head)
        else:
            for i in range(n):
                b.apply({"x": i})
        return (time.perf_counter() - t) / n


def raw_batch(path: Path, n: int) -> float:
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    con.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, payload TEXT)")
    rows = [(f'{{"x":{i}}}',) for i in range(n)]
    t = time.perf_counter()
    con.execute("BEGIN")
    con.executemany("INSERT INTO t (payload) VALUES (?)", rows)
    con.execute("COMMIT")
    dt = (time.perf_counter() - t) / n
    con.close()
    return dt


def ours_batch(path: Path, n: int) -> float:
    with Journal.open(path, Counter, durability="lazy") as j:
        b = j.root()
        b.apply({"x": -1})
        t = time.perf_counter()
        for i in range(n):
            b.apply({"x": i})
        j.flush()
        return (time.perf_counter() - t) / n


def ours_apply_many(path: Path, n: int) -> float:
    with Journal.open(path, Counter) as j:
        b = j.root()
        b.apply({"x": -1})
        deltas = [{"x": i} for i in range(n)]
        t = time.perf_counter()
        b.apply_many(deltas)
        return (time.perf_counter() - t) / n


def build(j: Journal, n: int) -> None:
    b = j.root()
    chunk = 10_000
    done = 0
    while done < n:
        k = min(chunk, n - done)
        for i in range(k):
            b.apply({"x": done + i})
        j.flush()
        done += k


def fork_times(j: Journal, n_forks: int) -> list[float]:
    b = j.root()
    head = b.head
    out = []
    for i in range(n_forks):
        seq = (i * 7919) % (head + 1)
        t = time.perf_counter()
        b.fork_at(seq)
        out.append(time.perf_counter() - t)
    return out


def bench_fork(tmp: Path, sizes: list[int], n_forks: int) -> dict[str, dict[str, float]]:
    res: dict[str, dict[str, float]] = {"memory": {}, "disk": {}}
    for size in sizes:
        for where in ("memory", "disk"):
            if where == "memory":
                j = Journal.in_memory(Log, snapshot_every=10**9)
                j.durability = "lazy"  # bulk build; forks are immediate anyway
            else:
                j = Journal.open(
                    tmp / f"fork{size}.db", Log, durability="lazy", snapshot_every=10**9
                )
            build(j, size)
            j.durability = "process"
            res[where][str(size)] = median_us(fork_times(j, n_forks))
            j.close()
    return res


def bench_at(tmp: Path, n: int) -> dict[str, float]:
    with Journal.open(tmp / "at.db", Log) as j:
        b = j.root()
        for i in range(n):
            b.apply({"x": i})
        times = []
        for seq in range(n + 1):
            t = time.perf_counter()
            b.at(seq)
            times.append(time.perf_counter() - t)
    return {"median_us": median_us(times), "max_us": max(times) * 1e6, "seqs": n + 1}


def bench_readonly_at(tmp: Path, n: int, repeats: int) -> dict[str, float]:
    """at(seq) through a read-only handle of a closed journal (no WAL content: read as the file
    stands, watched for changes around each query) against the baseline, the same reads while
    a writer holds the journal open with a WAL (an ordinary read-only connection)."""
    path = tmp / "readonly.db"
    with Journal.open(path, Log) as j:
        j.root().apply_many([{"x": i} for i in range(n)])

    def at_times() -> list[float]:
        times = []
        with Journal.open(path, Log, readonly=True) as r:
            b = r.root()
            for _ in range(repeats):
                for seq in range(0, n + 1, max(1, n // 200)):
                    t = time.perf_counter()
                    b.at(seq)
                    times.append(time.perf_counter() - t)
        return times

    as_it_stands = median_us(at_times())
    with Journal.open(path, Log) as w:
        w.root().apply({"x": -1})  # committed, in the WAL: readers need the ordinary connection
        with_writer = median_us(at_times())
    return {"median_us": as_it_stands, "baseline_with_writer_us": with_writer, "events": n}


def bench_effect_chain(tmp: Path, depth: int, n: int) -> dict[str, float]:
    with Journal.open(tmp / "chain.db", Log) as j:
        b = j.root()
        for i in range(n):
            b.effect(f"tool:{i}", lambda i=i: i)
        for _ in range(depth):
            b.apply({"x": 0})
            b = b.fork()
        hits = []
        for i in range(n):
            t = time.perf_counter()
            b.effect(f"tool:{i}", lambda: -1)
            hits.append(time.perf_counter() - t)
        own = []
        for i in range(n):
            b.effect(f"own:{i}", lambda i=i: i)
        for i in range(n):
            t = time.perf_counter()
            b.effect(f"own:{i}", lambda: -1)
            own.append(time.perf_counter() - t)
    return {"depth": depth, "hit_root_us": median_us(hits), "hit_own_us": median_us(own)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="smaller sizes (no 10^6 fork history)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    sizes = [100, 10_000] if args.quick else [100, 10_000, 1_000_000]
    rows: list[tuple[str, str, str, str, str]] = []
    result: dict[str, object] = {
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "sqlite": sqlite3.sqlite_version,
    }
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        single = {}
        for durability, sync, n in (("process", "NORMAL", 3000), ("fsync", "FULL", 300)):
            raws, raws_ck, ours, expecting = [], [], [], []
            for r in range(args.repeats):
                raws.append(raw_single(tmp / f"raw-{durability}-{r}.db", sync, n))
                raws_ck.append(
                    raw_single(
                        tmp / f"rawck-{durability}-{r}.db",
                        sync,
                        n,
                        WAL_AUTOCHECKPOINT_BYTES // PAGE_SIZE,
                        PAGE_SIZE,
                    )
                )
                ours.append(ours_single(tmp / f"ours-{durability}-{r}.db", durability, n))
                if durability == "process":
                    expecting.append(ours_single(tmp / f"oursx-{r}.db", durability, n, expect=True))
            raw_us, raw_ck_us, our_us = median_us(raws), median_us(raws_ck), median_us(ours)
            ratio = raw_us / our_us
            single[durability] = {
                "raw_us": raw_us,
                "ours_us": our_us,
                "rate_ratio": ratio,
                "target": 0.5,
                "pass": ratio >= 0.5,
                "raw_same_page_size_and_autocheckpoint_us": raw_ck_us,
                "rate_ratio_same_page_size_and_autocheckpoint": raw_ck_us / our_us,
            }
            rows.append(
                (
                    f"append ({durability})",
                    f"{our_us:.1f} µs",
                    f"raw {raw_us:.1f} µs",
                    f"{ratio:.2f}x rate",
                    "≥ 0.5x",
                )
            )
            rows.append(
                (
                    "  raw with our page size + autocheckpoint",
                    "",
                    f"raw {raw_ck_us:.1f} µs",
                    f"{raw_ck_us / our_us:.2f}x rate",
                    "(reported)",
                )
            )
            if expecting:
                x_us = median_us(expecting)
                single[durability]["expect_us"] = x_us
                single[durability]["expect_rate_ratio"] = raw_us / x_us
                rows.append(
                    (
                        "  with expect=head",
                        f"{x_us:.1f} µs",
                        f"raw {raw_us:.1f} µs",
                        f"{raw_us / x_us:.2f}x rate",
                        "(reported)",
                    )
                )
        result["append_single"] = single

        raws, lazy, many = [], [], []
        for r in range(args.repeats):
            raws.append(raw_batch(tmp / f"rawb-{r}.db", 20_000))
            lazy.append(ours_batch(tmp / f"oursb-{r}.db", 20_000))
            many.append(ours_apply_many(tmp / f"oursm-{r}.db", 20_000))
        raw_us, lazy_us, many_us = median_us(raws), median_us(lazy), median_us(many)
        ratio = raw_us / many_us
        result["append_batched"] = {
            "raw_us": raw_us,
            "ours_us": many_us,
            "rate_ratio": ratio,
            "api": "Branch.apply_many",
            "target": 0.3,
            "pass": ratio >= 0.3,
            "lazy_apply_us": lazy_us,
            "lazy_rate_ratio": raw_us / lazy_us,
        }
        rows.append(
            (
                "append (batch: apply_many)",
                f"{many_us:.2f} µs",
                f"raw executemany {raw_us:.2f} µs",
                f"{ratio:.2f}x rate",
                "≥ 0.3x",
            )
        )
        rows.append(
            (
                "append (lazy apply loop)",
                f"{lazy_us:.2f} µs",
                "",
                f"{raw_us / lazy_us:.2f}x rate",
                "(reported)",
            )
        )

        forks = bench_fork(tmp, sizes, 300)
        fork_result: dict[str, object] = {}
        for where, limit in (("memory", 30.0), ("disk", 100.0)):
            vals = forks[where]
            flat = max(vals.values()) / min(vals.values())
            ok = flat <= 1.5 and max(vals.values()) <= limit
            fork_result[where] = {
                "by_history_len_us": vals,
                "flatness": flat,
                "limit_us": limit,
                "pass": ok,
            }
            cells = ", ".join(f"{k}: {v:.1f}" for k, v in vals.items())
            rows.append(
                (
                    f"fork ({where})",
                    f"{cells} µs",
                    "",
                    f"max/min {flat:.2f}",
                    f"≤ 1.5, ≤ {limit:.0f} µs",
                )
            )
        result["fork"] = fork_result

        at = bench_at(tmp, 2000)
        at["pass"] = at["max_us"] <= 1000
        result["at"] = at
        rows.append(
            (
                "at(seq), 2,000 events",
                f"median {at['median_us']:.0f} µs",
                f"max {at['max_us']:.0f} µs",
                "",
                "max ≤ 1000 µs",
            )
        )

        ro = bench_readonly_at(tmp, 2000, args.repeats)
        result["readonly_at"] = ro
        rows.append(
            (
                "read-only at(seq), no WAL",
                f"{ro['median_us']:.0f} µs",
                f"with a writer open {ro['baseline_with_writer_us']:.0f} µs",
                f"{ro['baseline_with_writer_us'] / ro['median_us']:.2f}x rate",
                "(reported)",
            )
        )

        chain = bench_effect_chain(tmp, 10, 500)
        result["effect_lookup_chain"] = chain
        rows.append(
            (
                "effect hit, chain 10 deep",
                f"{chain['hit_root_us']:.1f} µs (root)",
                f"{chain['hit_own_us']:.1f} µs (own)",
                "",
                "reported",
            )
        )

    width = [
        max(len(r[i]) for r in rows + [("case", "median", "baseline", "ratio", "target")])
        for i in range(5)
    ]
    header = ("case", "median", "baseline", "ratio", "target")
    for r in [header, tuple("-" * w for w in width), *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r, width, strict=True)))
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "journal.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
