"""Places on a map: FIPS codes from a result's GEOIDs, codes or names, and the shipped TopoJSON (``data/geo/``,
pre-projected to Albers USA) whose feature ``id`` is that FIPS code.

``geo_id`` is a Census GEOID (``0400000US44``, ``0500000US44007``) and ``fips`` the plain 2- or 5-digit code.
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


__all__ = ["ACS_DIR", "GEO_DIR", "feature_ids", "fips_codes", "inline_topology", "subset_topology", "topology"]
