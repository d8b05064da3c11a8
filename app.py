"""census-sage: ask the US Census (ACS 5-year) in plain English.  Run with ``streamlit run app.py``.

The entry point only routes: page config, settings, first-run setup, the sidebar, then ``st.navigation`` over the
pages in ``app_pages/``.  Everything else lives in ``app_components`` (Streamlit side) and ``sage`` (the engine).

The folder is deliberately not called ``pages/``: with a ``pages/`` folder, Streamlit runs a deep link such as
``/history`` as a stand-alone page (the old multipage mode) in a fresh server process, skipping this file, its
setup check and its sidebar.
"""

import streamlit as st

import app_components as ui

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
ui.sidebar(settings)
pages.run()
