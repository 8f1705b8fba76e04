"""Ordinary reads catch damage (issue 41, item 4): a replay checks that seqs follow each other
and that each event chains to the one before it, recomputing a delta's hash from its stored
payload, so a changed payload or a deleted event raises ``IntegrityError`` naming the event
instead of returning the changed state; on SQLite and on PostgreSQL. The damage is made as an
outside writer would make it: the append-only triggers dropped, the rows changed in SQL."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from workbench import Journal
from workbench.errors import IntegrityError


def _fill(j: Journal) -> None:
    """Main: x = 1..8 with an observation after each delta; a fork at seq 6 adds two more."""
    b = j.root()
    for i in range(1, 9):
        b.apply({"x": i})
        b.observe("m", float(i))
    f = b.fork_at(6, name="f")
    f.apply({"x": 100})
    f.apply({"x": 101})


def _sqlite_damage(path: str) -> Callable[[str], None]:
    def run(sql: str) -> None:
        con = sqlite3.connect(path)
        con.execute("DROP TRIGGER IF EXISTS events_append_only_update")
        con.execute("DROP TRIGGER IF EXISTS events_append_only_delete")
        con.execute(sql)
        con.commit()
        con.close()

    return run


def _pg_damage(url: str) -> Callable[[str], None]:
    import psycopg

    from workbench.storage.postgres import parse_url

    conninfo, schema = parse_url(url)

    def run(sql: str) -> None:
        with psycopg.connect(conninfo, autocommit=True) as c:
            c.execute(f'SET search_path TO "{schema}"')
            c.execute(f'DROP TRIGGER IF EXISTS events_append_only ON "{schema}".events')
            c.execute(sql)

    return run


def _check_reads_catch_damage(location: str, damage: Callable[[str], None]) -> None:
    with Journal.open(location) as j:
        _fill(j)
        assert j.root().state() == {"x": 8}
    # a changed payload: main's delta at seq 5 (x = 3) now says 999, its hash left as it was
    damage("UPDATE events SET payload = '{\"x\":999}' WHERE branch = 0 AND seq = 5")
    with Journal.open(location) as j:
        with pytest.raises(IntegrityError, match="event 5 of branch 0") as e:
            j.root().state()
        assert (e.value.branch, e.value.seq) == (0, 5)
        assert "payload changed" in str(e.value)
        with pytest.raises(IntegrityError, match="event 5 of branch 0"):
            j.root().at(7)  # any read that replays over it
        with pytest.raises(IntegrityError, match="event 5 of branch 0"):
            j.branch("f").state()  # the fork inherits the damaged prefix
        assert j.root().at(4) == {"x": 2}  # what comes before it still reads
        assert not j.verify().ok
    # a gap: main's observation at seq 10 deleted (the payload put back first)
    damage("UPDATE events SET payload = '{\"x\":3}' WHERE branch = 0 AND seq = 5")
    with Journal.open(location) as j:
        assert j.root().state() == {"x": 8}
    damage("DELETE FROM events WHERE branch = 0 AND seq = 10")
    with Journal.open(location) as j:
        with pytest.raises(IntegrityError, match="event 10 of branch 0.*missing") as e:
            j.root().state()
        assert e.value.seq == 10
        assert j.branch("f").state() == {"x": 101}  # forked at 6: its history has no gap
        assert j.root().at(9) == {"x": 5}


def test_a_changed_payload_and_a_gap_raise_on_an_ordinary_read_sqlite(tmp_path: Path) -> None:
    db = str(tmp_path / "j.db")
    _check_reads_catch_damage(db, _sqlite_damage(db))


@pytest.mark.slow
def test_a_changed_payload_and_a_gap_raise_on_an_ordinary_read_postgres(pg, pg_db) -> None:
    url = pg.url(pg_db, journal=f"d_{uuid.uuid4().hex[:10]}")
    _check_reads_catch_damage(url, _pg_damage(url))


def test_a_replay_from_a_snapshot_checks_the_events_after_it(tmp_path: Path) -> None:
    """The snapshot is sealed to the event it was taken at; the events after it are checked
    as they are replayed (the one before it is the snapshot's to vouch for)."""
    db = str(tmp_path / "j.db")
    with Journal.open(db) as j:
        b = j.root()
        for i in range(1, 4):
            b.apply({"x": i})
        assert b.snapshot() == 3
        for i in range(4, 7):
            b.apply({"x": i})
    damage = _sqlite_damage(db)
    damage("UPDATE events SET payload = '{\"x\":50}' WHERE branch = 0 AND seq = 5")
    with Journal.open(db) as j:
        with pytest.raises(IntegrityError, match="event 5 of branch 0"):
            j.root().state()
