"""The process runner's worker: ``python -m workbench.sweep.worker FN JOURNAL BRANCH PARAMS``
runs one fork in a fresh process and exits (the pool's workers are ``workbench.poolworker``).
Imports only what the fork needs (never papermill, altair, nbformat or jupyter_server), exits
if the sweep's parent process dies, and reports an exception as one ``LITHIFY_ERROR {json}``
line on stderr. What a fork uses inside, whatever runs it, is ``workbench.forkrun``.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

from ..forkrun import (
    PARENT_ENV,
    PROGRESS_ENV,
    call_fork,
    error_doc,
    exit_with_parent,
    orphaned,
    read_progress,
    report_progress,
)
from ..plugins import import_ref

__all__ = ["PARENT_ENV", "PROGRESS_ENV", "call_fork", "main", "read_progress", "report_progress"]


def main(argv: list[str]) -> int:
    # The pid the runner gave, not our parent's now: a coordinator that died while this
    # interpreter started would leave us reparented, and getppid() would be someone else.
    parent = int(os.environ.get(PARENT_ENV) or os.getppid())
    exit_with_parent(parent)
    ref, journal, branch, params = argv[0], argv[1], int(argv[2]), json.loads(argv[3])
    try:
        fn = import_ref(ref)  # may take long (a heavy module): the parent may die meanwhile
        if orphaned(parent):
            return 70  # before the first write
        call_fork(fn, journal, branch, params)
    except BaseException as e:  # noqa: BLE001 (reported to the parent, then exit 1)
        traceback.print_exc()
        sys.stderr.write("LITHIFY_ERROR " + json.dumps(error_doc(e)) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
