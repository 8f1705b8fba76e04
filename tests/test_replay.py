"""Replay: a fork function run again on a branch that holds its earlier writes reads them back
instead of appending them again, whatever point the first run stopped at; a rerun that writes
something else is refused before anything is written; a population member fast-forwards
through its leader's lineage. In process (a run stopped by an exception leaves exactly what a
SIGKILL leaves: its committed events); the SIGKILLed studies are in test_studies.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench import Journal, State, replay
from workbench.errors import BranchConflict, ReplayDiverged


@dataclass
class Total(State):
    state_name = "tests.replay-total/1"
    total: float = 0.0
    adds: list[float] = field(default_factory=list)

    def apply(self, delta: dict[str, Any]) -> None:
        self.total += delta["add"]
        self.adds.append(delta["add"])


class Stop(Exception):
    """Ends a run mid-way, as a kill would: what it committed stays."""


def tally(path: str, branch: int, params: dict[str, Any], ran: list[str], stop: int | None = None):
    """The docs' tally fork: five steps of an effect, a delta and a report; it never checks its
    own progress. Counts its writes and stops (raises) before write number ``stop``."""
    writes = 0

    def write() -> None:
        nonlocal writes
        if stop is not None and writes >= stop:
            raise Stop
        writes += 1

    with Journal.open(path, Total) as j:
        b = j.branch(branch)
        for step in range(5):

            def gain(step: int = step) -> float:
                ran.append(f"gain:{step}")
                return params["rate"] * (1 - params["rate"]) + step / 100

            write()
            g = b.effect(f"gain:{step}", gain)
            write()
            b.apply({"add": g})
            write()
            b.observe("total", b.state().total, step=step)
        write()
        b.observe("final", b.state().total)


def own(j: Journal, branch: int) -> list[tuple[str, Any]]:
    b = j.branch(branch)
    return [(r.kind, r.payload) for r in b.history(b.fork_seq + 1)]


@pytest.fixture
def journal(tmp_path):
    with Journal.open(tmp_path / "r.db", Total) as j:
        j.root().apply({"add": 0.0})
        yield j


def _run(j: Journal, branch: int, params: dict[str, Any], ran: list[str], stop=None, start=None):
    with replay.armed(j.location, branch, start):
        tally(j.path, branch, params, ran, stop)


def test_a_rerun_reads_back_what_the_stopped_run_wrote(journal):
    ref = journal.root().fork_at(1, params={"rate": 0.3})
    _run(journal, ref.id, {"rate": 0.3}, [])
    b = journal.root().fork_at(1, params={"rate": 0.3})
    ran: list[str] = []
    with pytest.raises(Stop):
        _run(journal, b.id, {"rate": 0.3}, ran, stop=7)
    _run(journal, b.id, {"rate": 0.3}, ran)
    assert own(journal, b.id) == own(journal, ref.id)  # the same events, once each
    assert ran == [f"gain:{i}" for i in range(5)]  # no committed effect ran again
    assert journal.branch(b.id).state().total == journal.branch(ref.id).state().total


@given(stop=st.integers(min_value=0, max_value=16), again=st.integers(min_value=0, max_value=16))
def test_any_stopping_points_end_with_the_uninterrupted_history(tmp_path_factory, stop, again):
    path = tmp_path_factory.mktemp("replay") / "p.db"
    with Journal.open(path, Total) as j:
        j.root().apply({"add": 0.0})
        ref = j.root().fork_at(1)
        _run(j, ref.id, {"rate": 0.7}, [])
        b = j.root().fork_at(1)
        ran: list[str] = []
        for point in (stop, again):  # stopped twice, at any writes, then run to its end
            try:
                _run(j, b.id, {"rate": 0.7}, ran, stop=point)
            except Stop:
                pass
        _run(j, b.id, {"rate": 0.7}, ran)
        assert own(j, b.id) == own(j, ref.id)
        assert sorted(ran) == sorted(set(ran)) and len(ran) == 5
        assert j.verify().ok


def test_what_the_function_reads_is_the_replayed_point(journal):
    b = journal.root().fork_at(1)
    _run(journal, b.id, {"rate": 0.5}, [])
    seen = []
    with replay.armed(journal.location, b.id, None), Journal.open(journal.path, Total) as j:
        h = j.branch(b.id)
        seen.append((h.head, h.state().total, len(h.history())))
        h.effect("gain:0", lambda: 1 / 0)  # read back: fn never runs
        h.apply({"add": 0.25})
        seen.append((h.head, h.state().total))
        again = j.branch(b.id)  # a second handle shares the replayed point
        seen.append((again.head, again.state().total))
    assert seen == [(1, 0.0, 1), (3, 0.25), (3, 0.25)]


def test_a_rerun_that_writes_another_delta_is_refused_and_writes_nothing(journal):
    b = journal.root().fork_at(1)
    _run(journal, b.id, {"rate": 0.5}, [])
    before = own(journal, b.id)
    with (
        replay.armed(journal.location, b.id, None),
        Journal.open(journal.path, Total) as j,
        pytest.raises(ReplayDiverged) as e,
    ):
        h = j.branch(b.id)
        h.effect("gain:0", lambda: 0.0)
        h.apply({"add": 99.0})
    assert e.value.branch == b.id and e.value.seq == 3
    assert "99" in e.value.wrote and "0.25" in e.value.recorded
    with replay.armed(journal.location, b.id, None), Journal.open(journal.path, Total) as j:
        with pytest.raises(ReplayDiverged):
            j.branch(b.id).effect("another:key", lambda: 1)  # another effect where one was
    assert own(journal, b.id) == before


def test_a_measurement_committed_once_is_not_measured_again(journal):
    b = journal.root().fork_at(1)
    b.observe("seconds", 1.5)
    with replay.armed(journal.location, b.id, None), Journal.open(journal.path, Total) as j:
        h = j.branch(b.id)
        assert h.observe("seconds", 2.75) == 2  # the recorded value stands
        h.observe("seconds", 3.0)  # past the recorded events: written
        with pytest.raises(BranchConflict):
            h.apply({"add": 1.0}, expect=2)  # expect= sees the handle's head (3)
    values = [p["value"] for k, p in own(journal, b.id) if k == "observe"]
    assert values == [1.5, 3.0]


def test_apply_many_and_compact_replay_too(journal):
    b = journal.root().fork_at(1)
    b.apply_many([{"add": 1.0}, {"add": 2.0}])
    b.compact(lambda br, s: Total(total=s.total * 10))
    before = own(journal, b.id)
    with replay.armed(journal.location, b.id, None), Journal.open(journal.path, Total) as j:
        h = j.branch(b.id)
        h.apply_many([{"add": 1.0}])  # read back
        h.apply_many([{"add": 2.0}])  # read back
        h.compact(lambda br, s: Total(total=-1.0))  # a compaction: the recorded state stands
        assert h.state().total == 30.0
        h.apply_many([{"add": 4.0}, {"add": 8.0}])  # past the recorded events: written
        assert (h.state().total, h.state().adds) == (42.0, [4.0, 8.0])
    after = own(journal, b.id)
    assert after[: len(before)] == before and len(after) == len(before) + 2


def test_a_member_forked_from_a_leader_fast_forwards_through_its_lineage(journal):
    leader = journal.root().fork_at(1, params={"rate": 0.5})
    ran: list[str] = []
    with pytest.raises(Stop):
        _run(journal, leader.id, {"rate": 0.5}, ran, stop=6)  # two steps, then paused
    head = journal.branch(leader.id).head
    member = journal.branch(leader.id).fork_at(head, params={"rate": 0.1})
    _run(journal, member.id, {"rate": 0.1}, ran, start=1)  # from the study's start
    m = journal.branch(member.id)
    assert len(own(journal, member.id)) == 3 * 3 + 1  # steps 2..4 and the final: its own
    assert m.state().adds[:3] == [0.0, 0.25, 0.26]  # the leader's steps, inherited as they were
    assert m.state().adds[3:] == [pytest.approx(0.09 + s / 100) for s in (2, 3, 4)]
    assert ran == ["gain:0", "gain:1", "gain:2", "gain:3", "gain:4"]


def test_other_branches_and_unarmed_handles_write_as_usual(journal):
    b = journal.root().fork_at(1)
    b.apply({"add": 1.0})
    other = journal.root().fork_at(1)
    with replay.armed(journal.location, b.id, None), Journal.open(journal.path, Total) as j:
        assert j.branch(other.id).apply({"add": 5.0}) == 2  # not the armed branch
        assert j.root().head == 1
    assert journal.branch(b.id).apply({"add": 2.0}) == 3  # not armed: appends at the head
