"""What every launcher widget starts with: a branch and an event to fork from (following an
explorer's selection when given one), a status line, and errors shown there, never raised into
the notebook's output."""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as w

from ..errors import WorkbenchError
from ..journal import Journal


class ForkPoint(w.VBox):
    """A base for launchers: ``branch`` and ``seq`` pickers, ``status``, ``refresh_branches``."""

    def __init__(self, journal: Journal, explorer: Any = None, **kw: Any) -> None:
        self.journal = journal
        self.branch = w.Dropdown(description="branch", options=[])
        self.seq = w.IntSlider(
            description="at seq",
            min=0,
            max=0,
            continuous_update=False,
            layout=w.Layout(width="480px"),
        )
        self.status = w.HTML()
        super().__init__(**kw)
        self.branch.observe(self._on_branch, "value")
        self.refresh_branches()
        if explorer is not None:
            explorer.observe(
                lambda c: self._follow(explorer), names=["selected_branch", "selected_seq"]
            )
            self._follow(explorer)

    def refresh_branches(self) -> None:
        """Reload the branch choices and the current branch's seq range."""
        infos = self.journal.branches()
        self.branch.options = [
            (f"{i.name or '#' + str(i.id)} (head {i.head})", i.id) for i in infos
        ]
        if self.branch.value is None and infos:
            self.branch.value = infos[0].id
        self._on_branch()

    def _on_branch(self, change: Any = None) -> None:
        if self.branch.value is not None:
            head = self.journal.info(self.branch.value).head
            self.seq.max = head
            if change is not None:
                self.seq.value = head

    def _follow(self, explorer: Any) -> None:
        if explorer.selected_branch not in [v for _, v in self.branch.options]:
            self.refresh_branches()
        self.branch.value = explorer.selected_branch
        self._on_branch()
        self.seq.value = min(explorer.selected_seq, self.seq.max)

    def _safely(self, action: Any) -> None:
        try:
            action()
        except WorkbenchError as e:
            self.status.value = (
                f"<span style='color:var(--jp-error-color1,#c00)'>{html.escape(str(e))}</span>"
            )
