"""Retrieval over the schema, the ACS variables with estimates and the ACS tables that are not loaded (pgvector).

A question is embedded like the chunks of :mod:`sage.index` and the nearest chunks by cosine similarity
(pgvector's ``<=>``) are handed to the planner, with measured corrections: a small bonus when the question uses one
of a variable's (or a catalog table's) everyday names (``aliases.yaml``), a retrieved count brings the total it is
a share of, since most questions ask for rates, and a race-iteration catalog table ranks below its base table
unless the question names its group.  ``benchmarks/bench_retrieve.py`` measures recall and latency; the
README quotes the figures.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence

import psycopg

from . import db
from .census.codes import ACS_VARIABLE
from .embeddings import EmbeddingProvider, get_provider
from .errors import NotSetUpError, RetrievalError
from .settings import Settings
from .types import OBJECT_TYPES, Chunk

log = logging.getLogger(__name__)

SETUP_HINT = "run `python -m sage setup`"

def check_question(question: object) -> str:
    if not isinstance(question, str):
        raise RetrievalError(f"The question must be text, not {type(question).__name__}.")
    text = " ".join(question.split())
    if not text:
        raise RetrievalError("The question is empty: type a question about the census data.")
    return text


def _check_types(object_types: Iterable[str] | str | None) -> list[str] | None:
    if object_types is None:
        return None
    if isinstance(object_types, str):
        object_types = [t for t in object_types.split(",")]
    types = [t.strip().lower() for t in object_types if t and t.strip()]
    bad = [t for t in types if t not in OBJECT_TYPES]
    if bad:
        raise RetrievalError(f"Unknown object type {', '.join(bad)}: use {', '.join(OBJECT_TYPES)}.")
    return types or None


#: added to a variable's score when the question uses one of its everyday names (all the words of one alias,
#: in any order, plurals folded).  Measured with the bundled model, top-1 of gold variables: 0.875 -> 0.975 on
#: the development questions, 0.94 -> 1.00 on a second set also used for tuning, 0.867 -> 0.90 on a held-out set;
#: 0.1 was the best of 0.05-0.15
ALIAS_BONUS = 0.1
#: taken off a catalog table that is a race or ethnicity iteration of another ("Sex by Age (White Alone)", B01001A)
#: when the question names none of its group's words: "people 65 and older" wants B01001, not one of its nine
#: iterations, whose titles embed almost alike.  Measured on the development topics
#: (tests/data/questions/retrieval_topics_dev.jsonl): recall@5 of the right table 22 -> 24 of 32; 0.02-0.05 did
#: the same, 0.1 lost a top-1
ITERATION_PENALTY = 0.05
#: taken off an "Aggregate ..." catalog table (a dollar or minute total over a universe, rarely what is asked) unless
#: the question says "aggregate": "share of households receiving Social Security" wants B19055, not B19065.  On the
#: development topics: top-1 20 -> 22 of 32, recall@5 unchanged; 0.02-0.05 did the same
AGGREGATE_PENALTY = 0.03
#: the words that name the group of a race or ethnicity iteration (its title ends with "(... Alone ...)")
_GROUP_WORDS = frozenset(
    "white black african asian hispanic latino latina latinx indian alaska native hawaiian pacific islander "
    "multiracial race".split()
)
_ITERATION = re.compile(r"^[BC]\d{5}[A-I]$")
_TITLE_GROUP = re.compile(r"^ACS table \S+: .*\(([^()]*)\)\s*$", re.MULTILINE)


def _other_group(table_id: str, content: str, question_words: set[str]) -> bool:
    """True when ``table_id`` is a race/ethnicity iteration and the question names none of its group's words."""
    if not _ITERATION.match(table_id):
        return False
    match = _TITLE_GROUP.search(content)
    group = {w for w in _words(match.group(1)) if w in _GROUP_WORDS} if match else set()
    return not (group & question_words)


#: candidates fetched by vector similarity before the alias bonus and the denominators re-rank them
MIN_CANDIDATES = 40
_STOPWORDS = frozenset("a an the of in on at for to by and or with who what how is are do does".split())


def _words(text: str, fold: bool = True) -> list[str]:
    """Lower-case words; with ``fold``, plurals folded to the singular ("counties" -> "county")."""
    out = []
    for w in re.findall(r"[a-z0-9']+", text.lower().replace("'s", " ")):
        w = w.strip("'")
        if not fold:
            pass
        elif w.endswith("ies") and len(w) > 4:
            w = w[:-3] + "y"
        elif w.endswith("s") and not w.endswith("ss") and len(w) > 3:
            w = w[:-1]
        if w:
            out.append(w)
    return out


_ALSO_CALLED = re.compile(r"^Also called: (.*)$", re.MULTILINE)


def _question_words(question: str) -> tuple[set[str], set[str]]:
    return set(_words(question)), set(_words(question, fold=False))


def _alias_match(question: str | tuple[set[str], set[str]], content: str) -> bool:
    """True when the question uses one of the chunk's everyday names: every word of it (stopwords aside, plurals
    folded, in any order), or for a one-word name that exact word ("households" must not fire on "household
    income").  ``question`` is the text or its :func:`_question_words`."""
    match = _ALSO_CALLED.search(content)
    if not match:
        return False
    folded, exact = _question_words(question) if isinstance(question, str) else question
    for alias in match.group(1).split(", "):
        words = _words(alias)
        words = [w for w in words if w not in _STOPWORDS] or words
        if len(words) == 1 and " " not in alias.strip():
            if _words(alias, fold=False)[0] in exact:
                return True
        elif words and all(w in folded for w in words):
            return True
    return False


_QUERY = """
SELECT id, object_type, object_ref, content, 1 - (embedding <=> %(q)s) AS similarity
FROM sage.schema_embeddings
WHERE model = %(model)s AND (%(types)s::text[] IS NULL OR object_type = ANY(%(types)s::text[]))
ORDER BY embedding <=> %(q)s, id
LIMIT %(n)s
"""


def retrieve(
    settings: Settings,
    question: str,
    top_k: int = 10,
    min_score: float = 0.0,
    object_types: Iterable[str] | None = None,
    *,
    provider: EmbeddingProvider | None = None,
) -> list[Chunk]:
    """The ``top_k`` chunks most relevant to ``question``, best first, optionally only of ``object_types``
    (``table``, ``column``, ``variable``, ``acs_table``), each with a score in [0, 1] of at least ``min_score``.

    The score is the cosine similarity (computed by pgvector) between the chunk and the question, clipped at 0,
    plus :data:`ALIAS_BONUS` for a variable or catalog table whose everyday name the question uses, less
    :data:`ITERATION_PENALTY` for a race-iteration catalog table the question names no group of, capped at 1.  A
    count that is retrieved brings the total it is a share of right after it (see :func:`_with_denominators`).

    Raises :class:`RetrievalError` for an empty question or bad arguments and :class:`NotSetUpError` when the
    index has not been built (or was built with another model).  A question longer than the model's window is
    cut to it, not rejected.
    """
    return retrieve_parts(settings, question, [(object_types, top_k)], min_score=min_score, provider=provider)[0]


def retrieve_parts(
    settings: Settings,
    question: str,
    parts: Sequence[tuple[Iterable[str] | None, int]],
    min_score: float = 0.0,
    *,
    provider: EmbeddingProvider | None = None,
) -> list[list[Chunk]]:
    """Several searches for one question, with one embedding of it and one connection: for each
    ``(object_types, top_k)`` of ``parts``, what :func:`retrieve` would return.

    The question loop asks for the schema and the loaded variables, and apart from them for the few best catalog
    tables that are not loaded (``acs_table``), so that a thousand catalog entries never crowd the variables out.
    Only the first part must find something: a later part that is empty (the catalog not indexed yet) is [].
    """
    import numpy as np

    text = check_question(question)
    checked = []
    for object_types, top_k in parts:
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise RetrievalError(f"top_k must be a whole number of at least 1, not {top_k!r}.")
        checked.append((_check_types(object_types), top_k))
    provider = provider or get_provider(settings)
    vector = np.asarray(provider.embed([text])[0], dtype=np.float32)
    head = text[:2000]  # the alias match reads the start of a long paste, as the model does

    def search(conn: psycopg.Connection) -> list[list[Chunk]]:
        db.ensure_vector(conn)  # registered when the connection was made, unless that was before setup
        out = []
        for i, (types, top_k) in enumerate(checked):
            params = {"q": vector, "model": provider.name, "types": types, "n": max(MIN_CANDIDATES, 4 * top_k)}
            chunks = _search(conn, params, head, top_k, may_be_empty=i > 0)
            out.append([c for c in chunks if c.score >= min_score])
        return out

    # one pooled owner connection for every part: connecting and registering the vector type would cost more
    # than the searches
    return db.run(settings, db.OWNER, search)


def _search(conn: psycopg.Connection, params: dict, question: str, top_k: int, *,
            may_be_empty: bool = False) -> list[Chunk]:
    try:
        rows = conn.execute(_QUERY, params).fetchall()
    except psycopg.errors.UndefinedTable as exc:
        raise NotSetUpError(f"The retrieval index has not been built yet: {SETUP_HINT}.", detail=str(exc)) from exc
    except psycopg.errors.DataException as exc:  # e.g. the table is typed for another dimension
        raise NotSetUpError(
            f"The retrieval index was built with another embedding model: {SETUP_HINT} to rebuild it.",
            detail=str(exc),
        ) from exc
    if not rows and not may_be_empty:
        _explain_empty(conn, params["model"])
    words = _question_words(question)
    chunks = []
    for i, t, r, c, similarity in rows:
        score = max(0.0, float(similarity))
        if t in ("variable", "acs_table") and _alias_match(words, c):
            score += ALIAS_BONUS
        if t == "acs_table" and _other_group(r, c, words[0]):
            score = max(0.0, score - ITERATION_PENALTY)
        if t == "acs_table" and AGGREGATE_PENALTY and c.startswith(f"ACS table {r}: Aggregate") \
                and "aggregate" not in words[0]:
            score = max(0.0, score - AGGREGATE_PENALTY)
        chunks.append(Chunk(int(i), t, r, c, min(1.0, score)))
    chunks.sort(key=lambda c: -c.score)  # stable: ties keep pgvector's order
    return _with_denominators(conn, chunks[:top_k], params["model"])[:top_k]


_DENOMINATOR = re.compile(rf"^Share or rate: divide by ({ACS_VARIABLE.pattern})", re.MULTILINE)


def _with_denominators(conn: psycopg.Connection, chunks: list[Chunk], model: str) -> list[Chunk]:
    """Put the total a retrieved count is a share of right after it (with the count's score).

    Questions about people ask for rates far more often than for counts ("poverty rate", "share of adults with a
    degree"), and a rate needs its denominator, whose own text ("Total: population for whom poverty status is
    determined") shares few words with the question.  Measured: recall@5 of gold variables 0.919 -> 0.975 on the
    development questions and 0.941 -> 0.971 on a second set written apart from them; top-1 cannot drop (the
    first chunk never moves).
    """
    wanted: dict[str, str] = {}
    for c in chunks:
        if c.object_type == "variable":
            match = _DENOMINATOR.search(c.content)
            if match:
                wanted.setdefault(c.object_ref, match.group(1))
    if not wanted:
        return chunks
    have = {c.object_ref: c for c in chunks if c.object_type == "variable"}
    missing = sorted({d for d in wanted.values() if d not in have})
    if missing:
        for i, t, r, c, _ in conn.execute(
            "SELECT id, object_type, object_ref, content, 0 FROM sage.schema_embeddings "
            "WHERE object_type = 'variable' AND model = %s AND object_ref = ANY(%s)",
            (model, missing),
        ).fetchall():
            have[r] = Chunk(int(i), t, r, c, 0.0)
    out: list[Chunk] = []
    placed: set[str] = set()
    for c in chunks:
        key = f"{c.object_type}:{c.object_ref}"
        if key in placed:
            continue
        out.append(c)
        placed.add(key)
        total = have.get(wanted.get(c.object_ref, "")) if c.object_type == "variable" else None
        if total is not None and f"variable:{total.object_ref}" not in placed:
            out.append(Chunk(total.id, total.object_type, total.object_ref, total.content, max(total.score, c.score)))
            placed.add(f"variable:{total.object_ref}")
    return out


def _explain_empty(conn: psycopg.Connection, model: str) -> None:
    """No row came back: tell an empty index (or one built with another model) apart from a filter."""
    rows = conn.execute("SELECT model, count(*) FROM sage.schema_embeddings GROUP BY model").fetchall()
    if not rows:
        raise NotSetUpError(f"The retrieval index is empty: {SETUP_HINT}.")
    if model not in {m for m, _ in rows}:
        others = ", ".join(sorted(m for m, _ in rows))
        raise NotSetUpError(
            f"The retrieval index was built with the embedding model {others}, not {model}: {SETUP_HINT} to "
            "rebuild it (or set SAGE_EMBEDDING_MODEL back)."
        )


__all__ = ["ALIAS_BONUS", "ITERATION_PENALTY", "SETUP_HINT", "check_question", "retrieve", "retrieve_parts"]
