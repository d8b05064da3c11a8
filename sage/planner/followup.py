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

from ..census.semantic import Measure
from ..text import normalize
from ..types import Chunk, DisplayHint
from .catalog import Catalog, counties_named
from .declines import Decline
from .frame import Condition, GeoSet, Op, Query, Rank
from .measures import find_measures
from .parsed import Parse, Place
from .places import find_places
from .ranking import read_rank
from .scope import read_scope
from .thresholds import find_thresholds
from .vocabulary import FIFTY, LEVEL_PLURAL, mask

#: how a follow-up starts ("and ...?", "what about ...", "same for ...", "now ...")
_START = re.compile(
    r"^\s*(and|but|also|plus|what about|how about|what of|same|the same|now|then|instead|only|just|ok|okay|"
    r"so|compare (that|it|this|them|those)|vs|versus|add|show (it|that|this|them|those)|map (it|that|this|them)|"
    r"(as|on|in) a|which of (those|these|them)|of (those|these|them)|among (those|these|them)|"
    r"what if|make it|switch to|change (it|that) to|do the same|do it for|for)\b")
#: words that point back at the previous answer
_BACK = re.compile(r"\b(that|those|these|them|it|same|instead|too|as well|previous|last one|above)\b")
_AMONG = re.compile(r"\b(which|what|who)\s+(one\s+)?of\s+(those|these|them|the above)\b|\b(of|among|from)\s+"
                    r"(those|these|them|the above|that list)\b")
_ADD = re.compile(r"\b(compare (that|it|this|them|those) (to|with|against)|compared? (to|with|against)|versus|vs|"
                  r"add|plus|and also|along with|next to|alongside|side by side|stack up)\b|\b(too|as well)\s*\??$")
_DISPLAY: list[tuple[re.Pattern[str], DisplayHint]] = [
    (re.compile(r"\b(map|choropleth)\b"), "map"),
    (re.compile(r"\b(bar chart|bar graph|bars|chart|graph)\b"), "bar"),
    (re.compile(r"\b(table|list it|as a list|in a list|raw numbers|the numbers)\b"), "table"),
]
_NATIONWIDE = re.compile(r"\b(whole country|entire country|nationwide|national|nationally|all of the us|across the us|"
                         r"the whole us|all states|every state|the us|us wide|countrywide|all counties)\b")
_ONLY = re.compile(r"\b(only|just|limit (it )?to|restrict (it )?to|keep (it )?to|within|in)\b")


def is_followup(question: str) -> bool:
    """Whether ``question`` starts or reads like a follow-up (it may still turn out to be a new question)."""
    t = normalize(question, lower=True)
    return bool(_START.search(t) or _AMONG.search(t) or len(t.split()) <= 4 or _BACK.search(t))


def read_followup(question: str, prior: Query, cat: Catalog, chunks: Sequence[Chunk] = ()) -> Query | None:
    """The previous frame edited as ``question`` asks, or None when ``question`` stands on its own.

    Raises :class:`Decline` for a follow-up that cannot be mapped onto ``prior``."""
    tc = normalize(question)
    p = Parse(question=question, tc=tc, t=tc.lower())
    read_scope(p, cat)
    try:
        find_places(p, cat)
    except Decline:
        if not _START.search(p.t):
            raise
    p.places = [pl for pl in p.places if not any(a <= pl.span[0] < b for a, b in p.scope_spans)]
    find_measures(p, cat, chunks)
    try:
        find_thresholds(p, cat)
    except Decline:
        p.thresholds = []
    measures = [m.measure for m in p.strong()]
    starts = bool(_START.search(p.t))
    among = _AMONG.search(p.t)
    level_word = LEVEL_PLURAL.search(mask(p.t, p.blocked))
    standalone = measures and (p.places or level_word) and not starts and not among and not _BACK.search(p.t)
    if standalone:
        return None

    q = prior
    changed: list[str] = []
    masked = mask(p.t, p.blocked)

    # ---- "which of those has the lowest unemployment rate?": a ranking among the previous answer's places;
    # "of those, which have a poverty rate above 35%?": the ones that also meet a condition
    if among:
        if prior.op not in (Op.VALUE, Op.RANK, Op.LIST) or not (prior.geo.places or prior.geo.is_set):
            raise _cannot(question, prior, "the previous answer has no list of places to choose among")
        level = prior.geo.level if prior.geo.level != "mixed" else "county"
        geo = GeoSet(level=level, among=prior)
        note = (f"Among the places of the previous answer ({_short(prior)}).",)
        conditions = tuple(Condition(th.measure, th.op, th.value, th.value2, th.ref, None, th.text, th.unit)
                           for th in p.thresholds if th.measure is not None)
        chosen = tuple(dict.fromkeys([*measures, *(c.measure for c in conditions)])) or prior.measures
        masked_rank = mask(masked, [th.span for th in p.thresholds])
        direction, n, n_given = read_rank(p, masked_rank, list(chosen))
        if conditions and not direction:
            return Query(Op.LIST, chosen, geo, conditions=conditions, display=_display(p.t), notes=note)
        by = chosen[0]
        if direction is None:
            direction = "DESC"
        return Query(Op.RANK, chosen, geo, rank=Rank(by, direction == "DESC", n if n_given else 1, n_given),
                     conditions=conditions, display=_display(p.t), notes=note)

    # ---- the measure
    if measures:
        old = set(prior.measures)
        new = tuple(dict.fromkeys(measures))
        kept_conditions = tuple(c for c in prior.conditions)
        rank = prior.rank
        if rank is not None and rank.by in old:
            rank = replace(rank, by=new[0])
        q = q.edit(measures=new, rank=rank, conditions=kept_conditions,
                   sums=tuple(m for m in new if m.additive) if q.op is Op.TOTAL else q.sums)
        changed.append("measure")

    # ---- a set named by a level word: "now show the same for all Texas counties"
    places = _resolve_ambiguous(list(p.places), prior)
    if level_word and not among:
        level = "state" if level_word.group(1) == "states" else "county"
        states = tuple(pl.state for pl in places if pl.level == "state")
        same_set = prior.geo.is_set and prior.geo.level == level and prior.op in (Op.RANK, Op.LIST, Op.COUNT, Op.TOTAL)
        if same_set:  # "just the 50 states please": the same question over a narrower set
            if states and level == "county":
                q = q.edit(geo=replace(q.geo, within=states))
                places = [pl for pl in places if pl.level != "state"]
                changed.append("set")
        elif level == "county" or not states:
            q = q.edit(op=Op.LIST if q.op not in (Op.RANK,) else q.op, conditions=(), with_us=False, per_n=None,
                       geo=GeoSet(level=level, within=states if level == "county" else (),
                                  exclude=prior.geo.exclude if prior.geo.is_set else frozenset()),
                       rank=replace(q.rank, by=q.measures[0]) if q.rank else None)
            places = [pl for pl in places if pl.level != "state"]
            changed.append("set")

    # ---- "whole country", "nationwide": the set no longer kept to a state
    if _NATIONWIDE.search(masked) and q.geo.is_set and q.geo.within:
        q = q.edit(geo=replace(q.geo, within=()))
        changed.append("set")

    # ---- a bare name of a county in the conversation's state ("fairfax county?" then "arlington")
    if not places and not measures and not p.thresholds:
        places = _bare_counties(p, prior, cat)

    # ---- the places
    if places:
        q = _places(q, p, places, bool(_ADD.search(p.t)), changed)

    # ---- the set: DC / Puerto Rico in or out, the 50 states
    if p.include or p.exclude or FIFTY.search(p.t):
        ex = set(q.geo.exclude)
        if FIFTY.search(p.t):
            ex |= {"DC", "PR"}
        ex |= p.exclude
        ex -= p.include
        q = q.edit(geo=replace(q.geo, exclude=frozenset(ex)))
        changed.append("set")

    # ---- N and the direction
    if q.op in (Op.RANK, Op.LIST) and not among:
        direction, n, n_given = read_rank(p, masked, list(q.measures))
        bare_n = re.search(r"\b(make it|show|give me|change (it|that) to|just|only)\s+(the\s+)?(?P<n>\d{1,3})\b",
                           masked) or \
            re.fullmatch(r"\s*(?P<n>\d{1,3})\s*(instead|please)?\s*\??\s*", masked)
        if not n_given and bare_n:
            n, n_given = int(bare_n.group("n")), True
        if direction or n_given:
            base = q.rank or Rank(q.measures[0], True, 10)
            q = q.edit(op=Op.RANK, rank=replace(base, descending=(direction or ("DESC" if base.descending else "ASC"))
                                                == "DESC", n=n if n_given else base.n, n_given=n_given or base.n_given))
            changed.append("ranking")
    elif q.op is Op.VALUE and re.search(r"\b(top|bottom|highest|lowest)\b", masked) and not changed:
        raise _cannot(question, prior, "the previous answer is not a ranking")

    # ---- the display
    display = _display(p.t)
    if display:
        q = q.edit(display=display)
        changed.append("display")

    if not changed:
        raise _cannot(question, prior, "I could not tell what to change in it")
    return q.edit(notes=tuple(n for n in q.notes if not n.startswith("Among the places")))


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


def _places(q: Query, p: Parse, places: Sequence[Place], add: bool, changed: list[str]) -> Query:
    """Swap or add places: in a list of named places they replace (or join) them; a state given to a set of
    counties becomes the state the set keeps to ("only Texas", "what about Ohio?")."""
    geo = q.geo
    ambiguous = [pl for pl in places if pl.how == "ambiguous"]
    if ambiguous:
        pl = ambiguous[0]
        raise Decline(f"“{pl.text}” exists in several states; name the state.",
                      [f"and {c.label}?" for c in pl.candidates[:3]], kind="ambiguous")
    if geo.is_set and geo.among is None and q.op in (Op.RANK, Op.LIST, Op.COUNT, Op.TOTAL):
        states = [pl.state for pl in places if pl.level == "state"]
        if states and len(states) == len(places) and geo.level == "county":
            within = tuple(dict.fromkeys((*geo.within, *states))) if add else tuple(states)
            changed.append("places")
            return q.edit(geo=replace(geo, within=within, exclude=frozenset()))
        if states and len(states) == len(places) and geo.level == "state" and _ONLY.search(p.t):
            changed.append("places")
            return q.edit(op=Op.VALUE, rank=None, geo=GeoSet(level="state", places=tuple(places)))
        # "what about Ohio?" after a ranking of states: that state's value
        levels = {pl.level for pl in places}
        if add:
            # the previous answer's places and the new one, side by side
            changed.append("places")
            return q.edit(op=Op.VALUE, rank=None, conditions=(),
                          geo=GeoSet(level=levels.pop() if len(levels) == 1 else "mixed", places=tuple(places),
                                     among=q))
        changed.append("places")
        level = levels.pop() if len(levels) == 1 else "mixed"
        return q.edit(op=Op.VALUE, rank=None, conditions=(), geo=GeoSet(level=level, places=tuple(places)))
    merged = (*geo.places, *places) if add else tuple(places)
    uniq: dict[str, Place] = {}
    for pl in merged:
        uniq.setdefault(pl.geo_id, pl)
    levels = {pl.level for pl in uniq.values()}
    level = levels.pop() if len(levels) == 1 else "mixed"
    changed.append("places")
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
    from .explain import describe

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
