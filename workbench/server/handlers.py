"""The REST handlers under ``/lithify/api/`` (authenticated like every Jupyter route). Each
parses its request, runs one library call on the hub's threads (never on Jupyter's event loop)
and answers with a shape from ``shapes``; errors are ``{error, kind}`` with the CLI's kinds,
4xx for the caller's mistakes, 5xx (logged) for ours. They decide nothing: what a sweep runs
is ``sweep.for_agent``'s, the chart's axes ``charts.default_axes``'."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from tornado import web

from .. import sweep as sweeps
from ..diff import diff
from ..errors import Conflict, InvalidValue, NotFound
from ..events import encode_state
from ..sweep import watch
from ..sweep.plan import planned_forks
from ..sweep.runners import runners_here
from . import shapes
from .annotations import ArtifactFile, Note
from .base import Base, Download, _body_int, _int, _plain, http_status
from .hub import Hub
from .results import Axes, Chart, Filter, Matrix, Studies


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
                "open": self.hub.open,
                "session": self.hub.session,
            }

        await self.reply(run)


class Branches(Base):
    """GET ?journal=J: every branch with its parent, fork seq, head, params and run status, and
    every sweep at a glance (kind, planned and present forks, counts by status, state)."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.BranchesReply:
            j = self.journal()
            runs = {r.branch: r.status for r in j.runs()}
            hows = {s.id: s.how for s in j.sweeps()}
            glance = []
            for summary in sweeps.summaries(j):
                doc = summary.to_json()
                how = hows.get(summary.id, {})
                doc["state"] = self.shown_state(j, summary.id, how, doc["state"])
                glance.append(doc)
            return {
                "branches": [
                    {**b.to_json(), "status": runs.get(b.id)}  # type: ignore[typeddict-item]
                    for b in j.branches()
                ],
                "sweeps": glance,  # type: ignore[typeddict-item]
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
    error, each metric's last value, and its notes and artifacts."""

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
                "notes": [n.to_json() for n in b.notes()],
                "artifacts": [a.to_json() for a in b.artifacts()],
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


class Version(Base):
    """GET ?journal=J: a token that changes whenever an event, a run record or a branch of the
    journal does (``Hub.version``): a live view polls it and reads the rest only when it
    changed, so an idle page costs the server next to nothing."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.VersionReply:
            j = self.journal()
            return {"version": self.hub.version(j)}

        await self.reply(run)


# -- sweeps ----------------------------------------------------------------------------------


class Defaults(Base):
    """GET ?journal=J: what a sweep of this journal runs when the form gives nothing
    (``sweep.defaults``: the agent's grid, runner, template or function, workers), and what an
    optimize form starts from (``study``: ``sweep.study_defaults``, with the samplers, pruners
    and directions to offer)."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.DefaultsReply:
            j = self.journal()
            d = sweeps.defaults(j).to_json()
            d["notebook"] = self.hub.notebook_name(d["notebook"])
            d["study"] = sweeps.study_defaults(j).to_json()
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
                running = self.live(j, s.id, s.how)
                statuses = {f["branch"]: f["status"] for f in forks}
                out.append(
                    {
                        "id": s.id,
                        "kind": s.spec.get("kind", "grid"),
                        "base": s.base,
                        "at": s.at,
                        "grid": s.spec.get("grid"),
                        "space": s.spec.get("space"),
                        "objectives": s.spec.get("objectives"),
                        "planned": max(len(forks), planned_forks(s)),
                        "running": running,
                        "resume": "it is running" if running else watch.resumable(s, statuses),
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
    """POST {journal, sweep}: stop a sweep: its running forks are stopped, the rest skipped.
    One this server runs is cancelled at once; one another process runs (``lithify optimize``
    in a terminal) is asked to through the journal (``sweep.watch``), and stops within
    seconds."""

    @web.authenticated
    async def post(self) -> None:
        def run() -> shapes.CancelReply:
            body = self.body()
            j = self.hub.journal(body.get("journal"))
            sweep_id = _body_int(body, "sweep")
            handle = self.hub.sweep(j, sweep_id)
            if handle is not None and not handle.done:
                handle.cancel()
            elif not watch.request_cancel(j, sweep_id):
                raise NotFound(f"sweep {sweep_id} is not running")
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
            watch.check_idle(j, sweep_id)  # nor in another process (a terminal's study)
            kind = next((s.spec.get("kind") for s in j.sweeps() if s.id == sweep_id), None)
            if kind == "optimize":  # a study resumes as a study: unfinished trials, then new
                study = sweeps.start_resume_optimize(j, sweep_id)
                self.hub.started(j, study)
                return {"sweep": sweep_id, "forks": []}
            if kind == "evolve" and self.only is None:  # its paused members must stay paused
                raise InvalidValue(
                    f"sweep {sweep_id} is an evolution: resume it as one, with "
                    f"`lithify evolve --resume {sweep_id}` (sweep.evolve(journal, resume="
                    f"{sweep_id}))"
                )
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
    Route("version", "GET", Version, "a token that changes whenever the journal does"),
    Route("branch", "GET", BranchDetail, "one branch: params, status, metrics, notes, artifacts"),
    Route("note", "POST", Note, "journal a note on a branch (not on a fork that is running)"),
    Route("artifact", "GET", ArtifactFile, "an artifact's bytes, checked against their digest"),
    Route("axes", "GET", Axes, "the matrix's parameters and metrics, and the default axes"),
    Route("matrix", "GET", Matrix, "the results matrix as JSON rows, CSV or Parquet"),
    Route("chart.json", "GET", Chart, "a results view as a Vega-Lite spec, data inline"),
    Route("filter", "GET", Filter, "the branches a filter expression selects"),
    Route("chart.svg", "GET", Chart, "a view rendered as SVG (kind, x, y, color, agg, ...)"),
    Route("chart.png", "GET", Chart, "the same chart as PNG"),
    Route("defaults", "GET", Defaults, "what a sweep of the journal runs when given nothing"),
    Route("sweeps", "GET POST", Sweeps, "sweeps with each fork's status; POST launches one"),
    Route("studies", "GET", Studies, "every sweep and study at a glance: best, counts, times"),
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
