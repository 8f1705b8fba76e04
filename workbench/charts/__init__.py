"""Results views over the journal's matrix, as Vega-Lite specs (altair charts) a browser draws
and answers back from (tooltips, a click that picks a branch, a brush): one function per view,
shared by the server, the widgets and ``lithify chart --kind``.

    metric      a metric against a parameter, mean and 95% band    metric_vs_param
    history     a metric by fork (trial) order, best so far        history
    importance  each parameter's importance (optuna, fANOVA)       importance
    slice       a metric against each varied parameter             slices
    contour     a metric over two parameters                       contour
    parallel    parallel coordinates, a real axis each             parallel
    steps       learning curves reported with sweep.report          steps
    pareto      two objectives, the Pareto front                   pareto
    timeline    each fork from start to end, coloured by state     timeline
    rank        two parameters, each fork coloured by its rank     rank
    edf         the empirical distribution of a metric             edf

``view(journal, kind, Selection(...))`` draws any of them for a sweep, several, branch ids or a
filter expression; ``why_not`` says per view why it cannot draw. ``default_axes`` is the one
axes rule every client follows; ``save`` writes PNG, SVG, HTML or JSON. Importing this package
switches altair to an offline renderer (``offline``), so a chart in a notebook cell needs no
network; altair itself loads only when a chart is drawn.
"""

from __future__ import annotations

from . import offline
from .axes import Axes, auto_log_x, default_axes
from .base import THEMES, save, spec, themed
from .contour import contour
from .data import Results, Selection, gather
from .edf import edf
from .history import history
from .importance import importance, importances
from .metric import AGGREGATIONS, metric_vs_param
from .parallel import parallel
from .pareto import pareto
from .rank import rank
from .slices import slices
from .steps import step_frame, steps
from .timeline import timeline
from .views import KINDS, Drawn, view, why_not

offline.watch()

__all__ = [
    "AGGREGATIONS",
    "Axes",
    "Drawn",
    "KINDS",
    "Results",
    "Selection",
    "THEMES",
    "auto_log_x",
    "contour",
    "default_axes",
    "edf",
    "gather",
    "history",
    "importance",
    "importances",
    "metric_vs_param",
    "parallel",
    "pareto",
    "rank",
    "save",
    "slices",
    "spec",
    "step_frame",
    "steps",
    "themed",
    "timeline",
    "view",
    "why_not",
]
