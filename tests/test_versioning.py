"""Diff, rollback, refs, tags, provenance, packed embeddings, and concurrent first opens."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field

import cli
import pytest

from workbench import Conflict, InvalidValue, Journal, NotFound, State
from workbench.diff import iter_diff
from workbench.embeddings import pack, unpack


@dataclass
class Inventory(State):
    items: list[dict] = field(default_factory=list)
    owner: str = ""

    def apply(self, delta: dict) -> None:
        if "owner" in delta:
            self.owner = delta["owner"]
        if "add" in delta:
            self.items.insert(delta.get("at", len(self.items)), delta["add"])
        if "set" in delta:
            for item in self.items:
                if item["key"] == delta["set"]:
                    item["n"] = delta["n"]
        if "drop" in delta:
            self.items = [i for i in self.items if i["key"] != delta["drop"]]


def test_structural_diff_with_identity_keys():
    with Journal.in_memory(Inventory) as j:
        b = j.root()
        b.apply({"owner": "ann", "add": {"key": "a", "n": 1}})
        b.apply({"add": {"key": "b", "n": 2}})
        b.apply({"add": {"key": "z", "n": 0}, "at": 0})  # an insertion, not a cascade of edits
        b.apply({"set": "b", "n": 5, "owner": "bob"})
        b.apply({"drop": "a"})
        changes = [c.to_json() for c in b.diff(2, 5)]
        assert changes == [
            {"op": "removed", "path": "items[key=a]", "before": {"key": "a", "n": 1}},
            {"op": "modified", "path": "items[key=b].n", "before": 2, "after": 5},
            {"op": "added", "path": "items[key=z]", "after": {"key": "z", "n": 0}},
            {"op": "modified", "path": "owner", "before": "ann", "after": "bob"},
        ]
        assert b.diff(3, 3) == [] and list(iter_diff(b.at(2), b.at(5))) == b.diff(2, 5)
        fork = b.fork_at(2)
        fork.apply({"owner": "cy"})
        assert [c.path for c in j.diff("main@2", f"{fork.id}@3")] == ["owner"]


def test_rollback_is_an_appended_event_and_history_stays():
    with Journal.in_memory(Inventory) as j:
        b = j.root()
        for k in "abc":
            b.apply({"add": {"key": k, "n": 1}})
        seq = b.rollback(1)
        assert seq == 4 and [i["key"] for i in b.state().items] == ["a"]
        assert (
            b.history(4, 4)[0].kind == "compact"
            and b.history(4, 4)[0].payload["rollback"]["seq"] == 1
        )
        assert [i["key"] for i in b.at(3).items] == ["a", "b", "c"]  # nothing lost
        assert j.verify().ok
        other = b.fork_at(2)
        other.apply({"add": {"key": "x", "n": 9}})
        with pytest.raises(InvalidValue, match="from_other_branch"):
            b.rollback((other.id, 3))
        b.rollback((other.id, 3), from_other_branch=True)
        assert [i["key"] for i in b.state().items] == ["a", "b", "x"]
        assert b.rollback("main@2") == 6  # refs work too


def test_refs_at_depth_ambiguity_and_malformed():
    with Journal.in_memory() as j:
        b = j.root()
        for i in range(10_050):
            b.apply({"i": i})
        assert j.resolve("head~10000") == (0, 50)
        assert j.resolve("main~10050") == (0, 0)
        with pytest.raises(NotFound):
            j.resolve("head~10051")
        with pytest.raises(NotFound, match="a bare number is a branch id.*main@99"):
            j.resolve("99")  # no branch 99: not a word about hash prefixes
        for bad in ("HEAD", "head~", "head~-1", "main@", "a b", "main@x"):
            with pytest.raises(InvalidValue, match="refs are"):
                j.resolve(bad)
        h = b.head_hash[:10]
        b.tag("release", 7)
        assert j.resolve("release") == (0, 7)
        j.root().fork(name=h)  # a branch named like the head's hash prefix: ambiguous
        with pytest.raises(Conflict) as err:
            j.resolve(h)
        assert len(err.value.candidates) == 2 and "ambiguous" in str(err.value)
        with pytest.raises(InvalidValue):
            b.tag("deadbeef00")  # looks like a hash


def lithify(db, *args):
    return cli.lithify("--db", str(db), "--state", "test_versioning:Inventory", *args)


def test_cli_versioning_commands(tmp_path):
    db = tmp_path / "v.db"
    with Journal.open(db, Inventory) as j:
        b = j.root()
        for k in "abc":
            b.apply({"add": {"key": k, "n": 1}})
        b.effect("tool:x", lambda: 1)
    out = json.loads(lithify(db, "--json", "diff", "main@1", "head").stdout)
    assert [c["path"] for c in out["changes"]] == ["items[key=b]", "items[key=c]"]
    assert json.loads(lithify(db, "--json", "tag", "main@2", "two").stdout) == {
        "label": "two",
        "branch": 0,
        "seq": 2,
    }
    assert [e["seq"] for e in json.loads(lithify(db, "--json", "log", "two").stdout)] == [2, 1]
    shown = json.loads(lithify(db, "--json", "show", "head").stdout)
    assert shown["event"]["kind"] == "effect" and shown["provenance"]["attempts"] == 1
    assert lithify(db, "rollback", "--to", "two").returncode == 1  # asks; no answer means no
    rb = json.loads(lithify(db, "--json", "rollback", "--to", "two", "--yes").stdout)
    assert rb["restored"] == {"branch": 0, "seq": 2} and rb["seq"] == 5
    assert len(json.loads(lithify(db, "--json", "branches").stdout)) == 1
    vac = json.loads(lithify(db, "--json", "vacuum").stdout)
    assert vac["verified"] is True and vac["bytes_after"] <= vac["bytes_before"]
    prov = json.loads(lithify(db, "--json", "provenance", "head", "--path", "items").stdout)
    assert prov["chain"] and all("writer" in step for step in prov["chain"])
    assert lithify(db, "show", "nosuch").returncode == 1
    assert lithify(db, "show", "HEAD").returncode == 2
    assert lithify(db, "diff", "head~").returncode == 2


@pytest.mark.slow
def test_provenance_records_writer_source_duration_and_attempts(tmp_path):
    db = tmp_path / "p.db"
    code = textwrap.dedent(f"""
        import os
        from workbench import Journal
        with Journal.open({str(db)!r}, source="crashy") as j:
            # dies mid-call: announced, never committed
            j.root().effect("call", lambda: os._exit(9))
    """)
    subprocess.run([sys.executable, "-c", code])
    with Journal.open(db, source="notebook") as j:
        b = j.root()
        assert b.unknown_outcomes() == ["call"]
        b.effect("call", lambda: "done")
        b.apply({"x": 1}, occurred_at=1_700_000_000_000)
        fx = j.provenance("main@1")["event"]
        assert fx["key"] == "call" and fx["attempts"] == 2 and fx["duration_ms"] >= 0
        assert fx["source"] == "notebook" and len(fx["writer"]) == 16
        assert j.provenance("head")["event"]["occurred_at"] == 1_700_000_000_000


def test_packed_embeddings_round_trip_as_float32():
    import struct

    v = [0.1, -2.5, 3.0e-8, 1234.5678]
    f32 = [struct.unpack("<f", struct.pack("<f", x))[0] for x in v]
    packed = pack(v)
    assert unpack(packed) == f32 and pack(unpack(packed)) == packed
    big = [i / 7 for i in range(1536)]
    assert len(json.dumps(pack(big))) < len(json.dumps(big)) / 2.5
    with Journal.in_memory() as j:
        j.root().apply({"emb": pack(big)})
        assert unpack(j.root().state()["emb"]) == unpack(pack(big))
    for bad in ([float("nan")], [1e39]):
        with pytest.raises(InvalidValue):
            pack(bad)
    with pytest.raises(InvalidValue):
        unpack({"x": 1})


@pytest.mark.slow
def test_ten_processes_opening_a_fresh_file_leave_one_valid_schema(tmp_path):
    db, go = tmp_path / "fresh.db", tmp_path / "go"
    code = textwrap.dedent(f"""
        import os, sys, time
        while not os.path.exists({str(go)!r}):
            time.sleep(0.001)
        from workbench import Journal
        with Journal.open({str(db)!r}) as j:
            b = j.root().fork(params={{"w": int(sys.argv[1])}})
            for i in range(20):
                b.apply({{"i": i}})
        print("ok")
    """)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(10)
    ]
    go.touch()
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert out.strip() == "ok", err
    with Journal.open(db) as j:
        assert j.verify().ok and len(j.branches()) == 11 and j.verify().events == 200
        assert j.root().name == "main"


def test_refs_work_where_the_api_takes_a_point():
    with Journal.in_memory(Inventory) as j:
        b = j.root()
        for k in "abcd":
            b.apply({"add": {"key": k, "n": 1}})
        b.tag("two", 2)
        assert b.at("two") == b.at(2) and b.at("head~1") == b.at(3)
        f = b.fork_at("head~2")
        assert f.fork_seq == 2 and f.at("main@1") == b.at(1)
        assert [c.path for c in b.diff("two", "head")] == ["items[key=c]", "items[key=d]"]
        b.tag("three", "two")
        assert j.resolve("three") == (0, 2)
        f.apply({"owner": "x"})
        with pytest.raises(InvalidValue, match="not in branch"):
            b.at(f"{f.id}@3")
