"""lithify workbench: an append-only, content-addressed, forkable journal for agent state.

``from workbench import Journal, State`` is all a user needs to start; heavier modules
(matrix, charts, sweep, widgets) import their dependencies only when used.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .branch import Branch
from .errors import (
    BranchConflict,
    Conflict,
    IntegrityError,
    InvalidValue,
    NotAJournal,
    NotFound,
    WorkbenchError,
)
from .events import BranchInfo, Record, State, canonical
from .journal import Journal, SweepInfo, VerifyReport
from .params import Param, takes
from .plugins import Agent
from .replication import Diverged, ReplicationReport, replicate

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "Branch",
    "BranchConflict",
    "BranchInfo",
    "Conflict",
    "Diverged",
    "IntegrityError",
    "InvalidValue",
    "Journal",
    "NotAJournal",
    "NotFound",
    "Param",
    "Record",
    "ReplicationReport",
    "State",
    "SweepInfo",
    "VerifyReport",
    "WorkbenchError",
    "canonical",
    "replicate",
    "takes",
    "__version__",
]

_LAZY = {"matrix", "charts", "sweep", "widgets"}


def __getattr__(name: str) -> Any:
    # Submodules with heavy dependencies load on first use, not on `import workbench`.
    if name in _LAZY:
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
