"""Rows shown as a text table: polars' rendering where polars is installed (the whole
workbench), plain aligned columns where it is not (the worker install, ``lithify-worker``,
which runs forks and sweeps without the results stack)."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from typing import Any


def has_polars() -> bool:
    """Whether polars can be imported here (not in the worker install)."""
    return importlib.util.find_spec("polars") is not None


def text(rows: Sequence[dict[str, Any]]) -> str:
    """``rows`` (dicts; the first row's keys first, then any others) as a table."""
    if has_polars():
        import polars as pl

        frame = pl.DataFrame(list(rows), infer_schema_length=None) if rows else pl.DataFrame()
        with pl.Config(
            tbl_rows=-1, tbl_cols=-1, tbl_width_chars=160, tbl_hide_dataframe_shape=True
        ):
            return str(frame)
    return plain(rows)


def plain(rows: Sequence[dict[str, Any]]) -> str:
    """Aligned columns, a header and a rule; empty cells for missing values."""
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    if not columns:
        return "(no rows)"
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(line.rstrip() for line in lines)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
