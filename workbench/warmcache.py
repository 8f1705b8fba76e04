"""What a warm worker keeps between the forks it runs, keyed by content, so the Nth fork from one
event pays neither a replay nor a read: the states at fork points, the maps of effect keys of
fork prefixes, and the stored results of inherited effects (read and decompressed once).

Content addressing makes this safe: an event never changes once written, and each key names an
event by branch, seq and hash (a state) or by the fixed extent of an ancestor's history (a
prefix's effects). What is handed out is a copy, since a fork applies deltas to its state in
place and may change an effect's result it was given. Only a journal a pool worker keeps open
carries one (``Journal.open`` in a pool worker); nothing else changes.
"""

from __future__ import annotations

import copy
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")
STATES = 16  # fork-point states kept
STATE_CHARS = 64 << 20  # a larger state (in stored characters) is not kept: memory beats speed
PREFIXES = 64  # prefixes' effect-key maps kept
RESULTS = 4096  # effect results kept (as their stored text)


class WarmCache:
    """Least-recently-used maps of states, prefix effect keys and effect results."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: OrderedDict[Hashable, Any] = OrderedDict()
        self._prefixes: OrderedDict[Hashable, dict[bytes, tuple[int, int]]] = OrderedDict()
        self._results: OrderedDict[Hashable, Any] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def _get(self, table: OrderedDict[Hashable, Any], key: Hashable) -> tuple[bool, Any]:
        with self._lock:
            if key in table:
                table.move_to_end(key)
                self.hits += 1
                return True, table[key]
            self.misses += 1
            return False, None

    def _put(self, table: OrderedDict[Hashable, Any], key: Hashable, value: Any, most: int) -> None:
        with self._lock:
            table[key] = value
            table.move_to_end(key)
            while len(table) > most:
                table.popitem(last=False)

    def state(self, key: Hashable, build: Callable[[], T], size: Callable[[T], int]) -> T:
        """A copy of the state (a ``Rebuilt``) at ``key``, built once."""
        found, kept = self._get(self._states, key)
        if found:
            copied: T = _copied(kept)
            return copied
        built = build()
        if size(built) <= STATE_CHARS:
            try:
                self._put(self._states, key, _copied(built), STATES)
            except Exception:  # noqa: BLE001 (a state deepcopy cannot copy: not kept)
                pass
        return built

    def prefix_effects(
        self, key: Hashable, load: Callable[[], dict[bytes, tuple[int, int]]]
    ) -> dict[bytes, tuple[int, int]]:
        """A copy of a prefix's map of effect keys, read once."""
        found, kept = self._get(self._prefixes, key)
        if not found:
            kept = load()
            self._put(self._prefixes, key, kept, PREFIXES)
        return dict(kept)

    def result(self, key: Hashable, load: Callable[[], str], decode: Callable[[str], Any]) -> Any:
        """An effect's result: its stored text read (and decompressed) once, decoded anew for
        each fork (a fresh value it may change; decoding beats copying a large one)."""
        found, kept = self._get(self._results, key)
        if not found:
            kept = load()
            self._put(self._results, key, kept, RESULTS)
        return decode(kept)


def _copied(value: Any) -> Any:
    if isinstance(value, tuple) and hasattr(value, "_replace"):  # a Rebuilt: copy its state
        return value._replace(state=copy.deepcopy(value.state))  # type: ignore[attr-defined]
    return copy.deepcopy(value)
