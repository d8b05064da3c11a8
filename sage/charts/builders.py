"""The chart builders: which display fits a result and a display hint, and what to show instead when it does not.

:func:`build` is the entry (``sage.charts.build``); each hint has a builder that falls back to the closest thing the
columns fit, and says why in ``ChartSpec.fallback_reason``.  The builders only decide; the drawings are in
:mod:`.bars` (ranked and grouped bars), :mod:`.change` (a change between periods, a difference of places) and
:mod:`.maps` (choropleths and place points), and what they hand back in :mod:`.spec`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import altair as alt
import pandas as pd

from ..types import DISPLAY_HINTS
from .bars import _bar_chart, _grouped_chart, _order, _series
from .change import _change_numbers, _change_panels, _difference, _ranked_by
from .frame import Shape, analyse, to_frame
from .geo import LEVEL_PLURALS, UNMAPPED_LEVELS, fips_codes, place_points, result_level
from .maps import _choropleth, _dot_map
from .shape import MAX_SERIES, Change, change_of, difference_of, humanize, unit_of
from .spec import ChartSpec, _metric, _place_of_row, _plot_frame

#: beyond this many places a ranked bar chart stops being readable (51 states + DC + PR still fit)
MAX_BARS = 60
#: places in a grouped bar chart (each place draws 2-4 bars)
MAX_GROUPED = 30
#: metrics in a stat row
MAX_STATROW = 4


# --------------------------------------------------------------------------------------------------------------
# the builders


def build(
    result_columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    hint: str | None,
    *,
    title: str | None = None,
    units: dict[str, str] | None = None,
) -> ChartSpec:
    """What to draw for a result: the hinted chart when the columns fit it, else the closest thing that does.

    Args:
        result_columns: column names, as the query returned them.
        rows: the rows (``Decimal``, ``int``, ``float``, ``str`` or ``None`` values).
        hint: the planner's display hint (``big``, ``statrow``, ``bar``, ``grouped``, ``map``, ``table``).
        title: an optional chart title.
        units: overrides of the unit guessed from a column name (``{"estimate": "dollars"}``).
    """
    hint = (hint or "table").lower()
    frame = to_frame(result_columns, rows)
    if hint in ("table", "profile"):  # a profile is drawn by the card from sage.profile, its rows as the table
        return ChartSpec("table", hint)
    if hint not in DISPLAY_HINTS:
        return ChartSpec("table", hint, fallback_reason=f"Unknown display hint {hint!r}: showing the table.")
    if frame.empty:
        return ChartSpec("table", hint, fallback_reason="The query returned no rows, so there is nothing to draw.")
    change, difference = change_of(list(frame.columns)), difference_of(list(frame.columns))
    units = dict(units or {})
    if change is not None:  # the change is in the measure's unit (dollars, people), its percent in percent
        units.setdefault(change.change, units.get(change.measure) or unit_of(change.measure))
    if difference is not None:
        units.setdefault("difference", units.get(difference.measure) or unit_of(difference.measure))
    shape = analyse(frame, units)
    if not shape.measures:
        return ChartSpec("table", hint, fallback_reason="The result has no numeric column to chart: showing the table.")
    if change is not None:
        return _change(shape, change, hint, title)
    if difference is not None and len(frame) == 1:
        return _difference(shape, difference, hint)
    return _BUILDERS[hint](shape, hint, title)


def _fallback(spec: ChartSpec, reason: str) -> ChartSpec:
    """``spec``, saying ``reason`` unless it already says why it is not what was asked for."""
    return spec if spec.fallback_reason is not None else replace(spec, fallback_reason=reason)


def _numbers(shape: Shape, hint: str, title: str | None) -> ChartSpec:
    """big / statrow: one row of 1-4 measures, or 2-4 places of one measure."""
    frame, n = shape.frame, len(shape.frame)
    if n == 1 and len(shape.measures) <= MAX_STATROW:
        where = _place_of_row(shape, 0)
        metrics = []
        for m in shape.measures:
            label = humanize(m) + (f" · {where}" if where and len(shape.measures) == 1 else "")
            metrics.append(_metric(shape, m, 0, label))
        kind = "big" if len(metrics) == 1 else "statrow"
        return ChartSpec(kind, hint, metrics=metrics, note=where if len(shape.measures) > 1 and where else None)
    if 1 < n <= MAX_STATROW and len(shape.measures) == 1 and shape.label and shape.series is None:
        m = shape.measures[0]
        metrics = [_metric(shape, m, i, str(frame[shape.label].iloc[i])) for i in range(n)]
        reason = f"The result has {n} rows, not one number: showing them side by side." if hint == "big" else None
        return ChartSpec("statrow", hint, metrics=metrics, note=humanize(m), fallback_reason=reason)
    reason = (
        f"The result has {n} rows and {len(shape.measures)} numeric columns, too many for "
        f"{'one number' if hint == 'big' else 'a row of numbers'}"
    )
    if shape.label and len(shape.measures) >= 2 and n <= MAX_GROUPED:
        return _fallback(_grouped(shape, hint, title), reason + ": showing a grouped bar chart.")
    if shape.label and n <= MAX_BARS:
        return _fallback(_bar(shape, hint, title), reason + ": showing a bar chart.")
    if shape.label and _can_map(shape.frame):
        return _fallback(_map(shape, hint, title), reason + ": showing a map.")
    return ChartSpec("table", hint, fallback_reason=reason + ": showing the table.")


def _bar(shape: Shape, hint: str, title: str | None) -> ChartSpec:
    """One measure ranked across places: horizontal bars, sorted, value labels, tooltips, error bars."""
    n = len(shape.frame)
    if shape.label is None:
        return ChartSpec("table", hint,
                         fallback_reason="No column names the rows, so there is nothing to label bars with.")
    if n == 1:
        return _fallback(_numbers(shape, hint, title), "A single row: showing it as a number.")
    if shape.series is not None:
        return _grouped(shape, hint, title)
    if n > MAX_BARS:
        if _can_map(shape.frame):
            return _fallback(_map(shape, hint, title), f"{n:,} places are too many for a bar chart: showing a map.")
        return ChartSpec("table", hint, fallback_reason=f"{n:,} rows are too many for a bar chart: showing the table.")
    m = shape.measures[0]
    note = None
    if len(shape.measures) > 1:
        note = f"Charted {humanize(m)}; the other columns are in the table."
    data, fields = _plot_frame(shape, [m])
    chart = _bar_chart(data, "v0", humanize(m), shape.label_title, shape.units[m], has_moe=m in shape.moe,
                       title=title)
    alternate = _point_map(shape, hint, title) if result_level(shape.frame) == "place" else None
    return ChartSpec("bar", hint, chart=chart, note=note,
                     alternate=alternate if alternate is not None and alternate.kind == "map" else None)


def _grouped(shape: Shape, hint: str, title: str | None) -> ChartSpec:
    """Two to four series across places: bars side by side (one unit), or one small chart per measure."""
    n_places = shape.frame[shape.label].nunique() if shape.label else 0
    if shape.label is None:
        return ChartSpec("table", hint, fallback_reason="No column names the rows, so there is nothing to group by.")
    if shape.series is not None:  # long form: place, series, value
        m = shape.measures[0]
        if n_places > MAX_GROUPED:
            return ChartSpec("table", hint,
                             fallback_reason=f"{n_places:,} places are too many to group: showing the table.")
        data, fields = _plot_frame(shape, [m])
        data = data.rename(columns={"v0": "value", "v0_moe": "moe", "v0_low": "low", "v0_high": "high"})
        unit = shape.units[m]
        chart = _grouped_chart(data, unit, shape.label_title, humanize(m), title)
        return ChartSpec("grouped", hint, chart=chart)
    if len(shape.measures) < 2:
        spec = _bar(shape, hint, title) if len(shape.frame) > 1 else _numbers(shape, hint, title)
        return _fallback(spec, "Only one numeric column, so there is nothing to group: showing a single series.")
    if len(shape.frame) == 1:
        return _fallback(_numbers(shape, hint, title), "A single row: showing its numbers side by side.")
    if len(shape.frame) > MAX_GROUPED:
        spec = _bar(shape, hint, title)
        return _fallback(spec, f"{len(shape.frame):,} places are too many to group: showing the first measure.")
    measures = shape.measures[:MAX_SERIES]
    note = None
    if len(shape.measures) > MAX_SERIES:
        note = f"Charted the first {MAX_SERIES} measures; all of them are in the table."
    data, fields = _plot_frame(shape, measures)
    units = {shape.units[m] for m in measures}
    if len(units) == 1:
        unit = units.pop()
        long = pd.concat([_series(data, fields[m], humanize(m), m in shape.moe) for m in measures], ignore_index=True)
        order = _order(data.rename(columns={fields[measures[0]]: "_first"}), "_first")
        chart = _grouped_chart(long, unit, shape.label_title, None, title, order=order)
        return ChartSpec("grouped", hint, chart=chart, note=note)
    # different units (people and dollars) cannot share an axis: one small bar chart per measure, same place order
    order = _order(data, fields[measures[0]])
    panels = [
        _bar_chart(data, fields[m], humanize(m), shape.label_title, shape.units[m], has_moe=m in shape.moe,
                   title=None, axis_labels=(i == 0), sort=order).properties(width=220)
        for i, m in enumerate(measures)
    ]
    chart = alt.hconcat(*panels, spacing=12).resolve_scale(x="independent")
    if title:
        chart = chart.properties(title=title)
    return ChartSpec("grouped", hint, chart=chart, note=note, wide=True)


# --------------------------------------------------------------------------------------------------------------
# a change between two periods, the difference of two places


def _change(shape: Shape, ch: Change, hint: str, title: str | None) -> ChartSpec:
    """One place: both periods, the change and the percent change, each with its margin, side by side.  Several:
    both periods of each place on a dumbbell beside the change ranked in bars with its error bars.  Too many for
    that, or a map asked for: the change on a map."""
    frame, n = shape.frame, len(shape.frame)
    note = f"{humanize(ch.measure)}, {ch.earlier} → {ch.later}"
    if n == 1:
        return _change_numbers(shape, ch, hint, note)
    if shape.label is None:
        return ChartSpec("table", hint, fallback_reason="No column names the rows, so there is nothing to label.")
    ranked = _ranked_by(frame, [c for c in (ch.change, ch.pct) if c])  # the change, or the percent change
    focused = replace(shape, measures=[ranked] + [m for m in shape.measures if m != ranked])
    if hint == "map" or n > MAX_BARS:
        if _can_map(frame):
            spec = _map(focused, hint, title)
            reason = None if hint == "map" else f"{n:,} places are too many for a bar chart: showing a map."
            return replace(spec, note=f"Mapped the {humanize(ranked).lower()}, {ch.earlier} → {ch.later}; both "
                                      "periods are in the table.", fallback_reason=spec.fallback_reason or reason)
        if n > MAX_BARS:
            return ChartSpec("table", hint, fallback_reason=f"{n:,} rows are too many for a chart: showing the table.")
    return _change_panels(shape, focused, ch, ranked, hint, title, note)


def _can_map(frame: pd.DataFrame) -> bool:
    """Whether the rows can be drawn on a map: states and counties by FIPS code, Census places by their point."""
    level = result_level(frame)
    if level == "place":
        return place_points(frame) is not None
    if level in UNMAPPED_LEVELS:
        return False
    return fips_codes(frame)[0] is not None


def _no_map(shape: Shape, hint: str, title: str | None, reason: str) -> ChartSpec:
    """The closest thing to a map of rows that cannot be mapped: a bar chart, the number, or the table."""
    n = len(shape.frame)
    if shape.label and 1 < n <= MAX_BARS:
        return _fallback(replace(_bar(shape, hint, title), alternate=None), reason + ": showing a bar chart.")
    if n == 1:
        return _fallback(_numbers(shape, hint, title), reason + ": showing the number.")
    return ChartSpec("table", hint, fallback_reason=reason + ": showing the table.")


def _map(shape: Shape, hint: str, title: str | None) -> ChartSpec:
    """A choropleth of the first measure over states or counties, joined on FIPS to the shipped TopoJSON; a point
    map for Census places; for levels that have neither shapes nor points, a bar chart saying why."""
    level = result_level(shape.frame)
    if level == "place":
        return _point_map(shape, hint, title)
    if level in UNMAPPED_LEVELS:
        return _no_map(shape, hint, title, f"census-sage has neither boundaries nor points for "
                                           f"{LEVEL_PLURALS[level]}, so there is no map")
    codes, level = fips_codes(shape.frame)
    n = len(shape.frame)
    if codes is None or level is None:  # (both or neither)
        return _no_map(shape, hint, title, "The result has no FIPS code or GEOID to place it on a map")
    if n == 1:
        return _fallback(_numbers(shape, hint, title), "A map of a single place says little: showing the number.")
    return _choropleth(shape, hint, title, codes, level)


def _point_map(shape: Shape, hint: str, title: str | None) -> ChartSpec:
    """Census places as dots at their internal points over the state outlines: sized by a count, coloured by any
    other measure (a rate or a median drawn as a size would read as an amount)."""
    points = place_points(shape.frame)
    n = len(shape.frame)
    if points is None:
        return _no_map(shape, hint, title, "The places in the result have no internal point to place them on a map")
    if n == 1:
        return _fallback(_numbers(shape, hint, title), "A map of a single place says little: showing the number.")
    spec = _dot_map(shape, hint, title, points)
    if spec is None:
        return _no_map(shape, hint, title, "None of the places has a value and a point to draw")
    return spec


_BUILDERS = {"big": _numbers, "statrow": _numbers, "bar": _bar, "grouped": _grouped, "map": _map}


__all__ = ["MAX_BARS", "MAX_GROUPED", "MAX_STATROW", "build"]
