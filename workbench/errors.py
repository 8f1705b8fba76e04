"""The error hierarchy: one root, a few subclasses by what the caller can do next.

Every error carries structured fields and a message that says what happened and what to do.
Errors survive pickling (they cross process boundaries in sweeps). Faults of the database or
the file system (``sqlite3`` and ``OSError``) are translated into ``StorageError`` subclasses
at the storage boundary, so no driver exception reaches a caller.
"""

from __future__ import annotations

import errno
import re
from typing import Any


class WorkbenchError(Exception):
    """Root of every error lithify raises on purpose.

    Each class declares the fields it carries as annotations (so a type checker sees them);
    a field not given is ``None``, a field a class does not declare is a programming error.
    ``lost`` and ``lost_by_branch`` say how many buffered events a failed write took with it.
    """

    path: str | None = None
    lost: int | None = None
    lost_by_branch: dict[int, int] | None = None

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        known = _declared(type(self))
        unknown = sorted(set(fields) - known)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field(s) {', '.join(unknown)}")
        self.message = message
        self.fields = fields
        for name, value in fields.items():
            setattr(self, name, value)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, self.fields))

    def __str__(self) -> str:
        return self.message


def _declared(cls: type) -> set[str]:
    names: set[str] = set()
    for klass in cls.__mro__:
        names.update(klass.__dict__.get("__annotations__", {}))
    return names


def _rebuild(cls: type[WorkbenchError], message: str, fields: dict[str, Any]) -> WorkbenchError:
    return cls(message, **fields)


class NotFound(WorkbenchError):
    """A branch, name, seq, hash or file that does not exist."""

    branch: int | None = None
    seq: int | None = None
    kind: str | None = None
    version: int | None = None
    name: str | None = None
    prefix: str | None = None
    ref: str | None = None


class InvalidValue(WorkbenchError, ValueError):
    """A value that is not JSON-safe or an argument out of range; nothing was written."""

    name: str | None = None
    kind: str | None = None
    version: int | None = None
    position: int | None = None
    branch: int | None = None
    seq: int | None = None
    head: int | None = None
    ref: str | None = None
    durability: str | None = None
    prefix: str | None = None


class CannotDraw(InvalidValue):
    """A results view that cannot draw this selection; the message says why in one line (too
    few forks, a single parameter) and what would make it draw."""

    view: str | None = None


class ValueTypeError(InvalidValue):
    """A value (or metadata) that is not JSON-safe: bytes, a datetime, a set, an object. Raised
    when the value is built, before anything is written; convert it (base64, ISO text, a list)."""


class Conflict(WorkbenchError):
    """Another writer got there first (a name taken, an ambiguous hash prefix)."""

    branch: int | None = None
    seq: int | None = None
    name: str | None = None
    ref: str | None = None
    prefix: str | None = None
    candidates: list[str] | None = None
    event_id: str | None = None


class BranchConflict(Conflict):
    """A stale branch handle: another writer advanced the branch since this handle last saw it,
    or an explicit expected head did not match. From ``effect``, ``key`` names the effect and
    ``ran`` says whether its function ran (then ``seq``, if set, is where its result was
    committed: a fresh handle's ``effect`` returns it without running the function again)."""

    expected: int | None = None
    actual: int | None = None
    key: str | None = None
    ran: bool | None = None


class EffectInFlight(Conflict):
    """Another live process announced the same effect on the same branch and has not finished
    it; running ``fn`` here too would run it twice."""

    key: str | None = None
    holder: str | None = None


class ReplayDiverged(Conflict):
    """A fork function run again (a resumed trial, a population member fast-forwarding through
    its lineage) made a write that does not match the event recorded at that point; nothing
    was written (see ``workbench.replay``)."""

    recorded: str | None = None
    wrote: str | None = None


class NotAJournal(WorkbenchError):
    """The file is not a lithify journal, is empty, or was written by a newer schema version."""

    version: int | None = None


class EncryptionKeyError(NotAJournal):
    """An encrypted journal opened with a wrong key or none, or a plain one opened with a key."""


class IntegrityError(WorkbenchError):
    """The stored history does not match its hashes (or a snapshot its seal)."""

    branch: int | None = None
    seq: int | None = None


class StateMismatch(WorkbenchError):
    """The State class given to ``Journal.open`` is not the one the journal was written with."""

    stored: str | None = None
    given: str | None = None


class StateUnavailable(WorkbenchError):
    """A state-level operation on a journal whose State class is not known in this process."""

    state_name: str | None = None


class StorageError(WorkbenchError):
    """The database or the file system failed (the operation did not happen)."""


class Busy(StorageError):
    """The journal stayed locked by another connection past the busy timeout."""


class ReadOnly(StorageError):
    """The journal (or its folder) cannot be written, or it was opened read-only."""


class DiskFull(StorageError):
    """A write failed for lack of space or a file size limit."""


class IOFailure(StorageError):
    """The disk or file system failed to read or write: an I/O error, not a lack of space (that
    is ``DiskFull``)."""


class Corrupt(StorageError):
    """SQLite reports a damaged page (or a stored value cannot be decoded). ``damage`` says
    what is damaged, without advice (what ``verify`` reports)."""

    damage: str | None = None


class ForkFailed(WorkbenchError):
    """A fork's run raised. Like papermill's execution error it keeps what a user needs to find
    the failure: the error's name and message, the cell index (notebook runners), the
    traceback's last lines and the executed notebook's path (``notebook``)."""

    ename: str = "Error"
    evalue: str = ""
    cell: int | None = None
    traceback: list[str] | None = None
    notebook: str | None = None
    where: str | None = None
    signal: int | None = None  # the signal that ended the fork's worker, if one did
    stderr: list[str] | None = None  # a dead worker's last lines on stderr

    def __init__(self, message: str, **fields: Any) -> None:
        if fields.get("traceback") is not None:
            fields["traceback"] = clean_traceback(fields["traceback"])
        super().__init__(message, **fields)

    @property
    def error(self) -> dict[str, Any]:
        """The JSON document a sweep stores for this fork (fields that are set)."""
        doc: dict[str, Any] = {"ename": self.ename, "evalue": self.evalue}
        for name in ("cell", "where", "traceback", "notebook", "signal", "stderr"):
            if getattr(self, name) is not None:
                doc[name] = getattr(self, name)
        return doc


class Pruned(WorkbenchError):
    """Raised by ``sweep.report`` inside a fork when the study's pruner stops it: the fork is
    recorded as ``pruned`` (not failed) at ``step``. Let it propagate out of the fork."""

    branch: int | None = None
    step: int | None = None
    value: float | None = None


class Paused(WorkbenchError):
    """Raised by ``sweep.report`` inside a member of a population (``sweep.evolve``) when its
    interval is over: the fork is recorded as ``paused``; the next generation continues from
    its head (or from a leader's). Let it propagate out of the fork."""

    branch: int | None = None
    step: int | None = None


class NotInstalled(WorkbenchError):
    """A library this install leaves out (the worker install, lithify-worker, has no notebook
    or results stack); the message names the extra that brings it."""

    module: str | None = None
    extra: str | None = None


# the libraries the worker install leaves out, by the extra of lithify-worker that brings them
EXTRA_OF = {
    **dict.fromkeys(("polars", "altair", "vl_convert", "adbc_driver_sqlite"), "results"),
    **dict.fromkeys(("cmaes", "scipy", "sklearn"), "samplers"),
    **dict.fromkeys(("papermill", "nbformat", "ipykernel", "jupyter_client"), "notebooks"),
    **dict.fromkeys(("jupyterlab", "jupyter_server", "ipywidgets", "anywidget"), ""),
    "distributed": "dask",
    "psycopg": "postgres",
}  # "": the Lab and the widgets come with the whole workbench only


def not_installed(err: BaseException) -> NotInstalled | None:
    """The clear error for an import of a library this install leaves out (None otherwise)."""
    if not isinstance(err, ModuleNotFoundError) or not err.name:
        return None
    top = err.name.split(".")[0]
    extra = EXTRA_OF.get(top)
    if extra is None:
        return None
    how = f"pip install 'lithify-worker[{extra}]', or " if extra else "pip install "
    return NotInstalled(
        f"this needs {top}, which is not installed here (the worker install, lithify-worker, "
        f"leaves it out): {how}the whole workbench, lithify-workbench",
        module=top,
        extra=extra or None,
    )


class NoObjective(WorkbenchError):
    """A study whose forks do not observe its objective: refused before the first fork when the
    agent declares what its forks observe, else stopped after the first trial that finished
    without it (the message names what it did observe)."""

    sweep: int | None = None
    objective: str | None = None


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
TRACEBACK_LINES = 40


def clean_traceback(lines: list[str] | str) -> list[str]:
    """A traceback as plain lines (colour codes removed), its last ``TRACEBACK_LINES`` only."""
    text = lines if isinstance(lines, str) else "\n".join(lines)
    plain = _ANSI.sub("", text).rstrip().splitlines()
    return plain[-TRACEBACK_LINES:]


def os_error(err: OSError, path: str, doing: str = "") -> WorkbenchError:
    """The WorkbenchError for a file-system fault on (or beside) the journal at ``path``."""
    where = "the in-memory journal" if path == ":memory:" else path
    while_ = f" while {doing}" if doing else ""
    said = f"(the system says: {err})"
    if err.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        return DiskFull(
            f"could not write beside {where}{while_}: no space left or a file size limit "
            f"{said}; free space and try again",
            path=path,
        )
    if err.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return ReadOnly(
            f"cannot write beside {where}{while_}: it or its folder is read-only {said}; "
            "read commands still work, or copy the journal to a writable folder",
            path=path,
        )
    if err.errno == errno.ENOENT:
        return NotFound(f"{where}{while_}: a file is missing {said}", path=path)
    if err.errno == errno.EIO:
        return IOFailure(
            f"{where}{while_}: the disk or file system failed to read or write {said}; this is "
            "not a lack of space: check the disk (the kernel log, dmesg, names the device), "
            "then run `lithify verify`",
            path=path,
        )
    return StorageError(f"{where}{while_}: the file system failed {said}", path=path)
