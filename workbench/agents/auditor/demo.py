"""`lithify demo`: the whole pitch on the bundled data, into a fresh directory.

1. run the auditor as a child process and SIGKILL it four times mid-work, then finish;
2. show the state as of event 40, with its notes;
3. show the first events with their hashes;
4. fork five budgets nineteen files in and run them (recall per budget);
5. write the matrix as CSV and a recall-vs-budget chart as PNG.
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import Any

from ...errors import InvalidValue
from ...journal import Journal
from . import agent, logic
from .crash import crash_demo_run
from .models import Calls, MockModel

BUDGETS = [300, 600, 1200, 2400, 4800]
FILES_IN = 19


def _fresh_dir(out: Path | None) -> Path:
    if out is None:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        out = Path(f"lithify-demo-{stamp}")
        n = 1
        while out.exists():
            n += 1
            out = Path(f"lithify-demo-{stamp}-{n}")
    if out.exists() and any(out.iterdir()):
        raise InvalidValue(f"{out} exists and is not empty; the demo writes into a fresh directory")
    out.mkdir(parents=True, exist_ok=True)
    return out


def run_demo(out: Path | None = None, seed: int = 7, quiet: bool = False) -> dict[str, Any]:
    """Run the demo; returns what it made (paths and numbers) as a JSON-ready dict."""
    from rich.console import Console

    con = Console(quiet=quiet, highlight=False)
    t0 = time.perf_counter()
    out = _fresh_dir(out)
    db, trace = out / "demo.db", out / "trace.txt"
    repo = agent.bundled_corpus()
    con.rule("[bold]1. crash: SIGKILL the agent four times mid-work, then finish")
    crash = crash_demo_run(
        str(db), repo, 4, logic.DEFAULT_BUDGET, logic.DEFAULT_MAX_FILES, 150, trace, seed
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
        forks = j.sweep(
            root, at, [{"budget": b} for b in BUDGETS], spec={"grid": {"budget": BUDGETS}}
        )
        calls = Calls(MockModel(), trace)
        recall: dict[int, float] = {}
        try:
            for f in forks:
                budget = f.params["budget"]
                agent.start(f, budget=budget)
                res = agent.run(f, calls)
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

        df = j.matrix()
        csv = out / "matrix.csv"
        df.write_csv(csv)
        sweep_rows = df.filter(df["branch"].is_in([f.id for f in forks]))
        png = out / "recall_vs_budget.png"
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
        con.print(f"  matrix: {csv} ({len(df)} rows)")
        con.print(f"  chart:  {png}")
        con.print(f"  journal: {db}   trace: {trace}")
        con.print(
            f"  try: lithify --db {db} history --to 12   |   lithify --db {db} at --seq 40 --notes"
        )
    wall = time.perf_counter() - t0
    con.print(f"[bold green]done in {wall:.1f} s[/bold green] — everything is in {out}/")
    return {
        "dir": str(out),
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
