"""Results you can work with, in a real JupyterLab and Debian's Chromium (offline: any request
leaving 127.0.0.1 fails the test): the results panel as a full-width tab, charts drawn in the
browser by the bundled vega-embed, a hover tooltip with branch, params and value, a click on a
point or on a parallel-coordinates line that selects its branch in the fork tree, a brush that
zooms, every view on a grid sweep and on an optimize study (a view that cannot draw disabled
with its reason), a box on parallel coordinates that filters the table, the filter boxes over
the tree and the table, results for branches picked in the tree (a click whose press and
release straddle a live redraw still counts), a metric observed after the pickers were built
offered too, and a reload that keeps the
open journals and the sidebar's width. With LITHIFY_UPDATE_DOCS=1 the docs' screenshots of the
history, importance and parallel views (light and dark) are written to docs/img/."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from test_browser import ARTIFACTS, CHROMIUM, lab, lithify_lab  # noqa: F401 (fixture)
from test_charts import make_grid
from test_lab_extension import lab_page, open_section, tidy

from workbench import Journal, sweep

DOCS_IMG = Path(__file__).resolve().parents[1] / "docs" / "img"
TESTS = str(Path(__file__).parent)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium"),
]


SHOWN = ".jp-MainAreaWidget:not(.lm-mod-hidden) .lithify-results"  # the results tab in front


def drawn(page, kind: str, extra: str = "") -> None:
    """Wait until the results tab in front has drawn ``kind`` (its query holding ``extra``)."""
    page.wait_for_function(
        "([shown, k, q]) => [...document.querySelectorAll(shown + ' .lithify-chart-box')]"
        ".some(c => c.dataset.kind === k && (c.dataset.query || '').includes(q) "
        "&& c.querySelector('svg'))",
        arg=[SHOWN, kind, extra],
        timeout=90_000,
    )


def theme_to(page, theme: str) -> None:
    """Switch JupyterLab to its light or dark theme and wait until the page has it."""
    name = "JupyterLab Dark" if theme == "dark" else "JupyterLab Light"
    page.evaluate(
        f"window.jupyterapp.commands.execute('apputils:change-theme', {{theme: '{name}'}})"
    )
    light = "false" if theme == "dark" else "true"
    page.wait_for_function(
        f"() => document.body.dataset.jpThemeLight === '{light}'", timeout=30_000
    )


def shown(page, js: str) -> None:
    """Wait until ``js`` (a function of the results tab in front) is true."""
    page.wait_for_function(
        f"(s) => {{ const r = document.querySelector(s); return r && ({js})(r); }}",
        arg=SHOWN,
        timeout=30_000,
    )


def centre(box: dict) -> tuple[float, float]:
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def drag(page, box: dict, a: tuple[float, float], b: tuple[float, float]) -> None:
    """Drag across a chart, from and to fractions of its box."""
    page.mouse.move(box["x"] + a[0] * box["width"], box["y"] + a[1] * box["height"])
    page.mouse.down()
    page.mouse.move(box["x"] + b[0] * box["width"], box["y"] + b[1] * box["height"], steps=6)
    page.mouse.up()


def test_results_answer_back(lab, monkeypatch):  # noqa: F811
    from playwright.sync_api import sync_playwright

    base, work = lab
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(TESTS)
    with Journal.open(work / "grid.db") as j:
        grid = make_grid(j)
        study = sweep.optimize(
            j,
            1,
            {
                "x1": sweep.Float(-5.0, 10.0),
                "x2": sweep.Float(0.0, 15.0),
                "kind": sweep.Categorical(["a", "b", "c"]),
            },
            "loss",
            "minimize",
            forks=10,
            workers=2,
            sampler="random",
            pruner="median",
            seed=0,
            fn="sweep_fns:branin",
            progress=False,
        ).sweep
        forks = next(s.branches for s in j.sweeps() if s.id == grid)
        for fork in forks:  # as if its runner had run them (make_grid only writes observations)
            j.record_run(fork, grid, "finished")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser, page, outside = lab_page(pw, base)
        section = open_section(page, "grid.db")
        # -- a sweep's header opens its results: a tab in the main area, full width ---------
        section.locator(f".lithify-sweep-group[data-sweep='{grid}']").click(timeout=30_000)
        panel = page.locator(".lithify-results", has_text=f"Sweep {grid} of grid.db")
        drawn(page, "metric")
        width = panel.bounding_box()["width"]
        assert width > 0.6 * page.viewport_size["width"], width
        assert panel.locator(".lithify-vega svg").count() == 1  # vega-embed, in this page
        panel.locator("select.lithify-select-y").select_option("recall")
        drawn(page, "metric", "y=recall")
        # the log x box says what the axis does: the rule chose a log axis for 100 … 3000
        assert panel.locator(".lithify-log-x").is_checked()
        assert "auto: on" in panel.locator(".lithify-log-x-label").inner_text()

        # -- hover: branch, params and value; click: the branch selected in the tree -----------
        point = panel.locator(".lithify-vega svg .mark-symbol path").nth(3)
        page.mouse.move(*centre(point.bounding_box()))
        tip = page.locator("#vg-tooltip-element")
        tip.wait_for(state="visible", timeout=10_000)
        said = tip.inner_text()
        assert all(w in said for w in ("branch", "budget", "retrieval", "seed", "recall")), said
        page.mouse.click(*centre(point.bounding_box()))
        shown(page, "r => r.dataset.picked")
        picked = panel.get_attribute("data-picked")
        selected = section.locator(f".lithify-branch.jp-mod-selected[data-branch='{picked}']")
        selected.wait_for(timeout=30_000)
        section.locator(".lithify-fork-info dd", has_text=f"#{picked} forked").wait_for(
            timeout=30_000
        )
        assert picked in said

        # -- brush to zoom, and back -----------------------------------------------------------
        chart = panel.locator(".lithify-chart-box")
        drag(page, panel.locator(".lithify-vega svg").bounding_box(), (0.25, 0.5), (0.55, 0.55))
        shown(page, "r => r.querySelector('.lithify-chart-box').dataset.zoomed === '1'")
        panel.locator(".lithify-reset-zoom").click()
        shown(page, "r => !r.querySelector('.lithify-chart-box').dataset.zoomed")

        # -- every view of the grid sweep; parallel coordinates filter the table ----------------
        for kind in ("history", "importance", "slice", "contour", "steps", "pareto", "parallel"):
            panel.locator(f".lithify-view-tab[data-kind='{kind}']").click()
            drawn(page, kind)
            assert panel.locator(".lithify-chart-message").inner_text() == ""
        tidy(page)
        page.screenshot(path=str(ARTIFACTS / "results-01-parallel.png"))
        # a click on a line (away from the dots on the axes) picks that line's branch (the
        # one vega drew it for; not the one picked above), selected in the fork tree
        spot = panel.locator(".lithify-vega svg").evaluate(
            "(svg, before) => { for (const p of svg.querySelectorAll('.mark-line path')) {"
            " const n = p.getTotalLength(), m = p.getScreenCTM();"
            " for (const f of [0.15, 0.3, 0.45, 0.6, 0.85]) {"
            "  const at = p.getPointAtLength(n * f);"
            "  const x = at.x * m.a + at.y * m.c + m.e, y = at.x * m.b + at.y * m.d + m.f;"
            "  const d = p.__data__ && p.__data__.datum;"
            "  if (d && String(d.branch) !== before && document.elementFromPoint(x, y) === p)"
            "   return [x, y, d.branch]; } }"
            " return null; }",
            picked,
        )
        assert spot is not None, "no line of the parallel view can be reached by the pointer"
        x, y, line = spot
        page.mouse.move(x, y)
        page.mouse.click(x, y)
        shown(page, f"r => r.dataset.picked === '{line}'")
        section.locator(f".lithify-branch.jp-mod-selected[data-branch='{line}']").wait_for(
            timeout=30_000
        )
        # a box around the upper half of the first axis (budget: 1000 and 3000)
        dots = panel.locator(".lithify-vega svg .mark-symbol path").evaluate_all(
            "ns => ns.map(n => { const r = n.getBoundingClientRect(); "
            "return [r.x + r.width / 2, r.y + r.height / 2]; })"
        )
        left = min(x for x, _ in dots)
        ys = sorted(y for x, y in dots if abs(x - left) < 2)
        page.mouse.move(left + 12, (ys[0] + ys[-1]) / 2)  # from inside the plot, up and left
        page.mouse.down()
        page.mouse.move(left - 12, ys[0] - 12, steps=6)
        page.mouse.up()
        note = panel.locator(".lithify-table-note")
        shown(
            page, "r => /of 16 rows shown/.test(r.querySelector('.lithify-table-note').textContent)"
        )
        kept = int(chart.get_attribute("data-kept"))
        assert 0 < kept < 16 and note.inner_text().startswith(f"{kept} of 16")
        assert panel.locator(".lithify-table tr[data-branch]").count() == kept

        # -- the table's filter box: a filter over the matrix; a bad one is one message ---------
        panel.locator(".lithify-view-tab[data-kind='metric']").click()
        drawn(page, "metric")
        box = panel.locator(".lithify-filter-input")
        box.fill("budget >= 1000 and recall > 0.5")
        box.press("Enter")
        panel.locator(".lithify-filter-message", has_text="4 of 16 branches").wait_for(
            timeout=30_000
        )
        assert panel.locator(".lithify-table tr[data-branch]").count() == 4
        box.fill("recall >")
        box.press("Enter")
        panel.locator(".lithify-filter-error", has_text="expected a value").wait_for(timeout=30_000)

        # -- the tree's filter box, and results for branches picked in the tree -----------------
        tree_box = section.locator(".lithify-filter-input")
        tree_box.fill("budget == 3000")
        tree_box.press("Enter")
        section.locator(".lithify-filter-message", has_text="4 of 27 branches").wait_for(
            timeout=30_000
        )
        page.wait_for_function(
            "() => document.querySelectorAll(\".lithify-section[data-journal='grid.db'] "
            '.lithify-branch:not(.lithify-dim)").length === 4',
            timeout=30_000,
        )
        tree_box.fill("")
        tree_box.press("Enter")
        section.locator(f".lithify-branch[data-branch='{forks[0]}']").click()
        for fork in forks[5], forks[9]:  # Ctrl-click; the tree redraws between press and release
            row = section.locator(f".lithify-branch[data-branch='{fork}']")
            row.scroll_into_view_if_needed()
            x, y = centre(row.bounding_box())
            page.keyboard.down("Control")
            page.mouse.move(x, y)
            page.mouse.down()
            section.locator(".lithify-tree").evaluate("n => n.dispatchEvent(new Event('scroll'))")
            page.mouse.up()
            page.keyboard.up("Control")
            marked = f".lithify-branch.jp-mod-selected[data-branch='{fork}']"
            section.locator(marked).wait_for(timeout=30_000)  # as the live tail's redraws do
        section.locator(".lithify-results-for").click()
        mine = page.locator(".lithify-results", has_text="3 branches of grid.db")
        drawn(page, "metric")
        mine.locator(".lithify-table tr[data-branch]").nth(2).wait_for(timeout=30_000)
        assert mine.locator(".lithify-table tr[data-branch]").count() == 3
        # its table is polled (each second, twice more after the rows come): a redraw keeps the
        # row elements, so a click on a row is never lost to one
        rows = mine.locator(".lithify-table tr[data-branch]")
        rows.evaluate_all("ns => ns.forEach(n => { n.lithifyProbe = true; })")
        page.wait_for_timeout(2500)
        assert rows.evaluate_all("ns => ns.filter(n => n.lithifyProbe).length") == 3

        # -- the tree box keeps the height it is dragged to, and scrolls to a new sweep ---------
        tree = section.locator(".lithify-tree")
        was = tree.bounding_box()
        grip = centre(section.locator(".lithify-tree-grip").bounding_box())
        page.mouse.move(*grip)
        page.mouse.down()
        page.mouse.move(grip[0], grip[1] + 120, steps=6)
        page.mouse.up()
        tall = tree.bounding_box()["height"]
        assert tall > was["height"] + 60, (was, tall)
        tree.evaluate("n => { n.scrollTop = 0; n.dispatchEvent(new Event('scroll')); }")
        with Journal.open(work / "grid.db") as j:
            planned = sweep.plan(j, 0, 1, {"budget": [7, 8]})
        late = planned.id
        newest = section.locator(f".lithify-sweep-group[data-sweep='{late}']")
        newest.wait_for(timeout=30_000)  # only rows in view are drawn: it was scrolled to
        box, row = tree.bounding_box(), newest.bounding_box()
        assert box["y"] <= row["y"] <= box["y"] + box["height"] and abs(box["height"] - tall) < 2

        # -- a metric first observed after the pickers were built is offered too ----------------
        page.evaluate(
            "window.jupyterapp.commands.execute('lithify:open-results', "
            f"{{journal: 'grid.db', sweep: {late}}})"
        )
        pending = page.locator(".lithify-results", has_text=f"Sweep {late} of grid.db").last
        pending.wait_for(timeout=30_000)
        with Journal.open(work / "grid.db") as j:
            j.branch(planned.forks[0].branch).observe("recall", 0.5)
        pending.locator("select.lithify-select-y option[value='recall']").wait_for(
            state="attached", timeout=30_000
        )  # the pickers are built from the first rows
        with Journal.open(work / "grid.db") as j:
            j.branch(planned.forks[1].branch).observe("cost", 2.0)
        pending.locator("select.lithify-select-y option[value='cost']").wait_for(
            state="attached", timeout=30_000
        )  # the panel polls its planned sweep: the new metric joins the choices
        assert pending.locator("select.lithify-select-y").input_value() == "recall"

        # -- an optimize study: trial order, Optuna's importance, learning curves --------------
        page.evaluate(
            "window.jupyterapp.commands.execute('lithify:open-results', "
            f"{{journal: 'grid.db', sweep: {study}}})"
        )
        drawn(page, "metric", f"sweep={study}")
        studied = page.locator(".lithify-results", has_text=f"Study {study} of grid.db")
        studied.wait_for(timeout=60_000)  # named by its kind once the sweep's state is read
        status = studied.locator(".lithify-status").text_content() or ""
        assert re.match(r"\d+/10 forks finished", status), status  # of the study's 10 trials
        studied.locator(".lithify-view-tab[data-kind='history']:not([disabled])").wait_for(
            timeout=60_000
        )  # the server said which views can draw
        reasons = dict(
            studied.locator(".lithify-view-tab").evaluate_all(
                "ns => ns.map(n => [n.dataset.kind, n.disabled ? n.title : null])"
            )
        )
        assert reasons["pareto"] and "two metrics" in reasons["pareto"]
        for kind in ("history", "importance", "slice", "contour", "parallel", "steps"):
            assert reasons[kind] is None, (kind, reasons[kind])
            studied.locator(f".lithify-view-tab[data-kind='{kind}']").click()
            drawn(page, kind, f"sweep={study}")
        studied.locator(".lithify-view-tab[data-kind='history']").click()
        drawn(page, "history", f"sweep={study}")
        assert "trial" in studied.locator(".lithify-vega svg").text_content()
        if os.environ.get("LITHIFY_UPDATE_DOCS"):
            _docs_screenshots(page, panel, grid)

        # -- a reload brings the open journals back, at the sidebar's width --------------------
        handle = page.locator("#jp-main-split-panel > .lm-SplitPanel-handle").first.bounding_box()
        x, y = centre(handle)
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + 160, y, steps=8)
        page.mouse.up()
        page.wait_for_timeout(1500)  # JupyterLab saves its layout a moment after a change
        wide = page.locator("#lithify-sidebar").bounding_box()["width"]
        page.goto(f"{base}/lab", timeout=60_000)
        page.wait_for_function(
            "() => window.jupyterapp && "
            "window.jupyterapp.commands.hasCommand('lithify:open-results')",
            timeout=90_000,
        )
        page.evaluate("window.jupyterapp.restored.then(() => true)")
        page.locator(".lithify-section[data-journal='grid.db'] .lithify-branch").first.wait_for(
            timeout=60_000
        )
        assert abs(page.locator("#lithify-sidebar").bounding_box()["width"] - wide) < 4
        page.locator(".lithify-results", has_text="3 branches of grid.db").first.wait_for(
            state="attached", timeout=60_000
        )
        browser.close()
    assert outside == [], f"requests left 127.0.0.1: {outside[:5]}"


def test_lithify_lab_with_a_journal_opens_it_in_the_sidebar(tmp_path):
    """`lithify lab team/runs/x.db` from a folder: JupyterLab on that folder with the journal
    open in the sidebar (once: a reload keeps it, never twice), every journal under the folder
    listed, a folder named runs like any other."""
    from playwright.sync_api import sync_playwright

    for db in ("team/runs/x.db", "lithify-demo-1/demo.db"):
        (tmp_path / db).parent.mkdir(parents=True)
        with Journal.open(tmp_path / db) as j:
            j.root().apply({"hello": db})
    with lithify_lab("team/runs/x.db", tmp_path, cwd=tmp_path) as base, sync_playwright() as pw:
        browser, page, outside = lab_page(pw, base)
        side = page.locator("#lithify-sidebar")
        section = side.locator(".lithify-section[data-journal='team/runs/x.db']")
        section.locator(".lithify-branch[data-branch='0']").wait_for(timeout=60_000)
        assert side.is_visible()  # the sidebar came to the front
        side.locator(".lithify-journal-label[data-journal='lithify-demo-1/demo.db']").wait_for(
            timeout=30_000
        )
        page.goto(f"{base}/lab", timeout=60_000)
        page.wait_for_function(
            "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('lithify:refresh')",
            timeout=90_000,
        )
        page.evaluate("window.jupyterapp.restored.then(() => true)")
        page.locator("#lithify-sidebar[data-restored='1']").wait_for(
            state="attached", timeout=60_000
        )
        section.locator(".lithify-branch[data-branch='0']").wait_for(timeout=60_000)
        assert page.locator(".lithify-section").count() == 1  # kept, not opened again
        browser.close()
    assert outside == [], f"requests left 127.0.0.1: {outside[:5]}"


def _docs_screenshots(page, panel, grid: int) -> None:
    """The docs' pictures (docs/how-to/results.md, lab.md): history, importance and parallel
    of the grid sweep, light and dark."""
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    page.evaluate(
        f"window.jupyterapp.commands.execute('lithify:open-results', {{journal: 'grid.db', "
        f"sweep: {grid}}})"
    )
    box = panel.locator(".lithify-filter-input")  # the table's filter, as the test left it
    box.fill("")
    box.press("Enter")
    shown(page, "r => !/rows shown/.test(r.querySelector('.lithify-table-note').textContent)")
    for theme in ("light", "dark"):
        theme_to(page, theme)
        for kind in ("history", "importance", "parallel"):
            panel.locator(f".lithify-view-tab[data-kind='{kind}']").click()
            drawn(page, kind, f"theme={theme}")
            page.wait_for_timeout(600)
            tidy(page)
            suffix = "" if theme == "light" else "-dark"
            page.screenshot(path=str(DOCS_IMG / f"results-{kind}{suffix}.png"))
    page.evaluate(
        "window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})"
    )
