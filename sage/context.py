"""A place's figure in context: the same measure for its state and the nation (and, for a city that is the same
area as a county, that county), each with its margin of error, and one short comparison ("about 1.3 times the
Texas figure ($74,580)", "above the US rate of 12.4% ±0.1% — significant at 90%").

Why a module of its own: an answer and a profile (:mod:`sage.profile`) both put figures beside their parents, and
both must read the parents the same way.  The SQL comes from the semantic layer (:class:`~sage.census.semantic.
Measure`'s value and margin expressions, rendered by the offline planner's :class:`Select`): nothing is written per
measure here.  Every statement goes through the guard and runs as the read-only role, like any answer.

The nation has no rows of its own in the shipped data: a US figure is the sum over the 50 states + DC, as the
national questions compute it — counts added up, rates from the summed counts — with the Census margin formulas
over the same rows (``moe_sum`` for a published count; the sum, proportion and ratio formulas of the layer for the
others).  Medians, means and indexes are never computed from parts: without published state or nation rows they
have no parent figure, and the answer says so once.  Where ``census fetch --geographies nation`` loaded published
nation rows, those are used instead.

Comparisons: a rate (percent) is above or below its parent's, tested with the Census Bureau's formula
(:func:`sage.stats.compare`; SE = MOE / 1.645, |Z| > 1.645 at 90%) when both margins are known — a place and the
area that contains it are not independent samples, so the test (which ignores their covariance) is the handbook's
approximation; dollars, years and indexes are "about N times" the parent's figure (tested the same way); a count
is its share of the parent's total.  Nothing is called significant without a test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from . import execute, guard, stats
from .census.semantic import CONTROLLED_TOTALS, Measure
from .errors import SageError
from .planner.offline.catalog import Catalog, County, Locality
from .planner.offline.compile.sqlparts import Select, code_filter, sql_str
from .settings import Settings

#: the GEO_ID of the nation (a computed US figure carries it too)
US_GEO_ID = "0100000US"
#: a statement over this many characters is split (the guard accepts 20,000)
MAX_STATEMENT_CHARS = 15_000

#: the semantic layer's units as the number formats of :mod:`sage.charts.shape` know them
CHART_UNITS = {"count": "count", "dollars": "dollars", "percent": "percent", "years": "number", "index": "index",
               "ratio": "number"}


@dataclass(frozen=True)
class Area:
    """A geography row: ``label`` is how a sentence names it ("Texas", "Travis County, TX", "the US")."""

    geo_id: str
    level: str
    name: str
    label: str


@dataclass(frozen=True)
class Figure:
    """One measure at one area: the value and its 90% margin of error (None where unknown)."""

    measure: str
    area: Area
    value: float | None
    moe: float | None


@dataclass(frozen=True)
class Comparison:
    """A figure beside its parent's: the parent's figure, the sentence, the significance test when one was made."""

    parent: Figure
    text: str
    significant: bool | None = None
    z: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """``ask --json``'s ``context`` items: ``{"measure", "name", "level", "value", "moe", "comparison",
        "significant"}``."""
        p = self.parent
        return {"measure": p.measure, "name": p.area.name, "level": p.area.level, "value": _clean(p.value),
                "moe": _clean(p.moe), "comparison": self.text, "significant": self.significant,
                "z": None if self.z is None else round(self.z, 2)}


@dataclass
class Figures:
    """Figures read from the database: by (measure name, GEO_ID)."""

    values: dict[tuple[str, str], Figure] = field(default_factory=dict)
    #: the statements as the guard laid them out and they ran
    statements: list[str] = field(default_factory=list)

    def get(self, measure: str, geo_id: str) -> Figure | None:
        return self.values.get((measure, geo_id))


# ------------------------------------------------------------------------------------------------ which areas


def us_area() -> Area:
    return Area(US_GEO_ID, "nation", "United States", "the US")


def area_of(cat: Catalog, geo_id: str) -> Area | None:
    """The :class:`Area` of a state, county or Census place of the catalog (None for other rows)."""
    if geo_id == US_GEO_ID:
        return us_area()
    row = cat.by_geo_id.get(geo_id)
    if row is None:
        return None
    if isinstance(row, County):
        return Area(row.geo_id, "county", f"{row.name}, {row.state.name}", row.label)
    if isinstance(row, Locality):
        return Area(row.geo_id, "place", row.full_name, row.label)
    return Area(row.geo_id, "state", row.name, row.name)


def parents(cat: Catalog, geo_id: str) -> list[Area]:
    """The areas a place is compared with, nearest first: for a Census place the county-equivalent of the same area
    (San Francisco, Denver; the data does not say which county holds any other place), its state, the US; for a
    county its state and the US; for a state the US."""
    row = cat.by_geo_id.get(geo_id)
    out: list[Area] = []
    if isinstance(row, Locality):
        county = cat.same_area_county(row)
        if county is not None:
            out.append(Area(county.geo_id, "county", f"{county.name}, {county.state.name}", county.label))
        out.append(Area(row.state.geo_id, "state", row.state.name, row.state.name))
    elif isinstance(row, County):
        out.append(Area(row.state.geo_id, "state", row.state.name, row.state.name))
    elif row is None:
        return []
    out.append(us_area())
    return out


def us_states(cat: Catalog) -> frozenset[str]:
    """The state FIPS codes a US figure adds up: the 50 states and DC (Puerto Rico is not in the US totals)."""
    return frozenset(s.fips for s in cat.states if s.abbr != "PR")


def us_computable(m: Measure, cat: Catalog) -> bool:
    """Whether a US figure of ``m`` can be added up from state rows: a count or a rate of counts, with rows for all
    of the 50 states and DC."""
    return m.aggregable and m.has_rows("state") and us_states(cat) <= m.coverage.get("state", frozenset())


# ------------------------------------------------------------------------------------------------ the SQL


def statements(measures: Sequence[Measure], areas: Sequence[Area], cat: Catalog) -> list[str]:
    """SELECTs giving each measure at each area: one row per area (``geo_id, level, name``), a column per measure
    and its ``<column>_moe``.  Published rows where the level has them; the US added up from the 50 states + DC
    for the measures that have no nation rows.  Split in several statements when one would be too long."""
    if not measures or not areas:
        return []
    for n in range(1, len(measures) + 1):  # as few statements as fit
        size = math.ceil(len(measures) / n)
        parts = [list(measures[i:i + size]) for i in range(0, len(measures), size)]
        sqls = [_statement(part, areas, cat) for part in parts]
        if all(len(s) <= MAX_STATEMENT_CHARS for s in sqls) or size == 1:
            return [s for s in sqls if s]
    return []  # not reached


def _columns(measures: Sequence[Measure]) -> list[str]:
    """Output column stems, unique (two measures of one column name keep their own names)."""
    seen: dict[str, int] = {}
    for m in measures:
        seen[m.column] = seen.get(m.column, 0) + 1
    return [m.column if seen[m.column] == 1 else m.name for m in measures]


def _statement(measures: Sequence[Measure], areas: Sequence[Area], cat: Catalog) -> str:
    names = _columns(measures)
    published = [a for a in areas if a.geo_id != US_GEO_ID or any(m.has_rows("nation") for m in measures)]
    computed = any(a.geo_id == US_GEO_ID for a in areas) and any(
        not m.has_rows("nation") and us_computable(m, cat) for m in measures)
    codes = sorted({c for m in measures for c in m.codes})
    selects = []
    if published:
        cols = ["g.geo_id", "g.level", "g.name"]
        levels = {a.level for a in published}
        for m, name in zip(measures, names, strict=True):
            cols.append(f"{m.sql_expression('e')} AS {name}")
            moe = m.moe_sql_expression("e") if levels & set(m.moe_levels) else None
            cols.append(f"{moe or 'NULL::numeric'} AS {name}_moe")
        ids = ", ".join(sql_str(a.geo_id) for a in published)
        selects.append(Select(cols, where=[f"g.geo_id IN ({ids})", code_filter(codes)],
                              group=["g.geo_id", "g.level", "g.name"]).sql())
    if computed:
        cols = [f"{sql_str(US_GEO_ID)} AS geo_id", "'nation' AS level", "'United States' AS name"]
        for m, name in zip(measures, names, strict=True):
            ok = not m.has_rows("nation") and us_computable(m, cat)
            cols.append(f"{m.sql_expression('e') if ok else 'NULL::numeric'} AS {name}")
            cols.append(f"{(_us_moe(m) if ok else None) or 'NULL::numeric'} AS {name}_moe")
        selects.append(Select(cols, where=["g.level = 'state'", "g.state_abbr <> 'PR'", code_filter(codes)]).sql())
    return " UNION ALL ".join(selects)


def _us_moe(m: Measure) -> str | None:
    """The margin of a US figure added up from state rows, where every state row has its margin: ``moe_sum`` for
    one published count (the Census sum formula with its zero-estimate rule), the layer's own formulas for sums,
    shares and ratios (they add the squared margins of every row they read)."""
    if "state" not in m.moe_levels:
        return None
    if m.kind == "direct":
        code = m.numerator[0]
        if code in CONTROLLED_TOTALS:
            return None
        return f"moe_sum(e.estimate, e.margin_error) FILTER (WHERE e.variable_code = '{code}')"
    return m.moe_sql_expression("e")


def read(settings: Settings, measures: Sequence[Measure], areas: Sequence[Area], cat: Catalog) -> Figures:
    """The figures of ``measures`` at ``areas``: each statement through the guard and the read-only executor."""
    out = Figures()
    names = dict(zip([m.name for m in measures], _columns(measures), strict=True))
    by_id = {a.geo_id: a for a in areas}
    for sql in statements(measures, areas, cat):
        guarded = guard.check(sql, max_rows=settings.max_rows)
        out.statements.append(guarded.sql)
        result = execute.run(guarded, settings)
        cols = result.columns
        for row in result.rows:
            record = dict(zip(cols, row, strict=True))
            area = by_id.get(str(record["geo_id"]))
            if area is None:
                continue
            for m in measures:
                col = names[m.name]
                if col not in record:
                    continue
                value, moe = _number(record[col]), _number(record.get(f"{col}_moe"))
                known = out.values.get((m.name, area.geo_id))
                if known is not None and known.value is not None:
                    continue  # published nation rows win over the sum of the states
                out.values[(m.name, area.geo_id)] = Figure(m.name, area, value, moe)
    return out


# ------------------------------------------------------------------------------------------------ comparing


def compare(m: Measure, figure: Figure, parent: Figure) -> Comparison | None:
    """The sentence that puts ``figure`` beside ``parent`` (None when either value is missing)."""
    x, y = figure.value, parent.value
    if x is None or y is None:
        return None
    unit = CHART_UNITS.get(m.unit, "count")
    where = parent.area.label
    owner = "the US" if parent.area.geo_id == US_GEO_ID else where
    shown = _fmt(y, unit) + (f" ±{_fmt(parent.moe, unit)}" if parent.moe is not None else "")
    if parent.area.level == "county" and figure.area.level == "place" and x == y:
        return Comparison(parent, f"the same as {where} (the same area)")
    if unit == "count" and m.additive:
        if y <= 0:
            return None
        return Comparison(parent, f"{_share(100.0 * x / y)} of the {_possessive(owner)} total ({shown})")
    test = stats.compare(figure.area.label, x, figure.moe, parent.area.label, y, parent.moe)
    verdict = _verdict(test)
    if unit == "percent":
        noun = "rate" if "rate" in m.name or "rate" in m.label.lower() else "share"
        side = "above" if x > y else "below" if x < y else "the same as"
        text = f"{side} the {_possessive(owner)} {noun} of {shown}"
    else:
        if y == 0:
            return None
        r = x / y
        if 0.95 <= r <= 1.05:
            text = f"about the same as the {_possessive(owner)} figure ({shown})"
        elif r > 1:
            text = f"about {r:.1f} times the {_possessive(owner)} figure ({shown})"
        else:
            text = f"about {100 * r:.0f}% of the {_possessive(owner)} figure ({shown})"
    return Comparison(parent, text + verdict, test.significant, test.z)


def _verdict(test: stats.Significance) -> str:
    if test.significant is None:
        return ""
    level = f"{test.level * 100:.0f}%"
    return f" — significant at {level}" if test.significant else f" — not a significant difference at {level}"


def _possessive(label: str) -> str:
    """How a sentence names an area's figure: "Texas" ("the Texas rate"), "US" ("the US rate")."""
    return "US" if label == "the US" else label


def _share(pct: float) -> str:
    return f"{pct:.1f}%" if pct >= 0.1 else "less than 0.1%"


def _fmt(value: float | None, unit: str) -> str:
    from .charts.shape import format_value

    return format_value(value, unit)


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(out) else out


def _clean(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.12g}")


# ------------------------------------------------------------------------------------------------ an answer's


@dataclass(frozen=True)
class Context:
    """What an answer shows under its headline: the comparisons, and the one note on what has no parent figure."""

    comparisons: tuple[Comparison, ...] = ()
    note: str | None = None

    def to_list(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in self.comparisons]


def of_figures(measures: Sequence[Measure], place: Area, areas: Sequence[Area],
               figures: Figures) -> dict[str, tuple[list[Comparison], bool]]:
    """Each measure's comparisons with ``areas`` (by measure name), and whether it has any parent figure at all."""
    out: dict[str, tuple[list[Comparison], bool]] = {}
    for m in measures:
        own = figures.get(m.name, place.geo_id)
        found: list[Comparison] = []
        any_parent = False
        for area in areas:
            parent = figures.get(m.name, area.geo_id)
            if parent is None or parent.value is None:
                continue
            any_parent = True
            if own is not None:
                c = compare(m, own, parent)
                if c is not None:
                    found.append(c)
        out[m.name] = (found, any_parent)
    return out


def missing_note(lacking: Sequence[tuple[Measure, str]]) -> str | None:
    """One sentence for the measures that lack a parent figure to compare with, and why: ``lacking`` holds
    (measure, "all") for a measure with no state or US figure, (measure, "us") for one with no US figure."""
    medians = [m for m, what in lacking if not m.aggregable]
    no_parent = [m for m, what in lacking if m.aggregable and what == "all"]
    no_us = [m for m, what in lacking if m.aggregable and what == "us"]
    parts = []
    if medians:
        parts.append(f"No state or US figure to compare {_some(medians)} with: a median, mean or index is "
                     "published for each level, never computed from smaller areas, and the data has no state or US "
                     f"rows of {'it' if len(medians) == 1 else 'them'}.")
    if no_parent:
        parts.append(f"No state or US figure in the data for {_some(no_parent)}.")
    if no_us:
        parts.append(f"No US figure for {_some(no_us)}: the rows do not cover all of the 50 states and DC, so they "
                     "do not add up to the US.")
    return " ".join(parts) if parts else None


def _some(measures: Sequence[Measure]) -> str:
    """A few measures by name; many by how many and their topics."""
    if len(measures) <= 3:
        return _join([_lower(m.label) for m in measures])
    topics = list(dict.fromkeys(m.category.replace("_", " ") for m in measures))
    return f"{len(measures)} measures ({_join(topics)})"


def _lower(text: str) -> str:
    return text if text[:2].isupper() else text[:1].lower() + text[1:]


def _join(words: Sequence[str]) -> str:
    words = list(words)
    if len(words) <= 2:
        return " and ".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def for_answer(settings: Settings, cat: Catalog, place_geo_id: str, measures: Sequence[Measure],
               shown: dict[str, float | None] | None = None) -> Context:
    """The context of one place's figures: its parents' figures of ``measures`` and the comparisons.  ``shown``
    holds the values the answer itself shows (by measure name): a measure whose value there differs from the
    layer's own (another definition, another period) gets no context rather than a comparison of unlike things.
    A failure to read the parents costs the answer nothing: the context is then empty."""
    place = area_of(cat, place_geo_id)
    if place is None or not measures:
        return Context()
    areas = parents(cat, place_geo_id)
    try:
        figures = read(settings, measures, [place, *areas], cat)
    except SageError:
        return Context()
    compared = of_figures(measures, place, areas, figures)
    comparisons: list[Comparison] = []
    kept: list[Measure] = []
    for m in measures:
        own = figures.get(m.name, place.geo_id)
        if shown is not None and m.name in shown and not _same(shown[m.name], own.value if own else None):
            continue
        comparisons.extend(compared[m.name][0])
        kept.append(m)
    return Context(tuple(comparisons), missing_note(lacking(kept, areas, figures)))


def lacking(measures: Sequence[Measure], areas: Sequence[Area], figures: Figures) -> list[tuple[Measure, str]]:
    """The measures without a parent figure: ("all") none of ``areas`` has one, ("us") the US has none."""
    out: list[tuple[Measure, str]] = []
    for m in measures:
        have = {a.geo_id for a in areas if (f := figures.get(m.name, a.geo_id)) is not None and f.value is not None}
        states = [a for a in areas if a.level == "state"]
        if states and not any(a.geo_id in have for a in states) and US_GEO_ID not in have:
            out.append((m, "all"))
        elif any(a.geo_id == US_GEO_ID for a in areas) and US_GEO_ID not in have:
            out.append((m, "us"))
    return out


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return False
    return abs(a - b) <= max(0.051, 1e-6 * abs(b))


__all__ = ["CHART_UNITS", "US_GEO_ID", "Area", "Comparison", "Context", "Figure", "Figures", "area_of", "compare",
           "for_answer", "lacking", "missing_note", "of_figures", "parents", "read", "statements", "us_area",
           "us_computable", "us_states"]
