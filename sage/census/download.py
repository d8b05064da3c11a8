"""Download one ACS table from the Census Data API into memory (:func:`download_table`): no database access.

``census fetch`` (:mod:`sage.census.fetch`) downloads everything a table needs first and only then opens the load
transaction, so an HTTP failure half-way leaves the database as it was.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from ..errors import CensusApiError, ErrorKind
from ..types import StepProgress
from .api import MAX_GET_ITEMS, CensusClient, TableMeta, is_special, parse_value


@dataclass
class TableData:
    """Everything fetched for one table, held in memory until the load transaction."""

    meta: TableMeta
    universe: str | None
    rows: list[tuple[str, str, Decimal | None, Decimal | None]]
    states: int = 0
    counties: int = 0
    null_estimates: int = 0
    null_margins: int = 0
    special_values: int = 0
    skipped: list[str] = field(default_factory=list)
    requests: int = 0
    seconds: float = 0.0


def _chunks(meta: TableMeta, lines_per_request: int) -> list[list[str]]:
    """Lists of ``get`` items, each line's E and M together, at most ``MAX_GET_ITEMS`` per request."""
    n = max(1, min(lines_per_request, MAX_GET_ITEMS // 2))
    out = []
    for i in range(0, len(meta.variables), n):
        items: list[str] = []
        for v in meta.variables[i:i + n]:
            items += [v.code, v.margin_code]
        out.append(items)
    return out


def _geo_id(level: str, header: dict[str, int], row: list) -> str | None:
    try:
        state = str(row[header["state"]]).strip()
        if level == "state":
            return f"0400000US{state}"
        return f"0500000US{state}{str(row[header['county']]).strip()}"
    except (KeyError, IndexError, TypeError):
        return None


def download_table(
    client: CensusClient,
    table_id: str,
    year: int,
    geographies: tuple[str, ...],
    known_geo: set[str],
    *,
    universe_fallback: Callable[[str], str | None] | None = None,
    progress: StepProgress | None = None,
    lines_per_request: int = MAX_GET_ITEMS // 2,
) -> TableData:
    """Fetch one table (metadata, then every chunk for every geography) into memory; no database access."""
    progress = progress or (lambda *a: None)
    started = time.perf_counter()
    before = client.requests
    progress(f"{table_id}: metadata", 0, 1)
    meta = client.table_meta(year, table_id)
    progress(f"{table_id}: metadata", 1, 1)
    universe = meta.universe or (universe_fallback(table_id) if universe_fallback else None)

    chunks = _chunks(meta, lines_per_request)
    total = len(chunks) * len(geographies)
    step = f"{table_id}: download"
    progress(step, 0, total)
    values: dict[str, dict[str, tuple[Decimal | None, Decimal | None]]] = {}
    level_of: dict[str, str] = {}
    specials = 0
    done = 0
    for level in geographies:
        for items in chunks:
            body = client.data(year, items, level)
            header = {name: i for i, name in enumerate(body[0])}
            missing = [c for c in items + (["state"] if level == "state" else ["state", "county"]) if c not in header]
            if missing:
                raise CensusApiError(
                    f"The Census Data API's answer for {table_id} lacks the columns {', '.join(missing[:5])}.",
                    kind=ErrorKind.BAD_RESPONSE,
                )
            pairs = [(items[i], header[items[i]], header[items[i + 1]]) for i in range(0, len(items), 2)]
            for row in body[1:]:
                geo = _geo_id(level, header, row)
                if geo is None:
                    continue
                level_of[geo] = level
                cells = values.setdefault(geo, {})
                for code, ei, mi in pairs:
                    e_raw, m_raw = row[ei], row[mi]
                    specials += is_special(e_raw) + is_special(m_raw)
                    cells[code] = (parse_value(e_raw), parse_value(m_raw))
            done += 1
            progress(step, done, total)

    data = TableData(meta=meta, universe=universe, rows=[], special_values=specials)
    codes = [v.code for v in meta.variables]
    for geo in sorted(values):
        if geo not in known_geo:
            data.skipped.append(geo)
            continue
        if level_of[geo] == "state":
            data.states += 1
        else:
            data.counties += 1
        cells = values[geo]
        for code in codes:
            est, moe = cells.get(code, (None, None))
            if moe is not None and moe < 0:  # not a published margin: never store a negative one
                moe = None
            data.null_estimates += est is None
            data.null_margins += moe is None
            data.rows.append((geo, code, est, moe))
    if not data.rows:
        raise CensusApiError(
            f"None of the places the Census Data API returned for {table_id} ({year}) are in this database's "
            f"geography ({len(data.skipped)} skipped); nothing was loaded.",
            kind=ErrorKind.EMPTY,
        )
    data.requests = client.requests - before
    data.seconds = time.perf_counter() - started
    return data


__all__ = ["TableData", "download_table"]
