"""Results you can trust while they run, in a real JupyterLab and Debian's Chromium (offline):
a study started in a terminal (``lithify optimize``) followed live in its results panel, which
never blanks (no moment without its progress, table or chart once they were there) and whose
charts never make Vega warn about rows without values; before the first value the chart says
there is none yet; another view asked for says so at once; the study is cancelled from the Lab
through the journal (there is no handle in the server), resumed once it stopped, and the fork
tree says what the panel says. A finished study with a categorical parameter draws its metric
and history views on the first visit, has nothing to resume, and shows partial values (marked)
when asked. A journal deleted and made again at its path is shown afresh."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import wait_for
from test_browser import CHROMIUM, lithify_lab
from test_lab_extension import lab_page, open_section

from workbench import Journal, sweep

TESTS = str(Path(__file__).parent)
WAIT = 120_000  # ms: a state a page waits for (ends as soon as it is there)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium"),
]

PANEL = ".lithify-results"

# Records every moment (after a DOM change settles) when the panel shows less than it had:
# no progress text, no table rows or no chart, once each was there (a chart being replaced by
# another view, which says so, excepted).
WATCH_BLANKS = """(sel) => {
  const r = document.querySelector(sel);
  const seen = window.lithifySeen = {blanks: [], had: {}};
  const check = () => {
    const status = (r.querySelector('.lithify-status') || {}).textContent || '';
    const rows = r.querySelectorAll('.lithify-table tr[data-branch]').length;
    const box = r.querySelector('.lithify-chart-box');
    const chart = !!box.querySelector('svg') || !!box.dataset.loading;
    const now = {status: !!status, rows: rows > 0, chart};
    for (const k of Object.keys(now)) {
      if (now[k]) { seen.had[k] = true; }
      else if (seen.had[k]) { seen.blanks.push(k + ' at ' + status); }
    }
  };
  new MutationObserver(check).observe(r, {subtree: true, childList: true, characterData: true});
  check();
}"""


def runs_of(db: Path) -> dict[int, str]:
    with Journal.open(db, readonly=True) as j:
        return {r.branch: r.status for r in j.runs()}


def status_is(page, pattern: str) -> None:
    """Wait until the panel's progress line matches ``pattern`` (a regular expression)."""
    page.wait_for_function(
        "([sel, p]) => new RegExp(p).test("
        "(document.querySelector(sel + ' .lithify-status') || {}).textContent || '')",
        arg=[PANEL, pattern],
        timeout=WAIT,
    )


def buttons(page) -> dict[str, bool]:
    """Which of Cancel, Rerun failed and Resume are enabled."""
    return dict(
        page.locator(f"{PANEL} .lithify-actions button").evaluate_all(
            "ns => ns.map(n => [n.textContent, !n.disabled])"
        )
    )


def buttons_are(page, **enabled: bool) -> None:
    want = {"cancel": "Cancel", "rerun": "Rerun failed", "resume": "Resume"}
    page.wait_for_function(
        "([sel, want]) => Object.entries(want).every(([t, on]) => [...document.querySelectorAll("
        "sel + ' .lithify-actions button')].some(b => b.textContent === t && b.disabled === !on))",
        arg=[PANEL, {want[k]: v for k, v in enabled.items()}],
        timeout=WAIT,
    )


def drawn(page, kind: str, marks: str = "path") -> None:
    """Wait until the panel shows ``kind`` drawn, with at least one of ``marks`` in it."""
    page.wait_for_function(
        "([sel, k, m]) => { const c = document.querySelector(sel + ' .lithify-chart-box');"
        " return c && c.dataset.kind === k && !c.dataset.loading"
        " && c.querySelectorAll('svg ' + m).length > 0; }",
        arg=[PANEL, kind, marks],
        timeout=WAIT,
    )


def header_state(section, sweep_id: int) -> str:
    return section.locator(f".lithify-sweep-group[data-sweep='{sweep_id}']").get_attribute(
        "data-state"
    )


def test_a_study_run_in_a_terminal_followed_cancelled_and_resumed_in_the_lab(tmp_path, monkeypatch):
    from playwright.sync_api import sync_playwright

    work = tmp_path / "work"
    hold = tmp_path / "hold"  # a file per trial lets it finish (sweep_fns.held)
    work.mkdir()
    hold.mkdir()
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.setenv("HOLD_DIR", str(hold))  # the Lab's server resumes with it too
    db = work / "live.db"
    with Journal.open(db) as j:
        j.root().apply({"start": 1})
    log = open(tmp_path / "cli.log", "w")  # noqa: SIM115 (closed when the study has ended)
    cli = subprocess.Popen(
        [sys.executable, "-m", "workbench", "--db", str(db), "optimize", "--at", "1"]
        + ["--space", "x1=float:-5:10", "--space", "x2=float:0:15", "--objective", "loss"]
        + ["--direction", "minimize", "--forks", "4", "--workers", "2", "--sampler", "random"]
        + ["--pruner", "none", "--seed", "0", "--fn", "sweep_fns:held"],
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    warnings: list[str] = []
    try:
        wait_for(
            lambda: list(runs_of(db).values()).count("running") == 2,
            what="the terminal's study to run two trials",
        )
        with lithify_lab(str(work), tmp_path) as base, sync_playwright() as pw:
            browser, page, outside = lab_page(pw, base)
            page.on(
                "console",
                lambda m: warnings.append(m.text) if m.type in ("warning", "error") else None,
            )
            section = open_section(page, "live.db")
            page.evaluate(
                "window.jupyterapp.commands.execute('lithify:open-results', "
                "{journal: 'live.db', sweep: 1})"
            )
            panel = page.locator(PANEL)
            # -- before any trial has a value: the chart says so (chart.json answered 400) ----
            drawn(page, "metric", "text")
            message = panel.locator(".lithify-chart-message")
            # two trials run, a third is asked ahead and waits for a worker
            assert message.inner_text() == "no value of loss yet: 2 running, 1 pending"
            # -- a study a terminal runs: running, Cancel applies (through the journal) --------
            buttons_are(page, cancel=True, rerun=False, resume=False)
            assert "running" in panel.locator(".lithify-resume").get_attribute("title")
            page.evaluate(WATCH_BLANKS, PANEL)
            first = min(b for b, s in runs_of(db).items() if s == "running")
            (hold / str(first)).touch()
            status_is(page, r"^1/4 forks finished · running")
            drawn(page, "metric", ".mark-symbol path")
            # -- another view asked for: the metric chart goes at once, and it says so --------
            said = panel.locator(".lithify-view-tab[data-kind='steps']").evaluate(
                "(tab) => { tab.click(); const c = document.querySelector("
                "'.lithify-results .lithify-chart-box'); return [c.dataset.loading || '', "
                "c.dataset.kind || '', c.querySelector('.lithify-vega').textContent]; }"
            )
            assert said == ["steps", "", "Drawing the steps view…"], said
            drawn(page, "steps", ".mark-line path")
            panel.locator(".lithify-view-tab[data-kind='metric']").click()
            drawn(page, "metric", ".mark-symbol path")
            # -- more trials finish and new ones are asked for: the panel follows, never blank -
            second = min(b for b, s in runs_of(db).items() if s == "running")
            (hold / str(second)).touch()
            status_is(page, r"^2/4 forks finished · running")
            wait_for(
                lambda: list(runs_of(db).values()).count("running") == 2,
                what="the study to run its last two trials",
            )
            panel.locator(".lithify-table tr[data-branch='4']").wait_for(timeout=WAIT)
            # -- Cancel, with no handle in this server: asked through the journal -------------
            panel.locator(".lithify-cancel").click()
            assert cli.wait(120) is not None  # the terminal's study stopped
            status_is(page, r"^2/4 forks finished · 2 cancelled$")
            buttons_are(page, cancel=False, rerun=False, resume=True)
            page.wait_for_function(
                "() => document.querySelector(\".lithify-sweep-group[data-sweep='1']\")"
                "?.dataset.state === 'cancelled'",
                timeout=WAIT,
            )  # the fork tree says it is not running either
            # -- Resume: the server finishes the study; tree and panel agree it finished ------
            (hold / "all").touch()
            panel.locator(".lithify-resume").click()
            status_is(page, r"^4/4 forks finished$")
            buttons_are(page, cancel=False, rerun=False, resume=False)
            assert "has ended" in panel.locator(".lithify-resume").get_attribute("title")
            page.wait_for_function(
                "() => document.querySelector(\".lithify-sweep-group[data-sweep='1']\")"
                "?.dataset.state === 'finished'",
                timeout=WAIT,
            )
            assert header_state(section, 1) == "finished"
            drawn(page, "metric", ".mark-symbol path")
            blanks = page.evaluate("window.lithifySeen.blanks")
            assert blanks == [], blanks
            browser.close()
        assert outside == [], outside[:5]
    finally:
        (hold / "all").touch()
        cli.kill()
        cli.wait(30)
        log.close()
    assert not [w for w in warnings if "Infinite extent" in w], warnings


def test_a_finished_study_draws_at_once_and_shows_partial_values_when_asked(tmp_path, monkeypatch):
    from playwright.sync_api import sync_playwright

    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with Journal.open(work / "study.db") as j:
        at = j.root().apply({"start": 1})
        space = {
            "kind": sweep.Categorical(["a", "b", "c"]),  # sorts first: once the metric view's x
            "x1": sweep.Float(-5.0, 10.0),
            "x2": sweep.Float(0.0, 15.0),
        }
        study = sweep.optimize(
            j,
            at,
            space,
            "loss",
            "minimize",
            forks=10,
            workers=2,
            sampler="random",
            pruner="median:n_startup_trials=2",
            seed=0,
            fn="sweep_fns:branin",
            progress=False,
        )
        pruned = [t.branch for t in study.trials if t.state == "pruned"]
    assert pruned, "the study pruned no trial: nothing partial to show"
    warnings: list[str] = []
    with lithify_lab(str(work), tmp_path) as base, sync_playwright() as pw:
        browser, page, outside = lab_page(pw, base)
        page.on(
            "console",
            lambda m: warnings.append(m.text) if m.type in ("warning", "error") else None,
        )
        page.evaluate(
            "window.jupyterapp.commands.execute('lithify:open-results', "
            "{journal: 'study.db', sweep: 1})"
        )
        panel = page.locator(PANEL)
        # -- the first visit draws: the metric view against a number, then history -----------
        drawn(page, "metric", ".mark-symbol path")
        assert panel.locator("select.lithify-select-x").input_value() == "x1"
        panel.locator(".lithify-view-tab[data-kind='history']:not([disabled])").click()
        drawn(page, "history", ".mark-symbol path")
        panel.locator(".lithify-view-tab[data-kind='metric']").click()
        drawn(page, "metric", ".mark-symbol path")
        panel.locator("select.lithify-select-x").select_option("kind")  # a category on x
        page.wait_for_function(
            "() => (document.querySelector('.lithify-results .lithify-chart-box')"
            ".dataset.query || '').includes('x=kind')",
            timeout=WAIT,
        )
        drawn(page, "metric", ".mark-symbol path")
        # -- every trial ended: nothing to resume ---------------------------------------------
        buttons_are(page, cancel=False, resume=False)
        assert "has ended" in panel.locator(".lithify-resume").get_attribute("title")
        # -- a pruned trial's value is its last report: empty, until partial values are asked -
        row = panel.locator(f".lithify-table tr[data-branch='{pruned[0]}']")
        row.wait_for(timeout=WAIT)
        assert row.get_attribute("data-state") == "pruned"
        assert row.locator("td.lithify-partial").count() == 0
        panel.locator(".lithify-partial-toggle").check()
        row.locator("td.lithify-partial").wait_for(timeout=WAIT)
        assert "partial" in row.locator("td.lithify-partial").get_attribute("title")
        page.wait_for_function(
            "() => (document.querySelector('.lithify-results .lithify-chart-box')"
            ".dataset.query || '').includes('partial=1')",
            timeout=WAIT,
        )
        drawn(page, "metric", ".mark-symbol path")
        browser.close()
    assert outside == [], outside[:5]
    assert not [w for w in warnings if "Infinite extent" in w], warnings


def grid(db: Path, scale: float) -> None:
    """A finished grid sweep of four forks whose recall is ``scale`` times its budget's."""
    with Journal.open(db) as j:
        at = j.root().apply({"start": 1})
        s = sweep.plan(j, 0, at, {"budget": [1, 2, 3, 4]})
        for f in s.forks:
            j.branch(f.branch).observe("recall", scale * f.params["budget"])
            j.record_run(f.branch, s.id, "finished")


def recall_is(page, text: str) -> None:
    """Wait until branch 4's recall cell in the panel's table reads ``text``."""
    page.wait_for_function(
        "([sel, want]) => { const t = document.querySelector(sel + ' .lithify-table');"
        " if (!t) return false; const i = [...t.querySelectorAll('th')]"
        ".findIndex(h => h.dataset.column === 'recall');"
        " const row = t.querySelector(\"tr[data-branch='4']\");"
        " return i >= 0 && row && row.children[i].textContent === want; }",
        arg=[PANEL, text],
        timeout=60_000,
    )


def test_a_journal_made_again_at_its_path_is_shown_afresh(tmp_path):
    """Deleted and made again with the same shape (only its values differ): the results
    panel, ended and not polling, shows the new one (the server names each journal it
    answers for, and an ended panel still asks now and then)."""
    from playwright.sync_api import sync_playwright

    work = tmp_path / "work"
    work.mkdir()
    db = work / "again.db"
    grid(db, 0.125)
    with lithify_lab(str(work), tmp_path) as base, sync_playwright() as pw:
        browser, page, outside = lab_page(pw, base)
        page.evaluate(
            "window.jupyterapp.commands.execute('lithify:open-results', "
            "{journal: 'again.db', sweep: 1})"
        )
        status_is(page, r"^4/4 forks finished$")
        recall_is(page, "0.5")
        drawn(page, "metric", ".mark-symbol path")
        page.locator(f"{PANEL}[data-ended='1']").wait_for(state="attached", timeout=WAIT)
        for suffix in ("", "-wal", "-shm", "-intents"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        grid(db, 0.25)
        recall_is(page, "1")  # within seconds (the journal was shown for 20 s and more)
        drawn(page, "metric", ".mark-symbol path")
        browser.close()
    assert outside == [], outside[:5]
