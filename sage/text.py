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
    the result is lowercased; ``lower=True`` gives that lowercase form, the one every matcher works on.
    """
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.replace("’", "'").replace("‘", "'").replace("`", "'").replace("“", '"').replace("”", '"')
    # "I'd" would become "Id" (Idaho), "I'll" "Ill": spell the pronoun contractions out first
    text = re.sub(r"\b([Ii])'(d|ll|m|ve)\b",
                  lambda m: m.group(1) + " " + {"d": "would", "ll": "will", "m": "am", "ve": "have"}[m.group(2)], text)
    # "Baltimore city's", "Travis County's": the possessive of a kind of place is that place ("citys" would be no
    # word at all, and the place would be dropped)
    text = re.sub(r"\b(city|county|parish|borough|town|village)'s\b", r"\1", text, flags=re.IGNORECASE)
    text = text.replace("'", "")
    # AP-style state abbreviations ("Maricopa County, Ariz.", "Worcester, Mass."): capitalised, with their period,
    # they are the state's postal code; without the period they stay words ("mass transit", "ill")
    text = _AP_STATE.sub(lambda m: _AP_STATES[m.group(1).replace(" ", "")], text)
    text = re.sub(r"(?<=[A-Za-z])\.", "", text)
    # "w/o health insurance", "ppl w/ a doctorate": shorthand for without and with
    text = re.sub(r"\b[Ww]/[Oo]\b", "without", text)
    text = re.sub(r"\b[Ww]/(?=\s)", "with", text)
    text = re.sub(r"(?<=[A-Za-z])[-/](?=[A-Za-z0-9])", " ", text)
    text = re.sub(r"(?<=[0-9])-(?=[A-Za-z])", " ", text)
    text = text.replace("&", " and ")
    # "the 50 states + DC", "Multnomah + Washington": a plus sign between words is "plus" ("25+" stays)
    text = re.sub(r"(?<=[A-Za-z)])\s*\+\s*(?=[A-Za-z(])", " plus ", text)
    # "Manhattan (New York County)", "White (alone) householder": brackets only group words
    text = re.sub(r"[()\[\]{}]", " ", text)
    # misspellings of the words that carry a question ("wich county", "higest", "lowset")
    text = re.sub(r"\b(wich|whcih|whihc|wihch|whitch)\b", "which", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(wats|wuts|whta|waht|wat|wut)\b", lambda m: "what" + (" is" if m.group(1).endswith("s")
                                                                               else ""), text, flags=re.IGNORECASE)
    text = re.sub(r"\b(higest|highst|hightest|higheest|hieghest)\b", "highest", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(lowset|lowst|lowets|loweest)\b", "lowest", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(largst|larget|lagest)\b", "largest", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(smalest|smallst)\b", "smallest", text, flags=re.IGNORECASE)
    # misspellings of the words that name the most asked measures
    for typo, word in _MEASURE_TYPOS:
        text = re.sub(typo, word, text, flags=re.IGNORECASE)
    # misspellings of "counties" and "cities" that are no other word
    text = re.sub(r"\b(counites|conties|couties|cnties|countes|countis|countise|countys)\b", "counties", text,
                  flags=re.IGNORECASE)
    text = re.sub(r"\b(citys|citties|citeis|cites(?= in\b))\b", "cities", text, flags=re.IGNORECASE)
    # "pct change", "pct of hh": percent
    text = re.sub(r"\bpct\b", "percent", text, flags=re.IGNORECASE)
    # "where Hispanics are a majority of the population": more than half of it (a share over 50 percent)
    text = re.sub(r"\b(?:are|is|make up|makes up|form|forms)\s+(?:a|the)\s+majority(?:\s+of\s+(?:the\s+)?(?:pop|"
                  r"population|residents|people|inhabitants)\b)?", "are more than half", text, flags=re.IGNORECASE)
    # analysts' shorthand: "median HH income chg", "infl-adj", "no infl adj", "Gini idx", "bach+"
    text = re.sub(r"\bno\s+infl(?:ation)?[\s-]*adj(?:usted|ustment)?\b", "not adjusted for inflation", text,
                  flags=re.IGNORECASE)
    text = re.sub(r"\binfl(?:ation)?[\s-]*adj(?:usted)?\b", "inflation adjusted", text, flags=re.IGNORECASE)
    text = re.sub(r"\bchg\b", "change", text, flags=re.IGNORECASE)
    text = re.sub(r"\bidx\b", "index", text, flags=re.IGNORECASE)
    text = re.sub(r"\bbach(?:elors?)?\s*(?:\+|plus\b)", "bachelors degree or higher", text, flags=re.IGNORECASE)
    # newsroom shorthand: "median hh inc", "per cap inc": household income, per capita income
    text = re.sub(r"\bhh\s+inc\b", "household income", text, flags=re.IGNORECASE)
    text = re.sub(r"\bper\s+cap\b(\s+inc\b)?", lambda m: "per capita" + (" income" if m.group(1) else ""), text,
                  flags=re.IGNORECASE)
    # the District's names misspelt ("Distict of Columbia", "Washigton DC"): one letter off, every reader knows it
    text = re.sub(r"\bdist\w{0,6}\s+of\s+colu\w{3,7}\b", "District of Columbia", text, flags=re.IGNORECASE)
    text = re.sub(r"\bwa\w{5,9}n(,?\s+D\.?\s?C\b)", r"Washington\1", text, flags=re.IGNORECASE)
    # "north and south dakota", "North & South Carolina": both states, named in full
    text = re.sub(r"\b(north|south)\s+(and|or|&|vs|versus)\s+(north|south)\s+(dakota|carolina)s?\b",
                  lambda m: f"{m.group(1)} {m.group(4)} {m.group(2)} {m.group(3)} {m.group(4)}", text,
                  flags=re.IGNORECASE)
    text = re.sub(r"\bSaint\b", "St", text, flags=re.IGNORECASE)
    text = re.sub(r"\bSainte\b", "Ste", text, flags=re.IGNORECASE)
    text = re.sub(r"\s+", " ", text).strip()
    if len(text.lower()) != len(text):  # exotic case mappings: keep offsets aligned
        text = "".join(ch if len(ch.lower()) == 1 else "?" for ch in text)
    return text.lower() if lower else text


#: the Associated Press's state abbreviations (AP Stylebook), each with its postal code; the states the AP does not
#: abbreviate (Alaska, Hawaii, Idaho, Iowa, Maine, Ohio, Texas, Utah) have none
_AP_STATES = {
    "Ala": "AL", "Ariz": "AZ", "Ark": "AR", "Calif": "CA", "Colo": "CO", "Conn": "CT", "Del": "DE", "Fla": "FL",
    "Ga": "GA", "Ill": "IL", "Ind": "IN", "Kan": "KS", "Kans": "KS", "Ky": "KY", "La": "LA", "Md": "MD",
    "Mass": "MA", "Mich": "MI", "Minn": "MN", "Miss": "MS", "Mo": "MO", "Mont": "MT", "Neb": "NE", "Nebr": "NE",
    "Nev": "NV", "N.H": "NH", "N.J": "NJ", "N.M": "NM", "N.Y": "NY", "N.C": "NC", "N.D": "ND", "Okla": "OK",
    "Ore": "OR", "Oreg": "OR", "Pa": "PA", "Penn": "PA", "R.I": "RI", "S.C": "SC", "S.D": "SD", "Tenn": "TN",
    "Vt": "VT", "Va": "VA", "Wash": "WA", "W.Va": "WV", "W. Va": "WV", "Wis": "WI", "Wisc": "WI", "Wyo": "WY",
}
_AP_STATE = re.compile(r"(?<![A-Za-z.])(" + "|".join(re.escape(k) for k in sorted(_AP_STATES, key=len, reverse=True))
                       + r")\.(?:s(?![A-Za-z]))?(?=[\s,;:?!)]|$)")  # (also possessive: "Baxter County, Ark.'s")


def overlaps(span: tuple[int, int], spans: Iterable[tuple[int, int]]) -> bool:
    """True when ``span`` shares a character with any of ``spans`` (``(start, end)`` offsets, end excluded)."""
    return any(span[0] < b and a < span[1] for a, b in spans)


__all__ = ["normalize", "overlaps"]
