"""Census places in a question: cities, towns, villages and census-designated places ("Austin, TX", "the city of
Austin, Texas", "NYC", "Bethesda, MD", "Nashville", "Urban Honolulu"), and the levels without names to match —
metro areas, congressional districts, tracts and ZIP code tabulation areas — read from their codes ("TX-21",
"ZIP 78701", "tract 11 in Travis County", "metro Atlanta").

A place is identified by its name *and* its state: "Austin, TX" is Austin city, Texas; a bare "Springfield" is one
of dozens and is not guessed (the answer asks which, listing the largest).  A name that is both a place and a
county of its state ("Maricopa, AZ") reads as the place — the way cities are written — and keeps the county as its
namesake, which the frame builder uses when only the county has the figures asked for.
"""

from __future__ import annotations

import difflib
import re

from ..text import overlaps
from .catalog import Catalog, Locality, State, counties_named
from .declines import Decline
from .parsed import Parse, Place
from .vocabulary import COMMON_ENGLISH, KNOWN_WORDS, WORDLIKE_ABBRS

#: everyday names of places that are not their Census names
ALIASES = {
    "nyc": ("New York city", "36"), "new york city": ("New York city", "36"),
    "the big apple": ("New York city", "36"), "philly": ("Philadelphia city", "42"),
    "vegas": ("Las Vegas city", "32"), "nola": ("New Orleans city", "22"),
}

#: the levels that have codes rather than names, how questions name them, and the fetch that loads them
CODED_LEVELS = {
    "zcta": re.compile(r"\b(?:zip(?:\s*code)?|zcta5?|postal\s+code)s?\s*(?:area\s*)?(?:#|no\.?|number)?\s*(\d{5})\b"),
    "cd": re.compile(r"\b([a-z]{2})\s*-\s*(\d{1,2}|at[- ]?large)\b|\b(\d{1,2})(?:st|nd|rd|th)\s+(?:congressional\s+)?"
                     r"district\b|\bcongressional\s+district\s+(\d{1,2})\b"),
    "tract": re.compile(r"\b(?:census\s+)?tracts?\s+(\d{1,4}(?:\.\d{1,2})?)\b"),
    "cbsa": re.compile(r"\b(?:metro(?:politan)?(?:\s+area)?|msa|cbsa|micropolitan(?:\s+area)?)\b"),
}
LEVEL_NAMES = {"zcta": "ZIP code tabulation areas (ZCTAs)", "cd": "congressional districts", "tract": "census tracts",
               "cbsa": "metropolitan and micropolitan statistical areas", "place": "places (cities, towns, CDPs)"}


def find_localities(p: Parse, cat: Catalog) -> None:
    """Places named with their state, places named by an alias, and "the city of X"."""
    if not cat.localities:
        return
    _aliases(p, cat)
    _with_state(p, cat)


def _add(p: Parse, cat: Catalog, loc: Locality, span: tuple[int, int], how: str, note: str = "") -> None:
    namesake = next(iter(counties_named(loc.bases[-1], cat, loc.state)), None)
    p.blocked.append(span)
    p.places.append(Place("place", loc.state, None, span, how, p.tc[span[0]:span[1]], locality=loc,
                          namesake=namesake))
    if note:
        p.notes.append(note)


def _aliases(p: Parse, cat: Catalog) -> None:
    for word, (name, fips) in ALIASES.items():
        for mt in re.finditer(r"\b" + re.escape(word) + r"\b", p.t):
            if overlaps(mt.span(), p.blocked):
                continue
            loc = next((x for x in cat.localities if x.name == name and x.state.fips == fips), None)
            if loc is not None:
                _add(p, cat, loc, mt.span(), "alias", f"“{p.tc[mt.start():mt.end()]}” read as {loc.label}.")


def _with_state(p: Parse, cat: Catalog) -> None:
    """"Austin, TX", "austin texas", "the city of Austin, Texas", "Bethesda (MD)": a place's name right before a
    state the question names; the state then only says which place, and is not a place of its own."""
    states = [pl for pl in p.places if pl.level == "state" and pl.how in ("exact", "abbr", "fuzzy")]
    for st in sorted(states, key=lambda pl: pl.span[0]):
        before = p.t[: st.span[0]]
        sep = re.search(r"(\s*,\s*|\s*\(\s*|\s+in\s+|\s+)$", before)
        if not sep:
            continue
        head = before[: sep.start()]
        words = list(re.finditer(r"[a-z]+", head))
        found = None
        for k in range(min(5, len(words)), 0, -1):
            group = words[-k:]
            if head[group[-1].end():].strip():
                break  # something other than the name sits between it and the state
            span = (group[0].start(), group[-1].end())
            if overlaps(span, p.blocked):
                continue
            name = " ".join(m.group(0) for m in group)
            name = re.sub(r"^(the\s+)?(city|town|village|borough)\s+of\s+", "", name)
            name = re.sub(r"\s+(city|town|village|cdp|borough)$", "", name) if k > 1 else name
            hits = cat.localities_named(name, st.state)
            if hits:
                found = (span, hits, name)
                break
        if found is None:
            continue
        span, hits, name = found
        if name in KNOWN_WORDS or (len(name) <= 3 and name not in ("ada", "ely")):
            continue
        if len(hits) > 1:
            raise ambiguous(name, hits, f"in {st.state.name}")
        loc = hits[0]
        p.places.remove(st)
        _add(p, cat, loc, (span[0], st.span[1]), "qualifier")


def ambiguous(name: str, hits: list[Locality], where: str = "") -> Decline:
    """Several places of one name: ask which, the largest first (kind ``ambiguous``)."""
    shown = hits[:6]
    more = f" and {len(hits) - 6} more" if len(hits) > 6 else ""
    listing = "; ".join(f"{x.label} ({int(x.population):,} people)" for x in shown)
    return Decline(
        f"“{name.title()}” is the name of {len(hits)} places{(' ' + where) if where else ''}: {listing}{more}. "
        "Which one? (Pick one of the suggestions, or add its state.)",
        [f"What is the population of {x.label}?" for x in shown], kind="ambiguous")


def bare_locality(p: Parse, cat: Catalog, name: str, span: tuple[int, int]) -> bool:
    """A capitalised name that is no state or county ("Boise", "Springfield", "Bethesda"): the place of that name
    when there is exactly one, an ``ambiguous`` decline when there are several.  False when no place has it."""
    if not cat.localities:
        return False
    key = name.lower()
    hits = cat.localities_named(key)
    if not hits:
        return False
    if len(hits) > 1:
        raise ambiguous(key, hits)
    loc = hits[0]
    _add(p, cat, loc, span, "unique", f"“{name}” read as {loc.label}, the only Census place of that name.")
    return True


def unknown_place(name: str, cat: Catalog, state: State | None = None) -> Decline:
    """A name that is no state, county or Census place ("Gotham City"): declined, naming the closest real ones."""
    pool: dict[str, str] = {}
    for x in cat.localities:
        if state is None or x.state.fips == state.fips:
            for b in x.bases:
                pool.setdefault(b, x.label)
    close = difflib.get_close_matches(name.lower(), list(pool), n=3, cutoff=0.75)
    nearest = [pool[c] for c in close]
    return Decline(
        f"“{name}” is not a state, county or Census place (city, town or CDP) in the data"
        + (f" — the closest names are {', '.join(nearest)}." if nearest else "."),
        [f"What is the population of {label}?" for label in nearest[:3]])


def coded_level(p: Parse) -> tuple[str, re.Match] | None:
    """A level asked for by its code or kind (a ZIP code, "TX-21", a tract, a metro area), or None."""
    for level, rx in CODED_LEVELS.items():
        for mt in rx.finditer(p.t):
            if overlaps(mt.span(), p.blocked):
                continue
            if level == "cd" and mt.group(1) and (mt.group(1) in WORDLIKE_ABBRS and not p.tc[mt.start():mt.start() + 2]
                                                   .isupper()):
                continue
            return level, mt
    return None


def is_place_word(word: str) -> bool:
    """Whether ``word`` could be a place's name rather than an English word of the question."""
    return word not in KNOWN_WORDS and word not in COMMON_ENGLISH and len(word) >= 3


__all__ = ["ALIASES", "CODED_LEVELS", "LEVEL_NAMES", "ambiguous", "bare_locality", "coded_level",
           "find_localities", "is_place_word", "unknown_place"]
