"""``StateForge``: sessions, units and snapshots on one journal, with the design's API.

Every public method is a coroutine with a synchronous twin named ``<name>_sync`` (for
notebooks and scripts). The coroutines do their work on one worker thread per store, so the
event loop keeps running while the journal reads and writes (and calls are done in the order
they were awaited, as with one connection). A session is a branch, a snapshot an event (its id
is the event's hash), a unit an immutable, content-addressed value stored once
(``workbench.units``); refs are ``head``, ``head~N``, a label, an id or an 8+ character id
prefix. Rollback appends a snapshot whose unit set equals the target's; nothing is deleted.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ... import units
from ...errors import InvalidValue, NotFound, ValueTypeError
from ...events import Record, canonical
from ...journal import Journal
from ...units import SESSION_PREFIX, Unit
from . import provenance
from .exceptions import (
    AmbiguousRefError,
    CrossSessionRollbackError,
    HistoryTooDeepError,
    MemoryUnitNotFoundError,
    SessionNotFoundError,
    SnapshotNotFoundError,
)
from .models import Diff, DiffEntry, ProvenanceRecord, Session, Snapshot, json_safe, when
from .opening import open_journal

__all__ = ["StateForge"]

T = TypeVar("T")


class StateForge:
    """Sessions, units and snapshots on one journal (a file, or a PostgreSQL URL).

    ``encryption_key`` (a passphrase or 32 raw bytes) or ``encryption_key_provider`` (a
    function returning one) opens an SQLCipher file; a wrong or missing key raises
    ``EncryptionKeyError``. ``pragmas``: ``busy_timeout`` (ms to wait for a lock),
    ``synchronous`` (NORMAL survives kill -9; FULL also power loss) and ``foreign_keys`` (always
    on here). ``journal=`` works on a journal already open; ``readonly=True`` never writes (the
    ``stateforge`` command's reads).
    """

    def __init__(
        self,
        db_path: str | os.PathLike[str] = "stateforge.db",
        encryption_key: str | bytes | None = None,
        *,
        auto_migrate: bool = True,
        pragmas: Mapping[str, str] | None = None,
        encryption_key_provider: Callable[[], str | bytes] | None = None,
        journal: Journal | None = None,
        readonly: bool = False,
    ) -> None:
        if encryption_key is not None and encryption_key_provider is not None:
            raise InvalidValue("pass encryption_key or encryption_key_provider, not both")
        if not auto_migrate:
            raise InvalidValue("auto_migrate=False is not supported: the journal's schema is set")
        key: str | bytes | None = encryption_key
        if encryption_key_provider is not None:
            key = encryption_key_provider()
        self._lock = threading.RLock()  # one snapshot at a time per store: parents chain
        self._worker_lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._last_snapshot: dict[int, str | None] = {}  # branch -> its latest snapshot id
        self._writers: dict[int, Any] = {}  # branch -> the handle snapshots are written with
        self._owns = journal is None
        self._closed = False
        if journal is not None:
            self.journal = journal
            return
        self.journal = open_journal(db_path, key, pragmas or {}, readonly)

    # -- the worker ------------------------------------------------------------------------

    def _worker(self) -> ThreadPoolExecutor:
        with self._worker_lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="stateforge")
            return self._executor

    async def _run(self, fn: Callable[..., T], /, *args: Any, **kw: Any) -> T:
        """``fn(*args, **kw)`` on this store's worker thread, awaited (the loop runs on)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker(), functools.partial(fn, *args, **kw))

    # -- sessions --------------------------------------------------------------------------

    def create_session_sync(
        self, label: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Session:
        """A new, empty session."""
        if label is not None and not isinstance(label, str):
            raise InvalidValue(f"a session label is a str, not {label!r}")
        canonical(label, "session label")  # refused before the branch exists
        md = dict(json_safe(_mapping(metadata, "session metadata"), "session metadata"))
        sid = str(uuid.uuid4())
        with self._lock:
            b = self.journal.root().fork_at(0, name=SESSION_PREFIX + sid)
            event: dict[str, Any] = {"op": "session", "id": sid, "label": label}
            if md:
                event["metadata"] = md
            b.apply(event)
            return self._session(b.id)

    def sessions_sync(self) -> list[Session]:
        """Every session, oldest first."""
        out = []
        for info in self.journal.branches():
            if info.name is not None and info.name.startswith(SESSION_PREFIX):
                try:
                    out.append(self._session(info.id))
                except NotFound:
                    continue  # a session branch whose first event never landed (a crash)
        return out

    def list_sessions_sync(self, limit: int = 100, before_id: str | None = None) -> list[Session]:
        """Sessions newest first, at most ``limit``, those created before ``before_id``'s."""
        return _page(list(reversed(self.sessions_sync())), limit, before_id, "session")

    def get_session_sync(self, session_id: str) -> Session:
        """One session, by id, label, or 8+ character id prefix."""
        return self._session(self._branch(session_id).id)

    def _branch(self, session: Any) -> Any:
        sid = str(getattr(session, "id", session))
        try:
            return self.journal.branch(SESSION_PREFIX + sid)
        except NotFound:
            pass
        found = [
            s
            for s in self.sessions_sync()
            if s.label == sid or (len(sid) >= 8 and s.id.startswith(sid))
        ]
        if len(found) == 1:
            return self.journal.branch(found[0].branch)
        if found:
            raise AmbiguousRefError(f"{sid!r} names {len(found)} sessions; use the session id")
        raise SessionNotFoundError(f"no session {sid!r}; `stateforge sessions list` shows them")

    def writer(self, branch_id: int) -> Any:
        """The handle a session's snapshots are written with (hold ``self._lock``): kept
        between calls, so its state is built once rather than replayed for every snapshot,
        and caught up first with what other writers appended."""
        h = self._writers.get(branch_id)
        if h is None:
            h = self._writers[branch_id] = self.journal.branch(branch_id)
        else:
            seen = h.head
            h.history(h.head + 1)  # reads the stored head: usually nothing new
            if h.head != seen:  # another writer appended: its snapshot may be the latest
                self._last_snapshot.pop(branch_id, None)
        return h

    def _session(self, branch_id: int) -> Session:
        b = self.journal.branch(branch_id)
        info: Record | None = None
        head: str | None = None
        for r in b.history(1, b.head) if b.head >= 1 else []:
            op = r.payload.get("op") if r.kind == "delta" else None
            if op == "session":
                info = r  # a copy of a session (a fork) names itself in a later event
            elif op == "snapshot":
                head = r.hash
        if info is None:
            raise SessionNotFoundError(f"branch {branch_id} is not a session")
        return Session(
            id=info.payload["id"],
            label=info.payload.get("label"),
            head_snapshot_id=head,
            created_at=when(info.ts),
            metadata=info.payload.get("metadata") or {},
            branch=b.id,
        )

    # -- snapshots -------------------------------------------------------------------------

    def snapshot_sync(
        self,
        session_id: Any,
        units: Iterable[Unit],
        label: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Snapshot:
        """Record the session's unit set as ``units`` (of two with one identity, the one
        created later wins); returns the new snapshot. Units already stored are referenced,
        not copied."""
        with self._lock:
            b = self.writer(self._branch(session_id).id)
            sid = _sid(b)
            chosen = units_by_identity(units)
            wrong = [u for u in chosen.values() if u.session != sid]
            if wrong:
                raise InvalidValue(
                    f"unit {wrong[0].key!r} belongs to session {wrong[0].session!r}, not {sid!r}"
                )
            return self._append_snapshot(b, chosen, label, None, metadata)

    def _append_snapshot(
        self,
        b: Any,
        chosen: dict[str, Unit],
        label: str | None,
        rollback_of: str | None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Snapshot:
        if label is not None and not isinstance(label, str):
            raise InvalidValue(f"a snapshot label is a str, not {label!r}")
        md = dict(json_safe(_mapping(metadata, "snapshot metadata"), "snapshot metadata"))
        delta: dict[str, Any] = {
            "op": "snapshot",
            "label": label,
            **units_changes(b.state().units, chosen),
        }
        if rollback_of is not None:
            delta["rollback_of"] = rollback_of
        if md:
            delta["metadata"] = md
        return self.append_snapshot_delta(b, delta)

    def append_snapshot_delta(self, b: Any, delta: dict[str, Any]) -> Snapshot:
        """Append a snapshot event (``{"op": "snapshot", "put", "drop", ...}``) with a session's
        ``writer`` handle and return it (what the LangGraph adapter writes checkpoints with)."""
        with self._lock:
            if b.id not in self._last_snapshot:
                walked = self._walk(b)
                self._last_snapshot[b.id] = walked[-1].id if walked else None
            seq = b.apply(delta)
            return self._snapshot_at(b, seq)

    def head_sync(self, session_id: Any) -> Snapshot | None:
        """The session's latest snapshot (None before the first)."""
        snaps = self._walk(self._branch(session_id))
        return snaps[-1] if snaps else None

    def snapshots_sync(self, session_id: Any) -> list[Snapshot]:
        """The session's snapshots, oldest first."""
        return self._walk(self._branch(session_id))

    def list_snapshots_sync(
        self, session_id: Any, limit: int = 100, before_id: str | None = None
    ) -> list[Snapshot]:
        """The session's snapshots newest first, at most ``limit``, those before
        ``before_id``."""
        return _page(list(reversed(self.snapshots_sync(session_id))), limit, before_id, "snapshot")

    def history_sync(self, session_id: Any, max_depth: int = 10_000) -> list[Snapshot]:
        """The session's snapshots from head to root; ``HistoryTooDeepError`` past
        ``max_depth``."""
        if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1:
            raise InvalidValue(f"max_depth is a positive int, not {max_depth!r}")
        chain = list(reversed(self.snapshots_sync(session_id)))
        if len(chain) > max_depth:
            raise HistoryTooDeepError(
                f"the session has {len(chain)} snapshots, more than max_depth={max_depth}; "
                "raise max_depth"
            )
        return chain

    def get_snapshot_sync(self, ref: Any, session_id: Any = None) -> Snapshot:
        """A snapshot by ref: ``head``, ``head~N``, a label (the latest with it), an id or an
        8+ character id prefix (in one session, or in any with no session given)."""
        if isinstance(ref, Snapshot):
            ref = ref.id
        if not isinstance(ref, str) or not ref:
            raise InvalidValue(f"a snapshot ref is a non-empty str, not {ref!r}")
        scopes = [self._branch(session_id)] if session_id is not None else None
        if scopes is None:
            if ref == "head" or ref.startswith("head~"):
                raise InvalidValue(f"{ref!r} is relative to a session: pass session_id (--session)")
            scopes = [self.journal.branch(s.branch) for s in self.sessions_sync()]
        hits: list[Snapshot] = []
        for b in scopes:
            snaps = self._walk(b)
            if ref == "head" or ref.startswith("head~"):
                back = 0 if ref == "head" else _int(ref[5:], ref)
                if back >= len(snaps):
                    raise SnapshotNotFoundError(
                        f"{ref}: the session has {len(snaps)} snapshot(s)", ref=ref
                    )
                return snaps[-1 - back]
            by_label = [x for x in snaps if x.label == ref]
            if by_label:
                hits.append(by_label[-1])
                continue
            if len(ref) >= 8 and all(c in "0123456789abcdef" for c in ref.lower()):
                hits += [x for x in snaps if x.id.startswith(ref.lower())]
        unique = {h.id: h for h in hits}
        if len(unique) == 1:
            return next(iter(unique.values()))
        if unique:
            ids = ", ".join(h.short_id for h in unique.values())
            raise AmbiguousRefError(
                f"{ref!r} names {len(unique)} snapshots ({ids}); give more of the id, or the "
                "session"
            )
        raise SnapshotNotFoundError(
            f"no snapshot {ref!r}; `stateforge snapshots list --session S` shows them", ref=ref
        )

    def _unit_docs(self, snap: Snapshot) -> dict[str, dict[str, Any]]:
        units: dict[str, dict[str, Any]] = self.journal.branch(snap.branch).at(snap.seq).units
        return units

    def units_of_sync(self, snapshot_id: Any, session_id: Any = None) -> list[Unit]:
        """The units a snapshot holds, by identity."""
        docs = self._unit_docs(self.get_snapshot_sync(snapshot_id, session_id))
        return [Unit.from_json(docs[i]) for i in sorted(docs)]

    def get_units_sync(self, snapshot_id: Any) -> list[Unit]:
        """The units a snapshot holds (the design's name for ``units_of``)."""
        return self.units_of_sync(snapshot_id)

    def get_unit_sync(self, unit_id: str) -> Unit:
        """A unit by id, from whichever session stored it."""
        found = provenance.find_unit(self, unit_id)
        if found is None:
            raise MemoryUnitNotFoundError(f"no unit {unit_id!r} in any session", ref=unit_id)
        return Unit.from_json(found[2])

    def diff_sync(self, a: Any, b: Any, session_id: Any = None) -> Diff:
        """Units added, modified (same identity, another value, metadata or embedding) and
        removed from snapshot ``a`` to snapshot ``b`` (refs, ids or ``Snapshot``\\ s; a
        LangGraph checkpoint id names its checkpoint's snapshot)."""
        sa, sb = self.get_snapshot_sync(a, session_id), self.get_snapshot_sync(b, session_id)
        d = units.diff_units(self._unit_docs(sa), self._unit_docs(sb))
        return Diff(
            from_id=sa.id,
            to_id=sb.id,
            added=[Unit.from_json(x) for x in d["added"]],
            modified=[
                (Unit.from_json(m["before"]), Unit.from_json(m["after"])) for m in d["modified"]
            ],
            removed=[Unit.from_json(x) for x in d["removed"]],
        )

    def rollback_sync(
        self,
        session_id: Any,
        to_snapshot_id: Any = None,
        label: str | None = None,
        *,
        to: Any = None,
    ) -> Snapshot:
        """Append a snapshot whose unit set equals the target's (``to_snapshot_id`` or
        ``to=``: a ref or a ``Snapshot`` of this session); nothing is deleted. Its label is
        ``label``, else ``rollback to <short id>``."""
        if (to_snapshot_id is None) == (to is None):
            raise InvalidValue("name the snapshot to roll back to: to_snapshot_id=... or to=...")
        target_ref = to if to is not None else to_snapshot_id
        with self._lock:
            b = self.writer(self._branch(session_id).id)
            sid = _sid(b)
            try:
                target = self.get_snapshot_sync(target_ref, session_id)
            except SnapshotNotFoundError:
                if isinstance(target_ref, str) and target_ref.startswith("head"):
                    raise
                other = self.get_snapshot_sync(target_ref)  # another session's, or none at all
                raise CrossSessionRollbackError(
                    f"snapshot {other.short_id} belongs to session {other.session_id!r}, not "
                    f"{sid!r}"
                ) from None
            chosen = {i: Unit.from_json(doc) for i, doc in self._unit_docs(target).items()}
            name = label if label is not None else f"rollback to {target.short_id}"
            return self._append_snapshot(b, chosen, name, target.id)

    def labels_sync(self, session_id: Any = None) -> list[dict[str, Any]]:
        """Every snapshot label (of one session or all): label, session, snapshot id, time."""
        sessions = (
            [self.get_session_sync(session_id)] if session_id is not None else self.sessions_sync()
        )
        out = []
        for s in sessions:
            for snap in self.snapshots_sync(s.id):
                if snap.label is not None:
                    out.append(
                        {
                            "label": snap.label,
                            "session": s.id,
                            "snapshot": snap.id,
                            "created_at": snap.created_at.isoformat(timespec="milliseconds"),
                        }
                    )
        return out

    # -- effects and provenance ------------------------------------------------------------

    def effect_sync(self, session_id: Any, key: str, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` once, journaled on the session under ``key`` (read back after a crash);
        a unit built from its result with ``effect=key`` links to it in ``provenance``."""
        return self._branch(session_id).effect(key, fn)

    def provenance_sync(self, unit_id: str) -> dict[str, Any]:
        """Where a unit comes from: its content and source, the event (writer, process, time)
        that first stored it, every snapshot that holds it, and the effect whose result it is
        (found by the effect's key, never by matching values)."""
        return provenance.provenance(self, unit_id)

    def get_provenance_sync(self, unit_id: str) -> ProvenanceRecord:
        """A unit's provenance record: the latest written with ``write_provenance``, else one
        derived from the journal (hop 0 the unit's source, hop 1 the effect it came from)."""
        return provenance.get_provenance(self, unit_id)

    def write_provenance_sync(self, record: ProvenanceRecord) -> None:
        """Record where a unit came from (appended to its session)."""
        provenance.write_provenance(self, record)

    def vacuum_sync(self) -> tuple[int, int]:
        """Compact the file (nothing is deleted): (bytes before, bytes after)."""
        return self.journal.vacuum()

    # -- helpers ---------------------------------------------------------------------------

    @staticmethod
    def _snapshot_records(b: Any) -> list[Record]:
        return [
            r
            for r in b.history(1, b.head)
            if r.kind == "delta" and r.payload.get("op") == "snapshot"
        ]

    def _walk(self, b: Any) -> list[Snapshot]:
        """The branch's snapshots in order, their unit sets folded along the way (one pass
        over the history, however many snapshots)."""
        session = _sid(b)
        current: dict[str, str] = {}
        out: list[Snapshot] = []
        for r in self._snapshot_records(b):
            for ident in r.payload.get("drop", []):
                current.pop(ident, None)
            for d in r.payload.get("put", []):
                current[units.identity(d["key"], d["type"])] = d["id"]
            out.append(
                Snapshot(
                    id=r.hash,
                    session_id=session,
                    label=r.payload.get("label"),
                    parent_id=out[-1].id if out else None,
                    created_at=when(r.ts),
                    metadata=r.payload.get("metadata") or {},
                    seq=r.seq,
                    branch=b.id,
                    unit_ids=tuple(current[i] for i in sorted(current)),
                    rollback_of=r.payload.get("rollback_of"),
                )
            )
        return out

    def _snapshot_at(self, b: Any, seq: int) -> Snapshot:
        """The snapshot just written at ``seq`` (from the live state: no history walk)."""
        rec = self.journal.record((b.id, seq))
        state = b.state()
        previous = self._last_snapshot.get(b.id)
        snap = Snapshot(
            id=rec.hash,
            session_id=_sid(b),
            label=rec.payload.get("label"),
            parent_id=previous,
            created_at=when(rec.ts),
            metadata=rec.payload.get("metadata") or {},
            seq=seq,
            branch=b.id,
            unit_ids=tuple(state.units[i]["id"] for i in sorted(state.units)),
            rollback_of=rec.payload.get("rollback_of"),
        )
        self._last_snapshot[b.id] = rec.hash
        return snap

    def close_sync(self) -> None:
        """Close the journal (when this StateForge opened it) and stop the worker thread;
        idempotent."""
        self._close_journal()
        self._stop_worker()

    def _close_journal(self) -> None:
        if self._owns and not self._closed:
            self._closed = True
            self.journal.close()

    def _stop_worker(self) -> None:
        with self._worker_lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False)

    # -- the coroutines: the same work on the store's worker thread -----------------------

    async def create_session(
        self, label: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Session:
        """A new, empty session."""
        return await self._run(self.create_session_sync, label, metadata)

    async def sessions(self) -> list[Session]:
        """Every session, oldest first."""
        return await self._run(self.sessions_sync)

    async def list_sessions(self, limit: int = 100, before_id: str | None = None) -> list[Session]:
        """Sessions newest first (``limit``, ``before_id`` page through them)."""
        return await self._run(self.list_sessions_sync, limit, before_id)

    async def get_session(self, session_id: str) -> Session:
        """One session, by id, label, or 8+ character id prefix."""
        return await self._run(self.get_session_sync, session_id)

    async def snapshot(
        self,
        session_id: Any,
        units: Iterable[Unit],
        label: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Snapshot:
        """Record the session's unit set (see ``snapshot_sync``)."""
        return await self._run(self.snapshot_sync, session_id, list(units), label, metadata)

    async def head(self, session_id: Any) -> Snapshot | None:
        """The session's latest snapshot (None before the first)."""
        return await self._run(self.head_sync, session_id)

    async def snapshots(self, session_id: Any) -> list[Snapshot]:
        """The session's snapshots, oldest first."""
        return await self._run(self.snapshots_sync, session_id)

    async def list_snapshots(
        self, session_id: Any, limit: int = 100, before_id: str | None = None
    ) -> list[Snapshot]:
        """The session's snapshots newest first (``limit``, ``before_id`` page)."""
        return await self._run(self.list_snapshots_sync, session_id, limit, before_id)

    async def history(self, session_id: Any, max_depth: int = 10_000) -> list[Snapshot]:
        """The session's snapshots from head to root."""
        return await self._run(self.history_sync, session_id, max_depth)

    async def get_snapshot(self, ref: Any, session_id: Any = None) -> Snapshot:
        """A snapshot by ref (see ``get_snapshot_sync``)."""
        return await self._run(self.get_snapshot_sync, ref, session_id)

    async def units_of(self, snapshot_id: Any, session_id: Any = None) -> list[Unit]:
        """The units a snapshot holds."""
        return await self._run(self.units_of_sync, snapshot_id, session_id)

    async def get_units(self, snapshot_id: Any) -> list[Unit]:
        """The units a snapshot holds."""
        return await self._run(self.get_units_sync, snapshot_id)

    async def get_unit(self, unit_id: str) -> Unit:
        """A unit by id."""
        return await self._run(self.get_unit_sync, unit_id)

    async def diff(self, a: Any, b: Any, session_id: Any = None) -> Diff:
        """What changed from snapshot ``a`` to ``b``."""
        return await self._run(self.diff_sync, a, b, session_id)

    async def diff_iter(self, a: Any, b: Any, session_id: Any = None) -> AsyncIterator[DiffEntry]:
        """The changes from ``a`` to ``b`` one by one (added, modified, removed)."""
        for entry in (await self.diff(a, b, session_id)).entries():
            yield entry

    async def rollback(
        self,
        session_id: Any,
        to_snapshot_id: Any = None,
        label: str | None = None,
        *,
        to: Any = None,
    ) -> Snapshot:
        """Append a snapshot equal to the target (see ``rollback_sync``)."""
        return await self._run(self.rollback_sync, session_id, to_snapshot_id, label, to=to)

    async def labels(self, session_id: Any = None) -> list[dict[str, Any]]:
        """Every snapshot label."""
        return await self._run(self.labels_sync, session_id)

    async def effect(self, session_id: Any, key: str, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` once, journaled (a coroutine function is awaited here; a plain one runs
        on the worker thread)."""
        if inspect.iscoroutinefunction(fn):
            b = await self._run(self._branch, session_id)
            return await b.aeffect(key, fn)
        return await self._run(self.effect_sync, session_id, key, fn)

    async def provenance(self, unit_id: str) -> dict[str, Any]:
        """Where a unit comes from (see ``provenance_sync``)."""
        return await self._run(self.provenance_sync, unit_id)

    async def get_provenance(self, unit_id: str) -> ProvenanceRecord:
        """A unit's provenance record."""
        return await self._run(self.get_provenance_sync, unit_id)

    async def write_provenance(self, record: ProvenanceRecord) -> None:
        """Record where a unit came from."""
        await self._run(self.write_provenance_sync, record)

    async def vacuum(self) -> tuple[int, int]:
        """Compact the file."""
        return await self._run(self.vacuum_sync)

    async def close(self) -> None:
        """Close the journal (when this StateForge opened it); idempotent."""
        if self._executor is not None:
            await self._run(self._close_journal)
        self.close_sync()

    def __enter__(self) -> StateForge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close_sync()

    async def __aenter__(self) -> StateForge:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def units_by_identity(items: Iterable[Unit]) -> dict[str, Unit]:
    """Units by identity, the one created later winning."""
    return units.latest_by_identity(items)


def units_changes(before: dict[str, dict[str, Any]], after: dict[str, Unit]) -> dict[str, Any]:
    """The snapshot delta from a unit set to another."""
    return units.changes(before, after)


def _sid(b: Any) -> str:
    """A session's id, from its branch's name (``session:<id>``)."""
    return str(b.name)[len(SESSION_PREFIX) :]


def _mapping(value: Mapping[str, Any] | None, what: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueTypeError(f"{what} is a dict, not {value!r}")
    return value


def _page(items: list[Any], limit: int, before_id: str | None, what: str) -> list[Any]:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidValue(f"limit is a positive int, not {limit!r}")
    if before_id is not None:
        ids = [x.id for x in items]
        if before_id not in ids:
            raise NotFound(f"no {what} {before_id!r} to page before")
        items = items[ids.index(before_id) + 1 :]
    return items[:limit]


def _int(text: str, ref: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise InvalidValue(f"{ref!r}: head~N takes a whole number N") from None
    if n < 0:
        raise InvalidValue(f"{ref!r}: N is 0 or more")
    return n
