"""Helpers for the statements the product writes itself (never planned SQL: that goes through the guard and
:mod:`sage.execute`): :func:`one_row`, :func:`scalar`, :func:`require_setup`, and :func:`server_info` for the
Status page.

Apart from the pools (:mod:`sage.db.pool`) because they run on a connection the caller already holds; only
:func:`server_info` takes one itself.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import sql as pgsql
from psycopg.abc import Params

from ..errors import DatabaseError, NotSetUpError
from ..settings import Settings, redact_url
from .pool import run
from .roles import OWNER

#: a statement the product writes itself (never planned SQL: that goes through the guard and :mod:`sage.execute`)
Query = str | pgsql.SQL | pgsql.Composed


def one_row(conn: psycopg.Connection[Any], query: Query, params: Params | None = None) -> tuple[Any, ...]:
    """The one row ``query`` always returns (``SELECT count(*)``, ``SELECT to_regclass(...)``, ``SHOW``)."""
    row = conn.execute(query, params).fetchone()
    if row is None:  # pragma: no cover - such a query always returns a row
        raise DatabaseError("The database returned no row where it always returns one.", detail=str(query))
    return row


def scalar(conn: psycopg.Connection[Any], query: Query, params: Params | None = None) -> Any:
    """The first value of :func:`one_row`."""
    return one_row(conn, query, params)[0]


def server_info(settings: Settings) -> dict[str, Any]:
    """What the Status page and `status` show: embedded or not, where, and the server version."""

    def read(conn: psycopg.Connection) -> tuple[Any, Any]:
        version = scalar(conn, "SHOW server_version")
        return version, conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()

    version, has_vector = run(settings, OWNER, read)
    return {
        "embedded": settings.embedded,
        "server_version": version,
        "host": "embedded" if settings.embedded else redact_url(settings.database_url),
        "vector": has_vector[0] if has_vector else None,
    }


#: what a set-up database has, in one cheap statement (each EXISTS stops at the first row): census estimates, the
#: retrieval index, and the data generation (``sage.census.schema.GENERATION_DDL``; a database set up before it
#: existed gets it from setup, which is quick on a loaded database)
SET_UP_QUERY = ("SELECT EXISTS (SELECT FROM public.estimates) AND EXISTS (SELECT FROM public.estimates_by_vintage) "
                "AND EXISTS (SELECT FROM sage.schema_embeddings) AND EXISTS (SELECT FROM sage.data_generation)")


def is_set_up(conn: psycopg.Connection[Any]) -> bool:
    """Whether setup has run to the end on this database: the check every command and the app make before a
    question (one statement; counting the rows, as ``status`` does, costs far more)."""
    try:
        return bool(scalar(conn, SET_UP_QUERY))
    except psycopg.errors.UndefinedTable:
        return False


def require_setup(conn: psycopg.Connection[Any]) -> None:
    """Raise :class:`NotSetUpError` unless the census tables exist."""
    if scalar(conn, "SELECT to_regclass('public.estimates')") is None:
        raise NotSetUpError("The census tables are not there yet: run `python -m sage setup` first.")
