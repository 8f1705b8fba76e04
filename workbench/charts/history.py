"""The ``history`` view: a metric by fork order (a study's: trial order), each fork a point,
with the best value so far as a step line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import (
    NUMBER,
    brush,
    cannot,
    layered,
    pick,
    picked_size,
    themed,
    tooltips,
    values,
    with_notes,
)
from .data import ORDER, STATE

if TYPE_CHECKING:
    import altair as alt
    import polars as pl


def history_why_not(table: pl.DataFrame, y: str | None) -> str | None:
    """Why ``history`` cannot draw these rows (None: it can)."""
    if y is None or y not in table.columns:
        return f"no metric {y!r} to draw" if y else "pick a metric"
    n = table[y].drop_nulls().len()
    if n < 2:
        return f"history needs two forks with {y}; this selection has {n}"
    return None


def history(
    table: pl.DataFrame,
    y: str,
    *,
    direction: str = "maximize",
    order_label: str = "fork",
    params: list[str] | None = None,
    title: str | None = None,
    width: int = 460,
    height: int = 280,
    theme: str = "light",
) -> alt.LayerChart:
    """``y`` of each branch by its order (the ``_order`` column, else the branch id), and the
    best so far (the running max, or min when ``direction="minimize"``). ``table``: one row
    per branch (``charts.data.Results.table``)."""
    import altair as alt
    import polars as pl

    why = history_why_not(table, y)
    if why:
        raise cannot("history", why)
    if ORDER not in table.columns:
        table = table.sort("branch").with_columns(pl.int_range(1, pl.len() + 1).alias(ORDER))
    rows = table.filter(pl.col(y).is_not_null()).sort(ORDER)
    best = pl.col(y).cum_max() if direction == "maximize" else pl.col(y).cum_min()
    rows = rows.with_columns(best.alias("_best"))
    shown = [c for c in (params or []) if c in rows.columns]
    keep = ["branch", ORDER, y, "_best", *shown, *([STATE] if STATE in rows.columns else [])]
    keep = with_notes(rows, keep)
    data = rows.select(list(dict.fromkeys(c for c in keep if c in rows.columns)))
    base = alt.Chart(values(data))
    x = alt.X(f"{ORDER}:Q", title=order_label, axis=alt.Axis(tickMinStep=1, format="d"))
    titles = {ORDER: order_label, "_best": "best so far", STATE: "state"}
    points = (
        base.mark_circle(opacity=0.7)
        .encode(
            x=x,
            y=alt.Y(f"{y}:Q", title=y, scale=alt.Scale(zero=False)),
            size=picked_size(40, 160),
            tooltip=tooltips(data, keep, titles),
        )
        .add_params(pick(), brush(["x", "y"]))
    )
    line = base.mark_line(interpolate="step-after", color="#e45756").encode(
        x=x,
        y=alt.Y("_best:Q", title=y),
        tooltip=[
            alt.Tooltip(f"{ORDER}:Q", title=order_label),
            alt.Tooltip("_best:Q", title="best so far", format=NUMBER),
        ],
    )
    goal = "highest" if direction == "maximize" else "lowest"
    chart = layered(points, line).properties(
        width=width,
        height=height,
        title=title or f"{y} by {order_label}, and the {goal} so far",
    )
    return themed(chart, theme)


__all__ = ["history", "history_why_not"]
