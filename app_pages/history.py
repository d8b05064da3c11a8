"""History: the questions asked (the ``sage.questions`` log), newest first, as conversations — a follow-up under
the question it follows — to filter, re-run, link to and check; for curators, what to review (visitors' proposals,
with one click to verify, the thumbs-down reasons and the flagged verified answers); the verified-answer library.

A visitor sees the questions of their own session; a curator sees everyone's (``sage.roles``).  Every curator
action here is checked again where it runs (``sage.review``, ``sage.verified``), not only by hiding its button."""

from collections import defaultdict

import streamlit as st

from app_pages import components as ui
from sage import feedback, links, querylog, review, verified
from sage.agent import run_sql
from sage.errors import SageError
from sage.querylog import LogEntry
from sage.roles import Action, may
from sage.types import READ_AS

settings = ui.settings_or_stop()
planner, planner_error = ui.get_planner(settings)
runs = st.session_state.setdefault("history_runs", {})
role = ui.role(settings)
curator = may(role, Action.ALL_HISTORY)

st.title("History")
if curator:
    st.caption("Every question asked here (by every session) or with the CLI, with the SQL that answered it; a "
               "follow-up is shown under the question it follows. Re-run one to see its card, or copy its link.")
else:
    st.caption("The questions you asked in this session, with the SQL that answered them; a follow-up is shown "
               "under the question it follows. Re-run one to see its card, or copy its link (it reproduces the "
               "answer anywhere).")
notice = st.session_state.pop("history_notice", None)
if isinstance(notice, SageError):
    ui.show_error(notice)
elif notice:
    st.success(ui.md(str(notice)), icon=":material/verified:")

tab_names = ["Questions", "To review", "Verified answers"] if may(role, Action.REVIEW) else \
    ["Questions", "Verified answers"]
tabs = dict(zip(tab_names, st.tabs(tab_names), strict=True))
questions_tab, verified_tab, review_tab = tabs["Questions"], tabs["Verified answers"], tabs.get("To review")
ICONS = {"answered": ":material/check_circle:", "declined": ":material/help:", "failed": ":material/error:"}


def rerun(entry_id: int, question: str, sql: str | None, parent_id: int | None) -> None:
    st.session_state["history_rerun"] = (entry_id, question, sql, parent_id)


def threads(entries: list[LogEntry]) -> list[list[tuple[int, LogEntry]]]:
    """The entries as conversations, newest first: each a question and its follow-ups below it (oldest first),
    with their depth.  A follow-up whose question is not in the list starts a thread of its own."""
    by_id = {e.id: e for e in entries}
    children: dict[int, list[LogEntry]] = defaultdict(list)
    roots = []
    for e in entries:
        if e.parent_id is not None and e.parent_id in by_id:
            children[e.parent_id].append(e)
        else:
            roots.append(e)
    out = []
    for root in roots:
        thread: list[tuple[int, LogEntry]] = []
        stack = [(0, root)]
        while stack:
            depth, e = stack.pop()
            thread.append((depth, e))
            stack.extend((depth + 1, c) for c in sorted(children.get(e.id, []), key=lambda c: c.id, reverse=True))
        out.append(thread)
    return out


def link_of(entry: LogEntry) -> str | None:
    """The link that reproduces a logged answer (none for edited SQL); made once per entry and session (a logged
    answer does not change)."""
    if entry.planner == "user":
        return None
    made = st.session_state.setdefault("history_links", {})
    if entry.id not in made:
        earlier = [e.question for e in querylog.chain(settings, entry.parent_id)] if entry.parent_id else []
        questions = links.questions_for(settings, question=entry.question, standalone=entry.standalone,
                                        followup=entry.followup, planner=entry.planner, frame=entry.frame,
                                        earlier=earlier)
        made[entry.id] = links.query_string(questions, links.link_planner(settings, entry.planner))
    return ui.app_url() + made[entry.id]


def show_entry(entry: LogEntry, depth: int, pending) -> None:
    when = entry.created_at.strftime("%Y-%m-%d %H:%M") if entry.created_at else ""
    arrow = "↳ " if depth else ""
    title = f"{arrow}{ui.plain(entry.question[:120])} · " + ui.md(f"{entry.outcome} · {entry.planner} · {when}")
    expanded = entry.id in runs or (pending is not None and pending[0] == entry.id)
    with st.expander(title, expanded=expanded, icon=ICONS.get(entry.outcome, ":material/chat:")):
        if entry.followup:
            st.markdown(f"**Read as:** {ui.md(entry.assumptions[0][len(READ_AS):])}")
        elif entry.parent_id is not None and depth == 0:
            st.caption(f"Asked in a conversation, after question {entry.parent_id}.")
        rest = entry.assumptions[1:] if entry.followup else entry.assumptions
        if rest:
            st.markdown("**Assumptions**\n" + ui.bullets(rest))
        if entry.sql:
            st.code(entry.sql, language="sql", wrap_lines=True)
        error = entry.error
        if isinstance(error, dict) and error.get("message"):
            st.caption(ui.md(f"{error.get('kind', 'error')}: {error['message']}"))
        timings = entry.timings_ms or {}
        if isinstance(timings, dict) and timings.get("total") is not None:
            rows = f"{entry.row_count:,} rows · " if entry.row_count is not None else ""
            badge = " · verified answer" if entry.verified_id is not None else ""
            st.caption(ui.md(f"#{entry.id} · {rows}{timings['total']:,.0f} ms · hint {entry.display_hint or 'table'}"
                             f"{badge}"))
        link = link_of(entry)
        if link:
            st.code(link, language=None, wrap_lines=True)
        edited = entry.planner == "user" and bool(entry.sql)  # a user's SQL runs again as it was
        st.button("Re-run", key=f"history-rerun-{entry.id}", icon=":material/replay:",
                  on_click=rerun, args=(entry.id, entry.question, entry.sql if edited else None, entry.parent_id),
                  disabled=planner is None and not edited)
        if pending is not None and pending[0] == entry.id and ui.question_allowed(settings):
            if pending[2]:
                answer = run_sql(pending[2], settings, question=pending[1], session_id=ui.session_id())
                runs[entry.id] = ui.new_turn(pending[1], answer, kind="sql")
            elif planner is not None:  # a follow-up is asked again in its conversation
                context = querylog.thread(settings, pending[3]) if pending[3] is not None else []
                runs[entry.id] = ui.run_with_status(pending[1], settings, planner, context=context,
                                                    parent_id=pending[3], earlier=[t.question for t in context])
        if entry.id in runs:
            ui.answer_card(runs[entry.id], settings, store="history_runs", slot=entry.id)


with questions_tab:
    search_col, outcome_col = st.columns([3, 1])
    search = search_col.text_input("Filter", placeholder="words in the question or the SQL", key="history-search")
    outcome = outcome_col.selectbox("Outcome", ["all", "answered", "declined", "failed"], key="history-outcome")
    try:
        entries = querylog.recent_for(settings, role, ui.session_id(), limit=50, search=search.strip() or None,
                                      outcome=None if outcome == "all" else outcome)
    except SageError as exc:
        ui.show_error(exc)
        st.stop()
    if not entries:
        st.info("Nothing here yet: ask a question on the Ask page." if not search and outcome == "all"
                else "No question matches this filter.")
    pending = st.session_state.pop("history_rerun", None)
    for thread in threads(entries):
        with st.container(border=len(thread) > 1):
            for depth, entry in thread:
                if depth:
                    _, column = st.columns([min(depth, 4), 40])
                    with column:
                        show_entry(entry, depth, pending)
                else:
                    show_entry(entry, depth, pending)


def accept(question_id: int) -> None:
    """Button callback: verify a proposal, as the session's role now (checked again in sage.review)."""
    try:
        entry = review.accept(settings, question_id, role=ui.role(settings), reviewer="a curator (app)")
    except SageError as exc:
        st.session_state["history_notice"] = exc
        return
    st.session_state["history_notice"] = (f"Verified: answer #{question_id} is in the verified answers as entry "
                                          f"{entry.id}; questions that mean the same are now answered with it.")


def reject(question_id: int) -> None:
    """Button callback: take a proposal off the list (checked again in sage.review)."""
    try:
        done = review.reject(settings, question_id, role=ui.role(settings), reviewer="a curator (app)")
    except SageError as exc:
        st.session_state["history_notice"] = exc
        return
    st.session_state["history_notice"] = (f"Rejected the proposal of answer #{question_id}." if done
                                          else f"Answer #{question_id} was no longer waiting for review.")


def proposals_section() -> None:
    """The visitors' thumbs up waiting for a curator: the question, its reading, the SQL and who wrote it, with
    one click to verify."""
    st.subheader("Proposed for the verified answers", anchor=False)
    try:
        waiting = review.proposals(settings, role=role, limit=50)
    except SageError as exc:
        ui.show_error(exc)
        return
    if not waiting:
        st.caption("No proposals: a visitor's thumbs up appears here until a curator verifies or rejects it.")
    for p in waiting:
        with st.container(border=True, key=f"proposal-{p.question_id}"):
            st.markdown(f":material/thumb_up: **{ui.plain(p.question[:200])}**")
            if p.reading != p.question:
                st.markdown(f"**Read as:** {ui.plain(p.reading[:200])}")
            who = ":material/edit: **Edited SQL** (a visitor wrote it: check it with care)" if p.edited \
                else ui.md(f"SQL by {p.who}")
            st.caption(f"{who} · " + ui.md(f"answer #{p.question_id} · proposed {p.proposed_at:%Y-%m-%d %H:%M}"))
            st.code(p.sql, language="sql", wrap_lines=True)
            if p.guard_error:
                st.warning(ui.md(f"The SQL guard refuses this SQL now, so it cannot be verified: {p.guard_error}"),
                           icon=":material/shield:")
            left, right, _ = st.columns([1, 1, 5])
            left.button("Verify", key=f"proposal-accept-{p.question_id}", type="primary", icon=":material/verified:",
                        on_click=accept, args=(p.question_id,), disabled=p.guard_error is not None)
            right.button("Reject", key=f"proposal-reject-{p.question_id}", icon=":material/block:",
                         on_click=reject, args=(p.question_id,))


def marked_wrong_section() -> None:
    st.subheader("Marked wrong, and flagged verified answers", anchor=False)
    st.caption("Answers marked wrong (thumbs down), with the reason given, and verified answers that were flagged: "
               "their SQL no longer passes the guard or no longer runs, or a user marked an answer they served "
               "wrong. A flagged verified answer is never served; verify the answer again once it is fixed.")
    try:
        downs = feedback.recent(settings, role=role, limit=50)
        flagged = verified.listing(settings, invalid_only=True, limit=50)
    except SageError as exc:
        ui.show_error(exc)
        downs, flagged = [], []
    if not downs and not flagged:
        st.info("Nothing marked wrong.", icon=":material/thumb_up:")
    for item in downs:
        with st.container(border=True):
            st.markdown(f":material/thumb_down: **{ui.plain(item.question[:200])}**")
            st.markdown(ui.plain(item.reason) if item.reason else "(no reason given)")
            st.caption(ui.md(f"answer #{item.question_id} · {item.created_at:%Y-%m-%d %H:%M}"))
            if item.sql:
                st.code(item.sql, language="sql", wrap_lines=True)
    for v in flagged:
        with st.container(border=True):
            st.markdown(f":material/flag: **Verified answer flagged:** {ui.plain(v.question[:200])}")
            st.markdown(ui.plain(v.invalid_reason or ""))
            when = v.invalidated_at.strftime("%Y-%m-%d %H:%M") if v.invalidated_at else ""
            st.caption(ui.md(f"entry {v.id} · from answer #{v.question_id} · flagged {when}"))
            if v.question_id is not None:
                st.button("Verify again", key=f"flagged-verify-{v.id}", icon=":material/verified:",
                          on_click=verify_again, args=(v.question_id,))


def verify_again(question_id: int) -> None:
    """Button callback: verify a flagged answer anew (its SQL through the guard again; checked in sage.verified)."""
    try:
        verified.add(settings, question_id, role=ui.role(settings))
    except SageError as exc:
        st.session_state["history_notice"] = exc
        return
    st.session_state["history_notice"] = f"Answer #{question_id} is verified again and served."


if review_tab is not None:
    with review_tab:
        proposals_section()
        marked_wrong_section()


def remove(question_id: int) -> None:
    """Button callback: take an entry out of the library (a curator's action, checked again in sage.verified)."""
    try:
        verified.remove(settings, question_id, role=ui.role(settings))
    except SageError as exc:
        st.session_state["history_notice"] = exc


with verified_tab:
    st.caption("Answers a curator marked right (a curator's thumbs up, a visitor's proposal a curator verified, or "
               "`python -m sage verify ID`). A new question that means the same — close in meaning, and the same "
               "measures and places — is answered with the verified SQL, run again through the guard.")
    try:
        library = verified.listing(settings, limit=100)
    except SageError as exc:
        ui.show_error(exc)
        library = []
    if not library:
        st.info("No verified answers yet.", icon=":material/verified:")
    removable = may(role, Action.REMOVE_VERIFIED)
    for v in library:
        status = "flagged" if v.invalidated_at else f"served {v.served}×"
        with st.expander(ui.md(f"{v.standalone[:120]} · {status}"), icon=":material/verified:"):
            st.markdown(f"**Question:** {ui.md(v.question)}")
            st.code(v.sql, language="sql", wrap_lines=True)
            if v.invalid_reason:
                st.caption(ui.md(f"Flagged: {v.invalid_reason}"))
            if removable:
                st.button("Remove from the verified answers", key=f"verified-remove-{v.id}",
                          icon=":material/delete:", on_click=remove, args=(v.question_id,),
                          disabled=v.question_id is None)
