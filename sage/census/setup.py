"""`python -m sage setup`: everything a fresh database needs, safe to run again.

Steps, each reported through ``progress``: start or reach the server, the ``vector`` extension and schemas, the
census tables with their comments and indexes (migrating a database of the previous version in place,
:mod:`.migrate`), the shipped extracts, the margin-of-error functions and the CPI table (:mod:`.moe_sql`), the reader
role, the embedding index.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql as pgsql

from .. import db, locks
from ..errors import DatabaseError
from ..index import index_schema
from ..settings import Settings
from ..types import StepProgress
from . import loader, migrate, moe_sql, schema

log = logging.getLogger(__name__)

#: built-ins that write or leak outside a read-only transaction (docs/security.md §0, §1); EXECUTE is revoked
#: from PUBLIC on every overload found in pg_catalog
#: how long a setup waits for another process's setup of the same database (a first setup takes a minute at most)
SETUP_WAIT_S = 600.0

RISKY_FUNCTION_PATTERNS = (
    "lo\\_%",
    "lowrite",
    "loread",
    "pg\\_logical\\_emit\\_message",
    "pg\\_advisory%",
    "pg\\_try\\_advisory%",
    "pg\\_notify",
    "set\\_config",
    "dblink%",
    "query\\_to\\_xml%",
    "table\\_to\\_xml%",
    "cursor\\_to\\_xml%",
    "schema\\_to\\_xml%",
    "database\\_to\\_xml%",
    "ts\\_stat",
    "pg\\_cancel\\_backend",
    "pg\\_terminate\\_backend",
    "pg\\_read\\_file",
    "pg\\_read\\_binary\\_file",
    "pg\\_ls\\_%",
    "pg\\_stat\\_file",
    "txid\\_current",
    "pg\\_current\\_xact\\_id",
    "pg\\_export\\_snapshot",
)

#: role settings: only defaults, re-asserted per query with SET LOCAL by sage.execute
ROLE_SETTINGS = {
    "default_transaction_read_only": "on",
    "statement_timeout": "{timeout}ms",
    "lock_timeout": "1s",
    "idle_in_transaction_session_timeout": "10s",
    "temp_file_limit": "256MB",
    "work_mem": "32MB",
    "search_path": "public",
}


@dataclass
class SetupReport:
    """What setup did; ``admin_sql`` is set when the app could not create the reader role itself."""

    steps: list[dict] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    data_skipped: bool = False
    index: dict | None = None
    admin_sql: str | None = None
    seconds: float = 0.0
    #: what the migration of a database of the previous version did (empty: nothing to migrate)
    migrated: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "steps": self.steps,
            "rows": self.rows,
            "data_skipped": self.data_skipped,
            "index": self.index,
            "admin_sql": self.admin_sql,
            "migrated": self.migrated,
            "seconds": round(self.seconds, 3),
        }


def reader_role_sql(dbname: str, password: str | None, timeout_ms: int) -> list[pgsql.SQL | pgsql.Composed]:
    """The statements that create and confine the reader role (also printed for administrators)."""
    role = pgsql.Identifier(db.READER_ROLE)
    stmts: list[pgsql.SQL | pgsql.Composed] = [
        pgsql.SQL(
            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = {name}) THEN "
            "CREATE ROLE {role} LOGIN; END IF; END $$"
        ).format(name=pgsql.Literal(db.READER_ROLE), role=role),
        pgsql.SQL(
            "ALTER ROLE {role} WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT NOREPLICATION NOBYPASSRLS "
            "CONNECTION LIMIT 20"
        ).format(role=role),
    ]
    if password:
        stmts.append(pgsql.SQL("ALTER ROLE {role} WITH PASSWORD {pw}").format(role=role, pw=pgsql.Literal(password)))
    stmts += [
        pgsql.SQL("REVOKE ALL ON SCHEMA public FROM PUBLIC"),
        pgsql.SQL("REVOKE ALL ON SCHEMA sage FROM PUBLIC"),
        pgsql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA sage FROM {role}").format(role=role),
        pgsql.SQL("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM {role}").format(role=role),
        pgsql.SQL("GRANT USAGE ON SCHEMA public TO {role}").format(role=role),
        pgsql.SQL("GRANT SELECT ON {tables} TO {role}").format(
            tables=pgsql.SQL(", ").join(pgsql.Identifier(*t.split(".")) for t in schema.TABLES), role=role
        ),
        # the CPI table and the margin-of-error functions (EXECUTE on them is revoked from PUBLIC by moe_sql.install)
        *moe_sql.grant_statements(db.READER_ROLE),
        pgsql.SQL("REVOKE TEMPORARY, CREATE ON DATABASE {db} FROM PUBLIC").format(db=pgsql.Identifier(dbname)),
        pgsql.SQL(
            "DO $$ DECLARE f regprocedure; BEGIN FOR f IN SELECT p.oid::regprocedure FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname IN ('pg_catalog', 'public') AND ("
            + " OR ".join(f"p.proname LIKE '{pat}'" for pat in RISKY_FUNCTION_PATTERNS)
            + ") LOOP EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f); END LOOP; END $$"
        ),
    ]
    for name, value in ROLE_SETTINGS.items():
        stmts.append(
            pgsql.SQL("ALTER ROLE {role} SET {name} = {value}").format(
                role=role, name=pgsql.Identifier(name), value=pgsql.Literal(value.format(timeout=timeout_ms))
            )
        )
    return stmts


def _as_text(conn: psycopg.Connection, stmts: list) -> str:
    return ";\n".join(s.as_string(conn) for s in stmts) + ";"


def create_reader_role(conn: psycopg.Connection, settings: Settings) -> str | None:
    """Create or refresh the reader role; return the SQL for an administrator if we lack the privilege."""
    dbname = conn.info.dbname
    password = None
    if not settings.embedded:
        row = conn.execute("SELECT password FROM sage.reader_login WHERE role = %s", (db.READER_ROLE,)).fetchone()
        password = row[0] if row else secrets.token_urlsafe(24)
    stmts = reader_role_sql(dbname, password, settings.statement_timeout_ms)
    try:
        with conn.transaction():
            for stmt in stmts:
                conn.execute(stmt)
            if password:
                conn.execute(
                    "INSERT INTO sage.reader_login (role, password) VALUES (%s, %s) "
                    "ON CONFLICT (role) DO UPDATE SET password = EXCLUDED.password",
                    (db.READER_ROLE, password),
                )
    except psycopg.errors.InsufficientPrivilege:
        shown = reader_role_sql(dbname, "<choose a password>", settings.statement_timeout_ms)
        return _as_text(conn, shown)
    return None


def run_setup(settings: Settings, progress: StepProgress | None = None, *, build_index: bool = True) -> SetupReport:
    """Prepare the database (idempotent).  Raises :class:`~sage.errors.SageError` subclasses with what to fix."""
    progress = progress or (lambda *a: None)
    report = SetupReport()
    started = time.perf_counter()

    def step(name: str, fn):
        t = time.perf_counter()
        progress(name, 0, 1)
        out = fn()
        report.steps.append({"step": name, "seconds": round(time.perf_counter() - t, 3)})
        progress(name, 1, 1)
        return out

    stack = ExitStack()  # the pooled owner connection, returned (or closed, after an error) at the end
    conn = step("starting the database", lambda: stack.enter_context(db.owner(settings)))
    # several app processes starting on one new database: one sets it up, the others wait and find it done.  The
    # lock is held on a connection of its own for the whole setup (the index too) and ends when it closes.
    guard_conn = stack.enter_context(db.connect(settings, autocommit=True))
    locks.wait_lock(guard_conn, locks.SETUP, "census-sage setup", SETUP_WAIT_S)
    with stack:
        def create_schema():
            # one transaction: a database of the previous version is migrated and completed, or left as it was
            try:
                with conn.transaction():
                    report.migrated = migrate.migrate(conn)
                    conn.execute(schema.DDL)
                    for stmt in schema.comment_statements():
                        conn.execute(stmt)
            except psycopg.errors.FeatureNotSupported as exc:
                raise DatabaseError(f"The vector extension is not available on this server: {exc}") from exc
            except psycopg.errors.UndefinedFile as exc:
                raise DatabaseError(
                    "The pgvector extension is not installed on the server at DATABASE_URL; install pgvector "
                    f"(https://github.com/pgvector/pgvector) or unset DATABASE_URL to use the embedded server. ({exc})"
                ) from exc
            except psycopg.errors.IntegrityError as exc:  # a row of an earlier version the new rules refuse
                first = str(exc).strip().splitlines()[0]
                raise DatabaseError(
                    f"Upgrading the census tables failed ({first}); the transaction was rolled back, so the database "
                    "is as it was. Fix or delete the row named, then run `python -m sage setup` again.",
                    detail=str(exc),
                ) from exc

        step("creating tables", create_schema)

        loaded = step(
            "loading the census extracts", lambda: loader.load_shipped(conn, settings.data_path, progress)
        )
        report.data_skipped = loaded["skipped"]
        step(
            "installing the margin-of-error functions and the CPI table",
            lambda: moe_sql.install(conn, settings.data_path),
        )
        report.rows = {
            t: conn.execute(pgsql.SQL("SELECT count(*) FROM {}").format(pgsql.Identifier(*t.split(".")))).fetchone()[0]
            for t in schema.TABLES
        }
        conn.execute("ANALYZE public.geography, public.variables, public.estimates_by_vintage")
        report.admin_sql = step("creating the read-only role", lambda: create_reader_role(conn, settings))

        # after the data are committed: the offline planner's catalog of this data generation, built once here and
        # read back by every process in milliseconds (sage.planner.offline.catalog_store)
        step("building the planner's catalog", lambda: _build_catalog(settings))
        if build_index:
            report.index = step("building the retrieval index", lambda: _build_index(settings, progress))
    report.seconds = time.perf_counter() - started
    return report


def ensure_set_up(settings: Settings, progress: StepProgress | None = None, *,
                  announce: Callable[[], None] | None = None) -> SetupReport | None:
    """Set the database up unless it is (one cheap statement, :func:`sage.db.is_set_up`): what a command or the
    notebook API does before its first question, as the app does on its first start.  None when it was set up;
    else the report of the setup just run (``announce`` is called before it starts)."""
    if db.run(settings, db.OWNER, db.is_set_up):
        return None
    if announce is not None:
        announce()
    return run_setup(settings, progress=progress)


def _build_catalog(settings: Settings) -> None:
    from ..planner.offline.catalog import refresh_catalog

    refresh_catalog(settings)


def _build_index(settings: Settings, progress: StepProgress) -> dict[str, Any]:
    return index_schema(settings, progress=progress).to_dict()
