"""The write path of the SQLite backend: one event, a branch's buffered events, and long
batches of plain events (one INSERT ... SELECT over json_each per chunk, prepared on a second
thread while the chunk before is inserted). A failed write is translated, and checked: a write
SQLite reports as failed may have committed (``landed``).
"""

from __future__ import annotations

import itertools
import operator
import queue
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import orjson

from ...errors import BranchConflict, ReadOnly, StorageError, WorkbenchError
from ..base import EVENT_SHAPES, EventRow, Head
from ..common import APPEND_REFUSED, SNAPSHOT_COLS, TRIGGERLESS_BATCH, branch_moved, event_id_taken
from .faults import is_driver_error, translate
from .schema import COMPRESS_FROM, COMPRESS_LEVEL, FOLLOW_HEAD

try:  # ISA-L writes zlib's format 6x faster than zlib at the same level and ratio
    from isal.isal_zlib import compress as deflate
except ImportError:  # installed without its dependencies: the standard library's, slower
    from zlib import compress as deflate

# Columns a shape (base.EVENT_SHAPES) leaves out are stored as NULL without being bound:
# Python's sqlite3 binds None (and bytes) through its adapter lookup, which costs more than
# the insert of a small row does.
# An effect whose payload is stored compressed has a shape of its own ("effect+z"): its row
# ends with the payload's size (see schema.COMPRESS_FROM).
_SHAPES = {
    **EVENT_SHAPES,
    **{s + "+z": (*x, "payload_size") for s, x in EVENT_SHAPES.items() if s.startswith("effect")},
}
_INSERT_SHAPE = {
    shape: (
        "INSERT INTO events (branch, seq, kind, hash, parent_hash, ts, payload, {}writer) "
        "VALUES ({}?)"
    ).format("".join(c + ", " for c in extra), "?, " * (7 + len(extra)))
    for shape, extra in _SHAPES.items()
}


def deflated(text: str) -> tuple[bytearray, int] | None:
    """zlib's compress() of a text of COMPRESS_FROM characters or more, and the size of its
    UTF-8 bytes, where that saves a fifth or more (else None: stored as text)."""
    if len(text) < COMPRESS_FROM:
        return None
    data = text.encode("utf-8")
    small = deflate(data, COMPRESS_LEVEL)
    if len(small) * 5 > len(data) * 4:
        return None
    return bytearray(small), len(data)


def packed(row: EventRow, shape: str) -> tuple[EventRow, str]:
    """The row as stored: an effect's large payload compressed (``deflated``), its size
    appended."""
    if shape[0] != "e":
        return row, shape
    small = deflated(row[6])
    if small is None:
        return row, shape
    return (*row[:6], small[0], *row[7:], small[1]), shape + "+z"


SNAPSHOT_INSERT = f"INTO snapshots ({SNAPSHOT_COLS}, state_size) VALUES (?, ?, ?, ?, ?, ?)"


def snapshot_row(
    branch: int, seq: int, text: str, digest: bytes, built: str | None
) -> tuple[Any, ...]:
    """A snapshot's row as stored (SNAPSHOT_INSERT): a large state compressed (``deflated``)
    with its size, any other as its text (size NULL)."""
    small = deflated(text)
    if small is None:
        return (branch, seq, text, digest, built, None)
    return (branch, seq, small[0], digest, built, small[1])


_INSERT_BATCH = (
    "INSERT INTO events (branch, seq, kind, hash, parent_hash, ts, payload, writer) "
    "SELECT ?1, ?2 + j.key, ?3, substr(?4, j.key * 32 + 33, 32), substr(?4, j.key * 32 + 1, 32), "
    "?5, j.value, ?6 "
    "FROM json_each(?7) j"  # json_each yields the array in order, so positions follow seqs
)


class _ChunkWorker:
    """Runs ``fn(*args)`` for submitted chunks, in order, on one background thread (started
    with the second chunk: a single chunk runs inline). ``finish`` waits and re-raises."""

    def __init__(self, fn: Callable[..., None]) -> None:
        self.fn = fn
        self.first: tuple[Any, ...] | None = None
        self.queue: queue.Queue[tuple[Any, ...] | None] | None = None
        self.thread: threading.Thread | None = None
        self.error: BaseException | None = None
        self.cancelled = False

    def submit(self, args: tuple[Any, ...]) -> None:
        if self.error is not None:
            raise self.error
        if self.first is None and self.queue is None:
            self.first = args
            return
        if self.queue is None:
            self.queue = queue.Queue(maxsize=4)
            self.thread = threading.Thread(
                target=self._run, name="lithify-append-batch", daemon=True
            )
            self.thread.start()
            self.queue.put(self.first)
            self.first = None
        self.queue.put(args)

    def _run(self) -> None:
        assert self.queue is not None
        while (args := self.queue.get()) is not None:
            if self.error is None and not self.cancelled:
                try:
                    self.fn(*args)
                except BaseException as e:  # handed to the submitting thread by finish()
                    self.error = e

    def abandon(self) -> None:
        """Stop: queued chunks are skipped (the caller rolls back)."""
        self.cancelled = True
        self.first = None
        if self.queue is not None:
            self.queue.put(None)
            assert self.thread is not None
            self.thread.join()
            self.queue = None

    def finish(self) -> None:
        if self.queue is not None:
            self.queue.put(None)
            assert self.thread is not None
            self.thread.join()
        elif self.first is not None and self.error is None:
            self.fn(*self.first)
        self.first = None
        if self.error is not None:
            raise self.error


class EventWrites:
    """Appends, for a class that owns the connection (``Connection``)."""

    conn: Any
    driver: Any  # the DB-API module: sqlite3, or SQLCipher's
    path: str
    lock: threading.RLock
    _guard: Any
    _in_tx: bool
    _writer: int | None
    _has_json_each: bool | None
    readonly: bool
    atomic: Callable[[], AbstractContextManager[None]]
    writable: Callable[[], None]
    _writer_id: Callable[[], int]
    _end_stray_transaction: Callable[[], None]
    head: Callable[[int], Head | None]
    fork_seq: Callable[[int], int | None]

    def _bindable(self, row: EventRow, shape: str) -> tuple[Any, ...]:
        # bytearray binds directly; bytes would go through the adapter lookup (see EVENT_SHAPES)
        w = self._writer if self._writer is not None else self._writer_id()
        if shape[0] == "e":  # an effect: the key hash is a blob too
            return (
                *row[:3],
                bytearray(row[3]),
                bytearray(row[4]),
                row[5],
                row[6],
                bytearray(row[7]),
                *row[8:],
                w,
            )
        return (*row[:3], bytearray(row[3]), bytearray(row[4]), *row[5:], w)

    def append(self, row: EventRow, shape: str) -> None:
        """Insert one event of an EVENT_SHAPES shape (committed on return unless in atomic())."""
        stored, how = packed(row, shape)  # before the lock: no other append waits for it
        lock = self.lock
        lock.acquire()
        try:
            conn = self.conn
            if conn is None:
                raise WorkbenchError(
                    "this journal is closed; open it again with Journal.open(path)"
                )
            conn.execute(_INSERT_SHAPE[how], self._bindable(stored, how))
        except Exception as e:
            self._end_stray_transaction()
            err = self._append_error(row[0], row[1] - 1, e)
            if not self.landed(row[0], row[1], row[3], err):
                raise err from None
        finally:
            lock.release()

    def landed(
        self, branch: int, seq: int, event_hash: bytes, err: BaseException | None = None
    ) -> bool:
        """Whether the event (branch, seq) with this hash is stored: after an error, a write may
        have committed anyway (SQLite reports a failed automatic checkpoint, or an interrupt
        that arrived after the commit, as the statement's error)."""
        if isinstance(err, BranchConflict) or not (err is None or isinstance(err, StorageError)):
            return False
        try:
            with self._guard:
                row = self.conn.execute(
                    "SELECT hash FROM events WHERE branch = ? AND seq = ?", (branch, seq)
                ).fetchone()
        except WorkbenchError:
            return False
        return row is not None and bytes(row[0]) == bytes(event_hash)

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
        """Insert consecutive plain events of one branch in one transaction, all or nothing.

        ``chunks`` yields (hashes, payload texts) in order; ``snapshots`` (seq, state, digest)
        is read once it is exhausted, and an exception from it rolls everything back. Each
        chunk is one INSERT ... SELECT over json_each (four bound values per chunk rather than
        eight per event), run on a second thread while the next chunk is prepared: SQLite
        works without the GIL, so preparing and inserting overlap on two cores."""
        with self.lock:
            if self._in_tx:
                raise WorkbenchError("append_batch cannot join an open transaction")
            seq, previous = first_seq, parent
            try:
                with self.atomic():
                    w = self._writer_id()
                    spared = self._spare_trigger(branch, first_seq, rows)
                    worker = _ChunkWorker(self._insert_chunk)
                    try:
                        for hashes, texts in chunks:
                            if hashes:
                                worker.submit((branch, seq, kind, previous, hashes, ts, w, texts))
                                seq += len(hashes)
                                previous = hashes[-1]
                    except BaseException:
                        worker.abandon()
                        raise
                    worker.finish()  # re-raises the first error the inserts met
                    if spared:
                        self.conn.execute(FOLLOW_HEAD)
                    if snapshots:
                        self.conn.executemany(
                            "INSERT OR REPLACE " + SNAPSHOT_INSERT,
                            [snapshot_row(branch, s, text, d, built) for s, text, d in snapshots],
                        )
            except Exception as e:
                err = self._append_error(branch, first_seq - 1, e)
                if seq == first_seq or not self.landed(branch, seq - 1, previous, err):
                    raise err from None

    def _insert_chunk(
        self,
        branch: int,
        first_seq: int,
        kind: str,
        parent: bytes,
        hashes: Sequence[bytes],
        ts: int,
        writer: int,
        texts: Sequence[str],
    ) -> None:
        if self._json_each():
            chain = b"".join((parent, *hashes))  # event k: hash at k + 1, parent at k
            self.conn.execute(
                _INSERT_BATCH,
                (
                    branch,
                    first_seq,
                    kind,
                    chain,
                    ts,
                    writer,
                    orjson.dumps(list(texts)).decode("utf-8"),
                ),
            )
        else:
            parents = [parent, *hashes[:-1]]
            bind = self._bindable
            self.conn.executemany(
                _INSERT_SHAPE["plain"],
                [
                    bind((branch, first_seq + i, kind, h, p, ts, text), "plain")
                    for i, (h, p, text) in enumerate(zip(hashes, parents, texts, strict=True))
                ],
            )

    def _json_each(self) -> bool:
        if self._has_json_each is None:
            try:
                self.conn.execute("SELECT count(*) FROM json_each('[]')").fetchone()
                self._has_json_each = True
            except self.driver.OperationalError:  # an SQLite built without JSON functions
                self._has_json_each = False
        return self._has_json_each

    def append_many(self, rows: Sequence[tuple[EventRow, str]]) -> None:
        """Insert several (row, shape) events of one branch in one transaction (all or nothing),
        in order."""
        stored = [packed(r, shape) for r, shape in rows]  # before the lock and the transaction
        with self.lock:
            try:
                with self.atomic():
                    bind = self._bindable
                    spared = self._spare_trigger(rows[0][0][0], rows[0][0][1], len(rows))
                    for shape, run in itertools.groupby(stored, key=operator.itemgetter(1)):
                        self.conn.executemany(
                            _INSERT_SHAPE[shape], [bind(r, shape) for r, _ in run]
                        )
                    if spared:
                        self.conn.execute(FOLLOW_HEAD)
            except Exception as e:
                err = self._append_error(rows[0][0][0], rows[0][0][1] - 1, e)
                last = rows[-1][0]
                if not self.landed(last[0], last[1], last[3], err):
                    raise err from None

    def _spare_trigger(self, branch: int, first_seq: int, rows: int) -> bool:
        """Inside a write transaction, for a long batch of one branch's consecutive events: check
        that its first event follows the stored head (what the trigger would), then drop the
        trigger until the batch is in (the caller re-creates it before COMMIT). False for short
        batches, which keep the trigger."""
        if rows < TRIGGERLESS_BATCH:
            return False
        c = self.conn
        before = first_seq - 1
        follows = c.execute(
            "SELECT 1 FROM events WHERE branch = ? AND seq = ?", (branch, before)
        ).fetchone()
        if follows is None and c.execute(
            "SELECT fork_seq FROM branches WHERE id = ?", (branch,)
        ).fetchone() != (before,):
            raise self.driver.IntegrityError(APPEND_REFUSED)
        if c.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'events_follow_head'"
        ).fetchone():
            c.execute("DROP TRIGGER events_follow_head")
            return True
        return False

    def _append_error(self, branch: int, expected: int, err: BaseException) -> BaseException:
        """What a failed append means: a stale head (BranchConflict), a translated fault, or
        (not the database's) the error itself."""
        if not (is_driver_error(err) or isinstance(err, OSError)):
            return err
        if self.readonly:
            try:
                self.writable()
            except ReadOnly as ro:
                return ro
        if isinstance(err, self.driver.IntegrityError) and "event_id" in str(err):
            return event_id_taken(branch)
        if isinstance(err, self.driver.IntegrityError) and (
            "UNIQUE" in str(err) or APPEND_REFUSED in str(err)
        ):
            try:
                actual = self.head(branch)
                actual_seq = actual[0] if actual else self.fork_seq(branch)
            except WorkbenchError:
                actual_seq = None
            return branch_moved(branch, expected, actual_seq)
        return translate(err, self.path, f"appending to branch {branch}")
