"""lithify workbench: an append-only, content-addressed, forkable journal for agent state.

``from workbench import Journal, State`` is all a user needs to start. Every name here is
imported when first used (PEP 562), so ``import workbench`` costs next to nothing and a sweep's
worker loads only what its forks use; heavier modules (matrix, charts, sweep, widgets) import
their dependencies only when used.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from .forking import SweepInfo
    from .journal import Journal
    from .params import Param, takes
    from .plugins import Agent
    from .replication import Diverged, ReplicationReport, replicate
    from .verify import VerifyReport

__version__ = "0.1.0"

# where each public name lives
_NAMES = {
    "Agent": "plugins",
    "Branch": "branch",
    "BranchConflict": "errors",
    "BranchInfo": "events",
    "Conflict": "errors",
    "Diverged": "replication",
    "IntegrityError": "errors",
    "InvalidValue": "errors",
    "Journal": "journal",
    "NotAJournal": "errors",
    "NotFound": "errors",
    "Param": "params",
    "Record": "events",
    "ReplicationReport": "replication",
    "State": "events",
    "SweepInfo": "forking",
    "VerifyReport": "verify",
    "WorkbenchError": "errors",
    "canonical": "events",
    "replicate": "replication",
    "takes": "params",
}

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

_LAZY = {"matrix", "charts", "sweep", "widgets", "replay"}


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is not None:
        value = getattr(import_module(f".{module}", __name__), name)
        globals()[name] = value  # found once; later uses are plain attribute reads
        return value
    if name in _LAZY:
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_NAMES, *_LAZY})
