"""LangGraph checkpointer and LangChain message history on a journal, against the real libraries."""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

import pytest

pytest.importorskip("langgraph", reason="the langgraph extra is installed in CI")

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402

from workbench import Journal  # noqa: E402
from workbench.adapters.langgraph import JournalSaver, ThreadState  # noqa: E402


class S(TypedDict):
    log: Annotated[list[str], operator.add]
    count: int


def build(saver, interrupt=None):
    g = StateGraph(S)
    g.add_node("a", lambda s: {"log": ["a"], "count": s["count"] + 1})
    g.add_node("b", lambda s: {"log": ["b"], "count": s["count"] * 10})
    g.add_node("c", lambda s: {"log": ["c"], "count": s["count"] + 5})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return g.compile(checkpointer=saver, interrupt_before=interrupt or [])


def run_scenario(saver):
    """Interrupt, resume, history, update_state fork, replay from an old checkpoint."""
    graph = build(saver, interrupt=["b"])
    cfg = {"configurable": {"thread_id": "t1"}}
    first = graph.invoke({"log": [], "count": 1}, cfg)
    resumed = graph.invoke(None, cfg)  # resume after the interruption
    history = list(graph.get_state_history(cfg))
    forked_cfg = graph.update_state(
        history[-3].config, {"count": 100}
    )  # fork from an early checkpoint
    fork_result = graph.invoke(None, forked_cfg)
    return first, resumed, [h.values for h in history], fork_result, [h.next for h in history]


def test_journal_saver_behaves_like_langgraphs_own(tmp_path):
    expected = run_scenario(InMemorySaver())
    with Journal.open(tmp_path / "lg.db", ThreadState) as j:
        got = run_scenario(JournalSaver(j))
        assert got == expected
        assert j.verify().ok
    with Journal.open(tmp_path / "lg.db", ThreadState) as j:  # a new process sees the same thread
        saver = JournalSaver(j)
        graph = build(saver)
        state = graph.get_state({"configurable": {"thread_id": "t1"}})
        assert state.values["log"] == expected[3]["log"]
        b = j.branch("langgraph:t1")
        changes = b.diff(b.head - 2, b.head)
        assert any(c.path.startswith("channels.") for c in changes)  # diffs show channels


def test_copy_prune_delete_and_async(tmp_path):
    import asyncio

    with Journal.open(tmp_path / "lg.db", ThreadState) as j:
        saver = JournalSaver(j)
        graph = build(saver)
        cfg = {"configurable": {"thread_id": "src"}}
        graph.invoke({"log": [], "count": 2}, cfg)
        n_events = j.info("langgraph:src").head
        saver.copy_thread("src", "dst")
        assert j.info("langgraph:dst").fork_seq == n_events  # a fork: one row
        dst = {"configurable": {"thread_id": "dst"}}
        assert graph.get_state(dst).values == graph.get_state(cfg).values
        graph.invoke({"log": ["again"], "count": 0}, dst)
        assert graph.get_state(cfg).values["count"] == 35
        assert len(list(saver.list(cfg))) > 1
        saver.prune(["src"])
        assert len(list(saver.list(cfg))) == 1
        assert graph.get_state(cfg).values["count"] == 35
        saver.delete_thread("src")
        assert saver.get_tuple(cfg) is None and list(saver.list(cfg)) == []
        got = asyncio.run(saver.aget_tuple(dst))
        assert got is not None and got.checkpoint["channel_values"]["count"] == 15  # 0 +1 x10 +5
        assert j.verify().ok


def test_langchain_history_on_a_branch(tmp_path):
    pytest.importorskip("langchain_core")
    from langchain_core.messages import AIMessage, HumanMessage

    from workbench.adapters.langchain import ChatState, JournalChatHistory

    with Journal.open(tmp_path / "chat.db", ChatState) as j:
        h = JournalChatHistory(j)
        h.add_messages([HumanMessage("hi"), AIMessage("hello")])
        h.add_user_message("how are you?")
        assert [m.content for m in h.messages] == ["hi", "hello", "how are you?"]
        mark = h.branch.head
        h.add_ai_message("fine")
        old = h.at(mark)
        assert [m.content for m in old] == ["hi", "hello", "how are you?"]
        other = h.fork_at(mark)
        other.add_ai_message("never better")
        assert other.messages[-1].content == "never better" and h.messages[-1].content == "fine"
        h.clear()
        assert h.messages == [] and len(h.at(mark)) == 3
    with Journal.open(tmp_path / "chat.db", ChatState) as j:
        assert JournalChatHistory(j, branch=other.branch.id).messages[-1].content == "never better"
