"""Fork functions the pool runner's tests run (importable: tests/ is on PYTHONPATH). Importing
this module appends a line to $POOL_IMPORTS, so a test counts how often workers imported it."""

from __future__ import annotations

import asyncio
import os
import signal
import time

from workbench import Journal

if os.environ.get("POOL_IMPORTS"):
    with open(os.environ["POOL_IMPORTS"], "a") as f:
        f.write(f"{os.getpid()}\n")

FORKS_HERE = 0  # module state: persists between the forks one worker runs


def whoami(journal: str, branch: int, params: dict) -> dict:
    """Observes its worker's pid and how many forks this module has run in that worker."""
    global FORKS_HERE
    FORKS_HERE += 1
    time.sleep(float(params.get("sleep", 0)))
    return {"pid": os.getpid(), "forks_here": FORKS_HERE}


def crash(journal: str, branch: int, params: dict) -> dict:
    """Ends its worker, or raises, as ``params["how"]`` says; "fine" returns a value."""
    how = params["how"]
    if how == "exit":
        os._exit(3)
    if how == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if how == "memory":
        raise MemoryError("no more room")
    if how == "sleep":
        time.sleep(120)
    return {"ok": 1.0}


async def calls(journal: str, branch: int, params: dict) -> dict:
    """An I/O-bound fork: ten journaled model calls of ``delay`` seconds each (each appends a
    line to $POOL_CALLS when it really runs), then its start and end times."""
    from tiny_agent import Tally

    started = time.time()
    with Journal.open(journal, Tally) as j:
        b = j.branch(branch)
        for i in range(int(params.get("calls", 10))):

            async def call(i: int = i) -> int:
                if os.environ.get("POOL_CALLS"):
                    with open(os.environ["POOL_CALLS"], "a") as f:
                        f.write(f"{branch}:{i}\n")
                await asyncio.sleep(float(params.get("delay", 0.2)))
                return 1

            b.apply({"add": await b.aeffect(f"call:{i}", call)})
    return {"started": started, "ended": time.time(), "total": float(b.state().total)}


def pid_fork(journal: str, branch: int, params: dict) -> dict:
    """Observes its worker's pid, and writes a delta (its journal is kept open meanwhile)."""
    from tiny_agent import Tally

    from workbench import Journal

    with Journal.open(journal, Tally) as j:
        j.branch(branch).apply({"add": 1})
    return {"pid": os.getpid()}
