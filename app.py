"""census-sage: ask the US Census (ACS 5-year) in plain English.  Run with ``streamlit run app.py``.

The entry point only routes: page config, settings, first-run setup, the sidebar, then ``st.navigation`` over the
pages in ``app_pages/``.  What the pages share lives in ``app_pages/components/``; the engine is ``sage``.

The folder is deliberately not called ``pages/``: with a ``pages/`` folder, Streamlit runs a deep link such as
``/history`` as a stand-alone page (the old multipage mode) in a fresh server process, skipping this file, its
setup check and its sidebar.
"""

import streamlit as st

from app_pages import components as ui
from app_pages.components.session import sidebar as sidebar_role
from sage.settings import Settings


def sidebar(settings: Settings) -> None:
    """The planner indicator (and how to enable Claude), and the session's role with the curator sign-in, on every
    page."""
    with st.sidebar:
        st.markdown("**Planner**")
        if settings.effective_planner == "claude":
            st.success(f"Claude · {ui.md(settings.model)}", icon=":material/auto_awesome:")
            st.caption("Claude plans each question from the schema and variable descriptions; no rows are sent.")
        else:
            st.info("Offline planner", icon=":material/offline_bolt:")
            st.caption(
                "Answers common questions with built-in rules, with no network. To let Claude plan any question, "
                "set ANTHROPIC\\_API\\_KEY in the environment or in .streamlit/secrets.toml and restart the app."
            )
        st.caption(f"Data: {ui.SOURCE}.")
        sidebar_role(settings)


st.set_page_config(
    page_title="census-sage · ACS answers",
    page_icon=":material/travel_explore:",
    layout="wide",
    menu_items={"About": "census-sage: plain-English questions over ACS 5-year estimates, with the SQL to check."},
)

pages = st.navigation(
    [
        st.Page("app_pages/ask.py", title="Ask", icon=":material/forum:", default=True),
        st.Page("app_pages/explore.py", title="Explore", icon=":material/travel_explore:"),
        st.Page("app_pages/history.py", title="History", icon=":material/history:"),
        st.Page("app_pages/status.py", title="Status", icon=":material/monitor_heart:"),
    ]
)
settings = ui.settings_or_stop()
ui.ensure_ready(settings)
sidebar(settings)
pages.run()
