"""Follow-ups as a closed set of edits (issue 20), with the offline planner on the real database: each kind of edit
is read, named on the "Read as" line with the words that asked for it and carried in ``ask --json``; and the bad
inputs — a follow-up after SQL edited by hand, after its places are gone, twenty in a row, two conversations at
once — each read right or decline plainly."""

from __future__ import annotations

import json
import threading
from dataclasses import replace

import pytest

from sage import agent
from sage.planner.edits import EditKind, describe_edits, edit_guide, parse_kinds


def converse(settings, turns: list[str]):
    """Ask ``turns`` one after the other as one conversation; every answer, in order."""
    context, answers = [], []
    for question in turns:
        answer = agent.ask(question, settings, planner="offline", record=False, context=list(context))
        answers.append(answer)
        if answer.answered:
            context.append(answer.as_prior())
    return answers


TRAVIS = "median household income in Travis County TX"

EDITS = [
    ([TRAVIS, "and Williamson County?"], EditKind.SWAP_PLACES, "Williamson County"),
    ([TRAVIS, "compare it with Hays County"], EditKind.ADD_PLACES, "Hays County"),
    ([TRAVIS, "and the poverty rate?"], EditKind.SWAP_MEASURE, "poverty rate"),
    ([TRAVIS, "add median home value"], EditKind.ADD_MEASURE, "median home value"),
    ([TRAVIS, "add median home value", "drop the home value"], EditKind.DROP_MEASURE, "drop home value"),
    (["top 5 counties by population", "only Texas"], EditKind.NARROW, "Texas"),
    (["top 5 counties in Georgia by population", "the whole country, not just Georgia"], EditKind.WIDEN,
     "whole country"),
    (["top 5 counties in Texas by population", "just the top 3"], EditKind.RANKING, "just top 3"),
    (["population of Travis County TX and Williamson County TX", "which of the two is bigger?"], EditKind.PICK,
     "which of the two bigger"),
    ([TRAVIS, "how has it changed since 2014-2018?"], EditKind.PERIOD, "changed since 2014-2018"),
    ([TRAVIS, "how has it changed since 2014-2018?", "in nominal dollars"], EditKind.DOLLARS, "nominal dollars"),
    (["population of counties in Delaware", "how many people altogether?"], EditKind.TOTAL, "altogether"),
    (["median household income in Travis County TX and Hays County TX", "is that difference significant?"],
     EditKind.SIGNIFICANCE, "significant"),
    (["top 5 states by population", "as a map"], EditKind.DISPLAY, "map"),
]


@pytest.mark.parametrize("turns, kind, words", EDITS, ids=[k.value for _, k, _ in EDITS])
def test_each_follow_up_reads_to_one_edit_named_with_its_words(settings, turns, kind, words):
    *_, answer = converse(settings, turns)
    assert answer.answered, answer.to_dict()
    assert answer.edits == [{"kind": kind.value, "words": words}]
    assert answer.assumptions[0].startswith("Read as: ")
    assert answer.assumptions[0].endswith(f"(edit: {kind.label} “{words}”).")
    assert answer.to_dict()["edits"] == answer.edits
    assert json.loads(json.dumps(answer.to_dict()))["edits"][0]["kind"] == kind.value


def test_every_kind_of_the_closed_set_is_read_by_the_offline_planner():
    assert {kind for _, kind, _ in EDITS} == set(EditKind)


def test_an_added_measure_keeps_the_rows_and_a_dropped_one_gives_them_back(settings):
    first, added, dropped = converse(settings, ["top 5 counties in Ohio by population", "add median age",
                                                "drop median age"])
    assert [r[:2] for r in added.result.rows] == [r[:2] for r in first.result.rows]
    assert "median_age" in added.result.columns and "median_age" not in dropped.result.columns
    assert dropped.result.rows == first.result.rows


def test_the_measure_a_ranking_is_ordered_by_stays_and_the_card_says_why(settings):
    """Dropping the measure the rows are ranked by would give other rows: its column stays, with a note."""
    first, _, answer = converse(settings, ["top 5 counties in Ohio by population", "add median age",
                                           "drop the population"])
    assert answer.answered and [e["kind"] for e in answer.edits] == ["drop_measure"]
    assert [r[:2] for r in answer.result.rows] == [r[:2] for r in first.result.rows]
    assert "population" in answer.result.columns and "median_age" in answer.result.columns
    assert any("stays in the table: the rows are ranked by it" in a for a in answer.assumptions)


def test_a_question_read_alone_has_no_edits(settings):
    first, second = converse(settings, [TRAVIS, "what is the median age in Cook County, Illinois?"])
    assert second.answered and second.edits == [] and not second.followup
    assert first.to_dict()["edits"] == []


def test_a_follow_up_after_sql_edited_by_hand_is_declined_not_read_against_an_older_answer(settings):
    first = agent.ask("top 5 counties in Texas by population", settings, planner="offline", record=False)
    edited = agent.run_sql(first.sql.replace("LIMIT 5", "LIMIT 2"), settings, record=False)
    assert edited.answered and len(edited.result.rows) == 2
    context = [first.as_prior(), edited.as_prior()]
    follow = agent.ask("which of those has the oldest population?", settings, planner="offline", record=False,
                       context=context)
    assert follow.declined and "edited by hand" in follow.decline and "ask it in full" in follow.decline
    alone = agent.ask("median age in Harris County, Texas", settings, planner="offline", record=False,
                      context=context)
    assert alone.answered and alone.result.rows[0][0] == "Harris County"


def test_a_follow_up_of_an_answer_whose_places_are_gone_reads_the_words_or_declines(settings):
    """After a migration the logged frame may name a place the catalog no longer has: the frame is not used; the
    follow-up is read with the earlier question's words (and says so), or declined when those name nothing known —
    never answered about another place."""
    first = agent.ask(TRAVIS, settings, planner="offline", record=False)
    frame = json.loads(json.dumps(first.frame).replace("0500000US48453", "0500000US48999"))
    assert frame != first.frame
    follow = agent.ask("and the poverty rate?", settings, planner="offline", record=False,
                       context=[replace(first.as_prior(), frame=frame)])
    assert follow.answered and [r[:2] for r in follow.result.rows] == [["Travis County", "Texas"]]
    assert any("read from what comes before it: Travis County, TX" in a for a in follow.assumptions)
    gone = replace(first.as_prior(), question="median household income in Atlantis County TX", frame=frame)
    follow = agent.ask("and the poverty rate?", settings, planner="offline", record=False, context=[gone])
    assert follow.declined and not follow.edits and follow.result is None


def test_twenty_follow_ups_in_a_row_each_read_or_decline(settings):
    turns = ["top 5 counties in Texas by population"] + [
        "just the top 3", "add median age", "drop median age", "bottom 5 instead", "only Ohio", "as a table",
        "and the poverty rate?", "top 10", "as a map", "the whole country", "just the top 4", "add median rent",
        "which of those is the oldest?", "and Travis County, TX?", "and Williamson County?", "add median age",
        "compare it with Hays County", "which of the two is older?", "how about the poverty rate?", "as a bar chart",
    ]
    answers = converse(settings, turns)
    assert len(answers) == 21 and answers[0].answered
    for question, answer in zip(turns[1:], answers[1:], strict=True):
        assert answer.error is None or answer.declined, (question, answer.to_dict())
        if answer.answered:
            assert answer.edits and parse_kinds(e["kind"] for e in answer.edits), question
            assert answer.assumptions[0].startswith("Read as: ")
        else:
            assert answer.decline and answer.suggestions, question
    assert sum(a.answered for a in answers[1:]) >= 18
    assert answers[-1].display_hint == "bar" and answers[-1].edits[-1]["kind"] == "display"


def test_two_conversations_at_once_never_edit_each_others_frame(settings):
    """Two sessions conversing at the same time: each thread's turns read exactly as they do alone."""
    texas = ["top 5 counties in Texas by population", "add median age", "just the top 3", "which of those is oldest?"]
    ohio = ["median household income in Franklin County, Ohio", "and Cuyahoga County?", "add median home value",
            "drop the home value"]
    alone = {name: [a.sql for a in converse(settings, turns)] for name, turns in (("tx", texas), ("oh", ohio))}
    together: dict[str, list[str]] = {}
    errors: list[BaseException] = []

    def run(name, turns):
        try:
            together[name] = [a.sql for a in converse(settings, turns)]
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n, t)) for n, t in (("tx", texas), ("oh", ohio))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and together == alone
    assert all(alone["tx"]) and all(alone["oh"])


def test_the_closed_set_in_words_and_names():
    guide = edit_guide()
    for kind in EditKind:
        assert f"- {kind.value}: {kind.gloss}" in guide and kind.label
    assert parse_kinds(["PICK", "pick", "rewrite", 3, "add_measure"]) == (EditKind.PICK, EditKind.ADD_MEASURE)
    assert describe_edits([]) == ""


def test_a_question_whose_scene_names_its_own_places_is_no_edit_of_the_answer_before(settings):
    """Seen in the browser: after a sum of three states, "Our service area covers three counties in southeast Ohio
    (Athens, Meigs, and Vinton). What is the uninsured rate in each of the three?" was read as an edit of the states
    ("the three" taken as them); the scene-setting names places of its own, so the question stands alone."""
    first, second, third = converse(settings, [
        "combined population of Arizona, Colorado, New Mexico and Utah, excluding Utah",
        "Our service area covers three counties in southeast Ohio (Athens, Meigs, and Vinton). What is the uninsured "
        "rate in each of the three?",
        "and the poverty rate too"])
    assert first.answered and "Left out, as asked: Utah." in first.assumptions
    assert second.answered and second.edits == []
    assert sorted(row[0] for row in second.result.rows) == ["Athens County", "Meigs County", "Vinton County"]
    assert third.answered and third.edits == [{"kind": "add_measure", "words": "poverty rate"}]
    assert len(third.result.rows) == 3
