"""The smaller habits of the results views and the sidebar, in a real JupyterLab and Debian's
Chromium (one Lab for the module, a fresh page per test): "Results for these" after a filter of
the fork tree opens the results of the filtered branches; a drag along a parallel-coordinates
axis brushes it; a study of two objectives opens on its Pareto front, one of one objective on
its metric view."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_browser import CHROMIUM, lithify_lab
from test_charts import make_grid
from test_lab_extension import lab_page, open_section
from test_lab_results import drawn

from workbench import Journal, sweep

TESTS = str(Path(__file__).parent)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium"),
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A Lab on a folder holding grid.db (test_charts.make_grid's sweep) and studies.db (a
    study of one objective, then one of two): (base URL, folder, the grid's id, the studies'
    ids)."""
    tmp = tmp_path_factory.mktemp("lab")
    work = tmp / "work"
    work.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
        mp.syspath_prepend(TESTS)
        with Journal.open(work / "grid.db") as j:
            grid = make_grid(j)
        studies = []
        with Journal.open(work / "studies.db") as j:
            at = j.root().apply({"start": 1})
            for objectives in (["loss"], ["loss", "cost"]):
                study = sweep.optimize(
                    j,
                    at,
                    {"x": sweep.Float(0.0, 2.0)},
                    objectives=objectives,
                    directions=["minimize"] * len(objectives),
                    pruner="none",
                    forks=4,
                    workers=2,
                    sampler="random",
                    seed=0,
                    fn="sweep_fns:two_costs",
                    progress=False,
                )
                studies.append(study.sweep)
        with lithify_lab(str(work), tmp) as base:
            yield base, work, grid, studies


@pytest.fixture
def page(lab):
    from playwright.sync_api import sync_playwright

    base = lab[0]
    with sync_playwright() as pw:
        browser, page, outside = lab_page(pw, base)
        yield page
        browser.close()
    assert outside == [], f"requests left 127.0.0.1: {outside[:5]}"


def test_results_for_these_opens_the_tree_filters_branches(page):
    section = open_section(page, "grid.db")
    box = section.locator(".lithify-filter-input")
    box.fill("budget == 3000")
    box.press("Enter")
    section.locator(".lithify-filter-message", has_text="4 of 17 branches").wait_for(timeout=30_000)
    button = section.locator(".lithify-results-for")
    assert button.is_enabled(), button.get_attribute("title")
    button.click()
    panel = page.locator(".lithify-results", has_text="Branches where budget == 3000 of grid.db")
    drawn(page, "metric", "where=budget")
    panel.locator(".lithify-table tr[data-branch]").nth(3).wait_for(timeout=30_000)
    budgets = panel.locator(".lithify-table").evaluate(
        "t => { const i = [...t.querySelectorAll('th')].findIndex(h => h.textContent === 'budget');"
        " return [...t.querySelectorAll('tr[data-branch]')].map(r => r.children[i].textContent); }"
    )
    assert budgets == ["3000"] * 4, budgets
    # cleared, nothing is marked: the button has nothing to show
    box.fill("")
    box.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('.lithify-section .lithify-results-for').disabled"
    )


def open_grid(page, grid: int):
    """The grid sweep's results panel, its metric view drawn."""
    section = open_section(page, "grid.db")
    section.locator(f".lithify-sweep-group[data-sweep='{grid}']").click(timeout=30_000)
    drawn(page, "metric")
    return page.locator(".lithify-results", has_text=f"Sweep {grid} of grid.db")


def test_a_drag_along_a_parallel_axis_brushes_it(lab, page):
    """Dragging straight down an axis (the plotly habit) keeps the lines that cross it in
    that range: the others dim and the table keeps their rows."""
    panel = open_grid(page, lab[2])
    panel.locator(".lithify-view-tab[data-kind='parallel']").click()
    drawn(page, "parallel")
    dots = panel.locator(".lithify-vega svg .mark-symbol path").evaluate_all(
        "ns => ns.map(n => { const r = n.getBoundingClientRect(); "
        "return [r.x + r.width / 2, r.y + r.height / 2]; })"
    )
    left = min(x for x, _ in dots)  # the first axis: budget, 100 at the bottom, 3000 on top
    ys = sorted({round(y) for x, y in dots if abs(x - left) < 2})
    assert len(ys) == 4, ys
    page.mouse.move(left + 2, ys[0] - 10)  # from above 3000 down to between 1000 and 300
    page.mouse.down()
    page.mouse.move(left + 2, (ys[1] + ys[2]) / 2, steps=8)
    page.mouse.up()
    chart = panel.locator(".lithify-chart-box")
    page.wait_for_function(
        "(c) => document.querySelector(c)?.dataset.kept === '8'",
        arg=".jp-MainAreaWidget:not(.lm-mod-hidden) .lithify-results .lithify-chart-box",
        timeout=30_000,
    )
    assert panel.locator(".lithify-table-note").inner_text().startswith("8 of 16")
    budgets = panel.locator(".lithify-table").evaluate(
        "t => { const i = [...t.querySelectorAll('th')].findIndex(h => h.textContent === 'budget');"
        " return [...t.querySelectorAll('tr[data-branch]')].map(r => r.children[i].textContent); }"
    )
    assert sorted(set(budgets)) == ["1000", "3000"], budgets
    assert chart.get_attribute("data-kept") == "8"
    # the lines left out are dimmed: the kept ones drawn strongly
    opacities = panel.locator(".lithify-vega svg .mark-line path").evaluate_all(
        "ns => ns.map(n => Number(n.getAttribute('opacity') ?? 1))"
    )
    assert sum(o > 0.5 for o in opacities) == 8, opacities


def test_a_study_of_two_objectives_opens_on_its_pareto_front(lab, page):
    one, two = lab[3]
    for sid, kind in ((two, "pareto"), (one, "metric")):
        page.evaluate(
            "window.jupyterapp.commands.execute('lithify:open-results', "
            f"{{journal: 'studies.db', sweep: {sid}}})"
        )
        panel = page.locator(".lithify-results", has_text=f"Study {sid} of studies.db")
        panel.locator(".lithify-view-tab[data-kind='history']:not([disabled])").wait_for(
            timeout=60_000
        )  # the server said which views can draw: the default is chosen
        drawn(page, kind, f"sweep={sid}")
        active = panel.locator(".lithify-view-tab.lithify-view-active").get_attribute("data-kind")
        assert active == kind, (sid, active)


def test_the_sidebar_shows_fork_labels_and_names_a_journal_once(page):
    section = open_section(page, "grid.db")
    row = section.locator(".lithify-branch[data-branch='1']")
    row.wait_for(timeout=30_000)
    side = page.locator("#lithify-sidebar")
    said = [t.strip() for t in side.locator(".lithify-journal-label:visible").all_inner_texts()]
    assert sum("grid.db" in t for t in said) == 1, said  # its section's head, not the list too
    # at the default width a fork's label shows its fork point and parameters, uncut
    shown = row.locator(".lithify-tree-label").evaluate(
        "n => { const want = '#1 @1 budget=100 retrieval=lexical seed=0';"
        " const at = n.firstChild.textContent.indexOf(want); if (at < 0) return null;"
        " const r = document.createRange(); r.setStart(n.firstChild, at);"
        " r.setEnd(n.firstChild, at + want.length);"
        " return r.getBoundingClientRect().right <= n.getBoundingClientRect().right + 0.5; }"
    )
    assert shown, side.bounding_box()
