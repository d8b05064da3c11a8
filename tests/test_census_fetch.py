"""The Census data pipeline (issue 8): the API client, the fetch + load, the catalog browse, against a fake API.

The fake (``tests/fake_census_api.py``) is real HTTP on 127.0.0.1 with the real response format, built from the
shipped extract; expectations are computed from what the fake serves and from ``data/acs/``, never typed in.
Database tests run on their own set-up database (module fixture), because fetching replaces tables of the shared
session database.
"""

from __future__ import annotations

import csv
import gzip
import logging
import socket
from decimal import Decimal

import pytest

from sage import agent, db
from sage.census import fetch, fetch_rules
from sage.census.api import CensusClient
from sage.census.api_values import SPECIAL_VALUES, is_special, parse_margin, parse_value
from sage.census.catalog_search import search_tables
from sage.census.setup import run_setup
from sage.errors import CensusApiError
from sage.settings import PROJECT_ROOT
from sage.status import loaded_tables

from .conftest import make_settings
from .fake_census_api import FakeCensusApi

DATA = PROJECT_ROOT / "data"
ACS = DATA / "acs"
KEY = "fake-key-0123456789"
#: small delays so retry tests are quick
FAST = dict(timeout=5.0, attempts=3, backoff=0.01, max_backoff=0.05)


def _csv(name: str, directory=ACS) -> list[dict]:
    path = directory / name
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


GEOGRAPHY = _csv("geography.csv")
N_STATES = sum(1 for g in GEOGRAPHY if g["level"] == "state")
N_COUNTIES = sum(1 for g in GEOGRAPHY if g["level"] == "county")


@pytest.fixture(scope="module")
def fake():
    with FakeCensusApi(required_key=KEY) as server:
        yield server


@pytest.fixture(autouse=True)
def _reset_fake(request):
    yield
    if "fake" in request.fixturenames:
        request.getfixturevalue("fake").clear()


def client(fake, key=KEY, **kw) -> CensusClient:
    return CensusClient(fake.base_url, key, **{**FAST, **kw})


# ------------------------------------------------------------------------------------------------ pure rules


def test_category_for_agrees_with_the_catalog_and_the_shipped_variables():
    catalog = _csv("variables_catalog_acs2023_5yr.csv.gz")
    by_table = {r["table_id"]: r["category"] for r in catalog + _csv("variables.csv")}
    wrong = {t: (c, fetch_rules.category_for(t)) for t, c in by_table.items() if fetch_rules.category_for(t) != c}
    assert wrong == {}
    assert len(set(by_table.values())) == 8  # the eight categories all occur


def test_category_for_follows_source_md_prefix_rules():
    assert fetch_rules.category_for("B08301") == "transportation"
    assert fetch_rules.category_for("B18135") == "health_insurance"
    assert fetch_rules.category_for("B18101") == "demographics"
    assert fetch_rules.category_for("B28011") == "demographics"
    assert fetch_rules.category_for("C24010") == "employment"
    assert fetch_rules.category_for("b22010") == "poverty"


def test_vintage_and_source_labels():
    assert fetch_rules.vintage_label(2023) == "2019-2023"
    assert fetch_rules.vintage_label(2022) == "2018-2022"
    assert fetch_rules.source_label(2023) == "census-api:2023/acs/acs5"
    assert fetch_rules.fetch_command(["B25003", "B08301"], 2022) == (
        "python -m sage census fetch --vintage 2022 --tables B25003,B08301"
    )


@pytest.mark.parametrize("code", sorted(SPECIAL_VALUES))
def test_every_special_value_is_null(code):
    assert parse_value(str(code)) is None
    assert parse_value(f"{code}.0") is None
    assert is_special(str(code))


def test_margins_of_controlled_totals_are_zero_and_uncomputable_ones_null():
    assert parse_margin("-555555555") == Decimal(0) and parse_margin("-555555555.0") == Decimal(0)
    assert parse_margin("-222222222") is None and parse_margin("-333333333") is None
    assert parse_margin("-999999999") is None and parse_margin("-888888888") is None
    assert parse_margin("1234") == Decimal(1234) and parse_margin(None) is None and parse_margin("*****") is None


def test_label_key_ignores_only_what_is_not_a_change():
    assert fetch_rules.label_key("Estimate!!Total:!!Male:") == fetch_rules.label_key("Estimate!!Total!!Male")
    assert fetch_rules.label_key("Estimate!!Median household income in the past 12 months (in 2023 inflation-adjusted "
                                 "dollars)") == fetch_rules.label_key("Estimate!!Median household income in the past "
                                                                      "12 months (in 2018 Inflation-adjusted dollars)")
    assert fetch_rules.label_key("Estimate!!Total:!!Worked from home") != fetch_rules.label_key(
        "Estimate!!Total!!Worked at home")


def test_fetch_command_names_levels_and_states():
    assert fetch_rules.fetch_command(["B19013"], 2023, geographies=["place"]) == (
        "python -m sage census fetch --vintage 2023 --tables B19013 --geographies place")
    assert fetch_rules.fetch_command(["B19013"], 2023, geographies=["state", "county"]) == (
        "python -m sage census fetch --vintage 2023 --tables B19013")
    assert fetch_rules.fetch_command(["B19013"], 2018, geographies=["tract"], states=["TX"]) == (
        "python -m sage census fetch --vintage 2018 --tables B19013 --geographies tract --states TX")


def test_ordinary_values_parse():
    assert parse_value("59285") == Decimal("59285")
    assert parse_value("0.4500") == Decimal("0.4500")
    assert parse_value("-5") == Decimal("-5")
    assert parse_value(None) is None
    assert parse_value("") is None
    assert parse_value("*****") is None
    assert not is_special("-5") and not is_special(None)


def test_resolve_tables_and_presets():
    assert fetch_rules.resolve_tables(" b25003, B08301 ,b25003") == ["B25003", "B08301"]
    assert fetch_rules.resolve_tables(["B19013A"]) == ["B19013A"]
    core = fetch_rules.resolve_tables(preset="core")
    assert core == fetch_rules.PRESETS["core"] and len(core) == len(set(core)) == 21
    catalog_tables = {r["table_id"] for r in _csv("variables_catalog_acs2023_5yr.csv.gz")}
    assert set(core) <= catalog_tables
    for bad in ("S1901", "B2500", "DROP TABLE"):
        with pytest.raises(CensusApiError) as err:
            fetch_rules.resolve_tables(bad)
        assert err.value.kind == "invalid_argument" and "census tables --search" in err.value.message
    with pytest.raises(CensusApiError):
        fetch_rules.resolve_tables(preset="everything")


def test_search_tables_finds_topics_offline():
    s = make_settings()
    hits = search_tables(s, "tenure", limit=5)
    assert hits[0]["table_id"] == "B25003"
    assert set(hits[0]) >= {"table_id", "concept", "universe", "variables", "category"}
    assert hits[0]["variables"] == sum(1 for r in _csv("variables_catalog_acs2023_5yr.csv.gz")
                                       if r["table_id"] == "B25003")
    assert [h["table_id"] for h in search_tables(s, "travel time to work", limit=3)][0] == "B08303"
    assert search_tables(s, "B08301")[0]["table_id"] == "B08301"
    prefix = [h["table_id"] for h in search_tables(s, "B19", limit=10)]
    assert prefix == sorted(prefix) and all(t.startswith("B19") for t in prefix)
    assert len(search_tables(s, None, limit=7)) == 7
    assert search_tables(s, "qwxzyq") == []


# ------------------------------------------------------------------------------------------------ the client


def test_data_has_the_api_format(fake):
    c = client(fake)
    body = c.data(2023, ["B19013_001E", "B19013_001M"], "county")
    assert body[0] == ["B19013_001E", "B19013_001M", "state", "county"]
    assert len(body) - 1 == N_COUNTIES
    assert all(isinstance(v, str) for row in body[1:] for v in row)
    states = c.data(2023, ["B01003_001E", "B01003_001M"], "state")
    assert states[0][-1] == "state" and len(states) - 1 == N_STATES
    assert {r[2] for r in states[1:]} >= {"11", "72"}  # DC and Puerto Rico
    data_requests = fake.data_requests()
    assert data_requests and all(r["key_sent"] for r in data_requests)
    assert data_requests[-1]["params"]["for"] == "state:*"
    assert data_requests[0]["params"] == {"get": "B19013_001E,B19013_001M", "for": "county:*", "in": "state:*"}


def test_fake_group_call_and_limits(fake):
    c = client(fake)
    body = c.request_json("2023/acs/acs5", {"get": "NAME,group(B19013)", "for": "state:44"}, what="t",
                          with_key=True)
    assert body[0] == ["NAME", "B19013_001E", "B19013_001EA", "B19013_001M", "B19013_001MA", "GEO_ID", "NAME",
                       "state"]
    assert body[1][5] == "0400000US44" and body[1][-1] == "44"
    with pytest.raises(CensusApiError) as err:
        c.request_json("2023/acs/acs5", {"get": ",".join(f"B01001_{i:03d}E" for i in range(1, 50)) + ",NAME,GEO_ID",
                                         "for": "state:*"}, what="t", with_key=True)
    assert err.value.kind == "too_many_variables"
    with pytest.raises(CensusApiError) as err:
        c.data(2023, ["B19013_999E"], "state")
    assert err.value.kind == "unknown_variable" and "B19013_999E" in err.value.message
    with pytest.raises(ValueError):
        c.data(2023, [f"B01001_{i:03d}E" for i in range(1, 52)], "state")


ITEMS = ["GEO_ID", "NAME", "B01003_001E", "B01003_001M"]


def test_fake_serves_every_level_in_the_api_format(fake):
    c = client(fake)
    nation = c.data(2023, ITEMS, "nation")
    assert nation[0] == ITEMS + ["us"] and [r[:2] + r[-1:] for r in nation[1:]] == [["0100000US", "United States",
                                                                                      "1"]]
    assert fake.data_requests()[-1]["params"]["for"] == "us:1"

    ri = c.data(2023, ITEMS, "place", ["44"])
    assert ri[0] == ITEMS + ["state", "place"] and len(ri) > 2
    assert all(r[0] == f"1600000US{r[-2]}{r[-1]}" and r[1].endswith(", Rhode Island") for r in ri[1:])
    assert fake.data_requests()[-1]["params"] == {"get": ",".join(ITEMS), "for": "place:*", "in": "state:44"}
    every = {r[0]: r for r in c.data(2023, ITEMS, "place")[1:]}  # in=state:* (as the shipped extract was made)
    assert len(every) == 32325 and every["1600000US4805000"][1:3] == ["Austin city, Texas", "967862"]

    cbsa = c.data(2023, ITEMS, "cbsa")
    assert cbsa[0][-1] == "metropolitan statistical area/micropolitan statistical area"
    austin = next(r for r in cbsa[1:] if r[-1] == "12420")
    assert austin[:2] == ["310M700US12420", "Austin-Round Rock-San Marcos, TX Metro Area"]
    assert fake.data_requests()[-1]["params"]["for"] == "metropolitan statistical area/micropolitan statistical area:*"
    assert next(r for r in c.data(2018, ITEMS, "cbsa")[1:] if r[-1] == "12420")[0] == "310M400US12420"

    cd = c.data(2023, ITEMS, "cd", ["48"])
    assert cd[0][-2:] == ["state", "congressional district"]
    assert all(r[0] == f"5001800US48{r[-1]}" and r[1].endswith(" (118th Congress), Texas") for r in cd[1:])
    assert all(r[0].startswith("5001600US48") and "116th" in r[1] for r in c.data(2018, ITEMS, "cd", ["48"])[1:])

    tracts = c.data(2023, ITEMS, "tract", ["48"])
    assert tracts[0][-3:] == ["state", "county", "tract"]
    travis = next(r for r in tracts[1:] if r[0] == "1400000US48453001100")
    assert travis[1] == "Census Tract 11; Travis County; Texas" and travis[-3:] == ["48", "453", "001100"]
    assert fake.data_requests()[-1]["params"]["in"] == "state:48"

    zcta = {r[0]: r for r in c.data(2023, ITEMS, "zcta")[1:]}
    assert zcta["860Z200US78701"][1] == "ZCTA5 78701" and zcta["860Z200US78701"][-1] == "78701"
    assert "8600000US78701" in {r[0] for r in c.data(2019, ITEMS, "zcta")[1:]}

    # a valid geography with no place: 204; an unknown level or hierarchy: the API's 400 (sic "heirarchy")
    with pytest.raises(CensusApiError) as err:
        c.data(2023, ITEMS, "place", ["99"])
    assert err.value.kind == "empty"
    for params in ({"for": "tract:*", "in": "state:*"}, {"for": "tract:*"}, {"for": "region:*"},
                   {"for": "zip code tabulation area:*", "in": "state:48"}, {"for": "state:*", "in": "state:48"}):
        with pytest.raises(CensusApiError) as err:
            c.request_json("2023/acs/acs5", {"get": "NAME", **params}, what="t", with_key=True)
        assert err.value.kind == "bad_geography" and "heirarchy" in err.value.message, params
    with pytest.raises(ValueError):
        c.data(2023, ITEMS, "tract")  # tracts are asked one state at a time
    with pytest.raises(ValueError):
        c.data(2023, ITEMS, "zcta", ["48"])


def test_other_vintages_carry_other_labels(fake):
    c = client(fake)
    median = {v.code: v.label for v in c.table_meta(2018, "B19013").variables}
    assert median["B19013_001E"].endswith("(in 2018 inflation-adjusted dollars)")
    means = {v.code: v.label for v in c.table_meta(2018, "B08301").variables}
    assert means["B08301_021E"] == "Estimate!!Total!!Worked at home"
    assert {v.code: v.label for v in c.table_meta(2023, "B08301").variables}["B08301_021E"] == (
        "Estimate!!Total:!!Worked from home")


def test_table_meta_keeps_only_the_table_own_lines(fake):
    meta = client(fake).table_meta(2023, "B25003")
    catalog = [r for r in _csv("variables_catalog_acs2023_5yr.csv.gz") if r["table_id"] == "B25003"]
    assert [v.code for v in meta.variables] == [r["code"] for r in catalog]  # not B25003A..I, not M/EA/MA
    assert [v.label for v in meta.variables] == [r["label"] for r in catalog]
    assert meta.concept == catalog[0]["concept"] and meta.universe == catalog[0]["universe"]


def test_group_list_universes_despite_the_trailing_space_key(fake):
    universes = client(fake).group_universes(2023)
    catalog = {r["table_id"]: r["universe"] for r in _csv("variables_catalog_acs2023_5yr.csv.gz")}
    assert universes["B25003"]["universe"] == catalog["B25003"]
    assert set(universes) == set(catalog)


def test_500_then_success_is_retried(fake):
    c = client(fake)
    fake.fail("status", times=2, status=500, match="get=")
    body = c.data(2023, ["B25003_001E"], "state")
    assert len(body) - 1 == N_STATES
    assert c.retries == 2 and c.requests == 3


def test_429_honours_retry_after_up_to_the_cap(fake):
    delays = []
    c = client(fake, sleep=delays.append, backoff=0.01, max_backoff=0.5)
    fake.fail("status", times=1, status=429, retry_after="0.3", match="get=")
    c.data(2023, ["B25003_001E"], "state")
    assert delays == [0.3]
    fake.fail("status", times=1, status=429, retry_after="120", match="get=")
    c.data(2023, ["B25003_001E"], "state")
    assert delays[-1] == 0.5


def test_persistent_5xx_gives_up_with_a_clear_error(fake):
    c = client(fake)
    fake.fail("status", times=10, status=503, match="get=")
    with pytest.raises(CensusApiError) as err:
        c.data(2023, ["B25003_001E"], "state")
    assert err.value.kind == "unavailable"
    assert "HTTP 503" in err.value.message and "3 tries" in err.value.message
    assert c.requests == 3


def test_time_out_then_success(fake):
    c = client(fake, timeout=0.4)
    fake.fail("timeout", times=1, delay=1.5, match="get=")
    body = c.data(2023, ["B25003_001E"], "state")
    assert len(body) - 1 == N_STATES and c.retries == 1


def test_time_outs_exhaust_retries(fake):
    c = client(fake, timeout=0.3, attempts=2)
    fake.fail("timeout", times=5, delay=1.0, match="get=")
    with pytest.raises(CensusApiError) as err:
        c.data(2023, ["B25003_001E"], "state")
    assert err.value.kind == "timeout" and "did not answer" in err.value.message


def test_dropped_connection_is_retried(fake):
    c = client(fake)
    fake.fail("drop", times=1, match="get=")
    assert len(c.data(2023, ["B25003_001E"], "state")) - 1 == N_STATES
    assert c.retries == 1


def test_204_is_a_clear_error_and_not_retried(fake):
    c = client(fake)
    fake.fail("empty", times=1, match="get=")
    with pytest.raises(CensusApiError) as err:
        c.data(2023, ["B25003_001E"], "county")
    assert err.value.kind == "empty" and "no rows" in err.value.message
    assert c.requests == 1


def test_invalid_key_redirect_is_bad_key_with_how_to_fix(fake, caplog):
    caplog.set_level(logging.DEBUG)
    wrong = "wrong-key-987"
    c = client(fake, key=wrong)
    with pytest.raises(CensusApiError) as err:
        c.data(2023, ["B25003_001E"], "state")
    exc = err.value
    assert exc.kind == "bad_key"
    assert "CENSUS_API_KEY" in exc.message and "key_signup" in exc.message
    assert c.requests == 1  # not retried, and the redirect was not followed
    assert [r["path"] for r in fake.log] == ["/data/2023/acs/acs5"]
    for text in (exc.message, exc.detail or "", repr(exc), caplog.text, repr(c)):
        assert wrong not in text
    assert exc.__cause__ is None and exc.__suppress_context__


def test_missing_key_is_its_own_error(fake):
    with pytest.raises(CensusApiError) as err:
        client(fake, key=None).data(2023, ["B25003_001E"], "state")
    assert err.value.kind == "missing_key" and "CENSUS_API_KEY" in err.value.message


def test_invalid_key_page_served_with_200_is_bad_key(fake):
    fake.fail("invalid_key_page", times=1, match="get=")
    with pytest.raises(CensusApiError) as err:
        client(fake).data(2023, ["B25003_001E"], "state")
    assert err.value.kind == "bad_key"


def test_non_json_answer_is_a_clear_error(fake):
    fake.fail("garbage", times=1, match="get=")
    with pytest.raises(CensusApiError) as err:
        client(fake).data(2023, ["B25003_001E"], "state")
    assert err.value.kind == "bad_response"


def test_unknown_vintage_and_table(fake):
    c = client(fake)
    with pytest.raises(CensusApiError) as err:
        c.table_meta(2030, "B25003")
    assert err.value.kind == "not_found"
    with pytest.raises(CensusApiError) as err:
        c.table_meta(2023, "B99999")
    assert err.value.kind == "not_found" and "census tables --search" in err.value.message


def test_network_down_is_a_clear_error_without_retries():
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    c = CensusClient(f"http://127.0.0.1:{port}/data", KEY, **FAST)
    with pytest.raises(CensusApiError) as err:
        c.data(2023, ["B25003_001E"], "state")
    assert err.value.kind == "network" and "Could not reach" in err.value.message
    assert c.requests == 1 and KEY not in err.value.message + (err.value.detail or "")


# ------------------------------------------------------------------------------------------------ fetch + load


@pytest.fixture(scope="module")
def db_settings(tmp_path_factory):
    """A set-up database of our own: fetching replaces tables, which the shared session database must not see."""
    s = make_settings(data_dir=tmp_path_factory.mktemp("fetch-db") / "pgdata")
    run_setup(s)
    return s


@pytest.fixture
def fs(db_settings, fake):
    """Settings pointing at the fake API with the right key."""
    return db_settings.replace(census_api_url=fake.base_url, census_api_key=KEY)


def run_fetch(settings, tables, year=2023, **kw):
    kw.setdefault("refresh_index", False)
    return fetch.fetch_tables(settings, tables, year, client=CensusClient.from_settings(settings, **FAST), **kw)


def table_rows(settings, table_id, vintage=None, level=None) -> dict[tuple[str, str], tuple]:
    """The table's rows in public.estimates (the latest period), or of one period in public.estimates_by_vintage;
    optionally of one geography level."""
    source = "public.estimates" if vintage is None else "public.estimates_by_vintage"
    with db.owner(settings) as conn:
        rows = conn.execute(
            f"""SELECT e.geo_id, e.variable_code, e.estimate, e.margin_error, e.source
               FROM {source} e JOIN public.variables v USING (variable_code) JOIN public.geography g USING (geo_id)
               WHERE v.table_id = %s AND (%s::text IS NULL OR e.vintage = %s) AND (%s::text IS NULL OR g.level = %s)""",
            (table_id, vintage, vintage, level, level),
        ).fetchall()
    return {(r[0], r[1]): r[2:] for r in rows}


def snapshot(settings) -> dict:
    """Everything a fetch may touch: the census tables and the geography (as checksums) and the bookkeeping."""
    with db.owner(settings) as conn:
        return {
            "estimates": conn.execute(
                "SELECT count(*), md5(string_agg(geo_id || variable_code || vintage || coalesce(estimate::text, '-') "
                "|| coalesce(margin_error::text, '-') || source, ',' ORDER BY geo_id, variable_code, vintage)) "
                "FROM public.estimates_by_vintage"
            ).fetchone(),
            "variables": conn.execute(
                "SELECT count(*), md5(string_agg(v::text, ',' ORDER BY variable_code)) FROM public.variables v"
            ).fetchone(),
            "geography": conn.execute(
                "SELECT count(*), md5(string_agg(g::text, ',' ORDER BY geo_id)) FROM public.geography g"
            ).fetchone(),
            "census_tables": conn.execute("SELECT * FROM sage.census_tables ORDER BY table_id, vintage").fetchall(),
        }


def served(fake, year, table_id, levels, states=None) -> dict[tuple[str, str], tuple[str, str]]:
    """What the fake serves for a table at some levels (in some states): {(geo_id, code): (estimate, margin)}."""
    out = {}
    for level in levels:
        places = {p.geo_id: p for p in fake.data.level_places(level, year)}
        for geo, cells in fake.values(year, table_id, level).items():
            if states and places[geo].state is not None and places[geo].state not in states:
                continue
            out.update({(geo, code): em for code, em in cells.items()})
    return out


def test_fetch_two_tables_loads_estimates_margins_and_nulls(fs, fake):
    shipped = {(r["geo_id"], r["variable_code"]): r for r in _csv("estimates.csv.gz")
               if r["variable_code"].startswith("B19013_")}
    report = run_fetch(fs, ["B19013", "B25003"])
    by_table = {t.table_id: t for t in report.tables}
    assert list(by_table) == ["B19013", "B25003"]

    # B19013: the real county estimates and margins of the extract, NULL where the API sends a special value
    served = {**fake.values(2023, "B19013", "county"), **fake.values(2023, "B19013", "state")}
    specials_e = sum(is_special(c[0]) for cells in served.values() for c in cells.values())
    specials_m = sum(is_special(c[1]) for cells in served.values() for c in cells.values())
    t = by_table["B19013"]
    assert (t.states, t.counties, t.variables, t.rows) == (N_STATES, N_COUNTIES, 1, N_STATES + N_COUNTIES)
    assert t.levels == {"state": N_STATES, "county": N_COUNTIES} and t.geography_added == 0
    assert t.null_estimates == specials_e > 0 and t.null_margins == specials_m
    # only the shipped 2019-2023 rows were replaced: the shipped 2014-2018 ones stay beside them
    assert t.previous_source == "shipped" and t.replaced_rows == len(shipped)
    assert t.vintages == ["2014-2018", "2019-2023"] and t.latest == "2019-2023" and t.labels_changed == []
    rows = table_rows(fs, "B19013")
    assert len(rows) == t.rows
    for key, r in shipped.items():
        assert rows[key][0] == Decimal(r["estimate"])
        if r["margin_error"]:
            assert rows[key][1] == Decimal(r["margin_error"])
    nulls = [k for k, v in rows.items() if v[0] is None]
    assert len(nulls) == specials_e and not set(nulls) & set(shipped)  # exactly the counties the extract omits
    assert {v[2] for v in rows.values()} == {"census-api:2023/acs/acs5"}

    # B25003: every line, every place, with margins; owner + renter = total in every row
    t = by_table["B25003"]
    assert (t.variables, t.rows, t.null_estimates, t.null_margins) == (3, 3 * (N_STATES + N_COUNTIES), 0, 0)
    rows = table_rows(fs, "B25003")
    served = {**fake.values(2023, "B25003", "county"), **fake.values(2023, "B25003", "state")}
    assert {k: (v[0], v[1]) for k, v in rows.items()} == {
        (geo, code): (Decimal(e), Decimal(m)) for geo, cells in served.items() for code, (e, m) in cells.items()
    }
    with db.owner(fs) as conn:
        bad = conn.execute(
            """SELECT count(*) FROM (SELECT geo_id,
                 sum(estimate) FILTER (WHERE variable_code = 'B25003_001E') AS total,
                 sum(estimate) FILTER (WHERE variable_code IN ('B25003_002E', 'B25003_003E')) AS parts
               FROM public.estimates WHERE variable_code LIKE 'B25003\\_%' GROUP BY geo_id) s
               WHERE total <> parts"""
        ).fetchone()[0]
        assert bad == 0
        variables = conn.execute(
            "SELECT variable_code, label, concept, category, universe, vintage FROM public.variables "
            "WHERE table_id = 'B25003' ORDER BY 1"
        ).fetchall()
        book = conn.execute(
            "SELECT table_id, vintage, source, variables, rows FROM sage.census_tables "
            "WHERE table_id IN ('B19013', 'B25003') ORDER BY 1, 2"
        ).fetchall()
        negative = conn.execute(
            "SELECT count(*) FROM public.estimates WHERE estimate <= -222222222 OR margin_error < 0"
        ).fetchone()[0]
    catalog = [r for r in _csv("variables_catalog_acs2023_5yr.csv.gz") if r["table_id"] == "B25003"]
    assert variables == [(r["code"], r["label"], r["concept"], "housing", r["universe"], "2019-2023") for r in catalog]
    assert book == [
        ("B19013", "2014-2018", "shipped", 1, 3210),
        ("B19013", "2019-2023", "census-api:2023/acs/acs5", 1, N_STATES + N_COUNTIES),
        ("B25003", "2019-2023", "census-api:2023/acs/acs5", 3, 3 * (N_STATES + N_COUNTIES)),
    ]
    assert negative == 0


def test_refetch_is_idempotent(fs):
    run_fetch(fs, ["B25003"])
    before = snapshot(fs)
    report = run_fetch(fs, ["B25003"])
    after = snapshot(fs)
    assert before["estimates"] == after["estimates"] and before["variables"] == after["variables"]
    assert [r[:5] for r in before["census_tables"]] == [r[:5] for r in after["census_tables"]]
    t = report.tables[0]
    assert t.replaced_rows == t.rows
    assert t.previous_source == "census-api:2023/acs/acs5"


def test_an_earlier_period_is_loaded_beside_the_latest(fs, fake):
    run_fetch(fs, ["B25003"], 2023)
    latest = table_rows(fs, "B25003")
    report = run_fetch(fs, ["B25003"], 2018)
    t = report.tables[0]
    assert t.vintage == "2014-2018" and t.latest == "2019-2023" and {"2014-2018", "2019-2023"} <= set(t.vintages)
    assert t.replaced_rows == 0 and t.labels_changed == []  # 2018's labels differ only by colons
    assert "periods loaded: " in report.summary()
    # the latest period is untouched and still what public.estimates shows
    assert table_rows(fs, "B25003") == latest
    earlier = table_rows(fs, "B25003", "2014-2018")
    assert {k: (v[0], v[1]) for k, v in earlier.items()} == {
        k: (Decimal(e), Decimal(m)) for k, (e, m) in served(fake, 2018, "B25003", ("state", "county")).items()}
    assert {v[2] for v in earlier.values()} == {"census-api:2018/acs/acs5"}
    with db.owner(fs) as conn:
        variables = conn.execute(
            "SELECT variable_code, label, vintage, vintages, label_changed, earlier_label FROM public.variables "
            "WHERE table_id = 'B25003' ORDER BY 1").fetchall()
        book = conn.execute("SELECT vintage, source FROM sage.census_tables WHERE table_id = 'B25003' "
                            "AND vintage IN ('2014-2018', '2019-2023') ORDER BY 1").fetchall()
    catalog = {r["code"]: r["label"] for r in _csv("variables_catalog_acs2023_5yr.csv.gz") if r["table_id"] == "B25003"}
    for code, label, vintage, vintages, changed, earlier_label in variables:
        assert (label, vintage, changed, earlier_label) == (catalog[code], "2019-2023", False, None)
        assert vintages[-1] == "2019-2023" and "2014-2018" in vintages
    assert book == [("2014-2018", "census-api:2018/acs/acs5"), ("2019-2023", "census-api:2023/acs/acs5")]
    # fetching that period again replaces only its own rows
    before = snapshot(fs)
    again = run_fetch(fs, ["B25003"], 2018).tables[0]
    assert again.replaced_rows == again.rows == len(earlier)
    after = snapshot(fs)
    assert after["estimates"] == before["estimates"] and after["variables"] == before["variables"]


def test_a_label_that_changed_between_periods_is_flagged(fs):
    run_fetch(fs, ["B08301"], 2023)
    report = run_fetch(fs, ["B08301"], 2018)
    assert report.tables[0].labels_changed == ["B08301_021E"]
    assert "label changed between periods: B08301_021E" in report.summary()
    income = run_fetch(fs, ["B19013"], 2018)  # "in 2018 inflation-adjusted dollars": every period names its own
    assert income.tables[0].labels_changed == []
    with db.owner(fs) as conn:
        flagged = conn.execute(
            "SELECT variable_code, label, earlier_label, vintages FROM public.variables "
            "WHERE label_changed ORDER BY 1").fetchall()
    assert flagged == [("B08301_021E", "Estimate!!Total:!!Worked from home", "Estimate!!Total!!Worked at home",
                        ["2014-2018", "2019-2023"])]
    # ... and in every answer that reads it (the flag is the database's, whichever planner or user wrote the SQL)
    answer = agent.run_sql("SELECT b.vintage, sum(b.estimate) AS worked_from_home FROM public.estimates_by_vintage b "
                           "WHERE b.variable_code = 'B08301_021E' GROUP BY 1 ORDER BY 1", fs, record=False)
    assert answer.answered and [r[0] for r in answer.result.rows] == ["2014-2018", "2019-2023"]
    assert any(a.startswith("B08301_021E: the Census Bureau's label changed between periods (earlier: "
                            "“Estimate!!Total!!Worked at home”; 2019-2023: “Estimate!!Total:!!Worked from home”)")
               for a in answer.assumptions), answer.assumptions
    plain = agent.run_sql("SELECT sum(estimate) FROM public.estimates WHERE variable_code = 'B08301_001E'", fs,
                          record=False)
    assert plain.answered and not any("label changed" in a for a in plain.assumptions)


def test_failure_mid_fetch_leaves_the_database_unchanged(fs, fake):
    run_fetch(fs, ["B25003"], 2023)
    before = snapshot(fs)
    # the first data request succeeds, every later one fails with 500 (more often than the client retries)
    fake.fail("status", times=100, after=1, status=500, match="get=")
    with pytest.raises(fetch.FetchError) as err:
        run_fetch(fs, ["B25003"], 2022)
    assert err.value.kind == "unavailable" and "database is unchanged" in err.value.message
    assert isinstance(err.value.__cause__, CensusApiError) and err.value.report.tables == []
    assert len(fake.data_requests()) > 1  # it did fail half-way, after a successful request
    assert snapshot(fs) == before


def test_failure_on_a_later_table_keeps_the_tables_before_it(fs, fake):
    run_fetch(fs, ["B25003"], 2023)
    before = table_rows(fs, "B25003")
    fake.fail("status", times=100, status=500, match="B25003_001E")
    with pytest.raises(fetch.FetchError) as err:
        run_fetch(fs, ["B25002", "B25003"], 2022)
    exc = err.value
    assert [t.table_id for t in exc.report.tables] == ["B25002"]
    assert "B25002 was loaded before the failure" in exc.message
    assert table_rows(fs, "B25003") == before
    assert len(table_rows(fs, "B25002")) == exc.report.tables[0].rows > 0


def test_bad_key_leaves_the_database_unchanged(fs):
    before = snapshot(fs)
    wrong = fs.replace(census_api_key="not-the-key")
    with pytest.raises(fetch.FetchError) as err:
        run_fetch(wrong, ["B25003"], 2022)
    assert err.value.kind == "bad_key" and "not-the-key" not in err.value.message
    assert isinstance(err.value.__cause__, CensusApiError)
    assert snapshot(fs) == before


def test_special_values_become_nulls_never_numbers(fs, fake):
    counties = sorted(fake.values(2023, "B25003", "county"))
    for geo, code in zip(counties, sorted(SPECIAL_VALUES), strict=False):
        fake.override(2023, "B25003_002E", geo, estimate=str(code), margin=str(code))
    fake.override(2023, "B25003_003E", counties[-1], margin="-555555555")
    report = run_fetch(fs, ["B25003"], 2023)
    t = report.tables[0]
    # every special value is a NULL estimate; as a margin, -555555555 (a controlled total) is 0, the others NULL
    assert t.null_estimates == len(SPECIAL_VALUES) and t.null_margins == len(SPECIAL_VALUES) - 1
    assert t.special_values == 2 * len(SPECIAL_VALUES) + 1
    rows = table_rows(fs, "B25003")
    for geo, code in zip(counties, sorted(SPECIAL_VALUES), strict=False):
        assert rows[(geo, "B25003_002E")][:2] == (None, Decimal(0) if code == -555555555 else None)
        assert rows[(geo, "B25003_001E")][0] is not None
    assert rows[(counties[-1], "B25003_003E")][1] == 0 and rows[(counties[-1], "B25003_003E")][0] is not None


def test_places_outside_the_shipped_geography_are_skipped_and_counted(fs, fake):
    old_ct = fake.add_place("09", "001", "Fairfield County, Connecticut")
    report = run_fetch(fs, ["B25003"], 2021, geographies=("county",))
    t = report.tables[0]
    assert t.skipped_places == 1 and t.skipped_geo_ids == [old_ct]
    assert (t.states, t.counties) == (0, N_COUNTIES)
    assert "skipped 1 places not in this database's geography" in report.summary()
    rows = table_rows(fs, "B25003", "2017-2021")
    assert not any(geo == old_ct for geo, _ in rows) and not any(geo.startswith("0400000US") for geo, _ in rows)
    assert len(rows) == 3 * N_COUNTIES
    run_fetch(fs, ["B25003"], 2023)  # back to both levels


def test_invalid_arguments_fail_before_any_request(fs, fake):
    for tables, year, geos, states in ((["B25003"], 2008, ("state",), None), (["B25003"], 2023, ("parish",), None),
                                       (["nonsense"], 2023, ("state",), None), (["B25003"], 2023, ("tract",), ["XX"]),
                                       (["B25003"], 2023, ("zcta", "cbsa"), ["TX"])):
        with pytest.raises(CensusApiError) as err:
            run_fetch(fs, tables, year, geographies=geos, states=states)
        assert err.value.kind == "invalid_argument"
    assert fake.log == []


def test_setup_again_keeps_fetched_tables(fs):
    run_fetch(fs, ["B19013", "B25003"], 2023)
    before = snapshot(fs)
    run_setup(fs, build_index=False)  # the shipped files are unchanged: the loader skips
    assert snapshot(fs)["estimates"] == before["estimates"]
    with db.owner(fs) as conn:  # force the full reload of the shipped extract
        conn.execute("UPDATE sage.data_loads SET sha256 = 'changed'")
    run_setup(fs, build_index=False)
    after = snapshot(fs)
    assert after["estimates"] == before["estimates"] and after["variables"] == before["variables"]
    sources = {r[0]: r[2] for r in after["census_tables"]}
    assert sources["B19013"] == sources["B25003"] == "census-api:2023/acs/acs5"


def test_loaded_tables_lists_shipped_and_fetched(fs):
    run_fetch(fs, ["B25003"], 2023)
    tables = {(t["table_id"], t["vintage"]): t for t in loaded_tables(fs)}
    b25003 = tables[("B25003", "2019-2023")]
    assert b25003["source"] == "census-api:2023/acs/acs5"
    assert b25003["rows"] == len(table_rows(fs, "B25003", "2019-2023"))
    assert b25003["variables"] == 3
    fetched = {t for t, v in tables.items() if v["source"].startswith("census-api:")}
    shipped = {(r["table_id"], r["vintage"]) for r in _csv("variables.csv")} | {
        (r["variable_code"].split("_")[0], r["vintage"]) for r in _csv("estimates.csv.gz", DATA / "acs-2014-2018")}
    assert {t for t, v in tables.items() if v["source"] == "shipped"} == shipped - fetched
    assert set(b25003) >= {"table_id", "vintage", "variables", "rows", "source"}


def test_index_and_semantic_layer_pick_up_new_variables(fs):
    report = run_fetch(fs, ["B25003"], 2023, refresh_index=True)
    assert report.index["status"] == "refreshed", report.index
    with db.owner(fs) as conn:
        refs = {r[0] for r in conn.execute(
            "SELECT object_ref FROM sage.schema_embeddings WHERE object_type = 'variable'")}
    for code in ("B25003_001E", "B25003_002E", "B25003_003E"):
        assert any(code in ref for ref in refs), code
    assert report.semantic["status"] == "refreshed" and report.semantic["measures"] > 0, report.semantic
    again = run_fetch(fs, ["B25003"], 2023, refresh_index=True)
    assert again.index["detail"]["upserted"] == 0  # nothing changed: nothing re-embedded


def test_offline_planner_answers_about_a_fetched_table(fs):
    run_fetch(fs, ["B25003"], 2023, refresh_index=True)
    with db.owner(fs) as conn:
        expected = conn.execute(
            """SELECT e.estimate FROM public.estimates e JOIN public.geography g USING (geo_id)
               WHERE e.variable_code = 'B25003_003E' AND g.level = 'state' AND g.state_name = 'Rhode Island'"""
        ).fetchone()[0]
    answer = agent.ask("How many renter-occupied housing units are in Rhode Island?", fs, planner="offline",
                       record=False)
    assert answer.answered, answer.to_dict()
    assert "B25003_003E" in answer.sql
    assert any(Decimal(str(v)) == expected for row in answer.result.rows for v in row
               if isinstance(v, (int, float, Decimal)))


# ------------------------------------------------------------------------------------------------ every level

NEW_LEVELS = ("nation", "place", "cbsa", "cd", "tract", "zcta")
SMALL = ["RI", "DE"]  # two small states keep the per-state levels quick
SMALL_FIPS = {"44", "10"}


def test_fetch_every_level(fs, fake):
    before = {lv: n for lv, n in _levels(fs).items()}
    report = run_fetch(fs, ["B25003"], 2023, geographies=NEW_LEVELS, states=SMALL)
    t = report.tables[0]
    expected = {level: [p for p in fake.data.level_places(level, 2023)
                        if p.state is None or level not in ("place", "cd", "tract") or p.state in SMALL_FIPS]
                for level in NEW_LEVELS}
    assert t.levels == {level: len(places) for level, places in expected.items()}
    assert t.rows == 3 * sum(t.levels.values()) and t.skipped_places == 0
    # the nation and the places are shipped; metro areas, districts, tracts and ZCTAs are added from GEO_ID and NAME
    added = sum(len(expected[lv]) for lv in ("cbsa", "cd", "tract", "zcta"))
    assert t.geography_added == added and "added" in report.summary()
    assert report.states == ["DE", "RI"] and report.geographies == NEW_LEVELS
    after = _levels(fs)
    for level in ("cbsa", "cd", "tract", "zcta"):
        assert after[level] - before.get(level, 0) == len(expected[level])
    assert after["place"] == before["place"] and after["nation"] == 1

    # every value as served, keyed by the API's GEO_ID, at every level; public.estimates shows them
    want = served(fake, 2023, "B25003", NEW_LEVELS, SMALL_FIPS)
    for level in NEW_LEVELS:
        rows = table_rows(fs, "B25003", "2019-2023", level)
        wanted = {k: v for k, v in want.items() if k[0] in {p.geo_id for p in expected[level]}}
        assert {k: (v[0], v[1]) for k, v in rows.items()} == {
            k: (Decimal(e), Decimal(m)) for k, (e, m) in wanted.items()}, level
        assert table_rows(fs, "B25003", level=level) == rows

    with db.owner(fs) as conn:
        geo = {r[0]: r[1:] for r in conn.execute(
            "SELECT geo_id, level, name, state_abbr, county_fips, county_name, place_name FROM public.geography "
            "WHERE level IN ('cbsa', 'cd', 'tract', 'zcta')")}
    tract = next(p for p in expected["tract"] if p.state == "44")
    assert geo[tract.geo_id] == ("tract", tract.name, "RI", tract.county,
                                 fake.data.places[f"0500000US44{tract.county}"].name.split(",")[0], None)
    assert geo["310M700US12420"] == ("cbsa", "Austin-Round Rock-San Marcos, TX Metro Area", None, None, None, None)
    assert geo["860Z200US78701"] == ("zcta", "ZCTA5 78701", None, None, None, None)
    district = next(p for p in expected["cd"] if p.state == "10")
    assert geo[district.geo_id][:3] == ("cd", district.name, "DE")

    # the requests: GEO_ID and NAME asked; tracts, places and districts one state at a time
    requests = fake.data_requests()
    assert all(r["params"]["get"].startswith("GEO_ID,NAME,") for r in requests)
    by_for = {}
    for r in requests:
        by_for.setdefault(r["params"]["for"], set()).add(r["params"].get("in"))
    assert by_for["tract:*"] == by_for["place:*"] == by_for["congressional district:*"] == {"state:10", "state:44"}
    assert by_for["us:1"] == by_for["zip code tabulation area:*"] == {None}
    assert by_for["metropolitan statistical area/micropolitan statistical area:*"] == {None}

    # again: idempotent, nothing added
    snap = snapshot(fs)
    again = run_fetch(fs, ["B25003"], 2023, geographies=NEW_LEVELS, states=SMALL).tables[0]
    assert again.geography_added == 0 and again.replaced_rows == again.rows == t.rows
    assert snapshot(fs)["estimates"] == snap["estimates"] and snapshot(fs)["geography"] == snap["geography"]


def _levels(settings) -> dict[str, int]:
    with db.owner(settings) as conn:
        return dict(conn.execute("SELECT level, count(*) FROM public.geography GROUP BY 1").fetchall())


def test_states_limit_what_a_fetch_replaces(fs, fake):
    run_fetch(fs, ["B25003"], 2023, geographies=("tract",), states=SMALL)
    delaware = {k: v for k, v in table_rows(fs, "B25003", "2019-2023", "tract").items() if k[0][9:11] == "10"}
    fake.override(2023, "B25003_001E", next(p.geo_id for p in fake.data.level_places("tract") if p.state == "44"),
                  estimate="12345")
    t = run_fetch(fs, ["B25003"], 2023, geographies=("tract",), states=["RI"]).tables[0]
    rows = table_rows(fs, "B25003", "2019-2023", "tract")
    assert t.replaced_rows == t.rows == 3 * sum(1 for p in fake.data.level_places("tract") if p.state == "44")
    assert {k: v for k, v in rows.items() if k[0][9:11] == "10"} == delaware  # Delaware's tracts untouched
    assert Decimal(12345) in {v[0] for k, v in rows.items() if k[1] == "B25003_001E"}


def test_an_earlier_period_joins_the_places_of_the_newest_geography(fs, fake):
    run_fetch(fs, ["B25003"], 2023, geographies=("tract", "cd"), states=["RI"])
    tracts = run_fetch(fs, ["B25003"], 2018, geographies=("tract",), states=["RI"]).tables[0]
    ri_tracts = [p for p in fake.data.level_places("tract", 2018) if p.state == "44"]
    assert tracts.levels == {"tract": len(ri_tracts)} and tracts.geography_added == 0  # the same tract GEO_IDs
    assert len(table_rows(fs, "B25003", "2014-2018", "tract")) == 3 * len(ri_tracts)
    # districts of the 116th Congress are another delineation (5001600US...): nothing joins, nothing is added
    before = snapshot(fs)
    with pytest.raises(fetch.FetchError) as err:
        run_fetch(fs, ["B25003"], 2018, geographies=("cd",), states=["RI"])
    assert err.value.kind == "empty" and "newest period" in err.value.message
    assert snapshot(fs) == before


def test_a_newer_period_becomes_the_latest_and_names_the_levels_it_lacks(fs, fake):
    run_fetch(fs, ["B25003"], 2023)
    fake.years.add(2024)
    try:
        report = run_fetch(fs, ["B25003"], 2024, geographies=("tract",), states=["RI"])
        t = report.tables[0]
        assert t.latest == "2020-2024" and t.vintages[-1] == "2020-2024"
        assert any("no 2020-2024 rows for the county level" in n for n in t.not_in_view), t.not_in_view
        assert "public.estimates (the latest period) shows none of its places" in report.summary()
        shown = table_rows(fs, "B25003")
        assert shown and all(k[0].startswith("1400000US44") for k in shown)
        assert len(table_rows(fs, "B25003", "2019-2023", "county")) == 3 * N_COUNTIES  # kept, side by side
    finally:  # back to 2019-2023 as the latest, for the tests after this one
        fake.years.discard(2024)
        with db.owner(fs) as conn, conn.transaction():
            conn.execute("DELETE FROM public.estimates_by_vintage WHERE vintage = '2020-2024'")
            conn.execute("DELETE FROM sage.census_tables WHERE vintage = '2020-2024'")
            from sage.census.loader import refresh_vintages
            refresh_vintages(conn.cursor(), [f"B25003_00{i}E" for i in (1, 2, 3)])
    assert len(table_rows(fs, "B25003", level="state")) == 3 * N_STATES


def test_a_failed_fetch_of_several_levels_leaves_the_database_unchanged(fs, fake):
    before = snapshot(fs)
    # metro areas and the first state's tracts download fine, Rhode Island's tracts fail
    fake.fail("status", times=100, status=500, match="in=state:44")
    with pytest.raises(fetch.FetchError) as err:
        run_fetch(fs, ["B25002"], 2023, geographies=("cbsa", "zcta", "tract"), states=SMALL)
    assert err.value.kind == "unavailable" and "database is unchanged" in err.value.message
    assert any("in" in r["params"] and r["status"] == 200 for r in fake.data_requests())
    assert snapshot(fs) == before


def test_status_counts_every_period(fs):
    from sage.status import status

    info = status(fs).to_dict()
    with db.owner(fs) as conn:
        by_vintage = dict(conn.execute(
            "SELECT vintage, count(*) FROM public.estimates_by_vintage GROUP BY 1").fetchall())
    assert info["tables"]["public.estimates_by_vintage"] == sum(by_vintage.values())
    assert {d["vintage"]: d["estimates"] for d in info["vintage_detail"]} == by_vintage
    assert info["vintages"] == sorted(by_vintage, reverse=True)
