"""The auditor loop on a journal branch: every call an effect, every note a delta.

Run it, kill it, run it again: committed calls are read back from the journal, so the agent
resumes at the exact step. Fork it at any event and give the fork another budget: the fork
inherits every call made before the fork point.

The loop is written once, async (``arun``: its model calls are awaited, ``branch.aeffect``, so
a pool worker runs many forks at once while they wait on the model); ``run`` drives it to its
end from synchronous code (in a thread of its own when an event loop is already running, as in
a notebook).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import bundled
from ...branch import Branch
from ...context import Part
from ...errors import InvalidValue
from ...forkrun import report_progress
from ...journal import Journal
from ...params import Param, takes
from . import logic
from .models import MODELS, Calls, make_model

METRICS = (
    "recall",
    "precision",
    "compactions",
    "model_calls",
    "tokens_in",
    "files",
    "budget",
    "wall_ms",
)
MODEL_KEYS = ("plan:", "analyze:", "summarize:", "report")
TOOL_KEYS = ("read:", "count:")


def bundled_corpus() -> Path:
    """The demo source tree shipped in the package (its source: data/corpus)."""
    return bundled.corpus()


def start(
    branch: Branch,
    repo: str | os.PathLike[str] | None = None,
    budget: int | None = None,
    max_files: int = logic.DEFAULT_MAX_FILES,
) -> logic.AuditState:
    """Begin an audit on a fresh branch (or check the budget of a started one)."""
    state: logic.AuditState = branch.state()
    if budget is not None and (
        isinstance(budget, bool) or not isinstance(budget, int) or budget < 1
    ):
        raise InvalidValue(f"the budget is a positive number of tokens, not {budget!r}")
    if not state.root:
        if max_files < 1:
            raise InvalidValue(f"--max-files must be at least 1, not {max_files}")
        root = os.path.abspath(repo if repo is not None else bundled_corpus())
        files = logic.select_files(root, max_files)
        branch.apply(
            {
                "type": "start",
                "root": root,
                "budget": budget or logic.DEFAULT_BUDGET,
                "pending": files,
            }
        )
    elif budget is not None and budget != state.budget:
        if state.report is not None:
            raise InvalidValue(
                f"branch {branch.id} already finished with budget {state.budget}; fork it to try "
                f"another budget (lithify fork --at SEQ --budget {budget})"
            )
        branch.apply({"type": "budget", "budget": budget})
    state = branch.state()
    return state


# The auditor manages its context by compaction, never by truncation: renders keep everything.
WHOLE_CONTEXT = 2**31


async def _compact(branch: Branch, calls: Calls) -> None:
    """Replace the notes by the model's summary of them: the summary an awaited effect, then
    the compaction (the same events, in the same order, as a compactor calling the model)."""
    state: logic.AuditState = branch.state()
    key = f"summarize:{len(state.notes)}:{len(state.done)}"
    _, seen = branch.render(WHOLE_CONTEXT)
    with branch.receipt(seen):
        summary = await branch.aeffect(key, calls.asummarize, state.notes, state.budget, key)
    branch.compact(lambda _b, s: s.compacted(summary))


async def astep(branch: Branch, calls: Calls, path: str) -> str:
    """One ReAct step on one file: read, plan, count each category, analyze, note; returns
    the file's text as read.

    Each model call is journaled with a receipt of what it saw: the notes and the file."""
    root = branch.state().root
    text = branch.effect(f"read:{path}", calls.read, root, path)
    _, seen = branch.render(
        WHOLE_CONTEXT,
        renderer=lambda s: [*s.context_parts(), Part(f"file:{path}", text, pinned=True)],
    )
    key = f"plan:{path}"
    with branch.receipt(seen):
        cats = await branch.aeffect(key, calls.aplan, path, text, key)
    counts = {c: branch.effect(f"count:{path}:{c}", calls.count, path, text, c) for c in cats}
    key = f"analyze:{path}"
    with branch.receipt(seen):
        note = await branch.aeffect(key, calls.aanalyze, path, text, counts, key)
    branch.apply({"type": "step", "path": path, "note": note, "tokens": logic.tokens(text)})
    return text


def step(branch: Branch, calls: Calls, path: str) -> str:
    """``astep`` to its end, from synchronous code."""
    text: str = _to_end(astep(branch, calls, path))
    return text


def _to_end(coroutine: Any) -> Any:
    """Run a coroutine to its end: here, or in a thread of its own when this thread already
    runs an event loop (a notebook's kernel)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="auditor") as pool:
        return pool.submit(asyncio.run, coroutine).result()


@dataclass(frozen=True)
class RunResult:
    """A finished audit: its metrics (observed on the branch) and where it ran."""

    branch: int
    metrics: dict[str, float]
    findings: int
    state: logic.AuditState

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: _num(v) for k, v in self.metrics.items()}
        out["findings"] = self.findings
        out["branch"] = self.branch
        return out


def _num(v: float) -> float | int:
    return int(v) if float(v).is_integer() and abs(v) < 2**53 else v


def run(
    branch: Branch,
    calls: Calls,
    on_step: Callable[[int, int], None] | None = None,
    report: bool = False,
) -> RunResult:
    """Drive a started branch to its report and observe its metrics; resumes where it stopped
    (``arun`` to its end, from synchronous code).

    ``on_step(files_done, files_total)`` is called after every file (e.g. sweep progress).
    ``report=True`` (a sweep's fork) reports the recall so far after every file through
    ``sweep.report`` (the findings in the notes against the files read): a learning curve,
    and what an optimize sweep's pruner judges."""
    result: RunResult = _to_end(arun(branch, calls, on_step, report))
    return result


async def arun(
    branch: Branch,
    calls: Calls,
    on_step: Callable[[int, int], None] | None = None,
    report: bool = False,
) -> RunResult:
    """``run``, its model calls awaited."""
    t0 = time.perf_counter()
    state: logic.AuditState = branch.state()
    if not state.root:
        raise InvalidValue(f"branch {branch.id} has no audit yet; start it with a repo first")
    total = len(state.done) + len(state.pending)
    texts: dict[str, str] = {}  # files read by this process (the journal has the rest)
    while state.pending:
        if state.size() > state.budget:
            await _compact(branch, calls)
        path = branch.state().pending[0]
        texts[path] = await astep(branch, calls, path)
        state = branch.state()
        if report:
            from ...sweep import report as sweep_report

            recall = _recall_so_far(branch, calls, state, texts)
            sweep_report(branch, recall, len(state.done), metric="recall")
        if on_step is not None:
            on_step(len(state.done), total)
    if state.report is None:
        _, seen = branch.render(WHOLE_CONTEXT)
        with branch.receipt(seen):
            text = await branch.aeffect("report", calls.areport, state.notes, "report")
        branch.apply({"type": "report", "report": text})
        state = branch.state()
    truth: set[logic.Finding] = set()
    for path in state.done:  # ground truth from the journaled reads: no disk access needed
        source = texts.get(path)
        if source is None:
            source = branch.effect(f"read:{path}", calls.read, state.root, path)
        truth |= {(path, c, n) for c in logic.CATEGORIES if (n := logic.count(source, c)) > 0}
    recall, precision, findings = logic.score(truth, state.report or "")
    wall_ms = (time.perf_counter() - t0) * 1000
    metrics = {
        "recall": recall,
        "precision": precision,
        "compactions": float(state.compactions),
        "model_calls": float(state.model_calls),
        "tokens_in": float(state.tokens_in),
        "files": float(len(state.done)),
        "budget": float(state.budget),
        "wall_ms": round(wall_ms, 3),
    }
    observed = _observed_since_report(branch)
    for name in METRICS:
        if name not in observed:
            branch.observe(name, metrics[name])
    return RunResult(branch.id, metrics, findings, state)


def _recall_so_far(
    branch: Branch, calls: Calls, state: logic.AuditState, texts: dict[str, str]
) -> float:
    """The share of the findings in the files read so far that the notes hold now."""
    truth: set[logic.Finding] = set()
    for path in state.done:
        source = texts.get(path)
        if source is None:  # read before this process: the journaled read, not the disk
            source = texts[path] = branch.effect(f"read:{path}", calls.read, state.root, path)
        truth |= {(path, c, n) for c in logic.CATEGORIES if (n := logic.count(source, c)) > 0}
    if not truth:
        return 1.0
    return len(truth & logic.findings_in(state.notes)) / len(truth)


def _observed_since_report(branch: Branch) -> set[str]:
    """Metric names already observed after the report (a resumed finish observes the rest)."""
    names: set[str] = set()
    for rec in reversed(branch.history(max(1, branch.head - 2 * len(METRICS)))):
        if rec.kind == "delta" and rec.payload.get("type") == "report":
            break
        if rec.kind == "observe":
            names.add(rec.payload["name"])
    return names


@takes(
    budget=Param(int, min=1),
    model=Param(str, choices=MODELS),  # make_model's names: another is refused before forking
    seed=Param(int, min=0),
)
async def run_fork(journal_path: str, branch_id: int, params: dict[str, Any]) -> dict[str, float]:
    """A sweep fork of the auditor (the runners' ``fn``; async: a pool worker runs many at once
    while they wait on the model): apply the fork's budget and run it to its report; returns
    its metrics (observed on the fork already). ``params`` may set budget and model;
    AUDITOR_TRACE names a trace."""
    calls = Calls(make_model(str(params.get("model", "mock"))))
    try:
        with Journal.open(journal_path, logic.AuditState) as j:
            b = j.branch(branch_id)
            start(b, budget=params.get("budget"))
            result = await arun(b, calls, on_step=report_progress, report=True)
            return result.metrics
    finally:
        await calls.aclose()


def rerun_counts(branch: Branch, trace_text: str) -> dict[str, int]:
    """Calls that ran more than once: trace lines minus committed effects, model and tool."""
    lines = [line for line in trace_text.splitlines() if line.strip()]
    model_lines = sum(line.startswith("model ") for line in lines)
    tool_lines = sum(line.startswith("tool ") for line in lines)
    keys = [r.payload["key"] for r in branch.history() if r.kind == "effect"]
    model_fx = sum(k.startswith(MODEL_KEYS) for k in keys)
    tool_fx = sum(k.startswith(TOOL_KEYS) for k in keys)
    return {
        "model_calls": model_lines,
        "tool_calls": tool_lines,
        "model_calls_rerun": model_lines - model_fx,
        "tool_calls_rerun": tool_lines - tool_fx,
    }


def fork_seq_after_files(branch: Branch, files: int) -> int:
    """The seq of the delta that finished the ``files``-th file (e.g. "nineteen files in")."""
    n = 0
    for rec in branch.history():
        if rec.kind == "delta" and rec.payload.get("type") == "step":
            n += 1
            if n == files:
                return rec.seq
    raise InvalidValue(f"branch {branch.id} has audited fewer than {files} files")
