"""``LiveResults``: the results matrix and its chart, refreshed from ``Journal.tail`` while a
sweep's workers write observations. The chart is any of ``workbench.charts``' views; a click on
a branch's mark sets ``picked`` (the ``Workbench`` selects that branch in its explorer)."""

from __future__ import annotations

import html
import threading
from typing import Any

import ipywidgets as w
import traitlets

from .. import charts
from .. import matrix as mx
from ..errors import InvalidValue
from ..journal import Journal

_OFFLINE = False


def offline_charts() -> None:
    """Make altair's JupyterChart load Vega from the package, never from a CDN."""
    global _OFFLINE
    if not _OFFLINE:
        import altair as alt

        alt.JupyterChart.enable_offline()
        _OFFLINE = True


class LiveResults(w.VBox):
    """The matrix (a table of the newest rows) and a chart — metric vs parameter (mean with a
    95% band, individual branches faint) or any other view — updated in the background as
    observations arrive. The "log x" box shows what the axis does (the rule's choice until the
    user ticks it)."""

    sweep = traitlets.Int(-1)
    rows = traitlets.Int(0)
    picked = traitlets.Int(-1)  # the branch whose mark was clicked last

    def __init__(
        self,
        journal: Journal,
        x: str | None = None,
        y: str | None = None,
        color: str | None = None,
        sweep: int | None = None,
        interval: float = 0.5,
        autostart: bool = True,
        **kw: Any,
    ) -> None:
        import altair as alt

        offline_charts()
        self.journal = journal
        axes = charts.default_axes(journal, x=x, y=y, color=color, sweep=sweep)
        x, y, color = axes.x, axes.y, axes.color
        if not x or not y:
            raise InvalidValue(
                "LiveResults needs x= (a parameter) and y= (a metric): the journal's agent names "
                "no defaults"
            )
        self.x, self.y, self.color = x, y, color
        self.agg = "mean"
        self.log_x: bool | None = None  # None: the rule's (auto_log_x)
        self.kind = "metric"
        self._showing = False  # the box is being set to what the axis does, not by the user
        self.live = mx.LiveMatrix(journal)
        self.interval = interval
        self.info = w.HTML()
        self.pick_x = w.Dropdown(description="x", options=[x], value=x)
        self.pick_y = w.Dropdown(description="y", options=[y], value=y)
        self.pick_color = w.Dropdown(
            description="colour",
            options=[("(none)", "")] + ([color] if color else []),
            value=color or "",
        )
        self.pick_agg = w.Dropdown(description="agg", options=list(charts.AGGREGATIONS))
        self.pick_log = w.Checkbox(description="log x (auto)", value=False, indent=False)
        self.pick_view = w.Dropdown(description="view", options=list(charts.KINDS))
        for control in (self.pick_x, self.pick_y, self.pick_color, self.pick_agg, self.pick_view):
            control.observe(lambda _: self._picked(), "value")
        self.pick_log.observe(lambda _: self._log_picked(), "value")
        self.downloads = w.HTML()
        self.export_buttons = [
            w.Button(description=fmt.upper(), layout=w.Layout(width="80px"))
            for fmt in ("csv", "parquet", "png", "svg")
        ]
        for button, fmt in zip(self.export_buttons, ("csv", "parquet", "png", "svg"), strict=True):
            button.on_click(lambda _, fmt=fmt: self._offer(fmt))
        self.table = w.HTML(layout=w.Layout(max_height="260px", overflow="auto"))
        self.chart = alt.JupyterChart(
            self._placeholder(), embed_options={"renderer": "svg", "actions": False}
        )
        self.chart.observe(self._clicked, "_vl_selections")
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.RLock()
        super().__init__(**kw)
        self.children = [
            w.HTML("<b>Results</b>"),
            self.info,
            w.HBox([self.pick_view, self.pick_x, self.pick_y, self.pick_color]),
            w.HBox([self.pick_agg, self.pick_log]),
            self.chart,
            w.HBox([w.HTML("download:"), *self.export_buttons]),
            self.downloads,
            self.table,
        ]
        if sweep is not None:
            self.sweep = sweep
        self.observe(lambda _: self.redraw(), "sweep")
        self.redraw()
        if autostart:
            self.start()

    def _placeholder(self, note: str = "waiting for observations…") -> Any:
        import altair as alt
        import polars as pl

        return (
            alt.Chart(pl.DataFrame({"note": [note]}))
            .mark_text(size=14)
            .encode(text="note")
            .properties(width=420, height=60)
        )

    def _clicked(self, change: dict[str, Any]) -> None:
        """A click on a branch's mark (the charts' ``pick`` selection): ``picked``."""
        from altair.utils.selection import PointSelection

        pick = (change["new"] or {}).get("pick")
        if not isinstance(pick, dict):
            return
        points = PointSelection.from_vega("pick", pick.get("value"), pick.get("store", [])).value
        found = points[0].get("branch") if points else None
        if isinstance(found, (int, float)) and not isinstance(found, bool):
            self.picked = int(found)

    def frame(self) -> Any:
        """The long matrix so far, limited to the followed sweep when one is set."""
        import polars as pl

        df = self.live.frame
        if self.sweep >= 0 and len(df):
            ids = next((s.branches for s in self.journal.sweeps() if s.id == self.sweep), [])
            df = df.filter(pl.col("branch").is_in(ids))
        return df

    def _picked(self) -> None:
        self.x, self.y = self.pick_x.value, self.pick_y.value
        self.color = self.pick_color.value or None
        self.agg, self.kind = self.pick_agg.value, self.pick_view.value
        self.redraw()

    def _log_picked(self) -> None:
        if self._showing:
            return
        self.log_x = self.pick_log.value  # the user's choice from now on
        self.redraw()

    def _show_log(self, log: bool) -> None:
        """The box says what the x axis does, and whether the rule chose it."""
        self._showing = True
        try:
            self.pick_log.value = log
            self.pick_log.description = "log x (auto)" if self.log_x is None else "log x"
        finally:
            self._showing = False

    def _choices(self, df: Any) -> None:
        """The pickers offer the parameters and metrics the matrix holds."""
        params = [p for p in mx.param_columns(df) if p not in ("metric", "value")]
        metrics = sorted(set(df["metric"].to_list())) if len(df) else []
        for picker, options in ((self.pick_x, params), (self.pick_y, metrics)):
            merged = list(dict.fromkeys([picker.value, *options]))
            if list(picker.options) != merged:
                picker.options = merged
        colors = [("(none)", ""), *[(p, p) for p in params]]
        if list(self.pick_color.options) != colors:
            keep = self.pick_color.value
            self.pick_color.options = colors
            self.pick_color.value = keep if keep in params else ""

    def export(self, fmt: str) -> bytes:
        """The matrix (csv, parquet) or the chart (png, svg) as the file's bytes."""
        import io

        df = self.frame()
        if fmt in ("csv", "parquet"):
            buf = io.BytesIO()
            (df.write_csv if fmt == "csv" else df.write_parquet)(buf)
            return buf.getvalue()
        if fmt not in ("png", "svg"):
            raise InvalidValue(f"export takes csv, parquet, png or svg, not {fmt!r}")
        import vl_convert as vlc

        chart = self.chart.chart
        if chart is None:
            raise InvalidValue("no chart yet: wait for observations")
        spec = chart.to_dict()
        return (
            vlc.vegalite_to_png(spec, scale=2)
            if fmt == "png"
            else vlc.vegalite_to_svg(spec).encode()
        )

    def _offer(self, fmt: str) -> None:
        import base64

        data = base64.b64encode(self.export(fmt)).decode("ascii")
        mime = {
            "csv": "text/csv",
            "parquet": "application/vnd.apache.parquet",
            "png": "image/png",
            "svg": "image/svg+xml",
        }[fmt]
        name = f"results{'' if self.sweep < 0 else f'-sweep-{self.sweep}'}.{fmt}"
        self.downloads.value = (
            f"<a download='{name}' href='data:{mime};base64,{data}'>save {name}</a>"
        )

    def refresh(self) -> int:
        """Fold in new observations and redraw if any arrived; returns how many."""
        with self._lock:
            n = self.live.refresh()
            if n:
                self.redraw()
        return n

    def redraw(self) -> None:
        """Rebuild the table and the chart from the current frame."""
        with self._lock:
            self._redraw()

    def _redraw(self) -> None:
        import polars as pl

        df = self.frame()
        branches = df["branch"].n_unique() if len(df) else 0
        self.info.value = (
            f"<span data-rows='{len(df)}' data-branches='{branches}'>{len(df)} rows from "
            f"{branches} branches{'' if self.sweep < 0 else f' of sweep {self.sweep}'}</span>"
        )
        shown = df.tail(12)
        cols = [c for c in shown.columns if c not in ("ts", "branch_name")]
        head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in row) + "</tr>"
            for row in shown.select(cols).iter_rows()
        )
        self.table.value = f"<table style='font-size:12px'><tr>{head}</tr>{body}</table>"
        if len(df):
            self._choices(df)
        have = len(df) and self.x in df.columns and self.y in set(df["metric"].to_list())
        if have:
            data = df.filter(pl.col(self.x).is_not_null())
            have = len(data.filter(pl.col("metric") == self.y)) > 0
        log_x = (
            (self.log_x if self.log_x is not None else charts.auto_log_x(data, self.x))
            if have
            else False
        )
        if have and log_x:
            positive = data.filter(pl.col(self.x) > 0) if data.schema[self.x].is_numeric() else data
            log_x = len(positive) == len(data)  # a log axis only for positive values
        color = self.color if self.color in df.columns else None
        if self.kind != "metric":
            self.chart.chart = self._view() if len(df) else self._placeholder()
        elif have:
            self.chart.chart = charts.metric_vs_param(
                data, x=self.x, y=self.y, color=color, log_x=log_x, agg=self.agg
            )
            self._show_log(bool(log_x))
        else:
            self.chart.chart = self._placeholder()
        self.rows = len(df)  # last: watchers of rows see a finished view

    def _view(self) -> Any:
        """Any other view of the followed sweep (or every branch), or why it cannot draw."""
        from ..errors import CannotDraw

        selection = charts.Selection(sweep=self.sweep if self.sweep >= 0 else None)
        try:
            return charts.view(self.journal, self.kind, selection, y=self.y).chart
        except CannotDraw as e:
            return self._placeholder(str(e))

    def start(self) -> None:
        """Refresh in a background thread every ``interval`` seconds."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop refreshing."""
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.refresh()
            except Exception as e:  # noqa: BLE001 (keep the view alive; show what went wrong)
                self.info.value = (
                    f"<span style='color:#c00'>refresh failed: {html.escape(str(e))}</span>"
                )


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else ("" if v is None else str(v))
