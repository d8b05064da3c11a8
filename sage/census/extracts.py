"""The shipped ACS extracts: where they are, and reading and validating them (nothing here touches the database).

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
database exactly as it was: :func:`read_shipped` returns one :class:`Extract` per set, or raises
:class:`~sage.errors.DataError` at the first problem, naming the file and the line.

Apart from the load (:mod:`sage.census.loader`) because reading CSV files and checking every row is a different job
from writing them into PostgreSQL, and can be tested without a database.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

from ..errors import DataError, ErrorKind
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


def set_digests(data_path: Path) -> dict[str, str]:
    """The sha256 of each shipped file set (cheap: no parsing), as :func:`read_shipped` records them."""
    return {
        SHIPPED: _digest(data_path / DIRECTORIES[SHIPPED], ("geography", "variables", "estimates")),
        PLACES: _digest(data_path / DIRECTORIES[PLACES], ("geography", "estimates"), extra=repr(NATION)),
        EARLIER: _digest(data_path / DIRECTORIES[EARLIER], ("estimates",)),
    }


__all__ = [
    "EARLIER",
    "ESTIMATE_COLUMNS",
    "Extract",
    "GEOGRAPHY_COLUMNS",
    "NATION",
    "PLACES",
    "SHIPPED",
    "read_earlier",
    "read_extract",
    "read_places",
    "read_shipped",
    "set_digests",
]
