"""Embeddings in JSON, efficiently: vectors packed as float32.

``pack([0.1, 0.2, ...])`` gives ``{"@f32": "<base64 of little-endian float32>"}``, about a
fifth of the JSON text of the same floats, and JSON-safe (so it goes into deltas, effect
results and states like any value). ``unpack`` returns the floats. The round trip is exact for
float32 values: a float64 that float32 cannot represent is rounded to the nearest float32 once,
at ``pack`` (so ``unpack(pack(v)) == [float32(x) for x in v]``, and packing that again gives
the same bytes and the same hash).
"""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Sequence
from typing import Any

from .errors import InvalidValue

TAG = "@f32"


def pack(values: Sequence[float]) -> dict[str, str]:
    """A vector as packed little-endian float32 in base64 (JSON-safe)."""
    floats = [float(v) for v in values]
    if not all(math.isfinite(v) for v in floats):
        raise InvalidValue("an embedding must be finite numbers (no NaN or infinity)")
    try:
        raw = struct.pack(f"<{len(floats)}f", *floats)
    except (struct.error, OverflowError):
        raise InvalidValue(
            "an embedding value is outside float32's range (about ±3.4e38)"
        ) from None
    return {TAG: base64.b64encode(raw).decode("ascii")}


def unpack(packed: Any) -> list[float]:
    """The floats of a packed vector (as stored, or as decoded from the journal)."""
    if not is_packed(packed):
        raise InvalidValue(
            f"not a packed embedding: expected {{{TAG!r}: base64}}, got {type(packed).__name__}"
        )
    raw = base64.b64decode(packed[TAG], validate=True)
    if len(raw) % 4:
        raise InvalidValue("a packed embedding's byte length must be a multiple of 4")
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def is_packed(value: Any) -> bool:
    """True for ``{"@f32": str}``."""
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get(TAG), str)
