"""Journal files on disk, as this process holds them: which it has open (and through which
driver), and what can be learnt of one without a connection.

A journal file is only ever opened through SQLite: closing any other descriptor of it would
drop every POSIX lock this process holds on it, the live connection's included, and another
process could then delete the WAL under it. SQLite shares lock state between the connections
one library opens on one file in one process, and keeps their descriptors open while a lock is
held; two libraries (sqlite3 and SQLCipher's copy) do not share it. So a file is opened by one
driver at a time here (a registry by inode), and never with a plain descriptor while it is held.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from typing import Any
from urllib.parse import quote

from ...errors import NotAJournal
from ..common import APPLICATION

_OPEN_FILES: dict[tuple[int, int], list[Any]] = {}  # (st_dev, st_ino) -> [driver name, count]
_OPEN_LOCK = threading.RLock()


def file_id(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def size_of(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def is_empty(path: str) -> bool:
    """A 0-byte file with no WAL content (what truncation to zero looks like)."""
    return size_of(path) == 0 and size_of(path + "-wal") == 0


def stamp(path: str) -> tuple[int, int, int, int] | None:
    """What changes whenever a file's bytes do: (inode, size, mtime, ctime)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def read_uri(path: str) -> tuple[str, bool]:
    """(URI, immutable) of a read-only connection that creates no file beside the journal when
    its WAL holds nothing (see the module docstring), else an ordinary read-only one."""
    if size_of(path + "-wal") == 0:
        return ro_uri(path, immutable=True), True
    return ro_uri(path), False


def ro_uri(path: str, immutable: bool = False) -> str:
    return f"file:{quote(os.path.abspath(path))}?mode=ro" + ("&immutable=1" if immutable else "")


def is_journal_file(path: str) -> bool:
    """True if ``path`` is a (plain) lithify journal; reads it only through SQLite, read-only."""
    if not os.path.isfile(path):
        return False
    with _OPEN_LOCK:
        fid = file_id(path)
        if fid is not None and fid in _OPEN_FILES:
            return True  # this process has it open as a journal
        if is_empty(path):
            return False
        return meta_value(path, "application") == APPLICATION


def meta_value(path: str, key: str, timeout: float = 5.0) -> str | None:
    """One value of a journal file's meta table, read through SQLite read-only without
    creating a file beside it (None: no such file, key or table, or a file that cannot be
    read without its key)."""
    try:
        con = sqlite3.connect(read_uri(path)[0], uri=True, timeout=timeout, check_same_thread=False)
    except sqlite3.Error:
        return None
    try:
        row = con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.Error:
        return None
    finally:
        con.close()
    return None if row is None else str(row[0])


def truncation(path: str) -> str | None:
    """How much of a (plain) journal file is missing, if it is shorter than its header records
    and has no WAL content that would hold the rest; else None. Reads the 100-byte header with
    a plain descriptor, so only while this process holds no connection to the file."""
    with _OPEN_LOCK:
        fid = file_id(path)
        if fid is None or fid in _OPEN_FILES:
            return None
        try:
            with open(path, "rb") as f:
                header = f.read(100)
        except OSError:
            return None
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        return None
    page = int.from_bytes(header[16:18], "big")
    page = 65536 if page == 1 else page
    recorded = int.from_bytes(header[28:32], "big")
    if header[24:28] != header[92:96]:
        return None  # the header's page count is stale (written by an old SQLite): unknown
    return missing_pages(path, page, recorded)


def missing_pages(path: str, page: int, recorded: int) -> str | None:
    size = size_of(path)
    if size_of(path + "-wal") > 0 or page <= 0 or recorded * page <= size:
        return None  # pages past the file's end may be in the WAL
    return (
        f"the file is truncated: it holds {size // page:,} of the {recorded:,} pages its header "
        f"records ({size:,} of {recorded * page:,} bytes)"
    )


def claim(fid: tuple[int, int], driver: str, path: str, encrypted: bool) -> bool:
    """Register one open of the file ``fid`` through ``driver``; refuse a file this process
    holds through the other driver. Returns whether no one here held it before."""
    with _OPEN_LOCK:
        held = _OPEN_FILES.get(fid)
        if held is not None and held[0] != driver:
            raise NotAJournal(
                f"{path} is open in this process as "
                + (
                    "a plain journal: open it without key="
                    if encrypted
                    else "an encrypted journal: open it with its key="
                ),
                path=path,
            )
        entry = _OPEN_FILES.setdefault(fid, [driver, 0])
        entry[1] += 1
        return held is None


def release(fid: tuple[int, int]) -> None:
    """End one open registered by ``claim``."""
    with _OPEN_LOCK:
        entry = _OPEN_FILES.get(fid)
        if entry is not None:
            entry[1] -= 1
            if entry[1] <= 0:
                del _OPEN_FILES[fid]
