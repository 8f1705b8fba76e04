"""Every results view behind one call: ``view(journal, kind, selection, ...)`` gathers the
selection's table, picks the axes by ``default_axes``' rule and draws; ``why_not`` says, per
view, in one line why it cannot draw (None when it can). The server's ``chart.json``, the
widgets and ``lithify chart --kind`` all come here.

The views are one table, ``VIEWS``: each ``ViewKind`` is its name, how it draws, why it cannot,
and how a brush acts on it; a new view is one entry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import CannotDraw, InvalidValue
from .axes import Axes, axes_of
from .base import cannot, check_theme, is_log, is_number, spec, themed, values, varied
from .contour import contour, contour_why_not
from .data import STATE, Results, Selection, gather
from .edf import edf, edf_why_not
from .history import history, history_why_not
from .importance import EVALUATORS, importance, importance_why_not
from .metric import AGGREGATIONS, metric_vs_param
from .parallel import parallel, parallel_why_not
from .pareto import pareto, pareto_why_not
from .rank import rank, rank_pair, rank_why_not
from .slices import slice_why_not, slices
from .steps import MAX_FORKS, step_frame, steps, steps_why_not
from .timeline import run_frame, timeline, timeline_why_not

if TYPE_CHECKING:
    from ..journal import Journal

STEP_CHECK = 200  # forks whose events `why_not` reads to tell whether any reported steps


@dataclass(frozen=True)
class Drawn:
    """A drawn view: the altair chart, and what a client needs to know about it."""

    chart: Any
    kind: str
    meta: dict[str, Any] = field(default_factory=dict)

    def spec(self) -> dict[str, Any]:
        """The Vega-Lite spec, data inline, with ``usermeta.lithify``: the view, the selection,
        the axes, whether x is logarithmic, how a brush acts (zoom or filter)."""
        return spec(self.chart, kind=self.kind, **self.meta)


@dataclass(frozen=True)
class Choice:
    """What a view is drawn with: the axes by the rule, and the second metric."""

    axes: Axes
    y2: str | None


def _choose(
    journal: Journal,
    res: Results,
    x: str | None,
    y: str | None,
    color: str | None,
    y2: str | None,
) -> Choice:
    if y is None and res.objectives:
        y = res.objectives[0]
    axes = axes_of(journal, res.params, res.metrics, res.table, x=x, y=y, color=color)
    if y2 is None:
        others = [o for o in res.objectives[1:]] or [m for m in res.metrics if m != axes.y]
        y2 = others[0] if others else None
    return Choice(axes, y2)


def why_not(
    journal: Journal,
    selection: Selection | None = None,
    *,
    y: str | None = None,
    y2: str | None = None,
    res: Results | None = None,
) -> dict[str, str | None]:
    """For each view, why it cannot draw this selection in one line, or None when it can
    (cheap checks: no chart is drawn)."""
    res = res if res is not None else gather(journal, selection or Selection())
    c = _choose(journal, res, None, y, None, y2)
    t, y = res.table, c.axes.y
    asked = _Asked(journal, res, c, y or "")
    free = {name: kind.why_not(asked) for name, kind in VIEWS.items() if not kind.metric}
    if waiting(res, y):  # every view can say so (chart.json draws it), the steps view draws
        steps = None  # the curves reported so far, if there are any
        if y is not None and y in t.columns:
            steps = VIEWS["steps"].why_not(asked)
        return {name: steps if name == "steps" else free.get(name) for name in VIEWS}
    if y is None or y not in t.columns:
        why = f"no {y} observed yet in this selection" if y else "no metric observed yet here"
        return {name: free[name] if name in free else why for name in VIEWS}
    return {name: free[name] if name in free else k.why_not(asked) for name, k in VIEWS.items()}


@dataclass(frozen=True)
class _Asked:
    """What a view's why-not reads: the selection's results and the chosen axes (``y`` is ""
    when there is no metric: only a view that draws none asks then)."""

    journal: Journal
    res: Results
    c: Choice
    y: str


def _metric_why_not(a: _Asked) -> str | None:
    x = a.c.axes.x
    if x is None:
        return "no parameter to put on the x axis"
    import polars as pl

    t = a.res.table
    if t.filter(pl.col(a.y).is_not_null() & pl.col(x).is_not_null()).height == 0:
        return f"no fork has both {x} and {a.y}"
    return None


def _steps_why_not(a: _Asked) -> str | None:
    t = a.res.table
    if t.height > MAX_FORKS:
        return steps_why_not(t.head(0), a.y, t.height)
    sample = t["branch"].to_list()[:STEP_CHECK]
    return steps_why_not(step_frame(a.journal, sample, a.y), a.y, len(sample))


def view(
    journal: Journal,
    kind: str = "metric",
    selection: Selection | None = None,
    *,
    x: str | None = None,
    y: str | None = None,
    y2: str | None = None,
    color: str | None = None,
    facet: str | None = None,
    params: list[str] | None = None,
    agg: str = "mean",
    log_x: bool | None = None,
    direction: str | None = None,
    direction2: str | None = None,
    evaluator: str = "fanova",
    theme: str = "light",
    res: Results | None = None,
) -> Drawn:
    """Draw one view (``KINDS``) of a selection (default: every branch). Axes not given follow
    ``default_axes``' rule (a study's objective first); ``log_x=None``: a log x axis when the
    parameter is positive and spans a factor of 20. CannotDraw says why a view cannot draw."""
    if kind not in KINDS:
        raise InvalidValue(f"the view is one of {', '.join(KINDS)}, not {kind!r}")
    if agg not in AGGREGATIONS:
        raise InvalidValue(f"agg is one of {', '.join(AGGREGATIONS)}, not {agg!r}")
    if evaluator not in EVALUATORS:
        raise InvalidValue(f"the evaluator is one of {', '.join(EVALUATORS)}, not {evaluator!r}")
    check_theme(theme)
    from altair.utils.schemapi import debug_mode

    selection = selection or Selection()
    res = res if res is not None else gather(journal, selection)
    opts = Options(
        x, y, y2, color, facet, params, agg, log_x, direction, direction2, evaluator, theme
    )
    with debug_mode(False):  # no check of each piece as it is built: the tests check views
        return _draw(journal, kind, selection, res, opts)


@dataclass(frozen=True)
class Options:
    """What ``view`` was asked to draw with (None: the rule decides)."""

    x: str | None
    y: str | None
    y2: str | None
    color: str | None
    facet: str | None
    params: list[str] | None
    agg: str
    log_x: bool | None
    direction: str | None
    direction2: str | None
    evaluator: str
    theme: str


def _draw(journal: Journal, kind: str, selection: Selection, res: Results, o: Options) -> Drawn:
    c = _choose(journal, res, o.x, o.y, o.color, o.y2)
    y = c.axes.y
    wait = waiting(res, y)
    if wait is None or not VIEWS[kind].metric:  # the timeline draws forks that have no value
        return _drawn(journal, kind, selection, res, o, c)
    if kind == "steps" and y is not None and y in res.table.columns:
        try:  # the curves reported so far, if there are any
            return _drawn(journal, kind, selection, res, o, c)
        except CannotDraw:
            pass
    return _placeholder(kind, selection, res, y, wait, o.theme)


def _drawn(
    journal: Journal, kind: str, selection: Selection, res: Results, o: Options, c: Choice
) -> Drawn:
    y2, params = o.y2, o.params
    y = c.axes.y
    if y is None and VIEWS[kind].metric:
        raise cannot(kind, f"no metric observed yet in {selection.describe()}")
    for name, given in (("metric", y), ("second metric", y2)):
        if given is not None and given not in res.table.columns:
            raise InvalidValue(
                f"there is no {name} {given!r} in {selection.describe()}; the metrics are "
                f"{', '.join(res.metrics) or 'none yet'}"
            )
    t = res.table
    chosen = [p for p in (params or res.params) if p in t.columns] if params else res.params
    meta: dict[str, Any] = {
        "selection": selection.describe(),
        "y": y,
        "brush": VIEWS[kind].brush,
        "forks": int(t.height),
    }
    chart, more = VIEWS[kind].draw(_Drawing(journal, res, c, selection, o, y or "", chosen))
    meta.update(more)
    return Drawn(chart, kind, meta)


UNFINISHED = ("running", "pending")  # the states of forks that may still give a value


def waiting(res: Results, y: str | None) -> str | None:
    """Why a selection has nothing to draw *yet*, in one line (None: it has values of ``y``,
    or never will): no fork has a value of ``y`` (``workbench.outcome``'s: a running fork's
    reports are not one) while some forks still run or wait to."""
    import polars as pl

    t = res.table
    if y is not None and y in t.columns and t[y].drop_nulls().len():
        return None
    if STATE not in t.columns:
        return None
    counts = dict(t.group_by(STATE).len().iter_rows())
    unfinished = [(s, counts[s]) for s in UNFINISHED if counts.get(s)]
    if not unfinished:
        return None
    ended = t.filter(~pl.col(STATE).is_in(UNFINISHED)).height
    said = ", ".join(f"{n} {s}" for s, n in unfinished)
    more = f", {ended} ended without one" if ended else ""
    return f"no value of {y or 'any metric'} yet: {said}{more}"


def _placeholder(
    kind: str, selection: Selection, res: Results, y: str | None, why: str, theme: str
) -> Drawn:
    """What a view is while no fork has a value yet: the reason, where the chart will be
    (``usermeta.lithify.waiting`` says it too)."""
    import altair as alt
    import polars as pl

    text = pl.DataFrame({"text": [why]})
    chart = (
        alt.Chart(values(text))
        .mark_text(fontSize=13, color="#888888")
        .encode(text="text:N")
        .properties(width=420, height=120, title=f"{kind}: {selection.describe()}")
    )
    meta = {
        "selection": selection.describe(),
        "y": y,
        "brush": None,
        "forks": int(res.table.height),
        "waiting": why,
    }
    return Drawn(themed(chart, theme), kind, meta)


@dataclass(frozen=True)
class _Drawing:
    """What a view draws from: the results, the axes, the options, the parameters chosen."""

    journal: Journal
    res: Results
    c: Choice
    selection: Selection
    o: Options
    y: str
    chosen: list[str]

    def seeded(self) -> list[str]:
        """The parameters that vary, seeds included (what a legend or tooltip lists)."""
        return varied(self.res.table, self.res.params, seeds=True)


Chart = tuple[Any, dict[str, Any]]


def _draw_metric(d: _Drawing) -> Chart:
    o = d.o
    return _metric(d.res, d.c, d.selection, o.agg, o.log_x, o.theme, o.facet)


def _draw_history(d: _Drawing) -> Chart:
    res, o = d.res, d.o
    t = res.table
    direction = res.direction(d.y, o.direction)
    chart = history(
        t, d.y, direction=direction, order_label=res.order_label, params=d.seeded(), theme=o.theme
    )
    return chart, {}


def _draw_importance(d: _Drawing) -> Chart:
    res, y = d.res, d.y
    objective = res.objectives.index(y) if y in res.objectives else 0
    study = res.study(d.journal) if y in res.objectives else None
    chart = importance(
        res.table,
        y,
        d.chosen,
        study=study,
        objective=objective,
        evaluator=d.o.evaluator,
        theme=d.o.theme,
    )
    return chart, {}


def _draw_slice(d: _Drawing) -> Chart:
    return slices(d.res.table, d.y, d.chosen, order_label=d.res.order_label, theme=d.o.theme), {}


def _draw_contour(d: _Drawing) -> Chart:
    res, o = d.res, d.o
    pair = o.params if o.params and len(o.params) == 2 else None
    direction = res.direction(d.y, o.direction)
    return contour(res.table, d.y, res.params, pair=pair, direction=direction, theme=o.theme), {}


def _draw_parallel(d: _Drawing) -> Chart:
    return parallel(d.res.table, d.y, params=d.chosen, theme=d.o.theme), {}


def _draw_steps(d: _Drawing) -> Chart:
    t = d.res.table
    ids = t["branch"].to_list()
    if len(ids) > MAX_FORKS:
        raise cannot("steps", steps_why_not(t.head(0), d.y, len(ids)) or "")
    curves = step_frame(d.journal, ids, d.y)
    chart = steps(
        curves,
        d.y,
        table=t,
        params=d.seeded(),
        order_label=d.res.order_label,
        theme=d.o.theme,
    )
    return chart, {}


def _draw_pareto(d: _Drawing) -> Chart:
    res, o, y2 = d.res, d.o, d.c.y2
    pair = [m for m in (d.y, y2) if m is not None]
    dirs = [res.direction(pair[0], o.direction)]
    if len(pair) > 1:
        dirs.append(res.direction(pair[1], o.direction2))
    chart = pareto(
        res.table, pair, dirs, params=d.seeded(), order_label=res.order_label, theme=o.theme
    )
    return chart, {"y2": y2}


def _draw_timeline(d: _Drawing) -> Chart:
    res = d.res
    y = d.y if d.y in res.table.columns else None
    runs = run_frame(d.journal, res.table)
    chart = timeline(
        res.table, runs, y=y, params=d.seeded(), order_label=res.order_label, theme=d.o.theme
    )
    return chart, {}


def _draw_rank(d: _Drawing) -> Chart:
    res, o = d.res, d.o
    x = d.c.axes.x
    given = o.params if o.params and len(o.params) == 2 else None  # as the contour's
    pair = rank_pair(res.table, res.params, x, given)
    chart = rank(
        res.table,
        d.y,
        res.params,
        x=x,
        pair=pair if len(pair) == 2 else None,
        direction=res.direction(d.y, o.direction),
        shown=d.seeded(),
        order_label=res.order_label,
        theme=o.theme,
    )
    return chart, {"x": pair[0]}


def _draw_edf(d: _Drawing) -> Chart:
    res = d.res
    chart = edf(res.table, d.y, params=d.seeded(), order_label=res.order_label, theme=d.o.theme)
    return chart, {}


@dataclass(frozen=True)
class ViewKind:
    """One results view: how it draws, why it cannot (one line, or None), how a brush on it
    acts ("zoom", "filter", or None for none), and whether it draws a metric's values (the
    timeline draws when forks ran, values or not: it never waits for one)."""

    name: str
    draw: Callable[[_Drawing], Chart]
    why_not: Callable[[_Asked], str | None]
    brush: str | None = "zoom"
    metric: bool = True


def _table(t_why: Callable[[Any, str, list[str]], str | None]) -> Callable[[_Asked], str | None]:
    """A why-not of (table, metric, parameters), as a view's."""
    return lambda a: t_why(a.res.table, a.y, a.res.params)


VIEWS: dict[str, ViewKind] = {
    v.name: v
    for v in (
        ViewKind("metric", _draw_metric, _metric_why_not),
        ViewKind("history", _draw_history, lambda a: history_why_not(a.res.table, a.y)),
        ViewKind("importance", _draw_importance, _table(importance_why_not), None),
        ViewKind("slice", _draw_slice, _table(slice_why_not), None),
        ViewKind("contour", _draw_contour, _table(contour_why_not), None),
        ViewKind("parallel", _draw_parallel, _table(parallel_why_not), "filter"),
        ViewKind("steps", _draw_steps, _steps_why_not),
        ViewKind(
            "pareto",
            _draw_pareto,
            lambda a: pareto_why_not(a.res.table, [m for m in (a.y, a.c.y2) if m is not None]),
        ),
        ViewKind(
            "timeline",
            _draw_timeline,
            lambda a: timeline_why_not(run_frame(a.journal, a.res.table)),
            metric=False,
        ),
        ViewKind(
            "rank",
            _draw_rank,
            lambda a: rank_why_not(a.res.table, a.y, a.res.params, a.c.axes.x),
        ),
        ViewKind("edf", _draw_edf, lambda a: edf_why_not(a.res.table, a.y)),
    )
}
KINDS = tuple(VIEWS)


def _metric(
    res: Results,
    c: Choice,
    selection: Selection,
    agg: str,
    log_x: bool | None,
    theme: str,
    facet: str | None = None,
) -> tuple[Any, dict[str, Any]]:
    """The metric view of a selection: the rule's x, colour and a log x when it applies."""
    import polars as pl

    x, y, color = c.axes.x, c.axes.y, c.axes.color
    assert y is not None
    if x is None:
        raise cannot("metric", f"no parameter to put on the x axis in {selection.describe()}")
    t = res.table
    if x not in t.columns:
        raise cannot(
            "metric",
            f"no parameter {x!r} here; the parameters are {', '.join(res.params) or 'none'}",
        )
    if selection.sweeps:  # several sweeps overlaid: one colour each
        t = t.with_columns(pl.format("sweep {}", pl.col("sweep")).alias("sweep"))
        color = "sweep"
    if color is not None and color not in t.columns:
        color = None  # the agent's colour is not in this selection: one line
    t = t.filter(pl.col(x).is_not_null() & pl.col(y).is_not_null())
    if t.is_empty():
        raise cannot("metric", f"no fork in {selection.describe()} has both {x} and {y}")
    auto = log_x is None
    log = is_log(t, x) if auto else bool(log_x)
    if log and not (is_number(t, x) and t[x].min() > 0):  # type: ignore[operator]
        log = False  # a log axis only for positive numbers
    if facet is not None and facet not in t.columns:
        raise InvalidValue(f"there is no parameter {facet!r} to facet by")
    chart = metric_vs_param(
        t, x=x, y=y, color=color, facet=facet, log_x=log, agg=agg, theme=theme, params=res.params
    )
    return chart, {"x": x, "color": color, "log_x": log, "log_x_auto": auto}


__all__ = ["KINDS", "VIEWS", "Drawn", "ViewKind", "view", "waiting", "why_not"]
