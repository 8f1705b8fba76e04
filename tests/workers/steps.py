"""A resumable agent loop for crash tests: one effect, one delta and one observation per step.

usage: python steps.py JOURNAL TRACE STEPS [DURABILITY]
Each effect writes "KEY" to TRACE (unbuffered) when it really runs, so re-runs can be counted.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass

from workbench import Journal, State


@dataclass
class Steps(State):
    done: int = 0
    acc: int = 0

    def apply(self, delta: dict) -> None:
        assert delta["i"] == self.done, (delta, self.done)
        self.done += 1
        self.acc += delta["v"]


def main() -> None:
    path, trace, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    durability = sys.argv[4] if len(sys.argv) > 4 else "process"
    fd = os.open(trace, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with Journal.open(path, Steps, durability=durability, snapshot_every=16) as j:
        b = j.root()
        print("ready", flush=True)
        while b.state().done < steps:
            i = b.state().done

            def call(i: int = i) -> dict:
                os.write(fd, f"call:{i}\n".encode())
                time.sleep(0.001)
                return {"i": i, "v": i * i}

            r = b.effect(f"call:{i}", call)
            b.apply({"i": i, "v": r["v"]})
            b.observe("v", r["v"])
    print("finished", flush=True)


if __name__ == "__main__":
    main()
