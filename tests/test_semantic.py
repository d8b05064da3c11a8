"""The census semantic layer: every measure is well defined against the shipped variables, runs on the real
database at each level it claims, returns plausible values, and is found by the words people use for it."""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import pytest

from sage import execute, guard
from sage.census.mentions import find_gap, find_mentions, match_measures
from sage.census.semantic import (
    CONTROLLED_TOTALS,
    Measure,
    load_measures,
    measure_by_name,
    shipped_measures,
)
from sage.settings import PROJECT_ROOT
from sage.text import normalize

VARIABLES_CSV = PROJECT_ROOT / "data" / "acs" / "variables.csv"
CATALOG_CSV = PROJECT_ROOT / "data" / "acs" / "variables_catalog_acs2023_5yr.csv.gz"


def _variables() -> dict[str, dict]:
    with Path(VARIABLES_CSV).open(encoding="utf-8") as fh:
        return {row["code"]: row for row in csv.DictReader(fh)}


ALL = load_measures()
MEASURES = shipped_measures()
IDS = [m.name for m in MEASURES]
FETCHABLE = [m for m in ALL if m.requires_fetch]


# ---------------------------------------------------------------------------------------------- definitions


@pytest.mark.parametrize("m", MEASURES, ids=IDS)
def test_every_code_is_a_shipped_variable_of_the_measures_vintage(m: Measure):
    variables = _variables()
    for code in m.codes:
        assert code in variables, f"{m.name}: {code} is not in data/acs/variables.csv"
        assert variables[code]["vintage"] == m.vintage, f"{m.name}: {code} is {variables[code]['vintage']}"


@pytest.mark.parametrize("m", [m for m in ALL if m.is_rate], ids=[m.name for m in ALL if m.is_rate])
def test_rates_divide_within_one_table_or_by_a_controlled_total(m: Measure):
    tables = {c.split("_")[0] for c in (*m.numerator, *m.subtract)}
    den_tables = {c.split("_")[0] for c in m.denominator}
    assert len(tables) == 1
    assert den_tables == tables or set(m.denominator) <= CONTROLLED_TOTALS, m.formula
    sql = m.sql_expression("e")
    assert "NULLIF(" in sql and sql.startswith("ROUND(100.0 * ")
    assert m.unit == "percent" and m.aggregable


def test_measures_over_unshipped_tables_name_catalog_variables_and_wait_for_a_fetch(settings):
    assert FETCHABLE, "measures.yaml declares measures for tables a fetch adds"
    with gzip.open(CATALOG_CSV, "rt", encoding="utf-8") as fh:
        catalog = {row["code"]: row for row in csv.DictReader(fh)}
    shipped = _variables()
    for m in FETCHABLE:
        assert all(code in catalog and code not in shipped for code in m.codes), m.name
        assert len({catalog[code]["table_id"] for code in m.codes}) == 1, m.name
    loaded = {m.name for m in load_measures(settings)}
    assert not loaded & {m.name for m in FETCHABLE}, "inactive until their table is fetched"


def test_formula_names_the_codes_and_the_arithmetic():
    insured = measure_by_name("insured_share")
    assert insured.formula == "100 * (B27020_003E + B27020_009E + B27020_014E) / (B27020_001E)"
    uninsured = measure_by_name("uninsured_share")
    assert uninsured.formula == "100 * (B27020_001E - (B27020_003E + B27020_009E + B27020_014E)) / (B27020_001E)"
    assert measure_by_name("median_household_income").formula == "B19013_001E"
    assert "B19013_001E" in measure_by_name("median_household_income").describe()


def test_medians_and_indexes_are_not_aggregable_but_counts_are():
    for name in ("median_household_income", "median_age", "gini_index", "per_capita_income", "median_home_value"):
        assert not measure_by_name(name).aggregable, name
    for name in ("population", "housing_units", "people_in_poverty", "bachelors_or_higher"):
        assert measure_by_name(name).additive, name


def test_names_and_columns_are_unique():
    assert len({m.name for m in ALL}) == len(ALL)
    assert len({m.column for m in ALL}) == len(ALL)


# ---------------------------------------------------------------------------------------------- matching


@pytest.mark.parametrize(
    "question, expected",
    [
        ("what fraction of Kansans are below the poverty level", ["poverty_rate"]),
        ("number of residents living in poverty in Utah", ["people_in_poverty"]),
        ("how many folks lack health insurance in Iowa", ["uninsured_population"]),
        ("percent without health insurance in Iowa", ["uninsured_share"]),
        ("insurance coverage rate, Utah", ["insured_share"]),
        ("median income of white householders in Utah", ["median_household_income_white"]),
        ("per-capita income in Utah", ["per_capita_income"]),
        ("unemplyment in Idaho", ["unemployment_rate"]),
        ("how many unemployed workers in Idaho", ["unemployed"]),
        ("Latino residents as a share of Idaho", ["hispanic_share"]),
        ("the Latino population of Idaho", ["hispanic_population"]),
        ("share of grown-ups holding a 4-year degree or higher", ["bachelors_or_higher_share"]),
        ("share with an advanced degree", ["graduate_degree_share"]),
        ("how many grad students in Ohio", ["graduate_enrollment"]),
        ("rent and home values in Ohio", ["median_gross_rent", "median_home_value"]),
        ("Gini coefficient of Ohio counties", ["gini_index"]),
        ("broadband adoption in Ohio", ["internet_subscription_share"]),
    ],
)
def test_match_measures_by_synonym_family_and_spelling(question, expected):
    assert [m.name for m in match_measures(question, MEASURES)] == expected


def test_weak_words_count_only_when_nothing_else_is_named():
    assert [m.name for m in match_measures("how many people live in Utah")] == ["population"]
    assert [m.name for m in match_measures("how many people in Utah have a doctorate")] == ["doctorate"]
    mentions = find_mentions(normalize("how many people in Utah have a doctorate", lower=True), MEASURES)
    assert any(m.weak and m.measure.name == "population" for m in mentions)


def test_nothing_is_matched_in_unrelated_text():
    assert match_measures("tell me a joke about cats", MEASURES) == []


# ---------------------------------------------------------------------------------------------- on the database


def test_load_measures_reads_levels_coverage_and_moe_from_the_database(settings):
    measures = {m.name: m for m in load_measures(settings)}
    assert set(measures) == {m.name for m in MEASURES}, "exactly the measures over shipped variables"
    # the shipped places carry total population and housing units (issue 17), and nothing else
    assert measures["population"].levels == ("state", "county", "place")
    assert measures["housing_units"].levels == ("state", "county", "place")
    assert measures["median_household_income"].levels == ("county",)
    assert measures["median_household_income_white"].levels == ("state",)
    assert measures["median_household_income"].moe_levels == ("county",)
    assert measures["black_share"].moe_levels == ("county",), "B01003_001E is a controlled total"
    assert measures["poverty_rate"].moe_levels == ()
    poverty = measures["poverty_rate"]
    assert not poverty.has_rows("state", "02") and not poverty.has_rows("county", "15")
    assert poverty.has_rows("state", "28") and poverty.has_rows("county", "39")
    assert not measures["internet_subscription_share"].has_rows("state", "72")


def _run(sql: str, settings):
    return execute.run(guard.check(sql, max_rows=settings.max_rows), settings)


PLAUSIBLE = {
    "percent": (0.0, 100.0),
    "count": (0.0, 400_000_000.0),
    "dollars": (100.0, 5_000_000.0),  # monthly rents to home values
    "years": (10.0, 90.0),
    "index": (0.0, 1.0),
}


@pytest.mark.parametrize("m", MEASURES, ids=IDS)
def test_every_measure_runs_at_each_level_it_claims_with_plausible_values(m: Measure, settings):
    loaded = next(x for x in load_measures(settings) if x.name == m.name)
    assert loaded.levels, f"{m.name} has rows at no level"
    low, high = PLAUSIBLE[m.unit]
    codes = ", ".join(f"'{c}'" for c in m.codes)
    for level in loaded.levels:
        moe = loaded.moe_sql_expression("e") if level in loaded.moe_levels else None
        moe_col = f", {moe} AS moe" if moe else ", NULL::numeric AS moe"
        sql = (
            f"SELECT count(v), min(v), max(v), min(moe), count(moe) FROM ("
            f"SELECT g.geo_id, {loaded.sql_expression('e')} AS v{moe_col} "
            "FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id "
            f"WHERE g.level = '{level}' AND e.variable_code IN ({codes}) GROUP BY g.geo_id) AS per_place"
        )
        n, vmin, vmax, moe_min, moe_n = _run(sql, settings).rows[0]
        expected_places = 45 if level == "state" else 3000
        assert n >= expected_places, f"{m.name} at {level}: only {n} places"
        assert low <= vmin <= vmax <= high, f"{m.name} at {level}: values {vmin}..{vmax} outside {low}..{high}"
        if moe:
            assert moe_n >= expected_places and moe_min >= 0, f"{m.name}: MOE {moe_min} over {moe_n} places"


def test_complementary_rates_add_up_to_100(settings):
    insured = measure_by_name("insured_share").sql_expression("e", rounded=False)
    uninsured = measure_by_name("uninsured_share").sql_expression("e", rounded=False)
    sql = (
        f"SELECT max(abs(ins + unins - 100)) FROM (SELECT {insured} AS ins, {uninsured} AS unins "
        "FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id "
        "WHERE g.level = 'state' AND e.variable_code LIKE 'B27020%' GROUP BY g.geo_id) AS x"
    )
    assert float(_run(sql, settings).rows[0][0]) < 1e-9


# ---------------------------------------------------------------------------------------------- gaps


@pytest.mark.parametrize(
    "question, topic",
    [
        ("How long is the commute in Ohio?", "commuting"),
        ("share of renters in Idaho", "tenure"),
        ("number of veterans in Utah", "this topic"),
        ("How many kids live in Utah?", "age group"),
    ],
)
def test_find_gap_names_the_missing_topic(question, topic):
    gap, words = find_gap(question)
    assert topic in gap.topic and words


def test_words_inside_a_measure_phrase_are_not_a_gap():
    assert find_gap("median value of owner-occupied homes in Utah") is None
    assert find_gap("unemployment rate in Utah") is None


def _question_texts() -> list[str]:
    """Every question of the regression and probe files, normalised as the planner reads them."""
    import json

    texts = []
    for path in sorted((PROJECT_ROOT / "tests" / "data").rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else {}
            turns = [row, *(t for t in row.get("turns") or [] if isinstance(t, dict))]
            texts += [normalize(t["question"], lower=True) for t in turns if isinstance(t.get("question"), str)]
    return texts


def test_synonyms_are_found_where_their_regex_finds_them():
    """The synonym matcher finds phrases with ``str.find`` (no regex to compile per synonym): on every question
    of the test files, and on the same with doubled spaces, plural endings and word joins, it gives exactly the
    spans of the regex it stands for."""
    import re

    from sage.census.mentions import _patterns

    texts = _question_texts()
    texts += [t.replace(" ", "  ") for t in texts[:300]]
    texts += ["incomes", "households,", "poverty ratees", "median household incomeses", "populations1",
              "x-population", "median\tage", "the population\nof ohio"]
    compared = 0
    for phrase, _m, words, _weak in _patterns(shipped_measures()):
        for text in texts:
            if words.split(None, 1)[0] in text:
                assert phrase.spans(text) == [mt.span() for mt in re.finditer(phrase.source, text)], (words, text)
                compared += 1
    assert compared > 10_000
