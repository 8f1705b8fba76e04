"""The timeline, rank and edf views (issue 39), as Optuna draws them (plot_timeline,
plot_rank, plot_edf): on real studies whose trials complete, are pruned or fail, and on grids
recorded as a runner records them; each says in one line why it cannot draw, never draws a
layer without rows, and leaves NaN and missing values out."""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from test_charts import GRID_START, _params, make_grid, vega_lite_errors

from workbench import Journal, charts, sweep
from workbench.charts.rank import SHAPES
from workbench.charts.timeline import STATE_COLORS
from workbench.errors import CannotDraw

TESTS = str(Path(__file__).parent)
SPACE = {
    "x1": sweep.Float(-5.0, 10.0),
    "x2": sweep.Float(0.0, 15.0),
    "kind": sweep.Categorical(["a", "b", "c"]),
}


def layers(spec: dict) -> list[dict]:
    return spec.get("layer") or [spec]


def rows_of(layer: dict, spec: dict) -> list[dict]:
    """The rows a layer draws (its own data, else the chart's)."""
    return spec["datasets"][(layer.get("data") or spec["data"])["name"]]


def study(j: Journal, seed: int, forks: int = 12) -> Any:
    """A study of ``branin_or_boom`` on the pool runner: kind "c" fails, the median pruner
    stops some, the rest complete with a loss to minimize."""
    return sweep.optimize(
        j,
        1,
        SPACE,
        "loss",
        "minimize",
        forks=forks,
        workers=2,
        sampler="random",
        pruner="median",
        seed=seed,
        fn="sweep_fns:branin_or_boom",
        runner="pool",
        progress=False,
    )


@pytest.fixture(scope="module")
def studies(tmp_path_factory):
    """Two studies in one journal (the pool's workers import tests/sweep_fns)."""
    path = tmp_path_factory.mktemp("views") / "studies.db"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
        with Journal.open(path) as j:
            j.root().apply({"start": 1})
            first, second = study(j, 0), study(j, 1, forks=8)
    states = {t.state for t in first.trials}
    assert {"complete", "pruned", "failed"} <= states, states  # what the views must tell apart
    with Journal.open(path) as j:
        yield j, first, second


@pytest.mark.slow
def test_timeline_is_a_bar_per_trial_from_its_start_to_its_end_coloured_by_state(studies):
    j, s, _ = studies
    sel = charts.Selection(sweep=s.sweep)
    assert charts.why_not(j, sel)["timeline"] is None
    spec = charts.view(j, "timeline", sel).spec()
    assert vega_lite_errors(spec) == []
    assert spec["mark"]["type"] == "bar" and "layer" not in spec
    enc = spec["encoding"]
    assert (enc["x"]["field"], enc["x2"]["field"]) == ("_from", "_to")
    assert enc["x"]["title"].startswith("seconds since the first start")
    assert (enc["y"]["field"], enc["y"]["type"]) == ("_order", "ordinal")
    assert enc["y"]["title"] == "trial"
    rows = {r["branch"]: r for r in rows_of(spec, spec)}
    assert len(rows) == len(s.trials) == 12  # a bar per trial
    runs = {r.branch: r for r in j.runs(s.sweep)}
    for t in s.trials:
        bar, run = rows[t.branch], runs[t.branch]
        assert bar["_state"] == t.state and bar["_order"] == t.number
        assert bar["_seconds"] == pytest.approx((run.finished - run.started) / 1000)
        assert bar["_to"] - bar["_from"] == pytest.approx(bar["_seconds"])
        assert bar["x1"] == t.params["x1"] and bar["kind"] == t.params["kind"]
    assert min(r["_from"] for r in rows.values()) == 0
    states = [st for st in ("complete", "pruned", "failed") if any(t.state == st for t in s.trials)]
    scale = enc["color"]["scale"]
    assert enc["color"]["field"] == "_state" and scale["domain"] == states
    assert scale["range"] == [STATE_COLORS[st] for st in states]
    tips = {t.get("title") or t["field"] for t in enc["tooltip"]}
    assert {"branch", "trial", "x1", "x2", "kind", "state", "seconds", "started", "loss"} <= tips
    assert {p["name"] for p in _params(spec)} == {"pick", "brush"}


def test_timeline_of_running_cancelled_and_pending_forks_without_any_metric(tmp_path):
    """A running fork's bar ends now; a cancelled one where it was stopped; a pending one has
    no bar. No fork has observed anything: the metric views wait, the timeline draws."""
    with Journal.open(tmp_path / "live.db") as j:
        at = j.root().apply({"start": 1})
        s = sweep.plan(j, 0, at, {"budget": [100, 300, 1000]})
        running, cancelled, pending = (f.branch for f in s.forks)
        t0 = int(time.time() * 1000) - 60_000
        j.record_run(running, s.id, "running", started=t0)
        j.record_run(cancelled, s.id, "cancelled", started=t0 + 1000, finished=t0 + 4000)
        sel = charts.Selection(sweep=s.id)
        why = charts.why_not(j, sel)
        assert why["timeline"] is None and why["rank"] is None  # the others wait, drawing it
        before = int(time.time() * 1000)
        spec = charts.view(j, "timeline", sel).spec()
        assert "waiting" not in spec["usermeta"]["lithify"]
        assert spec["usermeta"]["lithify"]["y"] is None
        assert "waiting" in charts.view(j, "rank", sel).spec()["usermeta"]["lithify"]
        rows = {r["branch"]: r for r in rows_of(spec, spec)}
        assert set(rows) == {running, cancelled} and vega_lite_errors(spec) == []
        assert (rows[running]["_state"], rows[cancelled]["_state"]) == ("running", "cancelled")
        assert rows[running]["_start"] + rows[running]["_seconds"] * 1000 >= before  # now
        assert rows[cancelled]["_seconds"] == 3.0
        assert "1 running: their bars end now" in spec["title"]
        # the module itself, with the clock given: the running bar ends exactly then
        res = charts.gather(j, sel)
        from workbench.charts.timeline import run_frame

        fixed = charts.timeline(res.table, run_frame(j, res.table), now=t0 + 90_000).to_dict()
        bars = {r["branch"]: r for d in fixed["datasets"].values() for r in d}
        assert bars[running]["_seconds"] == 90.0 and bars[running]["_to"] == 90.0


def test_timeline_says_why_it_cannot_draw_forks_no_runner_started(tmp_path, grid_db):
    with Journal.open(tmp_path / "none.db") as j:
        at = j.root().apply({"start": 1})
        s = sweep.plan(j, 0, at, {"budget": [100, 300]})
        for f in s.forks:
            j.branch(f.branch).observe("recall", f.params["budget"] / 1000)
        sel = charts.Selection(sweep=s.id)
        said = (
            "no fork in this selection has a recorded start: a sweep's runner records when "
            "each fork starts and ends"
        )
        assert charts.why_not(j, sel)["timeline"] == said
        with pytest.raises(CannotDraw) as err:
            charts.view(j, "timeline", sel)
        assert str(err.value) == f"timeline: {said}" and err.value.view == "timeline"
    j, sweep_id = grid_db  # a grid a runner recorded: its pending forks have no bar
    spec = charts.view(j, "timeline", charts.Selection(sweep=sweep_id), y="recall").spec()
    rows = sorted(rows_of(spec, spec), key=lambda r: r["_order"])
    assert len(rows) == 12 and {r["_state"] for r in rows} == {"complete"}
    assert [r["_seconds"] for r in rows] == [0.5 * (i + 1) for i in range(12)]
    assert [r["_from"] for r in rows] == [float(i) for i in range(12)]
    assert rows[0]["_start"] == GRID_START


@pytest.fixture
def grid_db(tmp_path):
    with Journal.open(tmp_path / "grid.db") as j:
        yield j, make_grid(j)


def _ranked(spec: dict) -> tuple[list[dict], list[dict]]:
    found = layers(spec)
    ranked = rows_of(found[0], spec)
    return ranked, (rows_of(found[1], spec) if len(found) > 1 else [])


@pytest.mark.slow
def test_rank_colours_each_trial_by_the_rank_of_its_value_in_the_studys_direction(studies):
    j, s, _ = studies
    sel = charts.Selection(sweep=s.sweep)
    complete = sorted((t for t in s.trials if t.state == "complete"), key=lambda t: t.value)
    stopped = [t for t in s.trials if t.state in ("pruned", "failed")]
    for direction, best_first in ((None, complete), ("maximize", complete[::-1])):
        spec = charts.view(j, "rank", sel, direction=direction).spec()
        assert vega_lite_errors(spec) == []
        points, marks = layers(spec)
        assert points["mark"]["type"] == "circle" and marks["mark"]["type"] == "point"
        enc = points["encoding"]
        assert (enc["x"]["field"], enc["y"]["field"]) == ("x1", "x2")  # two numbers by default
        assert enc["x"]["type"] == enc["y"]["type"] == "quantitative"
        assert enc["color"]["field"] == "_rank" and enc["color"]["type"] == "quantitative"
        ranked, unranked = _ranked(spec)
        by_rank = sorted(ranked, key=lambda r: r["_rank"])
        assert [r["_rank"] for r in by_rank] == list(range(1, len(complete) + 1))
        assert [r["branch"] for r in by_rank] == [t.branch for t in best_first]
        # pruned and failed trials: marked by their state, without a rank
        assert sorted(r["branch"] for r in unranked) == sorted(t.branch for t in stopped)
        assert all("_rank" not in r and r["_why"] in ("pruned", "failed") for r in unranked)
        shape = marks["encoding"]["shape"]
        assert shape["field"] == "_why" and marks["mark"]["color"] == "#9e9e9e"
        assert shape["scale"]["range"] == [SHAPES[w] for w in shape["scale"]["domain"]]
        assert set(shape["scale"]["domain"]) == {t.state for t in stopped}
        goal = "lowest" if direction is None else "highest"
        assert f"ranked by loss ({goal} first)" in spec["title"]
    # two parameters asked for: a category on its own axis
    spec = charts.view(j, "rank", sel, params=["kind", "x2"]).spec()
    assert layers(spec)[0]["encoding"]["x"]["type"] == "nominal"
    assert spec["usermeta"]["lithify"]["x"] == "kind"


def test_rank_leaves_nan_and_missing_values_unranked_and_a_grid_draws_with_a_category(grid_db):
    table = pl.DataFrame(
        {
            "branch": [1, 2, 3, 4, 5],
            "a": [1.0, 2.0, 3.0, 4.0, 5.0],
            "b": [5.0, 3.0, 4.0, 1.0, 2.0],
            "loss": [0.3, float("nan"), None, 0.1, 0.2],
            "_state": ["complete"] * 4 + ["pruned"],
        }
    )
    spec = charts.rank(table, "loss", ["a", "b"], direction="minimize").to_dict()
    ranked, unranked = _ranked(spec)
    assert {r["branch"]: r["_rank"] for r in ranked} == {4: 1, 1: 2}
    assert {r["branch"]: r["_why"] for r in unranked} == {2: "no value", 3: "no value", 5: "pruned"}
    assert all(r["loss"] is None or math.isfinite(r["loss"]) for r in ranked + unranked)
    # every fork has a value: one layer, never one without rows
    spec = charts.rank(table.filter(pl.col("branch").is_in([1, 4])), "loss", ["a", "b"]).to_dict()
    assert "layer" in spec and len(spec["layer"]) == 1
    j, sweep_id = grid_db
    spec = charts.view(j, "rank", charts.Selection(sweep=sweep_id), y="recall").spec()
    enc = layers(spec)[0]["encoding"]
    assert (enc["x"]["field"], enc["y"]["field"], enc["y"]["type"]) == (
        "budget",
        "retrieval",
        "nominal",
    )
    assert len(_ranked(spec)[0]) == 16 and vega_lite_errors(spec) == []


def test_rank_and_edf_say_why_they_cannot_draw(tmp_path):
    with Journal.open(tmp_path / "few.db") as j:
        at = j.root().apply({"start": 1})
        s = sweep.plan(j, 0, at, {"budget": [100, 300, 1000], "temperature": [0.1, 0.9]})
        for f in s.forks:
            b = j.branch(f.branch)
            b.observe("recall", f.params["budget"] / 1000)
            state = "failed" if f.params["budget"] >= 300 else "finished"
            j.record_run(f.branch, s.id, state, started=GRID_START, finished=GRID_START + 10)
        one = charts.Selection(sweep=s.id, where="temperature == 0.1")  # budget varies
        none = charts.Selection(sweep=s.id, where="status == failed")  # both vary, no value
        cases = {
            ("rank", one): "rank needs two parameters that vary; only budget varies in this "
            "selection",
            ("rank", none): "rank needs a fork with a value of recall to rank; none here has one",
            ("edf", none): "edf needs forks that ended with a value of recall; none here has one",
        }
        for (kind, sel), said in cases.items():
            assert charts.why_not(j, sel, y="recall")[kind] == said, (kind, sel)
            with pytest.raises(CannotDraw) as err:
                charts.view(j, kind, sel, y="recall")
            assert str(err.value) == f"{kind}: {said}"
        assert charts.why_not(j, one, y="recall")["edf"] is None


@pytest.mark.slow
def test_edf_is_a_step_line_per_study_that_reaches_one(studies):
    j, s, other = studies
    spec = charts.view(j, "edf", charts.Selection(sweep=s.sweep)).spec()
    assert vega_lite_errors(spec) == []
    line, dots = layers(spec)
    assert line["mark"] == {"type": "line", "interpolate": "step-after"}
    assert line["encoding"]["y"]["field"] == "_fraction"
    assert line["encoding"]["x"]["field"] == "loss"
    assert line["encoding"]["order"]["field"] == "_i" and "color" not in line["encoding"]
    steps = sorted(rows_of(line, spec), key=lambda r: r["_i"])
    values = sorted(t.value for t in s.trials if t.state == "complete")
    assert steps[0] == {"_group": "all", "loss": values[0], "_fraction": 0.0, "_i": 0}
    n = len(values)
    assert [r["_fraction"] for r in steps[1:]] == [(i + 1) / n for i in range(n)]
    assert [r["loss"] for r in steps[1:]] == values and steps[-1]["_fraction"] == 1.0
    points = rows_of(dots, spec)
    assert sorted(r["loss"] for r in points) == values  # complete trials only
    assert {p["name"] for p in _params(spec)} == {"pick", "brush"}
    # two studies: a line each, each reaching 1 and going on to the greatest value of both
    both = charts.view(j, "edf", charts.Selection(sweeps=(s.sweep, other.sweep))).spec()
    assert vega_lite_errors(both) == []
    line, dots = layers(both)
    assert line["encoding"]["color"]["field"] == "_group"
    groups: dict[str, list[dict]] = {}
    for r in rows_of(line, both):
        groups.setdefault(r["_group"], []).append(r)
    assert set(groups) == {f"sweep {s.sweep}", f"sweep {other.sweep}"}
    top = max(t.value for st in (s, other) for t in st.trials if t.state == "complete")
    for st in (s, other):
        mine = sorted(groups[f"sweep {st.sweep}"], key=lambda r: r["_i"])
        fractions = [r["_fraction"] for r in mine]
        assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
        assert mine[-1]["loss"] == top
        n = sum(t.state == "complete" for t in st.trials)
        assert sum(r["_group"] == f"sweep {st.sweep}" for r in rows_of(dots, both)) == n


def test_edf_leaves_nan_missing_and_stopped_values_out():
    table = pl.DataFrame(
        {
            "branch": [1, 2, 3, 4, 5, 6],
            "recall": [0.5, float("nan"), None, 0.25, 0.5, 0.9],
            "_state": ["complete", "complete", "complete", "complete", "paused", "pruned"],
        }
    )
    spec = charts.edf(table, "recall").to_dict()
    line, dots = spec["layer"]
    steps = sorted(spec["datasets"][line["data"]["name"]], key=lambda r: r["_i"])
    assert [(r["recall"], r["_fraction"]) for r in steps] == [
        (0.25, 0.0),
        (0.25, 1 / 3),
        (0.5, 1.0),  # two forks at 0.5: one step to 1
    ]
    assert sorted(r["branch"] for r in spec["datasets"][dots["data"]["name"]]) == [1, 4, 5]


def test_lithify_chart_draws_the_timeline_rank_and_edf(grid_db, tmp_path):
    from cli import lithify

    j, sweep_id = grid_db
    for kind in ("timeline", "rank", "edf"):
        out = tmp_path / f"{kind}.json"
        r = lithify(
            "--db", str(j.path), "chart", "--kind", kind, "--sweep", str(sweep_id), "-o", str(out)
        )
        assert r.returncode == 0, r.stderr
        spec = json.loads(out.read_text())
        assert spec["usermeta"]["lithify"]["kind"] == kind and vega_lite_errors(spec) == []
    timeline = json.loads((tmp_path / "timeline.json").read_text())
    assert len(next(iter(timeline["datasets"].values()))) == 12
    r = lithify(
        "--db",
        str(j.path),
        "chart",
        "--kind",
        "timeline",
        "--where",
        "budget == 3000",
        "-o",
        str(tmp_path / "t.svg"),
    )
    assert r.returncode == 2 and r.stderr.strip().endswith(
        "no fork in this selection has a recorded start: a sweep's runner records when each "
        "fork starts and ends"
    )
