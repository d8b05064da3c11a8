"""What a user gets for one question (or one edited SQL): an :class:`Answer`, and its :class:`Outcome`.

The question loop (:mod:`sage.agent`) fills it in; the CLI prints it, the query log (:mod:`sage.querylog`) records it
and the app draws it as the answer card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from .census.periods import named_periods
from .errors import ErrorKind, SageError
from .execute import Result
from .planner.base import Attempt, PriorTurn
from .types import READ_AS, Chunk, DisplayHint

if TYPE_CHECKING:
    import altair
    import pandas

    from .charts import ChartSpec


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
    #: the words of the question that nothing read (the offline planner's word ledger); a question with any is
    #: never answered
    unread: list[str] = field(default_factory=list)
    #: what a follow-up changed in the previous reading (:class:`~sage.planner.edits.Edit`: kind and words);
    #: ``ask --json``'s ``"edits"``
    edits: list[dict[str, str]] = field(default_factory=list)
    #: which differences are statistically significant at 90% (computed by sage from the rows, never by a model;
    #: ``ask --json``'s ``"significance"``), and a sentence on what could not be tested
    significance: list[dict[str, Any]] = field(default_factory=list)
    significance_note: str | None = None
    #: the answer in one sentence (:mod:`sage.headline`: the figure, its margin, the period, or the gist of a
    #: ranking, comparison or change); ``ask --json``'s ``"headline"``
    headline: str | None = None
    #: the place's figures beside its parents' (:mod:`sage.context`): ``[{"measure", "name", "level", "value",
    #: "moe", "comparison", "significant", "z"}]``, and the one note on what has no parent figure
    context: list[dict[str, Any]] = field(default_factory=list)
    context_note: str | None = None
    #: a place name asked alone: its profile (:meth:`sage.profile.Profile.to_dict`)
    profile: dict[str, Any] | None = None
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
    #: the browser session that asked (kept in the query log: a visitor's History shows their own questions)
    session_id: str | None = None

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
        """The periods the answer's figures are from, newest first: those its SQL writes out (an earlier period, or
        the two of a change), else the latest period of its variables (what ``public.estimates`` shows)."""
        named = named_periods(self.sql or "")
        if named:
            return named[::-1]
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

    def raise_for_outcome(self) -> None:
        """Raise why there are no rows: the error of a failed answer, or a :class:`SageError` with the decline's
        reason and kind (``declined``, ``needs_fetch``, ``ambiguous``) for a declined one; nothing when answered."""
        if self.answered:
            return
        if self.declined:
            raise SageError(self.decline or "The data cannot answer this question.", kind=self.decline_kind)
        raise self.error or SageError("No answer.")

    # --- the notebook view (``sage.ask``): pandas and Altair are imported here, when used, never by the CLI

    @property
    def df(self) -> pandas.DataFrame:
        """The rows as a pandas DataFrame, columns named as the query named them (a ``<value>_moe`` column beside
        a value is its 90% margin of error).  Raises like :meth:`raise_for_outcome` when there are no rows."""
        self.raise_for_outcome()
        import pandas as pd

        assert self.result is not None  # answered
        return pd.DataFrame(self.result.rows, columns=self.result.columns)

    def chart_spec(self) -> ChartSpec:
        """What the app's answer card draws for these rows and this display hint (:func:`sage.charts.build`)."""
        self.raise_for_outcome()
        from .charts import build

        assert self.result is not None  # answered
        return build(self.result.columns, self.result.rows, self.display_hint)

    def chart(self) -> altair.TopLevelMixin | None:
        """The Altair chart the app draws for this answer; None when the card shows a number, a row of numbers or
        the table instead (``chart_spec()`` has the numbers and says why)."""
        return self.chart_spec().chart

    @property
    def read_as(self) -> str | None:
        """How the question was read, on its own ("median household income, Williamson County, TX"): a
        follow-up's standalone reading (the card's "Read as"); None when the planner gave none."""
        return self.standalone or None

    @property
    def margins(self) -> dict[str, list[Any]]:
        """Each value column's 90% margins of error, row by row (``{"median_income": [1652, ...]}``, None where
        none was published); only the columns that have a ``<value>_moe`` column."""
        if self.result is None:
            return {}
        from .significance import margin_columns

        cols = self.result.columns
        return {value: [row[cols.index(moe)] for row in self.result.rows]
                for value, moe in margin_columns(cols).items()}

    def _repr_html_(self) -> str:
        from .answer_view import answer_html

        return answer_html(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        from .answer_view import answer_html, answer_text

        return {"text/html": answer_html(self), "text/plain": answer_text(self)}

    def as_prior(self) -> PriorTurn:
        """This answer as an earlier turn of a conversation: question, reading, SQL and assumptions — no rows."""
        return PriorTurn(self.question, self.standalone, self.sql if self.answered else "", tuple(self.assumptions),
                         self.frame if self.answered else None)

    def to_dict(self) -> dict[str, Any]:
        """The CLI contract of `ask` (docs/design.md): an answer, or ``error`` when there is none."""
        base: dict[str, Any] = {"id": self.id, "question": self.question, "planner": self.planner,
                                "parent_id": self.parent_id, "standalone": self.standalone or None,
                                "read_as": self.standalone or None, "unread": self.unread,
                                "edits": self.edits}
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
            headline=self.headline,
            context=self.context,
        )
        if self.significance_note:
            base["significance_note"] = self.significance_note
        if self.context_note:
            base["context_note"] = self.context_note
        if self.profile is not None:
            base["profile"] = self.profile
        return base


__all__ = ["Answer", "Outcome"]
