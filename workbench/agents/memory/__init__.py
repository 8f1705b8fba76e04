"""The bundled memory experiment: recall against context budget on a LoCoMo or LongMemEval
file, per retrieval configuration, over a ``workbench.memory`` journal.

    from workbench.agents.memory import ingest, answer, load, run_fork

It registers as a plugin (``AGENT``) like the auditor: its State, fork function, template,
commands (``lithify memory ...``) and sweep defaults (budgets × retrieval configurations).
"""

from ...memory import Memory
from ...plugins import Agent
from .experiment import (
    FORMATS,
    KS,
    answer,
    case_table,
    context_recall,
    embedder,
    ingest,
    load,
    run_fork,
    sample,
)

AGENT = Agent(
    name="memory",
    state="workbench.memory:Memory",
    state_name=Memory.state_name or "",
    fork="workbench.agents.memory:run_fork",
    template="memory_fork",
    commands="workbench.agents.memory.commands:register",
    grid={
        "budget": [25, 50, 100, 200, 400],
        "retrieval": ["literal", "lexical", "graph", "graph+lexical"],
    },
    x="budget",
    y="recall",
    shorthands={"budgets": "budget"},
    color="retrieval",
    metrics=("recall", "recall@5", "ndcg@5", "mrr", "context_tokens"),
)

__all__ = [
    "AGENT",
    "FORMATS",
    "KS",
    "answer",
    "case_table",
    "context_recall",
    "embedder",
    "ingest",
    "load",
    "run_fork",
    "sample",
]
