"""What a results view draws from: one row per branch of a selection (a sweep, several sweeps,
branch ids, a filter expression, or every branch) with its parameters and metrics, in fork
order, with each one's state; for one adaptive sweep, the study's trials in trial order. The
values are ``workbench.outcome``'s: a pruned, failed or running fork's last report is not a
value (``Selection.partial`` counts them)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidValue, NotFound
from ..matrix import STATE_COLUMN, BranchTable, branch_table
from ..outcome import final_values

if TYPE_CHECKING:
    import polars as pl

    from ..journal import Journal

ORDER, STATE = "_order", "_state"  # the columns a Results table adds


@dataclass(frozen=True)
class Selection:
    """Which branches a view shows: a sweep, several sweeps (one colour each), branch ids, a
    filter expression (``workbench.filters``) within those, or (nothing given) every branch.
    ``partial``: also count the last values of forks that run or stopped short (pruned,
    failed, cancelled: ``workbench.outcome``); without it, those forks have no value."""

    sweep: int | None = None
    sweeps: tuple[int, ...] | None = None
    branches: tuple[int, ...] | None = None
    where: str | None = None
    partial: bool = False

    def __post_init__(self) -> None:
        given = [self.sweep is not None, bool(self.sweeps), self.branches is not None]
        if sum(given) > 1:
            raise InvalidValue("select a sweep, several sweeps or branches, not more than one")

    def describe(self) -> str:
        """How a title names it: sweep 3, sweeps 1, 2, 4 branches, every branch (where ...)."""
        if self.sweep is not None:
            what = f"sweep {self.sweep}"
        elif self.sweeps:
            what = "sweeps " + ", ".join(map(str, self.sweeps))
        elif self.branches is not None:
            n = len(self.branches)
            what = f"{n} branch{'es' if n != 1 else ''}"
        else:
            what = "every branch"
        return f"{what} where {self.where}" if self.where else what


@dataclass(frozen=True)
class Results:
    """The per-branch table a view draws: ``branch``, ``branch_name``, ``sweep``, ``_order``
    (fork or trial number), ``_state`` (a trial's state, a fork's run status), the parameters
    and each metric's last value (a study's objectives: its trials' values)."""

    table: pl.DataFrame
    params: list[str]
    metrics: list[str]
    order_label: str  # "trial" (a study) or "fork"
    objectives: tuple[str, ...] = ()
    directions: tuple[str, ...] = ()
    sweep: int | None = None  # the one sweep, adaptive or not
    adaptive: bool = False

    def direction(self, metric: str, given: str | None = None) -> str:
        """Whether more of ``metric`` is better: given, else the study's, else maximize."""
        if given is not None:
            if given not in ("maximize", "minimize"):
                raise InvalidValue(f"direction is maximize or minimize, not {given!r}")
            return given
        if metric in self.objectives:
            return self.directions[self.objectives.index(metric)]
        return "maximize"

    def study(self, journal: Journal) -> Any:
        """Optuna's own study of an adaptive sweep (None for anything else)."""
        if not self.adaptive or self.sweep is None:
            return None
        from ..sweep import study

        return study(journal, self.sweep)


def gather(journal: Journal, selection: Selection, table: BranchTable | None = None) -> Results:
    """The table of a selection (NotFound for a sweep that does not exist, in ``sweep`` or in
    ``sweeps``). ``table``: the
    journal's whole ``branch_table`` as read just now (a server keeps it between requests);
    the selection's rows are taken from it instead of read again."""
    import polars as pl

    from ..filters import parse

    ids: list[int] | None = list(selection.branches) if selection.branches is not None else None
    if selection.sweeps:
        members = {s.id: s.branches for s in journal.sweeps()}
        missing = [s for s in selection.sweeps if s not in members]
        if missing:
            raise NotFound(f"there is no sweep {missing[0]}; list them with `lithify sweeps`")
        ids = sorted({b for s in selection.sweeps for b in members[s]})
    if table is None:
        bt = branch_table(journal, sweep=selection.sweep, branches=ids)
    else:
        bt = _narrowed(journal, table, selection.sweep, ids)
    frame = bt.frame
    if selection.where:
        frame = parse(selection.where).apply(frame)
    frame = frame.sort("branch").with_columns(
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias(ORDER),
        pl.col(STATE_COLUMN).alias(STATE),
    )
    spec = _study_spec(journal, selection.sweep)
    if spec is None:
        res = Results(frame, bt.params, bt.metrics, "fork", sweep=selection.sweep)
    else:
        res = _with_trials(journal, spec, frame, bt.params, bt.metrics)
    if selection.partial:
        return res
    return dataclasses.replace(res, table=final_values(res.table, res.metrics, STATE))


def _narrowed(
    journal: Journal, table: BranchTable, sweep: int | None, ids: list[int] | None
) -> BranchTable:
    """The rows of a sweep (or of branch ids) of a whole-journal table, with only the
    parameters and metrics they have."""
    import polars as pl

    if sweep is None and ids is None:
        return table
    frame = table.frame
    if sweep is not None:
        if sweep not in _sweep_specs(journal):
            raise NotFound(f"there is no sweep {sweep}; list them with journal.sweeps()")
        frame = frame.filter(pl.col("sweep") == sweep)
    if ids is not None:
        frame = frame.filter(pl.col("branch").is_in(ids))
    columns = table.params + table.metrics
    present = {c for c in columns if frame[c].null_count() < frame.height}
    return BranchTable(
        frame.drop([c for c in columns if c not in present]),
        [p for p in table.params if p in present],
        [m for m in table.metrics if m in present],
    )


def _sweep_specs(journal: Journal) -> dict[int, str]:
    """Every sweep's spec (canonical JSON) by id, without its forks (journal.sweeps() reads
    every branch row to list them: 0.1 s on 10^4)."""
    return {r.id: r.spec for r in journal.storage.sweep_rows()}


def _study_spec(journal: Journal, sweep: int | None) -> Any:
    if sweep is None:
        return None
    import json

    from ..sweep.trials import ADAPTIVE, StudySpec

    spec = _sweep_specs(journal).get(sweep)
    if spec is None or json.loads(spec).get("kind") not in ADAPTIVE:
        return None  # a grid's forks, or no sweep at all
    return StudySpec.of(next(s for s in journal.sweeps() if s.id == sweep))


def _with_trials(
    journal: Journal, spec: Any, frame: pl.DataFrame, params: list[str], metrics: list[str]
) -> Results:
    """A study's trials over the table: trial numbers, states, and the objectives' values only
    where a trial ended with them (a pruned trial's last report is an intermediate value)."""
    import polars as pl

    from ..sweep import result

    study = result(journal, spec.sweep)
    # a trial asked but waiting for a worker (Optuna's RUNNING: asked) is shown as the fork it
    # is, pending; the others by their trial state
    waits = set(frame.filter(pl.col(STATE) == "pending")["branch"].to_list())
    rows = []
    for t in study.trials:
        state = "pending" if t.state == "running" and t.branch in waits else t.state
        row: dict[str, Any] = {"branch": t.branch, ORDER: t.number, STATE: state}
        for i in range(len(spec.objectives)):
            row[f"_objective_{i}"] = t.values[i] if t.values is not None else None
        rows.append(row)
    schema: dict[str, Any] = {"branch": pl.Int64, ORDER: pl.Int64, STATE: pl.Utf8}
    schema.update({f"_objective_{i}": pl.Float64 for i in range(len(spec.objectives))})
    trials = pl.DataFrame(rows, schema=schema)
    out = frame.drop(ORDER, STATE).join(trials, on="branch", how="inner")
    objectives = []
    for i, name in enumerate(spec.objectives):
        column = name if name in metrics else None
        if column is None:  # never observed yet, or renamed for a clash with a parameter
            column = f"metric_{name}" if f"metric_{name}" in metrics else name
            if column not in metrics:
                metrics = [*metrics, column]
        out = out.with_columns(pl.col(f"_objective_{i}").alias(column)).drop(f"_objective_{i}")
        objectives.append(column)
    return Results(
        out.sort(ORDER),
        params,
        metrics,
        "trial",
        tuple(objectives),
        tuple(spec.directions),
        spec.sweep,
        adaptive=True,
    )
