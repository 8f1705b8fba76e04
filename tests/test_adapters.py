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


def test_a_checkpoint_diff_names_the_fields_that_changed(tmp_path):
    with Journal.open(tmp_path / "lg.db", ThreadState) as j:
        saver = JournalSaver(j)
        graph = build(saver)
        cfg = {"configurable": {"thread_id": "d"}}
        graph.invoke({"log": [], "count": 1}, cfg)
        history = list(graph.get_state_history(cfg))  # newest first
        assert saver.diff(history[2].config, history[1].config) == {
            "added": [],
            "modified": ["count", "log"],
            "removed": [],
        }
        first_with_values = history[-2].config  # after the input: log and count appear
        assert saver.diff(history[-1].config, first_with_values)["added"] == ["count", "log"]


def test_the_official_checkpointer_conformance_suite_passes_in_full(tmp_path):
    conformance = pytest.importorskip("langgraph.checkpoint.conformance")
    import asyncio

    @conformance.checkpointer_test(name="JournalSaver")
    async def saver():
        j = Journal.open(tmp_path / f"c{id(object())}.db", ThreadState)
        yield JournalSaver(j)
        j.close()

    report = asyncio.run(conformance.validate(saver, progress=None))
    assert report.passed_all_base() and report.passed_all(), report.to_dict()
    assert report.conformance_level() == "FULL"


def test_langchain_snapshots_auto_snapshot_and_resume(tmp_path):
    pytest.importorskip("langchain_core")
    import asyncio

    from langchain_core.messages import AIMessage, HumanMessage

    from workbench.adapters.langchain import ChatState, JournalChatHistory

    path = tmp_path / "chat.db"
    with Journal.open(path, ChatState) as j:
        h = JournalChatHistory(j, auto_snapshot=True, snapshot_every=2)
        h.add_messages([HumanMessage("a")])
        h.add_messages([AIMessage("b")])  # 2 messages: an automatic snapshot
        h.add_messages([HumanMessage("c")])
        mine = asyncio.run(h.snapshot("after-c"))
        h.add_messages([AIMessage("d")])  # the fourth: another automatic one
        tags = j.storage.tags()
        assert len(tags) == 3 and mine.messages == 3
    with Journal.open(path, ChatState) as j:  # a restart
        resumed = JournalChatHistory.from_snapshot(j, mine.id)
        assert [m.content for m in resumed.messages] == ["a", "b", "c"]
        assert resumed.branch.id != 0  # the conversation had moved on: a fork from there
        resumed.add_messages([AIMessage("e")])
        assert [m.content for m in JournalChatHistory(j).messages] == ["a", "b", "c", "d"]
        by_label = JournalChatHistory.from_snapshot(j, "after-c")
        assert len(by_label.messages) == 3
        with pytest.raises(Exception, match="snapshot_every"):
            JournalChatHistory(j, snapshot_every=0)


def test_chat_histories_and_langgraph_threads_share_one_journal(tmp_path):
    pytest.importorskip("langchain_core")
    from langchain_core.messages import HumanMessage

    from workbench.adapters.langchain import JournalChatHistory
    from workbench.adapters.states import SharedState

    with Journal.open(tmp_path / "both.db", SharedState) as j:
        chat = JournalChatHistory(j, j.root().fork_at(0, name="chat").id)
        chat.add_messages([HumanMessage("hello")])
        saver = JournalSaver(j)
        graph = build(saver)
        cfg = {"configurable": {"thread_id": "t"}}
        graph.invoke({"log": [], "count": 1}, cfg)
        assert graph.get_state(cfg).values["count"] == 25
        assert [m.content for m in chat.messages] == ["hello"]
        assert j.branch("langgraph:t").state().messages == []
        assert j.verify().ok


# -- the StateForge adapters (workbench.compat.stateforge.adapters) --------------------------


def test_stateforge_checkpointer_behaves_like_langgraphs_own(tmp_path):
    from workbench.compat.stateforge import StateForge
    from workbench.compat.stateforge.adapters.langgraph import StateForgeCheckpointer

    expected = run_scenario(InMemorySaver())
    with StateForge(tmp_path / "sf.db") as sf:
        assert run_scenario(StateForgeCheckpointer(sf)) == expected
        assert sf.journal.verify().ok
    with StateForge(tmp_path / "sf.db") as sf:  # a restart: the same thread, now a session
        saver = StateForgeCheckpointer(sf)
        cfg = {"configurable": {"thread_id": "t1"}}
        history = list(build(saver).get_state_history(cfg))
        assert history[0].values["log"] == expected[3]["log"]
        (session,) = sf.sessions_sync()
        assert session.label == "t1" and len(sf.snapshots_sync(session.id)) == len(history)
        cids = [h.config["configurable"]["checkpoint_id"] for h in history]
        d = sf.diff_sync(cids[1], cids[0])  # checkpoint ids name their snapshots
        assert [b.key for _, b in d.modified] == ["count", "log"] and d.added == d.removed == []
        saver.copy_thread("t1", "t2")
        copied = build(saver).get_state({"configurable": {"thread_id": "t2"}})
        assert copied.values == history[0].values
        assert sorted(s.label for s in sf.sessions_sync()) == ["t1", "t2"]


def test_stateforge_checkpointer_passes_the_conformance_suite(tmp_path):
    conformance = pytest.importorskip("langgraph.checkpoint.conformance")
    import asyncio

    from workbench.compat.stateforge import StateForge
    from workbench.compat.stateforge.adapters.langgraph import StateForgeCheckpointer

    @conformance.checkpointer_test(name="StateForgeCheckpointer")
    async def saver():
        sf = StateForge(tmp_path / f"c{id(object())}.db")
        yield StateForgeCheckpointer(sf)
        await sf.close()

    report = asyncio.run(conformance.validate(saver, progress=None))
    assert report.passed_all_base() and report.passed_all(), report.to_dict()
    assert report.conformance_level() == "FULL"


def test_stateforge_message_history_snapshots_every_n_calls_and_resumes(tmp_path):
    pytest.importorskip("langchain_core")
    import asyncio

    from langchain_core.messages import AIMessage, HumanMessage

    from workbench.compat.stateforge import StateForge
    from workbench.compat.stateforge.adapters.langchain import StateForgeMessageHistory

    async def talk() -> tuple[str, str]:
        sf = StateForge(tmp_path / "chat.db")
        s = await sf.create_session(label="chat")
        h = StateForgeMessageHistory(
            session_id=s.id, stateforge=sf, auto_snapshot=True, snapshot_every=2
        )
        await h.aadd_messages([HumanMessage("a"), AIMessage("b")])  # call 1
        assert await sf.head(s.id) is None
        await h.aadd_messages([HumanMessage("c")])  # call 2: a snapshot of all three
        auto = await sf.head(s.id)
        h.add_messages([AIMessage("d")])  # the sync twin works outside a loop's thread too
        mine = await h.snapshot(label="mine")
        await h.aclear()
        assert h.messages == [] and (await sf.get_units((await sf.head(s.id)).id)) == []
        await sf.close()
        return auto.id, mine.id

    auto_id, mine_id = asyncio.run(talk())

    async def resume() -> tuple[list[str], list[str]]:
        sf = StateForge(tmp_path / "chat.db")
        (s,) = await sf.sessions()
        at_auto = await StateForgeMessageHistory.from_snapshot(s.id, sf, auto_id)
        at_mine = await StateForgeMessageHistory.from_snapshot(
            session_id=s.id, stateforge=sf, snapshot_id=mine_id
        )
        await at_mine.aadd_messages([HumanMessage("e")])  # continues the numbering
        await at_mine.snapshot()
        keys = [u.key for u in await sf.get_units((await sf.head(s.id)).id)]
        await sf.close()
        return [m.content for m in at_auto.messages], [m.content for m in at_mine.messages] + keys

    at_auto, at_mine = asyncio.run(resume())
    assert at_auto == ["a", "b", "c"]
    assert at_mine == ["a", "b", "c", "d", "e", "msg:0", "msg:1", "msg:2", "msg:3", "msg:4"]
