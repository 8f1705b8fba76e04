"""``OptimizeLauncher``: let the sweep choose from an event (Optuna's samplers and pruners over
forks), without blocking the kernel: trials as they end, the best so far, cancel and resume."""

from __future__ import annotations

import html
import json
import threading
from typing import Any

import ipywidgets as w
import traitlets

from .. import sweep as sweeps
from ..errors import InvalidValue
from ..journal import Journal
from .point import ForkPoint


class OptimizeLauncher(ForkPoint):
    """Start an adaptive sweep (``sweep.start_optimize``) from the chosen event and follow it.
    The space starts from the agent's default grid (each list spanned as a range or a set)."""

    sweep_id = traitlets.Int(-1)

    def __init__(
        self,
        journal: Journal,
        fn: str | None = None,
        notebook: str | None = None,
        explorer: Any = None,
        space: str | None = None,
        objective: str | None = None,
        forks: int | None = None,
        workers: int | None = None,
        **kw: Any,
    ) -> None:
        start = sweeps.defaults(journal, fn=fn, notebook=notebook)
        form = sweeps.study_defaults(journal, fn=fn, notebook=notebook)  # as the Lab's form
        self.fn, self.notebook = fn, notebook
        if space is None:
            space = "\n".join(form.space)
        self.handle: sweeps.StudyHandle | None = None
        self.study: sweeps.Study | None = None
        self.space = w.Textarea(
            value=space,
            description="space",
            placeholder="budget=int:100:6000:log\nretrieval=cat:lexical,fused",
            layout=w.Layout(width="480px", height="70px"),
        )
        self.objective = w.Text(value=objective or form.objective or "", description="objective")
        self.direction = w.Dropdown(
            options=list(sweeps.DIRECTIONS), value=form.direction, description="direction"
        )
        self.forks = w.BoundedIntText(
            value=forks if forks is not None else form.forks, min=1, max=10_000, description="forks"
        )
        self.workers = w.BoundedIntText(
            value=workers if workers is not None else start.workers,
            min=1,
            max=64,
            description="workers",
        )
        self.sampler = w.Dropdown(
            options=list(sweeps.SAMPLERS), value=form.sampler, description="sampler"
        )
        self.pruner = w.Dropdown(
            options=list(sweeps.PRUNERS), value=form.pruner, description="pruner"
        )
        self.seed = w.Text(value="", description="seed", placeholder="(random)")
        self.runner = w.Dropdown(
            options=list(start.runners), value=start.runner, description="runner"
        )
        self.start_button = w.Button(description="Optimize", button_style="primary", icon="play")
        self.cancel_button = w.Button(description="Cancel", icon="stop", disabled=True)
        self.resume_button = w.Button(description="Resume", icon="forward", disabled=True)
        self.trials = w.HTML()
        self._monitor: threading.Thread | None = None
        super().__init__(journal, explorer, **kw)
        self.children = [
            w.HTML("<b>Let the sweep choose</b>"),
            w.HBox([self.branch, self.seq]),
            self.space,
            w.HBox([self.objective, self.direction]),
            w.HBox([self.forks, self.workers, self.runner]),
            w.HBox([self.sampler, self.pruner, self.seed]),
            w.HBox([self.start_button, self.cancel_button, self.resume_button]),
            self.status,
            self.trials,
        ]
        self.start_button.on_click(lambda _: self._safely(self.start))
        self.cancel_button.on_click(lambda _: self.cancel())
        self.resume_button.on_click(lambda _: self._safely(self.resume))

    def _seed(self) -> int | None:
        text = self.seed.value.strip()
        if not text:
            return None
        if not text.isdigit():
            raise InvalidValue(
                f"seed is a whole number >= 0 (or empty for a random one), not {text!r}"
            )
        return int(text)

    def start(self) -> sweeps.StudyHandle:
        """Start the study from the form (everything checked before anything is forked)."""
        if self.handle is not None and not self.handle.done:
            raise InvalidValue("a study is still running; cancel it or wait for it to finish")
        lines = [x for x in self.space.value.replace(";", "\n").splitlines() if x.strip()]
        if not lines:
            raise InvalidValue("the space is empty: give NAME=int:LOW:HIGH lines")
        handle = sweeps.start_optimize(
            self.journal,
            self.seq.value,
            lines,
            self.objective.value.strip() or None,
            self.direction.value,
            forks=self.forks.value,
            workers=self.workers.value,
            sampler=self.sampler.value,
            pruner=self.pruner.value,
            seed=self._seed(),
            fn=self.fn,
            notebook=self.notebook,
            runner=self.runner.value,
            branch=self.branch.value,
        )
        return self._show(handle)

    def resume(self) -> sweeps.StudyHandle:
        """Finish the last study (after a cancel or a crash): unfinished trials, then new ones."""
        if self.sweep_id < 0:
            raise InvalidValue("start a study first")
        if self.handle is not None and not self.handle.done:
            raise InvalidValue("the study is still running")
        return self._show(
            sweeps.start_resume_optimize(self.journal, self.sweep_id, self.workers.value)
        )

    def cancel(self) -> None:
        """Stop asking for trials and stop the running ones (Resume runs them again)."""
        if self.handle is not None:
            self.handle.cancel()
            self.status.value = "cancelling…"

    def wait(self, timeout: float | None = None) -> sweeps.Study:
        """Block until the study ends (for scripts and tests); the study."""
        if self.handle is None:
            raise InvalidValue("start a study first")
        study = self.handle.wait(timeout=timeout, show=False)
        if self._monitor is not None:
            self._monitor.join(timeout)
        return study

    def _show(self, handle: sweeps.StudyHandle) -> sweeps.StudyHandle:
        self.handle = handle
        self.sweep_id = handle.sweep_id
        self.start_button.disabled = True
        self.cancel_button.disabled = False
        self.resume_button.disabled = True
        self.status.value = f"study {handle.sweep_id}: starting…"
        self._monitor = threading.Thread(target=self._watch, args=(handle,), daemon=True)
        self._monitor.start()
        return handle

    def update(self) -> None:
        """Redraw the status line and the trials table from the journal."""
        if self.handle is None:
            return
        study = self.handle.study()
        self.study = study
        self.status.value = _status(study, self.handle.total(), self.handle.done)
        self.trials.value = _table(study)

    def _watch(self, handle: sweeps.StudyHandle) -> None:
        while not handle.join(0.5):
            self.update()
        self.update()
        self.start_button.disabled = False
        self.cancel_button.disabled = True
        study = self.study
        unfinished = study is not None and len(study.trials) < handle.total()
        self.resume_button.disabled = not unfinished


def _status(study: sweeps.Study, total: int, done: bool) -> str:
    counts = study.to_json()["counts"]
    ended = counts["complete"] + counts["pruned"] + counts["failed"]
    text = (
        f"study {study.sweep}: {ended}/{total} trials ended ({counts['pruned']} pruned, "
        f"{counts['failed']} failed){'' if done else ', running…'}"
    )
    if len(study.objectives) == 1 and study.best is not None:
        b = study.best
        text += (
            f"; best {html.escape(study.objectives[0])} = <b>{b.value:.4g}</b> on branch "
            f"{b.branch} {html.escape(json.dumps(b.params))}"
        )
    return text


def _table(study: sweeps.Study) -> str:
    names = list(study.objectives)
    params = sorted({k for t in study.trials for k in t.params})
    head = "".join(
        f"<th>{html.escape(h)}</th>" for h in ["trial", "branch", "state", *params, *names, "step"]
    )
    best = study.best.branch if len(names) == 1 and study.best is not None else None
    rows = []
    for t in study.trials:
        cells = [str(t.number), str(t.branch), t.state]
        cells += [_fmt(t.params.get(p)) for p in params]
        cells += [_fmt(t.values[i]) if t.values else "" for i in range(len(names))]
        cells.append("" if t.step is None else str(t.step))
        style = " style='font-weight:bold'" if t.branch == best else ""
        rows.append(f"<tr{style}>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return f"<table style='font-size:12px'><tr>{head}</tr>{''.join(rows)}</table>"


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else ("" if v is None else str(v))
