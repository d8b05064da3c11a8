"""Run a guarded statement as the read-only role, inside limits that hold even if the guard were wrong.

Each query (docs/security.md §2):

* runs on a **pooled connection** as ``census_reader`` (the role, not this code, is the boundary: SELECT on the
  three census tables only).  :mod:`sage.db` hands it out checked (pre-ping) and takes it back reset with
  ``DISCARD ALL``, so nothing a previous query did to the session (settings, advisory locks, LISTEN, prepared
  statements) can leak into this one; a connection whose query raised anything is closed, never pooled again;
* runs in ``BEGIN READ ONLY`` with ``SET LOCAL`` statement, lock and idle timeouts, ``search_path`` and
  ``standard_conforming_strings`` (re-asserted every time: role defaults are only defaults);
* is first planned with ``EXPLAIN`` (never ANALYZE) and refused if the estimate is hopeless (a cartesian join
  of the census tables), see :data:`COST_PER_MS`;
* is sent with the **extended protocol** (psycopg's ``stream`` always uses it), so PostgreSQL itself refuses a
  string holding several statements ("cannot insert multiple commands into a prepared statement");
* is read row by row, stopping after ``max_rows + 1`` rows or :data:`RESULT_BYTES` of data, with long text cells
  cut to :data:`CELL_BYTES`, so neither many rows nor one huge value can flood memory or the page;
* is **always rolled back** (never committed), error or not.

Errors become :class:`~sage.errors.ExecutionError` with ``kind`` timeout / permission / undefined / other,
PostgreSQL's own message in ``detail`` (for the planner's retry) and a plain sentence in ``message``.  A connection
lost under the query is not the query's fault: :func:`sage.db.run` runs it once more on a fresh connection, unless
the server ended it on purpose (``pg_terminate_backend``, a shutdown: a ``connection_lost`` :class:`DatabaseError`),
and a pool with no free connection fails with ``busy``.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import time
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

import psycopg
from psycopg import errors as pgerr
from psycopg import sql as pgsql

from . import db
from .errors import ErrorKind, ExecutionError
from .guard import Guarded
from .guard_policy import TABLES_TEXT
from .settings import Settings

log = logging.getLogger(__name__)

#: a text cell longer than this (UTF-8 bytes) is cut, ending in "…"
CELL_BYTES = 2_048
#: stop reading a result once this much data (approximate UTF-8 bytes) has been kept
RESULT_BYTES = 5_000_000
#: lock waits are never legitimate for a reader; one second is plenty
LOCK_TIMEOUT_MS = 1_000
#: an open transaction left idle (a stalled client) is ended by the server after this long
IDLE_TIMEOUT_MS = 10_000
#: the cost gate refuses a query whose planner estimate (EXPLAIN, never ANALYZE) is above COST_PER_MS planner cost
#: units per millisecond of statement timeout (1e7 at the default 5 s), and never below COST_FLOOR.  Measured on
#: the shipped data: 1e5-3e6 units took 0.3-9 s, so the limit sits about ten times beyond what the timeout lets
#: finish; the costliest legitimate query in the corpus and the eval set cost 1.3e4, a two-table cartesian join of
#: estimates 1e8.  The statement timeout stays the real limit: the gate only refuses hopeless queries in a
#: millisecond instead of letting them hold a CPU core until the timeout.
COST_PER_MS = 2_000
COST_FLOOR = 1e6
#: time-outs after which the server ends the session itself (idle in transaction, transaction_timeout): the query's
#: own limit, reported as a time-out although the connection is gone
_SESSION_TIMEOUTS = frozenset({"25P03", "25P04"})
#: rows per network round trip while streaming
_CHUNK_ROWS = 256
_ELLIPSIS = "…"


@dataclass(frozen=True)
class Result:
    """The rows of one query, ready for JSON (numbers as int/float, dates as ISO text).

    ``truncated`` is True when rows were left out: more than ``max_rows``, the result byte cap, or a LIMIT the
    guard imposed that the result filled.  ``truncated_cells`` counts text cells cut to :data:`CELL_BYTES`.
    ``elapsed_ms`` runs from ``BEGIN`` to the last row read (connecting is not included).
    """

    columns: list[str]
    rows: list[list]
    row_count: int
    truncated: bool
    elapsed_ms: float
    truncated_cells: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": self.columns,
            "rows": self.rows,
            "row_count": self.row_count,
            "truncated": self.truncated,
            "truncated_cells": self.truncated_cells,
            "elapsed_ms": round(self.elapsed_ms, 1),
        }


def run(guarded: Guarded, settings: Settings) -> Result:
    """Run SQL the guard accepted, as the reader role, and return at most ``settings.max_rows`` rows."""
    if not isinstance(guarded, Guarded):
        raise TypeError("execute.run takes the Guarded value returned by sage.guard.check, not raw SQL")
    cost_limit = max(COST_FLOOR, COST_PER_MS * settings.statement_timeout_ms)
    result = _execute(guarded.sql, settings, cost_limit=cost_limit)
    if guarded.capped and result.row_count >= guarded.limit:
        # the guard added (or lowered) the LIMIT and the result reached it: there were probably more rows
        result = replace(result, truncated=True)
    return result


def _execute(
    sql: str,
    settings: Settings,
    *,
    max_rows: int | None = None,
    result_bytes: int = RESULT_BYTES,
    cost_limit: float | None = None,
) -> Result:
    """The executor's core, on a pooled reader connection, with **no guard** (and no cost gate unless asked).

    Only :func:`run` calls it in the product; tests call it with raw SQL to prove that the role, the read-only
    transaction and the extended protocol block things on their own (defence in depth).
    """
    return db.run(settings, db.READER, lambda conn: _run_on(
        conn, sql, settings, max_rows=max_rows, result_bytes=result_bytes, cost_limit=cost_limit))


def _run_on(
    conn: psycopg.Connection,
    sql: str,
    settings: Settings,
    *,
    max_rows: int | None = None,
    result_bytes: int = RESULT_BYTES,
    cost_limit: float | None = None,
) -> Result:
    """One read-only, always-rolled-back transaction on ``conn`` (left idle and clean, or broken on error)."""
    max_rows = settings.max_rows if max_rows is None else max_rows
    timeout_ms = int(settings.statement_timeout_ms)
    conn.autocommit = True  # transactions are explicit below, so nothing can ever be committed implicitly
    started = time.perf_counter()
    try:
        with conn.cursor() as cur:
            cur.execute(_begin_sql(conn, timeout_ms))
            if cost_limit is not None:
                _cost_gate(cur, sql, cost_limit)
            columns, rows, truncated, cut_cells = _fetch(conn, cur, sql, max_rows, result_bytes)
        elapsed_ms = (time.perf_counter() - started) * 1000
    except psycopg.Error as exc:
        if conn.broken and exc.sqlstate not in _SESSION_TIMEOUTS:
            raise  # the connection died under the query: sage.db says so (and retries, unless it was ended)
        raise _explain(exc, timeout_ms) from None
    except _CostTooHigh as exc:
        log.info("query refused by the cost gate: %s", exc)
        raise ExecutionError(
            "The query would take far too long (it looks like it combines every row with every other row), so it "
            "was not run. Join the tables on geo_id or variable_code, or ask for fewer places.",
            kind=ErrorKind.TIMEOUT,
            detail=str(exc),
        ) from None
    finally:
        _rollback(conn)
    return Result(
        columns=columns,
        rows=rows,
        row_count=len(rows),
        truncated=truncated,
        elapsed_ms=elapsed_ms,
        truncated_cells=cut_cells,
    )


def _begin_sql(conn: psycopg.Connection, timeout_ms: int) -> pgsql.Composed:
    """``BEGIN READ ONLY`` and the per-transaction limits, as one round trip of our own (trusted) SQL."""
    parts = [
        pgsql.SQL("BEGIN READ ONLY"),
        pgsql.SQL("SET LOCAL statement_timeout = {}").format(pgsql.Literal(timeout_ms)),
        pgsql.SQL("SET LOCAL lock_timeout = {}").format(pgsql.Literal(min(LOCK_TIMEOUT_MS, timeout_ms))),
        pgsql.SQL("SET LOCAL idle_in_transaction_session_timeout = {}").format(
            pgsql.Literal(max(IDLE_TIMEOUT_MS, timeout_ms))
        ),
        # unqualified names resolve to the census tables and built-ins only, never to a temp schema first
        pgsql.SQL("SET LOCAL search_path = pg_catalog, public, pg_temp"),
        # strings are lexed the way the guard's parser lexed them ('\' is a plain backslash)
        pgsql.SQL("SET LOCAL standard_conforming_strings = on"),
    ]
    if conn.info.server_version >= 170000:
        parts.append(
            pgsql.SQL("SET LOCAL transaction_timeout = {}").format(pgsql.Literal(timeout_ms + IDLE_TIMEOUT_MS))
        )
    return pgsql.SQL("; ").join(parts)


def _cost_gate(cur: psycopg.Cursor, sql: str, cost_limit: float) -> None:
    """Refuse a query the planner expects to be hopelessly expensive (a cartesian join), without running it.

    EXPLAIN (never ANALYZE) only plans the statement.  The prefix is joined to SQL the guard already checked, and
    it is sent with the extended protocol (``stream``, as the query itself: an unnamed statement, so nothing stays
    prepared on the pooled connection), so a second statement could not ride along even if the guard failed.
    """
    rows = list(cur.stream("EXPLAIN (FORMAT JSON) " + sql))
    assert rows, "EXPLAIN always returns the plan"
    row = rows[0]
    plan = row[0][0]["Plan"]
    cost = float(plan.get("Total Cost", 0))
    if cost > cost_limit:
        raise _CostTooHigh(cost, cost_limit)


class _CostTooHigh(Exception):
    def __init__(self, cost: float, limit: float) -> None:
        super().__init__(f"estimated cost {cost:.3g} is over the limit {limit:.3g} (EXPLAIN)")
        self.cost = cost


def _fetch(conn, cur, sql: str, max_rows: int, result_bytes: int) -> tuple[list[str], list[list], bool, int]:
    """Stream the rows (extended protocol) until the row or byte cap; return columns, rows, truncated, cut cells."""
    rows: list[list] = []
    size = 0
    cut = [0]
    truncated = False
    chunk = _CHUNK_ROWS if psycopg.capabilities.has_stream_chunked() else 1
    for record in cur.stream(sql, size=min(chunk, max_rows + 1)):
        if len(rows) >= max_rows:
            truncated = True
            break  # psycopg cancels the rest of the query when the stream is closed
        row = [_jsonable(value, cut) for value in record]
        size += sum(_approx_bytes(v) for v in row)
        if size > result_bytes:
            truncated = True
            break
        rows.append(row)
    if cur.description is not None:
        columns = [col.name for col in cur.description]
    else:
        columns = _describe_unnamed(conn)
    return columns, rows, truncated, cut[0]


def _describe_unnamed(conn: psycopg.Connection) -> list[str]:
    """Column names of a query that returned no rows.

    psycopg's ``stream`` only reads the description from row results, so for an empty result ask the server to
    describe the statement just run: the extended protocol left it as the unnamed prepared statement.
    """
    if conn.info.transaction_status != psycopg.pq.TransactionStatus.INTRANS:
        return []
    res = conn.pgconn.describe_prepared(b"")
    if res.status != psycopg.pq.ExecStatus.COMMAND_OK:
        return []
    return [(res.fname(i) or b"").decode(conn.info.encoding or "utf-8", "replace") for i in range(res.nfields)]


def _rollback(conn: psycopg.Connection) -> None:
    """End the transaction without committing anything; a connection that cannot is closed."""
    if conn.closed:
        return
    try:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.execute("ROLLBACK")
    except psycopg.Error:
        conn.close()


# --------------------------------------------------------------------------------------------------------------
# values


def _jsonable(value: Any, cut: list[int]) -> Any:
    """A database value as something ``json.dumps`` writes faithfully; long text is cut (and counted)."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, str):
        return _cap_text(value, cut)
    if isinstance(value, Decimal):
        if not value.is_finite():
            return None
        if value == value.to_integral_value():
            return int(value)
        return float(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (dt.date, dt.time)):  # datetime is a date
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, cut) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _cap_text("\\x" + bytes(value).hex(), cut)
    return _cap_text(str(value), cut)


def _cap_text(text: str, cut: list[int]) -> str:
    if len(text) * 4 <= CELL_BYTES:  # fast path: cannot exceed the cap even if every character took 4 bytes
        return text
    raw = text.encode("utf-8")
    if len(raw) <= CELL_BYTES:
        return text
    cut[0] += 1
    keep = CELL_BYTES - len(_ELLIPSIS.encode("utf-8"))
    return raw[:keep].decode("utf-8", "ignore") + _ELLIPSIS


def _approx_bytes(value: Any) -> int:
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, list):
        return sum(_approx_bytes(v) for v in value) + 2
    return 8


# --------------------------------------------------------------------------------------------------------------
# errors


def _explain(exc: psycopg.Error, timeout_ms: int) -> ExecutionError:
    """Map a PostgreSQL error to an :class:`ExecutionError` kind with a plain message."""
    diag = getattr(exc, "diag", None)
    primary = (getattr(diag, "message_primary", None) or str(exc) or type(exc).__name__).strip()
    hint = getattr(diag, "message_hint", None)
    state = getattr(exc, "sqlstate", None)
    detail = f"{primary} (SQLSTATE {state})" if state else primary
    if hint:
        detail += f" HINT: {hint}"
    seconds = f"{timeout_ms / 1000:g}"
    if isinstance(exc, (pgerr.QueryCanceled, pgerr.IdleInTransactionSessionTimeout)) or state == "25P04":
        kind = ErrorKind.TIMEOUT
        message = (
            f"The query ran longer than {seconds} s and was stopped. Ask for fewer places or variables, or raise "
            f"SAGE_STATEMENT_TIMEOUT_MS (now {timeout_ms})."
        )
    elif isinstance(exc, (pgerr.ConfigurationLimitExceeded, pgerr.OutOfMemory, pgerr.DiskFull)):
        kind = ErrorKind.TIMEOUT  # too expensive, like a time-out: a narrower query may work
        message = (
            "The query needed more memory or temporary disk space than allowed and was stopped. Ask for fewer "
            "places or variables."
        )
    elif isinstance(exc, pgerr.LockNotAvailable):
        kind = ErrorKind.TIMEOUT
        message = "The census tables are busy (perhaps being reloaded by setup); try again in a moment."
    elif isinstance(exc, (pgerr.InsufficientPrivilege, pgerr.ReadOnlySqlTransaction)):
        kind = ErrorKind.PERMISSION
        message = (
            f"The database refused the query: it may only read {TABLES_TEXT}, and may not change anything."
        )
    elif isinstance(exc, (pgerr.UndefinedColumn, pgerr.UndefinedTable, pgerr.UndefinedFunction, pgerr.UndefinedObject)):
        kind = ErrorKind.UNDEFINED
        message = f"The query names something that does not exist: {primary[:200]}."
    else:
        kind = ErrorKind.OTHER
        message = f"The database could not run the query: {primary[:200]}."
    log.info("query failed (%s): %s", kind, detail)
    return ExecutionError(message, kind=kind, detail=detail)


__all__ = ["CELL_BYTES", "RESULT_BYTES", "Result", "run"]
