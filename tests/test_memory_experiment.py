"""The bundled memory experiment: ingest the LoCoMo / LongMemEval samples, answer at budgets
per retrieval configuration, sweep from the fork after ingestion, one chart line per
configuration, recall never falling as the budget grows for the deterministic providers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli import lithify

from workbench import Journal, charts
from workbench.agents.memory import answer, context_recall, ingest, load
from workbench.errors import InvalidValue
from workbench.matrix import aggregate, last_per_branch
from workbench.memory import Memory

BUDGETS = [25, 50, 100, 200, 400]


@pytest.mark.parametrize("fmt", ["locomo", "longmemeval"])
def test_recall_does_not_fall_as_the_budget_grows(tmp_path: Path, fmt: str) -> None:
    data = load(fmt=fmt)
    with Journal.open(tmp_path / f"{fmt}.db", Memory) as j:
        ingest(j.root(), data)
        memory = j.root().state()
        for retrieval in ("literal", "lexical", "semantic", "fused"):
            recalls = [context_recall(answer(memory, data, b, retrieval)) for b in BUDGETS]
            assert recalls == sorted(recalls), (retrieval, recalls)
            assert recalls[-1] > recalls[0]
        assert j.verify().ok


def test_a_journal_of_another_dataset_is_refused(tmp_path: Path) -> None:
    with Journal.open(tmp_path / "m.db", Memory) as j:
        ingest(j.root(), load(fmt="locomo"))
        with pytest.raises(InvalidValue, match="none of the longmemeval"):
            answer(j.root().state(), load(fmt="longmemeval"), 100, "lexical")


@pytest.mark.slow
def test_the_sweep_gives_one_line_per_retrieval_configuration(tmp_path: Path) -> None:
    db = tmp_path / "sweep.db"
    out = lithify("--json", "--db", str(db), "memory", "ingest")
    assert out.returncode == 0, out.stderr
    head = json.loads(out.stdout)["head"]
    ran = lithify("--json", "--db", str(db), "sweep", "--at", str(head), "--workers", "2")
    assert ran.returncode == 0, ran.stderr  # the agent's grid: budgets x retrieval
    with Journal.open(db, Memory, readonly=True) as j:
        df = j.matrix()
        stats = aggregate(last_per_branch(df, "recall"), "recall", by=["retrieval", "budget"])
        assert set(stats["retrieval"].to_list()) == {"literal", "lexical", "fused"}
        for name in ("literal", "lexical", "fused"):
            means = stats.filter(stats["retrieval"] == name).sort("budget")["mean"].to_list()
            assert means == sorted(means) and len(means) == 5
        chart = charts.metric_vs_param(df, x="budget", y="recall", color="retrieval")
        assert chart.to_dict()["layer"][1]["encoding"]["color"]["field"] == "retrieval"
    png = lithify("--db", str(db), "chart", "-o", str(tmp_path / "c.png"))
    assert png.returncode == 0 and (tmp_path / "c.png").stat().st_size > 1000
    single = lithify("--json", "--db", str(db), "memory", "run", "--budget", "400")
    assert json.loads(single.stdout)["recall"] == 1.0
