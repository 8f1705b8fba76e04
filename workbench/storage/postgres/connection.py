"""Opening a journal on a PostgreSQL server: one connection (re-established when the server
drops it outside a transaction), the session's settings, the schema, and transactions."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ...errors import Busy, InvalidValue, NotFound, ReadOnly, WorkbenchError
from ..base import Segment
from ..common import (
    APPLICATION,
    BRANCH_COLS,
    LOCK_FREE,
    POSTGRES_SCHEMA_VERSION,
    SCHEMA_VERSION,
    SNAPSHOT_COLS,
    now_ms,
    redacted,
)
from .faults import is_driver_error, not_a_journal, too_many_connections, translate
from .schema import (
    SYNCHRONOUS_COMMIT,
    blobs_sql,
    lock_key,
    parse_url,
    position_sql,
    schema_sql,
)


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise InvalidValue(
            "PostgreSQL journals need psycopg 3: pip install 'lithify-workbench[postgres]'"
        ) from None
    return psycopg


class _Guard:
    """``with storage._guard:`` holds the lock, reconnects a dropped connection outside a
    transaction, and translates psycopg's faults."""

    __slots__ = ("storage",)

    def __init__(self, storage: PgConnection) -> None:
        self.storage = storage

    def __enter__(self) -> None:
        s = self.storage
        s.lock.acquire()
        try:
            s._live()
        except BaseException:
            s.lock.release()
            raise

    def __exit__(self, kind: Any, err: BaseException | None, tb: Any) -> None:
        self.storage.lock.release()
        if err is not None and not isinstance(err, WorkbenchError) and is_driver_error(err):
            raise translate(err, self.storage.where) from err


class PgConnection:
    """One connection to the schema of a journal on a PostgreSQL server: opening (and creating)
    the journal, the session's settings, ``atomic()``, locks and upkeep; the backend's queries
    build on it."""

    encrypted = False

    def __init__(
        self,
        url: str,
        durability: str,
        busy_timeout_ms: int = 30_000,
        source: str | None = None,
        key: str | bytes | None = None,
        *,
        readonly: bool = False,
        create: bool | None = None,
        schema: tuple[str, str | None, bytes, str] | None = None,
    ) -> None:
        self.pg = _psycopg()
        if key is not None:
            raise InvalidValue(
                "key= encrypts SQLite files; a PostgreSQL journal is protected by the server "
                "(TLS with sslmode=verify-full in the URL, roles, encrypted storage): drop key="
            )
        self.location = url  # what another process opens (a password included)
        self.conninfo, self.journal = parse_url(url)
        self.path = self.where = redacted(url)  # what is shown
        self.durability = durability
        self.readonly = readonly
        self.source = source
        self.timeout_ms = busy_timeout_ms
        self.lock = threading.RLock()
        self._guard = _Guard(self)
        self._depth = 0
        self._writer: int | None = None
        self._closed = False
        self.backend = ""
        self.conn: Any = None
        self.meta: dict[str, str] = {}
        self._segment_cache: dict[tuple[str, tuple[Segment, ...]], tuple[str, list[Any]]] = {}
        self._connect()
        try:
            self._ensure(create, schema)
        except BaseException:
            self.close()
            raise

    def _connect(self) -> None:
        conn = self._dial()
        try:
            conn.execute(f'SET search_path TO "{self.journal}"')
            conn.execute(f"SET synchronous_commit TO {SYNCHRONOUS_COMMIT[self.durability]}")
            conn.execute(f"SET lock_timeout TO {int(self.timeout_ms)}")
            if self.readonly:
                conn.execute("SET default_transaction_read_only TO on")
            row = conn.execute(
                "SELECT pg_backend_pid(), backend_start::text FROM pg_stat_activity "
                "WHERE pid = pg_backend_pid()"
            ).fetchone()
        except Exception as e:
            conn.close()
            raise translate(e, self.where, "connecting") from None
        previous, self.backend = self.backend, f"{row[0]}|{row[1]}" if row else ""
        self.conn = conn
        if previous and not self.readonly:
            # a reconnect: this process's running announcements now live on this connection
            try:
                conn.execute(
                    "UPDATE intents SET backend = %s WHERE backend = %s",
                    (self.backend, previous),
                )
            except Exception:  # noqa: BLE001 (no intents table yet: nothing announced)
                pass

    def _dial(self) -> Any:
        """A new connection. A server (or PgBouncer) at its connection limit is asked again,
        backing off, until the journal's timeout; then ``Busy`` says which limit to raise."""
        deadline = time.monotonic() + self.timeout_ms / 1000
        pause = 0.05
        while True:
            try:
                return self.pg.connect(self.conninfo, autocommit=True, connect_timeout=10)
            except Exception as e:
                if not too_many_connections(e):
                    raise translate(e, self.where, "connecting") from None
                if time.monotonic() + pause > deadline:
                    raise Busy(
                        f"{self.where}: the server refused a connection for "
                        f"{self.timeout_ms / 1000:g} s, at its connection limit ({e}); raise "
                        "max_connections on the server (or max_client_conn and the pool sizes "
                        "of a PgBouncer in front), run fewer workers at once, or open with a "
                        "longer timeout; each process holds one connection per journal",
                        path=self.where,
                    ) from None
                time.sleep(pause)
                pause = min(1.0, pause * 2)

    def _live(self) -> Any:
        """The connection, re-established if the server dropped it (outside a transaction)."""
        if self._closed:
            raise WorkbenchError("this journal is closed; open it again with Journal.open(url)")
        if self.conn.closed or self.conn.broken:
            if self._depth:
                raise translate(
                    self.pg.OperationalError("the connection was lost in a transaction"),
                    self.where,
                )
            self._connect()
        return self.conn

    def _exec(self, sql: str, args: Sequence[Any] = ()) -> Any:
        return self._live().execute(sql, args)

    def _read(self, sql: str, args: Sequence[Any], many: bool) -> Any:
        """Run a query; a connection the server dropped since the last call is re-established
        and the query run once more (outside a transaction only: reads are safe to repeat)."""
        with self._guard:
            try:
                cur = self.conn.execute(sql, args)
            except self.pg.OperationalError:
                if self._depth or not (self.conn.closed or self.conn.broken):
                    raise
                self._connect()
                cur = self.conn.execute(sql, args)
            return cur.fetchall() if many else cur.fetchone()

    def _one(self, sql: str, args: Sequence[Any] = ()) -> Any:
        return self._read(sql, args, many=False)

    def _all(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        rows: list[Any] = self._read(sql, args, many=True)
        return rows

    def _ensure(
        self, create: bool | None, schema: tuple[str, str | None, bytes, str] | None
    ) -> None:
        s = self.journal
        with self._guard:
            tables = [
                r[0]
                for r in self.conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                    (s,),
                )
            ]
            if "meta" not in tables:
                if tables:
                    raise not_a_journal(self.where, tables)
                if self.readonly or create is False:
                    raise NotFound(
                        f"no journal {s!r} in {self.where}; check journal=NAME (or create it by "
                        "opening it writable)",
                        path=self.path,
                    )
                self._create(schema)
            meta = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("application") != APPLICATION:
            raise not_a_journal(self.where, tables)
        version = int(meta.get("schema_version", "0"))
        if version > SCHEMA_VERSION:
            raise InvalidValue(
                f"{self.where} was written by a newer lithify-workbench (schema {version}); "
                "upgrade lithify-workbench to open it"
            )
        if version < LOCK_FREE and not self.readonly:
            version = self._upgrade_positions()
            meta["schema_version"] = str(version)
        if "blobs" not in tables and not self.readonly:
            self._add_blobs()
        self.meta = meta
        # reads that follow positions stop at the final ones (schema 2; see schema.py)
        self.settled_sql = "position <= {schema}safe_position()" if version >= LOCK_FREE else "TRUE"
        self.settled = self.settled_sql.format(schema="")

    def _add_blobs(self) -> None:
        """Give a journal made before artifacts its blobs table and annotations index (one
        process at a time; the statements are idempotent)."""
        with self._guard, self.conn.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(self.journal) + 1,))
            for statement in blobs_sql(self.journal):
                self.conn.execute(statement)

    def _upgrade_positions(self) -> int:
        """Number new events without the journal-wide lock (schema 1 to 2): positions go on
        above every stored one. One process upgrades; the others find it done."""
        s = self.journal
        with self._guard, self.conn.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(s) + 1,))
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'")
            found = row.fetchone()
            if found is not None and int(found[0]) >= LOCK_FREE:
                return int(found[0])
            self.conn.execute("LOCK TABLE events IN EXCLUSIVE MODE")  # the last old writers
            top = self.conn.execute("SELECT coalesce(max(position), 0) FROM events").fetchone()
            for statement in position_sql(s, int(top[0]) + 1):
                self.conn.execute(statement)
            self.conn.execute(
                "UPDATE meta SET value = %s WHERE key = 'schema_version'", (str(LOCK_FREE),)
            )
        return LOCK_FREE

    def _create(self, schema: tuple[str, str | None, bytes, str] | None) -> None:
        state_name, initial, digest, built = schema if schema is not None else ("", None, b"", "")
        s = self.journal
        with self.conn.transaction():
            # one creator at a time: another process may be creating the same journal
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(s) + 1,))
            done = self.conn.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND "
                "table_name = 'meta'",
                (s,),
            ).fetchone()
            if done:
                return
            for statement in schema_sql(s) + position_sql(s, 0):
                self.conn.execute(statement)
            meta = {
                "application": APPLICATION,
                "schema_version": str(POSTGRES_SCHEMA_VERSION),
                "state_name": state_name,
                "created": str(now_ms()),
            }
            with self.conn.cursor() as cur:
                cur.executemany("INSERT INTO meta VALUES (%s, %s)", list(meta.items()))
            self.conn.execute(
                f"INSERT INTO branches ({BRANCH_COLS}) VALUES (0, 'main', NULL, 0, '{{}}', %s, "
                "NULL)",
                (now_ms(),),
            )
            if initial is not None:
                self.conn.execute(
                    f"INSERT INTO snapshots ({SNAPSHOT_COLS}) VALUES (0, 0, %s, %s, %s)",
                    (initial, digest, built),
                )

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self.lock:
            if self._closed:
                return
            self._closed = True
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001 (closing: nothing left to save)
                pass

    @property
    def in_transaction(self) -> bool:
        """Whether an ``atomic()`` block is open."""
        return self._depth > 0

    def writable(self) -> None:
        """Raise ReadOnly when opened read-only, before anything else happens."""
        if self.readonly:
            raise ReadOnly(
                f"{self.where} was opened read-only; open it without readonly=True to change it",
                path=self.path,
            )

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """One transaction; nested calls are savepoints. Rolls back on any exception."""
        with self.lock:
            self.writable()
            conn = self._live()
            if not self._depth and self._writer is None:
                self._writer_id()  # registered on its own: a rolled-back batch keeps it
            self._depth += 1
            raised: BaseException | None = None
            try:
                with conn.transaction():
                    try:
                        yield
                    except BaseException as e:  # the body's own error, re-raised as it is
                        raised = e
                        raise
            except Exception as e:
                if e is raised or not is_driver_error(e):
                    raise
                raise translate(e, self.where, "committing") from None
            finally:
                self._depth -= 1

    @contextmanager
    def exclusive(self, name: str) -> Iterator[None]:
        """Hold the journal-wide lock ``name`` (a session advisory lock: other processes and
        machines asking for it wait, however long)."""
        key = lock_key(f"{self.journal}/{name}")
        with self._guard:
            self.conn.execute("SET lock_timeout TO 0")
            try:
                self.conn.execute("SELECT pg_advisory_lock(%s)", (key,))
            finally:
                self.conn.execute(f"SET lock_timeout TO {int(self.timeout_ms)}")
        try:
            yield
        finally:
            with self.lock:
                if not (self.conn.closed or self.conn.broken):
                    try:
                        self.conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
                    except Exception:  # noqa: BLE001 (the session ends: so does its lock)
                        pass

    def set_meta(self, key: str, value: str) -> None:
        """Record one metadata value."""
        self.writable()
        with self._guard:
            self.conn.execute(
                "INSERT INTO meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = "
                "excluded.value",
                (key, value),
            )
            self.meta[key] = value

    def rekey(self, new_key: str | bytes) -> None:
        """PostgreSQL journals are not encrypted by lithify (see ``__init__``)."""
        raise InvalidValue(
            "rekey changes the key of an encrypted SQLite journal; a PostgreSQL journal's "
            "protection is the server's (roles, TLS, encrypted storage)"
        )

    def vacuum(self) -> None:
        """VACUUM (ANALYZE) the journal's tables."""
        self.writable()
        with self._guard:
            self.conn.execute(
                "VACUUM (ANALYZE) events, snapshots, branches, intents, fork_runs, sweeps"
            )

    def quick_check(self) -> list[str]:
        """Nothing: the server checks its own pages (enable data checksums with initdb -k);
        ``verify`` still checks every hash, chain and snapshot of the journal."""
        with self._guard:
            self.conn.execute("SELECT 1")
        return []

    def size_bytes(self) -> int:
        """Bytes the journal's tables and indexes take on the server."""
        row = self._one(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN "
            "pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'",
            (self.journal,),
        )
        return int(row[0])

    def _writer_id(self) -> int:
        if self._writer is None:
            token = uuid.uuid4().hex[:16]
            row = self._exec(
                "INSERT INTO writers (writer, pid, source, started) VALUES (%s, %s, %s, %s) "
                "RETURNING id",
                (token, os.getpid(), self.source, now_ms()),
            ).fetchone()
            self._writer = int(row[0])
        return self._writer
