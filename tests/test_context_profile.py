"""An answer in context and a place's profile, on the real database (sage/context.py, sage/profile.py,
sage/planner/offline/alone.py, sage/narrate.py): the parents' figures checked against SQL written here, the
significance test against the Census formula computed here, and every measure of a profile against the single
question its link asks."""

from __future__ import annotations

import math

import pytest

from sage import agent, execute, guard, stats
from sage.census.semantic import load_measures
from sage.db import owner
from sage.planner.offline.catalog import load_catalog
from sage.planner.offline.planner import OfflinePlanner

TRAVIS = "0500000US48453"
US_STATES = "g.level = 'state' AND g.state_abbr <> 'PR'"


def _one(settings, sql: str, *args):
    with owner(settings) as conn:
        return conn.execute(sql, args).fetchone()


def _by(answer, measure: str) -> dict[str, dict]:
    return {c["level"]: c for c in answer.context if c["measure"] == measure}


def test_a_county_value_stands_beside_its_state_and_the_us(settings):
    answer = agent.ask("unemployment rate in Travis County, TX", settings, planner="offline", record=False)
    assert answer.answered and answer.headline and answer.headline.startswith("Unemployment rate in Travis County")
    found = _by(answer, "unemployment_rate")
    texas = _one(settings, "SELECT ROUND(100.0 * SUM(e.estimate) FILTER (WHERE e.variable_code = 'B23025_005E') / "
                           "SUM(e.estimate) FILTER (WHERE e.variable_code = 'B23025_003E'), 1) FROM public.estimates e "
                           "JOIN public.geography g ON g.geo_id = e.geo_id WHERE g.level = 'state' AND "
                           "g.state_abbr = 'TX'")[0]
    us = _one(settings, "SELECT ROUND(100.0 * SUM(e.estimate) FILTER (WHERE e.variable_code = 'B23025_005E') / "
                        "SUM(e.estimate) FILTER (WHERE e.variable_code = 'B23025_003E'), 1) FROM public.estimates e "
                        f"JOIN public.geography g ON g.geo_id = e.geo_id WHERE {US_STATES}")[0]
    assert found["state"]["name"] == "Texas" and found["state"]["value"] == float(texas)
    assert found["nation"]["name"] == "United States" and found["nation"]["value"] == float(us)
    county = answer.result.rows[0][answer.result.columns.index("unemployment_rate_pct")]
    side = "above" if float(county) > float(us) else "below"
    assert found["nation"]["comparison"].startswith(f"{side} the US rate of {float(us):.1f}%")
    # the shipped state rows have no margins: nothing is tested, nothing is called significant
    assert found["state"]["significant"] is None and "significant" not in found["state"]["comparison"]
    assert answer.to_dict()["context"] == answer.context and answer.to_dict()["headline"] == answer.headline


def test_a_count_is_a_share_of_the_parent_total(settings):
    answer = agent.ask("population of Boulder, CO", settings, planner="offline", record=False)
    found = _by(answer, "population")
    boulder, colorado = (float(_one(settings, "SELECT estimate FROM public.estimates WHERE geo_id = %s AND "
                                              "variable_code = 'B01003_001E'", g)[0])
                         for g in ("1600000US0807850", "0400000US08"))
    us = float(_one(settings, "SELECT SUM(e.estimate) FROM public.estimates e JOIN public.geography g ON "
                              f"g.geo_id = e.geo_id WHERE {US_STATES} AND e.variable_code = 'B01003_001E'")[0])
    assert found["state"]["value"] == colorado and found["nation"]["value"] == us
    assert found["state"]["comparison"] == f"{100 * boulder / colorado:.1f}% of the Colorado total ({colorado:,.0f})"


def test_a_median_without_state_rows_says_so_once(settings):
    answer = agent.ask("median household income in Travis County, TX", settings, planner="offline", record=False)
    assert answer.context == []
    assert answer.context_note and answer.context_note.count("median household income") == 1
    assert answer.to_dict()["context_note"] == answer.context_note


def test_a_measure_the_us_rows_do_not_cover_has_no_us_figure(settings):
    # poverty (B17025) covers the 48 contiguous states + DC only: they do not add up to the US
    answer = agent.ask("poverty rate in Ohio", settings, planner="offline", record=False)
    assert answer.answered and answer.context == []
    assert answer.context_note and answer.context_note.startswith("No US figure for poverty rate")


@pytest.fixture
def state_margins(settings):
    """Margins on the White-alone state rows (the shipped data has them on county rows only), for the test of
    significance; taken out again afterwards."""
    with owner(settings) as conn:
        conn.execute("UPDATE public.estimates_by_vintage b SET margin_error = ROUND(b.estimate * 0.002) FROM "
                     "public.geography g WHERE g.geo_id = b.geo_id AND g.level = 'state' AND "
                     "b.variable_code = 'B02001_002E'")
        conn.commit()
    load_measures(settings, refresh=True)
    try:
        yield
    finally:
        with owner(settings) as conn:
            conn.execute("UPDATE public.estimates_by_vintage b SET margin_error = NULL FROM public.geography g "
                         "WHERE g.geo_id = b.geo_id AND g.level = 'state' AND b.variable_code = 'B02001_002E'")
            conn.commit()
        load_measures(settings, refresh=True)


def test_margins_and_significance_follow_the_census_formulas(settings, state_margins):
    from sage import context

    cat = load_catalog(settings)
    white = cat.measure("white_share")
    assert white is not None and "state" in white.moe_levels
    got = context.for_answer(settings, cat, TRAVIS, [white])
    found = {c.parent.area.level: c for c in got.comparisons}
    pop = "SUM(e.estimate) FILTER (WHERE e.variable_code = 'B01003_001E')"
    num = "SUM(e.estimate) FILTER (WHERE e.variable_code = 'B02001_002E')"
    moe2 = "SUM(e.margin_error ^ 2) FILTER (WHERE e.variable_code = 'B02001_002E')"
    rows = {}
    for name, where in (("county", f"g.geo_id = '{TRAVIS}'"), ("state", "g.level = 'state' AND g.state_abbr = 'TX'"),
                        ("nation", US_STATES)):
        # a share over a controlled total: MOE(p) = 100 * MOE(num) / den (the denominator has no sampling error)
        rows[name] = [float(v) for v in _one(
            settings, f"SELECT ROUND(100.0 * {num} / {pop}, 1), ROUND(100.0 * SQRT({moe2}) / {pop}, 1) "
                      f"FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id WHERE {where}")]
    (x, mx) = rows["county"]
    for level in ("state", "nation"):
        y, my = rows[level]
        c = found[level]
        assert (c.parent.value, c.parent.moe) == (y, my)
        z = (x - y) / math.sqrt((mx / 1.645) ** 2 + (my / 1.645) ** 2)
        assert math.isclose(c.z, z, rel_tol=1e-9) and c.significant is (abs(z) > 1.645)
        assert c.text.endswith("— significant at 90%" if abs(z) > 1.645 else "— not a significant difference at 90%")
        assert c.z == stats.compare("a", x, mx, "b", y, my).z


# ------------------------------------------------------------------------------------------------ profiles


class _NoPlanner:
    """A planner that must not be asked: a place name alone is answered by its profile, whichever the planner."""

    name = "claude"

    def plan(self, *args, **kwargs):  # pragma: no cover - reaching it is the failure
        raise AssertionError("the planner was asked")


def _single(settings, question: str) -> tuple[list[str], list]:
    plan = OfflinePlanner(settings).plan(question)
    assert not plan.declined, (question, plan.assumptions)
    result = execute.run(guard.check(plan.sql, max_rows=settings.max_rows), settings)
    assert result.row_count == 1, question
    return result.columns, result.rows[0]


@pytest.mark.parametrize("question, geo_id, level", [
    ("Travis County, Texas", TRAVIS, "county"),
    ("Ohio", "0400000US39", "state"),
    ("Boulder, CO", "1600000US0807850", "place"),
])
def test_a_profile_holds_what_the_single_questions_answer(settings, question, geo_id, level):
    answer = agent.ask(question, settings, planner=_NoPlanner(), record=False)  # type: ignore[arg-type]
    assert answer.answered and answer.display_hint == "profile" and answer.planner == "offline"
    profile = answer.profile
    assert profile is not None and profile["geo_id"] == geo_id and profile["level"] == level
    cat = load_catalog(settings)
    expected = {m.name for m in cat.measures if m.has_rows(level, geo_id[9:11])}
    items = [i for s in profile["sections"] for i in s["items"]]
    assert {i["measure"] for i in items} == expected
    for item in items:
        m = cat.measure(item["measure"])
        cols, row = _single(settings, item["question"])
        assert m.column in cols, item["question"]
        value = row[cols.index(m.column)]
        assert item["value"] == pytest.approx(float(value)), item["question"]
        if f"{m.column}_moe" in cols and row[cols.index(f"{m.column}_moe")] is not None:
            assert item["moe"] == pytest.approx(float(row[cols.index(f"{m.column}_moe")])), item["question"]
    assert answer.headline and answer.headline.startswith(profile["name"] + ": ")
    groups = [s["group"] for s in profile["sections"]]
    assert groups == sorted(groups, key=["Demographics", "Economics", "Housing", "Social"].index)
    # every statement went through the guard: each is one SELECT the guard accepts as it is shown
    for sql in answer.sql.split(";\n\n"):
        assert guard.check(sql, max_rows=settings.max_rows).sql == sql


def test_a_profile_is_only_for_a_place_alone(settings):
    for question in ("population of Ohio", "Texas counties", "Ohio in 2014-2018", "Springfield", "and Idaho?",
                     "what about Ohio"):
        answer = agent.ask(question, settings, planner="offline", record=False)
        assert answer.display_hint != "profile", question
    answer = agent.ask("tell me about Travis County, TX", settings, planner="offline", record=False)
    assert answer.display_hint == "profile"


# ------------------------------------------------------------------------------------------------ Claude's answers

OHIO_UNEMPLOYMENT = (
    "SELECT g.state_name, ROUND(100.0 * SUM(e.estimate) FILTER (WHERE e.variable_code = 'B23025_005E') / "
    "NULLIF(SUM(e.estimate) FILTER (WHERE e.variable_code = 'B23025_003E'), 0), 1) AS unemployment_rate_pct "
    "FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id WHERE g.level = 'state' AND "
    "g.state_abbr = 'OH' AND e.variable_code IN ('B23025_005E', 'B23025_003E') GROUP BY g.state_name")
TWO_STATES = OHIO_UNEMPLOYMENT.replace("g.state_abbr = 'OH'", "g.state_abbr IN ('OH', 'MS')")


@pytest.fixture
def claude(settings, monkeypatch):
    from sage.planner.claude.claude import ClaudePlanner
    from tests.fake_anthropic import FakeAnthropic

    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        s = settings.replace(anthropic_api_key="sk-ant-headline-test", planner="claude", claude_timeout_s=10.0)
        yield fake, ClaudePlanner(s, max_retries=0), s


def test_claude_answers_get_the_same_headline_and_context(claude):
    from tests.fake_anthropic import reply_plan

    fake, planner, s = claude
    fake.enqueue(reply_plan(OHIO_UNEMPLOYMENT, ["Unemployment rate B23025"], "big", comparison="none"))
    answer = agent.ask("unemployment rate in Ohio", s, planner=planner, record=False)
    assert answer.answered and answer.planner == "claude"
    rate = float(answer.result.rows[0][1])
    assert answer.headline == f"Unemployment rate in Ohio: {rate:.1f}% (2019-2023)"
    offline = agent.ask("unemployment rate in Ohio", s, planner="offline", record=False)
    assert answer.context == offline.context and [c["level"] for c in answer.context] == ["nation"]
    fake.enqueue(reply_plan(TWO_STATES + " ORDER BY unemployment_rate_pct DESC", [], "bar", comparison="places"))
    answer = agent.ask("compare the unemployment rate of Ohio and Mississippi", s, planner=planner, record=False)
    (hi, x), (lo, y) = answer.result.rows
    assert float(x) > float(y)
    assert answer.headline == (f"Unemployment rate: {hi} {float(x):.1f}%, higher than {lo} {float(y):.1f}% "
                               "(2019-2023)") and answer.context == []


def test_a_profile_can_be_rated_but_not_verified(settings):
    from sage import feedback, verified
    from sage.errors import QuestionError
    from sage.roles import Role

    answer = agent.ask("Ohio", settings, planner="offline")
    assert answer.id is not None and answer.display_hint == "profile"
    with pytest.raises(QuestionError, match="is a place's profile"):
        verified.add(settings, answer.id, role=Role.CURATOR)
    assert feedback.rate(settings, answer.id, "up", role=Role.CURATOR) > 0
