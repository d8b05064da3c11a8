"""Words of the planner's vocabulary misspelt by one letter ("African Amercan", "Kings County (Broolyn)"), written
right before the question is read (:func:`correct`).

Why: a misspelt word of a measure's phrase was not unread — the ledger counts a word one letter off a word of the
frame's measure as read — yet the phrase it belonged to went unmatched, and a shorter phrase answered instead ("Black
or African Amercan population" was read as the Black share of the population).  Correcting the word first lets
the whole phrase match, and the plan's notes say what was corrected.  Only a word nothing else knows is corrected,
and only to the one word of the vocabulary that is a letter dropped, added or swapped away (a letter changed turns
real words into others: "writes" and "whites"): never an English word the planner knows, a place's name, or a plural
of a word the vocabulary has.
"""

from __future__ import annotations

import functools
import re

from ..catalog import Catalog, counties_named
from .vocabulary import COMMON_ENGLISH, COUNTY_ALIASES, KNOWN_WORDS

_WORD = re.compile(r"[A-Za-z]{6,}")


def correct(tc: str, cat: Catalog) -> tuple[str, list[str]]:
    """``tc`` (a question) with its misspelt vocabulary words written right, and a note for each."""
    vocabulary = _vocabulary(cat)
    notes: list[str] = []

    def fix(mt: re.Match) -> str:
        word = mt.group(0)
        right = _correction(word.lower(), vocabulary)
        if right is None or _place_word(word.lower(), cat):
            return word
        written = right.capitalize() if word[0].isupper() else right
        notes.append(f"“{word}” read as “{written}”.")
        return written

    return _WORD.sub(fix, tc), notes


_VOCABULARIES: dict[tuple[int, int], frozenset[str]] = {}


def _vocabulary(cat: Catalog) -> frozenset[str]:
    """The words worth correcting to: those of the measures' wording and the boroughs' names, six letters or more
    (kept per catalog: the same set object keeps :func:`_correction`'s cache warm)."""
    key = (id(cat), cat.generation)
    if key not in _VOCABULARIES:
        _VOCABULARIES.clear()
        _VOCABULARIES[key] = frozenset(w for w in (*cat.measure_vocab, *(k for k in COUNTY_ALIASES if " " not in k))
                                       if len(w) >= 6)
    return _VOCABULARIES[key]


def _place_word(word: str, cat: Catalog) -> bool:
    return bool(word in cat.state_words or word in cat.locality_first_words or cat.localities_named(word)
                or counties_named(word, cat))


@functools.lru_cache(maxsize=4096)
def _correction(word: str, vocabulary: frozenset[str]) -> str | None:
    """The one word of ``vocabulary`` a single edit from ``word`` (a letter dropped or added, or two swapped),
    with the same first letter; None when ``word`` is known, an inflection of a known word, or several are that
    close."""
    if word in vocabulary or word in KNOWN_WORDS or word in COMMON_ENGLISH:
        return None
    if any(w in vocabulary for w in (word[:-1], word + "s", word[:-2], word + "es")):
        return None  # "americans", "households": a plural or a singular, not a misspelling
    found = {w for w in vocabulary if w[0] == word[0] and abs(len(w) - len(word)) <= 1 and _one_edit(word, w)}
    return found.pop() if len(found) == 1 else None


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one letter dropped or added, or two neighbours swapped — not by one letter
    changed, which turns real words into other real words ("writes" and "whites", "rate" and "race")."""
    if a == b:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long_[k]), len(short))
    return short[i:] == long_[i + 1:]


__all__ = ["correct"]
