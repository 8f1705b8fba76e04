"""The coordinator's side of a study: one Optuna study with one sampler for the study's whole
life, driven by ask-and-tell, every tell recorded on the trial's fork.

Each tell is journaled on the trial's branch as the effect ``optuna:told``: after how many asks
it came, its place among the tells, and what was told (state, values, intermediate values, the
metrics, the constraint values, user attributes). A resumed
coordinator rebuilds its study by *replaying* the recorded asks and tells in their order on a
sampler built as the first one was: the sampler's random state, its grid position, CMA-ES's
distribution all come back as they were when the coordinator died (as DBOS recovers a workflow
by replaying its recorded steps). Every replayed ask is checked against the trial's recorded
parameters; a sampler that does not reproduce them (no seed, another Optuna version) falls back
to a study rebuilt from the ended trials, with a warning: the trials to come may then differ
from an uninterrupted run's.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ..errors import InvalidValue
from . import engines
from . import space as sp
from .trials import TOLD_KEY, Reader, StudySpec, Trial, safe_attrs

if TYPE_CHECKING:
    from ..journal import Journal


SpaceFn = Callable[[Any], Any]


@dataclass(frozen=True)
class Told:
    """What one tell said (the ``optuna:told`` effect's result)."""

    after: int  # asks made before it
    order: int  # its place among the study's tells
    state: str  # complete, pruned, fail
    values: list[float] | None = None
    intermediate: dict[int, float] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    constraints: dict[str, float] | None = None
    user_attrs: dict[str, Any] = field(default_factory=dict)
    attrs: dict[str, Any] = field(default_factory=dict)
    study_attrs: dict[str, Any] = field(default_factory=dict)
    distributions: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, doc: Mapping[str, Any]) -> Told:
        return cls(
            int(doc["after"]),
            int(doc["order"]),
            str(doc["state"]),
            None if doc.get("values") is None else [float(v) for v in doc["values"]],
            {int(k): float(v) for k, v in (doc.get("intermediate") or {}).items()},
            dict(doc.get("metrics") or {}),
            None
            if doc.get("constraints") is None
            else {str(k): float(v) for k, v in doc["constraints"].items()},
            dict(doc.get("user_attrs") or {}),
            dict(doc.get("attrs") or {}),
            dict(doc.get("study_attrs") or {}),
            dict(doc.get("distributions") or {}),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "after": self.after,
            "order": self.order,
            "state": self.state,
            "values": self.values,
            "intermediate": {str(k): v for k, v in sorted(self.intermediate.items())},
            "metrics": self.metrics,
            "constraints": self.constraints,
            "user_attrs": self.user_attrs,
            "attrs": self.attrs,
            "study_attrs": self.study_attrs,
            "distributions": self.distributions,
        }


class _Mismatch(Exception):
    pass


class Driver:
    """One Optuna study of a sweep, asked and told from the coordinator's thread."""

    def __init__(
        self,
        journal: Journal,
        spec: StudySpec,
        workers: int,
        *,
        space_fn: SpaceFn | None = None,
        sampler: engines.Choice | None = None,
        constraints: Callable[[Mapping[str, float]], Any] | None = None,
        callbacks: Sequence[Callable[[Any, Any], None]] = (),
    ) -> None:
        self.journal = journal
        self.spec = spec
        self.workers = workers
        self.space_fn = space_fn
        self.choice = sampler if sampler is not None else spec.sampler_choice
        self.constraints = constraints
        self.callbacks = list(callbacks)
        self.dists = sp.distributions(spec.space) if space_fn is None else {}
        self.asked = 0
        self.told = 0
        self.stopped = False  # a callback called study.stop(), or a trial observed no objective
        self.missing: str | None = None  # why: a fork finished without observing an objective
        self.study = self._new_study(spec.seed)

    # -- the study -------------------------------------------------------------------------

    def _constraints(self, metrics: Mapping[str, float]) -> dict[str, float] | None:
        """The constraint values of a trial with these metrics (<= 0: satisfied), as Optuna's
        ``trial.set_constraint`` takes them: by name (a bound's text, or the position of a
        function's value)."""
        if self.constraints is None:
            if self.spec.extra.get("constraints"):
                raise InvalidValue(
                    f"study {self.spec.sweep} has constraints: pass constraints= again to go on"
                )
            return None
        given = self.constraints(metrics)
        if isinstance(given, Mapping):
            out = {str(k): float(v) for k, v in given.items()}
        else:
            out = {str(i): float(v) for i, v in enumerate(given)}
        if not all(math.isfinite(v) for v in out.values()):
            raise InvalidValue(
                f"the constraints gave {out} for {dict(metrics)}: finite numbers only"
            )
        return out

    def _new_study(self, seed: int | None) -> Any:
        import optuna

        engines.quiet()
        sampler = engines.make_sampler(
            self.choice, seed, self.spec.space, len(self.spec.objectives), self.workers
        )
        study = optuna.create_study(
            study_name=self.spec.name,
            directions=cast(Any, list(self.spec.directions)),
            sampler=sampler,
            pruner=engines.pruner_of(self.spec.pruner_choice),
        )
        for params in self.spec.extra.get("enqueue") or []:
            study.enqueue_trial(dict(params), skip_if_exists=False)
        for warm in self.spec.extra.get("warm_start") or []:
            study.add_trial(self._frozen(warm))
        return study

    def _frozen(self, warm: Mapping[str, Any]) -> Any:
        from optuna.distributions import json_to_distribution
        from optuna.trial import TrialState, create_trial

        dists = {k: json_to_distribution(json.dumps(v)) for k, v in warm["distributions"].items()}
        return create_trial(
            state=TrialState.COMPLETE,
            values=[float(v) for v in warm["values"]],
            params=dict(warm["params"]),
            distributions=dists,
            user_attrs={"warm_start": warm.get("source")},
        )

    # -- asking ----------------------------------------------------------------------------

    def ask(self) -> tuple[Any, dict[str, Any]]:
        """The next trial and its parameters (a define-by-run space runs on it here)."""
        if self.space_fn is None:
            trial = self.study.ask(self.dists)
        else:
            trial = self.study.ask()
            self.space_fn(trial)
            if not trial.params:
                raise InvalidValue(
                    "the space function suggested no parameter: call trial.suggest_int / "
                    "suggest_float / suggest_categorical on the trial it is given"
                )
        self.asked += 1
        return trial, dict(trial.params)

    # -- telling ---------------------------------------------------------------------------

    def tell(self, trial: Any, branch: int, status: str, reader: Reader) -> Told | None:
        """Tell Optuna how the trial's fork ended and journal what was told on it; returns the
        record, or None when it did not end (cancelled: a resume runs it again)."""
        if status == "cancelled":
            return None
        own = reader.own(branch)
        objectives = self.spec.objectives
        steps = dict(own.steps.get(objectives[0], {}))
        values: list[float] | None = None
        if status == "finished":
            missing = [o for o in objectives if o not in own.last]
            if missing:
                state = "fail"
                names = ", ".join(repr(m) for m in missing)
                seen = ", ".join(sorted(own.last)) or "nothing"
                why = (
                    f"the fork finished but never observed {names} (it observed {seen}): "
                    "observe it, or return it (return {'name': value}), so the study can "
                    "rank the fork"
                )
                self.journal.record_run(
                    branch,
                    self.spec.sweep,
                    "failed",
                    error=_json({"ename": "NoObjective", "evalue": why}),
                )
                # every later trial would run to its end for nothing: the study stops here
                self.stopped = True
                self.missing = self.missing or f"branch {branch}: {why}"
            else:
                state, values = "complete", [own.last[o] for o in objectives]
        elif status == "pruned":
            state = "pruned"
        else:
            state = "fail"
        constraints = self._constraints(own.last) if state == "complete" else None
        told = Told(
            self.asked,
            self.told,
            state,
            values,
            steps,
            dict(own.last) if constraints is not None else {},
            constraints,
            dict(own.user_attrs),
            distributions=_dists_json(trial.distributions),
        )
        frozen = self._tell(trial, branch, told)
        told = Told(
            told.after,
            told.order,
            told.state,
            told.values,
            told.intermediate,
            told.metrics,
            told.constraints,
            told.user_attrs,
            safe_attrs(frozen.system_attrs),
            safe_attrs(self.study._storage.get_study_system_attrs(self.study._study_id)),
            told.distributions,
        )
        doc = told.to_json()
        self.journal.branch(branch).effect(TOLD_KEY, lambda: doc)
        for callback in self.callbacks:
            self._call(callback, frozen)
        return told

    def _tell(self, trial: Any, branch: int, told: Told) -> Any:
        """Tell one trial as the record says (live or replayed); the frozen trial."""
        from optuna.trial import TrialState

        states = {
            "complete": TrialState.COMPLETE,
            "pruned": TrialState.PRUNED,
            "fail": TrialState.FAIL,
        }
        trial.set_user_attr("branch", branch)
        for k, v in told.user_attrs.items():
            trial.set_user_attr(k, v)
        for k, v in (told.constraints or {}).items():
            if hasattr(trial, "set_constraint"):  # Optuna 5
                trial.set_constraint(k, v)
        if told.constraints and not hasattr(trial, "set_constraint"):  # Optuna 4's one list
            storage = self.study._storage
            storage.set_trial_system_attr(
                trial._trial_id, "constraints", list(told.constraints.values())
            )
        if len(self.spec.objectives) == 1:
            for step, value in sorted(told.intermediate.items()):
                if math.isfinite(value):
                    trial.report(value, step)
        if told.state == "complete":
            self.study.tell(trial, told.values)
        else:
            self.study.tell(trial, state=states[told.state])
        self.told += 1
        return self.study._storage.get_trial(trial._trial_id)

    def _call(self, callback: Callable[[Any, Any], None], frozen: Any) -> None:
        """A callback, as ``study.optimize`` calls it; ``study.stop()`` in it ends the study."""
        local = getattr(self.study, "_thread_local", None)
        if local is not None:
            local.in_optimize_loop = True
        try:
            callback(self.study, frozen)
        finally:
            if local is not None:
                local.in_optimize_loop = False
        if getattr(self.study, "_stop_flag", False):
            self.stopped = True

    # -- resuming --------------------------------------------------------------------------

    def resume(self, trials: Sequence[Trial], reader: Reader) -> list[tuple[Any, int]]:
        """Bring the study to where the journal says it was: replay the recorded asks and tells
        (see the module docstring), tell the trials that ended untold, and return the asked
        trials that never ended, with their branches, to run again."""
        told = {t.branch: Told.of(t.told) for t in trials if t.told is not None}
        if trials and (self.spec.seed is None and self.choice.obj is None):
            return self._rebuild(trials, told, reader, why=None)
        try:
            asked = self._replay(trials, told)
        except _Mismatch as e:
            return self._rebuild(trials, told, reader, why=str(e))
        rerun = []
        for t, trial in zip(trials, asked, strict=True):
            if t.branch in told:
                continue
            if t.state in ("complete", "pruned", "failed"):
                status = {"complete": "finished", "pruned": "pruned", "failed": "failed"}[t.state]
                self.tell(trial, t.branch, status, reader)  # ended, but the tell was lost
            else:
                rerun.append((trial, t.branch))
        return rerun

    def _replay(self, trials: Sequence[Trial], told: Mapping[int, Told]) -> list[Any]:
        asked: list[Any] = []
        by_order = sorted(
            (t for t in trials if t.branch in told), key=lambda t: told[t.branch].order
        )
        for t in by_order:
            record = told[t.branch]
            while self.asked < min(record.after, len(trials)):
                asked.append(self._ask_again(trials[self.asked]))
            if t.number >= len(asked):
                raise _Mismatch(f"trial {t.number} was told before it was asked")
            self._tell(asked[t.number], t.branch, record)
        while self.asked < len(trials):
            asked.append(self._ask_again(trials[self.asked]))
        return asked

    def _ask_again(self, t: Trial) -> Any:
        trial, params = self.ask()
        recorded = {k: v for k, v in t.params.items() if k in params or k in self.dists}
        if params != recorded:
            raise _Mismatch(
                f"the sampler gave trial {t.number} {params}, where the study recorded {recorded}"
            )
        return trial

    def _rebuild(
        self,
        trials: Sequence[Trial],
        told: Mapping[int, Told],
        reader: Reader,
        why: str | None,
    ) -> list[tuple[Any, int]]:
        """A study from the ended trials as frozen trials, for a sampler that cannot replay
        (unseeded, or it did not reproduce a recorded trial: ``why``)."""
        from optuna.distributions import json_to_distribution
        from optuna.trial import TrialState, create_trial

        if why is not None:
            warnings.warn(
                f"study {self.spec.sweep}: {why}; the study goes on from its ended trials with "
                "a sampler seeded anew, so the trials to come may differ from an uninterrupted "
                "run's",
                RuntimeWarning,
                stacklevel=2,
            )
        seed = None if self.spec.seed is None else self.spec.seed + len(trials)
        self.study = self._new_study(seed)
        self.asked, self.told = len(trials), len(told)
        states = {"complete": TrialState.COMPLETE, "pruned": TrialState.PRUNED}
        rerun: list[tuple[Any, int]] = []
        for t in trials:
            record = told.get(t.branch)
            dists = (
                {k: json_to_distribution(json.dumps(v)) for k, v in record.distributions.items()}
                if record is not None and record.distributions
                else {k: v for k, v in self.dists.items() if k in t.params}
            )
            params = {k: v for k, v in t.params.items() if k in dists}
            if t.state in ("complete", "pruned", "failed"):
                state = states.get(t.state, TrialState.FAIL)
                values = list(t.values) if t.state == "complete" and t.values else None
                self.study.add_trial(
                    create_trial(
                        state=state,
                        values=values,
                        params=params,
                        distributions=dists,
                        intermediate_values={
                            s: v for s, v in t.intermediate.items() if math.isfinite(v)
                        },
                        user_attrs={"branch": t.branch},
                    )
                )
                if record is None:  # ended, never recorded as told: say what it was told
                    frozen = self.study.get_trials(deepcopy=False)[-1]
                    doc = Told(
                        self.asked,
                        self.told,
                        "complete" if values else "pruned" if t.state == "pruned" else "fail",
                        values,
                        dict(t.intermediate),
                        distributions=_dists_json(frozen.distributions),
                    ).to_json()
                    self.told += 1
                    self.journal.branch(t.branch).effect(TOLD_KEY, lambda doc=doc: doc)
            else:
                self.study.enqueue_trial(params, skip_if_exists=False)
                trial = self.study.ask(dists) if dists else self.study.ask()
                if self.space_fn is not None and not dists:
                    self.space_fn(trial)
                rerun.append((trial, t.branch))
        return rerun


def _dists_json(dists: Mapping[str, Any]) -> dict[str, Any]:
    from optuna.distributions import distribution_to_json

    return {k: json.loads(distribution_to_json(d)) for k, d in dists.items()}


def _json(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc)
