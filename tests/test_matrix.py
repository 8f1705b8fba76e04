"""The results matrix: merged params, summaries, filters, lineage, aggregation, export, live."""

from __future__ import annotations

import math

import polars as pl
import pytest

from workbench import InvalidValue, Journal
from workbench.matrix import LiveMatrix, aggregate, export, read, t_critical


@pytest.fixture
def j(tmp_path):
    journal = Journal.open(tmp_path / "m.db")
    yield journal
    journal.close()


def test_params_merge_root_down_child_overrides(j):
    a = j.root().fork(params={"x": 1, "y": 1})
    b = a.fork(params={"x": 2})
    c = b.fork(params={"z": 3, "metric": "shadow"})
    c.observe("acc", 0.5)
    (row,) = j.matrix().to_dicts()
    assert (row["x"], row["y"], row["z"], row["param_metric"]) == (2, 1, 3, "shadow")
    assert row["metric"] == "acc" and row["branch"] == c.id


def test_long_form_one_row_per_observation_no_inheritance(j):
    root = j.root()
    root.observe("m", 1)
    f = root.fork(params={"k": "a"})
    f.observe("m", 2)
    f.observe("m", 3)
    m = j.matrix()
    assert m.columns[:6] == ["branch", "branch_name", "seq", "metric", "value", "ts"]
    assert m.select("branch", "value").rows() == [(0, 1.0), (f.id, 2.0), (f.id, 3.0)]
    assert m.schema["value"] == pl.Float64 and m.schema["ts"] == pl.Int64


@pytest.mark.parametrize(
    "summary, expected",
    [("last", 2.0), ("first", 3.0), ("max", 3.0), ("min", 1.0), ("mean", 2.0), ("count", 3.0)],
)
def test_wide_summaries(j, summary, expected):
    b = j.root().fork(params={"budget": 10})
    for v in (3, 1, 2):
        b.observe("loss", v)
    b.observe("acc", 0.9)
    w = j.matrix(wide=True, summary=summary)
    assert len(w) == 1
    row = w.row(0, named=True)
    assert row["loss"] == expected and row["budget"] == 10
    assert row["acc"] == (1.0 if summary == "count" else 0.9)


def test_bad_summary_is_refused(j):
    with pytest.raises(InvalidValue):
        j.matrix(wide=True, summary="median")


def test_filters_by_branch_sweep_metric_and_params(j):
    root = j.root()
    root.apply({"a": 1})
    forks = j.sweep(root, 1, [{"budget": b, "seed": s} for b in (1, 2) for s in (0, 1)])
    other = root.fork(params={"budget": 1})
    for i, f in enumerate([*forks, other]):
        f.observe("recall", i / 10)
        f.observe("cost", i)
    sweep_id = j.sweeps()[0].id
    assert set(j.matrix(sweep=sweep_id)["branch"]) == {f.id for f in forks}
    assert set(j.matrix(branches=[other.id])["branch"]) == {other.id}
    assert set(j.matrix(metrics=["cost"])["metric"]) == {"cost"}
    sel = j.matrix(params={"budget": 1, "seed": [0, 1]})
    assert set(sel["branch"]) == {forks[0].id, forks[1].id}
    assert set(j.matrix(params={"budget": 1})["branch"]) == {forks[0].id, forks[1].id, other.id}
    wide = j.matrix(wide=True, sweep=sweep_id, metrics=["recall"])
    assert len(wide) == 4 and "cost" not in wide.columns


def test_lineage_columns(j):
    a = j.root().fork(params={"p": 1})
    b = a.fork()
    (s,) = j.sweep(b, b.head, [{"q": 2}])
    for x in (a, b, s):
        x.observe("m", 1)
    m = j.matrix(lineage=True)
    rows = {r["branch"]: r for r in m.to_dicts()}
    assert (rows[a.id]["parent"], rows[a.id]["depth"], rows[a.id]["sweep"]) == (0, 1, None)
    assert (rows[b.id]["parent"], rows[b.id]["depth"]) == (a.id, 2)
    assert (rows[s.id]["depth"], rows[s.id]["sweep"], rows[s.id]["fork_seq"]) == (
        3,
        j.sweeps()[0].id,
        0,
    )
    assert "parent" not in j.matrix().columns


def test_t_critical_values():
    for df, t in [(1, 12.7062), (2, 4.3027), (3, 3.1824), (10, 2.2281), (30, 2.0423)]:
        assert t_critical(df) == pytest.approx(t, abs=1e-4)


def test_aggregate_by_hand():
    df = pl.DataFrame(
        {
            "branch": list(range(8)),
            "budget": [1, 1, 1, 1, 2, 3, 3, 3],
            "seed": [0, 1, 2, 3, 0, 0, 1, 2],
            "recall": [1.0, 2.0, 3.0, 4.0, 7.0, 5.0, 5.0, 5.0],
        }
    )
    agg = aggregate(df, "recall")  # groups: all params except the seed
    rows = {r["budget"]: r for r in agg.to_dicts()}
    a = rows[1]
    assert a["n"] == 4 and a["mean"] == 2.5
    assert a["std"] == pytest.approx(math.sqrt(5 / 3))
    assert a["sem"] == pytest.approx(math.sqrt(5 / 3) / 2)
    assert a["ci_low"] == pytest.approx(2.5 - 3.182446 * math.sqrt(5 / 3) / 2, abs=1e-5)
    assert a["ci_high"] == pytest.approx(2.5 + 3.182446 * math.sqrt(5 / 3) / 2, abs=1e-5)
    b = rows[2]
    assert b["n"] == 1 and b["mean"] == 7.0
    assert b["std"] is None and b["sem"] is None and b["ci_low"] is None and b["ci_high"] is None
    c = rows[3]
    assert c["n"] == 3 and c["std"] == 0 and c["ci_low"] == c["ci_high"] == 5.0


def test_aggregate_from_long_matrix_uses_each_branch_last_value(j):
    for seed, vals in ((0, [0.1, 0.5]), (1, [0.7])):
        f = j.root().fork(params={"budget": 100, "seed": seed})
        for v in vals:
            f.observe("recall", v)
    agg = aggregate(j.matrix(), "recall")
    (row,) = agg.to_dicts()
    assert row["n"] == 2 and row["mean"] == pytest.approx(0.6)
    with pytest.raises(InvalidValue):
        aggregate(j.matrix(wide=True), "nope")


def test_export_roundtrip_csv_and_parquet(j, tmp_path):
    a = j.root().fork(name="a", params={"budget": 300, "model": "mock", "lr": 0.1})
    b = j.root().fork(params={"budget": 600, "model": "mock", "lr": 0.2})
    for f in (a, b):
        f.observe("recall", 0.25)
        f.observe("cost", 3)
    for wide in (False, True):
        df = j.matrix(wide=wide)
        for suffix in (".csv", ".parquet"):
            path = export(df, tmp_path / f"m{int(wide)}{suffix}")
            back = read(path)
            assert back.columns == df.columns
            assert back.schema == df.schema, (suffix, wide)
            assert back.equals(df)
    try:
        import duckdb
    except ImportError:
        return
    con = duckdb.connect()
    n = con.execute(f"select count(*) from read_parquet('{tmp_path / 'm0.parquet'}')").fetchone()[0]
    assert n == 4


def test_export_refuses_unknown_suffix(j, tmp_path):
    with pytest.raises(InvalidValue):
        export(j.matrix(), tmp_path / "m.xlsx")


def test_live_matrix_sees_rows_another_writer_adds(tmp_path):
    path = tmp_path / "live.db"
    with Journal.open(path) as j:
        f = j.root().fork(params={"budget": 5})
        f.observe("m", 1.0)
        live = LiveMatrix(j)
        assert len(live) == 1
        # another writer: its own connection to the file, as another process would have (the
        # live view and a real worker process: tests/test_widgets.py)
        with Journal.open(path) as other:
            g = other.root().fork(params={"budget": 9})
            for i in range(5):
                g.observe("m", i)
        assert live.refresh() == 5
        assert len(live) == 6
        assert sorted(set(live.frame["budget"].to_list())) == [5, 9]
        assert live.refresh() == 0
        assert live.frame.equals(j.matrix())


def test_matrix_called_again_sees_what_arrived_since_from_any_writer(tmp_path):
    path = tmp_path / "again.db"
    with Journal.open(path) as j:
        f = j.root().fork(params={"budget": 5})
        f.observe("m", 1.0)
        assert j.matrix()["value"].to_list() == [1.0]
        f.observe("m", 2.0)  # this handle
        with Journal.open(path) as other:  # another connection, as another process has
            other.root().fork(params={"budget": 9}).observe("m", 3.0)
        again = j.matrix()
        assert again["value"].to_list() == [1.0, 2.0, 3.0]
        assert again["budget"].to_list() == [5, 5, 9]
        with Journal.open(path) as fresh:  # what a handle that never read before sees
            assert again.equals(fresh.matrix())
        assert j.matrix(wide=True)["m"].to_list() == [2.0, 3.0]


def test_matrix_inside_a_transaction_that_rolls_back_keeps_nothing_of_it(tmp_path):
    path = tmp_path / "rollback.db"
    with Journal.open(path) as j:
        f = j.root().fork()
        f.observe("m", 1.0)
        assert len(j.matrix()) == 1
        with pytest.raises(RuntimeError), j.storage.atomic():
            f.observe("m", 2.0)
            j.flush()
            assert j.matrix()["value"].to_list() == [1.0, 2.0]  # what the transaction sees
            raise RuntimeError("the caller gives up")
        j.branch(f.id).observe("m", 3.0)  # a fresh handle: the rolled-back event never was
        assert j.matrix()["value"].to_list() == [1.0, 3.0]


def test_the_arrow_path_reads_every_observation_as_sqlite3_does(tmp_path, monkeypatch):
    """Past OBS_ROWS_DIRECT events, observations are copied in ranges to scratch files that
    ADBC reads while the next range is copied: the same frame as the sqlite3 rows, dtypes
    included, however the ranges fall; nothing left behind in the temporary directory; and
    when no scratch file can be written (a missing or read-only temporary directory) the
    sqlite3 path answers instead."""
    import tempfile

    from workbench.storage.sqlite import observations, storage

    path = tmp_path / "obs.db"
    with Journal.open(path, durability="lazy") as w:
        root = w.root()
        root.apply({"x": 1})
        forks = [root.fork(params={"k": i}) for i in range(5)]
        for n in range(120):
            for b in (root, *forks):
                b.observe("recall" if n % 3 else "cost", n / 7)
                if n % 11 == 0:
                    b.apply({"n": n})  # events that are not observations, between them
    with Journal.open(path) as j:
        expected = j.storage.observations_frame()  # under OBS_ROWS_DIRECT: through sqlite3
    assert len(expected) == 720
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(storage, "OBS_ROWS_DIRECT", 10)
    for chunks in (1, 3, 8, 400):  # ranges of 2 positions: some hold no observation
        monkeypatch.setattr(observations, "OBS_ARROW_CHUNKS", chunks)
        with Journal.open(path) as j:
            got = j.storage._observations_arrow(j.storage.top_position())
            assert got is not None
            assert got.cast(expected.schema).equals(expected)
            assert j.storage.observations_frame().equals(expected)
            assert j.matrix().height == 720
        assert list(scratch.iterdir()) == []
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    with Journal.open(path) as j:
        assert j.storage._observations_arrow(j.storage.top_position()) is None
        assert j.storage.observations_frame().equals(expected)


def test_scratch_files_a_killed_process_left_are_removed(tmp_path, monkeypatch):
    """A process killed during a matrix read leaves its scratch files behind; the next read
    through the Arrow path in any process removes them, and leaves alone those of a process
    that is still running and every other file."""
    import subprocess
    import sys
    import tempfile

    from workbench.storage.announcements import process_token
    from workbench.storage.sqlite import storage

    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "from workbench.storage.announcements import process_token; print(process_token())",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = child.stdout.strip()  # its process has exited
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    left = [scratch / f"lithify-obs-{dead}-0123456789ab-{k}.db" for k in range(3)]
    mine = scratch / f"lithify-obs-{process_token()}-ba9876543210-0.db"
    other = scratch / "lithify-obs-notes.txt"
    for f in (*left, mine, other):
        f.write_bytes(b"x")
    path = tmp_path / "obs.db"
    with Journal.open(path, durability="lazy") as w:
        for n in range(40):
            w.root().observe("recall", n / 40)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(storage, "OBS_ROWS_DIRECT", 10)
    with Journal.open(path) as j:
        assert j.matrix().height == 40
    assert sorted(scratch.iterdir()) == sorted([mine, other])


def test_long_rows_read_without_polars_are_the_long_matrix(j):
    """``long_rows`` (what ``lithify sweep --json`` prints, in the worker install too) gives the
    rows and columns of the long matrix: nested, mixed and reserved-name parameters alike."""
    from workbench import sweep
    from workbench.matrix import long_rows

    root = j.root()
    root.apply({"x": 1})
    s = sweep.plan(j, 0, 1, {"k": [1, 2.5], "cfg": [{"a": 1}], "seq": ["s"], "tag": ["t"]})
    for f in s.forks:
        b = j.branch(f.branch)
        b.observe("recall", 0.5 + f.params["k"] / 10)
        b.observe("cost", 3.0)
    root.observe("recall", 0.1)
    for selected in (s.id, None):
        want = [dict(r) for r in j.matrix(sweep=selected).iter_rows(named=True)]
        got = long_rows(j, sweep=selected)
        assert got == want and list(got[0]) == list(want[0])
    with pytest.raises(Exception, match="no sweep 99"):
        long_rows(j, sweep=99)
