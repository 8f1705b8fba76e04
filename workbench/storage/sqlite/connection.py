"""Opening a journal file: one connection, every pragma, the schema, and transactions.

A journal file is only ever opened through SQLite, and by one driver at a time in a process
(``files``: which files this process holds, and what can be read of one without a connection).

A read leaves nothing beside a journal whose WAL holds nothing: SQLite would create a ``-wal``
and a ``-shm`` for a read-only connection and could not remove them (only a writer's last close
does), and when another user ran the read, those files, owned by that user, block the owner's
next write. Such a file is read as it stands (``immutable``), watched: once a WAL appears or the
file changes, the connection is replaced by an ordinary read-only one, which uses the files the
writer made.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...errors import (
    Busy,
    Conflict,
    Corrupt,
    InvalidValue,
    NotAJournal,
    NotFound,
    ReadOnly,
    StorageError,
    WorkbenchError,
)
from ..base import Segment
from ..common import APPLICATION, BRANCH_COLS, SCHEMA_VERSION, SNAPSHOT_COLS, now_ms
from . import files
from . import schema as sch
from .faults import Guard, translate


def _driver(key: Any) -> Any:
    if key is None:
        return sqlite3
    try:
        import sqlcipher3.dbapi2 as sqlcipher
    except ImportError:
        raise InvalidValue(
            "encrypted journals need SQLCipher: pip install 'lithify-workbench[encryption]'"
        ) from None
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


class Connection:
    """One SQLite connection to a journal file (or memory): opening and creating the file, the
    pragmas, the schema and ``atomic()``; the backend's queries build on it.

    ``readonly`` opens the file read-only (``mode=ro``; ``immutable`` where SQLite cannot
    share the WAL index, in a read-only folder with no WAL content): nothing is written, not
    even an index. ``create``: None creates a missing file (never an existing empty one),
    True also initializes an existing empty file, False requires a journal to exist."""

    def __init__(
        self,
        path: str,
        durability: str,
        busy_timeout_ms: int = 30_000,
        source: str | None = None,
        key: str | bytes | None = None,
        *,
        readonly: bool = False,
        create: bool | None = None,
        schema: tuple[str, str | None, bytes, str] | None = None,
    ) -> None:
        self.path = self.location = path
        self.source = source
        self.readonly = readonly
        self._unwritable = False  # opened for writing, but the file's permissions refuse it
        self.immutable = False
        # A read-only open of a file with an empty WAL: the file's stamp when it was opened
        # (immutable), checked around every query (see Guard); None otherwise.
        self._watch: tuple[int, int, int, int] | None = None
        self._watch_depth = 0
        self._retired: list[Any] = []  # replaced connections: a stream may still read them
        self._writer: int | None = None
        self._ready = False  # the schema is complete: the writers table exists
        self.durability = durability
        self.lock = threading.RLock()
        self._guard = Guard(self)
        self._in_tx = False
        self._savepoints = 0
        self._has_json_each: bool | None = None
        self._where_cache: dict[tuple[str, tuple[bool, ...]], str] = {}
        self._segment_cache: dict[tuple[str, tuple[Segment, ...]], tuple[str, list[Any]]] = {}
        self.encrypted = key is not None
        self._key = key
        self.driver = _driver(key)  # sqlite3, or sqlcipher3's DB-API module for an encrypted file
        self.timeout_s = busy_timeout_ms / 1000
        self._fid: tuple[int, int] | None = None
        self.conn: Any = None
        self.meta: dict[str, str] = {}
        state_name, initial, digest, built = schema if schema is not None else ("", None, b"", "")
        if path == ":memory:":
            if key is not None:
                raise InvalidValue("in-memory journals are not encrypted; open a file to use key=")
            self.conn = self._connect(path)
            self._pragmas()
            self.ensure_schema(state_name, initial, digest, built)
            return
        fid = files.file_id(path)
        if fid is None:
            if readonly or create is False:
                raise NotFound(
                    f"no journal at {path}; check the path (or create one by opening it writable)",
                    path=path,
                )
            self._create(key, state_name, initial, digest, built)
            fid = files.file_id(path)
        elif files.is_empty(path) and create is not True:
            raise NotAJournal(
                f"{path} is empty (0 bytes): truncated? Restore it from a copy; to start a new "
                f"journal in this file, pass create=True (the CLI's `lithify run` does)",
                path=path,
            )
        if fid is None:
            raise NotFound(f"{path} disappeared while it was being opened", path=path)
        if not readonly and not os.access(path, os.W_OK):
            # A file this user may not write: open it for reading, so a write is refused
            # before SQLite leaves a -wal and -shm it cannot use beside it.
            self.readonly = True
            self._unwritable = True
        first_here = self._claim(fid, key)
        try:
            self._open_file(key, first_here)
            self.ensure_schema(state_name, initial, digest, built)
        except BaseException as e:
            self._close_conn()
            self._release()
            cut = files.truncation(path) if isinstance(e, Corrupt) and key is None else None
            if cut is not None:
                raise Corrupt(
                    f"{path}: {cut}; restore it from a copy", path=path, damage=cut
                ) from None
            raise

    def _claim(self, fid: tuple[int, int], key: str | bytes | None) -> bool:
        """Register this open of the file for its driver (see ``files.claim``)."""
        first = files.claim(fid, self.driver.__name__, self.path, key is not None)
        self._fid = fid
        return first

    def _release(self) -> None:
        if self._fid is not None:
            files.release(self._fid)
            self._fid = None

    def _connect(self, target: str, uri: bool = False) -> Any:
        try:
            con = self.driver.connect(
                target,
                isolation_level=None,
                check_same_thread=False,
                timeout=self.timeout_s,
                uri=uri,
            )
            # compressed payloads are read through it (schema.payload_sql)
            con.create_function("sqlar_uncompress", 2, sch.sqlar_uncompress, deterministic=True)
            return con
        except Exception as e:
            raise translate(e, self.path, "opening it") from None

    def _open_file(self, key: str | bytes | None, first_here: bool) -> None:
        """Connect to an existing file, check it is a journal this key opens, set the pragmas."""
        path = self.path
        if not self.readonly:
            self.conn = self._connect(path)
        else:
            stamp = files.stamp(path)
            uri, self.immutable = files.read_uri(path)
            self._watch = stamp if self.immutable else None
            self.conn = self._connect(uri, uri=True)
        try:
            self._probe(key, first_here)
        except WorkbenchError as e:
            self._close_conn()
            if self.readonly and isinstance(e, ReadOnly) and files.size_of(path + "-wal") > 0:
                raise ReadOnly(
                    f"{path} has changes in {path}-wal that SQLite can only read with its -shm "
                    "index, which this read-only folder cannot hold: copy the journal with "
                    "its -wal to a writable folder, or open it where its folder is writable",
                    path=path,
                ) from None
            raise
        try:
            self._pragmas()
        except BaseException as e:
            self._close_conn()
            raise translate(e, path, "opening it") from None
        if self._watch is not None:
            self.recheck()  # a writer may have arrived while this opened

    def recheck(self) -> None:
        """Before a query on a watched read-only open: replace an immutable connection once a
        WAL appears or the file changed (it would not see the change), by the kind of
        connection the file needs now."""
        stamp = files.stamp(self.path)
        if files.size_of(self.path + "-wal") == 0 and stamp == self._watch:
            return
        key = self._key
        old = self.conn
        uri, immutable = files.read_uri(self.path)
        self.conn = self._connect(uri, uri=True)
        try:
            self._probe(key, False)
            self._pragmas()
            sch.shadow_missing(self.conn)
        except BaseException as e:
            self._close_conn()
            self.conn = old
            raise translate(e, self.path, "reading it") from None
        if stamp == self._watch:
            self._retired.append(old)  # its snapshot is still whole: a stream may go on reading
        else:
            old.close()  # the file changed under it: a stream on it fails (Busy), never tears
        self.immutable = immutable
        self._watch = stamp if immutable else None

    def unchanged(self) -> None:
        """After a query on a watched read-only open: Busy if the file changed meanwhile (a
        writer folded its WAL into it while the query read it), so no torn result is used."""
        if files.stamp(self.path) != self._watch:
            self._watch = (0, 0, 0, 0)  # the next query reconnects
            raise Busy(
                f"{self.path} changed while it was being read (another process wrote to it); "
                "read again",
                path=self.path,
            )

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
                    raise NotAJournal(
                        f"{self.path} is not encrypted; open it without key= (a key only "
                        "opens encrypted journals)",
                        path=self.path,
                    ) from None
                raise NotAJournal(
                    f"{self.path}: wrong key (SQLCipher cannot decrypt it), or not a journal",
                    path=self.path,
                ) from None
            raise err from None

    def _plain_readable(self) -> bool:
        # The same driver (SQLCipher) without a key reads a plain file; no other driver holds
        # this file in this process (checked by the caller).
        try:
            uri = files.read_uri(self.path)[0]
            con = self.driver.connect(uri, uri=True, timeout=self.timeout_s)
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
        # The schema's one foreign key (a fork's parent is a branch) holds here as on the
        # server: SQLite enforces none unless asked, on every connection.
        c.execute("PRAGMA foreign_keys = ON")
        if self.readonly:
            return
        if self.path != ":memory:":
            if not self.encrypted and c.execute("PRAGMA page_count").fetchone()[0] == 0:
                # A new file: smaller pages mean fewer bytes per WAL frame, and a commit writes
                # whole frames (measured: the auditor runs ~12% faster at 2 KiB).
                c.execute(f"PRAGMA page_size = {sch.PAGE_SIZE}")
            self._set_wal()
            # Checkpoint every ~32 MiB of WAL rather than SQLite's 4 MiB: each append
            # touches two b-trees, and checkpoints (with their fsync) dominate otherwise.
            page = int(c.execute("PRAGMA page_size").fetchone()[0])
            c.execute(f"PRAGMA wal_autocheckpoint = {sch.WAL_AUTOCHECKPOINT_BYTES // page}")
        c.execute(f"PRAGMA synchronous = {sch.SYNCHRONOUS[self.durability]}")

    def _create(
        self,
        key: str | bytes | None,
        state_name: str,
        initial: str | None,
        digest: bytes,
        built: str,
    ) -> None:
        """Create a new journal atomically: built complete under a temporary name, then linked
        into place, so no other process ever sees a half-made (or 0-byte) journal at ``path``."""
        path = self.path
        if files.size_of(path + "-wal") > 0:
            raise Conflict(
                f"{path}-wal exists but {path} does not: the leftover of a deleted journal. "
                f"Restore {path}, or remove {path}-wal and {path}-shm to start a new one",
                path=path,
            )
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
            raise InvalidValue(
                "this journal is not encrypted; rekey changes the key of an encrypted one"
            )
        self.writable()
        with self._guard:
            self.conn.execute(f"PRAGMA rekey = {_key_literal(new_key)}")

    def truncation(self) -> str | None:
        """How much of this journal's file is missing, if it is truncated (see ``truncation``)."""
        if self.path == ":memory:":
            return None
        try:
            with self._guard:
                page = int(self.conn.execute("PRAGMA page_size").fetchone()[0])
                recorded = int(self.conn.execute("PRAGMA page_count").fetchone()[0])
        except WorkbenchError:
            return None
        return files.missing_pages(self.path, page, recorded)

    @property
    def in_transaction(self) -> bool:
        """Whether an ``atomic()`` block is open on this connection."""
        return self._in_tx

    def writable(self) -> None:
        """Refuse to write through a read-only open, before anything else happens."""
        if self._unwritable:
            raise ReadOnly(
                f"{self.path} is a read-only file (its permissions): reads work; to change it, "
                f"make it writable (chmod u+w {self.path}) or copy it",
                path=self.path,
            )
        if self.readonly:
            raise ReadOnly(
                f"{self.path} was opened read-only; open it without readonly=True (the CLI's "
                "read commands never write) to change it",
                path=self.path,
            )

    def _set_wal(self) -> None:
        # Changing the journal mode needs a moment with no other connection mid-transaction;
        # the busy timeout does not cover it, so retry briefly when many processes open at once.
        for attempt in range(200):
            try:
                mode = self.conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if mode.lower() == "wal":
                    return
            except self.driver.OperationalError as e:
                if "locked" not in str(e) and "busy" not in str(e):
                    raise
            time.sleep(0.005 * (1 + attempt % 10))
        raise StorageError(
            f"could not switch {self.path} to WAL mode; is it on a network share?", path=self.path
        )

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self.lock:
            intents = getattr(self, "intents", None)
            if intents is not None:
                intents.close()
            self._close_conn()
            for con in self._retired:
                con.close()
            self._retired.clear()
            self._release()

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """One write transaction (BEGIN IMMEDIATE); a nested call is a savepoint inside it.

        Rolls back on any exception (re-raised as it is: the body translates its own faults),
        and when COMMIT itself fails; a transaction SQLite has already rolled back (after a full
        disk, say) is not rolled back twice, and the first error is the one raised."""
        with self.lock:
            self.writable()
            c = self.conn
            if c is None:
                raise WorkbenchError(
                    "this journal is closed; open it again with Journal.open(path)"
                )
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
            if self._writer is None and self._ready:
                # this process's writer row, committed on its own: a rolled-back first write
                # must not take it along (the next write would reuse its id)
                register = getattr(self, "_writer_id", None)
                if register is not None:
                    try:
                        register()
                    except Exception as e:
                        self._end_stray_transaction()
                        raise translate(e, self.path, "starting a write") from None
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

    @contextmanager
    def exclusive(self, name: str) -> Iterator[None]:
        """Hold the lock ``name`` of this journal file (an flock on ``<path>-<name>.lock``;
        other processes asking for it wait)."""
        if self.path == ":memory:":
            yield
            return
        import fcntl

        try:
            fd = os.open(f"{self.path}-{name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise translate(e, self.path, f"taking the {name} lock") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

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

    def ensure_schema(
        self, state_name: str, initial_state: str | None, digest: bytes, built: str = ""
    ) -> None:
        """Create the schema and the root branch on first open; upgrade an older file; check
        the version. Read-only opens only check."""
        with self._guard:
            c = self.conn
            rows = c.execute(
                "SELECT name, type FROM sqlite_master WHERE type IN ('table', 'trigger')"
            ).fetchall()
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
                missing = sch.missing(c, names)
                if self.readonly:
                    missing -= sch.TRIGGERS | sch.READER_OPTIONAL | sch.READER_OPTIONAL_TABLES
                    sch.shadow_missing(c)
                if missing:
                    if self.readonly:
                        raise NotAJournal(
                            f"{self.path} was written by an older lithify-workbench and needs an "
                            f"upgrade ({', '.join(sorted(missing)[:3])}); open it once writable to "
                            f"upgrade it",
                            path=self.path,
                        )
                    with self.atomic():
                        sch.upgrade(c)
                self._ready = True
                return
            if self.readonly:
                raise NotAJournal(
                    f"{self.path} is an empty SQLite database, not a lithify journal",
                    path=self.path,
                )
            with self.atomic():
                for statement in sch.statements(sch.SCHEMA):
                    c.execute(statement)
                meta = {
                    "application": APPLICATION,
                    "schema_version": str(SCHEMA_VERSION),
                    "state_name": state_name,
                    "created": str(now_ms()),
                }
                c.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
                c.execute(
                    f"INSERT INTO branches ({BRANCH_COLS}) VALUES (0, 'main', NULL, 0, "
                    f"'{{}}', ?, NULL)",
                    (now_ms(),),
                )
                if initial_state is not None:
                    c.execute(
                        f"INSERT INTO snapshots ({SNAPSHOT_COLS}) VALUES (0, 0, ?, ?, ?)",
                        (initial_state, digest, built),
                    )
            self._check_meta()
            self._ready = True

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
