"""What every planner shares: the :class:`Plan` it returns, the failed :class:`Attempt` it is shown, the
:class:`Planner` interface that the Claude and the offline planner both implement."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ..types import Chunk, DisplayHint
from .edits import Edit


@dataclass(frozen=True)
class Plan:
    """A planner's answer: SQL to run (empty = "cannot answer"), its assumptions and a display hint."""

    sql: str
    assumptions: list[str] = field(default_factory=list)
    display_hint: DisplayHint = "table"
    planner: str = ""
    #: answerable questions to offer when ``sql`` is empty
    suggestions: list[str] = field(default_factory=list)
    #: token usage and the like, as the planner reports it (``{"input_tokens": …}``)
    usage: dict = field(default_factory=dict)
    #: why there is no SQL: ``declined``, ``needs_fetch`` (``fetch`` names the tables to load) or ``ambiguous``
    decline_kind: str = "declined"
    fetch: dict | None = None
    #: the question as read, standing on its own ("median household income, Williamson County, TX"): shown
    #: first for a follow-up, and what a later follow-up edits
    standalone: str = ""
    #: the offline planner's frame (JSON-able), kept in the question log for follow-ups
    frame: dict | None = None
    #: what the result compares, so ``sage`` can test it (:func:`sage.significance.assess`): ``"places"`` (the
    #: rows against one another), ``"change"`` (each row's ``change`` between ``periods``), ``"difference"``
    #: (one row's ``difference`` of ``first_place`` minus ``second_place``), or None
    compare: str | None = None
    #: the ACS periods of a change, earlier first ("2014-2018", "2019-2023")
    periods: tuple[str, ...] = ()
    #: the words of the question nothing read (the offline planner's word ledger): never answered around them
    unread: tuple[str, ...] = ()
    #: several statements that answer together (a place's profile, one per topic): each goes through the guard
    #: and the read-only role on its own; ``sql`` is them joined, for reading
    statements: tuple[str, ...] = ()
    #: what a follow-up changed in the previous reading, each one of the closed set of edits (empty for a
    #: question read alone)
    edits: tuple[Edit, ...] = ()

    @property
    def declined(self) -> bool:
        return not self.sql.strip()


@dataclass(frozen=True)
class PriorTurn:
    """An earlier question of the conversation, as a planner may see it — never its rows."""

    question: str
    standalone: str = ""
    sql: str = ""
    assumptions: tuple[str, ...] = ()
    frame: dict | None = None


@dataclass(frozen=True)
class Attempt:
    """One failed try of a question: the SQL and the short error that went back to the planner."""

    sql: str
    error: str
    #: ``guard`` or the execution error kind (``timeout``, ``permission``, ``undefined``, ``other``)
    kind: str = ""

    def to_dict(self) -> dict:
        return {"sql": self.sql, "error": self.error}


@runtime_checkable
class Planner(Protocol):
    """Turns a question plus retrieved context into a :class:`Plan`.

    ``attempts`` holds the earlier failed tries of the same question (oldest first); a planner should not
    propose the same SQL again.  ``context`` holds the earlier turns of the conversation (oldest first) when the
    question is a follow-up.
    """

    name: str

    def plan(self, question: str, chunks: Sequence[Chunk], attempts: Sequence[Attempt] = (),
             context: Sequence[PriorTurn] = ()) -> Plan: ...
