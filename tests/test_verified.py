"""The verified-answer library: ``verify`` / ``--remove``; a question that means the same as a verified one is
answered with the verified SQL through the guard and the executor (``"verified": true``); a different place, measure
or N is not; a verified answer whose SQL no longer passes the guard or no longer runs is skipped and flagged, never
served; the reader role cannot read the library; Claude gets the closest verified answers as examples."""

from __future__ import annotations

import json
import time

import psycopg
import pytest

from sage import agent, cli, db, querylog, verified
from sage.errors import QuestionError
from sage.roles import Role
from tests.fake_anthropic import FakeAnthropic, reply_plan

KEY = "sk-ant-verified-test-key"
TRAVIS = "median household income in Travis County TX"


@pytest.fixture(autouse=True)
def empty_library(settings):
    """The session database is shared: every test starts and ends with an empty library."""
    def clear():
        querylog.ensure_tables(settings)
        with db.owner(settings) as conn:
            conn.execute("DELETE FROM sage.verified_answers")
    clear()
    yield
    clear()


@pytest.fixture
def run_cli(settings, monkeypatch, capsys):
    monkeypatch.setattr(cli, "load_settings", lambda **kw: settings.replace(**{"planner": "offline", **kw}))

    def run(*args: str):
        code = cli.main(list(args))
        out = capsys.readouterr()
        return code, (json.loads(out.out) if "--json" in args and out.out.strip() else out.out), out.err

    return run


@pytest.fixture
def claude(settings, monkeypatch):
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setattr(agent, "_planners", {})
        yield fake, settings.replace(anthropic_api_key=KEY, planner="claude", claude_timeout_s=10.0)


def _ask(settings, question, **kw):
    return agent.ask(question, settings, planner=kw.pop("planner", "offline"), **kw)


def _entry(settings, verified_id):
    """(invalid_reason, invalidated_at, how many logged answers it served)."""
    [v] = [v for v in verified.listing(settings) if v.id == verified_id]
    return v.invalid_reason, v.invalidated_at, v.served


def test_the_reader_role_cannot_read_the_library_or_the_feedback(settings):
    with db.owner(settings) as conn:
        for table in ("sage.verified_answers", "sage.feedback", "sage.questions"):
            row = conn.execute("SELECT has_table_privilege(%s, %s, 'SELECT'), has_schema_privilege(%s, 'sage', "
                               "'USAGE')", (db.READER_ROLE, table, db.READER_ROLE)).fetchone()
            assert row == (False, False), table
    conn = db.reader_connect(settings)
    try:
        for table in ("sage.verified_answers", "sage.feedback"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(f"SELECT count(*) FROM {table}")
            conn.rollback()
    finally:
        conn.close()


def test_a_paraphrase_of_a_verified_question_is_answered_with_its_sql(settings):
    first = _ask(settings, TRAVIS)
    entry = verified.add(settings, first.id, role=Role.OPERATOR)
    assert entry.frame == first.frame and entry.standalone == "median household income, Travis County, TX"
    started = time.perf_counter()
    again = _ask(settings, "What's the median household income of Travis County, Texas?")
    elapsed_ms = (time.perf_counter() - started) * 1000
    assert again.answered and again.verified and again.verified_id == entry.id and again.planner == "verified"
    assert again.result.rows == first.result.rows and again.sql == first.sql
    assert again.notices and "marked right" in again.notices[0] and TRAVIS in again.notices[0]
    data = again.to_dict()
    assert data["verified"] is True and data["planner"] == "verified"
    assert querylog.get(settings, again.id).verified_id == entry.id
    assert _entry(settings, entry.id)[2] == 1  # counted as served
    assert again.timings_ms["plan"] == 0.0 and again.timings_ms["verified"] > 0
    print(f"verified answer in {elapsed_ms:.0f} ms (timings {again.timings_ms})")


@pytest.mark.parametrize("question", [
    "median household income in Williamson County TX",  # another place
    "poverty rate in Travis County TX",  # another measure
    "median household income in Travis County TX and Hays County TX",  # a place added
])
def test_a_close_question_that_asks_something_else_is_not_served(settings, question):
    verified.add(settings, _ask(settings, TRAVIS).id, role=Role.OPERATOR)
    answer = _ask(settings, question)
    assert not answer.verified and answer.planner == "offline"
    assert verified.closest(settings, question)[0].similarity >= 0.5  # close in words: the frame tells them apart


def test_a_ranking_of_another_length_is_not_served(settings):
    ten = _ask(settings, "Which 10 counties have the highest median gross rent?")
    verified.add(settings, ten.id, role=Role.OPERATOR)
    five = _ask(settings, "Which 5 counties have the highest median gross rent?")
    assert not five.verified and five.result.row_count == 5
    assert _ask(settings, "the 10 counties with the highest median gross rent").verified


def test_a_follow_up_is_served_from_the_library_with_its_reading_first(settings):
    williamson = _ask(settings, "median household income in Williamson County, TX")
    verified.add(settings, williamson.id, role=Role.OPERATOR)
    first = _ask(settings, TRAVIS)
    second = _ask(settings, "and Williamson County?", context=querylog.thread(settings, first.id),
                  parent_id=first.id)
    assert second.verified and second.result.rows == williamson.result.rows
    assert second.assumptions[0] == "Read as: median household income, Williamson County, TX."
    assert sum(a.startswith("Read as:") for a in second.assumptions) == 1
    assert querylog.get(settings, second.id).parent_id == first.id


def test_sql_that_no_longer_runs_is_skipped_flagged_and_never_served(settings):
    first = _ask(settings, TRAVIS)
    entry = verified.add(settings, first.id, role=Role.OPERATOR)
    with db.owner(settings) as conn:  # a column that is gone
        conn.execute("UPDATE sage.verified_answers SET sql = replace(sql, 'e.estimate', 'e.estimate_gone') "
                     "WHERE id = %s", (entry.id,))
    answer = _ask(settings, TRAVIS)
    assert answer.answered and not answer.verified and answer.planner == "offline"
    assert answer.result.rows == first.result.rows
    assert "skipped" in answer.notices[0] and "no longer runs" in answer.notices[0]
    assert "flagged for review" in answer.notices[0]
    reason, when, served = _entry(settings, entry.id)
    assert "no longer runs" in reason and when is not None and served == 0
    later = _ask(settings, TRAVIS)
    assert not later.verified and not later.notices, "a flagged answer is not considered again"
    assert [v.id for v in verified.listing(settings, invalid_only=True)] == [entry.id]
    verified.add(settings, first.id, role=Role.OPERATOR)  # verified anew from the log: the flag is cleared
    assert _entry(settings, entry.id)[:2] == (None, None) and _ask(settings, TRAVIS).verified


def test_sql_the_guard_refuses_is_skipped_flagged_and_never_run(settings):
    entry = verified.add(settings, _ask(settings, TRAVIS).id, role=Role.OPERATOR)
    with db.owner(settings) as conn:
        before = conn.execute("SELECT count(*) FROM sage.questions").fetchone()[0]
        conn.execute("UPDATE sage.verified_answers SET sql = 'SELECT question FROM sage.questions' WHERE id = %s",
                     (entry.id,))
    answer = _ask(settings, TRAVIS, record=False)
    assert answer.answered and not answer.verified
    assert "SQL guard refuses" in answer.notices[0]
    reason, when, _ = _entry(settings, entry.id)
    assert reason.startswith("the SQL guard refuses") and when is not None
    with db.owner(settings) as conn:
        assert conn.execute("SELECT count(*) FROM sage.questions").fetchone()[0] == before


def test_verify_and_remove_on_the_command_line(run_cli, settings):
    code, first, _ = run_cli("ask", TRAVIS, "--json")
    assert code == 0 and first["verified"] is False
    code, data, _ = run_cli("verify", str(first["id"]), "--json")
    assert code == 0 and data["verified"] is True and data["question_id"] == first["id"]
    assert data["sql"] == first["sql"] and data["frame"]["op"] == "value"
    code, again, _ = run_cli("ask", "Travis County, Texas: median household income?", "--json")
    assert code == 0 and again["verified"] is True and again["rows"] == first["rows"]
    code, text, _ = run_cli("verify", str(first["id"]))  # again: still one entry
    assert code == 0 and "Verified" in text and len(verified.listing(settings)) == 1
    code, data, _ = run_cli("verify", str(first["id"]), "--remove", "--json")
    assert code == 0 and data == {"question_id": first["id"], "removed": True}
    code, data, _ = run_cli("verify", str(first["id"]), "--remove", "--json")
    assert code == 0 and data["removed"] is False
    code, again, _ = run_cli("ask", "Travis County, Texas: median household income?", "--json")
    assert again["verified"] is False


def test_only_an_answer_that_exists_and_runs_can_be_verified(run_cli, settings):
    code, data, err = run_cli("verify", "987654321", "--json")
    assert code == 2 and data["error"]["kind"] == "not_found" and "no logged answer 987654321" in err
    declined = _ask(settings, "How many people commute by bike in Oregon?")
    code, data, _ = run_cli("verify", str(declined.id), "--json")
    assert code == 1 and "only an answered question can be marked right" in data["error"]["message"]
    with pytest.raises(QuestionError, match="SQL guard refuses"):
        bad = agent.run_sql("SELECT * FROM sage.questions", settings)  # logged, refused
        with db.owner(settings) as conn:  # pretend it had answered
            conn.execute("UPDATE sage.questions SET outcome = 'answered' WHERE id = %s", (bad.id,))
        verified.add(settings, bad.id, role=Role.OPERATOR)


def test_a_claude_answer_is_served_for_a_paraphrase_when_the_offline_reading_answers_alike(claude):
    fake, s = claude
    sql = ("SELECT g.county_name, g.state_name, e.estimate AS median_household_income FROM public.estimates e "
           "JOIN public.geography g ON g.geo_id = e.geo_id WHERE g.level = 'county' AND g.county_name = "
           "'Travis County' AND g.state_abbr = 'TX' AND e.variable_code = 'B19013_001E'")
    fake.enqueue(reply_plan(sql, ["B19013_001E"], "big", standalone="Median household income in Travis County, TX"))
    first = _ask(s, TRAVIS, planner="claude")
    assert first.answered and first.frame is None
    entry = verified.add(s, first.id, role=Role.OPERATOR)
    assert entry.frame is not None and entry.frame["measures"] == ["median_household_income"]
    again = _ask(s, "Travis County, Texas: what is the median household income?", planner="claude")
    assert again.verified and again.result.rows == first.result.rows
    assert len(fake.message_requests) == 1, "served from the library: Claude was not asked"


def test_a_claude_answer_the_offline_reading_does_not_reproduce_is_served_for_the_same_question_only(claude):
    fake, s = claude
    question = "What is the correlation between median household income and poverty rate across Texas counties?"
    sql = ("SELECT ROUND(corr(i.estimate, p.estimate)::numeric, 3) AS correlation FROM public.estimates i "
           "JOIN public.estimates p ON p.geo_id = i.geo_id JOIN public.geography g ON g.geo_id = i.geo_id "
           "WHERE g.level = 'county' AND g.state_abbr = 'TX' AND i.variable_code = 'B19013_001E' "
           "AND p.variable_code = 'B17025_002E'")
    fake.enqueue(reply_plan(sql, ["corr"], "big", standalone=question))
    first = _ask(s, question, planner="claude")
    assert first.answered, first.error
    entry = verified.add(s, first.id, role=Role.OPERATOR)
    assert entry.frame is None, "the offline planner reads it as a list of both measures: not the same answer"
    listing = _ask(s, "median household income and poverty rate of every county in Texas", planner="offline")
    assert not listing.verified and listing.result.row_count > 200
    again = _ask(s, question.lower().replace("?", ""), planner="claude")
    assert again.verified and again.result.rows == first.result.rows


def test_claude_gets_the_closest_verified_answers_as_examples(claude):
    fake, s = claude
    travis = _ask(s, TRAVIS, planner="offline")
    verified.add(s, travis.id, role=Role.OPERATOR)
    hays = ("SELECT g.county_name, e.estimate AS median_household_income FROM public.estimates e JOIN "
            "public.geography g ON g.geo_id = e.geo_id WHERE g.level = 'county' AND g.county_name = 'Hays County' "
            "AND g.state_abbr = 'TX' AND e.variable_code = 'B19013_001E'")
    fake.enqueue(reply_plan(hays, ["B19013_001E"], "big", standalone="median household income, Hays County, TX"))
    answer = _ask(s, "median household income in Hays County TX", planner="claude")
    assert answer.answered and not answer.verified
    [request] = fake.message_requests
    text = request.body["messages"][0]["content"]
    block = text[text.index("<verified>"):text.index("</verified>")]
    assert f"Question: {TRAVIS}" in block and "'Travis County'" in block
    assert text.index("</verified>") < text.index("<question>")
    assert "97169" not in request.raw.decode(), "examples carry SQL, never rows"
