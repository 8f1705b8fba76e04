"""``lithify optimize``: an adaptive sweep from an event (Optuna chooses, prunes); ``--resume``
finishes one whose coordinator died. What it runs is ``sweep.start_optimize``'s decision."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from .. import sweep as sweeps
from ..errors import InvalidValue
from ..sweep.options import parse_enqueue
from .app import (
    CONCURRENCY,
    MAX_FORKS_PER_WORKER,
    app,
    command,
    console,
    emit,
    open_journal,
    options,
)

study_app = typer.Typer(
    help="Studies: export one to an Optuna storage (for optuna-dashboard and Optuna's tools).",
    no_args_is_help=True,
)
app.add_typer(study_app, name="study", rich_help_panel="Sweeps")


@study_app.command("export")
def study_export(
    ctx: typer.Context,
    sweep_id: int = typer.Argument(..., help="The study (a sweep id: see `lithify sweeps`)."),
    storage: str = typer.Option(
        ..., "--storage", help="An Optuna storage URL: sqlite:///optuna.db, postgresql://..."
    ),
    name: str = typer.Option(
        None, "--name", help="The study's name there (default: lithify-sweep-ID)."
    ),
    replace: bool = typer.Option(
        False, "--replace", help="Replace a study of that name the storage already holds."
    ),
) -> None:
    """Copy a study into an Optuna storage as an Optuna study (trials, states, parameters,
    values, intermediate values, constraints, user attributes), so optuna-dashboard and any
    Optuna tool read it: optuna-dashboard sqlite:///optuna.db."""
    opts = options(ctx)
    with open_journal(opts) as j:
        exported = sweeps.export_study(j, sweep_id, storage, name, replace)
        n = len(sweeps.result(j, sweep_id).trials)
    emit(
        opts,
        {"sweep": sweep_id, "storage": storage, "study": exported, "trials": n},
        lambda: console().print(
            f"study {sweep_id}: {n} trials exported to {storage} as {exported}"
        ),
    )


def _emit(opts: Any, study: Any) -> None:
    emit(opts, study.to_json(), lambda: console().print(str(study), markup=False))
    if not study.completed:
        raise typer.Exit(1)  # no trial produced a value: nothing was learned


@command("Sweeps")
def optimize(
    ctx: typer.Context,
    at: str = typer.Option(
        None, "--at", help="Fork every trial at this event: a seq or a ref (main@191, a label)."
    ),
    space: list[str] = typer.Option(
        [],
        "--space",
        help="NAME=int:LOW:HIGH[:log], NAME=float:LOW:HIGH[:log][:step=X] or NAME=cat:A,B,... "
        "(repeat per parameter); or one module:function of an optuna.Trial that suggests the "
        "parameters (define-by-run).",
    ),
    objective: list[str] = typer.Option(
        [], "--objective", help="The metric to optimize (repeat for several: a Pareto front)."
    ),
    direction: list[str] = typer.Option(
        [], "--direction", help="maximize or minimize, one per --objective (default maximize)."
    ),
    forks: int = typer.Option(40, "--forks", help="Trials to run."),
    workers: int = typer.Option(
        None, "--workers", help="Trials at once (default: 4, or the cores here if fewer)."
    ),
    sampler: str = typer.Option(
        "tpe",
        "--sampler",
        help="Optuna's sampler: tpe, random, grid, cmaes, nsga2 or qmc, with Optuna's defaults; "
        "settings after a colon (tpe:n_startup_trials=5,multivariate=true).",
    ),
    pruner: str = typer.Option(
        "median",
        "--pruner",
        help="Optuna's pruner: none, median, percentile, asha or hyperband, with Optuna's "
        "defaults; settings after a colon (median:n_startup_trials=5,n_warmup_steps=2). Forks "
        "report with sweep.report.",
    ),
    enqueue: list[str] = typer.Option(
        [],
        "--enqueue",
        help="A trial to run first: NAME=VALUE,NAME=VALUE (repeat; names left out are sampled).",
    ),
    warm_start: int = typer.Option(
        None,
        "--warm-start",
        help="A study (sweep id) whose complete trials the sampler learns from first.",
    ),
    constraint: list[str] = typer.Option(
        [],
        "--constraint",
        help="A feasibility bound on an observed metric: METRIC<=NUMBER or METRIC>=NUMBER "
        "(repeat); the best trial is the best feasible one.",
    ),
    seed: int = typer.Option(None, "--seed", help="Seed the sampler (repeatable studies)."),
    fn: str = typer.Option(
        None, "--fn", help="The fork function as module:function (default: the agent's)."
    ),
    notebook: Path = typer.Option(
        None, "--notebook", help="Template notebook to run per trial (papermill)."
    ),
    runner: str = typer.Option(
        None,
        "--runner",
        help="pool (the default for a function), process, papermill, warm or dask.",
    ),
    scheduler: str = typer.Option(
        None, "--scheduler", help="With --runner dask: the scheduler's address."
    ),
    timeout: float = typer.Option(
        None,
        "--timeout",
        help="Seconds for the whole study, as Optuna's timeout: no trial starts after it (the "
        "seconds one trial may run are --fork-timeout).",
    ),
    fork_timeout: float = typer.Option(
        None, "--fork-timeout", help="Seconds one trial may run (then it fails)."
    ),
    concurrency: int = CONCURRENCY,
    max_forks_per_worker: int = MAX_FORKS_PER_WORKER,
    branch: str = typer.Option(
        None, "--branch", help="Branch to fork (id or name; default: main)."
    ),
    resume: int = typer.Option(
        None, "--resume", help="Finish this study (a sweep id) where it stopped."
    ),
) -> None:
    """Let the sweep choose: Optuna picks each fork's parameters from the results so far and
    prunes hopeless forks; every trial starts from the same event. Prints the study (JSON: its
    trials, best or Pareto front). Exit 1 when no trial produced a value."""
    opts = options(ctx)
    if resume is not None:
        given = [
            n
            for n, v in (
                ("--at", at),
                ("--space", space),
                ("--objective", objective),
                ("--fn", fn),
                ("--notebook", notebook),
                ("--runner", runner),
                ("--enqueue", enqueue),
                ("--warm-start", warm_start),
                ("--constraint", constraint),
                ("--fork-timeout", fork_timeout),
            )
            if v
        ]
        if given:
            raise InvalidValue(
                f"--resume finishes a study as it was started: drop {', '.join(given)}"
            )
        with open_journal(opts, write=True) as j:
            study = sweeps.resume_optimize(
                j, resume, workers=workers, progress=not opts.json, timeout=timeout
            )
        _emit(opts, study)
        return
    if at is None:
        raise InvalidValue("where do the trials fork? pass --at SEQ or a ref (or --resume ID)")
    if not space:
        raise InvalidValue("what to search? pass --space NAME=int:LOW:HIGH (repeat per parameter)")
    if direction and len(direction) != max(1, len(objective)):
        raise InvalidValue("give one --direction per --objective")
    if len(space) == 1 and "=" not in space[0]:
        chosen: Any = space[0]  # a define-by-run function, module:function
    else:
        chosen = list(space)
    with open_journal(opts, write=True) as j:
        handle = sweeps.start_optimize(
            j,
            at,
            chosen,
            objective=objective[0] if len(objective) == 1 else None,
            direction=direction[0] if len(direction) == 1 and len(objective) <= 1 else None,
            objectives=list(objective) if len(objective) > 1 else None,
            directions=list(direction) if len(objective) > 1 and direction else None,
            forks=forks,
            workers=workers,
            sampler=sampler,
            pruner=pruner,
            seed=seed,
            fn=fn,
            notebook=notebook,
            runner=runner,
            branch=branch,
            timeout=timeout,
            fork_timeout=fork_timeout,
            scheduler=scheduler,
            enqueue=parse_enqueue(enqueue) or None,
            warm_start=warm_start,
            constraints=list(constraint) or None,
            concurrency=concurrency,
            max_forks_per_worker=max_forks_per_worker,
        )
        study = handle.wait(show=not opts.json)
    _emit(opts, study)


@command("Sweeps")
def evolve(
    ctx: typer.Context,
    at: str = typer.Option(
        None, "--at", help="Fork the first generation at this event: a seq or a ref."
    ),
    space: list[str] = typer.Option(
        [], "--space", help="NAME=int:LOW:HIGH[:log], NAME=float:..., NAME=cat:A,B (repeat)."
    ),
    objective: str = typer.Option(None, "--objective", help="The metric to rank members by."),
    direction: str = typer.Option("maximize", "--direction", help="maximize or minimize."),
    population: int = typer.Option(8, "--population", help="Members per generation."),
    generations: int = typer.Option(5, "--generations", help="Generations to run."),
    interval: int = typer.Option(
        3, "--interval", help="Reports (sweep.report) a member makes per generation."
    ),
    quantile: float = typer.Option(
        0.25, "--quantile", help="Share of each generation replaced by forks of the leaders."
    ),
    seed: int = typer.Option(None, "--seed", help="Seed the draws and perturbations."),
    fn: str = typer.Option(None, "--fn", help="The fork function as module:function."),
    notebook: Path = typer.Option(None, "--notebook", help="Template notebook per member."),
    runner: str = typer.Option(
        None,
        "--runner",
        help="pool (the default for a function), process, papermill, warm or dask.",
    ),
    workers: int = typer.Option(None, "--workers", help="Members run at once."),
    branch: str = typer.Option(None, "--branch", help="Branch to fork (default: main)."),
    fork_timeout: float = typer.Option(
        None, "--fork-timeout", help="Seconds one member's run may take (then it fails)."
    ),
    concurrency: int = CONCURRENCY,
    max_forks_per_worker: int = MAX_FORKS_PER_WORKER,
    resume: int = typer.Option(
        None,
        "--resume",
        help="Finish this evolution (a sweep id) where its coordinator stopped; paused members "
        "stay paused.",
    ),
) -> None:
    """Population-based forks: each generation's worst members are replaced by forks of the
    leaders' latest events with perturbed parameters (PBT by forking). Prints the study."""
    opts = options(ctx)
    if resume is not None:
        given = [n for n, v in (("--at", at), ("--space", space), ("--objective", objective)) if v]
        if given:
            raise InvalidValue(
                f"--resume finishes an evolution as it was started: drop {', '.join(given)}"
            )
        with open_journal(opts, write=True) as j:
            study = sweeps.evolve(j, resume=resume, workers=workers, progress=not opts.json)
        _emit(opts, study)
        return
    if at is None:
        raise InvalidValue("where does the first generation fork? pass --at (or --resume ID)")
    if not space:
        raise InvalidValue("what to search? pass --space NAME=int:LOW:HIGH (repeat per parameter)")
    with open_journal(opts, write=True) as j:
        study = sweeps.evolve(
            j,
            at,
            list(space),
            objective,
            direction,
            population=population,
            generations=generations,
            interval=interval,
            quantile=quantile,
            seed=seed,
            fn=fn,
            notebook=notebook,
            runner=runner,
            workers=workers,
            branch=branch,
            fork_timeout=fork_timeout,
            concurrency=concurrency,
            max_forks_per_worker=max_forks_per_worker,
            progress=not opts.json,
        )
    _emit(opts, study)
