"""Names written without their kind: county names without "County" ("Dallas vs Tarrant County TX", "Cook and
DuPage in Illinois", "kings and queens ny", "the Twin Cities counties, Hennepin and Ramsey"), the state written
right after a county ("Wayne County, MI", "douglas co, nebrasksa"), and names that are no state or county at all —
usually cities — which are declined rather than silently dropped.

A bare name is read as a county only where the question says so (a list of places, a "counties" word, the state
that has every name); everything else is refused, never guessed."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

from ....text import overlaps
from ..catalog import Catalog, County, State, counties_named, is_measure_word
from ..declines import Decline, county_suggestions, state_suggestions
from .localities import add_place, ambiguous, bare_locality, is_place_word, misspelled_place, unknown_place
from .parsed import Parse, Place
from .vocabulary import (
    COMMON_ENGLISH,
    JOINERS,
    KNOWN_WORDS,
    REGIONAL_WORDS,
    STOP_BEFORE_PLACE,
    WORDLIKE_ABBRS,
    join_words,
    mask,
)


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
        # "Salt Lake County, or is the gap ...": a word after a comma is a postal code only where it ends the clause
        clause_end = bool(re.match(r"\s*($|[,.;:?!)])", t[ma.end():]))
        # ("... than neighboring Linn County's, or is that just noise?": "or" that opens a clause is no Oregon, even
        # where Oregon has a Linn County)
        opens = ma.group(1) in WORDLIKE_ABBRS and not raw.isupper() and bool(re.match(
            r"\s+(is|are|was|were|do|does|did|just|not|the|a|an|that|this|it|its|should|would|could|maybe|perhaps|"
            r"something|else|even|rather|am|i|we|you|they|how|what|which|why|whether|so|if)\b", t[ma.end():]))
        if not opens and (raw.isupper() or ma.group(1) not in WORDLIKE_ABBRS or ("," in sep and clause_end)
                          or "(" in sep or st.fips in in_hits):
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


def qualified(p: Parse, cat: Catalog, end: int, hits: Sequence[County] = ()) -> bool:
    """Whether a state name or postal code follows position ``end`` ("Texas County, MO")."""
    return state_after(p, cat, end, hits) is not None


#: what may sit between the items of a list of places
_LIST_JOIN = re.compile(r"\s*(,\s*(and\s+|or\s+)?|\s(and|or|plus|vs|versus|v|with|to|&|/)\s|\s*/\s*|\s*;\s*)\s*$")
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
            cue = _COUNTY_CUE.search(t[: span[0]])
            # "Dallas, the one in Texas": a city of that name there, as large as a tenth of the county, makes the
            # name ambiguous unless a "counties" word or other counties around it say which
            city = next((x for x in cat.localities_named(name, cands[0].state)
                         if cat.same_area_county(x) is not cands[0] and 10 * x.population > cands[0].population),
                        None)
            others = bool(found) or any(pl.level == "county" for pl in p.places)
            if city is not None and not cue and not others:
                continue
            if _listed(t, span, p, found) or cue:
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
    nxt = re.match(r"(\s*(,\s*(and\s+|or\s+)?|\s(and|or|plus|vs|versus|&)\s)\s*)([a-z]+(?: [a-z]+)?)", t[span[1]:])
    prev = re.search(r"([a-z]+)(\s*(,\s*(and\s+|or\s+)?|\s(and|or|plus|vs|versus|&)\s)\s*)$", before)
    return bool(nxt or prev) and bool(_COUNTY_CUE.search(before) or re.search(
        r"\b(counties|county|parishes)\b", t[span[1]:span[1] + 60]) or _qualified_list_end(p, span))


def _qualified_list_end(p: Parse, span: tuple[int, int]) -> bool:
    """A state closes the list the name belongs to ("wayne vs oakland vs macomb MI", "kings and queens ny")."""
    sep = r"(\s*,\s*(and\s+|or\s+)?|\s(and|or|plus|vs|versus|&)\s)\s*"
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
    measures = [m.span for m in p.strong()]
    for i, (word, span) in enumerate(tokens):
        if overlaps(span, p.blocked):
            continue
        low = word.lower()
        prev = tokens[i - 1][0].lower() if i > 0 else ""
        # a place of several words, in any case ("New Orleans", "Miami Beach:", "fort worth", "urban Honolulu CDP")
        if cat.localities and low in cat.locality_first_words and _multiword_place(p, cat, tokens, i, measures):
            continue
        if low in KNOWN_WORDS or low in COMMON_ENGLISH or is_measure_word(low, cat):
            continue
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
        lead = i == 0 and word[0].isupper() and nxt in JOINERS and bool(counties_named(low, cat)
                                                                        or cat.localities_named(low))
        # "Austin city vs Travis County": a first word that is a place's name, with the kind of place after it
        lead = lead or (i == 0 and (word[0].isupper() or nxt == "proper") and nxt in ("city", "town", "village",
                                                                               "cdp", "proper")
                        and bool(cat.localities_named(low)))
        capital = lead or (word[0].isupper() and i > 0 and not word.isupper()
                           and (not title_case or prev in STOP_BEFORE_PLACE))
        before_state = nxt_span is not None and any(
            pl.level == "state" and pl.span[0] == nxt_span[0] for pl in p.places)
        if before_state and i == 0 and word[0].isupper() and counties_named(low, cat):
            capital = True  # "Juneau, Alaska: ...": the first word names a place as much as any other
        # "maricopa az": a lowercase name right before a state that is a county name there is a place too
        named_there = before_state and nxt_span is not None and bool(counties_named(low, cat, next(
            pl.state for pl in p.places if pl.span[0] == nxt_span[0])))
        if before_state and nxt_span is not None and low in REGIONAL_WORDS:
            st = next(pl.state for pl in p.places if pl.span[0] == nxt_span[0])
            if any(pl.state.fips == st.fips and (pl.level != "state" or pl.span[0] != nxt_span[0])
                   for pl in p.places):
                # "in central Pennsylvania, ... Centre County, PA", "works at a food bank in eastern Kentucky and
                # wants to know which three counties in Kentucky ...": scene-setting around what is asked
                p.places = [pl for pl in p.places if pl.span[0] != nxt_span[0]]
                p.blocked.append((span[0], nxt_span[1]))
                p.notes.append(f"“{p.tc[span[0]:nxt_span[1]]}” read as the setting of the question, not a place "
                               "of its own.")
                continue
            raise Decline(f"“{word} {st.name}” is a part of the state the data has no rows for (no urban/rural or "
                          f"regional split); ask about {st.name} as a whole or about its counties.",
                          state_suggestions(st))
        if before_state and nxt_span is not None and (capital or prev in STOP_BEFORE_PLACE or named_there):
            st = next(pl.state for pl in p.places if pl.span[0] == nxt_span[0])
            same = counties_named(low, cat, st)
            one = _consolidated(same)
            if one is not None:  # the state after it only qualifies it ("Juneau, Alaska")
                p.places = [pl for pl in p.places if pl.span[0] != nxt_span[0]]
                _read_consolidated(p, one, span, word)
                continue
            there = cat.localities_named(low, st)
            if cat.localities and len(same) == 1 and (not there or same[0].population >= 10 * there[0].population):
                # "Loudoun, VA": no Census place of that name in the state, so the name is the county's;
                # "Sonoma, California": the county has ten times the people of the city of that name
                c = same[0]
                p.places = [pl for pl in p.places if pl.span[0] != nxt_span[0]]
                span2 = (span[0], nxt_span[1])
                p.blocked.append(span2)
                p.places.append(Place("county", c.state, c, span2, "bare", word))
                p.notes.append(f"“{word}” read as {c.label}: no city, town or CDP of that name in {st.name}."
                               if not there else
                               f"“{word}” read as {c.label} ({int(c.population):,} people), not the much smaller "
                               f"{there[0].label} ({int(there[0].population):,}); ask for “the city of {word}” "
                               "for the city.")
                continue
            if cat.localities and not same:
                guess = misspelled_place(low, cat, st)
                if guess is not None:
                    # "tuscon az", "pheonix az": the one place of that state whose name is a letter or two off,
                    # read as a guess the assumptions state
                    p.places = [pl for pl in p.places if pl.span[0] != nxt_span[0]]
                    add_place(p, cat, guess, (span[0], nxt_span[1]), "fuzzy",
                              f"“{word}” read as {guess.label}, the closest name of a Census place in {st.name}.")
                    continue
                raise unknown_place(word, cat, st)
            raise Decline(
                f"“{word}” looks like a city or town; the data has only states and counties "
                "(county-equivalents), not cities, towns or ZIP codes"
                + (f" — did you mean {join_words([c.label for c in same[:3]])}?" if same else "."),
                county_suggestions(p, same[:2]) + state_suggestions(st))
        # "Which is bigger, Metairie or New Orleans?": a capitalised name with a list word after it
        joined = prev in JOINERS or lead or (capital and nxt in ("or", "vs", "versus", "and")
                                             and bool(cat.localities_named(low)))
        # "housing units in seattle, boston and denver": a lowercase name after "in", or next in a list of places
        listed = i > 0 and any(pl.level == "place" and pl.span[1] == tokens[i - 1][1][1] for pl in p.places) and \
            bool(re.fullmatch(r"\s*(,|,?\s*and|&|vs\.?|versus|or)\s*", p.t[tokens[i - 1][1][1]:span[0]]))
        if i > 1 and prev in JOINERS and any(pl.level == "place" and pl.span[1] == tokens[i - 2][1][1]
                                             for pl in p.places):
            listed = True
        # "pop fargo vs bismarck vs grand forks": the first of a list of lowercase names of places
        # (not a restatement after a place — "jefferson county ky (louisville) vs ..." — nor a clause: "the gap,
        # and tell me")
        after_place = i > 0 and any(pl.span[0] <= tokens[i - 1][1][0] < pl.span[1] for pl in p.places)
        ahead = tokens[i + 2][0].lower() if i + 2 < len(tokens) else ""
        heads = nxt in ("vs", "versus") and not after_place and is_place_word(ahead) and bool(
            cat.localities_named(low)) and (ahead in cat.locality_first_words or bool(cat.localities_named(ahead)))
        lower_place = (not capital and (prev in STOP_BEFORE_PLACE or listed or heads) and is_place_word(low)
                       and bool(cat.localities_named(low) or low in cat.locality_first_words))
        if not cat.localities_named(low) and (prev in STOP_BEFORE_PLACE or capital) and is_place_word(low) and \
                not counties_named(low, cat) and _misspelt_place(p, cat, word, span):
            continue  # "whats the populaton of albequerque"
        if (capital and (prev in STOP_BEFORE_PLACE or joined)) or lower_place:
            # a Census place of that name, anywhere: the one there is, or ask which of several
            if _locality(p, cat, tokens, i):
                continue
            # a name of several words ("St Louis", "Santa Fe"): the longest that names counties
            name, same = word, counties_named(low, cat)
            if not same and low.endswith("s") and len(low) > 4 and counties_named(low[:-1], cat) and \
                    not cat.localities_named(low):
                # "... is higher than Mecklenburg's": a possessive (its apostrophe is gone)
                word, low = word[:-1], low[:-1]
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
            if cat.localities and not same:
                raise unknown_place(word, cat)
            if cat.localities_named(word.lower()):  # a county's name that a place also has ("Fairfax", "Dallas")
                raise ambiguous(word.lower(), cat.localities_named(word.lower()), counties=same, p=p, cat=cat)
            sugg = county_suggestions(p, same[:3]) + state_suggestions(same[0].state if same else None)
            sugg = sugg[:3]
            raise Decline(
                f"“{word}” is not a state or county in the data (it may be a city, region or other place; only "
                "states and counties are covered)"
                + (f" — did you mean {join_words([c.label for c in same[:3]])}?" if same else "."), sugg)


def _misspelt_place(p: Parse, cat: Catalog, word: str, span: tuple[int, int]) -> bool:
    """A one-word place name misspelt ("albequerque", "cincinatti" without a state): read as the one place whose
    name is that close (90% of letters in common), when only one place is that close and it is the only place
    of its name, saying so; otherwise False (the unknown-name rules decline it, naming the closest)."""
    if len(word) < 7:
        return False
    close = difflib.get_close_matches(word.lower(), cat.single_word_bases, n=2, cutoff=0.9)
    if len(close) != 1 or len(cat.localities_named(close[0])) != 1:
        return False
    loc = cat.localities_named(close[0])[0]
    if counties_named(close[0], cat):
        return False
    p.blocked.append(span)
    p.places.append(Place("place", loc.state, None, span, "fuzzy", word, locality=loc))
    p.notes.append(f"“{word}” read as {loc.label} (the closest place name; the only place called that).")
    return True


def _multiword_place(p: Parse, cat: Catalog, tokens: list[tuple[str, tuple[int, int]]], i: int,
                     measures: list[tuple[int, int]]) -> bool:
    """A place whose name has several words, starting at token ``i`` — when something says it is a name: a
    capital letter in it, "in"/"of"/... before it, or the kind of place after it ("urban Honolulu CDP")."""
    for k in (4, 3, 2):
        group = tokens[i:i + k]
        if len(group) < k or any(overlaps(sp, p.blocked) or overlaps(sp, measures) for _, sp in group):
            continue
        name = " ".join(w for w, _ in group).lower()
        if not cat.localities_named(name):
            continue
        prev = tokens[i - 1][0].lower() if i > 0 else ""
        after = re.match(r"\s*(city|cdp|town|village|proper)\b", p.t[group[-1][1][1]:])
        if any(w[0].isupper() for w, _ in group[1:]) or prev in STOP_BEFORE_PLACE or prev in JOINERS or after \
                or i == 0:
            return _locality(p, cat, tokens, i, kmin=k)
    return False


def _locality(p: Parse, cat: Catalog, tokens: list[tuple[str, tuple[int, int]]], i: int, kmin: int = 1) -> bool:
    """The Census place named at token ``i`` (the longest name of up to four words that is one, read by
    :func:`~.localities.pick_bare`), or False: no place has the name, or a county of that name is meant."""
    for k in (4, 3, 2, 1):
        if k < kmin:
            break
        group = tokens[i:i + k]
        if len(group) < k or any(overlaps(sp, p.blocked) for _, sp in group):
            continue
        name = " ".join(w for w, _ in group)
        if not cat.localities_named(name.lower()):
            continue
        # "Gotham City, New Jersey": the state written after the name has no place of that name
        gap = re.match(r"(\s+(?:city|town|village))?\s*,?\s*", p.t[group[-1][1][1]:])
        at = group[-1][1][1] + (gap.end() if gap else 0)
        st = next((pl.state for pl in p.places if pl.level == "state" and pl.span[0] == at), None)
        if st is not None and not cat.localities_named(name.lower(), st):
            raise unknown_place(p.tc[group[0][1][0]:at].strip(" ,"), cat, st)
        return bare_locality(p, cat, name, (group[0][1][0], group[-1][1][1]))
    return False

