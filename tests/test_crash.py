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
