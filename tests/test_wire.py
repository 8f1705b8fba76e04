"""The wire checked: every JSON shape the server sends (``workbench/server/shapes.py``, typed
once) and the interface the Lab extension reads it with (``src/types.ts``) name the same fields,
the same ones optional and the same ones nullable, with types of the same kind. A field added on
one side only fails here, not in a user's browser."""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any

from workbench.server import shapes

TYPES_TS = (
    Path(__file__).resolve().parents[1] / "extensions" / "jupyterlab-lithify" / "src" / "types.ts"
)

# server shape -> the TypeScript interface that reads it
MIRROR = {
    "ErrorReply": "ErrorBody",
    "JournalFile": "JournalFile",
    "JournalsReply": "JournalsResponse",
    "BranchJson": "Branch",
    "SweepSummaryJson": "SweepSummary",
    "BranchesReply": "BranchesResponse",
    "EventJson": "EventRecord",
    "EventsReply": "EventsPage",
    "TailReply": "TailResponse",
    "VersionReply": "VersionResponse",
    "StateReply": "StateResponse",
    "Point": "Point",
    "ChangeJson": "Change",
    "BranchDetailReply": "BranchDetail",
    "NoteJson": "NoteJson",
    "ArtifactJson": "ArtifactJson",
    "NoteReply": "NoteReply",
    "AxesReply": "AxesResponse",
    "FilterReply": "FilterResponse",
    "MatrixReply": "MatrixResponse",
    "ForkJson": "ForkState",
    "SweepJson": "SweepState",
    "SweepsReply": "SweepsResponse",
    "StudyRowJson": "StudyRow",
    "StudiesReply": "StudiesResponse",
    "SweepStarted": "SweepStarted",
    "CancelReply": "SweepCancelled",
    "StudyDefaultsJson": "StudyDefaults",
    "DefaultsReply": "SweepDefaults",
    "DiffReply": "DiffResponse",
}
# shapes the extension does not read (other clients do), each with why
NOT_MIRRORED = {
    "SearchReply": "the Lab's filter box reads /filter; /search serves other clients",
    "TrialJson": "a study's trials are shown through the results panel's matrix, not read raw",
    "StudyReply": "the optimize form reads SweepStarted; GET optimize serves other clients",
}


def _ts_interfaces(text: str) -> dict[str, dict[str, tuple[str, bool]]]:
    """{interface: {field: (type text, optional)}}, with what it extends folded in."""
    found: dict[str, dict[str, tuple[str, bool]]] = {}
    parents: dict[str, list[str]] = {}
    for m in re.finditer(
        r"^export interface (\w+)(?: extends ([\w, ]+))? \{\n(.*?)^\}", text, re.S | re.M
    ):
        name, extends, body = m[1], m[2], m[3]
        fields = {}
        for line in body.splitlines():
            f = re.match(r"^  (\w+)(\??): (.+?);", line)
            if f:
                fields[f[1]] = (f[3].strip(), f[2] == "?")
        found[name] = fields
        parents[name] = [p.strip() for p in extends.split(",")] if extends else []

    def folded(name: str) -> dict[str, tuple[str, bool]]:
        out: dict[str, tuple[str, bool]] = {}
        for p in parents.get(name, []):
            out.update(folded(p))
        out.update(found[name])
        return out

    return {name: folded(name) for name in found}


def _kind_py(tp: Any) -> str:
    """A Python field type as a coarse kind: number, string, boolean, list, object, any."""
    origin = typing.get_origin(tp)
    if origin is typing.Union or str(origin) == "<class 'types.UnionType'>":
        kinds = {_kind_py(a) for a in typing.get_args(tp) if a is not type(None)}
        return kinds.pop() if len(kinds) == 1 else "any"
    if tp in (int, float):
        return "number"
    if tp is str:
        return "string"
    if tp is bool:
        return "boolean"
    if origin in (list, tuple) or tp in (list, tuple):
        return "list"
    if origin is dict or tp is dict or typing.is_typeddict(tp):
        return "object"
    return "any"


def _kind_ts(text: str) -> str:
    parts = [p.strip() for p in text.split("|") if p.strip() != "null"]
    kinds = {_kind_ts_one(p) for p in parts}
    return kinds.pop() if len(kinds) == 1 else "any"


def _kind_ts_one(t: str) -> str:
    if t == "number":
        return "number"
    if t == "string" or t.startswith("'"):
        return "string"
    if t == "boolean":
        return "boolean"
    if t.endswith("[]") or t.startswith("Array<"):
        return "list"
    if t.startswith("{") or t[:1].isupper() and t not in ("Json", "RunStatus"):
        return "object"
    if t == "RunStatus":
        return "string"
    return "any"


def _optional(cls: Any, field: str, hint: Any) -> bool:
    """Whether a TypedDict's field may be left out (Required/NotRequired read from the hint:
    with postponed annotations the class's own key sets cannot see them)."""
    origin = typing.get_origin(hint)
    if origin is typing.Required:
        return False
    if origin is typing.NotRequired:
        return True
    total = getattr(cls, "__total__", True)
    owner = next((c for c in cls.__mro__ if field in getattr(c, "__annotations__", {})), cls)
    return not getattr(owner, "__total__", total)


def _nullable_py(tp: Any) -> bool:
    return type(None) in typing.get_args(tp)


def _nullable_ts(text: str) -> bool:
    """Whether ``null`` is one of a TypeScript type's top-level alternatives."""
    depth, parts, cur = 0, [], ""
    for ch in text:
        depth += ch in "<{[("
        depth -= ch in ">}])"
        if ch == "|" and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return "null" in parts


def test_every_server_shape_is_mirrored_or_says_why_not() -> None:
    declared = {
        name
        for name, obj in vars(shapes).items()
        if isinstance(obj, type) and typing.is_typeddict(obj) and obj.__module__ == shapes.__name__
    }
    assert declared == set(MIRROR) | set(NOT_MIRRORED)
    interfaces = _ts_interfaces(TYPES_TS.read_text(encoding="utf-8"))
    assert set(MIRROR.values()) <= set(interfaces)


def test_each_mirrored_shape_names_the_same_fields_with_the_same_kinds() -> None:
    interfaces = _ts_interfaces(TYPES_TS.read_text(encoding="utf-8"))
    problems = []
    for py_name, ts_name in MIRROR.items():
        cls = getattr(shapes, py_name)
        extras = typing.get_type_hints(cls, include_extras=True)
        hints = typing.get_type_hints(cls)
        ts = interfaces[ts_name]
        if set(hints) != set(ts):
            problems.append(
                f"{py_name} / {ts_name}: only in Python {sorted(set(hints) - set(ts))}, only in "
                f"TypeScript {sorted(set(ts) - set(hints))}"
            )
            continue
        for field, tp in hints.items():
            ts_type, ts_optional = ts[field]
            optional = _optional(cls, field, extras[field])
            if optional != ts_optional:
                problems.append(
                    f"{py_name}.{field}: optional {optional} in Python, {ts_optional} in TypeScript"
                )
            if _nullable_py(tp) != _nullable_ts(ts_type):
                problems.append(f"{py_name}.{field}: nullable in one only ({tp} / {ts_type})")
            kp, kt = _kind_py(tp), _kind_ts(ts_type)
            if "any" not in (kp, kt) and kp != kt:
                problems.append(
                    f"{py_name}.{field}: {kp} in Python, {kt} in TypeScript ({ts_type})"
                )
    assert not problems, "the wire's two sides disagree:\n" + "\n".join(problems)


def test_the_lab_offers_every_view_the_server_draws() -> None:
    """``VIEW_KINDS`` (a tab each) and the ``ViewKind`` union are ``charts.KINDS``, in order:
    a view added to ``charts.VIEWS`` only would have no tab, one in the Lab only a 400."""
    from workbench import charts

    text = TYPES_TS.read_text(encoding="utf-8")
    union = re.search(r"^export type ViewKind = (.+?);$", text, re.M | re.S)
    listed = re.search(r"^export const VIEW_KINDS: ViewKind\[\] = \[(.+?)\];$", text, re.M | re.S)
    assert union and listed
    assert re.findall(r"'(\w+)'", union[1]) == list(charts.KINDS)
    assert re.findall(r"'(\w+)'", listed[1]) == list(charts.KINDS)
