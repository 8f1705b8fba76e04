"""The lithify CLI end to end (in process through CliRunner; real subprocesses where the
point is a process: SIGKILL resume, crash-demo), the demo."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli import lithify
from test_auditor import make_tree

from workbench import Journal
from workbench.agents.auditor import AuditState, rerun_counts


def lithify_process(
    *args: str, env: dict | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


def ok_json(*args: str, **kw):
    r = lithify("--json", *args, **kw)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.slow  # the sweep runs its forks in worker processes
def test_run_history_at_fork_sweep_matrix_report_verify(tmp_path):
    tree = make_tree(tmp_path / "tree")
    db = str(tmp_path / "cli.db")
    doc = ok_json("--db", db, "run", "--repo", str(tree), "--budget", "60")
    for k in (
        "files",
        "model_calls",
        "compactions",
        "findings",
        "recall",
        "precision",
        "tokens_in",
        "budget",
        "wall_ms",
    ):
        assert k in doc
    assert doc["files"] == 6 and doc["budget"] == 60 and doc["compactions"] >= 1
    again = ok_json("--db", db, "run")  # resume of a finished branch: same numbers
    assert again["model_calls"] == doc["model_calls"] and again["recall"] == doc["recall"]

    hist = ok_json("--db", db, "history", "--from", "1", "--to", "3")
    assert [h["seq"] for h in hist] == [1, 2, 3]
    for field in ("branch", "seq", "kind", "hash", "parent_hash", "ts", "position", "summary"):
        assert field in hist[0]
    assert hist[1]["parent_hash"] == hist[0]["hash"]
    text = lithify("--db", db, "history", "--to", "2").stdout
    assert hist[0]["hash"][:12] in text

    at = ok_json("--db", db, "at", "--seq", "11", "--notes")
    assert at["seq"] == 11 and len(at["done"]) == 1 and at["done"][0] == "a.rs"
    assert "## a.rs" in lithify("--db", db, "at", "--seq", "11", "--notes").stdout

    fork = ok_json("--db", db, "fork", "--at", "11", "--budget", "5000")
    assert fork["budget"] == 5000 and fork["recall"] == 1.0 and fork["parent"] == 0

    rows = ok_json("--db", db, "sweep", "--at", "11", "--budgets", "20,5000")
    assert {r["budget"] for r in rows} == {20, 5000}
    recall = {r["budget"]: r["value"] for r in rows if r["metric"] == "recall"}
    assert recall[20] <= recall[5000] == 1.0
    assert all({"branch", "metric", "value"} <= set(r) for r in rows)

    table = list(csv.DictReader(io.StringIO(lithify("--db", db, "matrix").stdout)))
    assert {"branch", "metric", "value", "budget"} <= set(table[0])
    assert len(ok_json("--db", db, "matrix")) == len(table)

    assert lithify("--db", db, "report").stdout.startswith("# Audit report")
    status = ok_json("--db", db, "status")
    assert len(status) == 4 and all(s["finished"] for s in status)
    assert ok_json("--db", db, "verify")["ok"] is True


def test_refs_wherever_a_point_is_taken_and_empty_ranges(tmp_path):
    db = str(tmp_path / "r.db")
    tree = make_tree(tmp_path / "tree")
    assert lithify("--db", db, "run", "--repo", str(tree), "--max-files", "2").returncode == 0
    by_seq = ok_json("--db", db, "at", "--seq", "11")
    assert ok_json("--db", db, "at", "--seq", "main@11") == by_seq
    head = ok_json("--db", db, "history")[-1]["seq"]
    assert ok_json("--db", db, "at", "--seq", f"head~{head - 11}") == by_seq
    ok_json("--db", db, "tag", "main@11", "first-file")
    assert ok_json("--db", db, "at", "--seq", "first-file") == by_seq
    hist = ok_json("--db", db, "history", "--from", "first-file", "--to", "head~1")
    assert [e["seq"] for e in hist] == list(range(11, head))
    assert ok_json("--db", db, "history", "--from", "5", "--to", "2") == []  # empty: exit 0
    assert ok_json("--db", db, "log", "-n", "0") == []
    fork = ok_json("--db", db, "fork", "--at", f"head~{head - 11}", "--budget", "500")
    assert fork["fork_seq"] == 11 and fork["parent"] == 0
    r = lithify("--db", db, "show", "abcdef1")
    assert r.returncode == 1 and "hash prefixes need 8+ characters" in r.stderr


def test_an_objective_the_auditor_never_observes_is_refused_before_any_fork(tmp_path):
    db = str(tmp_path / "o.db")
    tree = make_tree(tmp_path / "tree")
    assert lithify("--db", db, "run", "--repo", str(tree), "--max-files", "1").returncode == 0
    with Journal.open(db) as j:
        before = (len(j.branches()), len(j.sweeps()))
    space = ("--space", "budget=int:100:6000:log")
    for cmd in (
        ["optimize", "--at", "main@1", *space, "--forks", "3"],
        ["evolve", "--at", "main@1", *space, "--population", "2", "--generations", "1"],
    ):
        r = lithify("--db", db, "--json", *cmd, "--objective", "nosuchmetric")
        assert r.returncode == 1, r.stdout + r.stderr
        doc = json.loads(r.stdout)
        assert doc["kind"] == "NoObjective", doc
        assert "'nosuchmetric'" in doc["error"] and "recall" in doc["error"]
    with Journal.open(db) as j:
        assert (len(j.branches()), len(j.sweeps())) == before  # nothing was written


def test_status_says_how_a_sweeps_fork_ended(tmp_path):
    """A pruned fork is pruned in `lithify status`, not "open", and its recall is partial."""
    db = str(tmp_path / "p.db")
    tree = make_tree(tmp_path / "tree")
    assert lithify("--db", db, "run", "--repo", str(tree), "--max-files", "1").returncode == 0
    from workbench import sweep

    with Journal.open(db, AuditState) as j:
        s = sweep.plan(j, 0, 1, {"budget": [300]})
        fork = s.forks[0].branch
        j.branch(fork).observe("recall", 0.25)
        j.record_run(fork, s.id, "pruned")
    rows = {r["id"]: r for r in ok_json("--db", db, "status")}
    assert rows[0]["state"] == "finished" and rows[0]["partial"] is False
    assert rows[fork]["state"] == "pruned" and rows[fork]["partial"] is True
    table = lithify("--db", db, "status").stdout
    assert "pruned" in table and "(partial)" in table


def test_usage_and_not_found_exit_codes(tmp_path):
    db = str(tmp_path / "x.db")
    assert lithify("--db", db, "at", "--seq", "1").returncode == 1  # no journal
    tree = make_tree(tmp_path / "tree")
    assert lithify("--db", db, "run", "--repo", str(tree), "--max-files", "1").returncode == 0
    r = lithify("--db", db, "at", "--seq", "999")
    assert r.returncode == 1 and "0..21" in r.stderr  # start, 10 per file, report x2, 8 metrics
    r = lithify("--db", db, "show", "main@999")  # the same mistake written as a ref: the same
    assert r.returncode == 1 and "0..21" in r.stderr
    for args in (  # a bare seq past the head: the same answer, whatever the command
        ["show", "999"],
        ["tag", "999", "x"],
        ["log", "999"],
        ["history", "--to", "999"],
        ["rollback", "--to", "999", "--yes"],
        ["diff", "main@1", "main@999"],
    ):
        r = lithify("--db", db, *args)
        assert r.returncode == 1 and "has seqs 0..21" in r.stderr, (args, r.stderr)
    assert lithify("--db", db, "report", "--branch", "7").returncode == 1
    assert lithify("--db", db, "sweep", "--at", "1", "--budgets", "a,b").returncode == 2
    r = lithify("--db", db, "sweep", "--at", "1", "--budget", "300")  # not the agent's shorthand
    assert r.returncode == 2 and "no such option: --budget" in r.stderr and "--budgets" in r.stderr
    r = lithify("--db", db, "sweep", "--at", "1", "--budgets", "300", "--param", "budget=600")
    assert r.returncode == 2 and "give one of them" in r.stderr
    assert lithify("--db", db, "at").returncode == 2  # missing --seq
    for cmd in (
        "run",
        "status",
        "at",
        "history",
        "fork",
        "sweep",
        "matrix",
        "report",
        "verify",
        "crash-demo",
        "demo",
    ):
        r = lithify(cmd, "--help")
        assert r.returncode == 0 and "Usage" in r.stdout, cmd


@pytest.mark.slow
def test_sigkill_mid_model_call_then_resume_reruns_no_tool_call(tmp_path):
    tree = make_tree(tmp_path / "tree")
    db, trace = tmp_path / "k.db", tmp_path / "trace.txt"
    env = {**os.environ, "AUDITOR_SLOW_MS": "40"}
    cmd = [
        sys.executable,
        "-m",
        "workbench",
        "--db",
        str(db),
        "run",
        "--repo",
        str(tree),
        "--budget",
        "60",
        "--trace",
        str(trace),
    ]
    kills = 0
    for wanted in (2, 5, 9):
        with subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as p:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and p.poll() is None:
                lines = trace.read_text().splitlines() if trace.exists() else []
                if len(lines) >= wanted + kills * 2 and lines[-1].startswith("model "):
                    break  # the child is inside a 40 ms model call
                time.sleep(0.001)
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                p.wait()
                kills += 1
                with Journal.open(db, AuditState) as j:
                    assert j.verify().ok
                    assert len(j.root().unknown_outcomes()) <= 1
    assert kills >= 2
    r = lithify_process("--db", str(db), "run", "--trace", str(trace))
    assert r.returncode == 0, r.stderr
    with Journal.open(db, AuditState) as j:
        counts = rerun_counts(j.root(), trace.read_text())
        assert j.root().state().report is not None
    assert counts["tool_calls_rerun"] == 0
    assert counts["model_calls_rerun"] <= kills


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


@pytest.mark.slow
def test_demo_writes_csv_png_and_shows_the_pitch(tmp_path):
    out = tmp_path / "demo"
    r = lithify_process("demo", "--out", str(out))  # the README's first command, as typed
    assert r.returncode == 0, r.stderr
    for phrase in (
        "crash",
        "as of event 40",
        "the first events",
        "budget   300",
        "matrix:",
        "chart:",
    ):
        assert phrase in r.stdout, phrase
    with (out / "matrix.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert {"branch", "metric", "value", "budget"} <= set(rows[0])
    w, h = png_size(out / "recall_vs_budget.png")
    assert 400 < w < 3000 and 300 < h < 2000
    assert (out / "recall_vs_budget.png").stat().st_size > 10_000
    again = lithify("demo", "--out", str(out))
    assert again.returncode == 2 and "not empty" in again.stderr


@pytest.mark.slow
def test_crash_demo_counts_reruns(tmp_path):
    db = str(tmp_path / "cd.db")
    doc = ok_json(
        "--db",
        db,
        "crash-demo",
        "--kills",
        "3",
        "--max-files",
        "12",
        "--interval-ms",
        "60",
        "--seed",
        "1",
    )
    assert doc["kills"] >= 1 and doc["verified"] is True
    assert doc["tool_calls_rerun"] <= doc["kills"] and doc["model_calls_rerun"] <= doc["kills"]
    assert doc["metrics"]["files"] == 12
    r = lithify("--db", db, "crash-demo", "--kills", "1")
    assert r.returncode == 2 and "fresh" in r.stderr


def test_every_command_under_json_prints_exactly_one_document(tmp_path):
    db = str(tmp_path / "j.db")
    tree = make_tree(tmp_path / "tree")
    commands = [
        ["run", "--repo", str(tree), "--max-files", "2"],
        ["status"],
        ["at", "--seq", "11"],
        ["report"],
        ["fork", "--at", "11", "--budget", "400"],
        ["verify"],
        ["matrix"],
        ["history", "--to", "3"],
        ["log", "-n", "2"],
        ["show", "main@3"],
        ["diff", "main@2", "main@11"],
        ["branches"],
        ["provenance", "main@3"],
        ["receipt", "main@3"],  # no receipt there: an error, as one document too
        ["search", "unwrap"],
        ["tag", "main@11", "after-first"],
        ["rollback", "--to", "after-first", "--yes"],
        ["snapshots", "rebuild"],
        ["sweeps"],
        ["vacuum"],
        ["report", "--branch", "99"],  # not found
        ["rekey"],  # not encrypted: refused before any prompt
    ]
    for args in commands:
        r = lithify("--db", db, "--json", *args)
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            raise AssertionError(
                f"{args}: not one JSON document: {r.stdout!r} {r.stderr!r}"
            ) from None
        if r.returncode:
            assert doc["exit"] == r.returncode and doc["error"], args
        assert r.stderr == "", (args, r.stderr)  # nothing else, anywhere
