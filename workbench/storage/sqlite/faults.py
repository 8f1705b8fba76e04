"""Faults of the database and the file system, translated at the storage boundary: every
``sqlite3`` (or SQLCipher) and ``OSError`` exception becomes a ``StorageError`` subclass
(``Busy``, ``ReadOnly``, ``DiskFull``, ``IOFailure``, ``Corrupt``) or ``NotAJournal``, naming
the file and what to do, so no driver exception reaches a caller."""

from __future__ import annotations

import os
import resource
import sqlite3
from typing import Any

import orjson

from ...errors import (
    Busy,
    Corrupt,
    DiskFull,
    IOFailure,
    NotAJournal,
    ReadOnly,
    StorageError,
    WorkbenchError,
    os_error,
)

# SQLite's primary result codes by the text sqlite3_errstr gives them, for drivers (SQLCipher's)
# whose exceptions carry no code.
_MESSAGES = {
    "database is locked": "BUSY",
    "database table is locked": "LOCKED",
    "attempt to write a readonly database": "READONLY",
    "disk I/O error": "IOERR",
    "database disk image is malformed": "CORRUPT",
    "database or disk is full": "FULL",
    "unable to open database file": "CANTOPEN",
    "file is not a database": "NOTADB",
    "interrupted": "INTERRUPT",
}


def _sqlite_code(err: BaseException) -> tuple[str, str]:
    """(primary code, extended code) of an SQLite error, e.g. ("IOERR", "SQLITE_IOERR_WRITE")."""
    name = getattr(err, "sqlite_errorname", None)
    if isinstance(name, str) and name.startswith("SQLITE_"):
        return name.split("_")[1], name
    text = str(err)
    for msg, code in _MESSAGES.items():
        if text.startswith(msg):
            return code, "SQLITE_" + code
    return "", ""


def is_driver_error(err: BaseException) -> bool:
    """True for an exception of sqlite3 or of SQLCipher's DB-API module."""
    return isinstance(err, sqlite3.Error) or type(err).__module__.startswith(
        ("sqlcipher3", "pysqlite3")
    )


def translate(err: BaseException, path: str, doing: str = "") -> WorkbenchError:
    """The WorkbenchError for a driver, OS or decoding fault on the journal at ``path``."""
    if isinstance(err, WorkbenchError):
        return err
    where = "the in-memory journal" if path == ":memory:" else path
    while_ = f" while {doing}" if doing else ""
    if isinstance(err, OSError):
        return os_error(err, path, doing)
    if isinstance(err, (orjson.JSONDecodeError, UnicodeDecodeError)):
        return Corrupt(
            f"{where}: a stored value cannot be decoded ({_short(err)}); run `lithify verify` "
            "and restore the journal from a copy",
            path=path,
            damage="a stored value is not valid JSON text",
        )
    text = str(err)
    if text.startswith("Could not decode to UTF-8"):
        # The driver read the row but not its text; its message quotes the damaged bytes.
        column = text.split("'")[1] if text.count("'") >= 2 else "a text column"
        return Corrupt(
            f"{where}: a stored text ({column}) holds damaged bytes that are not UTF-8; run "
            "`lithify verify` to see which events, and restore the journal from a copy",
            path=path,
            damage=f"its stored {column} holds damaged bytes (not UTF-8 text)",
        )
    if not is_driver_error(err):
        return StorageError(f"{where}{while_}: {type(err).__name__}: {err}", path=path)
    if text.startswith("user-defined function raised exception"):
        # the one function on our connections: schema.sqlar_uncompress, on a stored payload
        # or snapshot state
        return Corrupt(
            f"{where}: a compressed payload or snapshot is damaged (its bytes do not decompress "
            "to the text it held); run `lithify verify` to see which, and restore the journal "
            "from a copy",
            path=path,
            damage="a compressed payload or snapshot does not decompress",
        )
    if text.startswith("Cannot operate on a closed database"):
        # a read-only connection replaced because the file changed (see connection.recheck):
        # a stream still reading it stops here rather than mixing two versions of the file
        return Busy(
            f"{where} changed while it was being read (another process wrote to it); read again",
            path=path,
        )
    code, ext = _sqlite_code(err)
    said = f"(SQLite says: {err})"
    if code in ("BUSY", "LOCKED"):
        return Busy(
            f"{where} stayed locked by another connection past the busy timeout{while_} {said}; "
            "another process is writing or holds a long transaction: try again, or open with a "
            "longer timeout (Journal.open(..., timeout=SECONDS))",
            path=path,
        )
    if code == "READONLY" and path != ":memory:":
        blocked = _foreign_sidecars(path)
        if blocked:
            return ReadOnly(f"cannot write {where}{while_}: {blocked}", path=path)
    if code == "READONLY":
        return ReadOnly(
            f"cannot write {where}{while_}: the file or its folder is read-only {said}; read "
            "commands still work, or copy the journal to a writable folder",
            path=path,
        )
    if code == "FULL" or (
        code == "IOERR"
        and (ext == "SQLITE_IOERR" or any(w in ext for w in _ROOM_CODES))
        and _out_of_room(path)
    ):
        return DiskFull(
            f"could not write {where}{while_}: the disk is full or a file size limit was hit "
            f"{said}; nothing of this operation was written: free space and try again",
            path=path,
        )
    if code == "CORRUPT":
        return Corrupt(
            f"{where} is damaged {said}; run `lithify verify` to see where, and restore it from "
            "a copy",
            path=path,
            damage=f"SQLite found a damaged page ({_short(err)})",
        )
    if code == "NOTADB":
        return NotAJournal(
            f"{where} is not a lithify journal, or it is an encrypted one: then open it with "
            f"key= (or set LITHIFY_KEY for the CLI) {said}",
            path=path,
        )
    if code == "CANTOPEN":
        return ReadOnly(
            f"cannot open {where}{while_} {said}; check that the file and its folder exist and "
            "are readable (and writable, to write)",
            path=path,
        )
    if code == "INTERRUPT":
        return StorageError(
            f"{where}: the operation was interrupted{while_} {said}; nothing of it was written",
            path=path,
        )
    if code == "IOERR":
        return IOFailure(
            f"{where}: the disk or file system failed to read or write{while_} {said}; this is "
            "not a lack of space: check the disk (the kernel log, dmesg, names the device), "
            "then run `lithify verify`",
            path=path,
        )
    return StorageError(f"{where}{while_}: {said}", path=path)


# SQLite reports some failures for lack of room as I/O errors: write() failing with EFBIG (a
# file size limit) is SQLITE_IOERR_WRITE, ENOSPC while growing the -shm or at fsync another
# IOERR. Such a code (or a bare IOERR, from a driver that gives no extended code) is DiskFull
# when the room is in fact gone (``_out_of_room``), else an I/O failure of the disk.
_ROOM_CODES = ("WRITE", "FSYNC", "TRUNCATE", "SHMSIZE")
_NEAR_LIMIT = 1 << 20  # a file this close to RLIMIT_FSIZE has met it (pages, WAL frames)
_LOW_SPACE = 16 << 20  # a file system with less free than this has run out


def _out_of_room(path: str) -> bool:
    """Whether a failed write of the journal at ``path`` may be for lack of room: one of its
    files has reached this process's file size limit, or its file system is nearly full. (Only
    stat and statvfs: no descriptor is opened beside the connection.)"""
    if path == ":memory:":
        return False
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if soft != resource.RLIM_INFINITY:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                if os.stat(path + suffix).st_size + _NEAR_LIMIT >= soft:
                    return True
            except OSError:
                continue
    try:
        fs = os.statvfs(os.path.dirname(os.path.abspath(path)))
    except OSError:
        return False
    free = fs.f_bfree if os.geteuid() == 0 else fs.f_bavail  # root may use the reserve
    return free * fs.f_frsize < _LOW_SPACE


def _foreign_sidecars(path: str) -> str:
    """What to say when SQLite's -wal or -shm beside a journal belongs to another user and
    this one cannot write it (a read as that user made it), or "" when that is not the cause."""
    found = []
    for suffix in ("-wal", "-shm"):
        side = path + suffix
        try:
            st = os.stat(side)
        except OSError:
            continue
        if not os.access(side, os.W_OK) and st.st_uid != os.geteuid():
            found.append((side, st))
    if not found:
        return ""
    owners = sorted({st.st_uid for _, st in found})
    who = " and ".join(_user(uid) for uid in owners)
    names = " and ".join(side for side, _ in found)
    held = [side for side, st in found if side.endswith("-wal") and st.st_size > 0]
    if held:
        return (
            f"{names} belong to {who}, and this user cannot write them; {held[0]} holds changes "
            f"not yet in the journal, so do not remove it: ask {who} to open the journal once "
            "and close it (the last close folds the WAL into the file and removes both)"
        )
    return (
        f"{names} belong to {who}, and this user cannot write them (SQLite leaves them beside "
        f"a journal that {who} read or has open); they hold no data: when no process has the "
        "journal open, "
        f"remove them (rm {' '.join(side for side, _ in found)}), or ask {who} or an "
        "administrator to"
    )


def _user(uid: int) -> str:
    try:
        import pwd

        return f"user {pwd.getpwuid(uid).pw_name} (uid {uid})"
    except Exception:  # noqa: BLE001 (no such user, or no pwd module: the number will do)
        return f"uid {uid}"


def _short(err: BaseException, width: int = 120) -> str:
    """A driver's message, cut short: it may quote stored bytes."""
    text = " ".join(str(err).split())
    return text if len(text) <= width else text[: width - 1] + "…"


class Guard:
    """``with storage._guard:`` holds the connection's lock and translates faults (a class,
    not a generator context manager: it wraps every query, so it has to be cheap)."""

    __slots__ = ("storage", "lock")

    def __init__(self, storage: Any) -> None:
        self.storage = storage
        self.lock = storage.lock

    def __enter__(self) -> None:
        self.lock.acquire()
        storage = self.storage
        if storage.conn is None:
            self.lock.release()
            raise WorkbenchError("this journal is closed; open it again with Journal.open(path)")
        if storage._watch is not None:  # a read-only file read as it stands: still the same?
            if storage._watch_depth == 0:
                try:
                    storage.recheck()
                except BaseException:
                    self.lock.release()
                    raise
            storage._watch_depth += 1

    def __exit__(self, kind: Any, err: BaseException | None, tb: Any) -> None:
        storage = self.storage
        try:
            if err is not None:
                storage._end_stray_transaction()
            if storage._watch_depth:
                storage._watch_depth -= 1
                if storage._watch_depth == 0 and err is None and storage._watch is not None:
                    storage.unchanged()
        finally:
            self.lock.release()
        if (
            err is not None
            and not isinstance(err, WorkbenchError)
            and (is_driver_error(err) or isinstance(err, (OSError, orjson.JSONDecodeError)))
        ):
            raise translate(err, self.storage.path) from err
