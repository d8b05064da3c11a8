"""Reading the order of a set question: which way ("highest", "poorest", "least populous"), how many ("top 5",
"which county" = 1, else 10) and by which measure ("highest poverty rate" among several named)."""

from __future__ import annotations

import re

from ....census.semantic import Measure
from ....text import overlaps
from .parsed import Parse
from .vocabulary import (
    ASC_WORDS,
    BAD_HIGH,
    DESC_WORDS,
    FIFTY,
    INCORPORATED,
    LEVEL_PLURAL,
    LEVEL_SINGULAR,
    N_RES,
    NUM_WORDS,
    SUPERLATIVE,
    mask,
)


def read_rank(p: Parse, masked: str, measures: list[Measure]) -> tuple[str | None, int, bool]:
    """``(direction, n, n_given)``: ``direction`` is ``"DESC"``, ``"ASC"`` or None (no ranking asked)."""
    txt = mask(masked, [th.span for th in p.thresholds])
    desc = DESC_WORDS.search(txt)
    # "at least a bachelor's degree" is a threshold word, no order
    asc = next((a for a in ASC_WORDS.finditer(txt) if not (a.group(1) == "least" and re.search(r"\bat\s+$",
                                                                                               txt[:a.start()]))),
               None)
    # "more" / "fewer" / "higher" are comparisons when a threshold follows them
    direction = None
    if desc and asc:
        direction = "DESC" if desc.start() < asc.start() else "ASC"
    elif desc:
        direction = "DESC"
    elif asc:
        direction = "ASC"
    # "top 5 least populous", "top 3 poorest": "top" only means "the first N"; the superlative after it
    # sets the order ("at least a bachelor's" is not one)
    if direction == "DESC" and desc is not None and desc.group(1) in ("top", "leading") and asc:
        later_asc = [a for a in ASC_WORDS.finditer(txt) if a.start() > desc.start()
                     and a.group(1) not in ("lower", "smaller", "fewer", "min")
                     and not re.search(r"\bat\s+$", txt[: a.start()])]
        later_desc = [d for d in DESC_WORDS.finditer(txt) if d.start() > desc.start()
                      and d.group(1) not in ("more", "higher", "larger", "bigger")]
        if later_asc and (not later_desc or later_asc[0].start() < later_desc[0].start()):
            direction, desc = "ASC", None
            asc = later_asc[0]
    hit = (desc if direction == "DESC" else asc) if direction else None
    word = hit.group(1) if hit is not None else ""
    if word in ("more", "higher", "larger", "bigger", "fewer", "lower", "smaller") and not re.search(
            r"\b(which|what)\b.*\b(more|higher|larger|bigger|fewer|lower|smaller)\b", txt):
        direction = None
    if word in ("more", "fewer", "higher", "lower", "larger", "smaller", "bigger") and p.thresholds:
        direction = None
    if direction and measures:
        m = rank_measure(p, txt, measures)
        if m is not None and m.name in BAD_HIGH and word in ("best", "worst", "richest", "wealthiest", "poorest"):
            direction = "ASC" if word in ("best", "richest", "wealthiest") else "DESC"
        if m is not None and m.name == "gini_index" and re.search(
                r"\b(most equal|least unequal|most equitable)\b", txt):
            direction = "ASC"
    n: int | None = None
    given = False
    fifty = [m.span() for m in FIFTY.finditer(txt)] if not re.search(r"\b(top|bottom) (50|fifty)\b", txt) else []
    for rx in N_RES:
        for mt in rx.finditer(txt):
            if overlaps(mt.span("n"), fifty):
                continue
            raw = mt.group("n")
            value = int(raw) if raw.isdigit() else NUM_WORDS.get(raw)
            if value is not None and 0 < value <= 1000:
                n, given = value, True
                break
        if given:
            break
    if direction is None and given and re.search(r"\b(top|bottom)\b", txt):
        direction = "ASC" if re.search(r"\bbottom\b", txt) else "DESC"
    # ("which of the 50 states and DC has ...": an inclusion between the set and its verb)
    if n is None and re.search(r"\b(states|counties|countys|parishes|boroughs)\s+(?:(?:(?:and|plus)\s+(?:dc|"
                               r"puerto rico|pr|the district(?: of columbia)?)|_+(?:\s+_+)*)\s+)?"
                               r"(has|is|ranks|had|was)\b"
                               r"|\bwhich one\b",
                               txt):
        n = 1
    # "Of the 50 states, which has the lowest ...": a singular verb right after "which", no plural after it
    which_verb = re.search(r"\bwhich\s+(has|is|had|was|ranks|comes)\b", txt)
    if n is None and which_verb and not LEVEL_PLURAL.search(txt[which_verb.end():]):
        n = 1
    if n is None and LEVEL_SINGULAR.search(txt) and not LEVEL_PLURAL.search(txt):
        n = 1
    # "Among the 50 states, where is the median income the lowest?": one place, whatever the set is called
    if n is None and re.search(r"\bwhere\s+(is|was|does|did)\b", txt) and not re.search(r"\bwhere\s+(are|were|do)\b",
                                                                                         txt):
        n = 1
    if n is None and p.level == "place":  # "the smallest incorporated city or village in Vermont"
        one_place = re.search(r"\b(city|town|village|cdp|place|municipality)\b", txt)
        plural = re.search(r"\b(cities|towns|villages|cdps|places|municipalities)\b",
                           INCORPORATED.sub(lambda m: "_" * len(m.group(0)), txt))
        if one_place and not plural:
            n = 1
    if n is None:
        singular = re.search(r"\b(which|what|the|name the|one)\s+(\w+\s+){0,3}?(state|county|parish)\b"
                             r"(?!\s+(is|are)\s+in)", txt) \
            and not LEVEL_PLURAL.search(txt)
        n = 1 if singular else 10
    return direction, n, given


def rank_measure(p: Parse, masked: str, measures: list[Measure]) -> Measure:
    """The measure after the superlative ("highest poverty rate"), else the first one not used as a filter."""
    sup = SUPERLATIVE.search(masked)
    filters = {th.measure.name for th in p.thresholds if th.measure}
    strong = [m for m in p.mentions if not m.weak and m.measure in measures]
    if sup:
        after = [m for m in strong if m.start >= sup.start()]
        if after:
            return after[0].measure
    rest = [m for m in measures if m.name not in filters]
    return rest[0] if rest else measures[0]
