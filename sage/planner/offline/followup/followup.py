"""Follow-up questions: "and Williamson County?", "same for poverty", "top 20 instead", "only Texas", "as a map",
"which of those has the lowest unemployment rate?" — read as edits of the previous question's frame.

A follow-up names only what changes; everything else is kept from the frame it follows (:class:`~.frame.Query`).
What it may change: the places (swap, or add one to compare), the measure, the set (a state to keep to, DC or
Puerto Rico in or out, the 50 states), N and the direction of a ranking, the display, or the set itself — "of
those" selects among the places of the previous answer.  A question that stands on its own (it names a measure
and places of its own, and does not start like a follow-up) is a new question, not an edit.  A follow-up this
reader cannot map onto the previous frame is declined with suggestions, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ....census.semantic import Measure, load_gaps
from ....text import normalize
from ....types import Chunk, DisplayHint
from ...edits import Edit, EditKind
from ...edits import EditKind as K
from ..catalog import Catalog, counties_named
from ..declines import Decline
from ..frame.frame import Condition, GeoSet, Op, Query, Rank
from ..read.bare_names import find_unknown_places
from ..read.localities import LEVEL_NAMES, places_with_figures
from ..read.measures import find_measures, people_changed
from ..read.parsed import Parse, Place
from ..read.parser import MODIFIER, in_state, split_context
from ..read.periods import CHANGE_WORDS, check_loaded, courtesy_words, dollar_words
from ..read.places import find_places
from ..read.ranking import read_rank
from ..read.remarks import drop_remarks
from ..read.scope import read_scope
from ..read.thresholds import find_thresholds
from ..read.units import unit_edit
from ..read.vocabulary import FIFTY, INCORPORATED, LEVEL_PLURAL, join_words, mask, nice_name
from .followup_time import PERCENT, time_edit

#: how a follow-up starts ("and ...?", "what about ...", "same for ...", "now ...")
_START = re.compile(
    r"^\s*(and|but|also|plus|what about|how about|what of|same|the same|now|then|instead|only|just|ok|okay|"
    r"so|compare (that|it|this|them|those)|vs|versus|add|show (it|that|this|them|those)|map (it|that|this|them)|"
    r"(as|on|in) a|which of (those|these|them)|of (those|these|them)|among (those|these|them)|"
    r"what if|make it|switch to|change (it|that) to|do the same|do it for|for)\b")
#: words that point back at the previous answer
_BACK = re.compile(r"\b(that|those|these|them|it|same|instead|too|as well|previous|last one|above)\b")
_AMONG = re.compile(
    r"\b(which|what|who)\s+(one\s+)?of\s+(those|these|them|the above|the (two|three|four|five|six|seven|eight|nine|"
    r"ten|eleven|twelve|fifteen|twenty|\d{1,2})|both)\b"
    r"|\b(of|among|from)\s+"
    r"(those|these|them|the above|that list)\b|\b(in|for|across)\s+(those|these)\s+(((two|three|four|five|six|"
    r"seven|eight|nine|ten|\d+)(\s+(states|counties|cities|places|towns))?)|states|counties|cities|"
    r"places|towns)\b(?!\s+of\b)|\b(in|for)\s+(those|these)\s*[?.!]*\s*$|\beach of (those|these|them)\b")
_ADD = re.compile(r"\b(compare (that|it|this|them|those) (to|with|against)|compared? (to|with|against)|versus|vs|"
                  r"add|plus|and also|along with|next to|alongside|side by side|stack up)\b|\b(too|as well)\s*\??$")
_DISPLAY: list[tuple[re.Pattern[str], DisplayHint]] = [
    (re.compile(r"\b(map|choropleth)\b"), "map"),
    (re.compile(r"\b(bar chart|bar graph|bars|chart|graph)\b"), "bar"),
    (re.compile(r"\b(table|list it|as a list|in a list|raw numbers|the numbers)\b"), "table"),
]
_PLACE_WORDS = re.compile(r"\b(cities|towns|villages|places|cdps)\b")
#: "add median rent", "the poverty rate too", "also the median age": a measure beside the ones shown
_ADD_MEASURE = re.compile(r"\b(add|adding|plus|also|along with|alongside|as well|too|include|including|beside|next to|"
                          r"with)\b")
#: "drop rent", "without the rent", "remove median age": a measure taken out
_DROP = re.compile(r"\b(drop|remove|without|leave out|take out|get rid of|no more|lose the|skip|minus)\b")
#: a place the turn says is not asked ("the whole country, not just georgia")
_NEGATED = re.compile(r"\b(not|no|except|excluding|other than|instead of)\s+(just\s+|only\s+|the\s+|in\s+)*$")
#: "just cities please, not CDPs": incorporated places only
_CITIES_NOT_CDPS = re.compile(r"\b(not|no|without|excluding|drop(ping)?|minus)\s+(the\s+)?(cdps|census designated "
                              r"places)\b|\b(just|only) (the )?(incorporated )?cities\b")
#: a reaction before the ask ("Oh interesting, Pitkin County made the list!", "Perfect.", "Thanks!")
_REACTION = re.compile(r"\W*(most helpful|very helpful|much appreciated|oh|ah|aha|wow|hmm+|ok|okay|great|thanks|"
                       r"thank you|perfect|lovely|cool|nice|interesting|"
                       r"good|hi|hello|hey|sorry|yes|yeah|no|awesome|neat|huh)\b", re.IGNORECASE)

#: "which of the two is higher": the comparative that picks one
_COMPARATIVE = re.compile(r"\b(higher|lower|more|less|fewer|bigger|smaller|larger|greater|cheaper|pricier|older|"
                          r"younger|richer|poorer|faster|slower)\b")
_LOWER_WORDS = frozenset({"lower", "less", "fewer", "smaller", "cheaper", "younger", "poorer", "slower"})
#: a question of its own ("how many people live in Boise?")
_QUESTION = re.compile(r"^\W*(and\s+)?(how|what|which|whats|is|are|does|do)\b")
_NATIONWIDE = re.compile(r"\b(overall|whole country|entire country|nationwide|national|nationally|all of the us|"
                         r"across the us|"
                         r"the whole us|all states|every state|the us|us wide|countrywide|all counties)\b")
_ONLY = re.compile(r"\b(only|just|limit (it )?to|restrict (it )?to|keep (it )?to|within|in)\b")


def is_followup(question: str) -> bool:
    """Whether ``question`` starts or reads like a follow-up (it may still turn out to be a new question)."""
    t = normalize(question, lower=True)
    return bool(_START.search(t) or _AMONG.search(t) or len(t.split()) <= 4 or _BACK.search(t))


def read_followup(question: str, prior: Query, cat: Catalog, chunks: Sequence[Chunk] = (),
                  before: Query | None = None, seen: list[Parse] | None = None,
                  edits: list[Edit] | None = None) -> Query | None:
    """The previous frame edited as ``question`` asks, or None when ``question`` stands on its own.  ``before`` is
    the frame before ``prior`` (for "per capita income for both" after "and LA County?").  ``seen`` receives the
    reading of the question's words, for the word ledger (:mod:`..ledger`); ``edits`` the edits applied, each one
    of the closed set (:class:`~sage.planner.edits.EditKind`) with the words that named it.

    Raises :class:`Decline` for a follow-up that cannot be mapped onto ``prior``."""
    applied: list[Edit] = []
    # "and Missoula? bet its way smaller lol": a remark around a follow-up, as around a question in full
    question, remarks = drop_remarks(question, cat, least=1)
    q = _read(question, prior, cat, chunks, before, seen, applied)
    if edits is not None:
        edits[:] = list(dict.fromkeys(applied)) if q is not None else []
    if q is not None and remarks:
        q = q.edit(notes=(*q.notes, *(f"Read “{r}” as a remark, not part of the question." for r in remarks)))
    return q


def _names_places(text: str, cat: Catalog) -> bool:
    """Whether ``text`` names a county or a Census place (a state alone is often a reaction's: "Wow, Texas!")."""
    tc = normalize(text)
    p = Parse(question=text, tc=tc, t=tc.lower())
    try:
        find_places(p, cat)
    except Decline:
        return True  # a name it could not place is a name all the same
    return any(pl.level != "state" for pl in p.places)


def _read(question: str, prior: Query, cat: Catalog, chunks: Sequence[Chunk], before: Query | None,
          seen: list[Parse] | None, edits: list[Edit]) -> Query | None:
    # "Oh interesting, Pitkin County made the list! Could you narrow that down to just Colorado?": the sentences
    # before the ask are a reaction, as before a question in full (their words are context in the ledger)
    context, ask = split_context(question)
    if context and not re.search(r"[?]", context) and (_REACTION.match(context) or not MODIFIER.search(context)) \
            and (_REACTION.match(context) or not _names_places(context, cat)):
        # ("Our service area covers three counties in southeast Ohio (Athens, Meigs, and Vinton). What is the
        # uninsured rate in each of the three?": a scene that names its own places is no reaction to the answer)
        question = ask
    # "Huh, two of those are islands. Could you add their median age too?": the sentences before the last question
    # are a reaction or an aside when they ask nothing and change nothing (their "those" points at nothing)
    pieces = re.split(r"(?<=[.!?])\s+(?=[A-Za-z\"“(])", " ".join(question.split()))
    asks = [i for i, x in enumerate(pieces) if "?" in x] or [len(pieces) - 1]
    if len(pieces) > 1 and asks[-1] > 0:
        lead = " ".join(pieces[:asks[-1]])
        if "?" not in lead and (not MODIFIER.search(lead) or _REACTION.match(lead)) and \
                (_REACTION.match(lead) or not _names_places(lead, cat)):
            question = " ".join(pieces[asks[-1]:])
    # "OK, widen it for a bar chart: the 10 Washington counties with the highest median home value": an aside before
    # a colon that changes no number, set or measure leaves the question after it ("OK" is no Oklahoma here)
    # ("Benton County vs Washington County, Arkansas: is the gap ... real?" names its places there: no aside)
    aside = re.match(r"^([^:?]{1,60}):\s+(\S.*)$", question)
    if aside and not re.search(r"\b(not|no|except|excluding|without|only|just|top|bottom|percent\w*|share|rate|per|"
                               r"each|total|in|for the|of)\b|\d", aside.group(1).lower().replace("for a", "")) \
            and not _names_places(aside.group(1), cat):
        question = aside.group(2)
    question = re.sub(r"^\W*(ok|okay|oh|ah|hmm+|huh|wow|so|well|right|alright|great|cool|nice|thanks|thank you)"
                      r"\s*[,!.]\s+", "", question, flags=re.IGNORECASE)
    tc = normalize(question)
    p = Parse(question=question, tc=tc, t=tc.lower())
    p.blocked.extend(courtesy_words(p.t))
    if seen is not None:
        seen[:] = [p]
    read_scope(p, cat)
    try:
        find_places(p, cat)
        # the names of the places already in the conversation ("swap in Howard County for Montgomery") are theirs
        p.blocked.extend(mt.span() for pl in prior.geo.places for mt in re.finditer(
            r"\b" + re.escape(pl.label.split(",")[0].split()[0].lower()) + r"\b", p.t))
        find_unknown_places(p, cat)  # a city named bare ("and Tulsa?"): a place like any other, or asked which
    except Decline as exc:
        home = {pl.state.fips: pl.state for pl in prior.geo.places} | {st.fips: st for st in prior.geo.within}
        beside = _beside_cities(question, prior, cat, seen) if exc.kind == "ambiguous" else None
        if beside is not None:
            p = beside
        elif exc.kind == "ambiguous" and len(home) == 1:
            # "how many people live in Phoenix right now?" in a conversation about Arizona: the one there
            (state,) = home.values()
            tc = normalize(in_state(question, state))
            p = Parse(question=question, tc=tc, t=tc.lower())
            if seen is not None:
                seen[:] = [p]
            read_scope(p, cat)
            find_places(p, cat)
            find_unknown_places(p, cat)
        elif not _START.search(p.t) or exc.kind == "ambiguous":
            raise
    p.places = [pl for pl in p.places if not any(a <= pl.span[0] < b for a, b in p.scope_spans)]
    find_measures(p, cat, chunks)
    try:
        find_thresholds(p, cat)
    except Decline:
        p.thresholds = []
        if prior.measures and not p.mentions:
            # "which states are under 85%?": a limit on the measure of the answer before
            from ....census.mentions import Mention

            m0 = prior.measures[0]
            bound = replace(p, mentions=[Mention(m0, len(p.t), len(p.t), m0.name)], thresholds=[])
            try:
                find_thresholds(bound, cat)
                p.thresholds = [th for th in bound.thresholds if th.measure in (None, m0)]
            except Decline:
                pass
    measures = [m.measure for m in p.strong()]
    if not measures and p.places and p.mentions and _QUESTION.search(p.t):
        # "how many people actually live in Boise itself?": a question of its own, with its own measure
        measures = list(dict.fromkeys(m.measure for m in p.mentions))
    if not measures:  # "and what is the average commute time in those states?": a topic the data lacks
        gap = next(((g, mt) for g in load_gaps() if not g.lifted_by(measures)
                    for mt in [g.find(mask(p.t, p.blocked + dollar_words(p.t)), [])] if mt), None)
        if gap is not None:
            raise Decline(f"the shipped census extract has no data on {gap[0].topic} (asked: “{gap[1].group(0)}”).",
                          _suggest(prior))
    if not measures and (people := people_changed(mask(p.t, p.blocked), cat)) is not None:
        measures = [people]  # "which 5 Texas counties added the most people ...": population, named
    # "as a share of total pop?": the population named is the whole of a share, not a measure asked for
    if re.search(r"\b(share|percent\w*|proportion|%) of (the )?(total |overall )?(pop|population|people|residents|"
                 r"everyone)\b", p.t):
        measures = [m for m in measures if m.name != "population"]
    # "what about TX-10?", "and ZIP 78702 too?": a unit named by its code, for the same measures
    edit = unit_edit(p, cat, prior, measures, bool(_ADD.search(p.t)))
    if edit is not None:
        edits.append(Edit(K.ADD_PLACES if _ADD.search(p.t) else K.SWAP_PLACES, _said(p, _CODE)))
        return edit
    starts = bool(_START.search(p.t))
    among = _AMONG.search(p.t)
    if among and _BOTH.search(p.t) and not re.search(r"\bwhich\b", p.t) and len(prior.geo.places) == 1 and \
            before is not None and \
            len(before.geo.places) == 1 and before.geo.places[0].geo_id != prior.geo.places[0].geo_id:
        among = None  # "rent in both of them": the place of this turn and of the one before (below)
    if among and _DROP.search(p.t) and len(prior.measures) > 1 and set(m.measure for m in p.mentions) & \
            set(prior.measures):
        among = None  # "remove the internet column; ... only the income for these ten": a column dropped
    shown_rows = len(prior.geo.places) > 1 or prior.geo.is_set or prior.geo.among is not None
    if among is None and shown_rows and not p.places and not measures and prior.op is not Op.CHANGE and \
            _WHICH_ONE.search(p.t) and (_COMPARATIVE.search(p.t) or _SUPERLATIVE_ANY.search(p.t)):
        # "which is priciest?", "which is highest?" after several rows: the one of them (EDIT: pick)
        among = _WHICH_ONE.search(p.t)
    level_word = LEVEL_PLURAL.search(mask(p.t, p.blocked)) or _PLACE_WORDS.search(mask(p.t, p.blocked)) or \
        _EVERY.search(mask(p.t, p.blocked))
    if level_word and re.search(r"\b(those|these|the|both|them|same)\s+(\w+\s+)?$", p.t[:level_word.start()]):
        level_word = None  # "in those two cities": the places of the previous answer, not a new set
    national = _US_WHOLE.search(mask(p.t, p.blocked))
    standalone = measures and (p.places or level_word or national) and not starts and not among and \
        not _BACK.search(p.t)
    if standalone:
        return None
    if national and not p.places and not level_word and not among and prior.measures and \
            prior.op is Op.VALUE and prior.geo.places and not prior.geo.is_set:
        # "what is it for the country as a whole?": the same measures for the US (EDIT: widen)
        from ..frame.intent import build_query
        from ..read.parser import parse_question

        asked = measures or list(prior.measures)
        whole = build_query(parse_question(f"{join_words([nice_name(m) for m in asked])} in the United States",
                                           chunks, cat), cat)
        edits.append(Edit(K.WIDEN, _said(p, _US_WHOLE)))
        return whole

    q = prior
    changed = edits
    if prior.op is Op.CHANGE and _NOW.search(p.t) and not CHANGE_WORDS.search(p.t):
        # "then just tell me how many people live there right now": the latest value, not the change
        q = Query(Op.VALUE if prior.geo.places else Op.LIST, prior.measures, replace(prior.geo, among=None))
        changed.append(Edit(K.PERIOD, _said(p, _NOW)))
    masked = mask(p.t, p.blocked)

    # ---- "which of those has the lowest unemployment rate?": a ranking among the previous answer's places;
    # "of those, which have a poverty rate above 35%?": the ones that also meet a condition
    new_measure = bool(measures) and not set(measures) <= set(prior.measures)
    if among and prior.op is Op.CHANGE and prior.change is not None and not new_measure:
        # "did any of them lose population?", "which of those grew fastest?": the same change, kept or ranked
        lose = re.search(r"\b(lose|lost|losing|decline\w*|shr[aiu]nk\w*|fell|drop\w*|decrease\w*)\b", p.t)
        gain = re.search(r"\b(gain\w*|grew|grow\w*|add\w*|increase\w*|rose|rise)\b", p.t)
        of_two = _OF_N.search(masked)
        direction, n, n_given = read_rank(p, mask(masked, [of_two.span()] if of_two else []), list(prior.measures))
        comparative = _COMPARATIVE.search(masked)
        if not direction and comparative:  # "which of the two grew faster?": the one
            direction = "ASC" if comparative.group(1) in _LOWER_WORDS else "DESC"
            n, n_given = 1, False
        # the same places: those the previous change chose among (its geo keeps them), ranked or kept anew
        # "which of them ...?" after a top 5: among those five, not the whole set again
        shown = (replace(prior.geo, among=prior) if (prior.rank is not None or prior.change.keep)
                 and prior.geo.is_set and prior.geo.among is None else prior.geo)
        if direction:
            order = "pct_change" if PERCENT.search(masked) else prior.change.by
            if lose and not gain and direction == "DESC" and re.search(r"\b(most|biggest|largest|greatest|fastest)\b",
                                                                       masked):
                direction = "ASC"  # "which of those lost the most?": the most negative change first
            edits.append(Edit(K.PICK, _said(p, _AMONG, _COMPARATIVE, _RANK_WORDS)))
            return prior.edit(rank=Rank(prior.measures[0], direction == "DESC", n if n_given else 1, n_given),
                              geo=shown, change=replace(prior.change, by=order, keep=""))
        if lose or gain:
            edits.append(Edit(K.NARROW, _said(p, _AMONG, _LOSE_GAIN)))
            return prior.edit(rank=None, geo=shown, change=replace(prior.change, keep="loss" if lose else "gain"))
    if among:
        if prior.op not in (Op.VALUE, Op.RANK, Op.LIST, Op.CHANGE) or not (prior.geo.places or prior.geo.is_set) or (
                prior.op is Op.CHANGE and (prior.sums or (prior.change is not None and prior.change.count))):
            raise _cannot(question, prior, "the previous answer has no list of places to choose among")
        of_k = _OF_N.search(masked) or re.search(r"\b(those|these|the) (two|three|four|five|six|seven|eight|nine|ten|"
                                                 r"\d{1,2})\b", masked)
        if of_k and prior.rank is not None and prior.rank.n == 1 and prior.geo.among is not None and \
                of_k.group(2) not in ("one", "1"):
            prior = prior.geo.among  # "what about rent in those three?" after "which is cheapest?": the three
        level = prior.geo.level if prior.geo.level != "mixed" else "county"
        states_named = tuple(pl.state for pl in p.places if pl.level == "state")
        geo = GeoSet(level=level, among=prior, within=states_named if level in ("county", "place") else ())
        if states_named and level in ("county", "place"):  # "which of those are in Texas?" (EDIT: narrow)
            edits.append(Edit(K.NARROW, _place_words(p, [pl for pl in p.places if pl.level == "state"])))
        note = (f"Among the places of the previous answer ({_short(prior)}).",)
        conditions = tuple(Condition(th.measure or prior.measures[0], th.op, th.value, th.value2, th.ref, None,
                                     th.text, th.unit) for th in p.thresholds if th.measure is not None
                           or (prior.measures and th.unit != "percent"))
        if not measures and re.search(r"\b(most|fewest|least|more|fewer) (people|residents|population)\b|"
                                      r"\bmost populous\b|\blargest population\b", masked):
            # "which of those has the most people?": by population, whatever was shown
            measures = [m for m in cat.measures if m.name == "population"][:1]
        chosen = tuple(dict.fromkeys([*measures, *(c.measure for c in conditions)])) or prior.measures
        lacking = [m for m in chosen if not m.has_rows(level)]
        if lacking:  # "the median rent in these two cities": places have population and housing units only
            what = join_words([nice_name(m) for m in lacking])
            where = LEVEL_NAMES.get(level, LEVEL_PLURAL_NAMES.get(level, level))
            raise Decline(f"the data has no {what} for {where} (for Census places: population and housing units "
                          "only); nothing else is shown instead.", _suggest(prior))
        timed = time_edit(p, prior, cat, list(chosen[:1]), masked)
        if timed is not None:  # "of those, which grew fastest in percent since 2014-2018?"
            _, n1, n1_given = read_rank(p, masked, list(chosen[:1]))
            if timed.rank is not None and not n1_given:  # "which of those ...": the one
                timed = timed.edit(rank=replace(timed.rank, n=1))
            edits += [Edit(K.PICK, _said(p, _AMONG, _RANK_WORDS)), Edit(K.PERIOD, _said(p, _TIME_WORDS))]
            return timed.edit(geo=geo, notes=(*timed.notes, *note))
        # "which of the 2 is higher": the 2 counts the places chosen among, it is no N
        of_n = _OF_N.search(masked)
        masked_rank = mask(masked, [th.span for th in p.thresholds] + ([of_n.span()] if of_n else []))
        direction, n, n_given = read_rank(p, masked_rank, list(chosen))
        comparative = _COMPARATIVE.search(masked_rank)
        if not direction and comparative:
            # "which of the 2 is higher?", "which of these two is cheaper?": the one (EDIT: pick from the answer)
            direction = "ASC" if comparative.group(1) in _LOWER_WORDS else "DESC"
            n, n_given = 1, False
        if not direction:  # "how many housing units does each of those have?": every one of them, no ranking
            if conditions:
                edits.append(Edit(K.NARROW, _said(p, _AMONG, *[th.span for th in p.thresholds])))
            if measures:
                edits.append(Edit(K.SWAP_MEASURE, _said(p, *_measure_words(p, measures))))
            return Query(Op.LIST, chosen, geo, conditions=conditions, display=_display(p.t), notes=note)
        by = chosen[0]
        if not measures and _COST.search(masked_rank):  # "which is priciest?": by what it costs
            by = next((m for m in chosen if "home_value" in m.name or "rent" in m.name), by)
            chosen = (by, *[m for m in chosen if m is not by])
        if direction is None:
            direction = "DESC"
        edits.append(Edit(K.PICK, _said(p, _AMONG, _COMPARATIVE, _RANK_WORDS)))
        return Query(Op.RANK, chosen, geo, rank=Rank(by, direction == "DESC", n if n_given else 1, n_given),
                     conditions=conditions, display=_display(p.t), notes=note)

    # ---- the measure
    drop = _DROP.search(p.t)
    dropped: list[tuple[int, int]] = []
    in_clause = _drop_clause_measures(p, drop, prior) if drop else []
    if (measures or in_clause) and drop and (set(measures) | set(in_clause)) & set(prior.measures) and \
            len(prior.measures) > 1:
        # "drop rent": the same answer without that measure (EDIT: drop measure); "drop the rent, just income":
        # only what the drop clause names goes, what "just"/"only"/"keep" names stays
        gone = in_clause or measures
        remaining = tuple(m for m in prior.measures if m not in gone)
        if not remaining:
            raise _cannot(question, prior, "that would leave no measure to show")
        if prior.rank is not None and prior.rank.by not in remaining:
            # the rows are chosen by that measure: its column stays (without it they would look unranked), the
            # rows stay the same, and the card says so
            remaining = (prior.rank.by, *remaining)
            q = q.edit(notes=(*q.notes, f"{nice_name(prior.rank.by).capitalize()} stays in the table: the rows are "
                                        f"ranked by it (ask “rank them by {nice_name(remaining[1])}” for another "
                                        "ranking)."))
        rank = prior.rank
        q = q.edit(measures=remaining, rank=rank)
        # "drop median age": the drop is of a column, not a loss over time
        dropped = [drop.span(), *_measure_words(p, measures)]
        masked = mask(masked, dropped)
        changed.append(Edit(K.DROP_MEASURE, _said(p, _DROP, *_measure_words(p, measures))))
        measures = []
    add_measure = bool(measures) and bool(_ADD_MEASURE.search(p.t)) and not set(measures) <= set(prior.measures)
    if measures:
        old = set(prior.measures)
        kept_conditions = tuple(c for c in prior.conditions)
        # the measures asked, and those the kept limits are on (shown beside them, as a question in full does);
        # "add median rent", "the poverty rate too": beside the measures shown, for the same places (EDIT: add
        # measure) — a ranking stays ranked by what it was ranked by, so its rows stay the same
        asked = [*prior.measures, *measures] if add_measure else measures
        new = tuple(dict.fromkeys([*asked, *(c.measure for c in kept_conditions)]))
        rank = prior.rank
        picked = rank is not None and rank.n == 1 and not add_measure and bool(_THE_ONE.search(p.t)) and \
            rank.by is not None and rank.by not in new and read_rank(p, masked, list(new))[0] is None
        level = prior.geo.level if prior.geo.level != "mixed" else "county"
        lacking = [m for m in measures if level in ("state", "county", "place") and not m.has_rows(level)]
        if lacking and not p.places and not level_word and prior.op in (Op.VALUE, Op.RANK, Op.LIST) and \
                prior.geo.units == ():
            # "and its median rent?" about a city, "their median age" about states: figures the data has not
            what = join_words([nice_name(m) for m in lacking])
            where = LEVEL_NAMES.get(level, LEVEL_PLURAL_NAMES.get(level, level))
            raise Decline(f"the data has no {what} for {where}; nothing else is shown instead.", _suggest(prior))
        if picked and rank is not None:
            # "and what is its median age?" after "which of those has the highest unemployment rate?": the same one
            # place, chosen as before, with the measure asked beside what chose it
            new = (*new, rank.by)
            q = q.edit(notes=(*q.notes, f"The same place as the answer before: chosen by {nice_name(rank.by)}."))
        elif rank is not None and rank.by in old and not add_measure:
            rank = replace(rank, by=new[0])
        q = q.edit(measures=new, rank=rank, conditions=kept_conditions,
                   sums=tuple(m for m in new if m.additive) if q.op is Op.TOTAL else q.sums)
        if q.change is not None:
            # "and median home value?" after a change of income: a measure with no earlier period is no change
            check_loaded(p, cat, list(measures), q.periods[0])
            # "and population?" after a change in dollars: people are not put in 2023 dollars (and a change of
            # dollars after one of people is, as a question in full would be)
            dollars = (q.change.dollars or "real") if new[0].unit == "dollars" else ""
            if dollars != q.change.dollars:
                dollar_notes = tuple(n for n in q.notes if not n.startswith("Dollars"))
                if dollars:
                    dollar_notes += ("Dollars: the earlier period's values are put in the later period's dollars "
                                     "with the CPI-U-RS, so the change is a real change (say “nominal” for dollars as "
                                     "published).",)
                q = q.edit(change=replace(q.change, dollars=dollars), notes=dollar_notes)
        changed.append(Edit(K.ADD_MEASURE if add_measure else K.SWAP_MEASURE, _said(p, *_measure_words(p, measures))))

    # ---- a set named by a level word: "now show the same for all Texas counties"
    places = _resolve_ambiguous([pl for pl in p.places if not _NEGATED.search(p.t[:pl.span[0]])], prior)
    if level_word and not among:
        word = level_word.group(0).split()[-1]
        level = "state" if word in ("states", "state") else (
            "place" if _PLACE_WORDS.fullmatch(word) else "county")
        states = tuple(pl.state for pl in places if pl.level == "state")
        of_that = None
        if level in ("county", "place") and not states and _THAT_STATE.search(p.t) and prior.geo.level == "state":
            # "the 3 lowest counties inside that state": the state of the previous answer
            if len(prior.geo.places) == 1:
                states = (prior.geo.places[0].state,)
            elif prior.op is Op.RANK and prior.rank is not None and prior.rank.n == 1 and prior.geo.is_set:
                of_that = prior
            else:
                raise _cannot(question, prior, "the previous answer has several states; name the one you mean")
        same_set = prior.geo.is_set and prior.geo.level == level and \
            prior.op in (Op.RANK, Op.LIST, Op.COUNT, Op.TOTAL) and \
            not (prior.op is Op.TOTAL and re.search(r"\bwhich\b", p.t))
        if q.op is Op.CHANGE:  # "and which Texas counties lost the most?": the same change over the set named
            if level == "place":
                raise _cannot(question, prior, "Census places are loaded for the latest period only, so no change can "
                                               "be shown for them")
            within = states if level == "county" else ()
            if not (prior.geo.is_set and prior.geo.level == level and prior.geo.among is None
                    and (not within or set(within) == set(prior.geo.within))):
                q = q.edit(geo=GeoSet(level=level, within=within or (prior.geo.within if prior.geo.is_set
                                                                      and level == prior.geo.level else ()),
                                      exclude=prior.geo.exclude if prior.geo.is_set else frozenset()))
                changed.append(Edit(_narrow_or_widen(prior, q), _said(p, level_word)))
            places = [pl for pl in places if pl.level != "state"]
        elif same_set:  # "just the 50 states please": the same question over a narrower set
            if states and level in ("county", "place"):
                q = q.edit(geo=replace(q.geo, within=states))
                places = [pl for pl in places if pl.level != "state"]
                changed.append(Edit(_narrow_or_widen(prior, q), _said(p, level_word)))
        elif level in ("county", "place") or not states:
            # "which of its counties have a poverty rate above 30%?": the ones that meet it, not the old top N
            listed = q.op not in (Op.RANK,) or (bool(p.thresholds)
                                                and read_rank(p, masked, list(q.measures))[0] is None)
            q = q.edit(op=Op.LIST if listed else q.op, conditions=(), with_us=False, per_n=None,
                       geo=GeoSet(level=level, within=states if level in ("county", "place") else (),
                                  exclude=prior.geo.exclude if prior.geo.is_set else frozenset(),
                                  in_states_of=of_that),
                       rank=replace(q.rank, by=q.measures[0]) if q.rank and not listed else None)
            places = [pl for pl in places if pl.level != "state"]
            changed.append(Edit(_narrow_or_widen(prior, q), _said(p, level_word)))

    # ---- "just incorporated cities, please, no CDPs": the same set, of one kind of place (EDIT: narrow)
    if q.geo.level == "place" and q.geo.is_set and (INCORPORATED.search(p.t) or _CITIES_NOT_CDPS.search(p.t)):
        if q.geo.place_kind != "incorporated":
            q = q.edit(geo=replace(q.geo, place_kind="incorporated"))
            changed.append(Edit(_narrow_or_widen(prior, q), _said(p, level_word)))

    # ---- "whole country", "nationwide": the set no longer kept to a state
    if _NATIONWIDE.search(masked) and q.geo.is_set and (q.geo.within or q.geo.among is not None):
        # "and the 3 lowest states overall?" after "top 3 of those": all of them again, not the ones shown
        q = q.edit(geo=replace(q.geo, within=(), among=None),
                   conditions=() if q.geo.among is not None else q.conditions)
        changed.append(Edit(K.WIDEN, _said(p, _NATIONWIDE)))

    # ---- "per capita income for both": the place of the turn before joins the previous one
    if not places and _BOTH.search(p.t) and len(q.geo.places) == 1 and before is not None and \
            len(before.geo.places) == 1 and before.geo.places[0].geo_id != q.geo.places[0].geo_id:
        q = q.edit(geo=replace(q.geo, places=(before.geo.places[0], q.geo.places[0]),
                               level=q.geo.level if before.geo.places[0].level == q.geo.level else "mixed"))
        changed.append(Edit(K.ADD_PLACES, _said(p, _BOTH)))
        pick = re.search(r"\bwhich\b.*\b(faster|fastest|more|most|bigger|biggest|larger|largest|slower|slowest|"
                         r"less|least|smaller|smallest)\b", p.t)
        if pick and q.op is Op.CHANGE and q.change is not None:  # "which of the two grew faster?": the one
            down = pick.group(1) in ("slower", "slowest", "less", "least", "smaller", "smallest")
            q = q.edit(rank=Rank(q.measures[0], not down, 1),
                       change=replace(q.change, by="pct_change" if PERCENT.search(p.t) else q.change.by))

    # ---- a bare name of a county in the conversation's state ("fairfax county?" then "arlington")
    if not places and not measures and not p.thresholds:
        places = _bare_counties(p, prior, cat)
    # ---- "and naperville?" after Chicago: a city named bare, in the conversation's one state
    if not places and not measures and not p.thresholds and not level_word:
        places = _in_home_state(question, prior, cat)

    # ---- "the county" after a city: the county-equivalent of the same area, or the county of its name
    if not places and re.search(r"\b(the|its|that) county\b", p.t) and prior.geo.places and all(
            pl.level == "place" and pl.locality is not None for pl in prior.geo.places):
        for pl in prior.geo.places:
            assert pl.locality is not None
            c = cat.same_area_county(pl.locality) or pl.namesake
            if c is None:
                raise _cannot(question, prior, f"{pl.locality.label} is not one county (a city can spread over "
                                                "several); name the county")
            places.append(Place("county", c.state, c, (0, 0), "rule", "the county"))
            q = q.edit(notes=(*q.notes, f"“the county” read as {c.label}, the county of {pl.locality.label}."))

    # ---- "swap in Howard County for Montgomery": the named place takes the other's place
    swap = re.search(r"\b(?:swap|switch|replace|substitute)\b.*?\bfor\s+(\w+)|\binstead of\s+(\w+)|\bin place of\s+"
                     r"(\w+)", p.t)
    if swap and places and q.geo.places:
        out_word = next(g for g in swap.groups() if g)
        kept = tuple(pl for pl in q.geo.places if out_word not in pl.label.lower())
        if len(kept) < len(q.geo.places):
            q = q.edit(geo=replace(q.geo, places=kept))
            places = [pl for pl in places if out_word not in pl.label.lower()]

    # ---- "as a share of the population?": the group's share instead of its count
    if not measures and _AS_SHARE.search(p.t) and prior.measures:
        m0 = prior.measures[0]
        share = next((x for x in cat.measures if x.family == m0.family and x.is_rate), None) if m0.family else None
        if share is not None and share is not m0:
            q = q.edit(measures=(share,), rank=replace(q.rank, by=share) if q.rank else None)
            changed.append(Edit(K.SWAP_MEASURE, _said(p, _AS_SHARE)))

    # ---- the places
    if places:
        q = _places(q, p, places, bool(_ADD.search(p.t)) or bool(swap and q.geo.places), changed)

    # ---- the set: DC / Puerto Rico in or out, the 50 states
    if p.include or p.exclude or FIFTY.search(p.t):
        ex = set(q.geo.exclude)
        if FIFTY.search(p.t):
            ex |= {"DC", "PR"}
        ex |= p.exclude
        ex -= p.include
        q = q.edit(geo=replace(q.geo, exclude=frozenset(ex)))
        changed.append(Edit(K.WIDEN if p.include else K.NARROW, _said(p, FIFTY, *p.scope_spans)))

    # ---- N and the direction
    if (q.op in (Op.RANK, Op.LIST) or (q.op is Op.CHANGE and q.rank is not None)) and not among:
        direction, n, n_given = read_rank(p, masked, list(q.measures))
        bare_n = re.search(r"\b(make (it|that)|show|give me|change (it|that) to|just|only)\s+(the\s+)?"
                           r"((top|bottom|first)\s+)?(?P<n>\d{1,3})\b(?!\s*(states|us states|contiguous|lower))",
                           masked) or \
            re.fullmatch(r"\s*(?P<n>\d{1,3})\s*(instead|please)?\s*\??\s*", masked) or \
            re.search(r"\b(?P<n>\d{1,3})\s+instead of\s+\d{1,3}\b|\bthe (top|bottom|first) (?P<n2>\d{1,3}) is\b",
                      masked)
        if bare_n is not None and bare_n.groupdict().get("n2"):
            n, n_given = int(bare_n.group("n2")), True
            bare_n = None
        if not n_given and bare_n:
            n, n_given = int(bare_n.group("n")), True
        if bare_n is not None and re.search(r"\b(top|first)\b", bare_n.group(0)) and q.rank is not None:
            # "Make that the top 10." after "And which lost the most?": the first ten of that ranking, not the
            # ten highest (its "top" says how many, not which end)
            direction = None
        if q.op is Op.CHANGE and q.rank is not None and (direction or n_given):
            # "make that the top 10": the ranked change, ten rows
            down = direction == "ASC" if direction else not q.rank.descending
            q = q.edit(rank=replace(q.rank, descending=not down, n=n if n_given else q.rank.n,
                                    n_given=n_given or q.rank.n_given))
            changed.append(Edit(K.RANKING, _said(p, _RANK_WORDS)))
        elif direction or n_given:
            # a new ranking takes the reader's N ("which state is the lowest": one); an old one keeps its own
            base = q.rank or Rank(q.measures[0], True, n)
            q = q.edit(op=Op.RANK, rank=replace(base, descending=(direction or ("DESC" if base.descending else "ASC"))
                                                == "DESC", n=n if n_given else base.n, n_given=n_given or base.n_given))
            changed.append(Edit(K.RANKING, _said(p, _RANK_WORDS)))
    elif q.op is Op.VALUE and re.search(r"\b(top|bottom|highest|lowest)\b", masked) and not changed:
        raise _cannot(question, prior, "the previous answer is not a ranking")

    # ---- time: another period, a change between two, dollars, the percent change
    if not among:
        timed = time_edit(replace(p, t=mask(p.t, dropped)) if dropped else p, q, cat, list(q.measures[:1]), masked)
        if timed is not None:
            q = timed
            changed.append(Edit(K.DOLLARS if _DOLLARS_ONLY.search(p.t) else K.PERIOD, _said(p, _TIME_WORDS)))

    # ---- a new limit on a set ("only the ones over 100,000"): it replaces the limit on the same measure
    if p.thresholds and q.geo.is_set and q.op in (Op.LIST, Op.RANK, Op.COUNT, Op.TOTAL) and \
            not any(e.kind is K.PERIOD for e in changed):
        limits = [Condition(th.measure or (q.conditions[0].measure if q.conditions else q.measures[0]), th.op,
                            th.value, th.value2, th.ref, None, th.text, th.unit) for th in p.thresholds]
        limited = {c.measure.name for c in limits}
        unlimited = tuple(c for c in q.conditions if c.measure.name not in limited)
        q = q.edit(conditions=unlimited + tuple(limits))
        changed.append(Edit(K.NARROW, _said(p, *[th.span for th in p.thresholds])))

    # ---- "how many people live in those places altogether?": the previous set's total
    if _ALTOGETHER.search(masked) and q.op in (Op.LIST, Op.RANK, Op.COUNT) and q.geo.is_set:
        additive = [m for m in (measures or q.measures) if m.additive]
        if additive:
            q = q.edit(op=Op.TOTAL, measures=tuple(dict.fromkeys([*q.measures, *additive])), sums=tuple(additive),
                       rank=None)
            changed.append(Edit(K.TOTAL, _said(p, _ALTOGETHER)))

    # ---- "is that difference significant?": the same answer; sage tests it and says so under it
    if not changed and _SIGNIFICANCE.search(p.t):
        if q.op is Op.VALUE and len(q.geo.places) < 2 and not q.geo.among:
            raise _cannot(question, prior, "it shows one value, so nothing is compared; ask for two places")
        period = q.periods[0] if len(q.periods) == 1 else None
        levels = {pl.level for pl in q.geo.places} or {q.geo.level}
        if q.op is not Op.CHANGE and not all(cat.has_margins(m, lv, period) for m in q.measures for lv in levels):
            what = join_words([nice_name(m) for m in q.measures])
            raise Decline(f"whether that difference is statistically significant cannot be assessed: the data has no "
                          f"published margins of error for the {what} of these places"
                          + (f" in {period}" if period else "") + " (population totals are controlled to the "
                          "Census Bureau's estimates and carry none), and a test without them would only pretend.",
                          _suggest(prior))
        changed.append(Edit(K.SIGNIFICANCE, _said(p, _SIGNIFICANCE)))
        q = q.edit(notes=(*q.notes, "The same answer: whether its differences are statistically significant at 90% "
                                    "is tested below it."))

    # ---- the display
    display = _display(p.t)
    if display:
        q = q.edit(display=display)
        changed.append(Edit(K.DISPLAY, _said(p, *[rx for rx, _ in _DISPLAY])))

    if not changed:
        raise _cannot(question, prior, "I could not tell what to change in it")
    # a city asked for a figure places lack ("whats the median household income there?"): its county-equivalent
    # of the same area, or the fetch that would add it — as for a question asked in full
    if any(pl.level == "place" for pl in q.geo.places) and q.op is not Op.CHANGE:
        notes: list[str] = []
        kept_places = places_with_figures(list(q.geo.places), list(q.measures), cat, notes, p)
        if notes:
            levels = {pl.level for pl in kept_places}
            q = q.edit(geo=replace(q.geo, places=tuple(kept_places),
                                   level=levels.pop() if len(levels) == 1 else "mixed"),
                       notes=(*q.notes, *notes))
    # a note about a place the answer no longer holds ("“tuscon” read as Tucson city, AZ" after "and Phoenix?") is
    # the earlier answer's, not this one's
    swapped_out = {pl.label for pl in prior.geo.places} - {pl.label for pl in q.geo.places}
    # and a note about the earlier question's own words (a remark set aside, a word written right) is that
    # question's: "Read “feels like everyone moved there lately” as a remark" on the card of "and Missoula?"
    return q.edit(notes=tuple(n for n in q.notes if not n.startswith("Among the places")
                              and not any(label in n for label in swapped_out) and not _ABOUT_WORDS.match(n)))


#: notes about how the words of a question were taken (not about what the answer holds)
_ABOUT_WORDS = re.compile(r"Read “.*” as a remark, not part of the question\.$|“[^”]+” read as “[^”]+”\.$")


LEVEL_PLURAL_NAMES = {"county": "counties", "state": "states"}
#: the whole country, named
_US_WHOLE = re.compile(r"\b(the (united states|us|usa|country|nation|whole country|entire country)"
                       r"( as a whole| overall)?|"
                       r"nationwide|nationally|national(ly)? (average|figure|level|rate|number)|countrywide)\b")
#: the one place of the answer before: "its", "there", "that county"
_THE_ONE = re.compile(r"\b(its|it|there|that one|that (county|state|city|place)|the one|this one)\b")
#: "which of the 3", "of those ten": the number counts the places chosen among, it is no N
_OF_N = re.compile(r"\bof (the|these|those) (two|2|three|3|four|4|five|5|six|6|seven|7|eight|8|nine|9|ten|10|eleven|11|"
                   r"twelve|12|fifteen|15|twenty|20)\b")
#: "which is priciest?", "which one has the most?": one of the rows shown
_WHICH_ONE = re.compile(r"^\W*(?:(?:and|so|ok|okay|now|then|but)\W+)?(which|who)\s+((?:one|1)\s+)?"
                        r"(is|was|has|had|did|does|"
                        r"grew|gained|lost|saw|shows?|rose|fell|comes?|ranks?|pays?|costs?)\b")
_SUPERLATIVE_ANY = re.compile(r"\b(\w+est|most|least|fewest|max\w*|min\w*|top|bottom)\b")
#: what something costs: "priciest", "cheapest", "most expensive"
_COST = re.compile(r"\b(pric\w*|cheap\w*|expensive|costl\w*|afford\w*)\b")
#: a unit named by its code: "TX-10", "ZIP 78702", "tract 1204.02"
_CODE = re.compile(r"\b[a-z]{2}[- ]?\d{1,2}\b|\b(zip( code)? )?\d{5}\b|\btract [\d.]+\b")
#: "as a share of the population?": a group's share instead of its count
_AS_SHARE = re.compile(r"\b(as an? |in )(share|percent(age)?|proportion|%)\b(?!\s+(increase|change|growth|decrease|"
                       r"gain|rise|drop|decline))")
#: the words that name a ranking's N or direction, for the edit's words
_RANK_WORDS = re.compile(r"\b(top|bottom|first|last|highest|lowest|most|least|fewest|biggest|smallest|largest|"
                         r"\w+est|\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|instead|only|just)\b")
_LOSE_GAIN = re.compile(r"\b(lose|lost|losing|decline\w*|shr[aiu]nk\w*|fell|drop\w*|decrease\w*|gain\w*|grew|"
                        r"grow\w*|add\w*|increase\w*|rose|rise)\b")
#: a follow-up about dollars alone ("in nominal $ tho", "adjusted for inflation?"), not about another period
_DOLLARS_ONLY = re.compile(r"\b(nominal|unadjusted|inflation|adjusted|real|current dollars|as published|constant)\b")
_TIME_WORDS = re.compile(r"\b(\d{4}(-\d{4})?|since|change\w*|grew|grow\w*|gain\w*|lost|los\w+|decline\w*|"
                         r"nominal|real|inflation|adjusted|dollars|percent\w*|then|earlier|before|back)\b")


def _said(p: Parse, *found: re.Pattern[str] | re.Match[str] | tuple[int, int] | None) -> str:
    """The words of the follow-up that named an edit: what the patterns match, or the spans given, in order."""
    spans: list[tuple[int, int]] = []
    for f in found:
        if f is None:
            continue
        if isinstance(f, re.Pattern):
            spans += [m.span() for m in f.finditer(p.t)]
        elif isinstance(f, re.Match):
            spans.append(f.span())
        else:
            spans.append(f)
    merged: list[list[int]] = []
    for a, b in sorted(set(spans)):
        if b <= a:
            continue
        if merged and a <= merged[-1][1]:  # overlapping or touching: one stretch of words
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return " ".join(dict.fromkeys(w for a, b in merged if (w := p.tc[a:b].strip())))[:80]


def _measure_words(p: Parse, measures: Sequence[Measure]) -> list[tuple[int, int]]:
    """Where the follow-up names ``measures``."""
    return [(m.start, m.end) for m in p.mentions if m.measure in measures and m.end > m.start]


def _place_words(p: Parse, places: Sequence[Place]) -> str:
    """How the follow-up names ``places``, as typed."""
    said = [p.tc[pl.span[0]:pl.span[1]].strip() if pl.span[1] > pl.span[0] else pl.text or pl.label for pl in places]
    return ", ".join(dict.fromkeys(w for w in said if w))[:80]


def _narrow_or_widen(prior: Query, q: Query) -> EditKind:
    """Whether a new set is narrower than the previous answer's (kept to states, a kind of place, a limit) or
    wider (the whole country, a larger level)."""
    order = {"state": 0, "county": 1, "place": 2}
    if q.geo.within or q.geo.place_kind or q.conditions:
        return EditKind.NARROW
    if prior.geo.is_set and order.get(q.geo.level, 1) > order.get(prior.geo.level, 1):
        return EditKind.NARROW if prior.geo.within else EditKind.WIDEN
    return EditKind.WIDEN if prior.geo.within or prior.geo.places else EditKind.NARROW
#: the latest period, said in words
_NOW = re.compile(r"\b(right now|currently|these days|nowadays|today|at the moment|as of now|at present)\b|"
                  r"\bnow\s*[?.!]*\s*$")
#: a set named by a singular level word: "show every state on a map", "which state is the lowest?"
_EVERY = re.compile(r"\b(every|all(\s+the)?)\s+(state|county)\b(?!'?s)|\bwhich\s+(state|county)\b(?!'?s)")
#: the one state of the previous answer
_THAT_STATE = re.compile(r"\b(that|this|the same|its|the)\s+state\b")
#: the two places named one after the other
_BOTH = re.compile(r"\b(both|the two|both of them|the pair)\b")
_SIGNIFICANCE = re.compile(r"\b(significant\w*|statistically|margin of error|margins of error|sampling (error|noise)|"
                           r"real (difference|gap|change|increase|decrease)|within the margin|meaningful)\b")
_ALTOGETHER = re.compile(r"\b(altogether|all together|combined|in total|total|add(ed)? up|together)\b")
def _drop_clause_measures(p: Parse, drop: re.Match[str], prior: Query) -> list[Measure]:
    """The measures shown before that the drop clause names ("remove the internet column now; ... only wants the
    income"): from the drop word to the end of its clause or a "just"/"only"/"keep", weak mentions too."""
    clause = re.search(r"[,;.]|\b(just|only|keep|leave|but)\b", p.t[drop.end():])
    stop = drop.end() + clause.start() if clause else len(p.t)
    named = [mt.measure for mt in p.mentions if drop.end() <= mt.start < stop and mt.measure in prior.measures]
    return list(dict.fromkeys(named))


def _beside_cities(question: str, prior: Query, cat: Catalog, seen: list[Parse] | None) -> Parse | None:
    """"and Missoula?" after a question about Boise: a name that is one city and a county of comparable size is the
    city when the answer before is about cities, as it is beside cities in one question; None when that does not
    settle it (several cities of the name: the conversation's state decides, or the question of which)."""
    if not prior.geo.places or not all(pl.level == "place" for pl in prior.geo.places):
        return None
    tc = normalize(question)
    p = Parse(question=question, tc=tc, t=tc.lower())
    p.blocked.extend(courtesy_words(p.t))
    read_scope(p, cat)
    earlier = [replace(pl, span=(0, 0)) for pl in prior.geo.places]
    p.places.extend(earlier)  # the cities of the answer before, as if named beside it
    try:
        find_places(p, cat)
        find_unknown_places(p, cat)
    except Decline:
        return None
    p.places = [pl for pl in p.places if pl.span != (0, 0)]
    if not p.places:
        return None
    if seen is not None:
        seen[:] = [p]
    return p


def _in_home_state(question: str, prior: Query, cat: Catalog) -> list[Place]:
    """The places a follow-up names bare ("and naperville?"), read in the one state of the conversation."""
    home = {pl.state.fips: pl.state for pl in prior.geo.places} | {st.fips: st for st in prior.geo.within}
    if len(home) != 1:
        return []
    (state,) = home.values()
    tc = normalize(in_state(question, state))
    q2 = Parse(question=question, tc=tc, t=tc.lower())
    try:
        find_places(q2, cat)
        find_unknown_places(q2, cat)
    except Decline:
        return []
    return [pl for pl in q2.places if pl.level != "state" and pl.how != "ambiguous"]


def _resolve_ambiguous(places: list[Place], prior: Query) -> list[Place]:
    """"and Williamson County?" after a question about Travis County, TX: the one in the conversation's state."""
    states = {pl.state.fips for pl in prior.geo.places} | {s.fips for s in prior.geo.within}
    out = []
    for pl in places:
        if pl.how == "ambiguous":
            pick = [c for c in pl.candidates if c.state.fips in states]
            if len(pick) == 1:
                c = pick[0]
                out.append(Place("county", c.state, c, pl.span, "rule", pl.text))
                continue
        out.append(pl)
    return out


def _bare_counties(p: Parse, prior: Query, cat: Catalog) -> list[Place]:
    """A follow-up that is only a county's name without "County" ("arlington") in the conversation's state."""
    states = [pl.state for pl in prior.geo.places] + list(prior.geo.within)
    if not states:
        return []
    words = re.findall(r"[a-z]+", mask(p.t, p.blocked))
    words = [w for w in words if w not in ("and", "what", "about", "how", "the", "for", "of", "in", "now", "then")]
    if not 1 <= len(words) <= 3:
        return []
    name = " ".join(words)
    hits = [c for st in {s.fips: s for s in states}.values() for c in counties_named(name, cat, st)]
    hits.sort(key=lambda c: (c.suffix != "county", -c.population))
    if not hits:
        return []
    c = hits[0]
    return [Place("county", c.state, c, (0, 0), "rule", name)]


def _places(q: Query, p: Parse, places: Sequence[Place], add: bool, changed: list[Edit]) -> Query:
    """Swap or add places: in a list of named places they replace (or join) them; a state given to a set of
    counties becomes the state the set keeps to ("only Texas", "what about Ohio?")."""
    geo = q.geo
    ambiguous = [pl for pl in places if pl.how == "ambiguous"]
    if ambiguous:
        pl = ambiguous[0]
        raise Decline(f"“{pl.text}” exists in several states; name the state.",
                      [f"and {c.label}?" for c in pl.candidates[:3]], kind="ambiguous")
    if q.op is Op.CHANGE and any(pl.level == "place" for pl in places):
        raise Decline("Census places (cities, towns, CDPs) are loaded for the latest period only, so no change can be "
                      "shown for them; changes are shown for states and counties.", _suggest(q))
    if q.op is Op.CHANGE and geo.is_set and geo.among is None and not q.sums:
        # "and in Georgia?" after a change over Ohio's counties: the same change over Georgia's; a named state or
        # county: its own change
        states = [pl.state for pl in places if pl.level == "state"]
        narrow = bool(states) and len(states) == len(places) and geo.level == "county"
        changed.append(Edit(K.NARROW if narrow else K.SWAP_PLACES, _place_words(p, places)))
        if states and len(states) == len(places) and geo.level == "county":
            within = tuple(dict.fromkeys((*geo.within, *states))) if add else tuple(states)
            return q.edit(geo=replace(geo, within=within, exclude=frozenset()))
        levels = {pl.level for pl in places}
        return q.edit(rank=None, geo=GeoSet(level=levels.pop() if len(levels) == 1 else "mixed",
                                            places=tuple(places)))
    if geo.is_set and geo.among is None and q.op in (Op.RANK, Op.LIST, Op.COUNT, Op.TOTAL):
        states = [pl.state for pl in places if pl.level == "state"]
        if states and len(states) == len(places) and geo.level in ("county", "place"):
            within = tuple(dict.fromkeys((*geo.within, *states))) if add else tuple(states)
            changed.append(Edit(K.NARROW, _place_words(p, places)))
            return q.edit(geo=replace(geo, within=within, exclude=frozenset()))
        if states and len(states) == len(places) and geo.level == "state" and _ONLY.search(p.t):
            changed.append(Edit(K.SWAP_PLACES, _place_words(p, places)))
            return q.edit(op=Op.VALUE, rank=None, geo=GeoSet(level="state", places=tuple(places)))
        # "what about Ohio?" after a ranking of states: that state's value
        levels = {pl.level for pl in places}
        if add:
            # the previous answer's places and the new one, side by side
            changed.append(Edit(K.ADD_PLACES, _place_words(p, places)))
            return q.edit(op=Op.VALUE, rank=None, conditions=(),
                          geo=GeoSet(level=levels.pop() if len(levels) == 1 else "mixed", places=tuple(places),
                                     among=q))
        changed.append(Edit(K.SWAP_PLACES, _place_words(p, places)))
        level = levels.pop() if len(levels) == 1 else "mixed"
        return q.edit(op=Op.VALUE, rank=None, conditions=(), geo=GeoSet(level=level, places=tuple(places)))
    merged = (*geo.places, *places) if add else tuple(places)
    uniq: dict[str, Place] = {}
    for pl in merged:
        uniq.setdefault(pl.geo_id, pl)
    levels = {pl.level for pl in uniq.values()}
    level = levels.pop() if len(levels) == 1 else "mixed"
    changed.append(Edit(K.ADD_PLACES if add else K.SWAP_PLACES, _place_words(p, places)))
    if geo.among is not None and add:
        return q.edit(geo=replace(geo, places=tuple(uniq.values()), level=level))
    return q.edit(geo=GeoSet(level=level, places=tuple(uniq.values()), exclude=geo.exclude))


def _display(t: str) -> DisplayHint | None:
    if not re.search(r"\b(as|on|in|show|map|chart|plot|draw|graph|table)\b", t):
        return None
    for rx, hint in _DISPLAY:
        if rx.search(t):
            return hint
    return None


def _short(q: Query) -> str:
    from ..explain import describe

    return describe(q)


def _cannot(question: str, prior: Query, why: str) -> Decline:
    return Decline(f"“{question.strip()}” as a follow-up of “{_short(prior)}”: {why}. Ask it as a full question, "
                   "or change one thing at a time (a place, a measure, N, “only Texas”, “as a map”).",
                   _suggest(prior))


def _suggest(prior: Query) -> list[str]:
    out = []
    m: Measure = prior.measures[0] if prior.measures else None  # type: ignore[assignment]
    if m is not None:
        out.append("same for the poverty rate" if m.name != "poverty_rate" else "same for median household income")
    if prior.op is Op.RANK:
        out.append("top 20 instead")
    elif prior.geo.places:
        out.append("and Harris County, TX?")
    out.append("as a table")
    return out


__all__ = ["is_followup", "read_followup"]
