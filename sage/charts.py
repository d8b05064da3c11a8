"""Charts for answers: from a result's columns and rows plus the planner's display hint to an Altair chart or metrics.

The planner only *names* a display hint (DESIGN.md "Display hints"); this module decides what can really be drawn
from the columns that came back, and says so when it cannot (``ChartSpec.fallback_reason``): a bar chart without a
numeric column becomes a table, a map without FIPS codes becomes a bar chart, "one number" with fifty rows becomes a
ranking.  Everything here is pure (no Streamlit, no database): charts are data, tested through ``chart.to_dict()``.

Conventions it relies on, all from the census tables (``data/acs/SOURCE.md``):

* places are labelled by ``county_name`` + ``state_name``/``state_abbr``, ``state_name`` or ``name``;
* ``geo_id`` is a Census GEOID (``0400000US44``, ``0500000US44007``) and ``fips`` the plain 2- or 5-digit code;
  both join the shipped TopoJSON, whose feature ``id`` is that FIPS code;
* a measure's unit shows in its column name: ``*_pct``/``*rate*``/``share`` are percentages, ``income``/``rent``/
  ``value``/``dollars`` are dollars, ``gini``/``index`` are indexes, anything else is a count;
* margins of error sit in ``margin_error`` or ``<measure>_moe`` (ACS 90% margins).

Example:
    >>> spec = build(["state_name", "population"], [["Texas", 30_000_000], ["Ohio", 11_800_000]], "bar")
    >>> spec.kind, spec.chart.to_dict()["layer"][0]["mark"]["type"]
    ('bar', 'bar')
"""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from typing import Any, Sequence

import altair as alt
import pandas as pd

from .settings import PROJECT_ROOT
from .types import DISPLAY_HINTS

#: beyond this many places a ranked bar chart stops being readable (51 states + DC + PR still fit)
MAX_BARS = 60
#: places in a grouped bar chart (each place draws 2-4 bars)
MAX_GROUPED = 30
#: metrics in a stat row
MAX_STATROW = 4
#: series in a grouped chart
MAX_SERIES = 4

#: bars at least this share of the longest carry their value label inside
INSIDE_LABEL_SHARE = 0.55

#: a county map of at most this many states zooms to them
MAX_ZOOM_STATES = 3

#: the colour of places with no value on a map (bars take the theme's first chart colour)
NO_DATA_COLOR = "#e4e7ec"
MAP_SCHEME = "blues"

GEO_DIR = PROJECT_ROOT / "data" / "geo"
ACS_DIR = PROJECT_ROOT / "data" / "acs"

_ID_COLUMN = re.compile(
    r"^(geo_?id|geoid|fips|.*_fips|fips_.*|.*_code|code|id|.*_id|rank|row_number|year|vintage|level)$", re.I
)
_MOE_COLUMN = re.compile(r"^(margin_error|margin_of_error|moe|.*_moe|moe_.*|.*_margin_error|.*_margin_of_error)$", re.I)
_PERCENT = re.compile(r"(pct|percent|rate|share|proportion)", re.I)
_INDEX = re.compile(r"(gini|index)", re.I)
_DOLLARS = re.compile(r"(income|rent|value|dollar|earning|price|cost|wage|salary|usd)", re.I)
_GEO_ID = re.compile(r"^(?:0400000US(\d{2})|0500000US(\d{5}))$")

#: d3 formats (Vega-Lite) per unit; percentages are plotted as fractions so that ".1%" fits both 0-1 and 0-100 data
D3_FORMAT = {"dollars": "$,.0f", "percent": ".1%", "index": ".3f", "count": ",.0f", "number": ",.1f"}


@dataclass
class Metric:
    """One number for ``st.metric``: a label, the formatted value and the margin of error text (or None)."""

    label: str
    value: str
    moe: str | None = None
    raw: float | None = None


@dataclass
class ChartSpec:
    """What to draw for a result.

    ``kind`` is what will be drawn (one of :data:`~sage.types.DISPLAY_HINTS`), ``hint`` what the planner asked for; when they differ,
    ``fallback_reason`` says why in words a user can read.  ``chart`` is an Altair chart for bar/grouped/map,
    ``metrics`` the numbers for big/statrow.  ``note`` carries remarks that are not a fallback (a measure left out
    of a map, places the map cannot draw).
    """

    kind: str
    hint: str
    chart: Any = None
    metrics: list[Metric] = field(default_factory=list)
    fallback_reason: str | None = None
    note: str | None = None


# --------------------------------------------------------------------------------------------------------------
# columns, units and number formats


def to_frame(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> pd.DataFrame:
    """The result as a DataFrame, with ``Decimal`` turned into ``float`` so that pandas and Arrow see numbers."""
    data = [[float(v) if isinstance(v, Decimal) else v for v in row] for row in rows]
    frame = pd.DataFrame(data, columns=_unique(list(columns)))
    for col in frame.columns:
        if _is_numeric(frame[col]):
            frame[col] = pd.to_numeric(frame[col], errors="coerce")
    return frame


def _unique(names: list[str]) -> list[str]:
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


def _is_numeric(series: pd.Series) -> bool:
    values = [v for v in series if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return bool(values) and all(
        isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) for v in values
    )


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


def _is_fraction(values: pd.Series, name: str) -> bool:
    """True when a percentage column holds fractions (0.123) rather than percents (12.3)."""
    if re.search(r"pct|percent", name, re.I):
        return False
    clean = values.dropna()
    return bool(len(clean)) and float(clean.abs().max()) <= 1.0


def humanize(name: str) -> str:
    """``median_household_income`` -> ``Median household income``; ``poverty_rate_pct`` -> ``Poverty rate``."""
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


def _d3_format(unit: str, values: pd.Series) -> str:
    if unit == "count":
        clean = values.dropna()
        if len(clean) and not all(float(v).is_integer() for v in clean) and clean.abs().max() < 1000:
            return ",.1f"
    return D3_FORMAT.get(unit, ",.1f")


# --------------------------------------------------------------------------------------------------------------
# what the result holds: a label column, measures, margins, FIPS codes


@dataclass
class _Shape:
    frame: pd.DataFrame
    label: str | None  # column of the frame that names each row (may be a synthesized "place")
    label_title: str
    measures: list[str]
    moe: dict[str, str]  # measure -> margin column
    series: str | None  # a second text column (long form: place, series, value)
    units: dict[str, str]
    fractions: dict[str, bool]


def _analyse(frame: pd.DataFrame, units: dict[str, str] | None) -> _Shape:
    frame = frame.copy()
    cols = list(frame.columns)
    numeric = [c for c in cols if _is_numeric(frame[c])]
    moe_cols = [c for c in numeric if _MOE_COLUMN.match(c)]
    measures = [c for c in numeric if c not in moe_cols and not _ID_COLUMN.match(c)]
    text_cols = [c for c in cols if c not in numeric and not _ID_COLUMN.match(c)]

    label, label_title = _label(frame, cols, text_cols)
    series = None
    if label is not None:
        others = [c for c in text_cols if c != label and c not in _PLACE_PARTS]
        for c in others:
            distinct = frame[c].nunique(dropna=True)
            if 1 < distinct <= MAX_SERIES and not frame.duplicated([label, c]).any():
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
    fractions = {m: unit_map[m] == "percent" and _is_fraction(frame[m], m) for m in measures}
    return _Shape(frame, label, label_title, measures, moe, series, unit_map, fractions)


_PLACE_PARTS = ("county_name", "state_name", "state_abbr", "name")


def _label(frame: pd.DataFrame, cols: list[str], text_cols: list[str]) -> tuple[str | None, str]:
    """Pick (or build) the column that names each row."""
    if "county_name" in cols:
        state = "state_abbr" if "state_abbr" in cols else "state_name" if "state_name" in cols else None
        if state:
            frame["place"] = [
                f"{c}, {s}" if isinstance(c, str) and isinstance(s, str) else (c if isinstance(c, str) else s)
                for c, s in zip(frame["county_name"], frame[state])
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


def _fips(frame: pd.DataFrame) -> tuple[list[str | None] | None, str | None]:
    """The FIPS code of every row and the map level (``state``/``county``), or (None, None) when unknowable."""
    cols = set(frame.columns)
    codes: list[str | None] | None = None
    if "geo_id" in cols or "geoid" in cols:
        col = "geo_id" if "geo_id" in cols else "geoid"
        found = []
        for v in frame[col]:
            m = _GEO_ID.match(str(v)) if v is not None else None
            found.append((m.group(1) or m.group(2)) if m else None)
        if any(found):
            codes = found
    if codes is None and "fips" in cols:
        codes = [_fips_text(v) for v in frame["fips"]]
    if codes is None and "state_fips" in cols:
        if "county_fips" in cols:
            codes = [
                f"{_fips_text(s, 2)}{_fips_text(c, 3)}" if s is not None and c is not None else None
                for s, c in zip(frame["state_fips"], frame["county_fips"])
            ]
        else:
            codes = [_fips_text(v, 2) for v in frame["state_fips"]]
    if codes is None:
        lookup = _place_fips()
        if "county_name" in cols and ("state_name" in cols or "state_abbr" in cols):
            state_col = "state_name" if "state_name" in cols else "state_abbr"
            codes = [lookup.get(("county", str(c).lower(), str(s).lower())) for c, s in
                     zip(frame["county_name"], frame[state_col])]
        elif "county_name" not in cols and ("state_name" in cols or "state_abbr" in cols):
            state_col = "state_name" if "state_name" in cols else "state_abbr"
            codes = [lookup.get(("state", str(s).lower())) for s in frame[state_col]]
    if not codes or not any(codes):
        return None, None
    lengths = {len(c) for c in codes if c}
    if lengths == {2}:
        return codes, "state"
    if lengths == {5}:
        return codes, "county"
    return None, None


def _fips_text(value: Any, width: int | None = None) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, (int, float, Decimal)):
        number = int(value)
        width = width or (2 if number < 100 else 5)
        return str(number).zfill(width)
    text = str(value).strip()
    if not text.isdigit():
        return None
    return text.zfill(width) if width else text


@lru_cache(maxsize=1)
def _place_fips() -> dict[tuple, str]:
    """Names -> FIPS from the shipped ``geography.csv`` (for results that carry names but no codes)."""
    out: dict[tuple, str] = {}
    path = ACS_DIR / "geography.csv"
    if not path.is_file():
        return out
    with path.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["level"] == "state":
                out[("state", row["state_name"].lower())] = row["fips"]
                out[("state", row["state_abbr"].lower())] = row["fips"]
            else:
                for state in (row["state_name"], row["state_abbr"]):
                    out[("county", row["county_name"].lower(), state.lower())] = row["fips"]
    return out


@lru_cache(maxsize=4)
def _topology(name: str) -> dict:
    """The shipped, pre-projected (Albers USA, 975x610) TopoJSON, loaded once per process."""
    with (GEO_DIR / name).open(encoding="utf-8") as fh:
        return json.load(fh)


def _inline(topology: dict, feature: str) -> alt.InlineData:
    """TopoJSON as inline data, built without Altair's validation (which would walk every arc of the file)."""
    with alt.utils.schemapi.debug_mode(False):
        return alt.InlineData(values=topology, format=alt.DataFormat(type="topojson", feature=feature))


@lru_cache(maxsize=64)
def _subset_topology(name: str, obj: str, state_fips: tuple[str, ...]) -> dict:
    """The features of ``obj`` whose id starts with one of ``state_fips``, with only the arcs they use.

    Arcs of a quantized TopoJSON are delta-encoded one by one, so a subset stays valid once the arc indexes of
    the kept geometries are renumbered (``~i`` marks an arc used backwards).
    """
    topo = _topology(name)
    arcs: list = []
    renumbered: dict[int, int] = {}

    def remap(index: int) -> int:
        original = ~index if index < 0 else index
        if original not in renumbered:
            renumbered[original] = len(arcs)
            arcs.append(topo["arcs"][original])
        new = renumbered[original]
        return ~new if index < 0 else new

    def walk(value):
        return [walk(v) for v in value] if isinstance(value, list) else remap(value)

    geometries = [
        {**g, "arcs": walk(g["arcs"])}
        for g in topo["objects"][obj]["geometries"]
        if "arcs" in g and str(g.get("id", "")).startswith(state_fips)
    ]
    out = {"type": "Topology", "objects": {obj: {"type": "GeometryCollection", "geometries": geometries}}, "arcs": arcs}
    if "transform" in topo:
        out["transform"] = topo["transform"]
    return out


@lru_cache(maxsize=4)
def _feature_ids(name: str, obj: str) -> frozenset[str]:
    return frozenset(str(g.get("id")) for g in _topology(name)["objects"][obj]["geometries"])


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
    if hint not in DISPLAY_HINTS:
        return ChartSpec("table", hint, fallback_reason=f"Unknown display hint {hint!r}: showing the table.")
    if hint == "table":
        return ChartSpec("table", hint)
    if frame.empty:
        return ChartSpec("table", hint, fallback_reason="The query returned no rows, so there is nothing to draw.")
    shape = _analyse(frame, units)
    if not shape.measures:
        return ChartSpec("table", hint, fallback_reason="The result has no numeric column to chart: showing the table.")
    spec = _BUILDERS[hint](shape, hint, title)
    return spec


def _fallback(spec: ChartSpec, reason: str) -> ChartSpec:
    if spec.fallback_reason is None:
        spec.fallback_reason = reason
    return spec


def _numbers(shape: _Shape, hint: str, title: str | None) -> ChartSpec:
    """big / statrow: one row of 1-4 measures, or 2-4 places of one measure."""
    frame, n = shape.frame, len(shape.frame)
    if n == 1 and len(shape.measures) <= MAX_STATROW:
        where = _place_of_row(shape, 0)
        metrics = []
        for m in shape.measures:
            label = humanize(m) + (f" · {where}" if where and len(shape.measures) == 1 else "")
            metrics.append(_metric(shape, m, 0, label))
        kind = "big" if len(metrics) == 1 else "statrow"
        spec = ChartSpec(kind, hint, metrics=metrics)
        if len(shape.measures) > 1 and where:
            spec.note = where
        return spec
    if 1 < n <= MAX_STATROW and len(shape.measures) == 1 and shape.label and shape.series is None:
        m = shape.measures[0]
        metrics = [_metric(shape, m, i, str(frame[shape.label].iloc[i])) for i in range(n)]
        spec = ChartSpec("statrow", hint, metrics=metrics, note=humanize(m))
        if hint == "big":
            spec.fallback_reason = f"The result has {n} rows, not one number: showing them side by side."
        return spec
    reason = (
        f"The result has {n} rows and {len(shape.measures)} numeric columns, too many for "
        f"{'one number' if hint == 'big' else 'a row of numbers'}"
    )
    if shape.label and len(shape.measures) >= 2 and n <= MAX_GROUPED:
        return _fallback(_grouped(shape, hint, title), reason + ": showing a grouped bar chart.")
    if shape.label and n <= MAX_BARS:
        return _fallback(_bar(shape, hint, title), reason + ": showing a bar chart.")
    if shape.label:
        codes, level = _fips(shape.frame)
        if codes:
            return _fallback(_map(shape, hint, title), reason + ": showing a map.")
    return ChartSpec("table", hint, fallback_reason=reason + ": showing the table.")


def _metric(shape: _Shape, m: str, i: int, label: str) -> Metric:
    raw = shape.frame[m].iloc[i]
    raw = None if raw is None or (isinstance(raw, float) and math.isnan(raw)) else float(raw)
    unit, fraction = shape.units[m], shape.fractions[m]
    moe_text = None
    if m in shape.moe:
        moe = shape.frame[shape.moe[m]].iloc[i]
        if moe is not None and not (isinstance(moe, float) and math.isnan(moe)):
            moe_text = "± " + format_value(float(moe), unit, fraction=fraction)
    return Metric(label=label, value=format_value(raw, unit, fraction=fraction), moe=moe_text, raw=raw)


def _place_of_row(shape: _Shape, i: int) -> str | None:
    if shape.label is None or shape.label in shape.measures:
        return None
    value = shape.frame[shape.label].iloc[i]
    return str(value) if value is not None else None


def _plot_frame(shape: _Shape, measures: list[str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """A frame with safe field names (``place``, ``v0``, ``v0_low``...) for Vega-Lite, percentages as fractions.

    Vega-Lite reads dots and brackets in field names as paths, so result column names never reach the spec.
    """
    frame = shape.frame
    labels = [str(v) if v is not None else "(none)" for v in frame[shape.label]]
    labels = _dedupe_labels(labels)
    out = pd.DataFrame({"place": labels})
    fields: dict[str, str] = {}
    for i, m in enumerate(measures):
        f = f"v{i}"
        fields[m] = f
        scale = 0.01 if shape.units[m] == "percent" and not shape.fractions[m] else 1.0
        out[f] = frame[m].astype(float) * scale
        if m in shape.moe:
            moe = frame[shape.moe[m]].astype(float) * scale
            out[f + "_moe"] = moe
            out[f + "_low"] = out[f] - moe
            out[f + "_high"] = out[f] + moe
    if shape.series:
        out["series"] = [str(v) for v in frame[shape.series]]
    return out, fields


def _dedupe_labels(labels: list[str]) -> list[str]:
    """Two rows with one label would draw as one bar: number the repeats."""
    if len(set(labels)) == len(labels):
        return labels
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out


def _bar(shape: _Shape, hint: str, title: str | None) -> ChartSpec:
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
        codes, _level = _fips(shape.frame)
        if codes:
            return _fallback(_map(shape, hint, title), f"{n:,} places are too many for a bar chart: showing a map.")
        return ChartSpec("table", hint, fallback_reason=f"{n:,} rows are too many for a bar chart: showing the table.")
    m = shape.measures[0]
    note = None
    if len(shape.measures) > 1:
        note = f"Charted {humanize(m)}; the other columns are in the table."
    data, fields = _plot_frame(shape, [m])
    chart = _bar_chart(data, "v0", humanize(m), shape.label_title, shape.units[m], has_moe=m in shape.moe,
                       title=title)
    return ChartSpec("bar", hint, chart=chart, note=note)


def _order(data: pd.DataFrame, field_name: str) -> list[str]:
    """Places in ranking order: the query's own order when it is ascending (a "bottom 5"), else largest first."""
    values = data[field_name].tolist()
    clean = [v for v in values if v is not None and not math.isnan(v)]
    ascending = len(clean) > 1 and clean == sorted(clean) and clean != sorted(clean, reverse=True)
    ordered = data.sort_values(field_name, ascending=ascending, na_position="last", kind="stable")
    return ordered["place"].tolist()


def _bar_chart(data: pd.DataFrame, f: str, measure_title: str, label_title: str, unit: str, *, has_moe: bool,
               title: str | None, axis_labels: bool = True, sort: list[str] | None = None) -> alt.TopLevelMixin:
    """Horizontal bars with their values written on them.

    Long bars carry their value inside (white, at the end), short ones just after it, so the labels fit however
    narrow the column is; with margins of error the values sit after the whiskers instead.
    """
    fmt = _d3_format(unit, data[f])
    order = sort or _order(data, f)
    high = data[f + "_high"] if has_moe else data[f]
    top = float(pd.concat([high, data[f]]).max())
    bottom = float(min(0.0, data[f].min()))
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
    base = alt.Chart(data).encode(y=y, tooltip=tooltip)
    text = alt.Text(f"{f}:Q", format=fmt)
    layers = [base.mark_bar(cornerRadiusEnd=3, height={"band": 0.72}).encode(x=x)]
    if has_moe:
        layers.append(base.mark_rule(color="#1f2937", strokeWidth=1.5, opacity=0.7).encode(
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


def _grouped(shape: _Shape, hint: str, title: str | None) -> ChartSpec:
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
        data = data.rename(columns={"v0": "value"})
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
        long = pd.concat(
            [pd.DataFrame({"place": data["place"], "series": humanize(m), "value": data[fields[m]]}) for m in measures],
            ignore_index=True,
        )
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
    return ChartSpec("grouped", hint, chart=chart, note=note)


def _grouped_chart(long: pd.DataFrame, unit: str, label_title: str, value_title: str | None, title: str | None,
                   order: list[str] | None = None) -> alt.TopLevelMixin:
    fmt = _d3_format(unit, long["value"])
    if order is None:
        totals = long.groupby("place", sort=False)["value"].max().sort_values(ascending=False)
        order = totals.index.tolist()
    series_order = list(dict.fromkeys(long["series"]))
    chart = (
        alt.Chart(long)
        .mark_bar(cornerRadiusEnd=2)
        .encode(
            y=alt.Y("place:N", sort=order, title=None, axis=alt.Axis(labelLimit=260, ticks=False, domain=False)),
            yOffset=alt.YOffset("series:N", sort=series_order),
            x=alt.X("value:Q", title=value_title, axis=alt.Axis(format=fmt, grid=True, tickCount=5)),
            color=alt.Color("series:N", sort=series_order, title=None, legend=alt.Legend(orient="top")),
            tooltip=[
                alt.Tooltip("place:N", title=label_title or "Place"),
                alt.Tooltip("series:N", title="Series"),
                alt.Tooltip("value:Q", title=value_title or "Value", format=fmt),
            ],
        )
        .properties(height=max(120, 18 * len(long) + 12 * len(order)))
    )
    if title:
        chart = chart.properties(title=title)
    return chart


def _map(shape: _Shape, hint: str, title: str | None) -> ChartSpec:
    """A choropleth of the first measure over states or counties, joined on FIPS to the shipped TopoJSON."""
    codes, level = _fips(shape.frame)
    n = len(shape.frame)
    if codes is None:
        reason = "The result has no FIPS code or GEOID to place it on a map"
        if shape.label and 1 < n <= MAX_BARS:
            return _fallback(_bar(shape, hint, title), reason + ": showing a bar chart.")
        if n == 1:
            return _fallback(_numbers(shape, hint, title), reason + ": showing the number.")
        return ChartSpec("table", hint, fallback_reason=reason + ": showing the table.")
    if n == 1:
        return _fallback(_numbers(shape, hint, title), "A map of a single place says little: showing the number.")
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
    missing = sorted(set(data["fips"]) - _feature_ids(file, obj))
    if missing:
        notes.append(f"{len(missing)} place(s) are not on this map (Puerto Rico and the island areas are not drawn).")
    fmt = _d3_format(shape.units[m], data["v0"])
    values = data["v0"].dropna()
    skewed = len(values) > 8 and values.min() >= 0 and values.median() > 0 and values.max() / values.median() > 6
    scale = alt.Scale(type="quantile", scheme=MAP_SCHEME) if skewed else alt.Scale(scheme=MAP_SCHEME, zero=False)
    legend_format = _compact_format(shape.units[m]) if skewed else fmt
    topo = _topology(file)
    fields_out = ["place", "v0"] + (["v0_moe"] if m in shape.moe else [])
    tooltip = [alt.Tooltip("place:N", title=shape.label_title or "Place"),
               alt.Tooltip("v0:Q", title=humanize(m), format=fmt)]
    if m in shape.moe:
        tooltip.append(alt.Tooltip("v0_moe:Q", title="Margin of error (90%)", format=fmt))
    # The shipped *-albers-10m files are already projected to screen coordinates (y grows downwards), so the
    # identity projection draws them as they are; reflectY would turn the country upside down.
    # Vega-Lite validates the spec once, at to_dict(); validating here too would walk every row again.  State
    # borders over counties would need a second topology in a layer, which Altair deep-copies on every call
    # (0.1-0.3 s), so counties keep thin white borders instead.
    states = tuple(sorted({c[:2] for c in data["fips"]}))
    if level == "county" and len(states) <= MAX_ZOOM_STATES:
        # only the counties of those states: the map zooms to them, and the page sends ~20 kB instead of 800 kB
        topo = _subset_topology(file, obj, states)
    with alt.utils.schemapi.debug_mode(False):
        shapes = _map_shapes(data, fields_out, level, m, scale, legend_format, tooltip)
        chart = shapes.project(type="identity").properties(height=460).configure_view(stroke=None)
        if title:
            chart = chart.properties(title=title)
    # The topology is attached last and at the top level: Altair deep-copies a chart's inline data on every
    # .properties()/.project()/layer() (~0.3 s per copy of the 800 kB county file), while top-level data is only
    # moved, by reference, to the spec's ``datasets`` when the chart is turned into a spec.
    chart.data = _inline(topo, obj)
    return ChartSpec("map", hint, chart=chart, note=" ".join(notes) or None)


def _compact_format(unit: str) -> str:
    """Short legend labels (``3.3M``, ``$120k``) for the class breaks of a quantile scale, which sit close."""
    return {"dollars": "$.2~s", "percent": ".0%", "index": ".2f"}.get(unit, ".2~s")


def _map_shapes(data: pd.DataFrame, fields_out: list[str], level: str, m: str, scale: alt.Scale, fmt: str,
                tooltip: list) -> alt.Chart:
    """The choropleth layer: features (from the chart's top-level data) joined to the rows on FIPS."""
    return (
        alt.Chart()
        .mark_geoshape(stroke="white", strokeWidth=0.7 if level == "state" else 0.25)
        .transform_lookup(lookup="id", from_=alt.LookupData(data=data, key="fips", fields=fields_out))
        .encode(
            color=alt.when("isValid(datum.v0)")
            .then(alt.Color("v0:Q", title=humanize(m), scale=scale,
                            legend=alt.Legend(format=fmt, orient="bottom", direction="horizontal",
                                              gradientLength=320, titleLimit=320, labelOverlap="greedy")))
            .otherwise(alt.value(NO_DATA_COLOR)),
            tooltip=tooltip,
        )
    )


_BUILDERS = {"big": _numbers, "statrow": _numbers, "bar": _bar, "grouped": _grouped, "map": _map}

__all__ = ["ChartSpec", "Metric", "build", "format_value", "humanize", "to_frame", "unit_for_variable",
           "unit_of"]
