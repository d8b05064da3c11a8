"""The offline planner on levels read by their codes (issue 17: "a fetched level becomes answerable at once in both
planners"): census tracts, congressional districts, ZCTAs and metro areas, fetched from the fake Census API into a
database of their own, asked for by code ("ZIP 78701", "TX-21", "tract 11 in Travis County") or as a set (the
census tracts of a county, a state's districts, the metro areas), each answer checked against SQL written here.
"""

from __future__ import annotations

import pytest

from sage import agent, db
from sage.census import fetch
from sage.census.api import CensusClient
from sage.census.setup import run_setup
from sage.planner.offline.catalog import load_catalog
from sage.planner.offline.frame.frame import Query

from .conftest import make_settings
from .fake_census_api import FakeCensusApi

KEY = "fake-census-key-units"


@pytest.fixture(scope="module")
def us(tmp_path_factory):
    """A database of its own with population and median household income fetched for Texas's tracts and
    districts, and population for every ZCTA and metro area."""
    with FakeCensusApi(required_key=KEY) as api:
        s = make_settings(data_dir=tmp_path_factory.mktemp("units-db") / "pgdata", census_api_url=api.base_url,
                          census_api_key=KEY, planner="offline")
        run_setup(s)
        client = CensusClient.from_settings(s, timeout=10.0, attempts=2, backoff=0.01)
        fetch.fetch_tables(s, ["B01003", "B19013"], 2023, geographies=("tract", "cd"), states=["TX"],
                           refresh_index=False, client=client)
        fetch.fetch_tables(s, ["B01003"], 2023, geographies=("zcta", "cbsa"), refresh_index=False, client=client)
        yield s


def ask(settings, question):
    return agent.ask(question, settings, planner="offline", record=False)


def rows(settings, sql, *args):
    with db.owner(settings) as conn:
        return [list(r) for r in conn.execute(sql, args).fetchall()]


def value(settings, geo_id, code):
    return rows(settings, "SELECT estimate FROM public.estimates WHERE geo_id = %s AND variable_code = %s",
                geo_id, code)[0][0]


@pytest.mark.parametrize("question,geo_id,code", [
    ("What is the population of ZIP 78701?", "860Z200US78701", "B01003_001E"),
    ("how many people live in zip code 78701", "860Z200US78701", "B01003_001E"),
    ("median household income in TX-21", "5001800US4821", "B19013_001E"),
    ("Median household income of the 21st congressional district of Texas?", "5001800US4821", "B19013_001E"),
    ("population of census tract 11 in Travis County, Texas", "1400000US48453001100", "B01003_001E"),
])
def test_a_unit_named_by_its_code_is_answered_with_its_row(us, question, geo_id, code):
    answer = ask(us, question)
    assert answer.answered, answer.to_dict()
    cols = answer.result.columns
    assert len(answer.result.rows) == 1
    row = dict(zip(cols, answer.result.rows[0], strict=True))
    assert row["geo_id"] == geo_id
    measure_col = next(c for c in cols if c not in ("name", "geo_id") and not c.endswith("_moe"))
    assert row[measure_col] == value(us, geo_id, code)
    name = rows(us, "SELECT name FROM public.geography WHERE geo_id = %s", geo_id)[0][0]
    assert answer.standalone.endswith(name)
    if code == "B19013_001E":  # a median with a published margin shows it
        moe = rows(us, "SELECT margin_error FROM public.estimates WHERE geo_id = %s AND variable_code = %s",
                   geo_id, code)[0][0]
        assert row["median_household_income_moe"] == moe


def test_a_metro_area_named_by_its_principal_city(us):
    answer = ask(us, "What's the population of metro Atlanta?")
    assert answer.answered, answer.to_dict()
    (row,) = answer.result.rows
    assert row[0].startswith("Atlanta-") and row[0].endswith("Metro Area")
    assert row[2] == value(us, row[1], "B01003_001E")


def test_the_census_tracts_of_a_county_ranked_with_margins_and_compared(us):
    answer = ask(us, "Which 10 census tracts in Travis County have the highest median household income?")
    assert answer.answered, answer.to_dict()
    expected = rows(us, "SELECT g.name, e.estimate, e.margin_error FROM public.estimates e JOIN public.geography g "
                        "ON g.geo_id = e.geo_id WHERE g.level = 'tract' AND g.state_abbr = 'TX' AND "
                        "g.county_name = 'Travis County' AND e.variable_code = 'B19013_001E' "
                        "ORDER BY e.estimate DESC NULLS LAST LIMIT 10")
    assert [r[:3] for r in answer.result.rows] == expected
    assert answer.result.columns[-1] == "median_household_income_moe"
    assert answer.significance, "a ranking with margins is tested, neighbour by neighbour"
    assert answer.standalone == "top 10 census tracts in Travis County, TX by median household income"


def test_a_states_districts_and_the_metro_areas_as_sets(us):
    answer = ask(us, "which congressional districts in Texas have the most people?")
    assert answer.answered, answer.to_dict()
    expected = rows(us, "SELECT g.name, e.estimate FROM public.estimates e JOIN public.geography g ON g.geo_id = "
                        "e.geo_id WHERE g.level = 'cd' AND g.state_abbr = 'TX' AND e.variable_code = 'B01003_001E' "
                        "ORDER BY e.estimate DESC LIMIT 10")
    assert [r[:2] for r in answer.result.rows] == expected
    answer = ask(us, "top 5 metro areas by population")
    expected = rows(us, "SELECT g.name, e.estimate FROM public.estimates e JOIN public.geography g ON g.geo_id = "
                        "e.geo_id WHERE g.level = 'cbsa' AND e.variable_code = 'B01003_001E' "
                        "ORDER BY e.estimate DESC LIMIT 5")
    assert [r[:2] for r in answer.result.rows] == expected


@pytest.mark.parametrize("question,why", [
    ("population of the Springfield metro area", "no such"),
    ("What is the population of ZIP 99999?", "not in the data"),
    ("median household income of tract 9999 in Travis County TX", "no census tract 9999"),
    ("population of tract 11", "name the county"),
    ("How has the population of ZIP 78701 changed since 2014-2018?", "change"),
    ("Which metro areas in Texas have the most people?", "cross state lines"),
])
def test_what_the_reader_cannot_place_or_answer_is_declined(us, question, why):
    answer = ask(us, question)
    assert answer.declined and why in answer.decline, answer.to_dict()


def test_a_measure_not_fetched_for_the_level_names_its_fetch(us):
    answer = ask(us, "median household income of ZIP 78701")
    assert answer.declined and answer.decline_kind == "needs_fetch", answer.to_dict()
    assert answer.fetch == {"tables": ["B19013"], "vintage": 2023, "geographies": ["zcta"]}


def test_a_unit_frame_survives_the_question_log(us):
    answer = ask(us, "median household income in TX-21 and TX-10")
    assert answer.answered and len(answer.result.rows) == 2
    cat = load_catalog(us)
    frame = Query.from_dict(answer.frame, cat)
    assert [u.geo_id for u in frame.geo.units] == ["5001800US4821", "5001800US4810"]
    assert Query.from_dict(frame.to_dict(), cat) == frame


def test_follow_ups_name_another_unit_by_its_code(us):
    first = ask(us, "median household income in TX-21")
    second = agent.ask("and population?", us, planner="offline", record=False, context=[first.as_prior()])
    assert second.answered and second.result.rows[0][1] == "5001800US4821"
    assert second.result.rows[0][2] == value(us, "5001800US4821", "B01003_001E")
    third = agent.ask("what about TX-10?", us, planner="offline", record=False,
                      context=[first.as_prior(), second.as_prior()])
    assert third.answered, third.to_dict()
    assert third.assumptions[0] == ("Read as: population, Congressional District 10 (118th Congress), Texas "
                                   "(edit: swap places “TX 10”).")
    assert [r[1] for r in third.result.rows] == ["5001800US4810"]  # not Texas: "TX-10" is a district
    both = agent.ask("and TX-21 too?", us, planner="offline", record=False,
                     context=[first.as_prior(), second.as_prior(), third.as_prior()])
    assert both.answered and sorted(r[1] for r in both.result.rows) == ["5001800US4810", "5001800US4821"]
    later = agent.ask("how has that changed since 2014-2018 in TX-10?", us, planner="offline", record=False,
                      context=[third.as_prior()])
    assert later.declined and "latest period" in later.decline


def test_a_follow_up_naming_a_level_that_is_not_loaded_names_its_fetch(settings):
    first = agent.ask("median household income in Travis County TX", settings, planner="offline", record=False)
    answer = agent.ask("what about TX-21?", settings, planner="offline", record=False, context=[first.as_prior()])
    assert answer.declined and answer.decline_kind == "needs_fetch", answer.to_dict()
    assert answer.fetch == {"tables": ["B19013"], "vintage": 2023, "geographies": ["cd"], "states": ["TX"]}
