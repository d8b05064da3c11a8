"""A new ACS release from the Status page, in a real browser (issue 24): `streamlit run app.py` with a Census API key,
the fake Census API with a 2024 release (``tests/fake_census_api.py``) and a database of its own, driven by Debian's
Chromium.

The Status page names the period questions read and says a newer release is published; its button runs
``census update`` with a progress bar; afterwards the page reads the new period and an answer card names it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sage.census.setup import run_setup

from .app_driver import CHROMIUM, app_env, ask, launch, open_app, sign_in, streamlit_app
from .conftest import make_settings
from .fake_census_api import FakeCensusApi

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install -y chromium)"),
]

KEY = "fake-browser-key-0123456789"


#: the curator password of the app under test
PASSWORD = "browser-update curator password"


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    from playwright.sync_api import sync_playwright

    data_dir = tmp_path_factory.mktemp("browser-update-db") / "pgdata"
    run_setup(make_settings(data_dir=data_dir))  # a database of its own: the test updates it
    log = tmp_path_factory.mktemp("browser-update") / "streamlit.log"
    with FakeCensusApi(required_key=KEY, years=range(2009, 2025)) as fake:
        env = app_env(data_dir, CENSUS_API_KEY=KEY, SAGE_CENSUS_API_URL=fake.base_url,
                      SAGE_CURATOR_PASSWORD=PASSWORD)
        with sync_playwright() as pw, streamlit_app(env, log=log) as app:
            browser = launch(pw)
            try:
                # screenshots of the page before, during and after the update, to look at (pytest's temp dir)
                yield browser, app.url, tmp_path_factory.mktemp("browser-update-shots")
            finally:
                browser.close()


def _shot(page, shots: Path, name: str) -> None:
    page.screenshot(path=str(shots / f"{name}.png"), full_page=True)


def test_the_status_page_updates_to_the_newest_release_and_the_card_names_it(app_url):
    from playwright.sync_api import expect

    browser, url, shots = app_url
    page = open_app(browser, url)
    sign_in(page, PASSWORD)  # loading a release is a curator's action (issue 21)
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Status").click()
    expect(page.get_by_text("Questions read ACS 2019-2023", exact=False).first).to_be_visible(timeout=60_000)
    expect(page.get_by_text("A newer ACS 5-year release is published: 2020-2024", exact=False).first).to_be_visible()
    _shot(page, shots, "status-before")
    page.get_by_role("button", name="Update to 2020-2024").click()
    expect(page.get_by_text("Loading the 2020-2024 release", exact=False).first).to_be_visible(timeout=30_000)
    _shot(page, shots, "status-during")
    expect(page.get_by_text("Questions read ACS 2020-2024", exact=False).first).to_be_visible(timeout=300_000)
    expect(page.get_by_text("A newer ACS 5-year release", exact=False)).to_have_count(0)
    assert page.locator('[data-testid="stException"]').count() == 0
    _shot(page, shots, "status-after")
    page = open_app(browser, url)
    answer, _seconds = ask(page, "What is the median household income in Travis County, Texas?")
    expect(answer.get_by_text("2020-2024", exact=False).first).to_be_visible()
    _shot(page, shots, "card-after")
