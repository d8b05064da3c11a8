"""From a reading of a question (:class:`~sage.planner.parsed.Parse`) to its frame (:class:`~sage.planner.frame.Query`).

This is where the offline planner decides *what* is asked: the operation (one value per place, a ranking, a
filtered list, a count, a total, a share of the parent, places per parent), the measures, the places and the set
they belong to, and every rule applied on the way (a state that has no median, DC's county-equivalent, Puerto Rico
left out of a US total).  Whatever it cannot decide honestly it declines (:class:`~.declines.Decline`) with
questions it can answer.  It writes no SQL: :mod:`.compile` does, from the frame alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from ..census.semantic import Measure
from .catalog import Catalog, counties_named
from .changes import change_query
from .declines import (
    Decline,
    coverage_suggestions,
    example_threshold,
    generic_suggestions,
    median_suggestions,
    needs_fetch,
    no_rows,
    no_state_rows,
    state_suggestions,
    topic_suggestions,
)
from .frame import Condition, GeoSet, Op, Query, Rank
from .localities import places_with_figures
from .measures import implied_measure
from .parsed import Parse, Place
from .ranking import rank_measure, read_rank
from .scope import exclusions
from .vocabulary import (
    BY_LEVEL,
    COMBINED,
    COUNTIES_PER_STATE,
    GROUP_FAMILIES,
    INDEPENDENT_CITY,
    KNOWN_WORDS,
    LEVEL_PLURAL,
    PER_STATE,
    SET_CUE,
    SET_TOTAL,
    SHARE_OF_WHOLE,
    SUPERLATIVE,
    join_words,
    mask,
    nice_name,
)

#: "I want one national percentage", "as a whole", "overall": one figure for the set, not a value per place
ONE_FIGURE = re.compile(r"\b(one|a single|single|an overall|one overall|one national|a national|a combined|"
                        r"one combined)"
                        r"\s+(national\s+|overall\s+|combined\s+|total\s+)?(percentage|percent|figure|number|rate|share|"
                        r"total|value|estimate)\b|\bas a whole\b|\bnationally\b|\bin total\b|\boverall\b(?!\s+(highest|"
                        r"lowest|top|bottom))")

#: words of a question that count places ("how many counties ...")
_COUNT_PLACES = re.compile(r"\b(how many|number of|count of|count the) (of the )?(\d+ )?(_+ )*(\w+ )?(states|counties|"
                           r"countys|parishes|county equivalents|boroughs|places|cities|towns|villages|cdps|"
                           r"census designated places|municipalities)\b")


def build_query(p: Parse, cat: Catalog) -> Query:
    """The frame of a read question, or :class:`Decline` when it cannot be answered honestly."""
    return _in_period(p, cat, _build(p, cat))


def _in_period(p: Parse, cat: Catalog, q: Query) -> Query:
    """The frame read in the one earlier period the question names ("in 2014-2018", "in 2018"), when that is not
    the measures' latest.  Values, rankings, lists, counts and totals can be; anything else is declined rather
    than answered for the latest period."""
    if len(p.periods) != 1 or q.op is Op.CHANGE or all(m.vintage == p.periods[0] for m in q.measures):
        return q
    period = p.periods[0]
    if q.op not in (Op.VALUE, Op.RANK, Op.LIST, Op.COUNT, Op.TOTAL) or q.ratio or q.per_n or q.with_us or \
            q.geo.among is not None or any(not m.has_rows(q.geo.level) for m in q.measures if q.geo.level != "mixed"):
        raise Decline(f"for {period} the offline planner gives values, rankings, lists, counts and totals; this "
                      "question needs more than that. Ask it for the latest period, or ask for the change between "
                      "the periods.", topic_suggestions(p, cat))
    for pl in q.geo.places:
        for m in q.measures:
            if not cat.has_in(m, pl.geo_id, period):
                raise Decline(f"{pl.label} has no {nice_name(m)} value for {period} in the data.",
                              topic_suggestions(p, cat))
    return q.edit(periods=(period,), notes=(*q.notes, f"Period: ACS {period} 5-year estimates, as asked (the "
                                                         f"latest loaded is {q.measures[0].vintage})."))


def _build(p: Parse, cat: Catalog) -> Query:
    t = p.t
    masked = mask(t, p.blocked)
    seen: set[str] = set()
    unique: list[Place] = []
    for pl in sorted(p.places, key=lambda pl: pl.span[0]):  # a place named twice (a region and its states) once
        key = pl.geo_id if pl.how != "ambiguous" else f"?{pl.text}"
        if key not in seen:
            seen.add(key)
            unique.append(pl)
    p.places = _drop_negated(p, unique)
    strong = p.strong()
    weak = [m for m in p.mentions if m.weak]
    measures = [m.measure for m in strong]
    notes: list[str] = []

    # places: fuzzy matches and rules to state
    for pl in p.places:
        if pl.how == "fuzzy" and pl.level != "place":
            notes.append(f"“{pl.text}” read as {pl.label} (closest name in the data).")
        elif pl.how == "demonym":
            notes.append(f"“{pl.text}” read as the people of {pl.state.name}.")
        elif pl.how == "alias" and pl.level == "county":
            notes.append(f"“{pl.text}” read as {pl.label}, the county-equivalent of that name.")

    count_places = _COUNT_PLACES.search(masked)
    share_cue = SHARE_OF_WHOLE.search(masked)
    difference = _difference_cue(p, masked)
    if difference:  # "how many more people live in Washington state than in DC": the gap, not a threshold
        p.places = sorted(p.places + [th.ref for th in p.thresholds if th.ref is not None], key=lambda pl: pl.span[0])
        p.thresholds = [th for th in p.thresholds if th.ref is None]
    set_query = _is_set_query(p, masked) and not difference
    if p.per_n and (set_query or p.thresholds or p.vs_us or not p.places):
        raise Decline(f"rates “{p.per_n[1]}” are computed by the offline planner only for named places; ask "
                      "for one state's or county's figure, or for a percentage share.", topic_suggestions(p, cat))
    if p.vs_us and (set_query or p.thresholds):
        raise Decline("comparing a set of places against the national figure is beyond the offline planner; "
                      "ask for the places' values and the US figure separately.", topic_suggestions(p, cat))

    # ---------------------------------------------------------- counties per state (a count of places, no measure)
    if not measures and not p.thresholds and COUNTIES_PER_STATE.search(masked):
        return _counties_per_state(p, masked, notes)

    # ---------------------------------------------------------- pick the measures
    if not measures:
        implied = implied_measure(masked, cat)
        if implied is not None:
            measures = [implied]
            if implied.name == "population" and re.search(r"\b(how big|how large|how small|size)\b", masked):
                notes.append("Size read as population (land area is not in the data).")
        elif weak:
            measures = [weak[0].measure]
        elif set_query and not count_places and re.search(r"\b(list|show|name|all|which|what are)\b", masked):
            measures = [_measure(cat, "population")]
            notes.append("No measure named: listing the places with their population.")
        elif count_places and not p.thresholds:
            return _count_geographies(p, notes)
        else:
            what = "anything the data measures" if not p.places else "a measure the data has for that place"
            raise Decline(f"I could not find {what} in the question (the shipped data covers population, "
                          "income, poverty, housing values and rents, employment, education, health insurance, "
                          "race and Hispanic origin, and internet subscriptions).",
                          topic_suggestions(p, cat))
    for th in p.thresholds:
        if th.measure is not None and th.measure not in measures:
            measures.append(th.measure)
    measures = list(dict.fromkeys(measures))

    # ---------------------------------------------------------- an average over places is not computed here
    outside = mask(t, p.blocked + [m.span for m in p.mentions])
    avg = re.search(r"\b(average|averaged|averages|avg|mean)\b", outside)
    if avg and (set_query or len(p.places) >= 2):
        nice = join_words([nice_name(m) for m in measures])
        raise Decline(
            f"“{avg.group(0)}” over several places: the offline planner does not average places' values (an "
            "unweighted average of counties or states is not the figure for the area, and medians, means and "
            f"indexes must never be averaged); ask for each place's {nice} instead, or for a total or rate "
            "of summed counts.",
            [f"Which 5 states have the highest {nice_name(measures[0])}?" if measures[0].has_rows("state")
             else f"Which 10 counties have the highest {nice_name(measures[0])}?",
             "What is the overall US unemployment rate?", "How many people live in the US?"])

    # ---------------------------------------------------------- a change between two periods
    if p.change:
        return change_query(p, cat, measures, masked, notes, set_query)

    # ---------------------------------------------------------- part of a whole: county of state, state of US
    combined = bool(COMBINED.search(masked) or re.search(r"\btogether\b", masked))
    # "what percentage of Texas's Hispanic residents live in Harris County": the county's share of the state's
    # group, not the group's share of the county
    counties_named_ = [pl for pl in p.places if pl.level == "county"]
    if share_cue and len(measures) == 1 and measures[0].is_rate and measures[0].family in GROUP_FAMILIES and \
            counties_named_ and re.search(r"\b" + re.escape(counties_named_[0].state.name.lower()) + r"s?\b", t) and \
            re.search(r"\b(live|lives|living|reside|resides|residing|"
                                                                      r"are in|is in|call)\b", masked):
        count = next((x for x in cat.measures if x.family == measures[0].family and x.additive), None)
        if count is not None:
            return _share_of_parent(p, cat, count, counties_named_, notes)
    if share_cue and (not set_query or combined) and all(m.additive for m in measures) and len(measures) == 1 \
            and not p.thresholds:
        counties = [pl for pl in p.places if pl.level == "county"]
        states = [pl for pl in p.places if pl.level == "state"]
        cities = [pl for pl in p.places if pl.level == "place"]
        if cities and not counties and measures[0].has_rows("place"):  # "the city of Houston" of Texas
            q = _share_of_parent(p, cat, measures[0], cities, notes)
            if _OF_THE_US.search(masked) and not states:  # "what fraction of all Americans live in NYC"
                return q.edit(share_of="us")
            return q
        if counties:
            return _share_of_parent(p, cat, measures[0], counties, notes)
        if states:
            return _share_of_parent(p, cat, measures[0], states, notes)

    if count_places:
        return _count_places(p, cat, measures, masked, notes)
    # "the six New England states (…) together": named places added up, even when a level word names them
    if combined and len(p.places) >= 2 and len({pl.level for pl in p.places}) == 1 and not p.thresholds \
            and not SUPERLATIVE.search(masked):
        return _combined_places(p, cat, measures, notes)
    fifty_only = p.fifty and not p.places and not SUPERLATIVE.search(masked) and not p.thresholds and not (
        BY_LEVEL.search(masked) or re.search(r"\b(which|what|each|every|list|show|map|rank)\b[^.?]*\bstates?\b",
                                             masked))
    if (COMBINED.search(masked) or fifty_only or ONE_FIGURE.search(masked)) and not p.places \
            and not SUPERLATIVE.search(masked) and not p.thresholds:
        return _national(p, cat, measures, notes)
    filters = {th.measure.name for th in p.thresholds if th.measure is not None}
    if set_query and SET_TOTAL.search(masked) and not any(m.additive for m in measures):
        # “how many people live in counties with …”: the weak count word is what gets added up
        measures = measures + [m.measure for m in weak if m.measure.additive][:1]
    additive = [m for m in measures if m.additive]
    if set_query and SET_TOTAL.search(masked) and additive and all(
            m.additive or m.name in filters for m in measures):
        summable = [m for m in additive if m.name not in filters] or additive
        q = _set_query(p, cat, measures, masked, notes, p.level or "state")
        return q.edit(op=Op.TOTAL, sums=tuple(summable), rank=None)
    if set_query:
        return _set_query(p, cat, measures, masked, notes, p.level or "state")
    if p.places and (COMBINED.search(masked) or SET_TOTAL.search(masked)) and len(p.places) >= 2 and \
            len({pl.level for pl in p.places}) == 1:  # "a city vs its county as a whole" adds nothing up
        return _combined_places(p, cat, measures, notes)
    if p.places:
        ratio = _ratio_measures(p) if _RATIO.search(masked) else None
        q = _value_query(p, cat, ratio or measures, notes)
        if difference:
            return _difference(p, q, difference)
        if ratio is not None and q.op is Op.VALUE:
            return _ratio(q, ratio)
        if _RATIO.search(masked):
            raise Decline("a ratio is computed here between two counts (e.g. residents to housing units); name the "
                          "two counts, or ask for each figure.",
                          [f"What is the ratio of residents to housing units in {pl.label}?"
                           for pl in q.geo.places[:1]])
        return q
    if p.national:
        return _national(p, cat, measures, notes)
    if SUPERLATIVE.search(masked):
        notes.append("No level named: ranking the states.")
        return _set_query(p, cat, measures, masked, notes, "state")
    same = [c for w in re.findall(r"[a-z]+", masked) if w not in KNOWN_WORDS for c in counties_named(w, cat)]
    if same:
        raise Decline(
            f"the question names no state or county; “{same[0].base.title()}” alone is not one of them — "
            f"did you mean {join_words([c.label for c in same[:3]])}?",
            ([f"What is the {nice_name(measures[0])} in {c.label}?" for c in same[:3]]
             + state_suggestions(same[0].state))[:3])
    raise Decline(
        "the question names no state or county (and the data has no cities or other places).",
        [f"What is the {nice_name(measures[0])} in Cook County, IL?",
         f"Which 5 {'states' if measures[0].has_rows('state') else 'counties'} have the highest "
         f"{nice_name(measures[0])}?",
         "How many people live in the US?"])


#: the whole a share is of, when it is the country rather than the place's state
_OF_THE_US = re.compile(r"\b(americans|the us|the usa|the united states|the country|the nation|nationwide|"
                        r"us population|national population|all of america)\b")

#: "the city proper, not St. Louis County", "rather than all of Honolulu County": a place named to be set aside
_NEGATED = re.compile(r"\b(not|rather than|instead of|as opposed to|and not|but not|not counting|excluding|without|"
                      r"other than)\s+(all of\s+|the whole of\s+|the rest of\s+|the\s+|just\s+|including\s+)?$")


def _drop_negated(p: Parse, places: list[Place]) -> list[Place]:
    """Places named only to say they are not meant ("Honolulu proper, not all of Honolulu County"), when other
    places are named: left out, saying so.  In a question about a set of places ("counties in Texas, not Harris
    County") leaving one out of the set is not something the frame can say, so it is declined."""
    negated = [pl for pl in places if _NEGATED.search(p.t[:pl.span[0]][-40:])]
    if not negated or len(negated) == len(places):
        return places
    kept = [pl for pl in places if pl not in negated]
    if any(pl.level == "state" for pl in kept) and any(pl.level != "state" for pl in negated) and not any(
            pl.level != "state" for pl in kept):
        raise Decline(f"leaving {join_words([pl.label for pl in negated])} out of a set of places is not something "
                      "the offline planner can do; ask for the set and read past it, or ask about the place itself.",
                      [f"What is the population of {pl.label}?" for pl in kept[:2]])
    for pl in negated:
        p.blocked.append(pl.span)
        which = f" ({pl.label})" if pl.how != "ambiguous" else ""
        p.notes.append(f"“{pl.text}”{which} left out, as the question says.")
    return kept


def _measure(cat: Catalog, name: str) -> Measure:
    m = cat.measure(name)
    if m is None:
        raise Decline(f"the measure {name} is not in this database.", generic_suggestions())
    return m


def _is_set_query(p: Parse, masked: str) -> bool:
    """A question about a set of states, counties or Census places (rank, threshold, list) rather than named
    places."""
    if p.level is None:
        return False
    if p.level == "place":  # "cities in Ohio", "the smallest incorporated village in Vermont", "places over 50,000"
        return bool(re.search(r"\b(cities|towns|villages|places|cdps|municipalities)\b", masked)) or bool(
            SUPERLATIVE.search(masked) or p.thresholds)
    if LEVEL_PLURAL.search(masked):
        return True
    if SET_CUE.search(masked) or BY_LEVEL.search(masked):
        return True
    if SUPERLATIVE.search(masked) and p.level:
        return bool(re.search(r"\b(state|county|parish|borough|census area|municipio|county equivalent|"
                              r"planning region)\b", masked)) and not re.search(r"\b(the )?state of\b", masked)
    return bool(p.thresholds) and bool(re.search(r"\b(state|county)\b", masked))


# ---------------------------------------------------------------------------------------------------------------
# named places: one value each (lookup, snapshot, comparison), per N residents, next to the US


def _value_query(p: Parse, cat: Catalog, measures: list[Measure], notes: list[str]) -> Query:
    places: list[Place] = []
    for pl in p.places:
        if pl.how == "ambiguous":
            names = ", ".join(c.state.abbr for c in pl.candidates[:12])
            more = "" if len(pl.candidates) <= 12 else f" and {len(pl.candidates) - 12} more"
            others = {q.state.fips for q in p.places if q is not pl and q.level == "state"}
            pick = [c for c in pl.candidates if c.state.fips in others]
            if len(pick) == 1:
                c = pick[0]
                notes.append(f"“{pl.text}” exists in several states; read as {c.label}, the one in the "
                             "state the question names.")
                places.append(Place("county", c.state, c, pl.span, "rule", pl.text))
                continue
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
_RATIO = re.compile(r"\bratio\b|\bper\s+(housing unit|home|house|dwelling)s?\b")


def _difference_cue(p: Parse, masked: str) -> re.Match | None:
    """The words that ask for a difference between exactly two named places, or None."""
    mt = _DIFFERENCE.search(masked)
    places = p.places + [th.ref for th in p.thresholds if th.ref is not None]
    if mt is None or len({pl.geo_id for pl in places}) != 2 or any(pl.how == "ambiguous" for pl in places):
        return None
    return mt


def _difference(p: Parse, q: Query, cue: re.Match) -> Query:
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


def _ratio_measures(p: Parse) -> list[Measure] | None:
    """The two counts of "the ratio of residents to housing units", in the order named (weak mentions such as
    "residents" count here), or None when the question does not name exactly two counts."""
    found: list[Measure] = []
    for m in sorted(p.mentions, key=lambda m: m.start):
        if m.measure not in found and not (m.start == m.end):
            found.append(m.measure)
    if len(found) != 2 or not all(m.unit == "count" and m.additive for m in found):
        return None
    return found


def _ratio(q: Query, ratio: list[Measure]) -> Query:
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
    pop = _measure(cat, "population")
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


def _combined_places(p: Parse, cat: Catalog, measures: list[Measure], notes: list[str]) -> Query:
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


# ---------------------------------------------------------------------------------------------------------------
# the whole US, shares of the parent, counts


def _national(p: Parse, cat: Catalog, measures: list[Measure], notes: list[str]) -> Query:
    bad = [m for m in measures if not m.aggregable or not m.has_rows("state")]
    if bad:
        m = bad[0]
        if not m.aggregable:
            raise Decline(
                f"{m.label} ({', '.join(m.numerator)}) is a median/mean/index published for counties only; "
                "there are no nation rows, and county values must not be averaged into a US figure.",
                [f"Which 10 counties have the highest {nice_name(m)}?",
                 f"List counties with a {nice_name(m)} above {example_threshold(m)}",
                 "How many people live in the US?"])
        raise Decline(f"{m.label} has no state rows to add up into a US figure.", generic_suggestions())
    geo = GeoSet(level="state", exclude=exclusions(p, {"PR"}))
    if p.national:
        notes.append("“US” " + _us_scope(geo.exclude))
    else:
        notes.append("The total " + _us_scope(geo.exclude))
    return Query(Op.TOTAL, tuple(measures), geo, sums=tuple(measures), notes=tuple(notes + p.notes))


def _us_scope(exclude: frozenset[str]) -> str:
    """How a total over state rows was computed, in words."""
    if exclude == {"PR"}:
        scope = "the 50 states + DC"
    elif exclude == {"DC", "PR"}:
        scope = "the 50 states"
    elif not exclude:
        scope = "the 50 states + DC and Puerto Rico"
    else:
        scope = "every state row except " + join_words(sorted(exclude))
    return (f"computed as the sum over {scope} (the state rows; there are no nation rows)"
            + ("; Puerto Rico excluded." if "PR" in exclude else "."))


def _share_of_parent(p: Parse, cat: Catalog, m: Measure, parts: list[Place], notes: list[str]) -> Query:
    parts = [pl for pl in parts if pl.how != "ambiguous"] or parts
    for pl in parts:
        if pl.how == "ambiguous":
            raise Decline(f"“{pl.text}” exists in several states; name the state.",
                          [f"What share of {c.state.name} residents live in {c.name}?" for c in pl.candidates[:3]])
    if parts[0].level in ("county", "place"):
        for pl in parts:
            if not cat.has(m, pl.geo_id):
                raise Decline(no_rows(m, pl, cat), coverage_suggestions(m, pl, cat))
    geo = GeoSet(level=parts[0].level, places=tuple(parts), exclude=exclusions(p, {"PR"}))
    combined = len(parts) > 1 and bool(COMBINED.search(p.t) or re.search(r"\btogether\b", p.t))
    if combined and parts[0].level in ("county", "place") and len({pl.state.fips for pl in parts}) > 1:
        raise Decline("counties added together as a share of their state must all be in one state.",
                      topic_suggestions(p, cat))
    return Query(Op.SHARE, (m,), geo, combined=combined, notes=tuple(notes + p.notes))


def _count_places(p: Parse, cat: Catalog, measures: list[Measure], masked: str, notes: list[str]) -> Query:
    level = p.level or "county"
    if not p.thresholds and not cross_conditions(p, masked, level, measures):
        raise Decline("counting places needs a condition (e.g. “more than 100,000 people”).",
                      topic_suggestions(p, cat))
    q = _set_query(p, cat, measures, masked, notes, level, for_count=True)
    return q.edit(op=Op.COUNT, rank=None)


def _counties_per_state(p: Parse, masked: str, notes: list[str]) -> Query:
    """“Which state has the most counties?”, “number of counties in each state”: a count per state."""
    asc = bool(re.search(r"\b(fewest|least|smallest number|lowest number)\b", masked))
    n_match = re.search(r"\b(?:top|bottom|which|what|the)\s+(\d{1,2})\s+states\b", masked)
    if n_match and n_match.group(1) == "50" and p.fifty:  # “the 50 states” names the set, not a count
        n_match = None
    ranked = re.search(r"\b(most|fewest|least|largest number|greatest number|highest number|smallest number|"
                       r"lowest number)\b", masked)
    if n_match:
        limit = int(n_match.group(1))
    elif ranked and re.search(r"\bstate\b|\bhas\b", masked):  # one state asked for
        limit = 1
    else:
        limit = 10 if ranked else 0
    geo = GeoSet(level="county", exclude=exclusions(p, set()))
    rank = Rank(by=None, descending=not asc, n=limit, n_given=bool(n_match))  # type: ignore[arg-type]
    return Query(Op.PER_PARENT, (), geo, rank=rank, notes=tuple(notes))


def _count_geographies(p: Parse, notes: list[str]) -> Query:
    masked = mask(p.t, p.blocked)
    if p.level == "place":  # "How many villages are there in New York State?"
        states = tuple(pl.state for pl in p.places if pl.level == "state")
        return Query(Op.COUNT, (), GeoSet(level="place", within=states, place_kind=p.place_kind,
                                          exclude=frozenset() if states else exclusions(p, {"PR"})),
                     notes=tuple(notes + p.notes))
    level = "county" if re.search(r"\b(counties|countys|parishes|boroughs|county equivalents)\b", masked) else "state"
    states = tuple(pl.state for pl in p.places if pl.level == "state")
    if level == "county" and states:
        geo = GeoSet(level="county", within=states)
    elif level == "county":
        geo = GeoSet(level="county", exclude=exclusions(p, {"PR"}))
    else:
        geo = GeoSet(level="state", exclude=exclusions(p, {"PR"}))
    return Query(Op.COUNT, (), geo, notes=tuple(notes))


# ---------------------------------------------------------------------------------------------------------------
# sets of places: top/bottom N, thresholds, lists


def _set_query(p: Parse, cat: Catalog, measures: list[Measure], masked: str, notes: list[str], level: str,
               for_count: bool = False) -> Query:
    """A ranking or a (filtered) list of the states or counties in a set."""
    state_places = [pl for pl in p.places if pl.level == "state"]
    county_places = [pl for pl in p.places if pl.level == "county"]
    level_places = county_places if level == "county" and county_places and not state_places else []
    scope_states = [pl.state for pl in state_places]
    if level == "state" and county_places:
        raise Decline("the question mixes a county with a ranking of states; ask about one level.",
                      generic_suggestions())

    # measures must exist at this level (and in the scoped states)
    for m in measures:
        if level == "place" and not m.has_rows("place"):
            raise needs_fetch(m, nice_name(m), cat, levels=("place",), states=[s.abbr for s in scope_states],
                              why=f"the data has only population and housing units for Census places (cities, "
                                  f"towns, CDPs), not {nice_name(m)}",
                              suggestions=[f"What are the 10 largest cities in {scope_states[0].name}?"
                                           if scope_states else "What are the 10 largest cities in the US?"])
        if not m.has_rows(level):
            if level == "state":
                raise Decline(no_state_rows(m, scope_states[0] if len(scope_states) == 1 else None, cat),
                              median_suggestions(m, scope_states[0] if scope_states else None, cat))
            raise Decline(f"{m.label} ({', '.join(m.numerator)}) is published only for states in this data, "
                          "not for counties.",
                          [f"Which 5 states have the highest {nice_name(m)}?",
                           "Which 10 counties have the highest median household income?"])
        if level == "county":
            for st in scope_states:
                if not m.has_rows("county", st.fips):
                    where = Place("state", st, None, (0, 0))
                    raise Decline(no_rows(m, where, cat), coverage_suggestions(m, where, cat))

    cross = cross_conditions(p, masked, level, measures)
    # "cities in the US": the 50 states and DC, as a US total is
    exclude = exclusions(p, {"PR"} if level == "place" and p.national else set()) if not scope_states \
        else frozenset()
    if level == "place":
        kinds = {"": "all Census places (incorporated cities, towns, villages and boroughs, and census-designated "
                     "places)", "incorporated": "incorporated places only (no census-designated places)",
                 "cdp": "census-designated places (CDPs) only", "village": "places that are villages",
                 "town": "places that are towns", "borough": "places that are boroughs"}
        notes.append(f"Places: {kinds[p.place_kind]}" + ("; Puerto Rico left out." if "PR" in exclude else "."))
    independent = level == "county" and bool(INDEPENDENT_CITY.search(masked)) and not re.search(
        r"\b(counties|county|parishes|parish|boroughs|county equivalents)\b", masked)
    geo = GeoSet(level=level, places=tuple(level_places),
                 within=tuple(scope_states) if not (level == "state") else tuple(scope_states),
                 exclude=exclude, independent_cities=independent, place_kind=p.place_kind)

    if cross:  # "more Hispanic than White residents" compares two measures; it asks for no ranking
        masked = mask(masked, [m.span() for m in _THAN.finditer(masked)]
                      + [m.span() for m in re.finditer(r"\boutnumbers?\b", masked)])
    direction, n, n_given = read_rank(p, masked, measures)
    conditions = tuple(Condition(th.measure, th.op, th.value, th.value2, th.ref, None, th.text, th.unit)
                       for th in p.thresholds if th.measure is not None) + tuple(cross)
    rank = None
    if direction and not for_count:
        per_parent = level == "county" and bool(PER_STATE.search(masked))
        if per_parent and not n_given:
            n = 1
        rank = Rank(by=rank_measure(p, masked, measures), descending=direction == "DESC", n=n, n_given=n_given,
                    per_parent=per_parent)
    op = Op.RANK if rank is not None else Op.LIST
    return Query(op, tuple(measures), geo, rank=rank, conditions=conditions, notes=tuple(notes + p.notes))


#: "more Hispanic residents than non-Hispanic White residents": one measure against another in the same row
_THAN = re.compile(r"\b(more|less|fewer|higher|lower|greater|larger|bigger|smaller|exceeds?|exceeding|outnumber\w*)\b"
                   r"[^.?;]*?(?<!rather )(?<!other )\bthan\b")


def cross_conditions(p: Parse, masked: str, level: str, measures: Sequence[Measure]) -> list[Condition]:
    """Conditions comparing two measures of each place ("counties where Hispanic residents outnumber non-Hispanic
    White residents").  Answerable when both count the same universe in the same unit (two lines of one table,
    or two counts of the total population); otherwise — a rate against a rate over another universe — declined."""
    out: list[Condition] = []
    unbound = mask(masked, [th.span for th in p.thresholds])
    strong = sorted(p.strong(), key=lambda m: m.start)
    for than in _THAN.finditer(unbound):
        rest = unbound[than.end():].lstrip()
        after = than.end() + (len(unbound) - than.end() - len(rest))
        if not rest or rest[0] in "_$0123456789" or any(pl.span[0] <= after < pl.span[1] for pl in p.places):
            continue  # a number or a named place: the threshold reader's business
        left = [m for m in strong if than.start() <= m.start < after]
        right = [m for m in strong if m.start >= after]
        outnumber = than.group(1).startswith("outnumber")
        if outnumber:  # "Hispanic residents outnumber non-Hispanic White residents" (no "than")
            left = [m for m in strong if m.end <= than.start()][-1:]
        what = " ".join(p.tc[than.start():after].split() + p.tc[after:].split()[:4]).rstrip("?.!,;")
        noun = "county" if level == "county" else "state"
        if left and right and _comparable(left[-1].measure, right[0].measure):
            a, b = left[-1].measure, right[0].measure
            op = "<" if than.group(1) in ("less", "fewer", "lower", "smaller") else ">"
            out.append(Condition(a, op, other=b, text=what, unit=a.unit))
            continue
        raise Decline(f"comparing each {noun}'s value with another figure (“{what}”) is answered only for two "
                      "counts of the same people (e.g. Hispanic vs non-Hispanic White residents); these two are "
                      "not measured over the same universe, so one cannot be set against the other here. Ask for "
                      "both figures and compare them in the table.",
                      [f"Which 10 {'counties' if level == 'county' else 'states'} have the highest "
                       f"{nice_name(measures[0])}?"] if measures else generic_suggestions())
    # "counties where Hispanic residents outnumber non-Hispanic White residents"
    for mt in re.finditer(r"\boutnumbers?\b", masked):
        left = [m for m in strong if m.end <= mt.start()][-1:]
        right = [m for m in strong if m.start >= mt.end()][:1]
        if left and right and _comparable(left[0].measure, right[0].measure):
            out.append(Condition(left[0].measure, ">", other=right[0].measure,
                                 text=p.tc[left[0].start:right[0].end], unit=left[0].measure.unit))
    return out


def _comparable(a: Measure, b: Measure) -> bool:
    """Two measures one can be set against the other for each place: same unit, same universe."""
    return a.name != b.name and a.unit == b.unit and a.unit in ("count", "percent") and bool(a.universe) and \
        a.universe == b.universe and (a.unit == "count" or a.denominator == b.denominator)


__all__ = ["build_query", "cross_conditions"]
