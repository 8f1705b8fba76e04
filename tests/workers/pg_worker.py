"""Subprocess side of the PostgreSQL tests. usage:

pg_worker.py append URL BRANCH N [DURABILITY]  print "acked SEQ" after each committed apply
pg_worker.py effect URL KEY                    inside effect KEY print "running" and wait for a
                                               line on stdin (or its end), then print "done
                                               RESULT" (or "in-flight HOLDER")
"""

from __future__ import annotations

import sys

from workbench import Journal
from workbench.errors import EffectInFlight


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


if __name__ == "__main__":
    main()
