"""The conversation: a :class:`Turn` is one question and its answer, as ``st.session_state`` keeps it; each new
question on the Ask page is asked with the earlier turns as its context (:func:`conversation`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import streamlit as st

from sage import agent, charts
from sage.answer import Answer
from sage.charts import ChartSpec
from sage.planner.base import Planner, PriorTurn
from sage.querylog import MAX_THREAD
from sage.settings import Settings

from .session import session_id

#: the stages ``sage.agent.ask`` reports, as the status box names them
STAGES = {
    "retrieving": "Finding the tables and variables that fit",
    "planning": "Writing the SQL",
    "checking": "Checking the SQL with the guard",
    "running": "Running the query (read-only)",
    "drawing": "Drawing the answer",
}
#: (timing key, name shown), in pipeline order
TIMING_NAMES = (("retrieve", "retrieve"), ("verified", "verified answers"), ("plan", "plan"), ("guard", "check"),
                ("execute", "run"), ("context", "context"), ("draw", "draw"), ("total", "total"))


@dataclass
class Turn:
    """One question (or one edited SQL) and its answer in a conversation, as ``st.session_state`` keeps it.

    The chart is built once, on the first draw, and kept (the card is redrawn on every rerun).
    """

    id: int
    #: ``ask`` for a question, ``sql`` for SQL a user edited and ran
    kind: Literal["ask", "sql"]
    question: str
    answer: Answer
    spec: ChartSpec | None = None
    draw_ms: float | None = None
    #: the questions of the conversation before this one, oldest first (what its link may need)
    earlier: tuple[str, ...] = ()
    #: the link that reproduces it (``?q=...``), made on its first draw
    link: str | None = None


def new_turn(question: str, answer: Answer, kind: Literal["ask", "sql"] = "ask",
             earlier: Sequence[str] = ()) -> Turn:
    """A new turn, numbered in this session."""
    seq = st.session_state.get("_turn_seq", 0) + 1
    st.session_state["_turn_seq"] = seq
    return Turn(id=seq, kind=kind, question=question, answer=answer, earlier=tuple(earlier))


def conversation(turns: Sequence[Turn]) -> tuple[list[PriorTurn], int | None, list[str]]:
    """What a new question of this conversation is asked with: the earlier questions' turns (at most
    :data:`~sage.querylog.MAX_THREAD`, never rows), the logged answer it follows, and the earlier questions."""
    asked = [t for t in turns if t.kind == "ask"][-MAX_THREAD:]
    return [t.answer.as_prior() for t in asked], (asked[-1].answer.id if asked else None), [t.question for t in asked]


def chart_spec(turn: Turn) -> ChartSpec | None:
    """The turn's chart, built once (the card is redrawn on every rerun); None when there is no answer."""
    result = turn.answer.result
    if not turn.answer.answered or result is None:
        return None
    if turn.spec is None:
        started = time.perf_counter()
        turn.spec = charts.build(result.columns, result.rows, turn.answer.display_hint)
        turn.draw_ms = round((time.perf_counter() - started) * 1000, 1)
    return turn.spec


def run_with_status(question: str, settings: Settings, planner: Planner, *, context: Sequence[PriorTurn] = (),
                    parent_id: int | None = None, earlier: Sequence[str] = ()) -> Turn:
    """Ask (as a follow-up of ``context`` when there is one), showing the pipeline stages live in an ``st.status``
    box, then the per-stage timings; a new turn."""
    box = st.status(STAGES["retrieving"] + "…", expanded=False)

    def progress(stage: str, info: dict[str, Any]) -> None:
        if stage in STAGES:
            label = STAGES[stage] + (f" (try {info['attempt']})" if info.get("attempt", 1) > 1 else "")
            box.update(label=label + "…")

    answer = agent.ask(question, settings, planner=planner, progress=progress, context=context, parent_id=parent_id,
                       session_id=session_id())
    turn = new_turn(question, answer, earlier=earlier)
    if answer.answered:
        box.update(label=STAGES["drawing"] + "…")
        chart_spec(turn)
    _finish_status(box, turn)
    return turn


def timings(turn: Turn) -> dict[str, float]:
    """The answer's stage timings, with the time the chart took to build as ``draw``."""
    t = dict(turn.answer.timings_ms)
    if turn.draw_ms is not None:
        t["draw"] = turn.draw_ms
    return t


def _finish_status(box: Any, turn: Turn) -> None:
    answer = turn.answer
    t = timings(turn)
    box.markdown(" · ".join(f"{name} {t[k]:,.0f} ms" for k, name in TIMING_NAMES if k in t and k != "total"))
    total = (t.get("total", 0) + t.get("draw", 0)) / 1000
    if answer.verified:
        box.update(label=f"Answered from the verified answers in {total:.2f} s", state="complete")
    elif answer.answered:
        tries = f" · {answer.tries} tries" if answer.tries > 1 else ""
        box.update(label=f"Answered in {total:.2f} s{tries}", state="complete")
    elif answer.declined:
        box.update(label=f"Not answerable with this data ({total:.2f} s)", state="complete")
    else:
        box.update(label=f"No answer ({total:.2f} s)", state="error")


def ask_later(question: str) -> None:
    """Button callback (examples, suggestions, clarifying choices): ask ``question`` on the Ask page's next run, as
    the next turn of the conversation."""
    st.session_state["pending_question"] = question


def new_conversation() -> None:
    """Button callback: forget the conversation; the next question stands on its own."""
    st.session_state["turns"] = []
    st.session_state.pop("pending_question", None)


__all__ = ["STAGES", "TIMING_NAMES", "Turn", "ask_later", "chart_spec", "conversation", "new_conversation",
           "new_turn", "run_with_status", "timings"]
