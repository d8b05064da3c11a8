"""`python -m sage census fetch`: add ACS 5-year tables from the Census Data API, for every geography level and
several periods (the download is :mod:`sage.census.download`; ``census tables`` searches
:mod:`sage.census.catalog_search`).

The shipped extracts are real but partial; this grows them with whole tables, margins of error included, for the
period and the levels the user picks.  The rules, and why:

* **All or nothing per table.**  Everything a table needs (metadata, every chunk of variables, every level, per
  state where needed) is downloaded into memory first; only then is the database touched, in one transaction.  An
  HTTP failure half-way leaves the database exactly as it was.  Several tables are loaded one transaction each, so
  tables finished before a failure stay loaded (the error says which).
* **Several periods side by side.**  ``--vintage 2018`` loads 2014-2018 into ``public.estimates_by_vintage``
  beside 2019-2023.  A fetch replaces only the rows of its table, its period and the levels (and ``--states``) it
  fetched; re-running it is idempotent.  ``public.variables.vintage`` stays the latest period loaded and
  ``vintages`` lists them all; when the API's label of a line in the fetched period differs from the label of the
  latest one (ignoring case, the colons the API added in 2019 and the year of "inflation-adjusted dollars"),
  ``label_changed`` is set and ``earlier_label`` keeps the earlier label.
* **Special values.**  -666666666, -888888888, -999999999 are NULL estimates; the margin -555555555 (a controlled
  total, no sampling error) is stored as 0, -222222222 and -333333333 (margin not computable) as NULL (see
  :data:`sage.census.api_values.SPECIAL_VALUES`).
* **Levels.**  nation (``for=us:1``), state, county, place, cbsa (metropolitan and micropolitan statistical areas),
  cd (congressional districts), tract (one request per state) and zcta; ``--states TX,CA`` limits the levels inside
  a state.  Rows are keyed by the API's GEO_ID and named by its NAME.  ``public.geography`` is the geography of the
  newest period loaded: a fetch of that period (or a newer one) adds the places it lacks; a fetch of an earlier
  period loads only places it has and counts the others as skipped (the old Connecticut counties, a tract or a
  metro area of another delineation).
* **Bookkeeping.**  Each fetched table and period is recorded in ``sage.census_tables`` with source
  ``census-api:{year}/acs/acs5``.  The shipped-data loader leaves (table, period) pairs recorded with any other
  source than ``shipped`` alone, so re-running ``setup`` does not revert a fetch.
* After loading, the retrieval index is refreshed (``sage.index.index_schema``, which re-embeds only chunks
  whose text changed) so new variables can be retrieved, and the semantic layer's per-database cache is
  refreshed (``sage.census.semantic.load_measures(refresh=True)``, which the offline planner's catalog follows)
  so a fetched table or level becomes answerable at once; if either fails, the data stay loaded and the report
  says so.

Its parts: :mod:`sage.census.fetch_rules` (what a fetch may ask for, and the names it gives what it loads),
:mod:`sage.census.download` (one table into memory), :mod:`sage.census.fetch_load` (one table into the database, in
one transaction); this module runs them table by table, reports (:class:`FetchReport`, :class:`FetchError`), and
refreshes the index and the semantic layer afterwards.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import db
from ..errors import CensusApiError, SageError
from ..index import index_schema
from ..settings import Settings
from ..types import StepProgress
from . import migrate
from .api import MAX_GET_ITEMS, CensusClient
from .catalog_search import acs_table_catalog
from .download import download_table
from .fetch_load import TableReport, _load_table, geo_index
from .fetch_rules import (
    GEOGRAPHIES,
    _check_geographies,
    _check_states,
    _check_vintage,
    resolve_tables,
    source_label,
    vintage_label,
)
from .semantic import load_measures

log = logging.getLogger(__name__)


@dataclass
class FetchReport:
    """What ``fetch_tables`` did, table by table, plus the retrieval-index refresh."""

    year: int
    vintage: str
    source: str
    geographies: tuple[str, ...]
    states: list[str] | None = None
    tables: list[TableReport] = field(default_factory=list)
    index: dict = field(default_factory=dict)
    semantic: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables)

    def to_dict(self) -> dict:
        return {
            "year": self.year,
            "vintage": self.vintage,
            "source": self.source,
            "geographies": list(self.geographies),
            "states": self.states,
            "tables": [t.to_dict() for t in self.tables],
            "rows": self.rows,
            "index": self.index,
            "semantic": self.semantic,
            "seconds": round(self.seconds, 3),
        }

    def summary(self) -> str:
        lines = [f"Loaded {len(self.tables)} table(s), {self.rows:,} rows, ACS 5-year {self.vintage} "
                 f"({self.source}) in {self.seconds:.1f} s:"]
        lines += ["  " + t.summary() for t in self.tables]
        status = self.index.get("status")
        if status == "refreshed":
            lines.append("Retrieval index refreshed.")
        elif status:
            lines.append(f"Retrieval index: {status} — {self.index.get('message', '')}".rstrip(" —"))
        if self.semantic.get("status") == "failed":
            lines.append(f"Semantic layer: failed — {self.semantic.get('message', '')}")
        return "\n".join(lines)


class FetchError(SageError):
    """``census fetch`` stopped at a table; ``report`` lists the tables loaded before it (they stay loaded).

    ``kind`` and ``detail`` are those of the error that stopped it (its ``__cause__``): a Census API kind, or
    ``database`` when loading failed.
    """

    def __init__(self, message: str, *, report: FetchReport, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.report = report


def _refresh_index(settings: Settings, progress: StepProgress | None) -> dict[str, Any]:
    """Re-index the schema and variables so new variables are retrievable; never raises (the data are loaded)."""
    try:
        report = index_schema(settings, progress=progress)
    except SageError as exc:
        return {"status": "failed", "message": f"{exc.message} The data are loaded; run `python -m sage setup` to "
                "rebuild the retrieval index."}
    except Exception as exc:  # the index is a separate component: its failure must not hide a finished load
        log.warning("retrieval index refresh failed", exc_info=True)
        return {"status": "failed", "message": f"{type(exc).__name__}: {str(exc)[:200]}. The data are loaded; run "
                "`python -m sage setup` to rebuild the retrieval index."}
    return {"status": "refreshed", "detail": report.to_dict()}


def _refresh_semantic(settings: Settings) -> dict[str, Any]:
    """Drop the semantic layer's per-database cache so measures over the new variables become available, and build
    the offline planner's catalog of the new data generation right away (stored for every process: the next
    question, here or in another process, reads it instead of building it)."""
    from ..planner.offline.catalog import refresh_catalog

    try:
        measures = load_measures(settings, refresh=True)
        refresh_catalog(settings)
    except SageError as exc:
        return {"status": "failed", "message": exc.message}
    except Exception as exc:  # a broken measures file must not hide a finished load
        log.warning("semantic layer refresh failed", exc_info=True)
        return {"status": "failed", "message": f"{type(exc).__name__}: {str(exc)[:200]}"}
    return {"status": "refreshed", "measures": len(measures)}


def fetch_tables(
    settings: Settings,
    tables: list[str],
    vintage: int,
    geographies: Iterable[str] = GEOGRAPHIES,
    progress: StepProgress | None = None,
    *,
    states: Iterable[str] | None = None,
    client: CensusClient | None = None,
    refresh_index: bool = True,
    lines_per_request: int = MAX_GET_ITEMS // 2,
    hold: str | None = None,
) -> FetchReport:
    """Fetch ``tables`` of the ``vintage`` (release year, e.g. 2023 = 2019-2023) ACS 5-year at the ``geographies``
    levels (``states``: USPS abbreviations limiting the levels inside a state) and load them.

    ``progress(step, done, total)`` is called per step ("B25003: metadata", "B25003: download" once per request,
    "B25003: load").  ``client`` replaces the default HTTP client (tests use one with tiny backoff delays).
    Raises :class:`CensusApiError` (``kind`` bad_key, missing_key, network, timeout, unavailable, rate_limited,
    empty, unknown_table, not_found, bad_request, bad_response, bad_geography, invalid_argument); tables loaded
    before the failure stay loaded, the failing table and the ones after it are untouched: that failure is raised as
    a :class:`FetchError` (its ``kind`` the failing step's, its cause the original error) whose ``report`` holds the
    partial :class:`FetchReport`.

    ``hold`` (a period; ``census update``) loads the rows without making their period the latest (see
    :func:`sage.census.fetch_load._load_table`); the semantic layer and the index are then left to the update's
    switch, which changes what questions see.
    """
    progress = progress or (lambda *a: None)
    table_ids = resolve_tables(tables)
    year = _check_vintage(vintage)
    geos = _check_geographies(geographies)
    client = client or CensusClient.from_settings(settings)
    started = time.perf_counter()
    catalog = acs_table_catalog(settings.data_path)
    group_universes: dict[str, dict] | None = None

    def universe_fallback(table_id: str) -> str | None:
        nonlocal group_universes
        if table_id in catalog:  # universes are stable across vintages; the offline catalog saves a request
            return catalog[table_id]["universe"]
        if group_universes is None:
            try:
                group_universes = client.group_universes(year)
            except CensusApiError as exc:
                log.info("no universe from groups.json: %s", exc.message)
                group_universes = {}
        return (group_universes.get(table_id) or {}).get("universe")

    with db.owner(settings) as conn:
        db.require_setup(conn)
        migrate.require_current(conn)
        index = geo_index(conn, year)
        state_fips = _check_states(states, index, geos)
        abbrs = [index.states[f][0] for f in state_fips] if state_fips else None
        report = FetchReport(year=year, vintage=vintage_label(year), source=source_label(year), geographies=geos,
                             states=abbrs)
        try:
            for table_id in table_ids:
                data = download_table(client, table_id, year, geos, index, states=state_fips,
                                      universe_fallback=universe_fallback, progress=progress,
                                      lines_per_request=lines_per_request)
                progress(f"{table_id}: load", 0, 1)
                report.tables.append(_load_table(conn, data, year, geos, state_fips, hold))
                for row in data.new_geography:  # the next table finds them in the geography
                    index.add(row)
                progress(f"{table_id}: load", 1, 1)
                log.info("loaded %s: %d rows", table_id, len(data.rows))
        except SageError as exc:
            done = [t.table_id for t in report.tables]
            rest = table_ids[len(done):]
            message = (
                f"{exc.message} Nothing of {', '.join(rest)} was loaded"
                + (f"; {', '.join(done)} {'was' if len(done) == 1 else 'were'} loaded before the failure." if done
                   else "; the database is unchanged.")
            )
            if report.tables and hold is None:
                report.semantic = _refresh_semantic(settings)
                if refresh_index:
                    report.index = _refresh_index(settings, progress)
            report.seconds = time.perf_counter() - started
            raise FetchError(message, kind=exc.kind, detail=exc.detail, report=report) from exc
        if report.tables:
            conn.execute("ANALYZE public.geography, public.variables, public.estimates_by_vintage")
    if report.tables and hold is None:
        report.semantic = _refresh_semantic(settings)
    if refresh_index and report.tables and hold is None:
        report.index = _refresh_index(settings, progress)
    elif not refresh_index:
        report.index = {"status": "skipped", "message": "not requested"}
    report.seconds = time.perf_counter() - started
    return report


__all__ = [
    "FetchError",
    "FetchReport",
    "fetch_tables",
]
