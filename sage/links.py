"""Links that reproduce an answer: ``?q=QUESTION`` (plus ``&planner=`` when the answer's planner is not the
default); opening one on the Ask page asks the question and shows the card.

A follow-up ("and Williamson County?") means nothing on its own, so its link carries what reproduces it:

* its standalone reading, when that reading asked alone is read the same way — by the offline planner, the same
  frame (:func:`sage.verified.meaning`) and display; Claude's reading is written to stand alone;
* otherwise (and for an answer without a frame, such as a decline, asked in a conversation) the conversation up to
  it, as several ``q`` parameters in order (``?q=first&q=and+which+of+those...``): opening it asks them one after
  another, each a follow-up of the one before.  At most :data:`~sage.querylog.MAX_THREAD` questions.

:func:`read_link` checks a link's parameters before anything is asked: no question, an empty one, one longer than
``SAGE_MAX_QUESTION_CHARS``, too many of them or an unknown planner each get a clear message.

A link also carries the periods of its answer (``&period=2019-2023``, two for a change): opened after a newer ACS
release is loaded, its last question is asked for those periods ("... in 2019-2023?"), so it shows the figures it
was made with instead of the new release's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode

from . import db, verified
from .agent import validate_question
from .census import periods
from .errors import ErrorKind, QuestionError, SageError
from .querylog import MAX_THREAD
from .settings import Settings

PLANNERS = ("auto", "claude", "offline")
_PERIOD = re.compile(r"^\d{4}-\d{4}$")


def questions_for(settings: Settings, *, question: str, standalone: str | None, followup: bool, planner: str,
                  frame: dict | None, earlier: Sequence[str] = ()) -> list[str]:
    """The questions a link replays to reproduce an answer (see the module docstring); ``earlier`` are the
    questions of the conversation before this one, oldest first."""
    chain = [*earlier, question][-MAX_THREAD:]
    alone = (standalone or "").strip() if followup else question
    if not alone:
        return chain
    if not earlier or planner == "claude":  # nothing before it, or a reading Claude wrote to stand alone
        return [alone]
    if frame is None:  # declined, or answered without a frame: what the conversation made of it is not known
        return chain
    # asked in a conversation: the offline planner may have read it through the turns before it
    read = verified.read(settings, alone)
    if read.frame is not None and not read.followup and verified.meaning(read.frame) == verified.meaning(frame) \
            and read.frame.get("display") == frame.get("display"):
        return [alone]
    return chain


def query_string(questions: Sequence[str], planner: str | None = None, period: Sequence[str] = ()) -> str:
    """``?q=...&q=...[&planner=...][&period=...]``; ``period``: the answer's periods (:attr:`Answer.vintages`), so
    the link reproduces them after a newer release is loaded (:func:`read_link`)."""
    params = [("q", q) for q in questions]
    if planner:
        params.append(("planner", planner))
    if period and len(period) <= 2:
        params.append(("period", ",".join(sorted(period))))
    return "?" + urlencode(params)


def _with_period(question: str, period: tuple[str, ...], settings: Settings) -> str:
    """The question as it reproduces its link's ``period``: unchanged while that is still the latest period (or
    the question names it); else "... in 2019-2023?" ("... between 2014-2018 and 2019-2023?" for a change)."""
    if all(p in question for p in period):
        return question
    try:
        latest = db.run(settings, db.OWNER, periods.latest_period)
    except SageError:
        return question
    if period[-1] == latest:
        return question
    said = f"in {period[0]}" if len(period) == 1 else f"between {period[0]} and {period[1]}"
    text = question.rstrip()
    return f"{text[:-1].rstrip()} {said}?" if text.endswith("?") else f"{text} {said}"


def link_planner(settings: Settings, planner: str) -> str | None:
    """The ``planner`` parameter a link needs: the answer's planner when it is not the one the app uses anyway."""
    if planner in ("claude", "offline") and planner != settings.effective_planner:
        return planner
    return None


@dataclass(frozen=True)
class LinkRequest:
    """What a link asks for: its questions (validated) and planner, or why it cannot be asked."""

    questions: list[str] = field(default_factory=list)
    planner: str | None = None
    error: SageError | None = None


def read_link(params: Mapping[str, Sequence[str]], settings: Settings) -> LinkRequest | None:
    """The request in a link's query parameters (each name with its values), None when there is none."""
    if "q" not in params:
        return None
    raw = [q for q in params.get("q", [])]
    if not raw or all(not (q or "").strip() for q in raw):
        return LinkRequest(error=QuestionError(
            "This link has no question in it (?q= is empty). Type a question below, or ask whoever sent the link "
            "for the whole address.", kind=ErrorKind.QUESTION_EMPTY))
    if len(raw) > MAX_THREAD:
        return LinkRequest(error=QuestionError(
            f"This link holds {len(raw)} questions; a link replays a conversation of at most {MAX_THREAD}.",
            kind=ErrorKind.QUESTION_TOO_LONG))
    planners = list(params.get("planner") or [])
    planner = planners[-1] if planners else None
    if planner is not None and planner not in PLANNERS:
        return LinkRequest(error=QuestionError(
            f"This link names the planner {planner[:40]!r}; the planners are auto, claude and offline.",
            kind=ErrorKind.SETTINGS))
    said = [p for v in params.get("period") or [] for p in str(v).split(",") if p.strip()]
    period = tuple(sorted(p.strip() for p in said))
    if said and (len(period) > 2 or not all(_PERIOD.match(p) for p in period)):
        return LinkRequest(error=QuestionError(
            f"This link names the period {','.join(said)[:40]!r}; a period looks like 2019-2023 (two for a change).",
            kind=ErrorKind.SETTINGS))
    questions = []
    for n, q in enumerate(raw, 1):
        try:
            text = validate_question(q, settings)
            questions.append(validate_question(_with_period(text, period, settings), settings)
                             if period and n == len(raw) else text)
        except QuestionError as exc:
            return LinkRequest(error=QuestionError(f"This link's question cannot be asked: {exc.message}",
                                                   kind=exc.kind))
    return LinkRequest(questions, planner)


__all__ = ["PLANNERS", "LinkRequest", "link_planner", "query_string", "questions_for", "read_link"]
