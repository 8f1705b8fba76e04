"""Moving histories between journals, git-style: ``replicate(src, dst)`` copies the events a
destination lacks, from any backend to any backend (a file, a PostgreSQL URL), keeping every
hash. ``lithify clone``, ``push`` and ``pull`` are this function.

Branch identity across journals (ids differ from journal to journal):

- a named branch (main included) is its name;
- an unnamed fork is its parent's identity, its fork seq, the hash of the event it forked at,
  its params (canonical JSON) and, among forks equal in all of these, its rank by creation.

Every arriving event's hash is recomputed from its parent hash, kind and payload, and must chain
to the destination's head (or fork point); a branch whose history differs from the destination's
at some seq is refused like a non-fast-forward (``Diverged``, naming the branch and the first
differing seq) before anything is written. Events travel in batches, one transaction each, in
order, so an interrupted copy leaves whole, correctly chained prefixes and a rerun copies the
rest: running it twice copies nothing the second time. Effects, observations and receipts are
events and travel with them, and so do notes and artifacts (an artifact's bytes checked
against its digest before its event lands); snapshots, tags, sweeps and fork run records of the
copied branches follow. Writer provenance stays with the source (the copies are the replicator's).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from typing import Any, cast

from .annotations import carry_blobs
from .errors import Conflict, IntegrityError, InvalidValue, NotFound, WorkbenchError
from .events import ZERO_HASH, event_hash
from .storage import BranchRow, FullEvent, Storage, is_url, open_storage
from .storage.base import RUN_FIELDS

BATCH = 1000  # events per transaction
GROUPED_WRITES = 500  # snapshots, run records and tags per transaction


class Diverged(Conflict):
    """The destination has another event than the source at some seq of a branch (a
    non-fast-forward): nothing of this replication was written."""


@dataclass
class ReplicationReport:
    """What one replication did: events, branches, snapshots, sweeps, runs and tags copied, and
    per branch (by its name in the source, or ``#ID``) how many events."""

    source: str
    destination: str
    events: int = 0
    branches_created: int = 0
    snapshots: int = 0
    sweeps: int = 0
    runs: int = 0
    tags: int = 0
    artifacts: int = 0  # artifacts' bytes copied (each checked against its digest)
    per_branch: dict[str, int] = field(default_factory=dict)
    up_to_date: bool = True
    resumed: bool = False  # a clone that continued the part a killed one had copied

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-safe values (the CLI's --json output)."""
        return asdict(self)


Identity = tuple[Any, ...]


def _identities(s: Storage, rows: Sequence[BranchRow]) -> dict[int, Identity]:
    """Each branch's identity (see the module docstring), by id: the fork points' hashes read
    in one query, whatever the branches."""
    by_id = {r.id: r for r in rows}
    points = _fork_points(s, by_id)
    out: dict[int, Identity] = {}
    ranks: dict[Identity, int] = {}
    for r in rows:  # by id: parents before their forks
        if r.name is not None:
            out[r.id] = ("name", r.name)
            continue
        parent = out[r.parent] if r.parent is not None else ()
        base = ("fork", parent, r.fork_seq, points[r.id], r.params)
        rank = ranks.get(base, 0)
        ranks[base] = rank + 1
        out[r.id] = (*base, rank)
    return out


def _owner(by_id: dict[int, BranchRow], branch: int | None, seq: int) -> tuple[int, int] | None:
    """(branch that wrote seq, seq) in a branch's resolved history; None at seq 0."""
    while branch is not None and seq > 0:
        row = by_id[branch]
        if seq > row.fork_seq:
            return branch, seq
        branch = row.parent
    return None


def _fork_points(s: Storage, by_id: dict[int, BranchRow]) -> dict[int, bytes]:
    """The hash of each branch's fork point (zeros for a root or a fork at seq 0), by id."""
    owners = {b: _owner(by_id, r.parent, r.fork_seq) for b, r in by_id.items()}
    found = s.hashes_at([o for o in owners.values() if o is not None])
    out = {}
    for b, o in owners.items():
        if o is None:
            out[b] = ZERO_HASH
        elif o in found:
            out[b] = found[o]
        else:
            raise IntegrityError(f"branch {o[0]} has no event at seq {o[1]}")
    return out


def _name_of(identity: Identity | None) -> str:
    if identity is None:
        return "nothing (a root)"
    return repr(identity[1]) if identity[0] == "name" else "an unnamed fork"


def _label(row: BranchRow) -> str:
    return row.name if row.name is not None else f"#{row.id}"


def _shape(e: FullEvent) -> tuple[str, tuple[Any, ...]]:
    """The EVENT_SHAPES shape and extra columns that store this event's columns."""
    if e.key_hash is not None:
        if e.render_ms is not None:
            return "effect_rendered", (e.key_hash, e.fx_ms, e.attempts, e.render_ms)
        return "effect", (e.key_hash, e.fx_ms, e.attempts)
    if e.metric is not None:
        if e.event_id is not None:
            return "observe_identified", (e.metric, e.value, e.event_id)
        return "observe", (e.metric, e.value)
    if e.occurred_at is not None and e.event_id is not None:
        return "dated_identified", (e.occurred_at, e.event_id)
    if e.occurred_at is not None:
        return "dated", (e.occurred_at,)
    if e.event_id is not None:
        return "identified", (e.event_id,)
    return "plain", ()


def _open(where: Any, writable: bool, like: Storage | None = None) -> Storage:
    """The storage of a Journal, a Storage as it is, or a path or URL opened here."""
    if hasattr(where, "storage") and hasattr(where, "flush"):  # a Journal
        where.flush()
        return cast(Storage, where.storage)
    if hasattr(where, "branch_rows"):  # a Storage already
        return cast(Storage, where)
    path: str = os.fspath(where)
    if not writable:
        if not is_url(path) and not os.path.exists(path):
            raise NotFound(f"no journal at {path}", path=path)
        return open_storage(path, "process", readonly=True, create=False)
    schema = None
    if like is not None:  # a new destination records the source's State and initial state
        snap = like.snapshot_at(0, 0)
        schema = (
            like.meta.get("state_name", ""),
            snap.state if snap is not None else None,
            bytes(snap.digest) if snap is not None else b"",
            (snap.built or "") if snap is not None else "",
        )
    return open_storage(path, "process", schema=schema)


class _Choice:
    """The source branches a replication copies: ``ids`` (the chosen ones and their
    ancestors), and for an ancestor that was not chosen itself, up to which seq its chosen
    descendants need it (``need``) and which of them do (``needed_by``)."""

    def __init__(self, ids: set[int]) -> None:
        self.ids = ids
        self.need: dict[int, int] = {}
        self.needed_by: dict[int, list[str]] = {}


def _select(src: Storage, names: Sequence[str | int] | None) -> _Choice:
    """The source branches to copy: those named (by name or id) and their ancestors."""
    rows = {r.id: r for r in src.branch_rows()}
    if names is None:
        return _Choice(set(rows))
    named: list[BranchRow] = []
    for n in names:
        row = src.branch_by_name(n) if isinstance(n, str) and not n.isdigit() else None
        if row is None and (isinstance(n, int) or str(n).isdigit()):
            row = rows.get(int(n))
        if row is None:
            raise NotFound(f"no branch {n!r} in the source journal; `lithify branches` lists them")
        named.append(row)
    chosen = {r.id for r in named}
    choice = _Choice(set(chosen))
    for row in named:
        child = row
        while child.parent is not None:
            b = child.parent
            choice.ids.add(b)
            if b not in chosen:
                # an ancestor is needed up to where its chosen descendants fork from it
                choice.need[b] = max(choice.need.get(b, 0), child.fork_seq)
                choice.needed_by.setdefault(b, []).append(_label(row))
            child = rows[b]
    return choice


Plan = tuple[BranchRow, int | None, int, bytes, int | None]


def _plan(
    src: Storage,
    dst: Storage,
    choice: _Choice,
    rows: tuple[list[BranchRow], list[BranchRow]],
    ids: tuple[dict[int, Identity], dict[int, Identity]],
) -> list[Plan]:
    """For each chosen source branch: (row, destination id or None, seq to copy after, hash it
    must chain to, last seq to copy or None for all). Raises Diverged before anything is
    written. An ancestor copied only for its descendants may differ in the destination after
    the part they need: that part is all it must share, and nothing of it is copied then."""
    src_list, dst_list = rows
    src_rows = {r.id: r for r in src_list}
    dst_rows = {r.id: r for r in dst_list}
    src_id, dst_id = ids
    src_points, dst_points = _fork_points(src, src_rows), _fork_points(dst, dst_rows)
    src_heads, dst_heads = src.heads(), dst.heads()
    by_identity = {ident: b for b, ident in dst_id.items()}
    plan: list[Plan] = []
    for b in sorted(choice.ids):
        row = src_rows[b]
        target = by_identity.get(src_id[b])
        if target is not None:  # a named branch: it must fork from the same point on both sides
            there = dst_rows[target]
            here_from = (
                src_id.get(row.parent) if row.parent is not None else None,
                row.fork_seq,
                src_points[row.id],
            )
            there_from = (
                dst_id.get(there.parent) if there.parent is not None else None,
                there.fork_seq,
                dst_points[there.id],
            )
            if here_from != there_from:
                raise Diverged(
                    f"branch {_label(row)!r} forks from seq {row.fork_seq} of "
                    f"{_name_of(here_from[0])} in the source but from seq {there.fork_seq} of "
                    f"{_name_of(there_from[0])} (or another event there) in the destination; "
                    "nothing was copied: rename one of them",
                    name=_label(row),
                    seq=min(row.fork_seq, there.fork_seq) + 1,
                )
        src_head = src_heads.get(b)
        dst_head = dst_heads.get(target) if target is not None else None
        start = dst_head.seq if dst_head is not None else row.fork_seq  # the destination's own head
        chain = bytes(dst_head.hash) if dst_head is not None else src_points[b]
        if (
            dst_head is not None
            and src_head is not None
            and (src_head.seq, bytes(src_head.hash)) == (dst_head.seq, bytes(dst_head.hash))
        ):
            plan.append((row, target, start, chain, None))  # the same head: nothing to copy
            continue
        if dst_head is not None:
            assert target is not None  # a head there means the branch is there
            ours = src.event_at(b, dst_head.seq) if dst_head.seq > row.fork_seq else None
            same = ours is not None and bytes(ours.hash) == bytes(dst_head.hash)
            if not same:
                top = src_head.seq if src_head is not None else row.fork_seq
                if top < dst_head.seq:  # the destination is ahead: is the source a prefix?
                    at_top = dst.event_at(target, top) if top > row.fork_seq else None
                    if at_top is None or (
                        src_head is not None and bytes(at_top.hash) == bytes(src_head.hash)
                    ):
                        plan.append((row, target, dst_head.seq, chain, None))
                        continue
                seq = _first_difference(src, dst, b, target, row.fork_seq)
                need = choice.need.get(b)
                if need is not None and seq > need:
                    plan.append((row, target, need, chain, need))  # shared up to need: keep
                    continue
                for_whom = (
                    f" ({', '.join(map(repr, choice.needed_by[b]))} need it up to seq {need})"
                    if need is not None
                    else ""
                )
                raise Diverged(
                    f"branch {_label(row)!r} diverged at seq {seq}{for_whom}: the destination "
                    f"has another event there (a non-fast-forward); nothing was copied. Fork the "
                    f"branch under another name on one side, or copy into a fresh journal",
                    name=_label(row),
                    seq=seq,
                )
        plan.append((row, target, start, chain, None))
    return plan


def _first_difference(src: Storage, dst: Storage, b: int, target: int, after: int) -> int:
    """The first seq after ``after`` where the two branches' own events differ."""
    seq = after
    while True:
        a = src.events_after(b, seq, BATCH)
        c = dst.events_after(target, seq, BATCH)
        for x, y in zip(a, c, strict=False):
            if bytes(x.hash) != bytes(y.hash):
                return x.seq
        if len(a) != len(c):
            return (a if len(a) > len(c) else c)[min(len(a), len(c))].seq
        if not a:
            return seq + 1
        seq = a[-1].seq


def replicate(
    src: Any,
    dst: Any,
    branches: Sequence[str | int] | None = None,
    *,
    batch: int = BATCH,
) -> ReplicationReport:
    """Copy what ``dst`` lacks of ``src`` (journals, paths or URLs; all branches, or the named
    ones with their ancestors): incremental, idempotent, hash-checked. A missing destination is
    created with the source's State name. Raises ``Diverged`` (nothing written) when a branch
    differs, ``IntegrityError`` when an arriving event's hash does not match its chain."""
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise InvalidValue(f"batch is a positive number of events, not {batch!r}")
    s = _open(src, writable=False)
    try:
        d = _open(dst, writable=True, like=s)
    except BaseException:
        if s is not src and not hasattr(src, "storage"):
            s.close()
        raise
    try:
        if d.meta.get("state_name", "") not in ("", s.meta.get("state_name", "")):
            raise Conflict(
                f"{d.path} holds states of {d.meta.get('state_name')!r} and {s.path} of "
                f"{s.meta.get('state_name')!r}: histories of different State classes do not mix"
            )
        report = ReplicationReport(source=_where(s), destination=_where(d))
        with d.exclusive("replicate"):  # two copies into one journal take turns
            _copy(s, d, _select(s, branches), batch, report)
        report.up_to_date = not any(
            (report.events, report.branches_created, report.snapshots, report.sweeps)
            + (report.runs, report.tags)
        )
        return report
    finally:
        for opened, given in ((s, src), (d, dst)):
            if opened is not given and not hasattr(given, "storage"):
                opened.close()


PARTIAL = ".partial"  # a clone into a file is built under this suffix, then moved into place
_SIDECARS = ("-wal", "-shm", "-intents", "-replicate.lock")


def clone(
    src: Any,
    dst: str | os.PathLike[str],
    branches: Sequence[str | int] | None = None,
    *,
    batch: int = BATCH,
) -> ReplicationReport:
    """Copy ``src`` into a new journal at ``dst`` (``lithify clone``). A file is built as
    ``DST.partial`` and moved into place once complete, so ``dst`` never holds half a copy: a
    killed clone leaves the partial file, and running the clone again continues it (only what
    is missing travels). An existing ``dst`` file is refused (``pull`` updates one); a URL
    destination is replicated into as it is (a rerun continues it too)."""
    path = os.fspath(dst)
    if is_url(path):
        return replicate(src, path, branches, batch=batch)
    partial = path + PARTIAL
    if os.path.isdir(path):
        raise Conflict(
            f"{path} is a folder; clone into a file, e.g. {os.path.join(path, 'journal.db')}"
        )
    if os.path.exists(path):
        if os.path.exists(partial) and os.path.samefile(path, partial):
            _remove(partial)  # a clone killed after moving into place: it was complete
        origin = os.fspath(src) if isinstance(src, (str, os.PathLike)) else "SOURCE"
        if not _looks_like_sqlite(path):
            raise Conflict(
                f"{path} exists and is not a journal (or is an encrypted one, which `lithify "
                f"--db {path} pull {origin}` with LITHIFY_KEY set updates); clone to another name",
                path=path,
            )
        raise Conflict(f"{path} exists; `lithify --db {path} pull {origin}` updates it instead")
    resumed = os.path.exists(partial)
    try:
        report = replicate(src, partial, branches, batch=batch)
    except WorkbenchError as e:
        if not resumed and isinstance(e, (InvalidValue, NotFound, Conflict)):
            _remove(partial)  # refused before anything was worth keeping: leave nothing behind
            raise
        if not os.path.exists(partial):
            raise
        raise type(e)(  # say what is left, and what it is for
            f"{e.message}; {partial} keeps what was copied: run the clone again to continue "
            "(only what is missing travels), or delete it and its -replicate.lock",
            **e.fields,
        ) from e
    if _size(partial + "-wal") > 0:
        raise Conflict(
            f"{partial} is still open in another process (its WAL holds changes), so it was not "
            f"moved to {path}; run the clone again once that process is done",
            path=partial,
        )
    try:
        os.link(partial, path)
    except FileExistsError:
        raise Conflict(
            f"{path} appeared while this clone ran (another clone?); {partial} is kept: remove "
            f"it, or `lithify --db {path} pull` to update {path}",
            path=path,
        ) from None
    except OSError:  # no hard links on this file system: move it unless someone made one
        if os.path.exists(path):
            raise Conflict(f"{path} appeared while this clone ran; {partial} is kept") from None
        os.rename(partial, path)
    _remove(partial)
    report.destination, report.resumed = path, resumed
    return report


def _looks_like_sqlite(path: str) -> bool:
    """Whether a file starts as every plain SQLite database does."""
    try:
        with open(path, "rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _remove(partial: str) -> None:
    """A finished clone's partial name and what SQLite and the copy kept beside it."""
    for suffix in ("", *_SIDECARS):
        try:
            os.unlink(partial + suffix)
        except OSError:
            pass


def _where(s: Storage) -> str:
    from .storage import redacted

    return redacted(s.path) if is_url(s.path) else s.path


def _copy(s: Storage, d: Storage, choice: _Choice, batch: int, report: ReplicationReport) -> None:
    """Copy what the plan says, branch after branch (a branch's row after the events its fork
    point needs), in transactions that each hold up to ``batch`` events whatever branches they
    belong to, so a copy's cost follows its events, not its branches; then the snapshots, run
    records and tags."""
    rows = (s.branch_rows(), d.branch_rows())
    ids = (_identities(s, rows[0]), _identities(d, rows[1]))
    plan = _plan(s, d, choice, rows, ids)
    dst_of: dict[int, int] = {}
    sweeps = _Sweeps(s, d, report, ids)
    heads = s.heads()
    upto_of: dict[int, int] = {}  # ancestors kept at the part their descendants need
    with _Grouped(d, batch) as writes:
        for row, target, after, chain, upto in plan:
            if target is None:
                parent = dst_of[row.parent] if row.parent is not None else None
                if parent is None:
                    raise IntegrityError(f"the source's branch {_label(row)} has no parent to fork")
                (target,) = writes.write(
                    0,
                    lambda row=row, parent=parent: d.insert_branches(
                        [(row.name, parent, row.fork_seq, row.params, _sweep(sweeps, row, dst_of))]
                    ),
                )
                report.branches_created += 1
            dst_of[row.id] = target
            if upto is not None:
                upto_of[row.id] = upto  # its later events differ there: none of them travels
                continue
            head = heads.get(row.id)
            if head is None or head.seq <= after:
                continue  # nothing past what the destination holds
            for chunk in _events(s, row.id, target, after, chain, batch):
                carry = lambda c=chunk, b=row.id: carry_blobs(s, d, c, b)  # noqa: E731
                report.artifacts += writes.write(0, carry)
                writes.events(chunk)
                label = _label(row)
                report.per_branch[label] = report.per_branch.get(label, 0) + len(chunk)
                report.events += len(chunk)
    _follow(s, d, plan, dst_of, upto_of, sweeps, report)


def _sweep(sweeps: _Sweeps, row: BranchRow, dst_of: dict[int, int]) -> int | None:
    return sweeps.map(row.sweep, dst_of) if row.sweep is not None else None


class _Grouped:
    """Writes gathered into transactions of up to ``size`` (events, or other writes), each
    done at once inside the open one; a failure rolls back the open transaction only. Used as
    a context manager: the last transaction commits on leaving."""

    def __init__(self, d: Storage, size: int) -> None:
        self.d, self.size = d, size
        self.open: ExitStack | None = None
        self.weight = 0
        self.runs: list[list[tuple[Any, str]]] = []  # event runs not yet written

    def write(self, weight: int, write: Any) -> Any:
        self._begin()
        result = write()
        self._weigh(weight)
        return result

    def events(self, run: list[tuple[Any, str]]) -> None:
        """One branch's run of events, written with the others of this transaction at once
        (``append_runs``) when it commits; a branch row written meanwhile is already there
        (the same transaction) when its events' order is checked."""
        self._begin()
        self.runs.append(run)
        self._weigh(len(run))

    def _begin(self) -> None:
        if self.open is None:
            self.open = ExitStack()
            self.open.enter_context(self.d.atomic())

    def _weigh(self, weight: int) -> None:
        self.weight += max(1, weight)
        if self.weight >= self.size:
            self.commit()

    def commit(self) -> None:
        if self.open is not None:
            if self.runs:
                runs, self.runs = self.runs, []
                self.d.append_runs(runs)
            self.open.close()
            self.open, self.weight = None, 0

    def __enter__(self) -> _Grouped:
        return self

    def __exit__(self, kind: Any, error: Any, tb: Any) -> None:
        if self.open is None:
            return
        if error is None:
            self.commit()
        else:
            self.runs = []
            self.open.__exit__(kind, error, tb)  # the open transaction rolls back
            self.open = None


def _follow(
    s: Storage,
    d: Storage,
    plan: list[Plan],
    dst_of: dict[int, int],
    upto_of: dict[int, int],
    sweeps: _Sweeps,
    report: ReplicationReport,
) -> None:
    """What follows the copied events: snapshots, run records and tags, in grouped writes."""
    src_marks: dict[int, list[int]] = {}
    for b, q, _ in s.all_snapshot_marks():
        src_marks.setdefault(b, []).append(q)
    dst_marks = {(b, q) for b, q, _ in d.all_snapshot_marks()}
    src_runs = {r.branch: r for r in s.runs()}
    dst_runs = {r.branch: r for r in d.runs()}
    with _Grouped(d, GROUPED_WRITES) as writes:
        for row, _, _, _, upto in plan:
            target = dst_of[row.id]
            missing = [
                q
                for q in src_marks.get(row.id, [])
                if (upto is None or q <= upto) and (target, q) not in dst_marks
            ]
            for q in missing:  # the destination's event at q past upto is another one
                snap = s.snapshot_at(row.id, q)
                if snap is not None and (q == 0 or d.event_at(target, q) is not None):
                    writes.write(
                        1,
                        lambda t=target, q=q, snap=snap: d.put_snapshot(
                            t, q, snap.state, bytes(snap.digest), snap.built
                        ),
                    )
                    report.snapshots += 1
            run = src_runs.get(row.id)
            if run is not None and row.sweep is not None:
                there = dst_runs.get(target)
                newer = there is None or (run.finished or 0) > (there.finished or 0)
                sweep = sweeps.map(row.sweep, dst_of)
                if newer and sweep is not None:
                    fields = {f: getattr(run, f) for f in RUN_FIELDS}
                    writes.write(
                        1, lambda t=target, w=sweep, r=run, f=fields: d.put_run(t, w, r.status, **f)
                    )
                    report.runs += 1
        have = {label for label, _, _ in d.tags()}
        for label, b, q in s.tags():  # a label the destination has is the destination's
            if b in dst_of and label not in have and q <= upto_of.get(b, q):
                writes.write(1, lambda label=label, b=b, q=q: d.put_tag(label, dst_of[b], q))
                report.tags += 1


def _events(
    s: Storage, b: int, target: int, after: int, chain: bytes, batch: int
) -> Iterator[list[tuple[Any, str]]]:
    """A branch's events after ``after``, read and checked in batches, as rows for the
    destination's branch ``target``."""
    while True:
        events = s.events_after(b, after, batch)
        if not events:
            return
        rows = []
        for e in events:
            h = event_hash(bytes(e.parent_hash), e.kind, e.payload)
            if bytes(e.parent_hash) != chain or h != bytes(e.hash):
                raise IntegrityError(
                    f"the source's event {b}@{e.seq} does not match its chain (its stored hash "
                    f"or parent differs from the recomputed one); run `lithify verify` on the "
                    f"source. Nothing of this batch was copied",
                    branch=b,
                    seq=e.seq,
                )
            shape, extra = _shape(e)
            rows.append(
                ((target, e.seq, e.kind, bytes(e.hash), chain, e.ts, e.payload, *extra), shape)
            )
            chain = h
        yield rows
        after = events[-1].seq


class _Sweeps:
    """Sweep ids source -> destination, matched by base identity, point, spec and creation
    time; a sweep is created in the destination when a fork of it is first copied."""

    def __init__(
        self,
        s: Storage,
        d: Storage,
        report: ReplicationReport,
        ids: tuple[dict[int, Identity], dict[int, Identity]],
    ) -> None:
        self.s, self.d, self.report = s, d, report
        self.src_rows = {w.id: w for w in s.sweep_rows()}
        self.src_id, dst_id = ids
        self.by_identity = {ident: b for b, ident in dst_id.items()}
        self.existing = {
            (dst_id.get(w.base), w.at, w.spec, w.created): w.id for w in d.sweep_rows()
        }
        self.done: dict[int, int] = {}

    def map(self, sweep: int, dst_of: dict[int, int]) -> int | None:
        if sweep in self.done:
            return self.done[sweep]
        w = self.src_rows.get(sweep)
        if w is None:
            return None
        key = (self.src_id.get(w.base), w.at, w.spec, w.created)
        found = self.existing.get(key)
        if found is None:
            base = dst_of.get(w.base, self.by_identity.get(self.src_id.get(w.base, ())))
            if base is None:
                return None  # its base branch is not in the destination: no sweep
            found = self.d.insert_sweep(base, w.at, w.spec, w.created)
            if w.how is not None:
                self.d.set_sweep_how(found, w.how)
            self.existing[key] = found
            self.report.sweeps += 1
        self.done[sweep] = found
        return found
