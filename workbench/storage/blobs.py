"""The artifact store's seam: bytes kept in the journal's own database under their blake3
digest (one copy per distinct content), and the branch annotations that name them.

A branch's ``attach`` event journals an artifact's name, digest and size; the bytes live in
the ``blobs`` table beside the events, written before the event (a blob no event names is
harmless: a kill between the two writes leaves it, and the next attach of the same content
finds it). ``note`` and ``attach`` events are read for tables through ``annotations`` (a
partial index on both backends), not by replaying branches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol, runtime_checkable

ANNOTATION_KINDS = ("note", "attach")


class Annotation(NamedTuple):
    """A note or attach event as stored: its payload is the stored JSON text."""

    position: int
    branch: int
    seq: int
    kind: str
    payload: str
    ts: int


@runtime_checkable
class BlobStore(Protocol):
    """Optional (both bundled backends have it): content-addressed bytes and the annotation
    events that name them (without it, a journal cannot hold artifacts)."""

    def put_blob(self, digest: bytes, data: bytes) -> bool:
        """Store ``data`` under its blake3 ``digest`` unless it is stored; whether it was new.
        The caller has checked the digest."""
        ...

    def blob(self, digest: bytes) -> bytes | None:
        """The bytes stored under a digest, or None."""
        ...

    def blob_sizes(self, digests: Sequence[bytes]) -> dict[bytes, int]:
        """Which of these digests are stored, with their sizes."""
        ...

    def annotations(self, branches: Sequence[int] | None = None) -> list[Annotation]:
        """Note and attach events (of these branches), in journal order."""
        ...
