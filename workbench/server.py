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

MATRIX_FIXED = {"branch", "branch_name", "seq", "metric", "value", "ts", "sweep", "status"}
SKIP_DIRS = {".git", "node_modules", ".venv", "__pycache__", ".ipynb_checkpoints", "runs"}
MAX_DEPTH = 12  # folders below the server root searched for journals


class _Hub:
    """Open journals and running sweeps of this server, by absolute path."""

    def __init__(self, root: str) -> None:
        self.root = Path(root).resolve()
        self.journals: dict[str, Any] = {}
        self.inodes: dict[str, tuple[int, int] | None] = {}
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

    def relative(self, path: str | None) -> str | None:
        """A path as the file browser names it (relative to the root), if it lies below it."""
        if not path:
            return None
        try:
            return Path(path).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None

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
        with self.lock:
            key = str((self.root / rel).resolve()) if rel else ""
            j = self.journals.get(key)
            if j is not None and self.inodes.get(key) != _inode(key):
                # deleted, or deleted and made again: never serve (or write into) the old file
                self.journals.pop(key, None)
                self.inodes.pop(key, None)
                j.close()
                j = None
            p = self.path(rel)
            if j is None:
                if not is_journal_file(key):
                    raise NotAJournal(f"{rel} is not a lithify journal")
                j = Journal.open(p)  # the State class comes from the journal's agent plugin
                self.journals[key] = j
                self.inodes[key] = _inode(key)
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


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _inode(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def http_status(e: BaseException) -> tuple[int, str]:
    """(HTTP status, kind) of an error: the kind is the CLI's (the exception's class name)."""
    from .errors import Busy, DiskFull, ReadOnly, StateMismatch, StateUnavailable

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


def _need(body: dict[str, Any], name: str) -> Any:
    if name not in body or body[name] is None:
        raise InvalidValue(f"pass {name!r} in the request body")
    return body[name]


def _body_int(body: dict[str, Any], name: str, default: int | None = None) -> int:
    value = body.get(name, default)
    if value is None:
        raise InvalidValue(f"pass {name!r} in the request body")
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InvalidValue(f"{name} must be an integer, not {value!r}")
    return _int(str(value), name)


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
            """A JSON error with the CLI's kinds: 4xx for the caller's mistakes, 5xx for ours
            and the journal's (logged)."""
            code, kind = http_status(e)
            message = str(e) or type(e).__name__
            if code >= 500 and not isinstance(e, WorkbenchError):
                self.log.error("lithify handler failed", exc_info=e)
                message = f"internal error: {type(e).__name__}: {e} (see the server log)"
            self.set_status(code)
            self.set_header("Content-Type", "application/json")
            self.finish(json.dumps({"error": " ".join(message.split()), "kind": kind}))

        def reply(self, fn: Any) -> None:
            try:
                result = fn()
            except Exception as e:  # noqa: BLE001 (a JSON error, never a traceback)
                self.fail(e)
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
        """GET ?journal=J&from=REF&to=REF (any two points, across branches: main@40, 3@12,
        a label...), or ?branch=ID&a=N&b=M within one branch: the changes and both states."""

        @web.authenticated
        def get(self) -> None:
            def run() -> Any:
                j = self.journal()
                if self.arg("from") or self.arg("to"):
                    a = j.resolve(self.arg("from") or "head")
                    b = j.resolve(self.arg("to") or "head")
                else:
                    br = j.branch(_int(self.arg("branch"), "branch", 0))
                    hi = _int(self.arg("b"), "b", br.head)
                    a, b = (br.id, _int(self.arg("a"), "a", max(0, hi - 1))), (br.id, hi)
                sa, sb = j.branch(a[0]).at(a[1]), j.branch(b[0]).at(b[1])
                return {
                    "branch": b[0],
                    "a": a[1],
                    "b": b[1],
                    "from": {"branch": a[0], "seq": a[1]},
                    "to": {"branch": b[0], "seq": b[1]},
                    "changes": [c.to_json() for c in diff(sa, sb)],
                    "states": [_plain(encode_state(sa)), _plain(encode_state(sb))],
                }

            self.reply(run)

    class BranchDetail(Base):
        """GET ?journal=J&branch=ID: one branch (params, fork point, head), its run status and
        error, and each metric's last value."""

        @web.authenticated
        def get(self) -> None:
            def run() -> Any:
                j = self.journal()
                b = j.branch(_int(self.arg("branch"), "branch", 0))
                info = b.info.to_json()
                runs = [r for r in j.storage.runs() if r.branch == b.id]
                df = j.matrix(branches=[b.id])
                metrics: dict[str, float] = {}
                for row in df.sort("seq").iter_rows(named=True):
                    metrics[row["metric"]] = row["value"]
                return {
                    **info,
                    "status": runs[0].status if runs else None,
                    "error": json.loads(runs[0].error) if runs and runs[0].error else None,
                    "metrics": metrics,
                }

            self.reply(run)

    class Axes(Base):
        """GET ?journal=J[&sweep=N]: the parameters and metrics the matrix has, and the
        default chart axes (the journal's agent's, when present)."""

        @web.authenticated
        def get(self) -> None:
            def run() -> Any:
                from .matrix import param_columns

                j = self.journal()
                sweep = self.arg("sweep")
                df = j.matrix(sweep=_int(sweep, "sweep") if sweep else None)
                params = param_columns(df)
                metrics = sorted(df["metric"].unique().to_list()) if "metric" in df.columns else []
                agent = plugins.agent_for(j.state_name)
                x = agent.x if agent and agent.x in params else (params[0] if params else None)
                y = agent.y if agent and agent.y in metrics else (metrics[0] if metrics else None)
                color = agent.color if agent and agent.color in params else None
                varied = [p for p in params if df.select(p).drop_nulls().unique().height > 1]
                return {
                    "params": params,
                    "varied": varied,
                    "metrics": metrics,
                    "x": x,
                    "y": y,
                    "color": color,
                    "sweeps": [s.id for s in j.sweeps()],
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

    class Matrix(Helpers):
        """GET ?journal=J[&sweep=N][&format=json|csv|parquet]: the results matrix as JSON rows
        (the default) or as a file download, the same file `lithify matrix -o` writes."""

        @web.authenticated
        def get(self) -> None:
            try:
                sweep = self.arg("sweep")
                fmt = self.arg("format") or "json"
                if fmt not in ("json", "csv", "parquet"):
                    raise InvalidValue(f"format is json, csv or parquet, not {fmt!r}")
                j = self.journal()
                wide = self.arg("wide") in ("1", "true")
                df = j.matrix(sweep=_int(sweep, "sweep") if sweep else None, wide=wide)
                if fmt == "json":
                    self.set_header("Content-Type", "application/json")
                    self.finish(
                        json.dumps(
                            {"columns": df.columns, "rows": [list(r) for r in df.iter_rows()]},
                            default=str,
                        )
                    )
                    return
                import io

                buf = io.BytesIO()
                if fmt == "csv":
                    df.write_csv(buf)
                    self.set_header("Content-Type", "text/csv; charset=utf-8")
                else:
                    df.write_parquet(buf)
                    self.set_header("Content-Type", "application/vnd.apache.parquet")
                stem = Path(j.path).stem if not is_url(j.path) else "journal"
                name = f"{stem}-matrix{'-sweep' + sweep if sweep else ''}.{fmt}"
                self.set_header("Content-Disposition", f'attachment; filename="{name}"')
                self.finish(buf.getvalue())
            except Exception as e:  # noqa: BLE001
                self.fail(e)

    class Chart(Helpers):
        """GET chart.svg|chart.png ?journal=J&x=..&y=..[&color=..&agg=mean|max|last&log_x=1|0
        &sweep=N&theme=light|dark]: the chart, rendered here (defaults: the journal's agent's
        axes; a log x when the parameter spans a factor of 20)."""

        @web.authenticated
        def get(self) -> None:
            try:
                sweep = self.arg("sweep")
                j = self.journal()
                agent = plugins.agent_for(j.state_name)
                y = self.arg("y") or (agent.y if agent else None)
                x = self.arg("x") or (agent.x if agent else None)
                color = self.arg("color") or None
                if color is None and agent is not None and x == agent.x and self.arg("x") is None:
                    color = agent.color
                if not x or not y:
                    raise InvalidValue(
                        "pass ?x=PARAM&y=METRIC (the journal's agent names no defaults)"
                    )
                compare = [v for v in (self.arg("sweeps") or "").split(",") if v.strip()]
                if compare:  # overlay several sweeps: one colour each
                    import polars as pl

                    ids = [_int(v, "sweeps") for v in compare]
                    df = j.matrix(metrics=[y], lineage=True).filter(pl.col("sweep").is_in(ids))
                    df = df.with_columns(pl.format("sweep {}", pl.col("sweep")).alias("sweep"))
                    color = "sweep"
                else:
                    df = j.matrix(sweep=_int(sweep, "sweep") if sweep else None, metrics=[y])
                if df.is_empty():
                    raise NotFound(f"no {y!r} observations yet")
                if self.arg("kind") == "parallel":
                    self.image(charts.parallel(df, y, theme=self.arg("theme") or "light"))
                    return
                if x not in df.columns:
                    params = [c for c in df.columns if c not in MATRIX_FIXED]
                    raise NotFound(
                        f"no parameter {x!r} in the matrix; its parameters are "
                        f"{', '.join(params) or 'none'}"
                    )
                if color is not None and color not in df.columns:
                    color = None  # the agent's colour is not in this sweep: one line
                import polars as pl

                df = df.filter(pl.col(x).is_not_null())
                log_arg = self.arg("log_x")
                log_x = (
                    charts.auto_log_x(df, x) if log_arg in (None, "") else log_arg in ("1", "true")
                )
                spec = charts.metric_vs_param(
                    df,
                    x=x,
                    y=y,
                    color=color,
                    log_x=log_x,
                    agg=self.arg("agg") or "mean",
                    theme=self.arg("theme") or "light",
                ).to_dict()
                self.image(spec)
            except Exception as e:  # noqa: BLE001
                self.fail(e)

        def image(self, chart: Any) -> None:
            import vl_convert as vlc

            spec = chart if isinstance(chart, dict) else chart.to_dict()
            if self.request.path.endswith(".png"):
                self.set_header("Content-Type", "image/png")
                self.finish(vlc.vegalite_to_png(spec, scale=2))
            else:
                self.set_header("Content-Type", "image/svg+xml")
                self.finish(vlc.vegalite_to_svg(spec))

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
                        forks.append(
                            {
                                **f.to_json(),
                                "status": st,
                                "done": done,
                                "total": total,
                                "notebook_rel": self.hub.relative(f.notebook),
                            }
                        )
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
                body = self.body()
                j = self.hub.journal(body.get("journal"))
                agent = plugins.agent_for(j.state_name)
                grid = body.get("grid")
                if (
                    isinstance(grid, str | dict)
                    and not grid
                    or (isinstance(grid, str) and not grid.strip())
                ):
                    raise InvalidValue(
                        "the grid is empty: give at least one NAME=V1,V2 line (or leave the "
                        "field out to use the agent's default grid)"
                    )
                if grid is None:
                    grid = dict(agent.grid) if agent else None
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
                workers = _body_int(body, "workers", 2)
                sweeps.check_options(runner, workers, None)
                plan = sweeps.plan(
                    j,
                    _body_int(body, "branch", 0),
                    _body_int(body, "at"),
                    grid,
                    seeds=_body_int(body, "seeds") if body.get("seeds") else None,
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
                body = self.body()
                j = self.hub.journal(body.get("journal"))
                sweep_id = _body_int(body, "sweep")
                handle = self.hub.sweeps.get((j.path, sweep_id))
                if handle is None or handle.done:
                    raise NotFound(f"sweep {sweep_id} is not running in this server")
                handle.cancel()
                return {"cancelled": sweep_id}

            self.reply(run)

    class Rerun(Base):
        """POST {journal, sweep}: run the sweep's failed forks again, the way it last ran."""

        only: str | None = "failed"

        @web.authenticated
        def post(self) -> None:
            def run() -> Any:
                body = self.body()
                j = self.hub.journal(body.get("journal"))
                sweep_id = _body_int(body, "sweep")
                running = self.hub.sweeps.get((j.path, sweep_id))
                if running is not None and not running.done:
                    raise Conflict(f"sweep {sweep_id} is running; cancel it or wait for it")
                plan = sweeps.load(j, sweep_id)
                recorded = {r.branch: r.status for r in j.storage.runs(sweep_id)}
                wanted = [
                    f.branch
                    for f in plan.forks
                    if (recorded.get(f.branch) == "failed")
                    or (self.only is None and recorded.get(f.branch) != "finished")
                ]
                if not wanted:
                    what = "failed" if self.only else "unfinished"
                    raise NotFound(f"sweep {sweep_id} has no {what} forks")
                handle = sweeps.start(plan, only=wanted)
                self.hub.sweeps[(j.path, sweep_id)] = handle
                return {"sweep": sweep_id, "forks": wanted}

            self.reply(run)

    class Resume(Rerun):
        """POST {journal, sweep}: run every fork that has not finished."""

        only = None

    class Tail(Base):
        """GET ?journal=J&cursor=N[&limit=M]: events after a global cursor, and the new one
        (``cursor=end``: the current end, to start following from)."""

        @web.authenticated
        def get(self) -> None:
            def run() -> Any:
                j = self.journal()
                if self.arg("cursor") == "end":  # where a live view starts: nothing yet
                    return {"cursor": j.storage.top_position(), "events": []}
                cursor = _int(self.arg("cursor"), "cursor", 0)
                limit = min(5000, max(1, _int(self.arg("limit"), "limit", 1000)))
                events, after = j.tail(cursor, limit=limit)
                return {
                    "cursor": after,
                    "events": [{**r.to_json(), "summary": r.summary(100)} for r in events],
                }

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
        ("lithify/api/sweeps/rerun", Rerun, kw),
        ("lithify/api/sweeps/resume", Resume, kw),
        ("lithify/api/tail", Tail, kw),
        ("lithify/api/axes", Axes, kw),
        ("lithify/api/branch", BranchDetail, kw),
        ("lithify/api/chart.png", Chart, kw),
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
