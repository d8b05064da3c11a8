"""The query log (``sage.questions``): every question, its planner, final SQL, tries, outcome and timings.

A follow-up keeps the id of the answer it follows (``parent_id``), its standalone reading and the offline
planner's frame, so a conversation can be picked up again later: :func:`thread` gives the earlier turns of a logged
answer as a list of :class:`~sage.planner.base.PriorTurn` (what ``ask --after ID`` and the History page use).

The History page reads it.  It lives in the internal ``sage`` schema, so the reader role and the planners never see it.

Writing it never holds up an answer for long: :func:`record` runs after the answer is complete, waits at most
:data:`LOG_WAIT_S` for an owner connection and :data:`LOG_STATEMENT_TIMEOUT_MS` for the insert, and its caller
(:func:`sage.agent.ask`) logs a failure instead of raising it.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql as pgsql

from . import db
from .answer import Answer, Outcome
from .census.schema import CONVERSATION_DDL
from .planner.base import PriorTurn
from .roles import Action, Role, may
from .settings import Settings
from .types import READ_AS

#: how many earlier turns a follow-up is given (the oldest are dropped first)
MAX_THREAD = 6

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
    #: the logged answer this one follows (a follow-up), else None
    parent_id: int | None = None
    #: the question read on its own ("median household income, Williamson County, TX")
    standalone: str | None = None
    #: the offline planner's frame of an answered question (what a later follow-up edits)
    frame: dict[str, Any] | None = None
    #: ``declined``, ``needs_fetch`` or ``ambiguous`` for a decline
    decline_kind: str | None = None
    #: the verified answer that answered it (``sage.verified_answers.id``), when one did
    verified_id: int | None = None
    #: the browser session that asked it (the History page shows a visitor their own), None from the command line
    session_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def followup(self) -> bool:
        """Whether the question was read as a follow-up (its first assumption is the "Read as" line)."""
        return bool(self.assumptions) and str(self.assumptions[0]).startswith(READ_AS)

    def as_prior(self) -> PriorTurn:
        """This entry as an earlier turn of a conversation: question, reading, SQL, assumptions; never rows."""
        answered = self.outcome is Outcome.ANSWERED
        return PriorTurn(self.question, self.standalone or "", (self.sql or "") if answered else "",
                         tuple(str(a) for a in self.assumptions), self.frame if answered else None)


_COLUMNS = tuple(f.name for f in fields(LogEntry))


def _entry(row: tuple[Any, ...]) -> LogEntry:
    values = dict(zip(_COLUMNS, row, strict=True))
    values["outcome"] = Outcome(values["outcome"])
    if isinstance(values["frame"], str):
        values["frame"] = json.loads(values["frame"])
    for name in ("assumptions", "attempts"):  # jsonb arrays; a text value is one item
        value = values[name]
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                value = [value]
        values[name] = value if isinstance(value, list) else []
    return LogEntry(**values)


_ready: set[str] = set()
_ready_lock = threading.Lock()


def ensure_tables(settings: Settings, conn: psycopg.Connection | None = None) -> None:
    """Add the conversation columns and tables (:data:`~sage.census.schema.CONVERSATION_DDL`) to a database set
    up before they existed; once per process and database (setup runs the same DDL)."""
    key = db.admin_url(settings)
    if key in _ready:
        return
    with _ready_lock:
        if key in _ready:
            return
        if conn is None:
            with db.owner(settings) as own:
                _ensure(own)
        else:
            _ensure(conn)
        _ready.add(key)


def _ensure(conn: psycopg.Connection) -> None:
    present = conn.execute(
        """SELECT count(*) FROM information_schema.columns
           WHERE table_schema = 'sage' AND (table_name, column_name) IN (('questions', 'verified_id'),
                                                                        ('questions', 'session_id'),
                                                                        ('feedback', 'reviewed_by'))"""
    ).fetchone()
    tables = conn.execute("SELECT to_regclass('sage.verified_answers'), to_regclass('sage.feedback'), "
                          "to_regclass('sage.claude_usage')").fetchone()
    if present and present[0] == 3 and tables and all(tables):
        return
    for attempt in range(_DDL_TRIES):
        try:
            with conn.transaction():
                conn.execute(CONVERSATION_DDL)
            return
        except (psycopg.errors.UniqueViolation, psycopg.errors.DuplicateObject, psycopg.errors.DuplicateTable,
                psycopg.errors.DeadlockDetected, psycopg.errors.InternalError):
            # another process ran the same DDL at the same moment (CREATE ... IF NOT EXISTS is not safe against a
            # concurrent twin): its objects exist now, and the next run finds them
            if attempt == _DDL_TRIES - 1:
                raise


#: how often :func:`ensure_tables` runs its DDL when another process races it
_DDL_TRIES = 3


def record(settings: Settings, answer: Answer) -> int:
    """Append one answer to the log; returns its id.  Raises :class:`~sage.errors.DatabaseError` (``busy`` when no
    connection was free within :data:`LOG_WAIT_S`) or a psycopg error (the insert timed out)."""
    error = answer.error_info()
    ensure_tables(settings)

    def write(conn: psycopg.Connection) -> tuple[Any, ...] | None:
        with conn.transaction():
            conn.execute(pgsql.SQL("SET LOCAL statement_timeout = {0}; SET LOCAL lock_timeout = {0}").format(
                pgsql.Literal(LOG_STATEMENT_TIMEOUT_MS)))
            return conn.execute(
                """INSERT INTO sage.questions (question, planner, sql, assumptions, display_hint, attempts, outcome,
                                              error, row_count, timings_ms, usage, parent_id, standalone, frame,
                                              decline_kind, verified_id, session_id)
                   VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id""",
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
                    answer.parent_id,
                    answer.standalone or None,
                    json.dumps(answer.frame) if answer.frame is not None and answer.answered else None,
                    answer.decline_kind.value if answer.declined else None,
                    answer.verified_id,
                    answer.session_id,
                ),
            ).fetchone()

    row = db.run(settings, db.OWNER, write, timeout_s=LOG_WAIT_S, retry=False)
    assert row is not None  # INSERT ... RETURNING returns the row
    return int(row[0])


def recent(settings: Settings, *, limit: int = 100, search: str | None = None,
           outcome: Outcome | str | None = None, session_id: str | None = None) -> list[LogEntry]:
    """The newest entries first, optionally filtered by text (question or SQL), outcome and the session that asked
    them (a visitor's History; an empty ``session_id`` matches nothing)."""
    where: list[str] = []
    params: list[Any] = []
    if session_id is not None:
        where.append("session_id = %s")
        params.append(session_id)
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
    ensure_tables(settings)
    rows = db.run(settings, db.OWNER, lambda conn: conn.execute(sql, params).fetchall())
    return [_entry(r) for r in rows]


def recent_for(settings: Settings, role: Role | str, session_id: str | None, **filters: Any) -> list[LogEntry]:
    """:func:`recent` as ``role`` may see it: everyone's questions for a curator (and the operator), the questions
    of session ``session_id`` for a visitor (none without a session)."""
    if may(role, Action.ALL_HISTORY):
        return recent(settings, **filters)
    if not session_id:
        return []
    return recent(settings, session_id=session_id, **filters)


def get(settings: Settings, question_id: int) -> LogEntry | None:
    ensure_tables(settings)
    row = db.run(settings, db.OWNER, lambda conn: conn.execute(
        f"SELECT {', '.join(_COLUMNS)} FROM sage.questions WHERE id = %s", (question_id,)).fetchone())
    return _entry(row) if row else None


def chain(settings: Settings, question_id: int, limit: int = MAX_THREAD) -> list[LogEntry]:
    """Logged answer ``question_id`` and the answers it follows, oldest first, at most ``limit`` of them (the
    newest); ``[]`` when there is no such entry."""
    if isinstance(question_id, bool) or not isinstance(question_id, int) or limit < 1:
        return []
    ensure_tables(settings)
    with db.owner(settings) as conn:
        rows = conn.execute(
            f"""WITH RECURSIVE up AS (
                    SELECT q.*, 1 AS depth FROM sage.questions q WHERE q.id = %s
                    UNION ALL
                    SELECT q.*, up.depth + 1 FROM sage.questions q JOIN up ON q.id = up.parent_id
                    WHERE up.depth < %s)
                SELECT {', '.join(_COLUMNS)} FROM up ORDER BY depth DESC""",
            (question_id, limit),
        ).fetchall()
    return [_entry(r) for r in rows]


def thread(settings: Settings, question_id: int) -> list[PriorTurn]:
    """The conversation up to and including logged answer ``question_id``, as the earlier turns of a follow-up of
    it: oldest first, at most :data:`MAX_THREAD`, never rows.  ``[]`` when there is no such entry."""
    return [entry.as_prior() for entry in chain(settings, question_id)]


__all__ = ["MAX_THREAD", "LogEntry", "chain", "ensure_tables", "get", "recent", "recent_for", "record", "thread"]
