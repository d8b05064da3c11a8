"""The offline planner's one explainer: a :class:`~sage.planner.offline.frame.frame.Query` in, the assumptions shown
with the answer out — what was read how, which places and periods, how each measure is defined, what was left out, and
whether margins of error are shown.  It reads the frame, never the SQL."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...census.semantic import Measure
from .catalog import State
from .compile.compile import Compiled
from .frame.frame import GeoSet, Op, Query
from .read.parsed import Place
from .read.thresholds import describe_condition
from .read.vocabulary import join_words, nice_name


def explain(q: Query, compiled: Compiled, states: Sequence[State]) -> list[str]:
    """The assumptions of an answer to ``q`` compiled as ``compiled``; ``states`` are the database's state rows
    (to name the states a measure's table lacks)."""
    out = list(_reading(q))
    geo, op = q.geo, q.op
    if op is Op.VALUE:
        if q.per_n:
            pop = "B01003_001E"
            vintage = q.measures[0].vintage if q.measures else ""
            out.append(f"“{q.per_n_phrase}” = {q.per_n:,} × count / total population ({pop}), both ACS {vintage}.")
            _places(geo.places, out)
            _measures(q.measures, out, level=geo.level, margins=None)
        elif q.with_us:
            out.append("US row = the sum over the 50 states + DC (the state rows; there are no nation rows; "
                       "Puerto Rico excluded); rates computed from the summed counts.")
            out.extend(_state_gaps(q.measures, states, frozenset({"PR"}), us=True))
            _places(geo.places, out)
            _measures(q.measures, out, level=geo.level, margins=None)
        else:
            _places(geo.places, out)
            _measures(q.measures, out, level=geo.level, margins=compiled.margins, places=geo.places)
    elif op in (Op.RANK, Op.LIST):
        out.extend(_set_scope(q))
        _places(geo.places or [Place("state", s, None, (0, 0), "exact") for s in geo.within], out)
        _measures(q.measures, out, level=geo.level, margins=False, scope=geo.within)
    elif op is Op.COUNT:
        if not q.measures:
            out.extend(_count_scope(geo))
        else:
            out.insert(0, f"Counting the {_noun(geo.level)} that meet the condition.")
            out.extend(_set_scope(q))
            _places(geo.places or [Place("state", s, None, (0, 0), "exact") for s in geo.within], out)
            _measures(q.measures, out, level=geo.level, margins=False, scope=geo.within)
    elif op is Op.TOTAL:
        if geo.places:
            out.append(f"Combined = {join_words([pl.label for pl in geo.places])} added together (counts summed; "
                       "rates computed from the summed counts).")
            _places(geo.places, out)
            _measures(q.measures, out, level=geo.level, margins=False)
        elif not q.conditions and geo.level == "state" and not geo.within:
            out.extend(_state_gaps(q.measures, states, geo.exclude, us=False))
            _measures(q.measures, out, level="state", margins=False)
        else:
            noun = _noun(geo.level)
            out.insert(0, f"Total = the matching {noun} added together (counts summed); the number of {noun} "
                          "is shown too.")
            out.extend(_set_scope(q))
            _places(geo.places or [Place("state", s, None, (0, 0), "exact") for s in geo.within], out)
            _measures(q.measures, out, level=geo.level, margins=False, scope=geo.within)
    elif op is Op.SHARE:
        m = q.measures[0]
        if q.combined:
            parent = "their state's" if geo.level in ("county", "place") else "the US (the 50 states + DC)"
            out.append(f"Share = {join_words([pl.label for pl in geo.places])} added together / {parent} "
                       f"{nice_name(m)} ({m.formula}), ACS {m.vintage}.")
        elif q.share_of == "us":
            out.append(f"Share = the {'county' if geo.level == 'county' else 'place'}'s {nice_name(m)} / the sum over "
                       f"the 50 states + DC (Puerto Rico excluded; there are no nation rows), ACS {m.vintage}; "
                       "two decimals, as the share is small.")
        elif geo.level in ("county", "place"):
            what = "county's" if geo.level == "county" else "place's"
            out.append(f"Share = the {what} {nice_name(m)} / its state's ({m.formula}), both ACS {m.vintage}.")
        else:
            out.append(f"Share = the state's {nice_name(m)} / the sum over the 50 states + DC (Puerto Rico "
                       f"excluded; there are no nation rows), ACS {m.vintage}.")
        _places(geo.places, out)
        _measures(q.measures, out, level=geo.level, margins=None)
    elif op is Op.DIFFERENCE:
        _places(geo.places, out)
        _measures(q.measures, out, level=geo.level, margins=None)
    elif op is Op.CHANGE:
        if not geo.places:
            out.extend(x for x in _set_scope(q) if not x.startswith("Ranking by"))
        _places(geo.places or [Place("state", s, None, (0, 0), "exact") for s in geo.within], out)
        for m in q.measures:
            out.append(f"{m.label} = {m.formula} (ACS {' and '.join(q.periods)} 5-year estimates).")
    elif op is Op.PER_PARENT:
        out.append("Counting county-equivalents per state in the 2022+ ACS geography: parishes, boroughs, "
                   "census areas, independent cities, Connecticut's planning regions and Puerto Rico's "
                   "municipios count; DC is one county-equivalent.")
        if q.rank and q.rank.n and not q.rank.n_given and q.rank.n > 1:
            out.append(f"No number given, so showing {q.rank.n}.")
    return list(dict.fromkeys(out))


_SINGULAR = {"states": "state", "counties": "county", "places": "place", "census tracts": "census tract",
             "ZCTAs": "ZCTA", "congressional districts": "congressional district", "metro areas": "metro area"}


def describe(q: Query) -> str:
    """The frame in a few words — the standalone reading of a follow-up ("median household income, Williamson
    County, TX"; "top 20 Texas counties by population")."""
    what = join_words([nice_name(m) for m in q.measures]) if q.measures else ""
    geo = q.geo
    plural = {"state": "states", "county": "counties", "place": "places", "mixed": "places", "tract": "census tracts",
              "zcta": "ZCTAs", "cd": "congressional districts", "cbsa": "metro areas"}.get(geo.level, geo.level)
    within = f" in {join_words([s.name for s in geo.within])}" if geo.within else ""
    if geo.in_counties:
        within = f" in {join_words([c.label for c in geo.in_counties])}"
    if geo.in_states_of is not None:
        within = " in the state of the previous answer"
    if geo.leave_out:  # "top 3 counties in Texas other than Harris County, TX by population"
        within += f" other than {join_words([pl.label for pl in geo.leave_out])}"
    if geo.units and q.op is Op.LIST:  # "ZIP 78701", "TX-21": named by code
        return f"{what}, {join_words([u.name for u in geo.units])}" + (
            f" (as a {'bar chart' if q.display == 'bar' else q.display})" if q.display not in (None, "big") else "")
    if "DC" in geo.exclude and "PR" in geo.exclude and geo.level == "state":
        plural = "of the 50 states" if q.op is Op.RANK else "the 50 states"
    among = " among the places of the previous answer" if geo.among is not None else ""
    conds = "; ".join(f"{nice_name(c.measure)} {describe_condition(c)}" for c in q.conditions)
    conds = f" with {conds}" if conds else ""
    if q.op is Op.VALUE:
        names = join_words([pl.label for pl in geo.places])
        if geo.among is not None:
            names = f"{names} and the places of the previous answer"
        out = f"{what}, {names}" + (" and the US" if q.with_us else "")
        if q.ratio:
            out = f"{nice_name(q.measures[0])} per {nice_name(q.measures[1])}, {names}"
        if q.per_n:
            out = f"{what} per {q.per_n:,} residents, {names}"
    elif q.op is Op.RANK and q.rank is not None:
        which = "top" if q.rank.descending else "bottom"
        n = "" if q.rank.n == 1 and not q.rank.n_given else f" {q.rank.n}"
        noun = plural if q.rank.n != 1 else _SINGULAR.get(plural, plural)
        out = f"{which}{n} {noun}{within}{among} by {nice_name(q.rank.by)}{conds}"
        if geo.places and geo.among is None:  # the one of the places named ("which of the two cities ...")
            out = f"{which}{n} of {join_words([pl.label for pl in geo.places])} by {nice_name(q.rank.by)}{conds}"
        if q.rank.per_parent:
            out += " within each state"
        if len(q.measures) > 1:
            out += f" ({what})"
    elif q.op is Op.LIST:
        single = _SINGULAR.get(plural, plural)
        out = f"{what} of {'every ' + single if not conds else plural}{within}{conds}"
        if geo.among is not None:
            out = f"{what}, the {plural} of the previous answer{conds}"
    elif q.op is Op.COUNT:
        out = f"number of {plural}{within}{conds}"
    elif q.op is Op.TOTAL:
        if geo.places:
            out = f"{what}, {join_words([pl.label for pl in geo.places])} combined"
        elif not q.conditions and geo.level == "state" and not geo.within:
            out = f"{what}, the US"
        else:
            out = f"total {join_words([nice_name(m) for m in q.sums])} of the {plural}{within}{conds}"
    elif q.op is Op.SHARE:
        parent = "their state" if geo.level in ("county", "place") and q.share_of != "us" else "the US"
        out = f"{join_words([pl.label for pl in geo.places])}{' combined' if q.combined else ''} as a share of " \
              f"{parent}, {what}"
    elif q.op is Op.PER_PARENT:
        out = "counties per state"
    elif q.op is Op.DIFFERENCE:
        first, second = geo.places
        out = f"{what}, {first.label} minus {second.label}"
    elif q.op is Op.CHANGE:
        span = " to ".join(q.periods)
        where = join_words([pl.label for pl in geo.places]) if geo.places else (
            "the US" if q.sums else f"{plural}{within}{among}")
        ch = q.change
        keep = {"loss": " that lost", "gain": " that gained", "significant_loss": " with a significant fall",
                "significant_gain": " with a significant rise", "significant": " with a significant change"}.get(
                    ch.keep if ch is not None else "", "")
        by = "percent change" if ch is not None and ch.by == "pct_change" else "change"
        out = f"{by} in {what}, {where}{keep}, {span}" + (
            " (real and nominal dollars)" if ch is not None and ch.dollars == "both" else "")
        if ch is not None and ch.count:
            out = f"number of {plural}{within} whose {what} {'fell' if 'loss' in ch.keep else 'rose'}, {span}"
            if ch.by == "pct_change":  # "how many counties lost the most percent": a fall in percent is a fall
                out += " (in percent or in number alike)"
        elif q.rank is not None:
            n = "" if q.rank.n == 1 and not q.rank.n_given else f" {q.rank.n}"
            noun = plural if q.rank.n != 1 else {"states": "state", "counties": "county", "places": "place"}.get(
                plural, plural)
            out = (f"{'top' if q.rank.descending else 'bottom'}{n} {noun}{within}{among}{keep} by {by} in {what}, "
                   f"{span}")
    else:
        out = what
    if len(q.periods) == 1 and q.measures and q.periods[0] != q.measures[0].vintage:
        out += f", {q.periods[0]}"  # another period than the latest, asked
    if q.display:
        out += f" (as a {'bar chart' if q.display == 'bar' else q.display})"
    return out


def _reading(q: Query) -> list[str]:
    return list(q.notes)


def _noun(level: str) -> str:
    return {"county": "counties", "place": "places"}.get(level, "states")


def _count_scope(geo: GeoSet) -> list[str]:
    if geo.level == "place":
        kind = {"village": "villages", "town": "towns", "borough": "boroughs", "cdp": "census-designated places",
                "incorporated": "incorporated places (cities, towns, villages, boroughs)"}.get(geo.place_kind)
        if kind:
            return [f"Counting the Census places that are {kind} (by the kind at the end of their Census name), "
                    "2023 ACS geography."]
        return ["Counting Census places (incorporated cities, towns, villages and boroughs, and census-designated "
                "places), 2023 ACS geography."]
    if geo.level == "county" and geo.within:
        return ["Counting county-equivalents (parishes, boroughs, census areas and independent cities included), "
                "2022+ ACS geography."]
    if geo.level == "county":
        return ["Counting the county-equivalents of the 50 states + DC (the US convention here; Puerto Rico's 78 "
                "municipios excluded), 2022+ ACS geography."]
    if "DC" in geo.exclude:
        return ["Counting state rows: the 50 states (DC and Puerto Rico excluded)."]
    return ["Counting state rows: the 50 states + DC (Puerto Rico excluded)."]


def _set_scope(q: Query) -> list[str]:
    """Which places make up the set, and how it is ranked and filtered."""
    geo, out = q.geo, []
    if geo.independent_cities:
        out.append("Independent cities only: the county-equivalents whose name ends in “city”.")
    if q.rank is not None and q.rank.per_parent:
        n = q.rank.n
        out.append(f"Ranked within each state: the top {n} {'county' if n == 1 else 'counties'} of every state.")
    if geo.level == "state" and not geo.within:
        left = sorted(geo.exclude)
        if set(left) == {"DC", "PR"}:
            out.append("“The 50 states”: DC and Puerto Rico left out.")
        elif left:
            names = join_words([{"DC": "DC", "PR": "Puerto Rico"}.get(c, c) for c in left])
            out.append(f"States = every state-level row with data except {names}, as asked.")
        else:
            out.append("States = every state-level row with data: the 50 states, DC and Puerto Rico (say “the 50 "
                       "states” to leave DC and Puerto Rico out).")
    if geo.level == "county":
        scope = f" in {join_words([s.name for s in geo.within])}" if geo.within else " nationwide"
        ct = not geo.within or any(s.abbr == "CT" for s in geo.within)
        out.append(f"Counties{scope}, all county-equivalents included (parishes, boroughs, census areas, "
                   "independent cities" + ("; Connecticut as its planning regions)." if ct else ")."))
        if "PR" in geo.exclude and not geo.within:
            out.append("Puerto Rico's municipios left out, as asked.")
    if geo.level == "place":
        scope = f" in {join_words([s.name for s in geo.within])}" if geo.within else " nationwide"
        out.append(f"Census places{scope} (2023 ACS geography).")
    if q.rank is not None and not q.rank.per_parent and q.op is Op.RANK:
        which = "highest" if q.rank.descending else "lowest"
        if q.rank.n_given:
            out.append(f"Ranking by {nice_name(q.rank.by)}, {which} first, top {q.rank.n}.")
        else:
            out.append(f"Ranking by {nice_name(q.rank.by)}, {which} first; no number given, so showing "
                       f"{q.rank.n}.")
    for c in q.conditions:
        out.append(f"“{c.text.strip()}” read as {nice_name(c.measure)} {describe_condition(c)}.")
    return out


def _state_gaps(measures: Sequence[Measure], states: Sequence[State], exclude: frozenset[str],
                us: bool) -> list[str]:
    """Measures whose table lacks some of the states summed (poverty has no rows for AK, HI, PR)."""
    out = []
    for m in measures:
        cov = m.coverage.get("state")
        if cov is None:
            continue
        lacking = [s.name for s in states if s.fips not in cov and s.abbr not in exclude]
        if lacking:
            what = "the US figure covers" if us else "the figure covers"
            out.append(f"{m.label}: no rows for {', '.join(lacking)}, so {what} the other states only.")
    return out


def _places(places: Iterable[Place], out: list[str]) -> None:
    for pl in places:
        if pl.level == "county" and pl.county is not None and pl.how in ("unique",):
            out.append(f"“{pl.text}” is unique nationwide: {pl.label} (FIPS {pl.county.geo_id[-5:]}).")
        elif pl.level == "county" and pl.county is not None and pl.how in ("qualifier", "exact"):
            out.append(f"Place: {pl.county.name}, {pl.state.name} (FIPS {pl.county.geo_id[-5:]}).")
        elif pl.level == "state" and pl.how == "abbr":
            out.append(f"“{pl.text}” read as {pl.state.name}.")
        elif pl.level == "place" and pl.locality is not None:
            loc = pl.locality
            kind = (" — a census-designated place (CDP): an unincorporated community the Census Bureau defines for "
                    "statistics, not a city with a government" if loc.is_cdp else "")
            out.append(f"Place: {loc.full_name} (Census place {pl.geo_id[-7:]}){kind}.")


def _measures(measures: Sequence[Measure], out: list[str], *, level: str, margins: bool | None,
              places: Sequence[Place] = (), scope: Sequence[State] = ()) -> None:
    """How each measure is defined, which period, coverage caveats, and margins of error (``margins``: True when
    the answer has margin columns, False when it could but leaves them out, None when not applicable)."""
    vintages = set()
    for m in measures:
        vintages.add(m.vintage)
        out.append(f"{m.label} = {m.formula} (ACS {m.vintage} 5-year estimates).")
        if m.notes and (m.vintage == "2018-2022" or "Puerto Rico" in m.notes):
            relevant = True
            if places:
                relevant = any(pl.state.abbr in ("AK", "HI", "PR") for pl in places) or m.vintage == "2018-2022"
            if relevant:
                out.append(f"Coverage: {m.notes}")
    if len(vintages) > 1:
        out.append("The measures come from two ACS periods (2019-2023 and 2018-2022); each rate uses "
                   "numerator and denominator of one period.")
    if margins is None:
        return
    if margins:
        out.append("Margin of error: the published 90% MOE is included where the extract has it "
                   "(columns ending in _moe).")
    elif any(level in m.moe_levels for m in measures):
        noun = {"state": "state", "place": "place"}.get(level, "county")
        out.append(f"Margins of error exist for these {noun} rows but are left out of lists; ask "
                   f"about one {noun} to see them.")
    else:
        out.append("Margins of error: not available for these rows in the shipped extract.")


__all__ = ["describe", "explain"]
