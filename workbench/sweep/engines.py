"""Optuna's samplers and pruners by the names lithify offers, with Optuna's own defaults and
any of their settings (``median:n_startup_trials=5,n_warmup_steps=2``), checked before anything
is forked; or Optuna sampler and pruner objects, used as they are. We write no sampler and no
pruner: these build Optuna's own.

A study has one sampler for its whole life, seeded once, as Optuna's own study has: rebuilding
it per trial turned a seeded grid into repeats and a seeded QMC into random points. A resumed
study gets its sampler back by replaying the recorded asks and tells (``workbench.sweep.driver``).

The names are one table each (``SAMPLER_TABLE``, ``PRUNER_TABLE``): a sampler or pruner is one
entry.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidValue
from . import space as sp


@dataclass(frozen=True)
class Engine:
    """One sampler or pruner lithify offers by name: Optuna's class, lithify's fill-ins where
    Optuna has no default, and whether it optimizes a single objective only."""

    name: str
    optuna: str  # the class of optuna.samplers or optuna.pruners
    defaults: dict[str, Any] = field(default_factory=dict)
    single_objective: bool = False
    needs: tuple[str, ...] = ()  # modules Optuna's class imports that a worker may not have


SAMPLER_TABLE: dict[str, Engine] = {
    e.name: e
    for e in (
        Engine("tpe", "TPESampler"),
        Engine("random", "RandomSampler"),
        Engine("grid", "GridSampler"),
        Engine("cmaes", "CmaEsSampler", single_objective=True, needs=("cmaes",)),  # one value
        Engine("nsga2", "NSGAIISampler"),
        Engine("qmc", "QMCSampler", needs=("scipy",)),
    )
}
PRUNER_TABLE: dict[str, Engine] = {
    e.name: e
    for e in (
        Engine("none", "NopPruner"),
        Engine("median", "MedianPruner"),
        Engine("percentile", "PercentilePruner", {"percentile": 25.0}),
        Engine("asha", "SuccessiveHalvingPruner"),
        Engine("hyperband", "HyperbandPruner"),
    )
}
SAMPLERS = tuple(SAMPLER_TABLE)
PRUNERS = tuple(PRUNER_TABLE)
DIRECTIONS = ("maximize", "minimize")
OBJECT = "object"  # the name recorded for a sampler or pruner given as an Optuna object
# settings lithify passes itself (the seed, the grid's space, constraints): not settable by text
_OWN = {"seed", "search_space", "constraints_func", "independent_sampler"}


@dataclass(frozen=True)
class Choice:
    """A sampler or pruner by name with its settings (``name:key=value,...``), or an Optuna
    object given as it is (``obj``; then ``name`` is ``"object"``)."""

    name: str
    settings: dict[str, Any] = field(default_factory=dict)
    obj: Any = None

    @property
    def label(self) -> str:
        """As the spec records it and a form shows it."""
        if self.obj is not None:
            return f"{OBJECT}:{type(self.obj).__name__}"
        if not self.settings:
            return self.name
        return self.name + ":" + ",".join(f"{k}={_text(v)}" for k, v in self.settings.items())


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "none"
    return str(v)


def _value(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text.strip()


def parse(text: Any, what: str, names: tuple[str, ...]) -> Choice:
    """``name`` or ``name:key=value,key=value`` (``what``: "sampler" or "pruner"); an Optuna
    object is taken as it is."""
    if not isinstance(text, str):
        return _object(text, what)
    name, _, rest = text.partition(":")
    name = name.strip()
    if name not in names:
        raise InvalidValue(
            f"{what} is one of {', '.join(names)} (settings after a colon: "
            f"median:n_startup_trials=5,n_warmup_steps=2), or an Optuna {what} object, not "
            f"{text!r}"
        )
    settings: dict[str, Any] = {}
    for item in (p for p in rest.split(",") if p.strip()) if rest else ():
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise InvalidValue(f"{what} settings are key=value pairs separated by commas: {item!r}")
        settings[key.strip()] = _value(value)
    return Choice(name, settings)


def _object(obj: Any, what: str) -> Choice:
    import optuna

    base = optuna.samplers.BaseSampler if what == "sampler" else optuna.pruners.BasePruner
    if not isinstance(obj, base):
        raise InvalidValue(
            f"{what} is a name ({', '.join(SAMPLERS if what == 'sampler' else PRUNERS)}) or an "
            f"optuna.{'samplers.BaseSampler' if what == 'sampler' else 'pruners.BasePruner'}, "
            f"not {obj!r}"
        )
    return Choice(OBJECT, {}, obj)


def of_spec(spec_name: str, settings: Mapping[str, Any] | None) -> Choice:
    """The choice a recorded spec names (its settings recorded beside it)."""
    return Choice(spec_name.partition(":")[0], dict(settings or {}))


def _check_settings(cls: Any, settings: Mapping[str, Any], what: str, name: str) -> None:
    params = inspect.signature(cls.__init__).parameters
    allowed = sorted(p for p in params if p not in ("self", "args", "kwargs") and p not in _OWN)
    for key, value in settings.items():
        if key not in allowed:
            raise InvalidValue(
                f"the {name} {what} takes {', '.join(allowed) or 'no settings'}; not {key!r}"
            )
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise InvalidValue(f"{what} setting {key} is a plain value, not {value!r}") from None


def _here(module: str) -> bool:
    """Whether ``module`` can be imported in this install."""
    import importlib.util

    return importlib.util.find_spec(module) is not None


def check(
    sampler: Choice,
    pruner: Choice,
    n_objectives: int,
    space: Mapping[str, sp.Dimension] | None,
    seed: int | None,
) -> None:
    """Refuse a combination Optuna cannot run, unknown settings, a bad seed: every sampler and
    pruner is built once here, so Optuna's own complaints come before anything is forked."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise InvalidValue(f"seed is a whole number >= 0, not {seed!r}")
    if sampler.obj is not None and seed is not None:
        raise InvalidValue(
            "seed= seeds a sampler lithify builds; a sampler object carries its own seed: "
            "drop seed="
        )
    missing = [m for m in SAMPLER_TABLE.get(sampler.name, Engine("", "")).needs if not _here(m)]
    if missing:
        raise InvalidValue(
            f"the {sampler.name} sampler needs {', '.join(missing)} (Optuna's "
            f"{SAMPLER_TABLE[sampler.name].optuna} imports it), which this install lacks: pip "
            "install 'lithify-worker[samplers]' (the whole workbench, lithify-workbench, has it)"
        )
    if n_objectives > 1 and SAMPLER_TABLE.get(sampler.name, Engine("", "")).single_objective:
        raise InvalidValue(
            f"the {sampler.name} sampler optimizes one objective; with {n_objectives} "
            "objectives use nsga2, tpe, random, grid or qmc"
        )
    if n_objectives > 1 and (pruner.obj is not None or pruner.name != "none"):
        raise InvalidValue(
            "Optuna prunes single-objective studies only: with several objectives pass "
            "pruner='none'"
        )
    if sampler.name == "grid":
        if space is None:
            raise InvalidValue(
                "the grid sampler needs a space of ranges and choices, not a function"
            )
        sp.grid(space)  # every dimension enumerable, and not too many points
    if (
        sampler.name == "cmaes"
        and space is not None
        and all(isinstance(d, sp.Categorical) for d in space.values())
    ):
        raise InvalidValue("CMA-ES needs at least one numeric range; use tpe for choices only")
    if sampler.obj is None:
        make_sampler(sampler, seed, space or {}, n_objectives, 1)
    pruner_of(pruner)


def make_sampler(
    choice: Choice,
    seed: int | None,
    space: Mapping[str, sp.Dimension],
    n_objectives: int,
    workers: int,
) -> Any:
    """Optuna's sampler for a study (the object itself when one was given), built once per
    study. Optuna's "experimental" notices are silenced: the names offered here are tested
    with the Optuna version installed."""
    if choice.obj is not None:
        return choice.obj
    import warnings

    import optuna.samplers as s
    from optuna.exceptions import ExperimentalWarning

    cls = getattr(s, SAMPLER_TABLE[choice.name].optuna)
    _check_settings(cls, choice.settings, "sampler", choice.name)
    kw: dict[str, Any] = {"seed": seed, **choice.settings}
    if choice.name == "grid":
        return _grid(sp.grid(space), seed)
    if choice.name == "tpe" and workers > 1:
        kw.setdefault("constant_liar", True)  # several trials in flight: Optuna's advice
    if choice.name in ("cmaes", "qmc"):
        kw.setdefault("warn_independent_sampling", False)
    if choice.name == "qmc":
        kw.setdefault("warn_asynchronous_seeding", False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)
        try:
            return cls(**kw)
        except (TypeError, ValueError) as e:
            raise InvalidValue(f"Optuna's {cls.__name__} refused {choice.label!r}: {e}") from None


def _grid(search_space: dict[str, list[Any]], seed: int | None) -> Any:
    """Optuna's GridSampler, told not to stop the study when its grid is exhausted: that stop
    is for ``study.optimize``'s loop, which ask-and-tell does not run (the driver stops at the
    grid's size itself)."""
    from optuna.samplers import GridSampler

    class GridNoStop(GridSampler):
        def after_trial(self, study: Any, trial: Any, state: Any, values: Any) -> None:
            return None

    return GridNoStop(search_space, seed=seed)


def pruner_of(choice: Choice) -> Any:
    """Optuna's pruner for a choice, with Optuna's defaults under the settings given
    (``none``: Optuna's NopPruner; ``percentile`` needs a percentile: 25 unless set)."""
    if choice.obj is not None:
        return choice.obj
    import optuna.pruners as p

    engine = PRUNER_TABLE[choice.name]
    cls = getattr(p, engine.optuna)
    if choice.name == "none":
        if choice.settings:
            raise InvalidValue("the none pruner takes no settings")
        return cls()
    _check_settings(cls, choice.settings, "pruner", choice.name)
    try:
        return cls(**{**engine.defaults, **choice.settings})
    except (TypeError, ValueError) as e:
        raise InvalidValue(f"Optuna's {cls.__name__} refused {choice.label!r}: {e}") from None


def pruner_settings(obj: Any) -> tuple[str, dict[str, Any]]:
    """A pruner object as a name and settings the forks can build it from (forks run in other
    processes and never receive objects): one of Optuna's pruners whose settings round-trip,
    else ``InvalidValue`` saying to pass it by name."""
    import optuna.pruners as p

    for name, engine in PRUNER_TABLE.items():
        if type(obj) is getattr(p, engine.optuna):
            params = inspect.signature(type(obj).__init__).parameters
            settings = {}
            for key in params:
                if key in ("self", "args", "kwargs"):
                    continue
                if not hasattr(obj, f"_{key}"):
                    break
                settings[key] = getattr(obj, f"_{key}")
            else:
                try:
                    json.dumps(settings, allow_nan=False)
                    rebuilt = pruner_of(Choice(name, settings))
                except (TypeError, ValueError, InvalidValue):
                    break
                if _plain(vars(rebuilt)) == _plain(vars(obj)):
                    return name, settings
            break
    raise InvalidValue(
        f"a {type(obj).__name__} cannot be sent to the forks, which run in other processes; "
        f"pass the pruner by name with its settings instead: one of {', '.join(PRUNERS)}, e.g. "
        "'median:n_startup_trials=5,n_warmup_steps=2'"
    )


def _plain(attrs: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attrs.items() if isinstance(v, (int, float, str, bool, type(None)))}


def quiet() -> None:
    """Optuna's INFO lines off (a trial per line would drown the progress bar)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
