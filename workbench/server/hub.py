"""The server's state: the journals it has open (by absolute path or URL), the sweeps it
started, and the threads its handlers run the library on, so a large matrix or chart never
stalls Jupyter's event loop (and every kernel websocket with it)."""

from __future__ import annotations

import asyncio
import os
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from .. import bundled
from ..errors import InvalidValue, NotAJournal, NotFound
from ..journal import Journal
from ..matrix import BranchTable
from ..storage import is_journal_file, is_url

SKIP_DIRS = {".git", "node_modules", ".venv", "__pycache__", ".ipynb_checkpoints"}
MAX_DEPTH = 12  # folders below the server root searched for journals
MAX_FOLDERS = 20_000  # folders looked into, at most (a root that is a home folder stays quick)
OPEN_ENV = "LITHIFY_OPEN"  # journals `lithify lab PATH.db` asks the sidebar to open
FRESH_S = 0.5  # a branch table this young is served without asking whether the journal moved
THREADS = 4  # library calls at once; more requests queue (the journal serializes writes anyway)

T = TypeVar("T")


def _inode(path: str) -> tuple[int, int, int] | None:
    """A file's device, inode and ctime (None: no file)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_ctime_ns


def _created(path: str) -> str | None:
    """The creation time a journal file records in its meta table (None: it cannot be read
    without a key, or is no journal)."""
    from ..storage.sqlite.files import meta_value

    return meta_value(path, "created", timeout=1.0)


def identity(journal: Journal) -> str:
    """What tells one journal from another made later at the same path or URL: its creation
    time (every journal records it), and for a file its device and inode. The server sends it
    with every answer about a journal (``Lithify-Journal``), so a client that has shown one
    notices another at the same name at its next request."""
    created = journal.storage.meta.get("created", "")
    if is_url(journal.location):
        return created
    ino = _inode(journal.location)
    return f"{created}.{ino[0]}.{ino[1]}" if ino else created


class Hub:
    """Open journals and running sweeps of this server, by absolute path."""

    def __init__(self, root: str) -> None:
        self.root = Path(root).resolve()
        self.journals: dict[str, Journal] = {}
        self.inodes: dict[str, tuple[int, int, int] | None] = {}
        self.sweeps: dict[tuple[str, int], Any] = {}
        # per journal: (its version, the table, the last branch read, when it was checked, the
        # journal it was read from: another journal at the same path reads its own)
        self.tables: dict[
            str, tuple[tuple[int, int], BranchTable, int, float, weakref.ref[Journal]]
        ] = {}
        self.newest: dict[str, int] = {}  # per journal: the newest branch id seen (version)
        self.lock = threading.RLock()
        self.pool = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="lithify-api")
        # what the sidebar opens when this server's page first loads (`lithify lab PATH.db`),
        # and this server's start (a page opens them once per server)
        self.open = [p for p in os.environ.get(OPEN_ENV, "").splitlines() if p]
        self.session = str(time.time_ns())

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` on one of the hub's threads, awaited from the event loop."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn)

    def path(self, rel: str | None) -> Path:
        """A file below the root by its relative path (PermissionError outside it)."""
        if not rel:
            raise InvalidValue("pass ?journal=PATH (relative to the server root)")
        p = (self.root / rel).resolve()
        if p != self.root and self.root not in p.parents:
            raise PermissionError(f"{rel} is outside the server root")
        if not p.is_file():
            raise NotFound(f"no file {rel} under the server root")
        return p

    def relative(self, path: str | None) -> str | None:
        """A path as the file browser names it (relative to the root), if it lies below it."""
        if not path:
            return None
        try:
            return Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None

    def notebook(self, rel: str) -> Path:
        """A template: a notebook under the server root, else a bundled template by name."""
        if "/" not in rel and not (self.root / rel).is_file():
            return bundled.template(rel)
        return self.path(rel)

    def notebook_name(self, path: str | None) -> str | None:
        """How a form names a template: its path below the root, or a bundled one's name."""
        if path is None:
            return None
        rel = self.relative(path)
        if rel is not None:
            return rel
        p = Path(path)
        try:
            if p.resolve() == bundled.template(p.stem).resolve():
                return p.stem
        except NotFound:
            pass
        return str(p)

    def journal(self, rel: str | None) -> Journal:
        """The open journal at ``rel`` (a path below the root, or a PostgreSQL URL); a file
        deleted, or deleted and made again, is closed and reopened, never served stale."""
        if rel and is_url(rel):  # a PostgreSQL journal: the server is its own root
            with self.lock:
                j = self.journals.get(rel)
                if j is None:
                    j = self.journals[rel] = Journal.open(rel, create=False)
                return j
        with self.lock:
            key = str((self.root / rel).resolve()) if rel else ""
            j = self.journals.get(key)
            if j is not None and not self._same(key, j):
                self.journals.pop(key, None)
                self.inodes.pop(key, None)
                j.close()
                j = None
            p = self.path(rel)
            if j is None:
                if not is_journal_file(key):
                    raise NotAJournal(f"{rel} is not a lithify journal")
                j = Journal.open(p)  # the State class comes from the journal's agent plugin
                self.journals[key] = j
                self.inodes[key] = _inode(key)
            return j

    def _same(self, key: str, j: Journal) -> bool:
        """Whether the file at ``key`` is still the journal ``j`` opened: the same inode, and
        when the file changed since (a checkpoint, or another journal written over it in
        place) the same creation time in its meta table."""
        was, now = self.inodes.get(key), _inode(key)
        if was is None or now is None or was[:2] != now[:2]:
            return False  # deleted, or deleted and made again
        if was != now:
            created = _created(key)
            if created is not None and created != j.storage.meta.get("created"):
                return False
            self.inodes[key] = now
        return True

    def table(self, journal: Journal) -> BranchTable:
        """The journal's ``branch_table`` as it is now, read again only when the journal
        changed (an event, a branch or a run's status), so the results routes and the filters
        of one page share it (10^4 branches take 0.2 s to read, a filter over them 3 ms)."""
        from ..matrix import branch_table

        with self.lock:
            kept = self.tables.get(journal.location)
        if kept is not None and kept[4]() is not journal:
            kept = None  # read from the journal that was at this path before
        now = time.monotonic()
        end = journal.end()  # one indexed read: an event since is never missed
        if kept is not None and now - kept[3] < FRESH_S and kept[0][0] == end:
            return kept[1]  # the requests of one page view, at once: checked a moment ago
        runs = hash(tuple((r.branch, r.status) for r in journal.runs()))
        version = (end, runs)
        if kept is not None and kept[0] == version:
            if not journal.storage.branch_rows(since_id=kept[2]):
                with self.lock:  # no event, no new branch, no run changed
                    self.tables[journal.location] = (*kept[:3], now, kept[4])
                return kept[1]
        table = branch_table(journal)
        last = int(table.frame["branch"].max()) if table.frame.height else -1  # type: ignore[arg-type]
        with self.lock:
            self.tables[journal.location] = (version, table, last, now, weakref.ref(journal))
        return table

    def version(self, journal: Journal) -> str:
        """What changes whenever anything a view shows does: the tail's end (every event),
        the run records (statuses, times, errors), the newest branch (a fork is a row, not an
        event) and which sweeps a coordinator drives (``sweep.watch``). A client that has
        drawn a version asks for it before reading more, and reads nothing else while it
        stays the same (an idle page costs one cheap call)."""
        import json

        from ..sweep import watch

        runs = hash(
            (
                tuple((r.branch, r.status, r.finished, r.error) for r in journal.runs()),
                # the sweeps a coordinator drives now: one that stops beating changes it
                tuple(
                    row.id
                    for row in journal.storage.sweep_rows()
                    if row.how and watch.driven(json.loads(row.how))
                ),
            )
        )
        with self.lock:
            last = self.newest.get(journal.location, -1)
        fresh = journal.storage.branch_rows(since_id=last)
        if fresh:
            last = max(r.id for r in fresh)
            with self.lock:
                self.newest[journal.location] = last
        return f"{journal.end()}.{last}.{runs & 0xFFFFFFFFFFFF:x}.{identity(journal)}"

    def warm(self) -> None:
        """Import what the first chart needs (altair, the agents' plugins) on one of the hub's
        threads at start, so that chart is not the one to wait for them (~2 s)."""

        def imports() -> None:
            from .. import charts, plugins

            charts.spec(charts.metric_vs_param(_tiny(), x="x", y="y"))
            plugins.agents()

        self.pool.submit(imports)

    def sweep(self, journal: Journal, sweep_id: int) -> Any:
        """The handle of a sweep this server started, if any."""
        with self.lock:
            return self.sweeps.get((journal.path, sweep_id))

    def started(self, journal: Journal, handle: Any) -> None:
        """Remember a sweep this server started (to cancel it, and show its progress)."""
        with self.lock:
            self.sweeps[(journal.path, handle.sweep_id)] = handle

    def list(self) -> list[dict[str, Any]]:
        """Journal files below the root (``MAX_DEPTH`` folders deep, hidden folders and
        ``SKIP_DIRS`` skipped, every other name searched alike; ``MAX_FOLDERS`` at most)."""
        found = []
        for visited, (dirpath, dirnames, filenames) in enumerate(os.walk(self.root)):
            if visited >= MAX_FOLDERS:
                break
            depth = len(Path(dirpath).relative_to(self.root).parts)
            dirnames[:] = [
                d
                for d in dirnames
                if d not in SKIP_DIRS and not d.startswith(".") and depth < MAX_DEPTH
            ]
            for name in sorted(filenames):
                if name.endswith(".db") and is_journal_file(os.path.join(dirpath, name)):
                    full = Path(dirpath) / name
                    found.append(
                        {
                            "path": full.relative_to(self.root).as_posix(),
                            "bytes": full.stat().st_size,
                        }
                    )
        return sorted(found, key=lambda d: d["path"])

    def close(self, wait: float = 20.0) -> None:
        """Cancel the sweeps this server runs (waiting up to ``wait`` seconds for their kernels
        and workers to stop) and close its journals."""
        with self.lock:
            handles = list(self.sweeps.values())
            self.sweeps.clear()
        for h in handles:
            h.cancel()
        deadline = time.monotonic() + wait
        for h in handles:
            h.join(max(0.0, deadline - time.monotonic()))
        self.pool.shutdown(wait=True, cancel_futures=True)
        with self.lock:
            for j in self.journals.values():
                j.close()
            self.journals.clear()


def _tiny() -> Any:
    """A two-branch matrix to draw once."""
    import polars as pl

    return pl.DataFrame({"branch": [1, 2], "x": [1, 2], "y": [0.5, 1.0]})
