"""Planning a sweep: the grid, its checks, the forks (rows only), and the recorded plan.

    from workbench import sweep
    s = sweep.plan(j, base=0, at=191, grid={"budget": [300, 600, 1200]}, seeds=3)

Nothing is forked until every argument is checked: the grid, the template (a readable notebook
with a ``parameters`` cell), the fork function (importable), and every grid value against the
parameters the fork declares (see ``workbench.params``).
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import params as declared_params
from .. import tables
from ..bundled import resolve_notebook
from ..errors import InvalidValue, NotFound
from ..events import canonical
from ..plugins import import_ref
from ..storage import read_observations
from .runners import RUNNERS
from .runners.context import Fork as Fork  # defined with the runners; a plan is made of them

if TYPE_CHECKING:
    import polars as pl

    from ..forking import SweepInfo
    from ..journal import Journal


@dataclass(frozen=True)
class SweepPlan:
    """A recorded sweep: forks of ``base`` at ``at``, one per grid point (and seed)."""

    journal: Journal
    id: int
    base: int
    at: int
    grid: dict[str, list[Any]]
    seeds: int | None
    forks: tuple[Fork, ...]
    notebook: str | None = None
    fn: str | None = None
    how: dict[str, Any] = field(default_factory=dict)  # how it was last run (see start)


@dataclass(frozen=True)
class ForkRun:
    """How one fork's run went."""

    branch: int
    params: dict[str, Any]
    status: str
    wall_s: float | None = None
    error: dict[str, Any] | None = None
    notebook: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def step(self) -> int | None:
        """Where a pruned (or paused) fork stopped: the step of the report that stopped it."""
        if self.status not in ("pruned", "paused") or not self.error:
            return None
        step = self.error.get("step")
        return int(step) if isinstance(step, int) else None

    def to_json(self) -> dict[str, Any]:
        return {
            "branch": self.branch,
            "params": self.params,
            "status": self.status,
            "step": self.step,
            "wall_s": self.wall_s,
            "error": self.error,
            "notebook": self.notebook,
            "metrics": self.metrics,
        }


@dataclass(frozen=True)
class SweepResult:
    """The outcome of ``run``: one ForkRun per fork of the sweep, by branch id."""

    sweep: int
    forks: list[ForkRun]

    @property
    def ok(self) -> bool:
        """True when every fork finished (or was pruned or paused: normal ends of adaptive
        trials)."""
        return all(f.status in ("finished", "pruned", "paused") for f in self.forks)

    @property
    def failed(self) -> list[ForkRun]:
        return [f for f in self.forks if f.status == "failed"]

    def rows(self) -> list[dict[str, Any]]:
        """Per fork: branch, params, status, wall time, key metrics (and error)."""
        rows = []
        for f in self.forks:
            row: dict[str, Any] = {
                "branch": f.branch,
                **f.params,
                "status": f.status,
                "wall_s": f.wall_s,
            }
            row.update({k: v for k, v in f.metrics.items() if k not in row})
            if f.error:
                row["error"] = f"{f.error.get('ename', '')}: {f.error.get('evalue', '')}"[:120]
            rows.append(row)
        return rows

    def table(self) -> pl.DataFrame:
        """``rows()`` as a polars frame."""
        import polars as pl

        rows = self.rows()
        return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()

    def __str__(self) -> str:
        done = sum(f.status == "finished" for f in self.forks)
        return f"sweep {self.sweep}: {done}/{len(self.forks)} finished\n{tables.text(self.rows())}"

    def to_json(self) -> dict[str, Any]:
        return {"sweep": self.sweep, "ok": self.ok, "forks": [f.to_json() for f in self.forks]}


def _grid_points(grid: Mapping[str, Sequence[Any]], seeds: int | None) -> list[dict[str, Any]]:
    if not isinstance(grid, Mapping) or not grid:
        raise InvalidValue("grid must be a non-empty dict of parameter name -> list of values")
    for name, values in grid.items():
        if not isinstance(name, str) or not name:
            raise InvalidValue(f"grid parameter names are non-empty strings, not {name!r}")
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise InvalidValue(f"grid[{name!r}] must be a list of values, not {values!r}")
        if not list(values):
            raise InvalidValue(f"grid[{name!r}] is empty; give at least one value")
        canonical(list(values), f"grid[{name!r}]")
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1):
        raise InvalidValue(f"seeds must be a positive int, not {seeds!r}")
    if seeds is not None and "seed" in grid:
        raise InvalidValue("the grid already has a 'seed' parameter; drop seeds= or the grid entry")
    names = list(grid)
    points = [
        dict(zip(names, combo, strict=True))
        for combo in itertools.product(*(list(grid[n]) for n in names))
    ]
    if seeds is None:
        return points
    return [{**p, "seed": s} for p in points for s in range(seeds)]


def parse_grid(text: str) -> dict[str, list[Any]]:
    """``"budget=300,600\\nmodel=mock"`` (lines or ';') -> {"budget": [300, 600], ...}."""
    grid: dict[str, list[Any]] = {}
    for part in text.replace(";", "\n").splitlines():
        part = part.strip()
        if not part:
            continue
        name, eq, values = part.partition("=")
        if not eq or not name.strip():
            raise InvalidValue(f"grid lines are NAME=V1,V2,...; {part!r} is not")
        vals = [_value(v) for v in values.split(",") if v.strip()]
        if not vals:
            raise InvalidValue(f"{name.strip()} has no values")
        if name.strip() in grid:
            raise InvalidValue(
                f"{name.strip()} is given twice; list all its values once: {name.strip()}=V1,V2,..."
            )
        grid[name.strip()] = vals
    if not grid:
        raise InvalidValue("the grid is empty; write e.g. budget=300,600,1200")
    return grid


def _value(text: str) -> Any:
    try:
        return json.loads(text.strip())
    except ValueError:
        return text.strip()


def fn_ref(fn: str | Callable[..., Any] | None) -> str | None:
    if fn is None or isinstance(fn, str):
        if isinstance(fn, str) and ":" not in fn:
            raise InvalidValue(f"fn must be 'module:function', not {fn!r}")
        return fn
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or module == "__main__" or "<" in name:
        raise InvalidValue(
            "the process runner imports fn in a fresh worker: define it at module level in an "
            "importable module (not __main__, a lambda or a closure), or pass 'module:function'"
        )
    return f"{module}:{name}"


def _declared(notebook: str | None, fn: str | None) -> tuple[dict[str, Any] | None, str]:
    """(the parameters the fork declares, what declares them), checking that the template is a
    parameterized notebook and that the function imports."""
    declared: dict[str, Any] | None = None
    source = ""
    runs_function = False
    if notebook is not None:
        declared, runs_function = declared_params.of_notebook(notebook)
        source = f"the template {Path(notebook).name}"
    if fn is not None:
        try:
            function = import_ref(fn)
        except (ImportError, AttributeError, ValueError) as e:
            raise InvalidValue(
                f"fn {fn!r} cannot be imported here ({type(e).__name__}: {e}); give an "
                "importable 'module:function'"
            ) from None
        if not callable(function):
            raise InvalidValue(f"fn {fn!r} is not a function")
        if notebook is None or runs_function:
            declared, source = declared_params.of_function(function), f"the fork function {fn}"
    elif runs_function:
        declared = None  # a generic template passes the params on to a function it is given
    return declared, source


def check_options(runner: str, workers: int, timeout: float | None) -> None:
    """Refuse a bad runner, worker count or timeout (before anything is forked)."""
    if runner not in RUNNERS:
        raise InvalidValue(f"runner must be one of {', '.join(RUNNERS)}, not {runner!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidValue(f"workers must be a positive int, not {workers!r}")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not timeout > 0
        or timeout != timeout
    ):
        raise InvalidValue(f"timeout is a positive number of seconds, not {timeout!r}")


def plan(
    journal: Journal,
    base: int | str,
    at: int,
    grid: Mapping[str, Sequence[Any]],
    seeds: int | None = None,
    notebook: str | os.PathLike[str] | None = None,
    fn: str | Callable[..., Any] | None = None,
    how: Mapping[str, Any] | None = None,
) -> SweepPlan:
    """Create one fork of ``base`` at ``at`` per grid point (x seed) and record the sweep, with
    a pending run per fork; ``how`` (runner, workers, ... as ``Launch.how``) is recorded in the
    same transaction, so a coordinator killed right after planning resumes the same way."""
    if journal.path == ":memory:":
        raise InvalidValue(
            "sweeps run in other processes: open the journal from a file, not in memory"
        )
    points = _grid_points(grid, seeds)
    nb = str(resolve_notebook(notebook)) if notebook is not None else None
    ref = fn_ref(fn)
    declared, source = _declared(nb, ref)
    declared_params.check_points(points, declared, source)
    grid_lists = {k: list(v) for k, v in grid.items()}
    spec = {
        "grid": grid_lists,
        "seeds": seeds,
        "notebook": nb,
        "fn": ref,
    }
    recorded = dict(how) if how is not None else {}
    branches = journal.sweep(base, at, points, spec=spec, how=recorded)
    sweep_id = branches[0].info.sweep if branches else None
    assert sweep_id is not None
    base_id = branches[0].parent if branches else 0
    return SweepPlan(
        journal,
        sweep_id,
        int(base_id or 0),
        at,
        grid_lists,
        seeds,
        tuple(Fork(b.id, p) for b, p in zip(branches, points, strict=True)),
        nb,
        ref,
        dict(how) if how is not None else {},
    )


def _space_params(params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if k != "generation"}


def load(journal: Journal, sweep_id: int) -> SweepPlan:
    """The plan of a recorded sweep (to rerun or resume it)."""
    for s in journal.sweeps():
        if s.id == sweep_id:
            if s.spec.get("kind") == "optimize":  # forked one at a time
                forks = tuple(Fork(b, dict(journal.info(b).params)) for b in s.branches)
            elif s.spec.get("kind") == "evolve":  # members run from the study's start
                forks = tuple(
                    Fork(b, _space_params(journal.info(b).params), start=s.at) for b in s.branches
                )
            else:
                params = s.spec.get("params", [])
                forks = tuple(Fork(b, p) for b, p in zip(s.branches, params, strict=True))
            return SweepPlan(
                journal,
                s.id,
                s.base,
                s.at,
                s.spec.get("grid", {}),
                s.spec.get("seeds"),
                forks,
                s.spec.get("notebook"),
                s.spec.get("fn"),
                dict(s.how),
            )
    raise NotFound(
        f"there is no sweep {sweep_id} in {journal.path}; list them with `lithify sweeps`"
    )


def status(journal: Journal, sweep_id: int) -> list[ForkRun]:
    """Each fork's recorded run: status, wall time, error, executed notebook, key metrics."""
    p = load(journal, sweep_id)
    rows = {r.branch: r for r in journal.runs(sweep_id)}
    metrics: dict[int, dict[str, float]] = {}
    members = {f.branch for f in p.forks}
    journal.flush()
    for o in read_observations(journal.storage):  # in order: the last value of each stays
        if o.branch in members:
            metrics.setdefault(o.branch, {})[o.metric] = o.value
    out = []
    for f in p.forks:
        r = rows.get(f.branch)
        if r is None:
            out.append(ForkRun(f.branch, f.params, "pending", metrics=metrics.get(f.branch, {})))
            continue
        out.append(
            ForkRun(
                f.branch,
                f.params,
                r.status,
                None if r.wall_ms is None else r.wall_ms / 1000,
                json.loads(r.error) if r.error else None,
                r.notebook,
                metrics.get(f.branch, {}),
            )
        )
    return out


STOPPED = ("finished", "failed", "pruned", "cancelled", "paused")  # run statuses that ended


@dataclass(frozen=True)
class SweepSummary:
    """A sweep at a glance (what the Lab's fork tree says on a sweep's header): its kind, the
    forks it is to have (a study's trials are forked one at a time, so it has fewer until it
    ends), how many forks are in each run status, and its state: ``running`` while a fork runs,
    ``finished`` when every planned fork finished (or was pruned), ``failed`` when every fork
    ended and some failed, ``cancelled`` when it was cancelled, else ``pending`` (forks waiting,
    a study between trials, or a stopped sweep that ``resume`` would finish)."""

    id: int
    kind: str
    planned: int
    counts: dict[str, int]

    @property
    def forks(self) -> int:
        """The forks it has now."""
        return sum(self.counts.values())

    @property
    def state(self) -> str:
        """running, finished, failed, cancelled or pending (see the class)."""
        if self.counts.get("running"):
            return "running"
        ended = sum(self.counts.get(s, 0) for s in STOPPED)
        if self.forks < self.planned or ended < self.forks:
            return "pending"
        if self.counts.get("cancelled"):
            return "cancelled"
        return "failed" if self.counts.get("failed") else "finished"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "planned": self.planned,
            "forks": self.forks,
            "counts": dict(self.counts),
            "state": self.state,
        }


def fork_timeout_of(timeout: float | None, fork_timeout: float | None, where: str) -> float | None:
    """``fork_timeout`` (seconds one fork may run), or ``timeout``, its old name, with a
    deprecation warning (in a study, ``timeout`` is the whole study's, as in Optuna)."""
    if timeout is None:
        return fork_timeout
    if fork_timeout is not None:
        raise InvalidValue("give fork_timeout= (seconds per fork); timeout= is its old name")
    import warnings

    warnings.warn(
        f"{where}(timeout=) is now fork_timeout= (seconds one fork may run)",
        DeprecationWarning,
        stacklevel=3,
    )
    return timeout


def planned_forks(s: SweepInfo) -> int:
    """The forks a sweep is to have: a study's trials (forked one at a time; as many as it had
    when its timeout or a callback stopped it), else its forks."""
    stopped = s.how.get("stopped")
    if isinstance(stopped, dict) and isinstance(stopped.get("forks"), int):
        return int(stopped["forks"])
    planned = s.spec.get("forks")
    return planned if isinstance(planned, int) else len(s.branches)


def summaries(journal: Journal) -> list[SweepSummary]:
    """Every sweep at a glance, read in two queries (the sweeps with their forks, the runs)."""
    runs = {r.branch: r.status for r in journal.runs()}
    out = []
    for s in journal.sweeps():
        counts: dict[str, int] = {}
        for b in s.branches:
            st = runs.get(b, "pending")
            counts[st] = counts.get(st, 0) + 1
        out.append(SweepSummary(s.id, s.spec.get("kind", "grid"), planned_forks(s), counts))
    return out
