"""Population-based forks: what Ray Tune's PBT does by copying checkpoints, done by forking.

    study = sweep.evolve(journal, at="main@191", space={"budget": sweep.Int(100, 6000)},
                         objective="recall", population=8, generations=5, interval=3)

Generation 0 is ``population`` forks of ``at`` with parameters drawn from ``space``. Each member
runs until it has reported (``sweep.report``) ``interval`` times, then pauses. The worst
``quantile`` of the generation (by its last reported value) stops; each is replaced by a fork
of a leader's latest event (exploit: one row, inheriting the leader's state and committed
effects) with the leader's parameters perturbed (explore); every other member continues as a
fork of its own head. The last generation runs to the end. Every generation's lineage is in the
fork tree, each member's ``generation`` in its params.

A member's fork function runs from the study's start event every time, whatever generation it
is in: what its lineage already wrote (its own earlier generations, or the leader it was forked
from) is replayed, not appended again (``workbench.replay``), so a fork function that loops
from step 0 without checking its progress continues where its lineage stopped, as PBT resumes
a copied checkpoint, with its own parameters from there on.

The coordinator is deterministic given the seed and the journal: a killed one resumes
(``evolve(journal, resume=ID)``, ``lithify evolve --resume ID``) by taking the decisions its
generations' forks record, recomputing the draws that led to them, running the members that had
not ended (paused members stay paused) and going on.
"""

from __future__ import annotations

import json
import math
import os
import random
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from .. import params as declared_params
from ..errors import InvalidValue, NoObjective
from ..progress import Bar
from . import engines
from . import space as sp
from .handle import execute
from .launch import as_recorded, for_agent
from .optimize import _is_lines, _objectives, _progress_default, check_observed
from .plan import Fork, _declared, fork_timeout_of
from .runners import FUNCTION_RUNNERS, ForkContext, out_dir_for, tidy
from .trials import Reader, Study, StudySpec, spec_of
from .watch import Watch, check_idle

if TYPE_CHECKING:
    from ..journal import Journal


def _draw(space: Mapping[str, sp.Dimension], rng: random.Random) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, dim in space.items():
        if isinstance(dim, sp.Categorical):
            out[name] = rng.choice(dim.choices)
        elif isinstance(dim, sp.Int):
            if dim.log:
                out[name] = int(round(math.exp(rng.uniform(math.log(dim.low), math.log(dim.high)))))
            else:
                out[name] = rng.randrange(dim.low, dim.high + 1, dim.step)
        else:
            if dim.log:
                out[name] = math.exp(rng.uniform(math.log(dim.low), math.log(dim.high)))
            elif dim.step is not None:
                out[name] = rng.choice(dim.values())
            else:
                out[name] = rng.uniform(dim.low, dim.high)
    return out


def evolve(
    journal: Journal,
    at: int | str | None = None,
    space: Mapping[str, sp.Dimension] | Sequence[str] | None = None,
    objective: str | None = None,
    direction: str = "maximize",
    *,
    population: int = 8,
    generations: int = 5,
    interval: int = 3,
    quantile: float = 0.25,
    seed: int | None = None,
    fn: str | Callable[..., Any] | None = None,
    notebook: str | os.PathLike[str] | None = None,
    runner: str | None = None,
    workers: int | None = None,
    branch: int | str | None = None,
    fork_timeout: float | None = None,
    scheduler: Any = None,
    start_timeout: float = 60.0,
    progress: bool | None = None,
    resume: int | None = None,
    timeout: float | None = None,
    concurrency: int = 1,
    max_forks_per_worker: int | None = None,
) -> Study:
    """Run a population of forks for ``generations`` generations of ``interval`` reports each,
    replacing the worst ``quantile`` by perturbed forks of the leaders' latest events (see the
    module docstring); returns the study (every member of every generation, in fork order).
    ``resume=ID`` finishes an evolution whose coordinator died, as it was started (give nothing
    else but ``workers``). ``fork_timeout``: seconds one member's run may take (``timeout`` is
    its old name)."""
    fork_timeout = fork_timeout_of(timeout, fork_timeout, "evolve")
    if resume is not None:
        return _resume(journal, resume, workers, start_timeout, progress, at, space, objective)
    if at is None or space is None:
        raise InvalidValue("evolve needs at= (where generation 0 forks) and space=, or resume=ID")
    chosen = sp.parse(space) if _is_lines(space) else sp.check(space)  # type: ignore[arg-type]
    names, dirs = _objectives(journal, objective, direction, None, None)
    for what, v, low in (
        ("population", population, 2),
        ("generations", generations, 1),
        ("interval", interval, 1),
    ):
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise InvalidValue(f"{what} is a whole number >= {low}, not {v!r}")
    if (
        isinstance(quantile, bool)
        or not isinstance(quantile, (int, float))
        or not (0 < quantile <= 0.5)
    ):
        raise InvalidValue(
            f"quantile is the share of members replaced, in (0, 0.5], not {quantile!r}"
        )
    engines.check(engines.Choice("random"), engines.Choice("none"), 1, chosen, seed)
    launch = for_agent(
        journal,
        at,
        grid={n: [p[n] for p in sp.corners(chosen)] for n in chosen},
        runner=runner,
        fn=fn,
        notebook=notebook,
        branch=branch,
        workers=workers,
        fork_timeout=fork_timeout,
        scheduler=scheduler,
        concurrency=concurrency,
        max_forks_per_worker=max_forks_per_worker,
    )
    check_observed(launch, names)
    declared, source = _declared(launch.notebook, launch.fn)
    declared_params.check_points(sp.corners(chosen), declared, source)
    assert launch.base is not None and launch.at is not None
    how = launch.how()
    spec_doc = {
        "kind": "evolve",
        "space": sp.to_json(chosen),
        "objectives": list(names),
        "directions": list(dirs),
        "sampler": "pbt",
        "pruner": "none",
        "seed": seed,
        "forks": population * generations,
        "population": population,
        "generations": generations,
        "interval": interval,
        "quantile": quantile,
        "notebook": launch.notebook,
        "fn": launch.fn,
    }
    started = launch.start_runner(start_timeout)
    try:
        sweep_id = journal.open_sweep(launch.base, launch.at, spec_doc, how)
        return _Population(journal, sweep_id, started, how, launch.workers).run(progress)
    finally:
        started.close()


def _resume(
    journal: Journal,
    sweep_id: int,
    workers: int | None,
    start_timeout: float,
    progress: bool | None,
    *given: Any,
) -> Study:
    spec = spec_of(journal, sweep_id)
    if spec.kind != "evolve":
        raise InvalidValue(
            f"sweep {sweep_id} is an {spec.kind} sweep, not an evolution"
            + (
                f"; resume it with lithify optimize --resume {sweep_id}"
                if spec.kind == "optimize"
                else ""
            )
        )
    if any(g is not None for g in given):
        raise InvalidValue(
            "resume= finishes an evolution as it was started: drop at, space, objective"
        )
    check_idle(journal, sweep_id)  # a coordinator in another process runs it now
    how, n, started = as_recorded(journal, sweep_id, workers, start_timeout)
    try:
        return _Population(journal, sweep_id, started, how, n).run(progress)
    finally:
        started.close()


class _Population:
    def __init__(
        self, journal: Journal, sweep_id: int, runner: Any, how: Mapping[str, Any], workers: int
    ) -> None:
        self.journal = journal
        self.spec: StudySpec = spec_of(journal, sweep_id)
        self.runner = runner
        self.how = dict(how)
        self.workers = max(workers, int(getattr(runner, "slots", workers)))  # members at once
        self.cancel = threading.Event()
        self.reader = Reader(journal)
        self.out_dir = out_dir_for(journal.path) / str(sweep_id)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.rng = random.Random(self.spec.seed)
        # what the journal records: each generation's forks in fork order, and how they ran
        self.recorded: dict[int, list[int]] = {}
        info = next(s for s in journal.sweeps() if s.id == sweep_id)
        for b in info.branches:
            g = int(journal.info(b).params.get("generation", 0))
            self.recorded.setdefault(g, []).append(b)
        self.runs = {r.branch: r.status for r in journal.runs(sweep_id)}
        self._warned = False
        self.contexts: list[ForkContext] = []  # the forks run here, whose files tidy() removes

    def _member(self, parent: int, at: int, params: Mapping[str, Any], generation: int) -> Fork:
        """The next member of ``generation``: the fork the journal recorded at this place, or
        a new one. Every member's run starts at the study's start (see the module docstring)."""
        mine = self.recorded.setdefault(generation, [])
        taken = self._taken.setdefault(generation, 0)
        self._taken[generation] = taken + 1
        space_params = {k: v for k, v in params.items() if k in self.spec.space}
        if taken < len(mine):
            b = mine[taken]
            info = self.journal.info(b)
            recorded = {k: v for k, v in info.params.items() if k != "generation"}
            if (info.parent, info.fork_seq, recorded) != (parent, at, space_params):
                self._diverged(generation, b)
            return Fork(b, recorded, start=self.spec.at)
        created = self.journal.sweep_fork(
            self.spec.sweep,
            parent,
            at,
            {**space_params, "generation": generation},
            self.runner.name,
        )
        mine.append(created.id)
        return Fork(created.id, space_params, start=self.spec.at)

    def _diverged(self, generation: int, branch: int) -> None:
        if not self._warned and self.spec.seed is not None:
            warnings.warn(
                f"evolution {self.spec.sweep}: generation {generation}'s member on branch {branch} "
                "is not what the seed draws now; the recorded members are kept",
                RuntimeWarning,
                stacklevel=4,
            )
        self._warned = True

    def _record(self, branch: int, status: str, **fields: Any) -> None:
        self.runs[branch] = status
        self.journal.record_run(branch, self.spec.sweep, status, runner=self.runner.name, **fields)

    def _run(self, fork: Fork) -> str:
        ended = self.runs.get(fork.branch)
        if ended in ("paused", "finished", "failed", "pruned"):
            return ended  # ran before the coordinator died: its outcome stands
        ctx = ForkContext(
            self.journal.location, fork, self.out_dir, self.cancel, self.how.get("timeout")
        )
        if self.how.get("runner") not in FUNCTION_RUNNERS:
            ctx.function = self.how.get("fn")
        self.contexts.append(ctx)
        return execute(self.runner, ctx, self.cancel, self._record)

    def _score(self, fork: Fork) -> float | None:
        value = self.reader.own(fork.branch).last.get(self.spec.objectives[0])
        return (
            None if value is None else (value if self.spec.directions[0] == "maximize" else -value)
        )

    def _no_objective(self, members: Sequence[Fork]) -> None:
        """Members that ended a generation without the objective fail, saying what they did
        observe, and the evolution stops: no generation can rank them."""
        if not members:
            return
        name = self.spec.objectives[0]
        first = ""
        for m in members:
            seen = ", ".join(sorted(self.reader.own(m.branch).last)) or "nothing"
            why = (
                f"the member ended its interval but never observed {name!r} (it observed "
                f"{seen}): observe it, or report it (sweep.report(branch, value, step, "
                f"metric={name!r}))"
            )
            error = json.dumps({"ename": "NoObjective", "evalue": why})
            self._record(m.branch, "failed", error=error)
            first = first or f"branch {m.branch}: {why}"
        raise NoObjective(
            f"evolution {self.spec.sweep} stopped: a member cannot be ranked ({first})",
            sweep=self.spec.sweep,
            objective=name,
        )

    def run(self, progress: bool | None) -> Study:
        """Run the generations (a progress bar unless progress=False); the study. A cancel
        asked for in the journal (``watch.request_cancel``) stops it as a cancelled member
        does."""
        watch = Watch(self.journal, self.spec.sweep, self._cancel_all)
        try:
            return self._generations(progress)
        finally:
            tidy(self.out_dir, self.contexts, self.journal.path)
            watch.stop()

    def _cancel_all(self) -> None:
        self.cancel.set()
        for ctx in list(self.contexts):
            ctx.stop()

    def _generations(self, progress: bool | None) -> Study:
        spec = self.spec
        population = int(spec.extra["population"])
        generations = int(spec.extra["generations"])
        quantile = float(spec.extra["quantile"])
        self._taken: dict[int, int] = {}
        members = [
            self._member(spec.base, spec.at, _draw(spec.space, self.rng), 0)
            for _ in range(population)
        ]
        bar = None
        if progress if progress is not None else _progress_default():
            bar = Bar(f"evolve {spec.sweep}", generations, "generation")
        with ThreadPoolExecutor(self.workers, thread_name_prefix=f"evolve-{spec.sweep}") as pool:
            for generation in range(generations):
                statuses = list(pool.map(self._run, members))
                if bar is not None:
                    bar.update(generation + 1)
                scored = [
                    (self._score(m), m, st)
                    for m, st in zip(members, statuses, strict=True)
                    if st in ("paused", "finished")
                ]
                self._no_objective([m for score, m, _ in scored if score is None])
                if generation == generations - 1 or "cancelled" in statuses:
                    break
                alive = [(s, m, st) for s, m, st in scored if s is not None]
                if not alive:
                    break  # every member failed: nobody to exploit
                alive.sort(key=lambda x: x[0], reverse=True)
                n_out = max(1, int(round(quantile * len(alive)))) if len(alive) > 1 else 0
                leaders = [m for _, m, _ in alive[: max(1, n_out)]]
                keep = alive[: len(alive) - n_out]
                nxt: list[Fork] = []
                for _, m, st in keep:
                    if st == "paused":  # continue from its own head, same params
                        head = self.journal.branch(m.branch).head
                        nxt.append(self._member(m.branch, head, m.params, generation + 1))
                for _ in range(population - len(nxt) - sum(st == "finished" for _, _, st in keep)):
                    leader = self.rng.choice(leaders)
                    head = self.journal.branch(leader.branch).head
                    params = {
                        k: sp.perturb(spec.space[k], v, self.rng) for k, v in leader.params.items()
                    }
                    nxt.append(self._member(leader.branch, head, params, generation + 1))
                members = nxt
                if not members:
                    break
        if bar is not None:
            bar.close()
        trials = self.reader.trials(spec)
        return Study(spec.sweep, spec.objectives, spec.directions, tuple(trials))
