"""The Explore page's questions (the variables with estimates, a variable's places), asked through the same layers
as any other SQL: :func:`sage.agent.run_sql` guards it and runs it as the read-only role, and pages hold no SQL
(docs/design.md: "No SQL ... in pages").  (The page's schema tab and its list of loaded ACS tables read catalog
metadata on the owner's connection: :mod:`sage.introspect`, :func:`sage.status.loaded_tables`.)

The SQL here is built from values the page got from the variable list itself; codes and levels are still checked,
so a crafted value cannot change the statement.

Example:
    >>> top_places_sql("B19013_001E", "county")[:40]
    'SELECT g.geo_id, g.state_name, g.state_a'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .agent import Answer, run_sql
from .census.codes import is_variable_code
from .census.schema import LEVELS, STATE_LEVELS
from .errors import ErrorKind, QuestionError
from .settings import Settings

#: every county fits (3,222 rows in the shipped extract); the guard still caps the query at this LIMIT (the 32,325
#: places do not: the largest 4,000 are shown)
MAX_PLACES = 4000
#: one place of a level, and many
LEVEL_NAMES = {"nation": "Nation", "state": "State", "county": "County", "place": "Place", "cbsa": "Metro area",
               "cd": "District", "tract": "Tract", "zcta": "ZCTA"}
LEVEL_PLURALS = {"nation": "nation", "state": "states", "county": "counties", "place": "places",
                 "cbsa": "metro areas", "cd": "districts", "tract": "tracts", "zcta": "ZCTAs"}

_LEVEL_COUNTS = ",\n       ".join(
    f"count(e.estimate) FILTER (WHERE g.level = '{level}') AS {level}_rows" for level in LEVELS
)
VARIABLES_SQL = f"""SELECT v.variable_code, v.label, v.concept, v.category, v.universe, v.vintage,
       array_to_string(v.vintages, ', ') AS vintages, v.table_id,
       {_LEVEL_COUNTS}
FROM public.variables v
LEFT JOIN public.estimates e ON e.variable_code = v.variable_code
LEFT JOIN public.geography g ON g.geo_id = e.geo_id
GROUP BY v.variable_code, v.label, v.concept, v.category, v.universe, v.vintage, v.vintages, v.table_id
ORDER BY v.category, v.variable_code"""


def variable_list(settings: Settings) -> Answer:
    """The variables with estimates: their latest period (``vintage``), every period loaded (``vintages``, e.g.
    '2014-2018, 2019-2023') and how many rows of the latest period each level has (``state_rows``, ``place_rows``,
    ... one column per level of :data:`LEVELS`)."""
    return run_sql(VARIABLES_SQL, settings, question="(explore: variable catalog)", record=False)


def levels_with_rows(row: Mapping[str, Any]) -> list[str]:
    """The levels a row of :func:`variable_list` has estimates for, in :data:`LEVELS` order."""
    return [level for level in LEVELS if (row.get(f"{level}_rows") or 0) > 0]


def top_places_sql(code: str, level: str) -> str:
    """Every place's estimate (and margin of error) of one variable at one level, largest first."""
    if not is_variable_code(code):
        raise QuestionError(f"{code!r} is not an ACS variable code like B19013_001E.", kind=ErrorKind.QUESTION_CODE)
    if level not in LEVELS:
        raise QuestionError(f"The level must be one of {', '.join(LEVELS)}, not {level!r}.",
                            kind=ErrorKind.QUESTION_LEVEL)
    if level in ("state", "county"):
        names = "g.state_name, g.state_abbr, " + ("g.county_name, " if level == "county" else "")
    else:  # the Census name, with its state where it has one ('Austin city, Texas')
        names = "g.name, " + ("g.state_abbr, " if level in STATE_LEVELS else "")
    return (
        f"SELECT g.geo_id, {names}e.estimate, e.margin_error\n"
        "FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id\n"
        f"WHERE e.variable_code = '{code}' AND g.level = '{level}' AND e.estimate IS NOT NULL\n"
        "ORDER BY e.estimate DESC, g.geo_id"
    )


def places(settings: Settings, code: str, level: str) -> Answer:
    """All places of ``level`` with an estimate of ``code`` (for the top-places chart and the map)."""
    sql = top_places_sql(code, level)
    wide = settings.replace(max_rows=max(settings.max_rows, MAX_PLACES))
    return run_sql(sql, wide, question=f"(explore: {code} by {level})", record=False)


__all__ = ["LEVELS", "LEVEL_NAMES", "LEVEL_PLURALS", "VARIABLES_SQL", "levels_with_rows", "places", "top_places_sql",
           "variable_list"]
