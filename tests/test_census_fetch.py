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
from sage.census import fetch
from sage.census.api import SPECIAL_VALUES, CensusClient, is_special, parse_value
from sage.census.catalog_search import search_tables
from sage.census.setup import run_setup
from sage.errors import CensusApiError
from sage.settings import PROJECT_ROOT
from sage.status import loaded_tables

from .conftest import make_settings
from .fake_census_api import FakeCensusApi

ACS = PROJECT_ROOT / "data" / "acs"
KEY = "fake-key-0123456789"
#: small delays so retry tests are quick
FAST = dict(timeout=5.0, attempts=3, backoff=0.01, max_backoff=0.05)


def _csv(name: str) -> list[dict]:
    path = ACS / name
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
    wrong = {t: (c, fetch.category_for(t)) for t, c in by_table.items() if fetch.category_for(t) != c}
    assert wrong == {}
    assert len(set(by_table.values())) == 8  # the eight categories all occur


def test_category_for_follows_source_md_prefix_rules():
    assert fetch.category_for("B08301") == "transportation"
    assert fetch.category_for("B18135") == "health_insurance"
    assert fetch.category_for("B18101") == "demographics"
    assert fetch.category_for("B28011") == "demographics"
    assert fetch.category_for("C24010") == "employment"
    assert fetch.category_for("b22010") == "poverty"


def test_vintage_and_source_labels():
    assert fetch.vintage_label(2023) == "2019-2023"
    assert fetch.vintage_label(2022) == "2018-2022"
    assert fetch.source_label(2023) == "census-api:2023/acs/acs5"
    assert fetch.fetch_command(["B25003", "B08301"], 2022) == (
        "python -m sage census fetch --vintage 2022 --tables B25003,B08301"
    )


@pytest.mark.parametrize("code", sorted(SPECIAL_VALUES))
def test_every_special_value_is_null(code):
    assert parse_value(str(code)) is None
    assert parse_value(f"{code}.0") is None
    assert is_special(str(code))


def test_ordinary_values_parse():
    assert parse_value("59285") == Decimal("59285")
    assert parse_value("0.4500") == Decimal("0.4500")
    assert parse_value("-5") == Decimal("-5")
    assert parse_value(None) is None
    assert parse_value("") is None
    assert parse_value("*****") is None
    assert not is_special("-5") and not is_special(None)


def test_resolve_tables_and_presets():
    assert fetch.resolve_tables(" b25003, B08301 ,b25003") == ["B25003", "B08301"]
    assert fetch.resolve_tables(["B19013A"]) == ["B19013A"]
    core = fetch.resolve_tables(preset="core")
    assert core == fetch.PRESETS["core"] and len(core) == len(set(core)) == 21
    catalog_tables = {r["table_id"] for r in _csv("variables_catalog_acs2023_5yr.csv.gz")}
    assert set(core) <= catalog_tables
    for bad in ("S1901", "B2500", "DROP TABLE"):
        with pytest.raises(CensusApiError) as err:
            fetch.resolve_tables(bad)
        assert err.value.kind == "invalid_argument" and "census tables --search" in err.value.message
    with pytest.raises(CensusApiError):
        fetch.resolve_tables(preset="everything")


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


def table_rows(settings, table_id) -> dict[tuple[str, str], tuple]:
    with db.owner(settings) as conn:
        rows = conn.execute(
            """SELECT e.geo_id, e.variable_code, e.estimate, e.margin_error, e.source
               FROM public.estimates e JOIN public.variables v USING (variable_code) WHERE v.table_id = %s""",
            (table_id,),
        ).fetchall()
    return {(r[0], r[1]): r[2:] for r in rows}


def snapshot(settings) -> dict:
    """Everything a fetch may touch: census tables (as checksums) and the bookkeeping table."""
    with db.owner(settings) as conn:
        return {
            "estimates": conn.execute(
                "SELECT count(*), md5(string_agg(geo_id || variable_code || coalesce(estimate::text, '-') || "
                "coalesce(margin_error::text, '-') || source, ',' ORDER BY geo_id, variable_code)) "
                "FROM public.estimates"
            ).fetchone(),
            "variables": conn.execute(
                "SELECT count(*), md5(string_agg(v::text, ',' ORDER BY variable_code)) FROM public.variables v"
            ).fetchone(),
            "census_tables": conn.execute("SELECT * FROM sage.census_tables ORDER BY table_id").fetchall(),
        }


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
    assert t.null_estimates == specials_e > 0 and t.null_margins == specials_m
    assert t.previous_source == "shipped" and t.replaced_rows == len(shipped) and t.replaced_vintage is None
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
            "WHERE table_id IN ('B19013', 'B25003') ORDER BY 1"
        ).fetchall()
        negative = conn.execute(
            "SELECT count(*) FROM public.estimates WHERE estimate <= -222222222 OR margin_error < 0"
        ).fetchone()[0]
    catalog = [r for r in _csv("variables_catalog_acs2023_5yr.csv.gz") if r["table_id"] == "B25003"]
    assert variables == [(r["code"], r["label"], r["concept"], "housing", r["universe"], "2019-2023") for r in catalog]
    assert book == [
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
    assert t.replaced_vintage is None and t.replaced_rows == t.rows
    assert t.previous_source == "census-api:2023/acs/acs5"


def test_other_vintage_replaces_the_table_and_says_so(fs, fake):
    run_fetch(fs, ["B25003"], 2023)
    report = run_fetch(fs, ["B25003"], 2022)
    t = report.tables[0]
    assert t.replaced_vintage == "2019-2023" and t.vintage == "2018-2022"
    assert "replaced the 2019-2023 vintage" in report.summary()
    rows = table_rows(fs, "B25003")
    served = {**fake.values(2022, "B25003", "county"), **fake.values(2022, "B25003", "state")}
    assert {k: v[0] for k, v in rows.items()} == {
        (geo, code): Decimal(e) for geo, cells in served.items() for code, (e, _) in cells.items()
    }
    assert {v[2] for v in rows.values()} == {"census-api:2022/acs/acs5"}
    with db.owner(fs) as conn:
        assert conn.execute(
            "SELECT DISTINCT vintage FROM public.variables WHERE table_id = 'B25003'"
        ).fetchall() == [("2018-2022",)]
        assert conn.execute(
            "SELECT vintage, source FROM sage.census_tables WHERE table_id = 'B25003'"
        ).fetchone() == ("2018-2022", "census-api:2022/acs/acs5")
    back = run_fetch(fs, ["B25003"], 2023).tables[0]
    assert back.replaced_vintage == "2018-2022"


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
    assert t.null_estimates == len(SPECIAL_VALUES) and t.null_margins == len(SPECIAL_VALUES) + 1
    assert t.special_values == 2 * len(SPECIAL_VALUES) + 1
    rows = table_rows(fs, "B25003")
    for geo in counties[: len(SPECIAL_VALUES)]:
        assert rows[(geo, "B25003_002E")][:2] == (None, None)
        assert rows[(geo, "B25003_001E")][0] is not None
    assert rows[(counties[-1], "B25003_003E")][1] is None and rows[(counties[-1], "B25003_003E")][0] is not None


def test_places_outside_the_shipped_geography_are_skipped_and_counted(fs, fake):
    old_ct = fake.add_place("09", "001", "Fairfield County, Connecticut")
    report = run_fetch(fs, ["B25003"], 2021, geographies=("county",))
    t = report.tables[0]
    assert t.skipped_places == 1 and t.skipped_geo_ids == [old_ct]
    assert (t.states, t.counties) == (0, N_COUNTIES)
    assert "skipped 1 places not in the 2023 geography" in report.summary()
    rows = table_rows(fs, "B25003")
    assert not any(geo == old_ct for geo, _ in rows) and not any(geo.startswith("0400000US") for geo, _ in rows)
    run_fetch(fs, ["B25003"], 2023)  # back to both levels


def test_invalid_arguments_fail_before_any_request(fs, fake):
    for tables, year, geos in ((["B25003"], 2008, ("state",)), (["B25003"], 2023, ("tract",)),
                               (["nonsense"], 2023, ("state",))):
        with pytest.raises(CensusApiError) as err:
            run_fetch(fs, tables, year, geographies=geos)
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
    tables = {t["table_id"]: t for t in loaded_tables(fs)}
    assert tables["B25003"]["source"] == "census-api:2023/acs/acs5"
    assert tables["B25003"]["rows"] == len(table_rows(fs, "B25003"))
    assert tables["B25003"]["variables"] == 3 and tables["B25003"]["vintage"] == "2019-2023"
    fetched = {t for t, v in tables.items() if v["source"].startswith("census-api:")}
    shipped_tables = {r["table_id"] for r in _csv("variables.csv")} - fetched
    assert {t for t, v in tables.items() if v["source"] == "shipped"} == shipped_tables
    assert set(tables["B25003"]) >= {"table_id", "vintage", "variables", "rows", "source"}


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
