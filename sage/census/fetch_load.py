"""One downloaded table (:class:`~sage.census.download.TableData`) written into the database: its rows of one
period and the fetched levels replaced in one transaction (all or nothing), its variables upserted with their labels
compared across periods, its bookkeeping in ``sage.census_tables``, and what happened in a :class:`TableReport`.

Apart from :mod:`sage.census.fetch` (which downloads every table first, then loads them one by one, then refreshes
the index) because this is the only part of a fetch that writes SQL: the transaction, the COPYs and the upserts.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import psycopg

from .. import db
from ..errors import DatabaseError
from . import extracts, loader
from .download import GeoIndex, TableData
from .extracts import SHIPPED
from .fetch_rules import PLURALS, category_for, label_key, source_label, vintage_label
from .schema import LEVELS, STATE_LEVELS


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


def geo_index(conn: psycopg.Connection, year: int) -> GeoIndex:
    """The database's geography, for deciding what a fetch of ``year`` does with each place (:class:`GeoIndex`)."""
    index = GeoIndex()
    for row in conn.execute(f"SELECT {', '.join(extracts.GEOGRAPHY_COLUMNS)} FROM public.geography"):
        index.add(row)
    newest = db.scalar(conn, "SELECT max(right(vintage, 4)::int) FROM public.variables")
    index.add_new = newest is None or int(year) >= int(newest)
    return index


def _load_table(conn: psycopg.Connection, data: TableData, year: int, geos: tuple[str, ...],
                states: list[str] | None, hold: str | None = None) -> TableReport:
    """Replace the table's rows of this period and these levels in one transaction (``conn`` is in autocommit
    mode).

    ``hold`` (a period, e.g. ``2019-2023``; ``census update``) loads the rows without making their period the latest:
    ``public.variables`` is left as it is (a line new in this release is added with ``hold`` as its period and no
    rows in the view), the labels, concepts and universes of the release wait in ``sage.census_pending``, and
    :func:`sage.census.update.switch` moves every updated table to the new period at once."""
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
        _write_table(conn, data, report, year, geos, states, hold)
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
                 states: list[str] | None, hold: str | None = None) -> None:
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
        if hold is not None:
            _hold_variables(cur, data, vintage, category, hold)
        else:
            rows, report.labels_changed = _variable_rows(cur, data, vintage, category)
            _upsert_variables(cur, rows)
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
        if hold is None:  # held rows join the periods at the switch
            codes = [r[0] for r in cur.execute("SELECT variable_code FROM public.variables WHERE table_id = %s",
                                               (meta.table_id,))]
            loader.refresh_vintages(cur, codes)
        loader.record_tables(cur, {(meta.table_id, vintage)}, source)
        _describe_periods(cur, meta.table_id, report)


def _upsert_variables(cur: psycopg.Cursor, rows: list[tuple]) -> None:
    cur.executemany(
        """INSERT INTO public.variables (variable_code, label, concept, category, table_id, universe, vintage,
                                        vintages, label_changed, earlier_label)
           VALUES (%s, %s, %s, %s, %s, %s, %s, ARRAY[%s], %s, %s)
           ON CONFLICT (variable_code) DO UPDATE SET label = EXCLUDED.label, concept = EXCLUDED.concept,
             category = EXCLUDED.category, table_id = EXCLUDED.table_id, universe = EXCLUDED.universe,
             label_changed = EXCLUDED.label_changed, earlier_label = EXCLUDED.earlier_label""",
        [(*r[:7], r[6], r[7], r[8]) for r in rows],
    )


def _hold_variables(cur: psycopg.Cursor, data: TableData, vintage: str, category: str, hold: str) -> None:
    """``hold`` mode (see :func:`_load_table`): the release's metadata into ``sage.census_pending``; a line the
    database lacks into ``public.variables`` with ``hold`` as its only period, so the view shows none of it yet."""
    meta = data.meta
    rows = [(v.code, vintage, meta.table_id, v.label, v.concept or meta.concept, category, data.universe)
            for v in meta.variables]
    cur.executemany(
        """INSERT INTO sage.census_pending (variable_code, vintage, table_id, label, concept, category, universe)
           VALUES (%s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (variable_code, vintage) DO UPDATE SET table_id = EXCLUDED.table_id, label = EXCLUDED.label,
             concept = EXCLUDED.concept, category = EXCLUDED.category, universe = EXCLUDED.universe""",
        rows,
    )
    cur.executemany(
        """INSERT INTO public.variables (variable_code, label, concept, category, table_id, universe, vintage,
                                        vintages)
           VALUES (%s, %s, %s, %s, %s, %s, %s, ARRAY[%s]) ON CONFLICT (variable_code) DO NOTHING""",
        [(code, label, concept, cat, table, universe, hold, hold) for code, _, table, label, concept, cat, universe
         in rows],
    )


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


__all__ = [
    "TableReport",
    "geo_index",
]
