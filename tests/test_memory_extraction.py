"""Extraction into graph memory (``workbench.memory.extraction``): every refusal raised before
anything is written, deterministic ids across runs, one atomic append, provenance that round
trips through the journal, the rule provider's spans on any text, and the model provider
journaled (a rerun never asks the model again)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import blake3
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench import Journal
from workbench.agents.auditor import OpenAIModel
from workbench.errors import Conflict, InvalidValue
from workbench.events import key_hash
from workbench.memory import (
    AutoExtractionEngine,
    EntityMention,
    Extraction,
    Memory,
    ModelProvider,
    RelationCandidate,
    RuleProvider,
    node,
)
from workbench.memory.extraction import check_extraction

TEXT = "Ada Lovelace was a mathematician. Zoë Ångström is the maintainer of `query-builder.rs`."


class Fixed:
    """A provider that returns what the test gives it."""

    deterministic = True

    def __init__(self, extraction: Extraction, name: str = "fixed") -> None:
        self.name = name
        self.extraction = extraction

    def extract(self, text: str, key: str) -> Extraction:
        return self.extraction


def span_of(text: str, words: str) -> tuple[int, int]:
    start = len(text[: text.index(words)].encode())
    return start, start + len(words.encode())


def engine(*providers) -> AutoExtractionEngine:
    return AutoExtractionEngine([RuleProvider(), *providers])


@pytest.fixture
def mem(tmp_path: Path):
    j = Journal.open(tmp_path / "mem.db", Memory)
    yield j
    j.close()


def test_rules_extract_and_apply_with_provenance_that_round_trips(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    with Journal.open(db, Memory) as j:
        b = j.root()
        plan = engine().plan(
            b,
            TEXT,
            provider="rules",
            locator="notes/team.md",
            agent="agent:codex",
            session="session:9",
            recorded_at=1_000,
        )
        assert plan.ambiguous == [] and not plan.links  # an empty memory: every entity is new
        assert {u["text"] for u in plan.unresolved} >= {"Ada Lovelace", "Zoë Ångström"}
        head = plan.apply(b)
        assert head == b.head == len(plan.events())
    with Journal.open(db, Memory, readonly=True) as j:  # read back from the file
        m = j.root().state()
        data = TEXT.encode()
        (was,) = [f for f in m.facts.values() if f["predicate"] == "was"]
        assert m.nodes[was["subject"]]["label"] == "Ada Lovelace"
        assert m.nodes[was["object"]]["label"] == "mathematician"
        (ev,) = was["evidence"]
        assert ev == {
            "kind": "document",
            "locator": "notes/team.md",
            "digest": blake3.blake3(data).hexdigest(),
            "span": list(span_of(TEXT, "Ada Lovelace was a mathematician")),
            "provider": "rules",
        }
        start, end = ev["span"]
        assert data[start:end].decode() == "Ada Lovelace was a mathematician"
        assert (was["agent"], was["session"], was["confidence"]) == (
            "agent:codex",
            "session:9",
            6000,
        )
        (lead,) = [f for f in m.facts.values() if f["predicate"] == "is"]
        s, e = lead["evidence"][0]["span"]
        assert data[s:e].decode().startswith("Zoë Ångström is the maintainer")  # bytes, not chars
        assert j.verify().ok


def test_ids_are_the_same_in_every_run_and_a_second_run_adds_nothing(tmp_path: Path) -> None:
    plans = []
    for name in ("a.db", "b.db"):
        with Journal.open(tmp_path / name, Memory) as j:
            b = j.root()
            b.apply(node("p:ada", "person", "Ada Lovelace", recorded_at=1))
            plan = engine().plan(b, TEXT, provider="rules", locator="n.md", recorded_at=5)
            plans.append(plan.to_json())
            plan.apply(b)
            again = engine().plan(b, TEXT, provider="rules", locator="n.md", recorded_at=9)
            assert (
                again.facts == []
                and again.nodes == []
                and sorted(again.skipped) == sorted(f.id for f in plan.facts)
            )
            head = b.head
            assert again.apply(b) == head  # nothing to write
    assert plans[0] == plans[1]
    assert plans[0]["links"][0]["node"] == "p:ada"  # linked by its label, not created
    new_ids = plans[0]["nodes"]
    assert all(i.startswith(("entity:", "concept:", "code:")) for i in new_ids)


@pytest.mark.parametrize(
    ("extraction", "message"),
    [
        (  # a span past the end of the text
            Extraction("fixed", [EntityMention("a", "Ada", "person", (0, 999))]),
            "not \\[start, end\\)",
        ),
        (  # a span that ends inside the two bytes of "ë"
            Extraction("fixed", [EntityMention("a", "Zoë", "person", (17, 20))]),
            "cuts a UTF-8 character",
        ),
        (  # a span that covers other words than the mention's
            Extraction("fixed", [EntityMention("a", "Ada", "person", (4, 12))]),
            "covers 'Lovelace'",
        ),
        (  # an interval that ends before it starts
            Extraction(
                "fixed",
                [EntityMention("a", "Ada", "person"), EntityMention("b", "maths", "topic")],
                [RelationCandidate("a", "studied", "b", valid_from=20, valid_to=10)],
            ),
            "ends \\(10\\) before it starts \\(20\\)",
        ),
        (  # a relation to a mention that is not there
            Extraction(
                "fixed",
                [EntityMention("a", "Ada", "person")],
                [RelationCandidate("a", "knows", "ghost")],
            ),
            "'ghost' is not one of the extraction's mentions",
        ),
        (  # two mentions under one key
            Extraction(
                "fixed", [EntityMention("a", "Ada", "person"), EntityMention("a", "Zoë", "person")]
            ),
            "share the key",
        ),
        (  # a malformed stable id
            Extraction("fixed", [EntityMention("a", "Ada", "person", id=" p:1")]),
            "stable id",
        ),
        (  # a confidence out of range
            Extraction("fixed", [EntityMention("a", "Ada", "person", confidence=10_001)]),
            "basis points",
        ),
        (  # a provider that names another provider in what it returns
            Extraction("rules", [EntityMention("a", "Ada", "person")]),
            "says it comes from 'rules'",
        ),
    ],
)
def test_refusals_are_raised_before_anything_is_written(
    mem: Journal, extraction: Extraction, message: str
) -> None:
    b = mem.root()
    b.apply(node("p:ada", "person", "Ada Lovelace", recorded_at=1))
    head = b.head
    text = "Ada Lovelace and Zoë"
    with pytest.raises(InvalidValue, match=message):
        engine(Fixed(extraction)).plan(b, text, provider="fixed", locator="t")
    assert b.head == head


def test_an_unknown_provider_is_refused(mem: Journal) -> None:
    b = mem.root()
    with pytest.raises(InvalidValue, match="unknown extraction provider 'gpt'; this engine has"):
        engine().plan(b, TEXT, provider="gpt", locator="t")
    with pytest.raises(InvalidValue, match="not an extraction provider"):
        AutoExtractionEngine([object()])  # type: ignore[list-item]
    assert b.head == 0


def test_ambiguity_is_reported_and_refused_until_a_reviewer_chooses(mem: Journal) -> None:
    b = mem.root()
    b.apply(node("p:ada1", "person", "Ada Lovelace", aliases=["Ada"], recorded_at=1))
    b.apply(node("p:ada2", "person", "Ada Byron", aliases=["Ada"], recorded_at=1))
    text = "Ada wrote the Notes."
    found = Extraction(
        "fixed",
        [
            EntityMention("a", "Ada", "person", span_of(text, "Ada")),
            EntityMention("n", "Notes", "work", span_of(text, "Notes")),
        ],
        [RelationCandidate("a", "wrote", "n", confidence=7000)],
    )
    plan = engine(Fixed(found)).plan(b, text, provider="fixed", locator="t", recorded_at=3)
    assert [(a["key"], [c for c, _ in a["candidates"]]) for a in plan.ambiguous] == [
        ("a", ["p:ada1", "p:ada2"])
    ]
    assert [u["text"] for u in plan.unresolved] == ["Notes"]
    assert plan.facts == []  # an ambiguous endpoint: no fact yet
    head = b.head
    with pytest.raises(InvalidValue, match="ambiguous mentions .*plan.choose"):
        plan.apply(b)
    with pytest.raises(InvalidValue, match="not one of its candidates"):
        plan.choose("a", "p:nobody")
    chosen = plan.choose("a", "p:ada1")
    assert b.head == head
    (f,) = chosen.facts
    assert (f.subject, f.predicate, f.confidence) == ("p:ada1", "wrote", 7000)
    chosen.apply(b)
    assert b.state().facts[f.id]["object"] == chosen.nodes[0].id


def test_a_plan_is_applied_atomically_or_not_at_all(tmp_path: Path) -> None:
    import dataclasses

    db = tmp_path / "a.db"
    with Journal.open(db, Memory) as j:
        b = j.root()
        b.apply(node("p:ada", "person", "Ada Lovelace", recorded_at=1))
        plan = engine().plan(b, TEXT, provider="rules", locator="n.md", recorded_at=2)
        assert len(plan.nodes) >= 3 and len(plan.facts) == 2
        other = j.branch(b.id)  # another handle records the plan's last fact in between
        moved = other.apply_many([*plan.nodes, plan.facts[-1]])
        with pytest.raises(Conflict):
            plan.apply(b)  # made against head 1; the branch moved
        assert j.branch(b.id).head == moved
        unchecked = dataclasses.replace(plan, based_on=None)
        with pytest.raises(InvalidValue, match="exists"):
            unchecked.apply(j.branch(b.id))  # its last event fails: none of it is written
        assert j.branch(b.id).head == moved
        assert plan.facts[0].id not in j.branch(b.id).state().facts
        fresh = engine().plan(j.branch(b.id), TEXT, provider="rules", locator="n.md")
        events = fresh.events()
        assert fresh.skipped == [plan.facts[-1].id]
        assert fresh.apply(j.branch(b.id)) == moved + len(events)
        assert j.verify().ok


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1, max_size=200))
def test_the_rule_provider_gives_valid_spans_on_any_text(text: str) -> None:
    found = RuleProvider().extract(text, "k")
    check_extraction(found, "rules", text)  # raises on any bad span


class FakeModel(BaseHTTPRequestHandler):
    requests: list[dict] = []
    delay = 0.0

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeModel.requests.append({"headers": dict(self.headers), "body": body})
        if FakeModel.delay:
            time.sleep(FakeModel.delay)  # a slow model, so that a kill can land mid-call
        text = body["messages"][1]["content"]
        entities = [
            {"key": "e1", "text": w, "kind": "person", "confidence": 0.9}
            for w in ("Ada Lovelace", "Zoë Ångström")
            if w in text
        ]
        relations = (
            [{"subject": "e2", "predicate": "works_with", "object": "e1", "confidence": 0.8}]
            if len(entities) == 2
            else []
        )
        if len(entities) == 2:
            entities[1]["key"] = "e2"
        answer = "```json\n" + json.dumps({"entities": entities, "relations": relations}) + "\n```"
        data = json.dumps({"choices": [{"message": {"content": answer}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def model_server():
    FakeModel.requests = []
    FakeModel.delay = 0.0
    srv = ThreadingHTTPServer(("127.0.0.1", 0), FakeModel)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def test_the_model_provider_is_journaled_and_never_asked_twice(
    tmp_path: Path, model_server: str
) -> None:
    client = OpenAIModel(base_url=model_server, api_key="sk-test", model="tiny")
    db = tmp_path / "m.db"
    with Journal.open(db, Memory) as j:
        b = j.root()
        eng = AutoExtractionEngine([ModelProvider(client)])
        plan = eng.plan(b, TEXT, provider="model", locator="n.md", recorded_at=1)
        (f,) = plan.facts
        assert (f.predicate, f.confidence) == ("works_with", 8000)
        assert f.evidence[0]["provider"] == "model"
        plan.apply(b)
        (effect,) = [r for r in b.history() if r.kind == "effect"]
        key = effect.payload["key"]
        assert key.startswith("extract:model:n.md:")
        with pytest.raises(InvalidValue, match="not deterministic"):
            eng.plan(b.state(), TEXT, provider="model", locator="n.md")  # no branch to journal on
    assert len(FakeModel.requests) == 1
    assert FakeModel.requests[0]["headers"]["Idempotency-Key"] == key_hash(key).hex()
    with Journal.open(db, Memory) as j:  # another process, another run: read back
        b = j.root()
        again = AutoExtractionEngine([ModelProvider(client)]).plan(
            b, TEXT, provider="model", locator="n.md", recorded_at=2
        )
        assert again.facts == [] and again.skipped == [f.id]
    assert len(FakeModel.requests) == 1


@pytest.mark.slow
def test_a_killed_extraction_never_asks_the_model_again_for_a_journaled_answer(
    tmp_path: Path, model_server: str
) -> None:
    import collections
    import signal
    import subprocess
    import sys

    worker = Path(__file__).parent / "workers" / "extractor.py"
    db, documents = tmp_path / "x.db", 40
    FakeModel.delay = 0.02  # slow enough that the kill lands mid-run

    def start() -> subprocess.Popen:
        p = subprocess.Popen(
            [sys.executable, str(worker), str(db), model_server, str(documents)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        return p

    for kill_after in (5, 15, 25):
        p = start()
        deadline = time.monotonic() + 120
        while len(FakeModel.requests) < kill_after and time.monotonic() < deadline:
            time.sleep(0.005)  # polling a state, not synchronizing by time
        p.send_signal(signal.SIGKILL)
        p.communicate()
        assert p.returncode == -signal.SIGKILL
    p = start()
    _, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    with Journal.open(db, Memory, readonly=True) as j:
        keys = [r.payload["key"] for r in j.root().history() if r.kind == "effect"]
        assert len(keys) == len(set(keys)) == documents
        assert len(j.root().state().facts) == documents
        assert j.verify().ok
    asked = collections.Counter(r["headers"]["Idempotency-Key"] for r in FakeModel.requests)
    assert set(asked) == {key_hash(k).hex() for k in keys}
    # at most the call in flight at each kill is asked twice: never a journaled one
    assert sum(n - 1 for n in asked.values()) <= 3
