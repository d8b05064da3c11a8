"""What `python -m sage status` and the Status page report (:func:`status`), and what the Explore page lists as
loaded (:func:`loaded_tables`).

Never a secret: the server is named by host only, keys are reported as set or not set.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import psycopg

from . import db
from .catalog_index import CatalogStatus, catalog_status
from .census import migrate
from .census.extracts import SHIPPED
from .census.schema import TABLES
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

    def to_dict(self) -> dict[str, Any]:
        """The JSON of `python -m sage status --json` (``vintage_detail`` only when there are variables)."""
        out = asdict(self)
        if self.vintage_detail is None:
            del out["vintage_detail"]
        return out


def status(settings: Settings) -> StatusInfo:
    """The database, its tables and vintages, the retrieval index (with its catalog part) and the planner, read on
    the owner's connection."""
    info = db.server_info(settings)
    tables, vintages, detail, index, ready = db.run(settings, db.OWNER, _read_status)
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
    )


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


__all__ = ["DatabaseInfo", "IndexInfo", "StatusInfo", "VintageInfo", "loaded_tables", "status"]
