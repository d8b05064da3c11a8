"""Places on a map: what level a result's rows are, FIPS codes from its GEOIDs, codes or names, the shipped
TopoJSON (``data/geo/``) whose feature ``id`` is that FIPS code, and the internal points of Census places.

``geo_id`` is a Census GEOID (``0400000US44``, ``0500000US44007``, ``1600000US4805000``) and ``fips`` the plain 2- or
5-digit code.  States and counties are drawn as shapes (``*-albers-10m.json``, pre-projected to Albers USA);
places as points at the Census Bureau's internal point of each place (``places_internal_points.csv``, from the
Gazetteer; ``data/geo/PLACES-SOURCE.md``) over the state outlines.  Tracts, ZCTAs, metro areas and congressional
districts have neither shapes nor points in ``data/``, so they are never mapped.
"""

from __future__ import annotations

import csv
import json
import math
import re
from decimal import Decimal
from functools import lru_cache
from typing import Any

import altair as alt
import pandas as pd

from ..settings import PROJECT_ROOT

GEO_DIR = PROJECT_ROOT / "data" / "geo"
ACS_DIR = PROJECT_ROOT / "data" / "acs"
PLACES_DIR = PROJECT_ROOT / "data" / "acs-places"

#: the Census summary level that starts a GEOID (``1600000US4805000`` is a place), per level of public.geography
SUMMARY_LEVELS = {"010": "nation", "040": "state", "050": "county", "160": "place", "140": "tract", "860": "zcta",
                  "500": "cd", "310": "cbsa"}
#: levels with neither boundaries nor points in ``data/geo``: never mapped
UNMAPPED_LEVELS = ("tract", "zcta", "cbsa", "cd")
#: what a sentence calls the rows of a level
LEVEL_PLURALS = {"nation": "the nation", "state": "states", "county": "counties", "place": "Census places",
                 "tract": "census tracts", "zcta": "ZIP code tabulation areas (ZCTAs)",
                 "cbsa": "metro and micro areas", "cd": "congressional districts"}
#: Census NAMEs that say their level (``Census Tract 11; Travis County; Texas``, ``ZCTA5 78701``, ...)
_NAMED_LEVELS = (
    ("tract", re.compile(r"^Census Tract ", re.I)),
    ("zcta", re.compile(r"^ZCTA5 ", re.I)),
    ("cd", re.compile(r"^Congressional District |\bat Large\b|^Delegate District", re.I)),
    ("cbsa", re.compile(r"\b(Metro|Micro)(politan)? (Statistical )?Area$", re.I)),
)

_GEO_ID = re.compile(r"^(?:0400000US(\d{2})|0500000US(\d{5}))$")


def fips_codes(frame: pd.DataFrame) -> tuple[list[str | None] | None, str | None]:
    """The FIPS code of every row and the map level (``state``/``county``), or (None, None) when unknowable."""
    cols = set(frame.columns)
    codes: list[str | None] | None = None
    if "geo_id" in cols or "geoid" in cols:
        col = "geo_id" if "geo_id" in cols else "geoid"
        found = []
        for v in frame[col]:
            m = _GEO_ID.match(str(v)) if v is not None else None
            found.append((m.group(1) or m.group(2)) if m else None)
        if any(found):
            codes = found
    if codes is None and "fips" in cols:
        codes = [_fips_text(v) for v in frame["fips"]]
    if codes is None and "state_fips" in cols:
        if "county_fips" in cols:
            codes = [
                f"{_fips_text(s, 2)}{_fips_text(c, 3)}" if s is not None and c is not None else None
                for s, c in zip(frame["state_fips"], frame["county_fips"], strict=True)
            ]
        else:
            codes = [_fips_text(v, 2) for v in frame["state_fips"]]
    if codes is None:
        lookup = _place_fips()
        if "county_name" in cols and ("state_name" in cols or "state_abbr" in cols):
            state_col = "state_name" if "state_name" in cols else "state_abbr"
            codes = [lookup.get(("county", str(c).lower(), str(s).lower())) for c, s in
                     zip(frame["county_name"], frame[state_col], strict=True)]
        elif "county_name" not in cols and ("state_name" in cols or "state_abbr" in cols):
            state_col = "state_name" if "state_name" in cols else "state_abbr"
            codes = [lookup.get(("state", str(s).lower())) for s in frame[state_col]]
    if not codes or not any(codes):
        return None, None
    lengths = {len(c) for c in codes if c}
    if lengths == {2}:
        return codes, "state"
    if lengths == {5}:
        return codes, "county"
    return None, None


def _fips_text(value: Any, width: int | None = None) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, (int, float, Decimal)):
        number = int(value)
        width = width or (2 if number < 100 else 5)
        return str(number).zfill(width)
    text = str(value).strip()
    if not text.isdigit():
        return None
    return text.zfill(width) if width else text


@lru_cache(maxsize=1)
def _place_fips() -> dict[tuple, str]:
    """Names -> FIPS from the shipped ``geography.csv`` (for results that carry names but no codes)."""
    out: dict[tuple, str] = {}
    path = ACS_DIR / "geography.csv"
    if not path.is_file():
        return out
    with path.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["level"] == "state":
                out[("state", row["state_name"].lower())] = row["fips"]
                out[("state", row["state_abbr"].lower())] = row["fips"]
            else:
                for state in (row["state_name"], row["state_abbr"]):
                    out[("county", row["county_name"].lower(), state.lower())] = row["fips"]
    return out


def result_level(frame: pd.DataFrame) -> str | None:
    """The level of the rows (``state``, ``county``, ``place``, ``tract``, ...), when the result says it: by the
    summary level of its GEOIDs, by a column named after the level (``tract``, ``zcta``, ``cbsa``, ``cd``), by Census
    NAMEs that say it (``Census Tract 11; ...``, ``ZCTA5 78701``), or by names that are Census places with their
    state (``Austin city, Texas``).  None when the result does not say (states and counties by name are found by
    :func:`fips_codes`)."""
    cols = set(frame.columns)
    for col in ("geo_id", "geoid"):
        if col in cols:
            levels = {SUMMARY_LEVELS.get(str(v)[:3]) for v in frame[col] if isinstance(v, str) and "US" in v}
            levels.discard(None)
            if len(levels) == 1:
                return levels.pop()
    for level in UNMAPPED_LEVELS:
        if level in cols or f"{level}_name" in cols:
            return level
    names = [str(v) for v in frame["name"] if v is not None] if "name" in cols else []
    if names:
        for level, pattern in _NAMED_LEVELS:
            if all(pattern.search(n) for n in names):
                return level
        if _place_keys(frame) is not None:
            return "place"
    return None


def _place_keys(frame: pd.DataFrame) -> list[str | None] | None:
    """The place GEOID of every row (None for a row that is not a place), or None when no row is a place."""
    cols = set(frame.columns)
    keys: list[str | None] = []
    if "geo_id" in cols:
        keys = [str(v) if isinstance(v, str) and v.startswith("1600000US") else None for v in frame["geo_id"]]
    elif "name" in cols:
        ids = _place_ids()
        state_col = "state_name" if "state_name" in cols else None
        for i, name in enumerate(frame["name"]):
            text = str(name).strip().lower() if name is not None else ""
            if state_col and text and "," not in text:
                text = f"{text}, {str(frame[state_col].iloc[i]).strip().lower()}"
            keys.append(ids.get(text))
    return keys if any(keys) else None


def place_points(frame: pd.DataFrame) -> list[tuple[str, float, float] | None] | None:
    """``(geo_id, lat, lon)`` of every row that is a Census place with an internal point (None for a row that is
    not), or None when no row is one.  Rows are matched by their place GEOID (``1600000US4805000``) or by their
    Census name with its state (``Austin city, Texas``)."""
    keys = _place_keys(frame)
    if keys is None:
        return None
    points = _place_points()
    out: list[tuple[str, float, float] | None] = []
    for key in keys:
        point = points.get(key) if key else None
        out.append((key, point[0], point[1]) if key and point else None)
    return out if any(out) else None


@lru_cache(maxsize=1)
def _place_points() -> dict[str, tuple[float, float]]:
    """Place GEOID -> (lat, lon): the Census internal points shipped in ``data/geo/places_internal_points.csv``."""
    out: dict[str, tuple[float, float]] = {}
    path = GEO_DIR / "places_internal_points.csv"
    if not path.is_file():
        return out
    with path.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            out[row["geo_id"]] = (float(row["lat"]), float(row["lon"]))
    return out


@lru_cache(maxsize=1)
def _place_ids() -> dict[str, str]:
    """``'austin city, texas'`` -> ``1600000US4805000`` from the shipped place list (names are unique per state)."""
    out: dict[str, str] = {}
    path = PLACES_DIR / "geography.csv"
    if not path.is_file():
        return out
    with path.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["level"] == "place":
                out[f"{row['name']}, {row['state_name']}".lower()] = row["geo_id"]
    return out


@lru_cache(maxsize=4)
def topology(name: str) -> dict:
    """The shipped, pre-projected (Albers USA, 975x610) TopoJSON, loaded once per process."""
    with (GEO_DIR / name).open(encoding="utf-8") as fh:
        return json.load(fh)


def inline_topology(topology: dict, feature: str) -> alt.InlineData:
    """TopoJSON as inline data, built without Altair's validation (which would walk every arc of the file)."""
    with alt.utils.schemapi.debug_mode(False):
        return alt.InlineData(values=topology, format=alt.DataFormat(type="topojson", feature=feature))


@lru_cache(maxsize=64)
def subset_topology(name: str, obj: str, state_fips: tuple[str, ...]) -> dict:
    """The features of ``obj`` whose id starts with one of ``state_fips``, with only the arcs they use.

    Arcs of a quantized TopoJSON are delta-encoded one by one, so a subset stays valid once the arc indexes of
    the kept geometries are renumbered (``~i`` marks an arc used backwards).
    """
    topo = topology(name)
    arcs: list = []
    renumbered: dict[int, int] = {}

    def remap(index: int) -> int:
        original = ~index if index < 0 else index
        if original not in renumbered:
            renumbered[original] = len(arcs)
            arcs.append(topo["arcs"][original])
        new = renumbered[original]
        return ~new if index < 0 else new

    def walk(value):
        return [walk(v) for v in value] if isinstance(value, list) else remap(value)

    geometries = [
        {**g, "arcs": walk(g["arcs"])}
        for g in topo["objects"][obj]["geometries"]
        if "arcs" in g and str(g.get("id", "")).startswith(state_fips)
    ]
    out = {"type": "Topology", "objects": {obj: {"type": "GeometryCollection", "geometries": geometries}}, "arcs": arcs}
    if "transform" in topo:
        out["transform"] = topo["transform"]
    return out


@lru_cache(maxsize=4)
def feature_ids(name: str, obj: str) -> frozenset[str]:
    return frozenset(str(g.get("id")) for g in topology(name)["objects"][obj]["geometries"])


__all__ = ["ACS_DIR", "GEO_DIR", "LEVEL_PLURALS", "PLACES_DIR", "SUMMARY_LEVELS", "UNMAPPED_LEVELS", "feature_ids",
           "fips_codes", "inline_topology", "place_points", "result_level", "subset_topology", "topology"]
