"""Adaptive sweeps on Optuna: every sampler over forks, pruning on streamed observations, the
study kept in the journal (resumed after a SIGKILL with the same outcome), several objectives,
and bad input refused before the first fork."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli import lithify

from workbench import Journal, sweep
from workbench.errors import InvalidValue, NotFound, WorkbenchError

TESTS = str(Path(__file__).parent)
SPACE = {
    "x1": sweep.Float(-5.0, 10.0),
    "x2": sweep.Float(0.0, 15.0),
    "kind": sweep.Categorical(["a", "b", "c"]),
}


@pytest.fixture
def base(tmp_path, monkeypatch):
    """A journal with one event on main to fork from; tests/ importable by workers."""
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.setenv("BRANIN_LOG", str(tmp_path / "effects.log"))
    monkeypatch.syspath_prepend(TESTS)
    with Journal.open(tmp_path / "o.db") as j:
        j.root().apply({"start": 1})
        yield j


def _rows(j: Journal) -> tuple[int, int, int]:
    return len(j.branches()), len(j.sweeps()), len(j.runs())


# -- the space and the checks (no fork runs) --------------------------------------------------


def test_a_space_is_written_in_code_or_on_the_command_line():
    parsed = sweep.space.parse(
        ["budget=int:100:6000:log", "retrieval=cat:lexical,literal,fused", "t=float:0:1:step=0.25"]
    )
    assert parsed == {
        "budget": sweep.Int(100, 6000, log=True),
        "retrieval": sweep.Categorical(["lexical", "literal", "fused"]),
        "t": sweep.Float(0.0, 1.0, step=0.25),
    }
    assert sweep.space.from_json(sweep.space.to_json(parsed)) == parsed
    assert sweep.space.grid({"t": parsed["t"]}) == {"t": [0.0, 0.25, 0.5, 0.75, 1.0]}
    assert sweep.space.parse(["k=cat:1,2,x"])["k"] == sweep.Categorical([1, 2, "x"])


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"space": {}}, "non-empty dict"),
        ({"space": {"x": sweep.Int(5, 1)}}, "inverted"),
        ({"space": {"x": sweep.Float(1.0, 1.0)}}, "empty"),
        ({"space": {"x": sweep.Float(0.0, 1.0, log=True)}}, "log scale needs a positive range"),
        ({"space": {"x": sweep.Categorical([])}}, "at least one choice"),
        ({"space": {"x": [1, 2]}}, "sweep.Int, sweep.Float or sweep.Categorical"),
        ({"space": ["x=int:1"]}, "LOW:HIGH"),
        ({"space": ["x=bool:1:2"]}, "int, float or cat"),
        ({"sampler": "annealing"}, "sampler is one of"),
        ({"pruner": "early"}, "pruner is one of"),
        ({"objectives": ["loss", "cost"], "sampler": "cmaes", "pruner": "none"}, "one objective"),
        ({"objectives": ["loss", "cost"]}, "prunes single-objective"),
        ({"objectives": ["loss", "cost"], "directions": ["minimize"], "pruner": "none"}, "need 2"),
        ({"direction": "up"}, "maximize or minimize"),
        ({"forks": 0}, "forks is how many trials"),
        ({"sampler": "grid"}, "needs a step"),
        ({"seed": -1}, "seed"),
        ({"at": 99}, "has seqs"),
        ({"runner": "dask", "scheduler": "tcp://10.0.0.1:8786"}, "SQLite file"),
    ],
)
def test_bad_input_is_refused_before_any_fork(base, kw, message):
    args = {
        "space": SPACE,
        "objective": "loss",
        "direction": "minimize",
        "forks": 3,
        "fn": "sweep_fns:branin",
        **kw,
    }
    if "objectives" in kw:
        args.pop("objective")
        args.pop("direction")
    at = args.pop("at", 1)
    before = _rows(base)
    with pytest.raises(WorkbenchError, match=message):
        sweep.start_optimize(base, at, **args)
    assert _rows(base) == before


def test_a_parameter_the_fork_does_not_take_is_refused(base):
    from workbench.params import Param, takes

    @takes(budget=Param(int, min=1, max=1000))
    def fork(journal, branch, params):  # pragma: no cover (never runs)
        pass

    import types

    mod = types.ModuleType("opt_fork_mod")
    mod.fork = fork  # type: ignore[attr-defined]
    sys.modules["opt_fork_mod"] = mod
    try:
        with pytest.raises(InvalidValue, match="budget"):
            sweep.start_optimize(
                base, 1, {"budget": sweep.Int(1, 5000)}, "loss", fn="opt_fork_mod:fork"
            )
        with pytest.raises(InvalidValue, match="temperature"):
            sweep.start_optimize(
                base, 1, {"temperature": sweep.Float(0, 1)}, "loss", fn="opt_fork_mod:fork"
            )
    finally:
        del sys.modules["opt_fork_mod"]
    assert _rows(base) == (1, 0, 0)


def test_report_outside_a_study_observes_a_learning_curve(base):
    b = base.root().fork_at(1)
    with pytest.raises(InvalidValue, match="say which metric"):
        sweep.report(b, 0.5, 1)
    sweep.report(b, 0.5, 1, metric="recall")
    sweep.report(b, 0.7, 2, metric="recall")
    observed = [r.payload for r in b.history() if r.kind == "observe"]
    assert observed == [
        {"name": "recall", "value": 0.5, "step": 1},
        {"name": "recall", "value": 0.7, "step": 2},
    ]
    with pytest.raises(InvalidValue, match="step"):
        b.observe("recall", 1.0, step=-1)


def test_a_grid_sweep_is_not_a_study(base):
    plan = sweep.plan(base, 0, 1, {"x": [1]})
    with pytest.raises(InvalidValue, match="grid sweep"):
        sweep.result(base, plan.id)
    with pytest.raises(NotFound):
        sweep.result(base, 99)


# -- running studies ----------------------------------------------------------------------


def test_an_optimize_form_starts_from_the_agents_grid_and_metric(tmp_path):
    """What the widget and the Lab's "Optimize from here…" start from: a space spanning the
    agent's default grid, its metric maximized; a journal without an agent: nothing to offer."""
    from workbench.agents.auditor import AuditState, Calls, MockModel, run, start

    with Journal.open(tmp_path / "a.db", AuditState) as j:
        start(j.root(), budget=3000)
        run(j.root(), Calls(MockModel()))
        d = sweep.study_defaults(j)
        assert (d.space, d.objective, d.direction) == (
            ("budget=int:300:4800",),
            "recall",
            "maximize",
        )
        assert d.to_json()["samplers"] == list(sweep.SAMPLERS)
        assert sweep.space.parse(list(d.space))  # the form's space is one start_optimize takes
    with Journal.open(tmp_path / "plain.db") as j:
        j.root().apply({"a": 1})
        d = sweep.study_defaults(j)
        assert (d.space, d.objective) == ((), None)


def test_a_sweeps_summary_says_its_state(base):
    """The fork tree's header: running while a fork runs; a study is finished only when it has
    all its trials, every one ended; failed or cancelled when a fork did."""
    grid = sweep.plan(base, 0, 1, {"x": [1, 2]})
    a, b = (f.branch for f in grid.forks)
    state = lambda: {s.id: s.state for s in sweep.summaries(base)}[grid.id]  # noqa: E731
    assert state() == "pending"
    base.record_run(a, grid.id, "running")
    assert state() == "running"
    base.record_run(a, grid.id, "finished")
    base.record_run(b, grid.id, "pruned")
    assert state() == "finished"
    base.record_run(b, grid.id, "failed")
    assert state() == "failed"
    base.record_run(b, grid.id, "cancelled")
    assert state() == "cancelled"
    (summary,) = sweep.summaries(base)
    assert summary.to_json()["counts"] == {"finished": 1, "cancelled": 1}
    assert (summary.kind, summary.planned, summary.forks) == ("grid", 2, 2)


@pytest.mark.slow
def test_a_study_is_finished_when_it_has_all_its_trials(base):
    handle = sweep.start_optimize(
        base,
        1,
        SPACE,
        "loss",
        "minimize",
        forks=3,
        workers=1,
        sampler="random",
        pruner="none",
        seed=0,
        fn="sweep_fns:branin",
    )
    states = set()
    while not handle.done:
        (s,) = sweep.summaries(base)
        states.add((s.forks, s.state))
        time.sleep(0.02)  # watching the states go by, not waiting for one
    handle.wait()
    (s,) = sweep.summaries(base)
    assert (s.kind, s.planned, s.forks, s.state) == ("optimize", 3, 3, "finished")
    assert not {st for forks, st in states if forks < 3} & {"finished"}, states


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["tpe", "random", "grid", "cmaes", "nsga2", "qmc"])
def test_every_sampler_runs_a_study_of_forks(base, sampler):
    space = dict(SPACE)
    if sampler == "grid":
        space = {
            "x1": sweep.Float(-5, 10, step=5.0),
            "x2": sweep.Float(0, 15, step=15.0),
            "kind": sweep.Categorical(["a", "b"]),
        }
    study = sweep.optimize(
        base,
        1,
        space,
        "loss",
        "minimize",
        forks=5,
        workers=2,
        sampler=sampler,
        pruner="none",
        seed=1,
        fn="sweep_fns:branin",
        progress=False,
    )
    assert len(study.trials) == 5 and all(t.state == "complete" for t in study.trials)
    assert study.best is not None and study.best.value == min(t.value for t in study.trials)
    params = [t.params for t in study.trials]
    assert all(-5 <= p["x1"] <= 10 and p["kind"] in ("a", "b", "c") for p in params)
    if sampler == "grid":
        assert len({json.dumps(p, sort_keys=True) for p in params}) == 5  # no point twice
    # the sweep is a sweep like any other: listed, in the matrix, each fork's run recorded
    info = next(s for s in base.sweeps() if s.id == study.sweep)
    assert info.spec["kind"] == "optimize" and len(info.branches) == 5
    assert {r.status for r in base.runs(study.sweep)} == {"finished"}
    m = base.matrix(sweep=study.sweep, metrics=["loss"])
    assert set(m["branch"].to_list()) == {t.branch for t in study.trials}
    # Optuna's own Study, rebuilt from the journal
    ostudy = sweep.study(base, study.sweep)
    assert len(ostudy.trials) == 5
    assert ostudy.best_trial.user_attrs["branch"] == study.best.branch


@pytest.mark.slow
def test_pruned_forks_are_pruned_not_failed_with_their_step(base):
    study = sweep.optimize(
        base,
        1,
        SPACE,
        "loss",
        "minimize",
        forks=12,
        workers=2,
        sampler="random",
        pruner="median",
        seed=0,
        fn="sweep_fns:branin",
        progress=False,
    )
    pruned = [t for t in study.trials if t.state == "pruned"]
    assert pruned, "the median pruner stopped nothing"
    assert all(t.values is None for t in pruned), [t.values for t in pruned]
    # a trial is stopped at a step it reported: any of the four, the last included (the
    # median pruner compares it with the trials that finished that step before it)
    assert all(t.step in (1, 2, 3, 4) for t in pruned), [t.step for t in pruned]
    runs = {f.branch: f for f in sweep.status(base, study.sweep)}
    for t in pruned:
        assert runs[t.branch].status == "pruned" and runs[t.branch].step == t.step
        assert runs[t.branch].error["ename"] == "Pruned"
    assert sweep.status(base, study.sweep) and sweep.load(base, study.sweep).forks
    # the best of the study is a complete trial, better than every other complete one
    best = study.best
    assert best.state == "complete"
    assert all(best.value <= t.value for t in study.trials if t.state == "complete")
    import optuna

    importance = optuna.importance.get_param_importances(sweep.study(base, study.sweep))
    assert set(importance) == {"x1", "x2", "kind"}


@pytest.mark.slow
def test_two_objectives_give_a_pareto_front(base):
    study = sweep.optimize(
        base,
        1,
        {"x": sweep.Float(0.0, 2.0), "y": sweep.Int(0, 3)},
        objectives=["loss", "cost"],
        directions=["minimize", "minimize"],
        forks=8,
        workers=2,
        sampler="nsga2",
        pruner="none",
        seed=2,
        fn="sweep_fns:two_costs",
        progress=False,
    )
    front = study.pareto
    assert front and len(front) <= len(study.trials)
    for t in front:  # nobody beats a front trial on both
        assert not any(
            o.values[0] <= t.values[0] and o.values[1] <= t.values[1] and o.values != t.values
            for o in study.completed
        )
    with pytest.raises(InvalidValue, match="pareto"):
        _ = study.best
    assert "pareto" in study.to_json() and len(sweep.study(base, study.sweep).best_trials) >= 1


@pytest.mark.slow
def test_a_fork_that_never_observes_the_objective_fails_saying_so(base):
    from workbench.errors import NoObjective

    with pytest.raises(NoObjective, match="'loss'"):
        sweep.optimize(
            base,
            1,
            {"x": sweep.Int(0, 3)},
            "loss",
            forks=3,
            workers=1,
            sampler="random",
            pruner="none",
            fn="sweep_fns:no_objective",
            progress=False,
        )
    study = sweep.result(base, base.sweeps()[-1].id)
    assert [t.state for t in study.trials] == ["failed"] and study.best is None  # it stopped
    errors = [f.error for f in sweep.status(base, study.sweep)]
    assert all(e["ename"] == "NoObjective" and "'loss'" in e["evalue"] for e in errors)


def _coordinator(db: Path, forks: int, seed: int) -> str:
    return (
        "import sys\n"
        f"sys.path.insert(0, {TESTS!r})\n"
        "from workbench import Journal, sweep\n"
        f"with Journal.open({str(db)!r}) as j:\n"
        "    sweep.optimize(j, 1, {'x1': sweep.Float(-5.0, 10.0), 'x2': sweep.Float(0.0, 15.0),\n"
        "                          'kind': sweep.Categorical(['a', 'b', 'c'])},\n"
        f"        'loss', 'minimize', forks={forks}, workers=1, sampler='tpe', pruner='none',\n"
        f"        seed={seed}, fn='sweep_fns:branin_counted', progress=False)\n"
    )


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.mark.slow
def test_a_killed_coordinator_resumes_to_the_same_study(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(TESTS)
    forks, seed = 7, 3
    # the uninterrupted study, in a journal of its own
    ref_db = tmp_path / "ref.db"
    monkeypatch.setenv("BRANIN_LOG", str(tmp_path / "ref.log"))
    with Journal.open(ref_db) as j:
        j.root().apply({"start": 1})
    done = subprocess.run([sys.executable, "-c", _coordinator(ref_db, forks, seed)], timeout=300)
    assert done.returncode == 0
    with Journal.open(ref_db, readonly=True) as j:
        reference = sweep.result(j, 1)
    # the same study, its coordinator SIGKILLed after three trials, then resumed
    db, log = tmp_path / "o.db", tmp_path / "effects.log"
    monkeypatch.setenv("BRANIN_LOG", str(log))
    monkeypatch.setenv("BRANIN_SLEEP", "0.3")
    with Journal.open(db) as j:
        j.root().apply({"start": 1})
    proc = subprocess.Popen([sys.executable, "-c", _coordinator(db, forks, seed)])
    try:

        def three_finished() -> bool:
            with Journal.open(db, readonly=True) as r:
                return sum(x.status == "finished" for x in r.runs()) >= 3 and any(
                    x.status == "running" for x in r.runs()
                )

        _wait(three_finished, 120, "three finished trials and one running")
        workers = _children(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        _wait(lambda: not any(Path(f"/proc/{w}").exists() for w in workers), 30, "orphans")
    finally:
        if proc.poll() is None:
            proc.kill()
    monkeypatch.setenv("BRANIN_SLEEP", "0")
    with Journal.open(db) as j:
        statuses = {r.branch: r.status for r in j.runs()}
        assert "running" in statuses.values()  # killed mid-trial
        resumed = sweep.resume_optimize(j, 1, progress=False)
        assert len(resumed.trials) == forks and len(j.sweeps()[0].branches) == forks
        assert all(t.state == "complete" for t in resumed.trials)
        again = sweep.result(j, 1)  # reopening gives the same best
    lines = log.read_text().split()
    assert len(lines) == len(set(lines)), "a committed effect ran twice"
    assert len(lines) == forks * 3
    assert [t.params for t in resumed.trials] == [t.params for t in reference.trials]
    assert (resumed.best.params, resumed.best.value) == (
        reference.best.params,
        reference.best.value,
    )
    assert again.best == resumed.best


@pytest.mark.slow
def test_progress_in_a_log_is_plain_lines_without_cursor_escapes(base):
    """stderr to a file or pipe (a log, CI): what the bars would say, as lines, no escapes."""
    common = ["--fn", "sweep_fns:branin", "--workers", "1"]
    study = lithify(
        "--db", base.path, "optimize", "--at", "1", "--space", "x1=float:-5:10",
        "--space", "x2=float:0:15", "--space", "kind=cat:a,b,c", "--objective", "loss",
        "--direction", "minimize", "--forks", "2", "--sampler", "random", "--pruner", "none",
        *common,
    )  # fmt: skip
    grid = lithify(
        "--db", base.path, "sweep", "--at", "1", "--param", "x1=1,2", "--param", "x2=3",
        "--param", "kind=a", *common,
    )  # fmt: skip
    for r, last in ((study, "study 1: 2/2 trials"), (grid, "sweep 2: 2/2 forks")):
        assert r.returncode == 0, r.stderr
        assert "\x1b[" not in r.stderr and "\r" not in r.stderr, repr(r.stderr)
        assert any(line.startswith(last) for line in r.stderr.splitlines()), r.stderr


def test_the_cli_runs_and_resumes_a_study(base, tmp_path):
    db = base.path
    args = [
        "--db",
        db,
        "--json",
        "optimize",
        "--at",
        "1",
        "--space",
        "x1=float:-5:10",
        "--space",
        "x2=float:0:15",
        "--space",
        "kind=cat:a,b,c",
        "--objective",
        "loss",
        "--direction",
        "minimize",
        "--forks",
        "3",
        "--workers",
        "2",
        "--sampler",
        "random",
        "--pruner",
        "none",
        "--seed",
        "0",
        "--fn",
        "sweep_fns:branin",
    ]
    r = lithify(*args)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert len(doc["trials"]) == 3 and doc["best"]["value"] == min(
        t["value"] for t in doc["trials"]
    )
    listed = json.loads(lithify("--db", db, "--json", "sweeps").stdout)
    assert listed[0]["kind"] == "optimize" and listed[0]["finished"] == 3
    again = lithify("--db", db, "--json", "optimize", "--resume", str(doc["sweep"]))
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["best"] == doc["best"]  # nothing left to run
    bad = lithify("--db", db, "optimize", "--at", "1", "--space", "x=int:5:1", "--objective", "l")
    assert bad.returncode == 2 and "inverted" in bad.stderr
    mixed = lithify("--db", db, "optimize", "--resume", "1", "--at", "1")
    assert mixed.returncode == 2 and "drop --at" in mixed.stderr


@pytest.mark.slow
def test_evolve_replaces_the_worst_by_forks_of_the_leaders_heads(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(TESTS)
    from tiny_agent import Tally

    with Journal.open(tmp_path / "pbt.db", Tally) as j:
        j.root().apply({"add": 0})
        study = sweep.evolve(
            j,
            1,
            {"rate": sweep.Int(1, 9)},
            "total",
            population=4,
            generations=3,
            interval=3,
            quantile=0.25,
            seed=5,
            fn="sweep_fns:climb",
            workers=2,
            progress=False,
        )
        by_branch = {t.branch: t for t in study.trials}
        gens = {t.branch: j.info(t.branch).params["generation"] for t in study.trials}
        assert sorted(gens.values()) == [0] * 4 + [1] * 4 + [2] * 4
        for t in study.trials:
            info = j.info(t.branch)
            if gens[t.branch] == 0:
                assert info.parent == 0 and info.fork_seq == 1 and t.state == "paused"
                continue
            parent = by_branch[info.parent]  # a fork of a member of the previous generation
            assert gens[info.parent] == gens[t.branch] - 1
            assert info.fork_seq == j.info(parent.branch).head  # at the parent's latest event
            if t.params["rate"] != parent.params["rate"]:  # replaced: forked from a leader
                rivals = [x for x in study.trials if gens[x.branch] == gens[info.parent]]
                assert parent.value == max(x.value for x in rivals)
        last = [t for t in study.trials if gens[t.branch] == 2]
        assert all(t.state == "complete" for t in last)
        assert all(j.branch(t.branch).state().steps.__len__() == 12 for t in last)
        assert study.best in last
