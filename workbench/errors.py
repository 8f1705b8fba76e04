"""The error hierarchy: one root, a few subclasses by what the caller can do next.

Every error carries structured fields and a message that says what happened and what to do.
Errors survive pickling (they cross process boundaries in sweeps). Faults of the database or
the file system (``sqlite3`` and ``OSError``) are translated into ``StorageError`` subclasses
at the storage boundary, so no driver exception reaches a caller.
"""

from __future__ import annotations

import errno
from typing import Any


class WorkbenchError(Exception):
    """Root of every error lithify raises on purpose."""

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields
        for name, value in fields.items():
            setattr(self, name, value)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, self.fields))

    def __str__(self) -> str:
        return self.message


def _rebuild(cls: type[WorkbenchError], message: str, fields: dict[str, Any]) -> WorkbenchError:
    return cls(message, **fields)


class NotFound(WorkbenchError):
    """A branch, name, seq, hash or file that does not exist."""


class InvalidValue(WorkbenchError, ValueError):
    """A value that is not JSON-safe or an argument out of range; nothing was written."""


class Conflict(WorkbenchError):
    """Another writer got there first (a name taken, an ambiguous hash prefix)."""


class BranchConflict(Conflict):
    """A stale branch handle: another writer advanced the branch since this handle last saw it,
    or an explicit expected head did not match."""


class EffectInFlight(Conflict):
    """Another live process announced the same effect on the same branch and has not finished
    it; running ``fn`` here too would run it twice."""


class NotAJournal(WorkbenchError):
    """The file is not a lithify journal, is empty, or was written by a newer schema version."""


class IntegrityError(WorkbenchError):
    """The stored history does not match its hashes (or a snapshot its seal)."""


class StateMismatch(WorkbenchError):
    """The State class given to ``Journal.open`` is not the one the journal was written with."""


class StateUnavailable(WorkbenchError):
    """A state-level operation on a journal whose State class is not known in this process."""


class StorageError(WorkbenchError):
    """The database or the file system failed (the operation did not happen)."""


class Busy(StorageError):
    """The journal stayed locked by another connection past the busy timeout."""


class ReadOnly(StorageError):
    """The journal (or its folder) cannot be written, or it was opened read-only."""


class DiskFull(StorageError):
    """A write failed for lack of space, a file size limit, or an I/O error while writing."""


class Corrupt(StorageError):
    """SQLite reports a damaged page (or a stored value cannot be decoded)."""


class ForkFailed(WorkbenchError):
    """A fork's run raised: ``error`` holds the cell, error name and message (and, for a
    notebook, the traceback and the executed notebook's path)."""


def os_error(err: OSError, path: str, doing: str = "") -> WorkbenchError:
    """The WorkbenchError for a file-system fault on (or beside) the journal at ``path``."""
    where = "the in-memory journal" if path == ":memory:" else path
    while_ = f" while {doing}" if doing else ""
    said = f"(the system says: {err})"
    if err.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        return DiskFull(f"could not write beside {where}{while_}: no space left or a file size limit "
                        f"{said}; free space and try again", path=path)
    if err.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return ReadOnly(f"cannot write beside {where}{while_}: it or its folder is read-only {said}; "
                        "read commands still work, or copy the journal to a writable folder", path=path)
    if err.errno == errno.ENOENT:
        return NotFound(f"{where}{while_}: a file is missing {said}", path=path)
    return StorageError(f"{where}{while_}: the file system failed {said}", path=path)
