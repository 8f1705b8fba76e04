"""The ``stateforge`` command: the design's CLI over a lithify journal.

    stateforge [--db PATH] [--json] COMMAND
    sessions list | snapshots list --session S | snapshot show REF [--session S]
    diff FROM TO [--session S] | rollback --session S --to REF [--label L] [--yes]
    history --session S | provenance UNIT_ID | vacuum

The journal is ``--db``, else ``$STATEFORGE_DB``, else ``stateforge.db``; ``$STATEFORGE_KEY``
opens an encrypted one. Refs: ``head``, ``head~N``, a label, an id or an 8+ character prefix.
``--json`` prints one JSON document (an error too). Exit codes: 0 ok, 1 not found or failed,
2 the command line is wrong (an unknown or ambiguous ref included). Reads never write. A thin
client of ``StateForge``, like ``lithify``'s own session commands (which stay as they are).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import typer

from ...cli.app import run_app
from ...errors import EncryptionKeyError, NotFound, StateMismatch
from ...storage import is_url
from .client import StateForge
from .models import Session, Snapshot, unit_json
from .opening import DB_ENV, KEY_ENV

app = typer.Typer(
    name="stateforge",
    help="Versioned memory for AI agents (sessions, snapshots, diff, rollback, provenance) on a "
    "lithify journal. $STATEFORGE_KEY opens an encrypted one.\n\nExit codes: 0 ok; 1 not "
    "found or failed; 2 the command line is wrong.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
sessions_app = typer.Typer(help="Sessions.", no_args_is_help=True)
snapshots_app = typer.Typer(help="A session's snapshots.", no_args_is_help=True)
snapshot_app = typer.Typer(help="One snapshot.", no_args_is_help=True)
app.add_typer(sessions_app, name="sessions")
app.add_typer(snapshots_app, name="snapshots")
app.add_typer(snapshot_app, name="snapshot")

_SESSION = "The session: its label, id or 8+ character id prefix."
_REF = "head, head~N, a label, an id or an 8+ character id prefix."
_NONE = "—"


@dataclass
class Opts:
    """The global options."""

    db: str
    json: bool


@app.callback()
def _global(
    ctx: typer.Context,
    db: str = typer.Option(
        "stateforge.db",
        "--db",
        envvar=DB_ENV,
        help="The journal file (or a PostgreSQL URL).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead."),
) -> None:
    """The global options (see the app's help)."""
    ctx.obj = Opts(db=db, json=as_json)


def _opts(ctx: typer.Context) -> Opts:
    obj = ctx.find_root().obj
    assert isinstance(obj, Opts)
    return obj


def _open(opts: Opts, write: bool = False) -> StateForge:
    """The store at --db: read-only unless the command writes; a missing file is an error,
    and so is a file this command cannot read, each said in this command's words."""
    if not is_url(opts.db) and not os.path.exists(opts.db):
        raise NotFound(f"no journal at {opts.db}; pass --db PATH (or set {DB_ENV})", path=opts.db)
    key = os.environ.get(KEY_ENV) or None
    try:
        return StateForge(opts.db, encryption_key=key, readonly=not write)
    except EncryptionKeyError:
        raise EncryptionKeyError(
            f"{opts.db}: ${KEY_ENV} does not decrypt it (a wrong key, or not a journal)"
            if key is not None
            else f"{opts.db} is encrypted, or not a journal: set ${KEY_ENV} to its key",
            path=opts.db,
        ) from None
    except StateMismatch as e:
        raise StateMismatch(
            f"{opts.db} is a lithify journal of another agent ({e.stored or 'unknown'}), not "
            f"a StateForge store: `lithify --db {opts.db} ...` reads it; point --db at a "
            "store (stateforge.db by default)",
            path=opts.db,
        ) from None


def _emit(opts: Opts, data: Any, human: Callable[[], None]) -> None:
    if opts.json:
        sys.stdout.write(json.dumps(data, ensure_ascii=False, default=str) + "\n")
    else:
        human()


def _short(text: str | None) -> str:
    return text[:8] if text else _NONE


def _when(snap: Snapshot | Session) -> str:
    return snap.created_at.isoformat(timespec="seconds")


def _brief(value: Any, n: int) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= n else text[: n - 1] + "…"


def _name(s: Session) -> str:
    return s.label or _short(s.id)


def _table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        typer.echo("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())


def _confirm(question: str) -> None:
    """Ask on stderr (stdout stays the command's output, JSON included); anything but y/yes,
    or no input at all, aborts."""
    sys.stderr.write(f"{question} [y/N]: ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    if not answer.endswith("\n"):
        sys.stderr.write("\n")
    if answer.strip().lower() not in ("y", "yes"):
        raise typer.Abort()


@sessions_app.command("list")
def sessions_list(ctx: typer.Context) -> None:
    """Every session, newest first: id, label, head snapshot, when it started."""
    opts = _opts(ctx)
    with _open(opts) as sf:
        found = sf.list_sessions_sync(limit=1_000_000)

    def human() -> None:
        typer.echo("Sessions")
        _table(
            ["ID", "Label", "Head", "Created"],
            [[_short(s.id), s.label or _NONE, _short(s.head_snapshot_id), _when(s)] for s in found],
        )

    _emit(opts, [s.to_json() for s in found], human)


def _refs(snaps: list[Snapshot]) -> list[dict[str, Any]]:
    """Snapshots newest first, each with its ``head~N`` ref."""
    return [
        {"ref": "head" if i == 0 else f"head~{i}", **s.to_json()}
        for i, s in enumerate(reversed(snaps))
    ]


@snapshots_app.command("list")
def snapshots_list(
    ctx: typer.Context,
    session: str = typer.Option(..., "--session", "-s", help=_SESSION),
    limit: int = typer.Option(100, "--limit", help="At most this many, newest first."),
) -> None:
    """A session's snapshots, newest first: id, label, parent, time."""
    opts = _opts(ctx)
    with _open(opts) as sf:
        s = sf.get_session_sync(session)
        snaps = sf.snapshots_sync(s.id)
    rows = _refs(snaps)[:limit]
    shown = list(reversed(snaps))[:limit]

    def human() -> None:
        typer.echo(f"Snapshots in {_name(s)}")
        _table(
            ["Ref", "ID", "Label", "Parent", "Created"],
            [
                [r["ref"], x.short_id, x.label or _NONE, _short(x.parent_id), _when(x)]
                for r, x in zip(rows, shown, strict=True)
            ],
        )

    _emit(opts, rows, human)


@snapshot_app.command("show")
def snapshot_show(
    ctx: typer.Context,
    ref: str = typer.Argument(..., help=_REF),
    session: str = typer.Option(None, "--session", "-s", help=_SESSION + " Needed for head~N."),
) -> None:
    """One snapshot and the units it holds."""
    opts = _opts(ctx)
    with _open(opts) as sf:
        snap = sf.get_snapshot_sync(ref, session)
        held = sf.units_of_sync(snap.id)
    doc = {"snapshot": snap.to_json(), "units": [unit_json(u) for u in held]}

    def human() -> None:
        typer.echo(f"Snapshot {snap.id}")
        typer.echo(f"  label:     {snap.label or _NONE}")
        typer.echo(f"  session:   {snap.session_id}")
        typer.echo(f"  parent:    {snap.parent_id or _NONE}")
        typer.echo(f"  created:   {_when(snap)}")
        if snap.metadata:
            typer.echo(f"  metadata:  {_brief(snap.metadata, 200)}")
        typer.echo(f"Units ({len(held)})")
        _table(
            ["Key", "Type", "Source", "Value"],
            [[u.key, str(u.type), u.source or _NONE, _brief(u.value, 60)] for u in held],
        )

    _emit(opts, doc, human)


@app.command("diff")
def diff(
    ctx: typer.Context,
    from_ref: str = typer.Argument(..., metavar="FROM", help=_REF),
    to_ref: str = typer.Argument(..., metavar="TO", help=_REF),
    session: str = typer.Option(None, "--session", "-s", help=_SESSION + " Needed for head~N."),
) -> None:
    """What changed between two snapshots: units added, modified and removed."""
    opts = _opts(ctx)
    with _open(opts) as sf:
        d = sf.diff_sync(from_ref, to_ref, session)

    def human() -> None:
        typer.echo(f"added: {len(d.added)}  modified: {len(d.modified)}  removed: {len(d.removed)}")
        for u in d.added:
            typer.echo(f"  + {u.key} ({u.type}) = {_brief(u.value, 60)}")
        for a, b in d.modified:
            typer.echo(f"  ~ {a.key} ({a.type}): {_brief(a.value, 30)} → {_brief(b.value, 30)}")
        for u in d.removed:
            typer.echo(f"  - {u.key} ({u.type})")

    _emit(opts, d.to_json(), human)


@app.command("rollback")
def rollback(
    ctx: typer.Context,
    session: str = typer.Option(..., "--session", "-s", help=_SESSION),
    to: str = typer.Option(..., "--to", "-t", help="The snapshot to go back to: " + _REF),
    label: str = typer.Option(None, "--label", help="The new snapshot's label."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Make a snapshot's unit set the session's head again, as a new snapshot (nothing is
    deleted). Asks first unless --yes."""
    opts = _opts(ctx)
    with _open(opts, write=True) as sf:
        s = sf.get_session_sync(session)
        target = sf.get_snapshot_sync(to, s.id)  # a wrong ref fails before the question
        if not yes:
            _confirm(
                f"Roll back session {session!r} to {to!r}? (creates a new head snapshot; no "
                "data is deleted)"
            )
        new = sf.rollback_sync(s.id, target.id, label)

    def human() -> None:
        typer.echo(f"rolled back session {_name(s)} to {target.short_id}")
        typer.echo(f"new head: {new.id}")

    _emit(opts, new.to_json(), human)


@app.command("history")
def history(
    ctx: typer.Context,
    session: str = typer.Option(..., "--session", "-s", help=_SESSION),
    limit: int = typer.Option(100, "--limit", help="Show at most this many, from head."),
) -> None:
    """A session's snapshots from head to root: ref, short id, label, time."""
    opts = _opts(ctx)
    with _open(opts) as sf:
        s = sf.get_session_sync(session)
        chain = list(reversed(sf.snapshots_sync(s.id)))
    shown = chain[: max(limit, 0)]

    def human() -> None:
        count = f"{len(chain)} snapshots"
        if len(shown) < len(chain):
            count = f"{len(shown)} of {len(chain)} snapshots"
        typer.echo(f"History for session {_name(s)} ({count}, head → root)")
        width = max([9, *(len(x.label or _NONE) for x in shown)])
        for i, x in enumerate(shown):
            ref = "head" if i == 0 else f"head~{i}"
            typer.echo(f"  {ref:>8}  {x.short_id}  {x.label or _NONE:<{width}}  {_when(x)}")

    _emit(opts, _refs(list(reversed(chain)))[: len(shown)], human)


@app.command("provenance")
def provenance(
    ctx: typer.Context,
    unit_id: str = typer.Argument(..., help="A unit's id (u + 32 hex)."),
) -> None:
    """Where a unit came from: its source, when it was stored, the trace (the effect whose
    result it is), and the snapshots that hold it."""
    opts = _opts(ctx)
    with _open(opts) as sf:
        rec = sf.get_provenance_sync(unit_id)
        full = sf.provenance_sync(unit_id)
    doc = {**rec.to_json(), **{k: v for k, v in full.items() if k != "records"}}

    def human() -> None:
        typer.echo(f"Provenance for unit {unit_id}")
        typer.echo(f"  source:      {rec.source}")
        typer.echo(f"  source_ref:  {rec.source_ref or _NONE}")
        typer.echo(f"  ingested:    {rec.ingested_at.isoformat(timespec='seconds')}")
        typer.echo(f"  session:     {full['session']}")
        typer.echo(f"  snapshots:   {len(full['snapshots'])} hold it")
        if rec.trace:
            typer.echo("Trace")
            _table(
                ["Hop", "Source", "Source Ref"],
                [[str(h.index), h.source, h.source_ref or _NONE] for h in rec.trace],
            )
        else:
            typer.echo("  trace:       (empty)")
        fx = full["effect"]
        if fx is not None and not fx.get("missing"):
            typer.echo(f"  effect:      {fx['key']} -> {_brief(fx['result'], 60)}")

    _emit(opts, doc, human)


@app.command("vacuum")
def vacuum(ctx: typer.Context) -> None:
    """Compact the journal file. Deletes nothing: every snapshot and unit stays."""
    opts = _opts(ctx)
    with _open(opts, write=True) as sf:
        before, after = sf.vacuum_sync()

    _emit(
        opts,
        {"vacuumed": True, "bytes_before": before, "bytes_after": after},
        lambda: typer.echo("vacuum complete"),
    )


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``stateforge`` console script."""
    run_app(app, "stateforge", argv)
