"""What a PostgreSQL database holds: tables and views, their columns, keys and comments.

It reads the system catalogs (``pg_class``, ``pg_attribute``, ``pg_constraint``, ``pg_description``) rather than
``information_schema`` because only the catalogs carry comments, row estimates and foreign-key targets in one
place, and they work the same on every PostgreSQL from 12 on, not only on ours.  The internal schema ``sage`` and
the system schemas are never described: the planner must not see them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

#: schemas that are never introspected, whatever the caller asks for
EXCLUDED_SCHEMAS = ("sage", "pg_catalog", "information_schema", "pg_toast")

_KINDS = {"r": "table", "p": "partitioned table", "v": "view", "m": "materialized view", "f": "foreign table"}


@dataclass
class Column:
    name: str
    type: str  # as PostgreSQL prints it: "text", "numeric(12,2)", "vector(384)"
    nullable: bool
    default: str | None = None
    primary_key: bool = False
    foreign_key: str | None = None  # "schema.table.column" this column references
    comment: str | None = None


@dataclass
class Table:
    schema: str
    name: str
    kind: str  # table | partitioned table | view | materialized view | foreign table
    row_estimate: int | None  # from the planner statistics; None when the table was never analyzed, or for views
    comment: str | None
    columns: list[Column] = field(default_factory=list)

    @property
    def ref(self) -> str:
        return f"{self.schema}.{self.name}"

    def column(self, name: str) -> Column:
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(f"{self.ref} has no column {name!r}")


@dataclass
class IntrospectedSchema:
    tables: list[Table] = field(default_factory=list)

    def table(self, ref: str) -> Table:
        """A table by ``schema.name`` (or bare name when unambiguous)."""
        for t in self.tables:
            if t.ref == ref:
                return t
        matches = [t for t in self.tables if t.name == ref]
        if len(matches) == 1:
            return matches[0]
        raise KeyError(f"no table {ref!r} in the introspected schema")

    @property
    def refs(self) -> list[str]:
        return [t.ref for t in self.tables]


_TABLES_SQL = """
SELECT n.nspname, c.relname, c.relkind::text,
       CASE WHEN c.relkind IN ('r', 'p', 'm') AND c.reltuples >= 0 THEN c.reltuples::bigint END,
       obj_description(c.oid, 'pg_class'), c.oid::bigint
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND NOT c.relispartition
  AND n.nspname <> ALL(%(excluded)s)
  AND n.nspname NOT LIKE 'pg\\_%%'
  AND (%(all)s OR n.nspname = ANY(%(schemas)s))
ORDER BY n.nspname, c.relname
"""

_COLUMNS_SQL = """
SELECT a.attrelid::bigint, a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull,
       pg_get_expr(d.adbin, d.adrelid), col_description(a.attrelid, a.attnum),
       EXISTS (SELECT 1 FROM pg_constraint p
               WHERE p.conrelid = a.attrelid AND p.contype = 'p' AND a.attnum = ANY(p.conkey)),
       (SELECT fn.nspname || '.' || fc.relname || '.' || fa.attname
          FROM pg_constraint f
          JOIN pg_class fc ON fc.oid = f.confrelid
          JOIN pg_namespace fn ON fn.oid = fc.relnamespace
          JOIN pg_attribute fa ON fa.attrelid = f.confrelid
                              AND fa.attnum = f.confkey[array_position(f.conkey, a.attnum)]
         WHERE f.conrelid = a.attrelid AND f.contype = 'f' AND a.attnum = ANY(f.conkey)
         ORDER BY f.conname LIMIT 1)
FROM pg_attribute a
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = ANY(%(oids)s) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum
"""


def introspect(engine: Any, schemas: Iterable[str] | None = ("public",)) -> IntrospectedSchema:
    """Describe the tables and views of ``schemas`` (None: every user schema).

    ``engine`` is a SQLAlchemy engine or connection (``sage.db.engine(settings)``) or a psycopg connection; only
    catalog queries are run, so any role that can connect can introspect.  ``sage`` and the system schemas are
    left out even when named.
    """
    wanted = None if schemas is None else [s for s in schemas]
    params = {"excluded": list(EXCLUDED_SCHEMAS), "all": wanted is None, "schemas": wanted or []}
    with _cursor(engine) as run:
        table_rows = run(_TABLES_SQL, params)
        by_oid: dict[int, Table] = {}
        tables: list[Table] = []
        for schema, name, relkind, estimate, comment, oid in table_rows:
            table = Table(schema, name, _KINDS.get(relkind, relkind), estimate, comment)
            by_oid[oid] = table
            tables.append(table)
        if by_oid:
            for oid, name, typ, nullable, default, comment, pk, fk in run(_COLUMNS_SQL, {"oids": list(by_oid)}):
                by_oid[oid].columns.append(Column(name, typ, nullable, default, pk, fk, comment))
    return IntrospectedSchema(tables)


class _cursor:
    """Run catalog queries through whatever connection-like object the caller has."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self._owned: Any = None  # a SQLAlchemy connection borrowed from an engine

    def __enter__(self):
        import psycopg

        engine = self._engine
        if isinstance(engine, psycopg.Connection):
            conn = engine
        elif hasattr(engine, "exec_driver_sql"):  # a SQLAlchemy Connection: use its psycopg connection
            conn = engine.connection.driver_connection
        else:  # a SQLAlchemy Engine: borrow a pooled connection for the two queries
            self._owned = engine.connect()
            conn = self._owned.connection.driver_connection

        def run(sql: str, params: dict) -> list[tuple]:
            with conn.cursor() as cur:
                cur.execute(sql, params)
                return cur.fetchall()

        return run

    def __exit__(self, *exc) -> None:
        if self._owned is not None:
            self._owned.close()  # returns it to the pool (rolled back)


__all__ = ["Column", "EXCLUDED_SCHEMAS", "IntrospectedSchema", "Table", "introspect"]
