"""The ``parallel`` view: parallel coordinates with one real axis per parameter and the metric,
ticks in their own units (a log axis for a parameter that spans a factor of 20, the names of a
categorical one), each branch a line coloured by the metric. Drag a box over an axis, or drag
along one (the box then straddles it): the Lab keeps the branches inside it (``keep``), dims the
other lines and filters its table to them."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..matrix import last_per_branch, param_columns
from .base import (
    KEEP,
    NUMBER,
    bounds,
    brush,
    cannot,
    ink,
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

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

MAX_LABELS = 8  # an axis with at most this many values is labelled with each


def parallel_why_not(table: pl.DataFrame, y: str | None, params: list[str]) -> str | None:
    """Why ``parallel`` cannot draw these rows (None: it can)."""
    import polars as pl

    if y is None or y not in table.columns:
        return f"no metric {y!r} to draw" if y else "pick a metric"
    rows = table.filter(pl.col(y).is_not_null())
    if rows.height < 2:
        return f"parallel coordinates need two forks with {y}; this selection has {rows.height}"
    if not varied(rows, [p for p in params if p != y]):
        return "parallel coordinates need a parameter that varies; every fork here has the same"
    return None


def _nice(span: float) -> float:
    """A round step (1, 2, 2.5 or 5 times a power of ten) at least ``span``."""
    if span <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(span))
    for m in (1, 2, 2.5, 5, 10):
        if span <= m * power:
            return m * power
    return 10 * power


def _ticks(lo: float, hi: float, log: bool) -> list[float]:
    """Round values between ``lo`` and ``hi`` to label an axis with (both ends when few)."""
    if hi <= lo:
        return [lo]
    if log:
        out = [10.0**k for k in range(math.ceil(math.log10(lo)), math.floor(math.log10(hi)) + 1)]
        if len(out) < 3:
            out = sorted(
                {
                    m * 10.0**k
                    for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
                    for m in (1, 2, 5)
                    if lo <= m * 10.0**k <= hi
                }
            )
    else:
        step = _nice((hi - lo) / 4)
        first = math.ceil(lo / step) * step
        out = [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]
    if len(out) < 2:
        out = sorted({lo, *out, hi})
    return out


def _label(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _axis(
    rows: pl.DataFrame, name: str, param: bool = True
) -> tuple[pl.Expr, list[tuple[float, str]]]:
    """Where each row sits on the axis (0..1), and the axis' labels (position, text): for a
    parameter each value when there are few (a grid's), else round values in between, on a
    log scale when it spans a factor of 20; a metric on a linear scale."""
    import polars as pl

    col = rows[name].drop_nulls()
    if is_number(rows, name):
        log = param and is_log(rows, name)
        lo, hi = bounds(col)
        f = (lambda v: math.log10(v)) if log else (lambda v: v)
        a, b = f(lo), f(hi)
        src = pl.col(name).cast(pl.Float64)
        t = src.log10() if log else src
        pos = ((t - a) / (b - a)) if b > a else pl.lit(0.5)
        place: Callable[[float], float] = (
            (lambda v: (f(v) - a) / (b - a)) if b > a else (lambda v: 0.5)
        )
        distinct = sorted(col.unique().to_list())
        marks = distinct if param and len(distinct) <= MAX_LABELS else _ticks(lo, hi, log)
        return pos, [(place(float(v)), _label(v)) for v in marks]
    cats = sorted({str(v) for v in col.to_list()})
    index = {c: i for i, c in enumerate(cats)}
    k = max(1, len(cats) - 1)
    pos = (
        pl.col(name)
        .cast(pl.Utf8)
        .replace_strict(
            {c: (i / k if len(cats) > 1 else 0.5) for c, i in index.items()},
            default=None,
            return_dtype=pl.Float64,
        )
    )
    return pos, [((i / k if len(cats) > 1 else 0.5), c) for c, i in index.items()]


def parallel(
    df: pl.DataFrame,
    y: str,
    theme: str = "light",
    *,
    params: list[str] | None = None,
    title: str | None = None,
    width: int = 560,
    height: int = 280,
) -> alt.LayerChart:
    """One line per branch across the parameters that vary (``params``, else every parameter)
    and ``y``, each on its own axis labelled in its units; coloured by ``y``. ``df``: a long
    matrix or one row per branch."""
    import altair as alt
    import polars as pl

    data = last_per_branch(df, y)
    candidates = params if params is not None else [p for p in param_columns(data) if p != y]
    why = parallel_why_not(data, y, candidates)
    if why:
        raise cannot("parallel", why)
    data = data.filter(pl.col(y).is_not_null())
    axes = [*varied(data, [p for p in candidates if p != y]), y]
    placed: list[pl.DataFrame] = []
    labels: list[dict[str, Any]] = []
    for name in axes:
        pos, marks = _axis(data, name, param=name != y)
        placed.append(
            data.select(
                "branch",
                pl.lit(name).alias("axis"),
                pos.alias("position"),
                pl.col(name).cast(pl.Utf8).alias("value"),
                pl.col(y).alias("_metric"),
                *[pl.col(c) for c in with_notes(data, []) if c in data.columns],
            )
        )
        labels.extend({"axis": name, "position": p, "label": text} for p, text in marks)
    lines = pl.concat(placed).filter(pl.col("position").is_not_null())
    ticks = pl.DataFrame(labels, schema={"axis": pl.Utf8, "position": pl.Float64, "label": pl.Utf8})
    x = alt.X(
        "axis:N",
        sort=axes,
        title=None,
        scale=alt.Scale(type="point", padding=0.3),
        axis=alt.Axis(
            orient="top",
            labelAngle=0,
            domain=False,
            ticks=False,
            labelFontWeight="bold",
            labelPadding=8,
        ),
    )
    frame = alt.Scale(domain=[-0.04, 1.04])  # room for the labels at either end
    pos_y = alt.Y("position:Q", axis=None, scale=frame)
    label = ink(theme)  # the axes, their ticks and labels: readable on JupyterLab's dark theme
    keep = alt.param(name=KEEP, value=[])
    strong = "!length(keep) || indexof(keep, datum.branch) >= 0"
    rules = (
        alt.Chart(
            values(pl.DataFrame({"axis": axes, "lo": [0.0] * len(axes), "hi": [1.0] * len(axes)}))
        )
        .mark_rule(color=label)
        .encode(x=x, y=alt.Y("lo:Q", axis=None, scale=frame), y2="hi:Q")
    )
    drawn = (
        alt.Chart(values(lines))
        .mark_line(strokeWidth=1.5)
        .encode(
            x=x,
            y=pos_y,
            detail="branch:N",
            color=alt.Color(
                "_metric:Q",
                title=y,
                scale=alt.Scale(scheme="viridis"),
                legend=alt.Legend(title=y),
            ),
            opacity=alt.condition(strong, alt.value(0.75), alt.value(0.06)),
            tooltip=[alt.Tooltip("branch:N"), alt.Tooltip("_metric:Q", title=y, format=NUMBER)],
        )
        .add_params(keep)
    )
    dots = (
        alt.Chart(values(lines))
        .mark_circle(size=22, opacity=0.6)
        .encode(
            x=x,
            y=pos_y,
            color=alt.Color(
                "_metric:Q",
                title=y,
                scale=alt.Scale(scheme="viridis"),
                legend=alt.Legend(title=y),
            ),
            tooltip=tooltips(
                lines, ["branch", "axis", "value", "_metric"], {"_metric": y, "axis": "axis"}
            ),
        )
        .add_params(pick(), brush(["x", "y"]))
    )
    text = (
        alt.Chart(values(ticks))
        .mark_text(align="left", dx=5, fontSize=10, color=label)
        .encode(x=x, y=pos_y, text="label:N")
    )
    marks = alt.Chart(values(ticks)).mark_tick(color=label, size=8).encode(x=x, y=pos_y)
    chart = layered(rules, drawn, dots, marks, text).properties(
        width=width,
        height=height,
        title=title or f"{y} across {', '.join(axes[:-1])}",
    )
    return themed(chart, theme)


__all__ = ["parallel", "parallel_why_not"]
