"""What every view shares: the theme, the ways a chart answers back (a tooltip on every mark
that stands for branches, a click that picks a branch, a brush), the spec the browser draws and
the files a chart is saved as.

The interactions are Vega-Lite parameters with fixed names, so every client reads them alike:
``pick`` (click a point or a line: its ``branch``), ``brush`` (drag an interval: the Lab zooms
to it, or, on parallel coordinates, keeps the branches inside it) and ``keep`` (the branches a
client wants drawn strongly; empty: all)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..errors import CannotDraw, InvalidValue
from ..matrix import SEED_LIKE

if TYPE_CHECKING:
    import altair as alt
    import polars as pl

THEMES = ("light", "dark")
PICK, BRUSH, KEEP = "pick", "brush", "keep"
NUMBER = ".4~g"  # how values read in tooltips
NOTES = "notes"  # the branch table's column of each branch's notes: every tooltip shows it


def layered(*charts: Any) -> alt.LayerChart:
    """``alt.layer`` of charts without facets, typed as what it then is: a LayerChart."""
    import altair as alt

    out = alt.layer(*charts)
    if not isinstance(out, alt.LayerChart):  # altair layers faceted charts into a FacetChart
        raise TypeError(f"layered() takes charts without facets; got {type(out).__name__}")
    return out


def check_theme(theme: str) -> None:
    if theme not in THEMES:
        raise InvalidValue(f"theme is one of {', '.join(THEMES)}, not {theme!r}")


C = TypeVar("C")  # an altair chart of any kind: themed gives back the same kind
INK = {"light": "#888888", "dark": "#e0e0e0"}  # labels a view draws itself, on each theme


def ink(theme: str) -> str:
    """The colour of text and ticks a view draws itself (an axis' labels drawn as marks):
    muted grey on the light theme, the dark theme's foreground (its axes' ink) on the dark."""
    check_theme(theme)
    return INK[theme]


def themed(chart: C, theme: str) -> C:
    """A chart as drawn for JupyterLab's theme: "light" as it is, "dark" on a dark background
    with light ink."""
    check_theme(theme)
    if theme != "dark":
        return chart
    fg, grid = INK["dark"], "#444444"
    configured: Any = chart  # altair's methods carry no annotations
    return cast(
        C,
        configured.configure(background="#1e1e1e")
        .configure_axis(labelColor=fg, titleColor=fg, gridColor=grid, domainColor=fg, tickColor=fg)
        .configure_legend(labelColor=fg, titleColor=fg)
        .configure_title(color=fg)
        .configure_text(color=fg),
    )


def cannot(view: str, why: str) -> CannotDraw:
    """The one-line reason a view does not draw (shown where the chart would be)."""
    return CannotDraw(f"{view}: {why}", view=view)


def pick() -> Any:
    """Click a mark to pick its branch (double-click: none)."""
    import altair as alt

    return alt.selection_point(name=PICK, fields=["branch"], on="click", clear="dblclick")


def brush(encodings: Sequence[str] = ("x",)) -> Any:
    """Drag an interval (double-click clears it)."""
    import altair as alt

    chosen: Any = list(encodings)
    return alt.selection_interval(name=BRUSH, encodings=chosen)


def picked_size(base: float = 40, picked: float = 160) -> Any:
    """A mark's size: larger for the picked branch."""
    import altair as alt

    return alt.condition(alt.param(PICK, empty=False), alt.value(picked), alt.value(base))


def partial_shape() -> Any:
    """A point's shape by its fork's state (the ``_state`` column): a triangle for a value
    that is only the last report of a fork that runs or stopped short (partial values shown:
    ``Selection.partial``), else a circle."""
    import altair as alt

    from ..outcome import PARTIAL

    states = ", ".join(f"'{s}'" for s in sorted(PARTIAL))
    test = f"indexof([{states}], datum._state) >= 0"
    return alt.condition(test, alt.value("triangle-up"), alt.value("circle"))


def values(frame: pl.DataFrame) -> alt.InlineData:
    """Rows inline in the spec (no row limit: altair's 5,000 rows guard frames, and views
    reduce their data in polars first). NaN and infinities become null (JSON has neither)."""
    import altair as alt
    import polars as pl
    from altair.utils.schemapi import debug_mode

    floats = [c for c, t in frame.schema.items() if t in (pl.Float32, pl.Float64)]
    if floats:
        frame = frame.with_columns(
            pl.when(pl.col(c).is_finite()).then(pl.col(c)).otherwise(None).alias(c) for c in floats
        )
    with debug_mode(False):  # rows are not checked one by one (seconds for 10^4 of them)
        return alt.InlineData(values=frame.to_dicts())


def final(frame: pl.DataFrame, y: str) -> pl.Expr:
    """The rows whose value of ``y`` is a result: a finite number, of a fork that did not stop
    short or still runs (``outcome.PARTIAL``: with ``Selection.partial``, theirs are only last
    reports)."""
    import polars as pl

    from ..outcome import PARTIAL
    from .data import STATE

    value = pl.col(y).is_not_null()
    if frame.schema[y].is_float():
        value = value & pl.col(y).is_finite()
    if STATE in frame.columns:
        value = value & ~pl.col(STATE).is_in(sorted(PARTIAL)).fill_null(False)
    return value


def bounds(series: pl.Series) -> tuple[float, float]:
    """The smallest and largest of a numeric series (nulls left out)."""
    lo: Any = series.min()
    hi: Any = series.max()
    return float(lo), float(hi)


def is_number(frame: pl.DataFrame, column: str) -> bool:
    """Whether a column holds numbers (booleans are categories)."""
    import polars as pl

    dtype = frame.schema[column]
    return dtype.is_numeric() and dtype != pl.Boolean


def field_type(frame: pl.DataFrame, column: str) -> str:
    """The Vega-Lite type of a column: quantitative for numbers, nominal otherwise."""
    return "quantitative" if is_number(frame, column) else "nominal"


def varied(frame: pl.DataFrame, params: Iterable[str], seeds: bool = False) -> list[str]:
    """The parameters that take more than one value across these rows (seed-like ones only
    with ``seeds``: they are repetitions, not choices)."""
    out = []
    for p in params:
        if p not in frame.columns or (not seeds and p in SEED_LIKE):
            continue
        if frame.select(p).drop_nulls().unique().height > 1:
            out.append(p)
    return out


def is_log(frame: pl.DataFrame, column: str) -> bool:
    """A log scale for a positive numeric column spanning at least a factor of 20."""
    if column not in frame.columns or not is_number(frame, column):
        return False
    vals = [v for v in frame[column].drop_nulls().to_list() if math.isfinite(v)]
    return bool(vals) and min(vals) > 0 and max(vals) / min(vals) >= 20


def with_notes(frame: pl.DataFrame, columns: list[str]) -> list[str]:
    """``columns`` and the branch table's ``notes`` when some branch of ``frame`` has any: a
    view that charts a selection of the table's columns keeps them for its tooltips."""
    has = NOTES in frame.columns and frame[NOTES].null_count() < frame.height
    return [*columns, NOTES] if has and NOTES not in columns else columns


def tooltips(
    frame: pl.DataFrame, columns: Iterable[str], titles: dict[str, str] | None = None
) -> list[Any]:
    """Tooltip entries for the columns present (numbers formatted to 4 significant digits)."""
    import altair as alt

    titles = titles or {}
    out = []
    for c in with_notes(frame, list(dict.fromkeys(columns))):
        if c not in frame.columns:
            continue
        title = titles.get(c, c)
        if c == "branch":
            out.append(alt.Tooltip("branch:N", title=title))
        elif is_number(frame, c):
            out.append(alt.Tooltip(f"{c}:Q", title=title, format=NUMBER))
        else:
            out.append(alt.Tooltip(f"{c}:N", title=title))
    return out


def spec(chart: Any, **meta: Any) -> dict[str, Any]:
    """The Vega-Lite spec a browser draws (data inline), with what clients need to know about
    it in ``usermeta.lithify`` (the view, whether x is logarithmic, how a brush acts, ...).
    Not validated here: altair's check walks every data row (seconds for 10^4 branches); the
    tests validate views against the Vega-Lite schema."""
    doc: dict[str, Any] = chart.to_dict(validate=False)
    doc["usermeta"] = {**doc.get("usermeta", {}), "lithify": meta}
    return doc


def save(chart: Any, path: str | Path, scale_factor: float = 2.0) -> Path:
    """Write a chart as .png, .svg (no browser needed), .html (self-contained) or .json."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".png":
        chart.save(str(p), scale_factor=scale_factor)
    elif suffix == ".svg":
        chart.save(str(p))
    elif suffix == ".html":
        chart.save(str(p), inline=True)
    elif suffix == ".json":
        chart.save(str(p))
    else:
        raise InvalidValue(
            f"cannot tell the image format of {p.name}: use .png, .svg, .html or .json"
        )
    return p
