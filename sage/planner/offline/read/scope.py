"""Clauses that widen or narrow a set of places without naming a place to answer about: "excluding Puerto Rico",
"leave out PR", "with DC counted as a state", "territories included", "the contiguous US", "the lower 48",
"Alaska and Hawaii excluded", "counting PR municipios".

They are read before any place is looked for, and their words are taken out of the question (blocked), so
"Puerto Rico" in "the US including Puerto Rico" is never read as the place asked about.  What they say lands in
:attr:`Parse.include` / :attr:`Parse.exclude` (postal codes) and :attr:`Parse.contiguous`; the frame builder turns
that into the :class:`~sage.planner.offline.frame.frame.GeoSet`'s exclusions for each kind of question.
"""

from __future__ import annotations

import re

from ....text import overlaps
from ..catalog import Catalog
from .parsed import Parse
from .vocabulary import WORDLIKE_ABBRS, join_words

#: the only territory with ACS rows here is Puerto Rico, so "territories" means it
_TERRITORY = r"(?:the\s+)?(?:us\s+)?(?:territories|territory)"
_PR = r"(?:puerto\s+rico(?:s)?(?:\s+municipios)?|pr(?:\s+municipios)?|the\s+pr\s+municipios)"
_DC = r"(?:(?:the\s+)?district\s+of\s+columbia|washington,?\s+d\s?c|d\s?c|the\s+district)"

_EXCLUDE_BEFORE = (r"excluding|exclude|excludes|except\s+for|except|without|not\s+counting|not\s+including|"
                   r"leaving\s+out|leave\s+out|leaves\s+out|left\s+out|omitting|omit|minus|other\s+than|apart\s+from|"
                   r"but\s+not|ignoring|ignore|dropping|take\s+out|taking\s+out|outside\s+of|outside|"
                   r"(?:dont|do\s+not|don\s+t|not)\s+(?:count|include)|never\s+count|no")
_EXCLUDE_AFTER = r"excluded|left\s+out|not\s+included|not\s+counted|omitted|removed|aside|dropped|out\s+of\s+it"
_INCLUDE_STRONG = (r"including|incl|inc|include|includes|counting|count|along\s+with|alongside|together\s+with|"
                   r"as\s+well\s+as|and\s+also")
_INCLUDE_WEAK = r"with|plus|and|\+|&"
_INCLUDE_AFTER = (r"included|too|as\s+well|also\s+counted|counted\s+too|counted\s+in|thrown\s+in|in\s+the\s+mix|"
                  r"counts?\s+too|counts?\s+as\s+well|count\s+also|are\s+included|are\s+in|is\s+included|is\s+in|"
                  r"should\s+count|count")
_AS_STATE = r"(?:as|like)\s+(?:a\s+|the\s+)?(?:51st\s+|52nd\s+)?states?"
#: a set a territory or DC can join or leave: "the 50 states and DC", "the US plus Puerto Rico"
_SET_BEFORE = re.compile(r"\b(states?|nation|nationwide|country|us|usa|united\s+states|america|counties|"
                         r"county\s+equivalents|the\s+50|fifty|all\s+of\s+them)\s*,?\s*$")

CONTIGUOUS_US = re.compile(r"\b(?:the\s+)?(?:contiguous|conterminous|continental)\s+(?:us|usa|u\s?s|united\s+states|"
                           r"america)\b")
CONTIGUOUS_STATES = re.compile(r"\b(?:the\s+)?(?:(?:48|forty\s+eight)\s+)?(?:contiguous|conterminous|continental)"
                               r"(?:\s+(?:48|forty\s+eight))?\s+states\b|\b(?:the\s+)?lower\s+(?:48|forty\s+eight)"
                               r"(?:\s+states)?\b|\b(?:the\s+)?48\s+(?:lower|continental|contiguous|mainland)\s+"
                               r"states\b")


def _target_re(cat: Catalog) -> str:
    """One state reference: Puerto Rico, DC, the territories, a state name, or a postal code."""
    names = sorted(cat.state_by_key, key=len, reverse=True)
    states = "|".join(re.escape(n) for n in names)
    # postal codes that are English words ("in", "or", "me") would turn "other than in Texas" into a clause
    abbrs = "|".join(sorted(a.lower() for a in cat.state_by_abbr if a.lower() not in WORDLIKE_ABBRS))
    return rf"(?:{_PR}|{_DC}|{_TERRITORY}|(?:{states})|(?:{abbrs}))"


def _codes(target: str, cat: Catalog) -> list[str]:
    """Postal codes of the states a list of targets names ("PR and DC" -> ["PR", "DC"])."""
    out = []
    for part in re.split(r"\s*(?:,|\band\b|\bor\b|&|\+|/)\s*", target):
        part = part.strip()
        part = re.sub(r"^the\s+", "", part)
        if not part:
            continue
        if re.fullmatch(_PR, part) or re.fullmatch(_TERRITORY, part) or re.fullmatch(_TERRITORY, "the " + part):
            out.append("PR")
        elif re.fullmatch(_DC, part) or re.fullmatch(_DC, "the " + part):
            out.append("DC")
        elif part in cat.state_by_key:
            out.append(cat.state_by_key[part].abbr)
        elif part.upper() in cat.state_by_abbr:
            out.append(part.upper())
    return out


def read_scope(p: Parse, cat: Catalog) -> None:
    """Find the clauses of the module docstring in ``p.t``; set ``p.include``, ``p.exclude``, ``p.contiguous`` and
    block their spans."""
    t = p.t
    one = _target_re(cat)
    targets = rf"({one}(?:\s*(?:,|\band\b|\bor\b|&|/)\s*{one})*)"
    # only DC and Puerto Rico are ever added to a set (a state is in every set of states anyway)
    extra = rf"(?:{_PR}|{_DC}|{_TERRITORY})"
    added = rf"({extra}(?:\s*(?:,|\band\b|\bor\b|&|/)\s*{extra})*)"
    found: list[tuple[tuple[int, int], str, list[str]]] = []

    def take(span: tuple[int, int], what: str, codes: list[str]) -> None:
        # "don't count Puerto Rico": an inclusion word under a negation leaves out
        if what == "include" and re.search(r"\b(dont|do not|don t|not|never|nor|without)\s*$", t[: span[0]]):
            what = "exclude"
        if codes and not overlaps(span, [s for s, _, _ in found]):
            found.append((span, what, codes))

    for mt in CONTIGUOUS_US.finditer(t):
        take(mt.span(), "contiguous_us", ["AK", "HI", "PR"])
    for mt in CONTIGUOUS_STATES.finditer(t):
        # the level word stays readable ("which lower 48 states ..." is a set of states)
        end = mt.end() - len("states") if mt.group(0).endswith("states") else mt.end()
        take((mt.start(), end), "contiguous_states", ["AK", "HI", "PR", "DC"])
    # "treat DC as a state", "with Puerto Rico counted as a state"
    for mt in re.finditer(rf"\b(?:treat|treating|treated|count|counting|counted|consider|considering|with|including)"
                          rf"\s+{added}\s+(?:counted\s+|treated\s+)?{_AS_STATE}\b", t):
        take(mt.span(), "include", _codes(mt.group(1), cat))
    for mt in re.finditer(rf"\b{added}\s+(?:counted|counts|count|treated|considered|included|is)\s+{_AS_STATE}\b", t):
        take(mt.span(), "include", _codes(mt.group(1), cat))
    # "excluding PR", "leave out Puerto Rico and DC"
    for mt in re.finditer(rf"\b(?:{_EXCLUDE_BEFORE})\s+{targets}", t):
        if _not_a_name_end(t, mt.end()):
            take(mt.span(), "exclude", _codes(mt.group(1), cat))
    # "PR excluded", "leaving PR out"
    for mt in re.finditer(rf"(?:\b(?:with|and)\s+)?\b{targets}\s+(?:{_EXCLUDE_AFTER})\b", t):
        take(mt.span(), "exclude", _codes(mt.group(1), cat))
    for mt in re.finditer(rf"\b(?:leaving|leave|leaves|keeping|keep|keeps|take|taking|with)\s+{targets}\s+out\b", t):
        take(mt.span(), "exclude", _codes(mt.group(1), cat))
    # "including Puerto Rico", "counting PR municipios", "territories included"
    for mt in re.finditer(rf"\b(?:{_INCLUDE_STRONG})\s+{added}", t):
        if _not_a_name_end(t, mt.end()):
            take(mt.span(), "include", _codes(mt.group(1), cat))
    for mt in re.finditer(rf"\b{added}\s+(?:{_INCLUDE_AFTER})\b", t):
        take(mt.span(), "include", _codes(mt.group(1), cat))
    # "the 50 states plus DC", "the US with Puerto Rico": a weak joiner right after a set word
    for mt in re.finditer(rf"(?:\b(?:{_INCLUDE_WEAK})|,)\s+{added}", t):
        if _SET_BEFORE.search(t[: mt.start()]) and _not_a_name_end(t, mt.end()):
            take(mt.span(), "include", _codes(mt.group(1), cat))
    for span, what, codes in sorted(found):
        text = p.tc[span[0]:span[1]]
        if what == "contiguous_us":
            p.exclude.update(codes)
            p.contiguous = True
            p.national = True
            p.notes.append(f"“{text}” read as the 48 contiguous states and DC (Alaska, Hawaii and Puerto Rico "
                           "left out).")
        elif what == "contiguous_states":
            p.exclude.update(codes)
            p.contiguous = True
            p.notes.append(f"“{text}” read as the 48 contiguous states (Alaska, Hawaii, DC and Puerto Rico left "
                           "out).")
        elif what == "exclude":
            p.exclude.update(codes)
            p.include.difference_update(codes)
        else:
            p.include.update(codes)
            p.exclude.difference_update(codes)
        p.blocked.append(span)
        p.scope_spans.append(span)
    if "PR" in p.include and any(re.search(r"municipios?", p.t[a:b]) for a, b in p.scope_spans):
        p.notes.append("Puerto Rico's municipios counted with the counties, as asked.")


def _not_a_name_end(t: str, end: int) -> bool:
    """The target is not the start of a longer name ("Washington County", "New Mexico" after "New")."""
    return not re.match(r"\s+(county|counties|parish|city|borough|census area)\b", t[end:])




def exclusions(p: Parse, base: set[str]) -> frozenset[str]:
    """The state-level rows left out of a set or a sum: ``base`` (Puerto Rico for a US total), DC and Puerto Rico
    for "the 50 states", what the clauses of :mod:`.scope` left out, less what they added back."""
    out = set(base)
    if p.fifty:
        out |= {"DC", "PR"}
    out |= p.exclude
    out -= p.include
    return frozenset(out)


def leave_out_states(p: Parse, states: list, names: dict) -> tuple[list, list[str]]:
    """``states`` (objects with an ``abbr``, or places with a ``state``) less the ones a clause leaves out ("the New
    England states, other than Maine"), and the notes that say so — also of a state left out that is not among them
    ("other than Wyoming": it changes nothing).  The states "the contiguous US" leaves out are that set's own, not a
    clause's about the states named.  ``names``: postal code -> state, for the notes."""
    left_out = p.exclude - p.include - ({"AK", "HI", "PR"} if p.contiguous else set())
    if not left_out or not states:
        return states, []

    def abbr(x) -> str:
        return x.abbr if hasattr(x, "abbr") else x.state.abbr

    gone = [x for x in states if abbr(x) in left_out]
    kept = [x for x in states if abbr(x) not in left_out]
    notes: list[str] = []
    if gone:
        notes.append("Left out, as asked: " + join_words([names[abbr(x)].name for x in gone]) + ".")
    absent = sorted(left_out - {abbr(x) for x in states} - {"PR", "DC"})
    if absent:
        notes.append(join_words([names[a].name for a in absent if a in names])
                     + " is not among the states asked about: leaving it out changes nothing.")
    return kept, notes


__all__ = ["CONTIGUOUS_STATES", "CONTIGUOUS_US", "exclusions", "leave_out_states", "read_scope"]
