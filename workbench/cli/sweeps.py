"""The generic sweep commands: sweep, sweeps, sweep-resume. The fork function, template and
default grid come from the journal's agent unless given (--fn, --notebook, --param)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from .. import sweep as sweeps
from ..errors import InvalidValue
from .app import agent_of, command, console, emit, matrix_rows, open_journal, options, point


def _ints(text: str, what: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InvalidValue(f"{what} takes comma-separated integers, like 300,600,1200") from None
    if not values:
        raise InvalidValue(f"{what} needs at least one value, like 300,600,1200")
    return values


def _grid(
    params: list[str], budgets: str | None, default: dict[str, list[Any]]
) -> dict[str, list[Any]]:
    grid = sweeps.parse_grid("\n".join(params)) if params else {}
    if budgets is not None:
        if "budget" in grid:
            raise InvalidValue(
                "--budgets and --param budget=... both set the budgets; give one of them"
            )
        grid["budget"] = _ints(budgets, "--budgets")
    if not grid:
        if not default:
            raise InvalidValue(
                "what to sweep? give --param NAME=V1,V2,... (the journal's agent names no grid)"
            )
        grid = {k: list(v) for k, v in default.items()}
    return grid


def _emit(opts: Any, result: Any, df: Any) -> None:
    emit(opts, matrix_rows(df), lambda: console().print(str(result), markup=False))
    if not result.ok:
        raise typer.Exit(1)


@command("Sweeps")
def sweep(
    ctx: typer.Context,
    at: str = typer.Option(
        ..., "--at", help="Fork every run at this event: a seq or a ref (main@191, a label)."
    ),
    param: list[str] = typer.Option([], "--param", help="NAME=V1,V2,... (repeat for a grid)."),
    budgets: str = typer.Option(None, "--budgets", help="Shorthand for --param budget=V1,V2,..."),
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
        help="papermill, warm, process or dask (default: papermill with --notebook, else process).",
    ),
    scheduler: str = typer.Option(
        None,
        "--scheduler",
        help="With --runner dask: the scheduler's address (tcp://host:8786; the journal must be "
        "a PostgreSQL URL); default: a LocalCluster of --workers processes here.",
    ),
    workers: int = typer.Option(4, "--workers", help="Forks run in parallel."),
    timeout: float = typer.Option(None, "--timeout", help="Seconds a fork may run."),
    branch: str = typer.Option(
        None, "--branch", help="Branch to fork (id or name; default: main)."
    ),
) -> None:
    """Fork one branch per grid point at an event, run them in parallel, print the matrix rows."""
    opts = options(ctx)
    chosen = runner or ("papermill" if notebook else "process")
    sweeps.check_options(chosen, workers, timeout)
    if scheduler is not None and chosen != "dask":
        raise InvalidValue("--scheduler is for --runner dask")
    # dask runs the agent's fork function unless given a template
    templated = chosen in ("papermill", "warm") or (chosen == "dask" and notebook is not None)
    with open_journal(opts, write=True) as j:
        agent = agent_of(j)
        grid = _grid(param, budgets, dict(agent.grid) if agent else {})
        template: str | Path | None = notebook or (
            agent.template if templated and agent and agent.template else None
        )
        if templated and template is None:
            raise InvalidValue(f"--runner {chosen} runs a template notebook: pass --notebook")
        function = None if template is not None else (fn or (agent.fork if agent else None))
        if template is None and function is None:
            raise InvalidValue(
                "which fork function? pass --fn module:function (the journal's agent names none)"
            )
        base_id, seq = point(j, at, branch)
        plan = sweeps.plan(j, base_id, seq, grid, seeds=seeds, notebook=template, fn=function)
        result = sweeps.run(
            plan,
            workers=workers,
            runner=chosen,
            timeout=timeout,
            progress=not opts.json,
            scheduler=scheduler,
        )
        df = j.matrix(sweep=plan.id)
    _emit(opts, result, df)


@command("Sweeps", "sweeps")
def sweeps_cmd(ctx: typer.Context) -> None:
    """Every recorded sweep: base, fork point, grid and how many forks finished."""
    opts = options(ctx)
    with open_journal(opts) as j:
        rows: list[dict[str, Any]] = []
        for s in j.sweeps():
            runs = {r.branch: r.status for r in j.storage.runs(s.id)}
            counts = {
                st: sum(v == st for v in runs.values())
                for st in ("finished", "failed", "running", "cancelled")
            }
            counts["pending"] = len(s.branches) - sum(counts.values())
            rows.append(
                {
                    "id": s.id,
                    "base": s.base,
                    "at": s.at,
                    "grid": s.spec.get("grid"),
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

        t = Table("sweep", "base", "at", "grid", "forks", "finished", "failed", "other")
        for r in rows:
            t.add_row(
                str(r["id"]),
                str(r["base"]),
                str(r["at"]),
                json.dumps(r["grid"]),
                str(r["forks"]),
                str(r["finished"]),
                str(r["failed"]),
                str(r["forks"] - r["finished"] - r["failed"]),
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
        help="papermill, warm, process or dask (default: as the sweep last ran).",
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
        df = j.matrix(sweep=sweep_id)
    _emit(opts, result, df)
