"""What a fork takes: the parameters a fork function or a template notebook declares, checked
before a sweep writes its first row (the journal is append-only: junk forks would stay).

A fork function declares its parameters with ``@takes``::

    @takes(budget=Param(int, min=1), model=Param(str), seed=Param(int, min=0))
    def run_fork(journal_path, branch_id, params): ...

A template notebook declares them in its ``parameters`` cell (each ``name = default``; the
default's type is the parameter's type), and may add ranges in its metadata::

    "metadata": {"lithify": {"params": {"budget": {"min": 1}}}}

Names the runners set themselves (``journal``, ``branch``, ``fork_params``, ``function``) are
not fork parameters. A fork that declares nothing accepts anything.
"""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from .errors import InvalidValue, NotFound

F = TypeVar("F", bound=Callable[..., Any])
RUNNER_SET = ("journal", "branch", "fork_params", "function")
_TYPES: dict[str, type] = {"int": int, "float": float, "str": str, "bool": bool}


@dataclass(frozen=True)
class Param:
    """One declared parameter: its type, and optionally a range or a set of choices."""

    type: type = object
    min: float | None = None
    max: float | None = None
    choices: tuple[Any, ...] | None = None

    def check(self, name: str, value: Any) -> None:
        """Raise InvalidValue (saying what is allowed) unless ``value`` fits."""
        t = self.type
        ok = (
            t is object
            or (t is float and isinstance(value, (int, float)) and not isinstance(value, bool))
            or (
                t is not float
                and isinstance(value, t)
                and (t is bool or not isinstance(value, bool))
            )
        )
        if ok and isinstance(value, float) and not math.isfinite(value):
            ok = False
        if not ok:
            raise InvalidValue(
                f"parameter {name} takes {t.__name__} values, not {value!r}", name=name
            )
        if self.min is not None and value < self.min:
            raise InvalidValue(
                f"parameter {name} must be at least {self.min:g}, not {value!r}", name=name
            )
        if self.max is not None and value > self.max:
            raise InvalidValue(
                f"parameter {name} must be at most {self.max:g}, not {value!r}", name=name
            )
        if self.choices is not None and value not in self.choices:
            raise InvalidValue(
                f"parameter {name} is one of {', '.join(map(repr, self.choices))}, not {value!r}",
                name=name,
            )


def takes(**params: Param) -> Callable[[F], F]:
    """Declare the parameters a fork function takes (checked before a sweep forks)."""

    def mark(fn: F) -> F:
        fn.lithify_params = dict(params)  # type: ignore[attr-defined]
        return fn

    return mark


def of_function(fn: Callable[..., Any]) -> dict[str, Param] | None:
    """The parameters a fork function declared with ``@takes``, or None."""
    declared = getattr(fn, "lithify_params", None)
    return dict(declared) if isinstance(declared, Mapping) else None


def of_notebook(path: str | Path) -> tuple[dict[str, Param], bool]:
    """(the parameters a template declares, whether it runs a ``function``); raises a clear
    error for a file that is not a readable notebook with a ``parameters`` cell."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotFound(f"no notebook at {path}") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise InvalidValue(
            f"{path} is not a readable notebook ({e}); give a template .ipynb"
        ) from None
    cells = doc.get("cells") if isinstance(doc, dict) else None
    if not isinstance(cells, list):
        raise InvalidValue(f"{path} is not a notebook (no cells); give a template .ipynb")
    cell = next(
        (
            c
            for c in cells
            if isinstance(c, dict)
            and c.get("cell_type") == "code"
            and "parameters" in (c.get("metadata", {}).get("tags") or [])
        ),
        None,
    )
    if cell is None:
        raise InvalidValue(
            f"{path} has no cell tagged 'parameters'; tag the cell that sets the fork's "
            "defaults (papermill injects the fork's values after it)"
        )
    source = cell.get("source", "")
    source = "".join(source) if isinstance(source, list) else str(source)
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise InvalidValue(f"{path}: the parameters cell does not parse ({e})") from None
    extra = (doc.get("metadata", {}).get("lithify", {}) or {}).get("params", {}) or {}
    out: dict[str, Param] = {}
    names: set[str] = set()
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            name = node.targets[0].id
            names.add(name)
            if name in RUNNER_SET:
                continue
            try:
                default = ast.literal_eval(node.value)
            except ValueError:
                default = None
            t = type(default) if type(default) in _TYPES.values() else object
            spec = extra.get(name, {}) if isinstance(extra.get(name), dict) else {}
            if isinstance(spec.get("type"), str):
                t = _TYPES.get(spec["type"], t)
            choices = spec.get("choices")
            out[name] = Param(
                t,
                spec.get("min"),
                spec.get("max"),
                tuple(choices) if isinstance(choices, list) else None,
            )
    return out, "function" in names


def check_points(
    points: list[dict[str, Any]], declared: dict[str, Param] | None, source: str
) -> None:
    """Every grid point's names must be declared, and every value must fit its Param."""
    if declared is None:
        return
    for point in points:
        for name, value in point.items():
            spec = declared.get(name)
            if spec is None:
                raise InvalidValue(
                    f"{source} takes no parameter {name!r}; it takes "
                    f"{', '.join(sorted(declared)) or 'none'}",
                    name=name,
                )
            spec.check(name, value)
