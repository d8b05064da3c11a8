"""The retrieval index and retrieval itself, on real PostgreSQL + pgvector.

Index bookkeeping (idempotence, changed comments, new variables, model changes) runs on a small census-shaped
database of its own with a tiny deterministic word-hashing embedder, so the shared session database is never
altered; retrieval quality runs on the session database with the real bundled model.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from urllib.parse import urlsplit

import psycopg
import pytest

from sage import db
from sage.census import schema as census_schema
from sage.describe import (
    VariableInfo,
    _link,
    describe_column,
    describe_table,
    describe_variable,
    load_aliases,
    readable_label,
)
from sage.embeddings import BUNDLED_NAME
from sage.errors import DataError, NotSetUpError, RetrievalError
from sage.evaluate import eval_retrieval, gold_variables
from sage.index import index_schema, index_status
from sage.introspect import introspect
from sage.retrieve import _alias_match, retrieve
from sage.types import Chunk
from tests.conftest import scratch_database


class WordHash:
    """A deterministic stand-in embedder: each word adds 1 to one of ``dimension`` buckets (crc32), normalised."""

    def __init__(self, name: str = "word-hash", dimension: int = 32) -> None:
        self.name, self.dimension = name, dimension
        self.seen: list[str] = []

    def embed(self, texts):
        out = []
        for text in texts:
            self.seen.append(text)
            v = [0.0] * self.dimension
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                v[zlib.crc32(word.encode()) % self.dimension] += 1.0
            norm = math.sqrt(sum(x * x for x in v)) or 1.0
            out.append([x / norm for x in v] if any(v) else [1.0] + [0.0] * (self.dimension - 1))
        return out


MINI_ROWS = """
INSERT INTO public.geography VALUES
  ('0400000US44', '44', 'state', 'Rhode Island', '44', 'RI', 'Rhode Island', NULL, NULL, NULL),
  ('0500000US44007', '44007', 'county', 'Providence County, Rhode Island', '44', 'RI', 'Rhode Island', '007',
   'Providence County', NULL);
INSERT INTO public.variables (variable_code, label, concept, category, table_id, universe, vintage, vintages) VALUES
  ('B01003_001E', 'Estimate!!Total', 'Total Population', 'demographics', 'B01003', 'Total population', '2019-2023',
   '{2019-2023}'),
  ('B19013_001E', 'Estimate!!Median household income in the past 12 months (in 2023 inflation-adjusted dollars)',
   'Median Household Income in the Past 12 Months (In 2023 Inflation-adjusted Dollars)', 'income', 'B19013',
   'Households', '2019-2023', '{2019-2023}'),
  ('B17025_001E', 'Estimate!!Total:', 'Poverty Status in the Past 12 Months by Nativity', 'poverty', 'B17025',
   'Population for whom poverty status is determined', '2018-2022', '{2018-2022}'),
  ('B17025_002E', 'Estimate!!Total:!!Income in the past 12 months below poverty level:',
   'Poverty Status in the Past 12 Months by Nativity', 'poverty', 'B17025',
   'Population for whom poverty status is determined', '2018-2022', '{2018-2022}'),
  ('B25064_001E', 'Estimate!!Median gross rent', 'Median Gross Rent (Dollars)', 'housing', 'B25064',
   'Renter-occupied housing units paying cash rent', '2019-2023', '{2019-2023}');
INSERT INTO public.estimates_by_vintage (geo_id, variable_code, estimate, source, vintage) VALUES
  ('0400000US44', 'B01003_001E', 1098082, 'test', '2019-2023'),
  ('0500000US44007', 'B01003_001E', 657371, 'test', '2019-2023'),
  ('0500000US44007', 'B19013_001E', 74270, 'test', '2019-2023'),
  ('0400000US44', 'B17025_001E', 1055000, 'test', '2018-2022'),
  ('0400000US44', 'B17025_002E', 118000, 'test', '2018-2022'),
  ('0500000US44007', 'B17025_001E', 630000, 'test', '2018-2022'),
  ('0500000US44007', 'B17025_002E', 85000, 'test', '2018-2022');
ANALYZE public.geography, public.variables, public.estimates_by_vintage;
"""


@pytest.fixture(scope="module")
def mini(settings):
    """Settings on a throwaway census-shaped database (5 variables, 4 with estimates) on the session server."""
    with scratch_database(settings, "retrieve") as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(census_schema.DDL)
            for stmt in census_schema.comment_statements():
                conn.execute(stmt)
            conn.execute(MINI_ROWS)
        yield settings.replace(database_url=url)


@pytest.fixture
def fake(mini):
    """The word-hash embedder, with the mini index brought up to date by it (and nothing seen yet)."""
    provider = WordHash()
    index_schema(mini, provider=provider)
    provider.seen.clear()
    return provider


def _expected_chunks(settings) -> int:
    with db.owner(settings) as conn:
        schema = introspect(conn, ("public",))
        variables = conn.execute(
            "SELECT count(DISTINCT variable_code) FROM public.estimates WHERE estimate IS NOT NULL"
        ).fetchone()[0]
    return len(schema.tables) + sum(len(t.columns) for t in schema.tables) + variables


# --- descriptions (pure) ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "label, concept, universe, expected",
    [
        ("Estimate!!Total:!!Not Hispanic or Latino:!!White alone", "", "", "Not Hispanic or Latino: White alone"),
        ("Estimate!!Median age --!!Total:", "Median Age by Sex", "Total population", "Median age"),
        ("Estimate!!Total", "Total Population", "Total population", "Total Population"),
        ("Estimate!!Total:", "Internet Subscriptions in Household", "Households",
         "Total: households (table Internet Subscriptions in Household)"),
        ("Estimate!!Gini Index", "Gini Index of Income Inequality", "Households", "Gini Index"),
    ],
)
def test_readable_label(label, concept, universe, expected):
    assert readable_label(label, concept, universe) == expected


def _var(code, label, concept="Some Table", universe="Total population", vintage="2019-2023", **kw):
    return VariableInfo(code, label, concept, kw.pop("category", "demographics"), code.split("_")[0], universe,
                        vintage, kw.pop("rows", {"state": 52, "county": 3222}), **kw)


def test_counts_are_linked_to_the_totals_they_are_shares_of():
    labour = _var("B23025_003E", "Estimate!!Total:!!In labor force:!!Civilian labor force:", "Employment Status",
                  "Population 16 years and over")
    unemployed = _var("B23025_005E", "Estimate!!Total:!!In labor force:!!Civilian labor force:!!Unemployed",
                      "Employment Status", "Population 16 years and over")
    total = _var("B27020_001E", "Estimate!!Total:", "Health Insurance", "Civilian noninstitutionalized population")
    noncitizen = _var("B27020_013E", "Estimate!!Total:!!Foreign Born:!!Noncitizen:", "Health Insurance",
                      "Civilian noninstitutionalized population")
    insured = _var("B27020_014E", "Estimate!!Total:!!Foreign Born:!!Noncitizen:!!With health insurance coverage",
                   "Health Insurance", "Civilian noninstitutionalized population")
    population = _var("B01003_001E", "Estimate!!Total", "Total Population")
    black = _var("B02001_003E", "Estimate!!Total:!!Black or African American alone", "Race")
    old = _var("B02001_002E", "Estimate!!Total:!!White alone", "Race", vintage="2018-2022")
    median = _var("B19013_001E", "Estimate!!Median household income", "Median Household Income", "Households")
    _link([labour, unemployed, total, noncitizen, insured, population, black, old, median])
    assert unemployed.denominators == [("B23025_003E", "In labor force: Civilian labor force")]
    assert [c for c, _ in insured.denominators] == ["B27020_001E", "B27020_013E"]  # widest first
    assert [c for c, _ in black.denominators] == ["B01003_001E"]  # universe is everyone, table total missing
    assert old.denominators == []  # never across vintages
    assert median.denominators == [] and population.denominators == [] and total.denominators == []
    assert "Share or rate: divide by B23025_003E" in describe_variable(unemployed)


def test_variable_description_says_where_the_rows_are():
    median = _var("B25077_001E", "Estimate!!Median value (dollars)", "Median Value (Dollars)",
                  "Owner-occupied housing units", category="housing", rows={"county": 3216},
                  aliases=["home value", "house prices"])
    text = describe_variable(median)
    assert text.splitlines()[0] == "ACS variable B25077_001E: Median value (dollars)"
    assert "Also called: home value, house prices" in text
    assert "3,216 county rows; no state rows" in text and "median cannot be summed" in text
    assert "ACS 5-year 2019-2023" in text and "Universe: Owner-occupied housing units" in text


def test_alias_file_is_keyed_by_tables_and_variables():
    aliases = load_aliases()
    assert aliases, "sage/aliases.yaml is empty"
    for key, words in aliases.items():
        assert re.fullmatch(r"[BC]\d{5}[A-Z]{0,2}(_\d{3}E)?", key), key
        assert words and all(w.strip() for w in words), key
    for everyday in ("home value", "rent", "homeowners", "immigrants", "work from home", "jobless", "broadband",
                     "college grads", "Latino", "African American"):
        assert any(everyday.lower() in (w.lower() for w in ws) for ws in aliases.values()), everyday


def test_alias_matching():
    content = "ACS variable B08301_021E: Worked from home\nAlso called: work from home, remote workers, WFH\n"
    assert _alias_match("Where do most people work from home?", content)
    assert _alias_match("Which county has the most remote worker households?", content)  # plurals folded
    assert not _alias_match("home values in Ohio", content)
    households = "ACS variable B28011_001E: Total: households\nAlso called: households, internet\n"
    assert _alias_match("number of households in Ohio", households)
    assert not _alias_match("median household income in Ohio", households)  # one-word names match exactly


def test_gold_variables_from_sql():
    sql = "SELECT ... WHERE variable_code IN ('B17025_002E', 'B17025_001E') OR variable_code = 'B19013A_001E'"
    assert gold_variables(sql) == ["B17025_002E", "B17025_001E", "B19013A_001E"]
    assert gold_variables(None) == []


def test_table_and_column_descriptions(settings):
    schema = introspect(db.engine(settings))
    estimates = schema.table("public.estimates_by_vintage")
    text = describe_table(estimates)
    assert text.startswith("Table public.estimates_by_vintage (table, about ")
    assert "variable_code (text, primary key, references public.variables.variable_code)" in text
    column = describe_column(estimates, "estimate")
    assert column.startswith("Column estimate of table public.estimates_by_vintage (numeric")
    assert estimates.column("estimate").comment in column
    assert describe_column(estimates, 0) == describe_column(estimates, estimates.columns[0])
    view = schema.table("public.estimates")
    assert describe_table(view).startswith("Table public.estimates (view): A view: one row per place and variable")
    assert describe_column(view, "vintage").startswith("Column vintage of view public.estimates (text")


# --- the index (own database, fake embedder) -------------------------------------------------------------------


def test_index_covers_tables_columns_and_variables_with_estimates(mini, fake):
    events = []
    report = index_schema(mini, provider=fake, rebuild=True, progress=lambda *e: events.append(e))
    assert report.upserted == _expected_chunks(mini) and report.unchanged == 0
    embedding = [(done, total) for step, done, total in events if step == "embedding"]
    assert embedding[0] == (0, report.upserted) and embedding[-1] == (report.upserted, report.upserted)
    assert all(isinstance(step, str) for step, _, _ in events)
    # geography, variables, estimates_by_vintage and the view estimates
    assert report.model == "word-hash" and report.chunks["table"] == 4 and report.chunks["variable"] == 4
    with db.owner(mini) as conn:
        refs = {r for (r,) in conn.execute(
            "SELECT object_ref FROM sage.schema_embeddings WHERE object_type = 'variable'")}
        dims = conn.execute("SELECT DISTINCT dimension, vector_dims(embedding) FROM sage.schema_embeddings").fetchall()
    assert refs == {"B01003_001E", "B19013_001E", "B17025_001E", "B17025_002E"}  # B25064_001E has no estimates
    assert dims == [(32, 32)]
    assert index_status(mini) == {"chunks": report.upserted, "model": "word-hash"}


def test_reindexing_embeds_nothing_the_second_time(mini, fake):
    report = index_schema(mini, provider=fake)
    assert (report.upserted, report.deleted) == (0, 0)
    assert report.unchanged == _expected_chunks(mini)
    assert fake.seen == []


def test_a_changed_comment_reembeds_only_that_chunk(mini, fake):
    with db.owner(mini) as conn:
        conn.execute("COMMENT ON COLUMN public.estimates.margin_error IS 'Margin of error at 90 percent (test)'")
    try:
        report = index_schema(mini, provider=fake)
        assert report.upserted == 1 and len(fake.seen) == 1
        assert fake.seen[0].startswith("Column margin_error of view public.estimates")
        fake.seen.clear()
        with db.owner(mini) as conn:
            conn.execute("COMMENT ON TABLE public.geography IS 'Places (test)'")
        report = index_schema(mini, provider=fake)
        assert report.upserted == 1 and fake.seen[0].startswith("Table public.geography")
    finally:
        with db.owner(mini) as conn:
            for stmt in census_schema.comment_statements():
                conn.execute(stmt)


def test_a_new_variable_is_embedded_alone_and_removed_objects_are_deleted(mini, fake):
    with db.owner(mini) as conn:
        conn.execute("INSERT INTO public.estimates_by_vintage (geo_id, variable_code, estimate, source, vintage) "
                     "VALUES ('0500000US44007', 'B25064_001E', 1150, 'test', '2019-2023')")
        conn.execute("CREATE TABLE public.scratch (note text)")
    try:
        report = index_schema(mini, provider=fake)
        assert report.upserted == 3  # the variable, the new table and its column
        assert {t.split("\n")[0].split(":")[0] for t in fake.seen} == {
            "ACS variable B25064_001E", "Table public.scratch (table)", "Column note of table public.scratch (text)"}
    finally:
        with db.owner(mini) as conn:
            conn.execute("DELETE FROM public.estimates_by_vintage WHERE variable_code = 'B25064_001E'")
            conn.execute("DROP TABLE public.scratch")
    report = index_schema(mini, provider=fake)
    assert (report.upserted, report.deleted) == (0, 3)


def test_a_model_change_rebuilds_the_index(mini, fake):
    total = _expected_chunks(mini)
    other = WordHash("word-hash-b")
    report = index_schema(mini, provider=other)
    assert report.upserted == total and report.model == "word-hash-b"
    assert index_status(mini)["model"] == "word-hash-b"
    with pytest.raises(NotSetUpError) as err:  # vectors of one model are never compared with another's
        retrieve(mini, "median household income", provider=fake)
    assert "word-hash-b" in str(err.value) and "python -m sage setup" in str(err.value)

    smaller = WordHash("word-hash-16", dimension=16)  # another size: the column is retyped
    report = index_schema(mini, provider=smaller)
    assert report.upserted == total
    with db.owner(mini) as conn:
        typed = conn.execute("SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                             "WHERE attrelid = 'sage.schema_embeddings'::regclass AND attname = 'embedding'").fetchone()
    assert typed == ("vector(16)",)
    assert retrieve(mini, "median household income", provider=smaller)

    report = index_schema(mini, provider=fake)  # and back
    assert report.upserted == total


def test_filters_and_scores(mini, fake):
    everything = retrieve(mini, "median household income in Providence County", top_k=50, provider=fake)
    assert {c.object_type for c in everything} == {"table", "column", "variable"}
    assert all(isinstance(c, Chunk) and 0.0 <= c.score <= 1.0 for c in everything)
    assert [c.score for c in everything] == sorted((c.score for c in everything), reverse=True)
    assert everything[0].object_ref == "B19013_001E"

    tables = retrieve(mini, "median household income", object_types=["table"], provider=fake)
    assert tables and {c.object_type for c in tables} == {"table"}
    two = retrieve(mini, "median household income", object_types="column,variable", top_k=2, provider=fake)
    assert len(two) == 2 and {c.object_type for c in two} <= {"column", "variable"}

    cut = everything[3].score
    above = retrieve(mini, "median household income in Providence County", top_k=50, min_score=cut, provider=fake)
    assert above and all(c.score >= cut for c in above) and len(above) < len(everything)
    assert retrieve(mini, "median household income", min_score=1.01, provider=fake) == []


def test_a_retrieved_count_brings_its_denominator(mini, fake):
    chunks = retrieve(mini, "below poverty level", top_k=5, object_types=["variable"], provider=fake)
    refs = [c.object_ref for c in chunks]
    i = refs.index("B17025_002E")
    assert refs[i + 1] == "B17025_001E" and chunks[i + 1].score == chunks[i].score


def test_a_dropped_kept_connection_is_replaced(mini, fake):
    assert retrieve(mini, "population", provider=fake)  # leaves a connection in the pool
    dbname = urlsplit(mini.database_url).path.lstrip("/")
    with psycopg.connect(db.admin_url(mini.replace(database_url=None)), autocommit=True) as conn:
        killed = conn.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s",
                              (dbname,)).fetchone()[0]
    assert killed >= 1
    assert retrieve(mini, "population", provider=fake)


@pytest.mark.parametrize("question", ["", "   \n\t", None, 42])
def test_empty_or_non_text_questions_are_refused(mini, fake, question):
    with pytest.raises(RetrievalError):
        retrieve(mini, question, provider=fake)


@pytest.mark.parametrize("kwargs", [{"top_k": 0}, {"top_k": "5"}, {"object_types": ["tables"]}])
def test_bad_arguments_are_refused(mini, fake, kwargs):
    with pytest.raises(RetrievalError):
        retrieve(mini, "population", provider=fake, **kwargs)


def test_a_database_without_the_index_says_to_run_setup(settings):
    with scratch_database(settings, "noindex") as url:
        bare = settings.replace(database_url=url)
        assert index_status(bare) == {"chunks": 0, "model": None}
        with pytest.raises(NotSetUpError) as err:
            retrieve(bare, "population", provider=WordHash())
        assert "python -m sage setup" in str(err.value)
        with db.owner(bare) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector; CREATE SCHEMA sage")
        with pytest.raises(NotSetUpError) as err:
            retrieve(bare, "population", provider=WordHash())
        assert "python -m sage setup" in str(err.value)
        report = index_schema(bare, provider=WordHash())  # any PostgreSQL: no census tables, nothing to index
        assert report.upserted == 0 and report.chunks == {}
        with pytest.raises(NotSetUpError) as err:
            retrieve(bare, "population", provider=WordHash())
        assert "empty" in str(err.value)


# --- retrieval quality (session database, real model) ----------------------------------------------------------


@pytest.fixture(scope="module")
def indexed(settings):
    report = index_schema(settings)  # setup built it already: this only checks it is current
    assert report.model == BUNDLED_NAME
    return settings


def test_real_index_is_current_after_setup(indexed):
    report = index_schema(indexed)
    assert report.upserted == 0 and report.unchanged == _expected_chunks(indexed)
    assert index_status(indexed) == {"chunks": report.unchanged, "model": BUNDLED_NAME}


@pytest.mark.parametrize(
    "question, code",
    [
        ("median household income by county", "B19013_001E"),
        ("how many adults hold a bachelor's degree", "B15003_022E"),
        ("number of unemployed people in each state", "B23025_005E"),
        ("total population of each state", "B01003_001E"),
        ("households with an internet subscription", "B28011_002E"),
        ("median home value", "B25077_001E"),
        ("what do renters pay each month", "B25064_001E"),
    ],
)
def test_stable_questions_find_their_variable_in_the_top_5(indexed, question, code):
    refs = [c.object_ref for c in retrieve(indexed, question, top_k=5, object_types=["variable"])]
    assert code in refs, refs


def test_rate_questions_bring_numerator_and_denominator(indexed):
    refs = [c.object_ref for c in retrieve(indexed, "poverty rate by state", top_k=5, object_types=["variable"])]
    assert refs[:2] == ["B17025_002E", "B17025_001E"]


def test_schema_chunks_are_retrievable(indexed):
    refs = [c.object_ref for c in retrieve(indexed, "margin of error of an estimate", top_k=3,
                                          object_types=["column"])]
    assert "public.estimates.margin_error" in refs


def test_a_10000_character_question_is_truncated_not_refused(indexed):
    question = ("What is the median household income of the counties in Ohio? " * 170)[:10_000]
    chunks = retrieve(indexed, question, top_k=5)
    assert len(chunks) == 5 and all(0.0 <= c.score <= 1.0 for c in chunks)


def test_eval_retrieval_reports_recall_and_top1(indexed, tmp_path):
    rows = [
        {"id": "a", "question": "median household income in Cook County",
         "gold_sql": "SELECT estimate FROM public.estimates WHERE variable_code = 'B19013_001E'"},
        {"id": "b", "question": "unemployment rate in Ohio",
         "gold_sql": "... 'B23025_005E' ... 'B23025_003E' ..."},
        {"id": "c", "question": "average commute time", "gold_sql": None},
    ]
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    result = eval_retrieval(indexed, path, top_k=5)
    assert (result["n"], result["skipped"], result["k"]) == (2, 1, 5)
    assert result["recall_at_k"] == 1.0 and result["top1"] == 1.0
    assert [r["id"] for r in result["results"]] == ["a", "b"]
    assert result["results"][1]["gold"] == ["B23025_005E", "B23025_003E"]
    with pytest.raises(DataError, match="missing.jsonl"):
        eval_retrieval(indexed, tmp_path / "missing.jsonl")
