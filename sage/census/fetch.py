"""`python -m sage census fetch`: add ACS 5-year tables from the Census Data API (the download is
:mod:`sage.census.download`; ``census tables`` searches :mod:`sage.census.catalog_search`).

The shipped extract (``data/acs/``) is real but partial; this grows it with whole tables, margins of error
included, for the vintage the user picks.  The rules, and why:

* **All or nothing per table.**  Everything a table needs (metadata, every chunk of variables, states and counties)
  is downloaded into memory first; only then is the database touched, in one transaction.  An HTTP failure
  half-way leaves the database exactly as it was.  Several tables are loaded one transaction each, so tables
  finished before a failure stay loaded (the error says which).
* **One vintage per table.**  A table's old rows (shipped or fetched, any vintage) are deleted and the new ones
  inserted in the same transaction; the report says when another vintage was replaced.  Re-running a fetch is
  idempotent (same rows, same counts).
* **Special values are NULL.**  -666666666, -888888888, -999999999, -222222222, -333333333 and -555555555 are
  codes, never numbers: they become NULL estimates / margins (see :data:`sage.census.api.SPECIAL_VALUES`).
* **Places.**  ``for=state:*`` (the 50 states, DC and Puerto Rico) and ``for=county:*&in=state:*`` (their counties
  and county-equivalents).  ``public.geography`` is the shipped **2023** geography (Connecticut planning regions,
  2022+ Alaska areas); a row whose GEOID is not in it (e.g. the old Connecticut counties in a vintage before 2022)
  is skipped and counted in the report, not added.
* **Bookkeeping.**  Each fetched table is recorded in ``sage.census_tables`` (created by the schema; the DDL is
  repeated here so that a fetch also works on a database set up before that table existed) with source
  ``census-api:{year}/acs/acs5``.  The shipped-data loader skips tables recorded with any source other than
  ``shipped``, so re-running ``setup`` does not revert a fetch.
* After loading, the retrieval index is refreshed (``sage.index.index_schema``, which re-embeds only chunks
  whose text changed) so new variables can be retrieved, and the semantic layer's per-database cache is
  refreshed (``sage.census.semantic.load_measures(refresh=True)``) so measures over the new variables become
  available; if either fails, the data stay loaded and the report says so.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any

import psycopg

from .. import db
from ..errors import CensusApiError, DatabaseError, ErrorKind, SageError
from ..index import index_schema
from ..settings import Settings
from ..types import StepProgress
from . import migrate
from .api import MAX_GET_ITEMS, CensusClient, dataset_path
from .catalog_search import acs_table_catalog
from .codes import is_table_id
from .download import TableData, download_table
from .loader import SHIPPED
from .semantic import load_measures

log = logging.getLogger(__name__)

#: the tables the semantic layer and the examples want: with internet, `--preset core` rebuilds a complete
#: extract (margins of error included) for one vintage
PRESETS: dict[str, list[str]] = {
    "core": [
        "B01001", "B01002", "B01003", "B02001", "B03002", "B08301", "B08303", "B15003", "B17001", "B19001",
        "B19013", "B19083", "B19301", "B23025", "B25002", "B25003", "B25064", "B25070", "B25077", "B27010",
        "B28011",
    ],
}

#: the vintage of the shipped geography and catalog; the CLI's default
DEFAULT_VINTAGE = 2023
#: the first ACS 5-year release (2005-2009)
FIRST_VINTAGE = 2009
GEOGRAPHIES = ("state", "county")


# ---------------------------------------------------------------------------------------------- small rules

_CATEGORY_BY_PREFIX = {
    "08": "transportation",
    "14": "education",
    "15": "education",
    "17": "poverty",
    "22": "poverty",
    "19": "income",
    "20": "income",
    "23": "employment",
    "24": "employment",
    "25": "housing",
    "27": "health_insurance",
}
#: disability tables that are about health insurance coverage (the rest of B18 is demographics)
_HEALTH_INSURANCE_NUMBERS = ("18135", "18136")


def category_for(table_id: str) -> str:
    """The category of an ACS table, by its number, exactly as ``data/acs/SOURCE.md`` assigns it.

    B08 transportation; B14, B15 education; B17, B22 poverty; B19, B20 income; B23, B24 employment; B25 housing;
    B27 and B18135/B18136 health_insurance; everything else demographics (so B28011 internet subscriptions is
    demographics).  The same rule holds for collapsed ``C`` tables (C15 education, C24 employment, ...).
    """
    table_id = (table_id or "").upper()
    if table_id[1:6] in _HEALTH_INSURANCE_NUMBERS:
        return "health_insurance"
    return _CATEGORY_BY_PREFIX.get(table_id[1:3], "demographics")


def vintage_label(year: int) -> str:
    """The 5-year period a release year stands for: 2023 -> '2019-2023'."""
    return f"{int(year) - 4}-{int(year)}"


def source_label(year: int) -> str:
    """The ``source`` of fetched rows and of their ``sage.census_tables`` entry."""
    return f"census-api:{dataset_path(year)}"


def fetch_command(tables: Iterable[str], vintage: int = DEFAULT_VINTAGE) -> str:
    """The shell command that adds ``tables`` (for the Explore page and messages)."""
    return f"python -m sage census fetch --vintage {int(vintage)} --tables {','.join(tables)}"


def resolve_tables(tables: str | Iterable[str] | None = None, preset: str | None = None) -> list[str]:
    """Table ids from a comma-separated string or a list, or a preset name; upper-cased, de-duplicated, checked."""
    if preset:
        if preset not in PRESETS:
            raise CensusApiError(
                f"Unknown preset {preset!r}; choose one of {', '.join(sorted(PRESETS))}.",
                kind=ErrorKind.INVALID_ARGUMENT,
            )
        return list(PRESETS[preset])
    if isinstance(tables, str):
        tables = tables.split(",")
    out: list[str] = []
    for t in tables or []:
        t = str(t).strip().upper()
        if t and t not in out:
            out.append(t)
    if not out:
        raise CensusApiError("Name at least one table (e.g. --tables B25003) or a preset (--preset core).",
                             kind=ErrorKind.INVALID_ARGUMENT)
    bad = [t for t in out if not is_table_id(t)]
    if bad:
        raise CensusApiError(
            f"{', '.join(bad)} {'is not an ACS table id' if len(bad) == 1 else 'are not ACS table ids'} "
            "(a B or C and five digits, with an optional letter suffix, e.g. B25003 or B19013A). "
            "Find ids with `python -m sage census tables --search TEXT`.",
            kind=ErrorKind.INVALID_ARGUMENT,
        )
    return out


def _check_vintage(vintage: int) -> int:
    try:
        year = int(vintage)
    except (TypeError, ValueError):
        raise CensusApiError(f"The vintage must be a year such as {DEFAULT_VINTAGE}, not {vintage!r}.",
                             kind=ErrorKind.INVALID_ARGUMENT) from None
    if not FIRST_VINTAGE <= year <= date.today().year:
        raise CensusApiError(
            f"ACS 5-year data exist for the years {FIRST_VINTAGE} to the latest release, not {year} "
            f"(the year is the last of the five: {DEFAULT_VINTAGE} = {vintage_label(DEFAULT_VINTAGE)}).",
            kind=ErrorKind.INVALID_ARGUMENT,
        )
    return year


def _check_geographies(geographies: Iterable[str]) -> tuple[str, ...]:
    geos = tuple(dict.fromkeys(str(g).strip().lower() for g in geographies if str(g).strip()))
    bad = [g for g in geos if g not in GEOGRAPHIES]
    if not geos or bad:
        raise CensusApiError(
            f"Geographies must be state and/or county, not {', '.join(bad) or 'nothing'}.",
            kind=ErrorKind.INVALID_ARGUMENT,
        )
    return geos


# ---------------------------------------------------------------------------------------------- reports


@dataclass
class TableReport:
    """What happened to one table."""

    table_id: str
    vintage: str
    concept: str
    category: str
    universe: str | None
    variables: int = 0
    rows: int = 0  # rows inserted into public.estimates
    states: int = 0
    counties: int = 0
    null_estimates: int = 0  # NULL estimates (special values or empty cells)
    null_margins: int = 0
    special_values: int = 0  # cells that carried a Census special-value code
    skipped_places: int = 0  # places the API returned that are not in public.geography
    skipped_geo_ids: list[str] = field(default_factory=list)  # up to 10 of them
    replaced_rows: int = 0  # rows of this table deleted (earlier fetch or shipped extract)
    replaced_vintage: str | None = None  # set when another vintage was replaced
    previous_source: str | None = None
    requests: int = 0
    fetch_seconds: float = 0.0
    load_seconds: float = 0.0

    @property
    def seconds(self) -> float:
        return self.fetch_seconds + self.load_seconds

    def to_dict(self) -> dict:
        out = asdict(self)
        out["seconds"] = round(self.seconds, 3)
        out["fetch_seconds"] = round(self.fetch_seconds, 3)
        out["load_seconds"] = round(self.load_seconds, 3)
        return out

    def summary(self) -> str:
        line = (
            f"{self.table_id} ({self.concept}; {self.category}): {self.variables} variables, {self.rows:,} rows "
            f"({self.states} states, {self.counties} counties) in {self.seconds:.1f} s"
        )
        notes = []
        if self.null_estimates or self.null_margins:
            notes.append(f"{self.null_estimates:,} NULL estimates and {self.null_margins:,} NULL margins "
                         f"({self.special_values:,} Census special values)")
        if self.replaced_vintage:
            notes.append(f"replaced the {self.replaced_vintage} vintage ({self.replaced_rows:,} rows)")
        elif self.previous_source == SHIPPED:
            notes.append(f"replaced {self.replaced_rows:,} rows of the shipped extract")
        elif self.replaced_rows:
            notes.append(f"refreshed {self.replaced_rows:,} rows")
        if self.skipped_places:
            notes.append(f"skipped {self.skipped_places} places not in the 2023 geography "
                         f"(e.g. {', '.join(self.skipped_geo_ids[:3])})")
        return line + "".join(f"\n    - {n}" for n in notes)


@dataclass
class FetchReport:
    """What ``fetch_tables`` did, table by table, plus the retrieval-index refresh."""

    year: int
    vintage: str
    source: str
    geographies: tuple[str, ...]
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


# ---------------------------------------------------------------------------------------------- load


def _load_table(conn: psycopg.Connection, data: TableData, year: int) -> TableReport:
    """Replace the table's variables and estimates in one transaction (``conn`` is in autocommit mode)."""
    meta = data.meta
    vintage = vintage_label(year)
    source = source_label(year)
    category = category_for(meta.table_id)
    report = TableReport(
        table_id=meta.table_id, vintage=vintage, concept=meta.concept, category=category, universe=data.universe,
        variables=len(meta.variables), rows=len(data.rows), states=data.states, counties=data.counties,
        null_estimates=data.null_estimates, null_margins=data.null_margins, special_values=data.special_values,
        skipped_places=len(data.skipped), skipped_geo_ids=data.skipped[:10], requests=data.requests,
        fetch_seconds=data.seconds,
    )
    started = time.perf_counter()
    try:
        _write_table(conn, data, report, vintage, source, category)
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatabaseError(
            f"Loading {meta.table_id} into the database failed ({first}); the transaction was rolled back, so the "
            "table is as it was.",
            detail=str(exc),
        ) from exc
    report.load_seconds = time.perf_counter() - started
    return report


def _write_table(conn: psycopg.Connection, data: TableData, report: TableReport, vintage: str, source: str,
                 category: str) -> None:
    meta = data.meta
    codes = [v.code for v in meta.variables]
    with conn.transaction():
        cur = conn.cursor()
        # one loader at a time (a second fetch, or setup's shipped load); readers are not blocked
        cur.execute("LOCK TABLE sage.census_tables IN SHARE ROW EXCLUSIVE MODE")
        prev = cur.execute("SELECT source FROM sage.census_tables WHERE table_id = %s", (meta.table_id,)).fetchone()
        report.previous_source = prev[0] if prev else None
        old = db.scalar(
            conn,
            """SELECT coalesce(array_agg(DISTINCT v.vintage), '{}')
               FROM public.variables v JOIN public.estimates_by_vintage e USING (variable_code)
               WHERE v.table_id = %s""",
            (meta.table_id,),
        )
        other = sorted(set(old) - {vintage})
        report.replaced_vintage = ", ".join(other) or None
        cur.execute(
            "DELETE FROM public.estimates_by_vintage WHERE variable_code IN "
            "(SELECT variable_code FROM public.variables WHERE table_id = %s)",
            (meta.table_id,),
        )
        report.replaced_rows = cur.rowcount
        cur.executemany(
            """INSERT INTO public.variables (variable_code, label, concept, category, table_id, universe, vintage,
                                            vintages)
               VALUES (%s, %s, %s, %s, %s, %s, %s, ARRAY[%s])
               ON CONFLICT (variable_code) DO UPDATE SET label = EXCLUDED.label, concept = EXCLUDED.concept,
                 category = EXCLUDED.category, table_id = EXCLUDED.table_id, universe = EXCLUDED.universe,
                 vintage = EXCLUDED.vintage, vintages = EXCLUDED.vintages""",
            [(v.code, v.label, v.concept or meta.concept, category, meta.table_id, data.universe, vintage, vintage)
             for v in meta.variables],
        )
        # lines that the new vintage no longer has: drop them (no estimates refer to them any more), unless
        # something else holds on to them
        try:
            with conn.transaction():
                cur.execute("DELETE FROM public.variables WHERE table_id = %s AND NOT (variable_code = ANY(%s))",
                            (meta.table_id, codes))
        except psycopg.errors.ForeignKeyViolation:
            log.info("kept stale variables of %s: still referenced", meta.table_id)
        with cur.copy(
            "COPY public.estimates_by_vintage (geo_id, variable_code, estimate, margin_error, source, vintage) "
            "FROM STDIN"
        ) as copy:
            for geo, code, est, moe in data.rows:
                copy.write_row((geo, code, est, moe, source, vintage))
        cur.execute("DELETE FROM sage.census_tables WHERE table_id = %s AND vintage <> %s", (meta.table_id, vintage))
        cur.execute(
            """INSERT INTO sage.census_tables (table_id, vintage, source, variables, rows) VALUES (%s, %s, %s, %s, %s)
               ON CONFLICT (table_id, vintage) DO UPDATE SET source = EXCLUDED.source,
                 variables = EXCLUDED.variables, rows = EXCLUDED.rows, loaded_at = now()""",
            (meta.table_id, vintage, source, len(codes), len(data.rows)),
        )


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
    """Drop the semantic layer's per-database cache so measures over the new variables become available."""
    try:
        measures = load_measures(settings, refresh=True)
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
    client: CensusClient | None = None,
    refresh_index: bool = True,
    lines_per_request: int = MAX_GET_ITEMS // 2,
) -> FetchReport:
    """Fetch ``tables`` of the ``vintage`` (release year, e.g. 2023 = 2019-2023) ACS 5-year and load them.

    ``progress(step, done, total)`` is called per step ("B25003: metadata", "B25003: download" once per request,
    "B25003: load").  ``client`` replaces the default HTTP client (tests use one with tiny backoff delays).
    Raises :class:`CensusApiError` (``kind`` bad_key, missing_key, network, timeout, unavailable, rate_limited,
    empty, unknown_table, not_found, bad_request, bad_response, invalid_argument); tables loaded before the
    failure stay loaded, the failing table and the ones after it are untouched: that failure is raised as a
    :class:`FetchError` (its ``kind`` the failing step's, its cause the original error) whose ``report`` holds the
    partial :class:`FetchReport`.
    """
    progress = progress or (lambda *a: None)
    table_ids = resolve_tables(tables)
    year = _check_vintage(vintage)
    geos = _check_geographies(geographies)
    client = client or CensusClient.from_settings(settings)
    report = FetchReport(year=year, vintage=vintage_label(year), source=source_label(year), geographies=geos)
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
        known_geo = {r[0] for r in conn.execute("SELECT geo_id FROM public.geography")}
        try:
            for table_id in table_ids:
                data = download_table(client, table_id, year, geos, known_geo, universe_fallback=universe_fallback,
                                      progress=progress, lines_per_request=lines_per_request)
                progress(f"{table_id}: load", 0, 1)
                report.tables.append(_load_table(conn, data, year))
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
            if report.tables:
                report.semantic = _refresh_semantic(settings)
                if refresh_index:
                    report.index = _refresh_index(settings, progress)
            report.seconds = time.perf_counter() - started
            raise FetchError(message, kind=exc.kind, detail=exc.detail, report=report) from exc
        if report.tables:
            conn.execute("ANALYZE public.variables, public.estimates_by_vintage")
    if report.tables:
        report.semantic = _refresh_semantic(settings)
    if refresh_index and report.tables:
        report.index = _refresh_index(settings, progress)
    elif not refresh_index:
        report.index = {"status": "skipped", "message": "not requested"}
    report.seconds = time.perf_counter() - started
    return report


__all__ = [
    "DEFAULT_VINTAGE",
    "FetchError",
    "FetchReport",
    "PRESETS",
    "TableReport",
    "category_for",
    "fetch_command",
    "fetch_tables",
    "resolve_tables",
    "source_label",
    "vintage_label",
]
