"""Finding the places a question names: state names, postal codes and demonyms, "X County, ST", parishes,
census areas and independent cities, lists of counties, misspellings, ambiguous county names, and names that are
no state or county at all (usually cities, which are declined rather than silently dropped).

Each match is a :class:`~sage.planner.parsed.Place` with ``how`` saying how it was found, so the plan can state
every guess it made."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

from ..text import overlaps
from .catalog import (
    Catalog,
    County,
    State,
    counties_named,
    is_measure_word,
    state_words,
)
from .declines import (
    Decline,
    county_suggestions,
    generic_suggestions,
    state_suggestions,
)
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
    JOINERS,
    KNOWN_WORDS,
    REGION_RES,
    SET_WORDS,
    STOP_BEFORE_PLACE,
    SUPERLATIVE,
    WORDLIKE_ABBRS,
    geo_key,
    join_words,
    mask,
)


def find_places(p: Parse, cat: Catalog) -> None:
    """Every state and county the question names.  Counties come first, so the state in "Washington County" or
    "Texas County, MO" is not also read as a place of its own."""
    t = p.t
    _find_counties(p, cat)
    # the District of Columbia in its spellings
    for mt in re.finditer(r"\b(district of columbia|washington,? dc|washington,? d c|d c|dc)\b", t):
        if not overlaps(mt.span(), p.blocked):
            _add_state(p, cat.state_by_abbr["DC"], mt.span(), "exact")
    # full state names ("Texas", "texass" from "Texas's")
    for mt in cat.state_pattern.finditer(t):
        span = mt.span()
        if overlaps(span, p.blocked):
            continue
        after = t[span[1]:]
        if re.match(r"\s+city\b", after):  # New York City, Kansas City, Oklahoma City...
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
    for mt in re.finditer(r"(?<![A-Za-z0-9])([A-Za-z]{2})(?![A-Za-z0-9])", p.tc):
        code = mt.group(1)
        st = cat.state_by_abbr.get(code.upper())
        if st is None or overlaps(mt.span(), p.blocked):
            continue
        if code.upper() == "US":
            continue
        wordlike = code.lower() in WORDLIKE_ABBRS
        if code.isupper() and (not all_caps or not wordlike):
            _add_state(p, st, mt.span(), "abbr")
        elif code.islower() and not wordlike:
            _add_state(p, st, mt.span(), "abbr")
    _find_fuzzy_states(p, cat)
    find_bare_counties(p, cat)
    _informal_regions(p)
    resolve_ambiguous(p)


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
        listed = re.match(r"\s+(counties|states|parishes)\b", p.t[span[1]:]) and any(
            pl.span[0] >= span[1] for pl in p.places)
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
            for c in members:
                p.places.append(Place("county", c.state, c, mt.span(), "alias", p.tc[mt.start():mt.end()]))
            p.notes.append(f"“{p.tc[mt.start():mt.end()].strip()}” read as {said}: "
                           f"{join_words([c.name for c in members])}.")
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
            co_hits = [c for k in range(1, 4) if len(words) >= k
                       for c in cat.county_index.get((" ".join(words[-k:]), "county"), [])]
            if not co_hits or not _qualified(p, cat, mt.end(), co_hits):
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
        if base in cat.state_by_key and suffix == "county" and not _qualified(p, cat, mt.end()):
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
                        p.tc[ma.start():ma.end()].isupper() or ma.group(1) not in WORDLIKE_ABBRS):
                    qual = (cat.state_by_abbr[ma.group(1).upper()], ma.span())
        common = set.intersection(*[{c.state.fips for c in hits} for hits in found])
        fips = qual[0].fips if qual else (next(iter(common)) if len(common) == 1 else None)
        if fips is None or fips not in common:
            continue
        p.blocked.append(span)
        if qual:
            p.blocked.append(qual[1])
        for piece, hits in zip(pieces, found, strict=False):
            c = next(c for c in hits if c.state.fips == fips)
            p.places.append(Place("county", c.state, c, span, "qualifier" if qual else "rule", piece))
        if not qual:
            state_name = next(c.state.name for c in found[0] if c.state.fips == fips)
            p.notes.append(f"{join_words(pieces)} {mt.group(1)} read as the ones in {state_name}, the only state "
                           "that has all of them.")


def state_after(p: Parse, cat: Catalog, end: int, hits: Sequence[County] = ()) -> tuple[State, tuple[int, int]] | None:
    """The state named right after position ``end`` ("Wayne County, MI", "wayne county michigan", "(TX)",
    "douglas co, nebrasksa"), with its span.

    A lowercase postal code that is also a word ("mo", "in", "or") and a misspelled state name count only when
    one of ``hits`` (the counties the name before could be) is in that state — then the state decides which
    county, which is exactly what it is there for."""
    t = p.t
    rest = t[end:]
    mq = re.match(r"(\s*,\s*|\s*\(\s*|\s+in\s+(the\s+state\s+of\s+)?|\s+of\s+|\s+)", rest)
    if not mq:
        return None
    pos = end + mq.end()
    sep = mq.group(1)
    in_hits = {c.state.fips for c in hits}
    ms = cat.state_pattern.match(t, pos)
    if ms:
        return cat.state_by_key[ms.group(1)], (pos, ms.end())
    ma = re.compile(r"([a-z]{2})(?![a-z0-9])").match(t, pos)
    if ma and ma.group(1).upper() in cat.state_by_abbr and ma.group(1) != "us":
        st = cat.state_by_abbr[ma.group(1).upper()]
        raw = p.tc[ma.start():ma.end()]
        if raw.isupper() or ma.group(1) not in WORDLIKE_ABBRS or "," in sep or "(" in sep or st.fips in in_hits:
            return st, ma.span()
    if re.match(r"(dc|d c|district of columbia)\b", t[pos:]):
        mdc = re.match(r"(dc|d c|district of columbia)\b", t[pos:])
        assert mdc is not None
        return cat.state_by_abbr["DC"], (pos, pos + mdc.end())
    # a misspelled state name, accepted only where one of the candidate counties lies
    if in_hits:
        words = re.match(r"([a-z]+)(?:\s+([a-z]+))?", t[pos:])
        if words:
            two = f"{words.group(1)} {words.group(2)}" if words.group(2) else None
            for typed in (two, words.group(1)):
                if typed is None or len(typed) < 4:
                    continue
                close = difflib.get_close_matches(typed, list(cat.state_by_key), n=1, cutoff=0.75)
                if close and close[0][0] == typed[0] and cat.state_by_key[close[0]].fips in in_hits:
                    return cat.state_by_key[close[0]], (pos, pos + len(typed))
    return None


def _qualified(p: Parse, cat: Catalog, end: int, hits: Sequence[County] = ()) -> bool:
    """Whether a state name or postal code follows position ``end`` ("Texas County, MO")."""
    return state_after(p, cat, end, hits) is not None


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


#: what may sit between the items of a list of places
_LIST_JOIN = re.compile(r"\s*(,\s*(and\s+|or\s+)?|\s(and|or|vs|versus|v|with|to|&|/)\s|\s*/\s*|\s*;\s*)\s*$")
#: "counties, Hennepin and Ramsey", "urban counties — Harris, Dallas ...": a list of county names follows
_COUNTY_CUE = re.compile(r"\b(counties|county|parishes|boroughs)\s*(,|:|\(|-|--|—|–)?\s*(namely\s+|i\s?e\s+|like\s+|"
                         r"such as\s+|including\s+)?$")


def find_bare_counties(p: Parse, cat: Catalog) -> None:
    """County names written without "County" in a question that names their state: "Dallas vs Tarrant County
    TX", "Cook and DuPage in Illinois", "kings and queens ny", "maricopa az", "Texas's big counties — Harris,
    Dallas, Tarrant, Bexar and Travis".

    A bare name is a county only where the question says so: a list of places it belongs to, or a "counties"
    word right before the list — and then only a county of a state the question names.  A bare name right before
    a state ("Austin, TX") is the way cities are written, so it is not read as a county.  Anything else stays an
    unknown name (usually a city), which is declined, not guessed."""
    states = {pl.state.fips: pl.state for pl in p.places if pl.level == "state"}
    states.update({pl.state.fips: pl.state for pl in p.places if pl.level == "county" and pl.county is not None})
    if not states:
        _listed_without_state(p, cat)
        return
    t = p.t
    tokens = [(m.group(0), m.span()) for m in re.finditer(r"[a-z]+", t)]
    found: list[tuple[tuple[int, int], County]] = []
    i = 0
    while i < len(tokens):
        hit = None
        for k in (3, 2, 1):
            group = tokens[i:i + k]
            if len(group) < k:
                continue
            span = (group[0][1][0], group[-1][1][1])
            if overlaps(span, p.blocked) or overlaps(span, [s for s, _ in found]):
                continue
            name = " ".join(w for w, _ in group)
            if k == 1 and (name in KNOWN_WORDS or name in COMMON_ENGLISH and not _listed(t, span, p, found)
                           or is_measure_word(name, cat) or len(name) < 3):
                continue
            cands = [c for st in states.values() for c in counties_named(name, cat, st)]
            if not cands and len(name) >= 5 and k <= 2:
                cands = _close_county(name, states.values(), cat)
            if not cands:
                continue
            if len({c.state.fips for c in cands}) > 1:
                continue  # the names exist in two of the states named: leave it to the unknown-name rules
            # a bare name right before its state alone is not enough: "Austin, TX" is the city, not Austin County
            after = state_after(p, cat, span[1], cands)
            if _listed(t, span, p, found) or _COUNTY_CUE.search(t[: span[0]]):
                # prefer the county over an independent city of the same name ("Baltimore" -> the county)
                cands.sort(key=lambda c: (c.suffix != "county", -c.population))
                hit = (span, cands[0], after)
                break
        if hit is None:
            i += 1
            continue
        span, county, after = hit
        found.append((span, county))
        p.blocked.append(span)
        text = p.tc[span[0]:span[1]]
        p.places.append(Place("county", county.state, county, span, "bare", text))
        if county.base != text.lower():
            p.notes.append(f"“{text}” read as {county.label} (closest county name in {county.state.name}).")
        else:
            p.notes.append(f"“{text}” read as {county.label}.")
        if after is not None and not overlaps(after[1], p.blocked):
            p.blocked.append(after[1])
        i += 1
    if found:
        _drop_qualifying_states(p, {c.state.fips for _, c in found})


def _listed_without_state(p: Parse, cat: Catalog) -> None:
    """"The Twin Cities counties, Hennepin and Ramsey": a list of bare names right after a "counties" word, in a
    question that names no state, is read as counties when exactly one state has every one of them."""
    masked = mask(p.t, p.blocked)
    for cue in re.finditer(r"\b(counties|parishes)\s*(,|:|\(|-|--|—|–)?\s*", masked):
        rest = masked[cue.end():]
        mt = re.match(r"([a-z]+(?: [a-z]+){0,2})((?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&)\s+)"
                      r"[a-z]+(?: [a-z]+){0,2})+", rest)
        if not mt:
            continue
        pieces = [x.strip() for x in re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&)\s+", mt.group(0)) if x.strip()]
        found = []
        for piece in pieces:
            words = piece.split()
            hits = next((counties_named(" ".join(words[:k]), cat) for k in range(len(words), 0, -1)
                         if counties_named(" ".join(words[:k]), cat)), [])
            if not hits:
                break
            found.append((piece, hits))
        if len(found) != len(pieces) or len(found) < 2:
            continue
        common = set.intersection(*[{c.state.fips for c in hits} for _, hits in found])
        if len(common) != 1:
            continue
        fips = common.pop()
        start = cue.end()
        typed = []
        for piece, hits in found:
            c = next(c for c in hits if c.state.fips == fips)
            a = p.t.index(piece, start)
            span = (a, a + len(piece))
            start = span[1]
            p.blocked.append(span)
            p.places.append(Place("county", c.state, c, span, "rule", p.tc[span[0]:span[1]]))
            typed.append(p.tc[span[0]:span[1]])
        state = next(c.state for c in found[0][1] if c.state.fips == fips)
        p.notes.append(f"{join_words(typed)} read as the counties of {state.name}, the only state that has all of "
                       "them.")


def _listed(t: str, span: tuple[int, int], p: Parse, found: Sequence[tuple[tuple[int, int], County]]) -> bool:
    """Whether the name at ``span`` is an item of a list whose neighbour is a county ("Cook and DuPage",
    "Dallas vs Tarrant County")."""
    counties = [pl.span for pl in p.places if pl.level == "county"] + [s for s, _ in found]
    before = t[: span[0]]
    for a, b in counties:
        if b <= span[0] and _LIST_JOIN.fullmatch(" " + t[b:span[0]]):
            return True
        if a >= span[1] and _LIST_JOIN.fullmatch(" " + t[span[1]:a]):
            return True
    # the next item is itself a bare name of a county of the same states ("wayne vs oakland vs macomb MI");
    # a state is no list item ("Caddo, Louisiana" names one place, which may well be a city)
    t = mask(t, p.blocked)
    before = t[: span[0]]
    nxt = re.match(r"(\s*(,\s*(and\s+|or\s+)?|\s(and|or|vs|versus|&)\s)\s*)([a-z]+(?: [a-z]+)?)", t[span[1]:])
    prev = re.search(r"([a-z]+)(\s*(,\s*(and\s+|or\s+)?|\s(and|or|vs|versus|&)\s)\s*)$", before)
    return bool(nxt or prev) and bool(_COUNTY_CUE.search(before) or re.search(
        r"\b(counties|county|parishes)\b", t[span[1]:span[1] + 60]) or _qualified_list_end(p, span))


def _qualified_list_end(p: Parse, span: tuple[int, int]) -> bool:
    """A state closes the list the name belongs to ("wayne vs oakland vs macomb MI", "kings and queens ny")."""
    sep = r"(\s*,\s*(and\s+|or\s+)?|\s(and|or|vs|versus|&)\s)\s*"
    for pl in p.places:
        if pl.level != "state" or pl.span[0] < span[1]:
            continue
        between = p.t[span[1]:pl.span[0]]
        if re.fullmatch(rf"({sep}[a-z]+( [a-z]+){{0,2}}){{0,8}}\s*(,|\(|\bin\b|\bof\b)?\s*(the state of\s+)?", between):
            return True
    return False


def _close_county(name: str, states: Iterable[State], cat: Catalog) -> list[County]:
    """A misspelled bare name ("Seminol") among the counties of the states the question names."""
    pool = {c.base: c for st in states for c in cat.counties_by_state.get(st.fips, [])}
    close = difflib.get_close_matches(name, list(pool), n=1, cutoff=0.85)
    return [pool[close[0]]] if close and close[0][0] == name[0] else []


def _drop_qualifying_states(p: Parse, fips: set[str]) -> None:
    """A state named only to say where the counties are ("Cook and DuPage in Illinois", "maricopa az",
    "Texas's big five counties — Harris, ...") is not a place of its own; one compared with them stays
    ("Harris County vs Texas")."""
    keep = []
    for pl in p.places:
        if pl.level == "state" and pl.state.fips in fips:
            before = p.t[max(0, pl.span[0] - 25):pl.span[0]]
            after = p.t[pl.span[1]:pl.span[1] + 25]
            compared = re.search(r"\b(vs|versus|compared? (to|with)|against|than|and|or|with)\s+(the\s+)?"
                                 r"(state\s+of\s+)?$",
                                 before) and not re.search(r"\b(counties|county)\b", after[:12])
            if compared or re.match(r"\s+(as a whole|overall|statewide|itself)\b", after):
                keep.append(pl)
                continue
            continue
        keep.append(pl)
    p.places = keep


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


def _hyphenated_county(p: Parse, same: list[County], name: str) -> County | None:
    """A bare name typed with its hyphen ("Miami-Dade", "Matanuska-Susitna") that is the name of exactly one
    county: no city shares such a name, so it is that county rather than an unknown place."""
    if len(same) != 1 or "-" not in same[0].name:
        return None
    base = same[0].name[: len(same[0].name) - len(same[0].suffix)].strip() if same[0].suffix else same[0].name
    typed = re.sub(r"\s*-\s*", "-", p.question.lower())
    return same[0] if base.lower() in typed and base.lower().replace("-", " ") == name.lower() else None


#: suffixes of consolidated city-county governments whose county-equivalent is the city itself (Anchorage
#: Municipality, Juneau City and Borough): the bare city name means that row, not an unknown place
_CONSOLIDATED = ("municipality", "city and borough")


def _consolidated(same: list[County]) -> County | None:
    return same[0] if len(same) == 1 and same[0].suffix in _CONSOLIDATED else None


def _read_consolidated(p: Parse, c: County, span: tuple[int, int], word: str) -> None:
    p.blocked.append(span)
    p.places.append(Place("county", c.state, c, span, "bare", word))
    p.notes.append(f"“{word}” read as {c.label}, the consolidated city-borough's county-equivalent (same area).")


def find_unknown_places(p: Parse, cat: Catalog) -> None:
    """A name that is no state or county — usually a city ("Austin TX", "in Chicago") — must not be
    silently dropped: the answer would be about somewhere else."""
    tokens = [(m.group(0), m.span()) for m in re.finditer(r"[A-Za-z]+", p.tc)]
    # In Title Case Questions capitals say nothing about names
    title_case = sum(w[0].isupper() for w, _ in tokens) > 0.6 * max(1, len(tokens))
    for i, (word, span) in enumerate(tokens):
        if overlaps(span, p.blocked):
            continue
        low = word.lower()
        if low in KNOWN_WORDS or low in COMMON_ENGLISH or is_measure_word(low, cat):
            continue
        prev = tokens[i - 1][0].lower() if i > 0 else ""
        nxt_span = tokens[i + 1][1] if i + 1 < len(tokens) else None
        # a hyphenated county name typed without its suffix, in any case ("miami-dade")
        hyph = None
        for k in (3, 2):
            group = tokens[i:i + k]
            if len(group) == k and not any(overlaps(sp, p.blocked) for _, sp in group):
                name = " ".join(w for w, _ in group)
                hyph = _hyphenated_county(p, counties_named(name.lower(), cat), name)
                if hyph is None and name.endswith("s"):  # "Miami-Dade's" (the apostrophe is gone)
                    hyph = _hyphenated_county(p, counties_named(name[:-1].lower(), cat), name[:-1])
                if hyph is not None:
                    break
        if hyph is not None:
            span2 = (span[0], group[-1][1][1])
            p.blocked.append(span2)
            p.places.append(Place("county", hyph.state, hyph, span2, "bare", name))
            p.notes.append(f"“{p.tc[span2[0]:span2[1]]}” read as {hyph.label}, the only county of that name.")
            continue
        nxt = tokens[i + 1][0].lower() if i + 1 < len(tokens) else ""
        # the first word is capitalised anyway; it is a place when a list of places follows ("Fairfax vs ...")
        lead = i == 0 and word[0].isupper() and nxt in JOINERS and bool(counties_named(low, cat))
        capital = lead or (word[0].isupper() and i > 0 and not word.isupper()
                           and (not title_case or prev in STOP_BEFORE_PLACE))
        before_state = nxt_span is not None and any(
            pl.level == "state" and pl.span[0] == nxt_span[0] for pl in p.places)
        if before_state and i == 0 and word[0].isupper() and counties_named(low, cat):
            capital = True  # "Juneau, Alaska: ...": the first word names a place as much as any other
        # "maricopa az": a lowercase name right before a state that is a county name there is a place too
        named_there = before_state and nxt_span is not None and bool(counties_named(low, cat, next(
            pl.state for pl in p.places if pl.span[0] == nxt_span[0])))
        if before_state and nxt_span is not None and (capital or prev in STOP_BEFORE_PLACE or named_there):
            st = next(pl.state for pl in p.places if pl.span[0] == nxt_span[0])
            same = counties_named(low, cat, st)
            one = _consolidated(same)
            if one is not None:  # the state after it only qualifies it ("Juneau, Alaska")
                p.places = [pl for pl in p.places if pl.span[0] != nxt_span[0]]
                _read_consolidated(p, one, span, word)
                continue
            raise Decline(
                f"“{word}” looks like a city or town; the data has only states and counties "
                "(county-equivalents), not cities, towns or ZIP codes"
                + (f" — did you mean {join_words([c.label for c in same[:3]])}?" if same else "."),
                county_suggestions(p, same[:2]) + state_suggestions(st))
        joined = prev in JOINERS or lead
        if capital and (prev in STOP_BEFORE_PLACE or joined):
            # a name of several words ("St Louis", "Santa Fe"): the longest that names counties
            name, same = word, counties_named(low, cat)
            k_used = 1
            for k in (3, 2):
                group = tokens[i:i + k]
                if len(group) == k and all(w[0].isupper() for w, _ in group):
                    hits = counties_named(" ".join(w.lower() for w, _ in group), cat)
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
            one = _consolidated(same) if k_used == 1 else None
            if one is not None:
                _read_consolidated(p, one, span, word)
                continue
            word = name
            sugg = county_suggestions(p, same[:3]) + state_suggestions(same[0].state if same else None)
            sugg = sugg[:3]
            raise Decline(
                f"“{word}” is not a state or county in the data (it may be a city, region or other place; only "
                "states and counties are covered)"
                + (f" — did you mean {join_words([c.label for c in same[:3]])}?" if same else "."), sugg)
