"""The smaller habits of the results views and the sidebar, in a real JupyterLab and Debian's
Chromium (one Lab for the module, a fresh page per test): "Results for these" after a filter of
the fork tree opens the results of the filtered branches."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_browser import CHROMIUM, lithify_lab
from test_charts import make_grid
from test_lab_extension import lab_page, open_section
from test_lab_results import drawn

from workbench import Journal

TESTS = str(Path(__file__).parent)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium"),
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A Lab on a folder holding grid.db (test_charts.make_grid's sweep): (base URL, folder,
    the grid's id)."""
    tmp = tmp_path_factory.mktemp("lab")
    work = tmp / "work"
    work.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
        with Journal.open(work / "grid.db") as j:
            grid = make_grid(j)
        with lithify_lab(str(work), tmp) as base:
            yield base, work, grid


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
