"""History: every question asked (the ``sage.questions`` log), newest first, to filter, re-run and check."""

import streamlit as st

from app_pages import components as ui
from sage import querylog
from sage.agent import run_sql
from sage.errors import SageError

settings = ui.settings_or_stop()
planner, planner_error = ui.get_planner(settings)
runs = st.session_state.setdefault("history_runs", {})

st.title("History")
st.caption("Every question asked here or with the CLI, with the SQL that answered it. Re-run one to see its card.")

search_col, outcome_col = st.columns([3, 1])
search = search_col.text_input("Filter", placeholder="words in the question or the SQL", key="history-search")
outcome = outcome_col.selectbox("Outcome", ["all", "answered", "declined", "failed"], key="history-outcome")

try:
    entries = querylog.recent(settings, limit=50, search=search.strip() or None,
                               outcome=None if outcome == "all" else outcome)
except SageError as exc:
    ui.show_error(exc)
    st.stop()

if not entries:
    st.info("Nothing here yet: ask a question on the Ask page." if not search and outcome == "all"
            else "No question matches this filter.")


def rerun(entry_id: int, question: str, sql: str | None) -> None:
    st.session_state["history_rerun"] = (entry_id, question, sql)


pending = st.session_state.pop("history_rerun", None)
ICONS = {"answered": ":material/check_circle:", "declined": ":material/help:", "failed": ":material/error:"}

for entry in entries:
    when = entry.created_at.strftime("%Y-%m-%d %H:%M") if entry.created_at else ""
    title = ui.md(f"{entry.question[:120]} · {entry.outcome} · {entry.planner} · {when}")
    expanded = entry.id in runs or (pending is not None and pending[0] == entry.id)
    with st.expander(title, expanded=expanded, icon=ICONS.get(entry.outcome, ":material/chat:")):
        if entry.assumptions:
            st.markdown("**Assumptions**\n" + ui.bullets(entry.assumptions))
        if entry.sql:
            st.code(entry.sql, language="sql", wrap_lines=True)
        error = entry.error
        if isinstance(error, dict) and error.get("message"):
            st.caption(ui.md(f"{error.get('kind', 'error')}: {error['message']}"))
        timings = entry.timings_ms or {}
        if isinstance(timings, dict) and timings.get("total") is not None:
            rows = f"{entry.row_count:,} rows · " if entry.row_count is not None else ""
            st.caption(ui.md(f"{rows}{timings['total']:,.0f} ms · hint {entry.display_hint or 'table'}"))
        edited = entry.planner == "user" and bool(entry.sql)  # a user's SQL runs again as it was
        st.button("Re-run", key=f"history-rerun-{entry.id}", icon=":material/replay:",
                  on_click=rerun, args=(entry.id, entry.question, entry.sql if edited else None),
                  disabled=planner is None and not edited)
        if pending is not None and pending[0] == entry.id:
            if pending[2]:
                answer = run_sql(pending[2], settings, question=pending[1])
                runs[entry.id] = ui.new_turn(pending[1], answer, kind="sql")
            elif planner is not None:
                runs[entry.id] = ui.run_with_status(pending[1], settings, planner)
        if entry.id in runs:
            ui.answer_card(runs[entry.id], settings, store="history_runs", slot=entry.id)
