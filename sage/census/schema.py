"""DDL for the census tables and the view over them, their comments, and the internal ``sage`` schema.

The ``COMMENT ON`` texts matter: introspection turns them into the descriptions that are embedded and shown to the
planners, so they say what a row is, the units, and the traps (counts vs medians, periods, null margins).

The data model (docs/design.md, "The data"):

* ``public.geography`` — one row per place at every level (nation, state, county, place, cbsa, cd, tract, zcta),
  keyed by the Census GEO_ID; the rules of each level are CHECK constraints (:data:`GEOGRAPHY_CONSTRAINTS`).
* ``public.variables`` — one row per ACS variable: ``vintage`` is the latest period loaded, ``vintages`` every
  period loaded.
* ``public.estimates_by_vintage`` — every period's estimates side by side, keyed (geo_id, variable_code, vintage).
* ``public.estimates`` — a **view**: the rows of ``estimates_by_vintage`` in each variable's latest period.  A query
  written without a period (the development questions, users' saved SQL, the planners' habits) keeps meaning "the
  latest period" and never counts a place twice; ``estimates_by_vintage`` is where periods sit side by side.

A database set up by the previous version (``estimates`` a table keyed (geo_id, variable_code)) is migrated in place
by :mod:`sage.census.migrate`, which ends with exactly this schema.  Columns added by the migration come last in a
fresh database too (``estimates_by_vintage.vintage``, ``geography.place_name``, the new ``variables`` columns), so
the two are identical.
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

#: the geography levels, in the order they are listed to users
LEVELS = ("nation", "state", "county", "place", "cbsa", "cd", "tract", "zcta")
#: the first three characters of a GEO_ID (the summary level) of each level
SUMMARY_LEVELS = {
    "nation": "010",
    "state": "040",
    "county": "050",
    "place": "160",
    "cbsa": "310",
    "cd": "500",
    "tract": "140",
    "zcta": "860",
}
#: the form of ``fips`` (the code after 'US' in the GEO_ID) at each level
FIPS_PATTERNS = {
    "nation": "^$",
    "state": "^[0-9]{2}$",
    "county": "^[0-9]{5}$",
    "place": "^[0-9]{7}$",
    "cbsa": "^[0-9]{5}$",
    "cd": "^[0-9]{4}$",
    "tract": "^[0-9]{11}$",
    "zcta": "^[0-9]{5}$",
}
#: one GEO_ID of each level, as the column comment and the Claude planner's rules show them
EXAMPLE_GEO_IDS = {
    "nation": "0100000US",
    "state": "0400000US48",
    "county": "0500000US48453",
    "place": "1600000US4805000",
    "cbsa": "310M700US12420",
    "cd": "5001800US4821",
    "tract": "1400000US48453001100",
    "zcta": "860Z200US78701",
}
#: levels inside one state: their rows carry state_fips, state_abbr and state_name (nation, cbsa, zcta do not)
STATE_LEVELS = ("state", "county", "place", "cd", "tract")
#: levels with a county: county_fips and county_name
COUNTY_LEVELS = ("county", "tract")
#: the loose form of every Census GEO_ID: summary level, 4 characters of components, 'US', the code
GEO_ID_PATTERN = "^[0-9]{3}[0-9A-Z]{4}US[0-9]*$"
VINTAGE_PATTERN = "^[0-9]{4}-[0-9]{4}$"


def _sql_list(items) -> str:
    return ", ".join(f"'{i}'" for i in items)


def _case(mapping: dict[str, str]) -> str:
    return "CASE level " + " ".join(f"WHEN '{k}' THEN '{v}'" for k, v in mapping.items()) + " END"


#: the constraints of public.geography other than its primary key, by name: used by the DDL and by the migration,
#: so a migrated database has exactly the constraints of a fresh one
GEOGRAPHY_CONSTRAINTS: dict[str, str] = {
    "geography_level_check": f"CHECK (level IN ({_sql_list(LEVELS)}))",
    "geography_level_fips_key": "UNIQUE (level, fips)",
    "geography_geo_id_check": f"CHECK (geo_id ~ '{GEO_ID_PATTERN}')",
    # the GEO_ID's summary level is the level's, and the code after 'US' is the fips
    "geography_geo_id_level_check": f"CHECK (left(geo_id, 3) = {_case(SUMMARY_LEVELS)} AND substr(geo_id, 10) = fips)",
    "geography_fips_check": f"CHECK (fips ~ {_case(FIPS_PATTERNS)})",
    "geography_state_fips_check": "CHECK (state_fips ~ '^[0-9]{2}$' AND left(fips, 2) = state_fips)",
    "geography_state_abbr_check": "CHECK (state_abbr ~ '^[A-Z]{2}$')",
    "geography_county_fips_check": "CHECK (county_fips ~ '^[0-9]{3}$' AND substr(fips, 3, 3) = county_fips)",
    # which parent columns each level has: all of them or none (num_nonnulls is never NULL, so these always bite)
    "geography_state_columns_check": (
        "CHECK (num_nonnulls(state_fips, state_abbr, state_name) = "
        f"CASE WHEN level IN ({_sql_list(STATE_LEVELS)}) THEN 3 ELSE 0 END)"
    ),
    "geography_county_columns_check": (
        f"CHECK (num_nonnulls(county_fips, county_name) = CASE WHEN level IN ({_sql_list(COUNTY_LEVELS)}) THEN 2 "
        "ELSE 0 END)"
    ),
    "geography_place_name_check": "CHECK ((place_name IS NOT NULL) = (level = 'place') AND place_name <> '')",
    # the name carries the state: 'Texas', 'Travis County, Texas', 'Austin city, Texas'
    "geography_name_check": (
        "CHECK (name <> '' AND CASE level WHEN 'nation' THEN name = 'United States' "
        "WHEN 'state' THEN name = state_name "
        "WHEN 'county' THEN name = county_name || ', ' || state_name "
        "WHEN 'place' THEN name = place_name || ', ' || state_name ELSE true END)"
    ),
}

VARIABLES_CONSTRAINTS: dict[str, str] = {
    # every period loaded, ascending; the last one is the latest (vintage)
    "variables_vintages_check": (
        "CHECK (cardinality(vintages) >= 1 AND vintages[cardinality(vintages)] = vintage "
        "AND array_to_string(vintages, ',') ~ '^[0-9]{4}-[0-9]{4}(,[0-9]{4}-[0-9]{4})*$')"
    ),
    "variables_label_changed_check": "CHECK (label_changed = (earlier_label IS NOT NULL))",
}


#: the key and foreign keys of public.estimates_by_vintage, and its index by variable: a bulk load into an empty
#: table (a fresh setup) drops and re-creates them around the COPY, which is several times faster than checking
#: and indexing row by row (:mod:`sage.census.loader`)
ESTIMATES_KEYS: dict[str, str] = {
    "estimates_by_vintage_pkey": "PRIMARY KEY (geo_id, variable_code, vintage)",
    "estimates_by_vintage_geo_id_fkey": "FOREIGN KEY (geo_id) REFERENCES public.geography (geo_id)",
    "estimates_by_vintage_variable_code_fkey": (
        "FOREIGN KEY (variable_code) REFERENCES public.variables (variable_code)"
    ),
}
ESTIMATES_INDEX_NAME = "estimates_by_vintage_variable_idx"
ESTIMATES_INDEX = (
    "ON public.estimates_by_vintage (variable_code, vintage, geo_id) INCLUDE (estimate, margin_error)"
)


def _constraints(named: dict[str, str]) -> str:
    return ",\n    ".join(f"CONSTRAINT {name} {definition}" for name, definition in named.items())


#: the view: each variable's rows in its latest period
ESTIMATES_VIEW = """CREATE OR REPLACE VIEW public.estimates AS
SELECT b.geo_id, b.variable_code, b.estimate, b.margin_error, b.source, b.vintage
FROM public.estimates_by_vintage b
JOIN public.variables v ON v.variable_code = b.variable_code AND v.vintage = b.vintage"""

#: the tables of the census data, created (or, for a database of the previous version, migrated to) by setup
TABLES_DDL = f"""
CREATE TABLE IF NOT EXISTS public.geography (
    geo_id      text PRIMARY KEY,
    fips        text NOT NULL,
    level       text NOT NULL,
    name        text NOT NULL,
    state_fips  text,
    state_abbr  text,
    state_name  text,
    county_fips text,
    county_name text,
    place_name  text,
    {_constraints(GEOGRAPHY_CONSTRAINTS)}
);

CREATE TABLE IF NOT EXISTS public.variables (
    variable_code text PRIMARY KEY CHECK (variable_code ~ '^[BC][0-9]{{5}}[A-Z]{{0,2}}_[0-9]{{3}}E$'),
    label         text NOT NULL,
    concept       text NOT NULL,
    category      text NOT NULL CHECK (category IN ({_sql_list(CATEGORIES)})),
    table_id      text NOT NULL,
    universe      text,
    vintage       text NOT NULL CHECK (vintage ~ '{VINTAGE_PATTERN}'),
    vintages      text[] NOT NULL,
    label_changed boolean NOT NULL DEFAULT false,
    earlier_label text,
    CHECK (variable_code LIKE table_id || '\\_%'),
    {_constraints(VARIABLES_CONSTRAINTS)}
);

CREATE TABLE IF NOT EXISTS public.estimates_by_vintage (
    geo_id        text NOT NULL,
    variable_code text NOT NULL,
    estimate      numeric,
    margin_error  numeric CHECK (margin_error >= 0),
    source        text NOT NULL,
    vintage       text NOT NULL CHECK (vintage ~ '{VINTAGE_PATTERN}'),
    {_constraints(ESTIMATES_KEYS)}
);

-- the planners' queries filter by variable (and period) first, then join geography by level and state
CREATE INDEX IF NOT EXISTS {ESTIMATES_INDEX_NAME} {ESTIMATES_INDEX};
CREATE INDEX IF NOT EXISTS geography_level_state_idx ON public.geography (level, state_abbr);
CREATE INDEX IF NOT EXISTS geography_state_name_idx ON public.geography (state_name, level);
CREATE INDEX IF NOT EXISTS geography_county_name_idx ON public.geography (lower(county_name));
-- names the planners look up: a place by its name without the state, any place by its full Census name
CREATE INDEX IF NOT EXISTS geography_place_name_idx ON public.geography (lower(place_name));
CREATE INDEX IF NOT EXISTS geography_name_idx ON public.geography (lower(name));
CREATE INDEX IF NOT EXISTS variables_table_idx ON public.variables (table_id);

{ESTIMATES_VIEW};
"""

#: conversations, feedback and verified answers (issue 15): the query log's follow-up columns (added to a log made
#: before them), the verified-answer library and the feedback; for shared deployments (issue 21) the session of each
#: question and rating, a rating's review by a curator, and the Claude tokens spent per day.  Internal like the rest
#: of ``sage``: the reader role has no USAGE on the schema and no privilege on its tables.  Safe to run again;
#: :mod:`sage.querylog` also runs it once per process on a database set up before these existed.
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
ALTER TABLE sage.questions ADD COLUMN IF NOT EXISTS session_id text;
CREATE INDEX IF NOT EXISTS questions_session_idx ON sage.questions (session_id, created_at DESC)
    WHERE session_id IS NOT NULL;
ALTER TABLE sage.feedback ADD COLUMN IF NOT EXISTS session_id text;
ALTER TABLE sage.feedback ADD COLUMN IF NOT EXISTS review text CHECK (review IN ('accepted', 'rejected'));
ALTER TABLE sage.feedback ADD COLUMN IF NOT EXISTS reviewed_at timestamptz;
ALTER TABLE sage.feedback ADD COLUMN IF NOT EXISTS reviewed_by text;
CREATE TABLE IF NOT EXISTS sage.claude_usage (
    day        date PRIMARY KEY,
    tokens     bigint NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now()
);
"""

#: the labels, concepts and universes of a release ``census update`` has loaded but not yet made the latest period
#: (:mod:`sage.census.update`): its rows wait in ``public.estimates_by_vintage`` under their period, which no
#: variable names yet, and move into the view with these at the switch.  Safe to run again (the update runs it on a
#: database set up before it existed).
PENDING_DDL = """
CREATE TABLE IF NOT EXISTS sage.census_pending (
    variable_code text NOT NULL,
    vintage       text NOT NULL,
    table_id      text NOT NULL,
    label         text NOT NULL,
    concept       text NOT NULL,
    category      text NOT NULL,
    universe      text,
    PRIMARY KEY (variable_code, vintage)
);
"""

#: internal bookkeeping: never granted to the reader role, never shown to a planner
SAGE_DDL = f"""
CREATE TABLE IF NOT EXISTS sage.data_loads (
    name       text PRIMARY KEY,
    sha256     text NOT NULL,
    rows       jsonb NOT NULL,
    loaded_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS sage.census_tables (
    table_id   text NOT NULL,
    vintage    text NOT NULL,
    source     text NOT NULL,
    variables  integer NOT NULL,
    rows       integer NOT NULL,
    loaded_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, vintage)
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
{CONVERSATION_DDL}{PENDING_DDL}CREATE TABLE IF NOT EXISTS sage.reader_login (
    role     text PRIMARY KEY,
    password text NOT NULL
);
"""

PRELUDE = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE SCHEMA IF NOT EXISTS sage;
"""

#: the census data's generation: a number that every statement writing the census tables raises, in that
#: statement's own transaction (a trigger, so no write path can forget it, and a reader sees the new number exactly
#: when it sees the new rows).  What is derived from the data and kept between processes (the offline planner's
#: catalog, ``sage.planner_catalog``) is stored under the generation it was read in and is never used for another.
#: One row, so writers of the census tables queue on it; they are rare (setup, ``census fetch``, one at a time).
GENERATION_DDL = """
CREATE TABLE IF NOT EXISTS sage.data_generation (
    only_row   boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    generation bigint NOT NULL,
    changed_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO sage.data_generation (only_row, generation) VALUES (true, 1) ON CONFLICT (only_row) DO NOTHING;
CREATE OR REPLACE FUNCTION sage.bump_data_generation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sage.data_generation SET generation = generation + 1, changed_at = now();
    RETURN NULL;
END $$;
""" + "".join(
    f"CREATE OR REPLACE TRIGGER data_generation AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
    "FOR EACH STATEMENT EXECUTE FUNCTION sage.bump_data_generation();\n"
    for table in ("public.geography", "public.variables", "public.estimates_by_vintage")
) + """
CREATE TABLE IF NOT EXISTS sage.planner_catalog (
    generation bigint NOT NULL,
    builder    text NOT NULL,
    payload    bytea NOT NULL,
    sha256     text NOT NULL,
    built_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (generation, builder)
);
"""

#: everything a fresh database needs (run after :func:`sage.census.migrate.migrate` on an older one)
DDL = PRELUDE + SAGE_DDL + TABLES_DDL + GENERATION_DDL

_ESTIMATE_TEXT = (
    "Most estimates are raw counts (people, households, housing units) that can be summed across places; medians, "
    "means, per-capita amounts and indexes (median household income, median age, median rent, median home value, "
    "per capita income, Gini index) cannot be summed or averaged, and exist for counties (and fetched levels) only "
    "unless a state row is present. Rates and shares are computed from counts of the same table and period, e.g. "
    "100.0 * unemployed / NULLIF(labor force, 0)."
)

COMMENTS = {
    "public.geography": (
        "One row per place at every geography level, 2023 Census geography: the nation (level 'nation', the one row "
        "'0100000US' 'United States'), the 50 states, the District of Columbia and Puerto Rico ('state', 52 rows), "
        "every county or county-equivalent ('county', 3,222 rows: parishes in Louisiana, boroughs and census areas "
        "in Alaska, independent cities such as 'Baltimore city' in Maryland and Virginia, Puerto Rico municipios, "
        "Connecticut planning regions), every Census place ('place', 32,325 rows: incorporated cities, towns, "
        "villages and boroughs, and census-designated places or CDPs), and the levels `census fetch --geographies` "
        "adds: metropolitan and micropolitan statistical areas ('cbsa'), congressional districts ('cd'), census "
        "tracts ('tract') and ZIP code tabulation areas ('zcta'). Filter on level in every query. The shipped "
        "nation row has no estimates: a US total is the sum of the state rows (50 states + DC)."
    ),
    "public.geography.geo_id": (
        "Census GEO_ID: summary level and components, 'US', then the code (fips): '0100000US' (nation), "
        "'0400000US48' (state), '0500000US48453' (county), '1600000US4805000' (place), '310M700US12420' (CBSA, "
        "2023 delineation), '5001800US4821' (congressional district of the 118th Congress), "
        "'1400000US48453001100' (tract), '860Z200US78701' (ZCTA). Joins public.estimates.geo_id and "
        "public.estimates_by_vintage.geo_id."
    ),
    "public.geography.fips": (
        "The code within the level, digits only: '' for the nation, 2 digits for a state ('48'), 5 for a county "
        "('48453'), 7 for a place (state + place code, '4805000'), 5 for a CBSA ('12420'), 4 for a congressional "
        "district (state + district, '4821'; '00' is an at-large district), 11 for a tract (state + county + tract, "
        "'48453001100'), 5 for a ZCTA ('78701'). Unique within a level; the id the state and county map shapes use."
    ),
    "public.geography.level": (
        "'nation'; 'state' (includes DC and Puerto Rico); 'county' (includes county-equivalents); 'place' (cities, "
        "towns, villages, boroughs and census-designated places); 'cbsa' (metropolitan and micropolitan "
        "statistical areas); 'cd' (congressional districts); 'tract' (census tracts); 'zcta' (ZIP code "
        "tabulation areas: approximations of ZIP code areas, not ZIP codes)."
    ),
    "public.geography.name": (
        "The Census name, with its state where it has one: 'United States', 'Texas', 'Travis County, Texas', "
        "'Austin city, Texas', 'Austin-Round Rock-San Marcos, TX Metro Area', 'Congressional District 21 (118th "
        "Congress), Texas', 'Census Tract 11; Travis County; Texas', 'ZCTA5 78701'."
    ),
    "public.geography.state_fips": (
        "2-digit FIPS code of the state (of the state the place is in): Puerto Rico is '72', DC is '11'. Filled on "
        "state, county, place, cd and tract rows; NULL on nation, cbsa and zcta rows (they are not inside one state)."
    ),
    "public.geography.state_abbr": (
        "USPS state abbreviation in capitals, e.g. 'CA', 'DC', 'PR'. Filled on state, county, place, cd and tract "
        "rows; NULL on nation, cbsa and zcta rows."
    ),
    "public.geography.state_name": (
        "Full state name, e.g. 'New York', 'District of Columbia', 'Puerto Rico'; on county, place, cd and tract "
        "rows the state the place is in. NULL on nation, cbsa and zcta rows."
    ),
    "public.geography.county_fips": (
        "3-digit county FIPS within the state, on county rows and tract rows (the tract's county) only; NULL "
        "otherwise (places can cross county lines)."
    ),
    "public.geography.county_name": (
        "County or county-equivalent name with its suffix, e.g. 'Cook County', 'Orleans Parish', 'Kusilvak Census "
        "Area', 'Baltimore city'; on county rows and tract rows (the tract's county) only, NULL otherwise. County "
        "names repeat across states (Wayne County exists in 16 states): always filter by state too."
    ),
    "public.geography.place_name": (
        "A place's Census name without its state, with its suffix: 'Austin city', 'Bethesda CDP', 'Nashville-"
        "Davidson metropolitan government (balance)'. Only on place rows, NULL otherwise. Place names repeat "
        "across states (31 are named Springfield): match lower(place_name) together with the state."
    ),
    "public.variables": (
        "One row per ACS 5-year detailed-table variable that has estimates, with the Census Bureau's own label, "
        "concept and universe. vintage is the latest period loaded (the rows public.estimates shows); vintages "
        "lists every period public.estimates_by_vintage holds. Never divide a variable of one period by a variable "
        "of another."
    ),
    "public.variables.variable_code": "Census variable code: table id + '_' + line number + 'E', e.g. "
    "'B19013_001E' (median household income), 'B01003_001E' (total population).",
    "public.variables.label": "Census label of the latest period, levels separated by '!!', e.g. "
    "'Estimate!!Total:!!Bachelor's degree'.",
    "public.variables.concept": "The table's title, e.g. 'Median Household Income in the Past 12 Months'.",
    "public.variables.category": "Topic: one of " + ", ".join(CATEGORIES) + ".",
    "public.variables.table_id": "ACS detailed table id, e.g. 'B19013'; all variables of a table share its universe.",
    "public.variables.universe": "Who or what the table counts, e.g. 'Households', 'Population 25 years and over'.",
    "public.variables.vintage": (
        "The latest ACS 5-year period loaded for the variable, e.g. '2019-2023' (most variables) or '2018-2022': "
        "the period of its rows in public.estimates. Dollar amounts are in inflation-adjusted dollars of the "
        "period's last year."
    ),
    "public.variables.vintages": (
        "Every ACS 5-year period loaded for the variable, ascending, e.g. {2014-2018,2019-2023}; the last one is "
        "vintage. Their rows are in public.estimates_by_vintage. Compare only periods that do not overlap "
        "(2014-2018 with 2019-2023, never 2018-2022 with 2019-2023)."
    ),
    "public.variables.label_changed": (
        "True when the Census label of the variable in an earlier loaded period differs from the latest period's "
        "(earlier_label holds it): the line may not measure the same thing in both periods; say so when comparing."
    ),
    "public.variables.earlier_label": (
        "The variable's label in an earlier loaded period when it differs from the latest label; NULL otherwise."
    ),
    "public.estimates_by_vintage": (
        "Every ACS 5-year period the database holds, side by side: one row per place, variable and period "
        "(vintage). The shipped 2014-2018 rows (counties and states: total population, White alone, Black alone, "
        "Hispanic or Latino, housing units; counties only: median household income with its margins of error, per "
        "capita income) sit next to their 2019-2023 values. Always filter on vintage: a query without it counts a "
        "place once per period. Compare only periods that do not overlap, and put dollar amounts into the same "
        "dollars first (public.cpi_u_rs). A place can be missing in one period (Connecticut's counties changed in "
        "2022). " + _ESTIMATE_TEXT
    ),
    "public.estimates_by_vintage.geo_id": "The place (public.geography.geo_id).",
    "public.estimates_by_vintage.variable_code": "The variable (public.variables.variable_code).",
    "public.estimates_by_vintage.estimate": "The estimate in the variable's unit: a count, dollars (medians, per "
    "capita) in dollars of the period's last year, years (median age) or an index (Gini, 0-1). NULL when the Census "
    "Bureau published no estimate.",
    "public.estimates_by_vintage.margin_error": "The published 90% margin of error of the estimate, in the same "
    "unit; 0 for totals the Census Bureau controls (no sampling error); NULL where it was not published, not "
    "computable or not loaded.",
    "public.estimates_by_vintage.source": "Where the estimate came from (a public extract, the sum of county rows, "
    "or the Census Data API).",
    "public.estimates_by_vintage.vintage": "The ACS 5-year period of the estimate, e.g. '2014-2018' or "
    "'2019-2023'; one of public.variables.vintages.",
    "public.estimates": (
        "A view: one row per place and variable, the estimate of the variable's latest period "
        "(public.variables.vintage), taken from public.estimates_by_vintage. A query without a period therefore "
        "means the latest period and never counts a place twice; for change over time use "
        "public.estimates_by_vintage. " + _ESTIMATE_TEXT
    ),
    "public.estimates.geo_id": "The place (public.geography.geo_id).",
    "public.estimates.variable_code": "The variable (public.variables.variable_code).",
    "public.estimates.estimate": "The estimate in the variable's unit: a count, dollars (medians, per capita) in "
    "dollars of the period's last year, years (median age) or an index (Gini, 0-1). NULL when the Census Bureau "
    "published no estimate. Always write e.estimate in queries.",
    "public.estimates.margin_error": "The published 90% margin of error of the estimate, in the same unit; NULL "
    "where it was not published or not loaded (most rows of the shipped extract; tables fetched from the Census API "
    "carry it, 0 for controlled totals).",
    "public.estimates.source": "Where the estimate came from (a public extract, the sum of county rows, or the "
    "Census Data API).",
    "public.estimates.vintage": "The ACS 5-year period of the estimate: always the variable's latest "
    "(public.variables.vintage).",
}

#: the relations of the census data (``status`` counts their rows; the reader role may read them)
TABLES = ("public.geography", "public.variables", "public.estimates", "public.estimates_by_vintage")
VIEWS = frozenset({"public.estimates"})


def comment_statements() -> list[str]:
    """``COMMENT ON`` statements for every table, view and column in :data:`COMMENTS`."""
    out = []
    for ref, text in COMMENTS.items():
        quoted = text.replace("'", "''")
        if ref.count(".") == 1:
            kind = "VIEW" if ref in VIEWS else "TABLE"
        else:
            kind = "COLUMN"
        out.append(f"COMMENT ON {kind} {ref} IS '{quoted}'")
    return out
