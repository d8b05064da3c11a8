"""The SQL guard: decide whether a statement may run, and return the exact text that will.

Planned SQL comes from Claude, from the offline planner and from users who edit it, so it is untrusted input.
The database role (see :mod:`sage.census`) is the real boundary; this guard is the layer in front of it that
refuses anything outside "one analytical SELECT over the three census tables" *before* it reaches PostgreSQL,
and says why in words the planner and the user can act on.

The policy (the security research note ``anchors-security.md`` §4), in the order it is applied:

1. Text only, at most :data:`MAX_SQL_CHARS` characters.
2. PostgreSQL's own grammar (``pglast``, i.e. libpg_query) must see exactly one ``SelectStmt`` with no
   ``INTO``.  Every node of that tree is then walked against an **allowlist of node types** (so anything new or
   unusual fails closed), with these rules:

   * no ``FOR UPDATE``/``FOR SHARE``, no ``WITH RECURSIVE``, and only SELECTs inside ``WITH`` (no writable CTEs);
   * every table is ``geography``, ``variables`` or ``estimates`` (schema empty or ``public``, no catalog),
     or a CTE name *visible at that point* (scoping matters: a CTE named ``pg_class`` in one subquery does not
     make ``pg_class`` elsewhere a CTE);
   * every function is on :data:`FUNCTIONS`, called by a plain unqualified name: schema-qualified, quoted and
     ``U&``-escaped function names are refused (pglast decodes names exactly as the server does, so
     ``U&"pg_re\\0061d_file"`` is seen as ``pg_read_file``; the one exception is the plain quoting the
     deparser itself writes for keyword-named functions, ``"left"(…)``); functions in ``FROM`` are refused;
   * casts only to plain scalar types (:data:`TYPES`), so ``'x'::regclass`` cannot probe the catalog.

3. A second opinion from sqlglot (``read="postgres"``): it too must see exactly one SELECT-like statement, with
   no forbidden node anywhere (DML/DDL/commands, ``INTO``, locks, recursive CTEs) and only allowed tables.
   If the two parsers disagree the statement is refused.
4. ``LIMIT`` is set on the tree to at most ``max_rows`` when it is missing, larger, or not a literal.
5. The text that runs is pglast's deparse of the checked tree, parsed and checked once more exactly like input
   (so the SQL a user sees, edits and re-runs gets the same verdict).  sqlglot's generator is *not* used for it:
   it rewrites some input into different SQL (``U&"x"(…)`` becomes ``U & "X"(…)``), and the text that runs must
   be the text that was checked.

Nothing is refused on surface words: keywords, ``;`` or ``--`` inside string literals, comments or quoted
aliases are ordinary SQL.  Any unexpected exception inside the guard is a refusal (fail closed).
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field

import pglast
import pglast.keywords
import sqlglot
from pglast import ast
from pglast.enums import CoercionForm, LimitOption, SQLValueFunctionOp
from pglast.stream import RawStream
from sqlglot import exp

from .errors import GuardError

log = logging.getLogger(__name__)

#: longest SQL text the guard will look at (characters); real census queries are far shorter
MAX_SQL_CHARS = 20_000

#: the only tables planned SQL may read (all in schema ``public``): the census tables and the CPI table
#: (:mod:`sage.census.moe_sql`)
TABLES = ("geography", "variables", "estimates", "cpi_u_rs")
_TABLES_TEXT = ", ".join(f"public.{t}" for t in TABLES)

#: functions callable by their plain name: aggregates, window functions, math, text, dates, and the census-sage
#: margin-of-error functions in schema public (:mod:`sage.census.moe_sql`).  An allowlist, not a
#: denylist: anything new (pg_sleep, set_config, lo_*, dblink, query_to_xml, generate_series, repeat, random,
#: version, nextval, pg_notify, advisory locks...) is refused because it is simply not here.
FUNCTIONS = frozenset(
    """
    count sum avg min max every bool_and bool_or string_agg array_agg any_value
    stddev stddev_pop stddev_samp variance var_pop var_samp corr covar_pop covar_samp
    regr_slope regr_intercept regr_r2 regr_count regr_avgx regr_avgy regr_sxx regr_syy regr_sxy
    percentile_cont percentile_disc mode
    row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
    abs ceil ceiling floor round trunc sign sqrt cbrt power pow exp ln log log10 mod div
    pi degrees radians width_bucket scale gcd lcm
    lower upper initcap length char_length character_length octet_length
    substring substr concat concat_ws btrim ltrim rtrim trim left right strpos position split_part replace
    reverse starts_with translate regexp_replace regexp_match regexp_like
    to_char to_number to_date to_timestamp date_trunc date_part extract make_date age now like_escape
    array_length array_to_string cardinality num_nulls num_nonnulls
    moe_sum moe_difference moe_proportion moe_ratio moe_product moe_pct_change
    """.split()
)

#: allowlisted functions whose names are SQL keywords: the deparser writes them quoted ("left"(name, 2)), so that
#: plain quoting (no U& escapes) is accepted for these names only
_KEYWORD_FUNCTIONS = frozenset(
    name
    for name in FUNCTIONS
    if name in pglast.keywords.COL_NAME_KEYWORDS | pglast.keywords.TYPE_FUNC_NAME_KEYWORDS
    | pglast.keywords.RESERVED_KEYWORDS
)

#: functions PostgreSQL's grammar itself writes as ``pg_catalog.x`` for SQL-standard syntax
#: (EXTRACT(... FROM ...), SUBSTRING(... FROM ...), POSITION(... IN ...), TRIM(...), AT TIME ZONE, LIKE ... ESCAPE,
#: SIMILAR TO, OVERLAPS, OVERLAY); a user typing ``pg_catalog.extract(...)`` is still refused
GRAMMAR_FUNCTIONS = frozenset(
    "extract substring position btrim ltrim rtrim overlay timezone like_escape similar_to_escape overlaps".split()
)
#: the keywords such grammar-made calls start at (their location in the text)
_GRAMMAR_KEYWORDS = frozenset("extract substring position trim at overlay overlaps like ilike similar not".split())

#: one-argument pg_catalog functions that take any row ("any", anyelement, record...): PostgreSQL also calls them
#: through attribute notation, ``g.row_to_json`` meaning ``row_to_json(g)``, where no function call is written.
#: Such a ColumnRef is refused (no census column or sensible alias has these names).  Listed from pg_proc of
#: PostgreSQL 18; the role's privileges stay the boundary for anything newer.
_ROW_FUNCTIONS = frozenset(
    """
    any_out anycompatible_out anycompatiblenonarray_out anyelement_out anynonarray_out hash_record
    hash_record_extended num_nonnulls num_nulls concat json_build_array json_build_object jsonb_build_array
    jsonb_build_object pg_collation_for pg_column_compression pg_column_size pg_column_toast_chunk_id pg_typeof
    quote_literal quote_nullable record_out record_send row_to_json to_json to_jsonb array_to_json
    pg_restore_attribute_stats pg_restore_relation_stats pg_clear_attribute_stats pg_clear_relation_stats
    """.split()
)

#: types a value may be cast to (the grammar's internal names: ``integer`` is ``int4``, ``double precision`` is
#: ``float8``...).  No reg* types (catalog probes), no xml/json, no composite or user types.
TYPES = frozenset(
    """
    int2 int4 int8 smallint integer int bigint numeric decimal float4 float8 real float
    text varchar bpchar char bool boolean date time timetz timestamp timestamptz interval
    """.split()
)

#: SQL value functions that are harmless (dates and times); CURRENT_USER, SESSION_USER, CURRENT_SCHEMA... are not
_SVF_ALLOWED = frozenset(
    {
        SQLValueFunctionOp.SVFOP_CURRENT_DATE,
        SQLValueFunctionOp.SVFOP_CURRENT_TIME,
        SQLValueFunctionOp.SVFOP_CURRENT_TIME_N,
        SQLValueFunctionOp.SVFOP_CURRENT_TIMESTAMP,
        SQLValueFunctionOp.SVFOP_CURRENT_TIMESTAMP_N,
        SQLValueFunctionOp.SVFOP_LOCALTIME,
        SQLValueFunctionOp.SVFOP_LOCALTIME_N,
        SQLValueFunctionOp.SVFOP_LOCALTIMESTAMP,
        SQLValueFunctionOp.SVFOP_LOCALTIMESTAMP_N,
    }
)

#: pglast node types an analytical SELECT is made of; any other node type is refused
_NODES = frozenset(
    """
    SelectStmt ResTarget ColumnRef A_Star A_Const String Integer Float Boolean BitString
    A_Expr BoolExpr NullTest BooleanTest FuncCall WindowDef SortBy TypeCast TypeName
    CaseExpr CaseWhen CoalesceExpr MinMaxExpr SubLink RangeVar RangeSubselect JoinExpr Alias
    WithClause CommonTableExpr A_ArrayExpr A_Indirection A_Indices RowExpr GroupingSet GroupingFunc
    CollateClause SQLValueFunction
    """.split()
)

#: plain words for node types that are refused, keyed by pglast class name
_NODE_WORDS = {
    "RangeFunction": "functions in FROM (such as generate_series or ROWS FROM) are not allowed",
    "RangeTableFunc": "XMLTABLE is not allowed",
    "RangeTableSample": "TABLESAMPLE is not allowed",
    "XmlExpr": "XML functions are not allowed",
    "XmlSerialize": "XML functions are not allowed",
    "ParamRef": "query parameters ($1, $2...) are not allowed; write the values into the SQL",
    "LockingClause": "FOR UPDATE/FOR SHARE is not allowed",
    "IntoClause": "SELECT INTO is not allowed (it creates a table)",
}

#: sqlglot node types that must never appear anywhere in the tree
_SQLGLOT_FORBIDDEN = tuple(
    getattr(exp, name)
    for name in (
        "DDL DML Insert Update Delete Merge Create Drop Alter Command Copy Set Transaction Commit Rollback "
        "Into Lock Grant Revoke TruncateTable Use Analyze Pragma Describe Kill Cache Uncache Refresh LoadData "
        "Declare Execute"
    ).split()
    if hasattr(exp, name)
)


@dataclass(frozen=True)
class Guarded:
    """A statement the guard accepted.

    ``sql`` is what runs: PostgreSQL's deparse of the checked tree, with ``LIMIT limit`` applied.  ``tables`` are the
    census tables it reads (``public.x``), ``original`` the text as given.  ``capped`` is True when the guard
    itself set the LIMIT (none was given, or a larger or non-literal one), so exactly ``limit`` rows means the
    answer may have been cut short.
    """

    sql: str
    tables: tuple[str, ...]
    limit: int
    original: str
    capped: bool = field(default=False)


class _Reject(Exception):
    """Internal: a refusal found while walking; turned into :class:`GuardError` by :func:`check`."""

    def __init__(self, reason: str, policy: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.policy = policy


def check(sql: str, *, max_rows: int = 1000) -> Guarded:
    """Return the guarded form of ``sql`` or raise :class:`GuardError`.

    ``GuardError.policy`` is True when the statement reaches for something never allowed (another statement
    type, several statements, a forbidden table, function or construct): retrying cannot fix that.  It is False
    for empty, over-long or unparseable input, which a planner may correct.
    """
    try:
        return _check(sql, max_rows)
    except GuardError as exc:
        log.info("guard refused SQL: %s", exc.message)
        raise
    except _Reject as exc:
        log.info("guard refused SQL: %s", exc.reason)
        raise GuardError(exc.reason, policy=exc.policy) from None
    except RecursionError:
        log.info("guard refused SQL: nested too deeply")
        raise GuardError("the SQL is nested too deeply to check", policy=False) from None
    except Exception as exc:  # fail closed: a guard that crashes must not let the statement through
        log.warning("guard failed on SQL (%s: %s); refusing it", type(exc).__name__, exc)
        raise GuardError(
            "the SQL could not be checked, so it was not run", policy=False, detail=f"{type(exc).__name__}: {exc}"
        ) from None


def check_json(sql: str, max_rows: int = 1000) -> tuple[dict, int]:
    """The ``check-sql`` CLI answer: ``({"allowed", "reason", "sql"}, exit code)`` — 0 when allowed, 1 when not."""
    try:
        guarded = check(sql, max_rows=max_rows)
    except GuardError as exc:
        return {"allowed": False, "reason": exc.message, "sql": None}, 1
    return {"allowed": True, "reason": None, "sql": guarded.sql}, 0


# --------------------------------------------------------------------------------------------------------------
# the steps


def _check(sql: str, max_rows: int) -> Guarded:
    if not isinstance(sql, str):
        raise _Reject("the SQL must be text", policy=False)
    if not isinstance(max_rows, int) or isinstance(max_rows, bool) or max_rows < 1:
        raise ValueError(f"max_rows must be a positive integer, not {max_rows!r}")
    if len(sql) > MAX_SQL_CHARS:
        raise _Reject(f"the SQL is too long ({len(sql):,} characters; at most {MAX_SQL_CHARS:,} are accepted)", False)
    if not sql.strip():
        raise _Reject("no SQL was given", policy=False)

    raw = _parse_one_select(sql)
    _Walker(sql).run(raw.stmt)
    _sqlglot_opinion(sql)

    limit, capped = _apply_limit(raw.stmt, max_rows)
    text = _deparse(raw)

    # the text that will run is checked again, exactly like user input: what PostgreSQL parses is what was
    # approved, and a user who edits and re-runs the shown SQL gets the same verdict
    again = _parse_one_select(text)
    tables = _Walker(text).run(again.stmt)
    final_limit = _limit_of(again.stmt)
    if final_limit is None or final_limit > max_rows:
        raise _Reject("the SQL could not be checked, so it was not run", policy=False)
    return Guarded(sql=text, tables=tables, limit=limit, original=sql, capped=capped)


def _deparse(raw: ast.RawStmt) -> str:
    """SQL text for a checked tree, by pglast's deparser (which round-trips PostgreSQL's grammar).

    SQL-standard syntax comes back as written (``TRIM(BOTH ...)``, ``SUBSTRING(... FROM ...)``, ``AT TIME ZONE``)
    and the ``pg_catalog.`` the grammar adds to such calls is dropped, so the text reads like the input and passes
    this guard again when a user edits and re-runs it.
    """
    return RawStream(special_functions=True, remove_pg_catalog_from_functions=True)(raw).strip()


def _parse_one_select(sql: str) -> ast.RawStmt:
    """PostgreSQL's grammar must find exactly one SELECT (without INTO)."""
    try:
        stmts = pglast.parse_sql(sql)
    except pglast.parser.ParseError as exc:
        message = str(exc).split(", at index")[0].split(", at location")[0]
        raise _Reject(f"the SQL could not be parsed: {message}", policy=False) from None
    if not stmts:
        raise _Reject("no SQL statement was given (only comments or semicolons)", policy=False)
    if len(stmts) > 1:
        raise _Reject("only one statement is allowed")
    stmt = stmts[0].stmt
    if not isinstance(stmt, ast.SelectStmt):
        raise _Reject(f"only SELECT statements are allowed (this is {_statement_name(stmt)})")
    if stmt.intoClause is not None:
        raise _Reject(_NODE_WORDS["IntoClause"])
    return stmts[0]


#: statement node names that do not read well when split into words
_STATEMENT_WORDS = {
    "VariableSetStmt": "SET",
    "VariableShowStmt": "SHOW",
    "TransactionStmt": "a transaction command",
    "GrantStmt": "GRANT/REVOKE",
    "CreateStmt": "CREATE TABLE",
    "ViewStmt": "CREATE VIEW",
    "CheckPointStmt": "CHECKPOINT",
    "RefreshMatViewStmt": "REFRESH MATERIALIZED VIEW",
    "AlterRoleSetStmt": "ALTER ROLE",
    "IndexStmt": "CREATE INDEX",
}


def _statement_name(stmt: ast.Node) -> str:
    """``DeleteStmt`` -> ``DELETE``, ``CreateTableAsStmt`` -> ``CREATE TABLE AS`` (for the refusal message)."""
    name = type(stmt).__name__
    if name in _STATEMENT_WORDS:
        return _STATEMENT_WORDS[name]
    name = name.removesuffix("Stmt")
    words, word = [], ""
    for ch in name:
        if ch.isupper() and word and not word[-1].isupper():
            words.append(word)
            word = ""
        word += ch
    words.append(word)
    return " ".join(words).upper() or "not a query"


class _Walker:
    """Walks a pglast tree and enforces the node, table, function and type allowlists.

    ``run`` returns the census tables read (sorted ``public.x`` names).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.tables: set[str] = set()

    def run(self, stmt: ast.SelectStmt) -> tuple[str, ...]:
        self.walk(stmt, frozenset())
        return tuple(sorted(self.tables))

    def walk(self, node, scope: frozenset[str]) -> None:
        if isinstance(node, (tuple, list)):
            for item in node:
                self.walk(item, scope)
            return
        if not isinstance(node, ast.Node):
            return  # plain values: str, int, bool, enums
        kind = type(node).__name__
        if kind not in _NODES:
            raise _Reject(
                _NODE_WORDS.get(kind, f"this SQL construct ({kind}) is not allowed"),
                policy=kind != "ParamRef",
            )
        handler = getattr(self, "_" + kind, None)
        if handler is not None and handler(node, scope):
            return
        self.children(node, scope)

    def children(self, node: ast.Node, scope: frozenset[str], skip: tuple[str, ...] = ()) -> None:
        for attr in type(node).__slots__:
            if attr in skip:
                continue
            value = getattr(node, attr, None)
            if isinstance(value, (ast.Node, tuple, list)):
                self.walk(value, scope)

    # each handler returns True when it has walked the children itself

    def _SelectStmt(self, node: ast.SelectStmt, scope: frozenset[str]) -> bool:
        if node.intoClause is not None:
            raise _Reject(_NODE_WORDS["IntoClause"])
        if node.lockingClause:
            raise _Reject(_NODE_WORDS["LockingClause"])
        inner = scope
        with_clause = node.withClause
        if with_clause is not None:
            if with_clause.recursive:
                raise _Reject("WITH RECURSIVE is not allowed")
            for cte in with_clause.ctes or ():
                if not isinstance(cte, ast.CommonTableExpr):
                    raise _Reject(f"this SQL construct ({type(cte).__name__}) is not allowed")
                if not isinstance(cte.ctequery, ast.SelectStmt):
                    raise _Reject("only SELECT queries are allowed inside WITH (no INSERT, UPDATE or DELETE)")
                if cte.search_clause is not None or cte.cycle_clause is not None:
                    raise _Reject("WITH RECURSIVE is not allowed")
                # a non-recursive CTE sees the CTEs listed before it, never itself
                self.walk(cte.ctequery, inner)
                self.walk(cte.aliascolnames, inner)
                inner = inner | {cte.ctename}
        self.children(node, inner, skip=("withClause", "intoClause", "lockingClause"))
        return True

    def _RangeVar(self, node: ast.RangeVar, scope: frozenset[str]) -> bool:
        parts = [p for p in (node.catalogname, node.schemaname, node.relname) if p]
        name = ".".join(parts)
        if node.catalogname:
            raise _not_available(name)
        if node.schemaname is None and node.relname in scope:
            return True  # a CTE defined in this statement (its body was checked where it was defined)
        if node.schemaname in (None, "public") and node.relname in TABLES:
            self.tables.add(f"public.{node.relname}")
            self.walk(node.alias, scope)
            return True
        raise _not_available(name)

    def _FuncCall(self, node: ast.FuncCall, scope: frozenset[str]) -> bool:
        names = [n.sval for n in node.funcname]
        written = self._source_at(node.location)
        if len(names) == 2 and names[0] == "pg_catalog" and _leading_word(written) in _GRAMMAR_KEYWORDS:
            # EXTRACT(...), SUBSTRING(... FROM ...), TRIM(...), AT TIME ZONE, x LIKE y ESCAPE z...: the grammar
            # wrote this call (its location is the keyword, not a name the user typed)
            if names[1] not in GRAMMAR_FUNCTIONS:
                raise _Reject(f"{names[1]} is not allowed")
        elif len(names) == 2 and names[0] == "pg_catalog" and node.funcformat == CoercionForm.COERCE_SQL_SYNTAX:
            raise _Reject(f"{names[1]} is not allowed")
        elif len(names) != 1:
            raise _Reject(f"schema-qualified function names are not allowed ({'.'.join(names)})")
        elif written[:2].lower() == "u&" or (
            written.startswith('"') and not (names[0] in _KEYWORD_FUNCTIONS and written.startswith(f'"{names[0]}"'))
        ):
            # quoting can disguise a name from text-based checks; the only quoting allowed is the one PostgreSQL's
            # deparser itself writes for allowlisted functions named like keywords ("left", "right")
            raise _Reject(f"quoted or escaped function names are not allowed ({names[0]})")
        elif names[0] not in FUNCTIONS or node.funcformat == CoercionForm.COERCE_SQL_SYNTAX:
            raise _Reject(f"function {names[0]} is not allowed")
        return False

    def _TypeName(self, node: ast.TypeName, scope: frozenset[str]) -> bool:
        names = [n.sval for n in node.names or ()]
        if node.setof or node.pct_type or not names:
            raise _Reject("this type is not allowed in a cast")
        if len(names) > 2 or (len(names) == 2 and names[0] != "pg_catalog") or names[-1] not in TYPES:
            raise _Reject(f"casting to {'.'.join(names)} is not allowed; use a number, text, boolean or date type")
        return False

    def _SQLValueFunction(self, node: ast.SQLValueFunction, scope: frozenset[str]) -> bool:
        if node.op not in _SVF_ALLOWED:
            word = str(getattr(node.op, "name", node.op)).removeprefix("SVFOP_").lower()
            raise _Reject(f"{word} is not allowed")
        return False

    def _ColumnRef(self, node: ast.ColumnRef, scope: frozenset[str]) -> bool:
        fields = node.fields or ()
        last = fields[-1] if fields else None
        if len(fields) > 1 and isinstance(last, ast.String) and last.sval in _ROW_FUNCTIONS:
            raise _Reject(f"{last.sval} is a function called through attribute notation; it is not allowed")
        return False

    def _A_Indirection(self, node: ast.A_Indirection, scope: frozenset[str]) -> bool:
        for part in node.indirection or ():
            if isinstance(part, ast.String) and part.sval in _ROW_FUNCTIONS:
                raise _Reject(f"{part.sval} is a function called through attribute notation; it is not allowed")
        return False

    def _A_Expr(self, node: ast.A_Expr, scope: frozenset[str]) -> bool:
        if node.name is not None and len(node.name) > 1:
            raise _Reject("schema-qualified operators (OPERATOR(schema.op)) are not allowed")
        return False

    def _SortBy(self, node: ast.SortBy, scope: frozenset[str]) -> bool:
        if node.useOp is not None and len(node.useOp) > 1:
            raise _Reject("schema-qualified operators (OPERATOR(schema.op)) are not allowed")
        return False

    def _SubLink(self, node: ast.SubLink, scope: frozenset[str]) -> bool:
        if node.operName is not None and len(node.operName) > 1:
            raise _Reject("schema-qualified operators (OPERATOR(schema.op)) are not allowed")
        return False

    def _source_at(self, location) -> str:
        if isinstance(location, int) and 0 <= location < len(self.text):
            return self.text[location : location + 64]
        return ""


def _not_available(table: str) -> _Reject:
    return _Reject(f"table {table} is not available; only {_TABLES_TEXT} can be queried")


def _leading_word(written: str) -> str:
    """The keyword a grammar-made function call starts at (``extract``, ``trim``, ``like``...), lower case."""
    match = re.match(r"[A-Za-z]+", written)
    return match.group(0).lower() if match else ""


def _sqlglot_opinion(sql: str) -> None:
    """sqlglot must agree: one SELECT-like statement, no forbidden node anywhere, only allowed tables."""
    try:
        parsed = sqlglot.parse(sql, read="postgres")
    except sqlglot.errors.SqlglotError as exc:
        # PostgreSQL's grammar accepted it, the second checker cannot read it: refuse, but the planner may rephrase
        raise _Reject(f"this SQL syntax is not supported: {str(exc).splitlines()[0][:200]}", policy=False) from None
    statements = [s for s in parsed if s is not None and not isinstance(s, exp.Semicolon)]
    if len(statements) != 1:
        raise _Reject("only one statement is allowed")
    root = statements[0]
    if not isinstance(root, (exp.Select, exp.SetOperation, exp.Subquery, exp.Values)):
        raise _Reject("only SELECT statements are allowed")
    cte_names = {_ident(cte.args.get("alias").this) for cte in root.find_all(exp.CTE) if cte.args.get("alias")}
    for node in root.walk():
        if isinstance(node, _SQLGLOT_FORBIDDEN):
            raise _Reject(f"only SELECT statements are allowed ({node.key.upper()} found inside)")
        if isinstance(node, exp.With) and node.args.get("recursive"):
            raise _Reject("WITH RECURSIVE is not allowed")
        if isinstance(node, exp.Table):
            _sqlglot_table(node, cte_names)
        if isinstance(node, exp.Anonymous) and str(node.name).lower() not in FUNCTIONS:
            raise _Reject(f"function {node.name} is not allowed")


def _sqlglot_table(node: exp.Table, cte_names: set[str]) -> None:
    if not isinstance(node.this, exp.Identifier):
        raise _Reject(_NODE_WORDS["RangeFunction"])
    name = _ident(node.this)
    schema = _ident(node.args["db"]) if node.args.get("db") else None
    if node.args.get("catalog"):
        raise _not_available(node.sql("postgres"))
    if schema is None and name in cte_names:
        return
    if schema in (None, "public") and name in TABLES:
        return
    raise _not_available(".".join(p for p in (schema, name) if p))


def _ident(node) -> str:
    """An identifier as PostgreSQL sees it: unquoted names fold to lower case."""
    if isinstance(node, exp.Identifier):
        return node.this if node.quoted else node.this.lower()
    return str(getattr(node, "name", node)).lower()


# --------------------------------------------------------------------------------------------------------------
# LIMIT


def _limit_of(stmt: ast.SelectStmt) -> float | None:
    """The literal row count of the top-level LIMIT / FETCH FIRST, or None when there is none usable."""
    count = stmt.limitCount
    if stmt.limitOption == LimitOption.LIMIT_OPTION_DEFAULT or not isinstance(count, ast.A_Const) or count.isnull:
        return None
    val = count.val
    if isinstance(val, ast.Integer):
        return val.ival if val.ival >= 0 else None
    if isinstance(val, ast.Float):
        try:
            number = float(val.fval)
        except ValueError:
            return None
        return number if number >= 0 else None
    return None


def _apply_limit(stmt: ast.SelectStmt, max_rows: int) -> tuple[int, bool]:
    """Set the top-level LIMIT to at most ``max_rows`` on the tree; return ``(limit, capped)``.

    A literal LIMIT (or FETCH FIRST n ROWS) no larger than ``max_rows`` is kept as written; anything else
    (none, ALL, larger, an expression, a subquery) becomes ``max_rows``.
    """
    current = _limit_of(stmt)
    if current is not None and current <= max_rows:
        return math.floor(current + 0.5), False  # PostgreSQL rounds a fractional LIMIT half up
    stmt.limitCount = ast.A_Const(isnull=False, val=ast.Integer(ival=max_rows))
    if stmt.limitOption != LimitOption.LIMIT_OPTION_WITH_TIES:
        stmt.limitOption = LimitOption.LIMIT_OPTION_COUNT
    return max_rows, True


__all__ = ["FUNCTIONS", "MAX_SQL_CHARS", "TABLES", "TYPES", "Guarded", "GuardError", "check", "check_json"]
