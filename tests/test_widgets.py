"""Widget logic without a browser: trait changes and callbacks drive the same code a click does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import wait_for

from workbench import InvalidValue, Journal
from workbench.agents.auditor import AuditState, Calls, MockModel, fork_seq_after_files, run, start
from workbench.widgets import JournalExplorer, LiveResults, SweepLauncher, Workbench, parse_grid

TESTS = str(Path(__file__).parent)


@pytest.fixture
def audited(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    path = tmp_path / "w.db"
    j = Journal.open(path, AuditState)
    start(j.root(), None, 3000, 10)
    run(j.root(), Calls(MockModel()))
    yield j
    j.close()


def test_explorer_pages_through_events_newest_first(audited):
    ex = JournalExplorer(audited, page_size=20)
    head = audited.root().head
    assert ex.page.max == -(-head // 20) and ex.page.value == ex.page.max
    assert ex.event_list.options[-1][1] == head
    ex.prev_button.click()
    seqs = [v for _, v in ex.event_list.options]
    assert seqs == list(range((ex.page.value - 1) * 20 + 1, ex.page.value * 20 + 1))
    ex.go_page(1)
    assert ex.event_list.options[0][1] == 1 and "delta" in ex.event_list.options[0][0]


def test_explorer_state_and_diff_views(audited):
    ex = JournalExplorer(audited)
    at = fork_seq_after_files(audited.root(), 2)
    ex.select(0, at)
    assert ex.selected_seq == at and f"state as of seq {at}" in ex.state_view.value
    ex.compare_mode.value = "diff vs previous"
    assert (
        "model_calls" in ex.state_view.value and "#1a7f37" in ex.state_view.value
    )  # additions shown
    ex.compare_mode.value = "diff vs seq"
    ex.compare_seq.value = at
    assert "(no change)" in ex.state_view.value


def test_explorer_branch_tree_and_hash_lookup(audited):
    f = audited.root().fork_at(11, params={"budget": 500})
    f.apply({"type": "budget", "budget": 500})
    ex = JournalExplorer(audited)
    labels = [label for label, _ in ex.branch_list.options]
    assert labels[0].startswith("main") and "└ #1 @11 budget=500 head 12" in labels[1]
    ex.find(f.head_hash[:10])
    assert (ex.selected_branch, ex.selected_seq) == (f.id, 12)
    ex.find("nothex!!")
    assert "hash prefix" in ex.message.value


def test_explorer_search_box_finds_payloads_and_selects_the_event(audited):
    f = audited.root().fork_at(11, params={"budget": 500})
    f.effect("tool:zebra", lambda: "a striped horse")
    ex = JournalExplorer(audited)
    ex.search_box.value = "striped"
    ex.search_button.click()
    assert [label.split()[0] for label, _ in ex.search_results.options] == [f"b{f.id}@{f.head}"]
    ex.search_results.value = 0  # picking the hit selects its branch and event
    assert (ex.selected_branch, ex.selected_seq) == (f.id, f.head)
    assert "1 event(s) in the journal" in ex.message.value
    ex.select(0, 5)
    ex.search_scope.value = True  # only main's history: the fork's effect is not in it
    ex.search("striped")
    assert ex.search_results.options == () and "branch 0" in ex.message.value
    ex.search('"unbalanced')
    assert "not a search query" in ex.message.value


def test_explorer_pages_anywhere_in_a_long_journal(tmp_path):
    # How fast on 100,000 events is measured in benchmarks/widgets.py; here, that any page holds
    # the right events (size is not the point: 5,000 events make 100 pages).
    with Journal.open(tmp_path / "big.db", durability="lazy") as j:
        j.root().apply_many([{"i": i} for i in range(5_000)])
    with Journal.open(tmp_path / "big.db") as j:
        ex = JournalExplorer(j)
        assert ex.page.max == 100 and ex.event_list.options[-1][1] == 5_000
        ex.go_page(1)
        ex.go_page(50)
        assert [seq for _, seq in ex.event_list.options] == list(range(2_451, 2_501))


def test_parse_grid():
    assert parse_grid("budget=300,600\nmodel=mock; temp=0.5") == {
        "budget": [300, 600],
        "model": ["mock"],
        "temp": [0.5],
    }
    for bad in ("", "budget", "=1", "budget="):
        with pytest.raises(InvalidValue):
            parse_grid(bad)


@pytest.mark.slow
def test_launcher_follows_the_explorer_and_runs_in_the_background(audited, tmp_path, monkeypatch):
    from workbench import sweep

    gate = tmp_path / "gate"
    monkeypatch.setenv("SWEEP_GATE", str(gate))  # the forks wait for it (their env is ours)
    ex = JournalExplorer(audited)
    la = SweepLauncher(
        audited, fn="sweep_fns:gated", explorer=ex, seeds=0, workers=2, runner="process"
    )
    at = fork_seq_after_files(audited.root(), 3)
    ex.select(0, at)
    assert (la.branch.value, la.seq.value) == (0, at)
    la.grid.value = "sleep=0.3,0.4"
    la.launch_button.click()
    # the click returned while no fork can finish (the gate is shut): the sweep runs behind it
    assert {f.status for f in sweep.status(audited, la.sweep_id)} <= {"pending", "running"}
    assert la.cancel_button.disabled is False and la.launch_button.disabled is True
    gate.touch()
    result = la.wait(timeout=120)
    assert result.ok and len(result.forks) == 2
    assert "2/2 finished" in la.status.value and "sleep" in la.summary.value
    assert all(bar.bar_style == "success" for bar, _ in la._bars.values())
    assert all(audited.branch(f.branch).fork_seq == at for f in result.forks)


@pytest.mark.slow
def test_launcher_reports_failures_and_reruns_them(audited):
    la = SweepLauncher(
        audited, fn="sweep_fns:boom", seeds=0, workers=2, runner="process", grid="x=1,2"
    )
    la.launch()
    la.wait(timeout=120)
    assert "2 failed" in la.status.value and not la.rerun_button.disabled
    assert "RuntimeError" in la.summary.value
    la.fn = "sweep_fns:sleepy"
    la.rerun_button.click()
    assert la.wait(timeout=120).ok
    la.grid.value = "nonsense"
    la.launch_button.click()
    assert "NAME=V1" in la.status.value


@pytest.mark.slow
def test_live_matrix_updates_from_a_worker_process(audited):
    live = LiveResults(audited, x="budget", y="recall", interval=0.1)
    try:
        assert live.rows == 8  # the base run's metrics
        code = (
            "import sys\nfrom workbench import Journal\nwith Journal.open(sys.argv[1]) as j:\n"
            "    for b in (100, 1000):\n        f = j.root().fork_at(11, params={'budget': b})\n"
            "        f.observe('recall', b / 1000)\n"
        )
        subprocess.run([sys.executable, "-c", code, audited.path], check=True)
        wait_for(lambda: live.rows >= 10, what="the live view to show the worker's 2 rows")
        assert live.rows == 10
        assert "10 rows from 3 branches" in live.info.value
        spec = live.chart.chart.to_dict()
        assert "layer" in spec  # the real chart replaced the placeholder
    finally:
        live.stop()


@pytest.mark.slow
def test_workbench_links_launcher_and_live_view(audited):
    wb = Workbench(audited, fn="sweep_fns:sleepy")
    try:
        wb.launcher.runner.value = "process"
        wb.launcher.seeds.value = 0
        wb.launcher.grid.value = "sleep=0.1"
        wb.explorer.select(0, 11)
        assert wb.launcher.seq.value == 11
        wb.launcher.launch()
        wb.launcher.wait(timeout=120)
        assert wb.live.sweep == wb.launcher.sweep_id
        assert wb.launcher.seq.value == 11  # stays where the user put it, not the head
        assert any("sleep=0.1" in label for label, _ in wb.explorer.branch_list.options)
    finally:
        wb.live.stop()


def test_explorer_follows_the_journal_and_diffs_any_two_points(audited):
    ex = JournalExplorer(audited)
    at = fork_seq_after_files(audited.root(), 2)
    ex.select(0, at)
    assert not ex.poll()  # nothing new
    # another writer (its own connection to the file, as another process would have; a real
    # process writing is in test_live_matrix_updates_from_a_worker_process)
    with Journal.open(audited.path) as other:
        other.root().fork_at(at, name="elsewhere").apply({"type": "budget", "budget": 77})
    assert ex.poll()  # someone else wrote: the tree shows the new branch, no Refresh
    assert any("elsewhere" in label for label, _ in ex.branch_list.options)
    assert (ex.selected_branch, ex.selected_seq) == (0, at)  # the selection is kept
    ex.compare_mode.value = "diff vs point"
    ex.compare_ref.value = f"elsewhere@{at + 1}"
    assert f"@{at + 1} → 0@{at}" in ex.state_view.value and "budget" in ex.state_view.value
    ex.compare_ref.value = "nowhere@3"
    assert "nowhere" in ex.message.value  # a clear error, nothing raised


def test_state_text_prints_multi_line_strings_as_lines():
    from workbench.widgets.explorer import state_text

    text = state_text({"note": "## file.go\n63 lines\nNo findings."})
    assert "    ## file.go\n    63 lines\n" in text and "\\n" not in text


@pytest.mark.slow
def test_launcher_shows_failures_and_resumes(audited):
    from workbench import sweep

    la = SweepLauncher(
        audited, fn="sweep_fns:boom", seeds=0, workers=2, runner="process", grid="x=1,2"
    )
    la.launch()
    la.wait(timeout=120)
    assert "RuntimeError" in la.failures.value and "no luck" in la.failures.value
    assert not la.resume_button.disabled
    la.fn = "sweep_fns:sleepy"
    la.resume_button.click()
    assert la.wait(timeout=120).ok and la.resume_button.disabled
    assert {f.status for f in sweep.status(audited, la.sweep_id)} == {"finished"}


def test_live_results_pick_axes_and_export(audited, monkeypatch):
    # Vega's JavaScript for an offline JupyterChart is bundled once per process (~3.5 s in
    # vl-convert); only a browser reads it (test_browser.py, offline): not built here.
    monkeypatch.setattr("workbench.widgets.live._OFFLINE", True)
    for b in (300, 3000):
        f = audited.root().fork_at(11, params={"budget": b, "seed": 0})
        f.observe("recall", b / 3000)
        f.observe("precision", 0.5)
    live = LiveResults(audited, x="budget", y="recall", autostart=False)
    assert "precision" in live.pick_y.options and "seed" in live.pick_x.options
    live.pick_y.value = "precision"
    live.pick_agg.value = "max"
    live.pick_log.value = False
    spec = live.chart.chart.to_dict()
    assert "precision (max) vs budget" in str(spec["title"])
    assert live.export("csv").decode().startswith("branch,branch_name,seq,metric,value")
    assert live.export("parquet")[:4] == b"PAR1"
    assert live.export("svg").startswith(b"<svg")
    live.export_buttons[0].click()
    assert "download='results.csv'" in live.downloads.value
    with pytest.raises(InvalidValue):
        live.export("xlsx")


def test_the_log_x_box_shows_what_the_axis_does(audited):
    """Ticked when x is logarithmic, unticked when not, "(auto)" while the rule decides; the
    user's tick decides from then on."""
    for b in (300, 3000):  # a factor of 10: linear by the rule
        audited.root().fork_at(11, params={"budget": b}).observe("recall", b / 3000)
    live = LiveResults(audited, x="budget", y="recall", autostart=False)
    scale = lambda: live.chart.chart.to_dict()["layer"][1]["encoding"]["x"]["scale"]  # noqa: E731
    assert scale().get("type") != "log"
    assert live.pick_log.value is False and live.pick_log.description == "log x (auto)"
    audited.root().fork_at(11, params={"budget": 9000}).observe("recall", 1.0)
    live.refresh()  # 300 … 9000: a factor of 30, a log axis by the rule
    assert scale()["type"] == "log" and live.pick_log.value is True
    live.pick_log.value = False  # the user says linear
    assert scale().get("type") != "log" and live.pick_log.description == "log x"
    live.refresh()
    assert live.pick_log.value is False


def test_live_results_draw_any_view_and_a_click_picks_the_branch(audited):
    forks = []
    for b in (300, 1000, 3000):
        f = audited.root().fork_at(11, params={"budget": b})
        f.observe("recall", b / 3000)
        forks.append(f.id)
    live = LiveResults(audited, x="budget", y="recall", autostart=False)
    live.pick_view.value = "history"
    assert "recall by fork" in str(live.chart.chart.to_dict()["title"])
    live.pick_view.value = "importance"  # one parameter: the reason, where the chart would be
    shown = str(live.chart.chart.to_dict())
    assert "importance needs two parameters that vary" in shown
    live.pick_view.value = "metric"
    pick = {"vlPoint": {"or": [{"branch": forks[1]}]}, "branch": [forks[1]]}
    live.chart._vl_selections = {"pick": {"value": pick, "store": []}}  # as a click sends it
    assert live.picked == forks[1]


def test_the_workbench_explorer_follows_the_journal_and_the_chart_selects(audited):
    """Forks that finished show as finished without Refresh; a branch clicked in the chart is
    selected in the explorer."""
    from workbench import sweep

    plan = sweep.plan(audited, 0, 11, {"budget": [300, 3000]}, fn="sweep_fns:sleepy")
    wb = Workbench(audited, fn="sweep_fns:sleepy")
    try:
        fork = plan.forks[0].branch
        label = lambda: next(t for t, v in wb.explorer.branch_list.options if v == fork)  # noqa: E731
        assert label().endswith("pending")
        with Journal.open(audited.path) as other:  # a worker elsewhere finishes the fork
            other.record_run(fork, plan.id, "finished")
        wait_for(lambda: label().endswith("finished"), what="the explorer to show it finished")
        wb.live.picked = plan.forks[1].branch
        assert wb.explorer.selected_branch == plan.forks[1].branch
    finally:
        wb.live.stop()
        wb.explorer.unfollow()


@pytest.mark.slow
def test_the_optimize_launcher_runs_a_study_and_shows_the_best(audited):
    from workbench.widgets import OptimizeLauncher

    ol = OptimizeLauncher(audited, fn="sweep_fns:branin", forks=3, workers=2)
    assert ol.space.value == "budget=int:300:4800"  # spanned from the agent's default grid
    assert ol.objective.value == "recall"  # the agent's metric
    ol.space.value = "x1=float:-5:10\nx2=float:0:15\nkind=cat:a,b,c"
    ol.objective.value, ol.direction.value = "loss", "minimize"
    ol.sampler.value, ol.pruner.value, ol.seed.value = "random", "none", "0"
    ol.branch.value, ol.seq.value = 0, 11
    ol.start_button.click()
    study = ol.wait(timeout=120)
    assert len(study.trials) == 3 and study.best is not None
    assert "best loss" in ol.status.value and f"branch {study.best.branch}" in ol.status.value
    assert ol.trials.value.count("<tr") == 4  # a header and a row per trial
    assert ol.resume_button.disabled and not ol.start_button.disabled
    assert all(audited.info(t.branch).fork_seq == 11 for t in study.trials)
    ol.space.value = "x=int:5:1"
    ol.start_button.click()
    assert "inverted" in ol.status.value  # shown, not raised; nothing started
    assert len(audited.sweeps()) == 1
