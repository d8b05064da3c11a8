"""Loading an ACS table from the app: the button of a ``needs_fetch`` decline card and of the Explore page, its
progress bar, and what happens when it is done (the question is asked again, or the page refreshed).  Loading
tables into the shared database is a curator's action: a visitor sees which table would answer and that a curator
can load it (``sage.roles``; ``start_fetch`` checks the role again).

The fetch itself is ``sage.census.fetch_job``: it is checked (allowed, a key, a real table id), refused at once when
another fetch runs anywhere (the message names it), and runs in a worker thread, so this session only polls it and
no question — this session's or another's — waits on it.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from sage.census import fetch_job
from sage.census.fetch_rules import fetch_command
from sage.errors import SageError
from sage.roles import Action, may
from sage.settings import Settings

from .errors import show_error
from .session import role as session_role
from .text import md

#: how often a running fetch's progress bar is redrawn
POLL_S = 0.5
_JOBS = "fetch_jobs"
#: the tables this session has loaded (their decline cards say so instead of offering the button again)
_LOADED = "fetched_tables"


def fetch_action(settings: Settings, fetch: dict[str, Any], key: str, *, question: str | None = None,
                 store: str = "turns") -> None:
    """The way to load ``fetch["tables"]``: a button when fetching is possible here, else what to do instead (how
    to get a key and where to put it; the command an administrator runs).  When the load finishes, ``question``
    (if any) is asked again on the Ask page; without one the page is redrawn with the new table."""
    tables = [str(t) for t in fetch.get("tables") or []]
    if not tables:
        return
    vintage = int(fetch.get("vintage") or fetch_job.CATALOG_YEAR)
    geographies = tuple(fetch.get("geographies") or ("state", "county"))
    jobs: dict[str, fetch_job.FetchJob] = st.session_state.setdefault(_JOBS, {})
    job = jobs.get(key)
    if job is not None:
        _progress(key, question, store)
        return
    if set(tables) <= st.session_state.get(_LOADED, set()):
        st.caption(md(f"Loaded since: {fetch_job.describe_fetch(settings, tables, geographies)}."))
        return
    command = fetch_command(tables, vintage)
    if not may(session_role(settings), Action.LOAD_TABLES):
        st.info(md(f"Table {fetch_job.describe_fetch(settings, tables, geographies)} would answer this; loading "
                   "tables into the shared database is a curator's action, so ask a curator to load it (or an "
                   f"administrator: {command})."), icon=":material/lock:")
        return
    if not settings.fetch_allowed:
        st.info(md(f"Loading tables from the app is turned off for this database (SAGE_ALLOW_FETCH). An "
                   f"administrator can load it with: {command}"), icon=":material/lock:")
        return
    if not settings.census_api_key:
        st.info(md(fetch_job.KEY_HOW_TO + f" Or load it from a terminal: {command}"), icon=":material/key:")
        return
    st.button(fetch_job.button_label(settings, tables, geographies), key=f"{key}-load", type="primary",
              icon=":material/download:", on_click=_start, args=(settings, tables, vintage, geographies, key))
    error = st.session_state.get(f"{key}-load-error")
    if error is not None:
        show_error(error)


def _start(settings: Settings, tables: list[str], vintage: int, geographies: tuple[str, ...], key: str) -> None:
    """Button callback: start the fetch in a worker thread (the session's role is checked again where it starts),
    or keep the reason it was refused for the card."""
    st.session_state.pop(f"{key}-load-error", None)
    try:
        job = fetch_job.start_fetch(settings, tables, vintage, geographies, role=session_role(settings),
                                    who="the app")
    except SageError as exc:
        st.session_state[f"{key}-load-error"] = exc
        return
    st.session_state.setdefault(_JOBS, {})[key] = job


@st.fragment(run_every=POLL_S)
def _progress(key: str, question: str | None, store: str) -> None:
    """The running fetch's progress bar, redrawn every :data:`POLL_S`; at the end, the question again (or a full
    redraw), or what went wrong with the button to try again."""
    jobs: dict[str, fetch_job.FetchJob] = st.session_state.setdefault(_JOBS, {})
    job = jobs.get(key)
    if job is None:
        return
    if job.running:
        st.progress(job.fraction, text=md(f"Loading {job.described}: {job.step} ({job.seconds:.0f} s)"))
        return
    del jobs[key]
    if job.state == "failed" and job.error is not None:
        st.session_state[f"{key}-load-error"] = job.error
        st.rerun()
    st.cache_data.clear()  # the Explore page's lists now have the new table
    st.session_state.setdefault(_LOADED, set()).update(job.tables)
    report = job.report
    rows = f"{report.rows:,} estimates" if report is not None else "the table"
    st.session_state["fetch_done"] = f"Loaded {job.described}: {rows} in {job.seconds:.0f} s."
    if question:
        st.session_state["pending_question"] = question
        if store != "turns":
            st.switch_page("app_pages/ask.py")
    st.rerun()


def fetch_notice() -> None:
    """The note left by a finished fetch ("Loaded B25003 (Tenure) for all states and counties: ..."), once."""
    done = st.session_state.pop("fetch_done", None)
    if done:
        st.success(md(done), icon=":material/download_done:")


__all__ = ["fetch_action", "fetch_notice"]
