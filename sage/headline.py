"""The answer in one sentence, as an analyst would say it: the figure with its unit, its margin of error, the period;
for a ranking, a comparison or a change, the gist ("Williamson County, TX grew fastest, +22.2% (2014-2018 to
2019-2023)").

Deterministic (no model): the sentence is built from the result's shape as :mod:`sage.charts.shape` reads it (the
measures and their units, the margins that go with them, the column that names the rows, a change between two
periods, the difference of two places) and from what the plan says the rows compare (``Plan.compare``), so Claude's
answers get the same sentence as the offline planner's.  Nothing here says a difference is significant: that is
:mod:`sage.significance`'s sentence, shown under the chart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .charts.shape import Shape, analyse, change_of, difference_of, format_value, humanize, to_frame, unit_of

#: the display shapes a headline is written for (the issue's list; tests cover each)
SHAPES = ("value", "statrow", "rank", "compare", "change", "threshold", "national", "difference")

#: measures named in a stat row's sentence before "and N more"
_MAX_NAMED = 3


@dataclass(frozen=True)
class Headline:
    """The sentence and which shape it was written for (one of :data:`SHAPES`)."""

    text: str
    shape: str


def headline(columns: Sequence[str], rows: Sequence[Sequence[Any]], *, compare: str | None = None,
             period: str | None = None, condition: str | None = None, ranked: bool | None = None) -> Headline | None:
    """The one-line gist of a result, or None when the result has nothing to say in a sentence (no rows, no
    numbers, a table of many measures).

    ``compare`` is what the plan says the rows compare (``places``, ``change``, ``difference``); ``period`` the ACS
    period of the values ("2019-2023"); ``condition`` the limit a threshold list applies ("an unemployment rate
    above 5%"); ``ranked`` True when the rows are a top/bottom N (None: read from the order of the values).
    """
    if not rows:
        return None
    cols = list(columns)
    change = change_of(cols)
    if change is not None:
        return _change(cols, rows, change)
    frame = to_frame(cols, rows)
    units = _units(cols)
    difference = difference_of(cols)
    if difference is not None and len(rows) == 1:
        return _difference(analyse(frame, units), difference.measure, difference.first_col, difference.second_col,
                           period)
    shape = analyse(frame, units)
    if not shape.measures:
        return None
    when = f" ({period})" if period else ""
    if len(frame) == 1:
        place = _label(shape, 0)
        if _national(shape, place):
            return _national_value(shape, when)
        if len(shape.measures) == 1:
            m = shape.measures[0]
            where = f" in {place}" if place else ""
            return Headline(f"{humanize(m)}{where}: {_figure(shape, m, 0)}{when}", "value")
        named = [f"{_lower(humanize(m))} {_figure(shape, m, 0)}" for m in shape.measures[:_MAX_NAMED]]
        more = len(shape.measures) - _MAX_NAMED
        tail = f", and {more} more" if more > 0 else ""
        head = f"{place}: " if place else ""
        return Headline(f"{head}{'; '.join(named)}{tail}{when}", "statrow")
    if shape.label is None or shape.series is not None:
        return None
    m = shape.measures[0]
    if condition:
        return _threshold(shape, m, condition, when)
    if len(frame) == 2 and compare in ("places", None) and not ranked:
        return _pair(shape, m, when)
    return _rank(shape, m, when, ranked)


# ------------------------------------------------------------------------------------------------------ the shapes


def _national_value(shape: Shape, when: str) -> Headline:
    parts = [f"{_us_name(m)}: {_figure(shape, m, 0)}" for m in shape.measures[:_MAX_NAMED]]
    more = len(shape.measures) - _MAX_NAMED
    tail = f", and {more} more" if more > 0 else ""
    return Headline(f"{'; '.join(parts)}{tail}{when} — the 50 states and DC added up", "national")


def _pair(shape: Shape, m: str, when: str) -> Headline:
    a, b = _label(shape, 0), _label(shape, 1)
    va, vb = _raw(shape, m, 0), _raw(shape, m, 1)
    if va is None or vb is None:
        return Headline(f"{humanize(m)}: {a} {_figure(shape, m, 0)}, {b} {_figure(shape, m, 1)}{when}", "compare")
    if va < vb:
        a, b, ia, ib = b, a, 1, 0
    else:
        ia, ib = 0, 1
    word = "the same as" if va == vb else "higher than"
    return Headline(f"{humanize(m)}: {a} {_figure(shape, m, ia)}, {word} {b} {_figure(shape, m, ib)}{when}",
                    "compare")


def _rank(shape: Shape, m: str, when: str, ranked: bool | None) -> Headline:
    values = [_raw(shape, m, i) for i in range(len(shape.frame))]
    known = [v for v in values if v is not None]
    descending = all(a >= b for a, b in zip(known, known[1:], strict=False))
    ascending = all(a <= b for a, b in zip(known, known[1:], strict=False))
    n = len(shape.frame)
    noun = _noun(shape, n)
    name = _lower(humanize(m))
    if descending or ascending:
        word = "highest" if descending else "lowest"
        last = len(values) - 1
        return Headline(f"{_label(shape, 0)} has the {word} {name}, {_figure(shape, m, 0)}, of the {n} {noun} "
                        f"shown; {_ordinal(n)}: {_label(shape, last)}, {_figure(shape, m, last)}{when}", "rank")
    top = _top(values)
    return Headline(f"{n} {noun}; the highest {name} is {_label(shape, top)}'s, {_figure(shape, m, top)}{when}",
                    "rank")


def _threshold(shape: Shape, m: str, condition: str, when: str) -> Headline:
    n = len(shape.frame)
    values = [_raw(shape, m, i) for i in range(n)]
    top = _top(values)
    verb = "has" if n == 1 else "have"
    return Headline(f"{n} {_noun(shape, n)} {verb} {condition}; the highest is {_label(shape, top)}, "
                    f"{_figure(shape, m, top)}{when}", "threshold")


def _difference(shape: Shape, measure: str, first: str, second: str, period: str | None) -> Headline:
    frame = shape.frame
    a, b = str(frame["first_place"].iloc[0]), str(frame["second_place"].iloc[0])
    unit = unit_of(measure)
    shape.units.setdefault("difference", unit)
    d = _raw(shape, "difference", 0)
    more = "more" if d is None or d >= 0 else "less"
    size = _figure(shape, "difference", 0, absolute=True)
    when = f" ({period})" if period else ""
    return Headline(f"{humanize(measure)}: {a} {_figure(shape, first, 0)}, {size} {more} than {b} "
                    f"{_figure(shape, second, 0)}{when}", "difference")


def _change(cols: list[str], rows: Sequence[Sequence[Any]], ch) -> Headline:
    frame = to_frame(cols, rows)
    unit = unit_of(ch.measure)
    units = {ch.earlier_col: unit, ch.later_col: unit, ch.change: unit}
    if ch.pct:
        units[ch.pct] = "percent"
    shape = analyse(frame, units)
    span = f"({ch.earlier} to {ch.later})"
    name = _lower(humanize(ch.measure))
    if len(frame) == 1:
        place = _label(shape, 0)
        head = f"{place}: " if place and not _national(shape, place) else ""
        grew = _raw(shape, ch.change, 0)
        verb = "rose" if grew is not None and grew > 0 else "fell" if grew is not None and grew < 0 else "changed"
        pct = f" ({_figure(shape, ch.pct, 0, signed=True)})" if ch.pct and ch.pct in shape.measures else ""
        return Headline(f"{head}{name} {verb} from {_figure(shape, ch.earlier_col, 0)} to "
                        f"{_figure(shape, ch.later_col, 0)}, {_figure(shape, ch.change, 0, signed=True)}{pct} "
                        f"{span}", "change")
    by = ch.pct if ch.pct and ch.pct in shape.measures and _ordered_by(shape, ch.pct) else ch.change
    first = _raw(shape, by, 0)
    ordered = _ordered_by(shape, by)
    place = _label(shape, 0)
    fig = _figure(shape, by, 0, signed=True)
    if ordered == "desc" and first is not None and first > 0:
        verb = "grew fastest" if by == ch.pct else "grew the most"
    elif ordered == "asc" and first is not None and first < 0:
        verb = "fell fastest" if by == ch.pct else "fell the most"
    else:
        verb = "comes first"
    return Headline(f"{place} {verb} in {name}, {fig} {span}; {len(frame)} {_noun(shape, len(frame))} shown",
                    "change")


# ----------------------------------------------------------------------------------------------------- the pieces


def _units(cols: list[str]) -> dict[str, str]:
    """US columns (``us_population``) keep the unit of what they add up."""
    return {c: unit_of(c[3:]) for c in cols if c.startswith("us_")}


def _figure(shape: Shape, m: str, i: int, *, signed: bool = False, absolute: bool = False) -> str:
    """``$97,169 ±$1,652``: the value with its unit and, where the result has one, its 90% margin of error."""
    raw = _raw(shape, m, i)
    unit, fraction = shape.units.get(m, unit_of(m)), shape.fractions.get(m, False)
    if raw is not None and absolute:
        raw = abs(raw)
    text = format_value(raw, unit, fraction=fraction)
    if signed and raw is not None and raw > 0:
        text = "+" + text
    moe_col = shape.moe.get(m)
    if moe_col is not None:
        moe = shape.frame[moe_col].iloc[i]
        if moe is not None and not (isinstance(moe, float) and math.isnan(moe)):
            text += " ±" + format_value(float(moe), unit, fraction=fraction)
    return text


def _raw(shape: Shape, m: str, i: int) -> float | None:
    value = shape.frame[m].iloc[i]
    if value is None or isinstance(value, str) or pd.isna(value):
        return None
    return float(value)


def _label(shape: Shape, i: int) -> str:
    if shape.label is None or shape.label in shape.measures:
        return ""
    value = shape.frame[shape.label].iloc[i]
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _national(shape: Shape, place: str) -> bool:
    return place in ("", "United States") and any(m.startswith("us_") for m in shape.measures) or (
        place == "United States")


def _us_name(column: str) -> str:
    if column.startswith("us_"):
        return "US " + _lower(humanize(column[3:]))
    return "US " + _lower(humanize(column))


def _ordered_by(shape: Shape, m: str) -> str | None:
    values = [v for v in (_raw(shape, m, i) for i in range(len(shape.frame))) if v is not None]
    if len(values) < 2:
        return None
    if all(a >= b for a, b in zip(values, values[1:], strict=False)):
        return "desc"
    if all(a <= b for a, b in zip(values, values[1:], strict=False)):
        return "asc"
    return None


def _noun(shape: Shape, n: int) -> str:
    """What the rows are: counties, states, places."""
    title = (shape.label_title or "").lower()
    one = {"county": "county", "state": "state"}.get(title, "place")
    if n == 1:
        return one
    return {"county": "counties", "state": "states"}.get(one, "places")


def _top(values: list[float | None]) -> int:
    """The row of the largest known value."""
    return max(range(len(values)), key=lambda i: -math.inf if (v := values[i]) is None else v)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def article(noun: str) -> str:
    """``a``/``an`` before a noun phrase (by its first letter: good enough for measure names)."""
    return "an" if noun[:1].lower() in "aeiou" else "a"


def _lower(text: str) -> str:
    """``Median household income`` -> ``median household income``; acronyms (``US``) stay."""
    if len(text) > 1 and text[:2].isupper():
        return text
    return text[:1].lower() + text[1:]


__all__ = ["SHAPES", "Headline", "article", "headline"]
