"""The ``rank`` view (Optuna's ``plot_rank``): two parameters against each other, each fork a
point coloured by the rank of its value (1: the best, by the metric's direction); forks
without a value (pruned, failed, still running) are grey marks shaped by their state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InvalidValue
from .base import (
    brush,
    cannot,
    final,
    is_log,
    is_number,
    layered,
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

# how a fork without a value is marked, by its state (anything else: it has no value of y)
NO_VALUE = "no value"
SHAPES = {
    "pruned": "cross",
    "failed": "diamond",
    "cancelled": "square",
    "running": "triangle-up",
    "pending": "triangle-down",
    NO_VALUE: "circle",
}


def rank_pair(
    table: pl.DataFrame, params: list[str], x: str | None = None, given: list[str] | None = None
) -> list[str]:
    """The two parameters a rank view is drawn over: the ones given; else ``x`` (when it
    varies) and the next that varies; else the first two that vary (seeds left out; numbers
    before names)."""
    if given:
        if len(given) != 2:
            raise InvalidValue(f"a rank view is over two parameters, not {len(given)}: {given}")
        for p in given:
            if p not in table.columns:
                raise InvalidValue(f"there is no parameter {p!r}; the parameters are {params}")
        return list(given)
    moving = sorted(varied(table, params), key=lambda p: not is_number(table, p))  # numbers first
    if x in moving:
        moving = [x, *(p for p in moving if p != x)]
    return moving[:2]


def rank_why_not(
    table: pl.DataFrame,
    y: str | None,
    params: list[str],
    x: str | None = None,
    given: list[str] | None = None,
) -> str | None:
    """Why ``rank`` cannot draw these rows (None: it can)."""
    if y is None or y not in table.columns:
        return f"no metric {y!r} to draw" if y else "pick a metric"
    pair = rank_pair(table, params, x, given)
    if len(pair) < 2:
        which = f"only {pair[0]} varies" if pair else "no parameter varies"
        return f"rank needs two parameters that vary; {which} in this selection"
    if table.filter(final(table, y)).drop_nulls(pair).is_empty():
        return f"rank needs a fork with a value of {y} to rank; none here has one"
    return None


def _axis(rows: pl.DataFrame, p: str, channel: str) -> Any:
    """A parameter's encoding: numbers on a linear or log scale, names as categories."""
    import altair as alt

    enc = alt.X if channel == "x" else alt.Y
    if is_number(rows, p):
        log = is_log(rows, p)
        scale = alt.Scale(type="log", nice=False) if log else alt.Scale(zero=False)
        return enc(f"{p}:Q", title=p, scale=scale)
    order = sorted(rows[p].drop_nulls().unique().to_list(), key=lambda v: (str(type(v)), v))
    return enc(f"{p}:N", title=p, sort=order)


def rank(
    table: pl.DataFrame,
    y: str,
    params: list[str],
    *,
    x: str | None = None,
    pair: list[str] | None = None,
    direction: str = "maximize",
    shown: list[str] | None = None,
    order_label: str = "fork",
    title: str | None = None,
    width: int = 420,
    height: int = 320,
    theme: str = "light",
) -> alt.LayerChart:
    """The forks over two parameters (``pair``, else ``x`` and the next that varies), each
    coloured by the rank of its ``y`` (1: the highest, or the lowest with
    ``direction="minimize"``; ties share the better rank); forks without a value drawn as
    grey marks shaped by state (a cross: pruned). ``shown``: more parameters for the
    tooltip. Click a point to pick it."""
    import altair as alt
    import polars as pl

    why = rank_why_not(table, y, params, x, pair)
    if why:
        raise cannot("rank", why)
    a, b = rank_pair(table, params, x, pair)
    rows = table.drop_nulls([a, b])
    if ORDER not in rows.columns:
        rows = rows.sort("branch").with_columns(pl.int_range(1, pl.len() + 1).alias(ORDER))
    extra = [c for c in (shown or []) if c in rows.columns and c not in (a, b)]
    cols = ["branch", ORDER, a, b, y, *extra, *([STATE] if STATE in rows.columns else [])]
    cols = with_notes(rows, cols)
    rows = rows.select(list(dict.fromkeys(cols)))
    counted = final(rows, y)
    place = pl.col(y).rank("min", descending=direction == "maximize").cast(pl.Int64)
    ranked = rows.filter(counted).with_columns(place.alias("_rank")).sort("_rank")
    stopped = pl.col(STATE).is_in(list(SHAPES)) if STATE in rows.columns else pl.lit(False)
    unranked = rows.filter(~counted).with_columns(
        pl.when(stopped).then(pl.col(STATE)).otherwise(pl.lit(NO_VALUE)).alias("_why")
    )
    px, py = _axis(rows, a, "x"), _axis(rows, b, "y")
    titles = {ORDER: order_label, STATE: "state", "_rank": f"rank of {y}", "_why": "state"}
    goal = "highest" if direction == "maximize" else "lowest"
    points = (
        alt.Chart(values(ranked))
        .mark_circle(opacity=0.85, stroke="#555555", strokeWidth=0.5)
        .encode(
            x=px,
            y=py,
            color=alt.Color(
                "_rank:Q",
                title=f"rank ({goal} {y}: 1)",
                scale=alt.Scale(scheme="viridis", reverse=True),
            ),
            size=picked_size(60, 200),
            tooltip=tooltips(ranked, ["branch", ORDER, a, b, y, "_rank", *extra, STATE], titles),
        )
        .add_params(pick(), brush(["x", "y"]))
    )
    layers: list[Any] = [points]
    marked = sorted(set(unranked["_why"].to_list()), key=list(SHAPES).index)
    if unranked.height:  # never a layer without rows (Vega's extents would be infinite)
        layers.append(
            alt.Chart(values(unranked))
            .mark_point(color="#9e9e9e", opacity=0.8, filled=True, size=70)
            .encode(
                x=px,
                y=py,
                shape=alt.Shape(
                    "_why:N",
                    title="no value",
                    scale=alt.Scale(domain=marked, range=[SHAPES[w] for w in marked]),
                ),
                tooltip=tooltips(unranked, ["branch", ORDER, a, b, *extra, "_why"], titles),
            )
        )
    chart = layered(*layers).properties(
        width=width,
        height=height,
        title=title
        or f"{b} against {a}: {ranked.height} {order_label}s ranked by {y} ({goal} first)",
    )
    return themed(chart, theme)


__all__ = ["rank", "rank_pair", "rank_why_not"]
