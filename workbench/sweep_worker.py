"""Entry point of a process-runner worker: ``python -m workbench.sweep_worker FN JOURNAL BRANCH PARAMS``.

Imports only what the fork needs (never papermill, altair, nbformat or jupyter_server), exits
if the sweep's parent process dies, and reports an exception as one ``LITHIFY_ERROR {json}``
line on stderr.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import threading
import time
import traceback


def _exit_with_parent(parent: int) -> None:
    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(70)  # the sweep's parent died: do not run on as an orphan
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True).start()


def resolve(ref: str):  # type: ignore[no-untyped-def]
    """The function named by 'module:qualname'."""
    module, _, name = ref.partition(":")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def main(argv: list[str]) -> int:
    ref, journal, branch, params = argv[0], argv[1], int(argv[2]), json.loads(argv[3])
    _exit_with_parent(os.getppid())
    try:
        resolve(ref)(journal, branch, params)
    except BaseException as e:  # noqa: BLE001 (reported to the parent, then exit 1)
        traceback.print_exc()
        tb = traceback.extract_tb(e.__traceback__)
        where = f"{tb[-1].filename}:{tb[-1].lineno}" if tb else ""
        sys.stderr.write("LITHIFY_ERROR " + json.dumps({"ename": type(e).__name__, "evalue": str(e)[:2000],
                                                        "where": where}) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
