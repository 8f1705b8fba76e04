"""The Lab's handlers for notes and artifacts: write a note on a branch, download an
artifact (``workbench.annotations``)."""

from __future__ import annotations

from typing import cast

from tornado import web

from ..annotations import check_not_running, read_blob
from ..errors import InvalidValue, NotFound
from . import shapes
from .base import Base, Download, _body_int, _int, safe_type


class Note(Base):
    """POST {journal, branch, text}: journal a note on the branch. Refused (Conflict) while a
    sweep that is running now may still write the branch (its fork is running or pending):
    the note would move the head under the fork's own handle. A fork notes itself with
    ``branch.note(text)``."""

    @web.authenticated
    async def post(self) -> None:
        def run() -> shapes.NoteReply:
            body = self.body()
            j = self.hub.journal(body.get("journal"))
            branch = _body_int(body, "branch")
            text = body.get("text")
            if not isinstance(text, str) or not text.strip():
                raise InvalidValue("a note is some text; write it in the box first")
            b = j.branch(branch)
            check_not_running(j, b.id, self.live)
            seq = b.note(text.strip())
            j.flush(b.id)
            notes = [cast(shapes.NoteJson, n.to_json()) for n in b.notes()]
            return {"branch": b.id, "seq": seq, "notes": notes}

        await self.reply(run)


class ArtifactFile(Base):
    """GET ?journal=J&branch=ID&name=NAME: the newest artifact of that name in the branch's
    history, as a download (its bytes checked against their digest first)."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> Download:
            j = self.journal()
            b = j.branch(_int(self.arg("branch"), "branch", 0))
            name = self.arg("name")
            if not name:
                raise InvalidValue("name= is the artifact's name (the branch's list has them)")
            found = [a for a in b.artifacts() if a.name == name]
            if not found:
                raise NotFound(f"branch {b.id} has no artifact {name!r}", branch=b.id)
            art = found[-1]
            return Download(read_blob(j.storage, art), safe_type(art.media_type), art.name)

        await self.reply(run)


__all__ = ["ArtifactFile", "Note"]
