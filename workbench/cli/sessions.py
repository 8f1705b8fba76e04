"""Session-scoped commands of the units layer (``workbench.units``, the StateForge-compatible
API): sessions list, snapshots list, snapshot show, and tags. ``diff``, ``rollback``,
``history`` and ``provenance`` take ``--session`` (or a unit id) in ``journal.py``."""

from __future__ import annotations

import dataclasses
from typing import Any

import typer

from ..compat.stateforge import Snapshot, StateForge
from ..compat.stateforge.opening import db_from_env
from ..units import SessionState
from .app import app, brief, command, console, emit, open_journal, options, snapshots_app

sessions_app = typer.Typer(
    help="Sessions of the units layer (StateForge-style).", no_args_is_help=True
)
app.add_typer(sessions_app, name="sessions", rich_help_panel="Sessions")
snapshot_app = typer.Typer(help="One snapshot of a session.", no_args_is_help=True)
app.add_typer(snapshot_app, name="snapshot", rich_help_panel="Sessions")

_SESSION = "The session: its id, label or 8+ character id prefix."


def forge(j: Any) -> StateForge:
    """The units API over an open journal."""
    return StateForge(journal=j)


def session_journal(opts: Any, write: bool = False) -> Any:
    """The journal a session command works on: --db, $LITHIFY_DB, else $STATEFORGE_DB (the
    ``stateforge`` command's variable: one setting serves both commands), else the default."""
    from_env = db_from_env()
    if not opts.db and from_env:
        opts = dataclasses.replace(opts, db=from_env)
    return open_journal(opts, write=write)


@sessions_app.command("list")
def sessions_list(ctx: typer.Context) -> None:
    """Every session: id, label, when it started, its head snapshot."""
    opts = options(ctx)
    with session_journal(opts) as j:
        docs = [s.to_json() for s in forge(j).sessions_sync()]

    def human() -> None:
        out = console()
        for d in docs:
            head = (d["head"] or "")[:8] or "-"
            out.print(
                f"{d['id']}  {d['label'] or '':<20} {d['created_at']}  head {head}", markup=False
            )

    emit(opts, docs, human)


def _rows(snaps: list[Snapshot], newest_first: bool) -> list[dict[str, Any]]:
    n = len(snaps)
    out = [
        {"ref": "head" if n - 1 - i == 0 else f"head~{n - 1 - i}", **s.to_json()}
        for i, s in enumerate(snaps)
    ]
    return list(reversed(out)) if newest_first else out


def _print_rows(rows: list[dict[str, Any]]) -> None:
    out = console()
    for r in rows:
        extra = f"  (rollback of {r['rollback_of'][:8]})" if r["rollback_of"] else ""
        out.print(
            f"{r['ref']:<8} {r['short_id']}  {r['label'] or '':<20} {r['created_at']}  "
            f"{len(r['units'])} units{extra}",
            markup=False,
        )


@snapshots_app.command("list")
def snapshots_list(
    ctx: typer.Context,
    session: str = typer.Option(..., "--session", help=_SESSION),
) -> None:
    """A session's snapshots, oldest first: ref, short id, label, time, unit count."""
    opts = options(ctx)
    with session_journal(opts) as j:
        rows = _rows(forge(j).snapshots_sync(session), newest_first=False)
    emit(opts, rows, lambda: _print_rows(rows))


@snapshot_app.command("show")
def snapshot_show(
    ctx: typer.Context,
    ref: str = typer.Argument(..., help="head, head~N, a label, an id or an 8+ prefix."),
    session: str = typer.Option(None, "--session", help=_SESSION),
) -> None:
    """One snapshot and the units it holds."""
    opts = options(ctx)
    with session_journal(opts) as j:
        sf = forge(j)
        snap = sf.get_snapshot_sync(ref, session)
        doc = {**snap.to_json(), "units": [u.to_json() for u in sf.units_of_sync(snap.id)]}

    def human() -> None:
        out = console()
        out.print(f"{snap.id}  {snap.label or ''}  {snap.created_at}", markup=False)
        for u in doc["units"]:
            out.print(f"  {u['type']}/{u['key']}  {u['id']}  {brief(u['value'])}", markup=False)

    emit(opts, doc, human)


@command("Journal")
def tags(ctx: typer.Context) -> None:
    """Every label of the journal (``lithify tag``) and every snapshot label of its sessions."""
    opts = options(ctx)
    with open_journal(opts) as j:
        docs: list[dict[str, Any]] = [
            {"label": label, "branch": b, "seq": q, "kind": "tag"} for label, b, q in j.tags()
        ]
        if j.state_name == SessionState.state_name:
            docs += [{**d, "kind": "snapshot"} for d in forge(j).labels_sync()]

    def human() -> None:
        out = console()
        for d in docs:
            where = (
                f"{d['branch']}@{d['seq']}"
                if d["kind"] == "tag"
                else f"session {d['session'][:8]} snapshot {d['snapshot'][:8]}"
            )
            out.print(f"{d['label']:<24} {where}", markup=False)

    emit(opts, docs, human)


def history_rows(j: Any, session: str) -> list[dict[str, Any]]:
    """``history --session``: the snapshots from head to root."""
    return _rows(forge(j).snapshots_sync(session), newest_first=True)


def print_history(rows: list[dict[str, Any]]) -> None:
    _print_rows(rows)
