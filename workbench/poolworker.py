"""A pool worker (``python -m workbench.poolworker FN FD``): imports the fork function
once, keeps the journals it opens (``Journal.open`` hands the same open journal to every fork,
with the warm caches of ``workbench.warmcache``), then runs the jobs its coordinator writes on
stdin and answers each on the pipe ``FD`` (see ``workbench.sweep.runners.pool``). Outside the
``sweep`` package, so a worker imports only what its forks use.

A synchronous fork function runs one fork at a time, in the main thread; an ``async def`` one
runs as a task per fork in one event loop, as many at once as the coordinator sends (its
``concurrency``), each armed for replay in its own context.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from . import replay
from .forkrun import (
    PARENT_ENV,
    error_doc,
    exit_with_parent,
    observe_returned,
    orphaned,
    progress_file,
)
from .opening import keep_journals_open, release_journals
from .plugins import import_ref


def _answer(out: IO[str], lock: threading.Lock, doc: dict[str, Any]) -> None:
    with lock:
        out.write(json.dumps(doc) + "\n")
        out.flush()


def user_files() -> list[list[Any]]:
    """(path, mtime_ns, size) of each module file this worker imported from outside the
    Python installation: the code a kept worker would run again, which must not have changed
    on disk when a new sweep takes it (``runners.pool``)."""
    prefixes = tuple({os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix)})
    out: list[list[Any]] = []
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if not isinstance(path, str):
            continue
        real = os.path.realpath(path)
        if real.startswith(prefixes):
            continue
        try:
            st = os.stat(real)
        except OSError:
            continue
        out.append([real, st.st_mtime_ns, st.st_size])
    return out


def _run(job: dict[str, Any]) -> replay.ForkRun:
    return replay.ForkRun(
        str(job["journal"]), int(job["branch"]), job.get("start"), str(job["run"])
    )


def serve(ref: str, fd: int, orphaned: Callable[[], bool]) -> int:
    """Serve jobs until stdin closes; the exit code."""
    out = os.fdopen(fd, "w", encoding="utf-8")
    lock = threading.Lock()
    try:
        fn = import_ref(ref)
    except BaseException as e:  # noqa: BLE001 (every fork sent here fails with this)
        _answer(out, lock, {"fatal": error_doc(e)})
        return 1
    if orphaned():
        return 70
    keep_journals_open()
    _answer(out, lock, {"ready": os.getpid()})
    if inspect.iscoroutinefunction(fn):
        asyncio.run(_serve_async(fn, out, lock))
        return 0
    for line in sys.stdin:
        job = json.loads(line)
        if job.get("op") == "release":
            release_journals()  # parked between sweeps (see runners.pool): hold no file
            _answer(out, lock, {"released": True, "files": user_files()})
        elif job.get("op") == "run":  # a cancel of a synchronous fork kills the worker instead
            _answer(out, lock, _one(fn, job))
    return 0


def _one(fn: Callable[..., Any], job: dict[str, Any]) -> dict[str, Any]:
    token = progress_file.set(job.get("progress"))
    try:
        with replay.arm(_run(job)):
            out = fn(job["journal"], int(job["branch"]), dict(job["params"]))
            observe_returned(job["journal"], int(job["branch"]), out)
        return {"id": job["id"], "ok": True}
    except BaseException as e:  # noqa: BLE001 (the fork's error, reported; the worker goes on)
        return {"id": job["id"], "error": error_doc(e)}
    finally:
        progress_file.reset(token)


async def _one_async(fn: Callable[..., Any], job: dict[str, Any]) -> dict[str, Any]:
    progress_file.set(job.get("progress"))  # this task's own context
    try:
        with replay.arm(_run(job)):
            out = await fn(job["journal"], int(job["branch"]), dict(job["params"]))
            observe_returned(job["journal"], int(job["branch"]), out)
        return {"id": job["id"], "ok": True}
    except asyncio.CancelledError:
        return {"id": job["id"], "error": {"ename": "Cancelled", "evalue": "cancelled"}}
    except BaseException as e:  # noqa: BLE001 (the fork's error, reported; the worker goes on)
        return {"id": job["id"], "error": error_doc(e)}


async def _serve_async(fn: Callable[..., Any], out: IO[str], lock: threading.Lock) -> None:
    loop = asyncio.get_running_loop()
    jobs: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    def read() -> None:  # stdin is read in a thread: the loop never blocks on it
        for line in sys.stdin:
            loop.call_soon_threadsafe(jobs.put_nowait, json.loads(line))
        loop.call_soon_threadsafe(jobs.put_nowait, None)

    threading.Thread(target=read, daemon=True).start()
    tasks: dict[int, asyncio.Task[None]] = {}

    async def run(job: dict[str, Any]) -> None:
        try:
            _answer(out, lock, await _one_async(fn, job))
        finally:
            tasks.pop(int(job["id"]), None)

    while True:
        job = await jobs.get()
        if job is None:
            break
        if job.get("op") == "cancel":
            task = tasks.get(int(job["id"]))
            if task is not None:
                task.cancel()
        elif job.get("op") == "run":
            tasks[int(job["id"])] = asyncio.create_task(run(job))
        elif job.get("op") == "release":  # after the forks sent before it have ended
            if tasks:
                await asyncio.gather(*list(tasks.values()), return_exceptions=True)
            release_journals()
            _answer(out, lock, {"released": True, "files": user_files()})
    if tasks:
        await asyncio.gather(*tasks.values(), return_exceptions=True)


def main(argv: list[str]) -> int:
    # the coordinator's pid as the runner gave it (see worker.main)
    parent = int(os.environ.get(PARENT_ENV) or os.getppid())
    exit_with_parent(parent)
    return serve(argv[0], int(argv[1]), lambda: orphaned(parent))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
