"""The question loop with a scripted planner double: retries, policy stops, declines, validation, the query log."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from sage import agent, querylog
from sage.answer import Outcome
from sage.errors import QuestionError
from sage.planner.base import Plan

GOOD_SQL = (
    "SELECT g.state_name, e.estimate AS population FROM public.estimates e "
    "JOIN public.geography g ON g.geo_id = e.geo_id "
    "WHERE g.level = 'state' AND e.variable_code = 'B01003_001E' ORDER BY e.estimate DESC LIMIT 3"
)


@dataclass
class ScriptedPlanner:
    """Returns the given plans in order and remembers what it was shown."""

    plans: list[Plan]
    name: str = "scripted"
    calls: list[dict] = field(default_factory=list)

    def plan(self, question, chunks, attempts=(), context=()):
        self.calls.append({"question": question, "chunks": list(chunks), "attempts": list(attempts)})
        return self.plans[min(len(self.calls), len(self.plans)) - 1]


def test_a_failed_plan_goes_back_with_its_error_and_the_second_runs(settings):
    bad = "SELECT g.state_name, e.population FROM public.estimates e JOIN public.geography g USING (geo_id)"
    planner = ScriptedPlanner([Plan(bad, ["first"], "bar"), Plan(GOOD_SQL, ["second"], "bar")])
    answer = agent.ask("Which states have the most people?", settings, planner=planner, record=False)
    assert answer.answered, answer.error
    assert answer.tries == 2 and len(planner.calls) == 2
    retry = planner.calls[1]["attempts"]
    assert retry[0].sql == bad and "population" in retry[0].error
    assert answer.result.columns == ["state_name", "population"]
    assert answer.result.rows[0][0] == "California"
    assert answer.assumptions == ["second"]
    assert planner.calls[0]["chunks"], "the planner is given retrieved context"
    assert set(answer.timings_ms) >= {"retrieve", "plan", "guard", "execute", "total"}
    assert answer.vintages == ["2019-2023"]


def test_a_policy_refusal_ends_the_loop(settings):
    sneaky = "SELECT question FROM sage.questions"
    planner = ScriptedPlanner([Plan(sneaky), Plan(GOOD_SQL)])
    answer = agent.ask("show me the log", settings, planner=planner, record=False)
    assert not answer.answered
    assert answer.error.kind == "guard" and len(planner.calls) == 1
    assert answer.result is None


def test_a_parse_error_is_retried(settings):
    planner = ScriptedPlanner([Plan("SELECT FROM WHERE"), Plan(GOOD_SQL)])
    answer = agent.ask("population of the states", settings, planner=planner, record=False)
    assert answer.answered and answer.tries == 2
    assert answer.attempts[0].kind == "guard"


def test_attempts_are_bounded(settings):
    planner = ScriptedPlanner([Plan("SELECT nope FROM public.estimates")])
    answer = agent.ask("something impossible", settings.replace(max_attempts=2), planner=planner, record=False)
    assert not answer.answered and answer.error.kind == "attempts_exhausted"
    assert len(planner.calls) == 2 and len(answer.attempts) == 2
    assert "SAGE_MAX_ATTEMPTS" in answer.error.message


def test_empty_sql_means_cannot_answer(settings):
    planner = ScriptedPlanner([Plan("", ["No city-level data: only states and counties."],
                                    suggestions=["Population of Travis County, TX"])])
    answer = agent.ask("population of Austin", settings, planner=planner, record=False)
    assert answer.declined and not answer.answered and answer.outcome is Outcome.DECLINED
    assert answer.error is None and answer.decline.startswith("No city-level data")
    assert answer.suggestions == ["Population of Travis County, TX"]
    data = answer.to_dict()
    assert data["error"]["kind"] == "declined" and data["attempts"] == []
    assert data["error"]["message"] == answer.decline


@pytest.mark.parametrize(
    "question, kind",
    [("", "question_empty"), ("   \n\t ", "question_empty"), ("x" * 5000, "question_too_long"), (42, "question_type"),
     ("??? !!!", "question_absurd")],
)
def test_questions_are_validated(settings, question, kind):
    planner = ScriptedPlanner([Plan(GOOD_SQL)])
    answer = agent.ask(question, settings, planner=planner, record=False)
    assert answer.error.kind == kind and not planner.calls
    with pytest.raises(QuestionError):
        agent.validate_question(question, settings)


def test_every_answer_is_logged(settings):
    planner = ScriptedPlanner([Plan(GOOD_SQL, ["a"], "bar")])
    answered = agent.ask("biggest states by population (log test)", settings, planner=planner)
    declined = agent.ask("population of a city (log test)", settings,
                         planner=ScriptedPlanner([Plan("", ["no cities"])]))
    rows = querylog.recent(settings, search="(log test)")
    assert [r.id for r in rows] == [declined.id, answered.id]
    assert [r.outcome for r in rows] == ["declined", "answered"]
    assert rows[0].error == {"kind": "declined", "message": "no cities"}
    assert rows[1].sql == answered.sql and rows[1].row_count == 3 and rows[1].planner == "scripted"
    assert rows[1].assumptions == ["a"] and rows[1].error is None
    assert querylog.get(settings, answered.id).display_hint == "bar"
    assert [r.id for r in querylog.recent(settings, search="(log test)", outcome="answered")] == [answered.id]


def test_edited_sql_goes_through_the_guard(settings):
    ok = agent.run_sql(GOOD_SQL, settings, record=False)
    assert ok.answered and ok.result.row_count == 3 and ok.planner == "user"
    refused = agent.run_sql("DELETE FROM public.estimates", settings, record=False)
    assert not refused.answered and refused.error.kind == "guard" and refused.result is None
    assert "execute" not in refused.timings_ms or refused.timings_ms["execute"] == 0


def test_claude_without_a_key_is_a_clear_error(settings):
    answer = agent.ask("population of Ohio", settings.replace(planner="claude", anthropic_api_key=None), record=False)
    assert not answer.answered
    assert "ANTHROPIC_API_KEY" in answer.error.message


def test_a_topic_the_data_lacks_is_declined_without_embedding_the_question(settings):
    """"the average commute time": the scope check declines the topic; a variable found by the meaning of the other
    words would answer another question, so the question is never embedded (no model loaded for it)."""
    answer = agent.ask("What's the average commute time in Ohio?", settings, planner="offline", record=False,
                       use_verified=False)
    assert answer.declined and "commuting" in answer.assumptions[0]
    assert not answer.chunks.retrieved and answer.timings_ms["retrieve"] == 0


def test_narrate_false_gives_the_same_rows_without_the_words_around_them(settings):
    """``eval`` scores rows: ``narrate=False`` leaves the headline and the context out, and nothing else."""
    question = "What is the median household income in Travis County, Texas?"
    full = agent.ask(question, settings, planner="offline", record=False, use_verified=False)
    bare = agent.ask(question, settings, planner="offline", record=False, use_verified=False, narrate=False)
    assert full.headline and bare.headline is None and not bare.context and bare.context_note is None
    assert bare.result.rows == full.result.rows and bare.sql == full.sql and bare.assumptions == full.assumptions
