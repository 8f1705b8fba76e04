"""Artifacts' bytes and the annotation events, for the SQLite backend (``blobs.BlobStore``).

The ``blobs`` table came with the artifacts: an older file gets it when opened writable (its
schema upgrade); opened read-only, it has no artifacts to read, and reads say so by returning
nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from ..blobs import ANNOTATION_KINDS, Annotation
from .schema import payload_sql

_KINDS = ", ".join(f"'{k}'" for k in ANNOTATION_KINDS)
# the partial index events_annotations answers this (its WHERE is the same expression)
_ANNOTATIONS = (
    f"SELECT position, branch, seq, kind, {payload_sql()}, ts FROM events WHERE kind IN ({_KINDS})"
)


class Blobs:
    """``BlobStore`` for a class that owns ``conn``, ``_guard`` and ``atomic()``."""

    conn: Any
    _guard: Any
    atomic: Callable[[], AbstractContextManager[None]]

    def _has_blobs(self) -> bool:
        return (
            self.conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'blobs'"
            ).fetchone()
            is not None
        )

    def put_blob(self, digest: bytes, data: bytes) -> bool:
        """Store bytes under their digest unless stored; whether they were new."""
        with self._guard, self.atomic():
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO blobs (hash, size, data) VALUES (?, ?, ?)",
                (digest, len(data), data),
            )
            return bool(cur.rowcount)

    def blob(self, digest: bytes) -> bytes | None:
        """The bytes stored under a digest, or None."""
        with self._guard:
            if not self._has_blobs():
                return None
            row = self.conn.execute("SELECT data FROM blobs WHERE hash = ?", (digest,)).fetchone()
        return None if row is None else bytes(row[0])

    def blob_sizes(self, digests: Sequence[bytes]) -> dict[bytes, int]:
        """Which of these digests are stored, with their sizes."""
        out: dict[bytes, int] = {}
        with self._guard:
            if not digests or not self._has_blobs():
                return out
            for i in range(0, len(digests), 500):
                part = list(digests[i : i + 500])
                marks = ", ".join("?" * len(part))
                for h, size in self.conn.execute(
                    f"SELECT hash, size FROM blobs WHERE hash IN ({marks})", part
                ):
                    out[bytes(h)] = int(size)
        return out

    def annotations(self, branches: Sequence[int] | None = None) -> list[Annotation]:
        """Note and attach events (of these branches), in journal order."""
        sql, args = _ANNOTATIONS, []
        if branches is not None:
            if not branches:
                return []
            ids = sorted(set(branches))
            if len(ids) <= 500:
                sql += f" AND branch IN ({', '.join('?' * len(ids))})"
                args = ids
        with self._guard:
            rows = self.conn.execute(sql + " ORDER BY position", args).fetchall()
        out = [Annotation(*r) for r in rows]
        if branches is not None and len(set(branches)) > 500:
            keep = set(branches)
            out = [a for a in out if a.branch in keep]
        return out
