"""The census semantic layer: named measures ("poverty rate", "median home value") over the shipped ACS variables.

Why a layer: a rate is only right when its numerator and denominator come from one table and one vintage
(B17025_002E / B17025_001E, never B17025_002E / B01003_001E), and a median is only right at the level the Census
published it.  Writing that knowledge once, in ``measures.yaml``, lets the offline planner build its SQL from it and
lets the Claude planner see the same definitions (name, formula with codes, unit) in its context, so both planners
mean the same thing by "poverty rate".

``load_measures(settings)`` reads the YAML and, given a database, keeps only measures whose codes exist there and
records at which levels (state / county) and in which states every code has rows.  The file's ``gaps`` section
lists the topics with no estimates at all (:func:`load_gaps`), so a planner can say what is missing instead of
guessing.  Finding the measures (and gaps) a question names is :mod:`sage.census.mentions`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import yaml

from ..errors import DataError, NotSetUpError
from ..text import normalize

MEASURES_FILE = Path(__file__).with_name("measures.yaml")

KINDS = ("direct", "sum", "share", "ratio")
UNITS = ("count", "dollars", "percent", "years", "index", "ratio")

#: Totals the Census controls to its population estimates: they carry no sampling error (their published MOE is
#: "*****"), so a share over them may treat the denominator's MOE as 0.
CONTROLLED_TOTALS = frozenset({"B01003_001E"})

#: how the margin of error of each kind is combined (Census ACS handbook, chapter 8 "Calculating measures of error
#: for derived estimates"); shown to users and to the Claude planner
MOE_RULES = {
    "direct": "the published 90% margin of error of the variable, where the extract has it",
    "sum": "sqrt of the sum of the squared MOEs of the parts",
    "share": "Census proportion formula: sqrt(MOE_num^2 - p^2 * MOE_den^2) / den (+ instead of - if negative)",
    "ratio": "Census ratio formula: sqrt(MOE_num^2 + r^2 * MOE_den^2) / den",
}


@dataclass(frozen=True)
class Measure:
    """One named measure: which variables, how they combine, its unit, the words people use for it.

    ``levels`` / ``coverage`` / ``moe_levels`` come from the database (empty when loaded without one):
    ``levels`` are the geography levels where every code has rows, ``coverage[level]`` the state FIPS codes where
    every code has rows at that level, ``moe_levels`` the levels where every (uncontrolled) code has a published
    margin of error.
    """

    name: str
    label: str
    kind: str
    numerator: tuple[str, ...]
    unit: str
    column: str
    category: str
    vintage: str
    family: str = ""
    denominator: tuple[str, ...] = ()
    subtract: tuple[str, ...] = ()
    synonyms: tuple[str, ...] = ()
    weak_synonyms: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    description: str = ""
    notes: str = ""
    levels: tuple[str, ...] = ()
    coverage: Mapping[str, frozenset] = field(default_factory=dict, compare=False, hash=False)
    moe_levels: tuple[str, ...] = ()
    #: reads a table that is not shipped: active only once `census fetch` has loaded it
    requires_fetch: bool = False
    #: who the table counts, as the Census Bureau words it ("Population 25 years and over"); from the database
    universe: str = ""
    #: (measure family, group family) when this is a measure for one population group only
    cross: tuple[str, ...] = ()

    # ------------------------------------------------------------------ descriptors
    @property
    def key(self) -> str:
        return self.name

    @property
    def codes(self) -> tuple[str, ...]:
        """Every variable code the measure reads, in order, without duplicates."""
        seen: list[str] = []
        for code in (*self.numerator, *self.subtract, *self.denominator):
            if code not in seen:
                seen.append(code)
        return tuple(seen)

    @property
    def is_rate(self) -> bool:
        """True for shares and ratios (a percentage computed from two counts)."""
        return self.kind in ("share", "ratio")

    @property
    def additive(self) -> bool:
        """Counts that may be summed across places (a county's people add up to its state's)."""
        return self.unit == "count" and self.kind in ("direct", "sum")

    @property
    def aggregable(self) -> bool:
        """May be computed for a group of places (the US, the 50 states): additive counts and rates of them.

        Medians, means and indexes are not: they must come published for the level asked.
        """
        return self.additive or self.is_rate

    @property
    def moe_method(self) -> str:
        return MOE_RULES[self.kind]

    @property
    def formula(self) -> str:
        """The definition with codes, e.g. ``100 * (B17025_002E) / (B17025_001E)``."""
        num = " + ".join(self.numerator)
        if self.subtract:
            num = f"{num} - ({' + '.join(self.subtract)})" if len(self.subtract) > 1 else f"{num} - {self.subtract[0]}"
        if self.is_rate:
            return f"100 * ({num}) / ({' + '.join(self.denominator)})"
        return num

    def describe(self) -> str:
        """One line for a planner's context: name, formula, unit, vintage, levels."""
        levels = f"; rows at {', '.join(self.levels)} level" if self.levels else ""
        return f"{self.name} = {self.formula} [{self.unit}, ACS {self.vintage}{levels}] — {self.description}"

    # ------------------------------------------------------------------ SQL
    def _part(self, alias: str, codes: Sequence[str], agg: str | None = None) -> str:
        agg = agg or ("SUM" if (self.additive or self.is_rate) else "MAX")
        if len(codes) == 1:
            cond = f"{alias}.variable_code = '{codes[0]}'"
        else:
            cond = f"{alias}.variable_code IN ({', '.join(repr(c) for c in codes)})"
        return f"{agg}({alias}.estimate) FILTER (WHERE {cond})"

    def _value(self, alias: str) -> str:
        num = self._part(alias, self.numerator)
        if self.subtract:
            num = f"({num} - COALESCE({self._part(alias, self.subtract)}, 0))"
        return num

    def condition_expression(self, alias: str = "e") -> str:
        """The unrounded value over rows of ``{alias}`` grouped by place — for HAVING and ORDER BY of thresholds."""
        if self.is_rate:
            den = self._part(alias, self.denominator)
            return f"100.0 * {self._value(alias)} / NULLIF({den}, 0)"
        return self._value(alias)

    def sql_expression(self, alias: str = "e", rounded: bool = True) -> str:
        """The measure as an aggregate over the estimates rows of one place (or of a group of places).

        Rates divide with NULLIF and round to one decimal; additive counts use SUM (so the same expression gives
        a national total over the state rows); medians and indexes use MAX over their single row.
        """
        if self.is_rate and rounded:
            return f"ROUND({self.condition_expression(alias)}, 1)"
        return self.condition_expression(alias)

    def moe_sql_expression(self, alias: str = "e") -> str | None:
        """The combined 90% margin of error as an aggregate like :meth:`sql_expression`, or None when the extract
        has no MOE for some part (see ``moe_levels`` for where it has)."""
        def sq(codes: Sequence[str]) -> str | None:
            live = [c for c in codes if c not in CONTROLLED_TOTALS]
            if not live:
                return None
            cond = (f"{alias}.variable_code = '{live[0]}'" if len(live) == 1
                    else f"{alias}.variable_code IN ({', '.join(repr(c) for c in live)})")
            return f"SUM({alias}.margin_error ^ 2) FILTER (WHERE {cond})"

        if self.kind == "direct":
            if self.numerator[0] in CONTROLLED_TOTALS:
                return None
            return f"MAX({alias}.margin_error) FILTER (WHERE {alias}.variable_code = '{self.numerator[0]}')"
        num_sq = sq((*self.numerator, *self.subtract))
        if num_sq is None:
            return None
        if self.kind == "sum":
            return f"ROUND(SQRT({num_sq}))"
        den = self._part(alias, self.denominator)
        den_sq = sq(self.denominator)
        if den_sq is None:  # controlled denominator: MOE(p) = MOE_num / den
            return f"ROUND(100.0 * SQRT({num_sq}) / NULLIF({den}, 0), 1)"
        p2 = f"({self._value(alias)} / NULLIF({den}, 0)) ^ 2"
        sign = "-" if self.kind == "share" else "+"
        radicand = f"{num_sq} {sign} {p2} * {den_sq}"
        if self.kind == "share":
            radicand = f"CASE WHEN {radicand} < 0 THEN {num_sq} + {p2} * {den_sq} ELSE {radicand} END"
        return f"ROUND(100.0 * SQRT({radicand}) / NULLIF({den}, 0), 1)"

    def has_rows(self, level: str, state_fips: str | None = None) -> bool:
        """Whether every code has rows at ``level`` (in that state, when given).  True when loaded without a DB."""
        if not self.levels and not self.coverage:
            return True
        if level not in self.levels:
            return False
        if state_fips is None:
            return True
        return state_fips in self.coverage.get(level, frozenset())


# ---------------------------------------------------------------------- loading

_lock = threading.Lock()
#: held while the measures of a database are read (seconds at most), so concurrent first questions read them once
_load_lock = threading.Lock()
_yaml_cache: dict[float, list[Measure]] = {}
_db_cache: dict[str, list[Measure]] = {}
#: bumped whenever a database's measures are re-read, so caches built on them (the offline planner's) follow
_db_generation: dict[str, int] = {}


def _tuple(value) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


@functools.lru_cache(maxsize=2)
def _document(path: Path, mtime: float) -> dict:
    """``measures.yaml`` parsed, once per version of the file: its measures and its gaps are both read from it (it
    was parsed twice per process, a tenth of a second of a command-line answer)."""
    try:
        return read_yaml_text(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise DataError(f"{path.name} is not valid YAML ({exc}); fix the file.") from exc


def _read_yaml(path: Path = MEASURES_FILE) -> list[Measure]:
    try:
        mtime = path.stat().st_mtime
    except OSError as exc:
        raise DataError(
            f"The semantic layer file {path.name} is missing from the package; reinstall census-sage."
        ) from exc
    with _lock:
        cached = _yaml_cache.get(mtime)
    if cached is not None:
        return cached
    doc = _document(path, mtime)
    out: list[Measure] = []
    names: set[str] = set()
    for i, raw in enumerate(doc.get("measures") or []):
        try:
            m = Measure(
                name=str(raw["name"]),
                label=str(raw["label"]),
                kind=str(raw["kind"]),
                numerator=_tuple(raw["numerator"]),
                denominator=_tuple(raw.get("denominator")),
                subtract=_tuple(raw.get("subtract")),
                unit=str(raw["unit"]),
                column=str(raw.get("column") or raw["name"]),
                category=str(raw["category"]),
                vintage=str(raw["vintage"]),
                family=str(raw.get("family") or raw["name"]),
                synonyms=tuple(normalize(s, lower=True) for s in _tuple(raw.get("synonyms"))),
                weak_synonyms=tuple(normalize(s, lower=True) for s in _tuple(raw.get("weak_synonyms"))),
                supersedes=_tuple(raw.get("supersedes")),
                description=" ".join(str(raw.get("description") or "").split()),
                notes=" ".join(str(raw.get("notes") or "").split()),
                requires_fetch=bool(raw.get("requires_fetch", False)),
                cross=_tuple(raw.get("cross")),
            )
        except (KeyError, TypeError) as exc:
            raise DataError(f"{path.name}: measure #{i + 1} lacks field {exc}.") from exc
        if m.kind not in KINDS or m.unit not in UNITS:
            raise DataError(f"{path.name}: measure {m.name} has kind {m.kind!r} / unit {m.unit!r}; see the header.")
        if m.is_rate != bool(m.denominator):
            raise DataError(f"{path.name}: measure {m.name}: shares and ratios need a denominator, others none.")
        if m.name in names:
            raise DataError(f"{path.name}: measure name {m.name} is used twice.")
        names.add(m.name)
        out.append(m)
    with _lock:
        _yaml_cache.clear()
        _yaml_cache[mtime] = out
    return out


#: libyaml's safe loader when PyYAML has it (it reads ``measures.yaml`` ten times faster: 14 ms against 140 ms,
#: which every process paid twice, for the measures and for the gaps), else the pure-Python one; both safe
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml_text(text: str) -> Any:
    """``yaml.safe_load`` of ``text``, with libyaml when it is there."""
    return yaml.load(text, Loader=_YAML_LOADER)


def _settings_key(settings) -> str:
    return f"{settings.database_url or ''}|{settings.data_dir}"


def defined_measures() -> list[Measure]:
    """Every measure ``measures.yaml`` defines, over shipped and not-yet-fetched tables alike (no database)."""
    return list(_read_yaml())


def shipped_measures() -> list[Measure]:
    """The measures over the shipped extract (what any set-up database has), without reading a database."""
    return [m for m in _read_yaml() if not m.requires_fetch]


def generation(settings) -> int:
    """How many times this database's measures have been (re-)read; changes after ``load_measures(refresh=True)``."""
    return _db_generation.get(_settings_key(settings), 0)


def load_measures(settings=None, *, refresh: bool = False) -> list[Measure]:
    """The measures of ``measures.yaml``; with ``settings``, only those whose codes are in ``public.variables``
    (measures over fetched tables included), each with its vintage as loaded and the levels, states and MOEs the
    database has rows for (cached per database; ``refresh`` re-reads after a fetch).  A measure whose codes come
    from different vintages is left out: a rate never divides across vintages."""
    base = _read_yaml()
    if settings is None:
        return list(base)
    key = _settings_key(settings)
    with _lock:
        cached = None if refresh else _db_cache.get(key)
    if cached is not None:
        return list(cached)
    with _load_lock:  # sessions asking their first questions at once: one reads the database, the others wait
        with _lock:
            cached = None if refresh else _db_cache.get(key)
        if cached is not None:
            return list(cached)
        return _load_from_database(settings, base, key)


def _load_from_database(settings, base: list[Measure], key: str) -> list[Measure]:
    from ..db import owner  # here, not at the top: reading the YAML alone needs no database modules

    try:
        with owner(settings) as conn:
            listed, rows = read_measure_rows(conn)
    except psycopg.errors.UndefinedTable as exc:
        raise NotSetUpError("The census tables are not there yet: run `python -m sage setup` first.") from exc
    return _from_rows(base, key, listed, rows)


def read_measure_rows(conn: psycopg.Connection) -> tuple[list[tuple], list[tuple]]:
    """What the measures of a database are made from (:func:`measures_from_rows`): every variable with its period
    and universe, and per measure code, level and state how many estimates and margins there are.  The offline
    planner's stored catalog keeps these rows with its own, so that a new process need not count them again."""
    listed = [tuple(r) for r in conn.execute("SELECT variable_code, vintage, universe FROM public.variables")]
    # the measures' codes only: a database with millions of other rows (all tracts of fetched tables) would
    # otherwise be scanned in full (11.6 s at 20 million estimates, benchmarks/bench_scale.py)
    rows = [tuple(r) for r in conn.execute(
        "SELECT e.variable_code, g.level, g.state_fips, count(*), count(e.margin_error) "
        "FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id "
        "WHERE e.estimate IS NOT NULL AND e.variable_code = ANY(%s) GROUP BY 1, 2, 3",
        (sorted({c for m in _read_yaml() for c in m.codes}),),
    )]
    return listed, rows


def measures_from_rows(settings, listed: Sequence[Sequence], rows: Sequence[Sequence]) -> list[Measure]:
    """The measures of ``settings``'s database from rows :func:`read_measure_rows` read (now or stored with the
    planner's catalog), cached as :func:`load_measures` caches them (and the generation raised the same way)."""
    with _load_lock:
        return _from_rows(_read_yaml(), _settings_key(settings), listed, rows)


def _from_rows(base: list[Measure], key: str, listed: Sequence[Sequence], rows: Sequence[Sequence]) -> list[Measure]:
    known = {code: vintage for code, vintage, _ in listed}
    universes = {code: universe or "" for code, _, universe in listed}
    states: dict[tuple[str, str], set[str]] = {}
    moe_full: dict[tuple[str, str], bool] = {}
    for code, level, state_fips, n, n_moe in rows:
        states.setdefault((code, level), set()).add(state_fips)
        moe_full[(code, level)] = moe_full.get((code, level), True) and n_moe == n
    out = []
    for m in base:
        if not all(c in known for c in m.codes):
            continue
        vintages = {known[c] for c in m.codes}
        if len(vintages) != 1:
            continue
        levels, coverage, moe_levels = [], {}, []
        for level in ("nation", "state", "county", "place", "cbsa", "cd", "tract", "zcta"):
            sets = [states.get((c, level)) for c in m.codes]
            if all(sets):
                levels.append(level)
                coverage[level] = frozenset(set.intersection(*[s for s in sets if s is not None]))
                live = [c for c in m.codes if c not in CONTROLLED_TOTALS]
                if live and all(moe_full.get((c, level), False) for c in live):
                    moe_levels.append(level)
        if levels:  # a measure with no rows anywhere cannot answer anything
            out.append(dataclasses.replace(m, vintage=str(vintages.pop() or m.vintage), levels=tuple(levels),
                                           coverage=coverage, moe_levels=tuple(moe_levels),
                                           universe=universes.get(m.numerator[0], "")))
    with _lock:
        _db_cache[key] = out
        _db_generation[key] = _db_generation.get(key, 0) + 1
    return list(out)


@dataclass(frozen=True)
class Gap:
    """A topic the shipped extract has no estimates for, and the words that ask about it."""

    topic: str
    pattern: re.Pattern
    #: the ACS tables that would answer it (a fetch of one lifts the gap)
    tables: tuple[str, ...] = ()

    def lifted_by(self, measures: Iterable[Measure]) -> bool:
        """Whether one of ``measures`` (named by the question) reads a table of this gap."""
        return any(code.split("_")[0] in self.tables for m in measures for code in m.codes)

    def find(self, text: str, inside: Sequence[tuple[int, int]] = ()) -> re.Match | None:
        """The first match in ``text`` (normalised) that does not overlap one of the ``inside`` spans (the phrases
        of measures the question names: "graduate or professional school enrollment" is a measure, not the
        "school enrollment" gap)."""
        for mt in self.pattern.finditer(text):
            # a measure phrase reaching beyond the gap's words is what is asked; one the gap's words contain
            # ("income" in "family income") is not
            if not any(mt.start() < b and a < mt.end() and not (mt.start() <= a and b <= mt.end())
                       for a, b in inside):
                return mt
        return None


_gap_cache: dict[float, list[Gap]] = {}


def load_gaps(path: Path = MEASURES_FILE) -> list[Gap]:
    """The ``gaps`` section of ``measures.yaml``: topics to decline, with what is missing."""
    mtime = path.stat().st_mtime
    cached = _gap_cache.get(mtime)
    if cached is not None:
        return cached
    doc = _document(path, mtime)
    gaps = []
    for i, raw in enumerate(doc.get("gaps") or []):
        try:
            words = "|".join(str(w) for w in raw["words"])
            gaps.append(Gap(str(raw["topic"]), re.compile(r"\b(?:" + words + r")\b"), _tuple(raw.get("tables"))))
        except (KeyError, TypeError, re.error) as exc:
            raise DataError(f"{path.name}: gap #{i + 1} is malformed ({exc}).") from exc
    _gap_cache.clear()
    _gap_cache[mtime] = gaps
    return gaps


def measure_by_name(name: str, measures: Iterable[Measure] | None = None) -> Measure | None:
    for m in measures if measures is not None else _read_yaml():
        if m.name == name:
            return m
    return None


__all__ = [
    "CONTROLLED_TOTALS",
    "MEASURES_FILE",
    "MOE_RULES",
    "Gap",
    "Measure",
    "defined_measures",
    "generation",
    "load_gaps",
    "load_measures",
    "measure_by_name",
    "shipped_measures",
]
