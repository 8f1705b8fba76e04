"""``MemoryUnitType``: the five kinds of unit (each member equals its string, ``"kv"``)."""

from __future__ import annotations

from ...units import UnitType as MemoryUnitType

__all__ = ["MemoryUnitType"]
