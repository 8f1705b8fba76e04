"""The contract every journal backend keeps, as tests, one class per role of the seam
(``workbench.storage.base``): eventsourcing's way, one abstract test class per recorder tier.

A test file runs them on a backend by giving a ``backend`` fixture (a ``Backend``: how to open
a store) and subclassing each role's contract; ``tests/test_storage_contract.py`` (SQLite) and
``tests/test_postgres.py`` do. ``IntentStoreContract`` does the same for where effects are
announced. Nothing here knows SQL: the tests talk to the protocols only.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from workbench.errors import (
    BranchConflict,
    Busy,
    Conflict,
    InvalidValue,
    NotAJournal,
    NotFound,
    ReadOnly,
    WorkbenchError,
)
from workbench.events import ZERO_HASH, event_hash, snapshot_digest
from workbench.storage import IntentStore, Storage, read_observations

MAIN = [(0, 1, None)]  # main's resolved history: one segment, all of it
T0 = 1_700_000_000_000  # a Chain's event at seq n is committed at T0 + n


class Chain:
    """Builds correctly chained event rows for one branch, as a journal would."""

    def __init__(self, branch: int = 0, seq: int = 0, parent: bytes = ZERO_HASH) -> None:
        self.branch, self.seq, self.parent = branch, seq, parent
        self.hashes: dict[int, bytes] = {}

    def row(self, payload: str, kind: str = "delta", extra: tuple[Any, ...] = ()) -> tuple:
        self.seq += 1
        h = event_hash(self.parent, kind, payload)
        row = (self.branch, self.seq, kind, h, self.parent, T0 + self.seq, payload)
        self.parent = self.hashes[self.seq] = h
        return (*row, *extra)

    def plain(self, texts: list[str], kind: str = "delta") -> tuple[list[bytes], list[str]]:
        """Hashes and texts of the next events, as ``append_batch`` takes them (the chain moves
        past them)."""
        hashes = []
        for text in texts:
            self.seq += 1
            self.parent = self.hashes[self.seq] = event_hash(self.parent, kind, text)
            hashes.append(self.parent)
        return hashes, texts


class Backend:
    """How the contract opens stores of one backend; ``persistent`` says whether a store opened
    again at the same path sees what the first one wrote."""

    persistent = True

    def open(self, path: Path, readonly: bool = False) -> Storage:
        raise NotImplementedError


class RoleContract:
    """What every role's contract shares: the ``backend`` fixture of the file that runs it, a
    fresh ``store``, and appending a few events."""

    backend: Backend

    @pytest.fixture(autouse=True)
    def _use_backend(self, backend: Backend) -> None:
        self.backend = backend

    def open_store(self, path: Path, readonly: bool = False) -> Storage:
        return self.backend.open(path, readonly)

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Storage]:
        s = self.open_store(tmp_path / "contract.db")
        yield s
        s.close()

    def append(self, s: Storage, chain: Chain, n: int, kind: str = "delta") -> list[int]:
        seqs = []
        for i in range(n):
            s.append(chain.row(f'{{"i":{chain.seq + 1},"n":{i}}}', kind), "plain")
            seqs.append(chain.seq)
        return seqs

    def needs_persistence(self, why: str) -> None:
        if not self.backend.persistent:
            pytest.skip(why)


class StoreCoreContract(RoleContract):
    """``StoreCore``: transactions, reopening, read-only opens, closing."""

    def test_an_atomic_block_that_raises_writes_nothing(self, store: Storage) -> None:
        chain = Chain()
        with pytest.raises(RuntimeError):
            with store.atomic():
                self.append(store, chain, 2)
                assert store.in_transaction
                raise RuntimeError("abandon")
        assert store.head(0) is None and not store.in_transaction
        chain = Chain()
        with store.atomic():
            self.append(store, chain, 1)
            with pytest.raises(RuntimeError):
                with store.atomic():  # a savepoint: only its own writes go
                    self.append(store, chain, 1)
                    raise RuntimeError("inner")
        assert store.head(0).seq == 1  # type: ignore[union-attr]

    def test_what_was_committed_is_there_after_reopening(self, tmp_path: Path) -> None:
        self.needs_persistence("this backend keeps nothing after close")
        path = tmp_path / "again.db"
        s = self.open_store(path)
        chain = Chain()
        self.append(s, chain, 3)
        s.close()
        s = self.open_store(path)
        try:
            assert s.head(0).seq == 3  # type: ignore[union-attr]
            assert bytes(s.head(0).hash) == chain.hashes[3]  # type: ignore[union-attr]
        finally:
            s.close()

    def test_a_read_only_store_refuses_writes_before_anything_happens(self, tmp_path: Path) -> None:
        self.needs_persistence("a read-only view needs something stored")
        path = tmp_path / "ro.db"
        s = self.open_store(path)
        self.append(s, Chain(), 1)
        s.close()
        ro = self.open_store(path, readonly=True)
        try:
            assert ro.readonly
            with pytest.raises(ReadOnly):
                ro.writable()
            with pytest.raises(ReadOnly):
                ro.append(Chain(0, 1, bytes(ro.head(0).hash)).row("{}"), "plain")  # type: ignore[union-attr]
            with pytest.raises(ReadOnly):
                ro.set_meta("note", "refused")
            assert ro.head(0).seq == 1 and "note" not in ro.meta  # type: ignore[union-attr]
        finally:
            ro.close()

    def test_a_closed_store_is_a_clear_error(self, tmp_path: Path) -> None:
        s = self.open_store(tmp_path / "closed.db")
        s.close()
        s.close()  # idempotent
        with pytest.raises(WorkbenchError, match="closed"):
            s.append(Chain().row("{}"), "plain")

    def test_metadata_is_recorded_and_kept(self, tmp_path: Path) -> None:
        path = tmp_path / "meta.db"
        s = self.open_store(path)
        try:
            s.set_meta("contract.note", "first")
            s.set_meta("contract.note", "kept")  # set again: one value per key
            assert s.meta["contract.note"] == "kept"
        finally:
            s.close()
        if self.backend.persistent:
            s = self.open_store(path)
            try:
                assert s.meta["contract.note"] == "kept"
            finally:
                s.close()

    def test_a_named_lock_makes_other_handles_wait(self, tmp_path: Path) -> None:
        self.needs_persistence("a second handle of this backend is another store")
        path = tmp_path / "locks.db"
        holder, other = self.open_store(path), self.open_store(path)
        got = threading.Event()

        def take() -> None:
            with other.exclusive("copy"):
                got.set()

        waiter = threading.Thread(target=take)
        try:
            with holder.exclusive("copy"):
                with other.exclusive("another"):  # another name does not wait
                    pass
                waiter.start()
                assert not got.wait(0.2)  # the same name waits while it is held
                self.append(holder, Chain(), 1)  # and the holder goes on writing
            waiter.join(30)
            assert got.is_set()  # released: the waiter has it
            assert other.head(0).seq == 1  # type: ignore[union-attr]
        finally:
            if waiter.is_alive():
                waiter.join(30)
            holder.close()
            other.close()

    def test_upkeep_keeps_every_event(self, store: Storage) -> None:
        before = store.size_bytes()
        chain = Chain()
        store.append_many(
            [(chain.row(f'{{"pad":"{"x" * 500}","i":{i}}}'), "plain") for i in range(300)]
        )
        grown = store.size_bytes()
        assert grown > before if self.backend.persistent else grown >= 0
        store.vacuum()
        assert store.quick_check() == []  # sound
        assert [e.seq for e in store.events(MAIN, 1, 1000)] == list(range(1, 301))
        assert bytes(store.head(0).hash) == chain.hashes[300]  # type: ignore[union-attr]

    def test_rekey_changes_the_key_of_an_encrypted_store_only(self, tmp_path: Path) -> None:
        path = tmp_path / "key.db"
        s = self.open_store(path)
        chain = Chain()
        self.append(s, chain, 2)
        if not s.encrypted:
            with pytest.raises(InvalidValue, match="encrypted"):
                s.rekey(bytes(range(32, 64)))
            assert s.head(0).seq == 2  # type: ignore[union-attr]
            s.close()
            return
        s.rekey(bytes(range(32, 64)))
        self.append(s, chain, 1)  # the store goes on under its new key
        s.close()
        with pytest.raises(NotAJournal):  # the old key opens it no more
            self.open_store(path)


class EventLogContract(RoleContract):
    """``EventLog``: appends that follow the stored head, all or nothing; reads by history, by
    position and by hash."""

    def test_appended_events_read_back_in_order_with_every_field(self, store: Storage) -> None:
        chain = Chain()
        self.append(store, chain, 3)
        events = store.events(MAIN, 1, 3)
        assert [e.seq for e in events] == [1, 2, 3]
        e = events[1]
        assert (e.branch, e.kind, bytes(e.hash), bytes(e.parent_hash)) == (
            0,
            "delta",
            chain.hashes[2],
            chain.hashes[1],
        )
        assert e.payload == '{"i":2,"n":1}' and e.ts == 1_700_000_000_002
        assert store.event_at(0, 2) == e
        assert [e.position for e in events] == sorted({e.position for e in events})
        head = store.head(0)
        assert head is not None and (head.seq, bytes(head.hash)) == (3, chain.hashes[3])
        assert store.events(MAIN, 2, 2) == [e]

    def test_hashes_at_reads_many_points_at_once(self, store: Storage) -> None:
        chain = Chain()
        self.append(store, chain, 4)
        got = store.hashes_at([(0, 2), (0, 4), (0, 9), (7, 1), (0, 2)])
        assert got == {(0, 2): chain.hashes[2], (0, 4): chain.hashes[4]}  # missing ones left out
        assert store.hashes_at([]) == {}

    def test_an_append_that_does_not_follow_the_head_is_refused(self, store: Storage) -> None:
        chain = Chain()
        self.append(store, chain, 2)
        gap = Chain(0, 3, chain.parent)  # seq 4 while the head is 2
        with pytest.raises(BranchConflict):
            store.append(gap.row("{}"), "plain")
        again = Chain(0, 1, chain.hashes[1])  # seq 2 a second time
        with pytest.raises(BranchConflict):
            store.append(again.row('{"other":1}'), "plain")
        assert [e.seq for e in store.events(MAIN, 1, 10)] == [1, 2]
        assert store.event_at(0, 2) is not None
        assert store.event_at(0, 2).payload == '{"i":2,"n":1}'  # type: ignore[union-attr]

    def test_append_many_is_all_or_nothing(self, store: Storage) -> None:
        chain = Chain()
        self.append(store, chain, 1)
        good = Chain(0, 1, chain.parent)
        rows = [(good.row(f'{{"k":{i}}}'), "plain") for i in range(3)]
        store.append_many(rows)
        assert store.head(0).seq == 4  # type: ignore[union-attr]
        bad = Chain(0, 4, good.parent)
        batch = [(bad.row('{"k":5}'), "plain"), (bad.row('{"k":6}'), "plain")]
        batch.append((Chain(0, 9, bad.parent).row("{}"), "plain"))  # a gap at the end
        with pytest.raises(BranchConflict):
            store.append_many(batch)
        assert store.head(0).seq == 4  # type: ignore[union-attr]
        assert [e.seq for e in store.events(MAIN, 1, 10)] == [1, 2, 3, 4]

    def test_append_runs_writes_several_branches_at_once_or_nothing(self, store: Storage) -> None:
        chain = Chain()
        self.append(store, chain, 2)
        (fork,) = store.insert_branches([(None, 0, 1, "{}", None)])
        main_more, on_fork = Chain(0, 2, chain.parent), Chain(fork, 1, chain.hashes[1])
        store.append_runs(
            [
                [(main_more.row('{"m":3}'), "plain"), (main_more.row('{"m":4}'), "plain")],
                [
                    (on_fork.row('{"f":2}'), "plain"),
                    (on_fork.row('{"o":1}', "observe", ("o", 1.0)), "observe"),
                ],
            ]
        )
        assert store.head(0).seq == 4 and store.head(fork).seq == 3  # type: ignore[union-attr]
        assert [e.kind for e in store.events([(0, 0, 1), (fork, 2, None)], 1, 9)] == [
            "delta",
            "delta",
            "observe",
        ]
        good = Chain(0, 4, main_more.parent)
        gap = Chain(fork, 5, on_fork.parent)  # seq 6 on a fork whose head is 3
        with pytest.raises(BranchConflict):
            store.append_runs([[(good.row('{"m":5}'), "plain")], [(gap.row("{}"), "plain")]])
        assert store.head(0).seq == 4 and store.head(fork).seq == 3  # type: ignore[union-attr]

    def test_append_batch_writes_chained_events_and_their_snapshots(self, store: Storage) -> None:
        chain = Chain()
        self.append(store, chain, 1)
        parent = chain.parent
        first, texts = chain.plain(['{"b":0}', '{"b":1}'])
        rest, more = chain.plain(['{"b":2}', '{"b":3}', '{"b":4}'])
        state = '{"total":5}'
        sealed = snapshot_digest(chain.hashes[6], state)
        chunks = [(first, texts), ([], []), (rest, more)]
        store.append_batch(
            0, 2, "delta", parent, T0 + 9, chunks, [(6, state, sealed)], '{"v":2}', 5
        )
        events = store.events(MAIN, 1, 10)
        assert [(e.seq, e.payload, e.ts) for e in events[1:]] == [
            (i + 2, f'{{"b":{i}}}', T0 + 9) for i in range(5)
        ]
        assert [bytes(e.hash) for e in events] == [chain.hashes[i] for i in range(1, 7)]
        assert [bytes(e.parent_hash) for e in events[1:]] == [chain.hashes[i] for i in range(1, 6)]
        snap = store.snapshot_at(0, 6)
        assert snap is not None and (snap.state, bytes(snap.digest), snap.built) == (
            state,
            sealed,
            '{"v":2}',
        )

    def test_append_batch_is_all_or_nothing(self, store: Storage) -> None:
        chain = Chain()
        self.append(store, chain, 2)
        stale = Chain(0, 1, chain.hashes[1])  # seq 2 again
        with pytest.raises(BranchConflict):
            store.append_batch(0, 2, "delta", chain.hashes[1], T0, [stale.plain(["{}"])], [])
        ahead = Chain(0, 2, chain.parent)

        def failing() -> Iterator[tuple[list[bytes], list[str]]]:
            yield ahead.plain(['{"a":3}'])
            raise RuntimeError("the source of the batch failed")

        with pytest.raises(RuntimeError, match="source"):
            store.append_batch(0, 3, "delta", chain.parent, T0, failing(), [])
        assert store.head(0).seq == 2 and store.event_at(0, 3) is None  # type: ignore[union-attr]
        with store.atomic():
            with pytest.raises(WorkbenchError, match="open transaction"):
                store.append_batch(0, 3, "delta", chain.parent, T0, [Chain(0, 2).plain(["{}"])], [])
        assert store.top_position() == store.tail(0, None)[-1].position

    def test_a_long_batch_checks_once_that_it_follows_the_head(self, store: Storage) -> None:
        chain = Chain()
        self.append(store, chain, 1)
        n = 300  # past TRIGGERLESS_BATCH: the backends check the first row only
        gap = Chain(0, 2, chain.parent).plain([f'{{"g":{i}}}' for i in range(n)])
        with pytest.raises(BranchConflict):
            store.append_batch(0, 3, "delta", chain.parent, T0, [gap], [], rows=n)
        assert store.head(0).seq == 1  # type: ignore[union-attr]
        parent = chain.parent
        batch = chain.plain([f'{{"l":{i}}}' for i in range(n)])
        store.append_batch(0, 2, "delta", parent, T0, [batch], [], rows=n)
        head = store.head(0)
        assert head is not None and (head.seq, bytes(head.hash)) == (n + 1, chain.hashes[n + 1])
        with pytest.raises(BranchConflict):  # every append is checked again afterwards
            store.append(Chain(0, n + 2, chain.parent).row("{}"), "plain")
        assert store.top_position() == store.tail(0, None)[-1].position
        assert len(store.tail(0, None)) == n + 1

    def test_landed_tells_a_stored_event_from_a_lost_one(self, store: Storage) -> None:
        chain = Chain()
        self.append(store, chain, 2)
        assert store.landed(0, 2, chain.hashes[2])
        assert not store.landed(0, 2, chain.hashes[1])  # another event holds that seq
        assert not store.landed(0, 3, chain.hashes[2])  # nothing is there
        assert store.landed(0, 2, chain.hashes[2], Busy("the answer to COMMIT was lost"))
        assert not store.landed(0, 2, chain.hashes[2], BranchConflict("refused: nothing written"))
        assert not store.landed(0, 2, chain.hashes[2], RuntimeError("not the store's error"))

    def test_shapes_store_their_columns(self, store: Storage) -> None:
        chain = Chain()
        store.append(chain.row('{"x":1}', "delta", (1_600_000_000_000, "id-1")), "dated_identified")
        key = b"k" * 32
        store.append(chain.row('{"key":"tool:a","result":1}', "effect", (key, 1.5, 1)), "effect")
        store.append(
            chain.row('{"metric":"recall","value":0.5}', "observe", ("recall", 0.5)), "observe"
        )
        found = store.event_by_id("id-1")
        assert found is not None and (found.branch, found.seq, found.kind) == (0, 1, "delta")
        assert store.effect_keys(MAIN, 3) == {key: (0, 2)}
        assert store.effect_payload(0, 2) == '{"key":"tool:a","result":1}'
        assert store.committed_keys(0, [key, b"z" * 32]) == {key}
        observed = store.event_at(0, 3)
        assert observed is not None and observed.kind == "observe"
        prov = store.provenance(0, 2)
        assert prov is not None and prov.fx_ms == 1.5 and prov.attempts == 1
        assert store.provenance(0, 1).occurred_at == 1_600_000_000_000  # type: ignore[union-attr]

    def test_a_history_is_read_by_kind_by_column_and_by_time(self, store: Storage) -> None:
        chain, key = Chain(), b"k" * 32
        store.append(chain.row('{"x":1}', "delta", (T0 + 50,)), "dated")  # happened after it was
        store.append(
            chain.row('{"name":"recall","value":0.5}', "observe", ("recall", 0.5)), "observe"
        )
        store.append(chain.row('{"key":"tool:a","result":1}', "effect", (key, 2.0, 1)), "effect")
        store.append(chain.row('{"c":1}', "compact"), "plain")
        store.append(chain.row('{"x":5}'), "plain")
        (fork,) = store.insert_branches([(None, 0, 3, "{}", None)])
        on_fork = Chain(fork, 3, chain.hashes[3])
        store.append(on_fork.row('{"x":40}', "delta", (T0 - 10,)), "dated")  # happened first
        store.append(on_fork.row('{"x":50}'), "plain")
        history = [(0, 0, 3), (fork, 4, None)]  # root first, as a journal resolves it

        # replay reads every event with its hashes through the fork point (what it checks the
        # chain by), the payloads of deltas and compactions only
        h, f = chain.hashes, on_fork.hashes
        assert [
            tuple(bytes(v) if isinstance(v, memoryview) else v for v in e)
            for e in store.replay_events(history, 1, 10)
        ] == [
            (1, "delta", h[1], ZERO_HASH, '{"x":1}'),
            (2, "observe", h[2], h[1], None),
            (3, "effect", h[3], h[2], None),
            (4, "delta", f[4], h[3], '{"x":40}'),
            (5, "delta", f[5], f[4], '{"x":50}'),
        ]
        assert [(s, k, p) for s, k, _, _, p in store.replay_events(MAIN, 2, 5)] == [
            (2, "observe", None),
            (3, "effect", None),
            (4, "compact", '{"c":1}'),
            (5, "delta", '{"x":5}'),
        ]

        # replication reads every column of a branch's own events, a page at a time
        observed, effect = store.events_after(0, 1, 2)
        assert (observed.seq, observed.metric, observed.value, observed.key_hash) == (
            2,
            "recall",
            0.5,
            None,
        )
        assert (effect.seq, bytes(effect.key_hash or b""), effect.fx_ms, effect.attempts) == (
            3,
            key,
            2.0,
            1,
        )
        assert (bytes(effect.hash), bytes(effect.parent_hash)) == (chain.hashes[3], chain.hashes[2])
        assert store.events_after(0, 0, 1)[0].occurred_at == T0 + 50
        assert [e.seq for e in store.events_after(fork, 0, 10)] == [4, 5]  # its own only
        assert store.events_after(0, 5, 10) == []

        # verify reads a branch's own events with their derived columns
        own = list(store.own_events(0))
        assert [r[0] for r in own] == [1, 2, 3, 4, 5]
        seq, kind, h, parent, payload, kh, metric, value = own[2]
        assert (kind, bytes(h), bytes(parent), payload) == (
            "effect",
            chain.hashes[3],
            chain.hashes[2],
            '{"key":"tool:a","result":1}',
        )
        assert bytes(kh or b"") == key and (metric, value) == (None, None)
        assert own[1][5:] == (None, "recall", 0.5)
        assert [r[0] for r in store.own_events(fork)] == [4, 5]

        # time travel by commit time (seq n was committed at T0 + n)
        assert store.last_seq_at_time(history, T0 + 4) == 4
        assert store.last_seq_at_time(MAIN, T0 + 2) == 2
        assert store.last_seq_at_time(history, T0) == 0

        # world time: when it happened (else when it was recorded), in that order
        def world(hi: int, valid: int, known: int | None = None) -> list[tuple[int, int]]:
            return [(s, w) for s, _, _, w in store.world_events(history, hi, valid, known)]

        assert world(10, T0 + 100) == [(4, T0 - 10), (5, T0 + 5), (1, T0 + 50)]
        assert world(10, T0 + 20) == [(4, T0 - 10), (5, T0 + 5)]  # seq 1 had not happened yet
        assert world(4, T0 + 100) == [(4, T0 - 10), (1, T0 + 50)]  # up to seq 4
        assert world(10, T0 + 100, known=T0 + 4) == [(4, T0 - 10), (1, T0 + 50)]  # recorded by then
        assert store.world_events(MAIN, 5, T0 + 100) == [
            (4, "compact", '{"c":1}', T0 + 4),
            (5, "delta", '{"x":5}', T0 + 5),
            (1, "delta", '{"x":1}', T0 + 50),
        ]

    def test_tail_and_hash_prefix_lookups(self, store: Storage) -> None:
        chain = Chain()
        self.append(store, chain, 5)
        everything = store.tail(0, None)
        assert [e.seq for e in everything] == [1, 2, 3, 4, 5]
        assert store.top_position() == everything[-1].position
        assert [e.seq for e in store.tail(everything[1].position, 2)] == [3, 4]
        h = chain.hashes[4]
        lo = h[:4]
        hi = (int.from_bytes(lo, "big") + 1).to_bytes(5, "big")[-4:] if lo != b"\xff" * 4 else None
        hits = store.by_hash_prefix(lo, hi)
        assert [(bytes(x.hash), x.branch, x.seq) for x in hits] == [(h, 0, 4)]
        assert len(store.by_hash_prefix(bytes(4), None, limit=3)) == 3  # [lo, end), limited

    def test_threads_appending_to_their_own_branches_lose_nothing(self, store: Storage) -> None:
        self.append(store, Chain(), 1)
        ids = store.insert_branches([(None, 0, 1, "{}", None) for _ in range(4)])
        errors: list[BaseException] = []

        def write(branch: int) -> None:
            chain = Chain(branch, 1, ZERO_HASH)
            try:
                for i in range(50):
                    store.append(chain.row(f'{{"b":{branch},"i":{i}}}'), "plain")
            except BaseException as e:  # noqa: BLE001 (reported by the assertion below)
                errors.append(e)

        threads = [threading.Thread(target=write, args=(b,)) for b in ids]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert {b: store.head(b).seq for b in ids} == {b: 51 for b in ids}  # type: ignore[union-attr]


class BranchCatalogContract(RoleContract):
    """``BranchCatalog``: branches and sweeps as rows, labels and subscriber positions."""

    def test_a_new_store_has_an_empty_main_branch(self, store: Storage) -> None:
        main = store.branch_row(0)
        assert main is not None and main.name == "main" and main.parent is None
        assert store.branch_by_name("main") == main
        assert store.head(0) is None and store.heads() == {}
        assert store.events(MAIN, 1, 100) == []

    def test_forks_are_rows_and_names_are_unique(self, store: Storage) -> None:
        self.append(store, Chain(), 3)
        a, b = store.insert_branches([("a", 0, 2, '{"p":1}', None), (None, 0, 3, "{}", None)])
        row = store.branch_row(a)
        assert row is not None and (row.name, row.parent, row.fork_seq, row.params) == (
            "a",
            0,
            2,
            '{"p":1}',
        )
        assert store.fork_seq(b) == 3 and store.branch_by_name("a") == row
        assert {r.id for r in store.branch_rows(parent=0)} == {a, b}
        with pytest.raises(Conflict):
            store.insert_branches([("fresh", 0, 1, "{}", None), ("a", 0, 1, "{}", None)])
        assert store.branch_by_name("fresh") is None  # all or nothing
        fork = Chain(a, 2, ZERO_HASH)
        store.append(fork.row('{"on":"a"}'), "plain")
        history = [(0, 1, 2), (a, 3, None)]
        assert [(e.branch, e.seq) for e in store.events(history, 1, 10)] == [
            (0, 1),
            (0, 2),
            (a, 3),
        ]

    def test_heads_are_each_branchs_own_last_event(self, store: Storage) -> None:
        chain = Chain()
        self.append(store, chain, 3)
        fork, idle = store.insert_branches([("f", 0, 2, "{}", None), (None, 0, 3, "{}", None)])
        on_fork = Chain(fork, 2, chain.hashes[2])
        self.append(store, on_fork, 2)
        heads = {b: (h.seq, bytes(h.hash)) for b, h in store.heads().items()}
        assert heads == {0: (3, chain.hashes[3]), fork: (4, on_fork.hashes[4])}  # idle has none
        assert store.head(idle) is None and store.fork_seq(idle) == 3
        assert store.fork_seq(99) is None and store.branch_row(99) is None
        assert store.branch_by_name("f").id == fork  # type: ignore[union-attr]
        assert store.branch_by_name("missing") is None

    def test_a_fork_of_a_branch_that_does_not_exist_is_refused(self, store: Storage) -> None:
        self.append(store, Chain(), 1)
        with pytest.raises(NotFound, match="no branch 99 to fork from"):
            store.insert_branches([("kept", 0, 1, "{}", None), ("orphan", 99, 0, "{}", None)])
        assert [r.name for r in store.branch_rows()] == ["main"]  # all or nothing
        (fork,) = store.insert_branches([("kept", 0, 1, "{}", None)])
        assert store.branch_row(fork).parent == 0  # type: ignore[union-attr]

    def test_sweeps_tags_and_subscriptions(self, store: Storage) -> None:
        self.append(store, Chain(), 2)
        sweep = store.insert_sweep(0, 2, '{"grid":{}}')
        (fork,) = store.insert_branches([(None, 0, 2, "{}", sweep)])
        assert store.branch_row(fork).sweep == sweep  # type: ignore[union-attr]
        assert [(s.id, s.base, s.at, s.how) for s in store.sweep_rows()] == [(sweep, 0, 2, None)]
        store.set_sweep_how(sweep, '{"runner":"process"}')
        assert store.sweep_rows()[0].how == '{"runner":"process"}'  # spec unchanged, how recorded
        assert store.sweep_rows()[0].spec == '{"grid":{}}'
        store.put_tag("best", 0, 2)
        store.put_tag("best", 0, 1)  # a tag moves
        assert store.tag("best") == (0, 1) and store.tag("nothing") is None
        assert store.tags() == [("best", 0, 1)]
        assert store.subscription("reader") == 0
        store.ack("reader", 7)
        assert store.subscription("reader") == 7


class SnapshotStoreContract(RoleContract):
    """``SnapshotStore``: states sealed to an event, found by history and seq."""

    def test_snapshots(self, store: Storage) -> None:
        chain = Chain()
        self.append(store, chain, 4)
        state = '{"total":10}'
        digest = snapshot_digest(chain.hashes[3], state)
        store.put_snapshot(0, 3, state, digest, built='{"v":1}')
        snap = store.nearest_snapshot(MAIN, 4)
        assert snap is not None and (snap.seq, snap.state, bytes(snap.digest)) == (3, state, digest)
        assert bytes(snap.event_hash or b"") == chain.hashes[3] and snap.built == '{"v":1}'
        assert store.nearest_snapshot(MAIN, 2) is None
        assert store.snapshot_at(0, 3) == snap
        assert [(r.branch, r.seq) for r in store.snapshots()] == [(0, 3)]
        assert store.all_snapshot_marks() == [(0, 3, '{"v":1}')]

    def test_snapshots_are_found_newest_first_through_a_fork(self, store: Storage) -> None:
        chain = Chain()
        self.append(store, chain, 3)
        (fork,) = store.insert_branches([(None, 0, 2, "{}", None)])
        on_fork = Chain(fork, 2, chain.hashes[2])
        self.append(store, on_fork, 2)
        state = '{"s":1}'

        def seal(branch: int, seq: int, h: bytes, built: str | None) -> None:
            store.put_snapshot(branch, seq, state, snapshot_digest(h, state), built)

        seal(0, 1, chain.hashes[1], "a")
        seal(0, 2, chain.hashes[2], None)
        seal(0, 3, chain.hashes[3], "c")  # after the fork point: never the fork's
        seal(fork, 4, on_fork.hashes[4], "f")
        history = [(0, 0, 2), (fork, 3, None)]
        assert list(store.snapshot_marks(history, 10)) == [
            (fork, 4, "f"),
            (0, 2, None),
            (0, 1, "a"),
        ]
        assert list(store.snapshot_marks(history, 3)) == [(0, 2, None), (0, 1, "a")]
        assert list(store.snapshot_marks(MAIN, 10)) == [(0, 3, "c"), (0, 2, None), (0, 1, "a")]
        assert store.all_snapshot_marks() == [
            (0, 1, "a"),
            (0, 2, None),
            (0, 3, "c"),
            (fork, 4, "f"),
        ]
        near = store.nearest_snapshot(history, 3)
        assert near is not None and (near.branch, near.seq, near.built) == (0, 2, None)
        assert bytes(near.event_hash or b"") == chain.hashes[2]
        assert store.snapshot_at(fork, 3) is None
        again = '{"s":2}'
        store.put_snapshot(0, 1, again, snapshot_digest(chain.hashes[1], again), "b")
        kept = store.snapshot_at(0, 1)  # without replace, the stored one stays
        assert kept is not None and (kept.state, kept.built) == (state, "a")
        store.put_snapshot(0, 1, again, snapshot_digest(chain.hashes[1], again), "b", replace=True)
        replaced = store.snapshot_at(0, 1)
        assert replaced is not None and (replaced.state, replaced.built) == (again, "b")
        assert [(r.branch, r.seq, r.state) for r in store.snapshots()] == [
            (0, 1, again),
            (0, 2, state),
            (0, 3, state),
            (fork, 4, state),
        ]


class EffectIndexContract(RoleContract):
    """``EffectIndex``: effects found by key through the fork chain, on any open."""

    def test_effects_are_found_by_key_through_the_fork_chain(self, store: Storage) -> None:
        chain = Chain()

        def effect(c: Chain, key: bytes, result: int) -> int:
            store.append(
                c.row(f'{{"k":"{key.hex()[:4]}","r":{result}}}', "effect", (key, 1.0, 1)), "effect"
            )
            return c.seq

        a, b, c = b"a" * 32, b"b" * 32, b"c" * 32
        effect(chain, a, 1)
        effect(chain, b, 2)
        (fork,) = store.insert_branches([(None, 0, 2, "{}", None)])
        effect(chain, c, 3)  # the parent's, after the fork point: never the fork's
        effect(chain, a, 4)  # a newer result for a on the parent only
        on_fork = Chain(fork, 2, chain.hashes[2])
        effect(on_fork, b, 5)  # the fork's own, newer than the inherited one
        history = [(fork, 3, None), (0, 1, 2)]
        covered = store.catch_up_effect_index()
        assert covered == store.top_position() == store.catch_up_effect_index(write=False)

        def found(key: bytes, segments: list, upto: int = covered) -> tuple[int, int] | None:
            hit = store.find_effect_indexed(key, segments, upto)
            return None if hit is None else (hit.branch, hit.seq)

        assert found(a, history) == (0, 1) and found(a, MAIN) == (0, 4)
        assert found(b, history) == (fork, 3) and found(b, MAIN) == (0, 2)
        assert found(c, history) is None and found(c, MAIN) == (0, 3)
        assert store.effect_keys(history, 3) == {a: (0, 1), b: (fork, 3)}
        first = store.tail(0, None)[0].position
        assert store.effect_keys(history, 3, after_position=first) == {b: (fork, 3)}
        assert store.effect_keys(MAIN, 4, after_position=first) == {b: (0, 2), c: (0, 3), a: (0, 4)}
        assert store.committed_keys(fork, [a, b, c]) == {b}
        assert store.committed_keys(0, [a, b, c, b"z" * 32]) == {a, b, c}

    def test_an_effect_after_a_seq_and_one_with_the_head(self, store: Storage) -> None:
        chain = Chain()
        a, b = b"a" * 32, b"b" * 32

        def effect(key: bytes, result: int) -> None:
            store.append(chain.row(f'{{"r":{result}}}', "effect", (key, 1.0, 1)), "effect")

        effect(a, 1)
        self.append(store, chain, 1)
        effect(a, 2)
        effect(b, 3)
        after = store.find_effect_after(a, 0, 1)  # what another writer appended past seq 1
        assert after is not None and (after.branch, after.seq, after.payload) == (0, 3, '{"r":2}')
        assert store.find_effect_after(a, 0, 3) is None
        assert store.find_effect_after(b"z" * 32, 0, 0) is None
        assert store.effect_payload(0, 1) == '{"r":1}'
        (fork,) = store.insert_branches([(None, 0, 2, "{}", None)])
        covered = store.catch_up_effect_index()
        hit, head = store.find_effect_with_head(a, MAIN, covered, 0)
        assert hit is not None and (hit.branch, hit.seq, hit.payload, head) == (0, 3, '{"r":2}', 4)
        history = [(0, 0, 2), (fork, 3, None)]
        hit, head = store.find_effect_with_head(a, history, covered, fork)
        assert hit is not None and (hit.branch, hit.seq) == (0, 1)
        assert head is None  # the fork has no events of its own yet
        assert store.find_effect_with_head(b, history, covered, None) == (None, None)

    def test_a_read_only_store_finds_effects_by_key(self, tmp_path: Path) -> None:
        self.needs_persistence("a read-only view needs something stored")
        path = tmp_path / "ro-effects.db"
        s = self.open_store(path)
        chain = Chain()
        key = b"k" * 32
        s.append(chain.row('{"key":"k","result":1}', "effect", (key, 1.0, 1)), "effect")
        s.close()
        ro = self.open_store(path, readonly=True)
        try:
            covered = ro.catch_up_effect_index()  # a read-only store only says what is covered
            assert ro.effect_keys(MAIN, 1, after_position=covered) in ({}, {key: (0, 1)})
            assert key in ro.effect_keys(MAIN, 1, after_position=covered) or (
                ro.find_effect_indexed(key, MAIN, covered) is not None
            )
            assert ro.committed_keys(0, [key]) == {key}
        finally:
            ro.close()


class RunLogContract(RoleContract):
    """``RunLog``: one run record per fork, created then updated."""

    def test_a_run_record_is_created_then_updated(self, store: Storage) -> None:
        self.append(store, Chain(), 2)
        sweep = store.insert_sweep(0, 2, '{"grid":{}}')
        fork, other = store.insert_branches([(None, 0, 2, "{}", sweep), (None, 0, 2, "{}", sweep)])
        store.put_run(fork, sweep, "running", started=5, runner="process")
        store.put_run(fork, sweep, "finished", finished=9, wall_ms=4.0)
        store.put_run(other, sweep, "pending")
        run, pending = store.runs(sweep)
        assert (run.branch, run.status, run.started, run.finished, run.wall_ms) == (
            fork,
            "finished",
            5,
            9,
            4.0,
        )
        assert run.runner == "process"  # a field an update leaves out is kept
        assert (pending.branch, pending.status, pending.started) == (other, "pending", None)
        assert store.runs() == store.runs(sweep) and store.runs(sweep + 1) == []

    def test_a_run_field_no_backend_stores_is_refused(self, store: Storage) -> None:
        sweep = store.insert_sweep(0, 0, "{}")
        (fork,) = store.insert_branches([(None, 0, 0, "{}", sweep)])
        with pytest.raises(InvalidValue, match="colour"):
            store.put_run(fork, sweep, "running", colour="red")
        assert store.runs() == []


class FullTextSearchContract(RoleContract):
    """``FullTextSearch`` (optional): payloads found by words and phrases."""

    def test_full_text_search_finds_payloads(self, store: Any) -> None:
        chain = Chain()
        for text in ("a timeout in the pool", "all good", "another timeout"):
            store.append(chain.row(f'{{"note":"{text}"}}'), "plain")
        assert {h.seq for h in store.search("timeout")} == {1, 3}
        assert [h.seq for h in store.search('"all good"', MAIN)] == [2]


class ObservationReaderContract(RoleContract):
    """``ObservationReader`` (optional): measurements by position, and as a frame."""

    def test_observations_are_read_by_global_position(self, store: Any) -> None:
        chain = Chain()
        store.append(chain.row('{"x":1}'), "plain")
        for metric, value in (("recall", 0.5), ("cost", 2.0)):
            payload = f'{{"name":"{metric}","value":{value}}}'
            store.append(chain.row(payload, "observe", (metric, value)), "observe")
        obs = store.observations()
        assert [(o.branch, o.seq, o.metric, o.value) for o in obs] == [
            (0, 2, "recall", 0.5),
            (0, 3, "cost", 2.0),
        ]
        assert store.observations(since=obs[0].position) == obs[1:]
        frame = store.observations_frame()
        assert frame.columns == ["position", "branch", "seq", "metric", "value", "ts"]
        assert frame["metric"].to_list() == ["recall", "cost"]
        assert read_observations(store) == obs  # the seam's reader takes the backend's path


class IntentStoreContract:
    """Subclass with ``open_intents(tmp_path)`` returning an IntentStore (and ``close_all``)."""

    def open_intents(self, tmp_path: Path) -> IntentStore:
        raise NotImplementedError

    @pytest.fixture
    def intents(self, tmp_path: Path) -> Iterator[IntentStore]:
        s = self.open_intents(tmp_path)
        yield s
        s.close()

    def test_a_running_effect_is_announced_once(self, intents: IntentStore) -> None:
        k = b"a" * 32
        attempt, ann, live = intents.announce(0, k, "tool:a")
        assert attempt == 1 and live is None and ann
        assert intents.pending() == {(0, k): "tool:a"} and intents.pending(1) == {}
        _, refused, holder = intents.announce(0, k, "tool:a")  # still running: refused
        assert holder == ann
        intents.withdraw(0, k, refused)  # what a caller does with a refused announcement
        intents.finished(0, k, ann)  # committed: the journal shows it, the slot is free
        again, ann2, live = intents.announce(0, k, "tool:a")
        assert live is None and again > attempt
        intents.withdraw(0, k, ann2)

    def test_a_withdrawn_effect_leaves_no_unknown_outcome(self, intents: IntentStore) -> None:
        k = b"b" * 32
        _, ann, _ = intents.announce(2, k, "tool:b")
        intents.withdraw(2, k, ann)
        assert intents.pending() == {}

    def test_a_second_announcement_counts_attempts(self, intents: IntentStore) -> None:
        k = b"c" * 32
        first, ann1, _ = intents.announce(0, k, "tool:c")
        intents.settle(0, k, ann1)  # ran, but its result was not committed: outcome unknown
        assert intents.pending() == {(0, k): "tool:c"}
        second, ann2, live = intents.announce(0, k, "tool:c")
        assert second == first + 1 and ann2 != ann1 and live is None
        intents.withdraw(0, k, ann2)  # the retry ran nothing: the first outcome is still unknown
        assert intents.pending() == {(0, k): "tool:c"}

    def test_compaction_keeps_what_is_still_open(self, intents: IntentStore) -> None:
        keys = [bytes([i]) * 32 for i in range(1, 6)]
        for i, k in enumerate(keys):
            intents.announce(0, k, f"tool:{i}")
        intents.compact(
            lambda announced: {kk: v for kk, v in announced.items() if kk[1] in keys[:2]}
        )
        assert set(intents.pending()) == {(0, keys[0]), (0, keys[1])}
        assert intents.size() >= 0
