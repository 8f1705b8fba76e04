"""The worker install (lithify-worker, built from worker/): a wheel of the same package with
only what a machine that runs forks needs, installed in a fresh venv. It must stay under
250 MB, run a sweep of a fork function on the pool runner and on a Dask worker started from
it, and say which extra brings what it leaves out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from test_wheel import _tree

SLOW = pytest.mark.slow  # builds a wheel and installs it in a fresh venv

ROOT = Path(__file__).resolve().parents[1]
LIMIT_MB = 250

FORK = """
from workbench import Journal


def fork(path, branch, params):
    with Journal.open(path) as j:
        b = j.branch(branch)
        v = b.effect("model", lambda: params["x"] * 2)
        b.apply({"v": v})
        b.observe("score", float(v))
"""

DRIVE = """
import json, sys
sys.path.insert(0, ".")
from workbench import Journal, sweep
from workbench.errors import InvalidValue


def main(runner):
    # runner="dask" with no scheduler: the runner starts a LocalCluster whose worker processes
    # run this install's Python
    with Journal.open(f"{runner}.db") as j:
        j.root().apply({"start": 1})
        s = sweep.plan(j, base=0, at=1, grid={"x": [1, 2, 3]})
        result = sweep.run(
            s, fn="myfork:fork", workers=2, runner=runner, progress=False
        )
        print(result)
        space = {"x": sweep.Int(0, 5)}
        study = sweep.optimize(j, 1, space, "score", forks=3, fn="myfork:fork", workers=1,
                               sampler="tpe", pruner="median", seed=0, progress=False)
        try:
            sweep.optimize(j, 1, space, "score", forks=1, fn="myfork:fork", sampler="cmaes",
                           progress=False)
            refused = ""
        except InvalidValue as e:
            refused = str(e)
        print("RESULT " + json.dumps({
            "ok": result.ok,
            "scores": sorted(f.metrics["score"] for f in result.forks),
            "trials": [t.state for t in study.trials],
            "refused": refused,
        }))


if __name__ == "__main__":  # the Dask workers' processes import this file again
    main(sys.argv[1])
"""


def _mb(folder: Path) -> float:
    total = 0
    for dirpath, _, files in os.walk(folder):
        for name in files:
            p = Path(dirpath) / name
            if not p.is_symlink():
                total += p.stat().st_size
    return total / 2**20


@pytest.fixture(scope="module")
def worker_venv(tmp_path_factory) -> Path:
    tree = _tree(tmp_path_factory.mktemp("tree"))
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(out),
            str(tree / "worker"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    (wheel,) = out.glob("lithify_worker-*.whl")
    venv = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
        capture_output=True,
        text=True,
        timeout=1200,
        env=clean,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return venv


@SLOW
def test_the_worker_install_is_small_and_leaves_out_the_notebook_stack(worker_venv):
    size = _mb(worker_venv)
    print(f"\nworker install (lithify-worker, a fresh venv with pip): {size:.0f} MB")
    assert size <= LIMIT_MB, f"the worker install takes {size:.0f} MB (at most {LIMIT_MB})"
    site = next((worker_venv / "lib").glob("python3*/site-packages"))
    present = {p.name.split("-")[0].lower() for p in site.glob("*.dist-info")}
    assert "lithify_worker" in present and "optuna" in present
    left_out = {"jupyterlab", "polars", "papermill", "altair", "scipy", "scikit_learn"}
    assert not present & left_out, present & left_out
    assert not list(site.glob("workbench/labextensions/*"))


def _drive(venv: Path, folder: Path, runner: str) -> tuple[dict[str, Any], str, dict[str, str]]:
    """Run DRIVE with this install's Python in ``folder``: (its RESULT document, its stdout,
    the environment it ran in: this venv's bin first, nothing of the repository)."""
    (folder / "myfork.py").write_text(FORK)
    (folder / "drive.py").write_text(DRIVE)
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(folder)}
    r = subprocess.run(
        [str(venv / "bin" / "python"), "drive.py", runner],
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(r.stdout.split("RESULT ", 1)[1])
    assert doc["ok"] and doc["scores"] == [2.0, 4.0, 6.0]
    return doc, r.stdout, env


@SLOW
def test_the_worker_install_runs_a_sweep_and_a_study_of_fork_functions(worker_venv, tmp_path):
    doc, out, env = _drive(worker_venv, tmp_path, "pool")
    assert doc["trials"] == ["complete"] * 3
    assert "lithify-worker[samplers]" in doc["refused"]  # CMA-ES needs cmaes: said so
    assert "finished" in out  # the result printed without polars
    cli = str(worker_venv / "bin" / "lithify")
    shown = subprocess.run(
        [cli, "--db", "pool.db", "--json", "sweeps"], capture_output=True, text=True,
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert shown.returncode == 0 and json.loads(shown.stdout)[0]["finished"] == 3, shown.stderr
    matrix = subprocess.run(
        [cli, "--db", "pool.db", "matrix"], capture_output=True, text=True, cwd=tmp_path,
        env=env,
    )  # fmt: skip
    assert matrix.returncode == 1 and "lithify-worker[results]" in matrix.stderr


@SLOW
def test_a_dask_worker_of_the_worker_install_runs_forks(worker_venv, tmp_path):
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run(
        [str(worker_venv / "bin" / "python"), "-m", "pip", "install", "-q", "distributed>=2024.8"],
        capture_output=True,
        text=True,
        timeout=1200,
        env=clean,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    print(f"\nworker install with the dask extra: {_mb(worker_venv):.0f} MB")
    _drive(worker_venv, tmp_path, "dask")  # the forks ran on Dask workers of this install


def test_the_worker_and_the_workbench_are_one_version_and_one_package():
    full = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    worker = tomllib.loads((ROOT / "worker" / "pyproject.toml").read_text())["project"]
    assert worker["version"] == full["version"]
    assert (ROOT / "worker" / "workbench").resolve() == (ROOT / "workbench").resolve()
    names = {d.split(">")[0].split("[")[0].split("=")[0] for d in full["dependencies"]}
    for dep in worker["dependencies"]:  # the worker's needs are a subset of the whole's
        assert dep.split(">")[0].split("[")[0].split("=")[0] in names, dep
    assert worker["scripts"] == full["scripts"]
