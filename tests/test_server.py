"""The jupyter_server extension's REST handlers, through jupyter_server's pytest plugin."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import threading
import time
from pathlib import Path

import pytest
from conftest import wait_for_async
from tornado.httpclient import HTTPClientError

from workbench import Journal
from workbench.agents.auditor import AuditState, Calls, MockModel, run, start

pytestmark = pytest.mark.slow  # real processes, kernels, servers or browsers

pytest_plugins = ["pytest_jupyter.jupyter_server"]


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"workbench.server": True}}}


@pytest.fixture
def journal_file(jp_root_dir):
    path = jp_root_dir / "work" / "audit.db"
    path.parent.mkdir()
    with Journal.open(path, AuditState) as j:
        start(j.root(), None, 3000, 6)
        run(j.root(), Calls(MockModel()))
    (jp_root_dir / "other.db").write_bytes(b"not sqlite at all")
    return "work/audit.db"


async def get(jp_fetch, path, **params):
    r = await jp_fetch("lithify", "api", *path.split("/"), params=params)
    return json.loads(r.body)


async def test_lists_journals_branches_events_state_diff(jp_fetch, journal_file):
    listing = await get(jp_fetch, "journals")
    assert [j["path"] for j in listing["journals"]] == [journal_file]
    branches = (await get(jp_fetch, "branches", journal=journal_file))["branches"]
    assert branches[0]["id"] == 0 and branches[0]["head"] > 60
    page = await get(jp_fetch, "events", journal=journal_file, branch="0", offset="1", limit="5")
    assert [e["seq"] for e in page["events"]] == [1, 2, 3, 4, 5] and page["events"][1][
        "kind"
    ] == "effect"
    assert len(page["events"][0]["hash"]) == 64 and page["events"][0]["summary"]
    state = await get(jp_fetch, "state", journal=journal_file, branch="0", seq="11")
    assert state["state"]["done"] and len(state["state"]["notes"]) == 1
    d = await get(jp_fetch, "diff", journal=journal_file, branch="0", a="10", b="11")
    ops = {c["path"]: c["op"] for c in d["changes"]}
    assert ops["notes[0]"] == "added" and ops["model_calls"] == "modified"
    matrix = await get(jp_fetch, "matrix", journal=journal_file)
    assert "metric" in matrix["columns"] and len(matrix["rows"]) == 8


async def test_search_endpoint_finds_payloads(jp_fetch, journal_file, jp_root_dir):
    with Journal.open(jp_root_dir / journal_file, AuditState) as j:
        f = j.root().fork_at(11)
        f.effect("tool:zebra", lambda: "a striped horse")
    found = await get(jp_fetch, "search", journal=journal_file, q="striped")
    assert [(e["branch"], e["seq"]) for e in found["events"]] == [(f.id, 12)]
    assert found["events"][0]["summary"]
    only_main = await get(jp_fetch, "search", journal=journal_file, q="striped", branch="0")
    assert only_main["events"] == [] and only_main["branch"] == 0
    with pytest.raises(HTTPClientError) as err:
        await get(jp_fetch, "search", journal=journal_file, q='"unbalanced')
    assert err.value.code == 400
    assert "not a search query" in json.loads(err.value.response.body)["error"]


async def test_bad_paths_get_4xx_with_a_message(jp_fetch, journal_file):
    for params, code in (
        ({"journal": "../../etc/passwd"}, 403),
        ({"journal": "other.db"}, 400),
        ({"journal": "missing.db"}, 404),
        ({}, 400),
        ({"journal": journal_file, "branch": "99"}, 404),
        ({"journal": journal_file, "branch": "x"}, 400),
    ):
        with pytest.raises(HTTPClientError) as err:
            await jp_fetch(
                "lithify", "api", "branches" if "branch" not in params else "events", params=params
            )
        assert err.value.code == code, params
        body = json.loads(err.value.response.body)
        assert body["error"] and "Traceback" not in body["error"]


async def test_start_list_and_cancel_sweeps(jp_fetch, journal_file):
    body = {"journal": journal_file, "branch": 0, "at": 21, "grid": "budget=100,5000", "workers": 2}
    r = await jp_fetch("lithify", "api", "sweeps", method="POST", body=json.dumps(body))
    started = json.loads(r.body)
    assert len(started["forks"]) == 2

    async def ended() -> list | None:
        sweeps = (await get(jp_fetch, "sweeps", journal=journal_file))["sweeps"]
        forks = sweeps[0]["forks"]
        return sweeps if all(f["status"] not in ("pending", "running") for f in forks) else None

    sweeps = await wait_for_async(ended, what="the sweep's two forks to end")
    assert sweeps[0]["id"] == started["sweep"] and all(
        f["status"] == "finished" for f in sweeps[0]["forks"]
    )
    svg = await jp_fetch(
        "lithify",
        "api",
        "chart.svg",
        params={"journal": journal_file, "sweep": str(started["sweep"])},
    )
    assert svg.body.startswith(b"<svg") and svg.headers["Content-Type"].startswith("image/svg+xml")
    png = await jp_fetch(
        "lithify",
        "api",
        "chart.png",
        params={
            "journal": journal_file,
            "sweep": str(started["sweep"]),
            "x": "budget",
            "y": "model_calls",
            "agg": "max",
            "log_x": "0",
            "theme": "dark",
        },
    )
    assert png.body[:8] == b"\x89PNG\r\n\x1a\n"
    dark = await jp_fetch(
        "lithify", "api", "chart.svg", params={"journal": journal_file, "theme": "dark"}
    )
    assert b"#1e1e1e" in dark.body
    code, body = await fetch_error(
        jp_fetch, "chart.svg", params={"journal": journal_file, "agg": "median"}
    )
    assert (code, body["kind"]) == (400, "InvalidValue")
    with pytest.raises(HTTPClientError) as err:
        await jp_fetch(
            "lithify",
            "api",
            "sweeps",
            "cancel",
            method="POST",
            body=json.dumps({"journal": journal_file, "sweep": 999}),
        )
    assert err.value.code == 404


async def test_requires_authentication(jp_fetch, journal_file):
    with pytest.raises(HTTPClientError) as err:
        await jp_fetch("lithify", "api", "journals", headers={"Authorization": "token wrong"})
    assert err.value.code == 403


async def fetch_error(jp_fetch, *path, **kw):
    with pytest.raises(HTTPClientError) as err:
        await jp_fetch("lithify", "api", *path, **kw)
    return err.value.code, json.loads(err.value.response.body)


async def test_nested_journals_downloads_tail_and_charts(jp_fetch, journal_file, jp_root_dir):
    deep = jp_root_dir / "a" / "b" / "c" / "d" / "e" / "deep.db"
    deep.parent.mkdir(parents=True)
    with Journal.open(deep) as j:
        j.root().apply({"x": 1})
    listing = await get(jp_fetch, "journals")
    assert [j["path"] for j in listing["journals"]] == ["a/b/c/d/e/deep.db", journal_file]
    assert "process" in listing["runners"]
    csv = await jp_fetch(
        "lithify", "api", "matrix", params={"journal": journal_file, "format": "csv"}
    )
    assert csv.headers["Content-Type"].startswith("text/csv")
    assert 'filename="audit-matrix.csv"' in csv.headers["Content-Disposition"]
    assert csv.body.decode().splitlines()[0].startswith("branch,branch_name,seq,metric,value")
    pq = await jp_fetch(
        "lithify", "api", "matrix", params={"journal": journal_file, "format": "parquet"}
    )
    assert pq.body[:4] == b"PAR1"
    code, body = await fetch_error(
        jp_fetch, "matrix", params={"journal": journal_file, "format": "xlsx"}
    )
    assert (code, body["kind"]) == (400, "InvalidValue")
    first = await get(jp_fetch, "tail", journal=journal_file, cursor="0", limit="5")
    assert [e["seq"] for e in first["events"]] == [1, 2, 3, 4, 5]
    rest = await get(jp_fetch, "tail", journal=journal_file, cursor=str(first["cursor"]))
    assert rest["events"][0]["seq"] == 6
    done = await get(jp_fetch, "tail", journal=journal_file, cursor=str(rest["cursor"]))
    assert done["events"] == [] and done["cursor"] == rest["cursor"]
    end = await get(jp_fetch, "tail", journal=journal_file, cursor="end")
    assert end == {"cursor": rest["cursor"], "events": []}
    code, body = await fetch_error(
        jp_fetch, "chart.svg", params={"journal": journal_file, "x": "nope", "y": "recall"}
    )
    assert code == 400 and body["kind"] == "CannotDraw" and "nope" in body["error"]


async def test_errors_are_json_with_the_cli_kinds(jp_fetch, journal_file, monkeypatch):
    code, body = await fetch_error(jp_fetch, "sweeps", method="POST", body="not json")
    assert (code, body["kind"]) == (400, "InvalidValue") and "JSON" in body["error"]
    code, body = await fetch_error(
        jp_fetch, "sweeps", method="POST", body=json.dumps({"journal": journal_file})
    )
    assert (code, body["kind"]) == (400, "InvalidValue") and "'at'" in body["error"]
    code, body = await fetch_error(jp_fetch, "branches", params={"journal": "../x.db"})
    assert (code, body["kind"]) == (403, "PermissionError")

    def broken(self):
        raise TypeError("a bug of ours")

    monkeypatch.setattr(Journal, "branches", broken)
    code, body = await fetch_error(jp_fetch, "branches", params={"journal": journal_file})
    assert (code, body["kind"]) == (500, "InternalError") and "a bug of ours" in body["error"]


async def test_a_drivers_fault_gets_the_clis_answer(jp_fetch, journal_file, monkeypatch, tmp_path):
    """A raw sqlite3 fault that reaches a route is translated as the CLI translates it: the
    same kind and message from both clients (one translation: ``storage.fault``)."""
    import sqlite3

    from workbench.cli.app import fail
    from workbench.storage import fault

    def locked(self):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(Journal, "branches", locked)
    code, body = await fetch_error(jp_fetch, "branches", params={"journal": journal_file})
    assert (code, body["kind"]) == (503, "Busy")
    expected = fault(sqlite3.OperationalError("database is locked"), journal_file)
    assert body["error"] == " ".join(str(expected).split())
    monkeypatch.setenv("LITHIFY_DB", journal_file)
    out = tmp_path / "out.json"
    with pytest.raises(SystemExit) as e, open(out, "w") as f:
        monkeypatch.setattr("sys.stdout", f)
        fail(sqlite3.OperationalError("database is locked"), as_json=True)
    doc = json.loads(out.read_text())
    assert (doc["kind"], doc["error"], e.value.code) == ("Busy", body["error"], 1)


async def test_a_journal_deleted_and_made_again_is_reopened(jp_fetch, jp_root_dir):
    path = jp_root_dir / "again.db"
    with Journal.open(path) as j:
        j.root().apply({"x": 1})
    first = await get(jp_fetch, "branches", journal="again.db")
    assert first["branches"][0]["head"] == 1
    for suffix in ("", "-wal", "-shm", "-intents"):
        (jp_root_dir / f"again.db{suffix}").unlink(missing_ok=True)
    code, _ = await fetch_error(jp_fetch, "branches", params={"journal": "again.db"})
    assert code == 404
    with Journal.open(path) as j:
        for x in range(3):
            j.root().apply({"x": x})
    again = await get(jp_fetch, "branches", journal="again.db")
    assert again["branches"][0]["head"] == 3


async def test_rerun_failed_and_resume_from_the_api(jp_fetch, jp_root_dir, monkeypatch):
    import os

    tests = os.path.dirname(__file__)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(p for p in (tests, os.environ.get("PYTHONPATH", "")) if p)
    )
    from workbench import sweep

    path = jp_root_dir / "sw.db"
    with Journal.open(path) as j:
        at = j.root().apply({"start": 1})
        pending = sweep.plan(j, 0, at, {"sleep": [0.01, 0.02]}, fn="sweep_fns:sleepy").id
    body = {"journal": "sw.db", "at": at, "grid": "sleep=0.01,0.02", "fn": "sweep_fns:boom"}
    started = json.loads(
        (await jp_fetch("lithify", "api", "sweeps", method="POST", body=json.dumps(body))).body
    )

    async def forks_of(sweep_id):
        async def ended() -> list | None:
            listed = (await get(jp_fetch, "sweeps", journal="sw.db"))["sweeps"]
            (s,) = [x for x in listed if x["id"] == sweep_id]
            done = not s["running"] and all(
                f["status"] not in ("pending", "running") for f in s["forks"]
            )
            return s["forks"] if done else None

        return await wait_for_async(ended, what=f"sweep {sweep_id} to end")

    failed = await forks_of(started["sweep"])
    assert {f["status"] for f in failed} == {"failed"}
    err = failed[0]["error"]
    assert err["ename"] == "RuntimeError" and "no luck" in err["evalue"] and err["traceback"]
    rerun = json.loads(
        (
            await jp_fetch(
                "lithify",
                "api",
                "sweeps",
                "rerun",
                method="POST",
                body=json.dumps({"journal": "sw.db", "sweep": started["sweep"]}),
            )
        ).body
    )
    assert sorted(rerun["forks"]) == sorted(f["branch"] for f in failed)
    await forks_of(started["sweep"])
    resumed = json.loads(
        (
            await jp_fetch(
                "lithify",
                "api",
                "sweeps",
                "resume",
                method="POST",
                body=json.dumps({"journal": "sw.db", "sweep": pending}),
            )
        ).body
    )
    assert len(resumed["forks"]) == 2
    assert {f["status"] for f in await forks_of(pending)} == {"finished"}
    code, body = await fetch_error(
        jp_fetch,
        "sweeps",
        "resume",
        method="POST",
        body=json.dumps({"journal": "sw.db", "sweep": pending}),
    )
    assert (code, body["kind"]) == (404, "NotFound")  # nothing left to run


async def test_axes_cross_branch_diff_compare_and_parallel(jp_fetch, journal_file, jp_root_dir):
    from workbench import sweep

    path = jp_root_dir / journal_file
    with Journal.open(path, AuditState) as j:
        fork = j.root().fork_at(11, name="other")
        start(fork, budget=500)
        run(fork, Calls(MockModel()))
        ids = []
        for budgets in ([300, 1200], [600, 2400]):
            p = sweep.plan(j, 0, 21, {"budget": budgets, "seed": [0, 1], "k": [1, 2]})
            for f in p.forks:
                start(j.branch(f.branch), budget=f.params["budget"])
                run(j.branch(f.branch), Calls(MockModel()))
            ids.append(p.id)
    axes = await get(jp_fetch, "axes", journal=journal_file)
    assert (axes["x"], axes["y"]) == ("budget", "recall") and "recall" in axes["metrics"]
    assert set(axes["varied"]) >= {"budget", "seed", "k"} and axes["sweeps"] == ids
    d = await get(jp_fetch, "diff", journal=journal_file, **{"from": "main@11", "to": "other@14"})
    assert d["from"] == {"branch": 0, "seq": 11} and d["to"]["seq"] == 14
    assert d["changes"] and len(d["states"]) == 2
    both = await jp_fetch(
        "lithify",
        "api",
        "chart.svg",
        params={"journal": journal_file, "sweeps": f"{ids[0]},{ids[1]}"},
    )
    text = both.body.decode()
    assert f"sweep {ids[0]}" in text and f"sweep {ids[1]}" in text
    par = await jp_fetch(
        "lithify",
        "api",
        "chart.svg",
        params={"journal": journal_file, "sweep": str(ids[0]), "kind": "parallel"},
    )
    assert par.body.startswith(b"<svg")
    other = await get(jp_fetch, "branch", journal=journal_file, branch=str(fork.id))
    assert other["name"] == "other" and other["fork_seq"] == 11 and other["parent"] == 0
    assert other["metrics"]["recall"] >= 0 and other["status"] is None
    code, body = await fetch_error(
        jp_fetch, "branch", params={"journal": journal_file, "branch": "999"}
    )
    assert (code, body["kind"]) == (404, "NotFound")
    wide = await get(jp_fetch, "matrix", journal=journal_file, wide="1")
    assert "recall" in wide["columns"] and "metric" not in wide["columns"]


async def test_an_empty_grid_is_refused_not_replaced_by_the_default(jp_fetch, journal_file):
    body = {"journal": journal_file, "at": 21, "grid": "  "}
    code, err = await fetch_error(jp_fetch, "sweeps", method="POST", body=json.dumps(body))
    assert (code, err["kind"]) == (400, "InvalidValue") and "grid is empty" in err["error"]
    listed = (await get(jp_fetch, "sweeps", journal=journal_file))["sweeps"]
    assert listed == []  # nothing was planned


async def test_sweep_defaults_come_from_the_library_and_warm_takes_the_agents_template(
    jp_fetch, journal_file, jp_root_dir, jp_serverapp
):
    d = await get(jp_fetch, "defaults", journal=journal_file)
    assert d["agent"] == "auditor" and d["grid"] == {"budget": [300, 600, 1200, 2400, 4800]}
    assert d["grid_text"] == "budget=300,600,1200,2400,4800"
    assert d["runner"] == "pool" and d["fn"] == "workbench.agents.auditor:run_fork"
    assert "warm" in d["runners"] and d["workers"] >= 1
    # warm without a notebook: the agent's template, as the CLI and the widgets would run it
    body = {"journal": journal_file, "at": 21, "grid": "budget=100", "runner": "warm", "workers": 1}
    r = await jp_fetch("lithify", "api", "sweeps", method="POST", body=json.dumps(body))
    started = json.loads(r.body)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        sweeps = (await get(jp_fetch, "sweeps", journal=journal_file))["sweeps"]
        if all(f["status"] in ("finished", "failed") for f in sweeps[-1]["forks"]):
            break
        await asyncio.sleep(0.2)
    fork = sweeps[-1]["forks"][0]
    assert sweeps[-1]["id"] == started["sweep"] and fork["status"] == "finished", fork
    hub = jp_serverapp.web_app.settings["lithify_hub"]
    handles = list(hub.sweeps.values())
    for _ in range(600):  # the warm kernel is shut down after the last fork
        if all(h.done for h in handles):
            break
        await asyncio.sleep(0.1)
    assert all(h.done for h in handles)
    # The warm kernel's client leaves zmq sockets to the garbage collector; collect them here,
    # not in the middle of a later import (their finalizers' warnings would run in there).
    gc.collect()
    with Journal.open(jp_root_dir / journal_file, readonly=True) as j:
        how = next(s.how for s in j.sweeps() if s.id == started["sweep"])
    assert how["runner"] == "warm" and how["notebook"].endswith("auditor_fork.ipynb")


async def test_a_slow_library_call_does_not_stall_the_server(jp_fetch, journal_file, monkeypatch):
    """Handlers run the library on their own threads: while one request waits on a slow call,
    the server answers others (Jupyter's kernels' websockets share its event loop)."""
    gate, entered = threading.Event(), threading.Event()
    real = Journal.branches

    def slow(self):
        entered.set()
        gate.wait(30)
        return real(self)

    monkeypatch.setattr(Journal, "branches", slow)
    pending = asyncio.ensure_future(get(jp_fetch, "branches", journal=journal_file))
    for _ in range(3000):
        if entered.is_set():
            break
        await asyncio.sleep(0.01)
    assert entered.is_set()
    listed = await get(jp_fetch, "journals")  # answered while /branches is still waiting
    assert [j["path"] for j in listed["journals"]] == ["work/audit.db"]
    assert not pending.done()
    gate.set()
    assert (await pending)["branches"][0]["id"] == 0


async def test_views_as_vega_lite_specs_the_filter_and_any_selection(jp_fetch, jp_root_dir):
    from test_charts import make_grid, vega_lite_errors

    from workbench import charts

    with Journal.open(jp_root_dir / "grid.db") as j:
        sweep_id = make_grid(j)
        forks = [b for s in j.sweeps() for b in s.branches]
    base = {"journal": "grid.db", "sweep": str(sweep_id), "y": "recall"}
    for kind in charts.KINDS:
        spec = await get(jp_fetch, "chart.json", kind=kind, **base)
        assert vega_lite_errors(spec) == [], kind
        assert spec["usermeta"]["lithify"]["kind"] == kind
    svg = await jp_fetch("lithify", "api", "chart.svg", params={**base, "kind": "history"})
    assert svg.body.startswith(b"<svg") and b"highest so far" in svg.body
    axes = await get(jp_fetch, "axes", **base)
    assert axes["views"] == dict.fromkeys(charts.KINDS) and axes["order"] == "fork"
    assert axes["forks"] == 16 and (axes["x"], axes["y"]) == ("budget", "recall")
    # any selection: branch ids, a filter expression
    some = ",".join(map(str, forks[:3]))
    mine = await get(jp_fetch, "chart.json", journal="grid.db", branches=some, y="recall")
    assert mine["usermeta"]["lithify"]["selection"] == "3 branches"
    where = "budget >= 1000 and recall > 0.5"
    found = await get(jp_fetch, "filter", journal="grid.db", q=where)
    assert found["query"] == where and found["total"] == 17 and found["count"] == 4
    rows = await get(jp_fetch, "matrix", journal="grid.db", wide="1", where=where)
    assert sorted(r[0] for r in rows["rows"]) == sorted(found["branches"])
    code, body = await fetch_error(
        jp_fetch, "filter", params={"journal": "grid.db", "q": "recall >"}
    )
    assert code == 400 and body["kind"] == "InvalidValue" and "expected a value" in body["error"]
    code, body = await fetch_error(
        jp_fetch,
        "chart.json",
        params={"journal": "grid.db", "branches": some, "kind": "importance"},
    )
    assert (code, body["kind"]) == (400, "CannotDraw")
    assert body["error"] == (
        "importance: importance needs two parameters that vary; only retrieval varies in this "
        "selection"
    )


def test_the_hubs_branch_table_follows_the_journal(tmp_path, monkeypatch):
    """The results routes share one branch table per journal, read again when an event, a
    branch or a run's status changed, and only then."""
    import polars as pl

    from workbench import sweep
    from workbench.server import hub as hub_module

    monkeypatch.setattr(hub_module, "FRESH_S", 0.0)  # every call asks whether the journal moved
    with Journal.open(tmp_path / "t.db") as j:
        j.root().apply({"a": 1})
        fork = j.root().fork_at(1, params={"budget": 10})
        hub = hub_module.Hub(str(tmp_path))
        first = hub.table(j)
        assert hub.table(j) is first  # nothing changed: the same table
        fork.observe("recall", 0.5)
        seen = hub.table(j)
        assert seen is not first
        assert seen.frame.filter(pl.col("branch") == fork.id)["recall"].to_list() == [0.5]
        late = j.root().fork_at(1, params={"budget": 20})  # a branch, no event
        assert late.id in hub.table(j).frame["branch"].to_list()

        planned = sweep.plan(j, 0, 1, {"budget": [30]})
        member = planned.forks[0].branch
        assert hub.table(j).frame.filter(pl.col("branch") == member)["status"][0] == "pending"
        j.record_run(member, planned.id, "failed")  # a status, no event
        assert hub.table(j).frame.filter(pl.col("branch") == member)["status"][0] == "failed"
        hub.close()


async def test_optimize_from_the_api(jp_fetch, journal_file, monkeypatch):
    tests = str(Path(__file__).parent)
    monkeypatch.setenv("PYTHONPATH", tests + os.pathsep + os.environ.get("PYTHONPATH", ""))
    body = {
        "journal": journal_file,
        "at": 21,
        "space": "x1=float:-5:10\nx2=float:0:15\nkind=cat:a,b,c",
        "objective": "loss",
        "direction": "minimize",
        "forks": 3,
        "workers": 2,
        "sampler": "random",
        "pruner": "none",
        "seed": 0,
        "fn": "sweep_fns:branin",
    }
    r = await jp_fetch("lithify", "api", "optimize", method="POST", body=json.dumps(body))
    sweep_id = json.loads(r.body)["sweep"]
    study = {}
    for _ in range(1200):
        study = await get(jp_fetch, "optimize", journal=journal_file, sweep=str(sweep_id))
        if study["counts"]["complete"] == 3:
            break
        await asyncio.sleep(0.1)
    assert study["counts"]["complete"] == 3 and study["best"]["value"] == min(
        t["value"] for t in study["trials"]
    )
    listed = (await get(jp_fetch, "sweeps", journal=journal_file))["sweeps"]
    mine = next(s for s in listed if s["id"] == sweep_id)
    assert mine["kind"] == "optimize" and set(mine["space"]) == {"x1", "x2", "kind"}
    assert mine["planned"] == 3  # a study's trials (mid-study, more than it has forked yet)
    # the fork tree's header: the study at a glance
    glance = (await get(jp_fetch, "branches", journal=journal_file))["sweeps"]
    assert {**next(s for s in glance if s["id"] == sweep_id), "counts": None} == {
        "id": sweep_id,
        "kind": "optimize",
        "planned": 3,
        "forks": 3,
        "counts": None,
        "state": "finished",
    }
    # what the Lab's optimize form starts from: the auditor's grid spanned, its metric
    study = (await get(jp_fetch, "defaults", journal=journal_file))["study"]
    assert (study["space"], study["objective"]) == (["budget=int:300:4800"], "recall")
    assert study["samplers"][:2] == ["tpe", "random"] and "hyperband" in study["pruners"]
    assert mine["objectives"] == ["loss"] and len(mine["forks"]) == 3
    bad = {**body, "space": "x1=float:10:-5"}
    code, err = await fetch_error(jp_fetch, "optimize", method="POST", body=json.dumps(bad))
    assert (code, err["kind"]) == (400, "InvalidValue") and "inverted" in err["error"]
    code, err = await fetch_error(
        jp_fetch, "optimize", params={"journal": journal_file, "sweep": "99"}
    )
    assert code == 404


async def test_notes_and_artifacts_through_the_api(jp_fetch, journal_file, jp_root_dir):
    """A note written in the Lab is an event on the branch; the branch detail lists notes and
    artifacts; an artifact downloads as its bytes; a note on a fork a running sweep may still
    write is refused (409), and one on a branch at rest goes through."""
    from workbench import sweep
    from workbench.sweep.watch import Watch

    path = jp_root_dir / journal_file
    with Journal.open(path, AuditState) as j:
        j.root().attach("findings.json", b'{"bugs": 3}')
        j.root().attach('☃ "page".html', b"<script>alert(1)</script>")
        planned = sweep.plan(j, 0, 1, {"budget": [300]})
        fork = planned.forks[0].branch
    r = await jp_fetch(
        "lithify",
        "api",
        "note",
        method="POST",
        body=json.dumps({"journal": journal_file, "branch": 0, "text": " lexical is slow "}),
    )
    reply = json.loads(r.body)
    assert [n["text"] for n in reply["notes"]] == ["lexical is slow"]
    detail = await get(jp_fetch, "branch", journal=journal_file, branch="0")
    assert [n["text"] for n in detail["notes"]] == ["lexical is slow"]
    art, page = detail["artifacts"]
    assert (art["name"], art["size"], art["media_type"]) == (
        "findings.json",
        11,
        "application/json",
    )
    file = await jp_fetch(
        "lithify",
        "api",
        "artifact",
        params={"journal": journal_file, "branch": "0", "name": "findings.json"},
    )
    assert file.body == b'{"bugs": 3}'
    assert "findings.json" in file.headers["Content-Disposition"]
    # any name downloads (RFC 6266), and a page someone attached is never run from our origin
    html = await jp_fetch(
        "lithify",
        "api",
        "artifact",
        params={"journal": journal_file, "branch": "0", "name": page["name"]},
    )
    assert html.body == b"<script>alert(1)</script>"
    assert html.headers["Content-Type"] == "application/octet-stream"
    assert html.headers["X-Content-Type-Options"] == "nosniff"
    assert "filename*=UTF-8''%E2%98%83%20%22page%22.html" in html.headers["Content-Disposition"]
    for params, status in (
        ({"branch": "0", "name": "nope.txt"}, 404),
        ({"branch": "0"}, 400),
    ):
        code, _ = await fetch_error(
            jp_fetch, "artifact", params={"journal": journal_file, **params}
        )
        assert code == status
    empty = {"journal": journal_file, "branch": 0, "text": "   "}
    code, _ = await fetch_error(jp_fetch, "note", method="POST", body=json.dumps(empty))
    assert code == 400
    with Journal.open(path, AuditState) as j:
        j.storage.put_run(fork, planned.id, "running")
        watch = Watch(j, planned.id, cancel=lambda: None)  # this process drives it
        try:
            body = {"journal": journal_file, "branch": fork, "text": "mid-run"}
            code, said = await fetch_error(jp_fetch, "note", method="POST", body=json.dumps(body))
            assert code == 409 and "running" in said["error"], said
        finally:
            watch.stop()
        assert j.branch(fork).notes() == []
        j.storage.put_run(fork, planned.id, "failed")
    body = {"journal": journal_file, "branch": fork, "text": "failed: why"}
    await jp_fetch("lithify", "api", "note", method="POST", body=json.dumps(body))
    with Journal.open(path, AuditState) as j:
        assert [n.text for n in j.branch(fork).notes()] == ["failed: why"]
