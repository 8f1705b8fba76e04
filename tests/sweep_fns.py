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
