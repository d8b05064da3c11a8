"""The measures a question names (:func:`find_mentions`, :func:`match_measures`): by synonym, longest phrase
first, then by a fuzzy match of misspelled words; and the first topic it asks about that the data lacks
(:func:`find_gap`).  The measures themselves are :mod:`sage.census.semantic`'s.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..text import normalize, overlaps
from .semantic import Gap, Measure, load_gaps, shipped_measures

_SHARE_CUE = re.compile(r"\b(share|percent|percentage|pct|proportion|fraction|rate|rates|ratio|portion|per cent)\b|%")
_COUNT_CUE = re.compile(r"\b(how many|number of|count of|count|total number|headcount|numbers of)\b")
_WORD = re.compile(r"[a-z][a-z]+")


@dataclass
class Mention:
    """Where a question names a measure."""

    measure: Measure
    start: int
    end: int
    phrase: str
    weak: bool = False
    fuzzy: bool = False

    @property
    def span(self) -> tuple[int, int]:
        return (self.start, self.end)


#: what ends a word for a synonym's match (the regex's ``[a-z0-9]``)
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
#: whitespace other than single spaces (a text :func:`~sage.text.normalize` did not make)
_IRREGULAR_SPACE = re.compile(r"\s\s|[^\S ]")


class _Phrase:
    """Where a synonym occurs in a question: its words, the last one perhaps plural ("-s", "-es"), as whole words.

    Found with ``str.find``, not a regex: the measures have some 1,300 synonyms, and compiling a regex for each that
    a question might hold cost the first questions of a process several milliseconds each (0.3 s for all of them).
    A normalised question has single spaces between words; a text with other whitespace is matched by the
    equivalent regex (any whitespace between the words), compiled the first time it is needed."""

    __slots__ = ("_compiled", "bounded", "phrase", "plural", "source")

    def __init__(self, phrase: str) -> None:
        words = phrase.split()
        self.phrase = " ".join(words)
        self.plural = not (phrase.endswith("s") or not phrase[-1].isalpha())
        self.bounded = phrase[-1].isalnum()
        self.source = (r"(?<![a-z0-9])" + r"\s+".join(re.escape(w) for w in words)
                       + ("(?:s|es)?" if self.plural else "") + (r"(?![a-z0-9])" if self.bounded else ""))
        self._compiled: re.Pattern | None = None

    def spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` of every match, left to right, not overlapping (as ``re.finditer`` gives them)."""
        if _IRREGULAR_SPACE.search(text):
            if self._compiled is None:
                self._compiled = re.compile(self.source)
            return [mt.span() for mt in self._compiled.finditer(text)]
        out = []
        phrase, n = self.phrase, len(text)
        i = text.find(phrase)
        while i >= 0:
            end = self._end(text, i + len(phrase), n) if i == 0 or text[i - 1] not in _WORD_CHARS else None
            if end is None:
                i = text.find(phrase, i + 1)
            else:
                out.append((i, end))
                i = text.find(phrase, end)
        return out

    def _end(self, text: str, end: int, n: int) -> int | None:
        """Where a match whose words end at ``end`` ends (after a plural ending), or None when it is part of a
        longer word."""
        def free(k: int) -> bool:
            return not self.bounded or k >= n or text[k] not in _WORD_CHARS

        if self.plural:
            if text.startswith("s", end) and free(end + 1):
                return end + 1
            if text.startswith("es", end) and free(end + 2):
                return end + 2
        return end if free(end) else None


_pattern_cache: dict[tuple, list[tuple[_Phrase, Measure, str, bool]]] = {}


def _patterns(measures: Sequence[Measure]) -> list[tuple[_Phrase, Measure, str, bool]]:
    key = tuple(id(m) for m in measures)
    cached = _pattern_cache.get(key)
    if cached is not None:
        return cached
    pats = []
    for m in measures:
        for weak, phrases in ((False, m.synonyms), (True, m.weak_synonyms)):
            for phrase in phrases:
                if phrase.split():
                    pats.append((_Phrase(phrase), m, phrase, weak))
    pats.sort(key=lambda p: -len(p[2]))
    if len(_pattern_cache) > 32:
        _pattern_cache.clear()
    _pattern_cache[key] = pats
    return pats


def find_mentions(
    text: str,
    measures: Sequence[Measure] | None = None,
    *,
    blocked: Sequence[tuple[int, int]] = (),
    fuzzy: bool = True,
) -> list[Mention]:
    """Every measure mention in ``text`` (already :func:`~sage.text.normalize`-d, lowercase), longest phrase first,
    non-overlapping.

    ``blocked`` spans (place names found by the planner) are skipped.  Then each mention is resolved within its
    family by nearby wording ("share of Hispanic residents" -> the share; "how many people are uninsured" -> the
    count), and measures superseded by a more specific one ("White householder income" over "income") dropped.
    Weak mentions ("people", "homes") are returned with ``weak=True``; the caller decides whether they count.
    """
    measures = list(measures) if measures is not None else shipped_measures()
    if not measures or not text:
        return []
    taken = list(blocked)
    found: list[Mention] = []
    for pat, m, phrase, weak in _patterns(measures):
        if phrase.split(None, 1)[0] not in text:  # its first word is literally in every match: most never are
            continue
        for span in pat.spans(text):
            if overlaps(span, taken):
                continue
            taken.append(span)
            found.append(Mention(m, span[0], span[1], phrase, weak=weak))
    if fuzzy:
        found.extend(_fuzzy_mentions(text, measures, taken))
    found.sort(key=lambda x: x.start)
    found = _drop_superseded(found, text)  # first, so "how many households have internet" reads as one measure
    found = _resolve_families(text, found, measures)
    return _drop_superseded(found, text)


_vocab_cache: dict[tuple, tuple[dict[str, Measure], dict[str, list[str]]]] = {}


def _fuzzy_mentions(text: str, measures: Sequence[Measure], taken: list[tuple[int, int]]) -> list[Mention]:
    """Misspelled single-word synonyms ("unemplyment", "povrety"): close matches of words of 6+ letters.  The
    synonyms of one set of measures, and each word's closest one, are kept (a question reads its words several times,
    and the next questions mostly the same words)."""
    key = tuple(id(m) for m in measures)
    cached = _vocab_cache.get(key)
    if cached is None:
        vocab: dict[str, Measure] = {}
        for m in measures:
            for phrase in m.synonyms:
                if " " not in phrase and len(phrase) >= 6:
                    vocab.setdefault(phrase, m)
        if len(_vocab_cache) > 32:
            _vocab_cache.clear()
        cached = _vocab_cache[key] = (vocab, {})
    vocab, closest = cached
    out = []
    for mt in _WORD.finditer(text):
        word = mt.group(0)
        if len(word) < 6 or word in vocab or overlaps(mt.span(), taken) or word in _COMMON_WORDS:
            continue
        close = closest.get(word)
        if close is None:
            close = closest[word] = difflib.get_close_matches(word, list(vocab), n=1, cutoff=0.85)
            if len(closest) > 5000:
                closest.clear()
        if close:
            taken.append(mt.span())
            out.append(Mention(vocab[close[0]], mt.start(), mt.end(), close[0], fuzzy=True))
    return out


#: words that look like misspelled synonyms but are not ("employee", "counties", "insurer" ...)
_COMMON_WORDS = frozenset(
    "counties county states parishes boroughs highest lowest average compare between versus greater higher "
    "lower population populations largest smallest biggest across within people percent percentage ranked "
    "ranking places number numbers employees employers insurer insurers insurance incomes income where which "
    "income's country nation national nationwide america american americans residents resident latest".split()
)


def _resolve_families(text: str, found: list[Mention], measures: Sequence[Measure]) -> list[Mention]:
    by_family: dict[str, list[Measure]] = {}
    for m in measures:
        by_family.setdefault(m.family, []).append(m)
    strong = [f for f in found if not f.weak]
    single = len({f.measure.family for f in strong}) <= 1
    for f in found:
        members = by_family.get(f.measure.family, [])
        if len(members) < 2:
            continue
        if single:
            before, after = text[: f.start], text[f.end:]
        else:
            before, after = text[max(0, f.start - 28): f.start], text[f.end: f.end + 14]
            # in a list ("number of housing units and poverty rate") a cue belongs to its own item only
            seps = list(_LIST_SEPARATOR.finditer(before))
            if seps:
                before = before[seps[-1].end():]
        share = bool(_SHARE_CUE.search(before) or _SHARE_CUE.search(after[:14]))
        count = bool(_COUNT_CUE.search(before))
        if f.measure.is_rate and count and not share:
            alt = next((m for m in members if not m.is_rate), None)
        elif not f.measure.is_rate and share and not count:
            alt = next((m for m in members if m.is_rate), None)
        else:
            alt = None
        if alt is not None:
            f.measure = alt
    # every mention is kept (a measure named twice may be read differently each time: "Latino communities ...
    # the largest Hispanic or Latino population"); callers list each measure once
    return found


#: words between two mentions that make them items of a list ("median household income, Gini index and ...")
_LIST_SEPARATOR = re.compile(r"[,;&]|\b(and|plus|vs|versus|as well as|along with|than|compared (to|with)|against|"
                             r"outnumbers?|outnumbered)\b")


def _drop_superseded(found: list[Mention], text: str = "") -> list[Mention]:
    """Drop a mention when another (non-weak) mention names a more specific measure that supersedes it.

    Supersession exists for one concept read as two mentions ("income for White householders" is not also the
    all-households median); when the question lists the two as separate items ("median household income, Gini
    index and ..."), each is asked for and both stay."""
    def gap(f: Mention, g: Mention) -> str:
        a, b = (f, g) if f.start < g.start else (g, f)
        return text[a.end:b.start] if text else ""

    def one_concept(f: Mention, g: Mention) -> bool:
        # "income for White householders" (also far apart: "households headed by a White householder, which
        # states have the highest median household income"); not items of a list ("median household income, Gini
        # index and ..."), nor a list of what the first one consists of ("graduate degree (master's, ..., or
        # doctorate)")
        between = gap(f, g)
        if not text:
            return True
        if len(between) <= 24 and _LIST_SEPARATOR.search(between):
            return False
        return not (g.start > f.end and len(_LIST_SEPARATOR.findall(between)) >= 2)

    # "a graduate or professional degree (master's, professional or doctorate)": the parts a measure is spelled
    # out into, right after it, are its definition, not measures of their own
    parts = {id(g) for g in found for f in found
             if g is not f and not f.weak and not g.weak and g.start >= f.end and g.start - f.end <= 60
             and g.measure.name != f.measure.name and set(g.measure.numerator) < set(f.measure.numerator)
             and g.measure.denominator == f.measure.denominator}
    found = [f for f in found if id(f) not in parts]
    return [
        f for f in found
        if not any(g is not f and not g.weak and f.measure.name in g.measure.supersedes
                   and (f.weak or one_concept(f, g)) for g in found)
    ]


def match_measures(question: str, measures: Sequence[Measure] | None = None) -> list[Measure]:
    """The measures a question names, in the order it names them (weak words like "people" only when nothing
    more specific is named).  Used by both planners.  ``measures`` defaults to the shipped ones; pass
    ``load_measures(settings)`` to include measures over fetched tables."""
    text = normalize(question, lower=True)
    mentions = find_mentions(text, measures if measures is not None else shipped_measures())
    strong = list(dict.fromkeys(f.measure for f in mentions if not f.weak))
    if strong:
        return strong
    return [f.measure for f in mentions][:1]


def find_gap(question: str, measures: Sequence[Measure] | None = None) -> tuple[Gap, str] | None:
    """The first topic without data that ``question`` asks about, with the words that ask, or None.

    ``measures`` are those available (default: the shipped ones; pass ``load_measures(settings)`` to count
    fetched tables).  Words inside a measure's own phrase do not count ("value of owner-occupied homes" is the
    home value), and a gap whose table the question's measures read is lifted."""
    text = normalize(question, lower=True)
    strong = [m for m in find_mentions(text, measures if measures is not None else shipped_measures(), fuzzy=False)
              if not m.weak]
    inside = [m.span for m in strong]
    for gap in load_gaps():
        if gap.lifted_by(m.measure for m in strong):
            continue
        mt = gap.find(text, inside)
        if mt:
            return gap, mt.group(0)
    return None


__all__ = ["Mention", "find_gap", "find_mentions", "match_measures"]
