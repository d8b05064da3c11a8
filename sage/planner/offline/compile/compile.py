"""The offline planner's one SQL compiler: a :class:`~sage.planner.offline.frame.frame.Query` in, SQL in the house
style out.

Every answer the offline planner gives is written here, from the frame alone, as a small :class:`Select` value
rendered once — never by editing SQL text.  The house style: ``public.estimates e JOIN public.geography g``,
variable codes in the WHERE clause, one row per place, rates from counts of one table (``NULLIF`` against a zero
denominator, rounded to one decimal), medians read only where they are published, ``NULLS LAST`` in rankings, and
the published or derived 90% margin of error as ``<column>_moe`` next to a value where the data has one.

``margins=False`` compiles the same frame without margin-of-error and map columns: the variant a retry falls back
to when the full query failed.
"""

from __future__ import annotations

from ....census.semantic import CONTROLLED_TOTALS
from ....types import DisplayHint
from ..frame.frame import Op, Query
from .compile_named import difference, per_n, ratio, share, with_us
from .sqlparts import (
    BY_VINTAGE,
    Compiled,
    Select,
    code_filter,
    exclude_filter,
    group_columns,
    in_period,
    measure_select,
    place_columns,
    place_filter,
    sql_str,
    us_column,
    variable_codes,
)
from .sqlparts import set_filters as _set_filters


def compile_ids(q: Query) -> str:
    """The SQL of ``q`` with each row's ``geo_id``: what "which of those ..." selects among."""
    return compile_query(q, ids=True).sql


def set_filters(geo, alias: str = "g") -> list[str]:
    """:func:`.sqlparts.set_filters`, reading an earlier answer's places with this compiler."""
    return _set_filters(geo, alias, compile_ids)


# ---------------------------------------------------------------------------------------------------------------
# the compiler


def compile_query(q: Query, *, margins: bool = True, ids: bool = False) -> Compiled:
    """The SQL of ``q`` (see the module docstring); ``margins=False`` leaves out margin and map columns;
    ``ids=True`` adds each row's ``geo_id`` (for "which of those ..." follow-ups, which select among them)."""
    op = q.op
    if ids and op not in (Op.VALUE, Op.RANK, Op.LIST, Op.CHANGE):
        raise ValueError(f"an answer of kind {op} has no places to select among")
    if op is Op.DIFFERENCE:
        return difference(q)
    if op is Op.CHANGE:
        return _change(q, ids)
    if op is Op.VALUE:
        if q.ratio and not ids:
            return ratio(q, margins)
        if q.per_n and not ids:
            return per_n(q)
        if q.with_us and not ids:
            return with_us(q)
        return _value(q, margins, ids)
    if op in (Op.RANK, Op.LIST):
        return _set(q, margins, ids)
    if op is Op.COUNT:
        return _count(q)
    if op is Op.TOTAL:
        return _total(q)
    if op is Op.SHARE:
        return share(q)
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
            earlier = compile_ids(q.geo.among)
            where = [f"g.level = '{level}'",
                     f"({place_filter(places, level)} OR g.geo_id IN (SELECT geo_id FROM ({earlier}) AS earlier))"]
            single = False
        head = place_columns(level)
        group = group_columns(level)
        margin_level = level if (margins and (single or len(measures) == 1)) else None
    if ids and "g.geo_id" not in head:
        head = head + ["g.geo_id"]
        group = group if "g.geo_id" in group else ["g.geo_id", *group]
    sel, has_moe = measure_select(measures, head, group, where, margin_level=margin_level,
                                   order=None if single else (measures[0], True))
    in_period(sel, q)
    hint: DisplayHint
    if single:
        hint = "big" if len(measures) == 1 else "statrow"
    else:
        hint = "bar" if len(measures) == 1 else ("grouped" if len(measures) == 2 else "table")
    return Compiled(sel.sql(), q.display or hint, has_moe, compare=None if single else "places")


# ---------------------------------------------------------------------------------------------------------------
# a change between two periods



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


def _change(q: Query, ids: bool = False) -> Compiled:
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
    if ids and (total or ch.count):
        raise ValueError("a change added up or counted has no places to select among")
    a, b = _period_values(q, early, total), _period_values(q, late, total)
    real = ch.dollars in ("real", "both")
    digits = 0 if m.unit in ("dollars", "count") else 1
    names = [] if total else [c.split(".")[1] for c in place_columns(q.geo.level)]
    col = m.column
    rate = m.unit == "percent"
    earlier, moe_earlier = ("a.v * cpi.f", "a.v_moe * cpi.f") if real else ("a.v", "a.v_moe")
    cols = (["b.geo_id"] if ids else []) + [f"b.{n}" for n in names] + [
        f"ROUND({earlier}, {digits}) AS {col}_{early.replace('-', '_')}",
        f"ROUND(b.v, {digits}) AS {col}_{late.replace('-', '_')}",
        # the change and its margin unrounded: the significance test reads them (the card rounds for display)
        f"b.v - {earlier} AS change",
        f"moe_difference(b.v_moe, {moe_earlier}) AS change_moe"]
    if not rate:
        cols += [f"ROUND(100.0 * (b.v - {earlier}) / NULLIF({earlier}, 0), 1) AS pct_change",
                 f"ROUND(moe_pct_change({earlier}, b.v, {moe_earlier}, b.v_moe), 1) AS pct_change_moe"]
    if ch.dollars == "both":  # the change in dollars as published too, beside the real one
        cols += ["b.v - a.v AS nominal_change", "moe_difference(b.v_moe, a.v_moe) AS nominal_change_moe",
                 "ROUND(100.0 * (b.v - a.v) / NULLIF(a.v, 0), 1) AS nominal_pct_change"]
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
        inner, _ = measure_select(measures, cols, group, where, conditions=q.conditions,
                                   window=(rank.by, rank.descending))
        in_period(inner, q)
        names = ["county_name", "state_name"] + (["geo_id"] if ids else []) + [m.column for m in measures]
        sql = (f"SELECT {', '.join(names)} FROM ({inner.sql()}) AS ranked WHERE rank_in_state <= {rank.n} "
               f"ORDER BY state_name, rank_in_state")
        return Compiled(sql, q.display or _set_hint(q, list_all))
    if rank is not None:
        order = (rank.by, rank.descending)
        limit: int | None = rank.n
    else:
        first = q.conditions[0].measure if q.conditions else measures[0]
        # a list of places above a limit starts with the highest, one below a limit with the lowest: the furthest
        # past the line first
        below = bool(q.conditions) and q.conditions[0].op in ("<", "<=") and q.conditions[0].measure == first
        order, limit = (first, not below), None
    # a ranking, or units named by code, shows each value's margin: its places are compared, neighbour by neighbour
    compared = margins and not ids and (rank is not None or bool(geo.units)) and not (
        q.periods and q.periods[0] != measures[0].vintage)
    sel, has_moe = measure_select(measures, cols, group, where, conditions=q.conditions, order=order, limit=limit,
                                  margin_level=level if compared else None)
    in_period(sel, q)
    many = (rank is not None and rank.n > 1) or len(geo.units) > 1
    return Compiled(sel.sql(), q.display or _set_hint(q, list_all), has_moe,
                    compare="places" if has_moe and many else None)


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
        sel, _ = measure_select(q.measures, ["g.geo_id"], ["g.geo_id"], where, conditions=q.conditions,
                                 values=False)
        in_period(sel, q)
    else:
        group = group_columns(level)
        first = q.conditions[0].measure if q.conditions else q.measures[0]
        sel, _ = measure_select(q.measures, place_columns(level), group, where, conditions=q.conditions,
                                 order=(first, True))
        in_period(sel, q)
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
        in_period(sel, q)
        return Compiled(sel.sql(), q.display or ("big" if len(q.measures) == 1 else "statrow"))
    if not q.conditions and geo.level == "state" and not geo.within:  # the US (or another sum of state rows)
        cols = [f"{m.sql_expression('e')} AS {us_column(m)}" for m in q.measures]
        sel = Select(cols, where=set_filters(geo) + [code_filter(variable_codes(q.measures))])
        in_period(sel, q)
        return Compiled(sel.sql(), q.display or ("big" if len(q.measures) == 1 else "statrow"))
    noun = _noun(geo.level)
    sums = [f"SUM({m.column}) AS total_{m.column}" for m in q.sums]
    return Compiled(f"SELECT {', '.join(sums)}, COUNT(*) AS {noun} FROM ({_matching(q)}) AS matching",
                    q.display or hint)


def _per_parent(q: Query) -> Compiled:
    rank = q.rank
    where = ["g.level = 'county'"] + [x for x in [exclude_filter(q.geo.exclude)] if x]
    sel = Select(["g.state_name", "COUNT(*) AS counties"], source="public.geography g", where=where,
                 group=["g.state_name"],
                 order=[f"counties {'DESC' if rank is None or rank.descending else 'ASC'}", "g.state_name"],
                 limit=rank.n if rank and rank.n else None)
    return Compiled(sel.sql(), q.display or "bar")


__all__ = ["Compiled", "Select", "compile_ids", "compile_query", "set_filters", "sql_str"]
