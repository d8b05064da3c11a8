"""What the offline planner knows about the database: states, counties, measures and which rows exist.

Read once per settings from the database and cached (a `census fetch` bumps the semantic layer's generation and
the catalog is read again), so planning a question needs no query of its own."""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from ..census import semantic
from ..census.catalog_search import table_title
from ..census.semantic import Measure, load_measures
from ..errors import NotSetUpError
from .vocabulary import FUNCTION_WORDS, geo_key


@dataclass(frozen=True)
class State:
    fips: str
    abbr: str
    name: str
    geo_id: str


@dataclass(frozen=True)
class County:
    geo_id: str
    name: str  # 'Fairfax County', 'Baltimore city'
    state: State
    base: str  # normalised name without the suffix: 'fairfax', 'baltimore'
    suffix: str  # normalised suffix: 'county', 'city', 'parish', ...
    population: float

    @property
    def label(self) -> str:
        return f"{self.name}, {self.state.abbr}"


_SUFFIXES = ("city and borough", "census area", "planning region", "municipality", "municipio", "borough",
             "parish", "county", "city")


@dataclass
class Catalog:
    """What the planner knows about the database: measures, places, which rows exist."""

    measures: list[Measure]
    states: list[State]
    counties: list[County]
    has_rows: dict[str, frozenset]  # variable code -> geo_ids with an estimate
    #: measures defined over tables that are not loaded (a question about them is declined with ``needs_fetch``)
    inactive: list[Measure] = field(default_factory=list)
    data_path: Path | None = None
    generation: int = 0  # the semantic layer's generation this was built from (a fetch bumps it)
    state_by_key: dict[str, State] = field(default_factory=dict)
    state_by_abbr: dict[str, State] = field(default_factory=dict)
    county_index: dict[tuple[str, str], list[County]] = field(default_factory=dict)
    counties_by_state: dict[str, list[County]] = field(default_factory=dict)
    bases_by_suffix: dict[str, list[str]] = field(default_factory=dict)
    state_pattern: re.Pattern[str] = field(init=False)  # every state name, longest first (built below)

    def __post_init__(self) -> None:
        for s in self.states:
            self.state_by_key[geo_key(s.name)] = s
            self.state_by_abbr[s.abbr] = s
        for c in self.counties:
            keys = {c.base}
            if c.base.startswith("st "):
                keys.add("saint " + c.base[3:])
            for k in keys:
                self.county_index.setdefault((k, c.suffix), []).append(c)
            self.counties_by_state.setdefault(c.state.fips, []).append(c)
        for (base, suffix) in self.county_index:
            self.bases_by_suffix.setdefault(suffix, []).append(base)
        names = sorted(self.state_by_key, key=len, reverse=True)
        self.state_pattern = re.compile(r"(?<![a-z])(" + "|".join(re.escape(n) for n in names) + r")s?(?![a-z])")

    @functools.cached_property
    def state_words(self) -> frozenset:
        """Every word of every state name (so "new", "north" are not read as unknown places)."""
        return frozenset(w for name in self.state_by_key for w in name.split())

    @functools.cached_property
    def measure_vocab(self) -> frozenset:
        """Every word of every measure's wording, less function words."""
        words: set[str] = set()
        for m in self.measures:
            for s in (*m.synonyms, *m.weak_synonyms):
                words.update(s.split())
        return frozenset(words - FUNCTION_WORDS)

    def measure(self, name: str) -> Measure | None:
        return next((m for m in self.measures if m.name == name), None)

    @functools.cached_property
    def by_geo_id(self) -> dict[str, State | County]:
        out: dict[str, State | County] = {s.geo_id: s for s in self.states}
        out.update({c.geo_id: c for c in self.counties})
        return out

    def table_title(self, table_id: str) -> str | None:
        """The title of an ACS table (loaded or not) from the offline catalog the project ships."""
        return table_title(self.data_path, table_id) if self.data_path else None

    def has(self, measure: Measure, geo_id: str) -> bool:
        return all(geo_id in self.has_rows.get(code, ()) for code in measure.codes)


_catalogs: dict[str, Catalog] = {}
_catalog_lock = threading.Lock()
#: held while a catalog is read from the database, so concurrent first questions read it once
_load_lock = threading.Lock()


def _split_county(name: str) -> tuple[str, str]:
    key = geo_key(name)
    for suffix in _SUFFIXES:
        if key.endswith(" " + suffix):
            return key[: -len(suffix) - 1].strip(), suffix
    return key, ""


#: the levels the catalog has places for (``State``, ``County``): coverage is read for their rows only, and for the
#: measures' codes only.  Reading every geo_id of every variable costs 27 s and 2.6 GB at 20 million estimates
#: (benchmarks/bench_scale.py), for rows the planner never looks up.
PLACE_LEVELS = ("state", "county")


def _read_catalog(conn: psycopg.Connection, codes: list[str]):
    """The states and counties, which of them have each of ``codes``, and county populations (to order ambiguous
    names)."""
    levels = list(PLACE_LEVELS)
    geo = conn.execute(
        "SELECT geo_id, level, state_fips, state_abbr, state_name, county_name FROM public.geography "
        "WHERE level = ANY(%s)", (levels,)
    ).fetchall()
    have = conn.execute(
        "SELECT e.variable_code, array_agg(e.geo_id) FROM public.estimates e "
        "JOIN public.geography g ON g.geo_id = e.geo_id "
        "WHERE e.estimate IS NOT NULL AND e.variable_code = ANY(%s) AND g.level = ANY(%s) GROUP BY 1",
        (codes, levels),
    ).fetchall()
    pop: dict[str, Any] = dict(conn.execute(
        "SELECT e.geo_id, e.estimate FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id "
        "WHERE e.variable_code = 'B01003_001E' AND g.level = 'county'"
    ).fetchall())
    return geo, have, pop


def load_catalog(settings) -> Catalog:
    """Read places, measures and row coverage from the database once per settings (owner connection)."""
    key = f"{settings.database_url or ''}|{settings.data_dir}"
    with _catalog_lock:
        cat = _catalogs.get(key)
    if cat is not None and cat.generation == semantic.generation(settings):
        return cat
    with _load_lock:  # sessions asking their first questions at once: one reads the database, the others wait
        with _catalog_lock:
            cat = _catalogs.get(key)
        if cat is not None and cat.generation == semantic.generation(settings):
            return cat
        return _read(settings, key)


def _read(settings, key: str) -> Catalog:
    from ..db import owner

    measures = load_measures(settings)
    try:
        with owner(settings) as conn:
            geo, have, pop = _read_catalog(conn, sorted({c for m in measures for c in m.codes}))
    except psycopg.errors.UndefinedTable as exc:
        raise NotSetUpError("The census tables are not there yet: run `python -m sage setup` first.") from exc
    states = [State(r[2], r[3], r[4], r[0]) for r in geo if r[1] == "state"]
    by_fips = {s.fips: s for s in states}
    counties = []
    for geo_id, level, state_fips, _abbr, _sname, county_name in geo:
        if level != "county" or state_fips not in by_fips or not county_name:
            continue
        base, suffix = _split_county(county_name)
        counties.append(County(geo_id, county_name, by_fips[state_fips], base, suffix, float(pop.get(geo_id) or 0)))
    active = {m.name for m in measures}
    inactive = [m for m in semantic.defined_measures() if m.name not in active]
    cat = Catalog(measures, states, counties, {code: frozenset(ids) for code, ids in have}, inactive=inactive,
                  data_path=settings.data_path,
                  generation=semantic.generation(settings))
    with _catalog_lock:
        _catalogs[key] = cat
    return cat


# ---------------------------------------------------------------------------------------------------------------
# lookups used while reading a question


def counties_named(word: str, cat: Catalog, state: State | None = None) -> list[County]:
    """Counties whose name without its suffix is ``word`` ("baltimore" -> Baltimore County and Baltimore city),
    largest first — for "did you mean" suggestions."""
    out = [c for (base, _s), cs in cat.county_index.items() if base == word for c in cs
           if state is None or c.state.fips == state.fips]
    return sorted(set(out), key=lambda c: -c.population)


def state_words(cat: Catalog) -> frozenset:
    return cat.state_words


def is_measure_word(word: str, cat: Catalog) -> bool:
    """Whether ``word`` belongs to some measure's wording (so it is not an unknown place name)."""
    return word in cat.measure_vocab


