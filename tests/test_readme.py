"""The README's Python blocks run as written, in order, as one script in a fresh process and an
empty folder (as sqlite-utils tests its documentation): a newcomer who pastes them gets what
the README says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the sweep block runs papermill forks

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_readme_python_blocks_run_in_order(tmp_path):
    blocks = python_blocks()
    assert len(blocks) >= 7
    script = tmp_path / "readme.py"
    script.write_text(
        "\n".join(f"# --- README block {i}\n{b}" for i, b in enumerate(blocks, 1))
        + "\nassert result.ok, [(f.branch, f.error) for f in result.forks if f.error]"
        + "\nj.close()\naudit.close()\nprint('README OK')\n"
    )
    r = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=600
    )
    assert r.returncode == 0 and "README OK" in r.stdout, r.stderr[-3000:]
    assert (tmp_path / "recall.png").stat().st_size > 1000
    assert (tmp_path / "results.parquet").exists()
