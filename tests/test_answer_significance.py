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


# --- the sentence on the answer card (significance.sentence) -------------------------------------------------------


def _pair(a, b, z, significant, **kw):
    return {"a": a, "b": b, "difference": 1.0, "moe": 1.0, "z": z, "significant": significant, "level": 0.9, **kw}


def test_two_places_say_whether_their_difference_is_significant_with_z():
    from sage.significance import sentence

    # the handbook's example ([H20] ch. 7): Florida 12.6 ±0.2 vs Arizona 10.5 ±0.3 -> Z 9.581, significant
    florida = stats.compare("Florida", 12.6, 0.2, "Arizona", 10.5, 0.3).to_dict()
    assert sentence([florida]) == "The difference is statistically significant at the 90% level (Z = 9.58)."
    indiana = stats.compare("Indiana", 10.8, 0.2, "Arizona", 10.5, 0.3).to_dict()
    assert sentence([indiana]) == "The difference is not statistically significant at the 90% level (Z = 1.37)."


def test_more_places_summarise_which_pairs_differ():
    from sage.significance import pairwise, sentence

    # the Journalists' guide's matrix ([JH] Table 2.1): MD, AK, NJ, DC median household incomes
    rows = [["Maryland", 78945, 737], ["Alaska", 76440, 2230], ["New Jersey", 76126, 701],
            ["District of Columbia", 75506, 3416]]
    items = pairwise(["state", "income", "income_moe"], rows, "state", "income").to_list()
    text = sentence(items)
    # published: MD-DC, AK-NJ, AK-DC, NJ-DC are not significantly different; MD-AK and MD-NJ are
    assert text == ("Of the 6 pairs tested, 2 differ significantly at the 90% level: Maryland and Alaska; "
                    "Maryland and New Jersey.")
    assert sentence(items[:1]).startswith("The difference is statistically significant")
    all_yes = [_pair(f"P{i}", f"Q{i}", 3.0, True) for i in range(3)]
    assert sentence(all_yes) == "All 3 pairs tested differ significantly at the 90% level."
    mostly = all_yes + [_pair("A", "B", 0.5, False)]
    assert sentence(mostly) == ("Of the 4 pairs tested, 3 differ significantly at the 90% level; this does not: "
                                "A and B.")
    assert sentence([_pair("A", "B", 0.1, False), _pair("C", "D", 0.2, False)]) == (
        "None of the 2 pairs tested differs significantly at the 90% level.")


def test_only_neighbours_tested_is_said_from_the_note():
    from sage.significance import pairwise, sentence

    rows = [[f"Place {i}", 1000 + 100 * i, 10] for i in range(14)]
    found = pairwise(["place", "n", "n_moe"], rows, "place", "n")
    text = sentence(found.to_list(), found.note)
    assert text.startswith("All 13 pairs tested differ significantly at the 90% level.")
    assert text.endswith(found.note) and "only neighbours in the ranking were tested" in text


def test_a_change_says_whether_it_is_significant():
    from sage.significance import changes, sentence

    # Travis County's median household income, 2014-2018 (2023 dollars) -> 2019-2023: +9,808 ± 1,633
    travis = stats.assess_change("Travis County, Texas (2019-2023)", "Travis County, Texas (2014-2018)", 9808.09,
                                 1632.54).to_dict()
    assert sentence([travis], change=True) == ("The change is statistically significant at the 90% level "
                                               "(Z = 9.88).")
    flat = stats.assess_change("Hays County (2019-2023)", "Hays County (2014-2018)", 500, 3400).to_dict()
    assert sentence([flat], change=True) == "The change is not statistically significant at the 90% level (Z = 0.24)."
    rows = [["Travis County", 9808.09, 1632.54], ["Bastrop County", 6113.0, 6500.0], ["Hays County", 2000, 3400]]
    items = [x.to_dict() for x in changes(["county", "change", "change_moe"], rows, "county", "change",
                                          later="2019-2023", earlier="2014-2018")]
    assert sentence(items, change=True) == ("Of the 3 changes, 1 is statistically significant at the 90% level "
                                            "(Travis County); 2 are not (Bastrop County; Hays County).")


def test_missing_margins_give_the_note_and_never_a_verdict():
    from sage.significance import changes, missing_margins_sentence, sentence

    rows = [["Collin County", 172251, None], ["Harris County", 156056, None]]
    items = [x.to_dict() for x in changes(["county", "change", "change_moe"], rows, "county", "change")]
    note = missing_margins_sentence(["Collin County", "Harris County"], 2)
    assert sentence(items, note, change=True) == note
    assert "significant" not in (sentence(items, None, change=True) or "")  # no test, no note: nothing is said
    assert sentence([], None) is None
    # some tested, some not: the verdict of the tested, then the note about the others
    mixed = [_pair("A", "B", 3.0, True), _pair("A", "C", None, None)]
    assert sentence(mixed, "The margins of error are not available for C.") == (
        "The difference is statistically significant at the 90% level (Z = 3.00). The margins of error are not "
        "available for C.")


def test_a_change_with_its_margin_is_tested_whoever_planned_it(settings):
    """Claude's plans do not say what they compare; a change with its margin (the convention's columns) is tested
    all the same, from the rows, with the periods its columns name."""
    from pathlib import Path

    from sage.planner.base import Plan

    sql = (Path(__file__).parent / "data" / "sql" / "change_travis_area_income.sql").read_text()

    class OnePlan:
        name = "scripted"

        def plan(self, question, chunks, attempts=(), context=()):
            return Plan(sql, ["2014-2018 in 2023 dollars"], "bar")  # compare is None, as Claude's plans are

    answer = agent.ask("How did median household income change around Austin?", settings, planner=OnePlan(),
                       record=False)
    assert answer.answered and answer.result.row_count == 4
    by_place = {item["a"]: item for item in answer.significance}
    rows = {r[0]: r for r in answer.result.rows}
    travis = by_place["Travis County, Texas (2019-2023)"]
    assert travis["b"] == "Travis County, Texas (2014-2018)"
    change, moe = rows["Travis County"][4], rows["Travis County"][5]
    assert math.isclose(travis["z"], change / (moe / 1.645), rel_tol=1e-9) and travis["significant"] is True
    bastrop = by_place["Bastrop County, Texas (2019-2023)"]
    assert bastrop["significant"] is (abs(rows["Bastrop County"][4] / (rows["Bastrop County"][5] / 1.645)) > 1.645)
    assert answer.significance_note is None
