"""The one launch rule (``sweep.for_agent``/``sweep.defaults``) and the one axes rule
(``charts.default_axes``): what a sweep runs and what a chart shows are decided in the library,
the same for every client, and a refused launch writes nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workbench import Agent, Journal, charts, plugins, sweep
from workbench.bundled import template
from workbench.errors import InvalidValue, WorkbenchError

TESTS = str(Path(__file__).parent)


@pytest.fixture
def tally(monkeypatch, tmp_path):
    """A journal of the tiny third-party agent (registered at run time), 3 steps on main."""
    monkeypatch.setenv("LITHIFY_AGENTS", "tiny_agent:AGENT")
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # agents a test registers are gone after it
    monkeypatch.setattr(plugins, "_registered", dict(plugins._registered))
    monkeypatch.setattr(plugins, "_explicit", set(plugins._explicit))
    plugins.reload()
    from tiny_agent import Tally, start

    with Journal.open(tmp_path / "t.db", Tally) as j:
        start(j, 3)
        yield j
    plugins.reload()


def _written(j: Journal) -> tuple[int, int, int]:
    return len(j.branches()), len(j.sweeps()), len(j.runs())


def test_defaults_are_the_journals_agents(tally):
    d = sweep.defaults(tally)
    assert (d.agent, d.grid, d.runner, d.fn, d.notebook) == (
        "tally",
        {"step": [1, 2, 5]},
        "pool",
        "tiny_agent:fork",
        None,
    )
    assert d.to_json()["grid_text"] == "step=1,2,5"
    assert sweep.parse_grid(d.to_json()["grid_text"]) == d.grid
    assert 1 <= d.workers <= 4 and {"pool", "process"} <= set(d.runners)


def test_a_launch_takes_what_is_given_and_the_agent_fills_the_rest(tally):
    launch = sweep.for_agent(tally, "main@2", grid="step=2,3", seeds=2, workers=1)
    assert (launch.base, launch.at, launch.grid, launch.seeds) == (0, 2, {"step": [2, 3]}, 2)
    assert (launch.runner, launch.fn, launch.notebook, launch.workers) == (
        "pool",
        "tiny_agent:fork",
        None,
        1,
    )
    assert sweep.for_agent(tally, 3).grid == {"step": [1, 2, 5]}  # no grid: the agent's
    assert sweep.for_agent(tally, "1").at == 1  # a bare seq on main


def test_a_templated_runner_takes_the_agents_template(tally, monkeypatch):
    plugins.register(
        Agent(
            name="tally",
            state="tiny_agent:Tally",
            state_name="tests.tally/1",
            fork="tiny_agent:fork",
            template="generic_fork",
            grid={"step": [1]},
        )
    )
    warm = sweep.for_agent(tally, 3, runner="warm")
    assert warm.notebook == str(template("generic_fork")) and warm.fn is None
    # a function other than the agent's is passed on to the template (a generic one calls it)
    other = sweep.for_agent(tally, 3, runner="papermill", fn="sweep_fns:sleepy", grid="sleep=0")
    assert other.notebook == str(template("generic_fork")) and other.fn == "sweep_fns:sleepy"
    assert sweep.for_agent(tally, 3).runner == "pool"  # a fork function wins without a runner


def test_a_journal_without_an_agent_must_be_told_what_to_sweep(tmp_path):
    with Journal.open(tmp_path / "plain.db") as j:
        j.root().apply({"x": 1})
        d = sweep.defaults(j)
        assert (d.agent, d.grid, d.runner, d.fn) == (None, {}, "pool", None)
        with pytest.raises(InvalidValue, match="what to sweep"):
            sweep.for_agent(j, 1)
        with pytest.raises(InvalidValue, match="which fork function"):
            sweep.for_agent(j, 1, grid="x=1")
        with pytest.raises(InvalidValue, match="runs a template notebook"):
            sweep.for_agent(j, 1, grid="x=1", runner="warm")


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"grid": "  "}, "grid is empty"),
        ({"grid": {}}, "grid is empty"),
        ({"runner": "nope"}, "runner must be one of"),
        ({"seeds": 0}, "seeds must be a positive int"),
        ({"workers": 0}, "workers must be a positive int"),
        ({"scheduler": "tcp://10.0.0.1:8786"}, "scheduler is for the dask runner"),
        ({"runner": "dask", "scheduler": "tcp://10.0.0.1:8786"}, "SQLite file"),
        ({"grid": "nope=1"}, "nope"),
        ({"grid": "step=0"}, "at least 1"),
        ({"at": 99}, "has seqs 0..3"),
        ({"at": "main@zz"}, "main@zz"),
        ({"fn": "no_such_module:fn"}, "cannot be imported"),
    ],
)
def test_a_refused_launch_writes_nothing(tally, kw, message):
    before = _written(tally)
    at = kw.pop("at", 3)
    with pytest.raises(WorkbenchError, match=message):
        sweep.for_agent(tally, at, **kw).start()
    assert _written(tally) == before


def test_the_plan_records_how_it_runs_with_the_forks(tally):
    """A coordinator killed right after planning resumes the way the sweep was asked to run:
    the runner, workers and target are written in the plan's own transaction."""
    launch = sweep.for_agent(tally, 3, grid="step=1,2", workers=1, fork_timeout=30)
    planned = launch.plan()  # nothing started: as if the coordinator died here
    loaded = sweep.load(tally, planned.id)
    assert loaded.how == launch.how()
    assert loaded.how["runner"] == "pool" and loaded.how["workers"] == 1
    assert {r.status for r in tally.runs(planned.id)} == {"pending"}
    assert {r.runner for r in tally.runs(planned.id)} == {"pool"}


@pytest.mark.slow
def test_a_planned_sweep_resumes_with_what_it_recorded(tally):
    planned = sweep.for_agent(tally, 3, grid="step=1,2", workers=1).plan()
    result = sweep.resume(tally, planned.id, progress=False)
    assert result.ok and len(result.forks) == 2
    assert {r.runner for r in tally.runs(planned.id)} == {"pool"}


@pytest.mark.slow
def test_a_launch_starts_and_finishes(tally):
    handle = sweep.for_agent(tally, "main@3", grid="step=1,5", workers=2).start()
    result = handle.wait(show=False)
    assert result.ok
    totals = {f.params["step"]: f.metrics["total"] for f in result.forks}
    assert totals == {1: 6, 5: 18}  # 3 steps on main, then 3 rounds of the step


def _observed(j: Journal, rows: list[dict], metric: str = "total") -> None:
    at = j.root().head
    for i, params in enumerate(rows):
        b = j.root().fork_at(at, params=params)
        b.observe(metric, float(i))


def test_default_axes_are_the_agents_when_the_matrix_has_them(tally):
    assert (charts.default_axes(tally).x, charts.default_axes(tally).y) == ("step", "total")
    _observed(tally, [{"step": 1, "k": 1}, {"step": 2, "k": 1}])
    axes = charts.default_axes(tally)
    assert (axes.x, axes.y, axes.color) == ("step", "total", None)
    assert axes.params == ["k", "step"] or set(axes.params) == {"k", "step"}
    assert axes.varied == ["step"] and axes.metrics == ["total"]
    given = charts.default_axes(tally, x="k", y="total", color="step")
    assert (given.x, given.color) == ("k", "step")


def test_default_axes_fall_back_to_what_the_matrix_has(tmp_path):
    with Journal.open(tmp_path / "plain.db") as j:
        j.root().apply({"x": 1})
        empty = charts.default_axes(j)
        assert (empty.x, empty.y, empty.color) == (None, None, None)
        _observed(j, [{"fixed": 1, "lr": 0.1}, {"fixed": 1, "lr": 0.2}], metric="loss")
        axes = charts.default_axes(j)
        assert (axes.x, axes.y) == ("lr", "loss")  # the varied parameter, the only metric
        # a metric that only measures a parameter (named like it) is not the default y
        for b in j.branches()[1:]:
            j.branch(b.id).observe("fixed", 1.0)
        assert charts.default_axes(j).y == "loss"  # not "fixed", first by name


def test_the_agents_colour_goes_with_its_own_x(tally):
    plugins.register(
        Agent(
            name="tally",
            state="tiny_agent:Tally",
            state_name="tests.tally/1",
            fork="tiny_agent:fork",
            x="step",
            y="total",
            color="k",
        )
    )
    _observed(tally, [{"step": 1, "k": 1}, {"step": 2, "k": 2}])
    assert charts.default_axes(tally).color == "k"
    assert charts.default_axes(tally, x="k").color is None  # another x: its colour is not meant
    assert charts.default_axes(tally, color="").color is None  # "" asks for no colour
