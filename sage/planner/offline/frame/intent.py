"""From a reading of a question (:class:`~sage.planner.offline.read.parsed.Parse`) to its frame
(:class:`~sage.planner.offline.frame.frame.Query`).

This is where the offline planner decides *what* is asked: the operation (one value per place, a ranking, a
filtered list, a count, a total, a share of the parent, places per parent), the measures, the places and the set
they belong to, and every rule applied on the way (a state that has no median, DC's county-equivalent, Puerto Rico
left out of a US total).  Whatever it cannot decide honestly it declines (:class:`~.declines.Decline`) with
questions it can answer.  It writes no SQL: :mod:`.compile` does, from the frame alone.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ....census.semantic import Measure
from ..catalog import Catalog, counties_named
from ..declines import (
    Decline,
    state_suggestions,
    topic_suggestions,
)
from ..read.measures import TOTALS, implied_measure, restricted_decline, restriction
from ..read.parsed import Parse, Place
from ..read.scope import leave_out_states
from ..read.units import unit_query
from ..read.vocabulary import (
    BY_LEVEL,
    COMBINED,
    COUNTIES_PER_STATE,
    GROUP_FAMILIES,
    KNOWN_WORDS,
    LEVEL_PLURAL,
    SET_CUE,
    SET_TOTAL,
    SHARE_OF_WHOLE,
    SUPERLATIVE,
    join_words,
    mask,
    nice_name,
)
from .changes import change_query
from .frame import Op, Query
from .named import (
    RATIO,
    combined_places,
    difference_cue,
    difference_query,
    measure_or_decline,
    ratio_measures,
    ratio_query,
    value_query,
)
from .sets import count_geographies, count_places, counties_per_state, national, set_frame, share_of_parent

#: "I want one national percentage", "as a whole", "overall": one figure for the set, not a value per place
ONE_FIGURE = re.compile(r"\b(one|a single|single|an overall|one overall|one national|a national|a combined|"
                        r"one combined)"
                        r"\s+(national\s+|overall\s+|combined\s+|total\s+)?(percentage|percent|figure|number|rate|share|"
                        r"total|value|estimate)\b|\bas a whole\b|\bnationally\b|\bin total\b|\boverall\b(?!\s+(highest|"
                        r"lowest|top|bottom))")

#: words of a question that count places ("how many counties ...")
#: a count that asks for the places too
NAME_THEM = re.compile(r"\b(which ones|which are they|what are they|which are those|name them|list them|"
                       r"and which|show them|who are they)\b")
_COUNT_PLACES = re.compile(r"\b(how many|number of|count of|count the) (of the )?(\d+ )?(_+ )*(\w+ )?(states|counties|"
                           r"countys|parishes|county equivalents|boroughs|places|cities|towns|villages|cdps|"
                           r"census designated places|municipalities)\b")


def build_query(p: Parse, cat: Catalog) -> Query:
    """The frame of a read question, or :class:`Decline` when it cannot be answered honestly."""
    q = _in_period(p, cat, _build(p, cat))
    if p.leave_out and not q.geo.leave_out:
        # "the population of Texas other than Harris County": only a list or ranking leaves a place out
        names = join_words([pl.label for pl in p.leave_out])
        raise Decline(f"leaving out {names} is answered for a list or ranking of counties or places (“the most "
                      f"populous counties in the state other than {p.leave_out[0].label.split(',')[0]}”), not for "
                      "this question; nothing was answered.", topic_suggestions(p, cat))
    return q


def _in_period(p: Parse, cat: Catalog, q: Query) -> Query:
    """The frame read in the one earlier period the question names ("in 2014-2018", "in 2018")."""
    if len(p.periods) != 1 or q.op is Op.CHANGE or all(m.vintage == p.periods[0] for m in q.measures):
        return q
    return in_period(q, p.periods[0], cat, topic_suggestions(p, cat))


def in_period(q: Query, period: str, cat: Catalog, suggestions: list[str]) -> Query:
    """``q`` in ``period`` when that is not the measures' latest — for a question in full and for a follow-up
    ("what did that top 10 look like in 2014-2018?").  Values, rankings, lists, counts and totals can be; a share
    whose own table total has one period is read over total population (the same count, which has both); anything
    else, or a measure without that period, is declined rather than answered for the latest period or with
    empty values."""
    if q.op not in (Op.VALUE, Op.RANK, Op.LIST, Op.COUNT, Op.TOTAL) or q.ratio or q.per_n or q.with_us or \
            q.geo.among is not None or any(not m.has_rows(q.geo.level) for m in q.measures if q.geo.level != "mixed"):
        raise Decline(f"for {period} the offline planner gives values, rankings, lists, counts and totals; this "
                      "question needs more than that. Ask it for the latest period, or ask for the change between "
                      "the periods.", suggestions)
    swap = {m: cat.over_periods(m) for m in q.measures}
    notes = [f"{alt.label}: over total population (B01003_001E) in {period} — the same count as its table's total, "
             "which is loaded for the latest period only." for m, alt in swap.items() if alt is not m]
    if notes:
        q = q.edit(measures=tuple(swap[m] for m in q.measures),
                   rank=replace(q.rank, by=swap.get(q.rank.by, q.rank.by)) if q.rank and q.rank.by else q.rank,
                   conditions=tuple(replace(c, measure=swap.get(c.measure, c.measure)) for c in q.conditions),
                   sums=tuple(swap.get(m, m) for m in q.sums))
    lacking = [m for m in q.measures if period not in cat.periods_of(m)]
    if lacking:
        have = join_words([nice_name(m) + " (" + ", ".join(cat.periods_of(m)) + ")" for m in lacking])
        raise Decline(f"the data has no {period} values of {have}.", suggestions)
    for pl in q.geo.places:
        for m in q.measures:
            if not cat.has_in(m, pl.geo_id, period):
                raise Decline(f"{pl.label} has no {nice_name(m)} value for {period} in the data.", suggestions)
    return q.edit(periods=(period,), notes=(*q.notes, *notes, f"Period: ACS {period} 5-year estimates, as asked "
                                                              f"(the latest loaded is {q.measures[0].vintage})."))


def _build(p: Parse, cat: Catalog) -> Query:
    if p.coded is not None:  # a tract, a ZCTA, a district, a metro area (a loaded level)
        return unit_query(p, cat, *p.coded)
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

    # ("how many counties in Nevada have more than 50,000 people? And which ones are they?": the list, which shows
    # how many too)
    counting = _COUNT_PLACES.search(masked) and not NAME_THEM.search(masked)
    share_cue = SHARE_OF_WHOLE.search(masked)
    difference = difference_cue(p, masked)
    if difference:  # "how many more people live in Washington state than in DC": the gap, not a threshold
        p.places = sorted(p.places + [th.ref for th in p.thresholds if th.ref is not None], key=lambda pl: pl.span[0])
        p.thresholds = [th for th in p.thresholds if th.ref is None]
    set_query = _is_set_query(p, masked) and not difference
    if not set_query:
        _leave_out_named(p, cat, notes)
    if p.per_n and (set_query or p.thresholds or p.vs_us or not p.places):
        raise Decline(f"rates “{p.per_n[1]}” are computed by the offline planner only for named places; ask "
                      "for one state's or county's figure, or for a percentage share.", topic_suggestions(p, cat))
    if p.vs_us and (set_query or p.thresholds):
        raise Decline("comparing a set of places against the national figure is beyond the offline planner; "
                      "ask for the places' values and the US figure separately.", topic_suggestions(p, cat))

    # ---------------------------------------------------------- counties per state (a count of places, no measure)
    if not measures and not p.thresholds and COUNTIES_PER_STATE.search(masked):
        return counties_per_state(p, masked, notes)

    # ---------------------------------------------------------- pick the measures
    if not measures:
        implied = implied_measure(masked, cat)
        if implied is not None:
            measures = [implied]
            if implied.name == "population" and re.search(r"\b(how big|how large|how small|size)\b", masked):
                notes.append("Size read as population (land area is not in the data).")
        elif weak:
            measures = [weak[0].measure]
        elif set_query and not counting and re.search(r"\b(list|show|name|all|which|what are)\b", masked):
            measures = [measure_or_decline(cat, "population")]
            notes.append("No measure named: listing the places with their population.")
        elif counting and not p.thresholds:
            return count_geographies(p, notes)
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
    _restricted_total(p, cat, measures)

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
            return share_of_parent(p, cat, count, counties_named_, notes)
    # "what percentage of Black Americans live in Georgia?", "is it true that 1 in 10 Hispanic Americans live in
    # Texas?": the state's share of the nation's group, not the group's share of the state
    states_named = [pl for pl in p.places if pl.level == "state"]
    if (share_cue or re.search(r"\b(1|one) in (\d+|ten|five|four|three|twenty)\b", masked)) and len(measures) == 1 and \
            measures[0].is_rate and measures[0].family in GROUP_FAMILIES and states_named and not counties_named_ \
            and re.search(r"\b(americans|nation'?s|country'?s|us|usa|united states|nationwide|in the (us|country|"
                          r"nation))\b", masked) and re.search(r"\b(live|lives|living|reside|resides|residing|call)\b",
                                                              masked):
        count = next((x for x in cat.measures if x.family == measures[0].family and x.additive), None)
        if count is not None:
            return share_of_parent(p, cat, count, states_named, notes)
    if share_cue and (not set_query or combined) and all(m.additive for m in measures) and len(measures) == 1 \
            and not p.thresholds:
        counties = [pl for pl in p.places if pl.level == "county"]
        states = [pl for pl in p.places if pl.level == "state"]
        cities = [pl for pl in p.places if pl.level == "place"]
        if cities and not counties and measures[0].has_rows("place"):  # "the city of Houston" of Texas
            q = share_of_parent(p, cat, measures[0], cities, notes)
            if _OF_THE_US.search(masked) and not states:  # "what fraction of all Americans live in NYC"
                return q.edit(share_of="us")
            return q
        if counties:
            return share_of_parent(p, cat, measures[0], counties, notes)
        if states:
            return share_of_parent(p, cat, measures[0], states, notes)

    if counting:
        return count_places(p, cat, measures, masked, notes)
    # "the six New England states (…) together": named places added up, even when a level word names them
    if combined and len(p.places) >= 2 and len({pl.level for pl in p.places}) == 1 and not p.thresholds \
            and not SUPERLATIVE.search(masked):
        if set_query:  # (named states less the ones a clause leaves out, as for a question about named places)
            _leave_out_named(p, cat, notes)
        return combined_places(p, cat, measures, notes)
    fifty_only = p.fifty and not p.places and not SUPERLATIVE.search(masked) and not p.thresholds and not (
        BY_LEVEL.search(masked) or re.search(r"\b(which|what|each|every|list|show|map|rank)\b[^.?]*\bstates?\b",
                                             masked))
    if (COMBINED.search(masked) or fifty_only or ONE_FIGURE.search(masked)) and not p.places \
            and not SUPERLATIVE.search(masked) and not p.thresholds:
        return national(p, cat, measures, notes)
    filters = {th.measure.name for th in p.thresholds if th.measure is not None}
    if set_query and SET_TOTAL.search(masked) and not any(m.additive for m in measures):
        # “how many people live in counties with …”: the weak count word is what gets added up
        measures = measures + [m.measure for m in weak if m.measure.additive][:1]
    additive = [m for m in measures if m.additive]
    if set_query and SET_TOTAL.search(masked) and additive and all(
            m.additive or m.name in filters for m in measures):
        summable = [m for m in additive if m.name not in filters] or additive
        q = set_frame(p, cat, measures, masked, notes, p.level or "state")
        return q.edit(op=Op.TOTAL, sums=tuple(summable), rank=None)
    pick = _PICK_ONE.search(masked)
    if pick and p.places and len({pl.level for pl in p.places}) == 1 and (set_query or SUPERLATIVE.search(masked)):
        # "Raleigh or Durham ... which of the two cities has more housing units?": the places named, ranked, the one
        # asked for first (a place the question names never drops out of the answer)
        q = set_frame(p, cat, measures, masked, notes, p.places[0].level)
        if q.rank is not None:
            notes.append(f"{join_words([pl.label for pl in p.places])} ranked: the first is the one asked for "
                         f"(“{pick.group(0)}”).")
            return q.edit(geo=replace(q.geo, places=tuple(p.places), within=()),
                          rank=replace(q.rank, n=len(p.places), n_given=False))
    if set_query:
        return set_frame(p, cat, measures, masked, notes, p.level or "state")
    # "what percentage of adults in New York City's five boroughs ...": the whole the parts make up, one figure
    whole = bool(p.group) and not _EACH_PART.search(masked)
    # ("please compare how many people live in Omaha and in Lincoln": each, not the two added up)
    summed = COMBINED.search(masked) or (SET_TOTAL.search(masked) and not re.search(
        r"\b(compare[sd]?|comparing|comparison|vs|versus|which|each|respectively)\b", masked)) or whole
    if p.places and summed and len(p.places) >= 2 and \
            len({pl.level for pl in p.places}) == 1:  # "a city vs its county as a whole" adds nothing up
        return combined_places(p, cat, measures, notes)
    if p.places:
        ratio = ratio_measures(p) if RATIO.search(masked) else None
        q = value_query(p, cat, ratio or measures, notes)
        if difference:
            return difference_query(p, q, difference)
        if ratio is not None and q.op is Op.VALUE:
            return ratio_query(q, ratio)
        if RATIO.search(masked):
            raise Decline("a ratio is computed here between two counts (e.g. residents to housing units); name the "
                          "two counts, or ask for each figure.",
                          [f"What is the ratio of residents to housing units in {pl.label}?"
                           for pl in q.geo.places[:1]])
        return q
    if p.national:
        return national(p, cat, measures, notes)
    if SUPERLATIVE.search(masked):
        notes.append("No level named: ranking the states.")
        return set_frame(p, cat, measures, masked, notes, "state")
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


#: "which of the two cities", "which one of these counties": one of the places named
_PICK_ONE = re.compile(r"\bwhich (one )?of (the|these|those|them)( (two|2|three|3|four|4|both))?( (cities|towns|places|"
                       r"counties|states))?\b")

#: the whole a share is of, when it is the country rather than the place's state
def _leave_out_named(p: Parse, cat: Catalog, notes: list[str]) -> None:
    """Named states less the ones a clause leaves out ("the six New England states (...) together, other than
    Maine"; :func:`~..read.scope.leave_out_states`), unless that would leave nothing named."""
    states = [pl for pl in p.places if pl.level == "state"]
    kept, left_notes = leave_out_states(p, states, cat.state_by_abbr)
    if len(states) - len(kept) >= len(p.places):
        return
    p.places = [pl for pl in p.places if pl.level != "state" or pl in kept]
    notes.extend(left_notes)


#: words that ask for each part of a whole named by its parts ("each of the five boroughs", "which borough")
_EACH_PART = re.compile(r"\b(each|every|which|compare[sd]?|comparison|rank\w*|list|separately|individually|"
                        r"respectively|by (borough|county)|break\w*\s+(it\s+)?down|vs|versus|highest|lowest|most|"
                        r"least)\b")
_OF_THE_US = re.compile(r"\b(americans|the us|the usa|the united states|the country|the nation|nationwide|"
                        r"us population|national population|all of america)\b")

#: "the city proper, not St. Louis County", "rather than all of Honolulu County": a place named to be set aside
_NEGATED = re.compile(r"\b(not|rather than|instead of|as opposed to|and not|but not|not counting|excluding|without|"
                      r"other than)\s+(all of\s+|the whole of\s+|the rest of\s+|the\s+|just\s+|including\s+)?$")


def _restricted_total(p: Parse, cat: Catalog, measures: list[Measure]) -> None:
    """A total asked of a subgroup the data does not count — "how many people in McDowell County have serious
    difficulty walking", "households that heat with wood", "people born in Nevada", "registered nurses" — would be
    answered with everyone: declined instead, naming the words that restrict it."""
    if not measures or any(m.name not in TOTALS for m in measures) or p.change:
        return
    words = restriction(p, cat)
    if words:
        raise restricted_decline(p, cat, words, join_words([nice_name(m) for m in measures]))


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




#: a level word that points back to the places named ("these two counties", "both states")
_NAMED_BACK = re.compile(r"\b(?:these|those|both of the|both|the|all)\s+(?:(?:two|three|four|five|2|3|4|5)\s+)?"
                         r"(?:counties|states|cities|places|boroughs|parishes)\b(?!\s+(?:in|of|with|where|that|which)\b)")


def _is_set_query(p: Parse, masked: str) -> bool:
    """A question about a set of states, counties or Census places (rank, threshold, list) rather than named
    places."""
    if p.level is None:
        return False
    if len(p.places) >= 2:
        # "Lancaster County and York County ... the difference between these two counties": the places named
        masked = _NAMED_BACK.sub(lambda m: "_" * len(m.group(0)), masked)
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


__all__ = ["build_query"]
