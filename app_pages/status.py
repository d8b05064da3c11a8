"""Status: the database (never a password), the tables and vintages (the period questions read, and a newer ACS
release when one is published, with the update button for curators), the retrieval index (with a rebuild
button, for curators), its catalog part (how many ACS tables that are not loaded are indexed, and whether that
runs), a table being loaded, Claude's daily token budget, and the planner settings (never a secret)."""

from dataclasses import asdict

import streamlit as st

from app_pages import components as ui
from sage import limits, roles
from sage.catalog_index import CatalogStatus, start_background_build
from sage.census.fetch_job import current_fetch
from sage.census.update import start_update
from sage.errors import SageError
from sage.roles import Action
from sage.status import status

settings = ui.settings_or_stop()
curator = ui.may(settings, Action.REBUILD_INDEX)
st.title("Status")


def catalog_section(catalog: CatalogStatus | None) -> None:
    """The catalog part of the index: how many of the ACS tables that are not loaded are indexed (so that
    questions about them can name them), and whether a build is running (here or in another process)."""
    st.subheader("ACS table catalog", anchor=False)
    if catalog is None:
        st.caption("Indexed once the census data is set up.")
        return
    line = (f"{catalog.entries:,} of {catalog.expected:,} ACS tables that are not loaded are indexed, so a question "
            "about one of them can name the table to load.")
    st.markdown(ui.md(line))
    if catalog.building:
        if catalog.total:
            st.progress(min(1.0, (catalog.done or 0) / catalog.total),
                        text=ui.md(f"Being indexed in the background: {catalog.done or 0:,} of {catalog.total:,}"))
        else:
            st.caption(ui.md(f"Being indexed in the background ({catalog.builder or 'another process'})."))
    elif catalog.error:
        st.warning(ui.md(f"The last build stopped: {catalog.error}"), icon=":material/warning:")
    if not catalog.complete and not catalog.building:
        if catalog.mode == "off":
            st.caption("Background indexing is off (SAGE_CATALOG_INDEX=off): run python -m sage index --catalog.")
        if curator and st.button("Index the catalog now", icon=":material/playlist_add:", key="status-catalog"):
            roles.require(ui.role(settings), Action.REBUILD_INDEX)
            start_background_build(settings, force=True)
            st.rerun()


def release_section(info) -> None:
    """The periods questions read, a release still being loaded, and a newer release when the Census Data API lists
    one: a button for whoever may load tables here (the fetch button's check), the command for everyone else."""
    if info.latest:
        st.caption(ui.md(f"Questions read ACS {info.latest} (earlier periods are kept for change questions)."))
    if info.pending:
        st.caption(ui.md(f"Loaded but not yet the latest: {', '.join(info.pending)} (an update is running or was "
                         "interrupted; run it again to finish)."))
    release = info.release
    job = current_fetch()
    if job is not None and job.running:
        loading()
    elif release is not None and release.newer:
        st.info(ui.md(release.message), icon=":material/new_releases:")
        if settings.fetch_allowed and settings.census_api_key and roles.may(ui.role(settings), Action.LOAD_TABLES):
            if st.button(f"Update to {release.newest}", icon=":material/download:", key="status-update"):
                try:
                    start_update(settings, who="the app", role=ui.role(settings))
                except SageError as exc:
                    ui.show_error(exc)
                else:
                    st.rerun()
    error = st.session_state.pop("status-update-error", None)
    if error is not None:
        ui.show_error(error)


@st.fragment(run_every=1.0)
def loading() -> None:
    """A running load or update: its progress, redrawn every second; the page again when it has finished."""
    job = current_fetch()
    if job is not None and job.running:
        st.progress(job.fraction, text=ui.md(f"Loading {job.described}: {job.step} ({job.seconds:.0f} s)"))
        st.session_state["status-job"] = job
        return
    done = st.session_state.pop("status-job", None)
    if done is not None and done.error is not None:
        st.session_state["status-update-error"] = done.error
    st.rerun()


def budget_section() -> None:
    """Claude's tokens today against SAGE_CLAUDE_DAILY_TOKENS, and what happens past it."""
    st.subheader("Claude's daily budget", anchor=False)
    try:
        budget = limits.budget(settings)
    except SageError as exc:
        ui.show_error(exc)
        return
    if budget.cap is None:
        st.caption(ui.md(f"{budget.used:,} Claude tokens spent today (UTC); no daily cap (SAGE_CLAUDE_DAILY_TOKENS)."))
    elif budget.spent:
        st.warning(ui.md(f"Claude's daily budget is spent: {budget.used:,} of {budget.cap:,} tokens today (UTC). "
                         "Claude is not called until tomorrow; the offline planner answers, and each answer says "
                         "so."), icon=":material/savings:")
    else:
        st.progress(min(1.0, budget.used / budget.cap) if budget.cap else 1.0,
                    text=ui.md(f"{budget.used:,} of {budget.cap:,} Claude tokens spent today (UTC)"))


try:
    info = status(settings, check_release=True)
except SageError as exc:
    ui.show_error(exc)
    st.stop()

database = info.database
where = "Embedded PostgreSQL (in SAGE_DATA_DIR)" if database.embedded else f"Server: {database.host}"
c1, c2, c3, c4 = st.columns(4)
c1.metric("Database", "embedded" if database.embedded else "server", border=True)
c2.metric("PostgreSQL", str(database.server_version or "?").split(" ")[0], border=True)
c3.metric("Estimates", f"{info.tables.get('public.estimates', 0):,}", border=True)
c4.metric("Index chunks", f"{info.index.chunks:,}", border=True)
st.caption(ui.md(where))
if not info.ready:
    st.warning("The database is not fully set up: run `python -m sage setup`, or rebuild the index below.")

left, right = st.columns(2, gap="large")
with left:
    st.subheader("Tables", anchor=False)
    st.dataframe([{"table": t, "rows": n} for t, n in info.tables.items()], hide_index=True,
                 column_config={"table": st.column_config.TextColumn("Table"),
                                "rows": st.column_config.NumberColumn("Rows", format="localized")})
    st.subheader("Vintages", anchor=False)
    detail = [asdict(v) for v in info.vintage_detail or []] or [{"vintage": v} for v in info.vintages]
    st.dataframe(detail, hide_index=True,
                 column_config={"vintage": st.column_config.TextColumn("ACS 5-year vintage"),
                                "variables": st.column_config.NumberColumn("Variables"),
                                "estimates": st.column_config.NumberColumn("Estimates", format="localized")})
    release_section(info)
with right:
    st.subheader("Retrieval index", anchor=False)
    index = info.index
    st.markdown(ui.md(f"{index.chunks:,} chunks embedded with {index.model or 'no model'}"))
    if curator and st.button("Rebuild the index", icon=":material/refresh:", key="status-rebuild"):
        from sage.index import index_schema

        roles.require(ui.role(settings), Action.REBUILD_INDEX)
        with st.status("Rebuilding the retrieval index…", expanded=True) as box:
            bar = box.progress(0.0)

            def progress(step: str, done: int = 0, total: int = 0) -> None:
                bar.progress(min(1.0, done / total) if total else 0.0, text=step)

            try:
                report = index_schema(settings, progress=progress, rebuild=True)
            except SageError as exc:
                box.update(label="The index could not be rebuilt", state="error")
                ui.show_error(exc)
            else:
                box.update(label=f"Index rebuilt: {sum(report.chunks.values()):,} chunks in {report.seconds:.1f} s",
                           state="complete", expanded=False)
    catalog_section(info.catalog)
    budget_section()
    st.subheader("Planner settings", anchor=False)
    st.caption("Secrets are shown only as set or not set.")
    st.json(settings.public(), expanded=True)
