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
import threading
import time
from collections.abc import Sequence
from typing import Any

from . import db, execute, guard, limits, profile, querylog, significance, verified
from .answer import Answer
from .catalog_index import loaded_table_ids
from .census import periods
from .census.catalog_search import CATALOG_YEAR
from .census.codes import ACS_VARIABLE
from .errors import (
    DatabaseError,
    ErrorKind,
    ExecutionError,
    GuardError,
    NotSetUpError,
    PlanningError,
    QuestionError,
    SageError,
)
from .planner.base import Attempt, Plan, Planner, PriorTurn
from .retrieve import retrieve_parts
from .settings import Settings
from .types import DISPLAY_HINTS, READ_AS, Chunk, StageProgress

log = logging.getLogger(__name__)

#: the first lines of an error that go back to the planner (no rows, no internals)
_MAX_ERROR_CHARS = 300


def validate_question(question: Any, settings: Settings) -> str:
    """The question, stripped; :class:`QuestionError` when it cannot be asked."""
    if not isinstance(question, str):
        raise QuestionError("The question must be text.", kind=ErrorKind.QUESTION_TYPE)
    text = " ".join(question.split())
    if not text:
        raise QuestionError("Type a question first, for example: “Top 5 most populous states”.",
                            kind=ErrorKind.QUESTION_EMPTY)
    if len(text) > settings.max_question_chars:
        raise QuestionError(
            f"The question is {len(text):,} characters long; the limit is {settings.max_question_chars:,} "
            "(SAGE_MAX_QUESTION_CHARS). Ask one thing at a time.",
            kind=ErrorKind.QUESTION_TOO_LONG,
        )
    if not re.search(r"[A-Za-z]{2,}", text):
        raise QuestionError("That does not look like a question. Ask in words, e.g. “population of Ohio”.",
                            kind=ErrorKind.QUESTION_ABSURD)
    return text


_planners: dict[tuple, Planner] = {}
#: one planner per settings even when several sessions ask their first question at once
_planners_lock = threading.Lock()


def make_planner(settings: Settings, name: str | None = None) -> Planner:
    """The planner for ``name`` (auto | claude | offline; default: the setting), cached per settings.

    A planner is shared by every session of the process: its ``plan`` keeps nothing of one question for the next
    (what it caches is read-only data: the catalog, the measures, the prompt).
    """
    name = (name or settings.planner).lower()
    if name == "auto":
        name = settings.effective_planner
    key = (name, settings)
    with _planners_lock:
        return _planners.get(key) or _new_planner(key, name, settings)


def _new_planner(key: tuple, name: str, settings: Settings) -> Planner:
    planner: Planner
    if name == "claude":
        from .census.mentions import match_measures
        from .census.semantic import load_measures
        from .planner.claude.claude import ClaudePlanner
        from .planner.claude.resolve import ground
        from .planner.offline.catalog import load_catalog

        def measures_for(question: str, settings: Settings = settings):
            # the measures over tables this database holds, fetched ones included (cached by semantic)
            return match_measures(question, load_measures(settings))

        def verified_for(question: str, settings: Settings = settings):
            return verified.examples(settings, question)

        def grounding_for(question: str, settings: Settings = settings):
            # the question's places as the offline planner reads them (its catalog is cached per database)
            return ground(question, load_catalog(settings))

        planner = ClaudePlanner(settings, measures_fn=measures_for, examples_fn=verified_for,
                                grounding_fn=grounding_for)
    elif name == "offline":
        from .planner.offline.planner import OfflinePlanner

        planner = OfflinePlanner(settings)
    else:
        raise QuestionError(f"Unknown planner {name!r}: use auto, claude or offline.", kind=ErrorKind.SETTINGS)
    _planners[key] = planner
    return planner


def _short(exc: SageError) -> str:
    text = exc.detail or exc.message
    return text.strip().splitlines()[0][:_MAX_ERROR_CHARS] if text.strip() else exc.kind


def ask(
    question: Any,
    settings: Settings,
    *,
    planner: Planner | str | None = None,
    progress: StageProgress | None = None,
    record: bool = True,
    context: Sequence[PriorTurn] = (),
    parent_id: int | None = None,
    use_verified: bool = True,
    session_id: str | None = None,
    narrate: bool = True,
) -> Answer:
    """Answer one question.  Never raises a :class:`SageError`: it ends up in ``Answer.error``.

    ``context`` holds the earlier turns of the conversation, oldest first (the planner decides whether the
    question follows them; only the last :data:`~sage.querylog.MAX_THREAD` are passed on); ``parent_id`` is the
    logged answer it follows, kept in the query log so the conversation can be picked up again.  A question the
    verified-answer library answers (:mod:`sage.verified`) is answered from it, through the guard and the executor,
    without planning; ``use_verified=False`` always plans (``eval`` measures the planners).  ``narrate=False`` leaves
    out the words around the rows (headline, context, a profile's reading: :mod:`sage.narrate`), for a caller that
    reads only the rows (``eval`` scores rows; it then never imports pandas).  ``session_id`` is the
    browser session that asks (kept in the log).  Once Claude's daily token budget is spent
    (``SAGE_CLAUDE_DAILY_TOKENS``, :mod:`sage.limits`), the offline planner answers instead and the answer says so.
    """
    progress = progress or (lambda *a: None)
    started = time.perf_counter()
    timings = {"retrieve": 0.0, "plan": 0.0, "guard": 0.0, "execute": 0.0}
    answer = Answer(question=question if isinstance(question, str) else repr(question), planner="", timings_ms=timings,
                    parent_id=parent_id, session_id=session_id)
    context = list(context)[-querylog.MAX_THREAD:]
    try:
        text = validate_question(question, settings)
        answer.question = text
        if not isinstance(planner, Planner):
            planner = make_planner(settings, planner)
        if planner.name == "claude" and not limits.claude_allowed(settings):
            planner = make_planner(settings, "offline")
            answer.notices.append(limits.BUDGET_NOTICE)
        answer.planner = planner.name
        answer.model = settings.model if planner.name == "claude" else None

        progress("retrieving", {})
        answer.chunks = RetrievedContext(settings, text, timings)
        if planner.name != "offline":  # the Claude planner always shows the context: retrieve it now
            answer.chunks.load()
        if not (use_verified and _from_library(answer, settings, progress, timings, context, narrate)) and \
                not (not context and _profile(answer, settings, progress, timings, narrate)):
            _loop(answer, planner, settings, progress, timings, context, narrate)
    except SageError as exc:
        answer.error = exc
    if answer.usage:
        limits.spend(settings, answer.usage)
    timings["total"] = _ms(started)
    progress("done", {"answer": answer})
    if record:
        _record(settings, answer)
    return answer


#: how many chunks to rank; the schema is small (tens of table and column chunks) and always goes in whole
_RETRIEVE_POOL = 200
#: how many variables go to the planner
_TOP_VARIABLES = 10
#: what the data holds: the schema and the variables with estimates
_LOADED_TYPES = ("table", "column", "variable")
#: how many ACS tables that are not loaded go to the planner (after the rest), so it can name the one to fetch
_TOP_CATALOG = 5


def _context(chunks: list[Chunk]) -> list[Chunk]:
    """The best variables, then every table and column chunk (a table without its columns misleads)."""
    schema = [c for c in chunks if c.object_type != "variable"]
    variables = [c for c in chunks if c.object_type == "variable"][:_TOP_VARIABLES]
    return variables + schema


class RetrievedContext(Sequence[Chunk]):
    """A question's retrieved context (the best variables, the schema, the best ACS tables that are not loaded),
    retrieved the first time it is read.

    The offline planner reads it only for a question that names no measure it knows, and the verified-answer
    library only when it holds entries; retrieving means embedding the question, and the first embedding in a
    process loads the model (about a second).  So a command-line ``ask`` of "population of Ohio" never loads it.
    The time it takes is the ``retrieve`` timing; :attr:`ms` lets the stage that read it leave it out of its own.
    """

    def __init__(self, settings: Settings, question: str, timings: dict[str, float]) -> None:
        self._settings, self._question, self._timings = settings, question, timings
        self._chunks: list[Chunk] | None = None
        self.ms = 0.0

    def load(self) -> list[Chunk]:
        """The chunks, retrieved now if they were not yet."""
        if self._chunks is None:
            t = time.perf_counter()
            found, catalog = retrieve_parts(self._settings, self._question,
                                            [(_LOADED_TYPES, _RETRIEVE_POOL), (("acs_table",), _TOP_CATALOG)])
            self._chunks = _context(found) + catalog
            self.ms = _ms(t)
            self._timings["retrieve"] = self._timings.get("retrieve", 0.0) + self.ms
        return self._chunks

    def __len__(self) -> int:
        return len(self.load())

    def __getitem__(self, i):
        return self.load()[i]

    def __iter__(self):
        return iter(self.load())

    @property
    def retrieved(self) -> bool:
        return self._chunks is not None


def _retrieval_ms(chunks: Sequence[Chunk]) -> float:
    """How long reading ``chunks`` took to retrieve them so far (0 for a plain list)."""
    return chunks.ms if isinstance(chunks, RetrievedContext) else 0.0


def _loop(answer: Answer, planner: Planner, settings: Settings, progress: StageProgress, timings: dict,
          context: Sequence[PriorTurn] = (), narrate: bool = True) -> None:
    for attempt_no in range(1, settings.max_attempts + 1):
        progress("planning", {"attempt": attempt_no})
        t = time.perf_counter()
        retrieved = _retrieval_ms(answer.chunks)  # a retrieval the planner causes is the retrieve stage's time
        try:
            plan: Plan = planner.plan(answer.question, answer.chunks, list(answer.attempts), list(context))
        except PlanningError as exc:
            timings["plan"] += _ms(t) - (_retrieval_ms(answer.chunks) - retrieved)
            if exc.kind != ErrorKind.BAD_ANSWER:  # no key, bad key, rate limit, network: a retry would not help
                raise
            answer.attempts.append(Attempt("", _short(exc), exc.kind))
            answer.error = exc
            continue
        timings["plan"] += _ms(t) - (_retrieval_ms(answer.chunks) - retrieved)
        _take_plan(answer, plan)
        if plan.declined:
            answer.error = None
            # the reason is the first assumption after a follow-up's "Read as" line
            reasons = [a for a in plan.assumptions if not a.startswith(READ_AS)]
            answer.decline = reasons[0] if reasons else "The data cannot answer this question."
            answer.decline_kind = ErrorKind(plan.decline_kind)
            answer.fetch = _still_to_fetch(settings, plan.fetch) if plan.decline_kind == ErrorKind.NEEDS_FETCH \
                else plan.fetch
            if answer.decline_kind == ErrorKind.NEEDS_FETCH and not answer.fetch:
                answer.decline_kind, answer.fetch = ErrorKind.DECLINED, None
            return
        if any(a.sql.strip() == plan.sql.strip() for a in answer.attempts):
            log.info("planner repeated a failed SQL; counting it as a failed try")
        progress("checking", {"attempt": attempt_no})
        t = time.perf_counter()
        try:
            guarded = guard.check(plan.sql, max_rows=settings.max_rows)
        except GuardError as exc:
            timings["guard"] += _ms(t)
            answer.attempts.append(Attempt(plan.sql, _short(exc), ErrorKind.GUARD))
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
            if exc.kind == ErrorKind.PERMISSION:  # the role refused: not something a rephrasing may get around
                return
            continue
        timings["execute"] += _ms(t)
        answer.error = None
        answer.variables = _variables(settings, guarded.sql)
        _flag_label_changes(answer)
        _assess(answer, plan)
        if narrate:
            _describe(answer, settings, timings, plan.compare)
        return
    last = answer.attempts[-1].error if answer.attempts else "no plan"
    answer.error = PlanningError(
        f"No working query after {settings.max_attempts} tries (SAGE_MAX_ATTEMPTS). Last error: {last}. "
        "Try rephrasing the question, or edit the SQL below and run it again.",
        kind=ErrorKind.ATTEMPTS_EXHAUSTED,
    )


def _assess(answer: Answer, plan: Plan) -> None:
    """Which differences the answer shows are significant (computed here, from the rows, for either planner).

    A plan that does not say what it compares (Claude's) is tested when its rows are a change with its margin
    (``change``, ``change_moe`` and the measure in two periods): a change with a margin is always worth testing.
    """
    result = answer.result
    if result is None:
        return
    compare, periods = plan.compare, plan.periods
    if compare is None and significance.moe_column("change") in result.columns:
        found_periods = significance.change_periods(result.columns)
        if found_periods is not None:
            compare, periods = "change", found_periods
    if compare is None:
        return
    earlier, later = (periods + ("", ""))[:2] if len(periods) == 2 else ("", "")
    found = significance.assess(result.columns, result.rows, compare, later=later, earlier=earlier)
    answer.significance = list(found.items)
    answer.significance_note = found.note


def _describe(answer: Answer, settings: Settings, timings: dict, compare: str | None = None) -> None:
    """The headline, the context and a profile's reading (:mod:`sage.narrate`); their time is ``context``.
    Imported here: the headline reads the rows with pandas, which a caller of only the rows never needs."""
    from . import narrate

    t = time.perf_counter()
    try:
        narrate.describe(answer, settings, compare=compare)
    except Exception as exc:  # the words around an answer must never cost the user the answer itself
        log.warning("could not write the headline or the context: %s", exc)
    timings["context"] = _ms(t)


def _profile(answer: Answer, settings: Settings, progress: StageProgress, timings: dict,
             narrate: bool = True) -> bool:
    """A place name asked alone ("Travis County, Texas", "Ohio"): its profile, whichever the planner — read by the
    offline planner's parse (:mod:`sage.planner.offline.alone`), one statement per topic (:mod:`sage.profile`),
    each through the guard and the read-only executor.  False when the question is not a place alone."""
    from .planner.offline.alone import place_alone
    from .planner.offline.catalog import load_catalog

    t = time.perf_counter()
    cat = load_catalog(settings)
    place = place_alone(answer.question, cat, answer.chunks)
    plan = profile.plan_for(place, cat) if place is not None else None
    timings["plan"] += _ms(t)
    if plan is None:
        return False
    answer.planner, answer.model = plan.planner, None
    _take_plan(answer, plan)
    results, shown = [], []
    for sql in plan.statements:
        progress("checking", {"attempt": 1})
        t = time.perf_counter()
        try:
            guarded = guard.check(sql, max_rows=settings.max_rows)
        finally:
            timings["guard"] += _ms(t)
        shown.append(guarded.sql)
        answer.sql = ";\n\n".join(shown)
        progress("running", {"attempt": 1, "sql": guarded.sql})
        t = time.perf_counter()
        try:
            results.append(execute.run(guarded, settings))
        finally:
            timings["execute"] += _ms(t)
    answer.result = profile.combine(results, cat)
    answer.variables = _variables(settings, answer.sql)
    _flag_label_changes(answer)
    if narrate:
        _describe(answer, settings, timings)
    return True


def _from_library(answer: Answer, settings: Settings, progress: StageProgress, timings: dict,
                  context: Sequence[PriorTurn], narrate: bool = True) -> bool:
    """Answer from the verified-answer library when an entry answers this question: its SQL through the guard and
    the executor like any plan.  An entry the guard now refuses or that no longer runs is flagged and skipped (the
    answer says so); False when nothing was served and the planner must answer."""
    t = time.perf_counter()
    retrieved = _retrieval_ms(answer.chunks)
    try:
        found, reading = verified.matches(settings, answer.question, answer.chunks, context)
    except SageError as exc:  # the library is an aid: a failure there must not cost the answer
        log.warning("the verified-answer library could not be searched: %s", exc)
        found, reading = [], None
    timings["verified"] = _ms(t) - (_retrieval_ms(answer.chunks) - retrieved)
    for entry in found:
        progress("checking", {"attempt": 1, "verified": entry.id})
        stale = _unread_period(settings, entry)
        if stale:
            _skip(answer, settings, entry, f"its SQL reads the latest period, not {stale} as the question asks (a "
                  "newer release has been loaded since it was verified)", flag=False)
            continue
        t = time.perf_counter()
        try:
            guarded = guard.check(entry.sql, max_rows=settings.max_rows)
        except GuardError as exc:
            timings["guard"] += _ms(t)
            _skip(answer, settings, entry, f"the SQL guard refuses its SQL now: {exc.message}", flag=True)
            continue
        timings["guard"] += _ms(t)
        progress("running", {"attempt": 1, "sql": guarded.sql})
        t = time.perf_counter()
        try:
            result = execute.run(guarded, settings)
        except ExecutionError as exc:
            timings["execute"] += _ms(t)
            transient = exc.kind == ErrorKind.TIMEOUT
            _skip(answer, settings, entry, f"its SQL no longer runs: {exc.message}", flag=not transient)
            continue
        timings["execute"] += _ms(t)
        assert reading is not None  # matches() read the question whenever it found an entry
        answer.planner = "verified"
        answer.model = None
        answer.verified_id = entry.id
        answer.sql = guarded.sql
        answer.result = result
        answer.error = None
        answer.display_hint = entry.display_hint if entry.display_hint in DISPLAY_HINTS else "table"
        answer.standalone = reading.standalone if reading.frame is not None or reading.followup else entry.standalone
        answer.frame = reading.frame if reading.frame is not None else entry.frame
        first = [f"{READ_AS}{reading.standalone}."] if reading.followup else []
        answer.assumptions = first + [a for a in entry.assumptions if not a.startswith(READ_AS)]
        answer.notices.append(f"Verified answer: the SQL a curator marked right for “{entry.question}”, run again now "
                              "through the guard.")
        answer.variables = _variables(settings, guarded.sql)
        _flag_label_changes(answer)
        _note_older_period(answer, settings)
        if narrate:
            _describe(answer, settings, timings)
        return True
    return False


def _unread_period(settings: Settings, entry: verified.VerifiedAnswer) -> str | None:
    """The period a verified question names that its SQL no longer reads (:func:`periods.unread_period`)."""
    if periods.named_periods(entry.sql) or not periods.asked_periods(entry.question):
        return None  # nothing asked that the SQL could miss: no database round trip
    try:
        latest = db.run(settings, db.OWNER, periods.latest_period)
    except SageError:
        return None
    return periods.unread_period(entry.question, entry.sql, latest)


def _note_older_period(answer: Answer, settings: Settings) -> None:
    """A verified answer whose SQL names a period that a newer release has since replaced as the latest is served
    as verified (its SQL is what was checked) and says so: "Figures from 2019-2023 (a newer release, 2020-2024, is
    loaded)."  SQL that names no period reads ``public.estimates`` and is re-run on the latest period anyway."""
    if not periods.named_periods(answer.sql):
        return
    try:
        latest = db.run(settings, db.OWNER, periods.latest_period)
    except SageError:
        return
    note = periods.older_period_note(answer.sql, latest)
    if note and note not in answer.notices:
        answer.notices.append(note)


def _skip(answer: Answer, settings: Settings, entry: verified.VerifiedAnswer, why: str, *, flag: bool) -> None:
    """A verified answer that cannot be served: said on the answer, and flagged in the library when its SQL is at
    fault (a timeout is not)."""
    log.warning("verified answer %s skipped: %s", entry.id, why)
    if flag:
        try:
            verified.invalidate(settings, entry.id, why)
        except SageError as exc:
            log.warning("could not flag verified answer %s: %s", entry.id, exc)
    answer.notices.append(f"A verified answer to “{entry.question}” was skipped: {why}" +
                          (" It is flagged for review and will not be served again." if flag else ""))


def _still_to_fetch(settings: Settings, fetch: dict | None) -> dict | None:
    """A ``needs_fetch`` decline's tables less those that are loaded by now (a planner may be wrong, or another
    session may have loaded one meanwhile); None when none is left (the decline is then a plain one).

    The default fetch (states and counties, the catalog's period) counts a table loaded when it has estimates at
    all; a fetch of other levels or of another period ("B19013 for the places of Texas", "B23025 for 2016-2020")
    only when it has estimates in that period at every level asked (in the states asked)."""
    if not fetch or not fetch.get("tables"):
        return None
    levels = list(fetch.get("geographies") or FETCH_GEOGRAPHIES)
    year = int(fetch.get("vintage") or CATALOG_YEAR)
    try:
        if year == CATALOG_YEAR and set(levels) <= set(FETCH_GEOGRAPHIES):
            loaded = db.run(settings, db.OWNER, loaded_table_ids)
        else:
            loaded = db.run(settings, db.OWNER, lambda conn: _loaded_at(
                conn, fetch["tables"], levels, f"{year - 4}-{year}", list(fetch.get("states") or ())))
    except SageError:  # the database went away: the planner's word stands
        return fetch
    tables = [t for t in fetch["tables"] if t not in loaded]
    return {**fetch, "tables": tables} if tables else None


#: the levels of the default fetch (all states and counties)
FETCH_GEOGRAPHIES = ("state", "county")


def _loaded_at(conn: Any, tables: Sequence[str], levels: Sequence[str], period: str,
               states: Sequence[str]) -> set[str]:
    """The ``tables`` with estimates in ``period`` at every one of ``levels`` (in ``states``, when given, for the
    levels inside a state)."""
    rows = conn.execute(
        "SELECT v.table_id, g.level FROM public.variables v "
        "JOIN public.estimates_by_vintage b ON b.variable_code = v.variable_code AND b.vintage = %s "
        "JOIN public.geography g ON g.geo_id = b.geo_id "
        "WHERE v.table_id = ANY(%s) AND g.level = ANY(%s) "
        "AND (cardinality(%s::text[]) = 0 OR g.state_abbr IS NULL OR g.state_abbr = ANY(%s)) "
        "GROUP BY v.table_id, g.level", (period, list(tables), list(levels), list(states), list(states))).fetchall()
    found: dict[str, set[str]] = {}
    for table_id, level in rows:
        found.setdefault(table_id, set()).add(level)
    return {t for t, have in found.items() if set(levels) <= have}


def _take_plan(answer: Answer, plan: Plan) -> None:
    answer.standalone = plan.standalone
    answer.frame = plan.frame
    answer.unread = list(plan.unread)
    answer.edits = [e.to_dict() for e in plan.edits]
    answer.sql = plan.sql
    answer.assumptions = list(plan.assumptions)
    answer.display_hint = plan.display_hint
    answer.suggestions = list(plan.suggestions)
    for k, v in (plan.usage or {}).items():
        if isinstance(v, (int, float)):
            answer.usage[k] = answer.usage.get(k, 0) + v


def run_sql(sql: str, settings: Settings, *, question: str = "", record: bool = True,
            session_id: str | None = None) -> Answer:
    """Guard and run SQL a user edited: the same layers as a planned query, without planning."""
    started = time.perf_counter()
    timings = {"guard": 0.0, "execute": 0.0}
    answer = Answer(question=question or "(edited SQL)", planner="user", sql=sql or "", timings_ms=timings,
                    session_id=session_id)
    try:
        t = time.perf_counter()
        guarded = guard.check(sql or "", max_rows=settings.max_rows)
        timings["guard"] = _ms(t)
        answer.sql = guarded.sql
        t = time.perf_counter()
        answer.result = execute.run(guarded, settings)
        timings["execute"] = _ms(t)
        answer.variables = _variables(settings, guarded.sql)
        _flag_label_changes(answer)
        _describe(answer, settings, timings)
    except SageError as exc:
        answer.error = exc
    timings["total"] = _ms(started)
    if record:
        _record(settings, answer)
    return answer


def _variables(settings: Settings, sql: str) -> list[dict]:
    """The variables a query names, with their vintage (for the answer card's caption)."""
    codes = sorted(set(ACS_VARIABLE.findall(sql)))
    if not codes:
        return []
    try:
        rows = db.run(settings, db.OWNER, lambda conn: conn.execute(
            "SELECT variable_code, label, vintage, table_id, vintages, label_changed, earlier_label "
            "FROM public.variables WHERE variable_code = ANY(%s)",
            (codes,),
        ).fetchall())
    except SageError:
        return []
    return [{"code": r[0], "label": r[1], "vintage": r[2], "table_id": r[3], "vintages": list(r[4] or []),
             **({"earlier_label": r[6]} if r[5] else {})} for r in rows]


def _flag_label_changes(answer: Answer) -> None:
    """A variable whose label changed between the periods loaded is flagged in the answer (issue 14): its periods
    may not count the same thing, so a change or an earlier period read from it needs care."""
    for v in answer.variables:
        if "earlier_label" in v:
            note = (f"{v['code']}: the Census Bureau's label changed between periods (earlier: “{v['earlier_label']}”; "
                    f"{v['vintage']}: “{v['label']}”) — the periods may not count exactly the same thing.")
            if note not in answer.assumptions:
                answer.assumptions.append(note)


def _record(settings: Settings, answer: Answer) -> None:
    if isinstance(answer.error, (NotSetUpError, DatabaseError)):
        return  # there is no log to write to; the error already says what to do
    try:
        answer.id = querylog.record(settings, answer)
    except Exception as exc:  # the log must never cost the user an answer
        log.warning("could not record the question: %s", exc)


def _ms(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 2)
