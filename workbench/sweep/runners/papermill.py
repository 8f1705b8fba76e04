"""The ``"papermill"`` runner: each fork executes the template notebook with papermill, on a
kernel kept per worker (each with its own IPC connection path: parallel kernels never race for
TCP ports): before each fork its user namespace is reset and its working directory and
environment restored; a kernel that died, timed out or was cancelled is replaced. Executed
notebooks are kept under ``runs/<sweep>/<branch>.ipynb`` beside the journal."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from ... import replay
from ...errors import ForkFailed
from ...forkrun import PROGRESS_ENV
from .context import ForkContext
from .kernels import (
    _RESET,
    CLEAR_NAMESPACE,
    _fork_kernel_manager,
    _import_kernel_machinery,
    _KernelPool,
    _quiet_papermill,
)


class PapermillRunner(_KernelPool):
    """Executes the template notebook with papermill, on a kernel kept per worker: before each
    fork the names earlier forks defined are cleared (``CLEAR_NAMESPACE``), its working
    directory and environment put back as they were when it started; a kernel that died,
    timed out or was cancelled is replaced by a fresh one. Modules a fork imported stay
    imported (as in a fresh kernel that imports them again, unless they keep global state)."""

    name = "papermill"

    def __init__(self, notebook: str, start_timeout: float, workers: int = 1) -> None:
        import papermill  # noqa: F401 (here, not first in the fork threads)

        _import_kernel_machinery()
        self.notebook = notebook
        self._start_pool("lithify-kernels-", start_timeout, workers)

    def _new_kernel(self) -> Any:
        import asyncio

        km = _fork_kernel_manager(self.workdir, dict(os.environ))
        asyncio.run(km.start_kernel())
        with self._lock:
            self._all.append(km)
        return km

    def _usable(self, kernel: Any) -> bool:
        return bool(kernel.has_kernel and not kernel.stopped)

    def _reset(self, km: Any, ctx: ForkContext) -> None:
        """Put the kept kernel back as it started (see ``_RESET``); gives up at once if the
        fork is cancelled or the kernel dies meanwhile."""
        import queue

        from jupyter_client.blocking.client import BlockingKernelClient

        kc = BlockingKernelClient()
        kc.load_connection_info(km.get_connection_info())
        # the shell channel only: the request waits in the kernel's queue until it is ready,
        # and whether it is alive is asked of its manager (below), not of a heartbeat thread
        kc.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
        try:
            code = CLEAR_NAMESPACE + _RESET.format(
                progress_env=PROGRESS_ENV,
                progress=str(ctx.progress_file),
                fork_env=replay.FORK_ENV,
                fork=ctx.run.to_env(),
            )
            msg_id = kc.execute(code, silent=True, store_history=False)
            deadline = time.monotonic() + self.start_timeout
            while True:
                if ctx.cancel.is_set() or km.stopped or not _alive(km):
                    raise ForkFailed("stopped", ename="Cancelled", evalue="the kernel was stopped")
                if time.monotonic() > deadline:
                    raise ForkFailed(
                        "reset timed out",
                        ename="TimeoutError",
                        evalue=f"the kernel did not reset within {self.start_timeout} s",
                    )
                try:
                    reply = kc.get_shell_msg(timeout=0.2)
                except queue.Empty:
                    continue
                if reply["parent_header"].get("msg_id") != msg_id:
                    continue
                if reply["content"]["status"] != "ok":
                    raise ForkFailed(
                        "reset failed",
                        ename="KernelResetFailed",
                        evalue=str(reply["content"].get("evalue", ""))[:500],
                    )
                return
        finally:
            kc.stop_channels()

    def run_fork(self, ctx: ForkContext) -> str | None:
        import papermill
        from papermill.exceptions import PapermillExecutionError

        _quiet_papermill()
        km = self._kernel()
        timer = threading.Timer(ctx.timeout, km.kill_now) if ctx.timeout else None
        ctx.on_stop(km.kill_now)
        try:
            if timer:
                timer.start()
            self._reset(km, ctx)
            papermill.execute_notebook(
                self.notebook,
                str(ctx.notebook_out),
                parameters=ctx.parameters,
                km=km,
                kernel_name="python3",
                progress_bar=False,
                start_timeout=self.start_timeout,
                request_save_on_cell_execute=True,
            )
        except PapermillExecutionError as e:
            raise ForkFailed(
                "cell failed",
                ename=e.ename,
                evalue=str(e.evalue)[:2000],
                cell=e.cell_index,
                traceback=e.traceback,
                notebook=str(ctx.notebook_out),
            ) from None
        except ForkFailed:
            raise
        except Exception as e:  # kernel died, start timeout, our timer or a cancel
            ename = (
                "TimeoutError"
                if timer is not None and timer.finished.is_set()
                else type(e).__name__
            )
            evalue = (
                f"fork ran longer than {ctx.timeout} s"
                if ename == "TimeoutError"
                else str(e)[:2000]
            )
            if ctx.cancel.is_set():
                ename, evalue = "Cancelled", "the sweep was cancelled"
            raise ForkFailed(
                "fork failed", ename=ename, evalue=evalue, notebook=str(ctx.notebook_out)
            ) from None
        finally:
            if timer:
                timer.cancel()
            ctx.on_stop(None)
            with self._lock:
                if km.stopped or not _alive(km):
                    self._retire(km)  # killed, timed out or crashed: the next fork gets a new one
                else:
                    self._idle.append(km)
        return str(ctx.notebook_out)

    def _retire(self, km: Any) -> None:
        import asyncio

        try:  # kill, reap the process and close the manager's sockets and files
            asyncio.run(km.shutdown_kernel(now=True))
        except Exception:  # noqa: BLE001 (already gone: make sure of it)
            km.kill_now()
            try:
                km.cleanup_connection_file()
            except OSError:
                pass
        self._all = [k for k in self._all if k is not km]


def _alive(km: Any) -> bool:
    pid = getattr(km.provisioner, "pid", None) if km.provisioner else None
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return km.provisioner.process is None or km.provisioner.process.poll() is None
