"""The answer card in a real browser (issue 23): the headline is the first thing in the answer, above the chart or
the numbers; the place stands beside its state and the nation; the SQL sits in a box of bounded height that scrolls
on its own; a place name alone shows its profile, each measure a link that asks it.  `streamlit run app.py` in
Debian's headless Chromium (tests/app_driver.py); screenshots are kept in the test's temporary directory."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app_pages.components.reading import SQL_HEIGHT

from .app_driver import CHROMIUM, app_env, ask, launch, open_app, streamlit_app, wait_idle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install -y chromium)"),
]


@pytest.fixture(scope="module")
def page(settings, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    from sage import db, querylog

    querylog.ensure_tables(settings)
    with db.owner(settings) as conn:  # a verified answer must not answer in the planner's place
        conn.execute("DELETE FROM sage.verified_answers")
    log = tmp_path_factory.mktemp("browser-headline") / "streamlit.log"
    with sync_playwright() as pw, streamlit_app(app_env(settings.data_dir), log=log) as app:
        browser = launch(pw)
        try:
            yield open_app(browser, app.url)
        finally:
            browser.close()


def _top(locator) -> float:
    box = locator.bounding_box()
    assert box is not None
    return box["y"]


def test_the_headline_comes_first_and_the_place_stands_beside_its_parents(page, tmp_path):
    from playwright.sync_api import expect

    answer, _ = ask(page, "unemployment rate in Travis County, TX")
    head = answer.locator("h4").first
    expect(head).to_contain_text("Unemployment rate in Travis County, Texas:")
    metric = answer.locator('[data-testid="stMetric"]').first
    expect(metric).to_be_visible()
    assert _top(head) < _top(metric)
    expect(answer.locator("li").filter(has_text="the Texas rate of").first).to_be_visible()
    expect(answer.locator("li").filter(has_text="the US rate of").first).to_be_visible()
    answer.screenshot(path=str(tmp_path / "headline-value.png"))
    assert page.locator('[data-testid="stException"]').count() == 0


def test_a_long_sql_scrolls_in_its_own_box_under_the_chart(page, tmp_path):
    from playwright.sync_api import expect

    answer, _ = ask(page, "Which 5 Texas counties added the most people between 2014-2018 and 2019-2023?")
    expect(answer.locator("h4").first).to_contain_text("grew the most in population")
    code = answer.locator('[data-testid="stCode"]').filter(has_text="estimates_by_vintage").first
    expect(code).to_be_visible()
    box = code.bounding_box()
    assert box is not None and box["height"] <= SQL_HEIGHT + 40
    scrolls = code.evaluate("el => [...el.querySelectorAll('*')].concat([el]).some("
                            "n => n.scrollHeight > n.clientHeight + 4 && getComputedStyle(n).overflowY !== 'visible')")
    assert scrolls, "the SQL box does not scroll"
    code.hover()
    expect(code.locator("button").first).to_be_attached()  # the copy button
    answer.screenshot(path=str(tmp_path / "headline-change.png"))


def test_a_place_name_alone_shows_its_profile(page, tmp_path):
    from playwright.sync_api import expect

    # in a conversation a place name alone is a follow-up ("and Travis County?"); on its own, a profile
    wait_idle(page)
    page.get_by_role("button", name="New conversation").click()
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stChatMessage\"]')", timeout=60_000)
    wait_idle(page)
    messages = page.locator('[data-testid="stChatMessage"]')
    before = messages.count()
    box = page.locator('[data-testid="stChatInputTextArea"]')
    box.fill("Travis County, Texas")
    box.press("Enter")
    answer = messages.nth(before + 1)
    try:
        answer.get_by_text("Demographics", exact=True).first.wait_for(timeout=120_000)
    finally:
        page.screenshot(path=str(tmp_path / "profile-page.png"), full_page=True)
    expect(answer.locator("h4").first).to_contain_text("Travis County, Texas: total population")
    for group in ("Economics", "Housing", "Social"):
        expect(answer.get_by_text(group, exact=True).first).to_be_visible()
    link = answer.get_by_role("link", name="Median household income").first
    expect(link).to_have_attribute("href", re.compile(
        r"\?q=What\+is\+the\+median\+household\+income\+in\+Travis\+County%2C\+TX%3F$"))
    expect(answer.get_by_text("of the Texas total").first).to_be_visible()
    answer.screenshot(path=str(tmp_path / "profile.png"))
    assert page.locator('[data-testid="stException"]').count() == 0
