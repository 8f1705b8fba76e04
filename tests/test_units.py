"""Sessions, memory units and snapshots (``workbench.units``, ``workbench.compat.stateforge``):
the design's quickstart with one import changed, identity and latest-wins rules, refs,
rollback, exact provenance, encryption, a crash mid-snapshot, and the session CLI."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli import lithify

from workbench import Journal
from workbench.compat.stateforge import StateForge, units
from workbench.errors import InvalidValue, NotFound
from workbench.units import SessionState

QUICKSTART = """
import asyncio
from workbench.compat.stateforge import StateForge, units

async def main():
    sf = StateForge(db_path="agent.db")
    session = await sf.create_session(label="my-agent-run")
    snap1 = await sf.snapshot(session.id, units=[
        units.message(session.id, key="msg:0", value="hello", source="user"),
        units.kv(session.id, key="goal", value={"task": "summarize"}, source="agent"),
    ], label="initial")
    snap2 = await sf.snapshot(session.id, units=[
        units.message(session.id, key="msg:0", value="hello", source="user"),
        units.message(session.id, key="msg:1", value="working on it", source="agent"),
        units.kv(session.id, key="goal", value={"task": "summarize", "progress": 0.5},
                 source="agent"),
    ], label="after-step-1")
    d = await sf.diff(snap1.id, snap2.id)
    print(f"added: {len(d.added)} modified: {len(d.modified)} removed: {len(d.removed)}")
    snap3 = await sf.rollback(session.id, to_snapshot_id=snap1.id, label="undo")
    assert (await sf.head(session.id)).id == snap3.id
    await sf.close()

asyncio.run(main())
"""


@pytest.mark.slow
def test_the_quickstart_runs_with_only_the_import_changed(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", QUICKSTART], cwd=tmp_path, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "added: 1 modified: 1 removed: 0"
    db = str(tmp_path / "agent.db")
    sessions = json.loads(lithify("--json", "--db", db, "sessions", "list").stdout)
    (s,) = sessions
    hist = lithify("--db", db, "history", "--session", "my-agent-run")
    lines = hist.stdout.splitlines()
    assert hist.returncode == 0 and len(lines) == 3
    assert lines[0].startswith("head ") and "undo" in lines[0]
    assert lines[1].startswith("head~1") and "after-step-1" in lines[1]
    assert "+00:00" in lines[2] and "initial" in lines[2]
    rows = json.loads(lithify("--json", "--db", db, "history", "--session", s["id"]).stdout)
    assert [r["label"] for r in rows] == ["undo", "after-step-1", "initial"]
    assert rows[0]["rollback_of"] == rows[2]["id"] and rows[0]["units"] == rows[2]["units"]


@pytest.fixture
def sf(tmp_path: Path):
    forge = StateForge(db_path=tmp_path / "u.db")
    yield forge
    forge.close_sync()


def test_identity_latest_wins_and_what_counts_as_modified(sf: StateForge) -> None:
    s = sf.create_session_sync("rules")
    one = sf.snapshot_sync(
        s.id,
        [
            units.kv(s.id, key="k", value=1),
            units.message(s.id, key="k", value="same key, another type"),
            units.kv(s.id, key="k", value=2),  # one identity twice: the later wins
            units.embedding(s.id, key="e", vector=[0.5, 0.25], value="text"),
        ],
    )
    held = {u.identity: u for u in sf.units_of_sync(one.id)}
    assert set(held) == {"kv/k", "message/k", "embedding/e"} and held["kv/k"].value == 2
    two = sf.snapshot_sync(
        s.id,
        [
            units.kv(s.id, key="k", value=2, source="someone else"),  # source only: same
            units.message(s.id, key="k", value="same key, another type", metadata={"lang": "en"}),
            units.embedding(s.id, key="e", vector=[0.5, 0.125], value="text"),
        ],
    )
    d = sf.diff_sync(one.id, two.id)
    assert sorted(a.identity for a, _ in d.modified) == ["embedding/e", "message/k"]
    assert d.added == [] and d.removed == []
    assert str(d) == "added: 0 modified: 2 removed: 0"


def test_values_are_checked_before_anything_is_written(sf: StateForge) -> None:
    s = sf.create_session_sync()
    with pytest.raises(InvalidValue, match="value"):
        units.kv(s.id, key="bad", value={"x": {1, 2}})
    with pytest.raises(InvalidValue, match="type"):
        units.Unit(session=s.id, key="k", type="blob", value=1)
    other = sf.create_session_sync()
    with pytest.raises(InvalidValue, match="belongs to session"):
        sf.snapshot_sync(s.id, [units.kv(other.id, key="k", value=1)])
    assert sf.head_sync(s.id) is None


def test_refs_head_labels_ids_and_prefixes(sf: StateForge) -> None:
    s = sf.create_session_sync("refs")
    snaps = [
        sf.snapshot_sync(s.id, [units.kv(s.id, key="n", value=i)], label=f"step-{i}")
        for i in range(4)
    ]
    assert sf.get_snapshot_sync("head", s.id) == snaps[-1]
    assert sf.get_snapshot_sync("head~2", s.id) == snaps[1]
    assert sf.get_snapshot_sync("step-0", s.id) == snaps[0]
    assert sf.get_snapshot_sync(snaps[2].id[:8]) == snaps[2]
    assert sf.get_snapshot_sync(snaps[2].id) == snaps[2]
    assert sf.get_session_sync("refs").id == s.id
    with pytest.raises(NotFound):
        sf.get_snapshot_sync("head~9", s.id)
    with pytest.raises(NotFound):
        sf.get_snapshot_sync("nope", s.id)
    with pytest.raises(InvalidValue, match="relative to a session"):
        sf.get_snapshot_sync("head")
    assert [x["label"] for x in sf.labels_sync(s.id)] == [f"step-{i}" for i in range(4)]


def test_rollback_appends_and_never_deletes(sf: StateForge) -> None:
    s = sf.create_session_sync()
    a = sf.snapshot_sync(s.id, [units.kv(s.id, key="x", value=1)], label="a")
    b = sf.snapshot_sync(s.id, [units.kv(s.id, key="x", value=2), units.kv(s.id, key="y", value=3)])
    c = sf.rollback_sync(s.id, "a", label="back")
    assert sf.head_sync(s.id) == c and c.rollback_of == a.id and c.unit_ids == a.unit_ids
    assert [x.id for x in sf.snapshots_sync(s.id)] == [a.id, b.id, c.id]
    assert [u.value for u in sf.units_of_sync(b.id)] == [2, 3]  # b is still there
    assert sf.journal.verify().ok


def test_units_are_stored_once_and_a_fork_of_a_session_inherits_them(sf: StateForge) -> None:
    s = sf.create_session_sync()
    many = [units.kv(s.id, key=f"k{i}", value="x" * 50) for i in range(100)]
    sf.snapshot_sync(s.id, many)
    first = sf.head_sync(s.id)
    assert first is not None
    for step in range(20):
        changed = [*many[1:], units.kv(s.id, key="k0", value=step)]
        snap = sf.snapshot_sync(s.id, changed)
    rec = sf.journal.record((snap.branch, snap.seq))
    assert len(rec.payload["put"]) == 1 and rec.payload["drop"] == []  # only what changed
    stored = sf.journal.storage.events([(snap.branch, first.seq + 1, None)], 0, snap.seq)
    assert len(stored) == 20 and max(len(e.payload) for e in stored) < 400  # one unit each
    fork = sf.journal.branch(snap.branch).fork_at(first.seq)  # a fork inherits the unit set
    assert len(fork.state().units) == 100


def test_provenance_links_the_effect_by_key_never_by_value(sf: StateForge, tmp_path) -> None:
    s = sf.create_session_sync()
    one = sf.effect_sync(s.id, "tool:count", lambda: 1)
    ten = sf.effect_sync(s.id, "tool:other", lambda: 10)
    u = units.tool_result(s.id, key="count", value=one, effect="tool:count")
    v = units.tool_result(s.id, key="ten", value=ten)  # no effect named: none credited
    snap = sf.snapshot_sync(s.id, [u, v])
    p = sf.provenance_sync(u.id)
    assert p["effect"]["key"] == "tool:count" and p["effect"]["result"] == 1
    assert p["snapshots"] == [snap.id] and p["written"]["pid"] is not None
    assert sf.provenance_sync(v.id)["effect"] is None
    with pytest.raises(NotFound):
        sf.provenance_sync("u" + "0" * 32)


def test_state_provenance_does_not_credit_a_result_by_substring(tmp_path: Path) -> None:
    from conftest import Ctx

    with Journal.open(tmp_path / "p.db", Ctx) as j:
        b = j.root()
        b.effect("tool:one", lambda: 1)
        b.apply({"x": 10})
        doc = j.provenance((0, 2), "items[0]")
        assert doc["chain"][0]["from_effects"] == []  # 1 is not 10
        b.effect("tool:ten", lambda: 10)
        b.apply({"x": 10})
        doc = j.provenance((0, 4), "items[1]")
        assert [e["key"] for e in doc["chain"][-1]["from_effects"]] == ["tool:ten"]


def test_an_encrypted_session_store(tmp_path: Path) -> None:
    pytest.importorskip("sqlcipher3")
    path = tmp_path / "secret.db"
    key = bytes(range(32))  # a raw key: no key derivation per open (passphrases: test_encryption)
    with StateForge(db_path=path, encryption_key=key) as sf:
        s = sf.create_session_sync()
        sf.snapshot_sync(s.id, [units.kv(s.id, key="card", value="4111-1111")])
    assert b"4111" not in path.read_bytes()
    with StateForge(db_path=path, encryption_key=key) as sf:
        (s,) = sf.sessions_sync()
        assert [u.value for u in sf.units_of_sync("head", s.id)] == ["4111-1111"]


def test_the_coroutines_and_their_sync_twins_agree(tmp_path: Path) -> None:
    async def run() -> tuple:
        sf = StateForge(db_path=tmp_path / "a.db")
        s = await sf.create_session("co")
        snap = await sf.snapshot(s.id, [units.summary(s.id, key="sum", value="short")])
        found = await sf.get_snapshot("head", s.id)
        listed = await sf.sessions()
        await sf.close()
        return s, snap, found, listed

    s, snap, found, listed = asyncio.run(run())
    assert found == snap and [x.id for x in listed] == [s.id]
    with StateForge(db_path=tmp_path / "a.db") as sf:
        assert sf.head_sync(s.id) == snap


CRASHER = """
import sys
from workbench.compat.stateforge import StateForge, units
sf = StateForge(db_path=sys.argv[1])
s = sf.create_session_sync("crash")
print(s.id, flush=True)
i = 0
while True:
    sf.snapshot_sync(s.id, [units.kv(s.id, key=f"k{j}", value=i) for j in range(50)])
    i += 1
    print(i, flush=True)
"""


@pytest.mark.slow
def test_a_crash_mid_snapshot_leaves_whole_snapshots(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    p = subprocess.Popen(
        [sys.executable, "-c", CRASHER, str(db)], stdout=subprocess.PIPE, text=True
    )
    assert p.stdout is not None
    sid = p.stdout.readline().strip()
    for _ in range(30):
        p.stdout.readline()
    p.send_signal(signal.SIGKILL)
    p.communicate()
    with StateForge(db_path=db) as sf:
        snaps = sf.snapshots_sync(sid)
        assert len(snaps) >= 30
        for snap in snaps:  # every snapshot holds all 50 units of one step
            values = {u.value for u in sf.units_of_sync(snap.id)}
            assert len(sf.units_of_sync(snap.id)) == 50 and len(values) == 1
        assert sf.journal.verify().ok


def test_the_session_cli(tmp_path: Path) -> None:
    db = tmp_path / "cli.db"
    with StateForge(db_path=db) as sf:
        s = sf.create_session_sync("demo")
        a = sf.snapshot_sync(s.id, [units.kv(s.id, key="g", value=1)], label="one")
        sf.snapshot_sync(
            s.id, [units.kv(s.id, key="g", value=2), units.kv(s.id, key="h", value=3)], label="two"
        )
        unit_id = sf.units_of_sync(a.id)[0].id
    d = json.loads(
        lithify("--json", "--db", str(db), "diff", "one", "two", "--session", "demo").stdout
    )
    assert d["summary"] == {"added": 1, "modified": 1, "removed": 0}
    listed = json.loads(
        lithify("--json", "--db", str(db), "snapshots", "list", "--session", "demo").stdout
    )
    assert [r["label"] for r in listed] == ["one", "two"] and listed[-1]["ref"] == "head"
    shown = json.loads(
        lithify("--json", "--db", str(db), "snapshot", "show", "head~1", "--session", "demo").stdout
    )
    assert [u["value"] for u in shown["units"]] == [1]
    back = lithify("--db", str(db), "rollback", "--session", "demo", "--to", "one", "--label", "r")
    assert back.returncode == 0 and "restores" in back.stdout
    prov = json.loads(lithify("--json", "--db", str(db), "provenance", unit_id).stdout)
    assert prov["unit"]["key"] == "g" and len(prov["snapshots"]) == 2
    tags = json.loads(lithify("--json", "--db", str(db), "tags").stdout)
    assert [t["label"] for t in tags] == ["one", "two", "r"]
    plain = json.loads(
        lithify("--json", "--db", str(db), "history", "--branch", "session:" + s.id).stdout
    )
    assert plain[0]["time"].endswith("+00:00") and plain[0]["labels"] == []
    lithify("--db", str(db), "tag", f"session:{s.id}@2", "kept")
    plain = json.loads(
        lithify("--json", "--db", str(db), "history", "--branch", "session:" + s.id).stdout
    )
    assert plain[1]["labels"] == ["kept"]
    missing = lithify("--db", str(db), "history", "--session", "nobody")
    assert missing.returncode == 1 and "no session" in missing.stderr
    with Journal.open(db, SessionState, readonly=True) as j:
        assert j.verify().ok


def test_review_regressions_for_units_and_sessions(tmp_path: Path) -> None:
    sf = StateForge(db_path=tmp_path / "r.db")
    s = sf.create_session_sync("r")
    value = {"x": [1]}
    u = units.kv(s.id, key="k", value=value)
    value["x"].append(2)  # the caller changes its object after building the unit
    snap = sf.snapshot_sync(s.id, [u])
    assert sf.units_of_sync(snap.id)[0].value == {"x": [1]}
    with pytest.raises(InvalidValue):
        sf.create_session_sync("bad \ud800 label")  # refused before any branch exists
    assert [x.id for x in sf.sessions_sync()] == [s.id]
    sf.journal.root().fork_at(0, name="session:orphan")  # a crash before its first event
    assert [x.id for x in sf.sessions_sync()] == [s.id]
    for bad in (None, u):
        with pytest.raises(InvalidValue):
            sf.snapshot_sync(s.id, bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidValue):
        units.embedding(s.id, key="e", vector=["a"])  # type: ignore[list-item]
    with pytest.raises(InvalidValue):
        units.message(None, key="m", value="x")

    async def fetch() -> str:
        return "from a coroutine"

    got = asyncio.run(sf.effect(s.id, "tool:async", fetch))
    assert got == "from a coroutine" and sf.effect_sync(s.id, "tool:async", lambda: "no") == got
    for i in range(30):  # snapshots stay linear: parents chain, unit sets fold
        last = sf.snapshot_sync(s.id, [units.kv(s.id, key="n", value=i)])
    history = sf.history_sync(s.id)
    assert history[0] == last and history[0].parent_id == history[1].id
    sf.close_sync()
