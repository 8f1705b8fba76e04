"""Journal semantics the designs promise: upcasting under snapshots, explicit expected heads,
valid time replayed in world order, receipts that say why, ambiguous hashes, caller event ids."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli import lithify
from conftest import Ctx

from workbench import BranchConflict, Conflict, InvalidValue, Journal, State
from workbench.deltas import delta, upcaster
from workbench.errors import NotFound

HERE = Path(__file__).parent

# -- upcasting under snapshots ----------------------------------------------------------------

V1 = """
import sys
from dataclasses import dataclass, field
from workbench import Journal, State
from workbench.deltas import delta

@delta("tests.semantics.note", version=1)
@dataclass
class Note:
    text: str

@dataclass
class Notes(State):
    state_name = "tests.semantics.notes"
    items: list = field(default_factory=list)
    def apply(self, d):
        self.items.append(d.text)

with Journal.open(sys.argv[1], Notes, snapshot_every=100) as j:
    j.root().apply_many([Note(f"t{i}") for i in range(600)])
    for i in range(600, 1000):
        j.root().apply(Note(f"t{i}"))
    print(len(j._storage.snapshots()))
"""


@delta("tests.semantics.note", version=2)
@dataclass
class NoteV2:
    text: str
    source: str


@dataclass
class NotesV2(State):
    state_name = "tests.semantics.notes"
    items: list = field(default_factory=list)

    def apply(self, d: NoteV2) -> None:
        self.items.append(f"{d.text}/{d.source}")


@pytest.mark.slow
def test_snapshots_of_old_delta_versions_are_rebuilt_with_the_upcasters(tmp_path):
    path = tmp_path / "v1.db"
    r = subprocess.run([sys.executable, "-c", V1, str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) >= 10  # the initial state, and one every 100 events
    with Journal.open(path, NotesV2, readonly=True) as j:
        with pytest.raises(NotFound, match="upcaster"):  # no snapshot hides the missing upcaster
            j.root().state()

    @upcaster("tests.semantics.note", 1)
    def _(payload: dict) -> dict:
        return {**payload, "source": "legacy"}

    expected = [f"t{i}/legacy" for i in range(1000)]
    with Journal.open(path, NotesV2, readonly=True) as j:  # read-only: rebuilt in memory only
        root = j.root()
        assert root.state().items == expected
        for s in range(0, 1001, 7):
            assert root.at(s).items == expected[:s], s
    lithify = [
        sys.executable,
        "-m",
        "workbench",
        "--db",
        str(path),
        "--state",
        "test_semantics:NotesV2",
        "--json",
    ]
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    r = subprocess.run([*lithify, "snapshots", "rebuild"], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "upcaster" in r.stdout  # that process has no upcaster registered
    with Journal.open(path, NotesV2) as j:
        assert j.rebuild_snapshots() >= 10
        assert j.rebuild_snapshots() == 0
        assert j.verify().ok
    with Journal.open(path, NotesV2) as j:
        root = j.root()
        for s in range(1001):
            assert root.at(s).items == expected[:s], s


def test_a_changed_state_schema_is_not_read_from_old_snapshots(tmp_path):
    path = tmp_path / "schema.db"

    @dataclass
    class Tally(State):
        state_name = "tests.semantics.tally"
        n: int = 0

        def apply(self, d: dict) -> None:
            self.n += d["x"]

    with Journal.open(path, Tally, snapshot_every=3) as j:
        for x in range(10):
            j.root().apply({"x": x})

    @dataclass
    class Tally2(State):
        state_name = "tests.semantics.tally"
        n: int = 0
        seen: int = 0  # a new field the deltas fill in: old snapshots cannot know it

        def apply(self, d: dict) -> None:
            self.n += d["x"]
            self.seen += 1

    with Journal.open(path, Tally2, snapshot_every=3) as j:
        root = j.root()
        assert (root.state().n, root.state().seen) == (45, 10)
        assert [j.root().at(s).seen for s in range(11)] == list(range(11))
        # the snapshots at 3, 6 and 9 were rebuilt on the way: the next one is 3 events on
        root.apply({"x": 10})
        root.apply({"x": 11})
        assert [q for b, q, _ in j.storage.all_snapshot_marks() if q > 0] == [3, 6, 9, 12]


# -- expected heads -------------------------------------------------------------------------------


def test_expect_appends_only_at_the_expected_head(journal):
    b = journal.root()
    assert b.apply({"x": 1}, expect="new") == 1
    with pytest.raises(BranchConflict) as e:
        b.apply({"x": 2}, expect="new")
    assert (e.value.expected, e.value.actual) == (0, 1)
    assert b.apply({"x": 2}, expect=1) == 2
    other = journal.branch(0)
    assert other.apply({"x": 3}, expect=2) == 3
    with pytest.raises(BranchConflict) as e:
        b.apply({"x": 4}, expect=2)  # the stale handle names what it expected and what is there
    assert (e.value.expected, e.value.actual) == (2, 3)
    stale = journal.branch(0)
    other.apply({"x": 4})
    assert stale.apply({"x": 5}, expect=4) == 5  # behind, but the head is what the caller expects
    assert stale.apply_many([{"x": 6}, {"x": 7}], expect=5) == 7
    with pytest.raises(BranchConflict):
        stale.apply_many([{"x": 8}], expect=5)
    assert stale.observe("m", 1.0, expect=7) == 8
    assert stale.effect("k", lambda: 9, expect=8) == 9
    calls = []
    with pytest.raises(BranchConflict):
        stale.effect("k2", lambda: calls.append(1), expect=3)
    assert calls == []  # refused before fn ran
    fork = stale.fork_at(3)
    assert fork.apply({"x": 10}, expect="new") == 4
    for bad in (-1, "old", 1.5, True):
        with pytest.raises(InvalidValue):
            stale.apply({"x": 0}, expect=bad)
    assert journal.root().state().items == [1, 2, 3, 4, 5, 6, 7]


@pytest.mark.slow
def test_expect_holds_across_processes(db_path):
    with Journal.open(db_path, Ctx) as j:
        j.root().apply({"x": 1})
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent("""
        import sys
        from conftest import Ctx
        from workbench import Journal, BranchConflict
        with Journal.open(sys.argv[1], Ctx, durability="lazy") as j:
            b = j.root()
            print(b.apply({"x": 2}, expect=1))
            try:
                b.apply({"x": 3}, expect=1)
            except BranchConflict as e:
                print("refused", e.expected, e.actual)
    """),
            str(db_path),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(HERE)},
    )
    assert r.stdout.split() == ["2", "refused", "1", "2"], r.stderr
    with Journal.open(db_path, Ctx) as j:
        with pytest.raises(BranchConflict):
            j.root().apply({"x": 9}, expect=1)
        assert j.root().head == 2


# -- valid time ------------------------------------------------------------------------------


@dataclass
class Where(State):
    city: str | None = None
    moves: list = field(default_factory=list)

    def apply(self, d: dict) -> None:
        self.city = d["city"]
        self.moves.append(d["city"])


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_valid_time_replays_in_world_order_whatever_the_record_order(tmp_path):
    now = [int(utc(2025, 2, 1).timestamp() * 1000)]
    with Journal.open(tmp_path / "w.db", Where, clock=lambda: now[0]) as j:
        b = j.root()
        b.apply({"city": "Berlin"}, occurred_at=utc(2025, 1, 10))
        now[0] = int(utc(2025, 3, 1).timestamp() * 1000)
        b.apply({"city": "Paris"}, occurred_at=utc(2025, 1, 5))  # learned later, happened earlier
        assert b.valid_at(utc(2025, 1, 20)).city == "Berlin"
        assert b.valid_at(utc(2025, 1, 7)).city == "Paris"
        assert b.valid_at(utc(2025, 1, 1)).city is None
        # what was true on Jan 20 as known on Feb 15: only Berlin had been recorded
        assert b.view_at(valid=utc(2025, 1, 20), known=utc(2025, 2, 15)).moves == ["Berlin"]
        assert b.view_at(valid=utc(2025, 1, 7), known=utc(2025, 2, 15)).city is None
        assert b.view_at(valid=utc(2025, 1, 7), known=utc(2025, 3, 2)).city == "Paris"
        assert b.as_of(utc(2025, 2, 15)).moves == ["Berlin"]
        assert [r.ts for r in b.history()] == [
            int(utc(2025, 2, 1).timestamp() * 1000),
            int(utc(2025, 3, 1).timestamp() * 1000),
        ]
        assert b.state().city == "Paris"  # the journal's own order: the last recorded


def test_a_clock_is_only_what_the_caller_passes(tmp_path):
    with pytest.raises(InvalidValue):
        Journal.open(tmp_path / "c.db", Where, clock="yesterday")
    with Journal.open(tmp_path / "c.db", Where, clock=lambda: "soon") as j:
        with pytest.raises(InvalidValue, match="clock"):
            j.root().apply({"city": "Rome"})
        assert j.root().head == 0


# -- receipts say why ------------------------------------------------------------------------------


def test_receipts_give_a_reason_for_every_omission_and_counts(journal):
    from workbench.context import Part

    @dataclass
    class Chat(State):
        parts: list = field(default_factory=list)

        def apply(self, d: dict) -> None:
            self.parts.append(d)

        def context_parts(self) -> list[Part]:
            return [
                Part(p["id"], p["text"], priority=p.get("priority", 0), scope=p.get("scope"))
                for p in self.parts
            ]

    with Journal.in_memory(Chat) as j:
        b = j.root()
        for p in (
            {"id": "system", "text": "s" * 40, "priority": 9},
            {"id": "old", "text": "o" * 40},
            {"id": "huge", "text": "h" * 400, "priority": 5},
            {"id": "private", "text": "p" * 8, "scope": "team"},
            {"id": "noise", "text": "n" * 8},
            {"id": "new", "text": "w" * 40, "priority": 1},
        ):
            b.apply(p)
        text, receipt = b.render(budget=25, scope="public", filter=lambda part: part.id != "noise")
        doc = receipt.to_json()
        assert [i for i, _ in doc["included"]] == ["system", "new"]
        reasons = {i: why for i, _, why in doc["omitted"]}
        assert reasons == {
            "old": "priority",
            "huge": "budget",
            "private": "scope",
            "noise": "filter",
        }
        assert (doc["examined"], doc["selected"]) == (6, 2) and doc["projection_ms"] >= 0
        with b.receipt(receipt):
            b.effect("llm:1", lambda: "ok")
        stored = j.receipt("head")["receipt"]
        assert (
            stored["omitted"] == doc["omitted"]
            and stored["examined"] == 6
            and "projection_ms" in stored
        )


def test_lithify_receipt_shows_reasons_and_counts(tmp_path):
    db = tmp_path / "a.db"
    r = lithify("--db", str(db), "run", "--max-files", "6", "--budget", "400")
    assert r.returncode == 0, r.stderr
    with Journal.open(db, readonly=True) as j:
        ref = next(
            f"main@{r.seq}"
            for r in j.root().history()
            if r.kind == "effect" and "receipt" in r.payload
        )
    r = lithify("--db", str(db), "receipt", ref)
    assert r.returncode == 0 and "examined" in r.stdout and "selected" in r.stdout, r.stderr


# -- hashes across forks -------------------------------------------------------------------------


def test_a_hash_shared_by_two_forks_is_ambiguous(journal):
    root = journal.root()
    root.apply({"x": 1})
    a, b = root.fork(), root.fork()
    a.apply({"x": 2})
    b.apply({"x": 2})
    assert a.head_hash == b.head_hash
    with pytest.raises(Conflict) as e:
        journal.lookup_hash(a.head_hash[:12])
    assert f"{a.id}@2" in str(e.value) and f"{b.id}@2" in str(e.value)
    assert journal.lookup_hash(root.head_hash) == (0, 1)  # inherited by both forks: one event
    with pytest.raises(Conflict):
        journal.resolve(a.head_hash[:16])


def test_the_cli_says_ambiguous_and_exits_2(db_path):
    with Journal.open(db_path, Ctx) as j:
        a, b = j.root().fork(), j.root().fork()
        a.apply({"x": 2})
        b.apply({"x": 2})
        h = a.head_hash[:16]
    r = lithify("--db", str(db_path), "show", h)
    assert r.returncode == 2 and "1@1" in r.stderr and "2@1" in r.stderr


# -- caller event ids ----------------------------------------------------------------------------


def test_caller_ids_make_an_import_idempotent(journal):
    b = journal.root()
    log = [("evt:1", {"x": 1}), ("evt:2", {"x": 2}), ("evt:3", {"x": 3})]
    first = [b.apply(d, id=i) for i, d in log]
    again = [journal.branch(0).apply(d, id=i) for i, d in log]  # the importer runs twice
    assert first == again == [1, 2, 3]
    assert journal.root().head == 3 and journal.root().state().total == 6
    with pytest.raises(Conflict, match="evt:2"):
        journal.branch(0).apply({"x": 99}, id="evt:2")  # the same id, another payload
    fork = journal.root().fork_at(1)
    with pytest.raises(Conflict, match="evt:3"):
        fork.apply({"x": 3}, id="evt:3")  # unique per journal, not per branch
    assert fork.observe("m", 1.0, id="obs:1") == 2
    assert fork.observe("m", 1.0, id="obs:1") == 2
    with pytest.raises(InvalidValue):
        b.apply({"x": 1}, id="")
    assert journal.verify().ok


# -- full-text search ------------------------------------------------------------------------------


def test_search_finds_payloads_in_a_branch_history_and_reads_only_where_read_only(db_path):
    with Journal.open(db_path) as j:
        b = j.root()
        b.apply({"note": "the deadlock in the scheduler"})
        b.apply({"note": "a timeout while reading"})
        fork = b.fork()
        fork.apply({"note": "deadlock again, in the fork"})
        assert {(r.branch, r.seq) for r in j.search("deadlock")} == {(0, 1), (fork.id, 3)}
        assert [(r.branch, r.seq) for r in j.search("deadlock", branch=0)] == [(0, 1)]
        assert {(r.branch, r.seq) for r in j.search("deadlock", branch=fork.id)} == {
            (fork.id, 3),
            (0, 1),
        }
        b.apply(
            {"note": "a late deadlock"}
        )  # after the index was built: caught up at the next search
        assert (0, 3) in {(r.branch, r.seq) for r in j.search("late")}
        with pytest.raises(InvalidValue, match="search query"):
            j.search('"unbalanced')
    with Journal.open(db_path, readonly=True) as j:
        with Journal.open(db_path) as writer:
            writer.root().apply({"note": "deadlock past the index"})
        assert {r.seq for r in j.search("deadlock", branch=0)} == {1, 3, 4}
    r = lithify("--db", str(db_path), "--json", "search", "timeout")
    assert r.returncode == 0 and [d["seq"] for d in json.loads(r.stdout)] == [2], r.stderr
