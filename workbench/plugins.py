"""How lithify finds code it is told about: objects named ``module:qualname``, and agents.

Agents are plugins. A package registers one under the entry-point group ``lithify.agents``
(the bundled auditor registers itself the same way):

    [project.entry-points."lithify.agents"]
    auditor = "workbench.agents.auditor:AGENT"

An ``Agent`` names its State class, its fork function and template, the CLI commands it adds,
its default sweep grid and chart axes. The generic layers (CLI, server, widgets, sweeps) take
their defaults from the agent of the journal at hand (matched by the State name the journal
recorded), never from a literal. ``register`` adds one at run time; ``$LITHIFY_AGENTS``
(``module:OBJ,...``) adds some in every process (sweep workers, the CLI, the lab server).
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import InvalidValue

GROUP = "lithify.agents"


def import_ref(ref: str) -> Any:
    """The object ``module:qualname`` names (imported now)."""
    if not isinstance(ref, str) or ":" not in ref:
        raise InvalidValue(
            f"{ref!r} does not name an object: write module:qualname, like package.module:run_fork"
        )
    module, _, name = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class Agent:
    """An agent lithify can run, sweep and chart without naming it anywhere else.

    ``state`` and ``fork`` are ``module:qualname`` references (imported only when used);
    ``state_name`` is the name its journals record (the State's ``state_name``). ``commands``
    names a function ``register(app)`` that adds the agent's own CLI commands to a typer app.
    ``template`` is a notebook for the papermill runner; ``grid`` the default sweep grid;
    ``x``/``y`` the default chart axes (``color``: the parameter that colours its lines);
    ``metrics`` the ones worth showing first; ``observes`` every metric its fork function and
    template observe (a study of another is refused before its first fork; empty: not
    declared, found out from the first trial); ``db`` the default journal file of its
    commands; ``shorthands`` the options it adds to ``lithify sweep`` for its journals
    (``{"budgets": "budget"}``: ``--budgets 300,600`` means ``--param budget=300,600``)."""

    name: str
    state: str
    state_name: str
    fork: str | None = None
    template: str | None = None
    commands: str | None = None
    grid: Mapping[str, list[Any]] = field(default_factory=dict)
    x: str | None = None
    y: str | None = None
    color: str | None = None
    metrics: tuple[str, ...] = ()
    observes: tuple[str, ...] = ()
    db: str | None = None
    shorthands: Mapping[str, str] = field(default_factory=dict)

    def state_class(self) -> type:
        """The agent's State class."""
        cls = import_ref(self.state)
        if not isinstance(cls, type):
            raise InvalidValue(f"agent {self.name}: {self.state} is not a class")
        return cls


_registered: dict[str, Agent] = {}
_explicit: set[str] = set()  # names given to register(): they win over what _load finds
_loaded = False


def register(agent: Agent) -> Agent:
    """Add (or replace) an agent in this process; it wins over an entry point or
    ``$LITHIFY_AGENTS`` of the same name."""
    if not isinstance(agent, Agent):
        raise InvalidValue(f"register takes an Agent, not {type(agent).__name__}")
    _registered[agent.name] = agent
    _explicit.add(agent.name)
    return agent


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    from importlib.metadata import entry_points  # the scan costs: only when agents are asked

    for ep in entry_points(group=GROUP):
        try:
            agent = ep.load()
        except Exception as e:  # noqa: BLE001 (a broken third-party plugin must not break lithify)
            warnings.warn(
                f"lithify: the agent plugin {ep.name!r} ({ep.value}) failed to load: {e}",
                stacklevel=2,
            )
            continue
        if isinstance(agent, Agent):
            _registered.setdefault(agent.name, agent)
    for ref in filter(None, os.environ.get("LITHIFY_AGENTS", "").split(",")):
        agent = import_ref(ref.strip())
        if isinstance(agent, Agent) and agent.name not in _explicit:
            _registered[agent.name] = agent


def reload() -> None:
    """Read the entry points and ``$LITHIFY_AGENTS`` again (after installing an agent, or
    changing the variable, in a running process); agents already known stay."""
    global _loaded
    _loaded = False


def agents() -> list[Agent]:
    """Every agent known in this process (entry points, $LITHIFY_AGENTS, register())."""
    _load()
    return list(_registered.values())


def agent_for(state_name: str | None) -> Agent | None:
    """The agent whose journals record this State name."""
    if not state_name:
        return None
    return next((a for a in agents() if a.state_name == state_name), None)


def state_class(state_name: str | None) -> type | None:
    """The State class of the agent whose journals record this name (imported now), if any."""
    agent = agent_for(state_name)
    return agent.state_class() if agent is not None else None


def default_agent() -> Agent | None:
    """The agent whose defaults apply when no journal says (the first one that names a db)."""
    return next((a for a in agents() if a.db), None)
