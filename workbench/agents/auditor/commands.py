"""The auditor's own `lithify` commands: run, status, at, fork, report, crash-demo and demo,
added by the auditor plugin (``register``). Thin: parse options, call the library, format."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import typer

from ...cli.app import GLOBAL_HELP, console, emit, open_journal, options, point
from ...errors import InvalidValue, NotFound
from ...outcome import is_partial, state_of
from ...params import check_points, of_function
from . import agent, logic
from .crash import crash_demo_run
from .demo import run_demo
from .models import Calls, make_model


def _branch_opt() -> Any:
    return typer.Option(None, "--branch", help="Branch id or name (default: main).")


def _journal(ctx: typer.Context, must_exist: bool = True, write: bool = False) -> Any:
    opts = options(ctx)
    if opts.raw:
        raise InvalidValue(
            "--raw is for the generic commands (show, diff, log, ...); the auditor's "
            "commands read its own state: drop --raw"
        )
    return open_journal(opts, logic.AuditState, must_exist=must_exist, write=write)


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


def run(
    ctx: typer.Context,
    repo: Path = typer.Option(
        None, "--repo", help="Source tree to audit (default: the bundled demo corpus)."
    ),
    branch: str = _branch_opt(),
    budget: int = typer.Option(
        None, "--budget", help="Context budget in tokens (default 3000 for a new run)."
    ),
    max_files: int = typer.Option(
        logic.DEFAULT_MAX_FILES, "--max-files", help="Audit at most this many files."
    ),
    model: str = typer.Option("mock", "--model", help="mock or openai (LITHIFY_OPENAI_BASE_URL)."),
    model_name: str = typer.Option(None, "--model-name", help="Model name for --model openai."),
    trace: Path = typer.Option(
        None, "--trace", help="Append one line per model/tool call to this file."
    ),
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


def status(ctx: typer.Context) -> None:
    """Every branch: where it forked, its budget, progress and recall."""
    opts = options(ctx)
    with _journal(ctx) as j:
        wide: dict[int, dict[str, float]] = {}
        for row in j.matrix().iter_rows(named=True):
            wide.setdefault(row["branch"], {})[row["metric"]] = row["value"]
        runs = {r.branch: r.status for r in j.runs()}
        rows = []
        for info in j.branches():
            s = j.branch(info.id).state()
            state = state_of(runs.get(info.id))  # a sweep's fork: how its run ended
            rows.append(
                {
                    **info.to_json(),
                    "files_done": len(s.done),
                    "files_pending": len(s.pending),
                    "budget": s.budget,
                    "finished": s.report is not None,
                    "recall": wide.get(info.id, {}).get("recall"),
                    "state": state or ("finished" if s.report is not None else "open"),
                    "partial": is_partial(state),
                }
            )

    def human() -> None:
        from rich.table import Table

        t = Table(
            "branch",
            "name",
            "parent",
            "fork",
            "head",
            "budget",
            "done",
            "pending",
            "recall",
            "status",
        )
        for r in rows:
            rec = "" if r["recall"] is None else f"{r['recall']:.3f}"
            rec += " (partial)" if rec and r["partial"] else ""
            t.add_row(
                str(r["id"]),
                r["name"] or "",
                "" if r["parent"] is None else str(r["parent"]),
                str(r["fork_seq"]),
                str(r["head"]),
                str(r["budget"]),
                str(r["files_done"]),
                str(r["files_pending"]),
                rec,
                r["state"],
            )
        console().print(t)

    emit(opts, rows, human)


def at(
    ctx: typer.Context,
    ref: str = typer.Option(
        ..., "--seq", help="Event: a seq (0 is the initial state) or a ref (main@40, head~3)."
    ),
    branch: str = _branch_opt(),
    notes: bool = typer.Option(False, "--notes", help="Print the notes (the agent's context) too."),
) -> None:
    """What the agent knew as of an event."""
    opts = options(ctx)
    with _journal(ctx) as j:
        bid, seq = point(j, ref, branch)
        b = j.branch(bid)
        s = b.at(seq)
        h = j.hash_at(b.id, seq).hex()
    doc = {"branch": b.id, "seq": seq, "hash": h, "context_tokens": s.size(), **s.to_json()}

    def human() -> None:
        out = console()
        out.print(f"[bold]branch {b.id} as of seq {seq}[/bold] ({h[:12]})")
        out.print(f"  files done {len(s.done)}, pending {len(s.pending)}; budget {s.budget}")
        out.print(
            f"  notes {len(s.notes)} ({s.size()} tokens); compactions {s.compactions}; "
            f"model calls {s.model_calls}; tokens in {s.tokens_in}"
        )
        out.print(f"  report: {'written' if s.report else 'not yet'}")
        if notes:
            for i, n in enumerate(s.notes, 1):
                out.print(f"[dim]--- note {i} ---[/dim]")
                out.print(n, markup=False, end="")

    emit(opts, doc, human)


def _run_fork(base: Any, seq: int, budget: int, calls: Calls) -> agent.RunResult:
    check_points([{"budget": budget}], of_function(agent.run_fork), "the auditor's fork")
    f = base.fork_at(seq, params={"budget": budget})
    agent.start(f, budget=budget)
    return agent.run(f, calls)


def fork(
    ctx: typer.Context,
    at: str = typer.Option(..., "--at", help="Fork at this event: a seq or a ref (head~3)."),
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
            bid, seq = point(j, at, branch)
            base = j.branch(bid)
            result = _run_fork(base, seq, budget, calls)
    finally:
        calls.close()
    doc = {**result.to_json(), "parent": base.id, "fork_seq": seq}
    emit(opts, doc, lambda: _print_run(result, f"fork of branch {base.id} at seq {seq}"))


def report(ctx: typer.Context, branch: str = _branch_opt()) -> None:
    """The audit report a branch wrote."""
    opts = options(ctx)
    with _journal(ctx) as j:
        b = j.branch(branch) if branch is not None else j.root()
        text = b.state().report
    if text is None:
        raise NotFound(
            f"branch {b.id} has no report yet; finish it with `lithify run --branch {b.id}`"
        )
    emit(opts, {"branch": b.id, "report": text}, lambda: sys.stdout.write(text))


def crash_demo(
    ctx: typer.Context,
    repo: Path = typer.Option(
        None, "--repo", help="Source tree (default: the bundled demo corpus)."
    ),
    kills: int = typer.Option(8, "--kills", help="How many times to SIGKILL the agent."),
    budget: int = typer.Option(logic.DEFAULT_BUDGET, "--budget", help="Context budget in tokens."),
    max_files: int = typer.Option(
        logic.DEFAULT_MAX_FILES, "--max-files", help="Audit at most this many files."
    ),
    interval_ms: int = typer.Option(
        150, "--interval-ms", help="Mean time from the child's first call to the kill."
    ),
    trace: Path = typer.Option(None, "--trace", help="Trace file (default: beside the journal)."),
    seed: int = typer.Option(None, "--seed", help="Seed the kill times."),
) -> None:
    """Kill the agent at random moments mid-work, finish the run, count re-executed calls."""
    opts = options(ctx)
    if kills < 0 or interval_ms < 0:
        raise InvalidValue("--kills and --interval-ms must be >= 0")
    repo = repo or agent.bundled_corpus()
    trace = trace or Path(opts.path).with_suffix(".trace.txt")
    doc = crash_demo_run(opts.path, repo, kills, budget, max_files, interval_ms, trace, seed)

    def human() -> None:
        out = console()
        out.print(f"[bold]crash demo[/bold]: {doc['kills']} SIGKILLs, then finished")
        for k in doc["killed_at"]:
            out.print(
                f"  killed at seq {k['seq']}; in flight: {', '.join(k['in_flight']) or 'nothing'}"
            )
        out.print(
            f"  model calls {doc['model_calls']} ({doc['model_calls_rerun']} ran twice), "
            f"tool calls {doc['tool_calls']} ({doc['tool_calls_rerun']} ran twice)"
        )
        out.print(f"  journal verified: {doc['verified']}; recall {doc['metrics']['recall']:.3f}")
        out.print(f"  trace: {trace}")

    emit(opts, doc, human)


def demo(
    ctx: typer.Context,
    out: Path = typer.Option(
        None, "--out", help="Directory to create (default: lithify-demo-TIMESTAMP)."
    ),
    repo: Path = typer.Option(
        None, "--repo", help="Source tree to audit (default: the bundled demo corpus)."
    ),
    model: str = typer.Option(
        "mock", "--model", help="mock, openai or openai:MODEL (LITHIFY_OPENAI_BASE_URL)."
    ),
    seed: int = typer.Option(7, "--seed", help="Seed the kill times."),
) -> None:
    """The pitch in one minute on the bundled data: crash, time travel, fork a sweep, chart it.
    Works from any folder; a demo that fails leaves nothing behind."""
    opts = options(ctx)
    doc = run_demo(out, seed, quiet=opts.json, repo=repo, model=model)
    if opts.json:
        emit(opts, doc, lambda: None)


def register(app: typer.Typer) -> None:
    """Add the auditor's commands to the ``lithify`` app (the plugin's ``commands`` hook)."""
    for command in (run, status, at, fork, report, demo):
        app.command(rich_help_panel="Auditor (the bundled agent)", epilog=GLOBAL_HELP)(command)
    app.command("crash-demo", rich_help_panel="Auditor (the bundled agent)", epilog=GLOBAL_HELP)(
        crash_demo
    )
