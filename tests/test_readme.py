"""The README is a front page: under 200 lines, its two commands first and unchanged, then the
command that opens the demo's journal in JupyterLab; every link into the docs leads to a page;
and its Python blocks run as written in an empty folder (as the docs' do: ``test_docs``)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from test_docs import run_pages

from workbench import Journal
from workbench.cli.lab import plan_lab

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

INSTALL_AND_DEMO = (
    "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/lithify demo"
)
INSTALL_AND_TEST = (
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[dev]' && .venv/bin/python -m pytest -q"
)


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(language, body) of every fenced block, in order."""
    return re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M)


def test_the_readme_is_a_front_page_under_200_lines():
    assert len(README.read_text().splitlines()) <= 200


def test_the_two_commands_come_first_unchanged():
    text = README.read_text()
    before = text[: text.index("```")]
    assert before.strip() == "# lithify workbench", "nothing but the title before the commands"
    first, second = fenced_blocks(text)[:2]
    assert first == ("bash", INSTALL_AND_DEMO + "\n")
    assert second == ("bash", INSTALL_AND_TEST + "\n")
    # CI runs exactly the second command, last
    assert (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1] == INSTALL_AND_TEST


def test_then_open_it_in_jupyterlab_with_the_demo_journal_open(tmp_path, monkeypatch):
    text = README.read_text()
    after = text.split("```")[4]  # what follows the two blocks
    first_paragraph = after.strip().split("\n\n")[0]
    assert first_paragraph.startswith("Then open it in JupyterLab")
    command = re.search(r"`([^`]*lithify lab ([^`]*))`", first_paragraph)
    assert command and "lithify-demo-" in command[1]
    # what the shell makes of its argument, in a folder where the demo has run twice
    for stamp in ("20261201-1200", "20261201-1300"):
        (tmp_path / f"lithify-demo-{stamp}").mkdir()
        Journal.open(tmp_path / f"lithify-demo-{stamp}" / "demo.db").close()
    arg = subprocess.run(
        ["bash", "-c", f"printf %s {command[2]}"], cwd=tmp_path, capture_output=True, text=True
    ).stdout
    monkeypatch.chdir(tmp_path)
    assert plan_lab(arg).journal == "lithify-demo-20261201-1300/demo.db"  # the newest, open


def test_every_link_of_the_readme_leads_to_a_file_and_the_docs_are_linked():
    text = README.read_text()
    links = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text)]
    local = [t for t in links if not re.match(r"[a-z]+:", t)]
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, missing
    for page in (
        "docs/hypotheses.md",
        "docs/benchmarks.md",
        "docs/how-to/sweeps.md",
        "docs/how-to/optimize.md",
        "docs/how-to/results.md",
        "docs/how-to/lab.md",
        "docs/how-to/scale-out.md",
        "docs/how-to/graph-memory.md",
        "docs/how-to/stateforge.md",
        "docs/how-to/what-can-go-wrong.md",
    ):
        assert page in local, f"the front page does not link {page}"


def test_ci_builds_the_docs_strictly():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "mkdocs build --strict" in ci


@pytest.mark.slow  # the example runs a sweep in worker processes
def test_the_readme_python_blocks_run_in_order(tmp_path):
    r = run_pages([README], tmp_path)
    assert "3/3 finished" in r.stdout + r.stderr
    assert (tmp_path / "notes.db").exists()


def test_my_agent_run_twice_resumes_and_adds_nothing(tmp_path):
    """The README says a re-run resumes: the second run finds the note, the variant and the
    finished sweep in notes.db, adds no event, fork or sweep, and leaves no empty folder."""
    import sys

    body = next(b for lang, b in fenced_blocks(README.read_text()) if "# my_agent.py" in b)
    (tmp_path / "my_agent.py").write_text(body)

    def run() -> tuple[int, int, int, list[int]]:
        r = subprocess.run(
            [sys.executable, "my_agent.py"], cwd=tmp_path, capture_output=True, text=True
        )
        assert r.returncode == 0, r.stderr[-3000:]
        with Journal.open(tmp_path / "notes.db", readonly=True, raw=True) as j:
            heads = [j.branch(b.id).head for b in j.branches()]
            return len(j.branches()), len(j.sweeps()), j.root().head, heads

    first = run()
    assert first[:3] == (5, 1, 2)  # main, the variant, three forks; one sweep; the read, the note
    assert run() == first
    assert not (tmp_path / "runs").exists()  # a sweep of fork functions leaves no folder
