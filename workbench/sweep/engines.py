"""Optuna's samplers and pruners by the names lithify offers, checked before anything is
forked. We write no sampler and no pruner: these build Optuna's own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InvalidValue
from . import space as sp

SAMPLERS = ("tpe", "random", "grid", "cmaes", "nsga2", "qmc")
PRUNERS = ("none", "median", "percentile", "asha", "hyperband")
SINGLE_OBJECTIVE = {"cmaes"}  # Optuna's CMA-ES optimizes one value
DIRECTIONS = ("maximize", "minimize")


def check(
    sampler: str,
    pruner: str,
    n_objectives: int,
    space: Mapping[str, sp.Dimension],
    seed: int | None,
) -> None:
    """Refuse an unknown sampler or pruner, a combination Optuna cannot run, a bad seed."""
    if sampler not in SAMPLERS:
        raise InvalidValue(f"sampler is one of {', '.join(SAMPLERS)}, not {sampler!r}")
    if pruner not in PRUNERS:
        raise InvalidValue(f"pruner is one of {', '.join(PRUNERS)}, not {pruner!r}")
    if n_objectives > 1 and sampler in SINGLE_OBJECTIVE:
        raise InvalidValue(
            f"the {sampler} sampler optimizes one objective; with {n_objectives} objectives use "
            "nsga2, tpe, random, grid or qmc"
        )
    if n_objectives > 1 and pruner != "none":
        raise InvalidValue(
            "Optuna prunes single-objective studies only: with several objectives pass "
            "pruner='none'"
        )
    if sampler == "grid":
        sp.grid(space)  # every dimension enumerable, and not too many points
    if sampler == "cmaes" and all(isinstance(d, sp.Categorical) for d in space.values()):
        raise InvalidValue("CMA-ES needs at least one numeric range; use tpe for choices only")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise InvalidValue(f"seed is a whole number >= 0, not {seed!r}")


def trial_seed(seed: int | None, index: int) -> int | None:
    """The sampler's seed for the ``index``-th trial: a study resumed from the journal samples
    what an uninterrupted one would (the sampler is made anew, seeded by trial)."""
    if seed is None:
        return None
    return (seed * 1_000_003 + index * 7_919) % (2**32)


class _Grid:
    """Optuna's GridSampler, told not to stop the study when its grid is exhausted: that stop
    is for ``study.optimize``'s loop, which ask-and-tell does not run (the driver stops at the
    grid's size itself)."""

    @staticmethod
    def make(search_space: dict[str, list[Any]], seed: int | None) -> Any:
        from optuna.samplers import GridSampler

        class GridNoStop(GridSampler):
            def after_trial(self, study: Any, trial: Any, state: Any, values: Any) -> None:
                return None

        return GridNoStop(search_space, seed=seed)


def sampler(
    name: str,
    seed: int | None,
    space: Mapping[str, sp.Dimension],
    n_objectives: int,
    workers: int,
) -> Any:
    """Optuna's sampler called ``name`` (Optuna's "experimental" notices silenced: the names
    offered here are tested with the Optuna version installed)."""
    import warnings

    import optuna.samplers as s
    from optuna.exceptions import ExperimentalWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)
        return _sampler(s, name, seed, space, n_objectives, workers)


def _sampler(
    s: Any,
    name: str,
    seed: int | None,
    space: Mapping[str, sp.Dimension],
    n_objectives: int,
    workers: int,
) -> Any:
    if name == "tpe":
        return s.TPESampler(seed=seed, constant_liar=workers > 1, multivariate=True)
    if name == "random":
        return s.RandomSampler(seed=seed)
    if name == "grid":
        return _Grid.make(sp.grid(space), seed)
    if name == "cmaes":
        return s.CmaEsSampler(seed=seed, warn_independent_sampling=False)
    if name == "nsga2":
        return s.NSGAIISampler(seed=seed, population_size=max(4, min(50, 2 * workers + 2)))
    return s.QMCSampler(seed=seed, scramble=seed is not None, warn_independent_sampling=False)


def pruner(name: str) -> Any:
    """Optuna's pruner called ``name`` (``none``: Optuna's NopPruner)."""
    import optuna.pruners as p

    if name == "median":
        return p.MedianPruner(n_startup_trials=5, n_warmup_steps=1)
    if name == "percentile":
        return p.PercentilePruner(25.0, n_startup_trials=5, n_warmup_steps=1)
    if name == "asha":
        return p.SuccessiveHalvingPruner()
    if name == "hyperband":
        return p.HyperbandPruner()
    return p.NopPruner()


def quiet() -> None:
    """Optuna's INFO lines off (a trial per line would drown the progress bar)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
