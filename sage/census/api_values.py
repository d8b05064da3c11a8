"""What one cell of a Census Data API answer means: a number, or one of the Census "special values" (codes such as
-666666666 that stand for "no estimate"), which are never stored as numbers.

Apart from the client (:mod:`sage.census.api`) because it is about the meaning of the data, not about HTTP: the
download (:mod:`sage.census.download`) reads every cell with it.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

#: Census "special values" (Notes on ACS Estimate and Annotation Values).  They are codes, not numbers: each
#: becomes NULL in public.estimates_by_vintage, except the margin -555555555 ("estimate is controlled, no sampling
#: error"), which is a margin of 0 (:func:`parse_margin`).  -222222222 and -333333333 (margin not computable) are
#: NULL margins.
SPECIAL_VALUES = frozenset({-666666666, -888888888, -999999999, -222222222, -333333333, -555555555})
#: the margin of a controlled total: no sampling error, stored as 0
CONTROLLED_MARGIN = -555555555


def parse_value(text: Any) -> Decimal | None:
    """One API cell as a number, or None for ``null``, an empty cell, a special value or anything non-numeric.

    Values arrive as JSON strings (``"59285"``, ``"39.2"``, ``"0.4500"``); a special value is recognised by its
    numeric value, so ``"-666666666.0"`` is caught as well.
    """
    if text is None:
        return None
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        text = repr(text)
    text = str(text).strip()
    if not text:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    if value == value.to_integral_value() and int(value) in SPECIAL_VALUES:
        return None
    return value


def parse_margin(text: Any) -> Decimal | None:
    """One API margin-of-error cell: :func:`parse_value`, except that the controlled-total code -555555555 is a
    margin of 0 (the estimate has no sampling error) rather than NULL."""
    try:
        value = Decimal(str(text).strip())
    except (InvalidOperation, ValueError):
        value = None
    if value is not None and value.is_finite() and value == CONTROLLED_MARGIN:
        return Decimal(0)
    return parse_value(text)


def is_special(text: Any) -> bool:
    """True when ``text`` is one of the Census special-value codes (not merely empty)."""
    try:
        value = Decimal(str(text).strip())
    except (InvalidOperation, ValueError):
        return False
    return value.is_finite() and value == value.to_integral_value() and int(value) in SPECIAL_VALUES


__all__ = [
    "CONTROLLED_MARGIN",
    "SPECIAL_VALUES",
    "is_special",
    "parse_margin",
    "parse_value",
]
