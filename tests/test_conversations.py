"""Conversations through the real path with the offline planner: every turn asked as a follow-up of the answers
before it (their question, reading, SQL and assumptions; never their rows) and scored against its own gold SQL,
its meaning in the conversation.  The sets are ``tests/data/questions/conversations_*.jsonl``, written blind by
people who had not read the planner."""

from __future__ import annotations

from pathlib import Path

import pytest

from sage import agent
from sage.evaluate import read_questions, score_conversation

QUESTIONS = Path(__file__).parent / "data" / "questions"


def _conversations():
    for path in sorted(QUESTIONS.glob("conversations_*.jsonl")):
        for row in read_questions(path):
            yield pytest.param(row, id=f"{path.stem}:{row['id']}")


@pytest.mark.parametrize("conversation", list(_conversations()))
def test_conversation(settings, conversation):
    items = score_conversation(settings, conversation, planner="offline")
    wrong = [(conversation["turns"][i]["question"], item["read_as"], item["error"]) for i, item in enumerate(items)
             if not item["correct"]]
    assert not wrong, wrong


def test_a_follow_up_shows_its_reading_first_and_edits_the_frame(settings):
    first = agent.ask("median household income in Travis County TX", settings, planner="offline", record=False)
    second = agent.ask("and Williamson County?", settings, planner="offline", record=False,
                       context=[first.as_prior()])
    assert second.answered and second.assumptions[0] == ("Read as: median household income, Williamson County, TX "
                                                       "(edit: swap places “Williamson County”).")
    assert second.result.rows[0][:2] == ["Williamson County", "Texas"]


def test_a_follow_up_with_nothing_before_it_is_declined_with_a_reason(settings):
    answer = agent.ask("and Williamson County?", settings, planner="offline", record=False)
    assert answer.declined and "nothing was asked before it" in answer.decline


def test_an_unresolvable_follow_up_is_declined_with_suggestions(settings):
    first = agent.ask("Which 5 states have the highest poverty rate?", settings, planner="offline", record=False)
    answer = agent.ask("why?", settings, planner="offline", record=False, context=[first.as_prior()])
    assert answer.declined and answer.suggestions
