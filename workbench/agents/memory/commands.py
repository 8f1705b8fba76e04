"""The memory experiment's `lithify memory ...` commands: ingest a LoCoMo or LongMemEval file
into a memory journal, answer its questions at a budget, and show what a compile selected.
Sweeps use the generic `lithify sweep` (its defaults: budgets × retrieval configurations)."""

from __future__ import annotations

from pathlib import Path

import typer

from ...cli.app import GLOBAL_HELP, console, emit, open_journal, options
from ...errors import InvalidValue
from ...eval import Dataset, evaluate
from ...memory import Memory
from ...memory.retrieval import journaled_embedding
from . import experiment, suite

memory_app = typer.Typer(
    help="The memory experiment: recall against context budget on LoCoMo / LongMemEval files.",
    no_args_is_help=True,
)

_FORMAT = typer.Option("locomo", "--format", help="locomo or longmemeval.")
_DATASET = typer.Option(
    None, "--dataset", help="The dataset file (default: the bundled sample of --format)."
)


def _fmt(fmt: str) -> str:
    if fmt not in experiment.FORMATS:
        raise InvalidValue(f"--format is one of {', '.join(experiment.FORMATS)}, not {fmt!r}")
    return fmt


@memory_app.command("ingest", epilog=GLOBAL_HELP)
def ingest(ctx: typer.Context, fmt: str = _FORMAT, dataset: Path = _DATASET) -> None:
    """Add the dataset's documents to the --db memory journal (created if missing) as nodes
    and evidence-carrying facts; prints the head to fork a sweep at."""
    opts = options(ctx)
    data = experiment.load(dataset, _fmt(fmt))  # read and checked before anything is written
    with open_journal(opts, Memory, must_exist=False, write=True) as j:
        b = j.root()
        if b.head:
            raise InvalidValue(
                f"{j.path} already holds a memory (head {b.head}); ingest into a new journal"
            )
        head = experiment.ingest(b, data)
    doc = {
        "head": head,
        "documents": len(data.documents),
        "questions": len(data.questions),
        "format": fmt,
        "evidence": data.evidence_report(),
    }

    def human() -> None:
        out = console()
        out.print(
            f"ingested {len(data.documents)} documents ({len(data.questions)} questions) "
            f"up to seq {head}; sweep with: lithify --db {j.path} sweep --at {head}",
            markup=False,
        )
        _evidence(data)

    emit(opts, doc, human)


def _evidence(data: Dataset) -> None:
    """The loader's line on evidence it repaired or could not read, if any."""
    line = data.evidence_summary()
    if line:
        console().print(f"evidence: {line}", markup=False)


@memory_app.command("run", epilog=GLOBAL_HELP)
def run(
    ctx: typer.Context,
    budget: int = typer.Option(200, "--budget", help="Context budget in tokens per question."),
    retrieval: str = typer.Option(
        "lexical",
        "--retrieval",
        help="literal, lexical, graph, semantic (needs --embed), hashed, fused, or a+b "
        "(e.g. graph+lexical).",
    ),
    embed: str = typer.Option(
        None,
        "--embed",
        help="The embedding of semantic retrieval: module:function (texts -> vectors), or "
        "openai[:MODEL] for an OpenAI-compatible /v1/embeddings at LITHIFY_OPENAI_BASE_URL. "
        "Journaled as effects on the main branch: a rerun never embeds a text again.",
    ),
    fmt: str = _FORMAT,
    dataset: Path = _DATASET,
) -> None:
    """Answer every question at one budget: the metrics overall and per category (read-only,
    except the embeddings --embed journals)."""
    opts = options(ctx)
    data = experiment.load(dataset, _fmt(fmt))
    client = experiment.embedder(embed)  # a bad spec is refused before the journal is opened
    with open_journal(opts, Memory, write=client is not None) as j:
        b = j.root()
        vectors = journaled_embedding(b, client, embed) if client is not None else None
        cases = experiment.answer(b.state(), data, budget, retrieval, embed=vectors)
    df = evaluate(cases, experiment.KS)
    rows = df.to_dicts()
    recall = experiment.context_recall(cases)
    tokens = sum(c["tokens"] for c in cases) / max(1, len(cases))
    stopped: dict[str, int] = {}
    for c in cases:
        stopped[c["stopped"]] = stopped.get(c["stopped"], 0) + 1

    def human() -> None:
        out = console()
        out.print(
            f"context recall {recall:.3f} at budget {budget} ({retrieval}): {tokens:.0f} tokens "
            f"a question on average; contexts stopped by "
            + ", ".join(f"{why} {n}" for why, n in sorted(stopped.items())),
            markup=False,
        )
        for r in rows:
            out.print(
                f"  {r['group']:<22} n={r['n']:<4} recall@5 {r['recall@5'] or 0:.3f}  "
                f"ndcg@5 {r['ndcg@5'] or 0:.3f}  mrr {r['mrr'] or 0:.3f}",
                markup=False,
            )
        _evidence(data)

    doc = {
        "recall": recall,
        "budget": budget,
        "retrieval": retrieval,
        "context_tokens": tokens,
        "stopped": stopped,
        "groups": rows,
        "evidence": data.evidence_report(),
    }
    emit(opts, doc, human)


@memory_app.command("suite", epilog=GLOBAL_HELP)
def suite_command(
    ctx: typer.Context,
    budget: int = typer.Option(400, "--budget", help="Context budget in tokens per case."),
    retrieval: str = typer.Option(
        "graph+lexical", "--retrieval", help="literal, lexical, graph, fused, or a+b."
    ),
    path: Path = typer.Option(
        None, "--suite", help="A suite file (default: the bundled coding-agent suite)."
    ),
) -> None:
    """Run the coding-agent regression suite (which file defines what, which decision
    superseded which) in memory: the metrics per category, and how often a superseded fact
    reached the context (stale). Needs no --db."""
    opts = options(ctx)
    cases, table = suite.run(retrieval, budget, path)
    rows = table.to_dicts()

    def human() -> None:
        out = console()
        out.print(f"coding-agent suite, {retrieval} at budget {budget}", markup=False)
        for r in rows:
            out.print(
                f"  {r['group']:<12} n={r['n']:<3} hit@1 {r['hit@1'] or 0:.2f}  "
                f"recall@5 {r['recall@5'] or 0:.2f}  mrr {r['mrr'] or 0:.2f}  "
                f"stale {r['stale']:.2f}",
                markup=False,
            )

    emit(opts, {"retrieval": retrieval, "budget": budget, "groups": rows, "cases": cases}, human)


def register(app: typer.Typer) -> None:
    """Add `lithify memory ...` to the app (the plugin's ``commands`` hook)."""
    app.add_typer(memory_app, name="memory", rich_help_panel="Memory experiment (bundled)")
