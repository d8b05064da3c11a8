"""The catalog part of the retrieval index: one ``acs_table`` chunk per ACS table of the offline catalog
(``data/acs/variables_catalog_acs2023_5yr.csv.gz``) that is **not** loaded, so that a question about a topic the
data does not hold yet ("homeownership", "bike to work") finds the table that would answer it, and a planner can
say "load B25003" instead of guessing.

Why it is apart from :func:`sage.index.index_schema`: about 1,070 entries (measured: 45-100 s to embed on 2 cores,
more when the machine is busy) do not fit the 30 s setup budget, so setup leaves them out.  The app builds them in
a background thread once the database is ready (:func:`start_background_build`, ``SAGE_CATALOG_INDEX=background``,
the default); ``python -m sage index --catalog`` builds them from the command line.  Until they are there,
retrieval simply has no catalog entries; the Status page and ``status`` say how many are indexed and whether a
build is running.

* **Resumable.**  Entries are embedded and written in batches of :data:`BATCH`, one short transaction each, with a
  hash of the text and the model name like every chunk: a build that stops (the app restarts) loses at most one
  batch, and the next build embeds only what is missing or changed.
* **One builder per database**, whichever process: a PostgreSQL advisory lock (:mod:`sage.locks`); a second build
  is refused (``busy``) and names who is building.  Each batch is written under the index's own lock
  (:data:`sage.index.INDEX_LOCK`, as a transaction lock), re-reading which tables are loaded, so an entry is never
  written for a table that a ``census fetch`` has just loaded.
* **Out of the way of questions**: the app's build embeds on a one-thread model session of its own
  (:func:`sage.embeddings.background_provider`), so a question asked meanwhile still has a core.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import psycopg

from . import db, locks
from .census.catalog_search import acs_table_catalog
from .describe import describe_acs_table, load_aliases
from .embeddings import BUNDLED_NAME, EmbeddingProvider, background_provider, get_provider
from .errors import ErrorKind, SageError
from .index import INDEX_LOCK, content_hash, index_schema, prepare_table
from .settings import Settings
from .types import StepProgress

log = logging.getLogger(__name__)

#: entries embedded and written per transaction (the most a stopped build loses)
BATCH = 64
STEP = "indexing the ACS table catalog"

#: the tables of public.variables with estimates in any period: one probe of the estimates' index (variable_code
#: first) per variable, never a scan of the estimates, and not through the view public.estimates (which would join
#: public.variables again for the latest period)
_LOADED_SQL = """
SELECT DISTINCT v.table_id FROM public.variables v
WHERE EXISTS (SELECT FROM public.estimates_by_vintage e WHERE e.variable_code = v.variable_code)
"""


def loaded_table_ids(conn: psycopg.Connection) -> set[str]:
    """The ACS tables that have estimates in the database, in any period (empty before setup)."""
    if db.scalar(conn, "SELECT to_regclass('public.estimates_by_vintage')") is None:
        return set()
    return {r[0] for r in conn.execute(_LOADED_SQL).fetchall()}


def catalog_chunks(settings: Settings, loaded: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(table id, text) of every table of the offline catalog that is not in ``loaded``, in id order."""
    skip = set(loaded)
    aliases = load_aliases()
    catalog = acs_table_catalog(settings.data_path)
    return [(t, describe_acs_table(catalog[t], aliases)) for t in sorted(catalog) if t not in skip]


@dataclass
class CatalogReport:
    """What :func:`index_catalog` did."""

    upserted: int = 0  # entries embedded and written
    unchanged: int = 0  # entries already indexed with this text and model
    deleted: int = 0  # entries of tables now loaded (or no longer in the catalog)
    skipped_loaded: int = 0  # entries not written because their table was loaded during the build
    entries: int = 0  # catalog entries the index holds afterwards
    seconds: float = 0.0
    model: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["seconds"] = round(self.seconds, 3)
        return out


def _busy(holder: locks.Holder | None) -> SageError:
    who = f" ({holder.what}, for {holder.seconds:.0f} s)" if holder and holder.what else ""
    return SageError(
        f"The ACS table catalog is already being indexed{who}; it carries on where it is, so there is nothing to "
        "start. The Status page shows its progress.",
        kind=ErrorKind.BUSY,
    )


def index_catalog(
    settings: Settings,
    *,
    progress: StepProgress | None = None,
    provider: EmbeddingProvider | None = None,
    rebuild: bool = False,
    tables: Iterable[str] | None = None,
    who: str = "the command line",
) -> CatalogReport:
    """Bring the catalog entries of ``sage.schema_embeddings`` up to date: embed the not-loaded tables that are
    missing or changed, delete the entries of tables that are loaded (or gone from the catalog).

    ``tables`` limits the work to those table ids (nothing else is added or deleted); ``rebuild`` re-embeds every
    entry.  Raises a ``busy`` :class:`SageError` when another process is building; the index of the schema and
    variables must exist (``python -m sage setup``), and is brought up to date first when its vector size is not
    the model's.
    """
    started = time.perf_counter()
    progress = progress or (lambda *a: None)
    provider = provider or get_provider(settings)
    only = {t.strip().upper() for t in tables} if tables is not None else None
    report = CatalogReport(model=provider.name)
    # a connection of its own, not a pool slot: the build holds it (and the lock, which ends when it closes) for
    # minutes, and questions must not wait for a pooled connection meanwhile
    with db.connect(settings, autocommit=True) as conn:
        db.require_setup(conn)
        if not locks.try_lock(conn, locks.CATALOG_INDEX, f"sage catalog index by {who}"):
            raise _busy(locks.holder(conn, locks.CATALOG_INDEX))
        typed = prepare_table(conn, provider.dimension)
        if typed is not None and typed != provider.dimension:
            index_schema(settings, provider=provider, progress=progress)  # retypes the vector column
        db.ensure_vector(conn)
        loaded = loaded_table_ids(conn)
        wanted = [(t, c) for t, c in catalog_chunks(settings, loaded) if only is None or t in only]
        existing = {
            r: (h, m, d)
            for r, h, m, d in conn.execute(
                "SELECT object_ref, content_hash, model, dimension FROM sage.schema_embeddings "
                "WHERE object_type = 'acs_table'"
            ).fetchall()
        }
        want_refs = {t for t, _ in wanted}
        stale = [r for r in existing if r not in want_refs and (only is None or r in only)]
        todo = [(t, c) for t, c in wanted
                if rebuild or existing.get(t) != (content_hash(c), provider.name, provider.dimension)]
        report.unchanged = len(wanted) - len(todo)
        if stale:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (INDEX_LOCK,))
                conn.execute("DELETE FROM sage.schema_embeddings WHERE object_type = 'acs_table' "
                             "AND object_ref = ANY(%s)", (stale,))
            report.deleted = len(stale)
        import numpy as np

        progress(STEP, 0, len(todo))
        for start in range(0, len(todo), BATCH):
            batch = todo[start : start + BATCH]
            vectors = provider.embed([c for _, c in batch])
            with conn.transaction():
                # the index's writers take turns; a table loaded meanwhile gets no catalog entry
                conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (INDEX_LOCK,))
                now_loaded = loaded_table_ids(conn)
                rows = [(t, c, content_hash(c), provider.name, provider.dimension, np.asarray(v, dtype=np.float32))
                        for (t, c), v in zip(batch, vectors, strict=True) if t not in now_loaded]
                report.skipped_loaded += len(batch) - len(rows)
                with conn.cursor() as cur:
                    cur.executemany(
                        """INSERT INTO sage.schema_embeddings
                               (object_type, object_ref, content, content_hash, model, dimension, embedding)
                           VALUES ('acs_table', %s, %s, %s, %s, %s, %s)
                           ON CONFLICT (object_type, object_ref) DO UPDATE
                           SET content = EXCLUDED.content, content_hash = EXCLUDED.content_hash,
                               model = EXCLUDED.model, dimension = EXCLUDED.dimension,
                               embedding = EXCLUDED.embedding, indexed_at = now()""",
                        rows,
                    )
            report.upserted += len(rows)
            progress(STEP, min(start + BATCH, len(todo)), len(todo))
        report.entries = int(db.scalar(
            conn, "SELECT count(*) FROM sage.schema_embeddings WHERE object_type = 'acs_table' AND model = %s",
            (provider.name,)))
    report.seconds = time.perf_counter() - started
    log.info("catalog index: %s", report.to_dict())
    return report


# ---------------------------------------------------------------------------------------------- status


@dataclass
class CatalogStatus:
    """The catalog part of the index: entries indexed (with the current model) out of the tables not loaded,
    whether a build runs (in any process: ``builder`` says which), and this process's build progress."""

    entries: int = 0
    expected: int = 0
    building: bool = False
    builder: str | None = None
    done: int | None = None
    total: int | None = None
    error: str | None = None
    mode: str = "background"

    @property
    def complete(self) -> bool:
        return self.expected > 0 and self.entries >= self.expected

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def catalog_status(settings: Settings, *, model: str | None = None) -> CatalogStatus:
    """How complete the catalog part of the index is, and who is building it (never raises for a database that
    is not set up: everything is 0)."""
    model = model or settings.embedding_model or BUNDLED_NAME
    out = CatalogStatus(mode=settings.catalog_index)
    with db.owner(settings) as conn:
        loaded = loaded_table_ids(conn)
        out.expected = len(set(acs_table_catalog(settings.data_path)) - loaded) if loaded else 0
        if db.scalar(conn, "SELECT to_regclass('sage.schema_embeddings')") is not None:
            out.entries = int(db.scalar(
                conn, "SELECT count(*) FROM sage.schema_embeddings WHERE object_type = 'acs_table' AND model = %s",
                (model,)))
        holder = locks.holder(conn, locks.CATALOG_INDEX)
    if holder is not None:
        out.building, out.builder = True, holder.what
    state = _state(settings)
    if state is not None:
        out.done, out.total, out.error = state.done, state.total, state.error
    return out


# ---------------------------------------------------------------------------------------------- background


@dataclass
class _Build:
    thread: threading.Thread | None = None
    done: int = 0
    total: int = 0
    error: str | None = None
    report: dict = field(default_factory=dict)


_builds: dict[str, _Build] = {}
_builds_lock = threading.Lock()


def _key(settings: Settings) -> str:
    return db.admin_url(settings)


def _state(settings: Settings) -> _Build | None:
    try:
        key = _key(settings)
    except SageError:
        return None
    with _builds_lock:
        return _builds.get(key)


def start_background_build(settings: Settings, *, provider: EmbeddingProvider | None = None,
                           who: str = "the app", force: bool = False) -> bool:
    """Build the catalog part of the index in a daemon thread of this process, unless a build of this process is
    running or ``SAGE_CATALOG_INDEX`` is ``off`` (``force``: a user asked, build anyway).  A complete catalog
    costs one quick pass; when another process holds the build, the thread ends at once.  True when a thread was
    started."""
    if settings.catalog_index == "off" and not force:
        return False
    key = _key(settings)
    with _builds_lock:
        state = _builds.get(key)
        if state is not None and state.thread is not None and state.thread.is_alive():
            return False
        state = _builds[key] = _Build()

        def progress(step: str, done: int = 0, total: int = 0) -> None:
            if step == STEP:
                state.done, state.total = done, total

        def work() -> None:
            try:
                state.report = index_catalog(settings, progress=progress, who=who,
                                             provider=provider or background_provider(settings)).to_dict()
            except SageError as exc:
                if exc.kind != ErrorKind.BUSY:  # another process builds it: nothing wrong
                    state.error = exc.message
                    log.warning("catalog index: %s", exc.message)
            except Exception as exc:  # a background job must say what stopped it, not die silently
                state.error = f"{type(exc).__name__}: {str(exc)[:200]}"
                log.warning("catalog index failed", exc_info=True)

        state.thread = threading.Thread(target=work, name="sage-catalog-index", daemon=True)
        state.thread.start()
    return True


def wait_for_background_build(settings: Settings, timeout: float | None = None) -> bool:
    """Wait for this process's build (tests, benchmarks); True when none is running any more."""
    state = _state(settings)
    if state is None or state.thread is None:
        return True
    state.thread.join(timeout)
    return not state.thread.is_alive()


__all__ = [
    "BATCH",
    "CatalogReport",
    "CatalogStatus",
    "catalog_chunks",
    "catalog_status",
    "index_catalog",
    "loaded_table_ids",
    "start_background_build",
    "wait_for_background_build",
]
