"""StateForge-compatible sessions, memory units and snapshots on a lithify journal: a user of
that design ports by changing imports only (``stateforge`` to ``workbench.compat.stateforge``,
``stateforge.adapters.*`` to ``workbench.compat.stateforge.adapters.*``).

    from workbench.compat.stateforge import StateForge, units

    sf = StateForge(db_path="agent.db")       # or a PostgreSQL URL; encryption_key=... (SQLCipher)
    session = await sf.create_session(label="my-agent-run")
    snap = await sf.snapshot(session.id, units=[units.message(session.id, key="msg:0",
                                                              value="hello", source="user")])

The names (classes, methods, errors, the ``stateforge`` command) are the design's; see
``client`` for the store, ``models`` for its values, ``exceptions`` for its errors, ``cli`` for
the command and ``adapters`` for LangChain and LangGraph.
"""

from __future__ import annotations

from . import units
from .client import StateForge
from .enums import MemoryUnitType
from .exceptions import (
    AdapterError,
    AmbiguousRefError,
    CrossSessionRollbackError,
    EncryptionKeyError,
    EncryptionKeyFormatError,
    EncryptionUnavailableError,
    HistoryTooDeepError,
    MemoryUnitNotFoundError,
    SessionNotFoundError,
    SnapshotNotFoundError,
    StateForgeError,
    StorageError,
    ValueTypeError,
)
from .models import (
    Diff,
    DiffEntry,
    MemoryDiff,
    MemoryUnit,
    ProvenanceHop,
    ProvenanceRecord,
    Session,
    Snapshot,
)
from .units import Unit

__all__ = [
    "AdapterError",
    "AmbiguousRefError",
    "CrossSessionRollbackError",
    "Diff",
    "DiffEntry",
    "EncryptionKeyError",
    "EncryptionKeyFormatError",
    "EncryptionUnavailableError",
    "HistoryTooDeepError",
    "MemoryDiff",
    "MemoryUnit",
    "MemoryUnitNotFoundError",
    "MemoryUnitType",
    "ProvenanceHop",
    "ProvenanceRecord",
    "Session",
    "SessionNotFoundError",
    "Snapshot",
    "SnapshotNotFoundError",
    "StateForge",
    "StateForgeError",
    "StorageError",
    "Unit",
    "ValueTypeError",
    "units",
]
