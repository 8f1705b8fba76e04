"""The storage seam: the only package that knows SQL or imports a database driver.

``Storage`` (``base.py``) is what a journal backend must do, with rows by name; ``open_storage``
opens one. The SQLite backend is ``SQLiteStorage`` (``sqlite.py``, built on ``connection.py``
and ``catalog.py``, its schema in ``schema.py``, its faults translated in ``faults.py``);
effect intents live in an ``IntentStore`` (``intents.py``: a sidecar log, or a table inside an
encrypted file). The PostgreSQL backend is ``postgres.PostgresStorage`` (its schema and faults in
``pgschema.py``), imported only when a URL is opened.
"""

from __future__ import annotations

from typing import Any

from .base import (
    EVENT_SHAPES,
    FULL_EVENT_COLS,
    BranchRow,
    EffectHit,
    EventRow,
    FullEvent,
    HashHit,
    Head,
    IdentifiedEvent,
    IntentStore,
    Observation,
    Provenance,
    RunRow,
    SearchHit,
    Segment,
    SnapshotRecord,
    SnapshotRow,
    StateEvent,
    Storage,
    StoredEvent,
    SweepRow,
    VerifyEvent,
    observation_schema,
)
from .connection import is_journal_file, now_ms
from .faults import is_driver_error, translate
from .intents import IntentLog, TableIntents
from .pgschema import is_url, redacted
from .schema import PAGE_SIZE, TRIGGERLESS_BATCH, WAL_AUTOCHECKPOINT_BYTES
from .sqlite import SQLiteStorage

__all__ = [
    "EVENT_SHAPES",
    "PAGE_SIZE",
    "TRIGGERLESS_BATCH",
    "WAL_AUTOCHECKPOINT_BYTES",
    "BranchRow",
    "FULL_EVENT_COLS",
    "EffectHit",
    "EventRow",
    "FullEvent",
    "HashHit",
    "Head",
    "IdentifiedEvent",
    "IntentLog",
    "IntentStore",
    "Observation",
    "Provenance",
    "RunRow",
    "SQLiteStorage",
    "SearchHit",
    "Segment",
    "SnapshotRecord",
    "SnapshotRow",
    "StateEvent",
    "Storage",
    "StoredEvent",
    "SweepRow",
    "TableIntents",
    "VerifyEvent",
    "is_driver_error",
    "is_journal_file",
    "is_url",
    "now_ms",
    "observation_schema",
    "open_storage",
    "redacted",
    "translate",
]


def open_storage(
    path: str,
    durability: str,
    busy_timeout_ms: int = 30_000,
    *,
    source: str | None = None,
    key: str | bytes | None = None,
    readonly: bool = False,
    create: bool | None = None,
    schema: tuple[str, str | None, bytes, str] | None = None,
) -> Storage:
    """Open (or create) the journal backend at ``path``: a file, ":memory:", or a PostgreSQL
    URL (``postgresql://user@host:port/db?journal=NAME``)."""
    backend: type[Any] = SQLiteStorage
    if is_url(path):
        from .postgres import PostgresStorage

        backend = PostgresStorage
    return backend(
        path,
        durability,
        busy_timeout_ms,
        source,
        key,
        readonly=readonly,
        create=create,
        schema=schema,
    )
