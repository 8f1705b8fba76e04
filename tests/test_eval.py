"""Retrieval metrics checked against hand-computed values; dataset loaders on fixture files."""

from __future__ import annotations

import json
import math

import pytest

from workbench import InvalidValue, Journal
from workbench.eval import evaluate, lexical_ranker, load_locomo, load_longmemeval, record


def test_metrics_by_hand():
    cases = [
        {"id": "q1", "category": "a", "relevant": ["d1", "d2"], "ranked": ["d3", "d1", "d4", "d2"]},
        {"id": "q2", "category": "b", "relevant": ["d5"], "ranked": ["d5", "d6"]},
        {"id": "q3", "category": "b", "relevant": ["d9"], "ranked": ["d1", "d2"]},
        {"id": "q4", "category": "b", "relevant": [], "ranked": ["d1"]},  # abstention: skipped
    ]
    df = evaluate(cases, ks=[1, 3])
    rows = {r["group"]: r for r in df.to_dicts()}
    q1_ndcg3 = (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    assert rows["all"]["n"] == 3 and rows["all"]["skipped"] == 1
    assert rows["all"]["mrr"] == pytest.approx((1 / 2 + 1 + 0) / 3)
    assert rows["all"]["hit@1"] == pytest.approx(1 / 3)
    assert rows["all"]["hit@3"] == pytest.approx(2 / 3)
    assert rows["all"]["recall@3"] == pytest.approx((1 / 2 + 1 + 0) / 3)
    assert rows["all"]["ndcg@3"] == pytest.approx((q1_ndcg3 + 1 + 0) / 3)
    assert rows["a"]["recall@3"] == 0.5 and rows["a"]["ndcg@1"] == 0.0
    assert rows["b"]["n"] == 2 and rows["b"]["mrr"] == 0.5 and rows["b"]["skipped"] == 1


def test_duplicates_in_ranking_count_once_and_bad_input_is_refused():
    df = evaluate([{"relevant": ["a"], "ranked": ["b", "b", "a"]}], ks=[2])
    assert df.row(0, named=True)["hit@2"] == 1.0  # b, a after dedup
    with pytest.raises(InvalidValue):
        evaluate([{"relevant": ["a"]}])
    with pytest.raises(InvalidValue):
        evaluate([], ks=[0])


def test_results_land_as_observations_in_the_matrix():
    with Journal.in_memory() as j:
        b = j.root().fork(params={"retriever": "lexical"})
        df = evaluate([{"relevant": ["x"], "ranked": ["x"], "category": "c"}], ks=[1])
        assert record(df, b, prefix="eval/") == 5
        m = j.matrix(wide=True)
        assert (
            m.row(0, named=True)["eval/mrr"] == 1.0
            and m.row(0, named=True)["retriever"] == "lexical"
        )


def test_locomo_loader(tmp_path):
    sample = [
        {
            "sample_id": "conv-1",
            "conversation": {
                "speaker_a": "Ann",
                "speaker_b": "Bob",
                "session_1_date_time": "1 May 2023",
                "session_1": [
                    {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a dog named Rex"},
                    {"speaker": "Bob", "dia_id": "D1:2", "text": "Nice, I like cats"},
                ],
                "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "Rex learned to sit"}],
            },
            "qa": [
                {
                    "question": "What is the name of Ann's dog?",
                    "answer": "Rex",
                    "evidence": ["D1:1"],
                    "category": 4,
                },
                {
                    "question": "What did Rex learn?",
                    "answer": "to sit",
                    "evidence": ["D2:1"],
                    "category": 1,
                },
            ],
        }
    ]
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps(sample))
    ds = load_locomo(path)
    assert [d.id for d in ds.documents] == ["conv-1:D1:1", "conv-1:D1:2", "conv-1:D2:1"]
    assert ds.questions[0].relevant == ["conv-1:D1:1"] and ds.questions[0].category == "single-hop"
    df = evaluate(ds.cases(lexical_ranker), ks=[1])
    assert df.filter(df["group"] == "all")["hit@1"][0] == 1.0


def test_longmemeval_loader(tmp_path):
    items = [
        {
            "question_id": "q1",
            "question_type": "single-session-user",
            "question": "Where did I park the car?",
            "answer": "level 3",
            "question_date": "2023/05/30",
            "haystack_session_ids": ["s1", "s2"],
            "haystack_dates": ["2023/05/01", "2023/05/02"],
            "haystack_sessions": [
                [{"role": "user", "content": "I parked the car on level 3"}],
                [{"role": "user", "content": "Lunch was pasta"}],
            ],
            "answer_session_ids": ["s1"],
        },
        {
            "question_id": "q2_abs",
            "question_type": "single-session-user",
            "question": "What is my cat called?",
            "answer": "unknown",
            "haystack_session_ids": ["s2"],
            "haystack_sessions": [[{"role": "user", "content": "x"}]],
            "answer_session_ids": [],
        },
    ]
    path = tmp_path / "longmemeval_s.json"
    path.write_text(json.dumps(items))
    ds = load_longmemeval(path)
    assert {d.id for d in ds.documents} == {"s1", "s2"} and ds.questions[1].relevant == []
    df = evaluate(ds.cases(lexical_ranker), ks=[1])
    row = df.filter(df["group"] == "all").row(0, named=True)
    assert row["n"] == 1 and row["skipped"] == 1 and row["recall@1"] == 1.0
    with pytest.raises(InvalidValue):
        load_longmemeval(tmp_path / "missing.json")
