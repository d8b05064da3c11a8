"""Conversations in the query log and on the command line: ``parent_id``, the standalone reading and the frame are
logged; ``querylog.thread`` gives the earlier turns back; ``ask --after ID`` replays a conversation; ``--after`` an
id that does not exist is a clear error (exit 2); a database set up before these columns existed is migrated."""

from __future__ import annotations

import json

import psycopg
import pytest

from sage import agent, cli, querylog
from sage.census.schema import CONVERSATION_DDL

from .conftest import make_settings, scratch_database


@pytest.fixture
def run_cli(settings, monkeypatch, capsys):
    """``python -m sage ...`` in this process, on the session database with the offline planner."""
    monkeypatch.setattr(cli, "load_settings", lambda **kw: settings.replace(**{"planner": "offline", **kw}))

    def run(*args: str) -> tuple[int, dict | str, str]:
        code = cli.main(list(args))
        out = capsys.readouterr()
        data = json.loads(out.out) if "--json" in args and out.out.strip() else out.out
        return code, data, out.err

    return run


def test_a_follow_up_is_logged_with_its_parent_reading_and_frame(settings):
    first = agent.ask("median household income in Travis County TX", settings, planner="offline")
    second = agent.ask("and Williamson County?", settings, planner="offline",
                       context=querylog.thread(settings, first.id), parent_id=first.id)
    assert second.answered and second.followup
    entry = querylog.get(settings, second.id)
    assert entry.parent_id == first.id and entry.followup
    assert entry.standalone == "median household income, Williamson County, TX"
    assert entry.frame["geo"]["places"][0]["geo_id"] == "0500000US48491" and entry.decline_kind is None
    turns = querylog.thread(settings, second.id)
    assert [t.question for t in turns] == ["median household income in Travis County TX", "and Williamson County?"]
    assert turns[0].sql == first.sql and turns[1].frame == second.frame
    assert not any("108309" in json.dumps(t.__dict__) for t in turns), "a turn never carries rows"


def test_a_clarifying_choice_is_logged_and_answers_the_conversation(settings):
    first = agent.ask("population of Alaska", settings, planner="offline")
    ambiguous = agent.ask("and Washington County?", settings, planner="offline",
                          context=querylog.thread(settings, first.id), parent_id=first.id)
    assert ambiguous.declined and ambiguous.decline_kind == "ambiguous"
    assert "and Washington County, OR?" in ambiguous.suggestions
    entry = querylog.get(settings, ambiguous.id)
    assert entry.decline_kind == "ambiguous" and entry.frame is None and entry.parent_id == first.id
    chosen = agent.ask("and Washington County, OR?", settings, planner="offline",
                       context=querylog.thread(settings, ambiguous.id), parent_id=ambiguous.id)
    assert chosen.answered and chosen.assumptions[0] == ("Read as: population, Washington County, OR "
                                                         "(edit: swap places “Washington County, OR”).")
    assert chosen.result.rows[0][:2] == ["Washington County", "Oregon"]


def test_the_thread_is_capped_and_unknown_ids_have_none(settings):
    parent = None
    for n in range(1, 9):
        question = "population of Ohio" if n == 1 else f"and Kentucky? ({n})"
        answer = agent.ask(question, settings, planner="offline", parent_id=parent,
                           context=querylog.thread(settings, parent) if parent else ())
        parent = answer.id
    turns = querylog.thread(settings, parent)
    assert len(turns) == querylog.MAX_THREAD and turns[-1].question == "and Kentucky? (8)"
    assert querylog.thread(settings, 10**12) == [] and querylog.thread(settings, True) == []


def test_ask_json_carries_its_id_and_after_replays_a_conversation(run_cli, settings):
    code, first, _ = run_cli("ask", "unemployment rate michigan", "--json")
    assert code == 0 and isinstance(first["id"], int) and first["parent_id"] is None and first["verified"] is False
    code, second, _ = run_cli("ask", "ohio", "--after", str(first["id"]), "--json")
    assert code == 0 and second["parent_id"] == first["id"]
    assert second["rows"][0][0] == "Ohio" and second["assumptions"][0].startswith("Read as: unemployment rate")
    code, third, _ = run_cli("ask", "kent county mi?", "--after", str(second["id"]), "--json")
    assert code == 0 and third["rows"][0][:2] == ["Kent County", "Michigan"]
    assert third["standalone"] == "unemployment rate, Kent County, MI"
    assert [t.question for t in querylog.thread(settings, third["id"])] == [
        "unemployment rate michigan", "ohio", "kent county mi?"]
    code, text, _ = run_cli("ask", "and Wayne County?", "--after", str(third["id"]))
    assert code == 0 and "Wayne County" in text and "Read as: unemployment rate, Wayne County, MI" in text


def test_after_an_id_that_does_not_exist_is_a_clear_error(run_cli):
    code, data, err = run_cli("ask", "and Ohio?", "--after", "987654321", "--json")
    assert code == 2 and data["error"]["kind"] == "not_found"
    assert "no logged answer 987654321" in data["error"]["message"] and "Traceback" not in err
    code, _, err = run_cli("ask", "and Ohio?", "--after", "987654321")
    assert code == 2 and err.startswith("error: There is no logged answer 987654321")


def test_a_follow_up_with_nothing_before_it_is_declined_with_a_reason(run_cli):
    code, data, _ = run_cli("ask", "and Williamson County?", "--json")
    assert code == 1 and data["error"]["kind"] == "declined"
    assert "nothing was asked before it" in data["error"]["message"] and isinstance(data["id"], int)


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


def test_a_log_made_before_conversations_is_migrated(settings):
    with scratch_database(settings, "f15_migrate") as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(OLD_QUESTIONS)
        old = make_settings(database_url=url)
        [entry] = querylog.recent(old)  # the columns are added on first use
        assert entry.question == "an old question" and entry.parent_id is None and entry.frame is None
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(CONVERSATION_DDL)  # and again (setup runs it every time): nothing changes
            columns = {r[0] for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = 'sage' "
                "AND table_name = 'questions'")}
            tables = conn.execute(
                "SELECT to_regclass('sage.verified_answers'), to_regclass('sage.feedback')").fetchone()
        assert {"parent_id", "standalone", "frame", "decline_kind", "verified_id"} <= columns and all(tables)
