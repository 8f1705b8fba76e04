"""Real subprocesses, real SIGKILL: nothing committed is lost and no committed effect re-runs."""

from __future__ import annotations

import collections
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from workers.steps import Steps

from workbench import Journal

pytestmark = pytest.mark.slow  # real processes, kernels, servers or browsers

WORKERS = Path(__file__).parent / "workers"


def start(*args: str) -> subprocess.Popen:
    p = subprocess.Popen(
        [sys.executable, str(WORKERS / args[0]), *args[1:]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return p


def wait_ready(p: subprocess.Popen) -> None:
    line = p.stdout.readline()
    assert line.strip() == "ready", (line, p.stderr.read() if p.poll() is not None else "")


def committed_keys(j: Journal) -> set[str]:
    return {r.payload["key"] for r in j.root().history() if r.kind == "effect"}


@pytest.mark.parametrize("durability", ["process", "lazy"])
def test_sigkill_at_random_moments_loses_nothing_committed(tmp_path, durability):
    rng = random.Random(20261130)
    path, trace = tmp_path / "crash.db", tmp_path / "trace.txt"
    steps = 3000
    kills = 22 if durability == "process" else 8
    unknown_seen: collections.Counter[str] = collections.Counter()
    committed_before: set[str] = set()
    for _ in range(kills):
        p = start("steps.py", str(path), str(trace), str(steps), durability)
        wait_ready(p)
        time.sleep(rng.uniform(0.005, 0.12))
        p.send_signal(signal.SIGKILL)
        p.communicate()
        assert p.returncode == -signal.SIGKILL
        with Journal.open(path) as j:
            report = j.verify()
            assert report.ok, report.problems
            unknown = j.root().unknown_outcomes()
            assert len(unknown) <= 1, unknown
            unknown_seen.update(unknown)
            keys = committed_keys(j)
            # Nothing committed earlier disappeared.
            assert committed_before <= keys
            committed_before = keys
    p = start("steps.py", str(path), str(trace), str(steps), durability)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    calls = collections.Counter(trace.read_text().split())
    print(
        "unknown outcomes seen",
        sum(unknown_seen.values()),
        "reruns",
        sum(n - 1 for n in calls.values()),
    )
    assert set(calls) == {f"call:{i}" for i in range(steps)}
    for key, n in calls.items():
        # A call runs again only if it was in flight (an unknown outcome) when a kill landed.
        assert n <= 1 + unknown_seen[key], (key, n, unknown_seen[key])
    assert sum(n - 1 for n in calls.values()) <= kills
    with Journal.open(path, Steps) as j:
        root = j.root()
        assert root.state().done == steps
        assert root.state().acc == sum(i * i for i in range(steps))
        assert root.unknown_outcomes() == []
        assert j.verify().ok


def test_sigkill_among_eight_writers_two_sharing_a_branch_reruns_only_what_a_kill_cut(tmp_path):
    """Six processes on branches of their own and two on one shared branch (each with its own
    keys, so each appends while the other's effects run) run resumable loops while random ones
    are killed and restarted. Every step lands once, and a function runs again only when a kill
    cut its effect short: runs per committed effect <= 1 + kills of its writer."""
    from workers.shared_steps import Writers

    rng = random.Random(20261201)
    path, trace = tmp_path / "shared.db", tmp_path / "trace.txt"
    steps, kills = 2000, 16
    with Journal.open(path, Writers) as j:
        own = [j.root().fork(name=f"own{k}").id for k in range(6)]
        shared = j.root().fork(name="shared").id
    workers = [(b, "a") for b in own] + [(shared, "a"), (shared, "b")]  # (branch, writer)

    def launch(w: int) -> subprocess.Popen:
        branch, writer = workers[w]
        p = start("shared_steps.py", str(path), str(trace), str(branch), writer, str(steps))
        wait_ready(p)
        return p

    procs = [launch(w) for w in range(len(workers))]
    killed: collections.Counter[tuple[int, str]] = collections.Counter()
    for _ in range(kills):
        time.sleep(rng.uniform(0.02, 0.3))
        running = [w for w, p in enumerate(procs) if p.poll() is None]
        if not running:
            break
        on_shared = [w for w in running if workers[w][0] == shared]
        w = rng.choice(on_shared if on_shared and rng.random() < 0.5 else running)
        procs[w].send_signal(signal.SIGKILL)
        procs[w].communicate()
        killed[workers[w]] += 1
        procs[w] = launch(w)
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err  # ran its loop to the end
    runs = collections.Counter(trace.read_text().split())
    with Journal.open(path, Writers) as j:
        assert j.verify().ok
        for b in {b for b, _ in workers}:
            branch = j.branch(b)
            names = [w for bb, w in workers if bb == b]
            state = branch.state()
            assert state.done == {w: steps for w in names}
            assert state.acc == {w: sum(i * i for i in range(steps)) for w in names}
            assert branch.unknown_outcomes() == []
            keys = [r.payload["key"] for r in branch.history() if r.kind == "effect"]
            assert sorted(keys) == sorted(f"{w}:call:{i}" for w in names for i in range(steps))
            for key in keys:
                n = runs[f"{b}:{key}"]
                assert 1 <= n <= 1 + killed[(b, key.split(":")[0])], (b, key, n, killed)
    reruns = sum(n - 1 for n in runs.values())
    print("kills", sum(killed.values()), "reruns", reruns, "on the shared branch", killed)
    assert reruns <= sum(killed.values())
