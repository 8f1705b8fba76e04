"""Sweeps: planning, the three runners, failures and reruns, cancel, parent SIGKILL + resume."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest
from cli import lithify
from conftest import wait_for

from workbench import InvalidValue, Journal, sweep
from workbench.agents.auditor import AuditState, Calls, MockModel, fork_seq_after_files, run, start

pytestmark = pytest.mark.slow  # real processes, kernels, servers or browsers

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = ROOT / "notebooks" / "templates" / "auditor_fork.ipynb"
FLAKY = Path(__file__).parent / "notebooks" / "flaky_fork.ipynb"
TESTS = str(Path(__file__).parent)


@pytest.fixture
def base(tmp_path, monkeypatch):
    """A finished base run of the auditor on 12 bundled files, traced."""
    trace = tmp_path / "trace.txt"
    monkeypatch.setenv("AUDITOR_TRACE", str(trace))
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    path = tmp_path / "sweep.db"
    with Journal.open(path, AuditState) as j:
        b = j.root()
        start(b, None, 3000, 12)
        calls = Calls(MockModel())
        run(b, calls)
        calls.close()
        at = fork_seq_after_files(b, 4)
    j = Journal.open(path, AuditState)
    yield j, at, trace
    j.close()


def test_plan_is_a_cartesian_grid_times_seeds_and_is_recorded(base):
    j, at, _ = base
    p = sweep.plan(j, 0, at, {"budget": [300, 600], "model": ["mock"]}, seeds=3)
    assert [f.params for f in p.forks][:4] == [
        {"budget": 300, "model": "mock", "seed": 0},
        {"budget": 300, "model": "mock", "seed": 1},
        {"budget": 300, "model": "mock", "seed": 2},
        {"budget": 600, "model": "mock", "seed": 0},
    ]
    assert len(p.forks) == 6 and all(j.branch(f.branch).head == at for f in p.forks)
    (rec,) = j.sweeps()
    assert (rec.id, rec.base, rec.at, rec.spec["grid"], rec.spec["seeds"]) == (
        p.id,
        0,
        at,
        p.grid,
        3,
    )
    assert [f.status for f in sweep.status(j, p.id)] == ["pending"] * 6
    assert sweep.load(j, p.id).forks == p.forks


@pytest.mark.parametrize(
    "grid, seeds",
    [
        ({}, None),
        ({"b": []}, None),
        ({"b": "abc"}, None),
        ({"b": [1]}, 0),
        ({"seed": [1]}, 2),
        ({"b": [{1}]}, None),
    ],
)
def test_bad_plans_are_refused_before_anything_is_written(base, grid, seeds):
    j, at, _ = base
    n = len(j.branches())
    with pytest.raises(InvalidValue):
        sweep.plan(j, 0, at, grid, seeds=seeds)
    assert len(j.branches()) == n and j.sweeps() == []


def test_process_runner_shares_the_prefix_and_recall_rises_with_budget(base):
    j, at, trace = base
    budgets = [100, 300, 1200, 5000]
    p = sweep.plan(j, 0, at, {"budget": budgets}, fn="workbench.agents.auditor:run_fork")
    result = sweep.run(p, runner="process", workers=2, progress=False)
    assert result.ok, result
    calls = collections.Counter(trace.read_text().splitlines())
    with Journal.open(j.path, AuditState) as again:
        files = again.root().state().done
    prefix, tail = files[:4], files[4:]
    for path in prefix:  # executed once in total, during the base run
        assert calls[f"tool read {path}"] == 1 and calls[f"model analyze {path}"] == 1
    for path in tail:  # once in the base run, once per fork
        assert calls[f"tool read {path}"] == 1 + len(budgets)
        assert calls[f"model plan {path}"] == 1 + len(budgets)
    recall = [f.metrics["recall"] for f in result.forks]
    assert recall == sorted(recall) and recall[-1] == 1.0 and recall[0] < 1.0


def test_process_runner_reports_errors_and_reruns_only_failed(base):
    j, at, _ = base
    p = sweep.plan(j, 0, at, {"sleep": [0.01, 0.02]}, fn="sweep_fns:boom")
    r = sweep.run(p, runner="process", workers=2, progress=False)
    assert [f.status for f in r.forks] == ["failed", "failed"]
    assert r.forks[0].error["ename"] == "RuntimeError" and "no luck" in r.forks[0].error["evalue"]
    assert r.forks[0].error["where"].startswith(str(Path(__file__).parent / "sweep_fns.py"))
    assert "RuntimeError: no luck" in r.forks[0].error["traceback"][-1]
    r2 = sweep.run(p, fn="sweep_fns:sleepy", runner="process", only="failed", progress=False)
    assert r2.ok


def test_worker_and_import_workbench_stay_light(base, tmp_path):
    j, at, _ = base
    out = tmp_path / "modules.json"
    p = sweep.plan(j, 0, at, {"out": [str(out)]}, fn="sweep_fns:record_modules")
    assert sweep.run(p, runner="process", progress=False).ok
    loaded = set(json.loads(out.read_text()))
    heavy = {"papermill", "altair", "nbformat", "jupyter_server", "polars", "jupyter_client"}
    assert not loaded & heavy, loaded & heavy
    code = f"import sys, workbench; print(sorted(m for m in {sorted(heavy)!r} if m in sys.modules))"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()
        == "[]"
    )


def test_a_sweep_remembers_how_it_ran_for_reruns_and_resumes(base, tmp_path):
    j, at, _ = base
    fix = tmp_path / "fixed"
    p = sweep.plan(j, 0, at, {"budget": [300, 600], "fix_file": [str(fix)]})  # no template yet
    r = sweep.run(p, notebook=FLAKY, workers=2, fork_timeout=120, progress=False)  # given to run()
    assert [f.status for f in r.forks] == ["finished", "failed"]
    (info,) = [s for s in j.sweeps() if s.id == p.id]
    assert info.how == {
        "runner": "papermill",
        "notebook": str(Path(FLAKY).resolve()),
        "fn": None,
        "workers": 2,
        "timeout": 120,
    }
    fix.touch()
    again = sweep.run(sweep.load(j, p.id), only="failed", progress=False)  # nothing repeated
    assert again.ok and again.forks[0].wall_s == r.forks[0].wall_s  # the finished one: not rerun
    assert Path(again.forks[1].notebook).exists()  # papermill ran it, with the same template
    r = lithify("--db", j.path, "--json", "sweeps")
    (doc,) = [s for s in json.loads(r.stdout) if s["id"] == p.id]
    assert doc["finished"] == 2 and doc["pending"] == 0 and doc["runner"] == "papermill"


def test_papermill_runner_keeps_executed_notebooks(base):
    j, at, _ = base
    p = sweep.plan(j, 0, at, {"budget": [300, 5000]}, notebook=TEMPLATE)
    r = sweep.run(p, runner="papermill", workers=2, progress=False)
    assert r.ok, [f.error for f in r.forks]
    for f in r.forks:
        nb = nbformat.read(f.notebook, as_version=4)
        assert Path(f.notebook).parent.name == str(p.id)
        injected = next(c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
        assert f"branch = {f.branch}" in injected.source
        assert f.metrics["budget"] == f.params["budget"]
    assert r.forks[0].metrics["recall"] <= r.forks[1].metrics["recall"] == 1.0


def test_a_failing_fork_is_reported_others_finish_and_rerun_fixes_it(base, tmp_path):
    j, at, _ = base
    fix = tmp_path / "fixed"
    p = sweep.plan(j, 0, at, {"budget": [300, 600, 5000], "fix_file": [str(fix)]}, notebook=FLAKY)
    r = sweep.run(p, runner="papermill", workers=3, progress=False)
    status = {f.params["budget"]: f for f in r.forks}
    assert status[300].status == status[5000].status == "finished"
    bad = status[600]
    assert bad.status == "failed"
    assert bad.error["ename"] == "ValueError" and "not supported" in bad.error["evalue"]
    assert bad.error["cell"] == 2  # 0 parameters, 1 injected parameters, 2 the cell that raised
    # like papermill's own error: the traceback (plain text) and the executed notebook's path
    assert any("not supported" in line for line in bad.error["traceback"])
    assert not any("\x1b[" in line for line in bad.error["traceback"])
    assert bad.error["notebook"] == bad.notebook and Path(bad.notebook).exists()
    assert "failed" in str(r)
    fix.touch()
    again = sweep.run(p, runner="papermill", only="failed", progress=False)
    assert again.ok and {f.branch for f in again.forks} == {f.branch for f in r.forks}


def test_warm_runner_resets_namespace_and_saves_notebooks_on_request(base):
    j, at, _ = base
    p = sweep.plan(j, 0, at, {"budget": [300, 1200, 5000]}, notebook=TEMPLATE)
    r = sweep.run(p, runner="warm", workers=2, progress=False)
    assert r.ok, [f.error for f in r.forks]
    assert [f.notebook for f in r.forks] == [None] * 3  # a finished fork writes no notebook
    r = sweep.run(
        p,
        runner="warm",
        workers=2,
        keep_notebooks="all",
        only=[f.branch for f in r.forks],
        progress=False,
    )
    assert r.ok, [f.error for f in r.forks]
    for f in r.forks:
        nb = nbformat.read(f.notebook, as_version=4)
        assert any(f"budget = {f.params['budget']}" in c.source for c in nb.cells)
        assert nb.cells[-1].outputs, "outputs are saved like papermill's"
    with pytest.raises(InvalidValue, match="warm runner"):
        sweep.run(p, runner="papermill", keep_notebooks="all", progress=False)


@pytest.mark.parametrize("runner", ["warm", "papermill"])
def test_a_kept_kernel_leaves_no_name_of_an_earlier_fork(tmp_path, runner):
    """One kernel runs three forks in turn: each finds none of the names the one before it
    defined (plain, underscored, an import, a function, an output), and IPython's own work."""
    from nbformat.v4 import new_code_cell

    params = new_code_cell("budget = 0")
    params.metadata["tags"] = ["parameters"]
    check = new_code_cell(
        "left = [n for n in ('leftover', '_private', 'json', 'helper') if n in dir()]\n"
        "assert not left, f'an earlier fork left {left}'\n"
        "assert not Out, f'an earlier output is kept: {Out}'\n"
        "import re as _re\n"
        "kept = [n for n in dir() if _re.fullmatch(r'_\\d+', n)] + [get_ipython().displayhook._]\n"
        "assert kept == [''], f'earlier outputs are still held: {kept}'\n"
        "leftover = _private = budget\n"
        "import json\n"
        "def helper(): return budget\n"
        "budget * 2"
    )
    template = _write_template(tmp_path / "names.ipynb", [params, check])
    with Journal.open(tmp_path / "n.db") as j:
        at = j.root().apply({"start": 1})
        p = sweep.plan(j, 0, at, {"budget": [1, 2, 3]}, notebook=str(template))
        r = sweep.run(p, runner=runner, workers=1, progress=False)
    assert r.ok, [f.error for f in r.forks]


def kernels_for(runs_dir: Path) -> list[int]:
    """Kernel or worker processes whose progress file points into this sweep's runs folder."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if str(runs_dir).encode() in env and int(pid) != os.getpid():
            found.append(int(pid))
    return found


def child_kernels() -> list[int]:
    """ipykernel processes this process started (and has not reaped)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2 :].split()[1]) == os.getpid() and b"ipykernel" in cmd:
            found.append(int(pid))
    return found


def test_parent_sigkill_mid_sweep_then_resume(base, tmp_path):
    j, at, trace = base
    p = sweep.plan(j, 0, at, {"budget": [300, 1200, 5000]}, notebook=TEMPLATE)
    runs_dir = tmp_path / "runs"
    parent = textwrap.dedent(f"""
        import os
        os.environ["AUDITOR_SLOW_MS"] = "40"
        from workbench import Journal, sweep
        from workbench.agents.auditor import AuditState
        j = Journal.open({j.path!r}, AuditState)
        sweep.run(sweep.load(j, {p.id}), runner="papermill", workers=3, progress=False,
                  out_dir={str(runs_dir)!r})
    """)
    proc = subprocess.Popen([sys.executable, "-c", parent])

    def going() -> bool:
        st = [f.status for f in sweep.status(j, p.id)]
        folder = runs_dir / str(p.id)
        prog = list(folder.glob("*.progress.json")) if folder.exists() else []
        return st.count("running") >= 2 and len(prog) >= 2

    try:
        wait_for(going, what="two forks of the sweep to be running in their kernels")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # the kernels notice their parent died and exit (a kernel that outlives it fails here)
    wait_for(lambda: not kernels_for(runs_dir), what="the kernels to exit after their parent")
    assert any(f.status != "finished" for f in sweep.status(j, p.id))
    before = trace.read_text().splitlines()
    r = sweep.resume(j, p.id, workers=3, out_dir=runs_dir, progress=False)
    assert r.ok, [f.error for f in r.forks]
    lines = trace.read_text().splitlines()
    tools = collections.Counter(x for x in lines if x.startswith("tool "))
    forks = len(p.forks)
    with Journal.open(j.path, AuditState) as again:
        tail = again.root().state().done[4:]
    extra = 0
    for (
        path
    ) in tail:  # base run + one per fork, plus at most the call each dying kernel had in flight
        n = tools[f"tool read {path}"]
        assert n >= 1 + forks, (path, n)
        extra += n - (1 + forks)
    assert extra <= forks, extra
    assert len(lines) > len(before)
    # a fork's kernel is killed as its run ends and may take a moment to die on a busy machine
    wait_for(lambda: not kernels_for(runs_dir), what="no kernel left after the resumed sweep")


def test_cancel_stops_forks_and_leaves_no_kernels(base, tmp_path, monkeypatch):
    j, at, _ = base
    monkeypatch.setenv("AUDITOR_SLOW_MS", "200")
    p = sweep.plan(j, 0, at, {"budget": [300, 1200, 5000]}, notebook=TEMPLATE)
    runs_dir = tmp_path / "runs2"
    h = sweep.start(p, runner="papermill", workers=2, out_dir=runs_dir)
    # a fork's notebook is executing in its kernel (its first progress report) when we cancel
    folder = runs_dir / str(p.id)
    wait_for(
        lambda: folder.exists() and any(folder.glob("*.progress.json")),
        what="a fork's kernel to report progress",
    )
    h.cancel()
    result = h.wait(show=False, timeout=120)
    assert {f.status for f in result.forks} <= {"cancelled", "finished"}
    assert "cancelled" in {f.status for f in result.forks}
    wait_for(lambda: not kernels_for(runs_dir), what="no kernel left after the cancel")


@pytest.mark.parametrize(
    "args, says",
    [
        (["sweep", "--at", "AT", "--budgets", "0"], "at least 1"),
        (["sweep", "--at", "AT", "--budgets", "-300"], "at least 1"),
        (["sweep", "--at", "AT", "--param", "budget=abc"], "takes int"),
        (["sweep", "--at", "AT", "--workers", "0"], "workers"),
        (["sweep", "--at", "AT", "--runner", "bogus"], "runner"),
        (["sweep", "--at", "AT", "--notebook", "JOURNAL"], "not a readable notebook"),
        (["sweep", "--at", "AT", "--notebook", "NOPARAMS"], "parameters"),
        (["sweep", "--at", "AT", "--fork-timeout", "-1"], "timeout"),
        (["sweep", "--at", "AT", "--param", "budget=300", "--param", "budget=600"], "twice"),
        (["sweep", "--at", "AT", "--param", "temperature=0.2"], "no parameter 'temperature'"),
        (["sweep", "--at", "AT", "--param", "model=bogus"], "one of 'mock', 'openai'"),
        (
            ["sweep", "--at", "AT", "--notebook", "TEMPLATE", "--param", "temperature=0.2"],
            "no parameter 'temperature'",
        ),
        (["sweep", "--at", "AT", "--notebook", "TEMPLATE", "--budgets", "0"], "at least 1"),
        (["fork", "--at", "AT", "--budget", "0"], "at least 1"),
    ],
)
def test_a_bad_sweep_or_fork_writes_nothing(base, tmp_path, capsys, args, says):
    from workbench.cli import main

    j, at, _ = base
    noparams = tmp_path / "noparams.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(nb, str(noparams))
    subst = {"AT": str(at), "JOURNAL": j.path, "NOPARAMS": str(noparams), "TEMPLATE": str(TEMPLATE)}
    before = (len(j.branches()), len(j.sweeps()), j.tail()[1])
    with pytest.raises(SystemExit) as e:
        main(["--db", j.path, *[subst.get(a, a) for a in args]])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and err.startswith("error: ")
    assert (len(j.branches()), len(j.sweeps()), j.tail()[1]) == before


@pytest.mark.parametrize("runner", ["papermill", "warm"])
def test_kernel_runners_import_what_kernels_need_before_their_threads_start(runner):
    # Two fork threads importing IPython for the first time side by side failed a fork under
    # load (KeyError: 'IPython', CPython gh-83065): the runner imports it first, in one thread.
    code = textwrap.dedent(f"""
        import sys
        from workbench.sweep.runners.papermill import PapermillRunner
        from workbench.sweep.runners.warm import WarmRunner
        if {runner!r} == "papermill":
            PapermillRunner({str(TEMPLATE)!r}, 60).close()
        else:
            WarmRunner({str(TEMPLATE)!r}, 60, workers=0).close()
        print(sorted(m for m in ("IPython", "ipykernel", "papermill") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    wanted = (
        ["IPython", "ipykernel", "papermill"] if runner == "papermill" else ["IPython", "ipykernel"]
    )
    assert out.stdout.strip() == str(wanted)


def test_a_bad_start_leaves_no_kernel_or_folder_behind(base, tmp_path, monkeypatch):
    import tempfile

    j, at, _ = base
    p = sweep.plan(j, 0, at, {"budget": [300]}, notebook=TEMPLATE)
    # a temporary folder of this test's own (other processes make lithify-kernels-* folders in
    # the shared one), and the kernels this process had before (an earlier test's may be dying)
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    kernels = set(child_kernels())
    for bad in (
        {"only": "bogus"},
        {"only": [10_000]},
        {"workers": 0},
        {"fork_timeout": -1},
        {"runner": "bogus"},
    ):
        with pytest.raises(InvalidValue):
            sweep.start(p, **{"runner": "warm", "out_dir": tmp_path / "runs", **bad})
    assert list(private.glob("lithify-kernels-*")) == []
    assert set(child_kernels()) <= kernels
    assert [f.status for f in sweep.status(j, p.id)] == ["pending"]


def test_a_sweep_that_cannot_start_says_so_on_its_forks(tmp_path):
    """No fork stays "pending" forever when its runner cannot start."""
    from workbench.errors import InvalidValue

    db = tmp_path / "nostart.db"
    with Journal.open(db) as j:
        at = j.root().apply({"x": 1})
        p = sweep.plan(j, 0, at, {"k": [1, 2]}, fn="sweep_fns:sleepy")
        with pytest.raises(InvalidValue, match="not shared between machines"):
            sweep.start(p, runner="dask", scheduler="tcp://127.0.0.1:9")
        runs = j.storage.runs(p.id)
        assert {r.status for r in runs} == {"failed"} and len(runs) == 2
        assert '"where": "start"' in (runs[0].error or "")


def test_charts_aggregate_by_max_and_last_and_follow_a_dark_theme(tmp_path):
    import polars as pl

    from workbench import charts

    df = pl.DataFrame(
        {
            "branch": [1, 2, 3, 4],
            "seq": [1, 1, 1, 1],
            "metric": ["recall"] * 4,
            "value": [0.1, 0.3, 0.5, 0.4],
            "budget": [10, 10, 20, 20],
        }
    )
    for agg, want in (("max", [0.3, 0.5]), ("last", [0.3, 0.4]), ("mean", [0.2, 0.45])):
        spec = charts.metric_vs_param(df, x="budget", y="recall", agg=agg).to_dict()
        rows = [r for r in spec["datasets"][next(iter(spec["datasets"]))] if r["_layer"] == "group"]
        assert [round(r["mean"], 6) for r in sorted(rows, key=lambda r: r["budget"])] == want
    same = charts.metric_vs_param(df, x="budget", y="recall", color="budget").to_dict()
    assert "color" not in same["layer"][1]["encoding"]  # colour = x: one line, not a crash
    dark = charts.metric_vs_param(df, x="budget", y="recall", theme="dark").to_dict()
    assert dark["config"]["background"] == "#1e1e1e"
    with pytest.raises(Exception, match="no branch has both"):
        charts.metric_vs_param(df.filter(pl.col("budget") > 100), x="budget", y="recall")


def test_a_worker_whose_coordinator_is_gone_writes_nothing(tmp_path, monkeypatch):
    """The coordinator died while the worker's interpreter was still starting (it was already
    reparented when it first looked): the worker exits before its first write, instead of
    running on beside the resumed sweep."""
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with Journal.open(tmp_path / "o.db") as j:
        j.root().apply({"x": 1})
        fork = j.root().fork_at(1)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    cmd = [
        sys.executable,
        "-m",
        "workbench.sweep.worker",
        "sweep_fns:sleepy",
        str(tmp_path / "o.db"),
        str(fork.id),
        json.dumps({"sleep": 0}),
    ]
    env = {**os.environ, "LITHIFY_SWEEP_PARENT": gone.stdout.strip()}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 70, done.stderr
    with Journal.open(tmp_path / "o.db", readonly=True) as j:
        assert j.info(fork.id).head == 1  # nothing written on the fork
    ours = {**os.environ, "LITHIFY_SWEEP_PARENT": str(os.getpid())}  # its real parent: runs
    assert subprocess.run(cmd, env=ours, timeout=60).returncode == 0
    with Journal.open(tmp_path / "o.db", readonly=True) as j:
        assert j.info(fork.id).head == 2


def _probe_template(path: Path) -> Path:
    """A template that observes what an earlier fork could have left in its kernel (a
    variable, an environment variable, the working directory) and its kernel's pid, leaves all
    three behind, and with crash=1 kills its kernel."""
    params = nbformat.v4.new_code_cell("journal = ''\nbranch = 0\ncrash = 0\nn = 0")
    params.metadata["tags"] = ["parameters"]
    body = nbformat.v4.new_code_cell(
        "import os\n"
        "from workbench import Journal\n"
        "with Journal.open(journal) as j:\n"
        "    b = j.branch(branch)\n"
        "    b.observe('pid', os.getpid())\n"
        "    b.observe('leftover', int('left_by_previous' in globals()))\n"
        "    b.observe('env_left', int('LEFT_BY_PREVIOUS' in os.environ))\n"
        "    b.observe('cwd_moved', int(os.getcwd() == '/'))\n"
        "left_by_previous = 1\n"
        "os.environ['LEFT_BY_PREVIOUS'] = '1'\n"
        "os.chdir('/')\n"
        "if crash:\n"
        "    os._exit(1)\n"
    )
    return _write_template(path, [params, body])


def _write_template(path: Path, cells: list) -> Path:
    """A notebook of these cells on the python3 kernel (papermill needs its language)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.write(nb, str(path))
    return path


def test_papermill_keeps_a_kernel_per_worker_resets_it_and_replaces_a_dead_one(tmp_path):
    template = _probe_template(tmp_path / "probe.ipynb")
    with Journal.open(tmp_path / "k.db") as j:
        j.root().apply({"x": 1})
        p = sweep.plan(j, 0, 1, {"n": [1, 2, 3], "crash": [0]}, notebook=template)
        r = sweep.run(p, runner="papermill", workers=1, progress=False)
        assert r.ok
        m = {f.branch: f.metrics for f in r.forks}
        assert len({x["pid"] for x in m.values()}) == 1  # one kernel, kept
        for x in m.values():  # and put back as it started before each fork
            assert x["leftover"] == x["env_left"] == x["cwd_moved"] == 0
        crash = sweep.plan(j, 0, 1, {"crash": [1, 0], "n": [0]}, notebook=template)
        r2 = sweep.run(crash, runner="papermill", workers=1, progress=False)
        by = {f.params["crash"]: f for f in r2.forks}
        assert by[1].status == "failed" and by[0].status == "finished"
        assert by[0].metrics["pid"] != by[1].metrics["pid"]  # a fresh kernel after the crash


def _same_anywhere(payload):
    """A payload without what names the branch it was written on (a receipt says which branch,
    and the head hash there, which chains that name)."""
    if isinstance(payload, dict) and isinstance(payload.get("receipt"), dict):
        return {**payload, "receipt": {**payload["receipt"], "branch": None, "head_hash": None}}
    return payload


def test_a_kept_kernel_gives_what_a_fresh_process_gives(base):
    """The same auditor forks through papermill's kept kernels and through the process runner
    (a fresh interpreter per fork) journal the same events (all but the wall-clock metric)."""
    j, at, _ = base
    events = {}
    for runner, kw in (
        ("papermill", {"notebook": TEMPLATE}),
        ("process", {"fn": "workbench.agents.auditor:run_fork"}),
    ):
        p = sweep.plan(j, 0, at, {"budget": [300, 1200, 5000]}, **kw)
        assert sweep.run(p, runner=runner, workers=2, progress=False).ok
        events[runner] = {
            f.params["budget"]: [
                (r.kind, _same_anywhere(r.payload))
                for r in j.branch(f.branch).history(at + 1)
                if not (r.kind == "observe" and r.payload["name"] == "wall_ms")
            ]
            for f in p.forks
        }
    assert events["papermill"] == events["process"]
    assert all(len(v) > 20 for v in events["process"].values())
