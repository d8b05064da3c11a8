"""The offline planner on the real database: each intent and each way of naming a place, the declines, and the
result comparison the benchmarks use.  Expected values are read from the database with independent SQL, never
written into the test."""

from __future__ import annotations

from pathlib import Path

import pytest

from sage.db import owner
from sage.evaluate import compare_results, gold_is_ordered, values_equal
from sage.planner.base import Attempt, Planner
from sage.text import normalize
from sage.types import Chunk

from .planning import run


def db_value(settings, sql, *params):
    with owner(settings) as conn:
        return conn.execute(sql, params).fetchone()[0]


def estimate(settings, geo_id, code):
    return db_value(settings, "SELECT estimate FROM public.estimates WHERE geo_id = %s AND variable_code = %s",
                    geo_id, code)


def col(result, name):
    i = result.columns.index(name)
    return [row[i] for row in result.rows]


def test_it_is_a_planner(planner):
    assert isinstance(planner, Planner) and planner.name == "offline"


def test_normalisation_keeps_offsets_and_spells_places_plainly():
    text = normalize("Doña Ana County's rent, St. Louis & Prince George's Co. vs Baltimore city's")
    assert text == "Dona Ana County rent, St Louis and Prince Georges Co vs Baltimore city"
    assert len(text.lower()) == len(text)


# --------------------------------------------------------------------------------------- single values


def test_state_lookup_by_name(planner, settings):
    plan = planner.plan("How many people live in Oregon?", [])
    res = run(plan, settings)
    assert res.rows == [["Oregon", estimate(settings, "0400000US41", "B01003_001E")]]
    assert plan.display_hint == "big" and plan.planner == "offline"
    assert any("B01003_001E" in a and "2019-2023" in a for a in plan.assumptions)


@pytest.mark.parametrize(
    "question, state",
    [("Population of NM", "New Mexico"), ("what is the population in ohio", "Ohio"), ("population of OK", "Oklahoma")],
)
def test_postal_codes_in_capitals_but_not_english_words(planner, settings, question, state):
    assert col(run(planner.plan(question, []), settings), "state_name") == [state]


@pytest.mark.parametrize(
    "question, county, state",
    [
        ("median household income in Marin County, CA", "Marin County", "California"),
        ("median household income in marin county california", "Marin County", "California"),
        ("median household income in Fairfax County (VA)", "Fairfax County", "Virginia"),
        ("median household income in Jefferson Parish", "Jefferson Parish", "Louisiana"),
        ("median household income in the Bethel Census Area", "Bethel Census Area", "Alaska"),
        ("median household income in Richmond city", "Richmond city", "Virginia"),
        ("median household income in Cook Co., IL", "Cook County", "Illinois"),
        ("median household income in Manhattan", "New York County", "New York"),
    ],
)
def test_county_forms(planner, settings, question, county, state):
    plan = planner.plan(question, [])
    res = run(plan, settings)
    assert res.columns[:3] == ["county_name", "state_name", "median_household_income"]
    assert [r[:2] for r in res.rows] == [[county, state]]
    assert "median_household_income_moe" in res.columns and col(res, "median_household_income_moe")[0] >= 0
    assert any("margin of error" in a.lower() for a in plan.assumptions)


def test_misspelled_state_is_matched_and_said(planner, settings):
    plan = planner.plan("unemployment rate in Conneticut", [])
    assert col(run(plan, settings), "state_name") == ["Connecticut"]
    assert any("Conneticut" in a and "Connecticut" in a for a in plan.assumptions)


def test_misspelled_county_is_matched_within_its_state(planner, settings):
    plan = planner.plan("population of Hamiltn County, Ohio", [])
    assert [r[:2] for r in run(plan, settings).rows] == [["Hamilton County", "Ohio"]]
    assert any("Hamilton County" in a for a in plan.assumptions)


def test_an_ambiguous_county_alone_is_asked_back_largest_first(planner, settings):
    """One county asked, many of that name: which one is asked back (the readings as buttons), never 23 rows."""
    plan = planner.plan("population of Lincoln County", [])
    n = db_value(settings, "SELECT count(*) FROM public.geography WHERE county_name = 'Lincoln County'")
    assert plan.declined and plan.decline_kind == "ambiguous" and n > 8
    assert any(f"exists in {n} states" in a for a in plan.assumptions)
    largest = db_value(settings, "SELECT state_abbr FROM public.geography g JOIN public.estimates e USING (geo_id) "
                                 "WHERE county_name = 'Lincoln County' AND variable_code = 'B01003_001E' "
                                 "ORDER BY estimate DESC LIMIT 1")
    assert len(plan.suggestions) == 8 and plan.suggestions[0] == f"population of Lincoln County, {largest}"
    answered = planner.plan(plan.suggestions[0], [])
    assert not answered.declined and len(run(answered, settings).rows) == 1


def test_ambiguous_counties_in_a_list_show_every_match_and_say_so(planner, settings):
    plan = planner.plan("population of Lincoln County and Harris County, Texas", [])
    n = db_value(settings, "SELECT count(*) FROM public.geography WHERE county_name = 'Lincoln County'")
    res = run(plan, settings)
    assert len(res.rows) == n + 1 and any(f"{n} states" in a for a in plan.assumptions)


def test_dc_uses_its_county_equivalent_for_county_only_measures(planner, settings):
    plan = planner.plan("median home value in Washington, DC", [])
    assert run(plan, settings).rows == [["District of Columbia", "District of Columbia",
                                         estimate(settings, "0500000US11001", "B25077_001E")]]
    assert any("county-equivalent" in a for a in plan.assumptions)


def test_snapshot_of_one_county(planner, settings):
    plan = planner.plan("Fulton County, GA: population, median age and unemployment rate", [])
    res = run(plan, settings)
    assert len(res.rows) == 1 and plan.display_hint == "statrow"
    assert {"population", "median_age", "unemployment_rate_pct"} <= set(res.columns)
    geo = "0500000US13121"
    assert col(res, "population") == [estimate(settings, geo, "B01003_001E")]
    rate = 100 * estimate(settings, geo, "B23025_005E") / estimate(settings, geo, "B23025_003E")
    assert values_equal(float(rate), col(res, "unemployment_rate_pct")[0])


# --------------------------------------------------------------------------------------- sets of places


def test_top_n_ascending(planner, settings):
    plan = planner.plan("Which 4 states have the lowest share of households with an internet subscription?", [])
    values = col(run(plan, settings), "internet_subscription_pct")
    assert len(values) == 4 and values == sorted(values) and plan.display_hint == "bar"
    lowest = db_value(settings, "SELECT min(100.0 * s.estimate / t.estimate) FROM public.estimates s "
                      "JOIN public.estimates t ON t.geo_id = s.geo_id AND t.variable_code = 'B28011_001E' "
                      "JOIN public.geography g ON g.geo_id = s.geo_id "
                      "WHERE g.level = 'state' AND s.variable_code = 'B28011_002E'")
    assert values_equal(float(lowest), values[0])


def test_a_wealth_word_ranks_the_measure_that_is_named(planner, settings):
    """“poorest … by poverty rate” ranks by poverty rate (highest first); alone, “richest” still means income."""
    plan = planner.plan("The 6 poorest counties in Arkansas by poverty rate", [])
    result = run(plan, settings)
    values = col(result, "poverty_rate_pct")
    assert len(values) == 6 and values == sorted(values, reverse=True)
    assert "median_household_income" not in result.columns
    richest = run(planner.plan("the 3 richest counties in Maryland", []), settings)
    incomes = col(richest, "median_household_income")
    assert len(incomes) == 3 and incomes == sorted(incomes, reverse=True)


def test_default_n_is_stated(planner, settings):
    plan = planner.plan("Which counties have the highest median gross rent?", [])
    values = col(run(plan, settings), "median_gross_rent")
    assert len(values) == 10 and values == sorted(values, reverse=True)
    assert any("no number given" in a for a in plan.assumptions)


def test_singular_question_gets_one_row(planner, settings):
    res = run(planner.plan("Which state has the largest number of housing units?", []), settings)
    assert len(res.rows) == 1


def test_counties_within_a_state_and_the_50_states(planner, settings):
    res = run(planner.plan("top 3 TX counties by Hispanic share", []), settings)
    assert set(col(res, "state_name")) == {"Texas"} and len(res.rows) == 3
    res = run(planner.plan("Which of the 50 states has the highest unemployment rate?", []), settings)
    assert len(res.rows) == 1 and res.rows[0][0] not in ("Puerto Rico", "District of Columbia")


def test_ranking_within_each_state(planner, settings):
    res = run(planner.plan("the highest poverty-rate county in each state", []), settings)
    states = col(res, "state_name")
    assert len(states) == len(set(states)) >= 45


@pytest.mark.parametrize(
    "question, column, check",
    [
        ("Which counties have a median household income over $140k?", "median_household_income", lambda v: v > 140_000),
        ("states with more than 1.5 million housing units", "housing_units", lambda v: v > 1_500_000),
        ("counties with 750k+ residents", "population", lambda v: v >= 750_000),
        ("states where fewer than 88% of households have internet", "internet_subscription_pct", lambda v: v < 88),
        ("Which counties in Ohio have a median age between 44 and 46?", "median_age", lambda v: 44 <= v <= 46),
        ("Which Georgia counties have a majority Black population?", "black_pct", lambda v: v > 50),
    ],
)
def test_thresholds(planner, settings, question, column, check):
    plan = planner.plan(question, [])
    values = col(run(plan, settings), column)
    assert values and all(check(float(v)) for v in values)
    assert any("read as" in a for a in plan.assumptions)


def test_threshold_result_is_complete(planner, settings):
    res = run(planner.plan("Which states have more than 8 million people?", []), settings)
    n = db_value(settings, "SELECT count(*) FROM public.estimates e JOIN public.geography g USING (geo_id) WHERE "
                 "g.level = 'state' AND e.variable_code = 'B01003_001E' AND e.estimate > 8000000")
    assert len(res.rows) == n


def test_two_measures_and_a_threshold_on_counties(planner, settings):
    res = run(planner.plan("counties with over 400,000 people where the poverty rate is above 18%", []), settings)
    assert res.rows and all(float(p) > 400_000 and float(r) > 18
                            for p, r in zip(col(res, "population"), col(res, "poverty_rate_pct"), strict=True))


def test_compare_places(planner, settings):
    plan = planner.plan("Poverty rate: Kentucky vs Tennessee vs West Virginia", [])
    assert sorted(col(run(plan, settings), "state_name")) == ["Kentucky", "Tennessee", "West Virginia"]
    assert plan.display_hint == "bar"
    plan = planner.plan("median rent and median home value in Travis County vs Williamson County, TX", [])
    assert len(run(plan, settings).rows) == 2 and plan.display_hint == "grouped"


def test_counties_named_together_share_a_state(planner, settings):
    plan = planner.plan("Which is bigger, Harris County or Dallas County?", [])
    assert set(col(run(plan, settings), "state_name")) == {"Texas"}


def test_all_states_is_a_map_with_geo_ids(planner, settings):
    plan = planner.plan("poverty rate by state", [])
    res = run(plan, settings)
    assert plan.display_hint == "map" and "geo_id" in res.columns and len(res.rows) == 49


def test_several_counties_under_one_plural_suffix(planner, settings):
    res = run(planner.plan("poverty rate in Cook and DuPage counties", []), settings)
    assert sorted(r[:2] for r in res.rows) == [["Cook County", "Illinois"], ["DuPage County", "Illinois"]]
    res = run(planner.plan("Which Texas and Oklahoma counties have the highest poverty rate?", []), settings)
    assert set(col(res, "state_name")) <= {"Texas", "Oklahoma"} and len(res.rows) == 10


def test_a_bare_name_next_to_a_county_is_read_in_its_state(planner, settings):
    plan = planner.plan("median household income in Prince William County VA vs Loudoun", [])
    assert sorted(col(run(plan, settings), "county_name")) == ["Loudoun County", "Prince William County"]
    assert any("Loudoun County, VA" in a for a in plan.assumptions)


def test_threshold_set_by_another_place(planner, settings):
    res = run(planner.plan("Which counties have more people than Wyoming?", []), settings)
    wyoming = estimate(settings, "0400000US56", "B01003_001E")
    assert res.rows and all(v > wyoming for v in col(res, "population"))


# --------------------------------------------------------------------------------------- aggregates


def test_places_added_together(planner, settings):
    res = run(planner.plan("What is the population of Vermont and Maine combined?", []), settings)
    total = estimate(settings, "0400000US50", "B01003_001E") + estimate(settings, "0400000US23", "B01003_001E")
    assert res.rows == [[total]]


def test_counting_counties_of_a_state(planner, settings):
    n = db_value(settings, "SELECT count(*) FROM public.geography WHERE level = 'county' AND state_abbr = 'GA'")
    assert run(planner.plan("How many counties are in Georgia?", []), settings).rows == [[n]]


def test_national_total_is_the_sum_of_the_states_without_puerto_rico(planner, settings):
    plan = planner.plan("What's the total number of households in the US?", [])
    total = db_value(settings, "SELECT sum(e.estimate) FROM public.estimates e JOIN public.geography g USING "
                     "(geo_id) WHERE g.level = 'state' AND g.state_abbr <> 'PR' AND e.variable_code = 'B28011_001E'")
    assert run(plan, settings).rows == [[total]]
    assert any("Puerto Rico" in a for a in plan.assumptions)


def test_national_rate(planner, settings):
    rows = run(planner.plan("the national unemployment rate", []), settings).rows
    assert len(rows) == 1 and 0 < rows[0][0] < 100


def test_counting_places(planner, settings):
    plan = planner.plan("How many counties in Iowa have more than 50,000 people?", [])
    n = db_value(settings, "SELECT count(*) FROM public.estimates e JOIN public.geography g USING (geo_id) "
                 "WHERE g.level = 'county' AND g.state_abbr = 'IA' AND e.variable_code = 'B01003_001E' "
                 "AND e.estimate > 50000")
    assert run(plan, settings).rows == [[n]] and plan.display_hint == "big"


def test_share_of_its_state(planner, settings):
    res = run(planner.plan("What share of Nevada's population lives in Clark County?", []), settings)
    share = 100 * estimate(settings, "0500000US32003", "B01003_001E") / estimate(settings, "0400000US32", "B01003_001E")
    assert values_equal(float(share), col(res, "pct_of_state_population")[0])


# --------------------------------------------------------------------------------------- declines


@pytest.mark.parametrize(
    "question, why",
    [
        ("What's the crime rate in Nebraska?", "crime"),
        ("average commute in King County, WA", "commut"),
        ("homeownership rate in Idaho", "tenure"),
        ("population of Idaho in 1950", "1950"),
        ("What will Idaho's population be in 2040?", "forecast"),
        ("median household income in Spokane, WA", "places such as Spokane city"),
        ("median income in ZIP 83702", "ZIP"),
        ("median gross rent in Arizona", "county rows only"),
        ("US median age", "counties only"),
        ("health insurance coverage in Alaska", "Alaska"),
        ("poverty rate in Maui County", "Maui County"),
        ("White householder income in Dallas County, TX", "only for states"),
        ("What is the share of seniors over 65 in Maine?", "age"),
        ("Tell me something interesting", "measure"),
        ("poverty rate among Hispanics in Texas", "cross-tabulation"),
        ("Is Marin County's median household income above the national average?", "no US figure"),
        ("Which Texas counties have unemployment higher than the national rate?", "national"),
        ("What was Ohio's population in the 2021 1-year ACS?", "1-year"),
        ("people in poverty per 1,000 residents in Ohio", "2018-2022"),
    ],
)
def test_declines_say_why_and_offer_answerable_questions(planner, question, why):
    plan = planner.plan(question, [])
    assert plan.declined and plan.sql == ""
    assert plan.assumptions[0].startswith("Cannot answer") and why.lower() in plan.assumptions[0].lower()
    assert 2 <= len(plan.suggestions) <= 3
    for suggestion in plan.suggestions:
        assert not planner.plan(suggestion, []).declined, suggestion


# --------------------------------------------------------------------------------------- retries and retrieval


def test_a_failed_sql_is_never_proposed_again(planner):
    question = "median household income in Marin County, CA"
    first = planner.plan(question, [])
    second = planner.plan(question, [], [Attempt(first.sql, "statement timeout", "timeout")])
    assert second.sql != first.sql
    third = planner.plan(question, [], [Attempt(first.sql, "x"), Attempt(second.sql, "y")])
    assert third.declined and "failed" in third.assumptions[0]


def test_retrieval_is_a_fallback_for_unknown_wording(planner, settings):
    question = "What are properties valued at in Travis County?"
    assert planner.plan(question, []).declined
    chunk = Chunk(1, "variable", "B25077_001E", "Median value (dollars) of owner-occupied housing units", 0.8)
    plan = planner.plan(question, [chunk])
    assert col(run(plan, settings), "median_home_value") == [estimate(settings, "0500000US48453", "B25077_001E")]
    assert any("retrieval" in a for a in plan.assumptions)


# --------------------------------------------------------------------------------------- result comparison


def test_compare_results_allows_extra_columns_renames_and_rounding():
    gold = (["state_name", "poverty_rate_pct"], [["Ohio", 13.4], ["Iowa", 11.0]])
    pred_rows = [["39", "Iowa", 11.02, 1], ["19", "Ohio", 13.38, 2]]
    ok, _ = compare_results(*gold, ["geo_id", "name", "rate", "moe"], pred_rows, ordered=False)
    assert ok
    ok, why = compare_results(*gold, ["name", "rate"], [["Iowa", 11.0], ["Ohio", 13.4]], ordered=True)
    assert not ok and "order" in why
    ok, why = compare_results(*gold, ["name", "rate"], [["Ohio", 13.4]], ordered=False)
    assert not ok and "rows" in why
    ok, _ = compare_results(*gold, ["name", "rate"], [["Ohio", 11.0], ["Iowa", 13.4]], ordered=False)
    assert not ok, "values must stay on their own rows"


def test_gold_order_is_the_outer_order_by():
    assert gold_is_ordered("SELECT a FROM t ORDER BY a DESC LIMIT 3")
    assert not gold_is_ordered("SELECT count(*) FROM (SELECT a FROM t ORDER BY a) x")


def test_without_internet_is_the_complement_not_the_subscription_share(planner, settings):
    share = run(planner.plan("What share of households in Vermont lack internet?", []), settings)
    subscribed = run(planner.plan("What share of households in Vermont have an internet subscription?", []), settings)
    lacking, having = share.rows[0][-1], subscribed.rows[0][-1]
    assert share.columns[-1] == "no_internet_pct" and abs(lacking + having - 100) <= 0.11
    count = run(planner.plan("How many households in Vermont have no internet?", []), settings)
    total = estimate(settings, "0400000US50", "B28011_001E") - estimate(settings, "0400000US50", "B28011_002E")
    assert count.columns[-1] == "households_without_internet" and count.rows[0][-1] == total


@pytest.mark.parametrize(
    "question, rows, first",
    [("Which state has the most counties?", 1, "Texas"),
     ("Which 3 states have the fewest counties?", 3, "District of Columbia"),
     ("which of the 50 states has the fewest counties", 1, "Delaware"),
     ("top 4 states by number of counties", 4, "Texas")],
)
def test_counties_per_state(planner, settings, question, rows, first):
    result = run(planner.plan(question, []), settings)
    assert result.row_count == rows and result.rows[0][0] == first
    expected = db_value(settings, "SELECT count(*) FROM public.geography WHERE level = 'county' AND state_name = %s",
                        first)
    assert result.rows[0][1] == expected


def test_counting_us_counties_leaves_out_puerto_rico(planner, settings):
    result = run(planner.plan("How many counties are there in the US?", []), settings)
    expected = db_value(settings, "SELECT count(*) FROM public.geography WHERE level = 'county' AND state_fips <> '72'")
    assert result.rows == [[expected]]


def test_a_set_of_places_added_up(planner, settings):
    result = run(planner.plan("What is the total population of Texas counties with more than 1 million people?", []),
                 settings)
    expected = db_value(settings, "SELECT sum(e.estimate), count(*) FROM public.estimates e JOIN public.geography g "
                        "ON g.geo_id = e.geo_id WHERE g.level = 'county' AND g.state_abbr = 'TX' "
                        "AND e.variable_code = 'B01003_001E' AND e.estimate > 1000000")
    assert result.columns == ["total_population", "counties"] and result.rows[0][0] == expected


def test_people_living_in_places_selected_by_a_median(planner, settings):
    plan = planner.plan("How many people live in counties with a median household income above $120,000?", [])
    result = run(plan, settings)
    with owner(settings) as conn:
        expected = conn.execute(
            "SELECT sum(p.estimate), count(*) FROM public.estimates p JOIN public.estimates i "
            "ON i.geo_id = p.geo_id AND i.variable_code = 'B19013_001E' AND i.estimate > 120000 "
            "WHERE p.variable_code = 'B01003_001E'").fetchone()
    assert result.rows[0] == [expected[0], expected[1]]
    assert any("added together" in a for a in plan.assumptions)


# --------------------------------------------------------------------------------------- generalisation probe fixes


@pytest.mark.parametrize("question", ["uninsured % in Miami-Dade", "population of miami-dade",
                                      "Miami-Dade vs Broward County population"])
def test_a_hyphenated_county_name_without_its_suffix(planner, settings, question):
    result = run(planner.plan(question, []), settings)
    assert "Miami-Dade County" in [row[0] for row in result.rows]


def test_how_many_of_a_citizenship_group_is_a_count(planner, settings):
    result = run(planner.plan("How many naturalized citizens live in New Jersey?", []), settings)
    assert result.rows == [["New Jersey", estimate(settings, "0400000US34", "B27020_008E")]]


def test_a_census_division_is_read_as_its_states(planner, settings):
    plan = planner.plan("rank the new england states by population", [])
    result = run(plan, settings)
    with owner(settings) as conn:
        expected = [list(r) for r in conn.execute(
            "SELECT g.state_name, e.estimate FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id "
            "WHERE g.level = 'state' AND g.state_abbr IN ('CT', 'ME', 'MA', 'NH', 'RI', 'VT') "
            "AND e.variable_code = 'B01003_001E' ORDER BY e.estimate DESC").fetchall()]
    assert [[r[0], r[-1]] for r in result.rows] == expected
    assert any("New England" in a for a in plan.assumptions)


def test_a_region_adjective_keeps_the_superlative(planner, settings):
    result = run(planner.plan("which southern state has the highest poverty rate", []), settings)
    assert len(result.rows) == 1


@pytest.mark.parametrize("question, why", [
    ("top 3 counties in the Pacific Northwest by income", "Pacific Northwest"),
    ("Rust Belt unemployment rate", "Rust Belt"),
    ("average median household income of counties in Ohio", "average"),
    ("mean unemployment rate across Texas counties", "mean"),
    ("which county has the most people per housing unit", "ratio of two measures"),
])
def test_qualifiers_it_cannot_honour_are_declined_not_dropped(planner, question, why):
    plan = planner.plan(question, [])
    assert plan.declined and why in plan.assumptions[0] and plan.suggestions


def test_a_place_named_only_to_be_left_out_is_not_the_answer(planner, settings):
    plan = planner.plan("What percent of the US is Hispanic excluding Puerto Rico", [])
    result = run(plan, settings)
    expected = db_value(
        settings, "SELECT 100.0 * sum(e.estimate) FILTER (WHERE e.variable_code = 'B03002_012E') / "
        "sum(e.estimate) FILTER (WHERE e.variable_code = 'B03002_001E') FROM public.estimates e "
        "JOIN public.geography g ON g.geo_id = e.geo_id WHERE g.level = 'state' AND g.state_abbr <> 'PR'")
    assert len(result.rows) == 1 and values_equal(expected, result.rows[0][-1])


@pytest.mark.parametrize("question, left_out", [
    ("total population of the US excluding Texas", ("TX", "PR")),
    ("population of the contiguous US", ("AK", "HI", "PR")),
    ("total population of the lower 48 states", ("AK", "HI", "PR", "DC")),
    ("US population with Puerto Rico included", ()),
    ("how many people live in the 50 states plus DC", ("PR",)),
])
def test_clauses_that_change_the_set_summed(planner, settings, question, left_out):
    plan = planner.plan(question, [])
    result = run(plan, settings)
    expected = db_value(settings, "SELECT sum(e.estimate) FROM public.estimates e JOIN public.geography g "
                        "ON g.geo_id = e.geo_id WHERE g.level = 'state' AND e.variable_code = 'B01003_001E' "
                        "AND NOT g.state_abbr = ANY(%s)", list(left_out))
    assert result.rows == [[expected]], plan.assumptions


def test_average_as_a_synonym_of_a_median_is_stated(planner, settings):
    plan = planner.plan("average rent in Travis County TX", [])
    result = run(plan, settings)
    assert result.rows[0][-1] == estimate(settings, "0500000US48453", "B25064_001E")
    assert any("read as the median gross rent" in a for a in plan.assumptions)


# --------------------------------------------------------------------------------------- second generalization probe


@pytest.mark.parametrize("question, state_fips", [
    ("Which census area in Alaska has the lowest median household income?", "02"),
    ("Which Louisiana parish is the most populous?", "22"),
    ("Which municipio of Puerto Rico has the most housing units?", "72"),
    ("Which Connecticut planning region has the highest per capita income?", "09"),
])
def test_a_county_equivalent_word_makes_a_set_question(planner, settings, question, state_fips):
    """“Which census area / municipio / planning region …” ranks the county rows of the state, not the state."""
    plan = planner.plan(question, [])
    result = run(plan, settings)
    assert len(result.rows) == 1 and result.columns[:2] == ["county_name", "state_name"]
    measure_code = next(c for c in ("B19013_001E", "B01003_001E", "B25001_001E", "B19301_001E") if c in plan.sql)
    best = db_value(settings, "SELECT {} (e.estimate) FROM public.estimates e JOIN public.geography g USING (geo_id) "
                    "WHERE g.level = 'county' AND g.state_fips = %s AND e.variable_code = %s".format(
                        "min" if "lowest" in question else "max"), state_fips, measure_code)
    value = [v for c, v in zip(result.columns, result.rows[0], strict=True) if not c.endswith("_moe")][-1]
    assert value == best


def test_which_has_without_a_level_word_after_it_is_one_place(planner, settings):
    plan = planner.plan("Among the 50 states, which has the highest unemployment rate?", [])
    result = run(plan, settings)
    expected = db_value(
        settings, "SELECT g.state_name FROM public.estimates e JOIN public.geography g USING (geo_id) WHERE "
        "g.level = 'state' AND g.state_abbr NOT IN ('DC', 'PR') AND e.variable_code IN ('B23025_005E', "
        "'B23025_003E') GROUP BY g.state_name ORDER BY sum(e.estimate) FILTER (WHERE e.variable_code = "
        "'B23025_005E') / sum(e.estimate) FILTER (WHERE e.variable_code = 'B23025_003E') DESC LIMIT 1")
    assert col(result, "state_name") == [expected]


def test_the_count_after_the_superlative(planner, settings):
    """“highest 4 …” / “lowest three …”: the number may follow the superlative."""
    result = run(planner.plan("highest 4 median home values among Vermont counties", []), settings)
    expected = db_value(settings, "SELECT array_agg(v ORDER BY v DESC) FROM (SELECT e.estimate v FROM "
                        "public.estimates e JOIN public.geography g USING (geo_id) WHERE g.level = 'county' AND "
                        "g.state_abbr = 'VT' AND e.variable_code = 'B25077_001E' ORDER BY e.estimate DESC LIMIT 4) t")
    assert col(result, "median_home_value") == expected
    assert len(run(planner.plan("lowest three poverty rates of Iowa counties", []), settings).rows) == 3


@pytest.mark.parametrize("question, geo_ids", [
    ("Is Georgia's population larger than Michigan's?", ("0400000US13", "0400000US26")),
    ("Does Maricopa County, AZ have more people than Nevada?", ("0500000US04013", "0400000US32")),
])
def test_a_named_place_against_another_is_a_comparison_not_a_threshold(planner, settings, question, geo_ids):
    result = run(planner.plan(question, []), settings)
    assert sorted(col(result, "population")) == sorted(estimate(settings, g, "B01003_001E") for g in geo_ids)


def test_a_place_as_the_line_for_a_set_still_is_a_threshold(planner, settings):
    result = run(planner.plan("Which Florida counties have more people than Delaware?", []), settings)
    line = estimate(settings, "0400000US10", "B01003_001E")
    assert result.rows and all(v > line for v in col(result, "population"))
    assert set(col(result, "state_name")) == {"Florida"}


def test_a_listed_measure_is_kept_next_to_one_that_supersedes_it(planner, settings):
    """The Gini index supersedes “income” in “income inequality”, but a listed “median household income” is
    its own item."""
    plan = planner.plan("Marin County, CA: median household income, Gini index and per capita income", [])
    result = run(plan, settings)
    assert len(result.rows) == 1
    row = dict(zip(result.columns, result.rows[0], strict=True))
    for column, code in (("median_household_income", "B19013_001E"), ("gini_index", "B19083_001E"),
                         ("per_capita_income", "B19301_001E")):
        assert values_equal(estimate(settings, "0500000US06041", code), row[column])
    # one concept in two words still reads as the specific measure
    plan = planner.plan("median income of White householders in Ohio", [])
    assert "B19013A_001E" in plan.sql and "B19013_001E" not in plan.sql


def test_american_before_a_noun_is_the_us(planner, settings):
    plan = planner.plan("What share of American households have an internet subscription?", [])
    result = run(plan, settings)
    expected = db_value(
        settings, "SELECT 100.0 * sum(e.estimate) FILTER (WHERE e.variable_code = 'B28011_002E') / "
        "sum(e.estimate) FILTER (WHERE e.variable_code = 'B28011_001E') FROM public.estimates e "
        "JOIN public.geography g ON g.geo_id = e.geo_id WHERE g.level = 'state' AND g.state_abbr <> 'PR'")
    assert len(result.rows) == 1 and values_equal(expected, result.rows[0][-1])


# --------------------------------------------------------------------------------------- terse, fractions, the US row


def _rate(settings, where, num, den):
    """A rate of summed counts over the geography rows matching ``where`` (independent SQL)."""
    return db_value(settings,
                    "SELECT 100.0 * SUM(e.estimate) FILTER (WHERE e.variable_code = ANY(%s)) / "
                    "SUM(e.estimate) FILTER (WHERE e.variable_code = ANY(%s)) FROM public.estimates e "
                    f"JOIN public.geography g USING (geo_id) WHERE {where}", list(num), list(den))


@pytest.mark.parametrize("question, geo_id, code", [
    ("mhi cook county il", "0500000US17031", "B19013_001E"),
    ("gini sf", "0500000US06075", "B19083_001E"),
])
def test_terse_abbreviations_of_measures_and_places(planner, settings, question, geo_id, code):
    res = run(planner.plan(question, []), settings)
    want = estimate(settings, geo_id, code)
    assert len(res.rows) == 1 and any(values_equal(float(want), cell) for cell in res.rows[0][2:])


def test_terse_rate_abbreviation(planner, settings):
    res = run(planner.plan("unemp rate ohio", []), settings)
    want = _rate(settings, "g.geo_id = '0400000US39'", ["B23025_005E"], ["B23025_003E"])
    assert len(res.rows) == 1 and values_equal(float(want), res.rows[0][-1])


def test_how_many_in_each_is_a_ranking_not_a_total(planner, settings):
    res = run(planner.plan("What are the 3 most populous counties in Ohio, and how many people live in each?", []),
              settings)
    with owner(settings) as conn:
        want = [r[0] for r in conn.execute(
            "SELECT e.estimate FROM public.estimates e JOIN public.geography g USING (geo_id) WHERE g.level = "
            "'county' AND g.state_abbr = 'OH' AND e.variable_code = 'B01003_001E' ORDER BY 1 DESC LIMIT 3")]
    assert col(res, "population") == want


@pytest.mark.parametrize("question, op, cut", [
    ("Which states are more than 1 in 5 Hispanic?", ">", 20.0),
    ("states where over a third of residents are Hispanic", ">", 100 / 3),
    ("Which states have at least a quarter of residents Hispanic?", ">=", 25.0),
    ("Which states have fewer than one in ten residents Hispanic?", "<", 10.0),
])
def test_fractions_are_percentage_thresholds(planner, settings, question, op, cut):
    res = run(planner.plan(question, []), settings)
    with owner(settings) as conn:
        rows = conn.execute(
            "SELECT g.state_name, 100.0 * SUM(e.estimate) FILTER (WHERE e.variable_code = 'B03002_012E') / "
            "SUM(e.estimate) FILTER (WHERE e.variable_code = 'B03002_001E') FROM public.estimates e "
            "JOIN public.geography g USING (geo_id) WHERE g.level = 'state' GROUP BY 1").fetchall()
    pick = {">": lambda v: v > cut, ">=": lambda v: v >= cut, "<": lambda v: v < cut}[op]
    assert sorted(col(res, "state_name")) == sorted(name for name, v in rows if pick(float(v)))


def test_over_half_of_counties_residents(planner, settings):
    res = run(planner.plan("counties where over half the residents are Black", []), settings)
    n = db_value(settings,
                 "SELECT count(*) FROM (SELECT g.geo_id FROM public.estimates e JOIN public.geography g USING (geo_id) "
                 "WHERE g.level = 'county' GROUP BY g.geo_id HAVING SUM(e.estimate) FILTER (WHERE e.variable_code = "
                 "'B02001_003E') > 0.5 * SUM(e.estimate) FILTER (WHERE e.variable_code = 'B01003_001E')) s")
    assert len(res.rows) == n and n > 0


@pytest.mark.parametrize("question", [
    "Is Florida's poverty rate higher than the national average?",
    "Compare the poverty rate in Florida to the US as a whole",
])
def test_a_place_against_the_us_adds_a_us_row(planner, settings, question):
    plan = planner.plan(question, [])
    res = run(plan, settings)
    us = _rate(settings, "g.level = 'state' AND g.state_abbr <> 'PR'", ["B17025_002E"], ["B17025_001E"])
    fl = _rate(settings, "g.geo_id = '0400000US12'", ["B17025_002E"], ["B17025_001E"])
    got = {r[0]: r[-1] for r in res.rows}
    assert set(got) == {"Florida", "United States"}
    assert values_equal(float(fl), got["Florida"]) and values_equal(float(us), got["United States"])
    assert any("50 states + DC" in a for a in plan.assumptions)


def test_lowercase_us_before_a_measure_is_the_country(planner, settings):
    res = run(planner.plan("us poverty rate", []), settings)
    us = _rate(settings, "g.level = 'state' AND g.state_abbr <> 'PR'", ["B17025_002E"], ["B17025_001E"])
    assert len(res.rows) == 1 and values_equal(float(us), res.rows[0][0])
    # "us" as an object pronoun stays a pronoun
    res = run(planner.plan("tell us the poverty rate in Ohio", []), settings)
    assert col(res, "state_name") == ["Ohio"]


def test_a_count_per_1000_residents(planner, settings):
    res = run(planner.plan("How many housing units per 1,000 residents does Vermont have?", []), settings)
    want = 1000 * estimate(settings, "0400000US50", "B25001_001E") / estimate(settings, "0400000US50", "B01003_001E")
    assert len(res.rows) == 1 and values_equal(float(want), res.rows[0][-1])


@pytest.mark.parametrize("question, code, limit", [
    ("Top 5 least populous states", "B01003_001E", 5),
    ("top 3 smallest counties in Vermont by population", "B01003_001E", 3),
    ("Top 4 youngest counties in Utah", "B01002_001E", 4),
])
def test_top_before_an_ascending_superlative_ranks_lowest_first(planner, settings, question, code, limit):
    """“top 5 least populous”: “top” only means the first N; the superlative after it sets the order."""
    result = run(planner.plan(question, []), settings)
    level = "state" if "states" in question else "county"
    scope = "" if level == "state" else (" AND g.state_abbr = 'VT'" if "Vermont" in question else
                                         " AND g.state_abbr = 'UT'")
    expected = db_value(settings, "SELECT array_agg(v ORDER BY v) FROM (SELECT e.estimate v FROM public.estimates e "
                        f"JOIN public.geography g USING (geo_id) WHERE g.level = '{level}'{scope} AND "
                        "e.variable_code = %s ORDER BY e.estimate ASC LIMIT %s) t", code, limit)
    assert [float(row[-1]) for row in result.rows] == [float(v) for v in expected]


def test_top_with_at_least_a_degree_still_ranks_highest_first(planner, settings):
    """“at least a bachelor's degree” is part of the measure, not an ascending superlative."""
    result = run(planner.plan("top 3 counties by share of adults with at least a bachelor's degree", []), settings)
    values = [row[-1] for row in result.rows]
    assert len(values) == 3 and values == sorted(values, reverse=True)


@pytest.mark.parametrize("question", [
    "Which counties have a higher unemployment rate than poverty rate?",
    "Which states have a higher poverty rate than uninsured rate?",
])
def test_one_measure_against_another_over_other_people_is_declined_not_ranked(planner, question):
    """Two rates over different universes in one row are not comparable, and not a ranking by the first one:
    decline rather than guess."""
    plan = planner.plan(question, [])
    assert plan.declined and plan.sql == ""
    assert "than" in plan.assumptions[0]


@pytest.mark.parametrize("question, level, a, b", [
    ("Which counties have more Hispanic residents than White residents?", "county", "B03002_012E", "B02001_002E"),
    ("Which states have more graduate students than undergraduates?", "state", "B14001_009E", "B14001_008E"),
    ("counties where Hispanic residents outnumber non-Hispanic White residents", "county", "B03002_012E",
     "B03002_003E"),
])
def test_two_counts_of_the_same_people_are_compared_row_by_row(planner, settings, question, level, a, b):
    result = run(planner.plan(question, []), settings)
    expected = db_value(settings, "SELECT count(*) FROM public.estimates x JOIN public.estimates y "
                        "ON y.geo_id = x.geo_id AND y.variable_code = %s "
                        "JOIN public.geography g ON g.geo_id = x.geo_id "
                        "WHERE g.level = %s AND x.variable_code = %s AND x.estimate > y.estimate", b, level, a)
    assert result.row_count == expected  # 0 for the second (no state has more graduate students)


def test_than_a_number_or_a_place_is_still_a_threshold(planner, settings):
    result = run(planner.plan("Which states have a lower unemployment rate than Texas?", []), settings)
    assert result.rows and "Texas" not in col(result, "state_name")
    result = run(planner.plan("Which counties have more than a million people?", []), settings)
    assert result.rows and all(v > 1_000_000 for v in col(result, "population"))


# --------------------------------------------------------------------------------------- probe 5 regressions


def test_including_puerto_rico_widens_the_set_instead_of_naming_it(planner, settings):
    """“Including Puerto Rico, which 5 states ...”: Puerto Rico joins the ranking; it is not the only place."""
    result = run(planner.plan("Including Puerto Rico, which 5 states have the most people?", []), settings)
    expected = db_value(settings, "SELECT array_agg(n ORDER BY v DESC) FROM (SELECT g.state_name n, e.estimate v "
                        "FROM public.estimates e JOIN public.geography g USING (geo_id) WHERE g.level = 'state' "
                        "AND e.variable_code = 'B01003_001E' ORDER BY e.estimate DESC LIMIT 5) t")
    assert col(result, "state_name") == expected
    total = run(planner.plan("What is the US population including Puerto Rico?", []), settings)
    assert total.rows[0][0] == db_value(settings, "SELECT SUM(e.estimate) FROM public.estimates e JOIN "
                                        "public.geography g USING (geo_id) WHERE g.level = 'state' "
                                        "AND e.variable_code = 'B01003_001E'")


def test_fifty_states_plus_dc_is_the_51_state_rows(planner, settings):
    result = run(planner.plan("Of the 50 states plus DC, which 3 have the highest unemployment rate?", []),
                 settings)
    names = col(result, "state_name")
    assert len(names) == 3 and "Puerto Rico" not in names
    assert "District of Columbia" in names  # DC (6.5%) ranks in the top 3 once Puerto Rico is left out


def test_independent_cities_are_county_equivalents_not_declined_places(planner, settings):
    both = run(planner.plan("Which 4 Virginia counties or independent cities have the highest per capita income?",
                            []), settings)
    expected = db_value(settings, "SELECT array_agg(v ORDER BY v DESC) FROM (SELECT e.estimate v FROM "
                        "public.estimates e JOIN public.geography g USING (geo_id) WHERE g.level = 'county' AND "
                        "g.state_abbr = 'VA' AND e.variable_code = 'B19301_001E' ORDER BY e.estimate DESC LIMIT 4) t")
    assert [float(row[-1]) for row in both.rows] == [float(v) for v in expected]
    only = run(planner.plan("Which Virginia independent cities have more than 100,000 people?", []), settings)
    expected_n = db_value(settings, "SELECT COUNT(*) FROM public.estimates e JOIN public.geography g USING (geo_id) "
                          "WHERE g.level = 'county' AND g.state_abbr = 'VA' AND g.county_name LIKE '%% city' "
                          "AND e.variable_code = 'B01003_001E' AND e.estimate > 100000")
    assert len(only.rows) == expected_n and all(n.endswith(" city") for n in col(only, "county_name"))


def test_a_count_cue_in_a_list_belongs_to_its_own_item(planner, settings):
    """“number of housing units and poverty rate”: the rate stays a rate."""
    result = run(planner.plan("Give me Colorado's population, number of housing units and poverty rate", []),
                 settings)
    rate = db_value(settings, "SELECT 100.0 * p.estimate / t.estimate FROM public.estimates p JOIN "
                    "public.estimates t ON t.geo_id = p.geo_id WHERE p.geo_id = '0400000US08' AND "
                    "p.variable_code = 'B17025_002E' AND t.variable_code = 'B17025_001E'")
    assert values_equal(rate, col(result, "poverty_rate_pct")[0])
    assert col(result, "housing_units") == [estimate(settings, "0400000US08", "B25001_001E")]


def test_consolidated_city_borough_named_by_its_city_name(planner, settings):
    """Anchorage and Juneau are consolidated city-boroughs: the city (a Census place) and the borough (the
    county-equivalent) cover the same area.  Population is published for the place, so the place answers; a
    figure places lack (median age) is read from the borough's row."""
    result = run(planner.plan("Juneau, Alaska population", []), settings)
    assert result.rows == [["Juneau city and borough, Alaska", estimate(settings, "0500000US02110", "B01003_001E")]]
    snap = run(planner.plan("Anchorage, Alaska: population and median age", []), settings)
    assert values_equal(estimate(settings, "0500000US02020", "B01002_001E"), col(snap, "median_age")[0])


@pytest.mark.parametrize("question", ["Houston, TX median age", "Dallas, Texas median household income"])
def test_a_city_typed_first_before_its_state_is_declined_not_dropped(planner, question):
    plan = planner.plan(question, [])
    assert plan.declined and "city" in plan.assumptions[0]


def _topics():
    import json

    path = Path(__file__).parent / "data" / "questions" / "retrieval_topics.jsonl"
    return [pytest.param(json.loads(line), id=json.loads(line)["id"]) for line in path.read_text().splitlines()
            if line.strip()]


@pytest.mark.parametrize("row", _topics())
def test_a_topic_the_data_lacks_is_declined_never_answered_with_a_total(planner, row):
    """The blind topic set of issue 16 (tables that are not loaded): never answered with a loaded measure that
    merely counts everyone (all people for "people who have serious difficulty walking"); a fetch it names is one
    of the tables that would answer."""
    plan = planner.plan(row["question"], [])
    assert plan.declined, (row["question"], plan.standalone)
    if plan.decline_kind == "needs_fetch":
        assert set(plan.fetch["tables"]) & set(row["tables"]), (plan.fetch, row["tables"])
