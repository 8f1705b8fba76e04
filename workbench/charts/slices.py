"""The ``slice`` view: a metric against each parameter that varies, one panel per parameter
on its own axis (numbers on a linear or log scale, names as categories), the forks coloured by
their order."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from .base import (
    cannot,
    field_type,
    is_log,
    pick,
    picked_size,
    themed,
    tooltips,
    values,
    varied,
    with_notes,
)
from .data import ORDER, STATE

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

MAX_PANELS = 8


def slice_why_not(table: pl.DataFrame, y: str | None, params: list[str]) -> str | None:
    """Why ``slice`` cannot draw these rows (None: it can)."""
    import polars as pl

    if y is None or y not in table.columns:
        return f"no metric {y!r} to draw" if y else "pick a metric"
    rows = table.filter(pl.col(y).is_not_null())
    if rows.height < 2:
        return f"slice needs two forks with {y}; this selection has {rows.height}"
    if not varied(rows, params):
        return "slice needs a parameter that varies; every fork here has the same parameters"
    return None


def slices(
    table: pl.DataFrame,
    y: str,
    params: list[str],
    *,
    order_label: str = "fork",
    title: str | None = None,
    width: int = 220,
    height: int = 220,
    theme: str = "light",
) -> alt.HConcatChart:
    """One scatter per varied parameter (at most ``MAX_PANELS``): ``y`` against it, the shared
    y axis, each fork a point coloured by its order; click a point to pick its branch."""
    import altair as alt
    import polars as pl

    why = slice_why_not(table, y, params)
    if why:
        raise cannot("slice", why)
    rows = table.filter(pl.col(y).is_not_null())
    if ORDER not in rows.columns:
        rows = rows.sort("branch").with_columns(pl.int_range(1, pl.len() + 1).alias(ORDER))
    moving = varied(rows, params)[:MAX_PANELS]
    keep = with_notes(
        rows, ["branch", ORDER, y, *moving, *([STATE] if STATE in rows.columns else [])]
    )
    data = rows.select(keep)
    titles = {ORDER: order_label, STATE: "state"}
    chosen = pick()
    panels = []
    for p in moving:
        kind: Any = field_type(data, p)
        if kind == "quantitative":
            log = is_log(data, p)
            scale = (  # "zero" is no option of a log scale (Vega-Lite drops it, with a warning)
                alt.Scale(type="log", nice=False, padding=12)
                if log
                else alt.Scale(type="linear", zero=False, nice=True, padding=12)
            )
            ticks = sorted(data[p].drop_nulls().unique().to_list())
            axis = alt.Axis(
                labelOverlap="greedy", values=ticks if len(ticks) <= 12 else alt.Undefined
            )
            x = alt.X(p, type=kind, title=p, scale=scale, axis=axis)
        else:
            x = alt.X(p, type=kind, title=p, axis=alt.Axis(labelAngle=0))
        panels.append(
            alt.Chart(values(data.filter(pl.col(p).is_not_null())))
            .mark_circle(opacity=0.75)
            .encode(
                x=x,
                y=alt.Y(f"{y}:Q", title=y, scale=alt.Scale(zero=False)),
                color=alt.Color(f"{ORDER}:Q", title=order_label, scale=alt.Scale(scheme="viridis")),
                size=picked_size(40, 160),
                tooltip=tooltips(data, ["branch", ORDER, p, y, STATE], titles),
            )
            .add_params(chosen)
            .properties(width=width, height=height)
        )
    with warnings.catch_warnings():
        # one "pick" shared by every panel is what we want; altair says it merged them
        warnings.filterwarnings("ignore", message="Automatically deduplicated")
        chart: alt.HConcatChart = alt.hconcat(*panels).resolve_scale(y="shared", color="shared")
    chart = chart.properties(title=title or f"{y} against each parameter")
    return themed(chart, theme)


__all__ = ["slice_why_not", "slices"]
