"""The whole loop with the Claude planner, the real SDK and the fake Messages API on 127.0.0.1: retries, refusals,
the places block in the request, place and ambiguity declines, and the significance sage computes from the rows of
a Claude change and a Claude comparison (never from the model)."""

from __future__ import annotations

import json
import math

import pytest

from sage import agent
from sage.db import owner
from sage.planner.claude.claude import ClaudePlanner
from tests.fake_anthropic import FakeAnthropic, error_reply, reply_answer, reply_plan, reply_text

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


# -- places, periods and significance: the Claude planner as the question loop runs it -----------------------------


@pytest.fixture
def wired(settings, monkeypatch):
    """The Claude planner as ``agent.make_planner`` builds it (with the place reader over the offline planner's
    catalog), talking to the fake Messages API."""
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setattr(agent, "_planners", {})  # a planner of its own, with a client for this fake
        s = settings.replace(anthropic_api_key=KEY, planner="claude", claude_timeout_s=10.0, claude_max_retries=0)
        yield fake, agent.make_planner(s), s


def _example(question_start: str):
    from sage.planner.claude.examples import FEW_SHOT_EXAMPLES

    return next((q, p) for q, p in FEW_SHOT_EXAMPLES if q.startswith(question_start))


def _z(x1, m1, x2, m2) -> float:
    return (x1 - x2) / math.sqrt((m1 / 1.645) ** 2 + (m2 / 1.645) ** 2)


def test_the_request_carries_the_places_block_and_the_periods(wired):
    fake, planner, s = wired
    question, plan = _example("What is the median household income in Austin")
    fake.enqueue(reply_answer(plan))
    answer = agent.ask(question, s, planner=planner, record=False)
    sent = _user_text(fake.message_requests[0])
    block = sent.split("<places>\n", 1)[1].split("\n</places>", 1)[0]
    assert block.splitlines()[0] == ("- “Austin, TX” → place 1600000US4805000 'Austin city, Texas' (has: population, "
                                     "housing units)")
    assert block.splitlines()[-1].startswith("Levels with rows: nation, state, county, place; none yet: cbsa")
    income = next(line for line in sent.splitlines() if line.startswith("- ACS variable B19013_001E"))
    assert income.endswith("; periods loaded: 2014-2018, 2019-2023")
    # the decline: a loaded table, for places: the fetch of Texas's places stays a fetch through the loop
    assert answer.declined and answer.decline_kind == "needs_fetch"
    assert answer.fetch == {"tables": ["B19013"], "vintage": 2023, "geographies": ["place"], "states": ["TX"]}
    assert answer.decline == plan["assumptions"][0]


def test_an_ambiguous_place_is_asked_back(wired):
    fake, planner, s = wired
    question, plan = _example("What is the population of Springfield")
    fake.enqueue(reply_answer(plan))
    answer = agent.ask(question, s, planner=planner, record=False)
    assert "- “Springfield” → ambiguous: Springfield city, MO (169,432)" in _user_text(fake.message_requests[0])
    assert answer.declined and answer.decline_kind == "ambiguous"
    assert answer.suggestions == plan["decline"]["suggestions"]
    assert answer.to_dict()["error"]["kind"] == "ambiguous"


def test_significance_of_a_claude_change_is_computed_by_sage(wired):
    fake, planner, s = wired
    question, plan = _example("How has real median household income changed")
    fake.enqueue(reply_answer(plan))
    answer = agent.ask(question, s, planner=planner, record=False)
    assert answer.answered, answer.error
    [item] = answer.significance
    with owner(s) as conn:
        (x1, m1), (x2, m2) = (conn.execute(
            "SELECT estimate, margin_error FROM public.estimates_by_vintage WHERE geo_id = '0500000US48453' AND "
            "variable_code = 'B19013_001E' AND vintage = %s", (period,)).fetchone() for period in plan["periods"])
        f = conn.execute("SELECT (SELECT index FROM public.cpi_u_rs WHERE year = 2023) / "
                         "(SELECT index FROM public.cpi_u_rs WHERE year = 2018)").fetchone()[0]
    change, moe = float(x2 - x1 * f), float((m2 ** 2 + (m1 * f) ** 2).sqrt())
    assert item["a"] == "Travis County, Texas (2019-2023)" and item["b"] == "Travis County, Texas (2014-2018)"
    assert math.isclose(item["difference"], change, rel_tol=1e-9) and math.isclose(item["moe"], moe, rel_tol=1e-9)
    assert math.isclose(item["z"], change / (moe / 1.645), rel_tol=1e-9)
    assert item["significant"] is (abs(change) > moe) and item["level"] == 0.9


def test_significance_of_a_claude_comparison_is_computed_by_sage(wired):
    fake, planner, s = wired
    question, plan = _example("Compare median household income in Travis County and Williamson")
    fake.enqueue(reply_answer(plan))
    answer = agent.ask(question, s, planner=planner, record=False)
    assert answer.answered, answer.error
    [item] = answer.significance
    with owner(s) as conn:
        (x1, m1), (x2, m2) = (conn.execute(
            "SELECT estimate, margin_error FROM public.estimates WHERE geo_id = %s AND variable_code = "
            "'B19013_001E'", (g,)).fetchone() for g in ("0500000US48491", "0500000US48453"))
    assert item["a"].startswith("Williamson County") and item["b"].startswith("Travis County")  # the result's order
    z = _z(float(x1), float(m1), float(x2), float(m2))
    assert math.isclose(item["z"], z, rel_tol=1e-9) and item["significant"] is (abs(z) > 1.645)


def test_a_claude_comparison_without_margins_says_so(wired):
    fake, planner, s = wired
    question, plan = _example("How do Arizona, Nevada and New Mexico compare")
    fake.enqueue(reply_answer(plan))
    answer = agent.ask(question, s, planner=planner, record=False)
    assert answer.answered and answer.significance
    assert all(item["significant"] is None for item in answer.significance)
    assert "cannot be assessed" in answer.significance_note


def test_an_unknown_comparison_tests_nothing(wired):
    fake, planner, s = wired
    _question, plan = _example("Compare median household income in Travis County and Williamson")
    fake.enqueue(reply_answer({**plan, "comparison": "vibes", "periods": "lots"}))
    answer = agent.ask("compare them", s, planner=planner, record=False)
    assert answer.answered and answer.significance == [] and answer.significance_note is None
