"""Event kinds, records, canonical JSON (RFC 8785), hashing, and codecs for states and deltas.

The hash of an event is ``blake3(parent_hash || canonical({"kind": kind, "payload": payload}))``
where ``canonical`` is RFC 8785 (JCS): sorted keys (by UTF-16 code units), no whitespace,
ECMAScript number formatting. Payloads are stored as that canonical text, so a stored byte
that changes changes the hash.

JSON-safe values are: ``None``, ``bool``, ``str`` (no lone surrogates), ``int`` within
±(2**53 - 1) (larger integers lose precision in JSON parsers; store them as strings),
finite ``float``, ``list`` and ``tuple`` (stored as lists), ``dict`` with ``str`` keys, and
dataclass instances (stored as dicts of their fields). Anything else is refused with an
error naming the path inside the value.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import reprlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import blake3
import orjson

from .errors import InvalidValue

if TYPE_CHECKING:
    from .storage import StoredEvent

# note: a branch's free-text note; attach: an artifact's name, blake3 and size (its bytes are
# stored beside the events, content-addressed: workbench.annotations). Neither moves the state.
Kind = Literal["delta", "effect", "compact", "observe", "note", "attach"]
KINDS: tuple[str, ...] = ("delta", "effect", "compact", "observe", "note", "attach")
ZERO_HASH = bytes(32)
MAX_SAFE_INT = 2**53 - 1
# Lists and dicts nest at most this deep in a stored value: the deepest orjson encodes (every
# stored value must read back, and orjson reads up to 1,024 levels, wrappers included).
MAX_DEPTH = 254
# What one event may hold (its payload as stored UTF-8 JSON) and an effect key, by default:
# a journal is replayed and copied whole, so large content belongs outside it (a file, an object
# store) with its path and hash journaled. ``Journal.open(max_event_bytes=, max_key_bytes=)``.
MAX_EVENT_BYTES = 16 * 2**20
MAX_KEY_BYTES = 4096

# -- canonical JSON -------------------------------------------------------------------------

_OK, _FIX, _CONVERT, _BAD = 0, 1, 2, 4
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


# Values reaching _dumps were checked by _scan (finite floats whose repr is already the
# ECMAScript form, safe ints, str keys without astral characters), so sorting keys is all that
# is left to do. orjson does that about eight times faster than the json module's C encoder,
# which matters on every append and every receipt.
_SORTED = orjson.OPT_SORT_KEYS


_std_dumps = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
).encode


def _dumps(value: Any) -> str:
    try:
        return orjson.dumps(value, option=_SORTED).decode("utf-8")
    except orjson.JSONEncodeError:  # a lone surrogate (found and named by the caller) or depth
        if _too_deep(value) is not None:
            raise
        return _std_dumps(value)


def _too_deep(value: Any, path: str = "value") -> str | None:
    """The path of the first list or dict nested deeper than MAX_DEPTH, else None (iterative:
    a value too deep for Python's recursion limit is measured too)."""
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack:
        v, where, depth = stack.pop()
        if (
            isinstance(v, (list, tuple, dict))
            or dataclasses.is_dataclass(v)
            and not isinstance(v, type)
        ):
            depth += 1
            if depth > MAX_DEPTH:
                return where
            if isinstance(v, dict):
                stack.extend((x, f"{where}[{k!r}]", depth) for k, x in v.items())
            elif isinstance(v, (list, tuple)):
                stack.extend((x, f"{where}[{i}]", depth) for i, x in enumerate(v))
            else:
                stack.extend(
                    (getattr(v, f.name), f"{where}.{f.name}", depth) for f in dataclasses.fields(v)
                )
    return None


def _deep_error(value: Any, path: str) -> InvalidValue:
    where = _too_deep(value, path) or path
    shown = where if len(where) <= 100 else f"{where[:60]}…{where[-30:]}"
    return InvalidValue(
        f"{shown} is nested more than {MAX_DEPTH} levels deep (lists and dicts inside each other), "
        "more than a stored value may be; flatten it or store the inner part as a JSON string",
        path=where,
    )


def loads(text: str | bytes) -> Any:
    """Parse stored JSON (canonical payloads, states, params); orjson, several times faster
    than the json module on the replay and effect-hit paths."""
    return orjson.loads(text)


def _scan(v: Any) -> int:
    """Classify a value: plain (json.dumps output is already canonical), needs the slow
    encoder (_FIX), needs conversion to plain types (_CONVERT), or not JSON-safe (_BAD)."""
    t = type(v)
    if t is str or v is None or t is bool:
        return _OK
    if t is int:
        return _OK if -MAX_SAFE_INT <= v <= MAX_SAFE_INT else _BAD
    if t is float:
        if not math.isfinite(v):
            return _BAD
        a = abs(v)
        # In this range Python's repr and ECMAScript agree digit for digit.
        return _OK if 1e-4 <= a < 1e16 and not v.is_integer() else _FIX
    if t is list:
        flags = _OK
        for x in v:  # strings and small ints inline: containers of them are the common case
            tx = type(x)
            if tx is str or (tx is int and -MAX_SAFE_INT <= x <= MAX_SAFE_INT):
                continue
            if tx is list:  # one more level inline, e.g. the [id, tokens] rows of a receipt
                for y in x:
                    ty = type(y)
                    if ty is not str and (ty is not int or not -MAX_SAFE_INT <= y <= MAX_SAFE_INT):
                        break
                else:
                    continue
            flags |= _scan(x)
            if flags & _BAD:
                return flags
        return flags
    if t is dict:
        flags = _OK
        for k, x in v.items():
            if type(k) is not str:
                return _BAD
            if not k.isascii() and _ASTRAL.search(k):
                flags |= _FIX
            tx = type(x)
            if tx is str or (tx is int and -MAX_SAFE_INT <= x <= MAX_SAFE_INT):
                continue
            flags |= _scan(x)
            if flags & _BAD:
                return flags
        return flags
    if t is tuple or dataclasses.is_dataclass(v) and not isinstance(v, type):
        return _CONVERT
    if isinstance(v, (str, int, float, list, dict)):
        return _CONVERT
    return _BAD


def to_plain(v: Any, path: str = "value") -> Any:
    """The value as plain JSON types (tuples to lists, dataclasses to dicts, subclasses to
    their base); raises InvalidValue naming the path of the first unsafe part."""
    t = type(v)
    if v is None or t is bool or t is str:
        return v
    if isinstance(v, bool):
        return bool(v)
    if isinstance(v, int):
        if not -MAX_SAFE_INT <= v <= MAX_SAFE_INT:
            raise InvalidValue(
                f"{path} is {_int_text(v)}, outside ±(2**53-1) where JSON numbers stay exact; "
                "store it as a string",
                path=path,
            )
        return int(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise InvalidValue(
                f"{path} is {v!r}; JSON has no NaN or infinity: use None or a finite number",
                path=path,
            )
        return float(v)
    if isinstance(v, str):
        return str(v)
    if isinstance(v, (list, tuple)):
        return [to_plain(x, f"{path}[{i}]") for i, x in enumerate(v)]
    if isinstance(v, dict):
        out: dict[str, Any] = {}
        for k, x in v.items():
            if not isinstance(k, str):
                raise InvalidValue(
                    f"{path} has the key {k!r} of type {type(k).__name__}; JSON object keys "
                    "must be str: convert the key to a string",
                    path=path,
                )
            out[str(k)] = to_plain(x, f"{path}[{k!r}]")
        return out
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {
            f.name: to_plain(getattr(v, f.name), f"{path}.{f.name}") for f in dataclasses.fields(v)
        }
    raise InvalidValue(
        f"{path} is a {type(v).__name__}, which is not JSON-safe; use None, bool, int, float, "
        "str, list, dict (str keys) or a dataclass of those",
        path=path,
    )


def _es_number(f: float) -> str:
    """ECMAScript Number::toString for a finite float (RFC 8785 section 3.2.2.3)."""
    if f == 0:
        return "0"
    if f.is_integer() and abs(f) < 2**53:
        return str(int(f))
    sign = "-" if f < 0 else ""
    d = Decimal(repr(abs(f))).normalize()
    _, digits_t, exp = d.as_tuple()
    digits = "".join(map(str, digits_t))
    k = len(digits)
    n = int(exp) + k  # value = 0.digits * 10**n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    mant = digits[0] + ("." + digits[1:] if k > 1 else "")
    e = n - 1
    return f"{sign}{mant}e{'+' if e > 0 else '-'}{abs(e)}"


def _utf16_key(s: str) -> bytes:
    return s.encode("utf-16-be", "surrogatepass")


def _jcs(v: Any) -> str:
    """The slow, general RFC 8785 encoder for plain values."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    t = type(v)
    if t is int:
        return str(v)
    if t is float:
        return _es_number(v)
    if t is str:
        return _dumps(v)
    if t is list:
        return "[" + ",".join(_jcs(x) for x in v) + "]"
    items = sorted(v.items(), key=lambda kv: _utf16_key(kv[0]))
    return "{" + ",".join(_dumps(k) + ":" + _jcs(x) for k, x in items) + "}"


def canonical(value: Any, path: str = "value") -> str:
    """RFC 8785 text of a JSON-safe value; raises InvalidValue naming the path inside it."""
    return canonical_plain(value, path)[0]


def canonical_plain(value: Any, path: str = "value") -> tuple[str, bool]:
    """(canonical text, whether ``value`` already equals its JSON round trip exactly)."""
    try:
        flags = _scan(value)
        plain = flags == _OK
        if flags & (_BAD | _CONVERT):
            value = to_plain(value, path)
            flags = _scan(value)
        if flags & _FIX:
            if _too_deep(value) is not None:
                raise _deep_error(value, path)
            text = _jcs(value)
        else:
            text = _dumps(value)
    except (RecursionError, orjson.JSONEncodeError):
        if _too_deep(value) is None:
            raise
        raise _deep_error(value, path) from None
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            _find_surrogate(value, path)
    return text, plain


MAX_TIME_MS = 8_640_000_000_000_000  # ±275,760 years around 1970: the range of a JavaScript Date


def iso_ms(ms: int) -> str:
    """Unix milliseconds as an ISO 8601 UTC time, to the millisecond (what people read)."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")


def unix_ms(value: Any, what: str) -> int:
    """Unix milliseconds from a datetime (naive = UTC) or a number: milliseconds, or seconds
    (as ``time.time()`` gives) when below 10**11 (10**11 ms is 1973; 10**11 s is year 5138)."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return int(value.timestamp() * 1000)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidValue(f"{what} takes unix milliseconds or a datetime, not {describe(value)}")
    ms = int(value * 1000) if abs(value) < 10**11 else int(value)
    if abs(ms) > MAX_TIME_MS:
        raise InvalidValue(
            f"{what} {value!r} is out of range: unix milliseconds within ±{MAX_TIME_MS:.3g}"
        )
    return ms


def check_text(value: Any, what: str) -> str:
    """A non-empty str that UTF-8 can encode (no lone surrogates), else InvalidValue: for keys,
    names and labels, which are stored and hashed as UTF-8."""
    if not isinstance(value, str) or not value:
        raise InvalidValue(f"{what} is a non-empty str, not {describe(value)}")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidValue(
                f"{what} {describe(value)} holds a lone surrogate ({e.object[e.start]!r}) that "
                "UTF-8 cannot encode; decode your bytes with errors='replace' first"
            ) from None
    return value


def _int_text(v: int) -> str:
    # str() of an int past 4,300 digits raises ValueError (CPython's int_max_str_digits)
    bits = v.bit_length()
    return f"the integer {int(v)}" if bits <= 256 else f"an integer of {bits} bits"


def check_observed_int(name: str, value: Any) -> None:
    """Refuse an observed int that a float would round (outside ±(2**53-1)), as ``apply``
    refuses one in a delta: an observation is stored as a JSON number."""
    if isinstance(value, int) and not isinstance(value, bool):
        if not -MAX_SAFE_INT <= value <= MAX_SAFE_INT:
            raise InvalidValue(
                f"observation {name!r} is {_int_text(value)}, outside ±(2**53-1) "
                "where a stored number stays exact; pass a float (float(value)) to accept the "
                "rounding, or scale it into range (e.g. thousands instead of units)",
                name=name,
            )


def chain_payloads(
    parent_hash: bytes,
    kind: str,
    values: Sequence[Any],
    path: str = "values",
    offset: int = 0,
    max_bytes: int = MAX_EVENT_BYTES,
) -> tuple[list[str], list[bytes], list[bytes]]:
    """Consecutive events of one kind after ``parent_hash``: their canonical payload texts,
    the texts' UTF-8 bytes and the events' hashes (canonical + event_hash in one pass). An
    unsafe value, or one over ``max_bytes`` stored, raises naming ``path[offset + i]`` before
    anything is returned."""
    texts: list[str] = []
    raw: list[bytes] = []
    hashes: list[bytes] = []
    dumps, scan, top = orjson.dumps, _scan, MAX_SAFE_INT
    new, join, prefix, h = blake3.blake3, b"".join, _KIND_PREFIX[kind], parent_hash
    for i, v in enumerate(values):
        text = None
        flat = type(v) is dict  # the common delta, a flat dict of str keys and scalars: inline
        if flat:
            for k, x in v.items():
                tx = type(x)
                if (
                    type(k) is not str
                    or not k.isascii()
                    or not (
                        tx is str or tx is bool or x is None or (tx is int and -top <= x <= top)
                    )
                ):
                    flat = False
                    break
        if not flat:
            try:
                flat = scan(v) == _OK
            except RecursionError:  # too deep (or a cycle): canonical() says where
                flat = False
        if flat:
            try:
                # decoded at once: orjson's buffers are oversized, and thousands held alive
                # cost more than the encoding did
                text = dumps(v, option=_SORTED).decode("utf-8")
            except orjson.JSONEncodeError:  # a lone surrogate or deep nesting: the general path
                pass
        if text is None:
            text = canonical(v, f"{path}[{offset + i}]")
        data = text.encode("utf-8")
        if len(data) > max_bytes:
            raise _too_big(len(data), max_bytes, f"{path}[{offset + i}]")
        h = new(join((h, prefix, data, b"}"))).digest()
        texts.append(text)
        raw.append(data)
        hashes.append(h)
    return texts, raw, hashes


def check_size(text: str, max_bytes: int, what: str) -> None:
    """Refuse (InvalidValue) an event payload whose stored UTF-8 bytes exceed ``max_bytes``."""
    if len(text) * 4 <= max_bytes:  # no character takes more than 4 bytes: nothing to count
        return
    n = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if n > max_bytes:
        raise _too_big(n, max_bytes, what)


def check_key(key: Any, max_bytes: int) -> str:
    """An effect key: ``check_text``, and at most ``max_bytes`` of UTF-8 (it is stored with its
    result and in the intent log, and hashed on every lookup)."""
    check_text(key, "an effect key")
    text: str = key
    n = len(key) if key.isascii() else len(key.encode("utf-8"))
    if n > max_bytes:
        raise InvalidValue(
            f"the effect key {describe(key, 60)} is {n:,} bytes, over this journal's limit of "
            f"{max_bytes:,} (max_key_bytes); use a short key (a name, or a hash of the inputs), "
            "or open the journal with a larger max_key_bytes",
            path="key",
        )
    return text


def _too_big(n: int, max_bytes: int, what: str) -> InvalidValue:
    return InvalidValue(
        f"{what} is {n:,} bytes as stored JSON, over this journal's limit of {max_bytes:,} per "
        "event (max_event_bytes); keep large content outside the journal (a file or an object "
        "store) and journal its path and hash, or open the journal with a larger "
        "max_event_bytes",
        path=what,
    )


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, 60, 60


def describe(value: Any, width: int = 80) -> str:
    """A short repr of any value for an error message: bounded in depth and length, so a
    huge, deep or self-referencing value never makes the message itself fail."""
    try:
        text = _REPR.repr(value)
    except Exception:  # noqa: BLE001 (a broken __repr__: its type is enough)
        text = f"<{type(value).__name__}>"
    return text if len(text) <= width else text[: width - 1] + "…"


def _find_surrogate(v: Any, path: str) -> None:
    if isinstance(v, str):
        try:
            v.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidValue(
                f"{path} holds a lone surrogate ({e.object[e.start]!r}) that UTF-8 cannot "
                "encode; decode your bytes with errors='replace' first",
                path=path,
            ) from None
    elif isinstance(v, list):
        for i, x in enumerate(v):
            _find_surrogate(x, f"{path}[{i}]")
    elif isinstance(v, dict):
        for k, x in v.items():
            _find_surrogate(k, f"{path} key")
            _find_surrogate(x, f"{path}[{k!r}]")


# -- hashing --------------------------------------------------------------------------------


_KIND_PREFIX = {k: b'{"kind":"' + k.encode() + b'","payload":' for k in KINDS}


def event_hash(parent_hash: bytes, kind: str, payload_text: str) -> bytes:
    """blake3(parent_hash || canonical({"kind": kind, "payload": payload})) over stored text."""
    prefix = _KIND_PREFIX.get(kind) or b'{"kind":' + json.dumps(kind).encode() + b',"payload":'
    return blake3.blake3(parent_hash + prefix + payload_text.encode("utf-8") + b"}").digest()


def key_hash(key: str) -> bytes:
    """The effect index key: blake3 of the effect key's UTF-8 bytes."""
    return blake3.blake3(key.encode("utf-8")).digest()


def snapshot_digest(event_hash_at_seq: bytes, state_text: str) -> bytes:
    """Seals a snapshot to the history it summarises, so a changed byte is detected."""
    return blake3.blake3(event_hash_at_seq + state_text.encode("utf-8")).digest()


# -- values ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Record:
    """One event as stored; for an inherited event ``branch`` is the branch that wrote it."""

    branch: int
    seq: int
    kind: str
    hash: str
    parent_hash: str
    ts: int
    payload: Any
    position: int

    def summary(self, width: int = 80) -> str:
        """A one-line description of the event for tables and logs."""
        p = self.payload
        if self.kind == "effect":
            text = f"{p.get('key')} -> {_short(json.dumps(p.get('result'), ensure_ascii=False))}"
        elif self.kind == "observe":
            text = f"{p.get('name')} = {p.get('value')}"
        elif self.kind == "compact":
            text = f"state replaced ({len(json.dumps(p.get('state')))} chars)"
        elif self.kind == "note":
            text = f"note: {p.get('text')}"
        elif self.kind == "attach":
            text = f"attached {p.get('name')} ({p.get('size')} bytes)"
        else:
            text = _short(json.dumps(p, ensure_ascii=False, sort_keys=True))
        text = " ".join(text.split())
        return text if len(text) <= width else text[: width - 1] + "…"

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object (for ``--json`` output and REST handlers)."""
        return {
            "branch": self.branch,
            "seq": self.seq,
            "kind": self.kind,
            "hash": self.hash,
            "parent_hash": self.parent_hash,
            "ts": self.ts,
            "position": self.position,
            "payload": self.payload,
        }


def record_of(event: StoredEvent) -> Record:
    """A stored event as a Record (payload decoded)."""
    return Record(
        event.branch,
        event.seq,
        event.kind,
        event.hash.hex(),
        event.parent_hash.hex(),
        event.ts,
        loads(event.payload),
        event.position,
    )


def _short(s: str, n: int = 120) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


@dataclass(frozen=True, slots=True)
class SweepInfo:
    """A recorded sweep: forks of ``base`` at ``at``, one per parameter set."""

    id: int
    base: int
    at: int
    spec: dict[str, Any]
    created: int
    branches: list[int]
    how: dict[str, Any] = field(default_factory=dict)  # how it was last run (runner, ...)


@dataclass(frozen=True, slots=True)
class BranchInfo:
    """A branch's row: where it forked, its own params, and its current head."""

    id: int
    name: str | None
    parent: int | None
    fork_seq: int
    head: int
    head_hash: str
    params: dict[str, Any] = field(default_factory=dict)
    created: int = 0
    sweep: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The branch as a JSON object."""
        return dataclasses.asdict(self)


# -- states ---------------------------------------------------------------------------------


class State:
    """Optional base class for agent state.

    Subclasses define ``apply(self, delta)`` (mutate in place, or return a new state) and may
    define ``size(self) -> int``. Dataclass subclasses encode as their fields; override
    ``to_json``/``from_json`` for other shapes. Set ``state_name`` to let
    ``Journal.open(path)`` without a class find this class for journals created with it.
    """

    state_name: ClassVar[str | None] = None
    _registry: ClassVar[dict[str, type[State]]] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        name = cls.__dict__.get("state_name")
        if name:
            State._registry[name] = cls

    def to_json(self) -> Any:
        """The JSON form of this state (dataclass fields by default)."""
        if dataclasses.is_dataclass(self):
            return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return dict(vars(self))

    @classmethod
    def from_json(cls, data: Any) -> State:
        """Rebuild a state from its JSON form."""
        return cls(**data)

    def size(self) -> int:
        """Characters in the canonical JSON form; override with a token count."""
        return len(canonical(encode_state(self), "state"))

    def apply_stored(self, stored: dict[str, Any]) -> bool:
        """Optional replay fast path: apply a registered delta straight from its stored JSON
        form (``{"@type": ..., "@v": ..., fields}``, parsed fresh for this call, so it may be
        kept) without building its dataclass. Return False, leaving the state untouched, to
        have it decoded and passed to ``apply`` instead. Overridden, it must leave the state
        exactly as ``apply`` would (replays are checked against live states); it is used only
        with the ``apply`` of the class that defines it (a subclass that overrides ``apply``
        alone replays through its ``apply``)."""
        return False


def registered_state(name: str | None) -> type[State] | None:
    """The State class registered under ``state_name``, if this process defined one."""
    return State._registry.get(name) if name else None


def encode_state(state: Any) -> Any:
    """The JSON form of a state object (State, dataclass, pydantic model, or plain value)."""
    to_json = getattr(state, "to_json", None)
    if callable(to_json):
        return to_json()
    dump = getattr(state, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(state) and not isinstance(state, type):
        return {f.name: getattr(state, f.name) for f in dataclasses.fields(state)}
    return state


def decode_state(cls: type | None, data: Any) -> Any:
    """Rebuild a state of class ``cls`` from its JSON form (plain JSON when cls is None)."""
    if cls is None:
        return data
    from_json = getattr(cls, "from_json", None)
    if callable(from_json):
        return from_json(data)
    validate = getattr(cls, "model_validate", None)
    if callable(validate):
        return validate(data)
    if dataclasses.is_dataclass(cls):
        return cls(**data)
    return cls(data)


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: how deltas apply to a class-less (plain JSON) state."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out
