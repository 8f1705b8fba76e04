"""The journal off the happy path: what it acknowledged is there, and what it shows is true.

Second opens in one process, threads, lazy buffers meeting write errors, snapshots that cannot
be written, a State class of another name, empty and tampered files, the intent log under
SIGKILL, values too deep to store, and one effect raced by eight processes."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import Ctx, wait_for

from workbench import (
    BranchConflict,
    InvalidValue,
    Journal,
    NotAJournal,
    NotFound,
    State,
)
from workbench.errors import (
    Busy,
    DiskFull,
    EffectInFlight,
    StateMismatch,
    StateUnavailable,
    StorageError,
)
from workbench.events import snapshot_digest
from workbench.history import DamagedSnapshotWarning
from workbench.storage import IntentLog, is_journal_file

HERE = Path(__file__).parent


def py(code: str, *args: str, **kw) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        **kw,
    )


# -- one process, one file, many opens ------------------------------------------------------


@pytest.mark.slow
def test_a_second_open_and_a_listing_in_one_process_keep_the_first_connections_locks(db_path):
    j = Journal.open(db_path, Ctx)
    j.root().apply({"x": 1})
    Journal.open(db_path, Ctx).close()  # the server, the widgets and the warm runner all do this
    assert is_journal_file(str(db_path))
    # Another process opens and closes the journal: it must see that we still hold it.
    r = py(
        """
        import sys
        from conftest import Ctx
        from workbench import Journal
        with Journal.open(sys.argv[1], Ctx) as j:
            print(j.root().head)
    """,
        str(db_path),
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1"
    assert Path(str(db_path) + "-wal").exists(), "the WAL was deleted under a live connection"
    fork = j.root().fork(params={"p": 1})
    fork.apply({"x": 2})
    r = py(
        """
        import sys
        from conftest import Ctx
        from workbench import Journal
        with Journal.open(sys.argv[1], Ctx) as j:
            print(j.branch(int(sys.argv[2])).head)
    """,
        str(db_path),
        str(fork.id),
    )
    assert r.stdout.strip() == "2", r.stderr  # the fork is visible to other processes at once
    j.close()
    with Journal.open(db_path, Ctx) as again:
        assert again.verify().ok and again.branch(fork.id).state().total == 3


@pytest.mark.slow
def test_listing_while_workers_write_never_loses_the_wal_or_an_event(db_path):
    j = Journal.open(db_path)
    j.root().apply({"base": 1})
    forks = [j.root().fork().id for _ in range(2)]
    writer = HERE / "workers" / "writer.py"
    procs = [
        subprocess.Popen(
            [sys.executable, str(writer), str(db_path), str(b), "400", f"w{b}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for b in forks
    ]
    wal = Path(str(db_path) + "-wal")
    while any(p.poll() is None for p in procs):
        assert is_journal_file(str(db_path))
        Journal.open(db_path).close()
        assert wal.exists(), "the WAL disappeared while this process held a connection"
        j.branches()
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0 and out.split()[-2:] == ["ok", "400"], err
    heads = {b.id: b.head for b in j.branches()}
    assert all(heads[b] == 401 for b in forks)  # this process sees every committed event
    assert j.verify().ok
    j.close()


# -- threads ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_journal_shared_with_polling_threads_loses_no_event(db_path):
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    j = Journal.open(db_path, Ctx, durability="lazy")
    n = 10_000  # before the lock, 2 runs in 3 lost events at this size
    done = threading.Event()
    errors: list[BaseException] = []

    def poll() -> None:
        try:
            while not done.is_set():
                j.sweeps()
                j.branches()
                j.flush()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    pollers = [threading.Thread(target=poll) for _ in range(2)]
    try:
        for t in pollers:
            t.start()
        b = j.root()
        for i in range(n):
            b.apply({"x": i})
    finally:
        done.set()
        for t in pollers:
            t.join()
        sys.setswitchinterval(old)
        j.close()
    assert not errors, errors
    with Journal.open(db_path, Ctx) as again:
        report = again.verify()
        assert report.ok and report.events == n, report.problems
        assert again.root().state().total == n * (n - 1) // 2


def test_the_database_refuses_an_append_that_does_not_follow_the_head(db_path):
    with Journal.open(db_path, Ctx) as j:
        j.root().apply({"x": 1})
    con = sqlite3.connect(db_path)
    with pytest.raises(sqlite3.IntegrityError, match="follow the branch head"):
        con.execute(
            "INSERT INTO events (branch, seq, kind, hash, parent_hash, ts, payload) "
            "VALUES (0, 5, 'delta', x'00', x'00', 0, '{}')"
        )
    con.close()


# -- lazy buffers and write errors ---------------------------------------------------------------


def _fill_disk(j: Journal) -> None:
    c = j._storage.conn  # a real SQLITE_FULL: the file may not grow past its current pages
    c.execute(f"PRAGMA max_page_count = {c.execute('PRAGMA page_count').fetchone()[0]}")


def _free_disk(j: Journal) -> None:
    j._storage.conn.execute("PRAGMA max_page_count = 1073741823")


def test_a_failed_lazy_flush_says_what_was_lost_and_never_writes_past_the_gap(db_path):
    j = Journal.open(db_path, Ctx, durability="lazy")
    b = j.root()
    for i in range(10):
        b.apply({"x": i, "pad": "p" * 500})
    j.flush()
    for i in range(10, 20):
        b.apply({"x": i, "pad": "p" * 500})
    _fill_disk(j)
    with pytest.raises(DiskFull) as e:
        j.flush()
    assert e.value.lost == 10 and "10 buffered event(s) were not written" in str(e.value)
    _free_disk(j)
    with pytest.raises(
        BranchConflict
    ):  # the handle that buffered them is stale: no seq 21 after a gap
        b.apply({"x": 99})
    fresh = j.branch(0)
    assert fresh.head == 10 and fresh.state().total == sum(range(10))
    assert fresh.apply({"x": 100}) == 11
    j.close()
    with Journal.open(db_path, Ctx) as again:
        assert again.verify().ok and again.root().head == 11


def test_a_stale_handle_is_refused_at_apply_not_at_the_flush_of_an_up_to_date_one(db_path):
    j = Journal.open(db_path, Ctx, durability="lazy")
    ahead, stale = j.root(), j.root()
    ahead.apply({"x": 1})
    with pytest.raises(BranchConflict):
        stale.apply({"x": 2})
    ahead.apply({"x": 3})
    j.close()
    with Journal.open(db_path, Ctx) as again:
        assert again.root().state().items == [1, 3]


def test_a_failed_snapshot_never_fails_the_append_it_follows(db_path):
    j = Journal.open(db_path, Ctx, snapshot_every=2)
    b = j.root()
    b.apply({"x": 1})
    c = j._storage.conn
    c.execute(
        "CREATE TRIGGER no_room BEFORE INSERT ON snapshots BEGIN SELECT RAISE(ABORT, 'no room'); "
        "END"
    )
    assert b.apply({"x": 2}) == 2  # committed, so it returns: a retry would duplicate it
    assert b.apply({"x": 3}) == 3
    with pytest.raises(StorageError):  # compact writes its event and snapshot together, or neither
        b.compact(lambda br, s: Ctx(items=[s.total], total=s.total))
    assert j.branch(0).head == 3
    c.execute("DROP TRIGGER no_room")
    b = j.branch(0)
    assert b.compact(lambda br, s: Ctx(items=[s.total], total=s.total)) == 4
    j.close()
    with Journal.open(db_path, Ctx) as again:
        assert again.verify().ok
        assert [again.root().at(s).total for s in range(5)] == [0, 1, 3, 6, 6]


@pytest.mark.slow
def test_busy_past_the_timeout_is_one_clear_error(db_path):
    with Journal.open(db_path, Ctx) as j:
        j.root().apply({"x": 1})
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import sqlite3, sys
        c = sqlite3.connect({str(db_path)!r}, isolation_level=None)
        c.execute("BEGIN IMMEDIATE")
        print("held", flush=True)
        sys.stdin.read()
    """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with Journal.open(db_path, Ctx, timeout=0.3) as j:
            # the timeout given is the one SQLite waits (not the 30 s default), then one error
            assert j._storage.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 300
            with pytest.raises(Busy, match="timeout"):
                j.root().apply({"x": 2})
            assert j.root().state().total == 1  # reads go on
    finally:
        holder.communicate(timeout=10)


def test_atomic_nests_with_savepoints_and_survives_a_failed_commit(db_path):
    with Journal.open(db_path, Ctx) as j:
        db = j._storage
        with db.atomic():
            db.put_tag("outer", 0, 0)
            with pytest.raises(KeyError):
                with db.atomic():
                    db.put_tag("inner", 0, 0)
                    raise KeyError("inner fails")
        assert db.tag("outer") == (0, 0) and db.tag("inner") is None
        db.conn.execute("PRAGMA foreign_keys = ON")
        db.conn.execute("PRAGMA defer_foreign_keys = ON")
        with pytest.raises(StorageError, match="FOREIGN KEY"):
            with db.atomic():  # the violation is found at COMMIT: it fails, and is rolled back
                db.insert_branches([("orphan", 999, 0, "{}", None)])
        assert not db.conn.in_transaction
        assert [b.name for b in j.branches()] == ["main"]
        j.root().apply({"x": 1})  # the connection still works
        assert j.root().head == 1


# -- what the journal shows is true --------------------------------------------------------------


@dataclass
class Other(State):
    """Same shape as Ctx, other meaning."""

    items: list[int] = field(default_factory=list)
    total: int = 0

    def apply(self, delta: dict) -> None:
        self.items.insert(0, delta["x"])
        self.total -= delta["x"]


def test_opening_with_a_state_class_of_another_name_is_refused(db_path):
    with Journal.open(db_path, Ctx) as j:
        j.root().apply({"x": 5})
    with pytest.raises(StateMismatch) as e:
        Journal.open(db_path, Other)
    assert (
        "tests.ctx/1" in str(e.value) and "Other" in str(e.value) and "state_name" in str(e.value)
    )

    try:

        class Successor(Other):
            state_name = "tests.ctx/1"  # declared compatible (and registered under that name)

        with Journal.open(db_path, Successor) as j:
            assert j.root().state().total == -5
        with Journal.open(db_path) as j:  # the class registered last under the name
            assert j.state_class is Successor
    finally:
        State._registry["tests.ctx/1"] = Ctx


def test_a_class_without_state_name_is_recorded_by_qualname(tmp_path):
    path = tmp_path / "q.db"

    @dataclass
    class Plain(State):
        n: int = 0

        def apply(self, delta: dict) -> None:
            self.n += delta["n"]

    with Journal.open(path, Plain) as j:
        j.root().apply({"n": 1})
        assert j.state_name == Plain.__qualname__
    with pytest.raises(StateMismatch):
        Journal.open(path, Other)
    with pytest.raises(StateMismatch, match="plain JSON"):
        plain = tmp_path / "plain.db"
        Journal.open(plain).close()
        Journal.open(plain, Plain)


@pytest.mark.slow
def test_an_unknown_state_class_allows_event_reads_and_refuses_states(tmp_path):
    path = tmp_path / "mystery.db"
    r = py(
        """
        import sys
        from dataclasses import dataclass
        from workbench import Journal, State

        @dataclass
        class Mystery(State):
            n: int = 0
            def apply(self, d):
                self.n += 2 * d["n"]

        with Journal.open(sys.argv[1], Mystery) as j:
            b = j.root()
            for i in range(200):
                b.apply({"n": 1})
            b.observe("m", 1.0)
            print(b.state().n)
    """,
        str(path),
    )
    assert r.stdout.strip() == "400", r.stderr
    before = path.read_bytes()
    with Journal.open(path) as j:
        assert len(j.root().history()) == 201 and j.verify().ok
        assert j.matrix().height == 1 and j.tail()[1] > 0 and j.sweeps() == []
        for read in (
            lambda: j.root().state(),
            lambda: j.root().at(3),
            lambda: j.diff("main@1", "main@2"),
        ):
            with pytest.raises(StateUnavailable, match="--state"):
                read()
        with pytest.raises(StateUnavailable):
            j.root().apply(
                {"n": 1}
            )  # a write that needs the state, refused before anything is written
        assert j.root().head == 201
    with Journal.open(path, raw=True) as j:  # the explicit, read-only plain-JSON view
        assert j.root().state() == {"n": 1}  # what merge patches make of it: not the true 400
        with pytest.raises(StorageError):
            j.root().rollback(1)
    lithify = [sys.executable, "-m", "workbench", "--db", str(path)]
    r = subprocess.run([*lithify, "show", "head~100"], capture_output=True, text=True)
    assert r.returncode == 1 and "--state" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([*lithify, "--raw", "show", "head~100"], capture_output=True, text=True)
    assert r.returncode == 0 and "raw" in r.stdout
    r = subprocess.run(
        [*lithify, "--raw", "rollback", "--to", "100", "--yes"], capture_output=True, text=True
    )
    assert r.returncode == 2 and "--raw" in r.stderr
    r = subprocess.run(
        [*lithify, "rollback", "--to", "100", "--yes"], capture_output=True, text=True
    )
    assert r.returncode == 1 and "--state" in r.stderr
    assert path.read_bytes() == before


@pytest.mark.slow
def test_an_empty_file_is_not_a_healthy_journal(tmp_path):
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    Path(str(path) + "-intents").write_text("+ 0 " + "ab" * 32 + ' "llm:1"\n')
    with pytest.raises(NotAJournal, match="empty"):
        Journal.open(path, Ctx)
    r = subprocess.run(
        [sys.executable, "-m", "workbench", "--db", str(path), "verify"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 1 and "empty" in r.stderr
    assert path.read_bytes() == b"" and not Path(str(path) + "-wal").exists()
    with Journal.open(path, Ctx, create=True) as j:  # asked for
        assert j.root().apply({"x": 1}) == 1
    with pytest.raises(NotFound):
        Journal.open(tmp_path / "nope.db", Ctx, create=False)


def test_a_new_journal_never_inherits_a_leftover_intent_log(tmp_path):
    path = tmp_path / "new.db"
    Path(str(path) + "-intents").write_text("+ 0 " + "ab" * 32 + ' "llm:1"\n')
    with Journal.open(path, Ctx) as j:
        assert j.root().unknown_outcomes() == []


def _tamper_snapshot(db: Path, seq: int, state: str, reseal: bool = False) -> None:
    """Replace the stored state of the root's snapshot at ``seq`` (the journal is closed: no
    plain descriptor beside a live connection); ``reseal``: with a matching seal, as if the
    damage were in what it holds rather than in its bytes."""
    con = sqlite3.connect(db)
    if reseal:
        (h,) = con.execute(
            "SELECT hash FROM events WHERE branch = 0 AND seq = ?", (seq,)
        ).fetchone()
        digest = snapshot_digest(h, state)
        con.execute(
            "UPDATE snapshots SET state = ?, state_size = NULL, digest = ? "
            "WHERE branch = 0 AND seq = ?",
            (state, digest, seq),
        )
    else:
        con.execute(
            "UPDATE snapshots SET state = ?, state_size = NULL WHERE branch = 0 AND seq = ?",
            (state, seq),
        )
    con.commit()
    con.close()


@pytest.mark.parametrize(
    "damage", ["seal", "undecodable"], ids=["seal-broken", "sealed-but-undecodable"]
)
def test_a_damaged_snapshot_is_passed_over_with_a_warning_and_rebuild_repairs_it(db_path, damage):
    # One damaged snapshot made its branch (and every fork past it) unreadable although every
    # event verified: state(), at() and state_at raised IntegrityError (or the State's
    # TypeError) instead of replaying the events the snapshot only caches.
    with Journal.open(db_path, Ctx, snapshot_every=4) as j:
        b = j.root()
        for i in range(10):
            b.apply({"x": i})
        b.fork_at(9).apply({"x": 100})
    if damage == "seal":
        _tamper_snapshot(db_path, 8, '{"items":[],"total":1000}')
    else:
        _tamper_snapshot(db_path, 8, '{"not_a_field":1}', reseal=True)
    xs = list(range(10))
    with Journal.open(db_path, Ctx) as j:
        if damage == "seal":  # verify still names the damage before the repair
            assert j.verify().problems == [
                (0, 8, "snapshot does not match its seal (state changed)")
            ]
        reads = {
            "state": lambda: j.root().state(),
            "at": lambda: j.root().at(9),
            "at the snapshot": lambda: j.root().at(8),
            "fork": lambda: j.branch(1).state(),
            "state_at": lambda: j.history.state_at(0, 10).state,
        }
        want = {
            "state": Ctx(xs, 45),
            "at": Ctx(xs[:9], 36),
            "at the snapshot": Ctx(xs[:8], 28),
            "fork": Ctx(xs[:9] + [100], 136),
            "state_at": Ctx(xs, 45),
        }
        for name, read in reads.items():
            with pytest.warns(DamagedSnapshotWarning) as caught:
                assert read() == want[name], name
            text = str(caught[0].message)
            assert "branch 0 at seq 8" in text and "journal.rebuild_snapshots()" in text, text
        assert j.rebuild_snapshots() == 1
        assert j.verify().ok
    with Journal.open(db_path, Ctx) as j, warnings.catch_warnings():
        warnings.simplefilter("error")  # repaired: read without a warning, from the snapshot
        assert j.root().at(9) == Ctx(xs[:9], 36) and j.history.state_at(0, 9).base == 8
        assert j.rebuild_snapshots() == 0


@pytest.mark.slow
def test_a_tampered_snapshot_is_caught_when_loaded_and_verify_checks_anchors(db_path):
    with Journal.open(db_path, Ctx, snapshot_every=4) as j:
        b = j.root()
        for i in range(10):
            b.apply({"x": i})
        anchor = b.head_hash
        b.apply({"x": 10})
    con = sqlite3.connect(db_path)
    con.execute('UPDATE snapshots SET state = \'{"items":[],"total":1000}\' WHERE seq = 8')
    con.commit()
    con.close()
    with Journal.open(db_path, Ctx) as j:
        with pytest.warns(DamagedSnapshotWarning, match="branch 0 at seq 8"):
            assert j.root().at(9).total == sum(range(9))  # replayed past it, not misread
        report = j.verify(expect={0: anchor})
        assert not report.ok and report.problems == [
            (0, 8, "snapshot does not match its seal (state changed)")
        ]
        assert report.anchored[0][1:] == (10, anchor)
        assert report.heads[0][:2] == (0, 11)
        bad = j.verify(expect={"main": "deadbeef" * 8})
        assert any("not in branch 0's history" in w for _, _, w in bad.problems)
    lithify = [sys.executable, "-m", "workbench", "--db", str(db_path)]
    r = subprocess.run(
        [*lithify, "--json", "verify", "--expect", anchor[:32]], capture_output=True, text=True
    )
    assert r.returncode == 1  # the snapshot is still tampered


@pytest.mark.slow
def test_verify_expect_from_the_cli(db_path):
    with Journal.open(db_path, Ctx) as j:
        j.root().apply({"x": 1})
        h = j.root().head_hash
        j.root().apply({"x": 2})
    lithify = [sys.executable, "-m", "workbench", "--db", str(db_path)]
    ok = subprocess.run([*lithify, "verify", "--expect", h], capture_output=True, text=True)
    assert ok.returncode == 0 and "anchored" in ok.stdout
    bad = subprocess.run(
        [*lithify, "verify", "--expect", "main=" + "0" * 64], capture_output=True, text=True
    )
    assert bad.returncode == 1 and "not in branch 0's history" in bad.stdout


# -- the intent log ------------------------------------------------------------------------------


@pytest.mark.slow
def test_intent_log_compaction_survives_sigkill_at_any_moment(tmp_path):
    log = str(tmp_path / "x.db")
    worker = textwrap.dedent("""
        import sys
        from workbench.storage import IntentLog
        log = IntentLog(sys.argv[1], "process")
        if sys.argv[2] == "seed":
            for i in range(3000):
                log.announce(0, i.to_bytes(32, "big"), f"key:{i}")
            log.close()
            sys.exit(0)
        print("go", flush=True)
        while True:
            log.compact(lambda announced: announced)  # keeps every intent: only the file changes
    """)
    subprocess.run([sys.executable, "-c", worker, log, "seed"], check=True)
    assert len(IntentLog(log, "process").pending()) == 3000
    rng = random.Random(7)
    for _ in range(12):
        p = subprocess.Popen(
            [sys.executable, "-c", worker, log, "loop"], stdout=subprocess.PIPE, text=True
        )
        assert p.stdout.readline().strip() == "go"
        time.sleep(rng.uniform(0.0, 0.15))
        p.send_signal(signal.SIGKILL)
        p.communicate()
        assert len(IntentLog(log, "process").pending()) == 3000


def test_a_garbage_intent_log_reads_as_no_intents(db_path):
    with Journal.open(db_path, Ctx) as j:
        j.root().effect("k", lambda: 1)
    Path(str(db_path) + "-intents").write_bytes(os.urandom(2000) + b"\n\xff\n+ 0 zz\n")
    with Journal.open(db_path, Ctx) as j:
        assert j.root().unknown_outcomes() == []
        assert j.root().effect("k2", lambda: 2) == 2


# -- values that cannot be stored ------------------------------------------------------------


def nest(depth: int, leaf: object = 1) -> object:
    v = leaf
    for _ in range(depth):
        v = [v]
    return v


def test_values_too_deep_to_read_back_are_refused_before_anything_is_written(journal):
    b = journal.root()
    with pytest.raises(InvalidValue, match=r"delta\['deep'\]\[0\].*levels deep"):
        b.apply({"x": 1, "deep": nest(5000)})
    with pytest.raises(InvalidValue, match="levels deep"):
        b.apply_many([{"x": 1}, nest(300)])
    calls = []
    with pytest.raises(InvalidValue, match="result"):
        b.effect("deep", lambda: calls.append(1) or nest(1100))
    assert b.head == 0 and journal.verify().ok
    assert b.unknown_outcomes() == ["deep"]  # it ran; its result could not be kept
    b.apply({"x": 1, "ok": nest(200)})  # deep enough, and it reads back
    assert journal.root().history()[0].payload["x"] == 1


@pytest.mark.parametrize("what", ["key", "label", "name", "metric"])
def test_lone_surrogates_are_refused_before_anything_is_written(journal, what):
    b = journal.root()
    bad = "a\ud800b"
    with pytest.raises(InvalidValue, match="surrogate"):
        if what == "key":
            b.effect(bad, lambda: 1)
        elif what == "label":
            b.tag(bad)
        elif what == "name":
            b.fork(name=bad)
        else:
            b.observe(bad, 1.0)
    assert b.head == 0 and [x.id for x in journal.branches()] == [0]


# -- effects across processes ------------------------------------------------------------------


@pytest.mark.slow
def test_eight_processes_racing_one_effect_run_it_once(db_path):
    with Journal.open(db_path, Ctx) as j:
        j.root().apply({"x": 1})
    ran, go = db_path.parent / "ran.txt", db_path.parent / "go"
    worker = textwrap.dedent("""
        import os, sys, time
        from conftest import Ctx
        from workbench import Journal
        from workbench.errors import EffectInFlight
        path, ran, go = sys.argv[1:4]
        with Journal.open(path, Ctx) as j:
            b = j.root()
            print("ready", flush=True)
            while not os.path.exists(go):
                time.sleep(0.001)
            def call():
                with open(ran, "a") as f:
                    f.write(f"{os.getpid()}\\n")
                time.sleep(0.5)
                return 42
            try:
                print("result", b.effect("llm:shared", call), flush=True)
            except EffectInFlight as e:
                print("inflight", flush=True)
    """)
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", worker, str(db_path), str(ran), str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(8)
    ]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    go.touch()
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        outs.append(out.strip())
    assert len(ran.read_text().split()) == 1, outs  # fn ran once, in one process
    assert "result 42" in outs and set(outs) <= {"result 42", "inflight"}
    with Journal.open(db_path, Ctx) as j:
        assert j.root().effect("llm:shared", lambda: 0) == 42


@pytest.mark.slow
def test_a_dead_processs_announcement_does_not_block_a_retry(db_path):
    with Journal.open(db_path, Ctx) as j:
        j.root().apply({"x": 1})
    p = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent("""
        import sys, time
        from conftest import Ctx
        from workbench import Journal
        j = Journal.open(sys.argv[1], Ctx)
        def hang():
            print("running", flush=True)
            time.sleep(60)
        j.root().effect("llm:slow", hang)
    """),
            str(db_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(HERE)},
    )
    assert p.stdout.readline().strip() == "running"
    with Journal.open(db_path, Ctx) as j:
        with pytest.raises(EffectInFlight):
            j.root().effect("llm:slow", lambda: "twice")
    p.send_signal(signal.SIGKILL)
    p.communicate()
    with Journal.open(db_path, Ctx) as j:
        assert j.root().unknown_outcomes() == ["llm:slow"]
        assert j.root().effect("llm:slow", lambda: "retried") == "retried"


def test_the_same_effect_in_two_threads_of_one_process_runs_once(db_path):
    j = Journal.open(db_path, Ctx)
    j.root().apply({"x": 1})
    started, release = threading.Event(), threading.Event()
    results: list[object] = []

    def slow() -> int:
        started.set()
        release.wait(10)
        return 7

    t = threading.Thread(target=lambda: results.append(j.root().effect("k", slow)))
    t.start()
    assert started.wait(10)
    with pytest.raises(EffectInFlight):
        j.branch(0).effect("k", lambda: 8)
    release.set()
    t.join()
    assert results == [7] and j.branch(0).effect("k", lambda: 9) == 7
    j.close()


def test_a_long_batch_checks_its_first_event_and_keeps_the_guard(db_path):
    from workbench.storage import TRIGGERLESS_BATCH

    with Journal.open(db_path, Ctx, durability="lazy") as j:
        b = j.root()
        b.apply_many([{"x": i} for i in range(TRIGGERLESS_BATCH * 3)])
        for i in range(TRIGGERLESS_BATCH * 2):  # a lazy flush of a long buffer takes the same path
            b.apply({"x": i})
        j.flush()
        stale = j.branch(0)
        j.branch(0).apply({"x": 0})
        with pytest.raises(BranchConflict):
            stale.apply_many([{"x": i} for i in range(TRIGGERLESS_BATCH * 2)])
        assert j.branch(0).head == TRIGGERLESS_BATCH * 5 + 1
    con = sqlite3.connect(db_path)
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert "events_follow_head" in names  # the guard is back for every other writer
    with pytest.raises(sqlite3.IntegrityError):
        con.execute(
            "INSERT INTO events (branch, seq, kind, hash, parent_hash, ts, payload) "
            "VALUES (0, 99999, 'delta', x'00', x'00', 0, '{}')"
        )
    con.close()


# -- found in review: lazy buffers, threads, clocks, anchors ---------------------------------------


def test_a_refused_delta_in_lazy_mode_never_snapshots_a_state_without_the_buffer(db_path):
    @dataclass
    class Picky(State):
        n: list = field(default_factory=list)

        def apply(self, d: dict) -> None:
            if d.get("bad"):
                raise ValueError("refused by the State")
            self.n.append(d["x"])

    j = Journal.open(db_path, Picky, durability="lazy", snapshot_every=4)
    b = j.root()
    b.apply({"x": 1})
    b.apply({"x": 2})
    with pytest.raises(ValueError):
        b.apply({"bad": True})
    assert b.state().n == [1, 2]
    b.apply({"x": 3})
    b.apply({"x": 4})  # seq 4: the automatic snapshot
    j.close()
    with Journal.open(db_path, Picky) as j:
        assert j.root().at(4).n == [1, 2, 3, 4] and j.verify().ok


def test_a_lost_buffer_is_reported_to_its_own_branch_not_to_another(db_path):
    j = Journal.open(db_path, durability="lazy")
    main = j.root()
    main.apply({"x": 0})
    j.flush()
    other = main.fork(name="other")
    main.apply({"x": 1})  # buffered on main
    with Journal.open(db_path) as elsewhere:
        elsewhere.root().apply({"by": "another process"})  # main's buffer is stale now
    calls = []
    assert other.effect("llm:1", lambda: calls.append(1) or "paid") == "paid"  # other is not blamed
    assert calls == [1] and other.unknown_outcomes() == []
    assert len(j.branches()) == 2  # a read: it writes every buffer, and main's is refused
    with pytest.raises(BranchConflict) as e:
        main.apply({"x": 2})
    assert e.value.lost == 1 and "1 event(s) buffered" in str(e.value)
    j.close()


def test_a_failed_sweep_never_rolls_back_flushed_events(tmp_path):
    for extra in range(2, 80):  # a page limit that lets the buffer in and then stops the sweep
        path = tmp_path / f"s{extra}.db"
        j = Journal.open(path, durability="lazy")
        b = j.root()
        b.apply({"x": 0})
        j.flush()
        for i in range(20):
            b.apply({"x": i, "pad": "p" * 200})  # acknowledged, buffered
        c = j._storage.conn
        c.execute(f"PRAGMA max_page_count = {c.execute('PRAGMA page_count').fetchone()[0] + extra}")
        try:
            j.sweep(b, 1, [{"k": i, "blob": "q" * 300} for i in range(60)])
        except DiskFull as e:
            if "lost" in e.fields:  # the buffer itself did not fit: reported as lost, try more room
                j.close()
                continue
            c.execute("PRAGMA max_page_count = 1073741823")
            assert j.branch(0).head == 21  # the sweep failed; the buffered events stayed written
            j.close()
            with Journal.open(path) as again:
                assert again.root().head == 21 and again.sweeps() == [] and again.verify().ok
            return
        j.close()
    raise AssertionError("no page limit made the sweep fail after the flush")


def test_effect_with_expect_asks_the_stored_head_before_fn_runs(db_path):
    j = Journal.open(db_path, Ctx)
    b = j.root()
    b.apply({"x": 1})
    with Journal.open(db_path, Ctx) as other:
        other.root().apply({"x": 2})
    calls = []
    with pytest.raises(BranchConflict):
        b.effect("charge", lambda: calls.append(1), expect=1)
    assert calls == [] and b.unknown_outcomes() == []
    j.close()


def test_times_out_of_range_are_refused_and_spoil_no_buffer(db_path):
    j = Journal.open(db_path, durability="lazy")
    a, other = j.root(), j.root().fork(name="b")
    with pytest.raises(InvalidValue, match="out of range"):
        a.apply({"x": 1}, occurred_at=10**20)
    for bad in (10**20, float("inf")):
        with pytest.raises(InvalidValue):
            a.as_of(bad)
    for i in range(50):
        other.apply({"y": i})
    j.close()
    with Journal.open(db_path) as again:
        assert again.info("b").head == 50


def test_one_journal_under_two_spellings_shares_running_effects(tmp_path):
    path = tmp_path / "j.db"
    ja, jb = Journal.open(path), Journal.open(tmp_path / "." / "j.db")
    started, release = threading.Event(), threading.Event()

    def slow() -> str:
        started.set()
        release.wait(10)
        return "paid"

    t = threading.Thread(target=lambda: ja.root().effect("pay", slow))
    t.start()
    assert started.wait(10)
    with pytest.raises(EffectInFlight):
        jb.root().effect("pay", lambda: "twice")
    release.set()
    t.join()
    ja.close()
    jb.close()


def test_closing_under_writing_threads_is_a_clear_error(db_path):
    j = Journal.open(db_path)
    seen: list[str] = []
    written = [0, 0]

    def writer(h, i: int) -> None:
        try:
            while True:
                h.apply({"x": 1})
                written[i] += 1
        except Exception as e:  # noqa: BLE001
            seen.append(type(e).__name__)

    handles = (j.root(), j.root().fork())
    threads = [threading.Thread(target=writer, args=(h, i)) for i, h in enumerate(handles)]
    for t in threads:
        t.start()
    try:
        wait_for(lambda: all(written), what="both threads to be writing")
    finally:
        j.close()  # (also when the wait fails: the threads end with it)
    for t in threads:
        t.join()
    assert set(seen) <= {"WorkbenchError", "BranchConflict"} and seen


@pytest.mark.slow
def test_a_normal_exit_writes_what_was_buffered(db_path):
    r = py(
        """
        import sys
        from workbench import Journal
        j = Journal.open(sys.argv[1], durability="lazy")
        b = j.root()
        for i in range(100):
            b.apply({"x": i})
    """,
        str(db_path),
    )  # no close(): the interpreter exits normally
    assert r.returncode == 0, r.stderr
    with Journal.open(db_path) as j:
        assert j.root().head >= 100


def test_an_unrelated_delta_kind_leaves_snapshots_usable(db_path):
    from workbench import deltas

    with Journal.open(db_path, Ctx, snapshot_every=100) as j:
        j.root().apply_many([{"x": 1}] * 1000)
        built = j.history.built()

    @deltas.delta("tests.trust.unrelated", version=1)
    @dataclass
    class Unrelated:
        y: int = 0

    with Journal.open(db_path, Ctx) as j:
        assert j.history.built() == built  # a kind at version 1 with no upcaster changes nothing
        assert j.root().at(990).total == 990
        assert {m[2] for m in j.storage.all_snapshot_marks()} == {built}


def test_short_anchors_are_refused(db_path):
    with Journal.open(db_path, Ctx) as j:
        j.root().apply({"x": 1})
        h = j.root().head_hash
        with pytest.raises(InvalidValue, match="32"):
            j.verify(expect={0: h[:16]})
        assert j.verify(expect={0: h[:32]}).ok


# -- effects on a branch another writer moves, and what a failed write after one means ------------


def test_an_effect_on_a_branch_another_writer_moved_does_not_run_fn(db_path):
    j = Journal.open(db_path, Ctx)
    mine = j.root()
    mine.apply({"x": 1})
    with Journal.open(db_path, Ctx) as other:  # another process's writer, appending first
        other.root().apply({"x": 2})
    calls: list[int] = []
    with pytest.raises(BranchConflict) as e:
        mine.effect("charge", lambda: calls.append(1) or "paid")
    assert calls == [] and e.value.ran is False and e.value.key == "charge"
    assert "did not run" in str(e.value) and (e.value.expected, e.value.actual) == (1, 2)
    assert mine.unknown_outcomes() == []
    fresh = j.branch(0)  # what the message says to do: fn runs once, there
    assert fresh.effect("charge", lambda: calls.append(1) or "paid") == "paid" and calls == [1]
    j.close()


def test_a_result_whose_branch_moved_while_fn_ran_is_committed_and_never_rerun(db_path):
    j = Journal.open(db_path, Ctx)
    mine = j.root()
    mine.apply({"x": 1})
    calls: list[int] = []

    def pay() -> str:
        calls.append(1)
        with Journal.open(db_path, Ctx) as other:  # another writer appends while fn runs
            other.root().apply({"x": 2})
        return "paid"

    with pytest.raises(BranchConflict) as e:
        mine.effect("charge", pay)
    assert calls == [1] and e.value.ran is True and e.value.seq == 3
    assert "fn ran once" in str(e.value) and "committed at 0@3" in str(e.value)
    fresh = j.branch(0)
    assert fresh.effect("charge", lambda: calls.append(1) or "twice") == "paid"
    assert calls == [1] and fresh.unknown_outcomes() == []
    assert [r.kind for r in fresh.history()] == ["delta", "delta", "effect"]
    assert j.verify().ok and fresh.state().items == [1, 2]
    with pytest.raises(BranchConflict):  # the handle that ran it is stale: it says so again
        mine.apply({"x": 3})
    j.close()


def test_with_expect_a_moved_branch_leaves_the_result_an_unknown_outcome(db_path):
    j = Journal.open(db_path, Ctx)
    mine = j.root()
    mine.apply({"x": 1})

    def pay() -> str:
        with Journal.open(db_path, Ctx) as other:
            other.root().apply({"x": 2})
        return "paid"

    with pytest.raises(BranchConflict) as e:
        mine.effect("charge", pay, expect=1)
    assert e.value.ran is True and "unknown outcome" in str(e.value)
    assert j.branch(0).head == 2 and mine.unknown_outcomes() == ["charge"]
    j.close()


@pytest.mark.slow
def test_a_full_disk_after_an_effect_commits_never_reports_it_unwritten(tmp_path):
    # Each child writes effects under a file-size limit a little above its WAL's size, so the
    # limit lands among the writes of the next few effects (and of the effect index: the handle
    # moves its in-memory map there every FX_MAP_MAX effects). A call that raised must have
    # written nothing and say whether fn ran, and one that returned must be committed.
    child = textwrap.dedent("""
        import json, os, resource, sys
        import workbench.effects as effects
        from workbench import Journal
        from workbench.errors import WorkbenchError
        path, margin = sys.argv[1], int(sys.argv[2])
        effects.FX_MAP_MAX = 400
        j = Journal.open(path)
        b = j.root()
        for i in range(399):
            b.effect(f"k:{i}", lambda i=i: {"i": i, "pad": "p" * 200})
        wal = os.path.getsize(path + "-wal")
        resource.setrlimit(resource.RLIMIT_FSIZE, (wal + margin, resource.RLIM_INFINITY))
        returned, raised, ran = [], None, []
        for i in range(399, 2000):
            try:
                b.effect(f"k:{i}", lambda i=i: ran.append(i) or {"i": i, "pad": "p" * 200})
            except WorkbenchError as e:
                raised = {"key": f"k:{i}", "kind": type(e).__name__, "message": str(e)}
                raised["ran"] = i in ran
                break
            returned.append(f"k:{i}")
        print(json.dumps({"returned": returned, "raised": raised}))
        os._exit(0)  # no close: it would checkpoint into the main file, past the limit too
    """)
    committed_after_error = []
    for margin in range(2048, 40 * 1024, 2048):
        path = tmp_path / f"m{margin}.db"
        out = py(child, str(path), str(margin))
        assert out.returncode == 0, out.stderr
        report = json.loads(out.stdout.strip().splitlines()[-1])
        with Journal.open(path) as j:
            keys = {r.payload["key"] for r in j.root().history() if r.kind == "effect"}
            assert j.verify().ok
        assert set(report["returned"]) <= keys, margin
        raised = report["raised"]
        assert raised is not None and raised["kind"] == "DiskFull", (margin, raised)
        if raised["key"] in keys:
            committed_after_error.append((margin, raised["message"]))
        # The error says whether fn ran (then the key is an unknown outcome), never wrongly.
        assert ("ran fn" in raised["message"]) == raised["ran"], (margin, raised)
        if raised["ran"]:
            with Journal.open(path) as j:
                assert j.root().unknown_outcomes() == [raised["key"]]
    assert committed_after_error == []


@pytest.mark.slow
def test_unknown_outcomes_answers_while_another_process_holds_a_write_transaction(db_path):
    with Journal.open(db_path, Ctx) as j:
        b = j.root()
        for i in range(5):
            b.effect(f"k:{i}", lambda i=i: i)
        with pytest.raises(InvalidValue):
            b.effect("lost", lambda: {1})  # ran; its result could not be stored
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent("""
                import sqlite3, sys
                c = sqlite3.connect(sys.argv[1], isolation_level=None)
                c.execute("BEGIN IMMEDIATE")
                c.execute("INSERT OR REPLACE INTO meta VALUES ('held', '1')")
                print("held", flush=True)
                sys.stdin.read()
            """),
            str(db_path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with Journal.open(db_path, Ctx, timeout=0.2) as j:  # Busy after 0.2 s if it waited
            assert j.root().unknown_outcomes() == ["lost"]
            assert j.branch(0).unknown_outcomes() == ["lost"]
    finally:
        holder.communicate("", timeout=30)


def test_a_long_lived_process_keeps_its_intent_log_small(db_path, monkeypatch):
    monkeypatch.setattr(IntentLog, "COMPACT_BYTES", 16 * 1024)
    log = Path(str(db_path) + "-intents")
    j = Journal.open(db_path, Ctx)
    b = j.root()
    with pytest.raises(InvalidValue):
        b.effect("lost", lambda: {1})  # an unknown outcome: every compaction keeps it
    largest = 0
    for i in range(3000):  # about 300 KB of announcements
        b.effect(f"k:{i}", lambda i=i: i)
        largest = max(largest, log.stat().st_size)
    assert largest < 2 * 16 * 1024, largest
    assert b.unknown_outcomes() == ["lost"]
    assert b.effect("k:7", lambda: "again") == 7
    j.close()
    with Journal.open(db_path, Ctx) as again:
        assert again.root().unknown_outcomes() == ["lost"]


def test_compaction_keeps_the_announcement_of_an_effect_running_in_another_thread(
    db_path, monkeypatch
):
    monkeypatch.setattr(IntentLog, "COMPACT_BYTES", 2048)
    j = Journal.open(db_path, Ctx)
    started, release = threading.Event(), threading.Event()
    results: list[object] = []

    def slow() -> int:
        started.set()
        release.wait(30)
        return 7

    t = threading.Thread(
        target=lambda: results.append(j.branch(0).fork(name="t").effect("k", slow))
    )
    t.start()
    assert started.wait(30)
    main = j.root()
    for i in range(200):  # compacts several times while "k" runs in the thread
        main.effect(f"m:{i}", lambda i=i: i)
    fork = j.branch("t")
    # Another process sees the running effect as live (in flight), not as an unknown outcome.
    seen = py(
        """
        import sys
        from workbench import Journal
        from workbench.errors import EffectInFlight
        with Journal.open(sys.argv[1]) as j:
            try:
                j.branch("t").effect("k", lambda: "twice")
            except EffectInFlight:
                print("in flight")
        """,
        str(db_path),
    )
    assert seen.stdout.strip() == "in flight", seen.stderr
    release.set()
    t.join()
    assert results == [7] and fork.effect("k", lambda: 8) == 7
    j.close()


@pytest.mark.slow
def test_a_refused_compaction_keeps_the_log_shared_with_the_process_that_tried(tmp_path):
    # Linux drops a flock lock before converting it: a compaction refused because another
    # process holds the log left this one holding nothing, so that process could compact, and
    # this one went on appending to the file the compaction had replaced: lines no one reads.
    path = str(tmp_path / "j.db")
    other = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent("""
                import sys
                from workbench.storage import IntentLog
                log = IntentLog(sys.argv[1], "process")
                log.announce(0, b"o" * 32, "other")
                print("held", flush=True)
                sys.stdin.readline()
                print(log.compact(lambda announced: announced), flush=True)
                sys.stdin.readline()
            """),
            path,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout.readline().strip() == "held"
        mine = IntentLog(path, "process")
        mine.announce(0, b"m" * 32, "mine")
        assert mine.compact(lambda announced: announced) is False  # the other holds the log
        other.stdin.write("compact\n")
        other.stdin.flush()
        assert other.stdout.readline().strip() == "False"  # and this one still holds it too
        mine.announce(0, b"n" * 32, "mine, after")
        keys = set(IntentLog(path, "process").pending().values())
        assert keys == {"other", "mine", "mine, after"}
        mine.close()
    finally:
        other.communicate("\n", timeout=30)
