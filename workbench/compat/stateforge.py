"""StateForge-compatible sessions, memory units and snapshots on a lithify journal: a user of
that design ports by changing one import.

    from workbench.compat.stateforge import StateForge, units

    sf = StateForge(db_path="agent.db")       # or a PostgreSQL URL; encryption_key=... (SQLCipher)
    session = await sf.create_session(label="my-agent-run")
    snap = await sf.snapshot(session.id, units=[units.message(session.id, key="msg:0",
                                                              value="hello", source="user")])

Every coroutine has a synchronous twin named ``<name>_sync`` (for notebooks and scripts). A
session is a branch, a snapshot an event (its id is the event's hash), a unit an immutable,
content-addressed value stored once (``workbench.units``); refs are ``head``, ``head~N``, a
label, an id or an 8+ character id prefix. Rollback appends a snapshot whose unit set equals the
target's; nothing is ever deleted.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import units
from ..errors import InvalidValue, NotFound
from ..events import Record, canonical, iso_ms
from ..journal import Journal
from ..units import SESSION_PREFIX, SessionState, Unit

__all__ = ["Diff", "Session", "Snapshot", "StateForge", "Unit", "units"]


@dataclass(frozen=True)
class Session:
    """A session: a head pointer over its snapshots (a branch of the journal)."""

    id: str
    label: str | None
    branch: int
    created_at: str
    head_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "branch": self.branch,
            "created_at": self.created_at,
            "head": self.head_id,
        }


@dataclass(frozen=True)
class Snapshot:
    """An immutable set of units of one session (an event: ``id`` is its hash)."""

    id: str
    session_id: str
    label: str | None
    seq: int
    branch: int
    created_at: str
    parent_id: str | None
    unit_ids: tuple[str, ...]
    rollback_of: str | None = None

    @property
    def short_id(self) -> str:
        return self.id[:8]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "short_id": self.short_id,
            "session_id": self.session_id,
            "label": self.label,
            "seq": self.seq,
            "branch": self.branch,
            "created_at": self.created_at,
            "parent_id": self.parent_id,
            "units": list(self.unit_ids),
            "rollback_of": self.rollback_of,
        }


@dataclass(frozen=True)
class Diff:
    """What changed between two snapshots, by unit identity (``type/key``)."""

    from_id: str
    to_id: str
    added: list[Unit] = field(default_factory=list)
    modified: list[tuple[Unit, Unit]] = field(default_factory=list)
    removed: list[Unit] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f"added: {len(self.added)} modified: {len(self.modified)} removed: {len(self.removed)}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.from_id,
            "to": self.to_id,
            "added": [u.to_json() for u in self.added],
            "modified": [{"before": a.to_json(), "after": b.to_json()} for a, b in self.modified],
            "removed": [u.to_json() for u in self.removed],
            "summary": {
                "added": len(self.added),
                "modified": len(self.modified),
                "removed": len(self.removed),
            },
        }


class StateForge:
    """Sessions, units and snapshots on one journal (a file, or a PostgreSQL URL)."""

    def __init__(
        self,
        db_path: str | os.PathLike[str] = "stateforge.db",
        encryption_key: str | bytes | None = None,
        *,
        journal: Journal | None = None,
    ) -> None:
        self.journal = journal or Journal.open(
            db_path, SessionState, key=encryption_key, snapshot_every=1024
        )
        self._owns = journal is None
        self._last_snapshot: dict[int, str | None] = {}  # branch -> its latest snapshot id

    # -- sessions --------------------------------------------------------------------------

    def create_session_sync(self, label: str | None = None) -> Session:
        """A new, empty session."""
        if label is not None and not isinstance(label, str):
            raise InvalidValue(f"a session label is a str, not {label!r}")
        canonical(label, "session label")  # refused before the branch exists
        sid = str(uuid.uuid4())
        b = self.journal.root().fork_at(0, name=SESSION_PREFIX + sid)
        b.apply({"op": "session", "id": sid, "label": label})
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
            raise InvalidValue(f"{sid!r} names {len(found)} sessions; use the session id")
        raise NotFound(f"no session {sid!r}; `lithify sessions list` shows them")

    def _session(self, branch_id: int) -> Session:
        b = self.journal.branch(branch_id)
        first = b.history(1, 1) if b.head >= 1 else []
        if not first or first[0].payload.get("op") != "session":
            raise NotFound(f"branch {branch_id} is not a session")
        info = first[0].payload
        snaps = self._snapshot_records(b)  # one pass; no states rebuilt
        return Session(
            id=info["id"],
            label=info.get("label"),
            branch=b.id,
            created_at=iso_ms(first[0].ts),
            head_id=snaps[-1].hash if snaps else None,
        )

    # -- snapshots -------------------------------------------------------------------------

    def snapshot_sync(
        self, session_id: Any, units: Iterable[Unit], label: str | None = None
    ) -> Snapshot:
        """Record the session's unit set as ``units`` (of two with one identity, the later
        wins); returns the new snapshot. Units already stored are referenced, not copied."""
        b = self._branch(session_id)
        sid = b.state().session
        chosen = units_by_identity(units)
        wrong = [u for u in chosen.values() if u.session != sid]
        if wrong:
            raise InvalidValue(
                f"unit {wrong[0].key!r} belongs to session {wrong[0].session!r}, not {sid!r}"
            )
        return self._append_snapshot(b, chosen, label, None)

    def _append_snapshot(
        self, b: Any, chosen: dict[str, Unit], label: str | None, rollback_of: str | None
    ) -> Snapshot:
        if label is not None and not isinstance(label, str):
            raise InvalidValue(f"a snapshot label is a str, not {label!r}")
        delta: dict[str, Any] = {
            "op": "snapshot",
            "label": label,
            **units_changes(b.state().units, chosen),
        }
        if rollback_of is not None:
            delta["rollback_of"] = rollback_of
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

    def history_sync(self, session_id: Any) -> list[Snapshot]:
        """The session's snapshots from head to root (what ``lithify history --session``
        prints)."""
        return list(reversed(self.snapshots_sync(session_id)))

    def get_snapshot_sync(self, ref: str, session_id: Any = None) -> Snapshot:
        """A snapshot by ref: ``head``, ``head~N``, a label (the latest with it), an id or an
        8+ character id prefix (in one session, or in any with no session given)."""
        if not isinstance(ref, str) or not ref:
            raise InvalidValue(f"a snapshot ref is a non-empty str, not {ref!r}")
        scopes = [self._branch(session_id)] if session_id is not None else None
        if scopes is None:
            if ref == "head" or ref.startswith("head~"):
                raise InvalidValue(f"{ref!r} is relative to a session: pass session_id")
            scopes = [self.journal.branch(s.branch) for s in self.sessions_sync()]
        hits: list[Snapshot] = []
        for b in scopes:
            snaps = self._walk(b)
            if ref == "head" or ref.startswith("head~"):
                back = 0 if ref == "head" else _int(ref[5:], ref)
                if back >= len(snaps):
                    raise NotFound(f"{ref}: the session has {len(snaps)} snapshot(s)")
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
            raise InvalidValue(
                f"{ref!r} names {len(unique)} snapshots ({ids}); give more of the id, or the "
                "session"
            )
        raise NotFound(f"no snapshot {ref!r}; `lithify snapshots list --session S` shows them")

    def units_of_sync(self, snapshot_id: str, session_id: Any = None) -> list[Unit]:
        """The units a snapshot holds, by identity."""
        snap = self.get_snapshot_sync(snapshot_id, session_id)
        state = self.journal.branch(snap.branch).at(snap.seq)
        return [Unit.from_json(state.units[i]) for i in sorted(state.units)]

    def diff_sync(self, a: str, b: str, session_id: Any = None) -> Diff:
        """Units added, modified (same identity, another value, metadata or embedding) and
        removed from snapshot ``a`` to snapshot ``b``."""
        sa, sb = self.get_snapshot_sync(a, session_id), self.get_snapshot_sync(b, session_id)
        ua = self.journal.branch(sa.branch).at(sa.seq).units
        ub = self.journal.branch(sb.branch).at(sb.seq).units
        d = units.diff_units(ua, ub)
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
        self, session_id: Any, to_snapshot_id: str, label: str | None = None
    ) -> Snapshot:
        """Append a snapshot whose unit set equals ``to_snapshot_id``'s (nothing is deleted)."""
        b = self._branch(session_id)
        target = self.get_snapshot_sync(to_snapshot_id, session_id)
        target_units = self.journal.branch(target.branch).at(target.seq).units
        chosen = {i: Unit.from_json(doc) for i, doc in target_units.items()}
        return self._append_snapshot(b, chosen, label, target.id)

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
                            "created_at": snap.created_at,
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
        if not isinstance(unit_id, str) or not unit_id:
            raise InvalidValue(f"a unit id is a non-empty str, not {unit_id!r}")
        for s in self.sessions_sync():
            b = self.journal.branch(s.branch)
            recs = self._snapshot_records(b)
            held: list[str] = []
            first: Record | None = None
            doc: dict[str, Any] | None = None
            current: dict[str, str] = {}
            for r in recs:
                for ident in r.payload.get("drop", []):
                    current.pop(ident, None)
                for d in r.payload.get("put", []):
                    current[units.identity(d["key"], d["type"])] = d["id"]
                    if d["id"] == unit_id and first is None:
                        first, doc = r, d
                if unit_id in current.values():
                    held.append(r.hash)
            if first is None or doc is None:
                continue
            who = self.journal.provenance((first.branch, first.seq))["event"]
            out: dict[str, Any] = {
                "unit": doc,
                "session": s.id,
                "source": doc.get("source"),
                "written": {
                    "snapshot": first.hash,
                    "at": iso_ms(first.ts),
                    "writer": who.get("writer"),
                    "pid": who.get("pid"),
                    "process_source": who.get("source"),
                },
                "snapshots": held,
                "effect": None,
            }
            key = doc.get("effect")
            if key is not None:
                fx = [
                    e
                    for e in b.history(1, first.seq)
                    if e.kind == "effect" and e.payload.get("key") == key
                ]
                if fx:
                    e = fx[-1]
                    p = self.journal.provenance((e.branch, e.seq))["event"]
                    out["effect"] = {
                        "key": key,
                        "branch": e.branch,
                        "seq": e.seq,
                        "hash": e.hash,
                        "result": e.payload.get("result"),
                        "duration_ms": p.get("duration_ms"),
                        "attempts": p.get("attempts"),
                    }
                else:
                    out["effect"] = {"key": key, "missing": True}
            return out
        raise NotFound(f"no unit {unit_id!r} in any session")

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
        session = b.state().session
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
                    seq=r.seq,
                    branch=b.id,
                    created_at=iso_ms(r.ts),
                    parent_id=out[-1].id if out else None,
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
            session_id=state.session,
            label=rec.payload.get("label"),
            seq=seq,
            branch=b.id,
            created_at=iso_ms(rec.ts),
            parent_id=previous,
            unit_ids=tuple(state.units[i]["id"] for i in sorted(state.units)),
            rollback_of=rec.payload.get("rollback_of"),
        )
        self._last_snapshot[b.id] = rec.hash
        return snap

    def close_sync(self) -> None:
        """Close the journal (when this StateForge opened it)."""
        if self._owns:
            self.journal.close()

    # -- the coroutines --------------------------------------------------------------------

    async def create_session(self, label: str | None = None) -> Session:
        return self.create_session_sync(label)

    async def sessions(self) -> list[Session]:
        return self.sessions_sync()

    async def get_session(self, session_id: str) -> Session:
        return self.get_session_sync(session_id)

    async def snapshot(
        self, session_id: Any, units: Iterable[Unit], label: str | None = None
    ) -> Snapshot:
        return self.snapshot_sync(session_id, units, label)

    async def head(self, session_id: Any) -> Snapshot | None:
        return self.head_sync(session_id)

    async def snapshots(self, session_id: Any) -> list[Snapshot]:
        return self.snapshots_sync(session_id)

    async def history(self, session_id: Any) -> list[Snapshot]:
        return self.history_sync(session_id)

    async def get_snapshot(self, ref: str, session_id: Any = None) -> Snapshot:
        return self.get_snapshot_sync(ref, session_id)

    async def units_of(self, snapshot_id: str, session_id: Any = None) -> list[Unit]:
        return self.units_of_sync(snapshot_id, session_id)

    async def diff(self, a: str, b: str, session_id: Any = None) -> Diff:
        return self.diff_sync(a, b, session_id)

    async def rollback(
        self, session_id: Any, to_snapshot_id: str, label: str | None = None
    ) -> Snapshot:
        return self.rollback_sync(session_id, to_snapshot_id, label)

    async def labels(self, session_id: Any = None) -> list[dict[str, Any]]:
        return self.labels_sync(session_id)

    async def effect(self, session_id: Any, key: str, fn: Callable[[], Any]) -> Any:
        import inspect

        if inspect.iscoroutinefunction(fn):  # awaited, and journaled like any effect
            return await self._branch(session_id).aeffect(key, fn)
        return self.effect_sync(session_id, key, fn)

    async def provenance(self, unit_id: str) -> dict[str, Any]:
        return self.provenance_sync(unit_id)

    async def close(self) -> None:
        self.close_sync()

    def __enter__(self) -> StateForge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close_sync()


def units_by_identity(items: Iterable[Unit]) -> dict[str, Unit]:
    """Units by identity, the later of two with one identity winning."""
    return units.latest_by_identity(items)


def units_changes(before: dict[str, dict[str, Any]], after: dict[str, Unit]) -> dict[str, Any]:
    """The snapshot delta from a unit set to another."""
    return units.changes(before, after)


def _int(text: str, ref: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise InvalidValue(f"{ref!r}: head~N takes a whole number N") from None
    if n < 0:
        raise InvalidValue(f"{ref!r}: N is 0 or more")
    return n
