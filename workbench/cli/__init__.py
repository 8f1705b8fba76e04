"""The ``lithify`` command: a thin layer over the library (parse, call, format).

``app`` holds the global options and the one error handler; ``journal``, ``sweeps`` and ``lab``
add the generic commands; each installed agent adds its own (see ``workbench.plugins``).
"""

from __future__ import annotations

from .. import plugins
from . import (  # noqa: F401 (they add commands)
    journal,
    lab,
    notes,
    optimize,
    replicas,
    results,
    sessions,
    sweeps,
)
from .app import (
    Ctx,
    app,
    console,
    emit,
    matrix_rows,
    open_journal,
    options,
    run_app,
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
    run_app(app, "lithify", argv, before=register_agent_commands)
