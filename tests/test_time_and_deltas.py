"""Time queries (as_of, valid_at) and evolving deltas with upcasters."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from dataclasses import FrozenInstanceError, dataclass, field
from datetime import UTC, datetime

import pytest

from workbench import InvalidValue, Journal, NotFound, State


@dataclass
class Facts(State):
    facts: list[str] = field(default_factory=list)

    def apply(self, delta) -> None:
        self.facts.append(
            delta["fact"] if isinstance(delta, dict) else f"{delta.text} ({delta.source})"
        )


def test_as_of_is_the_state_known_at_a_wall_clock_time(db_path):
    now = [1_750_000_000_000]  # the journal's clock (unix ms), moved by the test

    def tick(ms: int) -> int:
        now[0] += ms
        return now[0]

    with Journal.open(db_path, Facts, clock=lambda: now[0]) as j:
        b = j.root()
        b.apply({"fact": "a"})
        t1 = tick(20)
        tick(20)
        b.apply({"fact": "b"})
        assert b.as_of(t1).facts == ["a"]
        assert b.as_of(t1 - 21).facts == []  # before "a" was recorded
        assert b.as_of(datetime.fromtimestamp(now[0] / 1000, UTC)).facts == ["a", "b"]
        assert b.as_of(0).facts == []
        assert b.as_of(t1 / 1000).facts == ["a"]  # seconds, as time.time() gives
        fork = b.fork_at(1)
        t2 = tick(20)
        fork.apply({"fact": "c"})
        assert fork.as_of(t2).facts == ["a", "c"]  # recorded at that very ms: known by then
        assert fork.as_of(t2 - 1).facts == ["a"]
        with pytest.raises(InvalidValue):
            b.as_of("yesterday")


def test_valid_at_uses_occurred_at_world_time(db_path):
    with Journal.open(db_path, Facts) as j:
        b = j.root()
        b.apply({"fact": "moved to Paris"}, occurred_at=datetime(2020, 1, 1, tzinfo=UTC))
        b.apply({"fact": "moved to Rome"}, occurred_at=datetime(2024, 1, 1, tzinfo=UTC))
        b.apply({"fact": "born"}, occurred_at=datetime(1990, 1, 1, tzinfo=UTC))  # learned late
        assert b.valid_at(datetime(2021, 6, 1)).facts == ["born", "moved to Paris"]  # world order
        assert b.valid_at(datetime(1995, 1, 1)).facts == ["born"]
        assert b.state().facts == ["moved to Paris", "moved to Rome", "born"]
        assert j.verify().ok


V1 = """
from dataclasses import dataclass, field
from workbench import Journal, State
from workbench.deltas import delta

@delta("fact.noted", version=1)
@dataclass
class Noted:
    text: str

@dataclass
class Facts(State):  # the same class as the test's Facts, in its v1 days
    facts: list = field(default_factory=list)
    def apply(self, d):
        self.facts.append(d.text)

with Journal.open({path!r}, Facts) as j:
    j.root().apply(Noted("old style"))
    print(j.root().head_hash)
"""


@pytest.mark.slow  # v1's code lives in another process
def test_a_v1_journal_replays_after_the_code_moves_to_v2(db_path):
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(V1.format(path=str(db_path)))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    from workbench.deltas import delta, upcaster

    @delta("fact.noted", version=2)
    @dataclass
    class Noted:
        text: str
        source: str

    with Journal.open(db_path, Facts) as j:
        with pytest.raises(NotFound, match="upcaster"):
            j.root().state()

    @upcaster("fact.noted", 1)
    def add_source(payload: dict) -> dict:
        return {**payload, "source": "legacy"}

    with Journal.open(db_path, Facts) as j:
        b = j.root()
        assert b.state().facts == ["old style (legacy)"]
        assert b.head_hash == out  # hashes are those of the stored bytes
        b.apply(Noted("new style", "user"))
        assert b.at(2).facts == ["old style (legacy)", "new style (user)"]
        assert b.history(2, 2)[0].payload == {
            "@type": "fact.noted",
            "@v": 2,
            "text": "new style",
            "source": "user",
        }
        assert j.verify().ok


def test_a_plain_delta_replays_the_same_as_its_constructor_builds_it():
    from workbench import deltas

    @deltas.delta("test.plain-note", plain=True)
    @dataclass(frozen=True)
    class Note:
        text: str
        tags: list[str] = field(default_factory=list)

    stored = deltas.encode(Note("hi", ["a"]))
    back = deltas.decode(stored)
    assert back == Note("hi", ["a"]) and type(back) is Note
    with pytest.raises(FrozenInstanceError):
        back.text = "changed"  # type: ignore[misc]  # still frozen
    # a stored delta without every field goes through the constructor (its defaults) ...
    assert deltas.decode({"@type": "test.plain-note", "@v": 1, "text": "x"}) == Note("x", [])
    # ... and one with a field the class lacks gets the constructor's refusal
    with pytest.raises(InvalidValue, match="does not fit Note"):
        deltas.decode({"@type": "test.plain-note", "@v": 1, "text": "x", "tags": [], "z": 1})

    with pytest.raises(InvalidValue, match="__post_init__"):

        @deltas.delta("test.plain-checked", plain=True)
        @dataclass
        class Checked:
            n: int

            def __post_init__(self) -> None:
                assert self.n >= 0
