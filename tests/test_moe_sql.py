"""The SQL margin-of-error functions and the CPI table on the session's real PostgreSQL.

They must give the same numbers as :mod:`sage.stats` on the handbook's examples (the expected values are the Python
functions' results, themselves checked against the published figures in ``tests/test_stats.py``), be NULL-safe,
implement the zero-estimate rule across rows (also in parallel), and be callable by the reader role through the
guard and the executor, while PUBLIC gets nothing new.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal

import psycopg
import pytest

from sage import db, execute, guard, stats
from sage.census import cpi, moe_sql
from sage.errors import DataError, GuardError
from sage.introspect import introspect

# the handbook's inputs (acs-statistics.md §2), and the MOEs derived from them
FEMALES_MOE = stats.moe_sum([135_173, 43_104, 24_842], [3_860, 2_642, 1_957])  # §2.1: 5,070.46
WOMEN_MOE = stats.moe_sum([466_037, 97_360, 67_101], [391, 572, 459])  # §2.3: 831.11
MEN_MOE = stats.moe_sum([156_720, 44_613, 25_507], [4_222, 2_819, 2_259])  # §2.4: 5,556.54

#: (SQL function, arguments, the Python function): §2.3, §2.4, §2.5, §2.9, §2.11 and the hand-computed edge cases
EXAMPLES = [
    ("moe_proportion", (203_119, 630_498, 5_070, WOMEN_MOE), stats.moe_proportion),  # §2.3: 0.0080300
    ("moe_proportion", (203_119, 630_498, FEMALES_MOE, WOMEN_MOE), stats.moe_proportion),  # §2.3: 0.0080308
    ("moe_proportion", (41_142_530, 88_337_406, 84_363, 122_656.85116617009), stats.moe_proportion),  # §2.9 Ex. 3
    ("moe_proportion", (10, 20, 1, 10), stats.moe_proportion),  # negative radicand -> ratio form, sqrt(26)/20
    ("moe_proportion", (50, 100, 5, 10), stats.moe_proportion),  # radicand 0 -> ratio form, sqrt(50)/100
    ("moe_proportion", (30, 100, 10, 20), stats.moe_proportion),  # minus form, 8/100
    ("moe_proportion", (200, 200, 30, 40), stats.moe_proportion),  # P = 1: 30/200
    ("moe_proportion", (0, 100, 5, 10), stats.moe_proportion),  # P = 0: 5/100
    ("moe_ratio", (226_840, 203_119, MEN_MOE, 5_070), stats.moe_ratio),  # §2.4: 0.0390565
    ("moe_ratio", (47_194_876, 41_142_530, 89_037, 84_363), stats.moe_ratio),  # §2.9 Ex. 4
    ("moe_ratio", (2, -4, 3, 4), stats.moe_ratio),  # negative denominator: sqrt(13)/4
    ("moe_product", (74_506_512, 0.824, 228_238, 0.001), stats.moe_product),  # §2.5: 202,288.989
    ("moe_product", (75_022_569, 0.825, 227_992, 0.001), stats.moe_product),  # §2.9 Ex. 5
    ("moe_difference", (3_860, 4_047), stats.moe_difference),  # §2.11's two periods: 5,592.66
    ("moe_difference", (0.2, 0.3), stats.moe_difference),  # §2.7 Florida - Arizona: sqrt(0.13)
    ("moe_pct_change", (135_173, 139_301, 3_860, 4_047), stats.moe_pct_change),  # §2.11: 4.1980699
]


def _num(value) -> Decimal:
    """A Python number as an exact numeric literal (floats by their shortest repr, as the Python side reads them)."""
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


@pytest.fixture(scope="module")
def owner(settings):
    with db.owner(settings) as conn:
        yield conn


@pytest.mark.parametrize("fn, args, py", EXAMPLES, ids=[f"{e[0]}{e[1][:2]}" for e in EXAMPLES])
def test_sql_function_gives_the_python_number(owner, fn, args, py):
    placeholders = ", ".join(["%s"] * len(args))
    (got,) = owner.execute(f"SELECT public.{fn}({placeholders})", [_num(a) for a in args]).fetchone()
    assert isinstance(got, Decimal)
    assert float(got) == pytest.approx(py(*args), rel=1e-12, abs=1e-15)


def test_published_figures_in_sql(owner):
    row = owner.execute(
        "SELECT round(moe_proportion(203119, 630498, 5070, 831.1113042186347), 7), "  # §2.3: 0.0080300
        "round(moe_ratio(226840, 203119, 5557, 5070), 3), "  # §2.4: 0.039
        "round(moe_product(74506512, 0.824, 228238, 0.001)), "  # §2.5: 202,289
        "round(moe_pct_change(135173, 139301, 3860, 4047), 7)"  # §2.11: 4.1980699
    ).fetchone()
    assert row == (Decimal("0.0080300"), Decimal("0.039"), Decimal("202289"), Decimal("4.1980699"))


SCALARS = {name: args for name, args in moe_sql.FUNCTIONS.items() if name != "moe_sum"}


@pytest.mark.parametrize("fn", sorted(SCALARS))
def test_any_null_argument_gives_null(owner, fn):
    arity = SCALARS[fn].count(",") + 1
    for position in range(arity):
        args = [Decimal(5)] * arity
        args[position] = None
        sql = f"SELECT public.{fn}({', '.join(['%s::numeric'] * arity)})"
        assert owner.execute(sql, args).fetchone() == (None,), (fn, position)


def test_zero_denominators_give_null(owner):
    row = owner.execute(
        "SELECT moe_proportion(0, 0, 1, 1), moe_ratio(5, 0, 1, 1), moe_pct_change(0, 5, 1, 1)"
    ).fetchone()
    assert row == (None, None, None)


def test_proportion_refuses_a_numerator_that_is_not_a_subset(owner):
    for sql in ("SELECT moe_proportion(201, 200, 30, 40)", "SELECT moe_proportion(-1, 200, 30, 40)"):
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="use moe_ratio"):
            owner.execute(sql)


# ---------------------------------------------------------------------------------------------------------------
# the aggregate


def _agg(owner, rows: list[tuple]) -> Decimal | None:
    values = ", ".join("(%s::numeric, %s::numeric)" for _ in rows)
    params = [v for row in rows for v in row]
    return owner.execute(f"SELECT moe_sum(e, m) FROM (VALUES {values}) AS v(e, m)", params).fetchone()[0]


def test_aggregate_zero_estimate_rule(owner):
    # §2.11: (0,22), (0,22), (0,29), (41,37) -> sqrt(29² + 37²) = 47.01063709417264
    got = _agg(owner, [(0, 22), (0, 22), (0, 29), (41, 37)])
    assert float(got) == pytest.approx(47.01063709417264, rel=1e-14)
    # §2.1: the three areas -> 5,070.4647716
    assert float(_agg(owner, [(135_173, 3_860), (43_104, 2_642), (24_842, 1_957)])) == pytest.approx(FEMALES_MOE)
    # only zero estimates: the largest once; a controlled total (MOE 0) is fine: sqrt(0² + 30²)
    assert _agg(owner, [(0, 22), (0, 29), (0, 13)]) == 29
    assert _agg(owner, [(100, 0), (50, 30)]) == 30


def test_aggregate_null_rules(owner):
    # a row whose estimate is NULL is skipped, like sum(): sqrt(29² + 37²) again
    assert float(_agg(owner, [(0, 22), (0, 29), (41, 37), (None, 999), (None, None)])) == pytest.approx(47.0106370942)
    assert _agg(owner, [(100, 10), (50, None)]) is None  # an unknown part: unknown MOE
    assert _agg(owner, [(0, None), (50, 30)]) is None  # an unknown zero-estimate MOE could be the largest
    assert _agg(owner, [(None, 5), (None, 7)]) is None  # no estimate at all: NULL, like sum()
    assert owner.execute("SELECT moe_sum(1, 1) WHERE false").fetchone() == (None,)


def test_aggregate_by_group_and_as_window(owner):
    rows = owner.execute(
        "SELECT g, moe_sum(e, m) FROM (VALUES ('a', 0, 22), ('a', 0, 29), ('a', 41, 37), ('b', 3, 4), ('b', 0, 0), "
        "('b', 12, 3)) AS v(g, e, m) GROUP BY g ORDER BY g"
    ).fetchall()
    # a: sqrt(29² + 37²) = 47.0106; b: sqrt(4² + 3²) = 5 (the zero row's MOE is 0)
    assert [(g, round(float(v), 4)) for g, v in rows] == [("a", 47.0106), ("b", 5.0)]
    window = owner.execute(
        "SELECT moe_sum(e, m) OVER () FROM (VALUES (3, 4), (0, 0), (12, 3)) AS v(e, m)"
    ).fetchall()
    assert window == [(Decimal(5),)] * 3


def _county_rows(owner, variable: str) -> dict[str, list[tuple]]:
    """``{state: [(estimate, moe), ...]}`` of the county rows of ``variable``, read as the owner."""
    by_state = defaultdict(list)
    for state, estimate, moe in owner.execute(
        "SELECT g.state_abbr, e.estimate, e.margin_error FROM public.estimates e JOIN public.geography g "
        "ON g.geo_id = e.geo_id WHERE e.variable_code = %s AND g.level = 'county'", (variable,)
    ):
        by_state[state].append((estimate, moe))
    return by_state


def test_aggregate_in_parallel_equals_python_on_the_shipped_margins(owner, settings):
    # B02001_003E (Black alone) has county margins in the shipped extract, and 88 counties with an estimate of 0
    rows = [r for rs in _county_rows(owner, "B02001_003E").values() for r in rs]
    assert sum(1 for e, _ in rows if e == 0) > 1
    expected = stats.moe_sum([e for e, _ in rows], [m for _, m in rows])
    sql = (
        "SELECT moe_sum(e.estimate, e.margin_error) FROM public.estimates e JOIN public.geography g "
        "ON g.geo_id = e.geo_id WHERE e.variable_code = 'B02001_003E' AND g.level = 'county'"
    )
    with db.owner(settings) as conn:  # a connection of its own for the planner settings
        conn.execute("SET parallel_setup_cost = 0")
        conn.execute("SET parallel_tuple_cost = 0")
        conn.execute("SET min_parallel_table_scan_size = 0")
        conn.execute("SET min_parallel_index_scan_size = 0")
        conn.execute("SET max_parallel_workers_per_gather = 2")
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN (COSTS OFF) " + sql))
        assert "Partial Aggregate" in plan  # the combine function is exercised
        got = conn.execute(sql).fetchone()[0]
    assert float(got) == pytest.approx(expected, rel=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# the reader role, through the guard and the executor


def test_reader_calls_every_function_through_the_guard(settings):
    sql = (
        "SELECT moe_proportion(203119, 630498, 5070, 831.1113042186347) AS p_moe, "
        "moe_ratio(226840, 203119, 5557, 5070) AS r_moe, "
        "moe_product(74506512, 0.824, 228238, 0.001) AS x_moe, "
        "moe_difference(3860, 4047) AS d_moe, "
        "moe_pct_change(135173, 139301, 3860, 4047) AS pct_moe, "
        "(SELECT moe_sum(v.e, v.m) FROM (VALUES (0, 22), (0, 22), (0, 29), (41, 37)) AS v(e, m)) AS sum_moe, "
        "c.index AS cpi_2018 "
        "FROM cpi_u_rs c WHERE c.year = 2018"
    )
    result = execute.run(guard.check(sql), settings)
    row = dict(zip(result.columns, result.rows[0], strict=True))
    assert row["p_moe"] == pytest.approx(stats.moe_proportion(203_119, 630_498, 5_070, 831.1113042186347))
    assert row["r_moe"] == pytest.approx(stats.moe_ratio(226_840, 203_119, 5_557, 5_070))
    assert row["x_moe"] == pytest.approx(stats.moe_product(74_506_512, 0.824, 228_238, 0.001))
    assert row["d_moe"] == pytest.approx(stats.moe_difference(3_860, 4_047))
    assert row["pct_moe"] == pytest.approx(4.1980699, abs=1e-7)
    assert row["sum_moe"] == pytest.approx(47.01063709417264)
    assert row["cpi_2018"] == 369.1


def test_reader_sums_counties_with_their_margins(settings, owner):
    result = execute.run(
        guard.check(
            "SELECT g.state_abbr, sum(e.estimate) AS black_pop, moe_sum(e.estimate, e.margin_error) AS black_pop_moe "
            "FROM estimates e JOIN geography g ON g.geo_id = e.geo_id "
            "WHERE e.variable_code = 'B02001_003E' AND g.level = 'county' GROUP BY g.state_abbr ORDER BY 1"
        ),
        settings,
    )
    assert result.columns == ["state_abbr", "black_pop", "black_pop_moe"]
    expected = _county_rows(owner, "B02001_003E")
    assert len(result.rows) == len(expected) > 50
    several_zeros = 0
    for state, total, moe in result.rows:
        rows = expected[state]
        several_zeros += sum(1 for e, _ in rows if e == 0) > 1
        assert total == sum(e for e, _ in rows)
        assert moe == pytest.approx(stats.moe_sum([e for e, _ in rows], [m for _, m in rows]), rel=1e-12), state
    assert several_zeros > 0  # the zero-estimate rule mattered for some states


def test_the_cpi_comment_example_runs_for_the_reader(settings):
    result = execute.run(guard.check(f"SELECT {moe_sql._EXAMPLE_2014} AS factor"), settings)
    assert round(result.rows[0][0], 8) == 1.21728529  # [CMP23]: 449.3 / 369.1


def test_reader_cannot_call_the_helpers_or_change_anything(settings):
    with pytest.raises(GuardError, match="moe_sum_state is not allowed"):
        guard.check("SELECT moe_sum_state('{0,0,0,0}', 1, 1)")
    with pytest.raises(GuardError, match="schema-qualified"):
        guard.check("SELECT public.moe_ratio(1, 2, 3, 4)")
    for sql, error in (
        # the role itself refuses the helpers (the guard is not in the way here)
        ("SELECT public.moe_sum_state('{0,0,0,0}'::numeric[], 1, 1)", psycopg.errors.InsufficientPrivilege),
        ("SELECT public.moe_sum_final('{0,0,0,1}'::numeric[])", psycopg.errors.InsufficientPrivilege),
        ("INSERT INTO public.cpi_u_rs VALUES (1999, 250)", psycopg.Error),
        ("UPDATE public.cpi_u_rs SET index = 1", psycopg.Error),
        ("CREATE OR REPLACE FUNCTION public.moe_difference(moe_a numeric, moe_b numeric) RETURNS numeric "
         "LANGUAGE sql AS 'SELECT 0::numeric'", psycopg.Error),
    ):
        conn = db.reader_connect(settings)
        try:
            with pytest.raises(error):
                conn.execute(sql)
        finally:
            conn.close()
    with db.reader_connect(settings) as conn:  # and the change above did not happen
        assert conn.execute("SELECT moe_difference(3, 4)").fetchone() == (Decimal(5),)


def test_privileges_open_nothing_new(owner):
    # the ACL of each function: the owner and the reader for the six, the owner alone for the helpers, never PUBLIC
    acl = defaultdict(set)
    for name, grantee in owner.execute(
        "SELECT p.proname, CASE WHEN a.grantee = 0 THEN 'PUBLIC' WHEN a.grantee = p.proowner THEN 'owner' "
        "ELSE r.rolname END "
        "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "CROSS JOIN LATERAL aclexplode(p.proacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee "
        "WHERE n.nspname = 'public' AND p.proname LIKE 'moe\\_%' AND a.privilege_type = 'EXECUTE'"
    ):
        acl[name].add(grantee)
    assert acl == {**{name: {db.READER_ROLE, "owner"} for name in moe_sql.FUNCTIONS},
                   **{name: {"owner"} for name in moe_sql.HELPERS}}
    # what the reader may execute in public beyond what PUBLIC may: exactly the six
    extra = {r[0] for r in owner.execute(
        "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' "
        "AND has_function_privilege(%s, p.oid, 'EXECUTE') AND NOT has_function_privilege('public', p.oid, 'EXECUTE')",
        (db.READER_ROLE,),
    )}
    assert extra == set(moe_sql.FUNCTIONS)
    # the relations the reader may read: the census tables, the view over them and the CPI table, nothing else
    readable = {r[0] for r in owner.execute(
        "SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
        "AND has_table_privilege(%s, c.oid, 'SELECT')", (db.READER_ROLE,)
    )}
    assert readable == {"public.geography", "public.variables", "public.estimates", "public.estimates_by_vintage",
                        "public.cpi_u_rs"}


# ---------------------------------------------------------------------------------------------------------------
# the table, the comments, setup


def test_cpi_table_holds_the_shipped_file(owner):
    rows = owner.execute("SELECT year, index FROM public.cpi_u_rs ORDER BY year").fetchall()
    assert rows == [(year, value) for year, value in cpi.load().values.items()]
    assert (rows[0][0], rows[-1][0], len(rows)) == (2000, 2024, 25)


def test_install_is_idempotent_and_repairs_the_table(owner):
    definitions = (
        "SELECT string_agg(pg_get_functiondef(p.oid), '' ORDER BY p.proname) FROM pg_proc p "
        "JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname = 'public' AND p.proname LIKE 'moe%' AND p.prokind = 'f'"
    )
    before_rows = owner.execute("SELECT year, index FROM public.cpi_u_rs ORDER BY year").fetchall()
    before_defs = owner.execute(definitions).fetchone()
    try:
        owner.execute("UPDATE public.cpi_u_rs SET index = 1 WHERE year = 2018")
        owner.execute("INSERT INTO public.cpi_u_rs VALUES (1999, 250)")
        owner.execute("DELETE FROM public.cpi_u_rs WHERE year = 2023")
    finally:
        report = moe_sql.install(owner)
    assert report == {"functions": sorted(moe_sql.FUNCTIONS), "cpi_years": 25, "cpi_range": "2000-2024"}
    assert owner.execute("SELECT year, index FROM public.cpi_u_rs ORDER BY year").fetchall() == before_rows
    moe_sql.install(owner)
    assert owner.execute("SELECT year, index FROM public.cpi_u_rs ORDER BY year").fetchall() == before_rows
    assert owner.execute(definitions).fetchone() == before_defs


def test_install_without_the_cpi_file_changes_nothing(owner, tmp_path):
    before = owner.execute("SELECT count(*), sum(index) FROM public.cpi_u_rs").fetchone()
    with pytest.raises(DataError, match="cpi_u_rs_annual.csv is missing"):
        moe_sql.install(owner, tmp_path)
    assert owner.execute("SELECT count(*), sum(index) FROM public.cpi_u_rs").fetchone() == before


def test_comments_for_planners(owner, settings):
    schema = introspect(db.engine(settings))
    table = schema.table("public.cpi_u_rs")
    assert "2014-2018" in table.comment and "2019-2023" in table.comment and "449.3 / 369.1" in table.comment
    assert all(col.comment for col in table.columns) and [c.name for c in table.columns] == ["year", "index"]
    undocumented = owner.execute(
        "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname = 'public' AND p.proname = ANY(%s) AND obj_description(p.oid, 'pg_proc') IS NULL",
        (list(moe_sql.FUNCTIONS),),
    ).fetchall()
    assert undocumented == []


def test_functions_are_immutable_and_parallel_safe(owner):
    rows = owner.execute(
        "SELECT p.proname, p.provolatile, p.proparallel, p.prokind FROM pg_proc p "
        "JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' AND p.proname LIKE 'moe\\_%'"
    ).fetchall()
    assert {r[0] for r in rows} == set(moe_sql.FUNCTIONS) | set(moe_sql.HELPERS)
    assert all(volatile == "i" and parallel == "s" for _, volatile, parallel, _ in rows)
    assert [r[0] for r in rows if r[3] == "a"] == ["moe_sum"]


def test_setup_reports_the_step(setup_report):
    assert "installing the margin-of-error functions and the CPI table" in [s["step"] for s in setup_report.steps]


def test_guard_allowlists_exactly_the_six_functions_and_the_table():
    assert set(moe_sql.FUNCTIONS) <= guard.FUNCTIONS
    assert not set(moe_sql.HELPERS) & guard.FUNCTIONS
    assert "cpi_u_rs" in guard.TABLES
    checked = guard.check("SELECT c.year, c.index FROM public.cpi_u_rs c ORDER BY c.year")
    assert checked.tables == ("public.cpi_u_rs",)
