"""The notebook API: ``sage.connect``, ``sage.ask``, ``sage.run_sql`` — the question loop for Jupyter and scripts.

    >>> import sage
    >>> a = sage.ask("Which 5 states have the highest median household income?")
    >>> a.df            # a pandas DataFrame of the rows
    >>> a.chart()       # the Altair chart the app draws
    >>> a.sql, a.assumptions, a.read_as, a.margins, a.significance
    >>> sage.ask("and the lowest?", after=a)   # a follow-up

An answer shows itself in Jupyter as the app's card does (the reading, the chart, the table, the SQL).  The same
pipeline as the app and the CLI runs underneath (retrieve, plan, guard, read-only execution, the query log), and
errors are the same :class:`~sage.errors.SageError` family: a failed question raises its error, and a declined one
returns its :class:`~sage.answer.Answer` (``.declined``, ``.decline``, ``.suggestions``) whose ``.df`` raises why.

The database is the one the settings name (``DATABASE_URL``, else the embedded server in ``SAGE_DATA_DIR``), or the
one given to :func:`connect`; it is set up on first use, as the CLI does.
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING

from .answer import Answer
from .errors import ErrorKind, QuestionError
from .settings import Settings, load_settings

if TYPE_CHECKING:
    from .planner.base import Planner

_lock = threading.Lock()
_current: Settings | None = None


def connect(database_url: str | None = None, *, settings: Settings | None = None) -> Settings:
    """Use this database for the questions that follow (``None``: the one the environment names, else the embedded
    server; ``settings``: settings of one's own, e.g. ``load_settings(data_dir=...)``), set up first when it never
    was; returns its settings.  Raises :class:`~sage.errors.SageError` when it cannot be reached or set up."""
    global _current
    from .census.setup import ensure_set_up
    from .db.embedded import keep_running_after_exit

    if settings is None:
        settings = load_settings(database_url=database_url)
    keep_running_after_exit(settings)  # a notebook restarted, or a script run again, joins the running server
    ensure_set_up(settings, announce=lambda: print(
        "This database is not set up yet: setting it up first (as `python -m sage setup` does) ...",
        file=sys.stderr))
    with _lock:
        _current = settings
    return settings


def _settings() -> Settings:
    with _lock:
        current = _current
    return current if current is not None else connect()


def ask(question: str, *, planner: Planner | str | None = None, after: Answer | int | None = None) -> Answer:
    """Answer ``question`` and log it (its ``.id`` can be followed up).

    ``planner``: ``"auto"``, ``"claude"``, ``"offline"`` (default: the settings'); ``after``: an earlier answer (or
    its log id) this question follows up ("and the lowest?").  Raises the question's error when it failed; a
    declined question is an answer (``.declined``) whose ``.df`` raises the reason.
    """
    from . import querylog
    from .agent import ask as ask_question

    settings = _settings()
    parent = after.id if isinstance(after, Answer) else after
    if isinstance(after, Answer) and parent is None:
        raise QuestionError("That answer was not logged, so it cannot be followed up: ask it with sage.ask first.")
    context = []
    if parent is not None:
        context = querylog.thread(settings, parent)
        if not context:
            raise QuestionError(f"There is no logged answer {parent} to follow: `after` takes an answer of sage.ask "
                                "or its id.", kind=ErrorKind.NOT_FOUND)
    answer = ask_question(question, settings, planner=planner, context=context, parent_id=parent)
    if not answer.answered and not answer.declined:
        answer.raise_for_outcome()
    return answer


def run_sql(sql: str) -> Answer:
    """Guard ``sql`` and run it as the read-only role, as SQL edited on the card is; raises
    :class:`~sage.errors.GuardError` when the guard refuses it and :class:`~sage.errors.ExecutionError` when the
    database does."""
    from .agent import run_sql as run_guarded

    answer = run_guarded(sql, _settings())
    answer.raise_for_outcome()
    return answer


__all__ = ["ask", "connect", "run_sql"]
