"""Observations read as Arrow columns for the results matrix (SQLite backend).

ADBC's SQLite driver hands polars Arrow columns two to three times as fast as sqlite3's rows,
but it carries its own copy of SQLite, whose locks and closes would break this process's locks
on the journal: it never opens the journal. The observations are copied, by the journal's own
connection, into scratch files in the temporary directory, and ADBC reads those.
"""

from __future__ import annotations

import os
import re
import sqlite3
import uuid
from typing import Any
from urllib.parse import quote

from ..announcements import process_token, token_alive
from .files import ro_uri

OBS_ARROW_CHUNKS = 16  # ranges copied for ADBC, each read while the next ones are copied
OBS_ARROW_READERS = 2  # threads reading them (ADBC, like the copy, releases the GIL)
_OBSERVATIONS_BETWEEN = (
    "SELECT position, branch, seq, metric, value, ts FROM events WHERE position > ? "
    "AND position <= ? AND metric IS NOT NULL ORDER BY position"
)
_SCRATCH = "lithify-obs-"  # + the writing process's token, a random id, the range's number
_SCRATCH_NAME = re.compile(
    re.escape(_SCRATCH) + r"(?P<token>\d+\.\d*\..+)-[0-9a-f]{12}-\d+\.db(-journal)?\Z"
)


def _drop_dead_scratch(folder: str) -> None:
    """Remove the matrix's scratch files that a killed process left in ``folder`` (those of a
    process still running, this one included, stay); best effort: a file another user owns,
    or a folder that cannot be listed, is left as it is."""
    try:
        names = [n for n in os.listdir(folder) if n.startswith(_SCRATCH)]
    except OSError:
        return
    for name in names:
        match = _SCRATCH_NAME.match(name)
        if match and not token_alive(match["token"]):
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass


def arrow(conn: sqlite3.Connection, top: int) -> Any:
    """The observations up to global position ``top`` as a polars frame read by ADBC, or
    None (no driver, no room for the scratch files: the caller reads them through sqlite3).

    They are copied through ``conn`` (the caller holds its lock) in OBS_ARROW_CHUNKS ranges of
    positions, each into a scratch file of its own, and OBS_ARROW_READERS worker threads read
    the files as Arrow while the next ranges are copied (both release the GIL). Events are
    append-only and positions only grow, so the ranges up to ``top`` are one consistent
    snapshot although each copy is its own transaction."""
    try:
        import adbc_driver_sqlite.dbapi as adbc
    except ImportError:
        return None
    import tempfile
    from concurrent.futures import Future, ThreadPoolExecutor

    import polars as pl

    def read(path: str) -> Any:
        con = adbc.connect(ro_uri(path), autocommit=True)
        try:
            cur = con.cursor()
            cur.execute("SELECT * FROM obs")
            frame = pl.DataFrame(cur.fetch_arrow())
            cur.close()
        finally:
            con.close()
        return frame

    folder = tempfile.gettempdir()
    _drop_dead_scratch(folder)
    stem = os.path.join(folder, f"{_SCRATCH}{process_token()}-{uuid.uuid4().hex[:12]}")
    step = -(-top // OBS_ARROW_CHUNKS)
    scratch: list[str] = []
    reads: list[Future[Any]] = []
    try:
        with ThreadPoolExecutor(OBS_ARROW_READERS, thread_name_prefix="lithify-obs") as worker:
            for lo in range(0, top, step):
                path = f"{stem}-{len(scratch)}.db"
                scratch.append(path)
                conn.execute(
                    "ATTACH DATABASE ? AS lithify_scratch", (f"file:{quote(path)}?mode=rwc",)
                )
                try:
                    conn.execute("PRAGMA lithify_scratch.journal_mode = OFF")
                    conn.execute("PRAGMA lithify_scratch.synchronous = OFF")
                    conn.execute(
                        "CREATE TABLE lithify_scratch.obs AS " + _OBSERVATIONS_BETWEEN,
                        (lo, min(lo + step, top)),
                    )
                finally:
                    conn.execute("DETACH DATABASE lithify_scratch")
                reads.append(worker.submit(read, path))
            frames = [r.result() for r in reads]
        return pl.concat(frames, how="vertical_relaxed") if frames else None
    except Exception:  # noqa: BLE001 (no room or no ATTACH here: the sqlite3 rows are exact too)
        return None
    finally:
        for path in scratch:
            for suffix in ("", "-journal"):
                try:
                    os.unlink(path + suffix)
                except OSError:
                    pass
