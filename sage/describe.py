"""What gets embedded: a plain-text description of every table, column and ACS variable, of every ACS table of
the offline catalog that is not loaded, and the variable catalog those descriptions are written from.

A planner is only as good as the context it is given, and for census questions the hard part is picking the
variable ("work from home" is ``Estimate!!Total:!!Worked from home``).  So every table, every column and every ACS
variable that has estimates becomes one *chunk* of text (:func:`describe_table`, :func:`describe_column`,
:func:`describe_variable`): a variable's description carries its readable label, its everyday names
(``aliases.yaml``: "jobless", "home value", "broadband"), where it has rows, and the total it is a share of.
:mod:`sage.index` embeds the chunks; :mod:`sage.retrieve` searches them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import psycopg

from .db import one_row
from .errors import RetrievalError
from .introspect import Column, Table

ALIASES_FILE = Path(__file__).resolve().parent / "aliases.yaml"


# ---------------------------------------------------------------------------------------------------------------
# Descriptions: the text that is embedded (and shown to the planner)
# ---------------------------------------------------------------------------------------------------------------


def _about(n: int | None) -> str | None:
    """A row estimate rounded to two significant figures: the planner needs the size, and an exact count would
    change the text (and force a re-embedding) every time autovacuum refreshes the statistics."""
    if n is None:
        return None
    if n < 100:
        return f"{n:,}"
    digits = int(math.floor(math.log10(n))) - 1
    return f"about {round(n, -digits):,}"


def _column_facts(col: Column) -> str:
    facts = [col.type]
    if col.primary_key:
        facts.append("primary key")
    if not col.nullable and not col.primary_key:
        facts.append("not null")
    if col.foreign_key:
        facts.append(f"references {col.foreign_key}")
    if col.default is not None:
        facts.append(f"default {col.default}")
    return ", ".join(facts)


def describe_table(table: Table) -> str:
    """A table for embedding: name, kind, size, comment, and its columns with their types and keys.

    Column comments live in the column chunks only (and the table comment in the table chunk only), so that a
    changed comment re-embeds exactly one chunk, and each chunk stays about one thing.
    """
    size = _about(table.row_estimate)
    head = f"Table {table.ref} ({table.kind}" + (f", {size} rows" if size else "") + ")"
    lines = [head + (f": {table.comment}" if table.comment else "")]
    lines.append("Columns: " + "; ".join(f"{col.name} ({_column_facts(col)})" for col in table.columns))
    return "\n".join(lines)


def describe_column(table: Table, column: Column | int | str) -> str:
    """A column for embedding: its table, type, keys and comment (``column`` is a Column, an index or a name)."""
    if isinstance(column, int):
        column = table.columns[column]
    elif isinstance(column, str):
        column = table.column(column)
    line = f"Column {column.name} of {table.kind} {table.ref} ({_column_facts(column)})"
    if column.comment:
        line += f": {column.comment}"
    return line


@dataclass
class VariableInfo:
    """An ACS variable as the index sees it: its catalog row, where it has estimates, and its everyday words."""

    code: str
    label: str
    concept: str
    category: str | None
    table_id: str
    universe: str | None
    vintage: str | None
    rows_by_level: dict[str, int] = field(default_factory=dict)  # {"county": 3220, "state": 52}
    aliases: list[str] = field(default_factory=list)
    #: what to divide by for a share or rate: [(code, readable label)], the table total first, then the nearest
    #: narrower group ("Foreign Born: Noncitizen") when that differs
    denominators: list[tuple[str, str]] = field(default_factory=list)

    @property
    def readable_label(self) -> str:
        return readable_label(self.label, self.concept, self.universe)

    @property
    def statistic(self) -> str:
        """count | median | mean | index | aggregate — decides whether it may be summed into bigger places."""
        text = f"{self.label} {self.concept}".lower()
        if "gini" in text:
            return "index"
        if "median" in text:
            return "median"
        if "per capita" in text or "average" in text or "mean " in text:
            return "mean"
        if "aggregate" in text:
            return "aggregate"
        return "count"


def _label_steps(label: str) -> list[str]:
    """The steps of a Census label without "Estimate" and trailing colons: ["Total", "Foreign Born", ...]."""
    steps = [p.strip().rstrip(":").removesuffix(" --").strip() for p in (label or "").split("!!")]
    return [p for p in steps if p and p.lower() != "estimate"]


def readable_label(label: str, concept: str = "", universe: str | None = None) -> str:
    """``Estimate!!Total:!!Not Hispanic or Latino:!!White alone`` → ``Not Hispanic or Latino: White alone``.

    The "Estimate" and "Total" steps carry no meaning for a reader.  A label that is only "Total" names what it
    counts: "Total Population" for the population table, otherwise the universe and the table, so that the
    totals of different tables over one universe (B01003_001E and B03002_001E both count everyone) differ.
    """
    parts = _label_steps(label)
    if len(parts) > 1:
        parts = [p for p in parts if p.lower() != "total"]
    if not parts or parts == ["Total"]:
        what = (universe or "").strip()
        if not what or what.lower() == (concept or "").strip().lower():
            return (concept or what or "Total").strip()
        return f"Total: {what[:1].lower() + what[1:]}" + (f" (table {concept})" if concept else "")
    return ": ".join(parts)


def _geography_line(var: VariableInfo) -> str:
    levels = var.rows_by_level
    have = [f"{levels[lv]:,} {lv} rows" for lv in ("state", "county") if levels.get(lv)]
    have += [f"{n:,} {lv} rows" for lv, n in sorted(levels.items()) if lv not in ("state", "county") and n]
    missing = [lv for lv in ("state", "county") if not levels.get(lv)]
    text = "Geography: " + (", ".join(have) if have else "no rows")
    if missing:
        text += "; no " + " or ".join(missing) + " rows"
        if "state" in missing and var.statistic in ("median", "mean", "index"):
            text += f" (a {var.statistic} cannot be summed or averaged from counties into states)"
    return text


def describe_variable(var: VariableInfo) -> str:
    """An ACS variable for embedding: code and readable label first (they matter most to the embedding), then
    everyday words, the table's concept, category, universe, vintage, geography, and how to make a rate."""
    lines = [f"ACS variable {var.code}: {var.readable_label}"]
    if var.aliases:
        lines.append("Also called: " + ", ".join(var.aliases))
    table = f"Table {var.table_id}: {var.concept}"
    if var.category:
        table += f" (category {var.category})"
    lines.append(table)
    facts = []
    if var.universe:
        facts.append(f"Universe: {var.universe}")
    if var.vintage:
        facts.append(f"ACS 5-year {var.vintage}")
    facts.append(f"a {var.statistic}")
    lines.append("; ".join(facts))
    lines.append(_geography_line(var))
    if var.denominators:
        (code, label), *narrower = var.denominators
        line = f"Share or rate: divide by {code} ({label}) of the same place"
        for code, label in narrower:
            line += f"; as a share of {label}, by {code}"
        lines.append(line)
    return "\n".join(lines)


#: how much of a catalog table's line labels goes into its description: enough for the words a question uses
#: ("Owner occupied", "Bicycle", "Worked from home"), short enough that the title still dominates the embedding
#: (300 and 150 characters did about the same on the development topics, 28 and 27 of 32 in the first 5:
#: tests/data/questions/retrieval_topics_dev.jsonl)
CATALOG_LINES_CHARS = 300
#: the last line of every catalog table's description: the planners must see at a glance that it has no rows yet
NOT_LOADED = "Not loaded: no rows in the data yet; fetchable from the Census Data API"


def main_lines(labels: list[str], limit: int = CATALOG_LINES_CHARS) -> list[str]:
    """The distinct steps of a table's line labels, breadth first (the top-level lines, then the ones under them),
    without "Estimate" and "Total", until ``limit`` characters: ``Sex by Age`` -> ``Male, Female, Under 5 years,
    5 to 9 years, ...``."""
    by_depth: dict[int, list[str]] = {}
    for label in labels:
        for depth, step in enumerate(s for s in _label_steps(label) if s.lower() != "total"):
            steps = by_depth.setdefault(depth, [])
            if step not in steps:
                steps.append(step)
    out: list[str] = []
    seen: set[str] = set()
    used = 0
    for depth in sorted(by_depth):
        for step in by_depth[depth]:
            if step.lower() in seen:
                continue
            if used + len(step) + 2 > limit:
                return out
            out.append(step)
            seen.add(step.lower())
            used += len(step) + 2
    return out


def describe_acs_table(entry: dict, aliases: dict[str, tuple[str, ...]] | None = None) -> str:
    """A table of the offline ACS catalog that is not loaded, for embedding: id and title first, its everyday
    names and its lines' (``aliases.yaml``), universe, main line labels (:func:`main_lines`), and that it is not
    loaded.

    ``entry`` is a row of :func:`sage.census.catalog_search.acs_table_catalog` (``table_id``, ``concept``,
    ``universe``, ``labels``).
    """
    table_id = entry["table_id"]
    lines = [f"ACS table {table_id}: {entry['concept']}"]
    aliases = load_aliases() if aliases is None else aliases
    # the table's own everyday words, then its lines' ("homeowners" is said of B25003_002E)
    words: list[str] = []
    for key in (table_id, *sorted(k for k in aliases if k.startswith(table_id + "_"))):
        words += [w for w in aliases.get(key, ()) if w and w.lower() not in {x.lower() for x in words}]
    if words:
        lines.append("Also called: " + ", ".join(words))
    if entry.get("universe"):
        lines.append(f"Universe: {entry['universe']}")
    steps = main_lines(list(entry.get("labels") or ()))
    if steps:
        lines.append("Lines: " + "; ".join(steps))
    lines.append(NOT_LOADED)
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------
# The variable catalog
# ---------------------------------------------------------------------------------------------------------------


@lru_cache(maxsize=4)
def load_aliases(path: Path = ALIASES_FILE) -> dict[str, tuple[str, ...]]:
    """Everyday words keyed by ACS table id or variable code (see ``aliases.yaml``)."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise RetrievalError(
            f"The alias file {path.name} could not be read ({exc}); restore it from the project.") from exc
    return {str(k).strip(): tuple(str(w).strip() for w in v or ()) for k, v in data.items()}


def aliases_for(code: str, table_id: str, aliases: dict[str, tuple[str, ...]] | None = None) -> list[str]:
    """The variable's own words first, then its table's, without repeats."""
    aliases = load_aliases() if aliases is None else aliases
    out: list[str] = []
    for word in (*aliases.get(code, ()), *aliases.get(table_id, ())):
        if word and word.lower() not in {w.lower() for w in out}:
            out.append(word)
    return out


_VARIABLES_SQL = """
SELECT v.variable_code, v.label, v.concept, v.category, v.table_id, v.universe, v.vintage,
       jsonb_object_agg(l.level, l.n)
FROM public.variables v
JOIN (SELECT e.variable_code, g.level, count(*) AS n
        FROM public.estimates e JOIN public.geography g ON g.geo_id = e.geo_id
       WHERE e.estimate IS NOT NULL
       GROUP BY e.variable_code, g.level) l ON l.variable_code = v.variable_code
GROUP BY v.variable_code, v.label, v.concept, v.category, v.table_id, v.universe, v.vintage
ORDER BY v.variable_code
"""


def load_variables(conn: psycopg.Connection) -> list[VariableInfo]:
    """Every variable of ``public.variables`` that has estimates, with its rows per geography level.

    A database without the census tables (any other PostgreSQL) simply has no variables.
    """
    present = one_row(
        conn, "SELECT to_regclass('public.variables'), to_regclass('public.estimates'), to_regclass('public.geography')"
    )
    if not all(present):
        return []
    rows = conn.execute(_VARIABLES_SQL).fetchall()
    variables = [
        VariableInfo(code, label or "", concept or "", category, table_id or code.split("_")[0], universe, vintage,
                     {str(k): int(v) for k, v in (levels or {}).items()})
        for code, label, concept, category, table_id, universe, vintage, levels in rows
    ]
    _link(variables)
    return variables


def _link(variables: list[VariableInfo]) -> None:
    """Attach everyday words, and connect each count to the count it is a share of.

    The denominators of a count are its ancestors in the Census label path that have estimates, the widest first:
    "Below poverty level" is a share of the table total; "Unemployed" (``Total:!!In labor force:!!Civilian labor
    force:!!Unemployed``) of the civilian labor force when the table total has no estimates; "Noncitizen: With
    health insurance coverage" of the table total and of "Noncitizen".  A count of a table whose universe is the
    whole population and whose total is missing falls back to ``B01003_001E``.  Only variables of the same
    vintage are paired: a 2018-2022 count over a 2019-2023 total is not a rate.
    """
    aliases = load_aliases()
    by_code = {v.code: v for v in variables}
    by_path: dict[tuple[str, tuple[str, ...]], VariableInfo] = {}
    for var in variables:
        var.aliases = aliases_for(var.code, var.table_id, aliases)
        if var.statistic == "count":
            by_path[(var.table_id, tuple(_label_steps(var.label)))] = var
    for var in variables:
        steps = tuple(_label_steps(var.label))
        if var.statistic != "count" or len(steps) < 2 or var.code == "B01003_001E":
            continue
        paths = [by_path.get((var.table_id, steps[:cut])) for cut in range(len(steps) - 1, 0, -1)]
        ancestors = [a for a in paths if a is not None and a.vintage == var.vintage]
        if not ancestors and (var.universe or "").strip().lower() == "total population":
            population = by_code.get("B01003_001E")
            if population is not None and population.vintage == var.vintage:
                ancestors = [population]
        if ancestors:
            root, nearest = ancestors[-1], ancestors[0]
            var.denominators = [(root.code, root.readable_label)]
            if nearest is not root:
                var.denominators.append((nearest.code, nearest.readable_label))


__all__ = [
    "ALIASES_FILE",
    "CATALOG_LINES_CHARS",
    "NOT_LOADED",
    "VariableInfo",
    "aliases_for",
    "describe_acs_table",
    "describe_column",
    "describe_table",
    "describe_variable",
    "load_aliases",
    "load_variables",
    "main_lines",
    "readable_label",
]
