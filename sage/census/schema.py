"""DDL for the three census tables, their comments, and the internal ``sage`` schema.

The ``COMMENT ON`` texts matter: introspection turns them into the descriptions that are embedded and shown to the
planners, so they say what a row is, the units, and the traps (counts vs medians, vintages, null margins).
"""

from __future__ import annotations

CATEGORIES = (
    "income",
    "poverty",
    "housing",
    "employment",
    "demographics",
    "education",
    "transportation",
    "health_insurance",
)

_CATEGORY_LIST = ", ".join(f"'{c}'" for c in CATEGORIES)

#: conversations, feedback and verified answers (issue 15): the query log's follow-up columns (added to a log made
#: before them), the verified-answer library and the feedback.  Internal like the rest of ``sage``: the reader role
#: has no USAGE on the schema and no privilege on its tables.  Safe to run again; :mod:`sage.querylog` also runs it
#: once per process on a database set up before these existed.
CONVERSATION_DDL = """
ALTER TABLE sage.questions ADD COLUMN IF NOT EXISTS parent_id bigint REFERENCES sage.questions (id) ON DELETE SET NULL;
ALTER TABLE sage.questions ADD COLUMN IF NOT EXISTS standalone text;
ALTER TABLE sage.questions ADD COLUMN IF NOT EXISTS frame jsonb;
ALTER TABLE sage.questions ADD COLUMN IF NOT EXISTS decline_kind text;
ALTER TABLE sage.questions ADD COLUMN IF NOT EXISTS verified_id bigint;
CREATE INDEX IF NOT EXISTS questions_parent_idx ON sage.questions (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS questions_verified_idx ON sage.questions (verified_id) WHERE verified_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS sage.verified_answers (
    id             bigserial PRIMARY KEY,
    question_id    bigint UNIQUE REFERENCES sage.questions (id) ON DELETE SET NULL,
    question       text NOT NULL,
    standalone     text NOT NULL,
    sql            text NOT NULL,
    display_hint   text NOT NULL,
    assumptions    jsonb NOT NULL DEFAULT '[]',
    frame          jsonb,
    planner        text NOT NULL,
    model          text NOT NULL,
    embedding      vector NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    invalid_reason text,
    invalidated_at timestamptz
);
CREATE TABLE IF NOT EXISTS sage.feedback (
    id          bigserial PRIMARY KEY,
    question_id bigint UNIQUE REFERENCES sage.questions (id) ON DELETE CASCADE,
    rating      text NOT NULL CHECK (rating IN ('up', 'down')),
    reason      text,
    question    text NOT NULL,
    sql         text,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS feedback_created_idx ON sage.feedback (created_at DESC);
"""

DDL = f"""
CREATE EXTENSION IF NOT EXISTS vector;
CREATE SCHEMA IF NOT EXISTS sage;

CREATE TABLE IF NOT EXISTS public.geography (
    geo_id      text PRIMARY KEY CHECK (geo_id ~ '^(0400000US[0-9]{{2}}|0500000US[0-9]{{5}})$'),
    fips        text NOT NULL UNIQUE CHECK (fips ~ '^[0-9]{{2}}([0-9]{{3}})?$'),
    level       text NOT NULL CHECK (level IN ('state', 'county')),
    name        text NOT NULL,
    state_fips  text NOT NULL CHECK (state_fips ~ '^[0-9]{{2}}$'),
    state_abbr  text NOT NULL CHECK (state_abbr ~ '^[A-Z]{{2}}$'),
    state_name  text NOT NULL,
    county_fips text CHECK (county_fips ~ '^[0-9]{{3}}$'),
    county_name text,
    CHECK ((level = 'state') = (county_fips IS NULL AND county_name IS NULL)),
    CHECK (fips = state_fips || coalesce(county_fips, ''))
);

CREATE TABLE IF NOT EXISTS public.variables (
    variable_code text PRIMARY KEY CHECK (variable_code ~ '^[BC][0-9]{{5}}[A-Z]{{0,2}}_[0-9]{{3}}E$'),
    label         text NOT NULL,
    concept       text NOT NULL,
    category      text NOT NULL CHECK (category IN ({_CATEGORY_LIST})),
    table_id      text NOT NULL,
    universe      text,
    vintage       text NOT NULL CHECK (vintage ~ '^[0-9]{{4}}-[0-9]{{4}}$'),
    CHECK (variable_code LIKE table_id || '\\_%')
);

CREATE TABLE IF NOT EXISTS public.estimates (
    geo_id        text NOT NULL REFERENCES public.geography (geo_id),
    variable_code text NOT NULL REFERENCES public.variables (variable_code),
    estimate      numeric,
    margin_error  numeric CHECK (margin_error >= 0),
    source        text NOT NULL,
    PRIMARY KEY (geo_id, variable_code)
);

-- the planners' queries filter by variable first, then join geography by level and state
CREATE INDEX IF NOT EXISTS estimates_variable_geo_idx ON public.estimates (variable_code, geo_id) INCLUDE (estimate);
CREATE INDEX IF NOT EXISTS geography_level_state_idx ON public.geography (level, state_abbr);
CREATE INDEX IF NOT EXISTS geography_state_name_idx ON public.geography (state_name, level);
CREATE INDEX IF NOT EXISTS geography_county_name_idx ON public.geography (lower(county_name));
CREATE INDEX IF NOT EXISTS variables_table_idx ON public.variables (table_id);

-- internal bookkeeping: never granted to the reader role, never shown to a planner
CREATE TABLE IF NOT EXISTS sage.data_loads (
    name       text PRIMARY KEY,
    sha256     text NOT NULL,
    rows       jsonb NOT NULL,
    loaded_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS sage.census_tables (
    table_id   text PRIMARY KEY,
    vintage    text NOT NULL,
    source     text NOT NULL,
    variables  integer NOT NULL,
    rows       integer NOT NULL,
    loaded_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS sage.questions (
    id          bigserial PRIMARY KEY,
    question    text NOT NULL,
    planner     text NOT NULL,
    sql         text,
    assumptions jsonb NOT NULL DEFAULT '[]',
    display_hint text,
    attempts    jsonb NOT NULL DEFAULT '[]',
    outcome     text NOT NULL CHECK (outcome IN ('answered', 'declined', 'failed')),
    error       jsonb,
    row_count   integer,
    timings_ms  jsonb NOT NULL DEFAULT '{{}}',
    usage       jsonb NOT NULL DEFAULT '{{}}',
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS questions_created_idx ON sage.questions (created_at DESC);
{CONVERSATION_DDL}CREATE TABLE IF NOT EXISTS sage.reader_login (
    role     text PRIMARY KEY,
    password text NOT NULL
);
"""

COMMENTS = {
    "public.geography": (
        "One row per place with ACS 5-year estimates: the 50 states, the District of Columbia and Puerto Rico "
        "(level = 'state', 52 rows) and every county or county-equivalent (level = 'county', 3,222 rows: parishes in "
        "Louisiana, boroughs and census areas in Alaska, independent cities such as 'Baltimore city' in Maryland and "
        "Virginia, Puerto Rico municipios, Connecticut planning regions). 2023 Census geography. There are no nation, "
        "city, place or ZIP code rows: a US total is the sum of the state rows."
    ),
    "public.geography.geo_id": "Census GEOID: '0400000US' + 2-digit state FIPS for states (e.g. '0400000US06'), "
    "'0500000US' + 5-digit county FIPS for counties (e.g. '0500000US06037'). Joins public.estimates.geo_id.",
    "public.geography.fips": "Plain FIPS code: 2 digits for a state ('06'), 5 digits for a county ('06037'); "
    "the id used by the map shapes.",
    "public.geography.level": "'state' (includes DC and Puerto Rico) or 'county' (includes county-equivalents).",
    "public.geography.name": "Display name: 'California' for a state, 'Los Angeles County, California' for a county.",
    "public.geography.state_fips": "2-digit state FIPS code; Puerto Rico is '72', DC is '11'.",
    "public.geography.state_abbr": "USPS state abbreviation in capitals, e.g. 'CA', 'DC', 'PR'.",
    "public.geography.state_name": "Full state name, e.g. 'New York', 'District of Columbia', 'Puerto Rico'; "
    "filled on county rows too (the state the county is in).",
    "public.geography.county_fips": "3-digit county FIPS within the state; NULL on state rows.",
    "public.geography.county_name": "County or county-equivalent name with its suffix, e.g. 'Cook County', "
    "'Orleans Parish', 'Kusilvak Census Area', 'Baltimore city'; NULL on state rows. County names repeat across "
    "states (Wayne County exists in 16 states): always filter by state too.",
    "public.variables": (
        "One row per ACS 5-year detailed-table variable that has estimates in public.estimates, with the Census "
        "Bureau's own label, concept and universe. Each variable has exactly one vintage; never divide a variable of "
        "one vintage by a variable of another."
    ),
    "public.variables.variable_code": "Census variable code: table id + '_' + line number + 'E', e.g. "
    "'B19013_001E' (median household income), 'B01003_001E' (total population).",
    "public.variables.label": "Census label, levels separated by '!!', e.g. 'Estimate!!Total:!!Bachelor's degree'.",
    "public.variables.concept": "The table's title, e.g. 'Median Household Income in the Past 12 Months'.",
    "public.variables.category": "Topic: one of " + ", ".join(CATEGORIES) + ".",
    "public.variables.table_id": "ACS detailed table id, e.g. 'B19013'; all variables of a table share its universe.",
    "public.variables.universe": "Who or what the table counts, e.g. 'Households', 'Population 25 years and over'.",
    "public.variables.vintage": "ACS 5-year period of the estimates, e.g. '2019-2023' (most variables) or "
    "'2018-2022'; dollar amounts are in inflation-adjusted dollars of the period's last year.",
    "public.estimates": (
        "One row per place and variable: the ACS 5-year estimate. Most estimates are raw counts (people, households, "
        "housing units) that can be summed across places; medians, means, per-capita amounts and indexes (median "
        "household income, median age, median rent, median home value, per capita income, Gini index) cannot be "
        "summed or averaged, and exist for counties only unless a state row is present. Rates and shares are computed "
        "from counts of the same table and vintage, e.g. 100.0 * unemployed / NULLIF(labor force, 0)."
    ),
    "public.estimates.geo_id": "The place (public.geography.geo_id).",
    "public.estimates.variable_code": "The variable (public.variables.variable_code).",
    "public.estimates.estimate": "The estimate in the variable's unit: a count, dollars (medians, per capita) in "
    "dollars of the vintage's last year, years (median age) or an index (Gini, 0-1). NULL when the Census Bureau "
    "published no estimate. Always write e.estimate in queries.",
    "public.estimates.margin_error": "The published 90% margin of error of the estimate, in the same unit; NULL where "
    "it was not published or not loaded (most rows of the shipped extract; tables fetched from the Census API "
    "carry it).",
    "public.estimates.source": "Where the estimate came from (a public extract, the sum of county rows, or the "
    "Census Data API).",
}

TABLES = ("public.geography", "public.variables", "public.estimates")


def comment_statements() -> list[str]:
    """``COMMENT ON`` statements for every table and column in :data:`COMMENTS`."""
    out = []
    for ref, text in COMMENTS.items():
        quoted = text.replace("'", "''")
        kind = "TABLE" if ref.count(".") == 1 else "COLUMN"
        out.append(f"COMMENT ON {kind} {ref} IS '{quoted}'")
    return out
