"""The offline planner: common census questions answered with no API key and no network.

It reads a question the way an analyst writes it — a measure or several (through the semantic layer in
:mod:`sage.census.semantic`), places (state names and postal codes, "X County, ST", parishes, census areas,
independent cities, misspellings), and an intent (one value, a snapshot, a comparison, top/bottom N, thresholds,
a national figure, a count of places, a place's share of its state) — and writes the SQL in the house style.

Why rules and not a model: the answers must be right or honestly refused.  Every step that could guess is either
a stated rule (shown in the assumptions) or a refusal with two or three questions it *can* answer.  What it knows
about the data (which measures exist at which level, which states each table covers, every place name) is read
once from the database per settings and cached, so planning itself takes a few milliseconds.

Conventions (each one is repeated in the plan's assumptions when it applies):

* "states" are all state-level rows with data (50 states, DC, Puerto Rico); "the 50 states" drops DC and PR;
  "the US" is the sum over the 51 rows of the 50 states + DC (no nation rows exist), for counts and for rates
  of summed counts only — medians, means and indexes are never averaged into a state or US figure.
* a county name found in several states, with no state named, lists every match (largest first) — unless the
  question names a state that has exactly one of them, or names other counties that share one state;
* postal codes count only in capitals (or right after a county name), so "in", "or", "me", "ok" stay words;
  misspelled state and county names are matched by closeness and the match is stated;
* DC's county-equivalent row answers county-only measures (medians) for "DC";
* a question about a topic, year, place type or population group the data lacks is declined, naming what is
  missing, with two or three questions this planner can answer.

The planner is split by concern: :mod:`.vocabulary` (words, patterns, numbers), :mod:`.catalog` (places and
coverage read from the database), :mod:`.parsed` (what a question holds), :mod:`.parser` with :mod:`.places`,
:mod:`.measures` and :mod:`.thresholds` (reading a question), :mod:`.declines` (refusals and suggestions),
:mod:`.offline_sql` (the SQL) and this module, which turns a parse into a plan for each intent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..census.semantic import Measure
from ..text import overlaps
from ..types import Chunk, DisplayHint
from .base import Attempt, Plan
from .catalog import Catalog, State, counties_named, load_catalog
from .declines import (Decline, coverage_suggestions, example_threshold, generic_suggestions, median_suggestions,
                       no_rows, no_state_rows, state_suggestions, topic_suggestions)
from .measures import implied_measure
from .offline_sql import (code_filter, out_cols, place_filter, select_sql, simplify, sql_str, squash, state_filter,
                          threshold_sql, us_col, variable_codes)
from .parsed import Parse, Place
from .parser import parse_question
from .thresholds import describe_threshold
from .vocabulary import (ASC_WORDS, BAD_HIGH, BY_LEVEL, COMBINED, COUNTIES_PER_STATE, DESC_WORDS, FIFTY,
                         INDEPENDENT_CITY, KNOWN_WORDS, LEVEL_PLURAL, LEVEL_SINGULAR, N_RES, NUM_WORDS, PER_STATE,
                         SET_CUE, SET_TOTAL, SHARE_OF_WHOLE, SUPERLATIVE, join_words, mask, nice_name)

# ---------------------------------------------------------------------------------------------------------------
# the planner


class OfflinePlanner:
    """Rule-based planner over the semantic layer; see the module docstring."""

    name = "offline"

    def __init__(self, settings) -> None:
        self.settings = settings

    @property
    def catalog(self) -> Catalog:
        """Read once per database; read again after a `census fetch` has added tables."""
        return load_catalog(self.settings)

    # ---------------------------------------------------------------- entry point
    def plan(self, question: str, chunks: Sequence[Chunk] = (), attempts: Sequence[Attempt] = ()) -> Plan:
        if not isinstance(question, str) or not question.strip():
            return self._decline("The question is empty.", generic_suggestions())
        cat = self.catalog
        try:
            plan = self._build(parse_question(question, chunks, cat), cat)
        except Decline as exc:
            return self._decline(exc.reason, exc.suggestions or generic_suggestions(), exc.assumptions)
        if attempts:
            plan = self._after_failures(plan, attempts)
        return plan

    def _decline(self, reason: str, suggestions: Sequence[str], assumptions: Sequence[str] = ()) -> Plan:
        assumptions = [f"Cannot answer: {reason}", *assumptions]
        return Plan(sql="", assumptions=assumptions, display_hint="table", planner=self.name,
                    suggestions=list(dict.fromkeys(suggestions))[:3])

    def _after_failures(self, plan: Plan, attempts: Sequence[Attempt]) -> Plan:
        """A previous SQL failed: never propose it again; try the plain variant (no MOE / map columns), else stop."""
        tried = {squash(a.sql) for a in attempts}
        if plan.declined or squash(plan.sql) not in tried:
            return plan
        simpler = simplify(plan.sql)
        if simpler and squash(simpler) not in tried:
            return replace(plan, sql=simpler, assumptions=[
                *plan.assumptions, "Retried without the margin-of-error and map columns after an error."])
        last = attempts[-1]
        return self._decline(
            f"the query for this question failed ({last.error.strip()[:200]}) and the offline planner has no "
            "other way to write it.", generic_suggestions())

    # ---------------------------------------------------------------- from a parse to a plan: pick the intent
    def _build(self, p: Parse, cat: Catalog) -> Plan:
        t = p.t
        masked = mask(t, p.blocked)
        strong = p.strong()
        weak = [m for m in p.mentions if m.weak]
        measures = [m.measure for m in strong]
        assumptions: list[str] = []

        # places: fuzzy matches and rules to state
        for pl in p.places:
            if pl.how == "fuzzy":
                assumptions.append(f"“{pl.text}” read as {pl.label} (closest name in the data).")
            elif pl.how == "demonym":
                assumptions.append(f"“{pl.text}” read as the people of {pl.state.name}.")
            elif pl.how == "alias":
                assumptions.append(f"“{pl.text}” read as {pl.label}, the county-equivalent of that name.")

        count_places = re.search(r"\b(how many|number of|count of|count the) (of the )?(\d+ )?(_+ )*(states|counties|"
                                 r"parishes|county equivalents|boroughs)\b", masked)
        share_cue = SHARE_OF_WHOLE.search(masked)
        set_query = self._is_set_query(p, masked)
        if p.per_n and (set_query or p.thresholds or p.vs_us or not p.places):
            raise Decline(f"rates “{p.per_n[1]}” are computed by the offline planner only for named places; ask "
                          "for one state's or county's figure, or for a percentage share.", topic_suggestions(p, cat))
        if p.vs_us and (set_query or p.thresholds):
            raise Decline("comparing a set of places against the national figure is beyond the offline planner; "
                          "ask for the places' values and the US figure separately.", topic_suggestions(p, cat))

        # ---------------------------------------------------------- counties per state (a count of places, no measure)
        if not measures and not p.thresholds and COUNTIES_PER_STATE.search(masked):
            return self._counties_per_state(p, masked, assumptions)

        # ---------------------------------------------------------- pick the measures
        if not measures:
            implied = implied_measure(masked, cat)
            if implied is not None:
                measures = [implied]
                if implied.name == "population" and re.search(r"\b(how big|how large|how small|size)\b", masked):
                    assumptions.append("Size read as population (land area is not in the data).")
            elif weak:
                measures = [weak[0].measure]
            elif set_query and not count_places and re.search(r"\b(list|show|name|all|which|what are)\b", masked):
                population = cat.measure("population")
                assert population is not None  # a shipped measure
                measures = [population]
                assumptions.append("No measure named: listing the places with their population.")
            elif count_places and not p.thresholds:
                return self._count_geographies(p, cat, assumptions)
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

        # ---------------------------------------------------------- part of a whole: county of state, state of US
        if share_cue and not set_query and all(m.additive for m in measures) and len(measures) == 1 \
                and not p.thresholds:
            counties = [pl for pl in p.places if pl.level == "county"]
            states = [pl for pl in p.places if pl.level == "state"]
            if counties:
                return self._share_of_parent(p, cat, measures[0], counties, assumptions)
            if states:
                return self._share_of_parent(p, cat, measures[0], states, assumptions)

        if count_places:
            return self._count_places(p, cat, measures, assumptions)
        fifty_only = p.fifty and not p.places and not SUPERLATIVE.search(masked) and not p.thresholds and not (
            BY_LEVEL.search(masked) or re.search(r"\b(which|what|each|every|list|show|map|rank)\b[^.?]*\bstates?\b",
                                                 masked))
        if (COMBINED.search(masked) or fifty_only) and not p.places and not SUPERLATIVE.search(masked) \
                and not p.thresholds:
            return self._national(p, cat, measures, assumptions)
        filters = {th.measure.name for th in p.thresholds if th.measure is not None}
        if set_query and SET_TOTAL.search(masked) and not any(m.additive for m in measures):
            # “how many people live in counties with …”: the weak count word is what gets added up
            measures = measures + [m.measure for m in weak if m.measure.additive][:1]
        additive = [m for m in measures if m.additive]
        if set_query and SET_TOTAL.search(masked) and additive and all(
                m.additive or m.name in filters for m in measures):
            summable = [m for m in additive if m.name not in filters] or additive
            return self._set_total(p, cat, measures, summable, assumptions)
        if set_query:
            return self._set_query(p, cat, measures, assumptions)
        if p.places and (COMBINED.search(masked) or SET_TOTAL.search(masked)) and len(p.places) >= 2:
            return self._combined_places(p, cat, measures, assumptions)
        if p.places:
            return self._places_query(p, cat, measures, assumptions)
        if p.national:
            return self._national(p, cat, measures, assumptions)
        if SUPERLATIVE.search(masked):
            p.level = "state"
            assumptions.append("No level named: ranking the states.")
            return self._set_query(p, cat, measures, assumptions)
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

    def _is_set_query(self, p: Parse, masked: str) -> bool:
        """A question about a set of states or counties (rank, threshold, list) rather than named places."""
        if p.level is None:
            return False
        if LEVEL_PLURAL.search(masked):
            return True
        if SET_CUE.search(masked) or BY_LEVEL.search(masked):
            return True
        if SUPERLATIVE.search(masked) and p.level:
            return bool(re.search(r"\b(state|county|parish|borough|census area|municipio|county equivalent|"
                                  r"planning region)\b",
                                  masked)) and not re.search(
                r"\b(the )?state of\b", masked)
        return bool(p.thresholds) and bool(re.search(r"\b(state|county)\b", masked))

    # ---------------------------------------------------------- a list of places (lookup / snapshot / compare)
    def _places_query(self, p: Parse, cat: Catalog, measures: list[Measure], assumptions: list[str]) -> Plan:
        places: list[Place] = []
        for pl in p.places:
            if pl.how == "ambiguous":
                names = ", ".join(c.state.abbr for c in pl.candidates[:12])
                more = "" if len(pl.candidates) <= 12 else f" and {len(pl.candidates) - 12} more"
                others = {q.state.fips for q in p.places if q is not pl and q.level == "state"}
                pick = [c for c in pl.candidates if c.state.fips in others]
                if len(pick) == 1:
                    c = pick[0]
                    assumptions.append(f"“{pl.text}” exists in several states; read as {c.label}, the one in the "
                                       "state the question names.")
                    places.append(Place("county", c.state, c, pl.span, "rule", pl.text))
                    continue
                assumptions.append(f"“{pl.text}” exists in {len(pl.candidates)} states ({names}{more}); showing "
                                   "all of them — name the state for just one.")
                for c in pl.candidates:
                    places.append(Place("county", c.state, c, pl.span, "ambiguous", pl.text))
            else:
                places.append(pl)
        uniq: dict[str, Place] = {}
        for pl in places:
            uniq.setdefault(pl.geo_id, pl)
        places = list(uniq.values())
        levels = {pl.level for pl in places}

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
        assumptions.extend(f"Left out: {d}" for d in dropped)

        # DC for county-only measures: its county-equivalent row
        resolved: list[Place] = []
        for pl in places:
            if pl.level == "state" and pl.state.abbr == "DC" and any(not m.has_rows("state") for m in measures):
                dc = next((c for c in cat.counties_by_state.get(pl.state.fips, [])), None)
                if dc is not None:
                    assumptions.append("District of Columbia read as its county-equivalent row (same area), the "
                                       "level these figures are published at.")
                    resolved.append(Place("county", pl.state, dc, pl.span, "rule", pl.text))
                    continue
            resolved.append(pl)
        places = resolved
        levels = {pl.level for pl in places}

        # coverage of each place
        missing: list[tuple[Place, Measure]] = []
        for m in measures:
            for pl in places:
                if not cat.has(m, pl.geo_id):
                    missing.append((pl, m))
        if missing:
            if len(places) == 1 and all(m in {mm for _, mm in missing} for m in measures):
                pl, m = missing[0]
                raise Decline(no_rows(m, pl, cat), coverage_suggestions(m, pl, cat))
            for pl, m in missing:
                assumptions.append(f"No data: {no_rows(m, pl, cat)}")
            if len(places) == 1:
                measures = [m for m in measures if (places[0], m) not in missing]

        mixed = len(levels) > 1
        level = "county" if "county" in levels else "state"
        if p.per_n:
            return self._per_n(p, cat, measures, places, level, assumptions)
        if p.vs_us:
            return self._with_us_row(p, cat, measures, places, level, assumptions)
        if mixed:
            where = f"g.geo_id IN ({', '.join(sql_str(pl.geo_id) for pl in places)})"
            place_cols = ["g.level", "g.county_name", "g.state_name"]
            group = ["g.geo_id", "g.level", "g.county_name", "g.state_name"]
            level_cond = None
        else:
            where = place_filter(places, level)
            place_cols = ["g.county_name", "g.state_name"] if level == "county" else ["g.state_name"]
            group = ["g.geo_id", *place_cols] if level == "county" else ["g.state_name"]
            level_cond = f"g.level = '{level}'"

        single_place = len(places) == 1
        with_moe = single_place or len(measures) == 1
        sql = select_sql(measures, place_cols, group, level_cond, where, moe_level=level if with_moe else None,
                         order=None if single_place else (measures[0], "DESC"))
        _explain_places(places, assumptions)
        _explain_measures(measures, assumptions, level=level, sql=sql, places=places)
        assumptions.extend(p.notes)
        hint: DisplayHint
        if single_place:
            hint = "big" if len(measures) == 1 else "statrow"
        else:
            hint = "bar" if len(measures) == 1 else ("grouped" if len(measures) == 2 else "table")
        return Plan(sql=sql, assumptions=assumptions, display_hint=hint, planner=self.name)

    # ---------------------------------------------------------- a count per 1,000 residents
    def _per_n(self, p: Parse, cat: Catalog, measures: list[Measure], places: list[Place], level: str,
               assumptions: list[str]) -> Plan:
        """“Housing units per 1,000 residents”: a count over total population, both of one ACS period (a
        2018-2022 count is never divided by 2019-2023 population), scaled by N."""
        assert p.per_n is not None  # this intent is chosen because the question has one
        n, phrase = p.per_n
        pop = cat.measure("population")
        assert pop is not None  # a shipped measure
        measures = [m for m in measures if m.name != "population"]
        bad = [m for m in measures if not m.additive or m.vintage != pop.vintage]
        if not measures or bad or len({pl.level for pl in places}) > 1:
            m = bad[0] if bad else None
            why = (f"{m.label} is {'not a count' if not m.additive else f'from ACS {m.vintage}'}, so it cannot be "
                   f"divided by the {pop.vintage} population" if m else "no count to divide by the population")
            raise Decline(f"“{phrase}”: {why}; ask for the figure itself or a percentage share.",
                          topic_suggestions(p, cat))
        pop_code = pop.numerator[0]
        cols = []
        for m in measures:
            cols.append(f"ROUND({n}.0 * {m.condition_expression('e')} / NULLIF(SUM(e.estimate) FILTER (WHERE "
                        f"e.variable_code = '{pop_code}'), 0), 1) AS {m.column}_per_{n}")
        head = "g.county_name, g.state_name" if level == "county" else "g.state_name"
        group = "g.geo_id, g.county_name, g.state_name" if level == "county" else "g.state_name"
        codes = code_filter(variable_codes(measures) + [pop_code])
        sql = (f"SELECT {head}, {', '.join(cols)} FROM public.estimates e JOIN public.geography g ON "
               f"g.geo_id = e.geo_id WHERE g.level = '{level}' AND {place_filter(places, level)} AND {codes} "
               f"GROUP BY {group}")
        assumptions.append(f"“{phrase}” = {n:,} × count / total population ({pop_code}), both ACS {pop.vintage}.")
        _explain_places(places, assumptions)
        _explain_measures(measures, assumptions, level=level, sql=sql, places=places, moe=False)
        assumptions.extend(p.notes)
        hint: DisplayHint = "big" if len(places) == 1 and len(measures) == 1 else "bar"
        return Plan(sql=sql, assumptions=assumptions, display_hint=hint, planner=self.name)

    # ---------------------------------------------------------- named places next to the US figure
    def _with_us_row(self, p: Parse, cat: Catalog, measures: list[Measure], places: list[Place], level: str,
                     assumptions: list[str]) -> Plan:
        """“Is Florida's poverty rate above the national average?”: each place's value and one row for the US,
        computed like a national figure (the 50 states + DC summed; rates from the summed counts).  Medians,
        means and indexes have no US figure, so the comparison is declined rather than half answered."""
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
        if len({pl.level for pl in places}) > 1:
            raise Decline("to set places against the US, keep to one level (states or counties).",
                          topic_suggestions(p, cat))
        codes = code_filter(variable_codes(measures))
        exprs = ", ".join(f"{m.sql_expression('e')} AS {m.column}" for m in measures)
        frm = "FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id"
        if level == "county":
            head, us_head, group = ("g.county_name, g.state_name", "'United States' AS county_name, NULL AS state_name",
                                    "g.geo_id, g.county_name, g.state_name")
        else:
            head, us_head, group = "g.state_name", "'United States' AS state_name", "g.state_name"
        sql = (f"SELECT {head}, {exprs} {frm} WHERE g.level = '{level}' AND {place_filter(places, level)} "
               f"AND {codes} GROUP BY {group} "
               f"UNION ALL SELECT {us_head}, {exprs} {frm} WHERE g.level = 'state' AND g.state_abbr <> 'PR' "
               f"AND {codes}")
        assumptions.append("US row = the sum over the 50 states + DC (the state rows; there are no nation rows; "
                           "Puerto Rico excluded); rates computed from the summed counts.")
        for m in measures:
            cov = m.coverage.get("state")
            if cov is not None:
                lacking = [s.name for s in cat.states if s.fips not in cov and s.abbr != "PR"]
                if lacking:
                    assumptions.append(f"{m.label}: no rows for {', '.join(lacking)}, so the US figure covers the "
                                       "other states only.")
        _explain_places(places, assumptions)
        _explain_measures(measures, assumptions, level=level, sql=sql, places=places, moe=False)
        assumptions.extend(p.notes)
        hint: DisplayHint = "bar" if len(measures) == 1 else ("grouped" if len(measures) == 2 else "table")
        return Plan(sql=sql, assumptions=assumptions, display_hint=hint, planner=self.name)

    # ---------------------------------------------------------- several places added together
    def _combined_places(self, p: Parse, cat: Catalog, measures: list[Measure], assumptions: list[str]) -> Plan:
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
        cols = [f"{m.sql_expression('e')} AS combined_{m.column}" for m in measures]
        sql = (f"SELECT {', '.join(cols)} FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id "
               f"WHERE g.level = '{level}' AND {place_filter(places, level)} "
               f"AND {code_filter(variable_codes(measures))}")
        assumptions.append(f"Combined = {join_words([pl.label for pl in places])} added together (counts summed; rates "
                           "computed from the summed counts).")
        _explain_places(places, assumptions)
        _explain_measures(measures, assumptions, level=level, sql=sql, places=places)
        assumptions.extend(p.notes)
        return Plan(sql=sql, assumptions=assumptions, display_hint="big" if len(measures) == 1 else "statrow",
                    planner=self.name)

    # ---------------------------------------------------------- the whole US
    def _national(self, p: Parse, cat: Catalog, measures: list[Measure], assumptions: list[str]) -> Plan:
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
        where = ["g.level = 'state'"]
        excluded = []
        if not p.incl_pr:
            where.append("g.state_abbr <> 'PR'")
            excluded.append("Puerto Rico")
        if p.fifty or p.excl_dc:
            where[-1] = "g.state_abbr NOT IN ('DC', 'PR')" if not p.incl_pr else "g.state_abbr <> 'DC'"
            excluded.append("DC")
        codes = variable_codes(measures)
        cols = []
        for m in measures:
            cols.append(f"{m.sql_expression('e')} AS {us_col(m)}")
        sql = (f"SELECT {', '.join(cols)} FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id "
               f"WHERE {' AND '.join(where)} AND {code_filter(codes)}")
        if p.fifty or p.excl_dc:
            scope = "the 50 states" + (" and Puerto Rico" if p.incl_pr else "")
        else:
            scope = "the 50 states + DC" + (" and Puerto Rico" if p.incl_pr else "")
        assumptions.append(f"{'“US”' if p.national else 'The total'} computed as the sum over {scope} (the state "
                           "rows; there are no nation rows)"
                           + ("; Puerto Rico excluded." if not p.incl_pr else "."))
        for m in measures:
            cov = m.coverage.get("state")
            if cov is not None:
                lacking = [s.name for s in cat.states if s.fips not in cov and not (s.abbr == "PR" and not p.incl_pr)
                           and not (s.abbr == "DC" and (p.fifty or p.excl_dc))]
                if lacking:
                    assumptions.append(f"{m.label}: no rows for {', '.join(lacking)}, so the figure covers the "
                                       "other states only.")
        _explain_measures(measures, assumptions, level="state", sql=sql, places=[])
        assumptions.extend(p.notes)
        hint: DisplayHint = "big" if len(measures) == 1 else "statrow"
        return Plan(sql=sql, assumptions=assumptions, display_hint=hint, planner=self.name)

    # ---------------------------------------------------------- a share of the parent (county of state, state of US)
    def _share_of_parent(self, p: Parse, cat: Catalog, m: Measure, parts: list[Place],
                         assumptions: list[str]) -> Plan:
        parts = [pl for pl in parts if pl.how != "ambiguous"] or parts
        for pl in parts:
            if pl.how == "ambiguous":
                raise Decline(f"“{pl.text}” exists in several states; name the state.",
                              [f"What share of {c.state.name} residents live in {c.name}?" for c in pl.candidates[:3]])
        col = f"pct_of_{'state' if parts[0].level == 'county' else 'us'}_{m.column}"
        if parts[0].level == "county":
            for pl in parts:
                if not cat.has(m, pl.geo_id):
                    raise Decline(no_rows(m, pl, cat), coverage_suggestions(m, pl, cat))
            where = place_filter(parts, "county", alias="c")
            if m.kind == "direct":
                code = m.numerator[0]
                sql = (f"SELECT c.county_name, c.state_name, ce.estimate AS {m.column}, "
                       f"se.estimate AS state_{m.column}, "
                       f"ROUND(100.0 * ce.estimate / NULLIF(se.estimate, 0), 1) AS {col} "
                       f"FROM public.geography c "
                       f"JOIN public.estimates ce ON ce.geo_id = c.geo_id AND ce.variable_code = '{code}' "
                       f"JOIN public.geography s ON s.level = 'state' AND s.state_fips = c.state_fips "
                       f"JOIN public.estimates se ON se.geo_id = s.geo_id AND se.variable_code = '{code}' "
                       f"WHERE c.level = 'county' AND {where}")
            else:
                part = m.sql_expression("ce")
                whole = m.sql_expression("se")
                sql = (f"SELECT c.county_name, c.state_name, "
                       f"(SELECT {part} FROM public.estimates ce WHERE ce.geo_id = c.geo_id) AS {m.column}, "
                       f"(SELECT {whole} FROM public.estimates se WHERE se.geo_id = s.geo_id) AS state_{m.column} "
                       f"FROM public.geography c "
                       f"JOIN public.geography s ON s.level = 'state' AND s.state_fips = c.state_fips "
                       f"WHERE c.level = 'county' AND {where}")
                sql = (f"SELECT county_name, state_name, {m.column}, state_{m.column}, "
                       f"ROUND(100.0 * {m.column} / NULLIF(state_{m.column}, 0), 1) AS {col} FROM ({sql}) AS x")
            assumptions.append(f"Share = the county's {nice_name(m)} / its state's ({m.formula}), "
                               f"both ACS {m.vintage}.")
        else:
            codes = code_filter(m.codes, alias="e")
            sql = (f"SELECT g.state_name, {m.sql_expression('e')} AS {m.column}, "
                   f"ROUND(100.0 * {m.sql_expression('e', rounded=False)} / NULLIF((SELECT {m.sql_expression('u')} "
                   f"FROM public.estimates u JOIN public.geography ug ON ug.geo_id = u.geo_id "
                   f"WHERE ug.level = 'state' AND ug.state_abbr <> 'PR'), 0), 1) AS {col} "
                   f"FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id "
                   f"WHERE g.level = 'state' AND {place_filter(parts, 'state')} AND {codes} GROUP BY g.state_name")
            assumptions.append(f"Share = the state's {nice_name(m)} / the sum over the 50 states + DC (Puerto Rico "
                               f"excluded; there are no nation rows), ACS {m.vintage}.")
        _explain_places(parts, assumptions)
        _explain_measures([m], assumptions, level=parts[0].level, sql=sql, places=parts, moe=False)
        assumptions.extend(p.notes)
        return Plan(sql=sql, assumptions=assumptions, display_hint="big" if len(parts) == 1 else "bar",
                    planner=self.name)

    # ---------------------------------------------------------- how many places meet a condition
    def _count_places(self, p: Parse, cat: Catalog, measures: list[Measure], assumptions: list[str]) -> Plan:
        level = p.level or "county"
        if not p.thresholds:
            raise Decline("counting places needs a condition (e.g. “more than 100,000 people”).",
                          topic_suggestions(p, cat))
        inner, _ = self._set_sql(p, cat, measures, assumptions, level, for_count=True)
        noun = "counties" if level == "county" else "states"
        sql = f"SELECT COUNT(*) AS {noun}_count FROM ({inner}) AS matching"
        assumptions.insert(0, f"Counting the {noun} that meet the condition.")
        assumptions.extend(p.notes)
        return Plan(sql=sql, assumptions=assumptions, display_hint="big", planner=self.name)

    def _counties_per_state(self, p: Parse, masked: str, assumptions: list[str]) -> Plan:
        """“Which state has the most counties?”, “number of counties in each state”: a count per state."""
        asc = bool(re.search(r"\b(fewest|least|smallest number|lowest number)\b", masked))
        n_match = re.search(r"\b(?:top|bottom|which|what|the)\s+(\d{1,2})\s+states\b", masked)
        if n_match and n_match.group(1) == "50" and p.fifty:  # “the 50 states” names the set, not a count
            n_match = None
        ranked = re.search(r"\b(most|fewest|least|largest number|greatest number|highest number|smallest number|"
                           r"lowest number)\b", masked)
        limit: int | None
        if n_match:
            limit = int(n_match.group(1))
        elif ranked and re.search(r"\bstate\b|\bhas\b", masked):  # one state asked for
            limit = 1
        else:
            limit = 10 if ranked else None
        where = ["g.level = 'county'"]
        if p.fifty:
            where.append("g.state_abbr NOT IN ('DC', 'PR')")
        sql = (f"SELECT g.state_name, COUNT(*) AS counties FROM public.geography g WHERE {' AND '.join(where)} "
               f"GROUP BY g.state_name ORDER BY counties {'ASC' if asc else 'DESC'}, g.state_name")
        if limit:
            sql += f" LIMIT {limit}"
        assumptions.append("Counting county-equivalents per state in the 2022+ ACS geography: parishes, boroughs, "
                           "census areas, independent cities, Connecticut's planning regions and Puerto Rico's "
                           "municipios count; DC is one county-equivalent.")
        if limit and not n_match and limit > 1:
            assumptions.append(f"No number given, so showing {limit}.")
        return Plan(sql=sql, assumptions=assumptions, display_hint="bar", planner=self.name)

    def _count_geographies(self, p: Parse, cat: Catalog, assumptions: list[str]) -> Plan:
        masked = mask(p.t, p.blocked)
        level = "county" if re.search(r"\b(counties|parishes|boroughs|county equivalents)\b", masked) else "state"
        states = [pl.state for pl in p.places if pl.level == "state"]
        where = [f"g.level = '{level}'"]
        if level == "county" and states:
            where.append(state_filter(states))
            assumptions.append("Counting county-equivalents (parishes, boroughs, census areas and independent "
                               "cities included), 2022+ ACS geography.")
        elif level == "county":
            where.append("g.state_abbr <> 'PR'")
            assumptions.append("Counting the county-equivalents of the 50 states + DC (the US convention here; "
                               "Puerto Rico's 78 municipios excluded), 2022+ ACS geography.")
        elif level == "state":
            where.append("g.state_abbr NOT IN ('DC', 'PR')" if p.fifty else "g.state_abbr <> 'PR'")
            assumptions.append("Counting state rows: the 50 states + DC (Puerto Rico excluded).")
        noun = "counties" if level == "county" else "states"
        sql = f"SELECT COUNT(*) AS {noun}_count FROM public.geography g WHERE {' AND '.join(where)}"
        return Plan(sql=sql, assumptions=assumptions, display_hint="big", planner=self.name)

    # ---------------------------------------------------------- top/bottom N, thresholds, lists of states or counties
    def _set_query(self, p: Parse, cat: Catalog, measures: list[Measure], assumptions: list[str]) -> Plan:
        level = p.level or "state"
        sql, hint = self._set_sql(p, cat, measures, assumptions, level)
        assumptions.extend(p.notes)
        return Plan(sql=sql, assumptions=assumptions, display_hint=hint, planner=self.name)

    def _set_total(self, p: Parse, cat: Catalog, measures: list[Measure], summable: list[Measure],
                   assumptions: list[str]) -> Plan:
        """“Total population of Texas counties over 1 million”: the set's counts added up (never medians or rates;
        a rate may only select the places)."""
        level = p.level or "state"
        inner, _ = self._set_sql(p, cat, measures, assumptions, level)
        noun = "counties" if level == "county" else "states"
        sums = [f"SUM({m.column}) AS total_{m.column}" for m in summable]
        sql = f"SELECT {', '.join(sums)}, COUNT(*) AS {noun} FROM ({inner}) AS matching"
        assumptions.insert(0, f"Total = the matching {noun} added together (counts summed); the number of {noun} "
                              "is shown too.")
        assumptions.extend(p.notes)
        return Plan(sql=sql, assumptions=assumptions, display_hint="big" if len(summable) == 1 else "statrow",
                    planner=self.name)

    def _set_sql(self, p: Parse, cat: Catalog, measures: list[Measure], assumptions: list[str], level: str,
                 for_count: bool = False) -> tuple[str, DisplayHint]:
        """The SQL of a set question and its display hint."""
        masked = mask(p.t, p.blocked)
        # the places that scope the set: "counties in Texas"; for states, the named states themselves
        state_places = [pl for pl in p.places if pl.level == "state"]
        county_places = [pl for pl in p.places if pl.level == "county"]
        if level == "county" and county_places and not state_places:
            level_places = county_places
        else:
            level_places = []
        scope_states = [pl.state for pl in state_places]
        if level == "state" and county_places:
            raise Decline("the question mixes a county with a ranking of states; ask about one level.",
                          generic_suggestions())

        # measures must exist at this level (and in the scoped states)
        for m in measures:
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
                        raise Decline(no_rows(m, Place("state", st, None, (0, 0)), cat),
                                      coverage_suggestions(m, Place("state", st, None, (0, 0)), cat))

        # "counties with more Hispanic than White residents", "a higher unemployment rate than poverty rate":
        # one measure against another in the same row is not a ranking by the first — decline, don't guess
        unbound = mask(masked, [th.span for th in p.thresholds])
        for than in re.finditer(r"\b(more|less|fewer|higher|lower|greater|larger|bigger|smaller|exceeds?|"
                                r"exceeding|outnumber\w*)\b[^.?;]*?(?<!rather )(?<!other )\bthan\b", unbound):
            rest = unbound[than.end():].lstrip()
            after = than.end() + (len(unbound) - than.end() - len(rest))
            if not rest or rest[0] in "_$0123456789" or any(pl.span[0] <= after < pl.span[1] for pl in p.places):
                continue  # a number or a named place: the threshold reader's business
            what = " ".join(p.tc[than.start():after].split() + p.tc[after:].split()[:4]).rstrip("?.!,;")
            noun = "county" if level == "county" else "state"
            raise Decline(f"comparing each {noun}'s value with another figure, not a number (“{what}”), is "
                          "beyond the offline planner; ask for both figures and compare them in the table.",
                          [f"Which 10 {'counties' if level == 'county' else 'states'} have the highest "
                           f"{nice_name(measures[0])}?"] if measures else generic_suggestions())
        where_parts = [f"g.level = '{level}'"]
        if scope_states:
            where_parts.append(state_filter(scope_states))
        if level_places:
            where_parts.append(place_filter(level_places, "county"))
        if level == "state" and not scope_states:
            excl = (["DC"] if (p.fifty or p.excl_dc) else []) + (["PR"] if (p.fifty or p.excl_pr_said) else [])
            if len(excl) == 1:
                where_parts.append(f"g.state_abbr <> '{excl[0]}'")
            elif excl:
                where_parts.append("g.state_abbr NOT IN ('DC', 'PR')")
        elif level == "county" and not scope_states and (p.fifty or p.excl_pr_said):
            where_parts.append("g.state_abbr <> 'PR'")
        if level == "county" and INDEPENDENT_CITY.search(masked) and not re.search(
                r"\b(counties|county|parishes|parish|boroughs|county equivalents)\b", masked):
            # "Virginia's independent cities": the county-equivalents named "… city", not the counties
            where_parts.append("g.county_name LIKE '% city'")
            assumptions.append("Independent cities only: the county-equivalents whose name ends in “city”.")

        # rank: which measure, which direction, how many
        direction, n, n_given = self._rank(p, masked, measures)
        rank_measure = self._rank_measure(p, masked, measures) if direction else None
        thresholds = [th for th in p.thresholds if th.measure is not None]
        conds = [threshold_sql(th) for th in thresholds]
        per_state = bool(direction and level == "county" and not for_count and PER_STATE.search(masked))
        if per_state and not n_given:
            n = 1

        place_cols = ["g.county_name", "g.state_name"] if level == "county" else ["g.state_name"]
        list_all = (direction is None and not thresholds and not level_places and not for_count
                    and not (level == "state" and scope_states))
        with_geo = list_all and len(measures) == 1
        group = ["g.geo_id", *place_cols] if (level == "county" or with_geo) else ["g.state_name"]
        cols = list(place_cols) + (["g.geo_id"] if with_geo else [])
        order: tuple[Measure, str] | None = None
        if direction:
            assert rank_measure is not None  # a ranked question has a measure to rank by
            order = (rank_measure, direction)
        elif not for_count:
            first = thresholds[0].measure if thresholds else measures[0]
            assert first is not None  # (thresholds without a measure were left out above)
            order = (first, "DESC")
        limit = n if direction else None
        if for_count:
            cols = ["g.geo_id"]
            group = ["g.geo_id"]
        if per_state:
            assert rank_measure is not None and direction is not None  # per state means ranked
            inner = select_sql(measures, cols, group, None, " AND ".join(where_parts), conds=conds,
                               window=(rank_measure, direction))
            names = ["county_name", "state_name"] + [c for m in measures for c in out_cols(m, inner)]
            sql = (f"SELECT {', '.join(names)} FROM ({inner}) AS ranked WHERE rank_in_state <= {n} "
                   f"ORDER BY state_name, rank_in_state")
            assumptions.append(f"Ranked within each state: the top {n} {'county' if n == 1 else 'counties'} of every "
                               "state.")
        else:
            sql = select_sql(measures, cols, group, None, " AND ".join(where_parts), conds=conds, order=order,
                             limit=limit, simple_cols=not for_count)

        # assumptions
        if level == "state" and not scope_states:
            if p.fifty:
                assumptions.append("“The 50 states”: DC and Puerto Rico left out.")
            elif p.excl_dc or p.excl_pr_said:
                left = join_words((["DC"] if p.excl_dc else []) + (["Puerto Rico"] if p.excl_pr_said else []))
                assumptions.append(f"States = every state-level row with data except {left}, as asked.")
            else:
                assumptions.append("States = every state-level row with data: the 50 states, DC and Puerto Rico "
                                   "(say “the 50 states” to leave DC and Puerto Rico out).")
        if level == "county":
            scope = f" in {join_words([s.name for s in scope_states])}" if scope_states else " nationwide"
            ct = not scope_states or any(s.abbr == "CT" for s in scope_states)
            assumptions.append(f"Counties{scope}, all county-equivalents included (parishes, boroughs, census areas, "
                               "independent cities" + ("; Connecticut as its planning regions)." if ct else ")."))
        if direction and not for_count:
            assert rank_measure is not None
            which = "highest" if direction == "DESC" else "lowest"
            if n_given:
                assumptions.append(f"Ranking by {nice_name(rank_measure)}, {which} first, top {n}.")
            else:
                assumptions.append(f"Ranking by {nice_name(rank_measure)}, {which} first; no number given, so "
                                   f"showing {n}.")
        for th in thresholds:
            assert th.measure is not None  # (thresholds without a measure were left out above)
            assumptions.append(f"“{th.text.strip()}” read as {nice_name(th.measure)} {describe_threshold(th)}.")
        _explain_places(level_places or [Place("state", s, None, (0, 0), "exact") for s in scope_states],
                        assumptions)
        _explain_measures(measures, assumptions, level=level, sql=sql, places=[], scope_states=scope_states)
        hint: DisplayHint
        if for_count:
            hint = "big"
        elif list_all:
            hint = "map" if len(measures) == 1 else "table"
        elif len(measures) == 1:
            hint = "bar"
        elif len(measures) == 2:
            hint = "grouped"
        else:
            hint = "table"
        return sql, hint

    def _rank(self, p: Parse, masked: str, measures: list[Measure]) -> tuple[str | None, int, bool]:
        txt = mask(masked, [th.span for th in p.thresholds])
        desc = DESC_WORDS.search(txt)
        asc = ASC_WORDS.search(txt)
        # "more" / "fewer" / "higher" are comparisons when a threshold follows them
        direction = None
        if desc and asc:
            direction = "DESC" if desc.start() < asc.start() else "ASC"
        elif desc:
            direction = "DESC"
        elif asc:
            direction = "ASC"
        # "top 5 least populous", "top 3 poorest": "top" only means "the first N"; the superlative after it
        # sets the order ("at least a bachelor's" is not one)
        if direction == "DESC" and desc is not None and desc.group(1) in ("top", "leading") and asc:
            later_asc = [a for a in ASC_WORDS.finditer(txt) if a.start() > desc.start()
                         and a.group(1) not in ("lower", "smaller", "fewer", "min")
                         and not re.search(r"\bat\s+$", txt[: a.start()])]
            later_desc = [d for d in DESC_WORDS.finditer(txt) if d.start() > desc.start()
                          and d.group(1) not in ("more", "higher", "larger", "bigger")]
            if later_asc and (not later_desc or later_asc[0].start() < later_desc[0].start()):
                direction, desc = "ASC", None
                asc = later_asc[0]
        chosen = desc if direction == "DESC" else asc
        word = chosen.group(1) if direction and chosen is not None else ""
        if word in ("more", "higher", "larger", "bigger", "fewer", "lower", "smaller") and not re.search(
                r"\b(which|what)\b.*\b(more|higher|larger|bigger|fewer|lower|smaller)\b", txt):
            direction = None
        if word in ("more", "fewer", "higher", "lower", "larger", "smaller", "bigger") and p.thresholds:
            direction = None
        if direction and measures:
            m = self._rank_measure(p, txt, measures)
            if m is not None and m.name in BAD_HIGH and word in ("best", "worst", "richest", "wealthiest", "poorest"):
                direction = "ASC" if word in ("best", "richest", "wealthiest") else "DESC"
            if m is not None and m.name == "gini_index" and re.search(
                    r"\b(most equal|least unequal|most equitable)\b", txt):
                direction = "ASC"
        n, given = None, False
        fifty = [m.span() for m in FIFTY.finditer(txt)] if not re.search(r"\b(top|bottom) (50|fifty)\b", txt) else []
        for rx in N_RES:
            for mt in rx.finditer(txt):
                if overlaps(mt.span("n"), fifty):
                    continue
                raw = mt.group("n")
                value = int(raw) if raw.isdigit() else NUM_WORDS.get(raw)
                if value is not None and 0 < value <= 1000:
                    n, given = value, True
                    break
            if given:
                break
        if direction is None and given and re.search(r"\b(top|bottom)\b", txt):
            direction = "ASC" if re.search(r"\bbottom\b", txt) else "DESC"
        if n is None and re.search(r"\b(states|counties|parishes|boroughs)\s+(has|is|ranks|had|was)\b|\bwhich one\b",
                                   txt):
            n = 1
        # "Of the 50 states, which has the lowest ...": a singular verb right after "which", no plural after it
        which_verb = re.search(r"\bwhich\s+(has|is|had|was|ranks|comes)\b", txt)
        if n is None and which_verb and not LEVEL_PLURAL.search(txt[which_verb.end():]):
            n = 1
        if n is None and LEVEL_SINGULAR.search(txt) and not LEVEL_PLURAL.search(txt):
            n = 1
        if n is None:
            singular = re.search(r"\b(which|what|the|name the|one)\s+(\w+\s+){0,3}?(state|county|parish)\b"
                                 r"(?!\s+(is|are)\s+in)", txt) \
                and not LEVEL_PLURAL.search(txt)
            n = 1 if singular else 10
        return direction, n, given

    def _rank_measure(self, p: Parse, masked: str, measures: list[Measure]) -> Measure:
        """The measure after the superlative ("highest poverty rate"), else the first one not used as a filter."""
        sup = SUPERLATIVE.search(masked)
        filters = {th.measure.name for th in p.thresholds if th.measure}
        strong = [m for m in p.mentions if not m.weak and m.measure in measures]
        if sup:
            after = [m for m in strong if m.start >= sup.start()]
            if after:
                return after[0].measure
        rest = [m for m in measures if m.name not in filters]
        return rest[0] if rest else measures[0]


# ---------------------------------------------------------------------------------------------------------------
# explanations


def _explain_places(places: Iterable[Place], assumptions: list[str]) -> None:
    for pl in places:
        if pl.level == "county" and pl.county is not None and pl.how in ("unique",):
            assumptions.append(f"“{pl.text}” is unique nationwide: {pl.label} (FIPS {pl.county.geo_id[-5:]}).")
        elif pl.level == "county" and pl.county is not None and pl.how in ("qualifier", "exact"):
            assumptions.append(f"Place: {pl.county.name}, {pl.state.name} (FIPS {pl.county.geo_id[-5:]}).")
        elif pl.level == "state" and pl.how == "abbr":
            assumptions.append(f"“{pl.text}” read as {pl.state.name}.")


def _explain_measures(measures: list[Measure], assumptions: list[str], *, level: str, sql: str,
                      places: Sequence[Place], scope_states: Sequence[State] = (), moe: bool = True) -> None:
    vintages = set()
    for m in measures:
        vintages.add(m.vintage)
        assumptions.append(f"{m.label} = {m.formula} (ACS {m.vintage} 5-year estimates).")
        if m.notes and (m.vintage == "2018-2022" or "Puerto Rico" in m.notes):
            relevant = True
            if places:
                relevant = any(pl.state.abbr in ("AK", "HI", "PR") for pl in places) or m.vintage == "2018-2022"
            if relevant:
                assumptions.append(f"Coverage: {m.notes}")
    if len(vintages) > 1:
        assumptions.append("The measures come from two ACS periods (2019-2023 and 2018-2022); each rate uses "
                           "numerator and denominator of one period.")
    if moe:
        if "margin_error" in sql:
            assumptions.append("Margin of error: the published 90% MOE is included where the extract has it "
                               "(columns ending in _moe).")
        elif any(level in m.moe_levels for m in measures):
            assumptions.append("Margins of error exist for these county rows but are left out of lists; ask "
                               "about one county to see them.")
        else:
            assumptions.append("Margins of error: not available for these rows in the shipped extract.")


__all__ = ["Catalog", "OfflinePlanner", "load_catalog"]
