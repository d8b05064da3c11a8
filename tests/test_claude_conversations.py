"""Follow-ups with the Claude planner, through the real SDK and the fake Messages API on 127.0.0.1: the earlier turns
(question, reading, SQL, assumptions) are in the request and their rows are not; the reply's standalone reading
comes back as the answer's "Read as" line; a conversation set is scored turn by turn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sage import agent, querylog
from sage.evaluate import read_questions, score_conversation
from sage.planner.base import PriorTurn
from sage.planner.claude.claude import ClaudePlanner
from sage.planner.edits import EditKind
from tests.fake_anthropic import FakeAnthropic, reply_answer, reply_plan

KEY = "sk-ant-conversation-test-key"
QUESTIONS = Path(__file__).parent / "data" / "questions"


def _sql(county: str) -> str:
    return ("SELECT g.county_name, g.state_name, e.estimate AS median_household_income FROM public.estimates e "
            "JOIN public.geography g ON g.geo_id = e.geo_id WHERE g.level = 'county' AND g.county_name = "
            f"'{county}' AND g.state_abbr = 'TX' AND e.variable_code = 'B19013_001E'")


@pytest.fixture
def claude(settings, monkeypatch):
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setattr(agent, "_planners", {})  # a planner (and its client) built against this fake
        s = settings.replace(anthropic_api_key=KEY, planner="claude", claude_timeout_s=10.0)
        yield fake, s


def _user_text(request) -> str:
    return request.body["messages"][0]["content"]


def test_the_earlier_turns_go_in_the_request_and_their_rows_do_not(claude):
    fake, s = claude
    planner = ClaudePlanner(s, max_retries=0)
    fake.enqueue(reply_plan(_sql("Travis County"), ["Median household income is B19013_001E."], "big",
                            standalone="median household income, Travis County, TX"))
    first = agent.ask("median household income in Travis County TX", s, planner=planner)
    assert first.answered and not first.followup and first.standalone == "median household income, Travis County, TX"
    income = first.result.rows[0][2]
    fake.enqueue(reply_plan(_sql("Williamson County"), ["Median household income is B19013_001E.",
                                                        "Read as: should not be kept"], "big",
                            standalone="median household income, Williamson County, TX"))
    second = agent.ask("and Williamson County?", s, planner=planner, context=querylog.thread(s, first.id),
                       parent_id=first.id)
    assert second.answered and second.result.rows[0][0] == "Williamson County"
    assert second.assumptions == ["Read as: median household income, Williamson County, TX.",
                                  "Median household income is B19013_001E."]
    assert second.standalone == "median household income, Williamson County, TX"
    assert querylog.get(s, second.id).parent_id == first.id
    one, two = fake.message_requests
    assert "<conversation>" not in _user_text(one)
    text = _user_text(two)
    block = text[text.index("<conversation>"):text.index("</conversation>")]
    assert "Question: median household income in Travis County TX" in block
    assert "Read as: median household income, Travis County, TX" in block
    assert "g.county_name = 'Travis County'" in block and "- Median household income is B19013_001E." in block
    assert text.rstrip().endswith("and Williamson County?\n</question>")
    raw = two.raw.decode()
    assert str(income) not in raw and f"{income:,}" not in raw, "the earlier answer's rows never leave"
    assert KEY not in raw


def test_a_reading_that_only_repeats_the_question_is_not_a_follow_up(claude):
    fake, s = claude
    planner = ClaudePlanner(s, max_retries=0)
    prior = PriorTurn("population of Ohio", "population, Ohio", "SELECT 1", ("a",))
    fake.enqueue(reply_plan(_sql("Travis County"), ["b"], "big", standalone="Median household income, Travis County?"))
    plan = planner.plan("median household income, Travis County", [], context=[prior])
    assert plan.assumptions == ["b"] and plan.standalone == "Median household income, Travis County?"
    fake.enqueue(reply_plan(_sql("Travis County"), ["b"], "big"))  # no reading at all: the question itself
    plan = planner.plan("  median  household income in Travis County ", [], context=[prior])
    assert plan.standalone == "median household income in Travis County" and plan.assumptions == ["b"]


@pytest.mark.parametrize("conversation_id", ["q15-02", "q15-03", "q15-05"])
def test_a_conversation_set_is_scored_turn_by_turn_with_claude(claude, conversation_id):
    fake, s = claude
    conversation = next(r for r in read_questions(QUESTIONS / "conversations_q15.jsonl") if r["id"] == conversation_id)
    for turn in conversation["turns"]:  # the fake answers each turn with its gold SQL, as a reading of its own
        fake.enqueue(reply_plan(turn["gold_sql"], ["gold"], "table", standalone=f"reading of: {turn['question']}"))
    items = score_conversation(s, conversation, planner="claude")
    assert [i["correct"] for i in items] == [True] * len(items), [i["error"] for i in items]
    assert [i["read_as"] for i in items] == [f"reading of: {t['question']}" for t in conversation["turns"]]
    requests = fake.message_requests
    assert len(requests) == len(conversation["turns"])
    for n, request in enumerate(requests):
        text = _user_text(request)
        earlier = conversation["turns"][:n]
        assert ("<conversation>" in text) == bool(earlier)
        for turn in earlier:
            assert f"Question: {turn['question']}" in text and f"Read as: reading of: {turn['question']}" in text
        body = json.dumps(request.body)
        for item in items[:n]:  # no earlier result leaves: not one of its numbers
            for row in item["rows"]:
                for value in row:
                    if isinstance(value, (int, float)) and abs(value) >= 10_000:
                        assert str(value) not in body


def test_the_edit_names_and_the_previous_reading_go_to_claude_and_its_edits_come_back(claude):
    """Follow-ups read the same way whichever planner reads them: the conversation block gives Claude the closed set
    of edits by name and the previous turn's reading (with the edit that made it), and the reply's edit names come
    back on the answer; a name outside the set is left out, never shown."""
    fake, s = claude
    first = agent.ask("median household income in Travis County TX", s, planner="offline", record=False)
    second = agent.ask("add median home value", s, planner="offline", record=False, context=[first.as_prior()])
    assert second.answered and [e["kind"] for e in second.edits] == [EditKind.ADD_MEASURE.value]
    assert second.assumptions[0].endswith("(edit: add a measure “median home value”).")
    planner = ClaudePlanner(s, max_retries=0)
    fake.enqueue(reply_answer({"standalone": "median household income and median home value, Williamson County, TX",
                               "sql": _sql("Williamson County"), "assumptions": ["B19013_001E and B25077_001E."],
                               "displayHint": "table", "edits": ["swap_places", "rewrite_everything"]}))
    third = agent.ask("and Williamson?", s, planner=planner, record=False,
                      context=[first.as_prior(), second.as_prior()])
    assert third.answered and third.edits == [{"kind": "swap_places", "words": ""}]
    assert third.assumptions[0] == ("Read as: median household income and median home value, Williamson County, TX "
                                    "(edit: swap places).")
    (request,) = fake.message_requests
    text = _user_text(request)
    block = text[text.index("<conversation>"):text.index("</conversation>")]
    for kind in EditKind:  # the closed set, each by the name the reply must use
        assert f"- {kind.value}: {kind.gloss}" in block
    assert "Read as: median household income and median home value, Travis County, TX (edit: add a measure" in block
    assert block.index("Question: median household income in Travis County TX") < block.index(
        "Question: add median home value")
    assert '"edits"' in json.dumps(request.body["output_config"]["format"]["schema"]["required"])
