"""Run many `lithify` command lines in this one process and report each as JSON (the fault
tests run one such batch per fault: as an unprivileged user, or under a file size limit).

usage: python cli_batch.py JOURNAL COMMANDS_JSON  ->  one JSON list on stdout
Each command is a list of arguments after `--db JOURNAL`; "read" commands also get the
journal's bytes (and its -wal's) hashed before and after."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import sys
import traceback


def digest(path: str) -> str:
    """The journal's bytes and its WAL's (a missing WAL and an empty one are the same bytes)."""
    h = hashlib.blake2b()
    for p in (path, path + "-wal"):
        try:
            with open(p, "rb") as f:  # this process holds no connection between commands
                h.update(f.read())
        except FileNotFoundError:
            pass
        h.update(b"|")
    return h.hexdigest()


def run(argv: list[str]) -> dict:
    from workbench.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    escaped = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:  # noqa: BLE001 (what the test looks for)
            escaped = traceback.format_exc()
            code = -1
    return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue(), "escaped": escaped}


def main() -> None:
    journal, commands = sys.argv[1], json.loads(sys.argv[2])
    results = []
    for cmd in commands:
        before = digest(journal)
        for as_json in (False, True):
            argv = ["--db", journal, *(["--json"] if as_json else []), *cmd["args"]]
            r = run(argv)
            r.update(
                args=cmd["args"],
                json=as_json,
                read=cmd["read"],
                unchanged=digest(journal) == before,
            )
            results.append(r)
            if not cmd["read"]:
                break  # a write command is run once
    sys.stdout.write(json.dumps(results) + "\n")


if __name__ == "__main__":
    os.environ.setdefault("LITHIFY_TIMEOUT", "0.5")
    main()
