"""Scoring against question sets with gold SQL: the rule every accuracy figure of the project uses, and the
retrieval figures (recall@k and top-1 of the gold query's variables).

A predicted result is right when it has the gold rows (same number, in the same order when the gold query orders
them) and every gold column's values appear in some predicted column.  Extra predicted columns are allowed
(a margin of error, a geo_id for the map), column names are not compared (``poverty_rate_pct`` vs ``pct_poor``),
and numbers match within 0.5% or ±0.05, so a rate rounded to one decimal equals the unrounded one.  The comparison
itself is :mod:`sage.compare` (re-exported here), which the verified-answer library uses too.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import agent, execute, guard
from .answer import Answer
from .census.codes import variable_codes
from .compare import ABS_TOL, REL_TOL, compare_results, gold_is_ordered, values_equal
from .embeddings import EmbeddingProvider
from .errors import DataError, ErrorKind, SageError
from .planner.base import PriorTurn
from .retrieve import retrieve
from .settings import Settings
from .timing import percentile
from .types import Chunk


def read_questions(path: Path) -> list[dict]:
    """The rows of a JSON Lines question file; :class:`DataError` naming the line when one is malformed."""
    rows = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataError(f"Cannot read the question file {path}: {exc.strerror or exc}.") from exc
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{Path(path).name}, line {i}: not JSON ({exc.msg}).") from exc
        if isinstance(row, dict) and isinstance(row.get("turns"), list) and row["turns"] and all(
                isinstance(x, dict) and isinstance(x.get("question"), str) and "gold_sql" in x for x in row["turns"]):
            row.setdefault("id", f"c{i}")
            rows.append(row)
            continue
        if not isinstance(row, dict) or not isinstance(row.get("question"), str) or "gold_sql" not in row:
            raise DataError(
                f"{Path(path).name}, line {i}: each line needs \"question\" and \"gold_sql\" (null = decline), "
                "or \"turns\": a list of such questions (a conversation)."
            )
        row.setdefault("id", f"q{i}")
        rows.append(row)
    return rows


def score(settings: Settings, row: dict, planner: str | None = None, context: Sequence[PriorTurn] = (),
          answers: list[Answer] | None = None) -> dict[str, Any]:
    """Ask one question-set row through the full guarded path and score it against its gold SQL.

    The item is one entry of the ``eval`` JSON's ``results`` (``id``, ``question``, ``sql``, ``columns``, ``rows``,
    ``gold_columns``, ``gold_rows``, ``correct``, ``error``, ``timings_ms``) plus ``outcome``: ``right``,
    ``wrong_answered`` (rows that are not the answer, or an answer where the data cannot answer) or
    ``wrong_declined`` (a decline or failure where there is an answer).  A wrong answer is worse than a decline,
    so the two are counted apart.  ``context`` makes the question a follow-up of earlier answers; the answer is
    appended to ``answers`` when given.
    """
    # the planner is what is scored: the verified-answer library is not consulted; the rows are scored, so the words
    # around them (headline, context) are not written
    answer = agent.ask(row["question"], settings, planner=planner, record=False, context=context, use_verified=False,
                       narrate=False)
    if answers is not None:
        answers.append(answer)
    gold_sql = row.get("gold_sql")
    item: dict[str, Any] = {
        "id": row["id"], "question": row["question"], "kind": row.get("kind"), "sql": answer.sql or None,
        "columns": answer.result.columns if answer.result else None,
        "rows": answer.result.rows if answer.result else None,
        "gold_columns": None, "gold_rows": None, "correct": False, "error": None,
        "timings_ms": dict(answer.timings_ms), "assumptions": answer.assumptions,
        "read_as": answer.standalone or None,
    }
    if gold_sql is None:
        item["correct"] = answer.declined
        item["error"] = None if answer.declined else "expected a decline: the data cannot answer this"
    else:
        try:
            gold = execute.run(guard.check(gold_sql, max_rows=settings.max_rows), settings)
            item["gold_columns"], item["gold_rows"] = gold.columns, gold.rows
        except SageError as exc:
            if exc.kind in (ErrorKind.NOT_SET_UP, ErrorKind.DATABASE_DOWN, ErrorKind.DATA_DIR):
                raise  # no question can be scored: say so, never report it as an accuracy of 0
            item["error"] = f"gold SQL failed: {exc.message}"
            item["outcome"] = "gold_failed"
            return item
        result = answer.result
        if not answer.answered or result is None:
            info = answer.error_info()
            item["error"] = f"{info['kind']}: {info['message']}" if info else "no answer"
        else:
            ok, why = compare_results(gold.columns, gold.rows, result.columns, result.rows, gold_is_ordered(gold_sql))
            item["correct"] = ok
            item["error"] = None if ok else why
    if item["correct"]:
        item["outcome"] = "right"
    else:
        item["outcome"] = "wrong_answered" if answer.answered else "wrong_declined"
    return item


def score_conversation(settings: Settings, conversation: dict, planner: str | None = None) -> list[dict[str, Any]]:
    """Every turn of a conversation (``{"id", "turns": [{"question", "gold_sql"}, ...]}``), each asked as a
    follow-up of the answers before it, each scored against its own gold SQL (its meaning in the conversation).
    A turn's id is the conversation's id and the turn number (``conv-03/2``)."""
    answers: list[Answer] = []
    items = []
    for n, turn in enumerate(conversation["turns"], 1):
        row = {**turn, "id": f"{conversation['id']}/{n}"}
        context = [a.as_prior() for a in answers]
        items.append(score(settings, row, planner, context=context, answers=answers))
    return items


def evaluate_file(settings, path: Path, planner: str | None = None,
                  progress: Callable[..., None] | None = None) -> dict:
    """Run every question of ``path`` through the full agent and score it against its gold SQL (:func:`score`);
    a conversation (``{"id", "turns": [...]}``) is scored turn by turn (:func:`score_conversation`).

    The report is the CLI's ``eval`` JSON (docs/design.md): ``n``, ``correct``, ``accuracy``, ``wrong_answered``,
    ``wrong_declined``, ``results``, plus ``by_kind`` and plan-latency percentiles.  ``gold_sql: null`` is right
    only when the answer declines.
    """
    rows = read_questions(path)
    progress = progress or (lambda *a, **k: None)
    results = []
    for i, row in enumerate(rows):
        progress("evaluating", i, len(rows))
        if "turns" in row:
            results.extend(score_conversation(settings, row, planner))
        else:
            results.append(score(settings, row, planner))
    progress("evaluating", len(rows), len(rows))
    n = len(results)
    correct = sum(1 for r in results if r["correct"])
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        by_kind[r["kind"] or "all"].append(r["correct"])
    plan_ms = [r["timings_ms"].get("plan", 0.0) for r in results]
    return {
        "n": n,
        "correct": correct,
        "accuracy": round(correct / n, 4) if n else 0.0,
        "wrong_answered": sum(1 for r in results if r.get("outcome") == "wrong_answered"),
        "wrong_declined": sum(1 for r in results if r.get("outcome") == "wrong_declined"),
        "by_kind": {k: {"n": len(v), "correct": sum(v), "accuracy": round(sum(v) / len(v), 4)}
                    for k, v in sorted(by_kind.items())},
        "plan_ms": {"p50": round(percentile(plan_ms, 50), 2), "p95": round(percentile(plan_ms, 95), 2),
                    "max": round(max(plan_ms), 2) if plan_ms else 0.0},
        "results": results,
    }


# ---------------------------------------------------------------------------------------------------------------
# Retrieval: are the gold query's variables among the first retrieved ones?
# ---------------------------------------------------------------------------------------------------------------


def gold_variables(gold_sql: str | None) -> list[str]:
    """The variable codes a gold query uses, in order of first appearance."""
    return variable_codes(gold_sql)


def eval_retrieval(
    settings: Settings,
    jsonl_path: str | Path,
    top_k: int = 5,
    *,
    provider: EmbeddingProvider | None = None,
) -> dict:
    """Recall@k and top-1 of the gold variables over a JSON Lines file of ``{"id", "question", "gold_sql"}``.

    Only variable chunks are ranked (tables and columns are few and always fit the planner's context).  For each
    question with a gold query: ``recall`` = share of its gold codes among the top ``k`` variables, capped at k
    (a question needing 8 variables is fully served when the first 5 are all gold), ``recall_uncapped`` the same
    without the cap, ``top1`` = whether the first variable is a gold one.  Rows with ``gold_sql`` null (questions
    the data cannot answer) are skipped.
    """
    results = []
    skipped = 0
    for row in read_questions(Path(jsonl_path)):
        gold = gold_variables(row.get("gold_sql"))
        if not gold:
            skipped += 1
            continue
        started = time.perf_counter()
        chunks = retrieve(settings, row["question"], top_k=top_k, object_types=("variable",), provider=provider)
        ms = (time.perf_counter() - started) * 1000
        got = [c.object_ref for c in chunks]
        hits = len(set(gold) & set(got))
        results.append({
            "id": row["id"],
            "question": row["question"],
            "gold": gold,
            "retrieved": got,
            "recall": hits / min(len(gold), top_k),
            "recall_uncapped": hits / len(gold),
            "top1": bool(got) and got[0] in gold,
            "ms": round(ms, 2),
        })
    n = len(results)
    return {
        "n": n,
        "skipped": skipped,
        "k": top_k,
        "recall_at_k": sum(r["recall"] for r in results) / n if n else 0.0,
        "recall_at_k_uncapped": sum(r["recall_uncapped"] for r in results) / n if n else 0.0,
        "all_gold_in_k": sum(r["recall"] == 1.0 for r in results) / n if n else 0.0,
        "top1": sum(r["top1"] for r in results) / n if n else 0.0,
        "results": results,
    }


def read_topic_questions(path: Path) -> list[dict]:
    """The rows of a JSON Lines topic set: ``{"id", "question", "tables": [acceptable ACS table ids]}``."""
    rows = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DataError(f"Cannot read the question file {path}: {exc.strerror or exc}.") from exc
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{Path(path).name}, line {i}: not JSON ({exc.msg}).") from exc
        tables = row.get("tables") if isinstance(row, dict) else None
        if not isinstance(row.get("question") if isinstance(row, dict) else None, str) or not (
                isinstance(tables, list) and tables and all(isinstance(t, str) for t in tables)):
            raise DataError(f"{Path(path).name}, line {i}: each line needs \"question\" and \"tables\" (a list of "
                            "acceptable ACS table ids).")
        row.setdefault("id", f"q{i}")
        rows.append(row)
    return rows


def chunk_table(chunk: Chunk) -> str | None:
    """The ACS table a retrieved chunk is about: a variable's table, a catalog entry's id; None for the schema."""
    if chunk.object_type == "variable":
        return chunk.object_ref.split("_")[0]
    if chunk.object_type in ("table", "column"):
        return None
    return chunk.object_ref  # a catalog entry (``acs_table``): its table id


def eval_table_retrieval(
    settings: Settings,
    jsonl_path: str | Path,
    top_k: int = 5,
    object_types: Sequence[str] = ("acs_table",),
    *,
    provider: EmbeddingProvider | None = None,
) -> dict:
    """Recall of the right ACS table over a topic set (:func:`read_topic_questions`): per question, whether one of
    its acceptable tables is among the first ``top_k`` distinct tables that retrieval names (``hit``) and whether
    the first one is (``top1``).

    The tables are read off the chunks of ``object_types`` in retrieval order: a catalog entry (``acs_table``) is
    its table, a variable its variable's table.  Each result keeps the tables ranked and the best score.
    """
    results = []
    for row in read_topic_questions(Path(jsonl_path)):
        gold = [t.upper() for t in row["tables"]]
        started = time.perf_counter()
        chunks = retrieve(settings, row["question"], top_k=max(40, 8 * top_k), object_types=tuple(object_types),
                          provider=provider)
        ms = (time.perf_counter() - started) * 1000
        ranked: list[str] = []
        scores: list[float] = []
        for c in chunks:
            table = chunk_table(c)
            if table and table not in ranked:
                ranked.append(table)
                scores.append(round(c.score, 4))
        ranked, scores = ranked[:top_k], scores[:top_k]
        results.append({
            "id": row["id"],
            "question": row["question"],
            "gold": gold,
            "retrieved": ranked,
            "scores": scores,
            "hit": bool(set(gold) & set(ranked)),
            "top1": bool(ranked) and ranked[0] in gold,
            "ms": round(ms, 2),
        })
    n = len(results)
    return {
        "n": n,
        "k": top_k,
        "object_types": list(object_types),
        "recall_at_k": sum(r["hit"] for r in results) / n if n else 0.0,
        "top1": sum(r["top1"] for r in results) / n if n else 0.0,
        "results": results,
    }


__all__ = ["ABS_TOL", "REL_TOL", "chunk_table", "compare_results", "eval_retrieval", "eval_table_retrieval",
           "evaluate_file", "gold_is_ordered", "gold_variables", "read_questions", "read_topic_questions", "score",
           "score_conversation", "values_equal"]
