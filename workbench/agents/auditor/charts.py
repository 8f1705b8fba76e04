"""The auditor's chart in one line: recall against budget (what its demo and notebooks show)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...charts import metric_vs_param
from ...errors import InvalidValue

if TYPE_CHECKING:
    import altair as alt

    from ...journal import Journal


def recall_vs_budget(
    journal: Journal, sweep: int | None = None, **kw: Any
) -> alt.LayerChart | alt.FacetChart:
    """The auditor's sweep in one line: recall against budget (log scale), mean ± 95% CI."""
    df = journal.matrix(sweep=sweep, metrics=["recall"])
    if "budget" not in df.columns or df.is_empty():
        raise InvalidValue("no recall observations with a budget parameter yet; run a sweep first")
    import polars as pl

    df = df.filter(pl.col("budget").is_not_null())
    kw.setdefault("log_x", True)
    return metric_vs_param(df, x="budget", y="recall", **kw)
