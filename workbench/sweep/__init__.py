"""Sweeps: fork a branch at an event once per grid point and run the forks in parallel.

    from workbench import sweep
    result = sweep.for_agent(j, "main@191", grid={"budget": [300, 600, 1200]}).start().wait()

``for_agent`` decides grid, runner, template and fork function from what is given and the
journal's agent (``workbench.sweep.launch``: the one rule the CLI, server and widgets share);
``plan`` and ``run`` are the steps underneath, for full control:

    s = sweep.plan(j, base=0, at=191, grid={"budget": [300, 600, 1200]}, seeds=3)
    result = sweep.run(s, notebook="auditor_fork", workers=4)

Runners ("pool", the default for fork functions, "process", "papermill", "warm", "dask"; all
orchestrated from threads of this process) are described in ``workbench.sweep.runners``.

Every fork's status (pending, running, finished, failed, cancelled), error (cell, error
name, message), wall time and executed notebook are recorded in the journal, so a sweep can
be listed, rerun (``only="failed"``) and resumed after the parent was killed (``resume``):
each fork continues from its own head, and journaled effects are never redone. Kernels and
workers exit when this process dies (ipykernel's parent poller; the worker's own poller).
"""

from __future__ import annotations

from ..forkrun import PROGRESS_ENV, call_fork, report_progress
from .engines import DIRECTIONS, PRUNERS, SAMPLERS
from .evolve import evolve
from .export import export_study
from .handle import SweepHandle, resume, run, start
from .launch import Launch, defaults, for_agent, grid_text
from .optimize import (
    StudyDefaults,
    StudyHandle,
    optimize,
    resume_optimize,
    start_optimize,
    start_resume_optimize,
    study_defaults,
)
from .plan import (
    Fork,
    ForkRun,
    SweepPlan,
    SweepResult,
    SweepSummary,
    check_options,
    load,
    parse_grid,
    plan,
    status,
    summaries,
)
from .report import report, set_user_attr
from .runners import RUNNERS
from .space import Categorical, Float, Int
from .trials import Study, Trial, result, study

__all__ = [
    "DIRECTIONS",
    "PRUNERS",
    "SAMPLERS",
    "Categorical",
    "Float",
    "Int",
    "Study",
    "StudyDefaults",
    "StudyHandle",
    "Trial",
    "call_fork",
    "evolve",
    "export_study",
    "optimize",
    "report",
    "result",
    "resume_optimize",
    "set_user_attr",
    "start_optimize",
    "start_resume_optimize",
    "study",
    "study_defaults",
    "PROGRESS_ENV",
    "RUNNERS",
    "Fork",
    "Launch",
    "ForkRun",
    "SweepHandle",
    "SweepPlan",
    "SweepResult",
    "SweepSummary",
    "check_options",
    "defaults",
    "for_agent",
    "grid_text",
    "load",
    "parse_grid",
    "plan",
    "report_progress",
    "resume",
    "run",
    "start",
    "status",
    "summaries",
]
