"""The bundled demo agent: a budgeted code auditor with a deterministic mock model.

    from workbench.agents.auditor import AuditState, start, run, Calls, MockModel
"""

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

__all__ = [
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
