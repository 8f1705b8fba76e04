"""Sweeps: fork a branch at an event once per grid point and run the forks in parallel.

    from workbench import sweep
    s = sweep.plan(j, base=0, at=191, grid={"budget": [300, 600, 1200]}, seeds=3)
    result = sweep.run(s, notebook="notebooks/templates/auditor_fork.ipynb", workers=4)

Runners ("papermill", "warm", "process"; all orchestrated from threads of this process) are
described in ``workbench.sweep.runners``.

Every fork's status (pending, running, finished, failed, cancelled), error (cell, error
name, message), wall time and executed notebook are recorded in the journal, so a sweep can
be listed, rerun (``only="failed"``) and resumed after the parent was killed (``resume``):
each fork continues from its own head, and journaled effects are never redone. Kernels and
workers exit when this process dies (ipykernel's parent poller; the worker's own poller).
"""

from __future__ import annotations

from .handle import SweepHandle, resume, run, start
from .plan import (
    RUNNERS,
    Fork,
    ForkRun,
    SweepPlan,
    SweepResult,
    check_options,
    load,
    parse_grid,
    plan,
    status,
)
from .worker import PROGRESS_ENV, report_progress

__all__ = [
    "PROGRESS_ENV",
    "RUNNERS",
    "Fork",
    "ForkRun",
    "SweepHandle",
    "SweepPlan",
    "SweepResult",
    "check_options",
    "load",
    "parse_grid",
    "plan",
    "report_progress",
    "resume",
    "run",
    "start",
    "status",
]
