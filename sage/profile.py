"""A place's profile: every measure the data holds for it, each with its margin of error and its parents' figures,
grouped as Census Reporter groups a profile (Demographics, Economics, Housing, Social).

Asked by a place name alone ("Travis County, Texas", "Ohio", "Boulder, CO"; :mod:`sage.planner.offline.alone`
reads that).  The measures and their SQL come from the semantic layer (``measures.yaml``, through
:mod:`sage.context`, which also reads the parents): nothing is written per measure here.  A profile is several
statements, one per topic (one statement of every measure would be over the guard's length limit); the question
loop (:mod:`sage.agent`) runs each through the guard and the read-only role like any answer and :func:`combine`
puts their rows together, one row per measure and area.  Each measure's value is exactly what the single question
"What is the <measure> in <place>?" answers (the same expression over the same rows), and its link asks that.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import context as ctx
from .census.semantic import Measure
from .execute import Result
from .planner.base import Plan
from .planner.offline.catalog import Catalog, State
from .planner.offline.planner import OfflinePlanner
from .planner.offline.read.parsed import Place
from .settings import Settings
from .stats import reliability_label

#: the groups and their topics, in Census Reporter's order
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Demographics", ("Population", "Race and Hispanic origin", "Place of birth and citizenship")),
    ("Economics", ("Income", "Poverty", "Employment", "Health insurance", "Transportation to work")),
    ("Housing", ("Housing",)),
    ("Social", ("Education", "Internet")),
)
_BY_CATEGORY = {"income": "Income", "poverty": "Poverty", "employment": "Employment", "education": "Education",
                "health_insurance": "Health insurance", "transportation": "Transportation to work",
                "housing": "Housing"}
_RACE = ("hispanic", "white", "black", "people_of_color")
_BIRTH = ("foreign_born", "noncitizen", "naturalized", "native_born")

#: the columns of a profile's rows (one per measure and area)
COLUMNS = ["topic", "measure", "geo_id", "name", "level", "estimate", "estimate_moe"]

#: the measures a profile's headline names, the first three the place has
HEADLINE_MEASURES = ("population", "median_age", "median_household_income", "poverty_rate", "housing_units")


def topic_of(m: Measure) -> str:
    """The profile topic of a measure, from its category (and, for demographics, what it counts)."""
    if m.category in _BY_CATEGORY:
        return _BY_CATEGORY[m.category]
    if "internet" in m.name:
        return "Internet"
    if m.name.startswith(_BIRTH):
        return "Place of birth and citizenship"
    if m.name.startswith(_RACE) or m.name.startswith("non_hispanic"):
        return "Race and Hispanic origin"
    return "Population"


def measures_for(cat: Catalog, geo_id: str) -> list[Measure]:
    """The measures with a value for the place (its level and its state), in the layer's order."""
    area = ctx.area_of(cat, geo_id)
    row = cat.by_geo_id.get(geo_id)
    if area is None or row is None:
        return []
    state = row if isinstance(row, State) else row.state
    return [m for m in cat.measures if m.has_rows(area.level, state.fips)]


def by_topic(measures: Sequence[Measure]) -> list[tuple[str, str, list[Measure]]]:
    """(group, topic, measures) in the profile's order, empty topics left out."""
    out = []
    for group, topics in GROUPS:
        for topic in topics:
            found = [m for m in measures if topic_of(m) == topic]
            if found:
                out.append((group, topic, found))
    return out


#: (measure, place level, catalog generation) -> the words of its single question that the planner reads as it
_phrases: dict[tuple[str, str, int], str] = {}
_phrases_lock = threading.Lock()


def question_for(m: Measure, place_label: str, level: str, cat: Catalog, settings: Settings) -> str:
    """The single question a profile's measure links to: "What is the <words> in <place>?" with the first of the
    measure's label and synonyms that the offline planner reads as exactly that measure of that one place (checked
    by planning it, once per measure and level), so the link answers what the profile shows."""
    key = (m.name, level, cat.generation)
    with _phrases_lock:
        known = _phrases.get(key)
    if known is not None:
        return _question(known, place_label)
    planner = OfflinePlanner(settings)
    chosen = _lower(m.label)
    for words in (_lower(m.label), *m.synonyms):
        plan = planner.plan(_question(words, place_label))
        frame = plan.frame or {}
        if not plan.declined and frame.get("op") == "value" and frame.get("measures") == [m.name]:
            chosen = words
            break
    with _phrases_lock:
        _phrases[key] = chosen
    return _question(chosen, place_label)


def _question(words: str, place_label: str) -> str:
    return f"What is the {words} in {place_label}?"


def plan_for(place: Place, cat: Catalog) -> Plan | None:
    """The profile of ``place`` as a plan: one statement per topic (``Plan.statements``), the display hint
    ``profile``.  None when the data holds no measure for it."""
    area = ctx.area_of(cat, place.geo_id)
    measures = measures_for(cat, place.geo_id)
    if area is None or not measures:
        return None
    areas = [area, *ctx.parents(cat, place.geo_id)]
    statements = [sql for _, _, ms in by_topic(measures) for sql in ctx.statements(ms, areas, cat)]
    parents = [a.label for a in areas[1:]]
    vintages: dict[str, list[str]] = {}
    for m in measures:
        vintages.setdefault(m.vintage, []).append(m.label)
    latest = max(vintages)
    periods = f"ACS {latest} 5-year estimates" + "".join(
        f"; {_few(labels)}: {v}" for v, labels in sorted(vintages.items()) if v != latest)
    assumptions = [
        f"A place name alone: the profile of {area.label}, every measure the data holds for it ({len(measures)}), "
        f"each beside {_join(parents)}." if parents else
        f"A place name alone: the profile of {area.label}, every measure the data holds for it ({len(measures)}).",
        f"Periods: {periods}.",
        "US figures: the 50 states + DC added up (counts summed, rates from the summed counts, margins by the Census "
        "formulas); medians, means and indexes are never computed from smaller areas.",
        "Each measure links to the single question that asks it.",
    ]
    if area.level == "place":
        assumptions.append("Census places have population and housing units only in the data (`census fetch "
                           f"--geographies place --states {place.state.abbr}` adds more).")
    return Plan(sql=";\n\n".join(statements), statements=tuple(statements), assumptions=assumptions,
                display_hint="profile", planner="offline", standalone=f"profile of {area.label}")


def _few(labels: list[str]) -> str:
    return _join(labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3 else "")


def _join(words: Sequence[str]) -> str:
    words = list(words)
    return " and ".join(words) if len(words) <= 2 else ", ".join(words[:-1]) + " and " + words[-1]


# ------------------------------------------------------------------------------------------------ the rows


def combine(results: Sequence[Result], cat: Catalog) -> Result:
    """The statements' rows as one result in :data:`COLUMNS`: a row per measure and area (areas without a value
    left out), measures in the profile's order, the place before its parents."""
    known = {m.name: m for m in cat.measures}
    by_column = {m.column: m for m in cat.measures}
    rows: list[list[Any]] = []
    order = {name: i for i, name in enumerate(known)}
    for result in results:
        cols = result.columns
        for row in result.rows:
            record = dict(zip(cols, row, strict=True))
            for col in cols[3:]:
                if col.endswith("_moe"):
                    continue
                m = known.get(col) or by_column.get(col)
                if m is None or record[col] is None:
                    continue
                rows.append([topic_of(m), m.name, record["geo_id"], record["name"], record["level"], record[col],
                             record.get(f"{col}_moe")])
    level_rank = {"place": 0, "county": 1, "state": 2, "nation": 3}
    topic_rank = {t: i for i, t in enumerate(t for _, topics in GROUPS for t in topics)}
    rows.sort(key=lambda r: (topic_rank.get(r[0], 99), order.get(r[1], 999), level_rank.get(r[4], 9)))
    return Result(columns=list(COLUMNS), rows=rows, row_count=len(rows), truncated=any(r.truncated for r in results),
                  elapsed_ms=sum(r.elapsed_ms for r in results))


# ------------------------------------------------------------------------------------------------ the profile


@dataclass(frozen=True)
class Item:
    """One measure of a profile: its figure (formatted), reliability, comparisons and the question it links to."""

    measure: str
    label: str
    unit: str
    value: float | None
    moe: float | None
    text: str
    reliability: str | None
    comparisons: tuple[ctx.Comparison, ...]
    question: str

    def to_dict(self) -> dict[str, Any]:
        return {"measure": self.measure, "label": self.label, "unit": self.unit, "value": self.value,
                "moe": self.moe, "text": self.text, "reliability": self.reliability,
                "context": [c.to_dict() for c in self.comparisons], "question": self.question}


@dataclass(frozen=True)
class Section:
    group: str
    topic: str
    items: tuple[Item, ...]


@dataclass(frozen=True)
class Profile:
    """What the card draws for a profile and ``ask --json`` prints as ``"profile"``."""

    name: str
    level: str
    geo_id: str
    sections: tuple[Section, ...] = ()
    note: str | None = None
    headline_measures: tuple[str, ...] = ()

    def items(self) -> list[Item]:
        return [i for s in self.sections for i in s.items]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "level": self.level, "geo_id": self.geo_id, "note": self.note,
                "sections": [{"group": s.group, "topic": s.topic, "items": [i.to_dict() for i in s.items]}
                             for s in self.sections]}


def read(result: Result, cat: Catalog, settings: Settings) -> Profile | None:
    """The profile in a combined result (:func:`combine`): the first row's area is the place."""
    if not result.rows:
        return None
    place_id = str(result.rows[0][2])
    place = ctx.area_of(cat, place_id)
    if place is None:
        return None
    areas = ctx.parents(cat, place_id)
    by_id = {a.geo_id: a for a in [place, *areas]}
    figures = ctx.Figures()
    names: list[str] = []
    for _topic, name, geo_id, _n, _level, value, moe in result.rows:
        area = by_id.get(str(geo_id))
        if area is None:
            continue
        figures.values[(name, area.geo_id)] = ctx.Figure(name, area, _float(value), _float(moe))
        if name not in names:
            names.append(name)
    # the charts' number format; imported here, since the charts read rows with pandas, which planning a profile
    # (the question loop, ``eval``) never needs
    from .charts.shape import format_value

    known = {m.name: m for m in cat.measures}
    measures = [known[n] for n in names if n in known]
    compared = ctx.of_figures(measures, place, areas, figures)
    sections = []
    for group, topic, ms in by_topic(measures):
        items = []
        for m in ms:
            own = figures.get(m.name, place.geo_id)
            if own is None:
                continue
            unit = ctx.CHART_UNITS.get(m.unit, "count")
            text = format_value(own.value, unit) + (f" ±{format_value(own.moe, unit)}" if own.moe is not None else "")
            items.append(Item(m.name, m.label, m.unit, own.value, own.moe, text,
                              reliability_label(own.value, own.moe) if own.moe is not None else None,
                              tuple(compared[m.name][0]), question_for(m, place.label, place.level, cat, settings)))
        if items:
            sections.append(Section(group, topic, tuple(items)))
    note = ctx.missing_note(ctx.lacking(measures, areas, figures))
    first = tuple(n for n in HEADLINE_MEASURES if figures.get(n, place.geo_id) is not None)[:3]
    return Profile(place.name, place.level, place.geo_id, tuple(sections), note, first)


def headline(profile: Profile, period: str | None) -> str:
    """"Travis County, Texas: population 1,326,436; median age 34.9; median household income $97,169 ±$1,652
    (2019-2023)"."""
    items = {i.measure: i for i in profile.items()}
    parts = [f"{_lower(items[n].label)} {items[n].text}" for n in profile.headline_measures if n in items]
    when = f" ({period})" if period else ""
    count = len(items)
    return f"{profile.name}: {'; '.join(parts)}{when} — a profile of {count} measure{'s' if count != 1 else ''}"


def _lower(text: str) -> str:
    return text if text[:2].isupper() else text[:1].lower() + text[1:]


def _float(value: Any) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


__all__ = ["COLUMNS", "GROUPS", "HEADLINE_MEASURES", "Item", "Profile", "Section", "by_topic", "combine",
           "headline", "measures_for", "plan_for", "question_for", "read", "topic_of"]
