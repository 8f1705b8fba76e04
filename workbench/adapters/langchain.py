"""A LangChain chat message history backed by a journal branch: ``JournalChatHistory``.

Messages are deltas, so any earlier point of a conversation can be read (``at``) or continued
on a fork (``fork_at``) without copying anything. ``snapshot()`` names the current point (its id
is the event's hash; ``auto_snapshot=True, snapshot_every=N`` takes one every N messages) and
``JournalChatHistory.from_snapshot(journal, id_or_label)`` resumes there after a restart. A
journal opened with ``SharedState`` holds chat histories and LangGraph threads side by side.
Install with ``pip install 'lithify-workbench[langchain]'``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage, messages_from_dict, messages_to_dict

from ..errors import InvalidValue, NotFound
from ..journal import Journal
from .states import ChatState, SharedState

__all__ = ["ChatSnapshot", "ChatState", "JournalChatHistory", "SharedState"]


@dataclass(frozen=True)
class ChatSnapshot:
    """A named point of a conversation: ``id`` is its event's hash (what ``from_snapshot``
    takes, or the label)."""

    id: str
    label: str
    branch: int
    seq: int
    messages: int


class JournalChatHistory(BaseChatMessageHistory):
    """``BaseChatMessageHistory`` on one branch of a journal opened with ``ChatState`` (or
    ``SharedState``). ``auto_snapshot=True`` takes a snapshot every ``snapshot_every``
    messages."""

    def __init__(
        self,
        journal: Journal,
        branch: int | str = 0,
        *,
        auto_snapshot: bool = False,
        snapshot_every: int = 10,
    ) -> None:
        if isinstance(snapshot_every, bool) or not isinstance(snapshot_every, int):
            raise InvalidValue(f"snapshot_every is a positive int, not {snapshot_every!r}")
        if snapshot_every < 1:
            raise InvalidValue(f"snapshot_every is a positive int, not {snapshot_every!r}")
        self.journal = journal
        self.branch = journal.branch(branch)
        self.auto_snapshot = bool(auto_snapshot)
        self.snapshot_every = snapshot_every

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return messages_from_dict(self.branch.state().messages)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append messages as one delta (and, with ``auto_snapshot``, take a snapshot each
        time the count passes a multiple of ``snapshot_every``)."""
        before = len(self.branch.state().messages) if self.auto_snapshot else 0
        self.branch.apply({"add": messages_to_dict(list(messages))})
        if self.auto_snapshot:
            after = before + len(messages)
            if after // self.snapshot_every > before // self.snapshot_every:
                self.snapshot_sync()

    def snapshot_sync(self, label: str | None = None) -> ChatSnapshot:
        """Name the conversation's current point (a label on its last event, ``auto-<n>`` by
        default) and materialize its state, so resuming from it reads one snapshot."""
        b = self.branch
        count = len(b.state().messages)
        if b.head == 0:
            raise InvalidValue("nothing to snapshot yet: add messages first")
        name = label if label is not None else f"auto-{b.id}-{b.head}"
        if not isinstance(name, str) or not name:
            raise InvalidValue(f"a snapshot label is a non-empty str, not {label!r}")
        b.tag(name, b.head)
        b.snapshot()
        return ChatSnapshot(b.head_hash, name, b.id, b.head, count)

    async def snapshot(self, label: str | None = None) -> ChatSnapshot:
        """``snapshot_sync`` as a coroutine."""
        return self.snapshot_sync(label)

    @classmethod
    def from_snapshot(
        cls, journal: Journal, snapshot: ChatSnapshot | str, **kw: Any
    ) -> JournalChatHistory:
        """The conversation as of a snapshot (its id, an 8+ prefix of it, or its label): on
        its own branch when nothing was added since, else on a new fork from it (what came
        after stays where it was)."""
        ref = snapshot.id if isinstance(snapshot, ChatSnapshot) else snapshot
        if not isinstance(ref, str) or not ref:
            raise InvalidValue(f"from_snapshot takes a ChatSnapshot, its id or label, not {ref!r}")
        try:
            branch, seq = journal.resolve(ref)
        except NotFound:
            raise NotFound(f"no chat snapshot {ref!r} in {journal.path}") from None
        b = journal.branch(branch)
        if seq == b.head:
            return cls(journal, branch, **kw)
        return cls(journal, b.fork_at(seq).id, **kw)

    def clear(self) -> None:
        """Start over (the earlier messages stay readable with ``at``)."""
        self.branch.apply({"clear": True})

    def at(self, seq: int) -> list[BaseMessage]:
        """The conversation as of event ``seq``."""
        return messages_from_dict(self.branch.at(seq).messages)

    def fork_at(self, seq: int, name: str | None = None) -> JournalChatHistory:
        """A new history continuing from event ``seq`` (one row; nothing copied)."""
        return JournalChatHistory(self.journal, self.branch.fork_at(seq, name=name).id)
