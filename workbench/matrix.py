"""The results matrix: observations from every branch joined to each branch's merged params."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

    from .journal import Journal

FIXED_COLUMNS = ("branch", "branch_name", "seq", "metric", "value", "ts")


def merged_params(journal: Journal) -> dict[int, dict[str, Any]]:
    """Every branch's params merged from the root down (a child overrides its ancestors)."""
    merged: dict[int, dict[str, Any]] = {}
    for bid, _, parent, _, params, _, _ in journal._db().branch_rows():
        own = json.loads(params)
        merged[bid] = {**merged[parent], **own} if parent is not None and parent in merged else own
    return merged


def _column(values: list[Any]) -> list[Any]:
    # Nested values become JSON text so every parameter column has one scalar dtype.
    if any(isinstance(v, (dict, list)) for v in values):
        return [None if v is None else json.dumps(v, sort_keys=True) for v in values]
    kinds = {type(v) for v in values if v is not None}
    if len(kinds) > 1 and not kinds <= {int, float}:
        return [None if v is None else str(v) for v in values]
    return values


def build_matrix(journal: Journal) -> pl.DataFrame:
    """One row per observation: branch, branch_name, seq, metric, value, ts, then params."""
    import polars as pl

    journal.flush()
    db = journal._db()
    obs = db.observations()
    names = {r[0]: r[1] for r in db.branch_rows()}
    params = merged_params(journal)
    keys = sorted({k for p in params.values() for k in p})
    cols = {f"param_{k}" if k in FIXED_COLUMNS else k: k for k in keys}
    frame = pl.DataFrame(
        {
            "branch": [r[1] for r in obs],
            "branch_name": [names.get(r[1]) for r in obs],
            "seq": [r[2] for r in obs],
            "metric": [r[3] for r in obs],
            "value": [r[4] for r in obs],
            "ts": [r[5] for r in obs],
        },
        schema={
            "branch": pl.Int64,
            "branch_name": pl.Utf8,
            "seq": pl.Int64,
            "metric": pl.Utf8,
            "value": pl.Float64,
            "ts": pl.Int64,
        },
    )
    if not keys:
        return frame
    ids = sorted(params)
    pframe = pl.DataFrame(
        {"branch": ids, **{c: _column([params[i].get(k) for i in ids]) for c, k in cols.items()}},
        strict=False,
    ).with_columns(pl.col("branch").cast(pl.Int64))
    return frame.join(pframe, on="branch", how="left")
