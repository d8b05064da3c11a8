"""An :class:`~sage.answer.Answer` as a notebook shows it (``Answer._repr_html_``, ``_repr_mimebundle_``): the
question and how it was read, the chart the app draws (or its numbers), the significance sentence, the table, the
assumptions and the SQL — the answer card's contents, without Streamlit.

Every text in it (the question, the reading, the assumptions, the SQL, the cells) is HTML-escaped: a question or a
place name with markup in it is shown as text, never run.  The chart is Vega-Lite rendered by Altair's own HTML
(what Altair shows in a notebook), with ``<``, ``>`` and ``&`` in its data escaped, so a cell cannot close the
script it sits in.
"""

from __future__ import annotations

import html
import json
import uuid
from typing import Any

from . import significance

#: an :class:`~sage.answer.Answer` (not imported: ``sage.answer`` imports this module when a notebook shows one)
Answer = Any

#: rows shown in the notebook's table (``Answer.df`` has them all)
MAX_ROWS = 50


class _ScriptSafeJSON(json.JSONEncoder):
    """JSON that can sit inside a ``<script>``: ``<``, ``>`` and ``&`` as ``\\u`` escapes (the same values)."""

    def encode(self, o: Any) -> str:
        return super().encode(o).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")

    def iterencode(self, o: Any, _one_shot: bool = False):
        for chunk in super().iterencode(o, _one_shot):
            yield chunk.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _e(text: Any) -> str:
    return html.escape(str(text))


def answer_html(answer: Answer) -> str:
    """The answer card as one HTML fragment."""
    parts = [f"<div class=\"sage-answer\"><p><strong>{_e(answer.question)}</strong></p>"]
    if answer.read_as and answer.read_as != answer.question:
        parts.append(f"<p><em>Read as:</em> {_e(answer.read_as)}</p>")
    if not answer.answered or answer.result is None:
        info = answer.error_info() or {"kind": "error", "message": "No answer."}
        parts.append(f"<p><strong>No answer ({_e(info['kind'])}):</strong> {_e(info['message'])}</p>")
        if answer.suggestions:
            parts.append("<p>Try:</p><ul>" + "".join(f"<li>{_e(s)}</li>" for s in answer.suggestions) + "</ul>")
        parts.append("</div>")
        return "".join(parts)
    parts.append(_chart_html(answer))
    from .charts import change_of

    said = significance.sentence(answer.significance, answer.significance_note,
                                 change=change_of(answer.result.columns) is not None)
    if said:
        parts.append(f"<p>{_e(said)}</p>")
    frame = answer.df
    shown = frame.head(MAX_ROWS).to_html(index=False, escape=True, na_rep="", border=0)
    parts.append(shown)
    if len(frame) > MAX_ROWS or answer.result.truncated:
        parts.append(f"<p><small>{len(frame):,} rows{' (truncated)' if answer.result.truncated else ''}; "
                     f"the first {MAX_ROWS} shown, <code>.df</code> has them all.</small></p>")
    if answer.assumptions:
        parts.append("<p><strong>Assumptions</strong></p><ul>"
                     + "".join(f"<li>{_e(a)}</li>" for a in answer.assumptions) + "</ul>")
    for notice in answer.notices:
        parts.append(f"<p><small>{_e(notice)}</small></p>")
    parts.append(f"<details><summary>SQL</summary><pre>{_e(answer.sql)}</pre></details>")
    parts.append(f"<p><small>{_e(_footer(answer))}</small></p></div>")
    return "".join(parts)


def _chart_html(answer: Answer) -> str:
    spec = answer.chart_spec()
    out = []
    if spec.chart is not None:
        out.append(spec.chart.to_html(fullhtml=False, output_div=f"sage-chart-{uuid.uuid4().hex[:12]}",
                                      json_kwds={"cls": _ScriptSafeJSON}))
    elif spec.metrics:
        out.append("<p>" + " &nbsp; ".join(
            f"{_e(m.label)}: <strong>{_e(m.value)}</strong>" + (f" {_e(m.moe)}" if m.moe else "")
            for m in spec.metrics) + "</p>")
    for why in (spec.fallback_reason, spec.note):
        if why:
            out.append(f"<p><small>{_e(why)}</small></p>")
    return "".join(out)


def _footer(answer: Answer) -> str:
    tries = f"{answer.tries} tr{'y' if answer.tries == 1 else 'ies'}"
    logged = f", id {answer.id}" if answer.id is not None else ""
    return f"{answer.planner}, {tries}, {answer.timings_ms.get('total', 0):.0f} ms{logged}"


def answer_text(answer: Answer) -> str:
    """The answer in plain text (a terminal's ``repr``): the question, the reading, the outcome, the SQL."""
    lines = [answer.question]
    if answer.read_as and answer.read_as != answer.question:
        lines.append(f"Read as: {answer.read_as}")
    if answer.answered and answer.result is not None:
        lines.append(f"{answer.result.row_count} row(s): {', '.join(answer.result.columns)}")
        lines.append(answer.sql)
    else:
        info = answer.error_info() or {"kind": "error", "message": "No answer."}
        lines.append(f"No answer ({info['kind']}): {info['message']}")
    return "\n".join(lines)


__all__ = ["MAX_ROWS", "answer_html", "answer_text"]
