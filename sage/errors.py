"""One exception family for the product, a subclass per pipeline stage.

Every error carries a message a user can act on (what happened and what to do next) in ``str(exc)``, a short
machine-readable ``kind`` (used as ``error.kind`` in the CLI's JSON), and optionally a ``detail`` with the technical
text (a PostgreSQL message, an HTTP status) for logs and for the planner's retry, never for the page.
"""

from __future__ import annotations


class SageError(Exception):
    """Root of every error the product raises on purpose."""

    kind = "error"

    def __init__(self, message: str, *, kind: str | None = None, detail: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if kind:
            self.kind = kind
        self.detail = detail

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "message": self.message}


class SettingsError(SageError):
    """A setting has a value the product cannot use."""

    kind = "settings"

    def __init__(self, message: str, *, setting: str | None = None, **kw) -> None:
        super().__init__(message, **kw)
        self.setting = setting


class DatabaseError(SageError):
    """The database cannot be reached, started or prepared."""

    kind = "database"


class DataError(SageError):
    """A shipped or fetched data file is missing or malformed (nothing was loaded)."""

    kind = "data"


class NotSetUpError(DatabaseError):
    """The database is reachable but `python -m sage setup` has not been run on it."""

    kind = "not_set_up"


class EmbeddingError(SageError):
    """The embedding model cannot be loaded or run."""

    kind = "embedding"


class RetrievalError(SageError):
    """Retrieval failed (no index, bad question)."""

    kind = "retrieval"


class QuestionError(SageError):
    """The question itself cannot be asked (empty, too long, not text)."""

    kind = "question"


class PlanningError(SageError):
    """The planner could not produce a plan: no key, bad key, rate limit, network, unparseable answer."""

    kind = "planning"


class GuardError(SageError):
    """The SQL guard refused a statement.

    ``policy`` is True when the statement reaches for something that is never allowed (a forbidden table or
    function, a write); such a refusal ends the question loop instead of being retried.
    """

    kind = "guard"

    def __init__(self, message: str, *, policy: bool = False, **kw) -> None:
        super().__init__(message, **kw)
        self.policy = policy


class ExecutionError(SageError):
    """The database refused or aborted a guarded query.

    ``kind`` is one of ``timeout``, ``permission``, ``undefined``, ``other``; ``detail`` has PostgreSQL's own
    message for the planner's retry, ``str(exc)`` a plain one for users.
    """

    kind = "other"


class CensusApiError(SageError):
    """The Census Data API could not be used (bad key, network, unexpected answer)."""

    kind = "census_api"
