"""What an answer says in words before its chart: the headline (:mod:`sage.headline`), the place in context
(:mod:`sage.context`) and, for a place name alone, the profile (:mod:`sage.profile`).

Called by the question loop once an answer has rows, for every way an answer comes about (either planner, the
verified-answer library, edited SQL).  It works from what the answer already holds — the rows, the offline
planner's frame when there is one, what the plan says the rows compare — and never costs the answer anything: a
context that cannot be read leaves the answer as it was.
"""

from __future__ import annotations

import logging
from typing import Any

from . import context, headline, profile
from .answer import Answer
from .census.semantic import Measure
from .errors import SageError
from .planner.offline.catalog import Catalog, County, Locality, load_catalog
from .settings import Settings

log = logging.getLogger(__name__)


def describe(answer: Answer, settings: Settings, *, compare: str | None = None) -> None:
    """Fill in ``answer.headline``, ``answer.context`` / ``context_note`` and ``answer.profile``."""
    result = answer.result
    if result is None or not result.rows:
        return
    try:
        cat = load_catalog(settings)
    except SageError as exc:
        log.warning("no catalog for the headline's context: %s", exc)
        cat = None
    period = _period(answer)
    if answer.display_hint == "profile" and cat is not None:
        found = profile.read(result, cat, settings)
        if found is not None:
            answer.profile = found.to_dict()
            answer.headline = profile.headline(found, period)
            answer.context_note = found.note
            return
    frame = answer.frame or {}
    said = headline.headline(result.columns, result.rows, compare=compare, period=period,
                             condition=_condition(frame), ranked=bool(frame.get("rank")) or None)
    answer.headline = said.text if said is not None else None
    if cat is None:
        return
    found_place = _place_and_measures(answer, cat)
    if found_place is None:
        return
    geo_id, measures, shown = found_place
    got = context.for_answer(settings, cat, geo_id, measures, shown)
    answer.context = got.to_list()
    answer.context_note = got.note


def _period(answer: Answer) -> str | None:
    vintages = answer.vintages
    if not vintages or len(vintages) > 2:
        return None
    return " and ".join(vintages)


def _condition(frame: dict[str, Any]) -> str | None:
    """A threshold list's limit in words ("unemployment rate above 5%"), from the offline planner's frame."""
    if frame.get("op") != "list" or not frame.get("conditions"):
        return None
    parts = []
    for c in frame["conditions"]:
        name = str(c.get("measure", "")).replace("_", " ")
        parts.append(f"{name} {c.get('text') or ''}".strip())
    text = " and ".join(parts)
    return f"{headline.article(text)} {text}"


def _place_and_measures(answer: Answer, cat: Catalog) -> tuple[str, list[Measure], dict[str, float | None]] | None:
    """The one place an answer shows figures of, the measures it shows and the values it shows for them — from the
    frame (one named place, the latest period, plain values) or, without one, from the single row's columns."""
    result = answer.result
    if result is None or len(result.rows) != 1:
        return None
    record = dict(zip(result.columns, result.rows[0], strict=False))
    by_name = {m.name: m for m in cat.measures}
    frame = answer.frame
    if frame:
        geo = frame.get("geo") or {}
        places = geo.get("places") or []
        if frame.get("op") != "value" or len(places) != 1 or frame.get("periods") or frame.get("ratio") or \
                frame.get("per_n") or frame.get("with_us") or geo.get("level") not in ("state", "county", "place"):
            return None
        measures = [by_name[n] for n in frame.get("measures", []) if n in by_name]
        geo_id = str(places[0].get("geo_id"))
    else:
        geo_id = _row_place(record, cat) or ""
        measures = [m for m in cat.measures if m.column in record and not m.cross]
        measures = list({m.column: m for m in reversed(measures)}.values())[::-1]  # one measure per column
    if not geo_id or not measures:
        return None
    shown = {m.name: _float(record.get(m.column)) for m in measures if m.column in record}
    return geo_id, measures, shown


def _row_place(record: dict[str, Any], cat: Catalog) -> str | None:
    """The geography row a result row names: by its GEO_ID, else by its Census names."""
    for key in ("geo_id", "geoid"):
        value = record.get(key)
        if isinstance(value, str) and value in cat.by_geo_id:
            return value
    county, state, name = record.get("county_name"), record.get("state_name"), record.get("name")
    for row in cat.by_geo_id.values():
        if isinstance(row, County):
            if county == row.name and state == row.state.name:
                return row.geo_id
        elif isinstance(row, Locality):
            if name == row.full_name:
                return row.geo_id
        elif county is None and (state == row.name or name == row.name):
            return row.geo_id
    return None


def _float(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


__all__ = ["describe"]
