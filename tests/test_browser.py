"""The real thing: `streamlit run app.py` on a free port, driven by Debian's headless Chromium through Playwright.

A question typed and sent with Enter must come back as a drawn chart (or metric) with its SQL and assumptions
visible, and no traceback anywhere.  Timings are measured in benchmarks/bench_app.py, never asserted here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .app_driver import CHART_SELECTOR, CHROMIUM, app_env, ask, launch, open_app, streamlit_app

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install -y chromium)"),
]


@pytest.fixture(scope="module")
def page(settings, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    log = tmp_path_factory.mktemp("browser") / "streamlit.log"
    with sync_playwright() as pw, streamlit_app(app_env(settings.data_dir), log=log) as app:
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
