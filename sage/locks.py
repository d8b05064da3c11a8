"""PostgreSQL advisory locks between processes, and who holds them.

Two long jobs must run once per database at a time, whichever process starts them (two app processes, the app and
the command line): a ``census fetch`` (:mod:`sage.census.fetch_job`) and the build of the catalog part of the
retrieval index (:mod:`sage.catalog_index`).  Each takes a session-level advisory lock on an owner connection of
its own with :func:`try_lock` — never waiting: a second one is refused at once — and the lock ends with that
connection, so a crashed process cannot leave it behind.  The connection's ``application_name`` says who holds it
and what for, so :func:`holder` can name them to whoever is refused (``pg_locks`` joined to ``pg_stat_activity``).
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg
from psycopg import sql as pgsql

from .db import scalar
from .errors import DatabaseError

#: the first key of every lock of the product ("SAGE" in ASCII); the second says which lock
NAMESPACE = 0x53414745
#: building the catalog part of the retrieval index
CATALOG_INDEX = 1
#: loading ACS tables from the Census Data API
CENSUS_FETCH = 2
#: setting the database up (several app processes starting on one new database: one sets it up, the others wait)
SETUP = 3

#: PostgreSQL keeps 63 bytes of an application_name
_NAME_BYTES = 63


@dataclass(frozen=True)
class Holder:
    """Who holds a lock: the ``application_name`` it set (``what``) and for how many seconds it has held it."""

    what: str
    seconds: float
    pid: int


def try_lock(conn: psycopg.Connection, key: int, what: str) -> bool:
    """Take lock ``key`` on ``conn`` (autocommit) without waiting, labelled ``what``; True when taken.

    The label is the connection's ``application_name`` (cut to 63 bytes), set before the lock is tried so that a
    refused caller can read who holds it.  The lock lasts until ``conn`` closes (or :func:`unlock`).
    """
    label = what.encode("utf-8")[:_NAME_BYTES].decode("utf-8", "ignore")
    conn.execute(pgsql.SQL("SET application_name = {}").format(pgsql.Literal(label)))
    try:
        return bool(scalar(conn, "SELECT pg_try_advisory_lock(%s, %s)", (NAMESPACE, key)))
    except psycopg.errors.InsufficientPrivilege as exc:
        # the reader role's confinement revokes the advisory-lock functions from PUBLIC; run by a superuser (the
        # administrator's SQL of setup), that revoke reaches a database owner who is not a superuser too
        raise DatabaseError(
            "This database login may not take advisory locks (EXECUTE on pg_try_advisory_lock was revoked from "
            "PUBLIC). Ask an administrator to run: GRANT EXECUTE ON FUNCTION pg_try_advisory_lock(integer, "
            "integer), pg_advisory_unlock(integer, integer) TO <the login of DATABASE_URL>.",
            detail=str(exc),
        ) from exc


def wait_lock(conn: psycopg.Connection, key: int, what: str, timeout_s: float) -> bool:
    """Take lock ``key`` on ``conn`` (autocommit), waiting at most ``timeout_s`` for whoever holds it; True when
    taken, False when the login may not take advisory locks (an administrator revoked them: the caller goes on
    without).  Raises :class:`~sage.errors.DatabaseError` when the wait times out, naming the holder."""
    label = what.encode("utf-8")[:_NAME_BYTES].decode("utf-8", "ignore")
    conn.execute(pgsql.SQL("SET application_name = {}").format(pgsql.Literal(label)))
    conn.execute(pgsql.SQL("SET lock_timeout = {}").format(pgsql.Literal(f"{int(timeout_s * 1000)}ms")))
    try:
        conn.execute("SELECT pg_advisory_lock(%s, %s)", (NAMESPACE, key))
        return True
    except psycopg.errors.InsufficientPrivilege:
        return False
    except psycopg.errors.LockNotAvailable as exc:
        who = holder(conn, key)
        raise DatabaseError(f"Waited {timeout_s:.0f} s for {who.what if who else 'another process'} to finish; try "
                            "again when it has.", detail=str(exc)) from exc
    finally:
        conn.execute("RESET lock_timeout")


def unlock(conn: psycopg.Connection, key: int) -> None:
    conn.execute("SELECT pg_advisory_unlock(%s, %s)", (NAMESPACE, key))


def holder(conn: psycopg.Connection, key: int) -> Holder | None:
    """Who holds lock ``key`` in this database right now (None: nobody)."""
    row = conn.execute(
        """SELECT coalesce(a.application_name, ''), extract(epoch FROM now() - a.backend_start)::float8, l.pid
           FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database
                                                                       WHERE datname = current_database())
             AND l.classid = %s::bigint::oid AND l.objid = %s::bigint::oid AND l.objsubid = 2
           LIMIT 1""",
        (NAMESPACE, key),
    ).fetchone()
    if row is None:
        return None
    return Holder(what=row[0], seconds=float(row[1] or 0.0), pid=int(row[2]))


__all__ = ["CATALOG_INDEX", "CENSUS_FETCH", "NAMESPACE", "SETUP", "Holder", "holder", "try_lock", "unlock",
           "wait_lock"]
