"""The generic sweep commands: sweep, sweeps, sweep-resume. What a sweep runs is decided by
``workbench.sweep.for_agent`` (the one rule every client uses); this module parses and prints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from .. import plugins
from .. import sweep as sweeps
from ..errors import InvalidValue
from ..matrix import long_rows
from .app import (
    CONCURRENCY,
    MAX_FORKS_PER_WORKER,
    agent_of,
    command,
    console,
    emit,
    open_journal,
    options,
)


def _fork_timeout(timeout: float | None, fork_timeout: float | None) -> float | None:
    if timeout is None:
        return fork_timeout
    if fork_timeout is not None:
        raise InvalidValue("give --fork-timeout; --timeout is its old name")
    typer.echo("note: --timeout is now --fork-timeout (seconds a fork may run)", err=True)
    return timeout


def _shorthands(extra: list[str], agent: plugins.Agent | None) -> dict[str, str]:
    """``--NAME V1,V2`` options the journal's agent adds (its ``shorthands``), as grid lines
    ``PARAM=V1,V2``; anything else left on the command line is an unknown option."""
    known = dict(agent.shorthands) if agent else {}
    lines: dict[str, str] = {}
    i = 0
    while i < len(extra):
        tok = extra[i]
        name, eq, value = tok.partition("=")
        flag = name[2:] if name.startswith("--") else None
        if flag is None or flag not in known:
            offered = ", ".join(f"--{k}" for k in known) or "none"
            who = f"the journal's agent ({agent.name})" if agent else "no agent"
            raise InvalidValue(
                f"no such option: {tok} (lithify sweep --help lists the options; shorthands "
                f"{who} adds: {offered})"
            )
        if not eq:
            if i + 1 >= len(extra):
                raise InvalidValue(f"--{flag} takes values, like --{flag} 300,600,1200")
            value = extra[i + 1]
            i += 1
        lines[known[flag]] = value
        i += 1
    return lines


def _grid(params: list[str], shorthand: dict[str, str]) -> str | None:
    grid = sweeps.parse_grid("\n".join(params)) if params else {}
    for param in shorthand:
        if param in grid:
            raise InvalidValue(
                f"a shorthand and --param {param}=... both set {param}; give one of them"
            )
    lines = [*params, *(f"{k}={v}" for k, v in shorthand.items())]
    return "\n".join(lines) if lines else None


def _emit(opts: Any, result: Any, rows: list[dict[str, Any]]) -> None:
    emit(opts, rows, lambda: console().print(str(result), markup=False))
    if not result.ok:
        raise typer.Exit(1)


@command("Sweeps", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def sweep(
    ctx: typer.Context,
    at: str = typer.Option(
        ..., "--at", help="Fork every run at this event: a seq or a ref (main@191, a label)."
    ),
    param: list[str] = typer.Option([], "--param", help="NAME=V1,V2,... (repeat for a grid)."),
    seeds: int = typer.Option(
        None, "--seeds", help="Add a seed parameter 0..N-1 to every grid point."
    ),
    fn: str = typer.Option(
        None, "--fn", help="The fork function as module:function (default: the agent's)."
    ),
    notebook: Path = typer.Option(
        None, "--notebook", help="Template notebook to run per fork (papermill)."
    ),
    runner: str = typer.Option(
        None,
        "--runner",
        help="pool, process, papermill, warm or dask (default: papermill with --notebook, else "
        "pool with a fork function, else papermill with the agent's template).",
    ),
    scheduler: str = typer.Option(
        None,
        "--scheduler",
        help="With --runner dask: the scheduler's address (tcp://host:8786; the journal must be "
        "a PostgreSQL URL); default: a LocalCluster of --workers processes here.",
    ),
    workers: int = typer.Option(
        None, "--workers", help="Forks run in parallel (default: 4, or the cores here if fewer)."
    ),
    fork_timeout: float = typer.Option(
        None, "--fork-timeout", help="Seconds a fork may run (then it fails)."
    ),
    concurrency: int = CONCURRENCY,
    max_forks_per_worker: int = MAX_FORKS_PER_WORKER,
    timeout: float = typer.Option(
        None, "--timeout", help="Seconds a fork may run: the old name of --fork-timeout."
    ),
    branch: str = typer.Option(
        None, "--branch", help="Branch to fork (id or name; default: main)."
    ),
) -> None:
    """Fork one branch per grid point at an event, run them in parallel, print the matrix rows.
    Without --param, the journal's agent's default grid; an agent may add shorthands (the
    bundled ones: --budgets V1,V2 for --param budget=V1,V2)."""
    opts = options(ctx)
    with open_journal(opts, write=True) as j:
        grid = _grid(param, _shorthands(list(ctx.args), agent_of(j)))
        launch = sweeps.for_agent(
            j,
            at,
            grid=grid,
            runner=runner,
            fn=fn,
            notebook=notebook,
            seeds=seeds,
            branch=branch,
            workers=workers,
            fork_timeout=_fork_timeout(timeout, fork_timeout),
            scheduler=scheduler,
            concurrency=concurrency,
            max_forks_per_worker=max_forks_per_worker,
        )
        handle = launch.start()
        result = handle.wait(show=not opts.json)
        rows = long_rows(j, sweep=handle.plan.id)  # the matrix's rows, read without polars
    _emit(opts, result, rows)


@command("Sweeps", "sweeps")
def sweeps_cmd(ctx: typer.Context) -> None:
    """Every recorded sweep: base, fork point, grid and how many forks finished."""
    opts = options(ctx)
    with open_journal(opts) as j:
        rows: list[dict[str, Any]] = []
        for s in j.sweeps():
            runs = {r.branch: r.status for r in j.runs(s.id)}
            counts = {
                st: sum(v == st for v in runs.values())
                for st in ("finished", "failed", "pruned", "running", "cancelled")
            }
            counts["pending"] = len(s.branches) - sum(counts.values())
            rows.append(
                {
                    "id": s.id,
                    "kind": s.spec.get("kind", "grid"),
                    "base": s.base,
                    "at": s.at,
                    "grid": s.spec.get("grid"),
                    "space": s.spec.get("space"),
                    "objectives": s.spec.get("objectives"),
                    "seeds": s.spec.get("seeds"),
                    "notebook": s.spec.get("notebook") or s.how.get("notebook"),
                    "fn": s.spec.get("fn") or s.how.get("fn"),
                    "runner": s.how.get("runner"),
                    "workers": s.how.get("workers"),
                    "timeout": s.how.get("timeout"),
                    "forks": len(s.branches),
                    "branches": s.branches,
                    **counts,
                }
            )

    def human() -> None:
        from rich.table import Table

        t = Table(
            "sweep",
            "kind",
            "base",
            "at",
            "grid / space",
            "forks",
            "finished",
            "failed",
            "pruned",
            "other",
        )
        for r in rows:
            what = r["grid"] if r["kind"] == "grid" else r["space"]
            if r["kind"] != "grid" and r["space"]:
                what = {
                    k: v.get("choices") or [v.get("low"), v.get("high")] for k, v in what.items()
                }
            t.add_row(
                str(r["id"]),
                r["kind"],
                str(r["base"]),
                str(r["at"]),
                json.dumps(what),
                str(r["forks"]),
                str(r["finished"]),
                str(r["failed"]),
                str(r["pruned"]),
                str(r["forks"] - r["finished"] - r["failed"] - r["pruned"]),
            )
        console().print(t)

    emit(opts, rows, human)


@command("Sweeps", "sweep-resume")
def sweep_resume(
    ctx: typer.Context,
    sweep_id: int = typer.Argument(..., help="The sweep to finish (see `lithify sweeps`)."),
    workers: int | None = typer.Option(
        None, "--workers", help="Forks run in parallel (default: as the sweep last ran)."
    ),
    runner: str | None = typer.Option(
        None,
        "--runner",
        help="pool, process, papermill, warm or dask (default: as the sweep last ran).",
    ),
    scheduler: str | None = typer.Option(
        None, "--scheduler", help="With --runner dask: the scheduler's address."
    ),
    only_failed: bool = typer.Option(False, "--failed", help="Rerun only the failed forks."),
) -> None:
    """Run the forks of a sweep that have not finished (after a crash, a cancel or a fix), the
    way the sweep last ran unless told otherwise."""
    opts = options(ctx)
    if runner is not None or workers is not None:
        sweeps.check_options(runner or "process", workers or 1, None)
    with open_journal(opts, write=True) as j:
        plan = sweeps.load(j, sweep_id)
        result = sweeps.run(
            plan,
            workers=workers,
            runner=runner,
            only="failed" if only_failed else None,
            progress=not opts.json,
            scheduler=scheduler,
        )
        rows = long_rows(j, sweep=sweep_id)
    _emit(opts, result, rows)
