"""Faults of psycopg, translated at the storage boundary: every driver exception becomes a
``StorageError`` subclass (``Busy``, ``ReadOnly``, ``DiskFull``, ``IOFailure``) or ``NotFound`` /
``NotAJournal``, naming the journal (its URL without a password) and what to do."""

from __future__ import annotations

from ...errors import (
    Busy,
    DiskFull,
    IOFailure,
    NotAJournal,
    NotFound,
    ReadOnly,
    StorageError,
    WorkbenchError,
)


def is_driver_error(err: BaseException) -> bool:
    """True for an exception of psycopg."""
    return type(err).__module__.startswith("psycopg")


def translate(err: BaseException, where: str, doing: str = "") -> WorkbenchError:
    """The WorkbenchError for a psycopg fault on the journal at ``where`` (a redacted URL)."""
    if isinstance(err, WorkbenchError):
        return err
    while_ = f" while {doing}" if doing else ""
    state = getattr(getattr(err, "diag", None), "sqlstate", None) or ""
    said = f"(PostgreSQL says: {str(err).strip()})"
    if state in ("55P03", "40P01", "57014"):  # lock not available, deadlock, lock timeout
        return Busy(
            f"{where} stayed locked by another writer past the timeout{while_} {said}; try "
            "again, or open with a longer timeout (Journal.open(..., timeout=SECONDS))",
            path=where,
        )
    if state in ("25006", "42501"):
        return ReadOnly(
            f"cannot write {where}{while_}: the session or the role is read-only {said}",
            path=where,
        )
    if state.startswith("53"):
        return DiskFull(
            f"the PostgreSQL server of {where} is out of resources{while_} {said}; nothing of "
            "this operation was written: free space (or connections) on the server and try again",
            path=where,
        )
    if state == "58030":  # io_error: the server's disk failed
        return IOFailure(
            f"the PostgreSQL server of {where} failed to read or write its disk{while_} {said}; "
            "this is not a lack of space: ask its administrator to check the disk (the "
            "server's log names the file)",
            path=where,
        )
    if state == "3D000" or ('database "' in str(err) and "does not exist" in str(err)):
        return NotFound(
            f"{where}: the database does not exist {said}; create it (createdb NAME) first",
            path=where,
        )
    if state.startswith("28") or state == "08001" or not state:
        kind = type(err).__name__
        if kind in ("OperationalError", "InterfaceError") or state:
            return StorageError(
                f"cannot reach the PostgreSQL server of {where}{while_} {said}; check that it "
                "runs, the URL (user, host, port, database) and the credentials",
                path=where,
            )
    return StorageError(f"{where}{while_}: {said}", path=where)


def too_many_connections(err: BaseException) -> bool:
    """Whether a connection was refused for the server's (or PgBouncer's) connection limit."""
    state = getattr(getattr(err, "diag", None), "sqlstate", None) or ""
    text = str(err).lower()
    return (
        state == "53300"
        or "too many clients" in text
        or "too many connections" in text
        or "remaining connection slots are reserved" in text
        or "no more connections allowed" in text
    )


def not_a_journal(where: str, tables: list[str]) -> NotAJournal:
    """The schema exists but holds something else."""
    return NotAJournal(
        f"{where}: the schema exists but is not a lithify journal (it has tables "
        f"{sorted(tables)[:5]} and no lithify metadata); choose another journal=NAME",
        path=where,
    )
