"""The words of an answer card, above its chart: the headline, the place beside its state and the nation, and a
place's profile (a table per topic; each measure a link that asks it as a question).  Drawing only: the sentences
and figures come from ``sage`` (``Answer.headline``, ``Answer.context``, ``Answer.profile``)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from sage import charts, links
from sage.answer import Answer

from .text import md

#: the SQL box's height in pixels: the chart and the reading lead, the SQL scrolls in its own box
SQL_HEIGHT = 260
#: about how many lines fit in that height, and how many characters a line of the card's column holds
SQL_LINES = 11
SQL_CHARS_PER_LINE = 55


def headline_and_context(answer: Answer) -> None:
    """The answer in one sentence, then the comparisons with the parents (and the one note on what has none)."""
    if answer.headline:
        st.markdown(f"#### {md(answer.headline)}")
    several = len({c.get("measure") for c in answer.context}) > 1
    lines = []
    for c in answer.context:
        head = f"{charts.humanize(str(c.get('measure') or ''))}: " if several else ""
        lines.append(f"- {md(head + str(c.get('comparison') or ''))}")
    if lines:
        st.markdown("\n".join(lines))
    if answer.context_note and answer.profile is None:
        st.caption(md(answer.context_note))


def profile_view(answer: Answer, app_url: str, planner: str | None) -> None:
    """Every measure of the place, grouped as Census Reporter groups them: per topic a table of the measure (a link
    that asks it), its value with its margin, and how it compares with the state and the nation."""
    profile: dict[str, Any] = answer.profile or {}
    group = None
    for section in profile.get("sections", []):
        if section["group"] != group:
            group = section["group"]
            st.subheader(md(group), divider="gray")
        rows = ["| Measure | Value | Compared with |", "|---|---|---|"]
        for item in section["items"]:
            url = app_url + links.query_string([item["question"]], planner)
            value = md(item["text"])
            if item.get("reliability"):
                value += f" · {md(item['reliability'])}"
            compared = "; ".join(md(c["comparison"]) for c in item.get("context", [])) or "—"
            rows.append(f"| [{md(item['label'])}]({url}) | {value} | {compared} |")
        st.markdown(f"**{md(section['topic'])}**\n\n" + "\n".join(rows))
    if profile.get("note"):
        st.caption(md(profile["note"]))
    st.caption("Each measure is a link that asks it as a question on its own.")


def sql_box(sql: str) -> None:
    """The SQL in a box of bounded height with its own scroll bar and copy button (a short one fits its text)."""
    lines = sum(1 + len(line) // SQL_CHARS_PER_LINE for line in sql.splitlines())
    st.code(sql, language="sql", wrap_lines=True, height=SQL_HEIGHT if lines > SQL_LINES else "content")


__all__ = ["SQL_HEIGHT", "headline_and_context", "profile_view", "sql_box"]
