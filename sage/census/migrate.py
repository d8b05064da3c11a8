"""Bring the census schema of an existing database up to :mod:`sage.census.schema`, in the caller's transaction.

The previous version's schema ("v1", docs/design.md before issues 14 and 17) had ``public.estimates`` as a table
keyed (geo_id, variable_code) holding one period per variable, and ``public.geography`` for states and counties
only (``UNIQUE (fips)``, NOT NULL state columns).  :func:`migrate` turns such a database into the current one in
place, keeping every row (fetched tables included):

1. ``public.variables`` gains ``vintages`` (filled with its one period), ``label_changed`` and ``earlier_label``;
2. the table ``public.estimates`` is renamed ``public.estimates_by_vintage``, gains ``vintage`` (filled from
   ``public.variables.vintage``), its key becomes (geo_id, variable_code, vintage) and its constraints and index take
   the names a fresh database gives them;
3. ``public.geography`` loses the state/county-only constraints, gains ``place_name`` and the constraints of every
   level (:data:`~sage.census.schema.GEOGRAPHY_CONSTRAINTS`);
4. ``sage.census_tables`` is keyed per (table, vintage).

The view ``public.estimates`` and everything else is then created by the ordinary DDL.  :func:`migrate` must run
inside a transaction together with that DDL (``sage.census.setup`` does), so a failure leaves the v1 database as
it was.
"""

from __future__ import annotations

import psycopg

from ..db import scalar
from ..errors import NotSetUpError
from . import schema


def schema_version(conn: psycopg.Connection) -> int:
    """0: no census tables; 1: the previous version's (``public.estimates`` is a table); 2: the current one."""
    kind = scalar(conn, "SELECT (SELECT c.relkind::text FROM pg_class c WHERE c.oid = to_regclass('public.estimates'))")
    if kind is None:
        return 2 if scalar(conn, "SELECT to_regclass('public.estimates_by_vintage')") is not None else 0
    return 1 if kind == "r" else 2


def require_current(conn: psycopg.Connection) -> None:
    """Raise :class:`NotSetUpError` (with the command that fixes it) unless the census schema is the current one."""
    version = schema_version(conn)
    if version == 1:
        raise NotSetUpError(
            "This database was set up by an earlier version of census-sage: run `python -m sage setup` to upgrade it "
            "in place (every row, fetched tables included, is kept)."
        )
    if version == 0:
        raise NotSetUpError("The census tables are not there yet: run `python -m sage setup` first.")


def _constraint_names(conn: psycopg.Connection, table: str, types: tuple[str, ...]) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass AND contype = ANY(%s) ORDER BY conname",
        (table, list(types)),
    )]


def _add_constraints(conn: psycopg.Connection, table: str, named: dict[str, str]) -> None:
    for name, definition in named.items():
        conn.execute(f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}")


def migrate(conn: psycopg.Connection) -> list[str]:
    """Migrate a v1 database in the caller's transaction; return what was done (nothing for a current one)."""
    if schema_version(conn) != 1:
        return []
    done: list[str] = []

    # 1. variables: every period loaded, and the label of an earlier one
    conn.execute("ALTER TABLE public.variables ADD COLUMN vintages text[]")
    conn.execute("UPDATE public.variables SET vintages = ARRAY[vintage]")
    conn.execute("ALTER TABLE public.variables ALTER COLUMN vintages SET NOT NULL")
    conn.execute("ALTER TABLE public.variables ADD COLUMN label_changed boolean NOT NULL DEFAULT false")
    conn.execute("ALTER TABLE public.variables ADD COLUMN earlier_label text")
    _add_constraints(conn, "public.variables", schema.VARIABLES_CONSTRAINTS)
    done.append("public.variables: added vintages, label_changed, earlier_label")

    # 2. estimates -> estimates_by_vintage, keyed by period
    conn.execute("ALTER TABLE public.estimates RENAME TO estimates_by_vintage")
    conn.execute("ALTER TABLE public.estimates_by_vintage ADD COLUMN vintage text")
    conn.execute(
        "UPDATE public.estimates_by_vintage e SET vintage = v.vintage FROM public.variables v "
        "WHERE v.variable_code = e.variable_code"
    )
    conn.execute("ALTER TABLE public.estimates_by_vintage ALTER COLUMN vintage SET NOT NULL")
    conn.execute(
        "ALTER TABLE public.estimates_by_vintage ADD CONSTRAINT estimates_by_vintage_vintage_check "
        f"CHECK (vintage ~ '{schema.VINTAGE_PATTERN}')"
    )
    # the key, the foreign keys and the check keep their v1 names after a rename: give them a fresh database's
    for name in _constraint_names(conn, "public.estimates_by_vintage", ("p",)):
        conn.execute(f"ALTER TABLE public.estimates_by_vintage DROP CONSTRAINT {name}")
    conn.execute(
        "ALTER TABLE public.estimates_by_vintage ADD CONSTRAINT estimates_by_vintage_pkey "
        "PRIMARY KEY (geo_id, variable_code, vintage)"
    )
    for name in _constraint_names(conn, "public.estimates_by_vintage", ("f", "c")):
        if name.startswith("estimates_") and not name.startswith("estimates_by_vintage_"):
            new = "estimates_by_vintage_" + name[len("estimates_"):]
            conn.execute(f"ALTER TABLE public.estimates_by_vintage RENAME CONSTRAINT {name} TO {new}")
    conn.execute("DROP INDEX IF EXISTS public.estimates_variable_geo_idx")
    done.append("public.estimates: renamed estimates_by_vintage, keyed (geo_id, variable_code, vintage)")

    # 3. geography: every level
    for name in _constraint_names(conn, "public.geography", ("c", "u")):
        conn.execute(f"ALTER TABLE public.geography DROP CONSTRAINT {name}")
    for column in ("state_fips", "state_abbr", "state_name"):
        conn.execute(f"ALTER TABLE public.geography ALTER COLUMN {column} DROP NOT NULL")
    conn.execute("ALTER TABLE public.geography ADD COLUMN place_name text")
    _add_constraints(conn, "public.geography", schema.GEOGRAPHY_CONSTRAINTS)
    done.append("public.geography: constraints of every level, place_name")

    # 4. bookkeeping per (table, vintage)
    if scalar(conn, "SELECT to_regclass('sage.census_tables')") is not None:
        for name in _constraint_names(conn, "sage.census_tables", ("p",)):
            conn.execute(f"ALTER TABLE sage.census_tables DROP CONSTRAINT {name}")
        conn.execute("ALTER TABLE sage.census_tables ADD CONSTRAINT census_tables_pkey PRIMARY KEY (table_id, vintage)")
        done.append("sage.census_tables: keyed (table_id, vintage)")
    return done


__all__ = ["migrate", "require_current", "schema_version"]
