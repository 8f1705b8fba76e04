"""The JSON the server answers with, typed once. ``extensions/jupyterlab-lithify/src/types.ts``
mirrors these shapes for the Lab's API client; change both together."""

from __future__ import annotations

from typing import Any, Required, TypedDict


class ErrorReply(TypedDict):
    """Every 4xx/5xx: what went wrong and its kind (the CLI's error kinds)."""

    error: str
    kind: str


class JournalFile(TypedDict):
    path: str
    bytes: int


class JournalsReply(TypedDict):
    root: str
    journals: list[JournalFile]
    runners: list[str]
    open: list[str]  # journals to open in the sidebar when the page first loads
    session: str  # this server's start: the sidebar opens ``open`` once per server


class BranchJson(TypedDict):
    id: int
    name: str | None
    parent: int | None
    fork_seq: int
    head: int
    head_hash: str
    params: dict[str, Any]
    created: int
    sweep: int | None
    status: str | None


class SweepSummaryJson(TypedDict):
    """``sweep.SweepSummary.to_json()``: a sweep at a glance, for the fork tree's headers."""

    id: int
    kind: str  # grid, optimize or evolve
    planned: int  # the forks it is to have (a study's trials)
    forks: int  # the forks it has now
    counts: dict[str, int]  # forks by run status
    state: str  # running, finished, failed, cancelled or pending


class BranchesReply(TypedDict):
    branches: list[BranchJson]
    sweeps: list[SweepSummaryJson]


class VersionReply(TypedDict):
    version: str  # changes whenever an event, a run record or a branch does


class EventJson(TypedDict):
    branch: int
    seq: int
    kind: str
    hash: str
    parent_hash: str
    ts: int
    position: int | None
    payload: Any
    summary: str


class EventsReply(TypedDict):
    branch: int
    head: int
    offset: int
    events: list[EventJson]


class StateReply(TypedDict):
    branch: int
    seq: int
    hash: str
    state: Any


class Point(TypedDict):
    branch: int
    seq: int


class ChangeJson(TypedDict, total=False):
    op: Required[str]
    path: Required[str]
    before: Any
    after: Any


DiffReply = TypedDict(
    "DiffReply",
    {
        "branch": int,
        "a": int,
        "b": int,
        "from": Point,
        "to": Point,
        "changes": list[ChangeJson],
        "states": list[Any],
    },
)


class NoteJson(TypedDict):
    """A branch's note (``annotations.Note``)."""

    branch: int
    seq: int
    ts: int
    text: str


class ArtifactJson(TypedDict):
    """An attached artifact (``annotations.Artifact``); its bytes are the ``artifact`` route's."""

    branch: int
    seq: int
    ts: int
    name: str
    hash: str
    size: int
    media_type: str


class BranchDetailReply(BranchJson):
    error: dict[str, Any] | None
    metrics: dict[str, float]
    notes: list[NoteJson]
    artifacts: list[ArtifactJson]


class NoteReply(TypedDict):
    """A note written: its seq and the branch's notes now."""

    branch: int
    seq: int
    notes: list[NoteJson]


class AxesReply(TypedDict):
    """What a selection can be charted by: its parameters (and which vary), metrics, the
    default axes, every sweep, and for each view why it cannot draw (None: it can)."""

    params: list[str]
    varied: list[str]
    metrics: list[str]
    x: str | None
    y: str | None
    color: str | None
    sweeps: list[int]
    views: dict[str, str | None]
    objectives: list[str]  # an adaptive sweep's, else empty
    order: str  # what the forks are numbered by: "trial" (a study) or "fork"
    forks: int


ChartSpec = dict[str, Any]
"""A Vega-Lite spec (data inline) with ``usermeta.lithify``: kind, selection, y, brush (zoom,
filter or None), forks, and for the metric view x, color, log_x (and whether that was the
rule's choice, log_x_auto); for pareto y2; for rank x (its first parameter). The timeline
needs no metric: its y is None when the selection has none."""


class FilterReply(TypedDict):
    """The branches a filter expression selects, its canonical text, and how many there were."""

    query: str
    branches: list[int]
    count: int
    total: int


class SearchReply(TypedDict):
    query: str | None
    branch: int | None
    events: list[EventJson]


class MatrixReply(TypedDict):
    columns: list[str]
    rows: list[list[Any]]
    metrics: list[str]  # which columns are metrics (wide=1; with partial=1 some are partial)


class ForkJson(TypedDict):
    branch: int
    params: dict[str, Any]
    status: str
    step: int | None
    wall_s: float | None
    error: dict[str, Any] | None
    notebook: str | None
    metrics: dict[str, float]
    done: int | None
    total: int | None
    notebook_rel: str | None


class SweepJson(TypedDict):
    id: int
    kind: str  # grid, optimize or evolve
    base: int
    at: int
    grid: dict[str, list[Any]] | None
    space: dict[str, Any] | None  # an adaptive sweep's search space
    objectives: list[str] | None
    planned: int  # the forks it is to have: a study's trials, not only those forked so far
    running: bool  # a coordinator runs it: this server, or another process (sweep.watch)
    resume: str | None  # why Resume cannot run now (None: it can: forks or trials are left)
    forks: list[ForkJson]


class SweepsReply(TypedDict):
    sweeps: list[SweepJson]


class StudyRowJson(TypedDict):
    id: int
    kind: str  # grid, optimize or evolve
    state: str  # running, finished, failed, cancelled or pending
    planned: int
    counts: dict[str, int]  # forks by trial state (complete, pruned, failed, ...)
    objectives: list[str]  # empty for a grid
    directions: list[str]
    best: dict[str, Any] | None  # {value, branch, params} of a single objective's best
    pareto: int | None  # the Pareto front's size, for several objectives
    started: int | None  # unix ms of the first fork's start
    ended: int | None  # unix ms of the last fork's end (None while one runs)
    seconds: float | None
    base: int
    at: int


class StudiesReply(TypedDict):
    studies: list[StudyRowJson]


class SweepStarted(TypedDict):
    sweep: int
    forks: list[int]


class CancelReply(TypedDict):
    cancelled: int


class TailReply(TypedDict):
    cursor: int
    events: list[EventJson]


class StudyDefaultsJson(TypedDict):
    """What an optimize form starts from (``sweep.study_defaults``), and the choices it offers."""

    space: list[str]  # NAME=int:LOW:HIGH[:log] lines spanning the agent's default grid
    space_text: str
    objective: str | None
    direction: str
    directions: list[str]
    forks: int
    sampler: str
    samplers: list[str]
    pruner: str
    pruners: list[str]


class DefaultsReply(TypedDict):
    """What a sweep of the journal runs when the form gives nothing (``sweep.defaults``)."""

    agent: str | None
    base: int | None
    at: int | None
    grid: dict[str, list[Any]] | None
    grid_text: str
    seeds: int | None
    runner: str
    runners: list[str]
    notebook: str | None
    fn: str | None
    workers: int
    timeout: float | None
    study: StudyDefaultsJson


class TrialJson(TypedDict):
    number: int
    branch: int
    params: dict[str, Any]
    state: str  # complete, pruned, paused, failed, running
    values: list[float] | None
    value: float | None
    step: int | None
    parent: int | None
    user_attrs: dict[str, Any]
    constraints: dict[str, float] | None  # by name; <= 0 is satisfied
    feasible: bool


class StudyReply(TypedDict, total=False):
    """An adaptive sweep's study: ``best`` with one objective, ``pareto`` with several."""

    sweep: int
    objectives: list[str]
    directions: list[str]
    trials: list[TrialJson]
    counts: dict[str, int]
    best: TrialJson | None
    pareto: list[TrialJson]
