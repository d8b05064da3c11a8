"""Finding the places a question names: state names, postal codes and demonyms, Census regions, "X County, ST",
parishes, census areas and independent cities, lists of counties sharing one suffix, misspellings, and ambiguous
county names.  County names written without "County" and names that are no place at all are :mod:`.bare_names`'s.

Each match is a :class:`~sage.planner.offline.read.parsed.Place` with ``how`` saying how it was found, so the plan can
state every guess it made."""

from __future__ import annotations

import difflib
import re

from ....text import AP_STATES, overlaps
from ..catalog import Catalog, County, State, is_measure_word, state_words
from ..declines import Decline, generic_suggestions, state_suggestions
from .bare_names import find_bare_counties, qualified, state_after
from .localities import find_aliases, find_full_names, find_localities, find_state_led, names_place_before
from .parsed import Parse, Place
from .vocabulary import (
    ASC_WORDS,
    COMMON_ENGLISH,
    COMPARE,
    COUNTY_ALIASES,
    COUNTY_GROUPS,
    DEMONYMS,
    DESC_WORDS,
    INFORMAL_REGION,
    KNOWN_WORDS,
    REGION_RES,
    SET_WORDS,
    SUPERLATIVE,
    WORDLIKE_ABBRS,
    geo_key,
    join_words,
)


def find_places(p: Parse, cat: Catalog) -> None:
    """Every state and county the question names.  Counties come first, so the state in "Washington County" or
    "Texas County, MO" is not also read as a place of its own."""
    t = p.t
    _find_geoids(p, cat)
    find_full_names(p, cat)
    _find_counties(p, cat)
    find_aliases(p, cat)
    # the District of Columbia in its spellings
    for mt in re.finditer(r"\b(district of columbia|washington,? dc|washington,? d c|d c|dc)\b", t):
        if not overlaps(mt.span(), p.blocked):
            _add_state(p, cat.state_by_abbr["DC"], mt.span(), "exact")
    # full state names ("Texas", "texass" from "Texas's")
    for mt in cat.state_pattern.finditer(t):
        span = mt.span()
        if overlaps(span, p.blocked):
            continue
        region = INFORMAL_REGION.match(t, span[0])
        if region is not None and region.end() > span[1]:
            continue  # "the Mississippi Delta", "the Arkansas Delta": a region named after the state, not the state
        after = t[span[1]:]
        if find_state_led(p, cat, span, cat.state_by_key[mt.group(1)]):
            continue  # Kansas City, Oklahoma City, Iowa City: a Census place
        if re.match(r"\s+city\b", after) and "place" not in cat.levels:  # New York City, Kansas City...
            raise Decline(
                f"“{p.tc[span[0]:span[1]]} City” is a city; the data has only states and counties "
                "(county-equivalents), not cities or other places.",
                state_suggestions(cat.state_by_key.get(mt.group(1))))
        if mt.group(1) == "washington" and re.match(r",?\s+(dc|d c)\b", after):
            continue
        _add_state(p, cat.state_by_key[mt.group(1)], span, "exact")
    _find_regions(p, cat)
    # demonyms ("Texans")
    for word, state_name in DEMONYMS.items():
        for mt in re.finditer(r"\b" + re.escape(word) + r"\b", t):
            if not overlaps(mt.span(), p.blocked):
                _add_state(p, cat.state_by_key[geo_key(state_name)], mt.span(), "demonym")
    # postal codes
    all_caps = sum(ch.isupper() for ch in p.tc) > 0.6 * max(1, sum(ch.isalpha() for ch in p.tc))
    codes = [mt for mt in re.finditer(r"(?<![A-Za-z0-9])([A-Za-z]{2})(?![A-Za-z0-9])", p.tc)
             if mt.group(1).upper() in cat.state_by_abbr and mt.group(1).upper() != "US"
             and not overlaps(mt.span(), p.blocked)]
    taken: set[int] = set()
    for n, mt in enumerate(codes):
        code = mt.group(1)
        wordlike = code.lower() in WORDLIKE_ABBRS
        if (code.isupper() and (not all_caps or not wordlike)) or (code.islower() and not wordlike):
            taken.add(n)
        elif wordlike and not _place_next(p, cat, mt.end()) and names_place_before(
                p, cat, len(p.t[:mt.start()].rstrip(" ,")), cat.state_by_abbr[code.upper()]):
            taken.add(n)  # "pittsburg pa population": after a place's name ("springfield or columbus" is a list)
        elif wordlike and code.lower() not in _PLAIN_WORDS and re.match(
                r"\s+(?:counties|county|cities|towns|places|parishes|cdps)\b", p.t[mt.end():]):
            taken.add(n)  # "ga counties w med hh inc over 100k", "pa cities": the state's counties or cities
    # "pov rate ms vs la vs nm vs wv": a postal code that is also a word counts inside a list of postal codes
    grew = True
    while grew:
        grew = False
        for n, mt in enumerate(codes):
            if n in taken:
                continue
            for m in (n - 1, n + 1):
                if m in taken and 0 <= m < len(codes):
                    a, b = sorted((mt, codes[m]), key=lambda x: x.start())
                    if re.fullmatch(r"\s*(,|vs|versus|and|or|&|/|,\s*and|,\s*or)\s*", p.t[a.end():b.start()]):
                        taken.add(n)
                        grew = True
                        break
    for n in sorted(taken):
        mt = codes[n]
        _add_state(p, cat.state_by_abbr[mt.group(1).upper()], mt.span(), "abbr")
    # "top 5 fla counties", "calif cities": an AP abbreviation written without its period, before a level word
    for mt in _AP_BEFORE_LEVEL.finditer(p.t):
        if not overlaps(mt.span(1), p.blocked) and not any(overlaps(mt.span(1), [pl.span]) for pl in p.places):
            _add_state(p, cat.state_by_abbr[AP_STATES[mt.group(1).capitalize()]], mt.span(1), "abbr")
    _find_fuzzy_states(p, cat)
    find_localities(p, cat)
    find_bare_counties(p, cat)
    _informal_regions(p)
    resolve_ambiguous(p)
    county_fips_codes(p)


_AP_BEFORE_LEVEL = re.compile(r"\b(" + "|".join(k.lower() for k in AP_STATES if "." not in k and len(k) > 2)
                              + r")\s+(?:counties|county|cities|towns|places|parishes|cdps)\b")

#: postal codes that are everyday words ("in counties", "or cities", "me"): never a state before a level word
_PLAIN_WORDS = frozenset("in or me ok hi oh as am us de co id al ms mt la ne".split())


#: a Census GEOID of a state, a county or a place ("0500000US16001", "1600000US3008950")
_GEOID = re.compile(r"\b(?:0400000|0500000|1600000)us\d{2,7}\b")


def _find_geoids(p: Parse, cat: Catalog) -> None:
    """Places cited by their GEOID, as a demographer writes them; and a county's five-digit FIPS code written beside
    its name ("Buncombe Co NC (37021)") is that county's, not a ZIP code."""
    for mt in _GEOID.finditer(p.t):
        geo = cat.by_geo_id.get(mt.group(0).upper())
        if geo is None or overlaps(mt.span(), p.blocked):
            continue
        text = p.tc[mt.start():mt.end()]
        if isinstance(geo, State):
            _add_state(p, geo, mt.span(), "geoid")
        else:
            p.blocked.append(mt.span())
            if isinstance(geo, County):
                p.places.append(Place("county", geo.state, geo, mt.span(), "geoid", text))
            else:
                p.places.append(Place("place", geo.state, None, mt.span(), "geoid", text, locality=geo))
        p.notes.append(f"“{text}” read as {geo.label if hasattr(geo, 'label') else geo.name} (its GEOID).")


def county_fips_codes(p: Parse) -> None:
    """A five-digit code beside a county the question names that is that county's FIPS code: read with it."""
    for county in [x.county for x in p.places if x.level == "county" and x.county is not None]:
        fips = county.geo_id[-5:]
        for mt in re.finditer(rf"(?<!\d){fips}(?!\d)", p.t):
            if not overlaps(mt.span(), p.blocked):
                p.blocked.append(mt.span())


def _place_next(p: Parse, cat: Catalog, at: int) -> bool:
    """Whether the word at ``at`` begins a place's or a state's name."""
    mt = re.match(r"\s*([a-z]+)", p.t[at:])
    if mt is None:
        return False
    word = mt.group(1)
    return word in cat.state_words or bool(cat.localities_named(word)) or word in cat.locality_first_words


def _find_regions(p: Parse, cat: Catalog) -> None:
    """Census regions and divisions ("New England", "the Midwest") are read as their states, with the definition
    stated; a region with no single definition ("the Sun Belt", "Pacific Northwest") is set aside for
    :func:`_informal_regions`."""
    t = p.t
    for mt in INFORMAL_REGION.finditer(t):
        if not overlaps(mt.span(), p.blocked):
            p.informal.append(mt.span())
            p.blocked.append(mt.span())
    for rx, name, codes in REGION_RES:
        for mt in rx.finditer(t):
            if overlaps(mt.span(), p.blocked):
                continue
            states = [cat.state_by_abbr[c] for c in codes if c in cat.state_by_abbr]
            p.blocked.append(mt.span())
            for st in states:
                p.places.append(Place("state", st, None, mt.span(), "region", p.tc[mt.start():mt.end()]))
            p.notes.append(f"“{p.tc[mt.start():mt.end()].strip()}” read as {name}: "
                           f"{', '.join(st.abbr for st in states)}.")


def _informal_regions(p: Parse) -> None:
    """A region with no single definition ("the Bay Area", "the Sun Belt") is declined (the answer would be about
    somewhere else) unless the question lists its places itself: "the nine Bay Area counties (Alameda, ...,
    California)", "the Twin Cities counties, Hennepin and Ramsey"."""
    for span in p.informal:
        text = p.tc[span[0]:span[1]]
        if re.search(r"\b(?:not|nor|rather than|instead of|excluding|except)\s+(?:the\s+)?(?:whole\s+|entire\s+)?$",
                     p.t[:span[0]]) and p.places:
            # "How many people live in Boise? The city itself, not the whole Treasure Valley.": what it is not
            p.notes.append(f"“{text}” read as what the question leaves out.")
            continue
        if p.scene and any(pl.level != "state" for pl in p.places):
            # "I'm writing about economic hardship in Alabama's Black Belt and would like to compare ... Hale County and
            # Perry County": before the ask, a region that the places after it are in only sets the scene
            p.notes.append(f"“{text}” read as the setting of the places the question names.")
            continue
        listed = re.match(r"\s+(counties|states|parishes)\b", p.t[span[1]:]) and any(
            pl.span[0] >= span[1] for pl in p.places)
        # "in the Mississippi Delta, in Bolivar, Sunflower, Coahoma and Washington counties": the places it means
        listed = listed or (re.match(r"\s*,?\s*(?:in|including|namely|that is|ie)\s", p.t[span[1]:]) and any(
            pl.span[0] >= span[1] and pl.level != "state" for pl in p.places))
        # "A Pacific Northwest higher-ed consortium wants ... Washington, Oregon and Idaho": the region word
        # describes something else, and the places are named
        adjectival = bool(p.places) and not re.match(
            r"\s*($|[,.;:?!]|(and|or|vs|versus|with|compared|than|plus)\b)", p.t[span[1]:])
        listed = bool(listed) or adjectival
        if listed:
            p.notes.append(f"“{text}” read as the places the question lists.")
            continue
        raise Decline(
            f"“{text}” is not a region with one agreed definition, and the data has no "
            "region rows; name the states (or counties) you mean, or use a Census region or division "
            "(Northeast, Midwest, South, West; New England, Pacific ...).",
            ["Which 3 states have the highest poverty rate?",
             "Compare the unemployment rate of Washington, Oregon and Idaho",
             "Which New England state has the highest median household income for White householders?"])


def resolve_ambiguous(p: Parse) -> None:
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
            if not COMPARE.search(p.t):
                p.places = [q for q in p.places if not (q.level == "state" and q.state.fips == c.state.fips)]


def _add_state(p: Parse, st: State, span: tuple[int, int], how: str) -> None:
    p.blocked.append(span)
    p.places.append(Place("state", st, None, span, how, p.tc[span[0]:span[1]]))


def _find_counties(p: Parse, cat: Catalog) -> None:
    t = p.t
    # New York City boroughs and other common names of counties
    for word, (county_name, fips) in COUNTY_ALIASES.items():
        for mt in re.finditer(r"\b" + re.escape(word) + r"\b(?!\s+county)", t):
            if overlaps(mt.span(), p.blocked):
                continue
            c = next((c for c in cat.counties_by_state.get(fips, []) if c.name == county_name), None)
            if c:
                p.blocked.append(mt.span())
                p.places.append(Place("county", c.state, c, mt.span(), "alias", p.tc[mt.start():mt.end()]))
    for word, (names, fips, said) in COUNTY_GROUPS.items():
        for mt in re.finditer(r"\b(the\s+)?" + re.escape(word) + r"\b", t):
            if overlaps(mt.span(), p.blocked):
                continue
            members = [c for c in cat.counties_by_state.get(fips, []) if c.name in names]
            p.blocked.append(mt.span())
            p.group = said
            for c in members:
                p.places.append(Place("county", c.state, c, mt.span(), "alias", p.tc[mt.start():mt.end()]))
            p.notes.append(f"“{p.tc[mt.start():mt.end()].strip()}” read as {said}: "
                           f"{join_words([c.name for c in members])}.")
            # "the unemployment rate for nyc as a whole? like all 5 boroughs combined": the city is those boroughs
            for city in re.finditer(r"\b(?:nyc|new york city)\b", t):
                if not overlaps(city.span(), p.blocked):
                    p.blocked.append(city.span())
                    p.places.extend(Place("county", c.state, c, city.span(), "alias", p.tc[city.start():city.end()])
                                    for c in members)
    _find_county_lists(p, cat)
    suffix_re = re.compile(r"\b(city and borough|census area|planning region|municipality|municipio|borough|"
                           r"parish|county|countys|cnty|cty|co|city)\b")
    for mt in suffix_re.finditer(t):
        if overlaps(mt.span(), p.blocked):
            continue
        suffix = "county" if mt.group(1) in ("countys", "cnty", "cty", "co") else mt.group(1)
        if mt.group(1) == "co":
            # "Cook Co., IL": only right after a county name and before its state, else it is Colorado
            words = t[: mt.start()].rstrip().split(" ")
            # the longest name before it ("salt lake co" is Salt Lake County, not a Lake County)
            co_hits = next((h for k in (3, 2, 1) if len(words) >= k
                            for h in [cat.county_index.get((" ".join(words[-k:]), "county"), [])] if h), [])
            after = _state_named_after(p, cat, mt.end())
            if after is not None and not any(c.state.fips == after.fips for c in co_hits):
                # "bernalilo co nm", "loudon co va": a county of the state named after it, misspelled
                _misspelled_co(p, cat, mt.start(), mt.end(), after)
                continue
            # ("Polk Co vs Linn Co Iowa": written "Co" after a county's name, it is County, whichever state)
            if not co_hits or (len(co_hits) > 1 and not qualified(p, cat, mt.end(), co_hits)
                               and p.tc[mt.start():mt.end()] != "Co"):
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
                        _add_county(p, cat, hits, (start, end), "alias")
                        break
            continue
        if found is None and words and (words[-1] in cat.state_by_key or " ".join(words[-2:]) in cat.state_by_key):
            continue  # "which vermont county has the highest ...": a state's counties, not a misspelt county
        if found is None:
            fuzzy = _fuzzy_county(words, suffix, cat)
            if fuzzy is None:
                last = words[-1] if words else ""
                if suffix in ("county", "parish") and last.isalpha() and last not in KNOWN_WORDS \
                        and last not in COMMON_ENGLISH and not is_measure_word(last, cat) \
                        and not SUPERLATIVE.search(last) and not DESC_WORDS.search(last) \
                        and not ASC_WORDS.search(last) and last not in state_words(cat):
                    name = p.tc[before.rfind(" ") + 1: mt.end()] if " " in before else p.tc[: mt.end()]
                    raise Decline(f"no county named “{name}” was found in the data.",
                                  generic_suggestions())
                continue
            base, hits, how = fuzzy
            start = mt.start() - len(base) - 1
            typed_from = max(0, mt.start() - len(" ".join(words[-len(base.split()):])) - 1)
            _add_county(p, cat, hits, (max(0, start), mt.end()), how, typed=p.tc[typed_from: mt.end()])
            continue
        base, hits = found
        start = mt.start() - len(base) - 1
        if base in cat.state_by_key and mt.group(1) == "countys":
            continue  # "texas countys where ...": the plural, misspelt, after a state — never "Texas County"
        if base in cat.state_by_key and suffix == "county" and not qualified(p, cat, mt.end()):
            prev = t[: max(0, start)].split()[-1:] or [""]
            if prev[0] in SET_WORDS or prev[0].isdigit() or SUPERLATIVE.search(prev[0]) \
                    or is_measure_word(prev[0], cat):
                continue  # "Which Texas county has ...": the state, and a county-level question
        _add_county(p, cat, hits, (max(0, start), mt.end()), "exact")


def _find_county_lists(p: Parse, cat: Catalog) -> None:
    """ "Cook and DuPage counties", "Orleans, Jefferson and St Tammany parishes": several counties sharing
    one plural suffix.  Taken only when every name is a county (else "Texas and Oklahoma counties" is a
    level word with two states)."""
    t = p.t
    for mt in re.finditer(r"\b(counties|countys|parishes)\b", t):
        suffix = "county" if mt.group(1) in ("counties", "countys") else "parish"
        head = re.split(r"\b(?:in|of|for|between|compare|comparing|the|both)\b|[:;?]", t[: mt.start()])[-1]
        pieces = [x.strip() for x in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or|vs|versus|&|\+|plus)\s+", head)
                  if x.strip()]
        if len(pieces) < 2:
            continue
        found: list[list[County]] = []
        bases: list[str] = []
        misspelt: list[str] = []
        first_piece = pieces[0]
        for n, piece in enumerate(pieces):
            words = piece.split()
            base = next((" ".join(words[-k:]) for k in range(len(words), 0, -1)
                         if (" ".join(words[-k:]), suffix) in cat.county_index), None)
            if base is None and words:
                # "Bronx, Kings, New York, Queens and Richond counties": a misspelt name in the list (one close name)
                fuzzy = _fuzzy_county(words[-1:], suffix, cat)
                if fuzzy is not None:
                    base = fuzzy[0]
                    misspelt.append(f"“{words[-1]}” read as {base.title()} {suffix.title()}, the closest name.")
                    pieces[n] = " ".join([*words[:-1], base])
            if base is None:
                break
            bases.append(base)
            found.append(cat.county_index[(base, suffix)])
            # "total housing units dallas tarrant collin and denton countys": names written with no comma between
            # them, one county's name after another (of one word each), before the first piece's base
            rest = words[:len(words) - len(base.split())]
            while n == 0 and rest and (rest[-1], suffix) in cat.county_index and rest[-1] not in cat.state_words:
                bases.insert(0, rest[-1])
                found.insert(0, cat.county_index[(rest[-1], suffix)])
                pieces = [" ".join(rest[-1:]), *pieces]
                rest = rest[:-1]
        if len(found) != len(pieces) or all(b in cat.state_by_key for b in bases):
            continue
        start = mt.start() - len(head) + (len(head) - len(head.lstrip()))
        # the list starts at its first name when the words before it ask something ("combined pop Multnomah + ...
        # counties": "combined pop" is the measure); other words before it go with the list ("New York City (Bronx,
        # Kings, ... counties)": the city the counties make up)
        first = head.find(first_piece)
        at = first_piece.rfind(bases[0])  # where the first name of the list stands in its piece
        lead = first_piece[:at].split()
        if any(w in ("combined", "total", "sum", "together", "pop", "population", "people", "residents",
                     "housing", "units") for w in lead):
            start = mt.start() - len(head) + first + at
        pieces = bases
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
                        p.tc[ma.start():ma.end()].isupper() or ma.group(1) not in WORDLIKE_ABBRS):
                    qual = (cat.state_by_abbr[ma.group(1).upper()], ma.span())
        common = set.intersection(*[{c.state.fips for c in hits} for hits in found])
        # "What share of Arkansas's population lives in Pulaski, Benton, and Washington counties": the one state the
        # question names that has them all
        named = common & {cat.state_by_key[m.group(1)].fips for m in cat.state_pattern.finditer(t)
                          if m.group(1) in cat.state_by_key and not start <= m.start() < mt.end()
                          and not re.match(r"\s+(count|parish)", t[m.end():])}
        fips = qual[0].fips if qual else (next(iter(common)) if len(common) == 1 else
                                          next(iter(named)) if len(named) == 1 else None)
        if fips is None or fips not in common:
            continue
        p.blocked.append(span)
        p.notes.extend(misspelt)
        if qual:
            p.blocked.append(qual[1])
        for piece, hits in zip(pieces, found, strict=False):
            c = next(c for c in hits if c.state.fips == fips)
            p.places.append(Place("county", c.state, c, span, "qualifier" if qual else "rule", piece))
        if not qual:
            state_name = next(c.state.name for c in found[0] if c.state.fips == fips)
            p.notes.append(f"{join_words(pieces)} {mt.group(1)} read as the ones in {state_name}, "
                           + ("the only state that has all of them." if len(common) == 1 else
                              "the state the question names."))
    _find_listed_after(p, cat)


#: "three counties in southeast Ohio (Athens, Meigs, and Vinton)", "four counties in the Arkansas Delta: Phillips,
#: Lee, Monroe, and St. Francis": the level word and the state, then the names
_LISTED_AFTER = re.compile(r"\b(counties|parishes)\s+(?:in|of)\s+(?:the\s+)?(?:[a-z]+\s+){0,2}")


def _find_listed_after(p: Parse, cat: Catalog) -> None:
    """Counties listed after "counties in <state>" and a colon or an opening bracket: each name is that state's
    county of that name (a city or a county elsewhere of the same name is not what a list of counties means)."""
    t = p.t
    for mt in _LISTED_AFTER.finditer(t):
        words = [mt.end(1) + w.start() for w in re.finditer(r"(?<=\s)[a-z]", t[mt.end(1):mt.end()])]
        # (the state may follow a word or two: "counties in southeast Ohio", "counties in the Arkansas Delta")
        ms = next((m for k in [*words, mt.end()] if (m := cat.state_pattern.match(t, k)) is not None), None)
        if ms is None or ms.group(1) not in cat.state_by_key:
            continue
        state = cat.state_by_key[ms.group(1)]
        # (the bracket is gone from the normalised text: "... southeast ohio athens, meigs, and vinton and i")
        opener = re.match(r"(?:\s+[a-z]+){0,2}?\s*(?:[:(]|\s[—–-]\s)\s*", t[ms.end():]) or \
            re.match(r"\s*", t[ms.end():])
        start = ms.end() + (opener.end() if opener is not None else 0)
        close = re.search(r"[)?.;]|\s(?:and|so|to)\s+(?:i|we)\b|$", t[start:])
        end = start + (close.start() if close else len(t) - start)
        body = t[start:end]
        suffix = "county" if mt.group(1) == "counties" else "parish"
        pieces = [x.strip() for x in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or|&|\+|plus)\s+", body) if x.strip()]
        if len(pieces) < 2 or overlaps((start, end), p.blocked):
            continue
        found = [next((c for c in cat.county_index.get((piece, suffix), []) if c.state.fips == state.fips), None)
                 for piece in pieces]
        counties = [c for c in found if c is not None]
        if len(counties) != len(pieces):
            continue
        p.blocked.append((ms.start(), end))  # the state only says where the counties are
        for piece, c in zip(pieces, counties, strict=True):
            p.places.append(Place("county", c.state, c, (start, end), "qualifier", piece))


def _fuzzy_county(words: list[str], suffix: str, cat: Catalog):
    """A misspelled county name before its suffix ("Maricpa County"): the closest name with that suffix
    (``_add_county`` then prefers the one in the state named right after it)."""
    bases = cat.bases_by_suffix.get(suffix, [])
    for k in (3, 2, 1):
        if len(words) < k:
            continue
        typed = " ".join(words[-k:])
        if len(typed) < 4 or typed in KNOWN_WORDS or words[-k] in KNOWN_WORDS:
            continue
        close = difflib.get_close_matches(typed, bases, n=3, cutoff=0.8)
        if close:
            return close[0], cat.county_index[(close[0], suffix)], "fuzzy"
    return None


def _state_named_after(p: Parse, cat: Catalog, end: int) -> State | None:
    """The state whose name or postal code stands right after ``end`` ("co nm", "co, new mexico")."""
    rest = re.match(r"[\s,(]*([a-z]+)(?: ([a-z]+))?", p.t[end:])
    if not rest:
        return None
    one, two = rest.group(1), f"{rest.group(1)} {rest.group(2)}" if rest.group(2) else ""
    if two in cat.state_by_key:
        return cat.state_by_key[two]
    if one in cat.state_by_key:
        return cat.state_by_key[one]
    return cat.state_by_abbr.get(one.upper()) if len(one) == 2 and one != "us" else None


def _misspelled_co(p: Parse, cat: Catalog, start: int, end: int, st: State) -> None:
    """"bernalilo co nm", "loudon co va": the county of the state named right after "co" whose name is closest to
    the words before it (a close match only), read as a guess the assumptions state."""
    counties = [c for c in cat.counties_by_state.get(st.fips, []) if c.suffix == "county"]
    words = p.t[:start].rstrip().split(" ")
    for k in range(1, min(3, len(words)) + 1):
        base = " ".join(words[-k:])
        close = [c for c in difflib.get_close_matches(base, [c.base for c in counties], n=1, cutoff=0.8)
                 if c[0] == base[0]]
        if close:
            hits = [c for c in counties if c.base == close[0]]
            begin = start - len(base) - 1 if p.t[:start].endswith(" ") else start - len(base)
            _add_county(p, cat, hits, (max(0, begin), end), "fuzzy", p.tc[max(0, begin):end])
            return


def _add_county(p: Parse, cat: Catalog, hits: list[County], span: tuple[int, int], how: str,
                typed: str = "") -> None:
    # a state right after the county qualifies it: "Wayne County, MI", "wayne county michigan", "(TX)"
    qual = state_after(p, cat, span[1], hits)
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
            if not in_state and st.abbr == "CT" and suffix == "county":
                raise Decline(f"{hits[0].name}, Connecticut is not in the data: Connecticut replaced its eight "
                              "counties with nine planning regions in 2022, and the ACS 2019-2023 reports the "
                              "regions (the shipped 2014-2018 period has Connecticut as a whole), so the old "
                              "counties cannot be "
                              "compared across periods. Ask about a planning region or Connecticut as a whole.",
                              [f"What is the population of {c.label}?" for c in cat.counties_by_state[st.fips][:2]]
                              + ["How did the population of Connecticut change from 2014-2018 to 2019-2023?"])
            if not in_state:
                raise Decline(f"there is no {hits[0].name} in {st.name} in the data.",
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


def _find_fuzzy_states(p: Parse, cat: Catalog) -> None:
    """Misspelled state names ("Missisippi", "Goergia", "north carolna")."""
    t = p.t
    names = list(cat.state_by_key)
    tokens = [(m.group(0), m.span()) for m in re.finditer(r"[a-z]+", t)]
    used: list[tuple[int, int]] = []
    for n in (3, 2, 1):
        for i in range(len(tokens) - n + 1):
            group = tokens[i:i + n]
            span = (group[0][1][0], group[-1][1][1])
            if overlaps(span, p.blocked) or overlaps(span, used):
                continue
            words = [w for w, _ in group]
            if any(w in KNOWN_WORDS and n == 1 for w in words) or words[0] in KNOWN_WORDS:
                continue
            typed = " ".join(words)
            if len(typed) < 5 or (n == 1 and typed in COMMON_ENGLISH):
                continue
            close = difflib.get_close_matches(typed, names, n=1, cutoff=0.84 if n == 1 else 0.86)
            if close and close[0].count(" ") == n - 1 and close[0][0] == typed[0]:
                st = cat.state_by_key[close[0]]
                used.append(span)
                p.blocked.append(span)
                p.places.append(Place("state", st, None, span, "fuzzy", p.tc[span[0]:span[1]]))


