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

With one worker, a study asks and tells exactly as Optuna's own ``study.optimize`` does with
the same sampler object, so the same sampler and seed give the same trials, uninterrupted or
resumed (``workbench.sweep.driver`` replays the recorded asks and tells on resume). With
several workers, ``workers`` trials are in flight at once: the sampler sees the running ones
as Optuna's parallel ``optimize`` does (TPE's constant liar), and which trial ends first
decides what is sampled next.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import params as declared_params
from .. import plugins
from ..errors import InvalidValue, NoObjective
from ..forkrun import read_progress
from ..progress import Bar, interactive
from . import engines, options
from . import space as sp
from .driver import Driver, SpaceFn
from .handle import execute
from .launch import Launch, as_recorded, defaults, for_agent
from .plan import Fork, _declared, check_options
from .runners import FUNCTION_RUNNERS, ForkContext, out_dir_for, tidy
from .trials import Reader, Study, StudySpec, spec_of
from .watch import Watch, check_idle

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
    return interactive()


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
        driver: Driver,
        timeout: float | None = None,
    ) -> None:
        self.journal = journal
        self.spec = spec
        self.sweep_id = spec.sweep
        self.runner = runner
        self.how = dict(how)
        self.workers = max(workers, int(getattr(runner, "slots", workers)))  # trials in flight
        self.out_dir = out_dir
        self.driver = driver
        self.timeout = timeout
        self.status: dict[int, str] = {}
        self._contexts: dict[int, ForkContext] = {}
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._error: BaseException | None = None
        self._reader = Reader(journal)
        # the journal says this study is driven, and a cancel asked for there reaches it
        self._watch = Watch(journal, spec.sweep, self.cancel)
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
            with self._lock:
                contexts = list(self._contexts.values())
            tidy(self.out_dir, contexts, self.journal.path)
            self._watch.stop()

    def _loop(self) -> None:
        spec, driver = self.spec, self.driver
        started = time.monotonic()
        rerun = driver.resume(self._reader.trials(spec), self._reader)
        total = self.total()
        pool = ThreadPoolExecutor(self.workers, thread_name_prefix=f"study-{spec.sweep}")
        flying: dict[Future[str], tuple[Any, Fork]] = {}
        depth = self.workers + self._ahead()
        try:
            while True:
                while not self._cancel.is_set() and len(flying) < depth:
                    if rerun:
                        trial, branch = rerun.pop(0)
                        fork = Fork(branch, dict(self.journal.info(branch).params))
                    elif driver.asked < total and not driver.stopped and not self._late(started):
                        trial, params = driver.ask()
                        self._check(params)
                        b = self.journal.sweep_fork(
                            spec.sweep, spec.base, spec.at, params, runner=self.runner.name
                        )
                        fork = Fork(b.id, params)
                    else:
                        break
                    flying[pool.submit(self._run, fork)] = (trial, fork)
                if not flying:
                    break
                done, _ = wait(list(flying), return_when=FIRST_COMPLETED)
                for fut in done:
                    trial, fork = flying.pop(fut)
                    driver.tell(trial, fork.branch, fut.result(), self._reader)
                if driver.stopped:  # the trial asked ahead does not start (a resume runs it)
                    for fut in [f for f in flying if f.cancel()]:
                        self._record(flying.pop(fut)[1].branch, "cancelled")
        finally:
            pool.shutdown(wait=True)
        self._watch.stop()  # before the last write of how: a beat would race with it
        if driver.asked < total and not self._cancel.is_set():
            why = "stopped by a callback" if driver.stopped else "timed out"
            if driver.missing:
                why = f"no objective: {driver.missing}"
            self.journal.record_how(
                spec.sweep, {**self.how, "stopped": {"why": why, "forks": driver.asked}}
            )
        if driver.missing:
            raise NoObjective(
                f"study {spec.sweep} stopped after a trial that finished without its objective "
                f"({driver.missing}); resume it with `lithify optimize --resume {spec.sweep}` "
                "once the fork observes it",
                sweep=spec.sweep,
            )

    def _ahead(self) -> int:
        """Trials asked ahead of a free worker: with several workers, one, so a worker that
        ends a trial starts the next at once while the coordinator tells and asks (the trials
        already depend on timing there; the sampler sees the queued one as running, as it sees
        the others). None with one worker (Optuna's own sequence), a study timeout or callbacks
        (nothing asked may start after either stops the study)."""
        if self.workers < 2 or self.timeout is not None or self.driver.callbacks:
            return 0
        return 1

    def _late(self, started: float) -> bool:
        return self.timeout is not None and time.monotonic() - started >= self.timeout

    def _check(self, params: Mapping[str, Any]) -> None:
        """A define-by-run space's parameters against what the fork declares (a space of ranges
        was checked whole before the study started)."""
        if self.spec.define_by_run:
            declared, source = _declared(self.how.get("notebook"), self.how.get("fn"))
            declared_params.check_points([dict(params)], declared, source)

    def total(self) -> int:
        """Trials the study runs in all (a grid sampler stops at its grid's size)."""
        if self.spec.sampler == "grid":
            size = 1
            for values in sp.grid(self.spec.space).values():
                size *= len(values)
            return min(self.spec.forks, size)
        return self.spec.forks

    def _run(self, fork: Fork) -> str:
        ctx = ForkContext(
            self.journal.location, fork, self.out_dir, self._cancel, self.how.get("timeout")
        )
        if self.how.get("runner") not in FUNCTION_RUNNERS:
            ctx.function = self.how.get("fn")
        with self._lock:
            self._contexts[fork.branch] = ctx
            self.status[fork.branch] = "pending"
        return execute(self.runner, ctx, self._cancel, self._record)

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
        """The study as the journal has it now (read by the driver's reader: what it read
        while telling trials is not read again)."""
        trials = self._reader.trials(self.spec)
        return Study(self.sweep_id, self.spec.objectives, self.spec.directions, tuple(trials))

    def wait(self, timeout: float | None = None, show: bool | None = None) -> Study:
        """Block until the study ends (a progress bar in a terminal or notebook unless
        show=False); the study. Re-raises what stopped the driver, if anything did."""
        if show is None:
            show = _progress_default()
        bar = Bar(f"study {self.sweep_id}", self.total(), "trial") if show else None
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

    def _update(self, bar: Bar) -> None:
        with self._lock:
            ended = sum(s in ("finished", "failed", "pruned") for s in self.status.values())
            pruned = sum(s == "pruned" for s in self.status.values())
        bar.update(ended, note=f"{pruned} pruned")


def check_observed(launch: Launch, objectives: Sequence[str]) -> None:
    """Refuse, before the first fork, an objective the forks' agent declares it never observes
    (a study of it would run every trial to its end for nothing)."""
    observes = launch.observes()
    unknown = [o for o in objectives if observes and o not in observes]
    if unknown:
        raise NoObjective(
            f"the {launch.agent} agent's forks never observe {unknown[0]!r}; they observe "
            f"{', '.join(observes)}: pick one of those as the objective",
            objective=unknown[0],
        )


@dataclass(frozen=True)
class StudyPlan:
    """A checked study, nothing written yet: where and how its trials run (``launch``), the
    spec recorded with it, and what its driver takes that is not recorded (functions)."""

    launch: Launch
    spec: dict[str, Any]
    space_fn: SpaceFn | None
    sampler: engines.Choice
    constraints: options.Constraints | None
    callbacks: tuple[Callable[[Any, Any], None], ...]
    timeout: float | None

    def driver(self, journal: Journal, sweep_id: int) -> Driver:
        """The study's driver, once its sweep is recorded."""
        return Driver(
            journal,
            spec_of(journal, sweep_id),
            self.launch.workers,
            space_fn=self.space_fn,
            sampler=self.sampler,
            constraints=self.constraints,
            callbacks=self.callbacks,
        )


def plan_study(
    journal: Journal,
    at: int | str,
    space: Mapping[str, sp.Dimension] | Sequence[str] | SpaceFn | str,
    objective: str | None = None,
    direction: str | None = None,
    *,
    objectives: Sequence[str] | None = None,
    directions: Sequence[str] | None = None,
    forks: int = 40,
    workers: int | None = None,
    sampler: str | Any = "tpe",
    pruner: str | Any = "median",
    seed: int | None = None,
    fn: str | Callable[..., Any] | None = None,
    notebook: str | os.PathLike[str] | None = None,
    runner: str | None = None,
    branch: int | str | None = None,
    timeout: float | None = None,
    fork_timeout: float | None = None,
    scheduler: Any = None,
    enqueue: Sequence[Mapping[str, Any]] | None = None,
    warm_start: Any = None,
    constraints: Any = None,
    callbacks: Sequence[Callable[[Any, Any], None]] | None = None,
    concurrency: int = 1,
    max_forks_per_worker: int | None = None,
) -> StudyPlan:
    """Check everything a study is given and decide how it runs (see ``optimize``); nothing is
    written."""
    space_fn = options.space_function(space)
    chosen: dict[str, sp.Dimension] | None = None
    if space_fn is None:
        chosen = sp.parse(space) if _is_lines(space) else sp.check(space)  # type: ignore[arg-type]
        points = sp.corners(chosen)
    else:
        points = options.try_space(space_fn)
    names, dirs = _objectives(journal, objective, direction, objectives, directions)
    if isinstance(forks, bool) or not isinstance(forks, int) or forks < 1:
        raise InvalidValue(f"forks is how many trials to run, a whole number >= 1, not {forks!r}")
    study_timeout = options.study_timeout(timeout)
    sampler_choice = engines.parse(sampler, "sampler", engines.SAMPLERS)
    pruner_choice = engines.parse(pruner, "pruner", engines.PRUNERS)
    if pruner_choice.obj is not None:
        pruner_choice = engines.Choice(*engines.pruner_settings(pruner_choice.obj))
    engines.check(sampler_choice, pruner_choice, len(names), chosen, seed)
    constraint_fn, constraints_doc = options.constraints_of(constraints)
    queued = options.enqueued(enqueue, chosen)
    if space_fn is not None:
        options.check_enqueued_by_run(space_fn, queued)
    warm = options.warm_trials(journal, warm_start, names)
    grid: dict[str, list[Any]] = {}
    for point in points + queued:
        for k, v in point.items():
            grid.setdefault(k, []).append(v)
    launch = for_agent(
        journal,
        at,
        grid=grid,
        runner=runner,
        fn=fn,
        notebook=notebook,
        branch=branch,
        workers=workers,
        fork_timeout=fork_timeout,
        scheduler=scheduler,
        concurrency=concurrency,
        max_forks_per_worker=max_forks_per_worker,
    )
    check_options(launch.runner, launch.workers, fork_timeout)
    check_observed(launch, names)
    declared, source = _declared(launch.notebook, launch.fn)
    declared_params.check_points(points + queued, declared, source)
    assert launch.base is not None and launch.at is not None
    spec_doc: dict[str, Any] = {
        "kind": "optimize",
        "space": sp.to_json(chosen or {}),
        "objectives": list(names),
        "directions": list(dirs),
        "sampler": sampler_choice.label if sampler_choice.obj is not None else sampler_choice.name,
        "sampler_settings": sampler_choice.settings,
        "pruner": pruner_choice.name,
        "pruner_settings": pruner_choice.settings,
        "seed": seed,
        "forks": forks,
        "notebook": launch.notebook,
        "fn": launch.fn,
    }
    for key, value in (
        ("space_fn", options.ref_of(space_fn) if space_fn is not None else None),
        ("constraints", constraints_doc),
        ("enqueue", queued),
        ("warm_start", warm),
        ("timeout", study_timeout),
    ):
        if value:
            spec_doc[key] = value
    return StudyPlan(
        launch,
        spec_doc,
        space_fn,
        sampler_choice,
        constraint_fn,
        tuple(callbacks or ()),
        study_timeout,
    )


def start_optimize(
    journal: Journal,
    at: int | str,
    space: Mapping[str, sp.Dimension] | Sequence[str] | SpaceFn | str,
    objective: str | None = None,
    direction: str | None = None,
    *,
    start_timeout: float = 60.0,
    out_dir: str | os.PathLike[str] | None = None,
    **kw: Any,
) -> StudyHandle:
    """Start an adaptive sweep in the background (see ``optimize``); returns its handle. Every
    argument is checked, and the runner started, before the sweep's row is written."""
    planned = plan_study(journal, at, space, objective, direction, **kw)
    launch = planned.launch
    assert launch.base is not None and launch.at is not None
    how = launch.how()
    started = launch.start_runner(start_timeout)
    try:
        sweep_id = journal.open_sweep(launch.base, launch.at, planned.spec, how)
        driver = planned.driver(journal, sweep_id)
        return _handle(
            journal, driver.spec, started, how, launch.workers, out_dir, driver, planned.timeout
        )
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
    driver: Driver,
    timeout: float | None,
) -> StudyHandle:
    base = Path(out_dir) if out_dir is not None else out_dir_for(journal.path)
    target = base / str(spec.sweep)
    target.mkdir(parents=True, exist_ok=True)
    return StudyHandle(journal, spec, runner, how, workers, target, driver, timeout)


def optimize(
    journal: Journal,
    at: int | str,
    space: Mapping[str, sp.Dimension] | Sequence[str] | SpaceFn | str,
    objective: str | None = None,
    direction: str | None = None,
    *,
    progress: bool | None = None,
    **kw: Any,
) -> Study:
    """Run an adaptive sweep from ``at`` and wait for it: ``forks`` trials (40), ``workers`` at
    once, each a fork whose parameters Optuna's ``sampler`` chose from ``space``; ``pruner``
    stops forks whose ``sweep.report``-ed values are hopeless. The value of a trial is the last
    observation of ``objective`` on its fork (or what the fork function returns);
    ``objectives=[...]`` and ``directions=[...]`` for several (see ``Study.pareto``).

    ``space``: ``{name: sweep.Int/Float/Categorical}``, ``NAME=int:LOW:HIGH`` lines, or a
    function of an ``optuna.Trial`` that suggests the parameters (define-by-run: conditional
    parameters), run here before each fork is made. ``sampler``: tpe, random, grid, cmaes,
    nsga2, qmc, with Optuna's defaults and optional settings (``"tpe:n_startup_trials=5"``),
    or an Optuna sampler object; ``pruner`` likewise (none, median, percentile, asha,
    hyperband); ``seed`` seeds a named sampler. ``enqueue``: parameter dicts to run first;
    ``warm_start``: another study (a sweep id, or an ``optuna.Study``) whose complete trials the
    sampler learns from; ``constraints``: bounds like ``["cost<=5"]`` or a function of the
    trial's metrics (Optuna's ``constraints_func``, <= 0 feasible); ``callbacks``: functions
    ``(study, frozen_trial)`` called after each trial, as ``study.optimize`` calls them;
    ``timeout``: seconds for the whole study (no new trial starts after it);
    ``fork_timeout``: seconds for one fork. ``fn``, ``notebook``, ``runner``, ``scheduler``,
    ``concurrency`` and ``max_forks_per_worker`` as for ``sweep.for_agent``."""
    handle = start_optimize(journal, at, space, objective, direction, **kw)
    return handle.wait(show=progress)


def start_resume_optimize(
    journal: Journal,
    sweep_id: int,
    workers: int | None = None,
    start_timeout: float = 60.0,
    *,
    sampler: Any = None,
    space: SpaceFn | str | None = None,
    constraints: Any = None,
    callbacks: Sequence[Callable[[Any, Any], None]] | None = None,
    timeout: float | None = None,
) -> StudyHandle:
    """Start finishing an adaptive sweep in the background (see ``resume_optimize``)."""
    spec = spec_of(journal, sweep_id)
    check_idle(journal, sweep_id)  # a coordinator in another process runs it now
    if spec.kind != "optimize":
        raise InvalidValue(
            f"sweep {sweep_id} is an {spec.kind} sweep; resume it with its own command"
            + (f" (lithify evolve --resume {sweep_id})" if spec.kind == "evolve" else "")
        )
    choice = spec.sampler_choice
    if spec.sampler.startswith(engines.OBJECT + ":"):
        if sampler is None:
            raise InvalidValue(
                f"sweep {sweep_id} ran with an Optuna sampler object ({spec.sampler[7:]}): resume "
                "it from Python, giving the same sampler again: "
                f"sweep.resume_optimize(journal, {sweep_id}, sampler=...)"
            )
        choice = engines.parse(sampler, "sampler", engines.SAMPLERS)
    elif sampler is not None:
        raise InvalidValue(
            f"sweep {sweep_id} runs the {spec.sampler} sampler it was started with; drop sampler="
        )
    space_fn = options.recorded_function(spec, "space_fn", space, "space")
    constraint_fn = None
    if spec.extra.get("constraints"):
        if constraints is not None:
            constraint_fn, _ = options.constraints_of(constraints)
        else:
            constraint_fn = options.recorded_constraints(spec.extra["constraints"])
            if constraint_fn is None:
                raise InvalidValue(
                    f"sweep {sweep_id} weighs constraints from a function: give it again, "
                    f"sweep.resume_optimize(journal, {sweep_id}, constraints=...)"
                )
    study_timeout = options.study_timeout(
        timeout if timeout is not None else spec.extra.get("timeout")
    )
    how, n, started = as_recorded(journal, sweep_id, workers, start_timeout)
    try:
        if how.pop("stopped", None) is not None:  # a stopped study goes on: no longer stopped
            journal.record_how(sweep_id, how)
        driver = Driver(
            journal,
            spec,
            n,
            space_fn=space_fn,
            sampler=choice,
            constraints=constraint_fn,
            callbacks=callbacks or (),
        )
        return _handle(journal, spec, started, how, n, None, driver, study_timeout)
    except BaseException:
        started.close()
        raise


def resume_optimize(
    journal: Journal,
    sweep_id: int,
    workers: int | None = None,
    progress: bool | None = None,
    start_timeout: float = 60.0,
    **kw: Any,
) -> Study:
    """Finish an adaptive sweep whose coordinator died (or was cancelled): the recorded asks
    and tells are replayed on the study's sampler (which ends where the killed one was), its
    unfinished trials run again on their forks (what they wrote is replayed, not appended
    again: see ``workbench.replay``), then new trials until it has its ``forks``. A study
    started with a sampler object, a space function or constraints from a function that
    cannot be imported by name takes them again (``sampler=``, ``space=``, ``constraints=``);
    ``callbacks=`` and ``timeout=`` apply to this run."""
    return start_resume_optimize(journal, sweep_id, workers, start_timeout, **kw).wait(
        show=progress
    )


__all__ = [
    "StudyHandle",
    "optimize",
    "resume_optimize",
    "start_optimize",
    "start_resume_optimize",
]
