"""Invariance of the offline planner's reading (CheckList-style, issue 25): meaning-preserving rewrites of every
answered question of the regression suite (tests/invariance.py) give the same answer or a decline/choice, never a
different answer; meaning-changing ones never give the old answer.

Asserted here for every rewrite, on the whole suite; ``python tests/invariance.py`` prints the rates per rewrite
(how often each applies, keeps the reading, or is declined or asked back)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sage.planner.offline.planner import OfflinePlanner

from .invariance import CHANGING, PRESERVING, measure, regression_questions

#: every rewrite, meaning-preserving and meaning-changing: each must stay at zero violations
HOLDING = ("a sentence about the asker", "punctuation removed", "state as postal code", "digits to words",
           "preamble about the asker", "state in AP style", "in X to X's", "lowercase", "trailing please",
           "trailing thanks", "words to digits", "one-letter typo in a name", "unknown name added to a list",
           "other than X added", "percent added to a change")


@pytest.fixture(scope="module")
def measured(settings):
    questions = regression_questions(Path(__file__).parent / "data" / "questions")
    return measure(OfflinePlanner(settings), questions)


@pytest.mark.parametrize("name", HOLDING)
def test_a_rewrite_never_gives_a_wrong_reading(measured, name):
    """A meaning-preserving rewrite never changes the answer; a meaning-changing one never keeps the old answer
    (unless the reading says why it stays: :data:`~.invariance.ACKNOWLEDGED`)."""
    assert name in PRESERVING or name in CHANGING
    stats, bad = measured
    applied, _same, _declined, violations = stats[name]
    assert applied > 0, f"{name}: applied to no question"
    assert violations == 0, bad[name][:5]
