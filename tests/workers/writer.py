"""Append N deltas to one branch. usage: python writer.py JOURNAL BRANCH N TAG [GO_FILE]

Takes its branch handle first, then (with GO_FILE) waits for the file so two writers race.
Prints "ok N" or "refused WRITTEN EXPECTED ACTUAL"."""

from __future__ import annotations

import os
import sys
import time

from workbench import BranchConflict, Journal


def main() -> None:
    path, branch, n, tag = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    go = sys.argv[5] if len(sys.argv) > 5 else None
    with Journal.open(path) as j:
        b = j.branch(branch)
        print("ready", flush=True)
        while go and not os.path.exists(go):
            time.sleep(0.001)
        written = 0
        try:
            for i in range(n):
                b.apply({"tag": tag, "i": i})
                written += 1
        except BranchConflict as e:
            print(f"refused {written} {e.expected} {e.actual}", flush=True)
            return
    print(f"ok {written}", flush=True)


if __name__ == "__main__":
    main()
