"""ACS codes, written once: table ids (``B19013``, ``C15002A``, ``B25003PR``) and estimate variable codes
(``B19013_001E``).

A detailed table is a ``B`` (or, collapsed, a ``C``) and five digits, with up to two letters for a race iteration
or Puerto Rico (``B19013A``, ``B05002PR``); an estimate line adds ``_`` three digits ``E`` (its margin of error ends
in ``M``, and is stored beside the estimate, never as a variable of its own).

Example:
    >>> ACS_VARIABLE.findall("e.variable_code IN ('B19013_001E', 'C02003_001E')")
    ['B19013_001E', 'C02003_001E']
    >>> is_variable_code("B19013_001M"), is_table_id("B25003PR")
    (False, True)
"""

from __future__ import annotations

import re

_TABLE = r"[BC]\d{5}[A-Z]{0,2}"

#: an ACS table id on its own
ACS_TABLE = re.compile(rf"\b{_TABLE}\b")
#: an ACS estimate variable code, anywhere in a text (SQL, a chunk's content)
ACS_VARIABLE = re.compile(rf"\b{_TABLE}_\d{{3}}E\b")


def is_table_id(text: object) -> bool:
    """True when ``text`` is exactly an ACS table id."""
    return isinstance(text, str) and ACS_TABLE.fullmatch(text) is not None


def is_variable_code(text: object) -> bool:
    """True when ``text`` is exactly an ACS estimate variable code."""
    return isinstance(text, str) and ACS_VARIABLE.fullmatch(text) is not None


def variable_codes(text: str | None) -> list[str]:
    """The variable codes in ``text``, in order of first appearance, each once."""
    return list(dict.fromkeys(ACS_VARIABLE.findall(text or "")))


__all__ = ["ACS_TABLE", "ACS_VARIABLE", "is_table_id", "is_variable_code", "variable_codes"]
