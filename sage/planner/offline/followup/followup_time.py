"""Follow-ups about time, as edits of the previous frame: "what was that in 2014-2018?" (another period), "how much
has that changed since 2014-2018?" (a change), "adjusted for inflation?" (a change's dollars), "in percent?" (what a
ranked change orders by), "and which lost the most?" (the other end of the same change).

Apart from :mod:`.followup` because time has rules of its own (periods, dollars, the direction of a change) and the
frame builder for changes (:mod:`.changes`) is reused here rather than repeated."""

from __future__ import annotations

import re
from dataclasses import replace

from ....census.semantic import Measure
from ..catalog import Catalog
from ..frame.frame import Op, Query, Rank
from ..frame.intent import in_period
from ..read.parsed import Parse
from ..read.ranking import read_rank

#: losses and gains in a follow-up: stricter than a full question's (changes.py), where "add..." and "smaller" are
#: safe — here "add Ohio" and "a smaller one" edit other things
LOSE = re.compile(r"\b(lose|lost|loses|losing|declin(e|ed|es|ing)|shr[aiu]nk\w*|fell|dropp?(ed|s)?|"
                  r"decreas(e|ed|es|ing))\b")
GAIN = re.compile(r"\b(gain|gained|gains|gaining|grew|grow|grows|growing|added|add|adds|adding|increas(e|ed|es|ing)|"
                  r"rose|rise|rises)\b")
SUPERLATIVE = re.compile(r"\b(most|biggest|largest|greatest|fastest|least|fewest|smallest|slowest)\b")
#: "which lost the most?", "which one grew fastest?": one place, not a list (a plural — "which counties" — is not)
ONE = re.compile(r"^\W*(?:(?:and|so|ok|okay|now|then|but)\W+)?(?:which|who)\s+(?:one\s+)?(?:is|was|has|had|did|grew|"
                 r"gained|lost|saw|rose|fell|dropped|added|declined|increased|decreased|shrank)\b")
PERCENT = re.compile(r"\b(percent\w*|%|pct|in percentage terms|fastest|slowest|relative)\b")
ABSOLUTE = re.compile(r"\b(raw number|absolute|number of people|people added|how many people|in people|in dollars)\b")


def time_edit(p: Parse, q: Query, cat: Catalog, measures: list[Measure], masked: str) -> Query | None:
    """A follow-up about time, as an edit of ``q``: "what was that in 2014-2018?" (the earlier period), "how much
    has that changed since 2014-2018?" (the change), "adjusted for inflation?" / "in nominal dollars?" (the dollars
    of a change), "in percent?" / "the raw number instead?" (what a ranked change orders by).  None when the
    follow-up says nothing about time.  Raises :class:`Decline` for a period the data cannot give."""
    from ....census.mentions import Mention
    from ..frame.changes import change_query
    from ..read.periods import dollar_words, read_periods

    if not measures:
        return None
    tmp = Parse(question=p.question, tc=p.tc, t=p.t, places=list(p.places), blocked=list(p.blocked),
                mentions=[Mention(m, 0, 0, m.name) for m in measures], level=q.geo.level if q.geo.is_set else None)
    read_periods(tmp, cat)
    if q.op is Op.CHANGE and q.change is not None:
        ch = q.change
        if dollar_words(p.t) and q.measures[0].unit == "dollars":
            nominal = re.search(r"\bnominal|not (adjust|correct)|unadjusted|current dollars|as published", p.t)
            return q.edit(change=replace(ch, dollars="nominal" if nominal else "real"))
        lose, gain = LOSE.search(masked), GAIN.search(masked)
        reorder = ABSOLUTE.search(masked) or re.search(r"\b(rank\w*|order\w*|sort\w*) by\b", masked)
        if (q.geo.is_set or q.geo.among is not None) and bool(lose) != bool(gain) and not reorder:
            # "and which lost the most residents?" after the counties that added the most: the other end of the
            # same change; "which lost people?": the ones that fell
            by = "pct_change" if PERCENT.search(masked) and not ABSOLUTE.search(masked) else "change"
            sup = SUPERLATIVE.search(masked)
            if sup is None:
                return q.edit(rank=None, change=replace(ch, by=by, keep="loss" if lose else "gain"))
            # the set again, not the few places shown: "and which lost the most?" after "which of them lost?"
            most = sup.group(1) not in ("least", "fewest", "smallest", "slowest")
            base = q.rank or Rank(q.measures[0], True, 10)
            if q.geo.among is not None and q.geo.among.op is Op.CHANGE:
                q = q.edit(geo=q.geo.among.geo)  # "and which lost the most?" after "which of them lost": the set
            direction, n, n_given = read_rank(p, masked, list(q.measures))
            if not n_given and ONE.search(masked) and not (q.rank is not None and q.rank.n_given):
                n, n_given = 1, True  # "which lost the most?" of a few places: the one (after a top 5: the other 5)
            return q.edit(rank=Rank(q.measures[0], most if gain else not most, n if n_given else base.n,
                                    n_given or base.n_given), change=replace(ch, by=by, keep=""))
        if PERCENT.search(masked) and not ABSOLUTE.search(masked):
            return q.edit(change=replace(ch, by="pct_change"))
        if ABSOLUTE.search(masked) or re.search(r"\b(added|gained|lost) the most\b", masked):
            return q.edit(change=replace(ch, by="change"))
        if tmp.periods and not tmp.change:  # "what were they in 2014-2018?": that period's values
            return in_period(Query(Op.VALUE if q.geo.places else Op.LIST, q.measures, q.geo), tmp.periods[0], cat, [])
        return None
    if not tmp.periods:
        return None
    if tmp.change:
        level = q.geo.level if q.geo.level != "mixed" else "county"
        tmp.level = level if q.geo.is_set or q.geo.among is not None else None
        tmp.national = q.op is Op.TOTAL and q.geo.level == "state" and not q.geo.within
        if tmp.national:  # the US total: the US's change, not each state's
            tmp.level = None
        tmp.places = [] if (q.geo.is_set or q.geo.among is not None) else list(q.geo.places)
        if q.geo.is_set and q.geo.within:
            from ..read.parsed import Place as _Place
            tmp.places = [_Place("state", s, None, (0, 0)) for s in q.geo.within]
        ranked = bool(re.search(r"\b(which|fastest|slowest|most|least|biggest|largest|top|bottom)\b", masked))
        lost = re.search(r"\b(lose|lost|losing|decline\w*|shr[aiu]nk\w*|fell|drop\w*)\b", masked)
        # (the US total — the states added up — is one place's change, not a list of the states')
        out = change_query(tmp, cat, measures, masked, [], set_query=bool(q.geo.is_set or q.geo.among is not None
                                                                          or ranked or lost) and not tmp.national)
        if q.geo.among is not None or (q.geo.is_set and (q.op is Op.RANK or q.conditions)):
            # the places the previous answer showed (its ranking, its limits), not its whole set
            # (a pick — "which is highest?" — is the one place shown: the change is of that one)
            picked = q.rank is not None and q.rank.n == 1 and q.geo.among is not None
            out = out.edit(geo=replace(out.geo, among=q if q.geo.among is None or picked else q.geo.among))
        if ranked and out.rank is None and not (out.change and out.change.keep):
            out = out.edit(rank=Rank(measures[0], True, 1))
        return out
    # "what did that top 10 look like in 2014-2018?": the same question in that period, checked as in full
    return in_period(q, tmp.periods[0], cat, [])
