"""The SQLite layer: schema, pragmas, transactions and every SQL statement of the package.

No other module imports ``sqlite3``. Invariants the database can hold, it holds: a unique
``(branch, seq)`` key refuses a stale writer, triggers refuse UPDATE and DELETE on events,
and effect intents go to an append-only sidecar log (``IntentLog``) so that announcing a call
costs one write() rather than a second commit.
"""

from __future__ import annotations

import itertools
import operator
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import orjson

from .errors import BranchConflict, Conflict, InvalidValue, NotAJournal, WorkbenchError
from .intents import IntentLog

SCHEMA_VERSION = 1
APPLICATION = "lithify-journal"

# (branch, first_seq, last_seq or None): one piece of a resolved history, seqs inclusive.
Segment = tuple[int, int, int | None]
# branch, seq, kind, hash, parent_hash, ts, payload, key_hash, metric, value, occurred_at,
# fx_ms (effect duration), attempts (effect attempts); the writer id is added by Storage.
EventRow = tuple[Any, ...]
# position, branch, seq, kind, hash, parent_hash, ts, payload
StoredEvent = tuple[int, int, int, str, bytes, bytes, int, str]
# id, name, parent, fork_seq, params, created, sweep
BranchRow = tuple[int, str | None, int | None, int, str, int, int | None]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS branches (
    id INTEGER PRIMARY KEY,
    name TEXT UNIQUE,
    parent INTEGER REFERENCES branches(id),
    fork_seq INTEGER NOT NULL,
    params TEXT NOT NULL DEFAULT '{}',
    created INTEGER NOT NULL,
    sweep INTEGER
);
CREATE INDEX IF NOT EXISTS branches_parent ON branches(parent);
CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY,
    branch INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    hash BLOB NOT NULL,
    parent_hash BLOB NOT NULL,
    ts INTEGER NOT NULL,
    payload TEXT NOT NULL,
    key_hash BLOB,
    metric TEXT,
    value REAL,
    occurred_at INTEGER,
    writer INTEGER,
    fx_ms REAL,
    attempts INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS events_branch_seq ON events(branch, seq);
DROP INDEX IF EXISTS events_effects;
CREATE TABLE IF NOT EXISTS snapshots (
    branch INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    state TEXT NOT NULL,
    digest BLOB NOT NULL,
    PRIMARY KEY (branch, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS effect_index (
    key_hash BLOB NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (key_hash, position)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hash_index (
    hash BLOB NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (hash, position)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sweeps (
    id INTEGER PRIMARY KEY,
    base INTEGER NOT NULL,
    at INTEGER NOT NULL,
    spec TEXT NOT NULL,
    created INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS subscriptions (
    name TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    updated INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS writers (
    id INTEGER PRIMARY KEY,
    writer TEXT NOT NULL UNIQUE,
    pid INTEGER NOT NULL,
    source TEXT,
    started INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS intents (
    branch INTEGER NOT NULL,
    key_hash BLOB NOT NULL,
    key TEXT NOT NULL,
    started INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    PRIMARY KEY (branch, key_hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tags (
    label TEXT PRIMARY KEY,
    branch INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    created INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS fork_runs (
    branch INTEGER PRIMARY KEY,
    sweep INTEGER NOT NULL,
    status TEXT NOT NULL,
    runner TEXT,
    notebook TEXT,
    error TEXT,
    started INTEGER,
    finished INTEGER,
    wall_ms REAL
);
CREATE TRIGGER IF NOT EXISTS events_append_only_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'lithify events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_append_only_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'lithify events are append-only'); END;
"""

WAL_AUTOCHECKPOINT_BYTES = 32 << 20  # of WAL between automatic checkpoints
PAGE_SIZE = 2048  # bytes, for new journals
_TABLES = {"meta", "branches", "events", "snapshots", "hash_index", "effect_index", "sweeps", "fork_runs", "subscriptions", "tags", "writers", "intents"}
_ADDED_COLUMNS = {"occurred_at": "INTEGER", "writer": "INTEGER", "fx_ms": "REAL", "attempts": "INTEGER"}
SYNCHRONOUS = {"process": "NORMAL", "lazy": "NORMAL", "fsync": "FULL"}

# An EventRow is (branch, seq, kind, hash, parent_hash, ts, payload) followed by the optional
# columns of its shape. Columns a shape leaves out are stored as NULL without being bound:
# Python's sqlite3 binds None (and bytes) through its adapter lookup, which costs more than
# the insert of a small row does.
EVENT_SHAPES: dict[str, tuple[str, ...]] = {
    "plain": (),
    "dated": ("occurred_at",),
    "effect": ("key_hash", "fx_ms", "attempts"),
    "observe": ("metric", "value"),
}
_INSERT_SHAPE = {
    shape: "INSERT INTO events (branch, seq, kind, hash, parent_hash, ts, payload, {}writer) VALUES ({}?)".format(
        "".join(c + ", " for c in extra), "?, " * (7 + len(extra)))
    for shape, extra in EVENT_SHAPES.items()
}
_INSERT_BATCH = (
    "INSERT INTO events (branch, seq, kind, hash, parent_hash, ts, payload, writer) "
    "SELECT ?1, ?2 + j.key, ?3, substr(?4, j.key * 32 + 33, 32), substr(?4, j.key * 32 + 1, 32), ?5, j.value, ?6 "
    "FROM json_each(?7) j"  # json_each yields the array in order, so positions follow seqs
)
_EVENT_COLS = "position, branch, seq, kind, hash, parent_hash, ts, payload"
_BRANCH_COLS = "id, name, parent, fork_seq, params, created, sweep"


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT the open BEGIN IMMEDIATE, so run statements one by one.
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    return out


def now_ms() -> int:
    """Wall-clock unix time in milliseconds (event and branch timestamps)."""
    return time.time_ns() // 1_000_000


def _driver(key: Any) -> Any:
    if key is None:
        return sqlite3
    try:
        import sqlcipher3.dbapi2 as sqlcipher  # type: ignore[import-not-found]
    except ImportError:
        raise InvalidValue("encrypted journals need SQLCipher: pip install 'lithify-workbench[encryption]'") from None
    return sqlcipher


def _key_literal(key: str | bytes) -> str:
    """A PRAGMA key value: raw 32-byte keys as x'..', passphrases as a quoted string."""
    if isinstance(key, bytes):
        if len(key) != 32:
            raise InvalidValue("a raw key is exactly 32 bytes; pass a str for a passphrase")
        return f"\"x'{key.hex()}'\""
    if not isinstance(key, str) or not key:
        raise InvalidValue("a key is a non-empty passphrase (str) or 32 raw bytes")
    return "'" + key.replace("'", "''") + "'"


def _check_encryption(path: str, key: Any) -> None:
    """Refuse a key on a plain file and a plain open of an encrypted one, before any write."""
    if path == ":memory:":
        if key is not None:
            raise InvalidValue("in-memory journals are not encrypted; open a file to use key=")
        return
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except FileNotFoundError:
        return
    if not head:
        return
    plain = head == b"SQLite format 3\x00"
    if key is not None and plain:
        raise NotAJournal(f"{path} is not encrypted; open it without key= (a key only opens encrypted journals)",
                          path=path)
    if key is None and not plain:
        raise NotAJournal(f"{path} is not a lithify journal, or it is an encrypted one: then open it "
                          "with key= (or set LITHIFY_KEY for the CLI)", path=path)


class _ChunkWorker:
    """Runs ``fn(*args)`` for submitted chunks, in order, on one background thread (started
    with the second chunk: a single chunk runs inline). ``finish`` waits and re-raises."""

    def __init__(self, fn: Callable[..., None]) -> None:
        self.fn = fn
        self.first: tuple[Any, ...] | None = None
        self.queue: queue.Queue[tuple[Any, ...] | None] | None = None
        self.thread: threading.Thread | None = None
        self.error: BaseException | None = None
        self.cancelled = False

    def submit(self, args: tuple[Any, ...]) -> None:
        if self.error is not None:
            raise self.error
        if self.first is None and self.queue is None:
            self.first = args
            return
        if self.queue is None:
            self.queue = queue.Queue(maxsize=4)
            self.thread = threading.Thread(target=self._run, name="lithify-append-batch", daemon=True)
            self.thread.start()
            self.queue.put(self.first)
            self.first = None
        self.queue.put(args)

    def _run(self) -> None:
        assert self.queue is not None
        while (args := self.queue.get()) is not None:
            if self.error is None and not self.cancelled:
                try:
                    self.fn(*args)
                except BaseException as e:  # handed to the submitting thread by finish()
                    self.error = e

    def abandon(self) -> None:
        """Stop: queued chunks are skipped (the caller rolls back)."""
        self.cancelled = True
        self.first = None
        if self.queue is not None:
            self.queue.put(None)
            assert self.thread is not None
            self.thread.join()
            self.queue = None

    def finish(self) -> None:
        if self.queue is not None:
            self.queue.put(None)
            assert self.thread is not None
            self.thread.join()
        elif self.first is not None and self.error is None:
            self.fn(*self.first)
        self.first = None
        if self.error is not None:
            raise self.error


class TableIntents:
    """Effect intents kept in the (encrypted) database itself: one commit per announcement,
    slower than the sidecar log but leaking nothing."""

    COMPACT_BYTES = 1 << 20

    mark = None

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def quiet_since(self, mark: tuple[int, int] | None) -> bool:
        return False  # other writers' announcements are not visible without a query

    def announce(self, branch: int, key_hash: bytes, key: str) -> int:
        with self.storage._lock:
            c = self.storage.conn
            row = c.execute("SELECT attempts FROM intents WHERE branch = ? AND key_hash = ?", (branch, key_hash)).fetchone()
            n = (row[0] if row else 0) + 1
            c.execute("INSERT OR REPLACE INTO intents VALUES (?, ?, ?, ?, ?)", (branch, key_hash, key, now_ms(), n))
            return n

    def withdraw(self, branch: int, key_hash: bytes) -> None:
        with self.storage._lock:
            self.storage.conn.execute("DELETE FROM intents WHERE branch = ? AND key_hash = ?", (branch, key_hash))

    def pending(self, branch: int | None = None) -> dict[tuple[int, bytes], str]:
        with self.storage._lock:
            rows = self.storage.conn.execute("SELECT branch, key_hash, key FROM intents ORDER BY started").fetchall()
        return {(b, h): k for b, h, k in rows if branch is None or b == branch}

    def compact(self, still_open: Callable[[dict[tuple[int, bytes], str]], dict[tuple[int, bytes], str]]) -> None:
        keep = still_open(self.pending())
        with self.storage._lock:
            for (b, h) in self.pending():
                if (b, h) not in keep:
                    self.storage.conn.execute("DELETE FROM intents WHERE branch = ? AND key_hash = ?", (b, h))

    def size(self) -> int:
        with self.storage._lock:
            return self.storage.conn.execute("SELECT count(*) FROM intents").fetchone()[0] * 256

    def close(self) -> None:
        pass


def is_journal_file(path: str) -> bool:
    """True if ``path`` is an SQLite file with lithify's metadata (read-only check)."""
    try:
        with open(path, "rb") as f:
            if f.read(16) != b"SQLite format 3\x00":
                return False
        from urllib.parse import quote

        con = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True, timeout=5)
        try:
            row = con.execute("SELECT value FROM meta WHERE key = 'application'").fetchone()
        finally:
            con.close()
        return row is not None and row[0] == APPLICATION
    except (OSError, sqlite3.Error):
        return False


class Storage:
    """Owns one SQLite connection to a journal file (or memory) and all SQL against it."""

    def __init__(self, path: str, durability: str, busy_timeout_ms: int = 30_000,
                 source: str | None = None, key: str | bytes | None = None) -> None:
        self.path = path
        self.source = source
        self._writer: int | None = None
        self.durability = durability
        self._lock = threading.RLock()
        self._in_tx = False
        self._adbc_conn: Any = None
        self._has_json_each: bool | None = None
        self._where_cache: dict[tuple[str, tuple[bool, ...]], str] = {}
        self._segment_cache: dict[tuple[str, tuple[Segment, ...]], tuple[str, list[Any]]] = {}
        self.encrypted = key is not None
        self.db = _driver(key)  # sqlite3, or sqlcipher3's DB-API module for an encrypted file
        _check_encryption(path, key)
        try:
            self.conn = self.db.connect(
                path, isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000
            )
            if key is not None:
                self.conn.execute(f"PRAGMA key = {_key_literal(key)}")
                try:
                    self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
                except self.db.DatabaseError:
                    raise NotAJournal(f"{path}: wrong key (SQLCipher cannot decrypt it)", path=path) from None
            self.conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            if path != ":memory:":
                if key is None and self.conn.execute("PRAGMA page_count").fetchone()[0] == 0:
                    # A new file: smaller pages mean fewer bytes per WAL frame, and a commit
                    # writes whole frames (measured: the auditor runs ~12% faster at 2 KiB).
                    self.conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
                self._set_wal()
                # Checkpoint every ~32 MiB of WAL rather than SQLite's 4 MiB: each append
                # touches two b-trees, and checkpoints (with their fsync) dominate otherwise.
                page = int(self.conn.execute("PRAGMA page_size").fetchone()[0])
                self.conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_BYTES // page}")
            self.conn.execute(f"PRAGMA synchronous = {SYNCHRONOUS[durability]}")
        except self.db.DatabaseError as e:
            raise NotAJournal(
                f"{path} is not a lithify journal (SQLite says: {e}); pass the path of a "
                "journal, or a new path to create one",
                path=path,
            ) from None
        # An encrypted journal keeps its intents inside the encrypted file: effect keys are
        # payload, and a plaintext sidecar would leak them.
        self.intents: Any = TableIntents(self) if key is not None else IntentLog(path, durability)

    def rekey(self, new_key: str | bytes) -> None:
        """Re-encrypt an encrypted journal under a new key (SQLCipher's PRAGMA rekey)."""
        if not self.encrypted:
            raise InvalidValue("this journal is not encrypted; rekey changes the key of an encrypted one")
        with self._lock:
            self.conn.execute(f"PRAGMA rekey = {_key_literal(new_key)}")

    def _set_wal(self) -> None:
        # Changing the journal mode needs a moment with no other connection mid-transaction;
        # the busy timeout does not cover it, so retry briefly when many processes open at once.
        for attempt in range(200):
            try:
                mode = self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if mode.lower() == "wal":
                    return
            except self.db.OperationalError as e:
                if "locked" not in str(e) and "busy" not in str(e):
                    raise
            time.sleep(0.005 * (1 + attempt % 10))
        raise WorkbenchError(f"could not switch {self.path} to WAL mode; is it on a network share?")

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self.intents.close()
            if self._adbc_conn is not None:
                self._adbc_conn.close()
                self._adbc_conn = None
            if self.conn is not None:
                self.conn.close()
                self.conn = None  # type: ignore[assignment]

    # -- transactions ---------------------------------------------------------------------

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """One write transaction (BEGIN IMMEDIATE); nested calls join the outer one."""
        with self._lock:
            if self._in_tx:
                yield
                return
            self.conn.execute("BEGIN IMMEDIATE")
            self._in_tx = True
            try:
                yield
            except BaseException:
                self._in_tx = False
                self.conn.execute("ROLLBACK")
                raise
            self._in_tx = False
            self.conn.execute("COMMIT")

    # -- schema ---------------------------------------------------------------------------

    def ensure_schema(self, state_name: str | None, initial_state: str | None, digest: bytes) -> None:
        """Create the schema and the root branch on first open; check the version after."""
        with self._lock:
            try:
                tables = {
                    r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
                }
            except self.db.DatabaseError as e:
                raise NotAJournal(
                    f"{self.path} is not a lithify journal (SQLite says: {e})", path=self.path
                ) from None
            if tables and "meta" not in tables:
                raise NotAJournal(
                    f"{self.path} is an SQLite database but not a lithify journal (it has tables "
                    f"{sorted(tables)[:5]} and no lithify metadata); choose another path",
                    path=self.path,
                )
            if "meta" in tables:
                self._check_meta()
                cols = {r[1] for r in self.conn.execute("PRAGMA table_info(events)")}
                if not _TABLES <= tables or not set(_ADDED_COLUMNS) <= cols:  # an older file
                    with self.atomic():
                        cols = {r[1] for r in self.conn.execute("PRAGMA table_info(events)")}
                        for name, decl in _ADDED_COLUMNS.items():
                            if name not in cols:
                                self.conn.execute(f"ALTER TABLE events ADD COLUMN {name} {decl}")
                        for statement in _statements(_SCHEMA):
                            self.conn.execute(statement)
                return
            with self.atomic():
                for statement in _statements(_SCHEMA):
                    self.conn.execute(statement)
                have = self.conn.execute("SELECT value FROM meta WHERE key='application'").fetchone()
                if have is None:
                    meta = {
                        "application": APPLICATION,
                        "schema_version": str(SCHEMA_VERSION),
                        "state_name": state_name or "",
                        "created": str(now_ms()),
                    }
                    self.conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
                    self.conn.execute(
                        f"INSERT INTO branches ({_BRANCH_COLS}) VALUES (0, 'main', NULL, 0, '{{}}', ?, NULL)",
                        (now_ms(),),
                    )
                    if initial_state is not None:
                        self.conn.execute(
                            "INSERT INTO snapshots VALUES (0, 0, ?, ?)", (initial_state, digest)
                        )
            self._check_meta()

    def _check_meta(self) -> None:
        meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("application") != APPLICATION:
            raise NotAJournal(f"{self.path} is not a lithify journal", path=self.path)
        version = int(meta.get("schema_version", "0"))
        if version > SCHEMA_VERSION:
            raise NotAJournal(
                f"{self.path} was written by a newer lithify-workbench (schema {version}; this "
                f"one reads up to {SCHEMA_VERSION}); upgrade lithify-workbench to open it",
                path=self.path,
                version=version,
            )
        self.meta = meta

    # -- events ---------------------------------------------------------------------------

    def _bindable(self, row: EventRow, shape: str) -> tuple[Any, ...]:
        # bytearray binds directly; bytes would go through the adapter lookup (see EVENT_SHAPES)
        w = self._writer if self._writer is not None else self._writer_id()
        if shape == "effect":  # the key hash is a blob too
            return (*row[:3], bytearray(row[3]), bytearray(row[4]), row[5], row[6], bytearray(row[7]), *row[8:], w)
        return (*row[:3], bytearray(row[3]), bytearray(row[4]), *row[5:], w)

    def append(self, row: EventRow, shape: str) -> None:
        """Insert one event of an EVENT_SHAPES shape (committed on return unless inside atomic())."""
        lock = self._lock
        lock.acquire()
        try:
            self.conn.execute(_INSERT_SHAPE[shape], self._bindable(row, shape))
        except self.db.IntegrityError as e:
            raise self._conflict(row[0], row[1] - 1, e) from None
        finally:
            lock.release()

    def append_batch(self, branch: int, first_seq: int, kind: str, parent: bytes, ts: int,
                     chunks: Iterable[tuple[Sequence[bytes], Sequence[str]]],
                     snapshots: Sequence[tuple[int, str, bytes]]) -> None:
        """Insert consecutive plain events of one branch in one transaction, all or nothing.

        ``chunks`` yields (hashes, payload texts) in order; ``snapshots`` (seq, state, digest)
        is read once it is exhausted, and an exception from it rolls everything back. Each
        chunk is one INSERT ... SELECT over json_each (four bound values per chunk rather than
        eight per event), run on a second thread while the next chunk is prepared: SQLite
        works without the GIL, so preparing and inserting overlap on two cores."""
        with self._lock:
            if self._in_tx:
                raise WorkbenchError("append_batch cannot join an open transaction")
            self.conn.execute("BEGIN IMMEDIATE")
            self._in_tx = True
            done = False
            try:
                w = self._writer_id()
                insert = self._insert_chunk
                worker = _ChunkWorker(insert)
                try:
                    previous = parent
                    for hashes, texts in chunks:
                        if hashes:
                            worker.submit((branch, first_seq, kind, previous, hashes, ts, w, texts))
                            first_seq += len(hashes)
                            previous = hashes[-1]
                except BaseException:
                    worker.abandon()
                    raise
                worker.finish()  # re-raises the first error the inserts met
                if snapshots:
                    self.conn.executemany("INSERT OR IGNORE INTO snapshots VALUES (?, ?, ?, ?)",
                                          [(branch, seq, text, d) for seq, text, d in snapshots])
                done = True
            except self.db.IntegrityError as e:
                raise self._conflict(branch, first_seq - 1, e) from None
            finally:
                self._in_tx = False
                self.conn.execute("COMMIT" if done else "ROLLBACK")

    def _insert_chunk(self, branch: int, first_seq: int, kind: str, parent: bytes, hashes: Sequence[bytes],
                      ts: int, writer: int, texts: Sequence[str]) -> None:
        if self._json_each():
            chain = b"".join((parent, *hashes))  # event k: hash at k + 1, parent at k
            self.conn.execute(_INSERT_BATCH, (branch, first_seq, kind, chain, ts, writer,
                                              orjson.dumps(list(texts)).decode("utf-8")))
        else:
            parents = [parent, *hashes[:-1]]
            bind = self._bindable
            self.conn.executemany(_INSERT_SHAPE["plain"], [
                bind((branch, first_seq + i, kind, h, p, ts, text), "plain")
                for i, (h, p, text) in enumerate(zip(hashes, parents, texts))])

    def _json_each(self) -> bool:
        if self._has_json_each is None:
            try:
                self.conn.execute("SELECT count(*) FROM json_each('[]')").fetchone()
                self._has_json_each = True
            except self.db.OperationalError:  # an SQLite built without JSON functions
                self._has_json_each = False
        return self._has_json_each

    def append_many(self, rows: Sequence[tuple[EventRow, str]]) -> None:
        """Insert several (row, shape) events of one branch in one transaction (all or nothing),
        in order."""
        with self._lock:
            try:
                with self.atomic():
                    bind = self._bindable
                    for shape, run in itertools.groupby(rows, key=operator.itemgetter(1)):
                        self.conn.executemany(_INSERT_SHAPE[shape], [bind(r, shape) for r, _ in run])
            except self.db.IntegrityError as e:
                raise self._conflict(rows[0][0][0], rows[0][0][1] - 1, e) from None

    def _conflict(self, branch: int, expected: int, err: Exception) -> WorkbenchError:
        if "UNIQUE" not in str(err):
            return WorkbenchError(f"could not append to branch {branch}: {err}", branch=branch)
        actual = self.head(branch)
        actual_seq = actual[0] if actual else expected
        return BranchConflict(
            f"branch {branch} moved: this handle expected head {expected} but the journal's "
            f"head is {actual_seq} (another writer appended); take a fresh handle with "
            f"journal.branch({branch}) and decide again",
            branch=branch,
            expected=expected,
            actual=actual_seq,
        )

    def head(self, branch: int) -> tuple[int, bytes] | None:
        """(seq, hash) of the branch's own last event, or None if it has none."""
        with self._lock:
            return self.conn.execute(
                "SELECT seq, hash FROM events WHERE branch = ? ORDER BY seq DESC LIMIT 1", (branch,)
            ).fetchone()

    def heads(self) -> dict[int, tuple[int, bytes]]:
        """Every branch's own last (seq, hash), in one query."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT e.branch, e.seq, e.hash FROM events e JOIN "
                "(SELECT branch, max(seq) AS m FROM events GROUP BY branch) h "
                "ON e.branch = h.branch AND e.seq = h.m"
            ).fetchall()
        return {b: (s, h) for b, s, h in rows}

    def event_at(self, branch: int, seq: int) -> StoredEvent | None:
        """The event a branch wrote at seq itself (not inherited)."""
        with self._lock:
            return self.conn.execute(
                f"SELECT {_EVENT_COLS} FROM events WHERE branch = ? AND seq = ?", (branch, seq)
            ).fetchone()

    def events(
        self, segments: Sequence[Segment], lo: int, hi: int, state_only: bool = False
    ) -> list[StoredEvent]:
        """Events of a resolved history with lo <= seq <= hi, in seq order."""
        out: list[StoredEvent] = []
        kinds = " AND kind IN ('delta', 'compact')" if state_only else ""
        with self._lock:
            for branch, first, last in segments:
                a = max(lo, first)
                b = hi if last is None else min(hi, last)
                if a > b:
                    continue
                out.extend(
                    self.conn.execute(
                        f"SELECT {_EVENT_COLS} FROM events WHERE branch = ? AND seq BETWEEN ? AND ?"
                        f"{kinds} ORDER BY seq",
                        (branch, a, b),
                    ).fetchall()
                )
        return out

    def last_seq_at_time(self, segments: Sequence[Segment], ts: int) -> int:
        """The highest seq of a resolved history committed at or before unix-ms ``ts`` (0 if none)."""
        best = 0
        with self._lock:
            for branch, first, last in segments:
                hi = "" if last is None else " AND seq <= ?"
                args: list[Any] = [branch, first, ts] + ([] if last is None else [last])
                row = self.conn.execute(
                    f"SELECT max(seq) FROM events WHERE branch = ? AND seq >= ? AND ts <= ?{hi}", args
                ).fetchone()
                if row[0] is not None:
                    best = max(best, row[0])
        return best

    def world_events(self, segments: Sequence[Segment], hi: int) -> list[tuple[int, str, str, int]]:
        """(seq, kind, payload, occurred-or-commit ms) of the state events of a resolved history."""
        out: list[tuple[int, str, str, int]] = []
        with self._lock:
            for branch, first, last in segments:
                b = hi if last is None else min(hi, last)
                out.extend(self.conn.execute(
                    "SELECT seq, kind, payload, coalesce(occurred_at, ts) FROM events WHERE branch = ? "
                    "AND seq BETWEEN ? AND ? AND kind IN ('delta', 'compact') ORDER BY seq",
                    (branch, first, b),
                ).fetchall())
        return out

    def put_tag(self, label: str, branch: int, seq: int) -> None:
        """Point a label at an event (moving it if it exists)."""
        with self._lock:
            self.conn.execute("INSERT OR REPLACE INTO tags VALUES (?, ?, ?, ?)", (label, branch, seq, now_ms()))

    def tag(self, label: str) -> tuple[int, int] | None:
        with self._lock:
            row = self.conn.execute("SELECT branch, seq FROM tags WHERE label = ?", (label,)).fetchone()
        return None if row is None else (row[0], row[1])

    def subscription(self, name: str) -> int:
        """A subscriber's acknowledged position, created at 0 on first use."""
        with self._lock:
            self.conn.execute(
                "INSERT OR IGNORE INTO subscriptions VALUES (?, 0, ?)", (name, now_ms())
            )
            return self.conn.execute(
                "SELECT position FROM subscriptions WHERE name = ?", (name,)
            ).fetchone()[0]

    def ack(self, name: str, position: int) -> None:
        with self._lock:
            self.conn.execute(
                "UPDATE subscriptions SET position = ?, updated = ? WHERE name = ?",
                (position, now_ms(), name),
            )

    def own_events(self, branch: int) -> Iterator[tuple[Any, ...]]:
        """A branch's own events in seq order with their derived columns, streamed (verify)."""
        with self._lock:
            return self.conn.execute(
                f"SELECT {_EVENT_COLS}, key_hash, metric, value FROM events WHERE branch = ? "
                "ORDER BY seq",
                (branch,),
            )

    def _segment_sql(self, segments: Sequence[Segment], prefix: str = "") -> tuple[str, list[Any]]:
        """`(branch = ? AND seq >= ? [AND seq <= ?]) OR ...` over a resolved history (columns
        qualified with ``prefix``, e.g. "e.")."""
        key = (prefix, tuple(segments))
        hit = self._segment_cache.get(key)
        if hit is not None:
            return hit
        shape = (prefix, tuple(last is None for _, _, last in segments))
        where = self._where_cache.get(shape)
        if where is None:
            b, q = prefix + "branch", prefix + "seq"
            where = " OR ".join(
                f"({b} = ? AND {q} >= ?" + ("" if open_ else f" AND {q} <= ?") + ")" for open_ in shape[1]
            )
            self._where_cache[shape] = where
        args: list[Any] = []
        for branch, first, last in segments:
            args += [branch, first] if last is None else [branch, first, last]
        if len(self._segment_cache) > 4096:
            self._segment_cache.clear()
        self._segment_cache[key] = (where, args)
        return where, args

    # Effects are looked up by key through two lazily built structures rather than an index
    # maintained on every append (an index over random key hashes cost each effect commit a
    # third b-tree page, ~1/3 of its time): a handle's own map of its history (effect_keys)
    # and, for long histories, the effect_index table, caught up on demand.

    def effect_keys(self, segments: Sequence[Segment], upto: int) -> dict[bytes, tuple[int, int]]:
        """{key hash: (branch, seq)} of every effect in a resolved history up to seq ``upto``."""
        out: dict[bytes, tuple[int, int]] = {}
        with self._lock:
            for branch, first, last in reversed(segments):  # oldest first: newer entries win
                hi = upto if last is None else min(last, upto)
                out.update((kh, (branch, seq)) for kh, seq in self.conn.execute(
                    "SELECT key_hash, seq FROM events WHERE branch = ? AND seq >= ? AND seq <= ? "
                    "AND key_hash IS NOT NULL ORDER BY seq", (branch, first, hi)))
        return out

    def effect_payload(self, branch: int, seq: int) -> str:
        """The payload of the effect stored at (branch, seq)."""
        with self._lock:
            return self.conn.execute(  # type: ignore[no-any-return]
                "SELECT payload FROM events WHERE branch = ? AND seq = ?", (branch, seq)
            ).fetchone()[0]

    def find_effect_after(self, key_hash: bytes, branch: int, seq: int) -> tuple[int, str] | None:
        """(seq, payload) of an effect with this key on ``branch`` after ``seq`` (what another
        writer appended past a handle's head), newest first."""
        with self._lock:
            return self.conn.execute(
                "SELECT seq, payload FROM events WHERE branch = ? AND seq > ? AND key_hash = ? "
                "ORDER BY seq DESC LIMIT 1", (branch, seq, key_hash)).fetchone()

    def find_effect_indexed(self, key_hash: bytes, segments: Sequence[Segment], upto_position: int
                            ) -> tuple[int, int, str] | None:
        """(branch, seq, payload) of the newest effect with this key in a resolved history among
        the events effect_index covers (positions up to ``upto_position``)."""
        where, args = self._segment_sql(segments, "e.")
        with self._lock:
            return self.conn.execute(
                "SELECT e.branch, e.seq, e.payload FROM effect_index x JOIN events e ON e.position = x.position "
                f"WHERE x.key_hash = ? AND x.position <= ? AND ({where}) ORDER BY e.seq DESC LIMIT 1",
                [key_hash, upto_position, *args],
            ).fetchone()

    def catch_up_effect_index(self) -> int:
        """Index every effect appended since the last catch-up; returns the position covered."""
        return self._catch_up("effect_index", "effect_index_position",
                              "SELECT key_hash, position FROM events WHERE position > ? AND position <= ? "
                              "AND key_hash IS NOT NULL")

    def by_hash_prefix(self, lo: bytes, hi: bytes | None, limit: int = 50) -> list[tuple[bytes, int, int]]:
        """(hash, branch, seq) of events whose hash lies in [lo, hi), earliest first."""
        with self._lock:
            self._catch_up_hash_index()
            if hi is None:
                q, args = "h.hash >= ?", (lo,)
            else:
                q, args = "h.hash >= ? AND h.hash < ?", (lo, hi)  # type: ignore[assignment]
            return self.conn.execute(
                "SELECT h.hash, e.branch, e.seq FROM hash_index h JOIN events e "
                f"ON e.position = h.position WHERE {q} ORDER BY h.position LIMIT {int(limit)}",
                args,
            ).fetchall()

    def _catch_up_hash_index(self) -> None:
        # The hash index is built when hashes are looked up, not on every append: an index
        # over random 32-byte keys would cost appends a third page write per commit.
        self._catch_up("hash_index", "hash_index_position",
                       "SELECT hash, position FROM events WHERE position > ? AND position <= ?")

    def _catch_up(self, table: str, meta_key: str, select: str) -> int:
        """Insert ``select``'s rows for the events after the position ``meta_key`` records."""
        with self._lock, self.atomic():
            row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (meta_key,)).fetchone()
            done = int(row[0]) if row else 0
            top = self.conn.execute("SELECT coalesce(max(position), 0) FROM events").fetchone()[0]
            if top > done:
                self.conn.execute(f"INSERT OR IGNORE INTO {table} {select}", (done, top))
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (meta_key, str(top)))
            return max(top, done)  # type: ignore[no-any-return]

    def tail(self, cursor: int, limit: int | None) -> list[StoredEvent]:
        """Events with position > cursor, in position (commit) order."""
        with self._lock:
            sql = f"SELECT {_EVENT_COLS} FROM events WHERE position > ? ORDER BY position"
            if limit is not None:
                sql += f" LIMIT {int(limit)}"
            return self.conn.execute(sql, (cursor,)).fetchall()

    def observations(self, since: int = 0) -> list[tuple[int, int, int, str, float, int]]:
        """(position, branch, seq, metric, value, ts) of observe events after a position."""
        with self._lock:
            return self.conn.execute(
                "SELECT position, branch, seq, metric, value, ts FROM events "
                "WHERE position > ? AND metric IS NOT NULL ORDER BY position",
                (since,),
            ).fetchall()

    def observations_frame(self) -> Any:
        """All observations as a polars frame (position, branch, seq, metric, value, ts).

        Files are read through the ADBC SQLite driver, which hands rows to polars as Arrow
        columns (about twice as fast as sqlite3 plus a frame build at 10^6 rows); in-memory
        journals, or machines without the driver, take the sqlite3 path.
        """
        import polars as pl

        sql = (
            "SELECT position, branch, seq, metric, value, ts FROM events "
            "WHERE metric IS NOT NULL ORDER BY position"
        )
        schema = {"position": pl.Int64, "branch": pl.Int64, "seq": pl.Int64, "metric": pl.Utf8,
                  "value": pl.Float64, "ts": pl.Int64}
        with self._lock:
            adbc = self._adbc()
            if adbc is not None:
                cur = adbc.cursor()
                try:
                    cur.execute(sql)
                    frame = pl.DataFrame(cur.fetch_arrow())
                finally:
                    cur.close()
                if frame.width == len(schema):
                    return frame.cast(schema)  # type: ignore[arg-type]
                return pl.DataFrame(schema=schema)
            rows = self.conn.execute(sql).fetchall()
        return pl.DataFrame(rows, schema=schema, orient="row")

    def _adbc(self) -> Any:
        if self.path == ":memory:" or self.encrypted:  # ADBC's SQLite cannot decrypt
            return None
        if self._adbc_conn is None:
            try:
                import adbc_driver_sqlite.dbapi as adbc
            except ImportError:
                return None
            from urllib.parse import quote

            uri = f"file:{quote(os.path.abspath(self.path))}?mode=ro"
            self._adbc_conn = adbc.connect(uri, autocommit=True)
        return self._adbc_conn

    # -- intents --------------------------------------------------------------------------

    def _writer_id(self) -> int:
        """This process's writer row (registered on its first write): a random id, not a host."""
        if self._writer is None:
            import uuid

            token = uuid.uuid4().hex[:16]
            self.conn.execute("INSERT INTO writers (writer, pid, source, started) VALUES (?, ?, ?, ?)",
                              (token, os.getpid(), self.source, now_ms()))
            self._writer = self.conn.execute("SELECT id FROM writers WHERE writer = ?", (token,)).fetchone()[0]
        return self._writer

    def provenance(self, branch: int, seq: int) -> tuple[Any, ...] | None:
        """(writer token, pid, source, ts, fx_ms, attempts, occurred_at) of one stored event."""
        with self._lock:
            return self.conn.execute(
                "SELECT w.writer, w.pid, w.source, e.ts, e.fx_ms, e.attempts, e.occurred_at FROM events e "
                "LEFT JOIN writers w ON w.id = e.writer WHERE e.branch = ? AND e.seq = ?", (branch, seq)
            ).fetchone()

    def vacuum(self) -> None:
        """Checkpoint the WAL into the file and rebuild it compactly."""
        with self._lock:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.conn.execute("VACUUM")
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # VACUUM wrote through the WAL

    def committed_keys(self, branch: int, key_hashes: Sequence[bytes]) -> set[bytes]:
        """Which of these effect key hashes a branch has committed itself."""
        out: set[bytes] = set()
        with self._lock:
            self.catch_up_effect_index()
            for i in range(0, len(key_hashes), 500):
                chunk = list(key_hashes[i : i + 500])
                marks = ",".join("?" * len(chunk))
                out.update(
                    r[0]
                    for r in self.conn.execute(
                        "SELECT x.key_hash FROM effect_index x JOIN events e ON e.position = x.position "
                        f"WHERE x.key_hash IN ({marks}) AND e.branch = ?",
                        [*chunk, branch],
                    )
                )
        return out

    # -- snapshots ------------------------------------------------------------------------

    def put_snapshot(self, branch: int, seq: int, state: str, digest: bytes) -> None:
        with self._lock:
            self.conn.execute(
                "INSERT OR IGNORE INTO snapshots VALUES (?, ?, ?, ?)", (branch, seq, state, digest)
            )

    def nearest_snapshot(self, segments: Sequence[Segment], seq: int) -> tuple[int, int, str] | None:
        """(branch, seq, state) of the latest snapshot at or before seq in a resolved history."""
        best: tuple[int, int, str] | None = None
        with self._lock:
            for branch, first, last in reversed(segments):
                b = seq if last is None else min(seq, last)
                if b < first:
                    continue
                row = self.conn.execute(
                    "SELECT branch, seq, state FROM snapshots WHERE branch = ? AND seq BETWEEN ? AND ?"
                    " ORDER BY seq DESC LIMIT 1",
                    (branch, first, b),
                ).fetchone()
                if row is not None:
                    best = row
                    break
        return best

    def snapshots(self) -> list[tuple[int, int, str, bytes]]:
        with self._lock:
            return self.conn.execute(
                "SELECT branch, seq, state, digest FROM snapshots ORDER BY branch, seq"
            ).fetchall()

    # -- branches -------------------------------------------------------------------------

    def branch_row(self, branch_id: int) -> BranchRow | None:
        with self._lock:
            return self.conn.execute(
                f"SELECT {_BRANCH_COLS} FROM branches WHERE id = ?", (branch_id,)
            ).fetchone()

    def branch_by_name(self, name: str) -> BranchRow | None:
        with self._lock:
            return self.conn.execute(
                f"SELECT {_BRANCH_COLS} FROM branches WHERE name = ?", (name,)
            ).fetchone()

    def branch_rows(self, parent: int | None = None, since_id: int = -1) -> list[BranchRow]:
        with self._lock:
            if parent is None:
                return self.conn.execute(
                    f"SELECT {_BRANCH_COLS} FROM branches WHERE id > ? ORDER BY id", (since_id,)
                ).fetchall()
            return self.conn.execute(
                f"SELECT {_BRANCH_COLS} FROM branches WHERE parent = ? ORDER BY id", (parent,)
            ).fetchall()

    def insert_branches(
        self, rows: Sequence[tuple[str | None, int, int, str, int | None]]
    ) -> list[int]:
        """Insert forks (name, parent, fork_seq, params, sweep); returns their ids."""
        ids: list[int] = []
        created = now_ms()
        with self._lock:
            try:
                with self.atomic():
                    for name, parent, fork_seq, params, sweep in rows:
                        cur = self.conn.execute(
                            "INSERT INTO branches (name, parent, fork_seq, params, created, sweep) "
                            "VALUES (?, ?, ?, ?, ?, ?)",
                            (name, parent, fork_seq, params, created, sweep),
                        )
                        ids.append(cur.lastrowid)  # type: ignore[arg-type]
            except self.db.IntegrityError:
                taken = [r[0] for r in rows if r[0] is not None]
                raise Conflict(
                    f"a branch named {taken[0]!r} already exists; choose another name or open it "
                    f"with journal.branch({taken[0]!r})",
                    name=taken[0],
                ) from None
        return ids

    def insert_sweep(self, base: int, at: int, spec: str) -> int:
        with self._lock:
            cur = self.conn.execute(
                "INSERT INTO sweeps (base, at, spec, created) VALUES (?, ?, ?, ?)",
                (base, at, spec, now_ms()),
            )
            return cur.lastrowid  # type: ignore[return-value]

    def put_run(self, branch: int, sweep: int, status: str, **fields: Any) -> None:
        """Create or update a fork's run record (status, runner, notebook, error, times)."""
        cols = ["branch", "sweep", "status", *fields]
        with self._lock:
            self.conn.execute(
                f"INSERT INTO fork_runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}) "
                "ON CONFLICT(branch) DO UPDATE SET "
                + ", ".join(f"{c} = excluded.{c}" for c in cols[2:]),
                [branch, sweep, status, *fields.values()],
            )

    def runs(self, sweep: int | None = None) -> list[tuple[Any, ...]]:
        """(branch, sweep, status, runner, notebook, error, started, finished, wall_ms) rows."""
        sql = ("SELECT branch, sweep, status, runner, notebook, error, started, finished, wall_ms "
               "FROM fork_runs")
        with self._lock:
            if sweep is None:
                return self.conn.execute(sql + " ORDER BY branch").fetchall()
            return self.conn.execute(sql + " WHERE sweep = ? ORDER BY branch", (sweep,)).fetchall()

    def sweep_rows(self) -> list[tuple[int, int, int, str, int]]:
        with self._lock:
            return self.conn.execute(
                "SELECT id, base, at, spec, created FROM sweeps ORDER BY id"
            ).fetchall()
