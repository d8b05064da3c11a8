"""Thresholds in a question ("more than 100,000 people", "between 10% and 20%", "more people than
Wyoming"): reading them, binding each to the measure it limits, and saying how it was read."""

from __future__ import annotations

import re

from ....census.mentions import Mention
from ....census.semantic import Measure
from ....text import overlaps
from ..catalog import Catalog
from ..declines import Decline, topic_suggestions
from ..frame.frame import Condition
from .measures import implied_measure
from .parsed import Parse, Threshold
from .vocabulary import (
    _GE,
    _LE,
    _LT,
    LEVEL_PLURAL,
    NOUN_MEASURE,
    NUM_WORDS,
    SET_CUE,
    THAN_PLACE,
    THRESHOLD_RES,
    fraction_percent,
    mask,
    nice_name,
    parse_number,
)

_GE_WORDS, _LE_WORDS, _LT_WORDS = (f"(?:{w})" for w in (_GE, _LE, _LT))


def find_thresholds(p: Parse, cat: Catalog) -> None:
    """Limits on a value ("over 100k people", "between 10% and 20%", "majority") and on another place's value
    ("more people than Wyoming"), each bound to the measure it limits."""
    # numbers inside a measure's phrase ("65 and over", "60 minute commutes") are not thresholds
    t = mask(p.t, p.blocked + [m.span for m in p.strong()])
    found: list[Threshold] = []
    taken: list[tuple[int, int]] = []
    for rx, kind in THRESHOLD_RES:
        for mt in rx.finditer(t):
            if overlaps(mt.span(), taken):
                continue
            th = threshold_from(mt, kind)
            if th is None:
                continue
            if not th.noun:  # "500k+ people"
                after = re.match(r"\s+(people|residents|persons|inhabitants|households|housing units|homes)\b",
                                 t[mt.end():])
                th.noun = after.group(1) if after else ""
            taken.append(mt.span())
            found.append(th)
    # "places that show a population of zero", "zero residents": exactly none
    for mt in re.finditer(r"\b(?:of|at|is|equal to|equals)\s+(?:exactly\s+)?(?:zero|0)\b(?![.,]?\d|\s*(?:%|percent))|"
                          r"\b(?:zero|no)\s+(?:people|residents|population|inhabitants|housing units|homes)\b", t):
        if not overlaps(mt.span(), taken):
            taken.append(mt.span())
            found.append(Threshold("=", 0.0, None, "plain", mt.span(), mt.group(0)))
    for mt in re.finditer(r"\b(majority|mostly|predominantly)\b", t):
        if not overlaps(mt.span(), taken):
            found.append(Threshold(">", 50.0, None, "percent", mt.span(), mt.group(0)))
    # "counties with more people than Wyoming": the named place's own value is the line
    places_masked = mask(p.t, p.blocked)
    for mt in THAN_PLACE.finditer(p.t):
        ref = next((pl for pl in p.places if pl.span[0] == mt.end() and pl.how != "ambiguous"), None)
        if ref is None or overlaps(mt.span(), taken):
            continue
        # "Is Texas's population bigger than California's?": a named place against another is a comparison of
        # the two, not a line for a set of places (that needs "which states/counties ...")
        subject = any(pl is not ref and pl.span[1] <= mt.start() for pl in p.places)
        if subject and not (LEVEL_PLURAL.search(places_masked) or SET_CUE.search(places_masked)):
            continue
        op = ">" if mt.group(1) in ("more", "higher", "greater", "larger", "bigger") else "<"
        found.append(Threshold(op, 0.0, None, "place", (mt.start(), ref.span[1]),
                               p.tc[mt.start():ref.span[1]], ref=ref))
        p.places.remove(ref)
    p.thresholds = sorted(found, key=lambda x: x.span[0])
    for th in p.thresholds:
        _bind_threshold(p, cat, th)


def _bind_threshold(p: Parse, cat: Catalog, th: Threshold) -> None:
    strong = p.strong()
    # "more than 300,000 people enrolled in grad school": the people are the count named right after the noun
    if th.noun and th.unit != "percent":
        follow = [x for x in strong if x.measure.unit == "count" and x.measure.name != "population"
                  and 0 <= x.start - th.span[1] <= 30 and not re.search(
                      r"\b(have|has|had|with|where|and|but|than|are|is|were|was|who have|that have)\b",
                      p.t[th.span[1]:x.start])]
        if follow:
            th.measure = follow[0].measure
            return
    noun_measure = NOUN_MEASURE.get(th.noun)
    if noun_measure and th.unit != "percent":
        m = next((x.measure for x in strong if x.measure.name == noun_measure), None) or cat.measure(noun_measure)
        if m is not None:
            th.measure = m
            if not any(x.measure.name == m.name for x in p.mentions if not x.weak):
                p.mentions.append(Mention(m, th.span[1], th.span[1], th.noun))
                p.mentions.sort(key=lambda x: x.start)
            return

    if th.unit == "percent":
        for x in strong:
            if x.measure.unit != "percent":
                alt = next((m for m in cat.measures if m.family == x.measure.family and m.unit == "percent"), None)
                if alt is not None:
                    x.measure = alt
        strong = p.strong()

    def compatible(m: Measure) -> bool:
        if th.unit == "place":
            return True
        if th.unit == "percent":
            return m.unit == "percent"
        if th.unit == "dollars":
            return m.unit == "dollars"
        if m.unit == "percent":
            return th.value <= 100 and th.value2 is None or (th.value2 is not None and th.value2 <= 100)
        return True

    cands = [x for x in strong if compatible(x.measure)]
    if th.unit == "place" and not cands:
        implied = implied_measure(mask(p.t, p.blocked), cat) or cat.measure("population")
        assert implied is not None  # population is a shipped measure
        th.measure = implied
        p.mentions.append(Mention(implied, th.span[0], th.span[0], implied.name))
        return
    if not cands and th.unit != "percent":
        weak = [x for x in p.mentions if x.weak and compatible(x.measure)]
        cands = weak
        for x in weak:
            x.weak = False
    if not cands:
        if strong:
            raise Decline(
                f"the threshold “{th.text.strip()}” does not fit "
                f"{' or '.join(nice_name(x.measure) for x in strong)} (a {strong[0].measure.unit} measure).",
                topic_suggestions(p, cat))
        if th.unit == "plain" and (th.value >= 1000 or th.noun):
            m = cat.measure("population")
            assert m is not None  # population is a shipped measure
            th.measure = m
            p.mentions.append(Mention(m, th.span[1], th.span[1], "population"))
            p.notes.append(f"“{th.text.strip()}” read as a population threshold.")
            return
        raise Decline(f"I could not tell which measure the threshold “{th.text.strip()}” applies to.",
                      topic_suggestions(p, cat))

    def dist(x: Mention) -> int:
        if x.end <= th.span[0]:
            return th.span[0] - x.end
        if x.start >= th.span[1]:
            return (x.start - th.span[1]) + 3  # a measure named before the number reads more naturally
        return 0

    th.measure = min(cands, key=dist).measure


def threshold_from(mt: re.Match, kind: str) -> Threshold | None:
    g = mt.groupdict()
    if kind == "fraction":
        frac = fraction_percent(mt.group("frac"))
        if frac is None:
            return None
        op = mt.group("op").strip()
        ops = [(_GE_WORDS, ">="), (_LE_WORDS, "<="), (_LT_WORDS, "<")]
        sign = next((o for words, o in ops if re.fullmatch(words, op)), ">")
        return Threshold(sign, frac, None, "percent", mt.span(), mt.group(0))
    if kind == "between":
        a = parse_number(g.get("a_num"), g.get("a_mult"))
        b = parse_number(g.get("b_num"), g.get("b_mult"))
        if a is None or b is None:
            return None
        if g.get("b_mult") and not g.get("a_mult") and a < b / 1000:  # "between 1 and 2 million"
            scaled = parse_number(g.get("a_num"), g.get("b_mult"))
            a = a if scaled is None else scaled  # (never None: the number parsed without the multiplier)
        if g.get("a_pct") or g.get("b_pct"):
            unit = "percent"
        else:
            unit = "dollars" if (g.get("a_cur") or g.get("b_cur")) else "plain"
        lo, hi = sorted((a, b))
        noun = (g.get("b_noun") or g.get("a_noun") or "").strip()
        return Threshold("between", lo, hi, unit, mt.span(), mt.group(0), noun=noun)
    value = parse_number(g.get("num"), g.get("mult"))
    if value is None:
        return None
    num = (g.get("num") or "").strip()
    if num in NUM_WORDS and NUM_WORDS[num] < 13 and not g.get("mult") and not g.get("pct") and not g.get("noun"):
        return None  # "over two" without unit: not a threshold ("over forty five" is)
    if re.fullmatch(r"(19|20)\d\d", num) and not g.get("cur") and not g.get("pct") and not g.get("mult") \
            and not g.get("noun") and kind in (">", "<"):
        op_word = (g.get("op") or "").strip()
        if op_word in ("over", "under", "since", "before", "after"):
            return None  # "over 2020" reads as a year
    unit = "percent" if g.get("pct") else ("dollars" if g.get("cur") else "plain")
    if kind == ">=post":
        op = ">="
    elif kind == "<=post":
        op = "<="
    else:
        op = kind
    has_unit = g.get("mult") or g.get("cur") or g.get("pct") or g.get("noun") or "," in num or value >= 1000
    if kind == ">=post" and g.get("post") == "+" and not has_unit:
        return None  # "25+" next to "adults" etc.: not a threshold on its own
    return Threshold(op, value, None, unit, mt.span(), mt.group(0), noun=(g.get("noun") or "").strip())


def describe_threshold(th: Threshold | Condition) -> str:
    unit = th.measure.unit if th.measure else th.unit
    def f(v):
        if unit == "percent":
            return f"{_fmt_num(v)}%"
        if unit == "dollars":
            return f"${_fmt_num(v)}"
        return _fmt_num(v)
    words = {">": "greater than", ">=": "at least", "<": "less than", "<=": "at most", "=": "exactly"}
    other = getattr(th, "other", None)
    if other is not None:
        return f"{words[th.op]} its own {nice_name(other)} (both from the same table, same people counted)"
    if th.ref is not None:
        assert th.measure is not None  # a threshold against a place is bound to its measure when it is read
        return f"{words[th.op]} that of {th.ref.label} (its own {nice_name(th.measure)} from the same table)"
    if th.op == "between":
        return f"between {f(th.value)} and {f(th.value2)} (inclusive)"
    return f"{words[th.op]} {f(th.value)} ({th.op})"


def _fmt_num(value: float) -> str:
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


#: a frame's condition reads like the threshold it came from
describe_condition = describe_threshold
