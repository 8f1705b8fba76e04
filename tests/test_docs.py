"""Every Python block of the documentation runs as written (as sqlite-utils tests its docs): a
reader who pastes a page's blocks, in order, into an empty folder gets what the page says.

A page's blocks run as one script in a fresh process and an empty folder. Pages that build on
one another (the second uses the first's variables) run together, in the order ``GROUPS`` gives;
every other page runs alone. A block whose first line is ``# NAME.py`` is a file, not part of
the script: it is written as NAME.py beside the script (a module the other blocks import, or
the fork function a sweep's workers import), and if it has an ``if __name__ == "__main__":``
part it is also run as ``python NAME.py`` at its place, as the page tells the reader to.

After a group runs, no sweep in any journal it wrote may have a failed fork: a failing fork
does not raise in the page's process, but it is not what the page promises.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

# Pages whose blocks continue one another, in reading order (paths below docs/).
GROUPS: dict[str, list[str]] = {
    "journal": [
        "how-to/journal.md",
        "how-to/receipts-and-time.md",
        "how-to/versioned-history.md",
    ],
    "tutorial-auditor": [
        "tutorial/sweep-from-an-event.md",
        "tutorial/let-the-sweep-choose.md",
        "tutorial/results-for-a-paper.md",
    ],
}

# What a group leaves in its folder, beyond a clean exit.
WRITES: dict[str, list[str]] = {
    "tutorial-auditor": ["recall.png", "results.parquet", "results.csv"],
    "how-to/results.md": ["recall.png", "results.parquet", "results.csv", "history.png"],
}

_BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)
_FILE = re.compile(r"\A# ([\w-]+\.py)\n")


def python_blocks(page: Path) -> list[str]:
    """The page's ```python blocks, in order."""
    return _BLOCK.findall(page.read_text())


def pages_with_python() -> list[str]:
    return sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md") if python_blocks(p))


def groups() -> dict[str, list[str]]:
    """GROUPS, then every other page with Python blocks as a group of its own."""
    grouped = {page for pages in GROUPS.values() for page in pages}
    alone = {page: [page] for page in pages_with_python() if page not in grouped}
    return {**GROUPS, **alone}


def write_script(pages: list[Path], folder: Path) -> Path:
    """Write the pages' file blocks into ``folder`` and their other blocks, in order, into one
    script there; return the script's path."""
    parts = ["import subprocess as _subprocess\nimport sys as _sys\n"]
    for page in pages:
        for i, block in enumerate(python_blocks(page), 1):
            where = f"{page.name} block {i}"
            named = _FILE.match(block)
            if named is None:
                parts.append(f"# --- {where}\n{block}")
                continue
            (folder / named[1]).write_text(block)
            if 'if __name__ == "__main__":' in block:
                run = f"_subprocess.run([_sys.executable, {named[1]!r}], check=True)\n"
                parts.append(f"# --- {where}: python {named[1]}\n{run}")
    parts.append("print('DOCS OK')\n")
    script = folder / "docs_script.py"
    script.write_text("\n".join(parts))
    return script


def run_pages(pages: list[Path], folder: Path) -> subprocess.CompletedProcess[str]:
    """Run the pages' blocks in ``folder`` (empty), in a fresh Python process; fail the test,
    with the script's output, unless it exits cleanly and no sweep it ran has a failed fork."""
    script = write_script(pages, folder)
    r = subprocess.run(
        [sys.executable, script.name],
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=1200,
    )
    assert r.returncode == 0 and "DOCS OK" in r.stdout, (r.stdout[-2000:], r.stderr[-4000:])
    assert_no_failed_forks(folder)
    return r


def assert_no_failed_forks(folder: Path) -> None:
    from workbench import Journal, sweep

    for db in sorted(folder.glob("*.db")):
        with Journal.open(db, readonly=True) as j:
            failed = [
                (s.id, f.branch, f.error)
                for s in j.sweeps()
                for f in sweep.status(j, s.id)
                if f.status == "failed"
            ]
        assert not failed, f"{db.name}: failed forks {failed}"


def test_groups_name_pages_that_exist_and_have_python_blocks():
    for name, pages in GROUPS.items():
        for page in pages:
            assert (DOCS / page).is_file(), f"{name}: no docs/{page}"
            assert python_blocks(DOCS / page), f"{name}: docs/{page} has no Python block"
    listed = [page for pages in GROUPS.values() for page in pages]
    assert len(listed) == len(set(listed)), "a page is in two groups"


def test_every_python_block_of_the_docs_compiles():
    assert pages_with_python(), "no Python block found under docs/"
    for page in pages_with_python():
        for i, block in enumerate(python_blocks(DOCS / page), 1):
            compile(block, f"docs/{page} block {i}", "exec")


@pytest.mark.slow  # fresh processes; some pages run sweeps (papermill kernels, worker processes)
@pytest.mark.parametrize("group", sorted(groups()))
def test_the_python_blocks_of_the_docs_run_in_order(group, tmp_path):
    pages = [DOCS / page for page in groups()[group]]
    run_pages(pages, tmp_path)
    for name in WRITES.get(group, []):
        assert (tmp_path / name).stat().st_size > 0, f"{group} wrote no {name}"
