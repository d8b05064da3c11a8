"""Time in a question: which ACS 5-year periods it is about, and whether it asks how something changed.

The ACS 5-year estimates describe periods ("2019-2023"), not years; the Census Bureau names a period by its last
year ("the 2023 ACS 5-year").  So:

* a period written out ("2014-2018", "2014-18", "the 2018 5-year ACS") is that period;
* a single year that ends a loaded period of the measures asked ("in 2018") is that period, said so;
* any other single year ("in 2020", "since 2015", "last year") has no figure here — the answer says why and names
  the fetch that would load the period ending in that year (``census fetch --vintage 2020``), never a nearby one;
* a change ("since 2014-2018", "grew", "over the last five years") compares two periods that do not overlap
  (the Census Bureau's guidance: overlapping periods share years of sample, so their difference is not a change);
  overlapping ones are declined with that reason, and a measure loaded for one period only names the fetch that
  adds an earlier one.

What is read lands in :attr:`Parse.periods` (oldest first), :attr:`Parse.change` and :attr:`Parse.dollars`;
the words are blocked so that no other reader takes "2018" for a number or a threshold.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ....census.periods import newest_pair
from ....census.semantic import Measure
from ....text import normalize, overlaps
from ..catalog import Catalog
from ..declines import Decline, topic_suggestions
from .measures import implied_measure
from .parsed import Parse
from .vocabulary import join_words, mask, nice_name

#: a 5-year period written out: "2014-2018", "2014-18", "2014 to 2018", "2014–2018"
#: (a four-digit end year may be followed by a percent sign, "2014-2018 to 2019-2023 %?"; "2010-20 %" is no period)
_SPAN = re.compile(r"(?<![\d$,.])((?:19|20)\d\d)\s*(?:-|–|—|to|through|thru)\s*"
                   r"((?:19|20)\d\d(?!\d|,\d)|\d\d(?!\d|,\d|\s*%))")
#: a period named by its last year: "the 2018 ACS 5-year", "2018 5-year estimates", "2023 acs"
_END_NAMED = re.compile(r"(?<![\d$,.])((?:19|20)\d\d)\s+(?:acs\s*)?(?:5|five)\s*(?:-\s*)?year\b|"
                        r"(?<![\d$,.])((?:19|20)\d\d)\s+acs\b")
#: (a fiscal year names a budget, not the data's period: "RE: FY2026 budget narrative", "for fiscal year 2025")
_YEAR = re.compile(r"(?<![\d$,.])(?<!fy)(?<!fy )(?<!fiscal year )((?:19|20)\d\d)(?!\d|,\d|\s*(?:%|percent))")
#: years with no ACS 5-year: the decennial censuses, and what one-year figures would need
_CENSUS_YEAR = re.compile(r"\b((?:19|20)\d0)\s+(?:decennial\s+)?census\b|\bcensus\s+(?:of\s+)?((?:19|20)\d0)\b")
_SINGLE_YEAR = re.compile(r"\b(last|this|past|previous|prior)\s+year\b|\byear\s+(?:over|on|to)\s+year\b|"
                          r"\b(each|every)\s+year\b|\bannual(?:ly)?\b|\b(one|1)\s+year\s+ago\b|\ba\s+year\s+ago\b")
#: "over the last five years", "five years ago", "compared with five years earlier"
_FIVE_YEARS = re.compile(r"\b(?:over|in|during|for|across|within)\s+the\s+(?:last|past|previous|prior)\s+"
                         r"(?:five|5)\s+years\b|\b(?:five|5)\s+years\s+(?:ago|earlier|before|back|prior)\b|"
                         r"\b(?:last|past)\s+(?:five|5)\s+(?:years|yrs)\b")
_DECADE = re.compile(r"\b(?:over|in|during)\s+the\s+(?:last|past)\s+(?:decade|ten\s+years|10\s+years|"
                     r"(?:twenty|20|fifteen|15)\s+years)\b|\b(?:a\s+decade|ten\s+years|10\s+years)\s+ago\b")
#: words that ask how a value changed
CHANGE_WORDS = re.compile(
    r"\b(chang(?:e|ed|es|ing)|grew(?!\s+up)|grow(?:n|s|ing|th)?(?!\s+up)|gain(?:ed|s)?|lost|los(?:e|es|ing)|loss(?:es)?|"
    r"(?:(?<=did )|(?<=does )|(?<=do ))add\b|add(?:ed|s|ing)(?!\s+(?:up|together|them))|"
    r"increas(?:e|ed|es|ing)|decreas(?:e|ed|es|ing)|"
    r"declin(?:e|ed|es|ing)|ris(?:e|en|es|ing)|rose|fell|fall(?:en|ing|s)?|drop(?:ped|s)?|went\s+(?:up|down)|"
    r"gone\s+(?:up|down)|go\s+(?:up|down)|up\s+or\s+down|shr[aiu]nk(?:ing)?|trend(?:s|ing)?|over\s+time)\b")
#: dollars as asked: the later period's dollars (the default for a change) or the dollars of each period
_NOMINAL = re.compile(r"\bnominal\b|\bnot\s+(?:adjust\w*|correct\w*)\s+for\s+inflation\b|\bunadjusted\b|"
                      r"\bwithout\s+(?:adjusting\s+for\s+)?inflation(?:[\s-]+adjust\w*)?\b|\bcurrent\s+dollars\b|\bbefore\s+inflation\b|"
                      r"\b(?:plain|raw|face[\s-]value)\s+dollars\b|\bdollars\s+as\s+published\b|"
                      r"\b(?:setting|leaving|putting)\s+inflation\s+aside\b|\binflation\s+aside\b|"
                      r"\bignoring\s+inflation\b|"
                      # "(no inflation adjustment)", "without an inflation adjustment", "not inflation-adjusted"
                      r"\b(?:no|without(?:\s+an?)?|not)\s+(?:inflation[\s-]+adjust\w*|adjust\w*\s+for\s+inflation)\b|"
                      r"\bunadjusted\s+for\s+inflation\b")
_REAL = re.compile(r"\b(?:inflation[\s-]*adjusted(?:\s+terms)?|adjust\w*\s+for\s+inflation|after\s+(?:adjusting\s+for"
                   r"\s+)?inflation|real|constant\s+dollars|todays?\s+dollars|in\s+20\d\d\s+dollars|"
                   r"in\s+real\s+terms|(?:kept|keep|keeping|kept\s+pace|keeps)\s+(?:up\s+)?(?:pace\s+)?with\s+"
                   r"inflation|(?:outpac\w*|beat|beaten|lagg?\w*|trail\w*)\s+inflation|net\s+of\s+inflation|"
                   # "once inflation is taken into account", "taking inflation into account", "accounting for inflation"
                   r"(?:once|after|when|with|if)\s+inflation\s+(?:is|has\s+been|was)\s+(?:taken\s+into\s+account|"
                   r"accounted\s+for|factored\s+in|considered|removed|adjusted\s+for)|"
                   r"(?:taking|take|taken|factoring|factor)\s+inflation\s+into\s+(?:account|consideration)|"
                   r"(?:account|correct|control|adjust)\w*\s+for\s+inflation|"
                   r"(?:factor|figur)\w*\s+(?:in\s+)?inflation(?:\s+in)?)\b")


def courtesy_words(t: str) -> list[tuple[int, int]]:
    """The spans of "thank you in advance" and the like: masked before places are read ("Advance" is a town in
    Missouri, North Carolina, Indiana and Michigan)."""
    return [mt.span() for mt in _COURTESY.finditer(t)]


_COURTESY = re.compile(r"\b(?:thanks?(?: you)?(?: so much| very much)?\s+)?in\s+advance\b")


def nominal_words(t: str) -> list[tuple[int, int]]:
    """The spans of "in plain dollars", "current dollars", "nominal": masked before places are read ("Plain" is a
    village in Wisconsin).  The real-dollar words are not: "Real" is a county in Texas."""
    return [mt.span() for mt in _NOMINAL.finditer(t)]


def dollar_words(t: str) -> list[tuple[int, int]]:
    """The spans of words about inflation adjustment ("after inflation", "in today's dollars", "nominal"): how
    a change in dollars is shown, not a topic of their own (the gap "inflation" is the inflation rate)."""
    return [mt.span() for rx in (_NOMINAL, _REAL) for mt in rx.finditer(t)]


def read_periods(p: Parse, cat: Catalog, context: str = "") -> None:
    """Read the periods and the change the question asks for (see the module docstring); raise :class:`Decline`
    for what the data cannot answer.  ``context`` is the scene-setting text before a chatty question ("Adjusted
    for inflation, did X go up between 2014-2018 and 2019-2023? By how much?"): read when the question itself
    says nothing about time."""
    measures = [m.measure for m in p.strong()] or [m.measure for m in p.mentions]
    if not measures:  # "How much has Austin grown since 2014-2018?": population, as the frame builder reads it
        implied = implied_measure(mask(p.t, p.blocked), cat)
        measures = [implied] if implied is not None else []
    # "Did X go up between 2014-2018 and 2019-2023? By how much?", "... since 2010 ... grown since then?": the
    # periods of the scene-setting text, when the question itself names none or points back to them
    back = re.search(r"\b(?:since|from|until|after)\s+then\b|\bback\s+then\b|\bat\s+(?:that|the)\s+time\b", p.t)
    # ("Per capita income in Mingo County: 2014-2018 vs 2019-2023, in plain dollars. How much did it go up?": a
    # scene that states the figures' periods and dollars, nobody's story, lends them to an ask that names none)
    lends = not (_SPAN.search(p.t) or _YEAR.search(p.t) or _FIVE_YEARS.search(p.t)) and \
        not _FIRST_PERSON.search(normalize(context, lower=True))
    if context and (back or lends or not _says_time(p.t)):
        tc = normalize(context)
        lent = Parse(question=context, tc=tc, t=tc.lower() + " " + p.t, mentions=p.mentions, places=p.places)
        if _SPAN.search(tc.lower()) or _YEAR.search(tc.lower()) or _FIVE_YEARS.search(tc.lower()):
            read_periods(lent, cat)
            p.periods, p.change, p.dollars = lent.periods, lent.change, lent.dollars
            p.notes.extend(n for n in lent.notes if n not in p.notes)
            return
    t = mask(p.t, p.blocked)
    years_said: list[tuple[int, int, tuple[int, int]]] = []  # (start, end) of periods written out, with spans
    for mt in _SPAN.finditer(t):
        a, b = int(mt.group(1)), mt.group(2)
        end = int(b) if len(b) == 4 else int(mt.group(1)[:2] + b)
        if end <= a or end - a > 10:
            continue  # "2019-20" school years and the like are not ACS periods
        years_said.append((a, end, mt.span()))
    for mt in _END_NAMED.finditer(t):
        if not any(overlaps(mt.span(), [s]) for *_, s in years_said):
            end = int(mt.group(1) or mt.group(2))
            years_said.append((end - 4, end, mt.span()))
    census = _CENSUS_YEAR.search(t)
    if census:
        year = census.group(1) or census.group(2)
        raise Decline(f"“{p.tc[census.start():census.end()]}”: the data holds American Community Survey 5-year "
                      f"estimates, not the {year} decennial census; the earliest period loaded is "
                      f"{_earliest(measures, cat)}.", _suggest(p, cat, measures))
    single = _SINGLE_YEAR.search(t)
    if single:
        raise Decline(f"“{p.tc[single.start():single.end()]}”: the data holds ACS 5-year estimates — averages over "
                      "five years — so there is no figure for one year or a change from one year to the next (that "
                      "needs the 1-year ACS or the annual population estimates, which are not loaded).",
                      _suggest(p, cat, measures))
    spans = [s for *_, s in years_said]
    singles = [mt for mt in _YEAR.finditer(t) if not overlaps(mt.span(), spans)]
    change = bool(CHANGE_WORDS.search(mask(t, spans + [m.span() for m in singles]))) or bool(
        re.search(r"\b(since|from|compar\w*\s+(?:with|to|w/?|against)|vs|versus)\s+(the\s+)?$", t[: spans[0][0]])) \
        if spans else bool(CHANGE_WORDS.search(t))
    relative = _FIVE_YEARS.search(t)
    decade = _DECADE.search(t)
    if decade:
        raise Decline(f"“{p.tc[decade.start():decade.end()]}”: the periods loaded are five years apart "
                      f"({join_words(_loaded(measures, cat))}), so a ten-year change is not in the data; ask for the "
                      "change from {} to {}, or load the {}-{} period with `python -m sage census fetch --vintage "
                      "{}` (needs a Census API key).".format(*_pair_words(measures, cat),
                                                           _ten_before(measures, cat) - 4, _ten_before(measures, cat),
                                                           _ten_before(measures, cat)),
                      _suggest(p, cat, measures))

    periods: list[str] = [f"{a}-{b}" for a, b, _ in sorted(years_said)]
    for a, b, span in years_said:
        if b - a != 4:
            raise Decline(f"“{p.tc[span[0]:span[1]]}” is not an ACS 5-year period (those run five years: 2014-2018, "
                          "2019-2023).", _suggest(p, cat, measures))
    for mt in singles:
        year = int(mt.group(1))
        since = re.search(r"\b(since|from|after)\s+(?:the\s+)?$", t[: mt.start()])
        period = _ending_in(year, measures, cat)
        if period is not None:
            periods.append(period)
            p.notes.append(f"“{mt.group(1)}” read as the ACS {period} 5-year period (the Census Bureau's "
                           f"“{year} ACS 5-year estimates”).")
            if since:
                change = True
            continue
        raise _no_year(p, cat, measures, year, bool(since) or change)
    p.blocked.extend(spans + [m.span() for m in singles])
    if relative and not periods:
        periods = _latest_pair(measures, cat)
        if periods:
            p.notes.append(f"“{p.tc[relative.start():relative.end()]}” read as the change between the ACS "
                           f"{periods[0]} and {periods[1]} 5-year periods (the two loaded that do not overlap).")
        change = True
        p.blocked.append(relative.span())
    periods = sorted(dict.fromkeys(periods))
    if change and len(periods) == 1:  # "since 2014-2018": to the latest period
        latest = _latest(measures, cat)
        if latest and latest != periods[0]:
            periods.append(latest)
    if change and not periods:
        periods = _latest_pair(measures, cat)
        if periods:
            p.notes.append(f"No periods named: the change between the ACS {periods[0]} and {periods[1]} 5-year "
                           "periods (the two loaded that do not overlap).")
    if len(periods) > 2:
        raise Decline(f"the question names {len(periods)} periods ({join_words(periods)}); a change is between two.",
                      _suggest(p, cat, measures))
    if len(periods) == 2:
        change = True
        _check_pair(p, cat, measures, periods)
    elif change:
        _only_one(p, cat, measures)
    for period in periods:
        _check_loaded(p, cat, measures, period)
    p.periods = tuple(periods)
    p.change = change and len(periods) == 2
    if p.change and any(m.unit == "dollars" for m in measures):
        # on the question as written: the nominal words are masked before places are read (nominal_words)
        nominal = _NOMINAL.search(p.t)
        real = _REAL.search(mask(p.t, p.blocked + nominal_words(p.t)))  # not "adjusting for inflation" in "not ..."
        # "in plain dollars, and how much after inflation?": both, side by side
        p.dollars = "both" if nominal and real else ("nominal" if nominal else "real")
    for rx in (_NOMINAL, _REAL):
        p.blocked.extend(mt.span() for mt in rx.finditer(p.t))


#: the asker's own story ("I moved here in 2015"): its years are no period of the question
_FIRST_PERSON = re.compile(r"\b(i|im|id|ive|me|my|we|were|weve|our|us)\b")


def _says_time(t: str) -> bool:
    """Whether text speaks of periods, years or change at all."""
    return bool(_SPAN.search(t) or _YEAR.search(t) or CHANGE_WORDS.search(t) or _FIVE_YEARS.search(t)
                or _SINGLE_YEAR.search(t) or _DECADE.search(t))


def _loaded(measures: Sequence[Measure], cat: Catalog) -> list[str]:
    common: set[str] | None = None
    for m in measures:
        have = set(cat.periods_of(cat.over_periods(m)))
        common = have if common is None else common & have
    return sorted(common or set())


def _earliest(measures: Sequence[Measure], cat: Catalog) -> str:
    loaded = _loaded(measures, cat) or ["2019-2023"]
    return loaded[0]


def _latest(measures: Sequence[Measure], cat: Catalog) -> str | None:
    loaded = _loaded(measures, cat)
    return loaded[-1] if loaded else None


def _ending_in(year: int, measures: Sequence[Measure], cat: Catalog) -> str | None:
    """The loaded period of every measure that ends in ``year``, or None."""
    for period in _loaded(measures, cat) or []:
        if period.endswith(str(year)):
            return period
    return None


def _latest_pair(measures: Sequence[Measure], cat: Catalog) -> list[str]:
    """The latest period and the latest one before it that does not overlap it, or [] when there is none (the
    rule of :func:`sage.census.periods.newest_pair`, one home for it)."""
    pair = newest_pair(_loaded(measures, cat))
    return list(pair) if pair else []


def _ten_before(measures: Sequence[Measure], cat: Catalog) -> int:
    """The end year of the period ten years before the latest one (2013 on the shipped data)."""
    return int((_latest(measures, cat) or "2019-2023")[-4:]) - 10


def _pair_words(measures: Sequence[Measure], cat: Catalog) -> tuple[str, str]:
    """The two periods a change compares, as words for a decline ("2014-2018", "2019-2023" on the shipped data)."""
    pair = _latest_pair(measures, cat)
    return (pair[0], pair[1]) if pair else ("2014-2018", "2019-2023")


def _tables(measures: Sequence[Measure]) -> list[str]:
    return sorted({c.split("_")[0] for m in measures for c in m.codes}) or ["B01003"]


def _no_year(p: Parse, cat: Catalog, measures: Sequence[Measure], year: int, change: bool) -> Decline:
    """A single year that ends no loaded period: what the data has instead, and the fetch of that year's period."""
    loaded = _loaded(measures, cat)
    what = join_words([nice_name(m) for m in measures]) or "these figures"
    have = f"{what} {'is' if len(measures) <= 1 else 'are'} loaded for {join_words(loaded)}" if loaded else \
        "nothing is loaded for these figures"
    if year < 2009:
        return Decline(f"“{year}”: the ACS 5-year estimates begin with 2005-2009, and the data has no decennial "
                       f"census figures; {have}.", _suggest(p, cat, measures))
    latest = _latest(measures, cat) or "2019-2023"
    if year > int(latest[-4:]):
        return Decline(f"“{year}”: the latest ACS 5-year period loaded is {latest}; the data has no later "
                       "figures and makes no forecasts.", _suggest(p, cat, measures))
    tables = _tables(measures)
    command = f"python -m sage census fetch --vintage {year} --tables {','.join(tables)}"
    why = ("a change from one year is not in the data: the ACS 5-year estimates describe five-year periods"
           if change else "the ACS 5-year estimates describe five-year periods, not single years")
    return Decline(f"“{year}”: {why}; {have}. The period ending in {year} is {year - 4}-{year}: load it with "
                   f"`{command}` (needs a Census API key), or ask about a loaded period.",
                   _suggest(p, cat, measures), kind="needs_fetch",
                   fetch={"tables": tables, "vintage": year, "geographies": ["state", "county"]})


def _check_pair(p: Parse, cat: Catalog, measures: Sequence[Measure], periods: list[str]) -> None:
    early, late = periods
    if int(early[-4:]) >= int(late[:4]):
        shared = int(early[-4:]) - int(late[:4]) + 1
        raise Decline(f"{early} and {late} overlap: they share {shared} of their five years of survey responses, "
                      "so their difference is not a change over time (the Census Bureau advises comparing only "
                      "periods that do not overlap). Compare {} with {} instead.".format(*_pair_words(measures, cat)),
                      _suggest(p, cat, measures, change=True))


def _only_one(p: Parse, cat: Catalog, measures: Sequence[Measure]) -> None:
    """A change asked of a measure loaded for one period: name the fetch that adds a comparable earlier one."""
    if not measures:
        return
    m = next((m for m in measures if len(cat.periods_of(cat.over_periods(m))) < 2), measures[0])
    latest = cat.periods_of(m)[-1] if cat.periods_of(m) else m.vintage
    end = int(latest[-4:]) - 5
    tables = _tables([m])
    raise Decline(f"{nice_name(m)} is loaded for one ACS period only ({latest}), so there is no change to show. "
                  f"The comparable earlier period is {end - 4}-{end}: load it with `python -m sage census fetch "
                  f"--vintage {end} --tables {','.join(tables)}` (needs a Census API key), then ask again.",
                  _suggest(p, cat, measures), kind="needs_fetch",
                  fetch={"tables": tables, "vintage": end, "geographies": ["state", "county"]})


def _check_loaded(p: Parse, cat: Catalog, measures: Sequence[Measure], period: str) -> None:
    for m in measures:
        if period not in cat.periods_of(cat.over_periods(m)):
            end = int(period[-4:])
            tables = _tables([m])
            raise Decline(f"{nice_name(m)} is not loaded for {period} (loaded: {join_words(cat.periods_of(m))}). "
                          f"Load it with `python -m sage census fetch --vintage {end} --tables {','.join(tables)}` "
                          "(needs a Census API key), then ask again.", _suggest(p, cat, measures),
                          kind="needs_fetch", fetch={"tables": tables, "vintage": end,
                                                     "geographies": ["state", "county"]})


def _suggest(p: Parse, cat: Catalog, measures: Sequence[Measure], change: bool = False) -> list[str]:
    """Answerable questions near the one asked: the change between the loaded periods, or the latest value."""
    place = next((pl for pl in p.places if pl.how != "ambiguous" and pl.level in ("state", "county")), None)
    out = []
    for m in measures:
        pair = _latest_pair([m], cat)
        if place is not None and pair and cat.has_in(m, place.geo_id, pair[0]):
            out.append(f"How did the {nice_name(m)} of {place.label} change from {pair[0]} to {pair[1]}?")
        if place is not None and cat.has(m, place.geo_id) and not change:
            out.append(f"What is the {nice_name(m)} in {place.label}?")
    return (out + topic_suggestions(p, cat))[:3]


def check_loaded(p: Parse, cat: Catalog, measures: Sequence[Measure], period: str) -> None:
    """Decline (``needs_fetch``, naming the fetch) a measure not loaded for ``period`` — for a follow-up that swaps
    the measure of a change ("and median home value?" after a change of income)."""
    _check_loaded(p, cat, measures, period)


__all__ = ["CHANGE_WORDS", "check_loaded", "dollar_words", "read_periods"]
