"""Loading a table from the app (issue 16): the checks, the worker thread, the two locks, the question asked again,
and every bad input leaving the database as it was — against the fake Census API (``tests/fake_census_api.py``).

Runs on a set-up database of its own: fetching changes tables.
"""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest

from sage import agent, db, locks
from sage.catalog_index import index_catalog
from sage.census import fetch, fetch_job
from sage.census.api import KEY_SIGNUP_URL, CensusClient
from sage.census.setup import run_setup
from sage.errors import ErrorKind, SageError
from sage.roles import Role
from sage.settings import Settings

from .conftest import make_settings
from .fake_census_api import FakeCensusApi
from .test_census_fetch import FAST, KEY, snapshot, table_rows

HOMEOWNERSHIP = "What is the homeownership rate in West Virginia?"


@pytest.fixture(scope="module")
def fake():
    with FakeCensusApi(required_key=KEY) as server:
        yield server


@pytest.fixture(autouse=True)
def _reset_fake(request):
    yield
    if "fake" in request.fixturenames:
        request.getfixturevalue("fake").clear()


@pytest.fixture(scope="module")
def db_settings(tmp_path_factory):
    s = make_settings(data_dir=tmp_path_factory.mktemp("fetch-job-db") / "pgdata", planner="offline")
    run_setup(s)
    return s


@pytest.fixture
def fs(db_settings, fake):
    """The database, the fake API and the right key."""
    return db_settings.replace(census_api_url=fake.base_url, census_api_key=KEY)


def client(settings: Settings) -> CensusClient:
    return CensusClient.from_settings(settings, **FAST)


def start(settings: Settings, tables, *args, **kw) -> fetch_job.FetchJob:
    return fetch_job.start_fetch(settings, tables, *args, role=kw.pop("role", Role.CURATOR), client=client(settings),
                                 **kw)


def finished(job: fetch_job.FetchJob) -> fetch_job.FetchJob:
    assert job.wait(120), "the fetch did not finish"
    return job


def no_fetch_running(settings: Settings) -> bool:
    with db.owner(settings) as conn:
        return fetch_job.current_fetch() is None and locks.holder(conn, locks.CENSUS_FETCH) is None


# --- the setting and the checks -----------------------------------------------------------------------------------


def test_fetching_from_the_app_is_on_for_the_embedded_database_only_unless_set():
    assert make_settings().fetch_allowed
    assert not make_settings(database_url="postgresql://u@db.example/census").fetch_allowed
    assert make_settings(database_url="postgresql://u@db.example/census", allow_fetch="on").fetch_allowed
    assert not make_settings(allow_fetch="off").fetch_allowed
    from sage.settings import load_settings
    from tests.conftest import NO_SECRETS

    for raw, value in (("1", "on"), ("true", "on"), ("0", "off"), ("no", "off"), ("auto", "auto")):
        assert load_settings(environ={"SAGE_ALLOW_FETCH": raw}, secrets_path=NO_SECRETS).allow_fetch == value
    with pytest.raises(SageError, match="SAGE_ALLOW_FETCH"):
        load_settings(environ={"SAGE_ALLOW_FETCH": "sometimes"}, secrets_path=NO_SECRETS)


@pytest.mark.parametrize("change, tables, kind, words", [
    ({"census_api_key": None}, ["B25003"], ErrorKind.MISSING_KEY, [KEY_SIGNUP_URL, "CENSUS_API_KEY",
                                                                   ".streamlit/secrets.toml"]),
    ({"allow_fetch": "off"}, ["B25003"], ErrorKind.FETCH_DISALLOWED, ["SAGE_ALLOW_FETCH", "census fetch"]),
    ({}, ["B99999"], ErrorKind.UNKNOWN_TABLE, ["B99999 is not a table", "Nothing was loaded"]),
    ({}, ["not-a-table"], ErrorKind.INVALID_ARGUMENT, ["NOT-A-TABLE is not an ACS table id"]),
])
def test_bad_input_is_refused_before_any_request(fs, fake, change, tables, kind, words):
    before = snapshot(fs)
    with pytest.raises(SageError) as err:
        start(fs.replace(**change), tables)
    assert err.value.kind == kind
    for word in words:
        assert word in err.value.message
    assert fake.log == [] and snapshot(fs) == before and no_fetch_running(fs)


def test_the_button_and_the_progress_say_what_is_loaded(fs):
    assert fetch_job.button_label(fs, ["B25003"]) == "Load table B25003 (Tenure) for all states and counties"
    assert fetch_job.button_label(fs, ["B25003", "B08301"], ("county",)) == (
        "Load tables B25003 (Tenure) and B08301 (Means of Transportation to Work) for all counties")
    job = fetch_job.FetchJob(["B25003", "B25002"], 2023, ("state", "county"), "x", "the app")
    fractions = []
    for step, done, total in [("B25003: metadata", 1, 1), ("B25003: download", 1, 2), ("B25003: load", 1, 1),
                              ("B25002: download", 2, 2), ("B25002: load", 1, 1), ("embedding", 5, 10),
                              ("writing the index", 1, 1)]:
        job.progress(step, done, total)
        fractions.append(job.fraction)
    assert fractions == sorted(fractions) and 0 < fractions[0] and fractions[-1] <= 1.0


# --- a decline, the load, the answer --------------------------------------------------------------------------------


def test_a_question_needing_a_table_declines_then_the_load_answers_it(fs):
    index_catalog(fs, tables=["B25003", "B25002"])  # the catalog entries of two tables that are not loaded
    first = agent.ask(HOMEOWNERSHIP, fs, record=False)
    assert first.declined and first.decline_kind == ErrorKind.NEEDS_FETCH
    assert first.to_dict()["error"]["fetch"] == {"tables": ["B25003"], "vintage": 2023,
                                                 "geographies": ["state", "county"]}
    job = start(fs, first.fetch["tables"], first.fetch["vintage"], first.fetch["geographies"])
    assert job.running and fetch_job.current_fetch() is job
    finished(job)
    assert job.state == "done", job.error
    assert job.fraction == 1.0 and job.report is not None and job.report.rows == len(table_rows(fs, "B25003"))
    assert job.report.index["status"] == "refreshed"
    assert no_fetch_running(fs)
    again = agent.ask(HOMEOWNERSHIP, fs, record=False)
    assert again.answered, again.to_dict()
    assert "B25003_002E" in again.sql
    with db.owner(fs) as conn:
        refs = {r for (r,) in conn.execute(
            "SELECT object_ref FROM sage.schema_embeddings WHERE object_type = 'acs_table'")}
    assert refs == {"B25002"}  # the loaded table left the catalog part; the other stays


def test_a_bad_key_fails_the_load_and_changes_nothing(fs):
    before = snapshot(fs)
    job = finished(start(fs.replace(census_api_key="not-the-key"), ["B25002"]))
    assert job.state == "failed" and job.error.kind == ErrorKind.BAD_KEY
    assert "not-the-key" not in job.error.message and "database is unchanged" in job.error.message
    assert snapshot(fs) == before and no_fetch_running(fs)


def test_the_api_down_fails_the_load_and_changes_nothing(fs, fake):
    before = snapshot(fs)
    fake.fail("status", times=100, status=503, match="get=")
    job = finished(start(fs, ["B25002"]))
    assert job.state == "failed" and job.error.kind == ErrorKind.UNAVAILABLE
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{sock.getsockname()[1]}/data"
    job = finished(start(fs.replace(census_api_url=nowhere), ["B25002"]))
    assert job.state == "failed" and job.error.kind == ErrorKind.NETWORK and "Could not reach" in job.error.message
    assert snapshot(fs) == before and no_fetch_running(fs)


def test_a_table_the_api_does_not_have_changes_nothing(fs):
    before = snapshot(fs)
    with pytest.raises(fetch.FetchError) as err:  # another vintage: not checked against the 2023 catalog first
        fetch_job.locked_fetch(fs, ["B99999"], 2022, client=client(fs), refresh_index=False)
    assert err.value.kind == ErrorKind.NOT_FOUND  # the API's 404 for the table's metadata
    assert "Table B99999 is not in the 2022 ACS 5-year detailed tables" in err.value.message
    assert "the database is unchanged" in err.value.message
    assert snapshot(fs) == before and no_fetch_running(fs)


# --- one at a time ---------------------------------------------------------------------------------------------------


def test_two_users_pressing_the_button_at_once_get_one_load(fs, fake):
    fake.fail("timeout", times=1, delay=1.5, match="get=")  # the first download is slow: the load is still running
    barrier = threading.Barrier(2)
    outcomes: list[object] = []

    def press() -> None:
        barrier.wait()
        try:
            outcomes.append(start(fs, ["B25003"], refresh_index=False))
        except SageError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=press) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    jobs = [o for o in outcomes if isinstance(o, fetch_job.FetchJob)]
    refused = [o for o in outcomes if isinstance(o, SageError)]
    assert len(jobs) == 1 and len(refused) == 1
    message = refused[0].message
    assert refused[0].kind == ErrorKind.BUSY
    assert "Another fetch is running: B25003 (Tenure) for all states and counties, by the app" in message
    assert finished(jobs[0]).state == "done"
    assert finished(start(fs, ["B25003"], refresh_index=False)).state == "done"  # free again


def test_a_fetch_in_another_process_refuses_the_app_and_the_command_line(fs, monkeypatch, capsys):
    from sage import cli

    before = snapshot(fs)
    with db.owner(fs) as other:  # what `python -m sage census fetch` in another terminal holds
        assert locks.try_lock(other, locks.CENSUS_FETCH, "sage fetch B08301 by the command line")
        with pytest.raises(SageError) as err:
            start(fs, ["B25002"])
        assert err.value.kind == ErrorKind.BUSY
        assert ("B08301 (Means of Transportation to Work) for all states and counties, by the command line "
                f"(process {locks.holder(other, locks.CENSUS_FETCH).pid})") in err.value.message
        for name, value in {"SAGE_DATA_DIR": str(fs.data_dir), "CENSUS_API_KEY": KEY,
                            "SAGE_CENSUS_API_URL": fs.census_api_url}.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("DATABASE_URL", raising=False)
        assert cli.main(["census", "fetch", "--json", "--tables", "B25002"]) == 1
        out = json.loads(capsys.readouterr().out)
        assert out["error"]["kind"] == "busy" and "by the command line" in out["error"]["message"]
    assert snapshot(fs) == before and no_fetch_running(fs)


def test_the_command_line_is_refused_while_the_app_loads(fs, fake, monkeypatch, capsys):
    from sage import cli

    fake.fail("timeout", times=1, delay=2.0, match="get=")
    job = start(fs, ["B25003"], refresh_index=False)
    for name, value in {"SAGE_DATA_DIR": str(fs.data_dir), "CENSUS_API_KEY": KEY,
                        "SAGE_CENSUS_API_URL": fs.census_api_url}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    try:
        assert cli.main(["census", "fetch", "--tables", "B25002"]) == 1
        err = capsys.readouterr().err
        assert "Another fetch is running: B25003 (Tenure) for all states and counties, by the app" in err
    finally:
        finished(job)
    assert job.state == "done"


def test_questions_are_answered_while_a_table_loads(fs, fake):
    fake.fail("timeout", times=1, delay=5.0, match="get=")
    job = start(fs, ["B25003"], refresh_index=False)
    try:
        started = time.monotonic()
        answer = agent.ask("What is the population of Ohio?", fs, record=False)
        assert answer.answered, answer.to_dict()
        assert job.running, f"the question took {time.monotonic() - started:.1f} s: it waited for the load"
    finally:
        finished(job)
    assert job.state == "done"


def test_a_login_that_may_not_take_advisory_locks_is_told_what_to_grant(settings):
    """Setup's confinement of the reader revokes the advisory-lock functions from PUBLIC: a database owner who is
    not a superuser (DATABASE_URL, the administrator ran setup's SQL) gets a message, not a psycopg error."""
    import psycopg

    from sage.errors import DatabaseError
    from sage.settings import with_user

    role = "sage_lock_test"
    with db.owner(settings) as conn:
        conn.execute(f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{role}') THEN "
                     f"CREATE ROLE {role} LOGIN; END IF; END $$")
    try:
        with psycopg.connect(with_user(db.admin_url(settings), role, None), autocommit=True) as conn:
            with pytest.raises(DatabaseError, match="GRANT EXECUTE ON FUNCTION pg_try_advisory_lock"):
                locks.try_lock(conn, locks.CENSUS_FETCH, "sage fetch B25003 by a test")
    finally:
        with db.owner(settings) as conn:
            conn.execute(f"DROP ROLE IF EXISTS {role}")

