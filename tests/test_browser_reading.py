"""Reading an answer in the real app (issues 14 and 17, the display parts): `streamlit run app.py` in Debian's
headless Chromium, planned by the Claude planner against the local fake Messages API (so that the answers have the
shapes the planners return whatever the offline planner knows): a change drawn with error bars and its significance
sentence, a point map of Census places, a county map whose legend labels do not overlap.  Vega draws SVG, so what is
on the page is read from its marks."""

from __future__ import annotations

from pathlib import Path

import pytest

from .app_driver import CHART_SELECTOR, CHROMIUM, app_env, ask, launch, open_app, streamlit_app
from .fake_anthropic import FakeAnthropic, reply_plan

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install -y chromium)"),
]

SQL = Path(__file__).parent / "data" / "sql"
DOLLARS = ("Dollars: the 2014-2018 values are put in 2023 dollars with the CPI-U-RS (2023 / 2018 = 449.3 / 369.1 = "
           "1.2173), estimate and margin alike, so the change is a real change.")
TEXAS_PLACES = (
    "SELECT g.name, g.geo_id, e.estimate AS population FROM public.estimates e JOIN public.geography g "
    "ON g.geo_id = e.geo_id WHERE g.level = 'place' AND g.state_abbr = 'TX' AND e.variable_code = 'B01003_001E' "
    "ORDER BY e.estimate DESC LIMIT 100"
)
TEXAS_COUNTIES = (
    "SELECT g.county_name, g.state_name, g.geo_id, e.estimate AS population FROM public.estimates e "
    "JOIN public.geography g ON g.geo_id = e.geo_id WHERE g.level = 'county' AND g.state_name = 'Texas' "
    "AND e.variable_code = 'B01003_001E' ORDER BY e.estimate DESC"
)


@pytest.fixture(scope="module")
def claude_page(settings, tmp_path_factory):
    from playwright.sync_api import sync_playwright

    from sage import db, querylog

    querylog.ensure_tables(settings)
    with db.owner(settings) as conn:  # a verified answer must not answer in the planner's place
        conn.execute("DELETE FROM sage.verified_answers")
    log = tmp_path_factory.mktemp("browser-reading") / "streamlit.log"
    with FakeAnthropic() as fake:
        env = app_env(settings.data_dir, SAGE_PLANNER="claude", ANTHROPIC_API_KEY="sk-ant-browser-test",
                      ANTHROPIC_BASE_URL=fake.url)
        with sync_playwright() as pw, streamlit_app(env, log=log) as app:
            browser = launch(pw)
            try:
                yield fake, open_app(browser, app.url)
            finally:
                browser.close()


def _marks(chart, mark: str, role: str = "role-mark") -> int:
    """How many items Vega drew for the marks of one type (``rule``, ``symbol``, ``shape``): SVG elements of
    its ``mark-<type> role-mark`` groups."""
    return chart.locator(f"g.mark-{mark}.{role} > *").count()


def test_a_change_is_drawn_with_both_periods_error_bars_and_its_significance(claude_page, tmp_path):
    from playwright.sync_api import expect

    fake, page = claude_page
    fake.enqueue(reply_plan((SQL / "change_travis_area_income.sql").read_text(), [DOLLARS], "bar"))
    answer, _seconds = ask(page, "How did median household income change from 2014-2018 to 2019-2023 around Austin?")
    assert fake.pending == 0
    chart = answer.locator('[data-testid="stVegaLiteChart"]').first
    expect(chart.locator("svg").first).to_be_visible()
    svg = chart.locator("svg").first
    # the two panels: a dumbbell of both periods (4 lines, 8 dots) and the change in bars with a whisker each
    expect(svg).to_contain_text("Change, 2014-2018 → 2019-2023")
    expect(svg).to_contain_text("2014-2018")
    assert _marks(svg, "symbol") == 8
    assert _marks(svg, "rect") == 4
    assert _marks(svg, "rule") == 8  # 4 dumbbell lines + 4 whiskers (change ± MOE)
    # Travis +9,808 ± 1,633 (Z 9.9), Williamson +6,448 ± 2,443 (Z 4.3), Hays +5,565 ± 3,456 (Z 2.6) are
    # significant; Bastrop +6,113 ± 7,338 (Z 1.4) is not
    expect(answer).to_contain_text(
        "Of the 4 changes, 3 are statistically significant at the 90% level (Travis County, Texas; Williamson "
        "County, Texas; Hays County, Texas); 1 is not (Bastrop County, Texas).")
    expect(answer).to_contain_text("the 2014-2018 values are in 2023 dollars (adjusted with the CPI-U-RS)")
    assert page.locator('[data-testid="stException"]').count() == 0
    shot = tmp_path / "change-card.png"
    answer.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000


def test_places_are_drawn_as_a_point_map(claude_page, tmp_path):
    from playwright.sync_api import expect

    fake, page = claude_page
    fake.enqueue(reply_plan(TEXAS_PLACES, ["Census places in Texas, the 100 largest."], "map"))
    answer, _seconds = ask(page, "Map the population of the 100 largest places in Texas")
    assert fake.pending == 0
    svg = answer.locator('[data-testid="stVegaLiteChart"] svg').first
    expect(svg).to_be_visible()
    assert _marks(svg, "shape") == 1  # Texas's outline
    assert _marks(svg, "symbol") == 100  # a dot per place
    expect(svg).to_contain_text("Population")  # the size legend
    box = svg.bounding_box()
    assert box and box["width"] > 300 and box["height"] > 300
    assert page.locator('[data-testid="stException"]').count() == 0
    answer.screenshot(path=str(tmp_path / "place-map.png"))


def test_a_county_map_legend_has_one_place_per_label(claude_page, tmp_path):
    fake, page = claude_page
    fake.enqueue(reply_plan(TEXAS_COUNTIES, ["Counties in Texas."], "map"))
    answer, _seconds = ask(page, "population of all Texas counties")
    assert fake.pending == 0
    svg = answer.locator(CHART_SELECTOR).first
    svg.wait_for()
    labels = answer.locator("g.role-legend-label text")
    boxes = [labels.nth(i).bounding_box() for i in range(labels.count())]
    assert len(boxes) == 5 and all(b and b["width"] > 0 for b in boxes)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            apart = a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"] or \
                a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"]
            assert apart, f"legend labels overlap: {a} and {b}"
    answer.screenshot(path=str(tmp_path / "county-map.png"))
