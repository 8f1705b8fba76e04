"""`lithify verify` and `lithify --version` (the console entry in a real subprocess once; the
rest in process through CliRunner)."""

from __future__ import annotations

import json
import os
import re
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


# -- a damaged file: verify reads what it can and says where ------------------------------------

PAGE = 2048  # the page size of a new journal (schema.PAGE_SIZE)


def _journal_of_2000_events(path) -> None:
    with Journal.open(path) as j:  # closed: the WAL is checkpointed into the file
        j.root().apply_many([{"i": i, "text": "x" * 200} for i in range(2000)])


def _seqs_in_page(data: bytes, page: int) -> set[int]:
    """The seqs whose payload ({"i": seq - 1, ...}) starts in a page of the file."""
    chunk = data[page * PAGE : (page + 1) * PAGE]
    return {int(m.group(1)) + 1 for m in re.finditer(rb'\{"i":(\d+),"text"', chunk)}


def _verify_in_a_real_process(path) -> tuple[subprocess.CompletedProcess, dict]:
    r = subprocess.run(
        [sys.executable, "-m", "workbench", "--db", str(path), "--json", "verify"],
        capture_output=True,
        text=True,
    )
    return r, json.loads(r.stdout)


@pytest.mark.slow
def test_verify_names_the_seqs_of_a_damaged_page_and_checks_the_rest(tmp_path):
    db = tmp_path / "j.db"
    _journal_of_2000_events(db)
    data = bytearray(db.read_bytes())
    pages = [p for p in range(len(data) // PAGE) if len(_seqs_in_page(data, p)) > 3]
    page = pages[len(pages) // 2]  # a page of events in the middle of the file
    lost = _seqs_in_page(data, page)
    data[page * PAGE + 8 : (page + 1) * PAGE] = os.urandom(PAGE - 8)  # keep its type byte
    db.write_bytes(bytes(data))
    r, doc = _verify_in_a_real_process(db)
    assert r.returncode == 1 and r.stderr == "" and doc["ok"] is False
    damaged = {p["seq"] for p in doc["problems"] if p["branch"] == 0}
    assert lost <= damaged and len(damaged) < 40, doc["problems"]
    assert doc["events"] >= 2000 - len(damaged)  # every other event was read and checked
    assert "lithify verify" not in r.stdout
    human = subprocess.run(
        [sys.executable, "-m", "workbench", "--db", str(db), "verify"],
        capture_output=True,
        text=True,
    )
    assert human.returncode == 1 and f"branch 0 seq {min(lost)}" in human.stdout


@pytest.mark.slow
def test_verify_reports_a_payload_with_damaged_bytes_without_printing_them(tmp_path):
    db = tmp_path / "j.db"
    _journal_of_2000_events(db)
    data = bytearray(db.read_bytes())
    at = data.index(b'{"i":1234,"text":"') + 18
    data[at : at + 20] = b"\xff" * 20  # not UTF-8: the row reads, its text does not decode
    db.write_bytes(bytes(data))
    r, doc = _verify_in_a_real_process(db)
    assert r.returncode == 1 and r.stderr == "" and "error" not in doc
    assert [(p["branch"], p["seq"]) for p in doc["problems"]][:1] == [(0, 1235)]
    assert doc["events"] == 1999  # every other event was read and checked
    assert "\ufffd" not in r.stdout and "Could not decode" not in r.stdout


@pytest.mark.slow
def test_verify_on_a_truncated_file_says_it_is_truncated(tmp_path):
    db = tmp_path / "j.db"
    _journal_of_2000_events(db)
    with open(db, "r+b") as f:
        f.truncate(db.stat().st_size // 2)
    r, doc = _verify_in_a_real_process(db)
    assert r.returncode == 1 and r.stderr == "" and doc["ok"] is False
    said = " ".join(p["what"] for p in doc["problems"])
    assert "truncated" in said and "lithify verify" not in said


def test_help_summaries_are_whole_sentences_at_any_width():
    """A docstring's line breaks are not the terminal's: every command's help is reflowed, so
    `lithify --help` at 80 columns does not break a summary mid-sentence."""
    from cli import lithify, stateforge

    from workbench.cli import app
    from workbench.cli.app import reflow_help
    from workbench.compat.stateforge.cli import app as stateforge_app

    for cli_app in (app, stateforge_app):
        reflow_help(cli_app)
        for cmd in cli_app.registered_commands:
            for paragraph in (cmd.help or "").split("\n\n"):
                lines = paragraph.splitlines()
                assert all(line.startswith(("- ", "* ")) for line in lines[1:]), (cmd.name, lines)
    for run in (lithify, stateforge):  # and the help still renders
        assert run("--help").returncode == 0
