"""The ``contour`` view: a metric over two parameters as a heat map. A parameter with few
values (a grid's) gets a cell per value; one with many (a study's) is cut into bins on its own
scale (log when it spans a factor of 20); each cell shows the mean, the count and its best fork,
which a click picks."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..errors import InvalidValue
from .base import (
    NUMBER,
    bounds,
    cannot,
    is_log,
    is_number,
    layered,
    pick,
    themed,
    tooltips,
    values,
    varied,
    with_notes,
)
from .data import ORDER

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

CELLS = 12  # a parameter with at most this many values gets a cell per value
BINS = 10  # else this many bins


def pair_of(table: pl.DataFrame, y: str, params: list[str], given: list[str] | None) -> list[str]:
    """The two parameters a contour is drawn over: the ones given, else the first two that
    vary."""
    import polars as pl

    if given:
        if len(given) != 2:
            raise InvalidValue(f"a contour is over two parameters, not {len(given)}: {given}")
        for p in given:
            if p not in table.columns:
                raise InvalidValue(f"there is no parameter {p!r}; the parameters are {params}")
        return list(given)
    return varied(table.filter(pl.col(y).is_not_null()), params)[:2]


def contour_why_not(
    table: pl.DataFrame, y: str | None, params: list[str], given: list[str] | None = None
) -> str | None:
    """Why ``contour`` cannot draw these rows (None: it can)."""
    import polars as pl

    if y is None or y not in table.columns:
        return f"no metric {y!r} to draw" if y else "pick a metric"
    pair = pair_of(table, y, params, given)
    if len(pair) < 2:
        which = f"only {pair[0]} varies" if pair else "no parameter varies"
        return f"contour needs two parameters that vary; {which} in this selection"
    n = table.filter(pl.col(y).is_not_null()).drop_nulls(pair).height
    if n < 3:
        return f"contour needs three forks with {y}, {pair[0]} and {pair[1]}; there are {n}"
    return None


def _cells(rows: pl.DataFrame, p: str, tag: str) -> tuple[pl.DataFrame, Any, list[str]]:
    """``rows`` with the cell ``p`` falls in (a value, or a bin's bounds), the encoding of that
    axis and the columns that name a cell."""
    import altair as alt
    import polars as pl

    distinct = rows[p].n_unique()
    if not is_number(rows, p) or distinct <= CELLS:
        order = sorted(rows[p].unique().to_list(), key=lambda v: (isinstance(v, str), v))
        enc = (
            alt.X(f"{p}:O", title=p, sort=order, axis=alt.Axis(labelAngle=0))
            if tag == "x"
            else alt.Y(f"{p}:O", title=p, sort=list(reversed(order)))
        )
        return rows, enc, [p]
    lo, hi = bounds(rows[p])
    log = is_log(rows, p)
    a, b = (math.log10(lo), math.log10(hi)) if log else (lo, hi)
    edges = [a + (b - a) * i / BINS for i in range(BINS + 1)]
    if log:
        edges = [10**e for e in edges]
    index = pl.col(p).cast(pl.Float64)
    if log:
        index = index.log10()
    step = (b - a) / BINS
    cell = ((index - a) / step).floor().clip(0, BINS - 1).cast(pl.Int64)
    edges_of = pl.DataFrame(
        {f"_{tag}_bin": list(range(BINS)), f"_{tag}_lo": edges[:-1], f"_{tag}_hi": edges[1:]},
        schema={f"_{tag}_bin": pl.Int64, f"_{tag}_lo": pl.Float64, f"_{tag}_hi": pl.Float64},
    )
    rows = rows.with_columns(cell.alias(f"_{tag}_bin")).join(edges_of, on=f"_{tag}_bin", how="left")
    scale = alt.Scale(type="log" if log else "linear", zero=False, nice=False)
    enc = (
        alt.X(f"_{tag}_lo:Q", title=p, scale=scale)
        if tag == "x"
        else alt.Y(f"_{tag}_lo:Q", title=p, scale=scale)
    )
    return rows, enc, [f"_{tag}_bin", f"_{tag}_lo", f"_{tag}_hi"]


def contour(
    table: pl.DataFrame,
    y: str,
    params: list[str],
    *,
    pair: list[str] | None = None,
    direction: str = "maximize",
    title: str | None = None,
    width: int = 380,
    height: int = 300,
    theme: str = "light",
) -> alt.LayerChart:
    """The mean of ``y`` in each cell of two parameters (``pair``, else the first two that
    vary), each cell's best fork (by ``direction``) in its tooltip and picked by a click; a
    study's forks drawn over the bins as points."""
    import altair as alt
    import polars as pl

    why = contour_why_not(table, y, params, pair)
    if why:
        raise cannot("contour", why)
    a, b = pair_of(table, y, params, pair)
    rows = table.filter(pl.col(y).is_not_null()).drop_nulls([a, b])
    rows, x_enc, x_keys = _cells(rows, a, "x")
    rows, y_enc, y_keys = _cells(rows, b, "y")
    keys = [*x_keys, *y_keys]
    best = pl.col(y).arg_max() if direction == "maximize" else pl.col(y).arg_min()
    grid = (
        rows.group_by(keys, maintain_order=True)
        .agg(
            pl.col(y).mean().alias("mean"),
            pl.len().alias("n"),
            pl.col("branch").gather(best).first().alias("branch"),
            pl.col(y).gather(best).first().alias("best"),
        )
        .sort(keys)
    )
    enc: dict[str, Any] = {"x": x_enc, "y": y_enc}
    if "_x_hi" in grid.columns:
        enc["x2"] = "_x_hi:Q"
    if "_y_hi" in grid.columns:
        enc["y2"] = "_y_hi:Q"
    shown = [k for k in keys if not k.startswith("_")]
    for tag, p in (("x", a), ("y", b)):
        if f"_{tag}_lo" in grid.columns:
            grid = grid.with_columns(
                pl.format(
                    "{} … {}",
                    pl.col(f"_{tag}_lo").round_sig_figs(3),
                    pl.col(f"_{tag}_hi").round_sig_figs(3),
                ).alias(p)
            )
            shown.append(p)
    cells = (
        alt.Chart(values(grid))
        .mark_rect()
        .encode(
            color=alt.Color("mean:Q", title=f"mean {y}", scale=alt.Scale(scheme="viridis")),
            tooltip=[
                *tooltips(grid, shown),
                alt.Tooltip("mean:Q", title=f"mean {y}", format=NUMBER),
                alt.Tooltip("n:Q"),
                alt.Tooltip("branch:N", title="best fork"),
                alt.Tooltip("best:Q", title=f"its {y}", format=NUMBER),
            ],
            **enc,
        )
        .add_params(pick())
    )
    layers: list[Any] = [cells]
    if len(keys) > 2:  # binned: the forks themselves, where they are
        points = rows.select(
            with_notes(rows, ["branch", a, b, y, *([ORDER] if ORDER in rows.columns else [])])
        )
        px = alt.X(f"{a}:Q", scale=x_enc.scale) if "_x_lo" in grid.columns else alt.X(f"{a}:O")
        py = alt.Y(f"{b}:Q", scale=y_enc.scale) if "_y_lo" in grid.columns else alt.Y(f"{b}:O")
        layers.append(
            alt.Chart(values(points))
            .mark_point(color="white", opacity=0.8, size=18)
            .encode(x=px, y=py, tooltip=tooltips(points, ["branch", a, b, y]))
        )
    chart = layered(*layers).properties(
        width=width, height=height, title=title or f"{y} over {a} and {b}"
    )
    return themed(chart, theme)


__all__ = ["contour", "contour_why_not", "pair_of"]
