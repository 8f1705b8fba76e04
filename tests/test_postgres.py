"""The PostgreSQL backend against a real server (Debian's binaries, started per test session):
the storage contract unchanged, role by role; cross-backend hash identity, concurrency across
processes, durability under a killed client and an immediate server stop."""

from __future__ import annotations

import hashlib
import itertools
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from conftest import Ctx, wait_for
from pg_server import PgServer
from storage_contract import (
    Backend,
    BranchCatalogContract,
    EffectIndexContract,
    EventLogContract,
    FullTextSearchContract,
    IntentStoreContract,
    ObservationReaderContract,
    RunLogContract,
    SnapshotStoreContract,
    StoreCoreContract,
)

from workbench import BranchConflict, Journal
from workbench.errors import InvalidValue, NotFound, StorageError
from workbench.storage import IntentStore, Storage, open_storage


def journal_url(pg: PgServer, db: str, path: Path) -> str:
    """A journal per test path: the same path opens the same journal again."""
    name = "j_" + hashlib.blake2b(str(path).encode(), digest_size=8).hexdigest()
    return pg.url(db, journal=name)


class PgBackend(Backend):
    """A journal per test path on the test server, at one durability level."""

    def __init__(self, pg: PgServer, db: str, durability: str) -> None:
        self.pg, self.db, self.durability = pg, db, durability

    def open(self, path: Path, readonly: bool = False) -> Storage:
        return open_storage(journal_url(self.pg, self.db, path), self.durability, readonly=readonly)


@pytest.fixture(params=["process", "fsync"])
def backend(request: pytest.FixtureRequest, pg: PgServer, pg_db: str) -> Backend:
    return PgBackend(pg, pg_db, request.param)


class TestStoreCore(StoreCoreContract):
    pass


class TestEventLog(EventLogContract):
    pass


class TestBranchCatalog(BranchCatalogContract):
    pass


class TestSnapshotStore(SnapshotStoreContract):
    pass


class TestEffectIndex(EffectIndexContract):
    pass


class TestRunLog(RunLogContract):
    pass


class TestFullTextSearch(FullTextSearchContract):
    pass


class TestObservationReader(ObservationReaderContract):
    pass


class TestPgIntents(IntentStoreContract):
    @pytest.fixture(autouse=True)
    def _server(self, pg: PgServer, pg_db: str) -> None:
        self.pg, self.db = pg, pg_db

    def open_intents(self, tmp_path: Path) -> IntentStore:
        store = open_storage(journal_url(self.pg, self.db, tmp_path / "i"), "process")
        intents = store.intents
        intents.close = store.close  # type: ignore[method-assign]
        return intents


# -- the journal on PostgreSQL ----------------------------------------------------------------


WORKER = str(Path(__file__).parent / "workers" / "pg_worker.py")


def fresh(pg: PgServer, db: str) -> str:
    return pg.url(db, journal=f"t_{uuid.uuid4().hex[:12]}")


def write_history(j: Journal) -> list[str]:
    """The same history on any backend: deltas, an effect, an observation, a fork, a compaction."""
    b = j.root()
    for x in (3, 4, 5):
        b.apply({"x": x})
    b.effect("tool:a", lambda: 42)
    b.observe("recall", 0.75)
    fork = b.fork_at(2, params={"budget": 100})
    fork.apply({"x": 10})
    b.compact(lambda br, s: Ctx(items=[s.total], total=s.total))
    b.apply({"x": 1})
    return [e.hash for br in (b, fork) for e in br.history()]


def test_a_history_has_the_same_hashes_on_sqlite_and_postgresql(
    pg: PgServer, pg_db: str, tmp_path: Path
) -> None:
    with Journal.open(tmp_path / "same.db", Ctx) as a, Journal.open(fresh(pg, pg_db), Ctx) as b:
        assert write_history(a) == write_history(b)
        assert a.root().state() == b.root().state()
        assert b.verify().ok


def test_the_journal_on_postgresql_reopens_forks_and_reads_like_a_file(
    pg: PgServer, pg_db: str
) -> None:
    url = fresh(pg, pg_db)
    with Journal.open(url, Ctx) as j:
        write_history(j)
        j.root().tag("start", 1)
    with Journal.open(url, Ctx, readonly=True) as j:
        assert j.root().state().total == 13 and j.branch(1).state().total == 17
        assert j.root().effect("tool:a", lambda: 0) == 42  # read back, never re-run
        assert [o.metric for o in j.storage.observations()] == ["recall"]
        assert j.matrix().height == 1 and j.resolve("start") == (0, 1)


def test_two_writers_on_one_branch_the_second_gets_branch_conflict(
    pg: PgServer, pg_db: str
) -> None:
    url = fresh(pg, pg_db)
    with Journal.open(url, Ctx) as a, Journal.open(url, Ctx) as b:
        a.root().apply({"x": 1})
        first, second = a.root(), b.root()
        first.apply({"x": 2})
        with pytest.raises(BranchConflict) as caught:
            second.apply({"x": 3})
        assert (caught.value.expected, caught.value.actual) == (1, 2)
        assert [e.seq for e in b.root().history()] == [1, 2]


def test_a_journal_url_is_checked_before_anything_is_written(pg: PgServer, pg_db: str) -> None:
    with pytest.raises(InvalidValue, match="journal name"):
        Journal.open(pg.url(pg_db, journal="Bad-Name"), Ctx)
    with pytest.raises(NotFound, match="no journal"):
        Journal.open(fresh(pg, pg_db), Ctx, readonly=True)
    with pytest.raises(NotFound, match="does not exist"):
        Journal.open(pg.url("no_such_db"), Ctx)
    with pytest.raises(InvalidValue, match="key="):
        Journal.open(fresh(pg, pg_db), Ctx, key="secret")
    closed = f"postgresql://nobody@127.0.0.1:{pg.port + 1}/x"
    with pytest.raises(StorageError, match="cannot reach"):
        Journal.open(closed, Ctx)


def test_without_psycopg_the_error_says_what_to_install(
    pg: PgServer, pg_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(InvalidValue, match=r"lithify-workbench\[postgres\]"):
        Journal.open(fresh(pg, pg_db), Ctx)


@pytest.mark.slow
def test_four_processes_append_to_their_own_branches_and_lose_nothing(
    pg: PgServer, pg_db: str
) -> None:
    url = fresh(pg, pg_db)
    with Journal.open(url) as j:
        j.root().apply({"start": 1})
        ids = [j.root().fork_at(1).id for _ in range(4)]
    procs = [
        subprocess.Popen(
            [sys.executable, WORKER, "append", url, str(b), "2000"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for b in ids
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert [o.count("acked") for o in outs] == [2000] * 4
    with Journal.open(url, readonly=True) as j:
        assert [j.branch(b).head for b in ids] == [2001] * 4
        positions = [e.position for e in j.storage.tail(0, None)]
        assert positions == sorted(positions) and len(positions) == 8001
        assert j.verify().ok


def test_an_effect_running_in_another_process_is_in_flight_not_run_twice(
    pg: PgServer, pg_db: str
) -> None:
    url = fresh(pg, pg_db)
    Journal.open(url).close()
    runner = subprocess.Popen(
        [sys.executable, WORKER, "effect", url, "tool:slow"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert runner.stdout is not None and runner.stdout.readline().strip() == "running"
    second = subprocess.run(  # while the first is held inside the effect
        [sys.executable, WORKER, "effect", url, "tool:slow"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert second.stdout.startswith("in-flight"), second.stdout + second.stderr
    out = runner.communicate("go\n", timeout=120)[0]  # released: it finishes its effect
    assert out.strip() == "done result of tool:slow"


@pytest.mark.slow
def test_eight_processes_racing_one_effect_key_commit_it_once_and_raise_nothing_raw(
    pg: PgServer, pg_db: str
) -> None:
    # Each key is raced by 8 processes at once. Those with a stale handle announce it, see the
    # branch moved and withdraw (deleting the intent row they created); an announcer whose row
    # went between its insert and its locking read got no row: a raw TypeError.
    url = fresh(pg, pg_db)
    keys, start = 20, time.time() + 5  # every worker connected before the start line
    procs = [
        subprocess.Popen(
            [sys.executable, WORKER, "race", url, str(keys), str(start), handle],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for handle in ["stale", "fresh"] * 4
    ]
    with Journal.open(url) as j:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline() == "ready\n"
        j.root().apply({"x": 0})  # the "stale" workers' handles are behind from now on
    assert time.time() < start, "the workers took too long to start"
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err for _, err in outs]
    lines = [line.split(" ", 2) for out, _ in outs for line in out.splitlines()]
    assert [line for line in lines if line[0] not in ("ran", "ok", "conflict", "in-flight")] == []
    with Journal.open(url, readonly=True) as j:
        committed = [e.payload for e in j.root().history() if e.kind == "effect"]
        assert j.verify().ok
    # fn ran once for each committed key, and each key committed at most once (a key whose
    # every fresh announcer met a stale one's announcement, EffectInFlight, ran nowhere)
    ran = sorted(line[1] for line in lines if line[0] == "ran")
    assert sorted(p["key"] for p in committed) == ran and len(set(ran)) == len(ran) > 0
    results = {p["key"]: p["result"] for p in committed}
    for line in lines:
        if line[0] == "ok":  # every process that got a result got the committed one
            assert line[2] == results[line[1]]


@pytest.mark.slow
def test_a_killed_client_leaves_an_unknown_outcome_and_every_acknowledged_event(
    pg: PgServer, pg_db: str
) -> None:
    url = fresh(pg, pg_db)
    Journal.open(url).close()
    runner = subprocess.Popen(
        [sys.executable, WORKER, "effect", url, "tool:charge"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert runner.stdout is not None and runner.stdout.readline().strip() == "running"
    runner.send_signal(signal.SIGKILL)  # inside the effect
    runner.communicate()
    with Journal.open(url) as j:
        wait_for(  # once the server notices the dropped connection
            lambda: j.root().unknown_outcomes() == ["tool:charge"],
            what="the killed client's effect to be an unknown outcome",
        )

    appender = subprocess.Popen(
        [sys.executable, WORKER, "append", url, "0", "100000"], stdout=subprocess.PIPE, text=True
    )
    assert appender.stdout is not None
    acked = [appender.stdout.readline() for _ in range(300)]
    appender.send_signal(signal.SIGKILL)
    appender.communicate()
    last = int(acked[-1].split()[1])
    with Journal.open(url, readonly=True) as j:
        assert j.root().head >= last and j.verify().ok


@pytest.mark.slow
@pytest.mark.parametrize("durability", ["process", "fsync", "lazy"])
def test_an_immediate_server_stop_loses_what_the_durability_mode_says(
    pg: PgServer, pg_db: str, durability: str
) -> None:
    url = fresh(pg, pg_db)
    Journal.open(url).close()
    appender = subprocess.Popen(
        [sys.executable, WORKER, "append", url, "0", "100000", durability],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert appender.stdout is not None
    acked = [appender.stdout.readline() for _ in range(200)]
    pg.stop("immediate")  # a server crash: no shutdown checkpoint, shared buffers gone
    appender.communicate(timeout=60)
    last = int(acked[-1].split()[1])
    pg.start()
    with Journal.open(url, readonly=True) as j:
        head = j.root().head
        assert j.verify().ok  # whatever survived is a whole, correctly chained prefix
        if durability in ("process", "fsync"):
            assert head >= last  # every acknowledged event survived the crash
        # lazy (synchronous_commit = off): the last ~0.6 s of acknowledged flushes may be gone,
        # never a gap or a broken chain (checked by verify above)
        assert [e.seq for e in j.root().history()] == list(range(1, head + 1))


def test_the_cli_takes_a_url_wherever_it_takes_a_path(pg: PgServer, pg_db: str) -> None:
    from cli import lithify

    url = fresh(pg, pg_db)
    with Journal.open(url) as j:
        j.root().apply({"note": "a timeout in the pool"})
        j.root().observe("recall", 0.5)
    out = lithify("--db", url, "verify")
    assert out.returncode == 0 and "ok" in out.stdout
    assert "***" not in out.stdout
    hist = lithify("history", "--json", env={**os.environ, "LITHIFY_DB": url})
    assert hist.returncode == 0 and '"seq": 2' in hist.stdout
    found = lithify("--db", url, "search", "timeout")
    assert found.returncode == 0 and "timeout" in found.stdout
    missing = lithify("--db", fresh(pg, pg_db), "history")
    assert missing.returncode == 1 and "no journal" in missing.stderr


def test_a_password_never_appears_in_an_error(pg: PgServer) -> None:
    url = f"postgresql://someone:s3cret@127.0.0.1:{pg.port}/nowhere"
    with pytest.raises(StorageError, match="role") as caught:
        Journal.open(url)
    assert "s3cret" not in str(caught.value) and "***" in str(caught.value)


def test_redaction_hides_a_password_wherever_the_url_carries_it() -> None:
    from workbench.storage import redacted

    assert redacted("postgresql://u:pw@h/db?journal=x") == "postgresql://u:***@h/db?journal=x"
    assert "pw" not in redacted("postgresql://u@h/db?password=pw&journal=x")


def test_a_journal_shows_no_password_but_reopens_with_it(pg: PgServer, pg_db: str) -> None:
    url = pg.url(pg_db, journal=f"t_{uuid.uuid4().hex[:12]}")
    with_password = url.replace(f"{pg.user}@", f"{pg.user}:anything@")  # trust auth ignores it
    with Journal.open(with_password) as j:
        assert "anything" not in j.path and j.location == with_password
        assert "anything" not in str(j.verify())


def test_a_batch_inside_a_transaction_does_not_leave_its_branch_unchecked(
    pg: PgServer, pg_db: str
) -> None:
    from storage_contract import Chain

    store = open_storage(fresh(pg, pg_db), "process")
    try:
        chain = Chain()
        rows = [(chain.row(f'{{"i":{i}}}'), "plain") for i in range(300)]  # a trusted batch
        gap = Chain(0, 999, chain.parent)
        with pytest.raises(BranchConflict):
            with store.atomic():
                store.append_many(rows)
                store.append(gap.row("{}"), "plain")  # seq 1000 after head 300: refused
        assert store.head(0) is None  # the whole transaction rolled back
    finally:
        store.close()


def test_a_rolled_back_first_write_keeps_the_writer(pg: PgServer, pg_db: str, tmp_path) -> None:
    from storage_contract import Chain

    for where in (fresh(pg, pg_db), str(tmp_path / "w.db")):
        store = open_storage(where, "process")
        try:
            chain = Chain()
            with pytest.raises(RuntimeError):
                with store.atomic():
                    store.append(chain.row("{}"), "plain")
                    raise RuntimeError("abandon")
            again = Chain()
            store.append(again.row("{}"), "plain")
            prov = store.provenance(0, 1)
            assert prov is not None and prov.writer is not None and prov.pid == os.getpid()
        finally:
            store.close()


# -- effects on long histories and shared branches ------------------------------------------------


def copy_effects(url: str, branch: int, n: int) -> None:
    """Append ``n`` chained effects to a branch in one COPY (as the journal would write them),
    with autovacuum off for the table: the planner keeps the statistics of an empty table."""
    import psycopg

    from workbench.events import canonical, event_hash, key_hash
    from workbench.storage.postgres import parse_url

    with Journal.open(url) as j:
        b = j.branch(branch)
        seq, parent = b.head, bytes.fromhex(b.head_hash)
    conninfo, schema = parse_url(url)
    with psycopg.connect(conninfo) as c:
        c.execute(f'SET search_path TO "{schema}"')
        c.execute("ALTER TABLE events SET (autovacuum_enabled = false)")
        c.execute("SELECT set_config('lithify.trusted_branch', %s, true)", (str(branch),))
        with (
            c.cursor() as cur,
            cur.copy(
                "COPY events (branch, seq, kind, hash, parent_hash, ts, payload, key_hash) FROM "
                "STDIN (FORMAT BINARY)"
            ) as cp,
        ):
            cp.set_types(["int8", "int8", "text", "bytea", "bytea", "int8", "text", "bytea"])
            for i in range(n):
                key = f"bulk:{i}"
                kh = key_hash(key)
                text = canonical({"key": key, "key_hash": kh.hex(), "result": i}, "effect")
                h = event_hash(parent, "effect", text)
                seq += 1
                cp.write_row((branch, seq, "effect", h, parent, 1, text, kh))
                parent = h
        c.commit()


def generic_plans(url: str, statements: list[tuple[str, tuple]]) -> list[str]:
    """Each statement's generic plan (what a prepared statement runs after its first five
    executions), as EXPLAIN prints it."""
    import psycopg

    from workbench.storage.postgres import parse_url

    conninfo, schema = parse_url(url)
    plans = []
    with psycopg.connect(conninfo, autocommit=True) as c:
        c.execute(f'SET search_path TO "{schema}"')
        c.execute("SET plan_cache_mode = force_generic_plan")
        literal = psycopg.ClientCursor(c)
        for n, (sql, args) in enumerate(statements):
            parts = sql.split("%s")  # one $n per placeholder
            text = parts[0] + "".join(f"${i}{p}" for i, p in enumerate(parts[1:], 1))
            c.execute(f"PREPARE p{n} AS {text}")
            values = ", ".join(literal.mogrify("%s", (a,)) for a in args)
            plans.append(
                "\n".join(r[0] for r in c.execute(f"EXPLAIN EXECUTE p{n}({values})").fetchall())
            )
    return plans


def test_the_effect_lookup_on_postgresql_starts_from_the_key(pg: PgServer, pg_db: str) -> None:
    url = fresh(pg, pg_db)
    with Journal.open(url) as j:
        j.root().effect("first", lambda: 1)
    copy_effects(url, 0, 30_000)
    with Journal.open(url) as j:
        fork = j.root().fork_at(25_000)
    with Journal.open(url) as j:  # resumed: past FX_MAP_MAX, lookups go to the key index
        seen: list[tuple[str, tuple]] = []
        read = j.storage._read

        def tracing(sql: str, args: tuple, many: bool) -> object:
            seen.append((sql, tuple(args)))
            return read(sql, args, many)

        j.storage._read = tracing  # type: ignore[method-assign]
        assert j.root().effect("bulk:7", lambda: "ran") == 7
        assert j.branch(fork.id).effect("bulk:24000", lambda: "ran") == 24_000
        assert j.branch(fork.id).effect("bulk:28000", lambda: "ran") == "ran"  # after the fork
        assert j.root().unknown_outcomes() == []
        assert j.branch(fork.id).unknown_outcomes() == []
        j.storage._read = read  # type: ignore[method-assign]
    lookups = [(s, a) for s, a in seen if "key_hash =" in s and "intents" not in s]
    assert len(lookups) >= 3, seen
    for (sql, _), plan in zip(lookups, generic_plans(url, lookups), strict=True):
        # From the key's own rows: an index walk over the branch's events (or positions) would
        # read one entry per event of the history. The one use of events_branch_seq allowed is
        # the branch's head (max(seq)): the first entry of a backward scan, under a Limit.
        assert "events_key_hash" in plan and "events_pkey" not in plan, (sql, plan)
        lines = plan.splitlines()
        for above, line in itertools.pairwise(lines):
            if "events_branch_seq" in line:
                assert "Index Only Scan Backward using events_branch_seq" in line, (sql, plan)
                assert above.strip().startswith("->  Limit"), (sql, plan)
                assert "max(seq)" in sql, (sql, plan)
        assert "events_branch_seq" not in lines[0], (sql, plan)


def test_an_effect_on_a_postgresql_branch_another_writer_moved_keeps_its_promises(
    pg: PgServer, pg_db: str
) -> None:
    url = fresh(pg, pg_db)
    calls: list[str] = []
    with Journal.open(url, Ctx) as j, Journal.open(url, Ctx) as other:
        mine = j.root()
        mine.apply({"x": 1})
        other.root().apply({"x": 2})
        with pytest.raises(BranchConflict) as e:
            mine.effect("a", lambda: calls.append("a") or "A")
        assert e.value.ran is False and calls == []
        mine = j.branch(0)

        def during() -> str:
            calls.append("b")
            other.root().apply({"x": 3})
            return "B"

        with pytest.raises(BranchConflict) as e:
            mine.effect("b", during)
        assert e.value.ran is True and e.value.seq == 4
        fresh_handle = j.branch(0)
        assert fresh_handle.effect("b", lambda: calls.append("again") or "?") == "B"
        assert calls == ["b"] and fresh_handle.unknown_outcomes() == []
        assert j.verify().ok


def test_a_long_lived_postgresql_writer_keeps_its_intents_small(
    pg: PgServer, pg_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.storage.postgres import PgIntents

    monkeypatch.setattr(PgIntents, "COMPACT_BYTES", 256 * 64)  # 64 announcements
    url = fresh(pg, pg_db)
    with Journal.open(url, Ctx) as j:
        b = j.root()
        with pytest.raises(InvalidValue):
            b.effect("lost", lambda: {1})
        rows = []
        for i in range(400):
            b.effect(f"k:{i}", lambda i=i: i)
            rows.append(j.storage.intents.size() // 256)
        assert max(rows) <= 2 * 64, max(rows)
        assert b.unknown_outcomes() == ["lost"]


def test_writers_on_distinct_branches_do_not_wait_for_one_another(pg: PgServer, pg_db: str) -> None:
    """A write transaction left open on one branch holds no lock another branch's writer waits
    for; a tail reader stops before the open transaction's events (their positions are not
    final) and sees every event, in position order, once it commits."""
    url = fresh(pg, pg_db)
    with Journal.open(url) as j:
        j.root().apply({"start": 1})
        a, b = j.root().fork_at(1).id, j.root().fork_at(1).id
    slow, other, reader = Journal.open(url), Journal.open(url, timeout=3), Journal.open(url)
    try:
        cursor = reader.end()
        with slow.storage.atomic():  # open, with an event written on branch a
            slow.branch(a).apply({"n": 1})
            other.branch(b).apply({"n": 2})  # commits at once: no lock on a's behalf
            other.branch(b).apply({"n": 3})
            seen, cursor = reader.tail(cursor)
            assert seen == []  # b's events wait behind the transaction that started first
        seen, cursor = reader.tail(cursor)
        assert [(r.branch, r.seq) for r in seen] == [(a, 2), (b, 2), (b, 3)]
        positions = [r.position for r in seen]
        assert positions == sorted(positions) and cursor == positions[-1]
        assert reader.tail(cursor)[0] == []
    finally:
        for journal in (slow, other, reader):
            journal.close()


@pytest.mark.slow
def test_a_tail_follower_misses_nothing_while_eight_writers_commit_side_by_side(
    pg: PgServer, pg_db: str
) -> None:
    url = fresh(pg, pg_db)
    with Journal.open(url) as j:
        j.root().apply({"start": 1})
        ids = [j.root().fork_at(1).id for _ in range(8)]
        cursor = j.end()
    procs = [
        subprocess.Popen(
            [sys.executable, WORKER, "append", url, str(b), "300"],
            text=True,
            stdout=subprocess.DEVNULL,
        )
        for b in ids
    ]
    got: list[tuple[int, int, int]] = []
    with Journal.open(url, readonly=True) as r:
        while any(p.poll() is None for p in procs) or not got or len(got) < 8 * 300:
            seen, cursor = r.tail(cursor)
            got += [(e.position, e.branch, e.seq) for e in seen]
            if all(p.poll() is not None for p in procs) and not seen:
                break
            time.sleep(0.01)
    assert all(p.wait(60) == 0 for p in procs)
    assert [g[0] for g in got] == sorted(g[0] for g in got)  # in position order, once each
    assert sorted((b, s) for _, b, s in got) == sorted((b, s) for b in ids for s in range(2, 302))


def test_a_journal_written_under_the_journal_wide_lock_is_upgraded_in_place(
    pg: PgServer, pg_db: str
) -> None:
    """A journal of schema 1 (positions from a sequence, under a journal-wide lock) opened
    writable takes schema 2: its stored positions stand, new ones go on above them."""
    import psycopg

    from workbench.storage.postgres.schema import parse_url, schema_sql

    url = fresh(pg, pg_db)
    with Journal.open(url) as j:
        for i in range(5):
            j.root().apply({"i": i})
        name = j.storage.journal
    old_trigger = next(s for s in schema_sql(name) if "events_insert()" in s and "FUNCTION" in s)
    with psycopg.connect(parse_url(url)[0], autocommit=True) as c:  # back to schema 1
        c.execute(old_trigger.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"))
        c.execute(
            f'ALTER TABLE "{name}".events ALTER COLUMN position SET DEFAULT '
            f"nextval('\"{name}\".events_position')"
        )
        c.execute(f"SELECT setval('\"{name}\".events_position', 5)")
        c.execute(f"UPDATE \"{name}\".meta SET value = '1' WHERE key = 'schema_version'")
        c.execute(f'DROP FUNCTION "{name}".safe_position()')
    with Journal.open(url, readonly=True) as r:  # a reader of schema 1 reads it as it was
        assert [e.seq for e in r.tail(0)[0]] == [1, 2, 3, 4, 5]
        assert r.storage.meta["schema_version"] == "1"
    with Journal.open(url) as j:
        assert j.storage.meta["schema_version"] == "2"
        old = [e.position for e in j.tail(0)[0]]
        j.root().apply({"i": 5})
        records, _ = j.tail(0)
        assert [r.seq for r in records] == [1, 2, 3, 4, 5, 6]
        assert records[-1].position > max(old) and [r.position for r in records[:5]] == old
        assert j.verify().ok


def test_at_the_connection_limit_an_open_waits_then_says_what_to_raise(
    pg: PgServer, pg_db: str
) -> None:
    import psycopg

    from workbench.errors import Busy

    role = f"lim_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg.url(pg_db), autocommit=True) as c:
        c.execute(f"CREATE ROLE {role} LOGIN CONNECTION LIMIT 2")
        c.execute(f"GRANT ALL ON DATABASE {pg_db} TO {role}")
        c.execute(f"GRANT ALL ON SCHEMA public TO {role}")
    url = pg.url(pg_db, journal=f"t_{uuid.uuid4().hex[:12]}").replace(f"{pg.user}@", f"{role}@")
    with Journal.open(url) as j:
        j.root().apply({"start": 1})
    held = [psycopg.connect(url.split("?")[0]) for _ in range(2)]  # the role's two connections
    try:
        with pytest.raises(Busy) as e:  # asked again until its timeout, then Busy
            Journal.open(url, timeout=1)
        assert "max_connections" in str(e.value)
        held.pop().close()
        with Journal.open(url, timeout=5) as j:  # a slot came free: it opens
            assert j.root().head == 1
    finally:
        for c in held:
            c.close()


@pytest.mark.slow
def test_a_sweep_runs_through_pgbouncer_in_session_mode_one_connection_per_process(
    pg: PgServer, pg_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through Debian's PgBouncer (session pooling): a sweep on the pool runner, each process
    holding one server connection for the journal however many forks it runs."""
    import psycopg
    from pg_server import PgBouncer, find_pgbouncer

    from workbench import sweep

    if find_pgbouncer() is None:
        pytest.skip("PgBouncer is not installed (apt-get install pgbouncer)")
    tests = str(Path(__file__).parent)
    monkeypatch.setenv("PYTHONPATH", tests + os.pathsep + os.environ.get("PYTHONPATH", ""))
    bouncer = PgBouncer(pg, "session")
    try:
        url = bouncer.url(pg_db, journal=f"t_{uuid.uuid4().hex[:12]}")
        with Journal.open(url) as j:
            j.root().apply({"start": 1})
            p = sweep.plan(j, 0, 1, {"sleep": [0.3] * 12}, fn="sweep_fns:sleepy")
            seen: list[int] = []
            handle = sweep.start(p, runner="pool", workers=2)
            with psycopg.connect(pg.url(pg_db), autocommit=True) as c:
                while not handle.done:
                    (n,) = c.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND "
                        "pid <> pg_backend_pid()",
                        (pg_db,),
                    ).fetchone()
                    seen.append(int(n))
                    time.sleep(0.05)
            result = handle.wait(show=False)
            assert result.ok and len(result.forks) == 12
            assert max(seen) <= 2 + 2  # two workers and the coordinator (and a spare)
            assert j.verify().ok
    finally:
        bouncer.close()
