"""The ``edf`` view (Optuna's ``plot_edf``): the empirical distribution of a metric over the
forks that ended with a value, a step line from 0 to 1 (the fraction of forks at or below each
value); one line per sweep when the selection holds several."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import brush, cannot, final, layered, pick, picked_size, themed, tooltips, with_notes
from .base import values as inline
from .data import ORDER, STATE

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

FRACTION, GROUP, STEP = "_fraction", "_group", "_i"


def edf_why_not(table: pl.DataFrame, y: str | None) -> str | None:
    """Why ``edf`` cannot draw these rows (None: it can)."""
    if y is None or y not in table.columns:
        return f"no metric {y!r} to draw" if y else "pick a metric"
    if table.filter(final(table, y)).is_empty():
        return f"edf needs forks that ended with a value of {y}; none here has one"
    return None


def _groups(rows: pl.DataFrame) -> pl.Series:
    """What each row's line is: its sweep when the rows come from more than one (a branch
    outside every sweep: "no sweep"), else one line."""
    import polars as pl

    sweeps = rows["sweep"] if "sweep" in rows.columns else pl.Series([None] * rows.height)
    if sweeps.n_unique() <= 1:
        return pl.Series(GROUP, ["all"] * rows.height, dtype=pl.Utf8)
    return pl.Series(
        GROUP, [f"sweep {s}" if s is not None else "no sweep" for s in sweeps], dtype=pl.Utf8
    )


def edf_frames(table: pl.DataFrame, y: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The forks with a value of ``y`` (``_group``, ``_fraction``: the share of their group's
    values at or below theirs) and each group's step line over the common range of values
    (``_group``, ``y``, ``_fraction``, ``_i`` the order of its points): 0 before the least,
    1 from the group's greatest."""
    import polars as pl

    rows = table.filter(final(table, y))
    rows = rows.with_columns(_groups(rows), pl.col(y).cast(pl.Float64))
    n = pl.len().over(GROUP)
    rows = rows.with_columns((pl.col(y).rank("max").over(GROUP) / n).alias(FRACTION))
    lo, hi = float(rows[y].min()), float(rows[y].max())  # type: ignore[arg-type]
    lines = []
    for (group,), part in rows.sort(y).group_by(GROUP, maintain_order=True):
        steps = part.group_by(y, maintain_order=True).agg(pl.col(FRACTION).max())
        xs, fs = [lo, *steps[y].to_list()], [0.0, *steps[FRACTION].to_list()]
        if xs[-1] < hi:  # the line goes on at 1 to the end of the other groups' values
            xs, fs = [*xs, hi], [*fs, 1.0]
        lines.append(
            pl.DataFrame(
                {GROUP: [group] * len(xs), y: xs, FRACTION: fs, STEP: list(range(len(xs)))},
                schema={GROUP: pl.Utf8, y: pl.Float64, FRACTION: pl.Float64, STEP: pl.Int64},
            )
        )
    return rows, pl.concat(lines)


def edf(
    table: pl.DataFrame,
    y: str,
    *,
    params: list[str] | None = None,
    order_label: str = "fork",
    title: str | None = None,
    width: int = 460,
    height: int = 280,
    theme: str = "light",
) -> alt.LayerChart:
    """The empirical distribution of ``y`` over the forks of ``table`` that ended with a value
    (``outcome``'s: a pruned or failed fork's last report is none; NaN is none): a step line
    per sweep, and each fork a point on it (its ``params`` in the tooltip; click to pick)."""
    import altair as alt

    why = edf_why_not(table, y)
    if why:
        raise cannot("edf", why)
    rows, lines = edf_frames(table, y)
    groups = lines[GROUP].unique(maintain_order=True).to_list()
    shown = [c for c in (params or []) if c in rows.columns and c != y]
    cols = ["branch", *[c for c in (ORDER, STATE) if c in rows.columns], y, FRACTION, GROUP]
    points = rows.select(list(dict.fromkeys(with_notes(rows, [*cols, *shown]))))
    x = alt.X(f"{y}:Q", title=y, scale=alt.Scale(zero=False))
    fraction = alt.Y(
        f"{FRACTION}:Q",
        title=f"fraction of {order_label}s at or below",
        scale=alt.Scale(domain=[0, 1]),
        axis=alt.Axis(format="%"),
    )
    color: dict[str, Any] = {}
    if len(groups) > 1:
        color["color"] = alt.Color(f"{GROUP}:N", title="sweep", sort=groups)
    line = (
        alt.Chart(inline(lines))
        .mark_line(interpolate="step-after")
        .encode(x=x, y=fraction, order=f"{STEP}:Q", detail=f"{GROUP}:N", **color)
    )
    titles = {ORDER: order_label, STATE: "state", FRACTION: "at or below", GROUP: "sweep"}
    tips = tooltips(points, ["branch", ORDER, *shown, y, STATE], titles)
    tips.append(alt.Tooltip(f"{FRACTION}:Q", title="at or below", format=".1%"))
    if len(groups) > 1:
        tips.append(alt.Tooltip(f"{GROUP}:N", title="sweep"))
    dots = (
        alt.Chart(inline(points))
        .mark_circle(opacity=0.8)
        .encode(x=x, y=fraction, size=picked_size(30, 140), tooltip=tips, **color)
        .add_params(pick(), brush(["x"]))
    )
    n = points.height
    chart = layered(line, dots).properties(
        width=width,
        height=height,
        title=title or f"the distribution of {y} over {n} {order_label}s with a value",
    )
    return themed(chart, theme)


__all__ = ["edf", "edf_frames", "edf_why_not"]
