"""One exception family for the product, a subclass per pipeline stage, and the kinds of error as an enum.

Every error carries a message a user can act on (what happened and what to do next) in ``str(exc)``, a
machine-readable :class:`ErrorKind` (``error.kind`` in the CLI's JSON, and the key of the app's advice), and
optionally a ``detail`` with the technical text (a PostgreSQL message, an HTTP status) for logs and for the planner's
retry, never for the page.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorKind(StrEnum):
    """What went wrong, in one word.  A ``StrEnum``: it compares equal to, and prints as, its value."""

    # the default of each exception class
    ERROR = "error"
    SETTINGS = "settings"
    DATABASE = "database"
    DATA = "data"
    NOT_SET_UP = "not_set_up"
    EMBEDDING = "embedding"
    RETRIEVAL = "retrieval"
    QUESTION = "question"
    PLANNING = "planning"
    GUARD = "guard"
    OTHER = "other"  # the database could not run a guarded query, for no reason below
    CENSUS_API = "census_api"
    # the database
    DATABASE_DOWN = "database_down"
    #: every pooled connection stayed in use for SAGE_POOL_TIMEOUT_S, or another process or session is doing the
    #: same long job right now (a fetch, the catalog index; the message names who and what)
    BUSY = "busy"
    #: the connection died under a statement (a server restart, pg_terminate_backend, a network drop)
    CONNECTION_LOST = "connection_lost"
    #: SAGE_DATA_DIR cannot hold the embedded server's files (a read-only disk, no permission)
    DATA_DIR = "data_dir"
    # data files
    DATA_MISSING = "data_missing"
    DATA_MALFORMED = "data_malformed"
    CPI_YEAR_MISSING = "cpi_year_missing"
    # the question (the app shows these as a warning, not an error)
    QUESTION_TYPE = "question_type"
    QUESTION_EMPTY = "question_empty"
    QUESTION_TOO_LONG = "question_too_long"
    QUESTION_ABSURD = "question_absurd"
    QUESTION_CODE = "question_code"
    QUESTION_LEVEL = "question_level"
    # planning (the Claude planner and the question loop)
    NO_KEY = "no_key"
    BAD_KEY = "bad_key"
    RATE_LIMITED = "rate_limited"
    NETWORK = "network"
    API = "api"
    BAD_ANSWER = "bad_answer"
    ATTEMPTS_EXHAUSTED = "attempts_exhausted"
    #: not exceptions: the ``error.kind`` of an answer the data cannot give as asked (see
    #: :class:`sage.answer.Outcome`): the data cannot answer it; an ACS table that would is not loaded; a name
    #: with several readings (the suggestions are the readings)
    DECLINED = "declined"
    NEEDS_FETCH = "needs_fetch"
    AMBIGUOUS = "ambiguous"
    # running a guarded query
    TIMEOUT = "timeout"
    PERMISSION = "permission"
    UNDEFINED = "undefined"
    # the Census Data API and `census fetch`
    MISSING_KEY = "missing_key"
    UNAVAILABLE = "unavailable"
    EMPTY = "empty"
    UNKNOWN_TABLE = "unknown_table"
    UNKNOWN_VARIABLE = "unknown_variable"
    TOO_MANY_VARIABLES = "too_many_variables"
    BAD_GEOGRAPHY = "bad_geography"
    NOT_FOUND = "not_found"
    BAD_REQUEST = "bad_request"
    BAD_RESPONSE = "bad_response"
    INVALID_ARGUMENT = "invalid_argument"
    #: fetching from the app is turned off (SAGE_ALLOW_FETCH) for this database
    FETCH_DISALLOWED = "fetch_disallowed"
    # roles and spending limits (sage.roles, sage.limits)
    #: the session's role may not do this (a curator's action asked by a visitor)
    NOT_ALLOWED = "not_allowed"
    #: a curator sign-in failed (a wrong password, or too many tries: wait)
    SIGN_IN = "sign_in"
    #: more questions in a minute than SAGE_MAX_QUESTIONS_PER_MINUTE allows one session
    TOO_MANY_QUESTIONS = "too_many_questions"


class SageError(Exception):
    """Root of every error the product raises on purpose."""

    kind: ErrorKind = ErrorKind.ERROR

    def __init__(self, message: str, *, kind: ErrorKind | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if kind:
            self.kind = kind
        self.detail = detail

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind.value, "message": self.message}


class SettingsError(SageError):
    """A setting has a value the product cannot use; ``setting`` names it (e.g. ``SAGE_MAX_ROWS``)."""

    kind = ErrorKind.SETTINGS

    def __init__(self, message: str, *, setting: str | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.setting = setting


class DatabaseError(SageError):
    """The database cannot be reached, started or prepared."""

    kind = ErrorKind.DATABASE


class DataError(SageError):
    """A shipped or fetched data file is missing or malformed (nothing was loaded)."""

    kind = ErrorKind.DATA


class NotSetUpError(DatabaseError):
    """The database is reachable but `python -m sage setup` has not been run on it."""

    kind = ErrorKind.NOT_SET_UP


class EmbeddingError(SageError):
    """The embedding model cannot be loaded or run."""

    kind = ErrorKind.EMBEDDING


class RetrievalError(SageError):
    """Retrieval failed (no index, bad question)."""

    kind = ErrorKind.RETRIEVAL


class QuestionError(SageError):
    """The question itself cannot be asked (empty, too long, not text)."""

    kind = ErrorKind.QUESTION


class PlanningError(SageError):
    """The planner could not produce a plan: no key, bad key, rate limit, network, unparseable answer."""

    kind = ErrorKind.PLANNING


class GuardError(SageError):
    """The SQL guard refused a statement.

    ``policy`` is True when the statement reaches for something that is never allowed (a forbidden table or
    function, a write); such a refusal ends the question loop instead of being retried.
    """

    kind = ErrorKind.GUARD

    def __init__(self, message: str, *, policy: bool = False, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.policy = policy


class ExecutionError(SageError):
    """The database refused or aborted a guarded query.

    ``kind`` is ``timeout``, ``permission``, ``undefined`` or ``other``; ``detail`` has PostgreSQL's own message for
    the planner's retry, ``str(exc)`` a plain one for users.
    """

    kind = ErrorKind.OTHER


class NotAllowedError(SageError):
    """The caller's role may not do this: a visitor asked for a curator's action (loading a table, verifying an
    answer, reading everyone's questions).  Raised where the action runs, whatever the page showed."""

    kind = ErrorKind.NOT_ALLOWED


class CensusApiError(SageError):
    """The Census Data API could not be used (bad key, network, unexpected answer).

    ``retryable`` is True for trouble that waiting may fix (429, 5xx, a time-out, a dropped connection);
    ``retry_after`` is the server's ``Retry-After`` in seconds, when it sent one.
    """

    kind = ErrorKind.CENSUS_API

    def __init__(self, message: str, *, retryable: bool = False, retry_after: float | None = None,
                 **kw: Any) -> None:
        super().__init__(message, **kw)
        self.retryable = retryable
        self.retry_after = retry_after


__all__ = [
    "CensusApiError",
    "DataError",
    "DatabaseError",
    "EmbeddingError",
    "ErrorKind",
    "ExecutionError",
    "GuardError",
    "NotAllowedError",
    "NotSetUpError",
    "PlanningError",
    "QuestionError",
    "RetrievalError",
    "SageError",
    "SettingsError",
]
