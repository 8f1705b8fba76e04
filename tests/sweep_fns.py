"""Functions the sweep tests run in worker processes (importable: tests/ is on PYTHONPATH)."""

from __future__ import annotations

import json
import sys
import time

from workbench import Journal


def record_modules(journal: str, branch: int, params: dict) -> None:
    with open(params["out"], "w") as f:
        json.dump(sorted(sys.modules), f)
    with Journal.open(journal) as j:
        j.branch(branch).observe("ok", 1)


def sleepy(journal: str, branch: int, params: dict) -> None:
    time.sleep(params.get("sleep", 0.2))
    with Journal.open(journal) as j:
        j.branch(branch).observe("slept", params.get("sleep", 0.2))


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
