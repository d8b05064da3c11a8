"""The offline planner's reading of a question, from text to a :class:`~sage.planner.parsed.Parse`: places,
measures, the scope checks that decline early (topics, years, cities, trends the data lacks), thresholds, and
the level of a set question."""

from __future__ import annotations

import re
from typing import Sequence

from ..census.semantic import load_gaps
from ..retrieve import Chunk
from .catalog import Catalog
from .declines import Decline, place_suggestions, topic_suggestions
from .measures import find_measures
from .parsed import Parse
from .places import find_places, find_unknown_places, resolve_ambiguous
from .scope import read_scope
from .thresholds import find_thresholds
from .vocabulary import (
    CITY_WORD,
    FIFTY,
    INDEPENDENT_CITY,
    LEVEL_PLURAL,
    LEVEL_SINGULAR,
    LOWER_US,
    NATIONAL,
    OTHER_PRODUCT,
    VS_US,
    per_number,
    PER_N,
    SUB_STATE,
    TIME_WORDS,
    VERSUS_AVG,
    YEAR,
    mask,
    normalize_question,
)


def parse_question(question: str, chunks: Sequence[Chunk], cat: Catalog) -> Parse:
    """Read ``question`` into a :class:`Parse`, or raise :class:`Decline` as soon as it cannot be answered.

    The order matters: places first (their spans are masked for everything after), then measures, then names
    that are no place (their refusal suggests the question's measure), the scope checks, thresholds (bound to
    the measures found) and the level."""
    tc = normalize_question(question)
    p = Parse(question=question, tc=tc, t=tc.lower())
    read_scope(p, cat)
    find_places(p, cat)
    drop_excluded(p)
    find_measures(p, cat, chunks)
    find_unknown_places(p, cat)
    resolve_ambiguous(p)
    check_scope(p, cat)
    find_thresholds(p, cat)
    find_level(p)
    return p


def drop_excluded(p: Parse) -> None:
    """A place left out by a clause ("the US excluding California") is not a place the question is about: the
    clause reader (:mod:`.scope`) has already recorded it in ``p.exclude``; drop any place that still overlaps."""
    p.places = [pl for pl in p.places if not any(a <= pl.span[0] < b for a, b in p.scope_spans)]


def check_scope(p: Parse, cat: Catalog) -> None:
    """Decline early what the data cannot answer (missing topics, sub-county places, cities, trends, other
    years, comparisons against an average), and note the scope words: the US, the 50 states, DC, Puerto Rico."""
    t = p.t
    masked = mask(t, p.blocked + [m.span for m in p.strong()])
    places_only = mask(t, p.blocked)
    inside = [m.span for m in p.strong()]
    for gap in load_gaps():
        if gap.lifted_by(m.measure for m in p.strong()):
            continue  # its table has been fetched and the question names a measure over it
        # a topic word inside a measure's own phrase ("value of owner-occupied homes") is that measure
        mt = gap.find(places_only, inside)
        if mt:
            raise Decline(f"the shipped census extract has no data on {gap.topic} (asked: “{mt.group(0)}”).",
                          topic_suggestions(p, cat))
    masked = INDEPENDENT_CITY.sub(lambda m: "_" * len(m.group(0)), masked)
    mt = SUB_STATE.search(masked) or re.search(r"(?<![\d$,.])\d{5}(?![\d,%])", masked)
    if mt and not re.search(r"\b(more|less|over|under|above|below|than|least|most)\s+$", masked[: mt.start()]):
        raise Decline(
            f"“{mt.group(0)}”: the data covers states and counties (county-equivalents) only — no cities, "
            "metro areas, tracts or ZIP codes.", place_suggestions(p, cat))
    if CITY_WORD.search(masked):
        raise Decline("the data covers states and counties only; cities are not in it (except the "
                      "independent cities that are county-equivalents, e.g. “Baltimore city”).",
                      place_suggestions(p, cat))
    mt = TIME_WORDS.search(masked)
    if mt:
        raise Decline(
            f"the data holds one ACS 5-year period per measure (2019-2023, or 2018-2022 for poverty, health "
            f"insurance and enrolment), so there are no trends, changes or forecasts (“{mt.group(0)}”).",
            topic_suggestions(p, cat))
    for mt in YEAR.finditer(masked):
        years = [int(y) for y in mt.groups()[:2] if y]
        if any(y < 2018 or y > 2023 for y in years):
            raise Decline(
                f"the data has ACS 5-year estimates for 2019-2023 (2018-2022 for poverty, health insurance and "
                f"enrolment) only — nothing for {mt.group(0)}.", topic_suggestions(p, cat))
        p.notes.append(f"“{mt.group(0)}” read as the ACS 5-year period that includes it (period estimates, "
                       "not a single-year count).")
    mt = OTHER_PRODUCT.search(masked)
    if mt:
        raise Decline(
            f"“{mt.group(0)}”: the data holds ACS 5-year estimates only (2019-2023, or 2018-2022 for poverty, "
            "health insurance and enrolment) — no 1-year or 3-year ACS figures.", topic_suggestions(p, cat))
    mt = PER_N.search(masked)
    if mt:
        n = per_number(mt.group(1), mt.group(3))
        if n is None or mt.group(4) not in ("people", "residents", "persons", "population", "inhabitants", "capita",
                                            "person", "resident", "head"):
            raise Decline(
                f"rates “{mt.group(0)}” are not computed by the offline planner; ask for the count and the "
                "population (or a percentage share) instead.", topic_suggestions(p, cat))
        p.per_n = (n, mt.group(0))
    mt = VERSUS_AVG.search(masked)
    if mt and mt.group(4) in ("national", "us", "country", "nationwide") and p.places:
        # "Is Florida's poverty rate higher than the national average?": the places plus a US row (the 50 states +
        # DC, summed counts); the planner declines it for medians and indexes, which have no US figure
        p.vs_us = True
        p.national = True
        mt = None
    if mt:
        raise Decline(f"comparing against an average or a national/state figure (“{mt.group(0)}”) is beyond "
                      "the offline planner; ask for the places' values and the overall figure separately.",
                      topic_suggestions(p, cat))
    if FIFTY.search(t):
        p.fifty = True
    masked2 = mask(t, p.blocked + [m.span for m in p.mentions if not m.weak])
    if NATIONAL.search(masked2) or re.search(r"\b(US|USA)\b", mask(p.tc, p.blocked)) or LOWER_US.search(masked2):
        p.national = True
        if p.places and VS_US.search(masked2):
            p.vs_us = True


def find_level(p: Parse) -> None:
    """Which level a set question is about: any county word wins ("Texas counties"), then "states"."""
    t = mask(p.t, p.blocked)
    t = re.sub(r"\bunited states\b", lambda m: "_" * len(m.group(0)), t)
    words = [m.group(1) for m in LEVEL_PLURAL.finditer(t)] + [m.group(1) for m in LEVEL_SINGULAR.finditer(t)]
    if any(w not in ("states", "state") for w in words):
        p.level = "county"
    elif words:
        p.level = "state"
