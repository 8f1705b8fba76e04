"""The StateForge drop-in (``workbench.compat.stateforge``): programs written against the
design's API run with only their import lines changed; its names and errors, the ``stateforge``
command, and coroutines that leave the event loop free."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import operator
import os
import re
import shutil
import sqlite3
import struct
import subprocess
import sys
import textwrap
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, TypedDict

import blake3
import pytest
from cli import lithify, stateforge

from workbench.compat.stateforge import (
    AmbiguousRefError,
    CrossSessionRollbackError,
    EncryptionKeyError,
    MemoryDiff,
    MemoryUnit,
    MemoryUnitType,
    SessionNotFoundError,
    SnapshotNotFoundError,
    StateForge,
    StateForgeError,
    ValueTypeError,
    units,
)
from workbench.errors import Busy, InvalidValue, NotAJournal, NotFound
from workbench.events import canonical
from workbench.units import Unit


class AgentState(TypedDict):
    """The graph state the LangGraph block names (the design leaves it to the user)."""

    log: Annotated[list[str], operator.add]
    count: int


# -- programs written against the design's API: only their import lines change --------------
# (our own examples of the documented calls, not copies of anyone's text)

QUICKSTART = """
import asyncio
from stateforge import StateForge, units

async def main():
    sf = StateForge(db_path="agent.db")
    session = await sf.create_session(label="my-agent-run")
    first = await sf.snapshot(
        session.id,
        units=[
            units.message(session.id, key="msg:0", value="hello", source="user"),
            units.kv(session.id, key="goal", value={"task": "summarize"}, source="agent"),
        ],
        label="initial",
    )
    second = await sf.snapshot(
        session.id,
        units=[
            units.message(session.id, key="msg:0", value="hello", source="user"),
            units.message(session.id, key="msg:1", value="working on it", source="agent"),
            units.kv(session.id, key="goal",
                     value={"task": "summarize", "progress": 0.5}, source="agent"),
        ],
        label="after-step-1",
    )
    d = await sf.diff(first.id, second.id)
    print(f"added: {len(d.added)} modified: {len(d.modified)} removed: {len(d.removed)}")
    # → added: 1 modified: 1 removed: 0
    back = await sf.rollback(session.id, to_snapshot_id=first.id, label="undo")
    head = await sf.head(session.id)
    assert head.id == back.id  # a rollback appends; both earlier snapshots stay readable
    await sf.close()

asyncio.run(main())
"""

CLI_SESSION = """
stateforge sessions list
stateforge snapshots list --session run-1
stateforge snapshot show head --session run-1
stateforge snapshot show head~1 --session run-1
stateforge diff head~1 head --session run-1
stateforge rollback --session run-1 --to initial
stateforge history --session run-1
stateforge provenance <unit_id>
stateforge vacuum
"""

HISTORY_EXAMPLE = """
$ stateforge --db agent.db history --session demo
History for session demo (2 snapshots, head → root)
      head  0a1b2c3d  step-1     2026-11-30T09:15:02+00:00
    head~1  4e5f6a7b  initial    2026-11-30T09:15:01+00:00
"""

LANGCHAIN = """
from stateforge import StateForge
from stateforge.adapters.langchain import StateForgeMessageHistory
from langchain_core.messages import HumanMessage, AIMessage

sf = StateForge("agent.db")
session = await sf.create_session(label="support-chat")
history = StateForgeMessageHistory(
    session_id=session.id, stateforge=sf, auto_snapshot=True, snapshot_every=5
)
await history.aadd_messages([HumanMessage(content="Hi"), AIMessage(content="Hello!")])
"""

LANGGRAPH = """
from stateforge import StateForge
from stateforge.adapters.langgraph import StateForgeCheckpointer
from langgraph.graph import StateGraph

sf = StateForge("agent.db")
checkpointer = StateForgeCheckpointer(sf)
graph = StateGraph(AgentState)
# NODES
app = graph.compile(checkpointer=checkpointer)
"""


def port(code: str) -> str:
    """What a user of the design changes: the import lines, and nothing else."""
    out = re.sub(
        r"^(\s*)from stateforge\b", r"\1from workbench.compat.stateforge", code, flags=re.M
    )
    before, after = code.splitlines(), out.splitlines()
    changed = [b for a, b in zip(before, after, strict=True) if a != b]
    assert changed and all(line.lstrip().startswith("from ") for line in changed)
    return out


def run(code: str, where: Path, monkeypatch: pytest.MonkeyPatch, **names: object) -> dict:
    """Execute ported code in ``where`` (its files land there); returns its namespace."""
    monkeypatch.chdir(where)
    namespace: dict = {"__name__": "design_example", **names}
    exec(compile(code, "<ported program>", "exec"), namespace)
    return namespace


def test_the_quickstart_prints_what_the_design_prints(tmp_path, monkeypatch, capsys) -> None:
    run(port(QUICKSTART), tmp_path, monkeypatch)
    printed = capsys.readouterr().out.splitlines()
    promised = re.search(r"# → (.*)", QUICKSTART)
    assert promised and printed == [promised.group(1)]
    with StateForge(tmp_path / "agent.db") as sf:
        (s,) = sf.sessions_sync()
        assert [x.label for x in sf.history_sync(s.id)] == ["undo", "after-step-1", "initial"]


def test_the_langchain_block_runs_and_resumes_after_a_restart(tmp_path, monkeypatch) -> None:
    pytest.importorskip("langchain_core")
    body = textwrap.indent(port(LANGCHAIN), "    ")
    code = f"async def main():\n{body}\n    return locals()\n"
    ns = run(code, tmp_path, monkeypatch)
    made = asyncio.run(ns["main"]())
    history, sf = made["history"], made["sf"]

    async def more() -> list[str]:
        assert [m.content for m in history.messages] == ["Hi", "Hello!"]
        snap = await history.snapshot()  # auto_snapshot: 5 calls; explicitly now
        assert [u.source_ref for u in await sf.get_units(snap.id)] == ["human", "ai"]
        await sf.close()
        again = StateForge("agent.db")  # a restart
        resumed = await made["StateForgeMessageHistory"].from_snapshot(
            session_id=made["session"].id, stateforge=again, snapshot_id=snap.id
        )
        await again.close()
        return [m.content for m in resumed.messages]

    assert asyncio.run(more()) == ["Hi", "Hello!"]


def test_the_langgraph_block_diffs_checkpoints_by_field(tmp_path, monkeypatch) -> None:
    pytest.importorskip("langgraph")
    nodes = (
        'graph.add_node("a", lambda s: {"log": ["a"], "count": s["count"] + 1})\n'
        'graph.add_node("b", lambda s: {"count": s["count"] * 10})\n'
        'graph.add_edge("__start__", "a")\n'
        'graph.add_edge("a", "b")\n'
    )
    code = port(LANGGRAPH).replace("# NODES\n", nodes)
    ns = run(code, tmp_path, monkeypatch, AgentState=AgentState)
    app, sf = ns["app"], ns["sf"]
    cfg = {"configurable": {"thread_id": "t1"}}
    assert app.invoke({"log": [], "count": 1}, cfg) == {"log": ["a"], "count": 20}
    ids = [h.config["configurable"]["checkpoint_id"] for h in app.get_state_history(cfg)]
    last = sf.diff_sync(ids[1], ids[0])  # node b: count only
    assert [b.key for _, b in last.modified] == ["count"] and not last.added
    first = sf.diff_sync(ids[-1], ids[-2])  # the input arrives: both fields appear
    assert sorted(u.key for u in first.added) == ["count", "log"]
    assert [s.label for s in sf.sessions_sync()] == ["t1"]
    resumed = asyncio.run(app.ainvoke(None, cfg))  # async, through the store's worker
    assert resumed == {"log": ["a"], "count": 20}
    sf.close_sync()


def design_data(db: Path, label: str = "run-1") -> str:
    """A session with two snapshots, "initial" and "step-1"; returns a unit id."""
    with StateForge(db) as sf:
        s = sf.create_session_sync(label=label)
        first = units.kv(s.id, "goal", {"task": "summarize"}, source="agent")
        sf.snapshot_sync(s.id, units=[first], label="initial")
        nxt = units.kv(s.id, "goal", {"task": "summarize", "progress": 0.5}, source="agent")
        sf.snapshot_sync(s.id, units=[nxt], label="step-1")
        return first.id


def run_cli_session(db: Path, runner) -> None:  # type: ignore[no-untyped-def]
    unit_id = design_data(db)
    env = {**os.environ, "STATEFORGE_DB": str(db)}
    outs = []
    for line in CLI_SESSION.strip().splitlines():
        args = line.replace("<unit_id>", unit_id).split()[1:]
        r = runner(args, env, "y\n" if args[0] == "rollback" else None)
        assert r.returncode == 0, (line, r.stdout, r.stderr)
        outs.append(r.stdout)
        if args[0] != "rollback":  # --json on each: one JSON document
            doc = json.loads(runner(["--json", *args], env, None).stdout)
            assert doc is not None
    listed, snaps, head, head1, diff, back, hist, prov, vac = outs
    assert "run-1" in listed and "initial" in snaps and "step-1" in snaps
    assert "label:     step-1" in head and "label:     initial" in head1
    assert diff.startswith("added: 0  modified: 1  removed: 0")
    assert back.startswith("rolled back session run-1 to ")
    assert hist.splitlines()[0] == "History for session run-1 (3 snapshots, head → root)"
    assert prov.startswith(f"Provenance for unit {unit_id}\n  source:      agent\n")
    assert vac.strip() == "vacuum complete"


def test_the_cli_session_runs(tmp_path: Path) -> None:
    def here(args, env, stdin):  # type: ignore[no-untyped-def]
        return stateforge(*args, env=env, input=stdin)

    run_cli_session(tmp_path / "cli.db", here)


@pytest.mark.slow
def test_the_cli_session_runs_through_the_console_script(tmp_path: Path) -> None:
    exe = shutil.which("stateforge", path=os.path.dirname(sys.executable))
    assert exe, "pip install -e . puts the stateforge script beside python"

    def script(args, env, stdin):  # type: ignore[no-untyped-def]
        return subprocess.run(
            [exe, *args], env=env, input=stdin or "", capture_output=True, text=True
        )

    run_cli_session(tmp_path / "cli.db", script)


def test_history_prints_the_designs_lines(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    design_data(db, label="demo")
    command, *expected = HISTORY_EXAMPLE.strip().splitlines()
    got = stateforge(*command.split()[2:], env={"STATEFORGE_DB": "unused"}, cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    with StateForge(db) as sf:
        ids = [x.short_id for x in sf.history_sync("demo")]
    id_, time_ = (
        re.compile(r"\b[0-9a-f]{8}\b"),
        re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00"),
    )

    def masked(lines: list[str]) -> list[str]:
        return [time_.sub("TIME", id_.sub("ID", x)) for x in lines]

    lines = got.stdout.splitlines()
    assert masked(lines) == masked(expected)  # the same text, column for column
    assert [id_.findall(x)[0] for x in lines[1:]] == ids


def test_the_design_options_and_variables(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    design_data(db)
    listed = json.loads(
        stateforge("--json", "sessions", "list", env={"STATEFORGE_DB": str(db)}).stdout
    )
    assert [s["label"] for s in listed] == ["run-1"] and listed[0]["head_snapshot_id"]
    anywhere = stateforge("sessions", "list", "--db", str(db), "--json")
    assert json.loads(anywhere.stdout) == listed
    lithify_too = lithify("--json", "sessions", "list", env={"STATEFORGE_DB": str(db)})
    assert [s["label"] for s in json.loads(lithify_too.stdout)] == ["run-1"]
    no = stateforge("rollback", "--session", "run-1", "--to", "initial", "--db", str(db))
    assert no.returncode == 1 and "aborted" in no.stderr  # asks first; no answer is no
    shown = json.loads(
        stateforge("--db", str(db), "--json", "snapshot", "show", "initial", "-s", "run-1").stdout
    )
    assert shown["snapshot"]["label"] == "initial" and shown["units"][0]["session_id"]
    missing = stateforge("--db", str(db), "--json", "history", "--session", "nobody")
    assert missing.returncode == 1 and json.loads(missing.stdout)["kind"] == "SessionNotFoundError"
    head = stateforge("--db", str(db), "snapshot", "show", "head")
    assert head.returncode == 2 and "session" in head.stderr
    gone = stateforge("--db", str(tmp_path / "none.db"), "sessions", "list")
    assert gone.returncode == 1 and "STATEFORGE_DB" in gone.stderr
    assert not (tmp_path / "none.db").exists()  # a read leaves no file behind


# -- the names ------------------------------------------------------------------------------


@pytest.fixture
def sf(tmp_path: Path):
    forge = StateForge(db_path=tmp_path / "n.db")
    yield forge
    forge.close_sync()


@pytest.mark.parametrize("bad", [b"bytes", datetime.now(), {1, 2}, object()])
def test_a_value_that_is_not_json_is_a_value_type_error(sf: StateForge, bad: object) -> None:
    s = sf.create_session_sync("v")
    with pytest.raises(ValueTypeError) as caught:
        units.kv(s.id, "k", {"x": bad})
    assert isinstance(caught.value, InvalidValue) and isinstance(caught.value, StateForgeError)
    with pytest.raises(ValueTypeError):
        sf.snapshot_sync(s.id, [], metadata={"when": bad})
    assert sf.head_sync(s.id) is None  # refused before anything was written


def test_a_wrong_or_missing_key_is_an_encryption_key_error(tmp_path: Path) -> None:
    pytest.importorskip("sqlcipher3")
    path = tmp_path / "secret.db"
    with StateForge(path, encryption_key="right") as sf:
        sf.create_session_sync("secret")
    listed = stateforge("--db", str(path), "sessions", "list", env={"STATEFORGE_KEY": "right"})
    assert listed.returncode == 0 and "secret" in listed.stdout
    keyless = stateforge("--json", "--db", str(path), "sessions", "list", env={})
    assert json.loads(keyless.stdout)["kind"] == "EncryptionKeyError"
    for key in ("wrong", None):
        with pytest.raises(EncryptionKeyError) as caught:
            StateForge(path, encryption_key=key)
        assert isinstance(caught.value, NotAJournal)
    plain = tmp_path / "plain.db"
    StateForge(plain).close_sync()
    with pytest.raises(NotAJournal):  # a key for a plain file: the same except clause
        StateForge(plain, encryption_key="any")


def test_sessions_snapshots_and_rollback_by_the_designs_names(sf: StateForge) -> None:
    s = sf.create_session_sync("names", metadata={"owner": "me"})
    assert s.head_snapshot_id is None and s.metadata == {"owner": "me"}
    one = sf.snapshot_sync(s.id, [units.kv(s.id, "x", 1)], label="one", metadata={"step": 1})
    two = sf.snapshot_sync(s.id, [units.kv(s.id, "x", 2)])
    assert sf.get_session_sync(s.id).head_snapshot_id == two.id and one.metadata == {"step": 1}
    assert two.parent_id == one.id and isinstance(two.created_at, datetime)
    back = sf.rollback_sync(s.id, to=one)
    assert back.label == f"rollback to {one.short_id}" and back.rollback_of == one.id
    assert [u.value for u in sf.get_units_sync(back.id)] == [1]
    assert [x.id for x in sf.list_snapshots_sync(s.id, limit=2)] == [back.id, two.id]
    d = sf.diff_sync(two, one)
    assert isinstance(d, MemoryDiff) and d.from_snapshot_id == two.id
    assert [e.change for e in d.entries()] == ["modified"]
    other = sf.create_session_sync("other")
    with pytest.raises(CrossSessionRollbackError):
        sf.rollback_sync(other.id, to=one)
    with pytest.raises(SessionNotFoundError):
        sf.get_session_sync("nobody")
    with pytest.raises(SnapshotNotFoundError):
        sf.get_snapshot_sync("head~9", s.id)
    assert issubclass(SessionNotFoundError, NotFound) and issubclass(
        AmbiguousRefError, InvalidValue
    )


def test_units_carry_created_at_and_the_latest_wins(sf: StateForge) -> None:
    s = sf.create_session_sync("time")
    early = datetime(2026, 1, 1, tzinfo=UTC)
    older = dataclasses.replace(units.kv(s.id, "k", "old"), created_at=early)
    newer = dataclasses.replace(units.kv(s.id, "k", "new"), created_at=early + timedelta(1))
    snap = sf.snapshot_sync(s.id, [newer, older])  # the newer first in the list: still wins
    (held,) = sf.get_units_sync(snap.id)
    assert held.value == "new" and held.created_at == newer.created_at
    assert held.type == MemoryUnitType.KV and held.type.value == "kv" and held.session_id == s.id
    assert isinstance(held, MemoryUnit) and units.kv(s.id, "k", 1).created_at is not None
    assert sf.get_unit_sync(held.id) == held


def test_an_embedding_reads_back_as_the_floats_it_was_given(sf: StateForge) -> None:
    s = sf.create_session_sync("vectors")
    floats = [0.1, 1 / 3, -2.5e-8, 1.0]
    by_value = units.embedding(s.id, key="e", value=floats, source="model")
    with_text = units.embedding(s.id, key="t", vector=floats, value="the text it embeds")
    assert by_value.embedding == floats and isinstance(by_value.embedding, list)
    snap = sf.snapshot_sync(s.id, [by_value, with_text])
    got = {u.key: u for u in sf.get_units_sync(snap.id)}
    # every bit of every float64, as a list (the design's type), not a packed dict
    assert got["e"].embedding == got["e"].value == floats
    assert all(type(x) is float for x in got["e"].embedding)
    assert got["t"].embedding == floats and got["t"].value == "the text it embeds"
    assert sf.get_unit_sync(got["e"].id) == got["e"] == by_value
    shown = stateforge(
        "--json", "--db", str(sf.journal.path), "snapshot", "show", "head", "--session", s.id
    )
    assert shown.returncode == 0, shown.stderr
    docs = {u["key"]: u for u in json.loads(shown.stdout)["units"]}
    assert docs["e"]["embedding"] == floats and docs["t"]["embedding"] == floats


def test_float32_packing_is_an_explicit_option(sf: StateForge) -> None:
    s = sf.create_session_sync("packed")
    floats = [0.1, 1 / 3, -2.5e-8]
    exact = units.embedding(s.id, key="e64", value=floats)
    packed = units.embedding(s.id, key="e32", value=floats, dtype="float32")
    rounded = [struct.unpack("<f", struct.pack("<f", x))[0] for x in floats]
    assert packed.embedding == packed.value == rounded and packed.embedding != floats
    stored = (packed.stored()["embedding"], exact.stored()["embedding"])
    assert stored[1] == floats and len(json.dumps(stored[0])) < len(json.dumps(stored[1]))
    snap = sf.snapshot_sync(s.id, [exact, packed])
    got = {u.key: u for u in sf.get_units_sync(snap.id)}
    assert got["e32"] == packed and got["e32"].embedding == rounded
    assert got["e64"].embedding == floats
    again = Unit.from_json(packed.to_json())  # the JSON round trip keeps the id
    assert again == packed and again.embedding == rounded
    with pytest.raises(InvalidValue, match="float32 or float64"):
        units.embedding(s.id, key="x", value=floats, dtype="float16")


def test_a_journal_that_stored_packed_float32_still_reads_as_floats(sf: StateForge) -> None:
    """Journals written before embeddings were lists hold ``{"@f32": base64}``: they read
    back as lists of floats, under the ids they were stored with."""
    s = sf.create_session_sync("old")
    body = {
        "session": s.id,
        "key": "e",
        "type": "embedding",
        "value": None,
        "source": "model",
        "metadata": {},
        "embedding": {"@f32": base64.b64encode(struct.pack("<2f", 0.5, 0.1)).decode()},
    }
    uid = "u" + blake3.blake3(canonical(body).encode()).hexdigest()[:32]
    b = sf._branch(s.id)
    old = sf.append_snapshot_delta(b, {"op": "snapshot", "put": [{"id": uid, **body}], "drop": []})
    (held,) = sf.get_units_sync(old.id)
    point_one = struct.unpack("<f", struct.pack("<f", 0.1))[0]
    assert held.id == uid and held.embedding == held.value == [0.5, point_one]
    assert sf.get_unit_sync(uid).embedding == [0.5, point_one]
    shown = stateforge(
        "--json", "--db", str(sf.journal.path), "snapshot", "show", "head", "--session", s.id
    )
    assert json.loads(shown.stdout)["units"][0]["embedding"] == [0.5, point_one]
    later = sf.snapshot_sync(s.id, [held, units.kv(s.id, "k", 1)])  # kept as stored: unchanged
    d = sf.diff_sync(old.id, later.id)
    assert [u.key for u in d.added] == ["k"] and d.modified == []


def test_two_stores_on_one_file_take_turns_on_a_session(tmp_path: Path) -> None:
    one, two = StateForge(tmp_path / "two.db"), StateForge(tmp_path / "two.db")
    s = one.create_session_sync("turns")
    made = []
    for i in range(3):
        made.append(one.snapshot_sync(s.id, [units.kv(s.id, "one", i)]))
        made.append(two.snapshot_sync(s.id, [units.kv(s.id, "two", i)]))
    assert [m.parent_id for m in made[1:]] == [m.id for m in made[:-1]]  # each saw the other
    assert one.snapshots_sync(s.id) == two.snapshots_sync(s.id) == made
    assert [u.key for u in one.get_units_sync(made[-1].id)] == ["two"]
    one.close_sync()
    two.close_sync()


# -- coroutines that are coroutines ---------------------------------------------------------


def test_a_ticker_keeps_ticking_during_100_awaited_snapshots(tmp_path: Path) -> None:
    async def main() -> int:
        sf = StateForge(tmp_path / "t.db")
        s = await sf.create_session("tick")
        ticks, running = 0, True

        async def ticker() -> None:
            nonlocal ticks
            while running:
                await asyncio.sleep(0.001)
                ticks += 1

        task = asyncio.create_task(ticker())
        await asyncio.sleep(0)  # the ticker starts
        start = ticks
        for i in range(100):
            await sf.snapshot(s.id, [units.kv(s.id, "n", i)])
        during = ticks - start
        running = False
        await task
        await sf.close()
        return during

    during = asyncio.run(main())
    print(f"a 1 ms ticker advanced {during} times during 100 awaited snapshots")
    assert during >= 10  # blocking calls wrapped in coroutines: 0


@pytest.mark.parametrize("effects", [False, True], ids=["sessions", "unindexed-effects"])
def test_vacuum_on_a_locked_journal_waits_one_busy_timeout_then_fails_busy(
    tmp_path: Path, effects: bool
) -> None:
    # It waited twice (three times with effects to index): a TRUNCATE checkpoint waited out the
    # timeout and said so only in a result row, then VACUUM waited again (and before both, the
    # intent log's compaction swallowed a Busy from the effect index's catch-up).
    db = tmp_path / "v.db"
    with StateForge(db) as sf:
        s = sf.create_session_sync(label="run")
        sf.snapshot_sync(s.id, units=[units.kv(s.id, "goal", {"task": "x"})], label="one")
        if effects:
            sf.effect_sync(s.id, "tool:a", lambda: 1)
    timeout = 1.0
    holder = sqlite3.connect(db, isolation_level=None)  # another connection holds the lock
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT OR REPLACE INTO meta VALUES ('held', '1')")
    sf = StateForge(db, pragmas={"busy_timeout": str(int(timeout * 1000))})
    try:
        started = time.monotonic()
        with pytest.raises(Busy, match="locked"):
            sf.vacuum_sync()
        waited = time.monotonic() - started
        assert waited < 1.5 * timeout, f"waited {waited:.2f} s for a {timeout} s timeout"
        holder.execute("ROLLBACK")
        sf.vacuum_sync()  # released: it runs
        assert [x.label for x in sf.snapshots_sync(s.id)] == ["one"]
    finally:
        sf.close_sync()
        holder.close()


def test_the_loop_runs_while_the_store_works(tmp_path: Path) -> None:
    """A store call that can only finish if the loop runs meanwhile: the loop sets the event
    the call waits for (inline on the loop, the call waits out its timeout instead)."""

    async def main() -> bool:
        sf = StateForge(tmp_path / "w.db")
        s = await sf.create_session("work")
        released = threading.Event()

        async def release() -> None:
            await asyncio.sleep(0)
            released.set()

        task = asyncio.create_task(release())
        got = await sf.effect(s.id, "tool:slow", lambda: released.wait(timeout=5))
        await task
        await sf.close()
        return bool(got)

    assert asyncio.run(main()) is True
