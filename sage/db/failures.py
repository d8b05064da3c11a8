"""What a failed connection says: a database that cannot be reached or logged in to, a connection lost under a
statement (:class:`ConnectionLostError`), a pool with no free connection (``busy``).

Each turns a driver or pool error into a :class:`~sage.errors.DatabaseError` whose message names the database (the
embedded server's directory, or the redacted ``DATABASE_URL``) and what to do.  Apart from the pools
(:mod:`sage.db.pool`) so that the words a user reads are in one place, not between the mechanics.
"""

from __future__ import annotations

from typing import Any

import psycopg

from ..errors import DatabaseError, ErrorKind, NotSetUpError
from ..settings import Settings, redact_url
from .roles import READER, READER_ROLE, Role


def _where(settings: Settings) -> str:
    if settings.embedded:
        return f"the embedded PostgreSQL in {settings.data_dir}"
    return f"the database at DATABASE_URL ({redact_url(settings.database_url)})"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _explain_connect_error(settings: Settings, exc: Exception, role: Role) -> DatabaseError:
    text = _first_line(exc)
    if role == READER:
        low = text.lower()
        if "authentication" in low or "does not exist" in low or "password" in low:
            fix = (
                "The read-only role census_reader cannot log in: run `python -m sage setup`, or set "
                "SAGE_READER_URL to an existing read-only login."
            )
            return NotSetUpError(f"Could not log in to {_where(settings)} as {READER_ROLE}: {text}. {fix}",
                                 detail=text)
    if settings.embedded:
        message = (f"Could not connect to {_where(settings)}: {text}. Check SAGE_DATA_DIR, or run "
                   "`python -m sage setup`.")
    else:
        message = (
            f"{_where(settings)[0].upper()}{_where(settings)[1:]} is not reachable: {text}. Check that the server "
            "is running and that DATABASE_URL (host, port, user, password, database) is right; the next question "
            "will try again."
        )
    return DatabaseError(message, kind=ErrorKind.DATABASE_DOWN, detail=text)


class ConnectionLostError(DatabaseError):
    """The connection died under a statement.  ``terminated`` when the server ended it on purpose (SQLSTATE
    57P01-57P03: ``pg_terminate_backend``, a shutdown or restart); then the work is not retried."""

    kind = ErrorKind.CONNECTION_LOST

    def __init__(self, message: str, *, terminated: bool, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.terminated = terminated


def _lost(settings: Settings, exc: psycopg.Error) -> ConnectionLostError:
    text = _first_line(exc)
    terminated = (exc.sqlstate or "").startswith("57P")
    if terminated:
        message = (f"{_where(settings)[0].upper()}{_where(settings)[1:]} ended the connection this work was running on "
                   "(an administrator stopped it, or the server is shutting down). Nothing was changed; ask again.")
    else:
        message = (f"The connection to {_where(settings)} was lost ({text}). The next question will try again.")
    return ConnectionLostError(message, terminated=terminated, detail=f"{text} (SQLSTATE {exc.sqlstate})")


def _busy(settings: Settings, role: Role, waited: float) -> DatabaseError:
    return DatabaseError(
        "The database is busy; try again in a moment.",
        kind=ErrorKind.BUSY,
        detail=f"no {role} connection free after {waited:g} s (SAGE_POOL_SIZE {settings.pool_size} + "
               f"SAGE_POOL_MAX_OVERFLOW {settings.pool_max_overflow} in use)",
    )
