"""The results commands: the matrix of every observation and the results views."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from .. import charts
from ..charts.base import cannot
from ..errors import InvalidValue
from ..matrix import export
from .app import command, console, emit, matrix_rows, open_journal, options


@command("Journal")
def matrix(
    ctx: typer.Context,
    fmt: str = typer.Option("csv", "--format", help="csv, parquet or json."),
    wide: bool = typer.Option(False, "--wide", help="One row per branch, one column per metric."),
    summary: str = typer.Option(
        "last", "--summary", help="With --wide: last, first, max, min, mean or count."
    ),
    sweep: int = typer.Option(None, "--sweep", help="Only the forks of this sweep."),
    partial: bool = typer.Option(
        False,
        "--partial",
        help="With --wide: keep the values of forks that run or stopped short (pruned, "
        "failed, cancelled); without it they are empty (the state column says why).",
    ),
    output: Path = typer.Option(
        None, "-o", "--output", help="Write to this file instead of stdout."
    ),
) -> None:
    """The results matrix: every observation joined to its branch's merged parameters (with
    --wide, one row per branch with its state)."""
    opts = options(ctx)
    if fmt not in ("csv", "parquet", "json"):
        raise InvalidValue(f"--format must be csv, parquet or json, not {fmt!r}")
    if fmt == "parquet" and output is None:
        raise InvalidValue("parquet is binary: pass -o FILE.parquet")
    if partial and not wide:
        raise InvalidValue("--partial is for --wide (the long form has every observation)")
    with open_journal(opts) as j:
        df = j.matrix(wide=wide, summary=summary, sweep=sweep, partial=partial)
    if output is not None:
        export(df, output.with_suffix(f".{fmt}") if output.suffix.lower() != f".{fmt}" else output)
        if opts.json:
            emit(opts, {"path": str(output), "rows": len(df), "columns": df.columns}, lambda: None)
    elif opts.json or fmt == "json":
        sys.stdout.write(json.dumps(matrix_rows(df), default=str) + "\n")
    else:
        sys.stdout.write(df.write_csv())


def _ids(text: str | None, option: str) -> tuple[int, ...] | None:
    if not text:
        return None
    try:
        return tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise InvalidValue(
            f"{option} takes ids separated by commas (1,2,5), not {text!r}"
        ) from None


@command("Journal")
def chart(
    ctx: typer.Context,
    kind: str = typer.Option(
        "metric",
        "--kind",
        help="The view: metric (a metric against a parameter), history (by fork or trial, "
        "best so far), importance (fANOVA), slice, contour, parallel, steps (learning curves), "
        "pareto (two metrics), timeline (each fork from start to end, by state), rank (two "
        "parameters, each fork coloured by its rank) or edf (the distribution of a metric).",
    ),
    x: str | None = typer.Option(
        None, "--x", help="Parameter on the x axis, metric or rank (default: the agent's)."
    ),
    y: str | None = typer.Option(
        None, "--y", help="Metric on the y axis (default: the study's objective, the agent's)."
    ),
    y2: str | None = typer.Option(None, "--y2", help="pareto: the second metric."),
    color: str = typer.Option(
        None,
        "--color",
        help="Parameter that colors separate lines (default: the journal's agent's, if any).",
    ),
    facet: str = typer.Option(
        None, "--facet", help="metric: a parameter that splits the chart into columns."
    ),
    params: str = typer.Option(
        None,
        "--params",
        help="Parameters to draw, A,B (slice, parallel, importance; contour, rank: exactly two).",
    ),
    log_x: bool = typer.Option(
        None, "--log-x/--no-log-x", help="Log scale on x (default: when it spans a factor of 20)."
    ),
    direction: str = typer.Option(
        None, "--direction", help="maximize or minimize y (default: the study's, else maximize)."
    ),
    sweep: int = typer.Option(None, "--sweep", help="Only the forks of this sweep."),
    sweeps: str = typer.Option(None, "--sweeps", help="Several sweeps overlaid: A,B."),
    branches: str = typer.Option(None, "--branches", help="Only these branches: 1,2,5."),
    where: str = typer.Option(
        None,
        "--where",
        help="Only the branches a filter selects: 'budget >= 1000 and recall > 0.5'.",
    ),
    partial: bool = typer.Option(
        False,
        "--partial",
        help="Also draw the last values of forks that run or stopped short (pruned, failed).",
    ),
    theme: str = typer.Option("light", "--theme", help="light or dark."),
    output: Path = typer.Option(
        ..., "-o", "--output", help="Image to write: .png, .svg, .html or .json (the spec)."
    ),
) -> None:
    """Draw a results view of a sweep, branches or a filter's branches to a file; a view that
    cannot draw says why in one line."""
    opts = options(ctx)
    if output.suffix.lower() not in (".png", ".svg", ".html", ".json"):
        raise InvalidValue(f"-o {output}: write a .png, .svg, .html or .json file")
    if not output.resolve().parent.is_dir():
        raise InvalidValue(f"-o {output}: the folder {output.parent} does not exist; create it")
    if output.is_dir():
        raise InvalidValue(f"-o {output} is a folder; give a file name")
    if facet is not None and kind != "metric":
        raise InvalidValue("--facet splits the metric view; drop it or use --kind metric")
    selection = charts.Selection(
        sweep=sweep,
        sweeps=_ids(sweeps, "--sweeps"),
        branches=_ids(branches, "--branches"),
        where=where,
        partial=partial,
    )
    with open_journal(opts) as j:
        drawn = charts.view(
            j,
            kind,
            selection,
            x=x,
            y=y,
            y2=y2,
            color=color,
            facet=facet,
            params=[p for p in params.split(",") if p] if params else None,
            log_x=log_x,
            direction=direction,
            theme=theme,
        )
    if drawn.meta.get("waiting"):  # no fork has a value yet: a file would show only that
        raise cannot(kind, drawn.meta["waiting"])
    if output.suffix.lower() == ".json":
        output.write_text(json.dumps(drawn.spec(), indent=1) + "\n")
    else:
        charts.save(drawn.chart, output)
    emit(
        opts,
        {"path": str(output), "kind": kind, "branches": drawn.meta["forks"]},
        lambda: console().print(f"wrote {output}"),
    )
