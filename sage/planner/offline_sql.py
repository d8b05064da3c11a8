"""The offline planner's SQL in the house style: filters on places and variable codes, the one SELECT shape
(plain for one direct measure, a FILTER pivot otherwise), thresholds as conditions, and the plain variant that
is retried after an error."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..census.semantic import Measure
from .catalog import State
from .parsed import Place, Threshold


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
    if level == "state":
        return state_filter([pl.state for pl in places], alias)
    counties = [pl.county for pl in places if pl.county is not None]
    if len(counties) == 1:
        c = counties[0]
        return f"{alias}.county_name = {sql_str(c.name)} AND {alias}.state_name = {sql_str(c.state.name)}"
    pairs = ", ".join(f"({sql_str(c.name)}, {sql_str(c.state.name)})" for c in counties)
    return f"({alias}.county_name, {alias}.state_name) IN ({pairs})"


def select_sql(measures: Sequence[Measure], place_cols: Sequence[str], group: Sequence[str], level_cond: str | None,
               where: str, *, conds: Sequence[str] = (), order: tuple[Measure, str] | None = None,
               limit: int | None = None, moe_level: str | None = None, simple_cols: bool = True,
               window: tuple[Measure, str] | None = None) -> str:
    """One SELECT in the house style: the plain form for one direct measure, else a FILTER pivot per place.

    ``window`` adds ``rank_in_state``, the row number of each place within its state by that measure."""
    where_all = " AND ".join(x for x in (level_cond, where) if x)
    frm = "FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id"
    codes = variable_codes(measures)
    if len(measures) == 1 and measures[0].kind == "direct":
        m = measures[0]
        cols = list(place_cols) + [f"e.estimate AS {m.column}"]
        if moe_level and moe_level in m.moe_levels:
            cols.append(f"e.margin_error AS {m.column}_moe")
        if not simple_cols:
            cols = list(place_cols)
        if window:
            cols.append(f"ROW_NUMBER() OVER (PARTITION BY g.state_name ORDER BY e.estimate {window[1]} NULLS LAST) "
                        "AS rank_in_state")
        sql = f"SELECT {', '.join(cols)} {frm} WHERE {where_all} AND e.variable_code = '{m.numerator[0]}'"
        for c in conds:
            sql += f" AND {c.split('|', 1)[1].replace('{x}', 'e.estimate')}"
        if order:
            sql += f" ORDER BY e.estimate {order[1]} NULLS LAST"
        if limit:
            sql += f" LIMIT {limit}"
        return sql
    cols = list(place_cols)
    if simple_cols:
        for m in measures:
            cols.append(f"{m.sql_expression('e')} AS {m.column}")
            if moe_level and moe_level in m.moe_levels:
                moe = m.moe_sql_expression("e")
                if moe:
                    cols.append(f"{moe} AS {m.column}_moe")
    if window:
        cols.append(f"ROW_NUMBER() OVER (PARTITION BY g.state_name ORDER BY "
                    f"{window[0].condition_expression('e')} {window[1]} NULLS LAST) AS rank_in_state")
    sql = f"SELECT {', '.join(cols)} {frm} WHERE {where_all} AND {code_filter(codes)} GROUP BY {', '.join(group)}"
    having = []
    by_name = {m.name: m for m in measures}
    for c in conds:
        name, rest = c.split("|", 1)
        having.append(rest.replace("{x}", by_name[name].condition_expression("e")))
    if having:
        sql += " HAVING " + " AND ".join(having)
    if order and simple_cols:
        sql += f" ORDER BY {order[0].column} {order[1]} NULLS LAST"
    if limit:
        sql += f" LIMIT {limit}"
    return sql


def out_cols(m: Measure, sql: str) -> list[str]:
    """The output columns a measure contributes to ``sql`` (its value, and its MOE when selected)."""
    return [m.column] + ([f"{m.column}_moe"] if f"AS {m.column}_moe" in sql else [])


def threshold_sql(th: Threshold) -> str:
    """``measure_name|condition`` with ``{x}`` standing for the measure's value (``e.estimate`` in the plain
    form, the unrounded aggregate in a pivot's HAVING)."""
    assert th.measure is not None  # thresholds are bound to their measure before SQL is written
    if th.ref is not None:
        ref = (f"(SELECT {th.measure.condition_expression('r')} FROM public.estimates r "
               f"WHERE r.geo_id = {sql_str(th.ref.geo_id)})")
        body = f"{{x}} {th.op} {ref}"
    elif th.op == "between":
        assert th.value2 is not None  # "between" always reads two numbers
        body = f"{{x}} >= {sql_num(th.value)} AND {{x}} <= {sql_num(th.value2)}"
    else:
        body = f"{{x}} {th.op} {sql_num(th.value)}"
    return f"{th.measure.name}|{body}"


def us_col(m: Measure) -> str:
    return m.column if m.is_rate else f"us_{m.column}"


def squash(sql: str) -> str:
    return re.sub(r"\s+", " ", sql or "").strip().rstrip(";").lower()


def simplify(sql: str) -> str | None:
    out = re.sub(r", (MAX\(e\.margin_error\)[^,]*|e\.margin_error|ROUND\(100\.0 \* SQRT[^A]*?) AS \w+_moe", "", sql)
    out = out.replace(", g.geo_id FROM", " FROM")
    return out if out != sql else None
