"""The question loop: retrieve -> plan -> guard -> execute, with error-fed retries.

Every try goes through every layer again: a plan from a retry is guarded and executed exactly like the first one.
A guard refusal on policy (a forbidden table, function or statement) is not negotiable and ends the loop; parse
errors, undefined columns and time-outs go back to the planner with a short error, at most
``settings.max_attempts`` tries in all.  An empty SQL from a planner means "cannot answer" and its assumptions say
why.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from . import guard, execute
from .errors import DatabaseError, ExecutionError, GuardError, NotSetUpError, PlanningError, QuestionError, SageError
from .execute import Result
from .planner.base import Attempt, Plan, Planner, PriorTurn
from .retrieve import Chunk
from .settings import Settings

log = logging.getLogger(__name__)

#: ``progress(stage, info)``; stages: retrieving, planning, checking, running, done
Progress = Callable[[str, dict], None]

_CODE = re.compile(r"\b([BC]\d{5}[A-Z]{0,2}_\d{3}E)\b")
#: the first lines of an error that go back to the planner (no rows, no internals)
_MAX_ERROR_CHARS = 300


@dataclass
class Answer:
    """Everything a user sees for one question (or one edited SQL): the answer card's contents."""

    question: str
    planner: str
    sql: str = ""
    assumptions: list[str] = field(default_factory=list)
    display_hint: str = "table"
    result: Result | None = None
    attempts: list[Attempt] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    error: SageError | None = None
    suggestions: list[str] = field(default_factory=list)
    usage: dict = field(default_factory=dict)
    model: str | None = None
    chunks: list[Chunk] = field(default_factory=list)
    variables: list[dict] = field(default_factory=list)
    id: int | None = None
    #: for a ``needs_fetch`` decline: ``{"tables", "vintage", "geographies"}``
    fetch: dict | None = None
    #: the question read on its own (a follow-up's "Read as"), and the offline planner's frame of it
    standalone: str = ""
    frame: dict | None = None

    def as_prior(self) -> PriorTurn:
        """This answer as an earlier turn of a conversation (question, reading, SQL, assumptions; no rows)."""
        return PriorTurn(self.question, self.standalone, self.sql if self.answered else "", tuple(self.assumptions),
                         self.frame if self.answered else None)

    @property
    def answered(self) -> bool:
        return self.result is not None and self.error is None

    @property
    def declined(self) -> bool:
        """No SQL because the question cannot be answered as asked (a decline, a table to load, a name to pick)."""
        return self.error is not None and self.error.kind in ("declined", "needs_fetch", "ambiguous")

    @property
    def tries(self) -> int:
        return len(self.attempts) + (1 if self.answered else 0)

    @property
    def vintages(self) -> list[str]:
        return sorted({v["vintage"] for v in self.variables if v.get("vintage")}, reverse=True)

    def to_dict(self) -> dict[str, Any]:
        """The CLI contract of `ask` (DESIGN.md): an answer, or ``error`` when there is none."""
        base: dict[str, Any] = {"question": self.question, "planner": self.planner}
        if not self.answered:
            error: dict[str, Any] = dict((self.error or SageError("No answer.")).to_dict())
            if self.fetch:
                error["fetch"] = self.fetch
            base.update(
                error=error,
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
        )
        return base


def validate_question(question: Any, settings: Settings) -> str:
    """The question, stripped; :class:`QuestionError` when it cannot be asked."""
    if not isinstance(question, str):
        raise QuestionError("The question must be text.", kind="question_type")
    text = " ".join(question.split())
    if not text:
        raise QuestionError("Type a question first, for example: “Top 5 most populous states”.", kind="question_empty")
    if len(text) > settings.max_question_chars:
        raise QuestionError(
            f"The question is {len(text):,} characters long; the limit is {settings.max_question_chars:,} "
            "(SAGE_MAX_QUESTION_CHARS). Ask one thing at a time.",
            kind="question_too_long",
        )
    if not re.search(r"[A-Za-z]{2,}", text):
        raise QuestionError("That does not look like a question. Ask in words, e.g. “population of Ohio”.",
                            kind="question_absurd")
    return text


_planners: dict[tuple, Planner] = {}


def make_planner(settings: Settings, name: str | None = None) -> Planner:
    """The planner for ``name`` (auto | claude | offline; default: the setting), cached per settings."""
    name = (name or settings.planner).lower()
    if name == "auto":
        name = settings.effective_planner
    key = (name, settings)
    if key not in _planners:
        if name == "claude":
            from .census.semantic import load_measures, match_measures
            from .planner.claude import ClaudePlanner

            def measures_for(question: str, settings: Settings = settings):
                # the measures over tables this database holds, fetched ones included (cached by semantic)
                return match_measures(question, load_measures(settings))

            _planners[key] = ClaudePlanner(settings, measures_fn=measures_for)
        elif name == "offline":
            from .planner.offline import OfflinePlanner

            _planners[key] = OfflinePlanner(settings)
        else:
            raise QuestionError(f"Unknown planner {name!r}: use auto, claude or offline.", kind="settings")
    return _planners[key]


def _short(exc: SageError) -> str:
    text = exc.detail or exc.message
    return text.strip().splitlines()[0][:_MAX_ERROR_CHARS] if text.strip() else exc.kind


def ask(
    question: Any,
    settings: Settings,
    *,
    planner: Planner | str | None = None,
    progress: Progress | None = None,
    record: bool = True,
    context: Sequence[PriorTurn] = (),
) -> Answer:
    """Answer one question.  Never raises a :class:`SageError`: it ends up in ``Answer.error``."""
    progress = progress or (lambda *a: None)
    started = time.perf_counter()
    timings = {"retrieve": 0.0, "plan": 0.0, "guard": 0.0, "execute": 0.0}
    answer = Answer(question=question if isinstance(question, str) else repr(question), planner="", timings_ms=timings)
    try:
        text = validate_question(question, settings)
        answer.question = text
        if not isinstance(planner, Planner):
            planner = make_planner(settings, planner)
        answer.planner = planner.name
        answer.model = settings.model if planner.name == "claude" else None

        from .retrieve import retrieve

        progress("retrieving", {})
        t = time.perf_counter()
        answer.chunks = _context(retrieve(settings, text, top_k=_RETRIEVE_POOL))
        timings["retrieve"] = _ms(t)
        _loop(answer, planner, settings, progress, timings, context)
    except SageError as exc:
        answer.error = exc
    timings["total"] = _ms(started)
    progress("done", {"answer": answer})
    if record:
        _record(settings, answer)
    return answer


#: how many chunks to rank; the schema is small (tens of table and column chunks) and always goes in whole
_RETRIEVE_POOL = 200
#: how many variables go to the planner
_TOP_VARIABLES = 10


def _context(chunks: list[Chunk]) -> list[Chunk]:
    """Every table and column chunk (a table without its columns misleads), then the best variables."""
    schema = [c for c in chunks if c.object_type != "variable"]
    variables = [c for c in chunks if c.object_type == "variable"][:_TOP_VARIABLES]
    return variables + schema


def _loop(answer: Answer, planner: Planner, settings: Settings, progress: Progress, timings: dict,
          context: Sequence[PriorTurn] = ()) -> None:
    for attempt_no in range(1, settings.max_attempts + 1):
        progress("planning", {"attempt": attempt_no})
        t = time.perf_counter()
        try:
            plan: Plan = planner.plan(answer.question, answer.chunks, list(answer.attempts), list(context))
        except PlanningError as exc:
            timings["plan"] += _ms(t)
            if exc.kind != "bad_answer":  # no key, bad key, rate limit, network: a retry would not help
                raise
            answer.attempts.append(Attempt("", _short(exc), exc.kind))
            answer.error = exc
            continue
        timings["plan"] += _ms(t)
        _take_plan(answer, plan)
        if plan.declined:
            reason = plan.assumptions[0] if plan.assumptions else "The data cannot answer this question."
            answer.error = SageError(reason, kind=plan.decline_kind)
            answer.fetch = plan.fetch
            return
        if any(a.sql.strip() == plan.sql.strip() for a in answer.attempts):
            log.info("planner repeated a failed SQL; counting it as a failed try")
        progress("checking", {"attempt": attempt_no})
        t = time.perf_counter()
        try:
            guarded = guard.check(plan.sql, max_rows=settings.max_rows)
        except GuardError as exc:
            timings["guard"] += _ms(t)
            answer.attempts.append(Attempt(plan.sql, _short(exc), "guard"))
            if exc.policy:
                answer.error = exc
                return
            continue
        timings["guard"] += _ms(t)
        answer.sql = guarded.sql
        progress("running", {"attempt": attempt_no, "sql": guarded.sql})
        t = time.perf_counter()
        try:
            answer.result = execute.run(guarded, settings)
        except ExecutionError as exc:
            timings["execute"] += _ms(t)
            answer.attempts.append(Attempt(plan.sql, _short(exc), exc.kind))
            answer.error = exc
            if exc.kind == "permission":  # the role refused: not something a rephrasing may get around
                return
            continue
        timings["execute"] += _ms(t)
        answer.error = None
        answer.variables = _variables(settings, guarded.sql)
        return
    last = answer.attempts[-1].error if answer.attempts else "no plan"
    answer.error = PlanningError(
        f"No working query after {settings.max_attempts} tries (SAGE_MAX_ATTEMPTS). Last error: {last}. "
        "Try rephrasing the question, or edit the SQL below and run it again.",
        kind="attempts_exhausted",
    )


def _take_plan(answer: Answer, plan: Plan) -> None:
    answer.standalone = plan.standalone
    answer.frame = plan.frame
    answer.sql = plan.sql
    answer.assumptions = list(plan.assumptions)
    answer.display_hint = plan.display_hint
    answer.suggestions = list(plan.suggestions)
    for k, v in (plan.usage or {}).items():
        if isinstance(v, (int, float)):
            answer.usage[k] = answer.usage.get(k, 0) + v


def run_sql(sql: str, settings: Settings, *, question: str = "", record: bool = True) -> Answer:
    """Guard and run SQL a user edited: the same layers as a planned query, without planning."""
    started = time.perf_counter()
    timings = {"guard": 0.0, "execute": 0.0}
    answer = Answer(question=question or "(edited SQL)", planner="user", sql=sql or "", timings_ms=timings)
    try:
        t = time.perf_counter()
        guarded = guard.check(sql or "", max_rows=settings.max_rows)
        timings["guard"] = _ms(t)
        answer.sql = guarded.sql
        t = time.perf_counter()
        answer.result = execute.run(guarded, settings)
        timings["execute"] = _ms(t)
        answer.variables = _variables(settings, guarded.sql)
    except SageError as exc:
        answer.error = exc
    timings["total"] = _ms(started)
    if record:
        _record(settings, answer)
    return answer


def _variables(settings: Settings, sql: str) -> list[dict]:
    """The variables a query names, with their vintage (for the answer card's caption)."""
    codes = sorted(set(_CODE.findall(sql)))
    if not codes:
        return []
    from . import db

    try:
        with db.owner(settings) as conn:
            rows = conn.execute(
                "SELECT variable_code, label, vintage, table_id FROM public.variables WHERE variable_code = ANY(%s)",
                (codes,),
            ).fetchall()
    except SageError:
        return []
    return [{"code": r[0], "label": r[1], "vintage": r[2], "table_id": r[3]} for r in rows]


def _record(settings: Settings, answer: Answer) -> None:
    from . import questions

    if isinstance(answer.error, (NotSetUpError, DatabaseError)):
        return  # there is no log to write to; the error already says what to do
    try:
        answer.id = questions.record(settings, answer)
    except Exception as exc:  # the log must never cost the user an answer
        log.warning("could not record the question: %s", exc)


def _ms(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 2)
