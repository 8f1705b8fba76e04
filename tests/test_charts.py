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
    assert any(t["field"] == "n" for t in line["encoding"]["tooltip"])
    assert points["mark"]["type"] == "circle" and points["mark"]["opacity"] < 0.5
    assert spec["title"] == "recall vs budget"
    data = spec["datasets"]
    assert sum(len(v) for v in data.values()) == 3 + 9  # 3 group rows, 9 branch points


def test_points_toggle_color_and_facet():
    with Journal.in_memory() as j:
        df = sweep_matrix(j)
    spec = charts.metric_vs_param(df, x="budget", y="recall", color="seed", points=False).to_dict()
    assert len(layers(spec)) == 2
    assert layers(spec)[1]["encoding"]["color"]["field"] == "seed"
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
