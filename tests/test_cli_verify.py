"""`lithify verify` and `lithify --version` (the console entry in a real subprocess once; the
rest in process through CliRunner)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest
from cli import lithify
from conftest import Ctx

from workbench import Journal, __version__


@pytest.mark.slow
def test_version_from_a_real_process():
    r = subprocess.run(
        [sys.executable, "-m", "workbench", "--version"], capture_output=True, text=True
    )
    assert r.returncode == 0 and r.stdout.strip() == f"lithify {__version__}"


def test_verify_ok_and_json(db_path):
    with Journal.open(db_path, Ctx) as j:
        j.root().apply({"x": 1})
    r = lithify("--db", str(db_path), "verify")
    assert r.returncode == 0 and "ok" in r.stdout
    r = lithify("--db", str(db_path), "--json", "verify")
    doc = json.loads(r.stdout)
    assert doc["ok"] is True and doc["events"] == 1 and doc["problems"] == []


def test_verify_damaged_exits_1_with_the_bad_seq(db_path):
    with Journal.open(db_path, Ctx) as j:
        for x in range(5):
            j.root().apply({"x": x})
    con = sqlite3.connect(db_path)
    con.execute("drop trigger events_append_only_update")
    con.execute("update events set payload = '{\"x\":7}' where seq = 3")
    con.commit()
    con.close()
    r = lithify("--db", str(db_path), "--json", "verify")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert (
        doc["ok"] is False and doc["problems"][0]["seq"] == 3 and doc["problems"][0]["branch"] == 0
    )


def test_missing_and_foreign_files_are_clear_errors(tmp_path):
    r = lithify("--db", str(tmp_path / "nope.db"), "verify")
    assert r.returncode == 1 and "no journal at" in r.stderr and "Traceback" not in r.stderr
    junk = tmp_path / "junk.db"
    junk.write_text("hello")
    r = lithify("--db", str(junk), "verify")
    assert r.returncode == 1 and "not a lithify journal" in r.stderr


def test_usage_error_exits_2():
    assert lithify("--no-such-flag").returncode == 2


def test_every_command_has_help():
    from workbench.cli import app, register_agent_commands

    register_agent_commands()
    for cmd in app.registered_commands:
        assert cmd.help or (cmd.callback and cmd.callback.__doc__), cmd.name


def test_global_options_work_after_the_command_too(db_path):
    with Journal.open(db_path, Ctx) as j:
        j.root().apply({"x": 1})
    before = lithify("--db", str(db_path), "--json", "verify")
    after = lithify("verify", "--db", str(db_path), "--json")
    assert after.returncode == 0 and json.loads(after.stdout) == json.loads(before.stdout)
    mixed = lithify("--json", "history", f"--db={db_path}", "--to", "1")
    assert mixed.returncode == 0 and json.loads(mixed.stdout)[0]["seq"] == 1


def test_under_json_every_mistake_is_one_json_document(db_path):
    for args in (["nosuch"], ["history", "--bogus"], ["show"], ["verify", "--expect"]):
        r = lithify("--json", "--db", str(db_path), *args)
        doc = json.loads(r.stdout)  # exactly one document, nothing else on stdout
        assert r.returncode == 2 and doc["exit"] == 2 and doc["kind"] == "UsageError", args
        assert doc["error"] and "\n" not in r.stdout.strip()
    r = lithify("--db", str(db_path), "--json", "history")  # no journal there: not found
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc == {"error": doc["error"], "kind": "NotFound", "exit": 1}


def test_help_groups_commands_and_explains_globals_and_exit_codes():
    top = lithify("--help").stdout
    for panel in ("Journal", "Sweeps", "JupyterLab", "Auditor (the bundled agent)"):
        assert panel in top, panel
    assert "Exit codes: 0 ok; 1 not found, damaged or failed; 2" in " ".join(top.split())
    for cmd in ("history", "sweep", "at", "lab"):
        text = " ".join(lithify(cmd, "--help").stdout.split())
        assert "before or after the command: --db PATH" in text, cmd
        assert "<bool>" not in text, cmd  # flags take no value, and say none


def test_chart_and_rekey_check_their_arguments_before_working(db_path, tmp_path):
    with Journal.open(db_path, Ctx) as j:
        j.root().observe("m", 1.0)
    (tmp_path / "d.png").mkdir()
    for out, said in (
        (tmp_path / "missing" / "c.png", "does not exist"),
        (tmp_path / "c.gif", ".png, .svg"),
        (tmp_path / "d.png", "is a folder"),
    ):
        r = lithify("--db", str(db_path), "chart", "--x", "p", "--y", "m", "-o", str(out))
        assert r.returncode == 2 and said in r.stderr and len(r.stderr.splitlines()) == 1
    r = lithify("--db", str(db_path), "rekey")  # no prompt: a plain journal has no key
    assert r.returncode == 2 and "not encrypted" in r.stderr
