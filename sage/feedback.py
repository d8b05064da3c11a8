"""Thumbs up and down on an answer (``sage.feedback``), and what they do to the verified-answer library.

What a rating does depends on who gives it (:mod:`sage.roles`): a visitor can make the app more careful, never less.

* **Thumbs up from a visitor proposes** the answer for the library: it is listed for curators (the History page's
  "To review", :mod:`sage.review`) and changes nothing anyone else is told until a curator accepts it.  Only an
  answered question can be proposed.  **From a curator it verifies** (:func:`sage.verified.add`).  An answer that
  was itself served from the library is only counted, not added again.
* **Thumbs down** is kept with a short reason for review (:func:`recent`).  The reason comes a moment later, so the
  rating is stored at once and the reason added to it (:func:`add_reason`): nothing is lost when none is given.  It
  takes the answer's own library entry out of service (a curator's removes it; a visitor's flags it, so a curator
  looks at it) and flags the library entry that served it, if one did: a verified answer a user says is wrong is not
  served again until a curator verifies it anew.
* Clearing the rating (:func:`clear`) withdraws a proposal; a curator's clearing of their thumbs up also takes the
  answer out of the library.  A flag stays.

One rating per logged answer (the latest wins), with the session that gave it.  Reasons are plain text (whitespace
collapsed, at most :data:`MAX_REASON_CHARS`), shown Markdown-escaped.  The table is internal (schema ``sage``): the
reader role cannot read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from . import db, querylog, verified
from .answer import Outcome
from .errors import QuestionError
from .roles import Action, Role, may, require
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


def rate(settings: Settings, question_id: int, rating: Rating, reason: str | None = None, *, role: Role,
         session_id: str | None = None) -> int:
    """Store ``rating`` of logged answer ``question_id`` by a session of ``role`` (replacing an earlier one) and
    apply it to the library as the module docstring says; returns the feedback id.
    :class:`~sage.verified.NotFoundError` when there is no such answer; :class:`QuestionError` for a thumbs up on an
    answer without a result (nothing is stored)."""
    if rating not in ("up", "down"):
        raise QuestionError(f"A rating is 'up' or 'down', not {rating!r}.")
    entry = querylog.get(settings, question_id)
    if entry is None:
        raise verified.NotFoundError(f"There is no logged answer {question_id} to rate.")
    accepted = False
    if rating == "up":
        if entry.outcome is not Outcome.ANSWERED or not entry.sql:
            raise QuestionError(f"Answer {question_id} has no result ({entry.outcome}): only an answered question "
                                "can be marked right or proposed for the verified answers.")
        if may(role, Action.VERIFY) and entry.verified_id is None and entry.display_hint != "profile":
            # (a profile has nothing to verify)
            verified.add(settings, question_id, role=role)
            accepted = True
    else:
        why = "a user marked an answer it served as wrong" + (f": {_clean(reason)}" if _clean(reason) else "")
        if may(role, Action.REMOVE_VERIFIED):
            verified.remove(settings, question_id, role=role)
        else:
            own = verified.of_question(settings, question_id)
            if own is not None and own.valid:
                verified.invalidate(settings, own.id, why.replace("an answer it served", "it"))
        if entry.verified_id is not None:
            verified.invalidate(settings, entry.verified_id, why)
    with db.owner(settings) as conn:
        row = conn.execute(
            """INSERT INTO sage.feedback (question_id, rating, reason, question, sql, session_id, review, reviewed_at,
                                          reviewed_by)
               VALUES (%s, %s, %s, %s, %s, %s, %s, CASE WHEN %s::boolean THEN now() END, %s)
               ON CONFLICT (question_id) DO UPDATE SET rating = EXCLUDED.rating, reason = EXCLUDED.reason,
                   question = EXCLUDED.question, sql = EXCLUDED.sql, session_id = EXCLUDED.session_id,
                   review = EXCLUDED.review, reviewed_at = EXCLUDED.reviewed_at, reviewed_by = EXCLUDED.reviewed_by,
                   created_at = now()
               RETURNING id""",
            (question_id, rating, _clean(reason), entry.question, entry.sql, session_id,
             "accepted" if accepted else None, accepted, str(role) if accepted else None),
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


def clear(settings: Settings, question_id: int, *, role: Role) -> None:
    """Take a rating back: its row goes (a proposal is withdrawn); a curator's thumbs up takes its library entry
    with it.  A flag a thumbs down set stays (only a curator's verifying clears it)."""
    with db.owner(settings) as conn:
        row = conn.execute("DELETE FROM sage.feedback WHERE question_id = %s RETURNING rating",
                           (question_id,)).fetchone()
    if row and row[0] == "up" and may(role, Action.REMOVE_VERIFIED):
        verified.remove(settings, question_id, role=role)


def recent(settings: Settings, *, role: Role, rating: Rating | None = "down", limit: int = 50) -> list[Feedback]:
    """The newest ratings first (the thumbs down, by default: what to review); everyone's, so only for a curator or
    the operator."""
    require(role, Action.REVIEW)
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
