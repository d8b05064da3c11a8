"""The retrieval index ``sage.schema_embeddings``: every chunk :mod:`sage.describe` writes, embedded.

The index is rebuilt incrementally: each chunk carries a hash of its text and the name of the model that embedded
it, so re-running :func:`index_schema` embeds only what is new or changed (a new variable from ``census fetch``, a
changed comment), drops what no longer exists, and re-embeds everything when the model changes.

:func:`index_schema` keeps the tables, columns and variables (``table``, ``column``, ``variable`` chunks).  The
``acs_table`` chunks — the ACS tables of the offline catalog that are *not* loaded — are written by
:mod:`sage.catalog_index` (about 1,100 of them: too many to embed during setup); :func:`index_schema` only deletes
the ones whose table has become loaded, since a loaded table is retrievable by its variables.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import psycopg
from psycopg import sql as pgsql

from . import db
from .describe import VariableInfo, describe_column, describe_table, describe_variable, load_variables
from .embeddings import EmbeddingProvider, get_provider
from .errors import DatabaseError
from .introspect import IntrospectedSchema, introspect
from .settings import Settings
from .types import OBJECT_TYPES, StepProgress

log = logging.getLogger(__name__)

#: the schemas whose tables are described; the planner sees only these
INDEXED_SCHEMAS = ("public",)


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


def _table_ddl(dimension: int) -> pgsql.Composed:
    return pgsql.SQL(
        """CREATE TABLE IF NOT EXISTS sage.schema_embeddings (
    id           bigserial PRIMARY KEY,
    object_type  text NOT NULL CONSTRAINT schema_embeddings_object_type_check CHECK (object_type IN ({types})),
    object_ref   text NOT NULL,
    content      text NOT NULL,
    content_hash text NOT NULL,
    model        text NOT NULL,
    dimension    integer NOT NULL,
    embedding    vector({dim}) NOT NULL,
    indexed_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (object_type, object_ref)
)"""
    ).format(dim=pgsql.Literal(dimension), types=_TYPES_SQL)


#: the object types the table accepts (``sage.types.OBJECT_TYPES``), as the CHECK constraint lists them
_TYPES_SQL = pgsql.SQL(", ").join(pgsql.Literal(t) for t in OBJECT_TYPES)
#: the types :func:`index_schema` writes; ``acs_table`` is :mod:`sage.catalog_index`'s
SCHEMA_TYPES = ("table", "column", "variable")
#: the advisory lock of a writer of the index (one at a time per database)
INDEX_LOCK = "sage.schema_embeddings"


def _allow_every_type(conn: psycopg.Connection) -> None:
    """A table created before ``acs_table`` existed has a CHECK constraint without it: replace the constraint."""
    definition = conn.execute(
        """SELECT pg_get_constraintdef(oid) FROM pg_constraint
           WHERE conrelid = 'sage.schema_embeddings'::regclass AND conname = 'schema_embeddings_object_type_check'"""
    ).fetchone()
    if definition is not None and all(f"'{t}'" in definition[0] for t in OBJECT_TYPES):
        return
    with conn.transaction():
        conn.execute("ALTER TABLE sage.schema_embeddings DROP CONSTRAINT IF EXISTS schema_embeddings_object_type_check")
        conn.execute(pgsql.SQL("ALTER TABLE sage.schema_embeddings ADD CONSTRAINT schema_embeddings_object_type_check "
                               "CHECK (object_type IN ({}))").format(_TYPES_SQL))


def content_hash(text: str) -> str:
    """The hash kept beside a chunk's text: an unchanged text is not embedded again."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_chunks(schema: IntrospectedSchema, variables: Sequence[VariableInfo]) -> list[tuple[str, str, str]]:
    """(object_type, object_ref, content) for every table, column and variable (not the catalog tables)."""
    chunks: list[tuple[str, str, str]] = []
    for table in schema.tables:
        chunks.append(("table", table.ref, describe_table(table)))
        for col in table.columns:
            chunks.append(("column", f"{table.ref}.{col.name}", describe_column(table, col)))
    for var in variables:
        chunks.append(("variable", var.code, describe_variable(var)))
    return chunks


def prepare_table(conn: psycopg.Connection, dimension: int) -> int | None:
    """Make sure the extension, schema and table exist; return the vector dimension the table is typed with."""
    try:
        if not conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute("CREATE SCHEMA IF NOT EXISTS sage")
        conn.execute(_table_ddl(dimension))
        _allow_every_type(conn)
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

    Catalog entries (``acs_table``) are left to :mod:`sage.catalog_index`, except that the entry of a table that
    is now loaded is deleted (its variables are indexed instead); a new vector size deletes them with the rest.
    """
    started = time.perf_counter()
    progress = progress or (lambda *a: None)
    provider = provider or get_provider(settings)
    with db.owner(settings) as conn:
        progress("reading the schema", 0, 1)
        # one indexer at a time per database (setup in a terminal while the app refreshes after a fetch);
        # the lock is the session's and ends when the connection goes back to its pool (DISCARD ALL) or closes
        conn.execute("SELECT pg_advisory_lock(hashtext(%s))", (INDEX_LOCK,))
        typed_dim = prepare_table(conn, provider.dimension)
        db.ensure_vector(conn)  # a pooled connection made before the extension existed has no vector type yet
        schema = introspect(conn, INDEXED_SCHEMAS)
        variables = load_variables(conn)
        chunks = build_chunks(schema, variables)
        progress("reading the schema", 1, 1)

        existing = {
            (t, r): (h, m, d)
            for t, r, h, m, d in conn.execute(
                "SELECT object_type, object_ref, content_hash, model, dimension FROM sage.schema_embeddings "
                "WHERE object_type = ANY(%s)", (list(SCHEMA_TYPES),)
            ).fetchall()
        }
        loaded = sorted({v.table_id for v in variables})
        became_loaded = [("acs_table", r) for (r,) in conn.execute(
            "SELECT object_ref FROM sage.schema_embeddings WHERE object_type = 'acs_table' AND object_ref = ANY(%s)",
            (loaded,)).fetchall()]
        wanted = {(t, r): content_hash(c) for t, r, c in chunks}
        new_dim = typed_dim is not None and typed_dim != provider.dimension  # an untyped vector column takes any
        todo = [
            (t, r, c)
            for t, r, c in chunks
            if rebuild or new_dim or existing.get((t, r)) != (wanted[(t, r)], provider.name, provider.dimension)
        ]
        stale = [key for key in existing if key not in wanted] + became_loaded

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
                            (t, r, c, wanted[(t, r)], provider.name, provider.dimension,
                             np.asarray(v, dtype=np.float32))
                            for (t, r, c), v in zip(todo, vectors, strict=True)
                        ],
                    )
        progress("writing the index", 1, 1)
        counts = dict(
            conn.execute("SELECT object_type, count(*) FROM sage.schema_embeddings GROUP BY 1 ORDER BY 1").fetchall()
        )
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
    """``{"chunks": n, "model": name or None}`` for ``status`` (0 and None before setup); the catalog entries are
    counted with the rest (:func:`sage.catalog_index.catalog_status` counts them apart)."""
    with db.owner(settings) as conn:
        if not db.scalar(conn, "SELECT to_regclass('sage.schema_embeddings')"):
            return {"chunks": 0, "model": None}
        rows = conn.execute(
            "SELECT model, count(*) FROM sage.schema_embeddings GROUP BY model ORDER BY 2 DESC").fetchall()
    return {"chunks": sum(n for _, n in rows), "model": rows[0][0] if rows else None}


__all__ = ["INDEXED_SCHEMAS", "INDEX_LOCK", "SCHEMA_TYPES", "IndexReport", "build_chunks", "content_hash",
           "index_schema", "index_status", "prepare_table"]
