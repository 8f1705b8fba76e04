"""Large effect results are stored compressed (zlib, in the SQLite archive's format) and read
back exactly as they were committed: by the journal, by a resumed agent, by search and verify,
and by the sqlite3 shell through the ``event_payloads`` view."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import Ctx

from workbench import Journal
from workbench.errors import Corrupt
from workbench.history import DamagedSnapshotWarning
from workbench.storage.sqlite.schema import COMPRESS_FROM, sqlar_uncompress

# Source-like text, compressible the way the auditor's file reads are; non-ASCII too, so
# characters and bytes differ.
BIG = "".join(f"def f{i}(x):  # ünïcode {i % 7}\n    return x * {i}\n" for i in range(400))


def _query(path: Path, sql: str) -> list[tuple[Any, ...]]:
    """Rows as stored, read by plain sqlite3 (no lithify function registered)."""
    con = sqlite3.connect(path)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _rows(path: Path) -> list[tuple[Any, ...]]:
    return _query(path, "SELECT kind, payload, payload_size FROM events ORDER BY position")


def test_a_large_result_is_stored_compressed_and_comes_back_as_it_was(db_path):
    ran: list[int] = []

    def read() -> str:
        ran.append(1)
        return BIG

    with Journal.open(db_path) as j:
        b = j.root()
        assert b.effect("read:big", read) == BIG
        assert b.effect("read:small", lambda: "short") == "short"
        b.observe("n", 1.0)
    (kind, stored, size), (_, small, small_size), *_ = _rows(db_path)
    text = json.dumps({"key": "read:big"})[:10]
    assert kind == "effect" and isinstance(stored, bytes) and size is not None
    assert len(stored) * 3 < size  # compressed, and by a good deal
    assert json.loads(sqlar_uncompress(stored, size))["result"] == BIG
    assert size == len(sqlar_uncompress(stored, size).encode("utf-8"))  # bytes, not characters
    assert isinstance(small, str) and small_size is None and small.startswith(text[:2])
    # a resumed process reads it back without running fn again, and the chain still verifies
    with Journal.open(db_path) as j:
        b = j.root()
        assert b.effect("read:big", read) == BIG and ran == [1]
        assert j.record((0, 1)).payload["result"] == BIG
        assert j.verify().ok
        fork = b.fork_at(1)  # a fork inherits it as it inherits any effect
        assert fork.effect("read:big", read) == BIG and ran == [1]


def test_only_large_effect_payloads_are_compressed(db_path):
    with Journal.open(db_path) as j:
        b = j.root()
        b.apply({"note": BIG})  # a delta stays plain JSON, however large
        b.effect("edge", lambda: "x" * (COMPRESS_FROM - 200))  # under the threshold
        rng = random.Random(1)
        alphabet = [chr(c) for c in range(33, 127) if chr(c) not in '"\\']
        b.effect("noise", lambda: "".join(rng.choice(alphabet) for _ in range(900)))
    kinds = [(k, isinstance(p, bytes)) for k, p, _ in _rows(db_path)]
    assert kinds[0] == ("delta", False)
    assert kinds[1] == ("effect", False)
    # text that zlib cannot shrink by a fifth is kept as it is
    assert kinds[2] == ("effect", False)


def test_search_finds_words_inside_compressed_payloads(db_path):
    with Journal.open(db_path) as j:
        b = j.root()
        b.effect("read:a", lambda: BIG + " needleword appears once")
        hits = j.search("needleword")  # builds the index, then queries it
        assert [(h.branch, h.seq) for h in hits] == [(0, 1)]
        b.effect("read:b", lambda: BIG + " anotherneedle here")
        hits = j.search("anotherneedle")  # past the index: the scan reads the text too
        assert [(h.branch, h.seq) for h in hits] == [(0, 2)]


def test_a_damaged_compressed_payload_is_reported_not_misread(db_path):
    with Journal.open(db_path) as j:
        j.root().effect("read:big", lambda: BIG)
    con = sqlite3.connect(db_path)
    con.execute("DROP TRIGGER events_append_only_update")
    stored = con.execute("SELECT payload FROM events WHERE seq = 1").fetchone()[0]
    con.execute(
        "UPDATE events SET payload = ? WHERE seq = 1",
        (stored[:20] + bytes([stored[20] ^ 0xFF]) + stored[21:],),
    )
    con.commit()
    con.close()
    with Journal.open(db_path) as j:
        damaged = "compressed payload or snapshot is damaged.*lithify verify"
        with pytest.raises(Corrupt, match=damaged):
            j.root().effect("read:big", lambda: "ran again")  # fn does not run either
        report = j.verify()
        assert not report.ok and report.problems[0][:2] == (0, 1)
        unreadable = "unreadable: a compressed payload or snapshot does not decompress"
        assert report.problems[0][2] == unreadable


def test_the_sqlite3_shell_reads_them_through_the_view(db_path):
    shell = shutil.which("sqlite3")
    if shell is None:
        pytest.skip("no sqlite3 shell on this machine")
    with Journal.open(db_path) as j:
        j.root().effect("read:big", lambda: BIG)
        j.root().effect("small", lambda: 1)
    out = subprocess.run(
        [shell, "-json", str(db_path), "SELECT seq, payload FROM event_payloads ORDER BY seq"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = json.loads(out)
    assert [r["seq"] for r in rows] == [1, 2]
    assert json.loads(rows[0]["payload"])["result"] == BIG
    assert json.loads(rows[1]["payload"])["result"] == 1
    # and Python's sqlite3 with the function registered (what sqlite-utils' --functions does)
    con = sqlite3.connect(db_path)
    con.create_function("sqlar_uncompress", 2, sqlar_uncompress)
    text = con.execute("SELECT payload FROM event_payloads WHERE seq = 1").fetchone()[0]
    assert json.loads(text)["result"] == BIG


def _as_schema_1(db_path: Path) -> None:
    """Make a journal what an older lithify wrote: no payload_size column, no view, schema 1."""
    con = sqlite3.connect(db_path)
    con.execute("DROP VIEW event_payloads")
    con.execute("DROP VIEW snapshot_states")
    con.execute("ALTER TABLE events DROP COLUMN payload_size")
    con.execute("ALTER TABLE snapshots DROP COLUMN state_size")
    con.execute("ALTER TABLE sweeps DROP COLUMN how")  # an older added column, read as NULL too
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.commit()
    con.close()


def test_a_journal_from_before_compression_is_read_read_only_as_it_is(db_path):
    with Journal.open(db_path) as j:
        j.root().effect("read:old", lambda: "plain " * 20)  # under the threshold: plain JSON
        j.root().observe("recall", 0.5)
        j.sweep(j.root(), 1, [{"k": 1}], how={"runner": "process"})
    _as_schema_1(db_path)
    with Journal.open(db_path, readonly=True) as j:  # no upgrade needed to read it
        assert j.root().effect("read:old", lambda: "ran again") == "plain " * 20
        assert j.record((0, 1)).payload["result"] == "plain " * 20
        assert [(h.branch, h.seq) for h in j.search("plain")] == [(0, 1)]
        assert j.verify().ok and len(j.matrix()) == 1
        assert [(s.id, s.how) for s in j.sweeps()] == [(1, {})]  # how unknown: read as NULL
    con = sqlite3.connect(db_path)
    version = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    con.close()
    assert version == "1"  # and it was left as it was


def test_a_journal_from_before_compression_is_upgraded_and_then_refused_by_older_code(db_path):
    with Journal.open(db_path) as j:
        j.root().effect("read:old", lambda: "plain " * 20)  # under the threshold: plain JSON
    _as_schema_1(db_path)
    with Journal.open(db_path) as j:
        b = j.root()
        assert b.effect("read:old", lambda: "ran again") == "plain " * 20
        b.effect("read:new", lambda: BIG)
        assert b.effect("read:new", lambda: "ran again") == BIG
    con = sqlite3.connect(db_path)
    version = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    con.close()
    assert version == "3"  # an older lithify now says: upgrade to open it


def test_lazy_durability_compresses_on_its_batched_path(db_path):
    with Journal.open(db_path, durability="lazy") as j:
        b = j.root()
        for i in range(5):
            b.effect(f"read:{i}", lambda i=i: BIG + str(i))
        j.flush()
    stored = [(p, s) for k, p, s in _rows(db_path) if k == "effect"]
    assert len(stored) == 5 and all(isinstance(p, bytes) and s for p, s in stored)
    with Journal.open(db_path) as j:
        assert [j.root().effect(f"read:{i}", lambda: "ran") for i in range(5)] == [
            BIG + str(i) for i in range(5)
        ]


def test_a_read_only_open_reads_them_too(db_path):
    with Journal.open(db_path) as j:
        j.root().effect("read:big", lambda: BIG)
    with Journal.open(db_path, readonly=True) as j:  # its own read-only connection
        assert j.record((0, 1)).payload["result"] == BIG
        assert j.root().effect("read:big", lambda: "ran again") == BIG
        assert j.verify().ok


def _snapshot_rows(path: Path) -> list[tuple[Any, ...]]:
    return _query(path, "SELECT seq, state, state_size FROM snapshots WHERE seq > 0 ORDER BY seq")


def test_a_large_snapshot_is_stored_compressed_and_read_back_as_it_was(db_path):
    """A snapshot of COMPRESS_FROM characters or more is stored compressed like a large
    result: every seq reads back, verify checks its seal against the text, and other tools read
    it through the ``snapshot_states`` view; a small one stays text."""
    with Journal.open(db_path, Ctx, snapshot_every=8) as j:
        root = j.root()
        for i in range(400):
            root.apply({"x": i * 1_000_003})
    rows = _snapshot_rows(db_path)
    small = [r for r in rows if r[2] is None]
    big = [r for r in rows if r[2] is not None]
    assert small and all(isinstance(st, str) and len(st) < COMPRESS_FROM for _, st, _ in small)
    assert big and all(isinstance(state, bytes) and len(state) < size for _, state, size in big)
    with Journal.open(db_path, Ctx) as j:
        root = j.root()
        for s in range(401):
            xs = [i * 1_000_003 for i in range(s)]
            assert root.at(s) == Ctx(xs, sum(xs))
        assert j.verify().ok
    con = sqlite3.connect(db_path)
    con.create_function("sqlar_uncompress", 2, sqlar_uncompress)
    seq, text = con.execute(
        "SELECT seq, state FROM snapshot_states WHERE seq = ?", (big[-1][0],)
    ).fetchone()
    con.close()
    assert json.loads(text)["items"] == [i * 1_000_003 for i in range(seq)]


def test_a_damaged_compressed_snapshot_is_reported_not_misread(db_path):
    with Journal.open(db_path, Ctx, snapshot_every=8) as j:
        for i in range(400):
            j.root().apply({"x": i * 1_000_003})
    seq, stored, _ = _snapshot_rows(db_path)[-1]
    con = sqlite3.connect(db_path)
    con.execute(
        "UPDATE snapshots SET state = ? WHERE seq = ?",
        (stored[:20] + bytes([stored[20] ^ 0xFF]) + stored[21:], seq),
    )
    con.commit()
    con.close()
    xs = [i * 1_000_003 for i in range(400)]
    with Journal.open(db_path, Ctx) as j:
        report = j.verify()  # the one snapshot named, the rest of the journal checked
        assert not report.ok and report.problems == [
            (0, seq, "snapshot does not match its seal (state changed)")
        ]
        # not misread: passed over (with a warning) for the events it caches
        with pytest.warns(DamagedSnapshotWarning, match=f"seq {seq}.*does not decompress"):
            assert j.root().at(seq) == Ctx(xs[:seq], sum(xs[:seq]))
        with pytest.warns(DamagedSnapshotWarning):
            assert j.root().state() == Ctx(xs, sum(xs))
        assert j.rebuild_snapshots() == 1 and j.verify().ok


def test_a_compressed_snapshot_read_as_text_fails_its_seal(db_path):
    """Bytes where text belongs (its size lost, or a reader older than the file): a broken
    seal, passed over with a warning, not a crash."""
    with Journal.open(db_path, Ctx, snapshot_every=8) as j:
        for i in range(400):
            j.root().apply({"x": i * 1_000_003})
    seq = _snapshot_rows(db_path)[-1][0]
    con = sqlite3.connect(db_path)
    con.execute("UPDATE snapshots SET state_size = NULL WHERE seq = ?", (seq,))
    con.commit()
    con.close()
    xs = [i * 1_000_003 for i in range(400)]
    with Journal.open(db_path, Ctx) as j:
        with pytest.warns(DamagedSnapshotWarning, match="does not match its seal"):
            assert j.root().at(seq) == Ctx(xs[:seq], sum(xs[:seq]))
        assert j.rebuild_snapshots() == 1 and j.verify().ok
