"""The crash demo: run the auditor as a child process, SIGKILL it at random moments mid-work,
then finish the run and count from the trace how many calls ran more than once."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ...errors import InvalidValue, WorkbenchError
from ...journal import Journal
from . import agent, logic
from .models import Calls, make_model


def crash_demo_run(
    db: str,
    repo: Path,
    kills: int,
    budget: int,
    max_files: int,
    interval_ms: int,
    trace: Path,
    seed: int | None = None,
    slow_ms: int = 20,
    model: str = "mock",
) -> dict[str, Any]:
    """Run the auditor as a child process, SIGKILL it ``kills`` times mid-work, then finish."""
    rng = random.Random(seed)
    with Journal.open(db, logic.AuditState) as j:
        if j.root().state().root:
            raise InvalidValue(f"{db} already holds an audit; crash-demo needs a fresh --db")
    env = {**os.environ, "AUDITOR_SLOW_MS": str(slow_ms)}
    cmd = [
        sys.executable,
        "-m",
        "workbench",
        "--db",
        db,
        "run",
        "--repo",
        str(repo),
        "--budget",
        str(budget),
        "--max-files",
        str(max_files),
        "--trace",
        str(trace),
    ]
    backend, _, model_name = model.partition(":")
    cmd += ["--model", backend] + (["--model-name", model_name] if model_name else [])
    landed = []
    for _ in range(kills):
        before = trace.stat().st_size if trace.exists() else 0
        # the child's errors go to a file: a pipe nobody reads could fill and stall it
        with (
            tempfile.TemporaryFile() as err,
            subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err) as p,
        ):
            deadline = time.monotonic() + 60
            while (not trace.exists() or trace.stat().st_size <= before) and p.poll() is None:
                if time.monotonic() > deadline:
                    p.kill()
                    raise WorkbenchError("crash-demo: the audit child made no call within 60 s")
                time.sleep(0.002)
            if p.poll() is not None:  # finished (or failed) before this kill could land
                if p.returncode != 0:
                    err.seek(0)
                    tail = err.read().decode("utf-8", "replace").strip().splitlines()[-5:]
                    raise WorkbenchError(
                        f"crash-demo: the audit child failed (exit {p.returncode}): "
                        + " | ".join(tail)
                    )
                break
            time.sleep(rng.uniform(0.2, 1.8) * interval_ms / 1000)
            p.send_signal(signal.SIGKILL)
            p.wait()
        with Journal.open(db, logic.AuditState) as j:
            root = j.root()
            landed.append({"seq": root.head, "in_flight": root.unknown_outcomes()})
    calls = Calls(make_model(backend, model_name or None), trace, slow_ms=0)
    try:
        with Journal.open(db, logic.AuditState) as j:
            root = j.root()
            agent.start(root, repo, budget, max_files)
            result = agent.run(root, calls)
            counts = agent.rerun_counts(root, trace.read_text())
            ok = j.verify().ok
    finally:
        calls.close()
    return {
        "kills": len(landed),
        "killed_at": landed,
        **counts,
        "verified": ok,
        "metrics": result.to_json(),
    }
