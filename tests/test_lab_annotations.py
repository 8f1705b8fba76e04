"""A branch's notes and artifacts in a real JupyterLab and Debian's Chromium (offline: any
request leaving 127.0.0.1 fails the test), as a user meets them: select a fork in the tree, its
artifact is a link that downloads its bytes; a note typed in its facts box (Enter) is listed and
is a ``note`` event on the branch; the tree's filter ``notes contains "slow"`` selects that
branch alone; the results table has a notes column (and the chart's tooltip the note); a note
on a fork of a sweep that is running is refused with a message, and goes through once the fork
has ended. The test also writes the pictures of docs/how-to/lab.md (the study list, the
timeline view, a branch's notes and artifacts; light and dark) to tests/artifacts/, and with
LITHIFY_UPDATE_DOCS=1 to docs/img/."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from test_browser import ARTIFACTS, CHROMIUM, lithify_lab
from test_lab_details import page  # noqa: F401 (fixture: a fresh page on this module's lab)
from test_lab_extension import open_section, tidy
from test_lab_results import SHOWN, drawn, theme_to

from workbench import Journal, sweep

DOCS_IMG = Path(__file__).resolve().parents[1] / "docs" / "img"
TESTS = str(Path(__file__).parent)
START = 1_750_000_000_000  # when the grid's first fork "started" (unix ms)
REPORT = b"budget,retrieval,recall\n100,lexical,0.033\n"
NOTE = "lexical is too slow at budget 100"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium"),
]


def prepare(j: Journal) -> dict[str, int]:
    """A grid sweep (budget × retrieval) whose forks observe recall, run as two workers would
    have run them (finished, with their times), the first fork with report.csv attached; a
    sweep of one fork, planned (the test makes it run); a small optimize study. Their ids."""
    at = j.root().apply({"start": 1})
    grid = sweep.plan(
        j, 0, at, {"budget": [100, 300, 1000, 3000], "retrieval": ["lexical", "fused"]}
    )
    free = [START, START]  # when each of two workers is next free
    for f in grid.forks:
        b, p = j.branch(f.branch), f.params
        recall = min(1.0, p["budget"] / 3000 + (0.1 if p["retrieval"] == "fused" else 0.0))
        b.observe("recall", recall)
        b.observe("model_calls", p["budget"] / (5 if p["retrieval"] == "fused" else 10))
        worker = free.index(min(free))
        wall = 400 + p["budget"] // 2 + (300 if p["retrieval"] == "fused" else 0)
        started = free[worker]
        free[worker] = started + wall + 50
        j.record_run(
            f.branch, grid.id, "finished", started=started, finished=started + wall, wall_ms=wall
        )
    first = j.branch(grid.forks[0].branch)
    first.attach("report.csv", REPORT)
    first.attach("trace.jsonl", b"".join(b'{"step": %d, "calls": 7}\n' % i for i in range(150)))
    busy = sweep.plan(j, 0, at, {"budget": [500]})
    study = sweep.optimize(
        j,
        at,
        {"x": sweep.Float(0.0, 2.0)},
        objectives=["loss"],
        directions=["minimize"],
        pruner="none",
        forks=5,
        workers=2,
        sampler="random",
        seed=0,
        fn="sweep_fns:two_costs",
        progress=False,
    )
    return {
        "grid": grid.id,
        "fork": grid.forks[0].branch,
        "busy": busy.id,
        "busy_fork": busy.forks[0].branch,
        "study": study.sweep,
    }


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A Lab on a folder holding notes.db (``prepare``'s sweeps): (base URL, folder, ids)."""
    tmp = tmp_path_factory.mktemp("lab")
    work = tmp / "work"
    work.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
        mp.syspath_prepend(TESTS)
        with Journal.open(work / "notes.db") as j:
            ids = prepare(j)
        with lithify_lab(str(work), tmp) as base:
            yield base, work, ids


def facts(section):
    """The selected branch's facts box, once its notes row is drawn."""
    box = section.locator(".lithify-fork-info dl.lithify-facts")
    box.locator("input.lithify-note-input").wait_for(timeout=30_000)
    return box


def select(section, branch: int):
    """Select ``branch`` in the fork tree; its facts box."""
    section.locator(f".lithify-branch[data-branch='{branch}']").click(timeout=30_000)
    section.locator(".lithify-fork-info dd", has_text=f"#{branch} forked").wait_for(timeout=30_000)
    return facts(section)


def hover_tooltip(page, panel, which: str, timeout: float = 60.0) -> str:  # noqa: F811
    """Hover the chart's first point whose datum ``d`` satisfies ``which`` (JS) and return its
    tooltip's text (newlines dropped); the point is looked up again and hovered anew until
    the tooltip shows (a live panel may redraw the chart between a lookup and the hover)."""
    deadline = time.monotonic() + timeout
    while True:
        at = panel.locator(".lithify-vega svg").evaluate(
            "(svg) => { for (const p of svg.querySelectorAll('.mark-symbol path')) {"
            " const d = p.__data__ && p.__data__.datum;"
            f" if (d && ({which})) {{ const r = p.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2, String(d.branch)]; } }"
            " return null; }"
        )
        assert at is not None, f"no point of the chart has {which}"
        page.mouse.move(2, 2)
        page.mouse.move(at[0], at[1])
        try:
            page.wait_for_function(
                "b => { const t = document.querySelector('#vg-tooltip-element');"
                " return t && t.classList.contains('visible')"
                " && t.innerText.replace(/\\n/g, '').includes('branch\\t' + b); }",
                arg=at[2],
                timeout=3_000,
            )
        except Exception:  # noqa: BLE001 (hovered a point the panel has just redrawn: again)
            if time.monotonic() > deadline:
                raise
            continue
        return page.locator("#vg-tooltip-element").inner_text().replace("\n", "")


def test_a_branchs_notes_and_artifacts_in_the_lab(lab, page):  # noqa: F811
    base, work, ids = lab
    db, fork = work / "notes.db", ids["fork"]
    section = open_section(page, "notes.db")

    # -- the fork's artifact: a link that downloads its bytes ---------------------------------
    info = select(section, fork)
    link = info.locator("a.lithify-artifact", has_text="report.csv")
    link.wait_for(timeout=30_000)
    assert link.get_attribute("download") == "report.csv"
    assert "/lithify/api/artifact" in (link.get_attribute("href") or "")
    with page.expect_download(timeout=30_000) as got:
        link.click()
    assert got.value.suggested_filename == "report.csv"
    assert Path(got.value.path()).read_bytes() == REPORT
    assert info.locator("li.lithify-note").count() == 0

    # -- a note typed in its box (Enter): listed, and an event on the branch ------------------
    box = info.locator("input.lithify-note-input")
    box.fill(NOTE)
    box.press("Enter")
    section.locator(".lithify-fork-info li.lithify-note", has_text=NOTE).wait_for(timeout=30_000)
    assert section.locator(".lithify-fork-info input.lithify-note-input").input_value() == ""
    assert section.locator(".lithify-fork-info .lithify-note-message").inner_text() == ""
    with Journal.open(db, readonly=True) as j:
        b = j.branch(fork)
        (note,) = b.notes()
        assert (note.branch, note.text) == (fork, NOTE)
        (event,) = [r for r in b.history() if r.seq == note.seq]
        assert event.kind == "note" and event.seq == b.head  # the newest event on the branch
        total = len(j.branches())

    # -- the tree's filter box: notes contains "slow" keeps that branch alone ----------------
    tree_box = section.locator(".lithify-filter-input")
    tree_box.fill('notes contains "slow"')
    tree_box.press("Enter")
    said = section.locator(".lithify-filter-message")
    try:
        said.filter(has_text=f"1 of {total} branches").wait_for(timeout=60_000)
    except Exception:
        raise AssertionError(f"the filter said {said.all_inner_texts()!r}") from None
    undimmed = ".lithify-section[data-journal='notes.db'] .lithify-branch:not(.lithify-dim)"
    page.wait_for_function(
        "(s) => document.querySelectorAll(s).length === 1", arg=undimmed, timeout=30_000
    )
    assert page.locator(undimmed).get_attribute("data-branch") == str(fork)
    assert section.locator(f".lithify-branch.jp-mod-selected[data-branch='{fork}']").count() == 1
    tree_box.fill("")
    tree_box.press("Enter")

    # -- the results table: notes and artifacts columns; the note in the chart's tooltip -----
    section.locator(f".lithify-sweep-group[data-sweep='{ids['grid']}']").click(timeout=30_000)
    panel = page.locator(".lithify-results", has_text=f"Sweep {ids['grid']} of notes.db")
    drawn(page, "metric")
    table = panel.locator(".lithify-table")
    table.locator(f"tr[data-branch='{fork}']").wait_for(timeout=30_000)
    cells = table.evaluate(
        "(t, fork) => { const h = [...t.querySelectorAll('th')].map(n => n.textContent);"
        " const row = t.querySelector(`tr[data-branch='${fork}']`);"
        " const cell = c => h.includes(c) ? row.children[h.indexOf(c)].textContent : null;"
        " return { notes: cell('notes'), artifacts: cell('artifacts'), rows:"
        " [...t.querySelectorAll('tr[data-branch]')].map(r => r.children[h.indexOf('notes')]"
        ".textContent) }; }",
        fork,
    )
    assert NOTE in (cells["notes"] or ""), cells
    assert "report.csv" in (cells["artifacts"] or ""), cells
    assert sum(NOTE in t for t in cells["rows"]) == 1, cells  # no other branch has it
    said = hover_tooltip(page, panel, f"String(d.branch) === '{fork}'")
    assert NOTE in said and f"branch\t{fork}" in said, said
    # a branch without notes has no notes line (Vega-Lite would write its missing value "null")
    said = hover_tooltip(
        page, panel, f"typeof d.branch === 'number' && String(d.branch) !== '{fork}'"
    )
    assert "branch\t" in said and "notes" not in said and "null" not in said, said
    for kind in ("rank", "edf"):  # the views beside the timeline (issue 39), drawn in the Lab
        panel.locator(f".lithify-view-tab[data-kind='{kind}']").click()
        drawn(page, kind)
        assert panel.locator(".lithify-chart-message").inner_text() == "", kind
    panel.locator(".lithify-view-tab[data-kind='timeline']").click()
    drawn(page, "timeline")

    # -- the docs' pictures: the study list, the timeline, the notes and the artifacts --------
    ARTIFACTS.mkdir(exist_ok=True)
    folders = [ARTIFACTS] + ([DOCS_IMG] if os.environ.get("LITHIFY_UPDATE_DOCS") else [])
    for theme in ("light", "dark"):
        theme_to(page, theme)
        drawn(page, "timeline", f"theme={theme}")
        tidy(page)
        page.mouse.move(2, 2)  # no tooltip, no hover
        suffix = "" if theme == "light" else "-dark"
        results = page.locator(SHOWN)
        shots = {
            "lab-study-list": around(section.locator(".lithify-studies")),
            "lab-timeline": around(
                results.locator(".lithify-chart-box"),  # its width
                results.locator(".lithify-view-tab"),
                results.locator(".lithify-table"),
            ),
            "lab-notes": around(*facts_rows(section, "branch", "notes")),
            "lab-artifacts": around(*facts_rows(section, "artifacts"), top=1),  # not the button
        }
        for name, clip in shots.items():
            for folder in folders:
                folder.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(folder / f"{name}{suffix}.png"), clip=clip)
    theme_to(page, "light")


def facts_rows(section, first: str, last: str | None = None) -> list:
    """The facts box's rows from ``first`` to ``last`` (its term and value), as locators."""
    dl = section.locator(".lithify-fork-info dl.lithify-facts")
    return [
        dl,  # its width
        dl.locator(f"dt:text-is('{first}')"),
        dl.locator(f"dt:text-is('{last or first}') + dd"),
    ]


def around(*parts, pad: float = 6, top: float | None = None) -> dict[str, float]:
    """A screenshot's clip: the box around ``parts`` (locators) side to side; top to bottom
    around the last two (or the one), ``top`` above them (else ``pad``)."""
    boxes = [p.first.bounding_box() for p in parts]
    rows = boxes[-2:] if len(boxes) > 1 else boxes
    x = min(b["x"] for b in boxes) - pad
    right = max(b["x"] + b["width"] for b in boxes) + pad
    y = min(b["y"] for b in rows) - (pad if top is None else top)
    bottom = max(b["y"] + b["height"] for b in rows) + pad / 2
    return {"x": x, "y": y, "width": right - x, "height": bottom - y}


def test_a_note_on_a_running_fork_is_refused_until_it_ends(lab, page):  # noqa: F811
    """A sweep driven by this process (its Watch beats in the journal; the Lab's server, a
    subprocess on this host, sees this pid alive): a note on its running fork is refused with
    a message and nothing is written; once the fork has ended, the same note goes through."""
    from workbench.sweep.watch import Watch

    base, work, ids = lab
    db, fork, busy = work / "notes.db", ids["busy_fork"], ids["busy"]
    section = open_section(page, "notes.db")
    with Journal.open(db) as j:
        j.storage.put_run(fork, busy, "running")
        watch = Watch(j, busy, cancel=lambda: None)
        try:
            section.locator(
                f".lithify-branch[data-branch='{fork}'][data-status='running']"
            ).wait_for(timeout=30_000)
            info = select(section, fork)
            box = info.locator("input.lithify-note-input")
            box.fill("why so slow?")
            box.press("Enter")
            said = section.locator(".lithify-fork-info .lithify-note-message")
            said.filter(has_text="running").wait_for(timeout=30_000)
            assert f"sweep {busy}" in said.inner_text()
            assert section.locator(".lithify-fork-info li.lithify-note").count() == 0
            assert box.input_value() == "why so slow?"  # kept, to send once the fork has ended
            assert j.branch(fork).notes() == []
        finally:
            watch.stop()
        j.storage.put_run(fork, busy, "failed")
    section.locator(f".lithify-branch[data-branch='{fork}'][data-status='failed']").wait_for(
        timeout=30_000
    )
    box = section.locator(".lithify-fork-info input.lithify-note-input")
    box.press("Enter")
    section.locator(".lithify-fork-info li.lithify-note", has_text="why so slow?").wait_for(
        timeout=30_000
    )
    with Journal.open(db, readonly=True) as j:
        assert [n.text for n in j.branch(fork).notes()] == ["why so slow?"]
