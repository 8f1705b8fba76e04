"""The ``metric`` view: a metric against a parameter, the mean with a 95% band across seeds
(never outside the metric's observed range), the branches as faint points.

Data is reduced in polars first (one value per branch, then group statistics), so the chart
stays small whatever the size of the journal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InvalidValue
from ..matrix import aggregate, last_per_branch, param_columns
from .base import (
    NUMBER,
    bounds,
    brush,
    check_theme,
    is_number,
    layered,
    partial_shape,
    pick,
    picked_size,
    themed,
    tooltips,
    values,
    with_notes,
)
from .data import STATE

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

AGGREGATIONS = ("mean", "max", "last")
MAX_POINTS = 5000  # branches drawn as points; beyond, the groups carry the chart


def metric_vs_param(
    df: pl.DataFrame,
    x: str = "budget",
    y: str = "recall",
    color: str | None = None,
    facet: str | None = None,
    *,
    log_x: bool = False,
    points: bool = True,
    title: str | None = None,
    width: int = 420,
    height: int = 280,
    agg: str = "mean",
    theme: str = "light",
    params: list[str] | None = None,
) -> alt.LayerChart | alt.FacetChart:
    """Mean of ``y`` per ``x`` (and color/facet group) with a shaded 95% CI band across seeds,
    clamped to the range ``y`` was observed in (two seeds of a recall give a wide interval; it
    stays within the recalls seen); the individual branches as faint points (``points=False``
    hides them) that tooltip their branch and params and pick it on click; n in the tooltip.
    ``agg``: "mean" (± CI), "max" (the best branch of each group) or "last" (the most recent
    branch of each group). ``theme``: "light" or "dark" (JupyterLab's dark theme). ``df`` is a
    long matrix or one row per branch; ``params`` the columns a point's tooltip shows besides
    the axes (default: every parameter)."""
    import altair as alt
    import polars as pl

    if color == x:
        color = None  # one line per x value is what the x axis already shows
    if facet in (x, color):
        facet = None
    data = last_per_branch(df, y)
    for col in (x, color, facet):
        if col is not None and col not in data.columns:
            raise InvalidValue(
                f"the matrix has no column {col!r}; its columns are {', '.join(data.columns)}"
            )
    data = data.filter(pl.col(x).is_not_null() & pl.col(y).is_not_null())
    if agg not in AGGREGATIONS:
        raise InvalidValue(f"agg is one of {', '.join(AGGREGATIONS)}, not {agg!r}")
    check_theme(theme)
    if data.is_empty():
        raise InvalidValue(
            f"no branch has both {x!r} and {y!r}: pick a parameter and a metric the matrix has"
        )
    groups = [c for c in (x, color, facet) if c is not None]
    if agg == "mean":
        low, high = bounds(data[y])
        stats = aggregate(data, y, by=groups).with_columns(
            pl.col("ci_low").clip(low, high), pl.col("ci_high").clip(low, high)
        )
    else:
        pick_y = pl.col(y).max() if agg == "max" else pl.col(y).sort_by("branch").last()
        stats = (
            data.group_by(groups, maintain_order=True)
            .agg(pick_y.alias("mean"), pl.len().alias("n"))
            .with_columns(
                pl.lit(None, dtype=pl.Float64).alias("ci_low"),
                pl.lit(None, dtype=pl.Float64).alias("ci_high"),
            )
            .sort(groups)
        )
    if is_number(data, x):
        xs = (
            alt.Scale(type="log", nice=False, padding=24)
            if log_x
            else alt.Scale(zero=False, padding=24)
        )
        # Ticks at the swept values (a sweep has few), never overlapping: a log axis otherwise
        # labels 700 and 800 side by side ("700800").
        ticks = sorted({v for v in stats[x].to_list() if v is not None})
        axis = alt.Axis(labelOverlap="greedy", values=ticks) if len(ticks) <= 12 else None
        x_title = f"{x} (log scale)" if log_x else x
        x_enc = alt.X(
            f"{x}:Q", scale=xs, title=x_title, axis=axis or alt.Axis(labelOverlap="greedy")
        )
    else:  # a choice (a category, a flag): its values in order along x, never a log axis
        x_enc = alt.X(f"{x}:O", title=x, sort="ascending", axis=alt.Axis(labelAngle=0))
    tooltip = tooltips(stats, groups) + [
        alt.Tooltip("mean:Q", format=".3f"),
        alt.Tooltip("n:Q"),
        alt.Tooltip("ci_low:Q", format=".3f"),
        alt.Tooltip("ci_high:Q", format=".3f"),
    ]
    # One dataset for every layer (facets need it): group rows and branch rows, told apart by
    # the "_layer" column. The branch rows carry every parameter, for their tooltips.
    shown = params if params is not None else param_columns(data)
    state = [STATE] if STATE in data.columns else []  # a fork's state: its point says it
    keep = [c for c in dict.fromkeys(["branch", *groups, y, *shown, *state]) if c in data.columns]
    keep = with_notes(data, keep)
    points = points and data.height <= MAX_POINTS
    rows = [stats.with_columns(pl.lit("group").alias("_layer"))]
    if points:
        rows.append(data.select(keep).with_columns(pl.lit("branch").alias("_layer")))
    base = alt.Chart(values(pl.concat(rows, how="diagonal_relaxed")))
    group_rows = base.transform_filter("datum._layer === 'group'")
    enc: dict[str, Any] = {"x": x_enc}
    if color is not None:
        enc["color"] = alt.Color(f"{color}:N", title=color)
    line = group_rows.mark_line(point=True).encode(
        y=alt.Y("mean:Q", title=y), tooltip=tooltip, **enc
    )
    zoom = brush(["x"])
    layers: list[Any] = [line if points else line.add_params(zoom)]
    if stats["ci_low"].drop_nulls().len():  # a band only where a group has one (2+ values):
        band = (  # a layer with no rows gives its scales an infinite extent in Vega
            group_rows.transform_filter("isValid(datum.ci_low)")
            .mark_area(opacity=0.2)
            .encode(y=alt.Y("ci_low:Q", title=y), y2="ci_high:Q", **enc)
        )
        layers.insert(0, band)
    if points:
        faint = (
            base.transform_filter("datum._layer === 'branch'")
            .mark_point(filled=True, opacity=0.35)
            .encode(
                y=alt.Y(f"{y}:Q"),
                size=picked_size(28, 140),
                shape=partial_shape(),
                tooltip=tooltips(data, keep, {y: y, STATE: "state"}),
                **enc,
            )
            .add_params(pick(), zoom)
        )
        layers.append(faint)
    chart: alt.LayerChart | alt.FacetChart = layered(*layers).properties(width=width, height=height)
    if facet is not None:
        chart = chart.facet(column=alt.Column(f"{facet}:N", title=facet))
    label = {"mean": "", "max": " (max)", "last": " (last)"}[agg]
    chart = chart.properties(title=title or f"{y}{label} vs {x}")
    return themed(chart, theme)


__all__ = ["AGGREGATIONS", "NUMBER", "metric_vs_param"]
