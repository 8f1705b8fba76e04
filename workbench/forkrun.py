"""Inside a fork, whatever runs it: progress reports, what a fork function returns, how a
fork's error is reported, and the watch that ends a worker whose coordinator died. Kept out of
the ``sweep`` package so a runner's worker imports only what a fork needs (``import workbench``
is lazy; the pool's workers are ``workbench.poolworker``, the process runner's
``workbench.sweep.worker``).

Imports only what the fork needs (never papermill, altair, nbformat or jupyter_server), exits
if the sweep's parent process dies, and reports an exception as one ``LITHIFY_ERROR {json}``
line on stderr.
"""

from __future__ import annotations

import contextvars
import inspect
import json
import math
import os
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .errors import InvalidValue, clean_traceback
from .plugins import import_ref

PROGRESS_ENV = "LITHIFY_PROGRESS_FILE"
# the progress file of the fork this task runs (a pool worker may run several), or $PROGRESS_ENV
progress_file: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "lithify_progress_file", default=None
)


def report_progress(done: int, total: int | None = None) -> None:
    """Called inside a fork (template or fn) to report steps done; shown by the launcher."""
    path = progress_file.get() or os.environ.get(PROGRESS_ENV)
    if not path:
        return
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump({"done": done, "total": total}, f)
    os.replace(tmp, path)


def read_progress(path: Path) -> tuple[int, int | None] | None:
    try:
        doc = json.loads(path.read_text())
        return int(doc["done"]), doc.get("total")
    except (OSError, ValueError, KeyError, TypeError):
        return None


def call_fork(
    fn: str | Callable[..., Any], journal: str, branch: int, params: dict[str, Any]
) -> Any:
    """Call a fork function ``fn(journal, branch, params)`` (or ``"module:function"``) and
    observe what it returns on its branch, as an Optuna objective returns its value: a number
    is the value of the sweep's objective (or of the journal's agent's metric), a dict maps
    metric names to numbers (entries that are not numbers are left out). A name the fork
    observed itself without a step (its own final value) is not observed again; one it only
    ``sweep.report``-ed is. An ``async def`` function runs to its end in an event loop of its
    own. Returns what ``fn`` returned."""
    f = import_ref(fn) if isinstance(fn, str) else fn
    out = f(journal, branch, params)
    if inspect.iscoroutine(out):  # an async fork function, run on its own here
        import asyncio

        out = asyncio.run(out)
    observe_returned(journal, branch, out)
    return out


def observe_returned(journal: str, branch: int, returned: Any) -> None:
    """Observe a fork function's returned values on its branch (see ``call_fork``)."""
    if returned is None or isinstance(returned, bool):
        return
    from .journal import Journal

    with Journal.open(journal) as j:
        b = j.branch(branch)
        if isinstance(returned, (int, float)):
            values = {_returned_name(j, b.info.sweep, branch): returned}
        elif isinstance(returned, Mapping):
            values = {
                str(k): v
                for k, v in returned.items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)
            }
        else:
            return
        for name, value in values.items():
            if not math.isfinite(value):
                raise InvalidValue(
                    f"the fork function returned {value} for {name!r}: a value a sweep can rank "
                    "is a finite number",
                    name=name,
                )
        final: set[str] = set()
        if b.head > b.fork_seq:
            for r in b.history(b.fork_seq + 1):
                if r.kind == "observe" and r.payload.get("step") is None:
                    final.add(r.payload["name"])
        for name, value in values.items():
            if name not in final:
                b.observe(name, value)


def _returned_name(journal: Any, sweep: int | None, branch: int) -> str:
    """The metric a returned number is the value of: the study's single objective, else the
    journal's agent's metric."""
    from . import plugins

    if sweep is not None:
        spec: dict[str, Any] = next((s.spec for s in journal.sweeps() if s.id == sweep), {})
        objectives = spec.get("objectives") or []
        if len(objectives) == 1:
            return str(objectives[0])
        if len(objectives) > 1:
            raise InvalidValue(
                f"the fork function of branch {branch} returned one number, but its study has "
                f"{len(objectives)} objectives ({', '.join(objectives)}): return a dict "
                "{name: value} with each"
            )
    agent = plugins.agent_for(journal.state_name)
    if agent is not None and agent.y:
        return str(agent.y)
    raise InvalidValue(
        f"the fork function of branch {branch} returned a number, but nothing says which metric "
        "it is: return a dict {name: value}, or observe it (branch.observe(name, value))"
    )


PARENT_ENV = "LITHIFY_SWEEP_PARENT"  # the coordinator's pid, given by the process runner


def orphaned(parent: int) -> bool:
    """Whether the coordinator ``parent`` has gone (this process was reparented)."""
    return os.getppid() != parent


def exit_with_parent(parent: int) -> None:
    """Exit at once if the coordinator ``parent`` is gone (checked now, and every 0.1 s), so a
    worker whose sweep died never writes to a fork the resumed sweep also runs."""
    if orphaned(parent):
        os._exit(70)

    def watch() -> None:
        while True:
            if orphaned(parent):
                os._exit(70)  # the sweep's parent died: do not run on as an orphan
            time.sleep(0.1)

    threading.Thread(target=watch, daemon=True).start()


def error_doc(e: BaseException) -> dict[str, Any]:
    """A fork's exception as the JSON its runner records (name, message, where, traceback)."""
    tb = traceback.extract_tb(e.__traceback__)
    return {
        "ename": type(e).__name__,
        "evalue": str(e)[:2000],
        "where": f"{tb[-1].filename}:{tb[-1].lineno}" if tb else "",
        "traceback": clean_traceback(
            "".join(traceback.format_exception(type(e), e, e.__traceback__))
        ),
    }
