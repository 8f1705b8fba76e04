"""The write path of the PostgreSQL backend: one event, a branch's buffered events, and long
batches of plain events (binary COPY). A long batch of one branch checks once that it follows
the stored head and spares its rows the trigger; a failed write is translated, and checked: a
write whose COMMIT lost its connection may have landed (``landed``)."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable, Iterable, Sequence

from ...errors import BranchConflict, StorageError, WorkbenchError
from ..base import EVENT_SHAPES, EventRow, Head
from ..common import APPEND_REFUSED, SNAPSHOT_COLS, TRIGGERLESS_BATCH, branch_moved, event_id_taken
from .connection import PgConnection
from .faults import is_driver_error, translate

_INSERT = {
    shape: (
        "INSERT INTO events (branch, seq, kind, hash, parent_hash, ts, payload, {}writer) "
        "VALUES ({}%s)"
    ).format("".join(c + ", " for c in extra), "%s, " * (7 + len(extra)))
    for shape, extra in EVENT_SHAPES.items()
}


class PgWrites(PgConnection):
    """Appends, for the PostgreSQL backend (``head`` comes from its reads, ``fork_seq`` from
    ``Storage``'s default)."""

    head: Callable[[int], Head | None]
    fork_seq: Callable[[int], int | None]

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

    def append_runs(self, runs: Sequence[Sequence[tuple[EventRow, str]]]) -> None:
        """Several branches' runs of consecutive events in one transaction, all or nothing, in
        one pipeline: where each run is one branch's consecutive events, one query checks that
        every run follows its branch's stored head (or the run before it in this call) and the
        rows skip the trigger, each run's branch trusted in turn; other runs keep the trigger.
        A savepoint, a check and the trigger per branch made a clone's cost follow its
        branches."""
        runs = [run for run in runs if run]
        rows = [item for run in runs for item in run]
        if not rows:
            return
        with self.lock:
            try:
                with self.atomic():
                    w = self._writer_id()
                    trusted = self._trust_runs(runs)
                    with self.conn.pipeline(), self.conn.cursor() as cur:
                        for run, trust in zip(runs, trusted, strict=True):
                            if trust:
                                cur.execute(
                                    "SELECT set_config('lithify.trusted_branch', %s, true)",
                                    (str(run[0][0][0]),),
                                )
                            for shape, group in itertools.groupby(run, key=operator.itemgetter(1)):
                                cur.executemany(_INSERT[shape], [(*r, w) for r, _ in group])
                            if trust:
                                cur.execute("SELECT set_config('lithify.trusted_branch', '', true)")
            except Exception as e:
                first, last = rows[0][0], rows[-1][0]
                err = self._append_error(first[0], first[1] - 1, e)
                if not self.landed(last[0], last[1], last[3], err):
                    raise err from None

    def _trust_runs(self, runs: Sequence[Sequence[tuple[EventRow, str]]]) -> list[bool]:
        """Which runs may skip the trigger: each one branch's consecutive events, checked here
        to follow the branch's stored head or fork point (one query for them all) or the run
        of the same branch just before it in this call. Raises the trigger's refusal for a run
        that follows nothing."""
        trusted: list[bool] = []
        ends: dict[int, int] = {}  # branch -> the last seq of its runs so far in this call
        ask: list[tuple[int, int]] = []
        for run in runs:
            branch, first = run[0][0][0], run[0][0][1]
            seqs = [r[1] for r, _ in run]
            one = all(r[0] == branch for r, _ in run) and seqs == list(
                range(first, first + len(run))
            )
            trusted.append(one)
            if one:
                if ends.get(branch) != first - 1:
                    ask.append((branch, first))
                ends[branch] = seqs[-1]
            else:
                ends.pop(branch, None)
        if ask:
            bad = self.conn.execute(
                "SELECT r.b FROM unnest(%s::bigint[], %s::bigint[]) AS r(b, s) WHERE NOT EXISTS "
                "(SELECT 1 FROM events WHERE branch = r.b AND seq = r.s - 1) AND NOT EXISTS "
                "(SELECT 1 FROM branches WHERE id = r.b AND fork_seq = r.s - 1) LIMIT 1",
                ([b for b, _ in ask], [q for _, q in ask]),
            ).fetchone()
            if bad is not None:
                raise self.pg.errors.IntegrityConstraintViolation(APPEND_REFUSED)
        return trusted

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
        """Inside a transaction: check that ``first_seq`` follows the branch's stored head and
        mark the branch trusted for this transaction only (its rows are numbered by the column
        default, without a lock: see schema.py)."""
        self.conn.execute("SELECT set_config('lithify.trusted_branch', %s, true)", (str(branch),))
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
                                f"INSERT INTO snapshots ({SNAPSHOT_COLS}) VALUES (%s, %s, %s, %s, "
                                "%s) ON CONFLICT "
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
