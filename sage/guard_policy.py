"""The guard's policy, as data: the tables, functions, types and parse-tree nodes planned SQL may use.

Kept apart from the walker in :mod:`sage.guard` so that a change of policy reads as a data diff (docs/security.md
§3).  Everything is an allowlist: what is not listed here is refused.
"""

from __future__ import annotations

import pglast.keywords
from pglast.enums import SQLValueFunctionOp
from sqlglot import exp

#: the only tables planned SQL may read (all in schema ``public``): the census tables (``estimates`` is the view of
#: each variable's latest period, ``estimates_by_vintage`` every period) and the CPI table (:mod:`sage.census.moe_sql`)
TABLES = ("geography", "variables", "estimates", "estimates_by_vintage", "cpi_u_rs")
TABLES_TEXT = ", ".join(f"public.{t}" for t in TABLES)

#: functions callable by their plain name: aggregates, window functions, math, text, dates.  An allowlist, not a
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
KEYWORD_FUNCTIONS = frozenset(
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
GRAMMAR_KEYWORDS = frozenset("extract substring position trim at overlay overlaps like ilike similar not".split())

#: one-argument pg_catalog functions that take any row ("any", anyelement, record...): PostgreSQL also calls them
#: through attribute notation, ``g.row_to_json`` meaning ``row_to_json(g)``, where no function call is written.
#: Such a ColumnRef is refused (no census column or sensible alias has these names).  Listed from pg_proc of
#: PostgreSQL 18; the role's privileges stay the boundary for anything newer.
ROW_FUNCTIONS = frozenset(
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
SVF_ALLOWED = frozenset(
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
NODES = frozenset(
    """
    SelectStmt ResTarget ColumnRef A_Star A_Const String Integer Float Boolean BitString
    A_Expr BoolExpr NullTest BooleanTest FuncCall WindowDef SortBy TypeCast TypeName
    CaseExpr CaseWhen CoalesceExpr MinMaxExpr SubLink RangeVar RangeSubselect JoinExpr Alias
    WithClause CommonTableExpr A_ArrayExpr A_Indirection A_Indices RowExpr GroupingSet GroupingFunc
    CollateClause SQLValueFunction
    """.split()
)

#: plain words for node types that are refused, keyed by pglast class name
NODE_WORDS = {
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
SQLGLOT_FORBIDDEN = tuple(
    getattr(exp, name)
    for name in (
        "DDL DML Insert Update Delete Merge Create Drop Alter Command Copy Set Transaction Commit Rollback "
        "Into Lock Grant Revoke TruncateTable Use Analyze Pragma Describe Kill Cache Uncache Refresh LoadData "
        "Declare Execute"
    ).split()
    if hasattr(exp, name)
)


__all__ = ["FUNCTIONS", "GRAMMAR_FUNCTIONS", "GRAMMAR_KEYWORDS", "KEYWORD_FUNCTIONS", "NODES", "NODE_WORDS",
           "ROW_FUNCTIONS", "SQLGLOT_FORBIDDEN", "SVF_ALLOWED", "TABLES", "TABLES_TEXT", "TYPES"]
