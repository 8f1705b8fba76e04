"""Adaptive sweeps: Optuna chooses each fork's parameters from the results so far, and prunes
hopeless forks early, while every trial starts from one event of a running agent, inheriting
its state and its committed effects (the prefix is paid once).

    from workbench import sweep
    study = sweep.optimize(journal, at="main@191",
                           space={"budget": sweep.Int(100, 6000, log=True),
                                  "retrieval": sweep.Categorical(["lexical", "fused"])},
                           objective="recall", direction="maximize",
                           forks=40, workers=2, sampler="tpe", pruner="median", seed=0)
    study.best          # the best trial: branch, params, value

Each trial is a fork of the sweep, run by the runners ``sweep.run`` uses (process, papermill,
warm, dask) and recorded like any sweep fork. Optuna is driven through ask-and-tell from this
process; the study itself lives in the journal (``workbench.sweep.trials``), so a killed
coordinator resumes with ``resume_optimize`` (ended trials told to the sampler again, unfinished
ones rerun, nothing committed re-run) and ``trials.study`` gives Optuna's own ``Study``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import params as declared_params
from .. import plugins
from ..errors import InvalidValue
from . import engines
from . import space as sp
from .cluster import out_dir_for
from .handle import execute
from .launch import defaults, for_agent
from .plan import Fork, _declared, check_options
from .runners import _Context, make_runner
from .trials import ATTRS_KEY, Reader, Study, StudySpec, safe_attrs, spec_of, to_optuna
from .worker import read_progress

if TYPE_CHECKING:
    from ..journal import Journal


FORM_FORKS = 20  # the trials a form offers: a first study that ends in minutes, not 40 forks


@dataclass(frozen=True)
class StudyDefaults:
    """What an optimize form (the widget, the Lab's "Optimize from here…") starts from for a
    journal: a space spanning its agent's default grid (``space.from_grid``), the agent's
    metric maximized, TPE with the median pruner, ``FORM_FORKS`` trials."""

    space: tuple[str, ...]
    objective: str | None
    direction: str = "maximize"
    forks: int = FORM_FORKS
    sampler: str = "tpe"
    pruner: str = "median"

    def to_json(self) -> dict[str, Any]:
        """As the server's ``defaults`` route returns it, with the choices a form offers."""
        return {
            "space": list(self.space),
            "space_text": "\n".join(self.space),
            "objective": self.objective,
            "direction": self.direction,
            "directions": list(engines.DIRECTIONS),
            "forks": self.forks,
            "sampler": self.sampler,
            "samplers": list(engines.SAMPLERS),
            "pruner": self.pruner,
            "pruners": list(engines.PRUNERS),
        }


def study_defaults(
    journal: Journal,
    fn: str | Callable[..., Any] | None = None,
    notebook: str | os.PathLike[str] | None = None,
) -> StudyDefaults:
    """What an optimize form starts from for this journal (see ``StudyDefaults``); nothing is
    checked (``start_optimize`` checks what the form sends)."""
    grid = defaults(journal, fn=fn, notebook=notebook).grid
    agent = plugins.agent_for(journal.state_name)
    return StudyDefaults(tuple(sp.to_lines(sp.from_grid(grid))), agent.y if agent else None)


def _objectives(
    journal: Journal,
    objective: str | None,
    direction: str | None,
    objectives: Sequence[str] | None,
    directions: Sequence[str] | None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if objective is not None and objectives is not None:
        raise InvalidValue("give objective= (one metric) or objectives= (several), not both")
    if objectives is None:
        if objective is None:
            agent = plugins.agent_for(journal.state_name)
            objective = agent.y if agent else None
        if not objective:
            raise InvalidValue(
                "which metric to optimize? pass objective='recall' (the journal's agent names "
                "no default metric)"
            )
        objectives = [objective]
    if isinstance(objectives, str) or not objectives:
        raise InvalidValue(f"objectives is a list of metric names, not {objectives!r}")
    names = tuple(objectives)
    for n in names:
        if not isinstance(n, str) or not n:
            raise InvalidValue(f"a metric name is a non-empty string, not {n!r}")
    if len(set(names)) != len(names):
        raise InvalidValue(f"an objective is given twice in {list(names)}")
    if directions is None:
        dirs = tuple([direction or "maximize"] * len(names))
    else:
        if direction is not None and len(names) == 1 and directions != [direction]:
            raise InvalidValue("give direction= or directions=, not both")
        dirs = tuple(directions)
    if len(dirs) != len(names):
        raise InvalidValue(
            f"{len(names)} objectives need {len(names)} directions, not {len(dirs)}: "
            "directions=['maximize', 'minimize', ...]"
        )
    for d in dirs:
        if d not in engines.DIRECTIONS:
            raise InvalidValue(f"a direction is maximize or minimize, not {d!r}")
    return names, dirs


def _progress_default() -> bool:
    from .handle import _in_notebook

    return sys.stderr.isatty() or _in_notebook()


class StudyHandle:
    """An adaptive sweep running in a background thread: ``progress()``, ``cancel()``,
    ``wait()`` (returns the ``Study``)."""

    def __init__(
        self,
        journal: Journal,
        spec: StudySpec,
        runner: Any,
        how: Mapping[str, Any],
        workers: int,
        out_dir: Path,
    ) -> None:
        self.journal = journal
        self.spec = spec
        self.sweep_id = spec.sweep
        self.runner = runner
        self.how = dict(how)
        self.workers = workers
        self.out_dir = out_dir
        self.status: dict[int, str] = {}
        self._contexts: dict[int, _Context] = {}
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._error: BaseException | None = None
        self._reader = Reader(journal)
        self._thread = threading.Thread(target=self._drive, name=f"study-{spec.sweep}", daemon=True)
        self._thread.start()

    # -- the driver ------------------------------------------------------------------------

    def _record(self, branch: int, status: str, **fields: Any) -> None:
        with self._lock:
            self.status[branch] = status
        self.journal.record_run(branch, self.sweep_id, status, runner=self.runner.name, **fields)

    def _drive(self) -> None:
        try:
            self._loop()
        except BaseException as e:  # noqa: BLE001 (reported by wait())
            self._error = e
            self._cancel.set()
        finally:
            self.runner.close()

    def _loop(self) -> None:
        spec = self.spec
        engines.quiet()
        trials = self._reader.trials(spec)
        study = to_optuna(spec, trials, running=False)  # ended trials, told again
        dists = sp.distributions(spec.space)
        rerun = [t for t in trials if t.state == "running"]  # not ended: run again
        index = len(trials)
        total = self.total()
        pool = ThreadPoolExecutor(self.workers, thread_name_prefix=f"study-{spec.sweep}")
        flying: dict[Future[str], tuple[Any, Fork]] = {}
        try:
            while True:
                while not self._cancel.is_set() and len(flying) < self.workers:
                    if rerun:
                        t = rerun.pop(0)
                        study.enqueue_trial({k: t.params[k] for k in dists if k in t.params})
                        trial = study.ask(dists)
                        fork = Fork(t.branch, t.params)
                    elif index < total:
                        study.sampler = engines.sampler(
                            spec.sampler,
                            engines.trial_seed(spec.seed, index),
                            spec.space,
                            len(spec.objectives),
                            self.workers,
                        )
                        trial = study.ask(dists)
                        b = self.journal.sweep_fork(
                            spec.sweep, spec.base, spec.at, trial.params, runner=self.runner.name
                        )
                        fork = Fork(b.id, dict(trial.params))
                        index += 1
                    else:
                        break
                    flying[pool.submit(self._run, fork)] = (trial, fork)
                if not flying:
                    break
                done, _ = wait(list(flying), return_when=FIRST_COMPLETED)
                for fut in done:
                    trial, fork = flying.pop(fut)
                    self._tell(study, trial, fork, fut.result())
        finally:
            pool.shutdown(wait=True)

    def total(self) -> int:
        """Trials the study runs in all (a grid sampler stops at its grid's size)."""
        if self.spec.sampler == "grid":
            size = 1
            for values in sp.grid(self.spec.space).values():
                size *= len(values)
            return min(self.spec.forks, size)
        return self.spec.forks

    def _run(self, fork: Fork) -> str:
        ctx = _Context(
            self.journal.location, fork, self.out_dir, self._cancel, self.how.get("timeout")
        )
        if self.how.get("runner") != "process":
            ctx.function = self.how.get("fn")
        with self._lock:
            self._contexts[fork.branch] = ctx
            self.status[fork.branch] = "pending"
        return execute(self.runner, ctx, self._cancel, self._record)

    def _tell(self, study: Any, trial: Any, fork: Fork, status: str) -> None:
        from optuna.trial import TrialState

        spec = self.spec
        own = self._reader.own(fork.branch)
        if status == "cancelled":
            return  # not ended: a resume runs it again
        if status == "finished":
            missing = [o for o in spec.objectives if o not in own.last]
            if missing:
                names = ", ".join(repr(m) for m in missing)
                self._record(
                    fork.branch,
                    "failed",
                    error=json.dumps(
                        {
                            "ename": "NoObjective",
                            "evalue": f"the fork finished but never observed {names}: observe "
                            "it (or return it in a dict) so the study can rank the fork",
                        }
                    ),
                )
                study.tell(trial, state=TrialState.FAIL)
            else:
                study.tell(trial, [own.last[o] for o in spec.objectives])
        elif status == "pruned":
            for step, value in sorted(own.steps.get(spec.objectives[0], {}).items()):
                trial.report(value, step)
            study.tell(trial, state=TrialState.PRUNED)
        else:
            study.tell(trial, state=TrialState.FAIL)
        frozen = study._storage.get_trial(trial._trial_id)
        attrs = safe_attrs(frozen.system_attrs)
        shared = safe_attrs(study._storage.get_study_system_attrs(study._study_id))
        if shared:
            attrs["_study"] = shared
        if attrs:
            self.journal.branch(fork.branch).effect(f"{ATTRS_KEY}:told", lambda: attrs)

    # -- following -------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        """True once every trial has ended (or the study was cancelled) and the runner closed."""
        return not self._thread.is_alive()

    def join(self, timeout: float | None = None) -> bool:
        """Wait until the study has stopped; whether it has."""
        self._thread.join(timeout)
        return self.done

    def progress(self) -> dict[int, tuple[str, int | None, int | None]]:
        """Per fork: (status, steps done, steps total) as reported by the fork."""
        with self._lock:
            items = list(self._contexts.items())
            status = dict(self.status)
        out = {}
        for b, ctx in items:
            done, total = read_progress(ctx.progress_file) or (None, None)
            out[b] = (status.get(b, "pending"), done, total)
        return out

    def cancel(self) -> None:
        """Stop asking for trials and stop the running forks (a resume runs them again)."""
        self._cancel.set()
        with self._lock:
            contexts = list(self._contexts.values())
        for ctx in contexts:
            ctx.stop()

    def study(self) -> Study:
        """The study as the journal has it now."""
        trials = Reader(self.journal).trials(self.spec)
        return Study(self.sweep_id, self.spec.objectives, self.spec.directions, tuple(trials))

    def wait(self, timeout: float | None = None, show: bool | None = None) -> Study:
        """Block until the study ends (a progress bar in a terminal or notebook unless
        show=False); the study. Re-raises what stopped the driver, if anything did."""
        import time

        if show is None:
            show = _progress_default()
        bar = None
        if show:
            from tqdm.auto import tqdm

            bar = tqdm(total=self.total(), desc=f"study {self.sweep_id}", unit="trial")
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while not self.done:
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"study {self.sweep_id} still running after {timeout} s")
                if bar is not None:
                    self._update(bar)
                self._thread.join(0.25)
        except KeyboardInterrupt:
            self.cancel()
            self._thread.join()
            raise
        finally:
            if bar is not None:
                self._update(bar)
                bar.close()
        if self._error is not None:
            raise self._error
        return self.study()

    def _update(self, bar: Any) -> None:
        with self._lock:
            ended = sum(s in ("finished", "failed", "pruned") for s in self.status.values())
            pruned = sum(s == "pruned" for s in self.status.values())
        bar.n = ended
        bar.set_postfix_str(f"{pruned} pruned", refresh=False)
        bar.refresh()


def start_optimize(
    journal: Journal,
    at: int | str,
    space: Mapping[str, sp.Dimension] | Sequence[str],
    objective: str | None = None,
    direction: str | None = None,
    *,
    objectives: Sequence[str] | None = None,
    directions: Sequence[str] | None = None,
    forks: int = 40,
    workers: int | None = None,
    sampler: str = "tpe",
    pruner: str = "median",
    seed: int | None = None,
    fn: str | Callable[..., Any] | None = None,
    notebook: str | os.PathLike[str] | None = None,
    runner: str | None = None,
    branch: int | str | None = None,
    timeout: float | None = None,
    scheduler: Any = None,
    start_timeout: float = 60.0,
    out_dir: str | os.PathLike[str] | None = None,
) -> StudyHandle:
    """Start an adaptive sweep in the background (see ``optimize``); returns its handle. Every
    argument is checked, and the runner started, before the sweep's row is written."""
    chosen = sp.parse(space) if _is_lines(space) else sp.check(space)  # type: ignore[arg-type]
    names, dirs = _objectives(journal, objective, direction, objectives, directions)
    if isinstance(forks, bool) or not isinstance(forks, int) or forks < 1:
        raise InvalidValue(f"forks is how many trials to run, a whole number >= 1, not {forks!r}")
    engines.check(sampler, pruner, len(names), chosen, seed)
    launch = for_agent(
        journal,
        at,
        grid={n: [p[n] for p in sp.corners(chosen)] for n in chosen},
        runner=runner,
        fn=fn,
        notebook=notebook,
        branch=branch,
        workers=workers,
        timeout=timeout,
        scheduler=scheduler,
    )
    check_options(launch.runner, launch.workers, timeout)
    declared, source = _declared(launch.notebook, launch.fn)
    declared_params.check_points(sp.corners(chosen), declared, source)
    assert launch.base is not None and launch.at is not None
    how = launch.how()
    spec_doc = {
        "kind": "optimize",
        "space": sp.to_json(chosen),
        "objectives": list(names),
        "directions": list(dirs),
        "sampler": sampler,
        "pruner": pruner,
        "seed": seed,
        "forks": forks,
        "notebook": launch.notebook,
        "fn": launch.fn,
    }
    started = launch.start_runner(start_timeout)
    try:
        sweep_id = journal.open_sweep(launch.base, launch.at, spec_doc, how)
        spec = spec_of(journal, sweep_id)
        return _handle(journal, spec, started, how, launch.workers, out_dir)
    except BaseException:
        started.close()
        raise


def _is_lines(space: Any) -> bool:
    return isinstance(space, (list, tuple)) and all(isinstance(s, str) for s in space)


def _handle(
    journal: Journal,
    spec: StudySpec,
    runner: Any,
    how: Mapping[str, Any],
    workers: int,
    out_dir: str | os.PathLike[str] | None,
) -> StudyHandle:
    base = Path(out_dir) if out_dir is not None else out_dir_for(journal.path)
    target = base / str(spec.sweep)
    target.mkdir(parents=True, exist_ok=True)
    return StudyHandle(journal, spec, runner, how, workers, target)


def optimize(
    journal: Journal,
    at: int | str,
    space: Mapping[str, sp.Dimension] | Sequence[str],
    objective: str | None = None,
    direction: str | None = None,
    *,
    progress: bool | None = None,
    **kw: Any,
) -> Study:
    """Run an adaptive sweep from ``at`` and wait for it: ``forks`` trials (40), ``workers`` at
    once, each a fork whose parameters Optuna's ``sampler`` (tpe, random, grid, cmaes, nsga2,
    qmc) chose from ``space``; ``pruner`` (none, median, percentile, asha, hyperband) stops
    forks whose ``sweep.report``-ed values are hopeless. The value of a trial is the last
    observation of ``objective`` on its fork (``objectives=[...]`` and ``directions=[...]`` for
    several: see ``Study.pareto``). ``fn``, ``notebook``, ``runner``, ``scheduler`` as for
    ``sweep.for_agent``; ``seed`` makes the sampling repeatable."""
    handle = start_optimize(journal, at, space, objective, direction, **kw)
    return handle.wait(show=progress)


def start_resume_optimize(
    journal: Journal, sweep_id: int, workers: int | None = None, start_timeout: float = 60.0
) -> StudyHandle:
    """Start finishing an adaptive sweep in the background (see ``resume_optimize``)."""
    spec = spec_of(journal, sweep_id)
    if spec.kind != "optimize":
        raise InvalidValue(
            f"sweep {sweep_id} is an {spec.kind} sweep; resume it with its own command"
        )
    info = next(s for s in journal.sweeps() if s.id == sweep_id)
    how = dict(info.how)
    n = workers if workers is not None else int(how.get("workers") or 1)
    runner_name = how.get("runner") or "process"
    check_options(runner_name, n, how.get("timeout"))
    started = make_runner(
        journal.location,
        runner_name,
        how.get("notebook") if runner_name != "process" else None,
        how.get("fn"),
        start_timeout,
        n,
        how.get("scheduler"),
    )
    try:
        return _handle(journal, spec, started, {**how, "workers": n}, n, None)
    except BaseException:
        started.close()
        raise


def resume_optimize(
    journal: Journal,
    sweep_id: int,
    workers: int | None = None,
    progress: bool | None = None,
    start_timeout: float = 60.0,
) -> Study:
    """Finish an adaptive sweep whose coordinator died (or was cancelled): its ended trials are
    told to the sampler again from the journal, its unfinished forks run again from their own
    heads (committed effects are read back), then new trials until it has its ``forks``."""
    return start_resume_optimize(journal, sweep_id, workers, start_timeout).wait(show=progress)


__all__ = [
    "StudyHandle",
    "optimize",
    "resume_optimize",
    "start_optimize",
    "start_resume_optimize",
]
