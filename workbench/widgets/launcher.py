"""``SweepLauncher``: choose a branch and an event, edit a parameter grid, launch a sweep in
the background, follow each fork, cancel, rerun the failed ones."""

from __future__ import annotations

import html
import json
import threading
from pathlib import Path
from typing import Any

import ipywidgets as w
import traitlets

from .. import plugins
from .. import sweep as sweeps
from ..bundled import resolve_notebook
from ..errors import InvalidValue
from ..journal import Journal
from .point import ForkPoint


class SweepLauncher(ForkPoint):
    """Launch a sweep from an event without blocking the kernel, and follow it."""

    sweep_id = traitlets.Int(-1)

    def __init__(
        self,
        journal: Journal,
        notebook: str | Path | None = None,
        fn: str | None = None,
        explorer: Any = None,
        grid: str | None = None,
        seeds: int = 3,
        workers: int | None = None,
        runner: str | None = None,
        **kw: Any,
    ) -> None:
        # what the form starts from: the one rule's defaults for this journal (its agent's)
        start = sweeps.defaults(journal, runner=runner, fn=fn, notebook=notebook)
        self.notebook = str(resolve_notebook(notebook)) if notebook is not None else None
        self.fn = fn or start.fn
        agent = plugins.agent_for(journal.state_name)
        self.metrics = list(agent.metrics) if agent else []
        if grid is None:
            grid = sweeps.grid_text(start.grid)
        self.handle: sweeps.SweepHandle | None = None
        self.plan: sweeps.SweepPlan | None = None
        self.result: sweeps.SweepResult | None = None
        self._monitor: threading.Thread | None = None
        self.grid = w.Textarea(
            value=grid, description="grid", layout=w.Layout(width="480px", height="60px")
        )
        self.seeds = w.BoundedIntText(value=seeds, min=0, max=1000, description="seeds")
        self.workers = w.BoundedIntText(
            value=workers if workers is not None else start.workers,
            min=1,
            max=64,
            description="workers",
        )
        self.runner = w.Dropdown(
            options=list(start.runners), value=start.runner, description="runner"
        )
        self.launch_button = w.Button(
            description="Launch sweep", button_style="primary", icon="play"
        )
        self.cancel_button = w.Button(description="Cancel", icon="stop", disabled=True)
        self.rerun_button = w.Button(description="Rerun failed", icon="repeat", disabled=True)
        self.resume_button = w.Button(description="Resume", icon="forward", disabled=True)
        self.failures = w.HTML()
        self.forks = w.VBox()
        self.summary = w.HTML()
        self._bars: dict[int, tuple[w.IntProgress, w.HTML]] = {}
        super().__init__(journal, explorer, **kw)
        self.children = [
            w.HTML("<b>Fork a sweep</b>"),
            w.HBox([self.branch, self.seq]),
            self.grid,
            w.HBox([self.seeds, self.workers, self.runner]),
            w.HBox([self.launch_button, self.cancel_button, self.rerun_button, self.resume_button]),
            self.status,
            self.forks,
            self.failures,
            self.summary,
        ]
        self.launch_button.on_click(lambda _: self._safely(self.launch))
        self.cancel_button.on_click(lambda _: self.cancel())
        self.rerun_button.on_click(lambda _: self._safely(self.rerun_failed))
        self.resume_button.on_click(lambda _: self._safely(self.resume))

    # -- launching ------------------------------------------------------------------------

    def launch(self) -> sweeps.SweepHandle:
        """Plan the sweep from the form and start it in the background; returns its handle."""
        if self.handle is not None and not self.handle.done:
            raise InvalidValue("a sweep is still running; cancel it or wait for it to finish")
        launch = sweeps.for_agent(
            self.journal,
            self.seq.value,
            grid=self.grid.value,
            runner=self.runner.value,
            fn=self.fn,
            notebook=self.notebook,
            seeds=self.seeds.value or None,
            branch=self.branch.value,
            workers=self.workers.value,
        )
        return self._show(launch.start())

    def rerun_failed(self) -> sweeps.SweepHandle:
        """Run again the forks of the last sweep that failed."""
        if self.plan is None:
            raise InvalidValue("launch a sweep first")
        return self._start("failed")

    def resume(self) -> sweeps.SweepHandle:
        """Run every fork of the last sweep that has not finished (after a cancel or a crash)."""
        if self.plan is None:
            raise InvalidValue("launch a sweep first")
        return self._start(None)

    def _start(self, only: str | None) -> sweeps.SweepHandle:
        """Run the last sweep's forks again (``only``: "failed", or None for every unfinished
        one) the way it last ran, with the launcher's function or template as they are now (a
        fixed function reruns the failed forks)."""
        assert self.plan is not None
        handle = sweeps.start(
            self.plan, notebook=self.notebook, fn=self.fn, workers=self.workers.value, only=only
        )
        return self._show(handle)

    def _show(self, handle: sweeps.SweepHandle) -> sweeps.SweepHandle:
        """Follow a started sweep: a bar per fork, the buttons that apply."""
        self.handle = handle
        self.plan = handle.plan
        self.sweep_id = handle.plan.id
        runner = handle.plan.how.get("runner")
        self.result = None
        self.summary.value = ""
        self._bars = {}
        rows = []
        for f in self.handle.forks:
            bar = w.IntProgress(value=0, min=0, max=1, layout=w.Layout(width="240px"))
            label = w.HTML()
            params = " ".join(f"{k}={v}" for k, v in f.params.items())
            rows.append(
                w.HBox(
                    [
                        w.HTML(
                            f"<code>branch {f.branch}</code> {html.escape(params)}",
                            layout=w.Layout(width="300px"),
                        ),
                        bar,
                        label,
                    ]
                )
            )
            self._bars[f.branch] = (bar, label)
        self.forks.children = rows
        self.launch_button.disabled = True
        self.cancel_button.disabled = False
        self.rerun_button.disabled = True
        self.resume_button.disabled = True
        self.failures.value = ""
        self.status.value = (
            f"sweep {self.plan.id}: {len(self.handle.forks)} forks running on {runner}…"
        )
        self._monitor = threading.Thread(target=self._watch, args=(self.handle,), daemon=True)
        self._monitor.start()
        return self.handle

    def cancel(self) -> None:
        """Stop the running sweep (its kernels or workers are shut down)."""
        if self.handle is not None:
            self.handle.cancel()
            self.status.value = "cancelling…"

    def wait(self, timeout: float | None = None) -> sweeps.SweepResult:
        """Block until the running sweep ends (for scripts and tests); its result."""
        if self.handle is None:
            raise InvalidValue("launch a sweep first")
        result = self.handle.wait(timeout=timeout, show=False)
        if self._monitor is not None:
            self._monitor.join(timeout)
        return result

    def update(self) -> None:
        """Refresh the per-fork progress bars and statuses from the running sweep."""
        if self.handle is None:
            return
        for branch, (st, done, total) in self.handle.progress().items():
            bar, label = self._bars[branch]
            if total:
                bar.max = total
                bar.value = done or 0
            elif st == "finished":
                bar.max, bar.value = 1, 1
            bar.bar_style = {"finished": "success", "failed": "danger", "cancelled": "warning"}.get(
                st, "info"
            )
            label.value = f"{st}" + (f" {done}/{total}" if total else "")

    def _watch(self, handle: sweeps.SweepHandle) -> None:
        while not handle.done:
            self.update()
            handle._closer.join(0.25)
        self.update()
        result = handle.wait(show=False)
        self.result = result
        failed = len(result.failed)
        done = sum(f.status == "finished" for f in result.forks)
        self.status.value = f"sweep {result.sweep}: {done}/{len(result.forks)} finished" + (
            f", <b>{failed} failed</b>" if failed else ""
        )
        self.summary.value = _summary_html(result, self.metrics)
        self.failures.value = failures_html(result)
        self.launch_button.disabled = False
        self.cancel_button.disabled = True
        self.rerun_button.disabled = failed == 0
        self.resume_button.disabled = done == len(result.forks)


def failures_html(result: sweeps.SweepResult) -> str:
    """Each failed fork: where (cell), the error's name and message, the traceback's last
    lines, and the executed notebook (a link JupyterLab opens)."""
    out = []
    for f in result.failed:
        e = f.error or {}
        where = f" in cell {e['cell']}" if e.get("cell") is not None else ""
        tb = "\n".join((e.get("traceback") or [])[-8:])
        link = ""
        if f.notebook:
            name = html.escape(f.notebook)
            link = f"<div><a href='{name}' target='_blank'>{name}</a></div>"
        out.append(
            "<div class='lithify-failure' style='border-left:3px solid #c00;padding:2px 6px;"
            "margin:4px 0'>"
            f"<b style='color:#c00'>#{f.branch} {html.escape(str(e.get('ename', 'Error')))}"
            f"{where}: {html.escape(str(e.get('evalue', '')))}</b>"
            + (f"<pre style='font-size:11px;margin:2px 0'>{html.escape(tb)}</pre>" if tb else "")
            + link
            + "</div>"
        )
    return "".join(out)


def _summary_html(result: sweeps.SweepResult, metrics: list[str]) -> str:
    found = {k for f in result.forks for k in f.metrics}
    keys = [k for k in metrics if k in found] or sorted(found)[:4]
    head = (
        "<tr><th>branch</th><th>params</th><th>status</th><th>wall s</th>"
        + "".join(f"<th>{k}</th>" for k in keys)
        + "<th>error</th></tr>"
    )
    rows = []
    for f in result.forks:
        err = f"{f.error.get('ename', '')}: {f.error.get('evalue', '')}" if f.error else ""
        cells = "".join(
            f"<td>{f.metrics[k]:.3g}</td>" if k in f.metrics else "<td></td>" for k in keys
        )
        rows.append(
            f"<tr><td>{f.branch}</td><td>{html.escape(json.dumps(f.params))}</td><td>{f.status}</td>"
            f"<td>{'' if f.wall_s is None else f'{f.wall_s:.2f}'}</td>{cells}"
            f"<td>{html.escape(err[:120])}</td></tr>"
        )
    return f"<table style='font-size:12px'>{head}{''.join(rows)}</table>"
