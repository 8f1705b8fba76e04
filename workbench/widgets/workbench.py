"""``Workbench``: the explorer, the launchers (a grid sweep, or a study Optuna steers) and the
live results in one view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ipywidgets as w

from ..journal import Journal
from .explorer import JournalExplorer
from .launcher import SweepLauncher
from .live import LiveResults
from .study import OptimizeLauncher


class Workbench(w.VBox):
    """Explore a journal, launch a sweep from the selected event, watch its results arrive."""

    def __init__(
        self,
        journal: Journal,
        notebook: str | Path | None = None,
        fn: str | None = None,
        x: str | None = None,
        y: str | None = None,
        color: str | None = None,
        **kw: Any,
    ) -> None:
        self.explorer = JournalExplorer(journal, live=True)  # follows the sweeps' forks
        self.launcher = SweepLauncher(journal, notebook=notebook, fn=fn, explorer=self.explorer)
        self.optimizer = OptimizeLauncher(
            journal, notebook=str(notebook) if notebook else None, fn=fn, explorer=self.explorer
        )
        self.live = LiveResults(journal, x=x, y=y, color=color)
        self.launcher.observe(self._follow_sweep, "sweep_id")
        self.live.observe(self._select_picked, "picked")
        self.optimizer.observe(self._follow_sweep, "sweep_id")
        self.launchers = w.Tab(children=[self.launcher, self.optimizer])
        self.launchers.set_title(0, "Grid sweep")
        self.launchers.set_title(1, "Let the sweep choose")
        super().__init__(**kw)
        self.children = [self.explorer, self.launchers, self.live]

    def _follow_sweep(self, change: dict[str, Any]) -> None:
        self.live.sweep = change["new"]
        self.explorer.refresh()

    def _select_picked(self, change: dict[str, Any]) -> None:
        """A branch clicked in the chart: selected in the explorer, at its head."""
        branch = change["new"]
        if branch >= 0:
            self.explorer.select(branch, self.explorer.journal.info(branch).head)
