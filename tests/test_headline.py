"""The headline sentence builder (sage/headline.py), one display shape at a time, with margins present and absent.

Pure: the rows are written here, and every figure the sentence must carry is formatted here from those rows."""

from __future__ import annotations

import pytest

from sage.headline import SHAPES, headline


def _money(x: float) -> str:
    return f"${x:,.0f}"


@pytest.mark.parametrize("moe", [1652, None])
def test_one_value_with_unit_margin_and_period(moe):
    cols = ["county_name", "state_name", "median_household_income"] + (["median_household_income_moe"] if moe else [])
    row = ["Travis County", "Texas", 97169] + ([moe] if moe else [])
    said = headline(cols, [row], period="2019-2023")
    assert said is not None and said.shape == "value"
    figure = _money(97169) + (f" ±{_money(moe)}" if moe else "")
    assert said.text == f"Median household income in Travis County, Texas: {figure} (2019-2023)"
    assert ("±" in said.text) is bool(moe)


@pytest.mark.parametrize("moe", [0.4, None])
def test_a_rate_is_a_percent(moe):
    cols = ["state_name", "poverty_rate"] + (["poverty_rate_moe"] if moe else [])
    said = headline(cols, [["Ohio", 13.3] + ([moe] if moe else [])], period="2018-2022")
    assert said is not None and said.text.startswith("Poverty rate in Ohio: 13.3%")
    assert said.text.endswith("±0.4% (2018-2022)" if moe else "13.3% (2018-2022)")


def test_a_stat_row_names_three_measures_and_counts_the_rest():
    cols = ["county_name", "state_name", "population", "median_age", "median_gross_rent", "poverty_rate"]
    said = headline(cols, [["Travis County", "Texas", 1307625, 35.5, 1669, 11.3]])
    assert said is not None and said.shape == "statrow"
    assert said.text == ("Travis County, Texas: population 1,307,625; median age 35.5; median gross rent $1,669, "
                         "and 1 more")


@pytest.mark.parametrize("moe", [True, False])
def test_a_ranking_names_the_first_and_the_last(moe):
    rows = [["Mississippi", 8.1, 0.3], ["Louisiana", 7.0, 0.2], ["Nevada", 6.9, 0.3]]
    cols = ["state_name", "unemployment_rate_pct"] + (["unemployment_rate_pct_moe"] if moe else [])
    said = headline(cols, [r if moe else r[:2] for r in rows], ranked=True, period="2019-2023")
    assert said is not None and said.shape == "rank"
    first = "8.1% ±0.3%" if moe else "8.1%"
    last = "6.9% ±0.3%" if moe else "6.9%"
    assert said.text == (f"Mississippi has the highest unemployment rate, {first}, of the 3 states shown; "
                         f"3rd: Nevada, {last} (2019-2023)")


def test_a_bottom_ranking_says_lowest():
    said = headline(["county_name", "state_abbr", "median_age"], [["A County", "UT", 25.1], ["B County", "TX", 27.0]],
                    ranked=True)
    assert said is not None and said.text.startswith("A County, UT has the lowest median age, 25.1")


@pytest.mark.parametrize("moe", [True, False])
def test_a_comparison_of_two_says_which_is_higher(moe):
    cols = ["state_name", "poverty_rate"] + (["poverty_rate_moe"] if moe else [])
    rows = [["Tennessee", 14.0, 0.2], ["Kentucky", 16.1, 0.3]]
    said = headline(cols, [r if moe else r[:2] for r in rows], compare="places")
    assert said is not None and said.shape == "compare"
    ky, tn = ("16.1% ±0.3%", "14.0% ±0.2%") if moe else ("16.1%", "14.0%")
    assert said.text == f"Poverty rate: Kentucky {ky}, higher than Tennessee {tn}"


@pytest.mark.parametrize("moe", [True, False])
def test_one_place_changed(moe):
    cols = ["county_name", "state_abbr", "median_household_income_2014_2018", "median_household_income_2019_2023",
            "change", "change_moe", "pct_change", "pct_change_moe"]
    row = ["Travis County", "TX", 87361, 97169, 9808, 1633 if moe else None, 11.2, 2.0 if moe else None]
    said = headline(cols, [row], compare="change")
    assert said is not None and said.shape == "change"
    change = "+$9,808 ±$1,633 (+11.2% ±2.0%)" if moe else "+$9,808 (+11.2%)"
    assert said.text == (f"Travis County, TX: median household income rose from $87,361 to $97,169, {change} "
                         "(2014-2018 to 2019-2023)")


def test_a_ranking_of_changes_names_the_fastest():
    cols = ["county_name", "state_abbr", "population_2014_2018", "population_2019_2023", "change", "change_moe",
            "pct_change", "pct_change_moe"]
    rows = [["Williamson County", "TX", 500000, 611000, 111000, None, 22.2, None],
            ["Hays County", "TX", 200000, 240000, 40000, None, 20.0, None]]
    said = headline(cols, rows, compare="change", ranked=True)
    assert said is not None and said.text.startswith(
        "Williamson County, TX grew fastest in population, +22.2% (2014-2018 to 2019-2023)")


def test_a_ranking_of_losses_says_fell():
    cols = ["county_name", "state_abbr", "population_2014_2018", "population_2019_2023", "change", "change_moe"]
    rows = [["A County", "IL", 1000, 900, -100, 30], ["B County", "IL", 2000, 1950, -50, 20]]
    said = headline(cols, rows, compare="change", ranked=True)
    assert said is not None and said.text.startswith("A County, IL fell the most in population, -100 ±30")


@pytest.mark.parametrize("moe", [True, False])
def test_a_threshold_list_counts_and_names_the_highest(moe):
    rows = [["Nevada", 6.9, 0.3], ["Mississippi", 8.1, 0.3]]
    cols = ["state_name", "unemployment_rate_pct"] + (["unemployment_rate_pct_moe"] if moe else [])
    said = headline(cols, [r if moe else r[:2] for r in rows], condition="an unemployment rate above 5%")
    assert said is not None and said.shape == "threshold"
    top = "8.1% ±0.3%" if moe else "8.1%"
    assert said.text == f"2 states have an unemployment rate above 5%; the highest is Mississippi, {top}"


def test_a_national_figure_says_how_it_was_added_up():
    said = headline(["us_population"], [[332387540]], period="2019-2023")
    assert said is not None and said.shape == "national"
    assert said.text == "US population: 332,387,540 (2019-2023) — the 50 states and DC added up"


@pytest.mark.parametrize("moe", [True, False])
def test_a_difference_of_two_places(moe):
    cols = ["first_place", "second_place", "first_population", "second_population", "difference"] + (
        ["difference_moe"] if moe else [])
    said = headline(cols, [["Washington", "District of Columbia", 7812880, 678972, 7133908] + ([0] if moe else [])])
    assert said is not None and said.shape == "difference"
    assert said.text.startswith("Population: Washington 7,812,880, 7,133,908 ")
    assert "more than District of Columbia 678,972" in said.text


def test_two_equal_values_are_the_same():
    said = headline(["state_name", "unemployment_rate_pct"], [["Kentucky", 4.8], ["Ohio", 4.8]], compare="places")
    assert said is not None and said.text == "Unemployment rate: Kentucky 4.8%, the same as Ohio 4.8%"


def test_nothing_to_say():
    assert headline(["state_name", "population"], []) is None
    assert headline(["state_name", "state_abbr"], [["Ohio", "OH"]]) is None


def test_every_shape_is_covered_by_a_test():
    tested = {"value", "statrow", "rank", "compare", "change", "threshold", "national", "difference"}
    assert set(SHAPES) == tested
