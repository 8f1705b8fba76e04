"""Moving histories between journals (``workbench.replicate``, ``lithify clone/push/pull``):
same hashes on both sides, only missing events travel, divergence refused before anything is
written, a killed copy finishes on rerun with nothing duplicated; file to file, file to
PostgreSQL and back."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from cli import lithify
from conftest import Ctx

from workbench import Diverged, Journal, replicate
from workbench.errors import IntegrityError, NotFound

WORKER = str(Path(__file__).parent / "workers" / "replicator.py")


def build(path: str | Path) -> None:
    """A journal with deltas, effects, observations, a compaction, named and unnamed forks, a
    sweep with run records, a tag and snapshots."""
    with Journal.open(path, Ctx, snapshot_every=4) as j:
        main = j.root()
        for x in range(10):
            main.apply({"x": x})
        main.effect("tool:a", lambda: "A")
        main.observe("recall", 0.5)
        main.tag("start", 3)
        named = main.fork_at(5, name="explore")
        named.apply({"x": 100})
        twins = [main.fork_at(8, params={"budget": 300}) for _ in range(2)]  # equal identity
        for i, t in enumerate(twins):
            t.apply({"x": i})
            t.observe("recall", 0.1 * i)
        sweep_id = j.storage.insert_sweep(0, 10, '{"grid":{"budget":[1,2]}}')
        forks = j.storage.insert_branches([(None, 0, 10, '{"budget":1}', sweep_id)])
        j.storage.put_run(forks[0], sweep_id, "finished", runner="process", wall_ms=5.0)
        j.branch(forks[0]).apply({"x": 7})
        main.compact(lambda b, s: Ctx(items=[s.total], total=s.total))
        main.apply({"x": 1})


def summary(path: str | Path) -> dict:
    """What must be equal on both sides: each branch's (name, fork seq, params, head hash),
    states, observations, tags, sweeps and runs (ids may differ)."""
    with Journal.open(path, Ctx, readonly=True) as j:
        assert j.verify().ok
        s = j.storage
        rows = s.branch_rows()
        branches = sorted(
            (r.name or "", r.fork_seq, r.params, j.branch(r.id).head_hash, j.branch(r.id).head)
            for r in rows
        )
        states = sorted(str(j.branch(r.id).state()) for r in rows)
        m = j.matrix()
        obs = sorted(m.select("metric", "value", "seq").rows())
        return {
            "branches": branches,
            "states": states,
            "obs": obs,
            "tags": [(label, q) for label, _, q in s.tags()],
            "sweeps": [(w.at, w.spec, w.created) for w in s.sweep_rows()],
            "runs": [(r.status, r.runner, r.wall_ms) for r in s.runs()],
            "snapshots": len(s.snapshots()),
        }


def test_clone_copies_everything_with_the_same_hashes_and_rerunning_copies_nothing(
    tmp_path: Path,
) -> None:
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    build(src)
    report = replicate(src, dst)
    assert report.events > 0 and report.branches_created == 4 and report.sweeps == 1
    assert report.runs == 1 and report.tags == 1 and not report.up_to_date
    assert summary(src) == summary(dst)
    again = replicate(src, dst)
    assert again.up_to_date and again.events == 0 and again.to_dict()["per_branch"] == {}


def test_only_missing_events_travel(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    build(src)
    replicate(src, dst)
    with Journal.open(src, Ctx) as j:
        for x in range(5):
            j.branch("explore").apply({"x": x})
        j.root().fork_at(2, name="late").apply({"x": 9})
    report = replicate(src, dst)
    assert report.per_branch == {"explore": 5, "late": 1} and report.branches_created == 1
    assert summary(src) == summary(dst)


def test_a_diverged_branch_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    build(src)
    replicate(src, dst)
    with Journal.open(src, Ctx) as j:
        j.root().apply({"x": 1000})
        j.branch("explore").apply({"x": 1})  # would be copied, if main did not diverge
    with Journal.open(dst, Ctx) as j:
        j.root().apply({"x": -1000})
        head = j.root().head
    before = summary(dst)
    with pytest.raises(Diverged, match=rf"'main' diverged at seq {head}") as caught:
        replicate(src, dst)
    assert caught.value.seq == head and caught.value.name == "main"
    assert summary(dst) == before
    out = lithify("--json", "--db", str(src), "push", str(dst))
    assert out.returncode == 1 and '"kind": "Diverged"' in out.stdout


def test_a_destination_ahead_is_fine_and_branches_can_be_chosen(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    build(src)
    report = replicate(src, dst, branches=["explore"])
    assert set(report.per_branch) == {"main", "explore"}  # a fork comes with its ancestors
    with Journal.open(dst, Ctx) as j:
        j.root().apply({"x": 5})  # the destination moves on; the source is a prefix of it
    assert replicate(src, dst, branches=["explore"]).events == 0
    with pytest.raises(NotFound, match="no branch 'nope'"):
        replicate(src, dst, branches=["nope"])


def test_a_damaged_source_event_is_refused(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    build(src)
    con = sqlite3.connect(src)
    con.execute("DROP TRIGGER events_append_only_update")
    con.execute("UPDATE events SET payload = '{\"x\":666}' WHERE branch = 0 AND seq = 4")
    con.commit()
    con.close()
    with pytest.raises(IntegrityError, match="does not match its chain"):
        replicate(src, dst)
    with Journal.open(dst, Ctx, readonly=True) as j:
        assert j.root().head == 0  # the batch holding the damaged event: none of it
        assert j.verify().ok


def test_a_refused_clone_leaves_nothing_and_a_failed_one_says_what_it_left(tmp_path) -> None:
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    build(src)
    refused = lithify("clone", str(src), str(dst), "--branch", "nosuch")
    assert refused.returncode == 1 and "no branch 'nosuch'" in refused.stderr
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("dst")]  # no partial, no lock
    folder, text = tmp_path / "folder", tmp_path / "notes.txt"
    folder.mkdir()
    text.write_text("not a journal\n")
    onto_folder = lithify("clone", str(src), str(folder))
    assert onto_folder.returncode == 1 and "is a folder" in onto_folder.stderr
    assert "pull" not in onto_folder.stderr  # a pull into a folder cannot work
    onto_text = lithify("clone", str(src), str(text))
    assert onto_text.returncode == 1 and "is not a journal" in onto_text.stderr
    assert text.read_text() == "not a journal\n" and list(folder.iterdir()) == []
    con = sqlite3.connect(src)  # a damaged event in the middle: the copy fails there
    con.execute("DROP TRIGGER events_append_only_update")
    con.execute("UPDATE events SET payload = '{\"x\":666}' WHERE branch = 0 AND seq = 4")
    con.commit()
    con.close()
    failed = lithify("clone", str(src), str(dst))
    assert failed.returncode == 1 and "does not match its chain" in failed.stderr
    assert f"{dst}.partial keeps what was copied" in failed.stderr and not dst.exists()


def test_the_cli_clones_pushes_and_pulls(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    build(src)
    out = lithify("clone", str(src), str(dst))
    assert out.returncode == 0 and "clone:" in out.stdout and "4 new branches" in out.stdout
    again = lithify("clone", str(src), str(dst))
    assert again.returncode == 1 and "pull" in again.stderr
    with Journal.open(dst, Ctx) as j:
        j.branch("explore").apply({"x": 1})
    pushed = lithify("--db", str(dst), "push", str(src), "--branch", "explore")
    assert pushed.returncode == 0 and "explore +1" in pushed.stdout
    pulled = lithify("--json", "--db", str(dst), "pull", str(src))
    assert pulled.returncode == 0 and '"up_to_date": true' in pulled.stdout
    assert summary(src) == summary(dst)


@pytest.mark.slow
def test_a_killed_copy_finishes_on_rerun_with_nothing_duplicated(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    with Journal.open(src, Ctx) as j:
        j.root().apply_many([{"x": i % 7} for i in range(20_000)])
    proc = subprocess.Popen([sys.executable, WORKER, str(src), str(dst)], stdout=subprocess.PIPE)
    deadline = time.monotonic() + 60
    seen = 0
    while seen < 2000 and time.monotonic() < deadline:
        time.sleep(0.02)
        if dst.exists():
            try:
                with Journal.open(dst, Ctx, readonly=True) as j:
                    seen = j.root().head
            except Exception:  # noqa: BLE001 (still being created)
                pass
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert 0 < seen < 20_000, "the copy was not caught in the middle"
    with Journal.open(dst, Ctx, readonly=True) as j:
        copied = j.root().head
        assert j.verify().ok and copied % 50 == 0  # whole batches only
    report = replicate(src, dst)
    assert report.events == 20_000 - copied  # the rest, nothing twice
    assert summary(src) == summary(dst)


def test_file_to_postgresql_and_back_keeps_every_hash(pg, pg_db: str, tmp_path: Path) -> None:
    src, back = tmp_path / "src.db", tmp_path / "back.db"
    build(src)
    url = pg.url(pg_db, journal=f"r_{uuid.uuid4().hex[:10]}")
    assert replicate(src, url).events > 0
    assert replicate(url, back).events > 0
    assert summary(src) == summary(url) == summary(back)
    assert replicate(src, url).up_to_date and replicate(url, back).up_to_date


def test_a_named_branch_forked_elsewhere_is_diverged(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    for path, parent in ((src, None), (dst, "side")):
        with Journal.open(path, Ctx) as j:
            for x in range(3):
                j.root().apply({"x": x})
            base = j.root() if parent is None else j.root().fork_at(1, name=parent)
            if parent is not None:
                base.apply({"x": 50})
                base.apply({"x": 51})
            base.fork_at(3, name="exp")
    with Journal.open(src, Ctx) as j:
        j.branch("exp").apply({"x": 9})
    with pytest.raises(Diverged, match="'exp' forks from seq 3 of 'main'"):
        replicate(src, dst)
    with Journal.open(dst, Ctx, readonly=True) as j:
        assert j.branch("exp").head == 3 and j.verify().ok


def test_sweeps_run_records_and_tags_of_the_destination_are_kept(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    with Journal.open(src, Ctx) as j:
        j.root().apply({"x": 1})
        base = j.root().fork_at(1, name="base")
        base.apply({"x": 2})
        sweep_id = j.storage.insert_sweep(base.id, 2, '{"grid":{"b":[1]}}')
        (fork,) = j.storage.insert_branches([(None, base.id, 2, '{"b":1}', sweep_id)])
        j.storage.put_run(fork, sweep_id, "pending")
        j.root().tag("mark", 1)
    replicate(src, dst)
    with Journal.open(dst, Ctx) as j:
        (w,) = j.storage.sweep_rows()  # a sweep of a branch the copy created
        copied = [r for r in j.storage.branch_rows() if r.sweep == w.id]
        assert len(copied) == 1
        j.storage.put_run(copied[0].id, w.id, "finished", finished=10**13)
        j.root().tag("mark", 0)
    replicate(src, dst)  # the source's older records do not overwrite the destination's
    with Journal.open(dst, Ctx, readonly=True) as j:
        assert [r.status for r in j.storage.runs()] == ["finished"]
        assert j.storage.tag("mark") == (0, 0)


REPLICATE_ONCE = """
import sys
from workbench import replicate
replicate(sys.argv[1], sys.argv[2])
"""


@pytest.mark.slow
def test_two_copies_into_one_journal_at_once_duplicate_nothing(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    build(src)
    with Journal.open(src, Ctx) as j:
        for k in range(30):
            j.root().fork_at(5, params={"k": k}).apply({"x": k})
    procs = [
        subprocess.Popen([sys.executable, "-c", REPLICATE_ONCE, str(src), str(dst)])
        for _ in range(3)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    assert summary(src) == summary(dst)


def test_file_to_postgresql_concurrently_duplicates_nothing(pg, pg_db: str, tmp_path) -> None:
    src = tmp_path / "src.db"
    build(src)
    url = pg.url(pg_db, journal=f"c_{uuid.uuid4().hex[:10]}")
    procs = [
        subprocess.Popen([sys.executable, "-c", REPLICATE_ONCE, str(src), url]) for _ in range(3)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    assert summary(src) == summary(url)


# -- a branch needs only the shared part of its ancestors; a killed clone reruns ---------------


def _diverged_after_the_fork(src: str | Path, dst: str | Path) -> None:
    """main 1..4 on both sides; then main moves on differently in each and the source forks
    'feature' at main@3 (the shared part) and 'late' at main@6 (past the divergence)."""
    with Journal.open(src, Ctx) as j:
        for x in range(4):
            j.root().apply({"x": x})
    replicate(src, dst)
    with Journal.open(dst, Ctx) as j:
        for x in (40, 41):
            j.root().apply({"x": x})
    with Journal.open(src, Ctx) as j:
        main = j.root()
        for x in (4, 5):
            main.apply({"x": x})
        feature = main.fork_at(3, name="feature")
        feature.apply({"x": 30})
        feature.fork_at(4, name="sub").apply({"x": 31})  # a fork of the fork
        main.fork_at(6, name="late").apply({"x": 60})


@pytest.mark.parametrize("backend", ["file", "postgres"])
def test_push_of_a_branch_forked_before_main_diverged_copies_it(tmp_path, backend, request):
    src = tmp_path / "src.db"
    if backend == "file":
        dst: str | Path = tmp_path / "dst.db"
    else:
        pg, pg_db = request.getfixturevalue("pg"), request.getfixturevalue("pg_db")
        dst = pg.url(pg_db, journal=f"f_{uuid.uuid4().hex[:10]}")
    _diverged_after_the_fork(src, dst)
    out = lithify("--json", "--db", str(src), "push", str(dst), "--branch", "sub")
    assert out.returncode == 0, out.stdout + out.stderr
    with Journal.open(dst, Ctx, readonly=True) as d, Journal.open(src, Ctx, readonly=True) as s:
        assert d.verify().ok
        for name in ("feature", "sub"):
            assert d.branch(name).head_hash == s.branch(name).head_hash
        assert d.root().state().items == [0, 1, 2, 3, 40, 41]  # the destination's main is kept
    with pytest.raises(Diverged, match="'main' diverged at seq 5"):
        replicate(src, dst, branches=["late"])  # late needs main@6, which differs there
    with pytest.raises(Diverged, match="'main' diverged at seq 5"):
        replicate(src, dst)  # all branches: main itself is asked for


@pytest.mark.slow
def test_a_killed_clone_to_a_file_finishes_when_run_again(tmp_path: Path) -> None:
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    with Journal.open(src, Ctx) as j:
        j.root().apply_many([{"x": i % 7} for i in range(20_000)])
    proc = subprocess.Popen(
        [sys.executable, WORKER, str(src), str(dst), "clone"], stdout=subprocess.PIPE
    )
    partial = tmp_path / "dst.db.partial"
    deadline = time.monotonic() + 60
    seen = 0
    while seen < 2000 and time.monotonic() < deadline:
        time.sleep(0.02)
        if partial.exists():
            try:
                with Journal.open(partial, Ctx, readonly=True) as j:
                    seen = j.root().head
            except Exception:  # noqa: BLE001 (still being created)
                pass
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert 0 < seen < 20_000, "the clone was not caught in the middle"
    assert not dst.exists()  # a clone appears whole or not at all
    out = lithify("--json", "clone", str(src), str(dst))
    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads(out.stdout)
    assert doc["resumed"] is True and doc["events"] < 20_000 - 1000  # only what was missing
    assert summary(src) == summary(dst)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dst.db", "src.db"]
    again = lithify("clone", str(src), str(dst))
    assert again.returncode == 1 and "pull" in again.stderr  # a finished clone is updated by pull


def _forest(path: Path, branches: int) -> None:
    """Main with 50 events and ``branches`` forks of 5 events each (some in a sweep)."""
    with Journal.open(path, Ctx) as j:
        main = j.root()
        main.apply_many([{"x": i} for i in range(50)])
        for k in range(branches):
            f = main.fork_at(1 + k % 49, params={"k": k})
            f.apply_many([{"x": k} for _ in range(5)])


def _statements(src: Path, dst: Path) -> tuple[int, int]:
    """(statements the source ran, transactions the destination began) in one replication."""
    from workbench.storage import open_storage

    s = open_storage(str(src), "process", readonly=True, create=False)
    d = open_storage(str(dst), "process")
    ran: list[str] = []
    began: list[str] = []
    s.conn.set_trace_callback(ran.append)
    d.conn.set_trace_callback(lambda sql: began.append(sql) if sql.startswith("BEGIN") else None)
    try:
        replicate(s, d)
    finally:
        s.close()
        d.close()
    return len(ran), len(began)


def test_a_copys_cost_follows_its_events_not_its_branches(tmp_path: Path) -> None:
    """Transactions hold up to a batch of events whatever branches they belong to, and a copy
    with nothing to do reads the same whatever the branches (the fork points' hashes in one
    query, each side's heads in one)."""
    few, many = tmp_path / "few.db", tmp_path / "many.db"
    _forest(few, 10)
    _forest(many, 200)
    _, began = _statements(many, tmp_path / "many-copy.db")
    assert began <= 5  # 1,050 events and 200 branches: about one transaction per 1,000 events
    assert summary(many) == summary(tmp_path / "many-copy.db")
    _statements(few, tmp_path / "few-copy.db")
    nothing_few = _statements(few, tmp_path / "few-copy.db")
    nothing_many = _statements(many, tmp_path / "many-copy.db")
    assert nothing_many == nothing_few and nothing_many[1] <= 2  # flat in branches
