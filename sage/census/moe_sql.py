"""The margin-of-error formulas as SQL functions, and the R-CPI-U-RS table, for planned SQL.

Planned SQL computes a margin column next to each derived number (``<value>`` and ``<value>_moe``, see
:mod:`sage.significance`) with these functions, all in schema ``public``, ``IMMUTABLE`` and ``PARALLEL SAFE``.
They take ``numeric`` arguments (integers and numeric literals are converted implicitly; cast a ``double precision``
value with ``::numeric``) and return ``numeric``.  The formulas are those of :mod:`sage.stats` (research note
``acs-statistics.md``; [H20] = the 2020 ACS General Handbook, ch. 8):

=====================================================  ==========================================================
``moe_sum(estimate, moe)`` (aggregate)                 MOE of ``sum(estimate)``: sqrt of the sum of squared MOEs,
                                                       zero-estimate rule (only the largest MOE among rows whose
                                                       estimate is 0, once) [H20] formula 1
``moe_difference(moe_a, moe_b)``                       MOE of a − b: sqrt(moe_a² + moe_b²)
``moe_proportion(num, den, moe_num, moe_den)``         MOE of num/den, num a subset of den [H20] formula 6; the
                                                       ratio form when the radicand is ≤ 0; moe_num/den when
                                                       num = den; ×100 for a percentage
``moe_ratio(num, den, moe_num, moe_den)``              MOE of num/den, num not a subset [H20] formula 7
``moe_product(x, y, moe_x, moe_y)``                    MOE of x·y [H20] formula 9
``moe_pct_change(x1, x2, moe1, moe2)``                 MOE (percentage points) of 100·(x2 − x1)/x1, x1 earlier
                                                       [H20] formula 8 via formula 7
=====================================================  ==========================================================

**NULL behaviour.**  Every scalar function is ``STRICT``: any NULL argument gives NULL; a zero denominator (``den``
or ``x1`` = 0) gives NULL.  ``moe_proportion`` raises an error when the numerator is not within ``0 ≤ num ≤ den``
(not a subset: use ``moe_ratio``).  The aggregate ``moe_sum`` skips rows whose *estimate* is NULL (like ``sum``),
returns NULL when any row with a non-NULL estimate has a NULL MOE (an unknown part makes the sum's MOE unknown; a
controlled total with MOE 0 is fine), and NULL over no rows.

``public.cpi_u_rs(year, index)`` holds the R-CPI-U-RS annual averages from ``data/cpi/`` for dollar adjustments
(:mod:`sage.census.cpi`).

Privileges: PostgreSQL grants EXECUTE on a new function to PUBLIC; :func:`install` revokes that, so only the owner
and the roles granted by :func:`grant_statements` (the reader role, from setup) can call the functions.  The
aggregate's helper functions (``moe_sum_state``, ``moe_sum_combine``, ``moe_sum_final``) are granted to no one: an
aggregate's helpers run with its owner's right to call them, so the reader needs EXECUTE on ``moe_sum`` only.
Function bodies call ``pg_catalog.`` functions explicitly.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
from psycopg import sql as pgsql

from . import cpi

#: the functions planned SQL may call (also in the guard's allowlist), with their argument types
FUNCTIONS = {
    "moe_proportion": "numeric, numeric, numeric, numeric",
    "moe_ratio": "numeric, numeric, numeric, numeric",
    "moe_product": "numeric, numeric, numeric, numeric",
    "moe_difference": "numeric, numeric",
    "moe_pct_change": "numeric, numeric, numeric, numeric",
    "moe_sum": "numeric, numeric",  # the aggregate
}
#: the aggregate's helpers: created here, callable by no one but the owner
HELPERS = {
    "moe_sum_state": "numeric[], numeric, numeric",
    "moe_sum_combine": "numeric[], numeric[]",
    "moe_sum_final": "numeric[]",
}
TABLE = "public.cpi_u_rs"

DDL = r"""
CREATE TABLE IF NOT EXISTS public.cpi_u_rs (
    year  integer PRIMARY KEY CHECK (year BETWEEN 1978 AND 2100),
    index numeric NOT NULL CHECK (index > 0)
);

CREATE OR REPLACE FUNCTION public.moe_difference(moe_a numeric, moe_b numeric)
RETURNS numeric LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    SELECT pg_catalog.sqrt(moe_a * moe_a + moe_b * moe_b)
$fn$;

CREATE OR REPLACE FUNCTION public.moe_ratio(num numeric, den numeric, moe_num numeric, moe_den numeric)
RETURNS numeric LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    SELECT CASE WHEN den = 0 THEN NULL
                ELSE pg_catalog.sqrt(moe_num * moe_num + (num / den) * (num / den) * moe_den * moe_den)
                     / pg_catalog.abs(den) END
$fn$;

CREATE OR REPLACE FUNCTION public.moe_proportion(num numeric, den numeric, moe_num numeric, moe_den numeric)
RETURNS numeric LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
DECLARE
    p numeric;
    radicand numeric;
BEGIN
    IF den = 0 THEN
        RETURN NULL;
    END IF;
    IF num < 0 OR den < 0 OR num > den THEN
        RAISE EXCEPTION 'moe_proportion needs 0 <= num <= den (got num %, den %): the numerator must be a part '
                        'of the denominator; use moe_ratio for a ratio', num, den
            USING ERRCODE = '22023';
    END IF;
    IF num = den THEN
        RETURN moe_num / den;  -- P = 1: SE(P) = SE(num) / den ([ST])
    END IF;
    p := num / den;
    radicand := moe_num * moe_num - p * p * moe_den * moe_den;
    IF radicand <= 0 THEN
        radicand := moe_num * moe_num + p * p * moe_den * moe_den;  -- the ratio ("plus") form ([H20] p. 64)
    END IF;
    RETURN pg_catalog.sqrt(radicand) / den;
END
$fn$;

CREATE OR REPLACE FUNCTION public.moe_product(x numeric, y numeric, moe_x numeric, moe_y numeric)
RETURNS numeric LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    SELECT pg_catalog.sqrt(x * x * moe_y * moe_y + y * y * moe_x * moe_x)
$fn$;

CREATE OR REPLACE FUNCTION public.moe_pct_change(x1 numeric, x2 numeric, moe1 numeric, moe2 numeric)
RETURNS numeric LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    SELECT CASE WHEN x1 = 0 THEN NULL
                ELSE 100 * pg_catalog.sqrt(moe2 * moe2 + (x2 / x1) * (x2 / x1) * moe1 * moe1) / pg_catalog.abs(x1) END
$fn$;

-- moe_sum state: {sum of squared MOEs of non-zero estimates, largest MOE of a zero estimate, 1 if a MOE was
-- unknown, rows with an estimate}
CREATE OR REPLACE FUNCTION public.moe_sum_state(state numeric[], estimate numeric, moe numeric)
RETURNS numeric[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT CASE
        WHEN estimate IS NULL THEN state
        WHEN moe IS NULL THEN ARRAY[state[1], state[2], 1, state[4] + 1]
        WHEN estimate = 0 THEN ARRAY[state[1], GREATEST(state[2], pg_catalog.abs(moe)), state[3], state[4] + 1]
        ELSE ARRAY[state[1] + moe * moe, state[2], state[3], state[4] + 1]
    END
$fn$;

CREATE OR REPLACE FUNCTION public.moe_sum_combine(a numeric[], b numeric[])
RETURNS numeric[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    SELECT ARRAY[a[1] + b[1], GREATEST(a[2], b[2]), GREATEST(a[3], b[3]), a[4] + b[4]]
$fn$;

CREATE OR REPLACE FUNCTION public.moe_sum_final(state numeric[])
RETURNS numeric LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
    SELECT CASE WHEN state[4] = 0 OR state[3] = 1 THEN NULL
                ELSE pg_catalog.sqrt(state[1] + state[2] * state[2]) END
$fn$;

CREATE OR REPLACE AGGREGATE public.moe_sum(estimate numeric, moe numeric) (
    SFUNC = public.moe_sum_state,
    STYPE = numeric[],
    INITCOND = '{0,0,0,0}',
    FINALFUNC = public.moe_sum_final,
    COMBINEFUNC = public.moe_sum_combine,
    PARALLEL = SAFE
);
"""

_EXAMPLE_2014 = (
    "(SELECT index FROM public.cpi_u_rs WHERE year = 2023) / (SELECT index FROM public.cpi_u_rs WHERE year = 2018)"
)

#: COMMENT ON texts: the table's are shown to the planners (introspection embeds them), the functions' document them
COMMENTS = {
    ("TABLE", "public.cpi_u_rs"): (
        "The R-CPI-U-RS consumer price index (BLS, all items, U.S. city average, December 1977 = 100), one row per "
        "year 2000-2024: the index the Census Bureau uses to put ACS dollar amounts (incomes, rents, home values, "
        "costs) of different periods into the same dollars before comparing them. A 5-year ACS period is in the "
        "dollars of its last year (2014-2018 in 2018 dollars), so use the last year of each period. Example: to put "
        "a 2014-2018 median household income and its margin of error into 2019-2023 dollars, multiply both by "
        f"{_EXAMPLE_2014} = 449.3 / 369.1 = 1.2173. Never adjust counts, percentages or ages."
    ),
    ("COLUMN", "public.cpi_u_rs.year"): (
        "Calendar year of the annual average (2000-2024). For an ACS 5-year period use its last year: 2018 for "
        "2014-2018, 2023 for 2019-2023."
    ),
    ("COLUMN", "public.cpi_u_rs.index"): (
        "Annual average of the R-CPI-U-RS, all items (December 1977 = 100), e.g. 369.1 for 2018 and 449.3 for 2023. "
        "The dollar adjustment factor from year A to year B is index(B) / index(A)."
    ),
    ("FUNCTION", "public.moe_difference(numeric, numeric)"): (
        "90% margin of error of a difference a - b (or a sum of two): sqrt(moe_a^2 + moe_b^2) (ACS General Handbook "
        "2020, ch. 8 formula 1). NULL if an argument is NULL."
    ),
    ("FUNCTION", "public.moe_proportion(numeric, numeric, numeric, numeric)"): (
        "90% margin of error of a proportion num/den whose numerator is a part of the denominator (ACS General "
        "Handbook 2020, ch. 8 formula 6): sqrt(moe_num^2 - (num/den)^2 * moe_den^2) / den, the ratio formula when "
        "the value under the root is <= 0, moe_num/den when num = den. Multiply by 100 for a percentage. NULL if an "
        "argument is NULL or den = 0; an error if num < 0 or num > den (use moe_ratio)."
    ),
    ("FUNCTION", "public.moe_ratio(numeric, numeric, numeric, numeric)"): (
        "90% margin of error of a ratio num/den whose numerator is not a part of the denominator (means, per-capita "
        "values, males per female) (ACS General Handbook 2020, ch. 8 formula 7): sqrt(moe_num^2 + (num/den)^2 * "
        "moe_den^2) / |den|. NULL if an argument is NULL or den = 0."
    ),
    ("FUNCTION", "public.moe_product(numeric, numeric, numeric, numeric)"): (
        "90% margin of error of a product x*y (ACS General Handbook 2020, ch. 8 formula 9): sqrt(x^2 * moe_y^2 + "
        "y^2 * moe_x^2). Enter a percentage and its margin as proportions (82.4% +/-0.1 is 0.824, 0.001). NULL if an "
        "argument is NULL."
    ),
    ("FUNCTION", "public.moe_pct_change(numeric, numeric, numeric, numeric)"): (
        "90% margin of error, in percentage points, of the percent change 100 * (x2 - x1) / x1 from the earlier "
        "estimate x1 to the later x2 (ACS General Handbook 2020, ch. 8 formula 8 via the ratio formula 7). Put "
        "dollar amounts in the same dollars first (public.cpi_u_rs). NULL if an argument is NULL or x1 = 0."
    ),
    ("AGGREGATE", "public.moe_sum(numeric, numeric)"): (
        "90% margin of error of sum(estimate) over the rows: sqrt of the sum of the squared margins (ACS General "
        "Handbook 2020, ch. 8 formula 1), counting among rows whose estimate is 0 only the largest margin, once. "
        "Rows with a NULL estimate are skipped, like sum(); NULL if a row with an estimate has a NULL margin, and "
        "over no rows. Usage: sum(e.estimate) AS total, moe_sum(e.estimate, e.margin_error) AS total_moe. Only for "
        "counts: never sum medians, means or percentages."
    ),
}


def comment_statements() -> list[pgsql.Composed]:
    """``COMMENT ON`` statements for the table, its columns, the functions and the aggregate."""
    out = []
    for (kind, ref), text in COMMENTS.items():
        out.append(pgsql.SQL("COMMENT ON {} {} IS {}").format(pgsql.SQL(kind), pgsql.SQL(ref), pgsql.Literal(text)))
    return out


def _signatures(functions: dict[str, str]) -> list[str]:
    return [f"public.{name}({args})" for name, args in functions.items()]


def grant_statements(role: str) -> list[pgsql.Composed]:
    """What a reader role needs: SELECT on ``public.cpi_u_rs`` and EXECUTE on the six functions (nothing else)."""
    ident = pgsql.Identifier(role)
    stmts = [pgsql.SQL("GRANT SELECT ON public.cpi_u_rs TO {}").format(ident)]
    for signature in _signatures(FUNCTIONS):
        stmts.append(pgsql.SQL("GRANT EXECUTE ON FUNCTION {} TO {}").format(pgsql.SQL(signature), ident))
    return stmts


def _revoke_public_statements() -> list[pgsql.Composed]:
    return [
        pgsql.SQL("REVOKE ALL ON FUNCTION {} FROM PUBLIC").format(pgsql.SQL(signature))
        for signature in _signatures(FUNCTIONS) + _signatures(HELPERS)
    ]


def load_cpi(conn: psycopg.Connection, table: cpi.CpiTable) -> int:
    """Make ``public.cpi_u_rs`` hold exactly the years of ``table`` (insert, update, delete); return the row count.

    Run inside the caller's transaction.  Idempotent: a second run changes nothing.
    """
    years = list(table.values)
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO public.cpi_u_rs (year, index) VALUES (%s, %s) ON CONFLICT (year) "
            "DO UPDATE SET index = EXCLUDED.index WHERE cpi_u_rs.index IS DISTINCT FROM EXCLUDED.index",
            [(year, table.values[year]) for year in years],
        )
        cur.execute("DELETE FROM public.cpi_u_rs WHERE NOT (year = ANY(%s))", (years,))
    return len(years)


def install(conn: psycopg.Connection, data_path: Path | None = None) -> dict:
    """Create (or replace) the functions, the aggregate and ``public.cpi_u_rs`` with their comments, revoke EXECUTE
    from PUBLIC, and fill the table from ``data_path / "cpi"`` (default ``PROJECT_ROOT / "data"``).

    Idempotent.  The CPI file is read and validated first, so a missing or malformed file raises
    :class:`~sage.errors.DataError` before the database is touched; the rest is one transaction.
    Returns ``{"functions": [...], "cpi_years": n, "cpi_range": "2000-2024"}``.
    """
    table = cpi.read_table(cpi.cpi_path(data_path))
    with conn.transaction():
        conn.execute(DDL)
        for stmt in comment_statements():
            conn.execute(stmt)
        for stmt in _revoke_public_statements():
            conn.execute(stmt)
        rows = load_cpi(conn, table)
    conn.execute("ANALYZE public.cpi_u_rs")
    return {
        "functions": sorted(FUNCTIONS),
        "cpi_years": rows,
        "cpi_range": f"{table.first_year}-{table.last_year}",
    }


__all__ = ["COMMENTS", "DDL", "FUNCTIONS", "HELPERS", "TABLE", "comment_statements", "grant_statements", "install",
           "load_cpi"]
