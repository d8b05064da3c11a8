"""The offline planner's reading of a question, from text to a :class:`~sage.planner.offline.read.parsed.Parse`: places,
measures, the scope checks that decline early (topics, years, cities, trends the data lacks), thresholds, and
the level of a set question."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from ....census.mentions import Mention
from ....census.semantic import load_gaps
from ....text import normalize, overlaps
from ....types import Chunk
from ..catalog import Catalog, State
from ..declines import Decline, place_suggestions, topic_suggestions
from .bare_names import find_unknown_places
from .localities import coded_level, coded_level_decline
from .measures import find_measures
from .parsed import Parse, Place
from .periods import courtesy_words, dollar_words, nominal_words, read_periods
from .places import find_places, resolve_ambiguous
from .remarks import SYMBOLS, drop_remarks
from .scope import read_scope
from .spelling import correct
from .thresholds import find_thresholds
from .vocabulary import (
    CDP_ONLY,
    CITY_WORD,
    FIFTY,
    FORECAST,
    FOREIGN,
    INCORPORATED,
    INDEPENDENT_CITY,
    KNOWN_WORDS,
    LEVEL_PLURAL,
    LEVEL_SINGULAR,
    LOWER_US,
    NATIONAL,
    OTHER_PRODUCT,
    PER_N,
    PLACE_LEVEL,
    PLACE_LEVEL_WEAK,
    PURPOSE_LEAD,
    PURPOSE_NOUNS,
    RANKING_START,
    REQUEST_START,
    SUB_STATE,
    SUB_STATE_NOT_PLACES,
    VERSUS_AVG,
    VS_US,
    abbreviation_ends,
    join_words,
    mask,
    nice_name,
    per_number,
)

#: parses made by :func:`parse_question` for :mod:`..alone` and not yet handed on, by what they were read from
_handed: dict[tuple, Parse | Decline] = {}
_HANDED_MAX = 32


def parse_question(question: str, chunks: Sequence[Chunk], cat: Catalog, earlier: str = "", *,
                   keep: bool = False, subject: bool = False) -> Parse:
    """:func:`read_question`, read once for the two stages that ask it in turn.

    The agent first asks whether a question is a place named alone (:mod:`..alone`, which only looks at the parse)
    and then plans it, which reads the same question again: half of the plan's time.  ``keep=True`` (the first
    reader) leaves the parse, or the decline, for the next call with the same question, conversation text,
    catalog and context, which takes it (each parse is given to one planner only: building the frame changes it).
    """
    key = (question, earlier, id(cat), cat.generation, id(chunks), subject)
    handed = _handed.pop(key, None)
    if handed is None:
        try:
            handed = read_question(question, chunks, cat, earlier, subject=subject)
        except Decline as exc:
            handed = exc
        if keep:
            while len(_handed) >= _HANDED_MAX:
                _handed.pop(next(iter(_handed)), None)
            _handed[key] = handed
    if isinstance(handed, Decline):
        raise handed
    return handed


def read_question(question: str, chunks: Sequence[Chunk], cat: Catalog, earlier: str = "", *,
                  subject: bool = False) -> Parse:
    """Read ``question`` into a :class:`Parse`, or raise :class:`Decline` as soon as it cannot be answered.

    The order matters: places first (their spans are masked for everything after), then measures, then names
    that are no place (their refusal suggests the question's measure), the scope checks, thresholds (bound to
    the measures found) and the level.  ``earlier`` is the text of an earlier question of the conversation
    that has no frame to edit (it was declined): it lends its places and measure like a preamble does."""
    state = _only_a_state(question, cat) if earlier else None
    if state is not None:  # "the missouri one" after "which Kansas City?": the earlier question, in that state
        question, earlier = in_state(earlier, state), ""
    question, remarks = drop_remarks(question, cat)
    question, corrected = correct(question, cat)
    context, ask = split_context(question, cat.state_by_key, subject=subject)
    if earlier:  # an earlier question of the conversation lends what this one leaves open, like a preamble
        context = f"{earlier.rstrip('?.! ')}. {context}".strip()
    tc = normalize(ask)
    p = Parse(question=question, tc=tc, t=tc.lower())
    p.notes.extend(f"Read “{r}” as a remark, not part of the question." for r in remarks)
    p.notes.extend(corrected)
    read_scope(p, cat)
    p.blocked.extend(nominal_words(p.t) + courtesy_words(p.t) + table_ids(p.t))
    # "the share ... that falls below the federal poverty level": a definition, not a fall over time
    p.blocked.extend(m.span() for m in _NOT_A_CHANGE.finditer(p.t))
    # "(all ages, civilian noninstitutionalized)": everyone, not the measure "median age"; a "crude" rate is what the
    # ACS publishes (no rate of it is age-adjusted)
    p.blocked.extend(m.span() for m in _EVERYONE.finditer(p.t))
    # "for the most recent period available": the latest data, not a superlative of a measure
    p.blocked.extend(m.span() for m in _LATEST.finditer(p.t))
    # "I mean the median home value": a correction, not the mean
    p.blocked.extend(m.span() for m in re.finditer(r"\bi mean\b", p.t))
    # "For the higher-education funding memo, please identify ...", "(for a memo on the Rural Georgia Prosperity
    # initiative)": what the answer is for, not a comparison, a place or a measure — unless a place is named there
    # only ("For our civics unit on Georgia, can you show the state's total population ...")
    lead = PURPOSE_LEAD.match(p.t)
    spans = ([lead.span()] if lead else []) + [m.span() for m in _PURPOSE_TOPIC.finditer(p.t)]
    p.blocked.extend(span for span in spans if not MODIFIER.search(p.t[span[0]:span[1]])
                     and not _names_own_place(p.t, span, cat))
    # "our tri-county catchment: Pima, Santa Cruz and Cochise": a description of the places the list names
    p.blocked.extend(m.span() for m in _AREA_OF_LIST.finditer(p.t))
    for m in _CRUDE.finditer(p.t):
        p.blocked.append(m.span())
        p.notes.append("A crude rate, as asked: ACS rates are shares of everyone in the universe, not age-adjusted.")
    find_places(p, cat)
    drop_excluded(p)
    if context:
        _use_context(p, context, cat, chunks)
    find_measures(p, cat, chunks)
    end = len(p.t)
    if context and p.strong() and all(m.start == m.end == end for m in p.strong()):
        # "Uninsured rate for Texas, civilian noninstitutionalized population as the universe — what's the figure?":
        # the measure the scene names, not one found by the meaning of the ask's other words
        by_meaning = p.mentions
        p.mentions = [m for m in p.mentions if not m.start == m.end == end]
        _use_context_measures(p, context, cat, chunks)
        if not p.strong():
            p.mentions = by_meaning
    if context and not p.strong():
        _use_context_measures(p, context, cat, chunks)
    _foreign(p, cat)
    find_unknown_places(p, cat)
    resolve_ambiguous(p)
    check_scope(p, cat, context)
    find_thresholds(p, cat)
    find_level(p, cat)
    return p


_FILLER = frozenset("the one in i mean meant please ok okay sorry oh version city town county that of from thanks "
                    "thank you yes yeah no state capital".split())


def in_state(question: str, state: State) -> str:
    """``question`` with ``state`` written after its last capitalised name ("how many housing units are in kansas
    city" -> "... kansas city, Missouri"), or at its end."""
    text = question.rstrip("?.! ")
    names = list(re.finditer(r"\b(?:[A-Z][a-z]+|[a-z]+ city)(?:\s+[A-Z][a-z]+)*", text))
    if names:
        end = names[-1].end()
        return f"{text[:end]}, {state.name}{text[end:]}"
    return f"{text}, {state.name}"


def _only_a_state(question: str, cat: Catalog) -> State | None:
    """The state a reply to "which one?" names, when it names nothing else ("the missouri one", "Illinois", "in
    MO please"), or None."""
    words = [w for w in re.findall(r"[a-z]+", normalize(question, lower=True)) if w not in _FILLER]
    if not words or len(words) > 3:
        return None
    name = " ".join(words)
    if name in cat.state_by_key:
        return cat.state_by_key[name]
    if len(words) == 1 and words[0].upper() in cat.state_by_abbr:
        return cat.state_by_abbr[words[0].upper()]
    return None


#: abbreviations whose period does not end a sentence ("St. Louis", "Washington, D.C. and ...")
#: (the AP abbreviations of three letters or more only capitalised: "it's a wash. Is the difference ..." ends there)

#: towns set apart from the other kinds of places
_ONLY_TOWNS = re.compile(r"\b(?:only|just)\s+(?:the\s+)?towns?\b|\btowns?\s+only\b|\b(?:incorporated|legal|official)\s+"
                         r"towns\b|\btowns?\W+(?:and\s+)?not\s+(?:the\s+)?(?:cities|villages|cdps)\b|\b(?:that|which)\s+"
                         r"are\s+towns\b|\btowns\s+\(not\b")

#: "of all ages", "all races": everyone in a measure's universe, no breakdown and no measure of its own
_EVERYONE = re.compile(r"\b(?:(?:of|at|for|across)\s+)?(?:all|any|every)\s+(?:ages?|races?|ethnicities)\b")
def _names_own_place(t: str, span: tuple[int, int], cat: Catalog) -> bool:
    """Whether the words at ``span`` name a county, a city or a state that the rest of ``t`` does not name."""
    inside = t[span[0]:span[1]]
    if re.search(r"\b(county|counties|parish|city|cities|borough|town)\b", inside):
        return True
    outside = t[:span[0]] + " " + t[span[1]:]
    return any(m.group(1) not in outside for m in cat.state_pattern.finditer(inside))


#: "for a memo on the Rural Georgia Prosperity initiative", "for our story about rural hospitals": a purpose and its
#: topic, to the end of the clause
_PURPOSE_TOPIC = re.compile(r"\bfor (?:a|an|my|our|the|this) (?:[a-z-]+ ){0,3}(?:" + PURPOSE_NOUNS + r") ((?:on|about|"
                            r"regarding) (?:[a-z'-]+ ){0,6}?[a-z'-]+)(?=\s*(?:[,.;:?!]|$))")
#: "the most recent period", "the most recent ACS": the latest data
_LATEST = re.compile(r"\b(?:the\s+)?most\s+recent(?=\s+(?:period|year|data|release|estimates?|figures|numbers|acs|"
                     r"census|survey|available|five|5)\b|\s*$|\s*[,.?!])")
#: "our tri-county catchment", "the three-county service area": the area a list of places makes up
_AREA_OF_LIST = re.compile(r"\b(?:our|the|my|this|their|a|an)\s+(?:tri|bi|multi|two|three|four|five|six|seven|eight|"
                           r"\d+)\s+(?:county|parish|state)\s+(?:catchment|service|region|area|footprint|territory|"
                           r"district|market|coverage|jurisdiction)(?:\s+(?:area|region))?\b")
#: "the crude uninsured rate": a rate that is not age-adjusted, which every ACS rate is
_CRUDE = re.compile(r"\bcrude(?=\s+(?:[a-z]+\s+){0,3}?(?:rate|rates|prevalence|proportion|share|percent\w*)\b)")

#: "falls below", "fall under", "falls within": where a value lies, not a change
_NOT_A_CHANGE = re.compile(r"\b(?:falls?|falling)\s+(?:below|under|above|over|within|into|between)\b")


def split_context(question: str, states: Iterable[str] = (), *, subject: bool = False) -> tuple[str, str]:
    """``(context, ask)``: a chatty question's scene-setting sentences and the question itself.

    "My coworker from Phoenix says everyone in Arizona lives near it. Is that true? What share of Arizona's
    population lives in Maricopa County?" asks only the last sentence; the names before it (Phoenix) are not
    what the answer is about.  The ask is the last sentence with a question mark and whatever follows it (an
    instruction such as "Leave out Puerto Rico."), or the last sentence; a preamble before a colon inside it
    ("I want the basics on Buncombe County, NC: how many people live there ...") is context too.  Context is
    used only for what the ask leaves open: its places ("there", "each"), its measure, its scope clauses."""
    # (an emoji between two sentences stands where a space would: "... live in Moab?? 🏜️ Planning a trip ...")
    text = " ".join(SYMBOLS.sub(" ", question).split())
    pieces: list[str] = []
    start = 0
    # (a sentence may end inside a quotation: "... 2019-2023.' Show me both states' change")
    for mt in re.finditer(r"[.?!]+[\"'”’]?\s+(?=[\"“(A-Za-z0-9$])", text):
        head = text[start:mt.start() + 1]
        if text[mt.start()] == "." and not re.search(r"[?!]", mt.group(0)) and abbreviation_ends(head, text[mt.end():]):
            continue
        pieces.append(text[start:mt.end()].strip())
        start = mt.end()
    pieces.append(text[start:].strip())
    pieces = [x for x in pieces if x]
    if len(pieces) > 1:
        asks = [i for i, x in enumerate(pieces) if "?" in x]
        # no question mark: the last sentence that asks (“Compare the poverty rates ... of Mississippi, Louisiana and
        # New Mexico. Note the B17025 table here is the 2018-2022 ACS.”), and what follows it
        # (a ranking asked in shorthand is a request too: "top 5 fla counties by median home value. asking for my
        # sister ...", "5 largest places in Ga. by housing units. Expect Atlanta ...")
        requests = [i for i, x in enumerate(pieces) if REQUEST_START.match(x) or RANKING_START.match(x)]
        # (with neither, the last sentence that is not about the asker or the purpose: "median household income
        # Washtenaw County vs Kent County, MI. deciding between Ann Arbor and Grand Rapids for store #2")
        told = [k for k, x in enumerate(pieces) if not (_AFTERWORD.search(x) and not MODIFIER.search(_plain(x)))]
        i = asks[-1] if asks else requests[-1] if requests else told[-1] if told else len(pieces) - 1
        # "... in Michigan, counting both undergraduates and graduate students. What is it?": a bare
        # "what is it?" asks the sentence before it
        while i > 0 and len(pieces[i].split()) <= 4 and re.search(
                r"\b(it|that|this|them|those|one|number|figure)\b|^(please|thanks|thank you)\b", pieces[i],
                re.IGNORECASE):
            i -= 1
        # "I'm listing every county where the median rent is at least $2,000. Which counties are those?": an ask
        # that points back at the request before it asks that request
        # (a short ask only: in "which five counties have the largest share of their population?" "their" is the
        # counties' own)
        # ("their" is no pointer: in "which five counties have the largest share of their population" it is the
        # counties' own)
        # (a short ask, or one after a sentence that sets terms: "My two boys both live ... in Minneapolis (Hennepin
        # County) ... How many people live in those two counties put together?" asks of its own)
        if i > 0 and re.search(r"\b(those|these|them|they|each of them|that list)\b", pieces[i], re.IGNORECASE) \
                and not re.search(r"\b(top|bottom|\d+)\b", pieces[i], re.IGNORECASE) and \
                (len(pieces[i].split()) <= 6 or MODIFIER.search(pieces[i - 1])):
            i -= 1
        # "Is it true that most counties in Illinois lost population ...? How many lost people?": a short ask that
        # names no place and no kind of place asks about the ones the sentence before it names
        points = re.search(r"\b(there|here|it|its|that|this|those|these|them|they|their)\b", pieces[i], re.IGNORECASE)
        if i > 0 and len(pieces[i].split()) <= 6 and not _NAMES_PLACES.search(pieces[i]) and not points and \
                (_NAMES_PLACES.search(pieces[i - 1]) or _lower_state(pieces[i - 1], states)):
            i -= 1
        # "Rank Colorado counties by ... Top 3 only.": a short instruction after a request without a question
        # mark is part of that request
        if not asks and i > 0 and len(pieces[i].split()) <= 5 and not re.match(
                r"(what|which|how|is|are|does|do|can|could|give|show|list|rank|compare|tell|who|where|when)\b",
                pieces[i], re.IGNORECASE):
            i -= 1
        # "Which counties ...? I'm scouting for a second pizza shop.": a sentence after the ask about the asker or
        # the purpose, that changes nothing the answer holds, is context; an instruction ("Top 3 only.") is not
        # ("for store #2": a number that names, not one that sets a term)
        tail = [x for x in pieces[i + 1:] if "?" not in x and _AFTERWORD.search(x) and not MODIFIER.search(_plain(x))]
        context = " ".join([*pieces[:i], *tail])
        ask = " ".join(x for x in pieces[i:] if x not in tail)
    else:
        context, ask = "", text
    # "Grandpa's Harlan County, Kentucky and Grandma's McDowell County, West Virginia both look so poor on paper, but
    # is the difference between their median household incomes significant?": what comes before ", but is ..." sets
    # the scene (its "poor" is no measure asked for)
    turn = re.search(r",\s+(?:but|so|and so)\s+(?=(?:is|are|was|were|which|what|how|does|do|did|can|could|would|"
                     r"will)\b)", ask, re.IGNORECASE)
    if turn is not None and len(ask[turn.end():].split()) >= 4 and not REQUEST_START.match(ask):
        context = (context + " " + ask[:turn.start()]).strip()
        ask = ask[turn.end():]
    # "The Twin Cities counties, Hennepin and Ramsey: what's the median rent in each?"; "We just moved to Phoenix and
    # I'm so curious — how has ...": a preamble before a colon or a dash
    colon = re.search(r"(?::|\s[—–]|\s--?)\s+(?=(what|which|how|is|are|does|do|can|could|give|show|list|rank|compare|"
                      r"tell|if\s+(?:you|we|i)\s+(?:add|combine|put|take|sum|count|look|compare))\b)", ask,
                      re.IGNORECASE)
    if colon is None and re.match(r"(?:ok|okay|so|alright|right|now|hmm|great|thanks|thank you)\b[^:]{0,50}:\s+"
                                  r"(?:the\s+)?(?:top\s+)?\d+\s", ask, re.IGNORECASE):
        colon = re.search(r":\s+", ask)  # "OK, widen it for a bar chart: the 10 Washington counties with ..."
    # "US total population: give the change ...": a short label before the colon is the subject, not a preamble
    label = ask[: colon.start()] if colon else ""
    dash = colon is not None and ":" not in colon.group(0)
    # ("Patron asks: which five counties ...": whoever asks, named before what they ask)
    if colon and colon.start() > 0 and (len(label.split()) > 3 or re.match(
            r"(for|in|on|as|to|from|with|about|re|hi|hey|ok|okay|so|quick|i|we|my|our)\b", label, re.IGNORECASE)
            or re.search(r"\b(asks?|asked|asking|wants? to know|wanted to know|writes|wrote|says|said|wonders|"
                         r"wondered|question|query|request|inquiry)\s*$", label, re.IGNORECASE)) \
            and not (dash and re.search(r"\b(need|want|give|show|list|which|what|how|tell|compare|rank|pull|swap|"
                                        r"switch|replace|add|find|get)\b", label, re.IGNORECASE)):
        # (a dash sets off a preamble only when the words before it ask for nothing: "I'm putting together a
        # report and need the five California counties ... — could you pull those for me?" asks before it)
        context = (context + " " + ask[: colon.start()]).strip()
        ask = ask[colon.end():]
    # "... which are the 5 biggest cities in the state by population. I honestly had no idea about the order —
    # could you help? Thank you!": an ask that asks for nothing of its own asks the sentence before it
    if context and _EMPTY_ASK.match(ask):
        return split_context(context, states, subject=subject)
    # ``subject``: "Benton County vs Washington County, Arkansas: is the gap in median household income real ...?",
    # "Poorest counties in Kentucky -- give me the top 5 by poverty rate", "Per capita income in Mingo County ...:
    # 2014-2018 vs 2019-2023, in plain dollars. How much did it go up?" — a subject line (no verb, nobody speaking,
    # a place named) read as part of the question, every word of it the question's (lent piece by piece, its
    # comparison, its level or its dollars were lost).  The planner reads it so when the ask alone cannot be
    # answered (:func:`has_subject_line`).
    if subject and context and _subject_line(context):
        return "", f"{context} {ask}"
    return context, ask


def _plain(sentence: str) -> str:
    """``sentence`` without the words about the asker that look like terms of an answer: a number that names ("store
    #2") and a choice of one's own ("deciding between Ann Arbor and Grand Rapids")."""
    return re.sub(r"#\s?\d+|\b(?:deciding|choosing|picking|torn)\s+between\b", "", sentence, flags=re.IGNORECASE)


#: a verb that makes a sentence a statement or a scene of its own (not a subject line)
_VERB = re.compile(r"\b(is|are|was|were|am|be|been|being|has|have|had|do|does|did|says?|said|think|thinks|thought|"
                   r"seems?|looks?|feels?|keeps?|kept|lives?|lived|moved?|went|goes|wants?|needs?|knows?|knew|heard|"
                   r"hears?|told|tells?|loves?|hates?|gets?|got|will|would|can|could|should|may|might|must|"
                   r"[a-z]+'(?:s|re|ve|ll|d))\b", re.IGNORECASE)
#: who said or asked it ("Patron asks:", "A caller claimed that ..."): a scene, not a subject line
_SPEECH = re.compile(r"\b(asks?|asked|asking|claims?|claimed|writes|wrote|wonders|wondered|told|wants?|wanted|"
                     r"swears?|swore|heard|argues?|argued|insists?|insisted)\b", re.IGNORECASE)


def _subject_line(text: str) -> bool:
    """Whether ``text`` only names what is asked about ("lancaster county pa vs york county pa median household
    income.", "Poorest counties in Kentucky"): a place or a kind of place named; no verb, no one speaking."""
    return bool(_NAMES_PLACES.search(" " + text)) and not _VERB.search(text) and not _SPEECH.search(text) and \
        not _AFTERWORD.search(text) and len(text.split()) <= 25


def subject_line(question: str, states: Iterable[str] = ()) -> str:
    """The subject line ``question`` opens with, that :func:`split_context` sets apart as scene-setting (a second
    reading, ``subject=True``, takes it as part of the question), or ""."""
    text, _ = drop_remarks(question)
    context, _ = split_context(text, states)
    return context if context and split_context(text, states, subject=True)[0] != context else ""


def modifies(text: str) -> bool:
    """Whether ``text`` holds a word that changes an answer (:data:`MODIFIER`: percent, only, nominal, a number)."""
    return bool(MODIFIER.search(text))


#: a sentence that asks for something
#: a sentence about the asker or the purpose: first person, "it's for ...", or an opening participle ("Thinking about
#: a coffee cart", "Deciding where the bakery goes")
_AFTERWORD = re.compile(r"\b(i|i'?m|i'?d|i'?ve|i'?ll|me|my|we|we'?re|we'?d|our|us)\b|^\W*(it'?s|this is|that'?s|"
                        r"for)\s+(for|a|an|my|our|the)\b|^\W*[a-z]+ing\b", re.IGNORECASE)
#: words that change an answer: a sentence with one is part of the ask
MODIFIER = re.compile(r"\b(not|no|except|excluding|exclude|without|only|just|plus|including|include|counting|leave|"
                       r"drop|top|bottom|first|last|percent\w*|pct|share|rate|per|each|total|combined|average|mean|"
                       r"median|highest|lowest|most|least|largest|smallest|biggest|rank\w*|sort\w*|map|"
                       r"table|chart|graph|nominal|inflation|dollars?|since|between|compared?|versus|vs|ratio|"
                       r"for every)\b|\d|%",
                       re.IGNORECASE)

#: an ask made only of politeness ("could you help? Thank you!", "any ideas?")
_EMPTY_ASK = re.compile(r"^\W*(?:(?:could|can|would|will|you|please|pls|help|me|us|out|with|this|that|it|thanks|thank|"
                        r"so|much|a|lot|i|honestly|had|have|has|no|idea|about|the|order|any|ideas|really|appreciate|"
                        r"if|possible|in|advance|again|clue|not|sure|dont|know)\b\W*)+$", re.IGNORECASE)

def _lower_state(sentence: str, states: Iterable[str]) -> bool:
    """A state named in lowercase ("... 1 in 10 black americans lives in georgia?"): what a capital shows
    otherwise (``states``: their names, lowercase)."""
    low = sentence.lower()
    return sentence == low and any(re.search(rf"\b{re.escape(name)}\b", low) for name in states)


#: words that name places or kinds of places (a capitalised word after the first, or a level word)
_NAMES_PLACES = re.compile(r"(?<=\s)[A-Z][a-z]+|(?i:\b(states?|count(y|ies)|parish(es)?|cit(y|ies)|towns?|places|"
                           r"nation|country|us|usa)\b)")

#: the words that join the places of a list ("Travis County, TX vs Williamson County, TX and ...")
_LIST_JOINERS = frozenset("and or vs versus v compared to with against plus the of in county counties city cities "
                          "state states".split())

#: words of an ask that point back to places named before it
_BACK_REFERENCE = re.compile(r"\b(there|here|it|its|each|both|them|they|their|these|those|that (county|state|place)|"
                             r"the (two|2|three|3|four|4) (\w+ )?(cities|towns|places|counties|states|of them)|"
                             r"this (county|state|place)|the (county|state)|these (counties|states)|"
                             r"those (counties|states))\b")


def _use_context(p: Parse, context: str, cat: Catalog, chunks: Sequence[Chunk]) -> None:
    """The places and scope clauses of the scene-setting text, for an ask that names no place of its own."""
    tc = normalize(context)
    ctx = Parse(question=context, tc=tc, t=tc.lower(), scene=True)
    ctx.blocked.extend(courtesy_words(ctx.t))
    try:
        read_scope(ctx, cat)
        find_places(ctx, cat)
        drop_excluded(ctx)
    except Decline:
        return
    # "I sit on a planning commission in Williamson County, Texas ... How many housing units did Williamson County
    # add?": an ambiguous name of the ask is the one the preamble names with its state
    for i, pl in enumerate(p.places):
        if pl.how == "ambiguous":
            same = next((c for c in ctx.places if c.county is not None and c.county in pl.candidates), None)
            if same is not None:
                p.places[i] = replace(same, span=pl.span, how="context", text=pl.text)
    if not p.places:  # "I'm relocating to Indianapolis ...", "Miami Beach: ...": a city named in the preamble
        try:
            find_unknown_places(ctx, cat)
        except Decline as exc:
            if exc.kind == "ambiguous":
                raise  # the place the question is about has several readings: ask which
            # another unknown word of the preamble is no reason to decline (one in the list of places lent is: below)
    # an instruction in the context ("Leave out Puerto Rico.") still applies, and so does "US total population:"
    if not ctx.places and (NATIONAL.search(ctx.t) or re.search(r"\b(US|USA)\b", ctx.tc)):
        p.national = True
    p.include |= ctx.include - p.exclude
    p.exclude |= ctx.exclude - p.include
    p.notes.extend(n for n in ctx.notes if n not in p.notes)
    _lend_state(p, ctx)
    _lend_own_place(p, ctx)
    if p.places:
        return
    resolve_ambiguous(ctx)
    # an ambiguous name stays (the frame builder picks its reading, or shows or asks which): dropped, the question
    # would be answered for the other places only
    places = sorted(ctx.places, key=lambda pl: pl.span[0])
    if re.search(r"\bstates\b", p.t) and not re.search(r"\b(these|those|both|their|its)\s+(\w+\s+)?states\b|"
                                                     r"\bthe (two|three|four|five|six|seven|2|3|4|5|6|7) states\b",
                                                     p.t):
        # "A viral post says Mississippi has the highest poverty rate. Check it: top 5 states by poverty rate": a
        # ranking of states is never kept to a state the scene-setting names
        places = [pl for pl in places if pl.level != "state"]
    if not places:
        return
    # (a back reference to a comparison keeps every place: "Macomb County vs Oakland County, MI -- the median
    # household income gap between them. Is that difference statistically significant or is it ...?")
    compared = re.search(r"\b(compare[sd]?|vs|versus|either|difference|differ\w*|gap|significant\w*|higher|lower|"
                         r"bigger|larger|smaller)\b", p.t)
    if _BACK_REFERENCE.search(p.t) and not compared and not re.search(
            r"\b(each|both|them|they|their|these|those|the (two|2|three|3|four|4))\b", p.t):
        places = places[-1:]  # "there" is the place named last
    # "one in Minneapolis (Hennepin County) and one in St. Paul (Ramsey County). How many people live in those two
    # counties put together?": the places of the kind the ask names
    kind = re.search(r"\b(?:these|those|the|both|all)\s+(?:\w+\s+)?(counties|cities|towns|places|states)\b", p.t)
    if kind is not None and len(places) > 1:
        level = {"counties": "county", "states": "state"}.get(kind.group(1), "place")
        same_kind = [pl for pl in places if pl.level == level]
        if same_kind and len(same_kind) < len(places):
            places = same_kind
    subs = [pl for pl in places if pl.level != "state"]
    if len(subs) == 2 and len(places) > 2 and re.search(r"\b(both|the (two|2))\b", p.t) and \
            all(pl.level != "state" or any(x.state.fips == pl.state.fips for x in subs) for pl in places):
        places = subs  # "... Hale County and Perry County, Alabama. Could you give me both figures?": the two
    if len(places) > 1:
        # "Montgomery County TX, Zorbaville vs Travis County TX ... - is the gap significant?": places lent as a
        # list with a word in it that is no place; the others alone would answer another question
        lo, hi = min(pl.span[0] for pl in places), max(pl.span[1] for pl in places)
        covered = [pl.span for pl in ctx.places] + ctx.blocked + ctx.scope_spans
        stray = [m.group(0) for m in re.finditer(r"[a-z]+", ctx.t[lo:hi])
                 if m.group(0) not in _LIST_JOINERS and m.group(0) not in KNOWN_WORDS
                 and ctx.tc[lo + m.start()].isupper()
                 and m.group(0) not in cat.measure_vocab and m.group(0) not in cat.state_words
                 and not any(a < lo + m.end() and lo + m.start() < b for a, b in covered)]
        if stray:
            raise Decline(f"I could not read “{stray[0]}” among the places the question names; nothing was "
                          "answered (the others alone would be another question).",
                          [" ".join(re.sub(rf"(?i)\b{re.escape(stray[0])}\b\s*,?", "", p.question, count=1).split())])
    if len(places) == 1 and re.search(r"\b(difference|differ\w*|gap|compared?|comparison|versus|vs|both)\b", p.t) \
            and not re.search(
            r"\b(19|20)\d\d\b|\b(since|change\w*|grow\w*|grew|rose|fell|increase\w*|decrease\w*|over time)\b",
            f"{context} {p.t}".lower()):
        # "Wake County's median household income is higher than Mecklenburg's - is that difference significant?":
        # a comparison with one place read before it has lost the other (answered, it would show only one)
        raise Decline(f"the question compares places, but only {places[0].label} could be read from what comes "
                      "before it; nothing was answered. Name each place the comparison is about.",
                      topic_suggestions(p, cat))
    end = len(p.t)
    for pl in places:
        p.places.append(replace(pl, span=(end, end), how="ambiguous" if pl.how == "ambiguous" else "context"))
    p.notes.append(f"The question's {'places' if len(places) > 1 else 'place'} read from what comes before it: "
                   f"{join_words([pl.label for pl in places])}.")


def _lend_state(p: Parse, ctx: Parse) -> None:
    """"I reside in Deschutes County, Oregon. How does our median household income compare with that of neighboring
    Crook County and Jefferson County?": the ask's counties of several states are the ones in the one state the
    scene-setting names (not every Jefferson County: 25 of them), and "our" compared with them is the asker's own
    place named there."""
    states = {pl.state.fips for pl in ctx.places if pl.how != "ambiguous"}
    if len(states) != 1:
        return
    fips = states.pop()
    lent = False
    for i, pl in enumerate(p.places):
        if pl.how == "ambiguous" and pl.level == "county":
            c = next((c for c in pl.candidates if c.state.fips == fips), None)
            if c is not None:
                p.places[i] = Place("county", c.state, c, pl.span, "rule", pl.text)
                p.notes.append(f"“{pl.text}” read as {c.label}, in the state named before the question.")
                lent = True
    own = [pl for pl in ctx.places if pl.level in ("county", "place") and pl.how != "ambiguous"]
    if lent and len(own) == 1 and re.search(r"\b(our|ours)\b", p.t) and \
            re.search(r"\b(compare[sd]?|comparison|vs|versus|against|than)\b", p.t) and \
            own[0].geo_id not in {pl.geo_id for pl in p.places}:
        end = len(p.t)
        p.places.insert(0, replace(own[0], span=(end, end), how="context"))
        p.notes.append(f"“our” read as {own[0].label}, named before the question.")


#: "for us compared with ...", "than us": the asker's own place in a comparison
_US = re.compile(r"\b(?:for|than|with|to)\s+(us)\b(?=\s*(?:compared|vs|versus|and|or|than|[,?.!]|$))|"
                 r"\b(us)\s+(?:compared|vs|versus)\b")
#: "Our place is in Union County, South Dakota", "We live in X", "I'm in X": where the asker is
_WHERE_WE_ARE = re.compile(r"\b(?:we|i|im|our\s+\w+|my\s+\w+)\s+(?:\w+\s+){0,2}?(?:in|from|near)\s+$")


def _lend_own_place(p: Parse, ctx: Parse) -> None:
    """"Our place is in Union County, South Dakota ... What's the unemployment rate for us compared with Plymouth
    County, Iowa?": the county or place the scene says the asker is in, for the "us" of a comparison."""
    us = _US.search(p.t)
    if us is None:
        return
    own = next((pl for pl in sorted(ctx.places, key=lambda x: x.span[0]) if pl.level in ("county", "place")
                and _WHERE_WE_ARE.search(ctx.t[:pl.span[0]])), None)
    if own is None:
        return
    at = us.span(1) if us.group(1) else us.span(2)
    p.places.append(replace(own, span=at, how="context", text="us"))
    p.notes.append(f"“us” read as {own.label}, where the question says the asker is.")


def _use_context_measures(p: Parse, context: str, cat: Catalog, chunks: Sequence[Chunk]) -> None:
    """An ask that names no measure ("Which state is worst?") takes the one named before it."""
    tc = normalize(context)
    ctx = Parse(question=context, tc=tc, t=tc.lower())
    try:
        find_places(ctx, cat)
    except Decline:
        pass  # "How many people live in Springfield?" asked which Springfield; its measure still counts
    try:
        find_measures(ctx, cat, chunks)
    except Decline:
        return
    strong = ctx.strong() or [m for m in ctx.mentions if m.weak][:1]
    if len(strong) != 1:
        return
    end = len(p.t)
    p.mentions.append(Mention(strong[0].measure, end, end, strong[0].phrase))
    p.notes.append(f"The measure read from what comes before the question: {nice_name(strong[0].measure)}.")


def table_ids(t: str) -> list[tuple[int, int]]:
    """The spans of ACS table and variable IDs ("B23025", "B19013_001E"): a statistician's citation, never a ZIP
    code or a number (the ledger reads them only when the frame uses that table)."""
    return [m.span() for m in TABLE_ID.finditer(t)]


TABLE_ID = re.compile(r"\b[bc]\d{5}[a-z]?(?:_\d{3}[em]?)?(?:\s*(?:-|to|through|thru|and|,|\+)\s*(?:[bc]\d{5}[a-z]?)?"
                       r"_\d{3}[em]?)*\b")


def drop_excluded(p: Parse) -> None:
    """A place left out by a clause ("the US excluding California") is not a place the question is about: the
    clause reader (:mod:`.scope`) has already recorded it in ``p.exclude``; drop any place that still overlaps.
    A county or Census place left out ("other than Harris County", "Harris County aside") goes to
    ``p.leave_out``, its words and the clause's read."""
    p.places = [pl for pl in p.places if not any(a <= pl.span[0] < b for a, b in p.scope_spans)]
    listed: int | None = None  # where the last place left out ends: "leaving out Philadelphia County and Allegheny"
    for pl in sorted(p.places, key=lambda x: x.span[0]):
        if pl.level not in ("county", "place") or pl.how == "ambiguous":
            continue
        before = _LEAVE_OUT_BEFORE.search(p.t[:pl.span[0]])
        after = _LEAVE_OUT_AFTER.match(p.t[pl.span[1]:])
        # (the next of a list of places left out, from the joiner after the one before it)
        joined = listed if listed is not None and _LIST_JOIN.fullmatch(p.t[listed:pl.span[0]]) else None
        listed = None
        if before or after or joined is not None:
            listed = pl.span[1]
            p.places.remove(pl)
            p.leave_out.append(pl)
            setting = _SETTING.search(p.t[:pl.span[0]]) if after else None  # "setting Harris County aside"
            start = before.start() if before else joined if joined is not None else setting.start() if setting \
                else pl.span[0]
            end = pl.span[1] + (after.end() if after else 0)
            p.scope_spans.append((start, end))
            p.blocked.append((start, end))
            # "counties in Texas, excluding Harris County": the state read as Harris County's was the set's own
            if not any(x.level == "state" and x.state.fips == pl.state.fips for x in p.places):
                named = next((m for m in re.finditer(rf"\b({re.escape(pl.state.name.lower())}|"
                                                     rf"{pl.state.abbr.lower()})\b", p.t)
                              if not start <= m.start() < end), None)
                if named is not None:
                    p.places.append(Place("state", pl.state, None, named.span(), "exact", p.tc[slice(*named.span())]))


#: "other than Harris County", "not counting Travis", "setting aside Cook County": a county or place left out
_LEAVE_OUT_BEFORE = re.compile(r"\b(?:excluding|exclude|except(?: for)?|other than|not counting|not including|"
                               r"leaving out|leave out|leaving aside|setting aside|set aside|putting aside|apart from|"
                               r"besides|minus|but not|ignoring|without)\s+(?:the\s+)?$")
#: between two places of one list ("Philadelphia County and Allegheny County", "Kent, Sussex")
_LIST_JOIN = re.compile(r"\s*(?:,|and|or|nor|&|plus|,\s*and|,\s*or)\s*(?:the\s+)?")
#: "Harris County aside", "... with Harris County left out"
_LEAVE_OUT_AFTER = re.compile(r"\s*(?:aside|excluded|left out|set aside|not counted|not included)\b")
_SETTING = re.compile(r"\b(?:setting|leaving|putting)\s+$")


def _foreign(p: Parse, cat: Catalog) -> None:
    """Another country ("Ontario, Canada"): declined before its places' names are looked up among US places
    ("Mexico, Missouri" is a US place: the name was read with its state, so it is masked here)."""
    mt = FOREIGN.search(mask(p.t, p.blocked))
    if mt:
        raise Decline(f"“{p.tc[mt.start():mt.end()]}”: the data is the US Census Bureau's American Community Survey — "
                      "US states, counties and places, and Puerto Rico — with nothing for other countries.",
                      topic_suggestions(p, cat))


def check_scope(p: Parse, cat: Catalog, context: str = "") -> None:
    """Decline early what the data cannot answer (missing topics, sub-county places, cities, trends, other
    years, comparisons against an average), and note the scope words: the US, the 50 states, DC, Puerto Rico."""
    t = p.t
    _dollar_basis(p, cat)
    masked = mask(t, p.blocked + [m.span for m in p.strong()])
    idioms = [mt.span() for mt in re.finditer(r"\b(statistically|generally|roughly|technically|strictly|broadly) "
                                                r"speaking\b", t)]
    places_only = mask(t, p.blocked + dollar_words(t) + idioms)
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
    found = coded_level(p, cat, masked)
    if found is not None and found[0] in cat.levels:  # tracts, ZCTAs, districts, metros loaded: read by units.py
        p.coded = found
        read_periods(p, cat, context)
        return
    coded = coded_level_decline(p, cat, masked, [m.measure for m in p.strong()])
    if coded is not None:
        raise coded
    places = "place" in cat.levels
    mt = (SUB_STATE_NOT_PLACES if places else SUB_STATE).search(masked) or re.search(
        r"(?<![\d$,.])\d{5}(?![\d,%])", masked)
    if mt and not re.search(r"\b(more|less|over|under|above|below|than|least|most)\s+$", masked[: mt.start()]):
        covered = "states, counties and Census places (cities, towns, CDPs)" if places else \
            "states and counties (county-equivalents)"
        raise Decline(f"“{mt.group(0)}”: the data covers {covered} only — no neighborhoods, townships, school "
                      "districts, wards or ZIP codes.", place_suggestions(p, cat))
    if not places and CITY_WORD.search(masked):
        raise Decline("the data covers states and counties only; cities are not in it (except the "
                      "independent cities that are county-equivalents, e.g. “Baltimore city”).",
                      place_suggestions(p, cat))
    mt = FORECAST.search(masked)
    if mt:
        raise Decline(
            f"“{mt.group(0)}”: the data holds published ACS 5-year estimates of past periods (the latest 2019-2023); "
            "it makes no forecasts or projections.", topic_suggestions(p, cat))
    mt = OTHER_PRODUCT.search(masked)
    if mt:
        raise Decline(
            f"“{mt.group(0)}”: the data holds ACS 5-year estimates only (2019-2023, or 2018-2022 for poverty, "
            "health insurance and enrolment) — no 1-year or 3-year ACS figures.", topic_suggestions(p, cat))
    read_periods(p, cat, context)
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


#: "in 2023 inflation-adjusted dollars": the dollars a figure is asked in
_DOLLAR_BASIS = re.compile(r"\b(?:in\s+)?(?:(?P<year>(?:19|20)\d\d)\s+(?:inflation\s+adjusted\s+|constant\s+|real\s+)?"
                           r"dollars|inflation\s+adjusted\s+dollars|(?:constant|real)\s+dollars)\b")


def _dollar_basis(p: Parse, cat: Catalog) -> None:
    """A dollar basis that is the data's own (2023 dollars for 2019-2023 figures) is noted and set aside; another
    year's dollars would need a conversion the question did not ask to be made silently, so it is declined."""
    for mt in _DOLLAR_BASIS.finditer(p.t):
        if overlaps(mt.span(), p.blocked):
            continue
        dollars = [m.measure for m in p.strong() if m.measure.unit == "dollars"]
        ends = {m.vintage[-4:] for m in dollars}
        year = mt.group("year")
        if year and ends and year not in ends:
            raise Decline(f"the figures are published in {join_words(sorted(ends))} dollars (the last year of their "
                          f"ACS period); “{p.tc[mt.start():mt.end()]}” would need them converted, which the offline "
                          "planner does not do for one period. Ask without the dollar year, or for a change between "
                          "two periods (both are then put in the later period's dollars).", 
                          topic_suggestions(p, cat))
        p.blocked.append(mt.span())
        which = join_words(sorted(ends)) if ends else "the period's last year"
        p.notes.append(f"“{p.tc[mt.start():mt.end()].strip()}”: the figures are in {which} dollars, as the Census "
                       "Bureau publishes them for the period.")


def find_level(p: Parse, cat: Catalog) -> None:
    """Which level a set question is about: any county word wins ("Texas counties"), then cities, towns and
    other Census places (when they are loaded), then "states"."""
    t = mask(p.t, p.blocked)
    if any(pl.how == "context" for pl in p.places) and re.search(
            r"\b(both|these|those|the two|the three|the four|the five)\s+(states|counties|cities|places)\b", t):
        return  # "Show me both states' population change" after a claim about Texas and Florida: those two
    t = re.sub(r"\bunited states\b", lambda m: "_" * len(m.group(0)), t)
    words = [m.group(1) for m in LEVEL_PLURAL.finditer(t)] + [m.group(1) for m in LEVEL_SINGULAR.finditer(t)]
    t = INDEPENDENT_CITY.sub(lambda m: "_" * len(m.group(0)), t)  # county-equivalents, not Census places
    county = any(w not in ("states", "state") for w in words)
    # "places in the 50 states": places counted across states; "which five places ..." after "the states" are states
    weak = PLACE_LEVEL_WEAK.search(t)
    across = weak is not None and re.match(r"\s+(in|across|within|of)\s+(all\s+)?(the\s+)?((\d+|fifty)\s+)?"
                                            r"(states|us|usa|country|nation)\b", t[weak.end():])
    # "the 10 most populous places in the state": the state holds the places, it is not the level asked
    held = weak is not None and re.search(r"\b(in|of|within|across)\s+(the|this|that|my|our|its)\s+state\b",
                                          t[weak.end():])
    if across or held:
        words = [w for w in words if w not in ("states", "state")]
    place = "place" in cat.levels and (PLACE_LEVEL.search(t) or (not words and weak))
    counties = [pl for pl in p.places if pl.level == "county"]
    named_places = any(pl.level == "place" or (pl.county is not None and pl.county.suffix == "city")
                       for pl in p.places)  # a city named (a Census place, or an independent city)
    if place and (county or counties) and not named_places:  # "the largest cities in Travis County"
        raise Decline(
            "Census places (cities, towns, CDPs) are not nested in counties — a city can spread over several "
            "(Austin over three) — and the data does not say which places lie in which county; ask about the "
            "places of a state, or about the county as a whole.",
            [f"What are the 10 largest cities in {counties[0].state.name}?" if counties else
             "What are the 10 largest cities in Texas?"]
            + [f"What is the population of {pl.label}?" for pl in counties[:2]])
    if place:
        p.level = "place"
        kinds = {m.group(1) for m in re.finditer(r"\b(cities|city|towns|town|villages|village|boroughs|borough|cdps|"
                                                 r"cdp|census designated places?|places)\b", t)}
        if INCORPORATED.search(t):
            p.place_kind = "incorporated"
        elif CDP_ONLY.search(t) and not re.search(r"\b(cities|towns|villages)\b", t):
            p.place_kind = "cdp"
        elif kinds and kinds <= {"villages", "village"}:  # "how many villages": the places that are villages
            p.place_kind = "village"
        elif kinds and kinds <= {"towns", "town"}:
            # "the biggest towns in South Dakota" says what people call places; only a question that sets towns
            # apart ("only towns", "towns, not cities", "places that are towns") means the places whose legal kind
            # is town (South Dakota's largest of those has 1,407 people)
            if _ONLY_TOWNS.search(t):
                p.place_kind = "town"
            else:
                p.notes.append("“Towns” read as every Census place (cities, towns, villages and CDPs), as people say "
                               "it; ask for “only towns” for the places whose legal kind is town.")
        elif kinds and kinds <= {"boroughs", "borough"} and "county" not in words:
            p.place_kind = "borough"
    elif county:
        p.level = "county"
    elif words:
        p.level = "state"
