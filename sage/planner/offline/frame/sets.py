"""Frames of questions about sets of places and wholes: the US added up, a place's share of its parent, counts of
places meeting a condition, places per state, rankings and filtered lists of a set, and conditions that compare two
measures of each place.  Part of the offline planner's reading (:mod:`.intent` decides which kind a question is)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ....census.semantic import Measure
from ..catalog import Catalog
from ..declines import (
    Decline,
    coverage_suggestions,
    example_threshold,
    generic_suggestions,
    median_suggestions,
    needs_fetch,
    no_rows,
    no_state_rows,
    topic_suggestions,
)
from ..read.parsed import Parse, Place
from ..read.ranking import rank_measure, read_rank
from ..read.scope import exclusions, leave_out_states
from ..read.vocabulary import (
    COMBINED,
    INDEPENDENT_CITY,
    PER_STATE,
    join_words,
    mask,
    nice_name,
)
from .frame import Condition, GeoSet, Op, Query, Rank

# ---------------------------------------------------------------------------------------------------------------
# the whole US, shares of the parent, counts


def national(p: Parse, cat: Catalog, measures: list[Measure], notes: list[str]) -> Query:
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


def share_of_parent(p: Parse, cat: Catalog, m: Measure, parts: list[Place], notes: list[str]) -> Query:
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


def count_places(p: Parse, cat: Catalog, measures: list[Measure], masked: str, notes: list[str]) -> Query:
    level = p.level or "county"
    if not p.thresholds and not cross_conditions(p, masked, level, measures):
        raise Decline("counting places needs a condition (e.g. “more than 100,000 people”).",
                      topic_suggestions(p, cat))
    q = set_frame(p, cat, measures, masked, notes, level, for_count=True)
    return q.edit(op=Op.COUNT, rank=None)


def counties_per_state(p: Parse, masked: str, notes: list[str]) -> Query:
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


def count_geographies(p: Parse, notes: list[str]) -> Query:
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


def set_frame(p: Parse, cat: Catalog, measures: list[Measure], masked: str, notes: list[str], level: str,
               for_count: bool = False) -> Query:
    """A ranking or a (filtered) list of the states or counties in a set."""
    state_places = [pl for pl in p.places if pl.level == "state"]
    county_places = [pl for pl in p.places if pl.level == "county"]
    level_places = county_places if level == "county" and county_places and not state_places else []
    scope_states = [pl.state for pl in state_places]
    # "rank the New England states by population, other than Maine": the states named or read from a region, less
    # the ones left out (dropped silently before, the answer kept Maine)
    kept, left_notes = leave_out_states(p, scope_states, cat.state_by_abbr)
    notes.extend(left_notes)
    if left_notes:
        scope_states = kept
    if left_notes and not scope_states:
        raise Decline("every state the question names is also left out; nothing is left to answer.",
                      generic_suggestions())
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
    place_kind = p.place_kind
    if level == "place" and place_kind in ("town", "village", "borough") and scope_states and not any(
            loc.kind == place_kind and loc.state in scope_states for loc in cat.localities):
        # "biggest 10 towns in Vermont": Vermont has no Census places named towns (its towns are county
        # subdivisions, not in the data), so the word means its places, not an empty list
        names = join_words([st.name for st in scope_states])
        notes.append(f"{names} has no Census places that are {place_kind}s (its {place_kind}s are county "
                     f"subdivisions, not in the data): all its Census places are shown.")
        place_kind = ""
    if level == "place":
        kinds = {"": "all Census places (incorporated cities, towns, villages and boroughs, and census-designated "
                     "places)", "incorporated": "incorporated places only (no census-designated places)",
                 "cdp": "census-designated places (CDPs) only", "village": "places that are villages",
                 "town": "places that are towns", "borough": "places that are boroughs"}
        notes.append(f"Places: {kinds[place_kind]}" + ("; Puerto Rico left out." if "PR" in exclude else "."))
    independent = level == "county" and bool(INDEPENDENT_CITY.search(masked)) and not re.search(
        r"\b(counties|county|parishes|parish|boroughs|county equivalents)\b", masked)
    geo = GeoSet(level=level, places=tuple(level_places),
                 within=tuple(scope_states) if not (level == "state") else tuple(scope_states),
                 exclude=exclude, independent_cities=independent, place_kind=place_kind,
                 leave_out=tuple(pl for pl in p.leave_out if pl.level == level))
    if geo.leave_out:
        notes.append("Left out, as asked: " + join_words([pl.label for pl in geo.leave_out]) + ".")

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
        named = level_places or (scope_states if level == "state" else [])
        # (a region's states are a set, not places named: "which southern state has the highest poverty rate" is one)
        explicit = [pl for pl in p.places if pl.level == level and pl.how != "region"]
        if named and not n_given and len(named) > n and (len(explicit) > n or re.search(r"\b(both|each|all|every)\b",
                                                                                        masked)):
            # "which state has a larger population, Vermont or Wyoming?", "VA vs MD ... Which state is higher.": the
            # places named, every one of them ranked, the one asked for first (a place the question names never
            # drops out of the answer)
            n = len(named)
            notes.append(f"All {n} places named are shown, ranked: the first is the one asked for.")
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


__all__ = ["count_geographies", "count_places", "counties_per_state", "cross_conditions", "national", "set_frame",
           "share_of_parent"]
