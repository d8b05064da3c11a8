"""Load the shipped ACS extract (``data/acs/``) into the three census tables.

Every file is read and validated in full before the database is touched, so a missing or malformed file leaves the
database exactly as it was.  The load itself is one transaction of COPYs into temporary tables and upserts, so it
is idempotent: a second run leaves identical rows and counts.  Tables that ``census fetch`` has replaced with a
newer download (recorded in ``sage.census_tables``) are left alone.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

import psycopg

from ..db import scalar
from ..errors import DataError, ErrorKind
from ..types import StepProgress
from .codes import is_variable_code
from .schema import CATEGORIES

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
SHIPPED = "shipped"

_GEO_ID = re.compile(r"^(0400000US\d{2}|0500000US\d{5})$")
_VINTAGE = re.compile(r"^\d{4}-\d{4}$")


@dataclass
class Extract:
    """The validated contents of the shipped files, ready to COPY."""

    geography: list[tuple] = field(default_factory=list)
    variables: list[tuple] = field(default_factory=list)
    estimates: list[tuple] = field(default_factory=list)
    sha256: str = ""

    def counts(self) -> dict[str, int]:
        return {"geography": len(self.geography), "variables": len(self.variables), "estimates": len(self.estimates)}


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
        f"{path.name} line {lineno}: {what}. Nothing was loaded; restore the file from the repository.",
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


def read_extract(acs_dir: Path) -> Extract:
    """Read and validate the three shipped files; raise :class:`DataError` on the first problem."""
    digest = hashlib.sha256()
    for name in ("geography", "variables", "estimates"):
        path = acs_dir / FILES[name]
        if not path.is_file():
            _open(path)  # raises the "missing" error
        digest.update(path.read_bytes())
    ex = Extract(sha256=digest.hexdigest())

    path = acs_dir / FILES["geography"]
    seen_geo: set[str] = set()
    for lineno, r in _rows(path, "geography"):
        geo_id, fips, level, name, state_fips, state_abbr, state_name, county_fips, county_name = r
        if not _GEO_ID.match(geo_id):
            raise _bad(path, lineno, f"geo_id {geo_id!r} is not a state or county GEOID")
        if level not in ("state", "county") or (level == "state") != (county_fips == ""):
            raise _bad(path, lineno, f"level {level!r} does not fit the row")
        if geo_id in seen_geo:
            raise _bad(path, lineno, f"geo_id {geo_id} appears twice")
        if not geo_id.endswith(fips) or fips != state_fips + county_fips:
            raise _bad(path, lineno, f"fips {fips!r} does not match geo_id {geo_id}")
        seen_geo.add(geo_id)
        ex.geography.append(
            (geo_id, fips, level, name, state_fips, state_abbr, state_name, county_fips or None, county_name or None)
        )

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

    path = acs_dir / FILES["estimates"]
    seen: set[tuple[str, str]] = set()
    for lineno, r in _rows(path, "estimates"):
        geo_id, code, estimate, moe, vintage, source = r
        if geo_id not in seen_geo:
            raise _bad(path, lineno, f"geo_id {geo_id!r} is not in {FILES['geography']}")
        if code not in vintage_of:
            raise _bad(path, lineno, f"variable {code!r} is not in {FILES['variables']}")
        if vintage != vintage_of[code]:
            raise _bad(path, lineno, f"vintage {vintage!r} differs from the variable's {vintage_of[code]!r}")
        if (geo_id, code) in seen:
            raise _bad(path, lineno, f"{geo_id} / {code} appears twice")
        seen.add((geo_id, code))
        est = _number(path, lineno, estimate, "estimate")
        err = _number(path, lineno, moe, "margin_error")
        if err is not None and err < 0:
            raise _bad(path, lineno, f"margin_error {moe!r} is negative")
        ex.estimates.append((geo_id, code, est, err, source or "shipped"))
    if not ex.geography or not ex.variables or not ex.estimates:
        raise DataError("The shipped extract is empty; restore data/acs/ from the repository.",
                        kind=ErrorKind.DATA_MALFORMED)
    return ex


def _copy(cur: psycopg.Cursor, table: str, columns: tuple[str, ...], rows: list[tuple]) -> None:
    with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def load_extract(conn: psycopg.Connection, acs_dir: Path, progress: StepProgress | None = None) -> dict:
    """Validate then load the shipped extract in one transaction (``conn`` must be in autocommit mode, so that
    ``conn.transaction()`` is a real BEGIN/COMMIT and not a savepoint of an outer transaction).

    Returns ``{"skipped": bool, "rows": {...}}``; skipped when the same files were already loaded and the counts
    still match.
    """
    progress = progress or (lambda *a: None)
    progress("validating data files", 0, 3)
    ex = read_extract(acs_dir)
    progress("validating data files", 3, 3)
    fetched = {r[0] for r in conn.execute("SELECT table_id FROM sage.census_tables WHERE source <> %s", (SHIPPED,))}

    previous = conn.execute("SELECT sha256, rows FROM sage.data_loads WHERE name = %s", (SHIPPED,)).fetchone()
    if previous and previous[0] == ex.sha256 and _still_loaded(conn, ex, fetched):
        return {"skipped": True, "rows": ex.counts()}

    keep_vars = [v for v in ex.variables if v[4] not in fetched]
    keep_codes = {v[0] for v in keep_vars}
    keep_est = [e for e in ex.estimates if e[1] in keep_codes]
    with conn.transaction():
        cur = conn.cursor()
        cur.execute("CREATE TEMP TABLE stage_geography (LIKE public.geography) ON COMMIT DROP")
        _copy(cur, "stage_geography", ("geo_id", "fips", "level", "name", "state_fips", "state_abbr", "state_name",
                                       "county_fips", "county_name"), ex.geography)
        cur.execute(
            """INSERT INTO public.geography SELECT * FROM stage_geography
               ON CONFLICT (geo_id) DO UPDATE SET fips = EXCLUDED.fips, level = EXCLUDED.level, name = EXCLUDED.name,
                 state_fips = EXCLUDED.state_fips, state_abbr = EXCLUDED.state_abbr, state_name = EXCLUDED.state_name,
                 county_fips = EXCLUDED.county_fips, county_name = EXCLUDED.county_name"""
        )
        progress("loading geography", len(ex.geography), len(ex.geography))

        cur.execute("CREATE TEMP TABLE stage_variables (LIKE public.variables) ON COMMIT DROP")
        _copy(cur, "stage_variables", ("variable_code", "label", "concept", "category", "table_id", "universe",
                                       "vintage"), keep_vars)
        cur.execute(
            """INSERT INTO public.variables SELECT * FROM stage_variables
               ON CONFLICT (variable_code) DO UPDATE SET label = EXCLUDED.label, concept = EXCLUDED.concept,
                 category = EXCLUDED.category, table_id = EXCLUDED.table_id, universe = EXCLUDED.universe,
                 vintage = EXCLUDED.vintage"""
        )
        progress("loading variables", len(keep_vars), len(ex.variables))

        cur.execute("DELETE FROM public.estimates WHERE variable_code = ANY(%s)", (sorted(keep_codes),))
        _copy(cur, "public.estimates", ("geo_id", "variable_code", "estimate", "margin_error", "source"), keep_est)
        progress("loading estimates", len(keep_est), len(ex.estimates))

        tables: dict[str, list] = {}
        for v in keep_vars:
            tables.setdefault(v[4], [v[6], 0, 0])[1] += 1
        for e in keep_est:
            tables[e[1].split("_")[0]][2] += 1
        for table_id, (vintage, nvars, nrows) in tables.items():
            cur.execute(
                """INSERT INTO sage.census_tables (table_id, vintage, source, variables, rows) VALUES (%s,%s,%s,%s,%s)
                   ON CONFLICT (table_id) DO UPDATE SET vintage = EXCLUDED.vintage, source = EXCLUDED.source,
                     variables = EXCLUDED.variables, rows = EXCLUDED.rows, loaded_at = now()""",
                (table_id, vintage, SHIPPED, nvars, nrows),
            )
        cur.execute(
            """INSERT INTO sage.data_loads (name, sha256, rows) VALUES (%s, %s, %s)
               ON CONFLICT (name) DO UPDATE SET sha256 = EXCLUDED.sha256, rows = EXCLUDED.rows, loaded_at = now()""",
            (SHIPPED, ex.sha256, json.dumps(ex.counts())),
        )
    return {"skipped": False, "rows": ex.counts(), "kept_fetched_tables": sorted(fetched)}


def _still_loaded(conn: psycopg.Connection, ex: Extract, fetched: set[str]) -> bool:
    """True when every shipped row (outside fetched tables) is still in the database."""
    codes = sorted({v[0] for v in ex.variables if v[4] not in fetched})
    n_geo = scalar(conn, "SELECT count(*) FROM public.geography")
    n_est = scalar(conn, "SELECT count(*) FROM public.estimates WHERE variable_code = ANY(%s)", (codes,))
    expected = sum(1 for e in ex.estimates if e[1] in set(codes))
    return n_geo >= len(ex.geography) and n_est == expected
