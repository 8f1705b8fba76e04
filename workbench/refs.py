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
from typing import TYPE_CHECKING

from .errors import Conflict, InvalidValue, NotFound

if TYPE_CHECKING:
    from .journal import Journal

GRAMMAR = "head | head~N | BRANCH | BRANCH@SEQ | BRANCH~N | LABEL | HASH (8-64 hex chars)"
_TILDE = re.compile(r"^(?P<base>[^@~\s]+)~(?P<n>\d+)$")
_AT = re.compile(r"^(?P<base>[^@~\s]+)@(?P<seq>\d+)$")
_HEX = re.compile(r"^[0-9a-fA-F]{8,64}$")
_NAME = re.compile(r"^[^@~\s]+$")


def _bad(ref: str, why: str) -> InvalidValue:
    return InvalidValue(f"{ref!r} is not a ref ({why}); refs are: {GRAMMAR}", ref=ref)


def resolve(journal: Journal, ref: str, default_branch: int | str = 0) -> tuple[int, int]:
    """(branch id, seq) that ``ref`` names."""
    if not isinstance(ref, str) or not ref.strip():
        raise _bad(str(ref), "empty")
    r = ref.strip()
    if r in ("HEAD",) or r.startswith("HEAD~"):
        raise _bad(r, "write head in lower case")
    if r == "head":
        b = journal.branch(default_branch)
        return b.id, b.head
    m = _TILDE.match(r)
    if m:
        base = m["base"]
        if base == "head":
            b = journal.branch(default_branch)
        else:
            b = journal.branch(_branch_ref(journal, base, r))
        n = int(m["n"])
        if n > b.head:
            raise NotFound(f"{r}: branch {b.id} has only {b.head} events", ref=r)
        return b.id, b.head - n
    if "~" in r:
        raise _bad(r, "~ takes a whole number of events, like head~3")
    m = _AT.match(r)
    if m:
        b = journal.branch(_branch_ref(journal, m["base"], r))
        seq = int(m["seq"])
        if seq > b.head:
            raise NotFound(f"{r}: branch {b.id} has seqs 0..{b.head}", ref=r)
        return b.id, seq
    if "@" in r:
        raise _bad(r, "@ takes a seq, like main@40")
    if not _NAME.match(r):
        raise _bad(r, "unexpected characters")
    candidates: list[tuple[str, tuple[int, int]]] = []
    label = journal.storage.tag(r)
    if label is not None:
        candidates.append((f"label {r}", label))
    try:
        b = journal.branch(r)
        candidates.append((f"branch {b.id}", (b.id, b.head)))
    except NotFound:
        pass
    if _HEX.match(r):
        try:
            candidates.append((f"event {r}", journal.lookup_hash(r)))
        except NotFound:
            pass
    if not candidates:
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


def _branch_ref(journal: Journal, base: str, ref: str) -> int | str:
    return int(base) if base.isdigit() else base
