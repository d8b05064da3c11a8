"""The query log (``sage.questions``): every question, its planner, final SQL, tries, outcome and timings.

The History page reads it.  It lives in the internal ``sage`` schema, so the reader role and the planners never see it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from . import db
from .settings import Settings

if TYPE_CHECKING:
    from .agent import Answer


def outcome(answer: "Answer") -> str:
    if answer.answered:
        return "answered"
    return "declined" if answer.declined else "failed"


def record(settings: Settings, answer: "Answer") -> int:
    """Append one answer to the log; returns its id."""
    with db.owner(settings) as conn:
        row = conn.execute(
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
                outcome(answer),
                json.dumps(answer.error.to_dict()) if answer.error else None,
                answer.result.row_count if answer.result else None,
                json.dumps(answer.timings_ms),
                json.dumps(answer.usage),
            ),
        ).fetchone()
    return row[0]


_COLUMNS = ("id", "question", "planner", "sql", "assumptions", "display_hint", "attempts", "outcome", "error",
            "row_count", "timings_ms", "usage", "created_at")


def recent(settings: Settings, *, limit: int = 100, search: str | None = None, outcome: str | None = None) -> list[dict]:
    """The newest entries first, optionally filtered by text (question or SQL) and outcome."""
    where, params = [], []
    if search:
        where.append("(question ILIKE %s OR sql ILIKE %s)")
        like = "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        params += [like, like]
    if outcome:
        where.append("outcome = %s")
        params.append(outcome)
    sql = f"SELECT {', '.join(_COLUMNS)} FROM sage.questions"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY created_at DESC, id DESC LIMIT %s"
    params.append(limit)
    with db.owner(settings) as conn:
        rows = conn.execute(sql, params).fetchall()
    return [dict(zip(_COLUMNS, r)) for r in rows]


def get(settings: Settings, question_id: int) -> dict | None:
    with db.owner(settings) as conn:
        row = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM sage.questions WHERE id = %s", (question_id,)).fetchone()
    return dict(zip(_COLUMNS, row)) if row else None
