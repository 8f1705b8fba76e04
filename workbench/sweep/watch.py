"""A sweep's coordinator, as other processes see it through the journal.

While a ``SweepHandle``, a ``StudyHandle`` or an evolution drives a sweep, its ``Watch`` beats
in the sweep's recorded ``how`` every ``BEAT_S`` seconds (``driver``: host, pid, when it
started and its last beat) and reads there whether a cancel was asked for since it started
(``cancel``: when, by whom): if so, it cancels its sweep as ``handle.cancel()`` does. So any process
that opens the journal (the Lab's server, another terminal) can tell a sweep that is being run
(``driven``) from one whose coordinator ended or died (no beat, or a beat older than
``STALE_S``: a resume finishes it), and cancel one it holds no handle of (``request_cancel``).

Every read-modify-write of ``how`` here holds the journal's ``sweep-how`` lock (a file lock
beside a SQLite journal, an advisory lock on PostgreSQL), so a beat never loses a request.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import Conflict, NotFound
from ..events import canonical

if TYPE_CHECKING:
    from ..events import SweepInfo
    from ..port import JournalPort

BEAT_S = 2.0  # how often a coordinator says it is alive (and reads whether to cancel)
STALE_S = 20.0  # a beat older than this: the coordinator died (killed, its machine gone)
DRIVER, CANCEL = "driver", "cancel"  # the keys of ``how`` this module writes
LOCK = "sweep-how"
_NOTHING = object()  # not read yet


def _now_ms() -> int:
    return int(time.time() * 1000)


def recorded(journal: JournalPort, sweep_id: int) -> dict[str, Any]:
    """The sweep's ``how`` as the journal has it now (NotFound for no such sweep)."""
    for row in journal.storage.sweep_rows():
        if row.id == sweep_id:
            doc = json.loads(row.how) if row.how else {}
            return doc if isinstance(doc, dict) else {}
    raise NotFound(f"there is no sweep {sweep_id}; list them with `lithify sweeps`")


def _write(journal: JournalPort, sweep_id: int, how: Mapping[str, Any]) -> None:
    journal.storage.set_sweep_how(sweep_id, canonical(dict(how), "how"))


def driven(how: Mapping[str, Any], now_ms: int | None = None) -> bool:
    """Whether a coordinator drives the sweep whose ``how`` this is: it beat within
    ``STALE_S``, and, on this machine, its process is alive (one killed a moment ago is seen
    dead at once: a resume need not wait for its beat to go stale)."""
    driver = how.get(DRIVER)
    if not isinstance(driver, dict) or not isinstance(driver.get("beat"), int):
        return False
    now = _now_ms() if now_ms is None else now_ms
    if now - int(driver["beat"]) >= STALE_S * 1000:
        return False
    pid = driver.get("pid")
    if driver.get("host") == socket.gethostname() and isinstance(pid, int):
        return _alive(pid)
    return True


def _alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine runs (a zombie, killed and not yet reaped by
    its parent, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's: it exists
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no /proc here: it answered the signal


def request_cancel(journal: JournalPort, sweep_id: int) -> bool:
    """Ask the coordinator of a sweep to cancel it (it does within ``BEAT_S``: its running
    forks stopped, the rest skipped, as ``cancel()`` on its handle). False when no
    coordinator drives it: nothing runs to cancel."""
    with journal.storage.exclusive(LOCK):
        how = recorded(journal, sweep_id)
        if not driven(how):
            return False
        how[CANCEL] = {  # a new document per request: the coordinator compares documents
            "at": _now_ms(),
            "by": f"{socket.gethostname()}:{os.getpid()}",
            "id": uuid.uuid4().hex,
        }
        _write(journal, sweep_id, how)
    return True


def check_idle(journal: JournalPort, sweep_id: int) -> None:
    """Conflict when another coordinator runs this sweep now: two would run its forks twice."""
    how = recorded(journal, sweep_id)
    if driven(how):
        who = how[DRIVER]
        raise Conflict(
            f"sweep {sweep_id} is running in another process (pid {who.get('pid')} on "
            f"{who.get('host')}); cancel it (the Lab's Cancel) or wait for it to end"
        )


ENDED = ("finished", "pruned", "failed")  # a study's trials that a resume leaves as they are


def resumable(info: SweepInfo, statuses: Mapping[int, str]) -> str | None:
    """Why ``resume`` has nothing to do for this sweep (None: it has), given each fork's run
    status: a grid runs again every fork that did not finish; a study its trials that did not
    end, then new ones until it has its ``forks``; an evolution resumes only as one (``lithify
    evolve --resume``)."""
    kind = info.spec.get("kind", "grid")
    if kind == "evolve":
        return f"an evolution resumes as one: lithify evolve --resume {info.id}"
    mine = [statuses.get(b, "pending") for b in info.branches]
    if kind == "optimize":
        planned = info.spec.get("forks")
        if isinstance(planned, int) and len(mine) < planned:
            return None
        if any(s not in ENDED for s in mine):
            return None
        return f"every trial of study {info.id} has ended"
    if any(s != "finished" for s in mine):
        return None
    return f"every fork of sweep {info.id} finished"


class Watch:
    """What a coordinator runs beside its sweep: a beat in the journal every ``BEAT_S``, and
    ``cancel()`` when a cancel is asked for there. ``stop()`` when the sweep has ended."""

    def __init__(self, journal: JournalPort, sweep_id: int, cancel: Callable[[], None]) -> None:
        self.journal = journal
        self.sweep_id = sweep_id
        self.since = _now_ms()
        self.cancelled = False
        self._before: Any = _NOTHING  # the cancel request there was when it started: not its
        self._cancel = cancel
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._done = False
        self.beat()  # driven from the first moment, not BEAT_S later
        self._thread = threading.Thread(
            target=self._run, name=f"sweep-{sweep_id}-watch", daemon=True
        )
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(BEAT_S):
            try:
                self.beat()
            except Exception:  # noqa: BLE001 (a busy or closed journal: the next beat tries)
                continue

    def beat(self) -> None:
        """Say this coordinator is alive; cancel its sweep if that was asked for since it
        started."""
        with self._lock:
            if self._done:
                return
            with self.journal.storage.exclusive(LOCK):
                how = recorded(self.journal, self.sweep_id)
                asked = how.get(CANCEL)
                if self._before is _NOTHING:
                    self._before = asked  # a request made before it started is not for it
                wanted = isinstance(asked, dict) and asked != self._before
                how[DRIVER] = {
                    "host": socket.gethostname(),
                    "pid": os.getpid(),
                    "since": self.since,
                    "beat": _now_ms(),
                }
                _write(self.journal, self.sweep_id, how)
        if wanted and not self.cancelled:
            self.cancelled = True
            self._cancel()

    def stop(self) -> None:
        """The sweep ended: no more beats, and the journal no longer says it is driven
        (idempotent)."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()
        with self._lock:
            if self._done:
                return
            self._done = True
            try:
                with self.journal.storage.exclusive(LOCK):
                    how = recorded(self.journal, self.sweep_id)
                    if DRIVER in how:
                        del how[DRIVER]
                        _write(self.journal, self.sweep_id, how)
            except Exception:  # noqa: BLE001 (a closed journal: its beat goes stale instead)
                pass


__all__ = [
    "BEAT_S",
    "STALE_S",
    "Watch",
    "check_idle",
    "driven",
    "recorded",
    "request_cancel",
    "resumable",
]
