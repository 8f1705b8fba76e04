"""Full-text search of event payloads for the PostgreSQL backend: the server's own text search
(``websearch_to_tsquery`` over the payload text), computed at query time: nothing is indexed on
the append path."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..base import SearchHit, Segment
from .connection import PgConnection


class PgSearch(PgConnection):
    """``search``, for the PostgreSQL backend (``_segment_sql`` comes from its reads)."""

    _segment_sql: Callable[..., tuple[str, list[Any]]]

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
