"""Retrieval over the schema and the ACS variable catalog (pgvector).

A planner is only as good as the context it is given, and for census questions the hard part is picking the
variable ("work from home" is ``Estimate!!Total:!!Worked from home``).  So every table, every column and every ACS
variable that has estimates becomes one *chunk*: a short plain-text description (what :func:`describe_table`,
:func:`describe_column` and :func:`describe_variable` return) that is embedded and stored in
``sage.schema_embeddings``.  A question is embedded the same way and the nearest chunks by cosine similarity
(pgvector's ``<=>``) are handed to the planner, with two measured corrections for variables: a small bonus when the
question uses one of a variable's everyday names (``aliases.yaml``: "jobless", "home value", "broadband"), and a
retrieved count brings the total it is a share of, since most questions ask for rates.

Measured with the bundled model on the shipped extract (34 variables), over the 40 answerable development
questions: recall@5 of gold variables 1.000 (capped at 5 per question; 0.977 uncapped; 0.919 with vector
similarity alone), top-1 0.975 (0.875); warm retrieval p50 ~6 ms on 2 cores; a full index build ~3 s.  See
``benchmarks/bench_retrieve.py``.

The index is rebuilt incrementally: each chunk carries a hash of its text and the name of the model that embedded
it, so re-running :func:`index_schema` embeds only what is new or changed (a new variable from ``census fetch``, a
changed comment), drops what no longer exists, and re-embeds everything when the model changes.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import psycopg
from psycopg import sql as pgsql

from . import db
from .census.codes import ACS_VARIABLE
from .embeddings import EmbeddingProvider, get_provider
from .errors import DatabaseError, NotSetUpError, RetrievalError
from .introspect import Column, IntrospectedSchema, Table, introspect
from .settings import Settings
from .types import OBJECT_TYPES, Chunk, StepProgress

log = logging.getLogger(__name__)

#: the schemas whose tables are described; the planner sees only these
INDEXED_SCHEMAS = ("public",)
ALIASES_FILE = Path(__file__).resolve().parent / "aliases.yaml"

SETUP_HINT = "run `python -m sage setup`"


@dataclass
class IndexReport:
    """What :func:`index_schema` did."""

    upserted: int  # chunks embedded and written (new, changed, or re-embedded for a new model)
    unchanged: int  # chunks whose text and model were already indexed
    deleted: int  # chunks of objects that no longer exist
    seconds: float
    model: str
    chunks: dict[str, int] = field(default_factory=dict)  # how many chunks of each type the index now holds

    def to_dict(self) -> dict:
        out = asdict(self)
        out["seconds"] = round(self.seconds, 3)
        return out


# ---------------------------------------------------------------------------------------------------------------
# Descriptions: the text that is embedded (and shown to the planner)
# ---------------------------------------------------------------------------------------------------------------


def _about(n: int | None) -> str | None:
    """A row estimate rounded to two significant figures: the planner needs the size, and an exact count would
    change the text (and force a re-embedding) every time autovacuum refreshes the statistics."""
    if n is None:
        return None
    if n < 100:
        return f"{n:,}"
    digits = int(math.floor(math.log10(n))) - 1
    return f"about {round(n, -digits):,}"


def _column_facts(col: Column) -> str:
    facts = [col.type]
    if col.primary_key:
        facts.append("primary key")
    if not col.nullable and not col.primary_key:
        facts.append("not null")
    if col.foreign_key:
        facts.append(f"references {col.foreign_key}")
    if col.default is not None:
        facts.append(f"default {col.default}")
    return ", ".join(facts)


def describe_table(table: Table) -> str:
    """A table for embedding: name, kind, size, comment, and its columns with their types and keys.

    Column comments live in the column chunks only (and the table comment in the table chunk only), so that a
    changed comment re-embeds exactly one chunk, and each chunk stays about one thing.
    """
    size = _about(table.row_estimate)
    head = f"Table {table.ref} ({table.kind}" + (f", {size} rows" if size else "") + ")"
    lines = [head + (f": {table.comment}" if table.comment else "")]
    lines.append("Columns: " + "; ".join(f"{col.name} ({_column_facts(col)})" for col in table.columns))
    return "\n".join(lines)


def describe_column(table: Table, column: Column | int | str) -> str:
    """A column for embedding: its table, type, keys and comment (``column`` is a Column, an index or a name)."""
    if isinstance(column, int):
        column = table.columns[column]
    elif isinstance(column, str):
        column = table.column(column)
    line = f"Column {column.name} of {table.kind} {table.ref} ({_column_facts(column)})"
    if column.comment:
        line += f": {column.comment}"
    return line


@dataclass
class VariableInfo:
    """An ACS variable as the index sees it: its catalog row, where it has estimates, and its everyday words."""

    code: str
    label: str
    concept: str
    category: str | None
    table_id: str
    universe: str | None
    vintage: str | None
    rows_by_level: dict[str, int] = field(default_factory=dict)  # {"county": 3220, "state": 52}
    aliases: list[str] = field(default_factory=list)
    #: what to divide by for a share or rate: [(code, readable label)], the table total first, then the nearest
    #: narrower group ("Foreign Born: Noncitizen") when that differs
    denominators: list[tuple[str, str]] = field(default_factory=list)

    @property
    def readable_label(self) -> str:
        return readable_label(self.label, self.concept, self.universe)

    @property
    def statistic(self) -> str:
        """count | median | mean | index | aggregate — decides whether it may be summed into bigger places."""
        text = f"{self.label} {self.concept}".lower()
        if "gini" in text:
            return "index"
        if "median" in text:
            return "median"
        if "per capita" in text or "average" in text or "mean " in text:
            return "mean"
        if "aggregate" in text:
            return "aggregate"
        return "count"


def _label_steps(label: str) -> list[str]:
    """The steps of a Census label without "Estimate" and trailing colons: ["Total", "Foreign Born", ...]."""
    steps = [p.strip().rstrip(":").removesuffix(" --").strip() for p in (label or "").split("!!")]
    return [p for p in steps if p and p.lower() != "estimate"]


def readable_label(label: str, concept: str = "", universe: str | None = None) -> str:
    """``Estimate!!Total:!!Not Hispanic or Latino:!!White alone`` → ``Not Hispanic or Latino: White alone``.

    The "Estimate" and "Total" steps carry no meaning for a reader.  A label that is only "Total" names what it
    counts: "Total Population" for the population table, otherwise the universe and the table, so that the
    totals of different tables over one universe (B01003_001E and B03002_001E both count everyone) differ.
    """
    parts = _label_steps(label)
    if len(parts) > 1:
        parts = [p for p in parts if p.lower() != "total"]
    if not parts or parts == ["Total"]:
        what = (universe or "").strip()
        if not what or what.lower() == (concept or "").strip().lower():
            return (concept or what or "Total").strip()
        return f"Total: {what[:1].lower() + what[1:]}" + (f" (table {concept})" if concept else "")
    return ": ".join(parts)


def _geography_line(var: VariableInfo) -> str:
    levels = var.rows_by_level
    have = [f"{levels[lv]:,} {lv} rows" for lv in ("state", "county") if levels.get(lv)]
    have += [f"{n:,} {lv} rows" for lv, n in sorted(levels.items()) if lv not in ("state", "county") and n]
    missing = [lv for lv in ("state", "county") if not levels.get(lv)]
    text = "Geography: " + (", ".join(have) if have else "no rows")
    if missing:
        text += "; no " + " or ".join(missing) + " rows"
        if "state" in missing and var.statistic in ("median", "mean", "index"):
            text += f" (a {var.statistic} cannot be summed or averaged from counties into states)"
    return text


def describe_variable(var: VariableInfo) -> str:
    """An ACS variable for embedding: code and readable label first (they matter most to the embedding), then
    everyday words, the table's concept, category, universe, vintage, geography, and how to make a rate."""
    lines = [f"ACS variable {var.code}: {var.readable_label}"]
    if var.aliases:
        lines.append("Also called: " + ", ".join(var.aliases))
    table = f"Table {var.table_id}: {var.concept}"
    if var.category:
        table += f" (category {var.category})"
    lines.append(table)
    facts = []
    if var.universe:
        facts.append(f"Universe: {var.universe}")
    if var.vintage:
        facts.append(f"ACS 5-year {var.vintage}")
    facts.append(f"a {var.statistic}")
    lines.append("; ".join(facts))
    lines.append(_geography_line(var))
    if var.denominators:
        (code, label), *narrower = var.denominators
        line = f"Share or rate: divide by {code} ({label}) of the same place"
        for code, label in narrower:
            line += f"; as a share of {label}, by {code}"
        lines.append(line)
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------
# The variable catalog
# ---------------------------------------------------------------------------------------------------------------


@lru_cache(maxsize=4)
def load_aliases(path: Path = ALIASES_FILE) -> dict[str, tuple[str, ...]]:
    """Everyday words keyed by ACS table id or variable code (see ``aliases.yaml``)."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise RetrievalError(f"The alias file {path.name} could not be read ({exc}); restore it from the project.") from exc
    return {str(k).strip(): tuple(str(w).strip() for w in v or ()) for k, v in data.items()}


def aliases_for(code: str, table_id: str, aliases: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """The variable's own words first, then its table's, without repeats."""
    aliases = load_aliases() if aliases is None else aliases
    out: list[str] = []
    for word in (*aliases.get(code, ()), *aliases.get(table_id, ())):
        if word and word.lower() not in {w.lower() for w in out}:
            out.append(word)
    return out


_VARIABLES_SQL = """
SELECT v.variable_code, v.label, v.concept, v.category, v.table_id, v.universe, v.vintage,
       jsonb_object_agg(l.level, l.n)
FROM public.variables v
JOIN (SELECT e.variable_code, g.level, count(*) AS n
        FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id
       WHERE e.estimate IS NOT NULL
       GROUP BY e.variable_code, g.level) l ON l.variable_code = v.variable_code
GROUP BY v.variable_code, v.label, v.concept, v.category, v.table_id, v.universe, v.vintage
ORDER BY v.variable_code
"""


def load_variables(conn: psycopg.Connection) -> list[VariableInfo]:
    """Every variable of ``public.variables`` that has estimates, with its rows per geography level.

    A database without the census tables (any other PostgreSQL) simply has no variables.
    """
    present = conn.execute(
        "SELECT to_regclass('public.variables'), to_regclass('public.estimates'), to_regclass('public.geography')"
    ).fetchone()
    if not all(present):
        return []
    rows = conn.execute(_VARIABLES_SQL).fetchall()
    variables = [
        VariableInfo(code, label or "", concept or "", category, table_id or code.split("_")[0], universe, vintage,
                     {str(k): int(v) for k, v in (levels or {}).items()})
        for code, label, concept, category, table_id, universe, vintage, levels in rows
    ]
    _link(variables)
    return variables


def _link(variables: list[VariableInfo]) -> None:
    """Attach everyday words, and connect each count to the count it is a share of.

    The denominators of a count are its ancestors in the Census label path that have estimates, the widest first:
    "Below poverty level" is a share of the table total; "Unemployed" (``Total:!!In labor force:!!Civilian labor
    force:!!Unemployed``) of the civilian labor force when the table total has no estimates; "Noncitizen: With
    health insurance coverage" of the table total and of "Noncitizen".  A count of a table whose universe is the
    whole population and whose total is missing falls back to ``B01003_001E``.  Only variables of the same
    vintage are paired: a 2018-2022 count over a 2019-2023 total is not a rate.
    """
    aliases = load_aliases()
    by_code = {v.code: v for v in variables}
    by_path: dict[tuple[str, tuple[str, ...]], VariableInfo] = {}
    for var in variables:
        var.aliases = aliases_for(var.code, var.table_id, aliases)
        if var.statistic == "count":
            by_path[(var.table_id, tuple(_label_steps(var.label)))] = var
    for var in variables:
        steps = tuple(_label_steps(var.label))
        if var.statistic != "count" or len(steps) < 2 or var.code == "B01003_001E":
            continue
        ancestors = [by_path.get((var.table_id, steps[:cut])) for cut in range(len(steps) - 1, 0, -1)]
        ancestors = [a for a in ancestors if a is not None and a.vintage == var.vintage]
        if not ancestors and (var.universe or "").strip().lower() == "total population":
            population = by_code.get("B01003_001E")
            if population is not None and population.vintage == var.vintage:
                ancestors = [population]
        if ancestors:
            root, nearest = ancestors[-1], ancestors[0]
            var.denominators = [(root.code, root.readable_label)]
            if nearest is not root:
                var.denominators.append((nearest.code, nearest.readable_label))


# ---------------------------------------------------------------------------------------------------------------
# The index
# ---------------------------------------------------------------------------------------------------------------


def _table_ddl(dimension: int) -> pgsql.Composed:
    return pgsql.SQL(
        """CREATE TABLE IF NOT EXISTS sage.schema_embeddings (
    id           bigserial PRIMARY KEY,
    object_type  text NOT NULL CHECK (object_type IN ('table', 'column', 'variable')),
    object_ref   text NOT NULL,
    content      text NOT NULL,
    content_hash text NOT NULL,
    model        text NOT NULL,
    dimension    integer NOT NULL,
    embedding    vector({dim}) NOT NULL,
    indexed_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (object_type, object_ref)
)"""
    ).format(dim=pgsql.Literal(dimension))


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_chunks(schema: IntrospectedSchema, variables: Sequence[VariableInfo]) -> list[tuple[str, str, str]]:
    """(object_type, object_ref, content) for every table, column and variable."""
    chunks: list[tuple[str, str, str]] = []
    for table in schema.tables:
        chunks.append(("table", table.ref, describe_table(table)))
        for col in table.columns:
            chunks.append(("column", f"{table.ref}.{col.name}", describe_column(table, col)))
    for var in variables:
        chunks.append(("variable", var.code, describe_variable(var)))
    return chunks


def _prepare(conn: psycopg.Connection, dimension: int) -> int | None:
    """Make sure the extension, schema and table exist; return the vector dimension the table is typed with."""
    try:
        if not conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE SCHEMA IF NOT EXISTS sage")
        conn.execute(_table_ddl(dimension))
    except psycopg.errors.UndefinedFile as exc:
        raise DatabaseError(
            "The pgvector extension is not installed on this PostgreSQL server; install pgvector or unset "
            "DATABASE_URL to use the embedded server.",
            detail=str(exc),
        ) from exc
    except psycopg.errors.InsufficientPrivilege as exc:
        raise DatabaseError(
            "The database user cannot create the retrieval index (extension vector, schema sage): connect as the "
            "database owner, or ask an administrator to run `CREATE EXTENSION vector; CREATE SCHEMA sage`.",
            detail=str(exc),
        ) from exc
    row = conn.execute(
        """SELECT a.atttypmod FROM pg_attribute a
           WHERE a.attrelid = 'sage.schema_embeddings'::regclass AND a.attname = 'embedding'"""
    ).fetchone()
    return row[0] if row and row[0] > 0 else None


def index_schema(
    settings: Settings,
    *,
    progress: StepProgress | None = None,
    provider: EmbeddingProvider | None = None,
    rebuild: bool = False,
) -> IndexReport:
    """Bring ``sage.schema_embeddings`` up to date with the database; safe to run again and again.

    Only chunks whose text or model changed are embedded; chunks of objects that are gone are deleted; a new model
    (or ``rebuild=True``) re-embeds everything.  ``progress(step, done, total)`` is called while embedding.
    ``provider`` replaces the configured model (tests use a small deterministic one).
    """
    from pgvector.psycopg import register_vector

    started = time.perf_counter()
    progress = progress or (lambda *a: None)
    provider = provider or get_provider(settings)
    with db.owner(settings) as conn:
        progress("reading the schema", 0, 1)
        # one indexer at a time per database (setup in a terminal while the app refreshes after a fetch);
        # the lock is the session's and ends with the connection
        conn.execute("SELECT pg_advisory_lock(hashtext('sage.schema_embeddings'))")
        typed_dim = _prepare(conn, provider.dimension)
        register_vector(conn)
        schema = introspect(conn, INDEXED_SCHEMAS)
        variables = load_variables(conn)
        chunks = build_chunks(schema, variables)
        progress("reading the schema", 1, 1)

        existing = {
            (t, r): (h, m, d)
            for t, r, h, m, d in conn.execute(
                "SELECT object_type, object_ref, content_hash, model, dimension FROM sage.schema_embeddings"
            ).fetchall()
        }
        wanted = {(t, r): _hash(c) for t, r, c in chunks}
        new_dim = typed_dim is not None and typed_dim != provider.dimension  # an untyped vector column takes any
        todo = [
            (t, r, c)
            for t, r, c in chunks
            if rebuild or new_dim or existing.get((t, r)) != (wanted[(t, r)], provider.name, provider.dimension)
        ]
        stale = [key for key in existing if key not in wanted]

        vectors: list[list[float]] = []
        batch = 32  # progress granularity; the provider batches internally
        progress("embedding", 0, len(todo))
        for start in range(0, len(todo), batch):
            vectors += provider.embed([c for _, _, c in todo[start : start + batch]])
            progress("embedding", min(start + batch, len(todo)), len(todo))

        progress("writing the index", 0, 1)
        import numpy as np

        with conn.transaction():
            if new_dim:
                # the column is typed vector(n): a model of another size needs an empty table of the new type
                conn.execute("DELETE FROM sage.schema_embeddings")
                conn.execute(
                    pgsql.SQL("ALTER TABLE sage.schema_embeddings ALTER COLUMN embedding TYPE vector({})").format(
                        pgsql.Literal(provider.dimension)
                    )
                )
            if stale and not new_dim:
                with conn.cursor() as cur:
                    cur.executemany(
                        "DELETE FROM sage.schema_embeddings WHERE object_type = %s AND object_ref = %s", stale
                    )
            if todo:
                with conn.cursor() as cur:
                    cur.executemany(
                        """INSERT INTO sage.schema_embeddings
                               (object_type, object_ref, content, content_hash, model, dimension, embedding)
                           VALUES (%s, %s, %s, %s, %s, %s, %s)
                           ON CONFLICT (object_type, object_ref) DO UPDATE
                           SET content = EXCLUDED.content, content_hash = EXCLUDED.content_hash,
                               model = EXCLUDED.model, dimension = EXCLUDED.dimension,
                               embedding = EXCLUDED.embedding, indexed_at = now()""",
                        [
                            (t, r, c, wanted[(t, r)], provider.name, provider.dimension, np.asarray(v, dtype=np.float32))
                            for (t, r, c), v in zip(todo, vectors)
                        ],
                    )
        progress("writing the index", 1, 1)
        counts = dict(
            conn.execute("SELECT object_type, count(*) FROM sage.schema_embeddings GROUP BY 1 ORDER BY 1").fetchall()
        )
    _forget_connections(settings)  # a rebuilt table may have a new column type: pooled connections re-register
    report = IndexReport(
        upserted=len(todo),
        unchanged=len(chunks) - len(todo),
        deleted=len(stale),
        seconds=time.perf_counter() - started,
        model=provider.name,
        chunks=counts,
    )
    log.info("retrieval index: %s", report.to_dict())
    return report


def index_status(settings: Settings) -> dict:
    """``{"chunks": n, "model": name or None}`` for ``status`` (0 and None before setup)."""
    with db.owner(settings) as conn:
        if not conn.execute("SELECT to_regclass('sage.schema_embeddings')").fetchone()[0]:
            return {"chunks": 0, "model": None}
        rows = conn.execute("SELECT model, count(*) FROM sage.schema_embeddings GROUP BY model ORDER BY 2 DESC").fetchall()
    return {"chunks": sum(n for _, n in rows), "model": rows[0][0] if rows else None}


# ---------------------------------------------------------------------------------------------------------------
# Retrieval
# ---------------------------------------------------------------------------------------------------------------

_pool: dict[str, list[psycopg.Connection]] = {}
_pool_lock = threading.Lock()
_POOL_SIZE = 4


@contextmanager
def _connection(settings: Settings) -> Iterator[psycopg.Connection]:
    """An owner connection with pgvector registered, kept for the next question.

    Connecting and registering the vector type cost two round trips (~2-3 ms locally, far more to a managed
    server), which is most of a retrieval's budget, so a few idle connections are kept per server.
    """
    from pgvector.psycopg import register_vector

    key = db.admin_url(settings)
    with _pool_lock:
        idle = _pool.setdefault(key, [])
        conn = idle.pop() if idle else None
    if conn is None or conn.closed:
        conn = db.connect(settings, autocommit=True)
        try:
            register_vector(conn)
        except psycopg.ProgrammingError as exc:  # the vector type does not exist in this database
            conn.close()
            raise NotSetUpError(
                f"The vector extension is not installed in this database: {SETUP_HINT}.", detail=str(exc)
            ) from exc
    healthy = False
    try:
        yield conn
        healthy = True
    finally:
        if healthy and not conn.closed and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            with _pool_lock:
                idle = _pool.setdefault(key, [])
                if len(idle) < _POOL_SIZE:
                    idle.append(conn)
                    conn = None
        if conn is not None:
            conn.close()


def _forget_connections(settings: Settings) -> None:
    try:
        key = db.admin_url(settings)
    except Exception:  # pragma: no cover - the server went away; nothing to forget
        return
    with _pool_lock:
        idle = _pool.pop(key, [])
    for conn in idle:
        conn.close()


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
    (``table``, ``column``, ``variable``), each with a score in [0, 1] of at least ``min_score``.

    The score is the cosine similarity (computed by pgvector) between the chunk and the question, clipped at 0,
    plus :data:`ALIAS_BONUS` for a variable whose everyday name the question uses, capped at 1.  A count that is
    retrieved brings the total it is a share of right after it (see :func:`_with_denominators`).

    Raises :class:`RetrievalError` for an empty question or bad arguments and :class:`NotSetUpError` when the
    index has not been built (or was built with another model).  A question longer than the model's window is
    cut to it, not rejected.
    """
    import numpy as np

    text = check_question(question)
    types = _check_types(object_types)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise RetrievalError(f"top_k must be a whole number of at least 1, not {top_k!r}.")
    provider = provider or get_provider(settings)
    vector = np.asarray(provider.embed([text])[0], dtype=np.float32)
    params = {"q": vector, "model": provider.name, "types": types, "n": max(MIN_CANDIDATES, 4 * top_k)}
    head = text[:2000]  # the alias match reads the start of a long paste, as the model does
    for attempt in (1, 2):
        try:
            with _connection(settings) as conn:
                return [c for c in _search(conn, params, head, top_k) if c.score >= min_score]
        except psycopg.OperationalError as exc:  # a kept connection the server dropped: one fresh try
            if attempt == 2:
                raise DatabaseError(f"The retrieval query failed: {exc}", detail=str(exc)) from exc
    raise AssertionError("unreachable")  # pragma: no cover


def _search(conn: psycopg.Connection, params: dict, question: str, top_k: int) -> list[Chunk]:
    try:
        rows = conn.execute(_QUERY, params).fetchall()
    except psycopg.errors.UndefinedTable as exc:
        raise NotSetUpError(f"The retrieval index has not been built yet: {SETUP_HINT}.", detail=str(exc)) from exc
    except psycopg.errors.DataException as exc:  # e.g. the table is typed for another dimension
        raise NotSetUpError(
            f"The retrieval index was built with another embedding model: {SETUP_HINT} to rebuild it.",
            detail=str(exc),
        ) from exc
    if not rows:
        _explain_empty(conn, params["model"])
    words = _question_words(question)
    chunks = []
    for i, t, r, c, similarity in rows:
        score = max(0.0, float(similarity))
        if t == "variable" and _alias_match(words, c):
            score += ALIAS_BONUS
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
    wanted = {}
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


__all__ = [
    "Chunk",
    "IndexReport",
    "OBJECT_TYPES",
    "VariableInfo",
    "build_chunks",
    "describe_column",
    "describe_table",
    "describe_variable",
    "index_schema",
    "index_status",
    "load_variables",
    "readable_label",
    "retrieve",
]
