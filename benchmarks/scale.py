"""Scale benchmark: one PostgreSQL journal for many writers, flat costs as it grows, replication
whose cost follows events, against baselines in the same run.

1. Writers on distinct branches: 1, 8 and 32 processes, each appending to its own branch
   (``Branch.apply``, durability "process"), against raw ``INSERT`` + ``COMMIT`` of rows of the
   same shape into a table with the same keys, by as many processes. Goal: >= 0.7x at 32 (and
   at 1).
2. Growth: the same operations on journals of 10^4, 10^5 and 10^6 events (100 branches): open,
   ``head~N``, a fork, an append, the matrix (first and repeated), the branch listing; the
   log-log slope of each from the smallest to the largest. Goal: the listing <= 50 ms at 10^6,
   slope <= 0.1.
3. Replication: clone of 10^5 events on 10^3 branches SQLite -> PostgreSQL against ``pg_dump``
   (plain) of the cloned journal's schema; a no-op push and pull (seconds); a pull of 10^4 new
   events against the push of the same. Goals: clone <= 2x pg_dump, no-op <= 1 s, pull <=
   1.5x push.
4. A sweep of 1,000 forks (``scale_forks.fork``: 0.5 s of waiting, 20 events, 5 observations)
   on the Dask runner's LocalCluster, 4 workers x 16 async forks = 64 at once, over
   PostgreSQL, directly and through PgBouncer (transaction pooling is not supported: session
   mode): wall time against the ideal 1,000 x 0.5 s / 64, and the most server connections seen
   (sampled every 0.1 s from pg_stat_activity). Goals: >= 50% of ideal, connections <= 2 x
   worker processes + 2 (8 processes: 4 Dask workers and their 4 pool processes).

Starts its own PostgreSQL (Debian's binaries, as the tests do). Writes
benchmarks/results/scale.json.

    python benchmarks/scale.py [--quick] [--skip writers,growth,replication,sweep]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from pg_server import pg_server  # noqa: E402

RESULTS = Path(__file__).parent / "results"

RAW_TABLE = """CREATE TABLE IF NOT EXISTS raw_events (
    position BIGSERIAL PRIMARY KEY, branch BIGINT NOT NULL, seq BIGINT NOT NULL,
    kind TEXT NOT NULL, hash BYTEA NOT NULL, parent_hash BYTEA NOT NULL, ts BIGINT NOT NULL,
    payload TEXT NOT NULL, UNIQUE (branch, seq))"""


# -- 1. writers -------------------------------------------------------------------------------


def _lithify_writer(args: tuple[str, int, float, Any]) -> int:
    url, branch, seconds, start = args
    from workbench import Journal

    with Journal.open(url) as j:
        b = j.branch(branch)
        start.wait()
        n, deadline = 0, time.monotonic() + seconds
        while time.monotonic() < deadline:
            b.apply({"n": n})
            n += 1
    return n


def _raw_writer(args: tuple[str, int, float, Any]) -> int:
    url, branch, seconds, start = args
    import psycopg

    from workbench.events import ZERO_HASH, canonical, event_hash

    with psycopg.connect(url, autocommit=True) as c:
        c.execute("SET synchronous_commit TO local")
        parent, n = ZERO_HASH, 0
        start.wait()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            text = canonical({"n": n}, "delta")
            h = event_hash(parent, "delta", text)
            with c.transaction():
                c.execute(
                    "INSERT INTO raw_events (branch, seq, kind, hash, parent_hash, ts, payload) "
                    "VALUES (%s, %s, 'delta', %s, %s, %s, %s)",
                    (branch, n + 1, h, parent, 1_700_000_000_000, text),
                )
            parent, n = h, n + 1
    return n


def _run_writers(fn: Any, url: str, branches: list[int], seconds: float) -> float:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as m:
        start = m.Event()
        with ctx.Pool(len(branches)) as pool:
            res = pool.map_async(fn, [(url, b, seconds, start) for b in branches])
            time.sleep(1.0 + 0.05 * len(branches))  # every process connected and waiting
            start.set()
            counts = res.get()
    return sum(counts) / seconds


def writers(pg: Any, db: str, quick: bool) -> dict[str, Any]:
    import psycopg

    from workbench import Journal

    seconds = 3.0 if quick else 6.0
    rows: dict[str, Any] = {}
    for n in (1, 8, 32):
        url = pg.url(db, journal=f"w{n}")
        with Journal.open(url) as j:
            j.root().apply({"start": True})
            ids = [j.root().fork_at(1).id for _ in range(n)]
        raw_url = pg.url(db)
        with psycopg.connect(raw_url, autocommit=True) as c:
            c.execute("DROP TABLE IF EXISTS raw_events")
            c.execute(RAW_TABLE)
        lith = _run_writers(_lithify_writer, url, ids, seconds)
        raw = _run_writers(_raw_writer, raw_url, list(range(1, n + 1)), seconds)
        rows[str(n)] = {"lithify": lith, "raw": raw, "ratio": lith / raw}
    print("\nWriters on distinct branches (appends/s; raw: INSERT + COMMIT, same server)")
    print(f"{'writers':>8}{'lithify':>12}{'raw':>12}{'ratio':>8}{'goal':>8}")
    for n, r in rows.items():
        print(f"{n:>8}{r['lithify']:>12.0f}{r['raw']:>12.0f}{r['ratio']:>8.2f}{'>= 0.7':>8}")
    return rows


# -- 2. growth ---------------------------------------------------------------------------------


def _grow(url: str, events: int, branches: int) -> None:
    from workbench import Journal

    with Journal.open(url) as j:
        main = j.root()
        per = events // (branches + 1)
        main.apply_many([{"i": i} for i in range(per)])
        for k in range(branches):
            f = main.fork_at(min(per, 1 + k * max(1, per // branches)))
            f.apply_many([{"k": k, "i": i} for i in range(per - 5)])
            for m in range(5):
                f.observe("score", float(k + m), step=m)


def _time(fn: Any, repeats: int = 5) -> float:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def _operations(url: str) -> dict[str, float]:
    """Seconds of each operation on the journal at ``url``."""
    from workbench import Journal

    r: dict[str, float] = {"open": _time(lambda: Journal.open(url).close())}
    with Journal.open(url) as j:
        head = j.root().head
        r["head~N"] = _time(lambda: j.resolve("main~50"))
        r["fork"] = _time(lambda: j.root().fork_at(head // 2))
        b = j.root().fork_at(head)
        r["append"] = _time(lambda: b.apply({"x": 1}))
        t = time.perf_counter()
        j.matrix()
        r["matrix first"] = time.perf_counter() - t
        r["matrix repeat"] = _time(lambda: j.matrix())
        r["branch listing"] = _time(lambda: j.branches())
    return r


def growth(pg: Any, db: str, quick: bool) -> dict[str, Any]:
    sizes = [10**4, 10**5] if quick else [10**4, 10**5, 10**6]
    rows: dict[str, dict[str, float]] = {}
    for size in sizes:
        url = pg.url(db, journal=f"g{size}")
        _grow(url, size, 100)
        rows[str(size)] = {k: v * 1000 for k, v in _operations(url).items()}
    lo, hi = sizes[0], sizes[-1]
    slopes = {
        k: math.log(rows[str(hi)][k] / rows[str(lo)][k]) / math.log(hi / lo) for k in rows[str(lo)]
    }
    print(
        "\nGrowth on PostgreSQL (ms, median of 5; slope: log-log from the smallest to the largest)"
    )
    print(f"{'operation':<16}" + "".join(f"{s:>12,}" for s in sizes) + f"{'slope':>8}")
    for k in rows[str(lo)]:
        print(
            f"{k:<16}" + "".join(f"{rows[str(s)][k]:>12.2f}" for s in sizes) + f"{slopes[k]:>8.2f}"
        )
    print(
        f"goal: the listing <= 50 ms at {hi:,} events ({rows[str(hi)]['branch listing']:.1f}), "
        f"slope <= 0.1 ({slopes['branch listing']:.2f})"
    )
    return {"ms": rows, "slopes": slopes}


# -- 3. replication ------------------------------------------------------------------------------


def replication(pg: Any, db: str, quick: bool, folder: Path) -> dict[str, Any]:
    from workbench import Journal, replicate
    from workbench.replication import clone

    events, branches = (10**4, 100) if quick else (10**5, 1000)
    src = folder / "src.db"
    with Journal.open(src) as j:
        main = j.root()
        per = events // (branches + 1)
        main.apply_many([{"i": i} for i in range(per)])
        for k in range(branches):
            f = main.fork_at(1 + k % per)
            f.apply_many([{"k": k, "i": i} for i in range(per)])
    url = pg.url(db, journal="clone")
    t = time.perf_counter()
    clone(src, url)
    clone_s = time.perf_counter() - t
    dump = folder / "dump.sql"
    dump_cmd = [
        os.path.join(pg.bin, "pg_dump"),
        "-h",
        "127.0.0.1",
        "-p",
        str(pg.port),
        "-U",
        pg.user,
        "-n",
        "clone",
        "-f",
        str(dump),
        db,
    ]
    t = time.perf_counter()
    subprocess.run(dump_cmd, check=True, capture_output=True)
    dump_s = time.perf_counter() - t
    t = time.perf_counter()
    noop_push = replicate(src, url)
    push_noop_s = time.perf_counter() - t
    t = time.perf_counter()
    noop_pull = replicate(url, src)
    pull_noop_s = time.perf_counter() - t
    assert noop_push.up_to_date and noop_pull.up_to_date
    # 10^4 new events pushed, then 10^4 other new events pulled
    new = min(10**4, events // 10)
    with Journal.open(src) as j:
        j.root().apply_many([{"new": i} for i in range(new)])
    t = time.perf_counter()
    replicate(src, url)
    push_s = time.perf_counter() - t
    with Journal.open(url) as j:
        j.root().apply_many([{"more": i} for i in range(new)])
    t = time.perf_counter()
    replicate(url, src)
    pull_s = time.perf_counter() - t
    row = {
        "events": events,
        "branches": branches,
        "clone_s": clone_s,
        "pg_dump_s": dump_s,
        "clone_vs_pg_dump": clone_s / dump_s,
        "noop_push_s": push_noop_s,
        "noop_pull_s": pull_noop_s,
        "push_s": push_s,
        "pull_s": pull_s,
        "pull_vs_push": pull_s / push_s,
    }
    print(f"\nReplication: {events:,} events on {branches:,} branches, SQLite <-> PostgreSQL")
    print(
        f"clone {clone_s:.2f} s against pg_dump {dump_s:.2f} s: {row['clone_vs_pg_dump']:.2f}x "
        "(goal <= 2)"
    )
    print(f"no-op push {push_noop_s:.2f} s, no-op pull {pull_noop_s:.2f} s (goal <= 1 s)")
    print(
        f"push of {new:,} events {push_s:.2f} s, pull of {new:,} {pull_s:.2f} s: "
        f"{row['pull_vs_push']:.2f}x (goal <= 1.5)"
    )
    return row


# -- 4. a sweep of 1,000 forks ------------------------------------------------------------------

SWEEP_WORKERS, SWEEP_CONCURRENCY = 4, 16


def _connections(pg: Any, db: str, stop: Any, peak: list[int]) -> None:
    import psycopg

    with psycopg.connect(pg.url(db), autocommit=True) as c:
        while not stop.is_set():
            (n,) = c.execute(
                "SELECT count(*) - 1 FROM pg_stat_activity WHERE datname = %s", (db,)
            ).fetchone()  # type: ignore[misc]
            peak[0] = max(peak[0], int(n))
            stop.wait(0.1)


def _sweep_once(pg: Any, db: str, url: str, forks: int) -> dict[str, Any]:
    import threading

    from workbench import Journal, sweep

    with Journal.open(url) as j:
        at = j.root().apply({"start": True})
        plan = sweep.plan(j, 0, at, {"n": list(range(forks))})
        stop, peak = threading.Event(), [0]
        watcher = threading.Thread(target=_connections, args=(pg, db, stop, peak), daemon=True)
        watcher.start()
        t = time.perf_counter()
        result = sweep.run(
            plan,
            fn="scale_forks:fork",
            runner="dask",
            workers=SWEEP_WORKERS,
            concurrency=SWEEP_CONCURRENCY,
            progress=False,
        )
        wall = time.perf_counter() - t
        stop.set()
        watcher.join()
        finished = sum(f.status == "finished" for f in result.forks)
    ideal = forks * 0.5 / (SWEEP_WORKERS * SWEEP_CONCURRENCY)
    return {
        "forks": forks,
        "finished": finished,
        "wall_s": wall,
        "ideal_s": ideal,
        "of_ideal": ideal / wall,
        "peak_connections": peak[0],
        "connection_limit": 2 * 2 * SWEEP_WORKERS + 2,
    }


def sweep_1000(pg: Any, db: str, quick: bool) -> dict[str, Any]:
    from pg_server import PgBouncer

    here = str(Path(__file__).parent)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (here, os.environ.get("PYTHONPATH", "")) if p
    )  # the Dask workers import scale_forks
    forks = 200 if quick else 1000
    rows = {"direct": _sweep_once(pg, db, pg.url(db, journal="sweep_direct"), forks)}
    bouncer = PgBouncer(pg, pool_mode="session", pool_size=40)
    try:
        rows["pgbouncer"] = _sweep_once(pg, db, bouncer.url(db, journal="sweep_bounced"), forks)
    finally:
        bouncer.close()
    print(
        f"\nA sweep of {forks:,} forks (0.5 s, 20 events, 5 observations each) on a LocalCluster "
        f"of {SWEEP_WORKERS} workers x {SWEEP_CONCURRENCY} async forks, over PostgreSQL"
    )
    print(f"{'path':>10}{'finished':>10}{'wall s':>9}{'ideal s':>9}{'of ideal':>10}{'conns':>7}")
    for name, r in rows.items():
        print(
            f"{name:>10}{r['finished']:>10}{r['wall_s']:>9.1f}{r['ideal_s']:>9.1f}"
            f"{r['of_ideal']:>10.0%}{r['peak_connections']:>7} (goals: >= 50%, conns <= "
            f"{r['connection_limit']})"
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip", default="")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    out: dict[str, Any] = {}
    with pg_server() as pg, tempfile.TemporaryDirectory() as d:
        db = pg.create_database()
        if "writers" not in skip:
            out["writers"] = writers(pg, db, args.quick)
        if "growth" not in skip:
            out["growth"] = growth(pg, db, args.quick)
        if "replication" not in skip:
            out["replication"] = replication(pg, db, args.quick, Path(d))
        if "sweep" not in skip:
            out["sweep"] = sweep_1000(pg, db, args.quick)
    RESULTS.mkdir(exist_ok=True)
    target = RESULTS / "scale.json"
    previous = json.loads(target.read_text()) if target.exists() else {}
    target.write_text(json.dumps({**previous, **out}, indent=2) + "\n")


if __name__ == "__main__":
    main()
