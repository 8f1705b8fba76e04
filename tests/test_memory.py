"""Evidence-carrying bitemporal graph memory (``workbench.memory``): the design's example,
refusals, valid × known views, functional predicates against late-arriving facts, deterministic
compile and fusion, receipts, entity linking and analytics."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from workbench import Journal
from workbench.errors import InvalidValue
from workbench.memory import (
    ContextCompiler,
    ContextRequest,
    Memory,
    Ranking,
    configuration,
    evidence,
    fact,
    fuse,
    node,
    predicate,
    retract,
)
from workbench.memory.analytics import (
    belief_revision,
    consolidation_plan,
    drift,
    reasoning_gaps,
)
from workbench.memory.linking import Mention, link
from workbench.memory.retrieval import agreement

EV = [evidence("test", "query-accuracy-suite")]


@pytest.fixture
def mem(tmp_path: Path):
    j = Journal.open(tmp_path / "mem.db", Memory)
    yield j
    j.close()


def test_the_design_example(mem: Journal) -> None:
    b = mem.root()
    b.apply(node("task:714", "task", "Fix one-day query accuracy"))
    b.apply(node("file:query-builder", "file", "query-builder.rs"))
    b.apply(
        fact(
            "fact:714:affected",
            "task:714",
            "affects",
            "file:query-builder",
            valid_from=10,
            recorded_at=20,
            agent="agent:codex",
            session="session:714",
            evidence=EV,
        )
    )
    view = b.state().view(valid=30, known=30)
    bundle = ContextCompiler().compile(view, ContextRequest(seeds=["task:714"], budget=2000))
    assert bundle.graph.edge_count() == 1
    assert bundle.receipt.estimated_tokens <= 2000
    assert bundle.receipt.source == {"branch": 0, "seq": b.head, "head_hash": b.head_hash}
    assert "query-accuracy-suite" in bundle.text and bundle.receipt.selected_ids == [
        "fact:714:affected"
    ]
    with b.receipt(bundle.receipt):  # journaled with the call that used it
        b.effect("llm:answer", lambda: "it affects query-builder.rs")
    journaled = mem.receipt((0, b.head))
    assert "fact:714:affected" in str(journaled)
    assert b.state().view(known=15).facts() == []  # not yet recorded at 15
    assert b.state().view(valid=5).facts() == []  # not yet true at 5
    b.apply(retract("fact:714:affected", evidence=[evidence("user", "correction-1")]))
    assert b.state().view().facts() == []
    old = b.at(b.head - 1)  # time travel: the journal's own
    assert len(old.view().facts()) == 1 and old.view().source["seq"] == b.head - 1
    assert mem.verify().ok


def test_refusals_are_raised_before_anything_is_written(mem: Journal) -> None:
    b = mem.root()
    b.apply(node("a", "person", "Ada"))
    b.apply(node("city:paris", "city", "Paris"))
    with pytest.raises(InvalidValue, match="needs evidence"):
        fact("f1", "a", "lives_in", "city:paris", evidence=[])
    with pytest.raises(InvalidValue, match="not a node"):
        b.apply(fact("f1", "a", "lives_in", "city:nowhere", evidence=EV))
    b.apply(fact("f1", "a", "lives_in", "city:paris", evidence=EV, recorded_at=1))
    b.apply(fact("f2", "a", "lives_in", "city:paris", evidence=EV, supersedes="f1", recorded_at=2))
    head = b.head
    with pytest.raises(InvalidValue, match="already superseded"):
        b.apply(fact("f3", "a", "lives_in", "city:paris", evidence=EV, supersedes="f1"))
    with pytest.raises(InvalidValue, match="needs evidence"):
        retract("f2", evidence=[])
    with pytest.raises(InvalidValue, match="valid_to"):
        fact("f4", "a", "lives_in", "city:paris", evidence=EV, valid_from=5, valid_to=5)
    with pytest.raises(InvalidValue, match="timezone"):
        fact("f4", "a", "x", "city:paris", evidence=EV, recorded_at=datetime(2026, 1, 1))
    assert b.head == head and mem.root().head == head  # nothing written
    assert set(b.state().facts) == {"f1", "f2"}  # supersession keeps history


def test_a_late_arriving_earlier_fact_does_not_override_a_later_one(mem: Journal) -> None:
    b = mem.root()
    for i, label in (("ada", "Ada"), ("city:paris", "Paris"), ("city:berlin", "Berlin")):
        b.apply(node(i, "x", label))
    b.apply(predicate("lives_in", functional=True))
    # Berlin (true from 2020) is recorded first; Paris (true from 2010) arrives later
    b.apply(
        fact(
            "f:berlin",
            "ada",
            "lives_in",
            "city:berlin",
            valid_from=2020,
            recorded_at=100,
            evidence=EV,
        )
    )
    b.apply(
        fact(
            "f:paris",
            "ada",
            "lives_in",
            "city:paris",
            valid_from=2010,
            recorded_at=200,
            evidence=EV,
        )
    )
    s = b.state()
    assert s.valid_at(2025).value("ada", "lives_in") == "city:berlin"
    assert s.valid_at(2015).value("ada", "lives_in") == "city:paris"
    assert s.valid_at(2005).value("ada", "lives_in") is None
    # as known at 150 (before Paris was recorded), 2015 had no known residence
    assert s.view(valid=2015, known=150).value("ada", "lives_in") is None
    assert s.view(valid=2025, known=150).value("ada", "lives_in") == "city:berlin"
    aware = datetime(2026, 1, 1, tzinfo=UTC)
    assert s.view(valid=aware).value("ada", "lives_in") == "city:berlin"


def build_graph(b, n: int = 12) -> None:
    b.apply(node("hub", "task", "Hub task"))
    for i in range(n):
        b.apply(node(f"n{i}", "file", f"file {i} about timeouts" if i % 3 == 0 else f"file {i}"))
        b.apply(
            fact(
                f"f{i:02d}",
                "hub",
                "touches",
                f"n{i}",
                evidence=[evidence("test", f"t{i}")],
                confidence=10_000 - i * 100,
                recorded_at=i + 1,
            )
        )
    b.apply(node("far", "file", "far away"))
    b.apply(fact("f-far", "n0", "imports", "far", evidence=EV, recorded_at=50))


def test_compile_is_deterministic_and_stops_at_the_budget(mem: Journal) -> None:
    b = mem.root()
    build_graph(b)
    view = b.state().view()
    small = ContextCompiler().compile(view, ContextRequest(seeds=["hub"], budget=60))
    again = ContextCompiler().compile(b.state().view(), ContextRequest(seeds=["hub"], budget=60))
    assert small.text == again.text and small.graph.digest() == again.graph.digest()
    assert small.receipt.estimated_tokens <= 60
    reasons = {o["reason"] for o in small.receipt.omitted}
    assert reasons == {"budget"} and small.receipt.examined == 13
    big = ContextCompiler().compile(view, ContextRequest(seeds=["hub"], budget=10_000))
    assert set(small.receipt.selected_ids) < set(
        big.receipt.selected_ids
    )  # more budget, a superset
    assert big.receipt.selected_ids[-1] == "f-far"  # two hops away comes last
    shallow = ContextCompiler().compile(view, ContextRequest(seeds=["hub"], depth=1))
    assert "f-far" not in shallow.receipt.selected_ids


def test_receipt_omissions_confidence_predicate_and_scope(mem: Journal) -> None:
    b = mem.root()
    build_graph(b, 4)
    b.apply(node("secret", "file", "other repo file", repository="other"))
    b.apply(fact("f-secret", "hub", "touches", "secret", evidence=EV))
    req = ContextRequest(
        seeds=["hub"], min_confidence=9_850, predicates=["touches"], scope={"repository": "main"}
    )
    r = ContextCompiler().compile(b.state().view(), req).receipt
    assert r.excluded_by_scope == ["f-secret"]
    by_reason = {o["id"]: o["reason"] for o in r.omitted}
    assert by_reason["f-far"] == "predicate"
    assert by_reason["f02"] == "confidence" and by_reason["f03"] == "confidence"
    assert r.selected_ids == ["f00", "f01"] and r.selected == 2


def test_retrieval_and_fusion_are_deterministic(mem: Journal) -> None:
    b = mem.root()
    build_graph(b)
    view = b.state().view()
    for name in ("literal", "lexical", "hashed", "graph", "fused"):
        req = ContextRequest(
            query="timeouts file", providers=configuration(name, memory=view), budget=500
        )
        one = ContextCompiler().compile(view, req)
        again = b.state().view()
        two = ContextCompiler().compile(
            again,
            ContextRequest(
                query="timeouts file", providers=configuration(name, memory=again), budget=500
            ),
        )
        assert one.receipt.hits == two.receipt.hits and one.text == two.text, name
    fused = ContextCompiler().compile(
        view,
        ContextRequest(query="timeouts", providers=configuration("fused", memory=view), budget=500),
    )
    top = fused.receipt.hits[0]
    assert {s["provider"] for s in top["sources"]} >= {"literal", "lexical"}
    assert all(isinstance(h["score"], int) for h in fused.receipt.hits)
    ranks = fuse({"a": ("x", [("p", 3.0), ("q", 1.0)]), "b": ("y", [("q", 9.0), ("p", 1.0)])})
    assert [h.id for h in ranks] == ["p", "q"] and ranks[0].score == ranks[1].score


def test_the_same_facts_give_the_same_digest_in_two_journals(tmp_path: Path) -> None:
    digests = []
    for name in ("a.db", "b.db"):
        with Journal.open(tmp_path / name, Memory) as j:
            build_graph(j.root())
            digests.append(j.root().state().view().digest())
    assert digests[0] == digests[1]


def test_linking_reports_ambiguity_and_never_guesses(mem: Journal) -> None:
    b = mem.root()
    b.apply(node("p:ada1", "person", "Ada Lovelace", aliases=["Ada"]))
    b.apply(node("p:ada2", "person", "Ada Byron", aliases=["Ada"]))
    b.apply(node("p:alan", "person", "Alan Turing", external_ids={"wiki": "Q7251"}))
    b.apply(node("c:turing", "company", "Turing Ltd"))
    plan = link(
        [
            Mention("Ada"),  # two nodes share the alias: ambiguous
            Mention("alan turing"),  # a label, normalized
            Mention("A. M. Turing", external_id=("wiki", "Q7251")),
            Mention("Turing", kind="company"),
            Mention("Grace Hopper"),
        ],
        b.state(),
    )
    assert [m.text for m, _ in plan.ambiguous] == ["Ada"]
    assert {x.mention.text: x.node for x in plan.resolved} == {
        "alan turing": "p:alan",
        "A. M. Turing": "p:alan",
        "Turing": "c:turing",
    }
    assert [m.text for m in plan.unresolved] == ["Grace Hopper"]
    head = plan.apply(b)  # nothing to learn: every match was by id, external id or label
    assert b.state().nodes["p:alan"]["aliases"] == [] and head == b.head


def test_only_name_matches_teach_aliases(mem: Journal) -> None:
    b = mem.root()
    b.apply(node("p:1", "person", "Ada Lovelace", external_ids={"wiki": "Q7259"}))
    plan = link(
        [
            Mention("p:1", id="p:1"),  # the stable id: its text is no name of the node
            Mention("someone", external_id=("wiki", "Q7259")),  # nor is this one's
            Mention("ADA LOVELACE"),  # the label itself, normalized: nothing new
            Mention("Lovelace"),  # a name found by its words: learned
        ],
        b.state(),
    )
    assert [x.how for x in plan.resolved] == ["id", "external_id", "label", "words"]
    (upsert,) = plan.events()
    assert upsert.aliases == ["Lovelace"]
    plan.apply(b)
    assert b.state().nodes["p:1"]["aliases"] == ["Lovelace"]


def test_analytics_on_a_correction_chain(mem: Journal) -> None:
    b = mem.root()
    for i in ("ada", "c1", "c2", "c3", "x"):
        b.apply(node(i, "x", i))
    b.apply(predicate("lives_in", functional=True))
    b.apply(fact("v1", "ada", "lives_in", "c1", evidence=EV, recorded_at=1_000))
    b.apply(fact("v2", "ada", "lives_in", "c2", evidence=EV, supersedes="v1", recorded_at=2_000))
    b.apply(fact("v3", "ada", "lives_in", "c3", evidence=EV, supersedes="v2", recorded_at=3_000))
    b.apply(fact("w1", "x", "lives_in", "c1", evidence=EV, valid_from=0, recorded_at=3_500))
    b.apply(fact("w2", "x", "lives_in", "c2", evidence=EV, valid_from=5, recorded_at=3_600))
    b.apply(
        fact("d1", "ada", "decided", "c3", evidence=[evidence("model", "gen-1")], recorded_at=4_000)
    )
    b.apply(fact("dup1", "x", "knows", "ada", evidence=[evidence("doc", "a")], recorded_at=5_000))
    b.apply(fact("dup2", "x", "knows", "ada", evidence=[evidence("doc", "b")], recorded_at=5_100))
    m = b.state()
    rev = belief_revision(m)
    assert rev["corrections"] == [["v1", "v2", "v3"]]
    assert rev["competing"] == [
        {"subject": "x", "predicate": "lives_in", "objects": ["c1", "c2"], "facts": ["w1", "w2"]}
    ]
    gaps = reasoning_gaps(m)
    assert (gaps["unsupported_decisions"], gaps["single_source_inferences"]) == (["d1"], ["d1"])
    rows = drift(m, 2_000).buckets
    assert [(r["recorded"], r["corrections"]) for r in rows] == [(1, 0), (4, 2), (3, 0)]
    plan = consolidation_plan(m, recorded_at=6_000)
    b.apply_many(plan)
    knows = b.state().view().facts(subject="x", predicate="knows")
    assert len(knows) == 1 and {e["locator"] for e in knows[0]["evidence"]} == {"a", "b"}
    assert set(b.state().facts) >= {"dup1", "dup2"}  # nothing deleted
    assert mem.verify().ok


def test_review_regressions_for_the_memory_core(mem: Journal) -> None:
    from datetime import timedelta

    from workbench.memory import FactRecorded, LexicalProvider
    from workbench.memory.model import micros

    b = mem.root()
    for n in ("zS", "a0", "X", "Q", "B"):
        b.apply(node(n, "k", n, recorded_at=0))
    head = b.head
    with pytest.raises(InvalidValue, match="malformed evidence|needs evidence"):
        b.apply(FactRecorded("bad", "zS", "rel", "X", [], recorded_at=1))  # built by hand
    with pytest.raises(InvalidValue, match="confidence"):
        b.apply(FactRecorded("bad", "zS", "rel", "X", EV, recorded_at=1, confidence=99_999))
    assert b.head == head
    for fid, s, o, p in (
        ("f_SX", "zS", "X", "rel"),
        ("f_XQ", "X", "Q", "rel"),
        ("f_aX", "a0", "X", "rel"),
        ("f_aB", "a0", "B", "zebra"),
    ):
        b.apply(fact(fid, s, p, o, evidence=EV, recorded_at=1))
    view = b.state().view()
    lit = configuration("literal")
    both = ContextCompiler().compile(
        view, ContextRequest(seeds=["zS"], query="zebra", providers=lit, depth=2)
    )
    assert "f_XQ" in both.receipt.selected_ids  # two hops from the seed, whatever the query adds
    only_rel = ContextCompiler().compile(
        view, ContextRequest(seeds=["zS"], query="zebra", providers=lit, predicates=["rel"])
    )
    assert "f_aB" not in only_rel.receipt.selected_ids
    for bad in (
        {"seeds": None},
        {"seeds": ["zS"], "predicates": "rel"},
        {"seeds": ["zS"], "top_k": -1},
    ):
        with pytest.raises(InvalidValue):
            ContextCompiler().compile(view, ContextRequest(**bad))
    lex = LexicalProvider()
    assert lex.rank("apple", [("a", "apple pie"), ("b", "pear tart")])[0][0] == "a"
    assert lex.rank("apple", [("a", "pear tart"), ("b", "apple pie")])[0][0] == "b"  # no stale
    t = datetime(2026, 5, 1, 12, 0, 53, 380885, tzinfo=UTC)
    assert micros(t, "t") == micros(t - timedelta(microseconds=1), "t") + 1
    assert micros(t, "t") % 1_000_000 == 380885
    with pytest.raises(InvalidValue):
        evidence("test", "x", span=5)  # type: ignore[arg-type]
    with pytest.raises(InvalidValue):
        fuse({"a": ("x", [("p", 1.0)])}, k=0)


def test_consolidation_keeps_disjoint_intervals_apart(mem: Journal) -> None:
    b = mem.root()
    for n in ("x", "y"):
        b.apply(node(n, "k", n))
    b.apply(fact("d1", "x", "knows", "y", evidence=EV, valid_from=0, valid_to=10, recorded_at=1))
    b.apply(fact("d2", "x", "knows", "y", evidence=EV, valid_from=20, recorded_at=2))
    assert consolidation_plan(b.state(), recorded_at=3) == []  # not duplicates: different times
    b.apply(fact("d3", "x", "knows", "y", evidence=EV, valid_from=5, valid_to=20, recorded_at=3))
    plan = consolidation_plan(b.state(), recorded_at=4)
    b.apply_many(plan)
    (merged,) = b.state().view().facts(subject="x", predicate="knows")
    assert (merged["valid_from"], merged["valid_to"]) == (0, None)  # the union of all three
    assert b.state().valid_at(25).facts(subject="x") == [merged]


def test_linking_stable_ids_win_and_bad_mentions_are_refused(mem: Journal) -> None:
    b = mem.root()
    b.apply(node("p:1", "person", "Ada"))
    b.apply(node("p:2", "person", "Ada Lovelace", aliases=["Ada"]))
    plan = link([Mention("Ada", id="p:2")], b.state())
    assert [(x.node, x.how) for x in plan.resolved] == [("p:2", "id")]
    with pytest.raises(InvalidValue):
        Mention(None)  # type: ignore[arg-type]


def test_graph_build_refuses_dangling_endpoints_and_duplicate_fact_ids(mem: Journal) -> None:
    from workbench.memory import Graph

    b = mem.root()
    b.apply(node("a", "k", "A"))
    b.apply(node("c", "k", "C"))
    b.apply(fact("f1", "a", "rel", "c", evidence=EV))
    m = b.state()
    f1 = m.facts["f1"]
    assert Graph.build(m.nodes, [f1]).edge_count() == 1
    with pytest.raises(InvalidValue, match="'c' is not among the graph's nodes"):
        Graph.build({"a": m.nodes["a"]}, [f1])  # its object's node left out
    with pytest.raises(InvalidValue, match="two facts share the id 'f1'"):
        Graph.build(m.nodes, [f1, {**f1, "object": "a"}])
    with pytest.raises(InvalidValue, match="not among the graph's nodes"):
        m.view().graph([{**f1, "id": "f2", "subject": "ghost"}])


def test_a_replay_from_the_journal_is_the_live_memory_at_every_seq(tmp_path: Path) -> None:
    """Replay reads node and fact deltas straight from their stored JSON (``apply_stored``):
    every state it rebuilds equals the one the live handle had, supersession, retraction,
    predicates and every optional field included; a stored delta that is not exactly what
    ``fact()`` writes goes the slow way and fails as ``apply`` does."""
    history = [
        node("ada", "person", "Ada", aliases=["A. L."], external_ids={"crm": "7"}),
        node("paris", "city", "Paris", repository="r", branch="main", recorded_at=3),
        predicate("lives_in", functional=True),
        fact("f1", "ada", "lives_in", "paris", evidence=EV, recorded_at=4),
        fact(
            "f2",
            "ada",
            "lives_in",
            "paris",
            evidence=[evidence("doc", "d.txt", digest="x", span=[1, 9], provider="p")],
            valid_from=10,
            valid_to=20,
            observed_at=5,
            recorded_at=6,
            agent="me",
            session="s",
            confidence=5000,
            supersedes="f1",
        ),
        retract("f2", evidence=EV, recorded_at=7, agent="me"),
        node("ada", "person", "Ada Lovelace", recorded_at=8),  # an update in place
    ]
    live = {}  # the live handle's state after each event, copied as it was then
    with Journal.open(tmp_path / "m.db", Memory, snapshot_every=10**9) as j:
        b = j.root()
        for d in history:
            seq = b.apply(d)
            live[seq] = json.loads(json.dumps(b.state().to_json()))
        head = b.head
    fast = []  # the fast path is the one taken: every node and fact of the history
    keep = Memory.apply_stored

    def spy(self: Memory, stored: dict) -> bool:
        took = keep(self, stored)
        fast.append(took)
        return took

    with Journal.open(tmp_path / "m.db", Memory, snapshot_every=10**9) as j:
        Memory.apply_stored = spy  # type: ignore[method-assign]
        try:
            assert j.root().at(head).to_json() == live[head]
        finally:
            Memory.apply_stored = keep  # type: ignore[method-assign]
        assert fast.count(True) == 5 and len(fast) == 7  # a predicate and a retraction: slow
        for seq, expected in live.items():
            assert j.root().at(seq).to_json() == expected
        facts = j.root().state().facts
        assert facts["f1"]["superseded_by"] == "f2" and facts["f2"]["retracted"]["agent"] == "me"
        assert j.root().state().nodes["ada"]["aliases"] == []
        assert j.root().at(head - 1).nodes["ada"]["aliases"] == ["A. L."]
    # the same events written as plain JSON by another tool, one of them not fact()'s shape
    stored = {
        "@type": "memory.fact",
        "@v": 1,
        "id": "f3",
        "subject": "ada",
        "predicate": "p",
        "object": "paris",
        "evidence": [{"kind": "x", "locator": "y"}],
        "valid_from": None,
        "valid_to": None,
        "observed_at": None,
        "recorded_at": 9,
        "agent": None,
        "session": None,
        "confidence": 10_000,
        "supersedes": None,
    }

    @dataclass
    class Loose:  # that tool's writer: it checks nothing
        state_name = Memory.state_name

        def apply(self, d: object) -> None:
            pass

    with Journal.open(tmp_path / "m.db", Loose, snapshot_every=10**9) as other:
        other.root().apply(stored)  # exactly fact()'s shape: read like any other
        other.root().apply({**stored, "id": "f4", "evidence": [{"kind": "x"}]})  # no locator
    with Journal.open(tmp_path / "m.db", Memory, snapshot_every=10**9) as j:
        assert "f3" in j.root().at(head + 1).facts
        with pytest.raises(InvalidValue, match="not an evidence record"):
            j.root().at(head + 2)


def test_word_matches_rank_every_candidate_by_the_documented_score() -> None:
    """The linker's word match, counted over set postings in C, ranks exactly as the score its
    module documents, computed name by name: over random catalogs large enough that common
    words are left out of the candidate pool, with kinds, scopes and every limit."""
    import random

    from workbench.memory.linking import Linker, normalize

    vocab = ["ann", "bob", "smith", "jones", "co", "ltd", "river", "Åsa", "d'arc", "the", "big"]

    def expected(linker: Linker, spelled: dict, m: Mention, limit: int | None) -> list:
        """The documented score, name by name (``spelled``: each node's names' word sets)."""
        nodes = linker.nodes
        mention = set(normalize(m.text).split())
        words = mention | set(normalize(m.hint or "").split())
        holders = {
            w: {i for i, sets in spelled.items() if any(w in ws for ws in sets)} for w in words
        }
        known = sorted((len(h), w) for w, h in holders.items() if h)
        cap = max(50, len(nodes) // 100)
        chosen = [w for c, w in known if c <= cap] or [w for _, w in known[:1]]
        scored = []
        for i in set().union(*(holders[w] for w in chosen)):
            if m.kind is not None and nodes[i]["kind"] != m.kind:
                continue
            if m.scope and any(
                nodes[i]["scope"].get(k) not in (None, v) for k, v in m.scope.items()
            ):
                continue
            best = 0.0
            for ws in spelled[i]:
                if mention & ws:
                    best = max(best, len(mention & ws) * (1.0 + len(words & ws) / len(ws)))
            if best:
                scored.append((-best, i))
        scored.sort()
        share = 0.4 / max(len(mention), 1)
        return [(i, round(-share * s, 6), "words") for s, i in scored[:limit]]

    def names(n: dict) -> list[str]:
        return [n["label"], *n["aliases"]]

    for seed in range(40):
        rng = random.Random(seed)
        size = rng.randint(1, 40) if seed % 2 else rng.randint(150, 400)
        catalog = {}
        for k in range(size):
            label = " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 3)))
            catalog[f"n{k}"] = {
                "id": f"n{k}",
                "kind": rng.choice(["a", "b"]),
                "label": label + rng.choice(["", f" r{rng.randint(0, 30)}"]),
                "aliases": [rng.choice(vocab) + " " + rng.choice(vocab)] * rng.randint(0, 2),
                "external_ids": {},
                "scope": rng.choice([{}, {"repository": "r"}, {"repository": "s"}]),
                "recorded_at": 0,
            }
        linker = Linker(catalog)
        spelled = {i: [set(normalize(x).split()) for x in names(n)] for i, n in catalog.items()}
        for _ in range(15):
            text = " ".join(rng.choice([*vocab, f"r{rng.randint(0, 30)}"]) for _ in range(2))
            m = Mention(
                text,
                kind=rng.choice([None, "a"]),
                hint=rng.choice([None, f"{rng.choice(vocab)} r{rng.randint(0, 30)}"]),
                scope=rng.choice([None, {"repository": "r"}]),
            )
            if linker.candidates(m, 1) and linker.candidates(m, 1)[0][2] != "words":
                continue  # a label or alias match: not this test's path
            for limit in (None, 0, 1, 5):
                assert linker.candidates(m, limit) == expected(linker, spelled, m, limit), (
                    seed,
                    m,
                )


def test_our_bm25_index_gives_the_scores_bm25s_gives() -> None:
    """The lexical and graph providers' BM25 index is built with whole-array operations:
    every word's score in every document holding it is the float32 value ``bm25s`` computes
    (its default Lucene variant), over random corpora with empty, short and long documents."""
    import random

    import bm25s

    from workbench.memory.bm25 import _bm25_of

    def table(index: object) -> dict:
        s, out = index.scores, {}  # type: ignore[attr-defined]
        for w, t in index.vocab_dict.items():  # type: ignore[attr-defined]
            if w:  # bm25s adds an empty word of its own
                a, b = int(s["indptr"][t]), int(s["indptr"][t + 1])
                out[w] = (s["indices"][a:b].tolist(), s["data"][a:b].tolist())
        return out

    vocab = [f"w{i}" for i in range(300)]
    for seed in range(60):
        rng = random.Random(seed)
        top = rng.randint(1, 300)
        tokens = [
            [rng.choice(vocab[:top]) for _ in range(rng.choice([0, 1, 2, 5, 30]))]
            for _ in range(rng.randint(1, 80))
        ]
        ours = _bm25_of(tokens)
        theirs = bm25s.BM25()
        theirs.index([t or ["_"] for t in tokens], show_progress=False)
        assert table(ours) == table(theirs), seed
        assert ours.scores["num_docs"] == theirs.scores["num_docs"] == len(tokens)


def test_a_memory_subclass_with_its_own_apply_replays_through_it(tmp_path: Path) -> None:
    """Replay's fast path belongs to Memory's own ``apply``: a subclass that overrides
    ``apply`` (and inherits ``apply_stored``) has every stored delta go through its ``apply``,
    so the state read back is the one it built live."""

    class Counting(Memory):
        state_name = "test.counting-memory/1"

        def apply(self, d: object) -> None:
            super().apply(d)
            self.predicates["applied"] = {"n": self.predicates.get("applied", {"n": 0})["n"] + 1}

    with Journal.open(tmp_path / "c.db", Counting, snapshot_every=10**9) as j:
        b = j.root()
        b.apply(node("a", "k", "A", recorded_at=1))
        b.apply(node("b", "k", "B", recorded_at=1))
        b.apply(fact("f", "a", "p", "b", evidence=EV, recorded_at=2))
        assert b.state().predicates["applied"] == {"n": 3}
    with Journal.open(tmp_path / "c.db", Counting, snapshot_every=10**9) as j:
        assert j.root().state().predicates["applied"] == {"n": 3}


def _notes(b, n: int = 60) -> None:
    """``n`` facts that all mention timeouts, each in other words (so each ranks)."""
    b.apply(node("svc", "service", "the api service"))
    for i in range(n):
        b.apply(node(f"note{i}", "note", f"timeout seen {i} times in module m{i} " + "x" * (i % 7)))
        b.apply(fact(f"t{i:02d}", "svc", "noted", f"note{i}", evidence=EV, recorded_at=i + 1))


@pytest.mark.parametrize("name", ["lexical", "graph", "graph+lexical"])
def test_the_candidates_follow_the_budget_and_the_receipt_says_why_it_stopped(
    mem: Journal, name: str
) -> None:
    b = mem.root()
    _notes(b)
    view = b.state().view()
    providers = configuration(name, memory=view)

    def compile_at(budget: int, **kw):
        request = ContextRequest(query="timeout", providers=providers, budget=budget, depth=0, **kw)
        return ContextCompiler().compile(view, request).receipt

    small, large, everything = compile_at(300), compile_at(1_500), compile_at(100_000)
    assert small.selected < large.selected < everything.selected == 60  # not 10 hits at most
    assert set(small.selected_ids) < set(large.selected_ids) < set(everything.selected_ids)
    assert large.estimated_tokens > 1_500 - 40  # the budget is used, not a tenth of it
    assert small.stopped == large.stopped == "budget"
    assert everything.stopped == "candidates exhausted" and everything.estimated_tokens < 100_000
    capped = compile_at(100_000, top_k=5)  # an explicit cap still caps, and says so
    assert capped.selected == 5 and capped.stopped == "top_k"
    assert everything.to_json()["stopped"] == "candidates exhausted"


def test_a_walk_from_the_hits_still_follows_the_budget(mem: Journal) -> None:
    b = mem.root()
    _notes(b, 40)
    for i in range(40):  # each note leads one hop further to a file
        b.apply(node(f"file{i}", "file", f"m{i}.py"))
        b.apply(fact(f"in{i:02d}", f"note{i}", "in", f"file{i}", evidence=EV, recorded_at=99))
    view = b.state().view()
    lex = configuration("lexical", memory=view)
    sizes = []
    for budget in (200, 800, 3_200, 100_000):
        request = ContextRequest(query="timeout", providers=lex, budget=budget, depth=2)
        sizes.append(ContextCompiler().compile(view, request).receipt)
    assert [r.selected for r in sizes] == sorted(r.selected for r in sizes)
    assert all(
        set(a.selected_ids) <= set(c.selected_ids) for a, c in zip(sizes, sizes[1:], strict=False)
    )
    assert sizes[-1].selected == 80 and sizes[-1].stopped == "candidates exhausted"


class Fixed:
    """A provider that ranks by a fixed table of scores (for fusion tests)."""

    channel = "fixed"

    def __init__(self, name: str, scores: dict[str, float]) -> None:
        self.name = name
        self.scores = scores

    def rank(self, query: str, docs, limit: int | None = None) -> list[tuple[str, float]]:
        got = sorted(
            ((i, self.scores[i]) for i, _ in docs if self.scores.get(i, 0) > 0),
            key=lambda x: (-x[1], x[0]),
        )
        return got if limit is None else got[:limit]


def test_a_fusion_is_led_by_its_first_provider_and_never_reorders_what_it_gave() -> None:
    docs = [(f"d{i}", f"doc {i}") for i in range(1, 9)]
    lead = Fixed("lead", {"d1": 1.0, "d2": 0.9, "d3": 0.5, "d4": 0.2, "d5": 0.3, "d6": 0.1})
    # disagrees with the leader's head: its best (d8, d7) come after the leader's
    other = Fixed("other", {"d8": 9.0, "d7": 8.0, "d6": 1.0})
    fused = [h.id for h in Ranking([lead, other], "q", docs).first(8)]
    assert fused[:6] == ["d1", "d2", "d3", "d5", "d4", "d6"] and set(fused[6:]) == {"d7", "d8"}
    # agrees with the leader's head: its confident hits come in beside the leader's; hits it
    # scores equally (d5, d4: by id, d4 first) come in the leader's order (d5 first)
    ally = Fixed("ally", {"d1": 4.0, "d2": 4.0, "d3": 3.9, "d4": 3.8, "d5": 3.8, "d7": 3.8})
    both = Ranking([lead, ally], "q", docs)
    order = [h.id for h in both.first(7)]
    assert order.index("d5") < order.index("d4") and order.index("d7") < order.index("d6")
    assert [h.id for h in Ranking([lead, ally], "q", docs).first(3)] == order[:3]  # a prefix
    assert both.hits[0].sources[0][:3] == ("lead", "fixed", 1) and not both.has_more(7)
    assert agreement(["a", "b"], ["a", "b"]) == 1.0 and agreement(["a", "b"], ["b", "a"]) == 0.5
    assert agreement(["a"], []) == 0.0
