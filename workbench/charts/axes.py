"""Which axes a chart takes: ``default_axes``, the one rule every client follows (CLI, server,
widgets), and ``auto_log_x``, when an x axis is logarithmic by default."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import plugins
from ..matrix import param_columns

if TYPE_CHECKING:
    import polars as pl

    from ..journal import Journal


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
    matrix has other parameters (metrics) and not these; else the first varied parameter (a
    numeric one first: the metric view draws a line along x) and the first metric that is not
    named like a parameter.
    ``color=""`` means no colour. ``df`` is the matrix (default: the sweep's, or the whole),
    long or one row per branch with ``metrics`` given by its columns."""
    if df is None:
        df = journal.matrix(sweep=sweep)
    return axes_of(
        journal,
        param_columns(df),
        sorted(df["metric"].unique().to_list()) if "metric" in df.columns else [],
        df,
        x=x,
        y=y,
        color=color,
    )


def axes_of(
    journal: Journal,
    params: list[str],
    metrics: list[str],
    df: pl.DataFrame,
    *,
    x: str | None = None,
    y: str | None = None,
    color: str | None = None,
) -> Axes:
    """``default_axes`` over known parameter and metric columns of ``df``."""
    varied = [p for p in params if df.select(p).drop_nulls().unique().height > 1]
    agent = plugins.agent_for(journal.state_name)

    def agent_has(name: str | None, present: list[str]) -> bool:
        # the agent's axis, unless the matrix has others and not this one
        return name is not None and (not present or name in present)

    if x is None:
        if agent is not None and agent_has(agent.x, params):
            x = agent.x
        else:  # a number first: the metric view draws a line along x
            numbers = [p for p in varied if _is_number(df, p)]
            x = next(iter(numbers or varied or params), None)
    if y is None:
        if agent is not None and agent_has(agent.y, metrics):
            y = agent.y
        else:  # a metric that only measures a parameter (an agent observing its budget) last
            own = [
                m for m in metrics if m not in params and m.removeprefix("metric_") not in params
            ]
            y = next(iter(own or metrics), None)
    if color is None:
        if agent is not None and agent.color and x == agent.x and agent_has(agent.color, params):
            color = agent.color
    if color == "" or color == x:
        color = None
    return Axes(params, varied, metrics, x, y, color)


def _is_number(df: pl.DataFrame, column: str) -> bool:
    import polars as pl

    dtype = df.schema.get(column)
    return dtype is not None and dtype.is_numeric() and dtype != pl.Boolean


def auto_log_x(df: pl.DataFrame, x: str) -> bool:
    """A log x axis when the parameter is positive and spans at least a factor of 20."""
    vals = [
        v
        for v in df[x].unique().to_list()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    ]
    return bool(vals) and min(vals) > 0 and max(vals) / min(vals) >= 20
