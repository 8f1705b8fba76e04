"""Budgeted context with receipts: never over budget, everything accounted for, journaled."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench import InvalidValue, Journal, NotFound, State
from workbench.context import CharEstimator, Part, render_parts


@dataclass
class Chat(State):
    messages: list[dict] = field(default_factory=list)

    def apply(self, delta: dict) -> None:
        self.messages.append(delta)


@settings(max_examples=200)
@given(st.lists(st.text(max_size=60), max_size=12), st.integers(0, 120))
def test_render_never_exceeds_budget_and_accounts_for_every_part(texts, budget):
    parts = [Part(f"p{i}", t) for i, t in enumerate(texts)]
    est = CharEstimator()
    kept, inc, omi, used = render_parts(parts, budget, est)
    assert used <= budget
    assert est("\n".join(p.text for p in kept)) <= used  # the joined text fits what was counted
    assert {p.id for p, _ in inc} | {p.id for p, _, _ in omi} == {p.id for p in parts}
    assert all(why in ("budget", "priority") for _, _, why in omi)
    assert [p.id for p in kept] == [p.id for p in parts if p in kept]  # original order


def test_newest_parts_win_and_pinned_parts_stay():
    parts = [Part("system", "be brief", pinned=True)] + [Part(f"m{i}", "x" * 40) for i in range(5)]
    # system 2 tokens, each message 10 + 1 for the separator: 2 + 11 + 11 + 11 = 35
    kept, _, omitted, used = render_parts(parts, 35, CharEstimator())
    assert [p.id for p in kept] == ["system", "m2", "m3", "m4"] and used == 35
    assert [(p.id, why) for p, _, why in omitted] == [("m0", "priority"), ("m1", "priority")]
    with pytest.raises(InvalidValue):
        render_parts([Part("big", "x" * 100, pinned=True)], 10, CharEstimator())


def test_branch_render_messages_and_receipt_journaled_with_the_effect():
    with Journal.in_memory(Chat) as j:
        b = j.root()
        for i in range(6):
            b.apply(
                {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": f"message number {i}" * 3,
                }
            )
        msgs, receipt = b.render(40, messages=True)
        assert all(set(m) == {"role", "content"} for m in msgs)
        assert receipt.tokens <= 40 and receipt.seq == b.head and receipt.head_hash == b.head_hash
        assert receipt.estimator == "chars/4" and receipt.omitted
        assert [m["content"] for m in msgs] == [
            b.state().messages[int(pid[9:-1])]["content"] for pid, _ in receipt.included
        ]
        with b.receipt(receipt):
            b.effect("llm:reply", lambda: "ok")
        b.effect("tool:x", lambda: 1)  # outside the block: no receipt
        doc = j.receipt(f"main@{b.head - 1}")
        assert doc["key"] == "llm:reply" and doc["receipt"] == receipt.to_json()
        with pytest.raises(NotFound, match="carries no receipt"):
            j.receipt("head")
        old_text, old = b.render(10_000, seq=2)
        assert (
            old.seq == 2 and "message number 1" in old_text and "message number 2" not in old_text
        )


def test_auditor_model_calls_carry_receipts(tmp_path):
    from workbench.agents.auditor import AuditState, Calls, MockModel, run, start

    with Journal.open(tmp_path / "a.db", AuditState) as j:
        start(j.root(), None, 3000, 3)
        run(j.root(), Calls(MockModel()))
        recs = [r for r in j.root().history() if r.kind == "effect"]
        model = [r for r in recs if r.payload["key"].startswith(("plan:", "analyze:", "report"))]
        assert model and all("receipt" in r.payload for r in model)
        assert not any(
            "receipt" in r.payload for r in recs if r.payload["key"].startswith(("read:", "count:"))
        )
        last = j.receipt((0, next(r.seq for r in recs if r.payload["key"] == "report")))
        assert [pid for pid, _ in last["receipt"]["included"]] == ["note[0]", "note[1]", "note[2]"]
