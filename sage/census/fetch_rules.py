"""The rules of ``census fetch`` that need no network and no database: which tables, periods, levels and states a
fetch may ask for (checked, with a message that says what to type instead), and the names it gives what it loads
(the period ``2019-2023``, the source ``census-api:2023/acs/acs5``, the category of a table, a label compared across
periods, the shell command that adds a table).

Apart from :mod:`sage.census.fetch` (which runs a fetch) because the command line, the app and the fetch job use
these rules on their own, before anything is downloaded, and :mod:`sage.census.fetch_load` names its rows with them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date

from ..errors import CensusApiError, ErrorKind
from .api import dataset_path
from .codes import is_table_id
from .download import GeoIndex
from .schema import LEVELS, STATE_LEVELS

#: the tables the semantic layer and the examples want: with internet, `--preset core` rebuilds a complete
#: extract (margins of error included) for one vintage
PRESETS: dict[str, list[str]] = {
    "core": [
        "B01001", "B01002", "B01003", "B02001", "B03002", "B08301", "B08303", "B15003", "B17001", "B19001",
        "B19013", "B19083", "B19301", "B23025", "B25002", "B25003", "B25064", "B25070", "B25077", "B27010",
        "B28011",
    ],
}

#: the vintage of the shipped geography and catalog; the CLI's default
DEFAULT_VINTAGE = 2023
#: the first ACS 5-year release (2005-2009)
FIRST_VINTAGE = 2009
#: the default levels (``--geographies``); :data:`sage.census.schema.LEVELS` are all of them
GEOGRAPHIES = ("state", "county")
#: how reports name many places of a level
PLURALS = {"nation": "nation", "state": "states", "county": "counties", "place": "places", "cbsa": "metro areas",
           "cd": "congressional districts", "tract": "tracts", "zcta": "ZCTAs"}


_CATEGORY_BY_PREFIX = {
    "08": "transportation",
    "14": "education",
    "15": "education",
    "17": "poverty",
    "22": "poverty",
    "19": "income",
    "20": "income",
    "23": "employment",
    "24": "employment",
    "25": "housing",
    "27": "health_insurance",
}
#: disability tables that are about health insurance coverage (the rest of B18 is demographics)
_HEALTH_INSURANCE_NUMBERS = ("18135", "18136")


def category_for(table_id: str) -> str:
    """The category of an ACS table, by its number, exactly as ``data/acs/SOURCE.md`` assigns it.

    B08 transportation; B14, B15 education; B17, B22 poverty; B19, B20 income; B23, B24 employment; B25 housing;
    B27 and B18135/B18136 health_insurance; everything else demographics (so B28011 internet subscriptions is
    demographics).  The same rule holds for collapsed ``C`` tables (C15 education, C24 employment, ...).
    """
    table_id = (table_id or "").upper()
    if table_id[1:6] in _HEALTH_INSURANCE_NUMBERS:
        return "health_insurance"
    return _CATEGORY_BY_PREFIX.get(table_id[1:3], "demographics")


def vintage_label(year: int) -> str:
    """The 5-year period a release year stands for: 2023 -> '2019-2023'."""
    return f"{int(year) - 4}-{int(year)}"


def source_label(year: int) -> str:
    """The ``source`` of fetched rows and of their ``sage.census_tables`` entry."""
    return f"census-api:{dataset_path(year)}"


def fetch_command(tables: Iterable[str], vintage: int = DEFAULT_VINTAGE, geographies: Iterable[str] | None = None,
                  states: Iterable[str] | None = None) -> str:
    """The shell command that adds ``tables`` (for the Explore page and messages, e.g. a planner declining a place
    question names ``fetch_command(["B19013"], geographies=["place"])``)."""
    command = f"python -m sage census fetch --vintage {int(vintage)} --tables {','.join(tables)}"
    geos = list(geographies or [])
    if geos and tuple(geos) != GEOGRAPHIES:
        command += f" --geographies {','.join(geos)}"
    if states:
        command += f" --states {','.join(states)}"
    return command


def resolve_tables(tables: str | Iterable[str] | None = None, preset: str | None = None) -> list[str]:
    """Table ids from a comma-separated string or a list, or a preset name; upper-cased, de-duplicated, checked."""
    if preset:
        if preset not in PRESETS:
            raise CensusApiError(
                f"Unknown preset {preset!r}; choose one of {', '.join(sorted(PRESETS))}.",
                kind=ErrorKind.INVALID_ARGUMENT,
            )
        return list(PRESETS[preset])
    if isinstance(tables, str):
        tables = tables.split(",")
    out: list[str] = []
    for t in tables or []:
        t = str(t).strip().upper()
        if t and t not in out:
            out.append(t)
    if not out:
        raise CensusApiError("Name at least one table (e.g. --tables B25003) or a preset (--preset core).",
                             kind=ErrorKind.INVALID_ARGUMENT)
    bad = [t for t in out if not is_table_id(t)]
    if bad:
        raise CensusApiError(
            f"{', '.join(bad)} {'is not an ACS table id' if len(bad) == 1 else 'are not ACS table ids'} "
            "(a B or C and five digits, with an optional letter suffix, e.g. B25003 or B19013A). "
            "Find ids with `python -m sage census tables --search TEXT`.",
            kind=ErrorKind.INVALID_ARGUMENT,
        )
    return out


def _check_vintage(vintage: int) -> int:
    try:
        year = int(vintage)
    except (TypeError, ValueError):
        raise CensusApiError(f"The vintage must be a year such as {DEFAULT_VINTAGE}, not {vintage!r}.",
                             kind=ErrorKind.INVALID_ARGUMENT) from None
    if not FIRST_VINTAGE <= year <= date.today().year:
        raise CensusApiError(
            f"ACS 5-year data exist for the years {FIRST_VINTAGE} to the latest release, not {year} "
            f"(the year is the last of the five: {DEFAULT_VINTAGE} = {vintage_label(DEFAULT_VINTAGE)}).",
            kind=ErrorKind.INVALID_ARGUMENT,
        )
    return year


def _check_geographies(geographies: Iterable[str]) -> tuple[str, ...]:
    geos = tuple(dict.fromkeys(str(g).strip().lower() for g in geographies if str(g).strip()))
    bad = [g for g in geos if g not in LEVELS]
    if not geos or bad:
        raise CensusApiError(
            f"Geographies are one or more of {', '.join(LEVELS)}, not {', '.join(bad) or 'nothing'}.",
            kind=ErrorKind.INVALID_ARGUMENT,
        )
    return geos


def _check_states(states: Iterable[str] | None, index: GeoIndex, geos: tuple[str, ...]) -> list[str] | None:
    """``--states`` (USPS abbreviations or 2-digit FIPS codes) as sorted FIPS codes; None when not given."""
    wanted = [str(s).strip().upper() for s in (states or []) if str(s).strip()]
    if not wanted:
        return None
    by_abbr = {abbr: fips for fips, (abbr, _name) in index.states.items()}
    out, bad = set(), []
    for s in wanted:
        if s in by_abbr:
            out.add(by_abbr[s])
        elif s in index.states:
            out.add(s)
        else:
            bad.append(s)
    if bad:
        raise CensusApiError(f"{', '.join(bad)} {'is not a state' if len(bad) == 1 else 'are not states'}: name "
                             "states by their USPS abbreviation, e.g. --states TX,CA.", kind=ErrorKind.INVALID_ARGUMENT)
    if not any(g in STATE_LEVELS for g in geos):
        raise CensusApiError(
            f"--states limits the levels inside a state ({', '.join(STATE_LEVELS)}); {', '.join(geos)} "
            f"{'is' if len(geos) == 1 else 'are'} not inside one state.",
            kind=ErrorKind.INVALID_ARGUMENT,
        )
    return sorted(out)


_DOLLAR_YEAR = re.compile(r"\b(?:19|20)\d\d(?= inflation-adjusted)")


def label_key(label: str) -> str:
    """A label for comparing periods: lower case, without colons (the API added them to every total in 2019),
    without the year of "in 2018 inflation-adjusted dollars" (every period names its own), spaces collapsed."""
    text = _DOLLAR_YEAR.sub("", (label or "").lower()).replace(":", "")
    return re.sub(r"\s+", " ", text).strip()


__all__ = [
    "DEFAULT_VINTAGE",
    "GEOGRAPHIES",
    "PRESETS",
    "category_for",
    "fetch_command",
    "label_key",
    "resolve_tables",
    "source_label",
    "vintage_label",
]
