"""The catalog beside the events: branches, sweeps and their fork runs, tags, subscriptions and
writers (SQL of the SQLite backend)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from ..base import BranchRow, Provenance, RunRow, SweepRow
from ..common import (
    BRANCH_COLS,
    RUN_COLS,
    check_run_fields,
    name_taken,
    now_ms,
    parent_missing,
)


class Catalog:
    """Queries of the catalog tables, for a class that owns ``conn``, ``_guard`` and ``atomic()``
    (``Connection``)."""

    conn: Any
    _guard: Any
    driver: Any  # the DB-API module: sqlite3, or SQLCipher's
    source: str | None
    _writer: int | None
    atomic: Callable[[], AbstractContextManager[None]]

    def branch_row(self, branch_id: int) -> BranchRow | None:
        """One branch, by id."""
        with self._guard:
            row = self.conn.execute(
                f"SELECT {BRANCH_COLS} FROM branches WHERE id = ?", (branch_id,)
            ).fetchone()
        return None if row is None else BranchRow(*row)

    def branch_by_name(self, name: str) -> BranchRow | None:
        """One branch, by name."""
        with self._guard:
            row = self.conn.execute(
                f"SELECT {BRANCH_COLS} FROM branches WHERE name = ?", (name,)
            ).fetchone()
        return None if row is None else BranchRow(*row)

    def branch_rows(self, parent: int | None = None, since_id: int = -1) -> list[BranchRow]:
        """Every branch with an id after ``since_id``, or the direct forks of ``parent``."""
        with self._guard:
            if parent is None:
                rows = self.conn.execute(
                    f"SELECT {BRANCH_COLS} FROM branches WHERE id > ? ORDER BY id", (since_id,)
                ).fetchall()
            else:
                rows = self.conn.execute(
                    f"SELECT {BRANCH_COLS} FROM branches WHERE parent = ? ORDER BY id", (parent,)
                ).fetchall()
        return [BranchRow(*r) for r in rows]

    def insert_branches(
        self, rows: Sequence[tuple[str | None, int, int, str, int | None]]
    ) -> list[int]:
        """Insert forks (name, parent, fork_seq, params, sweep); returns their ids."""
        ids: list[int] = []
        created = now_ms()
        with self._guard:
            try:
                with self.atomic():
                    for name, parent, fork_seq, params, sweep in rows:
                        cur = self.conn.execute(
                            "INSERT INTO branches (name, parent, fork_seq, params, created, sweep) "
                            "VALUES (?, ?, ?, ?, ?, ?)",
                            (name, parent, fork_seq, params, created, sweep),
                        )
                        ids.append(int(cur.lastrowid))
            except self.driver.IntegrityError as e:
                if "FOREIGN KEY" in str(e):
                    parents = {parent for _, parent, *_ in rows}
                    raise parent_missing(p for p in parents if self.branch_row(p) is None) from None
                raise name_taken(rows) from None
        return ids

    def insert_sweep(self, base: int, at: int, spec: str, created: int | None = None) -> int:
        """Record a sweep of forks of ``base`` at ``at``; returns its id."""
        with self._guard:
            cur = self.conn.execute(
                "INSERT INTO sweeps (base, at, spec, created) VALUES (?, ?, ?, ?)",
                (base, at, spec, now_ms() if created is None else created),
            )
            return int(cur.lastrowid)

    def put_run(self, branch: int, sweep: int, status: str, **fields: Any) -> None:
        """Create or update a fork's run record (status, and any of RUN_FIELDS)."""
        check_run_fields(fields)
        cols = ["branch", "sweep", "status", *fields]
        with self._guard:
            self.conn.execute(
                f"INSERT INTO fork_runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))}) "
                "ON CONFLICT(branch) DO UPDATE SET "
                + ", ".join(f"{c} = excluded.{c}" for c in cols[2:]),
                [branch, sweep, status, *fields.values()],
            )

    def runs(self, sweep: int | None = None) -> list[RunRow]:
        """Fork run records, of one sweep or of all, by branch."""
        sql = f"SELECT {RUN_COLS} FROM fork_runs"
        with self._guard:
            if sweep is None:
                rows = self.conn.execute(sql + " ORDER BY branch").fetchall()
            else:
                rows = self.conn.execute(
                    sql + " WHERE sweep = ? ORDER BY branch", (sweep,)
                ).fetchall()
        return [RunRow(*r) for r in rows]

    def sweep_rows(self) -> list[SweepRow]:
        """Every recorded sweep, by id (``how`` is None in an older file opened read-only)."""
        with self._guard:
            rows = self.conn.execute(
                "SELECT id, base, at, spec, created, how FROM sweeps ORDER BY id"
            ).fetchall()
        return [SweepRow(*r) for r in rows]

    def set_sweep_how(self, sweep: int, how: str) -> None:
        """Record how a sweep was run, so a rerun or resume can run it the same way."""
        with self._guard:
            self.conn.execute("UPDATE sweeps SET how = ? WHERE id = ?", (how, sweep))

    def put_tag(self, label: str, branch: int, seq: int) -> None:
        """Point a label at an event (moving it if it exists)."""
        with self._guard:
            self.conn.execute(
                "INSERT OR REPLACE INTO tags VALUES (?, ?, ?, ?)", (label, branch, seq, now_ms())
            )

    def tag(self, label: str) -> tuple[int, int] | None:
        """(branch, seq) a label points at."""
        with self._guard:
            row = self.conn.execute(
                "SELECT branch, seq FROM tags WHERE label = ?", (label,)
            ).fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

    def tags(self) -> list[tuple[str, int, int]]:
        """Every label: (label, branch, seq), by label."""
        with self._guard:
            rows = self.conn.execute(
                "SELECT label, branch, seq FROM tags ORDER BY label"
            ).fetchall()
        return [(str(a), int(b), int(c)) for a, b, c in rows]

    def subscription(self, name: str) -> int:
        """A subscriber's acknowledged position, created at 0 on first use."""
        with self._guard:
            self.conn.execute(
                "INSERT OR IGNORE INTO subscriptions VALUES (?, 0, ?)", (name, now_ms())
            )
            (position,) = self.conn.execute(
                "SELECT position FROM subscriptions WHERE name = ?", (name,)
            ).fetchone()
        return int(position)

    def ack(self, name: str, position: int) -> None:
        """Move a subscriber's acknowledged position."""
        with self._guard:
            self.conn.execute(
                "UPDATE subscriptions SET position = ?, updated = ? WHERE name = ?",
                (position, now_ms(), name),
            )

    def _writer_id(self) -> int:
        """This process's writer row (registered on its first write): a random id, not a host."""
        if self._writer is None:
            token = uuid.uuid4().hex[:16]
            self.conn.execute(
                "INSERT INTO writers (writer, pid, source, started) VALUES (?, ?, ?, ?)",
                (token, os.getpid(), self.source, now_ms()),
            )
            (self._writer,) = self.conn.execute(
                "SELECT id FROM writers WHERE writer = ?", (token,)
            ).fetchone()
        return self._writer

    def provenance(self, branch: int, seq: int) -> Provenance | None:
        """Who wrote one stored event, and how (effect timing, world time, caller id)."""
        with self._guard:
            row = self.conn.execute(
                "SELECT w.writer, w.pid, w.source, e.ts, e.fx_ms, e.attempts, e.occurred_at, "
                "e.render_ms, e.event_id FROM events e LEFT JOIN writers w ON w.id = e.writer "
                "WHERE e.branch = ? AND e.seq = ?",
                (branch, seq),
            ).fetchone()
        return None if row is None else Provenance(*row)
