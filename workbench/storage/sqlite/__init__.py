"""The SQLite backend: a journal in one file (or in memory), SQLCipher-encrypted on request.

``SQLiteStorage`` (``storage.py``: reads of events, effects, snapshots and observations) is
built from ``connection.py`` (opening, pragmas, schema, ``atomic()``), ``writes.py`` (appends),
``catalog.py`` (branches, sweeps, runs, tags), ``search.py`` (FTS5); its tables are in
``schema.py``, its faults translated in ``faults.py``, the files it holds tracked in
``files.py``, and effect intents kept by ``intents.py``. It shares nothing with the PostgreSQL
backend but the modules of the seam (``base``, ``common``, ``announcements``).
"""

from __future__ import annotations

from .faults import is_driver_error, translate
from .files import is_journal_file
from .intents import IntentLog, TableIntents
from .schema import PAGE_SIZE, WAL_AUTOCHECKPOINT_BYTES
from .storage import OBS_ROWS_DIRECT, SQLiteStorage

__all__ = [
    "OBS_ROWS_DIRECT",
    "PAGE_SIZE",
    "WAL_AUTOCHECKPOINT_BYTES",
    "IntentLog",
    "SQLiteStorage",
    "TableIntents",
    "is_driver_error",
    "is_journal_file",
    "translate",
]
