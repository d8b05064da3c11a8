"""SQL of frames about places named one by one beyond their plain values: the difference between two places with
its margin, the ratio of two counts, a count per N residents, places next to the US, and a place's share of its
state or of the US (alone or added together).  Called by :func:`.compile.compile_query`."""

from __future__ import annotations

from ....types import DisplayHint
from ..frame.frame import Query
from .sqlparts import (
    Compiled,
    Select,
    code_filter,
    exclude_filter,
    group_columns,
    measure_select,
    place_columns,
    place_filter,
    sql_str,
    variable_codes,
)


def named_columns(q: Query) -> tuple[list[str], list[str], list[str], str | None]:
    """Head columns, WHERE and GROUP BY of named places of any levels (by GEO_ID, named by the Census NAME), and
    the level whose margins apply (None when the places are of several levels)."""
    places = q.geo.places
    levels = {pl.level for pl in places}
    where = [f"g.geo_id IN ({', '.join(sql_str(pl.geo_id) for pl in places)})"] if len(places) > 1 else \
        [f"g.geo_id = {sql_str(places[0].geo_id)}"]
    return ["g.name"], where, ["g.geo_id", "g.name"], (next(iter(levels)) if len(levels) == 1 else None)


def difference(q: Query) -> Compiled:
    """One row: the two places, their values, the difference (first − second) and its 90% margin of error
    (``moe_difference``: the square root of the sum of the squared margins)."""
    m = q.measures[0]
    first, second = q.geo.places
    head, where, group, level = named_columns(q)
    levels = {pl.level for pl in q.geo.places}
    margin = level if level is not None else (next(iter(levels)) if all(x in m.moe_levels for x in levels)
                                               else None)
    inner, has_moe = measure_select([m], ["g.geo_id", "g.name"], group, where, margin_level=margin)
    col = m.column
    cols = ["a.name AS first_place", "b.name AS second_place", f"a.{col} AS first_{col}",
            f"b.{col} AS second_{col}", f"a.{col} - b.{col} AS difference"]
    if has_moe:
        cols += [f"a.{col}_moe AS first_{col}_moe", f"b.{col}_moe AS second_{col}_moe",
                 f"moe_difference(a.{col}_moe, b.{col}_moe) AS difference_moe"]
    sql = (f"WITH v AS ({inner.sql()}) SELECT {', '.join(cols)} FROM v a, v b "
           f"WHERE a.geo_id = {sql_str(first.geo_id)} AND b.geo_id = {sql_str(second.geo_id)}")
    return Compiled(sql, q.display or "statrow", has_moe, compare="difference")


def ratio(q: Query, margins: bool) -> Compiled:
    """The first count over the second for each named place, with the ratio's margin of error (``moe_ratio``)
    where both counts have published margins."""
    a, b = q.measures[:2]
    head, where, group, level = named_columns(q)
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


def per_n(q: Query) -> Compiled:
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


def with_us(q: Query) -> Compiled:
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


def share(q: Query) -> Compiled:
    m = q.measures[0]
    parts = q.geo.places
    if q.combined:
        return combined_share(q)
    if q.share_of == "us" and q.geo.level in ("county", "place"):
        return share_of_us(q)
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


def share_of_us(q: Query) -> Compiled:
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


def combined_share(q: Query) -> Compiled:
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


__all__ = ["combined_share", "difference", "named_columns", "per_n", "ratio", "share", "share_of_us", "with_us"]
