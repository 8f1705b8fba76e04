"""``LiveResults``: the results matrix and its chart, refreshed from ``Journal.tail`` while a
sweep's workers write observations."""

from __future__ import annotations

import html
import threading
from typing import Any

import ipywidgets as w
import traitlets

from .. import charts, plugins
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
    """The matrix (a table of the newest rows) and a metric-vs-parameter chart (mean with a 95%
    band, individual branches faint), updated in the background as observations arrive."""

    sweep = traitlets.Int(-1)
    rows = traitlets.Int(0)

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
        agent = plugins.agent_for(journal.state_name)  # default axes: the journal's agent's
        x = x or (agent.x if agent else None)
        y = y or (agent.y if agent else None)
        if not x or not y:
            raise InvalidValue(
                "LiveResults needs x= (a parameter) and y= (a metric): the journal's agent names "
                "no defaults"
            )
        self.x, self.y, self.color = x, y, color
        self.live = mx.LiveMatrix(journal)
        self.interval = interval
        self.info = w.HTML()
        self.table = w.HTML(layout=w.Layout(max_height="260px", overflow="auto"))
        self.chart = alt.JupyterChart(
            self._placeholder(), embed_options={"renderer": "svg", "actions": False}
        )
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.RLock()
        super().__init__(**kw)
        self.children = [w.HTML("<b>Results</b>"), self.info, self.chart, self.table]
        if sweep is not None:
            self.sweep = sweep
        self.observe(lambda _: self.redraw(), "sweep")
        self.redraw()
        if autostart:
            self.start()

    def _placeholder(self) -> Any:
        import altair as alt
        import polars as pl

        return (
            alt.Chart(pl.DataFrame({"note": ["waiting for observations…"]}))
            .mark_text(size=14)
            .encode(text="note")
            .properties(width=420, height=60)
        )

    def frame(self) -> Any:
        """The long matrix so far, limited to the followed sweep when one is set."""
        import polars as pl

        df = self.live.frame
        if self.sweep >= 0 and len(df):
            ids = next((s.branches for s in self.journal.sweeps() if s.id == self.sweep), [])
            df = df.filter(pl.col("branch").is_in(ids))
        return df

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
        have = len(df) and self.x in df.columns and self.y in set(df["metric"].to_list())
        if have:
            data = df.filter(pl.col(self.x).is_not_null())
            have = len(data.filter(pl.col("metric") == self.y)) > 0
        self.chart.chart = (
            charts.metric_vs_param(
                data, x=self.x, y=self.y, color=self.color, log_x=charts.auto_log_x(data, self.x)
            )
            if have
            else self._placeholder()
        )
        self.rows = len(df)  # last: watchers of rows see a finished view

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
