"""Subprocess side of the PostgreSQL tests. usage:

pg_worker.py append URL BRANCH N [DURABILITY]  print "acked SEQ" after each committed apply
pg_worker.py effect URL KEY                    inside effect KEY print "running" and wait for a
                                               line on stdin (or its end), then print "done
                                               RESULT" (or "in-flight HOLDER")
pg_worker.py race URL N START HANDLE           print "ready" once a root handle is taken, then
                                               from time START on run effects race:0..N-1 on
                                               that handle (HANDLE "stale": the test appends
                                               before START) or a fresh one per key ("fresh"):
                                               "ran KEY" inside fn, then "ok KEY RESULT",
                                               "conflict KEY", "in-flight KEY" or "raw KEY
                                               ERROR" per key
"""

from __future__ import annotations

import os
import sys
import time

from workbench import Journal
from workbench.errors import BranchConflict, EffectInFlight


def main() -> None:
    mode, url = sys.argv[1], sys.argv[2]
    if mode == "append":
        branch, n = int(sys.argv[3]), int(sys.argv[4])
        durability = sys.argv[5] if len(sys.argv) > 5 else "process"
        with Journal.open(url, durability=durability) as j:
            b = j.branch(branch)
            for i in range(n):
                seq = b.apply({"w": branch, "i": i})
                if durability == "lazy":
                    j.flush()
                print(f"acked {seq}", flush=True)
        return
    if mode == "race":
        race(url, int(sys.argv[3]), float(sys.argv[4]), sys.argv[5] == "fresh")
        return
    key = sys.argv[3]
    with Journal.open(url) as j:

        def slow() -> str:
            print("running", flush=True)
            sys.stdin.readline()  # in flight until the test says so
            return f"result of {key}"

        try:
            print(f"done {j.root().effect(key, slow)}", flush=True)
        except EffectInFlight as e:
            print(f"in-flight {e.holder}", flush=True)


def race(url: str, n: int, start: float, fresh: bool) -> None:
    """Every process runs the same keys in the same order, so their announcements collide."""
    with Journal.open(url) as j:
        b = j.root()  # connected and loaded before the start line
        print("ready", flush=True)
        time.sleep(max(0.0, start - time.time()))
        for i in range(n):
            key = f"race:{i}"

            def fn(key: str = key) -> str:
                print(f"ran {key}", flush=True)
                return f"{key} by {os.getpid()}"

            try:
                print(f"ok {key} {(j.root() if fresh else b).effect(key, fn)}", flush=True)
            except BranchConflict:
                print(f"conflict {key}", flush=True)
            except EffectInFlight:
                print(f"in-flight {key}", flush=True)
            except Exception as e:  # what the test looks for: none may escape raw
                print(f"raw {key} {type(e).__name__}: {e}", flush=True)


if __name__ == "__main__":
    main()
