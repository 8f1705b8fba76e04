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
resolves mentions to nodes; ``extraction`` turns what a provider (``extractors``: rules, a chat
model) finds in a text into a reviewable plan of nodes and facts; ``analytics`` reads the record:
revisions and their confidence cascade, reasoning gaps, drift, consolidation.
"""

from __future__ import annotations

from .compiler import Bundle, ContextCompiler, ContextRequest, MemoryReceipt
from .extraction import (
    AutoExtractionEngine,
    EntityMention,
    Extraction,
    ExtractionPlan,
    ExtractionProvider,
    RelationCandidate,
)
from .extractors import ModelProvider, RuleProvider
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
    Ranking,
    SemanticProvider,
    configuration,
    fuse,
    hashed_embedding,
)
from .view import Graph, View

__all__ = [
    "AutoExtractionEngine",
    "Bundle",
    "ContextCompiler",
    "ContextRequest",
    "EntityMention",
    "Evidence",
    "Extraction",
    "ExtractionPlan",
    "ExtractionProvider",
    "FactRecorded",
    "FactRetracted",
    "Graph",
    "Hit",
    "LexicalProvider",
    "LiteralProvider",
    "Memory",
    "ModelProvider",
    "MemoryReceipt",
    "NodeUpserted",
    "PredicateDeclared",
    "Ranking",
    "RelationCandidate",
    "RuleProvider",
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
