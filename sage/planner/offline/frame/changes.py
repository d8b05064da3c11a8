"""The frame of a change question: "How has median household income changed in Travis County since 2014-2018?",
"Which 5 Texas counties added the most people?", "How many Illinois counties lost population?", "Which New
Hampshire counties had a significant increase in real median income?", "By how much did the US population grow?".

:mod:`.periods` has already read the two periods; this module decides which places (named ones, a set, the US
added up), how a set is ranked (by the change, or by the percent change for "fastest"), which places it keeps
(losses, gains, significant ones), and whether only their number is asked — and declines what cannot be compared:
Census places (one period only), a median added up into the US, a place without a value in one of the periods
(Connecticut's counties, replaced by planning regions in 2022)."""

from __future__ import annotations

import re

from ....census import cpi
from ....census.semantic import Measure
from ....errors import SageError
from ..catalog import Catalog
from ..declines import Decline, topic_suggestions
from ..read.parsed import Parse
from ..read.ranking import read_rank
from ..read.scope import exclusions
from ..read.vocabulary import GROUP_FAMILIES, SUPERLATIVE, mask, nice_name
from .frame import Change, GeoSet, Op, Query, Rank

_PERCENT = re.compile(r"\b(percent\w*|%|pct|rate|fastest|slowest|relative|proportional\w*)\b")
_LOSS = re.compile(r"\b(lost|los(e|es|ing)|loss(es)?|declin\w*|decreas\w*|fell|fall\w*|drop\w*|shr[aiu]nk\w*|"
                   r"went down|gone down|go down|smaller)\b")
_GAIN = re.compile(r"\b(grew|grow\w*|gain\w*|add\w*|increas\w*|ris(e|en|es|ing)|rose|went up|gone up|go up)\b")
_SIGNIFICANT = re.compile(r"\b(significant\w*|statistically|real(ly)? (increase|decrease|rise|fall|gain|loss)|"
                          r"beyond the margin)\b")
_COUNT = re.compile(r"\b(how many|number of|count of|count the)\s+(?:\w+\s+){0,2}?(states|counties|countys|parishes|"
                    r"places|cities)\b|\bhow many (lost|gained|grew|shrank|declined|fell|rose)\b")


def change_query(p: Parse, cat: Catalog, measures: list[Measure], masked: str, notes: list[str],
                 set_query: bool) -> Query:
    """The ``CHANGE`` frame of ``p`` (``p.change`` is set and ``p.periods`` holds two periods)."""
    early, late = p.periods
    if len(measures) != 1:
        raise Decline("a change between two periods is shown for one measure at a time; ask for each.",
                      [f"How did the {nice_name(m)} change from {early} to {late}?" for m in measures[:3]])
    m = _counted(p, cat, measures[0], masked)
    if cat.over_periods(m) is not m:
        m = cat.over_periods(m)
        notes.append(f"{m.label}: over total population (B01003_001E) in both periods — the same count as its "
                     "table's total, which is loaded for the latest period only.")
    notes[:] = [n for n in notes if not n.startswith("No measure named")]
    if m.name == "population" and not p.strong():
        notes.append("No measure named: the change in population (what “grew” or “lost” means here).")
    places = [pl for pl in p.places if pl.how != "ambiguous"]
    if any(pl.how == "ambiguous" for pl in p.places):
        bad = next(pl for pl in p.places if pl.how == "ambiguous")
        raise Decline(f"“{bad.text}” is the name of counties in several states; name the state.",
                      [f"How did the {nice_name(m)} of {c.label} change from {early} to {late}?"
                       for c in bad.candidates[:3]])
    cities = [pl for pl in places if pl.level == "place"]
    if p.level == "place" and not cities:
        raise Decline(f"Census places (cities, towns, CDPs) are loaded for {m.vintage} only, so no change can be shown "
                      "for them; changes are shown for states and counties.", topic_suggestions(p, cat),
                      kind="needs_fetch", fetch={"tables": sorted({c.split("_")[0] for c in m.codes}),
                                                 "vintage": int(early[-4:]), "geographies": ["place"]})
    if cities:
        raise Decline(f"Census places such as {cities[0].label} are loaded for {m.vintage} only, so no change can "
                      f"be shown for them. Load the earlier period with `python -m sage census fetch --vintage "
                      f"{early[-4:]} --tables {','.join(sorted({c.split('_')[0] for c in m.codes}))} --geographies "
                      f"place --states {cities[0].state.abbr}` (needs a Census API key), then ask again.",
                      [f"What is the population of {cities[0].label}?"] + topic_suggestions(p, cat)[:2],
                      kind="needs_fetch",
                      fetch={"tables": sorted({c.split("_")[0] for c in m.codes}), "vintage": int(early[-4:]),
                             "geographies": ["place"], "states": [cities[0].state.abbr]})
    if m.unit == "dollars":
        notes.append(_dollars_note(p, early, late, cat))
    ch = Change(dollars=p.dollars if m.unit == "dollars" else "")
    named = [pl for pl in places if pl.level in ("state", "county")]
    if named and not set_query:
        return _named_change(p, cat, m, named, notes, ch)
    return _set_change(p, cat, m, masked, notes, ch, named)


#: "the biggest percentage increase in their Hispanic population": the percent change of the count
_PCT_OF_COUNT = re.compile(r"\b(percent(age)?|%)\s+(increase|change|growth|decrease|gain|rise|jump|drop|decline)\b|"
                           r"\bby what percent(age)?\b|\bgrew by what\b|\bhow many more\b")


def _counted(p: Parse, cat: Catalog, m: Measure, masked: str) -> Measure:
    """A group's share read where the question asks how the group's number changed: the group's count."""
    if not m.is_rate or m.family not in GROUP_FAMILIES or not _PCT_OF_COUNT.search(masked) or \
            re.search(r"\b(share|proportion|percentage points?)\b", masked):
        return m
    count = next((x for x in cat.measures if x.family == m.family and x.additive), None)
    return count or m


def _named_change(p: Parse, cat: Catalog, m: Measure, places: list, notes: list[str], ch: Change) -> Query:
    early, late = p.periods
    for pl in places:
        for period in (early, late):
            if not cat.has_in(m, pl.geo_id, period):
                raise Decline(_missing(m, pl, period), topic_suggestions(p, cat))
    levels = {pl.level for pl in places}
    if len(levels) > 1:
        raise Decline("a change is shown for places of one level at a time (states, or counties).",
                      topic_suggestions(p, cat))
    notes.append(_reading(m, early, late))
    return Query(Op.CHANGE, (m,), GeoSet(level=levels.pop(), places=tuple(places)), periods=(early, late),
                 change=ch, notes=tuple(notes + p.notes))


def _set_change(p: Parse, cat: Catalog, m: Measure, masked: str, notes: list[str], ch: Change,
                states: list) -> Query:
    early, late = p.periods
    level = p.level if p.level in ("state", "county") else ("county" if any(pl.level == "state" for pl in states)
                                                             else "state")
    within = tuple(pl.state for pl in states if pl.level == "state") if level == "county" else ()
    rest = mask(masked, [])
    direction, n, n_given = read_rank(p, rest, [m])
    count = bool(_COUNT.search(rest))
    significant = bool(_SIGNIFICANT.search(rest))
    loss, gain = bool(_LOSS.search(rest)), bool(_GAIN.search(rest))
    # the US: the states added up (counts and rates of counts only)
    if not p.level and p.national and not SUPERLATIVE.search(rest) and not count:
        if not m.aggregable:
            raise Decline(f"{m.label} is a median or an index: it cannot be added up into a US figure, and there "
                          "are no nation rows.", topic_suggestions(p, cat))
        geo = GeoSet(level="state", exclude=exclusions(p, {"PR"}))
        notes.append("“US” = the sum over the 50 states + DC in each period (the state rows; Puerto Rico "
                     "excluded).")
        notes.append(_reading(m, early, late))
        return Query(Op.CHANGE, (m,), geo, sums=(m,), periods=(early, late), change=ch, notes=tuple(notes + p.notes))
    if level == "state" and not m.has_rows("state"):
        raise Decline(f"{m.label} has county rows only here; ask about counties (\"Which counties of a state "
                      f"...\").", topic_suggestions(p, cat))
    keep = ""
    if significant:
        keep = "significant_loss" if loss and not gain else ("significant_gain" if gain else "significant")
    elif (count or not direction) and loss and not gain:
        keep = "loss"
    elif (count or not direction) and gain and not loss and count:
        keep = "gain"
    by = "pct_change" if _PERCENT.search(rest) else "change"
    rank = None
    if direction and not count:
        descending = direction == "DESC"
        if loss and not gain and re.search(r"\b(most|biggest|largest|greatest|fastest)\b", rest):
            descending = False  # "lost the most people": the most negative change first
        rank = Rank(by=m, descending=descending, n=n, n_given=n_given)
    ch = Change(by=by, keep=keep, count=count, dollars=ch.dollars)
    geo = GeoSet(level=level, within=within, exclude=exclusions(p, set()) if not within else frozenset())
    notes.append(_reading(m, early, late))
    if level == "county" and (not within or any(s.abbr == "CT" for s in within)):
        notes.append("Connecticut is left out: its eight counties were replaced by nine planning regions in 2022, so "
                     "no county has a value in both periods.")
    if keep:
        notes.append({"loss": "Kept: the places whose value fell.", "gain": "Kept: the places whose value rose.",
                      "significant_gain": "Kept: the places whose rise is statistically significant at 90% "
                                          "(|Z| > 1.645, Z = change / (its MOE / 1.645)).",
                      "significant_loss": "Kept: the places whose fall is statistically significant at 90% "
                                          "(|Z| > 1.645, Z = change / (its MOE / 1.645)).",
                      "significant": "Kept: the places whose change is statistically significant at 90%."}[keep])
    if rank is not None:
        what = "percent change" if by == "pct_change" else "change"
        notes.append(f"Ranked by the {what}, {'largest' if rank.descending else 'smallest'} first"
                     + ("" if rank.n_given else f"; no number given, so showing {rank.n}") + ".")
    return Query(Op.CHANGE, (m,), geo, rank=rank, periods=(early, late), change=ch, notes=tuple(notes + p.notes))


def _reading(m: Measure, early: str, late: str) -> str:
    return (f"Change = {nice_name(m)} in {late} minus {early} (two ACS 5-year periods that do not overlap); the "
            "percent change is over the earlier value. Margins of error by the Census Bureau's formulas "
            "(difference: √(MOE₁² + MOE₂²)); a change is significant at 90% when |change| > its MOE.")


def _dollars_note(p: Parse, early: str, late: str, cat: Catalog) -> str:
    if p.dollars == "nominal":
        return (f"Dollars as published, not adjusted for inflation (as asked): {early} values in {early[-4:]} "
                f"dollars, {late} values in {late[-4:]} dollars.")
    both = (" Both, as asked: nominal_change is the change in dollars as published (each period in its own "
            "dollars), change the real one." if p.dollars == "both" else "")
    a, b = int(early[-4:]), int(late[-4:])
    try:
        ia, ib = cpi.index(a, data_path=cat.data_path), cpi.index(b, data_path=cat.data_path)
        factor = f" = {ib:g} / {ia:g} = {ib / ia:.4f}"
    except SageError:  # the note only: the SQL reads public.cpi_u_rs itself (and fails clearly without it)
        factor = ""
    return (f"Dollars: the {early} values are put in {b} dollars with the CPI-U-RS ({b} / {a}{factor}), estimate "
            "and margin alike, so the change is a real change (say “nominal” for dollars as published)." + both)


def _missing(m: Measure, pl, period: str) -> str:
    if pl.state.abbr == "CT" and pl.level == "county":
        return (f"{pl.label} has no {nice_name(m)} for {period}: Connecticut replaced its eight counties with nine "
                "planning regions in 2022, so its counties and regions cannot be compared across these periods; "
                "ask about Connecticut as a whole.")
    return (f"{pl.label} has no {nice_name(m)} value for {period} in the data (the Census Bureau published none, or "
            "it was suppressed), so no change can be computed for it.")


__all__ = ["change_query"]
