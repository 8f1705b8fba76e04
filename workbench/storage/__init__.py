"""The storage seam: the only package that knows SQL or imports a database driver.

``base.py`` says what a journal backend must do, one abstract class per role holding the
methods a backend must write, and ``Storage``, the base class both backends inherit: those six
roles plus the defaults built on them (a backend overrides a default where it has a faster
query); the rows they return, by name, are ``rows.py``'s. ``open_storage`` opens one. Two
backends of one shape implement it: ``sqlite/`` (``SQLiteStorage``, the embedded default) and
``postgres/`` (``PostgresStorage``, imported only when a URL is opened). Each is a package of
the same modules (storage, connection, writes, catalog, search, schema, faults, intents);
neither imports the other, and what both need lives in ``common.py`` (format constants,
columns, refusals, locations) and ``announcements.py`` (who is running which effect).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import WorkbenchError
from .base import (
    EVENT_SHAPES,
    BranchCatalog,
    BranchRow,
    EffectHit,
    EffectIndex,
    EventLog,
    EventRow,
    FullEvent,
    FullTextSearch,
    HashHit,
    Head,
    IdentifiedEvent,
    IntentStore,
    Observation,
    ObservationReader,
    Provenance,
    ReplayEvent,
    RunLog,
    RunRow,
    SearchHit,
    Segment,
    SnapshotRecord,
    SnapshotRow,
    SnapshotStore,
    Storage,
    StoreCore,
    StoredEvent,
    SweepRow,
    VerifyEvent,
    observation_schema,
    observations_frame,
    read_observations,
)
from .common import FULL_EVENT_COLS, TRIGGERLESS_BATCH, is_url, now_ms, redacted
from .sqlite import (
    PAGE_SIZE,
    WAL_AUTOCHECKPOINT_BYTES,
    IntentLog,
    SQLiteStorage,
    TableIntents,
    is_driver_error,
    is_journal_file,
    translate,
)

if TYPE_CHECKING:
    from .postgres import PostgresStorage  # psycopg is an optional extra


def fault(err: BaseException, where: str) -> WorkbenchError | None:
    """The library's error for a fault a driver or the OS raised about the journal at
    ``where`` (a WorkbenchError as it is), or None when it is neither: the one translation
    every client (the CLI, the Lab's server) answers with."""
    if isinstance(err, WorkbenchError):
        return err
    if type(err).__module__.startswith("psycopg"):
        from .postgres.faults import translate as translate_pg

        return translate_pg(err, redacted(where) if is_url(where) else where)
    if is_driver_error(err) or isinstance(err, OSError):
        return translate(err, where)
    return None


__all__ = [
    "EVENT_SHAPES",
    "PAGE_SIZE",
    "TRIGGERLESS_BATCH",
    "WAL_AUTOCHECKPOINT_BYTES",
    "BranchCatalog",
    "BranchRow",
    "FULL_EVENT_COLS",
    "EffectHit",
    "EffectIndex",
    "EventLog",
    "EventRow",
    "FullEvent",
    "FullTextSearch",
    "HashHit",
    "Head",
    "IdentifiedEvent",
    "IntentLog",
    "IntentStore",
    "Observation",
    "ObservationReader",
    "Provenance",
    "RunLog",
    "RunRow",
    "SQLiteStorage",
    "SearchHit",
    "Segment",
    "SnapshotRecord",
    "SnapshotRow",
    "SnapshotStore",
    "ReplayEvent",
    "Storage",
    "StoreCore",
    "StoredEvent",
    "SweepRow",
    "TableIntents",
    "VerifyEvent",
    "fault",
    "is_driver_error",
    "is_journal_file",
    "is_url",
    "now_ms",
    "observation_schema",
    "observations_frame",
    "open_storage",
    "read_observations",
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
    backend: type[SQLiteStorage] | type[PostgresStorage] = SQLiteStorage
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
