"""The bundled demo agent: a budgeted code auditor with a deterministic mock model.

    from workbench.agents.auditor import AuditState, start, run, Calls, MockModel

It registers itself as a plugin (``AGENT``, under the ``lithify.agents`` entry point) like any
third-party agent would: its State, fork function, template, commands and defaults.
"""

from pathlib import Path

from ...plugins import Agent
from .agent import (
    METRICS,
    RunResult,
    bundled_corpus,
    fork_seq_after_files,
    rerun_counts,
    run,
    run_fork,
    start,
    step,
)
from .logic import CATEGORIES, AuditState, select_files, tokens
from .models import Calls, MockModel, Model, OpenAIModel, make_model

_TEMPLATE = Path(__file__).resolve().parents[3] / "notebooks" / "templates" / "auditor_fork.ipynb"

AGENT = Agent(
    name="auditor",
    state="workbench.agents.auditor.logic:AuditState",
    state_name=AuditState.state_name or "",
    fork="workbench.agents.auditor:run_fork",
    template=str(_TEMPLATE) if _TEMPLATE.is_file() else None,
    commands="workbench.agents.auditor.commands:register",
    grid={"budget": [300, 600, 1200, 2400, 4800]},
    x="budget",
    y="recall",
    metrics=("recall", "precision", "compactions", "model_calls"),
    db="auditor.db",
)

__all__ = [
    "AGENT",
    "AuditState",
    "CATEGORIES",
    "Calls",
    "METRICS",
    "MockModel",
    "Model",
    "OpenAIModel",
    "RunResult",
    "bundled_corpus",
    "fork_seq_after_files",
    "make_model",
    "rerun_counts",
    "run",
    "run_fork",
    "select_files",
    "start",
    "step",
    "tokens",
]
