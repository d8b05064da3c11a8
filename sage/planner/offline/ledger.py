"""The word ledger: every word of a question is accounted for, or the question is not answered.

Why: a reader that cannot say what it did not read keeps guessing.  Each wrong answer the blind question sets found
had the same cause — a part of the question was not read ("percent" before a change, a fourth city in a list, a
misspelled state, "which four"), and the rest of the question was answered as if it were the whole.  The ledger
makes that impossible for the whole class: after a question is read into a frame, each word of the ask is

* **read by a reader** — it lies in a span a reader marked (a place, a measure, a threshold, a period, a scope
  clause, a level or unit code); or
* **named by the frame** — it is a word of :data:`FEATURE_WORDS` whose feature the frame has (``percent`` is read
  only when a change is ranked by its percent, or the measure is a rate or share; ``four`` only when the frame
  keeps four rows; ``except`` only when something is left out); or
* **a function word** of the closed, reviewed list :data:`FUNCTION_WORDS` (articles, pronouns, question words,
  politeness, the verbs of asking) — never a word that could change the answer.

What is left is **unread**.  An unread word close to something known (a state, a postal code, a number word, a
measure's word, a place's name) asks back ("Did you mean Colorado?"); any other unread word declines, naming it.
The lists are data of this module alone: a word joins them only when a reader or a frame feature really accounts
for it, never to make a question pass.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..edits import Edit, EditKind
from .catalog import Catalog
from .frame.frame import Op, Query
from .frame.intent import NAME_THEM
from .read.parsed import Parse
from .read.parser import TABLE_ID
from .read.periods import dollar_words
from .read.remarks import SYMBOLS
from .read.vocabulary import NUM_WORDS, PURPOSE_LEAD, PURPOSE_NOUNS

#: a word of the question: letters and digits, a number with its separators, or a percent sign
_TOKEN = re.compile(r"\$?\d(?:[\d,]*\d)?(?:\.\d+)?%?|[a-z][a-z0-9]*|%")

#: words that never change what is asked: articles, pronouns, auxiliaries, question words, connectives, politeness,
#: the verbs and nouns of asking for data.  Reviewed: no modifier (percent, share, rate, per, average, mean, each,
#: combined, total, except, other, only, not, without, median, all) and no name is here.
FUNCTION_WORDS = frozenset("""
a an the this that these those there here it its it is they them their theirs we us our ours i me my mine you your
yours he she his her him one ones someone anyone something anything
is are was were be been being am do does did done doing have has had having will would shall should can could may
might must need needs needed want wanted wants wanna gonna gotta let lets like likes would
what whats which who whos whom whose where wheres when how hows why
and or but so yet nor then than also too as if because since while whereas though although either neither
of in on at to for from by with about into onto over under per via across within among amongst around through
up down out off
please pls plz thanks thank thx ty cheers hi hello hey ok okay k yes yeah yep sure great cool awesome wow oh ah
hmm um uh well alright right sorry quick quickly question questions curious wondering wonder wondered trying
tell show give get got find found look looking see seen know knew known check pull list lists listing provide
share
data number numbers figure figures stat stats statistic statistics info information estimate estimates estimated
value values amount count result results answer answers report reports
actually really just exactly roughly approximately about around currently presently today now nowadays these days
latest current recent most recent newest
any some many much more most less least very quite pretty fairly
acs census survey surveys american community bureau year yr years estimate
place places area areas
provide report reporting give giving pull put use using say make take taking taken saw see show showing need
tell telling got gather grab fetch return print display describe summarize summary overview profile snapshot glance
brief basically whatever meaning mean means defined define measured measure terms published available according
story piece memo brief briefing report reporter project class homework assignment paper deadline grant application
article newsletter presentation talk slide slides deck blog post research thesis essay lecture unit lesson course
teacher student students editor journalist analyst planner planning council staff board consortium curiosity
curious interested interest interesting neat nice fine good thing stuff random ooh ah aha boss asked ask asking asks
name hold holds holding held margin margins error errors moe whether policy everyone everybody identifying
identify identifies st nd rd th help helps helpful helping appreciate appreciated bunch lot lots tho though
lovely perfect excellent amazing along doing itself themselves yourself
committee committees commission office senator senators representative representatives speaker speakers aide aides
legislator legislators delegation chamber summit hearing remarks constituents matter separate entirely different
specifically particularly especially express expressed deliberately exactly precisely kindly able kind lol lmao
haha hehe btw fyi imo tbh advance together
confirm splendid wonderful fantastic brilliant even
determine determining calculate calculating compute computing select filter ie eg etc rn atm recorded record records saw
presumably probably perhaps maybe arguably admittedly naturally obviously clearly course
actual
experienced experience experiences posted registered showed shows had
cross sectional sectionally snapshot headline headlines rough ballpark
superb terrific grateful thankful appreciative glad happy favor favour possible possibly
table tables chart charts graph graphs map maps column columns fine bar bars plot plots visual visualization
topic topics subject separate different unrelated
son sons daughter daughters kid kids child children husband wife partner spouse mom dad mother father parents family
grandma grandmas grandpa grandpas grandmother grandmothers grandfather grandfathers grandparents grandson granddaughter
ancestor ancestors relatives aunt uncle cousin cousins love loved loves
friend friends boss coworker coworkers colleague colleagues neighbor neighbors niece nephew
patron patrons client clients caller callers reader readers viewer viewers listener listeners constituent constituents
writing deciding choosing advise going jurisdiction jurisdictions
""".split())

# NB: a few words above also appear in FEATURE_WORDS (more, most, less, least, share, per, than, all ...): a word in
# FUNCTION_WORDS is read wherever it stands, so only words that never change the answer by themselves are kept
# here; see _NEVER_FUNCTION, which takes the modifiers back out.

#: modifiers that change an answer: never function words, whatever the list above says
_NEVER_FUNCTION = frozenset("""
percent percentage pct share rate per average mean each combined total except other only not without median all
more most less least than
""".split())

READ_ALWAYS = FUNCTION_WORDS - _NEVER_FUNCTION

#: the words each feature of a frame names.  A word is read when the frame has the feature.
FEATURE_WORDS: dict[str, frozenset[str]] = {k: frozenset(v.split()) for k, v in {
    # one value per place, a comparison of named places
    "compare": "compare compared comparing comparison vs versus v between both each difference differ gap higher "
               "lower more less than bigger smaller larger greater side against relative other one better worse "
               "stack stacks high low best worst highest lowest most least biggest smallest largest richest poorest "
               "which big large wide narrow small cheap cheaper expensive pricey pricier affordable",
    "several": "each both all every respective respectively rank ranked ranking order ordered sort sorted plus",
    # a ranking and its size and direction
    "rank": "top bottom highest lowest most least largest smallest biggest greatest fewest best worst rank ranked "
            "ranking rankings order ordered sort sorted leading lead leads high low higher lower max maximum min "
            "minimum first last number no larger bigger smaller greater fewer more less descending ascending limit",
    "rank_one": "which who where one single",
    "superlative": "cheapest priciest expensive costliest richest poorest wealthiest oldest youngest fastest slowest "
                   "most least biggest smallest largest highest lowest best worst descending ascending order faster "
                   "slower higher lower bigger smaller more less cheaper pricier older younger richer poorer",
    # a filtered list, a count, a total, a share of the parent, per parent
    "list": "which ones list all every any above below over under more less than at least most exceeding exceeds "
            "exceed greater smaller fewer higher lower bigger between descending ascending order ordered sort sorted "
            "ranked",
    "count": "how many number count counts",
    "total": "total totals combined together sum altogether overall all add added pooled aggregate aggregated sums",
    "share": "share percent percentage pct proportion fraction portion part % what all",
    "whole_place": "whole entire overall statewide countywide citywide total single one all",
    "measures": "and plus also with along well both",
    "per_parent": "each every per by",
    # a change over time
    "change": "change changes changed changing grow grew grown growing growth increase increased increases "
              "decrease decreased declined decline declines fell fall drop dropped rose risen rise gain gained gone "
              "gains lose lost loss losses shrink shrank shrunk shift shifted trend trends since between from to "
              "over time period periods then go went up down added add compared earlier ago previous prior before "
              "later back how much number versus comparing comparison compare against points absolute more less "
              "fewer than booming boomed boom soared soaring surged surging skyrocketed exploded",
    "pct_change": "percent percentage pct % rate relative fastest slowest",
    "keep_loss": "lose lost loss losses declined decline fell shrank shrunk dropped",
    "keep_gain": "gain gained gains grew grow growth increased rose added",
    "significant": "significant significantly statistically",
    # every comparison and change is tested for significance: the words that ask for the test are read by it
    "tested": "significant significantly statistically significance 90 90% confidence margin margins error errors moe "
              "noise sampling real really true actual actually different difference differ within inside beyond "
              "gap meaningful level plus wash legit legitimate valid fair non overlapping nonoverlapping statistical "
              "sense given z zscore score stat stats sig",
    "dollars_real": "inflation adjusted adjusting adjust real constant todays dollars dollar once after",
    "dollars_nominal": "nominal unadjusted dollars dollar raw",
    # the measures' kinds
    "rate": "rate rates percent percentage pct share proportion % fraction portion divided over out per",
    "median": "median typical middle",
    "dollar": "dollars dollar $",
    "count_measure": "number how many count total raw headcount headcounts",
    "ratio": "ratio per each every divided by for",
    "sum_measure": "both counting including together combined plus and",
    "both_periods": "period periods each both",
    "earlier_period": "back then earlier previous prior before ago older old period periods survey own published as "
                      "once in",
    # "is it true that most counties lost people?": the figures are shown, the claim's words are the claim's
    "claim": "true claim claims says said heard swears half double doubled most majority minority 1 in 10 about "
             "actual actually really",
    "followup": "same instead again now then also too what how about better worse",
    "followup_add": "add added adding plus include including also too with comparison compare comparing and column "
                    "columns another further extra additional alongside beside next second third",
    # "drop the rent column", "without median age": a measure taken out of the answer (the edit drop_measure)
    "followup_drop": "drop remove removing without leave out take get rid of no more lose skip minus column columns "
                     "just only keep",
    "followup_swap": "instead swap switch replace change rather widen widened expand expanded broaden extend narrow "
                     "narrowed restrict restricted limit limited filter filtered zoom break broken keep flip flipped "
                     "reverse reversed invert",
    # the set's levels
    "state": "state states statewide level",
    "county": "county counties parish parishes borough boroughs independent level planning region regions census "
              "area areas municipio municipios equivalent equivalents",
    "place": "city cities town towns place places village villages municipality municipalities cdp cdps "
             "community communities",
    "nation": "us usa nation national nationally nationwide country america americans american united states "
              "countrywide whole entire all",
    "nationwide": "us usa nation national nationally nationwide country america united states countrywide whole "
                  "entire all every overall",
    "fifty": "50 fifty states",
    "contiguous": "contiguous lower 48 continental",
    "incorporated": "incorporated only just not no excluding cdp cdps",
    "cdp_only": "cdp cdps census designated only just",
    "kind_only": "only just not no excluding other than cities city villages village cdps cdp boroughs towns",
    "ranked_after": "next after that those then remaining rest",
    "exclude": "except excluding exclude excluded without other than not leaving leave out but besides minus omit "
               "omitting ignore ignoring",
    "include": "including include included includes with plus counting also and or territory territories "
               "alongside along treat treated count counts as",
    "within": "in within inside",
    "with_us": "us national nation average country overall compared",
    "per_n": "per capita each every",
    # levels read by their codes (tracts, ZIP codes, districts, metro areas)
    "unit": "zip zips zipcode zipcodes code codes zcta zctas tract tracts census district districts congressional cd "
            "cds metro metros metropolitan micropolitan area areas region cbsa msa",
    "display_map": "map mapped choropleth",
    "display_bar": "chart bar bars graph plot",
    "display_table": "table",
    # narrowing words that a narrowed set reads
    "narrowed": "only just narrow narrowed down limit restrict keep",
}.items()}

#: short forms read as the word they stand for
ABBREVIATIONS = {"w": "with", "abt": "about", "hh": "household", "hhs": "households", "pct": "percent",
                 "ppl": "people", "yr": "year", "yrs": "years", "u": "you", "ur": "your", "r": "are", "thru": "through",
                 "vs": "versus", "v": "versus", "cnty": "county", "countys": "counties", "countie": "county",
                 "citys": "cities", "govt": "government", "info": "information", "approx": "approximately",
                 "wat": "what", "wut": "what", "ed": "education", "compair": "compare", "municipios": "counties",
                 "municipio": "county", "diff": "difference", "desc": "descending", "asc": "ascending"}

#: phrases that never change what is asked, read before single words ("the most recent", "side by side")
_PHRASES = (
    r"(?:the )?most recent", r"at a glance", r"side by side", r"in (?:a |one )?(?:single )?row", r"one row",
    r"of any race", r"point estimates?", r"as a whole", r"next door", r"(?:in|thank you in) advance",
    # ("the rate for us compared with Plymouth County": "us" is a place there)
    r"for (?:me|us)(?! (?:compared|vs|versus|against|and|or|than|here)\b)",
    # "the ACS 5-year estimates", "five-year data", "latest 5yr", "five years earlier": the survey, its period
    r"(?:5|five) ?(?:years?|yrs?)(?: (?:earlier|ago|before|prior|back|apart|estimates?|data|acs|survey))?",
    r"(?:the )?city proper", r"(?:the )?city itself", r"as published",
    r"in (?:percent(?:age)?|relative|absolute|raw|dollar|nominal|real) terms", r"(?:population|size)[ -]?wise",
    r"statistically speaking", r"according to", r"if (?:possible|you can)", r"putting together", r"no worries",
    r"stack(?:s)? up", r"running (?:tonight|tomorrow|today|this \w+)", r"on deadline", r"right now", r"these days",
    r"i mean", r"at the moment", r"excuse me", r"por favor", r"(?:muchas )?gracias", r"obrigad[oa]", r"you know",
    r"(?:counties|county) (?:or|and) independent cities", r"(?:the )?latest (?:acs|data|numbers|figures|estimates)",
    # the purpose of the question: "for a housing affordability piece", "for a story on Latino communities,"
    r"for (?:a|an|my|our|the) (?:\w+ ){0,3}(?:" + PURPOSE_NOUNS + ")"
    r"(?: (?:on|about) (?:\w+ ){0,3}?\w+(?=,))?",
    r"(?:a )?(?:different|diffrent|differnt|another|new|separate|unrelated) question",
    r"for (?:\w+ )?purposes", r"for (?:a|an|my|our|the|this) (?:\w+ ){0,2}(?:purpose|use|audience)",
    r"(?:a |my |our |his |her )?(?:school|class|college|work|homework) (?:project|assignment|report|paper)",
    r"(?:for )?another (?:assignment|class|project)",
    # "per the latest ACS five-year estimates": according to; "for the most recent period available"
    r"per (?:the )?(?:latest |most recent |newest |current |\d{4} )?(?:acs|census|american community survey|data|"
    r"estimates?|figures|numbers|release)(?: (?:5|five) year)?(?: estimates| data| release)?",
    r"(?:for |from |in )?(?:the )?(?:most recent|latest|newest|current) (?:period|year|data|release|estimates|"
    r"figures|numbers)(?: available)?",
    r"first things first",
    # "Dakota County, Nebraska across the river": where a place lies, said of a place the question names
    r"across the (?:river|border|state line|line|bridge|lake|bay|street|way|water)",
    # "for soc 201", "for my econ 101 class": a course
    r"for (?:my |our |a |an )?[a-z]{2,6} ?\d{3}[a-z]?(?: class| course| project| assignment)?",
)
FUNCTION_PHRASES = re.compile(r"\b(?:" + "|".join(_PHRASES) + r")\b")

#: number words, for N of a ranking and for "did you mean" of a misspelled one
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "dozen": 12, "thirty": 30,
                "fifty": 50, "hundred": 100}


@dataclass(frozen=True)
class Word:
    """One word of the ask: its text, where it stands, and what read it (empty: nothing did)."""

    text: str
    start: int
    end: int
    by: str = ""


@dataclass(frozen=True)
class Ledger:
    """Every word of the ask with what read it."""

    words: tuple[Word, ...]

    @property
    def unread(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(w.text for w in self.words if not w.by))


def features(q: Query, p: Parse, prior: Query | None = None, edits: Sequence[Edit] = ()) -> set[str]:
    """The features of frame ``q`` (see :data:`FEATURE_WORDS`); ``prior`` is the frame a follow-up edited, with
    ``edits``."""
    f: set[str] = set()
    if any(e.kind is EditKind.DROP_MEASURE for e in edits):
        f.add("followup_drop")
    if prior is not None:
        f.add("followup")
        before = set(prior.measures) | {pl.geo_id for pl in prior.geo.places}
        after = set(q.measures) | {pl.geo_id for pl in q.geo.places}
        if after - before and before & after:
            f.add("followup_add")
        if after - before and before - after:
            f.add("followup_swap")
        if q.rank != prior.rank or q.geo != prior.geo or q.conditions != prior.conditions:
            f.add("followup_swap")
        if prior.periods or q.periods:
            f.add("both_periods")
    if re.search(r"\b(is it true|true that|says|said|claims?|heard|swears)\b", p.t):
        f.add("claim")
    if q.ratio:
        f.add("ratio")
    if q.geo.units or q.geo.level in ("tract", "zcta", "cd", "cbsa") or p.coded:
        f.add("unit")
    if q.geo.independent_cities:
        f |= {"place", "county"}
    if q.periods and (q.change is None and q.op is not Op.CHANGE):
        f.add("earlier_period")
    op = q.op
    places = q.geo.places
    if len(places) > 1 or q.with_us or op is Op.DIFFERENCE:
        f |= {"compare", "several"}
    if op is Op.RANK or (op is Op.CHANGE and q.rank is not None):
        f.add("rank")
        if q.rank is not None and q.rank.n == 1:
            f.add("rank_one")
    if op in (Op.LIST, Op.COUNT) or q.conditions:
        f.add("list")
    if op is Op.COUNT or (q.change is not None and q.change.count):
        f.add("count")
    if op is Op.TOTAL or q.combined or q.geo.level == "nation":
        f.add("total")
    if op is Op.SHARE or q.share_of:
        f.add("share")
    if len(q.measures) > 1:
        f.add("measures")  # "pop median age + unemployment rate": the measures listed
    if len(places) == 1 and op not in (Op.RANK, Op.LIST, Op.COUNT, Op.PER_PARENT) and q.rank is None:
        # "the overall poverty rate for South Carolina, one number for the whole state": one place's own figure
        f.add("whole_place")
    if op is Op.PER_PARENT or (q.rank is not None and q.rank.per_parent):
        # "which state has the most counties": the parent, what is counted, and its ranking
        f |= {"per_parent", "county", "place", "count", "state", "rank", "superlative"}
    if op in (Op.LIST, Op.RANK, Op.COUNT, Op.TOTAL, Op.PER_PARENT) or len(places) > 1:
        f.add("several")
    if len(places) > 1 or q.with_us or op in (Op.CHANGE, Op.DIFFERENCE) or q.change is not None:
        f.add("tested")
    # (a list or a count keeps every row that passes its limits: "the lowest" read there would answer a list of
    # every state as "the five states with the lowest share")
    if op is Op.RANK or q.rank is not None:
        f.add("superlative")
    # "in the United States" reads as the scope of a set only when the set is searched (ranked, filtered, counted,
    # added up); a plain list of every state does not answer "what share of US households ..."
    if not places and not q.geo.within and (op in (Op.RANK, Op.COUNT, Op.TOTAL, Op.CHANGE, Op.SHARE) or
                                            (op is Op.LIST and q.conditions)):
        f.add("nationwide")
    if op is Op.CHANGE or q.change is not None:
        f.add("change")
        if q.rank is None and (places or (not places and bool(q.sums))):
            f.add("pct_change")  # one place's change is shown with its percent change
        else:
            f |= {"several", "rank", "superlative"}
        ch = q.change
        if ch is not None:
            if ch.by == "pct_change":
                f.add("pct_change")
            if "loss" in ch.keep:
                f.add("keep_loss")
            if "gain" in ch.keep:
                f.add("keep_gain")
            if "significant" in ch.keep:
                f.add("significant")
    # the dollars a change is in, or the question asked for ("in nominal dollars")
    for dollars in {q.change.dollars if q.change is not None else "", p.dollars} & {"real", "nominal"}:
        f.add(f"dollars_{dollars}")
    for m in (*q.measures, *q.sums):
        if m.unit == "percent":
            f.add("rate")
        if "median" in m.name or "median" in m.label.lower():
            f.add("median")
        if m.unit == "dollars":
            f.add("dollar")
        if m.unit == "count":
            f.add("count_measure")
        if m.kind == "sum":
            f.add("sum_measure")
    if len(q.periods) > 1:
        f.add("both_periods")
    levels = {q.geo.level} | {pl.level for pl in places}
    for lv in levels:
        if lv in ("state", "county", "place", "nation"):
            f.add(lv)
    if q.geo.within or q.geo.level == "state" or any(pl.level == "state" for pl in places):
        f.add("state")
    if q.geo.within:
        f |= {"within", "state", "narrowed"}
    exclude = set(q.geo.exclude)
    if exclude:
        if exclude >= {"DC", "PR"} and not (exclude - {"DC", "PR"}):
            f |= {"fifty", "narrowed"}
        if {"AK", "HI"} <= exclude:
            f |= {"contiguous", "narrowed"}
        f |= {"exclude", "narrowed"}
    if p.include:
        f.add("include")
    if p.exclude:
        f |= {"exclude", "narrowed"}
    if q.geo.leave_out and q.rank is not None:
        f.add("ranked_after")  # "the next three most populous counties", "the three largest cities after that"
    if p.fifty:
        f |= {"fifty", "narrowed"}
    if p.contiguous:
        f |= {"contiguous", "narrowed"}
    if q.geo.place_kind == "incorporated":
        f |= {"incorporated", "place", "narrowed"}
    elif q.geo.place_kind == "cdp":
        f |= {"cdp_only", "place", "narrowed"}
    elif q.geo.place_kind in ("town", "village", "borough"):
        f |= {"kind_only", "place", "narrowed"}  # "only towns (not cities)"
    if q.geo.among is not None or q.geo.in_states_of is not None or q.geo.in_counties:
        f |= {"narrowed", "within", "state"}
    if q.with_us or p.vs_us:
        f |= {"with_us", "nation"}
    if q.per_n:
        f.add("per_n")
    if q.display == "map" or q.geo.is_set or len(places) > 1:
        f.add("display_map")  # a set of places is drawn on a map when asked (its card has a map)
    if q.display in ("bar", "grouped_bar", "dumbbell"):
        f.add("display_bar")
    if q.display == "table":
        f.add("display_table")
    return f


def _used_measures(q: Query) -> set:
    out = set(q.measures) | set(q.sums) | {c.measure for c in q.conditions}
    out |= {c.other for c in q.conditions if c.other is not None}
    if q.rank is not None:
        out.add(q.rank.by)
    for sub in (q.geo.among, q.geo.in_states_of):
        if sub is not None:
            out |= _used_measures(sub)
    return {m for m in out if m is not None}


def _spans(p: Parse, q: Query) -> list[tuple[int, int]]:
    # a table cited ("B23025") is read only when the frame's measures are made of it
    tables = {c[:6].lower() for m in (*q.measures, *q.sums, *(c.measure for c in q.conditions)) for c in m.codes}
    cited = [m for m in TABLE_ID.finditer(p.t)]
    foreign = [m.span() for m in cited if not set(re.findall(r"[bc]\d{5}", m.group(0))) <= tables]
    spans = [s for s in p.blocked if s not in foreign] + list(p.scope_spans) + list(p.informal)
    spans += [pl.span for pl in p.places]
    # a measure the question names is read only when the frame uses it ("how many people live in NYC, and how many
    # housing units": both, or the people are unread)
    measures = _used_measures(q)
    used = {m.name for m in measures}
    # "people", "residents" (weak words of population) are the universe of a share or rate, of a count of people,
    # of "per 1,000 residents" — not of housing units
    # ("the median age of the residents of Sussex County": they are whom a figure about people is about)
    # ("the oldest people": the median age is the people's)
    of_people = bool(q.per_n) or any(m.unit in ("percent", "years") or (m.unit == "count" and "housing" not in m.name
                                                                        and "units" not in m.name)
                                     for m in measures) or \
        re.search(r"\b(of|among|for) (the |its |their )?(residents|people|population|persons|inhabitants|ppl|folks)\b",
                  p.t) is not None and not any("housing" in m.name or "units" in m.name for m in measures)
    spans += [m.span for m in p.mentions if m.measure.name in used or _family_used(m.measure, used)
              or (m.weak and of_people)
              or (m.measure.name == "population" and any(x.unit == "percent" for x in measures))]
    # a limit the question sets is read only when the frame keeps it ("... only counties with more than 10,000
    # people" on a change that has no limits would be answered without it)
    limits = _conditions(q)
    spans += [t.span for t in p.thresholds if any(c.text == t.text or (c.value == t.value and c.op == t.op)
                                                  for c in limits) or t.ref is not None]
    spans += [mt.span() for mt in FUNCTION_PHRASES.finditer(p.t)]
    # "without inflation adjustment", "once you account for inflation": the dollars the frame shows a change in
    if p.dollars or (q.change is not None and q.change.dollars):
        spans += dollar_words(p.t)
    return [(a, b) for a, b in spans if b > a]


def _conditions(q: Query) -> list:
    """Every limit of the frame and of the answers it chooses among."""
    out = list(q.conditions)
    among = q.geo.among
    while among is not None:
        out += list(among.conditions)
        among = among.geo.among
    return out


def _family_used(measure, used: set[str]) -> bool:
    """A measure stands in the frame through another of its family or one that supersedes it ("hispanic" and
    "hispanic population")."""
    return bool(set(measure.supersedes) & used) or any(measure.family and measure.family in u for u in used)


def _stem(word: str) -> str:
    """A crude stem, so that "holding" meets "hold" and "enrolled" meets "enrollment"."""
    for suffix in ("ments", "ment", "ing", "ed", "ly", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


_WORD = re.compile(r"[a-z0-9]+")


def _measure_words(q: Query) -> set[str]:
    """The words of the frame's measures: their labels, descriptions, universes and synonyms ("adults", "hold",
    "degree", "householder"), as stems."""
    out: set[str] = set()
    for m in (*q.measures, *q.sums, *(c.measure for c in q.conditions)):
        text = " ".join((m.label, m.description, m.universe, m.notes, " ".join(m.synonyms),
                         " ".join(m.weak_synonyms), m.column.replace("_", " ")))
        out |= {_stem(w) for w in _WORD.findall(text.lower().replace("'", ""))}
    return out


def _numbers(q: Query) -> set[str]:
    """The numbers the frame accounts for: N of a ranking (digits and words), how many places it names, the years
    of its periods ("2014", "14"), the N of "per 1,000"."""
    out: set[str] = set()
    counts = {len(q.geo.places)} if len(q.geo.places) > 1 else set()
    if len(q.geo.within) > 1:  # "the 12 Midwest states": how many states a set is kept to
        counts.add(len(q.geo.within))
    if q.rank is not None:
        counts.add(q.rank.n)
    among = q.geo.among
    if among is not None:
        counts.add(len(among.geo.places))
        if among.rank is not None:
            counts.add(among.rank.n)
    if len(q.periods) > 1:
        counts.add(len(q.periods))
    if len(q.measures) > 1:
        counts.add(len(q.measures))
    for n in counts:
        out.add(str(n))
        out |= {w for w, v in NUMBER_WORDS.items() if v == n}
        out |= {w for words, v in NUM_WORDS.items() if v == n for w in words.split()}  # "twenty two"
    for period in q.periods:
        for year in period.split("-"):
            out |= {year, year[2:]}
    if q.per_n:
        out |= {str(q.per_n), f"{q.per_n:,}"}
    return out


#: words that negate what follows ("not percentages", "the city proper, not St. Louis County")
_NEGATIONS = frozenset({"not", "no", "never", "instead", "rather", "nor", "exclude", "excluding", "except"})


#: a clause about the asker, not the question: it starts with "I", "we", "my", "our" and asks for nothing
_ASKER = re.compile(r"(?:^|(?<=[.!?;:(]\s)|(?<=[(,])\s?(?=i|we)|(?<=\s[-—]\s))(?:(?:hi|hey|hello|ok|okay|so)\s+)?"
                    r"(?:(?:before|since|as|because|while|when)\s+(?=(?:i|we)\b))?"
                    r"(?:i|im|i am|i have|ive|we|were|we are|weve|my|our|me and|mine)\b[^.!?;:—]*?"
                    r"(?=(?:,\s*so\b|\s[-—]\s|[.!?;:]*(?:\s|$)$|[.!?;:](?:\s|$)|,\s*(?:and\s+)?(?:i|we)\s+(?:wonder|would|d|am|"
                    r"m|was|keep|want|need|have|ve|just)\b))")
#: "Before we get our hopes up, what's ...": a clause about the asker ending at a comma
_ASKER_CLAUSE = re.compile(r"(?:^|(?<=[.!?]\s))(?:before|since|as|because|while|when|if)\s+(?:i|we)\b[^,.!?]*,")
#: words that change an answer wherever they stand: a clause with one is never context
_MODIFIES = re.compile(r"\b(not|no|except|excluding|exclude|without|only|just|plus|including|include|counting|top|"
                       r"bottom|"
                       r"percent\w*|pct|share|rate|per|each|total|combined|average|mean|median|highest|lowest|most|"
                       r"least|largest|smallest|biggest)\b|\d|%")
#: a reason at the end of a sentence: ", as ...", ", since ...", ", because ...", "; I want ..."
_REASON = re.compile(r"[,;]\s+((?:as|since|because|given\s+that|so\s+that|i|we|our|my|it|its|this|that)\b[^.?!;]*)"
                     r"(?=[.?!;]|$)")
#: a question relayed: who asks it, then "wants to know which ..." ("Our next caller ... wants to know which ...")
_RELAYED = re.compile(r"^\W*([^.?!]{3,160}?)\b(?:wants?|would\s+like|needs?|is\s+asking|asks?|asked|wonders|"
                      r"wondered|is\s+wondering|is\s+curious)\s+(?:to\s+know\s+|about\s+)?(?=(?:which|what|how|"
                      r"whether|if|why|where|who)\b)")
#: a purpose after the request: "so (that) it / we / the numbers ..." to the end of the sentence
_SO_THAT = re.compile(r"\bso\s+((?:that\s+)?(?:it|its|it is|this|that|we|i|they|the\s+(?:numbers?|figures?|data))\b"
                      r"[^.?!;]*)")
_REQUEST = re.compile(r"\b(need|want|wants|give|show|tell|list|compare|what|which|how|who|where|find|pull|get|"
                      r"rank|looking for|would like|wondering|curious)\b")
#: a request inside a clause about the asker: a verb of asking, or a question word that opens it ("we're mapping
#: where to place satellite offices" asks nothing; "I'm wondering which county ..." does)
_ASKER_REQUEST = re.compile(r"\b(need|want|wants|give|show|tell|list|compare|find|pull|get|rank|looking for|would like|"
                            r"wonder|wondering|curious|mean|meant)\b|^\W*(?:what|which|how|who|where)\b")


def _context_words(question: str) -> set[str]:
    """The words of the clauses about the asker ("We're thinking about moving to the Phoenix area, so ...", "I'm on
    the Dayton city council staff.") and of sentences that ask nothing before one that asks ("Wow, that's a lot of
    people. How much has it grown?"): read as context, part of no answer.  Found in the question as written (the
    normalised ask has lost the periods that end its sentences)."""
    cased = " ".join(SYMBOLS.sub(" ", re.sub(r"[’']", "", question)).split())
    t = cased.lower()
    spans = []
    quantities: set[str] = set()
    for rx in (_ASKER, _ASKER_CLAUSE):
        for mt in rx.finditer(t):
            # (a closing clause about the asker after a comma counts: "(no inflation adjustment, I'm deflating
            # separately with my own series)")
            # (a closing sentence about the asker counts too, when it asks for nothing: "... for Apache County,
            # Arizona? Our service area covers most of it.")
            last = mt.end() >= len(t.rstrip(" ?.!)")) and not t[:mt.start()].rstrip().endswith((",", "(", ".", "?",
                                                                                                  "!", ";"))
            if not last and (rx is _ASKER_CLAUSE or not _ASKER_REQUEST.search(mt.group(0))):
                spans.append(mt.span())
                # "covers most of it": how much of a place, not a superlative
                quantities.update(x.group(1) for x in re.finditer(r"\b(most|all|part)\s+of\b", mt.group(0)))
    # "(manhatten)" after a place, "... Springfield, Illinois. the capital": a restatement or a trailing remark
    # of a few words that asks nothing and changes nothing
    for mt in re.finditer(r"\(([^()]{1,120})\)", t):
        # (a list of names in brackets — "(Alameda, Contra Costa, Marin ...)" — is what the answer is about)
        names = re.findall(r"(?:^|[,(]\s*|\band\s+)[A-Z]", cased[mt.start(1):mt.end(1)])
        if (len(mt.group(1)) <= 40 or not _MODIFIES.search(mt.group(1))) and len(names) < 2:
            spans.append(mt.span(1))
    # "..., as the very small ones aren't relevant to our comparison.", "...; I want a growing market for a hardware
    # store.": a reason given at the end of a sentence, that changes nothing the answer holds
    for mt in _REASON.finditer(t):
        if not _MODIFIES.search(mt.group(1)):
            spans.append(mt.span(1))
    # "... so it lines up with what we reported before", "adjust for inflation so it's a fair comparison": what the
    # answer is for, after the request (its modifiers, if any, are still to be read by the frame)
    for mt in _SO_THAT.finditer(t):
        spans.append(mt.span(1))
    # "Our next caller works at a food bank in eastern Kentucky and wants to know which three counties ...", "The
    # patron asks whether ...": who relays the question, before what they ask
    relayed = _RELAYED.match(t)
    if relayed and not _MODIFIES.search(relayed.group(1)):
        spans.append(relayed.span(1))
    # "For a memo I'm drafting on concentrated poverty, could you list ...": a purpose clause before the request
    lead = PURPOSE_LEAD.match(t)
    if lead and not _MODIFIES.search(lead.group(0)):
        spans.append(lead.span())
    tail = re.search(r"[.!?]\s+([a-z ]{1,30})[.!?]*\s*$", t)
    if tail and len(tail.group(1).split()) <= 3 and not _REQUEST.search(tail.group(1)):
        spans.append(tail.span(1))
    start = 0
    for mt in re.finditer(r"(?<![a-z]\.[a-z])(?<!\b(?:st|mt|ft|co|vs|dr|mr|ms))[.!]+(?:\s+|$)", t):
        sentence = t[start:mt.end()]
        rest = t[mt.end():]
        if rest.strip() and not _REQUEST.search(sentence) and "?" not in sentence and (
                "?" in rest or _REQUEST.search(rest)):
            spans.append((start, mt.end()))
        start = mt.end()
    # a modifier or a number is never context: "(percent)" after a ranking still asks for percent; "my two boys"
    # does not read the "two" of "those two counties"
    return {w for a, b in spans for w in _TOKEN.findall(t[a:b]) if w not in _NEVER_FUNCTION and not w[0].isdigit()
            and w not in NUMBER_WORDS and not TABLE_ID.fullmatch(w)} | quantities


def _frame_place_words(q: Query) -> set[str]:
    """The words of the names of the frame's places and their states ("dc", "texas", "travis")."""
    out: set[str] = set()
    states = list(q.geo.within) + [pl.state for pl in q.geo.places]
    for st in states:
        out |= {st.abbr.lower(), *st.name.lower().split()}
    for pl in q.geo.places:
        out |= set(_WORD.findall(pl.label.lower()))
    for unit in q.geo.units:  # "TX-21", "78701", "Atlanta" of a metro area
        out |= set(_WORD.findall(unit.name.lower())) | {(unit.state_abbr or "").lower()}
        out |= {unit.geo_id.split("US")[-1], unit.geo_id.split("US")[-1][2:]}
    return out


def _kept_geo_ids(q: Query) -> set[str]:
    """Every place the frame uses: named, the parents of its set, the places of the turn it narrows, a
    condition's reference place, the states it leaves out (by their postal code)."""
    ids = {pl.geo_id for pl in q.geo.places} | {st.geo_id for st in q.geo.within}
    ids |= {c.geo_id for c in q.geo.in_counties}
    ids |= {pl.namesake.geo_id for pl in q.geo.places if pl.namesake is not None}
    ids |= {u.county_geo_id for u in q.geo.units if u.county_geo_id}  # "census tract 11 in Travis County"
    for cond in q.conditions:
        if cond.ref is not None:
            ids.add(cond.ref.geo_id)
    for sub in (q.geo.among, q.geo.in_states_of):
        if sub is not None:
            ids |= _kept_geo_ids(sub)
    return ids


_ALL_MEASURE_WORDS: dict[int, set[str]] = {}


def _all_measure_words(cat: Catalog) -> set[str]:
    """The words of every measure the planner knows (for what a question negates: "not percentages")."""
    key = id(cat)
    if key not in _ALL_MEASURE_WORDS:
        out: set[str] = set()
        for m in (*cat.measures, *cat.inactive):
            out |= {_stem(w) for s in (*m.synonyms, m.label.lower()) for w in _WORD.findall(s)}
        _ALL_MEASURE_WORDS.clear()
        _ALL_MEASURE_WORDS[key] = out
    return _ALL_MEASURE_WORDS[key]


def account(p: Parse, q: Query, prior: Query | None = None, cat: Catalog | None = None,
            edits: Sequence[Edit] = ()) -> Ledger:
    """The ledger of the ask ``p.t`` read into frame ``q`` (edited from ``prior`` for a follow-up, by ``edits``)."""
    spans = _spans(p, q)
    context = _context_words(p.question)
    # a place the question names never vanishes from the answer: a place read outside a clause about the asker
    # that the frame does not use leaves its words unread
    kept = _kept_geo_ids(q)
    excluded = {s.lower() for s in (*q.geo.exclude, *p.exclude)}
    vanished = [pl.span for pl in p.places if pl.geo_id not in kept and pl.state.abbr.lower() not in excluded
                and not (pl.namesake is not None and pl.namesake.geo_id in kept)
                and not (pl.level == "state" and pl.state.abbr in {u.state_abbr for u in q.geo.units})
                and not (pl.county is not None and pl.level == "place")
                and not set(_TOKEN.findall(p.t[pl.span[0]:pl.span[1]])) <= context
                and pl.how not in ("context", "ambiguous")
                and not (pl.level == "state" and pl.state.geo_id in {x.state.geo_id for x in q.geo.places})]
    spans = [s for s in spans if not any(s[0] < v[1] and v[0] < s[1] for v in vanished)]
    place_words = _frame_place_words(q)
    # "Spokane County of Washington state", "upstate New York state": the word "state" after its name is the name's
    states = {st.name.lower() for st in (*q.geo.within, *(pl.state for pl in q.geo.places))}
    if states:
        said = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted(states)) + r")\s+(state)\b")
        spans += [mt.span(1) for mt in said.finditer(p.t)]
    feats = features(q, p, prior, edits)
    named: set[str] = set()
    for feature in feats:
        named |= FEATURE_WORDS.get(feature, frozenset())
    every_feature_word = set().union(*FEATURE_WORDS.values())
    measure_words_list = tuple(sorted(_measure_words(q)))
    all_measure_words = _all_measure_words(cat) if cat is not None else set()
    numbers = _numbers(q)
    if "PR" in q.geo.exclude:  # "only the 50 states (and DC)": Puerto Rico left out
        numbers |= {"50", "fifty"}
    if prior is not None:  # "that top 10", "those two": the answer the follow-up edits
        numbers |= _numbers(prior)
        for feature in features(prior, p):
            named |= FEATURE_WORDS.get(feature, frozenset())
    measure_words = _measure_words(q)
    if prior is not None and "followup_drop" in feats:  # the measure a follow-up took out is named by it
        measure_words |= _measure_words(prior)
    named_list = tuple(sorted(named))
    words: list[Word] = []
    for mt in _TOKEN.finditer(p.t):
        a, b = mt.span()
        raw = mt.group(0)
        text = ABBREVIATIONS.get(raw, raw)
        bare = text.lstrip("$").rstrip("%").replace(",", "") if text[0] in "$0123456789" else text
        by = ""
        if any(s < b and a < e for s, e in spans):
            by = "reader"
        elif raw in context:
            by = "context"
        elif bare in numbers or text in numbers:
            by = "frame"
        elif text in named:
            by = "frame"
        elif text in READ_ALWAYS:
            by = "function"
        elif _stem(text) in measure_words or text in measure_words:
            by = "measure"
        elif (text in place_words or bare in place_words) and not any(s < b and a < e for s, e in vanished):
            by = "place"  # a word of the name of a place the answer is about ("urban" of "Urban Honolulu CDP")
        elif text.endswith("s") and len(text) > 2 and (text[:-1] in named or text[:-1] in READ_ALWAYS or
                                                       text[:-1] in place_words):
            by = "frame"  # a possessive whose apostrophe was dropped ("dcs", "its")
        elif len(text) >= 4 and text.isalpha() and _close(text, measure_words_list, 0.8):
            by = "measure"  # "houshold", "subscripton": a misspelled word of the measure read
        elif len(text) >= 6 and text.isalpha() and _close(text, named_list, 0.85):
            by = "frame"  # "diffrence", "signifcant": a misspelled word of a feature the frame has
        words.append(Word(raw, a, b, by))
    # "not percentages", "the city proper, not St. Louis County": a negated word the frame does not have is read
    # as what the answer leaves out — unless the frame has it, which would answer the opposite
    # the places the answer is about, where the question names them
    kept_states = {st.fips for st in q.geo.within} | {pl.state.fips for pl in q.geo.places if pl.level == "state"}
    kept_spans = [pl.span for pl in p.places if (pl.geo_id in kept and pl.level != "state")
                  or (pl.level == "state" and pl.state.fips in kept_states)]
    # "the Four Corners states: Arizona, Colorado, New Mexico, Zorbaville and Utah. What is the combined population of
    # those four states?": a name inside the list of places the answer is about is never scene-setting
    inside = sorted(s for s in kept_spans if s[0] < s[1])
    if len(inside) >= 2:
        lo, hi = inside[0][0], inside[-1][1]
        for i, w in enumerate(words):
            if w.by == "context" and lo < w.start < hi and p.tc[w.start:w.start + 1].isupper() and \
                    w.text not in READ_ALWAYS and w.text not in ("and", "or", "vs", "versus", "plus"):
                words[i] = Word(w.text, w.start, w.end, "")
    for i, w in enumerate(words):
        if w.text not in _NEGATIONS:
            continue
        clause = re.search(r"[,.;:!?—]", p.t[w.end:])
        stop = w.end + clause.start() if clause else len(p.t)
        after = [x for x in words[i + 1:i + 7] if x.start < stop]
        # (a feature word there may be read by the frame too: "the city itself, not the whole Treasure Valley")
        negated = [x for x in after if x.by in ("", "frame") and (x.text in every_feature_word or _stem(x.text) in
                                                                   every_feature_word or _stem(x.text) in
                                                                   all_measure_words)]
        placed = [x for x in after if x.by == "reader" or any(x.start < e and s < x.end for s, e in vanished)]
        if any(x.start < e and s < x.end for x in after for s, e in kept_spans):
            continue  # "excluding Harris County" with Harris County in the answer: the exclusion was not read
        if negated or placed:
            for j in range(i, i + 1 + len(after)):
                if not words[j].by or any(words[j].start < e and s < words[j].end for s, e in vanished):
                    words[j] = Word(words[j].text, words[j].start, words[j].end, "negation")
    # "how many ... ? And which ones are they?": a count that does not list its places has not read the request
    if q.op is Op.COUNT:
        for mt in NAME_THEM.finditer(p.t):
            for i, w in enumerate(words):
                if mt.start() <= w.start < mt.end() and w.text not in ("and", "are", "they"):
                    words[i] = Word(w.text, w.start, w.end, "")
    # "(bachelor's, master's, professional and doctoral degrees combined)": a measure's parts, closing a clause
    for i, w in enumerate(words):
        if w.by or w.text not in ("combined", "together", "included") or i < 3:
            continue
        closes = re.match(r"\s*(?:[,.;:?!]|$)", p.t[w.end:]) is not None
        if closes and all(x.by in ("measure", "function") for x in words[i - 3:i]) and \
                sum(x.by == "measure" for x in words[i - 3:i]) >= 2:
            words[i] = Word(w.text, w.start, w.end, "measure")
    # "the unemployment rate for us compared with Plymouth County": "us" is a place of the comparison (the asker's),
    # not a pronoun of politeness — the answer must hold it, or the word is unread
    if "compare" in feats or "with_us" in feats:
        for mt in _US_COMPARED.finditer(p.t):
            at = mt.start(1) if mt.group(1) else mt.start(2)
            if any(pl.span[0] <= at < pl.span[1] and pl.geo_id in kept for pl in p.places):
                continue  # the asker's place, read from the scene and in the answer
            for i, w in enumerate(words):
                if w.start == at:
                    words[i] = Word(w.text, w.start, w.end, "")
    # "Please include the rates.", "include both numbers": asking to show what the answer already holds (every word
    # after it read as the frame's measure, feature or a function word; "including DC" is not this)
    for i, w in enumerate(words):
        if w.by or w.text not in ("include", "includes", "including", "incl"):
            continue
        clause = re.search(r"[,.;:!?—]", p.t[w.end:])
        stop = w.end + clause.start() if clause else len(p.t)
        after = [x for x in words[i + 1:] if x.start < stop]
        if after and all(x.by in ("measure", "function", "frame") for x in after) and \
                any(x.by in ("measure", "frame") for x in after):
            words[i] = Word(w.text, w.start, w.end, "display")
    # a measure found through retrieval (by meaning, the assumptions say so) reads the words that named it: the
    # unread words that are neither a modifier, a number nor a place — nor a name ("5 largest places in Ga. by
    # housing units. Expect Atlanta, then Columbus": no measure is named by "Atlanta", and read so, the ranking
    # before it vanished without a word)
    if any(m.start == m.end == len(p.t) for m in p.mentions):
        for i, w in enumerate(words):
            if not w.by and w.text not in _NEVER_FUNCTION and not w.text[0].isdigit() and \
                    not _a_name(p.tc, w.start) and not any(w.start < e and s < w.end for s, e in vanished):
                words[i] = Word(w.text, w.start, w.end, "retrieval")
    # "Texas's big five urban counties — Harris, Dallas, ...": words that describe places the question names one by
    # one, right before their level word, are read with them
    if len(q.geo.places) > 1:
        levels = {pl.level for pl in q.geo.places}
        level_words = set().union(*(FEATURE_WORDS[lv] for lv in levels if lv in FEATURE_WORDS))
        for i, w in enumerate(words):
            if w.text in level_words:
                for j in range(max(0, i - 3), i):
                    # (a capitalised word there is a name in the list, not a description: "Hennepin, Zorbaville and
                    # Ramsey counties" leaves "Zorbaville" unread)
                    initial = words[j].start == 0 or bool(re.search(r"[.?!:]\s*$", p.tc[:words[j].start]))
                    if not words[j].by and (initial or not p.tc[words[j].start:words[j].start + 1].isupper()):
                        words[j] = Word(words[j].text, words[j].start, words[j].end, "description")
    return Ledger(tuple(words))


def _a_name(tc: str, at: int) -> bool:
    """Whether the word at ``at`` is written as a name: capitalised, not first in its sentence."""
    return tc[at:at + 1].isupper() and at > 0 and not re.search(r"(?:^|[.?!:;—–-])\W*$", tc[:at])


#: the asker's own place in a comparison ("for us compared with ...", "than us", "us vs them")
_US_COMPARED = re.compile(r"\b(?:for|than|with|to)\s+(us|ours)\b(?=\s*(?:compared|vs|versus|and|or|than|[,?.!]|$))|"
                          r"\b(us|ours)\s+(?:compared|vs|versus)\b")


@functools.lru_cache(maxsize=4096)
def _close(word: str, words: tuple[str, ...], cutoff: float) -> bool:
    """Whether ``word`` is a misspelling of one of ``words`` (kept: the same words come back question after
    question, and difflib was a third of a plan's time)."""
    return bool(difflib.get_close_matches(word, words, 1, cutoff))


def close_readings(word: str, cat: Catalog, vocabulary: Iterable[str] = ()) -> list[str]:
    """What an unread ``word`` is close to: a state's name or postal code, a number word, a word the planner knows
    (``vocabulary``: the measures' words), best first."""
    out: list[str] = []
    if len(word) == 2 and word.upper() in cat.state_by_abbr:
        out.append(cat.state_by_abbr[word.upper()].name)
    if len(word) >= 4:
        out += [cat.state_by_key[k].name for k in difflib.get_close_matches(word, list(cat.state_by_key), 2, 0.8)]
        out += difflib.get_close_matches(word, list(NUMBER_WORDS), 1, 0.85)
        out += difflib.get_close_matches(word, list(vocabulary), 2, 0.85)
    return [r for r in dict.fromkeys(out) if _stem(r.lower()) != _stem(word)]


def quoted(words: Sequence[str]) -> str:
    return ", ".join(f"“{w}”" for w in words)
