"""Analytics over a Memory's full record (nothing is ever deleted, so history can be read):

- ``belief_revision``: correction chains (supersessions, oldest first; retractions) and
  competing targets (one subject, a functional predicate, several objects valid at once);
- ``reasoning_gaps``: unsupported decisions (decision facts backed only by model inference)
  and single-source inferences (inferred facts resting on one evidence record);
- ``drift``: facts recorded and corrected per time bucket, and the correction rate;
- ``consolidation_plan``: duplicate facts (same subject, predicate and object in force, valid
  intervals overlapping or touching) folded into one over the union of their intervals that
  carries all their evidence and supersedes the first; the others are retracted with evidence
  pointing to it (nothing is deleted).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import blake3

from ..errors import InvalidValue
from .model import FactRecorded, FactRetracted, Memory, evidence

INFERRED = frozenset({"model", "inference", "llm"})


def belief_revision(memory: Memory) -> dict[str, Any]:
    """Correction chains and competing targets."""
    facts = memory.facts
    chains = []
    for f in sorted(facts.values(), key=lambda f: f["id"]):
        if f["supersedes"] is None and f["superseded_by"] is not None:
            chain = [f["id"]]
            while facts[chain[-1]]["superseded_by"] is not None:
                chain.append(facts[chain[-1]]["superseded_by"])
            chains.append(chain)
    retracted = sorted(f["id"] for f in facts.values() if f["retracted"] is not None)
    functional = {p for p, r in memory.predicates.items() if r.get("functional")}
    live = [
        f
        for f in facts.values()
        if f["superseded_by"] is None and f["retracted"] is None and f["predicate"] in functional
    ]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for f in live:
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
    return {"corrections": chains, "retracted": retracted, "competing": competing}


def _overlap(fs: list[dict[str, Any]]) -> bool:
    lo = [f["valid_from"] if f["valid_from"] is not None else -(2**62) for f in fs]
    hi = [f["valid_to"] if f["valid_to"] is not None else 2**62 for f in fs]
    return any(
        lo[i] < hi[j] and lo[j] < hi[i]
        for i in range(len(fs))
        for j in range(i + 1, len(fs))
        if fs[i]["object"] != fs[j]["object"]
    )


def reasoning_gaps(
    memory: Memory, decisions: Iterable[str] = ("decided", "decision", "chose")
) -> dict[str, list[str]]:
    """Decisions backed only by inference, and inferences resting on one evidence record."""
    wanted = set(decisions)
    unsupported, single = [], []
    for f in sorted(memory.facts.values(), key=lambda f: f["id"]):
        if f["retracted"] is not None or f["superseded_by"] is not None:
            continue
        kinds = {e["kind"] for e in f["evidence"]}
        if f["predicate"] in wanted and kinds <= INFERRED:
            unsupported.append(f["id"])
        if kinds <= INFERRED and len(f["evidence"]) == 1:
            single.append(f["id"])
    return {"unsupported_decisions": unsupported, "single_source_inferences": single}


def drift(memory: Memory, bucket: int) -> list[dict[str, Any]]:
    """Per bucket of ``bucket`` microseconds of record time: facts recorded, corrections
    (supersessions and retractions) recorded, and their rate."""
    if isinstance(bucket, bool) or not isinstance(bucket, int) or bucket <= 0:
        raise InvalidValue(f"bucket is a positive number of microseconds, not {bucket!r}")
    rows: dict[int, list[int]] = {}
    for f in memory.facts.values():
        rows.setdefault(f["recorded_at"] // bucket, [0, 0])[0] += 1
        if f["superseded_at"] is not None:
            rows.setdefault(f["superseded_at"] // bucket, [0, 0])[1] += 1
        if f["retracted"] is not None:
            rows.setdefault(f["retracted"]["at"] // bucket, [0, 0])[1] += 1
    return [
        {
            "bucket_start": b * bucket,
            "recorded": n,
            "corrections": c,
            "correction_rate": (c / n) if n else None,
        }
        for b, (n, c) in sorted(rows.items())
    ]


def consolidation_plan(memory: Memory, recorded_at: int) -> list[Any]:
    """Deltas that fold duplicate facts in force (same subject, predicate, object) into one:
    a new fact with all their evidence superseding the earliest, and retractions of the others
    pointing to it. Empty when there are no duplicates."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for f in memory.facts.values():
        if f["superseded_by"] is None and f["retracted"] is None:
            groups.setdefault((f["subject"], f["predicate"], f["object"]), []).append(f)
    out: list[Any] = []
    runs: list[tuple[tuple[str, str, str], list[dict[str, Any]]]] = []
    low, high = -(2**62), 2**62
    for key, fs in sorted(groups.items()):
        # only facts whose valid intervals overlap or touch are duplicates of each other
        fs.sort(key=lambda f: (f["valid_from"] if f["valid_from"] is not None else low, f["id"]))
        run: list[dict[str, Any]] = []
        end = low
        for f in fs:
            start = f["valid_from"] if f["valid_from"] is not None else low
            if run and start > end:
                runs.append((key, run))
                run = []
            run.append(f)
            end = max(end, f["valid_to"] if f["valid_to"] is not None else high)
        runs.append((key, run))
    for (subject, pred, obj), fs in runs:
        if len(fs) < 2:
            continue
        ends = [f["valid_to"] if f["valid_to"] is not None else high for f in fs]
        valid_to = None if max(ends) >= high else max(ends)
        starts = [f["valid_from"] for f in fs]
        valid_from = None if any(v is None for v in starts) else min(starts)
        fs.sort(key=lambda f: (f["recorded_at"], f["id"]))
        first = fs[0]
        ids = ",".join(f["id"] for f in fs)
        new_id = "consolidated:" + blake3.blake3(ids.encode()).hexdigest()[:16]
        seen, merged = set(), []
        for f in fs:
            for e in f["evidence"]:
                key = (e["kind"], e["locator"], e.get("digest"))
                if key not in seen:
                    seen.add(key)
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
