"""Ask (home): a conversation with the census.  Each question gets an answer card and is asked with the earlier
turns of the conversation as its context (the planner decides whether it follows them); "New conversation" starts
over.  A link (``?q=...``, from an answer card or the History page) asks its question(s) in a new conversation."""

import streamlit as st

from app_pages import components as ui
from sage import agent, links
from sage.agent import validate_question
from sage.errors import SageError
from sage.planner.base import Planner

#: a few questions per topic, to click; every one is answerable with the shipped extract
EXAMPLES = {
    "Population": ["The 5 states with the most people", "Which 10 counties have the largest population?"],
    "Income": ["Median household income in Cook County, Illinois", "Gini index by county in Texas"],
    "Housing": ["Median home value by county in Colorado", "How many housing units are there in Oregon?"],
    "Poverty & insurance": ["Poverty rate by state", "Share of people with health insurance in Florida"],
    "Work & education": ["Unemployment rate by state", "Share of adults with a bachelor's degree in Ohio counties"],
    "Cities & towns": ["Population of Austin, TX", "The 10 largest cities in Ohio"],
    "Change over time": ["How has median household income changed in Travis County since 2014-2018?",
                         "Which 5 Texas counties added the most people between 2014-2018 and 2019-2023?"],
    "Profiles": ["Travis County, Texas", "Boulder, CO"],
}

#: example topics side by side
EXAMPLES_PER_ROW = 4

settings = ui.settings_or_stop()
planner, planner_error = ui.get_planner(settings)
turns = st.session_state.setdefault("turns", [])


def read_link() -> links.LinkRequest | None:
    """The link this page was opened with, once: its parameters are then cleared, so a rerun does not ask again."""
    if "q" not in st.query_params:
        return None
    params = {name: st.query_params.get_all(name) for name in st.query_params}
    st.query_params.clear()
    return links.read_link(params, settings)


link = read_link()
if link is not None and link.error is None:
    ui.new_conversation()  # a link is a conversation of its own
    turns = st.session_state["turns"]

head, new = st.columns([5, 1], vertical_alignment="bottom")
head.title("Ask the census")
new_slot = new.empty()  # filled at the end, once this run's question is part of the conversation
st.caption(
    "Plain-English questions about the 50 states, DC and Puerto Rico, their 3,222 counties and 32,325 cities, towns "
    "and CDPs, answered from ACS 5-year estimates (2019-2023, with 2014-2018 for changes over time): every answer "
    "says itself in a sentence, beside its state and the nation, with the chart, the SQL, the assumptions and the "
    "data. A place name alone (“Travis County, Texas”) gives its profile. Ask a follow-up (“and Williamson "
    "County?”, “as a map”, “which of those…”) and it is read in the light of the conversation."
)


def examples(expanded: bool) -> None:
    with st.expander("Example questions", expanded=expanded, icon=":material/lightbulb:"):
        topics = list(EXAMPLES.items())
        for start in range(0, len(topics), EXAMPLES_PER_ROW):  # rows of a few topics: a column stays readable
            row = topics[start:start + EXAMPLES_PER_ROW]
            for col, (topic, questions) in zip(st.columns(EXAMPLES_PER_ROW), row, strict=False):
                with col:
                    st.markdown(f"**{topic}**")
                    for i, q in enumerate(questions):
                        st.button(q, key=f"example-{topic}-{i}", on_click=ui.ask_later, args=(q,), type="tertiary",
                                  wrap=True)


examples(expanded=not turns and link is None)
if planner_error is not None:
    ui.show_error(planner_error)

# The new question is answered before the earlier turns are redrawn (into the container above it), so the time
# from Enter to the answer does not grow with the length of the conversation.
earlier = st.container()
current = st.container()
shown = list(turns)

typed = st.chat_input("Ask about a state, county or city, e.g. “median rent by county in Arizona”, or name a "
                      "place for its profile", key="question")
question = typed if typed is not None else st.session_state.pop("pending_question", None)


def answer(text: str, asker: Planner) -> None:
    """Ask ``text`` as the next turn of the conversation and draw it (unless the session asked too many questions
    in the last minute: SAGE_MAX_QUESTIONS_PER_MINUTE)."""
    if not ui.question_allowed(settings):
        return
    context, parent_id, questions = ui.conversation(turns)
    with st.chat_message("user", avatar=":material/person:"):
        st.markdown(ui.plain(text))
    with st.chat_message("assistant", avatar=":material/query_stats:"):
        turn = ui.run_with_status(text, settings, asker, context=context, parent_id=parent_id, earlier=questions)
        turns.append(turn)
        ui.answer_card(turn, settings)


with current:
    ui.fetch_notice()
    if link is not None:
        asker: Planner | None = planner
        if link.error is not None:
            ui.show_error(link.error)
        elif link.planner is not None:
            try:
                asker = agent.make_planner(settings, link.planner)
            except SageError as exc:
                ui.show_error(exc)
                asker = None
        if link.error is None and asker is None:
            st.warning("No planner is available, so the link's question was not asked: see the message above.")
        elif link.error is None and asker is not None:
            for text in link.questions:
                answer(text, asker)
    if question is not None:
        try:
            question = validate_question(question, settings)
        except SageError as exc:
            ui.show_error(exc)
            question = None
    if question is not None and planner is None:
        st.warning("No planner is available, so nothing was asked: see the message above.")
    elif question is not None and planner is not None:
        answer(question, planner)

with earlier:
    for turn in shown:
        with st.chat_message("user", avatar=":material/person:"):
            label = "Edited SQL for: " if turn.kind == "sql" else ""
            st.markdown(f"{label}{ui.plain(turn.question)}")
        with st.chat_message("assistant", avatar=":material/query_stats:"):
            ui.answer_card(turn, settings)

if turns:
    new_slot.button("New conversation", key="new-conversation", icon=":material/add_comment:",
                    on_click=ui.new_conversation, help="Forget the questions above: the next one stands on its own.")
