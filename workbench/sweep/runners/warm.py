"""The ``"warm"`` runner: one long-lived kernel per worker runs the template's cells itself (no
papermill), fork after fork, removing the names the forks defined between forks
(``kernels.CLEAR_NAMESPACE``). What it does not isolate: modules already imported (and their
global state) and threads started by earlier forks; it does not restore the working directory
or environment variables."""

from __future__ import annotations

import copy
import time
from typing import Any

from ... import replay
from ...errors import ForkFailed
from ...forkrun import PROGRESS_ENV
from .context import ForkContext
from .kernels import CLEAR_NAMESPACE, _import_kernel_machinery, _kernel_manager, _KernelPool


class WarmRunner(_KernelPool):
    """Runs the template's cells in long-lived kernels (one per worker), resetting the
    namespace between forks; each kernel keeps the journals its forks open, warm, as a pool
    worker does. Saves the executed notebook of a failed fork (``keep_notebooks="failed"``, the
    default) or of every fork (``"all"``)."""

    name = "warm"

    def __init__(
        self,
        notebook: str,
        start_timeout: float,
        workers: int = 1,
        keep_notebooks: str = "failed",
    ) -> None:
        import nbformat

        _import_kernel_machinery()  # before the threads below start kernels
        self.template = nbformat.read(notebook, as_version=4)
        self.keep_notebooks = keep_notebooks
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

    def run_fork(self, ctx: ForkContext) -> str | None:
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
                f"{CLEAR_NAMESPACE}import os as _o\n_o.environ[{PROGRESS_ENV!r}] = "
                f"{str(ctx.progress_file)!r}\n_o.environ[{replay.FORK_ENV!r}] = "
                f"{ctx.run.to_env()!r}\ndel _o\n"
                "from workbench.opening import keep_journals_open as _k\n_k()\ndel _k"
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
            failed = False
        except BaseException:
            failed = True
            raise
        finally:
            ctx.on_stop(None)
            if failed or self.keep_notebooks == "all":
                nbformat.write(nb, str(ctx.notebook_out))
            with self._lock:
                if broken:
                    self._retire((km, kc))
                else:
                    self._idle.append((km, kc))
        return str(ctx.notebook_out) if self.keep_notebooks == "all" else None

    def _retire(self, kernel: Any) -> None:
        km, kc = kernel
        try:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
            km.cleanup_resources()
        except Exception:  # noqa: BLE001
            pass
        self._all = [(a, b) for a, b in self._all if a is not km]
