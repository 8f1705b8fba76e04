"""The JupyterLab extension in a real browser (Debian's Chromium, offline: any request leaving
127.0.0.1 fails the test): open a journal by path and from the file browser, the fork tree and
an event, a cross-branch diff, a sweep from an event's context menu followed live without
Refresh, the metric picker and log toggle, a CSV download, a failing fork's error and notebook
link, rerun failed, resume, cancel, and the dark theme; the sweep form starting from what the
server says the journal's agent runs; every view of a journal starting over when another journal
appears at its path. Screenshots go to tests/artifacts/; with LITHIFY_UPDATE_DOCS=1 the README's
screenshots in docs/img/ are regenerated from the same run."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import nbformat
import pytest
from conftest import wait_for
from test_browser import ARTIFACTS, CHROMIUM, lab, offline_page  # noqa: F401 (fixture)

from workbench import Journal, bundled, plugins, sweep
from workbench.agents.auditor import AuditState, Calls, MockModel, run, start
from workbench.sweep.runners import runners_here

DOCS_IMG = Path(__file__).resolve().parents[1] / "docs" / "img"
TESTS = str(Path(__file__).parent)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="needs Debian's chromium (.ci/run installs it)"
    ),
]


@pytest.fixture
def tally_agent(monkeypatch):
    """The tests' third-party agent (tests/tiny_agent.py: grid step=1,2,5, a fork function, no
    template) known to this process and, requested before ``lab``, to the lab server."""
    monkeypatch.setenv("LITHIFY_AGENTS", "tiny_agent:AGENT")
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    plugins.reload()
    yield
    plugins.reload()


def lab_page(pw, base: str):
    """(browser, page, outside requests) on a JupyterLab with the extension loaded."""
    browser, page, outside = offline_page(pw, base, 1500, 950)
    page.goto(f"{base}/lab?reset", timeout=60_000)
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.commands.hasCommand('lithify:fork-sweep')",
        timeout=90_000,
    )
    page.evaluate("window.jupyterapp.restored.then(() => true)")
    news = page.get_by_role("button", name="No", exact=True)
    if news.count():
        news.first.click()
    return browser, page, outside


def open_section(page, path: str):
    """The sidebar's section of a journal opened by its path."""
    page.evaluate("window.jupyterapp.commands.execute('lithify:open-sidebar')")
    side = page.locator("#lithify-sidebar")
    side.locator(".lithify-path").fill(path)
    side.locator(".lithify-open-button").click()
    section = side.locator(f".lithify-section[data-journal='{path}']")
    section.wait_for(timeout=30_000)
    return section


def fork_form(page, section, branch: int, seq: int):
    """The sweep form, opened from an event's context menu."""
    section.locator(f".lithify-branch[data-branch='{branch}']").click(timeout=30_000)
    section.locator(f".lithify-event[data-seq='{seq}']").click(button="right", timeout=30_000)
    page.locator(".lm-Menu-item", has_text="Fork sweep from here").click()
    dialog = page.locator(".jp-Dialog")
    dialog.locator("textarea[name=grid]").wait_for(timeout=30_000)
    return dialog


def template(path: Path, body: str) -> None:
    """A sweep template: a parameters cell, then ``body``."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell(
        'journal = ""\nbranch = 0\nbudget = 0\nseed = 0\nfork_params = "{}"'
    )
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, path)


def tidy(page) -> None:
    """Close what is not ours (the launcher, JupyterLab's news toast) before a screenshot."""
    for name in ("Launcher",):
        tab = page.locator(".lm-TabBar-tab", has_text=name)
        if tab.count():
            tab.first.locator(".lm-TabBar-tabCloseIcon").click()
    news = page.get_by_role("button", name="No", exact=True)
    if news.count():
        news.first.click()
        news.first.wait_for(state="hidden", timeout=30_000)  # the toast slid out


def latest_sweep(db: Path) -> int:
    with Journal.open(db, readonly=True) as j:
        return max(s.id for s in j.sweeps())


def runs_of(db: Path, sweep_id: int) -> dict[int, tuple[str, int | None]]:
    with Journal.open(db, readonly=True) as j:
        return {r.branch: (r.status, r.started) for r in j.storage.runs(sweep_id)}


def test_the_workbench_in_jupyterlab(lab):  # noqa: F811
    from playwright.sync_api import sync_playwright

    base, work = lab
    (work / "audits").mkdir()
    repo = None  # the bundled corpus
    if os.environ.get("LITHIFY_UPDATE_DOCS"):  # a neutral path in the picture, not this checkout's
        repo = Path(tempfile.gettempdir()) / "lithify-docs" / "corpus"
        shutil.rmtree(repo, ignore_errors=True)
        shutil.copytree(bundled.corpus(), repo)
    db = work / "audits" / "demo.db"
    with Journal.open(db, AuditState) as j:
        start(j.root(), repo, 3000, 8)
        run(j.root(), Calls(MockModel()))
        other = j.root().fork_at(11, name="other")
        start(other, budget=600)
        run(other, Calls(MockModel()))
        pending = sweep.plan(
            j, 0, 21, {"budget": [200, 400]}, fn="workbench.agents.auditor:run_fork"
        )
    with Journal.open(work / "second.db") as j:
        j.root().apply({"hello": "from the file browser"})
    template(work / "failing.ipynb", 'raise RuntimeError("this fork fails on purpose")')
    template(work / "slow.ipynb", "import time\ntime.sleep(120)")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser, page, outside = offline_page(pw, base, 1500, 950)
        page.goto(f"{base}/lab?reset", timeout=60_000)
        page.wait_for_function(
            "() => window.jupyterapp && "
            "window.jupyterapp.commands.hasCommand('lithify:open-sidebar')",
            timeout=90_000,
        )
        page.evaluate("window.jupyterapp.restored.then(() => true)")  # after layout restore
        news = page.get_by_role("button", name="No", exact=True)  # the "news?" toast
        if news.count():
            news.first.click()

        # -- open a journal from the file browser ---------------------------------------------
        page.evaluate("window.jupyterapp.commands.execute('filebrowser:activate')")
        item = page.locator(".jp-DirListing-item").filter(
            has=page.get_by_text("second.db", exact=True)
        )
        item.click(button="right", timeout=30_000)
        page.locator(".lm-Menu-item", has_text="Open in lithify").click()
        side = page.locator("#lithify-sidebar")
        side.locator(".lithify-section[data-journal='second.db']").wait_for(timeout=30_000)

        # -- open a journal by path, its fork tree, an event -------------------------------------
        side.locator(".lithify-path").fill("audits/demo.db")
        side.locator(".lithify-open-button").click()
        section = side.locator(".lithify-section[data-journal='audits/demo.db']")
        section.locator(".lithify-branch[data-branch='0']").click(timeout=30_000)
        section.locator(".lithify-fork-info dd").first.wait_for(timeout=30_000)
        events = section.locator(".lithify-events")
        section.locator(".lithify-event").first.wait_for(timeout=30_000)
        events.evaluate("n => { n.scrollTop = 0; n.dispatchEvent(new Event('scroll')); }")
        row = section.locator(".lithify-event[data-seq='11']")
        row.wait_for(timeout=30_000)
        row.click()
        detail = section.locator(".lithify-detail")
        detail.locator("pre", has_text='"done"').wait_for(timeout=30_000)
        assert "seq 11" in detail.locator(".lithify-subtitle").inner_text()
        page.screenshot(path=str(ARTIFACTS / "ext-01-sidebar.png"))

        # -- a diff of two points on two branches, side by side ----------------------------------
        detail.locator(".lithify-mark").click()
        section.locator(".lithify-branch", has_text="other").click()
        # other's own rows (main's list, still shown for a moment, has a seq 14 too)
        mine = f".lithify-event[data-branch='{other.id}']"
        section.locator(mine).first.wait_for(timeout=30_000)
        events.evaluate("n => { n.scrollTop = 0; n.dispatchEvent(new Event('scroll')); }")
        section.locator(f"{mine}[data-seq='14']").click(timeout=30_000)
        detail.locator(".lithify-diff-button").click(timeout=30_000)
        diff = page.locator(".lithify-diff")
        diff.locator(".lithify-change").first.wait_for(timeout=30_000)
        assert diff.locator(".lithify-sides pre").count() == 2
        assert "0@11" in diff.inner_text() and "other" not in diff.locator("h3").inner_text()
        page.screenshot(path=str(ARTIFACTS / "ext-02-diff.png"))

        # -- a sweep from an event's context menu, followed live ---------------------------------
        first_sweep = pending.id + 1
        section.locator(".lithify-branch[data-branch='0']").click()
        section.locator(".lithify-event").first.wait_for(timeout=30_000)
        events.evaluate("n => { n.scrollTop = 16 * 22; n.dispatchEvent(new Event('scroll')); }")
        at = section.locator(".lithify-event[data-branch='0'][data-seq='21']")  # not other's
        at.wait_for(timeout=30_000)
        at.click(button="right")
        page.locator(".lm-Menu-item", has_text="Fork sweep from here").click()
        dialog = page.locator(".jp-Dialog")
        dialog.locator("textarea[name=grid]").fill("budget=100,5000")
        dialog.get_by_role("button", name="Start sweep").click()
        results = page.locator(".lithify-results").last
        page.wait_for_function(
            "() => [...document.querySelectorAll('.lithify-status')]"
            ".some(s => s.dataset.finished === '2')",
            timeout=120_000,
        )
        # the tree followed without Refresh: the sweep's group and its finished forks
        section.locator(".lithify-sweep-group").first.wait_for(timeout=10_000)
        page.wait_for_function(
            "() => document.querySelectorAll("
            "\".lithify-section[data-journal='audits/demo.db'] .lithify-branch"
            "[data-status='finished']\").length >= 2",
            timeout=10_000,
        )
        chart = results.locator(".lithify-chart-box")
        page.wait_for_function(
            "() => [...document.querySelectorAll('.lithify-chart-box')]"
            ".some(c => (c.dataset.query || '').includes('y=recall'))",
            timeout=60_000,
        )
        tidy(page)
        page.screenshot(path=str(ARTIFACTS / "ext-03-results.png"))
        if os.environ.get("LITHIFY_UPDATE_DOCS"):
            DOCS_IMG.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(DOCS_IMG / "workbench-lab.png"))

        # -- metric picker, log toggle, a CSV download ------------------------------------------
        results.locator("select.lithify-select-y").select_option("model_calls")
        page.wait_for_function(
            "() => [...document.querySelectorAll('.lithify-chart-box')]"
            ".some(c => (c.dataset.query || '').includes('y=model_calls'))",
            timeout=30_000,
        )
        results.locator(".lithify-log-x").uncheck()
        page.wait_for_function(
            "() => [...document.querySelectorAll('.lithify-chart-box')]"
            ".some(c => (c.dataset.query || '').includes('log_x=0'))",
            timeout=30_000,
        )
        assert chart.locator(".lithify-vega svg").count() == 1  # drawn here, by vega-embed
        with page.expect_download(timeout=30_000) as got:
            results.locator(".lithify-csv").click()
        csv = Path(got.value.path()).read_text()
        assert csv.splitlines()[0].startswith("branch,branch_name,seq,metric,value")
        results.locator(".lithify-columns summary").click()
        results.locator(".lithify-columns input[data-column='state']").uncheck()
        with page.expect_download(timeout=30_000) as got:
            results.locator(".lithify-table-csv").click()
        shown = Path(got.value.path()).read_text().splitlines()
        # no branch_name column: the sweep's forks have no names
        assert shown[0].startswith("branch,budget") and "state" not in shown[0]
        assert len(shown) == 3  # the header and the two forks, as the table shows them
        results.locator(".lithify-table th", has_text="branch").first.click()  # sortable

        # -- a failing fork: its cell, error, traceback and notebook; rerun failed --------------
        section.locator(".lithify-event[data-seq='21']").click(button="right")
        page.locator(".lm-Menu-item", has_text="Fork sweep from here").click()
        dialog.locator("textarea[name=grid]").fill("budget=100")
        dialog.locator("select[name=runner]").select_option("papermill")
        dialog.locator("input[name=notebook]").fill("failing.ipynb")
        dialog.get_by_role("button", name="Start sweep").click()
        failure = page.locator(".lithify-failure").first
        failure.wait_for(timeout=120_000)
        text = failure.inner_text()
        assert (
            "RuntimeError" in text and "cell 3" in text and "fails on purpose" in text
        )  # executed nb
        assert page.locator(".lithify-progress-failed").count() >= 1
        failed_sweep = latest_sweep(db)
        before = runs_of(db, failed_sweep)
        page.screenshot(path=str(ARTIFACTS / "ext-04-failure.png"))
        failing_panel = page.locator(".lithify-results", has=page.locator(".lithify-failure"))
        failing_panel.locator(".lithify-rerun").click()
        after = before
        for _ in range(240):  # up to 2 minutes: the forks ran (and failed) again
            after = runs_of(db, failed_sweep)
            if all(
                after[b][0] == "failed" and (after[b][1] or 0) > (before[b][1] or 0) for b in before
            ):
                break
            page.wait_for_timeout(500)
        assert all((after[b][1] or 0) > (before[b][1] or 0) for b in before), (before, after)
        failure = page.locator(".lithify-failure").first
        failure.wait_for(timeout=60_000)
        failure.locator(".lithify-open-notebook").click()
        page.locator(".jp-NotebookPanel").first.wait_for(timeout=60_000)

        # -- resume a sweep that never ran; cancel a slow one -----------------------------------
        page.evaluate(
            f"window.jupyterapp.commands.execute('lithify:open-results', "
            f"{{journal: 'audits/demo.db', sweep: {pending.id}}})"
        )
        resumable = page.locator(".lithify-results", has_text=f"Sweep {pending.id} of")
        resumable.locator(".lithify-resume").click(timeout=30_000)
        page.wait_for_function(
            f"() => [...document.querySelectorAll('.lithify-results')].some(r => "
            f"r.textContent.includes('Sweep {pending.id} of') && "
            f"r.querySelector('.lithify-status').dataset.finished === '2')",
            timeout=120_000,
        )
        section.locator(".lithify-event[data-seq='21']").click(button="right")
        page.locator(".lm-Menu-item", has_text="Fork sweep from here").click()
        dialog.locator("textarea[name=grid]").fill("budget=100")
        dialog.locator("select[name=runner]").select_option("papermill")
        dialog.locator("input[name=notebook]").fill("slow.ipynb")
        earlier = latest_sweep(db)
        dialog.get_by_role("button", name="Start sweep").click()
        slow_sweep = wait_for(
            lambda: latest_sweep(db) if latest_sweep(db) > earlier else None,
            what="the slow sweep to be planned",
        )
        slow = page.locator(".lithify-results", has_text=f"Sweep {slow_sweep} of")
        slow.locator(".lithify-cancel").click(timeout=30_000)
        page.wait_for_function(
            f"() => [...document.querySelectorAll('.lithify-results')].some(r => "
            f"r.textContent.includes('Sweep {slow_sweep} of') && "
            f"r.querySelector('.lithify-status').textContent.includes('cancelled'))",
            timeout=60_000,
        )

        # -- the dark theme: charts are drawn again, dark ---------------------------------------
        page.evaluate(
            "window.jupyterapp.commands.execute('lithify:open-results', "
            + f"{{journal: 'audits/demo.db', sweep: {first_sweep}}})"
        )
        page.evaluate(
            "window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab "
            "Dark'})"
        )
        page.wait_for_function(
            "() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000
        )
        page.wait_for_function(
            "() => [...document.querySelectorAll('.lithify-chart-box')]"
            ".some(c => (c.dataset.query || '').includes('theme=dark') && c.querySelector('svg'))",
            timeout=30_000,
        )
        tidy(page)
        page.screenshot(path=str(ARTIFACTS / "ext-05-dark.png"))
        if os.environ.get("LITHIFY_UPDATE_DOCS"):
            page.screenshot(path=str(DOCS_IMG / "workbench-lab-dark.png"))
        # a reload brings the results panels back: every one open before it, one of them in
        # front (which one the layout restorer attaches first is up to it, so none is named)
        panels_open = page.locator(".lithify-results").count()
        assert panels_open >= 2
        page.goto(f"{base}/lab", timeout=60_000)
        page.wait_for_function(
            "() => window.jupyterapp && "
            "window.jupyterapp.commands.hasCommand('lithify:open-results')",
            timeout=90_000,
        )
        page.evaluate("window.jupyterapp.restored.then(() => true)")
        page.wait_for_function(
            "n => { const all = [...document.querySelectorAll('.lithify-results')];"
            " return all.length >= n && all.some(r => r.checkVisibility()); }",
            arg=panels_open,
            timeout=60_000,
        )
        palette = page.evaluate(
            "window.jupyterapp.commands.listCommands().filter(c => c.startsWith('lithify:'))"
        )
        assert set(palette) >= {
            "lithify:open-sidebar",
            "lithify:open-journal",
            "lithify:open-in-lithify",
            "lithify:fork-sweep",
            "lithify:open-results",
            "lithify:diff",
        }
        browser.close()
    assert outside == [], f"requests left 127.0.0.1: {outside[:5]}"
    assert json.loads(json.dumps(runs_of(db, pending.id)))  # the journal still reads


def test_the_sweep_form_starts_from_the_journals_agent(tally_agent, lab):  # noqa: F811
    """The form shows what the server says the journal's agent runs (a third-party agent's own
    grid; an empty grid, with a hint, when the agent names none) and sends only what the user
    changed, so the server's rule decides the rest."""
    from playwright.sync_api import sync_playwright
    from tiny_agent import Tally
    from tiny_agent import start as tally_start

    base, work = lab
    with Journal.open(work / "tally.db", Tally) as j:
        tally_start(j, 4)
    with Journal.open(work / "plain.db") as j:
        j.root().apply({"hello": "no agent"})
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser, page, outside = lab_page(pw, base)
        posts: list[tuple[str, dict]] = []
        page.on(
            "request",
            lambda r: (
                posts.append((r.url, json.loads(r.post_data or "{}")))
                if r.method == "POST" and "/lithify/api/sweeps" in r.url
                else None
            ),
        )
        # -- a third-party agent: its grid, runner and workers, sent as nothing -----------------
        dialog = fork_form(page, open_section(page, "tally.db"), 0, 4)
        assert dialog.locator("textarea[name=grid]").input_value() == "step=1,2,5"
        assert dialog.locator("select[name=runner]").input_value() == "pool"
        options = dialog.locator("select[name=runner] option").all_inner_texts()
        assert set(options) == set(runners_here())
        assert dialog.locator("input[name=workers]").input_value() == "2"
        assert dialog.locator("input[name=notebook]").input_value() == ""
        assert "tally" in dialog.locator(".lithify-form-about").inner_text()
        page.screenshot(path=str(ARTIFACTS / "ext-06-form-defaults.png"))
        dialog.get_by_role("button", name="Start sweep").click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('.lithify-status')]"
            ".some(s => s.dataset.finished === '3')",
            timeout=120_000,
        )
        assert [body for _, body in posts] == [{"journal": "tally.db", "branch": 0, "at": 4}], posts
        with Journal.open(work / "tally.db", Tally, readonly=True) as j:
            forks = sweep.status(j, max(s.id for s in j.sweeps()))
        assert sorted(f.params["step"] for f in forks) == [1, 2, 5]  # the agent's default grid

        # -- no agent: an empty grid with a hint; the server says what is missing ---------------
        dialog = fork_form(page, open_section(page, "plain.db"), 0, 1)
        grid = dialog.locator("textarea[name=grid]")
        assert grid.input_value() == ""
        assert "no default grid" in (grid.get_attribute("placeholder") or "")
        dialog.get_by_role("button", name="Start sweep").click()
        refused = page.locator(".jp-Dialog", has_text="The sweep did not start")
        refused.wait_for(timeout=30_000)
        assert "grid" in refused.inner_text()
        assert posts[-1][1] == {"journal": "plain.db", "branch": 0, "at": 1}, posts
        refused.locator(".jp-mod-accept").click()
        browser.close()
    assert outside == [], f"requests left 127.0.0.1: {outside[:5]}"


def replace(db: Path, steps: int, fork_name: str, fork_at: int) -> None:
    """Delete a journal (and its -wal, -shm) and make another at its path: ``steps`` on main and
    a fork named ``fork_name`` at ``fork_at`` with one step of its own."""
    from tiny_agent import Tally
    from tiny_agent import start as tally_start

    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    if steps:
        with Journal.open(db, Tally) as j:
            tally_start(j, steps)
            j.root().fork_at(fork_at, name=fork_name).apply({"add": 10})


def test_every_view_starts_over_when_the_journal_is_replaced(tally_agent, lab):  # noqa: F811
    """Another journal at an open journal's path: the tree is the new one's, and the old one's
    branch facts, events, selected event, error and sweep results are gone."""
    from playwright.sync_api import sync_playwright

    base, work = lab
    db = work / "swap.db"
    replace(db, 4, "old-fork", 2)
    from tiny_agent import Tally

    with Journal.open(db, Tally) as j:
        pending = sweep.plan(j, 0, 4, {"step": [1, 2]}, fn="tiny_agent:fork")
    with sync_playwright() as pw:
        browser, page, outside = lab_page(pw, base)
        section = open_section(page, "swap.db")
        section.locator(".lithify-branch", has_text="old-fork").click(timeout=30_000)
        info = section.locator(".lithify-fork-info")
        info.locator("dd", has_text="old-fork").wait_for(timeout=30_000)
        section.locator(".lithify-event[data-seq='3']").click(timeout=30_000)
        detail = section.locator(".lithify-detail")
        detail.locator(".lithify-subtitle", has_text="seq 3").wait_for(timeout=30_000)
        page.evaluate(
            "window.jupyterapp.commands.execute('lithify:open-results', "
            f"{{journal: 'swap.db', sweep: {pending.id}}})"
        )
        status = page.locator(".lithify-results .lithify-status")
        page.wait_for_function(
            "() => document.querySelector('.lithify-results .lithify-status')"
            ".textContent.startsWith('0/2 forks')",
            timeout=30_000,
        )

        # -- replaced while the sidebar was hidden: no error seen, a longer main ------------------
        page.evaluate("window.jupyterapp.commands.execute('filebrowser:activate')")
        replace(db, 6, "new-fork", 5)
        page.evaluate("window.jupyterapp.commands.execute('lithify:open-sidebar')")
        section.locator(".lithify-branch", has_text="new-fork").wait_for(timeout=30_000)
        assert section.locator(".lithify-branch", has_text="old-fork").count() == 0
        assert info.inner_text() == "" and detail.inner_text() == ""
        assert section.locator(".lithify-events-box").inner_text() == ""
        page.wait_for_function(
            "() => document.querySelector('.lithify-results .lithify-status')"
            ".textContent.includes('has no sweep')",
            timeout=30_000,
        )
        assert page.locator(".lithify-results .lithify-table td").count() == 0
        section.locator(".lithify-branch", has_text="new-fork").click()
        info.locator("dd", has_text="forked from 0@5").wait_for(timeout=30_000)

        # -- deleted (the error shows), then made again: the error goes with the old tree ---------
        replace(db, 0, "", 0)
        error = section.locator(".lithify-section-error")
        page.wait_for_function(
            "() => document.querySelector(\".lithify-section[data-journal='swap.db'] "
            ".lithify-section-error\").textContent.includes('no file')",
            timeout=30_000,
        )
        replace(db, 3, "third", 1)
        section.locator(".lithify-branch", has_text="third").wait_for(timeout=30_000)
        assert error.inner_text() == ""
        assert page.locator("#lithify-sidebar .lithify-message").inner_text() == ""
        assert info.inner_text() == "" and detail.inner_text() == ""
        assert section.locator(".lithify-branch", has_text="new-fork").count() == 0
        assert "has no sweep" in status.inner_text()
        browser.close()
    assert outside == [], f"requests left 127.0.0.1: {outside[:5]}"
