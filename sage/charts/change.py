"""Change displays: a measure between two periods, and the difference between two places.

One place's change is a row of numbers (both periods, the change, the percent change, each with its margin); several
places' change is a dumbbell of both periods beside the change ranked in bars with its error bars; a difference of
two places is the two values and how far apart they are.  Only the drawing: whether a change fits these at all, or
goes on a map, is decided in :mod:`.builders`.
"""

from __future__ import annotations

import math
from typing import Final

import altair as alt
import pandas as pd

from .bars import _bar_chart, _order
from .frame import Shape, d3_format
from .shape import Change, Difference, humanize
from .spec import ChartSpec, _metric, _place_of_row, _plot_frame

#: the earlier and the later period of a change (a light and a dark blue)
PERIOD_COLORS: Final = ("#93c5fd", "#1d4ed8")


def _change_numbers(shape: Shape, ch: Change, hint: str, note: str) -> ChartSpec:
    """One place's change: both periods, the change and the percent change, each with its margin, side by side."""
    where = _place_of_row(shape, 0)
    metrics = [_metric(shape, ch.earlier_col, 0, ch.earlier), _metric(shape, ch.later_col, 0, ch.later),
               _metric(shape, ch.change, 0, "Change", signed=True)]
    if ch.pct:
        metrics.append(_metric(shape, ch.pct, 0, "Percent change", signed=True))
    return ChartSpec("statrow", hint, metrics=metrics, note=f"{note} · {where}" if where else note)


def _change_panels(shape: Shape, focused: Shape, ch: Change, ranked: str, hint: str, title: str | None,
                   note: str) -> ChartSpec:
    """Several places' change: both periods of each place on a dumbbell beside the change (the ``ranked`` column of
    ``focused``, the change or the percent change) ranked in bars with its error bars."""
    data, fields = _plot_frame(focused, [ranked, ch.earlier_col, ch.later_col])
    order = _order(data, "v0")
    panels = [
        _dumbbell(data, fields[ch.earlier_col], fields[ch.later_col], ch, shape.units[ch.earlier_col],
                  shape.label_title, order),
        _bar_chart(data, "v0", f"{humanize(ranked)}, {ch.earlier} → {ch.later}", shape.label_title,
                   shape.units[ranked], has_moe=ranked in shape.moe, title=None, axis_labels=False,
                   sort=order).properties(width=260),
    ]
    chart = alt.hconcat(*panels, spacing=10).resolve_scale(color="independent")
    if title:
        chart = chart.properties(title=title)
    return ChartSpec("bar", hint, chart=chart, note=note, wide=True)


def _ranked_by(frame: pd.DataFrame, columns: list[str]) -> str:
    """The column the rows are sorted by (a ranking by change, or by percent change), else the first."""
    for c in columns:
        values = [float(v) for v in frame[c] if v is not None and not math.isnan(v)]
        if len(values) > 1 and len(set(values)) > 1 and values in (sorted(values), sorted(values, reverse=True)):
            return c
    return columns[0]


def _dumbbell(data: pd.DataFrame, early: str, late: str, ch: Change, unit: str, label_title: str,
              order: list[str]) -> alt.LayerChart | alt.FacetChart:
    """Each place's two periods as two dots joined by a line: where it was, where it is."""
    fmt = d3_format(unit, pd.concat([data[early], data[late]]))
    periods = [ch.earlier, ch.later]
    long = pd.concat([pd.DataFrame({"place": data["place"], "period": p, "value": data[f]})
                      for p, f in ((ch.earlier, early), (ch.later, late))], ignore_index=True)
    y = alt.Y("place:N", sort=order, title=None, axis=alt.Axis(labelLimit=220, ticks=False, domain=False,
                                                              labelFontSize=12))
    x_title = humanize(ch.measure)  # the periods are the legend's
    x = alt.X("value:Q", title=x_title, scale=alt.Scale(zero=False),
              axis=alt.Axis(format=fmt, grid=True, tickCount=4, titleLimit=300))
    line = alt.Chart(data).mark_rule(color="#9ca3af", strokeWidth=2).encode(
        y=y, x=alt.X(f"{early}:Q"), x2=alt.X2(late))
    dots = alt.Chart(long).mark_circle(size=90, opacity=1).encode(
        y=y, x=x,
        color=alt.Color("period:N", sort=periods, title=None,
                        scale=alt.Scale(domain=periods, range=list(PERIOD_COLORS)), legend=alt.Legend(orient="top")),
        tooltip=[alt.Tooltip("place:N", title=label_title or "Place"), alt.Tooltip("period:N", title="Period"),
                 alt.Tooltip("value:Q", title=humanize(ch.measure), format=fmt)],
    )
    return alt.layer(line, dots).properties(width=320, height=max(150, 32 * len(data)))


def _difference(shape: Shape, d: Difference, hint: str) -> ChartSpec:
    """Two places and how far apart they are: each value with its margin, then the difference with its own."""
    frame = shape.frame
    first, second = str(frame["first_place"].iloc[0]), str(frame["second_place"].iloc[0])
    metrics = [_metric(shape, d.first_col, 0, first), _metric(shape, d.second_col, 0, second),
               _metric(shape, "difference", 0, "Difference", signed=True)]
    return ChartSpec("statrow", hint, metrics=metrics, note=humanize(d.measure))


__all__ = ["PERIOD_COLORS"]
