"""`lithify demo`: the whole pitch on the bundled data, into a fresh directory.

1. run the auditor as a child process and SIGKILL it four times mid-work, then finish;
2. show the state as of event 40, with its notes;
3. show the first events with their hashes;
4. fork five budgets nineteen files in and run them (recall per budget);
5. write the matrix as CSV and a recall-vs-budget chart as PNG.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from ...errors import InvalidValue
from ...journal import Journal
from . import agent, logic
from .crash import crash_demo_run
from .models import Calls, make_model

BUDGETS = [300, 600, 1200, 2400, 4800]
FILES_IN = 19


def _target(out: Path | None) -> Path:
    """Where the demo's results go: a fresh directory (checked before anything runs)."""
    if out is None:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        out = Path(f"lithify-demo-{stamp}")
        n = 1
        while out.exists():
            n += 1
            out = Path(f"lithify-demo-{stamp}-{n}")
    if out.exists() and not out.is_dir():
        raise InvalidValue(f"--out {out} is a file; give a directory to create")
    if out.exists() and any(out.iterdir()):
        raise InvalidValue(f"{out} exists and is not empty; the demo writes into a fresh directory")
    parent = out.resolve().parent
    if not parent.is_dir():
        raise InvalidValue(f"the folder {parent} does not exist; create it or pick another --out")
    if not os.access(parent, os.W_OK):
        raise InvalidValue(f"cannot write in {parent}; pick another --out")
    return out


def shell_command() -> str:
    """How to call lithify in the user's shell: ``lithify`` when that is this installation,
    else the path of this environment's script (a venv that was never activated)."""
    script = Path(sys.executable).parent / "lithify"
    found = shutil.which("lithify")
    if found and script.exists() and Path(found).resolve() == script.resolve():
        return "lithify"
    if script.exists():
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m workbench"


def run_demo(
    out: Path | None = None,
    seed: int = 7,
    quiet: bool = False,
    repo: Path | None = None,
    model: str = "mock",
) -> dict[str, Any]:
    """Run the demo; returns what it made (paths and numbers) as a JSON-ready dict. Everything
    is built in a scratch directory beside ``out`` and moved into place at the end: a demo
    that fails (or is interrupted) leaves nothing behind."""
    target = _target(out)
    source = Path(repo) if repo is not None else agent.bundled_corpus()
    if not source.is_dir():
        raise InvalidValue(f"--repo {source} is not a directory")
    make_model(*_model_spec(model))  # a bad --model is an error before anything is written
    parent = target.resolve().parent
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=parent))
    umask = os.umask(0)
    os.umask(umask)
    scratch.chmod(0o777 & ~umask)  # mkdtemp makes it private; the result is an ordinary folder
    try:
        doc = _run(scratch, target, seed, quiet, source, model)
        if target.exists():
            target.rmdir()  # it was empty (checked above)
        scratch.rename(target)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return doc


def _model_spec(model: str) -> tuple[str, str | None]:
    """``mock``, ``openai`` or ``openai:MODEL`` -> (backend, model name)."""
    name, _, model_name = model.partition(":")
    return name, model_name or None


def _run(work: Path, final: Path, seed: int, quiet: bool, repo: Path, model: str) -> dict[str, Any]:
    from rich.console import Console

    # Not a terminal: no colour, and lines are never wrapped mid-word.
    con = Console(quiet=quiet, highlight=False, soft_wrap=not sys.stdout.isatty())
    t0 = time.perf_counter()
    db, trace = work / "demo.db", work / "trace.txt"
    backend, model_name = _model_spec(model)
    con.rule("[bold]1. crash: SIGKILL the agent four times mid-work, then finish")
    crash = crash_demo_run(
        str(db),
        repo,
        4,
        logic.DEFAULT_BUDGET,
        logic.DEFAULT_MAX_FILES,
        150,
        trace,
        seed,
        model=model,
    )
    for k in crash["killed_at"]:
        con.print(
            f"  killed at seq {k['seq']:>4}; call in flight: {', '.join(k['in_flight']) or 'none'}"
        )
    con.print(
        f"  finished: {crash['metrics']['files']} files, recall {crash['metrics']['recall']:.3f}; "
        f"re-executed after the kills: {crash['model_calls_rerun']} model calls, "
        f"{crash['tool_calls_rerun']} tool calls (of {crash['model_calls']} and "
        f"{crash['tool_calls']})"
    )
    con.print(f"  journal verifies: {crash['verified']}")

    with Journal.open(db, logic.AuditState) as j:
        root = j.root()
        con.rule("[bold]2. time travel: what the agent knew as of event 40")
        s40 = root.at(40)
        con.print(
            f"  {len(s40.done)} files done, {len(s40.pending)} pending, {len(s40.notes)} notes "
            f"({s40.size()} tokens), {s40.model_calls} model calls so far"
        )
        for note in s40.notes:
            con.print("  | " + note.rstrip("\n").replace("\n", "\n  | "), markup=False)

        con.rule("[bold]3. the first events, content-addressed")
        first = root.history(1, 12)
        for r in first:
            con.print(f"  {r.seq:>3}  {r.kind:<7} {r.hash[:12]}  {r.summary(70)}", markup=False)

        con.rule(f"[bold]4. fork a sweep {FILES_IN} files in: five budgets")
        at = agent.fork_seq_after_files(root, FILES_IN)
        # run here, one fork after another; recorded as what resumes it: the process runner
        how = {"runner": "process", "fn": "workbench.agents.auditor:run_fork", "workers": 1}
        forks = j.sweep(
            root,
            at,
            [{"budget": b} for b in BUDGETS],
            spec={"grid": {"budget": BUDGETS}},
            how=how,
        )
        sweep_id = forks[0].info.sweep
        assert sweep_id is not None
        calls = Calls(make_model(backend, model_name), trace)
        recall: dict[int, float] = {}
        try:
            for f in forks:
                budget = f.params["budget"]
                started = time.time()
                j.record_run(
                    f.id, sweep_id, "running", runner="in-process", started=int(started * 1000)
                )
                agent.start(f, budget=budget)
                res = agent.run(f, calls)
                j.record_run(
                    f.id,
                    sweep_id,
                    "finished",
                    finished=int(time.time() * 1000),
                    wall_ms=(time.time() - started) * 1000,
                )
                recall[budget] = res.metrics["recall"]
                con.print(
                    f"  budget {budget:>5}  branch {f.id}  recall {res.metrics['recall']:.3f}  "
                    f"compactions {int(res.metrics['compactions'])}  findings {res.findings}"
                )
        finally:
            calls.close()
        con.print(
            f"  every fork inherited the first {at} events: no call before seq {at} ran again"
        )

        con.rule("[bold]5. results for the paper")
        from ... import charts  # altair: imported only when the demo draws

        df = j.matrix()  # what `lithify matrix` writes, byte for byte
        csv = work / "matrix.csv"
        df.write_csv(csv)
        sweep_rows = df.filter(df["branch"].is_in([f.id for f in forks]))
        png = work / "recall_vs_budget.png"
        charts.save(
            charts.metric_vs_param(
                sweep_rows,
                x="budget",
                y="recall",
                log_x=True,
                title="Recall vs context budget (fork at 19 files)",
            ),
            png,
        )
        # the paths the user will find (the files move there when the demo is done)
        csv, png, db, trace = (final / p.name for p in (csv, png, db, trace))
        con.print(f"  matrix: {csv} ({len(df)} rows)")
        con.print(f"  chart:  {png}")
        con.print(f"  journal: {db}   trace: {trace}")
        cmd = f"{shell_command()} --db {shlex.quote(str(db))}"
        con.print(f"  try: {cmd} history --to 12", markup=False)
        con.print(f"       {cmd} at --seq 40 --notes", markup=False)
        con.print(f"       {shell_command()} lab {shlex.quote(str(db))}", markup=False)
        space = "--space budget=int:100:6000:log --objective recall"
        con.print(
            f"       {cmd} optimize --at main@{at} {space} --forks 12", markup=False, emoji=False
        )
        con.print(
            f"       {cmd} evolve --at main@{at} {space} --population 4 --generations 3",
            markup=False,
            emoji=False,
        )
    wall = time.perf_counter() - t0
    con.print(f"[bold green]done in {wall:.1f} s[/bold green] — everything is in {final}/")
    return {
        "dir": str(final),
        "journal": str(db),
        "trace": str(trace),
        "matrix_csv": str(csv),
        "chart_png": str(png),
        "crash": crash,
        "fork_at": at,
        "recall_by_budget": recall,
        "state_at_40": {"files_done": len(s40.done), "notes": len(s40.notes)},
        "first_events": [{"seq": r.seq, "kind": r.kind, "hash": r.hash} for r in first],
        "wall_s": round(wall, 2),
    }
