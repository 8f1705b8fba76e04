"""The results routes while a sweep runs and after its journal is replaced, through the real
server (jupyter_server's pytest plugin): a chart before any fork has a value says so with a 200;
an unknown sweep among several is a 404; chart and table give each branch the same value (its
last, partial ones marked); a journal made again at the same path, with the same shape, is read
afresh (the chart too) and named anew; a sweep run by another process is running (Cancel asks it
through the journal; Resume is refused), one with nothing left has nothing to resume; a study
with a categorical parameter draws its metric view against a number; the table shows no empty
name column nor a metric that repeats a parameter."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from tornado.httpclient import HTTPClientError

from workbench import Journal, charts, sweep

pytestmark = pytest.mark.slow  # a real server

pytest_plugins = ["pytest_jupyter.jupyter_server"]

TESTS = str(Path(__file__).parent)


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"workbench.server": True}}}


async def get(jp_fetch, path, **params):
    r = await jp_fetch("lithify", "api", *path.split("/"), params=params)
    return json.loads(r.body)


async def fetch_error(jp_fetch, *path, **kw):
    with pytest.raises(HTTPClientError) as err:
        await jp_fetch("lithify", "api", *path, **kw)
    return err.value.code, json.loads(err.value.response.body)


def live_grid(path: Path, scale: float = 1.0) -> int:
    """A grid sweep of eight forks in every state a run goes through, written by hand (no
    runner): three finished (recall reported at three steps, the last its value), one running,
    one cancelled and one failed (each reported once: an intermediate value), two pending
    (nothing yet). ``scale`` multiplies every value. Its id."""
    with Journal.open(path) as j:
        at = j.root().apply({"start": 1})
        s = sweep.plan(j, 0, at, {"budget": [100, 300, 1000, 3000]}, seeds=2)
        states = ["finished"] * 3 + ["running", "cancelled", "failed", "pending", "pending"]
        for f, state in zip(s.forks, states, strict=True):
            b = j.branch(f.branch)
            if state == "pending":
                continue
            steps = 3 if state == "finished" else 1
            for step in range(steps):
                value = scale * (f.params["budget"] / 3000) * (step + 1) / 3 + 0.01 * f.branch
                sweep.report(b, value, step, metric="recall")
            j.record_run(f.branch, s.id, state)
        return s.id


def branch_values(spec: dict, y: str) -> dict[int, float]:
    """The value each branch has in a metric view's spec (its points)."""
    rows = [r for rows in spec["datasets"].values() for r in rows]
    return {r["branch"]: r[y] for r in rows if r.get("_layer") == "branch"}


async def test_a_chart_before_the_first_value_says_so(jp_fetch, jp_root_dir):
    with Journal.open(jp_root_dir / "early.db") as j:
        at = j.root().apply({"start": 1})
        s = sweep.plan(j, 0, at, {"budget": [100, 300, 1000]})
        for f in s.forks[:2]:  # two forks run, each with an intermediate report
            sweep.report(j.branch(f.branch), 0.2, 0, metric="recall")
            j.record_run(f.branch, s.id, "running", started=int(time.time() * 1000))
    base = {"journal": "early.db", "sweep": str(s.id)}
    for kind in charts.KINDS:
        spec = await get(jp_fetch, "chart.json", kind=kind, **base)  # 200, not 400
        meta = spec["usermeta"]["lithify"]
        if kind in ("steps", "timeline"):  # the curves reported so far, the forks running
            assert "waiting" not in meta, meta
        else:
            assert meta["waiting"] == "no value of recall yet: 2 running, 1 pending", (kind, meta)
    svg = await jp_fetch("lithify", "api", "chart.svg", params={**base, "kind": "metric"})
    assert b"no value of recall yet" in svg.body
    axes = await get(jp_fetch, "axes", **base)
    assert axes["views"] == dict.fromkeys(charts.KINDS)  # every view says it, none refuses
    # an unknown sweep among several: not found (404), as for sweep=
    code, body = await fetch_error(
        jp_fetch, "chart.json", params={"journal": "early.db", "sweeps": f"{s.id},99"}
    )
    assert (code, body["kind"]) == (404, "NotFound") and "no sweep 99" in body["error"]
    with Journal.open(jp_root_dir / "early.db") as j:
        with pytest.raises(Exception) as e:
            charts.gather(j, charts.Selection(sweeps=(s.id, 99)))
        assert type(e.value).__name__ == "NotFound"


async def test_chart_and_table_give_each_branch_the_same_value(jp_fetch, jp_root_dir):
    sid = live_grid(jp_root_dir / "live.db")
    for partial in ("0", "1"):
        q = {"journal": "live.db", "sweep": str(sid), "partial": partial}
        table = await get(jp_fetch, "matrix", wide="1", **q)
        assert table["metrics"] == ["recall"]
        cols = table["columns"]
        rows = [dict(zip(cols, r, strict=True)) for r in table["rows"]]
        in_table = {r["branch"]: r["recall"] for r in rows if r["recall"] is not None}
        spec = await get(jp_fetch, "chart.json", kind="metric", y="recall", **q)
        assert branch_values(spec, "recall") == pytest.approx(in_table), partial
        states = {r["branch"]: r["state"] for r in rows}
        shown = {states[b] for b in in_table}
        if partial == "0":  # only results: a running, cancelled or failed fork has none
            assert shown == {"complete"}
        else:  # their last reports too, each point saying its fork's state
            assert shown == {"complete", "running", "cancelled", "failed"}
            points = [r for rs in spec["datasets"].values() for r in rs if r.get("branch")]
            assert {p["_state"] for p in points} == shown


async def test_a_journal_made_again_at_its_path_is_read_afresh(jp_fetch, jp_root_dir):
    """Deleted and made again with the same shape (same events, forks and run statuses) but
    other values: every route answers from the new one, the chart's cached table too, and
    each answer names the journal it is about."""
    db = jp_root_dir / "again.db"
    sid = live_grid(db)
    q = {"journal": "again.db", "sweep": str(sid), "kind": "metric", "y": "recall"}
    first = await jp_fetch("lithify", "api", "chart.json", params=q)
    before = branch_values(json.loads(first.body), "recall")
    named = first.headers["Lithify-Journal"]
    for suffix in ("", "-wal", "-shm", "-intents"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    live_grid(db, scale=0.5)
    again = await jp_fetch("lithify", "api", "chart.json", params=q)
    after = branch_values(json.loads(again.body), "recall")
    assert after.keys() == before.keys() and after != before
    table = await get(jp_fetch, "matrix", wide="1", journal="again.db", sweep=str(sid))
    by_branch = {r[0]: r[table["columns"].index("recall")] for r in table["rows"]}
    assert {b: by_branch[b] for b in after} == pytest.approx(after)
    axes = await jp_fetch("lithify", "api", "axes", params={"journal": "again.db"})
    assert again.headers["Lithify-Journal"] == axes.headers["Lithify-Journal"] != named


def test_a_journal_written_over_in_place_is_opened_again(tmp_path):
    """Another journal copied over an open one (the same file, the same inode): the hub
    tells them apart by the creation time each journal records."""
    from workbench.server.hub import Hub

    with Journal.open(tmp_path / "a.db") as j:
        j.root().apply({"which": "a"})
    with Journal.open(tmp_path / "b.db") as j:
        j.root().apply({"which": "b"})
        j.root().apply({"which": "b, again"})
        made = j.storage.meta["created"]
    hub = Hub(str(tmp_path))
    try:
        old = hub.journal("a.db")
        assert old.root().head == 1
        inode = os.stat(tmp_path / "a.db").st_ino
        with open(tmp_path / "b.db", "rb") as src, open(tmp_path / "a.db", "r+b") as dst:
            dst.truncate(0)
            shutil.copyfileobj(src, dst)
        assert os.stat(tmp_path / "a.db").st_ino == inode
        now = hub.journal("a.db")
        assert now is not old and now.storage.meta["created"] == made
        assert now.root().head == 2
    finally:
        hub.close()


async def test_a_sweep_another_process_runs_is_running_and_cancelled_through_the_journal(
    jp_fetch, jp_root_dir
):
    """A coordinator this server did not start (a study in a terminal): the sweep is running
    (Cancel applies, Resume does not, and is refused), Cancel reaches it through the journal,
    and once it stops, Resume applies to its forks left pending."""
    from workbench.sweep import watch

    with Journal.open(jp_root_dir / "cli.db") as j:
        at = j.root().apply({"start": 1})
        sid = sweep.plan(j, 0, at, {"budget": [1, 2]}).id
        cancelled: list[int] = []
        coordinator = watch.Watch(j, sid, lambda: cancelled.append(1))  # as a terminal's runs
        try:
            (mine,) = (await get(jp_fetch, "sweeps", journal="cli.db"))["sweeps"]
            assert (mine["running"], mine["resume"]) == (True, "it is running")
            glance = (await get(jp_fetch, "branches", journal="cli.db"))["sweeps"]
            assert glance[0]["state"] == "running"  # the fork tree says what the panel says
            body = json.dumps({"journal": "cli.db", "sweep": sid})
            code, err = await fetch_error(jp_fetch, "sweeps", "resume", method="POST", body=body)
            assert (code, err["kind"]) == (409, "Conflict") and "another process" in err["error"]
            r = await jp_fetch("lithify", "api", "sweeps", "cancel", method="POST", body=body)
            assert json.loads(r.body) == {"cancelled": sid}
            coordinator.beat()  # what it does every BEAT_S: it reads the request
            assert cancelled == [1]
        finally:
            coordinator.stop()
        (mine,) = (await get(jp_fetch, "sweeps", journal="cli.db"))["sweeps"]
        assert (mine["running"], mine["resume"]) == (False, None)  # two forks to run
        glance = (await get(jp_fetch, "branches", journal="cli.db"))["sweeps"]
        assert glance[0]["state"] == "pending"
        code, err = await fetch_error(jp_fetch, "sweeps", "cancel", method="POST", body=body)
        assert (code, err["kind"]) == (404, "NotFound") and "not running" in err["error"]


async def test_a_finished_study_with_a_category_draws_and_has_nothing_to_resume(
    jp_fetch, jp_root_dir, monkeypatch
):
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with Journal.open(jp_root_dir / "study.db") as j:
        at = j.root().apply({"start": 1})
        space = {
            "kind": sweep.Categorical(["a", "b", "c"]),
            "x1": sweep.Float(-5.0, 10.0),
            "x2": sweep.Float(0.0, 15.0),
        }
        sid = sweep.optimize(
            j,
            at,
            space,
            "loss",
            "minimize",
            forks=8,
            workers=2,
            sampler="random",
            pruner="median:n_startup_trials=2",
            seed=0,
            fn="sweep_fns:branin",
            progress=False,
        ).sweep
    q = {"journal": "study.db", "sweep": str(sid)}
    axes = await get(jp_fetch, "axes", **q)
    assert axes["x"] == "x1"  # a number: the metric view draws a line along x (not "kind")
    spec = await get(jp_fetch, "chart.json", kind="metric", **q)
    assert spec["usermeta"]["lithify"]["x"] == "x1" and branch_values(spec, "loss")
    by_kind = await get(jp_fetch, "chart.json", kind="metric", x="kind", **q)
    (line,) = [layer for layer in by_kind["layer"] if layer["mark"]["type"] == "line"]
    assert line["encoding"]["x"]["type"] == "ordinal"  # a category is no quantity
    (mine,) = (await get(jp_fetch, "sweeps", journal="study.db"))["sweeps"]
    statuses = {f["status"] for f in mine["forks"]}
    assert statuses <= {"finished", "pruned", "failed"}
    assert mine["running"] is False and mine["resume"] == f"every trial of study {sid} has ended"


async def test_the_version_changes_with_the_journal_and_only_then(jp_fetch, jp_root_dir):
    """What an idle page polls instead of the branch list: the same token while nothing
    changes; another after an event, a fork (a row, no event), a run record, or another
    journal made at the same path."""
    path = jp_root_dir / "v.db"
    with Journal.open(path) as j:
        at = j.root().apply({"start": 1})
    seen = [(await get(jp_fetch, "version", journal="v.db"))["version"]]
    assert (await get(jp_fetch, "version", journal="v.db"))["version"] == seen[-1]

    async def changed() -> None:
        now = (await get(jp_fetch, "version", journal="v.db"))["version"]
        assert now not in seen
        seen.append(now)
        assert (await get(jp_fetch, "version", journal="v.db"))["version"] == now

    with Journal.open(path) as j:
        j.root().apply({"x": 2})
    await changed()
    with Journal.open(path) as j:
        s = sweep.plan(j, 0, at, {"n": [1]})  # a fork: a branch row, no event
    await changed()
    with Journal.open(path) as j:
        j.record_run(s.forks[0].branch, s.id, "running")
    await changed()
    with Journal.open(path) as j:
        j.record_run(s.forks[0].branch, s.id, "finished")
    await changed()
    for suffix in ("", "-wal", "-shm"):
        (jp_root_dir / f"v.db{suffix}").unlink(missing_ok=True)
    with Journal.open(path) as j:  # another journal at the same path, the same shape
        j.root().apply({"start": 1})
        j.root().apply({"x": 2})
    await changed()


async def test_the_table_has_no_empty_name_column_nor_a_metric_repeating_a_parameter(
    jp_fetch, jp_root_dir
):
    """An agent that observes its own budget (the auditor does) gives the matrix a
    ``metric_budget`` beside the parameter ``budget``, the same numbers: the table shows one;
    a sweep's forks have no names: no empty ``branch_name`` column. A metric that differs from
    its parameter somewhere, and names a branch has, stay."""
    with Journal.open(jp_root_dir / "own.db") as j:
        at = j.root().apply({"start": 1})
        s = sweep.plan(j, 0, at, {"budget": [100, 300]}, seeds=2)
        for f in s.forks:
            b = j.branch(f.branch)
            b.observe("budget", float(f.params["budget"]))
            b.observe("recall", f.params["budget"] / 300)
    q = {"journal": "own.db", "sweep": str(s.id), "wide": "1"}
    table = await get(jp_fetch, "matrix", **q)
    assert table["columns"] == ["branch", "budget", "seed", "recall", "state"]
    assert table["metrics"] == ["recall"]
    with Journal.open(jp_root_dir / "own.db") as j:
        j.branch(s.forks[0].branch).observe("budget", 99.0)  # spent less than it was given
        j.root().fork("tuned", params={"budget": 300}).observe("recall", 0.5)
    table = await get(jp_fetch, "matrix", journal="own.db", wide="1")  # every branch
    assert {"branch_name", "budget", "metric_budget"} <= set(table["columns"])
    names = [r[table["columns"].index("branch_name")] for r in table["rows"]]
    assert "tuned" in names


async def test_the_results_table_shows_notes_and_artifacts_only_where_there_are_some(
    jp_fetch, jp_root_dir
):
    with Journal.open(jp_root_dir / "noted.db") as j:
        at = j.root().apply({"start": 1})
        s = sweep.plan(j, 0, at, {"budget": [100, 300]})
        for f in s.forks:
            j.branch(f.branch).observe("recall", f.params["budget"] / 300)
    q = {"journal": "noted.db", "sweep": str(s.id), "wide": "1"}
    table = await get(jp_fetch, "matrix", **q)
    assert "notes" not in table["columns"] and "artifacts" not in table["columns"]
    with Journal.open(jp_root_dir / "noted.db") as j:
        b = j.branch(s.forks[1].branch)
        b.note("the best one")
        b.attach("plot.png", b"\x89PNG")
    table = await get(jp_fetch, "matrix", **q)
    rows = {r[0]: dict(zip(table["columns"], r, strict=True)) for r in table["rows"]}
    noted = rows[s.forks[1].branch]
    assert (noted["notes"], noted["artifacts"]) == ("the best one", "plot.png")
    assert rows[s.forks[0].branch]["notes"] is None
    assert "notes" not in table["metrics"]
    csv = await jp_fetch("lithify", "api", "matrix", params={**q, "format": "csv"})
    assert b"notes" not in csv.body.splitlines()[0]  # the export stays the matrix
