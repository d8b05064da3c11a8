"""The R-CPI-U-RS: put ACS dollar amounts of different periods into the same dollars.

The Census Bureau adjusts ACS dollar values with the R-CPI-U-RS (BLS "Retroactive Series", all items, U.S. city
average, December 1977 = 100; research note ``acs-statistics.md`` §1.10 and §3).  The shipped file
``data/cpi/cpi_u_rs_annual.csv`` holds its annual averages for 2000–2024; ``data/cpi/SOURCE.md`` gives the
provenance and the revision warning (BLS revises past years: the 2020 handbook's chapter 10 examples use older
values, e.g. 2018 = 369.8 where the shipped file, like current Census guidance, has 369.1).

Formulas ([H20] ch. 10, pp. 72–74):

* single years, formula 10.1: ``X_Y1,adj = CPI_Y2 / CPI_Y1 · X_Y1`` (:func:`factor`);
* multiyear periods, formula 10.2: use the **last year** of each period, because a 5-year period is in its final
  year's dollars (2014-2018 is in 2018 dollars): ``dollar_factor("2014-2018", "2019-2023") = CPI_2023 / CPI_2018 =
  449.3 / 369.1 = 1.21728529`` (the Census Bureau's own figure, "Comparing 2023 ACS Data");
* the MOE of an adjusted estimate is the MOE times the same factor ([H20] p. 72).

Only dollar amounts are adjusted (incomes, rents, home values, costs), never counts, percentages or ages.

The file is read from ``data_path / "cpi"`` (``Settings.data_path``), by default ``PROJECT_ROOT / "data" / "cpi"``;
the product never reads anything outside its own tree at run time.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from types import MappingProxyType

from ..errors import DataError, ErrorKind
from ..settings import PROJECT_ROOT

CPI_DIR = "cpi"
CPI_FILE = "cpi_u_rs_annual.csv"
HEADER = ["year", "index"]
SERIES = "R-CPI-U-RS, all items, U.S. city average, annual average (BLS; December 1977 = 100)"

_VINTAGE = re.compile(r"^\s*(\d{4})\s*(?:[-\u2013]\s*(\d{4}))?\s*$")


@dataclass(frozen=True)
class CpiTable:
    """Annual averages of one vintage of the R-CPI-U-RS: ``year -> index``.

    The shipped table comes from :func:`load`; a table of other values (e.g. the pre-revision values the 2020
    handbook printed) can be built directly, ``CpiTable({2014: 348.3, 2015: 348.9})``.
    """

    values: Mapping[int, Decimal]
    source: str = "given values"

    def __post_init__(self) -> None:
        clean = {}
        for year, value in dict(self.values).items():
            if isinstance(year, bool) or not isinstance(year, int):
                raise TypeError(f"CPI years must be integers, not {year!r}")
            number = Decimal(str(value)) if isinstance(value, float) else Decimal(value)
            if not number.is_finite() or number <= 0:
                raise ValueError(f"the CPI index of {year} must be a positive number, not {value!r}")
            clean[year] = number
        if not clean:
            raise ValueError("a CPI table needs at least one year")
        object.__setattr__(self, "values", MappingProxyType(dict(sorted(clean.items()))))

    @property
    def first_year(self) -> int:
        return min(self.values)

    @property
    def last_year(self) -> int:
        return max(self.values)

    def index(self, year: int) -> float:
        """The annual-average index of ``year``; :class:`DataError` when the table does not have that year."""
        if isinstance(year, bool) or not isinstance(year, int):
            raise TypeError(f"the year must be an integer, not {year!r}")
        try:
            return float(self.values[year])
        except KeyError:
            raise DataError(
                f"The R-CPI-U-RS annual average for {year} is not available: the CPI table ({self.source}) covers "
                f"{self.first_year}-{self.last_year}. Dollar amounts can only be compared between periods that end "
                "in those years.",
                kind=ErrorKind.CPI_YEAR_MISSING,
            ) from None

    def factor(self, from_year: int, to_year: int) -> float:
        """``CPI[to_year] / CPI[from_year]``: multiply a ``from_year``-dollar amount (and its MOE) by this to get
        ``to_year`` dollars ([H20] formula 10.1)."""
        return float(self.values_of(to_year) / self.values_of(from_year))

    def dollar_factor(self, from_vintage: str | int, to_vintage: str | int) -> float:
        """The factor between two ACS periods, by the last year of each ([H20] formula 10.2)."""
        return self.factor(vintage_end_year(from_vintage), vintage_end_year(to_vintage))

    def values_of(self, year: int) -> Decimal:
        self.index(year)  # raises the DataError for a missing year
        return self.values[year]


def vintage_end_year(vintage: str | int) -> int:
    """The last year of an ACS period: ``"2014-2018" -> 2018``; a single year (``"2023"`` or ``2023``) is itself.

    An en dash is accepted too (``"2014–2018"``).  ``ValueError`` for anything else, or a period that ends before
    it starts.
    """
    if isinstance(vintage, int) and not isinstance(vintage, bool):
        return vintage
    if not isinstance(vintage, str):
        raise ValueError(f"an ACS period looks like '2014-2018', not {vintage!r}")
    match = _VINTAGE.match(vintage)
    if not match:
        raise ValueError(f"an ACS period looks like '2014-2018', not {vintage!r}")
    start, end = int(match.group(1)), int(match.group(2) or match.group(1))
    if end < start:
        raise ValueError(f"the ACS period {vintage!r} ends before it starts")
    return end


def cpi_path(data_path: Path | None = None) -> Path:
    """Where the CPI file is: ``data_path / "cpi" / "cpi_u_rs_annual.csv"`` (default ``PROJECT_ROOT / "data"``)."""
    return (Path(data_path) if data_path is not None else PROJECT_ROOT / "data") / CPI_DIR / CPI_FILE


def read_table(path: Path) -> CpiTable:
    """Read and validate a CPI file (header ``year,index``; one row per year; positive indexes).

    :class:`DataError` with the file name and line on any problem, before anything uses the values.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(
            f"The CPI file {path.name} is missing from {path.parent}. Restore it from the repository "
            "(git checkout -- data/) and run `python -m sage setup` again.",
            kind=ErrorKind.DATA_MISSING,
        )
    values: dict[int, Decimal] = {}
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header != HEADER:
                raise DataError(
                    f"{path.name} has the header {header!r}; expected {HEADER!r}. Restore it from the repository.",
                    kind=ErrorKind.DATA_MALFORMED,
                )
            for lineno, row in enumerate(reader, start=2):
                if not row:
                    continue
                if len(row) != 2:
                    raise _bad(path, lineno, f"{len(row)} fields instead of 2")
                year_text, index_text = row
                if not re.fullmatch(r"\d{4}", year_text):
                    raise _bad(path, lineno, f"year {year_text!r} is not a four-digit year")
                year = int(year_text)
                if year in values:
                    raise _bad(path, lineno, f"year {year} appears twice")
                try:
                    index = Decimal(index_text)
                except InvalidOperation:
                    raise _bad(path, lineno, f"index {index_text!r} is not a number") from None
                if not index.is_finite() or index <= 0:
                    raise _bad(path, lineno, f"index {index_text!r} is not a positive number")
                values[year] = index
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"{path.name} could not be read ({exc}); restore it from the repository.",
                        kind=ErrorKind.DATA_MALFORMED) from exc
    if not values:
        raise DataError(f"{path.name} has no rows; restore it from the repository.", kind=ErrorKind.DATA_MALFORMED)
    return CpiTable(values, source=f"{SERIES}, {path.name}")


def _bad(path: Path, lineno: int, what: str) -> DataError:
    return DataError(f"{path.name} line {lineno}: {what}. Restore the file from the repository.",
                     kind=ErrorKind.DATA_MALFORMED)


_cache: dict[tuple[str, int], CpiTable] = {}


def load(data_path: Path | None = None) -> CpiTable:
    """The shipped CPI table from ``data_path`` (cached until the file changes)."""
    path = cpi_path(data_path)
    try:
        key = (str(path.resolve()), path.stat().st_mtime_ns)
    except OSError:
        return read_table(path)  # raises the "missing" DataError
    table = _cache.get(key)
    if table is None:
        table = _cache[key] = read_table(path)
    return table


def index(year: int, *, data_path: Path | None = None) -> float:
    """The R-CPI-U-RS annual average of ``year`` (e.g. 2018 -> 369.1); :class:`DataError` if not in the file."""
    return load(data_path).index(year)


def factor(from_year: int, to_year: int, *, data_path: Path | None = None) -> float:
    """``CPI[to_year] / CPI[from_year]`` ([H20] formula 10.1): 2018 -> 2023 is 449.3 / 369.1 = 1.21728529."""
    return load(data_path).factor(from_year, to_year)


def dollar_factor(from_vintage: str | int, to_vintage: str | int, *, data_path: Path | None = None) -> float:
    """The factor putting ``from_vintage`` dollars into ``to_vintage`` dollars, by the last year of each period
    ([H20] formula 10.2): ``dollar_factor("2014-2018", "2019-2023") = 1.21728529``.  Apply it to the estimate
    **and** its MOE."""
    return load(data_path).dollar_factor(from_vintage, to_vintage)


__all__ = [
    "CPI_FILE",
    "CpiTable",
    "SERIES",
    "cpi_path",
    "dollar_factor",
    "factor",
    "index",
    "load",
    "read_table",
    "vintage_end_year",
]
