"""A sweep's coordinator seen through its journal (``workbench.sweep.watch``): it beats in the
sweep's ``how`` while it runs, so another process tells a sweep being run from one whose
coordinator ended or died; a cancel asked for in the journal reaches it (no handle needed);
a second coordinator is refused while one runs; and what a resume would do is said before it
is asked for."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import wait_for

from workbench import Journal, sweep
from workbench.errors import Conflict, NotFound
from workbench.events import SweepInfo
from workbench.sweep import watch

TESTS = str(Path(__file__).parent)


@pytest.fixture
def planned(tmp_path):
    """A journal file with a planned grid sweep of two forks (nothing runs them)."""
    with Journal.open(tmp_path / "w.db") as j:
        at = j.root().apply({"start": 1})
        yield j, sweep.plan(j, 0, at, {"x": [1, 2]}).id


def test_a_coordinator_beats_while_it_runs_and_stops_saying_so_when_it_ends(planned):
    j, sid = planned
    assert not watch.driven(watch.recorded(j, sid))
    cancelled = []
    w = watch.Watch(j, sid, lambda: cancelled.append(1))
    try:
        how = watch.recorded(j, sid)
        assert watch.driven(how)  # from the first moment
        assert how[watch.DRIVER]["pid"] == os.getpid()
        with Journal.open(j.location, readonly=True) as other:  # what another process sees
            assert watch.driven(watch.recorded(other, sid))
        # a beat older than STALE_S: the coordinator died (killed, its machine gone)
        later = how[watch.DRIVER]["beat"] + int(watch.STALE_S * 1000) + 1
        assert not watch.driven(how, now_ms=later)
    finally:
        w.stop()
    assert not watch.driven(watch.recorded(j, sid))
    assert watch.DRIVER not in watch.recorded(j, sid)
    w.stop()  # idempotent
    assert cancelled == []


def test_a_cancel_asked_for_in_the_journal_reaches_the_coordinator(planned):
    j, sid = planned
    assert watch.request_cancel(j, sid) is False  # nothing runs it: nothing to cancel
    cancelled = []
    w = watch.Watch(j, sid, lambda: cancelled.append(1))
    try:
        with Journal.open(j.location) as other:  # the Lab's server, another terminal
            assert watch.request_cancel(other, sid) is True
        w.beat()  # what its thread does every BEAT_S
        assert cancelled == [1]
        w.beat()
        assert cancelled == [1]  # once
    finally:
        w.stop()
    # a request made before a coordinator started is not for it (a resume after a cancel)
    again: list[int] = []
    w2 = watch.Watch(j, sid, lambda: again.append(1))
    try:
        w2.beat()
        assert again == []
    finally:
        w2.stop()
    with pytest.raises(NotFound, match="no sweep 99"):
        watch.request_cancel(j, 99)


def test_a_second_coordinator_is_refused_while_one_runs(planned):
    j, sid = planned
    w = watch.Watch(j, sid, lambda: None)
    try:
        with pytest.raises(Conflict, match=f"sweep {sid} is running in another process"):
            watch.check_idle(j, sid)
        with pytest.raises(Conflict, match="running in another process"):
            sweep.start(sweep.load(j, sid), fn="sweep_fns:sleepy", workers=1)
    finally:
        w.stop()
    watch.check_idle(j, sid)  # ended: a resume may run it


def _info(kind: str, branches: list[int], **spec: object) -> SweepInfo:
    return SweepInfo(1, 0, 1, {"kind": kind, **spec}, 0, branches)


def test_what_a_resume_would_do_is_known_before_it_is_asked_for():
    grid = _info("grid", [1, 2])
    assert watch.resumable(grid, {1: "finished", 2: "failed"}) is None  # reruns the failed
    assert watch.resumable(grid, {1: "finished"}) is None  # 2 never ran
    assert "every fork" in str(watch.resumable(grid, {1: "finished", 2: "finished"}))
    study = _info("optimize", [1, 2], forks=2)
    assert "every trial" in str(watch.resumable(study, {1: "finished", 2: "pruned"}))
    assert watch.resumable(study, {1: "finished", 2: "cancelled"}) is None  # runs 2 again
    assert watch.resumable(study, {1: "finished", 2: "running"}) is None  # its coordinator died
    assert watch.resumable(_info("optimize", [1], forks=2), {1: "pruned"}) is None  # one to ask
    assert "evolve --resume 1" in str(watch.resumable(_info("evolve", [1]), {1: "cancelled"}))


@pytest.mark.slow
def test_a_running_sweep_is_cancelled_from_another_process_through_the_journal(
    tmp_path, monkeypatch
):
    """A sweep run by a coordinator in this process is cancelled by a request another
    journal connection writes (as the Lab's server does for a study started in a terminal):
    its running forks stop, the others are skipped, and the journal no longer says it runs."""
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    gate = tmp_path / "gate"  # never opened: the forks wait until they are stopped
    monkeypatch.setenv("SWEEP_GATE", str(gate))
    with Journal.open(tmp_path / "c.db") as j:
        at = j.root().apply({"start": 1})
        plan = sweep.plan(j, 0, at, {"x": [1, 2, 3]})
        handle = sweep.start(plan, fn="sweep_fns:gated", workers=1, runner="process")
        try:
            wait_for(
                lambda: any(r.status == "running" for r in j.runs(plan.id)),
                what="the first fork to start",
            )
            with Journal.open(j.location) as other:
                assert watch.driven(watch.recorded(other, plan.id))
                assert watch.request_cancel(other, plan.id)
            assert handle.join(120), "the sweep did not stop after a cancel in the journal"
        finally:
            handle.cancel()
            handle.join(60)
        statuses = sorted(r.status for r in j.runs(plan.id))
        assert statuses == ["cancelled"] * 3
        assert not watch.driven(watch.recorded(j, plan.id))
        assert watch.resumable(next(s for s in j.sweeps() if s.id == plan.id), {}) is None
