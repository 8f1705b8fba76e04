"""Notes and artifacts: what a person or a fork says about a branch, journaled on it.

``branch.note(text)`` appends a ``note`` event; ``branch.attach(name, data_or_path)`` stores the
bytes in the journal's own database under their blake3 digest (one copy per distinct content,
on both backends) and appends an ``attach`` event naming them. Neither moves the state. Both
are events of the branch's history: a fork made after them inherits them, a rerun fork replays
them like its other writes (``workbench.replay``), and push, pull and clone carry them, the
artifacts' bytes checked against their digest on the way (``carry_blobs``). An artifact is at
most ``MAX_ARTIFACT_BYTES``: larger files belong outside the journal, with their path and hash
journaled instead.
"""

from __future__ import annotations

import mimetypes
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import blake3

from . import events as ev
from .errors import Conflict, IntegrityError, InvalidValue, NotFound
from .storage.blobs import Annotation, BlobStore
from .storage.rows import in_segments

if TYPE_CHECKING:
    from .port import JournalPort
    from .storage import Storage

MAX_ARTIFACT_BYTES = 64 * 2**20  # 64 MiB: an artifact is read whole, and copied with the journal
MAX_NAME_CHARS = 255


@dataclass(frozen=True)
class Note:
    """A branch's note: where it stands in the history, when it was written, its text."""

    branch: int
    seq: int
    ts: int
    text: str

    def to_json(self) -> dict[str, Any]:
        """The note as a JSON object."""
        return {"branch": self.branch, "seq": self.seq, "ts": self.ts, "text": self.text}


@dataclass(frozen=True)
class Artifact:
    """An attached artifact: its name, blake3 digest (hex), size in bytes, and its event."""

    branch: int
    seq: int
    ts: int
    name: str
    hash: str
    size: int

    @property
    def media_type(self) -> str:
        """The media type its name suggests (application/octet-stream when none does)."""
        return mimetypes.guess_type(self.name)[0] or "application/octet-stream"

    def to_json(self) -> dict[str, Any]:
        """The artifact as a JSON object."""
        return {
            "branch": self.branch,
            "seq": self.seq,
            "ts": self.ts,
            "name": self.name,
            "hash": self.hash,
            "size": self.size,
            "media_type": self.media_type,
        }


def blob_store(storage: Storage) -> BlobStore:
    """The backend as an artifact store, or InvalidValue naming what it lacks."""
    if not isinstance(storage, BlobStore):
        raise InvalidValue(
            f"this journal's backend ({type(storage).__name__}) cannot hold artifacts; use a "
            "SQLite or PostgreSQL journal"
        )
    return storage


def check_name(name: object) -> str:
    """An artifact's name: a file name (no folders, no control characters), at most 255
    characters; else InvalidValue saying what to change."""
    name = ev.check_text(name, "an artifact's name")
    if len(name) > MAX_NAME_CHARS:
        raise InvalidValue(
            f"an artifact's name is at most {MAX_NAME_CHARS} characters, not {len(name)}",
            name=name[:40],
        )
    if "/" in name or "\\" in name or name in (".", "..") or any(ord(c) < 32 for c in name):
        raise InvalidValue(
            f"an artifact's name is a file name without folders or control characters, not "
            f"{name!r} (use e.g. {os.path.basename(name.replace(chr(92), '/')) or 'data.bin'!r})",
            name=name,
        )
    return name


def read_content(data_or_path: Any, limit: int = MAX_ARTIFACT_BYTES) -> bytes:
    """The bytes to attach: ``bytes``-like as they are, a ``str`` or path-like as the file it
    names; past ``limit`` bytes (checked before reading a file) InvalidValue."""
    if isinstance(data_or_path, (bytes, bytearray, memoryview)):
        data = bytes(data_or_path)
    elif isinstance(data_or_path, (str, os.PathLike)):
        path = Path(data_or_path)
        try:
            st = path.stat()
            if path.is_dir():
                raise InvalidValue(f"{str(path)!r} is a folder; attach a file (or an archive)")
            if not stat.S_ISREG(st.st_mode):
                raise InvalidValue(f"{str(path)!r} is not a regular file (a device or a pipe)")
            if st.st_size > limit:
                raise InvalidValue(_too_big(st.st_size, limit, str(path)), name=path.name)
            with open(path, "rb") as f:
                data = f.read(limit + 1)  # a file that grew since: still refused past the limit
        except FileNotFoundError:
            raise InvalidValue(
                f"no file at {str(path)!r}; a str is a path (attach text as text.encode())"
            ) from None
        except PermissionError:
            raise InvalidValue(f"cannot read {str(path)!r}: permission denied") from None
        except OSError as e:
            raise InvalidValue(f"cannot read {str(path)!r}: {e.strerror or e}") from None
    else:
        raise InvalidValue(f"attach takes bytes or a file's path, not {ev.describe(data_or_path)}")
    if len(data) > limit:
        raise InvalidValue(_too_big(len(data), limit, "the data"))
    return data


def _too_big(size: int, limit: int, what: str) -> str:
    return (
        f"{what} is {size:,} bytes; an artifact is at most {limit:,} ({limit // 2**20} MiB): "
        "keep larger files outside the journal and journal their path and hash (an effect or "
        "a note)"
    )


class Annotations:
    """``note``, ``attach`` and their reads, for ``Branch`` (which owns the attributes below)."""

    id: int
    _j: JournalPort
    _head: int
    _segments: list[tuple[int, int, int | None]]
    _append: Callable[..., int]
    _replaying: Callable[..., Any]
    _replayed: Callable[..., int]
    _sync: Callable[[], None]

    def note(self, text: str) -> int:
        """Journal a free-text note on this branch (what was tried, why it failed); returns
        its seq. Notes show in the Lab's table and tooltips, and search finds them."""
        ev.check_text(text, "a note")
        if not text.strip():
            raise InvalidValue("a note is some text, not only spaces")
        payload = ev.canonical({"text": text}, "note")
        if (cursor := self._replaying(note=True)) is not None:
            return self._replayed(cursor, "note", payload)
        return self._append("note", payload, True)

    def attach(self, name: str, data_or_path: bytes | str | os.PathLike[str]) -> Artifact:
        """Store bytes (or the file at a path) in the journal as the artifact ``name`` of this
        branch: kept once per distinct content under its blake3 digest, at most
        MAX_ARTIFACT_BYTES; returns it. Attaching a name again keeps both (the newest wins in
        ``artifact(name)``)."""
        check_name(name)
        data = read_content(data_or_path)
        store = blob_store(self._j.storage)
        digest = blake3.blake3(data).digest()
        payload = ev.canonical({"hash": digest.hex(), "name": name, "size": len(data)}, "attach")
        if (cursor := self._replaying()) is not None:  # a rerun: the recorded artifact stands
            seq = self._replayed(cursor, "attach", payload)
            return next(a for a in self.artifacts() if a.branch == self.id and a.seq == seq)
        store.put_blob(digest, data)  # the bytes before the event that names them
        seq = self._append("attach", payload, True)
        return Artifact(self.id, seq, self._j.now(), name, digest.hex(), len(data))

    def _annotations(self, kind: str) -> list[Annotation]:
        self._j.flush(self.id)
        self._sync()
        segments, head = self._segments, self._head
        found = blob_store(self._j.storage).annotations([b for b, _, _ in segments])
        return [a for a in found if a.kind == kind and in_segments(segments, a.branch, a.seq, head)]

    def notes(self) -> list[Note]:
        """The notes of this branch's history (a fork's include those before its fork point)."""
        return [note_of(a) for a in self._annotations("note")]

    def artifacts(self) -> list[Artifact]:
        """The artifacts of this branch's history, oldest first."""
        return [artifact_of(a) for a in self._annotations("attach")]

    def artifact(self, name: str) -> bytes:
        """The bytes of the newest artifact called ``name`` in this branch's history, checked
        against their digest (IntegrityError when damaged or missing; NotFound when no
        artifact has that name)."""
        found = [a for a in self.artifacts() if a.name == name]
        if not found:
            names = sorted({a.name for a in self.artifacts()})
            raise NotFound(
                f"branch {self.id} has no artifact {name!r}"
                + (f"; it has {', '.join(map(repr, names[:10]))}" if names else ""),
                branch=self.id,
                name=name,
            )
        return read_blob(self._j.storage, found[-1])


def note_of(a: Annotation) -> Note:
    """A stored note event as a Note."""
    return Note(a.branch, a.seq, a.ts, str(ev.loads(a.payload).get("text", "")))


def artifact_of(a: Annotation) -> Artifact:
    """A stored attach event as an Artifact."""
    p = ev.loads(a.payload)
    return Artifact(a.branch, a.seq, a.ts, str(p["name"]), str(p["hash"]), int(p["size"]))


def read_blob(storage: Storage, artifact: Artifact) -> bytes:
    """An artifact's bytes, checked against its digest and size."""
    data = blob_store(storage).blob(bytes.fromhex(artifact.hash))
    where = f"artifact {artifact.name!r} of {artifact.branch}@{artifact.seq}"
    if data is None:
        raise IntegrityError(
            f"{where}: its bytes ({artifact.hash[:12]}…) are not in the journal; copy them from "
            "the journal it came from (lithify pull) or attach the file again",
            branch=artifact.branch,
            seq=artifact.seq,
        )
    if len(data) != artifact.size or blake3.blake3(data).hexdigest() != artifact.hash:
        raise IntegrityError(
            f"{where}: its stored bytes do not match their digest (damaged); attach the file "
            "again or restore the journal from a copy",
            branch=artifact.branch,
            seq=artifact.seq,
        )
    return data


def by_branch(storage: Storage, branches: Iterable[int] | None = None) -> dict[int, dict[str, Any]]:
    """Each branch's own notes and artifact names (not inherited ones), for tables:
    ``{branch: {"notes": [text, ...], "artifacts": [name, ...]}}``; empty for a backend
    without annotations."""
    if not isinstance(storage, BlobStore):
        return {}
    wanted = None if branches is None else list(branches)
    out: dict[int, dict[str, Any]] = {}
    for a in storage.annotations(wanted):
        slot = out.setdefault(a.branch, {"notes": [], "artifacts": []})
        if a.kind == "note":
            slot["notes"].append(note_of(a).text)
        else:
            name = artifact_of(a).name
            if name not in slot["artifacts"]:
                slot["artifacts"].append(name)
    return out


def carry_blobs(src: Storage, dst: Storage, rows: Sequence[tuple[Any, str]], branch: int) -> int:
    """Before replicated events of the source's ``branch`` land: copy the bytes their
    ``attach`` events name that the destination lacks, each checked against its digest
    (IntegrityError names the event); how many were copied. ``rows`` are replication's
    (event row, shape) pairs."""
    wanted: dict[bytes, tuple[int, int]] = {}
    for row, _ in rows:
        if row[2] == "attach":
            wanted[bytes.fromhex(ev.loads(row[6])["hash"])] = (branch, row[1])
    if not wanted:
        return 0
    there = blob_store(dst).blob_sizes(list(wanted))
    copied = 0
    for digest, (b, seq) in wanted.items():
        if digest in there:
            continue
        data = blob_store(src).blob(digest)
        if data is None or blake3.blake3(data).digest() != digest:
            raise IntegrityError(
                f"the source's artifact of event {b}@{seq} is "
                f"{'missing' if data is None else 'damaged'} (its bytes do not match "
                f"{digest.hex()[:12]}…); run `lithify verify` on the source. Nothing of this "
                "batch was copied",
                branch=b,
                seq=seq,
            )
        dst.put_blob(digest, data)  # type: ignore[attr-defined]
        copied += 1
    return copied


def check_artifacts(
    storage: Storage, attached: Sequence[tuple[int, int, str]]
) -> list[tuple[int, int, str]]:
    """``verify``'s check of artifacts: each attach event (branch, seq, payload text) must find
    its bytes, and they must match its digest; the problems as (branch, seq, what)."""
    if not attached or not isinstance(storage, BlobStore):
        return []
    out: list[tuple[int, int, str]] = []
    judged: dict[tuple[str, int], str | None] = {}  # (digest, size) -> what is wrong: read once
    for branch, seq, payload in attached:
        p = ev.loads(payload)
        key = (str(p["hash"]), int(p["size"]))
        if key not in judged:
            data = storage.blob(bytes.fromhex(key[0]))
            if data is None:
                judged[key] = "its bytes are missing"
            elif len(data) != key[1] or blake3.blake3(data).hexdigest() != key[0]:
                judged[key] = "its bytes do not match their digest"
            else:
                judged[key] = None
        if judged[key] is not None:
            out.append((branch, seq, f"artifact {p['name']!r}: {judged[key]}"))
    return out


def notes_past(
    storage: Storage, branch: int, head: int, head_hash: bytes
) -> tuple[int, bytes] | None:
    """The branch's stored head when every event written after ``head`` is a note (or an
    attach) chained to it: a handle whose append was refused because someone noted the branch
    meanwhile writes after them (they move no state); None when anything else was written."""
    after, parent = head, head_hash
    while page := storage.events_after(branch, after, 500):
        for e in page:
            if e.kind not in ("note", "attach") or bytes(e.parent_hash) != parent:
                return None
            after, parent = e.seq, bytes(e.hash)
        if len(page) < 500:
            break
    return None if after == head else (after, parent)


def check_not_running(
    journal: Any, branch: int, live: Callable[[Any, int, dict[str, Any]], bool] | None = None
) -> None:
    """Conflict when ``branch`` is a fork a sweep running now may still write (running or
    pending): a note from outside waits until it has ended. ``live(journal, sweep, how)``
    says whether a sweep is being run (default: a coordinator beats in the journal,
    ``sweep.watch.driven``)."""
    from .sweep import watch

    for row in journal.runs():
        if row.branch != branch or row.status not in ("running", "pending"):
            continue
        how = next((s.how for s in journal.sweeps() if s.id == row.sweep), None) or {}
        running = live(journal, row.sweep, how) if live is not None else watch.driven(how)
        if running:
            raise Conflict(
                f"branch {branch} is a fork of sweep {row.sweep}, which is running "
                f"({row.status}); note it once the fork has ended, or from the fork function "
                "with branch.note(text)",
                branch=branch,
            )
