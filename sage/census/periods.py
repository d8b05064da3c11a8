"""The ACS 5-year periods a database holds, and the rules every part follows when it picks among them.

One home for three rules that the planners, the verified-answer library, the answer card and ``census update`` all
need, so that a new release changes all of them at once:

* **the latest period** is the one ``public.estimates`` shows: ``public.variables.vintage`` (``census update``
  moves it for every table at once, :mod:`sage.census.update`); a release loaded but not yet switched to is not
  a period of the database until then;
* **the pair a change compares** is the newest pair of loaded periods that do not overlap (the Census Bureau
  compares only non-overlapping 5-year periods): the latest period, and the latest period that ends before it
  starts (:func:`newest_pair`).  With 2014-2018, 2019-2023 and 2020-2024 loaded it is 2014-2018 and 2020-2024;
  once 2015-2019 is loaded too, 2015-2019 and 2020-2024;
* **the periods an answer names** are those its SQL writes out (``b.vintage = '2014-2018'``); SQL that names none
  reads ``public.estimates``, the latest period (:func:`named_periods`, :func:`older_period_note`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import psycopg

_PERIOD = re.compile(r"^(\d{4})-(\d{4})$")
#: a period written out in SQL, as a string literal: '2019-2023'
_SQL_PERIOD = re.compile(r"'((?:19|20)\d\d)-((?:19|20)\d\d)'")


def bounds(period: str) -> tuple[int, int]:
    """``"2019-2023" -> (2019, 2023)``; ``ValueError`` for anything that is not a period."""
    m = _PERIOD.match(period or "")
    if not m:
        raise ValueError(f"an ACS period looks like '2019-2023', not {period!r}")
    return int(m.group(1)), int(m.group(2))


def overlap(a: str, b: str) -> bool:
    """Whether two periods share a year of survey responses (their difference is then no change over time)."""
    (a0, a1), (b0, b1) = bounds(a), bounds(b)
    return a0 <= b1 and b0 <= a1


def newest_pair(periods: Iterable[str]) -> tuple[str, str] | None:
    """The two periods a change compares: the latest of ``periods`` and the latest one that ends before it starts
    (earlier first); None when no two of them are apart."""
    ordered = sorted({p for p in periods if _PERIOD.match(p or "")}, key=bounds)
    if not ordered:
        return None
    latest = ordered[-1]
    earlier = [p for p in ordered if bounds(p)[1] < bounds(latest)[0]]
    return (earlier[-1], latest) if earlier else None


def common_pair(periods_per_variable: Sequence[Iterable[str]]) -> tuple[str, str] | None:
    """:func:`newest_pair` of the periods every one of the variables has (a change of a rate needs all its parts in
    both periods)."""
    sets = [set(p) for p in periods_per_variable]
    if not sets:
        return None
    return newest_pair(set.intersection(*sets))


def loaded_periods(conn: psycopg.Connection, codes: Iterable[str] | None = None) -> list[str]:
    """Every period of the database (of the variables ``codes`` when given), ascending, as
    ``public.variables.vintages`` lists them: a release ``census update`` is still loading is not among them."""
    wanted = sorted(set(codes)) if codes is not None else None
    rows = conn.execute(
        "SELECT DISTINCT unnest(vintages) FROM public.variables WHERE %(codes)s::text[] IS NULL "
        "OR variable_code = ANY(%(codes)s::text[])", {"codes": wanted}).fetchall()
    return sorted((r[0] for r in rows), key=bounds)


def latest_period(conn: psycopg.Connection) -> str | None:
    """The newest period ``public.estimates`` shows (None in an empty database)."""
    rows = [r[0] for r in conn.execute("SELECT DISTINCT vintage FROM public.variables").fetchall()]
    return max(rows, key=bounds) if rows else None


def change_pair(conn: psycopg.Connection, codes: Iterable[str]) -> tuple[str, str] | None:
    """The pair a change of the variables ``codes`` compares: :func:`newest_pair` of the periods all of them have
    (None when they do not share two periods that are apart)."""
    wanted = sorted(set(codes))
    rows = conn.execute("SELECT vintages FROM public.variables WHERE variable_code = ANY(%s)", (wanted,)).fetchall()
    if len(rows) != len(wanted):
        return None
    return common_pair([r[0] for r in rows])


def named_periods(sql: str) -> list[str]:
    """The periods a query writes out ('2014-2018'), ascending; [] when it names none (it reads the latest)."""
    found = {f"{a}-{b}" for a, b in _SQL_PERIOD.findall(sql or "") if int(b) - int(a) == 4}
    return sorted(found, key=bounds)


_TEXT_PERIOD = re.compile(r"(?<!\d)((?:19|20)\d\d)\s*[-\u2013]\s*((?:19|20)\d\d)(?!\d)")


def unread_period(question: str, sql: str, latest: str | None) -> str | None:
    """A period the question names that its SQL does not read: the SQL names no period (it reads the latest) and
    the question asks for one that is no longer the latest (a verified answer from before a newer release was
    loaded: its SQL would now show the new figures).  None when the SQL reads what is asked."""
    if latest is None or named_periods(sql):
        return None
    other = [p for p in asked_periods(question) if p != latest]
    return other[-1] if other else None


def asked_periods(question: str) -> list[str]:
    """The 5-year periods a question writes out ("in 2019-2023", "2014–2018"), ascending."""
    return sorted({f"{a}-{b}" for a, b in _TEXT_PERIOD.findall(question or "") if int(b) - int(a) == 4}, key=bounds)


def older_period_note(sql: str, latest: str | None) -> str | None:
    """What an answer whose SQL names only periods before ``latest`` must say (a verified answer written before a
    newer release was loaded): "Figures from 2019-2023 (a newer release, 2020-2024, is loaded)."; None when it
    reads the latest period (or names it)."""
    named = named_periods(sql)
    if not named or latest is None or latest in named:
        return None
    newest = max(named, key=bounds)
    if bounds(newest)[1] >= bounds(latest)[1]:
        return None
    figures = f"Compares {named[0]} with {newest}" if len(named) > 1 else f"Figures from {newest}"
    return f"{figures} (a newer release, {latest}, is loaded)."


__all__ = ["asked_periods", "bounds", "change_pair", "common_pair", "latest_period", "loaded_periods", "named_periods",
           "newest_pair", "older_period_note", "overlap", "unread_period"]
