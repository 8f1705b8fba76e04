"""Studies you can trust: a seeded sampler is that sampler (the same trials as Optuna's own
study with one sampler object, uninterrupted and resumed), a resumed study writes what an
uninterrupted one writes, pruners have Optuna's defaults, and what an Optuna user reaches for
(returned values, enqueue, warm starts, define-by-run spaces, constraints, callbacks, user
attributes, a study timeout) works as Optuna's docs say.

Most tests drive the study's own coordinator (``StudyHandle``) with a runner that calls the fork
function in this process, armed for replay as every runner arms its forks; the SIGKILLed runs
on the real runners are at the end (slow)."""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import optuna
import pytest
from conftest import wait_for
from sweep_fns import quadratic_value

from workbench import Journal, replay, sweep
from workbench.errors import ForkFailed, InvalidValue
from workbench.forkrun import call_fork
from workbench.sweep.driver import Driver
from workbench.sweep.trials import spec_of

opt = importlib.import_module(
    "workbench.sweep.optimize"
)  # the module (sweep.optimize is a function)
TESTS = str(Path(__file__).parent)
XY = {"x": sweep.Float(0.0, 1.0), "y": sweep.Float(0.0, 1.0)}


class Inline:
    """A runner that calls the fork function in this process (one fork at a time), armed for
    replay as the process runner arms its workers; what it raises is the fork's error."""

    name = "inline"

    def __init__(self, fn: str) -> None:
        self.fn = fn

    def run_fork(self, ctx: Any) -> None:
        with replay.armed(ctx.journal_path, ctx.fork.branch, ctx.fork.start):
            try:
                call_fork(self.fn, ctx.journal_path, ctx.fork.branch, ctx.fork.params)
            except KeyboardInterrupt as e:  # the test's stand-in for a kill: not ended
                ctx.cancel.set()
                raise ForkFailed("stopped", ename="Cancelled", evalue=str(e)) from None
            except Exception as e:  # noqa: BLE001
                raise ForkFailed("failed", ename=type(e).__name__, evalue=str(e)) from None

    def close(self) -> None:
        pass


@pytest.fixture
def j(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(TESTS)
    from tiny_agent import Tally

    with Journal.open(tmp_path / "s.db", Tally) as journal:
        journal.root().apply({"add": 0})
        yield journal


def inline(
    journal: Journal,
    space: Any = XY,
    objective: str | None = "value",
    direction: str | None = "maximize",
    **kw: Any,
) -> sweep.Study:
    """A study run to its end by its coordinator on the inline runner (one worker)."""
    kw.setdefault("fn", "sweep_fns:quadratic")
    if kw.get("objectives"):
        direction = None
    planned = opt.plan_study(journal, 1, space, objective, direction, workers=1, **kw)
    sid = journal.open_sweep(0, 1, planned.spec, planned.launch.how())
    return _handle(journal, sid, planned.driver(journal, sid), planned.timeout).wait(show=False)


def resume_inline(journal: Journal, sid: int, **driver_kw: Any) -> sweep.Study:
    spec = spec_of(journal, sid)
    driver = Driver(journal, spec, 1, **driver_kw)
    return _handle(journal, sid, driver, spec.extra.get("timeout")).wait(show=False)


def _handle(journal: Journal, sid: int, driver: Driver, timeout: Any) -> opt.StudyHandle:
    how = next(s.how for s in journal.sweeps() if s.id == sid)
    return opt._handle(journal, driver.spec, Inline(how["fn"]), how, 1, None, driver, timeout)


def optuna_own(sampler: Any, n: int, space: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The trials Optuna's own study gives with one sampler object (``study.optimize``)."""
    study = optuna.create_study(direction="maximize", sampler=sampler)
    if space is not None:
        study.optimize(
            lambda t: quadratic_value(*(t.suggest_categorical(k, v) for k, v in space.items())),
            n_trials=n,
        )
    else:
        study.optimize(
            lambda t: quadratic_value(t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)),
            n_trials=n,
        )
    return [t.params for t in study.trials]


# -- a seeded sampler is that sampler ----------------------------------------------------------

SAMPLERS = [
    ("random", lambda: optuna.samplers.RandomSampler(seed=7)),
    ("tpe", lambda: optuna.samplers.TPESampler(seed=7, n_startup_trials=4)),
    ("qmc", lambda: optuna.samplers.QMCSampler(seed=7)),
    ("cmaes", lambda: optuna.samplers.CmaEsSampler(seed=7)),
    ("nsga2", lambda: optuna.samplers.NSGAIISampler(seed=7, population_size=4)),
]
SETTINGS = {"tpe": ":n_startup_trials=4", "nsga2": ":population_size=4"}


@pytest.mark.parametrize("name,make", SAMPLERS, ids=[s[0] for s in SAMPLERS])
def test_a_seeded_sampler_gives_optunas_own_trials(j, name, make):
    n = 12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        expected = optuna_own(make(), n)
    study = inline(j, sampler=name + SETTINGS.get(name, ""), seed=7, forks=n, pruner="none")
    assert [t.params for t in study.trials] == expected
    assert all(t.state == "complete" for t in study.trials)
    assert [t.value for t in study.trials] == [quadratic_value(**p) for p in expected]


@pytest.mark.parametrize("name,make", SAMPLERS, ids=[s[0] for s in SAMPLERS])
def test_a_resumed_study_goes_on_as_the_uninterrupted_one(j, monkeypatch, name, make):
    """Stopped mid-trial (between a step's delta and its report), then resumed: the same trials
    as Optuna's own study, CMA-ES's distribution and the QMC sequence included."""
    n = 10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        expected = optuna_own(make(), n)
    planned = opt.plan_study(
        j,
        1,
        XY,
        "value",
        "maximize",
        workers=1,
        forks=n,
        fn="sweep_fns:quadratic_after",
        sampler=name + SETTINGS.get(name, ""),
        seed=7,
        pruner="none",
    )
    sid = j.open_sweep(0, 1, planned.spec, planned.launch.how())
    monkeypatch.setenv("QUADRATIC_STOP", "6")  # the sixth trial (branch 6) stops mid-way
    first = _handle(j, sid, planned.driver(j, sid), None).wait(show=False)
    assert [t.state for t in first.trials] == ["complete"] * 5 + ["running"]
    monkeypatch.delenv("QUADRATIC_STOP")
    study = resume_inline(j, sid, sampler=planned.sampler)
    assert [t.params for t in study.trials] == expected
    assert all(t.state == "complete" for t in study.trials)


def test_a_seeded_three_by_three_grid_visits_nine_points(j):
    space = {"x": sweep.Categorical([0.1, 0.5, 0.9]), "y": sweep.Categorical([0.2, 0.6, 1.0])}
    study = inline(j, space=space, sampler="grid", seed=0, forks=20, pruner="none")
    points = [(t.params["x"], t.params["y"]) for t in study.trials]
    assert len(points) == 9 and len(set(points)) == 9  # the grid's size, each point once
    grid = optuna.samplers.GridSampler({"x": [0.1, 0.5, 0.9], "y": [0.2, 0.6, 1.0]}, seed=0)
    assert [t.params for t in study.trials] == optuna_own(
        grid, 9, space={"x": [0.1, 0.5, 0.9], "y": [0.2, 0.6, 1.0]}
    )


def test_a_sampler_object_is_used_as_it_is(j):
    sampler = optuna.samplers.RandomSampler(seed=3)
    study = inline(j, sampler=sampler, forks=4, pruner="none")
    assert [t.params for t in study.trials] == optuna_own(optuna.samplers.RandomSampler(seed=3), 4)
    sid = study.sweep
    assert spec_of(j, sid).sampler == "object:RandomSampler"
    with pytest.raises(InvalidValue, match="sampler object"):
        opt.start_resume_optimize(j, sid)
    with pytest.raises(InvalidValue, match="carries its own seed"):
        inline(j, sampler=optuna.samplers.RandomSampler(seed=3), seed=1, forks=1)
    with pytest.raises(InvalidValue, match="BaseSampler"):
        inline(j, sampler=object(), forks=1)


# -- pruners ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [
        ("median", optuna.pruners.MedianPruner()),
        ("percentile", optuna.pruners.PercentilePruner(25.0)),
        ("asha", optuna.pruners.SuccessiveHalvingPruner()),
        ("hyperband", optuna.pruners.HyperbandPruner()),
        ("median:n_startup_trials=2,n_warmup_steps=3", optuna.pruners.MedianPruner(2, 3)),
        ("percentile:percentile=40", optuna.pruners.PercentilePruner(40.0)),
    ],
)
def test_pruners_have_optunas_defaults_and_take_settings(text, expected):
    from workbench.sweep import engines

    built = engines.pruner_of(engines.parse(text, "pruner", engines.PRUNERS))
    assert type(built) is type(expected) and vars(built) == vars(expected)
    # an Optuna pruner object is taken as it is (by its settings: the forks rebuild it)
    name, settings = engines.pruner_settings(expected)
    rebuilt = engines.pruner_of(engines.Choice(name, settings))
    assert vars(rebuilt) == vars(expected)


def test_bad_sampler_and_pruner_settings_are_refused_before_anything_is_written(j):
    before = len(j.sweeps())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        patient = optuna.pruners.PatientPruner(None, 2)
    for kw, message in [
        ({"pruner": "median:n_startup=5"}, "takes"),
        ({"pruner": "median:n_warmup_steps"}, "key=value"),
        ({"sampler": "qmc:qmc_type=bogus"}, "refused"),
        ({"sampler": "random:seed=1"}, "takes"),
        ({"pruner": patient}, "by name"),
        ({"constraints": ["cost<1"]}, "METRIC<=NUMBER"),
        ({"enqueue": [{"x": 5.0}]}, "outside its range"),
        ({"enqueue": [{"z": 0.5}]}, "not in the space"),
        ({"timeout": 0}, "positive"),
    ]:
        with pytest.raises(InvalidValue, match=message):
            inline(j, forks=2, **kw)
    assert len(j.sweeps()) == before


def test_a_pruned_trial_is_pruned_as_optuna_prunes_it(j, monkeypatch):
    """The median pruner with Optuna's defaults (5 startup trials, no warm-up) over the tally
    fork: its answer at each step is journaled, so the study's trials say where each stopped."""
    monkeypatch.setenv("TALLY_LOG", str(j.path) + ".log")
    study = inline(
        j,
        space={"rate": sweep.Float(0.0, 1.0)},
        objective="total",
        fn="sweep_fns:tally",
        sampler="random",
        seed=2,
        forks=12,
        pruner="median",
    )
    states = [t.state for t in study.trials]
    assert states[:5] == ["complete"] * 5 and "pruned" in states
    # Optuna's own decision over the same intermediate values, trial by trial
    mirror = optuna.create_study(direction="maximize", pruner=optuna.pruners.MedianPruner())
    for t in study.trials:
        trial = mirror.ask({"rate": optuna.distributions.FloatDistribution(0, 1)})
        pruned_at = None
        for step in range(5):
            trial.report(sum([t.params["rate"] * (1 - t.params["rate"])] * (step + 1)), step)
            if trial.should_prune():
                pruned_at = step
                break
        if pruned_at is None:
            mirror.tell(trial, t.value)
            assert t.state == "complete"
        else:
            mirror.tell(trial, state=optuna.trial.TrialState.PRUNED)
            assert (t.state, t.step) == ("pruned", pruned_at)


def test_a_pruned_trial_has_one_value_and_state_in_the_matrix_charts_and_cli(j, monkeypatch):
    """A pruned trial's last report is an intermediate value: the whole-journal matrix, the
    whole-journal chart table and the study's own table agree that it has no value and is
    pruned (the tutorial's whole-journal chart drew it as a result: a zig-zag)."""
    from cli import lithify

    from workbench import charts

    monkeypatch.setenv("TALLY_LOG", str(j.path) + ".log")
    study = inline(
        j,
        space={"rate": sweep.Float(0.0, 1.0)},
        objective="total",
        fn="sweep_fns:tally",
        sampler="random",
        seed=2,
        forks=12,
        pruner="median",
    )
    states = {t.branch: t.state for t in study.trials}
    pruned = [b for b, s in states.items() if s == "pruned"]
    assert pruned and "complete" in states.values()
    wide = {r["branch"]: r for r in j.matrix(wide=True).iter_rows(named=True)}
    for b, state in states.items():
        assert wide[b]["state"] == state
        assert (wide[b]["total"] is None) == (state == "pruned")
    kept = {r["branch"]: r for r in j.matrix(wide=True, partial=True).iter_rows(named=True)}
    assert all(kept[b]["total"] is not None for b in pruned)  # asked for: the last report
    every = charts.gather(j, charts.Selection()).table
    own = charts.gather(j, charts.Selection(sweep=study.sweep)).table
    for table in (every, own):
        rows = {r["branch"]: r for r in table.iter_rows(named=True)}
        for b, state in states.items():
            assert rows[b]["_state"] == state
            assert (rows[b]["total"] is None) == (state == "pruned"), (b, state)
    out = lithify("--db", str(j.path), "matrix", "--wide", "--format", "json")
    assert out.returncode == 0, out.stderr
    rows = {r["branch"]: r for r in json.loads(out.stdout)}
    assert {b: rows[b]["state"] for b in states} == states
    assert all(rows[b]["total"] is None for b in pruned)
    bad = lithify("--db", str(j.path), "matrix", "--partial")
    assert bad.returncode != 0 and "--wide" in bad.stderr


def test_a_study_whose_forks_never_observe_the_objective_stops_after_the_first(j):
    """No agent declares what a fork function observes: the first trial that finishes without
    the objective fails saying what it did observe, and the study stops there (it ran every
    trial to its end, each failed with no reason given)."""
    from workbench.errors import NoObjective

    with pytest.raises(NoObjective, match="never observed 'loss'.*something_else") as err:
        inline(j, objective="loss", fn="sweep_fns:no_objective", forks=6, sampler="random")
    sid = err.value.sweep
    study = sweep.result(j, sid)
    assert [t.state for t in study.trials] == ["failed"]
    doc = study.trials[0].to_json()
    assert doc["error"]["ename"] == "NoObjective" and "something_else" in doc["error"]["evalue"]
    how = next(s for s in j.sweeps() if s.id == sid).how
    assert how["stopped"]["why"].startswith("no objective") and how["stopped"]["forks"] == 1


def test_an_evolution_whose_members_never_report_the_objective_stops_saying_so(j):
    from workbench.errors import NoObjective

    kw = {**EVOLVE_KW, "objective": "nosuchmetric", "generations": 2, "population": 2}
    with pytest.raises(NoObjective, match="never observed 'nosuchmetric'.*total"):
        sweep.evolve(j, 1, workers=1, progress=False, **kw)
    sid = j.sweeps()[-1].id
    assert {f.status for f in sweep.status(j, sid)} == {"failed"}  # not "finished"
    assert all(t.error and t.error["ename"] == "NoObjective" for t in sweep.result(j, sid).trials)


# -- resumed trials write what uninterrupted ones write ---------------------------------------


def _own(journal: Journal, branch: int) -> list[tuple[str, Any]]:
    b = journal.branch(branch)
    return [(r.kind, r.payload) for r in b.history(b.fork_seq + 1)]


def test_a_trial_stopped_between_a_delta_and_its_report_resumes_without_counting_twice(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(TESTS)
    from tiny_agent import Tally

    kw = dict(
        space={"rate": sweep.Float(0.0, 1.0)},
        objective="total",
        fn="sweep_fns:tally",
        sampler="tpe:n_startup_trials=3",
        seed=5,
        forks=6,
        pruner="median",
    )
    histories = []
    for name, stop in (("ref", None), ("killed", "3")):
        with Journal.open(tmp_path / f"{name}.db", Tally) as journal:
            journal.root().apply({"add": 0})
            monkeypatch.setenv("TALLY_LOG", str(tmp_path / f"{name}.log"))
            if stop is not None:
                planned = opt.plan_study(journal, 1, workers=1, **kw, direction="maximize")
                sid = journal.open_sweep(0, 1, planned.spec, planned.launch.how())
                monkeypatch.setenv("TALLY_STOP", "4:2")  # branch 4 (the 4th trial), step 2
                first = _handle(journal, sid, planned.driver(journal, sid), None).wait(show=False)
                assert [t.state for t in first.trials][-1] == "running"
                monkeypatch.delenv("TALLY_STOP")
                study = resume_inline(journal, sid, sampler=planned.sampler)
            else:
                study = inline(journal, **kw)
            histories.append(
                (
                    [(t.params, t.state, t.value, t.intermediate) for t in study.trials],
                    [_own(journal, t.branch) for t in study.trials],
                    (tmp_path / f"{name}.log").read_text().split(),
                )
            )
            assert all(t.value is None or t.value <= 1.25 for t in study.trials)
    (ref_trials, ref_own, ref_log), (trials, owns, log) = histories
    assert trials == ref_trials
    assert owns == ref_own  # the same deltas, observations, reports and answers, once each
    assert len(log) == len(set(log)) == len(ref_log)  # no committed effect ran again


# -- what an Optuna user reaches for ------------------------------------------------------------


def test_what_a_fork_function_returns_is_observed_as_an_objective_returns_its_value(j):
    study = inline(j, forks=3, sampler="random", seed=1, pruner="none")
    assert all(t.state == "complete" for t in study.trials)  # quadratic only returns its value
    two = inline(
        j,
        space={"x": sweep.Float(0.0, 1.0)},
        objective=None,
        objectives=["loss", "cost"],
        directions=["minimize", "minimize"],
        fn="sweep_fns:two_returned",
        forks=4,
        sampler="random",
        seed=1,
        pruner="none",
    )
    assert all(t.state == "complete" for t in two.trials) and two.pareto
    names = {
        r.payload["name"] for r in j.branch(two.trials[0].branch).history() if r.kind == "observe"
    }
    assert names == {"loss", "cost"}  # the note is not a number: left out
    once = inline(
        j, fn="sweep_fns:observes_and_returns", forks=2, sampler="random", seed=1, pruner="none"
    )
    for t in once.trials:
        assert [r.kind for r in j.branch(t.branch).history(j.info(t.branch).fork_seq + 1)].count(
            "observe"
        ) == 1
    nan = inline(j, fn="sweep_fns:returns_nan", forks=1, sampler="random", seed=1, pruner="none")
    assert nan.trials[0].state == "failed"
    error = json.loads(next(r.error for r in j.runs(nan.sweep)))
    assert "finite number" in error["evalue"]


def test_enqueued_trials_run_first_and_the_sampler_fills_the_rest(j):
    study = inline(
        j,
        forks=4,
        sampler="random",
        seed=4,
        pruner="none",
        enqueue=[{"x": 0.3, "y": 0.7}, {"x": 0.9}],
    )
    params = [t.params for t in study.trials]
    assert params[0] == {"x": 0.3, "y": 0.7} and params[1]["x"] == 0.9
    own = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(seed=4))
    own.enqueue_trial({"x": 0.3, "y": 0.7})
    own.enqueue_trial({"x": 0.9})
    own.optimize(
        lambda t: quadratic_value(t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)),
        n_trials=4,
    )
    assert params == [t.params for t in own.trials]
    assert study.best.params == {"x": 0.3, "y": 0.7}


def test_a_warm_start_learns_from_another_studys_trials(j):
    first = inline(j, forks=6, sampler="random", seed=0, pruner="none")
    warm = inline(
        j, forks=3, sampler="tpe:n_startup_trials=2", seed=3, pruner="none", warm_start=first.sweep
    )
    # Optuna's own: the same complete trials added, then the same seeded TPE
    own = optuna.create_study(
        direction="maximize", sampler=optuna.samplers.TPESampler(seed=3, n_startup_trials=2)
    )
    own.add_trials(
        sweep.study(j, first.sweep).get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    )
    own.optimize(
        lambda t: quadratic_value(t.suggest_float("x", 0, 1), t.suggest_float("y", 0, 1)),
        n_trials=3,
    )
    assert [t.params for t in warm.trials] == [t.params for t in own.trials[6:]]
    from_study = inline(
        j,
        forks=3,
        sampler="tpe:n_startup_trials=2",
        seed=3,
        pruner="none",
        warm_start=sweep.study(j, first.sweep),
    )
    assert [t.params for t in from_study.trials] == [t.params for t in warm.trials]
    with pytest.raises(InvalidValue, match="optimizes"):
        inline(j, forks=1, objective="other", warm_start=first.sweep)


def test_a_define_by_run_space_runs_on_each_trial_as_optunas_objective_would(j):
    from sweep_fns import conditional_space

    study = inline(
        j,
        space=conditional_space,
        fn="sweep_fns:conditional",
        forks=8,
        sampler="random",
        seed=5,
        pruner="none",
    )
    own = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(seed=5))

    def objective(t: Any) -> float:
        conditional_space(t)
        return quadratic_value(t.params["x"], t.params.get("y", 0.7))

    own.optimize(objective, n_trials=8)
    assert [t.params for t in study.trials] == [t.params for t in own.trials]
    assert {len(t.params) for t in study.trials} == {2, 3}  # conditional: y only when wide
    spec = spec_of(j, study.sweep)
    assert spec.define_by_run and spec.extra["space_fn"] == "sweep_fns:conditional_space"
    exported = sweep.study(j, study.sweep)
    assert [t.params for t in exported.trials] == [t.params for t in own.trials]
    assert [set(t.distributions) for t in exported.trials] == [set(t.params) for t in own.trials]
    with pytest.raises(InvalidValue, match="raised ZeroDivisionError"):
        inline(j, space=lambda t: 1 / 0, forks=1)
    # enqueued points are run through the space function before anything is written
    before = len(j.sweeps())
    for point, says in [
        ({"kind": "narrow", "x": 7.0}, "out of range"),
        ({"kind": "huge", "x": 0.2}, "does not fit the space function"),
        ({"kind": "narrow", "x": 0.2, "y": 0.5}, "never suggests 'y'"),
    ]:
        with pytest.raises(InvalidValue, match=says):
            inline(j, space=conditional_space, fn="sweep_fns:conditional", forks=1, enqueue=[point])
    assert len(j.sweeps()) == before
    ok = inline(
        j,
        space=conditional_space,
        fn="sweep_fns:conditional",
        forks=1,
        pruner="none",
        enqueue=[{"kind": "wide", "x": 0.25}],  # y is left to the sampler
    )
    assert ok.trials[0].params["kind"] == "wide" and ok.trials[0].params["x"] == 0.25


def test_constraints_are_optunas_constraints_func_on_observed_metrics(j):
    study = inline(
        j,
        space={"x": sweep.Float(0.0, 1.0)},
        objective="loss",
        direction="minimize",
        fn="sweep_fns:two_returned",
        forks=8,
        sampler="tpe:n_startup_trials=4",
        seed=2,
        pruner="none",
        constraints=["cost>=0.6"],
    )
    for t in study.trials:
        assert t.constraints == {"cost>=0.6": pytest.approx(0.6 - t.params["x"])}
        assert t.feasible == (t.params["x"] >= 0.6)
    feasible = [t for t in study.trials if t.feasible]
    assert study.best == min(feasible, key=lambda t: t.value)  # the best feasible, as Optuna's
    own = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=2, n_startup_trials=4))

    def objective(t: Any) -> float:
        x = t.suggest_float("x", 0, 1)
        t.set_constraint("cost>=0.6", 0.6 - x)
        return (x - 0.5) ** 2

    own.optimize(objective, n_trials=8)
    assert [t.params for t in study.trials] == [t.params for t in own.trials]
    exported = sweep.study(j, study.sweep)
    assert exported.best_trial.params == own.best_trial.params


def test_callbacks_are_called_after_each_trial_and_can_stop_the_study(j):
    seen: list[tuple[int, str]] = []

    def note(study: Any, trial: Any) -> None:
        seen.append((trial.number, trial.state.name))

    stop = optuna.study.MaxTrialsCallback(3)
    study = inline(j, forks=10, sampler="random", seed=1, pruner="none", callbacks=[note, stop])
    assert len(study.trials) == 3 and seen == [(0, "COMPLETE"), (1, "COMPLETE"), (2, "COMPLETE")]
    summary = next(s for s in sweep.summaries(j) if s.id == study.sweep)
    assert summary.state == "finished" and summary.planned == 3  # stopped, not pending


def test_a_forks_user_attributes_are_journaled_with_its_trial(j):
    study = inline(
        j, fn="sweep_fns:with_user_attrs", forks=2, sampler="random", seed=1, pruner="none"
    )
    t = study.trials[0]
    assert t.user_attrs == {"phase": "done", "inputs": {"x": t.params["x"], "tags": ["a", "b"]}}
    frozen = sweep.study(j, study.sweep).trials[0]
    assert frozen.user_attrs["phase"] == "done" and frozen.user_attrs["branch"] == t.branch
    with pytest.raises(InvalidValue):
        sweep.set_user_attr(j.branch(t.branch), "bad", object())


def test_a_study_timeout_starts_no_trial_after_it(j, monkeypatch):
    monkeypatch.setenv("QUADRATIC_SLEEP", "0.3")
    study = inline(
        j,
        fn="sweep_fns:slow_quadratic",
        forks=1000,
        sampler="random",
        seed=1,
        pruner="none",
        timeout=0.5,
    )
    assert 1 <= len(study.trials) < 1000
    assert all(t.state == "complete" for t in study.trials)  # the trial in flight ends
    summary = next(s for s in sweep.summaries(j) if s.id == study.sweep)
    assert summary.state == "finished"
    how = next(s.how for s in j.sweeps() if s.id == study.sweep)
    assert how["stopped"] == {"why": "timed out", "forks": len(study.trials)}


# -- SIGKILLed studies on the real runners ------------------------------------------------------

TALLY_KW: dict[str, Any] = {
    "space": {"rate": sweep.Float(0.0, 1.0)},
    "objective": "total",
    "sampler": "tpe:n_startup_trials=3",
    "seed": 11,
    "forks": 5,
    "pruner": "median:n_startup_trials=2",
}


def _tally_journal(path: Path) -> Journal:
    from tiny_agent import Tally

    journal = Journal.open(path, Tally)
    journal.root().apply({"add": 0})
    return journal


def _written(journal: Journal, study: sweep.Study) -> list[Any]:
    """What each trial's branch holds and how the study saw it, runner aside."""
    return [
        (t.params, t.state, t.value, t.intermediate, _own(journal, t.branch)) for t in study.trials
    ]


def _coordinator(db: Path, runner: str, notebook: str | None) -> str:
    nb = f", notebook={notebook!r}" if notebook else ""
    return (
        "import sys\n"
        f"sys.path.insert(0, {TESTS!r})\n"
        "from tiny_agent import Tally\n"
        "from workbench import Journal, sweep\n"
        f"with Journal.open({str(db)!r}, Tally) as j:\n"
        "    sweep.optimize(j, 1, {'rate': sweep.Float(0.0, 1.0)}, 'total', 'maximize',\n"
        f"        forks=5, workers=1, sampler='tpe:n_startup_trials=3', seed=11,\n"
        f"        pruner='median:n_startup_trials=2', fn='sweep_fns:tally',\n"
        f"        runner={runner!r}{nb}, progress=False)\n"
    )


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = []
        for task in Path(f"/proc/{p}/task").glob("*"):  # a thread's children are its own
            try:
                kids += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
        out += kids
        todo += kids
    return out


RUNNERS = [
    pytest.param("pool", None, id="pool"),
    pytest.param("process", None, id="process"),
    pytest.param("papermill", "generic_fork", id="papermill"),
    pytest.param("warm", "generic_fork", id="warm"),
    pytest.param("dask", None, id="dask"),
]


@pytest.mark.slow
@pytest.mark.parametrize("runner,notebook", RUNNERS)
def test_a_sigkilled_coordinator_resumes_to_the_uninterrupted_study(
    tmp_path, monkeypatch, runner, notebook
):
    if runner == "dask":
        pytest.importorskip("distributed")
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(TESTS)
    monkeypatch.setenv("TALLY_LOG", str(tmp_path / "ref.log"))
    with _tally_journal(tmp_path / "ref.db") as ref_j:
        reference = _written(ref_j, inline(ref_j, fn="sweep_fns:tally", **TALLY_KW))
    log = tmp_path / "killed.log"
    monkeypatch.setenv("TALLY_LOG", str(log))
    monkeypatch.setenv("TALLY_SLEEP", "0.3")
    db = tmp_path / "killed.db"
    _tally_journal(db).close()
    proc = subprocess.Popen([sys.executable, "-c", _coordinator(db, runner, notebook)])
    try:

        def mid_trial() -> bool:  # two trials told, the third one mid-way
            with Journal.open(db, readonly=True) as r:
                runs = r.runs()
                if sum(x.status in ("finished", "pruned") for x in runs) < 2:
                    return False
                running = [x.branch for x in runs if x.status == "running"]
                return any(2 <= len(r.branch(b).history(r.info(b).fork_seq + 1)) for b in running)

        wait_for(mid_trial, what="a trial mid-way after two ended", timeout=240)
        family = _descendants(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        wait_for(
            lambda: not any(Path(f"/proc/{p}").exists() and _alive(p) for p in family),
            what="the killed coordinator's workers to exit",
            timeout=60,
        )
    finally:
        if proc.poll() is None:
            proc.kill()
    monkeypatch.setenv("TALLY_SLEEP", "0")
    with Journal.open(db) as j:
        assert "running" in {r.status for r in j.runs()}  # killed mid-trial
        resumed = sweep.resume_optimize(j, 1, progress=False)
        written = _written(j, resumed)
        assert j.verify().ok
    assert written == reference  # the same trials, and each branch holds the same events once
    lines = log.read_text().split()
    assert len(lines) == len(set(lines)) == len((tmp_path / "ref.log").read_text().split())
    assert all(v is None or v <= 1.25 for _, _, v, _, _ in written)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("runner", ["pool", "process"])
def test_a_sigkilled_worker_is_run_again_and_the_study_ends_as_uninterrupted(
    tmp_path, monkeypatch, runner
):
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(TESTS)
    monkeypatch.setenv("TALLY_LOG", str(tmp_path / "ref.log"))
    with _tally_journal(tmp_path / "ref.db") as ref_j:
        reference = _written(ref_j, inline(ref_j, fn="sweep_fns:tally", **TALLY_KW))
    log = tmp_path / "killed.log"
    monkeypatch.setenv("TALLY_LOG", str(log))
    monkeypatch.setenv("TALLY_SLEEP", "0.3")
    with _tally_journal(tmp_path / "k.db") as j:
        kw = {k: v for k, v in TALLY_KW.items() if k not in ("space", "objective")}
        handle = sweep.start_optimize(
            j,
            1,
            TALLY_KW["space"],
            "total",
            "maximize",
            workers=1,
            fn="sweep_fns:tally",
            runner=runner,
            **kw,
        )

        def worker_mid_trial() -> int | None:
            runs = j.runs(handle.sweep_id)
            if sum(x.status in ("finished", "pruned") for x in runs) < 1:
                return None
            for x in runs:
                if x.status == "running" and len(_own(j, x.branch)) >= 2:
                    kids = _descendants(os.getpid())
                    workers = [p for p in kids if _is_worker(_cmdline(p))]
                    return workers[0] if workers else None
            return None

        worker = wait_for(worker_mid_trial, what="a worker mid-trial", timeout=240)
        os.kill(worker, signal.SIGKILL)
        monkeypatch.setenv("TALLY_SLEEP", "0")
        study = handle.wait(show=False)
        assert _written(j, study) == reference
    lines = log.read_text().split()
    assert len(lines) == len(set(lines)) == len((tmp_path / "ref.log").read_text().split())


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except OSError:
        return ""


@pytest.mark.slow
def test_a_fork_that_kills_its_worker_fails_saying_by_which_signal(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(TESTS)
    with _tally_journal(tmp_path / "k.db") as j:
        study = sweep.optimize(
            j,
            1,
            XY,
            "value",
            "maximize",
            forks=1,
            workers=1,
            fn="sweep_fns:kills_itself",
            sampler="random",
            seed=1,
            pruner="none",
            progress=False,
        )
        assert study.trials[0].state == "failed"
        run = j.runs(study.sweep)[0]
        error = json.loads(run.error)
        assert error["ename"] == "Killed" and error["signal"] == signal.SIGKILL
        assert "SIGKILL" in error["evalue"]
        assert error["stderr"][-1] == f"about to die on branch {run.branch}"
        # run twice (retried once): its one observation read back, not written again
        assert [r.kind for r in j.branch(run.branch).history(2)].count("observe") == 1


# -- evolve -------------------------------------------------------------------------------------

EVOLVE_KW: dict[str, Any] = {
    "space": {"rate": sweep.Float(0.0, 1.0)},
    "objective": "total",
    "population": 4,
    "generations": 3,
    "interval": 2,
    "seed": 3,
    "fn": "sweep_fns:tally",
}


def _members(journal: Journal, study: sweep.Study) -> list[Any]:
    out = []
    for t in study.trials:
        info = journal.info(t.branch)
        out.append(
            (t.params, t.state, t.value, info.parent, info.fork_seq, _own(journal, t.branch))
        )
    return out


@pytest.mark.slow
def test_an_evolution_of_the_docs_tally_stays_within_the_objectives_range(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(TESTS)
    with _tally_journal(tmp_path / "e.db") as j:
        study = sweep.evolve(j, 1, workers=2, progress=False, **EVOLVE_KW)
        gens = {t.branch: j.info(t.branch).params["generation"] for t in study.trials}
        assert sorted(gens.values()) == [0] * 4 + [1] * 4 + [2] * 4
        last = [t for t in study.trials if gens[t.branch] == 2]
        assert all(t.state == "complete" for t in last)
        for t in study.trials:  # every member's history holds five steps at most, once each
            steps = j.branch(t.branch).state().steps
            assert len(steps) <= 1 + 5 and (gens[t.branch] < 2 or len(steps) == 6)
            assert t.value is None or t.value <= 1.25 + 1e-12
        assert study.best.value <= 1.25 + 1e-12
        with pytest.raises(InvalidValue, match="evolve --resume"):
            sweep.resume(j, study.sweep)  # a grid resume would rerun the paused members


@pytest.mark.slow
def test_a_sigkilled_evolution_resumes_to_the_uninterrupted_one(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(TESTS)
    monkeypatch.setenv("TALLY_LOG", str(tmp_path / "ref.log"))
    with _tally_journal(tmp_path / "ref.db") as j:
        reference = _members(j, sweep.evolve(j, 1, workers=1, progress=False, **EVOLVE_KW))
    log = tmp_path / "killed.log"
    monkeypatch.setenv("TALLY_LOG", str(log))
    monkeypatch.setenv("TALLY_SLEEP", "0.25")
    db = tmp_path / "killed.db"
    _tally_journal(db).close()
    script = (
        "import sys\n"
        f"sys.path.insert(0, {TESTS!r})\n"
        "from tiny_agent import Tally\n"
        "from workbench import Journal, sweep\n"
        f"with Journal.open({str(db)!r}, Tally) as j:\n"
        "    sweep.evolve(j, 1, {'rate': sweep.Float(0.0, 1.0)}, 'total', population=4,\n"
        "        generations=3, interval=2, seed=3, fn='sweep_fns:tally', workers=1,\n"
        "        progress=False)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:

        def in_generation_one() -> bool:
            with Journal.open(db, readonly=True) as r:
                gen1 = [b.id for b in r.branches() if b.params.get("generation") == 1]
                status = {x.branch: x.status for x in r.runs()}
                return any(status.get(b) == "running" and len(_own(r, b)) >= 2 for b in gen1)

        wait_for(in_generation_one, what="a member of generation 1 mid-way", timeout=240)
        family = _descendants(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        wait_for(lambda: not any(_alive(p) for p in family), what="the workers to exit", timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    monkeypatch.setenv("TALLY_SLEEP", "0")
    with Journal.open(db) as j:
        paused = {r.branch: r.started for r in j.runs() if r.status == "paused"}
        assert paused  # generation 0 had paused
        cli = subprocess.run(
            [
                sys.executable,
                "-m",
                "workbench",
                "--db",
                str(db),
                "--json",
                "evolve",
                "--resume",
                "1",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert cli.returncode == 0, cli.stderr
        study = sweep.result(j, 1)
        assert _members(j, study) == reference
        after = {r.branch: r.started for r in j.runs()}
        assert all(after[b] == started for b, started in paused.items())  # stayed paused
        assert json.loads(cli.stdout)["best"]["value"] == study.best.value
    lines = log.read_text().split()
    assert len(lines) == len(set(lines)) == len((tmp_path / "ref.log").read_text().split())


# -- the study in Optuna's tools, and from the command line ------------------------------------


def test_a_study_exports_to_an_optuna_storage_as_an_optuna_study(j, tmp_path):
    from cli import lithify

    study = inline(
        j,
        space={"x": sweep.Float(0.0, 1.0)},
        objective="loss",
        direction="minimize",
        fn="sweep_fns:two_returned",
        forks=5,
        sampler="random",
        seed=4,
        pruner="none",
        constraints=["cost>=0.3"],
    )
    url = f"sqlite:///{tmp_path / 'optuna.db'}"
    r = lithify("--db", j.path, "--json", "study", "export", str(study.sweep), "--storage", url)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc == {
        "sweep": study.sweep,
        "storage": url,
        "study": f"lithify-sweep-{study.sweep}",
        "trials": 5,
    }
    loaded = optuna.load_study(study_name=doc["study"], storage=url)
    assert [t.params for t in loaded.trials] == [t.params for t in study.trials]
    assert [t.value for t in loaded.trials] == [t.value for t in study.trials]
    assert [t.user_attrs["branch"] for t in loaded.trials] == [t.branch for t in study.trials]
    assert loaded.best_trial.params == study.best.params  # the best feasible, as Optuna says
    assert loaded.user_attrs["lithify_sweep"] == study.sweep
    again = lithify("--db", j.path, "study", "export", str(study.sweep), "--storage", url)
    assert again.returncode == 1 and "--replace" in again.stderr
    ok = lithify("--db", j.path, "study", "export", str(study.sweep), "--storage", url, "--replace")
    assert ok.returncode == 0, ok.stderr
    bad = lithify("--db", j.path, "study", "export", str(study.sweep), "--storage", "nosuch://x")
    assert bad.returncode == 2 and "storage" in bad.stderr


def test_the_cli_takes_what_an_optuna_user_gives_a_study(j, tmp_path):
    from cli import lithify

    args = ["--db", j.path, "optimize", "--at", "1", "--objective", "value"]
    bad = [
        (["--space", "x=float:0:1", "--pruner", "median:n_startup=3"], "takes"),
        (["--space", "x=float:0:1", "--enqueue", "x=7"], "outside its range"),
        (["--space", "x=float:0:1", "--constraint", "value<0"], "METRIC<=NUMBER"),
        (["--space", "sweep_fns:nosuch"], "cannot be imported"),
    ]
    for extra, says in bad:
        r = lithify(*args, *extra, "--fn", "sweep_fns:quadratic")
        assert r.returncode == 2 and says in r.stderr, (extra, r.stderr)
    assert j.sweeps() == []  # refused before anything was written
    resume = lithify("--db", j.path, "optimize", "--resume", "1", "--enqueue", "x=0.5")
    assert resume.returncode == 2 and "drop --enqueue" in resume.stderr
    evolve = lithify("--db", j.path, "evolve", "--resume", "1", "--at", "1")
    assert evolve.returncode == 2 and "drop --at" in evolve.stderr


def _is_worker(cmdline: str) -> bool:
    """A runner's worker process: the pool's or the process runner's."""
    return "workbench.poolworker" in cmdline or "workbench.sweep.worker" in cmdline


def test_an_enqueued_point_is_refused_only_for_what_the_space_refuses(caplog):
    """A space's own warnings (Optuna's "range is not divisible by step") are not refusals; a
    fixed value out of its range is; and checking prints no line per throwaway study."""
    from workbench.sweep import options

    def stepped(t: Any) -> None:
        t.suggest_float("x", 0.0, 1.0, step=0.3)

    with caplog.at_level("INFO", logger="optuna"):
        options.check_enqueued_by_run(stepped, [{"x": 0.3}])
    assert not [r for r in caplog.records if "new study created" in r.getMessage()]
    with pytest.raises(InvalidValue, match="out of range"):
        options.check_enqueued_by_run(stepped, [{"x": 7.0}])
