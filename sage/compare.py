"""The rule that says whether two query results answer alike (the scoring rule of ``sage/evaluate.py``, README
"Evaluation"), in a module of its own so that what compares results (the evaluator, the verified-answer library)
needs nothing else.

A predicted result is right when it has the gold rows (same number, in the same order when the gold query orders
them) and every gold column's values appear in some predicted column.  Extra predicted columns are allowed
(a margin of error, a geo_id for the map), column names are not compared (``poverty_rate_pct`` vs ``pct_poor``),
and numbers match within 0.5% or ±0.05, so a rate rounded to one decimal equals the unrounded one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from itertools import product
from typing import Any

#: relative and absolute numeric tolerance
REL_TOL = 0.005
ABS_TOL = 0.05
#: the most column assignments tried before giving up (a guard against pathological wide results)
MAX_ASSIGNMENTS = 5000


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float, Decimal)):
        f = float(value)
        return None if math.isnan(f) else f
    if isinstance(value, str):
        try:
            return float(value.replace(",", "").strip())
        except ValueError:
            return None
    return None


def values_equal(gold: Any, pred: Any) -> bool:
    """Equality of one cell: numbers within tolerance, text case- and space-insensitively, NULL only to NULL."""
    if gold is None or pred is None:
        return gold is None and pred is None
    g, p = _number(gold), _number(pred)
    if g is not None and p is not None and not (isinstance(gold, str) and isinstance(pred, str)):
        return abs(g - p) <= max(ABS_TOL, REL_TOL * abs(g))
    if isinstance(gold, str) and isinstance(pred, str) and g is not None and p is not None:
        if gold.strip() == pred.strip():
            return True
        return abs(g - p) <= max(ABS_TOL, REL_TOL * abs(g))
    return " ".join(str(gold).split()).casefold() == " ".join(str(pred).split()).casefold()


def _column(rows: Sequence[Sequence[Any]], j: int) -> list[Any]:
    return [r[j] for r in rows]


def _sort_key(v: Any):
    n = _number(v)
    if v is None:
        return (0, 0.0, "")
    if n is not None:
        return (1, n, "")
    return (2, 0.0, " ".join(str(v).split()).casefold())


def _multiset_equal(a: list[Any], b: list[Any]) -> bool:
    return all(values_equal(x, y) for x, y in zip(sorted(a, key=_sort_key), sorted(b, key=_sort_key), strict=True))


def _rows_match(gold_rows, pred_rows, mapping: Sequence[int]) -> bool:
    """Unordered: every gold row pairs with a distinct predicted row equal on the mapped columns."""
    used = [False] * len(pred_rows)
    for grow in gold_rows:
        for i, prow in enumerate(pred_rows):
            if used[i]:
                continue
            if all(values_equal(grow[j], prow[k]) for j, k in enumerate(mapping)):
                used[i] = True
                break
        else:
            return False
    return True


def _with_full_names(cols: list[str], rows: Sequence[Sequence[Any]]) -> tuple[list[str], list[tuple]]:
    """A county named by two columns (``county_name``, ``state_name``) is the same row as one named by the Census
    NAME ('Travis County, Texas'), and a place's NAME ('Austin city, Texas') the same as its name within its state
    ('Austin city'): add the other forms as columns, so either form of the same place matches."""
    out: list[tuple] = [tuple(r) for r in rows]
    if "county_name" in cols and "state_name" in cols:
        ci, si = cols.index("county_name"), cols.index("state_name")
        full = [f"{r[ci]}, {r[si]}" if r[ci] is not None and r[si] is not None else r[si] for r in out]
        cols, out = cols + ["name (county_name, state_name)"], [(*r, n) for r, n in zip(out, full, strict=True)]
    if "name" in cols:  # 'Austin city, Texas' is the place 'Austin city' of Texas: its name without the state too
        ni = cols.index("name")
        short = [r[ni].rsplit(", ", 1)[0] if isinstance(r[ni], str) and ", " in r[ni] else r[ni] for r in out]
        state = [r[ni].rsplit(", ", 1)[1] if isinstance(r[ni], str) and ", " in r[ni] else None for r in out]
        cols = cols + ["name (without its state)", "name (its state)"]
        out = [(*r, n, s) for r, n, s in zip(out, short, state, strict=True)]
    return cols, out


def compare_results(
    gold_cols: Sequence[str],
    gold_rows: Sequence[Sequence[Any]],
    pred_cols: Sequence[str],
    pred_rows: Sequence[Sequence[Any]],
    ordered: bool,
) -> tuple[bool, str]:
    """Whether the predicted result answers like the gold one, and if not, why (one short sentence)."""
    gold_rows = [tuple(r) for r in gold_rows]
    pred_rows = [tuple(r) for r in pred_rows]
    pred_cols, pred_rows = _with_full_names(list(pred_cols), pred_rows)
    if len(gold_rows) != len(pred_rows):
        return False, f"{len(pred_rows)} rows instead of {len(gold_rows)}"
    if not gold_cols:
        return True, "no gold columns"
    if not pred_cols:
        return False, "no predicted columns"
    if not gold_rows:
        return True, "both empty"
    candidates: list[list[int]] = []
    for j, name in enumerate(gold_cols):
        gcol = _column(gold_rows, j)
        cands = []
        for k in range(len(pred_cols)):
            pcol = _column(pred_rows, k)
            if ordered:
                same = all(values_equal(x, y) for x, y in zip(gcol, pcol, strict=True))
            else:
                same = _multiset_equal(gcol, pcol)
            if same:
                cands.append(k)
        if not cands:
            return False, f"no predicted column has the values of gold column {name!r}" + (
                " in the gold order" if ordered else "")
        # prefer the predicted column of the same name
        cands.sort(key=lambda k: 0 if str(pred_cols[k]).lower() == str(name).lower() else 1)
        candidates.append(cands)
    if ordered:
        return True, "same rows in the same order"
    tried = 0
    for mapping in product(*candidates):
        tried += 1
        if tried > MAX_ASSIGNMENTS:
            break
        if _rows_match(gold_rows, pred_rows, mapping):
            return True, "same rows"
    return False, "columns match one by one but not row by row"


def gold_is_ordered(gold_sql: str) -> bool:
    """The gold result's order matters when its outermost query sorts (ORDER BY outside any parentheses)."""
    depth = 0
    text = gold_sql.upper()
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and text.startswith("ORDER BY", i):
            return True
        i += 1
    return False


__all__ = ["ABS_TOL", "MAX_ASSIGNMENTS", "REL_TOL", "compare_results", "gold_is_ordered", "values_equal"]
