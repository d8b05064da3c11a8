"""Load the shipped ACS extracts into the census tables.

Three file sets, each with its provenance file, each recorded in ``sage.data_loads`` with the sha256 of its files:

=====================  =====================================================================================
``data/acs/``          (``shipped``) states and counties, 34 variables, 2019-2023 (and 2018-2022 for three
                       tables): the geography, the variables and their estimates
``data/acs-places/``   (``acs-places``) the nation row and the 32,325 places with their 2019-2023 population
                       and housing units
``data/acs-2014-2018/``(``acs-2014-2018``) the earlier, non-overlapping period 2014-2018 for counties and
                       states, as vintage '2014-2018' in ``public.estimates_by_vintage``
=====================  =====================================================================================

Every file is read and validated in full before the database is touched, so a missing or malformed file leaves the
database exactly as it was.  The load is one transaction of COPYs and upserts.  It is idempotent: a file set whose
sha256 is recorded and whose rows are all still there is skipped, so a second setup changes nothing.

Each set owns the estimates of its geography levels and its (variable, period) pairs; reloading a set replaces
exactly those rows.  Rows fetched by ``census fetch`` are never touched: a (table, period) recorded in
``sage.census_tables`` with a source other than ``shipped`` is left out of every set, and the variables of a table
fetched for a period at least as new as the shipped one keep their fetched labels.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

import psycopg

from ..errors import DataError, ErrorKind
from ..types import StepProgress
from . import schema
from .codes import is_variable_code
from .schema import CATEGORIES

#: ``sage.census_tables.source`` of shipped tables, and the ``sage.data_loads`` name of the ``data/acs/`` set
SHIPPED = "shipped"
PLACES = "acs-places"
EARLIER = "acs-2014-2018"
#: the directory of each file set under the data path
DIRECTORIES = {SHIPPED: "acs", PLACES: "acs-places", EARLIER: "acs-2014-2018"}

FILES = {
    "geography": "geography.csv",
    "variables": "variables.csv",
    "estimates": "estimates.csv.gz",
}
HEADERS = {
    "geography": ["geo_id", "fips", "level", "name", "state_fips", "state_abbr", "state_name", "county_fips",
                  "county_name"],
    "variables": ["code", "label", "concept", "table_id", "category", "universe", "vintage"],
    "estimates": ["geo_id", "variable_code", "estimate", "margin_error", "vintage", "source"],
}
GEOGRAPHY_COLUMNS = ("geo_id", "fips", "level", "name", "state_fips", "state_abbr", "state_name", "county_fips",
                     "county_name", "place_name")
ESTIMATE_COLUMNS = ("geo_id", "variable_code", "estimate", "margin_error", "source", "vintage")

#: the nation row: no estimates of its own in the shipped extracts (a US total is the sum of the states)
NATION = ("0100000US", "", "nation", "United States", None, None, None, None, None, None)

_STATE_OR_COUNTY = re.compile(r"^(0400000US\d{2}|0500000US\d{5})$")
_PLACE = re.compile(r"^1600000US(\d{7})$")
_VINTAGE = re.compile(r"^\d{4}-\d{4}$")


@dataclass
class Extract:
    """The validated contents of one shipped file set, ready to COPY.

    ``geography`` rows have the columns :data:`GEOGRAPHY_COLUMNS`, ``variables`` rows (code, label, concept,
    category, table_id, universe, vintage), ``estimates`` rows :data:`ESTIMATE_COLUMNS`.  ``levels`` are the
    geography levels of its rows: the set owns the estimates of those levels for its (variable, period) pairs.
    """

    name: str = SHIPPED
    levels: tuple[str, ...] = ("state", "county")
    geography: list[tuple] = field(default_factory=list)
    variables: list[tuple] = field(default_factory=list)
    estimates: list[tuple] = field(default_factory=list)
    sha256: str = ""

    def counts(self) -> dict[str, int]:
        return {"geography": len(self.geography), "variables": len(self.variables), "estimates": len(self.estimates)}

    def pairs(self) -> set[tuple[str, str]]:
        """The (variable, period) pairs of its estimates."""
        return {(e[1], e[5]) for e in self.estimates}

    def summary(self) -> dict:
        """What ``sage.data_loads.rows`` records: the counts, and enough to tell later whether every row is still
        there without reading the files again (rows per geography level and per (variable, period) pair)."""
        pairs = Counter(f"{e[1]} {e[5]}" for e in self.estimates)
        return {
            **self.counts(),
            "levels": list(self.levels),
            "geography_levels": dict(sorted(Counter(g[2] for g in self.geography).items())),
            "pairs": dict(sorted(pairs.items())),
        }


def _open(path: Path):
    if not path.is_file():
        raise DataError(
            f"The data file {path.name} is missing from {path.parent}. Restore it from the repository "
            "(git checkout -- data/) and run `python -m sage setup` again.",
            kind=ErrorKind.DATA_MISSING,
        )
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return path.open(encoding="utf-8", newline="")


def _rows(path: Path, name: str):
    try:
        with _open(path) as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header != HEADERS[name]:
                raise DataError(
                    f"{path.name} has the header {header!r}; expected {HEADERS[name]!r}. The file is not the shipped "
                    "extract: restore it from the repository.",
                    kind=ErrorKind.DATA_MALFORMED,
                )
            for lineno, row in enumerate(reader, start=2):
                if len(row) != len(header):
                    raise _bad(path, lineno, f"{len(row)} fields instead of {len(header)}")
                yield lineno, row
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"{path.name} could not be read ({exc}); restore it from the repository.",
                        kind=ErrorKind.DATA_MALFORMED) from exc


def _bad(path: Path, lineno: int, what: str) -> DataError:
    return DataError(
        f"{path.parent.name}/{path.name} line {lineno}: {what}. Nothing was loaded; restore the file from the "
        "repository.",
        kind=ErrorKind.DATA_MALFORMED,
    )


def _number(path: Path, lineno: int, text: str, what: str) -> Decimal | None:
    if text == "":
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise _bad(path, lineno, f"{what} {text!r} is not a number") from None
    if not value.is_finite():
        raise _bad(path, lineno, f"{what} {text!r} is not a finite number")
    return value


def _digest(directory: Path, names: Iterable[str], extra: str = "") -> str:
    digest = hashlib.sha256(extra.encode())
    for name in names:
        path = directory / FILES[name]
        if not path.is_file():
            _open(path)  # raises the "missing" error
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _read_estimates(path: Path, known_geo: set[str], vintage_ok, what_geo: str) -> list[tuple]:
    """Validated estimate rows; ``vintage_ok(code, vintage)`` returns None or what is wrong."""
    out: list[tuple] = []
    seen: set[tuple[str, str, str]] = set()
    for lineno, r in _rows(path, "estimates"):
        geo_id, code, estimate, moe, vintage, source = r
        if geo_id not in known_geo:
            raise _bad(path, lineno, f"geo_id {geo_id!r} is not {what_geo}")
        problem = vintage_ok(code, vintage)
        if problem:
            raise _bad(path, lineno, problem)
        if (geo_id, code, vintage) in seen:
            raise _bad(path, lineno, f"{geo_id} / {code} / {vintage} appears twice")
        seen.add((geo_id, code, vintage))
        est = _number(path, lineno, estimate, "estimate")
        err = _number(path, lineno, moe, "margin_error")
        if err is not None and err < 0:
            raise _bad(path, lineno, f"margin_error {moe!r} is negative")
        out.append((geo_id, code, est, err, source or SHIPPED, vintage))
    return out


def read_extract(acs_dir: Path) -> Extract:
    """Read and validate ``data/acs/`` (states, counties, variables, estimates); raise :class:`DataError` on the
    first problem."""
    ex = Extract(name=SHIPPED, levels=("state", "county"),
                 sha256=_digest(acs_dir, ("geography", "variables", "estimates")))

    path = acs_dir / FILES["geography"]
    seen_geo: set[str] = set()
    for lineno, r in _rows(path, "geography"):
        geo_id, fips, level, name, state_fips, state_abbr, state_name, county_fips, county_name = r
        if not _STATE_OR_COUNTY.match(geo_id):
            raise _bad(path, lineno, f"geo_id {geo_id!r} is not a state or county GEOID")
        if level not in ("state", "county") or (level == "state") != (county_fips == ""):
            raise _bad(path, lineno, f"level {level!r} does not fit the row")
        if geo_id in seen_geo:
            raise _bad(path, lineno, f"geo_id {geo_id} appears twice")
        if not geo_id.endswith(fips) or fips != state_fips + county_fips:
            raise _bad(path, lineno, f"fips {fips!r} does not match geo_id {geo_id}")
        expected = state_name if level == "state" else f"{county_name}, {state_name}"
        if name != expected:
            raise _bad(path, lineno, f"name {name!r} is not {expected!r}")
        seen_geo.add(geo_id)
        ex.geography.append((geo_id, fips, level, name, state_fips, state_abbr, state_name, county_fips or None,
                             county_name or None, None))

    path = acs_dir / FILES["variables"]
    vintage_of: dict[str, str] = {}
    for lineno, r in _rows(path, "variables"):
        code, label, concept, table_id, category, universe, vintage = r
        if not is_variable_code(code) or not code.startswith(table_id + "_"):
            raise _bad(path, lineno, f"variable code {code!r} is not an ACS estimate code of table {table_id!r}")
        if category not in CATEGORIES:
            raise _bad(path, lineno, f"category {category!r} is not one of {', '.join(CATEGORIES)}")
        if not _VINTAGE.match(vintage):
            raise _bad(path, lineno, f"vintage {vintage!r} is not like 2019-2023")
        if code in vintage_of:
            raise _bad(path, lineno, f"variable {code} appears twice")
        vintage_of[code] = vintage
        ex.variables.append((code, label, concept, category, table_id, universe or None, vintage))

    def latest(code: str, vintage: str) -> str | None:
        if code not in vintage_of:
            return f"variable {code!r} is not in {FILES['variables']}"
        if vintage != vintage_of[code]:
            return f"vintage {vintage!r} differs from the variable's {vintage_of[code]!r}"
        return None

    ex.estimates = _read_estimates(acs_dir / FILES["estimates"], seen_geo, latest, f"in {FILES['geography']}")
    if not ex.geography or not ex.variables or not ex.estimates:
        raise DataError("The shipped extract is empty; restore data/acs/ from the repository.",
                        kind=ErrorKind.DATA_MALFORMED)
    return ex


def read_places(places_dir: Path, acs: Extract) -> Extract:
    """Read and validate ``data/acs-places/``: every place (its name gains ', ' + the state's name; ``place_name``
    keeps the file's name) and the nation row, and their 2019-2023 estimates of variables of ``acs``."""
    ex = Extract(name=PLACES, levels=("nation", "place"), geography=[NATION],
                 sha256=_digest(places_dir, ("geography", "estimates"), extra=repr(NATION)))
    states = {g[4]: (g[5], g[6]) for g in acs.geography if g[2] == "state"}
    vintage_of = {v[0]: v[6] for v in acs.variables}

    path = places_dir / FILES["geography"]
    seen: set[str] = set()
    for lineno, r in _rows(path, "geography"):
        geo_id, fips, level, name, state_fips, state_abbr, state_name, county_fips, county_name = r
        match = _PLACE.match(geo_id)
        if level != "place" or not match or match.group(1) != fips:
            raise _bad(path, lineno, f"{geo_id!r} (level {level!r}, fips {fips!r}) is not a place GEOID")
        if geo_id in seen:
            raise _bad(path, lineno, f"geo_id {geo_id} appears twice")
        if states.get(state_fips) != (state_abbr, state_name) or not fips.startswith(state_fips):
            raise _bad(path, lineno, f"state {state_fips!r} {state_abbr!r} {state_name!r} is not a shipped state")
        if county_fips or county_name or not name.strip():
            raise _bad(path, lineno, "a place has a name and no county columns")
        seen.add(geo_id)
        ex.geography.append((geo_id, fips, "place", f"{name}, {state_name}", state_fips, state_abbr, state_name,
                             None, None, name))

    def latest(code: str, vintage: str) -> str | None:
        if code not in vintage_of:
            return f"variable {code!r} is not in acs/{FILES['variables']}"
        if vintage != vintage_of[code]:
            return f"vintage {vintage!r} differs from the variable's latest {vintage_of[code]!r}"
        return None

    ex.estimates = _read_estimates(places_dir / FILES["estimates"], seen, latest, f"in {FILES['geography']}")
    if len(ex.geography) < 2 or not ex.estimates:
        raise DataError("The places extract is empty; restore data/acs-places/ from the repository.",
                        kind=ErrorKind.DATA_MALFORMED)
    return ex


def read_earlier(period_dir: Path, acs: Extract) -> Extract:
    """Read and validate ``data/acs-2014-2018/``: estimates of an earlier period for states and counties of
    ``acs``, of its variables, in a period that is not the variable's shipped latest one."""
    ex = Extract(name=EARLIER, levels=("state", "county"), sha256=_digest(period_dir, ("estimates",)))
    known = {g[0] for g in acs.geography}
    vintage_of = {v[0]: v[6] for v in acs.variables}

    def earlier(code: str, vintage: str) -> str | None:
        if code not in vintage_of:
            return f"variable {code!r} is not in acs/{FILES['variables']}"
        if not _VINTAGE.match(vintage):
            return f"vintage {vintage!r} is not like 2014-2018"
        if vintage >= vintage_of[code]:
            return f"vintage {vintage!r} is not earlier than the variable's {vintage_of[code]!r}"
        return None

    ex.estimates = _read_estimates(period_dir / FILES["estimates"], known, earlier,
                                   "a state or county of acs/geography.csv")
    if not ex.estimates:
        raise DataError("The 2014-2018 extract is empty; restore data/acs-2014-2018/ from the repository.",
                        kind=ErrorKind.DATA_MALFORMED)
    return ex


def read_shipped(data_path: Path) -> list[Extract]:
    """Read and validate every shipped file set (``data/acs/`` first: the others refer to it)."""
    acs = read_extract(data_path / DIRECTORIES[SHIPPED])
    return [acs, read_places(data_path / DIRECTORIES[PLACES], acs), read_earlier(data_path / DIRECTORIES[EARLIER], acs)]


# ---------------------------------------------------------------------------------------------------------------
# loading


def set_digests(data_path: Path) -> dict[str, str]:
    """The sha256 of each shipped file set (cheap: no parsing), as :func:`read_shipped` records them."""
    return {
        SHIPPED: _digest(data_path / DIRECTORIES[SHIPPED], ("geography", "variables", "estimates")),
        PLACES: _digest(data_path / DIRECTORIES[PLACES], ("geography", "estimates"), extra=repr(NATION)),
        EARLIER: _digest(data_path / DIRECTORIES[EARLIER], ("estimates",)),
    }


def _copy(cur: psycopg.Cursor, table: str, columns: tuple[str, ...], rows: Iterable[tuple]) -> None:
    with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def _table_of(code: str) -> str:
    return code.split("_", 1)[0]


def fetched_pairs(conn: psycopg.Connection) -> set[tuple[str, str]]:
    """(table, period) pairs that ``census fetch`` loaded: the shipped loader leaves them alone."""
    return {(r[0], r[1]) for r in conn.execute(
        "SELECT table_id, vintage FROM sage.census_tables WHERE source <> %s", (SHIPPED,))}


def _owned_pairs(pairs: Iterable[tuple[str, str]], fetched: set[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted(p for p in pairs if (_table_of(p[0]), p[1]) not in fetched)


def _domain_params(levels: Iterable[str], pairs: list[tuple[str, str]]) -> dict:
    return {"codes": [p[0] for p in pairs], "vintages": [p[1] for p in pairs], "levels": list(levels)}


def _still_loaded(conn: psycopg.Connection, summary: dict, fetched: set[tuple[str, str]]) -> bool:
    """True when every row a set's ``summary`` (:meth:`Extract.summary`, as recorded in ``sage.data_loads``) lists
    is still in the database, outside fetched tables."""
    if not isinstance(summary, dict) or "pairs" not in summary:
        return False  # recorded by an earlier version: load again
    for level, n in summary.get("geography_levels", {}).items():
        row = conn.execute("SELECT count(*) FROM public.geography WHERE level = %s", (level,)).fetchone()
        if not row or row[0] < n:
            return False
    counts = {tuple(k.split(" ", 1)): n for k, n in summary["pairs"].items()}
    pairs = _owned_pairs(counts, fetched)
    expected = sum(counts[p] for p in pairs)
    found = conn.execute(
        """SELECT count(*) FROM public.estimates_by_vintage e
           JOIN public.geography g ON g.geo_id = e.geo_id
           JOIN unnest(%(codes)s::text[], %(vintages)s::text[]) AS p(code, vintage)
             ON p.code = e.variable_code AND p.vintage = e.vintage
           WHERE g.level = ANY(%(levels)s)""",
        _domain_params(summary["levels"], pairs),
    ).fetchone()
    return found is not None and found[0] == expected


#: make ``vintages`` (every period with rows, ascending) and ``vintage`` (the last of them) agree with the rows
REFRESH_VINTAGES = """UPDATE public.variables v
SET vintages = s.vintages, vintage = s.vintages[cardinality(s.vintages)]
FROM (SELECT variable_code, array_agg(DISTINCT vintage ORDER BY vintage) AS vintages
      FROM public.estimates_by_vintage WHERE variable_code = ANY(%s) GROUP BY variable_code) s
WHERE v.variable_code = s.variable_code AND v.vintages IS DISTINCT FROM s.vintages"""


def refresh_vintages(cur: psycopg.Cursor, codes: Iterable[str]) -> int:
    """Set ``vintages``/``vintage`` of ``codes`` from their rows in ``public.estimates_by_vintage``."""
    cur.execute(REFRESH_VINTAGES, (sorted(set(codes)),))
    return cur.rowcount


def _load_geography(cur: psycopg.Cursor, rows: list[tuple]) -> None:
    cur.execute("CREATE TEMP TABLE stage_geography (LIKE public.geography) ON COMMIT DROP")
    _copy(cur, "stage_geography", GEOGRAPHY_COLUMNS, rows)
    cols = [c for c in GEOGRAPHY_COLUMNS if c != "geo_id"]
    cur.execute(
        f"""INSERT INTO public.geography ({', '.join(GEOGRAPHY_COLUMNS)})
            SELECT {', '.join(GEOGRAPHY_COLUMNS)} FROM stage_geography
            ON CONFLICT (geo_id) DO UPDATE SET {', '.join(f'{c} = EXCLUDED.{c}' for c in cols)}
            WHERE ({', '.join(f'geography.{c}' for c in cols)}) IS DISTINCT FROM
                  ({', '.join(f'EXCLUDED.{c}' for c in cols)})"""
    )
    cur.execute("DROP TABLE stage_geography")


def _load_variables(cur: psycopg.Cursor, rows: list[tuple], fetched: set[tuple[str, str]]) -> list[tuple]:
    """Upsert the shipped variables, except those of tables fetched for a period at least as new (their labels are
    the fetched ones).  Periods are not set here for existing rows: :func:`refresh_vintages` does that."""
    keep = [v for v in rows if not any(t == v[4] and vintage >= v[6] for t, vintage in fetched)]
    cur.execute(
        "CREATE TEMP TABLE stage_variables (variable_code text, label text, concept text, category text, "
        "table_id text, universe text, vintage text) ON COMMIT DROP"
    )
    _copy(cur, "stage_variables", ("variable_code", "label", "concept", "category", "table_id", "universe",
                                   "vintage"), keep)
    cur.execute(
        """INSERT INTO public.variables (variable_code, label, concept, category, table_id, universe, vintage, vintages)
           SELECT variable_code, label, concept, category, table_id, universe, vintage, ARRAY[vintage]
           FROM stage_variables
           ON CONFLICT (variable_code) DO UPDATE SET label = EXCLUDED.label, concept = EXCLUDED.concept,
             category = EXCLUDED.category, table_id = EXCLUDED.table_id, universe = EXCLUDED.universe
           WHERE (variables.label, variables.concept, variables.category, variables.table_id, variables.universe)
             IS DISTINCT FROM (EXCLUDED.label, EXCLUDED.concept, EXCLUDED.category, EXCLUDED.table_id,
                               EXCLUDED.universe)"""
    )
    cur.execute("DROP TABLE stage_variables")
    return keep


def _load_estimates(cur: psycopg.Cursor, ex: Extract, fetched: set[tuple[str, str]], *, bulk: bool) -> int:
    """Make the set's estimates (its levels and (variable, period) pairs, outside fetched tables) those of its
    files.  Into an empty table (``bulk``) the rows are copied straight in; otherwise they are merged through a
    staging table, so that rows already right are not written again (a reload after a few rows went missing writes
    those rows, not the whole set)."""
    pairs = _owned_pairs(ex.pairs(), fetched)
    owned = set(pairs)
    rows = [e for e in ex.estimates if (e[1], e[5]) in owned]
    if bulk:
        _copy(cur, "public.estimates_by_vintage", ESTIMATE_COLUMNS, rows)
        return len(rows)
    cur.execute("CREATE TEMP TABLE stage_estimates (LIKE public.estimates_by_vintage) ON COMMIT DROP")
    _copy(cur, "stage_estimates", ESTIMATE_COLUMNS, rows)
    cur.execute("CREATE INDEX ON stage_estimates (geo_id, variable_code, vintage)")
    cur.execute("ANALYZE stage_estimates")
    cur.execute(
        """DELETE FROM public.estimates_by_vintage e
           USING public.geography g, unnest(%(codes)s::text[], %(vintages)s::text[]) AS p(code, vintage)
           WHERE g.geo_id = e.geo_id AND g.level = ANY(%(levels)s) AND p.code = e.variable_code
             AND p.vintage = e.vintage
             AND NOT EXISTS (SELECT FROM stage_estimates s WHERE s.geo_id = e.geo_id
                             AND s.variable_code = e.variable_code AND s.vintage = e.vintage)""",
        _domain_params(ex.levels, pairs),
    )
    columns = ", ".join(ESTIMATE_COLUMNS)
    cur.execute(
        f"""INSERT INTO public.estimates_by_vintage ({columns}) SELECT {columns} FROM stage_estimates
            ON CONFLICT (geo_id, variable_code, vintage) DO UPDATE SET estimate = EXCLUDED.estimate,
              margin_error = EXCLUDED.margin_error, source = EXCLUDED.source
            WHERE (estimates_by_vintage.estimate, estimates_by_vintage.margin_error, estimates_by_vintage.source)
              IS DISTINCT FROM (EXCLUDED.estimate, EXCLUDED.margin_error, EXCLUDED.source)"""
    )
    cur.execute("DROP TABLE stage_estimates")
    return len(rows)


def _bulk_begin(cur: psycopg.Cursor) -> bool:
    """Into an empty ``public.estimates_by_vintage`` (a fresh setup), COPY without the key, the foreign keys and the
    index, and build them afterwards (:func:`_bulk_end`): about four times faster than checking row by row.  The
    table is locked until commit either way; a table with rows keeps its constraints."""
    if cur.execute("SELECT EXISTS (SELECT FROM public.estimates_by_vintage)").fetchone() != (False,):
        return False
    cur.execute(f"DROP INDEX public.{schema.ESTIMATES_INDEX_NAME}")
    drops = ", ".join(f"DROP CONSTRAINT {name}" for name in schema.ESTIMATES_KEYS)
    cur.execute(f"ALTER TABLE public.estimates_by_vintage {drops}")
    return True


def _bulk_end(cur: psycopg.Cursor) -> None:
    adds = ", ".join(f"ADD CONSTRAINT {name} {definition}" for name, definition in schema.ESTIMATES_KEYS.items())
    cur.execute(f"ALTER TABLE public.estimates_by_vintage {adds}")
    cur.execute(f"CREATE INDEX {schema.ESTIMATES_INDEX_NAME} {schema.ESTIMATES_INDEX}")


def record_tables(cur: psycopg.Cursor, pairs: set[tuple[str, str]], source: str) -> None:
    """``sage.census_tables`` rows of (table, period) pairs, counted from the database (a table's rows of one period
    may come from several loads, e.g. B01003 2019-2023 from data/acs/ and data/acs-places/, or a fetch of tracts
    beside shipped counties).  The shipped loader (``source`` ``shipped``) never overwrites a fetched pair."""
    ordered = sorted(pairs)
    cur.execute(
        """INSERT INTO sage.census_tables (table_id, vintage, source, variables, rows)
           SELECT v.table_id, e.vintage, %(source)s, count(DISTINCT e.variable_code), count(*)
           FROM public.estimates_by_vintage e
           JOIN public.variables v ON v.variable_code = e.variable_code
           JOIN unnest(%(tables)s::text[], %(vintages)s::text[]) AS p(table_id, vintage)
             ON p.table_id = v.table_id AND p.vintage = e.vintage
           GROUP BY v.table_id, e.vintage
           ON CONFLICT (table_id, vintage) DO UPDATE SET source = EXCLUDED.source, variables = EXCLUDED.variables,
             rows = EXCLUDED.rows, loaded_at = now()
           WHERE %(source)s <> %(shipped)s OR census_tables.source = %(shipped)s""",
        {"source": source, "shipped": SHIPPED, "tables": [p[0] for p in ordered],
         "vintages": [p[1] for p in ordered]},
    )


def load_shipped(conn: psycopg.Connection, data_path: Path, progress: StepProgress | None = None) -> dict:
    """Load the shipped file sets not loaded yet (or changed, or with rows missing) in one transaction; ``conn`` must
    be in autocommit mode, so that ``conn.transaction()`` is a real BEGIN/COMMIT.

    The files are hashed first: when every set's sha256 is recorded and its rows are all there, nothing is parsed
    and nothing is written (``skipped``).  Otherwise every set is read and validated in full before the database is
    touched.  Returns ``{"skipped": bool, "loaded": [set names], "rows": {set name: counts},
    "kept_fetched_tables": ["B19013 2019-2023", ...]}``.
    """
    progress = progress or (lambda *a: None)
    digests = set_digests(data_path)
    fetched = fetched_pairs(conn)
    recorded = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT name, sha256, rows FROM sage.data_loads")}

    def current(name: str) -> bool:
        sha, summary = recorded.get(name, (None, None))
        return sha == digests[name] and _still_loaded(conn, summary, fetched)

    kept = [f"{t} {v}" for t, v in sorted(fetched)]
    if all(current(name) for name in digests):
        rows = {name: {k: recorded[name][1][k] for k in ("geography", "variables", "estimates")} for name in digests}
        return {"skipped": True, "loaded": [], "rows": rows, "kept_fetched_tables": kept}

    progress("validating data files", 0, 3)
    extracts = read_shipped(data_path)
    progress("validating data files", 3, 3)
    with conn.transaction():
        cur = conn.cursor()
        # one loader at a time (a `census fetch`, or a second setup); readers are not blocked
        cur.execute("LOCK TABLE sage.census_tables IN SHARE ROW EXCLUSIVE MODE")
        fetched = fetched_pairs(conn)
        todo = [ex for ex in extracts if not (recorded.get(ex.name, (None,))[0] == ex.sha256
                                              and _still_loaded(conn, ex.summary(), fetched))]
        bulk = _bulk_begin(cur)
        codes: set[str] = set()
        tables: set[tuple[str, str]] = set()
        for ex in todo:
            if ex.geography:
                _load_geography(cur, ex.geography)
                progress(f"loading geography ({ex.name})", len(ex.geography), len(ex.geography))
            if ex.variables:
                loaded = _load_variables(cur, ex.variables, fetched)
                progress("loading variables", len(loaded), len(ex.variables))
            n = _load_estimates(cur, ex, fetched, bulk=bulk)
            progress(f"loading estimates ({ex.name})", n, len(ex.estimates))
            owned = _owned_pairs(ex.pairs(), fetched)
            codes.update(code for code, _ in owned)
            tables.update((_table_of(code), vintage) for code, vintage in owned)
        if bulk:
            progress("indexing estimates", 0, 1)
            _bulk_end(cur)
            progress("indexing estimates", 1, 1)
        refresh_vintages(cur, codes)
        record_tables(cur, tables, SHIPPED)
        # the loaded sets, and those whose record is older than their rows (written by an earlier version)
        loading = {ex.name for ex in todo}
        for ex in extracts:
            if ex.name not in loading and recorded.get(ex.name) == (ex.sha256, ex.summary()):
                continue
            cur.execute(
                """INSERT INTO sage.data_loads (name, sha256, rows) VALUES (%s, %s, %s)
                   ON CONFLICT (name) DO UPDATE SET sha256 = EXCLUDED.sha256, rows = EXCLUDED.rows,
                     loaded_at = now()""",
                (ex.name, ex.sha256, json.dumps(ex.summary())),
            )
    return {"skipped": False, "loaded": [ex.name for ex in todo], "rows": {ex.name: ex.counts() for ex in extracts},
            "kept_fetched_tables": kept}


__all__ = [
    "EARLIER",
    "ESTIMATE_COLUMNS",
    "Extract",
    "GEOGRAPHY_COLUMNS",
    "NATION",
    "PLACES",
    "REFRESH_VINTAGES",
    "SHIPPED",
    "fetched_pairs",
    "load_shipped",
    "read_earlier",
    "read_extract",
    "read_places",
    "read_shipped",
    "record_tables",
    "refresh_vintages",
    "set_digests",
]
