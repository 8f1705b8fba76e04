"""Forks and sweeps: a fork is one row (its parent, fork point and params), nothing copied; a
sweep is forks recorded together (with how they run and a pending run record per fork) in one
transaction. ``Journal.fork``, ``sweep``, ``open_sweep``, ``sweep_fork`` and ``sweeps`` call
these; an argument is checked before anything is written.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import events as ev
from .branch import Branch
from .errors import InvalidValue
from .events import SweepInfo as SweepInfo  # where it is defined; named here too
from .storage import BranchRow

if TYPE_CHECKING:
    from .port import JournalPort


def checked_params(journal: JournalPort, params: Mapping[str, Any] | None, what: str) -> str:
    """A fork's params as canonical JSON, or InvalidValue: not a dict, not JSON-safe, or more
    bytes than one event may hold (``max_event_bytes``: params are read with every fork)."""
    given = {} if params is None else params
    if not isinstance(given, Mapping):
        raise InvalidValue(
            f"{what} must be a dict of JSON-safe values, not {type(given).__name__}", path=what
        )
    text = ev.canonical(dict(given), what)
    ev.check_size(text, journal.max_event_bytes, what)
    return text


def _checked(journal: JournalPort, value: Mapping[str, Any], what: str) -> str:
    """A sweep's spec or how as canonical JSON, at most ``max_event_bytes`` of it."""
    text = ev.canonical(dict(value), what)
    ev.check_size(text, journal.max_event_bytes, what)
    return text


def fork(
    journal: JournalPort,
    base: Branch,
    at: int,
    specs: Sequence[tuple[str | None, Mapping[str, Any] | None]],
    sweep: int | None = None,
) -> list[Branch]:
    """Fork ``base`` at ``at`` once per (name, params): one row each, nothing copied."""
    journal.flush(base.id)  # the fork point may be buffered; before any transaction
    base._check_seq(at, "fork at")
    rows: list[tuple[str | None, int, int, str, int | None]] = []
    for name, params in specs:
        if name is not None and ev.check_text(name, "a branch name").isdigit():
            raise InvalidValue(f"a branch name is a non-empty, non-numeric str, not {name!r}")
        rows.append((name, base.id, at, checked_params(journal, params, "params"), sweep))
    ids = journal.storage.insert_branches(rows)
    at_hash = base._hash_at(at)
    out = []
    for bid, (name, parent, fork_seq, params_text, sw) in zip(ids, rows, strict=True):
        row = BranchRow(bid, name, parent, fork_seq, params_text, 0, sw)
        journal.history.remember(row)
        out.append(Branch(journal, row, head=(fork_seq, at_hash)))
    return out


def sweep(
    journal: JournalPort,
    base: Branch | int | str,
    at: int,
    params: Iterable[Mapping[str, Any]],
    spec: Mapping[str, Any] | None = None,
    how: Mapping[str, Any] | None = None,
) -> list[Branch]:
    """Fork ``base`` at ``at`` once per parameter set (rows only) and record the sweep; with
    ``how`` (runner, workers, target...), also how it runs and a pending run per fork, in
    the same transaction (a coordinator killed right after planning resumes the same way)."""
    b = base if isinstance(base, Branch) else journal.branch(base)
    given = list(params)
    if not given:
        raise InvalidValue("a sweep needs at least one parameter set")
    for i, p in enumerate(given):  # every set checked before the sweep's row is written
        checked_params(journal, p, f"params[{i}]")
    plist = [dict(p) for p in given]
    b._check_seq(at, "sweep at")
    if spec:
        _checked(journal, spec, "the sweep's spec")
    text = ev.canonical({"params": plist, **(dict(spec) if spec else {})}, "sweep")
    how_text = _checked(journal, how, "how") if how is not None else None
    journal.flush(
        b.id
    )  # not inside the transaction: a rollback would take acknowledged events with it
    with journal.storage.atomic():
        sweep_id = journal.storage.insert_sweep(b.id, at, text)
        forks = fork(journal, b, at, [(None, p) for p in plist], sweep=sweep_id)
        if how is not None and how_text is not None:
            journal.storage.set_sweep_how(sweep_id, how_text)
            for f in forks:
                journal.storage.put_run(f.id, sweep_id, "pending", runner=how.get("runner"))
        return forks


def open_sweep(
    journal: JournalPort,
    base: Branch | int | str,
    at: int,
    spec: Mapping[str, Any],
    how: Mapping[str, Any],
) -> int:
    """Record an adaptive sweep before its first fork (its trials are forked one at a time
    with ``sweep_fork``); returns its id."""
    b = base if isinstance(base, Branch) else journal.branch(base)
    b._check_seq(at, "sweep at")
    _checked(journal, spec, "the sweep's spec")
    text = ev.canonical({"params": [], **dict(spec)}, "sweep")
    how_text = _checked(journal, how, "how")
    journal.flush(b.id)
    with journal.storage.atomic():
        sweep_id = journal.storage.insert_sweep(b.id, at, text)
        journal.storage.set_sweep_how(sweep_id, how_text)
        return sweep_id


def sweep_fork(
    journal: JournalPort,
    sweep: int,
    base: Branch | int | str,
    at: int,
    params: Mapping[str, Any],
    runner: str | None = None,
) -> Branch:
    """Add one fork of ``base`` at ``at`` to a recorded sweep, with its pending run, in one
    transaction (an adaptive sweep's next trial)."""
    b = base if isinstance(base, Branch) else journal.branch(base)
    checked_params(journal, params, "params")  # before the transaction (and its writer row)
    journal.flush(b.id)
    with journal.storage.atomic():
        (new,) = fork(journal, b, at, [(None, params)], sweep=sweep)
        journal.storage.put_run(new.id, sweep, "pending", runner=runner)
        return new


def sweeps(journal: JournalPort) -> list[SweepInfo]:
    """Every recorded sweep with the ids of its forks."""
    journal.settle()
    by_sweep: dict[int, list[int]] = {}
    for r in journal.storage.branch_rows():
        if r.sweep is not None:
            by_sweep.setdefault(r.sweep, []).append(r.id)
    return [
        SweepInfo(
            s.id,
            s.base,
            s.at,
            ev.loads(s.spec),
            s.created,
            by_sweep.get(s.id, []),
            ev.loads(s.how) if s.how else {},
        )
        for s in journal.storage.sweep_rows()
    ]
