"""Effects on long histories: the lookup by key is planned from the key, never from the history,
so the 100,000th effect costs what the 1,000th does, in a running handle or a resumed one; and
the fork chain stays exact on every path (the handle's map, the effect index, a resumed handle).

The in-memory map is made small here (FX_MAP_MAX) so short histories take the paths that long
ones take in use."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench.effects as effects
from workbench import Journal


@pytest.fixture
def small_map(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(effects, "FX_MAP_MAX", 50)
    return 50


def traced(j: Journal) -> list[str]:
    """The statements the journal's connection runs from now (until the trace is removed)."""
    seen: list[str] = []
    j.storage.conn.set_trace_callback(seen.append)
    return seen


def plan(j: Journal, sql: str) -> list[str]:
    """The data accesses of a statement's plan, in order, leaving out its scalar subqueries
    (the branch's head: ``max(seq)``, one index probe), which are checked apart."""
    rows = j.storage.conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
    aside = {r[0] for r in rows if r[3].startswith("SCALAR SUBQUERY")}
    for r in rows:  # parents come before their children
        if r[1] in aside:
            aside.add(r[0])
    for r in rows:
        if r[0] in aside and r[3].startswith(("SEARCH", "SCAN")):
            assert "max(seq)" in sql and r[3] == (
                "SEARCH events USING COVERING INDEX events_branch_seq (branch=?)"
            ), (sql, r)
    return [
        r[3]
        for r in rows
        if r[0] not in aside
        and r[3].startswith(("SEARCH", "SCAN"))
        and "CONSTANT" not in r[3]
        and not r[3].startswith(("SCAN (subquery", "SCAN f"))
    ]


def lookups(statements: list[str]) -> list[str]:
    return [s for s in statements if "FROM effect_index" in s and s.lstrip().startswith("SELECT")]


def test_the_effect_lookup_starts_from_the_key_not_the_history(db_path: Path, small_map: int):
    with Journal.open(db_path) as j:
        root = j.root()
        for i in range(3 * small_map):
            root.effect(f"k:{i}", lambda i=i: i)
        fork = root.fork_at(2 * small_map)
    with Journal.open(db_path) as j:  # resumed: the handles have no map, the index has it all
        seen = traced(j)
        assert j.root().effect("k:3", lambda: "ran") == 3
        assert j.branch(fork.id).effect("k:7", lambda: "ran") == 7
        assert j.branch(fork.id).effect("new", lambda: "ran") == "ran"
        j.storage.conn.set_trace_callback(None)
        found = lookups(seen)
        assert found, seen
        for sql in found:
            steps = plan(j, sql)
            # First the key's entries in effect_index, then each entry's event by position:
            # a plan that walks events by (branch, seq) costs a row per event of the history.
            assert steps[0].startswith("SEARCH x USING PRIMARY KEY (key_hash=?"), (sql, steps)
            assert not any("events_branch_seq" in s or s.startswith("SCAN") for s in steps), (
                sql,
                steps,
            )


def test_unknown_outcomes_reads_from_the_key_not_the_history(db_path: Path, small_map: int):
    with Journal.open(db_path) as j:
        root = j.root()
        for i in range(3 * small_map):
            root.effect(f"k:{i}", lambda i=i: i)
        with pytest.raises(ValueError):
            root.effect("lost", lambda: {1})  # ran, its result could not be stored
    with Journal.open(db_path, readonly=True) as j:
        seen = traced(j)
        assert j.root().unknown_outcomes() == ["lost"]
        j.storage.conn.set_trace_callback(None)
        found = lookups(seen)
        assert found, seen
        for sql in found:
            steps = plan(j, sql)
            assert steps[0].startswith("SEARCH x USING PRIMARY KEY (key_hash=?"), (sql, steps)


def vm_steps_per_effect(path: Path, n: int = 20) -> float:
    """SQLite virtual-machine steps one new effect costs in a resumed handle (a count, not a
    time: the same on a busy machine)."""
    with Journal.open(path) as j:
        b = j.root()
        b.effect(f"warm:{b.head}", lambda: 0)  # the handle's first lookup loads what it needs
        count = [0]

        def tick() -> int:
            count[0] += 1
            return 0

        j.storage.conn.set_progress_handler(tick, 10)
        for i in range(n):
            b.effect(f"probe:{b.head}:{i}", lambda i=i: i)
        j.storage.conn.set_progress_handler(None, 0)
    return count[0] * 10 / n


def test_an_effect_costs_the_same_work_after_four_times_the_history(tmp_path: Path, small_map: int):
    costs = []
    path = tmp_path / "long.db"
    for size in (1000, 4000):
        with Journal.open(path) as j:
            b = j.root()
            while b.head < size:
                b.effect(f"k:{b.head}", lambda: {"x": 1})
        costs.append(vm_steps_per_effect(path))
    assert costs[1] <= 1.5 * costs[0], costs


# -- the fork chain, exact on every path ----------------------------------------------------

ops = st.lists(
    st.one_of(
        st.tuples(st.just("effect"), st.integers(0, 2), st.integers(0, 11)),
        st.tuples(st.just("fork"), st.integers(0, 2), st.integers(0, 100)),
        st.tuples(st.just("reopen"), st.just(0), st.just(0)),
    ),
    min_size=1,
    max_size=40,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(ops=ops, map_max=st.sampled_from([2, 5, 10_000]))
def test_effects_follow_the_fork_chain_on_every_lookup_path(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, int, int]], map_max: int
):
    """A model: each branch's resolved history is its parent's keys up to the fork point, then
    its own. ``effect`` returns the newest result of a key in that history, else runs fn."""
    saved = effects.FX_MAP_MAX
    effects.FX_MAP_MAX = map_max
    path = tmp_path_factory.mktemp("chain") / "j.db"
    try:
        j = Journal.open(path)
        handles = [j.root()]
        model: list[list[tuple[int, str, int]]] = [[]]  # per branch: (seq, key, result) resolved
        n = 0
        for op, which, arg in ops:
            i = which % len(handles)
            if op == "effect":
                key = f"k{arg}"
                want = next((r for _, k, r in reversed(model[i]) if k == key), None)
                n += 1
                got = handles[i].effect(key, lambda n=n: n)
                if want is None:
                    assert got == n
                    model[i].append((handles[i].head, key, n))
                else:
                    assert got == want, (i, key, model[i])
            elif op == "fork":
                at = arg % (handles[i].head + 1)
                child = handles[i].fork_at(at)
                handles.append(child)
                model.append([e for e in model[i] if e[0] <= at])
            else:
                j.close()
                j = Journal.open(path)
                handles = [j.branch(h.id) for h in handles]
        j.close()
    finally:
        effects.FX_MAP_MAX = saved


def test_a_parents_effect_after_the_fork_point_stays_invisible_in_the_index(
    db_path: Path, small_map: int
):
    with Journal.open(db_path) as j:
        root = j.root()
        for i in range(small_map):
            root.effect(f"k:{i}", lambda i=i: i)
        fork = root.fork()
        for i in range(small_map, 3 * small_map):
            root.effect(f"k:{i}", lambda i=i: i)  # after the fork point: the fork never sees them
        fork.effect("own", lambda: "mine")
        assert fork.effect(f"k:{2 * small_map}", lambda: "ran") == "ran"
    with Journal.open(db_path) as j:
        f = j.branch(fork.id)
        assert f.effect("k:3", lambda: "ran") == 3  # inherited, through the index
        assert f.effect(f"k:{2 * small_map + 1}", lambda: "ran") == "ran"
        assert j.root().effect("own", lambda: "root's") == "root's"  # a child's is not the root's


def test_the_branch_listing_reads_one_head_per_branch_not_every_event(db_path: Path):
    """``heads()`` (the branch listing, ``children()``, the results table) descends the
    (branch, seq) key once per branch: on 10^6 events it costs what it costs on 10^3."""
    with Journal.open(db_path) as j:
        main = j.root()
        main.apply_many([{"i": i} for i in range(300)])
        forks = [main.fork_at(10 * k) for k in range(1, 6)]
        for f in forks:
            f.apply({"x": 1})
        seen = traced(j)
        heads = j.storage.heads()
        j.storage.conn.set_trace_callback(None)
        assert heads[0].seq == 300 and {heads[f.id].seq for f in forks} == {11, 21, 31, 41, 51}
        (sql,) = [s for s in seen if "FROM branches" in s]
        rows = j.storage.conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
        accesses = [r[3] for r in rows if r[3].startswith(("SEARCH", "SCAN"))]
        assert accesses[0].startswith("SCAN b")  # the branches, once
        assert not any(a.startswith(("SCAN e", "SCAN events")) for a in accesses)  # no event scan
