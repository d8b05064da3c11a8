"""``census update`` (issue 24): a new ACS 5-year release for every loaded table at once, against the fake Census API
extended with a 2024 release (``tests/fake_census_api.py``: real response format, synthetic values, ``/data.json``
in the API's DCAT shape).

The database tests share one set-up database and run in file order: refusals (nothing changes), an update
interrupted twice (questions keep the previous release), the resumed update (questions asked while it runs keep
the previous release; at the end every table reads 2020-2024 and change questions take the newest pair).  Expected
figures are read from the database with SQL written here, never typed in.
"""

from __future__ import annotations

import pytest

from sage import agent, db, locks, verified
from sage.census import cpi, fetch_job, loader, periods, update
from sage.census.api import CensusClient
from sage.census.setup import run_setup
from sage.errors import ErrorKind, SageError
from sage.roles import Role
from sage.status import status

from .conftest import make_settings
from .fake_census_api import FakeCensusApi
from .test_census_fetch import FAST, KEY, snapshot

TRAVIS = "0500000US48453"
INCOME = "What is the median household income in Travis County, Texas?"
INCOME_2023 = "What was the median household income in Travis County, Texas in 2019-2023?"
CHANGE = "How has median household income changed in Travis County, Texas?"
CHANGE_2023 = "How has median household income changed in Travis County, Texas between 2014-2018 and 2019-2023?"
RENT_LABEL = "Estimate!!Median gross rent (contract rent plus utilities)"
VALUE_UNIVERSE = "Owner-occupied housing units with a mortgage"


@pytest.fixture(scope="module")
def fake():
    with FakeCensusApi(required_key=KEY, years=range(2009, 2025)) as server:
        yield server


@pytest.fixture(autouse=True)
def _reset_fake(request):
    yield
    if "fake" in request.fixturenames:
        request.getfixturevalue("fake").clear()


@pytest.fixture(scope="module")
def db_settings(tmp_path_factory):
    s = make_settings(data_dir=tmp_path_factory.mktemp("update-db") / "pgdata", planner="offline")
    run_setup(s)
    return s


@pytest.fixture
def fs(db_settings, fake):
    """The database, the fake API and the right key."""
    return db_settings.replace(census_api_url=fake.base_url, census_api_key=KEY)


def client(settings) -> CensusClient:
    return CensusClient.from_settings(settings, **FAST)


def income(settings, period: str) -> float:
    """Travis County's median household income of one period, from the database."""
    with db.owner(settings) as conn:
        row = conn.execute("SELECT estimate FROM public.estimates_by_vintage WHERE geo_id = %s "
                           "AND variable_code = 'B19013_001E' AND vintage = %s", (TRAVIS, period)).fetchone()
    assert row is not None
    return float(row[0])


def view_periods(settings) -> set[str]:
    """The periods public.estimates shows."""
    with db.owner(settings) as conn:
        return {r[0] for r in conn.execute("SELECT DISTINCT vintage FROM public.estimates")}


def view_checksum(settings) -> tuple:
    with db.owner(settings) as conn:
        return conn.execute("SELECT count(*), md5(string_agg(geo_id || variable_code || vintage || "
                            "coalesce(estimate::text, '-'), ',' ORDER BY geo_id, variable_code)) "
                            "FROM public.estimates").fetchone()


def answer_value(answer) -> float:
    assert answer.answered, answer.to_dict()
    column = answer.result.columns.index("median_household_income")
    return float(answer.result.rows[0][column])


def requested_tables(fake) -> set[str]:
    """The tables of the data requests the fake has served since it was last cleared."""
    return {item.split("_")[0] for r in fake.data_requests() for item in r["params"].get("get", "").split(",")
            if "_" in item}


# ---------------------------------------------------------------------------------------------- the period rules


def test_newest_pair_takes_the_latest_period_and_the_latest_one_apart_from_it():
    assert periods.newest_pair(["2014-2018", "2019-2023"]) == ("2014-2018", "2019-2023")
    assert periods.newest_pair(["2014-2018", "2019-2023", "2020-2024"]) == ("2014-2018", "2020-2024")
    assert periods.newest_pair(["2014-2018", "2015-2019", "2019-2023", "2020-2024"]) == ("2015-2019", "2020-2024")
    assert periods.newest_pair(["2019-2023", "2020-2024"]) is None  # they overlap
    assert periods.newest_pair(["2020-2024"]) is None and periods.newest_pair([]) is None
    assert periods.common_pair([["2014-2018", "2019-2023", "2020-2024"], ["2014-2018", "2019-2023"]]) == (
        "2014-2018", "2019-2023")
    assert periods.overlap("2019-2023", "2020-2024") and not periods.overlap("2015-2019", "2020-2024")


def test_the_periods_an_answer_names_and_the_note_of_an_older_one():
    sql = "SELECT ... WHERE b.vintage IN ('2014-2018', '2019-2023') AND c.year = 2023"
    assert periods.named_periods(sql) == ["2014-2018", "2019-2023"]
    assert periods.named_periods("SELECT estimate FROM public.estimates") == []
    assert periods.older_period_note("... e.vintage = '2019-2023'", "2020-2024") == (
        "Figures from 2019-2023 (a newer release, 2020-2024, is loaded).")
    assert periods.older_period_note(sql, "2020-2024") == (
        "Compares 2014-2018 with 2019-2023 (a newer release, 2020-2024, is loaded).")
    assert periods.older_period_note(sql, "2019-2023") is None
    assert periods.older_period_note("SELECT estimate FROM public.estimates", "2020-2024") is None
    # a verified question naming a period its SQL no longer reads (it read the view while that period was latest)
    view = "SELECT estimate FROM public.estimates WHERE variable_code = 'B19013_001E'"
    assert periods.unread_period("Median income of Ohio in 2019-2023?", view, "2020-2024") == "2019-2023"
    assert periods.unread_period("Median income of Ohio in 2019-2023?", view, "2019-2023") is None
    assert periods.unread_period("Median income of Ohio?", view, "2020-2024") is None
    named = "... vintage = '2019-2023'"
    assert periods.unread_period("Median income of Ohio in 2019-2023?", named, "2020-2024") is None


def test_the_claude_planner_is_told_the_pair_a_change_compares_once_three_periods_are_loaded():
    from sage.planner.claude.blocks import format_schema_context
    from sage.types import Chunk

    chunk = Chunk(1, "variable", "B19013_001E", "ACS variable B19013_001E: Median household income", 1.0)
    three = format_schema_context([chunk], periods={"B19013_001E": ("2014-2018", "2019-2023", "2020-2024")})
    assert three.endswith("periods loaded: 2014-2018, 2019-2023, 2020-2024; a change compares 2014-2018 with "
                          "2020-2024")
    two = format_schema_context([chunk], periods={"B19013_001E": ("2014-2018", "2019-2023")})
    assert two.endswith("; periods loaded: 2014-2018, 2019-2023")


def test_the_releases_come_from_the_dataset_discovery(fake):
    years = client(make_settings(census_api_url=fake.base_url)).releases()
    # the detailed tables only: the fake lists the profile and subject tables and a 1-year release of 2025 beside
    assert years == sorted(fake.years)
    assert [r["path"] for r in fake.log] == ["/data.json"]


# ---------------------------------------------------------------------------------------------- the plan


def test_the_dry_run_lists_exactly_the_loaded_tables_and_levels_and_loads_nothing(fs, fake):
    before = snapshot(fs)
    with db.owner(fs) as conn:
        loaded = set(conn.execute(
            "SELECT DISTINCT v.table_id, g.level FROM public.estimates e JOIN public.variables v USING (variable_code) "
            "JOIN public.geography g ON g.geo_id = e.geo_id").fetchall())
        latest = conn.execute("SELECT max(vintage) FROM public.variables").fetchone()[0]
    plan = update.update(fs, dry_run=True, client=client(fs))
    assert isinstance(plan, update.UpdatePlan)
    assert (plan.year, plan.vintage, plan.chosen, plan.latest) == (2024, "2020-2024", "newest release", latest)
    assert {(i.table_id, level) for i in plan.items for level in i.levels} == loaded
    assert all(not i.done and i.rows == i.variables * i.places > 0 for i in plan.items)
    assert plan.rows == sum(i.rows for i in plan.items)
    assert "2020-2024" in plan.summary() and all(i.table_id in plan.summary() for i in plan.items)
    assert fake.data_requests() == [] and snapshot(fs) == before


def test_the_command_line_prints_the_plan_as_json(fs, monkeypatch, capsys):
    import json

    from sage import cli

    monkeypatch.setattr(cli, "load_settings", lambda **kw: fs)
    assert cli.main(["census", "update", "--dry-run", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["vintage"] == "2020-2024" and out["latest"] == "2019-2023" and not out["up_to_date"]
    assert out["rows"] == sum(i["rows"] for i in out["items"]) and {i["table_id"] for i in out["items"]} == set(
        out["behind"])
    assert cli.main(["census", "update", "--vintage", "2008", "--json"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["error"]["kind"] == "invalid_argument" and "error:" in captured.err


def test_status_says_a_newer_release_is_published(fs):
    info = status(fs, check_release=True)
    assert info.latest == "2019-2023" and info.pending == []
    assert info.release is not None and info.release.newer and info.release.newest == "2020-2024"
    assert "python -m sage census update" in info.release.message
    assert status(fs.replace(census_api_key=None), check_release=True).release.checked is False  # no key: not asked


def test_a_verified_answer_of_the_latest_period(fs):
    """Verified before the update; asked again after it (test_after_the_update_...)."""
    answer = agent.ask(CHANGE_2023, fs)
    assert answer.answered and periods.named_periods(answer.sql) == ["2014-2018", "2019-2023"]
    verified.add(fs, answer.id, role=Role.OPERATOR)


# ---------------------------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("vintage, words", [
    (2008, "2009"),  # before the first 5-year release
    (2031, "2009"),  # a year in the future
])
def test_a_vintage_out_of_range_is_refused(fs, vintage, words):
    with pytest.raises(SageError) as err:
        update.update(fs, vintage, client=client(fs))
    assert err.value.kind == ErrorKind.INVALID_ARGUMENT and words in err.value.message


def test_refusals_leave_the_database_as_it_was(fs, fake):
    before = snapshot(fs)
    with pytest.raises(SageError) as err:
        update.update(fs.replace(census_api_key=None), client=client(fs))
    assert err.value.kind == ErrorKind.MISSING_KEY and "CENSUS_API_KEY" in err.value.message
    with pytest.raises(SageError) as err:  # published years only: the fake's newest is 2024
        update.update(fs, max(fake.years) + 1, client=client(fs))
    assert err.value.kind == ErrorKind.INVALID_ARGUMENT and "not published yet" in err.value.message
    with pytest.raises(SageError) as err:  # an earlier period is census fetch's job
        update.update(fs, 2022, client=client(fs))
    assert err.value.kind == ErrorKind.INVALID_ARGUMENT and "census fetch --vintage 2022" in err.value.message
    fake.lacking[2024] = {"B25064"}
    with pytest.raises(SageError) as err:
        update.update(fs, client=client(fs))
    assert err.value.kind == ErrorKind.UNKNOWN_TABLE
    assert "B25064" in err.value.message and "keeps 2019-2023" in err.value.message
    fake.lacking.clear()
    with pytest.raises(update.UpdateError) as failed:
        update.update(fs.replace(census_api_key="not-the-key"), client=client(fs.replace(census_api_key="x")))
    assert failed.value.kind == ErrorKind.BAD_KEY and "still read 2019-2023" in failed.value.message
    with fetch_job.fetch_lock(fs, ["B25003"], "B25003 (Tenure) for all states and counties", "a test"):
        with pytest.raises(SageError) as err:
            update.update(fs, client=client(fs))
    assert err.value.kind == ErrorKind.BUSY and "B25003" in err.value.message
    with db.connect(fs, autocommit=True) as other:  # another process updating
        assert locks.try_lock(other, locks.CENSUS_FETCH, "sage fetch B01003 by the command line")
        with pytest.raises(SageError) as err:
            update.update(fs, client=client(fs))
    assert err.value.kind == ErrorKind.BUSY
    assert snapshot(fs) == before


def test_a_release_whose_year_the_cpi_table_lacks_is_refused(fs):
    table = cpi.load(fs.data_path)
    missing = table.last_year + 1
    with FakeCensusApi(required_key=KEY, years=range(2009, missing + 1)) as newer:
        settings = fs.replace(census_api_url=newer.base_url)
        with pytest.raises(SageError) as err:
            update.update(settings, client=client(settings))
        assert newer.data_requests() == []
    assert err.value.kind == ErrorKind.CPI_YEAR_MISSING
    assert f"The CPI table has no {missing} index; dollars cannot be compared" in err.value.message


# ---------------------------------------------------------------------------------------------- interrupted


def test_an_interrupted_update_keeps_the_previous_release_for_every_question(fs, fake):
    view = view_checksum(fs)
    fake.lacking[2024] = {"place"}  # a release without a level loaded here: B01003 has places
    with pytest.raises(update.UpdateError) as failed:
        update.update(fs, client=client(fs))
    assert failed.value.kind == ErrorKind.BAD_GEOGRAPHY
    assert "B01003" in failed.value.message and "run `python -m sage census update` again" in failed.value.message
    done = [f["table_id"] for f in failed.value.report.fetches]
    assert done == ["B01002"]  # the first table, before B01003
    fake.clear()
    fake.fail("status", status=503, times=50, match="B19013_")  # the API down in the middle
    with pytest.raises(update.UpdateError) as failed:
        update.update(fs, client=client(fs))
    assert failed.value.kind == ErrorKind.UNAVAILABLE
    assert "B01002" not in requested_tables(fake)  # already loaded: skipped
    assert view_checksum(fs) == view and "2020-2024" not in view_periods(fs)
    # what a setup or a fetch meanwhile does to the periods leaves the held release out of them
    with db.owner(fs) as conn, conn.transaction():
        cur = conn.cursor()
        loader.refresh_vintages(cur, [r[0] for r in cur.execute("SELECT variable_code FROM public.variables")])
    assert view_checksum(fs) == view
    info = status(fs)
    assert info.latest == "2019-2023" and info.pending == ["2020-2024"]
    with db.owner(fs) as conn:  # the new rows are there, held
        held = conn.execute("SELECT count(*) FROM public.estimates_by_vintage WHERE vintage = '2020-2024'").fetchone()
    assert held[0] > 0
    answer = agent.ask(INCOME, fs, record=False)
    assert answer_value(answer) == income(fs, "2019-2023") and answer.vintages == ["2019-2023"]


def test_the_resumed_update_skips_what_is_loaded_and_switches_every_table_at_once(fs, fake):
    fake.relabel[(2024, "B25064_001E")] = RENT_LABEL
    fake.reuniverse[(2024, "B25077")] = VALUE_UNIVERSE
    with db.owner(fs) as conn:
        rent_label = conn.execute(
            "SELECT label FROM public.variables WHERE variable_code = 'B25064_001E'").fetchone()[0]
    during: list = []

    def progress(step: str, done: int = 0, total: int = 0) -> None:
        if step.startswith("update 2020-2024: B25077"):  # the update is running: ask, and try another fetch
            during.append(agent.ask(INCOME, fs, record=False))
            during.append(status(fs))
            try:
                fetch_job.locked_fetch(fs, ["B25003"], 2023, client=client(fs))
            except SageError as exc:
                during.append(exc)
            try:
                update.update(fs, client=client(fs))  # a second update at once
            except SageError as exc:
                during.append(exc)

    report = update.update(fs, progress=progress, client=client(fs))
    assert isinstance(report, update.UpdateReport)
    # resumed: the tables loaded by the interrupted runs were not asked for again
    skipped = {s.split(" ")[0] for s in report.skipped}
    assert skipped and skipped.isdisjoint(requested_tables(fake))
    assert {f["table_id"] for f in report.fetches} | skipped == set(report.plan.tables)
    # while it ran: the previous release, and a second load refused
    asked, seen, refused, second = during
    assert answer_value(asked) == income(fs, "2019-2023") and asked.vintages == ["2019-2023"]
    assert seen.latest == "2019-2023" and seen.pending == ["2020-2024"]
    assert isinstance(refused, SageError) and refused.kind == ErrorKind.BUSY
    assert isinstance(second, SageError) and second.kind == ErrorKind.BUSY
    assert "the 2020-2024 release of" in second.message  # names what runs
    # after: every variable of every loaded table reads 2020-2024, the earlier periods stay
    assert report.switch is not None and report.switch.dropped == []
    with db.owner(fs) as conn:
        behind = conn.execute("SELECT count(*) FROM public.variables v WHERE vintage <> '2020-2024' AND EXISTS "
                              "(SELECT FROM public.estimates e WHERE e.variable_code = v.variable_code)").fetchone()
        pending = conn.execute("SELECT count(*) FROM sage.census_pending").fetchone()
        rent = conn.execute("SELECT label, label_changed, earlier_label FROM public.variables "
                            "WHERE variable_code = 'B25064_001E'").fetchone()
        value = conn.execute("SELECT universe, label_changed, earlier_label FROM public.variables "
                             "WHERE variable_code = 'B25077_001E'").fetchone()
        pair = periods.change_pair(conn, ["B19013_001E"])
        loaded = periods.loaded_periods(conn, ["B19013_001E"])
    assert behind[0] == 0 and pending[0] == 0 and view_periods(fs) == {"2020-2024"}
    assert "2019-2023" in loaded and "2014-2018" in loaded
    # label and universe changes flagged
    assert rent == (RENT_LABEL, True, rent_label) and "B25064_001E" in report.switch.labels_changed
    assert value[0] == VALUE_UNIVERSE and value[1] and "universe" in value[2]
    assert "B25077_001E" in report.switch.universes_changed
    info = status(fs, check_release=True)
    assert info.latest == "2020-2024" and info.pending == [] and not info.release.newer
    # a question now reads 2020-2024; a change takes the newest pair of periods apart
    answer = agent.ask(INCOME, fs, record=False)
    assert answer_value(answer) == income(fs, "2020-2024") and answer.vintages == ["2020-2024"]
    change = agent.ask(CHANGE, fs, record=False)
    assert change.answered and pair == ("2014-2018", "2020-2024")
    assert periods.named_periods(change.sql) == list(pair) and change.vintages == list(pair)[::-1]
    # a second update has nothing to do
    again = update.update(fs, client=client(fs))
    assert isinstance(again, update.UpdatePlan) and again.up_to_date and "Up to date" in again.summary()


def test_after_the_update_a_verified_answer_of_the_previous_periods_says_so(fs):
    answer = agent.ask(CHANGE_2023, fs, record=False)
    assert answer.planner == "verified" and answer.vintages == ["2019-2023", "2014-2018"]
    assert "Compares 2014-2018 with 2019-2023 (a newer release, 2020-2024, is loaded)." in answer.notices
    column = answer.result.columns.index("median_household_income_2019_2023")
    assert float(answer.result.rows[0][column]) == income(fs, "2019-2023")


def test_after_the_update_a_question_naming_the_previous_period_is_answered_from_it(fs):
    answer = agent.ask(INCOME_2023, fs, record=False)
    assert answer_value(answer) == income(fs, "2019-2023") and answer.vintages == ["2019-2023"]


def test_a_link_made_before_the_update_reproduces_its_period(fs):
    from urllib.parse import parse_qs

    from sage import links

    made = links.query_string([INCOME], period=["2019-2023"])  # as the card made it before the update
    request = links.read_link(parse_qs(made[1:]), fs)
    assert request is not None and request.error is None
    assert request.questions == [INCOME[:-1] + " in 2019-2023?"]
    answer = agent.ask(request.questions[0], fs, record=False)
    assert answer_value(answer) == income(fs, "2019-2023") and answer.vintages == ["2019-2023"]
    # a link of the latest period asks its question as it is; a change link names its pair
    assert links.read_link({"q": [INCOME], "period": ["2020-2024"]}, fs).questions == [INCOME]
    assert links.read_link({"q": [CHANGE], "period": ["2019-2023,2014-2018"]}, fs).questions == [
        CHANGE[:-1] + " between 2014-2018 and 2019-2023?"]
    bad = links.read_link({"q": [INCOME], "period": ["last year"]}, fs)
    assert bad.error is not None and "2019-2023" in bad.error.message
