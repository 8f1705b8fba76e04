"""Replicate SRC into DST in batches of 50 events. usage: replicator.py SRC DST"""

from __future__ import annotations

import sys

from workbench import replicate


def main() -> None:
    report = replicate(sys.argv[1], sys.argv[2], batch=50)
    print(f"done {report.events}", flush=True)


if __name__ == "__main__":
    main()
