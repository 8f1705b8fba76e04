"""Kernels kept per worker for the template runners (``papermill``, ``warm``): started side by
side, handed out one per fork, reset between forks, retired when they die."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import uuid
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any


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


# Between forks (warm and papermill runners), every name the forks defined goes (IPython's
# own names stay) and the output cache is emptied: what ``%reset -f`` does for a fork's
# namespace, without its full garbage collection and history reset (about 90 ms a fork, most
# of the warm runner's own cost; Python's collector still runs as it always does).
CLEAR_NAMESPACE = (
    "(lambda ip, re, dh: ["
    "[(ip.user_ns.pop(k, None), ip.user_ns_hidden.pop(k, None)) for k in [k for k in "
    "list(ip.user_ns) if re.fullmatch(r'_\\d+', k) or (k not in ip.user_ns_hidden and not "
    "re.fullmatch(r'_(i+|i\\d+|ih|dh|oh)|__\\w+__', k))]], "
    "ip.user_ns.get('_oh', {}).clear(), "
    "[setattr(dh, a, '') for a in ('_', '__', '___')], "
    "ip.push({'_': dh._, '__': dh.__, '___': dh.___}, interactive=False), "
    "setattr(ip, 'last_execution_result', None)"
    "] and None)(get_ipython(), __import__('re'), get_ipython().displayhook)\n"
)


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
