"""Finding the measures a question names, through the semantic layer's synonyms (with retrieval as a
fallback), and declining cross-tabulations ("income for Hispanic households") the extract does not have."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from ....census.codes import ACS_VARIABLE
from ....census.mentions import Mention, find_mentions
from ....census.semantic import Measure, load_gaps
from ....types import Chunk
from ..catalog import Catalog
from ..declines import Decline, generic_suggestions, needs_fetch, place_questions, topic_suggestions
from .parsed import Parse
from .vocabulary import (
    COMMON_ENGLISH,
    FUNCTION_WORDS,
    GROUP_FAMILIES,
    KNOWN_WORDS,
    LEVEL_PLURAL,
    LEVEL_SINGULAR,
    mask,
    nice_name,
)

#: synonyms of income that are also ranking words ("the poorest counties"); see :func:`find_measures`
WEALTH_ADJECTIVES = frozenset(
    {"richest", "wealthiest", "poorest", "richer", "poorer", "affluent", "wealthy", "most affluent", "least affluent"}
)


#: who a table counts, in the words questions use for it; a phrase that names the universe of a measure the
#: question asks about is part of that measure ("the share of people 25 and older with a bachelor's degree"),
#: not an age breakdown, not a second measure.  Longest forms first.
def _age(n: int) -> str:
    return (rf"(?:(?:the\s+)?(?:people|persons|population|adults|residents|individuals|americans|those|folks)\s+)?"
            rf"(?:who\s+are\s+|that\s+are\s+)?(?:aged?\s+|age\s+)?(?:over\s+the\s+age\s+of\s+{n}|{n}\s*(?:\+|plus"
            rf"|(?:years?\s+(?:old\s+)?|yrs?\s+)?(?:and|or|&)\s+(?:over|older|up|above)|years\s+of\s+age\s+(?:and|or)\s+"
            rf"(?:over|older)))(?:\s+years(?:\s+old)?)?")


UNIVERSES: list[tuple[str, re.Pattern[str]]] = [
    ("population for whom poverty status is determined",
     re.compile(r"\b(?:for\s+|among\s+|of\s+)?(?:the\s+)?(?:population|people|persons)\s+for\s+whom\s+poverty\s+"
                r"status\s+is\s+determined\b|\bpoverty\s+universe\b")),
    ("civilian noninstitutionalized population",
     re.compile(r"\b(?:for\s+|among\s+|of\s+)?(?:the\s+)?(?:_+s?\s+)?civilian\s+non\s?institutionali[sz]ed\s+"
                r"(?:population|people|residents)\b")),
    ("population 25 years and over", re.compile(r"\b" + _age(25) + r"(?![a-z0-9])")),
    ("population 16 years and over", re.compile(r"\b" + _age(16) + r"(?![a-z0-9])")),
    ("population 3 years and over", re.compile(r"\b" + _age(3) + r"(?![a-z0-9])")),
    ("civilian labor force", re.compile(r"\b(?:of\s+|in\s+|among\s+)?(?:the\s+)?(?:_+s?\s+)?(?:civilian\s+)?"
                                        r"labou?r\s+force\b")),
    ("households", re.compile(r"\b(?:of|among|for|across)\s+(?:all\s+)?(?:the\s+)?(?:_+s?\s+)?households\b")),
    ("total population", re.compile(r"\b(?:of|among|for|in)\s+(?:the\s+|its\s+|their\s+|all\s+)?(?:_+s?\s+)?"
                                    r"(?:whole\s+|entire\s+|total\s+|overall\s+|combined\s+)?population\b")),
]

#: rates whose denominator is not their table's total, by the universe their denominator is
_DENOMINATOR_UNIVERSE = {"B23025_003E": "civilian labor force"}

#: a measure and the one that says the opposite ("no health insurance", "without internet")
NEGATED = {"insured_share": "uninsured_share", "insured_population": "uninsured_population",
           "internet_subscription_share": "no_internet_share",
           "households_with_internet": "households_without_internet"}
_NEGATION = re.compile(r"\b(no|not|without|lack|lacks|lacking|dont have|do not have|does not have|doesnt have|"
                       r"has no|have no|had no|never had|uncovered by)\s+(any\s+|a\s+|an\s+)?$")
_SHARE_BEFORE = re.compile(r"\b(share|percent|percentage|proportion|fraction|portion|pct|rate)\s+(of|among|in)\s+"
                           r"(the\s+|its\s+|their\s+)?$|%\s*(of|among)\s+(the\s+)?$")


_SHARE_WORD = re.compile(r"\b(share|percent|percentage|proportion|fraction|portion|pct|rate)\b|%")


def _merge_same_family(p: Parse) -> None:
    """"Black or African American population": two names of one group joined by "or" are one mention (the
    later, which carries the noun)."""
    ordered = sorted(p.mentions, key=lambda m: m.start)
    drop = []
    for a, b in pairwise(ordered):
        if a.measure.family == b.measure.family and a.measure is not b.measure and not a.weak and not b.weak and \
                re.fullmatch(r"\s+(or|and)\s+|\s*/\s*", p.t[a.end:b.start]):
            b.start = a.start
            drop.append(a)
    p.mentions = [m for m in p.mentions if m not in drop]


def universes_of(m: Measure) -> set[str]:
    """The universes a measure is computed over, lowercase (see :data:`UNIVERSES`)."""
    out = {m.universe.lower()} if m.universe else set()
    for code in m.denominator:
        if code in _DENOMINATOR_UNIVERSE:
            out = {_DENOMINATOR_UNIVERSE[code]}
    return out


def _absorb_universes(p: Parse, cat: Catalog) -> None:
    """Phrases naming the universe of a measure the question asks about become part of it (blocked, and any
    measure mention inside them dropped); "the proportion of the civilian labor force ... unemployed" switches
    the measure to the rate over that universe."""
    masked = mask(p.t, p.blocked)
    for key, rx in UNIVERSES:
        for mt in rx.finditer(masked):
            span = mt.span()
            # a place inside the phrase ("of Florida's total population") is fine; a phrase cut by one is not
            if any(a < span[1] and span[0] < b and not (span[0] <= a and b <= span[1]) for a, b in p.blocked):
                continue
            inside = [m for m in p.mentions if span[0] <= m.start and m.end <= span[1]]
            # "estimates of total population, median age, and median household income": an item of a list of
            # measures, not the universe of the next one
            comma = re.match(r"\s*,\s*(and\s+)?", p.t[span[1]:])
            if comma and any(m.start == span[1] + comma.end() and not m.weak for m in p.mentions) and not any(
                    m.end <= span[0] and not m.weak for m in p.mentions):
                continue
            outside = [m for m in p.mentions if not m.weak and m not in inside]
            owner = None
            for m in outside:
                family = [x for x in cat.measures if x.family == m.measure.family]
                if key in universes_of(m.measure):
                    owner = (m, m.measure)
                    break
                rate = next((x for x in family if x.is_rate and key in universes_of(x)), None)
                if rate is not None and (m.measure.is_rate or _SHARE_BEFORE.search(p.t[: span[0]])
                                         or _SHARE_WORD.search(p.t[max(0, span[0] - 24): span[0] + 8])):
                    owner = (m, rate)
                    break
            if owner is None:
                continue
            m, measure = owner
            if measure is not m.measure:
                m.measure = measure
            p.mentions = [x for x in p.mentions if x not in inside]
            p.blocked.append(span)
            p.notes.append(f"“{p.tc[span[0]:span[1]].strip()}” read as who {nice_name(measure)} is computed over "
                           f"({measure.universe or key}), not as a separate measure or an age group.")


def _negations(p: Parse, cat: Catalog) -> None:
    """"has no health insurance", "households without internet": the measure that says the opposite."""
    for m in p.mentions:
        other = NEGATED.get(m.measure.name)
        if other and _NEGATION.search(p.t[max(0, m.start - 30): m.start]):
            alt = cat.measure(other)
            if alt is not None:
                m.measure = alt


def _group_counts(p: Parse, cat: Catalog) -> None:
    """"the largest Black population", "the most Hispanic residents": a count of the group, not its share —
    unless a share word says so."""
    for m in p.mentions:
        if m.weak or not m.measure.is_rate or m.measure.family not in GROUP_FAMILIES:
            continue
        after = re.match(r"\s+(population|populations|residents|people|persons|inhabitants|individuals|community|"
                         r"communities)\b", p.t[m.end:])
        if not after or re.search(r"\b(share|percent|percentage|proportion|fraction|pct|rate)\b|%",
                                  p.t[max(0, m.start - 40): m.start]):
            continue
        count = next((x for x in cat.measures if x.family == m.measure.family and x.additive), None)
        if count is None:
            continue
        end = m.end + after.end()
        p.mentions = [x for x in p.mentions if x is m or not (m.end <= x.start < end)]
        m.measure, m.end = count, end


def _listed_counts(p: Parse) -> None:
    """"how many people live there, the median age and the median home value": a population asked for in a
    list of measures is asked for, not just a word of the question."""
    strong = [m for m in p.mentions if not m.weak]
    if not strong or any(m.measure.unit == "count" for m in strong):
        return
    for m in p.mentions:
        if m.weak and m.measure.name == "population" and re.match(r"(how many|number of)\b", m.phrase) and \
                re.match(r"\s*(live|lives|living|reside|resides|are there|in total)\b", p.t[m.end:]):
            m.weak = False


#: totals that a question may restrict to a subgroup the data does not count ("people ... born in Nevada")
TOTALS = frozenset({"population", "households", "housing_units"})
#: words a question uses around a total that restrict nothing
_FILLER = frozenset("""roughly actually approximately about around exactly currently today right now total overall
    altogether together combined
    number count people persons residents inhabitants folks humans households homes houses dwellings units housing
    live lives living reside resides residing located there here tell give show find know want wondering curious
    estimate estimates figure figures data census acs please thanks hi hello hey quick question real really pretty
    approx approximate ballpark rough exact latest recent current ppl pple peeps united america americans nation
    country cities city towns town villages village places place cdps cdp municipalities boroughs""".split())


#: "how many registered nurses live ...": the people counted, named before the verb
_HOW_MANY = re.compile(r"\bhow many\s+((?:[a-z]+\s+){1,4}?)(?:live|lives|are|is|were|was|reside|work|in|of|have|has|"
                       r"there)\b")
#: "people ... who have serious difficulty walking", "households that heat with wood", "homes lacking plumbing"
_WHO = re.compile(r"\b(?:people|persons|residents|households|homes|houses|housing units|units|women|men|children|kids|"
                  r"adults|seniors|workers)\b(?:[\s,]+[a-z_]+){0,8}?"
                  r"[\s,]+((?:who|that|which|with|without|have|has|had|lack\w*|heat\w*|use|using|born|were|are)"
                  r"(?:[\s/,]+[a-z_]+){1,8})")


def restriction(p: Parse, cat: Catalog, named: Sequence[Mention] = ()) -> list[str]:
    """The words that restrict the people or homes a question counts to a subgroup — right after "how many"
    ("registered nurses"), or in a clause after the noun ("people ... who have serious difficulty walking",
    "households ... heat w/ wood", "homes ... lack complete plumbing") — that no measure, place or limit explains.
    Preambles and asides elsewhere in the question are not read."""
    # places, limits and scope clauses masked; the measure's own words kept (the noun the clause hangs on)
    t = mask(p.t, p.blocked + [th.span for th in p.thresholds] + p.scope_spans)
    found: list[str] = []
    for rx in (_HOW_MANY, _WHO):
        for mt in rx.finditer(t):
            found += [w for w in re.findall(r"[a-z]+", mt.group(1)) if len(w) > 2 and w not in KNOWN_WORDS
                      and w not in COMMON_ENGLISH and w not in _FILLER and w not in cat.state_words
                      and w not in FUNCTION_WORDS and not LEVEL_PLURAL.fullmatch(w)
                      and not LEVEL_SINGULAR.fullmatch(w)]
    own = {w for m in (*p.mentions, *named) for w in re.findall(r"[a-z]+", p.t[m.start:m.end])}
    return [w for w in dict.fromkeys(found) if w not in own]


def restricted_decline(p: Parse, cat: Catalog, words: list[str], what: str) -> Decline:
    """The decline of a count restricted to a subgroup no loaded table counts (see :func:`restriction`)."""
    return Decline(f"“{' '.join(words)}”: the data counts all {what}, not only those the question describes — no "
                   "loaded table has that breakdown, and the total would answer a different question. The table "
                   "that has it can be found with `python -m sage census tables --search ...` (or on the Explore "
                   "page) and loaded with `census fetch` (needs a Census API key).", topic_suggestions(p, cat))


def _not_loaded(p: Parse, cat: Catalog) -> None:
    """A measure the question names that reads a table not loaded ("households that rent" is tenure, B25003) is
    declined with ``needs_fetch``, naming the table — never answered with a loaded measure that merely shares a
    word with it (the median rent)."""
    if not cat.inactive:
        return
    every = find_mentions(p.t, list(cat.measures) + list(cat.inactive), blocked=p.blocked, fuzzy=False)
    inactive = {m.name for m in cat.inactive}
    # "median age at first marriage for women": a topic the data has no table for at all is declined as such
    # (check_scope names it), not as a fetch of the table of a word it shares ("women")
    masked = mask(p.t, p.blocked)
    if any(gap.find(masked, [m.span for m in every if m.measure.name not in inactive]) and not gap.lifted_by(
            x.measure for x in every) for gap in load_gaps()):
        return
    active = [m for m in p.mentions if not m.weak]
    for m in every:
        if not m.weak and m.measure.name in inactive:
            # "median age is over 65": a comparison and a number after a measure asked for is a threshold
            if re.match(r"(over|under|above|below|older than|younger than|more than|less than)\s+\d", m.phrase) and \
                    any(0 <= m.start - a.end <= 12 for a in active):
                continue
            words = restriction(p, cat, every)
            if words:  # "women who had a baby": not the count the fetch would load either
                raise restricted_decline(p, cat, words, nice_name(m.measure))
            raise needs_fetch(m.measure, p.tc[m.start:m.end], cat, suggestions=topic_suggestions(p, cat))
    # "mean household income (not the median)": the data has the median; the mean is another table ("I mean the
    # median home value" is masked: a correction)
    for m in p.mentions:
        if not m.weak and m.measure.unit == "dollars" and "median" in m.measure.label.lower() and \
                re.search(r"\bmean\b|\(?not (the )?median\)?", masked[max(0, m.start - 12): m.end + 20]):
            raise Decline(
                f"the data has the {nice_name(m.measure)} ({', '.join(m.measure.numerator)}), not the mean; a mean "
                "household income is aggregate income (B19025) / households (B11001), tables that are not "
                "loaded. Load them with `python -m sage census fetch --vintage 2023 --tables B19025,B11001`, or ask "
                "for the median.", [f"What is the {nice_name(m.measure)} in {pl.label}?" for pl in p.places[:1]
                                    if pl.level == "county"] or generic_suggestions(),
                kind="needs_fetch", fetch={"tables": ["B19025", "B11001"], "vintage": 2023,
                                           "geographies": ["state", "county"]})


def _sums(p: Parse, cat: Catalog) -> None:
    """"the total enrolled in college, counting both undergraduates and graduate students": two counts asked for
    together are the measure that adds them up, when the semantic layer defines one."""
    if not re.search(r"\b(total|combined|together|both|in all|altogether|sum)\b", p.t):
        return
    strong = [m for m in p.mentions if not m.weak and m.measure.kind == "direct" and m.measure.additive]
    for a, b in pairwise(sorted(strong, key=lambda m: m.start)):
        codes = {*a.measure.numerator, *b.measure.numerator}
        total = next((x for x in cat.measures if x.kind == "sum" and set(x.numerator) == codes and not x.subtract),
                     None)
        if total is not None and re.search(r"\b(and|plus|&)\b|,", p.t[a.end:b.start]):
            a.measure, a.end = total, b.end
            # the parts, named again elsewhere ("enrolled in college ... both undergraduates and ..."), are in it
            p.mentions = [m for m in p.mentions if m is a or (m is not b and not set(m.measure.codes) <= codes)]
            p.notes.append(f"{nice_name(total)} = {total.formula}, both counted together as asked.")
            return


def find_measures(p: Parse, cat: Catalog, chunks: Sequence[Chunk]) -> None:
    """The measures the question names, outside place names; a measure "for" a population group is declined.
    With none named, a confident retrieval hit on an ACS variable the semantic layer knows is used instead."""
    mentions = find_mentions(p.t, cat.measures, blocked=p.blocked)
    p.mentions = mentions
    _not_loaded(p, cat)
    _merge_same_family(p)
    _negations(p, cat)
    _group_counts(p, cat)
    _absorb_universes(p, cat)
    _listed_counts(p)
    _sums(p, cat)
    mentions = p.mentions
    # "share of the population that is Black": the population is the denominator, not a measure of its own
    rates = [m for m in mentions if not m.weak and m.measure.is_rate]
    for m in mentions:
        if m.measure.name == "population" and not m.weak and rates and re.search(
                r"\b(share|percent|percentage|proportion|fraction|portion|pct)\s+of\s+(the\s+)?(total\s+)?$"
                r"|%\s*of\s+(the\s+)?$", p.t[: m.start]):
            m.weak = True
    # "who's richer per person?": a wealth adjective per person is the income per person
    per_capita = next((m for m in cat.measures if m.name == "per_capita_income"), None)
    for m in mentions:
        if m.phrase in WEALTH_ADJECTIVES and per_capita is not None:
            per = re.match(r"\W*(?:\w+\s+){0,2}?per\s+(person|capita|head|resident|inhabitant)\b", p.t[m.end:])
            if per:
                m.measure, m.end = per_capita, m.end + per.end()
    # "poorest counties by poverty rate": a wealth adjective only names income when nothing else is named
    if any(not m.weak and m.phrase not in WEALTH_ADJECTIVES for m in mentions):
        for m in mentions:
            if m.phrase in WEALTH_ADJECTIVES:
                m.weak = True
    # "how many people and how many housing units": two counts asked, each in a "how many" of its own
    if len(re.findall(r"\bhow many\b", p.t)) > 1:
        for m in mentions:
            if m.weak and m.measure.name == "population" and m.phrase.startswith("how many"):
                m.weak = False
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
    masked_places = mask(p.t, [pl.span for pl in p.places])
    for a, b in pairwise(strong):
        # the words between, without set-aside phrases ("in 2023 dollars") and commas
        gap = " " + " ".join(re.sub(r"[_,]+", " ", mask(p.t, p.blocked)[a.end:b.start]).split()) + " "
        group, other = (b, a) if re.fullmatch(
            r"\s*(for|among|amongst|of|within)\s+(the\s+)?((households?|people|persons|residents|those|families|"
            r"workers)\s+(whose\s+householders?\s+(is|are)|(who|that)\s+(is|are)|headed\s+by|with\s+an?)\s+)?", gap) \
            else (a, b)
        # "share of noncitizens in Florida (who) have health insurance": the group is who the measure is about
        about = group is a and re.fullmatch(
            r"\s*(in\s+[_ ]+\s*|,\s*)?(who|that|which)?\s*(have|has|had|are|is|were|was|with|hold|holding|held|earn|"
            r"earning|lack|lacking|without)\b[^,;]{0,25}",
            masked_places[a.end:b.start] + (b.phrase.split()[0] + " " if b.phrase else ""))
        if group.measure.family in GROUP_FAMILIES and other.measure.family not in GROUP_FAMILIES and (
                group is b or re.fullmatch(r"\s*", gap) or about):
            # "the coverage rate of noncitizens": a measure defined for that group answers it
            cross = next((x for x in cat.measures if x.cross == (other.measure.family, group.measure.family)), None)
            if cross is None and other.measure.name == "population":
                # "the Hispanic pop", "the Hispanic or Latino population": the group's own count
                counted = group.measure.name.removesuffix("_share") + "_population"
                cross = next((x for x in cat.measures if x.name == counted), None)
            if cross is not None:
                other.measure, other.start, other.end = cross, min(a.start, b.start), max(a.end, b.end)
                p.mentions = [m for m in p.mentions if m is not group]
                continue
            place = next((pl for pl in p.places if pl.how != "ambiguous"), None)
            sugg = place_questions(place, cat, (other.measure.name, group.measure.name, "population")) \
                if place else []
            raise Decline(
                f"{nice_name(other.measure)} for one population group (“{p.tc[a.start:b.end]}”) is a "
                "cross-tabulation the shipped extract does not have; it has each measure for everyone.",
                sugg or generic_suggestions())
    # "... the coverage rate of the native born and the coverage rate of noncitizens": the same measure again,
    # for another group (the second mention of one measure is folded away by the family rules)
    chosen = {m.measure.cross[0] for m in p.mentions if m.measure.cross}
    for g in [m for m in p.mentions if not m.weak and m.measure.family in GROUP_FAMILIES]:
        before = p.t[max(0, g.start - 30):g.start]
        if re.search(r"\b(rate|rates|coverage|share)\s+(for|among|of)\s+(the\s+|all\s+)?$", before):
            cross = next((x for x in cat.measures if x.cross and x.cross[0] in chosen
                          and x.cross[1] == g.measure.family), None)
            if cross is not None:
                g.measure = cross
    mentions = p.mentions
    if not [m for m in mentions if not m.weak]:
        # "B19013_001E for 0500000US16001?": a variable cited by its code is the measure over it
        for mt in _VARIABLE.finditer(p.t):
            cited = mt.group(0).upper()
            named = next((x for x in cat.measures if x.kind == "direct" and x.numerator == (cited,)), None)
            if named is not None and not any(m.measure is named for m in p.mentions):
                p.mentions.append(Mention(named, mt.start(), mt.end(), mt.group(0)))
                p.notes.append(f"“{cited}” read as {nice_name(named)} (its variable code).")
        mentions = p.mentions
    if not mentions and not _names_a_gap(p, cat):
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


#: an ACS variable's code ("B25001_001E")
_VARIABLE = re.compile(r"\b[bc]\d{5}[a-z]?_\d{3}e\b")


def _names_a_gap(p: Parse, cat: Catalog) -> bool:
    """Whether the question names a topic the data lacks ("average commute time"; the ``gaps`` of the semantic
    layer) whose tables are not loaded.  The scope check declines it; a variable found by the meaning of the other
    words would answer another question, and embedding the question for it loads the model (a second, once per
    process)."""
    text = mask(p.t, p.blocked)
    return any(gap.find(text) for gap in load_gaps() if not gap.lifted_by(cat.measures))


#: "added the most people", "lost residents": the number of people, named by what happened to it
_PEOPLE_CHANGED = re.compile(r"\b(lost|lose|loses|gained|gain|gains|added|add|adds|losing|gaining|adding)\s+"
                             r"(the\s+)?((most|fewest|more|fewer|least)\s+)?(people|residents|population|inhabitants)\b")


def people_changed(masked: str, cat: Catalog) -> Measure | None:
    """Population, when the question names it by what happened to the people ("which counties added the most
    people"): a measure named, unlike "grew" alone, which a follow-up reads as the change of the measure before."""
    return cat.measure("population") if _PEOPLE_CHANGED.search(masked) else None


def implied_measure(masked: str, cat: Catalog) -> Measure | None:
    """Superlatives that name a measure by themselves: "most populous", "largest counties", "oldest"."""
    rules = [
        (r"\b(largest|biggest|smallest|most populous|least populous|populous|bigger|larger|smaller|"
         r"more populous|less populous|how big|how large|how small|size of|sizes of)\b", "population"),
        (r"\b(most expensive|least expensive|priciest|cheapest|most affordable|least affordable)\b",
         "median_home_value"),
        # "which counties grew fastest", "lost people": a change in the number of people
        (r"\b(grew|grow(s|ing|n)?|growth|shr[aiu]nk\w*)\b", "population"),
        (_PEOPLE_CHANGED.pattern, "population"),
        (r"\b(most educated|least educated|best educated)\b", "bachelors_or_higher_share"),
    ]
    for rx, name in rules:
        if re.search(rx, masked):
            return cat.measure(name)
    return None
