"""The bundled coding-agent regression suite (``workbench.agents.memory.suite``): which file
defines what, which decision holds and which it superseded, scored with the experiment's
metrics; a superseded decision never reaches the context of a question about the present."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli import lithify

from workbench import Journal
from workbench.agents.memory import suite
from workbench.errors import InvalidValue
from workbench.memory import Memory

CONFIGURATIONS = ("literal", "lexical", "graph", "graph+lexical")


@pytest.mark.parametrize("retrieval", CONFIGURATIONS)
def test_the_suite_finds_what_holds_and_never_serves_a_superseded_decision(
    retrieval: str,
) -> None:
    cases, table = suite.run(retrieval, budget=400)
    by = {r["group"]: r for r in table.to_dicts()}
    assert set(by) == {"all", "definition", "decision", "superseded", "tests"}
    assert by["all"]["n"] == 20 and by["all"]["recall@10"] == 1.0
    assert by["all"]["stale"] == 0.0 and all(c["stale"] == [] for c in cases)
    asked = {c["id"]: c for c in cases}
    # as known before the switch, the old decision is the one in force, the new one unknown
    assert "db-sqlite" in asked["sup-1"]["ranked"] and "db-postgres" not in asked["sup-1"]["ranked"]
    assert "db-postgres" in asked["dec-1"]["ranked"] and "db-sqlite" not in asked["dec-1"]["ranked"]
    # verify_token moved: the old definition was retracted, the new one is what is served
    assert "def-verify-old" not in asked["def-3"]["ranked"]


def test_ranking_at_a_small_budget_is_a_regression_baseline() -> None:
    for retrieval in ("lexical", "graph+lexical"):
        _, table = suite.run(retrieval, budget=60)
        overall = table.row(0, named=True)
        assert overall["group"] == "all"
        assert overall["hit@1"] >= 0.8 and overall["recall@5"] >= 0.9, (retrieval, overall)


def test_the_suite_memory_keeps_every_superseded_fact(tmp_path: Path) -> None:
    s = suite.load_suite()
    with Journal.open(tmp_path / "suite.db", Memory) as j:
        j.root().apply_many(s.deltas)
        facts = j.root().state().facts
        stale = {x for c in s.cases for x in c.get("stale", [])}
        assert stale and all(facts[x]["superseded_by"] is not None for x in stale)
        assert j.verify().ok


def test_a_suite_naming_unknown_facts_is_refused(tmp_path: Path) -> None:
    doc = json.loads(suite.bundled.memory_suite().read_text())
    doc["cases"][0]["relevant"] = ["no-such-fact"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(InvalidValue, match="unknown facts \\['no-such-fact'\\]"):
        suite.load_suite(bad)


def test_the_cli_runs_the_suite() -> None:
    out = lithify("--json", "memory", "suite", "--budget", "60", "--retrieval", "lexical")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["groups"][0]["group"] == "all" and len(doc["cases"]) == 20
