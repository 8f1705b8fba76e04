"""Where the PostgreSQL backend announces effects before they run: the journal's ``intents``
table, shared by every machine that reaches the server (a sidecar file could not be)."""

from __future__ import annotations

from collections.abc import Callable

from ..announcements import (
    announcement_live,
    end_announcement,
    new_announcement,
    process_token,
)
from ..common import now_ms
from .connection import PgConnection


class PgIntents:
    """Effect intents in the journal's ``intents`` table, shared by every machine. An
    announcement records the process (``TOKEN:N``) and its server connection; it is live while
    that process runs (same machine) or that connection is open (any machine: a killed client's
    connection ends with it)."""

    COMPACT_BYTES = 1 << 20

    def __init__(self, storage: PgConnection) -> None:
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
                # One statement inserts the row or locks the one there, and returns it: a second
                # announcer waits here. (An insert, then a locking read, found no row when
                # another process's withdraw() deleted it in between.) The no-op update only
                # takes the lock; a fresh row reads attempts 0 and no pid.
                attempts, pid, backend = s.conn.execute(
                    "INSERT INTO intents VALUES (%s, %s, %s, %s, 0, NULL, NULL) ON CONFLICT "
                    "(branch, key_hash) DO UPDATE SET attempts = intents.attempts "
                    "RETURNING attempts, pid, backend",
                    (branch, key_hash, key, now_ms()),
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
    ) -> bool:
        """Keep only what ``still_open(announced)`` returns (False: opened read-only)."""
        if self.storage.readonly:
            return False
        self._since = 0
        announced = self.pending()
        keep = still_open(announced)
        gone = [(b, h) for b, h in announced if (b, h) not in keep]
        if gone:
            with self.storage._guard, self.storage.conn.cursor() as cur:
                cur.executemany("DELETE FROM intents WHERE branch = %s AND key_hash = %s", gone)
        return True

    def size(self) -> int:
        """An estimate of the bytes the table holds."""
        return int(self.storage._one("SELECT count(*) FROM intents")[0]) * 256

    def close(self) -> None:
        """Nothing to release: the table lives with the journal."""
