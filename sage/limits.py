"""Spending limits of a shared deployment: how fast one session may ask, and how many Claude tokens all of them may
spend in a day.

* **Per session** (:class:`QuestionRate`): at most ``SAGE_MAX_QUESTIONS_PER_MINUTE`` questions (and edited SQL
  runs) in any 60 seconds; past it the question is refused with how long to wait.  Plain logic with an injectable
  clock; the app keeps one per browser session.
* **Per day** (:func:`budget`, :func:`claude_allowed`, :func:`spend`): the Claude tokens spent today (UTC) are
  counted in ``sage.claude_usage``, one row a day, added to atomically, so every app process on one database and
  the command line count against the same ``SAGE_CLAUDE_DAILY_TOKENS``.  Past it Claude is not called: the offline
  planner answers and the card and the Status page say so (:mod:`sage.agent`).  A question under way when the cap
  is reached finishes, so a day may end a little past it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from . import db, querylog
from .errors import ErrorKind, QuestionError, SageError
from .settings import Settings

log = logging.getLogger(__name__)

#: the window of the per-session rate
WINDOW_S = 60.0
#: the usage keys counted as tokens (what the Claude planner reports)
TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
#: what an answer says when the daily budget sent it to the offline planner
BUDGET_NOTICE = ("Claude's daily token budget (SAGE_CLAUDE_DAILY_TOKENS) is spent, so the offline planner answered; "
                 "Claude answers again tomorrow (UTC).")


class QuestionRate:
    """The questions of one session in the last :data:`WINDOW_S` seconds."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.clock = clock
        self._times: deque[float] = deque()
        self._lock = threading.Lock()

    def take(self) -> None:
        """Count one question, or raise :class:`~sage.errors.QuestionError` (``too_many_questions``) with how long
        to wait when the session has asked ``per_minute`` in the last minute (a refused one is not counted)."""
        with self._lock:
            now = self.clock()
            while self._times and now - self._times[0] >= WINDOW_S:
                self._times.popleft()
            if len(self._times) >= self.per_minute:
                wait = max(1, round(self._times[0] + WINDOW_S - now))
                raise QuestionError(
                    f"That is {self.per_minute} questions in a minute, the most one session may ask "
                    f"(SAGE_MAX_QUESTIONS_PER_MINUTE): wait {wait} s and ask again.",
                    kind=ErrorKind.TOO_MANY_QUESTIONS)
            self._times.append(now)


# ---------------------------------------------------------------------------------------------------------------
# Claude tokens per day


@dataclass(frozen=True)
class Budget:
    """Claude tokens spent today (UTC) against ``SAGE_CLAUDE_DAILY_TOKENS`` (``cap`` None: no cap)."""

    used: int
    cap: int | None

    @property
    def spent(self) -> bool:
        return self.cap is not None and self.used >= self.cap

    def to_dict(self) -> dict[str, Any]:
        return {"used": self.used, "cap": self.cap, "spent": self.spent}


def tokens_of(usage: Mapping[str, Any]) -> int:
    """The tokens one answer's ``usage`` counts."""
    return sum(int(usage.get(k) or 0) for k in TOKEN_KEYS if isinstance(usage.get(k), (int, float)))


def budget(settings: Settings) -> Budget:
    """Today's Claude tokens and the cap."""
    querylog.ensure_tables(settings)
    row = db.run(settings, db.OWNER, lambda conn: conn.execute(
        "SELECT tokens FROM sage.claude_usage WHERE day = (now() AT TIME ZONE 'UTC')::date").fetchone())
    return Budget(int(row[0]) if row else 0, settings.claude_daily_tokens)


def claude_allowed(settings: Settings) -> bool:
    """Whether Claude may be called now: no cap, or today's tokens under it.  A database that cannot be read
    says no when there is a cap (the budget must hold), yes when there is none."""
    if settings.claude_daily_tokens is None:
        return True
    try:
        return not budget(settings).spent
    except SageError as exc:
        log.warning("the Claude token budget could not be read: %s", exc)
        return False


def spend(settings: Settings, usage: Mapping[str, Any]) -> None:
    """Add one answer's tokens to today's count (atomically: many processes add to one row).  Never raises: the
    count is an aid, and the answer is already given."""
    tokens = tokens_of(usage)
    if tokens <= 0:
        return
    try:
        querylog.ensure_tables(settings)
        db.run(settings, db.OWNER, lambda conn: conn.execute(
            """INSERT INTO sage.claude_usage AS u (day, tokens) VALUES ((now() AT TIME ZONE 'UTC')::date, %s)
               ON CONFLICT (day) DO UPDATE SET tokens = u.tokens + EXCLUDED.tokens, updated_at = now()""",
            (tokens,)), retry=False)
    except Exception as exc:  # the count must never cost an answer
        log.warning("could not count %s Claude tokens: %s", tokens, exc)


__all__ = ["BUDGET_NOTICE", "TOKEN_KEYS", "WINDOW_S", "Budget", "QuestionRate", "budget", "claude_allowed", "spend",
           "tokens_of"]
