"""References to a point in a journal, everywhere a point is accepted (API and CLI).

Grammar (whitespace around a ref is ignored):

    head            the default branch's head
    head~N          N events before it (N >= 0)
    BRANCH          a branch's head, by name or id
    BRANCH@SEQ      event SEQ of a branch (BRANCH by name or id; SEQ >= 0)
    BRANCH~N        N events before a branch's head
    LABEL           a label set with branch.tag(label)
    HASH            a content-hash prefix of 8 to 64 hex characters

A ref that matches more than one of these (say a label that is also a hash prefix) is
ambiguous and refused with the candidates; a malformed one is refused with this grammar.
"""

from __future__ import annotations

import re
from typing import Protocol

from .errors import Conflict, InvalidValue, NotFound
from .storage import Storage

GRAMMAR = "head | head~N | BRANCH | BRANCH@SEQ | BRANCH~N | LABEL | HASH (8-64 hex chars)"
_TILDE = re.compile(r"^(?P<base>[^@~\s]+)~(?P<n>\d+)$")
_AT = re.compile(r"^(?P<base>[^@~\s]+)@(?P<seq>\d+)$")
HEX_REF = re.compile(r"^[0-9a-fA-F]{8,64}$")
_NAME = re.compile(r"^[^@~\s]+$")


def _bad(ref: str, why: str) -> InvalidValue:
    return InvalidValue(f"{ref!r} is not a ref ({why}); refs are: {GRAMMAR}", ref=ref)


class Points(Protocol):
    """What resolving a ref needs to ask (a Journal is one)."""

    def head_of(self, branch: int | str) -> tuple[int, int]:
        """(branch id, head seq) of a branch by id or name; NotFound if there is none."""
        ...

    def labelled(self, label: str) -> tuple[int, int] | None:
        """(branch, seq) a label points at."""
        ...

    def lookup_hash(self, prefix: str) -> tuple[int, int]:
        """(branch, seq) of the one event whose hash starts with ``prefix``."""
        ...


def resolve(journal: Points, ref: str, default_branch: int | str = 0) -> tuple[int, int]:
    """(branch id, seq) that ``ref`` names."""
    if not isinstance(ref, str) or not ref.strip():
        raise _bad(str(ref), "empty")
    r = ref.strip()
    if r in ("HEAD",) or r.startswith("HEAD~"):
        raise _bad(r, "write head in lower case")
    if r == "head":
        return journal.head_of(default_branch)
    m = _TILDE.match(r)
    if m:
        base = m["base"]
        bid, head = journal.head_of(default_branch if base == "head" else _branch_ref(base))
        n = int(m["n"])
        if n > head:
            raise NotFound(f"{r}: branch {bid} has only {head} events", ref=r)
        return bid, head - n
    if "~" in r:
        raise _bad(r, "~ takes a whole number of events, like head~3")
    m = _AT.match(r)
    if m:
        bid, head = journal.head_of(_branch_ref(m["base"]))
        seq = int(m["seq"])
        if seq > head:
            raise NotFound(f"{r}: branch {bid} has seqs 0..{head}", ref=r)
        return bid, seq
    if "@" in r:
        raise _bad(r, "@ takes a seq, like main@40")
    if not _NAME.match(r):
        raise _bad(r, "unexpected characters")
    candidates: list[tuple[str, tuple[int, int]]] = []
    label = journal.labelled(r)
    if label is not None:
        candidates.append((f"label {r}", label))
    try:
        bid, head = journal.head_of(r)
        candidates.append((f"branch {bid}", (bid, head)))
    except NotFound:
        pass
    if HEX_REF.match(r):
        try:
            candidates.append((f"event {r}", journal.lookup_hash(r)))
        except NotFound:
            pass
    if not candidates:
        if r.isdigit():
            raise NotFound(
                f"{r!r} names no branch, label or event (a bare number is a branch id); an "
                f"event of a branch is BRANCH@SEQ, e.g. main@{r}",
                ref=r,
            )
        if re.fullmatch(r"[0-9a-fA-F]{1,7}", r):
            raise NotFound(
                f"{r!r} names no label or branch, and hash prefixes need 8+ characters; give "
                "more of the hash",
                ref=r,
            )
        raise NotFound(f"{r!r} names no label, branch or event hash; refs are: {GRAMMAR}", ref=r)
    points = {c[1] for c in candidates}
    if len(points) > 1:
        raise Conflict(
            f"{r!r} is ambiguous: {', '.join(f'{w} -> {b}@{s}' for w, (b, s) in candidates)}; "
            "write BRANCH@SEQ or more hash characters",
            ref=r,
            candidates=[c[1] for c in candidates],
        )
    return candidates[0][1]


def _branch_ref(base: str) -> int | str:
    return int(base) if base.isdigit() else base


def lookup_hash(storage: Storage, prefix: str) -> tuple[int, int]:
    """(branch, seq) of the one event whose hash starts with a hex prefix (8+ characters)."""
    p = prefix.lower() if isinstance(prefix, str) else ""
    if not (8 <= len(p) <= 64) or any(c not in "0123456789abcdef" for c in p):
        raise InvalidValue(
            f"{prefix!r} is not a hash prefix: give 8 to 64 hex characters", prefix=prefix
        )
    lo = bytes.fromhex((p + "0" * 64)[:64])
    top = int(p, 16) + 1
    hi = None if top >= 16 ** len(p) else bytes.fromhex((f"{top:0{len(p)}x}" + "0" * 64)[:64])
    hits = storage.by_hash_prefix(lo, hi)
    hashes = list(dict.fromkeys(h.hash for h in hits))
    if not hashes:
        raise NotFound(f"no event hash starts with {p}", prefix=p)
    if len(hashes) > 1:
        raise Conflict(
            f"the prefix {p} is ambiguous; it matches "
            f"{', '.join(h.hex()[:16] for h in hashes[:8])}; give more characters",
            prefix=p,
            candidates=[h.hex() for h in hashes],
        )
    events = list(dict.fromkeys((h.branch, h.seq) for h in hits))
    if len(events) > 1:
        # Identical histories have identical hashes: two forks that appended the same event
        # share its hash, and a hash alone cannot say which one is meant.
        where = ", ".join(f"{b}@{q}" for b, q in events[:8])
        raise Conflict(
            f"the hash {p} names {len(events)} events ({where}): forks that appended the "
            "same event share its hash; write BRANCH@SEQ",
            prefix=p,
            candidates=[f"{b}@{q}" for b, q in events],
        )
    return events[0]
