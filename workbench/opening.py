"""What ``Journal.open`` checks and decides before a journal is used: its options, the
first schema of a new file (the State's recorded name, its initial state and what snapshots
are built from), and which State class states are rebuilt with for what a file recorded.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from . import events as ev
from . import plugins
from .errors import InvalidValue, NotFound, StateMismatch
from .history import built_from
from .storage import Storage, is_url

DURABILITY = ("process", "fsync", "lazy")

# In a pool worker: the journals opened so far by the arguments they were opened with, handed to
# every later open with the same arguments and kept open between forks. None elsewhere.
_kept: dict[tuple[Any, ...], Any] | None = None
_kept_lock = threading.Lock()
T = TypeVar("T")


def keep_journals_open() -> None:
    """From now on in this process, ``Journal.open`` with arguments already seen returns the
    journal it opened then, still open, and ``close()`` only flushes it (a pool worker runs
    fork after fork on one handle, and caches what forks share: ``workbench.warmcache``)."""
    global _kept
    with _kept_lock:
        if _kept is None:
            _kept = {}


def kept(arguments: tuple[Any, ...], make: Callable[[], T]) -> T | None:
    """The journal kept for these ``Journal.open`` arguments (made now if none is open), or
    None when journals are not kept in this process."""
    if _kept is None:
        return None
    with _kept_lock:
        journal = _kept.get(arguments)
        if journal is None or journal._closed:
            journal = _kept[arguments] = make()
        return journal


def release_journals() -> None:
    """Close every journal kept open in this process (a pool worker parked between sweeps
    holds no file: the journal may be moved, replaced or copied meanwhile); later opens open
    afresh and are kept again."""
    with _kept_lock:
        if _kept is None:
            return
        journals = list(_kept.values())
        _kept.clear()
    for journal in journals:
        try:
            journal._keep = False  # an ordinary journal again: close() closes it
            journal.close()
        except Exception:  # noqa: BLE001 (a journal that cannot flush said so to its fork)
            pass


PLAIN_STATE = "@json"  # the state name of a journal written without a State class (merge patches)
Clock = Callable[[], "int | float | datetime"]


def state_name_of(cls: type) -> str:
    """The name a journal records for a State class: its ``state_name``, else its qualname."""
    name = getattr(cls, "state_name", None)
    return name if isinstance(name, str) and name else cls.__qualname__


def check_options(
    durability: str,
    snapshot_every: int,
    create: bool | None,
    clock: Clock | None,
    state: type | None,
    raw: bool,
) -> None:
    """Raise InvalidValue, before anything is opened, for an option that cannot work."""
    if durability not in DURABILITY:
        raise InvalidValue(
            f"durability={durability!r} is not one of {', '.join(DURABILITY)}",
            durability=durability,
        )
    if (
        isinstance(snapshot_every, bool)
        or not isinstance(snapshot_every, int)
        or snapshot_every < 1
    ):
        raise InvalidValue(f"snapshot_every must be a positive int, not {snapshot_every!r}")
    if create not in (None, True, False):
        raise InvalidValue(f"create is None, True or False, not {create!r}")
    if clock is not None and not callable(clock):
        raise InvalidValue(f"clock is a function returning unix ms or a datetime, not {clock!r}")
    if state is not None and raw:
        raise InvalidValue("raw=True reads states as plain JSON; pass no State class with it")
    if state is not None and (
        not isinstance(state, type) or not callable(getattr(state, "apply", None))
    ):
        raise InvalidValue(
            f"{getattr(state, '__name__', state)!r} has no apply(self, delta) method; a "
            "State class must define how a delta changes it",
        )


def check_place(path: str) -> None:
    """Raise, before anything is opened, for a path no journal can be at: a directory, or a
    file in a folder that does not exist. A URL is the server's to judge."""
    if path == ":memory:" or is_url(path):
        return
    if os.path.isdir(path):
        raise InvalidValue(f"{path} is a directory; pass the path of a journal file", path=path)
    if not os.path.isdir(parent := os.path.dirname(os.path.abspath(path))):
        raise NotFound(f"the folder {parent} does not exist; create it first", path=path)


def check_timeout(timeout: object) -> float:
    """Seconds to wait for another connection's lock, or InvalidValue."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < 1e7:
        raise InvalidValue(f"timeout is a positive number of seconds, not {timeout!r}")
    return float(timeout)


def timeout_from_env(variable: str = "LITHIFY_TIMEOUT", default: float = 30.0) -> float:
    """Seconds to wait for a lock as an environment variable gives them (``default`` unset)."""
    text = os.environ.get(variable) or ""
    if not text:
        return default
    try:
        return check_timeout(float(text))
    except (ValueError, InvalidValue):
        raise InvalidValue(
            f"{variable} is a positive number of seconds to wait for a lock, not {text!r}"
        ) from None


def state_from_ref(ref: str, flag: str = "--state") -> type:
    """The State class ``module:Class`` names, or InvalidValue saying why it cannot be had."""
    try:
        state = plugins.import_ref(ref)
    except (ImportError, AttributeError, ValueError) as e:
        raise InvalidValue(f"{flag} {ref}: cannot import it ({e}); give module:Class") from None
    if not isinstance(state, type):
        raise InvalidValue(f"{flag} {ref} is not a class; give module:Class")
    return state


def check_limits(max_event_bytes: int, max_key_bytes: int) -> tuple[int, int]:
    """(max_event_bytes, max_key_bytes) as given, or InvalidValue before anything is opened."""
    for name, value in (("max_event_bytes", max_event_bytes), ("max_key_bytes", max_key_bytes)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidValue(f"{name} is a positive number of bytes (an int), not {value!r}")
    return max_event_bytes, max_key_bytes


def new_journal_schema(state: type | None) -> tuple[str, str | None, bytes, str]:
    """(state name, initial state as canonical JSON, its seal, what it is built from): what a
    new file records first."""
    if state is None:
        return PLAIN_STATE, None, b"", built_from(None)
    initial_text = ev.canonical(ev.encode_state(state()), "state")
    return (
        state_name_of(state),
        initial_text,
        ev.snapshot_digest(ev.ZERO_HASH, initial_text),
        built_from(state),
    )


def state_for(storage: Storage, state: type | None, raw: bool) -> tuple[type | None, bool]:
    """(the State class to use, whether states can be built) for what the journal recorded."""
    stored = storage.meta.get("state_name", "")
    if raw:
        return None, True
    if state is not None:
        given = state_name_of(state)
        if stored == "":  # written before names were recorded: take the caller's word for it
            if not storage.readonly:
                storage.set_meta("state_name", given)
            return state, True
        if stored != given:
            what = (
                "plain JSON states (no State class)"
                if stored == PLAIN_STATE
                else f"the State {stored!r}"
            )
            raise StateMismatch(
                f"{storage.path} was written with {what}, not {given!r}: open it with that "
                f"class"
                + (
                    ""
                    if stored == PLAIN_STATE
                    else f", or, if {state.__qualname__} is a compatible successor, set "
                    f"`state_name = {stored!r}` on it to declare so"
                ),
                path=storage.path,
                stored=stored,
                given=given,
            )
        return state, True
    if stored in ("", PLAIN_STATE):
        return ev.registered_state(stored) if stored else None, True
    # the class this process defined under that name, else the one of the agent that
    # writes such journals (an installed plugin, imported now)
    found = ev.registered_state(stored) or plugins.state_class(stored)
    return found, found is not None
