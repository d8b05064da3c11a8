"""What `python -m sage status` and the Status page report (:func:`status`), and what the Explore page lists as
loaded (:func:`loaded_tables`).

Never a secret: the server is named by host only, keys are reported as set or not set.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import psycopg

from . import db
from .catalog_index import CatalogStatus, catalog_status
from .census import migrate, periods
from .census.extracts import SHIPPED
from .census.fetch_rules import vintage_label
from .census.schema import TABLES
from .errors import SageError
from .settings import Settings


@dataclass(frozen=True)
class DatabaseInfo:
    """The server: embedded or not, its version, and where it is (``embedded`` or ``host:port/dbname``)."""

    embedded: bool
    server_version: str
    host: str


@dataclass(frozen=True)
class IndexInfo:
    """The retrieval index: how many chunks, embedded with which model (0 and None before setup)."""

    chunks: int = 0
    model: str | None = None


@dataclass(frozen=True)
class VintageInfo:
    """One ACS 5-year period in the database: how many variables have estimates of it, and how many estimates
    (rows of ``public.estimates_by_vintage``)."""

    vintage: str
    variables: int
    estimates: int


@dataclass(frozen=True)
class ReleaseInfo:
    """The newest ACS 5-year release the Census Data API lists, next to the latest period loaded: ``newer`` when
    ``census update`` would bring one.  ``checked`` is False when the API was not asked (no Census API key here)
    or did not answer (``message`` says why)."""

    checked: bool
    newest: str | None = None
    newer: bool = False
    message: str = ""


@dataclass(frozen=True)
class StatusInfo:
    """The ``status`` report (docs/design.md), plus ``host``, ``vintage_detail`` and ``ready``."""

    database: DatabaseInfo
    tables: dict[str, int]
    vintages: list[str]
    index: IndexInfo
    planner: str
    model: str | None
    #: None when ``public.variables`` is empty
    vintage_detail: list[VintageInfo] | None
    ready: bool
    #: the catalog part of the index (the ACS tables not loaded): indexed / expected, and whether a build runs
    catalog: CatalogStatus | None = None
    #: the period questions read (``public.estimates``: the newest latest period of the variables)
    latest: str | None = None
    #: periods with rows that no variable reads yet: a ``census update`` loading (or interrupted; run it again)
    pending: list[str] = field(default_factory=list)
    #: whether a newer release is published (None when not asked for)
    release: ReleaseInfo | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON of `python -m sage status --json` (``vintage_detail`` only when there are variables)."""
        out = asdict(self)
        if self.vintage_detail is None:
            del out["vintage_detail"]
        return out


def status(settings: Settings, *, check_release: bool = False) -> StatusInfo:
    """The database, its tables and vintages, the retrieval index (with its catalog part) and the planner, read on
    the owner's connection; with ``check_release``, whether the Census Data API lists a newer ACS 5-year release
    (:func:`release_status`)."""
    info = db.server_info(settings)
    tables, vintages, detail, index, ready = db.run(settings, db.OWNER, _read_status)
    latest, pending = db.run(settings, db.OWNER, _read_periods) if tables["public.variables"] else (None, [])
    planner = settings.effective_planner
    catalog = catalog_status(settings, model=index.model) if tables["public.estimates_by_vintage"] else None
    return StatusInfo(
        database=DatabaseInfo(embedded=info["embedded"], server_version=info["server_version"], host=info["host"]),
        tables=tables,
        vintages=vintages,
        index=index,
        planner=planner,
        model=settings.model if planner == "claude" else None,
        vintage_detail=detail,
        # a database of the previous version (no estimates_by_vintage) is not ready: setup migrates it
        ready=ready,
        catalog=catalog,
        latest=latest,
        pending=pending,
        release=release_status(settings, latest) if check_release else None,
    )


def _read_periods(conn: psycopg.Connection) -> tuple[str | None, list[str]]:
    latest = periods.latest_period(conn)
    loaded = set(periods.loaded_periods(conn))
    rows = conn.execute("SELECT DISTINCT vintage FROM public.estimates_by_vintage").fetchall()
    return latest, sorted((r[0] for r in rows if r[0] not in loaded), key=periods.bounds)


#: how long the answer of the API's dataset discovery is kept (one request an hour, not one per page view)
RELEASE_TTL_S = 3600.0
_releases: dict[str, tuple[float, list[int] | str]] = {}


def release_status(settings: Settings, latest: str | None) -> ReleaseInfo:
    """Whether the Census Data API lists an ACS 5-year release newer than ``latest``.  Asked only with a Census API
    key configured (without one no update could run; and no request leaves a machine that was not set up for it),
    once an hour per API address, with a short time-out: an API that does not answer is said, never waited on."""
    if not settings.census_api_key:
        return ReleaseInfo(checked=False, message="No Census API key: newer releases are not looked up.")
    now = time.monotonic()
    cached = _releases.get(settings.census_api_url)
    if cached is None or now - cached[0] > RELEASE_TTL_S:
        from .census.api import CensusClient

        try:
            found: list[int] | str = CensusClient.from_settings(settings, timeout=5.0, attempts=1).releases()
        except SageError as exc:
            found = exc.message
        cached = _releases[settings.census_api_url] = (now, found)
    found = cached[1]
    if isinstance(found, str):
        return ReleaseInfo(checked=False, message=f"The Census Data API could not be asked for its releases: {found}")
    newest = vintage_label(found[-1])
    newer = latest is None or periods.bounds(newest)[1] > periods.bounds(latest)[1]
    message = (f"A newer ACS 5-year release is published: {newest} (this database reads {latest}). Load it with "
               "`python -m sage census update`." if newer else f"Up to date: {newest} is the newest release.")
    return ReleaseInfo(checked=True, newest=newest, newer=newer, message=message)


def _read_status(conn: psycopg.Connection) -> tuple[dict[str, int], list[str], list[VintageInfo] | None, IndexInfo,
                                                     bool]:
    """Table counts, vintages, the index and whether setup is complete (:func:`sage.db.is_set_up`, the check a
    question makes), on one owner connection."""
    tables: dict[str, int] = {}
    vintages: list[str] = []
    detail: list[VintageInfo] | None = None
    index = IndexInfo()
    for table in TABLES:
        exists = conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()
        tables[table] = _count(conn, table) if exists and exists[0] else 0
    if tables["public.variables"] and tables["public.estimates_by_vintage"]:
        rows = conn.execute(
            """SELECT e.vintage, count(DISTINCT e.variable_code), count(*)
               FROM public.estimates_by_vintage e GROUP BY e.vintage ORDER BY e.vintage DESC"""
        ).fetchall()
        vintages = [r[0] for r in rows]
        detail = [VintageInfo(vintage=r[0], variables=r[1], estimates=r[2]) for r in rows]
    found = conn.execute("SELECT to_regclass('sage.schema_embeddings')").fetchone()
    if found and found[0]:
        row = conn.execute("SELECT count(*), min(model) FROM sage.schema_embeddings").fetchone()
        if row:
            index = IndexInfo(chunks=row[0], model=row[1])
    return tables, vintages, detail, index, db.is_set_up(conn)


def _count(conn: psycopg.Connection, table: str) -> int:
    row = conn.execute(psycopg.sql.SQL("SELECT count(*) FROM {}").format(
        psycopg.sql.Identifier(*table.split(".")))).fetchone()
    return int(row[0]) if row else 0


def loaded_tables(settings: Settings) -> list[dict[str, Any]]:
    """The tables with estimates in the database, one entry per table and period, for the Explore page.

    ``[{"table_id", "vintage", "variables", "rows", "source", "concept", "category", "loaded_at"}]`` by table, the
    latest period first; ``source`` is ``shipped`` for the shipped extracts or ``census-api:{year}/acs/acs5`` for
    fetched tables.
    """
    with db.owner(settings) as conn:
        db.require_setup(conn)
        migrate.require_current(conn)
        rows = conn.execute(
            """WITH s AS (
                  SELECT v.table_id, e.vintage, count(DISTINCT v.variable_code) AS variables, count(*) AS rows,
                         min(v.concept) AS concept, min(v.category) AS category
                  FROM public.variables v JOIN public.estimates_by_vintage e USING (variable_code)
                  GROUP BY v.table_id, e.vintage)
                SELECT s.table_id, s.vintage, s.variables, s.rows, coalesce(ct.source, %s), s.concept, s.category,
                       ct.loaded_at
                FROM s LEFT JOIN sage.census_tables ct ON ct.table_id = s.table_id AND ct.vintage = s.vintage
                ORDER BY s.table_id, s.vintage DESC""",
            (SHIPPED,),
        ).fetchall()
    keys = ("table_id", "vintage", "variables", "rows", "source", "concept", "category", "loaded_at")
    return [dict(zip(keys, r, strict=True)) for r in rows]


__all__ = ["DatabaseInfo", "IndexInfo", "ReleaseInfo", "StatusInfo", "VintageInfo", "loaded_tables", "release_status",
           "status"]
