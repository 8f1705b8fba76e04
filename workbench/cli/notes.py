"""Notes and artifacts from the shell (``workbench.annotations``): write a note on a branch,
list a branch's notes and artifacts, attach a file, save an artifact's bytes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from ..annotations import check_not_running
from ..errors import InvalidValue
from .app import command, console, emit, open_journal, options

_BRANCH = "The branch: a name or an id."


@command("Journal")
def note(
    ctx: typer.Context,
    branch: str = typer.Argument(..., help=_BRANCH),
    text: str = typer.Argument(..., help="The note (quote it)."),
) -> None:
    """Journal a note on a branch (a note event: the state does not move). A fork that a
    running sweep may still write is noted once it has ended."""
    opts = options(ctx)
    with open_journal(opts, write=True) as j:
        b = j.branch(int(branch) if branch.isdigit() else branch)
        check_not_running(j, b.id)
        seq = b.note(text)
        j.flush()
    emit(
        opts,
        {"branch": b.id, "seq": seq, "text": text},
        lambda: console().print(f"noted on {b.id}@{seq}", markup=False),
    )


@command("Journal")
def attach(
    ctx: typer.Context,
    branch: str = typer.Argument(..., help=_BRANCH),
    path: Path = typer.Argument(..., help="The file to store in the journal (at most 64 MiB)."),
    name: str = typer.Option(None, "--name", help="Its name in the journal (default: the file's)."),
) -> None:
    """Store a file in the journal as an artifact of a branch (kept once per distinct content,
    under its blake3 digest)."""
    opts = options(ctx)
    with open_journal(opts, write=True) as j:
        art = j.branch(int(branch) if branch.isdigit() else branch).attach(name or path.name, path)
        j.flush()
    emit(
        opts,
        art.to_json(),
        lambda: console().print(
            f"attached {art.name} ({art.size} bytes, blake3 {art.hash[:16]}…) at "
            f"{art.branch}@{art.seq}",
            markup=False,
        ),
    )


@command("Journal")
def artifacts(
    ctx: typer.Context,
    branch: str = typer.Argument(..., help=_BRANCH),
    save: str = typer.Option(
        None, "--save", help="Write the bytes of the newest artifact of this name instead."
    ),
    out: Path = typer.Option(
        None,
        "-o",
        "--output",
        help="Where --save writes (default: the artifact's name; - for stdout).",
    ),
) -> None:
    """A branch's notes and artifacts (its history's, a fork's inherited ones included); with
    --save NAME, an artifact's bytes, checked against their digest."""
    opts = options(ctx)
    with open_journal(opts) as j:
        b = j.branch(int(branch) if branch.isdigit() else branch)
        if save is not None:
            data = b.artifact(save)
            target = out if out is not None else Path(save)
            if str(target) == "-":
                sys.stdout.buffer.write(data)
                sys.stdout.flush()
                return
            if target.exists() and target.is_dir():
                raise InvalidValue(f"{target} is a folder; give -o a file's path")
            tmp = target.with_name(target.name + ".partial")
            tmp.write_bytes(data)
            os.replace(tmp, target)
            emit(
                opts,
                {"name": save, "path": str(target), "size": len(data)},
                lambda: console().print(f"wrote {target} ({len(data)} bytes)", markup=False),
            )
            return
        notes, arts = b.notes(), b.artifacts()

    def human() -> None:
        c = console()
        for n in notes:
            c.print(f"note  {n.branch}@{n.seq}  {n.text}", markup=False)
        for a in arts:
            c.print(
                f"file  {a.branch}@{a.seq}  {a.name}  {a.size} bytes  {a.hash[:16]}…", markup=False
            )
        if not notes and not arts:
            c.print(f"branch {b.id} has no notes or artifacts", markup=False)

    emit(
        opts,
        {
            "branch": b.id,
            "notes": [n.to_json() for n in notes],
            "artifacts": [a.to_json() for a in arts],
        },
        human,
    )
