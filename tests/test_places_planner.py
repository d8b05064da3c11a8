"""The offline planner on Census places and the levels without rows (issue 17), on the real session database with
the shipped places: names resolved (unique, qualified, misspelled, consolidated, CDP, alias), ambiguous names asked
back with one-click readings, place sets, places next to counties, and the declines that name a fetch.

Every expected value is read from the database, never written here."""

from __future__ import annotations

import pytest

from sage import agent, significance

from .planning import rows, run

AUSTIN, TRAVIS = "1600000US4805000", "0500000US48453"


def value(settings, geo_id, code="B01003_001E"):
    return rows(settings, "SELECT estimate FROM public.estimates WHERE geo_id = %s AND variable_code = %s",
                geo_id, code)[0][0]


def name_of(settings, geo_id):
    return rows(settings, "SELECT name FROM public.geography WHERE geo_id = %s", geo_id)[0][0]


def place_id(settings, name, state_abbr):
    """The GEO_ID of the place whose Census NAME begins with ``name`` in a state (looked up, never typed)."""
    found = rows(settings, "SELECT geo_id FROM public.geography WHERE level = 'place' AND state_abbr = %s AND "
                 "place_name LIKE %s ORDER BY geo_id", state_abbr, name + "%")
    assert len(found) == 1, found
    return found[0][0]


# --------------------------------------------------------------------------------------- one place, named


@pytest.mark.parametrize("question", [
    "How many people live in Austin, TX?", "population of the city of Austin, Texas", "austin texas population",
    "Austin (TX) population",
])
def test_a_place_named_with_its_state(planner, settings, question):
    result = run(planner.plan(question, []), settings)
    assert result.rows == [[name_of(settings, AUSTIN), value(settings, AUSTIN)]]


@pytest.mark.parametrize("question, name, state", [
    ("pop of chicago", "Chicago city", "IL"),                 # the only place of that name
    ("nyc population", "New York city", "NY"),                # an everyday name
    ("pittsburg pa population", "Pittsburgh city", "PA"),     # misspelt, the state a lowercase word-like code
    ("louisvile ky pop", "Louisville/Jefferson County metro government (balance)", "KY"),  # consolidated
    ("bethesda md - how many residents?", "Bethesda CDP", "MD"),                           # a CDP
    ("Kansas City MO and its population", "Kansas City city", "MO"),                       # a state's name leads
])
def test_names_people_write(planner, settings, question, name, state):
    geo = place_id(settings, name, state)
    plan = planner.plan(question, [])
    result = run(plan, settings)
    assert result.rows == [[name_of(settings, geo), value(settings, geo)]]
    if name.endswith("CDP"):
        assert any("census-designated place" in a for a in plan.assumptions)


def test_a_cdp_is_said_to_be_one(planner):
    plan = planner.plan("bethesda md population", [])
    assert any("unincorporated" in a for a in plan.assumptions)


# --------------------------------------------------------------------------------------- ambiguous names


@pytest.mark.parametrize("question", ["population of Springfield", "kansas city population?",
                                      "What's the population of Boston?", "How many people live in Portland?"])
def test_an_ambiguous_name_is_asked_back_with_one_click_readings(planner, settings, question):
    plan = planner.plan(question, [])
    assert plan.declined and plan.decline_kind == "ambiguous"
    assert len(plan.suggestions) >= 2
    answered = []
    for suggestion in plan.suggestions:
        follow = planner.plan(suggestion, [])
        assert not follow.declined, (suggestion, follow.assumptions)
        answered.append(run(follow, settings).rows[0])
    populations = [r[-1] for r in answered]
    assert populations == sorted(populations, reverse=True)  # the most populous reading first
    assert len({r[0] for r in answered}) == len(answered)    # each suggestion a different place


def test_a_name_is_told_apart_by_the_state_the_question_names(planner, settings):
    result = run(planner.plan("Austin city vs Travis County - how many people in each?", []), settings)
    assert sorted(r[-1] for r in result.rows) == sorted([value(settings, AUSTIN), value(settings, TRAVIS)])


def test_within_one_state_the_reading_is_asked_too(planner):
    plan = planner.plan("What's the population of Lakeside, California?", [])
    assert plan.decline_kind == "ambiguous" and "2 places in California" in plan.assumptions[0]
    assert not planner.plan(plan.suggestions[0], []).declined


# --------------------------------------------------------------------------------------- figures places lack


def test_a_figure_places_lack_names_the_fetch(planner):
    plan = planner.plan("What's the median household income in Austin, TX?", [])
    assert plan.declined and plan.decline_kind == "needs_fetch"
    assert plan.fetch == {"tables": ["B19013"], "vintage": 2023, "geographies": ["place"], "states": ["TX"]}
    assert "census fetch --vintage 2023 --tables B19013 --geographies place --states TX" in plan.assumptions[0]
    assert not planner.plan(plan.suggestions[0], []).declined


def test_the_question_loop_keeps_a_fetch_of_places_for_a_table_loaded_for_counties(settings):
    # B19013 has county rows, not place rows: the answer stays a needs_fetch (it was turned into a plain decline
    # because the table counted as loaded at all)
    answer = agent.ask("What's the median household income in Austin, TX?", settings, planner="offline",
                       record=False)
    assert answer.declined and answer.decline_kind == "needs_fetch"
    assert answer.fetch == {"tables": ["B19013"], "vintage": 2023, "geographies": ["place"], "states": ["TX"]}
    assert agent._still_to_fetch(settings, {"tables": ["B01003"], "vintage": 2023, "geographies": ["place"],
                                            "states": ["TX"]}) is None  # population is loaded for places
    assert agent._still_to_fetch(settings, {"tables": ["B01003"], "vintage": 2018, "geographies": ["state"]}) is None
    assert agent._still_to_fetch(settings, {"tables": ["B01003", "B23025"], "vintage": 2018,
                                            "geographies": ["county"]}) == {
        "tables": ["B23025"], "vintage": 2018, "geographies": ["county"]}  # 2014-2018 has B01003 only


def test_a_city_that_is_its_county_reads_the_county_row_for_other_figures(planner, settings):
    denver_county = "0500000US08031"
    plan = planner.plan("median household income in Denver, CO", [])
    result = run(plan, settings)
    assert result.rows[0][-2:] == [value(settings, denver_county, "B19013_001E"),
                                   rows(settings, "SELECT margin_error FROM public.estimates WHERE geo_id = %s AND "
                                        "variable_code = 'B19013_001E'", denver_county)[0][0]]
    assert any("covers exactly the area" in a for a in plan.assumptions)


@pytest.mark.parametrize("question, level, states", [
    ("What's the population of TX-21?", "cd", ["TX"]),
    ("population and housing units for ZIP 78701", "zcta", None),
    ("Population of census tract 11 in Travis County, Texas", "tract", ["TX"]),
    ("how many people live in metro Atlanta", "cbsa", None),
])
def test_levels_without_rows_name_the_fetch(planner, question, level, states):
    plan = planner.plan(question, [])
    assert plan.declined and plan.decline_kind == "needs_fetch"
    assert plan.fetch["geographies"] == [level] and plan.fetch.get("states") == states
    assert f"--geographies {level}" in plan.assumptions[0]
    if level == "zcta":
        assert "not exactly" in plan.assumptions[0]


@pytest.mark.parametrize("question, closest", [("How many people live in Gotham City, New Jersey?", None),
                                               ("population of Pittsburgg", "Pittsburg")])
def test_a_name_no_place_has_is_declined_naming_the_closest(planner, question, closest):
    plan = planner.plan(question, [])
    assert plan.declined and "not a state, county or Census place" in plan.assumptions[0]
    if closest:
        assert closest in plan.assumptions[0]


def test_a_foreign_place_is_not_read_as_a_us_one(planner):
    plan = planner.plan("What's the population of Ontario, Canada?", [])
    assert plan.declined and "other countries" in plan.assumptions[0]


# --------------------------------------------------------------------------------------- sets of places


def test_largest_cities_of_a_state(planner, settings):
    result = run(planner.plan("What are the 5 largest cities in Ohio?", []), settings)
    expected = rows(settings, "SELECT g.name, e.estimate FROM public.estimates e JOIN public.geography g "
                    "USING (geo_id) WHERE g.level = 'place' AND g.state_abbr = 'OH' "
                    "AND e.variable_code = 'B01003_001E' ORDER BY e.estimate DESC LIMIT 5")
    assert [tuple(r) for r in result.rows] == [tuple(r) for r in expected]


def test_incorporated_only_leaves_cdps_out(planner, settings):
    plan = planner.plan("What's the smallest incorporated city or village in Vermont by population (not counting "
                        "CDPs)?", [])
    result = run(plan, settings)
    expected = rows(settings, "SELECT g.name FROM public.estimates e JOIN public.geography g USING (geo_id) WHERE "
                    "g.level = 'place' AND g.state_abbr = 'VT' AND g.place_name NOT LIKE '%%CDP%%' AND "
                    "e.variable_code = 'B01003_001E' ORDER BY e.estimate ASC LIMIT 1")
    assert [r[0] for r in result.rows] == [expected[0][0]]


def test_counting_places_over_a_line(planner, settings):
    result = run(planner.plan("How many places in Texas have more than 100,000 people?", []), settings)
    expected = rows(settings, "SELECT count(*) FROM public.estimates e JOIN public.geography g USING (geo_id) WHERE "
                    "g.level = 'place' AND g.state_abbr = 'TX' AND e.variable_code = 'B01003_001E' AND "
                    "e.estimate > 100000")
    assert result.rows == [[expected[0][0]]]


def test_places_are_not_nested_in_counties(planner):
    plan = planner.plan("largest cities in Travis County, Texas", [])
    assert plan.declined and "not nested in counties" in plan.assumptions[0]


# --------------------------------------------------------------------------------------- a place and its parent


def test_a_place_share_of_its_state(planner, settings):
    houston = place_id(settings, "Houston city", "TX")
    result = run(planner.plan("What share of Texas's population lives in the city of Houston?", []), settings)
    share = round(100 * value(settings, houston) / value(settings, "0400000US48"), 1)
    assert float(result.rows[0][-1]) == pytest.approx(float(share))


def test_how_many_more_is_one_number_with_its_margin_and_significance(planner, settings):
    """The difference of two counties' median incomes, its MOE sqrt(MOE1² + MOE2²) and the 90% test."""
    plan = planner.plan("how much higher is median household income in Williamson County than in Travis County, TX?",
                        [])
    result = run(plan, settings)
    (a, am), (b, bm) = (rows(settings, "SELECT estimate, margin_error FROM public.estimates WHERE geo_id = %s AND "
                             "variable_code = 'B19013_001E'", g)[0] for g in ("0500000US48491", TRAVIS))
    row = dict(zip(result.columns, result.rows[0], strict=True))
    assert row["difference"] == a - b
    assert float(row["difference_moe"]) == pytest.approx((float(am) ** 2 + float(bm) ** 2) ** 0.5)
    found = significance.assess(result.columns, result.rows, plan.compare)
    z = float(a - b) / ((float(am) ** 2 + float(bm) ** 2) ** 0.5 / 1.645)
    assert found.items[0]["z"] == pytest.approx(z, rel=1e-6)
    assert found.items[0]["significant"] is (abs(z) > 1.645)


def test_the_ratio_of_two_counts(planner, settings):
    villages = place_id(settings, "The Villages CDP", "FL")
    result = run(planner.plan("What's the ratio of residents to housing units in The Villages, FL?", []), settings)
    expected = round(value(settings, villages) / value(settings, villages, "B25001_001E"), 2)
    assert float(result.rows[0][-1]) == pytest.approx(float(expected))
