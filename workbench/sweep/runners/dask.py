"""The ``"dask"`` runner: each fork is a task on a Dask distributed cluster (``pip install
'lithify-workbench[dask]'``).

The task runs what the other runners run, on the worker that picked it up: a fork function in
that Dask worker's own pool (``WorkerPools``, a worker plugin: a warm worker process that imports
once, keeps the journal open and caches fork points, as the pool runner does), or a template in
a fresh kernel with papermill. A cancel reaches the running tasks through the sweep's ``Event``,
each task waiting on it in long waits the scheduler answers when it is set (the task then kills
its pool worker or kernel), not in polls twice a second; a Dask worker's death ends its tasks
too. The scheduler reschedules a dead worker's task elsewhere; the fork is
replayed there, its committed effects read back, not re-run.

Workers write to the journal directly, so the journal must be reachable from them: a
PostgreSQL URL for a remote cluster; an SQLite file only with a ``LocalCluster`` on this
machine (``scheduler=None``, or a ``Client`` of one).
"""

from __future__ import annotations

import threading
import uuid
import warnings
from pathlib import Path
from typing import Any

from ...errors import ForkFailed, InvalidValue
from ...storage import is_url
from .context import Fork, ForkContext


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise InvalidValue(
            "the dask runner needs Dask distributed: pip install 'lithify-workbench[dask]'"
        ) from None
    return distributed


def available() -> bool:
    """Whether the dask runner can be offered (Dask distributed is installed; not imported
    here: that costs half a second)."""
    import importlib.util

    try:
        return importlib.util.find_spec("distributed") is not None
    except (ImportError, ValueError):
        return False


def check_scheduler(journal: str, scheduler: Any) -> None:
    """Refuse a scheduler the journal cannot be shared with (before anything is written): an
    address or a Client of a cluster that may span machines needs a PostgreSQL journal; an SQLite
    file works with a LocalCluster here. Also refuses a missing Dask installation."""
    distributed = _distributed()
    if scheduler is None:
        return
    if isinstance(scheduler, str):
        if not is_url(journal):
            raise InvalidValue(
                f"the dask runner with a scheduler address needs a journal every worker can "
                f"reach: {journal} is an SQLite file, which is not shared between machines. "
                "Use a PostgreSQL journal (--db postgresql://...; `lithify clone` copies this "
                "one there), or no scheduler for a LocalCluster on this machine"
            )
        return
    if hasattr(scheduler, "submit") and hasattr(scheduler, "scheduler_info"):
        cluster = getattr(scheduler, "cluster", None)
        if not is_url(journal) and not isinstance(cluster, distributed.LocalCluster):
            raise InvalidValue(
                f"this Client's cluster may run on other machines, and {journal} is an "
                "SQLite file, which is not shared between machines: use a PostgreSQL journal, "
                "or a Client of a LocalCluster"
            )
        return
    raise InvalidValue(
        "scheduler is a distributed.Client, an address like tcp://host:8786, or None "
        f"(a LocalCluster here), not {scheduler!r}"
    )


CANCEL_WAIT = 30.0  # seconds of one wait on the sweep's cancel Event (it returns when set)


def run_on_worker(
    kind: str,
    target: str,
    journal: str,
    branch: int,
    params: dict[str, Any],
    out_dir: str,
    timeout: float | None,
    start_timeout: float,
    function: str | None,
    cancel_name: str,
    start: int | None = None,
    concurrency: int = 1,
) -> dict[str, Any]:
    """The task: run one fork here, a fork function in this worker's pool (``WorkerPools``) or
    a template with papermill in a fresh kernel; the outcome as data ({"notebook"} or
    {"error"}), so nothing but JSON-safe values travels back. A cancel arrives through the
    sweep's ``Event``, waited on in long waits the scheduler answers when it is set (not polled
    twice a second)."""
    import distributed

    from .papermill import PapermillRunner
    from .pool import PoolRunner

    try:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
    except OSError:  # the coordinator's folder does not exist on this machine: keep them here
        import tempfile

        out_dir = tempfile.mkdtemp(prefix="lithify-runs-")
    cancel = threading.Event()
    ctx = ForkContext(journal, Fork(branch, params, start), Path(out_dir), cancel, timeout)
    ctx.function = function
    from .dask_plugin import WorkerPools

    found = distributed.get_worker().plugins.get(WorkerPools.name)
    plugin = found if isinstance(found, WorkerPools) else None
    runner: Any
    own = kind != "pool" or plugin is None
    if kind != "pool":
        runner = PapermillRunner(target, start_timeout)
    elif plugin is not None:
        runner = plugin.pool(target, concurrency)
    else:  # a cluster the plugin did not reach: a pool of this task's own
        runner = PoolRunner(target, 1, 1, None, start_timeout)
    done = threading.Event()
    # Taken here, in the task's thread: the watcher's own thread has no worker context, and an
    # Event made there without a client fails on its first wait (the cancel never arrived).
    client = distributed.get_client()

    def stop() -> None:
        cancel.set()
        ctx.stop()

    if plugin is not None:  # one wait per sweep in this worker, whatever its forks here
        forget = plugin.watch(cancel_name, client, stop, CANCEL_WAIT)
    else:  # a cluster the plugin did not reach: this task waits on the Event itself

        def watch() -> None:  # one long wait the scheduler answers at once when it is set
            flag = distributed.Event(cancel_name, client=client)
            while not done.is_set():
                try:
                    if flag.wait(timeout=CANCEL_WAIT):
                        stop()
                        return
                except Exception:  # noqa: BLE001 (the scheduler went away: the task ends)
                    return

        threading.Thread(target=watch, daemon=True).start()
        forget = done.set
    try:
        return {"notebook": runner.run_fork(ctx)}
    except ForkFailed as e:
        if cancel.is_set():
            return {"error": {"ename": "Cancelled", "evalue": "the sweep was cancelled"}}
        return {"error": e.error}
    finally:
        forget()
        done.set()
        if own:
            runner.close()


class DaskRunner:
    """Runs each fork as a task on a Dask cluster (see the module docstring)."""

    name = "dask"

    def __init__(
        self,
        journal: str,
        kind: str,
        target: str,
        start_timeout: float,
        workers: int,
        scheduler: Any = None,
        concurrency: int = 1,
    ) -> None:
        distributed = _distributed()
        self.kind, self.target, self.start_timeout = kind, target, start_timeout
        self.concurrency = concurrency  # async forks at once in each Dask worker's pool
        self.slots = workers * concurrency  # forks the sweep keeps in flight
        self.cancel_name = f"lithify-cancel-{uuid.uuid4().hex}"
        self._own: list[Any] = []  # what this runner started and must close
        check_scheduler(journal, scheduler)
        if scheduler is None:
            cluster = distributed.LocalCluster(
                n_workers=workers,
                threads_per_worker=concurrency,  # a task waits on its fork in a thread
                processes=True,
                dashboard_address=":0",
                silence_logs=40,
            )
            self.client = distributed.Client(cluster)
            self._own = [self.client, cluster]
        elif isinstance(scheduler, str):
            try:
                self.client = distributed.Client(scheduler, timeout=30)
            except Exception as e:  # noqa: BLE001 (the address is the one thing that varies)
                raise InvalidValue(
                    f"cannot reach the Dask scheduler at {scheduler}: {e}; start one with "
                    "`dask scheduler` and give its address (tcp://host:8786)"
                ) from None
            self._own = [self.client]
        else:
            self.client = scheduler
        self.address = str(self.client.scheduler.address)
        self._plugin = False
        if kind == "pool":
            from .dask_plugin import WorkerPools

            try:
                self.client.register_plugin(WorkerPools(start_timeout), name=WorkerPools.name)
                self._plugin = True
            except Exception as e:  # noqa: BLE001 (each task then keeps a pool of its own)
                warnings.warn(
                    f"the Dask workers refused lithify's pool plugin ({e}): each fork starts a "
                    "worker process of its own, which is slower",
                    RuntimeWarning,
                    stacklevel=2,
                )
        self._event = distributed.Event(self.cancel_name, client=self.client)

    def run_fork(self, ctx: ForkContext) -> str | None:
        distributed = _distributed()
        future = self.client.submit(
            run_on_worker,
            self.kind,
            self.target,
            ctx.journal_path,
            ctx.fork.branch,
            ctx.fork.params,
            str(ctx.out_dir),
            ctx.timeout,
            self.start_timeout,
            ctx.function,
            self.cancel_name,
            ctx.fork.start,
            self.concurrency,
            key=f"lithify-fork-{ctx.fork.branch}-{uuid.uuid4().hex[:8]}",
            pure=False,
        )

        def stop() -> None:
            self._event.set()  # answers the running tasks' waits
            future.cancel()  # and a task not started yet never starts

        ctx.on_stop(stop)
        try:
            outcome = future.result()
        except distributed.client.FutureCancelledError:
            raise ForkFailed(
                "cancelled", ename="Cancelled", evalue="the sweep was cancelled"
            ) from None
        except distributed.KilledWorker as e:
            raise ForkFailed("worker died", ename="KilledWorker", evalue=str(e)[:2000]) from None
        except Exception as e:  # noqa: BLE001 (the task itself raised: a runner bug, reported)
            if ctx.cancel.is_set():
                raise ForkFailed(
                    "cancelled", ename="Cancelled", evalue="the sweep was cancelled"
                ) from None
            raise ForkFailed("task failed", ename=type(e).__name__, evalue=str(e)[:2000]) from None
        finally:
            ctx.on_stop(None)
        if "error" in outcome:
            raise ForkFailed("fork failed", **outcome["error"])
        nb = outcome.get("notebook")
        return str(nb) if nb else None

    def close(self) -> None:
        try:
            self._event.set()  # tasks' last waits end now, not in CANCEL_WAIT seconds
            if self._plugin:  # the workers' pools close (a cluster that goes on)
                from .dask_plugin import WorkerPools

                self.client.unregister_worker_plugin(WorkerPools.name)
        except Exception:  # noqa: BLE001 (closing: the cluster may be gone)
            pass
        for thing in self._own:
            try:
                thing.close()
            except Exception:  # noqa: BLE001 (closing: nothing left to save)
                pass
        self._own = []
