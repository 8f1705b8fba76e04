"""The ``timeline`` view (Optuna's ``plot_timeline``): each fork of a selection as a bar from
when its runner started it to when it ended, one row per fork (a study's: per trial), coloured
by its state; a fork that still runs ends now. The times are the forks' run records
(``journal.runs()``: ``started``, ``finished``, ``wall_ms``); it needs no metric."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..outcome import STATES, state_of
from .base import PICK, brush, cannot, pick, themed, tooltips, values, with_notes
from .data import ORDER, STATE

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

    from ..port import JournalPort

# a state's colour, every view alike; a state not named here (none yet) gets the last one
STATE_COLORS = {
    "complete": "#4c78a8",
    "pruned": "#f58518",
    "failed": "#e45756",
    "cancelled": "#9e9e9e",
    "running": "#54a24b",
    "paused": "#b279a2",
    "pending": "#d0d0d0",
}
OTHER = "#7f7f7f"
RUN_SCHEMA = ("branch", "_status", "_started", "_finished", "_wall_ms")
UNITS = ((600, "seconds", 1), (36_000, "minutes", 60), (None, "hours", 3600))  # by the span


def run_frame(journal: JournalPort, table: pl.DataFrame) -> pl.DataFrame:
    """The run records of the forks in ``table`` (one row per branch): ``branch``,
    ``_status``, ``_started``, ``_finished`` (unix ms) and ``_wall_ms``; a branch no runner
    recorded has no row."""
    import polars as pl

    sweeps = table["sweep"].drop_nulls().unique().to_list() if "sweep" in table.columns else []
    wanted = set(table["branch"].to_list())
    runs = journal.runs(sweeps[0] if len(sweeps) == 1 else None)
    rows = [
        (r.branch, r.status, r.started, r.finished, r.wall_ms) for r in runs if r.branch in wanted
    ]
    types = (pl.Int64, pl.Utf8, pl.Int64, pl.Int64, pl.Float64)
    return pl.DataFrame(rows, schema=dict(zip(RUN_SCHEMA, types, strict=True)), orient="row")


def timeline_why_not(runs: pl.DataFrame) -> str | None:
    """Why ``timeline`` cannot draw these run records (None: it can)."""
    if runs.is_empty() or runs["_started"].drop_nulls().len() == 0:
        return (
            "no fork in this selection has a recorded start: a sweep's runner records when "
            "each fork starts and ends"
        )
    return None


def bars(table: pl.DataFrame, runs: pl.DataFrame, now: int) -> pl.DataFrame:
    """One row per fork that started: ``_state`` (its trial state; where that says only that it
    has not ended, its run's: cancelled, pending), ``_start``, ``_end`` (its finish; now while
    it runs; else its start plus its wall time) and ``_seconds``."""
    import polars as pl

    rows = table.join(runs, on="branch", how="inner").filter(pl.col("_started").is_not_null())
    told = rows[STATE].to_list() if STATE in rows.columns else [None] * rows.height
    states = [
        state_of(status) if s is None or (s == "running" and status != "running") else s
        for s, status in zip(told, rows["_status"].to_list(), strict=True)
    ]
    start, finish = pl.col("_started"), pl.col("_finished")
    end = (
        pl.when(pl.col(STATE) == "running")
        .then(pl.max_horizontal(start, pl.lit(now)))
        .when(finish.is_not_null() & (finish >= start))
        .then(finish)
        .when(pl.col("_wall_ms").is_not_null())
        .then(start + pl.col("_wall_ms").round().cast(pl.Int64))
        .otherwise(start)
    )
    return (
        rows.with_columns(pl.Series(STATE, states, dtype=pl.Utf8).fill_null("unknown"))
        .with_columns(start.alias("_start"), end.alias("_end"))
        .with_columns(((pl.col("_end") - pl.col("_start")) / 1000).alias("_seconds"))
        .sort("_start", ORDER if ORDER in rows.columns else "branch")
    )


def _unit(seconds: float) -> tuple[str, int]:
    """The unit a span of time reads in: seconds, minutes or hours."""
    return next((name, size) for most, name, size in UNITS if most is None or seconds <= most)


def _when(ms: int) -> str:
    """A unix time in ms as the local date and time it was."""
    from datetime import datetime

    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


def timeline(
    table: pl.DataFrame,
    runs: pl.DataFrame,
    *,
    y: str | None = None,
    params: list[str] | None = None,
    order_label: str = "fork",
    now: int | None = None,
    title: str | None = None,
    width: int = 520,
    theme: str = "light",
) -> alt.Chart:
    """A bar per fork of ``table`` (one row per branch) from its start to its end in ``runs``
    (``run_frame``'s), a row per fork or trial number, coloured by state, along the time
    since the first start (in seconds, minutes or hours, by the span); the tooltip gives the
    branch, its ``params``, state, duration, start and ``y``. ``now`` (unix ms, default: the
    clock) is where a running fork's bar ends. Click a bar to pick its branch, drag to zoom."""
    import altair as alt
    import polars as pl

    why = timeline_why_not(runs)
    if why:
        raise cannot("timeline", why)
    if ORDER not in table.columns:
        table = table.sort("branch").with_columns(pl.int_range(1, pl.len() + 1).alias(ORDER))
    data = bars(table, runs, int(time.time() * 1000) if now is None else now)
    first = int(data["_start"].min())  # type: ignore[arg-type]
    unit, size = _unit((int(data["_end"].max()) - first) / 1000)  # type: ignore[arg-type]
    data = data.with_columns(
        ((pl.col("_start") - first) / 1000 / size).alias("_from"),
        ((pl.col("_end") - first) / 1000 / size).alias("_to"),
    )
    shown = [c for c in (params or []) if c in data.columns]
    value = [y] if y is not None and y in data.columns else []
    keep = ["branch", ORDER, STATE, "_start", "_from", "_to", "_seconds", *shown, *value]
    keep = with_notes(data, keep)
    data = data.select(list(dict.fromkeys(keep)))
    present = set(data[STATE].to_list())
    domain = [s for s in STATES if s in present] + sorted(present - set(STATES))
    titles = {ORDER: order_label, STATE: "state", "_seconds": "seconds"}
    tips: list[Any] = tooltips(data, ["branch", ORDER, *shown, STATE, "_seconds", *value], titles)
    tips.append(alt.Tooltip("_start:T", title="started", format="%Y-%m-%d %H:%M:%S"))
    running = int((data[STATE] == "running").sum())
    height = min(max(16 * data.height, 120), 480)
    chart: alt.Chart = (
        alt.Chart(values(data))
        .mark_bar()
        .encode(
            x=alt.X("_from:Q", title=f"{unit} since the first start, {_when(first)}"),
            x2="_to:Q",
            y=alt.Y(
                f"{ORDER}:O",
                title=order_label,
                sort="ascending",
                axis=alt.Axis(labelOverlap="greedy"),
            ),
            color=alt.Color(
                f"{STATE}:N",
                title="state",
                scale=alt.Scale(domain=domain, range=[STATE_COLORS.get(s, OTHER) for s in domain]),
            ),
            opacity=alt.condition(alt.param(PICK, empty=True), alt.value(0.9), alt.value(0.35)),
            tooltip=tips,
        )
        .add_params(pick(), brush(["x"]))
        .properties(
            width=width,
            height=height,
            title=title
            or (
                f"{data.height} {order_label}s from start to end"
                + (f" ({running} running: their bars end now)" if running else "")
            ),
        )
    )
    return themed(chart, theme)


__all__ = ["STATE_COLORS", "bars", "run_frame", "timeline", "timeline_why_not"]
