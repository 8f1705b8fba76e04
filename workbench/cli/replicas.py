"""Moving histories between journals: clone, push, pull (``workbench.replication``). Any
journal is a file or a PostgreSQL URL; only missing events travel, hash-checked."""

from __future__ import annotations

import typer

from ..replication import ReplicationReport, replicate
from ..replication import clone as clone_journal
from .app import command, console, emit, options

_BRANCH_HELP = "Copy only this branch (name or id) and its ancestors; repeat for several."


def _show(report: ReplicationReport, verb: str) -> None:
    c = console()
    if report.up_to_date:
        c.print(f"{verb}: {report.destination} is up to date with {report.source}", markup=False)
        return
    if report.resumed:
        verb += " (continued where a stopped clone left off)"
    per = ", ".join(f"{b} +{n}" for b, n in report.per_branch.items()) or "no events"
    c.print(
        f"{verb}: {report.events} events ({per}), {report.branches_created} new branches, "
        f"{report.snapshots} snapshots, {report.sweeps} sweeps, {report.runs} run records, "
        f"{report.tags} tags: {report.source} -> {report.destination}",
        markup=False,
    )


def _run(ctx: typer.Context, verb: str, src: str, dst: str, branch: list[str]) -> None:
    opts = options(ctx)
    copy = clone_journal if verb == "clone" else replicate
    report = copy(src, dst, branches=branch or None)
    emit(opts, report.to_dict(), lambda: _show(report, verb))


@command("Replication")
def clone(
    ctx: typer.Context,
    src: str = typer.Argument(..., help="The journal to copy: a file or a PostgreSQL URL."),
    dst: str = typer.Argument(..., help="A new journal: a file or a PostgreSQL URL."),
    branch: list[str] = typer.Option([], "--branch", help=_BRANCH_HELP),
) -> None:
    """Copy a journal into a new one (same hashes; verify passes on both). A file appears
    whole once complete; a killed clone continues when run again. Refuses an existing
    destination file: use push or pull to update one."""
    _run(ctx, "clone", src, dst, branch)


@command("Replication")
def push(
    ctx: typer.Context,
    remote: str = typer.Argument(..., help="The journal to update: a file or a PostgreSQL URL."),
    branch: list[str] = typer.Option([], "--branch", help=_BRANCH_HELP),
) -> None:
    """Copy what REMOTE lacks of the --db journal; a branch that differs there is refused
    (exit 1, naming the branch and the first differing seq) and nothing is written."""
    _run(ctx, "push", options(ctx).path, remote, branch)


@command("Replication")
def pull(
    ctx: typer.Context,
    remote: str = typer.Argument(..., help="The journal to copy from: a file or a PostgreSQL URL."),
    branch: list[str] = typer.Option([], "--branch", help=_BRANCH_HELP),
) -> None:
    """Copy what the --db journal lacks of REMOTE (the reverse of push)."""
    _run(ctx, "pull", remote, options(ctx).path, branch)
