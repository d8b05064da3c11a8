"""What a result holds, for drawing it: the columns as a frame, each measure's unit and number format, the
column that names the rows, the margins of error that go with the measures.

Conventions it relies on, all from the census tables (``data/acs/SOURCE.md``): a measure's unit shows in its column
name (``*_pct``/``*rate*``/``share`` are percentages, ``income``/``rent``/``value``/``dollars`` are dollars,
``gini``/``index`` are indexes, anything else is a count); margins of error sit in ``margin_error`` or
``<measure>_moe`` (ACS 90% margins); places are labelled by ``county_name`` + ``state_name``/``state_abbr``,
``state_name`` or ``name``.

Plain Python, no pandas: the command line's headline reads a result here without importing pandas (0.4 s), and
the charts read it the same way (:mod:`.frame` puts the rows in a DataFrame for plotting and hands the columns here),
so a headline and a chart never disagree on which column names the rows or which margin goes with a measure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .. import stats
from ..significance import PERIOD_COLUMN

#: series in a grouped chart (a second text column with more distinct values is not a series)
MAX_SERIES = 4

_ID_COLUMN = re.compile(
    r"^(geo_?id|geoid|fips|.*_fips|fips_.*|.*_code|code|id|.*_id|rank|row_number|year|vintage|level)$", re.I
)
_MOE_COLUMN = re.compile(r"^(margin_error|margin_of_error|moe|.*_moe|moe_.*|.*_margin_error|.*_margin_of_error)$", re.I)
_PERCENT = re.compile(r"(pct|percent|rate|share|proportion)", re.I)
_INDEX = re.compile(r"(gini|index)", re.I)
_DOLLARS = re.compile(r"(income|rent|value|dollar|earning|price|cost|wage|salary|usd)", re.I)

#: d3 formats (Vega-Lite) per unit; percentages are plotted as fractions so that ".1%" fits both 0-1 and 0-100 data
D3_FORMAT = {"dollars": "$,.0f", "percent": ".1%", "index": ".3f", "count": ",.0f", "number": ",.1f"}



def unique_names(names: list[str]) -> list[str]:
    """Duplicate column names (``SELECT a.x, b.x``) get a suffix; pandas and Vega-Lite need unique ones."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        name = str(name)
        if name in seen:
            seen[name] += 1
            name = f"{name}_{seen[name]}"
        else:
            seen[name] = 0
        out.append(name)
    return out


def is_numeric(values: Sequence[Any]) -> bool:
    """True when every value that is there (not None, not NaN) is a number (a bool is not)."""
    present = [v for v in values if not _missing(v)]
    return bool(present) and all(isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) for v in present)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def unit_of(name: str) -> str:
    """The unit a column name implies: percent, index, dollars, number (ages) or count."""
    if _PERCENT.search(name):
        return "percent"
    if _INDEX.search(name):
        return "index"
    if _DOLLARS.search(name):
        return "dollars"
    if re.search(r"(^|_)(age|median|mean|average|avg|ratio|per)(_|$)", name, re.I):
        return "number"
    return "count"


def unit_for_variable(label: str, concept: str = "") -> str:
    """The unit of an ACS variable from its catalog label and concept (the Explore page has codes, not names)."""
    text = f"{label} {concept}"
    if re.search(r"dollars", text, re.I):
        return "dollars"
    if re.search(r"gini|index", text, re.I):
        return "index"
    if re.search(r"median age|median|mean", text, re.I):
        return "number"
    return "count"


def is_fraction(values: Sequence[Any], name: str) -> bool:
    """True when a percentage column holds fractions (0.123) rather than percents (12.3)."""
    if re.search(r"pct|percent", name, re.I):
        return False
    present = [abs(float(v)) for v in values if not _missing(v)]
    return bool(present) and max(present) <= 1.0


def humanize(name: str) -> str:
    """``median_household_income`` -> ``Median household income``; ``poverty_rate_pct`` -> ``Poverty rate``;
    ``pct_change`` -> ``Percent change`` (a change of a percent is not a percent change)."""
    if re.fullmatch(r"(pct|percent)_change|change_(pct|percent)", name, re.I):
        return "Percent change"
    text = re.sub(r"(_pct|_percent|_perc)$", "", name, flags=re.I)
    text = re.sub(r"^(pct|percent)_", "", text, flags=re.I)
    text = re.sub(r"[_\s]+", " ", text).strip()
    if not text:
        return name
    words = text.split(" ")
    replacements = {"hh": "household", "pop": "population", "moe": "margin of error", "us": "US"}
    words = [replacements.get(w.lower(), w) for w in words]
    out = " ".join(words)
    return out[0].upper() + out[1:]


def format_value(value: Any, unit: str, *, fraction: bool = False) -> str:
    """A number as people read it: ``$74,580``, ``12.3%``, ``0.482``, ``1,234,567``; ``—`` when missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if not isinstance(value, (int, float, Decimal)) or isinstance(value, bool):
        return str(value)
    v = float(value)
    if unit == "dollars":
        return f"-${-v:,.0f}" if v < 0 else f"${v:,.0f}"
    if unit == "percent":
        return f"{v * 100 if fraction else v:,.1f}%"
    if unit == "index":
        return f"{v:.3f}"
    if v.is_integer() and unit == "count":
        return f"{v:,.0f}"
    if unit == "count" and abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:,.1f}" if abs(v) >= 10 else f"{v:,.2f}"


# --------------------------------------------------------------------------------------------------------------
# what the result holds: a label column, measures, margins, FIPS codes


@dataclass
class Layout:
    """How a result reads: the column that names each row, the measures and their units, the margins of error."""

    label: str | None  # column that names each row (may be a synthesized "place")
    label_title: str
    measures: list[str]
    moe: dict[str, str]  # measure -> margin column
    series: str | None  # a second text column (long form: place, series, value)
    units: dict[str, str]
    fractions: dict[str, bool]


def read_layout(values: dict[str, list[Any]], units: dict[str, str] | None) -> Layout:
    """The layout of a result given as its columns' values (in column order).  When rows are named by county and
    state, a ``place`` column ("Travis County, TX") is built and added to ``values``."""
    cols = list(values)
    numeric = [c for c in cols if is_numeric(values[c])]
    moe_cols = [c for c in numeric if _MOE_COLUMN.match(c)]
    measures = [c for c in numeric if c not in moe_cols and not _ID_COLUMN.match(c)]
    text_cols = [c for c in cols if c not in numeric and not _ID_COLUMN.match(c)]

    label, label_title = _label(values, cols, text_cols)
    series = None
    if label is not None:
        others = [c for c in text_cols if c != label and c not in PLACE_PARTS]
        for c in others:
            distinct = {v for v in values[c] if not _missing(v)}
            pairs = [(_key(a), _key(b)) for a, b in zip(values[label], values[c], strict=True)]
            if 1 < len(distinct) <= MAX_SERIES and len(set(pairs)) == len(pairs):
                series = c
                break

    moe: dict[str, str] = {}
    for m in measures:
        for c in moe_cols:
            base = re.sub(r"(_moe|_margin_error|_margin_of_error)$|^moe_", "", c, flags=re.I)
            if base == m:
                moe[m] = c
    generic = [c for c in moe_cols if c.lower() in ("margin_error", "margin_of_error", "moe")]
    if generic and measures and measures[0] not in moe:
        moe[measures[0]] = generic[0]

    unit_map = {m: (units or {}).get(m) or unit_of(m) for m in measures}
    fractions = {m: unit_map[m] == "percent" and is_fraction(values[m], m) for m in measures}
    return Layout(label, label_title, measures, moe, series, unit_map, fractions)


def _key(value: Any) -> Any:
    """Missing values (None, NaN) are one value when rows are compared."""
    return None if _missing(value) else value


@dataclass
class Table:
    """A result as plain columns with its layout: what a sentence about it reads (:mod:`sage.headline`)."""

    columns: dict[str, list[Any]]
    layout: Layout

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()), []))

    def number(self, column: str, i: int) -> float | None:
        value = self.columns[column][i]
        if _missing(value) or isinstance(value, (str, bool)) or not isinstance(value, (int, float, Decimal)):
            return None
        return float(value)

    def label(self, i: int) -> str:
        """The name of row ``i`` ("" when the rows have no name column)."""
        layout = self.layout
        if layout.label is None or layout.label in layout.measures:
            return ""
        value = self.columns[layout.label][i]
        return "" if _missing(value) else str(value)

    def figure(self, m: str, i: int, *, signed: bool = False, absolute: bool = False) -> str:
        """``$97,169 ±$1,652``: the value with its unit and, where the result has one, its 90% margin of error."""
        raw = self.number(m, i)
        unit, fraction = self.layout.units.get(m, unit_of(m)), self.layout.fractions.get(m, False)
        if raw is not None and absolute:
            raw = abs(raw)
        text = format_value(raw, unit, fraction=fraction)
        if signed and raw is not None and raw > 0:
            text = "+" + text
        moe_col = self.layout.moe.get(m)
        if moe_col is not None:
            moe = self.columns[moe_col][i]
            if not _missing(moe):
                text += " ±" + format_value(float(moe), unit, fraction=fraction)
        return text


def read_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], units: dict[str, str] | None = None) -> Table:
    """A result's columns and rows read as a :class:`Table` (``Decimal`` as ``float``, duplicate names suffixed)."""
    names = unique_names(list(columns))
    values: dict[str, list[Any]] = {name: [] for name in names}
    for row in rows:
        for name, v in zip(names, row, strict=True):
            values[name].append(float(v) if isinstance(v, Decimal) else v)
    return Table(values, read_layout(values, units))


PLACE_PARTS = ("county_name", "state_name", "state_abbr", "name")


# --------------------------------------------------------------------------------------------------------------
# reliability of an estimate from its margin of error

#: columns computed from two estimates (a change, a difference): tested for significance, not given a reliability
_DERIVED = re.compile(r"^((pct_)?change(_.*)?|difference|.*_difference|difference_.*)$", re.I)

#: how a reliability label is read, wherever one is shown (the Census Bureau sets no bands: [H20] p. 55)
RELIABILITY_NOTE = (
    "Reliability is read from the coefficient of variation (CV = standard error / estimate, the standard error "
    "being the 90% margin of error / 1.645) in Esri's bands: high for a CV up to 12%, medium up to 40%, low above "
    "(the Census Bureau sets no thresholds)."
)


def is_estimate(column: str) -> bool:
    """An estimate with a reliability of its own (not a change or a difference of two estimates)."""
    return not _DERIVED.match(column)


def reliability_text(estimate: Any, moe: Any) -> str | None:
    """``"high (CV 1.1%)"`` from an estimate and its 90% margin of error (:func:`sage.stats.reliability`, Esri's
    bands); None when it cannot be assessed (no margin, an estimate of 0, not a number)."""
    x, m = _number(estimate), _number(moe)
    if x is None or m is None or m < 0:
        return None
    band, cv = stats.reliability(x, m), stats.cv(x, m)
    return None if band is None or cv is None else f"{band} (CV {cv:.1f}%)"


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return None
    out = float(value)
    return None if math.isnan(out) or math.isinf(out) else out


# --------------------------------------------------------------------------------------------------------------
# two answer shapes with a meaning of their own: a change between two periods, the difference of two places

@dataclass(frozen=True)
class Change:
    """A change between two ACS periods: ``<measure>_2014_2018, <measure>_2019_2023, change[, change_moe],
    pct_change[, pct_change_moe]`` (one row per place; the offline planner's compare "change")."""

    measure: str
    earlier: str  # "2014-2018"
    later: str
    earlier_col: str
    later_col: str
    change: str = "change"
    pct: str | None = "pct_change"


def change_of(columns: Sequence[str]) -> Change | None:
    """The change a result holds, or None: a ``change`` column and one measure's columns for two periods."""
    cols = list(columns)
    if "change" not in cols:
        return None
    periods: dict[str, list[tuple[str, str, str]]] = {}
    for c in cols:
        m = PERIOD_COLUMN.match(c)
        if m and int(m["start"]) < int(m["end"]) and not _MOE_COLUMN.match(c):
            periods.setdefault(m["measure"], []).append((m["start"], m["end"], c))
    found = [(measure, sorted(p)) for measure, p in periods.items() if len(p) == 2]
    if len(found) != 1:
        return None
    measure, ((s1, e1, c1), (s2, e2, c2)) = found[0]
    return Change(measure, f"{s1}-{e1}", f"{s2}-{e2}", c1, c2, "change",
                  "pct_change" if "pct_change" in cols else None)


@dataclass(frozen=True)
class Difference:
    """How much two places differ on one measure: one row ``first_place, second_place, first_<m>, second_<m>,
    difference[, first_<m>_moe, second_<m>_moe, difference_moe]`` (the offline planner's compare "difference")."""

    measure: str
    first_col: str
    second_col: str


_ADJUSTED = re.compile(r"\b(\d{4}-\d{4}) values are put in (\d{4}) dollars", re.I)
_NOMINAL = re.compile(r"\b(dollars as published|not adjusted for inflation|nominal dollars)\b", re.I)


def dollar_basis(assumptions: Sequence[str]) -> str | None:
    """The dollars a change in dollars is in, as its assumptions say (the planner decides and says it): the
    earlier period put in the later period's dollars with the CPI-U-RS, or each period in its own dollars."""
    for text in assumptions:
        m = _ADJUSTED.search(text)
        if m:
            return (f"Dollars: the {m[1]} values are in {m[2]} dollars (adjusted with the CPI-U-RS), so both periods "
                    "are in the same dollars.")
        if _NOMINAL.search(text):
            return ("Dollars: as published, each period in its last year's dollars (not adjusted for inflation), so "
                    "part of the change is inflation.")
    return None


def difference_of(columns: Sequence[str]) -> Difference | None:
    """The difference of two places a result holds, or None."""
    cols = set(columns)
    if not {"first_place", "second_place", "difference"} <= cols:
        return None
    for c in columns:
        if c.startswith("first_") and c != "first_place" and not _MOE_COLUMN.match(c):
            measure = c[len("first_"):]
            if f"second_{measure}" in cols:
                return Difference(measure, c, f"second_{measure}")
    return None


def _label(values: dict[str, list[Any]], cols: list[str], text_cols: list[str]) -> tuple[str | None, str]:
    """Pick (or build) the column that names each row."""
    if "county_name" in cols:
        state = "state_abbr" if "state_abbr" in cols else "state_name" if "state_name" in cols else None
        if state:
            values["place"] = [
                f"{c}, {s}" if isinstance(c, str) and isinstance(s, str) else (c if isinstance(c, str) else s)
                for c, s in zip(values["county_name"], values[state], strict=True)
            ]
            return "place", "County"
        return "county_name", "County"
    for col, title in (("state_name", "State"), ("name", "Place"), ("state_abbr", "State")):
        if col in cols:
            return col, title
    if text_cols:
        return text_cols[0], humanize(text_cols[0])
    for col in ("geo_id", "geoid", "fips", "variable_code"):
        if col in cols:
            return col, humanize(col)
    return None, ""


__all__ = ["D3_FORMAT", "MAX_SERIES", "PLACE_PARTS", "RELIABILITY_NOTE", "Change", "Difference", "Layout", "Table",
           "change_of", "difference_of", "dollar_basis", "format_value", "humanize", "is_estimate", "is_fraction",
           "is_numeric", "read_layout", "read_table", "reliability_text", "unique_names", "unit_for_variable",
           "unit_of"]
