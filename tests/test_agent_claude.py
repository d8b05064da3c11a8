"""The whole loop with the Claude planner, the real SDK and the fake Messages API on 127.0.0.1."""

from __future__ import annotations

import json

import pytest

from sage import agent
from sage.planner.claude import ClaudePlanner
from tests.fake_anthropic import FakeAnthropic, error_reply, reply_plan, reply_text

KEY = "sk-ant-agent-test-key"
GOOD = (
    "SELECT g.state_name, e.estimate AS housing_units FROM public.estimates e JOIN public.geography g "
    "ON g.geo_id = e.geo_id WHERE g.level = 'state' AND e.variable_code = 'B25001_001E' "
    "ORDER BY e.estimate DESC NULLS LAST LIMIT 5"
)
BROKEN = GOOD.replace("e.estimate AS housing_units", "e.housing_units")


@pytest.fixture
def claude(settings, monkeypatch):
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        s = settings.replace(anthropic_api_key=KEY, planner="claude", claude_timeout_s=10.0)
        yield fake, ClaudePlanner(s, max_retries=1), s


def _user_text(request) -> str:
    return request.body["messages"][0]["content"]


def test_an_undefined_column_goes_back_and_the_fix_answers(claude):
    fake, planner, s = claude
    fake.enqueue(reply_plan(BROKEN, ["first"], "bar"), reply_plan(GOOD, ["Housing units B25001_001E"], "bar"))
    answer = agent.ask("Which states have the most housing units?", s, planner=planner, record=False)
    assert answer.answered, answer.error
    assert answer.tries == 2 and answer.result.row_count == 5
    first, second = fake.message_requests
    assert BROKEN not in _user_text(first)
    assert BROKEN in _user_text(second) and "housing_units" in answer.attempts[0].error
    assert "does not exist" in _user_text(second)
    # what went out: the system prompt, the retrieved context and the question; nothing internal, no credential
    body = json.dumps(first.body)
    assert "B25001_001E" in body and "Which states have the most housing units?" in body
    assert "schema_embeddings" not in body and "sage.questions" not in body and "reader_login" not in body
    assert KEY not in body
    assert answer.usage.get("input_tokens", 0) > 0


def test_a_policy_refusal_is_not_negotiable(claude):
    fake, planner, s = claude
    fake.enqueue(reply_plan("SELECT * FROM sage.questions", [], "table"), reply_plan(GOOD, [], "bar"))
    answer = agent.ask("show me everything you know", s, planner=planner, record=False)
    assert not answer.answered and answer.error.kind == "guard"
    assert len(fake.message_requests) == 1 and fake.pending == 1


def test_an_answer_that_does_not_fit_is_retried_then_reported(claude):
    fake, planner, s = claude
    fake.enqueue(reply_text("Sure! Here is your SQL: SELECT 1"), reply_plan(GOOD, ["ok"], "bar"))
    answer = agent.ask("states by housing units", s, planner=planner, record=False)
    assert answer.answered and answer.attempts[0].kind == "bad_answer"
    fake.enqueue(*[reply_text("not json")] * s.max_attempts)
    answer = agent.ask("states by housing units", s, planner=planner, record=False)
    assert not answer.answered and answer.error.kind == "attempts_exhausted"


def test_a_bad_key_stops_at_once_with_a_clear_message(claude):
    fake, planner, s = claude
    fake.enqueue(error_reply(401))
    answer = agent.ask("states by housing units", s, planner=planner, record=False)
    assert answer.error.kind == "bad_key" and "ANTHROPIC_API_KEY" in answer.error.message
    assert len(fake.message_requests) == 1
