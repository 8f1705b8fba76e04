"""Sweeps on a real Dask cluster (a LocalCluster of 2 worker processes): forks as tasks writing
to the journal, on SQLite (LocalCluster only) and PostgreSQL, a worker killed mid-sweep, a
cancel, a failed fork, a killed coordinator resumed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from importlib.util import find_spec
from pathlib import Path

import pytest
from conftest import wait_for

from workbench import Journal, sweep
from workbench.errors import InvalidValue

# Found, not imported: importing distributed costs ~1 s, and collecting this module (the fast
# loop does, to deselect it) should not pay it.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(find_spec("distributed") is None, reason="the dask extra is not installed"),
]
TESTS = str(Path(__file__).parent)


def with_tests_on_path() -> str:
    """PYTHONPATH with tests/ first (where the fork functions live), and no empty entry (an
    empty entry is the working directory: a child would find the repository's metadata)."""
    return os.pathsep.join(p for p in (TESTS, os.environ.get("PYTHONPATH", "")) if p)


@pytest.fixture(scope="module")
def cluster():
    import distributed

    # the workers are processes started now: they take this environment (restored after)
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = with_tests_on_path()
    try:
        c = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=40,
        )
        client = distributed.Client(c)
        yield client
        client.close()
        c.close()
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def base(path: str) -> int:
    with Journal.open(path) as j:
        return j.root().apply({"start": 1})


def test_a_dask_sweep_on_sqlite_runs_every_fork(cluster, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    at = base(db)
    with Journal.open(db) as j:
        log = tmp_path / "log.txt"
        s = sweep.plan(j, base=0, at=at, grid={"x": [1, 2, 3, 4], "log": [str(log)]})
        result = sweep.run(s, fn="sweep_fns:counted", runner="dask", scheduler=cluster)
        assert result.ok, result
        m = j.matrix()
        assert sorted(m.filter(m["metric"] == "score")["value"].to_list()) == [2, 4, 6, 8]
        assert {r.runner for r in j.storage.runs(s.id)} == {"dask"}
        assert len(log.read_text().splitlines()) == 20  # each effect ran once


def test_a_sqlite_journal_refuses_a_remote_scheduler(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    at = base(db)
    with Journal.open(db) as j:
        s = sweep.plan(j, base=0, at=at, grid={"x": [1]})
        with pytest.raises(InvalidValue, match="not shared between machines"):
            sweep.run(s, fn="sweep_fns:counted", runner="dask", scheduler="tcp://10.0.0.1:8786")
        runs = j.storage.runs(s.id)  # nothing ran; the forks say why instead of staying pending
        assert {r.status for r in runs} == {"failed"} and '"where": "start"' in (
            runs[0].error or ""
        )


def test_failed_and_cancelled_forks_keep_their_error(cluster, tmp_path: Path) -> None:
    db = str(tmp_path / "f.db")
    at = base(db)
    with Journal.open(db) as j:
        s = sweep.plan(j, base=0, at=at, grid={"x": [1, 2]})
        result = sweep.run(s, fn="sweep_fns:boom", runner="dask", scheduler=cluster)
        assert not result.ok
        errors = [r.error for r in j.storage.runs(s.id)]
        assert all(e is not None and "no luck" in e for e in errors)
        # forks that would sleep for an hour, both running on the workers before the cancel
        started = tmp_path / "started"
        started.mkdir()
        grid = {"sleep": [3600], "started": [str(started)], "x": [1, 2]}
        slow = sweep.plan(j, base=0, at=at, grid=grid)
        h = sweep.start(slow, fn="sweep_fns:sleepy", runner="dask", scheduler=cluster)
        wait_for(lambda: len(list(started.iterdir())) == 2, what="both forks to be running")
        h.cancel()
        h.wait(timeout=120, show=False)
        assert {r.status for r in j.storage.runs(slow.id)} == {"cancelled"}
        # the running tasks were stopped, not waited for: each worker is free for a new task
        for worker in cluster.scheduler_info()["workers"]:
            assert cluster.submit(os.getpid, workers=[worker], pure=False).result(timeout=120)


def test_a_killed_worker_s_fork_is_retried_on_postgresql(cluster, pg, pg_db, tmp_path) -> None:
    url = pg.url(pg_db, journal=f"d_{uuid.uuid4().hex[:10]}")
    at = base(url)
    log = tmp_path / "log.txt"
    with Journal.open(url) as j:
        grid = {"x": [1, 2, 3, 4], "log": [str(log)], "sleep": [0.5]}
        s = sweep.plan(j, base=0, at=at, grid=grid)
        h = sweep.start(s, fn="sweep_fns:counted", runner="dask", scheduler=cluster, workers=2)
        # a fork is mid-way (an effect committed, four to go) when a worker dies
        wait_for(lambda: log.exists() and log.read_text().count("\n") >= 1, what="a fork's effect")
        pids = cluster.run(os.getpid)
        os.kill(next(iter(pids.values())), signal.SIGKILL)  # a worker dies mid-fork
        result = h.wait(timeout=180, show=False)
        assert result.ok, [r.error for r in j.storage.runs(s.id)]
        m = j.matrix()
        assert sorted(m.filter(m["metric"] == "score")["value"].to_list()) == [2, 4, 6, 8]
        lines = log.read_text().splitlines()
        # every effect committed once; only one cut short by the kill may have run twice
        assert set(lines) == {f"{f.branch}:{k}" for f in s.forks for k in range(5)}
        assert len(lines) - len(set(lines)) <= 2
        assert j.verify().ok


COORDINATOR = """
import sys
from workbench import Journal, sweep
url, at, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with Journal.open(url) as j:
    s = sweep.plan(j, base=0, at=at, grid={"x": [1, 2, 3, 4, 5, 6], "log": [log],
                   "sleep": [0.4]})
    print(s.id, flush=True)
    sweep.run(s, fn="sweep_fns:counted", runner="dask", workers=2, progress=False)
"""


def test_a_killed_coordinator_is_resumed(
    pg, pg_db, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", with_tests_on_path())  # for the resumed sweep's cluster
    url = pg.url(pg_db, journal=f"c_{uuid.uuid4().hex[:10]}")
    at = base(url)
    log = tmp_path / "log.txt"
    env = {**os.environ, "PYTHONPATH": with_tests_on_path()}
    proc = subprocess.Popen(
        [sys.executable, "-c", COORDINATOR, url, str(at), str(log)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    assert proc.stdout is not None
    sweep_id = int(proc.stdout.readline())
    wait_for(
        lambda: log.exists() and len(log.read_text().splitlines()) >= 6,
        what="six effects of the sweep",
    )
    os.killpg(proc.pid, signal.SIGKILL)  # the coordinator and its LocalCluster
    proc.communicate()
    with Journal.open(url) as j:
        assert any(r.status != "finished" for r in j.storage.runs(sweep_id))
        result = sweep.resume(j, sweep_id, progress=False)
        assert result.ok
        assert {r.status for r in j.storage.runs(sweep_id)} == {"finished"}
        m = j.matrix()
        assert len(m.filter(m["metric"] == "score")) == 6
        assert j.verify().ok


def test_async_forks_run_many_at_once_in_each_dask_workers_pool(
    tmp_path: Path, monkeypatch
) -> None:
    """concurrency=4: the runner's LocalCluster gives its worker 4 threads and the worker's pool
    runs 4 async forks at once in one process (one journal connection), not one at a time."""
    monkeypatch.setenv("PYTHONPATH", with_tests_on_path())
    monkeypatch.syspath_prepend(TESTS)
    from tiny_agent import Tally

    db = str(tmp_path / "c.db")
    with Journal.open(db, Tally) as j:
        at = j.root().apply({"add": 0})
        s = sweep.plan(j, 0, at, {"n": [1, 2, 3, 4]})
        result = sweep.run(
            s,
            fn="pool_fns:calls",
            runner="dask",
            workers=1,
            concurrency=4,
            progress=False,
        )
        assert result.ok, [f.error for f in result.forks]
        spans = [(f.metrics["started"], f.metrics["ended"]) for f in result.forks]
        assert all(f.metrics["total"] == 10.0 for f in result.forks)
        other = sweep.plan(j, 0, at, {"n": [5]})
        with pytest.raises(InvalidValue, match="pool and dask"):
            sweep.run(other, fn="pool_fns:calls", runner="process", concurrency=2, progress=False)
    overlapping = max(sum(a <= t < b for a, b in spans) for t, _ in spans)
    assert overlapping >= 2, spans  # one at a time would never overlap


def test_each_dask_worker_keeps_one_warm_pool_process(cluster, tmp_path: Path) -> None:
    """The pool plugin is registered (distributed refuses duck-typed plugins, and then every
    fork started a process of its own): a Dask worker's forks share one pool process."""
    db = str(tmp_path / "w.db")
    at = base(db)
    with Journal.open(db) as j:
        s = sweep.plan(j, 0, at, {"n": list(range(6))})
        result = sweep.run(s, fn="pool_fns:whoami", runner="dask", scheduler=cluster)
        assert result.ok, [f.error for f in result.forks]
        pids = {f.metrics["pid"] for f in result.forks}
        assert len(pids) <= 2  # two Dask workers: at most two pool processes
        assert max(f.metrics["forks_here"] for f in result.forks) >= 3  # each ran several


def test_a_dask_worker_waits_once_per_sweep_for_its_cancel(cluster) -> None:
    """The worker plugin keeps one wait on a sweep's cancel Event, however many of its forks
    run there (a wait per fork kept a call open on the scheduler per task): the cancel stops
    every one of them at once, and a fork that starts after it is stopped as it starts."""
    import threading

    import distributed

    from workbench.sweep.runners.dask_plugin import WorkerPools

    plugin, name = WorkerPools(), f"lithify-cancel-test-{uuid.uuid4().hex}"
    stopped: list[int] = []
    forgets = [
        plugin.watch(name, cluster, lambda i=i: stopped.append(i), wait_s=0.5) for i in range(3)
    ]
    assert [t.name for t in threading.enumerate()].count(name) == 1
    forgets[2]()  # that fork ended before the cancel
    time.sleep(1.2)  # a few waits time out while forks run: still one, still watching
    assert [t.name for t in threading.enumerate()].count(name) == 1
    distributed.Event(name, client=cluster).set()
    wait_for(lambda: sorted(stopped) == [0, 1], what="the running forks stopped")
    late: list[int] = []
    plugin.watch(name, cluster, lambda: late.append(1), wait_s=0.5)
    assert late == [1]
    wait_for(lambda: name not in [t.name for t in threading.enumerate()], what="the wait ended")
