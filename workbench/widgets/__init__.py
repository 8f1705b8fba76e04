"""Notebook widgets (ipywidgets): explore a journal, launch a sweep from an event, watch the
results stream in.

    from workbench.widgets import Workbench
    Workbench(journal, notebook="templates/auditor_fork.ipynb")
"""

from ..sweep import parse_grid
from .explorer import JournalExplorer
from .launcher import SweepLauncher
from .live import LiveResults
from .study import OptimizeLauncher
from .workbench import Workbench

__all__ = [
    "JournalExplorer",
    "LiveResults",
    "OptimizeLauncher",
    "SweepLauncher",
    "Workbench",
    "parse_grid",
]
