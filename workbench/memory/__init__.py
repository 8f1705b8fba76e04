"""Evidence-carrying, bitemporal graph memory on the journal.

    from workbench import Journal
    from workbench.memory import (Memory, node, fact, evidence, retract, predicate,
                                  ContextRequest, ContextCompiler)

    with Journal.open("mem.db", Memory) as j:
        b = j.root()
        b.apply(node("task:714", "task", "Fix one-day query accuracy"))
        b.apply(node("file:query-builder", "file", "query-builder.rs"))
        b.apply(fact("fact:714:affected", "task:714", "affects", "file:query-builder",
                     valid_from=10, recorded_at=20, evidence=[evidence("test", "suite")]))
        view = b.state().view(valid=30, known=30)
        bundle = ContextCompiler().compile(view, ContextRequest(seeds=["task:714"], budget=2000))

Memory changes are ordinary journal deltas (``model``), so they are hashed, forkable and
time-travelable; ``view`` answers bitemporal questions and projects to a CSR graph;
``compiler`` builds budgeted context with a receipt; ``retrieval`` ranks and fuses; ``linking``
resolves mentions to nodes; ``analytics`` reports revisions, gaps, drift and duplicates.
"""

from __future__ import annotations

from .compiler import Bundle, ContextCompiler, ContextRequest, MemoryReceipt
from .model import (
    Evidence,
    FactRecorded,
    FactRetracted,
    Memory,
    NodeUpserted,
    PredicateDeclared,
    evidence,
    fact,
    node,
    predicate,
    retract,
)
from .retrieval import (
    Hit,
    LexicalProvider,
    LiteralProvider,
    SemanticProvider,
    configuration,
    fuse,
    hashed_embedding,
)
from .view import Graph, View

__all__ = [
    "Bundle",
    "ContextCompiler",
    "ContextRequest",
    "Evidence",
    "FactRecorded",
    "FactRetracted",
    "Graph",
    "Hit",
    "LexicalProvider",
    "LiteralProvider",
    "Memory",
    "MemoryReceipt",
    "NodeUpserted",
    "PredicateDeclared",
    "SemanticProvider",
    "View",
    "configuration",
    "evidence",
    "fact",
    "fuse",
    "hashed_embedding",
    "node",
    "predicate",
    "retract",
]
