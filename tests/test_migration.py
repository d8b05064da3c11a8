"""A database set up by the previous version (v1: ``public.estimates`` a table keyed (geo_id, variable_code), the
state/county-only geography) is migrated in place by setup, in one transaction, keeping every row.

The v1 database is built from the v1 DDL below (``sage/census/schema.py``'s DDL before issues 14 and 17, copied
verbatim but for one long line wrapped) and filled as the v1 loader did: the shipped ``data/acs/`` files, its
``sage.data_loads`` and ``sage.census_tables`` entries, and a table fetched from the Census API (B25003, 2018-2022)
that must survive.
It runs on its own embedded server, like a user's data directory.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
from collections import Counter

import psycopg
import pytest

from sage import db
from sage.census import schema
from sage.census.setup import run_setup
from sage.errors import DatabaseError
from sage.settings import PROJECT_ROOT

from .conftest import make_settings

ACS = PROJECT_ROOT / "data" / "acs"

V1_DDL = r"""
CREATE EXTENSION IF NOT EXISTS vector;
CREATE SCHEMA IF NOT EXISTS sage;

CREATE TABLE IF NOT EXISTS public.geography (
    geo_id      text PRIMARY KEY CHECK (geo_id ~ '^(0400000US[0-9]{2}|0500000US[0-9]{5})$'),
    fips        text NOT NULL UNIQUE CHECK (fips ~ '^[0-9]{2}([0-9]{3})?$'),
    level       text NOT NULL CHECK (level IN ('state', 'county')),
    name        text NOT NULL,
    state_fips  text NOT NULL CHECK (state_fips ~ '^[0-9]{2}$'),
    state_abbr  text NOT NULL CHECK (state_abbr ~ '^[A-Z]{2}$'),
    state_name  text NOT NULL,
    county_fips text CHECK (county_fips ~ '^[0-9]{3}$'),
    county_name text,
    CHECK ((level = 'state') = (county_fips IS NULL AND county_name IS NULL)),
    CHECK (fips = state_fips || coalesce(county_fips, ''))
);

CREATE TABLE IF NOT EXISTS public.variables (
    variable_code text PRIMARY KEY CHECK (variable_code ~ '^[BC][0-9]{5}[A-Z]{0,2}_[0-9]{3}E$'),
    label         text NOT NULL,
    concept       text NOT NULL,
    category      text NOT NULL CHECK (category IN ('income', 'poverty', 'housing', 'employment', 'demographics',
                                                    'education', 'transportation', 'health_insurance')),
    table_id      text NOT NULL,
    universe      text,
    vintage       text NOT NULL CHECK (vintage ~ '^[0-9]{4}-[0-9]{4}$'),
    CHECK (variable_code LIKE table_id || '\_%')
);

CREATE TABLE IF NOT EXISTS public.estimates (
    geo_id        text NOT NULL REFERENCES public.geography (geo_id),
    variable_code text NOT NULL REFERENCES public.variables (variable_code),
    estimate      numeric,
    margin_error  numeric CHECK (margin_error >= 0),
    source        text NOT NULL,
    PRIMARY KEY (geo_id, variable_code)
);

-- the planners' queries filter by variable first, then join geography by level and state
CREATE INDEX IF NOT EXISTS estimates_variable_geo_idx ON public.estimates (variable_code, geo_id) INCLUDE (estimate);
CREATE INDEX IF NOT EXISTS geography_level_state_idx ON public.geography (level, state_abbr);
CREATE INDEX IF NOT EXISTS geography_state_name_idx ON public.geography (state_name, level);
CREATE INDEX IF NOT EXISTS geography_county_name_idx ON public.geography (lower(county_name));
CREATE INDEX IF NOT EXISTS variables_table_idx ON public.variables (table_id);

-- internal bookkeeping: never granted to the reader role, never shown to a planner
CREATE TABLE IF NOT EXISTS sage.data_loads (
    name       text PRIMARY KEY,
    sha256     text NOT NULL,
    rows       jsonb NOT NULL,
    loaded_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS sage.census_tables (
    table_id   text PRIMARY KEY,
    vintage    text NOT NULL,
    source     text NOT NULL,
    variables  integer NOT NULL,
    rows       integer NOT NULL,
    loaded_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS sage.questions (
    id          bigserial PRIMARY KEY,
    question    text NOT NULL,
    planner     text NOT NULL,
    sql         text,
    assumptions jsonb NOT NULL DEFAULT '[]',
    display_hint text,
    attempts    jsonb NOT NULL DEFAULT '[]',
    outcome     text NOT NULL CHECK (outcome IN ('answered', 'declined', 'failed')),
    error       jsonb,
    row_count   integer,
    timings_ms  jsonb NOT NULL DEFAULT '{}',
    usage       jsonb NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS questions_created_idx ON sage.questions (created_at DESC);
CREATE TABLE IF NOT EXISTS sage.reader_login (
    role     text PRIMARY KEY,
    password text NOT NULL
);
"""

#: a table fetched from the Census API by v1 (its rows are the shipped B25001 housing units, relabelled): it must
#: survive the migration with its period, source and bookkeeping
FETCHED_SOURCE = "census-api:2022/acs/acs5"


def _csv(name: str) -> list[dict]:
    path = ACS / name
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _fill_v1(conn: psycopg.Connection) -> dict:
    """The v1 tables as the v1 loader left them, plus one fetched table; returns what was written."""
    geography = _csv("geography.csv")
    variables = _csv("variables.csv")
    estimates = _csv("estimates.csv.gz")
    with conn.cursor() as cur:
        with cur.copy("COPY public.geography FROM STDIN") as copy:
            for g in geography:
                copy.write_row([g[k] or None for k in ("geo_id", "fips", "level", "name", "state_fips", "state_abbr",
                                                       "state_name", "county_fips", "county_name")])
        with cur.copy("COPY public.variables FROM STDIN") as copy:
            for v in variables:
                copy.write_row([v["code"], v["label"], v["concept"], v["category"], v["table_id"],
                                v["universe"] or None, v["vintage"]])
            copy.write_row(["B25003_001E", "Estimate!!Total:", "Tenure", "housing", "B25003",
                            "Occupied housing units", "2018-2022"])
        with cur.copy("COPY public.estimates FROM STDIN") as copy:
            for e in estimates:
                copy.write_row([e["geo_id"], e["variable_code"], e["estimate"] or None, e["margin_error"] or None,
                                e["source"]])
            fetched = [e for e in estimates if e["variable_code"] == "B25001_001E"]
            for e in fetched:
                copy.write_row([e["geo_id"], "B25003_001E", e["estimate"], "12", FETCHED_SOURCE])
        digest = hashlib.sha256()
        for name in ("geography.csv", "variables.csv", "estimates.csv.gz"):
            digest.update((ACS / name).read_bytes())
        counts = {"geography": len(geography), "variables": len(variables), "estimates": len(estimates)}
        cur.execute("INSERT INTO sage.data_loads (name, sha256, rows) VALUES ('shipped', %s, %s)",
                    (digest.hexdigest(), json.dumps(counts)))
        tables = Counter(v["table_id"] for v in variables)
        rows = Counter(e["variable_code"].split("_")[0] for e in estimates)
        vintage = {v["table_id"]: v["vintage"] for v in variables}
        for table_id, n in tables.items():
            cur.execute("INSERT INTO sage.census_tables (table_id, vintage, source, variables, rows) "
                        "VALUES (%s, %s, 'shipped', %s, %s)", (table_id, vintage[table_id], n, rows[table_id]))
        cur.execute("INSERT INTO sage.census_tables (table_id, vintage, source, variables, rows) "
                    "VALUES ('B25003', '2018-2022', %s, 1, %s)", (FETCHED_SOURCE, len(fetched)))
    return {"estimates": len(estimates), "fetched": len(fetched), "vintage": vintage}


def _schema(conn: psycopg.Connection) -> dict:
    """The census schema as the catalogs describe it: columns, constraints, indexes, the view, comments."""
    relations = ("public.geography", "public.variables", "public.estimates_by_vintage", "public.estimates",
                 "sage.census_tables", "sage.data_loads")
    out: dict = {}
    for rel in relations:
        out[rel] = {
            "kind": conn.execute("SELECT relkind::text FROM pg_class WHERE oid = %s::regclass", (rel,)).fetchone(),
            "columns": conn.execute(
                "SELECT attname, format_type(atttypid, atttypmod), attnotnull, pg_get_expr(d.adbin, d.adrelid), "
                "col_description(a.attrelid, a.attnum) FROM pg_attribute a "
                "LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
                "WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
                (rel,)).fetchall(),
            "constraints": sorted(conn.execute(
                "SELECT conname, contype::text, pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE conrelid = %s::regclass AND contype <> 'n'", (rel,)).fetchall()),
            "not_null": sorted(r[0] for r in conn.execute(
                "SELECT a.attname FROM pg_attribute a WHERE a.attrelid = %s::regclass AND a.attnum > 0 "
                "AND a.attnotnull", (rel,))),
            "indexes": sorted(conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname || '.' || tablename = %s",
                (rel,)).fetchall()),
            "comment": conn.execute("SELECT obj_description(%s::regclass, 'pg_class')", (rel,)).fetchone(),
        }
    out["view"] = conn.execute("SELECT pg_get_viewdef('public.estimates'::regclass)").fetchone()
    out["grants"] = sorted(conn.execute(
        "SELECT table_name, privilege_type FROM information_schema.role_table_grants WHERE grantee = %s",
        (db.READER_ROLE,)).fetchall())
    return out


@pytest.fixture(scope="module")
def v1_settings(tmp_path_factory):
    """A data directory whose database was set up by v1 (tables, data, bookkeeping, a fetched table)."""
    s = make_settings(data_dir=tmp_path_factory.mktemp("v1-db") / "pgdata")
    with db.connect(s, autocommit=True) as conn:
        with conn.transaction():
            conn.execute(V1_DDL)
            filled = _fill_v1(conn)
    return s, filled


def test_a_failed_migration_changes_nothing(v1_settings):
    """The migration and the new DDL are one transaction: a row the new rules refuse rolls everything back."""
    s, _ = v1_settings
    with db.connect(s, autocommit=True) as conn:
        conn.execute("UPDATE public.geography SET name = 'Not Its Name' WHERE geo_id = '0500000US44007'")
        before = conn.execute(
            "SELECT count(*), (SELECT relkind::text FROM pg_class WHERE oid = 'public.estimates'::regclass) "
            "FROM public.estimates").fetchone()
    try:
        with pytest.raises(DatabaseError) as err:
            run_setup(s, build_index=False)
        assert "rolled back" in err.value.message and "geography_name_check" in err.value.message
        with db.connect(s, autocommit=True) as conn:
            after = conn.execute(
                "SELECT count(*), (SELECT relkind::text FROM pg_class WHERE oid = 'public.estimates'::regclass) "
                "FROM public.estimates").fetchone()
            assert after == before and after[1] == "r"  # still the v1 table, every row
            assert conn.execute("SELECT to_regclass('public.estimates_by_vintage')").fetchone() == (None,)
    finally:
        with db.connect(s, autocommit=True) as conn:
            conn.execute("UPDATE public.geography SET name = 'Providence County, Rhode Island' "
                         "WHERE geo_id = '0500000US44007'")


def test_setup_migrates_a_v1_database_in_place(v1_settings, settings):
    s, filled = v1_settings
    report = run_setup(s, build_index=False)
    assert report.migrated and any("estimates_by_vintage" in step for step in report.migrated)
    with db.connect(s, autocommit=True) as conn:
        kinds = dict(conn.execute(
            "SELECT relname, relkind::text FROM pg_class WHERE relname IN ('estimates', 'estimates_by_vintage') "
            "AND relnamespace = 'public'::regnamespace").fetchall())
        by_vintage = dict(conn.execute(
            "SELECT vintage || ' ' || source, count(*) FROM public.estimates_by_vintage "
            "WHERE source = %s OR vintage = '2018-2022' GROUP BY 1", (FETCHED_SOURCE,)).fetchall())
        fetched_shown = conn.execute(
            "SELECT count(*) FROM public.estimates WHERE variable_code = 'B25003_001E'").fetchone()[0]
        book = conn.execute("SELECT table_id, vintage, source, rows FROM sage.census_tables "
                            "WHERE table_id IN ('B25003', 'B01003') ORDER BY 1, 2").fetchall()
        variables = dict(conn.execute(
            "SELECT variable_code, vintages FROM public.variables WHERE variable_code IN "
            "('B25003_001E', 'B01003_001E', 'B17025_002E')").fetchall())
        counts = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in schema.TABLES}
        migrated = _schema(conn)
        loads = dict(conn.execute("SELECT name, sha256 FROM sage.data_loads").fetchall())
    assert kinds == {"estimates": "v", "estimates_by_vintage": "r"}
    # the fetched table kept its rows, its period, its source and its bookkeeping; public.estimates shows it
    assert by_vintage[f"2018-2022 {FETCHED_SOURCE}"] == filled["fetched"] == fetched_shown
    assert book[-1] == ("B25003", "2018-2022", FETCHED_SOURCE, filled["fetched"])
    assert ("B01003", "2014-2018", "shipped", 52 + 3211) in book
    assert variables == {"B25003_001E": ["2018-2022"], "B01003_001E": ["2014-2018", "2019-2023"],
                         "B17025_002E": ["2018-2022"]}
    # the shipped places, the nation and the 2014-2018 period were loaded on top
    with db.owner(settings) as fresh:
        fresh_counts = {t: fresh.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in schema.TABLES}
        fresh_schema = _schema(fresh)
    assert counts == {t: n + (filled["fetched"] if t.startswith("public.estimates") else 0)
                      + (1 if t == "public.variables" else 0) for t, n in fresh_counts.items()}
    assert set(loads) == {"shipped", "acs-places", "acs-2014-2018"}
    # and the schema is exactly a fresh database's: columns, constraints, indexes, view, comments, grants
    for key in fresh_schema:
        assert migrated[key] == fresh_schema[key], key

    again = run_setup(s, build_index=False)
    assert again.migrated == [] and again.data_skipped is True
