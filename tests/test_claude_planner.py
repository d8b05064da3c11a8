"""The Claude planner against a fake Messages API on 127.0.0.1, through the real ``anthropic`` SDK.

What the product promises here: an answer that always parses (or a ``bad_answer`` error), the cached static prefix,
the retrieved context and the question in every request, the failed attempts in a retry, nothing internal and no
credential but the key, and one distinct, actionable error per failure (no key, 401, 429/529, network, timeout).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from types import SimpleNamespace

import pytest

from sage.errors import PlanningError
from sage.planner.base import Attempt, Planner
from sage.planner.claude.claude import ClaudePlanner
from sage.planner.claude.examples import FEW_SHOT_EXAMPLES
from sage.planner.claude.plan_model import PLAN_SCHEMA, PlanModel
from sage.planner.claude.prompt import SYSTEM_PROMPT
from sage.planner.claude.resolve import Grounding, Reading, Resolved
from sage.settings import load_settings
from sage.types import Chunk
from tests.fake_anthropic import (
    FakeAnthropic,
    error_reply,
    reply_content,
    reply_decline,
    reply_plan,
    reply_text,
    slow,
)

FAKE_KEY = "sk-ant-test-fake-key-0123456789"
OTHER_SECRETS = ("census-secret-4242", "dbpass-secret-777", "env-token-must-not-leak", "env-key-must-not-leak")

CHUNKS = [
    Chunk(1, "variable", "B23025_005E", "ACS variable B23025_005E: Unemployed\nACS 5-year 2019-2023", 0.61),
    Chunk(2, "variable", "B23025_003E", "ACS variable B23025_003E: Civilian labor force\nACS 5-year 2019-2023", 0.58),
    Chunk(3, "table", "public.estimates", "Table public.estimates (table): one row per place and variable", 0.40),
    Chunk(4, "table", "sage.schema_embeddings", "Table sage.schema_embeddings: INTERNAL-INDEX-TEXT", 0.39),
    Chunk(5, "column", "sage.questions.sql", "Column sage.questions.sql: INTERNAL-LOG-TEXT", 0.38),
]
SQL = (
    "SELECT g.state_name, ROUND(100.0 * SUM(e.estimate) FILTER (WHERE e.variable_code = 'B23025_005E') / "
    "NULLIF(SUM(e.estimate) FILTER (WHERE e.variable_code = 'B23025_003E'), 0), 1) AS unemployment_rate_pct "
    "FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id WHERE g.level = 'state' "
    "AND g.state_abbr = 'OH' AND e.variable_code IN ('B23025_005E', 'B23025_003E') GROUP BY g.state_name"
)


@pytest.fixture
def fake(monkeypatch):
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        # credentials the SDK could pick up from the environment: none of them may be sent
        monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "env-token-must-not-leak")
        monkeypatch.setenv("ANTHROPIC_API_KEY", "env-key-must-not-leak")
        yield server


def make_settings(**overrides):
    values = dict(
        anthropic_api_key=FAKE_KEY,
        census_api_key="census-secret-4242",
        database_url="postgresql://owner:dbpass-secret-777@127.0.0.1:9/census",
        model="claude-test-model",
        claude_timeout_s=10.0,
    )
    values.update(overrides)
    return load_settings(environ={}, secrets_path=Path(os.devnull), **values)


def planner(**kw) -> ClaudePlanner:
    max_retries = kw.pop("max_retries", 2)
    measures_fn = kw.pop("measures_fn", None)
    grounding_fn = kw.pop("grounding_fn", None)
    return ClaudePlanner(make_settings(**kw), measures_fn=measures_fn, grounding_fn=grounding_fn,
                         max_retries=max_retries)


def _error(fn) -> PlanningError:
    with pytest.raises(PlanningError) as info:
        fn()
    return info.value


# -- a plan --------------------------------------------------------------------------------------------------------


def test_a_plan_parses_with_usage(fake):
    usage = dict(input_tokens=900, output_tokens=120, cache_read_input_tokens=4300, cache_creation_input_tokens=7)
    fake.enqueue(reply_plan(SQL + " ;\n", ["Unemployment rate = B23025_005E / B23025_003E."], "big", usage=usage))
    p = planner()
    assert isinstance(p, Planner) and p.name == "claude"
    plan = p.plan("What is the unemployment rate in Ohio?", CHUNKS)
    assert plan.sql == SQL  # trailing semicolon and whitespace removed
    assert plan.assumptions == ["Unemployment rate = B23025_005E / B23025_003E."]
    assert plan.display_hint == "big"
    assert plan.planner == "claude"
    assert {k: plan.usage[k] for k in usage} == usage


def test_an_unknown_hint_becomes_table_and_a_decline_is_kept(fake):
    fake.enqueue(reply_text('{"sql": "", "assumptions": ["No city geography."], "displayHint": "pie"}'))
    plan = planner().plan("population of Boise city", CHUNKS)
    assert plan.declined and plan.display_hint == "table"
    assert plan.assumptions == ["No city geography."]


def test_the_plan_model_is_lenient_where_harmless():
    m = PlanModel.model_validate_json('{"sql": " SELECT 1 ;; ", "assumptions": " one "}')
    assert (m.sql, m.assumptions, m.display_hint, m.standalone) == ("SELECT 1", ["one"], "table", "")
    assert PlanModel.model_validate({"sql": "", "standalone": " a\n b "}).standalone == "a b"
    m = PlanModel.model_validate({"sql": "", "assumptions": [" a ", "", 3], "display_hint": "map"})
    assert (m.sql, m.assumptions, m.display_hint) == ("", ["a", "3"], "map")
    assert PlanModel.model_validate({"sql": "x", "assumptions": [], "displayHint": "pie"}).display_hint == "table"


def test_thinking_blocks_are_ignored(fake):
    text = '{"sql": "SELECT 1", "assumptions": [], "displayHint": "big"}'
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    fake.enqueue(reply_content([thinking, {"type": "text", "text": text}]))
    assert planner().plan("q", CHUNKS).sql == "SELECT 1"


# -- what is sent --------------------------------------------------------------------------------------------------


def test_the_schema_is_already_in_the_sdks_strict_form():
    from anthropic import transform_schema

    from sage.planner.edits import EditKind

    assert transform_schema(PLAN_SCHEMA) == PLAN_SCHEMA
    assert PLAN_SCHEMA["required"] == ["standalone", "comparison", "periods", "sql", "assumptions", "displayHint",
                                       "edits"]
    # a follow-up's edits are named from the closed set, as the offline planner names them
    assert PLAN_SCHEMA["properties"]["edits"]["items"]["enum"] == [k.value for k in EditKind]
    assert PLAN_SCHEMA["properties"]["comparison"]["enum"] == ["none", "places", "change", "difference"]
    decline = PLAN_SCHEMA["$defs"]["PlanDecline"]
    assert decline["properties"]["kind"]["enum"] == ["declined", "needs_fetch", "ambiguous"]
    assert {"tables", "geographies", "states", "vintage", "suggestions"} <= set(decline["properties"])


def test_request_carries_prefix_context_question_and_no_secrets(fake):
    fake.enqueue(reply_plan(SQL, ["a"], "big"))
    question = "What is the unemployment rate in Ohio?"
    planner().plan(question, CHUNKS)
    [req] = fake.message_requests
    body = req.body
    assert body["model"] == "claude-test-model"
    assert body["max_tokens"] > 0
    # the static prefix: the rules and the worked examples, the cache breakpoint on the last system block
    system = body["system"]
    assert system[0]["text"] == SYSTEM_PROMPT
    assert FEW_SHOT_EXAMPLES[0][0] in system[-1]["text"]
    assert system[-1]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in block for block in system[:-1])
    # the answer's shape is fixed by structured outputs
    assert body["output_config"]["format"] == {"type": "json_schema", "schema": PLAN_SCHEMA}
    # the per-question part: retrieved context and the question, nothing internal
    [msg] = body["messages"]
    assert msg["role"] == "user"
    content = msg["content"]
    assert "B23025_005E" in content and "Civilian labor force" in content and "public.estimates" in content
    assert question in content
    raw = req.raw.decode()
    assert "INTERNAL-INDEX-TEXT" not in raw and "INTERNAL-LOG-TEXT" not in raw
    assert "sage.schema_embeddings" not in raw and "sage.questions" not in raw
    # credentials: the key only in its header; nothing else from the settings or the environment
    carrying = [name for name, value in req.headers.items() if FAKE_KEY in value]
    assert carrying in (["authorization"], ["x-api-key"])
    assert FAKE_KEY not in raw
    everything = raw + "\n".join(f"{k}: {v}" for k, v in req.headers.items())
    for secret in OTHER_SECRETS:
        assert secret not in everything


def test_a_retry_carries_the_failed_sql_and_its_error(fake):
    first_sql = "SELECT g.state_name, e.unemployment FROM public.estimates e JOIN public.geography g USING (geo_id)"
    fake.enqueue(reply_plan(first_sql, ["first try"], "big"), reply_plan(SQL, ["second try"], "big"))
    p = planner()
    question = "unemployment rate in Ohio"
    first = p.plan(question, CHUNKS)
    error = 'column e.unemployment does not exist'
    second = p.plan(question, CHUNKS, [Attempt(sql=first.sql, error=error, kind="undefined")])
    assert second.sql == SQL
    before, after = (r.body["messages"][0]["content"] for r in fake.message_requests)
    assert first_sql not in before and error not in before
    assert first_sql in after and error in after
    assert after.index(first_sql) < after.index(question)
    # the cached prefix is byte-for-byte the same on both calls
    assert fake.message_requests[0].body["system"] == fake.message_requests[1].body["system"]


def test_measures_go_into_the_context_and_a_failing_source_is_skipped(fake):
    measure = SimpleNamespace(
        name="unemployment rate", formula="100.0 * B23025_005E / NULLIF(B23025_003E, 0)", unit="percent",
        description="Unemployed share of the civilian labor force.",
    )
    fake.enqueue(reply_plan(SQL, [], "big"), reply_plan(SQL, [], "big"))
    planner(measures_fn=lambda q: [measure]).plan("unemployment in Ohio", CHUNKS)
    sent = fake.requests[-1].body["messages"][0]["content"]
    assert "unemployment rate: 100.0 * B23025_005E / NULLIF(B23025_003E, 0)" in sent

    def broken(q):
        raise RuntimeError("semantic layer not loaded")

    assert planner(measures_fn=broken).plan("unemployment in Ohio", CHUNKS).sql == SQL


# -- what the rows compare, and the declines of places and periods -------------------------------------------------


CHANGE_SQL = "SELECT 'Travis County' AS county_name, 100 AS change, 10 AS change_moe"


def test_the_comparison_and_periods_become_the_plans(fake):
    fake.enqueue(reply_plan(CHANGE_SQL, ["a"], "statrow", comparison="change", periods=["2019-2023", "2014-2018"]),
                 reply_plan(SQL, ["b"], "bar", comparison="places", periods=["2014-2018", "2019-2023"]),
                 reply_plan(SQL, ["c"], "bar"))
    p = planner()
    change = p.plan("how did it change?", CHUNKS)
    assert change.compare == "change" and change.periods == ("2014-2018", "2019-2023")  # earlier first
    places = p.plan("compare them", CHUNKS)
    assert places.compare == "places" and places.periods == ()  # periods belong to a change only
    older = p.plan("no comparison said", CHUNKS)  # a reply without the fields: nothing is compared
    assert older.compare is None and older.periods == ()


@pytest.mark.parametrize("comparison, periods, compare, kept", [
    ("significance!", ["2014-2018", "2019-2023"], None, ()),
    ("change", ["2014-2018"], "change", ()),
    ("change", ["2014-2018", "2014-2018"], "change", ()),
    ("change", ["2016", "2023"], "change", ()),
    ("change", "2014-2018, 2019-2023", "change", ()),
    ("change", ["2014\u20132018", " 2019-2023 "], "change", ("2014-2018", "2019-2023")),
    ("difference", None, "difference", ()),
    ("none", ["2014-2018", "2019-2023"], None, ()),
])
def test_unknown_comparisons_and_malformed_periods_are_none_never_a_crash(fake, comparison, periods, compare, kept):
    fake.enqueue(reply_plan(CHANGE_SQL, ["a"], "statrow", comparison=comparison, periods=periods))
    plan = planner().plan("q", CHUNKS)
    assert (plan.compare, plan.periods) == (compare, kept)


def test_a_decline_compares_nothing(fake):
    fake.enqueue(reply_plan("", ["Cannot."], comparison="change", periods=["2014-2018", "2019-2023"]))
    plan = planner().plan("q", CHUNKS)
    assert plan.declined and plan.compare is None and plan.periods == ()


def test_an_ambiguous_name_is_asked_back_with_its_readings(fake):
    readings = [f"What is the population of Springfield city, {st}?" for st in ("MO", "MA", "IL")]
    fake.enqueue(reply_decline("ambiguous", [], ["“Springfield” is the name of 22 places; which one?"],
                               fields={"suggestions": [*readings, readings[0], " "]}),
                 reply_decline("ambiguous", [], ["Which one?"]))
    p = planner()
    plan = p.plan("population of Springfield", CHUNKS)
    assert plan.declined and plan.decline_kind == "ambiguous" and plan.suggestions == readings
    assert plan.fetch is None and plan.assumptions == ["“Springfield” is the name of 22 places; which one?"]
    bare = p.plan("population of Springfield", CHUNKS)  # no readings to offer: a plain decline
    assert bare.decline_kind == "declined" and bare.suggestions == []


def test_a_place_figure_names_the_fetch_of_places_even_for_a_loaded_table(fake):
    income = Chunk(9, "variable", "B19013_001E", "ACS variable B19013_001E: Median household income", 0.7)
    fake.enqueue(
        reply_decline("needs_fetch", ["b19013"], ["Places have only population and housing units."],
                      fields={"geographies": ["Place", "moon"], "states": ["tx", "Texas"]}),
        reply_decline("needs_fetch", ["B19013"], ["Already loaded for counties."]),
        reply_decline("needs_fetch", ["B23025"], [], fields={"vintage": "2012-2016"}),
    )
    p = planner()
    plan = p.plan("median household income in Austin, TX", [*CHUNKS, income])
    assert plan.decline_kind == "needs_fetch"
    assert plan.fetch == {"tables": ["B19013"], "vintage": 2023, "geographies": ["place"], "states": ["TX"]}
    # the default fetch of a table the context shows loaded is no fetch: a plain decline
    assert p.plan("median household income in Ohio", [*CHUNKS, income]).decline_kind == "declined"
    # another period of a loaded table: the period ending in that year, named when Claude did not
    year = p.plan("unemployment in Ohio in 2016", CHUNKS)
    assert year.fetch == {"tables": ["B23025"], "vintage": 2016, "geographies": ["state", "county"]}
    assert year.assumptions[0].startswith("This question needs ACS table B23025 (") and "(2012-2016)" in \
        year.assumptions[0]


def test_the_places_block_is_sent_and_a_failing_reader_is_skipped(fake):
    grounding = Grounding(
        (Resolved("Austin, TX", "place", "1600000US4805000", "Austin city, Texas", has=("population",)),
         Resolved("Springfield", "ambiguous", readings=(Reading("Springfield city, MO", population=169432),))),
        ("nation", "state", "county", "place"), {"B23025_005E": ("2014-2018", "2019-2023")})
    asked: list[str] = []

    def reader(question):
        asked.append(question)
        return grounding

    fake.enqueue(reply_plan(SQL, ["a"], "big"), reply_plan(SQL, ["b"], "big"))
    planner(grounding_fn=reader).plan("unemployment in Austin, TX", CHUNKS)
    sent = fake.message_requests[-1].body["messages"][0]["content"]
    assert asked == ["unemployment in Austin, TX"]
    assert sent.startswith("<places>\n- “Austin, TX” → place 1600000US4805000 'Austin city, Texas' (has: "
                           "population)\n- “Springfield” → ambiguous: Springfield city, MO (169,432)\n")
    assert "; periods loaded: 2014-2018, 2019-2023" in sent.split("B23025_005E", 1)[1].split("\n", 1)[0]
    system = fake.message_requests[-1].body["system"]

    def broken(question):
        raise RuntimeError("catalog not readable")

    plan = planner(grounding_fn=broken).plan("unemployment in Austin, TX", CHUNKS)
    assert plan.sql == SQL and "<places>" not in fake.message_requests[-1].body["messages"][0]["content"]
    assert fake.message_requests[-1].body["system"] == system  # the cached prefix never holds the places


# -- failures ------------------------------------------------------------------------------------------------------


def test_no_key_is_reported_before_any_request(fake):
    err = _error(lambda: ClaudePlanner(make_settings(anthropic_api_key=None)))
    assert err.kind == "no_key"
    assert "ANTHROPIC_API_KEY" in err.message and "offline" in err.message
    assert fake.requests == []


def test_401_is_a_bad_key(fake):
    fake.enqueue(error_reply(401, "invalid x-api-key"))
    err = _error(lambda: planner().plan("q", CHUNKS))
    assert err.kind == "bad_key"
    assert "ANTHROPIC_API_KEY" in err.message and FAKE_KEY not in err.message
    assert len(fake.message_requests) == 1  # not retried


def test_429_then_success_is_retried_by_the_sdk(fake):
    fake.enqueue(error_reply(429, "rate limited"), reply_plan(SQL, ["ok"], "big"))
    plan = planner().plan("q", CHUNKS)
    assert plan.sql == SQL
    assert len(fake.message_requests) == 2
    assert fake.message_requests[1].headers.get("x-stainless-retry-count") == "1"


@pytest.mark.parametrize("status", [529, 429])
def test_overloaded_or_rate_limited_after_retries(fake, status):
    fake.enqueue(*(error_reply(status) for _ in range(3)))
    err = _error(lambda: planner(max_retries=2).plan("q", CHUNKS))
    assert err.kind == "rate_limited"
    assert str(status) in err.message and "offline" in err.message
    assert len(fake.message_requests) == 3  # the first try and two SDK retries


def test_a_slow_server_hits_the_timeout(fake):
    fake.enqueue(slow(reply_plan(SQL), 5), slow(reply_plan(SQL), 5))
    err = _error(lambda: planner(claude_timeout_s=0.3, max_retries=1).plan("q", CHUNKS))
    assert err.kind == "network" and err.detail == "timeout"
    assert "SAGE_CLAUDE_TIMEOUT_S" in err.message
    assert len(fake.message_requests) == 2


def test_no_server_is_a_network_error(monkeypatch):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    err = _error(lambda: planner(max_retries=0).plan("q", CHUNKS))
    assert err.kind == "network"
    assert "ANTHROPIC_BASE_URL" in err.message


@pytest.mark.parametrize(
    "reply,why",
    [
        (reply_text("Sure! Here is the SQL: SELECT 1"), "not JSON"),
        (reply_text('{"query": "SELECT 1", "assumptions": []}'), "no 'sql'"),
        (reply_text('{"sql": 42, "assumptions": [], "displayHint": "big"}'), "no 'sql'"),
        (reply_text('["SELECT 1"]'), "not a JSON object"),
        (reply_text('{"sql": "SELECT 1", "assumptions": {"a": 1}, "displayHint": "big"}'), "not a list"),
        (reply_text('{"sql": "SELECT 1", "assum', stop_reason="max_tokens"), "cut off"),
        (reply_text("", stop_reason="refusal"), "declined"),
        (reply_content([]), "no text"),
    ],
)
def test_an_answer_that_does_not_fit_is_a_bad_answer(fake, reply, why):
    fake.enqueue(reply)
    err = _error(lambda: planner().plan("q", CHUNKS))
    assert err.kind == "bad_answer"
    assert why in err.message
    assert len(fake.message_requests) == 1  # a bad answer is the agent's to retry, not the transport's


@pytest.mark.parametrize("status,hint", [(404, "SAGE_MODEL"), (400, "SAGE_MODEL"), (403, "permissions")])
def test_other_api_errors_name_what_to_check(fake, status, hint):
    fake.enqueue(error_reply(status, f"fake {status} text"))
    err = _error(lambda: planner().plan("q", CHUNKS))
    assert err.kind == "api"
    assert str(status) in err.message and hint in err.message and f"fake {status} text" in err.message
