"""Bar charts from a plot frame (:func:`~sage.charts.spec._plot_frame`): ranked horizontal bars with their values
written on them and the 90% interval as whiskers, and bars grouped side by side per place.

Only the drawing: which result gets bars, and what to show when bars do not fit, is decided in :mod:`.builders`;
the change display (:mod:`.change`) draws its change with the same bars.
"""

from __future__ import annotations

import math
from typing import Final

import altair as alt
import pandas as pd

from .frame import d3_format
from .spec import RELIABILITY_TITLE

#: bars at least this share of the longest carry their value label inside
INSIDE_LABEL_SHARE = 0.55
#: whiskers of the 90% interval (value ± margin of error) on bars
WHISKER_COLOR: Final = "#1f2937"


def _order(data: pd.DataFrame, field_name: str) -> list[str]:
    """Places in ranking order: the query's own order when it is ascending (a "bottom 5"), else largest first."""
    values = data[field_name].tolist()
    clean = [v for v in values if v is not None and not math.isnan(v)]
    ascending = len(clean) > 1 and clean == sorted(clean) and clean != sorted(clean, reverse=True)
    ordered = data.sort_values(field_name, ascending=ascending, na_position="last", kind="stable")
    return ordered["place"].tolist()


def _bar_chart(
    data: pd.DataFrame, f: str, measure_title: str, label_title: str, unit: str, *, has_moe: bool, title: str | None,
    axis_labels: bool = True, sort: list[str] | None = None,
) -> alt.LayerChart | alt.FacetChart:
    """Horizontal bars with their values written on them.

    Long bars carry their value inside (white, at the end), short ones just after it, so the labels fit however
    narrow the column is; with margins of error the values sit after the whiskers instead.
    """
    fmt = d3_format(unit, data[f])
    order = sort or _order(data, f)
    high = data[f + "_high"] if has_moe else data[f]
    top = float(pd.concat([high, data[f]]).max())
    low = data[f + "_low"] if has_moe else data[f]
    bottom = float(min(0.0, data[f].min(), low.min()))  # a whisker may reach below zero (a change, a small count)
    bottom = bottom * 1.1 if bottom < 0 else bottom
    domain_max = top * (1.3 if has_moe else 1.04) if top > 0 else 0.0
    y = alt.Y("place:N", sort=order, title=None,
              axis=alt.Axis(labelLimit=260, ticks=False, domain=False, labelFontSize=12) if axis_labels else None)
    x = alt.X(f"{f}:Q", title=measure_title,
              scale=alt.Scale(domain=[bottom, domain_max], nice=False),
              axis=alt.Axis(format=fmt, grid=True, tickCount=5, titleLimit=420))
    tooltip = [alt.Tooltip("place:N", title=label_title or "Place"),
               alt.Tooltip(f"{f}:Q", title=measure_title, format=fmt)]
    if has_moe:
        tooltip.append(alt.Tooltip(f"{f}_moe:Q", title="Margin of error (90%)", format=fmt))
        if f + "_rel" in data.columns:
            tooltip.append(alt.Tooltip(f"{f}_rel:N", title=RELIABILITY_TITLE))
    base = alt.Chart(data).encode(y=y, tooltip=tooltip)
    text = alt.Text(f"{f}:Q", format=fmt)
    layers = [base.mark_bar(cornerRadiusEnd=3, height={"band": 0.72}).encode(x=x)]
    if has_moe:
        layers.append(base.mark_rule(color=WHISKER_COLOR, strokeWidth=1.5, opacity=0.7).encode(
            x=alt.X(f"{f}_low:Q"), x2=alt.X2(f"{f}_high")))
        layers.append(base.mark_text(align="left", baseline="middle", dx=5, fontSize=12).encode(
            x=alt.X(f"{f}_high:Q"), text=text))
    else:
        inside = f"datum.{f} >= {INSIDE_LABEL_SHARE} * {top!r}" if top > 0 else "false"
        layers.append(base.mark_text(align="right", baseline="middle", dx=-5, fontSize=12, color="white",
                                     fontWeight="bold").encode(x=alt.X(f"{f}:Q"), text=text)
                      .transform_filter(inside))
        layers.append(base.mark_text(align="left", baseline="middle", dx=5, fontSize=12).encode(
            x=alt.X(f"{f}:Q"), text=text).transform_filter(f"!({inside})"))
    chart = alt.layer(*layers).properties(height=max(150, 32 * len(data)))
    if title:
        chart = chart.properties(title=title)
    return chart

def _series(data: pd.DataFrame, f: str, name: str, has_moe: bool) -> pd.DataFrame:
    """One measure of a grouped chart in long form: place, series, value (and its interval when it has one)."""
    out = pd.DataFrame({"place": data["place"], "series": name, "value": data[f]})
    if has_moe:
        out["moe"], out["low"], out["high"] = data[f + "_moe"], data[f + "_low"], data[f + "_high"]
    return out


def _grouped_chart(long: pd.DataFrame, unit: str, label_title: str, value_title: str | None, title: str | None,
                   order: list[str] | None = None) -> alt.LayerChart | alt.FacetChart:
    """Bars side by side per place, one colour per series; with margins of error, a whisker on each bar."""
    fmt = d3_format(unit, long["value"])
    if order is None:
        totals = long.groupby("place", sort=False)["value"].max().sort_values(ascending=False)
        order = totals.index.tolist()
    series_order = list(dict.fromkeys(long["series"]))
    has_moe = "low" in long.columns and bool(long["low"].notna().any())
    tooltip = [
        alt.Tooltip("place:N", title=label_title or "Place"),
        alt.Tooltip("series:N", title="Series"),
        alt.Tooltip("value:Q", title=value_title or "Value", format=fmt),
    ]
    if has_moe:
        tooltip.append(alt.Tooltip("moe:Q", title="Margin of error (90%)", format=fmt))
    base = alt.Chart(long).encode(
        y=alt.Y("place:N", sort=order, title=None, axis=alt.Axis(labelLimit=260, ticks=False, domain=False)),
        yOffset=alt.YOffset("series:N", sort=series_order),
        tooltip=tooltip,
    )
    bars = base.mark_bar(cornerRadiusEnd=2).encode(
        x=alt.X("value:Q", title=value_title, axis=alt.Axis(format=fmt, grid=True, tickCount=5)),
        color=alt.Color("series:N", sort=series_order, title=None, legend=alt.Legend(orient="top")),
    )
    layers: list[alt.Chart] = [bars]
    if has_moe:
        layers.append(base.mark_rule(color=WHISKER_COLOR, strokeWidth=1.5, opacity=0.7).encode(
            x=alt.X("low:Q"), x2=alt.X2("high")))
    chart = alt.layer(*layers).properties(height=max(120, 18 * len(long) + 12 * len(order)))
    if title:
        chart = chart.properties(title=title)
    return chart


__all__ = ["INSIDE_LABEL_SHARE", "WHISKER_COLOR"]
