"""The results routes: the axes and the views a selection can draw, the matrix, a view as a
Vega-Lite spec (``chart.json``, drawn in the browser) or rendered here (``chart.svg``,
``chart.png``), and the filter expression over branches. A selection is ``sweep=N``,
``sweeps=A,B`` (overlaid), ``branches=1,2,3`` or nothing (every branch), narrowed by
``where=EXPR``; every view is ``charts.view``'s, every axis ``default_axes``' rule."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from tornado import web

from .. import charts, filters
from ..errors import InvalidValue
from ..storage import is_url
from . import shapes
from .base import Base, Download, _int

if TYPE_CHECKING:
    import polars as pl


def _ints(value: str | None, name: str) -> tuple[int, ...] | None:
    if value is None or not value.strip():
        return None
    return tuple(_int(v.strip(), name) for v in value.split(",") if v.strip())


class Results(Base):
    """A results route: the selection and the view options from the query."""

    def selection(self) -> charts.Selection:
        sweep = self.arg("sweep")
        return charts.Selection(
            sweep=_int(sweep, "sweep") if sweep else None,
            sweeps=_ints(self.arg("sweeps"), "sweeps"),
            branches=_ints(self.arg("branches"), "branches"),
            where=(self.arg("where") or "").strip() or None,
            partial=self.arg("partial") in ("1", "true"),
        )

    def view_options(self) -> dict[str, Any]:
        """``charts.view``'s keyword arguments from the query (absent: the rule decides)."""
        log = self.arg("log_x")
        params = self.arg("params")
        return {
            "x": self.arg("x") or None,
            "y": self.arg("y") or None,
            "y2": self.arg("y2") or None,
            "color": self.arg("color"),  # "" is no colour, absent the rule's
            "params": [p for p in params.split(",") if p] if params else None,
            "agg": self.arg("agg") or "mean",
            "log_x": None if log in (None, "", "auto") else log in ("1", "true"),
            "direction": self.arg("direction") or None,
            "direction2": self.arg("direction2") or None,
            "evaluator": self.arg("evaluator") or "fanova",
            "theme": self.arg("theme") or "light",
        }


class Axes(Results):
    """GET ?journal=J[&sweep=N|sweeps=A,B|branches=..][&where=EXPR][&y=M&y2=M]: the
    parameters and metrics the selection has, the default axes (``charts.default_axes``' rule),
    and for each view why it cannot draw (null: it can)."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.AxesReply:
            j = self.journal()
            res = charts.gather(j, self.selection(), table=self.hub.table(j))
            y = self.arg("y") or None
            axes = charts.axes.axes_of(
                j, res.params, res.metrics, res.table, y=y or next(iter(res.objectives), None)
            )
            return {
                **axes.to_json(),  # type: ignore[typeddict-item]
                "sweeps": [s.id for s in j.sweeps()],
                "views": charts.why_not(j, y=y, y2=self.arg("y2") or None, res=res),
                "objectives": list(res.objectives),
                "order": res.order_label,
                "forks": res.table.height,
            }

        await self.reply(run)


def shown_columns(df: pl.DataFrame) -> pl.DataFrame:
    """The matrix as a table shows it: without a ``branch_name`` column no branch fills (a
    sweep's forks have no names), nor a ``metric_<name>`` that only repeats the parameter of
    its name on every branch (an agent observing its own budget)."""
    import polars as pl

    drop = []
    if "branch_name" in df.columns and df["branch_name"].null_count() == df.height:
        drop.append("branch_name")
    for col in df.columns:
        param = col.removeprefix("metric_")
        if param == col or param not in df.columns:
            continue
        try:
            same = df.select((pl.col(col).is_null() | (pl.col(col) == pl.col(param))).all()).item()
        except pl.exceptions.PolarsError:
            continue  # a metric and a parameter of different kinds never repeat each other
        if same:
            drop.append(col)
    return df.drop(drop)


def with_annotations(df: pl.DataFrame, table: pl.DataFrame) -> pl.DataFrame:
    """A wide matrix with the branch table's ``notes`` and ``artifacts`` of its branches, each
    only when some branch has one (the Lab's table shows them; exports keep the matrix as
    ``lithify matrix`` writes it)."""
    cols = [
        c
        for c in ("notes", "artifacts")
        if c in table.columns and c not in df.columns and table[c].null_count() < table.height
    ]
    if not cols or "branch" not in df.columns:
        return df
    return df.join(table.select("branch", *cols), on="branch", how="left")


class Matrix(Results):
    """GET ?journal=J[&sweep=N|branches=..][&where=EXPR][&wide=1][&format=json|csv|parquet]:
    the results matrix as JSON rows (the default) or as a file download, the same file
    `lithify matrix -o` writes."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.MatrixReply | Download:
            fmt = self.arg("format") or "json"
            if fmt not in ("json", "csv", "parquet"):
                raise InvalidValue(f"format is json, csv or parquet, not {fmt!r}")
            j = self.journal()
            sel = self.selection()
            ids = sel.branches
            if sel.where:
                table = charts.gather(j, sel, table=self.hub.table(j)).table
                ids = tuple(table["branch"].to_list())
            if sel.sweeps:
                wanted = set(sel.sweeps)
                ids = tuple(b for s in j.sweeps() if s.id in wanted for b in s.branches)
            wide = self.arg("wide") in ("1", "true")
            df = j.matrix(sweep=sel.sweep, branches=ids, wide=wide, partial=wide and sel.partial)
            if fmt == "json":
                whole = self.hub.table(j)
                names = set(whole.metrics)
                df = shown_columns(df)
                if wide:
                    df = with_annotations(df, whole.frame)
                return {
                    "columns": df.columns,
                    "rows": [list(r) for r in df.iter_rows()],
                    "metrics": [c for c in df.columns if wide and c in names],
                }
            buf = io.BytesIO()
            if fmt == "csv":
                df.write_csv(buf)
                mime = "text/csv; charset=utf-8"
            else:
                df.write_parquet(buf)
                mime = "application/vnd.apache.parquet"
            stem = Path(j.path).stem if not is_url(j.path) else "journal"
            tag = f"-sweep{sel.sweep}" if sel.sweep is not None else ""
            return Download(buf.getvalue(), mime, f"{stem}-matrix{tag}.{fmt}")

        await self.reply(run)


class Chart(Results):
    """GET chart.json|chart.svg|chart.png ?journal=J&kind=metric|history|importance|slice|
    contour|parallel|steps|pareto|timeline|rank|edf [selection] [&x=..&y=..&y2=..&color=..
    &params=A,B&agg=..&log_x=1|0&direction=..&theme=light|dark]: the view as a Vega-Lite
    spec with its data inline (drawn in the browser), or rendered here as SVG or PNG, the
    same parameters."""

    @web.authenticated
    async def get(self) -> None:
        kind = self.request.path.rsplit(".", 1)[-1]

        def run() -> shapes.ChartSpec | Download:
            j, sel = self.journal(), self.selection()
            drawn = charts.view(  # the cached table the axes, matrix and filter routes read
                j,
                self.arg("kind") or "metric",
                sel,
                res=charts.gather(j, sel, table=self.hub.table(j)),
                **self.view_options(),
            )
            spec = drawn.spec()
            if kind == "json":
                return spec
            import vl_convert as vlc

            if kind == "png":
                return Download(vlc.vegalite_to_png(spec, scale=2), "image/png")
            return Download(vlc.vegalite_to_svg(spec).encode(), "image/svg+xml")

        await self.reply(run)


class Filter(Results):
    """GET ?journal=J&q=EXPR[&sweep=N|branches=..]: the branches a filter expression selects
    (``workbench.filters``: ``budget >= 1000 and recall > 0.5``, ``status == failed``), and how
    many there were; a bad expression is one 400 that says where and what was expected."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.FilterReply:
            j = self.journal()
            sel = self.selection()
            parsed = filters.parse(self.arg("q") or "")
            table = charts.gather(j, sel, table=self.hub.table(j)).table
            picked = parsed.apply(table)["branch"].to_list()
            return {
                "query": str(parsed),
                "branches": picked,
                "count": len(picked),
                "total": table.height,
            }

        await self.reply(run)


__all__ = ["Axes", "Chart", "Filter", "Matrix"]


class Studies(Base):
    """GET ?journal=J: every sweep and study at a glance, newest first (``sweep.overview``):
    kind, objectives, best value with its branch and params, forks by state, when it ran. A
    sweep a coordinator drives now (this server or another process) says ``running``."""

    @web.authenticated
    async def get(self) -> None:
        def run() -> shapes.StudiesReply:
            from ..sweep.overview import overview

            j = self.journal()
            hows = {s.id: s.how for s in j.sweeps()}
            rows = []
            for row in overview(j):
                doc = cast(shapes.StudyRowJson, row.to_json())
                doc["state"] = self.shown_state(j, row.id, hows.get(row.id, {}), doc["state"])
                rows.append(doc)
            return {"studies": rows}

        await self.reply(run)
