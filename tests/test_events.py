"""Canonical JSON (RFC 8785), hashing and the JSON-safe value contract."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import blake3
import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench import InvalidValue, canonical
from workbench.events import MAX_SAFE_INT, _es_number, event_hash, merge_patch

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INT, MAX_SAFE_INT)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=100)  # the fast loop's sample; the slow run adds the full count below
@given(json_values)
def test_canonical_matches_rfc8785_reference(value):
    assert canonical(value).encode("utf-8") == rfc8785.dumps(value)


@pytest.mark.slow
@settings(max_examples=400)
@given(json_values)
def test_canonical_matches_rfc8785_reference_in_full(value):
    assert canonical(value).encode("utf-8") == rfc8785.dumps(value)


@settings(max_examples=400)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_formatting_matches_ecmascript_reference(f):
    assert _es_number(f) == rfc8785.dumps(f).decode()
    assert float(_es_number(f)) == f


@pytest.mark.parametrize(
    "f, text",
    [
        (1.0, "1"),
        (-0.0, "0"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1.5e-6, "0.0000015"),
        (123.456, "123.456"),
        (5e-324, "5e-324"),
    ],
)
def test_ecmascript_number_examples(f, text):
    assert _es_number(f) == text


def test_keys_sort_by_utf16_code_units():
    # U+10000 is D800 DC00 in UTF-16, so it sorts before U+E000 although its code point is larger.
    value = {"\ue000": 1, "\U00010000": 2}
    assert canonical(value) == rfc8785.dumps(value).decode()
    assert canonical(value).index("\U00010000") < canonical(value).index("\ue000")


@dataclass
class Point:
    x: int
    y: tuple[int, int]


def test_tuples_and_dataclasses_encode_as_plain_json():
    assert canonical(Point(1, (2, 3))) == '{"x":1,"y":[2,3]}'


@pytest.mark.parametrize(
    "value, path",
    [
        ({"items": [1, 2, 3, {4}]}, "delta['items'][3]"),
        ({"a": float("nan")}, "delta['a']"),
        ({"a": [math.inf]}, "delta['a'][0]"),
        ({1: "x"}, "delta"),
        ({"big": 2**60}, "delta['big']"),
        ({"s": "\ud800"}, "delta['s']"),
        ({"obj": object()}, "delta['obj']"),
    ],
)
def test_unsafe_values_name_the_path(value, path):
    with pytest.raises(InvalidValue) as err:
        canonical(value, "delta")
    assert err.value.path == path
    assert path in str(err.value)


def test_event_hash_is_blake3_of_parent_and_canonical_event():
    parent = bytes(range(32))
    payload = {"b": 1.0, "a": "é"}
    text = canonical(payload)
    expected = blake3.blake3(parent + rfc8785.dumps({"kind": "delta", "payload": payload})).digest()
    assert event_hash(parent, "delta", text) == expected


def test_merge_patch_follows_rfc7386():
    assert merge_patch({"a": 1, "b": {"c": 2, "d": 3}}, {"b": {"c": None, "e": 4}, "f": [1]}) == {
        "a": 1,
        "b": {"d": 3, "e": 4},
        "f": [1],
    }
    assert merge_patch({"a": 1}, [1, 2]) == [1, 2]


def test_error_survives_pickle_roundtrip_fields():
    import pickle

    try:
        canonical({"x": {1, 2}}, "delta")
    except InvalidValue as e:
        again = pickle.loads(pickle.dumps(e))
        assert (
            isinstance(again, InvalidValue) and again.path == "delta['x']" and str(again) == str(e)
        )
    assert json.loads(canonical({"x": [1]})) == {"x": [1]}


# -- one validation path for every write: depth, cycles and size -------------------------------


def _nest(depth: int) -> object:
    v: object = 1
    for _ in range(depth):
        v = [v]
    return v


def _cycle() -> dict:
    d: dict = {"a": 1}
    d["me"] = d
    return d


@pytest.fixture(params=["memory", "file", "postgres"])
def any_journal(request: pytest.FixtureRequest, tmp_path):
    """A journal on each backend (PostgreSQL on the session's real server)."""
    from uuid import uuid4

    from conftest import Ctx

    from workbench import Journal

    if request.param == "memory":
        j = Journal.in_memory(Ctx)
    elif request.param == "file":
        j = Journal.open(tmp_path / "j.db", Ctx)
    else:
        pg, db = request.getfixturevalue("pg"), request.getfixturevalue("pg_db")
        j = Journal.open(pg.url(db, journal=f"t_{uuid4().hex[:12]}"), Ctx)
    yield j
    j.close()


WRITES = {
    "apply": lambda b, v: b.apply({"x": 1, "v": v}),
    "apply_many": lambda b, v: b.apply_many([{"x": 1}, {"x": 2, "v": v}]),
    "effect": lambda b, v: b.effect("k", lambda: v),
    "observe": lambda b, v: b.observe("m", v),
    "compact": lambda b, v: b.compact(lambda br, s: {"items": [], "total": 0, "v": v}),
}


@pytest.mark.parametrize("write", sorted(WRITES))
@pytest.mark.parametrize("value", ["too_deep", "self_referencing"])
def test_every_write_refuses_a_too_deep_or_cyclic_value_with_invalid_value(
    any_journal, write, value
):
    b = any_journal.root()
    bad = _nest(10_000) if value == "too_deep" else _cycle()
    with pytest.raises(InvalidValue) as err:
        WRITES[write](b, bad)
    assert len(str(err.value)) < 600  # the message names the place, it does not print the value
    assert any_journal.root().head == 0 and any_journal.verify().ok


def test_the_size_limit_is_the_stored_bytes_of_one_event():
    from workbench import Journal

    with Journal.in_memory(max_event_bytes=1000, max_key_bytes=16) as j:
        b = j.root()
        b.apply({"t": "é" * 480})  # 960 UTF-8 bytes of text, under 1000 with the JSON around it
        with pytest.raises(InvalidValue, match="max_event_bytes"):
            b.apply({"t": "é" * 520})  # 520 characters, 1040 bytes
        with pytest.raises(InvalidValue, match=r"deltas\[1\].*max_event_bytes"):
            b.apply_many([{"t": "a"}, {"t": "a" * 1000}])
        ran = []
        with pytest.raises(InvalidValue, match="max_key_bytes"):
            b.effect("k" * 17, lambda: ran.append(1))
        assert ran == [] and b.unknown_outcomes() == []  # refused before fn ran or was announced
        assert b.effect("k" * 16, lambda: 1) == 1
        assert [r.seq for r in b.history()] == [1, 2]


def test_a_50_mb_value_and_a_1_mb_effect_key_are_refused_by_default(any_journal):
    b = any_journal.root()
    big = "x" * (50 * 2**20)
    for write in ("apply", "apply_many", "effect", "compact"):
        with pytest.raises(InvalidValue, match="max_event_bytes"):
            WRITES[write](b, big)
    ran = []
    with pytest.raises(InvalidValue, match="max_key_bytes"):
        b.effect("k" * 2**20, lambda: ran.append(1))
    assert ran == [] and b.unknown_outcomes() == ["k"]  # only the effect whose result was refused
    assert any_journal.root().head == 0 and any_journal.verify().ok
    b.apply({"x": 1, "v": "x" * (8 * 2**20)})  # 8 MiB is under the 16 MiB default


@pytest.mark.parametrize(
    "big", [2**53, -(2**53), 10**400, 10**5000], ids=["2**53", "-2**53", "1e400", "1e5000"]
)
def test_observe_refuses_an_integer_a_float_would_round_as_apply_does(big):
    # observe stored float(value): 2**53 + 1 came back as 2**53; 10**400 raised OverflowError
    from workbench import Journal

    with Journal.in_memory() as j:
        b = j.root()
        with pytest.raises(InvalidValue, match=r"2\*\*53-1.*pass a float") as err:
            b.observe("tokens", big)
        assert err.value.name == "tokens" and len(str(err.value)) < 300
        with pytest.raises(InvalidValue, match=r"2\*\*53-1"):  # one rule for both
            b.apply({"tokens": big})
        assert b.head == 0  # nothing written
        b.observe("tokens", MAX_SAFE_INT)
        b.observe("tokens", 2.0**53)  # a float says the rounding is accepted
        assert [r.payload["value"] for r in b.history()] == [MAX_SAFE_INT, 2**53]


@pytest.mark.parametrize(
    "options", [{"max_event_bytes": 0}, {"max_key_bytes": -1}, {"max_event_bytes": 1.5}]
)
def test_size_limits_are_positive_ints(options, tmp_path):
    from workbench import Journal

    with pytest.raises(InvalidValue, match="positive"):
        Journal.open(tmp_path / "j.db", **options)
    assert not (tmp_path / "j.db").exists()
