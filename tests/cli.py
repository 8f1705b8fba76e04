"""The lithify CLI in this process, through typer's CliRunner: the same entry point as the
console script (its error handler included), without a Python start-up per call. Tests whose
point is a separate process (SIGKILL, locks held elsewhere) still use a real subprocess."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

import typer
from typer.testing import CliRunner

from workbench.cli import main

# One command that hands every argument, --help included, to the console script's main().
_entry = typer.Typer(add_completion=False)


@_entry.command(
    context_settings={
        "ignore_unknown_options": True,
        "allow_extra_args": True,
        "help_option_names": [],
    }
)
def _run(ctx: typer.Context) -> None:
    main(list(ctx.args))


def lithify(
    *args: str, env: Mapping[str, str] | None = None, cwd: Path | str | None = None
) -> subprocess.CompletedProcess:
    """Run ``lithify ARGS`` here; the result looks like ``subprocess.run``'s."""
    changed = None
    if env is not None:  # like a child's environment: exactly these variables
        changed = {k: env.get(k) for k in set(os.environ) | set(env)}
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        r = CliRunner().invoke(_entry, list(args), env=changed, catch_exceptions=False)
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(["lithify", *args], r.exit_code, r.stdout, r.stderr)
