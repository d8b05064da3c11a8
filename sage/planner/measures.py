"""Finding the measures a question names, through the semantic layer's synonyms (with retrieval as a
fallback), and declining cross-tabulations ("income for Hispanic households") the extract does not have."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from ..census.codes import ACS_VARIABLE
from ..census.mentions import Mention, find_mentions
from ..census.semantic import Measure
from ..types import Chunk
from .catalog import Catalog
from .declines import Decline, generic_suggestions, place_questions
from .parsed import Parse
from .vocabulary import GROUP_FAMILIES, nice_name

#: synonyms of income that are also ranking words ("the poorest counties"); see :func:`find_measures`
WEALTH_ADJECTIVES = frozenset(
    {"richest", "wealthiest", "poorest", "richer", "poorer", "affluent", "wealthy", "most affluent", "least affluent"}
)


def find_measures(p: Parse, cat: Catalog, chunks: Sequence[Chunk]) -> None:
    """The measures the question names, outside place names; a measure "for" a population group is declined.
    With none named, a confident retrieval hit on an ACS variable the semantic layer knows is used instead."""
    mentions = find_mentions(p.t, cat.measures, blocked=p.blocked)
    p.mentions = mentions
    # "share of the population that is Black": the population is the denominator, not a measure of its own
    rates = [m for m in mentions if not m.weak and m.measure.is_rate]
    for m in mentions:
        if m.measure.name == "population" and not m.weak and rates and re.search(
                r"\b(share|percent|percentage|proportion|fraction|portion|pct)\s+of\s+(the\s+)?(total\s+)?$"
                r"|%\s*of\s+(the\s+)?$", p.t[: m.start]):
            m.weak = True
    # "poorest counties by poverty rate": a wealth adjective only names income when nothing else is named
    if any(not m.weak and m.phrase not in WEALTH_ADJECTIVES for m in mentions):
        for m in mentions:
            if m.phrase in WEALTH_ADJECTIVES:
                m.weak = True
    strong = [m for m in mentions if not m.weak]
    for m in strong:
        # "average income" is a synonym of the median: say so, the two differ (and the mean is not shipped)
        if re.search(r"\b(average|mean|avg)\b", m.phrase) and "median" in m.measure.label.lower():
            p.notes.append(f"“{p.tc[m.start:m.end]}” read as the {nice_name(m.measure)} (a median); the data "
                           "has no mean for it.")
    ordered = sorted(mentions, key=lambda m: m.start)
    for a, b in pairwise(ordered):
        # "people per housing unit": a ratio of two measures the semantic layer does not define
        if re.fullmatch(r"\s*(per|for every|for each)\s+(the\s+|a\s+|an\s+|one\s+)?", p.t[a.end:b.start]) \
                and a.measure.name != b.measure.name:
            raise Decline(
                f"“{p.tc[a.start:b.end]}” is a ratio of two measures ({nice_name(a.measure)} and "
                f"{nice_name(b.measure)}) that the offline planner does not compute; ask for each of them.",
                generic_suggestions())
    for a, b in zip(strong, strong[1:], strict=False):
        gap = p.t[a.end:b.start]
        group, other = (b, a) if re.fullmatch(r"\s*(for|among|amongst|of|within)\s+(the\s+)?", gap) else (a, b)
        if group.measure.family in GROUP_FAMILIES and other.measure.family not in GROUP_FAMILIES and (
                group is b or re.fullmatch(r"\s*", gap)):
            place = next((pl for pl in p.places if pl.how != "ambiguous"), None)
            sugg = place_questions(place, cat, (other.measure.name, group.measure.name, "population")) \
                if place else []
            raise Decline(
                f"{nice_name(other.measure)} for one population group (“{p.tc[a.start:b.end]}”) is a "
                "cross-tabulation the shipped extract does not have; it has each measure for everyone.",
                sugg or generic_suggestions())
    if not mentions:
        # retrieval as a fallback: a variable the semantic layer knows under another name
        for ch in sorted(chunks or (), key=lambda c: -c.score)[:3]:
            if ch.object_type != "variable" or ch.score < 0.55:
                continue
            code = ACS_VARIABLE.search(ch.object_ref or "")
            if not code:
                continue
            found = next((x for x in cat.measures if x.kind == "direct" and x.numerator == (code.group(0),)), None)
            if found is not None:
                p.mentions.append(Mention(found, len(p.t), len(p.t), ch.object_ref, weak=False))
                p.notes.append(f"Measure found through retrieval: {code.group(0)} ({found.label}).")
                break


def implied_measure(masked: str, cat: Catalog) -> Measure | None:
    """Superlatives that name a measure by themselves: "most populous", "largest counties", "oldest"."""
    rules = [
        (r"\b(largest|biggest|smallest|most populous|least populous|populous|bigger|larger|smaller|"
         r"more populous|less populous|how big|how large|how small|size of|sizes of)\b", "population"),
        (r"\b(most expensive|least expensive|priciest|cheapest|most affordable|least affordable)\b",
         "median_home_value"),
        (r"\b(most educated|least educated|best educated)\b", "bachelors_or_higher_share"),
    ]
    for rx, name in rules:
        if re.search(rx, masked):
            return cat.measure(name)
    return None
