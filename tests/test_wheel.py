"""What a wheel built from this tree carries: the typing marker, the JupyterLab extension (as
package data and as the data files Jupyter finds), the console script and the agent entry
point. Built the way pip builds it (isolated, with the declared setuptools)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # builds a wheel in a fresh build environment

ROOT = Path(__file__).resolve().parents[1]


def _tree(tmp: Path) -> Path:
    """The files of this tree that git would keep (tracked or new, not ignored), copied: a
    wheel built in place also carries what an earlier build left in build/lib (setuptools never
    empties it), such as the chunks of a lab bundle since rebuilt."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
    )
    if listed.returncode != 0:  # not a git checkout: build it as it stands
        return ROOT
    for name in filter(None, listed.stdout.decode().split("\0")):
        src, dst = ROOT / name, tmp / name
        if src.is_symlink() or src.is_file():  # a link as a link (the bundled corpus is one)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst, follow_symlinks=False)
    return tmp


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    tree = _tree(tmp_path_factory.mktemp("tree"))
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(tree)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    (built,) = out.glob("lithify_workbench-*.whl")
    with zipfile.ZipFile(built) as z:
        yield z


def test_the_wheel_carries_package_data_and_the_lab_extension_once(wheel):
    names = set(wheel.namelist())
    assert "workbench/py.typed" in names
    assert not [n for n in names if n.startswith("workbench/labextensions/")]  # not twice
    data = [n for n in names if ".data/data/share/jupyter/labextensions/lithify-workbench/" in n]
    static = [n for n in data if "/static/" in n]
    assert any("/remoteEntry." in n for n in static)
    on_disk = {
        p.name for p in (ROOT / "workbench/labextensions/lithify-workbench/static").iterdir()
    }
    assert {n.rsplit("/", 1)[-1] for n in static} == on_disk
    assert any(n.endswith("/package.json") for n in data) and len(data) == 2 + len(on_disk)
    (install,) = [n for n in data if n.endswith("/install.json")]  # how to uninstall it
    assert json.loads(wheel.read(install))["packageName"] == "lithify-workbench"
    assert any(
        n.endswith("etc/jupyter/jupyter_server_config.d/lithify-workbench.json") for n in names
    )
    # nothing from outside the package sneaks in (tests, benchmarks, the corpus)
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/", "data/corpus"))]


def test_the_wheel_declares_its_scripts_agent_and_license(wheel):
    dist = next(n.split("/")[0] for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    entry = wheel.read(f"{dist}/entry_points.txt").decode()
    assert "lithify = workbench.cli:main" in entry
    assert "stateforge = workbench.compat.stateforge.cli:main" in entry  # the design's command
    assert "[lithify.agents]" in entry and "auditor = workbench.agents.auditor:AGENT" in entry
    meta = wheel.read(f"{dist}/METADATA").decode()
    assert "License-Expression: MIT" in meta
    # the live chart is altair's JupyterChart, an anywidget: a dependency we never import
    assert "Requires-Dist: anywidget" in meta


def test_the_installed_wheel_runs_its_demo_from_anywhere(wheel, tmp_path):
    """A new user's path: the wheel in a fresh venv, `lithify demo` from an unrelated folder."""
    built = Path(wheel.filename)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing of the repo
    r = subprocess.run(
        [str(py), "-m", "pip", "install", "-q", str(built)],
        capture_output=True,
        text=True,
        timeout=1200,
        cwd=tmp_path,
        env=clean,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert (venv / "bin" / "lithify").exists(), r.stdout + r.stderr
    somewhere = tmp_path / "somewhere"
    somewhere.mkdir()
    r = subprocess.run(
        [str(venv / "bin" / "lithify"), "demo", "--out", "d"],
        capture_output=True,
        text=True,
        cwd=somewhere,
        timeout=600,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},  # the venv never activated
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert {p.name for p in (somewhere / "d").iterdir()} >= {
        "demo.db",
        "matrix.csv",
        "recall_vs_budget.png",
    }
    assert f"{venv}/bin/lithify --db d/demo.db history --to 12" in r.stdout
    r = subprocess.run(
        [str(venv / "bin" / "lithify"), "notebooks"], capture_output=True, text=True, cwd=somewhere
    )
    assert r.returncode == 0 and (somewhere / "lithify-notebooks" / "templates").is_dir()
