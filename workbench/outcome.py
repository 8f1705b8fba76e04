"""One rule for what a branch came to: its state and whether its values are final.

A fork of a sweep has a run record (``running``, then ``finished``, ``pruned``, ``paused``,
``failed`` or ``cancelled``); its state says the same in a study's words (``complete`` for
finished, as Optuna says). A branch outside every sweep has no state (None): it is whatever
its agent made of it. A branch's value of a metric is its last observation; it is *partial*
while the branch runs and when it stopped short (pruned, failed, cancelled): a pruned trial's
last report is an intermediate value, not a result. Paused population members keep their
values (they are the generation's results), and so do pending forks: no runner has started
them, so what they observed was written by whoever drives them (a notebook's own loop).
The matrix, the charts, the CLI and the Lab all read this module, so they agree on a
branch's value and state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

STATES = ("complete", "pruned", "paused", "failed", "cancelled", "running", "pending")
_OF_STATUS = {"finished": "complete"}
PARTIAL = frozenset({"pruned", "failed", "cancelled", "running"})


def state_of(status: str | None) -> str | None:
    """The state of a branch whose run status is ``status`` (None: not a sweep's fork)."""
    if status is None:
        return None
    return _OF_STATUS.get(status, status)


def is_partial(state: str | None) -> bool:
    """Whether a branch in ``state`` has only intermediate values (it runs or stopped short)."""
    return state in PARTIAL


def final_values(frame: pl.DataFrame, metrics: list[str], state: str = "state") -> pl.DataFrame:
    """``frame`` (one row per branch) with the ``metrics`` of partial branches emptied: what a
    table of results or a chart counts as a value."""
    import polars as pl

    present = [m for m in metrics if m in frame.columns]
    if state not in frame.columns or not present:
        return frame
    partial = pl.col(state).is_in(sorted(PARTIAL))
    return frame.with_columns(
        pl.when(partial).then(None).otherwise(pl.col(m)).alias(m) for m in present
    )
