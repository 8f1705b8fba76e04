"""What every handler of the REST API shares: the ``Base`` handler (the hub, JSON errors with
the CLI's kinds, the library call off the event loop), a reply that is a file (``Download``),
and the parsing of integer arguments."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jupyter_server.base.handlers import APIHandler

from ..errors import Conflict, InvalidValue, NotFound, WorkbenchError
from ..journal import Journal
from ..storage import fault
from . import shapes
from .hub import Hub, identity

JOURNAL_HEADER = "Lithify-Journal"  # the identity of the journal an answer is about


def http_status(e: BaseException) -> tuple[int, str]:
    """(HTTP status, kind) of an error: the kind is the CLI's (the exception's class name)."""
    from ..errors import Busy, DiskFull, NotAJournal, ReadOnly, StateMismatch, StateUnavailable

    kind = type(e).__name__
    if isinstance(e, PermissionError):
        return 403, "PermissionError"
    if isinstance(e, NotFound):
        return 404, kind
    if isinstance(e, Conflict):
        return 409, kind
    if isinstance(e, (InvalidValue, NotAJournal, StateMismatch, StateUnavailable)):
        return 400, kind
    if isinstance(e, ReadOnly):
        return 403, kind
    if isinstance(e, Busy):
        return 503, kind
    if isinstance(e, DiskFull):
        return 507, kind
    if isinstance(e, WorkbenchError):
        return 500, kind  # a damaged journal, a failed fork...: not the caller's mistake
    return 500, "InternalError"


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _int(value: str | None, name: str, default: int | None = None) -> int:
    if value is None or value == "":
        if default is None:
            raise InvalidValue(f"pass ?{name}=N")
        return default
    try:
        return int(value)
    except ValueError:
        raise InvalidValue(f"{name} must be an integer, not {value!r}") from None


def _body_int(body: dict[str, Any], name: str, default: int | None = None) -> int:
    value = body.get(name, default)
    if value is None:
        raise InvalidValue(f"pass {name!r} in the request body")
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InvalidValue(f"{name} must be an integer, not {value!r}")
    return _int(str(value), name)


@dataclass(frozen=True)
class Download:
    """A reply that is a file, not JSON."""

    body: bytes
    content_type: str
    filename: str | None = None


# Types a browser would run or render as a page from the server's origin: downloaded instead.
_ACTIVE = ("text/html", "image/svg+xml", "application/xhtml+xml", "text/xml", "application/xml")


def disposition(filename: str) -> str:
    """A Content-Disposition that downloads ``filename`` whatever its characters (RFC 6266:
    an ASCII fallback and the UTF-8 name)."""
    from urllib.parse import quote

    fallback = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "_" for c in filename)
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


def safe_type(content_type: str) -> str:
    """The media type bytes someone else wrote (an artifact) are sent as: a type the browser
    would render as a page from this origin (HTML, SVG, XML) goes as bytes."""
    return "application/octet-stream" if content_type.split(";")[0] in _ACTIVE else content_type


class Base(APIHandler):
    """What every lithify handler shares: the hub, JSON errors, the off-loop call."""

    hub: Hub
    opened: str | None = None  # the identity of the journal this request read (``identity``)

    def initialize(self, hub: Hub) -> None:
        self.hub = hub

    def fail(self, e: BaseException) -> None:
        """A JSON error with the CLI's kinds: 4xx for the caller's mistakes, 5xx for ours and
        the journal's (logged). A driver's or the OS's fault is translated as the CLI
        translates it (``storage.fault``): the same kind and message from both clients."""
        if not isinstance(e, PermissionError):  # the hub's refusal of a path outside its root
            e = fault(e, self.get_argument("journal", None) or "the journal") or e
        code, kind = http_status(e)
        message = str(e) or type(e).__name__
        if code >= 500 and not isinstance(e, WorkbenchError):
            self.log.error("lithify handler failed", exc_info=e)
            message = f"internal error: {type(e).__name__}: {e} (see the server log)"
        self.set_status(code)
        reply: shapes.ErrorReply = {"error": " ".join(message.split()), "kind": kind}
        self.finish(json.dumps(reply))

    async def reply(self, fn: Callable[[], Any]) -> None:
        """Run ``fn`` on the hub's threads; answer with its JSON (or its ``Download``)."""
        try:
            result = await self.hub.run(fn)
        except Exception as e:  # noqa: BLE001 (a JSON error, never a traceback)
            self.fail(e)
            return
        if self.opened is not None:  # which journal answered: a client notices another one
            self.set_header(JOURNAL_HEADER, self.opened)
        if isinstance(result, Download):
            if result.filename:
                self.set_header("Content-Disposition", disposition(result.filename))
            self.set_header("X-Content-Type-Options", "nosniff")
            self.finish(result.body, set_content_type=result.content_type)
            return
        self.finish(json.dumps(result, default=str))

    def body(self) -> dict[str, Any]:
        """The request's JSON object (InvalidValue when it is not one)."""
        try:
            doc = json.loads(self.request.body or b"{}")
        except ValueError as e:
            raise InvalidValue(f"the request body is not JSON: {e}") from None
        if not isinstance(doc, dict):
            raise InvalidValue("the request body is a JSON object")
        return doc

    def arg(self, name: str) -> str | None:
        value = self.get_query_argument(name, None)
        return value if isinstance(value, str) else None

    def live(self, j: Journal, sweep_id: int, how: dict[str, Any]) -> bool:
        """Whether a sweep is being run now: by this server (its handle), or by any process
        that beats in the journal (``sweep.watch``; a coordinator that died stops beating)."""
        from ..sweep import watch

        handle = self.hub.sweep(j, sweep_id)
        return (handle is not None and not handle.done) or watch.driven(how)

    def shown_state(self, j: Journal, sweep_id: int, how: dict[str, Any], state: str) -> str:
        """A sweep's state as a page shows it: ``running`` while a coordinator drives it (a
        study between trials is ``pending`` by its forks alone), ``pending`` when its
        coordinator is gone though a fork still says running (a resume finishes it)."""
        live = self.live(j, sweep_id, how)
        if live and state == "pending":
            return "running"
        if not live and state == "running":
            return "pending"
        return state

    def journal(self) -> Journal:
        """The journal of ``?journal=`` (its identity answers with the reply)."""
        j = self.hub.journal(self.arg("journal"))
        self.opened = identity(j)
        return j
