"""The error hierarchy: one root, a few subclasses by what the caller can do next.

Every error carries structured fields and a message that says what happened and what to do.
Errors survive pickling (they cross process boundaries in sweeps)."""

from __future__ import annotations

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
    """A stale branch handle: another writer advanced the branch since this handle last saw it."""


class NotAJournal(WorkbenchError):
    """The file is not a lithify journal, or was written by a newer schema version."""


class IntegrityError(WorkbenchError):
    """The stored history does not match its hashes."""
