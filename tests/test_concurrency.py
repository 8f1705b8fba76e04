"""Many processes, one journal file: distinct branches interleave safely; one branch never does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from workbench import Journal

pytestmark = pytest.mark.slow  # real processes, kernels, servers or browsers

WORKERS = Path(__file__).parent / "workers"


def spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WORKERS / "writer.py"), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_four_processes_on_distinct_branches_keep_every_event(tmp_path):
    path = tmp_path / "c.db"
    with Journal.open(path) as j:
        j.root().apply({"tag": "base"})
        branches = [j.root().fork(params={"w": i}).id for i in range(4)]
    n = 2000
    procs = [spawn(str(path), str(b), str(n), f"w{b}") for b in branches]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert out.splitlines()[-1] == f"ok {n}"
    with Journal.open(path) as j:
        report = j.verify()
        assert report.ok and report.events == 1 + 4 * n
        for b in branches:
            hist = j.branch(b).history()
            assert [r.seq for r in hist] == list(range(1, n + 2))
            assert [r.payload["i"] for r in hist[1:]] == list(range(n))
            assert {r.payload["tag"] for r in hist[1:]} == {f"w{b}"}


def test_two_processes_on_one_branch_one_is_refused_no_interleaving(tmp_path):
    path, go = tmp_path / "one.db", tmp_path / "go"
    with Journal.open(path) as j:
        j.root().apply({"tag": "base", "i": -1})
    procs = [spawn(str(path), "0", "300", tag, str(go)) for tag in ("A", "B")]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    go.touch()
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        outs.append(out.split())
    results = sorted(outs)
    assert results[0][0] == "ok" and results[0][1] == "300"
    assert results[1][0] == "refused" and results[1][1] == "0"
    assert results[1][2] == "1" and int(results[1][3]) >= 2  # expected head 1, actual moved on
    with Journal.open(path) as j:
        hist = j.root().history()
        assert j.verify().ok and len(hist) == 301
        winner = {r.payload["tag"] for r in hist[1:]}
        assert len(winner) == 1
        assert [r.payload["i"] for r in hist[1:]] == list(range(300))


def test_stale_handle_across_processes_names_heads(tmp_path):
    path = tmp_path / "stale.db"
    j = Journal.open(path)  # plain JSON states, like the worker that writes it
    mine = j.root()
    p = spawn(str(path), "0", "10", "other")
    out, err = p.communicate(timeout=60)
    assert out.split()[-2:] == ["ok", "10"], err
    try:
        mine.apply({"x": 1})
        raise AssertionError("stale append was accepted")
    except Exception as e:  # noqa: BLE001
        assert type(e).__name__ == "BranchConflict"
        assert (e.expected, e.actual) == (0, 10)
    j.close()
