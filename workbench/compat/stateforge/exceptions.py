"""The StateForge design's error names, as classes of ours: each subclasses the workbench error
that says what the caller can do (``NotFound``, ``InvalidValue``, ``NotAJournal``), so an
``except`` clause written for either catches it, and the CLI maps it to the same exit code
(1 not found or failed, 2 a wrong argument). ``StateForgeError`` is our root,
``WorkbenchError``."""

from __future__ import annotations

from ...errors import (
    EncryptionKeyError,
    InvalidValue,
    NotFound,
    StorageError,
    ValueTypeError,
    WorkbenchError,
)

StateForgeError = WorkbenchError

__all__ = [
    "AdapterError",
    "AmbiguousRefError",
    "CrossSessionRollbackError",
    "EncryptionKeyError",
    "EncryptionKeyFormatError",
    "EncryptionUnavailableError",
    "HistoryTooDeepError",
    "MemoryUnitNotFoundError",
    "SessionNotFoundError",
    "SnapshotNotFoundError",
    "StateForgeError",
    "StorageError",
    "ValueTypeError",
]


class SessionNotFoundError(NotFound):
    """No session has that id, label or id prefix."""


class SnapshotNotFoundError(NotFound):
    """No snapshot has that ref (``head~N`` past the root, an unknown label or id)."""


class MemoryUnitNotFoundError(NotFound):
    """No session holds a unit with that id."""


class CrossSessionRollbackError(InvalidValue):
    """A rollback's target snapshot belongs to another session."""


class HistoryTooDeepError(InvalidValue):
    """A session's history is longer than the ``max_depth`` asked for."""


class AmbiguousRefError(InvalidValue):
    """A label or id prefix names more than one session or snapshot: give more of the id."""


class AdapterError(WorkbenchError):
    """A framework adapter (LangChain, LangGraph) cannot do what was asked (a missing extra, a
    sync call inside a running event loop)."""


class EncryptionUnavailableError(InvalidValue):
    """An encryption key was given but SQLCipher (``sqlcipher3``) is not installed."""


class EncryptionKeyFormatError(InvalidValue):
    """An encryption key that is neither a non-empty passphrase nor 32 raw bytes."""
