"""New connections, and one pooled SQLAlchemy engine per role and database (SQLAlchemy 2 with the psycopg 3 driver,
``postgresql+psycopg``): :func:`run` (one stage's work, retried once on a lost connection), :func:`owner` and
:func:`reader` (``with`` blocks), :func:`engine` (the engine itself); :func:`connect` and :func:`reader_connect`
for an unpooled connection of one's own.  Each engine:

* checks a pooled connection before handing it out (``pool_pre_ping``), so a server that restarted or a connection
  a firewall dropped is replaced instead of failing the question; connections are also renewed every
  :data:`POOL_RECYCLE_S`;
* registers pgvector's types on each new owner connection (when the ``vector`` type exists: before setup it does
  not, and :func:`ensure_vector` registers it later);
* resets every connection before it goes back to the pool (``ROLLBACK`` if needed, then ``DISCARD ALL``: settings,
  prepared statements, advisory locks, temporary tables and LISTENs end with the checkout; psycopg's automatic
  prepared statements are off on pooled connections, see :func:`_poolable`), and closes instead of pooling a
  connection whose work raised an exception or that broke;
* lets at most ``SAGE_POOL_SIZE + SAGE_POOL_MAX_OVERFLOW`` connections out at once and makes a caller wait at most
  ``SAGE_POOL_TIMEOUT_S`` for one; then the question fails with ``busy`` instead of hanging.

New connections and the pools are one module because each needs the other: a pool makes its connections with
:func:`_connect`, and a new reader connection to a ``DATABASE_URL`` server reads the reader's stored password over
a pooled owner connection (:func:`_stored_reader_password`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg

from ..errors import DatabaseError, ErrorKind, NotSetUpError
from ..settings import Settings
from .embedded import _data_dir, _restarts, _revive_embedded
from .failures import ConnectionLostError, _busy, _explain_connect_error, _lost, _where
from .roles import OWNER, READER, READER_ROLE, Role, admin_url, reader_url

if TYPE_CHECKING:
    import sqlalchemy

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 5
#: a pooled connection older than this is closed and replaced at its next checkout (long days: server-side memory
#: of a backend grows with what it has cached; a NAT or firewall may drop a connection idle for hours)
POOL_RECYCLE_S = 1800
#: a server that answers "starting up" / "shutting down" (SQLSTATE 57P03) is asked again for this long
STARTING_WAIT_S = 5.0

_APPLICATION_NAME = {OWNER: "sage-owner", READER: "sage-reader"}

T = TypeVar("T")


# ---------------------------------------------------------------------------------------------------------------
# new connections


def _connect(settings: Settings, role: Role, *, autocommit: bool = True) -> psycopg.Connection:
    """A new psycopg connection for ``role``; the pools' creator and :func:`connect` / :func:`reader_connect`.

    A stopped embedded server is started again (once per failure); a server that is starting up or shutting down
    is asked again for :data:`STARTING_WAIT_S`; anything else becomes a :class:`DatabaseError` that says where.
    """
    revived = False
    waited_since: float | None = None
    while True:
        generation = _restarts.get(_data_dir(settings), 0) if settings.embedded else 0
        try:
            if role == READER:
                password = None if settings.reader_url else _stored_reader_password(settings)
                url = reader_url(settings, password)
            else:
                url = admin_url(settings)
            return psycopg.connect(url, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT_S,
                                   application_name=_APPLICATION_NAME[role])
        except psycopg.OperationalError as exc:
            if exc.sqlstate == "57P03":  # the database system is starting up / shutting down / in recovery
                waited_since = waited_since or time.perf_counter()
                if time.perf_counter() - waited_since < STARTING_WAIT_S:
                    time.sleep(0.1)
                    continue
            elif settings.embedded and not revived and _revive_embedded(settings, generation):
                revived = True
                continue
            raise _explain_connect_error(settings, exc, role) from exc


def connect(settings: Settings, *, autocommit: bool = False) -> psycopg.Connection:
    """A new, unpooled owner connection (for tools and tests that need one of their own; modules use :func:`run`
    or :func:`owner`).  Never for planned SQL."""
    return _connect(settings, OWNER, autocommit=autocommit)


def reader_connect(settings: Settings) -> psycopg.Connection:
    """A new, unpooled connection as the reader role (tests and benchmarks; :mod:`sage.execute` uses the pool)."""
    return _connect(settings, READER, autocommit=False)


_reader_passwords: dict[str, str | None] = {}


def _stored_reader_password(settings: Settings) -> str | None:
    """The password setup gave census_reader (kept in ``sage.reader_login``, readable by the owner only)."""
    if settings.embedded:
        return None  # the embedded server trusts local socket logins; the role, not a password, is the boundary
    key = settings.database_url or ""
    if key in _reader_passwords:
        return _reader_passwords[key]
    with owner(settings) as conn:
        try:
            row = conn.execute("SELECT password FROM sage.reader_login WHERE role = %s", (READER_ROLE,)).fetchone()
        except psycopg.errors.UndefinedTable:
            row = None
    if row is None:  # not set up yet: asked again next time, so the first connection after setup logs in
        return None
    _reader_passwords[key] = row[0]
    return row[0]


# ---------------------------------------------------------------------------------------------------------------
# the pools


@dataclass(frozen=True)
class _Pool:
    engine: sqlalchemy.Engine
    #: at most pool_size + max_overflow checkouts at once; a caller waits on it with its own time limit
    gate: threading.BoundedSemaphore
    timeout_s: float


_pools: dict[tuple, _Pool] = {}
_pools_lock = threading.Lock()


def _pool_key(settings: Settings, role: Role) -> tuple:
    """Engines are shared by every Settings that reach the same database as the same role with the same pool
    settings (a statement time-out or a planner choice does not make a new pool)."""
    where = settings.database_url or str(_data_dir(settings))
    login = settings.reader_url if role == READER else None
    return (role, where, login, settings.pool_size, settings.pool_max_overflow, settings.pool_timeout_s)


def _pool(settings: Settings, role: Role) -> _Pool:
    key = _pool_key(settings, role)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _Pool(_create_engine(settings, role), threading.BoundedSemaphore(
                settings.pool_size + settings.pool_max_overflow), settings.pool_timeout_s)
            _pools[key] = pool
    return pool


def _create_engine(settings: Settings, role: Role) -> sqlalchemy.Engine:
    import sqlalchemy
    from sqlalchemy import event

    eng = sqlalchemy.create_engine(
        "postgresql+psycopg://",
        # the URL is worked out for each new connection: the embedded server's socket is known only once it runs,
        # and a stopped one is started again by _connect
        creator=lambda: _poolable(_connect(settings, role)),
        pool_size=settings.pool_size,
        max_overflow=settings.pool_max_overflow,
        pool_timeout=settings.pool_timeout_s,
        pool_recycle=POOL_RECYCLE_S,
        pool_pre_ping=True,
        pool_use_lifo=True,  # the fewest distinct connections stay warm; the others age out through pool_recycle
    )
    if role == OWNER:
        # the reader never reads a vector (only the three census tables); its values stay plain text there
        event.listen(eng, "connect", _register_vector_on_connect)
    return eng


def _poolable(conn: psycopg.Connection) -> psycopg.Connection:
    """A new connection made fit for the pool: no automatic server-side prepared statements.

    psycopg prepares a query it has run five times on a connection and remembers the name; ``DISCARD ALL`` (run
    before each return to the pool) deallocates it on the server behind psycopg's back, so the next use would fail
    with "prepared statement ... does not exist".  Planning a catalog query costs microseconds; the executor sends
    its statements unnamed (``stream``) anyway.
    """
    conn.prepare_threshold = None
    return conn


def _register_vector_on_connect(dbapi_connection: Any, connection_record: Any) -> None:
    """pgvector's types on a new owner connection, when the ``vector`` type exists (it does not before setup)."""
    from pgvector.psycopg import register_vector

    try:
        register_vector(dbapi_connection)
    except psycopg.ProgrammingError:  # "vector type not found in the database": ensure_vector registers it later
        log.debug("vector type not there yet; not registered on this connection")


def ensure_vector(conn: psycopg.Connection) -> None:
    """Register pgvector's types on ``conn`` unless done (a pooled connection made before setup created the type);
    :class:`NotSetUpError` when the extension is not installed in this database."""
    if conn.adapters.types.get("vector") is not None:
        return
    from pgvector.psycopg import register_vector

    try:
        register_vector(conn)
    except psycopg.ProgrammingError as exc:
        raise NotSetUpError(
            "The vector extension is not installed in this database: run `python -m sage setup`.", detail=str(exc)
        ) from exc


def engine(settings: Settings, role: Role = OWNER) -> sqlalchemy.Engine:
    """The pooled SQLAlchemy engine of ``role`` on this database (for introspection and pandas; modules use
    :func:`run`, :func:`owner` or :func:`reader`, which also keep the pool's limit and reset)."""
    return _pool(settings, role).engine


def dispose(settings: Settings) -> None:
    """Close the pooled connections of both roles on this database (those checked out close when returned)."""
    for role in (OWNER, READER):
        with _pools_lock:
            pool = _pools.get(_pool_key(settings, role))
        if pool is not None:
            pool.engine.dispose()


@contextmanager
def _checkout(settings: Settings, role: Role, *, timeout_s: float | None = None) -> Iterator[psycopg.Connection]:
    """A pooled connection of ``role`` (psycopg, autocommit), reset and returned afterwards, or closed if the work
    raised or the connection broke; a connection lost under the work becomes :class:`ConnectionLostError`."""
    import sqlalchemy.exc

    pool = _pool(settings, role)
    wait = pool.timeout_s if timeout_s is None else timeout_s
    if not pool.gate.acquire(timeout=wait):
        raise _busy(settings, role, wait)
    try:
        try:
            fairy = pool.engine.raw_connection()
        except sqlalchemy.exc.TimeoutError as exc:  # a connection taken past the gate (engine() users) holds one
            raise _busy(settings, role, pool.timeout_s) from exc
        except psycopg.Error as exc:
            raise _explain_connect_error(settings, exc, role) from exc
        except sqlalchemy.exc.SQLAlchemyError as exc:  # "This connection is closed": reconnecting failed twice
            raise DatabaseError(f"Could not connect to {_where(settings)}: {exc}. The next question will try again.",
                                kind=ErrorKind.DATABASE_DOWN, detail=str(exc)) from exc
        conn = fairy.driver_connection
        assert isinstance(conn, psycopg.Connection), "the psycopg driver hands out psycopg connections"
        try:
            yield conn
        except psycopg.OperationalError as exc:
            broken = conn.broken
            fairy.invalidate(exc)
            if broken:
                raise _lost(settings, exc) from exc
            raise
        except BaseException as exc:
            fairy.invalidate(exc)
            raise
        else:
            _release(fairy, conn)
    finally:
        pool.gate.release()


def _release(fairy: Any, conn: psycopg.Connection) -> None:
    """Return a healthy connection to its pool clean (no transaction, autocommit, ``DISCARD ALL``), else close it."""
    if conn.closed:
        fairy.invalidate()
        return
    try:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.rollback()
        if not conn.autocommit:
            conn.autocommit = True
        conn.execute("DISCARD ALL")
    except psycopg.Error as exc:
        fairy.invalidate(exc)
        return
    fairy.close()


@contextmanager
def owner(settings: Settings, *, autocommit: bool = True,
          timeout_s: float | None = None) -> Iterator[psycopg.Connection]:
    """``with owner(settings) as conn:`` — a pooled owner connection (psycopg), returned clean on exit; without
    ``autocommit`` what was not committed is rolled back."""
    with _checkout(settings, OWNER, timeout_s=timeout_s) as conn:
        if not autocommit:
            conn.autocommit = False
        yield conn


@contextmanager
def reader(settings: Settings, *, timeout_s: float | None = None) -> Iterator[psycopg.Connection]:
    """``with reader(settings) as conn:`` — a pooled connection as census_reader (autocommit; :mod:`sage.execute`
    opens its own read-only transaction on it)."""
    with _checkout(settings, READER, timeout_s=timeout_s) as conn:
        yield conn


def run(settings: Settings, role: Role, work: Callable[[psycopg.Connection], T], *,
        timeout_s: float | None = None, retry: bool = True) -> T:
    """``work(conn)`` on a pooled connection of ``role``: one stage of a question.

    If the connection is lost under it (the server restarted or crashed, a network drop: no deliberate
    termination) the whole stage runs once more on a fresh connection, which reconnects, or starts a stopped
    embedded server again, or says plainly that the database is not reachable.  ``work`` must be safe to repeat
    (reads, or writes in a transaction of their own).
    """
    try:
        with _checkout(settings, role, timeout_s=timeout_s) as conn:
            return work(conn)
    except ConnectionLostError as exc:
        if exc.terminated or not retry:
            raise
        log.warning("lost the %s connection (%s); running the stage once more", role, exc.detail)
    with _checkout(settings, role, timeout_s=timeout_s) as conn:
        return work(conn)
