"""Optimize from an event in a real JupyterLab and Debian's Chromium (offline: any request
leaving 127.0.0.1 fails the test): the event's context menu offers "Optimize from here…" beside
the sweep; its form starts from what the server says (a space spanning the auditor's grid, its
metric, Optuna's samplers and pruners); a study the server refuses comes back to the form with
the server's message and nothing forked; a small study runs and the fork tree shows it as an
optimize sweep until it has finished."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_browser import ARTIFACTS, CHROMIUM, WAIT_MS, lab  # noqa: F401 (fixture)
from test_lab_extension import lab_page, open_section, tidy

from workbench import Journal, sweep
from workbench.agents.auditor import AuditState, Calls, MockModel, run, start

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium"),
]

AT = 21  # the event the study forks at: the auditor nineteen files in


def open_form(page, section):
    """The optimize form, opened from main's event at AT through its context menu (the sweep
    item beside it)."""
    section.locator(".lithify-branch[data-branch='0']").click(timeout=30_000)
    section.locator(".lithify-event").first.wait_for(timeout=30_000)
    events = section.locator(".lithify-events")
    events.evaluate("n => { n.scrollTop = 16 * 22; n.dispatchEvent(new Event('scroll')); }")
    at = section.locator(f".lithify-event[data-branch='0'][data-seq='{AT}']")
    at.wait_for(timeout=30_000)
    at.click(button="right")
    assert page.locator(".lm-Menu-item", has_text="Fork sweep from here").count() == 1
    page.locator(".lm-Menu-item", has_text="Optimize from here").click()
    dialog = page.locator(".jp-Dialog")
    dialog.locator("textarea[name=space]").wait_for(timeout=30_000)
    return dialog


def test_optimize_from_an_event(lab):  # noqa: F811
    from playwright.sync_api import sync_playwright

    base, work = lab
    db = work / "demo.db"
    with Journal.open(db, AuditState) as j:  # the demo's agent on its bundled corpus
        start(j.root(), None, 3000, 8)
        run(j.root(), Calls(MockModel()))
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser, page, outside = lab_page(pw, base)
        posts: list[dict] = []
        page.on(
            "request",
            lambda r: (
                posts.append(json.loads(r.post_data or "{}"))
                if r.method == "POST" and "/lithify/api/optimize" in r.url
                else None
            ),
        )
        section = open_section(page, "demo.db")
        dialog = open_form(page, section)

        # -- the form starts from the server's defaults -----------------------------------------
        value = lambda name: dialog.locator(f"[name={name}]").input_value()  # noqa: E731
        assert value("space") == "budget=int:300:4800"  # spanned from the auditor's grid
        assert (value("objective"), value("direction")) == ("recall", "maximize")
        assert (value("sampler"), value("pruner"), value("seed")) == ("tpe", "median", "")
        options = lambda name: dialog.locator(f"select[name={name}] option").all_inner_texts()  # noqa: E731
        assert options("sampler") == list(sweep.SAMPLERS)
        assert options("pruner") == list(sweep.PRUNERS)

        # -- bad input: the server's message in the form, the values kept, nothing forked ---------
        dialog.locator("[name=space]").fill("budget=int:4800:300")
        dialog.locator("[name=forks]").fill("4")
        dialog.locator("[name=workers]").fill("2")
        dialog.locator("[name=sampler]").select_option("random")
        dialog.locator("[name=pruner]").select_option("none")
        dialog.locator("[name=seed]").fill("0")
        dialog.get_by_role("button", name="Start study").click()
        refused = page.locator(".jp-Dialog .lithify-form-error")
        refused.wait_for(timeout=30_000)
        assert "inverted" in refused.inner_text(), refused.inner_text()
        assert (value("space"), value("forks"), value("sampler")) == (
            "budget=int:4800:300",
            "4",
            "random",
        )
        page.screenshot(path=str(ARTIFACTS / "optimize-01-refused.png"))
        with Journal.open(db, readonly=True) as j:
            assert j.sweeps() == [] and len(j.branches()) == 1

        # -- a small study: the fork tree shows it as an optimize sweep until it finishes -------
        dialog.locator("[name=space]").fill("budget=int:300:4800")
        dialog.get_by_role("button", name="Start study").click()
        header = section.locator(".lithify-sweep-group[data-kind='optimize']")
        header.wait_for(timeout=WAIT_MS)
        done = section.locator(".lithify-sweep-group[data-kind='optimize'][data-state='finished']")
        done.wait_for(timeout=WAIT_MS)
        study_id = int(done.get_attribute("data-sweep"))
        assert f"optimize {study_id} · 4 forks · finished" in done.inner_text()
        tidy(page)
        page.screenshot(path=str(ARTIFACTS / "optimize-02-finished.png"))
        browser.close()
    assert outside == [], f"requests left 127.0.0.1: {outside[:5]}"
    sent = {
        "journal": "demo.db",
        "branch": 0,
        "at": AT,
        "objective": "recall",
        "direction": "maximize",
        "forks": "4",
        "workers": "2",
        "sampler": "random",
        "pruner": "none",
        "seed": "0",
        "runner": "pool",
    }
    assert posts == [
        {**sent, "space": "budget=int:4800:300"},
        {**sent, "space": "budget=int:300:4800"},
    ], posts
    with Journal.open(db, readonly=True) as j:
        (info,) = j.sweeps()
        assert info.id == study_id and info.spec["kind"] == "optimize"
        assert (info.spec["sampler"], info.spec["pruner"], info.spec["seed"]) == (
            "random",
            "none",
            0,
        )
        forks = sweep.status(j, study_id)
        assert len(forks) == 4 and {f.status for f in forks} == {"finished"}
        assert all(j.info(f.branch).fork_seq == AT for f in forks)
        assert all(300 <= f.params["budget"] <= 4800 for f in forks)
