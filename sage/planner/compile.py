"""The offline planner's one SQL compiler: a :class:`~sage.planner.frame.Query` in, SQL in the house style out.

Every answer the offline planner gives is written here, from the frame alone, as a small :class:`Select` value
rendered once — never by editing SQL text.  The house style: ``public.estimates e JOIN public.geography g``,
variable codes in the WHERE clause, one row per place, rates from counts of one table (``NULLIF`` against a zero
denominator, rounded to one decimal), medians read only where they are published, ``NULLS LAST`` in rankings, and
the published or derived 90% margin of error as ``<column>_moe`` next to a value where the data has one.

``margins=False`` compiles the same frame without margin-of-error and map columns: the variant a retry falls back
to when the full query failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..census.semantic import CONTROLLED_TOTALS, Measure
from ..types import DisplayHint
from .catalog import State
from .frame import Condition, GeoSet, Op, Query
from .parsed import Place

ESTIMATES = "public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id"


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


def set_filters(geo: GeoSet, alias: str = "g") -> list[str]:
    """The WHERE conditions that pick the places of ``geo`` (level, parents, named places, exclusions)."""
    level = geo.level
    out = [f"{alias}.level = '{level}'"]
    if geo.within:
        out.append(state_filter(geo.within, alias))
    if geo.places:
        out.append(place_filter(geo.places, level, alias))
    ex = exclude_filter(geo.exclude, alias) if not geo.within else None
    if ex:
        out.append(ex)
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
    if geo.among is not None:  # "which of those ...": the places of the earlier answer
        out.append(f"{alias}.geo_id IN (SELECT geo_id FROM ({compile_query(geo.among, ids=True).sql}) AS earlier)")
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


def _plain(measures: Sequence[Measure]) -> bool:
    """One published variable: the plain form (``e.estimate`` of one row per place, no GROUP BY)."""
    return len(measures) == 1 and measures[0].kind == "direct"


def _condition_sql(c: Condition, value: str) -> str:
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


def _measure_select(measures: Sequence[Measure], head: list[str], group: list[str], where: list[str], *,
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
    if _plain(measures) and all(x is measures[0] or x.name == measures[0].name for x in limits):
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
        sel.where.extend(_condition_sql(c, "e.estimate") for c in conditions)
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
    sel.having.extend(_condition_sql(c, c.measure.condition_expression("e")) for c in conditions)
    if order and values:
        sel.order.append(f"{order[0].column} {'DESC' if order[1] else 'ASC'} NULLS LAST")
    sel.limit = limit
    return sel, margins


def us_column(m: Measure) -> str:
    return m.column if m.is_rate else f"us_{m.column}"


# ---------------------------------------------------------------------------------------------------------------
# the compiler


def compile_query(q: Query, *, margins: bool = True, ids: bool = False) -> Compiled:
    """The SQL of ``q`` (see the module docstring); ``margins=False`` leaves out margin and map columns;
    ``ids=True`` adds each row's ``geo_id`` (for "which of those ..." follow-ups, which select among them)."""
    op = q.op
    if ids and op not in (Op.VALUE, Op.RANK, Op.LIST):
        raise ValueError(f"an answer of kind {op} has no places to select among")
    if op is Op.DIFFERENCE:
        return _difference(q)
    if op is Op.CHANGE:
        return _change(q)
    if op is Op.VALUE:
        if q.ratio and not ids:
            return _ratio(q, margins)
        if q.per_n and not ids:
            return _per_n(q)
        if q.with_us and not ids:
            return _with_us(q)
        return _value(q, margins, ids)
    if op in (Op.RANK, Op.LIST):
        return _set(q, margins, ids)
    if op is Op.COUNT:
        return _count(q)
    if op is Op.TOTAL:
        return _total(q)
    if op is Op.SHARE:
        return _share(q)
    if op is Op.PER_PARENT:
        return _per_parent(q)
    raise ValueError(f"no compiler for {op}")


def _value(q: Query, margins: bool, ids: bool = False) -> Compiled:
    places, measures = q.geo.places, q.measures
    single = len(places) == 1
    if q.geo.level == "mixed":
        where = [f"g.geo_id IN ({', '.join(sql_str(pl.geo_id) for pl in places)})"]
        if any(pl.level not in ("state", "county") for pl in places):  # a city next to its county: the NAMEs
            head = ["g.level", "g.name"]
            group = ["g.geo_id", "g.level", "g.name"]
        else:
            head = ["g.level", "g.county_name", "g.state_name"]
            group = ["g.geo_id", "g.level", "g.county_name", "g.state_name"]
        margin_level = None
        level = "county"
    else:
        level = q.geo.level
        where = [f"g.level = '{level}'", place_filter(places, level)]
        if q.geo.among is not None:  # the earlier answer's places and these, side by side
            earlier = compile_query(q.geo.among, ids=True).sql
            where = [f"g.level = '{level}'",
                     f"({place_filter(places, level)} OR g.geo_id IN (SELECT geo_id FROM ({earlier}) AS earlier))"]
            single = False
        head = place_columns(level)
        group = group_columns(level)
        margin_level = level if (margins and (single or len(measures) == 1)) else None
    if ids and "g.geo_id" not in head:
        head = head + ["g.geo_id"]
        group = group if "g.geo_id" in group else ["g.geo_id", *group]
    sel, has_moe = _measure_select(measures, head, group, where, margin_level=margin_level,
                                   order=None if single else (measures[0], True))
    _at(sel, q)
    hint: DisplayHint
    if single:
        hint = "big" if len(measures) == 1 else "statrow"
    else:
        hint = "bar" if len(measures) == 1 else ("grouped" if len(measures) == 2 else "table")
    return Compiled(sel.sql(), q.display or hint, has_moe, compare=None if single else "places")


# ---------------------------------------------------------------------------------------------------------------
# a change between two periods

BY_VINTAGE = "public.estimates_by_vintage e JOIN public.geography g ON g.geo_id = e.geo_id"


def _period_values(q: Query, period: str, total: bool) -> Select:
    """One period's value (``v``) and its margin (``v_moe``, NULL where unknown) for each place of ``q`` — or for
    the set added up (``total``: the US)."""
    m, geo = q.measures[0], q.geo
    level = geo.level
    if total:
        head: list[str] = []
        group: list[str] = []
        live = [c for c in m.numerator if c not in CONTROLLED_TOTALS]
        moe = (f"moe_sum(e.estimate, e.margin_error) FILTER (WHERE e.variable_code = '{m.numerator[0]}')"
               if m.kind == "direct" and live else None)
    else:
        head = ["g.geo_id", *place_columns(level)]
        group = ["g.geo_id", *[c for c in group_columns(level) if c != "g.geo_id"]]
        moe = m.moe_sql_expression("e")
    where = (set_filters(geo) if not geo.places else
             [f"g.geo_id IN ({', '.join(sql_str(pl.geo_id) for pl in geo.places)})"])
    cols = head + [f"{m.sql_expression('e', rounded=False)} AS v", f"{moe or 'NULL::numeric'} AS v_moe"]
    return Select(cols, source=BY_VINTAGE, where=[*where, code_filter(m.codes), f"e.vintage = {sql_str(period)}"],
                  group=group)


def _change(q: Query) -> Compiled:
    """Each place's value in both periods (rounded for reading), the change (later − earlier, unrounded: the
    significance test reads it) and the percent change, each with its 90% margin of error (``moe_difference``,
    ``moe_pct_change``).  Dollars of the earlier period are put in the later period's dollars with the CPI-U-RS
    (``public.cpi_u_rs``: the index of the later period's last year over the earlier's), estimate and margin alike,
    unless nominal dollars were asked.  A ranking, a filter ("lost people", "a significant increase") or a count
    works on those rows."""
    assert q.change is not None and len(q.periods) == 2
    m, ch = q.measures[0], q.change
    early, late = q.periods
    total = not q.geo.places and bool(q.sums)
    a, b = _period_values(q, early, total), _period_values(q, late, total)
    real = ch.dollars == "real"
    digits = 0 if m.unit in ("dollars", "count") else 1
    names = [] if total else [c.split(".")[1] for c in place_columns(q.geo.level)]
    col = m.column
    rate = m.unit == "percent"
    earlier, moe_earlier = ("a.v * cpi.f", "a.v_moe * cpi.f") if real else ("a.v", "a.v_moe")
    cols = [f"b.{n}" for n in names] + [
        f"ROUND({earlier}, {digits}) AS {col}_{early.replace('-', '_')}",
        f"ROUND(b.v, {digits}) AS {col}_{late.replace('-', '_')}",
        # the change and its margin unrounded: the significance test reads them (the card rounds for display)
        f"b.v - {earlier} AS change",
        f"moe_difference(b.v_moe, {moe_earlier}) AS change_moe"]
    if not rate:
        cols += [f"ROUND(100.0 * (b.v - {earlier}) / NULLIF({earlier}, 0), 1) AS pct_change",
                 f"ROUND(moe_pct_change({earlier}, b.v, {moe_earlier}, b.v_moe), 1) AS pct_change_moe"]
    source = f"({a.sql()}) AS a" + (" CROSS JOIN" if total else f" JOIN ({b.sql()}) AS b ON b.geo_id = a.geo_id")
    if total:
        source += f" ({b.sql()}) AS b"
    if real:
        end_early, end_late = int(early[-4:]), int(late[-4:])
        source += (" CROSS JOIN (SELECT MAX(c.index) FILTER (WHERE c.year = "
                   f"{end_late}) / MAX(c.index) FILTER (WHERE c.year = {end_early}) AS f "
                   "FROM public.cpi_u_rs c) AS cpi")
    where = []
    z = f"(b.v - {earlier}) / NULLIF(moe_difference(b.v_moe, {moe_earlier}) / 1.645, 0)"
    keep = {"loss": [f"b.v < {earlier}"], "gain": [f"b.v > {earlier}"],
            "significant_gain": [f"{z} > 1.645"], "significant_loss": [f"{z} < -1.645"],
            "significant": [f"ABS({z}) > 1.645"]}.get(ch.keep, [])
    where += keep
    sel = Select(cols, source=source, where=where)
    if ch.count:
        noun = {"county": "counties", "state": "states", "place": "places"}.get(q.geo.level, "places")
        count = Select([f"COUNT(*) AS {noun}_count"], source=source, where=where)
        return Compiled(count.sql(), q.display or "big", compare=None)
    if q.rank is not None:
        by = "pct_change" if ch.by == "pct_change" and not rate else "change"
        sel.order.append(f"{by} {'DESC' if q.rank.descending else 'ASC'} NULLS LAST")
        sel.limit = q.rank.n
    elif not total and len(q.geo.places) != 1:
        sel.order.append("change DESC NULLS LAST")
    single = total or len(q.geo.places) == 1
    hint: DisplayHint = "statrow" if single else "bar"
    return Compiled(sel.sql(), q.display or hint, True, compare="change")


def _at(sel: Select, q: Query) -> None:
    """Read ``sel`` in the one earlier period the question asks for ("population of Texas in 2014-2018"), when it
    is not the measures' latest (the rows ``public.estimates`` shows)."""
    if len(q.periods) == 1 and any(q.periods[0] != m.vintage for m in q.measures):
        sel.source = sel.source.replace("public.estimates e JOIN", "public.estimates_by_vintage e JOIN")
        sel.where.append(f"e.vintage = {sql_str(q.periods[0])}")


def _named(q: Query) -> tuple[list[str], list[str], list[str], str | None]:
    """Head columns, WHERE and GROUP BY of named places of any levels (by GEO_ID, named by the Census NAME), and
    the level whose margins apply (None when the places are of several levels)."""
    places = q.geo.places
    levels = {pl.level for pl in places}
    where = [f"g.geo_id IN ({', '.join(sql_str(pl.geo_id) for pl in places)})"] if len(places) > 1 else \
        [f"g.geo_id = {sql_str(places[0].geo_id)}"]
    return ["g.name"], where, ["g.geo_id", "g.name"], (next(iter(levels)) if len(levels) == 1 else None)


def _difference(q: Query) -> Compiled:
    """One row: the two places, their values, the difference (first − second) and its 90% margin of error
    (``moe_difference``: the square root of the sum of the squared margins)."""
    m = q.measures[0]
    first, second = q.geo.places
    head, where, group, level = _named(q)
    levels = {pl.level for pl in q.geo.places}
    margin = level if level is not None else (next(iter(levels)) if all(x in m.moe_levels for x in levels)
                                               else None)
    inner, has_moe = _measure_select([m], ["g.geo_id", "g.name"], group, where, margin_level=margin)
    col = m.column
    cols = ["a.name AS first_place", "b.name AS second_place", f"a.{col} AS first_{col}",
            f"b.{col} AS second_{col}", f"a.{col} - b.{col} AS difference"]
    if has_moe:
        cols += [f"a.{col}_moe AS first_{col}_moe", f"b.{col}_moe AS second_{col}_moe",
                 f"moe_difference(a.{col}_moe, b.{col}_moe) AS difference_moe"]
    sql = (f"WITH v AS ({inner.sql()}) SELECT {', '.join(cols)} FROM v a, v b "
           f"WHERE a.geo_id = {sql_str(first.geo_id)} AND b.geo_id = {sql_str(second.geo_id)}")
    return Compiled(sql, q.display or "statrow", has_moe, compare="difference")


def _ratio(q: Query, margins: bool) -> Compiled:
    """The first count over the second for each named place, with the ratio's margin of error (``moe_ratio``)
    where both counts have published margins."""
    a, b = q.measures[:2]
    head, where, group, level = _named(q)
    ca, cb = a.condition_expression("e"), b.condition_expression("e")
    name = f"{a.column}_per_{b.column}"
    cols = head + [f"ROUND({ca} / NULLIF({cb}, 0), 2) AS {name}"]
    has_moe = False
    if margins and level is not None and level in a.moe_levels and level in b.moe_levels and \
            a.kind == "direct" and b.kind == "direct":
        ma = f"SUM(e.margin_error) FILTER (WHERE e.variable_code = '{a.numerator[0]}')"
        mb = f"SUM(e.margin_error) FILTER (WHERE e.variable_code = '{b.numerator[0]}')"
        cols.append(f"ROUND(moe_ratio({ca}, {cb}, {ma}, {mb}), 2) AS {name}_moe")
        has_moe = True
    sel = Select(cols, where=[*where, code_filter(variable_codes([a, b]))], group=group,
                 order=[f"{name} DESC NULLS LAST"] if len(q.geo.places) > 1 else [])
    hint: DisplayHint = "big" if len(q.geo.places) == 1 else "bar"
    return Compiled(sel.sql(), q.display or hint, has_moe, compare="places" if len(q.geo.places) > 1 else None)


def _per_n(q: Query) -> Compiled:
    """A count over total population of the same period, scaled by N."""
    n = q.per_n
    level = q.geo.level
    pop_code = "B01003_001E"
    cols = place_columns(level) + [
        f"ROUND({n}.0 * {m.condition_expression('e')} / NULLIF(SUM(e.estimate) FILTER (WHERE "
        f"e.variable_code = '{pop_code}'), 0), 1) AS {m.column}_per_{n}" for m in q.measures]
    sel = Select(cols, where=[f"g.level = '{level}'", place_filter(q.geo.places, level),
                              code_filter(variable_codes(q.measures) + [pop_code])],
                 group=group_columns(level))
    hint: DisplayHint = "big" if len(q.geo.places) == 1 and len(q.measures) == 1 else "bar"
    return Compiled(sel.sql(), q.display or hint)


def _with_us(q: Query) -> Compiled:
    """Named places, then one row for the US (the 50 states + DC summed; rates from the summed counts)."""
    level = q.geo.level
    exprs = [f"{m.sql_expression('e')} AS {m.column}" for m in q.measures]
    codes = code_filter(variable_codes(q.measures))
    if level == "county":
        us_head = ["'United States' AS county_name", "NULL AS state_name"]
    else:
        us_head = ["'United States' AS state_name"]
    places = Select(place_columns(level) + exprs, where=[f"g.level = '{level}'", place_filter(q.geo.places, level),
                                                          codes], group=group_columns(level))
    us = Select(us_head + exprs, where=["g.level = 'state'", "g.state_abbr <> 'PR'", codes])
    hint: DisplayHint = "bar" if len(q.measures) == 1 else ("grouped" if len(q.measures) == 2 else "table")
    return Compiled(f"{places.sql()} UNION ALL {us.sql()}", q.display or hint, compare="places")


def _set(q: Query, margins: bool, ids: bool = False) -> Compiled:
    """A ranking (top/bottom N, or the top N within each state) or a filtered list of a set's places."""
    geo, measures, rank = q.geo, q.measures, q.rank
    level = geo.level
    where = set_filters(geo)
    head = place_columns(level)
    list_all = rank is None and not q.conditions and not geo.places and not (level == "state" and geo.within)
    with_geo = (list_all and len(measures) == 1 and margins) or ids
    group = ["g.geo_id", *head] if (level != "state" or with_geo) else ["g.state_name"]
    cols = head + (["g.geo_id"] if with_geo else [])
    if rank is not None and rank.per_parent:
        inner, _ = _measure_select(measures, cols, group, where, conditions=q.conditions,
                                   window=(rank.by, rank.descending))
        _at(inner, q)
        names = ["county_name", "state_name"] + (["geo_id"] if ids else []) + [m.column for m in measures]
        sql = (f"SELECT {', '.join(names)} FROM ({inner.sql()}) AS ranked WHERE rank_in_state <= {rank.n} "
               f"ORDER BY state_name, rank_in_state")
        return Compiled(sql, q.display or _set_hint(q, list_all))
    if rank is not None:
        order = (rank.by, rank.descending)
        limit: int | None = rank.n
    else:
        first = q.conditions[0].measure if q.conditions else measures[0]
        order, limit = (first, True), None
    sel, _ = _measure_select(measures, cols, group, where, conditions=q.conditions, order=order, limit=limit)
    _at(sel, q)
    return Compiled(sel.sql(), q.display or _set_hint(q, list_all))


def _set_hint(q: Query, list_all: bool) -> DisplayHint:
    if list_all:
        return "map" if len(q.measures) == 1 else "table"
    if len(q.measures) == 1:
        return "bar"
    return "grouped" if len(q.measures) == 2 else "table"


def _matching(q: Query) -> str:
    """The places of a set that meet the conditions, one row each with the measures' values (a subquery)."""
    level = q.geo.level
    where = set_filters(q.geo)
    if q.op is Op.COUNT:
        sel, _ = _measure_select(q.measures, ["g.geo_id"], ["g.geo_id"], where, conditions=q.conditions,
                                 values=False)
        _at(sel, q)
    else:
        group = group_columns(level)
        first = q.conditions[0].measure if q.conditions else q.measures[0]
        sel, _ = _measure_select(q.measures, place_columns(level), group, where, conditions=q.conditions,
                                 order=(first, True))
        _at(sel, q)
    return sel.sql()


def _noun(level: str) -> str:
    return {"county": "counties", "state": "states", "place": "places"}.get(level, "areas")


def _count(q: Query) -> Compiled:
    noun = _noun(q.geo.level)
    if not q.measures:
        sel = Select([f"COUNT(*) AS {noun}_count"], source="public.geography g", where=set_filters(q.geo))
        return Compiled(sel.sql(), "big")
    return Compiled(f"SELECT COUNT(*) AS {noun}_count FROM ({_matching(q)}) AS matching", "big")


def _total(q: Query) -> Compiled:
    geo = q.geo
    hint: DisplayHint = "big" if len(q.sums) == 1 else "statrow"
    if geo.places:  # named places added together
        cols = [f"{m.sql_expression('e')} AS combined_{m.column}" for m in q.measures]
        sel = Select(cols, where=[f"g.level = '{geo.level}'", place_filter(geo.places, geo.level),
                                  code_filter(variable_codes(q.measures))])
        _at(sel, q)
        return Compiled(sel.sql(), q.display or ("big" if len(q.measures) == 1 else "statrow"))
    if not q.conditions and geo.level == "state" and not geo.within:  # the US (or another sum of state rows)
        cols = [f"{m.sql_expression('e')} AS {us_column(m)}" for m in q.measures]
        sel = Select(cols, where=set_filters(geo) + [code_filter(variable_codes(q.measures))])
        _at(sel, q)
        return Compiled(sel.sql(), q.display or ("big" if len(q.measures) == 1 else "statrow"))
    noun = _noun(geo.level)
    sums = [f"SUM({m.column}) AS total_{m.column}" for m in q.sums]
    return Compiled(f"SELECT {', '.join(sums)}, COUNT(*) AS {noun} FROM ({_matching(q)}) AS matching",
                    q.display or hint)


def _share(q: Query) -> Compiled:
    m = q.measures[0]
    parts = q.geo.places
    if q.combined:
        return _combined_share(q)
    if q.share_of == "us" and q.geo.level in ("county", "place"):
        return _share_of_us(q)
    if q.geo.level in ("county", "place"):
        level = q.geo.level
        col = f"pct_of_state_{m.column}"
        where = place_filter(parts, level, alias="c")
        names = "c.county_name, c.state_name" if level == "county" else "c.name"
        outer = "county_name, state_name" if level == "county" else "name"
        if m.kind == "direct":
            code = m.numerator[0]
            sql = (f"SELECT {names}, ce.estimate AS {m.column}, "
                   f"se.estimate AS state_{m.column}, "
                   f"ROUND(100.0 * ce.estimate / NULLIF(se.estimate, 0), 1) AS {col} "
                   f"FROM public.geography c "
                   f"JOIN public.estimates ce ON ce.geo_id = c.geo_id AND ce.variable_code = '{code}' "
                   f"JOIN public.geography s ON s.level = 'state' AND s.state_fips = c.state_fips "
                   f"JOIN public.estimates se ON se.geo_id = s.geo_id AND se.variable_code = '{code}' "
                   f"WHERE c.level = '{level}' AND {where}")
        else:
            inner = (f"SELECT {names}, "
                     f"(SELECT {m.sql_expression('ce')} FROM public.estimates ce WHERE ce.geo_id = c.geo_id) "
                     f"AS {m.column}, "
                     f"(SELECT {m.sql_expression('se')} FROM public.estimates se WHERE se.geo_id = s.geo_id) "
                     f"AS state_{m.column} "
                     f"FROM public.geography c "
                     f"JOIN public.geography s ON s.level = 'state' AND s.state_fips = c.state_fips "
                     f"WHERE c.level = '{level}' AND {where}")
            sql = (f"SELECT {outer}, {m.column}, state_{m.column}, "
                   f"ROUND(100.0 * {m.column} / NULLIF(state_{m.column}, 0), 1) AS {col} FROM ({inner}) AS x")
    else:
        col = f"pct_of_us_{m.column}"
        us = Select([m.sql_expression("u")],
                    source="public.estimates u JOIN public.geography ug ON ug.geo_id = u.geo_id",
                    where=["ug.level = 'state'"] + [x for x in [exclude_filter(q.geo.exclude, "ug")] if x])
        sel = Select(["g.state_name", f"{m.sql_expression('e')} AS {m.column}",
                      f"ROUND(100.0 * {m.sql_expression('e', rounded=False)} / NULLIF(({us.sql()}), 0), 1) AS {col}"],
                     where=["g.level = 'state'", place_filter(parts, "state"), code_filter(m.codes)],
                     group=["g.state_name"])
        sql = sel.sql()
    return Compiled(sql, q.display or ("big" if len(parts) == 1 else "bar"))


def _share_of_us(q: Query) -> Compiled:
    """A county's or a place's count as a share of the US (the sum over the 50 states + DC)."""
    m = q.measures[0]
    level = q.geo.level
    us = Select([m.sql_expression("u")], source="public.estimates u JOIN public.geography ug ON ug.geo_id = u.geo_id",
                where=["ug.level = 'state'", "ug.state_abbr <> 'PR'", code_filter(m.codes, "u")])
    share = f"ROUND(100.0 * {m.sql_expression('e', rounded=False)} / NULLIF(({us.sql()}), 0), 2)"
    sel = Select(place_columns(level) + [f"{m.sql_expression('e')} AS {m.column}", f"{share} AS pct_of_us_{m.column}"],
                 where=[f"g.level = '{level}'", place_filter(q.geo.places, level), code_filter(m.codes)],
                 group=group_columns(level))
    return Compiled(sel.sql(), q.display or ("big" if len(q.geo.places) == 1 else "bar"))


def _combined_share(q: Query) -> Compiled:
    """Named places added together, as a share of their parent (their state, or the US)."""
    m = q.measures[0]
    parts = q.geo.places
    level = q.geo.level
    part = Select([m.sql_expression("ce")],
                  source="public.estimates ce JOIN public.geography c ON c.geo_id = ce.geo_id",
                  where=[f"c.level = '{level}'", place_filter(parts, level, alias="c"), code_filter(m.codes, "ce")])
    if level in ("county", "place"):
        parent_name, col = "state", f"pct_of_state_{m.column}"
        whole = Select([m.sql_expression("se")], source="public.estimates se",
                       where=[f"se.geo_id = {sql_str(parts[0].state.geo_id)}", code_filter(m.codes, "se")])
    else:
        parent_name, col = "us", f"pct_of_us_{m.column}"
        whole = Select([m.sql_expression("se")],
                       source="public.estimates se JOIN public.geography s ON s.geo_id = se.geo_id",
                       where=["s.level = 'state'"] + [x for x in [exclude_filter(q.geo.exclude, "s")] if x]
                       + [code_filter(m.codes, "se")])
    inner = (f"SELECT ({part.sql()}) AS combined_{m.column}, ({whole.sql()}) AS {parent_name}_{m.column}")
    sql = (f"SELECT combined_{m.column}, {parent_name}_{m.column}, ROUND(100.0 * combined_{m.column} / "
           f"NULLIF({parent_name}_{m.column}, 0), 1) AS {col} FROM ({inner}) AS x")
    return Compiled(sql, q.display or "big")


def _per_parent(q: Query) -> Compiled:
    rank = q.rank
    where = ["g.level = 'county'"] + [x for x in [exclude_filter(q.geo.exclude)] if x]
    sel = Select(["g.state_name", "COUNT(*) AS counties"], source="public.geography g", where=where,
                 group=["g.state_name"],
                 order=[f"counties {'DESC' if rank is None or rank.descending else 'ASC'}", "g.state_name"],
                 limit=rank.n if rank and rank.n else None)
    return Compiled(sel.sql(), q.display or "bar")


__all__ = ["Compiled", "Select", "compile_query", "set_filters", "sql_str"]
