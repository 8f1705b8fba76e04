"""The sidecar intent log: effects announced before they run, one write() each.

An effect's intent must be durable before its function is called (so that after kill -9,
``unknown_outcomes()`` can name the call that may have happened). Writing it as a line in
``<db>-intents`` costs one write() instead of a second SQLite commit per effect. Encrypted
journals keep intents in the database instead (``storage.TableIntents``).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable

_ascii_json: Callable[[str], str] = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]


class IntentLog:
    """Append-only log of effects announced before they run: ``<db>-intents`` beside a file.

    A line ``+ BRANCH KEYHASH KEY`` is written (one write(), so it survives kill -9; fsynced
    at the "fsync" level) before an effect's function is called, and ``- BRANCH KEYHASH``
    when the function raised. A committed effect needs no line: an intent whose key the
    branch has committed is resolved. ``compact`` rewrites the log without resolved lines,
    under an exclusive flock; every process with the log open holds a shared one.
    """

    COMPACT_BYTES = 1 << 20

    def __init__(self, db_path: str, durability: str) -> None:
        self.path = None if db_path == ":memory:" else db_path + "-intents"
        self.fsync = durability == "fsync"
        self._fd: int | None = None
        self._memory: list[str] = []
        self._attempts: dict[tuple[str, str], int] | None = None
        self._generation = 0  # bumped when compact() rewrites the log
        self.mark: tuple[int, int] | None = None  # (generation, where our last line ended)

    def _open(self) -> int:
        if self._fd is None:
            assert self.path is not None
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            # Held until close: appenders share the log, so each append is a single write()
            # rather than lock + write + unlock; ``compact`` needs every other holder gone.
            fcntl.flock(fd, fcntl.LOCK_SH)
            self._fd = fd
        return self._fd

    def _append(self, line: str) -> None:
        if self.path is None:
            self._memory.append(line)
            self.mark = (self._generation, len(self._memory))
            return
        fd = self._open()
        os.write(fd, line.encode("utf-8"))
        self.mark = (self._generation, os.lseek(fd, 0, os.SEEK_CUR))  # the end of our line (O_APPEND)
        if self.fsync:
            os.fsync(fd)

    def quiet_since(self, mark: tuple[int, int] | None) -> bool:
        """True if nothing was appended to the log after the line that left it at ``mark``
        (``self.mark`` right after an announcement). Every effect is announced here before it
        can be committed, so a quiet log means no one committed a new effect. (Other processes
        cannot rewrite the log while we hold it open; our own compact() changes the generation.)"""
        if mark is None or mark[0] != self._generation:
            return False
        if self.path is None:
            return len(self._memory) == mark[1]
        return self._fd is not None and os.fstat(self._fd).st_size == mark[1]

    def announce(self, branch: int, key_hash: bytes, key: str) -> int:
        """Record that an effect is about to run (durable before the call is made); returns
        which attempt this is (earlier announcements that never committed count)."""
        if self._attempts is None:
            self._attempts = {}
            for line in self._text().splitlines():
                parts = line.split(" ", 3)
                if len(parts) >= 3 and parts[0] == "+":
                    k = (parts[1], parts[2])
                    self._attempts[k] = self._attempts.get(k, 0) + 1
        k = (str(branch), key_hash.hex())
        n = self._attempts[k] = self._attempts.get(k, 0) + 1
        self._append(f"+ {k[0]} {k[1]} {_ascii_json(key)}\n")
        return n

    def withdraw(self, branch: int, key_hash: bytes) -> None:
        """Record that an announced effect raised, so it committed nothing."""
        self._append(f"- {branch} {key_hash.hex()}\n")

    def _text(self) -> str:
        if self.path is None:
            return "".join(self._memory)
        try:
            with open(self.path, encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    @staticmethod
    def _fold(text: str) -> dict[tuple[int, bytes], str]:
        open_: dict[tuple[int, bytes], str] = {}
        for line in text.splitlines():
            parts = line.split(" ", 3)
            if len(parts) < 3:
                continue  # a torn last line from a crash mid-write
            try:
                ident = (int(parts[1]), bytes.fromhex(parts[2]))
                if parts[0] == "+" and len(parts) == 4:
                    open_.pop(ident, None)
                    open_[ident] = json.loads(parts[3])
                elif parts[0] == "-":
                    open_.pop(ident, None)
            except ValueError:
                continue
        return open_

    def pending(self, branch: int | None = None) -> dict[tuple[int, bytes], str]:
        """Announced, not withdrawn intents (resolved or not), oldest first."""
        found = self._fold(self._text())
        return found if branch is None else {k: v for k, v in found.items() if k[0] == branch}

    def compact(
        self, still_open: Callable[[dict[tuple[int, bytes], str]], dict[tuple[int, bytes], str]]
    ) -> bool:
        """Rewrite the log keeping only what ``still_open(announced)`` returns; False (log
        untouched) while another process has it open.

        Runs under the exclusive lock, so no intent is appended while the log is rewritten.
        """

        def body(items: dict[tuple[int, bytes], str]) -> str:
            return "".join(f"+ {b} {h.hex()} {json.dumps(k)}\n" for (b, h), k in items.items())

        self._generation += 1
        if self.path is None:
            self._memory = [body(still_open(self._fold(self._text())))]
            return True
        fd = self._open()
        try:  # our shared lock becomes exclusive only if no other process holds the log open
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        try:
            keep = still_open(self._fold(self._text()))
            os.ftruncate(fd, 0)
            os.write(fd, body(keep).encode("utf-8"))
            os.fsync(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_SH)
        return True

    def size(self) -> int:
        if self.path is None:
            return sum(len(x) for x in self._memory)
        try:
            return os.path.getsize(self.path)
        except FileNotFoundError:
            return 0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
