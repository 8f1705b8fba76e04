"""Artifacts' bytes and the annotation events, for the PostgreSQL backend
(``blobs.BlobStore``). A journal made before artifacts gets its ``blobs`` table when opened
writable (``PgConnection._add_blobs``); a read-only handle of one reads no artifacts."""

from __future__ import annotations

from collections.abc import Sequence

from ..blobs import ANNOTATION_KINDS, Annotation
from .connection import PgConnection

_KINDS = ", ".join(f"'{k}'" for k in ANNOTATION_KINDS)


class PgBlobs(PgConnection):
    """``BlobStore`` for the PostgreSQL backend."""

    _blobs_seen = False  # once the table is there it stays: not asked again

    def _has_blobs(self) -> bool:
        if not self._blobs_seen:
            row = self._one("SELECT to_regclass('blobs') IS NOT NULL")
            self._blobs_seen = bool(row and row[0])
        return self._blobs_seen

    def put_blob(self, digest: bytes, data: bytes) -> bool:
        """Store bytes under their digest unless stored; whether they were new."""
        with self.atomic():
            cur = self._exec(
                "INSERT INTO blobs (hash, size, data) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                (digest, len(data), data),
            )
            return bool(cur.rowcount)

    def blob(self, digest: bytes) -> bytes | None:
        """The bytes stored under a digest, or None."""
        if not self._has_blobs():
            return None
        row = self._one("SELECT data FROM blobs WHERE hash = %s", (digest,))
        return None if row is None else bytes(row[0])

    def blob_sizes(self, digests: Sequence[bytes]) -> dict[bytes, int]:
        """Which of these digests are stored, with their sizes."""
        if not digests or not self._has_blobs():
            return {}
        rows = self._all(
            "SELECT hash, size FROM blobs WHERE hash = ANY(%s)", (list(map(bytes, digests)),)
        )
        return {bytes(h): int(size) for h, size in rows}

    def annotations(self, branches: Sequence[int] | None = None) -> list[Annotation]:
        """Note and attach events (of these branches), in journal order."""
        sql = (
            f"SELECT position, branch, seq, kind, payload, ts FROM events WHERE kind IN ({_KINDS})"
        )
        args: list[object] = []
        if branches is not None:
            if not branches:
                return []
            sql += " AND branch = ANY(%s)"
            args.append(sorted(set(branches)))
        rows = self._all(sql + " ORDER BY position", args)
        return [
            Annotation(int(p), int(b), int(q), str(k), str(t), int(t2))
            for p, b, q, k, t, t2 in rows
        ]
