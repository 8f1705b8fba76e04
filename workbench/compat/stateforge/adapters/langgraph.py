"""``StateForgeCheckpointer``: a LangGraph checkpointer on a ``StateForge`` store.

    sf = StateForge("agent.db")
    app = graph.compile(checkpointer=StateForgeCheckpointer(sf))

Each LangGraph thread is a session (labelled with the thread id); each checkpoint is a snapshot
of it, labelled with the checkpoint id, whose units are the checkpoint's fields: every top-level
channel of ``channel_values`` one KV unit (``source="langgraph"``, ``source_ref="channel"``;
a subgraph's fields keyed ``<checkpoint_ns>/<field>``). So ``sf.diff(prev_checkpoint_id,
curr_checkpoint_id)`` names the fields a step changed, and ``sf.history``, ``snapshot show``,
``rollback`` and ``provenance`` work on a graph's state like on any session. The checkpoint
itself (its exact serialized channels, versions, metadata and pending writes) travels in the
same events, so the graph resumes, replays and forks exactly as with LangGraph's own savers
(it is ``workbench.adapters.langgraph.JournalSaver`` underneath). The coroutines run on the
store's worker thread.

Install with ``pip install 'lithify-workbench[langgraph]'``.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata

from ....adapters.langgraph import JournalSaver
from ....adapters.states import _readable
from ....errors import Conflict, NotFound, ValueTypeError
from ....units import SESSION_PREFIX, kv
from ..client import StateForge
from ..models import json_safe

__all__ = ["StateForgeCheckpointer"]

SOURCE = "langgraph"
CHANNEL = "channel"  # the source_ref of a unit that is a checkpoint's field
THREAD = "langgraph_thread"  # the session metadata naming the thread a session holds


class StateForgeCheckpointer(JournalSaver):
    """LangGraph's checkpointer interface (sync and async) on a StateForge store: threads are
    sessions, checkpoints are snapshots whose units are the state's fields."""

    def __init__(self, stateforge: StateForge, *, serde: Any = None) -> None:
        super().__init__(stateforge.journal, serde=serde)
        self.sf = stateforge
        self._sessions: dict[str, int] = {}  # thread id -> its session's branch
        self._fields = threading.local()  # the checkpoint being put: its fields, readable

    # -- threads are sessions -------------------------------------------------------------

    def _find(self, thread_id: str) -> int | None:
        """The session of a thread: the one created for it, else the latest labelled with it
        (a session made beforehand with ``create_session(label=thread_id)``)."""
        sessions = self.sf.sessions_sync()
        mine = [s for s in sessions if s.metadata.get(THREAD) == thread_id]
        labelled = [s for s in sessions if s.label == thread_id]
        found = mine or labelled
        return found[-1].branch if found else None

    def _branch(self, thread_id: str, create: bool = False) -> Any:
        thread_id = str(thread_id)
        bid = self._sessions.get(thread_id)
        if bid is None:
            bid = self._find(thread_id)
            if bid is None:
                if not create:
                    return None
                made = self.sf.create_session_sync(label=thread_id, metadata={THREAD: thread_id})
                bid = made.branch
            self._sessions[thread_id] = bid
        with self.sf._lock:
            return self.sf.writer(bid)  # the store's handle: its state stays built

    def _thread_ids(self) -> list[str]:
        return [
            str(s.metadata.get(THREAD) or s.label)
            for s in self.sf.sessions_sync()
            if THREAD in s.metadata or s.label in self._sessions
        ]

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """A new session forked from the source thread's (one row and one event, whatever the
        thread's length), naming the target thread."""
        src = self._branch(str(source_thread_id))
        if src is None:
            raise NotFound(f"no LangGraph thread {source_thread_id!r} in this store")
        target = str(target_thread_id)
        if self._branch(target) is not None:
            raise Conflict(f"thread {target!r} already exists; pick another id")
        sid = str(uuid.uuid4())
        fork = src.fork(name=SESSION_PREFIX + sid, params={"thread_id": target})
        with self.sf._lock:
            fork.apply({"op": "session", "id": sid, "label": target, "metadata": {THREAD: target}})
        self._sessions[target] = fork.id

    # -- checkpoints are snapshots --------------------------------------------------------

    def put(
        self,
        config: Any,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Any:
        values = checkpoint.get("channel_values", {})
        self._fields.value = {
            name: _field(values[name])
            for name in values
            if not str(name).startswith(("__", "branch:"))
        }
        try:
            return super().put(config, checkpoint, metadata, new_versions)
        finally:
            self._fields.value = None

    def _write(self, thread_id: str, b: Any, delta: dict[str, Any]) -> None:
        if delta.get("lg") != "checkpoint":
            with self.sf._lock:
                b.apply({"op": "langgraph", "langgraph": delta})
            return
        with self.sf._lock:
            self._write_checkpoint(b, delta)

    def _write_checkpoint(self, b: Any, delta: dict[str, Any]) -> None:
        ns = delta["ns"]
        fields: dict[str, Any] = getattr(self._fields, "value", None) or {}
        state = b.state()
        now = {
            u.identity: u
            for u in (
                kv(
                    str(b.name)[len(SESSION_PREFIX) :],
                    key=name if not ns else f"{ns}/{name}",
                    value=value,
                    source=SOURCE,
                    source_ref=CHANNEL,
                    metadata={"checkpoint_ns": ns} if ns else None,
                )
                for name, value in sorted(fields.items())
            )
        }
        mine = {
            ident
            for ident, doc in state.units.items()
            if doc.get("source") == SOURCE
            and doc.get("source_ref") == CHANNEL
            and (doc.get("metadata") or {}).get("checkpoint_ns", "") == ns
        }
        put = [u.stored() for i, u in now.items() if state.units.get(i, {}).get("id") != u.id]
        snapshot: dict[str, Any] = {
            "op": "snapshot",
            "label": delta["id"],
            "put": put,
            "drop": sorted(mine - set(now)),
            "metadata": {
                "checkpoint_id": delta["id"],
                "checkpoint_ns": ns,
                "parent_checkpoint_id": delta.get("parent"),
            },
            "langgraph": delta,
        }
        self.sf.append_snapshot_delta(b, snapshot)

    def _unwrap(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        inner = payload.get("langgraph")
        return inner if isinstance(inner, dict) else None

    # -- the coroutines: on the store's worker thread -------------------------------------

    async def _off(self, fn: Callable[..., Any], /, *args: Any, **kw: Any) -> Any:
        return await self.sf._run(fn, *args, **kw)


def _field(value: Any) -> Any:
    """A channel's value as a unit's JSON value (messages by their content; anything JSON
    cannot hold by its repr)."""
    try:
        return json_safe(_readable(value), "channel value")
    except (ValueTypeError, TypeError, ValueError):
        return repr(value)
