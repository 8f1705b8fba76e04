"""Journal and branch semantics; each test runs on the in-memory and the on-disk journal."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from conftest import Ctx

from workbench import (
    BranchConflict,
    Conflict,
    InvalidValue,
    Journal,
    NotAJournal,
    NotFound,
    WorkbenchError,
)
from workbench.events import ZERO_HASH, canonical, event_hash
from workbench.storage.sqlite.schema import ADDED_COLUMNS


def fill(branch, n, start=1):
    for x in range(start, start + n):
        branch.apply({"x": x})


def test_root_is_branch_zero_named_main(journal):
    root = journal.root()
    assert (root.id, root.name, root.head) == (0, "main", 0)
    assert journal.branch("main").id == 0
    assert root.head_hash == "00" * 32


def test_apply_returns_seq_and_state_follows(journal):
    root = journal.root()
    assert root.apply({"x": 5}) == 1
    assert root.apply({"x": 7}) == 2
    assert root.state() == Ctx(items=[5, 7], total=12)
    assert root.at(0) == Ctx()
    assert root.at(1) == Ctx(items=[5], total=5)


def test_hash_chain_matches_the_definition(journal):
    root = journal.root()
    root.apply({"x": 1})
    root.observe("m", 2.0)
    h1 = event_hash(ZERO_HASH, "delta", canonical({"x": 1}))
    h2 = event_hash(h1, "observe", canonical({"name": "m", "value": 2.0}))
    recs = root.history()
    assert [r.hash for r in recs] == [h1.hex(), h2.hex()]
    assert recs[1].parent_hash == h1.hex()
    assert root.head_hash == h2.hex()


def test_fork_continues_seq_numbering_and_chains_to_parent_hash(journal):
    root = journal.root()
    fill(root, 5)
    child = root.fork_at(3, params={"budget": 10})
    assert child.head == 3
    assert child.head_hash == root.history(3, 3)[0].hash
    assert child.apply({"x": 100}) == 4
    assert child.history(4, 4)[0].parent_hash == root.history(3, 3)[0].hash
    assert child.state() == Ctx(items=[1, 2, 3, 100], total=106)
    assert root.state().items == [1, 2, 3, 4, 5]
    hist = child.history()
    assert [(r.branch, r.seq) for r in hist] == [(0, 1), (0, 2), (0, 3), (child.id, 4)]


def test_identical_histories_share_hashes_and_a_shared_hash_is_ambiguous(journal, tmp_path):
    root = journal.root()
    fill(root, 2)
    a = root.fork_at(1)
    b = root.fork_at(1)
    a.apply({"x": 9})
    b.apply({"x": 9})
    assert a.head_hash == b.head_hash
    with pytest.raises(
        Conflict, match=f"{a.id}@2, {b.id}@2"
    ):  # two events: the hash cannot say which
        journal.lookup_hash(a.head_hash[:8])
    other = Journal.in_memory(Ctx)
    fill(other.root(), 2)
    assert other.root().head_hash == root.head_hash
    other.close()


def test_lookup_hash_errors(journal):
    root = journal.root()
    fill(root, 300)
    with pytest.raises(InvalidValue):
        journal.lookup_hash("abc")
    with pytest.raises(InvalidValue):
        journal.lookup_hash("zzzzzzzzzz")
    hashes = [r.hash for r in root.history()]
    # Find two hashes sharing a first hex char to make a short ambiguous prefix impossible to
    # construct at 8 chars; instead check unknown and full-length behaviour.
    unknown = next(
        p for p in ("0" * 8, "f" * 8, "12345678") if not any(h.startswith(p) for h in hashes)
    )
    with pytest.raises(NotFound):
        journal.lookup_hash(unknown)
    assert journal.lookup_hash(hashes[41].upper()) == (0, 42)


def test_lookup_hash_ambiguous_prefix_lists_candidates(db_path):
    with Journal.open(db_path, Ctx) as j:
        fill(j.root(), 1)
    # Two stored hashes sharing 8 hex chars (a 1-in-4-billion event, so forge the rows).
    con = sqlite3.connect(db_path)
    for seq, tail in ((2, "00"), (3, "11")):
        h = bytes.fromhex("aaaaaaaa" + tail * 28)
        con.execute(
            "insert into events (branch, seq, kind, hash, parent_hash, ts, payload) "
            "values (0, ?, 'delta', ?, ?, 0, '{\"x\":1}')",
            (seq, h, h),
        )
    con.commit()
    con.close()
    with Journal.open(db_path, Ctx) as j:
        with pytest.raises(Conflict) as err:
            j.lookup_hash("aaaaaaaa")
        assert len(err.value.candidates) == 2 and "ambiguous" in str(err.value)
        assert j.lookup_hash("aaaaaaaa11")[1] == 3


def test_effect_runs_once_and_replays_json_roundtrip(journal):
    root = journal.root()
    calls = []

    def call(x):
        calls.append(x)
        return {"answer": (x, x * 2)}

    first = root.effect("tool:1", call, 21)
    again = root.effect("tool:1", call, 99)
    assert first == again == {"answer": [21, 42]}
    assert calls == [21]
    assert root.unknown_outcomes() == []


def test_effect_inherited_by_forks_but_not_after_fork_point(journal):
    root = journal.root()
    calls = []

    def f(tag):
        calls.append(tag)
        return tag

    root.effect("a", f, "root-a")
    child = root.fork()
    root.effect("b", f, "root-b")  # after the fork point: invisible to the child
    assert child.effect("a", f, "child-a") == "root-a"
    assert child.effect("b", f, "child-b") == "child-b"
    grandchild = child.fork()
    assert grandchild.effect("b", f, "gc-b") == "child-b"
    assert calls == ["root-a", "root-b", "child-b"]


def test_stale_handle_finds_an_effect_another_handle_committed(journal):
    # Misses are answered from the handle's own key set only while nobody else has written
    # to its branch: a second handle (same process) must still see the committed result.
    a = journal.root()
    a.effect("warm", lambda: 0)
    b = journal.branch(0)
    assert b.effect("warm", lambda: 1) == 0  # b now maps the branch's effects
    calls = []
    assert a.effect("tool", lambda: calls.append(1) or "first") == "first"
    assert b.effect("tool", lambda: calls.append(2) or "again") == "first"
    assert calls == [1]
    with pytest.raises(BranchConflict):
        b.apply({"x": 1})


def test_effect_committed_by_another_connection_is_not_rerun(db_path):
    # Another process announced the effect in the intent log, then committed it on our branch
    # past our head: the handle sees the log grew since its last line and asks the file.
    with Journal.open(db_path, Ctx) as j1, Journal.open(db_path, Ctx) as j2:
        mine = j1.root()
        mine.effect("before", lambda: 1)  # the handle now maps its history's effects
        j2.branch(0).effect("tool", lambda: "theirs")
        assert mine.effect("tool", lambda: "re-run!") == "theirs"
        with pytest.raises(BranchConflict):
            mine.effect("next", lambda: 2)


def test_effect_that_raises_commits_nothing_and_clears_intent(journal):
    root = journal.root()

    def boom():
        raise RuntimeError("model down")

    with pytest.raises(RuntimeError):
        root.effect("llm", boom)
    assert root.head == 0
    assert root.unknown_outcomes() == []
    assert root.effect("llm", lambda: "ok") == "ok"


def test_unsafe_effect_result_names_path_and_keeps_intent(journal):
    root = journal.root()
    with pytest.raises(InvalidValue) as err:
        root.effect("tool", lambda: {"rows": [1, {2, 3}]})
    assert "result['rows'][1]" in str(err.value)
    assert root.unknown_outcomes() == ["tool"]
    assert root.head == 0
    root.effect("tool", lambda: [1])
    assert root.unknown_outcomes() == []


def test_aeffect(journal):
    root = journal.root()
    calls = []

    async def fetch(x):
        calls.append(x)
        await asyncio.sleep(0)
        return x + 1

    assert asyncio.run(root.aeffect("net", fetch, 1)) == 2
    assert asyncio.run(root.aeffect("net", fetch, 5)) == 2
    assert calls == [1]


def test_compaction_replaces_state_and_keeps_before(journal):
    root = journal.root()
    fill(root, 4)

    def squash(branch, state):
        note = branch.effect("summarize", lambda: sum(state.items))
        return Ctx(items=[note], total=state.total)

    seq = root.compact(squash)
    assert seq == 6  # 4 deltas, the summarize effect, the compact event
    assert root.state() == Ctx(items=[10], total=10)
    assert root.at(seq) == root.state()
    assert root.at(seq - 1) == Ctx(items=[1, 2, 3, 4], total=10)
    root.apply({"x": 5})
    assert root.at(7) == Ctx(items=[10, 5], total=15)
    assert root.history(seq, seq)[0].kind == "compact"


def test_snapshot_returns_head_and_at_is_unchanged(journal):
    root = journal.root()
    fill(root, 10)
    assert root.snapshot() == 10
    fill(root, 3, start=11)
    for s in range(14):
        assert root.at(s) == Ctx(items=list(range(1, s + 1)), total=sum(range(1, s + 1)))


def test_fork_never_uses_ancestor_snapshot_past_fork_point(tmp_path):
    j = Journal.open(tmp_path / "s.db", Ctx, snapshot_every=2)
    root = j.root()
    fill(root, 3)
    child = root.fork_at(3)
    fill(root, 10, start=100)  # parent snapshots after the fork point
    child.apply({"x": -1})
    assert child.at(4) == Ctx(items=[1, 2, 3, -1], total=5)
    assert j.branch(child.id).state() == Ctx(items=[1, 2, 3, -1], total=5)
    j.close()


def _snapshot_sizes(j: Journal) -> list[tuple[int, int]]:
    """(seq, characters of its text) of a journal's automatic and explicit snapshots (not the
    initial one; a compressed state's text length is its ``state_size``)."""
    sql = (
        "SELECT seq, coalesce(state_size, length(state)) FROM snapshots WHERE seq > 0 ORDER BY seq"
    )
    return [tuple(r) for r in j.storage.conn.execute(sql).fetchall()]


def _delta_chars(j: Journal) -> int:
    sql = "SELECT sum(length(payload)) FROM events WHERE kind = 'delta'"
    return int(j.storage.conn.execute(sql).fetchone()[0])


def test_snapshots_of_a_growing_state_stay_linear_in_its_deltas(tmp_path):
    """A state that keeps every delta (a memory, a transcript) is not stored whole every
    ``snapshot_every`` events, which made the journal quadratic in its history (10^5 memory
    events: gigabytes): a snapshot also waits until the deltas since the last one reach half
    its size. apply, apply_many and a handle reopened midway snapshot at the same seqs, and
    every seq still reads back as it was."""
    with Journal.open(tmp_path / "one.db", Ctx, snapshot_every=8) as j:
        for i in range(1200):
            j.root().apply({"x": i})
        one = _snapshot_sizes(j)
        assert sum(size for _, size in one) <= 3 * _delta_chars(j)  # ~30x before
        seqs = [seq for seq, _ in one]
        assert len(seqs) >= 5 and all(b - a >= 8 for a, b in zip(seqs, seqs[1:], strict=False))
        root = j.root()
        assert all(root.at(s) == Ctx(list(range(s)), sum(range(s))) for s in range(0, 1201, 37))
    with Journal.open(tmp_path / "many.db", Ctx, snapshot_every=8) as j:
        for lo in range(0, 1200, 200):
            j.root().apply_many([{"x": i} for i in range(lo, min(lo + 200, 1200))])
        assert _snapshot_sizes(j) == one
    for lo in range(0, 1200, 200):  # a fresh handle each time: it takes up the spacing
        with Journal.open(tmp_path / "reopened.db", Ctx, snapshot_every=8) as j:
            for i in range(lo, min(lo + 200, 1200)):
                j.root().apply({"x": i})
    with Journal.open(tmp_path / "reopened.db", Ctx) as j:
        assert _snapshot_sizes(j) == one
        assert j.verify().ok


def test_apply_many_spaces_snapshots_as_apply_does_for_non_ascii_deltas(tmp_path):
    """Sizes are counted in characters on every path (UTF-8 bytes would differ)."""
    seqs = []
    for name, many in (("one.db", False), ("many.db", True)):
        with Journal.open(tmp_path / name, snapshot_every=8) as j:
            items = [{f"k{i}": "é" * 20 + str(i)} for i in range(600)]
            if many:
                j.root().apply_many(items)
            else:
                for d in items:
                    j.root().apply(d)
            seqs.append([seq for seq, _ in _snapshot_sizes(j)])
    assert seqs[0] == seqs[1] and len(seqs[0]) >= 5


def test_a_small_state_is_snapshotted_every_snapshot_every_events(tmp_path):
    """A state that does not grow with its deltas (keys overwritten) keeps the plain spacing."""
    with Journal.open(tmp_path / "s.db", snapshot_every=8) as j:
        for i in range(100):
            j.root().apply({"step": i, "note": f"n{i % 3}"})
        assert [seq for seq, _ in _snapshot_sizes(j)] == list(range(8, 101, 8))


def test_observations_form_the_matrix_with_merged_params(journal):
    root = journal.root()
    root.observe("recall", 0.25)
    a = root.fork(params={"budget": 300, "model": "mock"})
    b = a.fork(params={"budget": 600, "seq": "x"})
    a.observe("recall", 0.5)
    b.observe("recall", 1)
    m = journal.matrix()
    assert m.columns[:6] == ["branch", "branch_name", "seq", "metric", "value", "ts"]
    rows = {r["branch"]: r for r in m.to_dicts()}
    assert len(m) == 3  # forks do not repeat their ancestors' observations
    assert rows[a.id]["budget"] == 300 and rows[b.id]["budget"] == 600
    assert rows[b.id]["model"] == "mock"
    assert rows[b.id]["param_seq"] == "x"
    assert rows[b.id]["value"] == 1.0
    assert rows[0]["branch_name"] == "main"


def test_branches_children_and_info(journal):
    root = journal.root()
    fill(root, 3)
    a = root.fork_at(2, name="a", params={"k": 1})
    a.apply({"x": 9})
    root.fork_at(1)
    infos = journal.branches()
    assert [i.id for i in infos] == [0, 1, 2]
    assert infos[1].name == "a" and infos[1].parent == 0 and infos[1].fork_seq == 2
    assert infos[1].head == 3 and infos[1].head_hash == a.head_hash
    assert infos[2].head == 1 and infos[2].head_hash == root.history(1, 1)[0].hash
    assert [c.id for c in journal.children(0)] == [1, 2]
    assert journal.children("a") == []
    assert a.info.params == {"k": 1}


def test_sweep_creates_one_fork_per_param_set(journal):
    root = journal.root()
    fill(root, 5)
    forks = journal.sweep(root, 3, [{"budget": b} for b in (300, 600, 1200)])
    assert [f.head for f in forks] == [3, 3, 3]
    assert [f.params for f in forks] == [{"budget": 300}, {"budget": 600}, {"budget": 1200}]
    (sw,) = journal.sweeps()
    assert sw.base == 0 and sw.at == 3 and sw.branches == [f.id for f in forks]
    assert journal.sweep(0, 1, [{}])[0].head == 1


BIG = "x" * (50 * 2**20)  # 50 MB: over the 16 MiB an event may hold
OVERSIZED = {
    "fork": lambda j: j.root().fork(params={"prompt": BIG}),
    "fork_at": lambda j: j.root().fork_at(1, params={"prompt": BIG}),
    "journal.fork": lambda j: j.fork(j.root(), 1, [("a", {}), ("b", {"prompt": BIG})]),
    "sweep": lambda j: j.sweep(0, 1, [{"k": 1}, {"prompt": BIG}], how={"runner": "process"}),
    "sweep spec": lambda j: j.sweep(0, 1, [{"k": 1}], spec={"note": BIG}),
    "sweep how": lambda j: j.sweep(0, 1, [{"k": 1}], how={"runner": "process", "x": BIG}),
    "open_sweep": lambda j: j.open_sweep(0, 1, {"note": BIG}, {"runner": "process"}),
    "sweep_fork": lambda j: j.sweep_fork(j.sweeps()[0].id, 0, 1, {"prompt": BIG}),
}


def _rows(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as c:
        tables = [t for (t,) in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: c.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}


@pytest.mark.parametrize("call", sorted(OVERSIZED))
def test_fork_and_sweep_params_over_max_event_bytes_are_refused_before_any_row(call, tmp_path):
    # Params were stored whatever their size: a 50 MB string went into the branches row.
    db = tmp_path / "j.db"
    with Journal.open(db, Ctx) as j:
        j.root().apply({"x": 1})
        if call == "sweep_fork":  # the sweep it adds a fork to
            j.open_sweep(0, 1, {}, {"runner": "process"})
    before = _rows(db)
    with Journal.open(db, Ctx) as j:
        with pytest.raises(InvalidValue, match="max_event_bytes") as err:
            OVERSIZED[call](j)
        assert len(str(err.value)) < 600 and "outside the journal" in str(err.value)
    assert _rows(db) == before
    with Journal.in_memory(Ctx, max_event_bytes=1000) as j:  # the journal's own limit
        j.root().apply({"x": 1})
        with pytest.raises(InvalidValue, match="max_event_bytes"):
            j.root().fork(params={"prompt": "p" * 1000})
        assert j.root().fork(params={"prompt": "p" * 900}).params == {"prompt": "p" * 900}


def test_tail_streams_events_after_a_cursor(journal):
    root = journal.root()
    fill(root, 3)
    recs, cur = journal.tail(0)
    assert [r.seq for r in recs] == [1, 2, 3]
    root.observe("m", 1.0)
    recs, cur2 = journal.tail(cur)
    assert [r.kind for r in recs] == ["observe"] and cur2 > cur
    assert journal.tail(cur2) == ([], cur2)
    recs, _ = journal.tail(0, limit=2)
    assert len(recs) == 2


@pytest.mark.parametrize(
    "call",
    [
        lambda b: b.at(99),
        lambda b: b.at(-1),
        lambda b: b.fork_at(99),
        lambda b: b.fork_at(-1),
        lambda b: b.apply({"x": {1}}),
        lambda b: b.observe("m", float("nan")),
        lambda b: b.observe("", 1.0),
        lambda b: b.fork(params={"a": object()}),
        lambda b: b.effect("", lambda: 1),
        lambda b: b.journal.tail(-1),
    ],
)
def test_bad_input_is_refused_before_anything_is_written(journal, call):
    root = journal.root()
    fill(root, 2)
    before = (journal.tail(0)[1], len(journal.branches()))
    with pytest.raises(InvalidValue):
        call(root)
    assert (journal.tail(0)[1], len(journal.branches())) == before


def test_unknown_branches_are_not_found(journal):
    with pytest.raises(NotFound):
        journal.branch(7)
    with pytest.raises(NotFound):
        journal.branch("nope")


def test_branch_names_are_unique(journal):
    journal.root().fork(name="exp")
    with pytest.raises(Conflict):
        journal.root().fork(name="exp")


def test_stale_handle_is_refused_with_expected_and_actual_head(journal):
    a = journal.root()
    b = journal.branch(0)
    a.apply({"x": 1})
    a.apply({"x": 2})
    with pytest.raises(BranchConflict) as err:
        b.apply({"x": 3})
    e = err.value
    assert (e.branch, e.expected, e.actual) == (0, 0, 2)
    assert "journal.branch(0)" in str(e)
    assert journal.branch(0).state().items == [1, 2]


def test_reopen_resumes_and_effects_are_not_rerun(db_path):
    calls = []
    with Journal.open(db_path, Ctx) as j:
        j.root().effect("k", lambda: calls.append(1) or 1)
        fill(j.root(), 3)
    with Journal.open(db_path, Ctx) as j:
        root = j.root()
        assert root.head == 4 and root.state().items == [1, 2, 3]
        assert root.effect("k", lambda: calls.append(2) or 2) == 1
    assert calls == [1]


def test_classless_open_uses_registered_state_or_plain_json(db_path, tmp_path):
    with Journal.open(db_path, Ctx) as j:
        fill(j.root(), 2)
    with Journal.open(db_path) as j:  # Ctx registered itself under its state_name
        assert j.root().state() == Ctx(items=[1, 2], total=3)
    plain = tmp_path / "plain.db"
    with Journal.open(plain) as j:
        j.root().apply({"a": 1, "b": {"c": 2}})
        j.root().apply({"b": {"c": None}})
        assert j.root().state() == {"a": 1, "b": {}}


def test_context_manager_and_idempotent_close(db_path):
    with Journal.open(db_path, Ctx) as j:
        fill(j.root(), 1)
    j.close()
    with pytest.raises(WorkbenchError):
        j.root()


def test_lazy_durability_buffers_until_effect_and_close(db_path):
    j = Journal.open(db_path, Ctx, durability="lazy")
    root = j.root()
    fill(root, 3)
    root.observe("m", 1.0)
    peek = sqlite3.connect(db_path)
    assert peek.execute("select count(*) from events").fetchone()[0] == 0
    root.effect("k", lambda: 1)
    assert peek.execute("select count(*) from events").fetchone()[0] == 5
    fill(root, 2, start=10)
    j.close()
    assert peek.execute("select count(*) from events").fetchone()[0] == 7
    peek.close()
    with Journal.open(db_path, Ctx) as j2:
        assert j2.root().state().items == [1, 2, 3, 10, 11]
        assert j2.verify().ok


def test_fsync_durability_writes_and_reads(db_path):
    with Journal.open(db_path, Ctx, durability="fsync") as j:
        fill(j.root(), 3)
    with Journal.open(db_path, Ctx) as j:
        assert j.root().state().total == 6


def test_bad_open_arguments(db_path, tmp_path):
    with pytest.raises(InvalidValue):
        Journal.open(db_path, Ctx, durability="sometimes")
    with pytest.raises(InvalidValue):
        Journal.open(db_path, Ctx, snapshot_every=0)
    with pytest.raises(InvalidValue):
        Journal.open(db_path, dict)
    with pytest.raises(NotFound):
        Journal.open(tmp_path / "missing" / "x.db", Ctx)
    assert not db_path.exists()


def test_file_that_is_not_a_journal(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(NotAJournal):
        Journal.open(junk, Ctx)
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("create table people (name text)")
    con.commit()
    con.close()
    with pytest.raises(NotAJournal) as err:
        Journal.open(other, Ctx)
    assert "not a lithify journal" in str(err.value)


def test_journal_from_a_newer_schema_is_refused(db_path):
    with Journal.open(db_path, Ctx):
        pass
    con = sqlite3.connect(db_path)
    con.execute("update meta set value = '999' where key = 'schema_version'")
    con.commit()
    con.close()
    with pytest.raises(NotAJournal) as err:
        Journal.open(db_path, Ctx)
    assert "newer" in str(err.value) and "upgrade" in str(err.value)


def test_events_table_refuses_update_and_delete(db_path):
    with Journal.open(db_path, Ctx) as j:
        fill(j.root(), 2)
    con = sqlite3.connect(db_path)
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("update events set payload = '{}'")
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("delete from events")
    con.close()


def _tamper(db_path: Path, sql: str, args=()):
    con = sqlite3.connect(db_path)
    con.execute("drop trigger events_append_only_update")
    con.execute(sql, args)
    con.commit()
    con.close()


def test_verify_finds_a_flipped_byte_at_its_seq(db_path):
    with Journal.open(db_path, Ctx) as j:
        fill(j.root(), 20)
        child = j.root().fork_at(10)
        fill(child, 5, start=50)
        assert j.verify().ok
    _tamper(
        db_path,
        "update events set payload = replace(payload, '13', '14') where branch = 0 and seq = 13",
    )
    with Journal.open(db_path, Ctx) as j:
        report = j.verify()
    assert not report.ok
    assert report.problems[0][:2] == (0, 13)


def test_verify_finds_tampered_snapshot_and_observation_columns(db_path):
    with Journal.open(db_path, Ctx, snapshot_every=5) as j:
        fill(j.root(), 12)
        j.root().observe("recall", 0.5)
    con = sqlite3.connect(db_path)
    con.execute("update snapshots set state = replace(state, '3', '4') where seq = 5")
    con.commit()
    con.close()
    _tamper(db_path, "update events set value = 0.9 where metric = 'recall'")
    with Journal.open(db_path, Ctx) as j:
        problems = j.verify().problems
    assert (0, 5) in [p[:2] for p in problems]
    assert (0, 13) in [p[:2] for p in problems]


def test_intent_log_compaction_keeps_only_unresolved(db_path, monkeypatch):
    from workbench.storage import IntentLog

    monkeypatch.setattr(IntentLog, "COMPACT_BYTES", 200)
    j = Journal.open(db_path, Ctx)
    root = j.root()
    for i in range(20):
        root.effect(f"done:{i}", lambda i=i: i)
    with pytest.raises(InvalidValue):
        root.effect("in-flight", lambda: {1})  # called, result refused: stays unknown
    log = Path(str(db_path) + "-intents")
    j.close()
    assert log.read_text().count("\n") == 1 and "in-flight" in log.read_text()
    with Journal.open(db_path, Ctx) as j2:
        assert j2.root().unknown_outcomes() == ["in-flight"]


def test_intent_log_tolerates_a_torn_last_line(db_path):
    with Journal.open(db_path, Ctx) as j:
        with pytest.raises(InvalidValue):
            j.root().effect("a", lambda: {1})
    with open(str(db_path) + "-intents", "a") as f:
        f.write("+ 0 abc")  # a crash mid-write
    with Journal.open(db_path, Ctx) as j:
        assert j.root().unknown_outcomes() == ["a"]


def test_journal_from_before_the_lazy_effect_index_is_upgraded_in_place(db_path):
    # Files written before effect_index had an index on events(key_hash) maintained on every
    # append; opening one drops it, adds the table, and every committed effect is still found.
    with Journal.open(db_path, Ctx) as j:
        root = j.root()
        for i in range(5):
            root.effect(f"tool:{i}", lambda i=i: i)
    con = sqlite3.connect(db_path)
    con.executescript(
        "DROP TABLE effect_index;"
        "CREATE INDEX events_effects ON events(key_hash, branch, seq) WHERE key_hash IS NOT NULL;"
    )
    con.close()
    with Journal.open(db_path, Ctx) as j:
        names = {r[0] for r in j.storage.conn.execute("SELECT name FROM sqlite_master")}
        assert "effect_index" in names and "events_effects" not in names
        root = j.root()
        assert [root.effect(f"tool:{i}", lambda: "re-run!") for i in range(5)] == [0, 1, 2, 3, 4]
        assert root.unknown_outcomes() == []
        assert j.verify().ok


def test_a_journal_from_before_the_added_columns_upgrades_and_forks_only_from_branches(db_path):
    # A file as the first schema wrote it (none of the columns added since), with a fork: it
    # upgrades in place under the enforced foreign key, forks and writes as a new one does, and
    # a fork of a branch that does not exist is refused (SQLite enforced no foreign key before).
    with Journal.open(db_path, Ctx) as j:
        j.root().apply({"x": 1})
        j.root().fork_at(1, name="a").apply({"x": 2})
    con = sqlite3.connect(db_path)
    con.execute("DROP INDEX events_event_id")  # the index of an added column goes with it
    con.execute("DROP VIEW event_payloads")  # and the views that read them
    con.execute("DROP VIEW snapshot_states")
    for table, cols in ADDED_COLUMNS.items():
        for col in cols:
            con.execute(f"ALTER TABLE {table} DROP COLUMN {col}")
    con.commit()
    con.close()
    with Journal.open(db_path, Ctx) as j:
        assert j.storage.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        a = j.branch("a")
        a.effect("tool:a", lambda: 1)
        b = a.fork_at(3, name="b", params={"k": 1})
        b.observe("recall", 0.5)
        j.sweep(b, 4, [{"k": 2}], how={"runner": "process"})
        with pytest.raises(NotFound, match="no branch 99"):
            j.storage.insert_branches([("orphan", 99, 0, "{}", None)])
        assert [br.name for br in j.branches()][:3] == ["main", "a", "b"]
        assert len(j.branches()) == 4 and j.verify().ok


def test_effect_committed_while_ours_raised_is_found(db_path):
    # Our call announced, then failed; meanwhile another process committed "k" on our branch.
    # Its announcement follows ours in the intent log, so the handle asks the database.
    with Journal.open(db_path, Ctx) as j1, Journal.open(db_path, Ctx) as j2:
        mine = j1.root()
        mine.effect("warm", lambda: 0)
        other = j2.branch(0)

        def fails():
            other.effect("k", lambda: "theirs")
            raise RuntimeError("tool down")

        with pytest.raises(RuntimeError):
            mine.effect("x", fails)
        assert mine.effect("k", lambda: "re-run!") == "theirs"


def test_lazy_buffer_refused_makes_the_handle_stale_for_good(db_path):
    # Buffered events refused at flush are gone; the handle must not chain new events onto
    # them (that would break the hash chain), and must not skip asking for others' effects.
    with Journal.open(db_path, Ctx, durability="lazy") as j1, Journal.open(db_path, Ctx) as j2:
        mine = j1.root()
        mine.apply({"x": 1})
        mine.apply({"x": 2})  # buffered
        j2.branch(0).effect("k", lambda: "theirs")  # takes seq 1 first
        with pytest.raises(BranchConflict):
            j1.flush()
        with pytest.raises(BranchConflict):
            mine.apply({"x": 3})
        with pytest.raises(BranchConflict):
            mine.effect("k", lambda: "re-run!")
        fresh = j1.branch(0)
        assert fresh.effect("k", lambda: "re-run!") == "theirs"
        fresh.apply({"x": 4})
    with Journal.open(db_path, Ctx) as j:
        assert j.verify().ok and j.root().head == 2


TRICKY = [
    {"x": 1},
    {"x": 2, "note": 'é\u2028\x00"\\ 😀'},
    {"x": 3, "f": [1.5, 1e21, 1e-7, 2.0]},
    {"x": 4, "nested": {"b": [1, {"a": None}], "a": True}},
    {"x": 5, "\U0001f600k": 1, "\ufb01": 2},
]


@pytest.mark.parametrize("json_each,chunk", [(True, 512), (True, 2), (False, 2)])
def test_apply_many_writes_what_apply_would(tmp_path, monkeypatch, json_each, chunk):
    # Same events (hashes, payload text), same states at every seq, snapshots inside the batch
    # (chunk 2: the batch goes to the database in three parts, from a second thread).
    monkeypatch.setattr("workbench.branch.BATCH_CHUNK", chunk)
    one = Journal.open(tmp_path / "one.db", Ctx, snapshot_every=2)
    many = Journal.open(tmp_path / "many.db", Ctx, snapshot_every=2)
    if not json_each:
        many.storage._has_json_each = False  # an SQLite without JSON functions
    for d in TRICKY:
        one.root().apply(d)
    assert many.root().apply_many(TRICKY) == len(TRICKY)
    assert many.root().apply_many([]) == len(TRICKY)
    a, b = one.root().history(), many.root().history()
    assert [(r.seq, r.hash, r.parent_hash, r.payload) for r in a] == [
        (r.seq, r.hash, r.parent_hash, r.payload) for r in b
    ]
    raw = "SELECT seq, payload FROM events ORDER BY position"
    assert one.storage.conn.execute(raw).fetchall() == many.storage.conn.execute(raw).fetchall()
    assert (
        many.storage.conn.execute("SELECT count(*) FROM snapshots WHERE seq > 0").fetchone()[0] == 2
    )
    fresh = Journal.open(tmp_path / "many.db", Ctx)
    assert [fresh.root().at(s) for s in range(6)] == [one.root().at(s) for s in range(6)]
    assert fresh.verify().ok
    for j in (one, many, fresh):
        j.close()


@pytest.mark.parametrize("chunk", [512, 1])
def test_apply_many_is_all_or_nothing(journal, monkeypatch, chunk):
    # chunk 1: earlier deltas are already inserted (uncommitted) when a later one fails
    monkeypatch.setattr("workbench.branch.BATCH_CHUNK", chunk)
    root = journal.root()
    root.apply({"x": 1})
    with pytest.raises(InvalidValue, match=r"deltas\[2\]"):
        root.apply_many([{"x": 2}, {"x": 3}, {"x": {4}}])
    with pytest.raises(KeyError):
        root.apply_many([{"x": 2}, {"y": 3}])  # Ctx.apply fails on the second
    assert root.head == 1 and root.state() == Ctx(items=[1], total=1)
    assert journal.branch(0).head == 1
    stale = journal.branch(0)
    root.apply({"x": 5})
    with pytest.raises(BranchConflict):
        stale.apply_many([{"x": 6}, {"x": 7}])
    assert journal.branch(0).state() == Ctx(items=[1, 5], total=6)


def test_effect_lookup_is_not_fooled_by_a_rewritten_intent_log(db_path):
    # vacuum() rewrites the intent log; another handle's announcement of "k" then leaves it
    # exactly as long as after our own last line ("w"): the handle must still ask the file.
    with Journal.open(db_path, Ctx) as j:
        mine = j.root()
        mine.effect("w", lambda: 0)
        j.vacuum()
        j.branch(0).effect("k", lambda: "theirs")
        assert mine.effect("k", lambda: "re-run!") == "theirs"


# -- lazy buffers and the signals that end a process --------------------------------------------

LAZY_WORKER = """
import os, signal, sys, threading
from workbench import Journal

path, how = sys.argv[1], sys.argv[2]
# its own dispositions, whatever it inherited (under nohup SIGHUP arrives ignored)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
signal.signal(signal.SIGHUP, signal.SIG_IGN if how == "ignored" else signal.SIG_DFL)
if how == "own-handler":  # the program's own handler, installed first: it exits hard
    def mine(signum, frame):
        open(path + ".handled", "w").write(str(signum))
        os._exit(7)
    signal.signal(signal.SIGTERM, mine)
j = Journal.open(path, durability="lazy")
def write():
    b = j.root()
    for i in range(100):  # buffered: fewer than a buffer holds
        b.apply({"i": i})
if how == "thread":  # a worker thread writes; the main thread waits
    t = threading.Thread(target=write)
    t.start()
    t.join()
else:
    write()
print("ready", flush=True)
threading.Event().wait()  # until a signal ends it
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "how, sig, code",
    [
        ("main", "SIGTERM", -15),
        ("main", "SIGHUP", -1),
        ("thread", "SIGTERM", -15),
        ("own-handler", "SIGTERM", 7),
        ("ignored", "SIGHUP", -15),
    ],
)
def test_a_lazy_buffer_is_written_when_sigterm_or_sighup_ends_the_process(db_path, how, sig, code):
    """The child sets its own dispositions (an inherited SIG_IGN, as under nohup, would keep a
    SIGHUP from ending it) and is killed if anything goes wrong: no process outlives the test.
    An ignored SIGHUP stays ignored (the journal does not route it): SIGTERM ends that one."""
    import signal
    import subprocess
    import sys

    p = subprocess.Popen(
        [sys.executable, "-c", LAZY_WORKER, str(db_path), how],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
        p.send_signal(getattr(signal, sig))
        if how == "ignored":
            with pytest.raises(subprocess.TimeoutExpired):
                p.wait(timeout=1)  # still running: the ignored signal changed nothing
            p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == code, err  # the process ends as the signal (or its handler) says
    with Journal.open(db_path, readonly=True) as j:
        assert j.root().head == 100 and j.verify().ok
    if how == "own-handler":
        assert Path(str(db_path) + ".handled").read_text() == str(signal.SIGTERM)


def test_lazy_journals_install_signal_handlers_in_the_main_thread_and_restore_them(db_path):
    import gc
    import signal
    import threading

    gc.collect()  # lazy journals other tests dropped without closing hand theirs back

    def mine(signum, frame):
        pass

    before = signal.signal(signal.SIGHUP, mine)
    try:
        term = signal.getsignal(signal.SIGTERM)
        with Journal.open(db_path, durability="lazy") as a:
            assert signal.getsignal(signal.SIGTERM) is not term
            assert signal.getsignal(signal.SIGHUP) is not mine
            with Journal.open(db_path, durability="lazy"):
                pass
            assert signal.getsignal(signal.SIGTERM) is not term  # a is still open
            a.root().apply({"x": 1})
        assert signal.getsignal(signal.SIGTERM) is term
        assert signal.getsignal(signal.SIGHUP) is mine
        with Journal.open(db_path):  # not lazy: nothing to protect
            assert signal.getsignal(signal.SIGTERM) is term
        opened = []
        t = threading.Thread(target=lambda: opened.append(Journal.open(db_path, durability="lazy")))
        t.start()
        t.join()
        assert signal.getsignal(signal.SIGTERM) is term  # only the main thread may install
        opened[0].close()
    finally:
        signal.signal(signal.SIGHUP, before)


BUSY_WORKER = """
import sys
from workbench import Journal

j = Journal.open(sys.argv[1], durability="lazy")
b = j.root()
i = 0
while True:  # the signal lands anywhere: in user code, or inside the journal
    b.apply({"i": i})
    i += 1
    print(i, flush=True)
"""


def _sigterm_after(worker: str, db_path: Path, after: int) -> None:
    """Run ``worker`` (it prints how many applies returned, one count a line) on the journal,
    SIGTERM it once ``after`` have returned; it must end by that signal within 60 s with every
    apply that returned kept and the journal verified."""
    import signal
    import subprocess
    import sys

    p = subprocess.Popen(
        [sys.executable, "-c", worker, str(db_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    last = 0
    while last < after:
        last = int(p.stdout.readline())
    p.send_signal(signal.SIGTERM)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail("the process did not end within 60 s of SIGTERM")
    last = max([last, *(int(x) for x in out.split())])
    assert p.returncode == -signal.SIGTERM, err
    with Journal.open(db_path, readonly=True) as j:
        assert j.root().head >= last and j.verify().ok  # every apply that returned is kept


@pytest.mark.slow
@pytest.mark.parametrize("after", [700, 2000, 3333])
def test_every_apply_that_returned_survives_sigterm_in_a_busy_loop(db_path, after):
    _sigterm_after(BUSY_WORKER, db_path, after)


LOST_WAKEUP_WORKER = """
import signal, sys, time
from workbench import Journal

sent = []
real = signal.pthread_kill
def lossy(thread, signum):  # the first wake-up lands before the main thread waits: lost
    sent.append(signum)
    if len(sent) > 1:
        real(thread, signum)
signal.pthread_kill = lossy

j = Journal.open(sys.argv[1], durability="lazy")
b = j.root()
i = 0
while True:
    with j.storage.lock:  # inside the journal most of the time: SIGTERM lands in here
        b.apply({"i": i})
        i += 1
        print(i, flush=True)
        time.sleep(0.02)
"""


@pytest.mark.slow
def test_sigterm_inside_the_journal_ends_the_process_even_if_a_wakeup_is_lost(db_path):
    """SIGTERM while the main thread is inside the journal: a helper thread writes the
    buffers and keeps the journal's lock, then wakes the main thread to end the process. A
    wake-up that lands just before the main thread waits for that lock wakes nothing (seen
    under load); the process must still end by SIGTERM with every returned apply kept."""
    _sigterm_after(LOST_WAKEUP_WORKER, db_path, 20)
