"""The Streamlit app through ``streamlit.testing.v1.AppTest``: every page, on the session database, with the
offline planner end to end (no fakes between the page and PostgreSQL); loading a table from a card runs on a
database of its own against the fake Census API."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from app_pages.components import resources, text
from app_pages.components.turns import Turn
from sage import db, explore, querylog
from sage.census.setup import run_setup
from sage.errors import QuestionError
from sage.settings import PROJECT_ROOT

from .conftest import make_settings
from .fake_census_api import FakeCensusApi

APP = str(PROJECT_ROOT / "app.py")
FETCH_KEY = "fake-app-key-0123456789"
TIMEOUT = 60  # the first run imports the engine and warms the embedder


@pytest.fixture
def app_settings(settings, monkeypatch):
    """The app's settings: the session database and the offline planner, never the developer's environment."""
    s = settings.replace(planner="offline")
    monkeypatch.setenv("SAGE_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("SAGE_PLANNER", "offline")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setattr(resources, "load_settings", lambda: s)
    st.cache_resource.clear()
    st.cache_data.clear()
    yield s
    st.cache_resource.clear()
    st.cache_data.clear()


@pytest.fixture
def app(app_settings) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    return at


def charts_of(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("vega_lite_chart")]


def turns(at: AppTest) -> list[Turn]:
    return at.session_state["turns"]


def estimates_count(settings) -> int:
    with db.owner(settings) as conn:
        return conn.execute("SELECT count(*) FROM public.estimates").fetchone()[0]


def ask(at: AppTest, question: str) -> AppTest:
    at.chat_input(key="question").set_value(question).run()
    assert not at.exception, at.exception
    return at


# --- Ask ---------------------------------------------------------------------------------------------------------


def test_home_shows_examples_and_the_offline_planner(app):
    assert app.title[0].value == "Ask the census"
    examples = [b for b in app.button if b.key and b.key.startswith("example-")]
    assert len(examples) >= 8
    assert any("Offline planner" in el.value for el in app.sidebar.info)
    assert any("ANTHROPIC" in el.value for el in app.sidebar.caption)


def test_ask_a_ranking_draws_a_bar_chart_with_assumptions_sql_and_data(app):
    ask(app, "Which 10 counties have the largest population?")
    (turn,) = turns(app)
    answer = turn.answer
    assert answer.answered and answer.planner == "offline" and answer.result.row_count == 10
    (chart,) = charts_of(app)
    marks = {layer["mark"]["type"] for layer in chart["layer"]}
    assert "bar" in marks
    assert any("Assumptions" in m.value and "B01003" in m.value.replace("\\", "") for m in app.markdown)
    assert any("FROM public.estimates" in c.value for c in app.code)
    assert len(app.dataframe) == 1 and app.dataframe[0].value.shape[0] == 10
    captions = " ".join(c.value.replace("\\", "") for c in app.caption)
    assert "Source: U.S. Census Bureau" in captions and "2019-2023" in captions
    assert "offline planner" in captions and "1 try" in captions and "retrieve" in captions
    assert app.get("download_button")


def test_ask_one_number_shows_a_metric_with_its_margin(app, app_settings):
    ask(app, "Median household income in Cook County, Illinois")
    answer = turns(app)[0].answer
    assert answer.answered and answer.display_hint == "big"
    (metric,) = app.metric
    income = answer.result.rows[0][answer.result.columns.index("median_household_income")]
    assert metric.value == f"${income:,.0f}"
    assert metric.delta.startswith("±")  # the 90% margin of error, shown as the metric's delta
    assert not charts_of(app)


def test_clicking_an_example_asks_it(app):
    button = next(b for b in app.button if b.key == "example-Poverty & insurance-0")
    button.click().run()
    assert not app.exception
    (turn,) = turns(app)
    assert turn.question == button.label and turn.answer.answered
    (chart,) = charts_of(app)
    assert chart["mark"]["type"] == "geoshape"  # "poverty rate by state" is planned as a map


def test_edit_the_sql_and_run_it_again(app):
    ask(app, "How many housing units are there in Oregon?")
    first = turns(app)[0]
    edited = "SELECT state_name, state_abbr FROM public.geography WHERE level = 'state' ORDER BY state_name LIMIT 3"
    app.text_area(key=f"turns-{first.id}-sql").set_value(edited)
    app.button(key=f"turns-{first.id}-run").click().run()
    assert not app.exception
    assert len(turns(app)) == 2
    second = turns(app)[1]
    assert second.kind == "sql" and second.answer.planner == "user"
    assert second.answer.answered and second.answer.result.row_count == 3
    assert any("ORDER BY state_name" in c.value for c in app.code)


def test_an_edit_the_guard_refuses_is_explained_and_not_run(app, app_settings):
    ask(app, "How many housing units are there in Oregon?")
    first = turns(app)[0]
    before = estimates_count(app_settings)
    app.text_area(key=f"turns-{first.id}-sql").set_value("DELETE FROM public.estimates")
    app.button(key=f"turns-{first.id}-run").click().run()
    assert not app.exception
    refused = turns(app)[1].answer
    assert refused.error is not None and refused.error.kind == "guard"
    assert refused.result is None and refused.timings_ms["execute"] == 0.0  # the executor was never called
    errors = [e.value for e in app.error]
    assert any("SQL guard refused" in e and "Nothing was run" in e.replace("\\", "") for e in errors)
    assert estimates_count(app_settings) == before


def test_an_empty_question_asks_for_one(app):
    ask(app, "   ")
    assert turns(app) == []
    assert any("Type a question first" in w.value.replace("\\", "") for w in app.warning)


def test_a_question_the_data_cannot_answer_offers_suggestions(app):
    ask(app, "How many people commute by bike in Oregon?")
    answer = turns(app)[0].answer
    assert answer.declined and answer.suggestions
    assert any("commut" in i.value for i in app.info)
    suggestion = next(b for b in app.button if b.key and "-suggest-0" in b.key)
    suggestion.click().run()
    assert not app.exception
    assert turns(app)[1].question == answer.suggestions[0]


CURATOR_PASSWORD = "app-test curator password"


def _keyed(app_settings, monkeypatch, *, curator: bool = False, **changes) -> AppTest:
    """The app on the session database with other settings (a Census API key, fetching off); ``curator``: signed
    in as a curator with the sidebar's form (loading tables is a curator's action, issue 21)."""
    changed = app_settings.replace(**({"curator_password": CURATOR_PASSWORD} if curator else {}), **changes)
    monkeypatch.setattr(resources, "load_settings", lambda: changed)
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    if curator:
        sign_in(at, CURATOR_PASSWORD)
        assert any("Curator" in el.value for el in at.sidebar.success), "signed in"
    return at


def sign_in(at: AppTest, password: str) -> AppTest:
    """The sidebar's "Curator sign-in": the password, then "Sign in"."""
    at.sidebar.text_input(key="curator-password").set_value(password)
    next(b for b in at.sidebar.button if b.label == "Sign in").click().run()
    assert not at.exception, at.exception
    return at


def _shown(at: AppTest) -> str:
    return " ".join(str(el.value) for el in (*at.info, *at.caption, *at.markdown, *at.code)).replace("\\", "")


def test_a_table_that_is_not_loaded_says_how_to_get_a_key_without_one(app_settings, monkeypatch):
    app = ask(_keyed(app_settings, monkeypatch, curator=True), "What is the homeownership rate in West Virginia?")
    answer = turns(app)[0].answer
    assert answer.decline_kind == "needs_fetch" and answer.fetch["tables"] == ["B25003"]
    shown = _shown(app)
    assert "https://api.census.gov/data/key_signup.html" in shown and "CENSUS_API_KEY" in shown
    assert ".streamlit/secrets.toml" in shown and "census fetch --vintage 2023 --tables B25003" in shown
    assert not [b for b in app.button if b.key and b.key.endswith("-load")]


def test_a_visitor_sees_the_table_that_would_answer_and_that_a_curator_can_load_it(app_settings, monkeypatch):
    at = ask(_keyed(app_settings, monkeypatch, census_api_key="census-test-key"),
             "What is the homeownership rate in West Virginia?")
    assert not [b for b in at.button if b.key and b.key.endswith("-load")]
    shown = _shown(at)
    assert "B25003 (Tenure) for all states and counties would answer this" in shown and "curator" in shown


def test_a_table_that_is_not_loaded_gets_a_load_button_with_a_key(app_settings, monkeypatch):
    at = ask(_keyed(app_settings, monkeypatch, curator=True, census_api_key="census-test-key"),
             "What is the homeownership rate in West Virginia?")
    [load] = [b for b in at.button if b.key and b.key.endswith("-load")]
    assert load.label == "Load table B25003 (Tenure) for all states and counties"
    assert "census-test-key" not in _shown(at)


def test_loading_is_turned_off_for_a_shared_database(app_settings, monkeypatch):
    at = ask(_keyed(app_settings, monkeypatch, curator=True, census_api_key="census-test-key", allow_fetch="off"),
             "What is the homeownership rate in West Virginia?")
    assert not [b for b in at.button if b.key and b.key.endswith("-load")]
    assert "SAGE_ALLOW_FETCH" in _shown(at)


def test_explore_searches_the_catalog_and_offers_to_load_a_table(app_settings, monkeypatch):
    at = _keyed(app_settings, monkeypatch, curator=True, census_api_key="census-test-key")
    at.switch_page("app_pages/explore.py").run()
    at.text_input(key="explore-catalog-search").set_value("tenure").run()
    assert not at.exception, at.exception
    found = at.dataframe[-1].value
    assert "B25003" in found["table_id"].tolist() and not found.set_index("table_id").loc["B25003", "loaded"]
    at.selectbox(key="explore-catalog-pick").set_value("B25003").run()
    assert [b.label for b in at.button if b.key == "explore-load-B25003-load"] == [
        "Load table B25003 (Tenure) for all states and counties"]
    at.text_input(key="explore-catalog-search").set_value("B19013").run()
    assert at.dataframe[-1].value.set_index("table_id").loc["B19013", "loaded"]  # shipped: loaded already


def test_status_reports_the_catalog_part_of_the_index(app, app_settings, monkeypatch):
    app.switch_page("app_pages/status.py").run()
    assert not app.exception, app.exception
    shown = _shown(app)
    assert "ACS tables that are not loaded are indexed" in shown
    assert "SAGE_CATALOG_INDEX=off" in shown  # the test settings turn background indexing off
    assert not any(b.key in ("status-catalog", "status-rebuild") for b in app.button), "a visitor's Status"
    curator = _keyed(app_settings, monkeypatch, curator=True)
    curator.switch_page("app_pages/status.py").run()
    assert not curator.exception, curator.exception
    assert any(b.key == "status-catalog" for b in curator.button)
    assert any(b.key == "status-rebuild" for b in curator.button)


def test_model_text_is_escaped_before_markdown():
    raw = "![x](https://example.com/leak?q=1) <b>bold</b> $x$ :red[alarm] *hi*"
    escaped = text.md(raw)
    for markup in ("![", "](", "<b>", "$x$", ":red[", "*hi*"):
        assert markup not in escaped
    assert escaped.replace("\\", "") == raw


# --- Explore, History, Status ------------------------------------------------------------------------------------


def test_explore_lists_variables_and_maps_the_picked_one(app):
    app.switch_page("app_pages/explore.py").run()
    assert not app.exception, app.exception
    catalog = app.dataframe[0].value
    assert {"variable_code", "label", "universe", "vintage"} <= set(catalog.columns)
    assert len(catalog) == 34
    specs = charts_of(app)
    assert any("layer" in s for s in specs) and any(s.get("mark", {}).get("type") == "geoshape" for s in specs)
    codes = app.selectbox(key="explore-variable").options
    app.selectbox(key="explore-category").set_value("housing").run()
    assert not app.exception
    housing = app.dataframe[0].value
    assert set(housing["category"]) == {"housing"} and len(housing) < len(codes)
    app.text_input(key="explore-search").set_value("rent paid by renters").run()
    assert not app.exception
    assert "B25064_001E" in app.dataframe[0].value["variable_code"].tolist()
    assert any("census fetch" in c.value for c in app.code)


def test_explore_lists_periods_and_the_levels_with_rows(app):
    app.switch_page("app_pages/explore.py").run()
    assert not app.exception, app.exception
    catalog = app.dataframe[0].value.set_index("variable_code")
    assert catalog.loc["B01003_001E", "vintages"] == "2014-2018, 2019-2023"
    assert catalog.loc["B17025_002E", "vintages"] == "2018-2022"
    assert catalog.loc["B01003_001E", "place_rows"] == 32325 and "tract_rows" not in catalog.columns
    app.selectbox(key="explore-variable").set_value("B01003_001E").run()
    assert app.radio(key="explore-level").options == ["State", "County", "Place"]
    app.radio(key="explore-level").set_value("place").run()
    assert not app.exception, app.exception
    bars = [s for s in charts_of(app) if "geoshape" not in str(s.get("mark"))]
    assert bars and "New York city, New York" in str(bars[0])
    assert any("The 4,000 largest places are shown" in c.value for c in app.caption)
    app.selectbox(key="explore-variable").set_value("B19013_001E").run()
    assert app.radio(key="explore-level").options == ["County"]


@pytest.mark.parametrize("level", explore.LEVELS)
def test_explore_queries_every_level_through_the_guard(settings, level):
    answer = explore.places(settings, "B01003_001E", level)
    assert answer.answered, answer.to_dict()
    names = {"state": ["state_name", "state_abbr"], "county": ["state_name", "state_abbr", "county_name"],
             "place": ["name", "state_abbr"], "cd": ["name", "state_abbr"], "tract": ["name", "state_abbr"]}
    assert answer.result.columns == ["geo_id", *names.get(level, ["name"]), "estimate", "margin_error"]
    expected = {"state": 52, "county": 3222, "place": explore.MAX_PLACES}.get(level, 0)  # no nation estimates
    assert answer.result.row_count == expected
    with pytest.raises(QuestionError):
        explore.top_places_sql("B01003_001E", "region")


def test_explore_county_level_map(app):
    app.switch_page("app_pages/explore.py").run()
    app.selectbox(key="explore-variable").set_value("B19013_001E").run()
    assert not app.exception
    app.radio(key="explore-level").set_value("county").run()
    assert not app.exception
    maps = [s for s in charts_of(app) if s.get("mark", {}).get("type") == "geoshape"]
    assert maps and maps[0]["data"]["format"]["feature"] == "counties"


def test_history_lists_questions_and_reruns_one(app):
    ask(app, "How many housing units are there in Oregon?")
    app.switch_page("app_pages/history.py").run()
    assert not app.exception, app.exception
    assert any("housing units are there in Oregon" in e.label for e in app.expander)
    rerun = next(b for b in app.button if b.key and b.key.startswith("history-rerun-"))
    rerun.click().run()
    assert not app.exception
    runs = app.session_state["history_runs"]
    assert len(runs) == 1 and next(iter(runs.values())).answer.answered
    assert app.metric  # the answer card of the re-run
    app.selectbox(key="history-outcome").set_value("declined").run()
    assert not any("housing units are there in Oregon" in e.label for e in app.expander)


def test_history_reruns_an_edited_sql_as_it_was(app):
    ask(app, "How many housing units are there in Oregon?")
    first = turns(app)[0]
    edited = "SELECT state_abbr FROM public.geography WHERE level = 'state' AND state_abbr LIKE 'O%' ORDER BY 1"
    app.text_area(key=f"turns-{first.id}-sql").set_value(edited)
    app.button(key=f"turns-{first.id}-run").click().run()
    app.switch_page("app_pages/history.py").run()
    assert not app.exception, app.exception
    entry_id = max(int(b.key.rsplit("-", 1)[1]) for b in app.button if b.key and b.key.startswith("history-rerun-"))
    app.button(key=f"history-rerun-{entry_id}").click().run()
    assert not app.exception
    rerun = app.session_state["history_runs"][entry_id]
    assert rerun.kind == "sql" and rerun.answer.planner == "user"
    assert [r[0] for r in rerun.answer.result.rows] == ["OH", "OK", "OR"]


def test_status_shows_the_database_and_no_secrets(app_settings, monkeypatch):
    keyed = make_settings(data_dir=app_settings.data_dir, planner="offline", anthropic_api_key="sk-ant-test-secret-123")
    monkeypatch.setattr(resources, "load_settings", lambda: keyed)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/status.py").run()
    assert not at.exception, at.exception
    values = {m.label: m.value for m in at.metric}
    assert values["Database"] == "embedded" and values["Estimates"] != "0"
    shown = json.dumps([j.value for j in at.json]) + " ".join(str(el.value) for el in at.main if hasattr(el, "value"))
    assert "sk-ant-test-secret-123" not in shown
    assert '"anthropic_api_key": "set"' in json.dumps(json.loads(at.json[0].value))


# --- first start and friendly errors -----------------------------------------------------------------------------


def test_first_start_sets_up_the_database_with_progress(fresh_settings, monkeypatch):
    s = fresh_settings.replace(planner="offline")
    monkeypatch.setattr(resources, "load_settings", lambda: s)
    st.cache_resource.clear()
    try:
        at = AppTest.from_file(APP, default_timeout=300).run()
        assert not at.exception, at.exception
        labels = [(box.label, box.state) for box in at.status]
        assert any(label.startswith("Census database ready") and state == "complete" for label, state in labels), labels
        assert any("Rows loaded" in m.value for m in at.markdown)
        assert estimates_count(s) > 100_000
        assert at.title[0].value == "Ask the census"
    finally:
        st.cache_resource.clear()


def test_claude_without_a_key_says_how_to_enable_it(app_settings, monkeypatch):
    claude = app_settings.replace(planner="claude", anthropic_api_key=None)
    monkeypatch.setattr(resources, "load_settings", lambda: claude)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    errors = " ".join(e.value.replace("\\", "") for e in at.error)
    assert "ANTHROPIC_API_KEY" in errors and "SAGE_PLANNER=offline" in errors
    at.chat_input(key="question").set_value("How many people live in Wyoming?").run()
    assert not at.exception and at.session_state["turns"] == []


def test_a_database_that_is_down_is_explained(monkeypatch):
    down = make_settings(database_url="postgresql://sage@127.0.0.1:1/census", planner="offline")
    monkeypatch.setattr(resources, "load_settings", lambda: down)
    st.cache_resource.clear()
    try:
        at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
        assert not at.exception, at.exception
        errors = " ".join(e.value.replace("\\", "") for e in at.error)
        assert "127.0.0.1" in errors and "DATABASE_URL" in errors
        assert "password" not in errors.lower() or "sage@" not in errors
    finally:
        st.cache_resource.clear()


# --- conversations, links, feedback (issue 15) -------------------------------------------------------------------


@pytest.fixture
def empty_library(app_settings):
    def clear():
        querylog.ensure_tables(app_settings)
        with db.owner(app_settings) as conn:
            conn.execute("DELETE FROM sage.verified_answers")
            conn.execute("DELETE FROM sage.feedback")
    clear()
    yield
    clear()


def markdown_text(at: AppTest) -> str:
    return " ".join(m.value.replace("\\", "") for m in at.markdown)


def test_a_follow_up_is_asked_in_the_conversation_and_shows_its_reading_first(app, app_settings):
    ask(app, "median household income in Travis County TX")
    ask(app, "and Williamson County?")
    first, second = turns(app)
    assert second.answer.answered and second.answer.parent_id == first.answer.id
    assert second.answer.result.rows[0][:2] == ["Williamson County", "Texas"]
    assert "**Read as:** median household income, Williamson County, TX" in markdown_text(app)
    assert querylog.get(app_settings, second.answer.id).parent_id == first.answer.id
    links = [c.value for c in app.code if "?q=" in c.value]
    # its reading stands alone; the answer's period rides along (issue 24: a link reproduces its own period)
    assert links[-1] == "?q=median+household+income%2C+Williamson+County%2C+TX&period=" + second.answer.vintages[0]


def test_new_conversation_forgets_the_earlier_turns(app):
    ask(app, "median household income in Travis County TX")
    app.button(key="new-conversation").click().run()
    assert not app.exception and turns(app) == []
    ask(app, "and Williamson County?")
    (turn,) = turns(app)
    assert turn.answer.declined and "nothing was asked before it" in turn.answer.decline


def test_a_clarifying_choice_is_a_button_that_continues_the_conversation(app):
    ask(app, "population of Alaska")
    ask(app, "and Washington County?")
    declined = turns(app)[1].answer
    assert declined.declined and declined.decline_kind == "ambiguous"
    assert "Which one did you mean?" in markdown_text(app)
    choice = app.button(key=f"turns-{turns(app)[1].id}-suggest-0")
    assert choice.label.replace("\\", "") == declined.suggestions[0] == "and Washington County, OR?"
    choice.click().run()
    assert not app.exception
    chosen = turns(app)[2].answer
    assert chosen.answered and chosen.assumptions[0] == ("Read as: population, Washington County, OR "
                                                         "(edit: swap places “Washington County, OR”).")
    assert chosen.parent_id == declined.id


def _open(app_settings, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update(params)
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_link_asks_its_question_and_shows_the_card(app_settings):
    at = _open(app_settings, q="Median household income in Cook County, Illinois")
    (turn,) = turns(at)
    assert turn.answer.answered and turn.question == "Median household income in Cook County, Illinois"
    assert at.metric and not at.query_params.get("q")  # asked once: a rerun does not ask again
    at.run()
    assert len(turns(at)) == 1


def test_a_link_with_a_conversation_replays_it(app_settings):
    at = _open(app_settings, q=["Which 10 counties have the largest population?",
                                "which of those has the highest poverty rate?"])
    first, second = turns(at)
    assert second.answer.answered and second.answer.followup and second.answer.parent_id == first.answer.id
    assert second.answer.result.row_count == 1


@pytest.mark.parametrize("q, words", [("", "no question in it"), ("a" * 10_000, "10,000 characters")])
def test_a_bad_link_gets_a_clear_message_and_asks_nothing(app_settings, q, words):
    at = _open(app_settings, q=q)
    assert turns(at) == []
    assert any(words in w.value.replace("\\", "") for w in at.warning), [w.value for w in at.warning]


def test_a_visitors_thumbs_up_proposes_and_a_paraphrase_is_still_planned(app, app_settings, empty_library):
    from sage import review, verified
    from sage.roles import Role

    ask(app, "median household income in Travis County TX")
    first = turns(app)[0]
    app.get("feedback")[0].set_value(1).run()
    assert not app.exception
    assert verified.of_question(app_settings, first.answer.id) is None
    assert [p.question_id for p in review.proposals(app_settings, role=Role.CURATOR)] == [first.answer.id]
    assert any("Proposed for the verified answers" in c.value for c in app.caption)
    ask(app, "What's the median household income of Travis County, Texas?")
    assert not turns(app)[1].answer.verified


def test_a_curators_thumbs_up_verifies_and_a_paraphrase_gets_the_verified_badge(app_settings, monkeypatch,
                                                                                  empty_library):
    from sage import verified

    app = ask(_keyed(app_settings, monkeypatch, curator=True), "median household income in Travis County TX")
    first = turns(app)[0]
    app.get("feedback")[0].set_value(1).run()
    assert not app.exception
    assert verified.of_question(app_settings, first.answer.id) is not None
    assert any("Marked right" in c.value for c in app.caption)
    ask(app, "What's the median household income of Travis County, Texas?")
    second = turns(app)[1]
    assert second.answer.verified and "Verified" in markdown_text(app)
    assert any("Answered from the verified answers" in c.value for c in app.caption)


def test_thumbs_down_asks_for_a_reason_listed_on_history(app_settings, monkeypatch, empty_library):
    app = ask(_keyed(app_settings, monkeypatch, curator_password=CURATOR_PASSWORD),
              "How many housing units are there in Oregon?")
    turn = turns(app)[0]
    app.get("feedback")[0].set_value(0).run()
    assert not app.exception
    key = f"turns-{turn.id}-feedback"
    app.text_input(key=f"{key}-reason").set_value("should count occupied homes only")
    app.button(key=f"{key}-send").click().run()
    assert not app.exception and any("noted for review" in c.value for c in app.caption)
    app.switch_page("app_pages/history.py").run()
    assert not app.exception, app.exception
    assert "should count occupied homes only" not in markdown_text(app), "a visitor has no review list"
    sign_in(app, CURATOR_PASSWORD)
    assert "should count occupied homes only" in markdown_text(app)


def test_history_shows_a_follow_up_under_the_question_it_follows(app):
    ask(app, "unemployment rate michigan")
    ask(app, "ohio")
    app.switch_page("app_pages/history.py").run()
    assert not app.exception, app.exception
    labels = [e.label.replace("\\", "") for e in app.expander]
    root = next(i for i, label in enumerate(labels) if label.startswith("unemployment rate michigan ·"))
    assert labels[root + 1].startswith("↳ ohio ·")
    follow_up = turns(app)[1].answer
    app.button(key=f"history-rerun-{follow_up.id}").click().run()  # asked again in its conversation
    assert not app.exception
    rerun = app.session_state["history_runs"][follow_up.id].answer
    assert rerun.answered and rerun.followup and rerun.result.rows[0][0] == "Ohio"
    assert any("?q=unemployment+rate%2C+Ohio" in c.value for c in app.code)


def test_a_data_directory_that_cannot_be_written_is_explained_at_start(monkeypatch):
    """sysfs refuses new files even to root (this suite runs as root, which chmod cannot stop): see test_faults.py."""
    read_only = make_settings(data_dir=Path("/sys/census-sage-test/pgdata"), planner="offline")
    monkeypatch.setattr(resources, "load_settings", lambda: read_only)
    st.cache_resource.clear()
    try:
        at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
        assert not at.exception, at.exception
        errors = " ".join(e.value.replace("\\", "") for e in at.error)
        assert "The data directory cannot be written." in errors and "/sys/census-sage-test/pgdata" in errors
        assert "SAGE_DATA_DIR" in errors and "writable directory" in errors
    finally:
        st.cache_resource.clear()


# --- loading a table from the card (its own database and the fake Census API: it changes a table) ---------------


@pytest.fixture(scope="module")
def census_api():
    with FakeCensusApi(required_key=FETCH_KEY) as server:
        yield server


@pytest.fixture(scope="module")
def fetch_db(tmp_path_factory):
    s = make_settings(data_dir=tmp_path_factory.mktemp("app-fetch-db") / "pgdata", planner="offline")
    run_setup(s)
    return s


def test_the_card_loads_the_table_and_asks_again(fetch_db, census_api, monkeypatch):
    fs = fetch_db.replace(census_api_url=census_api.base_url, census_api_key=FETCH_KEY,
                          curator_password=CURATOR_PASSWORD)
    monkeypatch.setattr(resources, "load_settings", lambda: fs)
    st.cache_resource.clear()
    st.cache_data.clear()
    try:
        at = sign_in(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), CURATOR_PASSWORD)  # a curator's action
        at.chat_input(key="question").set_value("What is the vacancy rate in Maine?").run()
        [turn] = turns(at)
        assert turn.answer.decline_kind == "needs_fetch" and turn.answer.fetch["tables"] == ["B25002"]
        [load] = [b for b in at.button if b.key and b.key.endswith("-load")]
        assert load.label == "Load table B25002 (Occupancy Status) for all states and counties"
        load.click().run()
        assert not at.exception, at.exception
        deadline = time.monotonic() + 120
        while at.session_state["fetch_jobs"] and time.monotonic() < deadline:
            bars = [p.proto.text.replace("\\", "") for p in at.get("progress")]
            assert any(b.startswith("Loading B25002 (Occupancy Status) for all states and counties: ") for b in bars)
            time.sleep(0.5)
            at.run()
            assert not at.exception, at.exception
        asked = turns(at)
        assert len(asked) == 2 and asked[1].question == "What is the vacancy rate in Maine?"
        assert asked[1].answer.answered and "B25002_003E" in asked[1].answer.sql
        assert any("Loaded B25002 (Occupancy Status) for all states and counties" in s.value.replace("\\", "")
                   for s in at.success)
        assert not [b for b in at.button if b.key and b.key.endswith("-load")]  # the first card says it is loaded
    finally:
        st.cache_resource.clear()
        st.cache_data.clear()


# --- reading an answer, with the offline planner end to end (issues 14 and 17) ---------------------------------------


def test_a_change_of_one_county_reads_both_periods_the_change_and_its_significance(app):
    ask(app, "How did median household income in Travis County, Texas change from 2014-2018 to 2019-2023?")
    answer = turns(app)[0].answer
    assert answer.answered and answer.significance, answer.error
    labels = [m.label.replace("\\", "") for m in app.metric]
    assert labels == ["2014-2018", "2019-2023", "Change", "Percent change"]
    (item,) = answer.significance
    verdict = "is" if item["significant"] else "is not"
    text = markdown_text(app)
    assert f"The change {verdict} statistically significant at the 90% level (Z = {item['z']:.2f})." in text
    captions = " ".join(c.value.replace("\\", "") for c in app.caption)
    assert "values are in 2023 dollars (adjusted with the CPI-U-RS)" in captions


def test_the_largest_cities_are_ranked_with_their_point_map_beside(app):
    ask(app, "What are the 10 largest cities in Texas?")
    assert turns(app)[0].answer.answered
    assert [t.label for t in app.tabs] == ["Chart", "Map"]
    bar, point_map = charts_of(app)
    assert point_map["projection"] == {"type": "albersUsa"}
    drawn = turns(app)[0].spec.alternate.chart.to_dict()  # (Streamlit sends the datasets apart from the spec)
    dots = next(layer for layer in drawn["layer"] if layer["mark"]["type"] == "circle")
    assert len(drawn["datasets"][dots["data"]["name"]]) == 10
