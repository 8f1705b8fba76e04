"""The lithify (and stateforge) CLI in this process, through typer's CliRunner: the same entry
point as the console script (its error handler included), without a Python start-up per call.
Tests whose point is a separate process (SIGKILL, locks held elsewhere) use a real subprocess."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

import typer
from typer.testing import CliRunner

from workbench.cli import main
from workbench.compat.stateforge.cli import main as stateforge_main


def _entry_for(main: Callable[[list[str]], None]) -> typer.Typer:
    """One command that hands every argument, --help included, to a console script's main()."""
    entry = typer.Typer(add_completion=False)

    @entry.command(
        context_settings={
            "ignore_unknown_options": True,
            "allow_extra_args": True,
            "help_option_names": [],
        }
    )
    def _run(ctx: typer.Context) -> None:
        main(list(ctx.args))

    return entry


_entry = _entry_for(main)
_stateforge_entry = _entry_for(stateforge_main)


def lithify(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | str | None = None
) -> subprocess.CompletedProcess:
    """Run ``lithify ARGS`` here; the result looks like ``subprocess.run``'s."""
    return _invoke(_entry, "lithify", args, env, cwd, None)


def stateforge(
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess:
    """Run ``stateforge ARGS`` here (``input``: what stdin holds)."""
    return _invoke(_stateforge_entry, "stateforge", args, env, cwd, input)


def _invoke(
    entry: typer.Typer,
    prog: str,
    args: tuple[str, ...],
    env: Mapping[str, str] | None,
    cwd: Path | str | None,
    input: str | None,
) -> subprocess.CompletedProcess:
    changed = None
    if env is not None:  # like a child's environment: exactly these variables
        changed = {k: env.get(k) for k in set(os.environ) | set(env)}
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        r = CliRunner().invoke(entry, list(args), env=changed, input=input, catch_exceptions=False)
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess([prog, *args], r.exit_code, r.stdout, r.stderr)
