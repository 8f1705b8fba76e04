"""Sweeps: fork a branch at an event once per grid point and run the forks in parallel.

    from workbench import sweep
    s = sweep.plan(j, base=0, at=191, grid={"budget": [300, 600, 1200]}, seeds=3)
    result = sweep.run(s, notebook="notebooks/templates/auditor_fork.ipynb", workers=4)

Runners (all orchestrated from threads of this process):

- ``"papermill"``: each fork executes the template notebook with papermill in a fresh kernel
  with its own IPC connection path (parallel kernels never race for TCP ports); executed
  notebooks are kept under ``runs/<sweep>/<branch>.ipynb`` beside the journal.
- ``"warm"``: one long-lived kernel per worker runs the template's cells for fork after fork,
  resetting the user namespace (``%reset -f``) between forks, and saves each executed
  notebook like papermill. About five times cheaper per fork. What a warm kernel does NOT
  isolate: modules already imported (and their global state, caches, monkeypatches), the
  working directory, environment variables and threads started by earlier forks.
- ``"process"``: a Python function ``fn(journal_path, branch_id, params)`` (given as
  ``"module:function"`` or an importable function) in a fresh worker process per fork; the
  worker imports only workbench and the function's module.

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
