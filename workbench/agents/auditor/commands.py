"""The auditor's `lithify` commands: run, status, at, history, fork, sweep, matrix, report,
crash-demo and demo. Thin: parse options, call the library, format."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import typer

from ...cli import app, console, emit, matrix_rows, open_journal, options
from ...errors import InvalidValue, NotFound
from . import agent, logic
from .models import Calls, make_model

BUDGETS = "300,600,1200,2400,4800"


def _branch_opt() -> Any:
    return typer.Option(None, "--branch", help="Branch id or name (default: main).")


def _journal(ctx: typer.Context, must_exist: bool = True, write: bool = False) -> Any:
    opts = options(ctx)
    if opts.raw:
        raise InvalidValue("--raw is for the generic commands (show, diff, log, ...); the auditor's "
                           "commands read its own state: drop --raw")
    return open_journal(opts, logic.AuditState, must_exist=must_exist, write=write)


def _parse_ints(text: str, what: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InvalidValue(f"{what} takes comma-separated integers, like {BUDGETS}") from None
    if not values:
        raise InvalidValue(f"{what} needs at least one value, like {BUDGETS}")
    return values


def _print_run(result: agent.RunResult, title: str) -> None:
    out = console()
    s = result.state
    out.print(f"[bold]{title}[/bold] (branch {result.branch})")
    out.print(
        f"  files {len(s.done)} done, {len(s.pending)} pending; notes {len(s.notes)} "
        f"({s.size()} tokens); budget {s.budget}; compactions {s.compactions}"
    )
    m = result.metrics
    out.print(
        f"  recall {m['recall']:.3f}  precision {m['precision']:.3f}  findings {result.findings}  "
        f"model calls {int(m['model_calls'])}  tokens in {int(m['tokens_in'])}"
    )
    out.print(f"  wall {m['wall_ms']:.1f} ms")


@app.command()
def run(
    ctx: typer.Context,
    repo: Path = typer.Option(None, "--repo", help="Source tree to audit (default: the bundled data/corpus)."),
    branch: str = _branch_opt(),
    budget: int = typer.Option(None, "--budget", help="Context budget in tokens (default 3000 for a new run)."),
    max_files: int = typer.Option(logic.DEFAULT_MAX_FILES, "--max-files", help="Audit at most this many files."),
    model: str = typer.Option("mock", "--model", help="mock or openai (LITHIFY_OPENAI_BASE_URL)."),
    model_name: str = typer.Option(None, "--model-name", help="Model name for --model openai."),
    trace: Path = typer.Option(None, "--trace", help="Append one line per model/tool call to this file."),
) -> None:
    """Run or resume a branch's audit to its report; prints the state, metrics and wall ms."""
    opts = options(ctx)
    calls = Calls(make_model(model, model_name), trace)
    try:
        with _journal(ctx, must_exist=False, write=True) as j:
            b = j.branch(branch) if branch is not None else j.root()
            if repo is not None and b.state().root and os.path.abspath(repo) != b.state().root:
                raise InvalidValue(
                    f"branch {b.id} already audits {b.state().root}; use a new --db for {repo}"
                )
            agent.start(b, repo, budget, max_files)
            result = agent.run(b, calls)
    finally:
        calls.close()
    emit(opts, result.to_json(), lambda: _print_run(result, "audit finished"))


@app.command()
def status(ctx: typer.Context) -> None:
    """Every branch: where it forked, its budget, progress and recall."""
    opts = options(ctx)
    with _journal(ctx) as j:
        wide: dict[int, dict[str, float]] = {}
        for row in j.matrix().iter_rows(named=True):
            wide.setdefault(row["branch"], {})[row["metric"]] = row["value"]
        rows = []
        for info in j.branches():
            s = j.branch(info.id).state()
            rows.append({
                **info.to_json(),
                "files_done": len(s.done),
                "files_pending": len(s.pending),
                "budget": s.budget,
                "finished": s.report is not None,
                "recall": wide.get(info.id, {}).get("recall"),
            })

    def human() -> None:
        from rich.table import Table

        t = Table("branch", "name", "parent", "fork", "head", "budget", "done", "pending", "recall", "status")
        for r in rows:
            rec = "" if r["recall"] is None else f"{r['recall']:.3f}"
            t.add_row(str(r["id"]), r["name"] or "", "" if r["parent"] is None else str(r["parent"]),
                      str(r["fork_seq"]), str(r["head"]), str(r["budget"]), str(r["files_done"]),
                      str(r["files_pending"]), rec, "finished" if r["finished"] else "open")
        console().print(t)

    emit(opts, rows, human)


@app.command()
def at(
    ctx: typer.Context,
    seq: int = typer.Option(..., "--seq", help="Event seq (0 is the initial state)."),
    branch: str = _branch_opt(),
    notes: bool = typer.Option(False, "--notes", help="Print the notes (the agent's context) too."),
) -> None:
    """What the agent knew as of event SEQ."""
    opts = options(ctx)
    with _journal(ctx) as j:
        b = j.branch(branch) if branch is not None else j.root()
        s = b.at(seq)
        h = j.hash_at(b.id, seq).hex()
    doc = {"branch": b.id, "seq": seq, "hash": h, "context_tokens": s.size(), **s.to_json()}

    def human() -> None:
        out = console()
        out.print(f"[bold]branch {b.id} as of seq {seq}[/bold] ({h[:12]})")
        out.print(f"  files done {len(s.done)}, pending {len(s.pending)}; budget {s.budget}")
        out.print(f"  notes {len(s.notes)} ({s.size()} tokens); compactions {s.compactions}; "
                  f"model calls {s.model_calls}; tokens in {s.tokens_in}")
        out.print(f"  report: {'written' if s.report else 'not yet'}")
        if notes:
            for i, n in enumerate(s.notes, 1):
                out.print(f"[dim]--- note {i} ---[/dim]")
                out.print(n, markup=False, end="")

    emit(opts, doc, human)


@app.command()
def history(
    ctx: typer.Context,
    branch: str = _branch_opt(),
    lo: int = typer.Option(1, "--from", help="First seq (inclusive)."),
    hi: int = typer.Option(None, "--to", help="Last seq (inclusive; default the head)."),
) -> None:
    """The events of a branch through its ancestors: seq, branch, kind, hash, description."""
    opts = options(ctx)
    with _journal(ctx) as j:
        b = j.branch(branch) if branch is not None else j.root()
        recs = b.history(lo, hi)
    docs = [{**r.to_json(), "summary": r.summary()} for r in recs]

    def human() -> None:
        out = console()
        for r in recs:
            out.print(f"{r.seq:>6}  b{r.branch:<4} {r.kind:<8} {r.hash[:12]}  {r.summary(90)}", markup=False)

    emit(opts, docs, human)


def _run_fork(base: Any, seq: int, budget: int, calls: Calls) -> agent.RunResult:
    from ...params import check_points, of_function

    check_points([{"budget": budget}], of_function(agent.run_fork), "the auditor's fork")
    f = base.fork_at(seq, params={"budget": budget})
    agent.start(f, budget=budget)
    return agent.run(f, calls)


@app.command()
def fork(
    ctx: typer.Context,
    seq: int = typer.Option(..., "--at", help="Fork at this event seq."),
    budget: int = typer.Option(..., "--budget", help="The fork's context budget in tokens."),
    branch: str = _branch_opt(),
    model: str = typer.Option("mock", "--model", help="mock or openai."),
    trace: Path = typer.Option(None, "--trace", help="Append one line per call to this file."),
) -> None:
    """Fork a branch at an event with another budget and run the fork to its report."""
    opts = options(ctx)
    calls = Calls(make_model(model), trace)
    try:
        with _journal(ctx, write=True) as j:
            base = j.branch(branch) if branch is not None else j.root()
            result = _run_fork(base, seq, budget, calls)
    finally:
        calls.close()
    doc = {**result.to_json(), "parent": base.id, "fork_seq": seq}
    emit(opts, doc, lambda: _print_run(result, f"fork of branch {base.id} at seq {seq}"))


def _grid(params: list[str], budgets: str | None) -> dict[str, list[Any]]:
    from ...sweep import parse_grid

    grid = parse_grid("\n".join(params)) if params else {}
    if budgets is not None and "budget" in grid:
        raise InvalidValue("--budgets and --param budget=... both set the budgets; give one of them")
    if budgets is not None or not grid:
        grid["budget"] = _parse_ints(budgets or BUDGETS, "--budgets")
    return grid


@app.command()
def sweep(
    ctx: typer.Context,
    seq: int = typer.Option(..., "--at", help="Fork every run at this event seq."),
    param: list[str] = typer.Option([], "--param", help="NAME=V1,V2,... (repeat for a grid)."),
    budgets: str = typer.Option(None, "--budgets", help=f"Shorthand for --param budget=... (default {BUDGETS})."),
    seeds: int = typer.Option(None, "--seeds", help="Add a seed parameter 0..N-1 to every grid point."),
    notebook: Path = typer.Option(None, "--notebook", help="Template notebook to run per fork (papermill)."),
    runner: str = typer.Option(None, "--runner", help="papermill, warm or process (default: papermill with "
                                                      "--notebook, else process)."),
    workers: int = typer.Option(4, "--workers", help="Forks run in parallel."),
    timeout: float = typer.Option(None, "--timeout", help="Seconds a fork may run."),
    branch: str = _branch_opt(),
) -> None:
    """Fork one branch per grid point at an event, run them in parallel, print the sweep's matrix rows."""
    from ... import sweep as sweeps

    opts = options(ctx)
    grid = _grid(param, budgets)
    chosen = runner or ("papermill" if notebook else "process")
    sweeps.check_options(chosen, workers, timeout)
    if chosen != "process" and notebook is None:
        raise InvalidValue(f"--runner {chosen} runs a template notebook: pass --notebook")
    with _journal(ctx, write=True) as j:
        base = j.branch(branch) if branch is not None else j.root()
        plan = sweeps.plan(j, base.id, seq, grid, seeds=seeds, notebook=notebook,
                           fn=None if notebook else "workbench.agents.auditor:run_fork")
        result = sweeps.run(plan, workers=workers, runner=chosen, timeout=timeout, progress=not opts.json)
        df = j.matrix(sweep=plan.id)
    _emit_sweep(opts, result, df)


def _emit_sweep(opts: Any, result: Any, df: Any) -> None:
    def human() -> None:
        console().print(str(result), markup=False)

    emit(opts, matrix_rows(df), human)
    if not result.ok:
        raise typer.Exit(1)


@app.command("sweeps")
def sweeps_cmd(ctx: typer.Context) -> None:
    """Every recorded sweep: base, fork point, grid and how many forks finished."""
    opts = options(ctx)
    with _journal(ctx) as j:
        rows = []
        for s in j.sweeps():
            runs = {r.branch: r.status for r in j.storage.runs(s.id)}
            counts = {st: sum(v == st for v in runs.values()) for st in ("finished", "failed", "running", "cancelled")}
            counts["pending"] = len(s.branches) - sum(counts.values())
            rows.append({"id": s.id, "base": s.base, "at": s.at, "grid": s.spec.get("grid"),
                         "seeds": s.spec.get("seeds"), "notebook": s.spec.get("notebook"), "forks": len(s.branches),
                         "branches": s.branches, **counts})

    def human() -> None:
        from rich.table import Table

        t = Table("sweep", "base", "at", "grid", "forks", "finished", "failed", "other")
        for r in rows:
            t.add_row(str(r["id"]), str(r["base"]), str(r["at"]), json.dumps(r["grid"]), str(r["forks"]),
                      str(r["finished"]), str(r["failed"]), str(r["forks"] - r["finished"] - r["failed"]))
        console().print(t)

    emit(opts, rows, human)


@app.command("sweep-resume")
def sweep_resume(
    ctx: typer.Context,
    sweep_id: int = typer.Argument(..., help="The sweep to finish (see `lithify sweeps`)."),
    workers: int = typer.Option(4, "--workers", help="Forks run in parallel."),
    runner: str = typer.Option(None, "--runner", help="papermill, warm or process (default: as planned)."),
    only_failed: bool = typer.Option(False, "--failed", help="Rerun only the failed forks."),
) -> None:
    """Run the forks of a sweep that have not finished (after a crash, a cancel or a fix)."""
    from ... import sweep as sweeps

    opts = options(ctx)
    if runner is not None:
        sweeps.check_options(runner, workers, None)
    with _journal(ctx, write=True) as j:
        plan = sweeps.load(j, sweep_id)
        chosen = runner or ("process" if plan.fn else "papermill")
        result = sweeps.run(plan, workers=workers, runner=chosen, only="failed" if only_failed else None,
                            progress=not opts.json)
        df = j.matrix(sweep=sweep_id)
    _emit_sweep(opts, result, df)


@app.command()
def report(ctx: typer.Context, branch: str = _branch_opt()) -> None:
    """The audit report a branch wrote."""
    opts = options(ctx)
    with _journal(ctx) as j:
        b = j.branch(branch) if branch is not None else j.root()
        text = b.state().report
    if text is None:
        raise NotFound(f"branch {b.id} has no report yet; finish it with `lithify run --branch {b.id}`")
    emit(opts, {"branch": b.id, "report": text}, lambda: sys.stdout.write(text))


def crash_demo_run(
    db: str, repo: Path, kills: int, budget: int, max_files: int, interval_ms: int, trace: Path,
    seed: int | None = None, slow_ms: int = 20,
) -> dict[str, Any]:
    """Run the auditor as a child process, SIGKILL it ``kills`` times mid-work, then finish."""
    from ...journal import Journal

    rng = random.Random(seed)
    with Journal.open(db, logic.AuditState) as j:
        if j.root().state().root:
            raise InvalidValue(f"{db} already holds an audit; crash-demo needs a fresh --db")
    env = {**os.environ, "AUDITOR_SLOW_MS": str(slow_ms)}
    cmd = [sys.executable, "-m", "workbench", "--db", db, "run", "--repo", str(repo),
           "--budget", str(budget), "--max-files", str(max_files), "--trace", str(trace)]
    landed = []
    for _ in range(kills):
        before = trace.stat().st_size if trace.exists() else 0
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while (not trace.exists() or trace.stat().st_size <= before) and p.poll() is None:
            if time.monotonic() > deadline:
                p.kill()
                raise RuntimeError("the audit child made no call within 60 s")
            time.sleep(0.002)
        if p.poll() is not None:  # finished before this kill could land
            break
        time.sleep(rng.uniform(0.2, 1.8) * interval_ms / 1000)
        p.send_signal(signal.SIGKILL)
        p.wait()
        with Journal.open(db, logic.AuditState) as j:
            root = j.root()
            landed.append({"seq": root.head, "in_flight": root.unknown_outcomes()})
    calls = Calls(make_model("mock"), trace, slow_ms=0)
    try:
        with Journal.open(db, logic.AuditState) as j:
            root = j.root()
            agent.start(root, repo, budget, max_files)
            result = agent.run(root, calls)
            counts = agent.rerun_counts(root, trace.read_text())
            ok = j.verify().ok
    finally:
        calls.close()
    return {"kills": len(landed), "killed_at": landed, **counts, "verified": ok,
            "metrics": result.to_json()}


@app.command("crash-demo")
def crash_demo(
    ctx: typer.Context,
    repo: Path = typer.Option(None, "--repo", help="Source tree (default: the bundled data/corpus)."),
    kills: int = typer.Option(8, "--kills", help="How many times to SIGKILL the agent."),
    budget: int = typer.Option(logic.DEFAULT_BUDGET, "--budget", help="Context budget in tokens."),
    max_files: int = typer.Option(logic.DEFAULT_MAX_FILES, "--max-files", help="Audit at most this many files."),
    interval_ms: int = typer.Option(150, "--interval-ms", help="Mean time from the child's first call to the kill."),
    trace: Path = typer.Option(None, "--trace", help="Trace file (default: beside the journal)."),
    seed: int = typer.Option(None, "--seed", help="Seed the kill times."),
) -> None:
    """Kill the agent at random moments mid-work, finish the run, count re-executed calls."""
    opts = options(ctx)
    if kills < 0 or interval_ms < 0:
        raise InvalidValue("--kills and --interval-ms must be >= 0")
    repo = repo or agent.bundled_corpus()
    trace = trace or Path(opts.db).with_suffix(".trace.txt")
    doc = crash_demo_run(opts.db, repo, kills, budget, max_files, interval_ms, trace, seed)

    def human() -> None:
        out = console()
        out.print(f"[bold]crash demo[/bold]: {doc['kills']} SIGKILLs, then finished")
        for k in doc["killed_at"]:
            out.print(f"  killed at seq {k['seq']}; in flight: {', '.join(k['in_flight']) or 'nothing'}")
        out.print(f"  model calls {doc['model_calls']} ({doc['model_calls_rerun']} ran twice), "
                  f"tool calls {doc['tool_calls']} ({doc['tool_calls_rerun']} ran twice)")
        out.print(f"  journal verified: {doc['verified']}; recall {doc['metrics']['recall']:.3f}")
        out.print(f"  trace: {trace}")

    emit(opts, doc, human)


@app.command()
def demo(
    ctx: typer.Context,
    out: Path = typer.Option(None, "--out", help="Directory to create (default: lithify-demo-TIMESTAMP)."),
    seed: int = typer.Option(7, "--seed", help="Seed the kill times."),
) -> None:
    """The pitch in one minute on the bundled data: crash, time travel, fork a sweep, chart it."""
    from .demo import run_demo

    opts = options(ctx)
    doc = run_demo(out, seed, quiet=opts.json)
    if opts.json:
        emit(opts, doc, lambda: None)
