"""Frames of questions about places named one by one: each place's value (a lookup, a snapshot, a comparison),
per N residents, next to the US, added together, the difference between two places, the ratio of two counts.
Part of the offline planner's reading (:mod:`.intent` decides which kind a question is)."""

from __future__ import annotations

import re
from itertools import pairwise

from ....census.semantic import Measure
from ..catalog import Catalog
from ..declines import (
    Decline,
    coverage_suggestions,
    generic_suggestions,
    median_suggestions,
    no_rows,
    no_state_rows,
    topic_suggestions,
)
from ..read.localities import places_with_figures
from ..read.parsed import Parse, Place
from ..read.vocabulary import (
    join_words,
    mask,
    nice_name,
)
from .frame import GeoSet, Op, Query


def measure_or_decline(cat: Catalog, name: str) -> Measure:
    m = cat.measure(name)
    if m is None:
        raise Decline(f"the measure {name} is not in this database.", generic_suggestions())
    return m


# ---------------------------------------------------------------------------------------------------------------
# named places: one value each (lookup, snapshot, comparison), per N residents, next to the US


def value_query(p: Parse, cat: Catalog, measures: list[Measure], notes: list[str]) -> Query:
    places: list[Place] = []
    for pl in p.places:
        if pl.how == "ambiguous":
            if any(c.geo_id == q.geo_id for c in pl.candidates for q in p.places if q is not pl):
                continue  # "Kings County (Brooklyn)": one of its readings is named by another name too
            names = ", ".join(c.state.abbr for c in pl.candidates[:12])
            more = "" if len(pl.candidates) <= 12 else f" and {len(pl.candidates) - 12} more"
            # the state the question names, or the state of every other place it names ("Lowndes County and
            # Wilcox County in Alabama", "the city of Wichita vs Sedgwick County")
            others = {q.state.fips for q in p.places if q is not pl and q.level == "state"} or {
                q.state.fips for q in p.places if q is not pl and q.how != "ambiguous"}
            pick = [c for c in pl.candidates if c.state.fips in others]
            if len(pick) == 1 and len(others) == 1:
                c = pick[0]
                notes.append(f"“{pl.text}” exists in several states; read as {c.label}, the one in the "
                             "state of the other places the question names.")
                places.append(Place("county", c.state, c, pl.span, "rule", pl.text))
                continue
            if len(p.places) == 1:
                # "the median household income of Washington County": one county asked, 30 of that name — which
                # one is asked back (the largest first), as for a city name several states share
                ranked = sorted(pl.candidates, key=lambda c: -c.population)
                raise Decline(f"“{pl.text}” exists in {len(pl.candidates)} states ({names}{more}); which one did "
                              "you mean?", [re.sub(re.escape(pl.text), c.label, p.question, count=1,
                                                   flags=re.IGNORECASE) for c in ranked[:8]], kind="ambiguous")
            notes.append(f"“{pl.text}” exists in {len(pl.candidates)} states ({names}{more}); showing "
                         "all of them — name the state for just one.")
            for c in pl.candidates:
                places.append(Place("county", c.state, c, pl.span, "ambiguous", pl.text))
        else:
            places.append(pl)
    uniq: dict[str, Place] = {}
    for pl in places:
        uniq.setdefault(pl.geo_id, pl)
    places = places_with_figures(list(uniq.values()), measures, cat, notes, p)

    # medians and the like at state level: DC's county-equivalent, else decline
    usable: list[Measure] = []
    dropped: list[str] = []
    for m in measures:
        ok = True
        for pl in places:
            if pl.level == "state" and not m.has_rows("state"):
                if pl.state.abbr == "DC" and m.has_rows("county"):
                    continue
                ok = False
                why = no_state_rows(m, pl.state, cat)
                if len(measures) == 1:
                    raise Decline(why, median_suggestions(m, pl.state, cat))
                dropped.append(why)
                break
            if pl.level == "county" and not m.has_rows("county"):
                ok = False
                why = (f"{m.label} ({', '.join(m.numerator)}) is published only for states in this data, not "
                       f"for counties such as {pl.label}.")
                if len(measures) == 1:
                    raise Decline(why, [f"What is the {nice_name(m)} in {pl.state.name}?",
                                        f"What is the median household income in {pl.label}?"])
                dropped.append(why)
                break
        if ok:
            usable.append(m)
    measures = usable
    if not measures:
        raise Decline(dropped[0] if dropped else "no measure fits these places.", generic_suggestions())
    if dropped and not _listed_measures(p):
        # measures not asked for as a list ("X and Y and Z for ..."): answering the rest would answer something else
        raise Decline(dropped[0], generic_suggestions())
    notes.extend(f"Left out: {d}" for d in dropped)

    # DC for county-only measures: its county-equivalent row
    resolved: list[Place] = []
    for pl in places:
        if pl.level == "state" and pl.state.abbr == "DC" and any(not m.has_rows("state") for m in measures):
            dc = next((c for c in cat.counties_by_state.get(pl.state.fips, [])), None)
            if dc is not None:
                notes.append("District of Columbia read as its county-equivalent row (same area), the "
                             "level these figures are published at.")
                resolved.append(Place("county", pl.state, dc, pl.span, "rule", pl.text))
                continue
        resolved.append(pl)
    places = resolved
    levels = {pl.level for pl in places}

    # coverage of each place
    missing = [(pl, m) for m in measures for pl in places if not cat.has(m, pl.geo_id)]
    if missing:
        if len(places) == 1 and all(m in {mm for _, mm in missing} for m in measures):
            pl, m = missing[0]
            raise Decline(no_rows(m, pl, cat), coverage_suggestions(m, pl, cat))
        for pl, m in missing:
            notes.append(f"No data: {no_rows(m, pl, cat)}")
        if len(places) == 1:
            measures = [m for m in measures if (places[0], m) not in missing]

    level = "county" if "county" in levels else ("state" if levels == {"state"} else next(iter(levels)))
    if len(levels) > 1:
        level = "mixed"
    geo = GeoSet(level=level, places=tuple(places))
    if p.per_n:
        return _per_n(p, cat, measures, geo, notes)
    if p.vs_us:
        return _with_us(p, cat, measures, geo, notes)
    return Query(Op.VALUE, tuple(measures), geo, notes=tuple(notes + p.notes))


#: how much one place's value exceeds another's: "how many more", "how much higher", "the difference between"
_DIFFERENCE = re.compile(r"\bhow (many|much) (more|fewer|less|higher|lower|larger|bigger|smaller|greater)\b|"
                         r"\b(?<!is )(?<!the )(difference|gap)\s+(in|of|between)\b(?![^?.]*\b(significant|real|"
                         r"meaningful|margin)\b)|\bby how (much|many)\b|\bhow (big|large) (is )?the (difference|gap)\b|"
                         r"\b(give|show|tell) (me |us )?the (gap|difference)\b|\bwhat('s| is) the (gap|difference)\b")
#: "per household" is left out: total population over households is not household size (group quarters)
RATIO = re.compile(r"\bratio\b|\bper\s+(housing unit|home|house|dwelling)s?\b")


def difference_cue(p: Parse, masked: str) -> re.Match | None:
    """The words that ask for a difference between exactly two named places, or None."""
    mt = _DIFFERENCE.search(masked)
    places = p.places + [th.ref for th in p.thresholds if th.ref is not None]
    if mt is None or len({pl.geo_id for pl in places}) != 2 or any(pl.how == "ambiguous" for pl in places):
        return None
    return mt


def difference_query(p: Parse, q: Query, cue: re.Match) -> Query:
    """The value query of two places turned into their difference (first minus second), the first being the place
    before "than" ("more people in Washington state than in DC"), else the first named."""
    if len(q.measures) != 1:
        raise Decline("a difference between two places is computed for one measure at a time; ask for each.",
                      [f"How much higher is the {nice_name(m)} in {q.geo.places[0].label} than in "
                       f"{q.geo.places[1].label}?" for m in q.measures[:2]] if len(q.geo.places) == 2 else [])
    places = sorted(q.geo.places, key=lambda pl: pl.span[0])
    than = re.search(r"\bthan\b", p.t)
    if than and places[0].span[0] > than.start():
        places.reverse()
    if cue.group(2) in ("fewer", "less", "lower", "smaller"):  # "how many fewer in A than B" = B - A
        places.reverse()
    first, second = places
    note = (f"Difference = {first.label} − {second.label} ({nice_name(q.measures[0])}), with its 90% margin of "
            "error and whether it is statistically significant.")
    return q.edit(op=Op.DIFFERENCE, geo=q.geo.__class__(level=q.geo.level, places=(first, second)),
                  notes=(*q.notes, note))


def ratio_measures(p: Parse) -> list[Measure] | None:
    """The two counts of "the ratio of residents to housing units", in the order named (weak mentions such as
    "residents" count here), or None when the question does not name exactly two counts."""
    found: list[Measure] = []
    for m in sorted(p.mentions, key=lambda m: m.start):
        if m.measure not in found and not (m.start == m.end):
            found.append(m.measure)
    if len(found) != 2 or not all(m.unit == "count" and m.additive for m in found):
        return None
    return found


def ratio_query(q: Query, ratio: list[Measure]) -> Query:
    """"The ratio of residents to housing units": the first count over the second, for each place."""
    a, b = ratio
    return q.edit(measures=(a, b), ratio=True, notes=(
        *q.notes, f"Ratio = {nice_name(a)} / {nice_name(b)}, both ACS {a.vintage}; its margin of error by the "
                  "Census Bureau's formula for a ratio."))


def _listed_measures(p: Parse) -> bool:
    """Whether the question lists its measures as items ("population, median age and median rent"), so that a
    figure the data lacks for a place may be left out of the answer (said so) rather than decline the rest."""
    strong = sorted(p.strong(), key=lambda m: m.start)
    if len(strong) < 2:
        return False
    seps = re.compile(r"\s*(,|;|&|\band\b|\bplus\b|\bas well as\b|\balong with\b|/)\s*")
    masked = mask(p.t, p.blocked)
    return all(seps.search(masked[a.end:b.start]) for a, b in pairwise(strong))


def _per_n(p: Parse, cat: Catalog, measures: list[Measure], geo: GeoSet, notes: list[str]) -> Query:
    """“Housing units per 1,000 residents”: a count over total population, both of one ACS period (a 2018-2022
    count is never divided by 2019-2023 population), scaled by N."""
    assert p.per_n is not None
    n, phrase = p.per_n
    pop = measure_or_decline(cat, "population")
    measures = [m for m in measures if m.name != "population"]
    bad = [m for m in measures if not m.additive or m.vintage != pop.vintage]
    if not measures or bad or geo.level == "mixed":
        m = bad[0] if bad else None
        why = (f"{m.label} is {'not a count' if not m.additive else f'from ACS {m.vintage}'}, so it cannot be "
               f"divided by the {pop.vintage} population" if m else "no count to divide by the population")
        raise Decline(f"“{phrase}”: {why}; ask for the figure itself or a percentage share.",
                      topic_suggestions(p, cat))
    return Query(Op.VALUE, tuple(measures), geo, per_n=n, per_n_phrase=phrase, notes=tuple(notes + p.notes))


def _with_us(p: Parse, cat: Catalog, measures: list[Measure], geo: GeoSet, notes: list[str]) -> Query:
    """“Is Florida's poverty rate above the national average?”: each place's value and one row for the US,
    computed like a national figure (the 50 states + DC summed; rates from the summed counts).  Medians,
    means and indexes have no US figure, so the comparison is declined rather than half answered."""
    places = geo.places
    bad = [m for m in measures if not m.aggregable or not m.has_rows("state")]
    if bad:
        m = bad[0]
        raise Decline(
            f"{m.label} ({', '.join(m.numerator)}) has no US figure: there are no nation rows, and county "
            "medians, means and indexes must not be averaged into one.",
            [f"What is the {nice_name(m)} in {places[0].label}?" if m.has_rows(places[0].level)
             else f"Which 10 counties have the highest {nice_name(m)}?",
             "What is the overall US unemployment rate?",
             f"Is the unemployment rate in {places[0].label} higher than the national rate?"])
    if geo.level == "mixed":
        raise Decline("to set places against the US, keep to one level (states or counties).",
                      topic_suggestions(p, cat))
    return Query(Op.VALUE, tuple(measures), geo, with_us=True, notes=tuple(notes + p.notes))


def combined_places(p: Parse, cat: Catalog, measures: list[Measure], notes: list[str]) -> Query:
    places = p.places
    levels = {pl.level for pl in places}
    if any(pl.how == "ambiguous" for pl in places) or len(levels) > 1:
        raise Decline("to add places together, name each county with its state and keep to one level.",
                      topic_suggestions(p, cat))
    level = levels.pop()
    for m in measures:
        if not m.aggregable:
            raise Decline(f"{m.label} is a median/mean/index: the values of several places cannot be combined.",
                          [f"Compare the {nice_name(m)} of {join_words([pl.label for pl in places[:3]])}"]
                          if m.has_rows(level) else topic_suggestions(p, cat))
        for pl in places:
            if not cat.has(m, pl.geo_id):
                raise Decline(no_rows(m, pl, cat), coverage_suggestions(m, pl, cat))
    return Query(Op.TOTAL, tuple(measures), GeoSet(level=level, places=tuple(places)), sums=tuple(measures),
                 notes=tuple(notes + p.notes))


__all__ = ["RATIO", "combined_places", "difference_cue", "difference_query", "measure_or_decline", "ratio_measures",
           "ratio_query", "value_query"]
