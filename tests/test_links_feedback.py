"""Links that reproduce an answer (``sage.links``) and thumbs up / down (``sage.feedback``), below the app."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs

import pytest

from sage import agent, db, feedback, links, querylog, verified
from sage.compare import compare_results
from sage.evaluate import read_questions
from sage.roles import Role

QUESTIONS = Path(__file__).parent / "data" / "questions"


@pytest.fixture(autouse=True)
def empty_library(settings):
    def clear():
        querylog.ensure_tables(settings)
        with db.owner(settings) as conn:
            conn.execute("DELETE FROM sage.verified_answers")
            conn.execute("DELETE FROM sage.feedback")
    clear()
    yield
    clear()


def _link_of(settings, answer, earlier):
    return links.questions_for(settings, question=answer.question, standalone=answer.standalone,
                               followup=answer.followup, planner=answer.planner, frame=answer.frame, earlier=earlier)


def _replay(settings, questions):
    answers = []
    for q in questions:
        answers.append(agent.ask(q, settings, planner="offline", record=False,
                                 context=[a.as_prior() for a in answers]))
    return answers[-1]


def test_every_answer_of_the_conversation_set_is_reproduced_by_its_link(settings):
    alone = chained = 0
    for conversation in read_questions(QUESTIONS / "conversations_q15.jsonl"):
        answers = []
        for turn in conversation["turns"]:
            answer = agent.ask(turn["question"], settings, planner="offline", record=False,
                               context=[a.as_prior() for a in answers])
            questions = _link_of(settings, answer, [a.question for a in answers])
            answers.append(answer)
            params = parse_qs(links.query_string(questions)[1:])
            request = links.read_link(params, settings)
            assert request.error is None and request.questions == questions
            again = _replay(settings, request.questions)
            assert again.outcome == answer.outcome, (turn["question"], questions)
            if answer.answered:
                same, why = compare_results(answer.result.columns, answer.result.rows, again.result.columns,
                                            again.result.rows, True)
                assert same, (turn["question"], questions, why)
            alone += len(questions) == 1
            chained += len(questions) > 1
    assert alone > chained > 0  # most follow-ups read the same alone; "which of those" needs its conversation


def test_a_place_swap_links_to_its_reading_and_which_of_those_to_the_conversation(settings):
    first = agent.ask("Which 10 counties have the largest population?", settings, planner="offline", record=False)
    assert _link_of(settings, first, []) == ["Which 10 counties have the largest population?"]
    swap = agent.ask("and the 5 smallest?", settings, planner="offline", record=False, context=[first.as_prior()])
    assert swap.followup and _link_of(settings, swap, [first.question]) == [swap.standalone]
    among = agent.ask("which of those has the highest poverty rate?", settings, planner="offline", record=False,
                      context=[first.as_prior()])
    assert among.followup and _link_of(settings, among, [first.question]) == [first.question, among.question]
    alaska = agent.ask("population of Alaska", settings, planner="offline", record=False)
    which = agent.ask("and Washington County?", settings, planner="offline", record=False,
                      context=[alaska.as_prior()])
    assert which.decline_kind == "ambiguous"  # a decline in a conversation links to the conversation
    assert _link_of(settings, which, [alaska.question]) == [alaska.question, which.question]


def test_a_link_names_the_planner_only_when_it_is_not_the_default(settings):
    offline = settings.replace(planner="offline")
    assert links.link_planner(offline, "offline") is None and links.link_planner(offline, "verified") is None
    assert links.link_planner(offline, "claude") == "claude"
    assert links.link_planner(settings.replace(planner="claude", anthropic_api_key="k"), "offline") == "offline"
    assert links.query_string(["median rent & income?", "and Ohio?"], "offline") == \
        "?q=median+rent+%26+income%3F&q=and+Ohio%3F&planner=offline"


@pytest.mark.parametrize("params, kind, words", [
    ({"q": [""]}, "question_empty", "no question in it"),
    ({"q": ["   "]}, "question_empty", "no question in it"),
    ({"q": ["x" * 10_000]}, "question_too_long", "10,000 characters"),
    ({"q": [f"population of Ohio {i}" for i in range(7)]}, "question_too_long", "at most 6"),
    ({"q": ["population of Ohio"], "planner": ["gpt"]}, "settings", "auto, claude and offline"),
    ({"q": ["?!"]}, "question_absurd", "cannot be asked"),
])
def test_a_bad_link_gets_a_clear_message(settings, params, kind, words):
    request = links.read_link(params, settings)
    assert request.error is not None and request.error.kind == kind and words in request.error.message
    assert not request.questions


def test_a_good_link_is_read_and_no_link_is_none(settings):
    assert links.read_link({}, settings) is None
    request = links.read_link({"q": ["  population   of Ohio "], "planner": ["offline"]}, settings)
    assert request.error is None and request.questions == ["population of Ohio"] and request.planner == "offline"


def test_thumbs_up_verifies_thumbs_down_keeps_a_reason_and_unverifies(settings):
    answer = agent.ask("median household income in Travis County TX", settings, planner="offline")
    feedback.rate(settings, answer.id, "up", role=Role.CURATOR)
    assert verified.of_question(settings, answer.id) is not None and feedback.rating_of(settings, answer.id) == "up"
    feedback.rate(settings, answer.id, "down", role=Role.CURATOR)  # changed its mind: out of the library
    assert verified.of_question(settings, answer.id) is None and feedback.rating_of(settings, answer.id) == "down"
    assert feedback.add_reason(settings, answer.id, "  should be the\nmean, not the median ")
    [item] = feedback.recent(settings, role=Role.CURATOR)
    assert item.question_id == answer.id and item.reason == "should be the mean, not the median"
    assert item.question == answer.question and item.sql == answer.sql
    feedback.clear(settings, answer.id, role=Role.CURATOR)
    assert feedback.recent(settings, role=Role.CURATOR) == [] and feedback.rating_of(settings, answer.id) is None
    assert not feedback.add_reason(settings, answer.id, "no thumbs down to add it to")


def test_thumbs_down_on_a_verified_answer_flags_the_entry_that_served_it(settings):
    first = agent.ask("median household income in Travis County TX", settings, planner="offline")
    feedback.rate(settings, first.id, "up", role=Role.CURATOR)
    served = agent.ask("Travis County, TX median household income", settings, planner="offline")
    assert served.verified
    feedback.rate(settings, served.id, "up", role=Role.CURATOR)  # counted, not added again
    assert len(verified.listing(settings)) == 1
    feedback.rate(settings, served.id, "down", role=Role.CURATOR)
    feedback.add_reason(settings, served.id, "wrong county")
    [entry] = verified.listing(settings, invalid_only=True)
    assert entry.question_id == first.id and entry.invalid_reason.endswith("wrong county")
    assert not agent.ask("Travis County, TX median household income", settings, planner="offline",
                         record=False).verified


def test_rating_an_answer_that_does_not_exist(settings):
    with pytest.raises(verified.NotFoundError):
        feedback.rate(settings, 10**12, "up", role=Role.CURATOR)
