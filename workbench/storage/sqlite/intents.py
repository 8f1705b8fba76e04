"""Where the SQLite backend announces effects before they run: the sidecar intent log
(``IntentLog``, one write() each) or, for an encrypted file, a table inside it (``TableIntents``).

An effect's intent must be durable before its function is called (so that after kill -9,
``unknown_outcomes()`` can name the call that may have happened). Writing it as a line in
``<db>-intents`` costs one write() instead of a second SQLite commit per effect. Encrypted
journals keep intents in the database instead (``TableIntents``).

Lines (each one write() with O_APPEND, so lines of several processes never interleave):

    + BRANCH KEYHASH ID "KEY"   announced, about to run
    - BRANCH KEYHASH ID         withdrawn: the function raised, nothing happened to commit
    = BRANCH KEYHASH ID         settled: it ran but its result could not be committed
                                (still an unknown outcome, no longer running)

A committed effect needs no line: the database shows it. ``ID`` is ``TOKEN:N``, the Nth
announcement of the process ``TOKEN`` (``announcements``), which tells whether the
announcing process still lives: a second process announcing the same effect while the first
runs it is refused (``EffectInFlight``) instead of running it twice, and an announcement of a
dead process is an unknown outcome, not a block. Old logs (lines without an id) still read.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import threading
from collections.abc import Callable
from typing import Any

from ...errors import WorkbenchError, os_error
from ..announcements import (
    announcement_live,
    end_announcement,
    new_announcement,
    process_token,
)
from ..common import now_ms
from .connection import Connection

_ascii_json: Callable[[str], str] = json.encoder.encode_basestring_ascii


class IntentLog:
    """Append-only log of effects announced before they run: ``<db>-intents`` beside a file.

    A line is written (one write(), so it survives kill -9; fsynced at the "fsync" level)
    before an effect's function is called. ``compact`` rewrites the log without resolved lines
    into a new file renamed over the old one (a kill at any point leaves one whole log), under
    an exclusive flock; every process with the log open holds a shared one, and checks after
    locking that it holds the file the path names (not one a compaction replaced).
    """

    COMPACT_BYTES = 1 << 20

    def __init__(self, db_path: str, durability: str, readonly: bool = False) -> None:
        self.path = None if db_path == ":memory:" else db_path + "-intents"
        # This process's running effects are keyed by the log's real path: two opens of one
        # journal under two spellings (``dir/j.db``, ``dir/./j.db``) share them.
        self._key = None if self.path is None else os.path.realpath(self.path)
        self.fsync = durability == "fsync"
        self.readonly = readonly
        self._fd: int | None = None
        self._memory: list[str] = []
        self._memory_size = 0
        self._attempts: dict[tuple[int, bytes], int] = {}
        # (branch, key hash) -> ids other processes announced and did not end (a committed
        # effect writes no end line: the database shows it)
        self._unended: dict[tuple[int, bytes], set[str]] = {}
        self._seen = 0  # bytes of the log folded into _attempts and _unended
        self._generation = 0  # bumped when compact() rewrites the log
        self._lock = threading.Lock()
        # The log size at which the next compaction is tried (see ``due``).
        self._compact_at = self.COMPACT_BYTES
        self.mark: tuple[int, int] | None = None  # (generation, where our last line ended)
        self.start_mark: tuple[int, int] | None = None  # (generation, where our last line started)

    def _fail(self, err: OSError, doing: str) -> WorkbenchError:
        return os_error(err, self.path[: -len("-intents")] if self.path else ":memory:", doing)

    def _open(self) -> int:
        if self._fd is None:
            assert self.path is not None
            if self.readonly:
                raise self._fail(OSError(errno.EROFS, "opened read-only"), "announcing an effect")
            while True:
                fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
                # Held until close: appenders share the log, so each append is a single write()
                # rather than lock + write + unlock; ``compact`` needs every other holder gone.
                fcntl.flock(fd, fcntl.LOCK_SH)
                try:
                    same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
                except FileNotFoundError:
                    same = False
                if same:
                    break
                os.close(fd)  # a compaction replaced the file while we waited for the lock
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                os.write(fd, b"\n")  # end a line torn by a crash, so ours starts clean
            self._fd = fd
            self._reset()  # read the log afresh from this file
        return self._fd

    def _append(self, line: str) -> int:
        """Append one line; returns where it starts."""
        if self.path is None:
            start = self._memory_size
            self._memory.append(line)
            self._memory_size += len(line)  # lines are ASCII: characters are bytes
            self.start_mark = (self._generation, start)
            self.mark = (self._generation, self._memory_size)
            return start
        data = line.encode("utf-8")
        try:
            fd = self._open()
            os.write(fd, data)
            end = os.lseek(fd, 0, os.SEEK_CUR)  # the end of our line (O_APPEND)
            if self.fsync:
                os.fsync(fd)
        except OSError as e:
            raise self._fail(e, "announcing an effect") from None
        self.start_mark = (self._generation, end - len(data))
        self.mark = (self._generation, end)
        return end - len(data)

    def announce(self, branch: int, key_hash: bytes, key: str) -> tuple[int, str, str | None]:
        """Record that an effect is about to run (durable before the call is made).

        Returns (which attempt this is, counting earlier announcements that never committed;
        this announcement's id; the id of an earlier announcement of the same effect that may
        still be running, in this process or another live one, else None). The caller ends
        this announcement with ``finished``, ``withdraw`` or ``settle``."""
        running = (self._key, branch, key_hash)
        ann, holder = new_announcement(running)
        try:
            with self._lock:
                start = self._append(f"+ {branch} {key_hash.hex()} {ann} {_ascii_json(key)}\n")
                if start > self._seen:
                    self._fold_until(start)
                k = (branch, key_hash)
                ids = self._unended.get(k)
                if holder is None and ids:
                    for other in list(ids):
                        if announcement_live(other):
                            holder = other
                            break
                        ids.discard(other)  # a dead process's announcement: an unknown outcome
                n = self._attempts[k] = self._attempts.get(k, 0) + 1
                if self.mark is not None:
                    self._seen = self.mark[1]
        except BaseException:
            end_announcement(running, ann)
            raise
        return n, ann, holder

    def _fold_until(self, end: int) -> None:
        """Fold the lines appended before ``end`` (our own line's start) that this log has not
        read yet: other processes' (and other Journals') announcements and their ends."""
        if end <= self._seen:
            return
        text = self._read(self._seen, end)
        self._seen = end
        me = process_token()
        for line in text.splitlines():
            parts = line.split(" ", 4)
            if len(parts) < 3 or parts[0] not in ("+", "-", "="):
                continue
            try:
                k = (int(parts[1]), bytes.fromhex(parts[2]))
            except ValueError:
                continue
            ann = parts[3] if len(parts) >= 4 and not parts[3].startswith('"') else None
            if parts[0] == "+":
                self._attempts[k] = self._attempts.get(k, 0) + 1
                if ann is not None and not ann.startswith(me + ":"):  # ours are registered
                    self._unended.setdefault(k, set()).add(ann)
            elif ann is None:
                self._unended.pop(k, None)  # an old line: it ended every announcement
            else:
                self._unended.get(k, set()).discard(ann)

    def _read(self, start: int, end: int) -> str:
        if self.path is None:
            return "".join(self._memory).encode("utf-8")[start:end].decode("utf-8", "replace")
        fd = self._fd if self._fd is not None else None
        if fd is None:
            return self._text()[start:end]
        try:
            return os.pread(fd, end - start, start).decode("utf-8", "replace")
        except OSError as e:
            raise self._fail(e, "reading the intent log") from None

    def _ended(self, branch: int, key_hash: bytes, ann: str, op: str) -> None:
        end_announcement((self._key, branch, key_hash), ann)
        if op:
            with self._lock:
                self._append(f"{op} {branch} {key_hash.hex()} {ann}\n")

    def finished(self, branch: int, key_hash: bytes, ann: str) -> None:
        """The announced effect committed (the database shows it; no line needed)."""
        end_announcement((self._key, branch, key_hash), ann)

    def withdraw(self, branch: int, key_hash: bytes, ann: str) -> None:
        """Record that an announced effect committed nothing and has no outcome (its function
        raised, or it was never called)."""
        self._ended(branch, key_hash, ann, "-")

    def settle(self, branch: int, key_hash: bytes, ann: str) -> None:
        """Record that an announced effect ran but its result was not committed: an unknown
        outcome that no process is running any more."""
        self._ended(branch, key_hash, ann, "=")

    def _size(self) -> int:
        if self.path is None:
            return self._memory_size
        if self._fd is not None:
            return os.fstat(self._fd).st_size
        try:
            return os.path.getsize(self.path)
        except OSError:
            return 0

    def _text(self) -> str:
        if self.path is None:
            return "".join(self._memory)
        try:
            with open(self.path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""
        except OSError as e:
            raise self._fail(e, "reading the intent log") from None

    @staticmethod
    def _fold(
        text: str, unended: dict[tuple[int, bytes], set[str]] | None = None
    ) -> dict[tuple[int, bytes], str]:
        """{(branch, key hash): key} of announcements not withdrawn, oldest first; ``unended``
        (when given) receives the ids of announcements neither withdrawn nor settled: those
        whose process, while it lives, may still be running the effect."""
        keys: dict[tuple[int, bytes], str] = {}
        ids: dict[tuple[int, bytes], set[str]] = {}
        open_ = {} if unended is None else unended
        for n, line in enumerate(text.splitlines()):
            parts = line.split(" ", 3)
            if len(parts) < 3 or parts[0] not in ("+", "-", "="):
                continue  # a torn line from a crash mid-write, or garbage
            try:
                ident = (int(parts[1]), bytes.fromhex(parts[2]))
            except ValueError:
                continue
            rest = parts[3] if len(parts) == 4 else ""
            if parts[0] == "+":
                ann, key_text = (
                    (f"line{n}", rest) if rest.startswith('"') else rest.partition(" ")[::2]
                )
                try:
                    key = json.loads(key_text)
                except ValueError:
                    continue
                if isinstance(key, str):
                    keys.pop(ident, None)
                    keys[ident] = key
                    ids.setdefault(ident, set()).add(ann)
                    if ":" in ann:
                        open_.setdefault(ident, set()).add(ann)
            elif parts[0] == "-":
                if rest:
                    ids.get(ident, set()).discard(rest)
                    open_.get(ident, set()).discard(rest)
                else:
                    ids.pop(ident, None)  # an old line: it withdrew every announcement
                    open_.pop(ident, None)
                if not ids.get(ident):
                    keys.pop(ident, None)
            else:  # "=": settled, no longer running (its outcome stays unknown)
                open_.get(ident, set()).discard(rest)
        return keys

    def due(self) -> bool:
        """Whether the log has grown enough to try a compaction: past ``COMPACT_BYTES``, then
        past twice what the last compaction kept, or ``COMPACT_BYTES`` more than when another
        process's hold on the log refused one. Cheap enough to ask before every effect."""
        if self.readonly:
            return False
        mark = self.mark
        end = mark[1] if mark is not None and mark[0] == self._generation else self._size()
        return end >= self._compact_at

    def pending(self, branch: int | None = None) -> dict[tuple[int, bytes], str]:
        """Announced, not withdrawn intents (resolved or not), oldest first."""
        found = self._fold(self._text())
        return found if branch is None else {k: v for k, v in found.items() if k[0] == branch}

    def compact(
        self, still_open: Callable[[dict[tuple[int, bytes], str]], dict[tuple[int, bytes], str]]
    ) -> bool:
        """Rewrite the log keeping only what ``still_open(announced)`` returns; False (log
        untouched) while another process has it open or the log is read-only.

        The new log is written beside the old one, fsynced and renamed over it, so a kill at
        any moment leaves either the old log or the new one, whole."""

        def body(items: dict[tuple[int, bytes], str], unended: dict[Any, set[str]]) -> str:
            # An announcement that may still be running keeps its id (whose process tells
            # whether it is live); the others keep only their key: unknown outcomes.
            lines = []
            for (b, h), k in items.items():
                for ann in sorted(unended.get((b, h)) or {"-"}):
                    lines.append(f"+ {b} {h.hex()} {ann} {json.dumps(k)}\n")
            return "".join(lines)

        if self.readonly:
            return False
        with self._lock:
            try:
                done = self._compact(body, still_open)
            except BaseException:
                self._compact_at = self._size() + self.COMPACT_BYTES
                raise
            self._compact_at = (
                max(self.COMPACT_BYTES, 2 * self._size())
                if done
                else self._size() + self.COMPACT_BYTES
            )
            return done

    def _compact(
        self,
        body: Callable[[dict[tuple[int, bytes], str], dict[Any, set[str]]], str],
        still_open: Callable[[dict[tuple[int, bytes], str]], dict[tuple[int, bytes], str]],
    ) -> bool:
        unended: dict[tuple[int, bytes], set[str]] = {}
        if self.path is None:
            self._generation += 1
            self._memory = [body(still_open(self._fold(self._text(), unended)), unended)]
            self._memory_size = len(self._memory[0])
            self._reset()
            return True
        try:
            fd = self._open()
            # our shared lock becomes exclusive only if no other process holds the log open
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._relock(fd)
                return False
            tmp = f"{self.path}.compact-{os.getpid()}"
            try:
                keep = still_open(self._fold(self._text(), unended))
                out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                try:
                    os.write(out, body(keep, unended).encode("utf-8"))
                    os.fsync(out)
                finally:
                    os.close(out)
                os.replace(tmp, self.path)
                _fsync_dir(os.path.dirname(os.path.abspath(self.path)))
            except BaseException:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                self._relock(fd)
                raise
            # Our descriptor (and lock) belong to the replaced file: let go of both.
            self._generation += 1
            os.close(fd)
            self._fd = None
            self._reset()
            return True
        except OSError as e:
            raise self._fail(e, "compacting the intent log") from None

    def _relock(self, fd: int) -> None:
        """Hold the log shared again after a refused or failed compaction. Linux drops a flock
        lock before converting it, so the refusal left none: meanwhile another process may have
        compacted the log, and this descriptor would append to the file it replaced (lines no
        one reads). Then it is closed, and the next append opens the log afresh."""
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            same = os.fstat(fd).st_ino == os.stat(self.path or "").st_ino
        except OSError:
            same = False
        if not same:
            os.close(fd)
            self._fd = None
            self._generation += 1  # marks into the replaced file say nothing about the new one

    def _reset(self) -> None:
        self._seen = 0
        self._attempts.clear()
        self._unended.clear()

    def size(self) -> int:
        return self._size()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class TableIntents:
    """Effect intents kept in the (encrypted) database itself: one commit per announcement,
    slower than the sidecar log but leaking nothing. Same contract as ``IntentLog``."""

    COMPACT_BYTES = 1 << 20

    def __init__(self, storage: Connection) -> None:
        self.storage = storage
        self._since = 0  # announcements since this process last compacted

    def due(self) -> bool:
        """Whether this process announced enough effects since its last compaction to try one
        (a row per announced effect stays until a compaction drops the committed ones)."""
        return not self.storage.readonly and self._since * 256 >= self.COMPACT_BYTES

    def announce(self, branch: int, key_hash: bytes, key: str) -> tuple[int, str, str | None]:
        s = self.storage
        running = (os.path.realpath(s.path) + "#intents", branch, key_hash)
        ann, holder = new_announcement(running)
        if holder is not None:
            return 0, ann, holder
        self._since += 1
        try:
            with s._guard, s.atomic():
                row = s.conn.execute(
                    "SELECT attempts, pid FROM intents WHERE branch = ? AND key_hash = ?",
                    (branch, key_hash),
                ).fetchone()
                if row is not None and row[1] and announcement_live(row[1]):
                    end_announcement(running, ann)
                    return int(row[0]) + 1, ann, str(row[1])
                n = (row[0] if row else 0) + 1
                s.conn.execute(
                    "INSERT OR REPLACE INTO intents VALUES (?, ?, ?, ?, ?, ?)",
                    (branch, key_hash, key, now_ms(), n, ann),
                )
                return n, ann, None
        except BaseException:
            end_announcement(running, ann)
            raise

    def _end(self, branch: int, key_hash: bytes, ann: str, sql: str) -> None:
        end_announcement((os.path.realpath(self.storage.path) + "#intents", branch, key_hash), ann)
        if sql:
            with self.storage._guard:
                self.storage.conn.execute(sql, (branch, key_hash, ann))

    def finished(self, branch: int, key_hash: bytes, ann: str) -> None:
        self._end(branch, key_hash, ann, "")

    def withdraw(self, branch: int, key_hash: bytes, ann: str) -> None:
        # An earlier attempt's outcome stays unknown (attempts > 1): only this one is taken back.
        self._end(
            branch,
            key_hash,
            ann,
            "UPDATE intents SET pid = NULL WHERE branch = ? AND key_hash = ? AND pid = ? "
            "AND attempts > 1",
        )
        self._end(
            branch,
            key_hash,
            ann,
            "DELETE FROM intents WHERE branch = ? AND key_hash = ? AND pid = ? AND attempts = 1",
        )

    def settle(self, branch: int, key_hash: bytes, ann: str) -> None:
        self._end(
            branch,
            key_hash,
            ann,
            "UPDATE intents SET pid = NULL WHERE branch = ? AND key_hash = ? AND pid = ?",
        )

    def pending(self, branch: int | None = None) -> dict[tuple[int, bytes], str]:
        with self.storage._guard:
            rows = self.storage.conn.execute(
                "SELECT branch, key_hash, key FROM intents ORDER BY started"
            ).fetchall()
        return {(b, h): k for b, h, k in rows if branch is None or b == branch}

    def compact(
        self, still_open: Callable[[dict[tuple[int, bytes], str]], dict[tuple[int, bytes], str]]
    ) -> bool:
        """Delete the rows of announcements ``still_open`` does not keep (False: read-only)."""
        if self.storage.readonly:
            return False
        self._since = 0
        keep = still_open(self.pending())
        with self.storage._guard:
            for b, h in self.pending():
                if (b, h) not in keep:
                    self.storage.conn.execute(
                        "DELETE FROM intents WHERE branch = ? AND key_hash = ?", (b, h)
                    )
        return True

    def size(self) -> int:
        with self.storage._guard:
            return (
                int(self.storage.conn.execute("SELECT count(*) FROM intents").fetchone()[0]) * 256
            )

    def close(self) -> None:
        pass
