"""What the offline planner knows about the database: states, counties, measures and which rows exist.

Built once per data generation (at setup, after a ``census fetch``, or by the first process that finds none) and
stored in the database (:mod:`.catalog_store`); a process reads the stored copy once and keeps it (a ``census
fetch`` in the process bumps the semantic layer's generation and it is read again), so planning a question needs
no query of its own."""

from __future__ import annotations

import contextlib
import functools
import gc
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import psycopg

from ...census import semantic
from ...census.catalog_search import table_title
from ...census.semantic import CONTROLLED_TOTALS, Measure
from ...errors import NotSetUpError
from .read.vocabulary import FUNCTION_WORDS, geo_key


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


class Locality(NamedTuple):
    """A Census place — a city, town, village, borough or census-designated place (CDP).

    A named tuple, not a dataclass: a catalog holds some 32,000 of them, made on every load of it, and a tuple is
    made four times faster (a load is what a command-line question waits for)."""

    geo_id: str
    name: str  # 'Austin city', 'Urban Honolulu CDP', 'Nashville-Davidson metropolitan government (balance)'
    state: State
    bases: tuple[str, ...]  # normalised names it is called by: ('austin',), ('urban honolulu', 'honolulu')
    kind: str  # 'city', 'town', 'village', 'borough', 'cdp', 'municipality', 'government', ...
    population: float

    @property
    def label(self) -> str:
        return f"{self.name}, {self.state.abbr}"

    @property
    def full_name(self) -> str:
        """The Census NAME, as geography.name holds it: 'Austin city, Texas'."""
        return f"{self.name}, {self.state.name}"

    @property
    def is_cdp(self) -> bool:
        return self.kind == "cdp"


#: the kinds at the end of a Census place name (longest first), and how the planner calls them
_PLACE_KINDS = (
    ("metropolitan government (balance)", "government"), ("consolidated government (balance)", "government"),
    ("unified government (balance)", "government"), ("metro government (balance)", "government"),
    ("city and borough", "city"), ("city (balance)", "city"), ("urban county", "county"), ("zona urbana", "cdp"),
    ("(balance)", "government"), ("municipality", "municipality"), ("corporation", "city"), ("plantation", "town"),
    ("comunidad", "cdp"), ("township", "town"), ("borough", "borough"), ("village", "village"), ("town", "town"),
    ("city", "city"), ("cdp", "cdp"),
)


@functools.cache
def _place_kind_keys() -> tuple[tuple[str, str], ...]:
    """The kinds' normalised forms, once: the catalog reads some 32,000 place names on every load."""
    return tuple((geo_key(suffix), what) for suffix, what in _PLACE_KINDS)


def _minus_population(loc: Locality) -> float:
    return -loc.population


def place_bases(name: str) -> tuple[tuple[str, ...], str]:
    """The names a Census place is called by, and its kind: "Nashville-Davidson metropolitan government
    (balance)" -> (("nashville davidson", "nashville"), "government"); "Urban Honolulu CDP" ->
    (("urban honolulu", "honolulu"), "cdp"); "Kailua CDP (Honolulu County)" -> (("kailua",), "cdp")."""
    key = geo_key(re.sub(r"\s*\((?![^)]*balance)[^)]*\)\s*$", "", name))
    kind = ""
    for s, what in _place_kind_keys():
        if key.endswith(" " + s):
            key, kind = key[: -len(s) - 1].strip(), what
            break
    bases = [key]
    if kind == "government" or key.startswith("urban "):
        # "nashville davidson", "louisville jefferson county", "athens clarke county", "urban honolulu"
        first = re.split(r"\s(?=(davidson|jefferson|clarke|richmond|silver)\b)", key)[0]
        bases.append(first.replace("urban ", "", 1) if key.startswith("urban ") else first)
    if key.endswith(" city") and kind == "city":  # "Boise City city", "Carson City"
        bases.append(key[: -len(" city")])
    return tuple(dict.fromkeys(b for b in bases if b)), kind


_SUFFIXES = ("city and borough", "census area", "planning region", "municipality", "municipio", "borough",
             "parish", "county", "city")


@dataclass(frozen=True)
class Unit:
    """A row of a level asked for by its code or its principal city — a census tract, a ZIP code tabulation area, a
    congressional district, a metro area — read only once `census fetch --geographies` has loaded that level."""

    geo_id: str
    level: str
    name: str  # the Census NAME: 'Census Tract 11; Travis County; Texas', 'ZCTA5 78701'
    state_abbr: str | None = None
    county_geo_id: str | None = None  # a tract's county ('0500000US48453')

    @property
    def label(self) -> str:
        return self.name


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
    #: Census places (cities, towns, CDPs) and the levels with rows in public.geography
    localities: list[Locality] = field(default_factory=list)
    levels: frozenset[str] = frozenset({"state", "county"})
    generation: int = 0  # the semantic layer's generation this was built from (a fetch bumps it)
    #: the rows of loaded levels asked for by code (tract, zcta, cd, cbsa), by level
    units: dict[str, tuple[Unit, ...]] = field(default_factory=dict)
    #: the ACS periods each variable has, oldest first ("2014-2018", "2019-2023"), and for each period other than
    #: a variable's latest the places with a value then
    periods: dict[str, tuple[str, ...]] = field(default_factory=dict)
    earlier_rows: dict[tuple[str, str], frozenset] = field(default_factory=dict)
    #: (variable, earlier period) pairs with published margins of error
    earlier_moe: frozenset[tuple[str, str]] = frozenset()
    state_by_key: dict[str, State] = field(default_factory=dict)
    state_by_abbr: dict[str, State] = field(default_factory=dict)
    county_index: dict[tuple[str, str], list[County]] = field(default_factory=dict)
    counties_by_state: dict[str, list[County]] = field(default_factory=dict)
    bases_by_suffix: dict[str, list[str]] = field(default_factory=dict)
    state_pattern: re.Pattern[str] = field(init=False)  # every state name, longest first (built below)
    #: normalised place name -> the places called by it (all states), largest first
    localities_by_base: dict[str, list[Locality]] = field(default_factory=dict)

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
        # largest first under every name: one stable sort of all places, then each name's list in that order (the
        # same lists as sorting each, without 21,000 sorts)
        by_base = self.localities_by_base
        for loc in sorted(self.localities, key=_minus_population):
            for b in loc.bases:
                found = by_base.get(b)
                if found is None:
                    by_base[b] = [loc]
                else:
                    found.append(loc)
                if b.startswith("st "):
                    by_base.setdefault("saint " + b[3:], []).append(loc)

    @functools.cached_property
    def counties_by_base(self) -> dict[str, list[County]]:
        """The counties by their name without its suffix, whatever the suffix ("baltimore": the county and the
        city), so looking one up does not scan every county."""
        out: dict[str, list[County]] = {}
        for (base, _suffix), cs in self.county_index.items():
            out.setdefault(base, []).extend(cs)
        return out

    @functools.cached_property
    def localities_by_full_name(self) -> dict[str, Locality]:
        """Places whose Census name says which one of several it is ("Lakeside CDP (San Diego County)"), by their
        normalised name with the state's postal code and with its name: how the answer to "which one?" names
        them."""
        out: dict[str, Locality] = {}
        for loc in self.localities:
            if "(" in loc.name:
                out[geo_key(f"{loc.name}, {loc.state.abbr}")] = loc
                out[geo_key(f"{loc.name}, {loc.state.name}")] = loc
        return out

    @functools.cached_property
    def single_word_bases(self) -> list[str]:
        """Place names of one word (for matching a misspelt name)."""
        return sorted(b for b in self.localities_by_base if " " not in b)

    @functools.cached_property
    def locality_first_words(self) -> frozenset:
        """The first word of every place name of several words ("las" of Las Vegas, "fort" of Fort Worth)."""
        return frozenset(b.split()[0] for b in self.localities_by_base if " " in b)

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

    def unit(self, geo_id: str) -> Unit | None:
        """The row of a coded level with this GEO_ID (None when that level is not loaded)."""
        return self.unit_by_id.get(geo_id)

    @functools.cached_property
    def unit_by_id(self) -> dict[str, Unit]:
        return {u.geo_id: u for us in self.units.values() for u in us}

    def measure(self, name: str) -> Measure | None:
        return next((m for m in self.measures if m.name == name), None)

    @functools.cached_property
    def by_geo_id(self) -> dict[str, State | County | Locality]:
        out: dict[str, State | County | Locality] = {s.geo_id: s for s in self.states}
        out.update({c.geo_id: c for c in self.counties})
        out.update({x.geo_id: x for x in self.localities})
        return out

    def localities_named(self, base: str, state: State | None = None) -> list[Locality]:
        """Places called ``base`` (normalised), largest first; only those in ``state`` when given."""
        found = self.localities_by_base.get(base, [])
        return [x for x in found if state is None or x.state.fips == state.fips]

    def same_area_county(self, loc: Locality) -> County | None:
        """The county-equivalent that covers exactly the place's area (San Francisco, Denver, Baltimore city,
        the Virginia independent cities): same name base in the same state and the same population."""
        for c in self.counties_by_state.get(loc.state.fips, []):
            if c.base in loc.bases and c.population == loc.population and loc.population > 0:
                return c
        return None

    def periods_of(self, m: Measure) -> tuple[str, ...]:
        """The ACS periods every variable of ``m`` has, oldest first."""
        sets = [self.periods.get(code, (m.vintage,)) for code in m.codes]
        common = set(sets[0]).intersection(*sets[1:]) if sets else set()
        return tuple(sorted(common))

    def over_periods(self, m: Measure) -> Measure:
        """``m``, or the same share over total population (B01003_001E) when the total of its own table
        (B03002_001E, B02001_001E: the same count, both controlled to the population estimates) is loaded for
        fewer periods — so "the Hispanic share in 2014-2018" can be computed from what is loaded."""
        if not m.is_rate:
            return m
        swapped = tuple(_TOTAL_EQUIVALENTS.get(c, c) for c in m.denominator)
        if swapped == m.denominator:
            return m
        alt = replace(m, denominator=swapped)
        return alt if len(self.periods_of(alt)) > len(self.periods_of(m)) else m

    def has_margins(self, m: Measure, level: str, period: str | None = None) -> bool:
        """Whether ``m`` has margins of error at ``level`` (in ``period``; None: its latest)."""
        if period is None or period == m.vintage:
            return level in m.moe_levels
        return level in m.moe_levels and all((c, period) in self.earlier_moe for c in m.codes
                                             if c not in CONTROLLED_TOTALS)

    def has_in(self, m: Measure, geo_id: str, period: str) -> bool:
        """Whether every variable of ``m`` has a value for the place in ``period``."""
        if period == m.vintage:
            return self.has(m, geo_id)
        return all(geo_id in self.earlier_rows.get((code, period), ()) for code in m.codes)

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


#: the levels whose rows the planner names one by one (tracts, ZIP areas, districts and metros are too many, or
#: asked for by their code).  Coverage is read for their rows only, and for the measures' codes only: reading every
#: geo_id of every variable costs 27 s and 2.6 GB at 20 million estimates (benchmarks/bench_scale.py), for rows the
#: planner never looks up.
NAMED_LEVELS = ("state", "county", "place")
#: the levels asked for by their codes or their principal city (:mod:`.units`)
CODED = ("tract", "zcta", "cd", "cbsa")

#: table totals that count the same people as total population (B01003_001E)
_TOTAL_EQUIVALENTS = {"B03002_001E": "B01003_001E", "B02001_001E": "B01003_001E"}


def _read_catalog(conn: psycopg.Connection, codes: list[str]):
    """Every named place, which of them have each of ``codes`` (now and in earlier periods), populations (to order
    ambiguous names), every variable's periods, and the levels with rows (in GEO_ID order, so that two reads of
    the same data give the same catalog)."""
    levels = list(NAMED_LEVELS)
    geo = conn.execute(
        "SELECT geo_id, level, state_fips, state_abbr, state_name, county_name, place_name FROM public.geography "
        "WHERE level = ANY(%s) ORDER BY geo_id COLLATE \"C\"", (levels,)
    ).fetchall()
    have = conn.execute(
        "SELECT e.variable_code, array_agg(e.geo_id) FROM public.estimates e "
        "JOIN public.geography g ON g.geo_id = e.geo_id "
        "WHERE e.estimate IS NOT NULL AND e.variable_code = ANY(%s) AND g.level = ANY(%s) GROUP BY 1",
        (codes, levels),
    ).fetchall()
    pop: dict[str, Any] = dict(conn.execute(
        "SELECT e.geo_id, e.estimate FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id "
        "WHERE e.variable_code = 'B01003_001E' AND g.level = ANY(%s)", (levels,)
    ).fetchall())
    loaded = frozenset(r[0] for r in conn.execute("SELECT DISTINCT level FROM public.geography").fetchall())
    # every period of each variable, and the places that have a value in each period other than the latest
    periods: dict[str, list[str]] = dict(
        conn.execute("SELECT variable_code, vintages FROM public.variables").fetchall())
    earlier = conn.execute(
        "SELECT b.variable_code, b.vintage, array_agg(b.geo_id), count(b.margin_error) "
        "FROM public.estimates_by_vintage b "
        "JOIN public.variables v ON v.variable_code = b.variable_code AND b.vintage <> v.vintage "
        "JOIN public.geography g ON g.geo_id = b.geo_id "
        "WHERE b.estimate IS NOT NULL AND b.variable_code = ANY(%s) AND g.level = ANY(%s) GROUP BY 1, 2",
        (codes, levels)).fetchall()
    coded = sorted(loaded & set(CODED))
    units = conn.execute(
        "SELECT geo_id, level, name, state_abbr, CASE WHEN county_fips IS NOT NULL THEN '0500000US' || state_fips "
        "|| county_fips END FROM public.geography WHERE level = ANY(%s) ORDER BY geo_id COLLATE \"C\"",
        (coded,)).fetchall() if coded else []
    return geo, have, pop, loaded, periods, earlier, units


def load_catalog(settings) -> Catalog:
    """The catalog of the database of ``settings``: kept in the process, else read from its stored copy
    (:mod:`.catalog_store`: milliseconds), else built from the census tables and stored (seconds: some 32,000
    place names to normalise) — once per data generation, not once per process.

    A ``census fetch`` in this process bumps the semantic layer's generation and the catalog is read again."""
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
        cat = _stored_or_built(settings)
        with _catalog_lock:
            _catalogs[key] = cat
        return cat


def refresh_catalog(settings) -> Catalog:
    """Build the catalog from the census tables now and store it under their generation (setup and
    ``census fetch`` call it right after they change the data, so that no question waits for the build)."""
    key = f"{settings.database_url or ''}|{settings.data_dir}"
    with _load_lock:
        cat = _build(settings)
        with _catalog_lock:
            _catalogs[key] = cat
        return cat


@contextlib.contextmanager
def _no_gc() -> Iterator[None]:
    """The cyclic garbage collector paused while some 100,000 tuples and lists are made at once: it would scan them
    again and again as they are made (none of them is garbage), which doubled the time of a reload."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _stored_or_built(settings) -> Catalog:
    """From the stored copy of this data generation (its measures too: the semantic layer takes the rows they are
    made of from it), else built and stored."""
    from . import catalog_store

    with _no_gc():
        cat = _from_store(settings, catalog_store)
    return cat if cat is not None else _build(settings)


def _from_store(settings, catalog_store) -> Catalog | None:
    """The catalog from the stored copy of this generation, or None (none stored, damaged, or it does not fit)."""
    stored = catalog_store.read(settings)
    if stored is not None:
        try:
            measures = semantic.measures_from_rows(settings, stored["listed"], stored["coverage"])
            if stored["codes"] == _codes(measures):
                return _assemble(settings, measures, stored)
        except (KeyError, IndexError, TypeError, ValueError) as exc:  # a copy that decodes but does not fit
            catalog_store.log.warning("the stored planner catalog does not fit (%s): building it again", exc)
    return None


def _codes(measures: list[Measure]) -> list[str]:
    return sorted({c for m in measures for c in m.codes})


def _build(settings) -> Catalog:
    """Read the census tables in one snapshot (the measures' rows and the catalog's), make the catalog and store
    it under the generation read."""
    from . import catalog_store

    def read(conn: psycopg.Connection):
        listed, coverage = semantic.read_measure_rows(conn)
        measures = semantic.measures_from_rows(settings, listed, coverage)
        return listed, coverage, measures, _read_catalog(conn, _codes(measures))

    try:
        generation, (listed, coverage, measures, rows) = catalog_store.read_snapshot(settings, read)
    except psycopg.errors.UndefinedTable as exc:
        raise NotSetUpError("The census tables are not there yet: run `python -m sage setup` first.") from exc
    parts = {**_parts(*rows), "listed": listed, "coverage": coverage, "codes": _codes(measures)}
    if generation is not None:
        catalog_store.write(settings, generation, parts)
    return _assemble(settings, measures, parts)


def _parts(geo, have, pop, levels, periods, earlier, unit_rows) -> dict[str, Any]:
    """The catalog's data as plain values (what :mod:`.catalog_store` keeps): the rows read, with every place name
    already normalised (the slow part: ``place_bases`` of some 32,000 names)."""
    states = [(r[2], r[3], r[4], r[0]) for r in geo if r[1] == "state"]
    fips = {s[0] for s in states}
    counties, localities = [], []
    for geo_id, level, state_fips, _abbr, _sname, county_name, place_name in geo:
        if state_fips not in fips:
            continue
        if level == "county" and county_name:
            base, suffix = _split_county(county_name)
            counties.append((geo_id, county_name, state_fips, base, suffix, float(pop.get(geo_id) or 0)))
        elif level == "place" and place_name:
            bases, kind = place_bases(place_name)
            localities.append((geo_id, place_name, state_fips, bases, kind, float(pop.get(geo_id) or 0)))
    return {
        "ids": [r[0] for r in geo],
        "states": states,
        "counties": counties,
        "localities": localities,
        "has_rows": {code: sorted(ids) for code, ids in have},
        "levels": sorted(levels),
        "periods": {code: list(v) for code, v in periods.items()},
        "earlier": [(code, v, sorted(ids), bool(n)) for code, v, ids, n in earlier],
        "units": [tuple(r) for r in unit_rows],
    }


def _assemble(settings, measures: list[Measure], parts: dict[str, Any]) -> Catalog:
    """The catalog from :func:`_parts` (built now or read from the store): one way, so the two cannot differ."""
    states = [State(*s) for s in parts["states"]]
    by_fips = {s.fips: s for s in states}
    counties = [County(g, n, by_fips[f], b, x, p) for g, n, f, b, x, p in parts["counties"]]
    localities = [Locality(g, n, by_fips[f], tuple(b), k, p) for g, n, f, b, k, p in parts["localities"]]
    active = {m.name for m in measures}
    inactive = [m for m in semantic.defined_measures() if m.name not in active]
    earlier = parts["earlier"]
    cat = Catalog(measures, states, counties, {code: frozenset(ids) for code, ids in parts["has_rows"].items()},
                  inactive=inactive, data_path=settings.data_path, localities=localities,
                  levels=frozenset(parts["levels"]), generation=semantic.generation(settings),
                  periods={code: tuple(v) for code, v in parts["periods"].items()},
                  earlier_rows={(code, v): frozenset(ids) for code, v, ids, _ in earlier},
                  earlier_moe=frozenset((code, v) for code, v, _, n in earlier if n))
    units: dict[str, list[Unit]] = {}
    for row in parts["units"]:
        units.setdefault(row[1], []).append(Unit(*row))
    cat.units = {level: tuple(rows) for level, rows in units.items()}
    return cat


# ---------------------------------------------------------------------------------------------------------------
# lookups used while reading a question


def counties_named(word: str, cat: Catalog, state: State | None = None) -> list[County]:
    """Counties whose name without its suffix is ``word`` ("baltimore" -> Baltimore County and Baltimore city),
    largest first — for "did you mean" suggestions."""
    out = [c for c in cat.counties_by_base.get(word, []) if state is None or c.state.fips == state.fips]
    return sorted(set(out), key=lambda c: -c.population)


def state_words(cat: Catalog) -> frozenset:
    return cat.state_words


def is_measure_word(word: str, cat: Catalog) -> bool:
    """Whether ``word`` belongs to some measure's wording (so it is not an unknown place name)."""
    return word in cat.measure_vocab


