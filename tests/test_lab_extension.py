"""The JupyterLab extension in a real browser: the journal in the sidebar, select an event,
"Fork sweep from here..." from its context menu, watch the results panel. Screenshots go to
tests/artifacts/ (light and dark theme); with LITHIFY_UPDATE_DOCS=1 the README's screenshots
in docs/img/ are regenerated from the same run (do it when the UI changes, and commit them)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from test_browser import ARTIFACTS, CHROMIUM, lab, offline_page  # noqa: F401 (fixture)

from workbench import Journal, bundled
from workbench.agents.auditor import AuditState, Calls, MockModel, run, start

DOCS_IMG = Path(__file__).resolve().parents[1] / "docs" / "img"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not __import__("pathlib").Path(CHROMIUM).exists(),
        reason="needs Debian's chromium (.ci/run installs it)",
    ),
]


def test_sidebar_event_and_fork_sweep_from_here(lab):  # noqa: F811
    from playwright.sync_api import sync_playwright

    base, work = lab
    (work / "audits").mkdir()
    repo = None  # the bundled corpus
    if os.environ.get("LITHIFY_UPDATE_DOCS"):  # a neutral path in the picture, not this checkout's
        repo = Path(tempfile.gettempdir()) / "lithify-docs" / "corpus"
        shutil.rmtree(repo, ignore_errors=True)
        shutil.copytree(bundled.corpus(), repo)
    with Journal.open(work / "audits" / "demo.db", AuditState) as j:
        start(j.root(), repo, 3000, 8)
        run(j.root(), Calls(MockModel()))
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
        page.evaluate("window.jupyterapp.commands.execute('lithify:open-sidebar')")
        side = page.locator("#lithify-sidebar")
        side.locator(".lithify-journal-label", has_text="audits/demo.db").click(timeout=30_000)
        side.locator(".lithify-branch", has_text="main").click()
        row = side.locator(".lithify-event[data-seq='11']")
        side.locator(".lithify-events").evaluate(
            "n => { n.scrollTop = 0; n.dispatchEvent(new Event('scroll')); }"
        )
        row.wait_for(timeout=30_000)
        row.click()
        side.locator(".lithify-detail pre", has_text='"done"').wait_for(timeout=30_000)
        assert "seq 11" in side.locator(".lithify-detail .lithify-subtitle").inner_text()
        page.screenshot(path=str(ARTIFACTS / "ext-01-sidebar.png"))

        row.click(button="right")
        page.locator(".lm-Menu-item", has_text="Fork sweep from here").click()
        dialog = page.locator(".jp-Dialog")
        dialog.locator("textarea[name=grid]").fill("budget=100,5000")
        page.screenshot(path=str(ARTIFACTS / "ext-02-dialog.png"))
        dialog.get_by_role("button", name="Start sweep").click()

        page.wait_for_function(
            "() => document.querySelector('.lithify-status')?.dataset.finished === '2'",
            timeout=120_000,
        )
        page.wait_for_function(
            "() => (document.querySelector('.lithify-chart')?.dataset.rows || '0') === '16'",
            timeout=60_000,
        )
        page.wait_for_timeout(300)
        launcher = page.locator(".lm-TabBar-tab", has_text="Launcher")
        if launcher.count():  # a restored layout may keep a launcher beside the results
            launcher.first.locator(".lm-TabBar-tabCloseIcon").click()
            page.wait_for_timeout(300)
        news = page.get_by_role("button", name="No")  # JupyterLab's "notify me of news?" toast
        if news.count():
            news.first.click()
            page.wait_for_timeout(1500)  # the toast slides out
        page.screenshot(path=str(ARTIFACTS / "ext-03-results.png"))
        if os.environ.get("LITHIFY_UPDATE_DOCS"):
            DOCS_IMG.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(DOCS_IMG / "workbench-lab.png"))
        page.evaluate(
            "window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab "
            "Dark'})"
        )
        page.wait_for_function(
            "() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000
        )
        page.wait_for_timeout(500)
        page.screenshot(path=str(ARTIFACTS / "ext-04-dark.png"))
        palette = page.evaluate(
            "window.jupyterapp.commands.listCommands().filter(c => c.startsWith('lithify:'))"
        )
        assert set(palette) >= {
            "lithify:open-sidebar",
            "lithify:fork-sweep",
            "lithify:open-results",
        }
        browser.close()
    assert outside == [], f"requests left 127.0.0.1: {outside[:5]}"
