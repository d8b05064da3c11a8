"""The answer card's reading of an answer (issues 14 and 17, the display parts), drawn by Streamlit's AppTest from
answers in the shapes the planners return: charts with error bars, the significance sentence, reliability labels,
a change's periods and dollars, the point map of places beside their ranking, and Markdown escaping."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from sage import stats
from sage.significance import changes

TIMEOUT = 60


def _card(columns, rows, hint, significance, note, assumptions):  # AppTest runs its source alone: no annotations
    """The script AppTest runs: one answer card of a constructed answer (no database, no planner)."""
    import os
    from pathlib import Path

    from app_pages.components.card import answer_card
    from app_pages.components.turns import Turn
    from sage.answer import Answer
    from sage.execute import Result
    from sage.settings import load_settings

    settings = load_settings(environ={}, secrets_path=Path(os.devnull))
    answer = Answer(question="q", planner="offline", sql="SELECT 1", assumptions=assumptions, display_hint=hint,
                    result=Result(columns, rows, len(rows), False, 1.0), significance=significance,
                    significance_note=note)
    answer_card(Turn(id=1, kind="sql", question="q", answer=answer), settings)


def draw(columns, rows, hint, significance=(), note=None, assumptions=()) -> AppTest:
    at = AppTest.from_function(_card, args=(columns, rows, hint, list(significance), note, list(assumptions)),
                               default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    return at


def plain(values) -> str:
    return " ".join(v.value.replace("\\", "") for v in values)


def charts_of(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("vega_lite_chart")]


CHANGE_COLUMNS = ["county_name", "state_name", "median_household_income_2014_2018",
                  "median_household_income_2019_2023", "change", "change_moe", "pct_change", "pct_change_moe"]
TRAVIS = ["Travis County", "Texas", 87361, 97169, 9808.08669737199, 1632.5366514888626, 11.2, 2.0]
DOLLARS = ("Dollars: the 2014-2018 values are put in 2023 dollars with the CPI-U-RS (2023 / 2018 = 449.3 / 369.1 = "
           "1.2173), estimate and margin alike, so the change is a real change (say “nominal” for dollars as "
           "published).")


def _changes(rows):
    return [x.to_dict() for x in changes(CHANGE_COLUMNS, rows, ["county_name", "state_name"], "change",
                                         later="2019-2023", earlier="2014-2018")]


def test_a_change_of_one_place_reads_earlier_later_change_and_percent_with_significance_and_dollars():
    at = draw(CHANGE_COLUMNS, [TRAVIS], "statrow", _changes([TRAVIS]), None, [DOLLARS])
    assert [(m.label, m.value, m.delta or None) for m in at.metric] == [
        ("2014\\-2018", "$87,361", None), ("2019\\-2023", "$97,169", None),
        ("Change", "+$9,808", "± $1,633"), ("Percent change", "+11.2%", "± 2.0%")]
    text = plain(at.markdown)
    assert "The change is statistically significant at the 90% level (Z = 9.88)." in text
    captions = plain(at.caption)
    assert "Median household income, 2014-2018 → 2019-2023 · Travis County, Texas" in captions
    assert "the 2014-2018 values are in 2023 dollars (adjusted with the CPI-U-RS)" in captions
    assert not charts_of(at)


def test_a_ranked_change_bars_the_change_with_error_bars_and_says_which_changes_are_significant():
    hays = ["Hays County", "Texas", 80170, 82170, 2000.0, 3400.0, 2.5, 4.3]
    bastrop = ["Bastrop County", "Texas", 76698, 82811, 6113.0, 6500.0, 8.0, 8.9]
    rows = [TRAVIS, bastrop, hays]
    at = draw(CHANGE_COLUMNS, rows, "bar", _changes(rows), None, [DOLLARS])
    (chart,) = charts_of(at)
    dumbbell, bars = chart["hconcat"]
    assert {layer["mark"]["type"] for layer in dumbbell["layer"]} == {"rule", "circle"}
    assert {layer["mark"]["type"] for layer in bars["layer"]} >= {"bar", "rule"}  # the rule: change ± MOE
    assert ("Of the 3 changes, 1 is statistically significant at the 90% level (Travis County, Texas); 2 are not "
            "(Bastrop County, Texas; Hays County, Texas).") in plain(at.markdown)


def test_a_change_without_margins_says_so_and_claims_nothing():
    rows = [["Collin County", "Texas", 944350, 1116601, 172251, None, 18.2, None],
            ["Harris County", "Texas", 4602523, 4758579, 156056, None, 3.4, None]]
    cols = ["county_name", "state_name", "population_2014_2018", "population_2019_2023", "change", "change_moe",
            "pct_change", "pct_change_moe"]
    items = [x.to_dict() for x in changes(cols, rows, ["county_name", "state_name"], "change")]
    note = ("The margins of error are not available for any of these places, so whether the differences are "
            "statistically significant cannot be assessed.")
    at = draw(cols, rows, "bar", items, note, [])
    text = plain(at.markdown)
    assert note in text
    assert "at the 90% level" not in text  # no verdict without a test
    assert "Dollars:" not in plain(at.caption)  # people, not dollars


def test_two_places_give_their_values_the_difference_and_the_verdict():
    columns = ["first_place", "second_place", "first_median_household_income", "second_median_household_income",
               "difference", "first_median_household_income_moe", "second_median_household_income_moe",
               "difference_moe"]
    row = ["Williamson County, Texas", "Travis County, Texas", 108309, 97169, 11140, 2023, 1289, 2398.76]
    item = stats.assess_change(row[0], row[1], 11140, 2398.76).to_dict()
    at = draw(columns, [row], "statrow", [item])
    assert [m.value for m in at.metric] == ["$108,309", "$97,169", "+$11,140"]
    assert "The difference is statistically significant at the 90% level (Z = 7.64)." in plain(at.markdown)
    # each value is an estimate with a reliability; the difference is tested instead
    captions = plain(at.caption)
    assert "High reliability (CV 1.1%, Esri convention)" in captions  # 2023 / 1.645 / 108309
    assert "High reliability (CV 0.8%, Esri convention)" in captions  # 1289 / 1.645 / 97169
    assert captions.count("reliability (CV") == 2


def test_a_table_of_estimates_with_margins_has_a_reliability_column_and_says_how_to_read_it():
    columns = ["county_name", "state_name", "median_household_income", "median_household_income_moe"]
    rows = [["Loving County", "Texas", 80938, 36000], ["Travis County", "Texas", 97169, 1289]]
    at = draw(columns, rows, "table")
    (table,) = at.dataframe
    assert table.value["median_household_income reliability"].tolist() == ["medium (CV 27.0%)", "high (CV 0.8%)"]
    assert "Esri's bands" in plain(at.caption)


def test_a_ranking_of_places_offers_a_point_map_in_a_second_tab():
    rows = [["Houston city, Texas", 2_300_419], ["San Antonio city, Texas", 1_458_954],
            ["Dallas city, Texas", 1_299_553], ["Austin city, Texas", 967_862]]
    at = draw(["name", "population"], rows, "bar")
    assert [t.label for t in at.tabs] == ["Chart", "Map"]
    bar, point_map = charts_of(at)
    assert "bar" in {layer["mark"]["type"] for layer in bar["layer"]}
    assert point_map["projection"] == {"type": "albersUsa"}
    assert {layer["mark"]["type"] for layer in point_map["layer"]} == {"geoshape", "circle"}


def test_a_map_of_tracts_says_why_there_is_none():
    rows = [["1400000US48453001100", "Census Tract 11; Travis County; Texas", 90_000],
            ["1400000US48453001200", "Census Tract 12; Travis County; Texas", 80_000]]
    at = draw(["geo_id", "name", "median_household_income"], rows, "map")
    assert "census-sage has neither boundaries nor points for census tracts, so there is no map" in plain(at.caption)
    (chart,) = charts_of(at)
    assert "bar" in {layer["mark"]["type"] for layer in chart["layer"]}


def test_names_in_the_significance_sentence_are_escaped_before_markdown():
    evil = "![x](https://example.com/leak) **Evil** <b>County</b>"
    item = stats.compare(evil, 10, 1, "Ohio", 20, 1).to_dict()
    items = [item, stats.compare(evil, 10, 1, "Iowa", 10.1, 1).to_dict(), stats.compare("Ohio", 20, 1, "Iowa", 10.1,
                                                                                      1).to_dict()]
    at = draw(["state_name", "rate_pct", "rate_pct_moe"], [[evil, 10, 1], ["Ohio", 20, 1], ["Iowa", 10.1, 1]], "bar",
              items)
    said = next(m.value for m in at.markdown if "pairs tested" in m.value)
    for markup in ("![", "](", "**Evil**", "<b>"):
        assert markup not in said
    assert evil in said.replace("\\", "")
