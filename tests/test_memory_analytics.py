"""Graph memory analytics (``workbench.memory.analytics``), each on a hand-built history with
the answer worked out by hand: belief revision and its downstream confidence cascade, the five
kinds of reasoning gaps, drift as immutable per-belief timelines with correction rates, and
consolidation with orphan review and a revision checkpoint, never deleting."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from workbench import Journal
from workbench.errors import InvalidValue
from workbench.memory import Memory, evidence, fact, node, retract
from workbench.memory.analytics import (
    belief_revision,
    consolidate,
    drift,
    effective_confidence,
    orphans,
    reasoning_gaps,
    revise,
)

TEST = [evidence("test", "integration-suite")]


def inferred_from(*facts: str) -> list[dict]:
    return [evidence("inference", f) for f in facts]


@pytest.fixture
def mem(tmp_path: Path):
    j = Journal.open(tmp_path / "mem.db", Memory)
    yield j
    j.close()


def build_dependencies(b) -> None:
    """t1 (a test) supports i1 (an inference) which supports the decision d1; i2 rests on t1
    and on t3 (a model's claim at 60%); x1 rests on i1 but also on a document."""
    for n in ("svc", "pg", "sqlite", "psycopg", "pool", "high", "wiki"):
        b.apply(node(n, "thing", n, recorded_at=0))
    b.apply(fact("t1", "svc", "uses", "pg", evidence=TEST, recorded_at=1))
    b.apply(
        fact(
            "t3",
            "svc",
            "load",
            "high",
            evidence=[evidence("model", "gen-7")],
            confidence=6000,
            recorded_at=1,
        )
    )
    b.apply(
        fact(
            "i1",
            "svc",
            "needs",
            "psycopg",
            evidence=inferred_from("t1"),
            confidence=9000,
            recorded_at=2,
        )
    )
    b.apply(
        fact(
            "i2",
            "svc",
            "needs",
            "pool",
            evidence=inferred_from("t1", "t3"),
            confidence=9000,
            recorded_at=2,
        )
    )
    b.apply(
        fact(
            "d1",
            "svc",
            "decided",
            "psycopg",
            evidence=inferred_from("i1"),
            confidence=8000,
            recorded_at=3,
        )
    )
    b.apply(
        fact(
            "x1",
            "svc",
            "documented_in",
            "wiki",
            evidence=[*inferred_from("i1"), evidence("doc", "wiki/svc")],
            recorded_at=3,
        )
    )


def test_a_revision_cascades_to_everything_that_rests_on_it(mem: Journal) -> None:
    b = mem.root()
    build_dependencies(b)
    m = b.state()
    assert effective_confidence(m) == {
        "d1": 8000,
        "i1": 9000,
        "i2": 9000,
        "t1": 10_000,
        "t3": 6000,
        "x1": 10_000,
    }
    assert belief_revision(m)["cascade"] == []

    # corrected without the cascade: the report shows what now rests on nothing
    fork = b.fork()
    fork.apply(fact("t1b", "svc", "uses", "sqlite", evidence=TEST, supersedes="t1", recorded_at=10))
    assert belief_revision(fork.state())["cascade"] == [
        {"fact": "d1", "confidence": 8000, "effective": 0, "lost": []},
        {"fact": "i1", "confidence": 9000, "effective": 0, "lost": ["t1"]},
        {"fact": "i2", "confidence": 9000, "effective": 6000, "lost": ["t1"]},
    ]

    # corrected with revise: the correction, then each downstream fact re-recorded
    deltas = revise(m, "t1", object="sqlite", evidence=TEST, recorded_at=10)
    assert [(d.supersedes, d.object, d.confidence) for d in deltas] == [
        ("t1", "sqlite", 10_000),
        ("i1", "psycopg", 0),  # rested on t1 alone
        ("i2", "pool", 6000),  # still rests on t3 (60%)
        ("d1", "psycopg", 0),  # rested on i1
    ]  # x1 has a document of its own: untouched
    assert all(d.evidence[-1] == evidence("revision", deltas[0].id) for d in deltas[1:])
    i2b = deltas[2].id
    b.apply_many(deltas)
    after = b.state()
    rev = belief_revision(after)
    assert rev["cascade"] == []  # the recorded confidences now are the effective ones
    assert [c[0] for c in rev["corrections"]] == ["d1", "i1", "i2", "t1"]
    assert after.view().value("svc", "uses") == "sqlite"
    assert effective_confidence(after)["x1"] == 10_000
    with pytest.raises(InvalidValue, match="already superseded"):
        revise(after, "t1", retract=True, evidence=TEST, recorded_at=11)

    # a retraction cascades the same way: i2's last support goes
    deltas = revise(after, "t3", retract=True, evidence=[evidence("user", "wrong")], recorded_at=12)
    assert type(deltas[0]).__name__ == "FactRetracted"
    assert [(d.supersedes, d.confidence) for d in deltas[1:]] == [(i2b, 0)]
    b.apply_many(deltas)
    assert mem.verify().ok


def test_reasoning_gaps_of_all_five_kinds(mem: Journal) -> None:
    b = mem.root()
    for n in ("ada", "c1", "c2", "c3", "c4", "bob", "x", "y", "z"):
        b.apply(node(n, "thing", n, recorded_at=0))
    model = [evidence("model", "gen-1")]
    b.apply(fact("d1", "ada", "decided", "c1", evidence=model, recorded_at=1000))
    b.apply(
        fact(
            "s1",
            "bob",
            "likes",
            "x",
            evidence=[evidence("llm", "chat-3")],
            confidence=3000,
            recorded_at=1000,
        )
    )
    b.apply(fact("s2", "bob", "likes", "y", evidence=[*TEST], confidence=4000, recorded_at=1000))
    b.apply(fact("w1", "bob", "visits", "z", evidence=inferred_from("s1", "s2"), recorded_at=1000))
    b.apply(fact("old", "ada", "knows", "bob", evidence=TEST, observed_at=100, recorded_at=1000))
    b.apply(fact("l1", "ada", "lives_in", "c1", evidence=TEST, recorded_at=1000))
    for i, (obj, prev) in enumerate((("c2", "l1"), ("c3", "l2"), ("c4", "l3")), start=2):
        b.apply(
            fact(
                f"l{i}",
                "ada",
                "lives_in",
                obj,
                evidence=TEST,
                supersedes=prev,
                recorded_at=1000 + i,
            )
        )
    b.apply(fact("e1", "bob", "works_at", "c1", evidence=TEST, recorded_at=1000))
    b.apply(fact("e2", "bob", "works_at", "c2", evidence=TEST, supersedes="e1", recorded_at=1001))
    b.apply(fact("e3", "bob", "works_at", "c1", evidence=TEST, supersedes="e2", recorded_at=1002))
    gaps = reasoning_gaps(b.state(), now=1010, max_age=500)
    assert gaps == {
        "unsupported_decisions": ["d1"],
        "single_source_inferences": ["d1", "s1"],
        "weak_foundations": ["w1"],  # its best support is 40%
        "stale_evidence": ["old"],  # observed at 100, more than 500 before 1010
        "unstable_revision_chains": [
            ["e1", "e2", "e3"],  # back to c1 after leaving it
            ["l1", "l2", "l3", "l4"],  # three revisions
        ],
    }
    assert reasoning_gaps(b.state(), now=1010, max_age=500, unstable_after=4)[
        "unstable_revision_chains"
    ] == [["e1", "e2", "e3"]]


def test_drift_is_an_immutable_timeline_per_belief_with_correction_rates(mem: Journal) -> None:
    b = mem.root()
    for n in ("ada", "c1", "c2", "c3", "x", "y"):
        b.apply(node(n, "thing", n, recorded_at=0))
    b.apply(fact("v1", "ada", "lives_in", "c1", evidence=TEST, valid_from=5, recorded_at=1000))
    b.apply(fact("v2", "ada", "lives_in", "c2", evidence=TEST, supersedes="v1", recorded_at=2000))
    b.apply(fact("v3", "ada", "lives_in", "c3", evidence=TEST, supersedes="v2", recorded_at=3000))
    b.apply(fact("f1", "x", "likes", "y", evidence=TEST, confidence=7000, recorded_at=1500))
    b.apply(retract("f1", evidence=[evidence("user", "no")], recorded_at=2500))
    d = drift(b.state(), bucket=2000)
    ada = d.timeline("ada", "lives_in")
    assert ada is not None
    assert [(v.fact, v.object, v.recorded_at, v.ended_at, v.ended_by) for v in ada.versions] == [
        ("v1", "c1", 1000, 2000, "v2"),
        ("v2", "c2", 2000, 3000, "v3"),
        ("v3", "c3", 3000, None, None),
    ]
    assert ada.versions[0].valid_from == 5 and ada.corrections == 2
    assert ada.correction_rate == pytest.approx(2 / 3)
    likes = d.timeline("x", "likes")
    assert likes is not None and [
        (v.ended_by, v.ended_at, v.confidence) for v in likes.versions
    ] == [("retracted", 2500, 7000)]
    assert d.correction_rate == pytest.approx(3 / 4)
    assert d.by_predicate == (("likes", 1.0), ("lives_in", pytest.approx(2 / 3)))
    assert [(r["bucket_start"], r["recorded"], r["corrections"]) for r in d.buckets] == [
        (0, 2, 0),  # v1 and f1 recorded
        (2000, 2, 3),  # v2 and v3 recorded; v1, f1 and v2 corrected
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ada.corrections = 0  # type: ignore[misc]
    b.apply(fact("v4", "ada", "lives_in", "c1", evidence=TEST, supersedes="v3", recorded_at=4000))
    assert len(ada.versions) == 3 and ada.versions[-1].ended_by is None  # a value, not a view
    assert drift(b.state()).timeline("ada", "lives_in").versions[-2].ended_by == "v4"  # type: ignore[union-attr]


def test_consolidation_folds_duplicates_reviews_orphans_and_checkpoints(mem: Journal) -> None:
    b = mem.root()
    for n in ("a", "b", "c", "lonely"):
        b.apply(node(n, "thing", n, recorded_at=0))
    b.apply(fact("dup1", "a", "knows", "b", evidence=[evidence("doc", "p1")], recorded_at=1))
    b.apply(fact("dup2", "a", "knows", "b", evidence=[evidence("doc", "p2")], recorded_at=2))
    b.apply(fact("f3", "a", "likes", "c", evidence=TEST, recorded_at=3))
    b.apply(retract("f3", evidence=[evidence("user", "no")], recorded_at=4))
    before = b.head
    assert [o["node"] for o in orphans(b.state())] == ["c", "lonely"]
    report = consolidate(b, recorded_at=5)
    assert report["checkpoint"] == {"label": f"memory-checkpoint-{before}", "seq": before}
    assert report["folded"] == ["dup1", "dup2"] and len(report["created"]) == 1
    assert report["orphans"] == [
        {"node": "c", "kind": "thing", "label": "c", "facts": ["f3"], "since": 4},
        {"node": "lonely", "kind": "thing", "label": "lonely", "facts": [], "since": None},
    ]
    assert report["head"] == b.head == before + 2
    (knows,) = b.state().view().facts(subject="a", predicate="knows")
    assert {e["locator"] for e in knows["evidence"]} == {"p1", "p2"}
    then = b.at(report["checkpoint"]["label"])  # the memory before, by its label
    assert {f["id"] for f in then.view().facts()} == {"dup1", "dup2"}
    assert set(b.state().facts) >= {"dup1", "dup2", "f3"}  # nothing deleted
    assert set(b.state().nodes) == {"a", "b", "c", "lonely"}
    again = consolidate(b, recorded_at=6, label="second")
    assert again["folded"] == [] and again["head"] == b.head
    assert mem.verify().ok
