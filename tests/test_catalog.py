"""The ACS tables that are not loaded (issue 16): their entries in the retrieval index, retrieval of them, and the
Claude planner shown them and declining with ``needs_fetch``.

Index bookkeeping runs on the small census-shaped database of ``tests/test_retrieve.py`` with its word-hashing
embedder (fast, deterministic); retrieval quality and the Claude path run on the session database with the real
model and a handful of catalog entries, removed again afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from sage import agent, db, locks
from sage.catalog_index import (
    catalog_chunks,
    catalog_status,
    index_catalog,
    loaded_table_ids,
    start_background_build,
    wait_for_background_build,
)
from sage.census import schema as census_schema
from sage.census.catalog_search import acs_table_catalog
from sage.describe import NOT_LOADED, describe_acs_table, main_lines
from sage.errors import ErrorKind, SageError
from sage.index import index_schema, prepare_table
from sage.planner.base import PriorTurn
from sage.planner.claude.blocks import format_schema_context
from sage.planner.claude.claude import ClaudePlanner
from sage.retrieve import _other_group, _question_words, retrieve, retrieve_parts
from sage.types import Chunk
from tests.conftest import scratch_database
from tests.fake_anthropic import FakeAnthropic, reply_decline
from tests.test_retrieve import MINI_ROWS, WordHash

DATA = Path(__file__).resolve().parent.parent / "data"
CATALOG = acs_table_catalog(DATA)
#: the tables with estimates in the mini database
MINI_LOADED = {"B01003", "B19013", "B17025"}


# --- descriptions and re-ranking rules (pure) --------------------------------------------------------------------


def test_a_catalog_table_is_described_briefly_and_marked_not_loaded():
    text = describe_acs_table(CATALOG["B25003"])
    lines = text.splitlines()
    assert lines[0] == "ACS table B25003: Tenure"
    assert lines[-1] == NOT_LOADED
    assert "Universe: Occupied housing units" in lines
    assert "Lines: Owner occupied; Renter occupied" in lines
    # the everyday words of the table and of its lines (aliases.yaml keys B25003 and B25003_002E)
    assert "homeownership" in text and "renters" in text
    for entry in CATALOG.values():  # short enough for the model's window, whatever the table
        assert len(describe_acs_table(entry)) < 1200, entry["table_id"]


def test_main_lines_are_breadth_first_and_capped():
    lines = main_lines(CATALOG["B01001"]["labels"], limit=60)
    assert lines[:2] == ["Male", "Female"] and "Total" not in lines
    assert sum(len(x) + 2 for x in lines) <= 60
    assert len(set(map(str.lower, lines))) == len(lines)


def test_a_race_iteration_ranks_below_its_base_table_unless_the_question_names_its_group():
    white = describe_acs_table(CATALOG["B01001A"])
    black = describe_acs_table(CATALOG["B19013B"])
    plain = _question_words("how many people are 65 or older")[0]
    assert _other_group("B01001A", white, plain)
    assert not _other_group("B01001", describe_acs_table(CATALOG["B01001"]), plain)
    assert not _other_group("B19013B", black, _question_words("income of Black households")[0])
    assert _other_group("B19013B", black, _question_words("income of White households")[0])


# --- the index's catalog part (mini database, word-hash embedder) -----------------------------------------------


@pytest.fixture(scope="module")
def mini(settings):
    with scratch_database(settings, "catalog") as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(census_schema.DDL)
            for stmt in census_schema.comment_statements():
                conn.execute(stmt)
            conn.execute(MINI_ROWS)
        s = settings.replace(database_url=url)
        index_schema(s, provider=WordHash())
        yield s


def _catalog_refs(settings) -> set[str]:
    with db.owner(settings) as conn:
        return {r for (r,) in conn.execute(
            "SELECT object_ref FROM sage.schema_embeddings WHERE object_type = 'acs_table'")}


def _set_estimate(settings, code: str, present: bool) -> None:
    with db.owner(settings) as conn:
        if present:
            # in the variable's own (latest) period, so that public.estimates shows it too
            conn.execute("INSERT INTO public.estimates_by_vintage (geo_id, variable_code, estimate, source, vintage) "
                         "SELECT '0400000US44', variable_code, 1, 'test', vintage FROM public.variables "
                         "WHERE variable_code = %s ON CONFLICT DO NOTHING", (code,))
        else:
            conn.execute("DELETE FROM public.estimates_by_vintage WHERE variable_code = %s", (code,))


def test_the_catalog_part_holds_every_table_that_is_not_loaded(mini):
    report = index_catalog(mini, provider=WordHash())
    expected = set(CATALOG) - MINI_LOADED
    assert report.entries == len(expected) and report.upserted + report.unchanged == len(expected)
    assert _catalog_refs(mini) == expected
    with db.owner(mini) as conn:
        assert loaded_table_ids(conn) == MINI_LOADED
        content = db.scalar(conn, "SELECT content FROM sage.schema_embeddings WHERE object_ref = 'B25003'")
    assert content == describe_acs_table(CATALOG["B25003"])
    status = catalog_status(mini, model="word-hash")
    assert (status.entries, status.expected, status.complete, status.building) == (len(expected), len(expected),
                                                                                    True, False)
    again = index_catalog(mini, provider=WordHash())
    assert (again.upserted, again.unchanged, again.deleted) == (0, len(expected), 0)


def test_a_stopped_build_carries_on_where_it_was(mini):
    index_catalog(mini, provider=WordHash())
    with db.owner(mini) as conn:
        conn.execute("DELETE FROM sage.schema_embeddings WHERE object_type = 'acs_table' AND object_ref LIKE 'B25%'")
    missing = {t for t in CATALOG if t.startswith("B25")} - MINI_LOADED
    provider = WordHash()
    report = index_catalog(mini, provider=provider)
    assert report.upserted == len(missing) and len(provider.seen) == len(missing)
    assert catalog_status(mini, model="word-hash").complete


def test_a_table_that_becomes_loaded_leaves_the_catalog_and_comes_back_when_unloaded(mini):
    index_catalog(mini, provider=WordHash())
    assert "B25064" in _catalog_refs(mini)  # its variable exists but has no estimates
    _set_estimate(mini, "B25064_001E", True)
    try:
        index_schema(mini, provider=WordHash())  # what census fetch runs after loading
        assert "B25064" not in _catalog_refs(mini)
        assert index_catalog(mini, provider=WordHash()).upserted == 0
        assert "B25064" not in _catalog_refs(mini)
        chunks = retrieve(mini, "median gross rent", top_k=50, object_types=["variable", "acs_table"],
                          provider=WordHash())
        assert "B25064_001E" in {c.object_ref for c in chunks} and "B25064" not in {c.object_ref for c in chunks}
    finally:
        _set_estimate(mini, "B25064_001E", False)
        index_schema(mini, provider=WordHash())
    assert index_catalog(mini, provider=WordHash()).upserted == 1 and "B25064" in _catalog_refs(mini)


def test_a_table_loaded_during_the_build_gets_no_entry(mini):
    with db.owner(mini) as conn:
        conn.execute("DELETE FROM sage.schema_embeddings WHERE object_type = 'acs_table' AND object_ref = 'B25064'")

    class LoadsMidway(WordHash):
        def embed(self, texts):
            if any(t.startswith("ACS table B25064:") for t in texts):
                _set_estimate(mini, "B25064_001E", True)  # a census fetch commits while this batch is embedded
            return super().embed(texts)

    try:
        report = index_catalog(mini, provider=LoadsMidway())
        assert report.skipped_loaded == 1 and "B25064" not in _catalog_refs(mini)
    finally:
        _set_estimate(mini, "B25064_001E", False)
    assert index_catalog(mini, provider=WordHash()).upserted == 1


def test_a_second_builder_is_refused_and_told_who_builds(mini):
    with db.owner(mini) as other:
        assert locks.try_lock(other, locks.CATALOG_INDEX, "sage catalog index by another app")
        with pytest.raises(SageError) as err:
            index_catalog(mini, provider=WordHash())
        assert err.value.kind == ErrorKind.BUSY and "sage catalog index by another app" in err.value.message
        status = catalog_status(mini, model="word-hash")
        assert status.building and status.builder == "sage catalog index by another app"
    assert not catalog_status(mini, model="word-hash").building
    index_catalog(mini, provider=WordHash())


def test_an_index_table_from_before_the_catalog_accepts_catalog_entries(mini):
    with db.owner(mini) as conn:
        conn.execute("ALTER TABLE sage.schema_embeddings DROP CONSTRAINT schema_embeddings_object_type_check")
        conn.execute("ALTER TABLE sage.schema_embeddings ADD CONSTRAINT schema_embeddings_object_type_check "
                     "CHECK (object_type IN ('table', 'column', 'variable')) NOT VALID")
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute("UPDATE sage.schema_embeddings SET indexed_at = now() WHERE object_ref = 'B25003'")
        prepare_table(conn, WordHash().dimension)
        definition = db.scalar(conn, "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                                     "WHERE conname = 'schema_embeddings_object_type_check'")
        conn.execute("UPDATE sage.schema_embeddings SET indexed_at = now() WHERE object_ref = 'B25003'")
    assert "'acs_table'" in definition


def test_the_background_build_runs_once_and_can_be_turned_off(mini):
    with db.owner(mini) as conn:
        conn.execute("DELETE FROM sage.schema_embeddings WHERE object_type = 'acs_table' AND object_ref LIKE 'B0%'")
    off = mini.replace(catalog_index="off")
    assert not start_background_build(off, provider=WordHash())
    assert not catalog_status(off, model="word-hash").complete
    assert start_background_build(off, provider=WordHash(), force=True)
    assert wait_for_background_build(off, timeout=120)
    status = catalog_status(mini, model="word-hash")
    assert status.complete and status.error is None and status.done == status.total > 0


def test_retrieval_keeps_the_catalog_apart(mini):
    index_catalog(mini, provider=WordHash())
    top = retrieve(mini, "owner occupied renter occupied tenure", top_k=3, object_types=["acs_table"],
                   provider=WordHash())
    assert top[0].object_ref == "B25003" and all(c.object_type == "acs_table" for c in top)
    loaded, catalog = retrieve_parts(mini, "median household income", [(("table", "column", "variable"), 50),
                                                                         (("acs_table",), 5)], provider=WordHash())
    assert {c.object_type for c in loaded} == {"table", "column", "variable"} and len(catalog) == 5
    with db.owner(mini) as conn:
        conn.execute("DELETE FROM sage.schema_embeddings WHERE object_type = 'acs_table'")
    try:  # a catalog not indexed yet is no error: there is just nothing to show
        loaded, catalog = retrieve_parts(mini, "median household income", [(None, 5), (("acs_table",), 5)],
                                         provider=WordHash())
        assert loaded and catalog == []
    finally:
        index_catalog(mini, provider=WordHash())


# --- retrieval quality and the Claude planner (session database, real model, a few catalog entries) -------------

SOME_TABLES = ["B25003", "B25002", "B25070", "B08301", "B08303", "B01001", "B01001A", "B01001B", "B01001I", "B16001",
               "C16001", "B21001", "B18101", "B12001", "B25034", "B28001", "B22001", "B19058", "B11001", "B25010"]


@pytest.fixture(scope="module")
def with_catalog(settings):
    """The session database with the catalog entries of :data:`SOME_TABLES` (real model), removed afterwards."""
    index_catalog(settings, tables=SOME_TABLES)
    yield settings
    with db.owner(settings) as conn:
        conn.execute("DELETE FROM sage.schema_embeddings WHERE object_type = 'acs_table'")


@pytest.mark.parametrize("question, table", [
    ("What is the homeownership rate in West Virginia?", "B25003"),
    ("How many residents of Sumter County, Florida are 65 or older?", "B01001"),
    ("how many people in Ohio ride a bike to work", "B08301"),
    ("number of veterans in El Paso County, Colorado", "B21001"),
])
def test_a_question_about_a_table_not_loaded_finds_it_first(with_catalog, question, table):
    found = retrieve(with_catalog, question, top_k=3, object_types=["acs_table"])
    assert found[0].object_ref == table, [(c.object_ref, round(c.score, 3)) for c in found]


@pytest.fixture
def claude(with_catalog, monkeypatch):
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        s = with_catalog.replace(anthropic_api_key="sk-ant-catalog-test", planner="claude", claude_timeout_s=10.0)
        yield fake, ClaudePlanner(s, max_retries=0), s


def test_claude_sees_the_tables_not_loaded_and_its_needs_fetch_becomes_the_answer(claude):
    fake, planner, s = claude
    fake.enqueue(reply_decline("needs_fetch", ["b25003"], ["Homeownership needs table B25003, which is not loaded."]))
    answer = agent.ask("What share of homes in West Virginia are owner-occupied?", s, planner=planner, record=False)
    [request] = fake.message_requests
    sent = request.body["messages"][0]["content"]
    assert "## ACS tables that are NOT loaded" in sent
    catalog_part = sent.split("## ACS tables that are NOT loaded", 1)[1]
    assert "- B25003 Tenure — universe: Occupied housing units; lines: Owner occupied; Renter occupied" in catalog_part
    assert "Candidate variables" in sent.split("## ACS tables that are NOT loaded", 1)[0]  # loaded ones first
    assert request.body["output_config"]["format"]["schema"]["properties"]["decline"]
    assert answer.declined and answer.decline_kind == ErrorKind.NEEDS_FETCH
    out = answer.to_dict()
    assert out["error"] == {"kind": "needs_fetch", "message": "Homeownership needs table B25003, which is not loaded.",
                            "fetch": {"tables": ["B25003"], "vintage": 2023, "geographies": ["state", "county"]}}


def test_claude_naming_no_fetchable_table_is_a_plain_decline(claude):
    fake, planner, s = claude
    fake.enqueue(reply_decline("needs_fetch", ["B99999", "B19013"], ["Needs a table."]),
                 reply_decline("declined", [], ["The ACS does not measure crime."]))
    answer = agent.ask("Median household income and its history in Ohio", s, planner=planner, record=False)
    assert answer.declined and answer.decline_kind == ErrorKind.DECLINED and answer.fetch is None
    answer = agent.ask("crime rate in Ohio", s, planner=planner, record=False)
    assert answer.to_dict()["error"] == {"kind": "declined", "message": "The ACS does not measure crime."}


def test_a_needs_fetch_decline_names_its_table_when_claude_did_not(claude):
    fake, planner, s = claude
    fake.enqueue(reply_decline("needs_fetch", ["B08301"], ["Commuting is not in the data."]))
    answer = agent.ask("How many people in Ohio bike to work?", s, planner=planner, record=False)
    assert answer.decline == ("This question needs ACS table B08301 (Means of Transportation to Work), which is not "
                              "loaded.")
    assert answer.assumptions[1] == "Commuting is not in the data."


def test_a_follow_up_that_needs_a_table_keeps_its_reading_first_and_its_reason_as_the_decline(claude):
    fake, planner, s = claude
    prior = PriorTurn("median household income in Ohio", "median household income, Ohio", "SELECT 1", ("a",))
    fake.enqueue(reply_decline("needs_fetch", ["B25003"], ["Homeownership needs B25003, which is not loaded."],
                               standalone="homeownership rate, Ohio"))
    answer = agent.ask("and the homeownership rate?", s, planner=planner, record=False, context=[prior])
    assert answer.declined and answer.decline_kind == ErrorKind.NEEDS_FETCH and answer.fetch["tables"] == ["B25003"]
    assert answer.followup and answer.assumptions == ["Read as: homeownership rate, Ohio.",
                                                      "Homeownership needs B25003, which is not loaded."]
    assert answer.decline == "Homeownership needs B25003, which is not loaded."
    assert answer.standalone == "homeownership rate, Ohio"


def test_ask_json_on_the_command_line_carries_the_fetch(claude, monkeypatch, capsys):
    from sage import cli

    fake, _planner, s = claude
    fake.enqueue(reply_decline("needs_fetch", ["B25003"], ["Homeownership needs B25003, which is not loaded."]))
    for name, value in {"SAGE_DATA_DIR": str(s.data_dir), "ANTHROPIC_API_KEY": "sk-ant-catalog-test",
                        "SAGE_PLANNER": "claude", "SAGE_CLAUDE_TIMEOUT_S": "10"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    code = cli.main(["ask", "--json", "homeownership rate in Ohio"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["error"]["kind"] == "needs_fetch"
    assert out["error"]["fetch"] == {"tables": ["B25003"], "vintage": 2023, "geographies": ["state", "county"]}


def test_retrieve_on_the_command_line_shows_catalog_tables(with_catalog, monkeypatch, capsys):
    from sage import cli

    monkeypatch.setenv("SAGE_DATA_DIR", str(with_catalog.data_dir))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert cli.main(["retrieve", "--json", "--types", "acs_table", "--top-k", "3", "homeownership rate"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [c["object_type"] for c in found] == ["acs_table"] * 3 and found[0]["object_ref"] == "B25003"
    assert NOT_LOADED in found[0]["content"]


def test_the_context_marks_catalog_tables_as_not_loaded():
    chunk = Chunk(1, "acs_table", "B25003", describe_acs_table(CATALOG["B25003"]), 0.5)
    text = format_schema_context([chunk])
    assert "NOT loaded" in text and "B25003 Tenure" in text and "homeownership" not in text


def test_catalog_chunks_skip_the_loaded_tables(settings):
    chunks = dict(catalog_chunks(settings, {"B25003"}))
    assert "B25003" not in chunks and len(chunks) == len(CATALOG) - 1


def test_a_table_title_is_read_without_indexing_the_whole_catalog():
    """A decline that names the table to fetch needs its title only; the titles read from the first row of each
    table are the catalog's own concepts, for every table."""
    from sage.census.catalog_search import CATALOG_FILE, _titles_cached, table_title

    data = Path(__file__).resolve().parent.parent / "data"
    full = acs_table_catalog(data)
    path = data / "acs" / CATALOG_FILE
    titles = _titles_cached(str(path), path.stat().st_mtime)
    assert len(full) > 1000 and titles == {t: entry["concept"] for t, entry in full.items()}
    assert table_title(data, "B25003") == full["B25003"]["concept"] and table_title(data, "B99999") is None
