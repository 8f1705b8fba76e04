"""``JournalPort``: what the modules around a journal use of it, and nothing else.

``Branch`` (with its effects), ``forking``, ``replay``, ``matrix``, ``provenance`` and
``subscriptions`` are handed the ``Journal`` and typed against this protocol instead, so none of
them imports the journal (the journal imports them to delegate) and a type checker holds each
to the members named here: the promise a docstring listing used to make.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .events import BranchInfo, Record, SweepInfo
    from .history import History
    from .storage import EventRow, RunRow, Storage
    from .warmcache import WarmCache


class JournalPort(Protocol):
    """The journal as a branch and its neighbours see it (see the module docstring)."""

    history: History
    snapshot_every: int
    max_event_bytes: int
    max_key_bytes: int
    warm: WarmCache | None

    @property
    def storage(self) -> Storage:
        """The backend."""
        ...

    @property
    def location(self) -> str:
        """Where another process opens the journal."""
        ...

    def write(self, row: EventRow, shape: str, buffered: bool) -> None:
        """Write one event (buffered, when the durability allows it)."""
        ...

    def flush(self, branch: int | None = None) -> None:
        """Write buffered events (of one branch, or all)."""
        ...

    def settle(self) -> None:
        """Before a read: write every buffer."""
        ...

    def now(self) -> int:
        """The time an event is recorded at (unix ms)."""
        ...

    def durable_head(self, branch: int) -> tuple[int, bytes]:
        """(seq, hash) of a branch's last written event."""
        ...

    def refusals(self, branch: int) -> int:
        """How many buffered writes of a branch were refused so far."""
        ...

    def lost(self, branch: int) -> tuple[int, str] | None:
        """(events, why) a branch lost from its buffer, if it lost any."""
        ...

    def branch(self, ref: int | str) -> Any:
        """A fresh ``Branch`` handle (typed loosely: the branch module names this protocol)."""
        ...

    def fork(
        self,
        base: Any,
        at: int,
        specs: Sequence[tuple[str | None, Mapping[str, Any] | None]],
        sweep: int | None = None,
    ) -> list[Any]:
        """Forks of ``base`` at ``at`` (``Branch`` handles)."""
        ...

    def resolve(self, ref: str, default_branch: int | str = 0) -> tuple[int, int]:
        """(branch, seq) a ref names."""
        ...

    def info(self, ref: int | str) -> BranchInfo:
        """A branch's row with its head."""
        ...

    def unknown_outcomes(self, branch_id: int) -> list[str]:
        """Effect keys started on a branch whose result was never committed."""
        ...

    def sweeps(self) -> list[SweepInfo]:
        """Every recorded sweep."""
        ...

    def runs(self, sweep: int | None = None) -> list[RunRow]:
        """How forks ran (of one sweep, or all)."""
        ...

    def record(self, ref: str | tuple[int, int]) -> Record:
        """One event as a Record."""
        ...

    def tail(self, cursor: int = 0, limit: int | None = None) -> tuple[list[Record], int]:
        """Events after a global position, and the new position."""
        ...
