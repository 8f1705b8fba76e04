"""The PostgreSQL backend: a journal in one schema of a PostgreSQL database, shared by every
process and machine that reaches the server (psycopg 3; ``pip install
'lithify-workbench[postgres]'``).

Same rows, same hashes and same refusals as the SQLite file (the contract tests run on both);
what differs is where the guarantees come from: a unique ``(branch, seq)`` constraint and a
trigger refuse a stale or gapped append from any machine, effect intents live in a table (a
sidecar file cannot be shared between machines), and each durability mode is a
``synchronous_commit`` setting (``pgschema.SYNCHRONOUS_COMMIT``; the README says what each
survives). A dropped connection is re-established on the next call outside a transaction.
"""

from __future__ import annotations

import itertools
import operator
import os
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..errors import BranchConflict, InvalidValue, NotFound, ReadOnly, WorkbenchError
from .base import (
    EVENT_SHAPES,
    FULL_EVENT_COLS,
    BranchRow,
    EffectHit,
    EventRow,
    FullEvent,
    HashHit,
    Head,
    IdentifiedEvent,
    Observation,
    Provenance,
    RunRow,
    SearchHit,
    Segment,
    SnapshotRecord,
    SnapshotRow,
    StateEvent,
    StoredEvent,
    SweepRow,
    VerifyEvent,
    branch_moved,
    check_run_fields,
    event_id_taken,
    in_segments,
    name_taken,
    observation_schema,
)
from .connection import now_ms
from .intents import (
    announcement_live,
    end_announcement,
    new_announcement,
    process_token,
)
from .pgschema import (
    APPEND_REFUSED,
    SYNCHRONOUS_COMMIT,
    is_driver_error,
    lock_key,
    not_a_journal,
    parse_url,
    redacted,
    schema_sql,
    translate,
)
from .schema import APPLICATION, SCHEMA_VERSION, TRIGGERLESS_BATCH

_EVENT_COLS = "position, branch, seq, kind, hash, parent_hash, ts, payload"
_BRANCH_COLS = "id, name, parent, fork_seq, params, created, sweep"
_INSERT = {
    shape: (
        "INSERT INTO events (branch, seq, kind, hash, parent_hash, ts, payload, {}writer) "
        "VALUES ({}%s)"
    ).format("".join(c + ", " for c in extra), "%s, " * (7 + len(extra)))
    for shape, extra in EVENT_SHAPES.items()
}
_OBSERVATIONS = (
    "SELECT position, branch, seq, metric, value, ts FROM {schema}events WHERE metric IS NOT NULL "
    "ORDER BY position"
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

    def __init__(self, storage: PostgresStorage) -> None:
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


class PostgresStorage:
    """A journal in schema ``journal`` (the URL's ``journal=NAME``, default "main") of a
    PostgreSQL database: the PostgreSQL implementation of ``Storage``."""

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
        self.intents: Any = PgIntents(self)

    # -- the connection -----------------------------------------------------------------------

    def _connect(self) -> None:
        try:
            conn = self.pg.connect(self.conninfo, autocommit=True, connect_timeout=10)
        except Exception as e:
            raise translate(e, self.where, "connecting") from None
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
        return self._read(sql, args, many=True)

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
        self.meta = meta

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
            for statement in schema_sql(s):
                self.conn.execute(statement)
            meta = {
                "application": APPLICATION,
                "schema_version": str(SCHEMA_VERSION),
                "state_name": state_name,
                "created": str(now_ms()),
            }
            with self.conn.cursor() as cur:
                cur.executemany("INSERT INTO meta VALUES (%s, %s)", list(meta.items()))
            self.conn.execute(
                f"INSERT INTO branches ({_BRANCH_COLS}) VALUES (0, 'main', NULL, 0, '{{}}', %s, "
                "NULL)",
                (now_ms(),),
            )
            if initial is not None:
                self.conn.execute(
                    "INSERT INTO snapshots VALUES (0, 0, %s, %s, %s)", (initial, digest, built)
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

    # -- events -------------------------------------------------------------------------------

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

    def append(self, row: EventRow, shape: str) -> None:
        """Insert one event; BranchConflict unless it follows the branch's stored head."""
        with self.lock:
            try:
                self.writable()
                w = self._writer_id()
                self._exec(_INSERT[shape], (*row, w))
            except Exception as e:
                err = self._append_error(row[0], row[1] - 1, e)
                if not self.landed(row[0], row[1], row[3], err):
                    raise err from None

    def append_many(self, rows: Sequence[tuple[EventRow, str]]) -> None:
        """Insert consecutive events of one branch, all or nothing, in order."""
        first = rows[0][0]
        with self.lock:
            try:
                with self.atomic():
                    w = self._writer_id()
                    trusted = self._trust(
                        first[0], first[1], [r[1] for r, _ in rows], [r[0] for r, _ in rows]
                    )
                    with self.conn.cursor() as cur:
                        for shape, run in itertools.groupby(rows, key=operator.itemgetter(1)):
                            cur.executemany(_INSERT[shape], [(*r, w) for r, _ in run])
                    if trusted:
                        self._untrust()
            except Exception as e:
                err = self._append_error(first[0], first[1] - 1, e)
                last = rows[-1][0]
                if not self.landed(last[0], last[1], last[3], err):
                    raise err from None

    def _trust(
        self, branch: int, first_seq: int, seqs: Sequence[int], branches: Sequence[int]
    ) -> bool:
        """For a long batch of one branch's consecutive events, inside its transaction: check
        once that it follows the stored head and spare its rows the trigger (the unique key
        still refuses a concurrent writer's event at any of its seqs)."""
        if len(seqs) < TRIGGERLESS_BATCH:
            return False
        if any(b != branch for b in branches) or list(seqs) != list(
            range(first_seq, first_seq + len(seqs))
        ):
            return False  # not one branch's consecutive events: every row is checked
        self._take_branch(branch, first_seq)
        return True

    def _untrust(self) -> None:
        """End a batch's trust (the rest of an enclosing transaction is checked again)."""
        self.conn.execute("SELECT set_config('lithify.trusted_branch', '', true)")

    def _take_branch(self, branch: int, first_seq: int) -> None:
        """Inside a transaction: take the journal's write lock (what the trigger would, so
        positions still follow commit order), check that ``first_seq`` follows the branch's
        stored head, and mark the branch trusted for this transaction only."""
        self.conn.execute(
            "SELECT pg_advisory_xact_lock(%s), set_config('lithify.trusted_branch', %s, true)",
            (lock_key(self.journal), str(branch)),
        )
        self._check_follows(branch, first_seq)

    def _check_follows(self, branch: int, first_seq: int) -> None:
        before = first_seq - 1
        ok = self.conn.execute(
            "SELECT EXISTS (SELECT 1 FROM events WHERE branch = %s AND seq = %s) OR EXISTS "
            "(SELECT 1 FROM branches WHERE id = %s AND fork_seq = %s)",
            (branch, before, branch, before),
        ).fetchone()[0]
        if not ok:
            raise self.pg.errors.IntegrityConstraintViolation(APPEND_REFUSED)

    def append_batch(
        self,
        branch: int,
        first_seq: int,
        kind: str,
        parent: bytes,
        ts: int,
        chunks: Iterable[tuple[Sequence[bytes], Sequence[str]]],
        snapshots: Sequence[tuple[int, str, bytes]],
        built: str | None = None,
        rows: int = 0,
    ) -> None:
        """Insert consecutive plain events (and their snapshots) of one branch in one
        transaction with COPY (binary), all or nothing."""
        seq, previous = first_seq, parent
        with self.lock:
            if self._depth:
                raise WorkbenchError("append_batch cannot join an open transaction")
            try:
                with self.atomic():
                    w = self._writer_id()
                    self._take_branch(branch, first_seq)
                    with self.conn.cursor() as cur:
                        with cur.copy(
                            "COPY events (branch, seq, kind, hash, parent_hash, ts, payload, "
                            "writer) FROM STDIN (FORMAT BINARY)"
                        ) as cp:
                            cp.set_types(
                                ["int8", "int8", "text", "bytea", "bytea", "int8", "text", "int8"]
                            )
                            for hashes, texts in chunks:
                                for h, text in zip(hashes, texts, strict=True):
                                    cp.write_row((branch, seq, kind, h, previous, ts, text, w))
                                    previous = h
                                    seq += 1
                        self._untrust()
                        if snapshots:
                            cur.executemany(
                                "INSERT INTO snapshots VALUES (%s, %s, %s, %s, %s) ON CONFLICT "
                                "(branch, seq) DO UPDATE SET state = excluded.state, digest = "
                                "excluded.digest, built = excluded.built",
                                [(branch, s, text, d, built) for s, text, d in snapshots],
                            )
            except Exception as e:
                err = self._append_error(branch, first_seq - 1, e)
                if seq == first_seq or not self.landed(branch, seq - 1, previous, err):
                    raise err from None

    def landed(
        self, branch: int, seq: int, event_hash: bytes, err: BaseException | None = None
    ) -> bool:
        """Whether an event reported as failed is stored anyway (a connection lost during
        COMMIT leaves it unknown until asked)."""
        from ..errors import StorageError

        if isinstance(err, BranchConflict) or not (err is None or isinstance(err, StorageError)):
            return False
        if self._depth:
            return False
        try:
            row = self._one("SELECT hash FROM events WHERE branch = %s AND seq = %s", (branch, seq))
        except WorkbenchError:
            return False
        return row is not None and bytes(row[0]) == bytes(event_hash)

    def _append_error(self, branch: int, expected: int, err: BaseException) -> BaseException:
        if isinstance(err, WorkbenchError):
            return err
        if not is_driver_error(err):
            return err
        text = str(err)
        state = getattr(getattr(err, "diag", None), "sqlstate", None) or ""
        if state == "23505" and "event_id" in text:
            return event_id_taken(branch)
        if state == "23505" or APPEND_REFUSED in text:
            actual_seq: int | None = None
            if not self._depth:
                try:
                    actual = self.head(branch)
                    actual_seq = actual.seq if actual else self.fork_seq(branch)
                except WorkbenchError:
                    pass
            return branch_moved(branch, expected, actual_seq)
        return translate(err, self.where, f"appending to branch {branch}")

    def head(self, branch: int) -> Head | None:
        """The branch's own last event."""
        row = self._one(
            "SELECT seq, hash FROM events WHERE branch = %s ORDER BY seq DESC LIMIT 1", (branch,)
        )
        return None if row is None else Head(*row)

    def heads(self) -> dict[int, Head]:
        """Every branch's own last event."""
        rows = self._all(
            "SELECT DISTINCT ON (branch) branch, seq, hash FROM events ORDER BY branch, seq DESC"
        )
        return {b: Head(s, h) for b, s, h in rows}

    def fork_seq(self, branch: int) -> int | None:
        """Where a branch forked."""
        row = self._one("SELECT fork_seq FROM branches WHERE id = %s", (branch,))
        return None if row is None else int(row[0])

    def event_at(self, branch: int, seq: int) -> StoredEvent | None:
        """The event a branch itself wrote at seq."""
        row = self._one(
            f"SELECT {_EVENT_COLS} FROM events WHERE branch = %s AND seq = %s", (branch, seq)
        )
        return None if row is None else StoredEvent(*row)

    def _in_history(self, sql: str, segments: Sequence[Segment], lo: int, hi: int) -> list[Any]:
        out: list[Any] = []
        with self._guard:
            for branch, first, last in segments:
                a = max(lo, first)
                b = hi if last is None else min(hi, last)
                if a <= b:
                    out.extend(self.conn.execute(sql, (branch, a, b)).fetchall())
        return out

    def events(self, segments: Sequence[Segment], lo: int, hi: int) -> list[StoredEvent]:
        """Events of a resolved history with lo <= seq <= hi, in seq order."""
        return [
            StoredEvent(*r)
            for r in self._in_history(
                f"SELECT {_EVENT_COLS} FROM events WHERE branch = %s AND seq BETWEEN %s AND %s "
                "ORDER BY seq",
                segments,
                lo,
                hi,
            )
        ]

    def state_events(self, segments: Sequence[Segment], lo: int, hi: int) -> list[StateEvent]:
        """Deltas and compactions of a resolved history with lo <= seq <= hi, in seq order."""
        return self._in_history(
            "SELECT seq, kind, payload, hash FROM events WHERE branch = %s AND seq BETWEEN %s AND "
            "%s AND kind IN ('delta', 'compact') ORDER BY seq",
            segments,
            lo,
            hi,
        )

    def events_after(self, branch: int, after_seq: int, limit: int) -> list[FullEvent]:
        """Up to ``limit`` of a branch's own events after a seq, every column, in seq order."""
        rows = self._all(
            f"SELECT {FULL_EVENT_COLS} FROM events WHERE branch = %s AND seq > %s ORDER BY seq "
            f"LIMIT {int(limit)}",
            (branch, after_seq),
        )
        return [FullEvent(*r) for r in rows]

    def own_events(self, branch: int) -> Iterator[VerifyEvent]:
        """A branch's own events with their derived columns, in seq order, a page at a time."""
        after = -1
        while True:
            rows = self._all(
                "SELECT seq, kind, hash, parent_hash, payload, key_hash, metric, value FROM events "
                "WHERE branch = %s AND seq > %s ORDER BY seq LIMIT 4096",
                (branch, after),
            )
            if not rows:
                return
            yield from rows
            after = rows[-1][0]

    def last_seq_at_time(self, segments: Sequence[Segment], ts: int) -> int:
        """The highest seq recorded at or before unix-ms ts (0 if none)."""
        best = 0
        for branch, first, last in segments:
            row = self._one(
                "SELECT max(seq) FROM events WHERE branch = %s AND seq >= %s AND ts <= %s AND "
                "(%s::bigint IS NULL OR seq <= %s::bigint)",
                (branch, first, ts, last, last),
            )
            if row[0] is not None:
                best = max(best, int(row[0]))
        return best

    def world_events(
        self, segments: Sequence[Segment], hi: int, valid: int, known: int | None = None
    ) -> list[tuple[int, str, str, int]]:
        """(seq, kind, payload, world ms) of state events by world time, in world order."""
        out: list[tuple[int, str, str, int]] = []
        for branch, first, last in segments:
            b = hi if last is None else min(hi, last)
            out.extend(
                self._all(
                    "SELECT seq, kind, payload, coalesce(occurred_at, ts) FROM events WHERE "
                    "branch = %s AND seq BETWEEN %s AND %s AND kind IN ('delta', 'compact') AND "
                    "coalesce(occurred_at, ts) <= %s AND (%s::bigint IS NULL OR ts <= %s::bigint)",
                    (branch, first, b, valid, known, known),
                )
            )
        out.sort(key=lambda r: (r[3], r[0]))
        return out

    def event_by_id(self, event_id: str) -> IdentifiedEvent | None:
        """The event a caller id names."""
        row = self._one(
            "SELECT branch, seq, kind, payload FROM events WHERE event_id = %s", (event_id,)
        )
        return None if row is None else IdentifiedEvent(*row)

    def tail(self, cursor: int, limit: int | None) -> list[StoredEvent]:
        """Events after a global position, in commit order."""
        sql = f"SELECT {_EVENT_COLS} FROM events WHERE position > %s ORDER BY position"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [StoredEvent(*r) for r in self._all(sql, (cursor,))]

    def top_position(self) -> int:
        """The global position of the last stored event (0 when there is none)."""
        return int(self._one("SELECT coalesce(max(position), 0) FROM events")[0])

    def by_hash_prefix(self, lo: bytes, hi: bytes | None, limit: int = 50) -> list[HashHit]:
        """Events whose hash lies in [lo, hi), earliest first."""
        rows = self._all(
            "SELECT hash, branch, seq FROM events WHERE hash >= %s AND (%s::bytea IS NULL OR "
            f"hash < %s::bytea) ORDER BY position LIMIT {int(limit)}",
            (lo, hi, hi),
        )
        return [HashHit(bytes(h), b, q) for h, b, q in rows]

    def _segment_sql(self, segments: Sequence[Segment], prefix: str = "") -> tuple[str, list[Any]]:
        key = (prefix, tuple(segments))
        hit = self._segment_cache.get(key)
        if hit is not None:
            return hit
        b, q = prefix + "branch", prefix + "seq"
        parts: list[str] = []
        args: list[Any] = []
        for branch, first, last in segments:
            if last is None:
                parts.append(f"({b} = %s AND {q} >= %s)")
                args += [branch, first]
            else:
                parts.append(f"({b} = %s AND {q} >= %s AND {q} <= %s)")
                args += [branch, first, last]
        if len(self._segment_cache) > 4096:
            self._segment_cache.clear()
        out = (" OR ".join(parts) or "FALSE", args)
        self._segment_cache[key] = out
        return out

    def search(
        self, query: str, segments: Sequence[Segment] | None = None, limit: int = 50
    ) -> list[SearchHit]:
        """Events whose payload matches a web-search style query (words, "a phrase", OR, -not),
        best first: PostgreSQL's full-text search over the payload text."""
        where, args = ("TRUE", []) if segments is None else self._segment_sql(segments, "e.")
        rows = self._all(
            "SELECT e.branch, e.seq, e.kind, e.payload, -ts_rank(to_tsvector('simple', e.payload), "
            "q) AS r FROM events e, websearch_to_tsquery('simple', %s) q WHERE "
            f"to_tsvector('simple', e.payload) @@ q AND ({where}) ORDER BY r, e.position LIMIT %s",
            [query, *args, limit],
        )
        return [SearchHit(*r) for r in rows]

    # -- effects ------------------------------------------------------------------------------

    def effect_keys(
        self, segments: Sequence[Segment], upto: int, after_position: int = 0
    ) -> dict[bytes, tuple[int, int]]:
        """{key hash: (branch, seq)} of the effects in a resolved history up to a seq (only
        those stored after ``after_position``, when given)."""
        out: dict[bytes, tuple[int, int]] = {}
        if after_position:
            for kh, b, seq in self._all(
                "SELECT key_hash, branch, seq FROM events WHERE position > %s AND key_hash IS "
                "NOT NULL ORDER BY seq",
                (after_position,),
            ):
                if in_segments(segments, b, seq, upto):
                    out[bytes(kh)] = (b, seq)
            return out
        for branch, first, last in reversed(segments):  # oldest first: newer entries win
            hi = upto if last is None else min(last, upto)
            out.update(
                (bytes(kh), (branch, seq))
                for kh, seq in self._all(
                    "SELECT key_hash, seq FROM events WHERE branch = %s AND seq >= %s AND seq <= "
                    "%s AND key_hash IS NOT NULL ORDER BY seq",
                    (branch, first, hi),
                )
            )
        return out

    def effect_payload(self, branch: int, seq: int) -> str:
        """The payload of a stored effect."""
        return str(
            self._one("SELECT payload FROM events WHERE branch = %s AND seq = %s", (branch, seq))[0]
        )

    def find_effect_after(self, key_hash: bytes, branch: int, seq: int) -> EffectHit | None:
        """The newest effect with this key a branch stored after a seq."""
        row = self._one(
            "SELECT branch, seq, payload FROM events WHERE branch = %s AND seq > %s AND "
            "key_hash = %s ORDER BY seq DESC LIMIT 1",
            (branch, seq, key_hash),
        )
        return None if row is None else EffectHit(*row)

    def find_effect_indexed(
        self, key_hash: bytes, segments: Sequence[Segment], upto_position: int
    ) -> EffectHit | None:
        """The newest effect with this key in a history (the key index is always current).

        The key's rows are found first, through events_key_hash alone, and only they are checked
        against the history: a plan that also reads events_branch_seq or the position index
        (what the planner picks from stale statistics, or for ``ORDER BY seq DESC LIMIT 1``)
        costs one index entry per event of the history. ``position + 0`` keeps the position
        bound a filter."""
        where, args = self._segment_sql(segments)
        row = self._one(
            "WITH k AS MATERIALIZED (SELECT branch, seq, payload FROM events WHERE key_hash = %s "
            f"AND position + 0 <= %s) SELECT branch, seq, payload FROM k WHERE ({where}) ORDER BY "
            "seq DESC LIMIT 1",
            [key_hash, upto_position, *args],
        )
        return None if row is None else EffectHit(*row)

    def find_effect_with_head(
        self, key_hash: bytes, segments: Sequence[Segment], upto_position: int, branch: int | None
    ) -> tuple[EffectHit | None, int | None]:
        """``find_effect_indexed`` and the branch's own last seq in one round trip."""
        where, args = self._segment_sql(segments)
        row = self._one(
            "WITH k AS MATERIALIZED (SELECT branch, seq, payload FROM events WHERE key_hash = %s "
            f"AND position + 0 <= %s), f AS (SELECT branch, seq, payload FROM k WHERE ({where}) "
            "ORDER BY seq DESC LIMIT 1) SELECT (SELECT max(seq) FROM events WHERE branch = %s), "
            "f.branch, f.seq, f.payload FROM (SELECT 1) one LEFT JOIN f ON TRUE",
            [key_hash, upto_position, *args, branch],
        )
        hit = None if row[1] is None else EffectHit(row[1], row[2], row[3])
        return hit, None if row[0] is None else int(row[0])

    def catch_up_effect_index(self, write: bool = True) -> int:
        """The position the key index covers: every stored event (it is kept by the server)."""
        return int(self._one("SELECT coalesce(max(position), 0) FROM events")[0])

    def committed_keys(self, branch: int, key_hashes: Sequence[bytes]) -> set[bytes]:
        """Which of these effect keys a branch committed itself."""
        rows = self._all(  # from the keys, never from the branch's events (see above)
            "WITH k AS MATERIALIZED (SELECT branch, key_hash FROM events WHERE key_hash = "
            "ANY(%s)) SELECT key_hash FROM k WHERE branch = %s",
            (list(key_hashes), branch),
        )
        return {bytes(r[0]) for r in rows}

    # -- snapshots ----------------------------------------------------------------------------

    def put_snapshot(
        self,
        branch: int,
        seq: int,
        state: str,
        digest: bytes,
        built: str | None = None,
        replace: bool = False,
    ) -> None:
        """Store a snapshot (one that exists is kept unless ``replace``)."""
        action = (
            "DO UPDATE SET state = excluded.state, digest = excluded.digest, built = excluded.built"
            if replace
            else "DO NOTHING"
        )
        with self._guard:
            self.conn.execute(
                f"INSERT INTO snapshots VALUES (%s, %s, %s, %s, %s) ON CONFLICT (branch, seq) "
                f"{action}",
                (branch, seq, state, digest, built),
            )

    _SNAPSHOT = (
        "SELECT s.branch, s.seq, s.state, s.digest, e.hash, s.built FROM snapshots s LEFT JOIN "
        "events e ON e.branch = s.branch AND e.seq = s.seq "
    )

    def nearest_snapshot(self, segments: Sequence[Segment], seq: int) -> SnapshotRow | None:
        """The latest snapshot at or before a seq in a resolved history."""
        for branch, first, last in reversed(segments):
            b = seq if last is None else min(seq, last)
            if b < first:
                continue
            row = self._one(
                self._SNAPSHOT + "WHERE s.branch = %s AND s.seq BETWEEN %s AND %s "
                "ORDER BY s.seq DESC LIMIT 1",
                (branch, first, b),
            )
            if row is not None:
                return SnapshotRow(*row)
        return None

    def snapshot_marks(
        self, segments: Sequence[Segment], hi: int
    ) -> Iterator[tuple[int, int, str | None]]:
        """(branch, seq, built) of the snapshots at or before a seq of a history, newest first."""
        for branch, first, last in reversed(segments):
            b = hi if last is None else min(hi, last)
            if b < first:
                continue
            yield from self._all(
                "SELECT branch, seq, built FROM snapshots WHERE branch = %s AND seq BETWEEN %s "
                "AND %s ORDER BY seq DESC",
                (branch, first, b),
            )

    def all_snapshot_marks(self) -> list[tuple[int, int, str | None]]:
        """(branch, seq, built) of every snapshot."""
        return [
            (int(r[0]), int(r[1]), r[2])
            for r in self._all("SELECT branch, seq, built FROM snapshots ORDER BY branch, seq")
        ]

    def snapshot_at(self, branch: int, seq: int) -> SnapshotRow | None:
        """The snapshot stored at (branch, seq)."""
        row = self._one(self._SNAPSHOT + "WHERE s.branch = %s AND s.seq = %s", (branch, seq))
        return None if row is None else SnapshotRow(*row)

    def snapshots(self) -> list[SnapshotRecord]:
        """Every snapshot."""
        rows = self._all("SELECT branch, seq, state, digest FROM snapshots ORDER BY branch, seq")
        return [SnapshotRecord(*r) for r in rows]

    # -- observations -------------------------------------------------------------------------

    def observations(self, since: int = 0) -> list[Observation]:
        """Observations after a global position, in order."""
        rows = self._all(
            "SELECT position, branch, seq, metric, value, ts FROM events WHERE position > %s AND "
            "metric IS NOT NULL ORDER BY position",
            (since,),
        )
        return [Observation(*r) for r in rows]

    def observations_frame(self) -> Any:
        """Every observation as a polars frame: Arrow columns from ADBC's PostgreSQL driver when
        it is installed, else one binary COPY (never row-by-row queries)."""
        import polars as pl

        schema = observation_schema()
        frame = self._observations_adbc()
        if frame is not None:
            return frame.cast(schema) if frame.width == len(schema) else pl.DataFrame(schema=schema)
        with self._guard, self.conn.cursor() as cur:
            with cur.copy(
                f"COPY ({_OBSERVATIONS.format(schema='')}) TO STDOUT (FORMAT BINARY)"
            ) as cp:
                cp.set_types(["int8", "int8", "int8", "text", "float8", "int8"])
                rows = list(cp.rows())
        return pl.DataFrame(rows, schema=schema, orient="row")

    def _observations_adbc(self) -> Any:
        try:
            import adbc_driver_postgresql.dbapi as adbc
        except ImportError:
            return None
        import polars as pl

        try:
            con = adbc.connect(self.conninfo)
        except Exception:  # noqa: BLE001 (this URL's options are psycopg's only: use COPY)
            return None
        try:
            cur = con.cursor()
            cur.execute(_OBSERVATIONS.format(schema=f'"{self.journal}".'))
            frame = pl.DataFrame(cur.fetch_arrow())
            cur.close()
            return frame
        except Exception as e:
            raise translate(e, self.where, "reading observations") from None
        finally:
            con.close()

    # -- the catalog --------------------------------------------------------------------------

    def branch_row(self, branch_id: int) -> BranchRow | None:
        """One branch."""
        row = self._one(f"SELECT {_BRANCH_COLS} FROM branches WHERE id = %s", (branch_id,))
        return None if row is None else BranchRow(*row)

    def branch_by_name(self, name: str) -> BranchRow | None:
        """One branch, by name."""
        row = self._one(f"SELECT {_BRANCH_COLS} FROM branches WHERE name = %s", (name,))
        return None if row is None else BranchRow(*row)

    def branch_rows(self, parent: int | None = None, since_id: int = -1) -> list[BranchRow]:
        """Branches (the forks of ``parent``, or with ids after ``since_id``)."""
        if parent is None:
            rows = self._all(
                f"SELECT {_BRANCH_COLS} FROM branches WHERE id > %s ORDER BY id", (since_id,)
            )
        else:
            rows = self._all(
                f"SELECT {_BRANCH_COLS} FROM branches WHERE parent = %s ORDER BY id", (parent,)
            )
        return [BranchRow(*r) for r in rows]

    def insert_branches(
        self, rows: Sequence[tuple[str | None, int, int, str, int | None]]
    ) -> list[int]:
        """Insert forks (name, parent, fork_seq, params, sweep); their ids."""
        ids: list[int] = []
        created = now_ms()
        try:
            with self._guard, self.atomic():
                for name, parent, fork_seq, params, sweep in rows:
                    ids.append(
                        int(
                            self.conn.execute(
                                "INSERT INTO branches (name, parent, fork_seq, params, created, "
                                "sweep) VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                                (name, parent, fork_seq, params, created, sweep),
                            ).fetchone()[0]
                        )
                    )
        except WorkbenchError as e:
            if isinstance(e.__cause__, self.pg.errors.UniqueViolation):  # the guard's translation
                raise name_taken(rows) from None
            raise
        return ids

    def insert_sweep(self, base: int, at: int, spec: str, created: int | None = None) -> int:
        """Record a sweep; its id."""
        row = self._one(
            "INSERT INTO sweeps (base, at, spec, created) VALUES (%s, %s, %s, %s) RETURNING id",
            (base, at, spec, now_ms() if created is None else created),
        )
        return int(row[0])

    def sweep_rows(self) -> list[SweepRow]:
        """Every sweep."""
        return [
            SweepRow(*r)
            for r in self._all("SELECT id, base, at, spec, created, how FROM sweeps ORDER BY id")
        ]

    def set_sweep_how(self, sweep: int, how: str) -> None:
        """Record how a sweep was run (JSON)."""
        with self._guard:
            self.conn.execute("UPDATE sweeps SET how = %s WHERE id = %s", (how, sweep))

    def put_run(self, branch: int, sweep: int, status: str, **fields: Any) -> None:
        """Create or update a fork's run record."""
        check_run_fields(fields)
        names = ["branch", "sweep", "status", *fields]
        with self._guard:
            self.conn.execute(
                f"INSERT INTO fork_runs ({', '.join(names)}) VALUES "
                f"({', '.join(['%s'] * len(names))}) ON CONFLICT (branch) DO UPDATE SET "
                + ", ".join(f"{c} = excluded.{c}" for c in names[1:]),
                [branch, sweep, status, *fields.values()],
            )

    def runs(self, sweep: int | None = None) -> list[RunRow]:
        """Fork run records (of one sweep)."""
        rows = self._all(
            "SELECT branch, sweep, status, runner, notebook, error, started, finished, wall_ms "
            "FROM fork_runs WHERE %s::bigint IS NULL OR sweep = %s::bigint ORDER BY branch",
            (sweep, sweep),
        )
        return [RunRow(*r) for r in rows]

    def put_tag(self, label: str, branch: int, seq: int) -> None:
        """Point a label at an event."""
        with self._guard:
            self.conn.execute(
                "INSERT INTO tags VALUES (%s, %s, %s, %s) ON CONFLICT (label) DO UPDATE SET "
                "branch = excluded.branch, seq = excluded.seq, created = excluded.created",
                (label, branch, seq, now_ms()),
            )

    def tag(self, label: str) -> tuple[int, int] | None:
        """(branch, seq) a label points at."""
        row = self._one("SELECT branch, seq FROM tags WHERE label = %s", (label,))
        return None if row is None else (int(row[0]), int(row[1]))

    def tags(self) -> list[tuple[str, int, int]]:
        """Every label: (label, branch, seq), by label."""
        rows = self._all("SELECT label, branch, seq FROM tags ORDER BY label")
        return [(str(a), int(b), int(c)) for a, b, c in rows]

    def subscription(self, name: str) -> int:
        """A subscriber's acknowledged position (0 on first use)."""
        with self._guard:
            if not self.readonly:
                self.conn.execute(
                    "INSERT INTO subscriptions VALUES (%s, 0, %s) ON CONFLICT DO NOTHING",
                    (name, now_ms()),
                )
            row = self.conn.execute(
                "SELECT position FROM subscriptions WHERE name = %s", (name,)
            ).fetchone()
        return 0 if row is None else int(row[0])

    def ack(self, name: str, position: int) -> None:
        """Move a subscriber's acknowledged position."""
        with self._guard:
            self.conn.execute(
                "UPDATE subscriptions SET position = %s, updated = %s WHERE name = %s",
                (position, now_ms(), name),
            )

    def provenance(self, branch: int, seq: int) -> Provenance | None:
        """Who wrote an event, and how."""
        row = self._one(
            "SELECT w.writer, w.pid, w.source, e.ts, e.fx_ms, e.attempts, e.occurred_at, "
            "e.render_ms, e.event_id FROM events e LEFT JOIN writers w ON w.id = e.writer "
            "WHERE e.branch = %s AND e.seq = %s",
            (branch, seq),
        )
        return None if row is None else Provenance(*row)


class PgIntents:
    """Effect intents in the journal's ``intents`` table, shared by every machine. An
    announcement records the process (``TOKEN:N``) and its server connection; it is live while
    that process runs (same machine) or that connection is open (any machine: a killed client's
    connection ends with it)."""

    COMPACT_BYTES = 1 << 20
    mark = None
    start_mark = None

    def __init__(self, storage: PostgresStorage) -> None:
        self.storage = storage
        self._since = 0  # announcements since this process last compacted

    def due(self) -> bool:
        """Whether this process announced enough effects since its last compaction to try one
        (a row per announced effect stays until a compaction drops the committed ones)."""
        return not self.storage.readonly and self._since * 256 >= self.COMPACT_BYTES

    def _running(self, branch: int, key_hash: bytes) -> tuple[str | None, int, bytes]:
        return (self.storage.location + "#intents", branch, key_hash)

    def _live(self, ann: str, backend: str | None) -> bool:
        if ann.rpartition(":")[0] == process_token():
            return False  # this process's own: found through new_announcement instead
        if announcement_live(ann):
            return True
        if not backend:
            return False
        pid, _, started = backend.partition("|")
        row = self.storage.conn.execute(
            "SELECT 1 FROM pg_stat_activity WHERE pid = %s AND backend_start::text = %s",
            (int(pid), started),
        ).fetchone()
        return row is not None

    def announce(self, branch: int, key_hash: bytes, key: str) -> tuple[int, str, str | None]:
        """(attempt number, this announcement's id, id of a live earlier announcement or None)."""
        s = self.storage
        running = self._running(branch, key_hash)
        ann, holder = new_announcement(running)
        if holder is not None:
            return 0, ann, holder
        self._since += 1
        try:
            with s._guard, s.atomic():
                # the row exists (and is locked) before it is read: a second announcer waits here
                s.conn.execute(
                    "INSERT INTO intents VALUES (%s, %s, %s, %s, 0, NULL, NULL) ON CONFLICT DO "
                    "NOTHING",
                    (branch, key_hash, key, now_ms()),
                )
                attempts, pid, backend = s.conn.execute(
                    "SELECT attempts, pid, backend FROM intents WHERE branch = %s AND key_hash = "
                    "%s FOR UPDATE",
                    (branch, key_hash),
                ).fetchone()
                if pid and self._live(pid, backend):
                    end_announcement(running, ann)
                    return int(attempts) + 1, ann, str(pid)
                n = int(attempts) + 1
                s.conn.execute(
                    "UPDATE intents SET key = %s, started = %s, attempts = %s, pid = %s, "
                    "backend = %s WHERE branch = %s AND key_hash = %s",
                    (key, now_ms(), n, ann, s.backend, branch, key_hash),
                )
                return n, ann, None
        except BaseException:
            end_announcement(running, ann)
            raise

    def _end(self, branch: int, key_hash: bytes, ann: str, sql: str) -> None:
        end_announcement(self._running(branch, key_hash), ann)
        if sql:
            with self.storage._guard:
                self.storage.conn.execute(sql, (branch, key_hash, ann))

    def finished(self, branch: int, key_hash: bytes, ann: str) -> None:
        """The announced effect committed (the journal shows it)."""
        self._end(branch, key_hash, ann, "")

    def withdraw(self, branch: int, key_hash: bytes, ann: str) -> None:
        """The announced effect committed nothing; an earlier attempt's outcome stays unknown."""
        self._end(
            branch,
            key_hash,
            ann,
            "UPDATE intents SET pid = NULL, backend = NULL WHERE branch = %s AND key_hash = %s "
            "AND pid = %s AND attempts > 1",
        )
        self._end(
            branch,
            key_hash,
            ann,
            "DELETE FROM intents WHERE branch = %s AND key_hash = %s AND pid = %s AND attempts = 1",
        )

    def settle(self, branch: int, key_hash: bytes, ann: str) -> None:
        """The announced effect ran but its result could not be committed."""
        self._end(
            branch,
            key_hash,
            ann,
            "UPDATE intents SET pid = NULL, backend = NULL WHERE branch = %s AND key_hash = %s "
            "AND pid = %s",
        )

    def pending(self, branch: int | None = None) -> dict[tuple[int, bytes], str]:
        """Announced, not withdrawn: {(branch, key hash): key}."""
        rows = self.storage._all(
            "SELECT branch, key_hash, key FROM intents WHERE attempts > 0 ORDER BY started"
        )
        return {(b, bytes(h)): k for b, h, k in rows if branch is None or b == branch}

    def compact(
        self, still_open: Callable[[dict[tuple[int, bytes], str]], dict[tuple[int, bytes], str]]
    ) -> None:
        """Keep only what ``still_open(announced)`` returns."""
        if self.storage.readonly:
            return
        self._since = 0
        announced = self.pending()
        keep = still_open(announced)
        gone = [(b, h) for b, h in announced if (b, h) not in keep]
        if gone:
            with self.storage._guard, self.storage.conn.cursor() as cur:
                cur.executemany("DELETE FROM intents WHERE branch = %s AND key_hash = %s", gone)

    def size(self) -> int:
        """An estimate of the bytes the table holds."""
        return int(self.storage._one("SELECT count(*) FROM intents")[0]) * 256

    def close(self) -> None:
        """Nothing to release: the table lives with the journal."""
