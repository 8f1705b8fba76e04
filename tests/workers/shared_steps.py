"""A resumable agent loop on a branch another process may write too: one effect and one delta
per step, its own keys, a fresh handle after every conflict.

usage: python shared_steps.py JOURNAL TRACE BRANCH WRITER STEPS
The branch's state counts each writer's steps; WRITER names this loop's. Each effect writes
"BRANCH:KEY" to TRACE (unbuffered) when its function really runs, so runs can be counted.
Prints "ready" once the journal is open.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field

from workbench import BranchConflict, Journal, State
from workbench.errors import EffectInFlight


@dataclass
class Writers(State):
    """Each writer's steps done and the sum of its results; a step applies in order, once."""

    done: dict[str, int] = field(default_factory=dict)
    acc: dict[str, int] = field(default_factory=dict)

    def apply(self, delta: dict) -> None:
        w = delta["w"]
        assert delta["i"] == self.done.get(w, 0), (delta, self.done)
        self.done[w] = delta["i"] + 1
        self.acc[w] = self.acc.get(w, 0) + delta["v"]


def main() -> None:
    path, trace, branch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    writer, steps = sys.argv[4], int(sys.argv[5])
    fd = os.open(trace, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    with Journal.open(path, Writers) as j:
        print("ready", flush=True)
        b = j.branch(branch)
        while True:
            try:
                i = b.state().done.get(writer, 0)
                if i >= steps:
                    break
                key = f"{writer}:call:{i}"

                def call(i: int = i, key: str = key) -> dict:
                    os.write(fd, f"{branch}:{key}\n".encode())
                    time.sleep(0.001)
                    return {"v": i * i}

                r = b.effect(key, call)
                b.apply({"w": writer, "i": i, "v": r["v"]})
            except BranchConflict:
                b = j.branch(branch)  # the other writer moved the branch: decide again
            except EffectInFlight:
                time.sleep(0.002)  # a restarted writer's earlier self may still be running it
                b = j.branch(branch)


if __name__ == "__main__":
    main()
