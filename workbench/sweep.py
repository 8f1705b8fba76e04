"""Sweeps: fork a branch at an event once per grid point and run the forks in parallel.

    from workbench import sweep
    s = sweep.plan(j, base=0, at=191, grid={"budget": [300, 600, 1200]}, seeds=3)
    result = sweep.run(s, notebook="notebooks/templates/auditor_fork.ipynb", workers=4)

Runners (all orchestrated from threads of this process):

- ``"papermill"``: each fork executes the template notebook with papermill in a fresh kernel
  with its own IPC connection path (parallel kernels never race for TCP ports); executed
  notebooks are kept under ``runs/<sweep>/<branch>.ipynb`` beside the journal.
- ``"warm"``: one long-lived kernel per worker runs the template's cells for fork after fork,
  resetting the user namespace (``%reset -f``) between forks, and saves each executed
  notebook like papermill. About five times cheaper per fork. What a warm kernel does NOT
  isolate: modules already imported (and their global state, caches, monkeypatches), the
  working directory, environment variables and threads started by earlier forks.
- ``"process"``: a Python function ``fn(journal_path, branch_id, params)`` (given as
  ``"module:function"`` or an importable function) in a fresh worker process per fork; the
  worker imports only workbench and the function's module.

Every fork's status (pending, running, finished, failed, cancelled), error (cell, error
name, message), wall time and executed notebook are recorded in the journal, so a sweep can
be listed, rerun (``only="failed"``) and resumed after the parent was killed (``resume``):
each fork continues from its own head, and journaled effects are never redone. Kernels and
workers exit when this process dies (ipykernel's parent poller; the worker's own poller).
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import params as declared_params
from .errors import ForkFailed, InvalidValue, NotFound, WorkbenchError
from .events import canonical

if TYPE_CHECKING:
    import polars as pl

    from .journal import Journal

RUNNERS = ("papermill", "warm", "process")
PROGRESS_ENV = "LITHIFY_PROGRESS_FILE"


@dataclass(frozen=True)
class Fork:
    """One fork of a sweep: its branch and its own params."""

    branch: int
    params: dict[str, Any]


@dataclass(frozen=True)
class SweepPlan:
    """A recorded sweep: forks of ``base`` at ``at``, one per grid point (and seed)."""

    journal: Journal
    id: int
    base: int
    at: int
    grid: dict[str, list[Any]]
    seeds: int | None
    forks: tuple[Fork, ...]
    notebook: str | None = None
    fn: str | None = None


@dataclass(frozen=True)
class ForkRun:
    """How one fork's run went."""

    branch: int
    params: dict[str, Any]
    status: str
    wall_s: float | None = None
    error: dict[str, Any] | None = None
    notebook: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"branch": self.branch, "params": self.params, "status": self.status, "wall_s": self.wall_s,
                "error": self.error, "notebook": self.notebook, "metrics": self.metrics}


@dataclass(frozen=True)
class SweepResult:
    """The outcome of ``run``: one ForkRun per fork of the sweep, by branch id."""

    sweep: int
    forks: list[ForkRun]

    @property
    def ok(self) -> bool:
        """True when every fork finished."""
        return all(f.status == "finished" for f in self.forks)

    @property
    def failed(self) -> list[ForkRun]:
        return [f for f in self.forks if f.status == "failed"]

    def table(self) -> pl.DataFrame:
        """Fork, params, status, wall and key metrics as a polars frame."""
        import polars as pl

        rows = []
        for f in self.forks:
            row: dict[str, Any] = {"branch": f.branch, **f.params, "status": f.status, "wall_s": f.wall_s}
            row.update({k: v for k, v in f.metrics.items() if k not in row})
            if f.error:
                row["error"] = f"{f.error.get('ename', '')}: {f.error.get('evalue', '')}"[:120]
            rows.append(row)
        return pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()

    def __str__(self) -> str:
        import polars as pl

        with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=160, tbl_hide_dataframe_shape=True):
            return f"sweep {self.sweep}: {sum(f.status == 'finished' for f in self.forks)}/{len(self.forks)} finished\n{self.table()}"

    def to_json(self) -> dict[str, Any]:
        return {"sweep": self.sweep, "ok": self.ok, "forks": [f.to_json() for f in self.forks]}


# -- planning -------------------------------------------------------------------------------


def _grid_points(grid: Mapping[str, Sequence[Any]], seeds: int | None) -> list[dict[str, Any]]:
    if not isinstance(grid, Mapping) or not grid:
        raise InvalidValue("grid must be a non-empty dict of parameter name -> list of values")
    for name, values in grid.items():
        if not isinstance(name, str) or not name:
            raise InvalidValue(f"grid parameter names are non-empty strings, not {name!r}")
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise InvalidValue(f"grid[{name!r}] must be a list of values, not {values!r}")
        if not list(values):
            raise InvalidValue(f"grid[{name!r}] is empty; give at least one value")
        canonical(list(values), f"grid[{name!r}]")
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1):
        raise InvalidValue(f"seeds must be a positive int, not {seeds!r}")
    if seeds is not None and "seed" in grid:
        raise InvalidValue("the grid already has a 'seed' parameter; drop seeds= or the grid entry")
    names = list(grid)
    points = [dict(zip(names, combo)) for combo in itertools.product(*(list(grid[n]) for n in names))]
    if seeds is None:
        return points
    return [{**p, "seed": s} for p in points for s in range(seeds)]


def parse_grid(text: str) -> dict[str, list[Any]]:
    """``"budget=300,600\\nmodel=mock"`` (lines or ';') -> {"budget": [300, 600], "model": ["mock"]}."""
    grid: dict[str, list[Any]] = {}
    for part in text.replace(";", "\n").splitlines():
        part = part.strip()
        if not part:
            continue
        name, eq, values = part.partition("=")
        if not eq or not name.strip():
            raise InvalidValue(f"grid lines are NAME=V1,V2,...; {part!r} is not")
        vals = [_value(v) for v in values.split(",") if v.strip()]
        if not vals:
            raise InvalidValue(f"{name.strip()} has no values")
        if name.strip() in grid:
            raise InvalidValue(f"{name.strip()} is given twice; list all its values once: "
                               f"{name.strip()}=V1,V2,...")
        grid[name.strip()] = vals
    if not grid:
        raise InvalidValue("the grid is empty; write e.g. budget=300,600,1200")
    return grid


def _value(text: str) -> Any:
    try:
        return json.loads(text.strip())
    except ValueError:
        return text.strip()


def _fn_ref(fn: str | Callable[..., Any] | None) -> str | None:
    if fn is None or isinstance(fn, str):
        if isinstance(fn, str) and ":" not in fn:
            raise InvalidValue(f"fn must be 'module:function', not {fn!r}")
        return fn
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or module == "__main__" or "<" in name:
        raise InvalidValue(
            "the process runner imports fn in a fresh worker: define it at module level in an "
            "importable module (not __main__, a lambda or a closure), or pass 'module:function'"
        )
    return f"{module}:{name}"


def _declared(notebook: str | None, fn: str | None) -> tuple[dict[str, Any] | None, str]:
    """(the parameters the fork declares, what declares them), checking that the template is a
    parameterized notebook and that the function imports."""
    declared: dict[str, Any] | None = None
    source = ""
    runs_function = False
    if notebook is not None:
        declared, runs_function = declared_params.of_notebook(notebook)
        source = f"the template {Path(notebook).name}"
    if fn is not None:
        from .sweep_worker import resolve

        try:
            function = resolve(fn)
        except (ImportError, AttributeError, ValueError) as e:
            raise InvalidValue(f"fn {fn!r} cannot be imported here ({type(e).__name__}: {e}); give an "
                               "importable 'module:function'") from None
        if not callable(function):
            raise InvalidValue(f"fn {fn!r} is not a function")
        if notebook is None or runs_function:
            declared, source = declared_params.of_function(function), f"the fork function {fn}"
    elif runs_function:
        declared = None  # a generic template passes the params on to a function it is given
    return declared, source


def check_options(runner: str, workers: int, timeout: float | None) -> None:
    """Refuse a bad runner, worker count or timeout (before anything is forked)."""
    if runner not in RUNNERS:
        raise InvalidValue(f"runner must be one of {', '.join(RUNNERS)}, not {runner!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InvalidValue(f"workers must be a positive int, not {workers!r}")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or not timeout > 0 or timeout != timeout):
        raise InvalidValue(f"timeout is a positive number of seconds, not {timeout!r}")


def plan(
    journal: Journal,
    base: int | str,
    at: int,
    grid: Mapping[str, Sequence[Any]],
    seeds: int | None = None,
    notebook: str | os.PathLike[str] | None = None,
    fn: str | Callable[..., Any] | None = None,
) -> SweepPlan:
    """Create one fork of ``base`` at ``at`` per grid point (x seed) and record the sweep."""
    if journal.path == ":memory:":
        raise InvalidValue("sweeps run in other processes: open the journal from a file, not in memory")
    points = _grid_points(grid, seeds)
    nb = str(Path(notebook).resolve()) if notebook is not None else None
    if nb is not None and not Path(nb).is_file():
        raise NotFound(f"no notebook at {notebook}")
    ref = _fn_ref(fn)
    declared, source = _declared(nb, ref)
    declared_params.check_points(points, declared, source)
    spec = {"grid": {k: list(v) for k, v in grid.items()}, "seeds": seeds, "notebook": nb, "fn": ref}
    branches = journal.sweep(base, at, points, spec=spec)
    sweep_id = branches[0].info.sweep if branches else None
    assert sweep_id is not None
    db = journal._db()
    for b in branches:
        db.put_run(b.id, sweep_id, "pending")
    base_id = branches[0].parent if branches else 0
    return SweepPlan(journal, sweep_id, int(base_id or 0), at, spec["grid"], seeds,
                     tuple(Fork(b.id, p) for b, p in zip(branches, points)), nb, ref)


def load(journal: Journal, sweep_id: int) -> SweepPlan:
    """The plan of a recorded sweep (to rerun or resume it)."""
    for s in journal.sweeps():
        if s.id == sweep_id:
            params = s.spec.get("params", [])
            forks = tuple(Fork(b, p) for b, p in zip(s.branches, params))
            return SweepPlan(journal, s.id, s.base, s.at, s.spec.get("grid", {}), s.spec.get("seeds"),
                             forks, s.spec.get("notebook"), s.spec.get("fn"))
    raise NotFound(f"there is no sweep {sweep_id} in {journal.path}; list them with `lithify sweeps`")


def status(journal: Journal, sweep_id: int) -> list[ForkRun]:
    """Each fork's recorded run: status, wall time, error, executed notebook, key metrics."""
    p = load(journal, sweep_id)
    rows = {r[0]: r for r in journal._db().runs(sweep_id)}
    metrics: dict[int, dict[str, float]] = {}
    m = journal.matrix(sweep=sweep_id)
    for r in m.iter_rows(named=True):
        metrics.setdefault(r["branch"], {})[r["metric"]] = r["value"]
    out = []
    for f in p.forks:
        r = rows.get(f.branch)
        st = r[2] if r else "pending"
        out.append(ForkRun(f.branch, f.params, st, (r[8] / 1000) if r and r[8] is not None else None,
                           json.loads(r[5]) if r and r[5] else None, r[4] if r else None,
                           metrics.get(f.branch, {})))
    return out


# -- progress -------------------------------------------------------------------------------


def report_progress(done: int, total: int | None = None) -> None:
    """Called inside a fork (template or fn) to report steps done; shown by the launcher."""
    path = os.environ.get(PROGRESS_ENV)
    if not path:
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump({"done": done, "total": total}, f)
    os.replace(tmp, path)


def _read_progress(path: Path) -> tuple[int, int | None] | None:
    try:
        doc = json.loads(path.read_text())
        return int(doc["done"]), doc.get("total")
    except (OSError, ValueError, KeyError, TypeError):
        return None


# -- runners --------------------------------------------------------------------------------


class _Context:
    """What a runner needs for one fork: where to write, how to report, how to be stopped."""

    def __init__(self, plan: SweepPlan, fork: Fork, out_dir: Path, cancel: threading.Event,
                 timeout: float | None) -> None:
        self.plan = plan
        self.fork = fork
        self.out_dir = out_dir
        self.cancel = cancel
        self.timeout = timeout
        self.progress_file = out_dir / f"{fork.branch}.progress.json"
        self.notebook_out = out_dir / f"{fork.branch}.ipynb"
        self._stop: Callable[[], None] | None = None
        self._lock = threading.Lock()
        self.function: str | None = None

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
        out = {"journal": self.plan.journal.path, "branch": self.fork.branch, **self.fork.params,
               "fork_params": json.dumps(self.fork.params)}
        if self.function is not None:
            out["function"] = self.function
        return out


class ProcessRunner:
    """Runs ``fn(journal_path, branch_id, params)`` in a fresh worker process per fork."""

    name = "process"

    def __init__(self, fn: str) -> None:
        self.fn = fn

    def run_fork(self, ctx: _Context) -> str | None:
        env = {**os.environ, PROGRESS_ENV: str(ctx.progress_file)}
        cmd = [sys.executable, "-m", "workbench.sweep_worker", self.fn, ctx.plan.journal.path,
               str(ctx.fork.branch), json.dumps(ctx.fork.params)]
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        ctx.on_stop(p.kill)
        try:
            _, err = p.communicate(timeout=ctx.timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise ForkFailed("timed out", error={"ename": "TimeoutError",
                                                 "evalue": f"fork ran longer than {ctx.timeout} s"}) from None
        finally:
            ctx.on_stop(None)
        if p.returncode != 0:
            raise ForkFailed("worker failed", error=_worker_error(err, p.returncode))
        return None

    def close(self) -> None:
        pass


def _worker_error(stderr: str, code: int) -> dict[str, Any]:
    for line in reversed(stderr.strip().splitlines()):
        if line.startswith("LITHIFY_ERROR "):
            try:
                return json.loads(line[len("LITHIFY_ERROR "):])
            except ValueError:
                break
    if code < 0:
        return {"ename": "Killed", "evalue": f"worker ended by signal {-code}"}
    return {"ename": "WorkerError", "evalue": stderr.strip()[-500:] or f"exit code {code}"}


class _DropUnknownParameter:
    # Templates legitimately ignore some fork params (e.g. seed); do not warn for each fork.
    def filter(self, record: Any) -> bool:
        return not str(record.getMessage()).startswith("Passed unknown parameter")


def _quiet_papermill() -> None:
    import logging

    log = logging.getLogger("papermill")
    if not any(isinstance(f, _DropUnknownParameter) for f in log.filters):
        log.addFilter(_DropUnknownParameter())


def _kernel_manager(workdir: Path) -> Any:
    from jupyter_client.manager import KernelManager

    # A unique IPC path per kernel: parallel kernels never race for TCP ports.
    return KernelManager(kernel_name="python3", transport="ipc", ip=str(workdir / f"k-{uuid.uuid4().hex[:12]}"))


_FORK_KM: Any = None


def _fork_kernel_manager(workdir: Path, env: dict[str, str]) -> Any:
    """An async kernel manager (what nbclient expects, so it notices a killed kernel) that
    starts its kernel with the fork's environment and can be stopped from another thread."""
    global _FORK_KM
    if _FORK_KM is None:
        from jupyter_client.manager import AsyncKernelManager

        class ForkKernelManager(AsyncKernelManager):  # type: ignore[misc]
            fork_env: dict[str, str] = {}
            stopped = False

            async def start_kernel(self, **kw: Any) -> None:
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
    km = _FORK_KM(kernel_name="python3", transport="ipc", ip=str(workdir / f"k-{uuid.uuid4().hex[:12]}"))
    km.fork_env = env
    return km


class PapermillRunner:
    """Executes the template notebook with papermill, one fresh kernel per fork."""

    name = "papermill"

    def __init__(self, notebook: str, start_timeout: float) -> None:
        self.notebook = notebook
        self.start_timeout = start_timeout
        self.workdir = Path(tempfile.mkdtemp(prefix="lithify-kernels-"))

    def run_fork(self, ctx: _Context) -> str | None:
        import papermill
        from papermill.exceptions import PapermillExecutionError

        _quiet_papermill()
        km = _fork_kernel_manager(self.workdir, {**os.environ, PROGRESS_ENV: str(ctx.progress_file)})
        timer = threading.Timer(ctx.timeout, km.kill_now) if ctx.timeout else None
        ctx.on_stop(km.kill_now)
        try:
            if timer:
                timer.start()
            papermill.execute_notebook(
                self.notebook, str(ctx.notebook_out), parameters=ctx.parameters, km=km,
                kernel_name="python3", progress_bar=False, start_timeout=self.start_timeout,
                request_save_on_cell_execute=True,
            )
        except PapermillExecutionError as e:
            raise ForkFailed("cell failed", error={"cell": e.cell_index, "ename": e.ename,
                                                  "evalue": str(e.evalue)[:2000]}) from None
        except Exception as e:  # kernel died, start timeout, our timer or a cancel
            ename = "TimeoutError" if timer is not None and timer.finished.is_set() else type(e).__name__
            evalue = f"fork ran longer than {ctx.timeout} s" if ename == "TimeoutError" else str(e)[:2000]
            if ctx.cancel.is_set():
                ename, evalue = "Cancelled", "the sweep was cancelled"
            raise ForkFailed("fork failed", error={"ename": ename, "evalue": evalue}) from None
        finally:
            if timer:
                timer.cancel()
            ctx.on_stop(None)
            km.kill_now()  # nbclient leaves a kernel it did not create running
            try:
                km.cleanup_connection_file()
            except OSError:
                pass
        return str(ctx.notebook_out)

    def close(self) -> None:
        shutil.rmtree(self.workdir, ignore_errors=True)


class WarmRunner:
    """Runs the template's cells in long-lived kernels (one per worker), resetting the
    namespace between forks, and saves each executed notebook."""

    name = "warm"

    def __init__(self, notebook: str, start_timeout: float, workers: int = 1) -> None:
        import nbformat

        self.template = nbformat.read(notebook, as_version=4)
        self.start_timeout = start_timeout
        self.workdir = Path(tempfile.mkdtemp(prefix="lithify-warm-"))
        self._idle: list[Any] = []
        self._all: list[Any] = []
        self._lock = threading.Lock()
        # Start the pool's kernels side by side now rather than one per first fork.
        self._warming = [threading.Thread(target=self._prestart, daemon=True) for _ in range(workers)]
        for t in self._warming:
            t.start()

    def _prestart(self) -> None:
        try:
            pair = self._new_kernel()
        except Exception:  # noqa: BLE001 (the fork that needs a kernel will report the error)
            return
        with self._lock:
            self._idle.append(pair)

    def _kernel(self) -> Any:
        for t in self._warming:
            t.join()
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._new_kernel()

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
        params_at = next((i for i, c in enumerate(cells) if "parameters" in c.get("metadata", {}).get("tags", [])), -1)
        injected = new_code_cell("\n".join(f"{k} = {v!r}" for k, v in ctx.parameters.items()))
        injected.metadata["tags"] = ["injected-parameters"]
        cells.insert(params_at + 1, injected)
        nb.cells = cells
        deadline = time.monotonic() + ctx.timeout if ctx.timeout else None
        try:
            setup = (f"%reset -f\nimport os as _o\n_o.environ[{PROGRESS_ENV!r}] = {str(ctx.progress_file)!r}\n"
                     "del _o")
            kc.execute_interactive(setup, store_history=False, timeout=self.start_timeout)
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code" or not cell.source.strip():
                    continue
                outputs: list[Any] = []

                def hook(msg: dict[str, Any], outputs: list[Any] = outputs) -> None:
                    kind, content = msg["header"]["msg_type"], msg["content"]
                    if kind == "stream":
                        outputs.append(new_output("stream", name=content["name"], text=content["text"]))
                    elif kind in ("execute_result", "display_data"):
                        outputs.append(new_output(kind, data=content["data"], metadata=content.get("metadata", {}),
                                                  **({"execution_count": content["execution_count"]}
                                                     if kind == "execute_result" else {})))
                    elif kind == "error":
                        outputs.append(new_output("error", ename=content["ename"], evalue=content["evalue"],
                                                  traceback=content["traceback"]))

                left = None if deadline is None else max(0.1, deadline - time.monotonic())
                try:
                    reply = kc.execute_interactive(cell.source, output_hook=hook, timeout=left)
                except TimeoutError:
                    broken = True
                    raise ForkFailed("timed out", error={"cell": index, "ename": "TimeoutError",
                                                         "evalue": f"fork ran longer than {ctx.timeout} s"}) from None
                cell.outputs = outputs
                cell.execution_count = reply["content"].get("execution_count")
                if reply["content"]["status"] != "ok":
                    c = reply["content"]
                    ename = "Cancelled" if ctx.cancel.is_set() else c.get("ename", "Error")
                    raise ForkFailed("cell failed", error={"cell": index, "ename": ename,
                                                           "evalue": str(c.get("evalue", ""))[:2000]})
        finally:
            ctx.on_stop(None)
            nbformat.write(nb, str(ctx.notebook_out))
            with self._lock:
                if broken:
                    self._retire(km, kc)
                else:
                    self._idle.append((km, kc))
        return str(ctx.notebook_out)

    def _retire(self, km: Any, kc: Any) -> None:
        try:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
            km.cleanup_resources()
        except Exception:  # noqa: BLE001
            pass
        self._all = [(a, b) for a, b in self._all if a is not km]

    def close(self) -> None:
        with self._lock:
            for km, kc in list(self._all):
                self._retire(km, kc)
            self._idle = []
        shutil.rmtree(self.workdir, ignore_errors=True)


# -- running --------------------------------------------------------------------------------


class SweepHandle:
    """A sweep running in background threads: poll ``progress``, ``cancel()``, ``wait()``."""

    def __init__(self, plan: SweepPlan, runner: Any, forks: list[Fork], workers: int, out_dir: Path,
                 timeout: float | None, function: str | None = None) -> None:
        self.plan = plan
        self.runner = runner
        self.forks = forks
        self.out_dir = out_dir
        self._cancel = threading.Event()
        self._contexts: dict[int, _Context] = {}
        self.status: dict[int, str] = {f.branch: "pending" for f in forks}
        self.started = time.monotonic()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"sweep-{plan.id}")
        self._futures: list[Future[None]] = []
        for f in forks:
            ctx = _Context(plan, f, out_dir, self._cancel, timeout)
            ctx.function = function
            self._contexts[f.branch] = ctx
            self._futures.append(self._pool.submit(self._run_one, ctx))
        self._closer = threading.Thread(target=self._finish, daemon=True)
        self._closer.start()

    def _record(self, branch: int, status: str, **fields: Any) -> None:
        self.status[branch] = status
        self.plan.journal._db().put_run(branch, self.plan.id, status, runner=self.runner.name, **fields)

    def _run_one(self, ctx: _Context) -> None:
        b = ctx.fork.branch
        if self._cancel.is_set():
            self._record(b, "cancelled")
            return
        ctx.progress_file.unlink(missing_ok=True)
        t0 = time.perf_counter()
        self._record(b, "running", started=int(time.time() * 1000), error=None)
        try:
            nb = self.runner.run_fork(ctx)
        except ForkFailed as e:
            status = "cancelled" if self._cancel.is_set() else "failed"
            self._record(b, status, error=json.dumps(e.error), finished=int(time.time() * 1000),
                         wall_ms=(time.perf_counter() - t0) * 1000,
                         notebook=str(ctx.notebook_out) if ctx.notebook_out.exists() else None)
            return
        except Exception as e:  # noqa: BLE001 (a runner bug must not kill the sweep)
            self._record(b, "failed", error=json.dumps({"ename": type(e).__name__, "evalue": str(e)[:2000]}),
                         finished=int(time.time() * 1000), wall_ms=(time.perf_counter() - t0) * 1000)
            return
        self._record(b, "finished", error=None, finished=int(time.time() * 1000),
                     wall_ms=(time.perf_counter() - t0) * 1000, notebook=nb)

    def _finish(self) -> None:
        for fut in self._futures:
            fut.exception()
        self._pool.shutdown(wait=True)
        self.runner.close()

    @property
    def done(self) -> bool:
        """True once every fork has finished, failed or been cancelled."""
        return not self._closer.is_alive()

    def progress(self) -> dict[int, tuple[str, int | None, int | None]]:
        """Per fork: (status, steps done, steps total) as reported by the template."""
        out = {}
        for b, ctx in self._contexts.items():
            p = _read_progress(ctx.progress_file)
            out[b] = (self.status[b], p[0] if p else None, p[1] if p else None)
        return out

    def cancel(self) -> None:
        """Stop running forks (their kernels or workers are shut down) and skip pending ones."""
        self._cancel.set()
        for ctx in self._contexts.values():
            ctx.stop()

    def wait(self, timeout: float | None = None, show: bool | None = None) -> SweepResult:
        """Block until the sweep ends (showing progress bars unless show=False); the result."""
        if show is None:
            show = sys.stderr.isatty() or _in_notebook()
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


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython

        shell = get_ipython()
        return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"
    except ImportError:
        return False


class _Bars:
    """tqdm bars (ipywidgets in a notebook): one for the sweep, one per fork."""

    def __init__(self, handle: SweepHandle) -> None:
        from tqdm.auto import tqdm

        self.h = handle
        n = len(handle.forks)
        self.total = tqdm(total=n, desc=f"sweep {handle.plan.id}", unit="fork", position=0)
        self.per = {f.branch: tqdm(total=None, desc=f"  branch {f.branch} {_short(f.params)}", position=i + 1,
                                   leave=False, unit="step") for i, f in enumerate(handle.forks)}

    def update(self) -> None:
        prog = self.h.progress()
        ended = sum(s in ("finished", "failed", "cancelled") for s, _, _ in prog.values())
        self.total.n = ended
        self.total.set_postfix_str(f"{sum(s == 'running' for s, _, _ in prog.values())} running, "
                                   f"{sum(s == 'failed' for s, _, _ in prog.values())} failed", refresh=False)
        self.total.refresh()
        for b, (st, done, total) in prog.items():
            bar = self.per[b]
            if total is not None and bar.total != total:
                bar.total = total
            bar.n = done or 0
            bar.set_postfix_str(st, refresh=False)
            bar.refresh()

    def close(self) -> None:
        for bar in self.per.values():
            bar.close()
        self.total.close()


def _short(params: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())[:40]


def _runner(plan: SweepPlan, runner: str, notebook: str | None, fn: str | None, start_timeout: float,
            workers: int = 1) -> Any:
    if runner not in RUNNERS:
        raise InvalidValue(f"runner must be one of {', '.join(RUNNERS)}, not {runner!r}")
    if runner == "process":
        if fn is None:
            raise InvalidValue("the process runner needs fn= (a function or 'module:function')")
        return ProcessRunner(fn)
    if notebook is None:
        raise InvalidValue(f"the {runner} runner needs notebook= (a template with a 'parameters' cell)")
    declared_params.of_notebook(notebook)  # a readable notebook with a parameters cell
    try:
        import jupyter_client  # noqa: F401
        import papermill  # noqa: F401
    except ImportError:
        raise InvalidValue("notebook sweeps need papermill and ipykernel: pip install papermill ipykernel") from None
    if runner == "papermill":
        return PapermillRunner(notebook, start_timeout)
    return WarmRunner(notebook, start_timeout, workers)


def start(
    plan: SweepPlan,
    notebook: str | os.PathLike[str] | None = None,
    fn: str | Callable[..., Any] | None = None,
    workers: int = 4,
    runner: str = "papermill",
    only: str | Iterable[int] | None = None,
    timeout: float | None = None,
    start_timeout: float = 60.0,
    out_dir: str | os.PathLike[str] | None = None,
) -> SweepHandle:
    """Start running a sweep's forks in background threads; returns at once. Every argument is
    checked before a kernel or worker starts."""
    check_options(runner, workers, timeout)
    nb = str(Path(notebook).resolve()) if notebook is not None else plan.notebook
    ref = _fn_ref(fn) or plan.fn
    recorded = {row[0]: row[2] for row in plan.journal._db().runs(plan.id)}
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
            raise InvalidValue(f"only= names branches that are not forks of sweep {plan.id}: {unknown}")
        forks = [f for f in plan.forks if f.branch in set(wanted)]
    base_dir = Path(out_dir) if out_dir is not None else Path(plan.journal.path).resolve().parent / "runs"
    target = base_dir / str(plan.id)
    target.mkdir(parents=True, exist_ok=True)
    r = _runner(plan, runner, nb, ref, start_timeout, workers)
    try:
        return SweepHandle(plan, r, forks, workers, target, timeout, ref if runner != "process" else None)
    except BaseException:
        r.close()  # no handle owns it: stop its kernels now
        raise


def run(plan: SweepPlan, notebook: str | os.PathLike[str] | None = None,
        fn: str | Callable[..., Any] | None = None, workers: int = 4, runner: str = "papermill",
        only: str | Iterable[int] | None = None, timeout: float | None = None,
        start_timeout: float = 60.0, out_dir: str | os.PathLike[str] | None = None,
        progress: bool | None = None) -> SweepResult:
    """Run a sweep's forks in parallel and wait: the forks not finished yet, or ``only``
    ("failed", or branch ids). Progress bars in a terminal or notebook unless progress=False."""
    h = start(plan, notebook, fn, workers, runner, only, timeout, start_timeout, out_dir)
    return h.wait(show=progress)


def resume(journal: Journal, sweep_id: int, workers: int = 4, runner: str | None = None,
           **kw: Any) -> SweepResult:
    """Finish a sweep whose parent died: runs only the forks that have not finished."""
    p = load(journal, sweep_id)
    chosen = runner or ("process" if p.fn else "papermill")
    return run(p, workers=workers, runner=chosen, **kw)
