"""A LangGraph checkpointer backed by a lithify journal: ``JournalSaver``.

    saver = JournalSaver(Journal.open("graph.db", ThreadState))
    graph = builder.compile(checkpointer=saver)

Each thread is a branch (``langgraph:<thread_id>``); every checkpoint and every set of pending
writes is a delta on it, so a thread's history is hash-chained, verifiable and time-travellable
like any journal. Each checkpoint delta stores only the channels that changed (one entry per
channel), and the branch state (``ThreadState``) keeps the latest value of every channel in
readable form, so ``branch.diff(a, b)`` shows which fields a step changed. ``copy_thread`` is
a fork (one row, O(1)). Being append-only, ``delete_thread``, ``prune`` and
``delete_for_runs`` append markers that hide what they remove; nothing is erased.

Install with ``pip install 'lithify-workbench[langgraph]'``.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
)

from ..errors import Conflict, NotFound
from ..journal import Journal
from .states import SharedState, ThreadState, _pack, _readable, _unpack

__all__ = ["PREFIX", "JournalSaver", "SharedState", "ThreadState"]

PREFIX = "langgraph:"


class _Thread:
    """The in-memory index of one thread's branch, caught up from the journal on demand."""

    def __init__(self) -> None:
        self.head = 0
        self.checkpoints: dict[str, dict[str, dict[str, Any]]] = {}
        self.blobs: dict[tuple[str, str, Any], dict[str, str]] = {}
        self.writes: dict[
            tuple[str, str], dict[tuple[str, int], tuple[str, str, dict[str, str], str]]
        ] = {}

    def fold(self, delta: dict[str, Any]) -> None:
        kind = delta.get("lg")
        if kind == "checkpoint":
            ns = delta["ns"]
            self.checkpoints.setdefault(ns, {})[delta["id"]] = delta
            for name, entry in delta.get("blobs", {}).items():
                self.blobs[(ns, name, entry["v"])] = entry["value"]
        elif kind == "writes":
            outer = self.writes.setdefault((delta["ns"], delta["checkpoint_id"]), {})
            for idx, channel, value in delta["writes"]:
                key = (delta["task_id"], idx)
                if idx >= 0 and key in outer:
                    continue
                outer[key] = (delta["task_id"], channel, value, delta.get("task_path", ""))
        elif kind == "deleted":
            self.checkpoints, self.blobs, self.writes = {}, {}, {}
        elif kind == "prune":
            for ns, keep in delta["keep"].items():
                self.checkpoints[ns] = {
                    k: v for k, v in self.checkpoints.get(ns, {}).items() if k in keep
                }
        elif kind == "forget":
            drop = set(delta["checkpoints"])
            for ns in self.checkpoints:
                self.checkpoints[ns] = {
                    k: v for k, v in self.checkpoints[ns].items() if k not in drop
                }


class JournalSaver(BaseCheckpointSaver[str]):
    """LangGraph's checkpointer interface on a journal (sync and async)."""

    def __init__(self, journal: Journal, *, serde: Any = None) -> None:
        super().__init__(serde=serde)
        self.journal = journal
        self._threads: dict[str, _Thread] = {}
        self._handles: dict[str, Any] = {}
        self._lock = threading.RLock()  # LangGraph may save from a background thread

    # -- threads --------------------------------------------------------------------------

    def _branch(self, thread_id: str, create: bool = False) -> Any:
        handle = self._handles.get(thread_id)
        if handle is not None:
            return handle
        name = PREFIX + str(thread_id)
        try:
            handle = self.journal.branch(name)
        except NotFound:
            if not create:
                return None
            handle = self.journal.root().fork_at(0, name=name, params={"thread_id": str(thread_id)})
        self._handles[thread_id] = handle
        return handle

    def _thread(self, thread_id: str) -> _Thread | None:
        with self._lock:
            return self._catch_up(thread_id)

    def _catch_up(self, thread_id: str) -> _Thread | None:
        b = self._branch(thread_id)
        if b is None:
            return None
        t = self._threads.get(thread_id)
        if t is None or t.head > b.head:
            t = self._threads[thread_id] = _Thread()
        if t.head < b.head:
            for rec in b.history(t.head + 1, b.head):
                if rec.kind == "delta" and isinstance(rec.payload, dict):
                    delta = self._unwrap(rec.payload)
                    if delta is not None:
                        t.fold(delta)
            t.head = b.head
        return t

    def _append(self, thread_id: str, delta: dict[str, Any]) -> None:
        with self._lock:
            b = self._branch(thread_id, create=True)
            self._thread(thread_id)
            self._write(thread_id, b, delta)
            t = self._threads[thread_id]
            t.fold(json.loads(json.dumps(delta)))
            t.head = b.head

    # Hooks for a saver that keeps threads in another shape of branch (StateForgeCheckpointer
    # keeps each checkpoint as a session snapshot): how a delta is written and read back.

    def _write(self, thread_id: str, b: Any, delta: dict[str, Any]) -> None:
        """Append one LangGraph delta (a checkpoint, writes, a marker) to the thread's branch."""
        b.apply(delta)

    def _unwrap(self, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The LangGraph delta an event of the thread's branch holds (None: not one)."""
        return payload

    def _thread_ids(self) -> list[str]:
        return [
            b.name[len(PREFIX) :]
            for b in self.journal.branches()
            if b.name and b.name.startswith(PREFIX)
        ]

    # -- diffs ----------------------------------------------------------------------------

    def field_units(self, config: Any) -> dict[str, Any]:
        """A checkpoint's state as units: each top-level field of ``channel_values`` one KV
        unit (LangGraph's internal channels left out), keyed by identity."""
        from .. import units

        tup = self.get_tuple(config)
        if tup is None:
            raise NotFound(f"no checkpoint for {config!r}")
        thread = str(tup.config["configurable"]["thread_id"])
        values = tup.checkpoint.get("channel_values", {})
        out = {}
        for name in sorted(values):
            if name.startswith(("__", "branch:")):
                continue
            u = units.kv(thread, key=name, value=_readable(values[name]), source="langgraph")
            out[u.identity] = u.to_json()
        return out

    def diff(self, a: Any, b: Any) -> dict[str, list[str]]:
        """Which state fields changed from checkpoint ``a`` to ``b`` (configs as LangGraph
        gives them): {"added", "modified", "removed"} field names, no version churn."""
        from .. import units

        d = units.diff_units(self.field_units(a), self.field_units(b))
        return {
            "added": [x["key"] for x in d["added"]],
            "modified": [m["after"]["key"] for m in d["modified"]],
            "removed": [x["key"] for x in d["removed"]],
        }

    # -- reads ----------------------------------------------------------------------------

    def _tuple(self, thread_id: str, ns: str, cid: str, t: _Thread) -> CheckpointTuple:
        rec = t.checkpoints[ns][cid]
        checkpoint: Checkpoint = self.serde.loads_typed(_unpack(rec["checkpoint"]))
        values = {}
        for channel, version in checkpoint["channel_versions"].items():
            blob = t.blobs.get((ns, channel, version))
            if blob is not None and blob["t"] != "empty":
                values[channel] = self.serde.loads_typed(_unpack(blob))
        writes = t.writes.get((ns, cid), {})
        ordered = [writes[k] for k in sorted(writes, key=lambda k: (k[0], k[1]))]
        parent = rec.get("parent")
        return CheckpointTuple(
            config={
                "configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": cid}
            },
            checkpoint=Checkpoint(**{**checkpoint, "channel_values": values}),
            metadata=self.serde.loads_typed(_unpack(rec["metadata"])),
            pending_writes=[
                (task, channel, self.serde.loads_typed(_unpack(v)))
                for task, channel, v, _ in ordered
            ],
            parent_config={
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": ns,
                    "checkpoint_id": parent,
                }
            }
            if parent
            else None,
        )

    def get_tuple(self, config: Any) -> CheckpointTuple | None:
        thread_id = str(config["configurable"]["thread_id"])
        ns = config["configurable"].get("checkpoint_ns", "")
        t = self._thread(thread_id)
        if t is None or not t.checkpoints.get(ns):
            return None
        cid = get_checkpoint_id(config) or max(t.checkpoints[ns])
        if cid not in t.checkpoints[ns]:
            return None
        return self._tuple(thread_id, ns, cid, t)

    def list(
        self,
        config: Any,
        *,
        filter: dict[str, Any] | None = None,
        before: Any = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        thread_ids = [str(config["configurable"]["thread_id"])] if config else self._thread_ids()
        want_ns = config["configurable"].get("checkpoint_ns") if config else None
        want_id = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        n = 0
        for thread_id in thread_ids:
            t = self._thread(thread_id)
            if t is None:
                continue
            for ns, cps in t.checkpoints.items():
                if want_ns is not None and ns != want_ns:
                    continue
                for cid in sorted(cps, reverse=True):
                    if (want_id and cid != want_id) or (before_id and cid >= before_id):
                        continue
                    tup = self._tuple(thread_id, ns, cid, t)
                    if filter and not all(tup.metadata.get(k) == v for k, v in filter.items()):
                        continue
                    if limit is not None and n >= limit:
                        return
                    n += 1
                    yield tup

    # -- writes ---------------------------------------------------------------------------

    def put(
        self,
        config: Any,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Any:
        c: dict[str, Any] = dict(checkpoint)
        thread_id = str(config["configurable"]["thread_id"])
        ns = config["configurable"].get("checkpoint_ns", "")
        values: dict[str, Any] = dict(c.pop("channel_values", {}))
        blobs = {}
        for name, version in new_versions.items():
            if name in values:
                blobs[name] = {"v": version, "value": _pack(self.serde.dumps_typed(values[name]))}
            else:
                blobs[name] = {"v": version, "value": {"t": "empty", "b64": ""}}
        self._append(
            thread_id,
            {
                "lg": "checkpoint",
                "ns": ns,
                "id": checkpoint["id"],
                "parent": config["configurable"].get("checkpoint_id"),
                "checkpoint": _pack(self.serde.dumps_typed(c)),
                "metadata": _pack(
                    self.serde.dumps_typed(get_checkpoint_metadata(config, metadata))
                ),
                "blobs": blobs,
            },
        )
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def put_writes(
        self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        thread_id = str(config["configurable"]["thread_id"])
        ns = config["configurable"].get("checkpoint_ns", "")
        cid = config["configurable"]["checkpoint_id"]
        rows = [
            [WRITES_IDX_MAP.get(channel, idx), channel, _pack(self.serde.dumps_typed(value))]
            for idx, (channel, value) in enumerate(writes)
        ]
        self._append(
            thread_id,
            {
                "lg": "writes",
                "ns": ns,
                "checkpoint_id": cid,
                "task_id": task_id,
                "task_path": task_path,
                "writes": rows,
            },
        )

    def delete_thread(self, thread_id: str) -> None:
        if self._branch(str(thread_id)) is not None:
            self._append(str(thread_id), {"lg": "deleted"})

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """A fork of the source thread's branch: one row, whatever the thread's length."""
        src = self._branch(str(source_thread_id))
        if src is None:
            raise NotFound(f"no LangGraph thread {source_thread_id!r} in this journal")
        if self._branch(str(target_thread_id)) is not None:
            raise Conflict(f"thread {target_thread_id!r} already exists; pick another id")
        self._handles[str(target_thread_id)] = src.fork(
            name=PREFIX + str(target_thread_id), params={"thread_id": str(target_thread_id)}
        )

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        for thread_id in thread_ids:
            t = self._thread(str(thread_id))
            if t is None:
                continue
            if strategy == "delete":
                self.delete_thread(str(thread_id))
            elif strategy == "keep_latest":
                keep = {ns: [max(cps)] for ns, cps in t.checkpoints.items() if cps}
                self._append(str(thread_id), {"lg": "prune", "keep": keep})
            else:
                raise ValueError(f"unknown prune strategy {strategy!r}: keep_latest or delete")

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        runs = set(run_ids)
        for thread_id in self._thread_ids():
            t = self._thread(thread_id)
            if t is None:
                continue
            drop = [
                cid
                for cps in t.checkpoints.values()
                for cid, rec in cps.items()
                if self.serde.loads_typed(_unpack(rec["metadata"])).get("run_id") in runs
            ]
            if drop:
                self._append(thread_id, {"lg": "forget", "checkpoints": drop})

    def get_next_version(self, current: str | int | None, channel: Any = None) -> str:
        if current is None:
            v = 0
        elif isinstance(current, int):
            v = current
        else:
            v = int(str(current).split(".")[0])
        return f"{v + 1:032}.{random.random():016}"

    # -- async: the same code, through ``_off`` (inline here; on a worker thread in a
    # subclass whose store has one)

    async def _off(self, fn: Any, /, *args: Any, **kw: Any) -> Any:
        """Run a sync method for its coroutine twin."""
        return fn(*args, **kw)

    async def aget_tuple(self, config: Any) -> CheckpointTuple | None:
        found: CheckpointTuple | None = await self._off(self.get_tuple, config)
        return found

    async def alist(
        self,
        config: Any,
        *,
        filter: dict[str, Any] | None = None,
        before: Any = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        def collect() -> list[CheckpointTuple]:
            return list(self.list(config, filter=filter, before=before, limit=limit))

        for item in await self._off(collect):
            yield item

    async def aput(
        self,
        config: Any,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Any:
        return await self._off(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await self._off(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self._off(self.delete_thread, thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._off(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._off(self.prune, thread_ids, strategy=strategy)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._off(self.delete_for_runs, run_ids)
