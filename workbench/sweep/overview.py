"""Every sweep and study of a journal at a glance: what the Lab's study list shows.

A row per sweep: its kind, what it optimizes (objectives and directions, for a study or an
evolution), its best trial so far (value, branch, params; the first objective's, for several
its Pareto front's size), its forks counted by trial state (complete, pruned, failed, ...), and
when it ran (the first fork's start to the last one's end, or to now while one runs). A grid
has no objective: its row has counts and times only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..outcome import STATES, state_of
from .plan import planned_forks, summaries
from .trials import Reader, Study, StudySpec

if TYPE_CHECKING:
    from ..journal import Journal


@dataclass(frozen=True)
class StudyRow:
    """One sweep at a glance (see the module docstring); ``to_json`` is what the server sends."""

    id: int
    kind: str
    state: str
    planned: int
    counts: dict[str, int]
    objectives: tuple[str, ...] = ()
    directions: tuple[str, ...] = ()
    best: dict[str, Any] | None = None
    pareto: int | None = None
    started: int | None = None  # unix ms of the first fork's start
    ended: int | None = None  # unix ms of the last fork's end, None while one runs
    seconds: float | None = None
    base: int = 0
    at: int = 0

    def to_json(self) -> dict[str, Any]:
        """The row as JSON (the server's ``studies`` route)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "state": self.state,
            "planned": self.planned,
            "counts": dict(self.counts),
            "objectives": list(self.objectives),
            "directions": list(self.directions),
            "best": self.best,
            "pareto": self.pareto,
            "started": self.started,
            "ended": self.ended,
            "seconds": self.seconds,
            "base": self.base,
            "at": self.at,
        }


def overview(journal: Journal, now_ms: int | None = None) -> list[StudyRow]:
    """Every sweep of the journal, newest first (see ``StudyRow``)."""
    runs = {r.branch: r for r in journal.runs()}
    glance = {s.id: s for s in summaries(journal)}
    reader = Reader(journal)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    rows = []
    for info in sorted(journal.sweeps(), key=lambda s: -s.id):
        counts = {s: 0 for s in STATES}
        for b in info.branches:
            run = runs.get(b)
            state = state_of(run.status if run is not None else "pending") or "pending"
            counts[state] = counts.get(state, 0) + 1
        starts = [r.started for b in info.branches if (r := runs.get(b)) and r.started]
        ends = [r.finished for b in info.branches if (r := runs.get(b)) and r.finished]
        live = counts.get("running", 0) > 0 or counts.get("pending", 0) > 0
        started = min(starts) if starts else None
        ended = None if live or not ends else max(ends)
        seconds = None if started is None else ((ended if ended else now) - started) / 1000
        kind = str(info.spec.get("kind", "grid"))
        best: dict[str, Any] | None = None
        pareto: int | None = None
        objectives: tuple[str, ...] = ()
        directions: tuple[str, ...] = ()
        if kind in ("optimize", "evolve"):
            spec = StudySpec.of(info)
            objectives, directions = spec.objectives, spec.directions
            study = Study(info.id, objectives, directions, tuple(reader.trials(spec)))
            if len(objectives) > 1:
                pareto = len(study.pareto)
            elif (top := study.best) is not None:
                best = {"value": top.value, "branch": top.branch, "params": dict(top.params)}
        summary = glance.get(info.id)
        rows.append(
            StudyRow(
                info.id,
                kind,
                summary.state if summary is not None else "pending",
                planned_forks(info),
                {k: v for k, v in counts.items() if v},
                objectives,
                directions,
                best,
                pareto,
                started,
                ended,
                seconds,
                info.base,
                info.at,
            )
        )
    return rows


__all__ = ["StudyRow", "overview"]
