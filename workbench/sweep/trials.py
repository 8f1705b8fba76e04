"""An adaptive sweep's trials, read from the journal: the study lives there and nowhere else.

Each trial is a fork of the sweep (in the order they were forked); its parameters are the
fork's; its state comes from the fork's run record (finished, pruned, failed, or not yet
ended); its value(s) are the last observation of each objective on the fork's own events, and
its intermediate values the observations ``sweep.report`` made with a step. What Optuna keeps
beside a trial (a pruner's rungs, a sampler's generation) is journaled on the fork as an effect
(``optuna:attrs``), so a study rebuilt in another process, or after a crash, decides the same;
what the coordinator told Optuna about it is journaled as ``optuna:told`` (see
``workbench.sweep.driver``), the fork's own user attributes as ``optuna:user_attr:NAME#N``
(``sweep.set_user_attr``).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from .. import tables
from ..errors import InvalidValue, NotFound
from ..events import loads
from . import engines
from . import space as sp

if TYPE_CHECKING:
    import polars as pl

    from ..events import SweepInfo
    from ..port import JournalPort

ADAPTIVE = ("optimize", "evolve")
ATTRS_KEY = "optuna:attrs"  # effect keys (with a suffix) holding a trial's Optuna attributes
TOLD_KEY = "optuna:told"  # the effect holding what the coordinator told Optuna of a trial
USER_ATTR_KEY = "optuna:user_attr:"  # effects holding a trial's user attributes (NAME#N)
UNSAFE_ATTRS = ("cma:",)  # CMA-ES keeps a pickled optimizer: never stored, never loaded
ENDED = ("finished", "pruned", "paused", "failed")
_PAGE = 1000  # a fork's own events read at once


@dataclass(frozen=True)
class StudySpec:
    """What an adaptive sweep was asked to do (recorded with the sweep)."""

    sweep: int
    kind: str
    base: int
    at: int
    space: dict[str, sp.Dimension]
    objectives: tuple[str, ...]
    directions: tuple[str, ...]
    sampler: str
    pruner: str
    seed: int | None
    forks: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The Optuna study name (fixed: Hyperband's brackets hash it)."""
        return f"lithify-sweep-{self.sweep}"

    @property
    def define_by_run(self) -> bool:
        """Whether a function of an ``optuna.Trial`` chooses each trial's parameters."""
        return self.extra.get("space_fn") is not None

    @property
    def sampler_choice(self) -> engines.Choice:
        """The sampler this study was started with, by name and settings."""
        return engines.of_spec(self.sampler, self.extra.get("sampler_settings"))

    @property
    def pruner_choice(self) -> engines.Choice:
        """The pruner this study prunes with, by name and settings (what the forks build)."""
        return engines.of_spec(self.pruner, self.extra.get("pruner_settings"))

    @classmethod
    def of(cls, info: SweepInfo) -> StudySpec:
        s = info.spec
        if s.get("kind") not in ADAPTIVE:
            raise InvalidValue(
                f"sweep {info.id} is a grid sweep, not an adaptive one (optimize or evolve)"
            )
        known = {"kind", "space", "objectives", "directions", "sampler", "pruner", "seed", "forks"}
        return cls(
            info.id,
            s["kind"],
            info.base,
            info.at,
            sp.from_json(s["space"]),
            tuple(s["objectives"]),
            tuple(s["directions"]),
            s.get("sampler", "tpe"),
            s.get("pruner", "none"),
            s.get("seed"),
            int(s.get("forks", 0)),
            {k: v for k, v in s.items() if k not in known},
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "space": sp.to_json(self.space),
            "objectives": list(self.objectives),
            "directions": list(self.directions),
            "sampler": self.sampler,
            "pruner": self.pruner,
            "seed": self.seed,
            "forks": self.forks,
            **self.extra,
        }


def spec_of(journal: JournalPort, sweep_id: int) -> StudySpec:
    """The spec of the adaptive sweep ``sweep_id`` (NotFound, InvalidValue for a grid)."""
    for s in journal.sweeps():
        if s.id == sweep_id:
            return StudySpec.of(s)
    raise NotFound(f"there is no sweep {sweep_id}; list them with `lithify sweeps`")


@dataclass(frozen=True)
class Trial:
    """One trial of a study: a fork, its parameters, how it ended and its value(s)."""

    number: int
    branch: int
    params: dict[str, Any]
    state: str  # complete, pruned, paused (evolve), failed, running (not ended yet)
    values: tuple[float, ...] | None
    intermediate: dict[int, float] = field(default_factory=dict)
    attrs: dict[str, Any] = field(default_factory=dict)
    parent: int | None = None
    user_attrs: dict[str, Any] = field(default_factory=dict)
    told: dict[str, Any] | None = None  # what the coordinator told Optuna (``optuna:told``)
    error: dict[str, Any] | None = None  # why it failed or stopped (ename, evalue[, step])

    @property
    def value(self) -> float | None:
        """The single objective's value (None while running, failed, or for several)."""
        return self.values[0] if self.values and len(self.values) == 1 else None

    @property
    def step(self) -> int | None:
        """The last step reported (where a pruned trial stopped)."""
        return max(self.intermediate) if self.intermediate else None

    @property
    def constraints(self) -> dict[str, float] | None:
        """The values the study's constraints gave this trial, by name (<= 0: satisfied)."""
        value = (self.told or {}).get("constraints")
        return None if value is None else {str(k): float(v) for k, v in value.items()}

    @property
    def feasible(self) -> bool:
        """Whether the trial satisfies every constraint (True when the study has none)."""
        c = self.constraints
        return c is None or all(v <= 0.0 for v in c.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "branch": self.branch,
            "params": self.params,
            "state": self.state,
            "values": list(self.values) if self.values is not None else None,
            "value": self.value,
            "step": self.step,
            "parent": self.parent,
            "user_attrs": self.user_attrs,
            "constraints": self.constraints,
            "feasible": self.feasible,
            "error": self.error,
        }


@dataclass(frozen=True)
class Study:
    """An adaptive sweep's outcome: its trials in order, the best one (one objective) or the
    Pareto front (several)."""

    sweep: int
    objectives: tuple[str, ...]
    directions: tuple[str, ...]
    trials: tuple[Trial, ...]

    @property
    def completed(self) -> list[Trial]:
        return [t for t in self.trials if t.state == "complete" and t.values is not None]

    @property
    def best(self) -> Trial | None:
        """The trial with the best value (ties: the earliest) among those that satisfy the
        study's constraints, as Optuna's ``best_trial``; None before one completes (or none is
        feasible). For several objectives use ``pareto``."""
        if len(self.objectives) != 1:
            raise InvalidValue(
                f"this study has {len(self.objectives)} objectives: use study.pareto (the trials "
                "no other trial beats on every objective)"
            )
        done = [t for t in self.completed if t.feasible]
        if not done:
            return None
        sign = 1.0 if self.directions[0] == "maximize" else -1.0
        return max(done, key=lambda t: (sign * (t.value or 0.0), -t.number))

    @property
    def pareto(self) -> list[Trial]:
        """The completed (and feasible) trials no other one dominates (better or equal on every
        objective, better on one), in trial order."""
        signs = [1.0 if d == "maximize" else -1.0 for d in self.directions]
        done = [t for t in self.completed if t.feasible]

        def key(t: Trial) -> list[float]:
            assert t.values is not None
            return [s * v for s, v in zip(signs, t.values, strict=True)]

        front = []
        for t in done:
            kt = key(t)
            dominated = any(
                all(a >= b for a, b in zip(key(o), kt, strict=True))
                and any(a > b for a, b in zip(key(o), kt, strict=True))
                for o in done
                if o is not t
            )
            if not dominated:
                front.append(t)
        return front

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "sweep": self.sweep,
            "objectives": list(self.objectives),
            "directions": list(self.directions),
            "trials": [t.to_json() for t in self.trials],
            "counts": {
                s: sum(t.state == s for t in self.trials)
                for s in ("complete", "pruned", "paused", "failed", "running")
            },
        }
        if len(self.objectives) == 1:
            best = self.best
            doc["best"] = best.to_json() if best else None
        else:
            doc["pareto"] = [t.to_json() for t in self.pareto]
        return doc

    def rows(self) -> list[dict[str, Any]]:
        """Per trial: number, branch, state, params, value(s) and the step it reached."""
        rows = []
        for t in self.trials:
            row: dict[str, Any] = {"trial": t.number, "branch": t.branch, "state": t.state}
            row.update(t.params)
            for i, name in enumerate(self.objectives):
                row[name] = t.values[i] if t.values is not None else None
            row["step"] = t.step
            rows.append(row)
        return rows

    def table(self) -> pl.DataFrame:
        """``rows()`` as a polars frame."""
        import polars as pl

        rows = self.rows()
        return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()

    def __str__(self) -> str:
        counts = self.to_json()["counts"]
        head = (
            f"study {self.sweep}: {len(self.trials)} trials ({counts['complete']} complete, "
            f"{counts['pruned']} pruned, {counts['failed']} failed)"
        )
        if len(self.objectives) == 1:
            best = self.best
            if best is not None:
                head += (
                    f"; best {self.objectives[0]} = {best.value:.6g} on branch {best.branch} "
                    f"with {json.dumps(best.params)}"
                )
        else:
            head += f"; Pareto front: {len(self.pareto)} trials"
        return f"{head}\n{tables.text(self.rows())}"


class _Own:
    """What one fork's own events say (read once, then only what was appended since)."""

    def __init__(self) -> None:
        self.seen = 0  # the last seq read
        self.last: dict[str, float] = {}
        self.steps: dict[str, dict[int, float]] = {}
        self.attrs: dict[str, Any] = {}
        self.user_attrs: dict[str, Any] = {}
        self.told: dict[str, Any] | None = None


class Reader:
    """Reads trials from the journal, keeping what it read per fork (a fork's events before its
    head never change), so reading a study again costs only what was appended."""

    def __init__(self, journal: JournalPort) -> None:
        self.journal = journal
        self._own: dict[int, _Own] = {}
        self._lock = threading.Lock()

    def own(self, branch: int) -> _Own:
        """A fork's observations (last value, stepped values) and Optuna attributes."""
        with self._lock:
            o = self._own.setdefault(branch, _Own())
            j = self.journal
            j.flush(branch)
            after = max(o.seen, j.history.row(branch).fork_seq)  # its own events only
            while page := j.storage.events_after(branch, after, _PAGE):
                for e in page:
                    if e.kind == "observe":
                        doc = loads(e.payload)
                        name, value = doc["name"], float(doc["value"])
                        o.last[name] = value
                        step = doc.get("step")
                        if step is not None:
                            o.steps.setdefault(name, {})[int(step)] = value
                    elif e.kind == "effect":
                        doc = loads(e.payload)
                        _effect(o, str(doc.get("key", "")), doc.get("result"))
                after = page[-1].seq
                if len(page) < _PAGE:
                    break  # the last page: no query for an empty one
            o.seen = after
            return o

    def trials(self, spec: StudySpec) -> list[Trial]:
        """Every trial of the study, in fork order."""
        info = next(s for s in self.journal.sweeps() if s.id == spec.sweep)
        records = {r.branch: r for r in self.journal.runs(spec.sweep)}
        runs = {b: r.status for b, r in records.items()}
        objective = spec.objectives[0]
        out = []
        self.journal.settle()
        for number, bid in enumerate(info.branches):
            row = self.journal.history.row(bid)  # cached: a branch's row never changes
            o = self.own(bid)
            status = runs.get(bid, "pending")
            values: tuple[float, ...] | None = None
            if status == "finished":
                if all(name in o.last for name in spec.objectives):
                    values = tuple(o.last[name] for name in spec.objectives)
                    state = "complete"
                else:
                    state = "failed"
            elif status == "pruned":
                state = "pruned"
            elif status == "paused":  # a population member between generations
                state = "paused"
                if all(name in o.last for name in spec.objectives):
                    values = tuple(o.last[name] for name in spec.objectives)
            elif status == "failed":
                state = "failed"
            else:
                state = "running"
            out.append(
                Trial(
                    number,
                    bid,
                    dict(loads(row.params)),
                    state,
                    values,
                    dict(o.steps.get(objective, {})),
                    dict(o.attrs),
                    row.parent,
                    dict(o.user_attrs),
                    o.told,
                    _error(records.get(bid)) if state in ("failed", "pruned", "paused") else None,
                )
            )
        return out


def _error(record: Any) -> dict[str, Any] | None:
    """A run record's error document (None when it has none, or it is not JSON)."""
    if record is None or not record.error:
        return None
    try:
        doc = json.loads(record.error)
    except ValueError:
        return {"ename": "Error", "evalue": str(record.error)}
    return doc if isinstance(doc, dict) else {"ename": "Error", "evalue": str(doc)}


def _effect(o: _Own, key: str, result: Any) -> None:
    """What an Optuna effect on a trial's fork says of it."""
    if not isinstance(result, dict):
        return
    if key == TOLD_KEY:
        o.told = result
        o.attrs.update(result.get("attrs") or {})
        if result.get("study_attrs"):
            o.attrs["_study"] = result["study_attrs"]
    elif key.startswith(USER_ATTR_KEY):
        if "value" in result:
            o.user_attrs[key[len(USER_ATTR_KEY) :].rpartition("#")[0]] = result["value"]
    elif key.startswith(ATTRS_KEY):
        # a pruner's decision at a step ({"prune", "attrs"}), or attributes as they were
        attrs = result.get("attrs") if "prune" in result else result
        if isinstance(attrs, dict):
            o.attrs.update(attrs)


def to_optuna(spec: StudySpec, trials: list[Trial], *, running: bool = True) -> Any:
    """An in-memory ``optuna.Study`` holding these trials (``running=False`` leaves out the
    ones not ended), with the spec's directions and pruner."""
    import optuna
    from optuna.trial import TrialState, create_trial

    engines.quiet()
    from optuna.distributions import json_to_distribution

    study = optuna.create_study(
        study_name=spec.name,
        directions=cast(Any, list(spec.directions)),
        pruner=engines.pruner_of(spec.pruner_choice),
    )
    space = sp.distributions(spec.space)
    states = {
        "complete": TrialState.COMPLETE,
        "pruned": TrialState.PRUNED,
        "paused": TrialState.PRUNED,  # stopped at an interval's end, with its reported values
        "failed": TrialState.FAIL,
        "running": TrialState.RUNNING,
    }
    for t in trials:
        if t.state == "running" and not running:
            continue
        told = (t.told or {}).get("distributions")
        dists = {k: json_to_distribution(json.dumps(v)) for k, v in told.items()} if told else space
        params = {k: v for k, v in t.params.items() if k in dists}
        if set(params) != set(dists) and not (spec.define_by_run and t.state == "running"):
            continue  # a fork someone made by hand in the sweep: not a trial of this space
        if spec.define_by_run and not told:
            params, dists = {}, {}  # running: what it suggested is known once it is told
        try:
            frozen = create_trial(
                state=states[t.state],
                values=list(t.values) if t.values is not None else None,
                params=params,
                distributions=dists,
                intermediate_values={s: v for s, v in t.intermediate.items() if math.isfinite(v)},
                system_attrs={k: v for k, v in t.attrs.items() if k != "_study"},
                user_attrs={**t.user_attrs, "branch": t.branch},
            )
        except ValueError:
            continue  # its values lie outside the space (a fork made by hand): not a trial
        study.add_trial(frozen)
    for t in trials:  # the study's own attributes, as the last trial that saw them left them
        for k, v in (t.attrs.get("_study") or {}).items():
            study._storage.set_study_system_attr(study._study_id, k, v)
    return study


def safe_attrs(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """Optuna attributes that may go into the journal: JSON, and never a pickle."""
    out = {}
    for k, v in attrs.items():
        if any(k.startswith(p) for p in UNSAFE_ATTRS):
            continue
        try:
            json.dumps(v, allow_nan=False)
        except (TypeError, ValueError):
            continue
        out[k] = v
    return out


def result(journal: JournalPort, sweep_id: int) -> Study:
    """The study of an adaptive sweep as the journal has it now."""
    spec = spec_of(journal, sweep_id)
    trials = Reader(journal).trials(spec)
    return Study(sweep_id, spec.objectives, spec.directions, tuple(trials))


def study(journal: JournalPort, sweep_id: int) -> Any:
    """An ``optuna.Study`` (in memory) of an adaptive sweep's trials, built from the journal,
    so everything Optuna offers works on them: ``optuna.visualization``, ``optuna.importance``.
    Each trial's ``user_attrs["branch"]`` is its fork."""
    spec = spec_of(journal, sweep_id)
    return to_optuna(spec, Reader(journal).trials(spec))
