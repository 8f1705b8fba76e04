"""The ``lithify`` command: a thin layer over the library (parse, call, format).

``app`` holds the global options and the one error handler; ``journal``, ``sweeps`` and ``lab``
add the generic commands; each installed agent adds its own (see ``workbench.plugins``).
"""

from __future__ import annotations

import os
import sys

import typer

from .. import plugins
from . import journal, lab, sweeps  # noqa: F401 (they add their commands to the app)
from .app import Ctx, app, console, emit, fail, matrix_rows, open_journal, options, wants_json

__all__ = ["Ctx", "app", "console", "emit", "main", "matrix_rows", "open_journal", "options"]

_registered: set[str] = set()


def register_agent_commands() -> None:
    """Add each known agent's commands to the app (once per agent)."""
    for agent in plugins.agents():
        if agent.commands and agent.name not in _registered:
            _registered.add(agent.name)
            plugins.import_ref(agent.commands)(app)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``lithify`` console script."""
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = wants_json(args)
    try:
        register_agent_commands()
        # Standalone mode handles usage errors (exit 2) and --help; ours arrive here.
        app(args=args, prog_name="lithify")
    except KeyboardInterrupt:
        typer.echo("error: interrupted", err=True)
        sys.exit(130)
    except Exception as e:
        if os.environ.get("LITHIFY_DEBUG"):
            raise
        fail(e, as_json)
