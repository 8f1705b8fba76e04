"""What a new user meets first: the bundled corpus, templates and notebooks, the demo from any
folder (nothing left behind when it fails), templates by name."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest
from cli import lithify

from workbench import InvalidValue, Journal, NotFound, bundled
from workbench.agents.auditor import AuditState, Calls, MockModel, run, start

REPO = Path(__file__).resolve().parents[1]


def test_the_bundled_files_are_the_repositorys():
    corpus = bundled.corpus()
    mine = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*") if p.is_file())
    source = REPO / "data" / "corpus"
    theirs = sorted(p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file())
    assert mine == theirs and "scripts/.sh" in mine
    assert {p.name for p in bundled.notebooks().glob("*.ipynb")} == {
        "01-quickstart.ipynb",
        "02-fork-and-sweep.ipynb",
        "03-crash-and-time-travel.ipynb",
        "04-memory-recall-vs-budget.ipynb",
    }
    assert bundled.templates() == ["auditor_fork", "generic_fork", "memory_fork"]
    for fmt in ("locomo", "longmemeval"):
        assert (
            bundled.memory_sample(fmt).read_bytes()
            == (REPO / "data" / "memory" / f"{fmt}_sample.json").read_bytes()
        )


def test_templates_by_name_and_paths_by_path(tmp_path, monkeypatch):
    assert bundled.resolve_notebook("auditor_fork") == bundled.template("auditor_fork")
    assert bundled.resolve_notebook("auditor_fork.ipynb") == bundled.template("auditor_fork")
    mine = tmp_path / "auditor_fork"  # a local file of that name wins over the template
    mine.write_text("{}")
    monkeypatch.chdir(tmp_path)
    assert bundled.resolve_notebook("auditor_fork") == mine.resolve()
    with pytest.raises(NotFound, match="auditor_fork, generic_fork"):
        bundled.resolve_notebook("nope")
    with pytest.raises(NotFound, match="no notebook at sub/nope.ipynb"):
        bundled.resolve_notebook("sub/nope.ipynb")


def test_a_sweep_plan_takes_a_template_by_name(tmp_path):
    from workbench import sweep

    with Journal.open(tmp_path / "a.db", AuditState) as j:
        start(j.root(), None, 3000, 4)
        run(j.root(), Calls(MockModel()))
        p = sweep.plan(j, 0, 11, {"budget": [300]}, notebook="auditor_fork")
        assert p.notebook == str(bundled.template("auditor_fork"))
        with pytest.raises(InvalidValue, match="not_a_param"):
            sweep.plan(j, 0, 11, {"not_a_param": [1]}, notebook="auditor_fork")


def test_demo_refuses_a_file_a_missing_folder_and_a_bad_model_before_writing(tmp_path):
    a_file = tmp_path / "f"
    a_file.write_text("x")
    for args, said in (
        (["--out", str(a_file)], "is a file"),
        (["--out", str(tmp_path / "no" / "such" / "dir")], "does not exist"),
        (["--out", str(tmp_path / "d"), "--model", "gpt"], "unknown model"),
        (["--out", str(tmp_path / "d"), "--repo", str(tmp_path / "none")], "not a directory"),
    ):
        r = lithify("demo", *args)
        assert r.returncode == 2 and said in r.stderr and len(r.stderr.splitlines()) == 1, r
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


@pytest.mark.slow  # runs the demo: child processes it kills
def test_a_failed_demo_leaves_nothing_behind(tmp_path, monkeypatch):
    from workbench import charts

    def broken(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(charts, "save", broken)
    monkeypatch.chdir(tmp_path)
    r = lithify("demo")
    assert r.returncode == 1 and "No space left" in r.stderr
    assert list(tmp_path.iterdir()) == []  # no lithify-demo-* folder, no scratch folder


@pytest.mark.slow  # runs the demo: child processes it kills
def test_demo_from_another_folder_with_its_own_repo(tmp_path, monkeypatch):
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    for i in range(24):  # the demo forks nineteen files in
        (tree / "src" / f"f{i:02}.rs").write_text("fn main() { x.unwrap(); } // TODO\n" * (i + 1))
    monkeypatch.chdir(tmp_path)
    r = lithify("--json", "demo", "--repo", str(tree), "--out", "out")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    out = tmp_path / "out"
    assert doc["dir"] == "out" and out.is_dir() and oct(out.stat().st_mode & 0o777) != "0o700"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.partial")]
    with Journal.open(out / "demo.db", AuditState, readonly=True) as j:
        assert j.root().state().root == str(tree)
        assert j.verify().ok
        statuses = [f["status"] for s in [j.sweeps()[0]] for f in _runs(j, s.id)]
    assert statuses == ["finished"] * 5  # the demo's sweep says how its forks ran
    (listed,) = json.loads(lithify("--db", str(out / "demo.db"), "--json", "sweeps").stdout)
    assert (listed["finished"], listed["pending"], listed["runner"]) == (5, 0, "process")
    r = lithify("--db", str(out / "demo.db"), "--json", "sweep-resume", "1")
    assert r.returncode == 0, r.stderr  # nothing left to run, and no "needs notebook=" error
    matrix = lithify("--db", str(out / "demo.db"), "matrix", "--format", "csv")
    assert (out / "matrix.csv").read_text() == matrix.stdout  # the same file, byte for byte
    with (out / "matrix.csv").open() as f:
        rows = list(csv.DictReader(f))
    main = [r for r in rows if r["branch_name"] == "main"]
    assert {r["value"] for r in main if r["metric"] == "budget"} == {"3000.0"}  # observed


def _runs(j, sweep_id):
    return [{"status": r.status} for r in j.storage.runs(sweep_id)]


def test_shell_command_names_the_script_of_this_environment(monkeypatch):
    from workbench.agents.auditor.demo import shell_command

    script = Path(sys.executable).parent / "lithify"
    assert script.exists()  # the test environment has the console script
    monkeypatch.setenv("PATH", "/nonexistent")  # a venv that was never activated
    assert shell_command() == str(script)
    monkeypatch.setenv("PATH", str(script.parent))
    assert shell_command() == "lithify"


def test_lithify_notebooks_copies_the_workspace_and_never_overwrites(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = lithify("--json", "notebooks")
    assert r.returncode == 0, r.stderr
    ws = tmp_path / "lithify-notebooks"
    assert sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*.ipynb")) == [
        "01-quickstart.ipynb",
        "02-fork-and-sweep.ipynb",
        "03-crash-and-time-travel.ipynb",
        "04-memory-recall-vs-budget.ipynb",
        "templates/auditor_fork.ipynb",
        "templates/generic_fork.ipynb",
        "templates/memory_fork.ipynb",
    ]
    (ws / "01-quickstart.ipynb").write_text("my edits")
    r = lithify("notebooks")
    assert r.returncode == 2 and "not empty" in r.stderr
    assert (ws / "01-quickstart.ipynb").read_text() == "my edits"
    r = lithify("notebooks", "elsewhere")
    assert r.returncode == 0 and (tmp_path / "elsewhere" / "02-fork-and-sweep.ipynb").is_file()


def test_lithify_lab_splits_its_folder_from_jupyterlabs_options(tmp_path, monkeypatch):
    from workbench.cli.lab import lab_command, split_lab_args

    assert split_lab_args(["--no-browser", "--port", "8938"]) == (
        None,
        ["--no-browser", "--port", "8938"],
    )
    assert split_lab_args(["--port", "8938", "work", "--ServerApp.token=x"]) == (
        "work",
        ["--port", "8938", "--ServerApp.token=x"],
    )
    assert split_lab_args(["work", "--no-browser"]) == ("work", ["--no-browser"])
    with pytest.raises(InvalidValue, match="one folder"):
        split_lab_args(["a", "b"])
    monkeypatch.chdir(tmp_path)
    args = lab_command(None, ["--no-browser"])  # no folder: this one, landing in the notebooks
    ws = tmp_path / "lithify-notebooks"
    assert (ws / "02-fork-and-sweep.ipynb").is_file()
    assert f"--ServerApp.root_dir={tmp_path}" in args and args[-1] == "--no-browser"
    assert "--LabApp.default_url=/lab/tree/lithify-notebooks" in args
    assert "--ServerApp.jpserver_extensions=workbench.server=True" in args
    (ws / "mine.ipynb").write_text("{}")
    lab_command(None, [])  # an existing workspace is opened as it is
    assert (ws / "mine.ipynb").exists()
    with pytest.raises(NotFound, match="no such folder or journal"):
        lab_command("missing", [])


def test_lithify_lab_opens_a_journal_and_lists_those_under_this_folder(tmp_path, monkeypatch):
    """After `lithify demo`, `lithify lab` sees the demo's journal (this folder is the root, its
    journals listed, a folder named runs like any other); `lithify lab PATH.db` opens it in the
    sidebar (the server is told which), rooted here when it lies below, else at its folder."""
    from workbench.cli.lab import plan_lab
    from workbench.errors import NotAJournal
    from workbench.server.hub import OPEN_ENV, Hub

    monkeypatch.chdir(tmp_path)
    demo = tmp_path / "lithify-demo-1" / "demo.db"
    team = tmp_path / "team" / "runs" / "x.db"
    for db in (demo, team):
        db.parent.mkdir(parents=True)
        with Journal.open(db) as j:
            j.root().apply({"a": 1})
    plain = plan_lab(None)
    assert plain.root == tmp_path and plain.journal is None
    listed = [j["path"] for j in Hub(str(plain.root)).list()]
    assert listed == ["lithify-demo-1/demo.db", "team/runs/x.db"]
    one = plan_lab(str(demo))
    assert (one.root, one.journal) == (tmp_path, "lithify-demo-1/demo.db")
    assert one.env()[OPEN_ENV] == "lithify-demo-1/demo.db"
    assert f"--ServerApp.root_dir={tmp_path}" in one.args([])
    elsewhere = tmp_path.parent / f"{tmp_path.name}-other"
    elsewhere.mkdir()
    with Journal.open(elsewhere / "far.db") as j:
        j.root().apply({"a": 1})
    far = plan_lab(str(elsewhere / "far.db"))
    assert (far.root, far.journal) == (elsewhere, "far.db")
    monkeypatch.setenv(OPEN_ENV, "far.db")
    assert Hub(str(elsewhere)).open == ["far.db"]
    (tmp_path / "notes.db").write_text("not sqlite")
    with pytest.raises(NotAJournal, match="not a lithify journal"):
        plan_lab("notes.db")
    with pytest.raises(NotFound, match="no such journal"):
        plan_lab("gone.db")
