"""The journal's SQLite schema: tables, indexes, triggers, and how older files are upgraded.

Additive changes (a new column) go through sqlite-utils' ``add_column`` (SQLite's ALTER TABLE
ADD COLUMN, which rewrites nothing); ``Table.transform()`` is the tool for the changes SQLite's
ALTER cannot make (none so far). Tables, indexes and triggers are created with IF NOT EXISTS,
so creating and upgrading run the same statements.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..common import APPEND_REFUSED, SCHEMA_VERSION

try:  # ISA-L reads zlib's format about twice as fast as zlib
    from isal.isal_zlib import decompress as inflate
except ImportError:  # installed without its dependencies: the standard library's
    from zlib import decompress as inflate

# Every append must follow its branch's stored head: the predecessor is stored (or the branch
# forked there), and with the unique (branch, seq) key that leaves no room for a gap. Batches of
# common.TRIGGERLESS_BATCH or more check their first event's predecessor once, and drop the
# trigger inside their own write transaction (nobody else can write meanwhile, nobody else sees
# it missing, a rollback restores it) to spare it on every row.
FOLLOW_HEAD = f"""CREATE TRIGGER IF NOT EXISTS events_follow_head BEFORE INSERT ON events
WHEN NEW.seq - 1 IS NOT (SELECT seq FROM events WHERE branch = NEW.branch AND seq = NEW.seq - 1)
 AND NEW.seq - 1 IS NOT (SELECT fork_seq FROM branches WHERE id = NEW.branch)
BEGIN SELECT RAISE(ABORT, '{APPEND_REFUSED}'); END"""

# A large effect result is stored compressed: ``payload`` holds zlib's compress() of the
# payload's UTF-8 text (a BLOB) and ``payload_size`` that text's length in bytes; every other
# payload is its JSON text, ``payload_size`` NULL. The format is the SQLite archive's, so the
# sqlite3 shell reads it with its built-in sqlar_uncompress(); lithify registers the same
# function on its connections, and the ``event_payloads`` view gives every payload as text.
# A large snapshot is stored the same way (``state``, ``state_size``; view ``snapshot_states``).
COMPRESS_FROM = 512  # payload characters: shorter ones gain little and stay plain JSON
COMPRESS_LEVEL = 1  # ISA-L's level 1: source text 5-8x smaller at ~240 MB/s (zlib's: ~40 MB/s)


def stored_text_sql(column: str, size: str) -> str:
    """The SQL expression of a column stored as text or compressed (its size beside it)."""
    return (
        f"CASE WHEN {size} IS NULL THEN {column} "
        f"ELSE CAST(sqlar_uncompress({column}, {size}) AS TEXT) END"
    )


def payload_sql(prefix: str = "") -> str:
    """The SQL expression of an event's payload as text, compressed or not."""
    return stored_text_sql(f"{prefix}payload", f"{prefix}payload_size")


def state_sql(prefix: str = "") -> str:
    """The SQL expression of a snapshot's state as text, compressed or not."""
    return stored_text_sql(f"{prefix}state", f"{prefix}state_size")


def sqlar_uncompress(data: Any, size: int | None) -> Any:
    """The sqlite3 shell's sqlar_uncompress(), for lithify's connections: ``data``
    decompressed, or as it is where its length already is ``size`` (stored uncompressed)."""
    if data is None or size is None or not isinstance(data, bytes) or len(data) == size:
        return data
    out = inflate(data)
    if len(out) != size:
        raise ValueError(f"a compressed payload gave {len(out)} bytes, not {size}")
    return out.decode("utf-8")


SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS branches (
    id INTEGER PRIMARY KEY,
    name TEXT UNIQUE,
    parent INTEGER REFERENCES branches(id),
    fork_seq INTEGER NOT NULL,
    params TEXT NOT NULL DEFAULT '{}',
    created INTEGER NOT NULL,
    sweep INTEGER
);
CREATE INDEX IF NOT EXISTS branches_parent ON branches(parent);
CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY,
    branch INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    hash BLOB NOT NULL,
    parent_hash BLOB NOT NULL,
    ts INTEGER NOT NULL,
    payload TEXT NOT NULL,
    key_hash BLOB,
    metric TEXT,
    value REAL,
    occurred_at INTEGER,
    writer INTEGER,
    fx_ms REAL,
    attempts INTEGER,
    event_id TEXT,
    render_ms REAL,
    payload_size INTEGER
);
CREATE UNIQUE INDEX IF NOT EXISTS events_branch_seq ON events(branch, seq);
CREATE UNIQUE INDEX IF NOT EXISTS events_event_id ON events(event_id) WHERE event_id IS NOT NULL;
DROP INDEX IF EXISTS events_effects;
CREATE VIEW IF NOT EXISTS event_payloads AS SELECT position, branch, seq, kind,
    {payload} AS payload FROM events;
CREATE TABLE IF NOT EXISTS snapshots (
    branch INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    state TEXT NOT NULL,
    digest BLOB NOT NULL,
    built TEXT,
    state_size INTEGER,
    PRIMARY KEY (branch, seq)
) WITHOUT ROWID;
CREATE VIEW IF NOT EXISTS snapshot_states AS SELECT branch, seq, {state} AS state, digest, built
    FROM snapshots;
CREATE TABLE IF NOT EXISTS effect_index (
    key_hash BLOB NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (key_hash, position)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hash_index (
    hash BLOB NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (hash, position)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sweeps (
    id INTEGER PRIMARY KEY,
    base INTEGER NOT NULL,
    at INTEGER NOT NULL,
    spec TEXT NOT NULL,
    created INTEGER NOT NULL,
    how TEXT
);
CREATE TABLE IF NOT EXISTS subscriptions (
    name TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    updated INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS writers (
    id INTEGER PRIMARY KEY,
    writer TEXT NOT NULL UNIQUE,
    pid INTEGER NOT NULL,
    source TEXT,
    started INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS intents (
    branch INTEGER NOT NULL,
    key_hash BLOB NOT NULL,
    key TEXT NOT NULL,
    started INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    pid TEXT,
    PRIMARY KEY (branch, key_hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tags (
    label TEXT PRIMARY KEY,
    branch INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    created INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS blobs (
    hash BLOB PRIMARY KEY,
    size INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS events_annotations ON events(branch, seq)
    WHERE kind IN ('note', 'attach');
CREATE TABLE IF NOT EXISTS fork_runs (
    branch INTEGER PRIMARY KEY,
    sweep INTEGER NOT NULL,
    status TEXT NOT NULL,
    runner TEXT,
    notebook TEXT,
    error TEXT,
    started INTEGER,
    finished INTEGER,
    wall_ms REAL
);
{follow_head};
CREATE TRIGGER IF NOT EXISTS events_append_only_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'lithify events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_append_only_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'lithify events are append-only'); END;
""".replace("{follow_head}", FOLLOW_HEAD)
    .replace("{payload}", payload_sql())
    .replace("{state}", state_sql())
)

TABLES = {
    "meta",
    "branches",
    "events",
    "snapshots",
    "hash_index",
    "effect_index",
    "sweeps",
    "fork_runs",
    "subscriptions",
    "tags",
    "writers",
    "intents",
    "blobs",
}
TRIGGERS = {"events_follow_head", "events_append_only_update", "events_append_only_delete"}
# Added columns a read-only open can do without: it reads them as NULL, through a temporary
# view of the table (``shadow_missing``).
READER_OPTIONAL = {"sweeps.how", "events.payload_size", "snapshots.state_size"}
# Tables a read-only open of an older file does without (its reads of them return nothing).
READER_OPTIONAL_TABLES = {"blobs"}
# Columns later versions added to tables of older files: table -> {column: declaration}.
ADDED_COLUMNS = {
    "events": {
        "occurred_at": "INTEGER",
        "writer": "INTEGER",
        "fx_ms": "REAL",
        "attempts": "INTEGER",
        "event_id": "TEXT",
        "render_ms": "REAL",
        "payload_size": "INTEGER",
    },
    "snapshots": {"built": "TEXT", "state_size": "INTEGER"},
    "sweeps": {"how": "TEXT"},
    "intents": {"pid": "TEXT"},
}


def statements(script: str) -> list[str]:
    """The statements of a script, one by one (executescript() would COMMIT the open BEGIN)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    return out


def missing(conn: Any, names: set[str]) -> set[str]:
    """Tables, triggers and added columns an older file lacks."""
    out = (TABLES | TRIGGERS) - names
    for table, cols in ADDED_COLUMNS.items():
        if table in names:
            have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
            out |= {f"{table}.{c}" for c in cols if c not in have}
    return out


def shadow_missing(conn: Any) -> None:
    """On a read-only connection to an older file: a temporary view (this connection's alone,
    found before the table it shadows) gives each table the READER_OPTIONAL columns it lacks,
    all NULL, so every query reads the file as it is, as it reads a newer one."""
    lacking: dict[str, list[str]] = {}
    for name in sorted(READER_OPTIONAL):
        table, column = name.split(".")
        have = {r[1] for r in conn.execute(f"PRAGMA main.table_info({table})")}
        if have and column not in have:
            lacking.setdefault(table, []).append(column)
    for table, columns in lacking.items():
        nulls = ", ".join(f"NULL AS {c}" for c in columns)
        conn.execute(
            f"CREATE TEMP VIEW IF NOT EXISTS {table} AS SELECT *, {nulls} FROM main.{table}"
        )


def upgrade(conn: Any) -> None:
    """Bring an older file's schema up to date (inside the caller's transaction)."""
    import sqlite_utils

    db = sqlite_utils.Database(conn, recursive_triggers=False)
    for table, cols in ADDED_COLUMNS.items():
        t = db.table(table)
        if t.exists():
            have = set(t.columns_dict)
            for name, decl in cols.items():
                if name not in have:
                    t.add_column(name, _TYPES[decl])
    for statement in statements(SCHEMA):
        conn.execute(statement)
    # This version writes compressed payloads and snapshots, which an older one cannot read:
    # it is told to upgrade instead (it refuses a schema_version above its own).
    conn.execute(
        "UPDATE meta SET value = ? WHERE key = 'schema_version' AND CAST(value AS INTEGER) < ?",
        (str(SCHEMA_VERSION), SCHEMA_VERSION),
    )


_TYPES = {"INTEGER": int, "REAL": float, "TEXT": str, "BLOB": bytes}

WAL_AUTOCHECKPOINT_BYTES = 32 << 20  # of WAL between automatic checkpoints
PAGE_SIZE = 2048  # bytes, for new journals
SYNCHRONOUS = {"process": "NORMAL", "lazy": "NORMAL", "fsync": "FULL"}
