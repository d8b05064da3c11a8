"""The verified-answer library (``sage.verified_answers``): answers a user marked right, served again for the same
question.

A curator marks an answer right (a thumbs up on its card, or accepting a visitor's proposal on the History page's
"To review" list, :mod:`sage.review`), or the operator with ``python -m sage verify ID``; a visitor's thumbs up only
proposes (:mod:`sage.feedback`).  Adding and removing check the caller's role (:mod:`sage.roles`).  The library keeps
the question, its standalone reading, the SQL, the display hint, the assumptions, the offline planner's frame and an
embedding of the standalone reading.  A new question is answered from the library — its verified SQL run again
through the guard and the read-only executor, every layer, and marked ``verified`` — when both hold:

* **close in meaning**: the cosine similarity between the new question (for a follow-up, its standalone reading) and
  a verified reading is at least :data:`THRESHOLD` (measured on paraphrases: ``benchmarks/bench_verified.py``);
* **the same question**: the offline planner's frames of the two agree on the measures, the places or the set of
  places, and the rest of what is asked (the operation, N and direction, conditions, periods; :func:`meaning`).
  A verified answer keeps a frame only when the frame stands for its SQL (the offline planner answered it, or the
  offline planner's query for the same question returns the same result, :func:`add`); one without a frame is
  served only for the same question, compared as normalised text — similarity alone cannot tell Travis from
  Williamson County.

A verified answer whose SQL the guard now refuses, or that no longer runs (a table or variable gone), is skipped,
flagged (``invalid_reason``, ``invalidated_at``) and never served again until it is verified anew; a timeout or a
database that is down is not the SQL's fault and only skips it.  The Claude planner gets the closest verified
answers as examples in its request (:func:`examples`).

The library lives in the internal ``sage`` schema: the reader role cannot read it, and planned SQL cannot reach it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg

from . import db, execute, guard, querylog
from .answer import Outcome
from .compare import compare_results, gold_is_ordered
from .embeddings import get_provider, provider_name
from .errors import ErrorKind, ExecutionError, GuardError, QuestionError, SageError
from .execute import Result
from .planner.base import PriorTurn
from .retrieve import retrieve
from .roles import Action, Role, require
from .settings import Settings
from .text import normalize
from .types import READ_AS, Chunk

log = logging.getLogger(__name__)

#: the least cosine similarity between a new question and a verified reading for the verified answer to be
#: considered (the frames must then agree as well).  Measured with the bundled MiniLM by
#: ``benchmarks/bench_verified.py`` on the 590 answerable questions of the question sets: of the 310 ordered pairs
#: whose gold queries return the same result (paraphrases), 98.1 % reach 0.55 (the 5th percentile is 0.59) and
#: 75.5 % are served (for the rest the offline planner's readings differ); a lower threshold serves no more of them.
#: Of the 347,200 pairs of different questions, 16,910 reach 0.55 and none is served (none at any threshold): the
#: frame check, not the similarity, keeps a wrong answer out; the threshold keeps the frame check to close
#: candidates.  At 0.60 the share served falls to 73.2 %, at 0.70 to 70.0 %.
THRESHOLD = 0.55
#: how many verified answers at most go to the Claude planner as examples, and the least similarity they need
MAX_EXAMPLES = 3
EXAMPLE_FLOOR = 0.45
#: candidates read from the library per question (the best that pass the frame check is served)
_CANDIDATES = 5

_COLUMNS = ("id", "question_id", "question", "standalone", "sql", "display_hint", "assumptions", "frame", "planner",
            "created_at", "invalid_reason", "invalidated_at")


@dataclass(frozen=True)
class VerifiedAnswer:
    """One entry of the library (and, from a search, how close it is to the question asked)."""

    id: int
    question_id: int | None
    question: str
    standalone: str
    sql: str
    display_hint: str
    assumptions: list[str]
    frame: dict[str, Any] | None
    planner: str
    created_at: datetime
    invalid_reason: str | None = None
    invalidated_at: datetime | None = None
    similarity: float | None = None
    #: how many logged answers it served (``sage.questions.verified_id``; :func:`listing` counts them)
    served: int = 0

    @property
    def valid(self) -> bool:
        return self.invalidated_at is None

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in (*_COLUMNS, "similarity", "served")}


@dataclass(frozen=True)
class Reading:
    """How the offline planner reads a new question (in its conversation): its frame and standalone reading."""

    frame: dict[str, Any] | None
    standalone: str
    followup: bool
    assumptions: list[str] = field(default_factory=list)
    #: the offline planner's SQL for it ("" when it declined)
    sql: str = ""


def _entry(row: Sequence[Any], similarity: float | None = None, served: int = 0) -> VerifiedAnswer:
    values = dict(zip(_COLUMNS, row, strict=True))
    for name in ("assumptions", "frame"):
        if isinstance(values[name], str):
            values[name] = json.loads(values[name])
    values["assumptions"] = [str(a) for a in values["assumptions"] or []]
    return VerifiedAnswer(**values, similarity=similarity, served=served)


def _vector(values: Sequence[float]) -> str:
    """A pgvector literal (the column is untyped ``vector``: no adapter registration needed)."""
    return "[" + ",".join(f"{v:.7g}" for v in values) + "]"


# ---------------------------------------------------------------------------------------------------------------
# adding and removing


class NotFoundError(QuestionError):
    """No logged answer has that id."""

    kind = ErrorKind.NOT_FOUND


def add(settings: Settings, question_id: int, *, role: Role) -> VerifiedAnswer:
    """Put logged answer ``question_id`` in the library (again: a flagged entry is cleared); returns the entry.
    Only a curator or the operator may (:class:`~sage.errors.NotAllowedError` for a visitor).

    Its SQL is run again first (guard and executor).  The frame kept is the offline planner's own when it answered;
    otherwise the offline planner's reading of the question, kept only when the offline planner's query for it
    returns the same result (:func:`sage.compare.compare_results`) — a frame that does not stand for the verified
    SQL ("the correlation of income and poverty" read as both measures listed) would serve it for the wrong
    questions.  Without a frame, only the same question (as text) is served.

    Raises :class:`NotFoundError` when there is no such logged answer and :class:`QuestionError` when it cannot be
    verified (it has no result, or its SQL does not pass the guard or does not run now).
    """
    require(role, Action.VERIFY)
    entry = querylog.get(settings, question_id)
    if entry is None:
        raise NotFoundError(f"There is no logged answer {question_id}: use the \"id\" of an `ask --json` answer "
                            "(or the number shown on the History page).")
    if entry.outcome is not Outcome.ANSWERED or not entry.sql:
        raise QuestionError(f"Answer {question_id} has no result ({entry.outcome}), so there is nothing to verify: "
                            "only an answered question can be marked right.")
    if entry.display_hint == "profile":  # several statements, made by sage.profile the same way every time
        raise QuestionError(f"Answer {question_id} is a place's profile: it is built the same way for every place "
                            "name, so there is nothing to verify (each of its measures' questions can be).")
    try:
        result = execute.run(guard.check(entry.sql, max_rows=settings.max_rows), settings)
    except GuardError as exc:
        raise QuestionError(f"Answer {question_id} cannot be verified: the SQL guard refuses its SQL now "
                            f"({exc.message}).") from None
    except ExecutionError as exc:
        raise QuestionError(f"Answer {question_id} cannot be verified: its SQL does not run now ({exc.message}).",
                            kind=ErrorKind.QUESTION) from None
    standalone = (entry.standalone or entry.question).strip()
    frame = _frame_of(settings, entry, result)
    assumptions = [a for a in entry.assumptions if not a.startswith(READ_AS)]
    provider = get_provider(settings)
    vector = provider.embed([standalone])[0]
    querylog.ensure_tables(settings)
    with db.owner(settings) as conn:
        row = conn.execute(
            f"""INSERT INTO sage.verified_answers (question_id, question, standalone, sql, display_hint, assumptions,
                                                 frame, planner, model, embedding)
                VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s::vector)
                ON CONFLICT (question_id) DO UPDATE SET question = EXCLUDED.question,
                    standalone = EXCLUDED.standalone, sql = EXCLUDED.sql, display_hint = EXCLUDED.display_hint,
                    assumptions = EXCLUDED.assumptions, frame = EXCLUDED.frame, planner = EXCLUDED.planner,
                    model = EXCLUDED.model, embedding = EXCLUDED.embedding, created_at = now(),
                    invalid_reason = NULL, invalidated_at = NULL
                RETURNING {', '.join(_COLUMNS)}""",
            (question_id, entry.question, standalone, entry.sql, entry.display_hint or "table",
             json.dumps(assumptions), json.dumps(frame) if frame is not None else None, entry.planner,
             provider.name, _vector(vector)),
        ).fetchone()
    assert row is not None  # INSERT ... RETURNING returns the row
    return _entry(row)


def _frame_of(settings: Settings, entry: querylog.LogEntry, result: Result) -> dict[str, Any] | None:
    """The frame that stands for a verified answer (see :func:`add`), or None."""
    if entry.frame is not None and entry.planner == "offline":
        return entry.frame  # its SQL was compiled from this frame
    text = entry.standalone if entry.followup and entry.standalone else entry.question
    try:
        chunks = retrieve(settings, text, top_k=10, object_types=("variable",))
    except SageError:
        chunks = []
    reading = read(settings, text, chunks)
    if reading.frame is None or not reading.sql:
        return None
    try:
        theirs = execute.run(guard.check(reading.sql, max_rows=settings.max_rows), settings)
    except SageError:
        return None
    same, why = compare_results(result.columns, result.rows, theirs.columns, theirs.rows,
                                 gold_is_ordered(entry.sql or ""))
    if not same:
        log.info("answer %s is verified without a frame: the offline reading answers differently (%s)", entry.id, why)
    return reading.frame if same else None


def remove(settings: Settings, question_id: int, *, role: Role) -> bool:
    """Take logged answer ``question_id`` out of the library; False when it was not in it.  Only a curator or the
    operator may (a visitor's thumbs down flags an entry instead: :func:`invalidate`)."""
    require(role, Action.REMOVE_VERIFIED)
    querylog.ensure_tables(settings)
    with db.owner(settings) as conn:
        cur = conn.execute("DELETE FROM sage.verified_answers WHERE question_id = %s", (question_id,))
        return cur.rowcount > 0


def of_question(settings: Settings, question_id: int) -> VerifiedAnswer | None:
    """The library entry made from logged answer ``question_id``, if there is one."""
    querylog.ensure_tables(settings)
    with db.owner(settings) as conn:
        row = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM sage.verified_answers WHERE question_id = %s",
                           (question_id,)).fetchone()
    return _entry(row) if row else None


def listing(settings: Settings, *, invalid_only: bool = False, limit: int = 200) -> list[VerifiedAnswer]:
    """The library, newest first (only the flagged entries with ``invalid_only``), each with how many logged
    answers it served."""
    querylog.ensure_tables(settings)
    where = " WHERE v.invalidated_at IS NOT NULL" if invalid_only else ""
    columns = ", ".join(f"v.{c}" for c in _COLUMNS)
    with db.owner(settings) as conn:
        rows = conn.execute(
            f"""SELECT {columns}, (SELECT count(*) FROM sage.questions q WHERE q.verified_id = v.id)
                FROM sage.verified_answers v{where} ORDER BY v.created_at DESC, v.id DESC LIMIT %s""",
            (limit,)).fetchall()
    return [_entry(r[:-1], served=int(r[-1])) for r in rows]


def invalidate(settings: Settings, verified_id: int, reason: str) -> None:
    """Flag an entry whose SQL no longer passes the guard or no longer runs: it is never served again."""
    with db.owner(settings) as conn:
        conn.execute("UPDATE sage.verified_answers SET invalid_reason = %s, invalidated_at = now() WHERE id = %s",
                     (reason[:500], verified_id))


# ---------------------------------------------------------------------------------------------------------------
# finding


def closest(settings: Settings, text: str, *, limit: int = _CANDIDATES, floor: float = 0.0,
            conn: psycopg.Connection | None = None, known_not_empty: bool = False) -> list[VerifiedAnswer]:
    """The valid entries embedded with this database's model, most similar to ``text`` first, at least ``floor``."""
    querylog.ensure_tables(settings)
    if conn is None:
        with db.owner(settings) as own:
            return closest(settings, text, limit=limit, floor=floor, conn=own, known_not_empty=known_not_empty)
    if not known_not_empty and not _any_valid(conn, provider_name(settings)):
        return []  # no embedding needed (nor the model loaded)
    provider = get_provider(settings)
    vector = _vector(provider.embed([text])[0])
    rows = conn.execute(
        f"""SELECT {', '.join(_COLUMNS)}, 1 - (embedding <=> %(v)s::vector) AS similarity
            FROM sage.verified_answers
            WHERE invalidated_at IS NULL AND model = %(model)s
            ORDER BY embedding <=> %(v)s::vector, id LIMIT %(n)s""",
        {"v": vector, "model": provider.name, "n": limit},
    ).fetchall()
    out = [_entry(r[:-1], round(float(r[-1]), 4)) for r in rows]
    return [v for v in out if (v.similarity or 0.0) >= floor]


def _any_valid(conn: psycopg.Connection, model: str) -> bool:
    row = conn.execute("SELECT EXISTS (SELECT 1 FROM sage.verified_answers WHERE invalidated_at IS NULL "
                       "AND model = %s)", (model,)).fetchone()
    return bool(row and row[0])


def examples(settings: Settings, question: str) -> list[VerifiedAnswer]:
    """The verified answers closest to ``question`` (at most :data:`MAX_EXAMPLES`, similarity at least
    :data:`EXAMPLE_FLOOR`): the Claude planner's examples."""
    return closest(settings, question, limit=MAX_EXAMPLES, floor=EXAMPLE_FLOOR)


def read(settings: Settings, question: str, chunks: Sequence[Chunk] | None = None,
         context: Sequence[PriorTurn] = ()) -> Reading:
    """The offline planner's reading of ``question`` in its conversation (no frame when it cannot read it)."""
    from .planner.offline.planner import OfflinePlanner

    try:
        plan = OfflinePlanner(settings).plan(question, chunks or (), (), context)
    except SageError as exc:
        log.info("the offline planner could not read %r: %s", question, exc)
        return Reading(None, question, False)
    followup = bool(plan.assumptions) and plan.assumptions[0].startswith(READ_AS)
    return Reading(plan.frame if not plan.declined else None, plan.standalone or question, followup,
                   list(plan.assumptions), plan.sql)


def matches(settings: Settings, question: str, chunks: Sequence[Chunk] = (),
            context: Sequence[PriorTurn] = ()) -> tuple[list[VerifiedAnswer], Reading | None]:
    """The verified answers that answer ``question`` (best first), and the offline planner's reading of it (None
    when the library is empty and nothing was read)."""
    querylog.ensure_tables(settings)
    with db.owner(settings) as conn:
        if not _any_valid(conn, provider_name(settings)):
            return [], None
        reading = read(settings, question, chunks, context)
        text = reading.standalone if reading.followup else question
        found = [v for v in closest(settings, text, conn=conn, known_not_empty=True)
                 if (v.similarity or 0.0) >= THRESHOLD]
    return [v for v in found if same_question(reading, question, v)], reading


def same_question(reading: Reading, question: str, verified: VerifiedAnswer) -> bool:
    """Whether ``verified`` answers the question read as ``reading`` (see the module docstring)."""
    if verified.frame is None:  # nothing but its words stand for it: only the same question
        asked = {_text(question), _text(reading.standalone)}
        return bool(asked & {_text(verified.question), _text(verified.standalone)})
    if reading.frame is None:
        return False
    if reading.frame.get("display") and verified.frame.get("display") and \
            reading.frame["display"] != verified.frame["display"]:
        return False
    return meaning(reading.frame) == meaning(verified.frame)


def _text(text: str) -> str:
    return " ".join(normalize(text or "", lower=True).replace("?", " ").replace(".", " ").replace(",", " ").split())


def meaning(frame: dict[str, Any]) -> dict[str, Any]:
    """What a frame asks, without how it was said: the operation, the measures, the places (by id) or the set of
    places, N and direction, conditions, periods and the like; not the notes, the words matched or the display."""

    def geo(g: dict[str, Any]) -> dict[str, Any]:
        return {"level": g.get("level"), "places": sorted(p.get("geo_id", "") for p in g.get("places") or []),
                "within": sorted(g.get("within") or []), "exclude": sorted(g.get("exclude") or []),
                "independent_cities": bool(g.get("independent_cities")),
                "among": meaning(g["among"]) if g.get("among") else None}

    def condition(c: dict[str, Any]) -> str:
        return json.dumps({k: c.get(k) for k in ("measure", "op", "value", "value2", "ref", "other", "unit")},
                          sort_keys=True)

    rank = frame.get("rank")
    return {
        "op": frame.get("op"),
        "measures": sorted(frame.get("measures") or []),
        "geo": geo(frame.get("geo") or {}),
        "rank": None if not rank else {k: rank.get(k) for k in ("by", "descending", "n", "per_parent")},
        "conditions": sorted(condition(c) for c in frame.get("conditions") or []),
        "sums": sorted(frame.get("sums") or []),
        "periods": list(frame.get("periods") or []),
        "per_n": frame.get("per_n"),
        "with_us": bool(frame.get("with_us")),
        "combined": bool(frame.get("combined")),
    }


__all__ = ["EXAMPLE_FLOOR", "MAX_EXAMPLES", "THRESHOLD", "NotFoundError", "Reading", "VerifiedAnswer", "add",
           "closest", "examples", "invalidate", "listing", "matches", "meaning", "of_question", "read", "remove",
           "same_question"]
