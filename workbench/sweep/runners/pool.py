"""The ``"pool"`` runner: ``workers`` persistent worker processes that import the fork function
once and run fork after fork (``python -m workbench.poolworker``).

Each worker keeps the journal open between forks and caches, by content, the states at fork
points and the results of inherited effects (``workbench.warmcache``): the Nth fork from one
event pays no replay, no snapshot decode and no effect decode. An ``async def`` fork function
runs ``concurrency`` forks at once per worker, in one event loop.

What a worker shares between its forks, as Dask's and Ray's workers do: imported modules and
their global state. ``max_forks_per_worker`` recycles a worker after that many forks.

Crash isolation: a fork that kills its worker (``os._exit``, a signal, running out of memory)
fails with the signal and the worker's last lines on stderr, the worker is replaced, and the
other forks go on; a cancel or a fork's timeout stops a synchronous fork by killing its worker
(replaced), an async one by cancelling its task (its worker is killed if the task has not ended
a second later). A worker whose coordinator died exits at once (it watches its parent).

Protocol: the coordinator writes one JSON line per job to the worker's stdin (``run``,
``cancel``); the worker (``workbench.poolworker``) answers on a pipe of its own (``ready``,
a job's outcome), never on stdout, which a fork's prints would garble (stdout is discarded, as
the process runner does).
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from collections import deque
from typing import Any

from ...errors import ForkFailed
from ...forkrun import PARENT_ENV
from .context import ForkContext
from .process import STDERR_LINES, killed

CANCEL_GRACE = 1.0  # seconds an async fork's task has to end once cancelled


class _Job:
    """One fork sent to a worker: its outcome once the worker answers (or dies)."""

    def __init__(self, job_id: int) -> None:
        self.id = job_id
        self.done = threading.Event()
        self.outcome: dict[str, Any] = {}

    def finish(self, outcome: dict[str, Any]) -> None:
        if not self.done.is_set():
            self.outcome = outcome
            self.done.set()


class _Worker:
    """One worker process, its jobs in flight, and its last lines on stderr."""

    def __init__(self, fn: str, concurrency: int) -> None:
        read, write = os.pipe()
        env = {**os.environ, PARENT_ENV: str(os.getpid())}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "workbench.poolworker", fn, str(write)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(write,),
            env=env,
            text=True,
        )
        os.close(write)
        self.concurrency = concurrency
        self.jobs: dict[int, _Job] = {}
        self.forks = 0  # forks sent to it
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self.lock = threading.Lock()
        self.dead = False
        self.released = threading.Event()
        self.files: list[tuple[Any, ...]] = []  # (path, mtime_ns, size) of its own code
        self._answers = os.fdopen(read, "r", encoding="utf-8")
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        self._drain.start()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        try:
            for line in self.proc.stderr:
                self.stderr.append(line.rstrip("\n"))
        except (OSError, ValueError):
            pass
        finally:
            self.proc.stderr.close()

    def _read(self) -> None:
        try:
            for line in self._answers:
                try:
                    doc = json.loads(line)
                except ValueError:
                    continue
                if "id" in doc:
                    with self.lock:
                        job = self.jobs.pop(int(doc["id"]), None)
                    if job is not None:
                        job.finish(doc)
                elif doc.get("released"):  # parked: it holds no journal open
                    self.files = [tuple(f) for f in doc.get("files") or []]
                    self.released.set()
                elif "fatal" in doc:  # the function could not be imported: say why to all
                    self._fail({"error": doc["fatal"]})
        except (OSError, ValueError):
            pass
        finally:
            self._answers.close()
        # the pipe closed: the worker exited or was killed; what was in flight fails with why
        code = self.proc.wait()
        self._drain.join(1.0)
        tail = list(self.stderr)
        if code < 0:
            error = killed(-code, tail)
        else:
            error = {
                "ename": "WorkerError",
                "evalue": f"the pool worker exited with code {code}"
                + (f": {tail[-1][:500]}" if tail else ""),
                "stderr": tail,
            }
        self._fail({"error": error})

    def _fail(self, outcome: dict[str, Any]) -> None:
        with self.lock:
            self.dead = True
            jobs, self.jobs = list(self.jobs.values()), {}
        for job in jobs:
            job.finish(outcome)

    @property
    def load(self) -> int:
        with self.lock:
            return len(self.jobs)

    def send(self, doc: dict[str, Any], job: _Job | None = None) -> bool:
        """Write one line to the worker; False when it is gone."""
        with self.lock:
            if self.dead:
                return False
            if job is not None:
                self.jobs[job.id] = job
                self.forks += 1
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(json.dumps(doc) + "\n")
                self.proc.stdin.flush()
            except (OSError, ValueError):
                if job is not None:
                    self.jobs.pop(job.id, None)
                self.dead = True
                return False
        return True

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:
            pass

    def close(self, timeout: float = 5.0) -> None:
        """Let the worker finish and exit (its stdin closed), killing it if it does not."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.proc.wait()
        self._reader.join(5.0)
        self._drain.join(5.0)


class PoolRunner:
    """Runs a fork function in ``workers`` persistent worker processes (see the module
    docstring); ``slots`` = workers × concurrency forks run at once."""

    name = "pool"

    def __init__(
        self,
        fn: str,
        workers: int = 1,
        concurrency: int = 1,
        max_forks_per_worker: int | None = None,
        start_timeout: float = 60.0,
    ) -> None:
        self.fn = fn
        self.workers = workers
        self.concurrency = concurrency
        self.max_forks = max_forks_per_worker
        self.slots = workers * concurrency
        self._ids = itertools.count(1)
        self._lock = threading.Condition()
        self._key = _warm_key(fn, concurrency) if keep_warm_s() > 0 else None
        warm = _unpark(self._key, workers) if self._key is not None else []
        self._pool: list[_Worker] = warm + [
            _Worker(fn, concurrency) for _ in range(workers - len(warm))
        ]
        self._closed = False

    def _acquire(self) -> _Worker:
        """The least loaded live worker with room, replacing dead and spent ones."""
        with self._lock:
            while True:
                if self._closed:
                    raise ForkFailed("closed", ename="Cancelled", evalue="the runner was closed")
                for w in [w for w in self._pool if w.dead]:
                    self._pool.remove(w)
                    w.close()  # it has exited: its pipes are closed at once
                room = [w for w in self._pool if w.load < self.concurrency and not self._spent(w)]
                if room:
                    return min(room, key=lambda w: w.load)
                if len(self._pool) < self.workers:
                    worker = _Worker(self.fn, self.concurrency)
                    self._pool.append(worker)
                    return worker
                retiring = [w for w in self._pool if self._spent(w)]
                for w in retiring:
                    if w.load == 0:
                        self._pool.remove(w)
                        threading.Thread(target=w.close, daemon=True).start()
                if not retiring or all(w.load for w in retiring):
                    self._lock.wait(0.05)

    def _spent(self, worker: _Worker) -> bool:
        """Whether a worker has run its ``max_forks_per_worker`` (then it is recycled)."""
        return self.max_forks is not None and worker.forks >= self.max_forks

    def run_fork(self, ctx: ForkContext) -> None:
        worker = self._acquire()
        job = _Job(next(self._ids))
        doc = {
            "op": "run",
            "id": job.id,
            "journal": ctx.journal_path,
            "branch": ctx.fork.branch,
            "params": ctx.fork.params,
            "start": ctx.fork.start,
            "run": ctx.run.run,
            "progress": str(ctx.progress_file),
        }
        stopped = threading.Event()

        def stop() -> None:
            stopped.set()
            if self.concurrency == 1:
                worker.kill()
                return
            worker.send({"op": "cancel", "id": job.id})

            def late() -> None:
                if not job.done.is_set():
                    worker.kill()

            timer = threading.Timer(CANCEL_GRACE, late)
            timer.daemon = True
            timer.start()

        try:
            if not worker.send(doc, job):
                job.finish({"error": {"ename": "WorkerError", "evalue": "the worker was gone"}})
            ctx.on_stop(stop)
            if not job.done.wait(ctx.timeout):
                stop()
                job.done.wait()
                raise ForkFailed(
                    "timed out",
                    ename="TimeoutError",
                    evalue=f"fork ran longer than {ctx.timeout} s",
                )
        finally:
            ctx.on_stop(None)
            with self._lock:
                self._lock.notify_all()
        error = job.outcome.get("error")
        if error is not None:
            if stopped.is_set() and ctx.cancel.is_set():
                error = {"ename": "Cancelled", "evalue": "the sweep was cancelled"}
            raise ForkFailed("fork failed", **error)

    def close(self) -> None:
        """End the runner: its idle workers are kept warm for the next runner of the same
        function (``keep_warm_s``), the others closed."""
        with self._lock:
            self._closed = True
            workers, self._pool = self._pool, []
            self._lock.notify_all()
        if self._key is not None:
            workers = _park(self._key, [w for w in workers if not self._spent(w)]) + [
                w for w in workers if self._spent(w)
            ]
        threads = [threading.Thread(target=w.close, daemon=True) for w in workers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


# -- workers kept warm between runners -------------------------------------------------------

KEEP_WARM_S = 60.0  # seconds an idle worker waits for the next sweep of its function
_parked: dict[tuple[Any, ...], list[tuple[float, _Worker]]] = {}
_parked_lock = threading.Lock()
_reaper: threading.Thread | None = None


def keep_warm_s() -> float:
    """How long idle workers are kept for the next sweep of the same function: KEEP_WARM_S,
    or ``$LITHIFY_POOL_KEEP_S`` (0: a sweep's workers end with it)."""
    text = os.environ.get("LITHIFY_POOL_KEEP_S", "")
    try:
        return max(0.0, float(text)) if text else KEEP_WARM_S
    except ValueError:
        return KEEP_WARM_S


def _warm_key(fn: str, concurrency: int) -> tuple[Any, ...] | None:
    """What a kept worker must share with a new runner to serve it: the function, its module
    file as it is now (an edited module gets new workers), the interpreter, the folder and the
    environment. None (no reuse) when the module's file cannot be found."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(fn.partition(":")[0])
    except Exception:  # noqa: BLE001 (a package whose import fails: no reuse, the run says why)
        return None
    origin = getattr(spec, "origin", None)
    if not origin or not os.path.isfile(origin):
        return None
    st = os.stat(origin)
    env = hash(tuple(sorted(os.environ.items())))
    return (fn, concurrency, sys.executable, os.getcwd(), origin, st.st_mtime_ns, st.st_size, env)


def _unpark(key: tuple[Any, ...], n: int) -> list[_Worker]:
    """Up to ``n`` kept workers for ``key`` that are still alive."""
    out: list[_Worker] = []
    with _parked_lock:
        kept = _parked.get(key, [])
        while kept and len(out) < n:
            _, worker = kept.pop()
            if not worker.dead and worker.proc.poll() is None and _unchanged(worker.files):
                out.append(worker)
            else:
                threading.Thread(target=worker.close, daemon=True).start()
        if not kept:
            _parked.pop(key, None)
    return out


def _unchanged(files: list[tuple[Any, ...]]) -> bool:
    """Whether every module file a kept worker imported is as it was when it was kept (an edit
    to any of them, not only the fork function's module, gets new workers)."""
    for path, mtime, size in files:
        try:
            st = os.stat(path)
        except OSError:
            return False
        if (st.st_mtime_ns, st.st_size) != (mtime, size):
            return False
    return True


def _park(key: tuple[Any, ...], workers: list[_Worker]) -> list[_Worker]:
    """Keep the idle, live workers for the next runner of ``key`` once each has closed the
    journals it kept open (a parked worker holds no file); the ones to close instead."""
    global _reaper
    rest: list[_Worker] = []
    ready: list[_Worker] = []
    for w in workers:
        if w.dead or w.load or w.proc.poll() is not None:
            rest.append(w)
            continue
        w.released.clear()
        if w.send({"op": "release"}):
            ready.append(w)
        else:
            rest.append(w)
    now = time.monotonic()
    for w in ready:
        if w.released.wait(5.0) and not w.dead:
            with _parked_lock:
                _parked.setdefault(key, []).append((now, w))
        else:
            rest.append(w)
    with _parked_lock:
        if _parked and _reaper is None:
            _reaper = threading.Thread(target=_reap, name="lithify-pool-reaper", daemon=True)
            _reaper.start()
    return rest


def _reap() -> None:
    """Close kept workers idle longer than keep_warm_s(); ends when none is kept (it says so
    under the lock, so a worker kept meanwhile starts a new one)."""
    global _reaper
    while True:
        time.sleep(1.0)
        keep = keep_warm_s()
        stale: list[_Worker] = []
        with _parked_lock:
            for key in list(_parked):
                fresh = [(t, w) for t, w in _parked[key] if time.monotonic() - t < keep]
                stale += [w for t, w in _parked[key] if time.monotonic() - t >= keep]
                if fresh:
                    _parked[key] = fresh
                else:
                    del _parked[key]
            if not _parked:
                _reaper = None
        for w in stale:
            w.close()
        if _reaper is not threading.current_thread():
            return


def close_kept_workers() -> None:
    """Close every worker kept warm in this process (at exit, or to see edits to modules a
    fork function imports, which a kept worker has already imported)."""
    with _parked_lock:
        workers = [w for kept in _parked.values() for _, w in kept]
        _parked.clear()
    for w in workers:
        w.close(timeout=2.0)


atexit.register(close_kept_workers)
