"""Ask (home): a conversation with the census.  Each question gets an answer card; examples get people started."""

import streamlit as st

from app_pages import components as ui
from sage.agent import validate_question
from sage.errors import SageError

#: a few questions per topic, to click; every one is answerable with the shipped extract
EXAMPLES = {
    "Population": ["The 5 states with the most people", "Which 10 counties have the largest population?"],
    "Income": ["Median household income in Cook County, Illinois", "Gini index by county in Texas"],
    "Housing": ["Median home value by county in Colorado", "How many housing units are there in Oregon?"],
    "Poverty & insurance": ["Poverty rate by state", "Share of people with health insurance in Florida"],
    "Work & education": ["Unemployment rate by state", "Share of adults with a bachelor's degree in Ohio counties"],
}

settings = ui.settings_or_stop()
planner, planner_error = ui.get_planner(settings)
turns = st.session_state.setdefault("turns", [])

st.title("Ask the census")
st.caption(
    "Plain-English questions about US states and counties, answered from ACS 5-year estimates with the SQL, "
    "the assumptions and the data beside every chart."
)


def examples(expanded: bool) -> None:
    with st.expander("Example questions", expanded=expanded, icon=":material/lightbulb:"):
        cols = st.columns(len(EXAMPLES))
        for col, (topic, questions) in zip(cols, EXAMPLES.items(), strict=True):
            with col:
                st.markdown(f"**{topic}**")
                for i, q in enumerate(questions):
                    st.button(q, key=f"example-{topic}-{i}", on_click=ui.ask_later, args=(q,), type="tertiary",
                              wrap=True)


examples(expanded=not turns)
if planner_error is not None:
    ui.show_error(planner_error)

# The new question is answered before the earlier turns are redrawn (into the container above it), so the time
# from Enter to the answer does not grow with the length of the conversation.
earlier = st.container()
current = st.container()
shown = list(turns)

typed = st.chat_input("Ask about US states and counties, e.g. “median rent by county in Arizona”", key="question")
question = typed if typed is not None else st.session_state.pop("pending_question", None)

with current:
    ui.fetch_notice()
    if question is not None:
        try:
            question = validate_question(question, settings)
        except SageError as exc:
            ui.show_error(exc)
            question = None
    if question is not None and planner is None:
        st.warning("No planner is available, so nothing was asked: see the message above.")
    elif question is not None:
        with st.chat_message("user", avatar=":material/person:"):
            st.markdown(ui.md(question))
        with st.chat_message("assistant", avatar=":material/query_stats:"):
            turn = ui.run_with_status(question, settings, planner)
            turns.append(turn)
            ui.answer_card(turn, settings)

with earlier:
    for turn in shown:
        with st.chat_message("user", avatar=":material/person:"):
            label = "Edited SQL for: " if turn.kind == "sql" else ""
            st.markdown(f"{label}{ui.md(turn.question)}")
        with st.chat_message("assistant", avatar=":material/query_stats:"):
            ui.answer_card(turn, settings)
