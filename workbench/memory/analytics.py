"""Analytics over a Memory's full record (nothing is ever deleted, so history can be read).

A fact *rests on* another when one of its evidence records has that fact's id as locator (a
conclusion citing what it was concluded from). Its **effective confidence** is its own, capped
by its best support: ``min(confidence, max(effective confidence of each support))``; evidence
from outside the memory (a test, a document, a user) is full support by itself. A support that
was retracted, or superseded by a fact with another object, supports nothing any more (one
superseded by the same statement, say at another confidence, passes on to its successor).

- ``belief_revision``: correction chains, retractions, competing targets (one subject, a
  functional predicate, several objects valid at once) and the **cascade**: every fact whose
  effective confidence fell below its recorded one, with the supports it lost;
- ``revise``: the deltas of one correction (a new object, or a retraction) followed by the
  downstream cascade: each fact that rests on it, directly or not, re-recorded at the effective
  confidence it has after the correction (superseding it, the correction named as evidence);
- ``reasoning_gaps``: unsupported decisions, single-source inferences, weak foundations, stale
  evidence and unstable revision chains;
- ``drift``: an immutable timeline per belief (subject, predicate): its versions, when each was
  recorded and how it ended; correction rates per belief, per predicate, overall and per bucket
  of record time;
- consolidation: ``consolidation_plan`` folds duplicate facts (same statement in force, valid
  intervals overlapping or touching) into one carrying all their evidence, retracting the others
  with evidence pointing to it; ``orphans`` lists nodes no fact in force touches, for review;
  ``consolidate`` labels the head as a revision checkpoint (snapshotted, so ``at(label)`` is the
  memory before), then applies the plan. Nothing is deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import blake3

from ..errors import InvalidValue
from .model import (
    MAX_CONFIDENCE,
    FactRecorded,
    FactRetracted,
    Memory,
    _evidence_list,
    evidence,
)

INFERRED = frozenset({"model", "inference", "llm"})
DECISIONS = ("decided", "decision", "chose")
DAY = 86_400 * 1_000_000  # microseconds
REVISION = "revision"  # the evidence kind of a cascaded re-recording (names the correction)
_LOW, _HIGH = -(2**62), 2**62


# -- what rests on what ----------------------------------------------------------------------


def _live(f: Mapping[str, Any]) -> bool:
    return f["superseded_by"] is None and f["retracted"] is None


class _Support:
    """Effective confidences over a set of facts (the memory's, or a simulated revision's)."""

    def __init__(self, facts: Mapping[str, Mapping[str, Any]]) -> None:
        self.facts = facts
        self.memo: dict[str, int] = {}
        self.dependents: dict[str, list[str]] = {}
        for f in facts.values():
            for e in f["evidence"]:
                if e["kind"] != REVISION and e["locator"] in facts and e["locator"] != f["id"]:
                    self.dependents.setdefault(e["locator"], []).append(f["id"])

    def supports(self, f: Mapping[str, Any]) -> tuple[list[str], bool]:
        """(ids of the facts it rests on, whether it has evidence from outside the memory)."""
        cited, outside = [], False
        for e in f["evidence"]:
            if e["kind"] == REVISION:
                continue  # says why the fact was re-recorded: no support either way
            if e["locator"] in self.facts and e["locator"] != f["id"]:
                cited.append(e["locator"])
            else:
                outside = True
        return cited, outside

    def resolve(self, fact_id: str) -> str | None:
        """The fact in force that carries ``fact_id``'s statement now (itself, or the end of
        a chain of supersessions by the same statement); None if it was retracted or
        corrected to another object."""
        f = self.facts[fact_id]
        seen = set()
        while f["superseded_by"] is not None and f["id"] not in seen:
            seen.add(f["id"])
            nxt = self.facts.get(f["superseded_by"])
            if nxt is None or nxt["object"] != f["object"]:
                return None
            f = nxt
        return f["id"] if f["retracted"] is None else None

    def strength(self, f: Mapping[str, Any], stack: frozenset[str] = frozenset()) -> int:
        cited, outside = self.supports(f)
        if outside or not cited:
            return MAX_CONFIDENCE
        best = 0
        for s in cited:
            now = self.resolve(s)
            if now is not None and now not in stack:
                best = max(best, self.effective(now, stack | {f["id"]}))
        return best

    def effective(self, fact_id: str, stack: frozenset[str] = frozenset()) -> int:
        held = self.memo.get(fact_id)
        if held is not None:
            return held
        f = self.facts[fact_id]
        value = min(f["confidence"], self.strength(f, stack)) if _live(f) else 0
        if not stack:  # a value found inside a cycle depends on where the cycle was entered
            self.memo[fact_id] = value
        return value

    def lost(self, f: Mapping[str, Any]) -> list[str]:
        cited, _ = self.supports(f)
        return sorted(s for s in cited if self.resolve(s) is None)

    def downstream(self, fact_id: str) -> list[str]:
        """Every fact that rests on ``fact_id``, directly or through others, nearest first."""
        out, seen, frontier = [], {fact_id}, [fact_id]
        while frontier:
            nxt = []
            for x in frontier:
                for d in sorted(self.dependents.get(x, ())):
                    if d not in seen:
                        seen.add(d)
                        out.append(d)
                        nxt.append(d)
            frontier = nxt
        return out


def effective_confidence(memory: Memory) -> dict[str, int]:
    """Fact id -> effective confidence (basis points) of every fact in force."""
    support = _Support(memory.facts)
    return {i: support.effective(i) for i in sorted(memory.facts) if _live(memory.facts[i])}


# -- belief revision ---------------------------------------------------------------------------


def _chains(facts: Mapping[str, Mapping[str, Any]]) -> list[list[str]]:
    chains = []
    for f in sorted(facts.values(), key=lambda f: f["id"]):
        if f["supersedes"] is None and f["superseded_by"] is not None:
            chain = [f["id"]]
            while facts[chain[-1]]["superseded_by"] is not None:
                chain.append(facts[chain[-1]]["superseded_by"])
            chains.append(chain)
    return chains


def belief_revision(memory: Memory) -> dict[str, Any]:
    """Correction chains, retractions, competing targets and the confidence cascade."""
    facts = memory.facts
    retracted = sorted(f["id"] for f in facts.values() if f["retracted"] is not None)
    functional = {p for p, r in memory.predicates.items() if r.get("functional")}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for f in facts.values():
        if _live(f) and f["predicate"] in functional:
            groups.setdefault((f["subject"], f["predicate"]), []).append(f)
    competing = []
    for (subject, pred), fs in sorted(groups.items()):
        objects = sorted({f["object"] for f in fs})
        if len(objects) > 1 and _overlap(fs):
            competing.append(
                {
                    "subject": subject,
                    "predicate": pred,
                    "objects": objects,
                    "facts": sorted(f["id"] for f in fs),
                }
            )
    support = _Support(facts)
    cascade = []
    for i in sorted(facts):
        f = facts[i]
        if _live(f):
            eff = support.effective(i)
            if eff < f["confidence"]:
                cascade.append(
                    {
                        "fact": i,
                        "confidence": f["confidence"],
                        "effective": eff,
                        "lost": support.lost(f),
                    }
                )
    return {
        "corrections": _chains(facts),
        "retracted": retracted,
        "competing": competing,
        "cascade": cascade,
    }


def _overlap(fs: list[dict[str, Any]]) -> bool:
    lo = [f["valid_from"] if f["valid_from"] is not None else _LOW for f in fs]
    hi = [f["valid_to"] if f["valid_to"] is not None else _HIGH for f in fs]
    return any(
        lo[i] < hi[j] and lo[j] < hi[i]
        for i in range(len(fs))
        for j in range(i + 1, len(fs))
        if fs[i]["object"] != fs[j]["object"]
    )


def revise(
    memory: Memory,
    fact_id: str,
    *,
    evidence: Iterable[Any],
    recorded_at: int,
    object: str | None = None,
    retract: bool = False,
    confidence: int = MAX_CONFIDENCE,
    agent: str | None = None,
    id: str | None = None,
) -> list[Any]:
    """The deltas of one belief revision: the correction of ``fact_id`` (a new ``object``, or
    ``retract=True``), then every fact downstream of it re-recorded at its effective confidence
    after the correction (superseding it, with the correction as added evidence). Apply them
    with ``branch.apply_many`` (one transaction)."""
    facts = memory.facts
    old = facts.get(fact_id)
    if old is None:
        raise InvalidValue(f"no fact {fact_id!r} to revise", name=fact_id)
    if not _live(old):
        raise InvalidValue(
            f"fact {fact_id!r} is already superseded or retracted; revise the fact in force",
            name=fact_id,
        )
    if retract == (object is not None):
        raise InvalidValue("revise takes either object=... (a correction) or retract=True")
    ev = _evidence_list(list(evidence), f"the revision of {fact_id!r}")
    sim = dict(facts)  # only the revised fact and its successor differ: a shallow copy will do
    out: list[Any] = []
    if retract:
        done: Any = FactRetracted(fact_id, ev, recorded_at, agent)
        sim[fact_id] = {**old, "retracted": {"at": recorded_at, "evidence": ev, "agent": agent}}
        cause = fact_id
    else:
        assert object is not None
        new_id = id or _revision_id(fact_id, object, recorded_at)
        if new_id in facts:
            raise InvalidValue(f"fact {new_id!r} exists; pass another id", name=new_id)
        done = FactRecorded(
            new_id,
            old["subject"],
            old["predicate"],
            object,
            ev,
            old["valid_from"],
            old["valid_to"],
            None,
            recorded_at,
            agent,
            old["session"],
            confidence,
            fact_id,
        )
        sim[fact_id] = {**old, "superseded_by": new_id, "superseded_at": recorded_at}
        sim[new_id] = {
            **old,
            "id": new_id,
            "object": object,
            "evidence": ev,
            "recorded_at": recorded_at,
            "confidence": confidence,
            "supersedes": fact_id,
            "superseded_by": None,
            "superseded_at": None,
            "retracted": None,
        }
        cause = new_id
    out.append(done)
    support = _Support(sim)
    for d in support.downstream(fact_id):
        f = sim[d]
        if not _live(f):
            continue
        eff = support.effective(d)
        if eff >= f["confidence"]:
            continue
        nid = _revision_id(d, f["object"], recorded_at)
        out.append(
            FactRecorded(
                nid,
                f["subject"],
                f["predicate"],
                f["object"],
                [*f["evidence"], evidence_of_revision(cause)],
                f["valid_from"],
                f["valid_to"],
                f["observed_at"],
                recorded_at,
                agent,
                f["session"],
                eff,
                d,
            )
        )
    return out


def evidence_of_revision(cause: str) -> dict[str, Any]:
    """The evidence record a cascaded fact carries: the revision that lowered it."""
    return evidence(REVISION, cause)


def _revision_id(fact_id: str, obj: str, at: int) -> str:
    h = blake3.blake3(f"{fact_id}\x00{obj}\x00{at}".encode()).hexdigest()[:12]
    return f"{fact_id}~{h}"


# -- reasoning gaps ----------------------------------------------------------------------------


def reasoning_gaps(
    memory: Memory,
    decisions: Iterable[str] = DECISIONS,
    *,
    weak_below: int = 5000,
    now: int | None = None,
    max_age: int = 180 * DAY,
    unstable_after: int = 3,
) -> dict[str, list[Any]]:
    """The five kinds of gaps, each a sorted list:

    - ``unsupported_decisions``: decisions (``decisions`` predicates) resting on inference
      alone (evidence of kinds model / inference / llm);
    - ``single_source_inferences``: inferred facts resting on one evidence record;
    - ``weak_foundations``: facts resting on other facts whose best effective confidence is
      below ``weak_below`` (a retracted or corrected support counts 0);
    - ``stale_evidence``: facts whose latest evidence (observed, else recorded) is older than
      ``max_age`` before ``now`` (default: the latest time recorded in the memory);
    - ``unstable_revision_chains``: correction chains of ``unstable_after`` or more revisions,
      or that come back to an object they had left (A -> B -> A), as lists of fact ids.
    """
    wanted = set(decisions)
    facts = memory.facts
    support = _Support(facts)
    if now is None:
        now = max((f["recorded_at"] for f in facts.values()), default=0)
    unsupported, single, weak, stale = [], [], [], []
    for i in sorted(facts):
        f = facts[i]
        if not _live(f):
            continue
        kinds = {e["kind"] for e in f["evidence"]}
        if f["predicate"] in wanted and kinds <= INFERRED:
            unsupported.append(i)
        if kinds <= INFERRED and len(f["evidence"]) == 1:
            single.append(i)
        cited, outside = support.supports(f)
        if cited and not outside and support.strength(f) < weak_below:
            weak.append(i)
        seen = f["observed_at"] if f["observed_at"] is not None else f["recorded_at"]
        if seen < now - max_age:
            stale.append(i)
    unstable = []
    for chain in _chains(facts):
        objects = [facts[x]["object"] for x in chain]
        flips = any(objects[k] in objects[: k - 1] for k in range(2, len(objects)))
        if len(chain) - 1 >= unstable_after or flips:
            unstable.append(chain)
    return {
        "unsupported_decisions": unsupported,
        "single_source_inferences": single,
        "weak_foundations": weak,
        "stale_evidence": stale,
        "unstable_revision_chains": unstable,
    }


# -- drift -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Version:
    """One version of a belief: the fact, what it said, when it was recorded and valid, and
    how it ended (``ended_by``: the superseding fact's id, ``"retracted"``, or None)."""

    fact: str
    object: str
    recorded_at: int
    valid_from: int | None
    valid_to: int | None
    confidence: int
    ended_at: int | None
    ended_by: str | None


@dataclass(frozen=True)
class Timeline:
    """A belief (subject, predicate) through time: its versions in record order, how many of
    them were corrected (superseded or retracted), and that share."""

    subject: str
    predicate: str
    versions: tuple[Version, ...]
    corrections: int

    @property
    def correction_rate(self) -> float:
        return self.corrections / len(self.versions)


@dataclass(frozen=True)
class Drift:
    """Per-belief timelines (sorted by subject, predicate), correction rates per predicate and
    overall, and, with a bucket size, facts and corrections recorded per bucket."""

    timelines: tuple[Timeline, ...]
    correction_rate: float | None
    by_predicate: tuple[tuple[str, float], ...]
    buckets: tuple[Mapping[str, Any], ...]

    def timeline(self, subject: str, predicate: str) -> Timeline | None:
        return next(
            (t for t in self.timelines if (t.subject, t.predicate) == (subject, predicate)), None
        )


def drift(memory: Memory, bucket: int | None = None) -> Drift:
    """Timelines and correction rates (see ``Drift``); ``bucket``: microseconds of record
    time per row of ``buckets``."""
    if bucket is not None and (
        isinstance(bucket, bool) or not isinstance(bucket, int) or bucket <= 0
    ):
        raise InvalidValue(f"bucket is a positive number of microseconds, not {bucket!r}")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for f in memory.facts.values():
        groups.setdefault((f["subject"], f["predicate"]), []).append(f)
    timelines = []
    per_pred: dict[str, list[int]] = {}
    total = corrected = 0
    for (subject, pred), fs in sorted(groups.items()):
        fs.sort(key=lambda f: (f["recorded_at"], f["id"]))
        versions = tuple(
            Version(
                f["id"],
                f["object"],
                f["recorded_at"],
                f["valid_from"],
                f["valid_to"],
                f["confidence"],
                f["superseded_at"]
                if f["superseded_by"] is not None
                else (f["retracted"]["at"] if f["retracted"] is not None else None),
                f["superseded_by"]
                if f["superseded_by"] is not None
                else ("retracted" if f["retracted"] is not None else None),
            )
            for f in fs
        )
        n = sum(1 for v in versions if v.ended_by is not None)
        timelines.append(Timeline(subject, pred, versions, n))
        row = per_pred.setdefault(pred, [0, 0])
        row[0] += len(versions)
        row[1] += n
        total += len(versions)
        corrected += n
    rows: list[Mapping[str, Any]] = []
    if bucket is not None:
        counts: dict[int, list[int]] = {}
        for f in memory.facts.values():
            counts.setdefault(f["recorded_at"] // bucket, [0, 0])[0] += 1
            if f["superseded_at"] is not None:
                counts.setdefault(f["superseded_at"] // bucket, [0, 0])[1] += 1
            if f["retracted"] is not None:
                counts.setdefault(f["retracted"]["at"] // bucket, [0, 0])[1] += 1
        rows = [
            {
                "bucket_start": b * bucket,
                "recorded": n,
                "corrections": c,
                "correction_rate": (c / n) if n else None,
            }
            for b, (n, c) in sorted(counts.items())
        ]
    return Drift(
        tuple(timelines),
        corrected / total if total else None,
        tuple((p, c / n) for p, (n, c) in sorted(per_pred.items())),
        tuple(rows),
    )


# -- consolidation -----------------------------------------------------------------------------


def consolidation_plan(memory: Memory, recorded_at: int) -> list[Any]:
    """Deltas that fold duplicate facts in force (same subject, predicate, object) into one:
    a new fact with all their evidence superseding the earliest, and retractions of the others
    pointing to it. Empty when there are no duplicates."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for f in memory.facts.values():
        if _live(f):
            groups.setdefault((f["subject"], f["predicate"], f["object"]), []).append(f)
    out: list[Any] = []
    runs: list[tuple[tuple[str, str, str], list[dict[str, Any]]]] = []
    for key, fs in sorted(groups.items()):
        # only facts whose valid intervals overlap or touch are duplicates of each other
        fs.sort(key=lambda f: (f["valid_from"] if f["valid_from"] is not None else _LOW, f["id"]))
        run: list[dict[str, Any]] = []
        end = _LOW
        for f in fs:
            start = f["valid_from"] if f["valid_from"] is not None else _LOW
            if run and start > end:
                runs.append((key, run))
                run = []
            run.append(f)
            end = max(end, f["valid_to"] if f["valid_to"] is not None else _HIGH)
        runs.append((key, run))
    for (subject, pred, obj), fs in runs:
        if len(fs) < 2:
            continue
        ends = [f["valid_to"] if f["valid_to"] is not None else _HIGH for f in fs]
        valid_to = None if max(ends) >= _HIGH else max(ends)
        starts = [f["valid_from"] for f in fs]
        valid_from = None if any(v is None for v in starts) else min(starts)
        fs.sort(key=lambda f: (f["recorded_at"], f["id"]))
        first = fs[0]
        ids = ",".join(f["id"] for f in fs)
        new_id = "consolidated:" + blake3.blake3(ids.encode()).hexdigest()[:16]
        seen, merged = set(), []
        for f in fs:
            for e in f["evidence"]:
                k = (e["kind"], e["locator"], e.get("digest"))
                if k not in seen:
                    seen.add(k)
                    merged.append(e)
        out.append(
            FactRecorded(
                new_id,
                subject,
                pred,
                obj,
                merged,
                valid_from,
                valid_to,
                first["observed_at"],
                recorded_at,
                "consolidation",
                None,
                max(f["confidence"] for f in fs),
                first["id"],
            )
        )
        out += [
            FactRetracted(
                f["id"], [evidence("consolidation", new_id)], recorded_at, "consolidation"
            )
            for f in fs[1:]
        ]
    return out


def orphans(memory: Memory) -> list[dict[str, Any]]:
    """Nodes no fact in force touches, for review (nothing is removed): each with the facts
    that once touched it (``facts``: ids, none if it never had one) and when the last of them
    ended (``since``)."""
    touched: set[str] = set()
    history: dict[str, list[dict[str, Any]]] = {}
    for f in memory.facts.values():
        for end in (f["subject"], f["object"]):
            history.setdefault(end, []).append(f)
            if _live(f):
                touched.add(end)
    out = []
    for node_id in sorted(memory.nodes):
        if node_id in touched:
            continue
        n = memory.nodes[node_id]
        past = history.get(node_id, [])
        ended = [
            f["superseded_at"] if f["superseded_at"] is not None else f["retracted"]["at"]
            for f in past
        ]
        out.append(
            {
                "node": node_id,
                "kind": n["kind"],
                "label": n["label"],
                "facts": sorted(f["id"] for f in past),
                "since": max(ended) if ended else None,
            }
        )
    return out


def consolidate(branch: Any, *, recorded_at: int, label: str | None = None) -> dict[str, Any]:
    """Consolidate a memory branch: label its head as a revision checkpoint (``label``, by
    default ``memory-checkpoint-<head>``) with a snapshot there, then apply the duplicate plan
    in one transaction. Returns the checkpoint, the facts folded, the orphans to review and the
    new head; the memory before stays readable at the label."""
    memory = branch.state()
    plan = consolidation_plan(memory, recorded_at)
    review = orphans(memory)
    name = label or f"memory-checkpoint-{branch.head}"
    seq = branch.head
    branch.snapshot()
    branch.tag(name)
    folded = [d.supersedes for d in plan if isinstance(d, FactRecorded)] + [
        d.fact for d in plan if isinstance(d, FactRetracted)
    ]
    head = branch.apply_many(plan) if plan else branch.head
    return {
        "checkpoint": {"label": name, "seq": seq},
        "folded": sorted(x for x in folded if x is not None),
        "created": sorted(d.id for d in plan if isinstance(d, FactRecorded)),
        "orphans": review,
        "head": head,
    }
