"""`python -m sage census update`: bring every loaded table to the newest ACS 5-year release in one job.

The Census Bureau publishes a 5-year release every December.  This finds the newest one the Census Data API offers
(its dataset discovery, :meth:`sage.census.api.CensusClient.releases`, or the year asked), plans what a fetch of it
means here — every table and geography level ``public.estimates`` shows now, with the states a level was limited to
(:func:`plan_update`) — and runs the plan (:func:`run_update`).  The rules, and why:

* **Never a mix.**  Questions read ``public.estimates``, each variable's latest period (``public.variables.vintage``).
  Each table is fetched into ``public.estimates_by_vintage`` under the new period with ``hold`` (one transaction
  per table, :func:`sage.census.fetch.fetch_tables`), which leaves ``public.variables`` alone: the new rows are
  there, but no variable names their period yet, so every question keeps the previous latest period.  Only when
  the last table is in does :func:`switch` move every updated variable to the new period, in one transaction, with
  the labels, concepts and universes of the release (waiting in ``sage.census_pending``).  Earlier periods stay.
* **Resumable.**  An interruption (the API down half-way, a key revoked, the process killed) leaves the tables
  loaded so far in place, still held; running the update again skips every table (and group of levels) that
  already has rows of the new period at all its levels, and switches when the rest is in.
* **One job at a time.**  The locks of ``census fetch`` (:func:`sage.census.fetch_job.fetch_lock`): a fetch or an
  update elsewhere refuses this one at once, naming it, and this one refuses them.
* **Checked first, nothing touched on a refusal**: a Census API key; a vintage between 2009 and the newest
  release published (not a year in the future, not the latest period already loaded, not an earlier one — that is
  ``census fetch``'s job); an R-CPI-U-RS index for the new end year in ``data/cpi`` (without it dollars of the new
  period could not be compared with earlier ones: refused, never guessed); every loaded table in the release.
* **Flags.**  A variable whose Census label (compared as :func:`sage.census.fetch_rules.label_key` does) or
  universe differs between the previous latest period and the new one gets ``label_changed`` with the previous
  label in ``earlier_label`` (and the previous universe after it), as "Worked at home" / "Worked from home" is.

After the switch the semantic layer and the retrieval index are refreshed, as after a fetch.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import psycopg

from .. import db
from ..errors import CensusApiError, DataError, ErrorKind, SageError
from ..roles import Action, Role, require
from ..settings import Settings
from ..types import StepProgress
from . import cpi, fetch, fetch_job, fetch_rules, loader, migrate, periods
from .api import CensusClient
from .catalog_search import acs_table_catalog
from .fetch_rules import label_key, vintage_label
from .schema import LEVELS, PENDING_DDL, STATE_LEVELS

log = logging.getLogger(__name__)

#: inside-state levels whose states are carried over (the state level itself is always fetched whole)
_WITHIN = tuple(level for level in STATE_LEVELS if level != "state")


@dataclass(frozen=True)
class UpdateItem:
    """One fetch of the plan: a table at some of its levels (``states``: the USPS abbreviations those levels were
    limited to, None for all), how big it is now, and whether the new period is already loaded for it."""

    table_id: str
    concept: str
    levels: tuple[str, ...]
    states: tuple[str, ...] | None
    variables: int
    places: int
    done: bool = False

    @property
    def rows(self) -> int:
        """Rows the fetch is expected to load: lines times places, as loaded now (a release may add a line)."""
        return self.variables * self.places

    def describe(self) -> str:
        where = ", ".join(self.levels) + (f" in {','.join(self.states)}" if self.states else "")
        return f"{self.table_id} ({self.concept}): {where}"


@dataclass(frozen=True)
class UpdatePlan:
    """What ``census update`` would do (``--dry-run`` prints it)."""

    year: int
    vintage: str
    #: the latest period questions read now (None in an empty database)
    latest: str | None
    #: how the year was chosen: "newest release" (dataset discovery) or "asked" (``--vintage``)
    chosen: str
    #: the ACS 5-year releases the API lists, ascending
    releases: tuple[int, ...]
    items: tuple[UpdateItem, ...]
    #: the loaded tables whose latest period is not yet the new one (none: up to date)
    behind: tuple[str, ...] = ()

    @property
    def todo(self) -> tuple[UpdateItem, ...]:
        return tuple(i for i in self.items if not i.done)

    @property
    def rows(self) -> int:
        return sum(i.rows for i in self.todo)

    @property
    def tables(self) -> list[str]:
        return list(dict.fromkeys(i.table_id for i in self.items))

    @property
    def up_to_date(self) -> bool:
        return not self.behind

    def to_dict(self) -> dict[str, Any]:
        return {
            "year": self.year, "vintage": self.vintage, "latest": self.latest, "chosen": self.chosen,
            "releases": list(self.releases), "up_to_date": self.up_to_date, "behind": list(self.behind),
            "rows": self.rows,
            "items": [{**asdict(i), "rows": i.rows} for i in self.items],
        }

    def summary(self) -> str:
        if self.up_to_date:
            return f"Up to date: {self.vintage} (the {self.chosen} {self.year}) is already the latest period loaded."
        head = (f"ACS 5-year {self.vintage} (the {self.chosen}, {self.year}); questions read {self.latest or 'nothing'}"
                f" now. {len(self.todo)} of {len(self.items)} fetches to run, about {self.rows:,} rows:")
        lines = [head]
        for i in self.items:
            state = ("already loaded, skipped" if i.done
                     else f"{i.places:,} places x {i.variables} lines ~ {i.rows:,} rows")
            lines.append(f"  {i.describe()} — {state}")
        return "\n".join(lines)


@dataclass
class SwitchReport:
    """The final transaction: the variables moved to the new period, and those flagged."""

    vintage: str
    previous: str | None
    variables: int = 0
    labels_changed: list[str] = field(default_factory=list)
    universes_changed: list[str] = field(default_factory=list)
    #: lines of an updated table the new release no longer has: they keep their earlier period
    dropped: list[str] = field(default_factory=list)


@dataclass
class UpdateReport:
    """What ``census update`` did."""

    plan: UpdatePlan
    fetches: list[dict] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    switch: SwitchReport | None = None
    index: dict = field(default_factory=dict)
    semantic: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def rows(self) -> int:
        return sum(f["rows"] for f in self.fetches)

    def to_dict(self) -> dict[str, Any]:
        return {"plan": self.plan.to_dict(), "fetches": self.fetches, "skipped": self.skipped,
                "switch": asdict(self.switch) if self.switch else None, "rows": self.rows, "index": self.index,
                "semantic": self.semantic, "seconds": round(self.seconds, 3)}

    def summary(self) -> str:
        plan = self.plan
        if plan.up_to_date and self.switch is None:
            return plan.summary()
        lines = [f"Updated to ACS 5-year {plan.vintage}: {len(self.fetches)} fetches, {self.rows:,} rows, "
                 f"{len(self.skipped)} already loaded, in {self.seconds:.1f} s."]
        if self.switch is not None:
            s = self.switch
            lines.append(f"{s.variables:,} variables now read {s.vintage}"
                         + (f" (was {s.previous}; earlier periods stay for change questions)." if s.previous else "."))
            if s.labels_changed:
                lines.append(f"Label changed since {s.previous}: {', '.join(s.labels_changed[:8])}"
                             + (" ..." if len(s.labels_changed) > 8 else ""))
            if s.universes_changed:
                lines.append(f"Universe changed since {s.previous}: {', '.join(s.universes_changed[:8])}"
                             + (" ..." if len(s.universes_changed) > 8 else ""))
            if s.dropped:
                lines.append(f"Not in the {plan.vintage} release (kept at their earlier period): "
                             f"{', '.join(s.dropped[:8])}" + (" ..." if len(s.dropped) > 8 else ""))
        if self.index.get("status") and self.index.get("status") != "refreshed":
            lines.append(f"Retrieval index: {self.index.get('status')} — {self.index.get('message', '')}")
        if self.semantic.get("status") == "failed":
            lines.append(f"Semantic layer: failed — {self.semantic.get('message', '')}")
        return "\n".join(lines)


class UpdateError(SageError):
    """``census update`` stopped before the switch; ``report`` says what was loaded (it stays, held)."""

    def __init__(self, message: str, *, report: UpdateReport, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.report = report


# ---------------------------------------------------------------------------------------------- choosing the year


def newest_release(client: CensusClient) -> tuple[int, list[int]]:
    """The newest ACS 5-year release the API lists, and all of them."""
    years = client.releases()
    return years[-1], years


def _choose_year(vintage: int | None, releases: list[int]) -> tuple[int, str]:
    if vintage is None:
        return releases[-1], "newest release"
    year = fetch_rules._check_vintage(vintage)
    if year > releases[-1]:
        raise CensusApiError(
            f"The ACS 5-year {vintage_label(year)} ({year}) is not published yet: the newest release the Census "
            f"Data API lists is {vintage_label(releases[-1])} ({releases[-1]}). Nothing was loaded.",
            kind=ErrorKind.INVALID_ARGUMENT,
        )
    if year not in releases:
        raise CensusApiError(f"The Census Data API lists no ACS 5-year release for {year}. Nothing was loaded.",
                             kind=ErrorKind.NOT_FOUND)
    return year, "release asked"


def check_cpi(settings: Settings, year: int) -> None:
    """Refuse a release whose end year the CPI table lacks: its dollars could not be compared with earlier
    periods' (never guessed)."""
    table = cpi.load(settings.data_path)
    if year not in table.values:
        raise DataError(
            f"The CPI table has no {year} index; dollars cannot be compared between {vintage_label(year)} and "
            f"earlier periods. Add the R-CPI-U-RS annual average for {year} from its source (see "
            f"data/cpi/SOURCE.md) to data/cpi/{cpi.CPI_FILE}, run `python -m sage setup`, then update. Nothing "
            "was loaded.",
            kind=ErrorKind.CPI_YEAR_MISSING,
        )


# ---------------------------------------------------------------------------------------------- the plan


def _table_periods(conn: psycopg.Connection, vintage: str) -> tuple[str | None, list[str]]:
    """The latest period questions read before ``vintage`` (the newest latest period of a table that is older than
    it; None in an empty database), and the tables whose latest period is not ``vintage`` yet."""
    latest_of: dict[str, str] = dict(conn.execute("SELECT table_id, max(vintage) FROM public.variables v WHERE EXISTS "
                                  "(SELECT FROM public.estimates e WHERE e.variable_code = v.variable_code) "
                                  "GROUP BY table_id").fetchall())
    older = [p for p in latest_of.values() if periods.bounds(p)[1] < periods.bounds(vintage)[1]]
    latest = max(older, key=periods.bounds) if older else (max(latest_of.values(), key=periods.bounds)
                                                           if latest_of else None)
    return latest, sorted(t for t, p in latest_of.items() if p != vintage)



def _loaded(conn: psycopg.Connection, year: int, lines: dict[str, int] | None = None) -> list[UpdateItem]:
    """Every table and level ``public.estimates`` shows now, with whether the ``year`` release is already loaded
    for them (rows of its period at each level).

    A level inside states that covers fewer than half of them was fetched with ``--states`` (tracts of Texas): it
    is fetched again for those states, in a fetch of its own; otherwise the whole level is fetched (a shipped extract
    that lacks a few states' values gets them).  ``lines``: the number of lines of each table (the offline catalog;
    a shipped extract holds a few lines of a table, a fetch loads them all), for the row estimates."""
    lines = lines or {}
    vintage = vintage_label(year)
    all_states = {r[0]: r[1] for r in conn.execute(
        "SELECT state_fips, state_abbr FROM public.geography WHERE level = 'state'")}
    # places per level and state in the geography: what a fetch of the level returns, about
    per_state: dict[tuple[str, str | None], int] = {
        (r[0], r[1]): r[2] for r in conn.execute(
            "SELECT level, state_fips, count(*) FROM public.geography GROUP BY 1, 2")}
    shown = conn.execute(
        """SELECT v.table_id, min(v.concept), g.level, count(DISTINCT v.variable_code), count(DISTINCT g.geo_id),
                  array_agg(DISTINCT g.state_fips) FILTER (WHERE g.state_fips IS NOT NULL)
           FROM public.estimates e JOIN public.variables v USING (variable_code)
           JOIN public.geography g ON g.geo_id = e.geo_id
           GROUP BY v.table_id, g.level""").fetchall()
    have = {(r[0], r[1]): set(r[2] or []) for r in conn.execute(
        """SELECT v.table_id, g.level, array_agg(DISTINCT g.state_fips) FILTER (WHERE g.state_fips IS NOT NULL)
           FROM public.estimates_by_vintage e JOIN public.variables v USING (variable_code)
           JOIN public.geography g ON g.geo_id = e.geo_id WHERE e.vintage = %s GROUP BY 1, 2""", (vintage,))}
    groups: dict[tuple[str, tuple[str, ...] | None], dict[str, Any]] = {}
    for table_id, concept, level, variables, places, states in shown:
        fips = set(states or [])
        partial = level in _WITHIN and fips and 2 * len(fips) < len(all_states)
        key = (table_id, tuple(sorted(fips)) if partial else None)
        g = groups.setdefault(key, {"concept": concept, "levels": [], "variables": 0, "places": 0})
        g["levels"].append(level)
        g["variables"] = max(g["variables"], variables, lines.get(table_id, 0))
        g["places"] += sum(n for (lv, st), n in per_state.items()
                           if lv == level and (not partial or st in fips)) or places
    items = []
    for (table_id, within), g in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] or ())):
        levels = tuple(sorted(g["levels"], key=LEVELS.index))
        done = all((table_id, level) in have and (within is None or level not in _WITHIN
                                                  or set(within) <= have[(table_id, level)]) for level in levels)
        abbrs = tuple(sorted(all_states[f] for f in within)) if within else None
        items.append(UpdateItem(table_id=table_id, concept=g["concept"], levels=levels, states=abbrs,
                                variables=g["variables"], places=g["places"], done=done))
    return items


def _lines(settings: Settings) -> dict[str, int]:
    return {t: entry["variables"] for t, entry in acs_table_catalog(settings.data_path).items()}


def plan_update(settings: Settings, vintage: int | None = None, *, client: CensusClient | None = None,
                check_tables: bool = True) -> UpdatePlan:
    """What ``census update`` would fetch: the newest release (or ``vintage``) and every loaded table and level.

    Refuses, before anything is loaded: no key; a vintage before 2009, in the future, or not after the latest
    period loaded; a year the CPI table lacks; (``check_tables``) a loaded table the release does not have.  The
    API being down is the API's error (``network``, ``unavailable``...)."""
    if not settings.census_api_key:
        raise CensusApiError(fetch_job.KEY_HOW_TO, kind=ErrorKind.MISSING_KEY)
    if vintage is not None:
        fetch_rules._check_vintage(vintage)
    client = client or CensusClient.from_settings(settings)
    _, releases = newest_release(client)
    year, chosen = _choose_year(vintage, releases)
    with db.owner(settings) as conn:
        db.require_setup(conn)
        migrate.require_current(conn)
        newest = periods.latest_period(conn)
        latest, behind = _table_periods(conn, vintage_label(year))
        items = _loaded(conn, year, _lines(settings))
    plan = UpdatePlan(year=year, vintage=vintage_label(year), latest=latest, chosen=chosen,
                      releases=tuple(releases), items=tuple(items), behind=tuple(behind))
    if newest is not None and periods.bounds(newest)[1] > year:
        raise CensusApiError(
            f"{plan.vintage} is older than the latest period loaded ({newest}): `census update` only moves to a newer "
            f"release. Load an earlier period beside it with `python -m sage census fetch --vintage {year} --tables "
            "...`.", kind=ErrorKind.INVALID_ARGUMENT)
    if plan.up_to_date:
        return plan
    check_cpi(settings, year)
    if check_tables:
        missing = []
        for table_id in dict.fromkeys(i.table_id for i in plan.todo):
            try:
                client.table_meta(year, table_id)
            except CensusApiError as exc:
                if exc.kind not in (ErrorKind.UNKNOWN_TABLE, ErrorKind.NOT_FOUND):
                    raise
                missing.append(table_id)
        if missing:
            raise CensusApiError(
                f"The {plan.vintage} release has no table {', '.join(missing)}, which this database has loaded: "
                f"`census update` makes {plan.vintage} the latest period of every loaded table at once, so it cannot "
                f"run. The database keeps {latest} for every table; nothing was loaded.",
                kind=ErrorKind.UNKNOWN_TABLE)
    return plan


# ---------------------------------------------------------------------------------------------- running it


def run_update(settings: Settings, plan: UpdatePlan, progress: StepProgress | None = None, *,
               client: CensusClient | None = None, **fetch_kw: Any) -> UpdateReport:
    """Fetch what ``plan`` lists (one table per transaction, held), then :func:`switch`; call it under the fetch
    locks (:func:`update` does).  A failure stops it before the switch: :class:`UpdateError` (its ``kind`` the
    failure's) says what was loaded, kept for the next run, and that questions still read the previous period."""
    progress = progress or (lambda *a: None)
    client = client or CensusClient.from_settings(settings)
    started = time.perf_counter()
    report = UpdateReport(plan=plan)
    if plan.up_to_date:
        return report
    with db.owner(settings) as conn:
        conn.execute(PENDING_DDL)
        current = {(i.table_id, i.levels, i.states): i.done for i in _loaded(conn, plan.year, _lines(settings))}
    hold = plan.latest or plan.vintage
    todo = [i for i in plan.items if not current.get((i.table_id, i.levels, i.states), i.done)]
    report.skipped = [i.describe() for i in plan.items if i not in todo]
    for n, item in enumerate(todo, 1):
        progress(f"update {plan.vintage}: {item.table_id} ({n} of {len(todo)})", n - 1, len(todo))
        try:
            got = fetch.fetch_tables(settings, [item.table_id], plan.year, item.levels, progress,
                                     states=item.states, client=client, refresh_index=False, hold=hold, **fetch_kw)
        except SageError as exc:
            report.seconds = time.perf_counter() - started
            loaded = len(report.fetches)
            raise UpdateError(
                f"{exc.message} The update to {plan.vintage} stopped at {item.table_id} ({loaded} of {len(todo)} "
                f"fetches done{', ' + str(len(report.skipped)) + ' loaded before' if report.skipped else ''}). "
                f"Questions still read {plan.latest} for every table; run `python -m sage census update` again to "
                "resume (what is loaded is kept).",
                kind=exc.kind, detail=exc.detail, report=report) from exc
        report.fetches.append({"table_id": item.table_id, "levels": list(item.levels),
                               "states": list(item.states) if item.states else None, "rows": got.rows,
                               "seconds": round(got.seconds, 3)})
    progress(f"update {plan.vintage}: switching every table", 0, 1)
    with db.owner(settings) as conn:
        report.switch = switch(conn, plan.vintage, plan.tables, plan.latest)
    progress(f"update {plan.vintage}: switching every table", 1, 1)
    report.semantic = fetch._refresh_semantic(settings)
    report.index = fetch._refresh_index(settings, progress)
    report.seconds = time.perf_counter() - started
    return report


def switch(conn: psycopg.Connection, vintage: str, tables: list[str], previous: str | None) -> SwitchReport:
    """Make ``vintage`` the latest period of every variable of ``tables`` that has rows of it, in one transaction
    (``conn`` in autocommit mode), with the release's labels, concepts and universes; flag those that changed."""
    out = SwitchReport(vintage=vintage, previous=previous)
    with conn.transaction():
        cur = conn.cursor()
        cur.execute("LOCK TABLE sage.census_tables IN SHARE ROW EXCLUSIVE MODE")
        rows = cur.execute(
            """SELECT p.variable_code, p.label, p.concept, p.category, p.universe, v.label, v.universe,
                      v.label_changed, v.earlier_label,
                      EXISTS (SELECT FROM public.estimates_by_vintage e
                              WHERE e.variable_code = p.variable_code AND e.vintage <> p.vintage)
               FROM sage.census_pending p JOIN public.variables v USING (variable_code)
               WHERE p.vintage = %s AND p.table_id = ANY(%s)""", (vintage, tables)).fetchall()
        updates = []
        for code, label, concept, category, universe, old_label, old_universe, flag, earlier, had_rows in rows:
            if had_rows:  # a line with an earlier period: compare the release with it
                relabelled = label_key(old_label) != label_key(label)
                reuniversed = _universe_key(old_universe) != _universe_key(universe)
                if relabelled:
                    out.labels_changed.append(code)
                if reuniversed:
                    out.universes_changed.append(code)
                if relabelled or reuniversed:
                    flag = True
                    earlier = old_label + (f" (universe: {old_universe})" if reuniversed and old_universe else "")
            updates.append((label, concept, category, universe, flag, earlier, code))
        cur.executemany(
            """UPDATE public.variables SET label = %s, concept = %s, category = %s, universe = %s,
                      label_changed = %s, earlier_label = %s WHERE variable_code = %s""", updates)
        # released first: refresh_vintages leaves out what sage.census_pending still holds
        cur.execute("DELETE FROM sage.census_pending WHERE vintage = %s AND table_id = ANY(%s)", (vintage, tables))
        codes = [r[0] for r in cur.execute("SELECT variable_code FROM public.variables WHERE table_id = ANY(%s)",
                                           (tables,))]
        loader.refresh_vintages(cur, codes)
        out.variables = len(updates)
        out.dropped = sorted(r[0] for r in cur.execute(
            "SELECT variable_code FROM public.variables WHERE table_id = ANY(%s) AND vintage <> %s",
            (tables, vintage)))
    conn.execute("ANALYZE public.variables, public.estimates_by_vintage")
    return out


def _universe_key(universe: str | None) -> str:
    return " ".join((universe or "").lower().split())


def describe_update(plan: UpdatePlan) -> str:
    """``the 2020-2024 release of 21 tables``: what the lock holder's message names."""
    n = len(plan.tables)
    return f"the {plan.vintage} release of {n} table{'s' if n != 1 else ''}"


def update(settings: Settings, vintage: int | None = None, progress: StepProgress | None = None, *,
           dry_run: bool = False, who: str = "the command line", client: CensusClient | None = None,
           **fetch_kw: Any) -> UpdatePlan | UpdateReport:
    """``census update``: the plan (``dry_run``), or the plan run under the fetch locks."""
    plan = plan_update(settings, vintage, client=client)
    if dry_run or plan.up_to_date:
        return plan
    with fetch_job.fetch_lock(settings, plan.tables, describe_update(plan), who):
        return run_update(settings, plan, progress, client=client, **fetch_kw)


def start_update(settings: Settings, vintage: int | None = None, *, role: Role, who: str = "the app",
                 client: CensusClient | None = None, **fetch_kw: Any) -> fetch_job.FetchJob:
    """The update in a worker thread (the app's button), followed like a fetch (:class:`FetchJob`): checked and
    planned first (a refusal raises here), the locks taken (``busy`` when a fetch runs).  Loading tables is a
    curator's action: a visitor's ``role`` is refused before anything else."""
    require(role, Action.LOAD_TABLES)
    if not settings.fetch_allowed:
        raise SageError("Loading tables from the app is turned off for this database (SAGE_ALLOW_FETCH is off). An "
                        "administrator can update it with `python -m sage census update`, or set SAGE_ALLOW_FETCH=1.",
                        kind=ErrorKind.FETCH_DISALLOWED)
    plan = plan_update(settings, vintage, client=client)
    job = fetch_job.FetchJob(tables=plan.tables, vintage=plan.year, geographies=(), described=describe_update(plan),
                             who=who)

    def work() -> UpdateReport:
        return run_update(settings, plan, job.progress, client=client, **fetch_kw)

    return fetch_job.run_job(settings, job, work)


__all__ = ["SwitchReport", "UpdateError", "UpdateItem", "UpdatePlan", "UpdateReport", "check_cpi",
           "describe_update", "newest_release", "plan_update", "run_update", "start_update", "switch", "update"]
