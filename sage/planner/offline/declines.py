"""The offline planner's honest "cannot answer": the exception that stops planning, its messages, and two
or three questions the planner *can* answer instead (every suggestion is answerable offline)."""

from __future__ import annotations

from collections.abc import Sequence

from ...census.semantic import Measure
from .catalog import Catalog, County, State
from .read.parsed import Parse, Place
from .read.vocabulary import nice_name


class Decline(Exception):
    """Raised inside planning to stop with an honest "cannot answer".

    ``kind`` says why in one word for the app and the CLI: ``declined`` (the data cannot answer it),
    ``needs_fetch`` (an ACS table that would answer it is not loaded; ``fetch`` names it: ``{"tables": [...],
    "vintage": 2023, "geographies": [...]}``) or ``ambiguous`` (a name with several readings; the suggestions
    are the readings)."""

    def __init__(self, reason: str, suggestions: Sequence[str] = (), assumptions: Sequence[str] = (), *,
                 kind: str = "declined", fetch: dict | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.suggestions = list(suggestions)
        self.assumptions = list(assumptions)
        self.kind = kind
        self.fetch = fetch


# ---------------------------------------------------------------------------------------------------------------
# why a measure has no value there


def no_state_rows(m: Measure, st: State | None, cat: Catalog) -> str:
    where = f" for {st.name}" if st else ""
    return (f"{m.label} ({', '.join(m.numerator)}) has county rows only; there is no published state figure"
            f"{where} in the data, and county medians/means must not be averaged into a state value.")


def no_rows(m: Measure, pl: Place, cat: Catalog) -> str:
    if pl.level == "county" and pl.county is not None and m.has_rows("county", pl.state.fips):
        return (f"the Census did not publish {nice_name(m)} ({', '.join(m.codes)}) for {pl.label} (too few "
                "sample cases), so the data has no value for it.")
    return (f"{nice_name(m)} comes from {', '.join(sorted({c.split('_')[0] for c in m.codes}))} (ACS "
            f"{m.vintage}), which has no rows for "
            f"{pl.state.name if pl.level == 'state' or pl.county is None else pl.label}"
            f"{' (it covers the 48 contiguous states and DC only)' if m.vintage == '2018-2022' else ''}.")


def needs_fetch(m: Measure, asked: str, cat: Catalog, levels: Sequence[str] = ("state", "county"),
                suggestions: Sequence[str] = (), states: Sequence[str] = (), why: str = "") -> Decline:
    """The decline for a figure the data does not hold — a table that is not loaded, or a loaded table without
    rows at the level asked ("median household income" for a city) — naming the fetch that adds it."""
    tables = sorted({c.split("_")[0] for c in m.codes})
    titles = [f"{t} ({cat.table_title(t)})" if cat.table_title(t) else t for t in tables]
    year = int(m.vintage[-4:]) if m.vintage[-4:].isdigit() else 2023
    command = (f"python -m sage census fetch --vintage {year} --tables {','.join(tables)}"
               + (f" --geographies {','.join(levels)}" if tuple(levels) != ("state", "county") else "")
               + (f" --states {','.join(states)}" if states else ""))
    what = why or f"it is {nice_name(m)} ({m.formula}), from ACS table {', '.join(titles)}, which is not loaded"
    fetch: dict = {"tables": tables, "vintage": year, "geographies": list(levels)}
    if states:
        fetch["states"] = list(states)
    return Decline(
        f"“{asked}”: {what}; nothing else is shown instead. Load it with `{command}` (needs a Census API key), "
        "then ask again.",
        list(suggestions) or [f"What is the {nice_name(x)} in {pl}?" for x, pl in _answerable(cat)],
        kind="needs_fetch", fetch=fetch)


def _answerable(cat: Catalog) -> list[tuple[Measure, str]]:
    names = ("population", "median_household_income", "unemployment_rate")
    return [(m, "Cook County, IL") for n in names if (m := cat.measure(n)) is not None][:3]


# ---------------------------------------------------------------------------------------------------------------
# suggestions


def generic_suggestions() -> list[str]:
    return ["What is the population of Texas?", "Which 3 states have the lowest poverty rate?",
            "What is the median household income in Wake County, NC?"]


def state_suggestions(st: State | None) -> list[str]:
    if st is None:
        return generic_suggestions()
    return [f"What is the population of {st.name}?", f"Which {st.name} counties have the most people?",
            f"What is the unemployment rate in {st.name}?"]


def place_suggestions(p: Parse, cat: Catalog) -> list[str]:
    st = next((pl.state for pl in p.places), None)
    return state_suggestions(st)


def place_questions(place: Place, cat: Catalog, names: Sequence[str], skip: str = "") -> list[str]:
    """Questions about ``place`` for the first measures of ``names`` that have a value there."""
    out = []
    for name in names:
        m = cat.measure(name)
        if m is None or name == skip or not cat.has(m, place.geo_id):
            continue
        if place.level == "state" and not m.has_rows("state"):
            continue
        out.append(f"What is the {nice_name(m)} in {place.label}?" if name != "population"
                   else f"What is the population of {place.label}?")
    return out


def topic_suggestions(p: Parse, cat: Catalog) -> list[str]:
    place = next((pl for pl in p.places if pl.how != "ambiguous"), None)
    if place is None:
        return generic_suggestions()
    names: tuple[str, ...]
    if place.level == "place":
        names = ("population", "housing_units")
    elif place.level == "county":
        names = ("median_household_income", "unemployment_rate", "population", "poverty_rate")
    else:
        names = ("population", "unemployment_rate", "poverty_rate", "internet_subscription_share")
    return place_questions(place, cat, names)[:3]


def median_suggestions(m: Measure, st: State | None, cat: Catalog) -> list[str]:
    nice = nice_name(m)
    if st is None:
        out = [f"Which 10 counties have the highest {nice}?"]
        if m.name == "median_household_income":
            out.append("Which 5 states have the highest median household income for White householders?")
            out.append("Which 3 states have the lowest poverty rate?")
        else:
            out.append(f"List counties with a {nice} above {example_threshold(m)}")
        return out
    out = [f"Which {st.name} counties have the highest {nice}?"]
    biggest = max(cat.counties_by_state.get(st.fips, []), key=lambda c: c.population, default=None)
    if biggest is not None:
        out.append(f"What is the {nice} in {biggest.label}?")
    if m.name == "median_household_income":
        out.insert(1, f"What is the median household income for White householders in {st.name}?")
    return out


def coverage_suggestions(m: Measure, pl: Place, cat: Catalog) -> list[str]:
    out = [f"Which 5 states have the highest {nice_name(m)}?"] if m.is_rate and m.has_rows("state") else []
    names = ("unemployment_rate", "population", "internet_subscription_share", "median_household_income")
    return (out + place_questions(pl, cat, names, skip=m.name))[:3]


def county_suggestions(p: Parse, counties: Sequence[County]) -> list[str]:
    """The question's measure (if it has rows there), else population, for each county."""
    m = next((x.measure for x in p.mentions if not x.weak), None)
    out = []
    for c in counties:
        if m is not None and m.has_rows("county", c.state.fips):
            out.append(f"What is the {nice_name(m)} in {c.label}?")
        else:
            out.append(f"What is the population of {c.label}?")
    return out


def example_threshold(m: Measure) -> str:
    dollars = "$1,500" if "rent" in m.name else "$100,000"
    return {"dollars": dollars, "years": "45", "index": "0.5"}.get(m.unit, "1,000,000")
