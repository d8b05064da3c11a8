"""The offline planner's words: text normalisation, word lists, the regexes that spot intents, and numbers.

Pure data and tiny text helpers, kept apart from the code that uses them so the rules read as rules and each
list has one home (the place matcher, the parser and the SQL builder all share them).  Nothing here touches the
database or the catalog."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ....census.semantic import Measure
from ....text import normalize

# ---------------------------------------------------------------------------------------------------------------
# text (normalising is :mod:`sage.text`'s, shared with the semantic layer)


def geo_key(name: str) -> str:
    return normalize(name, lower=True)


def mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        for i in range(max(0, a), min(len(chars), b)):
            chars[i] = " " if chars[i] == " " else "_"
    return "".join(chars)


def join_words(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


# ---------------------------------------------------------------------------------------------------------------
# word lists and intent patterns

NUM_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
             "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "twenty five": 25, "thirty": 30,
             "fifty": 50, "a dozen": 12, "dozen": 12, "a couple": 2, "a few": 3, "hundred": 100,
             "thirteen": 13, "fourteen": 14, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
# the tens and the numbers between them, as spoken ("over forty five", "sixty-two"; hyphens are spaces by now)
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
NUM_WORDS.update(_TENS)
NUM_WORDS.update({f"{ten} {unit}": value + NUM_WORDS[unit] for ten, value in _TENS.items()
                  for unit in ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")})
NUM_WORD_RE = "|".join(sorted((re.escape(w) for w in NUM_WORDS), key=len, reverse=True))

#: postal codes that are also English words: only taken when written in capitals (or right after a county name)
#: what an answer is for ("for a housing affordability piece", "for our proposal", "for the needs assessment"): the
#: nouns of a purpose, one list for the ledger's purpose phrase and the parser's purpose and its topic
PURPOSE_NOUNS = ("piece|brief|briefing|story|memo|report|unit|project|class|lesson|paper|article|presentation|"
                 "newsletter|talk|grant|homework|assignment|thesis|seminar|lecture|course|research|proposal|segment|"
                 "show|episode|broadcast|podcast|pitch|meeting|hearing|application|study|analysis|review|campaign|"
                 "initiative|budget|plan|deck|website|post|blog|summary|assessment")

#: a purpose clause that opens the question ("For a memo I'm drafting ..., could you", "For the housing element of
#: our plan, what is ...", "For the higher-education funding memo, please identify ..."): read as context by the
#: ledger, and masked before the readers (its "higher" is no comparison)
PURPOSE_LEAD = re.compile(r"(?:for|as part of|ahead of|to prepare(?:\s+for)?|in preparation for|in advance of)\s+"
                          r"(?:a|an|my|our|the|this|some)\b[^,?.!:]{0,100},"
                          r"(?=\s*(?:could|can|would|will|please|what|which|how|list|give|show|tell)\b)")

WORDLIKE_ABBRS = frozenset("in or me ok hi oh de pa la ma co al id mo ne ms mt as am us ar ct pr wa va ga".split())

DEMONYMS = {
    "texans": "Texas", "californians": "California", "floridians": "Florida", "new yorkers": "New York",
    "ohioans": "Ohio", "georgians": "Georgia", "virginians": "Virginia", "michiganders": "Michigan",
    "pennsylvanians": "Pennsylvania", "illinoisans": "Illinois", "arizonans": "Arizona", "coloradans": "Colorado",
    "oregonians": "Oregon", "alaskans": "Alaska", "hawaiians": "Hawaii", "mississippians": "Mississippi",
    "alabamians": "Alabama", "louisianans": "Louisiana", "kentuckians": "Kentucky", "tennesseans": "Tennessee",
    "minnesotans": "Minnesota", "wisconsinites": "Wisconsin", "iowans": "Iowa", "utahns": "Utah",
    "nevadans": "Nevada", "new jerseyans": "New Jersey", "marylanders": "Maryland", "washingtonians": "Washington",
    "puerto ricans": "Puerto Rico", "west virginians": "West Virginia", "oklahomans": "Oklahoma",
    "arkansans": "Arkansas", "missourians": "Missouri", "kansans": "Kansas", "nebraskans": "Nebraska",
    "indianans": "Indiana", "hoosiers": "Indiana", "new mexicans": "New Mexico", "idahoans": "Idaho",
    "montanans": "Montana", "south carolinians": "South Carolina", "north carolinians": "North Carolina",
    "connecticuters": "Connecticut", "vermonters": "Vermont", "mainers": "Maine",
}

#: common names of counties: New York City's boroughs are counties; "LA County" is Los Angeles County
COUNTY_ALIASES = {
    "brooklyn": ("Kings County", "36"), "manhattan": ("New York County", "36"),
    "staten island": ("Richmond County", "36"), "the bronx": ("Bronx County", "36"), "bronx": ("Bronx County", "36"),
    "queens": ("Queens County", "36"), "la county": ("Los Angeles County", "06"),
    # San Francisco is a consolidated city-county: its short names mean the county row (same area)
    "sf": ("San Francisco County", "06"), "san fran": ("San Francisco County", "06"),
}

#: names of groups of counties: New York City's five boroughs are its five counties
_BOROUGHS = (("New York County", "Kings County", "Queens County", "Bronx County", "Richmond County"), "36",
             "New York City's five boroughs")
COUNTY_GROUPS = {key: _BOROUGHS for key in (
    "five boroughs of new york city", "5 boroughs of new york city", "five boroughs of nyc", "5 boroughs of nyc",
    "five nyc boroughs", "5 nyc boroughs", "nyc boroughs", "boroughs of nyc", "five boroughs", "5 boroughs")}

SUB_STATE = re.compile(
    r"\b(zip ?codes?|zips?|zcta\w*|postal codes?|census tracts?|tracts?|block groups?|neighbou?rhoods?|"
    r"metro\w*|msas?|cbsas?|congressional districts?|school districts?|towns?|townships?|villages?|"
    r"cities|boroughs? of new york|precincts?|wards?|suburbs?|downtown)\b")
#: countries other than the US: the data has US states, counties and places only (and Puerto Rico)
FOREIGN = re.compile(r"\b(canada|mexico|england|scotland|ireland|united kingdom|great britain|france|germany|spain|"
                     r"italy|china|japan|india|australia|brazil|europe|european union|asia|africa)\b")
#: the same, once Census places are loaded: cities, towns and villages are places then
SUB_STATE_NOT_PLACES = re.compile(
    r"\b(block groups?|neighbou?rhoods?|school districts?|townships?|boroughs? of new york|precincts?|wards?|"
    r"suburbs?|downtown)\b")
CITY_WORD = re.compile(r"\b(city|cities)\b")
#: what no published estimate says: forecasts and projections (changes between periods are read in periods.py)
FORECAST = re.compile(
    # ("The figure will be cited in ...": what the answer will be used for, no forecast)
    r"\b(forecasts?|forecasting|project(ed|ion|ions)|predict\w*|will (be(?! (?:cited|used|included|presented|shared|"
    r"read|published|quoted|reported|submitted|added|attached|sent|shown|discussed|reviewed|printed|posted|aired|"
    r"given|put|part)\b)|have|grow|reach)|future|next (year|decade)|"
    r"keeps? (growing|shrinking|declining)|at (the same|this|that) (pace|rate)|by 20[3-9]\d|in 20[3-9]\d)\b")
VERSUS_AVG = re.compile(
    r"\b(above|below|higher than|lower than|more than|less than|greater than|exceed\w*|under|over|"
    r"compared? (to|with)|relative to|vs|versus|than)\s+(the\s+)?(national|state|us|country|statewide|countywide|"
    r"nationwide|overall|average|median|mean|typical)\b(?!\s+(household|home|gross|age|rent|value|income|"
    r"hh|of\b))")

#: estimates of another ACS product than the 5-year tables shipped ("the 2021 1-year ACS")
OTHER_PRODUCT = re.compile(
    r"\b(1|one|3|three|single) year (acs|american community survey|estimates?|data|survey|sample|release|"
    r"figures?|numbers?|file)\b|\b(acs|american community survey) (1|one|3|three|single) year\b|\bacs ?[13]\b")
#: a rate "per 1,000 residents", "per capita" (not income), "per 100k": not a measure of the semantic layer
PER_N = re.compile(r"\bper (\d[\d,]*|one|a|ten|a hundred|one hundred|hundred|a thousand|one thousand|thousand)"
                   r"( ?(k|thousand|hundred|million))?\s+(people|residents|persons|population|inhabitants|capita|"
                   r"households|adults|person|resident|head)\b")


def per_number(num: str, mult: str | None) -> int | None:
    """The N of "per N residents" ("1,000", "a thousand", "100k"); None when it is not a plain power of ten."""
    words = {"one": 1, "a": 1, "ten": 10, "a hundred": 100, "one hundred": 100, "hundred": 100, "a thousand": 1000,
             "one thousand": 1000, "thousand": 1000}
    base = words.get(num) if num in words else (int(num.replace(",", "")) if num.replace(",", "").isdigit() else None)
    if base is None:
        return None
    base *= {"k": 1000, "thousand": 1000, "hundred": 100, "million": 1_000_000}.get((mult or "").strip(), 1)
    return base if base in (100, 1000, 10_000, 100_000, 1_000_000) else None


#: a named place set against the whole country: "Texas vs the US", "compare Ohio to the nation"
VS_US = re.compile(r"\b(compared?|comparing|vs|versus|against|to|with|and|relative to)\s+(the\s+)?"
                   r"(us|usa|united states|nation|country|national (figure|rate|level|total|share|number))\b"
                   r"(?!\s+(county|counties|state))")
#: "us" in lowercase as the country: at the start of the question or right before a measure ("us poverty rate");
#: never after a verb that takes "us" as its object ("tell us", "give us")
LOWER_US = re.compile(r"^(whats |what is |the )?us\b|(?<!tell )(?<!give )(?<!show )(?<!let )(?<!help )(?<!send )"
                      r"(?<!find )(?<!get )\bus (?=_)|"
                      # "which us cities have ...", "how many us counties": the US before a kind of place
                      r"\b(?:which|what|how many|the|all|largest|biggest|smallest|top \d+)\s+us\s+"
                      r"(?=(?:cities|counties|states|places|towns|metros)\b)")
NATIONAL = re.compile(
    r"\b(united states|usa|the us|in us|of us|for us|the nation|nationally|nationwide|national|"
    r"the (whole|entire) (country|nation|us)|the country|this country|our country|countrywide|country wide|"
    r"all of america|america|americans|american (households|people|residents|adults|families|homes|workers|"
    r"population|public|women|men|children|kids|seniors)|across all states|all states combined|all 50 states combined|"
    r"the us overall|us total|"
    r"total us|us overall|us wide)\b")
FIFTY = re.compile(r"\b(50|fifty) states\b|\b(among|of) the (50|fifty)\b(?!\s*(counties|places|cities|largest|biggest|"
                   r"most|highest|lowest|%|percent))")

LEVEL_PLURAL = re.compile(r"\b(states|counties|parishes|boroughs|county equivalents|municipios|census areas|"
                          r"planning regions|independent cities|countys|counites|conties|couties|cnties|countes|"
                          r"countis|countries in)\b")
LEVEL_SINGULAR = re.compile(r"\b(state|county|parish|borough|county equivalent|municipio|census area|"
                            r"planning region|independent city)\b")
#: words for Census places as a level: strong ones name it even next to "states" ("the 10 biggest cities in the 50
#: states"); "places" alone names it only when no other level is named ("which five places ..." of states is not)
PLACE_LEVEL = re.compile(r"\b(cities|towns|villages|cdps|census designated places?|municipalities|incorporated places?|"
                         r"city|town|village|cdp|municipality|boroughs? and towns)\b")
PLACE_LEVEL_WEAK = re.compile(r"\b(places|place)\b")
#: "incorporated cities", "not counting CDPs": no census-designated places; "CDPs": only them
INCORPORATED = re.compile(r"\bincorporated\b|\b(not counting|excluding|except|without|leave out|leaving out|no)\s+"
                          r"(the\s+)?(cdps|census designated places)\b")
CDP_ONLY = re.compile(r"\b(cdps|census designated places?|cdp)\b")
#: independent cities are county-equivalents (Virginia's, Baltimore, St. Louis, Carson City), not places
INDEPENDENT_CITY = re.compile(r"\bindependent cit(y|ies)\b")
SET_CUE = re.compile(
    r"\b(which|what|each|every|per|by|all|any|list|rank|ranking|ranked|show|among|across|compare)\s+"
    r"(of the\s+|the\s+)?(\d+\s+|[a-z]+\s+){0,3}?(state|county|parish|states|counties|countys|parishes|boroughs?|"
    r"census areas?|municipios?|county equivalents?|planning regions?)\b")
THAN_PLACE = re.compile(r"\b(more|higher|greater|larger|bigger|less|lower|fewer|smaller)\s+(\w+\s+){0,5}?than\s+"
                        r"(that of\s+|those of\s+|in\s+|for\s+|of\s+)?")
COMBINED = re.compile(r"\b(combined|altogether|all together|as a whole|in aggregate|taken (?:all )?together|"
                      r"all combined|pooled)\b")
SET_WORDS = frozenset("which what each every any a an the one per top bottom all list rank".split())
PER_STATE = re.compile(r"\b(in|within|for|of|across) (each|every) state\b|\bper state\b|\bby state\b|"
                       r"\beach states?\b|\bstate by state\b")
BY_LEVEL = re.compile(r"\b(by|per|each|every|for each|for every|for all|all|across|of all)\s+(the\s+)?(\d+\s+)?"
                      r"(states?|counties|countys|county|parishes|parish)\b")

DESC_WORDS = re.compile(
    r"\b(top|highest|most|largest|biggest|greatest|richest|wealthiest|oldest|priciest|leading|maximum|max|"
    r"best|higher|larger|more|bigger|heaviest|strongest|worst|fastest)\b")
ASC_WORDS = re.compile(r"\b(bottom|lowest|least|smallest|fewest|poorest|youngest|cheapest|minimum|min|lower|"
                       r"smaller|fewer|weakest|lightest)\b|slowest")
SUPERLATIVE = re.compile(
    r"\b(top|bottom|highest|lowest|most|least|largest|smallest|biggest|fewest|greatest|richest|wealthiest|"
    r"poorest|oldest|youngest|cheapest|priciest|best|worst|leading|maximum|minimum|rank|ranked|ranking|"
    r"order|sorted|sort)\b|fastest|slowest")
COMPARE = re.compile(r"\b(compare|comparison|vs|versus|against|between|differ\w*|relative)\b")
SHARE_OF_WHOLE = re.compile(
    r"\b(what|which)?\s*(share|percent|percentage|proportion|fraction|portion|pct)\b|%|\bhow much of\b")

#: measures that describe who people are; another measure "for" one of them is a cross-tabulation
GROUP_FAMILIES = {"hispanic", "white", "black", "non_hispanic_white", "people_of_color", "foreign_born",
                  "noncitizen", "naturalized", "native_born", "age_65_plus", "under_18", "female", "male"}

BAD_HIGH = {"poverty_rate", "people_in_poverty", "unemployment_rate", "unemployed", "uninsured_share",
            "uninsured_population", "gini_index"}

# words that may sit next to a place without being one (for spotting unknown place names)
KNOWN_WORDS = frozenset("""
cdp cdps plain
grandma grandmas grandpa grandpas grandmother grandmothers grandfather grandfathers grandparents grandson granddaughter
ancestor ancestors ancestral relatives relative aunt aunts uncle uncles cousin cousins great
fastest slowest
a about above across adult adults after again against age all along also am among amongst an and another any
are area areas around as at average be been being below best between big bigger biggest both but by can census
acs bureau compare compared comparison could count counties country county data did do does each else
estimate estimates ever every fewer fewest figure figures find for from get give given go good got had has have
high higher highest how i if in into is it its just large larger largest least less let list lowest low lower
many me median mean more most much my need next number numbers of off on one only or order other our out over
overall people per percent percentage place places please population populations rank ranked ranking rate rates
ratio residents same see share show sizes size small smaller smallest so some state states statewide tell than
that the their them then there these they this those through to top total totals under up us versus vs was
we were what whats when where which who whom whose why will with within would year years you your yes no not
versus overview profile snapshot quick summary stats statistics info information numbers breakdown key basic
tally percentages shares value values level levels metrics metric measure measures like give show look
lookup about living lives live reside resides located community communities parish parishes borough boroughs
region regions five ten three two four six seven eight nine twenty fifty hundred thousand million billion
k m bn half quarter third majority roughly approximately around nearly almost exactly least fraction proportion
percent pct including include excluding exclude except without plus minus dc pr usa america american americans
nation national nationwide nationally whole entire combined top bottom first last did versus side which vs
folks households household homes home house houses housing units unit amount amounts currently current today now
latest recent most recently annual yearly period vintage five-year year 5 acs5 acs 1 rank
 dollars dollar cents percent percentage percentages points terms""".split())

#: words that make a part of a state ("rural Georgia", "central Pennsylvania") — no such rows exist
REGIONAL_WORDS = frozenset(
    "central northern southern eastern western upstate downstate rural urban coastal north south east west northeast "
    "northwest southeast southwest northeastern northwestern southeastern southwestern mid greater inner suburban "
    "interior".split())


STOP_BEFORE_PLACE = frozenset("in of for at from near around across within inside about".split())
JOINERS = frozenset("vs versus and or with to".split())


#: words inside measure phrases that say nothing about a measure on their own
FUNCTION_WORDS = frozenset("of the a an in to with for and or by per at as who do not have has is are dont no "
                           "their there how many number live lives".split())


NOUN_MEASURE = {"people": "population", "residents": "population", "persons": "population",
                "inhabitants": "population", "population": "population", "folks": "population",
                "households": "households", "housing units": "housing_units", "homes": "housing_units",
                "houses": "housing_units"}


COMMON_ENGLISH = frozenset("""
about above after again against all almost along already also although always among amount and another answer
any anything anyone area around ask asked asking average away back based because become been before being
below best better between bigger both bring build but buy call came can care case cause change check city
close come common compare could country course data day did different does doing done down during each early
either else enough even ever every example fact family far feel few figure find first following for form found
from full general get give given going good great group had half hand happen hard has have having help her here
high him his home how however idea important include including increase information interest into its itself
just keep kind know large last later least left less let level life like likely line list little live long look
lot made main make many market matter may maybe mean means measure might more most much must name near need never
new next nice none normal not nothing now number numbers off often old once only open order other others our out
over own part people per percent perhaps period person place plan play please point possible present pretty
probably problem provide public put question quite rather real really reason related report result right room
round run said same saw say second see seem seems sense set several shall share she should show side since
size small some something sometimes soon sort state still such sure system take tell than thank thanks that
their them then there these they thing things think this those though through time today together told too
top total toward true try turn type under until upon use used using usual value various very want was way
well went were what whatever when where whether which while who whole why will with within without word work
world would year yet you your overall breakdown quick summary stats detail details figures profile snapshot
versus against rank ranking ranked order sorted listing list lists give gimme tell show me find pull get
according approximately roughly nearly around exactly approx vs percentage percentages portion fraction ratio
census bureau american community survey acs estimates estimate five year latest recent newest vintage data
county counties state states parish parishes borough boroughs area areas region regions nation national
wide big tiny huge larger largest smaller smallest bigger biggest highest lowest higher lower most least top
bottom above below over under between more less fewer greater within across among amongst each every all
any both either neither many much few several some number figure total count sum average mean median typical
""".split())


# ---------------------------------------------------------------------------------------------------------------
# measures in a sentence


def nice_name(m: Measure) -> str:
    return {
        "population": "population",
        "median_household_income": "median household income", "per_capita_income": "per capita income",
        "gini_index": "Gini index", "median_home_value": "median home value", "median_gross_rent": "median gross rent",
        "median_age": "median age", "median_household_income_white": "median household income for White householders",
    }.get(m.name, m.label if m.label.split()[0] in _PROPER_WORDS else m.label[0].lower() + m.label[1:])


_PROPER_WORDS = {"Hispanic", "White", "Black", "Non-Hispanic", "Gini"}


# ---------------------------------------------------------------------------------------------------------------
# numbers

_NUM = (r"(?P<cur>\$\s*)?(?P<num>\d+(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+|" + NUM_WORD_RE +
        r"|a|an|half a|a half|a quarter)\s*(?P<mult>k|thousand|m|mil|mln|million|millions|mm|bn|b|billion)?"
        r"(?![a-z0-9])(?:\s*(?P<pct>%|percent|per cent|pct|percentage points))?(?:\s+(?P<noun>people|residents|"
        r"persons|inhabitants|population|folks|households|housing units|homes|houses))?")
_GT = (r"more than|greater than|over|above|exceeding|exceeds|exceed|higher than|larger than|bigger than|"
       r"in excess of|upwards of|north of|topping|tops|older than|>")
_GE = r"at least|no less than|not less than|a minimum of|minimum of|>=|≥"
_LT = r"less than|fewer than|under|below|lower than|smaller than|beneath|south of|shy of|younger than|<"
_LE = r"at most|no more than|not more than|a maximum of|maximum of|up to|<=|≤"
_POST_GE = r"or more|or higher|or greater|or above|or over|and up|and above|and over|plus|\+"
_POST_LE = r"or less|or fewer|or lower|or below|or under|and under|and below"

#: fractions read as percentages: "over half", "at least a third", "more than 1 in 5", "fewer than one in ten"
FRACTIONS = {"half": 50.0, "a half": 50.0, "one half": 50.0, "a third": 100 / 3, "one third": 100 / 3,
             "a quarter": 25.0, "one quarter": 25.0, "a fourth": 25.0, "one fourth": 25.0, "a fifth": 20.0,
             "one fifth": 20.0, "a tenth": 10.0, "one tenth": 10.0, "two thirds": 200 / 3,
             "three quarters": 75.0, "three fourths": 75.0}
_SMALL = r"\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|twenty|hundred|a hundred"
FRACTION_RE = ("(?:" + "|".join(sorted((re.escape(f) for f in FRACTIONS), key=len, reverse=True))
               + r"|(?:" + _SMALL + r")\s+(?:in|out of)\s+(?:every\s+)?(?:" + _SMALL + r"))")


def fraction_percent(text: str) -> float | None:
    """ "a third" -> 33.33, "1 in 5" -> 20.0, "one out of every ten" -> 10.0; None when not a fraction."""
    text = " ".join(text.split())
    if text in FRACTIONS:
        return FRACTIONS[text]
    mt = re.fullmatch(r"(\S+)\s+(?:in|out of)\s+(?:every\s+)?(.+)", text)
    if not mt:
        return None
    words = {**NUM_WORDS, "a hundred": 100}
    a, b = (int(x) if x.isdigit() else words.get(x) for x in mt.groups())
    if not a or not b or a > b:
        return None
    return 100.0 * a / b


THRESHOLD_RES = [
    (re.compile(r"(?<![a-z])(?P<op>" + _GE + "|" + _LE + "|" + _GT + "|" + _LT + r")\s+"
                r"(?:about\s+|roughly\s+|around\s+)?(?P<frac>" + FRACTION_RE + r")\b"), "fraction"),
    (re.compile(r"\b(between|from)\s+" + _NUM.replace("?P<", "?P<a_") + r"\s+(and|to)\s+"
                + _NUM.replace("?P<", "?P<b_")),
     "between"),
    (re.compile(r"(?<![a-z])(?P<op>" + _GE + r")\s+(?:about\s+|roughly\s+|around\s+)?" + _NUM), ">="),
    (re.compile(r"(?<![a-z])(?P<op>" + _LE + r")\s+(?:about\s+|roughly\s+|around\s+)?" + _NUM), "<="),
    (re.compile(r"(?<![a-z])(?P<op>" + _GT + r")\s*(?:about\s+|roughly\s+|around\s+)?" + _NUM), ">"),
    (re.compile(r"(?<![a-z])(?P<op>" + _LT + r")\s*(?:about\s+|roughly\s+|around\s+)?" + _NUM), "<"),
    # ("60 years or above", "5,000 people or more": the unit between the number and its "or more")
    (re.compile(_NUM + r"\s*(?:(?:years?|yrs?|people|persons|residents|households)\s+)?(?P<post>" + _POST_GE
                + r")(?![a-z])"), ">=post"),
    (re.compile(_NUM + r"\s*(?:(?:years?|yrs?|people|persons|residents|households)\s+)?(?P<post>" + _POST_LE
                + r")(?![a-z])"), "<=post"),
]

N_RES = [
    re.compile(r"\b(top|bottom|first|last|best|worst)\s+(?P<n>\d{1,3}|" + NUM_WORD_RE + r")\b"),
    re.compile(r"\b(which|what|the|name|list|show|give me|find)\s+(?P<n>\d{1,3}|" + NUM_WORD_RE
               + r")\b(?!\s*(%|percent|k\b|thousand|million))"),
    re.compile(r"\b(?P<n>\d{1,3}|" + NUM_WORD_RE
               + r")\s+(\w+\s+){0,3}?(states|counties|countys|parishes|boroughs|places|cities|towns|villages|cdps|"
                 r"municipalities)\b"),
    re.compile(r"\b(?P<n>\d{1,3}|" + NUM_WORD_RE + r")\s+(highest|lowest|most|least|largest|smallest|biggest|"
               r"richest|poorest|oldest|youngest)\b"),
    # "lowest 5 median rents", "highest ten poverty rates": the number after the superlative
    re.compile(r"\b(highest|lowest|largest|smallest|biggest|richest|poorest|oldest|youngest|cheapest|priciest)\s+"
               r"(?P<n>\d{1,3}|" + NUM_WORD_RE + r")\b(?!\s*(%|percent|k\b|thousand|million|,\d))"),
]


def parse_number(num: str | None, mult: str | None) -> float | None:
    num = (num or "").strip()
    if num in ("a", "an"):
        if not mult:
            return None
        value = 1.0
    elif num in ("half a", "a half"):
        value = 0.5
    elif num == "a quarter":
        value = 0.25
    elif num in NUM_WORDS:
        value = float(NUM_WORDS[num])
    else:
        try:
            value = float(num.replace(",", ""))
        except ValueError:
            return None
    factor = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mil": 1e6, "mln": 1e6, "million": 1e6, "millions": 1e6,
              "mm": 1e6, "bn": 1e9, "b": 1e9, "billion": 1e9}.get((mult or "").strip(), 1.0)
    return value * factor

#: “which state has the most counties”, “counties per state”, “number of counties in each state”
COUNTIES_PER_STATE = re.compile(
    r"\bstates?\b[^.?]*\b(most|fewest|least|largest number of|greatest number of|highest number of|"
    r"smallest number of|lowest number of)\s+(counties|countys|parishes|county equivalents)\b"
    r"|\b(counties|countys|county equivalents) (per|in each|in every|by) state\b"
    r"|\bhow many (?:counties|countys) (does|do) (each|every) state\b"
    r"|\bstates? (ranked |sorted |ordered )?by (the )?(number|count) of "
    r"(counties|countys|parishes|county equivalents)\b"
)

#: a set of places added up: “total population of Texas counties over 1 million”, “how many people live in …”
SET_TOTAL = re.compile(
    r"\b(total|totals|combined|altogether|all together|in aggregate|sum of|summed|sum|added up|add up|in all)\b"
    r"|\bhow many (people|residents|persons|households|housing units|homes)\b[^?]*\b(live|lives|living|are)\b"
    r"[^?]*\b(in|across)\b(?!\s+(each|every|them|those|these|it|each one)\b)"
)

# ---------------------------------------------------------------------------------------------------------------
# regions: the Census Bureau's regions and divisions have one definition, so they are read as their states (and
# the definition is stated); informal regions ("the Sun Belt", "Pacific Northwest") have none and are declined

_NEW_ENGLAND = ("CT", "ME", "MA", "NH", "RI", "VT")
_MID_ATLANTIC = ("NJ", "NY", "PA")
_EN_CENTRAL = ("IL", "IN", "MI", "OH", "WI")
_WN_CENTRAL = ("IA", "KS", "MN", "MO", "NE", "ND", "SD")
_S_ATLANTIC = ("DE", "DC", "FL", "GA", "MD", "NC", "SC", "VA", "WV")
_ES_CENTRAL = ("AL", "KY", "MS", "TN")
_WS_CENTRAL = ("AR", "LA", "OK", "TX")
_MOUNTAIN = ("AZ", "CO", "ID", "MT", "NV", "NM", "UT", "WY")
_PACIFIC = ("AK", "CA", "HI", "OR", "WA")

#: (pattern, name used in the assumption, postal codes)
REGIONS = [
    (r"new england", "New England (Census division)", _NEW_ENGLAND),
    (r"(mid|middle) atlantic", "Middle Atlantic (Census division)", _MID_ATLANTIC),
    (r"east north central", "East North Central (Census division)", _EN_CENTRAL),
    (r"west north central", "West North Central (Census division)", _WN_CENTRAL),
    (r"south atlantic", "South Atlantic (Census division)", _S_ATLANTIC),
    (r"east south central", "East South Central (Census division)", _ES_CENTRAL),
    (r"west south central", "West South Central (Census division)", _WS_CENTRAL),
    (r"mountain(?= (states|division)\b)", "Mountain (Census division)", _MOUNTAIN),
    (r"pacific(?= (states|division)\b)", "Pacific (Census division)", _PACIFIC),
    (r"west coast", "the West Coast (CA, OR, WA)", ("CA", "OR", "WA")),
    (r"north ?east(ern)?(?= (states?|region|us)\b)|(the|in) north ?east\b(?! (of|corner))",
     "the Northeast (Census region)", _NEW_ENGLAND + _MID_ATLANTIC),
    (r"mid ?west(ern)?(?= (states?|region|us)\b)|(the|in) mid ?west\b|\bmid ?west(ern)?\b",
     "the Midwest (Census region)", _EN_CENTRAL + _WN_CENTRAL),
    (r"south(ern)?(?= (states?|region|us)\b)|(the|in) south\b(?! (of|side|end))",
     "the South (Census region)", _S_ATLANTIC + _ES_CENTRAL + _WS_CENTRAL),
    (r"west(ern)?(?= (states?|region|us)\b)|(the|in) west\b(?! (of|side|end))",
     "the West (Census region)", _MOUNTAIN + _PACIFIC),
]
REGION_RES = [(re.compile(r"\b(" + rx + r")\b"), name, codes) for rx, name, codes in REGIONS]

#: regions with no single definition: declined, naming the states to list instead
INFORMAL_REGION = re.compile(
    r"\b(pacific northwest|northwest|south ?west|south ?east|deep south|sun ?belt|rust ?belt|bible belt|"
    r"corn belt|black belt|great plains|plains states|great lakes|appalachia\w*|mountain west|east coast|"
    r"gulf coast|gulf states|tri ?state area|bay area|twin cities|new york metro|dmv area|heartland|"
    r"upper midwest|border states|"
    r"sand states|dixie|four corners|the coasts|coastal states|swing states|battleground states|"
    r"red states|blue states|southern california|northern california|central valley|inland empire|"
    r"upstate|downstate|panhandle|(?:mississippi|arkansas|yazoo|the) delta|delta region|treasure valley|"
    r"front range|hill country|low ?country|texas triangle|research triangle|lehigh valley|hudson valley|"
    r"permian basin|coal country|iron range|the ozarks|ozarks)\b")

#: a word before a period that does not end a sentence: an abbreviation ("St.", "Co.", "vs."), an AP state
#: abbreviation ("Fla.", capitalised only: "ala." is no state), a single letter ("N. Main")
NO_SENTENCE_END = re.compile(r"(?:\b(?:st|mt|ft|co|vs|no|dr|mr|mrs|ms|jr|sr|inc|approx|pct|est|dept|univ|ave|"
                              r"e\.g|i\.e|u\.s|d\.c|pop|hh|med|avg|yr|yrs|cos|cty|twp|ga|ky|la|md|mo|pa|vt|va)|"
                              r"\b(?-i:Ala|Ariz|Ark|Calif|Colo|Conn|Del|Fla|Ill|Ind|Kans?|Mass|Mich|Minn|Miss|Mont|Nebr?|"
                              r"Nev|Okla|Oreg?|Penn|Tenn|Wash|Wisc?|Wyo|ALA|ARIZ|ARK|CALIF|COLO|CONN|DEL|FLA|ILL|IND|"
                              r"KANS?|MASS|MICH|MINN|MISS|MONT|NEBR?|NEV|OKLA|OREG?|PENN|TENN|WASH|WISC?|WYO)|\b[a-z])\.$",
                              re.IGNORECASE)


def abbreviation_ends(head: str, rest: str) -> bool:
    """Whether the period closing ``head`` is an abbreviation's, not a sentence's end (``rest`` follows it): "No. 3"
    abbreviates a number, "which, no. what's the median ..." ends a sentence."""
    if not NO_SENTENCE_END.search(head):
        return False
    if re.search(r"\bno\.$", head, re.IGNORECASE) and not re.match(r"\s*[#\d]", rest):
        return False
    # "St. Louis", "Mt. Hood" name what follows; "how many ppl live in bozeman MT. coworker is moving ..." ends there
    return not (re.search(r"\b(?:st|mt|ft)\.$", head, re.IGNORECASE) and re.match(r"\s*[a-z]", rest))


def sentences(text: str) -> list[str]:
    """``text`` split into its sentences, after ".", "?" or "!" and a space — not after an abbreviation's period."""
    out: list[str] = []
    start = 0
    for mt in re.finditer(r"[.?!]+\s+", text):
        if text[mt.start()] == "." and not re.search(r"[?!]", mt.group(0)) and \
                abbreviation_ends(text[start:mt.start() + 1], text[mt.end():]):
            continue
        out.append(text[start:mt.end()].strip())
        start = mt.end()
    out.append(text[start:].strip())
    return [x for x in out if x]


#: a sentence that asks for something without a question mark ("Please provide ...", "Compare ...")
REQUEST_START = re.compile(r"\W*(?:(?:please|pls|now|ok|okay|so|and)\W+)?(what|which|how|is|are|does|do|can|could|"
                            r"would|"
                            r"give|show|list|rank|compare|tell|who|where|when|name|find|pull|get|enumerate|add|sum|"
                            r"tally|provide|identify|report|supply|calculate|compute|display|confirm|check|look\s+up|break\s+down|"
                            r"state\s+(?:by\s+how|how|what|which|the))\b",
                            re.IGNORECASE)
#: a ranking asked in shorthand, without a verb: "top 5 fla counties by ...", "5 largest places in Ga. by ..."
RANKING_START = re.compile(r"\W*(?:the\s+)?(?:(?:top|bottom)\b|(?:\d+|two|three|four|five|six|seven|eight|nine|ten|"
                            r"twenty)\s+(?:largest|biggest|smallest|highest|lowest|richest|poorest|most|least|"
                            r"fastest|slowest)\b|(?:largest|biggest|smallest|highest|lowest|richest|poorest)\s+"
                            r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten|twenty)\b)", re.IGNORECASE)
