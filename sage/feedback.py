"""Thumbs up and down on an answer (``sage.feedback``), and what they do to the verified-answer library.

* **Thumbs up** puts the answer in the library (:func:`sage.verified.add`): questions that mean the same are then
  answered with its SQL.  An answer that was itself served from the library is only counted, not added again.
* **Thumbs down** is kept with a short reason for review (the History page lists them, :func:`recent`).  The reason
  comes a moment later, so the rating is stored at once and the reason added to it (:func:`add_reason`): nothing is
  lost when none is given.  A thumbs down takes the answer out of the library if a thumbs up had put it there, and
  flags the library entry that served it, if one did: a verified answer a user says is wrong is not served again
  until it is verified anew.
* Clearing the rating (:func:`clear`) undoes both.

One rating per logged answer (the latest wins).  The table is internal (schema ``sage``): the reader role cannot
read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from . import db, querylog, verified
from .errors import QuestionError
from .settings import Settings

Rating = Literal["up", "down"]
#: longest reason kept
MAX_REASON_CHARS = 500


@dataclass(frozen=True)
class Feedback:
    """One rating, as the History page lists it."""

    id: int
    question_id: int | None
    rating: Rating
    reason: str | None
    question: str
    sql: str | None
    created_at: datetime


def _clean(reason: str | None) -> str | None:
    text = " ".join((reason or "").split())[:MAX_REASON_CHARS]
    return text or None


def rate(settings: Settings, question_id: int, rating: Rating, reason: str | None = None) -> int:
    """Store ``rating`` of logged answer ``question_id`` (replacing an earlier one) and apply it to the library;
    returns the feedback id.  :class:`~sage.verified.NotFoundError` when there is no such answer."""
    if rating not in ("up", "down"):
        raise QuestionError(f"A rating is 'up' or 'down', not {rating!r}.")
    entry = querylog.get(settings, question_id)
    if entry is None:
        raise verified.NotFoundError(f"There is no logged answer {question_id} to rate.")
    if rating == "up":
        if entry.verified_id is None and entry.display_hint != "profile":  # a profile has nothing to verify
            verified.add(settings, question_id)
    else:
        verified.remove(settings, question_id)
        if entry.verified_id is not None:
            why = "a user marked an answer it served as wrong" + (f": {_clean(reason)}" if _clean(reason) else "")
            verified.invalidate(settings, entry.verified_id, why)
    with db.owner(settings) as conn:
        row = conn.execute(
            """INSERT INTO sage.feedback (question_id, rating, reason, question, sql) VALUES (%s, %s, %s, %s, %s)
               ON CONFLICT (question_id) DO UPDATE SET rating = EXCLUDED.rating, reason = EXCLUDED.reason,
                   question = EXCLUDED.question, sql = EXCLUDED.sql, created_at = now()
               RETURNING id""",
            (question_id, rating, _clean(reason), entry.question, entry.sql),
        ).fetchone()
    assert row is not None  # INSERT ... RETURNING returns the row
    return int(row[0])


def add_reason(settings: Settings, question_id: int, reason: str) -> bool:
    """Add the reason of a thumbs down given a moment earlier; False when there is no thumbs down to add it to."""
    text = _clean(reason)
    if text is None:
        return False
    with db.owner(settings) as conn:
        cur = conn.execute("UPDATE sage.feedback SET reason = %s WHERE question_id = %s AND rating = 'down'",
                           (text, question_id))
        updated = cur.rowcount > 0
    entry = querylog.get(settings, question_id)
    if updated and entry is not None and entry.verified_id is not None:
        verified.invalidate(settings, entry.verified_id, f"a user marked an answer it served as wrong: {text}")
    return updated


def clear(settings: Settings, question_id: int) -> None:
    """Take a rating back: its row goes, and a thumbs up's library entry with it."""
    with db.owner(settings) as conn:
        row = conn.execute("DELETE FROM sage.feedback WHERE question_id = %s RETURNING rating",
                           (question_id,)).fetchone()
    if row and row[0] == "up":
        verified.remove(settings, question_id)


def recent(settings: Settings, *, rating: Rating | None = "down", limit: int = 50) -> list[Feedback]:
    """The newest ratings first (the thumbs down, by default: what to review)."""
    querylog.ensure_tables(settings)
    where = " WHERE rating = %s" if rating else ""
    params: list[object] = [rating] if rating else []
    with db.owner(settings) as conn:
        rows = conn.execute(
            f"SELECT id, question_id, rating, reason, question, sql, created_at FROM sage.feedback{where} "
            "ORDER BY created_at DESC, id DESC LIMIT %s", [*params, limit]).fetchall()
    return [Feedback(*r) for r in rows]


def rating_of(settings: Settings, question_id: int) -> Rating | None:
    querylog.ensure_tables(settings)
    with db.owner(settings) as conn:
        row = conn.execute("SELECT rating FROM sage.feedback WHERE question_id = %s", (question_id,)).fetchone()
    return row[0] if row else None


__all__ = ["MAX_REASON_CHARS", "Feedback", "Rating", "add_reason", "clear", "rate", "rating_of", "recent"]
