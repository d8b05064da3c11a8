"""Text normalisation, written once: the form in which questions, place names and measure synonyms are compared.

Example:
    >>> normalize("Doña Ana County’s rent, St. Louis & Prince George's Co.")
    'Dona Ana County rent, St Louis and Prince Georges Co'
    >>> normalize("Saint-Louis per-capita U.S. income", lower=True)
    'st louis per capita us income'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

#: misspellings of measure words that are no other word ("houseing units", "populaton", "medain income")
_MEASURE_TYPOS = (
    (r"\b(houseing|housng|hosing|housin)\b", "housing"),
    (r"\b(populaton|popluation|poplation|populaiton|popualtion|populatoin|populatin)\b", "population"),
    (r"\b(medain|meadian|mediam|medan)\b", "median"),
    (r"\b(incom|imcome|icome|incone)\b", "income"),
    (r"\b(unemployement|unemploymnet|unemplyment|unemploment)\b", "unemployment"),
    (r"\b(povety|povert|poverity)\b", "poverty"),
    (r"\b(vaule|valeu|vlaue|vaue)\b", "value"),
    # dictation's "medium" for "median" ("what is the medium income in cass county"): before a measure's word only
    (r"\bmedium(?=\s+(?:household|family|hh|home|house|housing|gross|rent|age|income|earnings|value|property|"
     r"price|personal|net)\b)", "median"),
)


def normalize(text: str, *, lower: bool = False) -> str:
    """ASCII text: accents, apostrophes and periods after letters gone ("St. Louis" -> "St Louis", "U.S." -> "US",
    "Prince George's" -> "Prince Georges"), curly quotes straight, hyphens and slashes between words as spaces,
    "&" as "and", "Saint" as "St", single spaces.

    The case is kept (the offline planner reads proper names from it), and every character keeps its offset when
    the result is lowercased; ``lower=True`` gives that lowercase form, the one every matcher works on.  The rules
    are compiled once (:data:`_WITH_APOSTROPHES`, :data:`_WORDS`, :data:`_SHORTHAND`): a process normalises every
    synonym of the semantic layer when it starts, so a pattern looked up again on each call cost a tenth of a
    second there.
    """
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.replace("’", "'").replace("‘", "'").replace("`", "'").replace("“", '"').replace("”", '"')
    for pattern, repl in _WITH_APOSTROPHES:
        text = pattern.sub(repl, text)
    text = text.replace("'", "")
    # AP-style state abbreviations ("Maricopa County, Ariz.", "Worcester, Mass."): capitalised, with their period,
    # they are the state's postal code; without the period they stay words ("mass transit", "ill")
    text = _AP_STATE.sub(lambda m: AP_STATES[m.group(1).replace(" ", "")], text)
    for pattern, repl in _WORDS:
        text = pattern.sub(repl, text)
    text = text.replace("&", " and ")
    for pattern, repl in _SHORTHAND:
        text = pattern.sub(repl, text)
    text = _SPACES.sub(" ", text).strip()
    if len(text.lower()) != len(text):  # exotic case mappings: keep offsets aligned
        text = "".join(ch if len(ch.lower()) == 1 else "?" for ch in text)
    return text.lower() if lower else text


_Rule = tuple[re.Pattern[str], Any]
_I = re.IGNORECASE
_CONTRACTIONS = {"d": "would", "ll": "will", "m": "am", "ve": "have"}

#: applied while apostrophes are still there
_WITH_APOSTROPHES: tuple[_Rule, ...] = (
    # "I'd" would become "Id" (Idaho), "I'll" "Ill", "She'd" "Shed", "we'll" "well": spell the pronoun contractions
    # out first
    (re.compile(r"\b([Ii])'(d|ll|m|ve)\b"), lambda m: m.group(1) + " " + _CONTRACTIONS[m.group(2)]),
    (re.compile(r"\b([Ss]he|[Hh]e|[Ww]e|[Tt]hey|[Yy]ou|[Ii]t)'(d|ll)\b"),
     lambda m: m.group(1) + " " + _CONTRACTIONS[m.group(2)]),
    # "Baltimore city's", "Travis County's": the possessive of a kind of place is that place ("citys" would be no
    # word at all, and the place would be dropped)
    (re.compile(r"\b(city|county|parish|borough|town|village)'s\b", _I), r"\1"),
    # "Williams County, ND's population": a postal code's possessive is the state ("NDs" would be no name)
    (re.compile(r"\b([A-Z]{2})'s\b"), r"\1"),
)

#: periods, slashes and hyphens (after the AP abbreviations, which need their periods)
_WORDS: tuple[_Rule, ...] = (
    (re.compile(r"(?<=[A-Za-z])\."), ""),
    # "percent-wise", "population-wise": "in terms of" the word before
    (re.compile(r"(?<=[A-Za-z])-wise\b", _I), ""),
    (re.compile(r"\bpercentwise\b", _I), "percent"),
    # "2014-18", "2019-23": a five-year period written with the end year's last two digits
    (re.compile(r"(?<![\d-])((?:19|20)(\d\d))\s*[-–]\s*(\d\d)(?![\d-])"),
     lambda m: f"{m.group(1)}-{m.group(1)[:2]}{m.group(3)}" if int(m.group(3)) > int(m.group(2)) else m.group(0)),
    # "w/o health insurance", "ppl w/ a doctorate": shorthand for without and with
    (re.compile(r"\b[Ww]/[Oo]\b"), "without"),
    (re.compile(r"\b[Ww]/(?=\s)"), "with"),
    (re.compile(r"(?<=[A-Za-z])[-/](?=[A-Za-z0-9])"), " "),
    (re.compile(r"(?<=[0-9])-(?=[A-Za-z])"), " "),
)

#: words spelt short or misspelt (after "&" became "and")
_SPOKEN_TEENS = ("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen").split()
_SPOKEN_UNITS = ("one two three four five six seven eight nine").split()
_SPOKEN_YEAR_END = (r"(?:twenty(?:[\s-]+(?:" + "|".join(_SPOKEN_UNITS) + r"))?|" + "|".join(_SPOKEN_TEENS)
                    + r"|oh[\s-]+(?:" + "|".join(_SPOKEN_UNITS) + r"))")


def _spoken_number(words: str) -> int:
    """``"twenty three"`` -> 23, ``"fourteen"`` -> 14, ``"oh nine"`` -> 9 (the end of a year said aloud)."""
    parts = words.lower().replace("-", " ").split()
    if parts[0] == "oh":
        return _SPOKEN_UNITS.index(parts[1]) + 1
    if parts[0] == "twenty":
        return 20 + (_SPOKEN_UNITS.index(parts[1]) + 1 if len(parts) > 1 else 0)
    return 10 + _SPOKEN_TEENS.index(parts[0])


#: a year said aloud, as dictation writes it ("twenty fourteen", "two thousand eighteen", "twenty twenty three"), and
#: the end of a period after it ("twenty fourteen to eighteen"): digits, as a period reader reads them
_SPOKEN_YEAR = re.compile(r"\b(?:twenty|two\s+thousand(?:\s+and)?)[\s-]+(" + _SPOKEN_YEAR_END + r")\b", _I)
_SPOKEN_YEAR_AFTER = re.compile(r"\b(20\d\d)(\s*(?:to|through|thru|-)\s*)(" + _SPOKEN_YEAR_END + r")\b", _I)

_SHORTHAND: tuple[_Rule, ...] = (
    (_SPOKEN_YEAR, lambda m: f"20{_spoken_number(m.group(1)):02d}"),
    (_SPOKEN_YEAR_AFTER, lambda m: f"{m.group(1)}{m.group(2)}20{_spoken_number(m.group(3)):02d}"),
    # "% pop growth", "% of pop 25+": a percent sign that follows no number is the word
    (re.compile(r"(?:^|(?<=\s))%(?=\s*[A-Za-z])"), "percent"),
    (re.compile(r"#s\b"), "numbers"),
    (re.compile(r"\bavail\b", _I), "available"),
    (re.compile(r"\bexcl\b", _I), "excluding"),
    (re.compile(r"(?<=\s)em\b"), "them"),
    # "the 50 states + DC", "Multnomah + Washington": a plus sign between words is "plus" ("25+" stays)
    (re.compile(r"(?<=[A-Za-z)])\s*\+\s*(?=[A-Za-z(])"), " plus "),
    # "Manhattan (New York County)", "White (alone) householder": brackets only group words
    (re.compile(r"[()\[\]{}]"), " "),
    # misspellings of the words that carry a question ("wich county", "higest", "lowset")
    (re.compile(r"\b(wich|whcih|whihc|wihch|whitch)\b", _I), "which"),
    (re.compile(r"\b(wats|wuts|whta|waht|wat|wut)\b", _I),
     lambda m: "what" + (" is" if m.group(1).endswith("s") else "")),
    (re.compile(r"\b(higest|highst|hightest|higheest|hieghest)\b", _I), "highest"),
    (re.compile(r"\b(lowset|lowst|lowets|loweest)\b", _I), "lowest"),
    (re.compile(r"\b(largst|larget|lagest)\b", _I), "largest"),
    (re.compile(r"\b(smalest|smallst)\b", _I), "smallest"),
    # misspellings of the words that name the most asked measures
    *((re.compile(typo, _I), word) for typo, word in _MEASURE_TYPOS),
    # misspellings of "counties" and "cities" that are no other word
    (re.compile(r"\b(counites|conties|couties|cnties|countes|countis|countise|countys)\b", _I), "counties"),
    (re.compile(r"\b(citys|citties|citeis|cites(?= in\b))\b", _I), "cities"),
    # texting shorthand: "ppl", "med age", "med hh inc", "w med hh inc over 100k" (a lone lowercase w is "with")
    (re.compile(r"\bppl\b", _I), "people"),
    (re.compile(r"\bmed(?=\s+(?:age|hh|household|home|house|housing|gross|rent|inc|income|earnings|value|family)\b)",
                _I), "median"),
    (re.compile(r"(?<![A-Za-z'])w(?=\s+[a-z])"), "with"),
    # "pct change", "pct of hh": percent
    (re.compile(r"\bpct\b", _I), "percent"),
    # "where Hispanics are a majority of the population": more than half of it (a share over 50 percent)
    (re.compile(r"\b(?:are|is|make up|makes up|form|forms)\s+(?:a|the)\s+majority(?:\s+of\s+(?:the\s+)?(?:pop|"
                r"population|residents|people|inhabitants)\b)?", _I), "are more than half"),
    # analysts' shorthand: "median HH income chg", "infl-adj", "no infl adj", "Gini idx", "bach+"
    (re.compile(r"\bno\s+infl(?:ation)?[\s-]*adj(?:usted|ustment)?\b", _I), "not adjusted for inflation"),
    (re.compile(r"\binfl(?:ation)?[\s-]*adj(?:usted)?\b", _I), "inflation adjusted"),
    (re.compile(r"\bchg\b", _I), "change"),
    (re.compile(r"\bidx\b", _I), "index"),
    (re.compile(r"\bbach(?:elors?)?\s*(?:\+|plus\b)", _I), "bachelors degree or higher"),
    # newsroom shorthand: "median hh inc", "per cap inc": household income, per capita income
    (re.compile(r"\bhh\s+inc\b", _I), "household income"),
    (re.compile(r"\bper\s+cap\b(\s+inc\b)?", _I), lambda m: "per capita" + (" income" if m.group(1) else "")),
    # the District's names misspelt ("Distict of Columbia", "Washigton DC"): one letter off, every reader knows it
    (re.compile(r"\bdist\w{0,6}\s+of\s+colu\w{3,7}\b", _I), "District of Columbia"),
    (re.compile(r"\bwa\w{5,9}n(,?\s+D\.?\s?C\b)", _I), r"Washington\1"),
    # "north and south dakota", "North & South Carolina": both states, named in full
    (re.compile(r"\b(north|south)\s+(and|or|&|vs|versus)\s+(north|south)\s+(dakota|carolina)s?\b", _I),
     lambda m: f"{m.group(1)} {m.group(4)} {m.group(2)} {m.group(3)} {m.group(4)}"),
    (re.compile(r"\bSaint\b", _I), "St"),
    (re.compile(r"\bSainte\b", _I), "Ste"),
)
_SPACES = re.compile(r"\s+")


#: the Associated Press's state abbreviations (AP Stylebook), each with its postal code; the states the AP does not
#: abbreviate (Alaska, Hawaii, Idaho, Iowa, Maine, Ohio, Texas, Utah) have none
AP_STATES = {
    "Ala": "AL", "Ariz": "AZ", "Ark": "AR", "Calif": "CA", "Colo": "CO", "Conn": "CT", "Del": "DE", "Fla": "FL",
    "Ga": "GA", "Ill": "IL", "Ind": "IN", "Kan": "KS", "Kans": "KS", "Ky": "KY", "La": "LA", "Md": "MD",
    "Mass": "MA", "Mich": "MI", "Minn": "MN", "Miss": "MS", "Mo": "MO", "Mont": "MT", "Neb": "NE", "Nebr": "NE",
    "Nev": "NV", "N.H": "NH", "N.J": "NJ", "N.M": "NM", "N.Y": "NY", "N.C": "NC", "N.D": "ND", "Okla": "OK",
    "Ore": "OR", "Oreg": "OR", "Pa": "PA", "Penn": "PA", "R.I": "RI", "S.C": "SC", "S.D": "SD", "Tenn": "TN",
    "Vt": "VT", "Va": "VA", "Wash": "WA", "W.Va": "WV", "W. Va": "WV", "Wis": "WI", "Wisc": "WI", "Wyo": "WY",
}
_AP_STATE = re.compile(r"(?<![A-Za-z.])(" + "|".join(re.escape(k) for k in sorted(AP_STATES, key=len, reverse=True))
                       + r")\.(?:s(?![A-Za-z]))?(?=[\s,;:?!)]|$)")  # (also possessive: "Baxter County, Ark.'s")


def overlaps(span: tuple[int, int], spans: Iterable[tuple[int, int]]) -> bool:
    """True when ``span`` shares a character with any of ``spans`` (``(start, end)`` offsets, end excluded)."""
    return any(span[0] < b and a < span[1] for a, b in spans)


__all__ = ["AP_STATES", "normalize", "overlaps"]
