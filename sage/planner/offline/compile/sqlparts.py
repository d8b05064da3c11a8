"""The building blocks of the offline planner's SQL, written once: the :class:`Select` value every statement is
rendered from, literals, the filters that pick places, the columns that name them, and a measure's value and
margin columns over a place's rows (the plain form for one published variable, a FILTER pivot otherwise).
:mod:`.compile` and :mod:`.compile_named` put them together from a frame."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ....census.semantic import Measure
from ....types import DisplayHint
from ..catalog import State
from ..frame.frame import Condition, GeoSet, Query
from ..read.parsed import Place

ESTIMATES = "public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id"

BY_VINTAGE = "public.estimates_by_vintage e JOIN public.geography g ON g.geo_id = e.geo_id"


@dataclass(frozen=True)
class Compiled:
    """The SQL of a frame, its display hint, and whether margin-of-error columns are in it."""

    sql: str
    display_hint: DisplayHint
    margins: bool = False
    #: what the result compares, for the significance tests (:attr:`sage.planner.base.Plan.compare`)
    compare: str | None = None


@dataclass
class Select:
    """One SELECT statement, rendered by :meth:`sql` (no other code writes SQL clauses)."""

    columns: list[str]
    source: str = ESTIMATES
    where: list[str] = field(default_factory=list)
    group: list[str] = field(default_factory=list)
    having: list[str] = field(default_factory=list)
    order: list[str] = field(default_factory=list)
    limit: int | None = None

    def sql(self) -> str:
        out = f"SELECT {', '.join(self.columns)} FROM {self.source}"
        if self.where:
            out += " WHERE " + " AND ".join(self.where)
        if self.group:
            out += " GROUP BY " + ", ".join(self.group)
        if self.having:
            out += " HAVING " + " AND ".join(self.having)
        if self.order:
            out += " ORDER BY " + ", ".join(self.order)
        if self.limit:
            out += f" LIMIT {self.limit}"
        return out


# ---------------------------------------------------------------------------------------------------------------
# literals and filters


def sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def sql_num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def variable_codes(measures: Sequence[Measure]) -> list[str]:
    out: list[str] = []
    for m in measures:
        for c in m.codes:
            if c not in out:
                out.append(c)
    return out


def code_filter(codes: Sequence[str], alias: str = "e") -> str:
    if len(codes) == 1:
        return f"{alias}.variable_code = '{codes[0]}'"
    return f"{alias}.variable_code IN ({', '.join(sql_str(c) for c in codes)})"


def state_filter(states: Sequence[State], alias: str = "g") -> str:
    if len(states) == 1:
        return f"{alias}.state_name = {sql_str(states[0].name)}"
    return f"{alias}.state_name IN ({', '.join(sql_str(s.name) for s in states)})"


def place_filter(places: Sequence[Place], level: str, alias: str = "g") -> str:
    if level not in ("state", "county"):  # places (cities, towns, CDPs): by their GEO_ID, exactly
        ids = [sql_str(pl.geo_id) for pl in places]
        return f"{alias}.geo_id = {ids[0]}" if len(ids) == 1 else f"{alias}.geo_id IN ({', '.join(ids)})"
    if level == "state":
        return state_filter([pl.state for pl in places], alias)
    counties = [pl.county for pl in places if pl.county is not None]
    if len(counties) == 1:
        c = counties[0]
        return f"{alias}.county_name = {sql_str(c.name)} AND {alias}.state_name = {sql_str(c.state.name)}"
    pairs = ", ".join(f"({sql_str(c.name)}, {sql_str(c.state.name)})" for c in counties)
    return f"({alias}.county_name, {alias}.state_name) IN ({pairs})"


def exclude_filter(exclude: frozenset[str], alias: str = "g") -> str | None:
    if not exclude:
        return None
    codes = sorted(exclude)
    if len(codes) == 1:
        return f"{alias}.state_abbr <> '{codes[0]}'"
    return f"{alias}.state_abbr NOT IN ({', '.join(sql_str(c) for c in codes)})"


def set_filters(geo: GeoSet, alias: str = "g", ids_of: Callable[[Query], str] | None = None) -> list[str]:
    """The WHERE conditions that pick the places of ``geo`` (level, parents, named places, exclusions); ``ids_of``
    gives the SQL of an earlier answer's places for "which of those ..." (:func:`.compile.compile_ids`)."""
    level = geo.level
    out = [f"{alias}.level = '{level}'"]
    if geo.within:
        out.append(state_filter(geo.within, alias))
    if geo.places:
        out.append(place_filter(geo.places, level, alias))
    if geo.units:  # "ZIP 78701", "TX-21": by their GEO_IDs, exactly
        ids = [sql_str(u.geo_id) for u in geo.units]
        out.append(f"{alias}.geo_id = {ids[0]}" if len(ids) == 1 else f"{alias}.geo_id IN ({', '.join(ids)})")
    if geo.in_counties:  # the tracts of a county: its state and county codes
        pairs = ", ".join(f"({sql_str(c.geo_id[-5:-3])}, {sql_str(c.geo_id[-3:])})" for c in geo.in_counties)
        out.append(f"({alias}.state_fips, {alias}.county_fips) IN ({pairs})")
    ex = exclude_filter(geo.exclude, alias) if not geo.within and level not in ("cbsa", "zcta", "nation") else None
    if ex:
        out.append(ex)
    if geo.leave_out:  # "other than Harris County": those rows left out, by their GEO_IDs
        ids = [sql_str(pl.geo_id) for pl in geo.leave_out]
        out.append(f"{alias}.geo_id <> {ids[0]}" if len(ids) == 1 else f"{alias}.geo_id NOT IN ({', '.join(ids)})")
    if geo.independent_cities:
        out.append(f"{alias}.county_name LIKE '% city'")
    if geo.place_kind == "incorporated":  # cities, towns, villages and boroughs: no census-designated places
        out.append(f"{alias}.place_name NOT LIKE '%CDP%'")
        out.append(f"{alias}.place_name NOT LIKE '%comunidad'")
        out.append(f"{alias}.place_name NOT LIKE '%zona urbana'")
    elif geo.place_kind in ("village", "town", "borough", "city"):  # the kind at the end of the Census name
        out.append(f"{alias}.place_name LIKE '% {geo.place_kind}'")
    elif geo.place_kind == "cdp":  # census-designated places (Puerto Rico's are comunidades and zonas urbanas)
        out.append(f"({alias}.place_name LIKE '%CDP%' OR {alias}.place_name LIKE '%comunidad' "
                   f"OR {alias}.place_name LIKE '%zona urbana')")
    if geo.in_states_of is not None:  # "the counties of that state": the states of the earlier answer's places
        if ids_of is None:
            raise ValueError("a set kept to an earlier answer's states needs ids_of")
        out.append(f"{alias}.state_fips IN (SELECT pg.state_fips FROM public.geography AS pg WHERE pg.geo_id IN "
                   f"(SELECT geo_id FROM ({ids_of(geo.in_states_of)}) AS earlier))")
    if geo.among is not None:  # "which of those ...": the places of the earlier answer
        if ids_of is None:
            raise ValueError("a set chosen among an earlier answer's places needs ids_of")
        out.append(f"{alias}.geo_id IN (SELECT geo_id FROM ({ids_of(geo.among)}) AS earlier)")
    return out


def place_columns(level: str) -> list[str]:
    """The columns that name each row: a county and its state, a state, or the Census NAME of other levels
    ('Austin city, Texas')."""
    if level == "county":
        return ["g.county_name", "g.state_name"]
    if level == "state":
        return ["g.state_name"]
    return ["g.name"]


def group_columns(level: str) -> list[str]:
    if level == "county":
        return ["g.geo_id", "g.county_name", "g.state_name"]
    if level == "state":
        return ["g.state_name"]
    return ["g.geo_id", "g.name"]


# ---------------------------------------------------------------------------------------------------------------
# measures as columns


def plain(measures: Sequence[Measure]) -> bool:
    """One published variable: the plain form (``e.estimate`` of one row per place, no GROUP BY)."""
    return len(measures) == 1 and measures[0].kind == "direct"


def condition_sql(c: Condition, value: str) -> str:
    """``value`` compared as ``c`` asks; ``value`` is ``e.estimate`` in the plain form, else an aggregate."""
    if c.other is not None:
        return f"{value} {c.op} {c.other.condition_expression('e')}"
    if c.ref is not None:
        ref = (f"(SELECT {c.measure.condition_expression('r')} FROM public.estimates r "
               f"WHERE r.geo_id = {sql_str(c.ref.geo_id)})")
        return f"{value} {c.op} {ref}"
    if c.op == "between":
        assert c.value2 is not None
        return f"{value} >= {sql_num(c.value)} AND {value} <= {sql_num(c.value2)}"
    return f"{value} {c.op} {sql_num(c.value)}"


def measure_select(measures: Sequence[Measure], head: list[str], group: list[str], where: list[str], *,
                    conditions: Sequence[Condition] = (), margin_level: str | None = None,
                    order: tuple[Measure, bool] | None = None, limit: int | None = None,
                    values: bool = True, window: tuple[Measure, bool] | None = None) -> tuple[Select, bool]:
    """The SELECT of ``measures`` for each place: the plain form for one published variable, else a FILTER pivot
    grouped by place.  Returns the statement and whether margin columns are in it.  ``window`` adds
    ``rank_in_state`` (the place's row number within its state by that measure, descending when True)."""
    # a limit on another measure than the one shown ("housing units of the places over 100,000 people") reads that
    # measure's rows too, in the grouped form
    limits = [c.measure for c in conditions] + [c.other for c in conditions if c.other is not None]
    codes = variable_codes([*measures, *limits])
    margins = False
    if plain(measures) and all(x is measures[0] or x.name == measures[0].name for x in limits):
        m = measures[0]
        cols = list(head)
        if values:
            cols.append(f"e.estimate AS {m.column}")
            if margin_level and margin_level in m.moe_levels:
                cols.append(f"e.margin_error AS {m.column}_moe")
                margins = True
        if window:
            cols.append(f"ROW_NUMBER() OVER (PARTITION BY g.state_name ORDER BY e.estimate "
                        f"{'DESC' if window[1] else 'ASC'} NULLS LAST) AS rank_in_state")
        sel = Select(cols, where=[*where, f"e.variable_code = '{m.numerator[0]}'"])
        sel.where.extend(condition_sql(c, "e.estimate") for c in conditions)
        if order:
            sel.order.append(f"e.estimate {'DESC' if order[1] else 'ASC'} NULLS LAST")
        sel.limit = limit
        return sel, margins
    cols = list(head)
    if values:
        for m in measures:
            cols.append(f"{m.sql_expression('e')} AS {m.column}")
            if margin_level and margin_level in m.moe_levels:
                moe = m.moe_sql_expression("e")
                if moe:
                    cols.append(f"{moe} AS {m.column}_moe")
                    margins = True
    if window:
        cols.append(f"ROW_NUMBER() OVER (PARTITION BY g.state_name ORDER BY {window[0].condition_expression('e')} "
                    f"{'DESC' if window[1] else 'ASC'} NULLS LAST) AS rank_in_state")
    sel = Select(cols, where=[*where, code_filter(codes)], group=list(group))
    sel.having.extend(condition_sql(c, c.measure.condition_expression("e")) for c in conditions)
    if order and values:
        # a rate is shown rounded to one decimal but ranked by its unrounded value: 2.06 % is not tied with 2.14 %
        key = order[0].condition_expression("e") if order[0].is_rate else order[0].column
        sel.order.append(f"{key} {'DESC' if order[1] else 'ASC'} NULLS LAST")
    sel.limit = limit
    return sel, margins


def us_column(m: Measure) -> str:
    return m.column if m.is_rate else f"us_{m.column}"


def in_period(sel: Select, q: Query) -> None:
    """Read ``sel`` in the one earlier period the question asks for ("population of Texas in 2014-2018"), when it
    is not the measures' latest (the rows ``public.estimates`` shows)."""
    if len(q.periods) == 1 and any(q.periods[0] != m.vintage for m in q.measures):
        sel.source = sel.source.replace("public.estimates e JOIN", "public.estimates_by_vintage e JOIN")
        sel.where.append(f"e.vintage = {sql_str(q.periods[0])}")


__all__ = ["BY_VINTAGE", "Compiled", "ESTIMATES", "Select", "code_filter", "condition_sql", "exclude_filter",
           "group_columns", "in_period", "measure_select", "place_columns", "place_filter", "plain", "set_filters",
           "sql_num", "sql_str", "state_filter", "us_column", "variable_codes"]
