"""Replicate SRC into DST in batches of 50 events (``clone``: as `lithify clone` does).
usage: replicator.py SRC DST [clone]"""

from __future__ import annotations

import sys

from workbench import replicate
from workbench.replication import clone


def main() -> None:
    copy = clone if sys.argv[3:] == ["clone"] else replicate
    report = copy(sys.argv[1], sys.argv[2], batch=50)
    print(f"done {report.events}", flush=True)


if __name__ == "__main__":
    main()
