"""What both backends share beyond the protocols: the journal format's constants, the columns
their queries name, and the refusals every backend words the same way.

``sqlite/`` and ``postgres/`` import this module (and ``base``, ``announcements``), never each
other: a fact both need lives here.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..errors import BranchConflict, Conflict, InvalidValue, NotFound
from .base import RUN_FIELDS

# What a journal's metadata says it is, and the newest layout this code reads (both backends).
APPLICATION = "lithify-journal"
SCHEMA_VERSION = 3  # 2: a SQLite journal's large effect payloads may be stored compressed;
# 3: its large snapshots too
POSTGRES_SCHEMA_VERSION = 2  # 2: events numbered without a journal-wide lock (postgres/schema)
LOCK_FREE = 2  # the PostgreSQL schema from which positions take no lock

# The refusal of an append whose predecessor is not stored: the text of both backends' triggers,
# which is how a refused append is told from other integrity errors.
APPEND_REFUSED = "lithify: an append must follow the branch head"

# Batches at least this long check their first event's predecessor once, and spare their rows
# the per-row check inside their own write transaction (it doubles a batched row's cost).
TRIGGERLESS_BATCH = 256

EVENT_COLS = "position, branch, seq, kind, hash, parent_hash, ts, payload"
FULL_EVENT_COLS = (
    "branch, seq, kind, hash, parent_hash, ts, payload, key_hash, metric, value, occurred_at, "
    "fx_ms, attempts, event_id, render_ms"
)
BRANCH_COLS = "id, name, parent, fork_seq, params, created, sweep"
SNAPSHOT_COLS = "branch, seq, state, digest, built"
SNAPSHOT_WITH_HASH = (
    "SELECT s.branch, s.seq, s.state, s.digest, e.hash, s.built FROM snapshots s LEFT JOIN "
    "events e ON e.branch = s.branch AND e.seq = s.seq "
)
RUN_COLS = "branch, sweep, status, runner, notebook, error, started, finished, wall_ms"

# A journal lives in a file (SQLite) or at a server URL (PostgreSQL): which, is told here, where
# opening a journal decides the backend without importing one it does not need.
URL_SCHEMES = ("postgresql://", "postgres://")


def now_ms() -> int:
    """Wall-clock unix time in milliseconds (event and branch timestamps)."""
    return time.time_ns() // 1_000_000


def check_run_fields(fields: Iterable[str]) -> None:
    """Refuse a run-record field no backend stores (before anything is written)."""
    unknown = set(fields) - set(RUN_FIELDS)
    if unknown:
        raise InvalidValue(
            f"a run record has no field {sorted(unknown)[0]!r}; it has {', '.join(RUN_FIELDS)}"
        )


def branch_moved(branch: int, expected: int, actual: int | None) -> BranchConflict:
    """The error of an append that does not follow the branch's stored head (every backend)."""
    return BranchConflict(
        f"branch {branch} moved: this handle expected head {expected} but the journal's "
        f"head is {actual} (another writer appended, or events this handle counted on "
        f"were never written); take a fresh handle with journal.branch({branch}) and "
        f"decide again",
        branch=branch,
        expected=expected,
        actual=actual,
    )


def event_id_taken(branch: int) -> Conflict:
    """The error of an append whose caller id another writer took first (every backend)."""
    return Conflict(
        "that event id was taken by another writer a moment ago; apply again: the same "
        "delta returns the existing seq, another one is refused",
        branch=branch,
    )


def name_taken(rows: Sequence[tuple[str | None, int, int, str, int | None]]) -> Conflict:
    """The error of ``insert_branches`` when a name is in use (every backend)."""
    taken = [name for name, *_ in rows if name is not None]
    return Conflict(
        f"a branch named {taken[0]!r} already exists; choose another name or open it "
        f"with journal.branch({taken[0]!r})",
        name=taken[0],
    )


def parent_missing(missing: Iterable[int]) -> NotFound:
    """The error of ``insert_branches`` when a fork's parent is not a branch of the journal
    (every backend: the schema's foreign key refuses it); ``missing``: the parents not found."""
    first = min(missing, default=None)
    which = "the branch to fork from" if first is None else f"branch {first} to fork from"
    return NotFound(
        f"there is no {which} in this journal; fork an existing branch (list them with "
        "journal.branches() or `lithify branches`)",
        branch=first,
    )


def is_url(path: str) -> bool:
    """Whether a journal location is a PostgreSQL URL rather than a file."""
    return isinstance(path, str) and path.startswith(URL_SCHEMES)


def redacted(url: str) -> str:
    """The URL with any password (in the user part or a ``password=`` parameter) replaced by
    ***, for messages and anything shown."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
    query = parts.query
    if "password=" in query:
        query = urlencode(
            [
                (k, "***" if k == "password" else v)
                for k, v in parse_qsl(query, keep_blank_values=True)
            ],
            safe="*",
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
