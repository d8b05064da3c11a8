"""Change questions end to end (issue 14) on the real session database with the shipped 2014-2018 data: the offline
planner's SQL run through the guard and the executor, and every figure checked against the handbook's formulas
computed here in Python from the raw estimates (acs-statistics.md: CPI-U-RS dollars, MOE of a difference
sqrt(MOE1² + MOE2²), of a percent change [H20] formula 8, significance |Z| > 1.645 with SE = MOE / 1.645).

Nothing expected is typed in: the inputs are read from public.estimates_by_vintage and public.cpi_u_rs."""

from __future__ import annotations

import math

import pytest

from sage import agent

from .planning import rows, run

TRAVIS, HARRIS, COOK = "0500000US48453", "0500000US48201", "0500000US17031"
INCOME = "B19013_001E"


def at(settings, geo_id, code, vintage):
    """(estimate, margin) of a variable for a place in one period."""
    est, moe = rows(settings, "SELECT estimate, margin_error FROM public.estimates_by_vintage WHERE geo_id = %s AND "
                    "variable_code = %s AND vintage = %s", geo_id, code, vintage)[0]
    return float(est), (None if moe is None else float(moe))


def cpi_factor(settings):
    idx = dict(rows(settings, "SELECT year, index FROM public.cpi_u_rs WHERE year IN (2018, 2023)"))
    return float(idx[2023]) / float(idx[2018])


def hand_change(settings, geo_id, code, real=True):
    """The handbook's change of a place between 2014-2018 and 2019-2023: (earlier in later dollars, later, change,
    its MOE, percent change, Z)."""
    (x1, m1), (x2, m2) = at(settings, geo_id, code, "2014-2018"), at(settings, geo_id, code, "2019-2023")
    f = cpi_factor(settings) if real else 1.0
    x1, m1 = x1 * f, (m1 * f if m1 is not None else None)
    change = x2 - x1
    moe = math.sqrt(m1 ** 2 + m2 ** 2) if m1 is not None and m2 is not None else None
    z = change / (moe / 1.645) if moe else None
    return x1, x2, change, moe, 100 * change / x1, z


def by_name(result):
    return [dict(zip(result.columns, row, strict=True)) for row in result.rows]


@pytest.mark.parametrize("question, geo_id, real", [
    ("Adjusted for inflation, how did median household income in Travis County, Texas change between 2014-2018 "
     "and 2019-2023?", TRAVIS, True),
    ("harris county tx median household income - did it go up in today's dollars compared with five years earlier?",
     HARRIS, True),
    ("Not adjusting for inflation, how much did Cook County, Illinois' median household income rise from 2014-2018 "
     "to 2019-2023?", COOK, False),
])
def test_a_change_in_dollars_with_its_margin_and_test(planner, settings, question, geo_id, real):
    plan = planner.plan(question, [])
    row = by_name(run(plan, settings))[0]
    x1, x2, change, moe, pct, z = hand_change(settings, geo_id, INCOME, real)
    assert float(row["median_household_income_2014_2018"]) == pytest.approx(round(x1), abs=1)
    assert float(row["change"]) == pytest.approx(change, rel=1e-9)
    assert float(row["change_moe"]) == pytest.approx(moe, rel=1e-9)
    assert float(row["pct_change"]) == pytest.approx(round(pct, 1), abs=0.051)
    assert plan.compare == "change" and plan.periods == ("2014-2018", "2019-2023")
    said = " ".join(plan.assumptions)
    assert ("CPI-U-RS" in said) is real and ("not adjusted for inflation" in said) is (not real)
    answer = agent.ask(question, settings, planner="offline")
    (item,) = answer.significance
    assert item["z"] == pytest.approx(z, rel=1e-6) and item["significant"] is (abs(z) > 1.645)


def test_a_count_change_without_margins_says_significance_cannot_be_assessed(settings):
    answer = agent.ask("How many housing units has Maricopa County, Arizona added since 2014-2018?", settings,
                       planner="offline")
    row = dict(zip(answer.result.columns, answer.result.rows[0], strict=True))
    x1, x2, change, *_ = hand_change(settings, "0500000US04013", "B25001_001E", real=False)
    assert float(row["change"]) == change and float(row["pct_change"]) == pytest.approx(round(100 * change / x1, 1))
    assert answer.significance[0]["significant"] is None and answer.significance_note


def test_the_us_total_change_is_the_sum_of_the_states(planner, settings):
    result = run(planner.plan("By how much did the US population grow from the 2014-2018 ACS to the 2019-2023 ACS?",
                              []), settings)
    totals = dict(rows(settings, "SELECT b.vintage, SUM(b.estimate) FROM public.estimates_by_vintage b JOIN "
                       "public.geography g USING (geo_id) WHERE g.level = 'state' AND g.state_abbr <> 'PR' AND "
                       "b.variable_code = 'B01003_001E' GROUP BY 1"))
    row = by_name(result)[0]
    assert float(row["change"]) == float(totals["2019-2023"] - totals["2014-2018"])


def test_counties_ranked_by_percent_growth(planner, settings):
    result = run(planner.plan("Fastest growing counties in Florida by percent, top 3, comparing the 2014-2018 and "
                              "2019-2023 surveys", []), settings)
    pcts = rows(settings, "SELECT a.geo_id, 100.0 * (b.estimate - a.estimate) / a.estimate FROM "
                "public.estimates_by_vintage a JOIN public.estimates_by_vintage b ON b.geo_id = a.geo_id AND "
                "b.variable_code = a.variable_code AND b.vintage = '2019-2023' JOIN public.geography g ON "
                "g.geo_id = a.geo_id WHERE a.vintage = '2014-2018' AND a.variable_code = 'B01003_001E' AND "
                "g.level = 'county' AND g.state_abbr = 'FL' ORDER BY 2 DESC LIMIT 3")
    assert [float(r["pct_change"]) for r in by_name(result)] == [round(float(p), 1) for _, p in pcts]


def test_counting_the_counties_that_lost_people(planner, settings):
    result = run(planner.plan("how many illinois counties lost people between the 2014-2018 and 2019-2023 "
                              "census surveys?", []), settings)
    n = rows(settings, "SELECT count(*) FROM public.estimates_by_vintage a JOIN public.estimates_by_vintage b ON "
             "b.geo_id = a.geo_id AND b.variable_code = a.variable_code AND b.vintage = '2019-2023' JOIN "
             "public.geography g ON g.geo_id = a.geo_id WHERE a.vintage = '2014-2018' AND a.variable_code = "
             "'B01003_001E' AND g.level = 'county' AND g.state_abbr = 'IL' AND b.estimate < a.estimate")[0][0]
    assert result.rows == [[n]]


def test_significant_increases_only(planner, settings):
    result = run(planner.plan("Which New Hampshire counties had a statistically significant increase in real "
                              "median household income between 2014-2018 and 2019-2023?", []), settings)
    ids = [r[0] for r in rows(settings, "SELECT geo_id FROM public.geography WHERE level = 'county' AND "
                              "state_abbr = 'NH'")]
    expected = {rows(settings, "SELECT county_name FROM public.geography WHERE geo_id = %s", g)[0][0]
                for g in ids if (hand_change(settings, g, INCOME)[5] or 0) > 1.645}
    assert {r["county_name"] for r in by_name(result)} == expected and expected


@pytest.mark.parametrize("question, says, kind", [
    ("How did median household income in Wake County, NC change between the 2018-2022 and 2019-2023 ACS?",
     "overlap", "declined"),
    ("What was Nevada's unemployment rate in 2020?", "--vintage 2020", "needs_fetch"),
    ("how many ppl did harris county texas add last year??", "1-year", "declined"),
    ("Has Maricopa County's median age gone up over the last five years?", "--vintage 2018", "needs_fetch"),
    ("Did Fairfield County, Connecticut gain or lose people between 2014-2018 and 2019-2023?", "planning regions",
     "declined"),
    ("How has Nevada's population changed since the 2010 census?", "decennial", "declined"),
    ("How much has Austin, Texas grown since 2014-2018?", "--geographies place", "needs_fetch"),
    ("If Idaho keeps growing at the same pace, what will its population be in 2030?", "forecast", "declined"),
])
def test_what_cannot_be_compared_is_explained(planner, question, says, kind):
    plan = planner.plan(question, [])
    assert plan.declined and plan.decline_kind == kind and says in plan.assumptions[0], plan.assumptions[0]
    for suggestion in plan.suggestions:
        assert not planner.plan(suggestion, []).declined, suggestion


def test_an_earlier_period_alone(planner, settings):
    result = run(planner.plan("population of Texas in 2014-2018", []), settings)
    assert float(result.rows[0][-1]) == at(settings, "0400000US48", "B01003_001E", "2014-2018")[0]


def test_a_change_frame_survives_the_query_log(planner):
    from sage.planner.offline.catalog import load_catalog
    from sage.planner.offline.frame.frame import Query

    plan = planner.plan("Which 5 Texas counties added the most people between 2014-2018 and 2019-2023?", [])
    again = Query.from_dict(plan.frame, load_catalog(planner.settings))
    assert again.to_dict() == plan.frame and again.change is not None and again.periods == plan.periods
