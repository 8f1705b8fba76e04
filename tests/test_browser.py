"""A real JupyterLab and a real headless Chromium: run the fork-and-sweep notebook, launch a
sweep from the widget, and wait until the chart shows its points. Screenshots are saved to
tests/artifacts/. Any request outside 127.0.0.1 fails the test (charts must render offline).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import wait_for

CHROMIUM = "/usr/bin/chromium"
# How long a wait for a page state may take before the test fails: generous, for a loaded
# machine (each wait ends as soon as its state is there).
WAIT_MS = 240_000
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
ARTIFACTS = Path(__file__).parent / "artifacts"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(),
        reason="needs Debian's chromium (.ci/run installs it: apt-get install chromium)",
    ),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def lithify_lab(target: str, tmp_path: Path, cwd: Path | None = None) -> Iterator[str]:
    """``lithify lab TARGET`` (a folder or a journal) on a free port, as a user starts it from
    ``cwd``; its base URL once it answers (the server's log in tmp_path/lab.log)."""
    port = free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "jupyter-config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "jupyter-runtime"),
    }
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "workbench",
            "lab",
            target,
            "--port",
            str(port),
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            "--IdentityProvider.token=",
            "--expose-app-in-browser",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=cwd,
    )
    base = f"http://127.0.0.1:{port}"

    def up() -> bool:
        if proc.poll() is not None:
            pytest.fail((tmp_path / "lab.log").read_text()[-2000:])
        try:
            urllib.request.urlopen(base + "/api/status", timeout=5).close()
            return True
        except OSError:
            return False

    wait_for(up, what="JupyterLab to answer", interval=0.25)
    try:
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(20)  # the server shuts its kernels down first
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        log.close()


@pytest.fixture
def lab(tmp_path):
    work = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, work)
    with lithify_lab(str(work), tmp_path) as base:
        yield base, work


def offline_page(pw, base: str, width: int, height: int):
    """Headless Chromium on one page that records every request leaving ``base``:
    (browser, page, list of outside URLs). The tests assert the list stays empty."""
    browser = pw.chromium.launch(
        executable_path=CHROMIUM,
        headless=True,
        args=[
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
        ],
    )
    page = browser.new_page(viewport={"width": width, "height": height})
    outside: list[str] = []
    page.on(
        "request",
        lambda r: (
            outside.append(r.url)
            if not r.url.startswith((base, "data:", "blob:", "about:"))
            else None
        ),
    )
    return browser, page, outside


def run_notebook(page, base: str, work: Path, name: str) -> None:
    """Open a notebook in JupyterLab, run every cell, wait until each has run (failing with
    the last outputs and the server log if it does not), and check no cell raised."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.goto(f"{base}/lab/tree/{name}?reset", timeout=WAIT_MS)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=WAIT_MS)
    page.wait_for_function(  # the indicator is idle before the kernel is connected
        """() => {
            const w = window.jupyterapp.shell.currentWidget;
            const s = w && w.sessionContext && w.sessionContext.session;
            const k = s && s.kernel;
            return k && k.connectionStatus === 'connected' && k.status === 'idle';
        }""",
        timeout=WAIT_MS,
    )
    news = page.get_by_role("button", name="No")
    if news.count():
        news.first.click()
    started = """() => [...document.querySelectorAll('.jp-Cell.jp-CodeCell .jp-InputPrompt')]
        .some(p => /\\[(\\*|\\d+)\\]/.test(p.textContent))"""
    for _ in range(3):  # on a loaded machine the first run-all can land before the kernel
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        try:
            page.wait_for_function(started, timeout=20_000)
            break
        except PlaywrightTimeout:
            continue
    try:
        page.wait_for_function(
            """() => {
                const sel = '.jp-Cell.jp-CodeCell .jp-InputPrompt';
                const prompts = [...document.querySelectorAll(sel)];
                return prompts.length > 0
                    && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
            }""",
            timeout=WAIT_MS,
        )
    except PlaywrightTimeout:
        stem = name.removesuffix(".ipynb")
        page.screenshot(path=str(ARTIFACTS / f"{stem}-timeout.png"), full_page=True)
        outputs = page.locator(".jp-OutputArea-output").all_inner_texts()
        log_file = work.parent / "lab.log"
        log = log_file.read_text()[-3000:] if log_file.exists() else ""
        pytest.fail(f"{name} did not finish; outputs: {outputs[-5:]}\nlab log: {log}")
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    assert "Traceback" not in "".join(errors.all_inner_texts()), name
    assert page.locator(".jp-OutputArea-output", has_text="Traceback").count() == 0, name


def test_fork_and_sweep_notebook_in_a_real_browser(lab):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    base, work = lab
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser, page, outside = offline_page(pw, base, 1400, 1000)
        run_notebook(page, base, work, "02-fork-and-sweep.ipynb")
        page.screenshot(path=str(ARTIFACTS / "01-notebook-ran.png"), full_page=False)

        # The notebook's own sweep: 15 forks, all points on the chart.
        info = page.locator("[data-branches]").first
        info.scroll_into_view_if_needed()
        page.wait_for_function(
            "() => document.querySelector('[data-branches]')?.dataset.branches === '15'",
            timeout=WAIT_MS,
        )

        # Now launch a small sweep from the widget, as a user would.
        page.locator(".widget-textarea textarea").first.fill("budget=500,5000")
        seeds = page.locator(".widget-inline-hbox:has(label:text-is('seeds')) input").first
        seeds.fill("1")
        seeds.press("Enter")
        page.get_by_role("button", name="Launch sweep").first.click()
        page.wait_for_function(
            "() => document.querySelector('[data-branches]')?.dataset.branches === '2'",
            timeout=WAIT_MS,
        )
        # the points arrive as the two forks finish: kernels on a loaded machine take a while
        try:
            page.wait_for_function(
                """() => document.querySelectorAll(
                           '.vega-embed svg .mark-symbol path, .vega-embed svg .mark-symbol > path'
                         ).length >= 2""",
                timeout=WAIT_MS,
            )
        except PlaywrightTimeout:
            page.screenshot(path=str(ARTIFACTS / "02-no-points.png"), full_page=True)
            said = [
                t
                for t in page.locator(".widget-html-content").all_inner_texts()
                if any(w in t for w in ("sweep", "fail", "Error", "rows"))
            ]
            pytest.fail(f"the chart got no points; the widgets say: {said[-8:]}")
        chart = page.locator(".vega-embed").first
        chart.scroll_into_view_if_needed()
        page.screenshot(
            path=str(ARTIFACTS / "02-sweep-launched.png"), full_page=False, animations="disabled"
        )
        chart.screenshot(path=str(ARTIFACTS / "03-chart.png"), animations="disabled")
        status = page.locator("text=/sweep \\d+: 2\\/2 finished/").first
        status.wait_for(timeout=WAIT_MS)
        browser.close()
    assert outside == [], f"requests left 127.0.0.1: {outside[:5]}"


@pytest.mark.parametrize(
    "name",
    ["01-quickstart.ipynb", "03-crash-and-time-travel.ipynb", "04-memory-recall-vs-budget.ipynb"],
)
def test_every_bundled_notebook_runs_offline(lab, name):
    """Every bundled notebook (02 above) runs in JupyterLab with no request leaving the
    machine; an altair chart shown in a cell (notebook 04's) is drawn from the Vega bundled
    with altair, never loaded from a CDN ("Error loading script" offline)."""
    from playwright.sync_api import sync_playwright

    base, work = lab
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser, page, outside = offline_page(pw, base, 1400, 1000)
        run_notebook(page, base, work, name)
        assert page.get_by_text("Error loading script").count() == 0
        if name.startswith("04"):
            page.wait_for_function(
                "() => [...document.querySelectorAll('.vega-embed svg')]"
                ".some(s => s.querySelectorAll('.mark-line path, .mark-symbol path').length)",
                timeout=WAIT_MS,
            )
            chart = page.locator(".vega-embed").last
            chart.scroll_into_view_if_needed()
            chart.screenshot(path=str(ARTIFACTS / "04-chart.png"))
        browser.close()
    assert outside == [], f"requests left 127.0.0.1: {outside[:5]}"
