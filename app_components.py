"""Where Streamlit meets ``sage``: cached resources, first-run setup, the sidebar, the answer card, friendly errors.

``sage`` never imports streamlit (DESIGN.md), and pages stay thin: a page reads its widgets, calls one ``sage``
function per step and draws what comes back with the helpers below.

Text from the model or the data never reaches ``st.markdown`` unescaped (:func:`md`): an assumption such as
``![x](https://example.com/?leak)`` must print as text, not fetch an image.  ``unsafe_allow_html`` is never used.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import streamlit as st

from sage import agent, charts
from sage.errors import SageError
from sage.settings import Settings, load_settings

SOURCE = "U.S. Census Bureau, American Community Survey (ACS) 5-year estimates"

#: the stages ``sage.agent.ask`` reports, as the status box names them
STAGES = {
    "retrieving": "Finding the tables and variables that fit",
    "planning": "Writing the SQL",
    "checking": "Checking the SQL with the guard",
    "running": "Running the query (read-only)",
    "drawing": "Drawing the answer",
}
TIMING_NAMES = (("retrieve", "retrieve"), ("plan", "plan"), ("guard", "check"), ("execute", "run"),
                ("draw", "draw"), ("total", "total"))

# --------------------------------------------------------------------------------------------------------------
# text


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>$:&=\"'])")


def md(text: Any) -> str:
    """Markdown-escape ``text`` so Streamlit shows it literally (no links, images, emphasis, LaTeX, directives)."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def bullets(items: list[str]) -> str:
    return "\n".join(f"- {md(item)}" for item in items)


_CLAUSES = ("WITH", "SELECT", "FROM", "INNER JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN", "JOIN",
            "WHERE", "GROUP BY", "HAVING", "WINDOW", "ORDER BY", "LIMIT", "OFFSET", "UNION ALL", "UNION", "EXCEPT",
            "INTERSECT", "AND", "OR")
_CLAUSE = re.compile(r"\b(" + "|".join(c.replace(" ", r"\s+") for c in _CLAUSES) + r")\b", re.I)


def pretty_sql(sql: str) -> str:
    """``sql`` with a line break before each top-level clause (and between long select lists' items).

    Only whitespace outside quotes and parentheses changes, so what is shown (and copied, and edited) runs exactly
    like what ran.  SQL with comments, backslashes (``E'...'`` strings) or dollar quotes is left as it is: a line
    break could end a ``--`` comment early, and such literals are not scanned here.
    """
    if "\\" in sql or "$" in sql:
        return sql
    out: list[str] = []
    depth, i, n = 0, 0, len(sql)
    clause = ""
    long_select = len(sql) > 120
    while i < n:
        ch = sql[i]
        if ch in "'\"":  # copy a quoted literal or identifier as it is ('' and "" escape themselves)
            j = i + 1
            while j < n:
                if sql[j] == ch:
                    if j + 1 < n and sql[j + 1] == ch:
                        j += 2
                        continue
                    break
                j += 1
            out.append(sql[i : j + 1])
            i = j + 1
            continue
        if sql.startswith("--", i) or sql.startswith("/*", i):
            return sql
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0 and clause == "SELECT" and long_select:
            out.append(",\n      ")
            i += 1
            while i < n and sql[i] in " \t\n":
                i += 1
            continue
        if depth == 0 and ch.isalpha() and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] in "_.$")):
            m = _CLAUSE.match(sql, i)
            if m:
                word = " ".join(m.group(1).upper().split())
                prefix = "".join(out).rstrip(" \t\n")
                if word in ("AND", "OR"):
                    # only the conditions of WHERE/HAVING, never the AND of BETWEEN x AND y
                    if clause in ("WHERE", "HAVING") and not re.search(r"\bBETWEEN\s+\S+$", prefix, re.I):
                        out = [prefix, "\n  ", m.group(1)]
                        i = m.end()
                        continue
                else:
                    clause = word
                    out = [prefix, "\n" if prefix else "", m.group(1)]
                    i = m.end()
                    continue
        out.append(ch)
        i += 1
    return "".join(out).strip()


# --------------------------------------------------------------------------------------------------------------
# cached resources


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
def _setup_state(_settings: Settings, key: int) -> dict:
    """Per-process readiness of one database (shared by every session): set up once, then never checked again."""
    return {"ready": False, "lock": threading.Lock(), "report": None}


def ensure_ready(settings: Settings) -> None:
    """Make sure the database is set up; the first start shows each setup step and the rows loaded.

    Later starts on a warm data directory only check ``status()`` (a few milliseconds once the server runs), so
    the page appears quickly; ``python -m sage setup`` re-runs the full, idempotent setup.
    """
    from sage.census.setup import run_setup
    from sage.status import status

    state = _setup_state(settings, hash(settings))
    if state["ready"]:
        return
    with state["lock"]:
        if state["ready"]:
            return
        try:
            if status(settings).ready:
                state["ready"] = True
                _warm_up(settings)
                return
        except SageError as exc:
            if exc.kind in ("database_down", "settings"):
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
    first question is as fast as the rest."""

    def work() -> None:
        try:
            planner = agent.make_planner(settings)  # sage caches it per settings; get_planner() finds it built
            if planner.name == "offline":
                agent.ask("warm up: population of Ohio", settings, planner=planner, record=False)
            else:  # a Claude planner would call the API: warm up everything but planning
                from sage.retrieve import retrieve

                retrieve(settings, "population of Ohio", top_k=3)
                agent.run_sql("SELECT 1 AS one FROM public.geography LIMIT 1", settings, record=False)
        except Exception:  # warming up is an optimisation; the first real question reports real problems
            pass

    threading.Thread(target=work, name="sage-warm-up", daemon=True).start()


@st.cache_resource(show_spinner=False)
def _planner(_settings: Settings, key: int) -> tuple[Any, SageError | None]:
    try:
        return agent.make_planner(_settings), None
    except SageError as exc:
        return None, exc


def get_planner(settings: Settings) -> tuple[Any, SageError | None]:
    """The configured planner (built once per process), or the error that explains why there is none."""
    return _planner(settings, hash(settings))


def sidebar(settings: Settings) -> None:
    """The planner indicator (and how to enable Claude), on every page."""
    with st.sidebar:
        st.markdown("**Planner**")
        if settings.effective_planner == "claude":
            st.success(f"Claude · {md(settings.model)}", icon=":material/auto_awesome:")
            st.caption("Claude plans each question from the schema and variable descriptions; no rows are sent.")
        else:
            st.info("Offline planner", icon=":material/offline_bolt:")
            st.caption(
                "Answers common questions with built-in rules, with no network. To let Claude plan any question, "
                "set ANTHROPIC\\_API\\_KEY in the environment or in .streamlit/secrets.toml and restart the app."
            )
        st.caption(f"Data: {SOURCE}.")


# --------------------------------------------------------------------------------------------------------------
# errors


_HELP = {
    "no_key": "Set ANTHROPIC_API_KEY (environment or .streamlit/secrets.toml) and restart, or use the offline "
    "planner with SAGE_PLANNER=offline.",
    "bad_key": "Check ANTHROPIC_API_KEY: the Anthropic API refused it. Or use SAGE_PLANNER=offline.",
    "rate_limited": "The Anthropic API is busy: wait a minute and ask again, or use SAGE_PLANNER=offline.",
    "network": "The Anthropic API could not be reached: check the network and ask again.",
    "api": "The Anthropic API failed: ask again in a moment.",
    "bad_answer": "The planner's answer could not be used: ask again or rephrase the question.",
    "database_down": "Check that the database is running (DATABASE_URL or SAGE_DATA_DIR), then reload the page.",
    "database": "Check the database (DATABASE_URL or SAGE_DATA_DIR), then reload the page.",
    "not_set_up": "Run python -m sage setup (or rebuild the index on the Status page), then ask again.",
    "retrieval": "Rebuild the index on the Status page, or run python -m sage setup.",
    "embedding": "Check SAGE_EMBEDDING_MODEL, or unset it to use the bundled model.",
    "guard": "Nothing was run. Only one SELECT over public.geography, public.variables and public.estimates "
    "is allowed.",
    "timeout": "Ask about fewer places (one state, or the top 10), or raise SAGE_STATEMENT_TIMEOUT_MS.",
    "permission": "The read-only role may only read the three census tables.",
    "undefined": "Check the table and column names on the Explore page, then edit the SQL.",
    "attempts_exhausted": "Rephrase the question, or edit the SQL below and run it again.",
}


def show_error(error: SageError) -> None:
    """An error as a user should see it: what happened (escaped) and what to do next (ours, static)."""
    kind = getattr(error, "kind", "error") or "error"
    if kind.startswith("question"):
        st.warning(md(error.message), icon=":material/edit_note:")
        return
    help_text = _HELP.get(kind) or _HELP.get(type(error).__name__.replace("Error", "").lower())
    title = {
        "guard": "The SQL guard refused this query.",
        "timeout": "The query took too long.",
        "attempts_exhausted": "No working query.",
    }.get(kind, "Something went wrong.")
    body = f"**{title}** {md(error.message)}"
    if help_text:
        body += f"\n\n{md(help_text)}"
    st.error(body, icon=":material/error:")


# --------------------------------------------------------------------------------------------------------------
# the conversation and the answer card


def new_turn(question: str, answer: agent.Answer, kind: str = "ask") -> dict:
    """A turn of the conversation: plain data kept in ``st.session_state``."""
    seq = st.session_state.get("_turn_seq", 0) + 1
    st.session_state["_turn_seq"] = seq
    return {"id": seq, "kind": kind, "question": question, "answer": answer, "spec": None, "draw_ms": None}


def chart_spec(turn: dict) -> charts.ChartSpec | None:
    """The turn's chart, built once (the card is redrawn on every rerun)."""
    answer: agent.Answer = turn["answer"]
    if not answer.answered:
        return None
    if turn.get("spec") is None:
        started = time.perf_counter()
        turn["spec"] = charts.build(answer.result.columns, answer.result.rows, answer.display_hint)
        turn["draw_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return turn["spec"]


def run_with_status(question: str, settings: Settings, planner: Any) -> dict:
    """Ask, showing the pipeline stages live in an ``st.status`` box, then the per-stage timings; a new turn."""
    box = st.status(STAGES["retrieving"] + "…", expanded=False)

    def progress(stage: str, info: dict) -> None:
        if stage in STAGES:
            label = STAGES[stage] + (f" (try {info['attempt']})" if info.get("attempt", 1) > 1 else "")
            box.update(label=label + "…")

    answer = agent.ask(question, settings, planner=planner, progress=progress)
    turn = new_turn(question, answer)
    if answer.answered:
        box.update(label=STAGES["drawing"] + "…")
        chart_spec(turn)
    _finish_status(box, turn)
    return turn


def _finish_status(box, turn: dict) -> None:
    answer: agent.Answer = turn["answer"]
    t = dict(answer.timings_ms)
    if turn.get("draw_ms") is not None:
        t["draw"] = turn["draw_ms"]
    box.markdown(" · ".join(f"{name} {t[k]:,.0f} ms" for k, name in TIMING_NAMES if k in t and k != "total"))
    total = (t.get("total", 0) + t.get("draw", 0)) / 1000
    if answer.answered:
        tries = f" · {answer.tries} tries" if answer.tries > 1 else ""
        box.update(label=f"Answered in {total:.2f} s{tries}", state="complete")
    elif answer.declined:
        box.update(label=f"Not answerable with this data ({total:.2f} s)", state="complete")
    else:
        box.update(label=f"No answer ({total:.2f} s)", state="error")


def answer_card(turn: dict, settings: Settings, *, store: str = "turns", slot: Any = None) -> None:
    """Everything a user sees for one answer (DESIGN.md "Answer card").

    ``store``/``slot`` say where an edited-and-rerun SQL goes: appended to ``st.session_state[store]`` (the Ask
    conversation) or put in ``st.session_state[store][slot]`` (a History entry).
    """
    answer: agent.Answer = turn["answer"]
    key = f"{store}-{turn['id']}"
    if answer.answered:
        _answered(turn, answer, key)
    elif answer.declined:
        _declined(answer, key)
    else:
        if answer.error is not None:
            show_error(answer.error)
        if answer.assumptions:
            st.markdown("**Assumptions**\n" + bullets(answer.assumptions))
        if answer.sql:
            st.code(pretty_sql(answer.sql), language="sql", wrap_lines=True)
        _attempts(answer)
    if answer.sql or (answer.error is not None and answer.error.kind in ("guard", "attempts_exhausted")):
        _edit_box(turn, settings, key, store, slot)
    _footer(turn, answer)


def _answered(turn: dict, answer: agent.Answer, key: str) -> None:
    spec = chart_spec(turn)
    result = answer.result
    name = _file_name(turn["question"])
    left, right = st.columns([5, 4], gap="large")
    with left:
        if result.row_count == 0:
            st.info("The query ran but returned no rows: the place or the measure may not be in the data. "
                    "Check the assumptions and the SQL.", icon=":material/search_off:")
        elif spec.kind in ("big", "statrow"):
            _metrics(spec)
        elif spec.chart is not None:
            st.altair_chart(spec.chart, key=f"{key}-chart")
        else:
            _table(result, key, name, height=min(420, 38 + 35 * max(1, result.row_count)))
        if spec.fallback_reason and result.row_count:
            st.caption(md(spec.fallback_reason))
        if spec.note:
            st.caption(md(spec.note))
        if result.truncated:
            st.warning(
                f"Showing the first {result.row_count:,} rows: the result was cut at the row limit "
                "(SAGE_MAX_ROWS) or the size limit.",
                icon=":material/content_cut:",
            )
    with right:
        if answer.assumptions:
            st.markdown("**Assumptions**\n" + bullets(answer.assumptions))
        st.markdown("**SQL**")
        st.code(pretty_sql(answer.sql), language="sql", wrap_lines=True)
    if spec.kind != "table" and result.row_count:
        with st.expander(f"Data · {result.row_count:,} row{'s' if result.row_count != 1 else ''}",
                         icon=":material/table_view:"):
            _table(result, key, name)
    _attempts(answer)


def _file_name(question: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", question.lower()).strip("-")[:60].rstrip("-")
    return f"census-sage-{slug or 'answer'}.csv"


def _metrics(spec: charts.ChartSpec) -> None:
    if spec.note and spec.kind == "statrow":
        st.caption(md(spec.note))
    cols = st.columns(len(spec.metrics)) if len(spec.metrics) > 1 else [st.container()]
    for col, metric in zip(cols, spec.metrics):
        with col:
            st.metric(
                md(metric.label),
                metric.value,
                delta=metric.moe,
                delta_color="off",
                delta_arrow="off",
                delta_description="90% margin of error" if metric.moe else None,
                border=True,
            )


def _column_config(columns: list[str]) -> dict:
    config = {}
    for col in columns:
        unit = charts.unit_of(col)
        if col.lower() in ("margin_error", "moe") or col.endswith("_moe"):
            config[col] = st.column_config.NumberColumn(col, format="localized")
        elif unit == "dollars":
            config[col] = st.column_config.NumberColumn(col, format="dollar")
        elif unit == "count":
            config[col] = st.column_config.NumberColumn(col, format="localized")
    return config


def _table(result, key: str, file_name: str, height: int | str = "auto") -> None:
    frame = charts.to_frame(result.columns, result.rows)
    numeric = [c for c in frame.columns if str(frame[c].dtype) not in ("object", "str", "string")]
    st.dataframe(frame, hide_index=True, height=height, column_config=_column_config(numeric))
    st.download_button(
        "Download CSV",
        data=frame.to_csv(index=False).encode("utf-8"),
        file_name=file_name,
        mime="text/csv",
        key=f"{key}-csv",
        on_click="ignore",
        icon=":material/download:",
    )


def _declined(answer: agent.Answer, key: str) -> None:
    st.info(md(answer.decline or "The data cannot answer this question."),
            icon=":material/help:")
    others = answer.assumptions[1:] if answer.assumptions else []
    if others:
        st.markdown(bullets(others))
    if answer.suggestions:
        st.markdown("**Try one of these instead:**")
        for i, suggestion in enumerate(answer.suggestions[:4]):
            st.button(md(suggestion), key=f"{key}-suggest-{i}", on_click=ask_later, args=(suggestion,),
                      icon=":material/arrow_forward:")


def _attempts(answer: agent.Answer) -> None:
    earlier = [a for a in answer.attempts if a.sql]
    if not earlier:
        return
    with st.expander(f"Earlier tries ({len(earlier)})", icon=":material/history:"):
        for i, attempt in enumerate(earlier, 1):
            st.markdown(f"**Try {i}:** {md(attempt.error)}")
            st.code(pretty_sql(attempt.sql), language="sql", wrap_lines=True)


def _edit_box(turn: dict, settings: Settings, key: str, store: str, slot: Any) -> None:
    answer: agent.Answer = turn["answer"]
    last_sql = pretty_sql(answer.sql or (answer.attempts[-1].sql if answer.attempts else ""))
    with st.expander("Edit the SQL and run it again", icon=":material/edit:"):
        st.text_area("SQL", value=last_sql, key=f"{key}-sql", height=160, label_visibility="collapsed")
        st.button("Run again", key=f"{key}-run", type="primary", icon=":material/play_arrow:",
                  on_click=_run_edited, args=(settings, turn["question"], f"{key}-sql", store, slot))
        st.caption("The edited SQL goes through the same guard and read-only role as a planned query.")


def _run_edited(settings: Settings, question: str, sql_key: str, store: str, slot: Any) -> None:
    """Button callback: guard and run the edited SQL; the result becomes a new turn (or replaces the entry)."""
    sql = st.session_state.get(sql_key, "")
    answer = agent.run_sql(sql, settings, question=question)
    turn = new_turn(question, answer, kind="sql")
    if slot is None:
        st.session_state.setdefault(store, []).append(turn)
    else:
        st.session_state.setdefault(store, {})[slot] = turn


def ask_later(question: str) -> None:
    """Button callback (examples, suggestions): ask ``question`` on the Ask page's next run."""
    st.session_state["pending_question"] = question


def _footer(turn: dict, answer: agent.Answer) -> None:
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
    else:
        planner = f"Claude ({answer.model})" if answer.planner == "claude" and answer.model else (
            f"the {answer.planner} planner" if answer.planner else "no planner")
        verb = "Answered" if answer.answered else "Declined" if answer.declined else "Tried"
        tries = answer.tries
        who = f"{verb} by {planner}" + (f" · {tries} {'try' if tries == 1 else 'tries'}" if tries else "")
    t = dict(answer.timings_ms)
    if turn.get("draw_ms") is not None:
        t["draw"] = turn["draw_ms"]
    timings = " · ".join(f"{name} {t[k]:,.0f} ms" for k, name in TIMING_NAMES if k in t)
    st.caption(md(f"{who} · {timings}"))


def _short_label(label: str, table_id: str | None = None) -> str:
    """``Estimate!!Total:!!Unemployed`` -> ``Unemployed``; a bare total names its table."""
    steps = [p.strip().rstrip(":") for p in label.split("!!") if p.strip() and p.strip().lower() != "estimate"]
    if len(steps) > 1:
        steps = [s for s in steps if s.lower() != "total"]
    text = ": ".join(steps)[:90]
    if text.lower() in ("", "total") and table_id:
        return f"total of table {table_id}"
    return text

