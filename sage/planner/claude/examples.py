"""The Claude planner's worked examples: the questions, the answers expected, and their rendering as text.

They are the second part of the cached system prefix (after the rules of :mod:`sage.planner.claude.prompt`), one per
kind of question, plus two worked follow-ups.  They are data of their own — every SQL uses variables that exist in
``data/acs/variables.csv`` and is run against the database by ``tests/test_prompt.py``, and the places block each
came with is checked against the place reader — so they live apart from the rules and the per-question message.
A follow-up's earlier turns are rendered by :func:`sage.planner.claude.blocks.format_conversation`, exactly as the
conversation block of a real question shows them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from .blocks import format_conversation

#: a worked example: a question and the answer expected, in the output JSON shape
Example = tuple[str, dict[str, Any]]


def _plan(sql: str, assumptions: Sequence[str], hint: str, standalone: str = "",
          decline: dict[str, Any] | None = None, comparison: str = "none",
          periods: Sequence[str] = ()) -> dict[str, Any]:
    plan: dict[str, Any] = {"standalone": standalone, "comparison": comparison, "periods": list(periods), "sql": sql,
                            "assumptions": list(assumptions), "displayHint": hint}
    if decline is not None:
        plan["decline"] = decline
    return plan


#: Worked examples, one per kind of question (the comment above each says what it teaches).  Every SQL uses shipped
#: variables and returns rows; ``tests/test_prompt.py`` runs each through the guard and the database.
FEW_SHOT_EXAMPLES: list[Example] = [
    # lookup: one county value, exact place match, the margin of error next to it
    (
        "What is the median household income in Multnomah County, Oregon?",
        _plan(
            "SELECT g.county_name, g.state_name, e.estimate AS median_household_income,\n"
            "  e.margin_error AS median_household_income_moe\n"
            "FROM public.estimates e\n"
            "JOIN public.geography g ON g.geo_id = e.geo_id\n"
            "WHERE g.level = 'county' AND g.county_name = 'Multnomah County' AND g.state_abbr = 'OR'\n"
            "  AND e.variable_code = 'B19013_001E'",
            [
                "Median household income is B19013_001E, ACS 5-year 2019-2023, in 2023 inflation-adjusted dollars.",
                "Matched Multnomah County by its exact name within Oregon.",
                "The published 90% margin of error is shown next to the estimate.",
            ],
            "big",
            "median household income, Multnomah County, OR",
        ),
    ),
    # rank: FILTER pivot, a rate inside one 2018-2022 table, the coverage gap said out loud
    (
        "Which 5 states have the largest share of people without health insurance?",
        _plan(
            "SELECT g.state_name,\n"
            "  ROUND(100.0 * (SUM(e.estimate) FILTER (WHERE e.variable_code = 'B27020_001E')\n"
            "    - SUM(e.estimate) FILTER (WHERE e.variable_code IN ('B27020_003E', 'B27020_009E', 'B27020_014E')))\n"
            "    / NULLIF(SUM(e.estimate) FILTER (WHERE e.variable_code = 'B27020_001E'), 0), 1) AS uninsured_pct\n"
            "FROM public.estimates e\n"
            "JOIN public.geography g ON g.geo_id = e.geo_id\n"
            "WHERE g.level = 'state'\n"
            "  AND e.variable_code IN ('B27020_001E', 'B27020_003E', 'B27020_009E', 'B27020_014E')\n"
            "GROUP BY g.geo_id, g.state_name\n"
            "ORDER BY uninsured_pct DESC NULLS LAST\n"
            "LIMIT 5",
            [
                "Uninsured share = 100 * (B27020_001E - insured) / B27020_001E, where insured = native born "
                "(B27020_003E) + naturalized (B27020_009E) + noncitizens (B27020_014E) with coverage; ACS 5-year "
                "2018-2022, civilian noninstitutionalized population.",
                "This table covers only the 48 contiguous states and DC, so Alaska, Hawaii and Puerto Rico are not "
                "ranked.",
                "The rate is computed from counts, so no margin of error is available.",
            ],
            "bar",
            "top 5 states by share of people without health insurance",
        ),
    ),
    # threshold: a computed rate compared unrounded, counties within one state
    (
        "Which Florida counties have an unemployment rate above 6%?",
        _plan(
            "WITH rates AS (\n"
            "  SELECT g.county_name, g.state_name,\n"
            "    100.0 * SUM(e.estimate) FILTER (WHERE e.variable_code = 'B23025_005E')\n"
            "      / NULLIF(SUM(e.estimate) FILTER (WHERE e.variable_code = 'B23025_003E'), 0) AS rate\n"
            "  FROM public.estimates e\n"
            "  JOIN public.geography g ON g.geo_id = e.geo_id\n"
            "  WHERE g.level = 'county' AND g.state_abbr = 'FL'\n"
            "    AND e.variable_code IN ('B23025_005E', 'B23025_003E')\n"
            "  GROUP BY g.geo_id, g.county_name, g.state_name\n"
            ")\n"
            "SELECT county_name, state_name, ROUND(rate, 1) AS unemployment_rate_pct\n"
            "FROM rates\n"
            "WHERE rate > 6\n"
            "ORDER BY rate DESC NULLS LAST",
            [
                "Unemployment rate = unemployed (B23025_005E) / civilian labor force (B23025_003E), ACS 5-year "
                "2019-2023.",
                "'Above 6%' is tested on the unrounded rate; every matching Florida county is listed.",
            ],
            "table",
            "Florida counties with an unemployment rate above 6%",
        ),
    ),
    # map: FIPS + name + one value, every county of a state, no LIMIT
    (
        "Map the median gross rent of every county in Colorado",
        _plan(
            "SELECT g.fips, g.county_name, e.estimate AS median_gross_rent\n"
            "FROM public.estimates e\n"
            "JOIN public.geography g ON g.geo_id = e.geo_id\n"
            "WHERE g.level = 'county' AND g.state_name = 'Colorado' AND e.variable_code = 'B25064_001E'\n"
            "ORDER BY median_gross_rent DESC NULLS LAST",
            [
                "Median gross rent is B25064_001E, ACS 5-year 2019-2023, in 2023 dollars.",
                "Counties whose published median was suppressed (sample too small) have no row and stay blank.",
                "The county FIPS code is selected so each value can be drawn on the map.",
            ],
            "map",
            "median gross rent of every county in Colorado, as a map",
        ),
    ),
    # compare: named places on two measures of one table
    (
        "How do Arizona, Nevada and New Mexico compare on Hispanic and non-Hispanic White shares?",
        _plan(
            "SELECT g.state_name,\n"
            "  ROUND(100.0 * SUM(e.estimate) FILTER (WHERE e.variable_code = 'B03002_012E')\n"
            "    / NULLIF(SUM(e.estimate) FILTER (WHERE e.variable_code = 'B03002_001E'), 0), 1) AS hispanic_pct,\n"
            "  ROUND(100.0 * SUM(e.estimate) FILTER (WHERE e.variable_code = 'B03002_003E')\n"
            "    / NULLIF(SUM(e.estimate) FILTER (WHERE e.variable_code = 'B03002_001E'), 0), 1)"
            " AS white_non_hispanic_pct\n"
            "FROM public.estimates e\n"
            "JOIN public.geography g ON g.geo_id = e.geo_id\n"
            "WHERE g.level = 'state' AND g.state_abbr IN ('AZ', 'NV', 'NM')\n"
            "  AND e.variable_code IN ('B03002_001E', 'B03002_003E', 'B03002_012E')\n"
            "GROUP BY g.geo_id, g.state_name\n"
            "ORDER BY g.state_name",
            [
                "Shares of the B03002 total (B03002_001E): Hispanic or Latino (B03002_012E) and not Hispanic, "
                "White alone (B03002_003E); ACS 5-year 2019-2023.",
                "Matched the three states by postal abbreviation.",
                "The shipped B03002 rows have no margins of error, so the shares have none.",
            ],
            "grouped",
            "Hispanic and non-Hispanic White shares of the population, Arizona, Nevada and New Mexico",
            comparison="places",
        ),
    ),
    # snapshot: several measures of one place in one row (MAX for medians: nothing is added up)
    (
        "Housing snapshot for Dane County, WI: number of homes, median home value and median rent",
        _plan(
            "SELECT g.county_name, g.state_name,\n"
            "  SUM(e.estimate) FILTER (WHERE e.variable_code = 'B25001_001E') AS housing_units,\n"
            "  MAX(e.estimate) FILTER (WHERE e.variable_code = 'B25077_001E') AS median_home_value,\n"
            "  MAX(e.estimate) FILTER (WHERE e.variable_code = 'B25064_001E') AS median_gross_rent\n"
            "FROM public.estimates e\n"
            "JOIN public.geography g ON g.geo_id = e.geo_id\n"
            "WHERE g.level = 'county' AND g.county_name = 'Dane County' AND g.state_abbr = 'WI'\n"
            "  AND e.variable_code IN ('B25001_001E', 'B25077_001E', 'B25064_001E')\n"
            "GROUP BY g.geo_id, g.county_name, g.state_name",
            [
                "Read 'number of homes' as housing units (B25001_001E) and 'median rent' as median gross rent "
                "(B25064_001E); median home value is B25077_001E (owner-occupied units). All ACS 5-year 2019-2023, "
                "dollars in 2023 terms.",
                "Matched Dane County within Wisconsin.",
            ],
            "statrow",
            "housing units, median home value and median gross rent, Dane County, WI",
        ),
    ),
    # US aggregate: an additive count summed over the 51 state rows
    (
        "How many people in the United States hold a doctorate?",
        _plan(
            "SELECT SUM(e.estimate) AS doctorate_holders\n"
            "FROM public.estimates e\n"
            "JOIN public.geography g ON g.geo_id = e.geo_id\n"
            "WHERE g.level = 'state' AND g.state_fips <> '72' AND e.variable_code = 'B15003_025E'",
            [
                "Doctorate degree holders among people 25 and over (B15003_025E), ACS 5-year 2019-2023.",
                "There are no nation rows: 'United States' is the sum of the 50 state rows plus DC, excluding "
                "Puerto Rico.",
            ],
            "big",
            "people 25 and over holding a doctorate, the US",
        ),
    ),
    # decline: a state median asked of county-only medians
    (
        "What is the median home value in Colorado?",
        _plan(
            "",
            [
                "Median home value (B25077_001E) is published here for counties only; a state median cannot be "
                "computed by averaging or adding county medians.",
                "The data can answer the median home value of each Colorado county, or which Colorado counties have "
                "the highest values.",
            ],
            "table",
            "median home value, Colorado",
        ),
    ),
    # decline: a topic whose table is listed as not loaded (here B25003): name it, substitute nothing
    (
        "What share of homes in Ohio are owner-occupied?",
        _plan(
            "",
            [
                "Homeownership needs ACS table B25003 (Tenure: owner- and renter-occupied housing units), listed as "
                "not loaded; no loaded variable counts owners and renters.",
                "Once B25003 is loaded, the share is owner-occupied / occupied housing units for Ohio.",
            ],
            "table",
            "share of homes that are owner-occupied, Ohio",
            decline={"kind": "needs_fetch", "tables": ["B25003"]},
        ),
    ),
    # a Census place: matched by the GEO_ID the places block gives; places have population and housing units only
    (
        "How many people live in Seattle?",
        _plan(
            "SELECT g.name, e.estimate AS population\n"
            "FROM public.estimates e\n"
            "JOIN public.geography g ON g.geo_id = e.geo_id\n"
            "WHERE g.level = 'place' AND g.geo_id = '1600000US5363000' AND e.variable_code = 'B01003_001E'",
            [
                "Total population is B01003_001E, ACS 5-year 2019-2023.",
                "Seattle is the Census place Seattle city, Washington (1600000US5363000), the city itself, not King "
                "County.",
                "The shipped place rows have no margins of error.",
            ],
            "big",
            "population, Seattle city, WA",
        ),
    ),
    # a place asked a figure places do not have: the fetch that adds it, never the county instead
    (
        "What is the median household income in Austin, TX?",
        _plan(
            "",
            [
                "The data has only population and housing units for Census places such as Austin city, Texas; "
                "median household income (B19013) is loaded for states and counties only.",
                "Loading B19013 for the places of Texas answers it; Travis County is not the city.",
            ],
            "table",
            "median household income, Austin city, TX",
            decline={"kind": "needs_fetch", "tables": ["B19013"], "geographies": ["place"], "states": ["TX"]},
        ),
    ),
    # an ambiguous name: never guessed; the question asked again about each reading, largest first
    (
        "What is the population of Springfield?",
        _plan(
            "",
            [
                "“Springfield” is the name of 22 Census places (the largest in Missouri, Massachusetts and "
                "Illinois); which one is meant?",
            ],
            "table",
            "population, Springfield",
            decline={"kind": "ambiguous", "suggestions": [
                "What is the population of Springfield city, MO?", "What is the population of Springfield city, MA?",
                "What is the population of Springfield city, IL?", "What is the population of Springfield city, OR?",
                "What is the population of Springfield city, OH?", "What is the population of Springfield CDP, VA?"]},
        ),
    ),
    # a fetched level: tracts filtered by their state and county codes, ranked (there are hundreds)
    (
        "Which 5 census tracts in Travis County, TX have the highest median household income?",
        _plan(
            "SELECT g.name, e.estimate AS median_household_income,\n"
            "  e.margin_error AS median_household_income_moe\n"
            "FROM public.estimates e\n"
            "JOIN public.geography g ON g.geo_id = e.geo_id\n"
            "WHERE g.level = 'tract' AND g.state_fips = '48' AND g.county_fips = '453'\n"
            "  AND e.variable_code = 'B19013_001E'\n"
            "ORDER BY e.estimate DESC NULLS LAST\n"
            "LIMIT 5",
            [
                "Median household income is B19013_001E, ACS 5-year 2019-2023, in 2023 dollars; its census tract "
                "rows were loaded with census fetch.",
                "Tracts of Travis County, TX: state FIPS 48, county FIPS 453; tracts whose median was not "
                "published are left out.",
                "The published 90% margins of error are shown next to the estimates.",
            ],
            "bar",
            "top 5 census tracts of Travis County, TX by median household income",
        ),
    ),
    # a change over time: two periods that do not overlap, real dollars by the CPI, the change's margins
    (
        "How has real median household income changed in Travis County, TX since 2014-2018?",
        _plan(
            "WITH v AS (\n"
            "  SELECT g.county_name, g.state_name,\n"
            "    MAX(b.estimate) FILTER (WHERE b.vintage = '2014-2018') AS earlier,\n"
            "    MAX(b.margin_error) FILTER (WHERE b.vintage = '2014-2018') AS earlier_moe,\n"
            "    MAX(b.estimate) FILTER (WHERE b.vintage = '2019-2023') AS later,\n"
            "    MAX(b.margin_error) FILTER (WHERE b.vintage = '2019-2023') AS later_moe\n"
            "  FROM public.estimates_by_vintage b\n"
            "  JOIN public.geography g ON g.geo_id = b.geo_id\n"
            "  WHERE g.level = 'county' AND g.geo_id = '0500000US48453'\n"
            "    AND b.variable_code = 'B19013_001E' AND b.vintage IN ('2014-2018', '2019-2023')\n"
            "  GROUP BY g.geo_id, g.county_name, g.state_name\n"
            "), cpi AS (\n"
            "  SELECT MAX(c.index) FILTER (WHERE c.year = 2023) / MAX(c.index) FILTER (WHERE c.year = 2018) AS f\n"
            "  FROM public.cpi_u_rs c\n"
            ")\n"
            "SELECT v.county_name, v.state_name,\n"
            "  ROUND(v.earlier * cpi.f) AS income_2014_2018,\n"
            "  ROUND(v.earlier_moe * cpi.f) AS income_2014_2018_moe,\n"
            "  v.later AS income_2019_2023, v.later_moe AS income_2019_2023_moe,\n"
            "  v.later - v.earlier * cpi.f AS change,\n"
            "  moe_difference(v.later_moe, v.earlier_moe * cpi.f) AS change_moe,\n"
            "  ROUND(100.0 * (v.later - v.earlier * cpi.f) / NULLIF(v.earlier * cpi.f, 0), 1) AS pct_change,\n"
            "  ROUND(moe_pct_change(v.earlier * cpi.f, v.later, v.earlier_moe * cpi.f, v.later_moe), 1)"
            " AS pct_change_moe\n"
            "FROM v CROSS JOIN cpi",
            [
                "Median household income (B19013_001E) in the ACS 5-year periods 2014-2018 and 2019-2023, which do "
                "not overlap.",
                "Real change: the 2014-2018 estimate and its margin of error are put in 2023 dollars with the "
                "R-CPI-U-RS (index 2023 / 2018 = 449.3 / 369.1).",
                "Margins: moe_difference for the change, moe_pct_change for the percent change (90%).",
            ],
            "statrow",
            "change in real median household income, Travis County, TX, 2014-2018 to 2019-2023",
            comparison="change",
            periods=("2014-2018", "2019-2023"),
        ),
    ),
    # two counties side by side: by GEO_ID, each value with its margin in a _moe column, tested by the application
    (
        "Compare median household income in Travis County and Williamson County, Texas",
        _plan(
            "SELECT g.county_name, g.state_name, e.estimate AS median_household_income,\n"
            "  e.margin_error AS median_household_income_moe\n"
            "FROM public.estimates e\n"
            "JOIN public.geography g ON g.geo_id = e.geo_id\n"
            "WHERE g.level = 'county' AND g.geo_id IN ('0500000US48453', '0500000US48491')\n"
            "  AND e.variable_code = 'B19013_001E'\n"
            "ORDER BY median_household_income DESC NULLS LAST",
            [
                "Median household income is B19013_001E, ACS 5-year 2019-2023, in 2023 dollars.",
                "Travis County and Williamson County, Texas, matched by their GEO_IDs.",
                "The published 90% margins of error are shown next to the estimates.",
            ],
            "bar",
            "median household income, Travis County, TX and Williamson County, TX",
            comparison="places",
        ),
    ),
]


#: a worked follow-up: the earlier turns (``question``, ``standalone``, ``sql``, ``assumptions``, as the
#: <conversation> block shows them), the follow-up, and the answer expected
FollowUpExample = tuple[list[dict[str, Any]], str, dict[str, Any]]

_UNINSURED_TOP5 = FEW_SHOT_EXAMPLES[1]
_MULTNOMAH = FEW_SHOT_EXAMPLES[0]


def _turn(example: Example) -> dict[str, Any]:
    question, plan = example
    return {"question": question, "standalone": plan["standalone"], "sql": plan["sql"],
            "assumptions": plan["assumptions"]}


#: Worked follow-ups (shown after the examples, in the cached prefix): a place swapped in the conversation's state,
#: and a choice among the previous answer's places.  ``tests/test_prompt.py`` runs their SQL too.
FOLLOWUP_EXAMPLES: list[FollowUpExample] = [
    # a place swapped: everything else kept; a county name found in many states read in the conversation's state
    (
        [_turn(_MULTNOMAH)],
        "and Washington County?",
        _plan(
            "SELECT g.county_name, g.state_name, e.estimate AS median_household_income,\n"
            "  e.margin_error AS median_household_income_moe\n"
            "FROM public.estimates e\n"
            "JOIN public.geography g ON g.geo_id = e.geo_id\n"
            "WHERE g.level = 'county' AND g.county_name = 'Washington County' AND g.state_abbr = 'OR'\n"
            "  AND e.variable_code = 'B19013_001E'",
            [
                "Median household income is B19013_001E, ACS 5-year 2019-2023, in 2023 inflation-adjusted dollars.",
                "Washington County exists in many states; read as the one in Oregon, the state of the conversation.",
                "The published 90% margin of error is shown next to the estimate.",
            ],
            "big",
            "median household income, Washington County, OR",
        ),
    ),
    # "which of those": the previous answer's places as a CTE, the new measure ranked among them
    (
        [_turn(_UNINSURED_TOP5)],
        "which of those has the highest unemployment rate?",
        _plan(
            "WITH prev AS (\n"
            "  SELECT g.geo_id\n"
            "  FROM public.estimates e\n"
            "  JOIN public.geography g ON g.geo_id = e.geo_id\n"
            "  WHERE g.level = 'state'\n"
            "    AND e.variable_code IN ('B27020_001E', 'B27020_003E', 'B27020_009E', 'B27020_014E')\n"
            "  GROUP BY g.geo_id\n"
            "  ORDER BY (SUM(e.estimate) FILTER (WHERE e.variable_code = 'B27020_001E')\n"
            "    - SUM(e.estimate) FILTER (WHERE e.variable_code IN ('B27020_003E', 'B27020_009E', 'B27020_014E')))\n"
            "    / NULLIF(SUM(e.estimate) FILTER (WHERE e.variable_code = 'B27020_001E'), 0) DESC NULLS LAST\n"
            "  LIMIT 5\n"
            ")\n"
            "SELECT g.state_name,\n"
            "  ROUND(100.0 * SUM(e.estimate) FILTER (WHERE e.variable_code = 'B23025_005E')\n"
            "    / NULLIF(SUM(e.estimate) FILTER (WHERE e.variable_code = 'B23025_003E'), 0), 1)"
            " AS unemployment_rate_pct\n"
            "FROM public.estimates e\n"
            "JOIN public.geography g ON g.geo_id = e.geo_id\n"
            "WHERE g.level = 'state' AND g.geo_id IN (SELECT geo_id FROM prev)\n"
            "  AND e.variable_code IN ('B23025_005E', 'B23025_003E')\n"
            "GROUP BY g.geo_id, g.state_name\n"
            "ORDER BY unemployment_rate_pct DESC NULLS LAST\n"
            "LIMIT 1",
            [
                "The 5 states are those of the previous answer (largest uninsured share, ACS 5-year 2018-2022), "
                "recomputed in a CTE.",
                "Unemployment rate = unemployed (B23025_005E) / civilian labor force (B23025_003E), ACS 5-year "
                "2019-2023.",
            ],
            "big",
            "of the 5 states with the largest share of people without health insurance, the one with the highest "
            "unemployment rate",
        ),
    ),
]


#: the places block each worked example came with: what :func:`~sage.planner.claude.blocks.format_places` gives for it
#: on the shipped data (the tract question after a fetch of Texas's tracts), without the levels line where the level
#: does not matter; ``tests/test_prompt.py`` checks them against the reader
EXAMPLE_PLACES: dict[str, str] = {
    "How many people live in Seattle?": (
        "- “Seattle” → place 1600000US5363000 'Seattle city, Washington' (has: population, housing units)"),
    "What is the median household income in Austin, TX?": (
        "- “Austin, TX” → place 1600000US4805000 'Austin city, Texas' (has: population, housing units)"),
    "What is the population of Springfield?": (
        "- “Springfield” → ambiguous: Springfield city, MO (169,432) | Springfield city, MA (154,751) | Springfield "
        "city, IL (113,714) | Springfield city, OR (61,642) | Springfield city, OH (58,410) | Springfield CDP, VA "
        "(30,894); 22 readings in all; the largest shown"),
    "Which 5 census tracts in Travis County, TX have the highest median household income?": (
        "- “Travis County” → county 0500000US48453 'Travis County, Texas'\n"
        "- “census tracts” → level tract: has rows\n"
        "Levels with rows: nation, state, county, place, tract; none yet: cbsa, cd, zcta (census fetch "
        "--geographies)."),
    "How has real median household income changed in Travis County, TX since 2014-2018?": (
        "- “Travis County” → county 0500000US48453 'Travis County, Texas'"),
    "Compare median household income in Travis County and Williamson County, Texas": (
        "- “Travis County” → county 0500000US48453 'Travis County, Texas'\n"
        "- “Williamson County” → county 0500000US48491 'Williamson County, Texas'"),
}


def format_examples(examples: Iterable[Example] = FEW_SHOT_EXAMPLES,
                    followups: Iterable[FollowUpExample] | None = None) -> str:
    """Render worked examples as text: each a question and the exact JSON answer expected; then the worked
    follow-ups (:data:`FOLLOWUP_EXAMPLES` unless given), each with its earlier turns as the conversation block
    shows them.

    The Claude planner puts this in the static (cached) part of its request.
    """
    parts = ["# Worked examples", "Questions about the data described above, with the JSON answer expected for each "
             "(and the places block the question came with, where it matters)."]
    n = 0
    for n, (question, plan) in enumerate(examples, 1):
        places = f"<places>\n{EXAMPLE_PLACES[question]}\n</places>\n" if question in EXAMPLE_PLACES else ""
        parts.append(f"\n## Example {n}\n{places}Question: {question}\nAnswer:\n{json.dumps(dict(plan), indent=1)}")
    for i, (turns, question, plan) in enumerate(FOLLOWUP_EXAMPLES if followups is None else followups, n + 1):
        parts.append(f"\n## Example {i} (a follow-up)\n<conversation>\n{format_conversation(turns)}\n</conversation>"
                     f"\nQuestion: {question}\nAnswer:\n{json.dumps(dict(plan), indent=1)}")
    return "\n".join(parts)


__all__ = [
    "EXAMPLE_PLACES",
    "Example",
    "FEW_SHOT_EXAMPLES",
    "FOLLOWUP_EXAMPLES",
    "FollowUpExample",
    "format_examples",
]
