"""The unit constructors and ``MemoryUnit`` (``from stateforge.units import kv`` ports as
``from workbench.compat.stateforge.units import kv``): ``workbench.units``, re-exported."""

from __future__ import annotations

from ...units import (
    KINDS,
    Unit,
    UnitType,
    embedding,
    identity,
    kv,
    message,
    summary,
    tool_result,
)

MemoryUnit = Unit
MemoryUnitType = UnitType

__all__ = [
    "KINDS",
    "MemoryUnit",
    "MemoryUnitType",
    "Unit",
    "UnitType",
    "embedding",
    "identity",
    "kv",
    "message",
    "summary",
    "tool_result",
]
