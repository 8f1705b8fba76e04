"""The Dask runner's worker plugin, in a module of its own: it subclasses
``distributed.WorkerPlugin`` (distributed refuses duck-typed plugins, and a refused plugin left
each task to start a pool process of its own for one fork), so it is imported only where
distributed already is: by the Dask runner and its tasks, never by ``import workbench``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import distributed


class WorkerPools(distributed.WorkerPlugin):
    """A Dask worker plugin: the pool runners one Dask worker keeps, one per fork function,
    so its forks run in a warm pool worker process
    (imports once, the journal kept open, fork points cached) instead of a process per fork.
    Registered by ``DaskRunner`` on the cluster; closed with the worker."""

    name = "lithify-pools"

    def __init__(self, start_timeout: float = 60.0) -> None:
        self.start_timeout = start_timeout
        self.pools: dict[str, Any] = {}
        self.lock = threading.Lock()
        self.watches: dict[str, _Watch] = {}

    def setup(self, worker: Any) -> None:
        self.pools = {}
        self.lock = threading.Lock()
        self.watches = {}

    def teardown(self, worker: Any) -> None:
        with self.lock:
            pools, self.pools = list(self.pools.values()), {}
        for pool in pools:
            pool.close()

    def pool(self, fn: str, concurrency: int = 1) -> Any:
        """This worker's pool runner for ``fn`` (one worker process running ``concurrency``
        async forks at once, on one journal connection), started on first use."""
        from .pool import PoolRunner

        with self.lock:
            key = f"{fn}#{concurrency}"
            runner = self.pools.get(key)
            if runner is None:
                runner = self.pools[key] = PoolRunner(fn, 1, concurrency, None, self.start_timeout)
            return runner

    def watch(
        self, name: str, client: Any, stop: Callable[[], None], wait_s: float
    ) -> Callable[[], None]:
        """Call ``stop`` if the sweep's cancel ``Event`` called ``name`` is set while the fork
        runs; the function that forgets it when the fork ends. One thread per sweep in this
        worker waits on the Event (a long wait the scheduler answers at once when it is set),
        whatever the number of its forks here: a wait per fork kept a call open on the
        scheduler per task, and the scheduler and workers busy with them. A fork that starts
        after the cancel is stopped at once."""
        with self.lock:
            w = self.watches.get(name)
            if w is None:
                w = self.watches[name] = _Watch()
                thread = threading.Thread(
                    target=self._wait, args=(name, w, client, wait_s), name=name, daemon=True
                )
                thread.start()
            if w.cancelled:
                stop()
                return lambda: None
            token = object()
            w.stops[token] = stop

        def forget() -> None:
            with self.lock:
                w.stops.pop(token, None)

        return forget

    def _wait(self, name: str, w: _Watch, client: Any, wait_s: float) -> None:
        flag = distributed.Event(name, client=client)
        while True:
            try:
                hit = bool(flag.wait(timeout=wait_s))
            except Exception:  # noqa: BLE001 (the scheduler went away: its tasks end with it)
                hit = False
                with self.lock:
                    self.watches.pop(name, None)
                return
            with self.lock:
                if hit:
                    w.cancelled = True
                    stops = list(w.stops.values())
                elif not w.stops:  # no fork of this sweep runs here: the next one waits anew
                    self.watches.pop(name, None)
                    return
                else:
                    continue
            for stop in stops:
                stop()
            return

    def __getstate__(self) -> dict[str, Any]:  # sent to the workers without its pools
        return {"start_timeout": self.start_timeout}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.start_timeout = state["start_timeout"]
        self.pools = {}
        self.lock = threading.Lock()
        self.watches = {}


class _Watch:
    """One sweep's cancel, as one Dask worker waits on it: the stops of its running forks."""

    def __init__(self) -> None:
        self.cancelled = False
        self.stops: dict[object, Callable[[], None]] = {}
