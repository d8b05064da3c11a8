"""The blocks of the Claude planner's per-question message, each written as text: the places the question names,
the retrieved context, the failed attempts, the earlier turns of the conversation and the verified answers.

Each block is a pure function of its data, with the limits that keep a runaway input short.  They sit apart from
:func:`sage.planner.claude.message.build_user_message`, which fences them in their tags, because the worked follow-ups
of the cached prefix (:mod:`sage.planner.claude.examples`) render their conversation with the same
:func:`format_conversation`: both import this module, and it imports neither.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...census.periods import newest_pair
from ...census.schema import LEVELS
from ...types import Chunk
from ..edits import edit_guide

#: how many readings of an ambiguous name, or counties of one name, the places block lists
MAX_READINGS = 6
#: longest note of the place reader kept
MAX_PLACE_NOTE_CHARS = 300


def _reading(r: Any) -> str:
    population = _field(r, "population")
    return f"{_field(r, 'label')}" + (f" ({int(population):,})" if population is not None else "")


def _place_line(pl: Any) -> str:
    """One place of the places block: “Austin, TX” → place 1600000US4805000 'Austin city, Texas' (has: ...)."""
    text, kind = _one_line(str(_field(pl, "text") or "")), str(_field(pl, "kind") or "")
    note = _one_line(_trim(str(_field(pl, "note") or ""), MAX_PLACE_NOTE_CHARS))
    readings = list(_field(pl, "readings") or ())
    if kind in ("ambiguous", "counties"):
        shown = " | ".join(_reading(r) for r in readings[:MAX_READINGS])
        more = f" | and {len(readings) - MAX_READINGS} more" if len(readings) > MAX_READINGS else ""
        head = "ambiguous" if kind == "ambiguous" else f"a county name in {len(readings)} states"
        return f"- “{text}” → {head}: {shown}{more}" + (f"; {note}" if note else "")
    if kind == "level":
        level = _field(pl, "level")
        rows = "has rows" if _field(pl, "loaded") else f"no rows yet (census fetch --geographies {level})"
        named = f" ({note})" if note and note.lower() != text.lower() else ""
        return f"- “{text}” → level {level}{named}: {rows}"
    if kind == "unknown":
        return f"- “{text}” → not placed: {note}" if text else f"- not placed: {note}"
    facts = []
    has = list(_field(pl, "has") or ())
    if kind == "place":
        facts.append("has: " + (", ".join(has) if has else "nothing"))
    same = _field(pl, "same_area")
    if same is not None:
        facts.append(f"same area as {_field(same, 'label')} {_field(same, 'geo_id')}")
    line = f"- “{text}” → {kind} {_field(pl, 'geo_id')} '{_field(pl, 'name')}'"
    line += f" ({'; '.join(facts)})" if facts else ""
    return line + (f"; reader: {note}" if note else "")


def format_places(grounding: Any) -> str:
    """The places block: each place the question names as the place reader found it (its GEO_ID and Census NAME,
    what a Census place has figures for, the readings of an ambiguous name, a level asked for and whether it has
    rows), then the levels with rows.  ``grounding`` is a :class:`sage.planner.claude.resolve.Grounding` (or any object
    with ``places`` and ``levels``)."""
    places = list(_field(grounding, "places") or ())
    lines = [_place_line(pl) for pl in places] or ["- none named"]
    levels = list(_field(grounding, "levels") or ())
    if levels:
        missing = [level for level in LEVELS if level not in levels]
        lines.append(f"Levels with rows: {', '.join(levels)}"
                     + (f"; none yet: {', '.join(missing)} (census fetch --geographies)." if missing else "."))
    return "\n".join(lines)


#: longest text kept from one retrieved chunk (the longest table description is ~1,800): a runaway one is trimmed
MAX_CHUNK_CHARS = 2000
#: longest SQL / error text kept from one failed attempt
MAX_ATTEMPT_SQL_CHARS = 4000
MAX_ATTEMPT_ERROR_CHARS = 600

_INTERNAL_REF = re.compile(r'^\W*"?sage"?\s*\.', re.IGNORECASE)


def is_internal(chunk: Chunk) -> bool:
    """True for a chunk describing the product's own ``sage`` schema, which the planner must never see."""
    return bool(_INTERNAL_REF.match(chunk.object_ref or ""))


def _trim(text: str, limit: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _one_line(text: str) -> str:
    """Collapse a multi-line description into one line (variables are listed one per line)."""
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def _new_lines(text: str, shown: set[str], prefix: str = "") -> list[str]:
    """The lines of ``text`` not already in ``shown`` (which it updates), indented by ``prefix``."""
    out = []
    for line in text.splitlines():
        key = line.strip()
        if key and key not in shown:
            shown.add(key)
            out.append(prefix + line.rstrip())
    return out


def _without_aliases(text: str) -> str:
    """Drop the everyday-word aliases of a variable description: they help the embedding find it, but the model
    knows synonyms, and they are a third of the text."""
    return "\n".join(line for line in text.splitlines() if not line.strip().lower().startswith("also called:"))


def format_schema_context(chunks: Sequence[Chunk], measures: Sequence[Any] = (),
                          periods: Mapping[str, Sequence[str]] | None = None) -> str:
    """A compact, readable block of what retrieval found for this question.

    Tables come first with their retrieved columns indented under them, then the candidate ACS variables one per
    line (code, label, vintage, levels — whatever the retrieval helper put in ``content``, and every period loaded
    when ``periods`` maps the code to more than one), then the ACS tables that
    are not loaded (``acs_table`` chunks, one per line, marked as such), then anything else, then the
    semantic-layer ``measures`` (any objects with ``name``, ``formula``, ``unit`` and ``description``).
    Chunks about the internal ``sage`` schema are dropped here as a second line of defence; duplicates are dropped.
    """
    seen: set[tuple[str, str]] = set()
    kept: list[Chunk] = []
    for c in chunks:
        key = (c.object_type, c.object_ref)
        if is_internal(c) or key in seen:
            continue
        seen.add(key)
        kept.append(c)

    tables = [c for c in kept if c.object_type == "table"]
    columns = [c for c in kept if c.object_type == "column"]
    variables = [c for c in kept if c.object_type == "variable"]
    catalog = [c for c in kept if c.object_type == "acs_table"]
    others = [c for c in kept if c.object_type not in ("table", "column", "variable", "acs_table")]

    lines: list[str] = []
    by_table: dict[str, list[Chunk]] = {}
    for col in columns:
        by_table.setdefault(col.object_ref.rsplit(".", 1)[0], []).append(col)
    if tables or columns:
        lines.append("## Tables and columns")
        shown: set[str] = set()  # column descriptions repeat their table's comment: say it once
        for t in tables:
            lines.extend(_new_lines(_trim(t.content, MAX_CHUNK_CHARS), shown))
            for col in by_table.pop(t.object_ref, []):
                lines.extend(_new_lines(_trim(col.content, MAX_CHUNK_CHARS), shown, "  "))
        for table_ref, cols in by_table.items():
            lines.append(f"{table_ref} (columns):")
            for col in cols:
                lines.extend(_new_lines(_trim(col.content, MAX_CHUNK_CHARS), shown, "  "))
    if variables:
        lines.append("## Candidate variables (use these codes)")
        lines.extend(f"- {_one_line(_trim(_without_aliases(v.content), MAX_CHUNK_CHARS))}{_periods(v, periods)}"
                     for v in variables)
    if catalog:
        lines.append("## ACS tables that are NOT loaded (no rows in the data; fetchable: decline with needs_fetch)")
        lines.extend(f"- {_not_loaded_line(c.content)}" for c in catalog)
    if others:
        lines.append("## Other context")
        lines.extend(f"- {_one_line(_trim(o.content, MAX_CHUNK_CHARS))}" for o in others)
    if measures:
        lines.append("## Defined measures that match the question (formulas use variable codes)")
        lines.extend(_format_measure(m) for m in measures)
    if not lines:
        return "(nothing retrieved: rely on the tables and conventions in the instructions)"
    return "\n".join(lines)


def _periods(chunk: Chunk, periods: Mapping[str, Sequence[str]] | None) -> str:
    """"; periods loaded: 2014-2018, 2019-2023" for a variable loaded for several periods; with more than two, the
    pair a change compares (:func:`sage.census.periods.newest_pair`: after ``census update`` it is not the
    2014-2018 and 2019-2023 the instructions name as an example)."""
    found = list((periods or {}).get(chunk.object_ref) or ())
    if len(found) <= 1:
        return ""
    pair = newest_pair(found) if len(found) > 2 else None
    return f"; periods loaded: {', '.join(found)}" + (f"; a change compares {pair[0]} with {pair[1]}" if pair else "")


#: longest line kept of a not-loaded table (its title, universe and main lines)
MAX_CATALOG_LINE_CHARS = 220


def _not_loaded_line(text: str) -> str:
    """A not-loaded catalog table on one line: ``B25003 Tenure — universe: Occupied housing units; lines: Owner
    occupied; Renter occupied`` (the everyday words and the "not loaded" line are the section's heading)."""
    head, parts = "", []
    for line in (line.strip() for line in text.splitlines()):
        if line.startswith("ACS table "):
            head = line.removeprefix("ACS table ").replace(": ", " ", 1)
        elif line.startswith("Universe: "):
            parts.append("universe: " + line.removeprefix("Universe: "))
        elif line.startswith("Lines: "):
            parts.append("lines: " + line.removeprefix("Lines: "))
    text = head + (" — " + "; ".join(parts) if parts else "") if head else _one_line(text)
    return _trim(text, MAX_CATALOG_LINE_CHARS)


def _format_measure(m: Any) -> str:
    name = getattr(m, "name", "") or "measure"
    formula = getattr(m, "formula", "") or ""
    unit = getattr(m, "unit", "") or ""
    description = getattr(m, "description", "") or ""
    text = f"- {name}: {formula}" + (f" [{unit}]" if unit else "") + (f" — {description}" if description else "")
    return _one_line(_trim(text, MAX_CHUNK_CHARS))


def _attempt_fields(a: Any) -> tuple[str, str]:
    if isinstance(a, Mapping):
        return str(a.get("sql") or ""), str(a.get("error") or "")
    if isinstance(a, (tuple, list)):
        return str(a[0] or ""), str(a[1] if len(a) > 1 else "")
    return str(getattr(a, "sql", "") or ""), str(getattr(a, "error", "") or "")


def format_attempts(error_context: Sequence[Any]) -> str:
    """Earlier failed tries, oldest first: the SQL and the short error each one got."""
    if not error_context:
        return ""
    parts = [
        "## Earlier attempts that failed (oldest first)",
        "Each was rejected or failed with the error shown. Do not repeat any of them: fix the cause, or answer with "
        'sql "" if the data cannot answer the question.',
    ]
    for i, a in enumerate(error_context, 1):
        sql, error = _attempt_fields(a)
        parts.append(
            f"### Attempt {i}\n```sql\n{_trim(sql, MAX_ATTEMPT_SQL_CHARS) or '(empty)'}\n```\n"
            f"Error: {_one_line(_trim(error, MAX_ATTEMPT_ERROR_CHARS)) or '(none given)'}"
        )
    return "\n".join(parts)


#: longest text kept from one earlier turn's question or reading, and the most assumptions kept per turn
MAX_TURN_TEXT_CHARS = 600
MAX_TURN_ASSUMPTIONS = 8


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def format_conversation(turns: Sequence[Any]) -> str:
    """The earlier turns of a conversation, oldest first: each one's question, its reading, its SQL and its
    assumptions — never its rows (a turn is a :class:`~sage.planner.base.PriorTurn` or a mapping with those keys)."""
    parts = [edit_guide(),
             "Earlier turns of this conversation, oldest first (questions, readings, SQL and assumptions; no results):"]
    for i, turn in enumerate(turns, 1):
        question = _trim(str(_field(turn, "question") or ""), MAX_TURN_TEXT_CHARS)
        reading = _trim(str(_field(turn, "standalone") or ""), MAX_TURN_TEXT_CHARS)
        sql = _trim(str(_field(turn, "sql") or ""), MAX_ATTEMPT_SQL_CHARS)
        assumptions = [_one_line(_trim(str(a), MAX_TURN_TEXT_CHARS))
                       for a in list(_field(turn, "assumptions") or [])[:MAX_TURN_ASSUMPTIONS]]
        lines = [f"### Turn {i}", f"Question: {_one_line(question)}"]
        if reading:
            lines.append(f"Read as: {_one_line(reading)}")
        lines.append(f"SQL:\n```sql\n{sql}\n```" if sql else "SQL: (none: this turn was not answered)")
        if assumptions:
            lines.append("Assumptions:\n" + "\n".join(f"- {a}" for a in assumptions))
        parts.append("\n".join(lines))
    return "\n".join(parts)


def format_verified(entries: Sequence[Any]) -> str:
    """Verified answers to similar questions (objects or mappings with ``question``, ``standalone``, ``sql``,
    ``assumptions``, ``display_hint``), each as a question and the JSON answer a user marked right."""
    parts = ["Answers a user marked right for similar questions, closest first (follow them only where the question "
             "is the same):"]
    for i, v in enumerate(entries, 1):
        plan = {"standalone": str(_field(v, "standalone") or ""), "sql": _trim(str(_field(v, "sql") or ""),
                                                                                MAX_ATTEMPT_SQL_CHARS),
                "assumptions": [str(a) for a in list(_field(v, "assumptions") or [])[:MAX_TURN_ASSUMPTIONS]],
                "displayHint": str(_field(v, "display_hint") or "table")}
        question = _one_line(_trim(str(_field(v, "question") or ""), MAX_TURN_TEXT_CHARS))
        parts.append(f"### Verified {i}\nQuestion: {question}\nAnswer:\n{json.dumps(plan, indent=1)}")
    return "\n".join(parts)


__all__ = [
    "MAX_CHUNK_CHARS",
    "format_attempts",
    "format_conversation",
    "format_places",
    "format_schema_context",
    "format_verified",
    "is_internal",
]
