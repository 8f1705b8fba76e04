"""A LangChain chat message history backed by a journal branch: ``JournalChatHistory``.

Messages are deltas, so any earlier point of a conversation can be read (``at``) or continued
on a fork (``fork_at``) without copying anything. Install with
``pip install 'lithify-workbench[langchain]'``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage, messages_from_dict, messages_to_dict

from ..events import State
from ..journal import Journal


@dataclass
class ChatState(State):
    """A conversation: messages in LangChain's dict form."""

    state_name = "lithify.langchain.chat/1"
    messages: list[dict[str, Any]] = field(default_factory=list)

    def apply(self, delta: dict[str, Any]) -> None:
        if delta.get("clear"):
            self.messages = []
        self.messages.extend(delta.get("add", []))


class JournalChatHistory(BaseChatMessageHistory):
    """``BaseChatMessageHistory`` on one branch of a journal opened with ``ChatState``."""

    def __init__(self, journal: Journal, branch: int | str = 0) -> None:
        self.journal = journal
        self.branch = journal.branch(branch)

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        return messages_from_dict(self.branch.state().messages)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append messages as one delta."""
        self.branch.apply({"add": messages_to_dict(list(messages))})

    def clear(self) -> None:
        """Start over (the earlier messages stay readable with ``at``)."""
        self.branch.apply({"clear": True})

    def at(self, seq: int) -> list[BaseMessage]:
        """The conversation as of event ``seq``."""
        return messages_from_dict(self.branch.at(seq).messages)

    def fork_at(self, seq: int, name: str | None = None) -> JournalChatHistory:
        """A new history continuing from event ``seq`` (one row; nothing copied)."""
        return JournalChatHistory(self.journal, self.branch.fork_at(seq, name=name).id)
