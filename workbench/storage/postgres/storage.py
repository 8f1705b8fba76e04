"""The PostgreSQL backend: a journal in one schema of a PostgreSQL database, shared by every
process and machine that reaches the server (psycopg 3; ``pip install
'lithify-workbench[postgres]'``).

Same rows, same hashes and same refusals as the SQLite file (the contract tests run on both);
what differs is where the guarantees come from: a unique ``(branch, seq)`` constraint and a
trigger refuse a stale or gapped append from any machine, effect intents live in a table (a
sidecar file cannot be shared between machines), and each durability mode is a
``synchronous_commit`` setting (``schema.SYNCHRONOUS_COMMIT``; the README says what each
survives). A dropped connection is re-established on the next call outside a transaction.
"""

from __future__ import annotations

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
from ..common import EVENT_COLS, FULL_EVENT_COLS, SNAPSHOT_COLS, SNAPSHOT_WITH_HASH
from .blobs import PgBlobs
from .catalog import PgCatalog
from .faults import translate
from .intents import PgIntents
from .search import PgSearch
from .writes import PgWrites

_OBSERVATIONS = (
    "SELECT position, branch, seq, metric, value, ts FROM {schema}events WHERE metric IS NOT NULL "
    "AND {settled} ORDER BY position"
)


class PostgresStorage(PgWrites, PgCatalog, PgSearch, PgBlobs, Storage):
    """A journal in schema ``journal`` (the URL's ``journal=NAME``, default "main") of a
    PostgreSQL database: the PostgreSQL implementation of ``Storage``."""

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
        super().__init__(
            url,
            durability,
            busy_timeout_ms,
            source,
            key,
            readonly=readonly,
            create=create,
            schema=schema,
        )
        self.intents: IntentStore = PgIntents(self)

    def head(self, branch: int) -> Head | None:
        """The branch's own last event."""
        row = self._one(
            "SELECT seq, hash FROM events WHERE branch = %s ORDER BY seq DESC LIMIT 1", (branch,)
        )
        return None if row is None else Head(*row)

    def heads(self) -> dict[int, Head]:
        """Every branch's own last event: one descent of the (branch, seq) index per branch
        (a lateral join), so its cost follows the branches, not the events."""
        rows = self._all(
            "SELECT b.id, e.seq, e.hash FROM branches b CROSS JOIN LATERAL (SELECT seq, hash "
            "FROM events WHERE branch = b.id ORDER BY seq DESC LIMIT 1) e"
        )
        return {b: Head(s, h) for b, s, h in rows}

    def hashes_at(self, points: Sequence[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
        """The hashes of the events branches wrote themselves at these points, in one query."""
        if not points:
            return {}
        wanted = list(dict.fromkeys(points))
        rows = self._all(
            "SELECT e.branch, e.seq, e.hash FROM unnest(%s::bigint[], %s::bigint[]) AS p(b, s) "
            "JOIN events e ON e.branch = p.b AND e.seq = p.s",
            ([b for b, _ in wanted], [s for _, s in wanted]),
        )
        return {(b, s): bytes(h) for b, s, h in rows}

    def event_at(self, branch: int, seq: int) -> StoredEvent | None:
        """The event a branch itself wrote at seq."""
        row = self._one(
            f"SELECT {EVENT_COLS} FROM events WHERE branch = %s AND seq = %s", (branch, seq)
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
                f"SELECT {EVENT_COLS} FROM events WHERE branch = %s AND seq BETWEEN %s AND %s "
                "ORDER BY seq",
                segments,
                lo,
                hi,
            )
        ]

    def replay_events(self, segments: Sequence[Segment], lo: int, hi: int) -> list[ReplayEvent]:
        """Every event of a resolved history with lo <= seq <= hi, in seq order, with its
        hashes; the payload only of deltas and compactions."""
        return self._in_history(
            "SELECT seq, kind, hash, parent_hash, CASE WHEN kind IN ('delta', 'compact') THEN "
            "payload END FROM events WHERE branch = %s AND seq BETWEEN %s AND %s ORDER BY seq",
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
        sql = (
            f"SELECT {EVENT_COLS} FROM events WHERE position > %s AND {self.settled} "
            "ORDER BY position"
        )
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [StoredEvent(*r) for r in self._all(sql, (cursor,))]

    def top_position(self) -> int:
        """The global position of the last stored event whose position is final (0 when there
        is none): no event will commit at or below it later."""
        sql = f"SELECT coalesce(max(position), 0) FROM events WHERE {self.settled}"
        return int(self._one(sql)[0])

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
                f"INSERT INTO snapshots ({SNAPSHOT_COLS}) VALUES (%s, %s, %s, %s, %s) ON CONFLICT "
                f"(branch, seq) {action}",
                (branch, seq, state, digest, built),
            )

    def nearest_snapshot(self, segments: Sequence[Segment], seq: int) -> SnapshotRow | None:
        """The latest snapshot at or before a seq in a resolved history."""
        for branch, first, last in reversed(segments):
            b = seq if last is None else min(seq, last)
            if b < first:
                continue
            row = self._one(
                SNAPSHOT_WITH_HASH + "WHERE s.branch = %s AND s.seq BETWEEN %s AND %s "
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
        row = self._one(SNAPSHOT_WITH_HASH + "WHERE s.branch = %s AND s.seq = %s", (branch, seq))
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
            f"metric IS NOT NULL AND {self.settled} ORDER BY position",
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
                f"COPY ({_OBSERVATIONS.format(schema='', settled=self.settled)}) TO STDOUT "
                "(FORMAT BINARY)"
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
            qualified = f'"{self.journal}".'
            settled = self.settled_sql.format(schema=qualified)
            cur.execute(_OBSERVATIONS.format(schema=qualified, settled=settled))
            frame = pl.DataFrame(cur.fetch_arrow())
            cur.close()
            return frame
        except Exception as e:
            raise translate(e, self.where, "reading observations") from None
        finally:
            con.close()


# Storage's required methods are abstract (a backend lacking one cannot be built) and mypy checks
# every override against Storage; here it checks the optional roles the backend keeps and that
# its intent store is an IntentStore: a method renamed or retyped fails here, by role.
_search: type[FullTextSearch] = PostgresStorage
_observations: type[ObservationReader] = PostgresStorage
_intents: type[IntentStore] = PgIntents
