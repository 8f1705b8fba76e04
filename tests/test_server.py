"""The jupyter_server extension's REST handlers, through jupyter_server's pytest plugin."""

from __future__ import annotations

import json
import time

import pytest
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
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        sweeps = (await get(jp_fetch, "sweeps", journal=journal_file))["sweeps"]
        if all(f["status"] == "finished" for f in sweeps[0]["forks"]):
            break
        time.sleep(0.2)
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
