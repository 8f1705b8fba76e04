"""Charts: a valid Vega-Lite spec with the expected encodings, and real PNG/SVG files."""

from __future__ import annotations

import struct

import polars as pl
import pytest

from workbench import InvalidValue, Journal, charts


def sweep_matrix(j: Journal) -> pl.DataFrame:
    root = j.root()
    for budget in (300, 600, 1200):
        for seed in range(3):
            f = root.fork(params={"budget": budget, "seed": seed})
            f.observe("recall", min(1.0, budget / 1200 + seed * 0.01))
    return j.matrix()


def layers(spec: dict) -> list[dict]:
    return spec.get("layer") or spec["spec"]["layer"]


def test_metric_vs_param_spec():
    with Journal.in_memory() as j:
        spec = charts.metric_vs_param(sweep_matrix(j), x="budget", y="recall", log_x=True).to_dict()
    band, line, points = layers(spec)
    assert band["mark"]["type"] == "area" and band["encoding"]["y2"]["field"] == "ci_high"
    assert line["encoding"]["y"]["field"] == "mean"
    assert line["encoding"]["x"]["scale"]["type"] == "log"
    assert line["encoding"]["x"]["title"] == "budget (log scale)"  # the axis says it is log
    assert any(t["field"] == "n" for t in line["encoding"]["tooltip"])
    assert points["mark"]["type"] == "point" and points["mark"]["opacity"] < 0.5
    # a triangle for a fork whose value is only its last report (partial values shown)
    assert points["encoding"]["shape"]["value"] == "circle"
    assert "datum._state" in points["encoding"]["shape"]["condition"]["test"]
    assert spec["title"] == "recall vs budget"
    data = spec["datasets"]
    assert sum(len(v) for v in data.values()) == 3 + 9  # 3 group rows, 9 branch points


def test_points_toggle_color_and_facet():
    with Journal.in_memory() as j:
        df = sweep_matrix(j)
    spec = charts.metric_vs_param(df, x="budget", y="recall", color="seed", points=False).to_dict()
    # one branch per budget and seed: no group has a band (a layer with no rows would give
    # Vega an infinite extent), the line alone
    assert len(layers(spec)) == 1
    assert layers(spec)[0]["encoding"]["color"]["field"] == "seed"
    banded = charts.metric_vs_param(df, x="budget", y="recall", points=False).to_dict()
    assert [layer["mark"]["type"] for layer in layers(banded)] == ["area", "line"]
    faceted = charts.metric_vs_param(df, x="budget", y="recall", facet="seed").to_dict()
    assert faceted["facet"]["column"]["field"] == "seed"
    with pytest.raises(InvalidValue):
        charts.metric_vs_param(df, x="temperature", y="recall")


def test_large_matrices_are_aggregated_before_altair():
    rows = [
        {
            "branch": i,
            "seq": 1,
            "metric": "recall",
            "value": (i % 7) / 7,
            "budget": 100 * (i % 7 + 1),
            "seed": i,
        }
        for i in range(6000)
    ]
    chart = charts.metric_vs_param(pl.DataFrame(rows), points=False)
    spec = chart.to_dict()  # would raise MaxRowsError with 6,000 raw rows
    assert sum(len(v) for v in spec["datasets"].values()) == 7


@pytest.mark.slow
def test_save_png_svg_html(tmp_path):
    with Journal.in_memory() as j:
        chart = charts.metric_vs_param(sweep_matrix(j), log_x=True)
    png = charts.save(chart, tmp_path / "c.png")
    head = png.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = struct.unpack(">II", head[16:24])
    assert 500 < w < 3000 and 300 < h < 2000 and png.stat().st_size > 5000
    svg = charts.save(chart, tmp_path / "c.svg").read_text()
    assert svg.startswith("<svg") and "recall" in svg
    html = charts.save(chart, tmp_path / "c.html").read_text()
    assert "cdn.jsdelivr" not in html and "vega" in html
    with pytest.raises(InvalidValue):
        charts.save(chart, tmp_path / "c.gif")


def test_recall_vs_budget_one_liner(tmp_path):
    from workbench.agents.auditor import recall_vs_budget

    with Journal.in_memory() as j:
        with pytest.raises(InvalidValue):
            recall_vs_budget(j)
        sweep_matrix(j)
        spec = recall_vs_budget(j).to_dict()
    assert layers(spec)[1]["encoding"]["x"]["field"] == "budget"


def test_a_log_axis_labels_the_swept_values_without_overlap():
    import polars as pl

    from workbench import charts

    budgets = [300, 600, 1200, 2400, 4800]
    df = pl.DataFrame(
        {
            "branch": list(range(5)),
            "seq": [1] * 5,
            "metric": ["recall"] * 5,
            "value": [0.15, 0.23, 0.53, 1.0, 1.0],
            "budget": budgets,
        }
    )
    spec = charts.metric_vs_param(df, x="budget", y="recall", log_x=True).to_dict()
    axes = [lay["encoding"]["x"]["axis"] for lay in spec["layer"]]
    assert all(a["values"] == budgets and a["labelOverlap"] == "greedy" for a in axes)


# -- the views -------------------------------------------------------------------------------


VEGA_LITE = None


def vega_lite_errors(spec: dict) -> list[str]:
    """What the Vega-Lite schema shipped with altair says is wrong with ``spec``."""
    global VEGA_LITE
    import json
    from pathlib import Path

    import altair
    import jsonschema

    if VEGA_LITE is None:
        path = Path(altair.__file__).parent / "vegalite" / "v6" / "schema" / "vega-lite-schema.json"
        VEGA_LITE = jsonschema.Draft7Validator(json.loads(path.read_text()))
    return [f"{list(e.path)}: {e.message[:200]}" for e in VEGA_LITE.iter_errors(spec)]


GRID_START = 1_750_000_000_000  # when make_grid's first fork "started" (unix ms)


def make_grid(j: Journal) -> int:
    """A grid sweep (budget × retrieval × 2 seeds) whose forks report recall at three steps
    and observe model_calls; nothing runs (the observations are written here), but the forks
    below budget 3000 are recorded as a runner records them: finished, the i-th (from 0)
    started i seconds after the first and ran 0.5·(i + 1) s (the others stay pending). Its id."""
    from workbench import sweep

    j.root().apply({"start": 1})
    s = sweep.plan(
        j, 0, 1, {"budget": [100, 300, 1000, 3000], "retrieval": ["lexical", "fused"]}, seeds=2
    )
    for f in s.forks:
        b, p = j.branch(f.branch), f.params
        recall = min(1.0, p["budget"] / 3000 + (0.1 if p["retrieval"] == "fused" else 0.0))
        recall = min(1.0, recall + 0.04 * p["seed"])
        for step in range(3):
            sweep.report(b, recall * (step + 1) / 3, step, metric="recall")
        b.observe("model_calls", p["budget"] / 10 + p["seed"])
    ran = [f for f in s.forks if f.params["budget"] < 3000]
    for i, f in enumerate(ran):
        started, wall = GRID_START + 1000 * i, 500 * (i + 1)
        j.record_run(
            f.branch, s.id, "finished", started=started, finished=started + wall, wall_ms=wall
        )
    return s.id


@pytest.fixture
def grid(tmp_path):
    with Journal.open(tmp_path / "grid.db") as j:
        yield j, make_grid(j)


@pytest.mark.parametrize("kind", charts.KINDS)
def test_every_view_is_a_valid_vega_lite_spec_that_names_its_branches(grid, kind):
    j, sweep_id = grid
    drawn = charts.view(j, kind, charts.Selection(sweep=sweep_id), y="recall")
    spec = drawn.spec()
    assert vega_lite_errors(spec) == []
    meta = spec["usermeta"]["lithify"]
    assert (
        meta["kind"] == kind and meta["y"] == "recall" and meta["selection"] == f"sweep {sweep_id}"
    )
    rows = [r for rows in spec["datasets"].values() for r in rows]
    if kind != "importance":  # every other view draws branches, and says which
        assert any("branch" in r for r in rows)
        names = {p["name"] for p in _params(spec)}
        assert "pick" in names, names
    else:
        assert {r["param"] for r in rows} == {"budget", "retrieval"}


def _params(spec: dict) -> list[dict]:
    out = list(spec.get("params", []))
    for key in ("layer", "hconcat", "vconcat"):
        for sub in spec.get(key, []):
            out.extend(_params(sub))
    if "spec" in spec:
        out.extend(_params(spec["spec"]))
    return out


def _tooltip_fields(spec: dict) -> set[str]:
    found: set[str] = set()
    for key in ("layer", "hconcat"):
        for sub in spec.get(key, []):
            found |= _tooltip_fields(sub)
    for t in spec.get("encoding", {}).get("tooltip", []) or []:
        found.add(t.get("title") or t["field"])
    return found


def test_points_tooltip_branch_params_and_value_and_a_click_picks_the_branch(grid):
    j, sweep_id = grid
    spec = charts.view(j, "metric", charts.Selection(sweep=sweep_id), y="recall").spec()
    assert {"branch", "budget", "retrieval", "seed", "recall"} <= _tooltip_fields(spec)
    pick = next(p for p in _params(spec) if p["name"] == "pick")
    assert pick["select"] == {
        "type": "point",
        "fields": ["branch"],
        "on": "click",
        "clear": "dblclick",
    }
    brush = next(p for p in _params(spec) if p["name"] == "brush")
    assert brush["select"]["type"] == "interval"
    assert spec["usermeta"]["lithify"]["brush"] == "zoom"


def test_error_bands_stay_within_the_observed_range():
    """Two seeds far apart: Student's t with one degree of freedom gives ±6 standard errors,
    which drew recall from -0.65 to 1.55; the band stays within the recalls observed."""
    rows = [
        {"branch": i, "seq": 1, "metric": "recall", "value": v, "budget": b, "seed": s}
        for i, (b, s, v) in enumerate(
            [(100, 0, 0.05), (100, 1, 0.5), (300, 0, 0.4), (300, 1, 1.0), (900, 0, 0.9)]
        )
    ]
    spec = charts.metric_vs_param(pl.DataFrame(rows), x="budget", y="recall").to_dict()
    groups = [r for d in spec["datasets"].values() for r in d if r.get("_layer") == "group"]
    bands = [(r["ci_low"], r["ci_high"]) for r in groups if r["ci_low"] is not None]
    assert len(bands) == 2
    assert all(0.05 <= lo <= hi <= 1.0 for lo, hi in bands), bands


def test_each_view_says_in_one_line_why_it_cannot_draw(tmp_path):
    from workbench import sweep
    from workbench.errors import CannotDraw

    with Journal.open(tmp_path / "few.db") as j:
        j.root().apply({"start": 1})
        s = sweep.plan(j, 0, 1, {"budget": [100, 300]})
        for f in s.forks:
            j.branch(f.branch).observe("recall", f.params["budget"] / 1000)
        sel = charts.Selection(sweep=s.id)
        why = charts.why_not(j, sel)
        assert why["metric"] is None and why["history"] is None and why["slice"] is None
        assert why["importance"] == (
            "importance needs two parameters that vary; only budget varies in this selection"
        )
        assert "contour needs two parameters that vary" in why["contour"]
        assert "sweep.report(branch, value, step" in why["steps"]
        assert "pareto needs two metrics" in why["pareto"]
        for kind in ("importance", "contour", "steps", "pareto"):
            with pytest.raises(CannotDraw) as err:
                charts.view(j, kind, sel)
            assert err.value.view == kind and "\n" not in str(err.value)
            assert str(err.value) == f"{kind}: {why[kind]}"
        one = charts.Selection(branches=(s.forks[0].branch,))
        assert charts.why_not(j, one)["history"] == (
            "history needs two forks with recall; this selection has 1"
        )


def test_history_is_fork_order_with_the_best_so_far(grid):
    j, sweep_id = grid
    for direction, best in (("maximize", max), ("minimize", min)):
        spec = charts.view(
            j, "history", charts.Selection(sweep=sweep_id), y="model_calls", direction=direction
        ).spec()
        rows = sorted((r for d in spec["datasets"].values() for r in d), key=lambda r: r["_order"])
        values = [r["model_calls"] for r in rows]
        assert [r["_best"] for r in rows] == [best(values[: i + 1]) for i in range(len(values))]
        assert [r["_order"] for r in rows] == list(range(1, len(rows) + 1))


def test_importance_is_optunas_fanova_over_the_forks(grid):
    j, sweep_id = grid
    table = charts.gather(j, charts.Selection(sweep=sweep_id)).table
    found = charts.importances(table, "model_calls", ["budget", "retrieval", "seed"])
    assert list(found) == ["budget", "retrieval"]  # seeds are repetitions, not choices
    assert found["budget"] > 0.9 and abs(sum(found.values()) - 1) < 1e-6
    again = charts.importances(table, "model_calls", ["budget", "retrieval", "seed"])
    assert again == found  # seeded: the same forks give the same bars


def test_parallel_axes_are_real_with_ticks_in_their_units(grid):
    j, sweep_id = grid
    spec = charts.view(j, "parallel", charts.Selection(sweep=sweep_id), y="recall").spec()
    ticks = {(r["axis"], r["label"]) for d in spec["datasets"].values() for r in d if "label" in r}
    assert {("budget", "100"), ("budget", "3000"), ("retrieval", "fused")} <= ticks
    assert ("retrieval", "lexical") in ticks and any(a == "recall" for a, _ in ticks)
    assert "scaled" not in json_text(spec)
    assert {p["name"] for p in _params(spec)} >= {"pick", "brush", "keep"}
    assert spec["usermeta"]["lithify"]["brush"] == "filter"


def json_text(spec: dict) -> str:
    import json

    return json.dumps(spec)


def test_steps_are_each_forks_own_reports(grid):
    j, sweep_id = grid
    spec = charts.view(j, "steps", charts.Selection(sweep=sweep_id), y="recall").spec()
    rows = [r for d in spec["datasets"].values() for r in d]
    forks = {r["branch"] for r in rows}
    assert len(forks) == 16 and {r["step"] for r in rows} == {0, 1, 2}
    assert "budget" in rows[0] and "retrieval" in rows[0]


def test_pareto_marks_the_forks_no_other_beats(grid):
    j, sweep_id = grid
    spec = charts.view(
        j,
        "pareto",
        charts.Selection(sweep=sweep_id),
        y="recall",
        y2="model_calls",
        direction2="minimize",
    ).spec()
    rows = [r for d in spec["datasets"].values() for r in d if "_front" in r]
    front = [r for r in rows if r["_front"] == "Pareto front"]
    for r in front:  # nothing has more recall for fewer calls
        assert not any(
            o["recall"] >= r["recall"]
            and o["model_calls"] <= r["model_calls"]
            and (o["recall"] > r["recall"] or o["model_calls"] < r["model_calls"])
            for o in rows
        )
    assert 0 < len(front) < len(rows)


def test_a_selection_of_branches_or_a_filter_is_charted_like_a_sweep(grid):
    j, sweep_id = grid
    sweep_forks = charts.gather(j, charts.Selection(sweep=sweep_id)).table["branch"].to_list()
    some = tuple(sweep_forks[:5])
    picked = charts.gather(j, charts.Selection(branches=some)).table
    assert picked["branch"].to_list() == list(some)
    where = charts.gather(j, charts.Selection(where="budget >= 1000 and retrieval == fused"))
    assert set(where.table["budget"].to_list()) == {1000, 3000}
    assert set(where.table["retrieval"].to_list()) == {"fused"} and where.table.height == 4
    spec = charts.view(j, "metric", charts.Selection(where="budget >= 1000"), y="recall").spec()
    assert spec["usermeta"]["lithify"]["selection"] == "every branch where budget >= 1000"
    assert vega_lite_errors(spec) == []


def test_lithify_chart_draws_any_view_and_branches_filters(grid, tmp_path):
    import json

    from cli import lithify

    j, sweep_id = grid
    db = str(j.path)
    out = tmp_path / "history.json"
    r = lithify("--db", db, "chart", "--kind", "history", "--sweep", str(sweep_id), "-o", str(out))
    assert r.returncode == 0, r.stderr
    spec = json.loads(out.read_text())
    assert spec["usermeta"]["lithify"]["kind"] == "history" and vega_lite_errors(spec) == []
    r = lithify(
        "--db",
        db,
        "chart",
        "--kind",
        "contour",
        "--where",
        "budget == 100",
        "-o",
        str(tmp_path / "c.svg"),
    )
    assert r.returncode == 2 and r.stderr.strip().endswith(
        "contour needs two parameters that vary; only retrieval varies in this selection"
    )
    r = lithify("--db", db, "chart", "--kind", "heat", "-o", str(tmp_path / "h.svg"))
    assert r.returncode == 2 and "the view is one of metric, history" in r.stderr
    r = lithify("--db", db, "--json", "branches", "--where", "status == pending and budget >= 3000")
    assert r.returncode == 0, r.stderr
    assert [b["params"]["budget"] for b in json.loads(r.stdout)] == [3000] * 4


@pytest.fixture
def study_base(tmp_path, monkeypatch):
    """A journal to run adaptive sweeps on (tests/sweep_fns importable by the workers)."""
    import os
    from pathlib import Path

    tests = str(Path(__file__).parent)
    monkeypatch.setenv("PYTHONPATH", tests + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(tests)
    with Journal.open(tmp_path / "study.db") as j:
        j.root().apply({"start": 1})
        yield j


@pytest.mark.slow
def test_a_study_is_drawn_in_trial_order_with_its_own_values(study_base):
    """An optimize study: history in trial order over complete trials only (a pruned trial's
    last report is not its value), importance from Optuna's own study, every view valid; two
    objectives give the Pareto view its axes and directions."""
    from workbench import sweep

    j = study_base
    space = {
        "x1": sweep.Float(-5.0, 10.0),
        "x2": sweep.Float(0.0, 15.0),
        "kind": sweep.Categorical(["a", "b", "c"]),
    }
    study = sweep.optimize(
        j,
        1,
        space,
        "loss",
        "minimize",
        forks=12,
        workers=2,
        sampler="random",
        pruner="median",
        seed=0,
        fn="sweep_fns:branin",
        progress=False,
    )
    sel = charts.Selection(sweep=study.sweep)
    assert charts.why_not(j, sel)["steps"] is None
    spec = charts.view(j, "history", sel).spec()
    assert spec["usermeta"]["lithify"]["y"] == "loss"
    rows = sorted((r for d in spec["datasets"].values() for r in d), key=lambda r: r["_order"])
    complete = [t for t in study.trials if t.state == "complete"]
    assert [r["_order"] for r in rows] == [t.number for t in complete]
    assert [r["loss"] for r in rows] == [t.value for t in complete]
    assert rows[-1]["_best"] == study.best.value  # minimize: the lowest so far
    assert "trial" in json_text(spec) and "lowest so far" in spec["title"]
    found = charts.importances(
        charts.gather(j, sel).table, "loss", ["x1", "x2", "kind"], study=sweep.study(j, study.sweep)
    )
    assert set(found) == {"x1", "x2", "kind"}
    for kind in charts.KINDS:
        if kind != "pareto":
            assert vega_lite_errors(charts.view(j, kind, sel).spec()) == [], kind
    two = sweep.optimize(
        j,
        1,
        {"x": sweep.Float(0.0, 2.0), "y": sweep.Int(0, 3)},
        objectives=["loss", "cost"],
        directions=["minimize", "minimize"],
        forks=8,
        workers=2,
        sampler="nsga2",
        pruner="none",
        seed=2,
        fn="sweep_fns:two_costs",
        progress=False,
    )
    spec = charts.view(j, "pareto", charts.Selection(sweep=two.sweep)).spec()
    assert vega_lite_errors(spec) == [] and spec["usermeta"]["lithify"]["y2"] == "cost"
    front = {
        r["branch"]
        for d in spec["datasets"].values()
        for r in d
        if r.get("_front") == "Pareto front"
    }
    assert front == {t.branch for t in two.pareto}


@pytest.mark.slow
def test_importing_charts_makes_altair_offline_and_imports_no_altair(tmp_path):
    """A chart shown in a notebook cell loads no script from a CDN: importing workbench.charts
    switches altair to its offline JupyterChart renderer, whether altair comes later or was
    imported before; a process that never draws never imports altair."""
    import subprocess
    import sys

    later = (
        "import sys; import workbench.charts\n"
        "import polars  # it asks whether altair is there, without importing it\n"
        "assert 'altair' not in sys.modules\n"
        "import altair as alt\n"
        "print(alt.renderers.active, alt.renderers.options)\n"
    )
    before = "import altair as alt; import workbench.charts\nprint(alt.renderers.active)\n"
    chosen = (
        "import altair as alt; alt.renderers.enable('svg'); import workbench.charts\n"
        "print(alt.renderers.active)\n"
    )
    out = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        for code in (later, before, chosen)
    ]
    assert out[0].stdout.split()[0] == "jupyter" and "'offline': True" in out[0].stdout
    assert out[1].stdout.strip() == "jupyter"
    assert out[2].stdout.strip() == "svg"  # the user's choice stays


def test_a_selection_from_a_kept_whole_journal_table_is_the_one_read_for_it(grid):
    """The server keeps the journal's branch table and narrows it per request: the same rows,
    parameters and metrics as reading the selection itself; an unknown sweep is NotFound."""
    from workbench.errors import NotFound
    from workbench.matrix import branch_table

    j, sweep_id = grid
    other = j.root().fork_at(1, params={"temperature": 0.5})
    other.observe("loss", 1.0)
    whole = branch_table(j)
    for sel in (
        charts.Selection(sweep=sweep_id),
        charts.Selection(branches=(other.id,)),
        charts.Selection(sweep=sweep_id, where="budget >= 1000"),
    ):
        kept, read = charts.gather(j, sel, table=whole), charts.gather(j, sel)
        assert (kept.params, kept.metrics) == (read.params, read.metrics), sel
        assert kept.table.select(sorted(kept.table.columns)).equals(
            read.table.select(sorted(read.table.columns))
        ), sel
    with pytest.raises(NotFound):
        charts.gather(j, charts.Selection(sweep=99), table=whole)


def test_parallel_ticks_use_the_dark_themes_foreground(grid):
    """On JupyterLab's dark theme the parallel axes' own ticks and labels (drawn as marks) are
    in the theme's foreground, as its axis labels are: readable on the dark background."""
    j, sweep_id = grid
    sel = charts.Selection(sweep=sweep_id)
    spec = charts.view(j, "parallel", sel, y="recall", theme="dark").spec()
    fg = spec["config"]["axis"]["labelColor"]
    marks = [layer["mark"] for layer in spec["layer"]]
    drawn = {m["type"]: m.get("color") for m in marks if isinstance(m, dict)}
    assert drawn["text"] == drawn["tick"] == drawn["rule"] == fg, drawn
