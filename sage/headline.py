"""The answer in one sentence, as an analyst would say it: the figure with its unit, its margin of error, the period;
for a ranking, a comparison or a change, the gist ("Williamson County, TX grew fastest, +22.2% (2014-2018 to
2019-2023)").

Deterministic (no model): the sentence is built from the result's shape as :mod:`sage.charts.shape` reads it (the
measures and their units, the margins that go with them, the column that names the rows, a change between two
periods, the difference of two places) and from what the plan says the rows compare (``Plan.compare``), so Claude's
answers get the same sentence as the offline planner's.  The rows are read as plain columns
(:class:`~sage.charts.shape.Table`), not a DataFrame: a command-line answer writes a headline and never imports
pandas.  Nothing here says a difference is significant: that is
:mod:`sage.significance`'s sentence, shown under the chart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .charts.shape import Table, change_of, difference_of, humanize, read_table, unit_of

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
    shape = read_table(cols, rows, _units(cols))
    difference = difference_of(cols)
    if difference is not None and len(rows) == 1:
        return _difference(shape, difference.measure, difference.first_col, difference.second_col, period)
    if not shape.layout.measures:
        return None
    when = f" ({period})" if period else ""
    if len(shape) == 1:
        place = shape.label(0)
        if _national(shape, place):
            return _national_value(shape, when)
        if len(shape.layout.measures) == 1:
            m = shape.layout.measures[0]
            where = f" in {place}" if place else ""
            return Headline(f"{humanize(m)}{where}: {shape.figure(m, 0)}{when}", "value")
        named = [f"{_lower(humanize(m))} {shape.figure(m, 0)}" for m in shape.layout.measures[:_MAX_NAMED]]
        more = len(shape.layout.measures) - _MAX_NAMED
        tail = f", and {more} more" if more > 0 else ""
        head = f"{place}: " if place else ""
        return Headline(f"{head}{'; '.join(named)}{tail}{when}", "statrow")
    if shape.layout.label is None or shape.layout.series is not None:
        return None
    m = shape.layout.measures[0]
    if condition:
        return _threshold(shape, m, condition, when)
    if len(shape) == 2 and compare in ("places", None) and not ranked:
        return _pair(shape, m, when)
    return _rank(shape, m, when, ranked)


# ------------------------------------------------------------------------------------------------------ the shapes


def _national_value(shape: Table, when: str) -> Headline:
    parts = [f"{_us_name(m)}: {shape.figure(m, 0)}" for m in shape.layout.measures[:_MAX_NAMED]]
    more = len(shape.layout.measures) - _MAX_NAMED
    tail = f", and {more} more" if more > 0 else ""
    return Headline(f"{'; '.join(parts)}{tail}{when} — the 50 states and DC added up", "national")


def _pair(shape: Table, m: str, when: str) -> Headline:
    a, b = shape.label(0), shape.label(1)
    va, vb = shape.number(m, 0), shape.number(m, 1)
    if va is None or vb is None:
        return Headline(f"{humanize(m)}: {a} {shape.figure(m, 0)}, {b} {shape.figure(m, 1)}{when}", "compare")
    if va < vb:
        a, b, ia, ib = b, a, 1, 0
    else:
        ia, ib = 0, 1
    word = "the same as" if va == vb else "higher than"
    return Headline(f"{humanize(m)}: {a} {shape.figure(m, ia)}, {word} {b} {shape.figure(m, ib)}{when}",
                    "compare")


def _rank(shape: Table, m: str, when: str, ranked: bool | None) -> Headline:
    values = [shape.number(m, i) for i in range(len(shape))]
    known = [v for v in values if v is not None]
    descending = all(a >= b for a, b in zip(known, known[1:], strict=False))
    ascending = all(a <= b for a, b in zip(known, known[1:], strict=False))
    n = len(shape)
    noun = _noun(shape, n)
    name = _lower(humanize(m))
    if descending or ascending:
        word = "highest" if descending else "lowest"
        last = len(values) - 1
        return Headline(f"{shape.label(0)} has the {word} {name}, {shape.figure(m, 0)}, of the {n} {noun} "
                        f"shown; {_ordinal(n)}: {shape.label(last)}, {shape.figure(m, last)}{when}", "rank")
    top = _top(values)
    return Headline(f"{n} {noun}; the highest {name} is {shape.label(top)}'s, {shape.figure(m, top)}{when}",
                    "rank")


def _threshold(shape: Table, m: str, condition: str, when: str) -> Headline:
    n = len(shape)
    values = [shape.number(m, i) for i in range(n)]
    top = _top(values)
    verb = "has" if n == 1 else "have"
    return Headline(f"{n} {_noun(shape, n)} {verb} {condition}; the highest is {shape.label(top)}, "
                    f"{shape.figure(m, top)}{when}", "threshold")


def _difference(shape: Table, measure: str, first: str, second: str, period: str | None) -> Headline:
    a, b = str(shape.columns["first_place"][0]), str(shape.columns["second_place"][0])
    unit = unit_of(measure)
    shape.layout.units.setdefault("difference", unit)
    d = shape.number("difference", 0)
    more = "more" if d is None or d >= 0 else "less"
    size = shape.figure("difference", 0, absolute=True)
    when = f" ({period})" if period else ""
    return Headline(f"{humanize(measure)}: {a} {shape.figure(first, 0)}, {size} {more} than {b} "
                    f"{shape.figure(second, 0)}{when}", "difference")


def _change(cols: list[str], rows: Sequence[Sequence[Any]], ch) -> Headline:
    unit = unit_of(ch.measure)
    units = {ch.earlier_col: unit, ch.later_col: unit, ch.change: unit}
    if ch.pct:
        units[ch.pct] = "percent"
    shape = read_table(cols, rows, units)
    span = f"({ch.earlier} to {ch.later})"
    name = _lower(humanize(ch.measure))
    if len(shape) == 1:
        place = shape.label(0)
        head = f"{place}: " if place and not _national(shape, place) else ""
        grew = shape.number(ch.change, 0)
        verb = "rose" if grew is not None and grew > 0 else "fell" if grew is not None and grew < 0 else "changed"
        pct = f" ({shape.figure(ch.pct, 0, signed=True)})" if ch.pct and ch.pct in shape.layout.measures else ""
        return Headline(f"{head}{name} {verb} from {shape.figure(ch.earlier_col, 0)} to "
                        f"{shape.figure(ch.later_col, 0)}, {shape.figure(ch.change, 0, signed=True)}{pct} "
                        f"{span}", "change")
    by = ch.pct if ch.pct and ch.pct in shape.layout.measures and _ordered_by(shape, ch.pct) else ch.change
    first = shape.number(by, 0)
    ordered = _ordered_by(shape, by)
    place = shape.label(0)
    fig = shape.figure(by, 0, signed=True)
    if ordered == "desc" and first is not None and first > 0:
        verb = "grew fastest" if by == ch.pct else "grew the most"
    elif ordered == "asc" and first is not None and first < 0:
        verb = "fell fastest" if by == ch.pct else "fell the most"
    else:
        verb = "comes first"
    return Headline(f"{place} {verb} in {name}, {fig} {span}; {len(shape)} {_noun(shape, len(shape))} shown",
                    "change")


# ----------------------------------------------------------------------------------------------------- the pieces


def _units(cols: list[str]) -> dict[str, str]:
    """US columns (``us_population``) keep the unit of what they add up."""
    return {c: unit_of(c[3:]) for c in cols if c.startswith("us_")}


def _national(shape: Table, place: str) -> bool:
    return place in ("", "United States") and any(m.startswith("us_") for m in shape.layout.measures) or (
        place == "United States")


def _us_name(column: str) -> str:
    if column.startswith("us_"):
        return "US " + _lower(humanize(column[3:]))
    return "US " + _lower(humanize(column))


def _ordered_by(shape: Table, m: str) -> str | None:
    values = [v for v in (shape.number(m, i) for i in range(len(shape))) if v is not None]
    if len(values) < 2:
        return None
    if all(a >= b for a, b in zip(values, values[1:], strict=False)):
        return "desc"
    if all(a <= b for a, b in zip(values, values[1:], strict=False)):
        return "asc"
    return None


def _noun(shape: Table, n: int) -> str:
    """What the rows are: counties, states, places."""
    title = (shape.layout.label_title or "").lower()
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
