"""A fake Census Data API for tests and benchmarks: real HTTP on 127.0.0.1, the real response format, our own data.

It serves what ``sage.census.api`` asks of ``https://api.census.gov/data`` (see the module docstring there):

* ``/data/{year}/acs/acs5?get=...&for=...[&in=state:...]`` — a JSON array of arrays, header row first, every value
  a string, the geography columns appended, rows sorted by geography code, compact separators and raw UTF-8 (the
  byte layout of a verbatim 2023 response).  The clauses: ``for=us:1`` (column ``us``), ``for=state:*|48,06``
  (``state``), ``for=county:*`` with or without ``in=state:*|48`` (``state,county``), ``for=place:*`` likewise
  (``state,place``), ``for=metropolitan statistical area/micropolitan statistical area:*`` (that column),
  ``for=congressional district:*`` with or without ``in=state:...`` (``state,congressional district``),
  ``for=tract:*&in=state:48`` (``state,county,tract``; the state is required: ``in=state:*`` and no ``in`` are the
  API's 400) and ``for=zip code tabulation area:*`` (that column).  A valid clause that selects no place is the
  API's 204 No Content; any other level or hierarchy its 400 ``error: unknown/unsupported geography heirarchy``.
  ``get`` takes ``NAME``, ``GEO_ID``, variables (``_E``, ``_M``, ``_EA``, ``_MA``) and ``group(TABLE)`` (E, EA, M,
  MA per line, then GEO_ID and NAME); more than 50 items is the API's 400 ``error: error: 'get' is limited to 50
  variables``, an unknown variable its 400 ``error: error: unknown variable 'X'``.
* ``/data/{year}/acs/acs5/groups/{TABLE}.json`` and ``groups.json`` — metadata built from the offline catalog
  ``data/acs/variables_catalog_acs2023_5yr.csv.gz`` (E, EA, M, MA entries per line, GEO_ID, NAME; like the real
  listing since 2024, ``groups/B25003.json`` also lists the B25003A...I subtables' variables).  Other vintages carry
  other labels, as the real API's do: the dollar year of "(in 2023 inflation-adjusted dollars)" is the vintage's,
  releases up to 2018 have no colons after totals ("Estimate!!Total!!Male") and say "Worked at home" where later
  ones say "Worked from home" (B08301, B08006...).
* ``/data.json`` — the dataset discovery, in the real DCAT shape (``@context``, ``@type`` ``dcat:Catalog``, a
  ``dataset`` list whose entries carry ``c_vintage``, ``c_dataset``, ``c_isAggregate``, ``title``, ``identifier``,
  ``distribution[].accessURL``...): for every year served, the detailed tables (``["acs", "acs5"]``) and, as the
  real catalog lists them beside, the profile and subject tables (``["acs", "acs5", "profile"]``...) and the 1-year
  release (``["acs", "acs1"]``, one year later than the last 5-year one, as in December).
* a release that lacks a table or a level (:attr:`FakeCensusApi.lacking`): the table's ``groups`` 404 and its
  variables the API's 400 ``unknown variable``, the level the API's 400 geography error.
* a missing / wrong key (when ``required_key`` is set): the API's 302 to ``missing_key.html`` /
  ``invalid_key.html`` with ``X-DataWebAPI-KeyError: 1``; both pages are served (200, text/html).
* an unknown year or path: the API's 404 HTML "Error report" page.

**Geography.**  The nation, states and counties of ``data/acs/geography.csv`` and the places of
``data/acs-places/geography.csv`` (real names and GEO_IDs).  Congressional districts, metro areas, tracts and ZCTAs
are **generated test geography** (codes in the real format, made up, never shipped): districts per state by
population (at large '00', DC and Puerto Rico '98'; the 118th Congress from 2022, the 116th before, with their
GEO_ID forms ``5001800US``/``5001600US``), a handful of metro areas (GEO_ID ``310M700US`` in 2023, older forms
before), about one tract per 4,000 people in every county (``Census Tract 11; Travis County; Texas`` from 2023,
commas before), one ZCTA per county plus a few well-known ones (``860Z200US`` from 2020, ``8600000US`` before).

**Where the numbers come from.**  Real figures from the shipped extracts (``data/acs/estimates.csv.gz`` and the
places' ``data/acs-places/estimates.csv.gz``) whenever they have every line of the table for a geography level and
the asked year is the variable's vintage: e.g.
B19013 for counties in 2023 is the real estimate *and* margin of every county, with the real special value
(-666666666 estimate, -222222222 margin) for the two counties the extract omits (Esmeralda NV, Kenedy TX), and
B01003 is the real population with -555555555 margins (controlled totals, as the API publishes them).
**Everything else is synthetic test data** — plausible but made up, deterministic per (year, table, place) and
never shipped anywhere: counts split a base (the real population times a universe share) down the table's label
tree so that the parts add up to their parent (B25003 owner + renter = total), state counts are the sums of their
counties, medians and indexes are drawn in plausible ranges (with the special value for places under 500
people).  Synthetic answers carry the header ``X-Fake-Census: synthetic``; :meth:`FakeCensusApi.is_real` tells
which (year, table, level) is real.

**Failure modes** (:meth:`FakeCensusApi.fail`): HTTP 500/503/429 (optionally with ``Retry-After``), a time-out
(the answer is delayed), 204 No Content, the "Invalid Key" page served directly with 200, a non-JSON body, a
dropped connection; each for a number of matching requests, optionally after letting some through.
:meth:`FakeCensusApi.override` puts any value (e.g. a special value) in one cell; :meth:`FakeCensusApi.add_place`
adds a place that our geography does not have.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import math
import random
import re
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

ACS_DIR = Path(__file__).resolve().parent.parent / "data" / "acs"
PLACES_DIR = ACS_DIR.parent / "acs-places"

#: the geography columns the API appends, per level (by public.geography.level)
CBSA = "metropolitan statistical area/micropolitan statistical area"
GEO_COLUMNS = {
    "nation": ("us",),
    "state": ("state",),
    "county": ("state", "county"),
    "place": ("state", "place"),
    "cbsa": (CBSA,),
    "cd": ("state", "congressional district"),
    "tract": ("state", "county", "tract"),
    "zcta": ("zip code tabulation area",),
}
#: the ``for`` predicate of each level, and whether ``in=state:...`` is refused, optional or required
PREDICATES = {"us": ("nation", "no"), "state": ("state", "no"), "county": ("county", "optional"),
              "place": ("place", "optional"), CBSA: ("cbsa", "no"), "congressional district": ("cd", "optional"),
              "tract": ("tract", "required"), "zip code tabulation area": ("zcta", "no")}
#: test metro areas: code -> (2023 name, name before 2023)
METROS = {
    "10100": ("Aberdeen, SD Micro Area", "Aberdeen, SD Micro Area"),
    "12060": ("Atlanta-Sandy Springs-Roswell, GA Metro Area", "Atlanta-Sandy Springs-Alpharetta, GA Metro Area"),
    "12420": ("Austin-Round Rock-San Marcos, TX Metro Area", "Austin-Round Rock-Georgetown, TX Metro Area"),
    "16980": ("Chicago-Naperville-Elgin, IL-IN Metro Area", "Chicago-Naperville-Elgin, IL-IN-WI Metro Area"),
    "31080": ("Los Angeles-Long Beach-Anaheim, CA Metro Area", "Los Angeles-Long Beach-Anaheim, CA Metro Area"),
    "35620": ("New York-Newark-Jersey City, NY-NJ Metro Area", "New York-Newark-Jersey City, NY-NJ-PA Metro Area"),
}
EXTRA_ZCTAS = ("10001", "60601", "78701", "78702", "90001")
PEOPLE_PER_DISTRICT = 761_000
PEOPLE_PER_TRACT = 4_000


def cbsa_prefix(year: int) -> str:
    return "310M700US" if year >= 2023 else "310M600US" if year >= 2021 else "310M500US" if year >= 2019 else (
        "310M400US" if year == 2018 else "310M300US")


def congress(year: int) -> tuple[str, str]:
    """(ordinal, GEO_ID prefix) of the Congress whose districts a release uses."""
    return ("118th", "5001800US") if year >= 2022 else ("116th", "5001600US")


def zcta_prefix(year: int) -> str:
    return "860Z200US" if year >= 2020 else "8600000US"


def vintage_label_text(text: str, year: int) -> str:
    """A 2023 label or concept as the ``year`` release words it (see the module docstring)."""
    text = re.sub(r"(?i)(\bin )2023( inflation-adjusted)", lambda m: f"{m.group(1)}{year}{m.group(2)}", text)
    if year <= 2018:
        text = "!!".join(part.rstrip(":") for part in text.split("!!")).replace("Worked from home", "Worked at home")
    return text

MAX_GET = 50
#: controlled totals: the API publishes their margin as -555555555 ("*****")
CONTROLLED = {"B01003_001E", "B25001_001E"}
E_ANNOTATION = {"-666666666": "-", "-999999999": "N", "-888888888": "(X)"}
M_ANNOTATION = {"-222222222": "**", "-333333333": "***", "-555555555": "*****", "-999999999": "N",
                "-888888888": "(X)"}

INVALID_KEY_PAGE = (
    "<!DOCTYPE html><html><head><title>Invalid Key</title></head><body><h1>Invalid Key</h1><p>You included a key "
    "with this request, however, it is not valid. Please check your key and try again.</p><p>If you do not have a "
    "key you may sign up for one <a href=\"https://api.census.gov/data/key_signup.html\">here</a>.</p></body></html>"
)
MISSING_KEY_PAGE = (
    "<!DOCTYPE html><html><head><title>Missing Key</title></head><body><h1>Missing Key</h1><p>A valid key must be "
    "included with each data API request.</p></body></html>"
)


def _error_page(path: str) -> str:
    return (f"<html><head><title>Error report</title></head><body><h1>HTTP Status 404 - {path}</h1>"
            "</body></html>")


@dataclass
class Fault:
    kind: str  # status | timeout | empty | invalid_key_page | garbage | drop
    times: int = 1
    after: int = 0
    match: str | None = None
    status: int = 500
    delay: float = 2.0
    retry_after: str | None = None
    hits: int = 0


@dataclass
class Place:
    geo_id: str
    level: str
    state: str | None
    county: str | None
    name: str
    code: str | None = None  # the level's own code: place, district, tract, metro area, ZCTA

    def columns(self) -> list[str]:
        """The geography columns the API appends for this place (:data:`GEO_COLUMNS`)."""
        if self.level == "nation":
            return ["1"]
        own = {"state": [], "county": [self.county], "tract": [self.county, self.code]}.get(self.level, [self.code])
        head = [self.state] if self.state is not None else []
        return [str(v) for v in head + own]

    def sort_key(self) -> tuple:
        return tuple(self.columns())


@dataclass
class _Table:
    table_id: str
    concept: str
    universe: str
    lines: list[tuple[str, str]] = field(default_factory=list)  # (code, label)
    structure: tuple | None = None


def _rng(*parts) -> random.Random:
    seed = hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8]
    return random.Random(int.from_bytes(seed, "big"))


def _kind(label: str) -> str:
    low = label.lower()
    if "gini" in low:
        return "index"
    if "aggregate" in low:
        return "aggregate"
    if "median" in low and "age" in low and "income" not in low:
        return "age"
    if "median" in low and "year" in low and "built" in low:
        return "year"
    if "median" in low or re.search(r"\bmean\b", low) or "per capita" in low:
        return "dollars"
    return "count"


_UNIVERSE_SHARE = (  # rough share of the population that a universe covers, for plausible synthetic totals
    ("renter", 0.13), ("owner", 0.25), ("occupied housing", 0.38), ("housing unit", 0.43), ("household", 0.38),
    ("famil", 0.25), ("worker", 0.47), ("25 years", 0.68), ("16 years", 0.8), ("18 years", 0.78),
    ("3 years", 0.96), ("civilian", 0.97), ("poverty", 0.97),
)


class FakeData:
    """The numbers the fake serves, built lazily per (year, table, level) and cached."""

    def __init__(self, acs_dir: Path = ACS_DIR) -> None:
        self.places: dict[str, Place] = {}
        with (acs_dir / "geography.csv").open(encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh):
                self.places[r["geo_id"]] = Place(r["geo_id"], r["level"], r["state_fips"], r["county_fips"] or None,
                                                 r["name"])
        self.extra: dict[str, Place] = {}
        self.tables: dict[str, _Table] = {}
        with io.TextIOWrapper(gzip.open(acs_dir / "variables_catalog_acs2023_5yr.csv.gz", "rb"),
                              encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh):
                t = self.tables.setdefault(r["table_id"], _Table(r["table_id"], r["concept"], r["universe"]))
                t.lines.append((r["code"], r["label"]))
        # shipped[(year, code)][geo_id] = (estimate, margin or None), as the strings the extract holds
        self.shipped: dict[tuple[int, str], dict[str, tuple[str, str | None]]] = defaultdict(dict)
        with io.TextIOWrapper(gzip.open(acs_dir / "estimates.csv.gz", "rb"), encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh):
                year = int(r["vintage"][-4:])
                self.shipped[(year, r["variable_code"])][r["geo_id"]] = (r["estimate"], r["margin_error"] or None)
        state_names = {p.state: p.name for p in self.places.values() if p.level == "state"}
        self.towns: list[Place] = []  # level 'place', from the shipped places extract
        places_dir = acs_dir.parent / PLACES_DIR.name
        if (places_dir / "geography.csv").is_file():
            with (places_dir / "geography.csv").open(encoding="utf-8", newline="") as fh:
                for r in csv.DictReader(fh):
                    self.towns.append(Place(r["geo_id"], "place", r["state_fips"], None,
                                            f"{r['name']}, {state_names[r['state_fips']]}", r["fips"][2:]))
            with io.TextIOWrapper(gzip.open(places_dir / "estimates.csv.gz", "rb"), encoding="utf-8",
                                  newline="") as fh:
                for r in csv.DictReader(fh):
                    year = int(r["vintage"][-4:])
                    self.shipped[(year, r["variable_code"])][r["geo_id"]] = (r["estimate"], r["margin_error"] or None)
        self.population = {g: float(v[0]) for g, v in self.shipped[(2023, "B01003_001E")].items()}
        self._levels: dict[tuple[str, int], list[Place]] = {}
        self._cache: dict[tuple[int, str, str], tuple[bool, dict[str, dict[str, tuple[str, str]]]]] = {}
        self._lock = threading.RLock()  # re-entrant: a state table is built from its county table

    # -------------------------------------------------------------- places
    def level_places(self, level: str, year: int = 2023) -> list[Place]:
        """Every place of ``level`` in the ``year`` release, sorted by geography code (as the API sorts them)."""
        with self._lock:
            key = (level, year)
            if key not in self._levels:
                self._levels[key] = sorted(self._generate(level, year), key=Place.sort_key)
            base = self._levels[key]
        extra = [p for p in self.extra.values() if p.level == level]
        return sorted(base + extra, key=Place.sort_key) if extra else base

    def _generate(self, level: str, year: int) -> list[Place]:
        states = [p for p in self.places.values() if p.level == "state"]
        counties = [p for p in self.places.values() if p.level == "county"]
        if level in ("state", "county"):
            return [p for p in self.places.values() if p.level == level]
        if level == "nation":
            return [Place("0100000US", "nation", None, None, "United States")]
        if level == "place":
            return list(self.towns)
        if level == "cbsa":
            return [Place(cbsa_prefix(year) + code, "cbsa", None, None, names[0] if year >= 2023 else names[1], code)
                    for code, names in METROS.items()]
        if level == "zcta":
            codes = sorted({c.geo_id[-5:] for c in counties} | set(EXTRA_ZCTAS))
            return [Place(zcta_prefix(year) + code, "zcta", None, None, f"ZCTA5 {code}", code) for code in codes]
        if level == "cd":
            ordinal, prefix = congress(year)
            out = []
            for s in states:
                pop = self.population.get(s.geo_id, 0.0)
                if s.state in ("11", "72"):
                    kind = "Delegate" if s.state == "11" else "Resident Commissioner"
                    out.append(Place(f"{prefix}{s.state}98", "cd", s.state, None,
                                     f"{kind} District (at Large) ({ordinal} Congress), {s.name}", "98"))
                    continue
                n = max(1, round(pop / PEOPLE_PER_DISTRICT))
                if n == 1:
                    out.append(Place(f"{prefix}{s.state}00", "cd", s.state, None,
                                     f"Congressional District (at Large) ({ordinal} Congress), {s.name}", "00"))
                    continue
                out += [Place(f"{prefix}{s.state}{d:02d}", "cd", s.state, None,
                              f"Congressional District {d} ({ordinal} Congress), {s.name}", f"{d:02d}")
                        for d in range(1, n + 1)]
            return out
        if level == "tract":
            sep = "; " if year >= 2023 else ", "
            out = []
            state_names = {s.state: s.name for s in states}
            for c in counties:
                n = max(1, round(self.population.get(c.geo_id, 0.0) / PEOPLE_PER_TRACT))
                county_name = c.name.rsplit(", ", 1)[0]
                for i in range(1, n + 1):
                    code = f"{i:04d}00"
                    out.append(Place(f"1400000US{c.state}{c.county}{code}", "tract", c.state, c.county,
                                     sep.join((f"Census Tract {i}", county_name, state_names[c.state])), code))
            return out
        raise ValueError(level)

    # -------------------------------------------------------------- values
    def table_values(self, year: int, table_id: str, level: str) -> tuple[bool, dict[str, dict[str, tuple[str, str]]]]:
        """(real?, {geo_id: {E code: (estimate, margin)}}) as strings, before overrides."""
        key = (year, table_id, level)
        with self._lock:
            if key not in self._cache:
                self._cache[key] = self._build(year, table_id, level)
            return self._cache[key]

    def _build(self, year: int, table_id: str, level: str):
        table = self.tables[table_id]
        codes = [c for c, _ in table.lines]
        places = self.level_places(level, year)
        real = all(
            sum(1 for p in places if p.geo_id in self.shipped.get((year, c), {})) >= 0.9 * len(places)
            for c in codes
        )
        out: dict[str, dict[str, tuple[str, str]]] = {}
        if real:
            for p in places:
                have = [self.shipped.get((year, c), {}).get(p.geo_id) for c in codes]
                if all(have):
                    rng = _rng("moe", year, table_id, p.geo_id)
                    kinds = self._structure(table)[0]
                    out[p.geo_id] = {
                        c: (e, m if m is not None else ("-555555555" if c in CONTROLLED
                                                        else self._synthetic_margin(rng, kinds[c], e)))
                        for c, (e, m) in zip(codes, have, strict=True)
                    }
                elif len(codes) == 1:  # a median the Bureau could not compute: what the API sends
                    out[p.geo_id] = {codes[0]: ("-666666666", "-222222222")}
                else:
                    out[p.geo_id] = self._synthetic_place(year, table, p, {})
            return True, out
        # states are the sums of their counties, the nation the sum of the 50 states and DC
        child = {"state": "county", "nation": "state"}.get(level)
        parts = self.table_values(year, table_id, child)[1] if child else {}
        for p in places:
            out[p.geo_id] = self._synthetic_place(year, table, p, parts)
        return False, out

    @staticmethod
    def _synthetic_margin(rng: random.Random, kind: str, estimate: str) -> str:
        """A plausible 90% margin for ``estimate`` (a string as served)."""
        try:
            value = float(estimate)
        except ValueError:
            return "-222222222"
        if kind == "age":
            return f"{rng.uniform(0.2, 2.5):.1f}"
        if kind == "index":
            return f"{rng.uniform(0.005, 0.04):.4f}"
        if kind != "count":
            return str(max(1, round(abs(value) * rng.uniform(0.02, 0.1))))
        if value <= 0:
            return str(rng.randint(10, 30))
        return str(max(1, round(1.645 * math.sqrt(value) * rng.uniform(1.5, 3.0))))

    def _synthetic_place(self, year: int, table: _Table, place: Place, counties: dict) -> dict[str, tuple[str, str]]:
        rng = _rng(year, table.table_id, place.geo_id)
        pop = self.population.get(place.geo_id)
        if pop is None:  # a generated or added place: make one up, of a size that fits its level
            low, high = {"tract": (1_200, 8_000), "cd": (700_000, 800_000), "cbsa": (40_000, 5_000_000),
                         "zcta": (0, 60_000)}.get(place.level, (2_000, 200_000))
            pop = float(rng.randint(low, high))
        pop *= 1 - 0.004 * (2023 - year)  # another vintage, other numbers
        share = next((s for word, s in _UNIVERSE_SHARE if word in table.universe.lower()), 1.0)
        kinds, parents, children = self._structure(table)
        values: dict[str, float | None] = {}
        # state counts are the sums of their counties (so states and counties agree, as in the real data), the
        # nation's the sums of the 50 states and DC
        if place.level == "state" and counties:
            members = [g for g, p in ((g, self.places.get(g) or self.extra.get(g)) for g in counties)
                       if p and p.state == place.state]
        elif place.level == "nation" and counties:
            members = [g for g in counties if not g.endswith("US72")]
        else:
            members = []
        for code, _label in table.lines:
            kind = kinds[code]
            parent = parents[code]
            if members:
                member_values = [float(counties[g][code][0]) for g in members
                                 if not counties[g][code][0].startswith("-")]
                if kind == "count":
                    values[code] = int(sum(member_values))
                elif member_values:  # a state median near the middle of its counties'
                    mid = sorted(member_values)[len(member_values) // 2] * rng.uniform(0.95, 1.1)
                    values[code] = round(mid, 4 if kind == "index" else 1 if kind == "age" else 0)
                else:
                    values[code] = None
            elif kind == "count":
                if parent is None or kinds[parent] != "count" or values.get(parent) is None:
                    values[code] = round(pop * share * rng.uniform(0.97, 1.0))
                # children are filled when their parent is split below
            elif kind == "dollars":
                values[code] = None if pop < 500 else round(rng.uniform(28_000, 125_000), -1)
            elif kind == "age":
                values[code] = None if pop < 500 else round(rng.uniform(28.0, 55.0), 1)
            elif kind == "year":
                values[code] = None if pop < 500 else rng.randint(1955, 2000)
            elif kind == "index":
                values[code] = None if pop < 500 else round(rng.uniform(0.36, 0.56), 4)
            elif kind == "aggregate":
                values[code] = round(pop * share * rng.uniform(20_000, 45_000), -2)
            if kind == "count" and not members and children[code] and values.get(code) is not None:
                self._split(values[code], children[code], values, rng)
        out: dict[str, tuple[str, str]] = {}
        for code, _label in table.lines:
            v = values.get(code)
            kind = kinds[code]
            if v is None:
                out[code] = ("-666666666", "-222222222")
                continue
            text = f"{v:.1f}" if kind == "age" else f"{v:.4f}" if kind == "index" else str(int(v))
            margin = self._synthetic_margin(rng, kind, text)
            if code in CONTROLLED and place.level in ("nation", "state", "county"):
                margin = "-555555555"  # controlled to the population estimates: no sampling error
            out[code] = (text, margin)
        return out

    @staticmethod
    def _structure(table: _Table):
        """Per line: its kind, its parent line (by label), its count children — computed once per table."""
        if table.structure is None:
            by_label = {label: code for code, label in table.lines}
            kinds = {code: _kind(label) for code, label in table.lines}
            parents = {code: by_label.get(label.rsplit("!!", 1)[0]) for code, label in table.lines}
            children: dict[str, list[str]] = {code: [] for code, _ in table.lines}
            for code, parent in parents.items():
                if parent is not None and kinds[code] == "count":
                    children[parent].append(code)
            table.structure = (kinds, parents, children)
        return table.structure

    @staticmethod
    def _split(total: float, children: list[str], values: dict, rng: random.Random) -> None:
        """Split ``total`` among ``children`` (largest remainder), so they add up exactly."""
        weights = [rng.uniform(0.15, 1.0) for _ in children]
        s = sum(weights)
        raw = [total * w / s for w in weights]
        parts = [math.floor(x) for x in raw]
        rest = int(total) - sum(parts)
        for i in sorted(range(len(raw)), key=lambda i: raw[i] - parts[i], reverse=True)[:rest]:
            parts[i] += 1
        for c, v in zip(children, parts, strict=True):
            values[c] = v


class FakeCensusApi:
    """The fake server; use as a context manager or call :meth:`start` / :meth:`stop`.

    ``base_url`` is what ``settings.census_api_url`` should be.  ``required_key``: when set, data requests without
    it get the API's missing-key / invalid-key redirect.  ``years``: the vintages that exist (others are 404).
    """

    def __init__(self, *, required_key: str | None = None, years=range(2009, 2024), data: FakeData | None = None):
        self.data = data or FakeData()
        self.required_key = required_key
        self.years = set(years)
        self.faults: list[Fault] = []
        #: per year, tables (``B25003``) and levels (``tract``) that release does not have
        self.lacking: dict[int, set[str]] = {}
        #: a label (``{(year, E code): label}``) or a universe (``{(year, table): universe}``) another release words
        #: differently (set by a test; cleared by :meth:`clear`)
        self.relabel: dict[tuple[int, str], str] = {}
        self.reuniverse: dict[tuple[int, str], str] = {}
        self.overrides: dict[tuple[int, str, str], tuple[str | None, str | None]] = {}
        self.log: list[dict] = []  # one entry per request: path, params (without the key), key_sent, status
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -------------------------------------------------------------- lifecycle
    def start(self) -> FakeCensusApi:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-census-api", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeCensusApi:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def root(self) -> str:
        assert self._server, "start() the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        return self.root + "/data"

    # -------------------------------------------------------------- test controls
    def fail(self, kind: str, times: int = 1, *, after: int = 0, match: str | None = None, status: int = 500,
             delay: float = 2.0, retry_after: str | None = None) -> Fault:
        """Make the next ``times`` requests whose path+query contains ``match`` (after ``after`` of them) fail.

        ``kind``: ``status`` (HTTP ``status``, e.g. 500, 503, 429), ``timeout`` (answer after ``delay`` s),
        ``empty`` (204), ``invalid_key_page`` (200 text/html), ``garbage`` (200, not JSON), ``drop`` (close the
        connection without an answer).
        """
        fault = Fault(kind, times, after, match, status, delay, retry_after)
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear(self) -> None:
        """Forget faults, overrides, added places and the request log."""
        with self._lock:
            self.faults.clear()
            self.overrides.clear()
            self.lacking.clear()
            self.relabel.clear()
            self.reuniverse.clear()
            self.log.clear()
            if self.data.extra:
                self.data.extra.clear()
                self.data._cache.clear()

    def override(self, year: int, code: str, geo_id: str, estimate: str | None = None,
                 margin: str | None = None) -> None:
        """Serve ``estimate`` / ``margin`` (strings, e.g. '-999999999') for one cell (E code, place)."""
        self.overrides[(year, code, geo_id)] = (estimate, margin)

    def add_place(self, state: str, county: str | None, name: str) -> str:
        """Serve an extra place (e.g. an old Connecticut county); returns its GEOID."""
        geo_id = f"0500000US{state}{county}" if county else f"0400000US{state}"
        self.data.extra[geo_id] = Place(geo_id, "county" if county else "state", state, county, name)
        self.data._cache.clear()
        return geo_id

    def is_real(self, year: int, table_id: str, level: str) -> bool:
        return self.data.table_values(year, table_id, level)[0]

    def values(self, year: int, table_id: str, level: str) -> dict[str, dict[str, tuple[str, str]]]:
        """What the fake serves for a table and level: {geo_id: {E code: (estimate, margin)}}, overrides applied."""
        _, vals = self.data.table_values(year, table_id, level)
        out = {}
        for geo, cells in vals.items():
            out[geo] = {c: self._cell(year, c, geo, em) for c, em in cells.items()}
        return out

    def data_requests(self) -> list[dict]:
        return [r for r in self.log if r["kind"] == "data"]

    def _cell(self, year: int, code: str, geo: str, em: tuple[str, str]) -> tuple[str, str]:
        o = self.overrides.get((year, code, geo))
        if not o:
            return em
        return (o[0] if o[0] is not None else em[0], o[1] if o[1] is not None else em[1])

    def _take_fault(self, target: str) -> Fault | None:
        with self._lock:
            for f in self.faults:
                if f.times <= 0 or (f.match and f.match not in target):
                    continue
                if f.after > 0:
                    f.after -= 1
                    continue
                f.times -= 1
                f.hits += 1
                return f
        return None


def _split_get(text: str) -> list[str]:
    items, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        items.append(cur)
    return [i.strip() for i in items]


_VAR = re.compile(r"^([BC]\d{5}[A-Z]{0,2})_(\d{3})(E|M|EA|MA)$")


class _Handler(BaseHTTPRequestHandler):
    fake: FakeCensusApi
    server_version = "Apache-Coyote/1.1"
    sys_version = ""

    def log_message(self, fmt, *args):  # keep test output quiet
        pass

    # -------------------------------------------------------------- plumbing
    def _send(self, status: int, body: bytes | str = b"", ctype: str = "application/json;charset=utf-8",
              headers: dict | None = None) -> None:
        if isinstance(body, str):
            body = body.encode("utf-8")
        try:
            self.send_response(status)
            if status != 204:
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if body and status != 204:
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a time-out test)
        self._entry["status"] = status

    def do_GET(self):  # noqa: N802 - http.server's name
        fake = self.fake
        parts = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        key = params.pop("key", None)
        path = parts.path.rstrip("/")
        kind = "data" if re.fullmatch(r"/data/\d{4}/acs/acs5", path) else "meta"
        self._entry = {"path": path, "params": dict(params), "key_sent": key is not None, "kind": kind,
                       "status": None}
        with fake._lock:
            fake.log.append(self._entry)

        if path == "/data.json":
            return self._send(200, self._catalog())
        if path == "/data/invalid_key.html":
            return self._send(200, INVALID_KEY_PAGE, "text/html;charset=utf-8")
        if path == "/data/missing_key.html":
            return self._send(200, MISSING_KEY_PAGE, "text/html;charset=utf-8")

        target = path + "?" + "&".join(f"{k}={v}" for k, v in sorted(params.items()))
        fault = fake._take_fault(target)
        synthetic = False
        if fault:
            if fault.kind == "timeout":
                time.sleep(fault.delay)
            elif fault.kind == "status":
                headers = {"Retry-After": fault.retry_after} if fault.retry_after else None
                return self._send(fault.status, f"error: fake failure {fault.status}", "text/plain;charset=utf-8",
                                  headers)
            elif fault.kind == "empty":
                return self._send(204)
            elif fault.kind == "invalid_key_page":
                return self._send(200, INVALID_KEY_PAGE, "text/html;charset=utf-8")
            elif fault.kind == "garbage":
                return self._send(200, "this is not json", "application/json;charset=utf-8")
            elif fault.kind == "drop":
                self.close_connection = True
                self._entry["status"] = "dropped"
                return None

        m = re.fullmatch(r"/data/(\d{4})/acs/acs5(?:/(groups\.json|groups/([A-Z0-9]+)\.json))?", path)
        if not m or int(m.group(1)) not in fake.years:
            return self._send(404, _error_page(path), "text/html;charset=utf-8")
        year = int(m.group(1))
        if m.group(2) == "groups.json":
            return self._send(200, self._groups(year))
        if m.group(3):
            body = None if m.group(3) in fake.lacking.get(year, ()) else self._group(year, m.group(3))
            if body is None:
                return self._send(404, _error_page(path), "text/html;charset=utf-8")
            return self._send(200, body)

        if fake.required_key is not None and key != fake.required_key:
            which = "missing_key" if not key else "invalid_key"
            return self._send(302, "", "text/html", {"Location": f"{fake.root}/data/{which}.html",
                                                     "X-DataWebAPI-KeyError": "1"})
        status, body, synthetic = self._data(year, params)
        headers = {"X-Fake-Census": "synthetic"} if synthetic else None
        ctype = "application/json;charset=utf-8" if status == 200 else "text/plain;charset=utf-8"
        return self._send(status, body, ctype, headers)

    # -------------------------------------------------------------- metadata
    def _catalog(self) -> str:
        """``/data.json``: the DCAT catalog of the datasets, real field names, our years."""
        root = "http://api.census.gov/data"
        datasets = []
        years = sorted(self.fake.years)
        kinds = [(["acs", "acs5"], "Detailed Tables 5-Year", "ACSDT5Y", years),
                 (["acs", "acs5", "profile"], "Data Profiles 5-Year", "ACSDP5Y", years),
                 (["acs", "acs5", "subject"], "Subject Tables 5-Year", "ACSST5Y", years),
                 (["acs", "acs1"], "1-Year Estimates", "ACSDT1Y", [y + 1 for y in years[-1:]])]
        for dataset, title, ident, in_years in kinds:
            for year in in_years:
                path = "/".join(dataset[:2]) + ("/" + dataset[2] if len(dataset) > 2 else "")
                datasets.append({
                    "c_vintage": year, "c_dataset": dataset,
                    "c_geographyLink": f"{root}/{year}/{path}/geography.json",
                    "c_variablesLink": f"{root}/{year}/{path}/variables.json",
                    "c_groupsLink": f"{root}/{year}/{path}/groups.json",
                    "c_documentationLink": "https://www.census.gov/developer/",
                    "c_isAggregate": True, "c_isAvailable": True, "@type": "dcat:Dataset",
                    "title": f"American Community Survey: {title}", "accessLevel": "public",
                    "bureauCode": ["006:07"], "description": f"The American Community Survey ({title}).",
                    "distribution": [{"@type": "dcat:Distribution", "accessURL": f"{root}/{year}/{path}",
                                      "description": "API endpoint", "format": "API",
                                      "mediaType": "application/json", "title": "API endpoint"}],
                    "identifier": f"https://api.census.gov/data/id/{ident}{year}", "keyword": [],
                    "modified": f"{year + 1}-12-01 00:00:00.0", "spatial": "United States",
                    "temporal": f"{year}/{year}",
                })
        return json.dumps({"@context": "https://project-open-data.cio.gov/v1.1/schema/catalog.jsonld",
                           "@id": "http://api.census.gov/data.json", "@type": "dcat:Catalog",
                           "conformsTo": "https://project-open-data.cio.gov/v1.1/schema",
                           "describedBy": "https://project-open-data.cio.gov/v1.1/schema/catalog.json",
                           "dataset": datasets}, ensure_ascii=False)

    def _group(self, year: int, table_id: str) -> str | None:
        data = self.fake.data
        table = data.tables.get(table_id)
        if table is None:
            return None
        tables = [table] + [t for tid, t in sorted(data.tables.items())
                            if re.fullmatch(re.escape(table_id) + r"[A-I]", tid)]
        variables: dict[str, dict] = {}
        for t in tables:
            for code, label in t.lines:
                base = code[:-1]
                kind = _kind(label)
                label = self.fake.relabel.get((year, code)) or vintage_label_text(label, year)
                ptype = "float" if kind in ("age", "index") else "int"
                universe = self.fake.reuniverse.get((year, t.table_id), t.universe)
                common = {"concept": vintage_label_text(t.concept, year), "group": t.table_id, "limit": 0,
                          "predicateOnly": True, "universe": universe}
                rest = label.split("!!", 1)[1] if "!!" in label else label
                variables[code] = {"label": label, "predicateType": ptype, **common,
                                   "attributes": f"{base}EA,{base}M,{base}MA"}
                variables[base + "EA"] = {"label": f"Annotation of Estimate!!{rest}", "predicateType": "string",
                                          **common}
                variables[base + "M"] = {"label": f"Margin of Error!!{rest}", "predicateType": ptype, **common}
                variables[base + "MA"] = {"label": f"Annotation of Margin of Error!!{rest}",
                                          "predicateType": "string", **common}
        variables["GEO_ID"] = {"label": "Geography", "concept": table.concept, "predicateType": "string",
                               "group": table_id, "limit": 0, "predicateOnly": True}
        variables["NAME"] = {"label": "Geographic Area Name", "concept": table.concept, "predicateType": "string",
                             "group": table_id, "limit": 0, "predicateOnly": True}
        return json.dumps({"variables": variables}, ensure_ascii=False)

    def _groups(self, year: int) -> str:
        groups = [
            {"name": t.table_id, "description": t.concept,
             "variables": f"{self.fake.base_url}/{year}/acs/acs5/groups/{t.table_id}.json", "universe ": t.universe}
            for t in sorted(self.fake.data.tables.values(), key=lambda t: t.table_id)
        ]
        return json.dumps({"groups": groups}, ensure_ascii=False)

    # -------------------------------------------------------------- data
    def _data(self, year: int, params: dict) -> tuple[int, str, bool]:
        fake = self.fake
        data = fake.data
        get = _split_get(params.get("get", ""))
        if not get or get == [""]:
            return 400, "error: error: missing 'get' argument", False
        if len(get) > MAX_GET:
            return 400, "error: error: 'get' is limited to 50 variables", False
        columns: list[tuple[str, str | None, str | None]] = []  # (header, table, E code / special)
        for item in get:
            g = re.fullmatch(r"group\(([A-Z0-9]+)\)", item)
            if g:
                table = None if g.group(1) in fake.lacking.get(year, ()) else data.tables.get(g.group(1))
                if table is None:
                    return 400, f"error: error: unknown variable 'group({g.group(1)})'", False
                for code, _ in table.lines:
                    base = code[:-1]
                    for suffix in ("E", "EA", "M", "MA"):
                        columns.append((base + suffix, table.table_id, code))
                columns += [("GEO_ID", None, None), ("NAME", None, None)]
                continue
            if item in ("NAME", "GEO_ID"):
                columns.append((item, None, None))
                continue
            v = _VAR.fullmatch(item)
            table = data.tables.get(v.group(1)) if v and v.group(1) not in fake.lacking.get(year, ()) else None
            code = f"{v.group(1)}_{v.group(2)}E" if v else None
            if table is None or code not in dict(table.lines):
                return 400, f"error: error: unknown variable '{item}'", False
            columns.append((item, table.table_id, code))

        geo_for, geo_in = params.get("for", ""), params.get("in", "")
        predicate, _, selected = geo_for.rpartition(":")
        fm = re.fullmatch(r"\*|[0-9,]+", selected)
        im = re.fullmatch(r"state:(\*|[0-9,]+)", geo_in) if geo_in else None
        level, in_state = PREDICATES.get(predicate, (None, None))
        heirarchy = (400, "error: unknown/unsupported geography heirarchy", False)
        if level is None or not fm or (geo_in and not im) or level in fake.lacking.get(year, ()):
            return heirarchy
        if (in_state == "no" and geo_in) or (in_state == "required" and (not im or im.group(1) == "*")):
            return heirarchy
        if level == "nation" and selected not in ("1", "*"):
            return heirarchy
        places = data.level_places(level, year)
        wanted = None if selected == "*" or level == "nation" else set(selected.split(","))
        states = None if not im or im.group(1) == "*" else set(im.group(1).split(","))
        places = [
            p for p in places
            if (wanted is None or (p.columns()[-1] if level != "state" else p.state) in wanted)
            and (states is None or p.state in states)
        ]
        if not places:
            return 204, "", False

        tables = {t for _, t, _ in columns if t}
        synthetic = any(not fake.is_real(year, t, level) for t in tables)
        served = {t: fake.data.table_values(year, t, level)[1] for t in tables}
        header = [c[0] for c in columns] + list(GEO_COLUMNS[level])
        rows = [header]
        for p in places:
            row: list = []
            for name, table_id, code in columns:
                if name == "NAME":
                    row.append(p.name)
                elif name == "GEO_ID":
                    row.append(p.geo_id)
                else:
                    est, moe = fake._cell(year, code, p.geo_id, served[table_id][p.geo_id][code])
                    suffix = name.split("_", 1)[1][3:]
                    if suffix == "E":
                        row.append(est)
                    elif suffix == "M":
                        row.append(moe)
                    elif suffix == "EA":
                        row.append(E_ANNOTATION.get(est))
                    else:
                        row.append(M_ANNOTATION.get(moe))
            row += p.columns()
            rows.append(row)
        body = "[" + ",\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in rows) + "]"
        return 200, body, synthetic


__all__ = ["FakeCensusApi", "FakeData", "Fault"]
