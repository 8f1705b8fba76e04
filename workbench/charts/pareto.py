"""The ``pareto`` view: two objectives against each other, the forks no other fork beats on
both (the Pareto front) marked and joined by a line; a multi-objective study's objectives and
directions by default, any two metrics otherwise."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import brush, cannot, layered, pick, picked_size, themed, tooltips, values, with_notes
from .data import ORDER, STATE

if TYPE_CHECKING:
    import altair as alt
    import polars as pl


def pareto_why_not(table: pl.DataFrame, pair: list[str]) -> str | None:
    """Why ``pareto`` cannot draw these rows (None: it can)."""
    if len(pair) < 2 or pair[0] == pair[1]:
        return "pareto needs two metrics: pick a second one (y2) to trade the first against"
    missing = [m for m in pair if m not in table.columns]
    if missing:
        return f"no metric {missing[0]!r} in this selection"
    n = table.drop_nulls(pair).height
    if n < 2:
        return f"pareto needs two forks with both {pair[0]} and {pair[1]}; there are {n}"
    return None


def front(table: pl.DataFrame, pair: list[str], directions: list[str]) -> list[int]:
    """The branches no other branch beats: at least as good on both metrics, better on one."""
    rows = table.drop_nulls(pair).select("branch", *pair).rows()
    signs = [1.0 if d == "maximize" else -1.0 for d in directions]
    scored = [(b, signs[0] * u, signs[1] * v) for b, u, v in rows]
    out = []
    for b, u, v in scored:
        beaten = any(
            (u2 >= u and v2 >= v) and (u2 > u or v2 > v) for b2, u2, v2 in scored if b2 != b
        )
        if not beaten:
            out.append(b)
    return out


def pareto(
    table: pl.DataFrame,
    pair: list[str],
    directions: list[str],
    *,
    params: list[str] | None = None,
    order_label: str = "fork",
    title: str | None = None,
    width: int = 420,
    height: int = 320,
    theme: str = "light",
) -> alt.LayerChart:
    """``pair[1]`` against ``pair[0]``, each fork a point (its params in the tooltip; click to
    pick it), the front in colour and joined in order of the first metric."""
    import altair as alt
    import polars as pl

    why = pareto_why_not(table, pair)
    if why:
        raise cannot("pareto", why)
    a, b = pair
    best = set(front(table, pair, directions))
    shown = [c for c in (params or []) if c in table.columns and c not in pair]
    cols = with_notes(
        table, ["branch", a, b, *shown, *[c for c in (ORDER, STATE) if c in table.columns]]
    )
    data = (
        table.drop_nulls(pair)
        .select(list(dict.fromkeys(cols)))
        .with_columns(
            pl.when(pl.col("branch").is_in(list(best)))
            .then(pl.lit("Pareto front"))
            .otherwise(pl.lit("dominated"))
            .alias("_front")
        )
    )
    x = alt.X(f"{a}:Q", title=f"{a} ({directions[0][:3]})", scale=alt.Scale(zero=False))
    y = alt.Y(f"{b}:Q", title=f"{b} ({directions[1][:3]})", scale=alt.Scale(zero=False))
    titles = {ORDER: order_label, STATE: "state", "_front": "on the front"}
    points = (
        alt.Chart(values(data))
        .mark_circle(opacity=0.8)
        .encode(
            x=x,
            y=y,
            color=alt.Color(
                "_front:N",
                title=None,
                scale=alt.Scale(domain=["Pareto front", "dominated"], range=["#e45756", "#9e9e9e"]),
            ),
            size=picked_size(50, 180),
            tooltip=tooltips(data, ["branch", a, b, *shown, ORDER, STATE, "_front"], titles),
        )
        .add_params(pick(), brush(["x", "y"]))
    )
    edge = (
        alt.Chart(values(data.filter(pl.col("_front") == "Pareto front").sort(a)))
        .mark_line(color="#e45756")
        .encode(x=x, y=y, order=f"{a}:Q")
    )
    chart = layered(edge, points).properties(
        width=width,
        height=height,
        title=title or f"{b} against {a}: {len(best)} forks on the Pareto front",
    )
    return themed(chart, theme)


__all__ = ["front", "pareto", "pareto_why_not"]
