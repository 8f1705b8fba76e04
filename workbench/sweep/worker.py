"""Inside a fork: progress reports, and the process runner's worker
(``python -m workbench.sweep.worker FN JOURNAL BRANCH PARAMS``).

Imports only what the fork needs (never papermill, altair, nbformat or jupyter_server), exits
if the sweep's parent process dies, and reports an exception as one ``LITHIFY_ERROR {json}``
line on stderr.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from pathlib import Path

from ..errors import clean_traceback
from ..plugins import import_ref

PROGRESS_ENV = "LITHIFY_PROGRESS_FILE"


def report_progress(done: int, total: int | None = None) -> None:
    """Called inside a fork (template or fn) to report steps done; shown by the launcher."""
    path = os.environ.get(PROGRESS_ENV)
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


PARENT_ENV = "LITHIFY_SWEEP_PARENT"  # the coordinator's pid, given by the process runner


def _orphaned(parent: int) -> bool:
    return os.getppid() != parent


def _exit_with_parent(parent: int) -> None:
    """Exit at once if the coordinator ``parent`` is gone (checked now, and every 0.1 s), so a
    worker whose sweep died never writes to a fork the resumed sweep also runs."""
    if _orphaned(parent):
        os._exit(70)

    def watch() -> None:
        while True:
            if _orphaned(parent):
                os._exit(70)  # the sweep's parent died: do not run on as an orphan
            time.sleep(0.1)

    threading.Thread(target=watch, daemon=True).start()


def main(argv: list[str]) -> int:
    ref, journal, branch, params = argv[0], argv[1], int(argv[2]), json.loads(argv[3])
    # The pid the runner gave, not our parent's now: a coordinator that died while this
    # interpreter started would leave us reparented, and getppid() would be someone else.
    parent = int(os.environ.get(PARENT_ENV) or os.getppid())
    _exit_with_parent(parent)
    try:
        fn = import_ref(ref)  # may take long (a heavy module): the parent may die meanwhile
        if _orphaned(parent):
            return 70  # before the first write
        fn(journal, branch, params)
    except BaseException as e:  # noqa: BLE001 (reported to the parent, then exit 1)
        traceback.print_exc()
        tb = traceback.extract_tb(e.__traceback__)
        where = f"{tb[-1].filename}:{tb[-1].lineno}" if tb else ""
        sys.stderr.write(
            "LITHIFY_ERROR "
            + json.dumps(
                {
                    "ename": type(e).__name__,
                    "evalue": str(e)[:2000],
                    "where": where,
                    "traceback": clean_traceback(traceback.format_exc()),
                }
            )
            + "\n"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
