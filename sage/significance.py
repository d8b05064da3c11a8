"""Which differences in a query result are statistically significant: computed by ``sage`` from the rows, never
by a model.

**Column naming convention (planners follow it).**  Every number that has a margin of error is returned as two
columns: ``<value>`` and ``<value>_moe``, the 90% margin of error in the same unit.  For example::

    SELECT g.name, e.estimate AS median_income, e.margin_error AS median_income_moe ...
    SELECT g.name, sum(e.estimate) AS households, moe_sum(e.estimate, e.margin_error) AS households_moe ...
    SELECT g.name, 100 * x / y AS pct_poor, 100 * moe_proportion(x, y, x_moe, y_moe) AS pct_poor_moe ...
    SELECT g.name, later - earlier AS change, moe_difference(later_moe, earlier_moe) AS change_moe ...

A ``_moe`` column that is NULL (or absent) means the margin is unknown: significance cannot be assessed for that
row, and the answer must say so (:func:`missing_margins`, :func:`missing_margins_sentence`) and never imply it.

Two kinds of comparison (and a difference already computed, tested like a change), each returning
:class:`sage.stats.Significance` items (``to_dict()`` gives the ``"significance"`` entries of ``ask --json``:
``{"a", "b", "difference", "moe", "z", "significant", "level"}``):

* :func:`pairwise` compares places (rows) with one another on one value: ``Z = (X1 − X2) / sqrt(SE1² + SE2²)``,
  ``SE = MOE / 1.645``, significant at 90% when ``|Z| > 1.645`` (research note ``acs-statistics.md`` §1.8);
* :func:`changes` tests each row's change between two periods, already computed with its MOE in the row
  (``a`` = the later period, ``b`` = the earlier): significant when ``|change / SE(change)| > 1.645``.

No multiple-comparison adjustment is made, as in the Census Bureau's own Statistical Testing Tool ([H20] footnote 61).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import combinations
from typing import Any

from .stats import Significance, _num, assess_change, compare

#: a measure in one ACS 5-year period, by the change convention: ``<measure>_2014_2018``
PERIOD_COLUMN = re.compile(r"^(?P<measure>.+)_(?P<start>(19|20)\d\d)_(?P<end>(19|20)\d\d)$")

#: all pairs are tested up to this many rows (12 rows -> 66 pairs); beyond it only neighbours in the ranking
MAX_PAIRWISE_ROWS = 12
MOE_SUFFIX = "_moe"


class Comparisons(list):
    """A ``list[Significance]`` that also says how the pairs were chosen.

    ``adjacent_only`` is True when there were more than :data:`MAX_PAIRWISE_ROWS` comparable rows, so only the
    adjacent pairs of the ranking (highest value first) were tested; ``note`` then says so in words.  ``skipped``
    lists the labels of rows left out because their value is NULL.
    """

    def __init__(self, items=(), *, adjacent_only: bool = False, compared_rows: int = 0,
                 skipped: Sequence[str] = ()) -> None:
        super().__init__(items)
        self.adjacent_only = adjacent_only
        self.compared_rows = compared_rows
        self.skipped = list(skipped)

    @property
    def note(self) -> str | None:
        if not self.adjacent_only:
            return None
        return (
            f"With {self.compared_rows} places, only neighbours in the ranking were tested (each place against the "
            f"next one down), not all {self.compared_rows * (self.compared_rows - 1) // 2} pairs."
        )

    def to_list(self) -> list[dict[str, Any]]:
        return [item.to_dict() for item in self]


def moe_column(value_col: str) -> str:
    """The margin column of ``value_col`` by the naming convention: ``<value>_moe``."""
    return value_col + MOE_SUFFIX


def margin_columns(columns: Sequence[str]) -> dict[str, str]:
    """``{value column: its margin column}`` for every column that has a ``<value>_moe`` sibling in ``columns``."""
    present = set(columns)
    return {c: moe_column(c) for c in columns if not c.endswith(MOE_SUFFIX) and moe_column(c) in present}


def _index(columns: Sequence[str], name: str) -> int:
    try:
        return list(columns).index(name)
    except ValueError:
        raise KeyError(f"the result has no column {name!r} (columns: {', '.join(columns)})") from None


def _labeller(columns: Sequence[str], label_cols: Sequence[str] | str):
    if isinstance(label_cols, str):
        label_cols = [label_cols]
    idx = [_index(columns, c) for c in label_cols]
    if not idx:
        raise ValueError("label_cols must name at least one column")

    def label(row: Sequence[Any]) -> str:
        return ", ".join("" if row[i] is None else str(row[i]) for i in idx)

    return label


def _moe_index(columns: Sequence[str], value_col: str, moe_col: str | None) -> int | None:
    """The margin column's position; None when the result has none (significance cannot be assessed)."""
    name = moe_col or moe_column(value_col)
    if name in columns:
        return _index(columns, name)
    if moe_col is not None:
        raise KeyError(f"the result has no column {moe_col!r} (columns: {', '.join(columns)})")
    return None


def pairwise(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    label_cols: Sequence[str] | str,
    value_col: str,
    moe_col: str | None = None,
    *,
    level: float = 0.9,
) -> Comparisons:
    """Test the places of a result against one another on ``value_col`` (margins in ``moe_col``, by default
    ``<value_col>_moe``).

    Up to :data:`MAX_PAIRWISE_ROWS` rows with a value: every pair, in result order (``a`` the earlier row, ``b``
    the later, ``difference = a − b``).  More rows: the rows are ranked by value, highest first, and each is tested
    against the next (``Comparisons.adjacent_only`` is then True).  Rows whose value is NULL are left out
    (``Comparisons.skipped``); a NULL or absent margin gives entries whose ``significant`` is None (cannot be
    assessed).
    """
    label = _labeller(columns, label_cols)
    vi = _index(columns, value_col)
    mi = _moe_index(columns, value_col, moe_col)
    present, skipped = [], []
    for row in rows:
        value = _num(row[vi], value_col)
        if value is None:
            skipped.append(label(row))
            continue
        present.append((label(row), value, None if mi is None else row[mi]))
    pairs: Iterable[tuple[tuple[Any, float, Any], tuple[Any, float, Any]]]
    if len(present) <= MAX_PAIRWISE_ROWS:
        pairs = combinations(present, 2)
        adjacent = False
    else:
        ranked = sorted(present, key=lambda item: item[1], reverse=True)
        pairs = itertools.pairwise(ranked)
        adjacent = True
    items = [compare(a, xa, ma, b, xb, mb, level) for (a, xa, ma), (b, xb, mb) in pairs]
    return Comparisons(items, adjacent_only=adjacent, compared_rows=len(present), skipped=skipped)


def changes(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    label_cols: Sequence[str] | str,
    change_col: str,
    change_moe_col: str | None = None,
    *,
    later: str = "later period",
    earlier: str = "earlier period",
    level: float = 0.9,
) -> list[Significance]:
    """Test each row's change (``change_col``, with its MOE in ``change_moe_col``, by default
    ``<change_col>_moe``): one :class:`Significance` per row, ``a = "<label> (<later>)"``,
    ``b = "<label> (<earlier>)"``, ``difference`` = the change, significant when ``|change / SE| > Z_level``.

    Name the periods (``later="2019-2023", earlier="2014-2018"``).  A row whose change or margin is NULL gets an
    entry with ``significant`` None (cannot be assessed), so every row is accounted for.
    """
    label = _labeller(columns, label_cols)
    ci = _index(columns, change_col)
    mi = _moe_index(columns, change_col, change_moe_col)
    out = []
    for row in rows:
        place = label(row)
        out.append(
            assess_change(f"{place} ({later})", f"{place} ({earlier})", row[ci], None if mi is None else row[mi], level)
        )
    return out


def missing_margins(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    label_cols: Sequence[str] | str,
    value_col: str,
    moe_col: str | None = None,
) -> list[str]:
    """Labels of the rows that have a value but no margin (the ``_moe`` column is NULL, or the result has none):
    for these, significance cannot be assessed.  Empty when every row with a value has its margin."""
    label = _labeller(columns, label_cols)
    vi = _index(columns, value_col)
    mi = _moe_index(columns, value_col, moe_col)
    return [label(row) for row in rows if row[vi] is not None and (mi is None or row[mi] is None)]


def missing_margins_sentence(labels: Sequence[str], total: int | None = None) -> str | None:
    """The plain sentence an answer gives when margins are missing; None when none are."""
    if not labels:
        return None
    if total is not None and len(labels) == total:
        who = "any of these places" if total > 1 else "this place"
        return (f"The margins of error are not available for {who}, so whether the differences are statistically "
                "significant cannot be assessed.")
    shown = ", ".join(labels[:5]) + (f" and {len(labels) - 5} more" if len(labels) > 5 else "")
    return (f"The margins of error are not available for {shown}, so statistical significance cannot be assessed "
            "for comparisons involving them.")


@dataclass(frozen=True)
class Assessment:
    """What an answer says about significance: the tested pairs (``ask --json``'s ``"significance"``) and a
    sentence for what could not be tested (missing margins) or how the pairs were chosen."""

    items: tuple[dict[str, Any], ...] = ()
    note: str | None = None


def _numeric(rows: Sequence[Sequence[Any]], j: int) -> bool:
    values = [r[j] for r in rows if r[j] is not None]
    return bool(values) and all(isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) for v in values)


def assess(columns: Sequence[str], rows: Sequence[Sequence[Any]], kind: str | None, *, later: str = "",
           earlier: str = "", level: float = 0.9) -> Assessment:
    """The significance of what a result compares: ``kind`` ``"places"`` tests the rows against one another on
    each value that has (or should have) a margin; ``"change"`` tests each row's ``change`` (``change_moe``);
    ``"difference"`` tests the one row's ``difference`` (``difference_moe``) of ``first_place`` minus
    ``second_place``; None tests nothing.  Label columns are the non-numeric ones.  Never raises on an unexpected
    result shape: it then says nothing rather than something wrong."""
    if kind is None or len(rows) < 1:
        return Assessment()
    cols = list(columns)
    labels = [c for j, c in enumerate(cols) if not _numeric(rows, j) and not c.endswith(MOE_SUFFIX)
              and c not in ("geo_id", "fips")]
    if not labels:
        return Assessment()
    try:
        if kind == "difference":  # one row: first_place, second_place, ..., difference, difference_moe
            if "difference" not in cols or "first_place" not in cols or "second_place" not in cols:
                return Assessment()
            row = rows[0]
            moe = row[cols.index("difference_moe")] if "difference_moe" in cols else None
            item = assess_change(str(row[cols.index("first_place")]), str(row[cols.index("second_place")]),
                                 row[cols.index("difference")], moe, level)
            note = None if moe is not None else missing_margins_sentence(
                [str(row[cols.index("first_place")]), str(row[cols.index("second_place")])], 2)
            return Assessment((item.to_dict(),), note)
        if kind == "change":
            change_cols = [c for c in cols if (c == "change" or c.startswith("change_")) and not c.endswith(MOE_SUFFIX)]
            if not change_cols:
                return Assessment()
            items: list[dict[str, Any]] = []
            missing: list[str] = []
            for c in change_cols:
                found = changes(cols, rows, labels, c, later=later or "later period",
                                earlier=earlier or "earlier period", level=level)
                items += [dict(x.to_dict(), measure=c) if len(change_cols) > 1 else x.to_dict() for x in found]
                missing += missing_margins(cols, rows, labels, c)
            return Assessment(tuple(items), missing_margins_sentence(sorted(set(missing)), len(rows)))
        if len(rows) < 2:
            return Assessment()
        values = [c for j, c in enumerate(cols) if c not in labels and not c.endswith(MOE_SUFFIX)
                  and c not in ("geo_id",) and _numeric(rows, j)]
        with_margin = [c for c in values if moe_column(c) in cols]
        tested = with_margin or values[:1]
        items = []
        notes: list[str] = []
        for c in tested:
            found = pairwise(cols, rows, labels, c, level=level)
            items += [dict(x.to_dict(), measure=c) if len(tested) > 1 else x.to_dict() for x in found]
            if found.note:
                notes.append(found.note)
            sentence = missing_margins_sentence(missing_margins(cols, rows, labels, c), len(rows))
            if sentence:
                notes.append(sentence)
        return Assessment(tuple(items), " ".join(dict.fromkeys(notes)) or None)
    except (KeyError, ValueError, TypeError):
        return Assessment()


def change_periods(columns: Sequence[str]) -> tuple[str, str] | None:
    """The two periods a change result compares, earlier first (``("2014-2018", "2019-2023")``): a ``change``
    column beside one measure's columns for two periods (``<measure>_2014_2018``, ``<measure>_2019_2023``);
    None for any other result."""
    if "change" not in columns:
        return None
    found: dict[str, list[tuple[str, str]]] = {}
    for c in columns:
        m = PERIOD_COLUMN.match(c)
        if m and int(m["start"]) < int(m["end"]) and not c.endswith(MOE_SUFFIX):
            found.setdefault(m["measure"], []).append((m["start"], m["end"]))
    pairs = [sorted(p) for p in found.values() if len(p) == 2]
    if len(pairs) != 1:
        return None
    (s1, e1), (s2, e2) = pairs[0]
    return f"{s1}-{e1}", f"{s2}-{e2}"


# --------------------------------------------------------------------------------------------------------------
# in words, for the answer card

#: pairs (or places) named in a summary before "and N more"
MAX_NAMED = 4


def sentence(items: Sequence[dict[str, Any]], note: str | None = None, *, change: bool = False) -> str | None:
    """What an answer says about significance, in plain words: from the tested ``items`` (``Answer.significance``)
    and the ``note`` on what could not be tested or how the pairs were chosen (``Answer.significance_note``).

    * two places (one pair): "The difference is (not) statistically significant at the 90% level (Z = 7.64).";
    * more places: how many pairs differ significantly and which do not (or which do, when they are fewer), with
      the note when only neighbours in the ranking were tested;
    * a change (``change=True``): "The change is (not) statistically significant at the 90% level (Z = 9.88).",
      or, for several places, which changes are and which are not;
    * missing margins: the note's sentence, and nothing is said about the pairs that were not tested.

    None when nothing was tested and there is no note: significance is never implied without a test.
    """
    tested = [i for i in items if i.get("significant") is not None]
    if not tested:
        return note
    by_measure: dict[str | None, list[dict[str, Any]]] = {}
    for item in tested:
        by_measure.setdefault(item.get("measure"), []).append(item)
    parts = []
    for measure, group in by_measure.items():
        text = _change_words(group) if change else _pair_words(group)
        if measure and len(by_measure) > 1:
            text = f"{measure.replace('_', ' ').capitalize()}: {text[0].lower()}{text[1:]}"
        parts.append(text)
    return " ".join(parts + ([note] if note else []))


def _level(item: dict[str, Any]) -> str:
    return f"{float(item.get('level') or 0.9) * 100:.0f}%"


def _z(item: dict[str, Any]) -> str:
    z = item.get("z")
    return f"Z = {z:.2f}" if isinstance(z, (int, float)) else "the margins of error are zero"


def _pair_words(items: list[dict[str, Any]]) -> str:
    if len(items) == 1:
        (item,) = items
        verdict = "is" if item["significant"] else "is not"
        return f"The difference {verdict} statistically significant at the {_level(item)} level ({_z(item)})."
    level = _level(items[0])
    yes = [i for i in items if i["significant"]]
    no = [i for i in items if not i["significant"]]
    n = len(items)
    if not no:
        return f"All {n} pairs tested differ significantly at the {level} level."
    if not yes:
        return f"None of the {n} pairs tested differs significantly at the {level} level."
    verb = "differs" if len(yes) == 1 else "differ"
    head = f"Of the {n} pairs tested, {len(yes)} {verb} significantly at the {level} level"
    if len(no) <= len(yes):
        return f"{head}; {'this does' if len(no) == 1 else 'these do'} not: {_pairs(no)}."
    return f"{head}: {_pairs(yes)}."


def _pairs(items: list[dict[str, Any]]) -> str:
    named = "; ".join(f"{i['a']} and {i['b']}" for i in items[:MAX_NAMED])
    return named + (f" and {len(items) - MAX_NAMED} more" if len(items) > MAX_NAMED else "")


def _change_words(items: list[dict[str, Any]]) -> str:
    if len(items) == 1:
        (item,) = items
        verdict = "is" if item["significant"] else "is not"
        return f"The change {verdict} statistically significant at the {_level(item)} level ({_z(item)})."
    level = _level(items[0])
    yes = [_place(i) for i in items if i["significant"]]
    no = [_place(i) for i in items if not i["significant"]]
    n = len(items)
    if not no:
        return f"All {n} changes are statistically significant at the {level} level."
    if not yes:
        return f"None of the {n} changes is statistically significant at the {level} level."
    verb = "is" if len(yes) == 1 else "are"
    return (f"Of the {n} changes, {len(yes)} {verb} statistically significant at the {level} level "
            f"({_names(yes)}); {len(no)} {'is' if len(no) == 1 else 'are'} not ({_names(no)}).")


def _place(item: dict[str, Any]) -> str:
    """A change's place: its label without the period (``Travis County, Texas (2019-2023)``)."""
    label = str(item["a"])
    return label[: label.rfind(" (")] if label.endswith(")") and " (" in label else label


def _names(names: list[str]) -> str:
    return "; ".join(names[:MAX_NAMED]) + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")


__all__ = [
    "Assessment",
    "assess",
    "Comparisons",
    "MAX_PAIRWISE_ROWS",
    "PERIOD_COLUMN",
    "change_periods",
    "changes",
    "margin_columns",
    "missing_margins",
    "missing_margins_sentence",
    "moe_column",
    "pairwise",
    "sentence",
]
