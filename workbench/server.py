"""The jupyter_server extension behind the JupyterLab sidebar: REST handlers under
``/lithify/api/`` (authenticated like every Jupyter route) over the journals found below the
server root.

    GET  /lithify/api/journals                              journal files under the root
    GET  /lithify/api/branches?journal=REL                  branches with heads and params
    GET  /lithify/api/events?journal=REL&branch=ID&offset=N&limit=M   a page of events
    GET  /lithify/api/state?journal=REL&branch=ID&seq=N     the state at an event
    GET  /lithify/api/diff?journal=REL&branch=ID&a=N&b=M    structural diff between two seqs
    GET  /lithify/api/matrix?journal=REL[&sweep=ID]         the results matrix (rows)
    GET  /lithify/api/chart.svg?journal=REL&x=..&y=..[&sweep=ID]   the chart, rendered here
    GET  /lithify/api/sweeps?journal=REL                    sweeps with each fork's status
    POST /lithify/api/sweeps  {journal, branch, at, grid, seeds, workers, runner, notebook,
                               scheduler}
    POST /lithify/api/sweeps/cancel  {journal, sweep}

Paths are relative to the server root; anything outside it, or not a journal, gets a 4xx
with a message (never a traceback).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from . import bundled, charts, plugins
from . import sweep as sweeps
from .diff import diff
from .errors import Conflict, InvalidValue, NotAJournal, NotFound, WorkbenchError
from .events import encode_state
from .journal import Journal
from .storage import is_journal_file, is_url
from .sweep.cluster import runners_here

SKIP_DIRS = {".git", "node_modules", ".venv", "__pycache__", ".ipynb_checkpoints", "runs"}
MAX_DEPTH = 4


class _Hub:
    """Open journals and running sweeps of this server, by absolute path."""

    def __init__(self, root: str) -> None:
        self.root = Path(root).resolve()
        self.journals: dict[str, Any] = {}
        self.sweeps: dict[tuple[str, int], Any] = {}
        self.lock = threading.RLock()

    def path(self, rel: str | None) -> Path:
        if not rel:
            raise InvalidValue("pass ?journal=PATH (relative to the server root)")
        p = (self.root / rel).resolve()
        if p != self.root and self.root not in p.parents:
            raise PermissionError(f"{rel} is outside the server root")
        if not p.is_file():
            raise NotFound(f"no file {rel} under the server root")
        return p

    def notebook(self, rel: str) -> Path:
        """A template: a notebook under the server root, else a bundled template by name."""
        if "/" not in rel and not (self.root / rel).is_file():
            return bundled.template(rel)
        return self.path(rel)

    def journal(self, rel: str | None) -> Any:
        if rel and is_url(rel):  # a PostgreSQL journal: the server is its own root
            with self.lock:
                j = self.journals.get(rel)
                if j is None:
                    j = self.journals[rel] = Journal.open(rel, create=False)
                return j
        p = self.path(rel)
        key = str(p)
        with self.lock:
            j = self.journals.get(key)
            if j is None:
                if not is_journal_file(key):
                    raise NotAJournal(f"{rel} is not a lithify journal")
                j = Journal.open(key)  # the State class comes from the journal's agent plugin
                self.journals[key] = j
            return j

    def list(self) -> list[dict[str, Any]]:
        found = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            depth = len(Path(dirpath).relative_to(self.root).parts)
            dirnames[:] = [
                d
                for d in dirnames
                if d not in SKIP_DIRS and not d.startswith(".") and depth < MAX_DEPTH
            ]
            for name in sorted(filenames):
                if name.endswith(".db") and is_journal_file(os.path.join(dirpath, name)):
                    full = Path(dirpath) / name
                    found.append(
                        {
                            "path": full.relative_to(self.root).as_posix(),
                            "bytes": full.stat().st_size,
                        }
                    )
        return sorted(found, key=lambda d: d["path"])

    def close(self) -> None:
        with self.lock:
            for h in self.sweeps.values():
                h.cancel()
            for j in self.journals.values():
                j.close()
            self.journals.clear()


def _int(value: str | None, name: str, default: int | None = None) -> int:
    if value is None or value == "":
        if default is None:
            raise InvalidValue(f"pass ?{name}=N")
        return default
    try:
        return int(value)
    except ValueError:
        raise InvalidValue(f"{name} must be an integer, not {value!r}") from None


def make_handlers(hub: _Hub) -> list[tuple[str, Any, dict[str, Any]]]:
    """The tornado handlers (pattern, class, init kwargs) relative to the base URL."""
    from jupyter_server.base.handlers import APIHandler, JupyterHandler
    from tornado import web

    class Helpers(JupyterHandler):
        def initialize(self, hub: _Hub) -> None:
            self.hub = hub

        def fail(self, e: BaseException) -> None:
            if isinstance(e, PermissionError):
                code = 403
            elif isinstance(e, (NotFound, FileNotFoundError)):
                code = 404
            elif isinstance(e, Conflict):
                code = 409
            elif isinstance(e, (InvalidValue, NotAJournal, ValueError, KeyError, TypeError)):
                code = 400
            else:
                code = 500
            self.set_status(code)
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps({"error": str(e) or type(e).__name__}))

        def reply(self, fn: Any) -> None:
            try:
                self.finish(json.dumps(fn(), default=str))
            except (
                WorkbenchError,
                PermissionError,
                FileNotFoundError,
                ValueError,
                KeyError,
                TypeError,
            ) as e:
                self.fail(e)
            except Exception as e:  # noqa: BLE001 (a message, never a traceback)
                self.log.exception("lithify handler failed")
                self.fail(e)

        def arg(self, name: str) -> str | None:
            return self.get_query_argument(name, None)

        def journal(self) -> Any:
            return self.hub.journal(self.arg("journal"))

    class Base(Helpers, APIHandler):
        pass

    class Journals(Base):
        @web.authenticated
        def get(self) -> None:
            self.reply(
                lambda: {
                    "root": str(self.hub.root.name),
                    "journals": self.hub.list(),
                    "runners": runners_here(),
                }
            )

    class Branches(Base):
        @web.authenticated
        def get(self) -> None:
            def run() -> Any:
                j = self.journal()
                runs = {r.branch: r.status for r in j.storage.runs()}
                return {
                    "branches": [{**b.to_json(), "status": runs.get(b.id)} for b in j.branches()]
                }

            self.reply(run)

    class Events(Base):
        @web.authenticated
        def get(self) -> None:
            def run() -> Any:
                j = self.journal()
                b = j.branch(_int(self.arg("branch"), "branch", 0))
                limit = min(500, max(1, _int(self.arg("limit"), "limit", 100)))
                lo = max(1, _int(self.arg("offset"), "offset", 1))
                hi = min(b.head, lo + limit - 1)
                recs = b.history(lo, hi) if hi >= lo else []
                return {
                    "branch": b.id,
                    "head": b.head,
                    "offset": lo,
                    "events": [{**r.to_json(), "summary": r.summary(100)} for r in recs],
                }

            self.reply(run)

    class State(Base):
        @web.authenticated
        def get(self) -> None:
            def run() -> Any:
                j = self.journal()
                b = j.branch(_int(self.arg("branch"), "branch", 0))
                seq = _int(self.arg("seq"), "seq", b.head)
                return {
                    "branch": b.id,
                    "seq": seq,
                    "hash": j.hash_at(b.id, seq).hex(),
                    "state": json.loads(json.dumps(encode_state(b.at(seq)), default=str)),
                }

            self.reply(run)

    class Diff(Base):
        @web.authenticated
        def get(self) -> None:
            def run() -> Any:
                j = self.journal()
                b = j.branch(_int(self.arg("branch"), "branch", 0))
                hi = _int(self.arg("b"), "b", b.head)
                lo = _int(self.arg("a"), "a", max(0, hi - 1))
                return {
                    "branch": b.id,
                    "a": lo,
                    "b": hi,
                    "changes": [c.to_json() for c in diff(b.at(lo), b.at(hi))],
                }

            self.reply(run)

    class Search(Base):
        @web.authenticated
        def get(self) -> None:
            def run() -> Any:
                j = self.journal()
                branch = self.arg("branch")
                scope = _int(branch, "branch") if branch else None
                limit = min(500, max(1, _int(self.arg("limit"), "limit", 50)))
                hits = j.search(self.arg("q") or "", branch=scope, limit=limit)
                return {
                    "query": self.arg("q"),
                    "branch": scope,
                    "events": [{**r.to_json(), "summary": r.summary(100)} for r in hits],
                }

            self.reply(run)

    class Matrix(Base):
        @web.authenticated
        def get(self) -> None:
            def run() -> Any:
                sweep = self.arg("sweep")
                df = self.journal().matrix(sweep=_int(sweep, "sweep") if sweep else None)
                return {"columns": df.columns, "rows": [list(r) for r in df.iter_rows()]}

            self.reply(run)

    class Chart(Helpers):  # an image, not JSON
        @web.authenticated
        def get(self) -> None:
            try:
                sweep = self.arg("sweep")
                j = self.journal()
                agent = plugins.agent_for(j.state_name)
                y = self.arg("y") or (agent.y if agent else None)
                x = self.arg("x") or (agent.x if agent else None)
                if not x or not y:
                    raise InvalidValue(
                        "pass ?x=PARAM&y=METRIC (the journal's agent names no defaults)"
                    )
                df = j.matrix(sweep=_int(sweep, "sweep") if sweep else None, metrics=[y])
                if df.is_empty() or x not in df.columns:
                    raise NotFound(f"no {y!r} observations with a {x!r} parameter yet")
                import polars as pl

                df = df.filter(pl.col(x).is_not_null())
                svg = charts.metric_vs_param(df, x=x, y=y, log_x=charts.auto_log_x(df, x)).to_dict()
                import vl_convert as vlc

                self.set_header("Content-Type", "image/svg+xml")
                self.finish(vlc.vegalite_to_svg(svg))
            except Exception as e:  # noqa: BLE001
                self.fail(e)

    class Sweeps(Base):
        @web.authenticated
        def get(self) -> None:
            def run() -> Any:
                j = self.journal()
                out = []
                for s in j.sweeps():
                    handle = self.hub.sweeps.get((j.path, s.id))
                    progress = handle.progress() if handle is not None else {}
                    forks = []
                    for f in sweeps.status(j, s.id):
                        st, done, total = progress.get(f.branch, (f.status, None, None))
                        forks.append({**f.to_json(), "status": st, "done": done, "total": total})
                    out.append(
                        {
                            "id": s.id,
                            "base": s.base,
                            "at": s.at,
                            "grid": s.spec.get("grid"),
                            "running": handle is not None and not handle.done,
                            "forks": forks,
                        }
                    )
                return {"sweeps": out}

            self.reply(run)

        @web.authenticated
        def post(self) -> None:
            def run() -> Any:
                body = json.loads(self.request.body or b"{}")
                j = self.hub.journal(body.get("journal"))
                agent = plugins.agent_for(j.state_name)
                grid = body.get("grid") or (dict(agent.grid) if agent else None)
                if isinstance(grid, str):
                    grid = sweeps.parse_grid(grid)
                if not isinstance(grid, dict):
                    raise InvalidValue(
                        "pass a grid ({name: [values]} or 'name=v1,v2' lines); the journal's "
                        "agent names no default grid"
                    )
                notebook = body.get("notebook") or None
                nb_path = str(self.hub.notebook(notebook)) if notebook else None
                runner = body.get("runner") or ("papermill" if nb_path else "process")
                fn = body.get("fn") or (agent.fork if agent else None)
                if nb_path is None and not fn:
                    raise InvalidValue(
                        "pass a notebook or fn (the journal's agent names no fork function)"
                    )
                workers = int(body.get("workers", 2))
                sweeps.check_options(runner, workers, None)
                plan = sweeps.plan(
                    j,
                    int(body.get("branch", 0)),
                    int(body["at"]),
                    grid,
                    seeds=int(body["seeds"]) if body.get("seeds") else None,
                    notebook=nb_path,
                    fn=None if nb_path else fn,
                )
                handle = sweeps.start(
                    plan, workers=workers, runner=runner, scheduler=body.get("scheduler") or None
                )
                self.hub.sweeps[(j.path, plan.id)] = handle
                return {"sweep": plan.id, "forks": [f.branch for f in plan.forks]}

            self.reply(run)

    class Cancel(Base):
        @web.authenticated
        def post(self) -> None:
            def run() -> Any:
                body = json.loads(self.request.body or b"{}")
                j = self.hub.journal(body.get("journal"))
                handle = self.hub.sweeps.get((j.path, int(body["sweep"])))
                if handle is None:
                    raise NotFound(f"sweep {body['sweep']} is not running in this server")
                handle.cancel()
                return {"cancelled": int(body["sweep"])}

            self.reply(run)

    kw = {"hub": hub}
    return [
        ("lithify/api/journals", Journals, kw),
        ("lithify/api/branches", Branches, kw),
        ("lithify/api/events", Events, kw),
        ("lithify/api/state", State, kw),
        ("lithify/api/diff", Diff, kw),
        ("lithify/api/search", Search, kw),
        ("lithify/api/matrix", Matrix, kw),
        ("lithify/api/chart.svg", Chart, kw),
        ("lithify/api/sweeps", Sweeps, kw),
        ("lithify/api/sweeps/cancel", Cancel, kw),
    ]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "workbench.server"}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextensions/lithify-workbench", "dest": "lithify-workbench"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Register the handlers with the running Jupyter server."""
    from jupyter_server.utils import url_path_join

    hub = _Hub(serverapp.root_dir)
    base = serverapp.web_app.settings["base_url"]
    handlers = [(url_path_join(base, pattern), cls, kw) for pattern, cls, kw in make_handlers(hub)]
    serverapp.web_app.add_handlers(".*$", handlers)
    serverapp.web_app.settings["lithify_hub"] = hub
    serverapp.log.info("lithify: journals under %s at %slithify/api/", hub.root, base)


load_jupyter_server_extension = _load_jupyter_server_extension
