"""The answer card (docs/design.md "Answer card"): a follow-up's reading first, the chart or numbers, the
assumptions, the SQL (editable and re-runnable through the same guard), the data with a CSV download, the source and
vintage, who answered, timings; a "Verified" badge for an answer from the verified-answer library, thumbs up / down,
and a link that reproduces the answer."""

from __future__ import annotations

import re
from typing import Any, Literal

import streamlit as st

from sage import agent, charts, feedback, guard, links, significance
from sage.answer import Answer
from sage.charts import ChartSpec
from sage.errors import ErrorKind, SageError
from sage.execute import Result
from sage.roles import Action, Role, may
from sage.settings import Settings
from sage.types import READ_AS

from .errors import show_error
from .fetching import fetch_action
from .reading import headline_and_context, profile_view, sql_box
from .session import role as session_role
from .session import session_id, take_question
from .text import SOURCE, bullets, md
from .turns import TIMING_NAMES, Turn, ask_later, chart_spec, new_turn, timings

#: metrics side by side in the card's left column before they wrap to a second row
METRICS_PER_ROW = 2


def answer_card(turn: Turn, settings: Settings, *, store: str = "turns", slot: Any = None) -> None:
    """Everything a user sees for one answer (docs/design.md "Answer card").

    ``store``/``slot`` say where an edited-and-rerun SQL goes: appended to ``st.session_state[store]`` (the Ask
    conversation) or put in ``st.session_state[store][slot]`` (a History entry).
    """
    answer = turn.answer
    key = f"{store}-{turn.id}"
    _heading(answer)
    if answer.answered and answer.result is not None:
        _answered(turn, answer, answer.result, key)
    elif answer.declined:
        under_reason = _declined(answer, key)
        if answer.decline_kind == ErrorKind.NEEDS_FETCH and answer.fetch:  # the way out, right under the reason
            with under_reason:
                fetch_action(settings, answer.fetch, key, question=turn.question, store=store)
    else:
        if answer.error is not None:
            show_error(answer.error)
        if _rest(answer.assumptions):
            st.markdown("**Assumptions**\n" + bullets(_rest(answer.assumptions)))
        if answer.sql:  # the guard may have refused it: laid out, not checked
            st.code(guard.pretty(answer.sql), language="sql", wrap_lines=True)
        _attempts(answer)
    refused = answer.error is not None and answer.error.kind in (ErrorKind.GUARD, ErrorKind.ATTEMPTS_EXHAUSTED)
    if answer.sql or refused:
        _edit_box(turn, settings, key, store, slot)
    _footer(turn, answer)
    _share_and_rate(turn, settings, key)


def _heading(answer: Answer) -> None:
    """What to know before the answer: the "Verified" badge, how a follow-up was read, a verified answer skipped."""
    if answer.verified:
        st.badge("Verified", icon=":material/verified:", color="green")
    if answer.followup:
        reading = answer.assumptions[0][len(READ_AS):]
        st.markdown(f":material/subdirectory_arrow_right: **Read as:** {md(reading)}")
    for notice in answer.notices:
        st.caption(md(notice))


def _rest(assumptions: list[str]) -> list[str]:
    """The assumptions below the heading (a follow-up's "Read as" line is shown first, above the answer)."""
    return assumptions[1:] if assumptions and assumptions[0].startswith(READ_AS) else assumptions


def _answered(turn: Turn, answer: Answer, result: Result, key: str) -> None:
    spec = chart_spec(turn)
    assert spec is not None  # an answered turn always has one
    name = _file_name(turn.question)
    headline_and_context(answer)  # the answer in words first, above the chart
    if answer.profile is not None:
        _profile(answer)
        with st.expander(f"Data · {result.row_count:,} rows", icon=":material/table_view:"):
            _table(result, key, name)
    elif spec.wide and spec.chart is not None and result.row_count:
        # panels side by side need the card's width; the assumptions and the SQL go below them
        _view(answer, result, spec, key, name)
        left, right = st.columns([5, 4], gap="large")
        with left:
            _assumptions(answer)
        with right:
            _sql(answer)
    else:
        left, right = st.columns([5, 4], gap="large")
        with left:
            _view(answer, result, spec, key, name)
        with right:
            _assumptions(answer)
            _sql(answer)
    if spec.kind != "table" and result.row_count:
        with st.expander(f"Data · {result.row_count:,} row{'s' if result.row_count != 1 else ''}",
                         icon=":material/table_view:"):
            _table(result, key, name)
    _attempts(answer)


def _view(answer: Answer, result: Result, spec: ChartSpec, key: str, name: str) -> None:
    """The answer itself: the chart (and the map beside a ranking of places), the numbers or the table, then how
    to read it and what was drawn instead of what was asked."""
    if result.row_count == 0:
        st.info("The query ran but returned no rows: the place or the measure may not be in the data. "
                "Check the assumptions and the SQL.", icon=":material/search_off:")
    elif spec.kind in ("big", "statrow"):
        _metrics(spec)
    elif spec.chart is not None and spec.alternate is not None and spec.alternate.chart is not None:
        chart_tab, map_tab = st.tabs(["Chart", "Map"])
        with chart_tab:
            st.altair_chart(spec.chart, key=f"{key}-chart")
        with map_tab:
            st.altair_chart(spec.alternate.chart, key=f"{key}-map")
            if spec.alternate.note:
                st.caption(md(spec.alternate.note))
    elif spec.chart is not None:
        st.altair_chart(spec.chart, key=f"{key}-chart")
    else:
        _table(result, key, name, height=min(420, 38 + 35 * max(1, result.row_count)))
    if result.row_count:
        _reading(answer, result, spec)
    if spec.fallback_reason and result.row_count:
        st.caption(md(spec.fallback_reason))
    if spec.note and not (spec.kind == "statrow" and result.row_count):  # a stat row's note is its heading
        st.caption(md(spec.note))
    if result.truncated:
        st.warning(
            f"Showing the first {result.row_count:,} rows: the result was cut at the row limit "
            "(SAGE_MAX_ROWS) or the size limit.",
            icon=":material/content_cut:",
        )


def _profile(answer: Answer) -> None:
    """A place's profile takes the card's width; the assumptions and the SQL go below it."""
    profile_view(answer, app_url(), None)
    left, right = st.columns([5, 4], gap="large")
    with left:
        _assumptions(answer)
    with right:
        _sql(answer)


def _assumptions(answer: Answer) -> None:
    if _rest(answer.assumptions):
        st.markdown("**Assumptions**\n" + bullets(_rest(answer.assumptions)))


def _sql(answer: Answer) -> None:
    st.markdown("**SQL**")
    sql_box(answer.sql)  # the guard's own layout of what ran, in a box of bounded height


def _reading(answer: Answer, result: Result, spec: ChartSpec) -> None:
    """How to read the numbers: whether the differences or the change are statistically significant (tested by
    sage from the margins, never implied without a test), and the dollars a change in dollars is in."""
    change = charts.change_of(result.columns)
    said = significance.sentence(answer.significance, answer.significance_note, change=change is not None)
    if said:
        st.markdown(f":material/query_stats: {md(said)}")
    if change is not None and charts.unit_of(change.measure) == "dollars":
        basis = charts.dollar_basis(answer.assumptions)
        if basis:
            st.caption(md(basis))


def _file_name(question: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", question.lower()).strip("-")[:60].rstrip("-")
    return f"census-sage-{slug or 'answer'}.csv"


def _metrics(spec: ChartSpec) -> None:
    """The numbers, at most :data:`METRICS_PER_ROW` to a row (the card's column is narrow: four side by side cut
    the values short)."""
    if spec.note and spec.kind == "statrow":
        st.caption(md(spec.note))
    if len(spec.metrics) == 1:
        cols = [st.container()]
    else:
        per_row = len(spec.metrics) if len(spec.metrics) <= METRICS_PER_ROW else METRICS_PER_ROW
        cols = [col for start in range(0, len(spec.metrics), per_row) for col in st.columns(per_row)]
    for col, metric in zip(cols, spec.metrics, strict=False):
        with col:
            st.metric(
                md(metric.label),
                metric.value,
                delta=metric.moe,
                delta_color="off",
                delta_arrow="off",
                delta_description="90% margin of error" if metric.moe else None,
                help=charts.RELIABILITY_NOTE if metric.reliability else None,
                border=True,
            )
            if metric.reliability:
                st.caption(md(metric.reliability[0].upper() + metric.reliability[1:]))


def _column_config(columns: list[str]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for col in columns:
        unit = charts.unit_of(col)
        if col.lower() in ("margin_error", "moe") or col.endswith("_moe"):
            config[col] = st.column_config.NumberColumn(col, format="localized")
        elif unit == "dollars":
            config[col] = st.column_config.NumberColumn(col, format="dollar")
        elif unit == "count":
            config[col] = st.column_config.NumberColumn(col, format="localized")
    return config


def _table(result: Result, key: str, file_name: str, height: int | Literal["auto"] = "auto") -> None:
    """The rows, with a reliability column after each estimate's margin; the CSV is the rows as the query
    returned them."""
    shown = charts.table_frame(result.columns, result.rows)
    numeric = [c for c in shown.columns if str(shown[c].dtype) not in ("object", "str", "string")]
    st.dataframe(shown, hide_index=True, height=height, column_config=_column_config(numeric))
    if len(shown.columns) > len(result.columns):  # reliability columns were added
        st.caption(md(charts.RELIABILITY_NOTE))
    frame = charts.to_frame(result.columns, result.rows)
    st.download_button(
        "Download CSV",
        data=frame.to_csv(index=False).encode("utf-8"),
        file_name=file_name,
        mime="text/csv",
        key=f"{key}-csv",
        on_click="ignore",
        icon=":material/download:",
    )


def _declined(answer: Answer, key: str) -> Any:
    """The reason, the rest of the assumptions and the suggestions; returns the place right under the reason."""
    st.info(md(answer.decline or "The data cannot answer this question."),
            icon=":material/help:")
    under_reason = st.container()
    others = _rest(answer.assumptions)[1:]  # the first is the reason (after a follow-up's "Read as", shown above)
    if others:
        st.markdown(bullets(others))
    if answer.suggestions:
        # a name with several readings: the readings, to choose from; otherwise questions the data can answer.
        # Either way a click asks it as the next turn of the conversation.
        ambiguous = answer.decline_kind == ErrorKind.AMBIGUOUS
        st.markdown("**Which one did you mean?**" if ambiguous else "**Try one of these instead:**")
        shown = answer.suggestions[:8] if ambiguous else answer.suggestions[:4]
        for i, suggestion in enumerate(shown):
            st.button(md(suggestion), key=f"{key}-suggest-{i}", on_click=ask_later, args=(suggestion,),
                      icon=":material/radio_button_unchecked:" if ambiguous else ":material/arrow_forward:")
    return under_reason


def _attempts(answer: Answer) -> None:
    earlier = [a for a in answer.attempts if a.sql]
    if not earlier:
        return
    with st.expander(f"Earlier tries ({len(earlier)})", icon=":material/history:"):
        for i, attempt in enumerate(earlier, 1):
            st.markdown(f"**Try {i}:** {md(attempt.error)}")
            st.code(guard.pretty(attempt.sql), language="sql", wrap_lines=True)


def _edit_box(turn: Turn, settings: Settings, key: str, store: str, slot: Any) -> None:
    answer = turn.answer
    last_sql = guard.pretty(answer.sql or (answer.attempts[-1].sql if answer.attempts else ""))
    with st.expander("Edit the SQL and run it again", icon=":material/edit:"):
        st.text_area("SQL", value=last_sql, key=f"{key}-sql", height=160, label_visibility="collapsed")
        st.button("Run again", key=f"{key}-run", type="primary", icon=":material/play_arrow:",
                  on_click=_run_edited, args=(settings, turn.question, f"{key}-sql", store, slot))
        st.caption("The edited SQL goes through the same guard and read-only role as a planned query.")


def _run_edited(settings: Settings, question: str, sql_key: str, store: str, slot: Any) -> None:
    """Button callback: guard and run the edited SQL (counted against the session's question rate); the result
    becomes a new turn (or replaces the entry)."""
    sql = st.session_state.get(sql_key, "")
    refused = take_question(settings)
    if refused is not None:
        answer = Answer(question=question or "(edited SQL)", planner="user", sql=sql, error=refused)
    else:
        answer = agent.run_sql(sql, settings, question=question, session_id=session_id())
    turn = new_turn(question, answer, kind="sql")
    if slot is None:
        st.session_state.setdefault(store, []).append(turn)
    else:
        st.session_state.setdefault(store, {})[slot] = turn


def _footer(turn: Turn, answer: Answer) -> None:
    if answer.result is not None:
        vintages = ", ".join(answer.vintages)
        parts = [f"Source: {SOURCE}" + (f", {vintages}" if vintages else "") + "."]
        if answer.variables:
            names = "; ".join(f"{v['code']} ({_short_label(v.get('label') or '', v.get('table_id'))})"
                              for v in answer.variables[:4])
            parts.append(f"Variables: {names}.")
        st.caption(md(" ".join(parts)))
    if answer.planner == "user":
        who = "Ran your edited SQL"
    elif answer.verified:
        who = "Answered from the verified answers (no planning)"
    else:
        planner = f"Claude ({answer.model})" if answer.planner == "claude" and answer.model else (
            f"the {answer.planner} planner" if answer.planner else "no planner")
        verb = "Answered" if answer.answered else "Declined" if answer.declined else "Tried"
        tries = answer.tries
        who = f"{verb} by {planner}" + (f" · {tries} {'try' if tries == 1 else 'tries'}" if tries else "")
    t = timings(turn)
    st.caption(md(f"{who} · " + " · ".join(f"{name} {t[k]:,.0f} ms" for k, name in TIMING_NAMES if k in t)))


def _share_and_rate(turn: Turn, settings: Settings, key: str) -> None:
    """The link that reproduces the answer and, for an answer, thumbs up / down."""
    answer = turn.answer
    rate = answer.answered and answer.id is not None
    left, right = st.columns([1, 5]) if rate else (None, st.container())
    if left is not None:
        with left:
            _rating(answer, settings, key)
    if turn.kind == "ask":
        with right:
            st.caption("Link to this answer (opening it asks the question again):")
            st.code(card_link(turn, settings), language=None, wrap_lines=True)


def card_link(turn: Turn, settings: Settings) -> str:
    """The turn's link, made once: the app's address plus :mod:`sage.links`' query."""
    if turn.link is None:
        answer = turn.answer
        questions = links.questions_for(settings, question=turn.question, standalone=answer.standalone,
                                        followup=answer.followup, planner=answer.planner, frame=answer.frame,
                                        earlier=turn.earlier)
        turn.link = app_url() + links.query_string(questions, links.link_planner(settings, answer.planner),
                                                   answer.vintages if answer.answered else ())
    return turn.link


def app_url() -> str:
    """The app's address as the browser sees it (empty, for a relative link, when it is not known)."""
    url = st.context.url or ""
    return url if not url or url.endswith("/") else url + "/"


def _rating(answer: Answer, settings: Settings, key: str) -> None:
    fkey = f"{key}-feedback"
    assert answer.id is not None
    st.feedback("thumbs", key=fkey, on_change=_rated, args=(settings, answer.id, fkey))
    state = st.session_state.get(f"{fkey}-done")
    if state == "error":
        st.caption(md(st.session_state.get(f"{fkey}-error", "The rating could not be stored.")))
    elif st.session_state.get(fkey) == 1:
        st.caption(_thumbs_up_note(st.session_state.get(f"{fkey}-by")))
    elif st.session_state.get(fkey) == 0:
        if st.session_state.get(f"{fkey}-reason-sent"):
            st.caption("Thanks: noted for review by a curator.")
        else:
            st.text_input("What is wrong with it?", key=f"{fkey}-reason", max_chars=300,
                          placeholder="e.g. wrong county")
            st.button("Send", key=f"{fkey}-send", on_click=_send_reason, args=(settings, answer.id, fkey))


def _thumbs_up_note(by: Role | None) -> str:
    """What a thumbs up did: a curator's verifies, a visitor's proposes (sage.feedback)."""
    if by is not None and may(by, Action.VERIFY):
        return "Marked right: questions that mean the same are answered with this SQL."
    return "Proposed for the verified answers: a curator reviews it (History, To review) before anyone is served it."


def _rated(settings: Settings, question_id: int, fkey: str) -> None:
    """Feedback callback: store the rating with the session's role, checked again here (a curator's thumbs up
    verifies the answer, a visitor's proposes it; see sage.feedback)."""
    value = st.session_state.get(fkey)
    st.session_state.pop(f"{fkey}-reason-sent", None)
    by = session_role(settings)
    st.session_state[f"{fkey}-by"] = by
    try:
        if value is None:
            feedback.clear(settings, question_id, role=by)
        else:
            feedback.rate(settings, question_id, "up" if value == 1 else "down", role=by, session_id=session_id())
        st.session_state[f"{fkey}-done"] = "ok"
    except SageError as exc:
        st.session_state[f"{fkey}-done"] = "error"
        st.session_state[f"{fkey}-error"] = f"The rating could not be stored: {exc.message}"


def _send_reason(settings: Settings, question_id: int, fkey: str) -> None:
    reason = st.session_state.get(f"{fkey}-reason", "")
    try:
        feedback.add_reason(settings, question_id, reason)
    except SageError as exc:
        st.session_state[f"{fkey}-done"] = "error"
        st.session_state[f"{fkey}-error"] = f"The reason could not be stored: {exc.message}"
        return
    st.session_state[f"{fkey}-reason-sent"] = True


def _short_label(label: str, table_id: str | None = None) -> str:
    """``Estimate!!Total:!!Unemployed`` -> ``Unemployed``; a bare total names its table."""
    steps = [p.strip().rstrip(":") for p in label.split("!!") if p.strip() and p.strip().lower() != "estimate"]
    if len(steps) > 1:
        steps = [s for s in steps if s.lower() != "total"]
    text = ": ".join(steps)[:90]
    if text.lower() in ("", "total") and table_id:
        return f"total of table {table_id}"
    return text


__all__ = ["answer_card", "app_url", "card_link"]
