"""The SQL guard on its own (no database): the attack corpus, the legitimate queries, LIMIT, policy flags.

The corpus (tests/data/guard_corpus.jsonl) is data, one JSON object a line: ``sql``, ``expect`` (reject, accept,
or runtime: valid SQL that only the executor can stop) and ``class`` (the attack class; docs/security.md §4).
Every bypass found later belongs there as a new line.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pglast
import pytest

from sage import guard
from sage.errors import GuardError
from sage.guard import Guarded, check, check_json, pretty

CORPUS_PATH = Path(__file__).parent / "data" / "guard_corpus.jsonl"
CORPUS = [json.loads(line) for line in CORPUS_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
REJECT = [c for c in CORPUS if c["expect"] == "reject"]
ACCEPT = [c for c in CORPUS if c["expect"] == "accept"]
RUNTIME = [c for c in CORPUS if c["expect"] == "runtime"]

ATTACK_CLASSES = {
    "statement-type",
    "multi-statement",
    "wrapper-breakout",
    "hidden-write",
    "session-poison",
    "scs-chain",
    "fingerprint",
    "server-file",
    "unicode-escape",
    "dos",
    "sql-in-string",
    "scope",
    "attribute-notation",
}


def _id(case: dict) -> str:
    return f"{case['class']}:{case['sql'][:60]}"


def test_corpus_covers_every_class():
    assert len(REJECT) >= 120
    assert len(ACCEPT) >= 30
    assert RUNTIME, "the corpus needs [runtime] cases for the executor tests"
    classes = Counter(c["class"] for c in REJECT)
    assert set(classes) == ATTACK_CLASSES
    assert all(n >= 5 for n in classes.values()), classes
    assert {c["expect"] for c in CORPUS} == {"reject", "accept", "runtime"}
    assert len({c["sql"] for c in CORPUS}) == len(CORPUS), "duplicate corpus lines"


@pytest.mark.parametrize("case", REJECT, ids=_id)
def test_attack_is_rejected(case):
    with pytest.raises(GuardError) as info:
        check(case["sql"])
    assert info.value.message and len(info.value.message) < 200


@pytest.mark.parametrize("case", ACCEPT, ids=_id)
def test_legitimate_query_is_accepted(case):
    guarded = check(case["sql"], max_rows=1000)
    assert isinstance(guarded, Guarded)
    assert guarded.original == case["sql"]
    assert set(guarded.tables) <= {"public.geography", "public.variables", "public.estimates"}
    assert 0 < guarded.limit <= 1000
    # the text that runs is one SELECT for PostgreSQL's grammar, and checking it again changes nothing
    (stmt,) = pglast.parse_sql(guarded.sql)
    assert isinstance(stmt.stmt, pglast.ast.SelectStmt)
    again = check(guarded.sql, max_rows=1000)
    assert (again.sql, again.tables, again.limit) == (guarded.sql, guarded.tables, guarded.limit)


def test_rejected_statements_name_what_was_wrong():
    def reason(sql: str) -> GuardError:
        with pytest.raises(GuardError) as info:
            check(sql)
        return info.value

    assert reason("DELETE FROM estimates").message.startswith("only SELECT statements are allowed")
    assert reason("SELECT 1; SELECT 2").message == "only one statement is allowed"
    assert reason("SELECT * FROM sage.schema_embeddings").message == (
        "table sage.schema_embeddings is not available; only public.geography, public.variables, "
        "public.estimates, public.estimates_by_vintage, public.cpi_u_rs can be queried"
    )
    assert reason("SELECT pg_sleep(1)").message == "function pg_sleep is not allowed"
    assert "pg_read_file" in reason('SELECT U&"pg_re\\0061d_file"(\'x\')').message  # decoded, as the server does
    assert "WITH RECURSIVE" in reason("WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r").message


@pytest.mark.parametrize(
    "sql, policy",
    [
        ("", False),
        ("   \n\t", False),
        ("-- only a comment", False),
        (";;", False),
        ("SELEC name FROM geography", False),
        ("SELECT name FROM geography WHERE", False),
        ("SELECT * FROM estimates WHERE geo_id = $1", False),
        ("SELECT " + " + ".join(["1"] * 8000), False),  # over the length cap
        ("DELETE FROM estimates", True),
        ("SELECT 1; DELETE FROM estimates", True),
        ("SELECT * FROM pg_class", True),
        ("SELECT * FROM sage.questions", True),
        ("SELECT set_config('statement_timeout', '0', false)", True),
        ("SELECT pg_catalog.lower(name) FROM geography", True),
        ('SELECT "lower"(name) FROM geography', True),
        ("SELECT * FROM estimates FOR UPDATE", True),
        ("WITH d AS (DELETE FROM estimates RETURNING 1) SELECT * FROM d", True),
        ("SELECT 'sage.questions'::regclass", True),
    ],
)
def test_policy_flag(sql, policy):
    with pytest.raises(GuardError) as info:
        check(sql)
    assert info.value.policy is policy


def test_length_cap():
    near = "SELECT count(*) FROM estimates " + "-" * (guard.MAX_SQL_CHARS - 40)
    assert len(near) <= guard.MAX_SQL_CHARS
    assert check(near).tables == ("public.estimates",)
    with pytest.raises(GuardError, match="too long"):
        check(near + "-" * 100)


def test_non_text_is_rejected():
    with pytest.raises(GuardError):
        check(b"SELECT 1")  # type: ignore[arg-type]
    with pytest.raises(GuardError):
        check(None)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------------------
# LIMIT


@pytest.mark.parametrize(
    "sql, max_rows, limit, capped",
    [
        ("SELECT name FROM geography", 1000, 1000, True),
        ("SELECT name FROM geography LIMIT 10", 1000, 10, False),
        ("SELECT name FROM geography LIMIT 5000", 1000, 1000, True),
        ("SELECT name FROM geography LIMIT 1000", 1000, 1000, False),
        ("SELECT name FROM geography LIMIT 0", 1000, 0, False),
        ("SELECT name FROM geography LIMIT ALL", 1000, 1000, True),
        ("SELECT name FROM geography LIMIT NULL", 1000, 1000, True),
        ("SELECT name FROM geography LIMIT (SELECT count(*) FROM variables)", 1000, 1000, True),
        ("SELECT name FROM geography LIMIT 2 + 3", 1000, 1000, True),
        ("SELECT name FROM geography LIMIT 20 OFFSET 40", 1000, 20, False),
        ("SELECT name FROM geography OFFSET 40", 1000, 1000, True),
        ("SELECT name FROM geography ORDER BY name FETCH FIRST 7 ROWS ONLY", 1000, 7, False),
        ("SELECT name FROM geography ORDER BY name FETCH FIRST 7000 ROWS ONLY", 1000, 1000, True),
        ("SELECT name FROM geography", 50, 50, True),
        ("SELECT name FROM geography LIMIT 60", 50, 50, True),
        ("SELECT name FROM geography UNION SELECT label FROM variables", 100, 100, True),
        ("SELECT name FROM geography UNION SELECT label FROM variables LIMIT 5", 100, 5, False),
    ],
)
def test_limit_is_applied_on_the_tree(sql, max_rows, limit, capped):
    guarded = check(sql, max_rows=max_rows)
    assert (guarded.limit, guarded.capped) == (limit, capped)
    top = pglast.parse_sql(guarded.sql)[0].stmt
    assert top.limitCount.val.ival == limit
    if "OFFSET" in sql:
        assert top.limitOffset is not None


def test_inner_limits_are_left_alone_and_the_outer_one_is_added():
    guarded = check("SELECT * FROM (SELECT name FROM geography ORDER BY name LIMIT 5000) t", max_rows=100)
    inner = pglast.parse_sql(guarded.sql)[0].stmt.fromClause[0].subquery
    assert inner.limitCount.val.ival == 5000
    assert guarded.sql.endswith("LIMIT 100")


def test_with_ties_keeps_its_meaning_under_the_cap():
    guarded = check("SELECT name FROM geography ORDER BY level FETCH FIRST 5000 ROWS WITH TIES", max_rows=100)
    assert "WITH TIES" in guarded.sql and guarded.limit == 100


def test_a_trailing_comment_cannot_swallow_the_limit():
    guarded = check("SELECT name FROM geography -- the end", max_rows=10)
    assert guarded.sql == "SELECT name\nFROM geography\nLIMIT 10"


# ---------------------------------------------------------------------------------------------------------------
# tables and scoping


def test_tables_read_are_reported():
    guarded = check(
        "WITH x AS (SELECT geo_id FROM public.estimates) SELECT g.name FROM x JOIN geography g USING (geo_id)"
    )
    assert guarded.tables == ("public.estimates", "public.geography")
    assert check("SELECT 1 + 1").tables == ()
    assert check("VALUES (1), (2)").tables == ()


def test_cte_scoping_follows_postgresql():
    # a later CTE may read an earlier one; the body of a CTE named like a census table reads the real table
    check("WITH a AS (SELECT geo_id FROM estimates), b AS (SELECT * FROM a) SELECT count(*) FROM b")
    assert check("WITH estimates AS (SELECT * FROM estimates) SELECT * FROM estimates").tables == (
        "public.estimates",
    )
    # a CTE defined inside a subquery is not visible outside it: here pg_class is the catalog
    with pytest.raises(GuardError, match="pg_class"):
        check("SELECT * FROM (WITH pg_class AS (SELECT 1) SELECT * FROM pg_class) x, pg_class")
    # an earlier CTE cannot see a later one (that would be the real table z)
    with pytest.raises(GuardError, match="table z"):
        check("WITH y AS (SELECT * FROM z), z AS (SELECT 1) SELECT * FROM y")
    # schema-qualified names never resolve to a CTE
    with pytest.raises(GuardError, match="public.x"):
        check("WITH x AS (SELECT 1) SELECT * FROM public.x")


def test_quoted_table_names_are_matched_exactly():
    assert check('SELECT count(*) FROM "estimates"').tables == ("public.estimates",)
    assert check("SELECT count(*) FROM ESTIMATES").tables == ("public.estimates",)
    with pytest.raises(GuardError):
        check('SELECT count(*) FROM "Estimates"')


# ---------------------------------------------------------------------------------------------------------------
# functions


def test_grammar_spelled_functions_are_allowed_but_not_when_typed_out():
    check(
        "SELECT trim(both ' ' FROM name), substring(name FROM 1 FOR 3), extract(year FROM current_date) "
        "FROM geography"
    )
    check("SELECT name FROM geography WHERE name LIKE 'a!%' ESCAPE '!' OR name SIMILAR TO 'B%'")
    with pytest.raises(GuardError, match="schema-qualified"):
        check("SELECT pg_catalog.btrim(name) FROM geography")
    with pytest.raises(GuardError, match="schema-qualified"):
        check("SELECT pg_catalog.extract('year', current_date)")


def test_the_sql_shown_is_the_sql_checked_one_clause_per_line():
    sql = ("SELECT g.state_name, e.estimate AS population FROM public.estimates AS e INNER JOIN public.geography AS g "
           "ON g.geo_id = e.geo_id WHERE g.level = 'state' AND g.state_name <> 'a WHERE b' "
           "AND e.estimate BETWEEN 1 AND 9 ORDER BY e.estimate DESC LIMIT 5")
    guarded = check(sql)
    assert guarded.sql.split() == sql.replace(",", " ,").split()  # only the layout differs
    assert "\nFROM public.estimates" in guarded.sql and "\nWHERE g.level = 'state'" in guarded.sql
    assert "\n  AND g.state_name <> 'a WHERE b'" in guarded.sql and "BETWEEN 1 AND 9" in guarded.sql
    assert pretty(sql) == guarded.sql and pretty(guarded.sql) == guarded.sql


def test_pretty_lays_out_unchecked_sql_without_changing_it():
    assert pretty("SELECT name FROM geography WHERE level = 'state' AND name <> 'x'") == (
        "SELECT name\nFROM geography\nWHERE level = 'state'\n  AND name <> 'x'")
    assert pretty("SELECT pg_catalog.lower(name) FROM geography") == "SELECT pg_catalog.lower(name)\nFROM geography"
    for text in ("this is not SQL", "SELECT (1", ""):
        assert pretty(text) == text


def test_keyword_named_functions_survive_normalisation():
    guarded = check("SELECT left(name, 3), right(name, 2) FROM geography")
    assert check(guarded.sql).sql == guarded.sql


def test_every_allowlisted_function_is_a_plain_name():
    assert all(name.isidentifier() and name == name.lower() for name in guard.FUNCTIONS)
    for risky in ("pg_sleep", "set_config", "repeat", "generate_series", "lo_from_bytea", "query_to_xml", "random"):
        assert risky not in guard.FUNCTIONS


# ---------------------------------------------------------------------------------------------------------------
# fail closed and the CLI helper


def test_an_exception_inside_the_guard_is_a_refusal(monkeypatch):
    def broken(sql):
        raise RuntimeError("boom")

    monkeypatch.setattr(guard, "_sqlglot_opinion", broken)
    with pytest.raises(GuardError) as info:
        check("SELECT name FROM geography")
    assert info.value.policy is False
    assert "boom" in info.value.detail


def test_sqlglot_must_agree(monkeypatch):
    """If the second parser cannot read a statement PostgreSQL's grammar accepted, the statement is refused."""
    import sqlglot

    def cannot_parse(sql, read=None):
        raise sqlglot.errors.ParseError("unsupported")

    monkeypatch.setattr(sqlglot, "parse", cannot_parse)
    with pytest.raises(GuardError, match="not supported") as info:
        check("SELECT name FROM geography")
    assert info.value.policy is False


def test_deep_nesting_is_refused_not_crashing():
    with pytest.raises(GuardError):
        check("SELECT " + "(" * 3000 + "1" + ")" * 3000)


def test_check_json_contract():
    data, code = check_json("SELECT name FROM geography;", max_rows=5)
    assert code == 0
    assert data == {"allowed": True, "reason": None, "sql": "SELECT name\nFROM geography\nLIMIT 5"}
    data, code = check_json("DROP TABLE estimates")
    assert code == 1
    assert data["allowed"] is False and data["sql"] is None
    assert data["reason"].startswith("only SELECT statements are allowed")
    assert json.loads(json.dumps(data)) == data
