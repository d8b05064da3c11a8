"""The query log (``sage.questions``): every question, its planner, final SQL, tries, outcome and timings.

The History page reads it.  It lives in the internal ``sage`` schema, so the reader role and the planners never see it.

Writing it never holds up an answer for long: :func:`record` runs after the answer is complete, waits at most
:data:`LOG_WAIT_S` for an owner connection and :data:`LOG_STATEMENT_TIMEOUT_MS` for the insert, and its caller
(:func:`sage.agent.ask`) logs a failure instead of raising it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql as pgsql

from . import db
from .answer import Answer, Outcome
from .settings import Settings

#: the longest the log waits for a free owner connection (the pools' own wait is SAGE_POOL_TIMEOUT_S)
LOG_WAIT_S = 1.0
#: the longest the insert may take (a lock or a slow disk must not hold the answer)
LOG_STATEMENT_TIMEOUT_MS = 2000


@dataclass(frozen=True)
class LogEntry:
    """One logged question, as the History page shows it."""

    id: int
    question: str
    planner: str
    sql: str | None
    assumptions: list[str]
    display_hint: str | None
    attempts: list[dict[str, Any]]
    outcome: Outcome
    #: ``{"kind", "message"}`` of a decline or a failure
    error: dict[str, str] | None
    row_count: int | None
    timings_ms: dict[str, float]
    usage: dict[str, Any]
    created_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_COLUMNS = tuple(f.name for f in fields(LogEntry))


def _entry(row: tuple[Any, ...]) -> LogEntry:
    values = dict(zip(_COLUMNS, row, strict=True))
    values["outcome"] = Outcome(values["outcome"])
    for name in ("assumptions", "attempts"):  # jsonb arrays; a text value is one item
        value = values[name]
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                value = [value]
        values[name] = value if isinstance(value, list) else []
    return LogEntry(**values)


def record(settings: Settings, answer: Answer) -> int:
    """Append one answer to the log; returns its id.  Raises :class:`~sage.errors.DatabaseError` (``busy`` when no
    connection was free within :data:`LOG_WAIT_S`) or a psycopg error (the insert timed out)."""
    error = answer.error_info()

    def write(conn: psycopg.Connection) -> tuple[Any, ...] | None:
        with conn.transaction():
            conn.execute(pgsql.SQL("SET LOCAL statement_timeout = {0}; SET LOCAL lock_timeout = {0}").format(
                pgsql.Literal(LOG_STATEMENT_TIMEOUT_MS)))
            return conn.execute(
                """INSERT INTO sage.questions (question, planner, sql, assumptions, display_hint, attempts, outcome,
                                              error, row_count, timings_ms, usage)
                   VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id""",
                (
                    answer.question[:10_000],
                    answer.planner or "none",
                    answer.sql or None,
                    json.dumps(answer.assumptions),
                    answer.display_hint,
                    json.dumps([a.to_dict() for a in answer.attempts]),
                    answer.outcome.value,
                    json.dumps(error) if error else None,
                    answer.result.row_count if answer.result else None,
                    json.dumps(answer.timings_ms),
                    json.dumps(answer.usage),
                ),
            ).fetchone()

    row = db.run(settings, db.OWNER, write, timeout_s=LOG_WAIT_S, retry=False)
    assert row is not None  # INSERT ... RETURNING returns the row
    return int(row[0])


def recent(settings: Settings, *, limit: int = 100, search: str | None = None,
           outcome: Outcome | str | None = None) -> list[LogEntry]:
    """The newest entries first, optionally filtered by text (question or SQL) and outcome."""
    where: list[str] = []
    params: list[Any] = []
    if search:
        where.append("(question ILIKE %s OR sql ILIKE %s)")
        like = "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        params += [like, like]
    if outcome:
        where.append("outcome = %s")
        params.append(str(outcome))
    sql = f"SELECT {', '.join(_COLUMNS)} FROM sage.questions"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY created_at DESC, id DESC LIMIT %s"
    params.append(limit)
    rows = db.run(settings, db.OWNER, lambda conn: conn.execute(sql, params).fetchall())
    return [_entry(r) for r in rows]


def get(settings: Settings, question_id: int) -> LogEntry | None:
    row = db.run(settings, db.OWNER, lambda conn: conn.execute(
        f"SELECT {', '.join(_COLUMNS)} FROM sage.questions WHERE id = %s", (question_id,)).fetchone())
    return _entry(row) if row else None


__all__ = ["LogEntry", "get", "recent", "record"]
