"""The pool runner: workers that import the fork function once and run fork after fork, crash
isolation (a fork that ends its worker fails alone and the worker is replaced), cancels that
reach a running fork at once, no orphan after the coordinator's SIGKILL, recycling after
``max_forks_per_worker``, async forks many at a time per worker, and the warm caches: the same
states and effect results as a cold read."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import wait_for

from workbench import Journal, sweep
from workbench.errors import InvalidValue

TESTS = str(Path(__file__).parent)


@pytest.fixture
def tally(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(TESTS)
    from tiny_agent import Tally

    with Journal.open(tmp_path / "p.db", Tally) as j:
        j.root().apply({"add": 0})
        yield j


def _metrics(j: Journal, sweep_id: int) -> dict[int, dict[str, float]]:
    return {f.branch: f.metrics for f in sweep.status(j, sweep_id)}


@pytest.mark.slow
def test_workers_import_the_function_once_and_keep_their_module_state(tally, tmp_path, monkeypatch):
    imports = tmp_path / "imports.log"
    monkeypatch.setenv("POOL_IMPORTS", str(imports))
    p = sweep.plan(tally, 0, 1, {"sleep": [0.05] * 8}, fn="pool_fns:whoami")
    result = sweep.run(p, runner="pool", workers=2, progress=False)
    assert result.ok
    metrics = _metrics(tally, p.id)
    pids = {m["pid"] for m in metrics.values()}
    assert 1 <= len(pids) <= 2  # fork after fork in the same processes
    imported = [int(x) for x in imports.read_text().split() if int(x) != os.getpid()]
    assert sorted(imported) == sorted(int(p) for p in pids)  # once per worker
    per_worker = {
        pid: sorted(m["forks_here"] for m in metrics.values() if m["pid"] == pid) for pid in pids
    }
    assert all(counts == list(range(1, len(counts) + 1)) for counts in per_worker.values())
    # recycled after two forks each: four workers for eight forks, one at a time
    p2 = sweep.plan(tally, 0, 1, {"sleep": [0.0] * 8}, fn="pool_fns:whoami")
    assert sweep.run(p2, runner="pool", workers=1, max_forks_per_worker=2, progress=False).ok
    metrics = _metrics(tally, p2.id)
    assert len({m["pid"] for m in metrics.values()}) == 4
    assert max(m["forks_here"] for m in metrics.values()) == 2
    assert next(s for s in tally.sweeps() if s.id == p2.id).how["max_forks_per_worker"] == 2


@pytest.mark.slow
def test_a_fork_that_ends_its_worker_fails_alone_and_the_worker_is_replaced(tally):
    hows = ["fine", "exit", "fine", "segv", "memory", "fine"]
    p = sweep.plan(tally, 0, 1, {"how": hows}, fn="pool_fns:crash")
    result = sweep.run(p, runner="pool", workers=2, progress=False)
    by_how = {f.params["how"]: f for f in result.forks}
    assert [f.status for f in result.forks if f.params["how"] == "fine"] == ["finished"] * 3
    assert by_how["exit"].status == "failed" and by_how["exit"].error["ename"] == "WorkerError"
    assert "code 3" in by_how["exit"].error["evalue"]
    segv = by_how["segv"].error
    assert by_how["segv"].status == "failed" and segv["ename"] == "Killed"
    assert segv["signal"] == signal.SIGSEGV and "SIGSEGV" in segv["evalue"]
    memory = by_how["memory"].error
    assert memory["ename"] == "MemoryError" and "no more room" in memory["evalue"]


@pytest.mark.slow
def test_a_cancel_reaches_a_running_fork_at_once(tally):
    p = sweep.plan(tally, 0, 1, {"how": ["sleep", "sleep"]}, fn="pool_fns:crash")
    handle = sweep.start(p, runner="pool", workers=2)
    wait_for(
        lambda: all(s == "running" for s, _, _ in handle.progress().values()),
        what="both forks running",
    )
    handle.cancel()
    # each fork would sleep 120 s: ending well before says the cancel stopped them
    wait_for(lambda: handle.done, what="the cancelled sweep to end", timeout=30)
    assert {f.status for f in sweep.status(tally, p.id)} == {"cancelled"}


@pytest.mark.slow
def test_no_worker_outlives_a_sigkilled_coordinator(tally, tmp_path):
    script = (
        "import sys, time\n"
        f"sys.path.insert(0, {TESTS!r})\n"
        "from workbench import Journal, sweep\n"
        f"j = Journal.open({tally.path!r})\n"
        "p = sweep.plan(j, 0, 1, {'how': ['sleep', 'sleep']}, fn='pool_fns:crash')\n"
        "h = sweep.start(p, runner='pool', workers=2)\n"
        "time.sleep(600)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:

        def workers() -> list[int]:
            out = []
            for status in Path("/proc").glob("[0-9]*/cmdline"):
                try:
                    cmd = status.read_text()
                except OSError:
                    continue
                if "workbench.poolworker" in cmd:
                    try:
                        ppid = int(Path(status.parent, "stat").read_text().split()[3])
                    except (OSError, ValueError, IndexError):
                        continue
                    if ppid == proc.pid:
                        out.append(int(status.parent.name))
            return out

        mine = wait_for(lambda: len(workers()) == 2 and workers(), what="two pool workers")
        wait_for(
            lambda: (
                sum(r.status == "running" for r in Journal.open(tally.path, readonly=True).runs())
                == 2
            ),
            what="both forks running",
        )
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        wait_for(
            lambda: not any(_alive(pid) for pid in mine),
            what="the workers to exit with their coordinator",
            timeout=30,
        )
    finally:
        if proc.poll() is None:
            proc.kill()


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.slow
def test_async_forks_run_many_at_once_per_worker(tally, tmp_path, monkeypatch):
    monkeypatch.setenv("POOL_CALLS", str(tmp_path / "calls.log"))
    p = sweep.plan(tally, 0, 1, {"delay": [0.3] * 12}, fn="pool_fns:calls")
    result = sweep.run(p, runner="pool", workers=2, concurrency=6, progress=False)
    assert result.ok
    spans = [(m["started"], m["ended"]) for m in _metrics(tally, p.id).values()]
    overlap = max(sum(a <= t < b for a, b in spans) for t, _ in spans)
    assert overlap > 2  # more forks at once than workers: they wait on their calls together
    assert all(m["total"] == 10 for m in _metrics(tally, p.id).values())  # ten calls of 1
    lines = (tmp_path / "calls.log").read_text().split()
    assert len(lines) == len(set(lines)) == 12 * 10
    with pytest.raises(InvalidValue, match="not the process runner"):
        sweep.run(p, runner="process", concurrency=4, progress=False)


@pytest.mark.slow
def test_a_sigkilled_sweep_of_async_forks_resumes_without_running_a_call_twice(tally, tmp_path):
    calls = tmp_path / "calls.log"
    env = {**os.environ, "POOL_CALLS": str(calls), "PYTHONPATH": TESTS}
    script = (
        "import sys\n"
        f"sys.path.insert(0, {TESTS!r})\n"
        "from workbench import Journal, sweep\n"
        f"j = Journal.open({tally.path!r})\n"
        "p = sweep.plan(j, 0, 1, {'delay': [0.2] * 10}, fn='pool_fns:calls')\n"
        "sweep.run(p, runner='pool', workers=2, concurrency=4, progress=False)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        wait_for(
            lambda: calls.exists() and len(calls.read_text().split()) >= 30,
            what="thirty calls made",
        )
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    before = calls.read_text().split()
    assert len(before) < 100  # killed mid-way
    committed = {
        f"{b.id}:{r.payload['key'].split(':')[1]}"
        for b in tally.branches()
        for r in tally.branch(b.id).history(2)
        if b.id and r.kind == "effect"
    }
    assert committed and committed <= set(before)
    os.environ["POOL_CALLS"] = str(calls)
    try:
        result = sweep.resume(tally, 1, progress=False)
    finally:
        del os.environ["POOL_CALLS"]
    assert result.ok
    again = calls.read_text().split()[len(before) :]
    assert not committed & set(again)  # no committed call ran again
    assert set(before) | set(again) == {f"{b}:{i}" for b in range(1, 11) for i in range(10)}
    for f in result.forks:
        own = tally.branch(f.branch).history(2)
        assert [r.kind for r in own].count("effect") == 10  # once each, not appended again


def test_the_warm_cache_gives_what_a_cold_read_gives(tally, tmp_path):
    """In a pool worker the fork points' states and inherited effects come from the cache:
    the same values as a journal opened cold, and copies a fork may change freely."""
    from tiny_agent import Tally

    from workbench import opening

    main = tally.root()
    for i in range(300):
        main.apply({"add": main.effect(f"draw:{i}", lambda i=i: [i, {"n": i}])[0]})
    forks = [main.fork() for _ in range(3)]
    cold = [tally.branch(f.id).state().total for f in forks]
    saved = opening._kept
    try:
        opening.keep_journals_open()
        warm = Journal.open(tally.path, Tally)
        assert Journal.open(tally.path, Tally) is warm  # the same open journal
        for f in forks:
            b = warm.branch(f.id)
            assert b.state().total == cold[0]
            b.apply({"add": 1})  # a fork changes its own copy
            result = b.effect("draw:7", lambda: None)
            assert result == [7, {"n": 7}]
            result[1]["n"] = -1  # nor does changing a result change the next fork's
        assert warm.warm.hits >= 4
        assert [warm.branch(f.id).state().total for f in forks] == [c + 1 for c in cold]
        warm.close()  # only flushed: the next fork gets it open
        assert warm.branch(forks[0].id).head == forks[0].head + 1
    finally:
        opening._kept = saved
        if saved is None:
            warm._keep = False
            warm.close()
    assert json.loads(json.dumps(cold)) == cold
    time.sleep(0)


@pytest.mark.slow
def test_the_auditors_async_forks_give_the_same_results_many_at_once(tmp_path, monkeypatch):
    """The bundled auditor's fork function is async: a worker runs several forks while their
    model calls wait, and each fork ends as it does run alone."""
    from workbench.agents.auditor import (
        AuditState,
        Calls,
        MockModel,
        fork_seq_after_files,
        run,
        start,
    )

    monkeypatch.setenv("AUDITOR_SLOW_MS", "20")
    with Journal.open(tmp_path / "a.db", AuditState) as j:
        start(j.root(), None, 3000, 4)
        run(j.root(), Calls(MockModel(), slow_ms=0))
        at = fork_seq_after_files(j.root(), 1)
        grid = {"budget": [300, 600, 1200, 2400]}
        fn = "workbench.agents.auditor:run_fork"
        alone = sweep.run(sweep.plan(j, 0, at, grid, fn=fn), workers=1, progress=False)
        together = sweep.run(
            sweep.plan(j, 0, at, grid, fn=fn), workers=1, concurrency=4, progress=False
        )
        assert alone.ok and together.ok
        for a, b in zip(alone.forks, together.forks, strict=True):
            keep = ("recall", "precision", "compactions", "model_calls")
            assert {k: a.metrics[k] for k in keep} == {k: b.metrics[k] for k in keep}


def _pids(j: Journal, plan_id: int) -> set[int]:
    return {int(m["pid"]) for m in _metrics(j, plan_id).values()}


def _open_files(pid: int) -> list[str]:
    folder = Path(f"/proc/{pid}/fd")
    out = []
    for fd in folder.iterdir():
        try:
            out.append(os.readlink(fd))
        except OSError:
            pass
    return out


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="reads /proc")
def test_idle_workers_stay_warm_for_the_next_sweep_of_the_same_function(
    tally, tmp_path, monkeypatch
):
    """Workers a sweep ends with wait for the next sweep of the same function (no new
    interpreter, no new imports), holding no journal file meanwhile; an edited module, another
    environment or $LITHIFY_POOL_KEEP_S=0 gets new workers, and idle ones end after the
    keep time."""
    from workbench.sweep.runners import pool

    monkeypatch.setenv("LITHIFY_POOL_KEEP_S", "30")

    def run(fn: str = "pool_fns:pid_fork") -> set[int]:
        p = sweep.plan(tally, 0, 1, {"n": [1, 2, 3, 4]}, fn=fn)
        assert sweep.run(p, runner="pool", workers=2, progress=False).ok
        return _pids(tally, p.id)

    first = run()
    kept = [w for ws in pool._parked.values() for _, w in ws]
    assert {w.proc.pid for w in kept} == first
    path = str(Path(tally.path).resolve())
    for pid in first:  # parked: no handle on the journal (it may be moved or replaced)
        assert not [f for f in _open_files(pid) if f.startswith(path)], _open_files(pid)
    assert run() == first  # the same processes serve the next sweep
    monkeypatch.setenv("POOL_OTHER", "1")  # another environment: other workers
    second = run()
    assert not second & first
    # an edited module: other workers (a kept one imported the old code)
    mod = tmp_path / "keptfns.py"
    dep = tmp_path / "keptdep.py"
    dep.write_text("VALUE = 1\n")
    mod.write_text(
        "import os\nimport keptdep\n"
        "def fork(journal, branch, params):\n    return {'pid': os.getpid()}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", f"{tmp_path}{os.pathsep}{os.environ['PYTHONPATH']}")
    before = run("keptfns:fork")
    assert run("keptfns:fork") == before
    mod.write_text(mod.read_text() + "# edited\n")
    edited = run("keptfns:fork")
    assert not edited & before
    assert run("keptfns:fork") == edited
    dep.write_text("VALUE = 2  # a module the function imports, edited: other workers too\n")
    assert not run("keptfns:fork") & edited
    monkeypatch.setenv("LITHIFY_POOL_KEEP_S", "0")  # kept no more: each sweep its own
    a, b = run(), run()
    assert not a & b
    monkeypatch.setenv("LITHIFY_POOL_KEEP_S", "0.5")
    last = run()
    wait_for(
        lambda: all(not Path(f"/proc/{pid}").exists() or _zombie(pid) for pid in last),
        what="idle kept workers to end after the keep time",
        timeout=60,
    )
    pool.close_kept_workers()


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return True
