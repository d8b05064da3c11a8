"""Download one ACS table from the Census Data API into memory (:func:`download_table`): no database access.

``census fetch`` (:mod:`sage.census.fetch`) downloads everything a table needs first and only then opens the load
transaction, so an HTTP failure half-way leaves the database as it was.

Every request asks for ``GEO_ID`` and ``NAME`` besides the table's estimates and margins: rows are keyed by the
API's GEO_ID (checked against the level's summary level and its geography columns, never built by hand), and a
place the database's geography lacks is described by the API's NAME (:class:`GeoIndex` decides whether it may be
added).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from ..errors import CensusApiError, ErrorKind
from ..types import StepProgress
from .api import GEOGRAPHIES, MAX_GET_ITEMS, CensusClient, TableMeta
from .api_values import is_special, parse_margin, parse_value
from .schema import FIPS_PATTERNS, STATE_LEVELS, SUMMARY_LEVELS

#: asked in every request besides the table's lines (they count toward the API's 50 items)
ID_ITEMS = ("GEO_ID", "NAME")


@dataclass
class GeoIndex:
    """What the database's geography holds, for deciding what to do with each place the API returns.

    ``add_new`` is True when the fetched period is at least as new as every period in the database: the geography
    is that of the newest period, so places it lacks are added (with the API's GEO_ID and NAME); a fetch of an
    earlier period loads only places the geography has and counts the others as skipped (a Connecticut county of
    2018, a tract of the 2010 geography).  A place whose (level, code) belongs to another GEO_ID (a metro area or a
    district of another delineation) is always skipped.
    """

    levels: dict[str, str] = field(default_factory=dict)  # geo_id -> level
    codes: dict[tuple[str, str], str] = field(default_factory=dict)  # (level, fips) -> geo_id
    states: dict[str, tuple[str, str]] = field(default_factory=dict)  # state fips -> (abbr, name)
    counties: dict[str, str] = field(default_factory=dict)  # 5-digit county fips -> county name
    add_new: bool = True

    def add(self, row: tuple) -> None:
        """Record a geography row (the columns of :data:`sage.census.extracts.GEOGRAPHY_COLUMNS`)."""
        geo_id, fips, level = row[0], row[1], row[2]
        self.levels[geo_id] = level
        self.codes[(level, fips)] = geo_id
        if level == "state":
            self.states[fips] = (row[5], row[6])
        elif level == "county":
            self.counties[fips] = row[8]


@dataclass
class TableData:
    """Everything fetched for one table, held in memory until the load transaction."""

    meta: TableMeta
    universe: str | None
    rows: list[tuple[str, str, Decimal | None, Decimal | None]]
    levels: dict[str, int] = field(default_factory=dict)  # places loaded per level
    new_geography: list[tuple] = field(default_factory=list)  # rows to add to public.geography
    null_estimates: int = 0
    null_margins: int = 0
    special_values: int = 0
    skipped: list[str] = field(default_factory=list)
    empty_requests: int = 0  # per-state requests the API answered with no rows (204)
    requests: int = 0
    seconds: float = 0.0

    @property
    def states(self) -> int:
        return self.levels.get("state", 0)

    @property
    def counties(self) -> int:
        return self.levels.get("county", 0)


def _chunks(meta: TableMeta, lines_per_request: int) -> list[list[str]]:
    """Lists of ``get`` items, each line's E and M together, with GEO_ID and NAME, at most ``MAX_GET_ITEMS``."""
    n = max(1, min(lines_per_request, (MAX_GET_ITEMS - len(ID_ITEMS)) // 2))
    out = []
    for i in range(0, len(meta.variables), n):
        items: list[str] = list(ID_ITEMS)
        for v in meta.variables[i:i + n]:
            items += [v.code, v.margin_code]
        out.append(items)
    return out


def _requests_for(level: str, states: list[str] | None, index: GeoIndex) -> list[list[str] | None]:
    """The ``states`` argument of each request for one level: None (every state, or no state) or one list."""
    geo = GEOGRAPHIES[level]
    if geo.in_state == "no" and level != "state":
        return [None]
    if geo.in_state == "required":  # tracts: one request per state
        return [[s] for s in (states or sorted(index.states))]
    if level == "state":
        return [states] if states else [None]
    return [[s] for s in states] if states else [None]


def _strip_state(name: str, state_name: str) -> str:
    suffix = f", {state_name}"
    return name[: -len(suffix)] if name.endswith(suffix) else name


def _geography_row(level: str, geo_id: str, fips: str, name: str, index: GeoIndex) -> tuple | None:
    """A new ``public.geography`` row from the API's GEO_ID and NAME, or None when its parents are unknown."""
    state_fips = fips[:2] if level in STATE_LEVELS else None
    abbr = state_name = None
    if state_fips is not None:
        if state_fips not in index.states:
            return None
        abbr, state_name = index.states[state_fips]
    county_fips = county_name = place_name = None
    if level == "nation":
        name = "United States"
    elif level == "state":
        name = state_name or name
    elif level == "county":
        county_fips, county_name = fips[2:5], _strip_state(name, state_name or "")
        name = f"{county_name}, {state_name}"
    elif level == "tract":
        county_fips = fips[2:5]
        county_name = index.counties.get(fips[:5])
        if county_name is None:
            return None
    elif level == "place":
        place_name = _strip_state(name, state_name or "")
        name = f"{place_name}, {state_name}"
    return (geo_id, fips, level, name, state_fips, abbr, state_name, county_fips, county_name, place_name)


def download_table(
    client: CensusClient,
    table_id: str,
    year: int,
    geographies: tuple[str, ...],
    index: GeoIndex,
    *,
    states: list[str] | None = None,
    universe_fallback: Callable[[str], str | None] | None = None,
    progress: StepProgress | None = None,
    lines_per_request: int = MAX_GET_ITEMS // 2,
) -> TableData:
    """Fetch one table (metadata, then every chunk for every level, per state where needed) into memory.

    ``states`` (2-digit FIPS codes) limits the levels inside a state (state, county, place, cd, tract).  Places the
    database lacks are added to ``TableData.new_geography`` when ``index.add_new``, else skipped (see
    :class:`GeoIndex`).  No database access.
    """
    progress = progress or (lambda *a: None)
    started = time.perf_counter()
    before = client.requests
    progress(f"{table_id}: metadata", 0, 1)
    meta = client.table_meta(year, table_id)
    progress(f"{table_id}: metadata", 1, 1)
    universe = meta.universe or (universe_fallback(table_id) if universe_fallback else None)

    chunks = _chunks(meta, lines_per_request)
    plan = [(level, st) for level in geographies
            for st in _requests_for(level, states if level in STATE_LEVELS else None, index)]
    total = len(chunks) * len(plan)
    step = f"{table_id}: download"
    progress(step, 0, total)
    values: dict[str, dict[str, tuple[Decimal | None, Decimal | None]]] = {}
    found: dict[str, tuple[str, str, str]] = {}  # geo_id -> (level, fips, NAME)
    rows_per_level: dict[str, int] = dict.fromkeys(geographies, 0)
    specials = empty = done = 0
    for level, request_states in plan:
        geo = GEOGRAPHIES[level]
        for items in chunks:
            try:
                body = client.data(year, items, level, request_states)
            except CensusApiError as exc:
                # one state without rows (e.g. no tracts of that vintage) is not a failure of the whole level
                if exc.kind != ErrorKind.EMPTY or request_states is None or len(plan) == 1:
                    raise
                empty += 1
                done += 1
                progress(step, done, total)
                continue
            header = {name: i for i, name in enumerate(body[0])}
            missing = [c for c in items + list(geo.columns) if c not in header]
            if missing:
                raise CensusApiError(
                    f"The Census Data API's answer for {table_id} at the {level} level lacks the columns "
                    f"{', '.join(missing[:5])}.",
                    kind=ErrorKind.BAD_RESPONSE,
                )
            pairs = [(items[i], header[items[i]], header[items[i + 1]]) for i in range(len(ID_ITEMS), len(items), 2)]
            for row in body[1:]:
                geo_id, fips, name = _identify(level, header, row, table_id)
                found[geo_id] = (level, fips, name)
                rows_per_level[level] += 1
                cells = values.setdefault(geo_id, {})
                for code, ei, mi in pairs:
                    e_raw, m_raw = row[ei], row[mi]
                    specials += is_special(e_raw) + is_special(m_raw)
                    cells[code] = (parse_value(e_raw), parse_margin(m_raw))
            done += 1
            progress(step, done, total)
        if not rows_per_level[level]:
            where = f" in {', '.join(states)}" if states and level in STATE_LEVELS else ""
            raise CensusApiError(
                f"The Census Data API returned no rows for {table_id} ({year}) at the {level} level{where}. The "
                "table may not be published for that geography or vintage.",
                kind=ErrorKind.EMPTY,
            )

    data = TableData(meta=meta, universe=universe, rows=[], special_values=specials, empty_requests=empty)
    codes = [v.code for v in meta.variables]
    for geo_id in sorted(values):
        level, fips, name = found[geo_id]
        known = index.levels.get(geo_id)
        if known is None:
            taken = index.codes.get((level, fips))
            new = None if taken is not None or not index.add_new else _geography_row(level, geo_id, fips, name, index)
            if new is None:
                data.skipped.append(geo_id)
                continue
            data.new_geography.append(new)
        elif known != level:
            data.skipped.append(geo_id)
            continue
        data.levels[level] = data.levels.get(level, 0) + 1
        cells = values[geo_id]
        for code in codes:
            est, moe = cells.get(code, (None, None))
            if moe is not None and moe < 0:  # not a published margin: never store a negative one
                moe = None
            data.null_estimates += est is None
            data.null_margins += moe is None
            data.rows.append((geo_id, code, est, moe))
    if not data.rows:
        raise CensusApiError(
            f"None of the places the Census Data API returned for {table_id} ({year}) are in this database's "
            f"geography ({len(data.skipped)} skipped); nothing was loaded. The geography is that of the newest period "
            "loaded: fetch the newest period of these places first.",
            kind=ErrorKind.EMPTY,
        )
    data.requests = client.requests - before
    data.seconds = time.perf_counter() - started
    return data


def _identify(level: str, header: dict[str, int], row: list, table_id: str) -> tuple[str, str, str]:
    """(GEO_ID, fips, NAME) of one row, checked: the GEO_ID is the API's, of the level's summary level, ending in
    'US' + the code its geography columns give."""
    geo = GEOGRAPHIES[level]
    try:
        parts = {c: str(row[header[c]]).strip() for c in geo.columns}
        geo_id = str(row[header["GEO_ID"]] or "").strip()
        name = str(row[header["NAME"]] or "").strip()
    except (KeyError, IndexError, TypeError):
        geo_id, name, parts = "", "", {}
    fips = geo.fips(parts) if parts else ""
    if (
        not geo_id.startswith(SUMMARY_LEVELS[level])
        or geo_id[7:9] != "US"
        or geo_id[9:] != fips
        or not re.match(FIPS_PATTERNS[level], fips)
    ):
        raise CensusApiError(
            f"The Census Data API's answer for {table_id} at the {level} level has a row whose GEO_ID {geo_id!r} does "
            f"not fit its geography columns {parts}.",
            kind=ErrorKind.BAD_RESPONSE,
        )
    return geo_id, fips, name


__all__ = ["GeoIndex", "ID_ITEMS", "TableData", "download_table"]
