"""Maps from a result: choropleths of states and counties joined on FIPS to the shipped TopoJSON, and Census
places as dots at their internal points over the state outlines, with their colour classes, scales and legends.

Only the drawing: :mod:`.geo` says where the rows are (their level, FIPS codes, points) and :mod:`.builders`
whether a map can be drawn at all and what to show instead; the functions here get rows that can be placed.
"""

from __future__ import annotations

import bisect
import itertools
import math
import statistics
from typing import Any, Final

import altair as alt
import pandas as pd

from .frame import Shape, d3_format
from .geo import feature_ids, inline_topology, subset_topology, topology
from .shape import humanize
from .spec import RELIABILITY_TITLE, ChartSpec, _plot_frame

#: a county map of at most this many states zooms to them
MAX_ZOOM_STATES = 3

#: the colour of places with no value on a map (bars take the theme's first chart colour)
NO_DATA_COLOR = "#e4e7ec"
MAP_SCHEME: Final = "blues"
#: losses red, gains blue
DIVERGING_SCHEME: Final = "redblue"


def _choropleth(shape: Shape, hint: str, title: str | None, codes: list[str | None], level: str) -> ChartSpec:
    """A choropleth of the first measure over states or counties (``level``), each row placed by its FIPS code
    (``codes``, one per row), on the shipped TopoJSON."""
    m = shape.measures[0]
    notes = []
    if len(shape.measures) > 1:
        notes.append(f"Mapped {humanize(m)}; the other columns are in the table.")
    if shape.label is None:
        shape.frame["place"] = codes
        shape.label, shape.label_title = "place", "FIPS"
    data, fields = _plot_frame(shape, [m])
    data["fips"] = codes
    data = data[data["fips"].notna()].drop_duplicates("fips")
    file, obj = ("states-albers-10m.json", "states") if level == "state" else ("counties-albers-10m.json", "counties")
    missing = sorted(set(data["fips"]) - feature_ids(file, obj))
    if missing:
        notes.append(f"{len(missing)} place(s) are not on this map (Puerto Rico and the island areas are not drawn).")
    fmt = d3_format(shape.units[m], data["v0"])
    values = data["v0"].dropna()
    skewed = len(values) > 8 and values.min() >= 0 and values.median() > 0 and values.max() / values.median() > 6
    classes = _classes(values, shape.units[m]) if skewed else None
    if classes is not None:
        breaks, labels = classes
        data["cls"] = [_class_of(v, breaks, labels) for v in data["v0"]]
    topo = topology(file)
    fields_out = ["place", "v0"] + [c for c in ("v0_moe", "v0_rel", "cls") if c in data.columns]
    tooltip = _map_tooltip(data, shape.label_title, humanize(m), fmt)
    # The shipped *-albers-10m files are already projected to screen coordinates (y grows downwards), so the
    # identity projection draws them as they are; reflectY would turn the country upside down.
    # Vega-Lite validates the spec once, at to_dict(); validating here too would walk every row again.  State
    # borders over counties would need a second topology in a layer, which Altair deep-copies on every call
    # (0.1-0.3 s), so counties keep thin white borders instead.
    states = tuple(sorted({c[:2] for c in data["fips"]}))
    if level == "county" and len(states) <= MAX_ZOOM_STATES:
        # only the counties of those states: the map zooms to them, and the page sends ~20 kB instead of 800 kB
        topo = subset_topology(file, obj, states)
    with alt.utils.schemapi.debug_mode(False):
        color = _class_color(m, classes[1]) if classes else _gradient_color(m, fmt, values)
        shapes = _map_shapes(data, fields_out, level, color, tooltip)
        chart = shapes.project(type="identity").properties(height=460).configure_view(stroke=None)
        if title:
            chart = chart.properties(title=title)
    # The topology is attached last and at the top level: Altair deep-copies a chart's inline data on every
    # .properties()/.project()/layer() (~0.3 s per copy of the 800 kB county file), while top-level data is only
    # moved, by reference, to the spec's ``datasets`` when the chart is turned into a spec.
    chart.data = inline_topology(topo, obj)
    return ChartSpec("map", hint, chart=chart, note=" ".join(notes) or None)

def _dot_map(shape: Shape, hint: str, title: str | None,
             points: list[tuple[str, float, float] | None]) -> ChartSpec | None:
    """Census places as dots at their internal points (``points``, one per row) over the state outlines: sized by a
    count, coloured by any other measure (a rate or a median drawn as a size would read as an amount).  None when
    none of the places has a value and a point to draw."""
    m = shape.measures[0]
    notes = []
    if len(shape.measures) > 1:
        notes.append(f"Mapped {humanize(m)}; the other columns are in the table.")
    data, _fields = _plot_frame(shape, [m])
    data["geo_id"] = [p[0] if p else None for p in points]
    data["lat"] = [p[1] if p else None for p in points]
    data["lon"] = [p[2] if p else None for p in points]
    states = {str(g)[9:11] for g in data["geo_id"] if g}
    unplaced = int(data["lat"].isna().sum())
    outside = int(sum(1 for g in data["geo_id"] if g and not _in_albers_usa(str(g)[9:11])))
    drawn = data["geo_id"].map(lambda g: isinstance(g, str) and _in_albers_usa(g[9:11])).astype(bool)
    data = data[data["lat"].notna() & data["v0"].notna() & drawn]
    if outside:
        notes.append(f"{outside} place(s) are not on this map (Puerto Rico and the island areas are not drawn).")
    if unplaced:
        notes.append(f"{unplaced} row(s) could not be placed (no Census place point for them).")
    if data.empty:
        return None
    unit = shape.units[m]
    fmt = d3_format(unit, data["v0"])
    tooltip = _map_tooltip(data, shape.label_title, humanize(m), fmt)
    legend: dict[str, Any] = {"orient": "bottom", "direction": "horizontal", "titleLimit": 320}
    if unit == "count" and data["v0"].min() >= 0:
        encoding = {"size": alt.Size("v0:Q", title=humanize(m), scale=alt.Scale(range=[12, 900], zero=True),
                                     # each value formatted alone: a shared format would say 0.2M, 1M, 2M
                                     legend=alt.Legend(labelExpr="format(datum.value, '~s')",
                                                       values=_size_steps(float(data["v0"].max())),
                                                       symbolFillColor=POINT_COLOR, symbolStrokeColor="white",
                                                       **legend)),
                    "color": alt.value(POINT_COLOR)}
    else:
        encoding = {"size": alt.value(70),
                    "color": alt.Color("v0:Q", title=humanize(m), scale=alt.Scale(range=list(POINT_RAMP)),
                                       legend=alt.Legend(format=fmt, gradientLength=280, labelOverlap="greedy",
                                                         **legend))}
    data = data.sort_values("v0", ascending=False, kind="stable")  # big dots first, small ones drawn on top
    shown = tuple(sorted(f for f in states if _in_albers_usa(f)))
    topo = topology("states-10m.json")
    if 0 < len(shown) <= MAX_ZOOM_STATES:
        topo = subset_topology("states-10m.json", "states", shown)  # the map zooms to the places' states
    with alt.utils.schemapi.debug_mode(False):
        outline = alt.Chart().mark_geoshape(fill=OUTLINE_FILL, stroke="white", strokeWidth=1)
        dots = (alt.Chart(data[["place", "v0", "lat", "lon"] + [c for c in ("v0_moe", "v0_rel") if c in data.columns]])
                .mark_circle(opacity=0.8, stroke="white", strokeWidth=0.6)
                .encode(longitude="lon:Q", latitude="lat:Q", tooltip=tooltip, **encoding))
        chart = (alt.layer(outline, dots).project(type="albersUsa").properties(height=460)
                 .configure_view(stroke=None))
        if title:
            chart = chart.properties(title=title)
    chart.data = inline_topology(topo, "states")  # top level, by reference (see _choropleth)
    return ChartSpec("map", hint, chart=chart, note=" ".join(notes) or None)


def _map_tooltip(data: pd.DataFrame, label_title: str, measure_title: str, fmt: str) -> list[alt.Tooltip]:
    """A map's tooltip: the place, the value, its margin of error and reliability when it has them."""
    tooltip = [alt.Tooltip("place:N", title=label_title or "Place"), alt.Tooltip("v0:Q", title=measure_title,
                                                                               format=fmt)]
    if "v0_moe" in data.columns:
        tooltip.append(alt.Tooltip("v0_moe:Q", title="Margin of error (90%)", format=fmt))
    if "v0_rel" in data.columns:
        tooltip.append(alt.Tooltip("v0_rel:N", title=RELIABILITY_TITLE))
    return tooltip


def _in_albers_usa(state_fips: str) -> bool:
    """The Albers USA projection draws the 50 states and DC (FIPS below 60), not Puerto Rico and the island areas."""
    return state_fips.isdigit() and int(state_fips) < 60


def _size_steps(top: float) -> list[float]:
    """Three round values for a size legend, none above the largest (``200k, 1M, 2M`` for 2.3 million)."""
    if top <= 0:
        return []
    unit = 10 ** math.floor(math.log10(top))
    high = math.floor(top / unit) * unit
    return sorted({v for v in (_round_sig(high / 8, 1), _round_sig(high / 2, 1), float(high)) if 0 < v <= top})


#: a place's dot (sized by a count) and the ramp of dots coloured by a rate or a median, over light grey states
POINT_COLOR: Final = "#2563eb"
POINT_RAMP: Final = ("#9ecae1", "#08306b")
OUTLINE_FILL: Final = "#eef0f3"

#: ColorBrewer "Blues" (6 classes) without its lightest, which is too close to the no-data grey: 2-5 classes take
#: the darkest ones, so every class stands out from places without a value
CLASS_COLORS: Final = ("#c6dbef", "#9ecae1", "#6baed6", "#3182bd", "#08519c")
#: colour classes of a skewed measure (quantiles)
MAP_CLASSES = 5


def _classes(values: pd.Series, unit: str) -> tuple[list[float], list[str]] | None:
    """Quantile class breaks of a skewed measure, rounded to two significant digits, and a label per class.

    A continuous colour scale would spend its whole range on a few very large places (Harris County's 4.8 million
    people against a Texas median of 19,000), and Vega-Lite draws the legend of a quantile scale as a gradient
    whose breaks sit at their values' positions: bunched at one end, their labels on top of each other.  Classes
    of equal counts with labels a person can read (``< 7.1k``, ``7.1k – 19k``, ``≥ 200k``) in a symbol legend,
    one entry per column, never overlap.
    """
    clean = sorted(float(v) for v in values)
    if len(clean) < MAP_CLASSES:
        return None
    lows, highs = clean[0], clean[-1]
    breaks: list[float] = []
    for i in range(1, MAP_CLASSES):
        q = _round_sig(statistics.quantiles(clean, n=MAP_CLASSES, method="inclusive")[i - 1])
        if lows < q <= highs and (not breaks or q > breaks[-1]):
            breaks.append(q)
    if not breaks:
        return None
    text = [_compact(b, unit) for b in breaks]
    labels = [f"< {text[0]}"] + [f"{a} – {b}" for a, b in itertools.pairwise(text)] + [f"≥ {text[-1]}"]
    if len(set(labels)) != len(labels):
        return None
    return breaks, labels


def _class_of(value: Any, breaks: list[float], labels: list[str]) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return labels[bisect.bisect_right(breaks, float(value))]


def _round_sig(value: float, digits: int = 2) -> float:
    """``7149`` -> ``7100``, ``0.1234`` -> ``0.12``: class breaks people can read."""
    if value == 0:
        return 0.0
    return round(value, digits - 1 - int(math.floor(math.log10(abs(value)))))


def _compact(value: float, unit: str) -> str:
    """A class break in few characters: ``7.1k``, ``4.8M``, ``$45k``, ``12%`` (a fraction), ``0.45``."""
    if unit == "percent":
        return f"{value * 100:.3g}%"
    if unit == "index":
        return f"{value:.2f}"
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            text = f"{value / size:.3g}{suffix}"
            break
    else:
        text = f"{value:.3g}"
    return "$" + text if unit == "dollars" else text


def _class_color(m: str, labels: list[str]) -> alt.Color:
    """Colour by class: an ordinal scale over the class labels, in a symbol legend of one column per class."""
    return alt.Color("cls:O", title=humanize(m), sort=labels,
                     scale=alt.Scale(domain=labels, range=list(CLASS_COLORS[-len(labels):])),
                     legend=alt.Legend(type="symbol", orient="bottom", direction="horizontal", columns=len(labels),
                                       symbolType="square", symbolSize=160, symbolStrokeWidth=0, labelLimit=120,
                                       columnPadding=14, titleLimit=320))


def _gradient_color(m: str, fmt: str, values: pd.Series) -> alt.Color:
    """Colour on a continuous scale (values spread evenly enough), in a gradient legend; values on both sides of
    zero (a change: losses and gains) on a diverging scale centred on zero."""
    diverging = len(values) > 0 and values.min() < 0 < values.max()
    scale = alt.Scale(scheme=DIVERGING_SCHEME, domainMid=0) if diverging else alt.Scale(scheme=MAP_SCHEME, zero=False)
    return alt.Color("v0:Q", title=humanize(m), scale=scale,
                     legend=alt.Legend(format=fmt, orient="bottom", direction="horizontal", gradientLength=320,
                                       titleLimit=320, labelOverlap="greedy"))


def _map_shapes(data: pd.DataFrame, fields_out: list[str], level: str, color: alt.Color, tooltip: list) -> alt.Chart:
    """The choropleth layer: features (from the chart's top-level data) joined to the rows on FIPS."""
    return (
        alt.Chart()
        .mark_geoshape(stroke="white", strokeWidth=0.7 if level == "state" else 0.25)
        .transform_lookup(lookup="id", from_=alt.LookupData(data=data, key="fips", fields=fields_out))
        .encode(
            color=alt.when("isValid(datum.v0)").then(color).otherwise(alt.value(NO_DATA_COLOR)),
            tooltip=tooltip,
        )
    )


__all__ = ["CLASS_COLORS", "DIVERGING_SCHEME", "MAP_CLASSES", "MAP_SCHEME", "MAX_ZOOM_STATES", "NO_DATA_COLOR",
           "OUTLINE_FILL", "POINT_COLOR", "POINT_RAMP"]
