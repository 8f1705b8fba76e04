"""The one rule for what a sweep runs: grid, runner, template, fork function and workers,
decided from what the caller gave and the journal's agent (``workbench.plugins``).

    from workbench import sweep
    launch = sweep.for_agent(j, "main@191", grid={"budget": [300, 1200]})
    handle = launch.start()              # plans the forks and starts them; returns at once
    result = handle.wait()

The CLI (``lithify sweep``), the server (``POST /lithify/api/sweeps`` and ``GET defaults``) and
the widgets call these functions and decide nothing themselves, so the same request gets the
same sweep from every client. Every argument is checked before the first row is written: a
refused launch leaves the journal as it was.

The rule, in order:

- **grid**: the one given (a dict, or ``NAME=V1,V2`` lines); else the agent's default grid.
- **runner**: the one given; else ``papermill`` when a notebook is given; else ``process`` when
  there is a fork function (given, or the agent's); else ``papermill`` with the agent's
  template.
- **template**: a runner that runs notebooks (``papermill``, ``warm``; ``dask`` only when a
  notebook is given) takes the notebook given, else the agent's template.
- **fork function**: the process runner (and dask without a notebook) takes the function
  given, else the agent's. A function given beside a template is passed on to it (a generic
  template calls it), unless it is the agent's own (its template calls that already).
- **workers**: the number given, else ``DEFAULT_WORKERS`` (never more than the cores here).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import plugins
from ..bundled import resolve_notebook
from ..errors import InvalidValue
from .plan import SweepPlan, check_options, fn_ref, fork_timeout_of, parse_grid, plan
from .runners import FUNCTION_RUNNERS, RUNNERS, check_runner_options, runner_options, runners_here
from .runners.dask import check_scheduler

if TYPE_CHECKING:
    from ..journal import Journal
    from .handle import SweepHandle

DEFAULT_WORKERS = 4
TEMPLATED = ("papermill", "warm")


def default_workers() -> int:
    """Forks run at once when the caller does not say: 4, or fewer on a smaller machine."""
    return max(1, min(DEFAULT_WORKERS, os.cpu_count() or 1))


@dataclass(frozen=True)
class Launch:
    """A decided sweep: where it forks, over what, and how it runs. ``start()`` plans the forks
    (rows) and starts them; nothing is written before that."""

    journal: Journal
    base: int | None
    at: int | None
    grid: dict[str, list[Any]]
    seeds: int | None
    runner: str
    fn: str | None
    notebook: str | None
    workers: int
    timeout: float | None = None
    scheduler: Any = None
    agent: str | None = None
    runners: tuple[str, ...] = field(default_factory=tuple)
    concurrency: int = 1  # the pool's: async forks at once per worker
    max_forks_per_worker: int | None = None  # the pool's: recycle a worker after this many
    keep_notebooks: str = "failed"  # the warm runner's: executed notebooks kept

    def observes(self) -> tuple[str, ...]:
        """The metrics its forks observe, as their agent declares them: empty when the agent
        declares none or the forks run other code than the agent's (a function given)."""
        agent = plugins.agent_for(self.journal.state_name) if self.agent else None
        if agent is None or not agent.observes:
            return ()
        if self.notebook is not None:
            template = str(resolve_notebook(agent.template)) if agent.template else None
            own = self.fn is None and self.notebook == template
        else:
            own = self.fn == agent.fork
        return tuple(agent.observes) if own else ()

    def how(self) -> dict[str, Any]:
        """How the sweep runs, as recorded with it (so a resume runs it the same way)."""
        how: dict[str, Any] = {
            "runner": self.runner,
            "notebook": self.notebook if self.runner not in FUNCTION_RUNNERS else None,
            "fn": self.fn,
            "workers": self.workers,
            "timeout": self.timeout,
        }
        if self.runner == "dask" and isinstance(self.scheduler, str):
            how["scheduler"] = self.scheduler
        if self.concurrency != 1:
            how["concurrency"] = self.concurrency
        if self.max_forks_per_worker is not None:
            how["max_forks_per_worker"] = self.max_forks_per_worker
        if self.keep_notebooks != "failed":
            how["keep_notebooks"] = self.keep_notebooks
        return how

    def to_json(self) -> dict[str, Any]:
        """The decision as plain JSON (what the server's ``defaults`` route returns)."""
        return {
            "agent": self.agent,
            "base": self.base,
            "at": self.at,
            "grid": self.grid or None,
            "grid_text": grid_text(self.grid),
            "seeds": self.seeds,
            "runner": self.runner,
            "runners": list(self.runners),
            "notebook": self.notebook,
            "fn": self.fn,
            "workers": self.workers,
            "timeout": self.timeout,
        }

    def plan(self) -> SweepPlan:
        """Fork the sweep (rows only) and record it with how it will run, in one transaction."""
        if self.base is None or self.at is None:
            raise InvalidValue("where should the sweep fork? give at= (a seq or a ref)")
        return plan(
            self.journal,
            self.base,
            self.at,
            self.grid,
            seeds=self.seeds,
            notebook=self.notebook,
            fn=self.fn,
            how=self.how(),
        )

    def start_runner(self, start_timeout: float = 60.0) -> Any:
        """The runner this launch runs on (a kernel pool, a Dask client), started. The journal's
        location is all it needs: started before anything is planned, an unreachable scheduler
        or a missing package is refused before any fork row exists."""
        from .runners import make_runner

        return make_runner(
            self.journal.location,
            self.runner,
            self.notebook if self.runner not in FUNCTION_RUNNERS else None,
            self.fn,
            start_timeout,
            self.workers,
            self.scheduler,
            concurrency=self.concurrency,
            max_forks_per_worker=self.max_forks_per_worker,
            keep_notebooks=self.keep_notebooks,
        )

    def start(self, start_timeout: float = 60.0, out_dir: str | None = None) -> SweepHandle:
        """Start the runner (a kernel pool, a Dask client), then plan the forks and run them in
        the background; returns at once. A runner that cannot start writes nothing."""
        from .handle import start_planned

        if self.base is None or self.at is None:
            raise InvalidValue("where should the sweep fork? give at= (a seq or a ref)")
        runner = self.start_runner(start_timeout)
        try:
            planned = self.plan()
        except BaseException:
            runner.close()
            raise
        return start_planned(planned, runner, out_dir=out_dir)


def as_recorded(
    journal: Journal, sweep_id: int, workers: int | None, start_timeout: float
) -> tuple[dict[str, Any], int, Any]:
    """(how the sweep last ran, the workers to run it with now, its runner started) for a
    resumed study: the runner, template or function, scheduler and fork timeout it was
    recorded with, ``workers`` unless given."""
    from .runners import make_runner

    info = next(s for s in journal.sweeps() if s.id == sweep_id)
    how = dict(info.how)
    n = workers if workers is not None else int(how.get("workers") or 1)
    runner_name = how.get("runner") or "process"
    check_options(runner_name, n, how.get("timeout"))
    started = make_runner(
        journal.location,
        runner_name,
        how.get("notebook") if runner_name not in FUNCTION_RUNNERS else None,
        how.get("fn"),
        start_timeout,
        n,
        how.get("scheduler"),
        **runner_options(how),
    )
    return {**how, "workers": n}, n, started


def grid_text(grid: Mapping[str, Sequence[Any]] | None) -> str:
    """A grid as the ``NAME=V1,V2`` lines ``parse_grid`` reads back ("" for none)."""
    return "\n".join(
        f"{k}={','.join(json.dumps(v) if not isinstance(v, str) else v for v in vals)}"
        for k, vals in (grid or {}).items()
    )


def _grid(grid: Mapping[str, Sequence[Any]] | str | None) -> dict[str, list[Any]] | None:
    if grid is None:
        return None
    if isinstance(grid, str):
        if not grid.strip():
            raise InvalidValue(
                "the grid is empty: give at least one NAME=V1,V2 line (or give no grid to use "
                "the agent's default grid)"
            )
        return parse_grid(grid)
    if not isinstance(grid, Mapping):
        raise InvalidValue(
            f"a grid is {{name: [values]}} or 'name=v1,v2' lines, not {type(grid).__name__}"
        )
    if not grid:
        raise InvalidValue(
            "the grid is empty: give at least one parameter (or no grid to use the agent's "
            "default grid)"
        )
    return {str(k): list(v) for k, v in grid.items()}


def _point(journal: Journal, at: int | str, branch: int | str | None) -> tuple[int, int]:
    """(branch id, seq) of a fork point: a seq on ``branch`` (default main) or any ref."""
    if isinstance(at, bool) or not isinstance(at, (int, str)):
        raise InvalidValue(f"at= is a seq or a ref like main@191, not {at!r}")
    text = str(at).strip()
    if text.isdigit():
        bid = journal.branch(branch).id if branch is not None else 0
        return journal.resolve(f"{bid}@{text}")
    return journal.resolve(text, default_branch=branch if branch is not None else 0)


def _decide(
    journal: Journal,
    grid: Mapping[str, Sequence[Any]] | str | None,
    runner: str | None,
    fn: str | Callable[..., Any] | None,
    notebook: str | os.PathLike[str] | None,
    workers: int | None,
) -> tuple[plugins.Agent | None, dict[str, list[Any]], str, str | None, str | None, int]:
    agent = plugins.agent_for(journal.state_name)
    chosen = _grid(grid)
    if chosen is None:
        chosen = {k: list(v) for k, v in agent.grid.items()} if agent else {}
    given_fn = fn_ref(fn)
    function = given_fn or (agent.fork if agent else None)
    nb = str(resolve_notebook(notebook)) if notebook is not None else None
    if runner is None:
        if nb is not None:
            runner = "papermill"
        elif function is not None or agent is None or not agent.template:
            runner = "pool"
        else:
            runner = "papermill"
    if runner not in RUNNERS:
        raise InvalidValue(f"runner must be one of {', '.join(RUNNERS)}, not {runner!r}")
    if runner not in runners_here():
        raise InvalidValue(
            f"the {runner} runner is not installed here: pip install 'lithify-workbench[dask]'"
        )
    templated = runner in TEMPLATED or (runner == "dask" and nb is not None)
    if templated and nb is None and agent is not None and agent.template:
        nb = str(resolve_notebook(agent.template))
    if templated:
        # the agent's template calls the agent's own code; another function given is passed on
        function = given_fn if given_fn != (agent.fork if agent else None) else None
    else:
        nb = None
    n = default_workers() if workers is None else workers
    return agent, chosen, runner, nb, function, n


def defaults(
    journal: Journal,
    runner: str | None = None,
    fn: str | Callable[..., Any] | None = None,
    notebook: str | os.PathLike[str] | None = None,
) -> Launch:
    """What a sweep of this journal runs when the caller gives nothing (or only a runner,
    function or template): the agent's grid, runner, template or fork function and workers.
    The sweep forms start from this; nothing is checked beyond the runner's name."""
    agent, grid, chosen, nb, function, workers = _decide(journal, None, runner, fn, notebook, None)
    return Launch(
        journal,
        None,
        None,
        grid,
        None,
        chosen,
        function,
        nb,
        workers,
        agent=agent.name if agent else None,
        runners=tuple(runners_here()),
    )


def for_agent(
    journal: Journal,
    at: int | str,
    grid: Mapping[str, Sequence[Any]] | str | None = None,
    runner: str | None = None,
    fn: str | Callable[..., Any] | None = None,
    notebook: str | os.PathLike[str] | None = None,
    seeds: int | None = None,
    *,
    branch: int | str | None = None,
    workers: int | None = None,
    timeout: float | None = None,
    scheduler: Any = None,
    fork_timeout: float | None = None,
    concurrency: int = 1,
    max_forks_per_worker: int | None = None,
    keep_notebooks: str = "failed",
) -> Launch:
    """Decide a sweep forked at ``at`` (a seq on ``branch``, default main, or any ref) by the
    rule in the module docstring, and check everything that can be checked without writing:
    the point, the grid against what the fork declares, the runner, the scheduler.
    ``fork_timeout``: seconds one fork may run (``timeout`` is its old name). ``concurrency``
    (async fork functions run that many at once per worker) and ``max_forks_per_worker``
    (recycle a worker after that many forks) are the pool runner's; ``keep_notebooks``
    ("failed", or "all": the executed notebook of every fork) the warm runner's."""
    timeout = fork_timeout_of(timeout, fork_timeout, "for_agent")
    agent, chosen, runner_name, nb, function, n = _decide(
        journal, grid, runner, fn, notebook, workers
    )
    check_options(runner_name, n, timeout)
    check_runner_options(runner_name, concurrency, max_forks_per_worker, keep_notebooks)
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1):
        raise InvalidValue(f"seeds must be a positive int, not {seeds!r}")
    if not chosen:
        raise InvalidValue(
            "what to sweep? give a grid (NAME=V1,V2,...): the journal's agent names no default grid"
        )
    if runner_name in TEMPLATED and nb is None:
        raise InvalidValue(
            f"the {runner_name} runner runs a template notebook: pass one (the journal's agent "
            "names no template)"
        )
    if nb is None and function is None:
        raise InvalidValue(
            "which fork function? pass fn='module:function' (the journal's agent names none)"
        )
    if scheduler is not None and runner_name != "dask":
        raise InvalidValue(f"a scheduler is for the dask runner, not {runner_name!r}")
    if runner_name == "dask":
        check_scheduler(journal.location, scheduler)
    base, seq = _point(journal, at, branch)
    if journal.path == ":memory:":
        raise InvalidValue(
            "sweeps run in other processes: open the journal from a file, not in memory"
        )
    return Launch(
        journal,
        base,
        seq,
        chosen,
        seeds,
        runner_name,
        function,
        nb,
        n,
        timeout,
        scheduler,
        agent.name if agent else None,
        tuple(runners_here()),
        concurrency,
        max_forks_per_worker,
        keep_notebooks,
    )
