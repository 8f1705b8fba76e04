"""What an Optuna user hands a study besides a space of ranges, checked before anything is
forked: a define-by-run space (a function of an ``optuna.Trial``), constraints on observed
metrics (what Optuna's ``trial.set_constraint`` records), trials to run first (``enqueue``)
and trials of another study to learn from (``warm_start``). Each is recorded with the study in
a form a resumed coordinator can rebuild (a function by its importable name, constraints as
text).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InvalidValue
from ..plugins import import_ref
from . import space as sp

if TYPE_CHECKING:
    from ..journal import Journal
    from .trials import StudySpec

CALLABLE = "callable"  # recorded for a function that has no importable name
Constraints = Callable[[Mapping[str, float]], Any]
_CONSTRAINT = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*(<=|>=)\s*(\S+)\s*$")


def ref_of(fn: Callable[..., Any]) -> str:
    """A function's ``module:qualname`` when importing it gives it back, else ``"callable"``
    (then a resume must be given the function again)."""
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__qualname__", None)
    if not module or not name or "<" in name or module == "__main__":
        return CALLABLE
    ref = f"{module}:{name}"
    try:
        return ref if import_ref(ref) is fn else CALLABLE
    except Exception:  # noqa: BLE001 (not importable as named: it cannot be recorded)
        return CALLABLE


def space_function(given: Any) -> Callable[[Any], Any] | None:
    """The define-by-run function a space names (a callable, or ``"module:function"``), else
    None for a space of ranges."""
    if callable(given):
        return given  # type: ignore[no-any-return]
    if isinstance(given, str) and ":" in given and "=" not in given:
        try:
            fn = import_ref(given)
        except (ImportError, AttributeError, ValueError) as e:
            raise InvalidValue(
                f"the space function {given!r} cannot be imported ({type(e).__name__}: {e})"
            ) from None
        if not callable(fn):
            raise InvalidValue(f"{given!r} is not a function of an optuna.Trial")
        return fn  # type: ignore[no-any-return]
    return None


def try_space(fn: Callable[[Any], Any], tries: int = 16) -> list[dict[str, Any]]:
    """Run a define-by-run space on a throwaway study (random points): the parameter sets it
    suggests, so the fork's declared parameters can be checked before anything is written; an
    error in it is refused here."""
    import optuna

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    points = []
    for _ in range(tries):
        trial = study.ask()
        try:
            fn(trial)
        except Exception as e:  # noqa: BLE001 (the user's function: say what it raised)
            raise InvalidValue(
                f"the space function raised {type(e).__name__}: {e}; it is called with an "
                "optuna.Trial and suggests each parameter (trial.suggest_float(...))"
            ) from None
        if not trial.params:
            raise InvalidValue(
                "the space function suggested no parameter: call trial.suggest_int / "
                "suggest_float / suggest_categorical on the trial it is given"
            )
        points.append(dict(trial.params))
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
    return points


def check_enqueued_by_run(fn: Callable[[Any], Any], points: Sequence[Mapping[str, Any]]) -> None:
    """Each enqueued point run through a define-by-run space on a throwaway study, as the
    study will run it: a value outside what the space suggests (out of range, not a choice)
    or a parameter it never suggests is refused here, before anything is written."""
    import optuna

    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # no line per throwaway study
    try:
        for point in points:
            _check_enqueued_point(optuna, fn, point)
    finally:
        optuna.logging.set_verbosity(verbosity)


def _check_enqueued_point(optuna: Any, fn: Callable[[Any], Any], point: Mapping[str, Any]) -> None:
    """One enqueued point through the space function on a throwaway study."""
    import warnings

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.enqueue_trial(dict(point), skip_if_exists=False)
    trial = study.ask()
    try:
        with warnings.catch_warnings():
            # Optuna only warns of a fixed value outside its distribution: that one is an error
            # here; the space's other warnings are the study's to show when it runs
            warnings.simplefilter("ignore")
            warnings.filterwarnings("error", message=r"Fixed parameter .* out of")
            fn(trial)
    except Exception as e:  # noqa: BLE001 (what the space refused: say it)
        why = str(e).rstrip(".")
        raise InvalidValue(
            f"enqueued trial {dict(point)} does not fit the space function: {why}"
        ) from None
    extra = sorted(set(point) - set(trial.params))
    if extra:
        raise InvalidValue(
            f"enqueued trial {dict(point)}: the space function never suggests "
            f"{', '.join(map(repr, extra))} (it suggests {', '.join(trial.params)})"
        )


def constraints_of(given: Any) -> tuple[Constraints | None, Any]:
    """(the constraint function, what the spec records) for ``constraints=``: metric bounds
    like ``"cost<=5"`` (feasible when the trial's last ``cost`` is at most 5), or a function of
    the trial's last observations returning numbers (a list, or a dict by name), feasible when
    each is <= 0 (Optuna's convention)."""
    if given is None:
        return None, None
    if isinstance(given, str):
        given = [given]
    if callable(given):
        return given, ref_of(given)
    if not isinstance(given, Sequence) or not given or not all(isinstance(c, str) for c in given):
        raise InvalidValue(
            "constraints= is a list of bounds like ['cost<=5', 'recall>=0.5'] or a function of "
            f"the trial's metrics returning numbers (<= 0: feasible), not {given!r}"
        )
    bounds = {c.strip(): _bound(c) for c in given}

    def check(metrics: Mapping[str, float]) -> dict[str, float]:
        out = {}
        for text, (name, op, limit) in bounds.items():
            value = metrics.get(name)
            if value is None:
                out[text] = 1e300  # never observed: infeasible
            else:
                out[text] = value - limit if op == "<=" else limit - value
        return out

    return check, list(given)


def _bound(text: str) -> tuple[str, str, float]:
    m = _CONSTRAINT.match(text)
    if not m:
        raise InvalidValue(f"a constraint is METRIC<=NUMBER or METRIC>=NUMBER, not {text!r}")
    try:
        limit = float(m[3])
    except ValueError:
        raise InvalidValue(f"{text!r}: {m[3]!r} is not a number") from None
    if not math.isfinite(limit):
        raise InvalidValue(f"{text!r}: the bound is a finite number")
    return m[1], m[2], limit


def recorded_constraints(recorded: Any) -> Constraints | None:
    """The constraint function a spec's record rebuilds (None: it was an unnamed function)."""
    if recorded is None or recorded == CALLABLE:
        return None
    if isinstance(recorded, str):
        return import_ref(recorded)  # type: ignore[no-any-return]
    fn, _ = constraints_of(list(recorded))
    return fn


def enqueued(
    given: Sequence[Mapping[str, Any]] | None, space: Mapping[str, sp.Dimension] | None
) -> list[dict[str, Any]]:
    """Trials to run first, each a dict of parameters (some may be left to the sampler), every
    value checked against the space."""
    if given is None:
        return []
    if isinstance(given, Mapping) or not isinstance(given, Sequence):
        raise InvalidValue(f"enqueue= is a list of parameter dicts, not {given!r}")
    out = []
    for point in given:
        if not isinstance(point, Mapping) or not point:
            raise InvalidValue(f"each enqueued trial is a dict of parameters, not {point!r}")
        if space is not None:
            for name, value in point.items():
                dim = space.get(name)
                if dim is None:
                    raise InvalidValue(
                        f"enqueued trial {dict(point)}: {name!r} is not in the space "
                        f"({', '.join(space)})"
                    )
                if not sp.contains(dim, value):
                    raise InvalidValue(
                        f"enqueued trial {dict(point)}: {name}={value!r} is outside its range"
                    )
        try:
            json.dumps(dict(point), allow_nan=False)
        except (TypeError, ValueError):
            raise InvalidValue(f"enqueued trial {point!r} holds a value that is not JSON") from None
        out.append(dict(point))
    return out


def parse_enqueue(lines: Sequence[str]) -> list[dict[str, Any]]:
    """``--enqueue budget=300,retrieval=lexical`` lines as parameter dicts (numbers read as
    numbers)."""
    out = []
    for line in lines:
        point: dict[str, Any] = {}
        for item in line.split(","):
            name, eq, value = item.partition("=")
            if not eq or not name.strip():
                raise InvalidValue(f"--enqueue takes NAME=VALUE,NAME=VALUE, not {line!r}")
            point[name.strip()] = _number(value.strip())
        out.append(point)
    return out


def _number(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def warm_trials(journal: Journal, given: Any, objectives: Sequence[str]) -> list[dict[str, Any]]:
    """The complete trials of another study to learn from, as the spec records them: a sweep
    id of this journal (an adaptive sweep with the same objectives) or an ``optuna.Study``."""
    import optuna
    from optuna.distributions import distribution_to_json
    from optuna.trial import TrialState

    if given is None:
        return []
    if isinstance(given, optuna.Study):
        if len(given.directions) != len(objectives):
            raise InvalidValue(
                f"warm_start: that study has {len(given.directions)} objectives, this one "
                f"{len(objectives)}"
            )
        frozen = given.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        source = given.study_name
    elif isinstance(given, int) and not isinstance(given, bool):
        from .trials import spec_of, study

        other = spec_of(journal, given)
        if tuple(other.objectives) != tuple(objectives):
            raise InvalidValue(
                f"warm_start: sweep {given} optimizes {list(other.objectives)}, this study "
                f"{list(objectives)}"
            )
        frozen = study(journal, given).get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        source = f"sweep {given}"
    else:
        raise InvalidValue(
            f"warm_start= is the id of an adaptive sweep of this journal or an optuna.Study, "
            f"not {given!r}"
        )
    return [
        {
            "params": dict(t.params),
            "values": list(t.values),
            "distributions": {
                k: json.loads(distribution_to_json(d)) for k, d in t.distributions.items()
            },
            "source": source,
        }
        for t in frozen
    ]


def study_timeout(timeout: Any) -> float | None:
    """A study's ``timeout=`` (seconds for the whole study), checked."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise InvalidValue(f"timeout is the study's seconds, a positive number, not {timeout!r}")
    return float(timeout)


def recorded_function(spec: StudySpec, key: str, given: Any, name: str) -> Any:
    """A resumed study's space or constraint function: the one given again, else the one its
    spec names (refused when it has no importable name)."""
    recorded = spec.extra.get(key)
    if recorded is None:
        if given is not None:
            raise InvalidValue(f"sweep {spec.sweep} has no {name} function; drop {name}=")
        return None
    if given is not None:
        return space_function(given)
    if recorded == CALLABLE:
        raise InvalidValue(
            f"sweep {spec.sweep}'s {name} is a function with no importable name: give it again, "
            f"sweep.resume_optimize(journal, {spec.sweep}, {name}=...)"
        )
    return space_function(recorded)
