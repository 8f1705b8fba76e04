"""The runners that execute a sweep's forks, one module each, chosen by name:

- ``"pool"`` (the default for fork functions): ``workers`` persistent processes that import the
  fork function once and run fork after fork, keeping the journal open and the fork points'
  states and inherited effect results decoded (``workbench.sweep.runners.pool``); async fork
  functions run ``concurrency`` at a time per worker.
- ``"process"``: a fresh worker process per fork: full isolation, an interpreter's start-up and
  the function's imports paid by every fork.
- ``"papermill"``: the template notebook per fork with papermill, on a kernel kept per worker.
- ``"warm"``: the template's cells in long-lived kernels, without papermill.
- ``"dask"``: the fork function (or template) as tasks on a Dask cluster.

Every runner is an object with ``name``, ``slots`` (forks it runs at once), ``run_fork(ctx)``
(blocks until the fork ends; raises ``ForkFailed``) and ``close()``; ``make_runner`` builds one
by name, every argument checked before a kernel or worker starts. All of them arm each fork's
run for replay (``workbench.replay``).
"""

from __future__ import annotations

from typing import Any

from ... import params as declared_params
from ...errors import InvalidValue
from .context import Fork, ForkContext, out_dir_for, tidy
from .dask import DaskRunner, available
from .papermill import PapermillRunner
from .pool import PoolRunner
from .process import ProcessRunner
from .warm import WarmRunner

RUNNERS = ("pool", "process", "papermill", "warm", "dask")
FUNCTION_RUNNERS = ("pool", "process")  # run a fork function (dask does either)
TEMPLATE_RUNNERS = ("papermill", "warm")  # run a template notebook


def runners_here() -> list[str]:
    """The runners this installation can use (dask only with Dask distributed installed)."""
    return [r for r in RUNNERS if r != "dask" or available()]


def make_runner(
    journal: str,
    runner: str,
    notebook: str | None,
    fn: str | None,
    start_timeout: float,
    workers: int = 1,
    scheduler: Any = None,
    *,
    concurrency: int = 1,
    max_forks_per_worker: int | None = None,
    keep_notebooks: str = "failed",
) -> Any:
    """The runner for a sweep of the journal at ``journal`` (its location), every argument
    checked before a kernel or worker starts. ``"dask"`` runs the template (with papermill) or
    else the fork function as tasks on ``scheduler`` (a Client, an address, or None for a
    LocalCluster). ``concurrency`` and ``max_forks_per_worker`` are the pool's,
    ``keep_notebooks`` ("failed" or "all") the warm runner's."""
    if runner not in RUNNERS:
        raise InvalidValue(f"runner must be one of {', '.join(RUNNERS)}, not {runner!r}")
    if scheduler is not None and runner != "dask":
        raise InvalidValue(f"scheduler= is for the dask runner, not {runner!r}")
    check_runner_options(runner, concurrency, max_forks_per_worker, keep_notebooks)
    if runner == "dask":
        if notebook is not None:
            declared_params.of_notebook(notebook)
            return DaskRunner(journal, "papermill", notebook, start_timeout, workers, scheduler)
        if fn is None:
            raise InvalidValue(
                "the dask runner needs fn= (a function or 'module:function') or notebook="
            )
        return DaskRunner(journal, "pool", fn, start_timeout, workers, scheduler, concurrency)
    if runner in FUNCTION_RUNNERS:
        if fn is None:
            raise InvalidValue(f"the {runner} runner needs fn= (a function or 'module:function')")
        if runner == "process":
            return ProcessRunner(fn)
        return PoolRunner(fn, workers, concurrency, max_forks_per_worker, start_timeout)
    if notebook is None:
        raise InvalidValue(
            f"the {runner} runner needs notebook= (a template with a 'parameters' cell)"
        )
    declared_params.of_notebook(notebook)  # a readable notebook with a parameters cell
    try:
        import jupyter_client  # noqa: F401
        import papermill  # noqa: F401
    except ImportError:
        raise InvalidValue(
            "notebook sweeps need papermill and ipykernel: pip install papermill ipykernel"
        ) from None
    if runner == "papermill":
        return PapermillRunner(notebook, start_timeout, workers)
    return WarmRunner(notebook, start_timeout, workers, keep_notebooks)


KEEP_NOTEBOOKS = ("failed", "all")


def runner_options(how: Any) -> dict[str, Any]:
    """The runner's own options a sweep recorded in how it runs (the pool's ``concurrency`` and
    ``max_forks_per_worker``, the warm runner's ``keep_notebooks``), as ``make_runner`` takes
    them."""
    return {
        "concurrency": int(how.get("concurrency") or 1),
        "max_forks_per_worker": how.get("max_forks_per_worker"),
        "keep_notebooks": how.get("keep_notebooks") or "failed",
    }


def check_runner_options(
    runner: str, concurrency: Any, max_forks_per_worker: Any, keep_notebooks: Any = "failed"
) -> None:
    """``concurrency`` (async forks at once per worker process: the pool's, and each Dask
    worker's pool) and ``max_forks_per_worker`` (recycle a worker after that many forks, the
    pool's): whole numbers >= 1;
    ``keep_notebooks``: "failed" (the default) or "all", for the warm runner."""
    if keep_notebooks not in KEEP_NOTEBOOKS:
        raise InvalidValue(f"keep_notebooks is 'failed' or 'all', not {keep_notebooks!r}")
    if runner != "warm" and keep_notebooks != "failed":
        raise InvalidValue(
            f"keep_notebooks is the warm runner's (papermill keeps every notebook), not the "
            f"{runner} runner's"
        )
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise InvalidValue(f"concurrency is a whole number >= 1, not {concurrency!r}")
    if max_forks_per_worker is not None and (
        isinstance(max_forks_per_worker, bool)
        or not isinstance(max_forks_per_worker, int)
        or max_forks_per_worker < 1
    ):
        raise InvalidValue(
            f"max_forks_per_worker is a whole number >= 1 (or None), not {max_forks_per_worker!r}"
        )
    if runner not in ("pool", "dask") and concurrency != 1:
        raise InvalidValue(
            f"concurrency is the pool and dask runners', not the {runner} runner's (async forks "
            "at once in one worker process)"
        )
    if runner != "pool" and max_forks_per_worker is not None:
        raise InvalidValue(
            f"concurrency and max_forks_per_worker are the pool runner's, not the {runner} runner's"
        )


__all__ = [
    "FUNCTION_RUNNERS",
    "RUNNERS",
    "DaskRunner",
    "Fork",
    "PapermillRunner",
    "PoolRunner",
    "ProcessRunner",
    "WarmRunner",
    "TEMPLATE_RUNNERS",
    "ForkContext",
    "tidy",
    "check_runner_options",
    "make_runner",
    "out_dir_for",
    "runner_options",
    "runners_here",
]
