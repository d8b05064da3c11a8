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
"""

from __future__ import annotations

import difflib
import re
import threading
import unicodedata
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import psycopg

from ..census import semantic
from ..census.semantic import Measure, Mention, find_mentions, load_gaps, load_measures
from ..errors import NotSetUpError
from ..retrieve import Chunk
from .base import Attempt, Plan

# ---------------------------------------------------------------------------------------------------------------
# text normalisation


def normalize_question(question: str) -> str:
    """ASCII text with the case kept: accents, apostrophes and periods after letters gone ("St. Louis" ->
    "St Louis", "U.S." -> "US", "Prince George's" -> "Prince Georges"), hyphens between words as spaces,
    "Saint" as "St".  Lowercasing the result gives the text every matcher works on (same offsets)."""
    text = unicodedata.normalize("NFKD", question)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.replace("’", "'").replace("‘", "'").replace("`", "'").replace("“", '"').replace("”", '"')
    text = text.replace("'", "")
    text = re.sub(r"(?<=[A-Za-z])\.", "", text)
    text = re.sub(r"(?<=[A-Za-z])[-/](?=[A-Za-z0-9])", " ", text)
    text = re.sub(r"(?<=[0-9])-(?=[A-Za-z])", " ", text)
    text = text.replace("&", " and ")
    text = re.sub(r"\bSaint\b", "St", text, flags=re.IGNORECASE)
    text = re.sub(r"\bSainte\b", "Ste", text, flags=re.IGNORECASE)
    text = re.sub(r"\s+", " ", text).strip()
    if len(text.lower()) != len(text):  # exotic case mappings: keep offsets aligned
        text = "".join(ch if len(ch.lower()) == 1 else "?" for ch in text)
    return text


def _geo_key(name: str) -> str:
    return normalize_question(name).lower()


def _sql_str(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _fmt_num(value: float) -> str:
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _sql_num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


# ---------------------------------------------------------------------------------------------------------------
# geography and data coverage, loaded once per database


@dataclass(frozen=True)
class State:
    fips: str
    abbr: str
    name: str
    geo_id: str


@dataclass(frozen=True)
class County:
    geo_id: str
    name: str  # 'Fairfax County', 'Baltimore city'
    state: State
    base: str  # normalised name without the suffix: 'fairfax', 'baltimore'
    suffix: str  # normalised suffix: 'county', 'city', 'parish', ...
    population: float

    @property
    def label(self) -> str:
        return f"{self.name}, {self.state.abbr}"


_SUFFIXES = ("city and borough", "census area", "planning region", "municipality", "municipio", "borough",
             "parish", "county", "city")


@dataclass
class Catalog:
    """What the planner knows about the database: measures, places, which rows exist."""

    measures: list[Measure]
    states: list[State]
    counties: list[County]
    has_rows: dict[str, frozenset]  # variable code -> geo_ids with an estimate
    generation: int = 0  # the semantic layer's generation this was built from (a fetch bumps it)
    state_by_key: dict[str, State] = field(default_factory=dict)
    state_by_abbr: dict[str, State] = field(default_factory=dict)
    county_index: dict[tuple[str, str], list[County]] = field(default_factory=dict)
    counties_by_state: dict[str, list[County]] = field(default_factory=dict)
    bases_by_suffix: dict[str, list[str]] = field(default_factory=dict)
    state_pattern: re.Pattern | None = None

    def __post_init__(self) -> None:
        for s in self.states:
            self.state_by_key[_geo_key(s.name)] = s
            self.state_by_abbr[s.abbr] = s
        for c in self.counties:
            keys = {c.base}
            if c.base.startswith("st "):
                keys.add("saint " + c.base[3:])
            for k in keys:
                self.county_index.setdefault((k, c.suffix), []).append(c)
            self.counties_by_state.setdefault(c.state.fips, []).append(c)
        for (base, suffix) in self.county_index:
            self.bases_by_suffix.setdefault(suffix, []).append(base)
        names = sorted(self.state_by_key, key=len, reverse=True)
        self.state_pattern = re.compile(r"(?<![a-z])(" + "|".join(re.escape(n) for n in names) + r")s?(?![a-z])")

    def measure(self, name: str) -> Measure | None:
        return next((m for m in self.measures if m.name == name), None)

    def has(self, measure: Measure, geo_id: str) -> bool:
        return all(geo_id in self.has_rows.get(code, ()) for code in measure.codes)


_catalogs: dict[str, Catalog] = {}
_catalog_lock = threading.Lock()


def _split_county(name: str) -> tuple[str, str]:
    key = _geo_key(name)
    for suffix in _SUFFIXES:
        if key.endswith(" " + suffix):
            return key[: -len(suffix) - 1].strip(), suffix
    return key, ""


def _read_catalog(conn: psycopg.Connection):
    """Every place, the places that have each variable, and populations (to order ambiguous names)."""
    geo = conn.execute(
        "SELECT geo_id, level, state_fips, state_abbr, state_name, county_name FROM public.geography"
    ).fetchall()
    have = conn.execute(
        "SELECT variable_code, array_agg(geo_id) FROM public.estimates WHERE estimate IS NOT NULL GROUP BY 1"
    ).fetchall()
    pop = dict(conn.execute(
        "SELECT geo_id, estimate FROM public.estimates WHERE variable_code = 'B01003_001E'"
    ).fetchall())
    return geo, have, pop


def load_catalog(settings) -> Catalog:
    """Read places, measures and row coverage from the database once per settings (owner connection)."""
    key = f"{settings.database_url or ''}|{settings.data_dir}"
    with _catalog_lock:
        cat = _catalogs.get(key)
    if cat is not None and cat.generation == semantic.generation(settings):
        return cat
    from ..db import owner

    measures = load_measures(settings)
    try:
        with owner(settings) as conn:
            geo, have, pop = _read_catalog(conn)
    except psycopg.errors.UndefinedTable as exc:
        raise NotSetUpError("The census tables are not there yet: run `python -m sage setup` first.") from exc
    states = [State(r[2], r[3], r[4], r[0]) for r in geo if r[1] == "state"]
    by_fips = {s.fips: s for s in states}
    counties = []
    for geo_id, level, state_fips, _abbr, _sname, county_name in geo:
        if level != "county" or state_fips not in by_fips or not county_name:
            continue
        base, suffix = _split_county(county_name)
        counties.append(County(geo_id, county_name, by_fips[state_fips], base, suffix, float(pop.get(geo_id) or 0)))
    cat = Catalog(measures, states, counties, {code: frozenset(ids) for code, ids in have},
                  generation=semantic.generation(settings))
    with _catalog_lock:
        _catalogs[key] = cat
    return cat


# ---------------------------------------------------------------------------------------------------------------
# vocabulary

_NUM_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
              "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "twenty five": 25, "thirty": 30,
              "fifty": 50, "a dozen": 12, "dozen": 12, "a couple": 2, "a few": 3, "hundred": 100}
_NUM_WORD_RE = "|".join(sorted((re.escape(w) for w in _NUM_WORDS), key=len, reverse=True))

#: postal codes that are also English words: only taken when written in capitals (or right after a county name)
_WORDLIKE_ABBRS = frozenset("in or me ok hi oh de pa la ma co al id mo ne ms mt as am us ar ct pr wa va ga".split())

_DEMONYMS = {
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
_COUNTY_ALIASES = {
    "brooklyn": ("Kings County", "36"), "manhattan": ("New York County", "36"),
    "staten island": ("Richmond County", "36"), "the bronx": ("Bronx County", "36"), "bronx": ("Bronx County", "36"),
    "queens": ("Queens County", "36"), "la county": ("Los Angeles County", "06"),
}

#: topics the shipped extract has no estimates for: (pattern, what is missing)

_SUB_STATE = re.compile(
    r"\b(zip ?codes?|zips?|zcta\w*|postal codes?|census tracts?|tracts?|block groups?|neighbou?rhoods?|"
    r"metro\w*|msas?|cbsas?|congressional districts?|school districts?|towns?|townships?|villages?|"
    r"cities|boroughs? of new york|precincts?|wards?|suburbs?|downtown)\b")
_CITY_WORD = re.compile(r"\b(city|cities)\b")
_TIME_WORDS = re.compile(
    r"\b(forecasts?|forecasting|project(ed|ion|ions)|predict\w*|will (be|have|grow|reach)|future|next (year|decade)|"
    r"trends?|trending|over time|historical\w*|history|since \d{4}|grew|grown|growth|growing|increas\w*|"
    r"decreas\w*|declin\w*|chang(e|ed|es|ing) (since|from|over|between)|compared to \d{4}|back in|"
    r"decades? ago|years? ago|by 20\d\d|in 20[3-9]\d)\b")
_YEAR = re.compile(r"(?<![\d$,.])(1[89]\d\d|20\d\d)(?:\s*(?:-|to|through)\s*(1[89]\d\d|20\d\d))?"
                   r"(?![\d,]|\s*(%|percent))")
_VERSUS_AVG = re.compile(
    r"\b(above|below|higher than|lower than|more than|less than|greater than|exceed\w*|under|over|"
    r"compared? (to|with)|relative to|vs|versus|than)\s+(the\s+)?(national|state|us|country|statewide|countywide|"
    r"nationwide|overall|average|median|mean|typical)\b(?!\s+(household|home|gross|age|rent|value|income|"
    r"hh|of\b))")

_NATIONAL = re.compile(
    r"\b(united states|usa|the us|in us|of us|for us|the nation|nationally|nationwide|national|"
    r"the (whole|entire) (country|nation|us)|the country|this country|our country|countrywide|country wide|"
    r"all of america|america|americans|across all states|all states combined|all 50 states combined|"
    r"the us overall|us total|"
    r"total us|us overall|us wide)\b")
_FIFTY = re.compile(r"\b(50|fifty) states\b")
_EXCL_DC = re.compile(r"\b(excluding|except|without|not counting|leaving out|exclude|minus) (the )?"
                      r"(dc|district of columbia|washington dc)\b")
_EXCL_PR = re.compile(r"\b(excluding|except|without|not counting|leaving out|exclude|minus) (the )?(pr|puerto rico)\b")
_INCL_PR = re.compile(r"\b(including|include|with|plus) (the )?(pr|puerto rico)\b")

_LEVEL_PLURAL = re.compile(r"\b(states|counties|parishes|boroughs|county equivalents|municipios|census areas)\b")
_LEVEL_SINGULAR = re.compile(r"\b(state|county|parish|borough|county equivalent|municipio)\b")
_SET_CUE = re.compile(
    r"\b(which|what|each|every|per|by|all|any|list|rank|ranking|ranked|show|among|across|compare)\s+"
    r"(of the\s+|the\s+)?(\d+\s+|[a-z]+\s+){0,3}?(state|county|parish|states|counties|parishes)\b")
_THAN_PLACE = re.compile(r"\b(more|higher|greater|larger|bigger|less|lower|fewer|smaller)\s+(\w+\s+){0,5}?than\s+"
                         r"(that of\s+|those of\s+|in\s+|for\s+|of\s+)?")
_COMBINED = re.compile(r"\b(combined|altogether|all together|as a whole|in aggregate|taken together)\b")
_SET_WORDS = frozenset("which what each every any a an the one per top bottom all list rank".split())
_PER_STATE = re.compile(r"\b(in|within|for|of|across) (each|every) state\b|\bper state\b|\bby state\b|"
                        r"\beach states?\b|\bstate by state\b")
_BY_LEVEL = re.compile(r"\b(by|per|each|every|for each|for every|for all|all|across|of all)\s+(the\s+)?(\d+\s+)?"
                       r"(states?|counties|county|parishes|parish)\b")

_DESC_WORDS = re.compile(
    r"\b(top|highest|most|largest|biggest|greatest|richest|wealthiest|oldest|priciest|leading|maximum|max|"
    r"best|higher|larger|more|bigger|heaviest|strongest|worst)\b")
_ASC_WORDS = re.compile(r"\b(bottom|lowest|least|smallest|fewest|poorest|youngest|cheapest|minimum|min|lower|"
                        r"smaller|fewer|weakest|lightest)\b")
_SUPERLATIVE = re.compile(
    r"\b(top|bottom|highest|lowest|most|least|largest|smallest|biggest|fewest|greatest|richest|wealthiest|"
    r"poorest|oldest|youngest|cheapest|priciest|best|worst|leading|maximum|minimum|rank|ranked|ranking|"
    r"order|sorted|sort)\b")
_COMPARE = re.compile(r"\b(compare|comparison|vs|versus|against|between|differ\w*|relative)\b")
_SHARE_OF_WHOLE = re.compile(
    r"\b(what|which)?\s*(share|percent|percentage|proportion|fraction|portion|pct)\b|%|\bhow much of\b")

#: measures that describe who people are; another measure "for" one of them is a cross-tabulation
_GROUP_FAMILIES = {"hispanic", "white", "black", "non_hispanic_white", "people_of_color", "foreign_born",
                   "noncitizen", "naturalized", "native_born", "age_65_plus", "under_18", "female", "male"}

_BAD_HIGH = {"poverty_rate", "people_in_poverty", "unemployment_rate", "unemployed", "uninsured_share",
             "uninsured_population", "gini_index"}

# words that may sit next to a place without being one (for spotting unknown place names)
_KNOWN_WORDS = frozenset("""
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
""".split())

_STOP_BEFORE_PLACE = frozenset("in of for at from near around across within inside".split())
_JOINERS = frozenset("vs versus and or with to".split())


# ---------------------------------------------------------------------------------------------------------------
# parse results


@dataclass
class Place:
    level: str  # 'state' | 'county'
    state: State
    county: County | None
    span: tuple[int, int]
    how: str = "exact"  # exact | abbr | fuzzy | qualifier | demonym | alias | unique | rule
    text: str = ""
    candidates: tuple[County, ...] = ()  # an ambiguous county name without a state

    @property
    def geo_id(self) -> str:
        return self.county.geo_id if self.county else self.state.geo_id

    @property
    def label(self) -> str:
        return self.county.label if self.county else self.state.name


@dataclass
class Threshold:
    op: str  # '>', '>=', '<', '<=', 'between'
    value: float
    value2: float | None
    unit: str  # 'percent' | 'dollars' | 'plain'
    span: tuple[int, int]
    text: str
    noun: str = ""  # the word after the number ("people", "households")
    measure: Measure | None = None
    ref: "Place | None" = None  # "more people than Wyoming": the value of that place is the threshold


class _Decline(Exception):
    """Raised inside planning to stop with an honest "cannot answer"."""

    def __init__(self, reason: str, suggestions: Sequence[str] = (), assumptions: Sequence[str] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.suggestions = list(suggestions)
        self.assumptions = list(assumptions)


@dataclass
class _Parse:
    question: str
    tc: str  # normalised, case kept
    t: str  # normalised, lowercase
    places: list[Place] = field(default_factory=list)
    blocked: list[tuple[int, int]] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)
    thresholds: list[Threshold] = field(default_factory=list)
    level: str | None = None
    national: bool = False
    fifty: bool = False
    excl_dc: bool = False
    incl_pr: bool = False
    excl_pr_said: bool = False
    notes: list[str] = field(default_factory=list)


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
            return self._decline("The question is empty.", self._generic_suggestions())
        cat = self.catalog
        try:
            plan = self._plan(question, chunks, cat)
        except _Decline as exc:
            return self._decline(exc.reason, exc.suggestions or self._generic_suggestions(), exc.assumptions)
        if attempts:
            plan = self._after_failures(plan, attempts)
        return plan

    def _decline(self, reason: str, suggestions: Sequence[str], assumptions: Sequence[str] = ()) -> Plan:
        assumptions = [f"Cannot answer: {reason}", *assumptions]
        return Plan(sql="", assumptions=assumptions, display_hint="table", planner=self.name,
                    suggestions=list(dict.fromkeys(suggestions))[:3])

    def _after_failures(self, plan: Plan, attempts: Sequence[Attempt]) -> Plan:
        """A previous SQL failed: never propose it again; try the plain variant (no MOE / map columns), else stop."""
        tried = {_squash(a.sql) for a in attempts}
        if plan.declined or _squash(plan.sql) not in tried:
            return plan
        simpler = _simplify(plan.sql)
        if simpler and _squash(simpler) not in tried:
            plan.sql = simpler
            plan.assumptions.append("Retried without the margin-of-error and map columns after an error.")
            return plan
        last = attempts[-1]
        return self._decline(
            f"the query for this question failed ({last.error.strip()[:200]}) and the offline planner has no "
            "other way to write it.", self._generic_suggestions())

    # ---------------------------------------------------------------- the pipeline
    def _plan(self, question: str, chunks: Sequence[Chunk], cat: Catalog) -> Plan:
        tc = normalize_question(question)
        p = _Parse(question=question, tc=tc, t=tc.lower())
        self._find_places(p, cat)
        self._find_measures(p, cat, chunks)
        self._find_unknown_places(p, cat)
        self._resolve_ambiguous(p)
        self._check_scope(p, cat)
        self._find_thresholds(p, cat)
        self._find_level(p)
        return self._build(p, cat)

    # ================================================================ places
    def _find_places(self, p: _Parse, cat: Catalog) -> None:
        t = p.t
        self._find_counties(p, cat)
        # the District of Columbia in its spellings
        for mt in re.finditer(r"\b(district of columbia|washington,? dc|washington,? d c|d c|dc)\b", t):
            if not _overlaps(mt.span(), p.blocked):
                self._add_state(p, cat.state_by_abbr["DC"], mt.span(), "exact")
        # full state names ("Texas", "texass" from "Texas's")
        for mt in cat.state_pattern.finditer(t):
            span = mt.span()
            if _overlaps(span, p.blocked):
                continue
            after = t[span[1]:]
            if re.match(r"\s+city\b", after):  # New York City, Kansas City, Oklahoma City...
                raise _Decline(
                    f"“{p.tc[span[0]:span[1]]} City” is a city; the data has only states and counties "
                    "(county-equivalents), not cities or other places.",
                    self._state_suggestions(cat.state_by_key.get(mt.group(1))))
            if mt.group(1) == "washington" and re.match(r",?\s+(dc|d c)\b", after):
                continue
            self._add_state(p, cat.state_by_key[mt.group(1)], span, "exact")
        # demonyms ("Texans")
        for word, state_name in _DEMONYMS.items():
            for mt in re.finditer(r"\b" + re.escape(word) + r"\b", t):
                if not _overlaps(mt.span(), p.blocked):
                    self._add_state(p, cat.state_by_key[_geo_key(state_name)], mt.span(), "demonym")
        # postal codes
        all_caps = sum(ch.isupper() for ch in p.tc) > 0.6 * max(1, sum(ch.isalpha() for ch in p.tc))
        for mt in re.finditer(r"(?<![A-Za-z0-9])([A-Za-z]{2})(?![A-Za-z0-9])", p.tc):
            code = mt.group(1)
            st = cat.state_by_abbr.get(code.upper())
            if st is None or _overlaps(mt.span(), p.blocked):
                continue
            if code.upper() == "US":
                continue
            wordlike = code.lower() in _WORDLIKE_ABBRS
            if code.isupper() and (not all_caps or not wordlike):
                self._add_state(p, st, mt.span(), "abbr")
            elif code.islower() and not wordlike:
                self._add_state(p, st, mt.span(), "abbr")
        self._find_fuzzy_states(p, cat)
        self._resolve_ambiguous(p)

    def _resolve_ambiguous(self, p: _Parse) -> None:
        """An ambiguous county name ("Cook County") with exactly one candidate in a state the question names
        elsewhere ("Cook County's share of Illinois' people") is that one, and the state only served to place it
        (it stays a place of its own when the question compares the two)."""
        states = [pl for pl in p.places if pl.level == "state"]
        counties = [pl for pl in p.places if pl.level == "county"]
        if len(counties) >= 2 and any(pl.how == "ambiguous" for pl in counties) and not states:
            # counties named together usually share a state: "Harris County or Dallas County" -> both in Texas
            sets = [{c.state.fips for c in pl.candidates} if pl.how == "ambiguous" else {pl.state.fips}
                    for pl in counties]
            common = set.intersection(*sets)
            # ... but only when that state is also where each ambiguous name is largest ("Cook and Harris" stay open)
            largest = {pl.candidates[0].state.fips for pl in counties if pl.how == "ambiguous"}
            if len(common) == 1 and common == largest:
                fips = common.pop()
                for i, pl in enumerate(p.places):
                    if pl.how == "ambiguous":
                        c = next(c for c in pl.candidates if c.state.fips == fips)
                        p.places[i] = Place("county", c.state, c, pl.span, "rule", pl.text)
                        p.notes.append(f"“{pl.text}” exists in several states; read as {c.label}, the only state "
                                       "that has every county the question names.")
        for i, pl in enumerate(p.places):
            if pl.how != "ambiguous":
                continue
            pick = [c for c in pl.candidates if any(c.state.fips == s.state.fips for s in states)]
            if len(pick) == 1:
                c = pick[0]
                p.places[i] = Place("county", c.state, c, pl.span, "rule", pl.text)
                p.notes.append(f"“{pl.text}” exists in {len(pl.candidates)} states; read as {c.label}, the one in "
                               "the state the question names.")
                if not _COMPARE.search(p.t):
                    p.places = [q for q in p.places if not (q.level == "state" and q.state.fips == c.state.fips)]

    def _add_state(self, p: _Parse, st: State, span: tuple[int, int], how: str) -> None:
        p.blocked.append(span)
        p.places.append(Place("state", st, None, span, how, p.tc[span[0]:span[1]]))

    def _find_counties(self, p: _Parse, cat: Catalog) -> None:
        t = p.t
        # New York City boroughs and other common names of counties
        for word, (county_name, fips) in _COUNTY_ALIASES.items():
            for mt in re.finditer(r"\b" + re.escape(word) + r"\b(?!\s+county)", t):
                if _overlaps(mt.span(), p.blocked):
                    continue
                c = next((c for c in cat.counties_by_state.get(fips, []) if c.name == county_name), None)
                if c:
                    p.blocked.append(mt.span())
                    p.places.append(Place("county", c.state, c, mt.span(), "alias", p.tc[mt.start():mt.end()]))
        self._find_county_lists(p, cat)
        suffix_re = re.compile(r"\b(city and borough|census area|planning region|municipality|municipio|borough|"
                               r"parish|county|countys|cnty|cty|co|city)\b")
        for mt in suffix_re.finditer(t):
            if _overlaps(mt.span(), p.blocked):
                continue
            suffix = "county" if mt.group(1) in ("countys", "cnty", "cty", "co") else mt.group(1)
            if mt.group(1) == "co":
                # "Cook Co., IL": only right after a county name and before its state, else it is Colorado
                words = t[: mt.start()].rstrip().split(" ")
                if not any(cat.county_index.get((" ".join(words[-k:]), "county")) for k in range(1, 4)
                           if len(words) >= k) or not self._qualified(p, cat, mt.end()):
                    continue
            before = t[: mt.start()].rstrip()
            words = before.split(" ")
            found = None
            for k in range(min(6, len(words)), 0, -1):
                base = " ".join(words[-k:])
                hits = cat.county_index.get((base, suffix))
                if hits:
                    found = (base, hits)
                    break
            if found is None and suffix == "city":
                # "the city of Baltimore" / "Baltimore City" handled above; "city of X" -> X city
                m2 = re.match(r"\s+of\s+([a-z]+(?: [a-z]+){0,2})", t[mt.end():])
                if m2:
                    for k in range(len(m2.group(1).split()), 0, -1):
                        base = " ".join(m2.group(1).split()[:k])
                        hits = cat.county_index.get((base, "city"))
                        if hits:
                            start = mt.start()
                            end = mt.end() + len(m2.group(0).split(base)[0]) + len(base)
                            self._add_county(p, cat, hits, (start, end), "alias")
                            break
                continue
            if found is None:
                fuzzy = self._fuzzy_county(words, suffix, cat)
                if fuzzy is None:
                    last = words[-1] if words else ""
                    if suffix in ("county", "parish") and last.isalpha() and last not in _KNOWN_WORDS \
                            and last not in _COMMON_ENGLISH and not _is_measure_word(last, cat) \
                            and not _SUPERLATIVE.search(last) and not _DESC_WORDS.search(last) \
                            and not _ASC_WORDS.search(last) and last not in _STATE_WORDS(cat):
                        name = p.tc[before.rfind(" ") + 1: mt.end()] if " " in before else p.tc[: mt.end()]
                        raise _Decline(f"no county named “{name}” was found in the data.",
                                       self._generic_suggestions())
                    continue
                base, hits, how = fuzzy
                start = mt.start() - len(base) - 1
                typed_from = max(0, mt.start() - len(" ".join(words[-len(base.split()):])) - 1)
                self._add_county(p, cat, hits, (max(0, start), mt.end()), how, typed=p.tc[typed_from: mt.end()])
                continue
            base, hits = found
            start = mt.start() - len(base) - 1
            if base in cat.state_by_key and suffix == "county" and not self._qualified(p, cat, mt.end()):
                prev = t[: max(0, start)].split()[-1:] or [""]
                if prev[0] in _SET_WORDS or prev[0].isdigit() or _SUPERLATIVE.search(prev[0]) \
                        or _is_measure_word(prev[0], cat):
                    continue  # "Which Texas county has ...": the state, and a county-level question
            self._add_county(p, cat, hits, (max(0, start), mt.end()), "exact")

    def _find_county_lists(self, p: _Parse, cat: Catalog) -> None:
        """ "Cook and DuPage counties", "Orleans, Jefferson and St Tammany parishes": several counties sharing
        one plural suffix.  Taken only when every name is a county (else "Texas and Oklahoma counties" is a
        level word with two states)."""
        t = p.t
        for mt in re.finditer(r"\b(counties|parishes)\b", t):
            suffix = "county" if mt.group(1) == "counties" else "parish"
            head = re.split(r"\b(?:in|of|for|between|compare|comparing|the|both)\b|[:;?]", t[: mt.start()])[-1]
            pieces = [x.strip() for x in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or|vs|versus|&)\s+", head)
                      if x.strip()]
            if len(pieces) < 2:
                continue
            found: list[list[County]] = []
            bases: list[str] = []
            for piece in pieces:
                words = piece.split()
                base = next((" ".join(words[-k:]) for k in range(len(words), 0, -1)
                             if (" ".join(words[-k:]), suffix) in cat.county_index), None)
                if base is None:
                    break
                bases.append(base)
                found.append(cat.county_index[(base, suffix)])
            if len(found) != len(pieces) or all(b in cat.state_by_key for b in bases):
                continue
            pieces = bases
            start = mt.start() - len(head) + (len(head) - len(head.lstrip()))
            span = (start, mt.end())
            # one state for all: named after the list, else the only state that has every name
            qual = None
            mq = re.match(r"(\s*,\s*|\s+in\s+|\s+of\s+|\s*\(\s*|\s+)", t[mt.end():])
            if mq:
                ms = cat.state_pattern.match(t, mt.end() + mq.end())
                if ms:
                    qual = (cat.state_by_key[ms.group(1)], (mt.end() + mq.end(), ms.end()))
                else:
                    ma = re.compile(r"([a-z]{2})(?![a-z0-9])").match(t, mt.end() + mq.end())
                    if ma and ma.group(1).upper() in cat.state_by_abbr and (
                            p.tc[ma.start():ma.end()].isupper() or ma.group(1) not in _WORDLIKE_ABBRS):
                        qual = (cat.state_by_abbr[ma.group(1).upper()], ma.span())
            common = set.intersection(*[{c.state.fips for c in hits} for hits in found])
            fips = qual[0].fips if qual else (next(iter(common)) if len(common) == 1 else None)
            if fips is None or fips not in common:
                continue
            p.blocked.append(span)
            if qual:
                p.blocked.append(qual[1])
            for piece, hits in zip(pieces, found):
                c = next(c for c in hits if c.state.fips == fips)
                p.places.append(Place("county", c.state, c, span, "qualifier" if qual else "rule", piece))
            if not qual:
                state_name = next(c.state.name for c in found[0] if c.state.fips == fips)
                p.notes.append(f"{_join(pieces)} {mt.group(1)} read as the ones in {state_name}, the only state "
                               "that has all of them.")

    def _qualified(self, p: _Parse, cat: Catalog, end: int) -> bool:
        """Whether a state name or postal code follows position ``end`` ("Texas County, MO")."""
        rest = p.t[end:]
        mq = re.match(r"(\s*,\s*|\s*\(\s*|\s+in\s+|\s+)", rest)
        if not mq:
            return False
        pos = end + mq.end()
        if cat.state_pattern.match(p.t, pos):
            return True
        ma = re.compile(r"([a-z]{2})(?![a-z0-9])").match(p.t, pos)
        return bool(ma and ma.group(1).upper() in cat.state_by_abbr and (
            p.tc[ma.start():ma.end()].isupper() or ma.group(1) not in _WORDLIKE_ABBRS))

    def _fuzzy_county(self, words: list[str], suffix: str, cat: Catalog):
        """A misspelled county name before its suffix ("Maricpa County"): the closest name with that suffix
        (``_add_county`` then prefers the one in the state named right after it)."""
        bases = cat.bases_by_suffix.get(suffix, [])
        for k in (3, 2, 1):
            if len(words) < k:
                continue
            typed = " ".join(words[-k:])
            if len(typed) < 4 or typed in _KNOWN_WORDS or words[-k] in _KNOWN_WORDS:
                continue
            close = difflib.get_close_matches(typed, bases, n=3, cutoff=0.8)
            if close:
                return close[0], cat.county_index[(close[0], suffix)], "fuzzy"
        return None

    def _add_county(self, p: _Parse, cat: Catalog, hits: list[County], span: tuple[int, int], how: str,
                    typed: str = "") -> None:
        t = p.t
        # a state right after the county qualifies it: "Wayne County, MI", "wayne county michigan", "(TX)"
        rest = t[span[1]:]
        qual = None
        mq = re.match(r"(\s*,\s*|\s*\(\s*|\s+in\s+(the\s+state\s+of\s+)?|\s+of\s+|\s+)", rest)
        if mq:
            pos = span[1] + mq.end()
            ms = cat.state_pattern.match(t, pos)
            if ms:
                qual = (cat.state_by_key[ms.group(1)], (pos, ms.end()))
            else:
                ma = re.compile(r"([a-z]{2})(?![a-z0-9])").match(t, pos)
                if ma and ma.group(1).upper() in cat.state_by_abbr and ma.group(1) != "us":
                    raw = p.tc[ma.start():ma.end()]
                    sep = mq.group(1)
                    if raw.isupper() or ma.group(1) not in _WORDLIKE_ABBRS or "," in sep or "(" in sep:
                        qual = (cat.state_by_abbr[ma.group(1).upper()], ma.span())
            if qual is None and re.match(r"\s*,?\s*(dc|d c|district of columbia)\b", rest):
                qual = (cat.state_by_abbr["DC"], (span[1], span[1] + len(rest) - len(rest.lstrip())))
        text = typed or p.tc[span[0]:span[1]]
        if qual is not None:
            st, qspan = qual
            in_state = [c for c in hits if c.state.fips == st.fips]
            if not in_state:
                # maybe misspelled: closest name with that suffix in that state
                suffix = hits[0].suffix
                names = [c.base for c in cat.counties_by_state.get(st.fips, []) if c.suffix == suffix]
                close = difflib.get_close_matches(hits[0].base, names, n=1, cutoff=0.85)
                if close and how != "exact":
                    in_state = [c for c in cat.counties_by_state[st.fips] if c.base == close[0] and c.suffix == suffix]
                if not in_state:
                    raise _Decline(f"there is no {hits[0].name} in {st.name} in the data.",
                                   [f"What is the population of {c.label}?" for c in hits[:2]]
                                   + [f"Which {st.name} counties have the most people?"])
            p.blocked.append(span)
            p.blocked.append(qspan)
            how = "fuzzy" if how == "fuzzy" else "qualifier"
            p.places.append(Place("county", st, in_state[0], (span[0], qspan[1]), how, text))
            return
        p.blocked.append(span)
        if len(hits) == 1:
            p.places.append(Place("county", hits[0].state, hits[0], span, how if how != "exact" else "unique", text))
        else:
            ordered = tuple(sorted(hits, key=lambda c: -c.population))
            p.places.append(Place("county", ordered[0].state, None, span, "ambiguous", text, candidates=ordered))

    def _find_fuzzy_states(self, p: _Parse, cat: Catalog) -> None:
        """Misspelled state names ("Missisippi", "Goergia", "north carolna")."""
        t = p.t
        names = list(cat.state_by_key)
        tokens = [(m.group(0), m.span()) for m in re.finditer(r"[a-z]+", t)]
        used: list[tuple[int, int]] = []
        for n in (3, 2, 1):
            for i in range(len(tokens) - n + 1):
                group = tokens[i:i + n]
                span = (group[0][1][0], group[-1][1][1])
                if _overlaps(span, p.blocked) or _overlaps(span, used):
                    continue
                words = [w for w, _ in group]
                if any(w in _KNOWN_WORDS and n == 1 for w in words) or words[0] in _KNOWN_WORDS:
                    continue
                typed = " ".join(words)
                if len(typed) < 5 or (n == 1 and typed in _COMMON_ENGLISH):
                    continue
                close = difflib.get_close_matches(typed, names, n=1, cutoff=0.84 if n == 1 else 0.86)
                if close and close[0].count(" ") == n - 1 and close[0][0] == typed[0]:
                    st = cat.state_by_key[close[0]]
                    used.append(span)
                    p.blocked.append(span)
                    p.places.append(Place("state", st, None, span, "fuzzy", p.tc[span[0]:span[1]]))

    def _find_unknown_places(self, p: _Parse, cat: Catalog) -> None:
        """A name that is no state or county — usually a city ("Austin TX", "in Chicago") — must not be
        silently dropped: the answer would be about somewhere else."""
        tokens = [(m.group(0), m.span()) for m in re.finditer(r"[A-Za-z]+", p.tc)]
        # In Title Case Questions capitals say nothing about names
        title_case = sum(w[0].isupper() for w, _ in tokens) > 0.6 * max(1, len(tokens))
        for i, (word, span) in enumerate(tokens):
            if _overlaps(span, p.blocked):
                continue
            low = word.lower()
            if low in _KNOWN_WORDS or low in _COMMON_ENGLISH or _is_measure_word(low, cat):
                continue
            prev = tokens[i - 1][0].lower() if i > 0 else ""
            nxt_span = tokens[i + 1][1] if i + 1 < len(tokens) else None
            capital = (word[0].isupper() and i > 0 and not word.isupper()
                       and (not title_case or prev in _STOP_BEFORE_PLACE))
            before_state = nxt_span is not None and any(
                pl.level == "state" and pl.span[0] == nxt_span[0] for pl in p.places)
            if before_state and (capital or prev in _STOP_BEFORE_PLACE):
                st = next(pl.state for pl in p.places if pl.span[0] == nxt_span[0])
                same = _counties_named(low, cat, st)
                raise _Decline(
                    f"“{word}” looks like a city or town; the data has only states and counties "
                    "(county-equivalents), not cities, towns or ZIP codes"
                    + (f" — did you mean {_join([c.label for c in same[:3]])}?" if same else "."),
                    self._county_suggestions(p, same[:2]) + self._state_suggestions(st))
            joined = prev in _JOINERS
            if capital and (prev in _STOP_BEFORE_PLACE or joined):
                # a name of several words ("St Louis", "Santa Fe"): the longest that names counties
                name, same = word, _counties_named(low, cat)
                k_used = 1
                for k in (3, 2):
                    group = tokens[i:i + k]
                    if len(group) == k and all(w[0].isupper() for w, _ in group):
                        hits = _counties_named(" ".join(w.lower() for w, _ in group), cat)
                        if hits:
                            name, same, k_used = " ".join(w for w, _ in group), hits, k
                            break
                # "Prince William County VA vs Loudoun": a bare name next to a county of the same state
                named = {c.state.fips for pl in p.places if pl.level == "county"
                         for c in ((pl.county,) if pl.county is not None else pl.candidates)}
                near = [c for c in same if c.state.fips in named]
                if joined and len(near) == 1:
                    c = near[0]
                    span2 = (span[0], tokens[i + k_used - 1][1][1])
                    p.blocked.append(span2)
                    p.places.append(Place("county", c.state, c, span2, "bare", name))
                    p.notes.append(f"“{name}” read as {c.label}, like the other county named in the question.")
                    continue
                word = name
                sugg = self._county_suggestions(p, same[:3]) + self._state_suggestions(same[0].state if same else None)
                sugg = sugg[:3]
                raise _Decline(
                    f"“{word}” is not a state or county in the data (it may be a city, region or other place; only "
                    "states and counties are covered)"
                    + (f" — did you mean {_join([c.label for c in same[:3]])}?" if same else "."), sugg)

    def _county_suggestions(self, p: _Parse, counties: Sequence[County]) -> list[str]:
        """The question's measure (if it has rows there), else population, for each county."""
        m = next((x.measure for x in p.mentions if not x.weak), None)
        out = []
        for c in counties:
            if m is not None and m.has_rows("county", c.state.fips):
                out.append(f"What is the {_nice(m)} in {c.label}?")
            else:
                out.append(f"What is the population of {c.label}?")
        return out

    # ================================================================ measures
    def _find_measures(self, p: _Parse, cat: Catalog, chunks: Sequence[Chunk]) -> None:
        mentions = find_mentions(p.t, cat.measures, blocked=p.blocked)
        p.mentions = mentions
        # "share of the population that is Black": the population is the denominator, not a measure of its own
        rates = [m for m in mentions if not m.weak and m.measure.is_rate]
        for m in mentions:
            if m.measure.name == "population" and not m.weak and rates and re.search(
                    r"\b(share|percent|percentage|proportion|fraction|portion|pct)\s+of\s+(the\s+)?(total\s+)?$"
                    r"|%\s*of\s+(the\s+)?$", p.t[: m.start]):
                m.weak = True
        strong = [m for m in mentions if not m.weak]
        for a, b in zip(strong, strong[1:]):
            gap = p.t[a.end:b.start]
            group, other = (b, a) if re.fullmatch(r"\s*(for|among|amongst|of|within)\s+(the\s+)?", gap) else (a, b)
            if group.measure.family in _GROUP_FAMILIES and other.measure.family not in _GROUP_FAMILIES and (
                    group is b or re.fullmatch(r"\s*", gap)):
                place = next((pl for pl in p.places if pl.how != "ambiguous"), None)
                sugg = self._place_questions(place, cat, (other.measure.name, group.measure.name, "population")) \
                    if place else []
                raise _Decline(
                    f"{_nice(other.measure)} for one population group (“{p.tc[a.start:b.end]}”) is a "
                    "cross-tabulation the shipped extract does not have; it has each measure for everyone.",
                    sugg or self._generic_suggestions())
        if not mentions:
            # retrieval as a fallback: a variable the semantic layer knows under another name
            for ch in sorted(chunks or (), key=lambda c: -c.score)[:3]:
                if ch.object_type != "variable" or ch.score < 0.55:
                    continue
                code = re.search(r"[BC]\d{5}[A-Z]?_\d{3}E", ch.object_ref or "")
                if not code:
                    continue
                m = next((m for m in cat.measures if m.kind == "direct" and m.numerator == (code.group(0),)), None)
                if m is not None:
                    p.mentions.append(Mention(m, len(p.t), len(p.t), ch.object_ref, weak=False))
                    p.notes.append(f"Measure found through retrieval: {code.group(0)} ({m.label}).")
                    break

    def _strong(self, p: _Parse) -> list[Mention]:
        return [m for m in p.mentions if not m.weak]

    # ================================================================ scope checks (decline early)
    def _check_scope(self, p: _Parse, cat: Catalog) -> None:
        t = p.t
        masked = _mask(t, p.blocked + [m.span for m in self._strong(p)])
        places_only = _mask(t, p.blocked)
        inside = [m.span for m in self._strong(p)]
        for gap in load_gaps():
            if gap.lifted_by(m.measure for m in self._strong(p)):
                continue  # its table has been fetched and the question names a measure over it
            # a topic word inside a measure's own phrase ("value of owner-occupied homes") is that measure
            mt = gap.find(places_only, inside)
            if mt:
                raise _Decline(f"the shipped census extract has no data on {gap.topic} (asked: “{mt.group(0)}”).",
                               self._topic_suggestions(p, cat))
        mt = _SUB_STATE.search(masked) or re.search(r"(?<![\d$,.])\d{5}(?![\d,%])", masked)
        if mt and not re.search(r"\b(more|less|over|under|above|below|than|least|most)\s+$", masked[: mt.start()]):
            raise _Decline(
                f"“{mt.group(0)}”: the data covers states and counties (county-equivalents) only — no cities, "
                "metro areas, tracts or ZIP codes.", self._place_suggestions(p, cat))
        if _CITY_WORD.search(masked):
            raise _Decline("the data covers states and counties only; cities are not in it (except the "
                           "independent cities that are county-equivalents, e.g. “Baltimore city”).",
                           self._place_suggestions(p, cat))
        mt = _TIME_WORDS.search(masked)
        if mt:
            raise _Decline(
                f"the data holds one ACS 5-year period per measure (2019-2023, or 2018-2022 for poverty, health "
                f"insurance and enrolment), so there are no trends, changes or forecasts (“{mt.group(0)}”).",
                self._topic_suggestions(p, cat))
        for mt in _YEAR.finditer(masked):
            years = [int(y) for y in mt.groups()[:2] if y]
            if any(y < 2018 or y > 2023 for y in years):
                raise _Decline(
                    f"the data has ACS 5-year estimates for 2019-2023 (2018-2022 for poverty, health insurance and "
                    f"enrolment) only — nothing for {mt.group(0)}.", self._topic_suggestions(p, cat))
            p.notes.append(f"“{mt.group(0)}” read as the ACS 5-year period that includes it (period estimates, "
                           "not a single-year count).")
        mt = _VERSUS_AVG.search(masked)
        if mt:
            raise _Decline(f"comparing against an average or a national/state figure (“{mt.group(0)}”) is beyond "
                           "the offline planner; ask for the places' values and the overall figure separately.",
                           self._topic_suggestions(p, cat))
        if _FIFTY.search(t):
            p.fifty = True
        p.excl_dc = bool(_EXCL_DC.search(t))
        if _INCL_PR.search(t):
            p.incl_pr = True
        if _EXCL_PR.search(t):
            p.incl_pr = False
            p.excl_pr_said = True
        masked2 = _mask(t, p.blocked + [m.span for m in p.mentions if not m.weak])
        if _NATIONAL.search(masked2) or re.search(r"\b(US|USA)\b", _mask(p.tc, p.blocked)):
            p.national = True

    # ================================================================ thresholds
    def _find_thresholds(self, p: _Parse, cat: Catalog) -> None:
        # numbers inside a measure's phrase ("65 and over", "60 minute commutes") are not thresholds
        t = _mask(p.t, p.blocked + [m.span for m in self._strong(p)])
        found: list[Threshold] = []
        taken: list[tuple[int, int]] = []
        for rx, kind in _THRESHOLD_RES:
            for mt in rx.finditer(t):
                if _overlaps(mt.span(), taken):
                    continue
                th = _threshold_from(mt, kind)
                if th is None:
                    continue
                if not th.noun:  # "500k+ people"
                    after = re.match(r"\s+(people|residents|persons|inhabitants|households|housing units|homes)\b",
                                     t[mt.end():])
                    th.noun = after.group(1) if after else ""
                taken.append(mt.span())
                found.append(th)
        for mt in re.finditer(r"\b(majority|mostly|predominantly)\b", t):
            if not _overlaps(mt.span(), taken):
                found.append(Threshold(">", 50.0, None, "percent", mt.span(), mt.group(0)))
        # "counties with more people than Wyoming": the named place's own value is the line
        for mt in _THAN_PLACE.finditer(p.t):
            ref = next((pl for pl in p.places if pl.span[0] == mt.end() and pl.how != "ambiguous"), None)
            if ref is None or _overlaps(mt.span(), taken):
                continue
            op = ">" if mt.group(1) in ("more", "higher", "greater", "larger", "bigger") else "<"
            found.append(Threshold(op, 0.0, None, "place", (mt.start(), ref.span[1]),
                                   p.tc[mt.start():ref.span[1]], ref=ref))
            p.places.remove(ref)
        p.thresholds = sorted(found, key=lambda x: x.span[0])
        for th in p.thresholds:
            self._bind_threshold(p, cat, th)

    def _bind_threshold(self, p: _Parse, cat: Catalog, th: Threshold) -> None:
        strong = self._strong(p)
        noun_measure = _NOUN_MEASURE.get(th.noun)
        if noun_measure and th.unit != "percent":
            m = next((x.measure for x in strong if x.measure.name == noun_measure), None) or cat.measure(noun_measure)
            if m is not None:
                th.measure = m
                if not any(x.measure.name == m.name for x in p.mentions if not x.weak):
                    p.mentions.append(Mention(m, th.span[1], th.span[1], th.noun))
                    p.mentions.sort(key=lambda x: x.start)
                return

        if th.unit == "percent":
            for x in strong:
                if x.measure.unit != "percent":
                    alt = next((m for m in cat.measures if m.family == x.measure.family and m.unit == "percent"), None)
                    if alt is not None:
                        x.measure = alt
            strong = self._strong(p)

        def compatible(m: Measure) -> bool:
            if th.unit == "place":
                return True
            if th.unit == "percent":
                return m.unit == "percent"
            if th.unit == "dollars":
                return m.unit == "dollars"
            if m.unit == "percent":
                return th.value <= 100 and th.value2 is None or (th.value2 is not None and th.value2 <= 100)
            return True

        cands = [x for x in strong if compatible(x.measure)]
        if th.unit == "place" and not cands:
            implied = _implied_measure(_mask(p.t, p.blocked), cat) or cat.measure("population")
            th.measure = implied
            p.mentions.append(Mention(implied, th.span[0], th.span[0], implied.name))
            return
        if not cands and th.unit != "percent":
            weak = [x for x in p.mentions if x.weak and compatible(x.measure)]
            cands = weak
            for x in weak:
                x.weak = False
        if not cands:
            if strong:
                raise _Decline(
                    f"the threshold “{th.text.strip()}” does not fit "
                    f"{' or '.join(_nice(x.measure) for x in strong)} (a {strong[0].measure.unit} measure).",
                    self._topic_suggestions(p, cat))
            if th.unit == "plain" and (th.value >= 1000 or th.noun):
                m = cat.measure("population")
                th.measure = m
                p.mentions.append(Mention(m, th.span[1], th.span[1], "population"))
                p.notes.append(f"“{th.text.strip()}” read as a population threshold.")
                return
            raise _Decline(f"I could not tell which measure the threshold “{th.text.strip()}” applies to.",
                           self._topic_suggestions(p, cat))

        def dist(x: Mention) -> int:
            if x.end <= th.span[0]:
                return th.span[0] - x.end
            if x.start >= th.span[1]:
                return (x.start - th.span[1]) + 3  # a measure named before the number reads more naturally
            return 0

        th.measure = min(cands, key=dist).measure

    # ================================================================ level of a set question
    def _find_level(self, p: _Parse) -> None:
        """Which level a set question is about: any county word wins ("Texas counties"), then "states"."""
        t = _mask(p.t, p.blocked)
        t = re.sub(r"\bunited states\b", lambda m: "_" * len(m.group(0)), t)
        words = [m.group(1) for m in _LEVEL_PLURAL.finditer(t)] + [m.group(1) for m in _LEVEL_SINGULAR.finditer(t)]
        if any(w not in ("states", "state") for w in words):
            p.level = "county"
        elif words:
            p.level = "state"

    # ================================================================ assembling the answer
    def _build(self, p: _Parse, cat: Catalog) -> Plan:
        t = p.t
        masked = _mask(t, p.blocked)
        strong = self._strong(p)
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
        share_cue = _SHARE_OF_WHOLE.search(masked)
        set_query = self._is_set_query(p, masked)

        # ---------------------------------------------------------- pick the measures
        if not measures:
            implied = _implied_measure(masked, cat)
            if implied is not None:
                measures = [implied]
                if implied.name == "population" and re.search(r"\b(how big|how large|how small|size)\b", masked):
                    assumptions.append("Size read as population (land area is not in the data).")
            elif weak:
                measures = [weak[0].measure]
            elif set_query and not count_places and re.search(r"\b(list|show|name|all|which|what are)\b", masked):
                measures = [cat.measure("population")]
                assumptions.append("No measure named: listing the places with their population.")
            elif count_places and not p.thresholds:
                return self._count_geographies(p, cat, assumptions)
            else:
                what = "anything the data measures" if not p.places else "a measure the data has for that place"
                raise _Decline(f"I could not find {what} in the question (the shipped data covers population, "
                               "income, poverty, housing values and rents, employment, education, health insurance, "
                               "race and Hispanic origin, and internet subscriptions).",
                               self._topic_suggestions(p, cat))
        for th in p.thresholds:
            if th.measure is not None and th.measure not in measures:
                measures.append(th.measure)
        measures = list(dict.fromkeys(measures))

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
        fifty_only = p.fifty and not p.places and not _SUPERLATIVE.search(masked) and not p.thresholds and not (
            _BY_LEVEL.search(masked) or re.search(r"\b(which|what|each|every|list|show|map|rank)\b[^.?]*\bstates?\b",
                                                  masked))
        if (_COMBINED.search(masked) or fifty_only) and not p.places and not _SUPERLATIVE.search(masked) \
                and not p.thresholds:
            return self._national(p, cat, measures, assumptions)
        if set_query:
            return self._set_query(p, cat, measures, assumptions)
        if p.places and _COMBINED.search(masked) and len(p.places) >= 2:
            return self._combined_places(p, cat, measures, assumptions)
        if p.places:
            return self._places_query(p, cat, measures, assumptions)
        if p.national:
            return self._national(p, cat, measures, assumptions)
        if _SUPERLATIVE.search(masked):
            p.level = "state"
            assumptions.append("No level named: ranking the states.")
            return self._set_query(p, cat, measures, assumptions)
        same = [c for w in re.findall(r"[a-z]+", masked) if w not in _KNOWN_WORDS for c in _counties_named(w, cat)]
        if same:
            raise _Decline(
                f"the question names no state or county; “{same[0].base.title()}” alone is not one of them — "
                f"did you mean {_join([c.label for c in same[:3]])}?",
                ([f"What is the {_nice(measures[0])} in {c.label}?" for c in same[:3]]
                 + self._state_suggestions(same[0].state))[:3])
        raise _Decline(
            "the question names no state or county (and the data has no cities or other places).",
            [f"What is the {_nice(measures[0])} in Cook County, IL?",
             f"Which 5 {'states' if measures[0].has_rows('state') else 'counties'} have the highest "
             f"{_nice(measures[0])}?",
             "How many people live in the US?"])

    def _is_set_query(self, p: _Parse, masked: str) -> bool:
        """A question about a set of states or counties (rank, threshold, list) rather than named places."""
        if p.level is None:
            return False
        if _LEVEL_PLURAL.search(masked):
            return True
        if _SET_CUE.search(masked) or _BY_LEVEL.search(masked):
            return True
        if _SUPERLATIVE.search(masked) and p.level:
            return bool(re.search(r"\b(state|county|parish)\b", masked)) and not re.search(
                r"\b(the )?state of\b", masked)
        return bool(p.thresholds) and bool(re.search(r"\b(state|county)\b", masked))

    # ---------------------------------------------------------- a list of places (lookup / snapshot / compare)
    def _places_query(self, p: _Parse, cat: Catalog, measures: list[Measure], assumptions: list[str]) -> Plan:
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
                    why = self._no_state_rows(m, pl.state, cat)
                    if len(measures) == 1:
                        raise _Decline(why, self._median_suggestions(m, pl.state, cat))
                    dropped.append(why)
                    break
                if pl.level == "county" and not m.has_rows("county"):
                    ok = False
                    why = (f"{m.label} ({', '.join(m.numerator)}) is published only for states in this data, not "
                           f"for counties such as {pl.label}.")
                    if len(measures) == 1:
                        raise _Decline(why, [f"What is the {_nice(m)} in {pl.state.name}?",
                                             f"What is the median household income in {pl.label}?"])
                    dropped.append(why)
                    break
            if ok:
                usable.append(m)
        measures = usable
        if not measures:
            raise _Decline(dropped[0] if dropped else "no measure fits these places.", self._generic_suggestions())
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
                raise _Decline(self._no_rows(m, pl, cat), self._coverage_suggestions(m, pl, cat))
            for pl, m in missing:
                assumptions.append(f"No data: {self._no_rows(m, pl, cat)}")
            if len(places) == 1:
                measures = [m for m in measures if (places[0], m) not in missing]

        mixed = len(levels) > 1
        level = "county" if "county" in levels else "state"
        if mixed:
            where = f"g.geo_id IN ({', '.join(_sql_str(pl.geo_id) for pl in places)})"
            place_cols = ["g.level", "g.county_name", "g.state_name"]
            group = ["g.geo_id", "g.level", "g.county_name", "g.state_name"]
            level_cond = None
        else:
            where = _place_filter(places, level)
            place_cols = ["g.county_name", "g.state_name"] if level == "county" else ["g.state_name"]
            group = ["g.geo_id", *place_cols] if level == "county" else ["g.state_name"]
            level_cond = f"g.level = '{level}'"

        single_place = len(places) == 1
        with_moe = single_place or len(measures) == 1
        sql = _select(measures, place_cols, group, level_cond, where, moe_level=level if with_moe else None,
                      order=None if single_place else (measures[0], "DESC"))
        self._explain_places(places, assumptions)
        self._explain_measures(measures, assumptions, level=level, sql=sql, places=places)
        assumptions.extend(p.notes)
        if single_place:
            hint = "big" if len(measures) == 1 else "statrow"
        else:
            hint = "bar" if len(measures) == 1 else ("grouped" if len(measures) == 2 else "table")
        return Plan(sql=sql, assumptions=assumptions, display_hint=hint, planner=self.name)

    # ---------------------------------------------------------- several places added together
    def _combined_places(self, p: _Parse, cat: Catalog, measures: list[Measure], assumptions: list[str]) -> Plan:
        places = p.places
        levels = {pl.level for pl in places}
        if any(pl.how == "ambiguous" for pl in places) or len(levels) > 1:
            raise _Decline("to add places together, name each county with its state and keep to one level.",
                           self._topic_suggestions(p, cat))
        level = levels.pop()
        for m in measures:
            if not m.aggregable:
                raise _Decline(f"{m.label} is a median/mean/index: the values of several places cannot be combined.",
                               [f"Compare the {_nice(m)} of {_join([pl.label for pl in places[:3]])}"]
                               if m.has_rows(level) else self._topic_suggestions(p, cat))
            for pl in places:
                if not cat.has(m, pl.geo_id):
                    raise _Decline(self._no_rows(m, pl, cat), self._coverage_suggestions(m, pl, cat))
        cols = [f"{m.sql_expression('e')} AS combined_{m.column}" for m in measures]
        sql = (f"SELECT {', '.join(cols)} FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id "
               f"WHERE g.level = '{level}' AND {_place_filter(places, level)} AND {_code_filter(_codes(measures))}")
        assumptions.append(f"Combined = {_join([pl.label for pl in places])} added together (counts summed; rates "
                           "computed from the summed counts).")
        self._explain_places(places, assumptions)
        self._explain_measures(measures, assumptions, level=level, sql=sql, places=places)
        assumptions.extend(p.notes)
        return Plan(sql=sql, assumptions=assumptions, display_hint="big" if len(measures) == 1 else "statrow",
                    planner=self.name)

    # ---------------------------------------------------------- the whole US
    def _national(self, p: _Parse, cat: Catalog, measures: list[Measure], assumptions: list[str]) -> Plan:
        bad = [m for m in measures if not m.aggregable or not m.has_rows("state")]
        if bad:
            m = bad[0]
            if not m.aggregable:
                raise _Decline(
                    f"{m.label} ({', '.join(m.numerator)}) is a median/mean/index published for counties only; "
                    "there are no nation rows, and county values must not be averaged into a US figure.",
                    [f"Which 10 counties have the highest {_nice(m)}?",
                     f"List counties with a {_nice(m)} above {_example_threshold(m)}",
                     "How many people live in the US?"])
            raise _Decline(f"{m.label} has no state rows to add up into a US figure.", self._generic_suggestions())
        where = ["g.level = 'state'"]
        excluded = []
        if not p.incl_pr:
            where.append("g.state_abbr <> 'PR'")
            excluded.append("Puerto Rico")
        if p.fifty or p.excl_dc:
            where[-1] = "g.state_abbr NOT IN ('DC', 'PR')" if not p.incl_pr else "g.state_abbr <> 'DC'"
            excluded.append("DC")
        codes = _codes(measures)
        cols = []
        for m in measures:
            cols.append(f"{m.sql_expression('e')} AS {_us_col(m)}")
        sql = (f"SELECT {', '.join(cols)} FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id "
               f"WHERE {' AND '.join(where)} AND {_code_filter(codes)}")
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
        self._explain_measures(measures, assumptions, level="state", sql=sql, places=[])
        assumptions.extend(p.notes)
        hint = "big" if len(measures) == 1 else "statrow"
        return Plan(sql=sql, assumptions=assumptions, display_hint=hint, planner=self.name)

    # ---------------------------------------------------------- a share of the parent (county of state, state of US)
    def _share_of_parent(self, p: _Parse, cat: Catalog, m: Measure, parts: list[Place],
                         assumptions: list[str]) -> Plan:
        parts = [pl for pl in parts if pl.how != "ambiguous"] or parts
        for pl in parts:
            if pl.how == "ambiguous":
                raise _Decline(f"“{pl.text}” exists in several states; name the state.",
                               [f"What share of {c.state.name} residents live in {c.name}?" for c in pl.candidates[:3]])
        col = f"pct_of_{'state' if parts[0].level == 'county' else 'us'}_{m.column}"
        if parts[0].level == "county":
            for pl in parts:
                if not cat.has(m, pl.geo_id):
                    raise _Decline(self._no_rows(m, pl, cat), self._coverage_suggestions(m, pl, cat))
            where = _place_filter(parts, "county", alias="c")
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
            assumptions.append(f"Share = the county's {_nice(m)} / its state's ({m.formula}), both ACS {m.vintage}.")
        else:
            codes = _code_filter(m.codes, alias="e")
            sql = (f"SELECT g.state_name, {m.sql_expression('e')} AS {m.column}, "
                   f"ROUND(100.0 * {m.sql_expression('e', rounded=False)} / NULLIF((SELECT {m.sql_expression('u')} "
                   f"FROM public.estimates u JOIN public.geography ug ON ug.geo_id = u.geo_id "
                   f"WHERE ug.level = 'state' AND ug.state_abbr <> 'PR'), 0), 1) AS {col} "
                   f"FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id "
                   f"WHERE g.level = 'state' AND {_place_filter(parts, 'state')} AND {codes} GROUP BY g.state_name")
            assumptions.append(f"Share = the state's {_nice(m)} / the sum over the 50 states + DC (Puerto Rico "
                               f"excluded; there are no nation rows), ACS {m.vintage}.")
        self._explain_places(parts, assumptions)
        self._explain_measures([m], assumptions, level=parts[0].level, sql=sql, places=parts, moe=False)
        assumptions.extend(p.notes)
        return Plan(sql=sql, assumptions=assumptions, display_hint="big" if len(parts) == 1 else "bar",
                    planner=self.name)

    # ---------------------------------------------------------- how many places meet a condition
    def _count_places(self, p: _Parse, cat: Catalog, measures: list[Measure], assumptions: list[str]) -> Plan:
        level = p.level or "county"
        if not p.thresholds:
            raise _Decline("counting places needs a condition (e.g. “more than 100,000 people”).",
                           self._topic_suggestions(p, cat))
        inner, _ = self._set_sql(p, cat, measures, assumptions, level, for_count=True)
        noun = "counties" if level == "county" else "states"
        sql = f"SELECT COUNT(*) AS {noun}_count FROM ({inner}) AS matching"
        assumptions.insert(0, f"Counting the {noun} that meet the condition.")
        assumptions.extend(p.notes)
        return Plan(sql=sql, assumptions=assumptions, display_hint="big", planner=self.name)

    def _count_geographies(self, p: _Parse, cat: Catalog, assumptions: list[str]) -> Plan:
        masked = _mask(p.t, p.blocked)
        level = "county" if re.search(r"\b(counties|parishes|boroughs|county equivalents)\b", masked) else "state"
        states = [pl.state for pl in p.places if pl.level == "state"]
        where = [f"g.level = '{level}'"]
        if level == "county" and states:
            where.append(_state_filter(states))
            assumptions.append("Counting county-equivalents (parishes, boroughs, census areas and independent "
                               "cities included), 2022+ ACS geography.")
        elif level == "state":
            where.append("g.state_abbr NOT IN ('DC', 'PR')" if p.fifty else "g.state_abbr <> 'PR'")
            assumptions.append("Counting state rows: the 50 states + DC (Puerto Rico excluded).")
        noun = "counties" if level == "county" else "states"
        sql = f"SELECT COUNT(*) AS {noun}_count FROM public.geography g WHERE {' AND '.join(where)}"
        return Plan(sql=sql, assumptions=assumptions, display_hint="big", planner=self.name)

    # ---------------------------------------------------------- top/bottom N, thresholds, lists of states or counties
    def _set_query(self, p: _Parse, cat: Catalog, measures: list[Measure], assumptions: list[str]) -> Plan:
        level = p.level or "state"
        sql, hint = self._set_sql(p, cat, measures, assumptions, level)
        assumptions.extend(p.notes)
        return Plan(sql=sql, assumptions=assumptions, display_hint=hint, planner=self.name)

    def _set_sql(self, p: _Parse, cat: Catalog, measures: list[Measure], assumptions: list[str], level: str,
                 for_count: bool = False) -> tuple[str, str]:
        """The SQL of a set question and its display hint."""
        masked = _mask(p.t, p.blocked)
        # the places that scope the set: "counties in Texas"; for states, the named states themselves
        state_places = [pl for pl in p.places if pl.level == "state"]
        county_places = [pl for pl in p.places if pl.level == "county"]
        if level == "county" and county_places and not state_places:
            level_places = county_places
        else:
            level_places = []
        scope_states = [pl.state for pl in state_places]
        if level == "state" and county_places:
            raise _Decline("the question mixes a county with a ranking of states; ask about one level.",
                           self._generic_suggestions())

        # measures must exist at this level (and in the scoped states)
        for m in measures:
            if not m.has_rows(level):
                if level == "state":
                    raise _Decline(self._no_state_rows(m, scope_states[0] if len(scope_states) == 1 else None, cat),
                                   self._median_suggestions(m, scope_states[0] if scope_states else None, cat))
                raise _Decline(f"{m.label} ({', '.join(m.numerator)}) is published only for states in this data, "
                               "not for counties.",
                               [f"Which 5 states have the highest {_nice(m)}?",
                                "Which 10 counties have the highest median household income?"])
            if level == "county":
                for st in scope_states:
                    if not m.has_rows("county", st.fips):
                        raise _Decline(self._no_rows(m, Place("state", st, None, (0, 0)), cat),
                                       self._coverage_suggestions(m, Place("state", st, None, (0, 0)), cat))

        where_parts = [f"g.level = '{level}'"]
        if scope_states:
            where_parts.append(_state_filter(scope_states))
        if level_places:
            where_parts.append(_place_filter(level_places, "county"))
        if level == "state" and not scope_states:
            excl = (["DC"] if (p.fifty or p.excl_dc) else []) + (["PR"] if (p.fifty or p.excl_pr_said) else [])
            if len(excl) == 1:
                where_parts.append(f"g.state_abbr <> '{excl[0]}'")
            elif excl:
                where_parts.append("g.state_abbr NOT IN ('DC', 'PR')")
        elif level == "county" and not scope_states and (p.fifty or p.excl_pr_said):
            where_parts.append("g.state_abbr <> 'PR'")

        # rank: which measure, which direction, how many
        direction, n, n_given = self._rank(p, masked, measures)
        rank_measure = self._rank_measure(p, masked, measures) if direction else None
        thresholds = [th for th in p.thresholds if th.measure is not None]
        conds = [_threshold_sql(th) for th in thresholds]
        per_state = bool(direction and level == "county" and not for_count and _PER_STATE.search(masked))
        if per_state and not n_given:
            n = 1

        place_cols = ["g.county_name", "g.state_name"] if level == "county" else ["g.state_name"]
        list_all = (direction is None and not thresholds and not level_places and not for_count
                    and not (level == "state" and scope_states))
        with_geo = list_all and len(measures) == 1
        group = ["g.geo_id", *place_cols] if (level == "county" or with_geo) else ["g.state_name"]
        cols = list(place_cols) + (["g.geo_id"] if with_geo else [])
        order = None
        if direction:
            order = (rank_measure, direction)
        elif not for_count:
            order = (thresholds[0].measure if thresholds else measures[0], "DESC")
        limit = n if direction else None
        if for_count:
            cols = ["g.geo_id"]
            group = ["g.geo_id"]
        if per_state:
            inner = _select(measures, cols, group, None, " AND ".join(where_parts), conds=conds,
                            window=(rank_measure, direction))
            names = ["county_name", "state_name"] + [c for m in measures for c in _out_cols(m, inner)]
            sql = (f"SELECT {', '.join(names)} FROM ({inner}) AS ranked WHERE rank_in_state <= {n} "
                   f"ORDER BY state_name, rank_in_state")
            assumptions.append(f"Ranked within each state: the top {n} {'county' if n == 1 else 'counties'} of every "
                               "state.")
        else:
            sql = _select(measures, cols, group, None, " AND ".join(where_parts), conds=conds, order=order,
                          limit=limit, simple_cols=not for_count)

        # assumptions
        if level == "state" and not scope_states:
            if p.fifty:
                assumptions.append("“The 50 states”: DC and Puerto Rico left out.")
            else:
                assumptions.append("States = every state-level row with data: the 50 states, DC and Puerto Rico "
                                   "(say “the 50 states” to leave DC and Puerto Rico out).")
        if level == "county":
            scope = f" in {_join([s.name for s in scope_states])}" if scope_states else " nationwide"
            ct = not scope_states or any(s.abbr == "CT" for s in scope_states)
            assumptions.append(f"Counties{scope}, all county-equivalents included (parishes, boroughs, census areas, "
                               "independent cities" + ("; Connecticut as its planning regions)." if ct else ")."))
        if direction and not for_count:
            which = "highest" if direction == "DESC" else "lowest"
            if n_given:
                assumptions.append(f"Ranking by {_nice(rank_measure)}, {which} first, top {n}.")
            else:
                assumptions.append(f"Ranking by {_nice(rank_measure)}, {which} first; no number given, so "
                                   f"showing {n}.")
        for th in thresholds:
            assumptions.append(f"“{th.text.strip()}” read as {_nice(th.measure)} {_describe_threshold(th)}.")
        self._explain_places(level_places or [Place("state", s, None, (0, 0), "exact") for s in scope_states],
                             assumptions)
        self._explain_measures(measures, assumptions, level=level, sql=sql, places=[], scope_states=scope_states)
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

    def _rank(self, p: _Parse, masked: str, measures: list[Measure]) -> tuple[str | None, int, bool]:
        txt = _mask(masked, [th.span for th in p.thresholds])
        desc = _DESC_WORDS.search(txt)
        asc = _ASC_WORDS.search(txt)
        # "more" / "fewer" / "higher" are comparisons when a threshold follows them
        direction = None
        if desc and asc:
            direction = "DESC" if desc.start() < asc.start() else "ASC"
        elif desc:
            direction = "DESC"
        elif asc:
            direction = "ASC"
        word = (desc if direction == "DESC" else asc).group(1) if direction else ""
        if word in ("more", "higher", "larger", "bigger", "fewer", "lower", "smaller") and not re.search(
                r"\b(which|what)\b.*\b(more|higher|larger|bigger|fewer|lower|smaller)\b", txt):
            direction = None
        if word in ("more", "fewer", "higher", "lower", "larger", "smaller", "bigger") and p.thresholds:
            direction = None
        if direction and measures:
            m = self._rank_measure(p, txt, measures)
            if m is not None and m.name in _BAD_HIGH and word in ("best", "worst", "richest", "wealthiest", "poorest"):
                direction = "ASC" if word in ("best", "richest", "wealthiest") else "DESC"
            if m is not None and m.name == "gini_index" and re.search(
                    r"\b(most equal|least unequal|most equitable)\b", txt):
                direction = "ASC"
        n, given = None, False
        fifty = [m.span() for m in _FIFTY.finditer(txt)] if not re.search(r"\b(top|bottom) (50|fifty)\b", txt) else []
        for rx in _N_RES:
            for mt in rx.finditer(txt):
                if _overlaps(mt.span("n"), fifty):
                    continue
                raw = mt.group("n")
                value = int(raw) if raw.isdigit() else _NUM_WORDS.get(raw)
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
        if n is None and _LEVEL_SINGULAR.search(txt) and not _LEVEL_PLURAL.search(txt):
            n = 1
        if n is None:
            singular = re.search(r"\b(which|what|the|name the|one)\s+(\w+\s+){0,3}?(state|county|parish)\b"
                                 r"(?!\s+(is|are)\s+in)", txt) \
                and not _LEVEL_PLURAL.search(txt)
            n = 1 if singular else 10
        return direction, n, given

    def _rank_measure(self, p: _Parse, masked: str, measures: list[Measure]) -> Measure:
        """The measure after the superlative ("highest poverty rate"), else the first one not used as a filter."""
        sup = _SUPERLATIVE.search(masked)
        filters = {th.measure.name for th in p.thresholds if th.measure}
        strong = [m for m in p.mentions if not m.weak and m.measure in measures]
        if sup:
            after = [m for m in strong if m.start >= sup.start()]
            if after:
                return after[0].measure
        rest = [m for m in measures if m.name not in filters]
        return rest[0] if rest else measures[0]

    # ================================================================ explanations
    def _explain_places(self, places: Iterable[Place], assumptions: list[str]) -> None:
        for pl in places:
            if pl.level == "county" and pl.county is not None and pl.how in ("unique",):
                assumptions.append(f"“{pl.text}” is unique nationwide: {pl.label} (FIPS {pl.county.geo_id[-5:]}).")
            elif pl.level == "county" and pl.county is not None and pl.how in ("qualifier", "exact"):
                assumptions.append(f"Place: {pl.county.name}, {pl.state.name} (FIPS {pl.county.geo_id[-5:]}).")
            elif pl.level == "state" and pl.how == "abbr":
                assumptions.append(f"“{pl.text}” read as {pl.state.name}.")

    def _explain_measures(self, measures: list[Measure], assumptions: list[str], *, level: str, sql: str,
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

    def _no_state_rows(self, m: Measure, st: State | None, cat: Catalog) -> str:
        where = f" for {st.name}" if st else ""
        return (f"{m.label} ({', '.join(m.numerator)}) has county rows only; there is no published state figure"
                f"{where} in the data, and county medians/means must not be averaged into a state value.")

    def _no_rows(self, m: Measure, pl: Place, cat: Catalog) -> str:
        if pl.level == "county" and pl.county is not None and m.has_rows("county", pl.state.fips):
            return (f"the Census did not publish {_nice(m)} ({', '.join(m.codes)}) for {pl.label} (too few "
                    "sample cases), so the data has no value for it.")
        return (f"{_nice(m)} comes from {', '.join(sorted({c.split('_')[0] for c in m.codes}))} (ACS "
                f"{m.vintage}), which has no rows for "
                f"{pl.state.name if pl.level == 'state' or pl.county is None else pl.label}"
                f"{' (it covers the 48 contiguous states and DC only)' if m.vintage == '2018-2022' else ''}.")

    # ================================================================ suggestions (all answerable offline)
    def _generic_suggestions(self) -> list[str]:
        return ["What is the population of Texas?", "Which 3 states have the lowest poverty rate?",
                "What is the median household income in Wake County, NC?"]

    def _state_suggestions(self, st: State | None) -> list[str]:
        if st is None:
            return self._generic_suggestions()
        return [f"What is the population of {st.name}?", f"Which {st.name} counties have the most people?",
                f"What is the unemployment rate in {st.name}?"]

    def _place_suggestions(self, p: _Parse, cat: Catalog) -> list[str]:
        st = next((pl.state for pl in p.places), None)
        return self._state_suggestions(st)

    def _place_questions(self, place: Place, cat: Catalog, names: Sequence[str], skip: str = "") -> list[str]:
        """Questions about ``place`` for the first measures of ``names`` that have a value there."""
        out = []
        for name in names:
            m = cat.measure(name)
            if m is None or name == skip or not cat.has(m, place.geo_id):
                continue
            if place.level == "state" and not m.has_rows("state"):
                continue
            out.append(f"What is the {_nice(m)} in {place.label}?" if name != "population"
                       else f"What is the population of {place.label}?")
        return out

    def _topic_suggestions(self, p: _Parse, cat: Catalog) -> list[str]:
        place = next((pl for pl in p.places if pl.how != "ambiguous"), None)
        if place is None:
            return self._generic_suggestions()
        if place.level == "county":
            names = ("median_household_income", "unemployment_rate", "population", "poverty_rate")
        else:
            names = ("population", "unemployment_rate", "poverty_rate", "internet_subscription_share")
        return self._place_questions(place, cat, names)[:3]

    def _median_suggestions(self, m: Measure, st: State | None, cat: Catalog) -> list[str]:
        nice = _nice(m)
        if st is None:
            out = [f"Which 10 counties have the highest {nice}?"]
            if m.name == "median_household_income":
                out.append("Which 5 states have the highest median household income for White householders?")
                out.append("Which 3 states have the lowest poverty rate?")
            else:
                out.append(f"List counties with a {nice} above {_example_threshold(m)}")
            return out
        out = [f"Which {st.name} counties have the highest {nice}?"]
        biggest = max(cat.counties_by_state.get(st.fips, []), key=lambda c: c.population, default=None)
        if biggest is not None:
            out.append(f"What is the {nice} in {biggest.label}?")
        if m.name == "median_household_income":
            out.insert(1, f"What is the median household income for White householders in {st.name}?")
        return out

    def _coverage_suggestions(self, m: Measure, pl: Place, cat: Catalog) -> list[str]:
        out = [f"Which 5 states have the highest {_nice(m)}?"] if m.is_rate and m.has_rows("state") else []
        names = ("unemployment_rate", "population", "internet_subscription_share", "median_household_income")
        return (out + self._place_questions(pl, cat, names, skip=m.name))[:3]


# ---------------------------------------------------------------------------------------------------------------
# SQL helpers


def _codes(measures: Sequence[Measure]) -> list[str]:
    out: list[str] = []
    for m in measures:
        for c in m.codes:
            if c not in out:
                out.append(c)
    return out


def _code_filter(codes: Sequence[str], alias: str = "e") -> str:
    if len(codes) == 1:
        return f"{alias}.variable_code = '{codes[0]}'"
    return f"{alias}.variable_code IN ({', '.join(_sql_str(c) for c in codes)})"


def _state_filter(states: Sequence[State], alias: str = "g") -> str:
    if len(states) == 1:
        return f"{alias}.state_name = {_sql_str(states[0].name)}"
    return f"{alias}.state_name IN ({', '.join(_sql_str(s.name) for s in states)})"


def _place_filter(places: Sequence[Place], level: str, alias: str = "g") -> str:
    if level == "state":
        return _state_filter([pl.state for pl in places], alias)
    counties = [pl.county for pl in places if pl.county is not None]
    if len(counties) == 1:
        c = counties[0]
        return f"{alias}.county_name = {_sql_str(c.name)} AND {alias}.state_name = {_sql_str(c.state.name)}"
    pairs = ", ".join(f"({_sql_str(c.name)}, {_sql_str(c.state.name)})" for c in counties)
    return f"({alias}.county_name, {alias}.state_name) IN ({pairs})"


def _select(measures: Sequence[Measure], place_cols: Sequence[str], group: Sequence[str], level_cond: str | None,
            where: str, *, conds: Sequence[str] = (), order: tuple[Measure, str] | None = None,
            limit: int | None = None, moe_level: str | None = None, simple_cols: bool = True,
            window: tuple[Measure, str] | None = None) -> str:
    """One SELECT in the house style: the plain form for one direct measure, else a FILTER pivot per place.

    ``window`` adds ``rank_in_state``, the row number of each place within its state by that measure."""
    where_all = " AND ".join(x for x in (level_cond, where) if x)
    frm = "FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id"
    codes = _codes(measures)
    if len(measures) == 1 and measures[0].kind == "direct":
        m = measures[0]
        cols = list(place_cols) + [f"e.estimate AS {m.column}"]
        if moe_level and moe_level in m.moe_levels:
            cols.append(f"e.margin_error AS {m.column}_moe")
        if not simple_cols:
            cols = list(place_cols)
        if window:
            cols.append(f"ROW_NUMBER() OVER (PARTITION BY g.state_name ORDER BY e.estimate {window[1]} NULLS LAST) "
                        "AS rank_in_state")
        sql = f"SELECT {', '.join(cols)} {frm} WHERE {where_all} AND e.variable_code = '{m.numerator[0]}'"
        for c in conds:
            sql += f" AND {c.split('|', 1)[1].replace('{x}', 'e.estimate')}"
        if order:
            sql += f" ORDER BY e.estimate {order[1]} NULLS LAST"
        if limit:
            sql += f" LIMIT {limit}"
        return sql
    cols = list(place_cols)
    if simple_cols:
        for m in measures:
            cols.append(f"{m.sql_expression('e')} AS {m.column}")
            if moe_level and moe_level in m.moe_levels:
                moe = m.moe_sql_expression("e")
                if moe:
                    cols.append(f"{moe} AS {m.column}_moe")
    if window:
        cols.append(f"ROW_NUMBER() OVER (PARTITION BY g.state_name ORDER BY "
                    f"{window[0].condition_expression('e')} {window[1]} NULLS LAST) AS rank_in_state")
    sql = f"SELECT {', '.join(cols)} {frm} WHERE {where_all} AND {_code_filter(codes)} GROUP BY {', '.join(group)}"
    having = []
    by_name = {m.name: m for m in measures}
    for c in conds:
        name, rest = c.split("|", 1)
        having.append(rest.replace("{x}", by_name[name].condition_expression("e")))
    if having:
        sql += " HAVING " + " AND ".join(having)
    if order and simple_cols:
        sql += f" ORDER BY {order[0].column} {order[1]} NULLS LAST"
    if limit:
        sql += f" LIMIT {limit}"
    return sql


def _out_cols(m: Measure, sql: str) -> list[str]:
    """The output columns a measure contributes to ``sql`` (its value, and its MOE when selected)."""
    return [m.column] + ([f"{m.column}_moe"] if f"AS {m.column}_moe" in sql else [])


def _threshold_sql(th: Threshold) -> str:
    """``measure_name|condition`` with ``{x}`` standing for the measure's value (``e.estimate`` in the plain
    form, the unrounded aggregate in a pivot's HAVING)."""
    if th.ref is not None:
        ref = (f"(SELECT {th.measure.condition_expression('r')} FROM public.estimates r "
               f"WHERE r.geo_id = {_sql_str(th.ref.geo_id)})")
        body = f"{{x}} {th.op} {ref}"
    elif th.op == "between":
        body = f"{{x}} >= {_sql_num(th.value)} AND {{x}} <= {_sql_num(th.value2)}"
    else:
        body = f"{{x}} {th.op} {_sql_num(th.value)}"
    return f"{th.measure.name}|{body}"


def _describe_threshold(th: Threshold) -> str:
    unit = th.measure.unit if th.measure else th.unit
    def f(v):
        if unit == "percent":
            return f"{_fmt_num(v)}%"
        if unit == "dollars":
            return f"${_fmt_num(v)}"
        return _fmt_num(v)
    words = {">": "greater than", ">=": "at least", "<": "less than", "<=": "at most"}
    if th.ref is not None:
        return f"{words[th.op]} that of {th.ref.label} (its own {_nice(th.measure)} from the same table)"
    if th.op == "between":
        return f"between {f(th.value)} and {f(th.value2)} (inclusive)"
    return f"{words[th.op]} {f(th.value)} ({th.op})"


def _us_col(m: Measure) -> str:
    return m.column if m.is_rate else f"us_{m.column}"


def _nice(m: Measure) -> str:
    return {
        "population": "population",
        "median_household_income": "median household income", "per_capita_income": "per capita income",
        "gini_index": "Gini index", "median_home_value": "median home value", "median_gross_rent": "median gross rent",
        "median_age": "median age", "median_household_income_white": "median household income for White householders",
    }.get(m.name, m.label if m.label.split()[0] in _PROPER_WORDS else m.label[0].lower() + m.label[1:])


_PROPER_WORDS = {"Hispanic", "White", "Black", "Non-Hispanic", "Gini"}


def _example_threshold(m: Measure) -> str:
    dollars = "$1,500" if "rent" in m.name else "$100,000"
    return {"dollars": dollars, "years": "45", "index": "0.5"}.get(m.unit, "1,000,000")


def _join(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _squash(sql: str) -> str:
    return re.sub(r"\s+", " ", sql or "").strip().rstrip(";").lower()


def _simplify(sql: str) -> str | None:
    out = re.sub(r", (MAX\(e\.margin_error\)[^,]*|e\.margin_error|ROUND\(100\.0 \* SQRT[^A]*?) AS \w+_moe", "", sql)
    out = out.replace(", g.geo_id FROM", " FROM")
    return out if out != sql else None


def _overlaps(span: tuple[int, int], spans: Iterable[tuple[int, int]]) -> bool:
    return any(span[0] < b and a < span[1] for a, b in spans)


def _mask(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        for i in range(max(0, a), min(len(chars), b)):
            chars[i] = " " if chars[i] == " " else "_"
    return "".join(chars)


def _counties_named(word: str, cat: Catalog, state: State | None = None) -> list[County]:
    """Counties whose name without its suffix is ``word`` ("baltimore" -> Baltimore County and Baltimore city),
    largest first — for "did you mean" suggestions."""
    out = [c for (base, _s), cs in cat.county_index.items() if base == word for c in cs
           if state is None or c.state.fips == state.fips]
    return sorted(set(out), key=lambda c: -c.population)


def _STATE_WORDS(cat: Catalog) -> frozenset:
    words = _state_words_cache.get(id(cat))
    if words is None:
        words = frozenset(w for name in cat.state_by_key for w in name.split())
        _state_words_cache[id(cat)] = words
    return words


_state_words_cache: dict[int, frozenset] = {}

#: words inside measure phrases that say nothing about a measure on their own
_FUNCTION_WORDS = frozenset("of the a an in to with for and or by per at as who do not have has is are dont no "
                            "their there how many number live lives".split())


def _is_measure_word(word: str, cat: Catalog) -> bool:
    """Whether ``word`` belongs to some measure's wording (so it is not an unknown place name)."""
    return word in _measure_vocab(cat)


_vocab_cache: dict[int, frozenset] = {}


def _measure_vocab(cat: Catalog) -> frozenset:
    key = id(cat)
    v = _vocab_cache.get(key)
    if v is None:
        words = set()
        for m in cat.measures:
            for s in (*m.synonyms, *m.weak_synonyms):
                words.update(s.split())
        v = frozenset(words - _FUNCTION_WORDS)
        _vocab_cache[key] = v
    return v


def _implied_measure(masked: str, cat: Catalog) -> Measure | None:
    """Superlatives that name a measure by themselves: "most populous", "largest counties", "oldest"."""
    rules = [
        (r"\b(largest|biggest|smallest|most populous|least populous|populous|bigger|larger|smaller|"
         r"more populous|less populous|how big|how large|how small|size of|sizes of)\b", "population"),
        (r"\b(most expensive|least expensive|priciest|cheapest|most affordable|least affordable)\b",
         "median_home_value"),
        (r"\b(most educated|least educated|best educated)\b", "bachelors_or_higher_share"),
    ]
    for rx, name in rules:
        if re.search(rx, masked):
            return cat.measure(name)
    return None


_NOUN_MEASURE = {"people": "population", "residents": "population", "persons": "population",
                 "inhabitants": "population", "population": "population", "folks": "population",
                 "households": "households", "housing units": "housing_units", "homes": "housing_units",
                 "houses": "housing_units"}

_COMMON_ENGLISH = frozenset("""
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
# thresholds and numbers

_NUM = (r"(?P<cur>\$\s*)?(?P<num>\d+(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+|" + _NUM_WORD_RE +
        r"|a|an|half a|a half|a quarter)\s*(?P<mult>k|thousand|m|mil|mln|million|millions|mm|bn|b|billion)?"
        r"(?![a-z0-9])(?:\s*(?P<pct>%|percent|per cent|pct|percentage points))?(?:\s+(?P<noun>people|residents|"
        r"persons|inhabitants|population|folks|households|housing units|homes|houses))?")
_GT = (r"more than|greater than|over|above|exceeding|exceeds|exceed|higher than|larger than|bigger than|"
       r"in excess of|upwards of|>")
_GE = r"at least|no less than|not less than|a minimum of|minimum of|>=|≥"
_LT = r"less than|fewer than|under|below|lower than|smaller than|beneath|<"
_LE = r"at most|no more than|not more than|a maximum of|maximum of|up to|<=|≤"
_POST_GE = r"or more|or higher|or greater|or above|or over|and up|and above|and over|plus|\+"
_POST_LE = r"or less|or fewer|or lower|or below|or under|and under|and below"

_THRESHOLD_RES = [
    (re.compile(r"\b(between|from)\s+" + _NUM.replace("?P<", "?P<a_") + r"\s+(and|to)\s+"
                + _NUM.replace("?P<", "?P<b_")),
     "between"),
    (re.compile(r"(?<![a-z])(?P<op>" + _GE + r")\s+(?:about\s+|roughly\s+|around\s+)?" + _NUM), ">="),
    (re.compile(r"(?<![a-z])(?P<op>" + _LE + r")\s+(?:about\s+|roughly\s+|around\s+)?" + _NUM), "<="),
    (re.compile(r"(?<![a-z])(?P<op>" + _GT + r")\s*(?:about\s+|roughly\s+|around\s+)?" + _NUM), ">"),
    (re.compile(r"(?<![a-z])(?P<op>" + _LT + r")\s*(?:about\s+|roughly\s+|around\s+)?" + _NUM), "<"),
    (re.compile(_NUM + r"\s*(?P<post>" + _POST_GE + r")(?![a-z])"), ">=post"),
    (re.compile(_NUM + r"\s*(?P<post>" + _POST_LE + r")(?![a-z])"), "<=post"),
    (re.compile(r"\b(more|less) than (half|a third|a quarter|one third|one quarter|two thirds)\b"), "fraction"),
]

_N_RES = [
    re.compile(r"\b(top|bottom|first|last|best|worst)\s+(?P<n>\d{1,3}|" + _NUM_WORD_RE + r")\b"),
    re.compile(r"\b(which|what|the|name|list|show|give me|find)\s+(?P<n>\d{1,3}|" + _NUM_WORD_RE
               + r")\b(?!\s*(%|percent|k\b|thousand|million))"),
    re.compile(r"\b(?P<n>\d{1,3}|" + _NUM_WORD_RE + r")\s+(\w+\s+){0,3}?(states|counties|parishes|boroughs|places)\b"),
    re.compile(r"\b(?P<n>\d{1,3}|" + _NUM_WORD_RE + r")\s+(highest|lowest|most|least|largest|smallest|biggest|"
               r"richest|poorest|oldest|youngest)\b"),
]


def _parse_number(num: str, mult: str | None) -> float | None:
    num = (num or "").strip()
    if num in ("a", "an"):
        if not mult:
            return None
        value = 1.0
    elif num in ("half a", "a half"):
        value = 0.5
    elif num == "a quarter":
        value = 0.25
    elif num in _NUM_WORDS:
        value = float(_NUM_WORDS[num])
    else:
        try:
            value = float(num.replace(",", ""))
        except ValueError:
            return None
    factor = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mil": 1e6, "mln": 1e6, "million": 1e6, "millions": 1e6,
              "mm": 1e6, "bn": 1e9, "b": 1e9, "billion": 1e9}.get((mult or "").strip(), 1.0)
    return value * factor


def _threshold_from(mt: re.Match, kind: str) -> Threshold | None:
    g = mt.groupdict()
    if kind == "fraction":
        frac = {"half": 50.0, "a third": 100 / 3, "one third": 100 / 3, "a quarter": 25.0, "one quarter": 25.0,
                "two thirds": 200 / 3}[mt.group(2)]
        return Threshold(">" if mt.group(1) == "more" else "<", frac, None, "percent", mt.span(), mt.group(0))
    if kind == "between":
        a = _parse_number(g.get("a_num"), g.get("a_mult"))
        b = _parse_number(g.get("b_num"), g.get("b_mult"))
        if a is None or b is None:
            return None
        if g.get("b_mult") and not g.get("a_mult") and a < b / 1000:  # "between 1 and 2 million"
            a = _parse_number(g.get("a_num"), g.get("b_mult"))
        if g.get("a_pct") or g.get("b_pct"):
            unit = "percent"
        else:
            unit = "dollars" if (g.get("a_cur") or g.get("b_cur")) else "plain"
        lo, hi = sorted((a, b))
        noun = (g.get("b_noun") or g.get("a_noun") or "").strip()
        return Threshold("between", lo, hi, unit, mt.span(), mt.group(0), noun=noun)
    value = _parse_number(g.get("num"), g.get("mult"))
    if value is None:
        return None
    num = (g.get("num") or "").strip()
    if num in _NUM_WORDS and not g.get("mult") and not g.get("pct") and not g.get("noun"):
        return None  # "over two" without unit: not a threshold
    if re.fullmatch(r"(19|20)\d\d", num) and not g.get("cur") and not g.get("pct") and not g.get("mult") \
            and not g.get("noun") and kind in (">", "<"):
        op_word = (g.get("op") or "").strip()
        if op_word in ("over", "under", "since", "before", "after"):
            return None  # "over 2020" reads as a year
    unit = "percent" if g.get("pct") else ("dollars" if g.get("cur") else "plain")
    if kind == ">=post":
        op = ">="
    elif kind == "<=post":
        op = "<="
    else:
        op = kind
    has_unit = g.get("mult") or g.get("cur") or g.get("pct") or g.get("noun") or "," in num or value >= 1000
    if kind == ">=post" and g.get("post") == "+" and not has_unit:
        return None  # "25+" next to "adults" etc.: not a threshold on its own
    return Threshold(op, value, None, unit, mt.span(), mt.group(0), noun=(g.get("noun") or "").strip())


__all__ = ["Catalog", "OfflinePlanner", "load_catalog", "normalize_question"]
