"""``sweep.report``: inside a fork, observe a metric at a step; in an optimize sweep with a
pruner, ask Optuna's pruner whether to stop, and raise ``Pruned`` when it says so.

The pruner sees every other trial's intermediate values, read from the journal (so it works
across processes, kernels and Dask workers): the study is rebuilt in memory from the sweep's
forks, this trial included. Its answer at each step, and what it records beside a trial (a
rung reached), is journaled on this fork as an effect: the next decision anywhere sees the
rungs, and a fork run again reads the answer back (``workbench.replay``).
"""

from __future__ import annotations

import math
import threading
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import InvalidValue, Paused, Pruned
from .trials import ATTRS_KEY, Reader, StudySpec, safe_attrs, spec_of, to_optuna

if TYPE_CHECKING:
    from ..branch import Branch
    from ..port import JournalPort

_specs: dict[tuple[str, int], StudySpec | None] = {}
_readers: dict[int, Reader] = {}
_lock = threading.Lock()


def _spec(journal: JournalPort, sweep: int | None) -> StudySpec | None:
    if sweep is None:
        return None
    key = (journal.location, sweep)
    with _lock:
        if key not in _specs:
            try:
                _specs[key] = spec_of(journal, sweep)
            except InvalidValue:
                _specs[key] = None  # a grid sweep: nothing to prune against
        return _specs[key]


def _reader(journal: JournalPort) -> Reader:
    with _lock:
        r = _readers.get(id(journal))
        if r is None or r.journal is not journal:
            r = _readers[id(journal)] = Reader(journal)
        return r


def report(branch: Branch, value: float, step: int, metric: str | None = None) -> None:
    """Observe ``metric`` (default: the study's objective) at ``step`` on a fork; when the fork
    is a trial of an optimize sweep with a pruner, and the pruner stops it, raise ``Pruned``
    (let it propagate: the runner records the fork as pruned at this step); a member of an
    evolving population raises ``Paused`` when its interval is over. Outside adaptive sweeps
    it only observes (a learning curve the ``steps`` chart draws)."""
    journal = branch.journal
    spec = _spec(journal, branch.info.sweep)
    objective = spec.objectives[0] if spec is not None else None
    name = metric if metric is not None else objective
    if name is None:
        raise InvalidValue(
            f"branch {branch.id} is not a trial of an optimize sweep: say which metric this "
            "is, report(branch, value, step, metric='recall')"
        )
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise InvalidValue(f"step is a whole number >= 0, not {step!r}")
    branch.observe(name, value, step=step)
    if spec is None or objective is None or name != objective:
        return
    if spec.kind == "evolve":
        _pause_at_interval(journal, spec, branch, step)
        return
    if spec.pruner == "none" or len(spec.objectives) != 1 or not math.isfinite(float(value)):
        return
    if _should_prune(journal, spec, branch, step):
        raise Pruned(
            f"pruned at step {step} ({name} = {float(value):.6g}): the study's {spec.pruner} "
            f"pruner stopped branch {branch.id}",
            branch=branch.id,
            step=step,
            value=float(value),
        )


def _pause_at_interval(journal: JournalPort, spec: StudySpec, branch: Branch, step: int) -> None:
    """A population member pauses once it has reported ``interval`` times on its own events,
    except in the last generation, which runs to the end."""
    interval = int(spec.extra.get("interval", 0))
    generation = int(branch.params.get("generation", 0))
    if interval < 1 or generation >= int(spec.extra.get("generations", 1)) - 1:
        return
    reported = len(_reader(journal).own(branch.id).steps.get(spec.objectives[0], {}))
    if reported >= interval:
        raise Paused(
            f"paused at step {step}: generation {generation} of branch {branch.id} is over "
            f"({interval} reports); the next generation continues from its head",
            branch=branch.id,
            step=step,
        )


def _should_prune(journal: JournalPort, spec: StudySpec, branch: Branch, step: int) -> bool:
    """The pruner's answer at this step, journaled as an effect with what it recorded beside
    the trial (a rung reached): a fork run again reaching this step reads the answer back, as
    it was given, whatever the other trials have done since."""

    def decide() -> dict[str, Any]:
        trials = _reader(journal).trials(spec)
        # this fork is still running whatever its run record says (a rerun of a pruned fork)
        study = to_optuna(
            spec,
            [
                t if t.branch != branch.id else replace(t, state="running", values=None)
                for t in trials
            ],
        )
        frozen = next(
            (
                t
                for t in study.get_trials(deepcopy=False)
                if t.user_attrs.get("branch") == branch.id
            ),
            None,
        )
        if frozen is None:
            return {"prune": False, "attrs": {}}
        before = dict(frozen.system_attrs)
        pruned = bool(study.pruner.prune(study, frozen))
        after = study._storage.get_trial_system_attrs(frozen._trial_id)
        return {"prune": pruned, "attrs": safe_attrs(after) if after != before else {}}

    answer = branch.effect(f"{ATTRS_KEY}:{step}", decide)
    return isinstance(answer, dict) and bool(answer.get("prune"))


_user_attr_sets: dict[tuple[str, int, str, str], int] = {}


def set_user_attr(branch: Branch, key: str, value: Any) -> None:
    """Set a user attribute of this fork's trial, as Optuna's ``trial.set_user_attr`` does:
    a JSON value, journaled on the fork (an effect: a fork run again reads it back), shown with
    the trial (``Trial.user_attrs``) and in the Optuna study built from the journal. Setting a
    key again overrides it."""
    from .. import events as ev
    from .. import replay
    from .trials import USER_ATTR_KEY

    ev.check_text(key, "a user attribute's name")
    if "#" in key:
        raise InvalidValue(f"a user attribute's name has no '#': {key!r}")
    text = ev.canonical(value, "a user attribute")  # JSON-safe, or refused before writing
    run = replay.current()
    counter = (branch.journal.location, branch.id, run.run if run else "", key)
    with _lock:
        n = _user_attr_sets.get(counter, 0)
        _user_attr_sets[counter] = n + 1
    doc = {"value": ev.loads(text)}
    branch.effect(f"{USER_ATTR_KEY}{key}#{n}", lambda: doc)
