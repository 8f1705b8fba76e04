"""Full-text search of event payloads (SQLite FTS5 through sqlite-utils' FTS helpers), for the
SQLite backend.

The index (``events_fts``, external content over ``events``) is built on demand, at the first
search, and caught up at each search from the position it covered: never on the append path,
like the hash index. A read-only open searches what the index covers and scans newer events
word by word (plain substring match, case-insensitive).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from ...errors import InvalidValue, WorkbenchError
from ..base import SearchHit, Segment
from .faults import is_driver_error
from .schema import payload_sql

FTS_META = "fts_position"
_WORD = re.compile(r"[\w]+", re.UNICODE)
_OPERATORS = {"AND", "OR", "NOT", "NEAR"}


class Search:
    """``search`` for a class that owns ``conn``, ``_guard``, ``atomic()``, ``readonly`` and
    ``_segment_sql`` (``SQLiteStorage``)."""

    conn: Any
    _guard: Any
    readonly: bool
    atomic: Callable[[], AbstractContextManager[None]]
    _segment_sql: Callable[..., tuple[str, list[Any]]]

    def search(
        self, query: str, segments: Sequence[Segment] | None = None, limit: int = 50
    ) -> list[SearchHit]:
        """Events whose payload matches an FTS5 query, best first (within a history, if given)."""
        with self._guard:
            covered = self._fts_ready()
            where, args = ("1", []) if segments is None else self._segment_sql(segments, "e.")
            hits: list[SearchHit] = []
            if covered > 0:
                try:
                    rows = self.conn.execute(
                        f"SELECT e.branch, e.seq, e.kind, {payload_sql('e.')}, f.rank "
                        "FROM events_fts f "
                        "JOIN events e ON e.position = f.rowid WHERE events_fts MATCH ? AND "
                        f"e.position <= ? AND ({where}) ORDER BY f.rank LIMIT ?",
                        [query, covered, *args, limit],
                    ).fetchall()
                except WorkbenchError:
                    raise
                except Exception as e:  # the query is the one thing that varies: FTS5 refused it
                    if not is_driver_error(e) or "malformed" in str(e) or "disk" in str(e):
                        raise
                    raise InvalidValue(
                        f'{query!r} is not a search query ({e}); write words, "a phrase", '
                        "prefix*, or combine them with AND, OR, NOT"
                    ) from None
                hits = [SearchHit(*r) for r in rows]
            if len(hits) < limit:
                hits += self._scan(query, covered, where, args, limit - len(hits))
        return hits

    def _fts_ready(self) -> int:
        """Build or catch up the index where the journal may be written; the position it covers."""
        have = (
            self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'events_fts'").fetchone()
            is not None
        )
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (FTS_META,)).fetchone()
        covered = int(row[0]) if row and have else 0
        if self.readonly:
            return covered
        if not have:
            # The index (external content, as sqlite-utils' enable_fts makes it) is filled by the
            # catch-up below from each payload's text: filled from the column as stored, it
            # would index a compressed payload's bytes.
            self.conn.execute(
                "CREATE VIRTUAL TABLE events_fts USING FTS5 (payload, content=[events])"
            )
            covered = 0
        with self.atomic():
            top = self.conn.execute("SELECT coalesce(max(position), 0) FROM events").fetchone()[0]
            if top > covered:
                self.conn.execute(
                    "INSERT INTO events_fts (rowid, payload) SELECT position, "
                    f"{payload_sql()} FROM events WHERE position > ? AND position <= ?",
                    (covered, top),
                )
            self.conn.execute(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)", (FTS_META, str(max(top, covered)))
            )
        return int(max(top, covered))

    def _scan(
        self, query: str, after: int, where: str, args: list[Any], limit: int
    ) -> list[SearchHit]:
        """Events after ``after`` holding every word of the query (what no index covers yet)."""
        words = [w.lower() for w in _WORD.findall(query) if w not in _OPERATORS]
        if not words:
            return []
        text = payload_sql("e.")
        match = " AND ".join(f"instr(lower({text}), ?) > 0" for _ in words)
        rows = self.conn.execute(
            f"SELECT e.branch, e.seq, e.kind, {text}, 0.0 FROM events e WHERE e.position > ? "
            f"AND {match} AND ({where}) ORDER BY e.position LIMIT ?",
            [after, *words, *args, limit],
        ).fetchall()
        return [SearchHit(*r) for r in rows]
