"""``StateForgeMessageHistory``: a LangChain chat message history on a ``StateForge`` session.

    history = StateForgeMessageHistory(session_id=session.id, stateforge=sf,
                                       auto_snapshot=True, snapshot_every=5)
    await history.aadd_messages([HumanMessage(content="Hi"), AIMessage(content="Hello!")])

Each message becomes a message unit (``key="msg:<n>"``, its value LangChain's dict form,
``source="langchain"``, ``source_ref`` the message type). Messages collect in the history; a
snapshot commits all of them as the session's unit set: ``await history.snapshot()``, or
every ``snapshot_every`` calls of ``add_messages`` with ``auto_snapshot=True``.
``await StateForgeMessageHistory.from_snapshot(session_id, sf, snapshot_id)`` resumes a
conversation after a restart. The coroutines run on the store's worker thread.

Install with ``pip install 'lithify-workbench[langchain]'``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage, messages_from_dict, messages_to_dict

from ....errors import InvalidValue
from ....units import Unit, message
from ..client import StateForge
from ..models import Snapshot

__all__ = ["StateForgeMessageHistory"]

SOURCE = "langchain"
_INDEX = re.compile(r"msg:(\d+)\Z")


class StateForgeMessageHistory(BaseChatMessageHistory):
    """``BaseChatMessageHistory`` whose snapshots are StateForge snapshots of ``session_id``
    (a session created on ``stateforge`` beforehand)."""

    def __init__(
        self,
        session_id: Any,
        stateforge: StateForge,
        *,
        auto_snapshot: bool = False,
        snapshot_every: int = 1,
        snapshot_label: str | None = None,
    ) -> None:
        if isinstance(snapshot_every, bool) or not isinstance(snapshot_every, int):
            raise InvalidValue(f"snapshot_every is a positive int, not {snapshot_every!r}")
        if snapshot_every < 1:
            raise InvalidValue(f"snapshot_every is a positive int, not {snapshot_every!r}")
        if not isinstance(stateforge, StateForge):
            raise InvalidValue(f"stateforge is a StateForge store, not {stateforge!r}")
        self.session_id = str(getattr(session_id, "id", session_id))
        self.sf = stateforge
        self.auto_snapshot = bool(auto_snapshot)
        self.snapshot_every = snapshot_every
        self.snapshot_label = snapshot_label
        self._lock = threading.RLock()
        self._messages: list[BaseMessage] = []
        self._units: list[Unit] = []
        self._add_count = 0  # calls of add_messages, for auto_snapshot

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The conversation so far (what was added, or resumed with ``from_snapshot``)."""
        with self._lock:
            return list(self._messages)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Add messages (each a unit); with ``auto_snapshot``, every ``snapshot_every``-th
        call takes a snapshot."""
        batch = list(messages)
        with self._lock:
            built = []
            for i, msg in enumerate(batch):
                if not isinstance(msg, BaseMessage):
                    raise InvalidValue(f"add_messages takes LangChain messages, not {msg!r}")
                built.append(
                    message(
                        self.session_id,
                        key=f"msg:{len(self._messages) + i}",
                        value=messages_to_dict([msg])[0],
                        source=SOURCE,
                        source_ref=msg.type,
                    )
                )
            self._messages += batch
            self._units += built
            self._add_count += 1
            if self.auto_snapshot and self._add_count % self.snapshot_every == 0:
                self.snapshot_sync()

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """``add_messages`` on the store's worker thread."""
        await self.sf._run(self.add_messages, list(messages))

    def snapshot_sync(self, label: str | None = None) -> Snapshot:
        """Commit every message so far as the session's unit set (one snapshot)."""
        with self._lock:
            return self.sf.snapshot_sync(
                self.session_id,
                list(self._units),
                label=label if label is not None else self.snapshot_label,
            )

    async def snapshot(self, label: str | None = None) -> Snapshot:
        """``snapshot_sync`` on the store's worker thread."""
        return await self.sf._run(self.snapshot_sync, label)

    def clear(self) -> None:
        """Start over: an empty snapshot (earlier snapshots and their messages stay)."""
        with self._lock:
            self._messages, self._units = [], []
            self.snapshot_sync()

    async def aclear(self) -> None:
        """``clear`` on the store's worker thread."""
        await self.sf._run(self.clear)

    @classmethod
    def from_snapshot_sync(
        cls, session_id: Any, stateforge: StateForge, snapshot_id: Any, **kw: Any
    ) -> StateForgeMessageHistory:
        """A history holding a snapshot's messages in their order (to resume after a
        restart); ``kw`` as for the constructor."""
        held = [
            u
            for u in stateforge.get_units_sync(snapshot_id)
            if u.type == "message" and u.source == SOURCE
        ]
        held.sort(key=_order)
        history = cls(session_id=session_id, stateforge=stateforge, **kw)
        history._messages = messages_from_dict([u.value for u in held])
        history._units = held
        return history

    @classmethod
    async def from_snapshot(
        cls, session_id: Any, stateforge: StateForge, snapshot_id: Any, **kw: Any
    ) -> StateForgeMessageHistory:
        """``from_snapshot_sync`` on the store's worker thread."""
        return await stateforge._run(
            cls.from_snapshot_sync, session_id, stateforge, snapshot_id, **kw
        )


def _order(u: Unit) -> tuple[int, str]:
    """A message's place: its number in ``msg:<n>``, else its creation time."""
    m = _INDEX.match(u.key)
    return (
        (int(m.group(1)), "") if m else (1 << 62, u.created_at.isoformat() if u.created_at else "")
    )
