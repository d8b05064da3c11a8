"""`python -m sage census fetch`: add ACS 5-year tables from the Census Data API, for every geography level and
several periods (the download is :mod:`sage.census.download`; ``census tables`` searches
:mod:`sage.census.catalog_search`).

The shipped extracts are real but partial; this grows them with whole tables, margins of error included, for the
period and the levels the user picks.  The rules, and why:

* **All or nothing per table.**  Everything a table needs (metadata, every chunk of variables, every level, per
  state where needed) is downloaded into memory first; only then is the database touched, in one transaction.  An
  HTTP failure half-way leaves the database exactly as it was.  Several tables are loaded one transaction each, so
  tables finished before a failure stay loaded (the error says which).
* **Several periods side by side.**  ``--vintage 2018`` loads 2014-2018 into ``public.estimates_by_vintage``
  beside 2019-2023.  A fetch replaces only the rows of its table, its period and the levels (and ``--states``) it
  fetched; re-running it is idempotent.  ``public.variables.vintage`` stays the latest period loaded and
  ``vintages`` lists them all; when the API's label of a line in the fetched period differs from the label of the
  latest one (ignoring case, the colons the API added in 2019 and the year of "inflation-adjusted dollars"),
  ``label_changed`` is set and ``earlier_label`` keeps the earlier label.
* **Special values.**  -666666666, -888888888, -999999999 are NULL estimates; the margin -555555555 (a controlled
  total, no sampling error) is stored as 0, -222222222 and -333333333 (margin not computable) as NULL (see
  :data:`sage.census.api.SPECIAL_VALUES`).
* **Levels.**  nation (``for=us:1``), state, county, place, cbsa (metropolitan and micropolitan statistical areas),
  cd (congressional districts), tract (one request per state) and zcta; ``--states TX,CA`` limits the levels inside
  a state.  Rows are keyed by the API's GEO_ID and named by its NAME.  ``public.geography`` is the geography of the
  newest period loaded: a fetch of that period (or a newer one) adds the places it lacks; a fetch of an earlier
  period loads only places it has and counts the others as skipped (the old Connecticut counties, a tract or a
  metro area of another delineation).
* **Bookkeeping.**  Each fetched table and period is recorded in ``sage.census_tables`` with source
  ``census-api:{year}/acs/acs5``.  The shipped-data loader leaves (table, period) pairs recorded with any other
  source than ``shipped`` alone, so re-running ``setup`` does not revert a fetch.
* After loading, the retrieval index is refreshed (``sage.index.index_schema``, which re-embeds only chunks
  whose text changed) so new variables can be retrieved, and the semantic layer's per-database cache is
  refreshed (``sage.census.semantic.load_measures(refresh=True)``, which the offline planner's catalog follows)
  so a fetched table or level becomes answerable at once; if either fails, the data stay loaded and the report
  says so.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import Any

import psycopg

from .. import db
from ..errors import CensusApiError, DatabaseError, ErrorKind, SageError
from ..index import index_schema
from ..settings import Settings
from ..types import StepProgress
from . import extracts, loader, migrate
from .api import MAX_GET_ITEMS, CensusClient, dataset_path
from .catalog_search import acs_table_catalog
from .codes import is_table_id
from .download import GeoIndex, TableData, download_table
from .extracts import SHIPPED
from .schema import LEVELS, STATE_LEVELS
from .semantic import load_measures

log = logging.getLogger(__name__)

#: the tables the semantic layer and the examples want: with internet, `--preset core` rebuilds a complete
#: extract (margins of error included) for one vintage
PRESETS: dict[str, list[str]] = {
    "core": [
        "B01001", "B01002", "B01003", "B02001", "B03002", "B08301", "B08303", "B15003", "B17001", "B19001",
        "B19013", "B19083", "B19301", "B23025", "B25002", "B25003", "B25064", "B25070", "B25077", "B27010",
        "B28011",
    ],
}

#: the vintage of the shipped geography and catalog; the CLI's default
DEFAULT_VINTAGE = 2023
#: the first ACS 5-year release (2005-2009)
FIRST_VINTAGE = 2009
#: the default levels (``--geographies``); :data:`sage.census.schema.LEVELS` are all of them
GEOGRAPHIES = ("state", "county")
#: how reports name many places of a level
PLURALS = {"nation": "nation", "state": "states", "county": "counties", "place": "places", "cbsa": "metro areas",
           "cd": "congressional districts", "tract": "tracts", "zcta": "ZCTAs"}


# ---------------------------------------------------------------------------------------------- small rules

_CATEGORY_BY_PREFIX = {
    "08": "transportation",
    "14": "education",
    "15": "education",
    "17": "poverty",
    "22": "poverty",
    "19": "income",
    "20": "income",
    "23": "employment",
    "24": "employment",
    "25": "housing",
    "27": "health_insurance",
}
#: disability tables that are about health insurance coverage (the rest of B18 is demographics)
_HEALTH_INSURANCE_NUMBERS = ("18135", "18136")


def category_for(table_id: str) -> str:
    """The category of an ACS table, by its number, exactly as ``data/acs/SOURCE.md`` assigns it.

    B08 transportation; B14, B15 education; B17, B22 poverty; B19, B20 income; B23, B24 employment; B25 housing;
    B27 and B18135/B18136 health_insurance; everything else demographics (so B28011 internet subscriptions is
    demographics).  The same rule holds for collapsed ``C`` tables (C15 education, C24 employment, ...).
    """
    table_id = (table_id or "").upper()
    if table_id[1:6] in _HEALTH_INSURANCE_NUMBERS:
        return "health_insurance"
    return _CATEGORY_BY_PREFIX.get(table_id[1:3], "demographics")


def vintage_label(year: int) -> str:
    """The 5-year period a release year stands for: 2023 -> '2019-2023'."""
    return f"{int(year) - 4}-{int(year)}"


def source_label(year: int) -> str:
    """The ``source`` of fetched rows and of their ``sage.census_tables`` entry."""
    return f"census-api:{dataset_path(year)}"


def fetch_command(tables: Iterable[str], vintage: int = DEFAULT_VINTAGE, geographies: Iterable[str] | None = None,
                  states: Iterable[str] | None = None) -> str:
    """The shell command that adds ``tables`` (for the Explore page and messages, e.g. a planner declining a place
    question names ``fetch_command(["B19013"], geographies=["place"])``)."""
    command = f"python -m sage census fetch --vintage {int(vintage)} --tables {','.join(tables)}"
    geos = list(geographies or [])
    if geos and tuple(geos) != GEOGRAPHIES:
        command += f" --geographies {','.join(geos)}"
    if states:
        command += f" --states {','.join(states)}"
    return command


def resolve_tables(tables: str | Iterable[str] | None = None, preset: str | None = None) -> list[str]:
    """Table ids from a comma-separated string or a list, or a preset name; upper-cased, de-duplicated, checked."""
    if preset:
        if preset not in PRESETS:
            raise CensusApiError(
                f"Unknown preset {preset!r}; choose one of {', '.join(sorted(PRESETS))}.",
                kind=ErrorKind.INVALID_ARGUMENT,
            )
        return list(PRESETS[preset])
    if isinstance(tables, str):
        tables = tables.split(",")
    out: list[str] = []
    for t in tables or []:
        t = str(t).strip().upper()
        if t and t not in out:
            out.append(t)
    if not out:
        raise CensusApiError("Name at least one table (e.g. --tables B25003) or a preset (--preset core).",
                             kind=ErrorKind.INVALID_ARGUMENT)
    bad = [t for t in out if not is_table_id(t)]
    if bad:
        raise CensusApiError(
            f"{', '.join(bad)} {'is not an ACS table id' if len(bad) == 1 else 'are not ACS table ids'} "
            "(a B or C and five digits, with an optional letter suffix, e.g. B25003 or B19013A). "
            "Find ids with `python -m sage census tables --search TEXT`.",
            kind=ErrorKind.INVALID_ARGUMENT,
        )
    return out


def _check_vintage(vintage: int) -> int:
    try:
        year = int(vintage)
    except (TypeError, ValueError):
        raise CensusApiError(f"The vintage must be a year such as {DEFAULT_VINTAGE}, not {vintage!r}.",
                             kind=ErrorKind.INVALID_ARGUMENT) from None
    if not FIRST_VINTAGE <= year <= date.today().year:
        raise CensusApiError(
            f"ACS 5-year data exist for the years {FIRST_VINTAGE} to the latest release, not {year} "
            f"(the year is the last of the five: {DEFAULT_VINTAGE} = {vintage_label(DEFAULT_VINTAGE)}).",
            kind=ErrorKind.INVALID_ARGUMENT,
        )
    return year


def _check_geographies(geographies: Iterable[str]) -> tuple[str, ...]:
    geos = tuple(dict.fromkeys(str(g).strip().lower() for g in geographies if str(g).strip()))
    bad = [g for g in geos if g not in LEVELS]
    if not geos or bad:
        raise CensusApiError(
            f"Geographies are one or more of {', '.join(LEVELS)}, not {', '.join(bad) or 'nothing'}.",
            kind=ErrorKind.INVALID_ARGUMENT,
        )
    return geos


def _check_states(states: Iterable[str] | None, index: GeoIndex, geos: tuple[str, ...]) -> list[str] | None:
    """``--states`` (USPS abbreviations or 2-digit FIPS codes) as sorted FIPS codes; None when not given."""
    wanted = [str(s).strip().upper() for s in (states or []) if str(s).strip()]
    if not wanted:
        return None
    by_abbr = {abbr: fips for fips, (abbr, _name) in index.states.items()}
    out, bad = set(), []
    for s in wanted:
        if s in by_abbr:
            out.add(by_abbr[s])
        elif s in index.states:
            out.add(s)
        else:
            bad.append(s)
    if bad:
        raise CensusApiError(f"{', '.join(bad)} {'is not a state' if len(bad) == 1 else 'are not states'}: name "
                             "states by their USPS abbreviation, e.g. --states TX,CA.", kind=ErrorKind.INVALID_ARGUMENT)
    if not any(g in STATE_LEVELS for g in geos):
        raise CensusApiError(
            f"--states limits the levels inside a state ({', '.join(STATE_LEVELS)}); {', '.join(geos)} "
            f"{'is' if len(geos) == 1 else 'are'} not inside one state.",
            kind=ErrorKind.INVALID_ARGUMENT,
        )
    return sorted(out)


_DOLLAR_YEAR = re.compile(r"\b(?:19|20)\d\d(?= inflation-adjusted)")


def label_key(label: str) -> str:
    """A label for comparing periods: lower case, without colons (the API added them to every total in 2019),
    without the year of "in 2018 inflation-adjusted dollars" (every period names its own), spaces collapsed."""
    text = _DOLLAR_YEAR.sub("", (label or "").lower()).replace(":", "")
    return re.sub(r"\s+", " ", text).strip()


# ---------------------------------------------------------------------------------------------- reports


@dataclass
class TableReport:
    """What happened to one table."""

    table_id: str
    vintage: str
    concept: str
    category: str
    universe: str | None
    variables: int = 0
    rows: int = 0  # rows inserted into public.estimates_by_vintage
    levels: dict[str, int] = field(default_factory=dict)  # places loaded per level
    states: int = 0
    counties: int = 0
    geography_added: int = 0  # places added to public.geography (their GEO_ID and NAME from the API)
    null_estimates: int = 0  # NULL estimates (special values or empty cells)
    null_margins: int = 0
    special_values: int = 0  # cells that carried a Census special-value code
    skipped_places: int = 0  # places the API returned that the geography does not take
    skipped_geo_ids: list[str] = field(default_factory=list)  # up to 10 of them
    replaced_rows: int = 0  # rows of this table, period and levels deleted (earlier fetch or shipped extract)
    previous_source: str | None = None  # of this table and period in sage.census_tables
    vintages: list[str] = field(default_factory=list)  # the table's periods after the load, ascending
    latest: str | None = None  # the period public.estimates shows for the table
    labels_changed: list[str] = field(default_factory=list)  # variables flagged label_changed by this load
    not_in_view: list[str] = field(default_factory=list)  # levels with no row of the latest period (see summary)
    empty_requests: int = 0
    requests: int = 0
    fetch_seconds: float = 0.0
    load_seconds: float = 0.0

    @property
    def seconds(self) -> float:
        return self.fetch_seconds + self.load_seconds

    def to_dict(self) -> dict:
        out = asdict(self)
        out["seconds"] = round(self.seconds, 3)
        out["fetch_seconds"] = round(self.fetch_seconds, 3)
        out["load_seconds"] = round(self.load_seconds, 3)
        return out

    def summary(self) -> str:
        where = ", ".join(f"{n:,} {PLURALS.get(level, level) if n != 1 else level}"
                          for level, n in self.levels.items())
        line = (
            f"{self.table_id} ({self.concept}; {self.category}): {self.variables} variables, {self.rows:,} rows "
            f"({where}) for {self.vintage} in {self.seconds:.1f} s"
        )
        notes = []
        if self.null_estimates or self.null_margins:
            notes.append(f"{self.null_estimates:,} NULL estimates and {self.null_margins:,} NULL margins "
                         f"({self.special_values:,} Census special values)")
        if self.previous_source == SHIPPED:
            notes.append(f"replaced {self.replaced_rows:,} rows of the shipped extract")
        elif self.replaced_rows:
            notes.append(f"refreshed {self.replaced_rows:,} rows")
        if self.geography_added:
            notes.append(f"added {self.geography_added:,} places to the geography (GEO_ID and NAME from the API)")
        if self.skipped_places:
            notes.append(f"skipped {self.skipped_places} places not in this database's geography "
                         f"(e.g. {', '.join(self.skipped_geo_ids[:3])})")
        if len(self.vintages) > 1:
            notes.append(f"periods loaded: {', '.join(self.vintages)} (public.estimates shows {self.latest})")
        if self.labels_changed:
            notes.append(f"label changed between periods: {', '.join(self.labels_changed[:5])}"
                         + (" ..." if len(self.labels_changed) > 5 else ""))
        for text in self.not_in_view:
            notes.append(text)
        return line + "".join(f"\n    - {n}" for n in notes)


@dataclass
class FetchReport:
    """What ``fetch_tables`` did, table by table, plus the retrieval-index refresh."""

    year: int
    vintage: str
    source: str
    geographies: tuple[str, ...]
    states: list[str] | None = None
    tables: list[TableReport] = field(default_factory=list)
    index: dict = field(default_factory=dict)
    semantic: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables)

    def to_dict(self) -> dict:
        return {
            "year": self.year,
            "vintage": self.vintage,
            "source": self.source,
            "geographies": list(self.geographies),
            "states": self.states,
            "tables": [t.to_dict() for t in self.tables],
            "rows": self.rows,
            "index": self.index,
            "semantic": self.semantic,
            "seconds": round(self.seconds, 3),
        }

    def summary(self) -> str:
        lines = [f"Loaded {len(self.tables)} table(s), {self.rows:,} rows, ACS 5-year {self.vintage} "
                 f"({self.source}) in {self.seconds:.1f} s:"]
        lines += ["  " + t.summary() for t in self.tables]
        status = self.index.get("status")
        if status == "refreshed":
            lines.append("Retrieval index refreshed.")
        elif status:
            lines.append(f"Retrieval index: {status} — {self.index.get('message', '')}".rstrip(" —"))
        if self.semantic.get("status") == "failed":
            lines.append(f"Semantic layer: failed — {self.semantic.get('message', '')}")
        return "\n".join(lines)


class FetchError(SageError):
    """``census fetch`` stopped at a table; ``report`` lists the tables loaded before it (they stay loaded).

    ``kind`` and ``detail`` are those of the error that stopped it (its ``__cause__``): a Census API kind, or
    ``database`` when loading failed.
    """

    def __init__(self, message: str, *, report: FetchReport, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.report = report


# ---------------------------------------------------------------------------------------------- load


def _end_year(vintage: str) -> int:
    return int(vintage[-4:])


def geo_index(conn: psycopg.Connection, year: int) -> GeoIndex:
    """The database's geography, for deciding what a fetch of ``year`` does with each place (:class:`GeoIndex`)."""
    index = GeoIndex()
    for row in conn.execute(f"SELECT {', '.join(extracts.GEOGRAPHY_COLUMNS)} FROM public.geography"):
        index.add(row)
    newest = db.scalar(conn, "SELECT max(right(vintage, 4)::int) FROM public.variables")
    index.add_new = newest is None or int(year) >= int(newest)
    return index


def _load_table(conn: psycopg.Connection, data: TableData, year: int, geos: tuple[str, ...],
                states: list[str] | None) -> TableReport:
    """Replace the table's rows of this period and these levels in one transaction (``conn`` is in autocommit
    mode)."""
    meta = data.meta
    vintage = vintage_label(year)
    category = category_for(meta.table_id)
    report = TableReport(
        table_id=meta.table_id, vintage=vintage, concept=meta.concept, category=category, universe=data.universe,
        variables=len(meta.variables), rows=len(data.rows), levels=dict(data.levels), states=data.states,
        counties=data.counties, null_estimates=data.null_estimates, null_margins=data.null_margins,
        special_values=data.special_values, skipped_places=len(data.skipped), skipped_geo_ids=data.skipped[:10],
        empty_requests=data.empty_requests, requests=data.requests, fetch_seconds=data.seconds,
    )
    started = time.perf_counter()
    try:
        _write_table(conn, data, report, year, geos, states)
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatabaseError(
            f"Loading {meta.table_id} into the database failed ({first}); the transaction was rolled back, so the "
            "table is as it was.",
            detail=str(exc),
        ) from exc
    report.load_seconds = time.perf_counter() - started
    return report


def _variable_rows(cur: psycopg.Cursor, data: TableData, vintage: str, category: str) -> tuple[list[tuple], list[str]]:
    """The ``public.variables`` rows to upsert, and the codes whose label now differs between periods.

    A newer period brings its label, concept and universe (the old label becomes ``earlier_label`` when it differs);
    the same period refreshes them; an earlier period changes nothing but the flag when its label differs.
    """
    meta = data.meta
    existing = {r[0]: r[1:] for r in cur.execute(
        "SELECT variable_code, label, concept, category, universe, vintage, label_changed, earlier_label "
        "FROM public.variables WHERE table_id = %s", (meta.table_id,))}
    rows, changed = [], []
    for v in meta.variables:
        label, concept, universe = v.label, v.concept or meta.concept, data.universe
        old = existing.get(v.code)
        flag, earlier = False, None
        if old is not None:
            old_label, old_concept, old_category, old_universe, latest, flag, earlier = old
            if vintage > latest:
                if label_key(old_label) != label_key(label):
                    flag, earlier = True, old_label
            elif vintage < latest:
                if label_key(old_label) != label_key(label):
                    flag, earlier = True, label
                label, concept, category_, universe = old_label, old_concept, old_category, old_universe
                rows.append((v.code, label, concept, category_, meta.table_id, universe, vintage, flag, earlier))
                if flag and (not old[5] or old[6] != earlier):
                    changed.append(v.code)
                continue
            if flag and (not old[5] or old[6] != earlier):
                changed.append(v.code)
        rows.append((v.code, label, concept, category, meta.table_id, universe, vintage, flag, earlier))
    return rows, changed


def _write_table(conn: psycopg.Connection, data: TableData, report: TableReport, year: int, geos: tuple[str, ...],
                 states: list[str] | None) -> None:
    meta = data.meta
    vintage, source, category = vintage_label(year), source_label(year), category_for(meta.table_id)
    with conn.transaction():
        cur = conn.cursor()
        # one loader at a time (a second fetch, or setup's shipped load); readers are not blocked
        cur.execute("LOCK TABLE sage.census_tables IN SHARE ROW EXCLUSIVE MODE")
        prev = cur.execute("SELECT source FROM sage.census_tables WHERE table_id = %s AND vintage = %s",
                           (meta.table_id, vintage)).fetchone()
        report.previous_source = prev[0] if prev else None
        if data.new_geography:
            with cur.copy(f"COPY public.geography ({', '.join(extracts.GEOGRAPHY_COLUMNS)}) FROM STDIN") as copy:
                for row in data.new_geography:
                    copy.write_row(row)
            report.geography_added = len(data.new_geography)
        # this table's rows of this period, at the fetched levels (in the fetched states)
        cur.execute(
            """DELETE FROM public.estimates_by_vintage e USING public.geography g, public.variables v
               WHERE g.geo_id = e.geo_id AND v.variable_code = e.variable_code AND v.table_id = %(table)s
                 AND e.vintage = %(vintage)s AND g.level = ANY(%(levels)s)
                 AND (%(states)s::text[] IS NULL OR NOT (g.level = ANY(%(state_levels)s))
                      OR g.state_fips = ANY(%(states)s::text[]))""",
            {"table": meta.table_id, "vintage": vintage, "levels": list(geos), "states": states,
             "state_levels": list(STATE_LEVELS)},
        )
        report.replaced_rows = cur.rowcount
        rows, report.labels_changed = _variable_rows(cur, data, vintage, category)
        cur.executemany(
            """INSERT INTO public.variables (variable_code, label, concept, category, table_id, universe, vintage,
                                            vintages, label_changed, earlier_label)
               VALUES (%s, %s, %s, %s, %s, %s, %s, ARRAY[%s], %s, %s)
               ON CONFLICT (variable_code) DO UPDATE SET label = EXCLUDED.label, concept = EXCLUDED.concept,
                 category = EXCLUDED.category, table_id = EXCLUDED.table_id, universe = EXCLUDED.universe,
                 label_changed = EXCLUDED.label_changed, earlier_label = EXCLUDED.earlier_label""",
            [(*r[:7], r[6], r[7], r[8]) for r in rows],
        )
        with cur.copy("COPY public.estimates_by_vintage (geo_id, variable_code, estimate, margin_error, source, "
                      "vintage) FROM STDIN") as copy:
            for geo, code, est, moe in data.rows:
                copy.write_row((geo, code, est, moe, source, vintage))
        # lines no period has any more (a line the new period dropped and nothing else holds on to)
        cur.execute(
            """DELETE FROM public.variables v WHERE v.table_id = %s
               AND NOT EXISTS (SELECT FROM public.estimates_by_vintage e WHERE e.variable_code = v.variable_code)""",
            (meta.table_id,),
        )
        codes = [r[0] for r in cur.execute("SELECT variable_code FROM public.variables WHERE table_id = %s",
                                           (meta.table_id,))]
        loader.refresh_vintages(cur, codes)
        loader.record_tables(cur, {(meta.table_id, vintage)}, source)
        _describe_periods(cur, meta.table_id, report)


def _describe_periods(cur: psycopg.Cursor, table_id: str, report: TableReport) -> None:
    """The table's periods after the load, and the levels that public.estimates (the latest period) does not show
    although estimates_by_vintage has earlier rows for them."""
    found: dict[str, set[str]] = {}
    latest = None
    for level, vintage, newest in cur.execute(
        """SELECT g.level, e.vintage, v.vintage FROM public.estimates_by_vintage e
           JOIN public.variables v ON v.variable_code = e.variable_code JOIN public.geography g ON g.geo_id = e.geo_id
           WHERE v.table_id = %s GROUP BY 1, 2, 3""",
        (table_id,),
    ):
        found.setdefault(level, set()).add(vintage)
        latest = max(latest or newest, newest)
    report.vintages = sorted(set().union(*found.values())) if found else []
    report.latest = latest
    for level in LEVELS:
        periods = found.get(level)
        if periods and latest not in periods:
            report.not_in_view.append(
                f"no {latest} rows for the {level} level: public.estimates (the latest period) shows none of its "
                f"places; their {', '.join(sorted(periods))} rows are in public.estimates_by_vintage (fetch the "
                f"{level} level for {latest} too)"
            )


def _refresh_index(settings: Settings, progress: StepProgress | None) -> dict[str, Any]:
    """Re-index the schema and variables so new variables are retrievable; never raises (the data are loaded)."""
    try:
        report = index_schema(settings, progress=progress)
    except SageError as exc:
        return {"status": "failed", "message": f"{exc.message} The data are loaded; run `python -m sage setup` to "
                "rebuild the retrieval index."}
    except Exception as exc:  # the index is a separate component: its failure must not hide a finished load
        log.warning("retrieval index refresh failed", exc_info=True)
        return {"status": "failed", "message": f"{type(exc).__name__}: {str(exc)[:200]}. The data are loaded; run "
                "`python -m sage setup` to rebuild the retrieval index."}
    return {"status": "refreshed", "detail": report.to_dict()}


def _refresh_semantic(settings: Settings) -> dict[str, Any]:
    """Drop the semantic layer's per-database cache so measures over the new variables become available."""
    try:
        measures = load_measures(settings, refresh=True)
    except SageError as exc:
        return {"status": "failed", "message": exc.message}
    except Exception as exc:  # a broken measures file must not hide a finished load
        log.warning("semantic layer refresh failed", exc_info=True)
        return {"status": "failed", "message": f"{type(exc).__name__}: {str(exc)[:200]}"}
    return {"status": "refreshed", "measures": len(measures)}


def fetch_tables(
    settings: Settings,
    tables: list[str],
    vintage: int,
    geographies: Iterable[str] = GEOGRAPHIES,
    progress: StepProgress | None = None,
    *,
    states: Iterable[str] | None = None,
    client: CensusClient | None = None,
    refresh_index: bool = True,
    lines_per_request: int = MAX_GET_ITEMS // 2,
) -> FetchReport:
    """Fetch ``tables`` of the ``vintage`` (release year, e.g. 2023 = 2019-2023) ACS 5-year at the ``geographies``
    levels (``states``: USPS abbreviations limiting the levels inside a state) and load them.

    ``progress(step, done, total)`` is called per step ("B25003: metadata", "B25003: download" once per request,
    "B25003: load").  ``client`` replaces the default HTTP client (tests use one with tiny backoff delays).
    Raises :class:`CensusApiError` (``kind`` bad_key, missing_key, network, timeout, unavailable, rate_limited,
    empty, unknown_table, not_found, bad_request, bad_response, bad_geography, invalid_argument); tables loaded
    before the failure stay loaded, the failing table and the ones after it are untouched: that failure is raised as
    a :class:`FetchError` (its ``kind`` the failing step's, its cause the original error) whose ``report`` holds the
    partial :class:`FetchReport`.
    """
    progress = progress or (lambda *a: None)
    table_ids = resolve_tables(tables)
    year = _check_vintage(vintage)
    geos = _check_geographies(geographies)
    client = client or CensusClient.from_settings(settings)
    started = time.perf_counter()
    catalog = acs_table_catalog(settings.data_path)
    group_universes: dict[str, dict] | None = None

    def universe_fallback(table_id: str) -> str | None:
        nonlocal group_universes
        if table_id in catalog:  # universes are stable across vintages; the offline catalog saves a request
            return catalog[table_id]["universe"]
        if group_universes is None:
            try:
                group_universes = client.group_universes(year)
            except CensusApiError as exc:
                log.info("no universe from groups.json: %s", exc.message)
                group_universes = {}
        return (group_universes.get(table_id) or {}).get("universe")

    with db.owner(settings) as conn:
        db.require_setup(conn)
        migrate.require_current(conn)
        index = geo_index(conn, year)
        state_fips = _check_states(states, index, geos)
        abbrs = [index.states[f][0] for f in state_fips] if state_fips else None
        report = FetchReport(year=year, vintage=vintage_label(year), source=source_label(year), geographies=geos,
                             states=abbrs)
        try:
            for table_id in table_ids:
                data = download_table(client, table_id, year, geos, index, states=state_fips,
                                      universe_fallback=universe_fallback, progress=progress,
                                      lines_per_request=lines_per_request)
                progress(f"{table_id}: load", 0, 1)
                report.tables.append(_load_table(conn, data, year, geos, state_fips))
                for row in data.new_geography:  # the next table finds them in the geography
                    index.add(row)
                progress(f"{table_id}: load", 1, 1)
                log.info("loaded %s: %d rows", table_id, len(data.rows))
        except SageError as exc:
            done = [t.table_id for t in report.tables]
            rest = table_ids[len(done):]
            message = (
                f"{exc.message} Nothing of {', '.join(rest)} was loaded"
                + (f"; {', '.join(done)} {'was' if len(done) == 1 else 'were'} loaded before the failure." if done
                   else "; the database is unchanged.")
            )
            if report.tables:
                report.semantic = _refresh_semantic(settings)
                if refresh_index:
                    report.index = _refresh_index(settings, progress)
            report.seconds = time.perf_counter() - started
            raise FetchError(message, kind=exc.kind, detail=exc.detail, report=report) from exc
        if report.tables:
            conn.execute("ANALYZE public.geography, public.variables, public.estimates_by_vintage")
    if report.tables:
        report.semantic = _refresh_semantic(settings)
    if refresh_index and report.tables:
        report.index = _refresh_index(settings, progress)
    elif not refresh_index:
        report.index = {"status": "skipped", "message": "not requested"}
    report.seconds = time.perf_counter() - started
    return report


__all__ = [
    "DEFAULT_VINTAGE",
    "FetchError",
    "FetchReport",
    "GEOGRAPHIES",
    "PRESETS",
    "TableReport",
    "category_for",
    "fetch_command",
    "fetch_tables",
    "geo_index",
    "label_key",
    "resolve_tables",
    "source_label",
    "vintage_label",
]
