"""Encryption at rest with SQLCipher: no plaintext in the file, clear errors for wrong or
missing keys, key rotation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip(
    "sqlcipher3", reason="the encryption extra (sqlcipher3-binary) is installed in CI"
)

from workbench import InvalidValue, Journal, NotAJournal  # noqa: E402

SECRET = "SECRET-PAYLOAD-4242"


def files(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))


def test_no_plaintext_in_any_file_and_everything_works(tmp_path):
    db = tmp_path / "enc.db"
    with Journal.open(db, key="correct horse") as j:
        b = j.root()
        b.apply({"note": SECRET})
        b.apply_many([{"more": SECRET + str(i)} for i in range(3)])
        b.effect(f"llm:{SECRET}", lambda: SECRET * 2)
        b.observe("recall", 0.5)
        b.fork(params={"budget": SECRET})
        assert j.matrix()["value"].to_list() == [0.5]  # read without ADBC
        assert j.verify().ok
    assert SECRET.encode() not in files(db)
    assert not files(db).startswith(b"SQLite format 3")
    with Journal.open(db, key=lambda: "correct horse") as j:  # a key provider, called once
        assert j.root().state() == {"note": SECRET, "more": SECRET + "2"}
        assert j.root().effect(f"llm:{SECRET}", lambda: "rerun") == SECRET * 2


def test_wrong_missing_and_unneeded_keys_fail_at_open(tmp_path):
    db = tmp_path / "enc.db"
    with Journal.open(db, key="k1"):
        pass
    with pytest.raises(NotAJournal, match="wrong key"):
        Journal.open(db, key="k2")
    with pytest.raises(NotAJournal, match="encrypted"):
        Journal.open(db)
    plain = tmp_path / "plain.db"
    with Journal.open(plain):
        pass
    with pytest.raises(NotAJournal, match="not encrypted"):
        Journal.open(plain, key="k1")
    with pytest.raises(InvalidValue, match="32 bytes"):
        Journal.open(db, key=b"short")


@pytest.mark.slow
def test_intent_of_a_crashed_effect_stays_inside_the_encrypted_file(tmp_path):
    db = tmp_path / "enc.db"
    code = (
        f"import os\nfrom workbench import Journal\nj = Journal.open({str(db)!r}, key='k')\n"
        f"j.root().effect('tool:{SECRET}', lambda: os._exit(9))\n"
    )
    subprocess.run([sys.executable, "-c", code])
    assert SECRET.encode() not in files(db)
    with Journal.open(db, key="k") as j:
        assert j.root().unknown_outcomes() == [f"tool:{SECRET}"]


@pytest.mark.slow
def test_rekey_from_the_cli(tmp_path):
    db = tmp_path / "enc.db"
    with Journal.open(db, key="old") as j:
        j.root().apply({"x": 1})
    env = {**os.environ, "LITHIFY_KEY": "old", "LITHIFY_NEW_KEY": "new"}
    r = subprocess.run(
        [sys.executable, "-m", "workbench", "--db", str(db), "--json", "rekey"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 and json.loads(r.stdout)["verified"] is True, r.stderr
    with pytest.raises(NotAJournal):
        Journal.open(db, key="old")
    with Journal.open(db, key="new") as j:
        assert j.root().state() == {"x": 1}
    r = subprocess.run(
        [sys.executable, "-m", "workbench", "--db", str(db), "verify"],
        env={**os.environ, "LITHIFY_KEY": "new"},
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0
