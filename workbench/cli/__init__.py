"""The ``lithify`` command: a thin layer over the library (parse, call, format).

``app`` holds the global options and the one error handler; ``journal``, ``sweeps`` and ``lab``
add the generic commands; each installed agent adds its own (see ``workbench.plugins``).
"""

from __future__ import annotations

import os
import sys

import typer

from .. import plugins
from . import journal, lab, optimize, replicas, sessions, sweeps  # noqa: F401 (they add commands)
from .app import (
    Ctx,
    UsageError,
    app,
    console,
    emit,
    fail,
    hoist_globals,
    matrix_rows,
    open_journal,
    options,
    wants_json,
)

__all__ = ["Ctx", "app", "console", "emit", "main", "matrix_rows", "open_journal", "options"]

_registered: set[str] = set()


def register_agent_commands() -> None:
    """Add each known agent's commands to the app (once per agent)."""
    for agent in plugins.agents():
        if agent.commands and agent.name not in _registered:
            _registered.add(agent.name)
            plugins.import_ref(agent.commands)(app)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``lithify`` console script. Exit codes: 0 ok; 1 not found, damaged
    or failed; 2 the command line is wrong. Under ``--json`` every outcome, errors and usage
    mistakes included, is one JSON document on stdout."""
    args = hoist_globals(list(sys.argv[1:] if argv is None else argv))
    as_json = wants_json(args)
    try:
        register_agent_commands()
        code = app(args=args, prog_name="lithify", standalone_mode=False)
    except KeyboardInterrupt:
        typer.echo("error: interrupted", err=True)
        sys.exit(130)
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        sys.exit(1)
    except typer.TyperException as e:  # a usage mistake: unknown option, missing argument...
        if not as_json and hasattr(e, "show"):
            e.show()
            sys.exit(2)
        fail(UsageError(e.format_message()), as_json)
    except Exception as e:
        if os.environ.get("LITHIFY_DEBUG"):
            raise
        fail(e, as_json)
    if isinstance(code, int) and code:
        sys.exit(code)
