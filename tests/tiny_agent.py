"""A second agent in one file: a tally that adds a step a few times and scores the total.

It is registered like any third-party agent (``$LITHIFY_AGENTS=tiny_agent:AGENT`` here; a
package would name ``AGENT`` under the ``lithify.agents`` entry point), and nothing outside
this file knows it: the generic CLI, the server and the widgets take its State, fork
function, commands, grid and chart axes from ``AGENT``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import typer

from workbench import Agent, Journal, Param, State, takes
from workbench.cli.app import emit, open_journal, options


@dataclass
class Tally(State):
    """The running total of the steps added so far."""

    state_name = "tests.tally/1"
    total: int = 0
    steps: list[int] = field(default_factory=list)

    def apply(self, delta: dict[str, Any]) -> None:
        self.steps.append(delta["add"])
        self.total += delta["add"]


@takes(step=Param(int, min=1, max=100), rounds=Param(int, min=1, max=20))
def fork(journal: str, branch: int, params: dict[str, Any]) -> None:
    """One fork: add ``step`` ``rounds`` times (each draw an effect), then observe the total."""
    step, rounds = int(params["step"]), int(params.get("rounds", 3))
    with Journal.open(journal, Tally) as j:
        b = j.branch(branch)
        for i in range(rounds):
            b.apply({"add": b.effect(f"draw:{i}", lambda: step)})
        b.observe("total", b.state().total)
        b.observe("score", b.state().total / (10 * rounds))


def start(journal: Journal, n: int) -> int:
    """A base run to fork from: ``n`` steps of 1 on main; returns main's head."""
    main = journal.root()
    for _ in range(n):
        main.apply({"add": 1})
    return main.head


def register(app: typer.Typer) -> None:
    """The agent's own CLI command: ``lithify tally --steps N`` starts a base run."""

    @app.command("tally")
    def tally(ctx: typer.Context, steps: int = typer.Option(3, "--steps")) -> None:
        """Start a tally: N steps of 1 on main (a base run to sweep from)."""
        opts = options(ctx)
        with open_journal(opts, Tally, must_exist=False, write=True) as j:
            head = start(j, steps)
            total = j.root().state().total
        emit(opts, {"head": head, "total": total}, lambda: print(f"main at {head}: {total}"))


AGENT = Agent(
    name="tally",
    state="tiny_agent:Tally",
    state_name="tests.tally/1",
    fork="tiny_agent:fork",
    commands="tiny_agent:register",
    grid={"step": [1, 2, 5]},
    x="step",
    y="total",
    metrics=("total", "score"),
)
