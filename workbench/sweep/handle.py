"""Running a sweep: its forks in parallel from threads of this process, each fork's status,
error, wall time and executed notebook recorded in the journal (so a sweep can be listed,
rerun and resumed after the parent was killed), progress bars, cancel.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import replay
from ..bundled import resolve_notebook
from ..errors import ForkFailed, InvalidValue
from ..forkrun import read_progress
from ..progress import Bar, interactive
from .plan import Fork, SweepPlan, SweepResult, check_options, fn_ref, fork_timeout_of, load, status
from .runners import (
    FUNCTION_RUNNERS,
    ForkContext,
    check_runner_options,
    make_runner,
    out_dir_for,
    runner_options,
    tidy,
)
from .watch import Watch, check_idle

if TYPE_CHECKING:
    from ..journal import Journal


_PRUNED_AT = re.compile(r"(?:pruned|paused) at step (\d+)")
# A fork whose worker a signal killed (the OOM killer, a node going away: not the fork's own
# error, nor our cancel or timeout) runs again this many times, its writes so far replayed
# (see workbench.replay), before it is recorded failed with the signal.
KILLED_RETRIES = 1


def _attempt(runner: Any, ctx: ForkContext, cancel: threading.Event) -> str | None:
    for attempt in range(KILLED_RETRIES + 1):
        try:
            return runner.run_fork(ctx)  # type: ignore[no-any-return]
        except ForkFailed as e:
            if e.ename != "Killed" or cancel.is_set() or attempt == KILLED_RETRIES:
                raise
            ctx.run = replay.new_run(ctx.journal_path, ctx.fork.branch, ctx.fork.start)
    raise AssertionError("unreachable")


def execute(
    runner: Any, ctx: ForkContext, cancel: threading.Event, record: Callable[..., None]
) -> str:
    """Run one fork on ``runner`` and record how it went through ``record(branch, status,
    **fields)``: running, then finished, failed, pruned or paused (``sweep.report`` stopped
    it: the step it reached is in its error document) or cancelled. A fork whose worker was
    killed by a signal runs again once (``KILLED_RETRIES``). Returns the final status."""
    b = ctx.fork.branch
    if cancel.is_set():
        record(b, "cancelled")
        return "cancelled"
    ctx.progress_file.unlink(missing_ok=True)
    t0 = time.perf_counter()
    record(b, "running", started=int(time.time() * 1000), error=None)
    try:
        nb = _attempt(runner, ctx, cancel)
    except ForkFailed as e:
        error = e.error
        if e.ename in ("Pruned", "Paused"):  # sweep.report stopped it: a normal end
            status = e.ename.lower()
            m = _PRUNED_AT.search(e.evalue or "")
            error = {"ename": e.ename, "evalue": e.evalue, "step": int(m[1]) if m else None}
        else:
            status = "cancelled" if cancel.is_set() else "failed"
        record(
            b,
            status,
            error=json.dumps(error),
            finished=int(time.time() * 1000),
            wall_ms=(time.perf_counter() - t0) * 1000,
            notebook=str(ctx.notebook_out) if ctx.notebook_out.exists() else None,
        )
        return status
    except Exception as e:  # noqa: BLE001 (a runner bug must not kill the sweep)
        record(
            b,
            "failed",
            error=json.dumps({"ename": type(e).__name__, "evalue": str(e)[:2000]}),
            finished=int(time.time() * 1000),
            wall_ms=(time.perf_counter() - t0) * 1000,
        )
        return "failed"
    record(
        b,
        "finished",
        error=None,
        finished=int(time.time() * 1000),
        wall_ms=(time.perf_counter() - t0) * 1000,
        notebook=nb,
    )
    return "finished"


class SweepHandle:
    """A sweep running in background threads: poll ``progress``, ``cancel()``, ``wait()``."""

    def __init__(
        self,
        plan: SweepPlan,
        runner: Any,
        forks: list[Fork],
        workers: int,
        out_dir: Path,
        timeout: float | None,
        function: str | None = None,
    ) -> None:
        self.plan = plan
        self.runner = runner
        self.forks = forks
        self.out_dir = out_dir
        self._cancel = threading.Event()
        self._contexts: dict[int, ForkContext] = {}
        self.status: dict[int, str] = {f.branch: "pending" for f in forks}
        self.started = time.monotonic()
        for f in forks:
            ctx = ForkContext(plan.journal.location, f, out_dir, self._cancel, timeout)
            ctx.function = function
            self._contexts[f.branch] = ctx
        # the journal says this sweep is driven, and a cancel asked for there reaches it
        self._watch = Watch(plan.journal, plan.id, self.cancel)
        slots = max(workers, int(getattr(runner, "slots", workers)))  # async pool: more at once
        self._pool = ThreadPoolExecutor(max_workers=slots, thread_name_prefix=f"sweep-{plan.id}")
        self._futures: list[Future[None]] = [
            self._pool.submit(self._run_one, ctx) for ctx in self._contexts.values()
        ]
        self._closer = threading.Thread(target=self._finish, daemon=True)
        self._closer.start()

    def _record(self, branch: int, status: str, **fields: Any) -> None:
        self.status[branch] = status
        self.plan.journal.record_run(
            branch, self.plan.id, status, runner=self.runner.name, **fields
        )

    def _run_one(self, ctx: ForkContext) -> None:
        execute(self.runner, ctx, self._cancel, self._record)

    def _finish(self) -> None:
        try:
            for fut in self._futures:
                fut.exception()
            self._pool.shutdown(wait=True)
            self.runner.close()
            tidy(self.out_dir, self._contexts.values(), self.plan.journal.path)
        finally:
            self._watch.stop()

    @property
    def done(self) -> bool:
        """True once every fork has finished, failed or been cancelled."""
        return not self._closer.is_alive()

    @property
    def sweep_id(self) -> int:
        """The sweep this handle runs."""
        return self.plan.id

    def join(self, timeout: float | None = None) -> bool:
        """Wait until the sweep has ended and its runner closed (kernels, workers); whether it
        has."""
        self._closer.join(timeout)
        return self.done

    def progress(self) -> dict[int, tuple[str, int | None, int | None]]:
        """Per fork: (status, steps done, steps total) as reported by the template."""
        out = {}
        for b, ctx in self._contexts.items():
            done, total = read_progress(ctx.progress_file) or (None, None)
            out[b] = (self.status[b], done, total)
        return out

    def cancel(self) -> None:
        """Stop running forks (their kernels or workers are shut down) and skip pending ones."""
        self._cancel.set()
        for ctx in self._contexts.values():
            ctx.stop()

    def wait(self, timeout: float | None = None, show: bool | None = None) -> SweepResult:
        """Block until the sweep ends (showing progress bars unless show=False); the result."""
        if show is None:
            show = interactive()
        bars = _Bars(self) if show else None
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while not self.done:
                if deadline is not None and time.monotonic() > deadline:
                    raise TimeoutError(f"sweep {self.plan.id} still running after {timeout} s")
                if bars:
                    bars.update()
                self._closer.join(0.2)
        except KeyboardInterrupt:
            self.cancel()
            self._closer.join()
            raise
        if bars:
            bars.update()
            bars.close()
        return SweepResult(self.plan.id, status(self.plan.journal, self.plan.id))


class _Bars:
    """Progress bars: one for the sweep and one per fork on a terminal or in a notebook; the
    sweep's alone, as plain lines, in a log (``workbench.progress``)."""

    def __init__(self, handle: SweepHandle) -> None:
        self.h = handle
        self.total = Bar(f"sweep {handle.plan.id}", len(handle.forks), "fork")
        self.per = {}
        if not self.total.plain:
            self.per = {
                f.branch: Bar(
                    f"  branch {f.branch} {_short(f.params)}",
                    None,
                    "step",
                    position=i + 1,
                    leave=False,
                )
                for i, f in enumerate(handle.forks)
            }

    def update(self) -> None:
        prog = self.h.progress()
        ended = sum(s in ("finished", "failed", "cancelled") for s, _, _ in prog.values())
        running = sum(s == "running" for s, _, _ in prog.values())
        failed = sum(s == "failed" for s, _, _ in prog.values())
        self.total.update(ended, note=f"{running} running, {failed} failed")
        for b, (st, done, total) in prog.items():
            if b in self.per:
                self.per[b].update(done or 0, total, st)

    def close(self) -> None:
        for bar in self.per.values():
            bar.close()
        self.total.close()


def _short(params: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())[:40]


def start(
    plan: SweepPlan,
    notebook: str | os.PathLike[str] | None = None,
    fn: str | Callable[..., Any] | None = None,
    workers: int | None = None,
    runner: str | None = None,
    only: str | Iterable[int] | None = None,
    timeout: float | None = None,
    start_timeout: float = 60.0,
    out_dir: str | os.PathLike[str] | None = None,
    scheduler: Any = None,
    *,
    fork_timeout: float | None = None,
    concurrency: int | None = None,
    max_forks_per_worker: int | None = None,
    keep_notebooks: str | None = None,
) -> SweepHandle:
    """Start running a sweep's forks in background threads; returns at once. Every argument is
    checked before a kernel or worker starts. ``fork_timeout``: seconds one fork may run
    (``timeout`` is its old name); ``concurrency`` and ``max_forks_per_worker``: the pool's;
    ``keep_notebooks``: the warm runner's.

    What is not given is taken from how the sweep was last run (recorded with the sweep, so a
    rerun of the failed forks or a resume after a crash runs them the same way), else from its
    plan: the template or function, the runner (papermill with a template, else process), the
    workers (4) and the timeout (none). ``runner="dask"`` runs the forks on a Dask cluster:
    ``scheduler`` is a ``distributed.Client``, an address (tcp://host:8786) or None for a
    LocalCluster of ``workers`` processes here."""
    timeout = fork_timeout_of(timeout, fork_timeout, "start")
    check_idle(plan.journal, plan.id)  # a coordinator in another process runs it now
    how = plan.how
    if notebook is not None:
        nb: str | None = str(resolve_notebook(notebook))
    else:
        nb = plan.notebook or how.get("notebook")
    ref = fn_ref(fn) or plan.fn or how.get("fn")
    runner = runner or how.get("runner") or ("papermill" if nb else "pool")
    if scheduler is None and runner == "dask" and how.get("runner") == "dask":
        scheduler = how.get("scheduler")  # the address it last ran on (None: a LocalCluster)
    workers = workers if workers is not None else int(how.get("workers", 4))
    if timeout is None:
        timeout = how.get("timeout")
    check_options(runner, workers, timeout)
    pool = runner_options(how) if runner == how.get("runner") else runner_options({})
    for name, value in (
        ("concurrency", concurrency),
        ("max_forks_per_worker", max_forks_per_worker),
        ("keep_notebooks", keep_notebooks),
    ):
        if value is not None:
            pool[name] = value
    check_runner_options(runner, **pool)
    kind = next((s.spec.get("kind") for s in plan.journal.sweeps() if s.id == plan.id), None)
    if kind in ("optimize", "evolve") and only is None:
        how_to = (
            f"`lithify optimize --resume {plan.id}` (sweep.resume_optimize)"
            if kind == "optimize"
            else f"`lithify evolve --resume {plan.id}` (sweep.evolve(journal, resume={plan.id}))"
        )
        raise InvalidValue(
            f"sweep {plan.id} is an {kind} study: its coordinator decides which forks run (an "
            f"evolution's paused members stay paused); finish it with {how_to}, or rerun its "
            "failed forks with only='failed' (--failed)"
        )
    recorded = {r.branch: r.status for r in plan.journal.runs(plan.id)}
    if only is None:
        forks = [f for f in plan.forks if recorded.get(f.branch) != "finished"]
    elif only == "failed":
        forks = [f for f in plan.forks if recorded.get(f.branch) == "failed"]
    elif isinstance(only, (str, bytes)) or not isinstance(only, Iterable):
        raise InvalidValue(f"only= takes 'failed' or a list of branch ids, not {only!r}")
    else:
        wanted = list(only)
        unknown = [b for b in wanted if b not in {f.branch for f in plan.forks}]
        if unknown:
            raise InvalidValue(
                f"only= names branches that are not forks of sweep {plan.id}: {unknown}"
            )
        forks = [f for f in plan.forks if f.branch in set(wanted)]
    try:
        r = make_runner(
            plan.journal.location, runner, nb, ref, start_timeout, workers, scheduler, **pool
        )
    except Exception as e:
        # The sweep did not start: its forks say why, instead of staying "pending" forever.
        error = json.dumps({"ename": type(e).__name__, "evalue": str(e)[:2000], "where": "start"})
        for f in forks:
            plan.journal.record_run(f.branch, plan.id, "failed", runner=runner, error=error)
        raise
    recorded_how = {
        "runner": runner,
        "notebook": nb if runner not in FUNCTION_RUNNERS else None,
        "fn": ref,
        "workers": workers,
        "timeout": timeout,
    }
    if runner == "dask" and isinstance(scheduler, str):
        recorded_how["scheduler"] = scheduler
    recorded_how.update({k: v for k, v in pool.items() if v not in (None, 1, "failed")})
    try:
        plan.journal.record_how(plan.id, recorded_how)
        plan.how.clear()
        plan.how.update(recorded_how)
        return _handle(plan, r, forks, out_dir)
    except BaseException:
        r.close()  # no handle owns it: stop its kernels now
        raise


def start_planned(
    plan: SweepPlan, runner: Any, out_dir: str | os.PathLike[str] | None = None
) -> SweepHandle:
    """Run every fork of a plan just made (how it runs recorded with it) on a runner already
    started (``Launch.start``); closes the runner if the sweep cannot start."""
    try:
        return _handle(plan, runner, list(plan.forks), out_dir)
    except BaseException:
        runner.close()
        raise


def _handle(
    plan: SweepPlan, runner: Any, forks: list[Fork], out_dir: str | os.PathLike[str] | None
) -> SweepHandle:
    how = plan.how
    base_dir = Path(out_dir) if out_dir is not None else out_dir_for(plan.journal.path)
    target = base_dir / str(plan.id)
    target.mkdir(parents=True, exist_ok=True)
    ref = how.get("fn")
    return SweepHandle(
        plan,
        runner,
        forks,
        int(how.get("workers") or 1),
        target,
        how.get("timeout"),
        ref if how.get("runner") not in FUNCTION_RUNNERS else None,
    )


def run(
    plan: SweepPlan,
    notebook: str | os.PathLike[str] | None = None,
    fn: str | Callable[..., Any] | None = None,
    workers: int | None = None,
    runner: str | None = None,
    only: str | Iterable[int] | None = None,
    timeout: float | None = None,
    start_timeout: float = 60.0,
    out_dir: str | os.PathLike[str] | None = None,
    scheduler: Any = None,
    progress: bool | None = None,
    *,
    fork_timeout: float | None = None,
    concurrency: int | None = None,
    max_forks_per_worker: int | None = None,
    keep_notebooks: str | None = None,
) -> SweepResult:
    """Run a sweep's forks in parallel and wait: the forks not finished yet, or ``only``
    ("failed", or branch ids). Progress bars in a terminal or notebook unless progress=False.
    Options not given are the ones the sweep last ran with (see ``start``)."""
    fork_timeout = fork_timeout_of(timeout, fork_timeout, "run")
    h = start(
        plan,
        notebook,
        fn,
        workers,
        runner,
        only,
        None,
        start_timeout,
        out_dir,
        scheduler,
        fork_timeout=fork_timeout,
        concurrency=concurrency,
        max_forks_per_worker=max_forks_per_worker,
        keep_notebooks=keep_notebooks,
    )
    return h.wait(show=progress)


def resume(
    journal: Journal,
    sweep_id: int,
    workers: int | None = None,
    runner: str | None = None,
    **kw: Any,
) -> SweepResult:
    """Finish a sweep whose parent died: runs only the forks that have not finished, the way
    the sweep last ran (runner, template or function, workers, timeout) unless told otherwise."""
    return run(load(journal, sweep_id), workers=workers, runner=runner, **kw)
