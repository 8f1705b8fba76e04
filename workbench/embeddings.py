"""Embeddings in JSON, efficiently: vectors packed as float32 (or float64 when asked).

``pack([0.1, 0.2, ...])`` gives ``{"@f32": "<base64 of little-endian float32>"}``, about a
fifth of the JSON text of the same floats, and JSON-safe (so it goes into deltas, effect
results and states like any value). ``unpack`` returns the floats. The round trip is exact for
float32 values: a float64 that float32 cannot represent is rounded to the nearest float32 once,
at ``pack`` (so ``unpack(pack(v)) == [float32(x) for x in v]``, and packing that again gives
the same bytes and the same hash). ``pack(v, "float64")`` gives ``{"@f64": ...}`` instead: twice
the bytes, and ``unpack`` returns exactly the floats given.
"""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Sequence
from typing import Any

from .errors import InvalidValue

TAG = "@f32"
TAG64 = "@f64"
DTYPES = {"float32": (TAG, "f", 4), "float64": (TAG64, "d", 8)}
_BY_TAG = {tag: (code, size) for tag, code, size in DTYPES.values()}


def pack(values: Sequence[float], dtype: str = "float32") -> dict[str, str]:
    """A vector as packed little-endian float32 (or float64) in base64 (JSON-safe)."""
    if dtype not in DTYPES:
        raise InvalidValue(f"an embedding's dtype is float32 or float64, not {dtype!r}")
    tag, code, _ = DTYPES[dtype]
    floats = [float(v) for v in values]
    if not all(math.isfinite(v) for v in floats):
        raise InvalidValue("an embedding must be finite numbers (no NaN or infinity)")
    try:
        raw = struct.pack(f"<{len(floats)}{code}", *floats)
    except (struct.error, OverflowError):
        raise InvalidValue(
            "an embedding value is outside float32's range (about ±3.4e38); pack it with "
            "dtype='float64'"
        ) from None
    return {tag: base64.b64encode(raw).decode("ascii")}


def pack_bytes(raw: bytes, dtype: str = "float32") -> dict[str, str]:
    """Already packed little-endian floats (``struct.pack('<Nf', ...)``) in base64."""
    if dtype not in DTYPES:
        raise InvalidValue(f"an embedding's dtype is float32 or float64, not {dtype!r}")
    tag, _, size = DTYPES[dtype]
    if len(raw) % size:
        raise InvalidValue(
            f"packed {dtype} embedding bytes come in multiples of {size}, not {len(raw)} bytes"
        )
    return {tag: base64.b64encode(raw).decode("ascii")}


def unpack(packed: Any) -> list[float]:
    """The floats of a packed vector (as stored, or as decoded from the journal)."""
    if not is_packed(packed):
        raise InvalidValue(
            f"not a packed embedding: expected {{{TAG!r}: base64}}, got {type(packed).__name__}"
        )
    ((tag, text),) = packed.items()
    code, size = _BY_TAG[tag]
    raw = base64.b64decode(text, validate=True)
    if len(raw) % size:
        raise InvalidValue(f"a packed embedding's byte length must be a multiple of {size}")
    return list(struct.unpack(f"<{len(raw) // size}{code}", raw))


def dtype_of(packed: Any) -> str:
    """``float32`` or ``float64``: how a packed vector stores its values."""
    if not is_packed(packed):
        raise InvalidValue(f"not a packed embedding: {type(packed).__name__}")
    return "float64" if TAG64 in packed else "float32"


def is_packed(value: Any) -> bool:
    """True for ``{"@f32": str}`` and ``{"@f64": str}``."""
    return (
        isinstance(value, dict)
        and len(value) == 1
        and any(isinstance(value.get(t), str) for t in _BY_TAG)
    )
