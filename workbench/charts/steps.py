"""The ``steps`` view: learning curves, a metric against the step it was reported at
(``sweep.report(branch, value, step)``), one line per fork; a pruned trial's line ends where
it was stopped."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .base import brush, cannot, layered, pick, themed, tooltips, values, with_notes
from .data import ORDER, STATE

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

    from ..journal import Journal

MAX_FORKS = 2000  # each fork's own events are read: a selection this large is filtered first


def step_frame(journal: Journal, branches: Iterable[int], metric: str) -> pl.DataFrame:
    """``branch``, ``step``, ``value``: each report of ``metric`` with a step on the forks'
    own events (what their parents reported is theirs, not the forks')."""
    import polars as pl

    from ..sweep.trials import Reader

    reader = Reader(journal)
    rows = [
        (b, step, value)
        for b in branches
        for step, value in sorted(reader.own(b).steps.get(metric, {}).items())
    ]
    return pl.DataFrame(
        rows, schema={"branch": pl.Int64, "step": pl.Int64, "value": pl.Float64}, orient="row"
    )


def steps_why_not(curves: pl.DataFrame, y: str | None, forks: int) -> str | None:
    """Why ``steps`` cannot draw these curves (None: it can)."""
    if y is None:
        return "pick a metric"
    if forks > MAX_FORKS:
        return f"steps reads each fork's events: filter this selection of {forks} to {MAX_FORKS}"
    if curves.is_empty():
        return (
            f"no fork here reported {y} at a step; a fork reports its learning curve with "
            f"sweep.report(branch, value, step, metric={y!r})"
        )
    return None


def steps(
    curves: pl.DataFrame,
    y: str,
    *,
    table: pl.DataFrame | None = None,
    params: list[str] | None = None,
    order_label: str = "fork",
    title: str | None = None,
    width: int = 460,
    height: int = 280,
    theme: str = "light",
) -> alt.LayerChart:
    """A line per fork of ``y`` by step (``curves``: ``step_frame``'s), its points tooltipping
    the fork's parameters (from ``table``, one row per branch); click a line to pick its
    branch, drag to zoom into steps."""
    import altair as alt

    why = steps_why_not(curves, y, curves["branch"].n_unique() if len(curves) else 0)
    if why:
        raise cannot("steps", why)
    data = curves.rename({"value": y}) if y not in curves.columns else curves
    extra = [c for c in (params or []) if table is not None and c in table.columns]
    if table is not None:
        cols = with_notes(
            table, ["branch", *extra, *[c for c in (ORDER, STATE) if c in table.columns]]
        )
        data = data.join(table.select(list(dict.fromkeys(cols))), on="branch", how="left")
    forks = data["branch"].n_unique()
    color = (
        alt.Color("branch:N", title="fork")
        if forks <= 10
        else alt.Color(
            f"{ORDER}:Q" if ORDER in data.columns else "branch:Q",
            title=order_label,
            scale=alt.Scale(scheme="viridis"),
        )
    )
    x = alt.X(
        "step:Q",
        title="step",
        scale=alt.Scale(zero=False),
        axis=alt.Axis(format="d", tickMinStep=1),
    )
    base = alt.Chart(values(data)).encode(
        x=x, y=alt.Y(f"{y}:Q", title=y, scale=alt.Scale(zero=False)), color=color
    )
    lines = base.mark_line(opacity=0.8).encode(detail="branch:N")
    titles = {ORDER: order_label, STATE: "state"}
    dots = (
        base.mark_circle(size=24)
        .encode(tooltip=tooltips(data, ["branch", "step", y, *extra, STATE], titles))
        .add_params(pick(), brush(["x"]))
    )
    chart = layered(lines, dots).properties(
        width=width,
        height=height,
        title=title or f"{y} by step, one line per fork ({forks})",
    )
    return themed(chart, theme)


__all__ = ["step_frame", "steps", "steps_why_not"]
