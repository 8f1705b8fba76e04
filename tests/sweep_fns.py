"""Functions the sweep tests run in worker processes (importable: tests/ is on PYTHONPATH)."""

from __future__ import annotations

import json
import os
import sys
import time

from workbench import Journal


def record_modules(journal: str, branch: int, params: dict) -> None:
    with open(params["out"], "w") as f:
        json.dump(sorted(sys.modules), f)
    with Journal.open(journal) as j:
        j.branch(branch).observe("ok", 1)


def sleepy(journal: str, branch: int, params: dict) -> None:
    if "started" in params:  # a folder: says "this fork is running" with a file of its name
        open(os.path.join(params["started"], str(branch)), "w").close()
    time.sleep(params.get("sleep", 0.2))
    with Journal.open(journal) as j:
        j.branch(branch).observe("slept", params.get("sleep", 0.2))


def gated(journal: str, branch: int, params: dict) -> None:
    """``sleepy`` once the file named by $SWEEP_GATE exists: a test opens the gate when it has
    seen what it needs while the forks are still running (it fails after 120 s shut)."""
    gate, deadline = os.environ["SWEEP_GATE"], time.monotonic() + 120
    while not os.path.exists(gate):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the gate {gate} was never opened")
        time.sleep(0.01)
    sleepy(journal, branch, params)


def boom(journal: str, branch: int, params: dict) -> None:
    raise RuntimeError(f"no luck with {params}")


def counted(journal: str, branch: int, params: dict) -> None:
    """Five effects (each appends a line to params["log"] when it really runs) and a result;
    sleeps between them so a test can kill a worker mid-fork."""
    with Journal.open(journal) as j:
        b = j.branch(branch)
        for step in range(5):

            def work(step: int = step) -> int:
                with open(params["log"], "a") as f:
                    f.write(f"{branch}:{step}\n")
                return step * params["x"]

            b.effect(f"step:{step}", work)
            time.sleep(params.get("sleep", 0.1))
        b.observe("score", params["x"] * 2)
