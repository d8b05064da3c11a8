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


def require_setup(conn: psycopg.Connection[Any]) -> None:
    """Raise :class:`NotSetUpError` unless the census tables exist."""
    if scalar(conn, "SELECT to_regclass('public.estimates')") is None:
        raise NotSetUpError("The census tables are not there yet: run `python -m sage setup` first.")
