"""Significance in answers, end to end on the real database: the planner says what is compared, sage tests the
rows with the Census Bureau's formula (never the model), and missing margins are said, never implied."""

from __future__ import annotations

import math

import pytest

from sage import agent, stats
from sage.db import owner


def _published(settings, geo_id: str, code: str):
    with owner(settings) as conn:
        return conn.execute("SELECT estimate, margin_error FROM public.estimates WHERE geo_id = %s AND "
                            "variable_code = %s", (geo_id, code)).fetchone()


def test_two_counties_compared_with_their_published_margins(settings):
    answer = agent.ask("compare median household income in Travis County TX and Williamson County TX", settings,
                       planner="offline", record=False)
    assert answer.answered and len(answer.significance) == 1
    item = answer.significance[0]
    (x1, m1), (x2, m2) = (_published(settings, g, "B19013_001E") for g in ("0500000US48491", "0500000US48453"))
    z = (float(x1) - float(x2)) / math.sqrt((float(m1) / 1.645) ** 2 + (float(m2) / 1.645) ** 2)
    assert item["a"].startswith("Williamson County") and item["b"].startswith("Travis County")
    assert math.isclose(item["z"], z, rel_tol=1e-9) and item["significant"] is (abs(z) > 1.645)
    assert math.isclose(item["moe"], stats.moe_difference(m1, m2), rel_tol=1e-9) and item["level"] == 0.9
    assert answer.to_dict()["significance"] == answer.significance


def test_missing_margins_are_said_not_implied(settings):
    answer = agent.ask("compare the poverty rate of Ohio and Iowa", settings, planner="offline", record=False)
    assert answer.answered and all(item["significant"] is None for item in answer.significance)
    assert "cannot be assessed" in answer.significance_note


def test_a_single_value_compares_nothing(settings):
    answer = agent.ask("median household income in Travis County TX", settings, planner="offline", record=False)
    assert answer.answered and answer.significance == [] and answer.to_dict()["significance"] == []


def _with_verdicts():
    """Questions of the blind sets whose writer worked out by hand whether the asked difference or change is
    significant (the ``significant`` field, with the Z in the note)."""
    import json
    from pathlib import Path

    out = []
    for path in sorted((Path(__file__).parent / "data" / "questions").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line) if line.strip() else {}
            if "significant" in row:
                out.append(pytest.param(row, id=row["id"]))
    return out


@pytest.mark.parametrize("row", _with_verdicts())
def test_the_verdict_agrees_with_the_writers_hand_computation(settings, row):
    answer = agent.ask(row["question"], settings, planner="offline", record=False)
    verdicts = {item["significant"] for item in answer.significance}
    assert verdicts == {row["significant"]}, (answer.significance, row["note"])
