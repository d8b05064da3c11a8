"""A table loaded from the answer card, in a real browser (issue 16): `streamlit run app.py` with a Census API key,
the fake Census API (``tests/fake_census_api.py``) and a database of its own, driven by Debian's Chromium.

A question about a table that is not loaded is declined with a button that names the table; pressing it loads the
table (progress bar), and the question is asked again and answered.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sage.census.setup import run_setup

from .app_driver import CHROMIUM, app_env, ask, launch, open_app, streamlit_app
from .conftest import make_settings
from .fake_census_api import FakeCensusApi
from .test_browser_roles import sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install -y chromium)"),
]

KEY = "fake-browser-key-0123456789"
CURATOR_PASSWORD = "browser-fetch curator password"
QUESTION = "What is the homeownership rate in West Virginia?"


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from playwright.sync_api import sync_playwright

    data_dir = tmp_path_factory.mktemp("browser-fetch-db") / "pgdata"
    run_setup(make_settings(data_dir=data_dir))  # a database of its own: the test loads a table into it
    log = tmp_path_factory.mktemp("browser-fetch") / "streamlit.log"
    with FakeCensusApi(required_key=KEY) as fake:
        env = app_env(data_dir, CENSUS_API_KEY=KEY, SAGE_CENSUS_API_URL=fake.base_url,
                      SAGE_CURATOR_PASSWORD=CURATOR_PASSWORD)
        with sync_playwright() as pw, streamlit_app(env, log=log) as app:
            browser = launch(pw)
            try:
                page = open_app(browser, app.url)
                sign_in(page, CURATOR_PASSWORD)  # loading tables is a curator's action (issue 21)
                yield page
            finally:
                browser.close()


def test_the_card_loads_the_missing_table_and_the_question_is_answered(page):
    from playwright.sync_api import expect

    declined, _seconds = ask(page, QUESTION)
    expect(declined.get_by_text("B25003", exact=False).first).to_be_visible()
    button_name = "Load table B25003 (Tenure) for all states and counties"
    button = declined.get_by_role("button", name=button_name)
    expect(button).to_be_visible()
    messages = page.locator('[data-testid="stChatMessage"]')
    before = messages.count()
    button.click()
    # the load runs with a progress bar, then the question is asked again: a new question and its answer
    answer = messages.nth(before + 1)
    answer.locator('[data-testid="stMetric"]').first.wait_for(timeout=120_000)
    expect(messages.nth(before)).to_contain_text(QUESTION)
    expect(answer.locator('[data-testid="stCode"]').first).to_contain_text("B25003_002E")
    expect(page.get_by_text("Loaded B25003 (Tenure) for all states and counties", exact=False).first).to_be_visible()
    assert page.locator('[data-testid="stException"]').count() == 0
    # the earlier card no longer offers the load
    expect(declined.get_by_role("button", name=button_name)).to_have_count(0)
