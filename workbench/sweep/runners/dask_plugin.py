"""The Dask runner's worker plugin, in a module of its own: it subclasses
``distributed.WorkerPlugin`` (distributed refuses duck-typed plugins, and a refused plugin left
each task to start a pool process of its own for one fork), so it is imported only where
distributed already is: by the Dask runner and its tasks, never by ``import workbench``."""

from __future__ import annotations

import threading
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

    def setup(self, worker: Any) -> None:
        self.pools = {}
        self.lock = threading.Lock()

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

    def __getstate__(self) -> dict[str, Any]:  # sent to the workers without its pools
        return {"start_timeout": self.start_timeout}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.start_timeout = state["start_timeout"]
        self.pools = {}
        self.lock = threading.Lock()
