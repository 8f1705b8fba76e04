"""The SQLite layer: schema, pragmas, transactions and every SQL statement of the package.

No other module imports ``sqlite3``. Invariants the database can hold, it holds: a unique
``(branch, seq)`` key refuses a stale writer, a trigger refuses an append whose predecessor
is not stored (so, with the unique key, every append follows the branch's stored head: no
gaps, whatever the caller does), triggers refuse UPDATE
and DELETE on events, and effect intents go to an append-only sidecar log (``IntentLog``) so
that announcing a call costs one write() rather than a second commit.

Every ``sqlite3`` and ``OSError`` fault is translated here into a ``StorageError`` subclass
(``Busy``, ``ReadOnly``, ``DiskFull``, ``Corrupt``) or ``NotAJournal``, with the path and what
to do. A journal file is only ever opened through SQLite: closing any other descriptor of it
would drop every POSIX lock this process holds on it, the live connection's included.
"""

from __future__ import annotations

import errno
import itertools
import operator
import os
import queue
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import orjson

from .errors import (
    BranchConflict,
    Busy,
    Conflict,
    Corrupt,
    DiskFull,
    EffectInFlight,
    InvalidValue,
    NotAJournal,
    NotFound,
    ReadOnly,
    StorageError,
    WorkbenchError,
    os_error,
)
from .intents import IntentLog, announcement_live, end_announcement, new_announcement

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

# Every append must follow its branch's stored head: the predecessor is stored (or the branch
# forked there), and with the unique (branch, seq) key that leaves no room for a gap.
_FOLLOW_HEAD = """CREATE TRIGGER IF NOT EXISTS events_follow_head BEFORE INSERT ON events
WHEN NEW.seq - 1 IS NOT (SELECT seq FROM events WHERE branch = NEW.branch AND seq = NEW.seq - 1)
 AND NEW.seq - 1 IS NOT (SELECT fork_seq FROM branches WHERE id = NEW.branch)
BEGIN SELECT RAISE(ABORT, 'lithify: an append must follow the branch head'); END"""
# Batches at least this long check their first event's predecessor once, and drop the trigger
# inside their own write transaction (nobody else can write meanwhile, nobody else sees it
# missing, a rollback restores it) to spare it on every row: it doubles a batched row's cost.
TRIGGERLESS_BATCH = 256

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
    attempts INTEGER,
    event_id TEXT,
    render_ms REAL
);
CREATE UNIQUE INDEX IF NOT EXISTS events_branch_seq ON events(branch, seq);
CREATE UNIQUE INDEX IF NOT EXISTS events_event_id ON events(event_id) WHERE event_id IS NOT NULL;
DROP INDEX IF EXISTS events_effects;
CREATE TABLE IF NOT EXISTS snapshots (
    branch INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    state TEXT NOT NULL,
    digest BLOB NOT NULL,
    built TEXT,
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
    pid TEXT,
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
{follow_head};
CREATE TRIGGER IF NOT EXISTS events_append_only_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'lithify events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_append_only_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'lithify events are append-only'); END;
""".replace("{follow_head}", _FOLLOW_HEAD)

WAL_AUTOCHECKPOINT_BYTES = 32 << 20  # of WAL between automatic checkpoints
PAGE_SIZE = 2048  # bytes, for new journals
_TABLES = {"meta", "branches", "events", "snapshots", "hash_index", "effect_index", "sweeps", "fork_runs",
           "subscriptions", "tags", "writers", "intents"}
_TRIGGERS = {"events_follow_head", "events_append_only_update", "events_append_only_delete"}
# Columns later versions added to tables of older files: table -> {column: declaration}.
_ADDED_COLUMNS = {
    "events": {"occurred_at": "INTEGER", "writer": "INTEGER", "fx_ms": "REAL", "attempts": "INTEGER",
               "event_id": "TEXT", "render_ms": "REAL"},
    "snapshots": {"built": "TEXT"},
    "intents": {"pid": "TEXT"},
}
SYNCHRONOUS = {"process": "NORMAL", "lazy": "NORMAL", "fsync": "FULL"}
APPEND_REFUSED = "lithify: an append must follow the branch head"  # the events_follow_head trigger

# An EventRow is (branch, seq, kind, hash, parent_hash, ts, payload) followed by the optional
# columns of its shape. Columns a shape leaves out are stored as NULL without being bound:
# Python's sqlite3 binds None (and bytes) through its adapter lookup, which costs more than
# the insert of a small row does.
EVENT_SHAPES: dict[str, tuple[str, ...]] = {
    "plain": (),
    "dated": ("occurred_at",),
    "identified": ("event_id",),
    "dated_identified": ("occurred_at", "event_id"),
    "effect": ("key_hash", "fx_ms", "attempts"),
    "effect_rendered": ("key_hash", "fx_ms", "attempts", "render_ms"),
    "observe": ("metric", "value"),
    "observe_identified": ("metric", "value", "event_id"),
}
_INSERT_SHAPE = {
    shape: "INSERT INTO events (branch, seq, kind, hash, parent_hash, ts, payload, {}writer) VALUES ({}?)".format(
        "".join(c + ", " for c in extra), "?, " * (7 + len(extra)))
    for shape, extra in EVENT_SHAPES.items()
}
_SNAPSHOT_COLS = "branch, seq, state, digest, built"
_INSERT_BATCH = (
    "INSERT INTO events (branch, seq, kind, hash, parent_hash, ts, payload, writer) "
    "SELECT ?1, ?2 + j.key, ?3, substr(?4, j.key * 32 + 33, 32), substr(?4, j.key * 32 + 1, 32), ?5, j.value, ?6 "
    "FROM json_each(?7) j"  # json_each yields the array in order, so positions follow seqs
)
_EVENT_COLS = "position, branch, seq, kind, hash, parent_hash, ts, payload"
_OBSERVATIONS = ("SELECT position, branch, seq, metric, value, ts FROM events WHERE metric IS NOT NULL "
                 "ORDER BY position")
OBS_ROWS_DIRECT = 50_000  # observations read through sqlite3 before the Arrow path pays off
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


# -- translating faults -----------------------------------------------------------------------

# SQLite's primary result codes by the text sqlite3_errstr gives them, for drivers (SQLCipher's)
# whose exceptions carry no code.
_MESSAGES = {
    "database is locked": "BUSY",
    "database table is locked": "LOCKED",
    "attempt to write a readonly database": "READONLY",
    "disk I/O error": "IOERR",
    "database disk image is malformed": "CORRUPT",
    "database or disk is full": "FULL",
    "unable to open database file": "CANTOPEN",
    "file is not a database": "NOTADB",
    "interrupted": "INTERRUPT",
}


def _sqlite_code(err: BaseException) -> tuple[str, str]:
    """(primary code, extended code) of an SQLite error, e.g. ("IOERR", "SQLITE_IOERR_WRITE")."""
    name = getattr(err, "sqlite_errorname", None)
    if isinstance(name, str) and name.startswith("SQLITE_"):
        return name.split("_")[1], name
    text = str(err)
    for msg, code in _MESSAGES.items():
        if text.startswith(msg):
            return code, "SQLITE_" + code
    return "", ""


def is_driver_error(err: BaseException) -> bool:
    """True for an exception of sqlite3 or of SQLCipher's DB-API module."""
    return isinstance(err, sqlite3.Error) or type(err).__module__.startswith(("sqlcipher3", "pysqlite3"))


def translate(err: BaseException, path: str, doing: str = "") -> WorkbenchError:
    """The WorkbenchError for a driver, OS or decoding fault on the journal at ``path``."""
    if isinstance(err, WorkbenchError):
        return err
    where = "the in-memory journal" if path == ":memory:" else path
    while_ = f" while {doing}" if doing else ""
    if isinstance(err, OSError):
        return os_error(err, path, doing)
    if isinstance(err, (orjson.JSONDecodeError, UnicodeDecodeError)):
        return Corrupt(f"{where}: a stored value cannot be decoded ({err}); run `lithify verify` and "
                       "restore the journal from a copy", path=path)
    if not is_driver_error(err):
        return StorageError(f"{where}{while_}: {type(err).__name__}: {err}", path=path)
    code, ext = _sqlite_code(err)
    said = f"(SQLite says: {err})"
    if code in ("BUSY", "LOCKED"):
        return Busy(f"{where} stayed locked by another connection past the busy timeout{while_} {said}; "
                    "another process is writing or holds a long transaction: try again, or open with a "
                    "longer timeout (Journal.open(..., timeout=SECONDS))", path=path)
    if code == "READONLY":
        return ReadOnly(f"cannot write {where}{while_}: the file or its folder is read-only {said}; read "
                        "commands still work, or copy the journal to a writable folder", path=path)
    if code == "FULL" or (code == "IOERR" and any(w in ext for w in ("WRITE", "FSYNC", "TRUNCATE", "SHMSIZE"))):
        return DiskFull(f"could not write {where}{while_}: the disk is full, a file size limit was hit or "
                        f"the disk failed {said}; nothing of this operation was written: free space and "
                        "try again", path=path)
    if code == "CORRUPT":
        return Corrupt(f"{where} is damaged {said}; run `lithify verify` to see where, and restore it from "
                       "a copy", path=path)
    if code == "NOTADB":
        return NotAJournal(f"{where} is not a lithify journal, or it is an encrypted one: then open it with "
                           f"key= (or set LITHIFY_KEY for the CLI) {said}", path=path)
    if code == "CANTOPEN":
        return ReadOnly(f"cannot open {where}{while_} {said}; check that the file and its folder exist and "
                        "are readable (and writable, to write)", path=path)
    if code == "INTERRUPT":
        return StorageError(f"{where}: the operation was interrupted{while_} {said}; nothing of it was "
                            "written", path=path)
    if code == "IOERR":
        return StorageError(f"{where}: the disk failed{while_} {said}; check the disk, then run "
                            "`lithify verify`", path=path)
    return StorageError(f"{where}{while_}: {said}", path=path)


class _Guard:
    """``with storage._guard:`` holds the connection's lock and translates faults (a class,
    not a generator context manager: it wraps every query, so it has to be cheap)."""

    __slots__ = ("storage", "lock")

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self.lock = storage._lock

    def __enter__(self) -> None:
        self.lock.acquire()
        if self.storage.conn is None:
            self.lock.release()
            raise WorkbenchError("this journal is closed; open it again with Journal.open(path)")

    def __exit__(self, kind: Any, err: BaseException | None, tb: Any) -> None:
        try:
            if err is not None:
                self.storage._end_stray_transaction()
        finally:
            self.lock.release()
        if err is not None and not isinstance(err, WorkbenchError) and (
                is_driver_error(err) or isinstance(err, (OSError, orjson.JSONDecodeError))):
            raise translate(err, self.storage.path) from err


# -- which journal files this process holds ---------------------------------------------------
# SQLite shares lock state between the connections one library opens on one file in one
# process, and keeps their descriptors open while a lock is held; two libraries (sqlite3 and
# SQLCipher's copy) do not share it. So a file is opened by one driver at a time here, and
# never with a plain descriptor.

_OPEN_FILES: dict[tuple[int, int], list[Any]] = {}  # (st_dev, st_ino) -> [driver name, count]
_OPEN_LOCK = threading.RLock()


def _file_id(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _is_empty(path: str) -> bool:
    """A 0-byte file with no WAL content (what truncation to zero looks like)."""
    return _size(path) == 0 and _size(path + "-wal") == 0


def _ro_uri(path: str, immutable: bool = False) -> str:
    return f"file:{quote(os.path.abspath(path))}?mode=ro" + ("&immutable=1" if immutable else "")


def is_journal_file(path: str) -> bool:
    """True if ``path`` is a (plain) lithify journal; reads it only through SQLite, read-only."""
    if not os.path.isfile(path):
        return False
    with _OPEN_LOCK:
        fid = _file_id(path)
        if fid is not None and fid in _OPEN_FILES:
            return True  # this process has it open as a journal
        if _is_empty(path):
            return False
        try:
            con = sqlite3.connect(_ro_uri(path), uri=True, timeout=5, check_same_thread=False)
        except sqlite3.Error:
            return False
        try:
            row = con.execute("SELECT value FROM meta WHERE key = 'application'").fetchone()
        except sqlite3.Error:
            return False
        finally:
            con.close()
        return row is not None and row[0] == APPLICATION


class TableIntents:
    """Effect intents kept in the (encrypted) database itself: one commit per announcement,
    slower than the sidecar log but leaking nothing. Same contract as ``IntentLog``."""

    COMPACT_BYTES = 1 << 20

    # Other writers' announcements are not visible without a query: never "quiet".
    mark = None
    start_mark = None

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def announce(self, branch: int, key_hash: bytes, key: str) -> tuple[int, str, str | None]:
        s = self.storage
        running = (s.path + "#intents", branch, key_hash)
        ann, holder = new_announcement(running)
        if holder is not None:
            return 0, ann, holder
        try:
            with s._guard, s.atomic():
                row = s.conn.execute("SELECT attempts, pid FROM intents WHERE branch = ? AND key_hash = ?",
                                     (branch, key_hash)).fetchone()
                if row is not None and row[1] and announcement_live(row[1]):
                    end_announcement(running, ann)
                    return int(row[0]) + 1, ann, str(row[1])
                n = (row[0] if row else 0) + 1
                s.conn.execute("INSERT OR REPLACE INTO intents VALUES (?, ?, ?, ?, ?, ?)",
                               (branch, key_hash, key, now_ms(), n, ann))
                return n, ann, None
        except BaseException:
            end_announcement(running, ann)
            raise

    def _end(self, branch: int, key_hash: bytes, ann: str, sql: str) -> None:
        end_announcement((self.storage.path + "#intents", branch, key_hash), ann)
        if sql:
            with self.storage._guard:
                self.storage.conn.execute(sql, (branch, key_hash, ann))

    def finished(self, branch: int, key_hash: bytes, ann: str) -> None:
        self._end(branch, key_hash, ann, "")

    def withdraw(self, branch: int, key_hash: bytes, ann: str) -> None:
        self._end(branch, key_hash, ann, "DELETE FROM intents WHERE branch = ? AND key_hash = ? AND pid = ?")

    def settle(self, branch: int, key_hash: bytes, ann: str) -> None:
        self._end(branch, key_hash, ann, "UPDATE intents SET pid = NULL WHERE branch = ? AND key_hash = ? AND pid = ?")

    def pending(self, branch: int | None = None) -> dict[tuple[int, bytes], str]:
        with self.storage._guard:
            rows = self.storage.conn.execute("SELECT branch, key_hash, key FROM intents ORDER BY started").fetchall()
        return {(b, h): k for b, h, k in rows if branch is None or b == branch}

    def compact(self, still_open: Callable[[dict[tuple[int, bytes], str]], dict[tuple[int, bytes], str]]) -> None:
        if self.storage.readonly:
            return
        keep = still_open(self.pending())
        with self.storage._guard:
            for (b, h) in self.pending():
                if (b, h) not in keep:
                    self.storage.conn.execute("DELETE FROM intents WHERE branch = ? AND key_hash = ?", (b, h))

    def size(self) -> int:
        with self.storage._guard:
            return int(self.storage.conn.execute("SELECT count(*) FROM intents").fetchone()[0]) * 256

    def close(self) -> None:
        pass


class Storage:
    """Owns one SQLite connection to a journal file (or memory) and all SQL against it.

    ``readonly`` opens the file read-only (``mode=ro``; ``immutable`` where SQLite cannot
    share the WAL index, in a read-only folder with no WAL content): nothing is written, not
    even an index. ``create``: None creates a missing file (never an existing empty one),
    True also initializes an existing empty file, False requires a journal to exist."""

    def __init__(self, path: str, durability: str, busy_timeout_ms: int = 30_000,
                 source: str | None = None, key: str | bytes | None = None, *, readonly: bool = False,
                 create: bool | None = None, schema: tuple[str, str | None, bytes, str] | None = None) -> None:
        self.path = path
        self.source = source
        self.readonly = readonly
        self.immutable = False
        self._writer: int | None = None
        self.durability = durability
        self._lock = threading.RLock()
        self._guard = _Guard(self)
        self._in_tx = False
        self._savepoints = 0
        self._has_json_each: bool | None = None
        self._where_cache: dict[tuple[str, tuple[bool, ...]], str] = {}
        self._segment_cache: dict[tuple[str, tuple[Segment, ...]], tuple[str, list[Any]]] = {}
        self.encrypted = key is not None
        self.db = _driver(key)  # sqlite3, or sqlcipher3's DB-API module for an encrypted file
        self.timeout_s = busy_timeout_ms / 1000
        self._fid: tuple[int, int] | None = None
        self.conn: Any = None
        self.meta: dict[str, str] = {}
        state_name, initial, digest, built = schema if schema is not None else ("", None, b"", "")
        if path == ":memory:":
            if key is not None:
                raise InvalidValue("in-memory journals are not encrypted; open a file to use key=")
            self.conn = self._connect(path)
            self.intents: Any = IntentLog(path, durability)
            self.ensure_schema(state_name, initial, digest, built)
            return
        fid = _file_id(path)
        if fid is None:
            if readonly or create is False:
                raise NotFound(f"no journal at {path}; check the path (or create one by opening it "
                               "writable)", path=path)
            self._create(key, state_name, initial, digest, built)
            fid = _file_id(path)
        elif _is_empty(path) and create is not True:
            raise NotAJournal(
                f"{path} is empty (0 bytes): truncated? Restore it from a copy; to start a new journal "
                "in this file, pass create=True (the CLI's `lithify run` does)", path=path)
        if fid is None:
            raise NotFound(f"{path} disappeared while it was being opened", path=path)
        first_here = self._claim(fid, key)
        try:
            self._open_file(key, first_here)
            self.ensure_schema(state_name, initial, digest, built)
        except BaseException:
            self._close_conn()
            self._release()
            raise
        # An encrypted journal keeps its intents inside the encrypted file: effect keys are
        # payload, and a plaintext sidecar would leak them.
        self.intents = TableIntents(self) if key is not None else IntentLog(path, durability, readonly)

    # -- connecting -----------------------------------------------------------------------

    def _claim(self, fid: tuple[int, int], key: str | bytes | None) -> bool:
        """Register this open of the file (by inode) for its driver; refuse a file this process
        holds through the other driver. Returns whether no one here held it before."""
        with _OPEN_LOCK:
            held = _OPEN_FILES.get(fid)
            if held is not None and held[0] != self.db.__name__:
                raise NotAJournal(
                    f"{self.path} is open in this process as " + ("a plain journal: open it without key="
                    if key is not None else "an encrypted journal: open it with its key="), path=self.path)
            entry = _OPEN_FILES.setdefault(fid, [self.db.__name__, 0])
            entry[1] += 1
            self._fid = fid
            return held is None

    def _release(self) -> None:
        if self._fid is not None:
            with _OPEN_LOCK:
                entry = _OPEN_FILES.get(self._fid)
                if entry is not None:
                    entry[1] -= 1
                    if entry[1] <= 0:
                        del _OPEN_FILES[self._fid]
            self._fid = None

    def _connect(self, target: str, uri: bool = False) -> Any:
        try:
            return self.db.connect(target, isolation_level=None, check_same_thread=False,
                                   timeout=self.timeout_s, uri=uri)
        except Exception as e:
            raise translate(e, self.path, "opening it") from None

    def _open_file(self, key: str | bytes | None, first_here: bool) -> None:
        """Connect to an existing file, check it is a journal this key opens, set the pragmas."""
        path = self.path
        if not self.readonly:
            self.conn = self._connect(path)
        else:
            self.conn = self._connect(_ro_uri(path), uri=True)
        try:
            self._probe(key, first_here)
        except WorkbenchError as e:
            self._close_conn()
            # A read-only folder with no WAL index: SQLite can read the file as immutable, which
            # is exact while no WAL content exists (there is none to miss).
            if not self.readonly or not isinstance(e, ReadOnly) or _size(path + "-wal") > 0:
                if self.readonly and isinstance(e, ReadOnly):
                    raise ReadOnly(
                        f"{path} has changes in {path}-wal that SQLite can only read with its -shm "
                        "index, which this read-only folder cannot hold: copy the journal with its -wal "
                        "to a writable folder, or open it where its folder is writable", path=path) from None
                raise
            self.conn = self._connect(_ro_uri(path, immutable=True), uri=True)
            self.immutable = True
            try:
                self._probe(key, first_here)
            except BaseException:
                self._close_conn()
                raise
        try:
            self._pragmas()
        except BaseException as e:
            self._close_conn()
            raise translate(e, path, "opening it") from None

    def _probe(self, key: str | bytes | None, first_here: bool) -> None:
        """Read the schema once: a wrong key, an encrypted file opened plain or a plain file
        opened with a key each get their own message."""
        c = self.conn
        try:
            if key is not None:
                c.execute(f"PRAGMA key = {_key_literal(key)}")
            c.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except WorkbenchError:
            raise
        except Exception as e:
            err = translate(e, self.path, "opening it")
            if key is not None and isinstance(err, NotAJournal):
                if first_here and self._plain_readable():
                    raise NotAJournal(f"{self.path} is not encrypted; open it without key= (a key only "
                                      "opens encrypted journals)", path=self.path) from None
                raise NotAJournal(f"{self.path}: wrong key (SQLCipher cannot decrypt it), or not a "
                                  "journal", path=self.path) from None
            raise err from None

    def _plain_readable(self) -> bool:
        # The same driver (SQLCipher) without a key reads a plain file; no other driver holds
        # this file in this process (checked by the caller).
        try:
            con = self.db.connect(_ro_uri(self.path), uri=True, timeout=self.timeout_s)
        except Exception:  # noqa: BLE001 (cannot tell: report the key as wrong)
            return False
        try:
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return True
        except Exception:  # noqa: BLE001
            return False
        finally:
            con.close()

    def _pragmas(self) -> None:
        """Every pragma of a journal connection, in one place."""
        c = self.conn
        c.execute(f"PRAGMA busy_timeout = {int(self.timeout_s * 1000)}")
        if self.readonly:
            return
        if self.path != ":memory:":
            if not self.encrypted and c.execute("PRAGMA page_count").fetchone()[0] == 0:
                # A new file: smaller pages mean fewer bytes per WAL frame, and a commit writes
                # whole frames (measured: the auditor runs ~12% faster at 2 KiB).
                c.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            self._set_wal()
            # Checkpoint every ~32 MiB of WAL rather than SQLite's 4 MiB: each append
            # touches two b-trees, and checkpoints (with their fsync) dominate otherwise.
            page = int(c.execute("PRAGMA page_size").fetchone()[0])
            c.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_BYTES // page}")
        c.execute(f"PRAGMA synchronous = {SYNCHRONOUS[self.durability]}")

    def _create(self, key: str | bytes | None, state_name: str, initial: str | None, digest: bytes,
                built: str) -> None:
        """Create a new journal atomically: built complete under a temporary name, then linked
        into place, so no other process ever sees a half-made (or 0-byte) journal at ``path``."""
        path = self.path
        if _size(path + "-wal") > 0:
            raise Conflict(f"{path}-wal exists but {path} does not: the leftover of a deleted journal. "
                           f"Restore {path}, or remove {path}-wal and {path}-shm to start a new one", path=path)
        tmp = f"{path}.creating-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            self.conn = self._connect(tmp)
            try:
                if key is not None:
                    self.conn.execute(f"PRAGMA key = {_key_literal(key)}")
                self._pragmas()
                self.ensure_schema(state_name, initial, digest, built)
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except Exception as e:
                raise translate(e, path, "creating it") from None
            finally:
                self._close_conn()
            try:
                os.link(tmp, path)
            except FileExistsError:
                return  # another process created it first: open theirs
            except OSError as e:
                if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                    raise translate(e, path, "creating it") from None
                # No hard links here: move it into place unless someone else created one.
                if os.path.exists(path):
                    return
                os.rename(tmp, path)
            # A new journal has no intents: a log beside it belongs to a deleted one.
            if os.path.exists(path + "-intents"):
                os.replace(path + "-intents", f"{path}-intents.orphaned-{now_ms()}")
        finally:
            for suffix in ("", "-wal", "-shm", "-journal"):
                try:
                    os.unlink(tmp + suffix)
                except OSError:
                    pass

    def _close_conn(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001 (closing after a failure: the first error matters)
                pass
            self.conn = None

    def rekey(self, new_key: str | bytes) -> None:
        """Re-encrypt an encrypted journal under a new key (SQLCipher's PRAGMA rekey)."""
        if not self.encrypted:
            raise InvalidValue("this journal is not encrypted; rekey changes the key of an encrypted one")
        self.writable()
        with self._guard:
            self.conn.execute(f"PRAGMA rekey = {_key_literal(new_key)}")

    def writable(self) -> None:
        """Refuse to write through a read-only open, before anything else happens."""
        if self.readonly:
            raise ReadOnly(f"{self.path} was opened read-only; open it without readonly=True (the CLI's "
                           "read commands never write) to change it", path=self.path)

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
        raise StorageError(f"could not switch {self.path} to WAL mode; is it on a network share?", path=self.path)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            intents = getattr(self, "intents", None)
            if intents is not None:
                intents.close()
            self._close_conn()
            self._release()

    # -- transactions ---------------------------------------------------------------------

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """One write transaction (BEGIN IMMEDIATE); a nested call is a savepoint inside it.

        Rolls back on any exception (re-raised as it is: the body translates its own faults),
        and when COMMIT itself fails; a transaction SQLite has already rolled back (after a full
        disk, say) is not rolled back twice, and the first error is the one raised."""
        with self._lock:
            self.writable()
            c = self.conn
            if self._in_tx:
                self._savepoints += 1
                name = f"lithify_{self._savepoints}"
                try:
                    c.execute(f"SAVEPOINT {name}")
                except Exception as e:
                    self._savepoints -= 1
                    raise translate(e, self.path) from None
                try:
                    yield
                except BaseException:
                    if c.in_transaction:
                        self._quietly(f"ROLLBACK TO {name}")
                        self._quietly(f"RELEASE {name}")
                    raise
                else:
                    try:
                        c.execute(f"RELEASE {name}")
                    except Exception as e:
                        raise translate(e, self.path) from None
                finally:
                    self._savepoints -= 1
                return
            try:
                c.execute("BEGIN IMMEDIATE")
            except Exception as e:
                self._end_stray_transaction()
                raise translate(e, self.path, "starting a write") from None
            self._in_tx = True
            try:
                yield
            except BaseException:
                self._in_tx = False
                self._rollback()
                raise
            self._in_tx = False
            try:
                c.execute("COMMIT")
            except Exception as e:
                self._rollback()
                raise translate(e, self.path, "committing") from None

    def _end_stray_transaction(self) -> None:
        """After a failed statement outside atomic(): SQLite may report an error for a statement
        that took effect (an interrupt or a failed checkpoint arriving after it finished); a
        BEGIN that took effect that way must not leave later writes inside an open transaction."""
        if not self._in_tx and self.conn is not None and self.conn.in_transaction:
            self._quietly("ROLLBACK")

    def _rollback(self) -> None:
        if self.conn is not None and self.conn.in_transaction:
            self._quietly("ROLLBACK")

    def _quietly(self, sql: str) -> None:
        try:
            self.conn.execute(sql)
        except Exception:  # noqa: BLE001 (cleaning up after a failure: the first error matters)
            pass

    # -- schema ---------------------------------------------------------------------------

    def ensure_schema(self, state_name: str, initial_state: str | None, digest: bytes, built: str = "") -> None:
        """Create the schema and the root branch on first open; upgrade an older file; check
        the version. Read-only opens only check."""
        with self._guard:
            c = self.conn
            rows = c.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'trigger')").fetchall()
            names = {r[0] for r in rows}
            tables = {r[0] for r in rows if r[1] == "table"}
            if tables and "meta" not in tables:
                raise NotAJournal(
                    f"{self.path} is an SQLite database but not a lithify journal (it has tables "
                    f"{sorted(tables)[:5]} and no lithify metadata); choose another path",
                    path=self.path,
                )
            if "meta" in names:
                self._check_meta()
                missing = self._missing(names)
                if self.readonly:
                    missing -= _TRIGGERS  # reads need no triggers
                if missing:
                    if self.readonly:
                        raise NotAJournal(
                            f"{self.path} was written by an older lithify-workbench and needs an upgrade "
                            f"({', '.join(sorted(missing)[:3])}); open it once writable to upgrade it",
                            path=self.path)
                    with self.atomic():
                        self._upgrade()
                return
            if self.readonly:
                raise NotAJournal(f"{self.path} is an empty SQLite database, not a lithify journal",
                                  path=self.path)
            with self.atomic():
                for statement in _statements(_SCHEMA):
                    c.execute(statement)
                meta = {
                    "application": APPLICATION,
                    "schema_version": str(SCHEMA_VERSION),
                    "state_name": state_name,
                    "created": str(now_ms()),
                }
                c.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
                c.execute(
                    f"INSERT INTO branches ({_BRANCH_COLS}) VALUES (0, 'main', NULL, 0, '{{}}', ?, NULL)",
                    (now_ms(),),
                )
                if initial_state is not None:
                    c.execute(f"INSERT INTO snapshots ({_SNAPSHOT_COLS}) VALUES (0, 0, ?, ?, ?)",
                              (initial_state, digest, built))
            self._check_meta()

    def _missing(self, names: set[str]) -> set[str]:
        missing = (_TABLES | _TRIGGERS) - names
        for table, cols in _ADDED_COLUMNS.items():
            if table in names:
                have = {r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")}
                missing |= {f"{table}.{c}" for c in cols if c not in have}
        return missing

    def _upgrade(self) -> None:
        c = self.conn
        for table, cols in _ADDED_COLUMNS.items():
            have = {r[1] for r in c.execute(f"PRAGMA table_info({table})")}
            if have:
                for name, decl in cols.items():
                    if name not in have:
                        c.execute(f"ALTER TABLE {table} ADD COLUMN {name} {decl}")
        for statement in _statements(_SCHEMA):
            c.execute(statement)

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

    def set_meta(self, key: str, value: str) -> None:
        """Record one metadata value (e.g. the state name of a journal that had none)."""
        self.writable()
        with self._guard:
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
            self.meta[key] = value

    # -- events ---------------------------------------------------------------------------

    def _bindable(self, row: EventRow, shape: str) -> tuple[Any, ...]:
        # bytearray binds directly; bytes would go through the adapter lookup (see EVENT_SHAPES)
        w = self._writer if self._writer is not None else self._writer_id()
        if shape[0] == "e":  # an effect: the key hash is a blob too
            return (*row[:3], bytearray(row[3]), bytearray(row[4]), row[5], row[6], bytearray(row[7]), *row[8:], w)
        return (*row[:3], bytearray(row[3]), bytearray(row[4]), *row[5:], w)

    def append(self, row: EventRow, shape: str) -> None:
        """Insert one event of an EVENT_SHAPES shape (committed on return unless inside atomic())."""
        lock = self._lock
        lock.acquire()
        try:
            self.conn.execute(_INSERT_SHAPE[shape], self._bindable(row, shape))
        except Exception as e:
            self._end_stray_transaction()
            err = self._append_error(row[0], row[1] - 1, e)
            if not self.landed(row[0], row[1], row[3], err):
                raise err from None
        finally:
            lock.release()

    def landed(self, branch: int, seq: int, event_hash: bytes, err: BaseException | None = None) -> bool:
        """Whether the event (branch, seq) with this hash is stored: after an error, a write may
        have committed anyway (SQLite reports a failed automatic checkpoint, or an interrupt
        that arrived after the commit, as the statement's error)."""
        if isinstance(err, BranchConflict) or not (err is None or isinstance(err, StorageError)):
            return False
        try:
            with self._guard:
                row = self.conn.execute("SELECT hash FROM events WHERE branch = ? AND seq = ?",
                                        (branch, seq)).fetchone()
        except WorkbenchError:
            return False
        return row is not None and bytes(row[0]) == bytes(event_hash)

    def append_batch(self, branch: int, first_seq: int, kind: str, parent: bytes, ts: int,
                     chunks: Iterable[tuple[Sequence[bytes], Sequence[str]]],
                     snapshots: Sequence[tuple[int, str, bytes]], built: str | None = None,
                     rows: int = 0) -> None:
        """Insert consecutive plain events of one branch in one transaction, all or nothing.

        ``chunks`` yields (hashes, payload texts) in order; ``snapshots`` (seq, state, digest)
        is read once it is exhausted, and an exception from it rolls everything back. Each
        chunk is one INSERT ... SELECT over json_each (four bound values per chunk rather than
        eight per event), run on a second thread while the next chunk is prepared: SQLite
        works without the GIL, so preparing and inserting overlap on two cores."""
        with self._lock:
            if self._in_tx:
                raise WorkbenchError("append_batch cannot join an open transaction")
            seq, previous = first_seq, parent
            try:
                with self.atomic():
                    w = self._writer_id()
                    spared = self._spare_trigger(branch, first_seq, rows)
                    worker = _ChunkWorker(self._insert_chunk)
                    try:
                        for hashes, texts in chunks:
                            if hashes:
                                worker.submit((branch, seq, kind, previous, hashes, ts, w, texts))
                                seq += len(hashes)
                                previous = hashes[-1]
                    except BaseException:
                        worker.abandon()
                        raise
                    worker.finish()  # re-raises the first error the inserts met
                    if spared:
                        self.conn.execute(_FOLLOW_HEAD)
                    if snapshots:
                        self.conn.executemany(
                            f"INSERT OR REPLACE INTO snapshots ({_SNAPSHOT_COLS}) VALUES (?, ?, ?, ?, ?)",
                            [(branch, s, text, d, built) for s, text, d in snapshots])
            except Exception as e:
                err = self._append_error(branch, first_seq - 1, e)
                if seq == first_seq or not self.landed(branch, seq - 1, previous, err):
                    raise err from None

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
                    spared = self._spare_trigger(rows[0][0][0], rows[0][0][1], len(rows))
                    for shape, run in itertools.groupby(rows, key=operator.itemgetter(1)):
                        self.conn.executemany(_INSERT_SHAPE[shape], [bind(r, shape) for r, _ in run])
                    if spared:
                        self.conn.execute(_FOLLOW_HEAD)
            except Exception as e:
                err = self._append_error(rows[0][0][0], rows[0][0][1] - 1, e)
                last = rows[-1][0]
                if not self.landed(last[0], last[1], last[3], err):
                    raise err from None

    def _spare_trigger(self, branch: int, first_seq: int, rows: int) -> bool:
        """Inside a write transaction, for a long batch of one branch's consecutive events: check
        that its first event follows the stored head (what the trigger would), then drop the
        trigger until the batch is in (the caller re-creates it before COMMIT). False for short
        batches, which keep the trigger."""
        if rows < TRIGGERLESS_BATCH:
            return False
        c = self.conn
        before = first_seq - 1
        follows = c.execute("SELECT 1 FROM events WHERE branch = ? AND seq = ?", (branch, before)).fetchone()
        if follows is None and c.execute("SELECT fork_seq FROM branches WHERE id = ?", (branch,)).fetchone() != (before,):
            raise self.db.IntegrityError(APPEND_REFUSED)
        if c.execute("SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'events_follow_head'").fetchone():
            c.execute("DROP TRIGGER events_follow_head")
            return True
        return False

    def _append_error(self, branch: int, expected: int, err: BaseException) -> BaseException:
        """What a failed append means: a stale head (BranchConflict), a translated fault, or
        (not the database's) the error itself."""
        if not (is_driver_error(err) or isinstance(err, OSError)):
            return err
        if self.readonly:
            try:
                self.writable()
            except ReadOnly as ro:
                return ro
        if isinstance(err, self.db.IntegrityError) and "event_id" in str(err):
            return Conflict("that event id was taken by another writer a moment ago; apply again: the same "
                            "delta returns the existing seq, another one is refused", branch=branch)
        if isinstance(err, self.db.IntegrityError) and ("UNIQUE" in str(err) or APPEND_REFUSED in str(err)):
            try:
                actual = self.head(branch)
                actual_seq = actual[0] if actual else self.fork_seq(branch)
            except WorkbenchError:
                actual_seq = None
            return BranchConflict(
                f"branch {branch} moved: this handle expected head {expected} but the journal's "
                f"head is {actual_seq} (another writer appended, or events this handle counted on "
                f"were never written); take a fresh handle with journal.branch({branch}) and decide again",
                branch=branch,
                expected=expected,
                actual=actual_seq,
            )
        return translate(err, self.path, f"appending to branch {branch}")

    def fork_seq(self, branch: int) -> int | None:
        """Where a branch forked (its head when it has no events of its own)."""
        with self._guard:
            row = self.conn.execute("SELECT fork_seq FROM branches WHERE id = ?", (branch,)).fetchone()
        return None if row is None else int(row[0])

    def head(self, branch: int) -> tuple[int, bytes] | None:
        """(seq, hash) of the branch's own last event, or None if it has none."""
        with self._guard:
            return self.conn.execute(
                "SELECT seq, hash FROM events WHERE branch = ? ORDER BY seq DESC LIMIT 1", (branch,)
            ).fetchone()

    def heads(self) -> dict[int, tuple[int, bytes]]:
        """Every branch's own last (seq, hash), in one query."""
        with self._guard:
            rows = self.conn.execute(
                "SELECT e.branch, e.seq, e.hash FROM events e JOIN "
                "(SELECT branch, max(seq) AS m FROM events GROUP BY branch) h "
                "ON e.branch = h.branch AND e.seq = h.m"
            ).fetchall()
        return {b: (s, h) for b, s, h in rows}

    def event_at(self, branch: int, seq: int) -> StoredEvent | None:
        """The event a branch wrote at seq itself (not inherited)."""
        with self._guard:
            return self.conn.execute(
                f"SELECT {_EVENT_COLS} FROM events WHERE branch = ? AND seq = ?", (branch, seq)
            ).fetchone()

    def events(
        self, segments: Sequence[Segment], lo: int, hi: int, state_only: bool = False
    ) -> list[StoredEvent]:
        """Events of a resolved history with lo <= seq <= hi, in seq order."""
        out: list[StoredEvent] = []
        kinds = " AND kind IN ('delta', 'compact')" if state_only else ""
        with self._guard:
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
        with self._guard:
            for branch, first, last in segments:
                hi = "" if last is None else " AND seq <= ?"
                args: list[Any] = [branch, first, ts] + ([] if last is None else [last])
                row = self.conn.execute(
                    f"SELECT max(seq) FROM events WHERE branch = ? AND seq >= ? AND ts <= ?{hi}", args
                ).fetchone()
                if row[0] is not None:
                    best = max(best, row[0])
        return best

    def world_events(self, segments: Sequence[Segment], hi: int, valid: int, known: int | None = None
                     ) -> list[tuple[int, str, str, int]]:
        """(seq, kind, payload, occurred-or-commit ms) of the state events of a resolved history
        up to seq ``hi`` that happened by ``valid`` (and were recorded by ``known``), in world
        order: by occurred time, ties by seq."""
        out: list[tuple[int, str, str, int]] = []
        rec = "" if known is None else " AND ts <= ?"
        with self._guard:
            for branch, first, last in segments:
                b = hi if last is None else min(hi, last)
                out.extend(self.conn.execute(
                    "SELECT seq, kind, payload, coalesce(occurred_at, ts) AS w FROM events WHERE branch = ? "
                    f"AND seq BETWEEN ? AND ? AND kind IN ('delta', 'compact') AND w <= ?{rec}",
                    (branch, first, b, valid) if known is None else (branch, first, b, valid, known),
                ).fetchall())
        out.sort(key=lambda r: (r[3], r[0]))
        return out

    def event_by_id(self, event_id: str) -> tuple[int, int, str, str] | None:
        """(branch, seq, kind, payload) of the event a caller id names."""
        with self._guard:
            return self.conn.execute("SELECT branch, seq, kind, payload FROM events WHERE event_id = ?",
                                     (event_id,)).fetchone()

    def put_tag(self, label: str, branch: int, seq: int) -> None:
        """Point a label at an event (moving it if it exists)."""
        with self._guard:
            self.conn.execute("INSERT OR REPLACE INTO tags VALUES (?, ?, ?, ?)", (label, branch, seq, now_ms()))

    def tag(self, label: str) -> tuple[int, int] | None:
        with self._guard:
            row = self.conn.execute("SELECT branch, seq FROM tags WHERE label = ?", (label,)).fetchone()
        return None if row is None else (row[0], row[1])

    def subscription(self, name: str) -> int:
        """A subscriber's acknowledged position, created at 0 on first use."""
        with self._guard:
            self.conn.execute(
                "INSERT OR IGNORE INTO subscriptions VALUES (?, 0, ?)", (name, now_ms())
            )
            return self.conn.execute(
                "SELECT position FROM subscriptions WHERE name = ?", (name,)
            ).fetchone()[0]

    def ack(self, name: str, position: int) -> None:
        with self._guard:
            self.conn.execute(
                "UPDATE subscriptions SET position = ?, updated = ? WHERE name = ?",
                (position, now_ms(), name),
            )

    def own_events(self, branch: int) -> Iterator[tuple[Any, ...]]:
        """A branch's own events in seq order with their derived columns, streamed (verify)."""
        with self._guard:
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
        with self._guard:
            for branch, first, last in reversed(segments):  # oldest first: newer entries win
                hi = upto if last is None else min(last, upto)
                out.update((kh, (branch, seq)) for kh, seq in self.conn.execute(
                    "SELECT key_hash, seq FROM events WHERE branch = ? AND seq >= ? AND seq <= ? "
                    "AND key_hash IS NOT NULL ORDER BY seq", (branch, first, hi)))
        return out

    def effect_payload(self, branch: int, seq: int) -> str:
        """The payload of the effect stored at (branch, seq)."""
        with self._guard:
            return self.conn.execute(  # type: ignore[no-any-return]
                "SELECT payload FROM events WHERE branch = ? AND seq = ?", (branch, seq)
            ).fetchone()[0]

    def find_effect_after(self, key_hash: bytes, branch: int, seq: int) -> tuple[int, str] | None:
        """(seq, payload) of an effect with this key on ``branch`` after ``seq`` (what another
        writer appended past a handle's head), newest first."""
        with self._guard:
            return self.conn.execute(
                "SELECT seq, payload FROM events WHERE branch = ? AND seq > ? AND key_hash = ? "
                "ORDER BY seq DESC LIMIT 1", (branch, seq, key_hash)).fetchone()

    def find_effect_indexed(self, key_hash: bytes, segments: Sequence[Segment], upto_position: int
                            ) -> tuple[int, int, str] | None:
        """(branch, seq, payload) of the newest effect with this key in a resolved history among
        the events effect_index covers (positions up to ``upto_position``)."""
        where, args = self._segment_sql(segments, "e.")
        with self._guard:
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
        def rng(col: str) -> str:
            return f"{col} >= ?" if hi is None else f"{col} >= ? AND {col} < ?"

        args: list[Any] = [lo] if hi is None else [lo, hi]
        with self._guard:
            done = self._catch_up_hash_index()
            rows = self.conn.execute(
                "SELECT h.hash, e.branch, e.seq FROM hash_index h JOIN events e ON e.position = h.position "
                f"WHERE {rng('h.hash')} ORDER BY h.position LIMIT {int(limit)}", args).fetchall()
            # Events the index does not cover yet (read-only opens never write it): scanned.
            rows += self.conn.execute(
                f"SELECT hash, branch, seq FROM events WHERE position > ? AND {rng('hash')} ORDER BY position "
                f"LIMIT {int(limit)}", [done, *args]).fetchall()
        return rows[:limit]

    def _catch_up_hash_index(self) -> int:
        # The hash index is built when hashes are looked up, not on every append: an index
        # over random 32-byte keys would cost appends a third page write per commit.
        return self._catch_up("hash_index", "hash_index_position",
                              "SELECT hash, position FROM events WHERE position > ? AND position <= ?")

    def _catch_up(self, table: str, meta_key: str, select: str) -> int:
        """Insert ``select``'s rows for the events after the position ``meta_key`` records;
        returns the position the index covers (read-only opens only read it)."""
        with self._guard:
            if self.readonly:
                row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (meta_key,)).fetchone()
                return int(row[0]) if row else 0
            with self.atomic():
                row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (meta_key,)).fetchone()
                done = int(row[0]) if row else 0
                top = self.conn.execute("SELECT coalesce(max(position), 0) FROM events").fetchone()[0]
                if top > done:
                    self.conn.execute(f"INSERT OR IGNORE INTO {table} {select}", (done, top))
                    self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (meta_key, str(top)))
                return max(top, done)  # type: ignore[no-any-return]

    def tail(self, cursor: int, limit: int | None) -> list[StoredEvent]:
        """Events with position > cursor, in position (commit) order."""
        with self._guard:
            sql = f"SELECT {_EVENT_COLS} FROM events WHERE position > ? ORDER BY position"
            if limit is not None:
                sql += f" LIMIT {int(limit)}"
            return self.conn.execute(sql, (cursor,)).fetchall()

    def observations(self, since: int = 0) -> list[tuple[int, int, int, str, float, int]]:
        """(position, branch, seq, metric, value, ts) of observe events after a position."""
        with self._guard:
            return self.conn.execute(
                "SELECT position, branch, seq, metric, value, ts FROM events "
                "WHERE position > ? AND metric IS NOT NULL ORDER BY position",
                (since,),
            ).fetchall()

    def observations_frame(self) -> Any:
        """All observations as a polars frame (position, branch, seq, metric, value, ts).

        Up to OBS_ROWS_DIRECT rows come through sqlite3. Past that, they are copied into a
        private scratch file that the ADBC SQLite driver hands to polars as Arrow columns
        (about twice as fast at 10^6 rows). ADBC never opens the journal itself: it carries its
        own copy of SQLite, and that copy's locks and closes would break this process's
        connection's locks on the file."""
        import polars as pl

        schema = {"position": pl.Int64, "branch": pl.Int64, "seq": pl.Int64, "metric": pl.Utf8,
                  "value": pl.Float64, "ts": pl.Int64}
        with self._guard:
            cur = self.conn.execute(_OBSERVATIONS)
            rows = cur.fetchmany(OBS_ROWS_DIRECT)
            if len(rows) == OBS_ROWS_DIRECT and not self.encrypted:
                cur.close()  # DETACH waits for no statement to be running
                frame = self._observations_arrow()
                if frame is not None:
                    return frame.cast(schema) if frame.width == len(schema) else pl.DataFrame(schema=schema)
                rows = self.conn.execute(_OBSERVATIONS).fetchall()
            else:
                rows += cur.fetchall()
        return pl.DataFrame(rows, schema=schema, orient="row")

    def _observations_arrow(self) -> Any:
        try:
            import adbc_driver_sqlite.dbapi as adbc
        except ImportError:
            return None
        import tempfile

        import polars as pl

        scratch = os.path.join(tempfile.gettempdir(), f"lithify-obs-{os.getpid()}-{uuid.uuid4().hex[:12]}.db")
        try:
            self.conn.execute("ATTACH DATABASE ? AS lithify_scratch", (f"file:{quote(scratch)}?mode=rwc",))
            try:
                self.conn.execute("PRAGMA lithify_scratch.journal_mode = OFF")
                self.conn.execute("PRAGMA lithify_scratch.synchronous = OFF")
                self.conn.execute("CREATE TABLE lithify_scratch.obs AS " + _OBSERVATIONS)
            finally:
                self.conn.execute("DETACH DATABASE lithify_scratch")
            con = adbc.connect(_ro_uri(scratch), autocommit=True)
            try:
                cur = con.cursor()
                cur.execute("SELECT * FROM obs")
                frame = pl.DataFrame(cur.fetch_arrow())
                cur.close()
            finally:
                con.close()
            return frame
        except Exception:  # noqa: BLE001 (no room or no ATTACH here: the sqlite3 rows are exact too)
            return None
        finally:
            for suffix in ("", "-journal"):
                try:
                    os.unlink(scratch + suffix)
                except OSError:
                    pass

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
        """(writer token, pid, source, ts, fx_ms, attempts, occurred_at, render_ms, event_id) of one
        stored event."""
        with self._guard:
            return self.conn.execute(
                "SELECT w.writer, w.pid, w.source, e.ts, e.fx_ms, e.attempts, e.occurred_at, e.render_ms, "
                "e.event_id FROM events e "
                "LEFT JOIN writers w ON w.id = e.writer WHERE e.branch = ? AND e.seq = ?", (branch, seq)
            ).fetchone()

    def vacuum(self) -> None:
        """Checkpoint the WAL into the file and rebuild it compactly."""
        with self._guard:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.conn.execute("VACUUM")
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # VACUUM wrote through the WAL

    def committed_keys(self, branch: int, key_hashes: Sequence[bytes]) -> set[bytes]:
        """Which of these effect key hashes a branch has committed itself."""
        out: set[bytes] = set()
        with self._guard:
            done = self.catch_up_effect_index()
            for i in range(0, len(key_hashes), 500):
                chunk = list(key_hashes[i : i + 500])
                marks = ",".join("?" * len(chunk))
                out.update(r[0] for r in self.conn.execute(
                    "SELECT x.key_hash FROM effect_index x JOIN events e ON e.position = x.position "
                    f"WHERE x.key_hash IN ({marks}) AND e.branch = ?", [*chunk, branch]))
                # Effects the index does not cover yet (read-only opens never write it).
                out.update(r[0] for r in self.conn.execute(
                    f"SELECT key_hash FROM events WHERE branch = ? AND position > ? AND key_hash IN ({marks})",
                    [branch, done, *chunk]))
        return out

    # -- snapshots ------------------------------------------------------------------------

    def put_snapshot(self, branch: int, seq: int, state: str, digest: bytes, built: str | None = None,
                     replace: bool = False) -> None:
        """Store a snapshot (``built``: what it was built from, see deltas.fingerprint); one that
        exists is kept unless ``replace`` (a stale one being rebuilt)."""
        verb = "REPLACE" if replace else "IGNORE"
        with self._guard:
            self.conn.execute(f"INSERT OR {verb} INTO snapshots ({_SNAPSHOT_COLS}) VALUES (?, ?, ?, ?, ?)",
                              (branch, seq, state, digest, built))

    def nearest_snapshot(self, segments: Sequence[Segment], seq: int, built: str | None = None,
                         lo: int = 0) -> tuple[int, int, str, bytes, bytes | None, str | None] | None:
        """(branch, seq, state, digest, hash of the event at that seq, built) of the latest
        snapshot at or before ``seq`` (and at or after ``lo``) in a resolved history; with
        ``built``, the latest one built from that (a legacy snapshot, built NULL, matches "")."""
        match = "" if built is None else " AND coalesce(s.built, '') = ?"
        with self._guard:
            for branch, first, last in reversed(segments):
                b = seq if last is None else min(seq, last)
                a = max(first, lo)
                if b < a:
                    continue
                row = self.conn.execute(
                    "SELECT s.branch, s.seq, s.state, s.digest, e.hash, s.built FROM snapshots s LEFT JOIN events e "
                    "ON e.branch = s.branch AND e.seq = s.seq WHERE s.branch = ? AND s.seq BETWEEN ? AND ?"
                    f"{match} ORDER BY s.seq DESC LIMIT 1",
                    (branch, a, b) if built is None else (branch, a, b, built),
                ).fetchone()
                if row is not None:
                    return row  # type: ignore[no-any-return]
        return None

    def stale_snapshots(self, segments: Sequence[Segment], lo: int, hi: int, built: str) -> list[tuple[int, int]]:
        """(branch, seq) of snapshots in (lo, hi] of a resolved history not built from ``built``."""
        out: list[tuple[int, int]] = []
        with self._guard:
            for branch, first, last in segments:
                a, b = max(first, lo + 1), hi if last is None else min(hi, last)
                if a <= b:
                    out.extend(self.conn.execute(
                        "SELECT branch, seq FROM snapshots WHERE branch = ? AND seq BETWEEN ? AND ? "
                        "AND coalesce(built, '') != ?", (branch, a, b, built)).fetchall())
        return out

    def all_stale_snapshots(self, built: str) -> list[tuple[int, int]]:
        """(branch, seq) of every snapshot not built from ``built``, in order."""
        with self._guard:
            return self.conn.execute("SELECT branch, seq FROM snapshots WHERE coalesce(built, '') != ? "
                                     "ORDER BY branch, seq", (built,)).fetchall()

    def quick_check(self) -> list[str]:
        """What SQLite's quick_check finds wrong with the file's pages (empty when sound)."""
        with self._guard:
            rows = [r[0] for r in self.conn.execute("PRAGMA quick_check").fetchall()]
        return [] if rows == ["ok"] else rows

    def snapshots(self) -> list[tuple[int, int, str, bytes]]:
        with self._guard:
            return self.conn.execute(
                "SELECT branch, seq, state, digest FROM snapshots ORDER BY branch, seq"
            ).fetchall()

    # -- branches -------------------------------------------------------------------------

    def branch_row(self, branch_id: int) -> BranchRow | None:
        with self._guard:
            return self.conn.execute(
                f"SELECT {_BRANCH_COLS} FROM branches WHERE id = ?", (branch_id,)
            ).fetchone()

    def branch_by_name(self, name: str) -> BranchRow | None:
        with self._guard:
            return self.conn.execute(
                f"SELECT {_BRANCH_COLS} FROM branches WHERE name = ?", (name,)
            ).fetchone()

    def branch_rows(self, parent: int | None = None, since_id: int = -1) -> list[BranchRow]:
        with self._guard:
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
        with self._guard:
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
        with self._guard:
            cur = self.conn.execute(
                "INSERT INTO sweeps (base, at, spec, created) VALUES (?, ?, ?, ?)",
                (base, at, spec, now_ms()),
            )
            return cur.lastrowid  # type: ignore[return-value]

    def put_run(self, branch: int, sweep: int, status: str, **fields: Any) -> None:
        """Create or update a fork's run record (status, runner, notebook, error, times)."""
        cols = ["branch", "sweep", "status", *fields]
        with self._guard:
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
        with self._guard:
            if sweep is None:
                return self.conn.execute(sql + " ORDER BY branch").fetchall()
            return self.conn.execute(sql + " WHERE sweep = ? ORDER BY branch", (sweep,)).fetchall()

    def sweep_rows(self) -> list[tuple[int, int, int, str, int]]:
        with self._guard:
            return self.conn.execute(
                "SELECT id, base, at, spec, created FROM sweeps ORDER BY id"
            ).fetchall()
