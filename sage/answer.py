"""What a user gets for one question (or one edited SQL): an :class:`Answer`, and its :class:`Outcome`.

The question loop (:mod:`sage.agent`) fills it in; the CLI prints it, the query log (:mod:`sage.querylog`) records it
and the app draws it as the answer card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .errors import ErrorKind, SageError
from .execute import Result
from .planner.base import Attempt, PriorTurn
from .types import READ_AS, Chunk, DisplayHint


class Outcome(StrEnum):
    """How a question ended (also the ``outcome`` column of the query log)."""

    #: the query ran: there is a result to show
    ANSWERED = "answered"
    #: the planner said the data cannot answer it, and why (a decline is an answer, not an error)
    DECLINED = "declined"
    #: something went wrong: ``Answer.error`` says what
    FAILED = "failed"


@dataclass
class Answer:
    """Everything a user sees for one question (or one edited SQL): the answer card's contents.

    The one mutable value between the stages: the question loop builds it up try by try.
    """

    question: str
    planner: str
    sql: str = ""
    assumptions: list[str] = field(default_factory=list)
    display_hint: DisplayHint = "table"
    result: Result | None = None
    attempts: list[Attempt] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    #: why there is no answer, when something went wrong
    error: SageError | None = None
    #: why the data cannot answer the question, when the planner declined it
    decline: str | None = None
    #: what kind of decline: the data cannot answer it; a table to load (``fetch`` names it:
    #: ``{"tables", "vintage", "geographies"}``); a name to choose (the suggestions are the readings)
    decline_kind: ErrorKind = ErrorKind.DECLINED
    fetch: dict[str, Any] | None = None
    #: the question read on its own (a follow-up's "Read as"), and the offline planner's frame of it
    standalone: str = ""
    frame: dict[str, Any] | None = None
    #: which differences are statistically significant at 90% (computed by sage from the rows, never by a model;
    #: ``ask --json``'s ``"significance"``), and a sentence on what could not be tested
    significance: list[dict[str, Any]] = field(default_factory=list)
    significance_note: str | None = None
    suggestions: list[str] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    #: the retrieved context (retrieved when first read: :class:`sage.agent.RetrievedContext`)
    chunks: Sequence[Chunk] = field(default_factory=list)
    variables: list[dict[str, Any]] = field(default_factory=list)
    #: its id in the query log (``sage.questions``), once recorded
    id: int | None = None
    #: the logged answer this one follows (``ask --after ID``, the Ask page's conversation)
    parent_id: int | None = None
    #: answered by re-running a verified answer's SQL (``sage.verified_answers.id``), not by a planner
    verified_id: int | None = None
    #: things a user should know that are not assumptions of the answer (a verified answer that was skipped)
    notices: list[str] = field(default_factory=list)

    @property
    def outcome(self) -> Outcome:
        if self.result is not None and self.error is None:
            return Outcome.ANSWERED
        if self.decline is not None:
            return Outcome.DECLINED
        return Outcome.FAILED

    @property
    def answered(self) -> bool:
        return self.outcome is Outcome.ANSWERED

    @property
    def declined(self) -> bool:
        return self.outcome is Outcome.DECLINED

    @property
    def verified(self) -> bool:
        return self.verified_id is not None and self.answered

    @property
    def followup(self) -> bool:
        """Read as a follow-up of an earlier turn: the first assumption is the "Read as" line."""
        return bool(self.assumptions) and self.assumptions[0].startswith(READ_AS)

    @property
    def tries(self) -> int:
        return len(self.attempts) + (1 if self.answered else 0)

    @property
    def vintages(self) -> list[str]:
        return sorted({v["vintage"] for v in self.variables if v.get("vintage")}, reverse=True)

    def error_info(self) -> dict[str, Any] | None:
        """Why there is no answer, as the CLI's ``error`` object: ``{"kind": "declined", "message": why}`` for a
        decline, the error's kind and message for a failure; None when answered."""
        if self.answered:
            return None
        if self.declined:
            info: dict[str, Any] = {"kind": self.decline_kind.value, "message": self.decline or ""}
            if self.fetch:
                info["fetch"] = self.fetch
            return info
        return (self.error or SageError("No answer.")).to_dict()

    def as_prior(self) -> PriorTurn:
        """This answer as an earlier turn of a conversation: question, reading, SQL and assumptions — no rows."""
        return PriorTurn(self.question, self.standalone, self.sql if self.answered else "", tuple(self.assumptions),
                         self.frame if self.answered else None)

    def to_dict(self) -> dict[str, Any]:
        """The CLI contract of `ask` (docs/design.md): an answer, or ``error`` when there is none."""
        base: dict[str, Any] = {"id": self.id, "question": self.question, "planner": self.planner,
                                "parent_id": self.parent_id, "standalone": self.standalone or None}
        if self.notices:
            base["notices"] = self.notices
        if self.result is None or not self.answered:
            base.update(
                error=self.error_info(),
                attempts=[a.to_dict() for a in self.attempts],
                sql=self.sql or None,
                assumptions=self.assumptions,
                suggestions=self.suggestions,
                timings_ms=self.timings_ms,
            )
            return base
        r = self.result
        base.update(
            sql=self.sql,
            assumptions=self.assumptions,
            display_hint=self.display_hint,
            columns=r.columns,
            rows=r.rows,
            row_count=r.row_count,
            truncated=r.truncated,
            attempts=[a.to_dict() for a in self.attempts],
            timings_ms=self.timings_ms,
            vintages=self.vintages,
            usage=self.usage,
            significance=self.significance,
            verified=self.verified,
        )
        if self.significance_note:
            base["significance_note"] = self.significance_note
        return base


__all__ = ["Answer", "Outcome"]
