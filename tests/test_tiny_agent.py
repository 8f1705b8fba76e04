"""The seam holds: a second agent (tests/tiny_agent.py, registered through $LITHIFY_AGENTS, the
run-time twin of the entry point) sweeps, charts and browses through the generic CLI, server
and widgets with nothing outside its own file naming it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli import lithify
from conftest import wait_for, wait_for_async

from workbench import Journal, plugins
from workbench.widgets import LiveResults, SweepLauncher

TESTS = str(Path(__file__).parent)


@pytest.fixture
def tally_env(monkeypatch):
    monkeypatch.setenv("LITHIFY_AGENTS", "tiny_agent:AGENT")
    monkeypatch.setenv("PYTHONPATH", TESTS + os.pathsep + os.environ.get("PYTHONPATH", ""))
    plugins.reload()
    yield
    plugins.reload()


def ok_json(*args: str):
    r = lithify("--json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_agent_is_found_by_its_state_name(tally_env):
    agent = plugins.agent_for("tests.tally/1")
    assert agent is not None and agent.name == "tally"
    assert agent.state_class().__name__ == "Tally"


@pytest.mark.slow
def test_cli_runs_its_command_then_sweeps_and_charts_with_its_defaults(tally_env, tmp_path):
    db = str(tmp_path / "tally.db")
    assert ok_json("--db", db, "tally", "--steps", "4") == {"head": 4, "total": 4}
    # no --fn, no grid: the agent's fork function and grid {"step": [1, 2, 5]}
    rows = ok_json("--db", db, "sweep", "--at", "4", "--workers", "2")
    totals = {r["step"]: r["value"] for r in rows if r["metric"] == "total"}
    assert totals == {1: 4 + 3, 2: 4 + 6, 5: 4 + 15}
    # a declared parameter range is checked before anything is forked
    r = lithify("--db", db, "sweep", "--at", "4", "--param", "step=500")
    assert r.returncode == 2 and "step" in r.stderr
    # the generic history, state and sweeps commands open the journal with the agent's State
    shown = ok_json("--db", db, "show", "main@2")
    assert shown["state"] == {"total": 2, "steps": [1, 1]}
    assert ok_json("--db", db, "diff", "main@1", "main@3")["changes"]
    sweeps = ok_json("--db", db, "sweeps")
    assert len(sweeps) == 1 and sweeps[0]["finished"] == 3
    # the chart's axes default to the agent's x and y
    out = tmp_path / "tally.svg"
    r = lithify("--db", db, "chart", "-o", str(out))
    assert r.returncode == 0, r.stderr
    svg = out.read_text()
    assert svg.startswith("<svg") and "step" in svg and "total" in svg


@pytest.mark.slow
def test_widgets_take_the_agents_grid_fn_and_axes(tally_env, tmp_path):
    from tiny_agent import Tally, start

    with Journal.open(tmp_path / "w.db", Tally) as j:
        start(j, 3)
        la = SweepLauncher(j, seeds=0, workers=2)
        assert la.fn == "tiny_agent:fork" and la.grid.value == "step=1,2,5"
        assert la.runner.value == "pool"
        live = LiveResults(j, interval=0.1)
        try:
            la.branch.value, la.seq.value = 0, 3
            la.launch()
            result = la.wait(timeout=120)
            assert result.ok, [f.error for f in result.forks]
            wait_for(lambda: live.rows >= 6, what="the live view to show the sweep's rows")
            assert live.rows == 6  # total and score for each of three forks
            layers = live.chart.chart.to_dict()["layer"]
            assert {lay["encoding"]["x"]["field"] for lay in layers} == {"step"}
            assert "total" in {lay["encoding"].get("y", {}).get("field") for lay in layers}
        finally:
            live.stop()


pytest_plugins = ["pytest_jupyter.jupyter_server"]


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"workbench.server": True}}}


@pytest.mark.slow
async def test_server_sweeps_and_charts_with_its_defaults(tally_env, jp_fetch, jp_root_dir):
    from tiny_agent import Tally, start

    with Journal.open(jp_root_dir / "t.db", Tally) as j:
        start(j, 3)
    body = {"journal": "t.db", "at": 3, "workers": 2}  # no grid, no fn: the agent's
    r = await jp_fetch("lithify", "api", "sweeps", method="POST", body=json.dumps(body))
    started = json.loads(r.body)
    assert len(started["forks"]) == 3

    async def ended() -> list | None:
        r = await jp_fetch("lithify", "api", "sweeps", params={"journal": "t.db"})
        forks = json.loads(r.body)["sweeps"][0]["forks"]
        return forks if all(f["status"] in ("finished", "failed") for f in forks) else None

    forks = await wait_for_async(ended, what="the sweep's three forks to end")
    assert [f["status"] for f in forks] == ["finished"] * 3, forks
    svg = await jp_fetch(
        "lithify", "api", "chart.svg", params={"journal": "t.db", "sweep": str(started["sweep"])}
    )
    text = svg.body.decode()
    assert text.startswith("<svg") and "step" in text and "total" in text


@pytest.mark.slow
def test_the_sweep_shorthands_are_the_agents_own(tally_env, tmp_path):
    """``--budgets`` is what the bundled agents add to ``lithify sweep``; a journal of another
    agent is told which shorthands its agent adds (none), not offered the auditor's."""
    db = str(tmp_path / "t.db")
    assert lithify("--db", db, "tally", "--steps", "3").returncode == 0
    r = lithify("--db", db, "sweep", "--at", "3", "--budgets", "1,2")
    assert r.returncode == 2, r.stderr
    assert "no such option: --budgets" in r.stderr and "agent (tally) adds: none" in r.stderr
    rows = ok_json("--db", db, "sweep", "--at", "3", "--param", "step=2", "--workers", "1")
    assert {r["step"] for r in rows} == {2}
