"""Search spaces for adaptive sweeps: each parameter an integer range, a float range or a set of
choices, checked when written (an empty or inverted range, a log scale over zero are refused
before anything is forked) and turned into Optuna's distributions.

    from workbench import sweep
    space = {"budget": sweep.Int(100, 6000, log=True),
             "retrieval": sweep.Categorical(["lexical", "literal", "fused"]),
             "temperature": sweep.Float(0.0, 1.0)}

On the command line: ``budget=int:100:6000:log``, ``retrieval=cat:lexical,literal,fused``,
``temperature=float:0:1`` (``:step=N`` for a stepped range).
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidValue
from ..events import canonical

GRID_LIMIT = 100_000  # grid points a grid sampler may enumerate


@dataclass(frozen=True)
class Int:
    """Integers from ``low`` to ``high`` inclusive (every ``step``), on a log scale if asked."""

    low: int
    high: int
    log: bool = False
    step: int = 1

    def check(self, name: str) -> None:
        for what, v in (("low", self.low), ("high", self.high), ("step", self.step)):
            if isinstance(v, bool) or not isinstance(v, int):
                raise InvalidValue(f"{name}: Int {what} is an integer, not {v!r}")
        _check_range(name, self.low, self.high, self.log)
        if self.step < 1:
            raise InvalidValue(f"{name}: step is at least 1, not {self.step}")
        if self.log and self.step != 1:
            raise InvalidValue(f"{name}: a log scale takes no step (Optuna samples it smoothly)")

    def values(self) -> list[Any]:
        return list(range(self.low, self.high + 1, self.step))

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "int",
            "low": self.low,
            "high": self.high,
            "log": self.log,
            "step": self.step,
        }


@dataclass(frozen=True)
class Float:
    """Floats from ``low`` to ``high`` (every ``step`` if given), on a log scale if asked."""

    low: float
    high: float
    log: bool = False
    step: float | None = None

    def check(self, name: str) -> None:
        for what, v in (("low", self.low), ("high", self.high)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise InvalidValue(f"{name}: Float {what} is a finite number, not {v!r}")
        _check_range(name, self.low, self.high, self.log)
        if self.step is not None:
            if isinstance(self.step, bool) or not isinstance(self.step, (int, float)):
                raise InvalidValue(f"{name}: step is a number, not {self.step!r}")
            if not self.step > 0:
                raise InvalidValue(f"{name}: step is positive, not {self.step}")
            if self.log:
                raise InvalidValue(f"{name}: a log scale takes no step")

    def values(self) -> list[Any]:
        if self.step is None:
            raise InvalidValue(
                "a grid of a float range needs a step: write float:LOW:HIGH:step=X (or use "
                "another sampler)"
            )
        n = int(math.floor((self.high - self.low) / self.step + 1e-9)) + 1
        return [round(self.low + i * self.step, 12) for i in range(n)]

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "float",
            "low": float(self.low),
            "high": float(self.high),
            "log": self.log,
            "step": self.step,
        }


@dataclass(frozen=True)
class Categorical:
    """One of ``choices`` (strings, numbers, booleans or null)."""

    choices: tuple[Any, ...]

    def __init__(self, choices: Iterable[Any]) -> None:
        if isinstance(choices, (str, bytes)) or not isinstance(choices, Iterable):
            raise InvalidValue(f"Categorical takes a list of choices, not {choices!r}")
        object.__setattr__(self, "choices", tuple(choices))

    def check(self, name: str) -> None:
        if not self.choices:
            raise InvalidValue(f"{name}: Categorical needs at least one choice")
        for c in self.choices:
            if c is not None and not isinstance(c, (str, int, float, bool)):
                raise InvalidValue(
                    f"{name}: a choice is a string, number, boolean or null, not {c!r}"
                )
        if len({json.dumps(c) for c in self.choices}) != len(self.choices):
            raise InvalidValue(f"{name}: a choice is given twice in {list(self.choices)}")

    def values(self) -> list[Any]:
        return list(self.choices)

    def to_json(self) -> dict[str, Any]:
        return {"type": "cat", "choices": list(self.choices)}


Dimension = Int | Float | Categorical


def _check_range(name: str, low: float, high: float, log: bool) -> None:
    if low > high:
        raise InvalidValue(f"{name}: the range {low}..{high} is inverted; write low first")
    if low == high:
        raise InvalidValue(f"{name}: the range {low}..{high} is empty; give two different bounds")
    if log and low <= 0:
        raise InvalidValue(
            f"{name}: a log scale needs a positive range, not {low}..{high} (it includes 0 or "
            "less); drop :log or raise the low bound"
        )


def check(space: Mapping[str, Dimension]) -> dict[str, Dimension]:
    """The space, checked: non-empty, names are non-empty strings, every dimension valid."""
    if not isinstance(space, Mapping) or not space:
        raise InvalidValue(
            "the search space is a non-empty dict of name -> Int/Float/Categorical, e.g. "
            "{'budget': sweep.Int(100, 6000, log=True)}"
        )
    out: dict[str, Dimension] = {}
    for name, dim in space.items():
        if not isinstance(name, str) or not name:
            raise InvalidValue(f"parameter names are non-empty strings, not {name!r}")
        if not isinstance(dim, (Int, Float, Categorical)):
            raise InvalidValue(
                f"{name}: give sweep.Int, sweep.Float or sweep.Categorical, not {dim!r}"
            )
        dim.check(name)
        out[name] = dim
    canonical(to_json(out), "the search space")
    return out


def parse(lines: Sequence[str]) -> dict[str, Dimension]:
    """``["budget=int:100:6000:log", "retrieval=cat:a,b", "t=float:0:1"]`` -> a checked space."""
    space: dict[str, Dimension] = {}
    for line in lines:
        name, eq, spec = line.partition("=")
        name = name.strip()
        if not eq or not name:
            raise InvalidValue(
                f"--space takes NAME=int:LOW:HIGH[:log], NAME=float:LOW:HIGH[:log] or "
                f"NAME=cat:A,B,...; {line!r} is not"
            )
        if name in space:
            raise InvalidValue(f"{name} is given twice in the space")
        space[name] = _dimension(name, spec.strip())
    return check(space)


def _dimension(name: str, spec: str) -> Dimension:
    kind, _, rest = spec.partition(":")
    if kind == "cat":
        return Categorical([_choice(v) for v in rest.split(",") if v.strip()])
    if kind not in ("int", "float"):
        raise InvalidValue(f"{name}: the type is int, float or cat, not {kind!r} (in {spec!r})")
    parts = rest.split(":")
    if len(parts) < 2:
        raise InvalidValue(f"{name}: write {kind}:LOW:HIGH (and :log or :step=X), not {spec!r}")
    log, step = False, None
    for opt in parts[2:]:
        if opt == "log":
            log = True
        elif opt.startswith("step="):
            step = opt[len("step=") :]
        else:
            raise InvalidValue(f"{name}: unknown option {opt!r} (log, step=X) in {spec!r}")
    try:
        if kind == "int":
            return Int(int(parts[0]), int(parts[1]), log, int(step) if step else 1)
        return Float(float(parts[0]), float(parts[1]), log, float(step) if step else None)
    except ValueError:
        raise InvalidValue(f"{name}: {spec!r} has a bound that is not a {kind}") from None


def _choice(text: str) -> Any:
    try:
        value = json.loads(text.strip())
    except ValueError:
        return text.strip()
    return value if value is None or isinstance(value, (str, int, float, bool)) else text.strip()


def to_json(space: Mapping[str, Dimension]) -> dict[str, Any]:
    """The space as plain JSON (recorded with the sweep)."""
    return {name: dim.to_json() for name, dim in space.items()}


def from_json(doc: Mapping[str, Any]) -> dict[str, Dimension]:
    """A space recorded with ``to_json``."""
    out: dict[str, Dimension] = {}
    for name, d in doc.items():
        if d["type"] == "int":
            out[name] = Int(int(d["low"]), int(d["high"]), bool(d["log"]), int(d.get("step", 1)))
        elif d["type"] == "float":
            out[name] = Float(float(d["low"]), float(d["high"]), bool(d["log"]), d.get("step"))
        else:
            out[name] = Categorical(d["choices"])
    return out


def distributions(space: Mapping[str, Dimension]) -> dict[str, Any]:
    """Optuna's distributions for the space."""
    from optuna.distributions import (
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )

    out: dict[str, Any] = {}
    for name, dim in space.items():
        if isinstance(dim, Int):
            out[name] = IntDistribution(dim.low, dim.high, log=dim.log, step=dim.step)
        elif isinstance(dim, Float):
            out[name] = FloatDistribution(dim.low, dim.high, log=dim.log, step=dim.step)
        else:
            out[name] = CategoricalDistribution(dim.choices)
    return out


def contains(dim: Dimension, value: Any) -> bool:
    """Whether ``value`` is a point of ``dim`` (what Optuna's distribution would accept)."""
    return bool(distributions({"x": dim})["x"]._contains(_internal(dim, value)))


def _internal(dim: Dimension, value: Any) -> Any:
    if isinstance(dim, Categorical):
        hits = [i for i, c in enumerate(dim.choices) if c == value and type(c) is type(value)]
        return hits[0] if hits else -1
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return float("nan")
    return float(value)


def grid(space: Mapping[str, Dimension]) -> dict[str, list[Any]]:
    """Every value of every dimension (for the grid sampler); refused past ``GRID_LIMIT``."""
    values = {name: dim.values() for name, dim in space.items()}
    size = math.prod(len(v) for v in values.values())
    if size > GRID_LIMIT:
        raise InvalidValue(
            f"the grid of this space has {size:,} points (more than {GRID_LIMIT:,}): use a "
            "stepped range or another sampler"
        )
    return values


def corners(space: Mapping[str, Dimension]) -> list[dict[str, Any]]:
    """Points at the space's bounds and at each choice: enough to check every value the
    sampler may give against the parameters the fork declares."""
    lows = {
        n: (d.low if not isinstance(d, Categorical) else d.choices[0]) for n, d in space.items()
    }
    points = [
        lows,
        {
            n: (d.high if not isinstance(d, Categorical) else d.choices[-1])
            for n, d in space.items()
        },
    ]
    for name, dim in space.items():
        if isinstance(dim, Categorical):
            points += [{**lows, name: c} for c in dim.choices]
    return points


def perturb(dim: Dimension, value: Any, rng: random.Random, factor: float = 1.2) -> Any:
    """A value near ``value`` (population-based training's explore step): a range value
    multiplied or divided by ``factor`` (clipped to the range), a choice kept or resampled."""
    if isinstance(dim, Categorical):
        return value if rng.random() < 0.75 else rng.choice(dim.choices)
    scale = factor if rng.random() < 0.5 else 1 / factor
    if isinstance(dim, Int):
        moved = int(round(value * scale)) if value else value + rng.choice((-dim.step, dim.step))
        if moved == value:
            moved = value + (dim.step if scale > 1 else -dim.step)
        moved = dim.low + ((moved - dim.low) // dim.step) * dim.step
        return max(dim.low, min(dim.high, moved))
    moved_f = value * scale if value else value + (dim.high - dim.low) * (scale - 1)
    if dim.step is not None:
        moved_f = dim.low + round((moved_f - dim.low) / dim.step) * dim.step
    return max(dim.low, min(dim.high, moved_f))


def from_grid(grid: Mapping[str, Sequence[Any]]) -> dict[str, Dimension]:
    """A space spanning a grid (what an optimize form starts from, given an agent's default
    grid): numbers become a range from the least to the largest (log when it spans a factor of
    20 or more), anything else a set of choices."""
    out: dict[str, Dimension] = {}
    for name, values in grid.items():
        vals = list(values)
        nums = [v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(nums) == len(vals) and len(set(nums)) > 1:
            low, high = min(nums), max(nums)
            log = low > 0 and high / low >= 20
            if all(isinstance(v, int) for v in nums):
                out[name] = Int(int(low), int(high), log=log)
            else:
                out[name] = Float(float(low), float(high), log=log)
        elif len(vals) > 0:
            out[name] = Categorical(dict.fromkeys(vals))
    return out


def to_lines(space: Mapping[str, Dimension]) -> list[str]:
    """The space as the command line writes it (``parse`` reads it back)."""
    lines = []
    for name, dim in space.items():
        if isinstance(dim, Categorical):
            choices = [c if isinstance(c, str) else json.dumps(c) for c in dim.choices]
            lines.append(f"{name}=cat:{','.join(choices)}")
            continue
        kind = "int" if isinstance(dim, Int) else "float"
        text = f"{name}={kind}:{dim.low}:{dim.high}"
        if dim.log:
            text += ":log"
        if isinstance(dim, Int) and dim.step != 1:
            text += f":step={dim.step}"
        if isinstance(dim, Float) and dim.step is not None:
            text += f":step={dim.step}"
        lines.append(text)
    return lines
