"""Curators' review of what visitors proposed: the thumbs up that are waiting (:func:`proposals`), accepted into the
verified-answer library (:func:`accept`) or rejected (:func:`reject`).

A visitor's thumbs up changes nothing anyone else is told (:mod:`sage.feedback`); it becomes a proposal, listed on
the History page's "To review" (for curators) and by ``python -m sage review``.  Each proposal says who wrote its SQL
(a planner, or the visitor who edited it: such an answer is marked "edited SQL", to be read with care) and whether
the guard passes its SQL now.  Accepting runs :func:`sage.verified.add` (the SQL through the guard and the executor
again; a proposal the guard now refuses cannot be accepted and says why); rejecting keeps the rating but takes it off
the list.  Both need a curator or the operator, checked here whatever the page showed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from . import db, guard, querylog, verified
from .errors import GuardError, QuestionError
from .roles import Action, Role, require
from .settings import Settings

#: the most proposals listed at once
MAX_LISTED = 100


@dataclass(frozen=True)
class Proposal:
    """A visitor's thumbs up waiting for a curator."""

    question_id: int
    question: str
    #: the question read on its own (a follow-up's reading), else the question
    reading: str
    sql: str
    #: who wrote the SQL: ``offline``, ``claude`` (a planner) or ``user`` (a visitor edited it)
    planner: str
    proposed_at: datetime
    #: why the guard refuses the SQL now (None: it passes)
    guard_error: str | None = None

    @property
    def edited(self) -> bool:
        return self.planner == "user"

    @property
    def who(self) -> str:
        """Who wrote the SQL, as the list says it."""
        return "edited SQL (a visitor wrote it)" if self.edited else f"the {self.planner} planner"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "edited": self.edited, "who": self.who}


def proposals(settings: Settings, *, role: Role, limit: int = 50) -> list[Proposal]:
    """The open proposals, newest first: thumbs up on answered questions that are in the library neither as
    themselves nor through the verified answer that served them, and that no curator has reviewed."""
    require(role, Action.REVIEW)
    querylog.ensure_tables(settings)
    with db.owner(settings) as conn:
        rows = conn.execute(
            """SELECT f.question_id, q.question, coalesce(nullif(q.standalone, ''), q.question), q.sql, q.planner,
                      f.created_at
               FROM sage.feedback f JOIN sage.questions q ON q.id = f.question_id
               WHERE f.rating = 'up' AND f.review IS NULL AND q.outcome = 'answered' AND q.sql IS NOT NULL
                 AND q.verified_id IS NULL
                 AND NOT EXISTS (SELECT 1 FROM sage.verified_answers v WHERE v.question_id = f.question_id)
               ORDER BY f.created_at DESC, f.id DESC LIMIT %s""",
            (min(limit, MAX_LISTED),)).fetchall()
    return [Proposal(int(r[0]), r[1], r[2], r[3], r[4], r[5], _guard_error(settings, r[3])) for r in rows]


def _guard_error(settings: Settings, sql: str) -> str | None:
    try:
        guard.check(sql, max_rows=settings.max_rows)
    except GuardError as exc:
        return exc.message
    return None


def accept(settings: Settings, question_id: int, *, role: Role, reviewer: str = "") -> verified.VerifiedAnswer:
    """Verify proposal ``question_id`` (:func:`sage.verified.add`: its SQL runs again through the guard and the
    executor) and mark it reviewed.  :class:`~sage.verified.NotFoundError` when no such answer was proposed;
    :class:`QuestionError` when it cannot be verified (the guard refuses its SQL now, it no longer runs)."""
    require(role, Action.VERIFY)
    _proposed(settings, question_id)
    entry = verified.add(settings, question_id, role=role)
    _mark(settings, question_id, "accepted", reviewer or str(role))
    return entry


def reject(settings: Settings, question_id: int, *, role: Role, reviewer: str = "") -> bool:
    """Take proposal ``question_id`` off the list without verifying it (the rating is kept); False when it was
    not an open proposal."""
    require(role, Action.VERIFY)
    return _mark(settings, question_id, "rejected", reviewer or str(role), only_open=True)


def _proposed(settings: Settings, question_id: int) -> None:
    querylog.ensure_tables(settings)
    with db.owner(settings) as conn:
        row = conn.execute("SELECT rating FROM sage.feedback WHERE question_id = %s", (question_id,)).fetchone()
    if row is None or row[0] != "up":
        if querylog.get(settings, question_id) is None:
            raise verified.NotFoundError(f"There is no logged answer {question_id}.")
        raise QuestionError(f"Answer {question_id} was not proposed (no thumbs up): list the proposals with "
                            "`python -m sage review`, or verify any logged answer with `python -m sage verify ID`.")


def _mark(settings: Settings, question_id: int, review: str, reviewer: str, *, only_open: bool = False) -> bool:
    with db.owner(settings) as conn:
        cur = conn.execute(
            "UPDATE sage.feedback SET review = %s, reviewed_at = now(), reviewed_by = %s "
            "WHERE question_id = %s AND rating = 'up'" + (" AND review IS NULL" if only_open else ""),
            (review, reviewer[:200], question_id))
        return cur.rowcount > 0


__all__ = ["MAX_LISTED", "Proposal", "accept", "proposals", "reject"]
