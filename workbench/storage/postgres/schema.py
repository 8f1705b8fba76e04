"""The PostgreSQL backend's schema (one database schema per journal) and its URL.

Invariants the server holds, as in the SQLite file: a unique ``(branch, seq)``; a trigger that
refuses an append whose predecessor is not stored and refuses UPDATE and DELETE on events.

Global positions without a journal-wide lock (schema 2): an event's position is its
transaction's id shifted left 24 bits plus its place in the transaction (``next_position``), so
writers on distinct branches commit side by side. A transaction that started earlier may commit
later with smaller positions; but every transaction whose id is below the oldest one still
running (``pg_snapshot_xmin``) has ended, so every position below ``safe_position()`` is final.
Reads that follow positions (``tail``, the matrix's observations, ``top_position``) stop there:
they never step past an event that has yet to commit. Schema 1 took a per-journal transaction
lock in the trigger instead (positions in commit order, one writer at a time); opening such a
journal writable upgrades it, its positions continuing above the old ones.
"""

from __future__ import annotations

import re
import zlib
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ...errors import InvalidValue
from ..common import APPEND_REFUSED  # the same refusal text as the SQLite trigger's

DEFAULT_JOURNAL = "main"
_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# durability -> synchronous_commit: what a commit waits for before it returns (README).
SYNCHRONOUS_COMMIT = {"process": "local", "fsync": "on", "lazy": "off"}


def parse_url(url: str) -> tuple[str, str]:
    """(libpq URL without lithify's own parameters, journal name) of a journal URL."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    names = [v for k, v in query if k == "journal"]
    journal = names[-1] if names else DEFAULT_JOURNAL
    if not _NAME.fullmatch(journal):
        raise InvalidValue(
            f"journal={journal!r}: a journal name is lowercase letters, digits and _ (up to 63, "
            "not starting with a digit); it names the database schema the journal lives in",
            name=journal,
        )
    rest = urlencode([(k, v) for k, v in query if k != "journal"])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, rest, parts.fragment)), journal


def lock_key(journal: str) -> int:
    """The advisory lock key of a journal (a signed 63-bit number from its name)."""
    return zlib.crc32(f"lithify-journal:{journal}".encode()) | (1 << 40)


POSITION_BITS = 24  # events one transaction may write: 2**24 (16,777,216)


def position_sql(s: str, base: int) -> list[str]:
    """Statements that number events without a lock (see the module docstring): positions from
    ``base`` up, each transaction's above every older one's."""
    return [
        f"""CREATE OR REPLACE FUNCTION "{s}".next_position() RETURNS bigint LANGUAGE plpgsql
            AS $$
            DECLARE k bigint;
            BEGIN
              k := coalesce(nullif(current_setting('lithify.position', true), ''), '0')::bigint;
              IF k >= {1 << POSITION_BITS} THEN
                RAISE EXCEPTION 'lithify: one transaction may write {1 << POSITION_BITS} events'
                  USING ERRCODE = 'program_limit_exceeded';
              END IF;
              PERFORM set_config('lithify.position', (k + 1)::text, true);
              RETURN {base} + (pg_current_xact_id()::text::bigint << {POSITION_BITS}) + k;
            END $$""",
        f"""CREATE OR REPLACE FUNCTION "{s}".safe_position() RETURNS bigint LANGUAGE sql
            STABLE AS $$
              SELECT {base} + (pg_snapshot_xmin(pg_current_snapshot())::text::bigint
                               << {POSITION_BITS}) - 1
            $$""",
        f'ALTER TABLE "{s}".events ALTER COLUMN position SET DEFAULT "{s}".next_position()',
        # Every insert: check that the event follows its branch's stored head, then number it
        # (no lock: see the module docstring). A long batch of one branch checks its first event
        # itself and marks its branch as trusted for its transaction (the storage's _trust):
        # its rows skip the trigger and are numbered by the column default.
        f"""CREATE OR REPLACE FUNCTION "{s}".events_insert() RETURNS trigger LANGUAGE plpgsql
            SET search_path = "{s}" AS $$
            BEGIN
              IF NOT EXISTS (SELECT 1 FROM events WHERE branch = NEW.branch
                             AND seq = NEW.seq - 1)
                 AND NOT EXISTS (SELECT 1 FROM branches WHERE id = NEW.branch
                                 AND fork_seq = NEW.seq - 1) THEN
                RAISE EXCEPTION '{APPEND_REFUSED}' USING ERRCODE = 'integrity_constraint_violation';
              END IF;
              NEW.position := next_position();
              RETURN NEW;
            END $$""",
    ]


def blobs_sql(s: str) -> list[str]:
    """The artifacts' table and the annotations' index (added to older journals when opened
    writable: the statements are idempotent)."""
    return [
        f"""CREATE TABLE IF NOT EXISTS "{s}".blobs (
            hash BYTEA PRIMARY KEY, size BIGINT NOT NULL, data BYTEA NOT NULL)""",
        f"""CREATE INDEX IF NOT EXISTS events_annotations ON "{s}".events(branch, seq)
            WHERE kind IN ('note', 'attach')""",
    ]


def schema_sql(s: str) -> list[str]:
    """Statements that create journal ``s``'s tables in schema ``s`` (inside a transaction)."""
    key = lock_key(s)
    return [
        f'CREATE SCHEMA IF NOT EXISTS "{s}"',
        f'CREATE TABLE "{s}".meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)',
        f"""CREATE TABLE "{s}".branches (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY (START WITH 1) PRIMARY KEY,
            name TEXT UNIQUE,
            parent BIGINT REFERENCES "{s}".branches(id),
            fork_seq BIGINT NOT NULL,
            params TEXT NOT NULL DEFAULT '{{}}',
            created BIGINT NOT NULL,
            sweep BIGINT)""",
        f'CREATE INDEX branches_parent ON "{s}".branches(parent)',
        f'CREATE SEQUENCE "{s}".events_position',
        f"""CREATE TABLE "{s}".events (
            position BIGINT PRIMARY KEY DEFAULT nextval('"{s}".events_position'),
            branch BIGINT NOT NULL,
            seq BIGINT NOT NULL,
            kind TEXT NOT NULL,
            hash BYTEA NOT NULL,
            parent_hash BYTEA NOT NULL,
            ts BIGINT NOT NULL,
            payload TEXT NOT NULL,
            key_hash BYTEA,
            metric TEXT,
            value DOUBLE PRECISION,
            occurred_at BIGINT,
            writer BIGINT,
            fx_ms DOUBLE PRECISION,
            attempts INTEGER,
            event_id TEXT,
            render_ms DOUBLE PRECISION,
            CONSTRAINT events_branch_seq UNIQUE (branch, seq))""",
        f'CREATE UNIQUE INDEX events_event_id ON "{s}".events(event_id) WHERE event_id IS NOT NULL',
        f'CREATE INDEX events_hash ON "{s}".events(hash)',
        f'CREATE INDEX events_key_hash ON "{s}".events(key_hash) WHERE key_hash IS NOT NULL',
        f'CREATE INDEX events_metric ON "{s}".events(position) WHERE metric IS NOT NULL',
        f"""CREATE TABLE "{s}".snapshots (
            branch BIGINT NOT NULL, seq BIGINT NOT NULL, state TEXT NOT NULL,
            digest BYTEA NOT NULL, built TEXT, PRIMARY KEY (branch, seq))""",
        f"""CREATE TABLE "{s}".sweeps (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            base BIGINT NOT NULL, at BIGINT NOT NULL, spec TEXT NOT NULL,
            created BIGINT NOT NULL, how TEXT)""",
        f"""CREATE TABLE "{s}".subscriptions (
            name TEXT PRIMARY KEY, position BIGINT NOT NULL, updated BIGINT NOT NULL)""",
        f"""CREATE TABLE "{s}".writers (
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            writer TEXT NOT NULL UNIQUE, pid INTEGER NOT NULL, source TEXT,
            started BIGINT NOT NULL)""",
        f"""CREATE TABLE "{s}".intents (
            branch BIGINT NOT NULL, key_hash BYTEA NOT NULL, key TEXT NOT NULL,
            started BIGINT NOT NULL, attempts INTEGER NOT NULL, pid TEXT, backend TEXT,
            PRIMARY KEY (branch, key_hash))""",
        f"""CREATE TABLE "{s}".tags (
            label TEXT PRIMARY KEY, branch BIGINT NOT NULL, seq BIGINT NOT NULL,
            created BIGINT NOT NULL)""",
        f"""CREATE TABLE "{s}".fork_runs (
            branch BIGINT PRIMARY KEY, sweep BIGINT NOT NULL, status TEXT NOT NULL,
            runner TEXT, notebook TEXT, error TEXT, started BIGINT, finished BIGINT,
            wall_ms DOUBLE PRECISION)""",
        # Every insert: take the journal's transaction lock (positions in commit order), check
        # that the event follows its branch's stored head, then number it. A long batch of one
        # branch checks its first event and takes the lock itself, then marks its branch as
        # trusted for its transaction (PostgresStorage._trust): its rows skip the trigger and
        # take their position from the column default, still under the lock.
        f"""CREATE FUNCTION "{s}".events_insert() RETURNS trigger LANGUAGE plpgsql
            SET search_path = "{s}" AS $$
            BEGIN
              PERFORM pg_advisory_xact_lock({key});
              IF NOT EXISTS (SELECT 1 FROM events WHERE branch = NEW.branch
                             AND seq = NEW.seq - 1)
                 AND NOT EXISTS (SELECT 1 FROM branches WHERE id = NEW.branch
                                 AND fork_seq = NEW.seq - 1) THEN
                RAISE EXCEPTION '{APPEND_REFUSED}' USING ERRCODE = 'integrity_constraint_violation';
              END IF;
              NEW.position := nextval('events_position');
              RETURN NEW;
            END $$""",
        f"""CREATE TRIGGER events_insert BEFORE INSERT ON "{s}".events FOR EACH ROW
            WHEN (current_setting('lithify.trusted_branch', true) IS DISTINCT FROM
                  NEW.branch::text)
            EXECUTE FUNCTION "{s}".events_insert()""",
        f"""CREATE FUNCTION "{s}".events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'lithify events are append-only'; END $$""",
        f"""CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON "{s}".events
            FOR EACH ROW EXECUTE FUNCTION "{s}".events_append_only()""",
    ]
