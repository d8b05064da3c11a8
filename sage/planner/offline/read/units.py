"""Levels asked for by their codes — census tracts, ZIP code tabulation areas, congressional districts, metro
areas — once `census fetch --geographies` has loaded them: "population of ZIP 78701", "median household income in
TX-21", "tract 11 in Travis County", "metro Atlanta", "the 10 census tracts of Travis County with the highest
poverty rate", "which congressional districts in Texas have the most people".

Apart from the readers of named places (:mod:`.places`, :mod:`.localities`) because these rows are not named by
words but by codes, and a question about them is read whole here: the unit or the set, the measures, a ranking.
Anything more (a change, another period, a share of a parent, a limit) is declined with the reason, never answered
for something else.  A level without rows is not read here: :func:`.localities.coded_level_decline` names the fetch.
"""

from __future__ import annotations

import re

from ....census.semantic import Measure
from ....text import normalize
from ....types import DisplayHint
from ..catalog import Catalog, Unit
from ..declines import Decline
from ..frame.frame import GeoSet, Op, Query, Rank
from .localities import CD_CODE, CODED_LEVELS, LEVEL_NAMES, coded_level, coded_level_decline
from .measures import implied_measure
from .parsed import Parse
from .ranking import read_rank
from .vocabulary import join_words, mask, nice_name

#: "the 21st congressional district of Texas", "Texas's 21st district"
_CD_ORDINAL = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\s+(?:congressional\s+)?district\b")
#: "tract 11", "census tract 11.01", "tract 0011.01"
_TRACT = re.compile(r"\b(?:census\s+)?tract\s+(?:no\.?\s*|number\s+|#\s*)?(\d{1,4})(?:\.(\d{1,2}))?\b")
#: the words around a metro area's principal city ("metro Atlanta", "the Atlanta metro area", "Atlanta MSA")
_METRO_WORD = re.compile(r"\b(?:metro(?:politan)?(?:\s+(?:statistical\s+)?areas?)?|msa|cbsa|micropolitan(?:\s+areas?)?|"
                         r"metro\s+region)\b")
#: a period named ("2014-2018", "in 2019"): the latest period is all this reader gives
_PERIOD = re.compile(r"\b(19|20)\d\d\s*(-|to|through)\s*(19|20)?\d\d\b|\b(in|for|during|of)\s+(19|20)\d\d\b")
#: a set of the level, not one of it
_PLURAL = re.compile(r"\b(metro(politan)? areas|micropolitan areas|metros|msas|cbsas|census tracts|tracts|zip codes|"
                     r"zips|zctas|postal codes|congressional districts|house districts|districts)\b")
#: "the most people", "how many people live in ...": the population
_PEOPLE = re.compile(r"\b(most|fewest|least|more|fewer)\s+(people|residents|inhabitants|persons)\b|"
                     r"\bhow many (people|residents|persons)\b")
#: what the reader here does not do: changes and other periods, shares, per-capita figures, sums
_BEYOND = re.compile(r"\b(since|between \d{4}|changed?|grew|grow\w*|growth|increase\w*|decrease\w*|share of|"
                     r"percent of|per capita|per \d|total|altogether|combined|average|sum)\b")


def unit_query(p: Parse, cat: Catalog, level: str, asked: str, district_state: str | None) -> Query:
    """The frame of a question about ``level`` (loaded): a named unit's values, or a set of the level ranked or
    listed; :class:`Decline` for what this reader does not answer."""
    what = LEVEL_NAMES[level]
    masked = mask(p.t, p.blocked)
    suggestions = _suggestions(level, p)
    _check_scope(p, level, masked, suggestions)
    measures = [m.measure for m in p.strong()]
    if not measures:
        implied = implied_measure(masked, cat)
        if implied is None and _PEOPLE.search(masked):
            implied = cat.measure("population")
        measures = [implied] if implied is not None else [m.measure for m in p.mentions][:1]
    if not measures:
        raise Decline(f"“{asked}”: which figure? Name it (population, median household income, poverty rate, ...).",
                      suggestions)
    _check_rows(p, level, measures, suggestions)
    notes = [_level_note(level)]
    units = _named_units(p, cat, level, district_state)
    if units:
        hint: DisplayHint = "table" if len(units) == 1 and len(measures) > 1 else ("big" if len(units) == 1 else "bar")
        notes.append(f"{'; '.join(u.name for u in units)}: by GEO_ID ({', '.join(u.geo_id for u in units)}).")
        return Query(Op.LIST, tuple(measures), GeoSet(level=level, units=tuple(units)), display=hint,
                     notes=tuple(notes + p.notes))
    if not _PLURAL.search(p.t):  # "the Springfield metro area", "tract 99": one, and it is not in the data
        raise Decline(f"“{asked}”: no such {what[:-1] if what.endswith('s') else what} found in the data; name it by "
                      "its code (“ZIP 78701”, “TX-21”, “tract 11.01 in Travis County, TX”) or, for a metro area, by "
                      "its first principal city (“metro Atlanta”).", suggestions)
    if p.thresholds:
        raise Decline(f"limits on {what} (“over …”, “more than …”) are beyond the offline planner; ask for the top "
                      "or bottom N instead.", suggestions)
    states = [pl.state for pl in p.places if pl.level == "state"]
    counties = [pl.county for pl in p.places if pl.level == "county" and pl.county is not None]
    if any(pl.level == "place" for pl in p.places):
        raise Decline(f"{what} are not kept to a city here (a city's boundary cuts across them); name a county or a "
                      "state.", suggestions)
    if (states or counties) and level in ("cbsa", "zcta"):
        raise Decline(f"{what} cross state lines and carry no state here, so they are not listed by state; ask for "
                      "the top or bottom N nationwide, or name one.", suggestions)
    if counties and level != "tract":
        raise Decline(f"{what} are not kept to a county (they cross county lines); name a state.", suggestions)
    direction, n, n_given = read_rank(p, masked, measures)
    within = tuple(dict.fromkeys(states)) if not counties else ()
    geo = GeoSet(level=level, within=within, in_counties=tuple(dict.fromkeys(counties)))
    scope = join_words([c.label for c in counties]) or join_words([s.name for s in within]) or "nationwide"
    notes.append(f"{what[0].upper() + what[1:]}: {scope}.")
    if direction is None:
        return Query(Op.LIST, tuple(measures), geo, notes=tuple(notes + p.notes))
    if not n_given:
        notes.append(f"No number given, so showing {n}.")
    return Query(Op.RANK, tuple(measures), geo, rank=Rank(measures[0], direction == "DESC", n, n_given),
                 notes=tuple(notes + p.notes))


def unit_edit(p: Parse, cat: Catalog, prior: Query, measures: list[Measure], add: bool) -> Query | None:
    """A follow-up naming a unit by its code ("what about TX-10?", "and ZIP 78702 too?"): the measures asked, or the
    previous answer's, for that unit (beside the previous units when it adds one).  None when it names no unit;
    :class:`Decline` when its level has no rows (the fetch) or the unit is not in the data."""
    found = coded_level(p, cat)
    if found is None:
        return None
    level, asked, district_state = found
    if level not in cat.levels:
        decline = coded_level_decline(p, cat, p.t, measures or list(prior.measures))
        if decline is not None:
            raise decline
        return None
    units = _named_units(p, cat, level, district_state)
    if not units:
        return None
    _check_scope(p, level, mask(p.t, p.blocked), _suggestions(level, p))
    measures = measures or list(prior.measures)
    _check_rows(p, level, measures, _suggestions(level, p))
    base = prior.geo.units if add and prior.geo.level == level else ()
    chosen = tuple(dict.fromkeys((*base, *units)))
    hint: DisplayHint = "big" if len(chosen) == 1 and len(measures) == 1 else ("table" if len(chosen) == 1 else "bar")
    return Query(Op.LIST, tuple(measures), GeoSet(level=level, units=chosen), display=hint,
                 notes=(_level_note(level), f"{'; '.join(u.name for u in chosen)}: by GEO_ID "
                                            f"({', '.join(u.geo_id for u in chosen)})."))


def _check_scope(p: Parse, level: str, masked: str, suggestions: list[str]) -> None:
    if p.periods or p.change or _BEYOND.search(masked) or _PERIOD.search(masked):
        raise Decline(f"for {LEVEL_NAMES[level]} the offline planner gives values and rankings of the latest period; "
                      "a change, another period, a share or a total of them is beyond it (the Claude planner, with "
                      "ANTHROPIC_API_KEY set, reads them all).", suggestions)


def _check_rows(p: Parse, level: str, measures: list[Measure], suggestions: list[str]) -> None:
    """A measure without rows at ``level``: the fetch that would add them (``needs_fetch``)."""
    lacking = [m for m in measures if not m.has_rows(level)]
    if not lacking:
        return
    what = LEVEL_NAMES[level]
    tables = sorted({c.split("_")[0] for m in lacking for c in m.codes})
    abbrs = sorted({pl.state.abbr for pl in p.places}) if level in ("cd", "tract") else []
    fetch: dict = {"tables": tables, "vintage": 2023, "geographies": [level]}
    if abbrs:
        fetch["states"] = abbrs
    command = (f"python -m sage census fetch --vintage 2023 --tables {','.join(tables)} --geographies {level}"
               + (f" --states {','.join(abbrs)}" if abbrs else ""))
    raise Decline(f"{join_words([nice_name(m) for m in lacking])} has no rows for {what} here (they are loaded "
                  f"for other tables only). Load it with `{command}`, then ask again.", suggestions,
                  kind="needs_fetch", fetch=fetch)


def _named_units(p: Parse, cat: Catalog, level: str, district_state: str | None) -> list[Unit]:
    """The rows the question names by code; :class:`Decline` for a code that is not there."""
    rows = cat.units.get(level, ())
    out: list[Unit] = []
    if level == "zcta":
        for mt in CODED_LEVELS["zcta"].finditer(p.t):  # "ZIP 78701", "zip code 78701", "ZCTA5 78701"
            if not mt.group(1):
                continue  # "zip codes": the level, no code
            u = next((u for u in rows if u.geo_id.endswith("US" + mt.group(1))), None)
            if u is None:
                raise Decline(f"ZIP code tabulation area {mt.group(1)} is not in the data (a ZIP code used only "
                              "for post office boxes or one business has no ZCTA).", _suggestions(level, p))
            out.append(u)
    elif level == "cd":
        wanted: list[tuple[str, str]] = []
        for mt in CD_CODE.finditer(p.question):
            st = cat.state_by_abbr.get(mt.group(1).upper())
            if st is not None:
                num = mt.group(2).lower()
                wanted.append((st.fips, "00" if not num.isdigit() else f"{int(num):02d}"))
        states = [pl.state for pl in p.places if pl.level == "state"]
        for mt in _CD_ORDINAL.finditer(p.t):
            if len(states) != 1:
                raise Decline("which state's district? Name it (“Texas's 21st district”, “TX-21”).",
                              _suggestions(level, p))
            wanted.append((states[0].fips, f"{int(mt.group(1)):02d}"))
        for fips, num in dict.fromkeys(wanted):
            u = next((u for u in rows if u.geo_id.endswith(f"US{fips}{num}")), None)
            if u is None:
                raise Decline(f"that congressional district ({fips}{num}) is not in the data.", _suggestions(level, p))
            out.append(u)
    elif level == "tract":
        counties = [pl.county for pl in p.places if pl.level == "county" and pl.county is not None]
        for mt in _TRACT.finditer(p.t):
            if len(counties) != 1:
                raise Decline("tract numbers repeat from county to county: name the county (“tract 11.01 in Travis "
                              "County, TX”).", _suggestions(level, p))
            code = f"{int(mt.group(1)):04d}{int((mt.group(2) or '0').ljust(2, '0')):02d}"
            u = cat.unit(f"1400000US{counties[0].geo_id[-5:]}{code}")
            if u is None:
                raise Decline(f"{counties[0].label} has no census tract {mt.group(0).split()[-1]} in the data.",
                              _suggestions(level, p))
            out.append(u)
    elif level == "cbsa" and _METRO_WORD.search(p.t):
        out.extend(_metros(p, rows))
    return out


def _metros(p: Parse, rows: tuple[Unit, ...]) -> list[Unit]:
    """The metro area a question names by a principal city ("metro Atlanta", "the Dallas metro area"): the areas
    whose first principal city is named, metropolitan before micropolitan; several left are asked back."""
    words = normalize(_METRO_WORD.sub(" ", p.t), lower=True)
    hits = []
    for u in rows:
        first = normalize(u.name.split(",")[0].split("-")[0], lower=True)
        if first and re.search(rf"\b{re.escape(first)}\b", words):
            hits.append(u)
    if not hits:
        return []
    metro = [u for u in hits if u.name.endswith("Metro Area")] or hits
    states = {pl.state.abbr for pl in p.places if pl.level == "state" or pl.how not in ("ambiguous",)}
    if len(metro) > 1 and states:
        metro = [u for u in metro if any(s in u.name.split(",")[-1] for s in states)] or metro
    if len(metro) > 1:
        raise Decline(f"{len(metro)} metro areas have that principal city: {join_words([u.name for u in metro[:5]])}"
                      "; which one?", [f"What is the population of the {u.name}?" for u in metro[:3]],
                      kind="ambiguous")
    return metro[:1]


def _level_note(level: str) -> str:
    return {
        "zcta": "A ZCTA (ZIP code tabulation area) is the Census Bureau's area built from the blocks a ZIP code "
                "mostly serves — close to, but not exactly, the Postal Service's ZIP code.",
        "cd": "Congressional districts of the Congress in the loaded ACS geography (the district lines of its year).",
        "tract": "Census tracts: small areas of about 4,000 people; their estimates carry wide margins of error.",
        "cbsa": "Metro areas: metropolitan and micropolitan statistical areas (CBSAs) as the ACS defines them.",
    }[level]


def _suggestions(level: str, p: Parse) -> list[str]:
    county = next((pl.county for pl in p.places if pl.level == "county" and pl.county is not None), None)
    state = next((pl.state for pl in p.places), None)
    out = {
        "tract": [f"Which 10 census tracts in {county.label if county else 'Travis County, TX'} have the highest "
                  "median household income?"],
        "cd": [f"Which congressional districts in {state.name if state else 'Texas'} have the most people?"],
        "zcta": ["What is the population of ZIP 78701?"],
        "cbsa": ["Which 10 metro areas have the most people?"],
    }[level]
    return out + ([f"What is the population of {state.name}?"] if state else [])


__all__ = ["unit_edit", "unit_query"]
