"""Census places in a question: cities, towns, villages and census-designated places ("Austin, TX", "the city of
Austin, Texas", "NYC", "Bethesda, MD", "Nashville", "Urban Honolulu"), and the levels without names to match —
metro areas, congressional districts, tracts and ZIP code tabulation areas — read from their codes ("TX-21",
"ZIP 78701", "tract 11 in Travis County", "metro Atlanta").

A place is identified by its name *and* its state: "Austin, TX" is Austin city, Texas; a bare "Springfield" is one
of dozens and is not guessed (the answer asks which, listing the largest).  A name that is both a place and a
county of its state ("Maricopa, AZ") reads as the place — the way cities are written — and keeps the county as its
namesake, which the frame builder uses when only the county has the figures asked for.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ....text import overlaps
from ..catalog import Catalog, County, Locality, State, counties_named, is_measure_word
from ..declines import Decline, needs_fetch
from .parsed import Parse, Place
from .vocabulary import COMMON_ENGLISH, KNOWN_WORDS, REGIONAL_WORDS, WORDLIKE_ABBRS, join_words, mask, nice_name

if TYPE_CHECKING:
    from ....census.semantic import Measure

#: everyday names of places that are not their Census names
ALIASES = {
    "nyc": ("New York city", "36"), "new york city": ("New York city", "36"),
    "the big apple": ("New York city", "36"), "philly": ("Philadelphia city", "42"),
    "vegas": ("Las Vegas city", "32"), "nola": ("New Orleans city", "22"),
}

#: the levels that have codes rather than names, and how questions name them (a code, or the kind of area)
CODED_LEVELS = {
    "zcta": re.compile(r"\b(?:zip(?:\s*code)?|zcta5?|postal\s+code)s?\s*(?:area\s*)?(?:#|no\.?|number)?\s*(\d{5})\b|"
                       r"\b(zip\s*codes?|zips|zctas?|zip\s*code\s*tabulation\s*areas?|postal\s*codes?)\b"),
    "cd": re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\s+(?:congressional\s+)?district\b|\bcongressional\s+districts?\b|"
                     r"\bhouse\s+districts?\b"),
    "tract": re.compile(r"\b(?:census\s+)?tracts?\b"),
    "cbsa": re.compile(r"\b(?:metro(?:politan)?(?:\s+areas?)?|metros|msas?|cbsas?|micropolitan(?:\s+areas?)?)\b"),
}
LEVEL_NAMES = {"zcta": "ZIP code tabulation areas (ZCTAs)", "cd": "congressional districts", "tract": "census tracts",
               "cbsa": "metropolitan and micropolitan statistical areas", "place": "places (cities, towns, CDPs)"}


def find_localities(p: Parse, cat: Catalog) -> None:
    """Places named with their state ("Austin, TX", "the city of Austin, Texas")."""
    if not cat.localities:
        return
    _with_state(p, cat)


#: a state's name that begins a place's name: "Kansas City", "Oklahoma City", "Iowa City", "Texas City"
_STATE_LED = re.compile(r"\s+(city|beach|falls|springs|heights|park|village|township)\b")


def find_state_led(p: Parse, cat: Catalog, state_span: tuple[int, int], state: State) -> bool:
    """A state's name followed by the rest of a place's name ("Kansas City MO", "oklahoma city"): the place — the
    one in the state written after it, the only one of that name, or the question of which when there are several
    of comparable size ("Kansas City" alone: Missouri's or Kansas's).  False when no place has that name."""
    if not cat.localities:
        return False
    mt = _STATE_LED.match(p.t, state_span[1])
    if mt is None:
        return False
    name = f"{p.t[state_span[0]:state_span[1]]} {mt.group(1)}"
    if not cat.localities_named(name):
        return False
    span = (state_span[0], mt.end())
    after = re.match(r"(?:\s+(?:city|town|village|cdp)\b)?\s*,?\s*(?:\(\s*)?([a-z]{2}|[a-z]+(?:\s[a-z]+)?)\b",
                     p.t[span[1]:])
    if after:
        st = cat.state_by_abbr.get(after.group(1).upper()) if len(after.group(1)) == 2 else \
            cat.state_by_key.get(after.group(1)) or cat.state_by_key.get(after.group(1).split()[0])
        if st is not None:
            there = cat.localities_named(name, st)
            if len(there) == 1:
                words = after.group(1) if st.abbr.lower() == after.group(1) else st.name.lower()
                end = span[1] + after.group(0).find(words.split()[0]) + len(words)
                _add(p, cat, there[0], (span[0], end), "qualifier")
                return True
    loc = pick_bare(cat, name, p)
    if loc is None:
        return False
    _add(p, cat, loc, span, "unique", _bare_note(cat, name, loc, p.tc[span[0]:span[1]]))
    return True


def _add(p: Parse, cat: Catalog, loc: Locality, span: tuple[int, int], how: str, note: str = "") -> None:
    namesake = next(iter(counties_named(loc.bases[-1], cat, loc.state)), None)
    # "the city of Houston", "Austin city", "Houston proper": words of the name, not a level asked for
    before = re.search(r"\b(the\s+)?(city|town|village)\s+of\s+$", p.t[:span[0]])
    after = re.match(r"\s+(city|town|village|cdp)?(\s*proper)?\b", p.t[span[1]:])
    p.blocked.append((before.start() if before else span[0], span[1] + (after.end() if after else 0)))
    p.places.append(Place("place", loc.state, None, span, how, p.tc[span[0]:span[1]], locality=loc,
                          namesake=namesake))
    if note:
        p.notes.append(note)


def find_full_names(p: Parse, cat: Catalog) -> None:
    """The full Census names that tell places of one name apart ("Lakeside CDP (San Diego County), CA"), read
    before the county names they contain."""
    for key, loc in cat.localities_by_full_name.items():
        at = p.t.find(key)
        if at >= 0 and not overlaps((at, at + len(key)), p.blocked):
            _add(p, cat, loc, (at, at + len(key)), "exact")


def find_aliases(p: Parse, cat: Catalog) -> None:
    """Everyday names of places ("NYC", "New York City", "Philly"), read before the state names they contain."""
    for word, (name, fips) in ALIASES.items():
        for mt in re.finditer(r"(?<!las )\b" + re.escape(word) + r"\b", p.t):
            if overlaps(mt.span(), p.blocked):
                continue
            loc = next((x for x in cat.localities if x.name == name and x.state.fips == fips), None)
            if loc is not None:
                _add(p, cat, loc, mt.span(), "alias", f"“{p.tc[mt.start():mt.end()]}” read as {loc.label}.")


def _with_state(p: Parse, cat: Catalog) -> None:
    """"Austin, TX", "austin texas", "the city of Austin, Texas", "Bethesda (MD)": a place's name right before a
    state the question names; the state then only says which place, and is not a place of its own.  A list of
    names before one state ("Dallas vs Fort Worth vs Arlington TX", "cincinatti and cleveland ohio") are all
    places of that state."""
    states = [pl for pl in p.places if pl.level == "state" and pl.how in ("exact", "abbr", "fuzzy")]
    for st in sorted(states, key=lambda pl: pl.span[0]):
        sep = re.search(r"(\s*,\s*|\s*\(\s*|\s+in\s+|\s+)$", p.t[: st.span[0]])
        if not sep:
            continue
        found = _name_before(p, cat, sep.start(), st.state)
        if found is None:
            continue
        span, loc, note = found
        p.places.remove(st)
        _add(p, cat, loc, (span[0], st.span[1]), "qualifier", note)
        start = span[0]
        while True:
            joint = re.search(r"(\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or|vs\.?|versus|&)\s+|\s*/\s*)$", p.t[:start])
            if not joint:
                break
            more = _name_before(p, cat, joint.start(), st.state, listed=True)
            if more is None:
                break
            span, loc, note = more
            _add(p, cat, loc, span, "qualifier", note)
            start = span[0]


#: words around a name that say a city is meant: "the city of Orange", "Orange (the city)", "Honolulu proper"
_CITY_BEFORE = re.compile(r"\b(city|town|village)\s+of\s+$")
_CITY_AFTER = re.compile(r"\s*(\(\s*the\s+(city|town|village)\b|(city|town|village|cdp)\b|proper\b)")


def _county_meant(p: Parse, cat: Catalog, name: str, loc: Locality, span: tuple[int, int]) -> bool:
    """Whether "X, ST" means the county rather than the place of that name in ST: when the county has at least ten
    times the place's people ("Sonoma, California": 485,000 vs 10,000; "Fairfax, VA"; "Maricopa, AZ") and nothing
    says the city is meant ("the city of Orange", "Orange (the city)")."""
    county = next((c for c in counties_named(name, cat, loc.state) if c is not cat.same_area_county(loc)), None)
    if county is None or county.population < 10 * loc.population:
        return False
    return not (_CITY_BEFORE.search(p.t[:span[0]]) or _CITY_AFTER.match(p.t, span[1])
                or re.match(r"\s*,?\s*[a-z]+(\s[a-z]+)?,?\s*\(?\s*(the\s+(city|town|village)|city\s+proper)\b",
                            p.t[span[1]:span[1] + 40]))


def names_place_before(p: Parse, cat: Catalog, end: int, state: State) -> bool:
    """Whether a place of ``state`` (or a misspelling of one) is named right before ``end``: "pittsburg pa" makes
    the lowercase "pa" a postal code, as a postal code after a place's name is."""
    try:
        return _name_before(p, cat, end, state) is not None
    except Decline:
        return True  # several places of that name in the state: a state all the same


def _name_before(p: Parse, cat: Catalog, end: int, state: State,
                 listed: bool = False) -> tuple[tuple[int, int], Locality, str] | None:
    """The place of ``state`` whose name ends at ``end`` (the longest of up to five words), a misspelling of one
    ("pittsburg pa", "louisvile ky": the one close name in that state), or None."""
    head = p.t[:end]
    words = list(re.finditer(r"[a-z]+", head))
    if not words or head[words[-1].end():].strip():
        return None  # something other than a name sits between it and the state
    for k in range(min(5, len(words)), 0, -1):
        group = words[-k:]
        span = (group[0].start(), group[-1].end())
        if overlaps(span, p.blocked):
            continue
        raw = " ".join(m.group(0) for m in group)
        name = re.sub(r"^(the\s+)?(city|town|village|borough)\s+of\s+", "", raw)
        # ("Ocean City, Maryland" is the town named Ocean City, not "Ocean, the city": the whole name first)
        if k > 1 and not cat.localities_named(name, state):
            name = re.sub(r"\s+(city|town|village|cdp|borough)$", "", name)
        city_said = name != raw
        hits = cat.localities_named(name, state)
        if not hits:
            continue
        if name in KNOWN_WORDS or (len(name) <= 3 and name not in ("ada", "ely")):
            return None
        if listed and (name in COMMON_ENGLISH or is_measure_word(name, cat)):
            return None
        if len(hits) > 1:
            raise ambiguous(name, hits, f"in {state.name}", p=p, cat=cat)
        if not city_said and _county_meant(p, cat, name, hits[0], span):
            return None
        return span, hits[0], ""
    # a misspelt name: one close match among the state's places, of a word that is no English or measure word
    last = words[-1]
    word = last.group(0)
    if len(word) < 5 or word in KNOWN_WORDS or word in COMMON_ENGLISH or word in REGIONAL_WORDS or \
            is_measure_word(word, cat) or overlaps(last.span(), p.blocked):
        return None
    pool = {b: x for x in cat.localities if x.state.fips == state.fips for b in x.bases if " " not in b}
    close = difflib.get_close_matches(word, list(pool), n=2, cutoff=0.9)
    if len(close) != 1 and not (len(close) == 2 and pool[close[0]] is pool[close[1]]):
        return None
    loc = pool[close[0]]
    written = p.tc[last.start():last.end()]
    return last.span(), loc, f"“{written}” read as {loc.label} (the closest name in {state.name})."


def ambiguous(name: str, hits: list[Locality], where: str = "", counties: Sequence[County] = (),
              p: Parse | None = None, cat: Catalog | None = None) -> Decline:
    """Several places (and counties) of one name: ask which, the largest first (kind ``ambiguous``).  Each
    suggestion is the question asked again with the name replaced by one of them, so one click answers it."""
    # a county-equivalent with a place's name and area ("Fairfax city, VA" is both) is listed once
    both: list[tuple[str, float]] = sorted(dict([(c.label, c.population) for c in counties]
                                                + [(x.label, x.population) for x in hits]).items(),
                                           key=lambda x: -x[1])
    shown = both[:6]
    more = f" and {len(both) - 6} more" if len(both) > 6 else ""
    listing = "; ".join(f"{label} ({int(pop):,} people)" for label, pop in shown)
    what = "places" if not counties else "places and counties"
    return Decline(
        f"“{name.title()}” is the name of {len(both)} {what}{(' ' + where) if where else ''}: {listing}{more}. "
        "Which one? (Pick one of the suggestions, or add its state.)",
        [_asked_about(p, cat, name, label) for label, _ in shown], kind="ambiguous")


def _asked_about(p: Parse | None, cat: Catalog | None, name: str, label: str) -> str:
    """The question asked again about ``label`` instead of the ambiguous ``name`` (with the state written after
    the name, if any, replaced too); "What is the population of <label>?" when the name cannot be found in it."""
    if p is not None and cat is not None:
        words = r"\W+".join(re.escape(w) for w in re.findall(r"[a-z]+", name.lower()))
        words = words.replace("st", "(?:st|saint)", 1) if name.lower().startswith("st ") else words
        names = "|".join(re.escape(st.name) for st in cat.states)
        state = r"(?:\s*,?\s*(?:(?-i:[A-Z]{2})|" + names + r")\b)?"
        pattern = re.compile(r"\b(?:the\s+(?:city|town|village)\s+of\s+)?" + words + r"\b\.?" + state,
                             re.IGNORECASE)
        if pattern.search(p.question):
            return pattern.sub(label, p.question, count=1).strip()
    return f"What is the population of {label}?"


def pick_bare(cat: Catalog, key: str, p: Parse | None = None) -> Locality | None:
    """The place a name written without its state means — only when that is not a guess (issue 17: an ambiguous
    name such as "Springfield" or "Austin" is never guessed, however much larger one of them is).

    * Several places of that name: the question of which (an ``ambiguous`` decline listing the most populous
      first, counties of that name too).
    * One place and a county of that name ten times its size ("Fairfax" has one Fairfax city elsewhere too;
      "Loudoun" none): None, the county rules decide.
    * One place and a county of comparable size that is not the same area ("Dallas" has several places; a
      single city next to its larger namesake county): ``ambiguous``.
    * One place, and counties of that name (if any) are the same area (Denver) or a tenth of its size: the place.
    None when no place has the name."""
    places = cat.localities_named(key)
    if not places:
        return None
    top = places[0]
    counties = [c for c in counties_named(key, cat) if c is not cat.same_area_county(top)]
    if p is not None and re.search(r"\b(city|town|village)\s+of\s+" + re.escape(key) + r"\b|\b" + re.escape(key)
                                   + r"\s+(city|proper)\b", p.t):
        counties = []  # "the city of Miami": no county is meant
    if len(places) == 1 and any(c.population >= 10 * top.population for c in counties):
        return None
    if p is not None and (len(places) > 1 or counties):
        # "Portland (the Oregon one)", "Springfield, the one in Illinois": the state said right after the name
        # (brackets are gone from the normalised text)
        said = re.search(r"\b" + r"\W+".join(map(re.escape, key.split())) + r"\W+the\s+(?:(?P<st>[a-z][a-z .]*?)\s+"
                         r"one|one\s+in\s+(?P<st2>[a-z][a-z .]*?))\b(?=\s*(?:$|[-,;:.?!]|and\b|or\b|vs\b|"
                         r"please\b|pls\b|thanks?\b|thank\s+you\b))", p.t)
        name = (said.group("st") or said.group("st2") or "").strip() if said else ""
        st = (cat.state_by_key.get(name) or cat.state_by_abbr.get(name.upper())) if name else None
        there = [x for x in places if st is not None and x.state.fips == st.fips]
        if len(there) == 1 and said is not None:
            # the state only said which one: it is no place of the question's own
            p.places = [pl for pl in p.places if not (pl.level == "state" and said.start() <= pl.span[0] < said.end())]
            return there[0]
    shared = _shared_state(p, cat, key) if p is not None and (len(places) > 1 or counties) else None
    if shared is not None and p is not None:
        # "pop fargo vs bismarck vs grand forks": names listed together, and one state has a place of each
        there = [x for x in places if x.state.fips == shared.fips]
        if len(there) == 1:
            note = f"The places listed read as those of {shared.name}, the only state that has a place of each name."
            if note not in p.notes:
                p.notes.append(note)
            return there[0]
    if len(places) > 1 or any(10 * c.population > top.population for c in counties):
        # "Austin city vs Travis County", "the city of Houston" in "Texas's population": the one place of that
        # name in the state the question names (by a state, or another place or county in it)
        named = {pl.state.fips for pl in p.places} if p is not None else set()
        if p is not None:  # a state written anywhere else in the question ("kansas city? the missouri one")
            own = [(m.start(), m.end()) for m in re.finditer(r"\b" + r"\W+".join(map(re.escape, key.split())) + r"\b",
                                                             p.t)]
            named |= {cat.state_by_key[m.group(1)].fips for m in cat.state_pattern.finditer(p.t)
                      if not overlaps(m.span(), own) and m.group(1) in cat.state_by_key}
        there = [x for x in places if x.state.fips in named]
        if len(there) == 1 and len(named) == 1 and not [c for c in counties if c.state.fips in named
                                                         and 10 * c.population > there[0].population
                                                         and c is not cat.same_area_county(there[0])]:
            return there[0]
        if len(places) == 1 and p is not None and p.places and all(pl.level == "place" for pl in p.places):
            return top  # "more people in Fort Worth than in Tulsa": named beside cities, the city
        home = [c for c in counties if c.state.fips in named]
        if len(named) == 1 and not there and len(home) == 1:
            return None  # "Gallatin vs Flathead vs Missoula county MT": one reading in that state, a county's
        if len(named) == 1 and (there or home):  # list only the readings in the state the question names
            where = (there[0].state if there else home[0].state).name
            raise ambiguous(key, there, f"in {where}", counties=home, p=p, cat=cat)
        raise ambiguous(key, places, counties=counties, p=p, cat=cat)
    return top


_LIST_SEP = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|\s(?:and|or|vs|versus|plus|&|/)\s)\s*")


def _shared_state(p: Parse, cat: Catalog, key: str) -> State | None:
    """The one state that has a place of every name in the list ``key`` stands in ("fargo vs bismarck vs grand
    forks": only North Dakota has all three), as a list of counties is read in the one state that has them all;
    None when ``key`` is in no list of place names, or several states (or none) have them all."""
    pieces = _LIST_SEP.split(mask(p.t, p.blocked).strip(" ?.!"))
    at = next((i for i, x in enumerate(pieces) if re.search(r"(?:^|\s)" + re.escape(key) + r"$|^" + re.escape(key)
                                                             + r"(?:\s|$)", x)), None)
    if at is None or len(pieces) < 2:
        return None
    names = []
    for i, piece in enumerate(pieces):
        words = piece.split()
        # the name ends the first piece ("pop fargo") and opens the others ("grand forks nd")
        tries = [" ".join(words[-k:]) for k in (3, 2, 1)] if i == 0 else [" ".join(words[:k]) for k in (3, 2, 1)]
        name = next((n for n in tries if n and cat.localities_named(n)), None)
        if name is None:
            if abs(i - at) == 1:
                return None  # a neighbour that is no place's name: no list of places
            continue
        names.append(name)
    if len(names) < 2 or key not in names:
        return None
    common = set.intersection(*({x.state.fips for x in cat.localities_named(n)} for n in names))
    if len(common) != 1:
        return None
    fips = common.pop()
    return next(x.state for x in cat.localities_named(key) if x.state.fips == fips)


def _bare_note(cat: Catalog, name: str, loc: Locality, written: str) -> str:
    if len(cat.localities_named(name)) > 1:
        return (f"“{written}” read as {loc.label}, the place of that name in the state the question is about "
                f"({len(cat.localities_named(name)) - 1} other places share the name).")
    counties = [c for c in counties_named(name, cat) if c is not cat.same_area_county(loc)]
    if not counties:
        return f"“{written}” read as {loc.label}, the only Census place of that name."
    return (f"“{written}” read as {loc.label} ({int(loc.population):,} people), the only Census place of that name; "
            f"not {join_words([c.label for c in counties[:3]])} — say “… County” for a county.")


def bare_locality(p: Parse, cat: Catalog, name: str, span: tuple[int, int]) -> bool:
    """A name that is no state ("Boise", "Springfield", "Bethesda", "Denver"): the place :func:`pick_bare` reads
    it as.  False when it is no place's name or a county of that name is meant."""
    if not cat.localities:
        return False
    loc = pick_bare(cat, name.lower(), p)
    if loc is None:
        return False
    _add(p, cat, loc, span, "unique", _bare_note(cat, name.lower(), loc, name))
    return True


def misspelled_place(name: str, cat: Catalog, state: State) -> Locality | None:
    """The one Census place of ``state`` whose name is a close misspelling of ``name`` ("tuscon" for Tucson: same
    first letter, at least 80 % alike, and no other name of the state as close), or None."""
    pool = {b: x for x in cat.localities if x.state.fips == state.fips for b in x.bases}
    close = [c for c in difflib.get_close_matches(name, list(pool), n=2, cutoff=0.8) if c[0] == name[0]]
    if len(close) != 1 or len(name) < 4:
        return None
    return pool[close[0]]


def add_place(p: Parse, cat: Catalog, loc: Locality, span: tuple[int, int], how: str, note: str = "") -> None:
    """Read ``loc`` at ``span`` of the question (see :func:`_add`)."""
    _add(p, cat, loc, span, how, note)


def unknown_place(name: str, cat: Catalog, state: State | None = None) -> Decline:
    """A name that is no state, county or Census place ("Gotham City"): declined, naming the closest real ones."""
    pool: dict[str, str] = {}
    for x in cat.localities:
        if state is None or x.state.fips == state.fips:
            for b in x.bases:
                pool.setdefault(b, x.label)
    close = difflib.get_close_matches(name.lower(), list(pool), n=3, cutoff=0.75)
    nearest = [pool[c] for c in close]
    return Decline(
        f"“{name}” is not a state, county or Census place (city, town or CDP) in the data"
        + (f" — the closest names are {', '.join(nearest)}." if nearest else "."),
        [f"What is the population of {label}?" for label in nearest[:3]]
        or ([f"What are the 10 largest cities in {state.name}?", f"What is the population of {state.name}?"]
            if state is not None else []))


#: a congressional district by its code ("TX-21", "NY-AL"), read from the question as written (the hyphen matters)
CD_CODE = re.compile(r"\b([A-Za-z]{2})-(\d{1,2}|al|at[- ]large)\b", re.IGNORECASE)


def coded_level(p: Parse, cat: Catalog, text: str | None = None) -> tuple[str, str, str | None] | None:
    """A level asked for by its code or kind (a ZIP code, "TX-21", a tract, a metro area): the level, the words
    that ask for it, and the postal code of a district's state; None when no such level is asked for."""
    for mt in CD_CODE.finditer(p.question):
        code = mt.group(1).upper()
        if code in cat.state_by_abbr and (mt.group(1).isupper() or mt.group(1).lower() not in WORDLIKE_ABBRS):
            return "cd", mt.group(0), code
    for level, rx in CODED_LEVELS.items():
        for mt in rx.finditer(text if text is not None else p.t):
            if not overlaps(mt.span(), p.blocked):
                return level, p.tc[mt.start():mt.end()], None
    return None


def coded_level_decline(p: Parse, cat: Catalog, text: str, measures: Sequence[Measure]) -> Decline | None:
    """The answer to a question about a level that has no rows here (ZIP codes, congressional districts, tracts,
    metro areas): which fetch would load it (kind ``needs_fetch``).  None when no such level is asked for, or when
    it is loaded (:mod:`.units` reads those questions)."""
    found = coded_level(p, cat, text)
    if found is None:
        return None
    level, asked, district_state = found
    nice = [nice_name(m) for m in measures if m.has_rows("county")][:1]
    suggestions = [f"What is the population of {pl.label}?" for pl in p.places[:2]] + [
        f"Which 10 counties{' in ' + p.places[0].state.name if p.places else ''} have the highest {n}?"
        for n in nice] + ["Which 10 counties have the most people?", "How many people live in the US?"]
    what = LEVEL_NAMES[level]
    if level in cat.levels:  # loaded: :mod:`.units` reads the question
        return None
    tables = sorted({c.split("_")[0] for m in measures for c in m.codes}) or ["B01003"]
    states = sorted({pl.state.abbr for pl in p.places}) if level in ("cd", "tract") else []
    if district_state:
        states = [district_state]
    command = (f"python -m sage census fetch --vintage 2023 --tables {','.join(tables)} --geographies {level}"
               + (f" --states {','.join(states)}" if states else ""))
    fetch: dict = {"tables": tables, "vintage": 2023, "geographies": [level]}
    if states:
        fetch["states"] = states
    zcta = (" A ZCTA is the Census Bureau's area built from the blocks a ZIP code mostly serves — close to, but not "
            "exactly, the Postal Service's ZIP code." if level == "zcta" else "")
    return Decline(f"“{asked}”: {what} have no rows in the data (only states, counties and Census places are "
                   f"shipped), and nothing else is shown instead. Load them with `{command}` (needs a Census API "
                   f"key), then ask again.{zcta}", suggestions[:3], kind="needs_fetch", fetch=fetch)


def is_place_word(word: str) -> bool:
    """Whether ``word`` could be a place's name rather than an English word of the question."""
    return word not in KNOWN_WORDS and word not in COMMON_ENGLISH and len(word) >= 3



def places_with_figures(places: list[Place], measures: list[Measure], cat: Catalog, notes: list[str],
                         p: Parse) -> list[Place]:
    """Census places (cities, towns, CDPs) have only population and housing units in the shipped data.  A place
    asked for another figure is read as the county-equivalent that covers exactly its area (San Francisco,
    Denver, Baltimore city), or — when its name is also a county of its state ("Maricopa, AZ") — as that
    county, saying so; otherwise the question is declined with the fetch that would add the figure for places."""
    out = []
    for pl in places:
        lacking = [m for m in measures if pl.level == "place" and not m.has_rows("place")]
        if not lacking:
            out.append(pl)
            continue
        assert pl.locality is not None
        same = cat.same_area_county(pl.locality)
        if same is not None:
            notes.append(f"{pl.locality.label} covers exactly the area of {same.label}; its "
                         f"{join_words([nice_name(m) for m in lacking])} read from that county-equivalent row.")
            out.append(Place("county", same.state, same, pl.span, "rule", pl.text))
            continue
        # a name far more the county's than the place's ("Maricopa, AZ": 4.5 million people vs 58,000) reads as the
        # county; "Austin, TX" (a city 30 times its namesake county) never does
        if pl.namesake is not None and all(m.has_rows("county") for m in measures) and \
                pl.namesake.population >= 10 * pl.locality.population:
            c = pl.namesake
            notes.append(f"“{pl.text}” read as {c.label}: the data has no "
                         f"{join_words([nice_name(m) for m in lacking])} for {pl.locality.label} (a Census place "
                         f"has only population and housing units here); ask for the population of "
                         f"{pl.locality.label} for the city.")
            out.append(Place("county", c.state, c, pl.span, "rule", pl.text))
            continue
        raise needs_fetch(lacking[0], pl.text or p.tc[pl.span[0]:pl.span[1]], cat, levels=("place",),
                          states=(pl.state.abbr,), suggestions=[
                              f"What is the population of {pl.locality.label}?",
                              f"How many housing units are in {pl.locality.label}?"],
                          why=f"the data has only population and housing units for places such as "
                              f"{pl.locality.label}")
    return out

__all__ = ["ALIASES", "CD_CODE", "CODED_LEVELS", "LEVEL_NAMES", "ambiguous", "bare_locality", "coded_level",
           "coded_level_decline", "find_aliases", "find_full_names", "find_localities", "find_state_led",
           "is_place_word", "names_place_before", "pick_bare", "places_with_figures", "unknown_place"]
