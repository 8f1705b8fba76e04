"""The catalog beside the events: branches, sweeps and their fork runs, tags, subscriptions and
who wrote what (SQL of the PostgreSQL backend)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...errors import WorkbenchError
from ..base import BranchRow, Provenance, RunRow, SweepRow
from ..common import (
    BRANCH_COLS,
    RUN_COLS,
    check_run_fields,
    name_taken,
    now_ms,
    parent_missing,
)
from .connection import PgConnection


class PgCatalog(PgConnection):
    """Queries of the catalog tables, for the PostgreSQL backend."""

    def branch_row(self, branch_id: int) -> BranchRow | None:
        """One branch."""
        row = self._one(f"SELECT {BRANCH_COLS} FROM branches WHERE id = %s", (branch_id,))
        return None if row is None else BranchRow(*row)

    def branch_by_name(self, name: str) -> BranchRow | None:
        """One branch, by name."""
        row = self._one(f"SELECT {BRANCH_COLS} FROM branches WHERE name = %s", (name,))
        return None if row is None else BranchRow(*row)

    def branch_rows(self, parent: int | None = None, since_id: int = -1) -> list[BranchRow]:
        """Branches (the forks of ``parent``, or with ids after ``since_id``)."""
        if parent is None:
            rows = self._all(
                f"SELECT {BRANCH_COLS} FROM branches WHERE id > %s ORDER BY id", (since_id,)
            )
        else:
            rows = self._all(
                f"SELECT {BRANCH_COLS} FROM branches WHERE parent = %s ORDER BY id", (parent,)
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
            if isinstance(e.__cause__, self.pg.errors.ForeignKeyViolation):
                parents = {parent for _, parent, *_ in rows}
                raise parent_missing(p for p in parents if self.branch_row(p) is None) from None
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
            f"SELECT {RUN_COLS} FROM fork_runs WHERE %s::bigint IS NULL OR sweep = %s::bigint "
            "ORDER BY branch",
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
