"""Notes and artifacts per branch (issue 39): journaled as events, the bytes content-addressed
in the journal's own database on both backends (deduplicated, size-limited, checked on every
read), carried by clone/push/pull with their digests checked, found by the filter language and
search, replayed (not written again) by a rerun fork, and a note the Lab adds to a failed fork
does not stop its rerun."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import blake3
import pytest

from workbench import Journal, State, replay
from workbench.annotations import MAX_ARTIFACT_BYTES
from workbench.errors import IntegrityError, InvalidValue, NotFound, ReadOnly
from workbench.filters import parse
from workbench.matrix import branch_table
from workbench.replication import clone, replicate


@dataclass
class Count(State):
    state_name = "tests.annotations-count/1"
    n: int = 0

    def apply(self, delta: dict[str, Any]) -> None:
        self.n += delta["add"]


def _blob_rows(path: str) -> int:
    con = sqlite3.connect(path)
    try:
        return int(con.execute("SELECT count(*) FROM blobs").fetchone()[0])
    finally:
        con.close()


def _notes_and_artifacts(location: str, tmp: Path) -> None:
    report = tmp / "report.csv"
    report.write_text("budget,recall\n300,0.5\n")
    with Journal.open(location, Count) as j:
        b = j.root()
        b.apply({"add": 1})
        assert b.note("lexical retrieval: too slow past 1k files") == 2
        art = b.attach("report.csv", report)  # a path
        assert (art.name, art.size, art.seq) == ("report.csv", report.stat().st_size, 3)
        assert art.hash == blake3.blake3(report.read_bytes()).hexdigest()
        assert art.media_type == "text/csv"
        b.attach("same.csv", report.read_bytes())  # the same bytes under another name
        f = b.fork(name="f", params={"budget": 300})
        f.note("fork: watch the cost")
        f.attach("weights.bin", b"\x00\x01" * 1000)
        assert b.state().n == 1 and f.state().n == 1  # neither moves the state
        assert b.artifact("report.csv") == report.read_bytes()
        # a fork's history includes what came before its fork point
        assert [n.text for n in f.notes()] == [
            "lexical retrieval: too slow past 1k files",
            "fork: watch the cost",
        ]
        assert [a.name for a in f.artifacts()] == ["report.csv", "same.csv", "weights.bin"]
        assert [a.name for a in b.artifacts()] == ["report.csv", "same.csv"]
        # the newest artifact of a name wins
        b.attach("report.csv", b"budget,recall\n300,0.6\n")
        assert b.artifact("report.csv").endswith(b"0.6\n")
        with pytest.raises(NotFound, match="has no artifact 'nope'.*report.csv"):
            b.artifact("nope")
        # the table: each branch's own notes and artifact names
        t = branch_table(j).frame.sort("branch")
        assert t["notes"].to_list() == [
            "lexical retrieval: too slow past 1k files",
            "fork: watch the cost",
        ]
        assert t["artifacts"].to_list() == ["report.csv, same.csv", "weights.bin"]
        # the filter language finds them (case-insensitive), and so does search
        hit = parse('notes contains "WATCH the"').apply(t)["branch"].to_list()
        assert hit == [f.id]
        assert parse("note contains slow").apply(t)["branch"].to_list() == [0]
        assert parse('artifacts contains "weights"').apply(t)["branch"].to_list() == [f.id]
        found = j.search("cost")
        assert any(h.kind == "note" and h.branch == f.id for h in found)
        # records read as notes in logs
        kinds = [(r.kind, r.summary()) for r in f.history(f.fork_seq + 1)]
        assert kinds[0] == ("note", "note: fork: watch the cost")
        assert kinds[1][0] == "attach" and "weights.bin (2000 bytes)" in kinds[1][1]
        assert j.verify().ok


def test_notes_and_artifacts_on_sqlite(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    _notes_and_artifacts(db, tmp_path)
    assert _blob_rows(db) == 3  # report.csv and same.csv share one copy


@pytest.mark.slow
def test_notes_and_artifacts_on_postgres(pg, pg_db, tmp_path: Path) -> None:
    url = pg.url(pg_db, journal=f"a_{uuid.uuid4().hex[:10]}")
    _notes_and_artifacts(url, tmp_path)
    # and they travel: PostgreSQL -> a SQLite file, checked on the way
    out = str(tmp_path / "copy.db")
    report = clone(url, out)
    assert report.artifacts == 3
    with Journal.open(out, Count) as j:
        assert j.branch("f").artifact("weights.bin") == b"\x00\x01" * 1000
        assert j.verify().ok


def test_bad_input_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    with Journal.open(db, Count) as j:
        b = j.root()
        cases: list[tuple[Any, Any, str]] = [
            ("a/b.txt", b"x", "without folders"),
            ("", b"x", "non-empty"),
            ("x" * 300, b"x", "at most 255"),
            ("ok.txt", str(tmp_path / "missing.txt"), "no file at"),
            ("ok.txt", tmp_path, "is a folder"),
            ("zero.bin", "/dev/zero", "not a regular file"),  # st_size 0, endless bytes
            ("ok.txt", 42, "bytes or a file's path"),
            ("big.bin", b"\0" * (MAX_ARTIFACT_BYTES + 1), "at most 67,108,864"),
        ]
        for name, data, says in cases:
            with pytest.raises(InvalidValue, match=says):
                b.attach(name, data)
        big = tmp_path / "big.bin"
        with open(big, "wb") as fh:
            fh.truncate(MAX_ARTIFACT_BYTES + 1)  # sparse: refused from its size, not read
        with pytest.raises(InvalidValue, match="keep larger files outside the journal"):
            b.attach("big.bin", big)
        with pytest.raises(InvalidValue, match="non-empty"):
            b.note("")
        with pytest.raises(InvalidValue, match="only spaces"):
            b.note("  \n ")
        assert b.head == 0 and b.history() == []
    assert _blob_rows(db) == 0


def test_a_read_only_journal_refuses_an_attach_and_keeps_reading(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    with Journal.open(db, Count) as j:
        j.root().attach("a.txt", b"hello")
        j.root().note("kept")
    with Journal.open(db, Count, readonly=True) as j:
        b = j.root()
        with pytest.raises(ReadOnly):
            b.attach("b.txt", b"more")
        with pytest.raises(ReadOnly):
            b.note("more")
            j.flush()
        assert b.artifact("a.txt") == b"hello" and [n.text for n in b.notes()] == ["kept"]
    assert _blob_rows(str(db)) == 1


_FULL_DISK = """
import resource, sys
from workbench import Journal
from workbench.errors import DiskFull
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), resource.RLIM_INFINITY))
with Journal.open(sys.argv[1]) as j:
    try:
        j.root().attach("big.bin", bytes(range(256)) * 2000)
    except DiskFull as e:
        print("DiskFull", e)
"""


def test_a_full_disk_during_an_attach_writes_neither_bytes_nor_event(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    with Journal.open(db) as j:
        j.root().apply({"x": 1})
    size = db.stat().st_size + 64 * 1024
    p = subprocess.run(
        [sys.executable, "-c", _FULL_DISK, str(db), str(size)], capture_output=True, text=True
    )
    assert p.returncode == 0 and p.stdout.startswith("DiskFull"), p.stdout + p.stderr[-2000:]
    with Journal.open(db) as j:
        assert j.root().head == 1 and j.root().artifacts() == []
        assert j.verify().ok
    assert _blob_rows(str(db)) == 0


def _damage_blob(db: str) -> None:
    con = sqlite3.connect(db)
    con.execute("UPDATE blobs SET data = CAST('tampered' AS BLOB)")
    con.commit()
    con.close()


def test_damaged_or_missing_bytes_are_caught_on_read_verify_and_copy(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    with Journal.open(db, Count) as j:
        j.root().attach("a.txt", b"hello")
    _damage_blob(db)
    with Journal.open(db, Count) as j:
        with pytest.raises(IntegrityError, match="do not match their digest") as e:
            j.root().artifact("a.txt")
        assert (e.value.branch, e.value.seq) == (0, 1)
        report = j.verify()
        assert not report.ok
        assert any("artifact 'a.txt'" in what for _, _, what in report.problems)
    with pytest.raises(IntegrityError, match="artifact of event 0@1 is damaged"):
        clone(db, str(tmp_path / "copy.db"))
    con = sqlite3.connect(db)
    con.execute("DELETE FROM blobs")
    con.commit()
    con.close()
    with Journal.open(db, Count) as j:
        with pytest.raises(IntegrityError, match="are not in the journal"):
            j.root().artifact("a.txt")
        assert any("bytes are missing" in w for _, _, w in j.verify().problems)


def test_push_and_pull_carry_the_bytes_once(tmp_path: Path) -> None:
    a, b = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    with Journal.open(a, Count) as j:
        j.root().attach("one.bin", b"1" * 5000)
    first = clone(a, b)
    assert first.artifacts == 1
    with Journal.open(a, Count) as j:
        j.root().attach("again.bin", b"1" * 5000)  # the same content: no new bytes travel
        j.root().attach("two.bin", b"2" * 10)
        j.root().note("pushed")
    second = replicate(a, b)
    assert (second.artifacts, second.events) == (1, 3)
    assert replicate(a, b).artifacts == 0  # nothing left to copy
    with Journal.open(b, Count) as j:
        assert j.root().artifact("two.bin") == b"2" * 10
        assert [n.text for n in j.root().notes()] == ["pushed"]
        assert j.verify().ok
    assert _blob_rows(b) == 2


def test_an_older_journal_gets_the_blobs_table_when_opened_writable(tmp_path: Path) -> None:
    db = str(tmp_path / "old.db")
    with Journal.open(db, Count) as j:
        j.root().apply({"add": 1})
    con = sqlite3.connect(db)
    con.execute("DROP TABLE blobs")
    con.execute("DROP INDEX events_annotations")
    con.commit()
    con.close()
    with Journal.open(db, Count, readonly=True) as j:  # read-only: opens, has no artifacts
        assert j.root().artifacts() == [] and j.root().notes() == []
    with Journal.open(db, Count) as j:
        j.root().attach("new.txt", b"new")
        assert j.root().artifact("new.txt") == b"new"


def _fork_fn(path: str, branch: int, stop_after: int | None = None) -> None:
    """A fork function that notes and attaches as it goes (never checks its progress)."""
    with Journal.open(path, Count) as j:
        b = j.branch(branch)
        for step in range(3):
            b.apply({"add": step})
            b.note(f"step {step} done")
            b.attach(f"step{step}.txt", f"output of step {step}".encode())
            if stop_after is not None and step >= stop_after:
                raise RuntimeError("killed")


def test_a_rerun_fork_replays_its_notes_and_artifacts_and_steps_past_a_labs_note(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "r.db")
    with Journal.open(db, Count) as j:
        ref, b = j.root().fork(), j.root().fork()
    _fork_fn(db, ref.id)
    with pytest.raises(RuntimeError), replay.armed(db, b.id, None):
        _fork_fn(db, b.id, stop_after=0)
    with Journal.open(db, Count) as j:
        j.branch(b.id).note("failed at step 1: look at the cost")  # the Lab's note meanwhile
        j.flush()
    with replay.armed(db, b.id, None):
        _fork_fn(db, b.id)

    def own(branch: int) -> list[tuple[str, Any]]:
        with Journal.open(db, Count) as j:
            h = j.branch(branch)
            return [(r.kind, r.payload) for r in h.history(h.fork_seq + 1)]

    lab = ("note", {"text": "failed at step 1: look at the cost"})
    rerun = own(b.id)
    assert lab in rerun
    assert [e for e in rerun if e != lab] == own(ref.id)  # each write once, none twice
    with Journal.open(db, Count) as j:
        assert j.branch(b.id).state().n == j.branch(ref.id).state().n == 3
        assert j.verify().ok


def test_every_view_of_forks_shows_a_branchs_notes_in_its_tooltips(tmp_path: Path) -> None:
    import json
    import time

    from workbench import charts, sweep

    with Journal.open(tmp_path / "v.db") as j:
        j.root().apply({"x": 1})
        plan = sweep.plan(j, 0, 1, {"budget": [100, 300, 1000], "k": [1, 2]})
        now = int(time.time() * 1000)
        for i, f in enumerate(plan.forks):
            b = j.branch(f.branch)
            b.observe("recall", 0.1 * (i + 1), step=0)
            b.observe("cost", float(i))
            b.observe("recall", 0.1 * (i + 1) + 0.01, step=1)
            j.storage.put_run(f.branch, plan.id, "finished", started=now, finished=now + 5)
        quiet = json.dumps(charts.view(j, "metric", y="recall").spec())
        assert '"notes"' not in quiet  # no tooltip line for notes nobody wrote
        j.branch(plan.forks[1].branch).note("this one overfits")
        for kind in ("metric", "history", "slice", "parallel", "steps", "timeline", "rank", "edf"):
            spec = json.dumps(charts.view(j, kind, y="recall").spec())
            assert "this one overfits" in spec and '"notes"' in spec, kind
        spec = json.dumps(charts.view(j, "pareto", y="recall", y2="cost").spec())
        assert "this one overfits" in spec


def test_the_cli_notes_attaches_lists_and_saves(tmp_path: Path) -> None:
    import json

    from cli import lithify

    db = str(tmp_path / "c.db")
    with Journal.open(db, Count) as j:
        j.root().apply({"add": 1})
    (tmp_path / "results.csv").write_text("a,b\n1,2\n")
    assert lithify("--db", db, "note", "main", "tried the big model").returncode == 0
    r = lithify("--db", db, "--json", "attach", "main", str(tmp_path / "results.csv"))
    assert r.returncode == 0 and json.loads(r.stdout)["name"] == "results.csv"
    listed = json.loads(lithify("--db", db, "--json", "artifacts", "main").stdout)
    assert [n["text"] for n in listed["notes"]] == ["tried the big model"]
    assert [a["name"] for a in listed["artifacts"]] == ["results.csv"]
    out = tmp_path / "copy.csv"
    saved = lithify("--db", db, "artifacts", "main", "--save", "results.csv", "-o", str(out))
    assert saved.returncode == 0 and out.read_text() == "a,b\n1,2\n"
    missing = lithify("--db", db, "artifacts", "main", "--save", "nope.csv")
    assert missing.returncode == 1 and "results.csv" in missing.stderr
    bad = lithify("--db", db, "attach", "main", str(tmp_path / "absent.txt"))
    assert bad.returncode == 2 and "no file at" in bad.stderr
    where = lithify("--db", db, "--json", "branches", "--where", 'notes contains "BIG model"')
    assert [b["id"] for b in json.loads(where.stdout)] == [0]


@pytest.mark.slow
def test_an_older_postgres_journal_gets_the_blobs_table_when_opened_writable(pg, pg_db) -> None:
    import psycopg

    from workbench.storage.postgres import parse_url

    url = pg.url(pg_db, journal=f"o_{uuid.uuid4().hex[:10]}")
    with Journal.open(url, Count) as j:
        j.root().apply({"add": 1})
    conninfo, schema = parse_url(url)
    with psycopg.connect(conninfo, autocommit=True) as c:
        c.execute(f'DROP TABLE "{schema}".blobs')
        c.execute(f'DROP INDEX "{schema}".events_annotations')
    with Journal.open(url, Count, readonly=True) as j:
        assert j.root().artifacts() == [] and j.root().notes() == []
    with Journal.open(url, Count) as j:
        j.root().attach("new.txt", b"new")
        j.root().note("after the upgrade")
        assert j.root().artifact("new.txt") == b"new"
        assert [n.text for n in j.root().notes()] == ["after the upgrade"]


def test_a_rerun_fork_whose_note_text_varies_replays_it(tmp_path: Path) -> None:
    """A note with a time in it is the fork's own write all the same: the rerun reads it back
    (no ReplayDiverged, no second note)."""
    import itertools

    db = str(tmp_path / "t.db")
    stamp = itertools.count()

    def fork_fn(branch: int, fail: bool) -> None:
        with Journal.open(db, Count) as j:
            b = j.branch(branch)
            b.note(f"started at {next(stamp)}")
            b.apply({"add": 1})
            if fail:
                raise RuntimeError("killed")
            b.note(f"ended at {next(stamp)}")

    with Journal.open(db, Count) as j:
        b = j.root().fork()
    with pytest.raises(RuntimeError), replay.armed(db, b.id, None):
        fork_fn(b.id, True)
    with replay.armed(db, b.id, None):
        fork_fn(b.id, False)
    with Journal.open(db, Count) as j:
        h = j.branch(b.id)
        kinds = [r.kind for r in h.history(h.fork_seq + 1)]
        assert kinds == ["note", "delta", "note"] and h.state().n == 1
        assert [n.text for n in h.notes()] == ["started at 0", "ended at 2"]


def test_a_note_from_elsewhere_does_not_stop_a_live_writer(tmp_path: Path) -> None:
    """A person notes a branch an agent is writing (the Lab, `lithify note`): the agent's next
    write lands after the note (notes move no state); another writer's delta still refuses it."""
    from workbench.errors import BranchConflict

    db = str(tmp_path / "live.db")
    with Journal.open(db, Count) as agent_j:
        agent = agent_j.root()
        agent.apply({"add": 1})
        with Journal.open(db, Count) as person:
            person.root().note("looks stuck on file 3")
            person.root().attach("screen.txt", b"...")
        assert agent.apply({"add": 2}) == 4  # after the note and the attach
        assert agent.state().n == 3
        assert [r.kind for r in agent.history()] == ["delta", "note", "attach", "delta"]
        with Journal.open(db, Count) as other:
            other.root().apply({"add": 10})
        with pytest.raises(BranchConflict):
            agent.apply({"add": 4})  # a delta it did not see: refused as before
        assert agent_j.verify().ok
