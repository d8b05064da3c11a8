"""Visitors and curators in a real browser (issue 21): one `streamlit run app.py`, several browser contexts (each a
session of its own), Debian's Chromium through Playwright.

Visitor A's edited-and-liked answer never reaches visitor B, and B's History does not list A's questions; a curator
signs in (after a wrong password), verifies a proposal from the History page's "To review" list, and B is then
served it as Verified; the fetch button is absent for visitors and present for curators; a session past
SAGE_MAX_QUESTIONS_PER_MINUTE is told to wait; a feedback reason with markup is shown as text.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sage import db, querylog, review, verified
from sage.roles import Role

from .app_driver import CHROMIUM, app_env, ask, launch, open_app, sign_in, streamlit_app, wait_idle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install -y chromium)"),
]

PASSWORD = "browser-test curator password"
RATE = 3  # questions per session and minute: small, so the limit is reached quickly
OHIO = "What is the population of Ohio?"
FAKE_OHIO = "SELECT 'Ohio' AS state_name, 1 AS population"
TRAVIS = "median household income in Travis County TX"
HOMEOWNERSHIP = "What is the homeownership rate in West Virginia?"


def _clear(settings) -> None:
    querylog.ensure_tables(settings)
    with db.owner(settings) as conn:
        conn.execute("DELETE FROM sage.verified_answers")
        conn.execute("DELETE FROM sage.feedback")


@pytest.fixture(scope="module")
def browser(settings, tmp_path_factory):
    """One app (the session database, a curator password, a small question rate, a Census API key that is never
    used: no button is pressed) and one browser; every page opened is a session of its own."""
    from playwright.sync_api import sync_playwright

    _clear(settings)
    log = tmp_path_factory.mktemp("browser-roles") / "streamlit.log"
    env = app_env(settings.data_dir, SAGE_CURATOR_PASSWORD=PASSWORD, SAGE_MAX_QUESTIONS_PER_MINUTE=str(RATE),
                  CENSUS_API_KEY="browser-roles-unused-key", SAGE_CENSUS_API_URL="http://127.0.0.1:9/data")
    with sync_playwright() as pw, streamlit_app(env, log=log) as app:
        chromium = launch(pw)
        try:
            yield chromium, app.url
        finally:
            chromium.close()
            _clear(settings)


def visitor(browser):
    chromium, url = browser
    return open_app(chromium, url)


def go(page, name: str) -> None:
    """A page of the app through the sidebar (the same session: a reload would start a new one)."""
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=name).click()
    wait_idle(page)


def no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0


def ohio_population(settings) -> int:
    with db.owner(settings) as conn:
        row = conn.execute("SELECT e.estimate FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id "
                           "WHERE g.level = 'state' AND g.name = 'Ohio' AND e.variable_code = 'B01003_001E'"
                           ).fetchone()
    return int(row[0])


def test_a_visitors_edited_and_liked_answer_never_reaches_another_visitor(browser, settings):
    from playwright.sync_api import expect

    a = visitor(browser)
    ask(a, OHIO)
    messages = a.locator('[data-testid="stChatMessage"]')
    first = messages.nth(1)
    first.get_by_text("Edit the SQL and run it again").click()
    first.locator("textarea").fill(FAKE_OHIO)
    before = messages.count()
    first.get_by_role("button", name="Run again").click()
    edited = messages.nth(before + 1)
    expect(edited.get_by_text("Ran your edited SQL", exact=False)).to_be_visible(timeout=30_000)
    edited.get_by_role("radio", name="Thumbs up").click()
    expect(edited.get_by_text("Proposed for the verified answers", exact=False)).to_be_visible(timeout=30_000)
    assert verified.listing(settings) == []
    [proposal] = review.proposals(settings, role=Role.CURATOR)
    assert proposal.edited and "1 AS population" in proposal.sql

    b = visitor(browser)
    served, _seconds = ask(b, "what is the population of ohio")
    metric = served.locator('[data-testid="stMetric"]').first
    expect(metric).to_contain_text(f"{ohio_population(settings):,}")
    assert served.get_by_role("img", name="verified icon").count() == 0
    assert served.get_by_text("marked right", exact=False).count() == 0

    go(b, "History")
    expect(b.get_by_text(re.compile(r"^what is the population of ohio")).first).to_be_visible(timeout=30_000)
    assert b.get_by_text(re.compile(r"What is the population of Ohio\?")).count() == 0, "A's question"
    assert b.get_by_role("tab", name="To review").count() == 0
    no_exception(a)
    no_exception(b)


def test_a_curator_signs_in_verifies_a_proposal_and_a_visitor_is_then_served_it(browser, settings, tmp_path):
    from playwright.sync_api import expect

    a = visitor(browser)
    proposed, _seconds = ask(a, TRAVIS)
    proposed.get_by_role("radio", name="Thumbs up").click()
    expect(proposed.get_by_text("Proposed for the verified answers", exact=False)).to_be_visible(timeout=30_000)

    curator = visitor(browser)
    sign_in(curator, "not it")
    sidebar = curator.locator('[data-testid="stSidebar"]')
    expect(sidebar.get_by_text("Wrong password (4 tries left before a pause)")).to_be_visible(timeout=30_000)
    expect(sidebar.get_by_label("Curator password")).to_have_value("")
    sign_in(curator, PASSWORD)
    expect(sidebar.get_by_text("Curator", exact=True)).to_be_visible(timeout=30_000)

    go(curator, "History")
    curator.get_by_role("tab", name="To review").click()
    waiting = {p.question: p for p in review.proposals(settings, role=Role.CURATOR)}
    travis = curator.locator(f".st-key-proposal-{waiting[TRAVIS].question_id}")
    expect(travis).to_be_visible(timeout=30_000)
    expect(travis).to_contain_text("SQL by the offline planner")
    edited = curator.locator(f".st-key-proposal-{waiting[OHIO].question_id}")  # test 1's, an edited SQL
    expect(edited).to_contain_text("Edited SQL")
    expect(edited).to_contain_text("1 AS population")
    shot = tmp_path / "to-review.png"
    curator.get_by_role("tabpanel").screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    travis.get_by_role("button", name="Verify").click()
    expect(curator.get_by_text("Verified: answer", exact=False)).to_be_visible(timeout=30_000)
    [entry] = verified.listing(settings)
    assert entry.question == TRAVIS

    b = visitor(browser)
    served, _seconds = ask(b, "What's the median household income of Travis County, Texas?")
    badge = served.get_by_role("img", name="verified icon").locator("xpath=..")
    expect(badge).to_contain_text("Verified")
    expect(served.get_by_text("a curator marked right", exact=False)).to_be_visible()
    for page in (a, curator, b):
        no_exception(page)


def test_the_fetch_button_is_absent_for_visitors_and_present_for_curators(browser):
    from playwright.sync_api import expect

    label = "Load table B25003 (Tenure) for all states and counties"
    b = visitor(browser)
    declined, _seconds = ask(b, HOMEOWNERSHIP)
    expect(declined.get_by_text("a curator's action", exact=False)).to_be_visible()
    assert declined.get_by_role("button", name=label).count() == 0
    go(b, "Explore")
    b.get_by_role("tab", name="Loaded ACS tables").click()
    b.get_by_label("Search the ACS table catalog").fill("tenure")
    b.get_by_label("Search the ACS table catalog").press("Enter")
    wait_idle(b)
    assert b.get_by_role("button", name=label).count() == 0

    curator = visitor(browser)
    sign_in(curator, PASSWORD)
    offered, _seconds = ask(curator, HOMEOWNERSHIP)
    expect(offered.get_by_role("button", name=label)).to_be_visible(timeout=30_000)
    no_exception(b)
    no_exception(curator)


def test_a_session_past_its_question_rate_is_told_to_wait(browser):
    from playwright.sync_api import expect

    page = visitor(browser)
    for question in ("population of Ohio", "population of Texas", "population of Maine")[:RATE]:
        ask(page, question)
    messages = page.locator('[data-testid="stChatMessage"]')
    before = messages.count()
    box = page.locator('[data-testid="stChatInputTextArea"]')
    box.fill("population of Iowa")
    box.press("Enter")
    expect(page.get_by_text("questions in a minute, the most one session may ask", exact=False)).to_be_visible(
        timeout=30_000)
    wait_idle(page)
    assert messages.count() == before, "nothing was asked"
    other = visitor(browser)  # another session has its own rate
    ask(other, "population of Iowa")
    no_exception(page)


def test_a_feedback_reason_with_markup_is_shown_as_text(browser, settings):
    from playwright.sync_api import expect

    page = visitor(browser)
    answer, _seconds = ask(page, "How many housing units are there in Oregon?")
    answer.get_by_role("radio", name="Thumbs down").click()
    reason = answer.get_by_label("What is wrong with it?")
    reason.fill("<b>bold</b> [link](http://127.0.0.1:9/x) " + "y" * 200)  # the field takes 300 characters
    reason.press("Enter")
    answer.get_by_role("button", name="Send").click()
    expect(answer.get_by_text("noted for review", exact=False)).to_be_visible(timeout=30_000)

    curator = visitor(browser)
    sign_in(curator, PASSWORD)
    go(curator, "History")
    curator.get_by_role("tab", name="To review").click()
    shown = curator.get_by_text("<b>bold</b> [link](http", exact=False).first
    expect(shown).to_be_visible(timeout=30_000)
    panel = curator.get_by_role("tabpanel")
    assert panel.locator("b", has_text="bold").count() == 0 and panel.locator('a[href*="127.0.0.1:9"]').count() == 0
    no_exception(curator)
