"""The bundled demo agent: a budgeted code auditor with a deterministic mock model.

    from workbench.agents.auditor import AuditState, start, run, Calls, MockModel

It registers itself as a plugin (``AGENT``, under the ``lithify.agents`` entry point) like any
third-party agent would: its State, fork function, template, commands and defaults.
"""

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
from .charts import recall_vs_budget
from .logic import CATEGORIES, AuditState, select_files, tokens
from .models import Calls, MockModel, Model, OpenAIModel, make_model

AGENT = Agent(
    name="auditor",
    state="workbench.agents.auditor.logic:AuditState",
    state_name=AuditState.state_name or "",
    fork="workbench.agents.auditor:run_fork",
    template="auditor_fork",  # a bundled template, by name
    commands="workbench.agents.auditor.commands:register",
    grid={"budget": [300, 600, 1200, 2400, 4800]},
    x="budget",
    y="recall",
    shorthands={"budgets": "budget"},
    metrics=("recall", "precision", "compactions", "model_calls"),
    observes=METRICS,
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
    "recall_vs_budget",
    "rerun_counts",
    "run",
    "run_fork",
    "select_files",
    "start",
    "step",
    "tokens",
]
