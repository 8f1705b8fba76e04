"""PostgreSQL backend benchmark, against raw psycopg on the same server in the same run.

- single append: ``Branch.apply`` (durability "process": synchronous_commit = local) vs a raw
  ``INSERT`` + ``COMMIT`` of the same row into a table of the same shape (goal >= 0.5x);
- batch: ``Branch.apply_many`` of 10,000 deltas vs a raw binary ``COPY`` of the same rows in
  one transaction (goal >= 0.3x);
- fork: ``fork_at`` cost at two history lengths (goal: flat);
- matrix: ``Journal.matrix()`` of 10^6 observations (goal <= 2 s).

Starts its own PostgreSQL (Debian's binaries, as the tests do) and stops it at the end.
Writes benchmarks/results/postgres.json.

    python benchmarks/postgres.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from pg_server import pg_server  # noqa: E402

from workbench import Journal, State  # noqa: E402
from workbench.events import ZERO_HASH, canonical, event_hash  # noqa: E402

RESULTS = Path(__file__).parent / "results"


@dataclass
class Counter(State):
    """A fixed-size state, so timings measure the journal, not snapshot growth."""

    n: int = 0

    def apply(self, delta: dict) -> None:
        self.n += 1


RAW_TABLE = """CREATE TABLE raw_events (
    position BIGSERIAL PRIMARY KEY, branch BIGINT NOT NULL, seq BIGINT NOT NULL,
    kind TEXT NOT NULL, hash BYTEA NOT NULL, parent_hash BYTEA NOT NULL, ts BIGINT NOT NULL,
    payload TEXT NOT NULL, UNIQUE (branch, seq))"""


def rows(n: int, branch: int = 0) -> list[tuple]:
    out, parent = [], ZERO_HASH
    for i in range(n):
        text = canonical({"x": i}, "delta")
        h = event_hash(parent, "delta", text)
        out.append((branch, i + 1, "delta", h, parent, 1_700_000_000_000, text))
        parent = h
    return out


def raw_single(url: str, n: int) -> float:
    import psycopg

    with psycopg.connect(url, autocommit=True) as c:
        c.execute("SET synchronous_commit TO local")
        c.execute("DROP TABLE IF EXISTS raw_events")
        c.execute(RAW_TABLE)
        data = rows(n)
        t = time.perf_counter()
        for r in data:
            c.execute(
                "INSERT INTO raw_events (branch, seq, kind, hash, parent_hash, ts, payload) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                r,
            )
        return (time.perf_counter() - t) / n


def raw_copy(url: str, n: int) -> float:
    import psycopg

    with psycopg.connect(url) as c:
        c.execute("SET synchronous_commit TO local")
        c.execute("DROP TABLE IF EXISTS raw_events")
        c.execute(RAW_TABLE)
        c.commit()
        data = rows(n)
        t = time.perf_counter()
        with (
            c.cursor() as cur,
            cur.copy(
                "COPY raw_events (branch, seq, kind, hash, parent_hash, ts, payload) FROM STDIN "
                "(FORMAT BINARY)"
            ) as cp,
        ):
            cp.set_types(["int8", "int8", "text", "bytea", "bytea", "int8", "text"])
            for r in data:
                cp.write_row(r)
        c.commit()
        return (time.perf_counter() - t) / n


def lithify_single(url: str, n: int) -> float:
    with Journal.open(url, Counter) as j:
        b = j.root()
        b.apply({"x": -1})
        t = time.perf_counter()
        for i in range(n):
            b.apply({"x": i})
        return (time.perf_counter() - t) / n


def lithify_batch(url: str, n: int) -> float:
    with Journal.open(url, Counter) as j:
        b = j.root()
        b.apply({"x": -1})
        deltas = [{"x": i} for i in range(n)]
        t = time.perf_counter()
        b.apply_many(deltas)
        return (time.perf_counter() - t) / n


def fork_cost(url: str, history: int, repeats: int) -> float:
    with Journal.open(url, Counter) as j:
        b = j.root()
        b.apply_many([{"x": i} for i in range(history)])
        samples = []
        for _ in range(repeats):
            t = time.perf_counter()
            b.fork_at(history // 2)
            samples.append(time.perf_counter() - t)
        return statistics.median(samples)


def build_observations(url: str, branches: int, per_branch: int) -> None:
    """Forks with params, each with ``per_branch`` observations, written with binary COPY
    straight into the journal's table (hashes computed here, as the journal would)."""
    import psycopg

    from workbench.storage.postgres import parse_url

    with Journal.open(url) as j:
        j.root().apply({"start": 1})
        ids = [j.root().fork_at(1, params={"budget": 100 * (k % 10)}).id for k in range(branches)]
    conninfo, schema = parse_url(url)
    with psycopg.connect(conninfo) as c:
        c.execute(f'SET search_path TO "{schema}"')
        for b in ids:
            c.execute("SELECT set_config('lithify.trusted_branch', %s, true)", (str(b),))
            parent = bytes(
                c.execute("SELECT hash FROM events WHERE branch = 0 AND seq = 1").fetchone()[0]
            )
            with (
                c.cursor() as cur,
                cur.copy(
                    "COPY events (branch, seq, kind, hash, parent_hash, ts, payload, metric, "
                    "value) FROM STDIN (FORMAT BINARY)"
                ) as cp,
            ):
                cp.set_types(
                    ["int8", "int8", "text", "bytea", "bytea", "int8", "text", "text", "float8"]
                )
                for i in range(per_branch):
                    value = (i % 97) / 97
                    text = canonical({"metric": "recall", "value": value}, "observe")
                    h = event_hash(parent, "observe", text)
                    cp.write_row((b, i + 2, "observe", h, parent, 1, text, "recall", value))
                    parent = h
            c.commit()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    args = ap.parse_args()
    n_single, n_batch = (300, 2_000) if args.quick else (2_000, 10_000)
    branches, per_branch = (100, 1_000) if args.quick else (1_000, 1_000)
    with pg_server() as pg:
        db = pg.create_database("bench")

        def url(name: str) -> str:
            return pg.url(db, journal=name)

        raw_1 = raw_single(pg.url(db), n_single)
        lit_1 = lithify_single(url("single"), n_single)
        raw_b = raw_copy(pg.url(db), n_batch)
        lit_b = lithify_batch(url("batch"), n_batch)
        fork_small = fork_cost(url("fork_small"), 1_000, 50)
        fork_large = fork_cost(url("fork_large"), 20_000 if args.quick else 100_000, 50)
        build_observations(url("obs"), branches, per_branch)
        with Journal.open(url("obs")) as j:
            samples = []
            for _ in range(3):
                t = time.perf_counter()
                m = j.matrix()
                samples.append(time.perf_counter() - t)
            matrix_s = statistics.median(samples)
            n_obs = m.height
    doc = {
        "single_append_us": {"lithify": lit_1 * 1e6, "raw_insert_commit": raw_1 * 1e6},
        "batch_append_us_per_event": {"lithify": lit_b * 1e6, "raw_copy": raw_b * 1e6},
        "ratios": {"single": raw_1 / lit_1, "batch": raw_b / lit_b},
        "fork_us": {"history_1000": fork_small * 1e6, "history_large": fork_large * 1e6},
        "matrix_s": matrix_s,
        "observations": n_obs,
        "synchronous_commit": "local",
        "goals": {"single": ">= 0.5", "batch": ">= 0.3", "matrix_s": "<= 2", "fork": "flat"},
        "pass": {
            "single": raw_1 / lit_1 >= 0.5,
            "batch": raw_b / lit_b >= 0.3,
            "matrix": matrix_s <= 2.0 or n_obs < 1_000_000,
        },
    }
    print("PostgreSQL, synchronous_commit=local, same server; medians of this run")
    print(f"{'operation':<34}{'lithify':>12}{'raw':>12}{'ratio':>8}  goal")
    print(
        f"{'append (INSERT+COMMIT)':<34}{lit_1 * 1e6:>10.0f}us{raw_1 * 1e6:>10.0f}us"
        f"{raw_1 / lit_1:>8.2f}  >= 0.5"
    )
    print(
        f"{'apply_many / COPY, per event':<34}{lit_b * 1e6:>10.1f}us{raw_b * 1e6:>10.1f}us"
        f"{raw_b / lit_b:>8.2f}  >= 0.3"
    )
    print(f"{'fork_at, 1,000-event history':<34}{fork_small * 1e6:>10.0f}us")
    print(f"{'fork_at, large history':<34}{fork_large * 1e6:>10.0f}us{'':>20}  flat")
    print(f"{f'matrix() of {n_obs:,} observations':<34}{matrix_s:>11.2f}s{'':>20}  <= 2 s")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "postgres.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\nwrote {RESULTS / 'postgres.json'}")


if __name__ == "__main__":
    main()
