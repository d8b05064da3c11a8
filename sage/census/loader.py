"""Load the shipped ACS extracts (:mod:`sage.census.extracts`: the three file sets, read and validated) into the
census tables.

The load is one transaction of COPYs and upserts.  It is idempotent: a file set whose sha256 is recorded and whose
rows are all still there is skipped, so a second setup changes nothing.

Each set owns the estimates of its geography levels and its (variable, period) pairs; reloading a set replaces
exactly those rows.  Rows fetched by ``census fetch`` are never touched: a (table, period) recorded in
``sage.census_tables`` with a source other than ``shipped`` is left out of every set, and the variables of a table
fetched for a period at least as new as the shipped one keep their fetched labels.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import psycopg

from ..types import StepProgress
from . import schema
from .extracts import ESTIMATE_COLUMNS, GEOGRAPHY_COLUMNS, SHIPPED, Extract, read_shipped, set_digests


def _copy(cur: psycopg.Cursor, table: str, columns: tuple[str, ...], rows: Iterable[tuple]) -> None:
    with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def _table_of(code: str) -> str:
    return code.split("_", 1)[0]


def fetched_pairs(conn: psycopg.Connection) -> set[tuple[str, str]]:
    """(table, period) pairs that ``census fetch`` loaded: the shipped loader leaves them alone."""
    return {(r[0], r[1]) for r in conn.execute(
        "SELECT table_id, vintage FROM sage.census_tables WHERE source <> %s", (SHIPPED,))}


def _owned_pairs(pairs: Iterable[tuple[str, str]], fetched: set[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted(p for p in pairs if (_table_of(p[0]), p[1]) not in fetched)


def _domain_params(levels: Iterable[str], pairs: list[tuple[str, str]]) -> dict:
    return {"codes": [p[0] for p in pairs], "vintages": [p[1] for p in pairs], "levels": list(levels)}


def _still_loaded(conn: psycopg.Connection, summary: dict, fetched: set[tuple[str, str]]) -> bool:
    """True when every row a set's ``summary`` (:meth:`Extract.summary`, as recorded in ``sage.data_loads``) lists
    is still in the database, outside fetched tables."""
    if not isinstance(summary, dict) or "pairs" not in summary:
        return False  # recorded by an earlier version: load again
    for level, n in summary.get("geography_levels", {}).items():
        row = conn.execute("SELECT count(*) FROM public.geography WHERE level = %s", (level,)).fetchone()
        if not row or row[0] < n:
            return False
    counts = {tuple(k.split(" ", 1)): n for k, n in summary["pairs"].items()}
    pairs = _owned_pairs(counts, fetched)
    expected = sum(counts[p] for p in pairs)
    found = conn.execute(
        """SELECT count(*) FROM public.estimates_by_vintage e
           JOIN public.geography g ON g.geo_id = e.geo_id
           JOIN unnest(%(codes)s::text[], %(vintages)s::text[]) AS p(code, vintage)
             ON p.code = e.variable_code AND p.vintage = e.vintage
           WHERE g.level = ANY(%(levels)s)""",
        _domain_params(summary["levels"], pairs),
    ).fetchone()
    return found is not None and found[0] == expected


#: make ``vintages`` (every period with rows, ascending) and ``vintage`` (the last of them) agree with the rows
REFRESH_VINTAGES = """UPDATE public.variables v
SET vintages = s.vintages, vintage = s.vintages[cardinality(s.vintages)]
FROM (SELECT variable_code, array_agg(DISTINCT vintage ORDER BY vintage) AS vintages
      FROM public.estimates_by_vintage WHERE variable_code = ANY(%s) GROUP BY variable_code) s
WHERE v.variable_code = s.variable_code AND v.vintages IS DISTINCT FROM s.vintages"""


#: the same, leaving out the rows of a release ``census update`` holds (``sage.census_pending``): a setup or a fetch
#: while an update is under way (or interrupted) never makes its period the latest of some tables only
REFRESH_VINTAGES_HELD = REFRESH_VINTAGES.replace(
    "WHERE variable_code = ANY(%s) GROUP BY variable_code",
    "WHERE variable_code = ANY(%s) AND NOT EXISTS (SELECT FROM sage.census_pending p WHERE p.variable_code = "
    "estimates_by_vintage.variable_code AND p.vintage = estimates_by_vintage.vintage) GROUP BY variable_code")


def refresh_vintages(cur: psycopg.Cursor, codes: Iterable[str]) -> int:
    """Set ``vintages``/``vintage`` of ``codes`` from their rows in ``public.estimates_by_vintage`` (not the rows
    of a release ``census update`` still holds)."""
    held = cur.execute("SELECT to_regclass('sage.census_pending') IS NOT NULL").fetchone()
    cur.execute(REFRESH_VINTAGES_HELD if held and held[0] else REFRESH_VINTAGES, (sorted(set(codes)),))
    return cur.rowcount


def _load_geography(cur: psycopg.Cursor, rows: list[tuple]) -> None:
    cur.execute("CREATE TEMP TABLE stage_geography (LIKE public.geography) ON COMMIT DROP")
    _copy(cur, "stage_geography", GEOGRAPHY_COLUMNS, rows)
    cols = [c for c in GEOGRAPHY_COLUMNS if c != "geo_id"]
    cur.execute(
        f"""INSERT INTO public.geography ({', '.join(GEOGRAPHY_COLUMNS)})
            SELECT {', '.join(GEOGRAPHY_COLUMNS)} FROM stage_geography
            ON CONFLICT (geo_id) DO UPDATE SET {', '.join(f'{c} = EXCLUDED.{c}' for c in cols)}
            WHERE ({', '.join(f'geography.{c}' for c in cols)}) IS DISTINCT FROM
                  ({', '.join(f'EXCLUDED.{c}' for c in cols)})"""
    )
    cur.execute("DROP TABLE stage_geography")


def _load_variables(cur: psycopg.Cursor, rows: list[tuple], fetched: set[tuple[str, str]]) -> list[tuple]:
    """Upsert the shipped variables, except those of tables fetched for a period at least as new (their labels are
    the fetched ones).  Periods are not set here for existing rows: :func:`refresh_vintages` does that."""
    keep = [v for v in rows if not any(t == v[4] and vintage >= v[6] for t, vintage in fetched)]
    cur.execute(
        "CREATE TEMP TABLE stage_variables (variable_code text, label text, concept text, category text, "
        "table_id text, universe text, vintage text) ON COMMIT DROP"
    )
    _copy(cur, "stage_variables", ("variable_code", "label", "concept", "category", "table_id", "universe",
                                   "vintage"), keep)
    cur.execute(
        """INSERT INTO public.variables (variable_code, label, concept, category, table_id, universe, vintage, vintages)
           SELECT variable_code, label, concept, category, table_id, universe, vintage, ARRAY[vintage]
           FROM stage_variables
           ON CONFLICT (variable_code) DO UPDATE SET label = EXCLUDED.label, concept = EXCLUDED.concept,
             category = EXCLUDED.category, table_id = EXCLUDED.table_id, universe = EXCLUDED.universe
           WHERE (variables.label, variables.concept, variables.category, variables.table_id, variables.universe)
             IS DISTINCT FROM (EXCLUDED.label, EXCLUDED.concept, EXCLUDED.category, EXCLUDED.table_id,
                               EXCLUDED.universe)"""
    )
    cur.execute("DROP TABLE stage_variables")
    return keep


def _load_estimates(cur: psycopg.Cursor, ex: Extract, fetched: set[tuple[str, str]], *, bulk: bool) -> int:
    """Make the set's estimates (its levels and (variable, period) pairs, outside fetched tables) those of its
    files.  Into an empty table (``bulk``) the rows are copied straight in; otherwise they are merged through a
    staging table, so that rows already right are not written again (a reload after a few rows went missing writes
    those rows, not the whole set)."""
    pairs = _owned_pairs(ex.pairs(), fetched)
    owned = set(pairs)
    rows = [e for e in ex.estimates if (e[1], e[5]) in owned]
    if bulk:
        _copy(cur, "public.estimates_by_vintage", ESTIMATE_COLUMNS, rows)
        return len(rows)
    cur.execute("CREATE TEMP TABLE stage_estimates (LIKE public.estimates_by_vintage) ON COMMIT DROP")
    _copy(cur, "stage_estimates", ESTIMATE_COLUMNS, rows)
    cur.execute("CREATE INDEX ON stage_estimates (geo_id, variable_code, vintage)")
    cur.execute("ANALYZE stage_estimates")
    cur.execute(
        """DELETE FROM public.estimates_by_vintage e
           USING public.geography g, unnest(%(codes)s::text[], %(vintages)s::text[]) AS p(code, vintage)
           WHERE g.geo_id = e.geo_id AND g.level = ANY(%(levels)s) AND p.code = e.variable_code
             AND p.vintage = e.vintage
             AND NOT EXISTS (SELECT FROM stage_estimates s WHERE s.geo_id = e.geo_id
                             AND s.variable_code = e.variable_code AND s.vintage = e.vintage)""",
        _domain_params(ex.levels, pairs),
    )
    columns = ", ".join(ESTIMATE_COLUMNS)
    cur.execute(
        f"""INSERT INTO public.estimates_by_vintage ({columns}) SELECT {columns} FROM stage_estimates
            ON CONFLICT (geo_id, variable_code, vintage) DO UPDATE SET estimate = EXCLUDED.estimate,
              margin_error = EXCLUDED.margin_error, source = EXCLUDED.source
            WHERE (estimates_by_vintage.estimate, estimates_by_vintage.margin_error, estimates_by_vintage.source)
              IS DISTINCT FROM (EXCLUDED.estimate, EXCLUDED.margin_error, EXCLUDED.source)"""
    )
    cur.execute("DROP TABLE stage_estimates")
    return len(rows)


def _bulk_begin(cur: psycopg.Cursor) -> bool:
    """Into an empty ``public.estimates_by_vintage`` (a fresh setup), COPY without the key, the foreign keys and the
    index, and build them afterwards (:func:`_bulk_end`): about four times faster than checking row by row.  The
    table is locked until commit either way; a table with rows keeps its constraints."""
    if cur.execute("SELECT EXISTS (SELECT FROM public.estimates_by_vintage)").fetchone() != (False,):
        return False
    cur.execute(f"DROP INDEX public.{schema.ESTIMATES_INDEX_NAME}")
    drops = ", ".join(f"DROP CONSTRAINT {name}" for name in schema.ESTIMATES_KEYS)
    cur.execute(f"ALTER TABLE public.estimates_by_vintage {drops}")
    return True


def _bulk_end(cur: psycopg.Cursor) -> None:
    adds = ", ".join(f"ADD CONSTRAINT {name} {definition}" for name, definition in schema.ESTIMATES_KEYS.items())
    cur.execute(f"ALTER TABLE public.estimates_by_vintage {adds}")
    cur.execute(f"CREATE INDEX {schema.ESTIMATES_INDEX_NAME} {schema.ESTIMATES_INDEX}")


def record_tables(cur: psycopg.Cursor, pairs: set[tuple[str, str]], source: str) -> None:
    """``sage.census_tables`` rows of (table, period) pairs, counted from the database (a table's rows of one period
    may come from several loads, e.g. B01003 2019-2023 from data/acs/ and data/acs-places/, or a fetch of tracts
    beside shipped counties).  The shipped loader (``source`` ``shipped``) never overwrites a fetched pair."""
    ordered = sorted(pairs)
    cur.execute(
        """INSERT INTO sage.census_tables (table_id, vintage, source, variables, rows)
           SELECT v.table_id, e.vintage, %(source)s, count(DISTINCT e.variable_code), count(*)
           FROM public.estimates_by_vintage e
           JOIN public.variables v ON v.variable_code = e.variable_code
           JOIN unnest(%(tables)s::text[], %(vintages)s::text[]) AS p(table_id, vintage)
             ON p.table_id = v.table_id AND p.vintage = e.vintage
           GROUP BY v.table_id, e.vintage
           ON CONFLICT (table_id, vintage) DO UPDATE SET source = EXCLUDED.source, variables = EXCLUDED.variables,
             rows = EXCLUDED.rows, loaded_at = now()
           WHERE %(source)s <> %(shipped)s OR census_tables.source = %(shipped)s""",
        {"source": source, "shipped": SHIPPED, "tables": [p[0] for p in ordered],
         "vintages": [p[1] for p in ordered]},
    )


def load_shipped(conn: psycopg.Connection, data_path: Path, progress: StepProgress | None = None) -> dict:
    """Load the shipped file sets not loaded yet (or changed, or with rows missing) in one transaction; ``conn`` must
    be in autocommit mode, so that ``conn.transaction()`` is a real BEGIN/COMMIT.

    The files are hashed first: when every set's sha256 is recorded and its rows are all there, nothing is parsed
    and nothing is written (``skipped``).  Otherwise every set is read and validated in full before the database is
    touched.  Returns ``{"skipped": bool, "loaded": [set names], "rows": {set name: counts},
    "kept_fetched_tables": ["B19013 2019-2023", ...]}``.
    """
    progress = progress or (lambda *a: None)
    digests = set_digests(data_path)
    fetched = fetched_pairs(conn)
    recorded = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT name, sha256, rows FROM sage.data_loads")}

    def current(name: str) -> bool:
        sha, summary = recorded.get(name, (None, None))
        return sha == digests[name] and _still_loaded(conn, summary, fetched)

    kept = [f"{t} {v}" for t, v in sorted(fetched)]
    if all(current(name) for name in digests):
        rows = {name: {k: recorded[name][1][k] for k in ("geography", "variables", "estimates")} for name in digests}
        return {"skipped": True, "loaded": [], "rows": rows, "kept_fetched_tables": kept}

    progress("validating data files", 0, 3)
    extracts = read_shipped(data_path)
    progress("validating data files", 3, 3)
    with conn.transaction():
        cur = conn.cursor()
        # one loader at a time (a `census fetch`, or a second setup); readers are not blocked
        cur.execute("LOCK TABLE sage.census_tables IN SHARE ROW EXCLUSIVE MODE")
        fetched = fetched_pairs(conn)
        todo = [ex for ex in extracts if not (recorded.get(ex.name, (None,))[0] == ex.sha256
                                              and _still_loaded(conn, ex.summary(), fetched))]
        bulk = _bulk_begin(cur)
        codes: set[str] = set()
        tables: set[tuple[str, str]] = set()
        for ex in todo:
            if ex.geography:
                _load_geography(cur, ex.geography)
                progress(f"loading geography ({ex.name})", len(ex.geography), len(ex.geography))
            if ex.variables:
                loaded = _load_variables(cur, ex.variables, fetched)
                progress("loading variables", len(loaded), len(ex.variables))
            n = _load_estimates(cur, ex, fetched, bulk=bulk)
            progress(f"loading estimates ({ex.name})", n, len(ex.estimates))
            owned = _owned_pairs(ex.pairs(), fetched)
            codes.update(code for code, _ in owned)
            tables.update((_table_of(code), vintage) for code, vintage in owned)
        if bulk:
            progress("indexing estimates", 0, 1)
            _bulk_end(cur)
            progress("indexing estimates", 1, 1)
        refresh_vintages(cur, codes)
        record_tables(cur, tables, SHIPPED)
        # the loaded sets, and those whose record is older than their rows (written by an earlier version)
        loading = {ex.name for ex in todo}
        for ex in extracts:
            if ex.name not in loading and recorded.get(ex.name) == (ex.sha256, ex.summary()):
                continue
            cur.execute(
                """INSERT INTO sage.data_loads (name, sha256, rows) VALUES (%s, %s, %s)
                   ON CONFLICT (name) DO UPDATE SET sha256 = EXCLUDED.sha256, rows = EXCLUDED.rows,
                     loaded_at = now()""",
                (ex.name, ex.sha256, json.dumps(ex.summary())),
            )
    return {"skipped": False, "loaded": [ex.name for ex in todo], "rows": {ex.name: ex.counts() for ex in extracts},
            "kept_fetched_tables": kept}


__all__ = [
    "REFRESH_VINTAGES",
    "fetched_pairs",
    "load_shipped",
    "record_tables",
    "refresh_vintages",
]
