"""The real thing: `streamlit run app.py` on a free port, driven by Debian's headless Chromium through Playwright.

A question typed and sent with Enter must come back as a drawn chart (or metric) with its SQL and assumptions
visible, and no traceback anywhere.  Timings are measured in benchmarks/bench_app.py, never asserted here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .app_driver import CHART_SELECTOR, CHROMIUM, app_env, ask, launch, open_app, streamlit_app

CURATOR_PASSWORD = "browser curator password"

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install -y chromium)"),
]


@pytest.fixture(scope="module")
def page(settings, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    log = tmp_path_factory.mktemp("browser") / "streamlit.log"
    env = app_env(settings.data_dir, SAGE_CURATOR_PASSWORD=CURATOR_PASSWORD)
    with sync_playwright() as pw, streamlit_app(env, log=log) as app:
        browser = launch(pw)
        try:
            yield open_app(browser, app.url)
        finally:
            browser.close()


def test_a_question_gets_a_chart_with_its_sql_and_assumptions(page, tmp_path):
    from playwright.sync_api import expect

    answer, _seconds = ask(page, "Which 10 counties have the largest population?")
    expect(answer.locator(CHART_SELECTOR).first).to_be_visible()
    expect(answer.get_by_text("Assumptions", exact=True)).to_be_visible()
    expect(answer.locator("li").filter(has_text="B01003_001E").first).to_be_visible()
    sql = answer.locator('[data-testid="stCode"]').filter(has_text="FROM public.estimates").first
    expect(sql).to_be_visible()
    expect(sql).to_contain_text("ORDER BY")
    expect(answer.get_by_text("Source: U.S. Census Bureau", exact=False).first).to_be_visible()
    assert page.locator('[data-testid="stException"]').count() == 0
    shot = tmp_path / "answer-card.png"
    answer.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000


def test_one_number_is_a_metric_with_its_margin(page):
    from playwright.sync_api import expect

    answer, _seconds = ask(page, "Median household income in Cook County, Illinois")
    metric = answer.locator('[data-testid="stMetric"]').first
    expect(metric).to_be_visible()
    expect(metric).to_contain_text("$")
    expect(metric).to_contain_text("±")
    expect(answer.locator('[data-testid="stCode"]').first).to_contain_text("B19013_001E")


def test_a_map_is_drawn(page):
    from playwright.sync_api import expect

    answer, _seconds = ask(page, "Median gross rent by county in Arizona")
    expect(answer.locator(CHART_SELECTOR).first).to_be_visible()
    assert page.locator('[data-testid="stException"]').count() == 0


# --- conversations, links and feedback (issue 15) ------------------------------------------------------------------


@pytest.fixture
def empty_library(settings):
    from sage import db, querylog

    def clear():
        querylog.ensure_tables(settings)
        with db.owner(settings) as conn:
            conn.execute("DELETE FROM sage.verified_answers")
            conn.execute("DELETE FROM sage.feedback")
    clear()
    yield
    clear()


def _new_conversation(page):
    button = page.get_by_role("button", name="New conversation")
    if button.count():
        button.click()
        page.locator('[data-testid="stChatMessage"]').first.wait_for(state="detached", timeout=30_000)


def _open(page, query: str):
    """Another browser tab (a session of its own) on the app's address plus ``query``."""
    other = page.context.browser.new_page(viewport={"width": 1440, "height": 1000})
    other.goto(page.url.split("?")[0] + query)
    return other


def test_a_link_asks_its_question_and_the_card_links_to_itself(page):
    from urllib.parse import quote_plus

    from playwright.sync_api import expect

    question = "Median household income in Cook County, Illinois"
    opened = _open(page, "?q=" + quote_plus(question))
    try:
        answer = opened.locator('[data-testid="stChatMessage"]').nth(1)
        metric = answer.locator('[data-testid="stMetric"]').first
        metric.wait_for(timeout=60_000)
        expect(opened.locator('[data-testid="stChatMessage"]').first).to_contain_text(question)
        link = answer.locator('[data-testid="stCode"]').filter(has_text="?q=").first
        expect(link).to_contain_text("?q=Median+household+income+in+Cook+County%2C+Illinois")
        link.hover()  # copyable: the code block's copy button
        expect(link.get_by_role("button", name="Copy to clipboard")).to_be_visible()
        expect(opened).not_to_have_url(re.compile(r"\?q="))  # asked once: a reload does not ask again
        again = _open(page, "?" + link.inner_text().strip().split("?", 1)[1])
        try:
            second = again.locator('[data-testid="stChatMessage"]').nth(1).locator('[data-testid="stMetric"]').first
            second.wait_for(timeout=60_000)
            assert second.inner_text() == metric.inner_text()
        finally:
            again.close()
        assert opened.locator('[data-testid="stException"]').count() == 0
    finally:
        opened.close()


def test_a_link_with_an_empty_question_says_so(page):
    from playwright.sync_api import expect

    opened = _open(page, "?q=")
    try:
        expect(opened.get_by_text("This link has no question in it", exact=False)).to_be_visible(timeout=60_000)
        assert opened.locator('[data-testid="stChatMessage"]').count() == 0
    finally:
        opened.close()


def test_a_follow_up_then_thumbs_up_verifies_and_thumbs_down_takes_a_reason(page, settings, empty_library):
    from playwright.sync_api import expect

    from sage import feedback, verified
    from sage.roles import Role

    from .test_browser_roles import sign_in

    sign_in(page, CURATOR_PASSWORD)  # a curator's thumbs up verifies (a visitor's proposes: test_browser_roles.py)
    _new_conversation(page)
    ask(page, "median household income in Travis County TX")
    answer, _seconds = ask(page, "and Williamson County?")
    expect(answer.get_by_text("median household income, Williamson County, TX", exact=False).first).to_be_visible()
    expect(answer.locator('[data-testid="stMetric"]').first).to_contain_text("$")
    answer.get_by_role("radio", name="Thumbs up").click()
    expect(answer.get_by_text("Marked right", exact=False)).to_be_visible(timeout=30_000)
    [entry] = verified.listing(settings)
    assert entry.standalone == "median household income, Williamson County, TX"

    served, _seconds = ask(page, "What is the median household income of Williamson County, Texas?")
    badge = served.get_by_role("img", name="verified icon").locator("xpath=..")  # the badge: its icon and word
    expect(badge).to_be_visible()
    expect(badge).to_contain_text("Verified")
    expect(served.get_by_text("Answered from the verified answers (no planning)", exact=False)).to_be_visible()
    served.get_by_role("radio", name="Thumbs down").click()
    reason = served.get_by_label("What is wrong with it?")
    reason.fill("wanted the family income")
    reason.press("Enter")
    served.get_by_role("button", name="Send").click()
    expect(served.get_by_text("noted for review", exact=False)).to_be_visible(timeout=30_000)
    [down] = feedback.recent(settings, role=Role.CURATOR)
    assert down.reason == "wanted the family income"
    assert verified.listing(settings, invalid_only=True), "the verified answer a user marked wrong is flagged"
    assert page.locator('[data-testid="stException"]').count() == 0


def test_cities_are_drawn_as_a_point_map_by_the_offline_planner(page):
    from playwright.sync_api import expect

    answer, _seconds = ask(page, "Map the population of cities in Texas")
    svg = answer.locator('[data-testid="stVegaLiteChart"] svg').first
    expect(svg).to_be_visible()
    expect(answer.get_by_text("Data · 1,000 rows", exact=False)).to_be_visible()
    assert svg.locator("g.mark-shape.role-mark > *").count() == 1  # Texas's outline
    assert svg.locator("g.mark-symbol.role-mark > *").count() == 1000  # a dot per place
    assert page.locator('[data-testid="stException"]').count() == 0
