"""Resources cached per process (settings, the planner, the database's readiness) and the first-run setup."""

from __future__ import annotations

import logging
import threading
from typing import Any

import streamlit as st

from sage import agent, db
from sage.catalog_index import catalog_status, start_background_build
from sage.census.setup import run_setup
from sage.errors import ErrorKind, SageError
from sage.planner.base import Planner
from sage.retrieve import retrieve
from sage.settings import Settings, load_settings

from .errors import show_error
from .text import md

log = logging.getLogger(__name__)


@st.cache_resource(show_spinner=False)
def get_settings() -> Settings:
    """Settings from the environment and ``.streamlit/secrets.toml``, read once per process."""
    return load_settings()


def settings_or_stop() -> Settings:
    """The settings, or a readable error and ``st.stop()`` when a setting is unusable."""
    try:
        return get_settings()
    except SageError as exc:
        st.error(f"**The settings cannot be used.** {md(exc.message)}")
        st.stop()
        raise  # st.stop() raises; this keeps type checkers calm


@st.cache_resource(show_spinner=False)
def _setup_state(_settings: Settings, key: int) -> dict[str, Any]:
    """Per-process readiness of one database (shared by every session): set up once, then never checked again."""
    return {"ready": False, "lock": threading.Lock(), "report": None}


def ensure_ready(settings: Settings) -> None:
    """Make sure the database is set up; the first start shows each setup step and the rows loaded.

    Later starts on a warm data directory only check that setup is complete (:func:`sage.db.is_set_up`, one
    statement), so the page appears quickly; ``python -m sage setup`` re-runs the full, idempotent setup.
    """
    state = _setup_state(settings, hash(settings))
    if state["ready"]:
        return
    with state["lock"]:
        if state["ready"]:
            return
        try:
            if db.run(settings, db.OWNER, db.is_set_up):  # one cheap statement
                state["ready"] = True
                _warm_up(settings)
                return
        except SageError as exc:
            if exc.kind in (ErrorKind.DATABASE_DOWN, ErrorKind.SETTINGS, ErrorKind.DATA_DIR):
                show_error(exc)
                st.stop()
        box = st.status("Preparing the census database (first start)…", expanded=True)
        bar = box.progress(0.0, text="Starting")
        lines: list[str] = []

        def progress(step: str, done: int = 0, total: int = 0) -> None:
            if total and done >= total and step not in lines:
                lines.append(step)
                box.markdown(f"✓ {md(step)}")
            fraction = min(1.0, len(lines) / 5)
            count = f" ({done:,}/{total:,})" if total > 1 else ""
            bar.progress(fraction, text=f"{step[:1].upper()}{step[1:]}{count}")

        try:
            report = run_setup(settings, progress=progress)
        except SageError as exc:
            box.update(label="The census database could not be prepared", state="error", expanded=True)
            show_error(exc)
            st.stop()
        rows = ", ".join(f"{name.split('.')[-1]} {n:,}" for name, n in report.rows.items())
        box.markdown(f"Rows loaded: {md(rows)}")
        if report.admin_sql:
            box.warning("The read-only role could not be created with this login; ask an administrator to run:")
            box.code(report.admin_sql, language="sql")
        box.update(label=f"Census database ready ({report.seconds:.1f} s)", state="complete", expanded=False)
        state["report"] = report.to_dict()
        state["ready"] = True
        _warm_up(settings)


def _warm_up(settings: Settings) -> None:
    """Load the embedding model, the planner, the guard and the reader's connection in the background, so the
    first question is as fast as the rest; then index the ACS table catalog in the background when it is not
    complete (``SAGE_CATALOG_INDEX``; :mod:`sage.catalog_index`)."""

    def work() -> None:
        try:
            planner = agent.make_planner(settings)  # sage caches it per settings; get_planner() finds it built
            # the embedding model: a question only loads it when it needs retrieval, and then it is ready
            retrieve(settings, "population of Ohio", top_k=3)
            if planner.name == "offline":
                agent.ask("warm up: population of Ohio", settings, planner=planner, record=False)
            else:  # a Claude planner would call the API: warm up everything but planning
                agent.run_sql("SELECT 1 AS one FROM public.geography LIMIT 1", settings, record=False)
        except Exception:  # warming up is an optimisation; the first real question reports real problems
            log.debug("warming up failed", exc_info=True)
        try:
            if settings.catalog_index != "off" and not catalog_status(settings).complete:
                start_background_build(settings)
        except Exception:  # the catalog is an aid; Status says when it is missing
            log.warning("the catalog index could not be started", exc_info=True)

    threading.Thread(target=work, name="sage-warm-up", daemon=True).start()


@st.cache_resource(show_spinner=False)
def _planner(_settings: Settings, key: int) -> tuple[Planner | None, SageError | None]:
    try:
        return agent.make_planner(_settings), None
    except SageError as exc:
        return None, exc


def get_planner(settings: Settings) -> tuple[Planner | None, SageError | None]:
    """The configured planner (built once per process), or the error that explains why there is none."""
    return _planner(settings, hash(settings))


__all__ = ["ensure_ready", "get_planner", "get_settings", "settings_or_stop"]
