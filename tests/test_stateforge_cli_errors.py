"""The stateforge command says what is wrong with a journal in its own words: its variables
(STATEFORGE_KEY, STATEFORGE_DB), one hint each, and a lithify journal named as one."""

from __future__ import annotations

import pytest
from cli import stateforge

from workbench import Journal


def test_a_lithify_journal_of_another_agent_is_named_as_one(tmp_path):
    db = tmp_path / "agent.db"
    with Journal.open(db) as j:
        j.root().apply({"x": 1})
    r = stateforge("--db", str(db), "sessions", "list")
    assert r.returncode == 1
    assert "is a lithify journal" in r.stderr and f"lithify --db {db}" in r.stderr
    assert "state_name" not in r.stderr  # no Python-API advice on the command line


def test_an_encrypted_store_names_stateforge_key_once(tmp_path):
    pytest.importorskip("sqlcipher3")
    from workbench.compat.stateforge import StateForge

    db = tmp_path / "secret.db"
    StateForge(str(db), encryption_key="right").close_sync()
    missing = stateforge("--db", str(db), "sessions", "list", env={})
    assert missing.returncode == 1 and "set $STATEFORGE_KEY" in missing.stderr
    wrong = stateforge("--db", str(db), "sessions", "list", env={"STATEFORGE_KEY": "wrong"})
    assert wrong.returncode == 1 and "$STATEFORGE_KEY does not decrypt it" in wrong.stderr
    for r in (missing, wrong):
        assert "LITHIFY_KEY" not in r.stderr and r.stderr.count("key") <= 2, r.stderr
    ok = stateforge("--db", str(db), "sessions", "list", env={"STATEFORGE_KEY": "right"})
    assert ok.returncode == 0, ok.stderr
