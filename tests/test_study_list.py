"""A journal's sweeps and studies at a glance (``sweep.overview``, the server's ``studies``
route, the Lab's study list): each row's kind, objectives, best trial (the study's own
``best``), forks counted by state and when it ran; a click on a row in the Lab opens that
sweep's results."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workbench import Journal, sweep
from workbench.sweep.overview import overview

TESTS = str(Path(__file__).parent)
SPACE = {
    "x1": sweep.Float(-5.0, 10.0),
    "x2": sweep.Float(0.0, 15.0),
    "kind": sweep.Categorical(["a", "b", "c"]),
}


def two_sweeps(path: Path) -> tuple[int, int, sweep.Study]:
    """A grid of three forks (two finished, one failed) and a study of eight trials (complete,
    and failed ones: kind "c" breaks), both run by the pool runner. (grid id, study id, study)."""
    with Journal.open(path) as j:
        at = j.root().apply({"start": 1})
        grid = sweep.plan(j, 0, at, {"x1": [1.0, 2.0], "x2": [3.0], "kind": ["a"]})
        sweep.run(grid, fn="sweep_fns:branin", workers=2, progress=False)
        extra = sweep.plan(j, 0, at, {"x1": [0.0], "x2": [0.0], "kind": ["c"]})
        sweep.run(extra, fn="sweep_fns:branin_or_boom", workers=1, progress=False)
        study = sweep.optimize(
            j,
            at,
            SPACE,
            "loss",
            "minimize",
            forks=8,
            workers=2,
            sampler="random",
            seed=3,
            fn="sweep_fns:branin_or_boom",
            progress=False,
        )
        return grid.id, study.sweep, study


@pytest.fixture(autouse=True)
def fork_functions(monkeypatch) -> None:
    """sweep_fns importable here and in the runners' workers."""
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(TESTS)


@pytest.fixture
def journal(tmp_path):
    path = tmp_path / "s.db"
    return (path, *two_sweeps(path))


def test_each_sweep_and_study_at_a_glance(journal) -> None:
    path, grid, sid, study = journal
    with Journal.open(path) as j:
        rows = overview(j)
    assert [r.id for r in rows] == sorted((r.id for r in rows), reverse=True)  # newest first
    s = next(r for r in rows if r.id == sid)
    assert (s.kind, s.objectives, s.directions, s.planned) == (
        "optimize",
        ("loss",),
        ("minimize",),
        8,
    )
    best = study.best
    assert best is not None
    assert s.best == {"value": best.value, "branch": best.branch, "params": best.params}
    states = [t.state for t in study.trials]
    assert s.counts == {st: states.count(st) for st in set(states)}
    assert sum(s.counts.values()) == 8 and s.state in ("finished", "failed")
    assert s.started is not None and s.ended is not None and s.ended >= s.started
    assert s.seconds == pytest.approx((s.ended - s.started) / 1000)
    g = next(r for r in rows if r.id == grid)
    assert (g.kind, g.objectives, g.best, g.pareto) == ("grid", (), None, None)
    assert g.counts == {"complete": 2} and g.state == "finished"
    assert g.to_json()["counts"] == {"complete": 2}


def test_a_study_of_two_objectives_gives_its_front_and_a_planned_grid_counts_pending(
    tmp_path,
) -> None:
    with Journal.open(tmp_path / "m.db") as j:
        at = j.root().apply({"start": 1})
        study = sweep.optimize(
            j,
            at,
            {"x": sweep.Float(0.0, 2.0)},
            objectives=["loss", "cost"],
            directions=["minimize", "minimize"],
            pruner="none",
            forks=6,
            workers=2,
            sampler="random",
            seed=0,
            fn="sweep_fns:two_costs",
            progress=False,
        )
        planned = sweep.plan(j, 0, at, {"n": [1, 2, 3]})
        rows = {r.id: r for r in overview(j, now_ms=0)}
    front = rows[study.sweep]
    assert front.best is None and front.pareto == len(study.pareto) > 0
    waiting = rows[planned.id]
    assert waiting.counts == {"pending": 3} and waiting.state == "pending"
    assert (waiting.started, waiting.ended, waiting.seconds) == (None, None, None)


pytest_plugins = ["pytest_jupyter.jupyter_server"]


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"workbench.server": True}}}


@pytest.mark.slow
async def test_the_studies_route_sends_the_rows(jp_fetch, jp_root_dir) -> None:
    import json

    from tornado.httpclient import HTTPClientError

    _, sid, study = two_sweeps(jp_root_dir / "s.db")
    r = await jp_fetch("lithify", "api", "studies", params={"journal": "s.db"})
    rows = json.loads(r.body)["studies"]
    row = next(x for x in rows if x["id"] == sid)
    assert row["best"]["branch"] == study.best.branch  # type: ignore[union-attr]
    assert row["objectives"] == ["loss"] and row["state"] in ("finished", "failed")
    with pytest.raises(HTTPClientError) as e:
        await jp_fetch("lithify", "api", "studies", params={"journal": "nope.db"})
    assert e.value.code == 404


@pytest.mark.slow
def test_the_lab_lists_the_studies_and_a_click_opens_the_results(tmp_path) -> None:
    """The study list in a journal's section, and the journal list following the folder."""
    from playwright.sync_api import sync_playwright
    from test_browser import CHROMIUM, lithify_lab
    from test_lab_extension import lab_page, open_section

    if not Path(CHROMIUM).exists():
        pytest.skip("needs Debian's chromium")
    work = tmp_path / "work"
    work.mkdir()
    grid, sid, study = two_sweeps(work / "s.db")
    best = study.best
    assert best is not None
    with lithify_lab(str(work), tmp_path) as base, sync_playwright() as pw:
        browser, page, outside = lab_page(pw, base)
        section = open_section(page, "s.db")
        head = section.locator(".lithify-studies-head")
        head.wait_for(timeout=30_000)
        assert "Studies and sweeps (3)" in head.inner_text()
        row = section.locator(f".lithify-study[data-sweep='{sid}']")
        said = row.inner_text()
        assert f"#{sid} optimize" in said and "minimize loss" in said, said
        assert f"on branch {best.branch}" in said and "of 8" in said, said
        grid_row = section.locator(f".lithify-study[data-sweep='{grid}']").inner_text()
        assert "2 complete of 2" in grid_row and "best" not in grid_row, grid_row
        row.click()
        panel = page.locator(".lithify-results", has_text=f"Study {sid} of s.db")  # its kind
        panel.wait_for(timeout=90_000)
        # its chart fills the panel's width, and follows it when the window narrows
        svg = panel.locator(".lithify-chart-box .lithify-vega svg").first
        svg.wait_for(timeout=90_000)
        wide = svg.bounding_box()["width"]
        assert wide > 0.5 * panel.bounding_box()["width"], (wide, panel.bounding_box())
        page.set_viewport_size({"width": 1000, "height": 950})
        page.wait_for_function(
            "([sel, w]) => { const s = document.querySelector(sel); "
            "return s && s.getBoundingClientRect().width < w - 200; }",
            arg=[".jp-MainAreaWidget:not(.lm-mod-hidden) .lithify-results .lithify-vega svg", wide],
            timeout=30_000,
        )
        head.click()  # folds the list
        assert section.locator(".lithify-study-rows").is_hidden()
        # a journal made meanwhile (by a notebook, a terminal) joins the list without Refresh
        with Journal.open(work / "later.db") as j:
            j.root().apply({"x": 1})
        page.locator("#lithify-sidebar .lithify-journal-label[data-journal='later.db']").wait_for(
            timeout=30_000
        )
        assert outside == []
        browser.close()
