"""Guarded execution against the real (embedded) PostgreSQL, as the read-only role.

Three kinds of test:

* every legitimate corpus query runs and returns rows;
* **defence in depth**: with the guard bypassed (``execute._execute`` takes raw SQL), the role, the read-only
  transaction and the extended protocol alone still block writes, stacked statements, reads of ``sage.*`` and
  the risky built-ins — and nothing changed afterwards;
* limits: time-outs (asserted by error kind, never by elapsed time), the cost gate, row, cell and result caps,
  and no session state surviving a query.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sage import db, execute, guard
from sage.errors import ExecutionError, GuardError
from sage.execute import Result, run

CORPUS = [
    json.loads(line)
    for line in (Path(__file__).parent / "data" / "guard_corpus.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]
ACCEPT = [c for c in CORPUS if c["expect"] == "accept"]
RUNTIME = [c for c in CORPUS if c["expect"] == "runtime"]

#: short enough to keep the suite quick, long enough for every legitimate query
SHORT_MS = 1500


def _id(case: dict) -> str:
    return case["sql"][:60]


@pytest.fixture(scope="module")
def short(settings):
    return settings.replace(statement_timeout_ms=SHORT_MS)


def _state(settings) -> dict:
    """What a successful attack would change, read as the owner."""
    with db.owner(settings) as conn:
        return {
            "estimates": conn.execute("SELECT count(*), sum(estimate) FROM public.estimates_by_vintage").fetchone(),
            "variables": conn.execute("SELECT count(*) FROM public.variables").fetchone()[0],
            "questions": conn.execute("SELECT count(*) FROM sage.questions").fetchone()[0],
            "large_objects": conn.execute("SELECT count(*) FROM pg_largeobject_metadata").fetchone()[0],
            "public_tables": conn.execute(
                "SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
            ).fetchone()[0],
        }


# ---------------------------------------------------------------------------------------------------------------
# legitimate queries


@pytest.mark.parametrize("case", ACCEPT, ids=_id)
def test_every_legitimate_query_runs(case, settings):
    result = run(guard.check(case["sql"], max_rows=settings.max_rows), settings)
    assert isinstance(result, Result)
    assert result.row_count == len(result.rows) > 0
    assert result.columns and all(len(row) == len(result.columns) for row in result.rows)
    json.dumps(result.to_dict())  # numbers are int/float, not Decimal


def test_values_are_json_ready(settings):
    result = run(
        guard.check(
            "SELECT e.estimate, e.estimate / 3 AS third, e.margin_error, current_date AS today, g.name "
            "FROM estimates e JOIN geography g USING (geo_id) "
            "WHERE e.variable_code = 'B19013_001E' AND e.margin_error IS NOT NULL ORDER BY g.name LIMIT 1"
        ),
        settings,
    )
    estimate, third, moe, today, name = result.rows[0]
    assert isinstance(estimate, int) and isinstance(third, float) and isinstance(moe, int)
    assert isinstance(today, str) and len(today) == 10 and isinstance(name, str)


def test_an_empty_result_still_has_its_columns(settings):
    result = run(guard.check("SELECT name AS place, level FROM geography WHERE false"), settings)
    assert (result.columns, result.rows, result.row_count, result.truncated) == (["place", "level"], [], 0, False)


def test_rows_beyond_max_rows_are_cut_and_flagged(settings):
    small = settings.replace(max_rows=25)
    result = run(guard.check("SELECT geo_id FROM estimates", max_rows=small.max_rows), small)
    assert (result.row_count, result.truncated) == (25, True)
    # a result that fits is not flagged, even when the guard added the LIMIT
    few = "SELECT name FROM geography WHERE level = 'state' AND state_abbr < 'D'"
    result = run(guard.check(few, max_rows=small.max_rows), small)
    assert result.truncated is False and 0 < result.row_count < 25
    # without the guard's LIMIT, the fetch itself stops at max_rows + 1
    result = execute._execute("SELECT geo_id FROM estimates", small)
    assert (result.row_count, result.truncated) == (25, True)


def test_run_takes_only_guarded_sql(settings):
    with pytest.raises(TypeError):
        run("SELECT 1", settings)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------------------
# errors


def test_errors_carry_a_kind_and_postgresqls_message(settings):
    with pytest.raises(ExecutionError) as info:
        run(guard.check("SELECT no_such_column FROM geography"), settings)
    assert info.value.kind == "undefined"
    assert "no_such_column" in info.value.detail and "does not exist" in info.value.detail

    with pytest.raises(ExecutionError) as info:
        run(guard.check("SELECT 1 / 0 AS x FROM variables"), settings)
    assert info.value.kind == "other"
    assert "division by zero" in info.value.detail

    with pytest.raises(ExecutionError) as info:
        run(guard.check("SELECT sum(name) FROM geography"), settings)
    assert info.value.kind == "undefined"  # sum(text) does not exist


def test_the_connection_works_again_after_an_error(settings):
    with pytest.raises(ExecutionError):
        run(guard.check("SELECT 1 / 0 AS x FROM variables"), settings)
    assert run(guard.check("SELECT count(*) FROM variables"), settings).rows == [[_state(settings)["variables"]]]


# ---------------------------------------------------------------------------------------------------------------
# defence in depth: no guard, only the role, the read-only transaction and the protocol

BYPASS = [
    ("INSERT INTO public.variables (variable_code) VALUES ('X')", "permission"),
    ("UPDATE public.estimates_by_vintage SET estimate = 0", "permission"),
    ("DELETE FROM public.estimates_by_vintage", "permission"),
    ("TRUNCATE public.estimates_by_vintage", "permission"),
    ("TRUNCATE public.estimates", "permission"),
    # public.estimates is a view over a join: PostgreSQL refuses to write through it before privileges are checked
    ("UPDATE public.estimates SET estimate = 0", "other"),
    ("DELETE FROM public.estimates", "other"),
    ("CREATE TABLE public.loot (a int)", "permission"),
    ("CREATE TEMP TABLE loot (a int)", "permission"),
    ("WITH d AS (DELETE FROM public.estimates_by_vintage RETURNING 1) SELECT count(*) FROM d", "permission"),
    ("SELECT * INTO loot FROM public.estimates", "permission"),
    ("SELECT * FROM public.estimates LIMIT 1 FOR UPDATE", "permission"),
    ("DO $$ BEGIN DELETE FROM public.estimates_by_vintage; END $$", "permission"),
    ("SELECT * FROM sage.questions", "permission"),
    ("SELECT * FROM sage.reader_login", "permission"),
    ("SELECT * FROM sage.data_loads", "permission"),
    ("SELECT lo_from_bytea(0, 'payload')", "permission"),
    ("SELECT lo_create(0)", "permission"),
    ("SELECT lo_import('/etc/passwd')", "permission"),
    ("SELECT pg_logical_emit_message(false, 'x', 'payload')", "permission"),
    ("SELECT set_config('default_transaction_read_only', 'off', false)", "permission"),
    ("SELECT set_config('standard_conforming_strings', 'off', false)", "permission"),
    ("SELECT pg_notify('channel', 'payload')", "permission"),
    ("SELECT pg_advisory_lock(42)", "permission"),
    ("SELECT pg_try_advisory_lock(42)", "permission"),
    ("SELECT pg_read_file('/etc/passwd')", "permission"),
    ("SELECT pg_ls_dir('.')", "permission"),
    ("SELECT query_to_xml('SELECT * FROM sage.questions', true, true, '')", "permission"),
    ("SELECT * FROM ts_stat('SELECT to_tsvector(question) FROM sage.questions')", "permission"),
    ("SELECT pg_terminate_backend(pg_backend_pid())", "permission"),
]


@pytest.mark.parametrize("sql, kind", BYPASS, ids=[b[0][:50] for b in BYPASS])
def test_role_alone_blocks(sql, kind, settings):
    before = _state(settings)
    with pytest.raises(ExecutionError) as info:
        execute._execute(sql, settings)
    assert info.value.kind == kind, info.value.detail
    assert _state(settings) == before


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1; DELETE FROM public.estimates",
        "SELECT 1; COMMIT; BEGIN READ WRITE; DELETE FROM public.estimates",
        "SELECT count(*) FROM public.estimates; UPDATE public.estimates SET estimate = 0",
        "SELECT 1 AS x; SET SESSION default_transaction_read_only = off; SELECT 2",
    ],
)
def test_stacked_statements_are_refused_by_postgresql(sql, settings):
    before = _state(settings)
    with pytest.raises(ExecutionError) as info:
        execute._execute(sql, settings)
    assert "multiple commands" in info.value.detail
    assert _state(settings) == before


@pytest.mark.parametrize("sql", ["COMMIT", "BEGIN READ WRITE", "SET SESSION statement_timeout = 0", "LISTEN ch"])
def test_transaction_and_session_commands_produce_no_result(sql, settings):
    with pytest.raises(ExecutionError):
        execute._execute(sql, settings)


# ---------------------------------------------------------------------------------------------------------------
# session poisoning

POISON = [
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "SELECT set_config('statement_timeout', '0', false)",
    "SET SESSION default_transaction_read_only = off",
    "SET SESSION statement_timeout = 0",
    "SET SESSION search_path = sage, public",
    "SET SESSION standard_conforming_strings = off",
    "COMMIT",
    "BEGIN READ WRITE",
    "SELECT pg_advisory_lock(7)",
    "LISTEN poisoned",
]


def _session(conn) -> dict:
    """The settings a new, ordinary transaction on ``conn`` would run with (no SET LOCAL from the executor)."""
    conn.autocommit = True
    conn.execute("BEGIN")
    try:
        return {
            "read_only": conn.execute("SHOW transaction_read_only").fetchone()[0],
            "timeout": conn.execute("SELECT setting FROM pg_settings WHERE name = 'statement_timeout'").fetchone()[0],
            "scs": conn.execute("SHOW standard_conforming_strings").fetchone()[0],
            "locks": conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone()[0],
            "listening": conn.execute("SELECT count(*) FROM pg_listening_channels()").fetchone()[0],
        }
    finally:
        conn.execute("ROLLBACK")


def test_no_query_leaves_state_on_its_connection(settings):
    """Even on a reused connection, every query's changes end with its transaction."""
    conn = db.reader_connect(settings)
    try:
        clean = _session(conn)
        assert clean["read_only"] == "on" and clean["scs"] == "on" and clean["locks"] == clean["listening"] == 0
        assert clean["timeout"] == str(settings.statement_timeout_ms)  # the role's default, set by setup
        for sql in POISON:
            try:
                execute._run_on(conn, sql, settings)
            except ExecutionError:
                pass
            assert _session(conn) == clean, sql
            # and the executor's own transaction is read-only with its timeout, whatever came before
            row = execute._run_on(
                conn,
                "SELECT current_setting('transaction_read_only'), current_setting('statement_timeout'), "
                "current_setting('standard_conforming_strings')",
                settings.replace(statement_timeout_ms=1234),
            ).rows[0]
            assert row == ["on", "1234ms", "on"], sql
    finally:
        conn.close()


def test_a_fresh_connection_after_poisoning_is_clean(short):
    for sql in POISON:
        try:
            execute._execute(sql, short)
        except ExecutionError:
            pass
    rows = execute._execute(
        "SELECT current_setting('transaction_read_only'), current_setting('statement_timeout')", short
    ).rows
    assert rows == [["on", f"{SHORT_MS}ms"]]


def test_the_standard_conforming_strings_chain_is_harmless(settings):
    """Step 2 of the chain is an ordinary SELECT of two strings: it must run as one, and delete nothing."""
    before = _state(settings)
    sql = "SELECT 'a\\' || '; DELETE FROM public.estimates; --' AS s"
    with pytest.raises(ExecutionError):  # step 1, with the guard bypassed
        execute._execute("SELECT set_config('standard_conforming_strings', 'off', false)", settings)
    result = run(guard.check(sql), settings)
    assert result.rows == [["a\\; DELETE FROM public.estimates; --"]]
    assert _state(settings) == before


# ---------------------------------------------------------------------------------------------------------------
# time, cost and size limits


def test_sleep_is_cut_by_the_statement_timeout(short):
    with pytest.raises(ExecutionError) as info:
        execute._execute("SELECT pg_sleep(30)", short)
    assert info.value.kind == "timeout"
    assert "statement timeout" in info.value.detail
    assert "SAGE_STATEMENT_TIMEOUT_MS" in info.value.message


@pytest.mark.parametrize("case", RUNTIME, ids=_id)
def test_runaway_joins_are_stopped(case, short):
    # without any gate, the statement timeout stops them
    with pytest.raises(ExecutionError) as info:
        execute._execute(case["sql"], short)
    assert info.value.kind == "timeout" and "statement timeout" in info.value.detail
    # the guard may accept them (they are valid SELECTs over the census tables); then the cost gate refuses
    # them without running them at all
    try:
        guarded = guard.check(case["sql"], max_rows=short.max_rows)
    except GuardError:
        return
    with pytest.raises(ExecutionError) as info:
        run(guarded, short)
    assert info.value.kind == "timeout" and "EXPLAIN" in info.value.detail


def test_the_cost_gate_passes_every_legitimate_query(settings):
    conn = db.reader_connect(settings)
    try:
        conn.autocommit = True
        for case in ACCEPT:
            sql = guard.check(case["sql"]).sql
            conn.execute("BEGIN READ ONLY")
            try:
                plan = conn.execute("EXPLAIN (FORMAT JSON) " + sql, prepare=True).fetchone()[0][0]["Plan"]
            finally:
                conn.execute("ROLLBACK")
            assert plan["Total Cost"] < execute.COST_FLOOR / 10, case["sql"]
    finally:
        conn.close()


def test_a_huge_cell_is_cut(settings):
    result = execute._execute("SELECT repeat('x', 1000000) AS big, 'small' AS small", settings)
    big, small = result.rows[0]
    assert result.truncated_cells == 1
    assert big.endswith("…") and len(big.encode("utf-8")) <= execute.CELL_BYTES
    assert small == "small"
    # multi-byte text is cut on a character boundary
    result = execute._execute("SELECT repeat('é€', 5000) AS big", settings)
    (big,) = result.rows[0]
    assert big.endswith("…") and len(big.encode("utf-8")) <= execute.CELL_BYTES and "\ufffd" not in big


def test_a_huge_result_is_cut_by_bytes(settings):
    many = settings.replace(max_rows=100_000)
    result = execute._execute("SELECT repeat('x', 1500) AS cell FROM generate_series(1, 20000)", many)
    assert result.truncated is True
    assert 0 < result.row_count < 20000
    assert sum(len(row[0]) for row in result.rows) <= execute.RESULT_BYTES
    # a small byte cap stops earlier still
    result = execute._execute(
        "SELECT name FROM public.geography ORDER BY name", many, result_bytes=1000
    )
    assert result.truncated is True and 0 < result.row_count < 100
