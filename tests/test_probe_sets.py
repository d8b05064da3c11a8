"""The blind probe sets of issues 25 and 20 (240 single questions in four sets; 38 conversations, 178 turns in four
sets; the c and d sets written in a later session, in new voices), written by people who had not read the planner,
through the real path and scored by :func:`sage.evaluate.score`.

Every question and turn that is answered right today must stay right.  The ones that are not are listed in
:data:`NOT_YET` with what happens and why (the closing note of issues 20 and 25 gives the figures); they must fail
no worse than listed (a decline never turns into a wrong answer).  Gold results come
from each row's gold SQL on the same database, never from hard-coded values.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sage.evaluate import read_questions, score, score_conversation

PROBES = Path(__file__).parent / "data" / "probes"

#: question or turn id -> what happens today and why
NOT_YET = {
    "q20a-02/1": "wrong_answered: “states” include Puerto Rico (documented); the writer's brief left it out",
    "q20a-06/3": "wrong_declined: declined: a reading the planner does not have yet",
    "q20a-06/4": "wrong_declined: declined: a reading the planner does not have yet",
    "q20a-08/3": "wrong_answered: answered wrongly: not fixed this round",
    "q20a-08/4": "wrong_answered: answered wrongly: not fixed this round",
    "q20a-09/4": "wrong_answered: answered wrongly: not fixed this round",
    "q20b-03/2": "wrong_declined: declined: a reading the planner does not have yet",
    "q20b-03/3": "wrong_declined: declined: a reading the planner does not have yet",
    "q20b-05/3": "wrong_declined: declined: a reading the planner does not have yet",
    "q20b-07/1": "wrong_answered: answered wrongly: not fixed this round",
    "q20b-07/2": "wrong_declined: declined: a reading the planner does not have yet",
    "q20b-07/3": "wrong_answered: answered wrongly: not fixed this round",
    "q20b-07/4": "wrong_declined: declined: a reading the planner does not have yet",
    "q20b-07/5": "wrong_declined: declined: a reading the planner does not have yet",
    "q20b-08/2": "wrong_answered: answered wrongly: not fixed this round",
    "q20b-08/3": "wrong_answered: answered wrongly: not fixed this round",
    "q20b-08/5": "wrong_declined: declined: a reading the planner does not have yet",
    "q20b-09/1": "wrong_answered: “states” include Puerto Rico (documented); the writer's brief left it out",
    "q20b-09/2": "wrong_answered: follows q20b-09/1 (Puerto Rico in “states”)",
    "q25a-021": "wrong_answered: “states” include Puerto Rico (documented); the writer's brief left it out",
    "q25a-027": "wrong_declined: declined: a reading the planner does not have yet",
    "q25a-040": "wrong_answered: “states” include Puerto Rico (documented); the writer's brief left it out",
    "q25b-023": "wrong_answered: “which of the two has more” answers with the one (issue 20); the gold lists both",
    "q25b-028": "wrong_declined: declined: a reading the planner does not have yet",
    "q20c-03/5": "wrong_answered: “and population?” after a change among places: not the gold's columns (untriaged)",
    "q20c-09/3": "wrong_answered: “and for naturalized citizens, in both states?” reads the group's share, not its "
                 "coverage",
    "q20c-10/5": "wrong_declined: declined: “same for all five” after a pick is not read yet",
    "q20d-01/3": "wrong_answered: the added column keeps the rows, but in another order than the gold's",
    "q20d-01/4": "wrong_answered: follows q20d-01/3",
    "q20d-01/5": "wrong_answered: follows q20d-01/3",
    "q20d-02/4": "wrong_declined: needs_fetch: “for the kids” is read as a measure (under 18)",
    "q20d-10/4": "wrong_declined: declined: “remove the internet column” when the ranking is by it",
    "q25c-004": "wrong_declined: declined: a purpose phrase (“peer-jurisdiction table”) not read",
    "q25c-006": "wrong_declined: declined: “setting Harris County aside” is no exclusion the reader knows",
    "q25c-012": "wrong_declined: declined: housing units per person is a ratio the offline planner does not compute",
    "q25c-019": "wrong_declined: declined: “Utah County in the Utah state” reads the state as a second place",
    "q25c-026": "wrong_declined: declined: a population limit on a change is not supported (its words stay unread)",
    "q25c-031": "wrong_declined: ambiguous: “San Diego” beside two cities is asked back",
    "q25c-035": "wrong_declined: declined: “clearing that bar” not read",
    "q25c-039": "wrong_declined: needs_fetch: places have no earlier period",
    "q25c-042": "wrong_declined: declined: “language” in the sentence about the asker is taken for a topic",
    "q25d-024": "wrong_declined: declined: a purpose sentence with “biggest” stays in the ask",
    "q25d-035": "wrong_declined: declined: “richer per person” is not read as per capita income",
    "q25d-036": "wrong_declined: declined: a misspelled name of two words (“san deigo”)",
    "q25d-042": "wrong_declined: declined: a list of measures after a colon",
    "q25d-050": "wrong_declined: declined: a population limit on a change is not supported (its words stay unread)",
}


def _singles():
    for path in sorted(PROBES.glob("blind_*.jsonl")):
        for row in read_questions(path):
            yield pytest.param(row, id=row["id"])


def _conversations():
    for path in sorted(PROBES.glob("conversations_*.jsonl")):
        for row in read_questions(path):
            yield pytest.param(row, id=row["id"])


@pytest.mark.parametrize("row", list(_singles()))
def test_probe_question(settings, row):
    """Right, or — for a question listed in NOT_YET — failing no worse than listed (a listed decline is never
    answered wrongly instead)."""
    item = score(settings, row, planner="offline")
    if row["id"] in NOT_YET:
        assert item["correct"] or NOT_YET[row["id"]].startswith(item["outcome"]), (row["id"], item["outcome"])
        return
    assert item["correct"], f"{row['question']!r}: {item['error']}\n  sql: {item['sql']}"


@pytest.mark.parametrize("conversation", list(_conversations()))
def test_probe_conversation_turns_stay_right(settings, conversation):
    """Each turn not listed in NOT_YET is right; each listed one is at least never answered silently (it may be
    answered wrongly only where NOT_YET says so)."""
    items = score_conversation(settings, conversation, planner="offline")
    assert items, "a conversation with no turns"
    wrong = [(i["id"], i["question"], i["error"]) for i in items if not i["correct"] and i["id"] not in NOT_YET]
    assert not wrong, wrong
    surprises = [(i["id"], i["outcome"]) for i in items if i["id"] in NOT_YET and not i["correct"]
                 and not NOT_YET[i["id"]].startswith(i["outcome"])]
    assert not surprises, f"a listed turn now fails differently: {surprises}"
