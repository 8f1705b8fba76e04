"""The filter language over branches: what it selects, its canonical text, its messages, and
(hypothesis) that polars evaluates it as the language says, unknowns included."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench import InvalidValue, Journal, filters, sweep
from workbench.filters import Both, Compare, Either, Negation, Within

TABLE = pl.DataFrame(
    {
        "branch": [0, 1, 2, 3, 4],
        "budget": [100, 1000, 2000, None, 5000],
        "recall": [0.1, 0.6, None, 0.9, 0.4],
        "status": ["failed", "finished", None, "finished", "pruned"],
        "retrieval": ["lexical", "fused", "literal", "fused", "lexical"],
    }
)


@pytest.mark.parametrize(
    ("text", "picked", "canonical"),
    [
        ("budget >= 1000 and recall > 0.5", [1], "budget >= 1000 and recall > 0.5"),
        ("status == failed", [0], 'status == "failed"'),
        ("status = 'finished'", [1, 3], 'status == "finished"'),
        ("retrieval in (lexical, fused)", [0, 1, 3, 4], 'retrieval in ("lexical", "fused")'),
        ("retrieval not in (fused)", [0, 2, 4], 'retrieval not in ("fused")'),
        ("recall == null", [2], "recall == null"),
        ("not recall == null", [0, 1, 3, 4], "not recall == null"),
        ("budget < 1e3 or status == pruned", [0, 4], 'budget < 1000.0 or status == "pruned"'),
        ("(budget > 500 or recall > 0.8) and not status == failed", [1, 3, 4], None),
        ("`budget` != 100", [1, 2, 4], "budget != 100"),
    ],
)
def test_a_filter_selects_the_branches_it_reads_as(text, picked, canonical):
    f = filters.parse(text)
    assert f.apply(TABLE)["branch"].to_list() == picked
    if canonical is not None:
        assert str(f) == canonical
    assert filters.parse(str(f)) == f


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "the expression is empty"),
        ("budget >= ", "expected a value after '>=' (a number, a word, a quoted string, null)"),
        ("budget ! 3", "cannot read '! 3' (at character 8)"),
        ("(budget > 3", "expected ')' at character 12"),
        ("recall > 0.5 recall", "expected and, or, or the end at character 14"),
        ("and > 3", "expected a column name"),
        ("budget in 3", "'(' and a list of values"),
        ("bugdet > 3", "no column 'bugdet' (did you mean budget?)"),
        ("budget == high", 'budget holds numbers; compare it with a number, not "high"'),
        ("recall < null", "< null means nothing; use == null or != null"),
    ],
)
def test_a_bad_filter_is_one_clear_message(text, says):
    with pytest.raises(InvalidValue) as err:
        filters.parse(text).apply(TABLE)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_status_sweep_and_metrics_select_branches_of_a_journal(tmp_path):
    with Journal.open(tmp_path / "f.db") as j:
        j.root().apply({"start": 1})
        s = sweep.plan(j, 0, 1, {"budget": [300, 1000, 3000]})
        other = sweep.plan(j, 0, 1, {"budget": [50]})
        for f in s.forks:
            j.branch(f.branch).observe("recall", f.params["budget"] / 3000)
        failed = s.forks[0].branch
        j.record_run(failed, s.id, "failed", error='{"ename": "RuntimeError"}')
        assert filters.select(j, "status == failed") == [failed]
        assert filters.select(j, f"sweep == {other.id}") == [other.forks[0].branch]
        assert filters.select(j, "budget >= 1000 and recall > 0.5") == [s.forks[2].branch]
        assert filters.select(j, "recall == null") == [0, other.forks[0].branch]
        assert filters.select(j, "name == main") == [0]  # name: the branch's name
        assert filters.select(j, "budget > 100", sweep=s.id) == [f.branch for f in s.forks]


# -- hypothesis: polars agrees with the language's own reading ------------------------------

NUMBERS = st.one_of(
    st.integers(-5, 5000), st.floats(-10, 10, allow_nan=False, allow_infinity=False)
)
WORDS = st.sampled_from(["failed", "finished", "lexical", "fused", 'it\'s "quoted"'])
NUMERIC = st.sampled_from(["budget", "recall"])
TEXT = st.sampled_from(["status", "retrieval"])


def comparisons() -> st.SearchStrategy:
    ops = st.sampled_from(["==", "!=", "<", "<=", ">", ">="])
    return st.one_of(
        st.builds(Compare, NUMERIC, ops, NUMBERS),
        st.builds(Compare, TEXT, ops, WORDS),
        st.builds(Compare, NUMERIC | TEXT, st.sampled_from(["==", "!="]), st.none()),
        st.builds(
            Within, NUMERIC, st.lists(NUMBERS, min_size=1, max_size=3).map(tuple), st.booleans()
        ),
        st.builds(Within, TEXT, st.lists(WORDS, min_size=1, max_size=3).map(tuple), st.booleans()),
    )


EXPRESSIONS = st.recursive(
    comparisons(),
    lambda inner: st.one_of(
        st.builds(Both, inner, inner), st.builds(Either, inner, inner), st.builds(Negation, inner)
    ),
    max_leaves=6,
)


def truth(node, row):
    """The language's reading of a row: True, False or None (unknown), Kleene's logic."""
    if isinstance(node, Both):
        a, b = truth(node.left, row), truth(node.right, row)
        return False if a is False or b is False else (None if None in (a, b) else True)
    if isinstance(node, Either):
        a, b = truth(node.left, row), truth(node.right, row)
        return True if a is True or b is True else (None if None in (a, b) else False)
    if isinstance(node, Negation):
        v = truth(node.inner, row)
        return None if v is None else not v
    value = row[node.column]
    if isinstance(node, Within):
        if value is None:
            return None
        hit = value in node.values
        return not hit if node.negate else hit
    if node.value is None:
        return (value is None) if node.op == "==" else (value is not None)
    if value is None:
        return None
    return {
        "==": value == node.value,
        "!=": value != node.value,
        "<": value < node.value,
        "<=": value <= node.value,
        ">": value > node.value,
        ">=": value >= node.value,
    }[node.op]


@settings(max_examples=300, deadline=None)
@given(EXPRESSIONS)
def test_polars_selects_what_the_language_says(node):
    f = filters.Filter(node)
    assert filters.parse(str(f)) == f  # the canonical text reads back as the same filter
    want = [r["branch"] for r in TABLE.iter_rows(named=True) if truth(node, r) is True]
    assert f.apply(TABLE)["branch"].to_list() == want
