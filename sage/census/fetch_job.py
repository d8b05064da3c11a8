"""Loading ACS tables from the app and the command line, one fetch at a time per database.

:func:`sage.census.fetch.fetch_tables` does the work (one transaction per table, all or nothing per table); this
module puts two locks around it and, for the app, a worker thread:

* **One fetch at a time.**  A process-wide lock (two sessions of one app process) and a PostgreSQL advisory lock
  (two app processes, or the app and ``python -m sage census fetch``; :mod:`sage.locks`).  Neither waits: a second
  fetch is refused at once with a ``busy`` error that names who is fetching what ("B25003 (Tenure) for all states
  and counties, by the app, for 4 s").  Both are taken before anything is downloaded, so a refused fetch changes
  nothing.
* **Never in a question's way.**  The app's fetch runs in a worker thread (:func:`start_fetch`); a session
  follows it through :class:`FetchJob` (step, fraction done, the report or the error) and asks its question again
  when it is done.  Questions never wait for it: the fetch writes in its own transactions (readers are never
  blocked by PostgreSQL's row locks) and takes no lock a question takes.
* **Checked first** (:func:`check_fetch`): fetching allowed (``SAGE_ALLOW_FETCH``), a Census API key configured
  (else how to get one and where to put it), table ids that exist in the offline catalog of the vintage asked.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import psycopg

from .. import db, locks
from ..errors import CensusApiError, ErrorKind, SageError
from ..roles import Action, Role, require
from ..settings import Settings
from ..types import StepProgress
from . import fetch, fetch_rules
from .api import KEY_SIGNUP_URL, CensusClient
from .catalog_search import CATALOG_YEAR, acs_table_catalog

log = logging.getLogger(__name__)

#: how to get a key and where to put it (the card and the CLI say it when there is none)
KEY_HOW_TO = (
    f"The Census Data API needs a key: get a free one at {KEY_SIGNUP_URL}, then set CENSUS_API_KEY in the "
    "environment or in .streamlit/secrets.toml and restart the app."
)

_process_lock = threading.Lock()
_holder: _Lease | None = None  # whoever holds the process lock (for the message to whoever is refused)
_current: FetchJob | None = None  # the app's fetch this process runs


def describe_fetch(settings: Settings, tables: Sequence[str],
                   geographies: Iterable[str] = fetch_rules.GEOGRAPHIES) -> str:
    """``B25003 (Tenure) for all states and counties``: what a fetch loads, in words."""
    catalog = acs_table_catalog(settings.data_path)
    names = [f"{t} ({catalog[t]['concept']})" if t in catalog else t for t in tables]
    what = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    geos = tuple(geographies)
    where = {("state", "county"): "all states and counties", ("county", "state"): "all states and counties",
             ("state",): "all states", ("county",): "all counties"}.get(geos, " and ".join(geos))
    return f"{what} for {where}"


def button_label(settings: Settings, tables: Sequence[str],
                 geographies: Iterable[str] = fetch_rules.GEOGRAPHIES) -> str:
    """``Load table B25003 (Tenure) for all states and counties`` (``tables`` for several)."""
    return f"Load table{'s' if len(tables) > 1 else ''} {describe_fetch(settings, tables, geographies)}"


def check_fetch(settings: Settings, tables: Iterable[str], vintage: int = CATALOG_YEAR, *,
                from_app: bool = True) -> list[str]:
    """The table ids (upper-cased, checked), or the error a user can act on: fetching not allowed here (the app
    only), no Census API key, an id that is not a table (of the offline catalog, for the catalog's vintage)."""
    if from_app and not settings.fetch_allowed:
        raise SageError(
            "Loading tables from the app is turned off for this database (SAGE_ALLOW_FETCH is off; it is on by "
            "default only for the embedded database). An administrator can load it with "
            f"`{fetch_rules.fetch_command(list(tables) or ['B25003'], vintage)}`, or set SAGE_ALLOW_FETCH=1.",
            kind=ErrorKind.FETCH_DISALLOWED,
        )
    if not settings.census_api_key:
        raise CensusApiError(KEY_HOW_TO, kind=ErrorKind.MISSING_KEY)
    ids = fetch_rules.resolve_tables(list(tables))
    if int(vintage) == CATALOG_YEAR:
        catalog = acs_table_catalog(settings.data_path)
        unknown = [t for t in ids if catalog and t not in catalog]
        if unknown:
            raise CensusApiError(
                f"{', '.join(unknown)} {'is not a table' if len(unknown) == 1 else 'are not tables'} of the "
                f"{fetch_rules.vintage_label(CATALOG_YEAR)} ACS 5-year detailed tables; search the catalog "
                "(Explore, or `python -m sage census tables --search TEXT`) for the right id. Nothing was loaded.",
                kind=ErrorKind.UNKNOWN_TABLE,
            )
    return ids


# ---------------------------------------------------------------------------------------------- the locks


def _busy(what: str) -> SageError:
    return SageError(
        f"Another fetch is running: {what}. Only one table load runs at a time, so nothing was started; try again "
        "when it has finished (the new table is then loaded for everyone).",
        kind=ErrorKind.BUSY,
    )


def _tables_text(tables: Sequence[str]) -> str:
    return ",".join(tables) if len(tables) <= 3 else ",".join(tables[:3]) + f"+{len(tables) - 3}"


class _Lease:
    """Both locks of one fetch: taken (or refused) at once by :meth:`take`, released by :meth:`release` from any
    thread (the app takes them in the session's thread, the worker releases them)."""

    def __init__(self, settings: Settings, tables: Sequence[str], described: str, who: str) -> None:
        self.settings, self.tables, self.described, self.who = settings, list(tables), described, who
        self.started = time.monotonic()
        self._conn: psycopg.Connection | None = None
        self._held = False

    def summary(self) -> str:
        return f"{self.described}, by {self.who}, for {time.monotonic() - self.started:.0f} s"

    def take(self) -> None:
        global _holder
        if not _process_lock.acquire(blocking=False):
            other = _holder
            raise _busy(other.summary() if other is not None else "another session of this app is loading a table")
        self._held = True
        _holder = self
        try:
            self._conn = db.connect(self.settings, autocommit=True)
            label = f"sage fetch {_tables_text(self.tables)} by {self.who}"
            if not locks.try_lock(self._conn, locks.CENSUS_FETCH, label):
                raise _busy(_holder_text(self.settings, locks.holder(self._conn, locks.CENSUS_FETCH)))
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        global _holder
        if self._conn is not None:
            try:
                self._conn.close()  # ends the advisory lock with the session
            except Exception:  # pragma: no cover - a dead connection has released it already
                log.debug("closing the fetch lock's connection failed", exc_info=True)
            self._conn = None
        if self._held:
            self._held = False
            if _holder is self:
                _holder = None
            _process_lock.release()


def _holder_text(settings: Settings, holder: locks.Holder | None) -> str:
    """``B25003 (Tenure) ... by the command line, for 12 s`` from the lock holder's application_name."""
    if holder is None:
        return "another process has just started one"
    text = holder.what.removeprefix("sage fetch ").strip()
    tables, _, who = text.partition(" by ")
    ids = [t for t in tables.split("+")[0].split(",") if t]
    more = tables.split("+")[1] if "+" in tables else ""
    what = describe_fetch(settings, ids) if ids else "some tables"
    if more:
        what += f" and {more} more tables"
    return f"{what}, by {who or 'another process'} (process {holder.pid}), for {holder.seconds:.0f} s"


@contextmanager
def fetch_lock(settings: Settings, tables: Sequence[str], described: str, who: str) -> Iterator[None]:
    """Both locks of a fetch for the ``with`` block (``busy`` at once when another fetch, or ``census update``,
    runs); ``described`` is what the refused one is told is running."""
    lease = _Lease(settings, tables, described, who)
    lease.take()
    try:
        yield
    finally:
        lease.release()


def locked_fetch(settings: Settings, tables: Sequence[str], vintage: int = CATALOG_YEAR,
                 geographies: Iterable[str] = fetch_rules.GEOGRAPHIES, progress: StepProgress | None = None, *,
                 who: str = "the command line", client: CensusClient | None = None,
                 **kw: Any) -> fetch.FetchReport:
    """:func:`sage.census.fetch.fetch_tables` under both locks (``busy`` when another fetch runs)."""
    geos = tuple(geographies)
    with fetch_lock(settings, tables, describe_fetch(settings, tables, geos), who):
        return fetch.fetch_tables(settings, list(tables), vintage, geos, progress, client=client, **kw)


# ---------------------------------------------------------------------------------------------- the app's job


@dataclass
class FetchJob:
    """A fetch running in a worker thread of this process, as a session follows it."""

    tables: list[str]
    vintage: int
    geographies: tuple[str, ...]
    described: str
    who: str
    started: float = field(default_factory=time.monotonic)
    state: Literal["running", "done", "failed"] = "running"
    step: str = "starting"
    fraction: float = 0.0
    report: Any = None  # a fetch.FetchReport, or an update's report
    error: SageError | None = None
    finished: float | None = None
    thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self.state == "running"

    @property
    def seconds(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    def progress(self, step: str, done: int = 0, total: int = 0) -> None:
        """``fetch_tables``' progress as words and one fraction: the tables share 90 % (their description, the
        downloads, the load), the retrieval index refresh the rest."""
        part = done / total if total else 0.0
        n = max(1, len(self.tables))
        table, _, stage = step.partition(": ")
        if stage and table in self.tables:
            within = {"metadata": 0.05 * part, "download": 0.05 + 0.75 * part, "load": 0.8 + 0.2 * part}.get(stage, 0)
            value = 0.9 * (self.tables.index(table) + within) / n
            self.step = {
                "metadata": f"{table}: reading its lines",
                "download": f"{table}: downloading" + (f" ({done} of {total} requests)" if total > 1 else ""),
                "load": f"{table}: writing it to the database",
            }.get(stage, step)
        else:  # the index refresh after the loads
            value = 0.9 + 0.1 * (part if step == "embedding" else 0.5 if step == "writing the index" else 0.0)
            self.step = "updating the retrieval index"
        self.fraction = max(self.fraction, min(1.0, value))

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the worker (tests); True when it has finished."""
        if self.thread is not None:
            self.thread.join(timeout)
        return not self.running


def start_fetch(settings: Settings, tables: Iterable[str], vintage: int = CATALOG_YEAR,
                geographies: Iterable[str] = fetch_rules.GEOGRAPHIES, *, role: Role, who: str = "the app",
                client: CensusClient | None = None, **kw: Any) -> FetchJob:
    """Check the fetch (:func:`check_fetch`), take both locks (``busy`` when another fetch runs), and run it in a
    worker thread; the returned :class:`FetchJob` says how far it is and, at the end, what it loaded or why not.
    Loading tables into the shared database is a curator's action: a visitor's ``role`` is refused
    (:class:`~sage.errors.NotAllowedError`) before anything else."""
    require(role, Action.LOAD_TABLES)
    ids = check_fetch(settings, tables, vintage)
    geos = tuple(geographies)
    described = describe_fetch(settings, ids, geos)
    job = FetchJob(tables=ids, vintage=int(vintage), geographies=geos, described=described, who=who)
    return run_job(settings, job, lambda: fetch.fetch_tables(settings, ids, vintage, geos, job.progress,
                                                             client=client, **kw))


def run_job(settings: Settings, job: FetchJob, work: Callable[[], Any]) -> FetchJob:
    """Take both locks for ``job`` (``busy`` when another fetch runs) and run ``work()`` in a worker thread; its
    return value becomes ``job.report``, a :class:`SageError` ``job.error`` (``census update`` runs this way too,
    so the app follows it like a fetch)."""
    global _current
    lease = _Lease(settings, job.tables, job.described, job.who)
    lease.take()
    _current = job

    def run() -> None:
        global _current
        try:
            job.report = work()
            job.fraction = 1.0
            job.state = "done"
        except SageError as exc:
            job.error, job.state = exc, "failed"
        except Exception as exc:  # a worker must report what stopped it, never die silently
            log.warning("fetch failed", exc_info=True)
            job.error = SageError(f"Loading {job.described} failed ({type(exc).__name__}: {str(exc)[:200]}).")
            job.state = "failed"
        finally:
            job.finished = time.monotonic()
            if _current is job:
                _current = None
            lease.release()

    job.thread = threading.Thread(target=run, name="sage-census-fetch", daemon=True)
    try:
        job.thread.start()
    except BaseException:
        _current = None
        lease.release()
        raise
    return job


def current_fetch() -> FetchJob | None:
    """The fetch running in this process, if any."""
    return _current


__all__ = [
    "KEY_HOW_TO",
    "FetchJob",
    "button_label",
    "check_fetch",
    "current_fetch",
    "describe_fetch",
    "fetch_lock",
    "locked_fetch",
    "run_job",
    "start_fetch",
]
