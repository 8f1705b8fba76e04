"""What the model saw: render a state into a budgeted context, with a receipt.

    text, receipt = branch.render(budget=2000)            # or render(..., messages=True)
    with branch.receipt(receipt):
        reply = branch.effect("llm:7", call_model, text)  # the receipt is journaled with it

A renderer turns a state into ``Part``s (id, text, role, priority, pinned, scope). Parts
outside the requested scope, or rejected by the caller's filter, are left out first; the rest
are kept by priority (pinned ones first, then higher priority, then the newest) while they fit
the budget as counted by the estimator; the kept parts are returned in their original order,
never over the budget. The receipt names the source seq and head hash, the estimator, the
tokens used, how many parts were examined and selected, how long the projection took, and
every part included or omitted (with its tokens and, for omissions, why: ``budget`` when it
cannot fit even alone, ``priority`` when parts ranked above it took the room, ``scope``,
``filter``), so `lithify receipt REF` can answer "what exactly did the model see, and why".
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from .errors import InvalidValue
from .events import encode_state


class Part(NamedTuple):
    """One piece of context: ``pinned`` parts are always kept (or the render fails).

    A named tuple (immutable, cheap to build: renderers make one per message per call)."""

    id: str
    text: str
    role: str = "user"
    priority: int = 0
    pinned: bool = False
    scope: str | None = None  # render(scope=...) leaves out parts of other scopes


class Estimator(Protocol):
    """Counts tokens in a text; ``name`` goes into receipts."""

    name: str

    def __call__(self, text: str) -> int: ...


class CharEstimator:
    """ceil(characters / chars_per_token): the default, and what the bundled auditor uses."""

    def __init__(self, chars_per_token: float = 4.0) -> None:
        if chars_per_token <= 0:
            raise InvalidValue("chars_per_token must be positive")
        self.chars_per_token = chars_per_token
        self.name = f"chars/{chars_per_token:g}"

    def __call__(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token)


class TiktokenEstimator:
    """Exact counts from ``tiktoken`` (install it and its encoding files yourself)."""

    def __init__(self, encoding: str = "cl100k_base") -> None:
        try:
            import tiktoken
        except ImportError:
            raise InvalidValue(
                "TiktokenEstimator needs the tiktoken package: pip install tiktoken"
            ) from None
        self._enc = tiktoken.get_encoding(encoding)
        self.name = f"tiktoken/{encoding}"

    def __call__(self, text: str) -> int:
        return len(self._enc.encode(text))


def default_estimator() -> Estimator:
    """chars/4; pass ``TiktokenEstimator()`` for exact counts where tiktoken is installed
    (it is never tried implicitly: loading its files may need the network)."""
    return CharEstimator()


def default_renderer(state: Any) -> list[Part]:
    """Parts of a state: ``state.context_parts()`` if it has one; else each item of a
    ``messages`` or ``notes`` list (newest most valuable); else the state's JSON as one part."""
    parts = getattr(state, "context_parts", None)
    if callable(parts):
        return list(parts())
    for attr in ("messages", "notes"):
        items = getattr(state, attr, None)
        if items is None and isinstance(state, dict):
            items = state.get(attr)
        if isinstance(items, list):
            out = []
            for i, item in enumerate(items):
                if isinstance(item, dict):
                    out.append(
                        Part(
                            f"{attr}[{i}]",
                            str(item.get("content", item.get("text", ""))),
                            str(item.get("role", "user")),
                        )
                    )
                else:
                    out.append(Part(f"{attr}[{i}]", str(item)))
            return out
    return [
        Part(
            "state",
            json.dumps(encode_state(state), sort_keys=True, ensure_ascii=False, default=str),
        )
    ]


REASONS = ("budget", "priority", "scope", "filter")


@dataclass(frozen=True)
class Receipt:
    """What a render included and left out (and why), and from which point of which branch."""

    branch: int
    seq: int
    head_hash: str
    estimator: str
    budget: int
    tokens: int
    included: list[list[Any]] = field(default_factory=list)  # [part id, tokens], in context order
    omitted: list[list[Any]] = field(default_factory=list)  # [part id, tokens, reason]
    examined: int = 0  # parts the renderer produced
    selected: int = 0  # parts included
    projection_ms: float = 0.0  # time to render and select (journaled beside the effect, not in it)

    def to_json(self, timing: bool = True) -> dict[str, Any]:
        """The receipt as JSON (``timing=False``: without projection_ms, as journaled)."""
        doc = {
            "branch": self.branch,
            "seq": self.seq,
            "head_hash": self.head_hash,
            "estimator": self.estimator,
            "budget": self.budget,
            "tokens": self.tokens,
            "examined": self.examined,
            "selected": self.selected,
            "included": self.included,
            "omitted": self.omitted,
        }
        if timing:
            doc["projection_ms"] = self.projection_ms
        return doc


def render_parts(
    parts: Sequence[Part],
    budget: int,
    estimator: Callable[[str], int],
    separator: str = "\n",
    scope: str | Collection[str] | None = None,
    keep: Callable[[Part], bool] | None = None,
) -> tuple[list[Part], list[tuple[Part, int]], list[tuple[Part, int, str]], int]:
    """(kept parts in order, included with tokens, omitted with tokens and reason, tokens used)."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise InvalidValue(f"budget is a number of tokens >= 0, not {budget!r}")
    ids = [p.id for p in parts]
    if len(set(ids)) != len(ids):
        raise InvalidValue("part ids must be unique within a render")
    scopes = {scope} if isinstance(scope, str) else (set(scope) if scope is not None else None)
    cost = [estimator(p.text) for p in parts]
    why: dict[int, str] = {}
    live: Sequence[int] = range(len(parts))
    if scopes is not None or keep is not None:
        for i, p in enumerate(parts):
            if scopes is not None and p.scope is not None and p.scope not in scopes:
                why[i] = "scope"
            elif keep is not None and not keep(p):
                why[i] = "filter"
            if i in why and p.pinned:
                raise InvalidValue(
                    f"pinned part {p.id!r} is left out by the {why[i]}; pinned parts must be kept"
                )
        live = [i for i in live if i not in why]
    sep = estimator(separator) if separator else 0
    total = (
        (sum(cost[i] for i in live) if why else sum(cost)) + sep * (len(live) - 1) if live else 0
    )
    if total <= budget:  # everything left fits: nothing to choose
        kept_idx = list(live)
        used = total
    else:
        order = sorted(live, key=lambda i: (not parts[i].pinned, -parts[i].priority, -i))
        chosen: set[int] = set()
        used = 0
        for i in order:
            extra = cost[i] + (sep if chosen else 0)
            if used + extra <= budget:
                chosen.add(i)
                used += extra
            elif parts[i].pinned:
                raise InvalidValue(
                    f"pinned part {parts[i].id!r} ({cost[i]} tokens) does not fit the budget of "
                    f"{budget}"
                )
            else:
                why[i] = "budget" if cost[i] > budget else "priority"
        kept_idx = sorted(chosen)
    return (
        [parts[i] for i in kept_idx],
        [(parts[i], cost[i]) for i in kept_idx],
        [(parts[i], cost[i], why[i]) for i in range(len(parts)) if i in why],
        used,
    )


def make_receipt(
    branch: int,
    seq: int,
    head_hash: str,
    estimator: Any,
    budget: int,
    included: list[tuple[Part, int]],
    omitted: list[tuple[Part, int, str]],
    used: int,
    examined: int = 0,
    projection_ms: float = 0.0,
) -> Receipt:
    name = getattr(estimator, "name", getattr(estimator, "__name__", type(estimator).__name__))
    return Receipt(
        branch,
        seq,
        head_hash,
        str(name),
        budget,
        used,
        [[p.id, t] for p, t in included],
        [[p.id, t, w] for p, t, w in omitted],
        examined,
        len(included),
        round(projection_ms, 3),
    )
