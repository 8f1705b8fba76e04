"""The SQLite backend: the SQL that reads events, effects, snapshots and indexes (appends are
in ``writes.py``, the catalog in ``catalog.py``, search in ``search.py``).

Invariants the database can hold, it holds: a unique ``(branch, seq)`` key refuses a stale
writer, a trigger refuses an append whose predecessor is not stored (so, with the unique key,
every append follows the branch's stored head: no gaps, whatever the caller does), triggers
refuse UPDATE and DELETE on events, and effect intents go to an append-only sidecar log
(``IntentLog``) so that announcing a call costs one write() rather than a second commit.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

from ..base import (
    EffectHit,
    FullEvent,
    FullTextSearch,
    HashHit,
    Head,
    IdentifiedEvent,
    IntentStore,
    Observation,
    ObservationReader,
    ReplayEvent,
    Segment,
    SnapshotRecord,
    SnapshotRow,
    Storage,
    StoredEvent,
    VerifyEvent,
    in_segments,
    observation_schema,
)
from ..common import EVENT_COLS, FULL_EVENT_COLS, SNAPSHOT_WITH_HASH
from .blobs import Blobs
from .catalog import Catalog
from .connection import Connection
from .intents import IntentLog, TableIntents
from .observations import arrow
from .schema import payload_sql, sqlar_uncompress, state_sql
from .search import Search
from .writes import SNAPSHOT_INSERT, EventWrites, snapshot_row

_OBSERVATIONS = (
    "SELECT position, branch, seq, metric, value, ts FROM events WHERE metric IS NOT NULL "
    "ORDER BY position"
)
# Payloads as text, compressed ones decompressed (schema.payload_sql).
_PAYLOAD = payload_sql()
_SNAPSHOT_WITH_HASH = SNAPSHOT_WITH_HASH.replace("s.state,", f"{state_sql('s.')} AS state,")
_EVENT_COLS = EVENT_COLS.replace("payload", f"{_PAYLOAD} AS payload")
_FULL_EVENT_COLS = FULL_EVENT_COLS.replace("payload", f"{_PAYLOAD} AS payload")
OBS_ROWS_DIRECT = 50_000  # observations read through sqlite3 before the Arrow path pays off


class SQLiteStorage(Connection, EventWrites, Catalog, Search, Blobs, Storage):
    """A journal in one SQLite file (or in memory): the SQLite implementation of ``Storage``."""

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
        super().__init__(
            path,
            durability,
            busy_timeout_ms,
            source,
            key,
            readonly=readonly,
            create=create,
            schema=schema,
        )
        # An encrypted journal keeps its intents inside the encrypted file: effect keys are
        # payload, and a plaintext sidecar would leak them.
        self.intents: IntentStore = (
            TableIntents(self) if key is not None else IntentLog(path, durability, self.readonly)
        )

    def head(self, branch: int) -> Head | None:
        """The branch's own last event (seq, hash), or None if it has none."""
        with self._guard:
            row = self.conn.execute(
                "SELECT seq, hash FROM events WHERE branch = ? ORDER BY seq DESC LIMIT 1", (branch,)
            ).fetchone()
        return None if row is None else Head(*row)

    def heads(self) -> dict[int, Head]:
        """Every branch's own last (seq, hash), in one query: one descent of the (branch, seq)
        key per branch, so its cost follows the branches, not the events."""
        with self._guard:
            rows = self.conn.execute(
                # CROSS JOIN: SQLite keeps branches as the outer loop (a plain JOIN let it
                # scan every event first)
                "SELECT b.id, e.seq, e.hash FROM branches b CROSS JOIN events e ON e.branch = "
                "b.id AND e.seq = (SELECT max(seq) FROM events WHERE branch = b.id)"
            ).fetchall()
        return {b: Head(s, h) for b, s, h in rows}

    def hashes_at(self, points: Sequence[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
        """The hashes of the events branches wrote themselves at these points, in one read per
        500 points (each a probe of the (branch, seq) key)."""
        out: dict[tuple[int, int], bytes] = {}
        wanted = list(dict.fromkeys(points))
        with self._guard:
            for i in range(0, len(wanted), 500):
                part = wanted[i : i + 500]
                values = ",".join("(?, ?)" for _ in part)
                rows = self.conn.execute(
                    "SELECT branch, seq, hash FROM events WHERE (branch, seq) IN "
                    f"(VALUES {values})",
                    [x for point in part for x in point],
                ).fetchall()
                out.update({(b, s): bytes(h) for b, s, h in rows})
        return out

    def event_at(self, branch: int, seq: int) -> StoredEvent | None:
        """The event a branch wrote at seq itself (not inherited)."""
        with self._guard:
            row = self.conn.execute(
                f"SELECT {_EVENT_COLS} FROM events WHERE branch = ? AND seq = ?", (branch, seq)
            ).fetchone()
        return None if row is None else StoredEvent(*row)

    def events(self, segments: Sequence[Segment], lo: int, hi: int) -> list[StoredEvent]:
        """Events of a resolved history with lo <= seq <= hi, in seq order."""
        return [
            StoredEvent(*r)
            for r in self._in_history(
                f"SELECT {_EVENT_COLS} FROM events WHERE branch = ? AND seq BETWEEN ? AND ? "
                f"ORDER BY seq",
                segments,
                lo,
                hi,
            )
        ]

    def replay_events(self, segments: Sequence[Segment], lo: int, hi: int) -> list[ReplayEvent]:
        """(seq, kind, hash, parent_hash, payload) of every event of a resolved history with
        lo <= seq <= hi, in seq order, the payload only of deltas and compactions (plain
        tuples: every replay reads them)."""
        return self._in_history(
            "SELECT seq, kind, hash, parent_hash, CASE WHEN kind IN ('delta', 'compact') "
            f"THEN {_PAYLOAD} END FROM events WHERE branch = ? AND seq BETWEEN ? AND ? "
            "ORDER BY seq",
            segments,
            lo,
            hi,
        )

    def _in_history(self, sql: str, segments: Sequence[Segment], lo: int, hi: int) -> list[Any]:
        out: list[Any] = []
        with self._guard:
            for branch, first, last in segments:
                a = max(lo, first)
                b = hi if last is None else min(hi, last)
                if a <= b:
                    out.extend(self.conn.execute(sql, (branch, a, b)).fetchall())
        return out

    def last_seq_at_time(self, segments: Sequence[Segment], ts: int) -> int:
        """The highest seq of a history committed at or before unix-ms ``ts`` (0 if none)."""
        best = 0
        with self._guard:
            for branch, first, last in segments:
                hi = "" if last is None else " AND seq <= ?"
                args: list[Any] = [branch, first, ts] + ([] if last is None else [last])
                row = self.conn.execute(
                    f"SELECT max(seq) FROM events WHERE branch = ? AND seq >= ? AND ts <= ?{hi}",
                    args,
                ).fetchone()
                if row[0] is not None:
                    best = max(best, row[0])
        return best

    def world_events(
        self, segments: Sequence[Segment], hi: int, valid: int, known: int | None = None
    ) -> list[tuple[int, str, str, int]]:
        """(seq, kind, payload, occurred-or-commit ms) of the state events of a resolved history
        up to seq ``hi`` that happened by ``valid`` (and were recorded by ``known``), in world
        order: by occurred time, ties by seq."""
        out: list[tuple[int, str, str, int]] = []
        rec = "" if known is None else " AND ts <= ?"
        with self._guard:
            for branch, first, last in segments:
                b = hi if last is None else min(hi, last)
                out.extend(
                    self.conn.execute(
                        f"SELECT seq, kind, {_PAYLOAD}, coalesce(occurred_at, ts) AS w FROM events "
                        "WHERE branch = ? "
                        f"AND seq BETWEEN ? AND ? AND kind IN ('delta', 'compact') AND w <= ?{rec}",
                        (branch, first, b, valid)
                        if known is None
                        else (branch, first, b, valid, known),
                    ).fetchall()
                )
        out.sort(key=lambda r: (r[3], r[0]))
        return out

    def event_by_id(self, event_id: str) -> IdentifiedEvent | None:
        """The event a caller id names."""
        with self._guard:
            row = self.conn.execute(
                f"SELECT branch, seq, kind, {_PAYLOAD} FROM events WHERE event_id = ?", (event_id,)
            ).fetchone()
        return None if row is None else IdentifiedEvent(*row)

    def events_after(self, branch: int, after_seq: int, limit: int) -> list[FullEvent]:
        """Up to ``limit`` of a branch's own events after a seq, every column, in seq order."""
        with self._guard:
            rows = self.conn.execute(
                f"SELECT {_FULL_EVENT_COLS} FROM events WHERE branch = ? AND seq > ? ORDER BY seq "
                f"LIMIT {int(limit)}",
                (branch, after_seq),
            ).fetchall()
        return [FullEvent(*r) for r in rows]

    def own_events(self, branch: int) -> Iterator[VerifyEvent]:
        """(seq, kind, hash, parent_hash, payload, key_hash, metric, value) of a branch's own
        events in seq order, streamed (verify)."""
        with self._guard:
            cur = self.conn.execute(
                f"SELECT seq, kind, hash, parent_hash, {_PAYLOAD}, key_hash, metric, value "
                "FROM events "
                "WHERE branch = ? ORDER BY seq",
                (branch,),
            )
        while True:
            with self._guard:
                rows = cur.fetchmany(4096)
            if not rows:
                return
            yield from rows

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
                f"({b} = ? AND {q} >= ?" + ("" if open_ else f" AND {q} <= ?") + ")"
                for open_ in shape[1]
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
    # and, for long histories, the effect_index table, caught up on demand. Every lookup by
    # key starts from effect_index (CROSS JOIN fixes the join order: SQLite otherwise walks
    # the branch's events through events_branch_seq, one row per event of the history, and
    # effects slowed 300-fold past 20,000 of them); tests/test_effects_plan.py checks the plans.

    def effect_keys(
        self, segments: Sequence[Segment], upto: int, after_position: int = 0
    ) -> dict[bytes, tuple[int, int]]:
        """{key hash: (branch, seq)} of every effect in a resolved history up to seq ``upto``;
        with ``after_position``, only those stored after that global position (the ones
        effect_index does not cover yet), found from the end of the journal."""
        out: dict[bytes, tuple[int, int]] = {}
        with self._guard:
            if after_position:
                rows = self.conn.execute(
                    "SELECT key_hash, branch, seq FROM events WHERE position > ? "
                    "AND key_hash IS NOT NULL ORDER BY seq",
                    (after_position,),
                ).fetchall()
                out.update(
                    (kh, (b, seq)) for kh, b, seq in rows if in_segments(segments, b, seq, upto)
                )
                return out
            for branch, first, last in reversed(segments):  # oldest first: newer entries win
                hi = upto if last is None else min(last, upto)
                out.update(
                    (kh, (branch, seq))
                    for kh, seq in self.conn.execute(
                        "SELECT key_hash, seq FROM events WHERE branch = ? AND seq >= ? AND seq "
                        "<= ? AND key_hash IS NOT NULL ORDER BY seq",
                        (branch, first, hi),
                    )
                )
        return out

    def effect_payload(self, branch: int, seq: int) -> str:
        """The payload of the effect stored at (branch, seq)."""
        with self._guard:
            payload: str = self.conn.execute(
                f"SELECT {_PAYLOAD} FROM events WHERE branch = ? AND seq = ?", (branch, seq)
            ).fetchone()[0]
        return payload

    def find_effect_after(self, key_hash: bytes, branch: int, seq: int) -> EffectHit | None:
        """The newest effect with this key on ``branch`` after ``seq`` (what another writer
        appended past a handle's head)."""
        with self._guard:
            row = self.conn.execute(
                f"SELECT branch, seq, {_PAYLOAD} FROM events WHERE branch = ? AND seq > ? "
                "AND key_hash = ? ORDER BY seq DESC LIMIT 1",
                (branch, seq, key_hash),
            ).fetchone()
        return None if row is None else EffectHit(*row)

    def find_effect_indexed(
        self, key_hash: bytes, segments: Sequence[Segment], upto_position: int
    ) -> EffectHit | None:
        """The newest effect with this key in a resolved history among the events effect_index
        covers (positions up to ``upto_position``): the key's few index entries, each checked
        against the history, never the history's events one by one."""
        return self.find_effect_with_head(key_hash, segments, upto_position, None)[0]

    def find_effect_with_head(
        self, key_hash: bytes, segments: Sequence[Segment], upto_position: int, branch: int | None
    ) -> tuple[EffectHit | None, int | None]:
        """``find_effect_indexed`` and the branch's own last seq (None: it has no events) in
        one statement: a new effect on a long history asks the database once, as on a short
        one (where the handle's map answers and only the head is asked). max() picks the newest
        (SQLite takes the other columns from its row) without the temporary b-tree an ORDER BY
        would build per call, which doubled the statement's cost."""
        where, args = self._segment_sql(segments, "e.")
        with self._guard:
            row = self.conn.execute(
                "SELECT (SELECT max(seq) FROM events WHERE branch = ?), e.branch, max(e.seq), "
                f"{payload_sql('e.')} FROM effect_index x CROSS JOIN events e "
                "ON e.position = x.position "
                f"WHERE x.key_hash = ? AND x.position <= ? AND ({where})",
                [branch, key_hash, upto_position, *args],
            ).fetchone()
        hit = None if row[2] is None else EffectHit(row[1], row[2], row[3])
        return hit, row[0]

    def catch_up_effect_index(self, write: bool = True) -> int:
        """Index every effect appended since the last catch-up; returns the position covered.
        ``write=False`` (and a read-only open) only reads the position covered."""
        return self._catch_up(
            "effect_index",
            "effect_index_position",
            "SELECT key_hash, position FROM events WHERE position > ? AND position <= ? "
            "AND key_hash IS NOT NULL",
            write,
        )

    def by_hash_prefix(self, lo: bytes, hi: bytes | None, limit: int = 50) -> list[HashHit]:
        """(hash, branch, seq) of events whose hash lies in [lo, hi), earliest first."""

        def rng(col: str) -> str:
            return f"{col} >= ?" if hi is None else f"{col} >= ? AND {col} < ?"

        args: list[Any] = [lo] if hi is None else [lo, hi]
        with self._guard:
            done = self._catch_up_hash_index()
            rows = self.conn.execute(
                "SELECT h.hash, e.branch, e.seq FROM hash_index h JOIN events e ON e.position = "
                f"h.position WHERE {rng('h.hash')} ORDER BY h.position LIMIT {int(limit)}",
                args,
            ).fetchall()
            # Events the index does not cover yet (read-only opens never write it): scanned.
            rows += self.conn.execute(
                f"SELECT hash, branch, seq FROM events WHERE position > ? AND {rng('hash')} "
                f"ORDER BY position LIMIT {int(limit)}",
                [done, *args],
            ).fetchall()
        return [HashHit(bytes(h), b, q) for h, b, q in rows[:limit]]

    def _catch_up_hash_index(self) -> int:
        # The hash index is built when hashes are looked up, not on every append: an index
        # over random 32-byte keys would cost appends a third page write per commit.
        return self._catch_up(
            "hash_index",
            "hash_index_position",
            "SELECT hash, position FROM events WHERE position > ? AND position <= ?",
        )

    def _catch_up(self, table: str, meta_key: str, select: str, write: bool = True) -> int:
        """Insert ``select``'s rows for the events after the position ``meta_key`` records;
        returns the position the index covers (read-only opens, and ``write=False``, only read
        it). Nothing to index takes no write lock: a reader never waits for a writer."""
        with self._guard:
            row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (meta_key,)).fetchone()
            done = int(row[0]) if row else 0
            if self.readonly or not write:
                return done
            top = self.conn.execute("SELECT coalesce(max(position), 0) FROM events").fetchone()[0]
            if top <= done:
                return done
            with self.atomic():
                row = self.conn.execute(
                    "SELECT value FROM meta WHERE key = ?", (meta_key,)
                ).fetchone()
                done = int(row[0]) if row else 0
                top = int(
                    self.conn.execute("SELECT coalesce(max(position), 0) FROM events").fetchone()[0]
                )
                if top > done:
                    self.conn.execute(f"INSERT OR IGNORE INTO {table} {select}", (done, top))
                    self.conn.execute(
                        "INSERT OR REPLACE INTO meta VALUES (?, ?)", (meta_key, str(top))
                    )
                return max(top, done)

    def tail(self, cursor: int, limit: int | None) -> list[StoredEvent]:
        """Events with position > cursor, in position (commit) order."""
        with self._guard:
            sql = f"SELECT {_EVENT_COLS} FROM events WHERE position > ? ORDER BY position"
            if limit is not None:
                sql += f" LIMIT {int(limit)}"
            rows = self.conn.execute(sql, (cursor,)).fetchall()
        return [StoredEvent(*r) for r in rows]

    def top_position(self) -> int:
        """The global position of the last stored event (0 when there is none)."""
        with self._guard:
            return int(
                self.conn.execute("SELECT coalesce(max(position), 0) FROM events").fetchone()[0]
            )

    def observations(self, since: int = 0) -> list[Observation]:
        """Observations after a global position, in order."""
        with self._guard:
            rows = self.conn.execute(
                "SELECT position, branch, seq, metric, value, ts FROM events "
                "WHERE position > ? AND metric IS NOT NULL ORDER BY position",
                (since,),
            ).fetchall()
        return [Observation(*r) for r in rows]

    def observations_frame(self) -> Any:
        """All observations as a polars frame (position, branch, seq, metric, value, ts).

        A journal of up to OBS_ROWS_DIRECT events is read through sqlite3. Past that, the
        observations are copied into private scratch files that the ADBC SQLite driver hands
        to polars as Arrow columns (see ``_observations_arrow``; 2-3x as fast). ADBC never
        opens the journal itself: it carries its own copy of SQLite, and that copy's locks and
        closes would break this process's connection's locks on the file."""
        import polars as pl

        schema = observation_schema()
        with self._guard:
            # the number of events bounds the observations' (one read of the table's end)
            events = self.conn.execute("SELECT coalesce(max(position), 0) FROM events").fetchone()
            if events[0] > OBS_ROWS_DIRECT and not self.encrypted:
                frame = self._observations_arrow(events[0])
                if frame is not None:
                    return (
                        frame.cast(schema)
                        if frame.width == len(schema)
                        else pl.DataFrame(schema=schema)
                    )
            rows = self.conn.execute(_OBSERVATIONS).fetchall()
        return pl.DataFrame(rows, schema=schema, orient="row")

    def _observations_arrow(self, top: int) -> Any:
        """The observations up to position ``top`` read as Arrow (see ``observations.arrow``),
        or None: read them through sqlite3."""
        return arrow(self.conn, top)

    def size_bytes(self) -> int:
        """Bytes the journal takes on disk: the file and its WAL (0 in memory)."""
        if self.path == ":memory:":
            return 0
        return sum(os.path.getsize(p) for p in (self.path, self.path + "-wal") if os.path.exists(p))

    def vacuum(self) -> None:
        """Checkpoint the WAL into the file and rebuild it compactly; ``Busy`` after one busy
        timeout when another connection holds the write lock."""
        with self._guard:
            # PASSIVE: what it can without waiting. A TRUNCATE here waited out the busy timeout
            # for a writer, reported it only as a result row, and VACUUM then waited again.
            self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            self.conn.execute("VACUUM")  # the one wait for the write lock: Busy after it
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # VACUUM wrote through the WAL

    def committed_keys(self, branch: int, key_hashes: Sequence[bytes]) -> set[bytes]:
        """Which of these effect key hashes a branch has committed itself. A read: it writes
        nothing (not even the effect index), so it answers while another process writes."""
        out: set[bytes] = set()
        with self._guard:
            done = self.catch_up_effect_index(write=False)
            # The effects the index does not cover yet are found from the end of the journal
            # when they are fewer than the branch's own events, else from the branch's events.
            top = self.conn.execute("SELECT coalesce(max(position), 0) FROM events").fetchone()[0]
            own = self.conn.execute(
                "SELECT count(*) FROM (SELECT 1 FROM events WHERE branch = ? LIMIT ?)",
                (branch, top - done + 1),
            ).fetchone()[0]
            tail = (
                "SELECT key_hash FROM events WHERE +branch = ? AND position > ? AND "
                if top - done < own
                else "SELECT key_hash FROM events WHERE branch = ? AND +position > ? AND "
            )
            for i in range(0, len(key_hashes), 500):
                chunk = list(key_hashes[i : i + 500])
                marks = ",".join("?" * len(chunk))
                out.update(
                    r[0]
                    for r in self.conn.execute(
                        "SELECT x.key_hash FROM effect_index x CROSS JOIN events e ON e.position = "
                        f"x.position WHERE x.key_hash IN ({marks}) AND e.branch = ?",
                        [*chunk, branch],
                    )
                )
                if top > done:
                    out.update(
                        r[0]
                        for r in self.conn.execute(
                            f"{tail}key_hash IN ({marks})", [branch, done, *chunk]
                        )
                    )
        return out

    def put_snapshot(
        self,
        branch: int,
        seq: int,
        state: str,
        digest: bytes,
        built: str | None = None,
        replace: bool = False,
    ) -> None:
        """Store a snapshot (``built``: what it was built from, see deltas.fingerprint); one that
        exists is kept unless ``replace`` (a stale one being rebuilt)."""
        verb = "REPLACE" if replace else "IGNORE"
        row = snapshot_row(branch, seq, state, digest, built)
        with self._guard:
            self.conn.execute(f"INSERT OR {verb} {SNAPSHOT_INSERT}", row)

    def nearest_snapshot(self, segments: Sequence[Segment], seq: int) -> SnapshotRow | None:
        """The latest snapshot at or before ``seq`` in a resolved history, with the hash of the
        event it seals to."""
        with self._guard:
            for branch, first, last in reversed(segments):
                b = seq if last is None else min(seq, last)
                if b < first:
                    continue
                row = self.conn.execute(
                    _SNAPSHOT_WITH_HASH + "WHERE s.branch = ? AND s.seq BETWEEN ? AND ? "
                    "ORDER BY s.seq DESC LIMIT 1",
                    (branch, first, b),
                ).fetchone()
                if row is not None:
                    return SnapshotRow(*row)
        return None

    def snapshot_marks(
        self, segments: Sequence[Segment], hi: int
    ) -> Iterator[tuple[int, int, str | None]]:
        """(branch, seq, built) of the snapshots at or before seq ``hi`` of a resolved history,
        newest first, streamed: a reader stops at the first it can use."""
        for branch, first, last in reversed(segments):
            b = hi if last is None else min(hi, last)
            if b < first:
                continue
            with self._guard:
                cur = self.conn.execute(
                    "SELECT branch, seq, built FROM snapshots WHERE branch = ? AND seq "
                    "BETWEEN ? AND ? ORDER BY seq DESC",
                    (branch, first, b),
                )
            while True:
                with self._guard:
                    rows = cur.fetchmany(64)
                if not rows:
                    break
                yield from rows

    def all_snapshot_marks(self) -> list[tuple[int, int, str | None]]:
        """(branch, seq, built) of every snapshot, by branch and seq."""
        with self._guard:
            marks: list[tuple[int, int, str | None]] = self.conn.execute(
                "SELECT branch, seq, built FROM snapshots ORDER BY branch, seq"
            ).fetchall()
        return marks

    def snapshot_at(self, branch: int, seq: int) -> SnapshotRow | None:
        """The snapshot stored at (branch, seq), with the hash of the event it seals to (one
        probe of the key: history and replication ask for every snapshot in turn)."""
        with self._guard:
            row = self.conn.execute(
                _SNAPSHOT_WITH_HASH + "WHERE s.branch = ? AND s.seq = ?",
                (branch, seq),
            ).fetchone()
        return None if row is None else SnapshotRow(*row)

    def quick_check(self) -> list[str]:
        """What SQLite's quick_check finds wrong with the file's pages (empty when sound)."""
        with self._guard:
            rows = [r[0] for r in self.conn.execute("PRAGMA quick_check").fetchall()]
        return [] if rows == ["ok"] else rows

    def snapshots(self) -> list[SnapshotRecord]:
        """Every snapshot, by branch and seq."""
        with self._guard:
            rows = self.conn.execute(
                "SELECT branch, seq, state, digest, state_size FROM snapshots ORDER BY branch, seq"
            ).fetchall()
        return [SnapshotRecord(b, q, _state_text(state, size), d) for b, q, state, d, size in rows]


def _state_text(state: Any, size: int | None) -> str:
    """A stored snapshot state as text; a compressed one that does not decompress reads as ''
    (which fails its seal: verify names that snapshot instead of failing the whole table)."""
    if size is None:
        return str(state)
    try:
        return str(sqlar_uncompress(state, size))
    except Exception:  # noqa: BLE001 (zlib's and ISA-L's errors, a wrong size, bad UTF-8)
        return ""


# Storage's required methods are abstract (a backend lacking one cannot be built) and mypy checks
# every override against Storage; here it checks the optional roles the backend keeps and that
# both its intent stores are IntentStores: a method renamed or retyped fails here, by role.
_search: type[FullTextSearch] = SQLiteStorage
_observations: type[ObservationReader] = SQLiteStorage
_log: type[IntentStore] = IntentLog
_table: type[IntentStore] = TableIntents
