"""Catch-up subscriptions: a named, durable consumer of the journal's events.

    sub = journal.subscribe("indexer")
    for rec in sub.poll(100):        # events after the acknowledged position
        handle(rec)
        sub.ack(rec.position)        # durable: survives crashes and reopens

``poll`` never advances the position: what was delivered but not acknowledged is delivered
again after a crash or a reopen (at-least-once). Named subscribers are independent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import InvalidValue
from .events import Record

if TYPE_CHECKING:
    from .port import JournalPort


class Subscription:
    """A durable cursor over the journal's global positions, stored under ``name``."""

    def __init__(self, journal: JournalPort, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidValue(f"a subscription name is a non-empty str, not {name!r}")
        self.journal = journal
        self.name = name
        self._acked = journal.storage.subscription(name)
        self._delivered = self._acked

    @property
    def position(self) -> int:
        """The acknowledged position: every event at or before it has been handled."""
        return self._acked

    def poll(self, limit: int | None = 100) -> list[Record]:
        """Events after the acknowledged position (at most ``limit``), without advancing it."""
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, int) or limit < 1
        ):
            raise InvalidValue(f"limit must be a positive int or None, not {limit!r}")
        records, last = self.journal.tail(self._acked, limit)
        self._delivered = max(self._delivered, last)
        return records

    def ack(self, position: int) -> None:
        """Acknowledge every event up to ``position``, which must be one that poll delivered."""
        if isinstance(position, bool) or not isinstance(position, int):
            raise InvalidValue(f"ack takes a record's position (an int), not {position!r}")
        if not self._acked < position <= self._delivered:
            raise InvalidValue(
                f"ack({position}) is outside what {self.name!r} was delivered: positions "
                f"{self._acked + 1}..{self._delivered}; poll first, then ack a delivered "
                f"record's position",
                position=position,
            )
        self.journal.storage.ack(self.name, position)
        self._acked = position

    def __repr__(self) -> str:
        return f"<Subscription {self.name!r} at {self._acked}>"
