"""The journal States of the LangChain and LangGraph adapters, importable without either
library: ``ChatState`` (a chat history), ``ThreadState`` (a LangGraph thread) and
``SharedState`` (both: one journal holding chat histories and LangGraph threads, one branch
each)."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

from ..events import State


@dataclass
class ChatState(State):
    """A conversation: messages in LangChain's dict form."""

    state_name = "lithify.langchain.chat/1"
    messages: list[dict[str, Any]] = field(default_factory=list)

    def apply(self, delta: dict[str, Any]) -> None:
        if delta.get("clear"):
            self.messages = []
        self.messages.extend(delta.get("add", []))


def _pack(typed: tuple[str, bytes]) -> dict[str, str]:
    return {"t": typed[0], "b64": base64.b64encode(typed[1]).decode("ascii")}


def _unpack(doc: dict[str, str]) -> tuple[str, bytes]:
    return doc["t"], base64.b64decode(doc["b64"])


_SERDE: Any = None


def _serde() -> Any:
    global _SERDE
    if _SERDE is None:
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

        _SERDE = JsonPlusSerializer()
    return _SERDE


def _readable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda o: getattr(o, "content", None) or repr(o)))


@dataclass
class ThreadState(State):
    """A LangGraph thread as journal state: the latest checkpoint and every channel's latest
    value (readable JSON), so diffs between seqs show which channels changed."""

    state_name = "lithify.langgraph.thread/1"
    checkpoint: str | None = None
    checkpoints: int = 0
    channels: dict[str, Any] = field(default_factory=dict)

    def apply(self, delta: dict[str, Any]) -> None:
        kind = delta.get("lg")
        if kind == "checkpoint":
            self.checkpoint = delta["id"]
            self.checkpoints += 1
            for name, entry in delta.get("blobs", {}).items():
                value = entry["value"]
                self.channels[name] = (
                    None
                    if value["t"] == "empty"
                    else _readable(_serde().loads_typed(_unpack(value)))
                )
        elif kind == "deleted":
            self.checkpoint, self.checkpoints, self.channels = None, 0, {}


@dataclass
class SharedState(ChatState, ThreadState):
    """Chat histories and LangGraph threads in one journal (each on its own branch): a chat
    delta changes ``messages``, a LangGraph delta the thread fields."""

    state_name = "lithify.adapters.shared/1"

    def apply(self, delta: dict[str, Any]) -> None:
        if "lg" in delta:
            ThreadState.apply(self, delta)
        else:
            ChatState.apply(self, delta)
