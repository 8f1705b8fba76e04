"""The results matrix: observations from every branch joined to each branch's merged params.

``Journal.matrix()`` is the long form (one row per observation); ``wide=True`` gives one row
per branch with a column per metric. ``aggregate`` reduces over seeds with honest error bars
(Student-t 95% intervals; none for n = 1), ``export`` writes CSV or Parquet for papers, and
``LiveMatrix`` folds in new observations incrementally from ``Journal.tail``.
"""

from __future__ import annotations

import functools
import json
import math
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import events as ev
from .errors import InvalidValue, NotFound
from .outcome import final_values, state_of
from .storage import (
    BranchRow,
    Observation,
    observation_schema,
    observations_frame,
    read_observations,
)

if TYPE_CHECKING:
    import polars as pl

    from .port import JournalPort

FIXED_COLUMNS = ("branch", "branch_name", "seq", "metric", "value", "ts")
LINEAGE_COLUMNS = ("parent", "fork_seq", "depth", "sweep")
STATE_COLUMN = "state"  # a wide matrix's and a branch table's: workbench.outcome's state
_RESERVED = frozenset((*FIXED_COLUMNS, *LINEAGE_COLUMNS, STATE_COLUMN))
SUMMARIES = ("last", "first", "max", "min", "mean", "count")
SEED_LIKE = ("seed", "seeds", "rep", "replicate", "repeat", "trial", "run")


# -- branches and params --------------------------------------------------------------------


class _Branches:
    """Every branch row with merged params and lineage, from one query."""

    def __init__(self, journal: JournalPort) -> None:
        self.names: dict[int, str | None] = {}
        self.params: dict[int, dict[str, Any]] = {}
        self.lineage: dict[int, tuple[int | None, int, int, int | None]] = {}
        self.extend(journal.storage.branch_rows())

    def extend(self, rows: Iterable[BranchRow]) -> None:
        for r in rows:
            own = ev.loads(r.params)  # orjson: a branch table of 10^4 rows is read whole
            up = self.params.get(r.parent, {}) if r.parent is not None else {}
            self.params[r.id] = {**up, **own}
            depth = self.lineage[r.parent][2] + 1 if r.parent in self.lineage else 0
            self.names[r.id] = r.name
            self.lineage[r.id] = (r.parent, r.fork_seq, depth, r.sweep)

    @property
    def last_id(self) -> int:
        return max(self.names) if self.names else -1


def _param_column(values: list[Any]) -> list[Any]:
    # Nested values become JSON text and mixed types strings, so a column has one dtype.
    if any(isinstance(v, (dict, list)) for v in values):
        return [None if v is None else json.dumps(v, sort_keys=True) for v in values]
    kinds = {type(v) for v in values if v is not None}
    if len(kinds) > 1 and not kinds <= {int, float}:
        return [None if v is None else str(v) for v in values]
    if kinds == {int, float}:
        return [None if v is None else float(v) for v in values]
    return values


def _branch_frame(br: _Branches, ids: Sequence[int], lineage: bool) -> pl.DataFrame:
    import polars as pl

    keys = sorted({k for i in ids for k in br.params[i]})
    cols: dict[str, Any] = {"branch": pl.Series("branch", list(ids), dtype=pl.Int64)}
    cols["branch_name"] = pl.Series("branch_name", [br.names[i] for i in ids], dtype=pl.Utf8)
    for k in keys:
        name = f"param_{k}" if k in _RESERVED else k
        cols[name] = pl.Series(
            name, _param_column([br.params[i].get(k) for i in ids]), strict=False
        )
    if lineage:
        for pos, name in enumerate(LINEAGE_COLUMNS):
            cols[name] = pl.Series(name, [br.lineage[i][pos] for i in ids], dtype=pl.Int64)
    return pl.DataFrame(cols)


def param_columns(df: pl.DataFrame) -> list[str]:
    """The parameter columns of a matrix (everything that is not fixed, lineage or a metric)."""
    skip = set(_RESERVED)
    return [c for c in df.columns if c not in skip and not c.startswith("_")]


# -- building -------------------------------------------------------------------------------


def _observations(rows: list[Observation]) -> pl.DataFrame:
    import polars as pl

    return pl.DataFrame(rows, schema=observation_schema(), orient="row")


class _ReadSoFar:
    """The observations one storage handle has read, and the position they reach."""

    def __init__(self, frame: pl.DataFrame) -> None:
        self.frame = frame
        self.position: int = frame["position"][-1] if len(frame) else 0
        self.lock = threading.Lock()


# Per storage handle (dropped with it): positions follow commit order on every backend (a
# reader never sees a smaller position commit later), so observations after the last position
# read are all that can have arrived; matrix() on a journal called again (a notebook, the Lab's
# charts, a study's report) reads only those instead of the whole history.
_READ: weakref.WeakKeyDictionary[Any, _ReadSoFar] = weakref.WeakKeyDictionary()


def all_observations(journal: JournalPort) -> pl.DataFrame:
    """Every committed observation (position, branch, seq, metric, value, ts) in position
    order; the first call on a handle reads them all, later calls only what arrived since."""
    import polars as pl

    db = journal.storage
    if db.in_transaction:  # rows of an open transaction may still roll back: never keep them
        frame: pl.DataFrame = observations_frame(db)
        return frame
    seen = _READ.get(db)
    if seen is None:
        seen = _ReadSoFar(observations_frame(db))
        try:
            _READ[db] = seen
        except TypeError:  # a storage that cannot be weakly referenced is read whole each time
            return seen.frame
        return seen.frame
    with seen.lock:
        rows = read_observations(db, seen.position)
        if rows:
            seen.frame = pl.concat([seen.frame, _observations(rows)], how="vertical")
            seen.position = rows[-1].position
        return seen.frame


def _select_branches(
    br: _Branches,
    journal: JournalPort,
    branches: Iterable[int] | None,
    sweep: int | None,
    params: Mapping[str, Any] | None,
) -> list[int] | None:
    ids: set[int] | None = None
    if branches is not None:
        ids = {int(b) for b in branches}
    if sweep is not None:
        members = {b for b, lin in br.lineage.items() if lin[3] == sweep}
        if not members and sweep not in {s.id for s in journal.sweeps()}:
            raise NotFound(f"there is no sweep {sweep}; list them with journal.sweeps()")
        ids = members if ids is None else ids & members
    if params:
        wanted = {
            k: (list(v) if isinstance(v, (list, tuple, set)) else [v]) for k, v in params.items()
        }
        match = {b for b, p in br.params.items() if all(p.get(k) in vs for k, vs in wanted.items())}
        ids = match if ids is None else ids & match
    return None if ids is None else sorted(ids)


def build_matrix(
    journal: JournalPort,
    *,
    wide: bool = False,
    summary: str = "last",
    branches: Iterable[int] | None = None,
    sweep: int | None = None,
    metrics: Iterable[str] | None = None,
    params: Mapping[str, Any] | None = None,
    lineage: bool = False,
    partial: bool = False,
) -> pl.DataFrame:
    """The results matrix.

    Long (default): one row per observation with branch, branch_name, seq, metric, value, ts,
    then one column per parameter: every observation, intermediate reports included.
    ``wide=True``: one row per branch, one column per metric reduced by ``summary`` (last,
    first, max, min, mean, count), and the branch's ``state`` (``workbench.outcome``: complete,
    pruned, failed, ... for a sweep's forks, empty for other branches); the metrics of a fork
    that runs or stopped short (pruned, failed, cancelled) are empty, since its observations
    are intermediate values, unless ``partial=True``. Filters: branch ids, a sweep id, metric
    names, parameter values (a value or a list of accepted values). ``lineage`` adds parent,
    fork_seq, depth and sweep columns.
    """
    import polars as pl

    if summary not in SUMMARIES:
        raise InvalidValue(f"summary must be one of {', '.join(SUMMARIES)}, not {summary!r}")
    journal.flush()
    br = _Branches(journal)
    ids = _select_branches(br, journal, branches, sweep, params)
    obs = all_observations(journal)
    if ids is not None:
        obs = obs.filter(pl.col("branch").is_in(ids))
    if metrics is not None:
        obs = obs.filter(pl.col("metric").is_in(list(metrics)))
    frame_ids = sorted(br.names) if ids is None else ids
    if wide:
        states = _states(journal, frame_ids)
        return _wide(obs, _branch_frame(br, frame_ids, lineage), summary, states, partial)
    return _long(obs, br, lineage)


def _states(journal: JournalPort, ids: Sequence[int]) -> pl.Series:
    """The ``state`` column of these branches (``workbench.outcome``)."""
    import polars as pl

    runs = {r.branch: r.status for r in journal.runs()}
    return pl.Series(STATE_COLUMN, [state_of(runs.get(i)) for i in ids], dtype=pl.Utf8)


def long_rows(journal: JournalPort, sweep: int | None = None) -> list[dict[str, Any]]:
    """The long matrix of a sweep (or of every branch) as row dicts, read without polars: the
    same rows and columns as ``build_matrix`` gives (``lithify sweep --json`` prints them, in
    the worker install too, which has no polars)."""
    journal.flush()
    br = _Branches(journal)
    ids = _select_branches(br, journal, None, sweep, None)
    wanted = None if ids is None else set(ids)
    obs = [o for o in read_observations(journal.storage) if wanted is None or o.branch in wanted]
    branches = sorted({o.branch for o in obs})
    keys = sorted({k for b in branches for k in br.params[b]})
    values = {
        k: dict(zip(branches, _param_column([br.params[b].get(k) for b in branches]), strict=True))
        for k in keys
    }
    named = sorted((f"param_{k}" if k in _RESERVED else k, k) for k in keys)
    return [
        {
            "branch": o.branch,
            "branch_name": br.names[o.branch],
            "seq": o.seq,
            "metric": o.metric,
            "value": o.value,
            "ts": o.ts,
            **{name: values[k][o.branch] for name, k in named},
        }
        for o in obs
    ]


def _long(obs: pl.DataFrame, br: _Branches, lineage: bool) -> pl.DataFrame:
    """Observations joined to their branches' names, params (and lineage), columns ordered."""
    bf = _branch_frame(br, sorted(set(obs["branch"].unique().to_list())), lineage)
    return _ordered(obs.drop("position").join(bf, on="branch", how="left"))


def _ordered(df: pl.DataFrame) -> pl.DataFrame:
    rest = [c for c in df.columns if c not in FIXED_COLUMNS]
    lin = [c for c in LINEAGE_COLUMNS if c in rest]
    return df.select([*FIXED_COLUMNS, *sorted(c for c in rest if c not in lin), *lin])


def _metric_table(
    obs: pl.DataFrame, summary: str, taken: Iterable[str]
) -> tuple[pl.DataFrame, list[str]]:
    """One row per observed branch, a column per metric reduced by ``summary`` (a metric named
    like a column in ``taken`` becomes ``metric_<name>``), and the metric columns' names."""
    import polars as pl

    names = sorted(obs["metric"].unique().to_list())
    v = pl.col("value")
    reduce = {
        "last": v.last(),
        "first": v.first(),
        "max": v.max(),
        "min": v.min(),
        "mean": v.mean(),
        "count": v.count().cast(pl.Float64),
    }[summary]
    reduced = (
        obs.sort("position")
        .group_by("branch", "metric", maintain_order=True)
        .agg(reduce.alias("value"))
    )
    if names:
        table = reduced.pivot(on="metric", index="branch", values="value").select(
            ["branch", *names]
        )
    else:
        table = pl.DataFrame({"branch": pl.Series([], dtype=pl.Int64)})
    taken = set(taken)
    clash = [n for n in names if n in taken]
    if clash:
        table = table.rename({n: f"metric_{n}" for n in clash})
    return table, [f"metric_{n}" if n in taken else n for n in names]


def _wide(
    obs: pl.DataFrame, branches: pl.DataFrame, summary: str, states: pl.Series, partial: bool
) -> pl.DataFrame:
    import polars as pl

    table, metrics = _metric_table(obs, summary, branches.columns)
    out = branches.with_columns(states).join(table, on="branch", how="left")
    if not partial and summary != "count":  # how many were observed is a fact either way
        out = final_values(out, metrics)
    out = out.select([c for c in out.columns if c != STATE_COLUMN] + [STATE_COLUMN])
    return (
        out.filter(pl.col("branch").is_in(obs["branch"].unique().to_list()))
        if len(obs)
        else out.head(0)
    )


# what branch_table adds to a lineage: notes and artifacts are each branch's own (its notes
# joined by " · ", its artifacts' names by ", ")
TABLE_COLUMNS = ("head", "status", STATE_COLUMN, "notes", "artifacts")


@dataclass(frozen=True)
class BranchTable:
    """One row per branch: ``branch``, ``branch_name``, its parameters, each metric's last value,
    ``parent``, ``fork_seq``, ``depth``, ``sweep``, ``head``, its run ``status`` and ``state``
    (``workbench.outcome``; both null outside sweeps); ``params`` and ``metrics`` name those
    columns. Metrics are as observed: ``outcome.final_values`` empties partial ones."""

    frame: pl.DataFrame
    params: list[str]
    metrics: list[str]


def branch_table(
    journal: JournalPort,
    *,
    branches: Iterable[int] | None = None,
    sweep: int | None = None,
    summary: str = "last",
) -> BranchTable:
    """Every branch (or those given, or a sweep's) with its parameters, metrics, lineage, head
    and run status, observed or not: what the filter language and the results views read. A
    parameter named like a column of the table is ``param_<name>``, a metric named like a
    parameter ``metric_<name>``."""
    import polars as pl

    if summary not in SUMMARIES:
        raise InvalidValue(f"summary must be one of {', '.join(SUMMARIES)}, not {summary!r}")
    journal.flush()
    br = _Branches(journal)
    ids = _select_branches(br, journal, branches, sweep, None)
    ids = sorted(br.names) if ids is None else [i for i in ids if i in br.names]
    frame = _branch_frame(br, ids, True)
    clash = {c: f"param_{c}" for c in TABLE_COLUMNS if c in frame.columns}
    frame = frame.rename(clash)
    params = [c for c in frame.columns if c not in ("branch", "branch_name", *LINEAGE_COLUMNS)]
    heads = journal.storage.heads()
    runs = {r.branch: r.status for r in journal.runs()}
    frame = frame.with_columns(
        pl.Series(
            "head", [heads[i].seq if i in heads else br.lineage[i][1] for i in ids], dtype=pl.Int64
        ),
        pl.Series("status", [runs.get(i) for i in ids], dtype=pl.Utf8),
        pl.Series(STATE_COLUMN, [state_of(runs.get(i)) for i in ids], dtype=pl.Utf8),
        *_annotation_columns(journal, ids, sweep is None and branches is None),
    )
    obs = all_observations(journal)
    if sweep is not None or branches is not None:
        obs = obs.filter(pl.col("branch").is_in(ids))
    table, metrics = _metric_table(obs, summary, frame.columns)
    return BranchTable(frame.join(table, on="branch", how="left"), params, metrics)


def _annotation_columns(journal: JournalPort, ids: list[int], every: bool) -> list[Any]:
    """The ``notes`` and ``artifacts`` columns of a branch table (null where a branch has
    none): each branch's own, read from the annotation index."""
    import polars as pl

    from .annotations import by_branch

    found = by_branch(journal.storage, None if every else ids)
    notes = [" · ".join(found[i]["notes"]) or None if i in found else None for i in ids]
    names = [", ".join(found[i]["artifacts"]) or None if i in found else None for i in ids]
    return [pl.Series("notes", notes, dtype=pl.Utf8), pl.Series("artifacts", names, dtype=pl.Utf8)]


# -- aggregation ----------------------------------------------------------------------------


def _betacf(a: float, b: float, x: float) -> float:
    # Continued fraction for the incomplete beta function (modified Lentz).
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for num in (
            m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _inc_beta(a: float, b: float, x: float) -> float:
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * _inc_beta(df / 2, 0.5, df / (df + t * t))
    return 1 - tail if t > 0 else tail


@functools.lru_cache(maxsize=256)
def t_critical(df: int, confidence: float = 0.95) -> float:
    """Two-sided critical value: t with P(|T| <= t) = confidence."""
    target = 1 - (1 - confidence) / 2
    lo, hi = 0.0, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def last_per_branch(df: pl.DataFrame, metric: str, as_name: str | None = None) -> pl.DataFrame:
    """One row per branch with its last observation of ``metric`` as a column named
    ``as_name`` (default: the metric's name); a long matrix is reduced, a wide one renamed."""
    import polars as pl

    if "metric" in df.columns and "value" in df.columns:
        return (
            df.filter(pl.col("metric") == metric)
            .sort("seq")
            .group_by("branch", maintain_order=True)
            .agg(pl.all().last())
            .drop("metric")
            .rename({"value": as_name or metric})
        )
    if metric not in df.columns:
        raise InvalidValue(
            f"the matrix has no metric {metric!r}; metrics are in the metric column or columns"
        )
    return df.rename({metric: as_name}) if as_name else df


def aggregate(
    df: pl.DataFrame,
    metric: str,
    by: Sequence[str] | None = None,
    over: str | Sequence[str] = SEED_LIKE,
    confidence: float = 0.95,
) -> pl.DataFrame:
    """Mean, std, standard error and a Student-t confidence interval of ``metric`` per group.

    ``df`` is a long or wide matrix. Groups are the ``by`` columns, or by default every
    parameter column except the seed-like ones named in ``over``. One value per branch (its
    last observation) enters the statistics. Groups with n = 1 get no interval (null), never a
    zero-width one.
    """
    import polars as pl

    per_branch = last_per_branch(
        df, metric, as_name="_y"
    )  # "_y": a metric may share a param's name
    skip = {over} if isinstance(over, str) else set(over)
    groups = (
        list(by)
        if by is not None
        else [c for c in param_columns(df) if c not in skip and c != metric]
    )
    per_branch = per_branch.filter(pl.col("_y").is_not_null())
    agg = per_branch.group_by(groups or pl.lit(0).alias("_all"), maintain_order=True).agg(
        pl.len().alias("n"),
        pl.col("_y").mean().alias("mean"),
        pl.col("_y").std(ddof=1).alias("std"),
    )
    crit = {n: t_critical(n - 1, confidence) for n in set(agg["n"].to_list()) if n > 1}
    agg = agg.with_columns(
        pl.when(pl.col("n") > 1)
        .then(pl.col("std") / pl.col("n").cast(pl.Float64).sqrt())
        .alias("sem"),
        pl.col("n").replace_strict(crit, default=None, return_dtype=pl.Float64).alias("_t"),
    ).with_columns(
        pl.when(pl.col("n") > 1).then(pl.col("std")).alias("std"),
        (pl.col("mean") - pl.col("_t") * pl.col("sem")).alias("ci_low"),
        (pl.col("mean") + pl.col("_t") * pl.col("sem")).alias("ci_high"),
    )
    cols = [*groups, "n", "mean", "std", "sem", "ci_low", "ci_high"]
    return agg.select(cols).sort(groups) if groups else agg.select(cols)


# -- export ---------------------------------------------------------------------------------


def export(df: pl.DataFrame, path: str | Path) -> Path:
    """Write a matrix to .csv or .parquet (chosen by suffix); returns the path."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".csv":
        df.write_csv(p)
    elif suffix == ".parquet":
        df.write_parquet(p)
    elif suffix == ".json":
        p.write_text(json.dumps(df.to_dicts(), default=str) + "\n")
    else:
        raise InvalidValue(
            f"cannot tell the format of {p.name}: use a .csv, .parquet or .json suffix"
        )
    return p


def read(path: str | Path) -> pl.DataFrame:
    """Read an exported matrix back (CSV with the matrix's dtypes, or Parquet)."""
    import polars as pl

    p = Path(path)
    if p.suffix.lower() == ".parquet":
        return pl.read_parquet(p)
    return pl.read_csv(p, schema_overrides={"branch_name": pl.Utf8}, infer_schema_length=None)


# -- live -----------------------------------------------------------------------------------


class LiveMatrix:
    """A long matrix kept up to date from ``Journal.tail``: ``refresh()`` folds in only the
    observations appended since the last call (from any process writing the file)."""

    def __init__(self, journal: JournalPort) -> None:
        self.journal = journal
        self._branches = _Branches(journal)
        self._parts: list[pl.DataFrame] = []
        self._frame: pl.DataFrame | None = None
        self.cursor = 0
        self.refresh()

    def refresh(self) -> int:
        """Fold in new observations; returns how many rows arrived."""

        db = self.journal.storage
        rows = read_observations(db, self.cursor)
        if not rows:
            return 0
        self.cursor = rows[-1].position
        new = db.branch_rows(since_id=self._branches.last_id)
        if new:
            self._branches.extend(new)
        self._parts.append(_long(_observations(rows), self._branches, False))
        self._frame = None
        return len(rows)

    @property
    def frame(self) -> pl.DataFrame:
        """The matrix so far (long form)."""
        import polars as pl

        if self._frame is None:
            if not self._parts:
                self._frame = build_matrix(self.journal).head(0)
            else:
                self._frame = _ordered(pl.concat(self._parts, how="diagonal_relaxed"))
                self._parts = [self._frame]
        return self._frame

    def __len__(self) -> int:
        return len(self.frame)
