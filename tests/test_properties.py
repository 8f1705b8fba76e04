"""Hypothesis: random histories of apply / effect / observe / compact / snapshot / fork / reopen.

A plain-Python model predicts the state at every seq of every branch and which effects are
visible; the journal must agree, in memory and on disk (the same contract on both).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Ctx
from workbench import Journal
from workbench import branch as branch_module

ops = st.lists(
    st.one_of(
        st.tuples(st.just("apply"), st.integers(-50, 50)),
        st.tuples(st.just("apply_many"), st.lists(st.integers(-50, 50), max_size=6)),
        st.tuples(st.just("effect"), st.sampled_from(["a", "b", "c"])),
        st.tuples(st.just("observe"), st.floats(-1e6, 1e6, allow_nan=False)),
        st.tuples(st.just("compact"), st.none()),
        st.tuples(st.just("snapshot"), st.none()),
        st.tuples(st.just("fork"), st.floats(0, 1)),
        st.tuples(st.just("switch"), st.integers(0, 50)),
        st.tuples(st.just("reopen"), st.none()),
    ),
    max_size=40,
)


class Model:
    """What the journal should say: states by seq and own committed effects, per branch."""

    def __init__(self) -> None:
        self.states = {0: [((), 0)]}
        self.parent: dict[int, tuple[int, int] | None] = {0: None}
        self.effects: dict[int, dict[str, object]] = {0: {}}
        self.effect_seq: dict[int, dict[str, int]] = {0: {}}

    def head(self, b: int) -> int:
        return len(self.states[b]) - 1

    def push(self, b: int, state) -> None:
        self.states[b].append(state)

    def visible(self, b: int, key: str):
        bound = None
        while True:
            seq = self.effect_seq[b].get(key)
            if seq is not None and (bound is None or seq <= bound):
                return True, self.effects[b][key]
            link = self.parent[b]
            if link is None:
                return False, None
            b, fork_seq = link
            bound = fork_seq if bound is None else min(bound, fork_seq)

    def fork(self, b: int, at: int, new: int) -> None:
        self.states[new] = list(self.states[b][: at + 1])
        self.parent[new] = (b, at)
        self.effects[new] = {}
        self.effect_seq[new] = {}


def run_history(backend: str, snapshot_every: int, history) -> None:
    tmp = Path(tempfile.mkdtemp())
    path = tmp / "p.db"

    def open_journal():
        if backend == "memory":
            return Journal.in_memory(Ctx, snapshot_every=snapshot_every)
        return Journal.open(path, Ctx, snapshot_every=snapshot_every)

    j = open_journal()
    model = Model()
    cur = 0
    handles = {0: j.root()}
    counter = [0]

    def do_effect(b: int, key: str):
        counter[0] += 1
        fresh = f"{key}-{counter[0]}"
        hit, value = model.visible(b, key)
        got = handles[b].effect(key, lambda: fresh)
        if hit:
            assert got == value
        else:
            assert got == fresh
            model.push(b, model.states[b][-1])
            model.effects[b][key] = fresh
            model.effect_seq[b][key] = model.head(b)
        return got

    try:
        for op, arg in history:
            br = handles[cur]
            if op == "apply":
                assert br.apply({"x": arg}) == model.head(cur) + 1
                items, total = model.states[cur][-1]
                model.push(cur, (items + (arg,), total + arg))
            elif op == "apply_many":
                assert br.apply_many([{"x": x} for x in arg]) == model.head(cur) + len(arg)
                for x in arg:
                    items, total = model.states[cur][-1]
                    model.push(cur, (items + (x,), total + x))
            elif op == "effect":
                do_effect(cur, arg)
            elif op == "observe":
                br.observe("m", arg)
                model.push(cur, model.states[cur][-1])
            elif op == "compact":
                key = f"summarize:{model.head(cur)}"

                def squash(branch, state, key=key):
                    s = do_effect(cur, key)
                    return Ctx(items=[len(s)], total=state.total)

                seq = br.compact(squash)
                _, total = model.states[cur][-1]
                model.push(cur, ((len(model.visible(cur, key)[1]),), total))
                assert seq == model.head(cur)
            elif op == "snapshot":
                assert br.snapshot() == model.head(cur)
            elif op == "fork":
                at = int(arg * model.head(cur))
                child = br.fork_at(at)
                model.fork(cur, at, child.id)
                handles[child.id] = child
                cur = child.id
            elif op == "switch":
                cur = sorted(handles)[arg % len(handles)]
                handles[cur] = j.branch(cur)
            elif op == "reopen" and backend == "file":
                j.close()
                j = open_journal()
                handles = {b: j.branch(b) for b in handles}
            live = handles[cur].state()
            assert (tuple(live.items), live.total) == model.states[cur][-1]
        for b in handles:
            fresh = j.branch(b)
            assert fresh.head == model.head(b)
            for seq, (items, total) in enumerate(model.states[b]):
                assert fresh.at(seq) == Ctx(items=list(items), total=total), (b, seq)
        assert j.verify().ok
    finally:
        j.close()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.parametrize("backend", ["memory", "file"])
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshot_every=st.sampled_from([1, 2, 3, 128]), history=ops,
       fx_map_max=st.sampled_from([branch_module.FX_MAP_MAX, 0, 1, 2]))
def test_at_every_seq_equals_the_live_state(backend, snapshot_every, history, fx_map_max):
    # fx_map_max: how many effects a handle maps in memory before leaving older ones to the
    # effect_index table; small values send lookups through the index, reopen and forks.
    default = branch_module.FX_MAP_MAX
    branch_module.FX_MAP_MAX = fx_map_max
    try:
        run_history(backend, snapshot_every, history)
    finally:
        branch_module.FX_MAP_MAX = default
