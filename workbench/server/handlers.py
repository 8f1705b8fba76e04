"""The REST handlers under ``/lithify/api/`` (authenticated like every Jupyter route). Each
parses its request, runs one library call on the hub's threads (never on Jupyter's event loop)
and answers with a shape from ``shapes``; errors are ``{error, kind}`` with the CLI's kinds,
4xx for the caller's mistakes, 5xx (logged) for ours. They decide nothing: what a sweep runs
is ``sweep.for_agent``'s, the chart's axes ``charts.default_axes``'."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from jupyter_server.base.handlers import APIHandler
from tornado import web

from .. import charts
from .. import sweep as sweeps
from ..diff import diff
from ..errors import Conflict, InvalidValue, NotFound, WorkbenchError
from ..events import encode_state
from ..journal import Journal
from ..storage import is_url
from ..sweep.cluster import runners_here
from . import shapes
from .hub import Hub


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


class Base(APIHandler):
    """What every lithify handler shares: the hub, JSON errors, the off-loop call."""

    hub: Hub

    def initialize(self, hub: Hub) -> None:
        self.hub = hub

    def fail(self, e: BaseException) -> None:
        """A JSON error with the CLI's kinds: 4xx for the caller's mistakes, 5xx for ours and
        the journal's (logged)."""
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
        if isinstance(result, Download):
            if result.filename:
                self.set_header("Content-Disposition", f'attachment; filename="{result.filename}"')
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

    def journal(self) -> Journal:
        return self.hub.journal(self.arg("journal"))


def _events(records: list[Any]) -> list[shapes.EventJson]:
    return [cast(shapes.EventJson, {**r.to_json(), "summary": r.summary(100)}) for r in records]


class Journals(Base):
    """GET: every journal below the server root (nested folders included), and the runners this
    server has."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.JournalsReply:
            return {
                "root": str(self.hub.root.name),
                "journals": self.hub.list(),  # type: ignore[typeddict-item]
                "runners": runners_here(),
            }

        await self.reply(run)


class Branches(Base):
    """GET ?journal=J: every branch with its parent, fork seq, head, params and run status."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.BranchesReply:
            j = self.journal()
            runs = {r.branch: r.status for r in j.runs()}
            return {
                "branches": [
                    {**b.to_json(), "status": runs.get(b.id)}  # type: ignore[typeddict-item]
                    for b in j.branches()
                ]
            }

        await self.reply(run)


class Events(Base):
    """GET ?journal=J&branch=ID[&offset=N][&limit=M]: a page of a branch's events, resolved
    through its ancestors (at most 500; from seq 1 by default)."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.EventsReply:
            j = self.journal()
            b = j.branch(_int(self.arg("branch"), "branch", 0))
            limit = min(500, max(1, _int(self.arg("limit"), "limit", 100)))
            lo = max(1, _int(self.arg("offset"), "offset", 1))
            hi = min(b.head, lo + limit - 1)
            recs = b.history(lo, hi) if hi >= lo else []
            return {"branch": b.id, "head": b.head, "offset": lo, "events": _events(recs)}

        await self.reply(run)


class State(Base):
    """GET ?journal=J&branch=ID[&seq=N]: the state at an event (default: the head) and its hash."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.StateReply:
            j = self.journal()
            b = j.branch(_int(self.arg("branch"), "branch", 0))
            seq = _int(self.arg("seq"), "seq", b.head)
            return {
                "branch": b.id,
                "seq": seq,
                "hash": j.hash_at(b.id, seq).hex(),
                "state": _plain(encode_state(b.at(seq))),
            }

        await self.reply(run)


class Diff(Base):
    """GET ?journal=J&from=REF&to=REF (any two points, across branches: main@40, 3@12, a
    label...), or ?branch=ID&a=N&b=M within one branch: the changes and both states."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.DiffReply:
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
                "changes": [c.to_json() for c in diff(sa, sb)],  # type: ignore[misc]
                "states": [_plain(encode_state(sa)), _plain(encode_state(sb))],
            }

        await self.reply(run)


class BranchDetail(Base):
    """GET ?journal=J&branch=ID: one branch (params, fork point, head), its run status and
    error, and each metric's last value."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.BranchDetailReply:
            j = self.journal()
            b = j.branch(_int(self.arg("branch"), "branch", 0))
            runs = [r for r in j.runs() if r.branch == b.id]
            df = j.matrix(branches=[b.id])
            metrics: dict[str, float] = {}
            for row in df.sort("seq").iter_rows(named=True):
                metrics[row["metric"]] = row["value"]
            detail = {
                **b.info.to_json(),
                "status": runs[0].status if runs else None,
                "error": json.loads(runs[0].error) if runs and runs[0].error else None,
                "metrics": metrics,
            }
            return cast(shapes.BranchDetailReply, detail)

        await self.reply(run)


class Search(Base):
    """GET ?journal=J&q=TEXT[&branch=ID][&limit=M]: events whose payload matches a full-text
    query, best first (the whole journal, or one branch's history)."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.SearchReply:
            j = self.journal()
            branch = self.arg("branch")
            scope = _int(branch, "branch") if branch else None
            limit = min(500, max(1, _int(self.arg("limit"), "limit", 50)))
            hits = j.search(self.arg("q") or "", branch=scope, limit=limit)
            return {"query": self.arg("q"), "branch": scope, "events": _events(hits)}

        await self.reply(run)


class Tail(Base):
    """GET ?journal=J&cursor=N[&limit=M]: events after a global cursor, and the new one
    (``cursor=end``: the current end, to start following from)."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.TailReply:
            j = self.journal()
            if self.arg("cursor") == "end":  # where a live view starts: nothing yet
                return {"cursor": j.end(), "events": []}
            cursor = _int(self.arg("cursor"), "cursor", 0)
            limit = min(5000, max(1, _int(self.arg("limit"), "limit", 1000)))
            events, after = j.tail(cursor, limit=limit)
            return {"cursor": after, "events": _events(events)}

        await self.reply(run)


# -- results ---------------------------------------------------------------------------------


class Axes(Base):
    """GET ?journal=J[&sweep=N]: the parameters the matrix has (and which of them vary), its
    metrics, the default chart axes (``charts.default_axes``) and the journal's sweeps."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.AxesReply:
            j = self.journal()
            sweep = self.arg("sweep")
            axes = charts.default_axes(j, sweep=_int(sweep, "sweep") if sweep else None)
            return {**axes.to_json(), "sweeps": [s.id for s in j.sweeps()]}  # type: ignore[typeddict-item]

        await self.reply(run)


class Matrix(Base):
    """GET ?journal=J[&sweep=N][&wide=1][&format=json|csv|parquet]: the results matrix as JSON
    rows (the default) or as a file download, the same file `lithify matrix -o` writes."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.MatrixReply | Download:
            sweep = self.arg("sweep")
            fmt = self.arg("format") or "json"
            if fmt not in ("json", "csv", "parquet"):
                raise InvalidValue(f"format is json, csv or parquet, not {fmt!r}")
            j = self.journal()
            wide = self.arg("wide") in ("1", "true")
            df = j.matrix(sweep=_int(sweep, "sweep") if sweep else None, wide=wide)
            if fmt == "json":
                return {"columns": df.columns, "rows": [list(r) for r in df.iter_rows()]}
            buf = io.BytesIO()
            if fmt == "csv":
                df.write_csv(buf)
                mime = "text/csv; charset=utf-8"
            else:
                df.write_parquet(buf)
                mime = "application/vnd.apache.parquet"
            stem = Path(j.path).stem if not is_url(j.path) else "journal"
            name = f"{stem}-matrix{'-sweep' + sweep if sweep else ''}.{fmt}"
            return Download(buf.getvalue(), mime, name)

        await self.reply(run)


class Chart(Base):
    """GET chart.svg|chart.png ?journal=J[&x=..&y=..&color=..&agg=mean|max|last&log_x=1|0
    &sweep=N&sweeps=A,B&kind=parallel&theme=light|dark]: the chart, rendered here (axes not
    given: ``charts.default_axes``; a log x when the parameter spans a factor of 20)."""

    @web.authenticated
    async def get(self) -> None:
        png = self.request.path.endswith(".png")

        def run() -> Download:
            import vl_convert as vlc

            spec = self.spec()
            if png:
                return Download(vlc.vegalite_to_png(spec, scale=2), "image/png")
            return Download(vlc.vegalite_to_svg(spec).encode(), "image/svg+xml")

        await self.reply(run)

    def spec(self) -> dict[str, Any]:
        import polars as pl

        sweep = self.arg("sweep")
        j = self.journal()
        theme = self.arg("theme") or "light"
        color_arg = self.arg("color")
        axes = charts.default_axes(
            j,
            x=self.arg("x") or None,
            y=self.arg("y") or None,
            color=color_arg if color_arg is not None else None,
            sweep=_int(sweep, "sweep") if sweep else None,
        )
        x, y, color = axes.x, axes.y, axes.color
        if not x or not y:
            raise InvalidValue("pass ?x=PARAM&y=METRIC (the journal's agent names no defaults)")
        compare = [v for v in (self.arg("sweeps") or "").split(",") if v.strip()]
        if compare:  # overlay several sweeps: one colour each
            ids = [_int(v, "sweeps") for v in compare]
            df = j.matrix(metrics=[y], lineage=True).filter(pl.col("sweep").is_in(ids))
            df = df.with_columns(pl.format("sweep {}", pl.col("sweep")).alias("sweep"))
            color = "sweep"
        else:
            df = j.matrix(sweep=_int(sweep, "sweep") if sweep else None, metrics=[y])
        if df.is_empty():
            raise NotFound(f"no {y!r} observations yet")
        if self.arg("kind") == "parallel":
            return dict(charts.parallel(df, y, theme=theme).to_dict())
        if x not in df.columns:
            from ..matrix import param_columns

            raise NotFound(
                f"no parameter {x!r} in the matrix; its parameters are "
                f"{', '.join(param_columns(df)) or 'none'}"
            )
        if color is not None and color not in df.columns:
            color = None  # the agent's colour is not in this sweep: one line
        df = df.filter(pl.col(x).is_not_null())
        log_arg = self.arg("log_x")
        log_x = charts.auto_log_x(df, x) if log_arg in (None, "") else log_arg in ("1", "true")
        chart = charts.metric_vs_param(
            df, x=x, y=y, color=color, log_x=log_x, agg=self.arg("agg") or "mean", theme=theme
        )
        return dict(chart.to_dict())


# -- sweeps ----------------------------------------------------------------------------------


class Defaults(Base):
    """GET ?journal=J: what a sweep of this journal runs when the form gives nothing
    (``sweep.defaults``: the agent's grid, runner, template or function, workers)."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.DefaultsReply:
            d = sweeps.defaults(self.journal()).to_json()
            d["notebook"] = self.hub.notebook_name(d["notebook"])
            return d  # type: ignore[return-value]

        await self.reply(run)


class Sweeps(Base):
    """GET ?journal=J: every sweep with each fork's status, progress, metrics, error (cell, name,
    message, traceback tail) and executed notebook. POST {journal, branch, at, grid,
    seeds, workers, runner, notebook, fn, scheduler}: launch one (``sweep.for_agent`` decides
    what is not given)."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.SweepsReply:
            j = self.journal()
            out: list[shapes.SweepJson] = []
            for s in j.sweeps():
                handle = self.hub.sweep(j, s.id)
                progress = handle.progress() if handle is not None else {}
                forks: list[shapes.ForkJson] = []
                for f in sweeps.status(j, s.id):
                    st, done, total = progress.get(f.branch, (f.status, None, None))
                    fork = {
                        **f.to_json(),
                        "status": st,
                        "done": done,
                        "total": total,
                        "notebook_rel": self.hub.relative(f.notebook),
                    }
                    forks.append(cast(shapes.ForkJson, fork))
                out.append(
                    {
                        "id": s.id,
                        "kind": s.spec.get("kind", "grid"),
                        "base": s.base,
                        "at": s.at,
                        "grid": s.spec.get("grid"),
                        "space": s.spec.get("space"),
                        "objectives": s.spec.get("objectives"),
                        "running": handle is not None and not handle.done,
                        "forks": forks,
                    }
                )
            return {"sweeps": out}

        await self.reply(run)

    @web.authenticated
    async def post(self) -> None:
        def run() -> shapes.SweepStarted:
            body = self.body()
            j = self.hub.journal(body.get("journal"))
            notebook = body.get("notebook") or None
            seeds = body.get("seeds")
            workers = body.get("workers")
            launch = sweeps.for_agent(
                j,
                _body_int(body, "at"),
                grid=body.get("grid"),
                runner=body.get("runner") or None,
                fn=body.get("fn") or None,
                notebook=str(self.hub.notebook(notebook)) if notebook else None,
                seeds=_body_int(body, "seeds") if seeds not in (None, "", 0) else None,
                branch=_body_int(body, "branch", 0),
                workers=_body_int(body, "workers") if workers not in (None, "") else None,
                scheduler=body.get("scheduler") or None,
            )
            handle = launch.start()
            self.hub.started(j, handle)
            return {"sweep": handle.plan.id, "forks": [f.branch for f in handle.forks]}

        await self.reply(run)


def _names(body: dict[str, Any], one: str, many: str) -> tuple[Any, Any]:
    """(one, many) from a body that may give either as a string or a list."""
    value = body.get(many) if body.get(many) is not None else body.get(one)
    if value is None or value == "" or value == []:
        return None, None
    if isinstance(value, str):
        return value, None
    if isinstance(value, list) and len(value) == 1:
        return value[0], None
    return None, value


class Optimize(Base):
    """POST {journal, branch, at, space, objective(s), direction(s), forks, workers, sampler,
    pruner, seed, fn, notebook, runner}: start an adaptive sweep (``sweep.start_optimize``
    decides and checks; ``space`` is ``NAME=int:LOW:HIGH`` lines or a list of them). GET
    ?journal=J&sweep=N: the study (trials, best or Pareto front)."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.StudyReply:
            j = self.journal()
            doc = sweeps.result(j, _int(self.arg("sweep"), "sweep")).to_json()
            return cast(shapes.StudyReply, doc)

        await self.reply(run)

    @web.authenticated
    async def post(self) -> None:
        def run() -> shapes.SweepStarted:
            body = self.body()
            j = self.hub.journal(body.get("journal"))
            space = body.get("space")
            if isinstance(space, str):
                space = [line for line in space.replace(";", "\n").splitlines() if line.strip()]
            if not space:
                raise InvalidValue(
                    "pass a space: NAME=int:LOW:HIGH[:log], NAME=float:LOW:HIGH or NAME=cat:A,B "
                    "lines"
                )
            objective, objectives = _names(body, "objective", "objectives")
            direction, directions = _names(body, "direction", "directions")
            notebook = body.get("notebook") or None
            seed, workers = body.get("seed"), body.get("workers")
            handle = sweeps.start_optimize(
                j,
                _body_int(body, "at"),
                space,
                objective,
                direction,
                objectives=objectives,
                directions=directions,
                forks=_body_int(body, "forks", 40),
                workers=_body_int(body, "workers") if workers not in (None, "") else None,
                sampler=body.get("sampler") or "tpe",
                pruner=body.get("pruner") or "median",
                seed=_body_int(body, "seed") if seed not in (None, "") else None,
                fn=body.get("fn") or None,
                notebook=str(self.hub.notebook(notebook)) if notebook else None,
                runner=body.get("runner") or None,
                branch=_body_int(body, "branch", 0),
                scheduler=body.get("scheduler") or None,
            )
            self.hub.started(j, handle)
            return {"sweep": handle.sweep_id, "forks": []}

        await self.reply(run)


class Cancel(Base):
    """POST {journal, sweep}: stop a sweep this server runs: its running forks are stopped, the
    rest skipped."""

    @web.authenticated
    async def post(self) -> None:
        def run() -> shapes.CancelReply:
            body = self.body()
            j = self.hub.journal(body.get("journal"))
            sweep_id = _body_int(body, "sweep")
            handle = self.hub.sweep(j, sweep_id)
            if handle is None or handle.done:
                raise NotFound(f"sweep {sweep_id} is not running in this server")
            handle.cancel()
            return {"cancelled": sweep_id}

        await self.reply(run)


class Rerun(Base):
    """POST {journal, sweep}: run the sweep's failed forks again, the way it last ran."""

    only: str | None = "failed"

    @web.authenticated
    async def post(self) -> None:
        def run() -> shapes.SweepStarted:
            body = self.body()
            j = self.hub.journal(body.get("journal"))
            sweep_id = _body_int(body, "sweep")
            running = self.hub.sweep(j, sweep_id)
            if running is not None and not running.done:
                raise Conflict(f"sweep {sweep_id} is running; cancel it or wait for it")
            kind = next((s.spec.get("kind") for s in j.sweeps() if s.id == sweep_id), None)
            if kind == "optimize":  # a study resumes as a study: unfinished trials, then new
                study = sweeps.start_resume_optimize(j, sweep_id)
                self.hub.started(j, study)
                return {"sweep": sweep_id, "forks": []}
            plan = sweeps.load(j, sweep_id)
            recorded = {r.branch: r.status for r in sweeps.status(j, sweep_id)}
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
            self.hub.started(j, handle)
            return {"sweep": sweep_id, "forks": wanted}

        await self.reply(run)


class Resume(Rerun):
    """POST {journal, sweep}: run every fork that has not finished."""

    only = None


@dataclass(frozen=True)
class Route:
    """One route of the API: its path below ``/lithify/api/``, methods, handler, what it does."""

    path: str
    methods: str
    handler: type[Base]
    doc: str


ROUTES: tuple[Route, ...] = (
    Route("journals", "GET", Journals, "journal files under the server root, and the runners"),
    Route("branches", "GET", Branches, "branches with heads, params and run status"),
    Route("events", "GET", Events, "a page of a branch's events (offset, limit)"),
    Route("state", "GET", State, "the state at an event"),
    Route("diff", "GET", Diff, "what changed between two points (from/to refs, any branches)"),
    Route("search", "GET", Search, "events whose payload matches a query"),
    Route("tail", "GET", Tail, "events after a global cursor (cursor=end to start following)"),
    Route("branch", "GET", BranchDetail, "one branch: params, status, error, last metrics"),
    Route("axes", "GET", Axes, "the matrix's parameters and metrics, and the default axes"),
    Route("matrix", "GET", Matrix, "the results matrix as JSON rows, CSV or Parquet"),
    Route("chart.svg", "GET", Chart, "a chart rendered as SVG (x, y, color, agg, log_x, ...)"),
    Route("chart.png", "GET", Chart, "the same chart as PNG"),
    Route("defaults", "GET", Defaults, "what a sweep of the journal runs when given nothing"),
    Route("sweeps", "GET POST", Sweeps, "sweeps with each fork's status; POST launches one"),
    Route(
        "optimize", "GET POST", Optimize, "a study (trials, best); POST starts an adaptive sweep"
    ),
    Route("sweeps/cancel", "POST", Cancel, "stop a sweep this server runs"),
    Route("sweeps/rerun", "POST", Rerun, "run a sweep's failed forks again"),
    Route("sweeps/resume", "POST", Resume, "run every unfinished fork (a study: and new trials)"),
)


def make_handlers(hub: Hub) -> list[tuple[str, Any, dict[str, Any]]]:
    """The tornado handlers (pattern, class, init kwargs) relative to the base URL."""
    return [(f"lithify/api/{r.path}", r.handler, {"hub": hub}) for r in ROUTES]


__all__ = ["ROUTES", "Download", "Route", "http_status", "make_handlers"]
