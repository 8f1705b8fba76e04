"""Who is announcing an effect: process tokens, and the effects this process runs right now.

An effect is announced (durably, in a backend's intent store) before its function runs, under
an id ``TOKEN:N``: the Nth announcement of the process ``TOKEN`` (pid, process start time,
boot). The token tells whether the announcing process still lives, so a second announcer of the
same effect is refused while the first runs it (``EffectInFlight``), and a dead process's
announcement is an unknown outcome rather than a block. Every intent store of both backends
uses these; none of this touches a database.
"""

from __future__ import annotations

import itertools
import os

# The announcement of each effect this process is running now, by (intent log path, branch,
# key hash): another announcement of the same effect from this process (another thread, another
# handle, another Journal on the same file) finds it here, in flight. Dict operations are atomic
# under the GIL, so no lock is needed.
_RUNNING: dict[tuple[str | None, int, bytes], str] = {}
_COUNTER = itertools.count(1)
_TOKEN: str | None = None


def _proc_start(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux), "" where unknown, "dead"
    for a zombie (it ran to its end; only its parent has not reaped it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
        fields = stat[stat.rindex(")") + 2 :].split()
        return "dead" if fields[0] in ("Z", "X") else fields[19]
    except (OSError, ValueError, IndexError):
        return ""


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip()[:8]
    except OSError:
        return ""


def process_token() -> str:
    """This process, as ``PID.START.BOOT``: a pid reused later, or after a reboot, differs."""
    global _TOKEN
    if _TOKEN is None:
        pid = os.getpid()
        _TOKEN = f"{pid}.{_proc_start(pid)}.{_boot_id()}"
    return _TOKEN


def _forked() -> None:
    global _TOKEN
    _TOKEN = None  # a forked child is another process
    _RUNNING.clear()  # and runs none of its parent's effects


os.register_at_fork(after_in_child=_forked)


def new_announcement(running: tuple[str | None, int, bytes]) -> tuple[str, str | None]:
    """(a new announcement id ``TOKEN:N``, the id of this process's announcement of the same
    effect that is running now, if any: then the new one is not registered)."""
    ann = f"{_TOKEN or process_token()}:{next(_COUNTER)}"
    here = _RUNNING.setdefault(running, ann)
    return ann, (here if here != ann else None)


def end_announcement(running: tuple[str | None, int, bytes], ann: str) -> None:
    """The announced effect is no longer running in this process."""
    if _RUNNING.get(running) == ann:
        del _RUNNING[running]


def announcement_live(ann: str) -> bool:
    """Whether the process that made an announcement (``TOKEN:N``) is alive: this process's
    own announcements are found through ``_RUNNING`` instead."""
    token = ann.rpartition(":")[0]
    return bool(token) and token != process_token() and token_alive(token)


def token_alive(token: str) -> bool:
    """Whether the process a token names is still running."""
    pid_text, _, rest = token.partition(".")
    start, _, boot = rest.partition(".")
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    if boot and boot != _boot_id():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    return not start or _proc_start(pid) in ("", start)
