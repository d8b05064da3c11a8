"""The SQL guard: decide whether a statement may run, and return the exact text that will.

Planned SQL comes from Claude, from the offline planner and from users who edit it, so it is untrusted input.
The database role (see :mod:`sage.census`) is the real boundary; this guard is the layer in front of it that
refuses anything outside "one analytical SELECT over the census tables" *before* it reaches PostgreSQL,
and says why in words the planner and the user can act on.

The policy (docs/security.md §3), in the order it is applied:

1. Text only, at most :data:`MAX_SQL_CHARS` characters.
2. PostgreSQL's own grammar (``pglast``, i.e. libpg_query) must see exactly one ``SelectStmt`` with no
   ``INTO``.  Every node of that tree is then walked against an **allowlist of node types** (so anything new or
   unusual fails closed), with these rules:

   * no ``FOR UPDATE``/``FOR SHARE``, no ``WITH RECURSIVE``, and only SELECTs inside ``WITH`` (no writable CTEs);
   * every table is one of :data:`~sage.guard_policy.TABLES` (``geography``, ``variables``, ``estimates``,
     ``estimates_by_vintage``, ``cpi_u_rs``; schema empty or ``public``, no catalog),
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
5. The text that runs is pglast's deparse of the checked tree, laid out one clause per line (``IndentedStream``),
   parsed and checked once more exactly like input: the SQL a user sees, copies, edits and re-runs is the SQL that
   was checked and run, and gets the same verdict.  sqlglot's generator is *not* used for it: it rewrites some
   input into different SQL (``U&"x"(…)`` becomes ``U & "X"(…)``), and the text that runs must be the text that
   was checked.  :func:`pretty` lays out SQL that has not been through the guard (an earlier try) the same way.

Nothing is refused on surface words: keywords, ``;`` or ``--`` inside string literals, comments or quoted
aliases are ordinary SQL.  Any unexpected exception inside the guard is a refusal (fail closed).
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field

import pglast
import sqlglot
from pglast import ast
from pglast.enums import CoercionForm, LimitOption
from pglast.stream import IndentedStream
from sqlglot import exp

from .errors import GuardError
from .guard_policy import (
    FUNCTIONS,
    GRAMMAR_FUNCTIONS,
    GRAMMAR_KEYWORDS,
    KEYWORD_FUNCTIONS,
    NODE_WORDS,
    NODES,
    ROW_FUNCTIONS,
    SQLGLOT_FORBIDDEN,
    SVF_ALLOWED,
    TABLES,
    TABLES_TEXT,
    TYPES,
)

log = logging.getLogger(__name__)

#: longest SQL text the guard will look at (characters); real census queries are far shorter
MAX_SQL_CHARS = 20_000


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

    raw, stmt = _parse_one_select(sql)
    _Walker(sql).run(stmt)
    _sqlglot_opinion(sql)

    limit, capped = _apply_limit(stmt, max_rows)
    text = _deparse(raw)

    # the text that will run is checked again, exactly like user input: what PostgreSQL parses is what was
    # approved, and a user who edits and re-runs the shown SQL gets the same verdict
    _, again = _parse_one_select(text)
    tables = _Walker(text).run(again)
    final_limit = _limit_of(again)
    if final_limit is None or final_limit > max_rows:
        raise _Reject("the SQL could not be checked, so it was not run", policy=False)
    return Guarded(sql=text, tables=tables, limit=limit, original=sql, capped=capped)


#: how pglast writes SQL back: SQL-standard syntax as written (``TRIM(BOTH ...)``, ``SUBSTRING(... FROM ...)``,
#: ``AT TIME ZONE``) without the ``pg_catalog.`` the grammar adds to such calls, so the text reads like the input
#: and passes this guard again when a user edits and re-runs it
_DEPARSE_OPTIONS = {"special_functions": True, "remove_pg_catalog_from_functions": True}


def _deparse(raw: ast.RawStmt) -> str:
    """SQL text for a checked tree, one clause per line, by pglast's deparser (which round-trips PostgreSQL's
    grammar)."""
    return str(IndentedStream(**_DEPARSE_OPTIONS)(raw)).strip()


def pretty(sql: str) -> str:
    """SQL that has not been through the guard (a failed try, an edit) laid out like guarded SQL, for reading.

    ``pglast.prettify`` with its safety belt re-parses the result and compares the trees, so the layout never
    changes the meaning (it keeps a ``pg_catalog.`` the text spelt out, which the guard would refuse); text it cannot
    parse comes back as it was.  Comments are dropped.  Nothing is checked or run here: this is for showing only.
    """
    try:
        return str(pglast.prettify(sql, safety_belt=True, special_functions=True)).strip()
    except Exception:  # any text at all may arrive here; showing it as written is always right
        return sql


def _parse_one_select(sql: str) -> tuple[ast.RawStmt, ast.SelectStmt]:
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
        raise _Reject(NODE_WORDS["IntoClause"])
    return stmts[0], stmt


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


def _statement_name(stmt: ast.Node | None) -> str:
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
        if kind not in NODES:
            raise _Reject(
                NODE_WORDS.get(kind, f"this SQL construct ({kind}) is not allowed"),
                policy=kind != "ParamRef",
            )
        handler = getattr(self, "_" + kind, None)
        if handler is not None and handler(node, scope):
            return
        self.children(node, scope)

    def children(self, node: ast.Node, scope: frozenset[str], skip: tuple[str, ...] = ()) -> None:
        for attr in node:  # the node's own attributes (its class's __slots__)
            if attr in skip:
                continue
            value = getattr(node, attr, None)
            if isinstance(value, (ast.Node, tuple, list)):
                self.walk(value, scope)

    # each handler returns True when it has walked the children itself

    def _SelectStmt(self, node: ast.SelectStmt, scope: frozenset[str]) -> bool:
        if node.intoClause is not None:
            raise _Reject(NODE_WORDS["IntoClause"])
        if node.lockingClause:
            raise _Reject(NODE_WORDS["LockingClause"])
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
                if not cte.ctename:  # the grammar always names one; fail closed if not
                    raise _Reject("the SQL could not be checked, so it was not run", policy=False)
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
        names = [n.sval for n in node.funcname or ()]
        written = self._source_at(node.location)
        if len(names) == 2 and names[0] == "pg_catalog" and _leading_word(written) in GRAMMAR_KEYWORDS:
            # EXTRACT(...), SUBSTRING(... FROM ...), TRIM(...), AT TIME ZONE, x LIKE y ESCAPE z...: the grammar
            # wrote this call (its location is the keyword, not a name the user typed)
            if names[1] not in GRAMMAR_FUNCTIONS:
                raise _Reject(f"{names[1]} is not allowed")
        elif len(names) == 2 and names[0] == "pg_catalog" and node.funcformat == CoercionForm.COERCE_SQL_SYNTAX:
            raise _Reject(f"{names[1]} is not allowed")
        elif len(names) != 1:
            raise _Reject(f"schema-qualified function names are not allowed ({'.'.join(names)})")
        elif written[:2].lower() == "u&" or (
            written.startswith('"') and not (names[0] in KEYWORD_FUNCTIONS and written.startswith(f'"{names[0]}"'))
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
        if node.op not in SVF_ALLOWED:
            word = str(getattr(node.op, "name", node.op)).removeprefix("SVFOP_").lower()
            raise _Reject(f"{word} is not allowed")
        return False

    def _ColumnRef(self, node: ast.ColumnRef, scope: frozenset[str]) -> bool:
        fields = node.fields or ()
        last = fields[-1] if fields else None
        if len(fields) > 1 and isinstance(last, ast.String) and last.sval in ROW_FUNCTIONS:
            raise _Reject(f"{last.sval} is a function called through attribute notation; it is not allowed")
        return False

    def _A_Indirection(self, node: ast.A_Indirection, scope: frozenset[str]) -> bool:
        for part in node.indirection or ():
            if isinstance(part, ast.String) and part.sval in ROW_FUNCTIONS:
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
    return _Reject(f"table {table} is not available; only {TABLES_TEXT} can be queried")


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
    cte_names = {_ident(alias.this) for cte in root.find_all(exp.CTE) if (alias := cte.args.get("alias"))}
    for node in root.walk():
        if isinstance(node, SQLGLOT_FORBIDDEN):
            raise _Reject(f"only SELECT statements are allowed ({node.key.upper()} found inside)")
        if isinstance(node, exp.With) and node.args.get("recursive"):
            raise _Reject("WITH RECURSIVE is not allowed")
        if isinstance(node, exp.Table):
            _sqlglot_table(node, cte_names)
        if isinstance(node, exp.Anonymous) and str(node.name).lower() not in FUNCTIONS:
            raise _Reject(f"function {node.name} is not allowed")


def _sqlglot_table(node: exp.Table, cte_names: set[str]) -> None:
    if not isinstance(node.this, exp.Identifier):
        raise _Reject(NODE_WORDS["RangeFunction"])
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
        if val.ival is None:  # never from the parser: refuse rather than guess
            raise _Reject("the SQL could not be checked, so it was not run", policy=False)
        return val.ival if val.ival >= 0 else None
    if isinstance(val, ast.Float):
        if val.fval is None:  # never from the parser: refuse rather than guess
            raise _Reject("the SQL could not be checked, so it was not run", policy=False)
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


__all__ = ["FUNCTIONS", "MAX_SQL_CHARS", "TABLES", "TYPES", "GuardError", "Guarded", "check", "check_json", "pretty"]
