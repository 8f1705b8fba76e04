"""Altair charts over a results matrix: a metric against a parameter, mean with a 95% band.

Data is reduced in polars first (one value per branch, then group statistics), so charts stay
small whatever the size of the journal. ``save`` writes PNG/SVG (vl-convert), HTML or JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import plugins
from .errors import InvalidValue
from .matrix import aggregate, last_per_branch, param_columns

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

    from .journal import Journal


AGGREGATIONS = ("mean", "max", "last")
THEMES = ("light", "dark")


@dataclass(frozen=True)
class Axes:
    """What a results matrix can be charted by, and the axes a chart takes by default."""

    params: list[str]
    varied: list[str]
    metrics: list[str]
    x: str | None
    y: str | None
    color: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "params": self.params,
            "varied": self.varied,
            "metrics": self.metrics,
            "x": self.x,
            "y": self.y,
            "color": self.color,
        }


def default_axes(
    journal: Journal,
    df: pl.DataFrame | None = None,
    *,
    x: str | None = None,
    y: str | None = None,
    color: str | None = None,
    sweep: int | None = None,
) -> Axes:
    """The chart axes every client uses (CLI, server, widgets): the ones given; else the
    journal's agent's (``x``, ``y`` and its ``color`` when x is the agent's own x), unless the
    matrix has other parameters (metrics) and not these; else the first varied parameter and
    the first metric. ``color=""`` means no colour. ``df`` is the matrix (default: the
    sweep's, or the whole)."""
    if df is None:
        df = journal.matrix(sweep=sweep)
    params = param_columns(df)
    metrics = sorted(df["metric"].unique().to_list()) if "metric" in df.columns else []
    varied = [p for p in params if df.select(p).drop_nulls().unique().height > 1]
    agent = plugins.agent_for(journal.state_name)

    def agent_has(name: str | None, present: list[str]) -> bool:
        # the agent's axis, unless the matrix has others and not this one
        return name is not None and (not present or name in present)

    if x is None:
        if agent is not None and agent_has(agent.x, params):
            x = agent.x
        else:
            x = next(iter(varied or params), None)
    if y is None:
        if agent is not None and agent_has(agent.y, metrics):
            y = agent.y
        else:
            y = next(iter(metrics), None)
    if color is None:
        if agent is not None and agent.color and x == agent.x and agent_has(agent.color, params):
            color = agent.color
    if color == "" or color == x:
        color = None
    return Axes(params, varied, metrics, x, y, color)


def themed(chart: Any, theme: str) -> Any:
    """A chart as drawn for JupyterLab's theme: "light" as it is, "dark" on a dark background
    with light ink."""
    if theme != "dark":
        return chart
    ink, grid = "#e0e0e0", "#444444"
    return (
        chart.configure(background="#1e1e1e")
        .configure_axis(
            labelColor=ink, titleColor=ink, gridColor=grid, domainColor=ink, tickColor=ink
        )
        .configure_legend(labelColor=ink, titleColor=ink)
        .configure_title(color=ink)
    )


def auto_log_x(df: pl.DataFrame, x: str) -> bool:
    """A log x axis when the parameter is positive and spans at least a factor of 20."""
    vals = [
        v
        for v in df[x].unique().to_list()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    ]
    return bool(vals) and min(vals) > 0 and max(vals) / min(vals) >= 20


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
) -> alt.LayerChart | alt.FacetChart:
    """Mean of ``y`` per ``x`` (and color/facet group) with a shaded 95% CI band across seeds;
    the individual branches as faint points (``points=False`` hides them); n in the tooltip.
    ``agg``: "mean" (± CI), "max" (the best branch of each group) or "last" (the most recent
    branch of each group). ``theme``: "light" or "dark" (JupyterLab's dark theme)."""
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
    if theme not in THEMES:
        raise InvalidValue(f"theme is one of {', '.join(THEMES)}, not {theme!r}")
    if data.is_empty():
        raise InvalidValue(
            f"no branch has both {x!r} and {y!r}: pick a parameter and a metric the matrix has"
        )
    groups = [c for c in (x, color, facet) if c is not None]
    if agg == "mean":
        stats = aggregate(data, y, by=groups)
    else:
        pick = pl.col(y).max() if agg == "max" else pl.col(y).sort_by("branch").last()
        stats = (
            data.group_by(groups, maintain_order=True)
            .agg(pick.alias("mean"), pl.len().alias("n"))
            .with_columns(
                pl.lit(None, dtype=pl.Float64).alias("ci_low"),
                pl.lit(None, dtype=pl.Float64).alias("ci_high"),
            )
            .sort(groups)
        )
    xs = (
        alt.Scale(type="log", nice=False, padding=24)
        if log_x
        else alt.Scale(zero=False, padding=24)
    )
    # Ticks at the swept values (a sweep has few), never overlapping: a log axis otherwise
    # labels 700 and 800 side by side ("700800").
    values = sorted({v for v in stats[x].to_list() if v is not None})
    axis = alt.Axis(labelOverlap="greedy", values=values) if len(values) <= 12 else None
    x_enc = alt.X(f"{x}:Q", scale=xs, title=x, axis=axis or alt.Axis(labelOverlap="greedy"))
    tooltip = [alt.Tooltip(f"{c}") for c in groups] + [
        alt.Tooltip("mean:Q", format=".3f"),
        alt.Tooltip("n:Q"),
        alt.Tooltip("ci_low:Q", format=".3f"),
        alt.Tooltip("ci_high:Q", format=".3f"),
    ]
    # One dataset for every layer (facets need it): group rows and branch rows, told apart by
    # the "_layer" column.
    keep = [c for c in dict.fromkeys([*groups, y, "branch"]) if c in data.columns]
    rows = [stats.with_columns(pl.lit("group").alias("_layer"))]
    if points:
        rows.append(data.select(keep).with_columns(pl.lit("branch").alias("_layer")))
    base = alt.Chart(pl.concat(rows, how="diagonal_relaxed"))
    group_rows = base.transform_filter("datum._layer === 'group'")
    enc: dict[str, Any] = {"x": x_enc}
    if color is not None:
        enc["color"] = alt.Color(f"{color}:N", title=color)
    band = (
        group_rows.transform_filter("isValid(datum.ci_low)")
        .mark_area(opacity=0.2)
        .encode(y=alt.Y("ci_low:Q", title=y), y2="ci_high:Q", **enc)
    )
    line = group_rows.mark_line(point=True).encode(
        y=alt.Y("mean:Q", title=y), tooltip=tooltip, **enc
    )
    layers: list[Any] = [band, line]
    if points:
        faint = (
            base.transform_filter("datum._layer === 'branch'")
            .mark_circle(opacity=0.35, size=28)
            .encode(
                y=alt.Y(f"{y}:Q"),
                tooltip=[alt.Tooltip(c) for c in keep],
                **enc,
            )
        )
        layers.append(faint)
    chart = alt.layer(*layers).properties(width=width, height=height)
    if facet is not None:
        chart = chart.facet(column=alt.Column(f"{facet}:N", title=facet))
    label = {"mean": "", "max": " (max)", "last": " (last)"}[agg]
    chart = chart.properties(title=title or f"{y}{label} vs {x}")
    return themed(chart, theme)


def parallel(df: pl.DataFrame, y: str, theme: str = "light") -> alt.Chart:
    """Parallel coordinates: one line per branch across its varied parameters (each scaled to
    0..1) and the metric ``y``, coloured by ``y``; for grids over three or more parameters."""
    import altair as alt
    import polars as pl

    from .matrix import param_columns

    data = last_per_branch(df, y)
    params = [
        p
        for p in param_columns(data)
        if p != y
        and data.select(p).drop_nulls().unique().height > 1
        and data.schema[p].is_numeric()
    ]
    if not params:
        raise InvalidValue("no numeric parameter varies across these branches: nothing to draw")
    axes = [*params, y]
    scaled = data.select(
        "branch",
        pl.col(y).alias("_metric"),
        *[
            ((pl.col(c) - pl.col(c).min()) / (pl.col(c).max() - pl.col(c).min()).fill_null(1))
            .fill_nan(0.5)
            .alias(c)
            for c in axes
        ],
    )
    long = scaled.unpivot(index=["branch", "_metric"], on=axes, variable_name="axis")
    chart = (
        alt.Chart(long)
        .mark_line(opacity=0.6)
        .encode(
            x=alt.X("axis:N", sort=axes, title=None),
            y=alt.Y("value:Q", title="scaled 0..1"),
            color=alt.Color("_metric:Q", title=y),
            detail="branch:N",
            tooltip=["branch:N", alt.Tooltip("_metric:Q", title=y, format=".3f")],
        )
        .properties(width=460, height=260, title=f"{y} across {', '.join(params)}")
    )
    return themed(chart, theme)


def save(chart: alt.TopLevelMixin, path: str | Path, scale_factor: float = 2.0) -> Path:
    """Write a chart as .png, .svg (no browser needed), .html (self-contained) or .json."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".png":
        chart.save(str(p), scale_factor=scale_factor)
    elif suffix == ".svg":
        chart.save(str(p))
    elif suffix == ".html":
        chart.save(str(p), inline=True)
    elif suffix == ".json":
        chart.save(str(p))
    else:
        raise InvalidValue(
            f"cannot tell the image format of {p.name}: use .png, .svg, .html or .json"
        )
    return p
