"""The runners that execute a sweep's forks, each in its own kernel or process:

- ``"papermill"``: each fork executes the template notebook with papermill, on a kernel kept
  per worker (each with its own IPC connection path: parallel kernels never race for TCP
  ports): before each fork its user namespace is reset and its working directory and
  environment restored; a kernel that died, timed out or was cancelled is replaced. Executed
  notebooks are kept under ``runs/<sweep>/<branch>.ipynb`` beside the journal.
- ``"warm"``: one long-lived kernel per worker runs the template's cells itself (no papermill),
  fork after fork, resetting the user namespace (``%reset -f``) between forks, and saves each
  executed notebook like papermill. The lightest. What neither kept kernel isolates: modules
  already imported (and their global state, caches, monkeypatches) and threads started by
  earlier forks; warm does not restore the working directory or environment variables.
- ``"process"``: a Python function ``fn(journal_path, branch_id, params)`` (given as
  ``"module:function"`` or an importable function) in a fresh worker process per fork; the
  worker imports only workbench and the function's module.
- ``"dask"``: the same function (or template) as tasks on a Dask cluster
  (``workbench.sweep.cluster``).
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import params as declared_params
from .. import replay
from ..errors import ForkFailed, InvalidValue
from .plan import RUNNERS, Fork
from .worker import PARENT_ENV, PROGRESS_ENV


class _Context:
    """What a runner needs for one fork: where to write, how to report, how to be stopped."""

    def __init__(
        self,
        journal_path: str,
        fork: Fork,
        out_dir: Path,
        cancel: threading.Event,
        timeout: float | None,
    ) -> None:
        self.journal_path = journal_path
        self.fork = fork
        self.out_dir = out_dir
        self.cancel = cancel
        self.timeout = timeout
        self.progress_file = out_dir / f"{fork.branch}.progress.json"
        self.notebook_out = out_dir / f"{fork.branch}.ipynb"
        self._stop: Callable[[], None] | None = None
        self._lock = threading.Lock()
        self.function: str | None = None
        self.run = replay.new_run(journal_path, fork.branch, fork.start)

    def fork_env(self) -> dict[str, str]:
        """What arms this fork's run in a child process or kernel (see ``workbench.replay``):
        a rerun reads back what the branch already holds instead of appending it again."""
        return replay.fork_env(self.run)

    def on_stop(self, stop: Callable[[], None] | None) -> None:
        with self._lock:
            self._stop = stop
        if stop is not None and self.cancel.is_set():
            stop()

    def stop(self) -> None:
        with self._lock:
            stop = self._stop
        if stop is not None:
            stop()

    @property
    def parameters(self) -> dict[str, Any]:
        """What the template receives: journal, branch, the fork's params, and all of them as
        JSON in ``fork_params`` (for generic templates)."""
        out = {
            "journal": self.journal_path,
            "branch": self.fork.branch,
            **self.fork.params,
            "fork_params": json.dumps(self.fork.params),
        }
        if self.function is not None:
            out["function"] = self.function
        return out


class ProcessRunner:
    """Runs ``fn(journal_path, branch_id, params)`` in a fresh worker process per fork."""

    name = "process"

    def __init__(self, fn: str) -> None:
        self.fn = fn

    def run_fork(self, ctx: _Context) -> str | None:
        env = {
            **os.environ,
            PROGRESS_ENV: str(ctx.progress_file),
            PARENT_ENV: str(os.getpid()),
            **ctx.fork_env(),
        }
        cmd = [
            sys.executable,
            "-m",
            "workbench.sweep.worker",
            self.fn,
            ctx.journal_path,
            str(ctx.fork.branch),
            json.dumps(ctx.fork.params),
        ]
        p = subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        ctx.on_stop(p.kill)
        try:
            _, err = p.communicate(timeout=ctx.timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise ForkFailed(
                "timed out", ename="TimeoutError", evalue=f"fork ran longer than {ctx.timeout} s"
            ) from None
        finally:
            ctx.on_stop(None)
        if p.returncode != 0:
            raise ForkFailed("worker failed", **_worker_error(err, p.returncode))
        return None

    def close(self) -> None:
        pass


def _worker_error(stderr: str, code: int) -> dict[str, Any]:
    for line in reversed(stderr.strip().splitlines()):
        if line.startswith("LITHIFY_ERROR "):
            try:
                doc = json.loads(line[len("LITHIFY_ERROR ") :])
            except ValueError:
                break
            keep = ("ename", "evalue", "where", "traceback")
            return {k: doc[k] for k in keep if k in doc} if isinstance(doc, dict) else {}
    tail = stderr.strip().splitlines()[-STDERR_LINES:]
    if code < 0:
        return killed(-code, tail)
    return {
        "ename": "WorkerError",
        "evalue": f"the worker exited with code {code}"
        + (f": {tail[-1][:500]}" if tail else " and wrote nothing on stderr"),
        "stderr": tail,
    }


STDERR_LINES = 20  # the last lines of a dead worker's stderr kept with its error


def killed(signum: int, tail: list[str]) -> dict[str, Any]:
    """The error document of a fork whose worker a signal ended (not the fork's own error)."""
    import signal

    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    return {
        "ename": "Killed",
        "evalue": f"the worker was killed by {name} ({signum})"
        + (
            f"; its last line on stderr: {tail[-1][:300]}"
            if tail
            else "; it wrote nothing on stderr"
        ),
        "signal": signum,
        "stderr": tail,
    }


class _DropUnknownParameter:
    # Templates legitimately ignore some fork params (e.g. seed); do not warn for each fork.
    def filter(self, record: Any) -> bool:
        return not str(record.getMessage()).startswith("Passed unknown parameter")


def _quiet_papermill() -> None:
    import logging

    log = logging.getLogger("papermill")
    if not any(isinstance(f, _DropUnknownParameter) for f in log.filters):
        log.addFilter(_DropUnknownParameter())


def _import_kernel_machinery() -> None:
    """Import here, in one thread, what starting a kernel imports on first use (the kernelspec
    lookup pulls in IPython and ipykernel). The forks' threads would otherwise import those
    packages for the first time side by side, which Python before 3.14 can fail (CPython
    gh-83065: a fork failed with KeyError: 'IPython' under load)."""
    from jupyter_client.kernelspec import KernelSpecManager

    try:
        KernelSpecManager().get_kernel_spec("python3")
    except Exception:  # noqa: BLE001 (no such kernel: the fork that needs it says so)
        pass


def _kernel_manager(workdir: Path) -> Any:
    from jupyter_client.manager import KernelManager

    # A unique IPC path per kernel: parallel kernels never race for TCP ports.
    return KernelManager(
        kernel_name="python3", transport="ipc", ip=str(workdir / f"k-{uuid.uuid4().hex[:12]}")
    )


_FORK_KM: Any = None


def _fork_kernel_manager(workdir: Path, env: dict[str, str]) -> Any:
    """An async kernel manager (what nbclient expects, so it notices a killed kernel) that
    starts its kernel with the fork's environment and can be stopped from another thread."""
    global _FORK_KM
    if _FORK_KM is None:
        from jupyter_client.manager import AsyncKernelManager

        class ForkKernelManager(AsyncKernelManager):
            fork_env: dict[str, str] = {}
            stopped = False

            # jupyter_client declares the synchronous signature; this class is the async one
            async def start_kernel(self, **kw: Any) -> None:  # type: ignore[override]
                kw.setdefault("env", self.fork_env)
                await super().start_kernel(**kw)
                if self.stopped:  # a cancel or timeout arrived while the kernel was starting
                    self.kill_now()

            def kill_now(self) -> None:
                self.stopped = True
                pid = getattr(self.provisioner, "pid", None) if self.provisioner else None
                if pid:
                    try:
                        os.kill(pid, 9)
                    except ProcessLookupError:
                        pass

        _FORK_KM = ForkKernelManager
    km = _FORK_KM(
        kernel_name="python3", transport="ipc", ip=str(workdir / f"k-{uuid.uuid4().hex[:12]}")
    )
    km.fork_env = env
    return km


_RESET = """
import builtins as _b, os as _o
if not hasattr(_b, "__lithify_start__"):
    _b.__lithify_start__ = (_o.getcwd(), dict(_o.environ))
_o.chdir(_b.__lithify_start__[0])
_o.environ.clear()
_o.environ.update(_b.__lithify_start__[1])
_o.environ[{progress_env!r}] = {progress!r}
_o.environ[{fork_env!r}] = {fork!r}
del _b, _o
"""


class _KernelPool(ABC):
    """Kernels kept per worker for the template runners: ``workers`` of them started side by
    side at construction (not one per first fork), handed out by ``_kernel`` and retired when
    they die or the pool closes. Subclasses say how a kernel starts, whether an idle one can
    still be used, and how one is retired."""

    def _start_pool(self, prefix: str, start_timeout: float, workers: int) -> None:
        self.start_timeout = start_timeout
        self.workdir = Path(tempfile.mkdtemp(prefix=prefix))
        self._idle: list[Any] = []
        self._all: list[Any] = []
        self._lock = threading.Lock()
        self._warming = [
            threading.Thread(target=self._prestart, daemon=True) for _ in range(workers)
        ]
        for t in self._warming:
            t.start()

    @abstractmethod
    def _new_kernel(self) -> Any:
        """Start one kernel (on a warm-up thread)."""

    def _usable(self, kernel: Any) -> bool:
        """Whether an idle kernel can take the next fork (else it is retired)."""
        return True

    @abstractmethod
    def _retire(self, kernel: Any) -> None:
        """Shut one kernel down (it died, or the pool closes)."""

    def _prestart(self) -> None:
        try:
            kernel = self._new_kernel()
        except Exception:  # noqa: BLE001 (the fork that needs a kernel will report the error)
            return
        with self._lock:
            self._idle.append(kernel)

    def _kernel(self) -> Any:
        for t in self._warming:
            t.join()
        with self._lock:
            while self._idle:
                kernel = self._idle.pop()
                if self._usable(kernel):
                    return kernel
                self._retire(kernel)
        return self._new_kernel()

    def close(self) -> None:
        for t in self._warming:  # a kernel still starting is retired with the rest
            t.join()
        with self._lock:
            for kernel in list(self._all):
                self._retire(kernel)
            self._idle = []
        shutil.rmtree(self.workdir, ignore_errors=True)


class PapermillRunner(_KernelPool):
    """Executes the template notebook with papermill, on a kernel kept per worker: before each
    fork the kernel's user namespace is reset (``%reset -f``), its working directory and
    environment put back as they were when it started; a kernel that died, timed out or was
    cancelled is replaced by a fresh one. Modules a fork imported stay imported (as in a fresh
    kernel that imports them again, unless they keep global state)."""

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

    def _reset(self, km: Any, ctx: _Context) -> None:
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
            code = "%reset -f\n" + _RESET.format(
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

    def run_fork(self, ctx: _Context) -> str | None:
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


class WarmRunner(_KernelPool):
    """Runs the template's cells in long-lived kernels (one per worker), resetting the
    namespace between forks, and saves each executed notebook."""

    name = "warm"

    def __init__(self, notebook: str, start_timeout: float, workers: int = 1) -> None:
        import nbformat

        _import_kernel_machinery()  # before the threads below start kernels
        self.template = nbformat.read(notebook, as_version=4)
        self._start_pool("lithify-warm-", start_timeout, workers)

    def _new_kernel(self) -> Any:
        km = _kernel_manager(self.workdir)
        km.start_kernel()
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=self.start_timeout)
        with self._lock:
            self._all.append((km, kc))
        return km, kc

    def run_fork(self, ctx: _Context) -> str | None:
        import nbformat
        from nbformat.v4 import new_code_cell, new_output

        km, kc = self._kernel()
        broken = False

        def stop() -> None:
            nonlocal broken
            broken = True
            try:
                km.interrupt_kernel()
            except Exception:  # noqa: BLE001
                pass

        ctx.on_stop(stop)
        nb = copy.deepcopy(self.template)
        cells = list(nb.cells)
        params_at = next(
            (
                i
                for i, c in enumerate(cells)
                if "parameters" in c.get("metadata", {}).get("tags", [])
            ),
            -1,
        )
        injected = new_code_cell("\n".join(f"{k} = {v!r}" for k, v in ctx.parameters.items()))
        injected.metadata["tags"] = ["injected-parameters"]
        cells.insert(params_at + 1, injected)
        nb.cells = cells
        deadline = time.monotonic() + ctx.timeout if ctx.timeout else None
        try:
            setup = (
                f"%reset -f\nimport os as _o\n_o.environ[{PROGRESS_ENV!r}] = "
                f"{str(ctx.progress_file)!r}\n_o.environ[{replay.FORK_ENV!r}] = "
                f"{ctx.run.to_env()!r}\ndel _o"
            )
            kc.execute_interactive(setup, store_history=False, timeout=self.start_timeout)
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code" or not cell.source.strip():
                    continue
                outputs: list[Any] = []

                def hook(msg: dict[str, Any], outputs: list[Any] = outputs) -> None:
                    kind, content = msg["header"]["msg_type"], msg["content"]
                    if kind == "stream":
                        outputs.append(
                            new_output("stream", name=content["name"], text=content["text"])
                        )
                    elif kind in ("execute_result", "display_data"):
                        outputs.append(
                            new_output(
                                kind,
                                data=content["data"],
                                metadata=content.get("metadata", {}),
                                **(
                                    {"execution_count": content["execution_count"]}
                                    if kind == "execute_result"
                                    else {}
                                ),
                            )
                        )
                    elif kind == "error":
                        outputs.append(
                            new_output(
                                "error",
                                ename=content["ename"],
                                evalue=content["evalue"],
                                traceback=content["traceback"],
                            )
                        )

                left = None if deadline is None else max(0.1, deadline - time.monotonic())
                try:
                    reply = kc.execute_interactive(cell.source, output_hook=hook, timeout=left)
                except TimeoutError:
                    broken = True
                    raise ForkFailed(
                        "timed out",
                        ename="TimeoutError",
                        evalue=f"fork ran longer than {ctx.timeout} s",
                        cell=index,
                        notebook=str(ctx.notebook_out),
                    ) from None
                cell.outputs = outputs
                cell.execution_count = reply["content"].get("execution_count")
                if reply["content"]["status"] != "ok":
                    c = reply["content"]
                    ename = "Cancelled" if ctx.cancel.is_set() else c.get("ename", "Error")
                    raise ForkFailed(
                        "cell failed",
                        ename=ename,
                        evalue=str(c.get("evalue", ""))[:2000],
                        cell=index,
                        traceback=c.get("traceback"),
                        notebook=str(ctx.notebook_out),
                    )
        finally:
            ctx.on_stop(None)
            nbformat.write(nb, str(ctx.notebook_out))
            with self._lock:
                if broken:
                    self._retire((km, kc))
                else:
                    self._idle.append((km, kc))
        return str(ctx.notebook_out)

    def _retire(self, kernel: Any) -> None:
        km, kc = kernel
        try:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
            km.cleanup_resources()
        except Exception:  # noqa: BLE001
            pass
        self._all = [(a, b) for a, b in self._all if a is not km]


def make_runner(
    journal: str,
    runner: str,
    notebook: str | None,
    fn: str | None,
    start_timeout: float,
    workers: int = 1,
    scheduler: Any = None,
) -> Any:
    """The runner for a sweep of the journal at ``journal`` (its location), every argument
    checked before a kernel or worker starts.
    ``"dask"`` runs the template (with papermill) or else the fork function as tasks on
    ``scheduler`` (a Client, an address, or None for a LocalCluster)."""
    if runner not in RUNNERS:
        raise InvalidValue(f"runner must be one of {', '.join(RUNNERS)}, not {runner!r}")
    if scheduler is not None and runner != "dask":
        raise InvalidValue(f"scheduler= is for the dask runner, not {runner!r}")
    if runner == "dask":
        from .cluster import DaskRunner

        if notebook is not None:
            declared_params.of_notebook(notebook)
            return DaskRunner(journal, "papermill", notebook, start_timeout, workers, scheduler)
        if fn is None:
            raise InvalidValue(
                "the dask runner needs fn= (a function or 'module:function') or notebook="
            )
        return DaskRunner(journal, "process", fn, start_timeout, workers, scheduler)
    if runner == "process":
        if fn is None:
            raise InvalidValue("the process runner needs fn= (a function or 'module:function')")
        return ProcessRunner(fn)
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
    return WarmRunner(notebook, start_timeout, workers)
