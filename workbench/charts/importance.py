"""The ``importance`` view: how much each parameter decides a metric, through
``optuna.importance`` (fANOVA by default) on the selection's forks, as bars. An adaptive
sweep's own Optuna study is used as it is; any other selection becomes an in-memory study
whose distributions are the values the forks took."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InvalidValue
from .base import bounds, cannot, is_log, is_number, layered, themed, values, varied

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

EVALUATORS = ("fanova", "mdi")
MIN_FORKS = 4  # fewer, and a forest of 64 trees says nothing


def importance_why_not(table: pl.DataFrame, y: str | None, params: list[str]) -> str | None:
    """Why ``importance`` cannot draw these rows (None: it can)."""
    import polars as pl

    if y is None or y not in table.columns:
        return f"no metric {y!r} to explain" if y else "pick a metric"
    rows = table.filter(pl.col(y).is_not_null())
    moving = varied(rows, params)
    if len(moving) < 2:
        which = f"only {moving[0]} varies" if moving else "no parameter varies"
        return f"importance needs two parameters that vary; {which} in this selection"
    n = rows.drop_nulls(moving).height
    if n < MIN_FORKS:
        return f"importance needs {MIN_FORKS} forks with {y} and their parameters; there are {n}"
    return None


def _evaluator(name: str) -> Any:
    from optuna.importance import (
        FanovaImportanceEvaluator,
        MeanDecreaseImpurityImportanceEvaluator,
    )

    if name == "fanova":
        return FanovaImportanceEvaluator(seed=0)  # seeded: the same forks, the same bars
    if name == "mdi":
        return MeanDecreaseImpurityImportanceEvaluator(seed=0)
    raise InvalidValue(f"the importance evaluator is one of {', '.join(EVALUATORS)}, not {name!r}")


def _study_of(table: pl.DataFrame, y: str, params: list[str]) -> Any:
    """An in-memory Optuna study of these rows: one completed trial per fork."""
    import optuna
    from optuna.distributions import (
        BaseDistribution,
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )
    from optuna.trial import TrialState, create_trial

    from ..sweep import engines

    engines.quiet()
    rows = table.drop_nulls([y, *params])
    dists: dict[str, BaseDistribution] = {}
    for p in params:
        col = rows[p]
        if is_number(rows, p):
            (lo, hi), log = bounds(col), is_log(rows, p)
            if col.dtype.is_integer():
                dists[p] = IntDistribution(int(lo), int(hi), log=log)
            else:
                dists[p] = FloatDistribution(float(lo), float(hi), log=log)
        else:
            dists[p] = CategoricalDistribution(sorted({str(v) for v in col.to_list()}))
    study = optuna.create_study(direction="maximize")
    for r in rows.iter_rows(named=True):
        chosen = {
            p: (str(r[p]) if isinstance(dists[p], CategoricalDistribution) else r[p])
            for p in params
        }
        study.add_trial(
            create_trial(
                state=TrialState.COMPLETE, value=float(r[y]), params=chosen, distributions=dists
            )
        )
    return study


def importances(
    table: pl.DataFrame,
    y: str,
    params: list[str],
    *,
    study: Any = None,
    objective: int = 0,
    evaluator: str = "fanova",
) -> dict[str, float]:
    """Each varied parameter's importance for ``y`` (they sum to 1), most important first.
    ``study``: an adaptive sweep's Optuna study, whose ``objective``-th value is ``y``."""
    import optuna

    why = importance_why_not(table, y, params)
    if why:
        raise cannot("importance", why)
    import polars as pl

    moving = varied(table.filter(pl.col(y).is_not_null()), params)
    how = _evaluator(evaluator)
    if study is None:
        study = _study_of(table, y, moving)
        target = None
    else:
        multi = len(study.directions) > 1
        target = (lambda t: t.values[objective]) if multi else None
    found = optuna.importance.get_param_importances(study, evaluator=how, target=target)
    return {k: float(v) for k, v in found.items()}


def importance(
    table: pl.DataFrame,
    y: str,
    params: list[str],
    *,
    study: Any = None,
    objective: int = 0,
    evaluator: str = "fanova",
    title: str | None = None,
    width: int = 420,
    theme: str = "light",
) -> alt.LayerChart:
    """A bar per varied parameter: its importance for ``y``, most important on top."""
    import altair as alt
    import polars as pl

    found = importances(table, y, params, study=study, objective=objective, evaluator=evaluator)
    n = table[y].drop_nulls().len()
    data = pl.DataFrame(
        {"param": list(found), "importance": list(found.values())},
        schema={"param": pl.Utf8, "importance": pl.Float64},
    ).sort("importance", descending=True, maintain_order=True)
    base = alt.Chart(values(data)).encode(  # in the rows' order (a sort per layer conflicts)
        y=alt.Y("param:N", sort=None, title=None),
        x=alt.X("importance:Q", title="importance", scale=alt.Scale(domain=[0, 1])),
        tooltip=[
            alt.Tooltip("param:N"),
            alt.Tooltip("importance:Q", format=".3f"),
        ],
    )
    bars = base.mark_bar(color="#4c78a8")
    labels = base.mark_text(align="left", dx=4).encode(text=alt.Text("importance:Q", format=".2f"))
    name = {"fanova": "fANOVA", "mdi": "mean decrease impurity"}[evaluator]
    chart = layered(bars, labels).properties(
        width=width,
        height=max(60, 28 * data.height),
        title=title or f"what decides {y} ({name} over {n} forks)",
    )
    return themed(chart, theme)


__all__ = ["EVALUATORS", "importance", "importance_why_not", "importances"]
