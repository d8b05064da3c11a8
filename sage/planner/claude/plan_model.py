"""The Claude planner's output contract: the JSON every answer is decoded into, and the schema sent for it.

:class:`PlanModel` (with its :class:`PlanDecline`) is what ``client.messages.parse(..., output_format=PlanModel)``
validates a reply into, and :data:`PLAN_SCHEMA` is the strict form of its JSON schema the SDK sends as
``output_config.format``.  It is apart from the planner (:mod:`sage.planner.claude.claude`: the request, the call, the
errors, the turn of a reply into a :class:`~sage.planner.base.Plan`) because it is a contract of its own: what the
model may answer and how leniently that is read, tested and benchmarked without a client.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import pydantic
from anthropic import transform_schema

from ...census.schema import LEVELS
from ...types import DISPLAY_HINTS, DisplayHint
from ..edits import parse_kinds

DECLINE_KINDS = ("declined", "needs_fetch", "ambiguous")
COMPARISONS = ("none", "places", "change", "difference")
#: the most readings an ambiguous decline offers
MAX_SUGGESTIONS = 8
_PERIOD = re.compile(r"^(\d{4})-(\d{4})$")
#: the closed set of follow-up edits, as the schema gives them to the model
EditName = Literal["swap_places", "add_places", "swap_measure", "add_measure", "drop_measure", "narrow", "widen",
                   "ranking", "pick", "period", "dollars", "total", "significance", "display"]


def _strings(value: Any) -> Any:
    """A string as a list of one; a list's items as stripped strings, empty ones dropped; anything else as is."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    return value


class PlanDecline(pydantic.BaseModel):
    """Why ``sql`` is empty: the data cannot answer it (``declined``); loading ACS data would (``needs_fetch``:
    ``tables`` listed as not loaded, or loaded tables for other ``geographies`` (levels), ``states`` or an earlier
    ``vintage``, a release year); or a name has several readings (``ambiguous``: ``suggestions`` asks the question
    again about each).  Lenient: an unknown kind is ``declined``, ids and postal codes are upper-cased, unknown
    levels and malformed codes are dropped, a vintage that is no year is none."""

    model_config = pydantic.ConfigDict(json_schema_extra=lambda schema: _bare_schema(schema))

    kind: Literal["declined", "needs_fetch", "ambiguous"]
    tables: list[str] = pydantic.Field(default_factory=list)
    geographies: list[str] = pydantic.Field(default_factory=list)
    states: list[str] = pydantic.Field(default_factory=list)
    vintage: int | None = None
    suggestions: list[str] = pydantic.Field(default_factory=list)

    @pydantic.field_validator("kind", mode="before")
    @classmethod
    def _known_kind(cls, value: Any) -> Any:
        return value if value in DECLINE_KINDS else "declined"

    @pydantic.field_validator("tables", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        value = _strings(value)
        return [t.upper() for t in value] if isinstance(value, list) else value

    @pydantic.field_validator("geographies", mode="before")
    @classmethod
    def _levels(cls, value: Any) -> Any:
        value = _strings(value)
        return list(dict.fromkeys(g.lower() for g in value if g.lower() in LEVELS)) if isinstance(value, list) \
            else value

    @pydantic.field_validator("states", mode="before")
    @classmethod
    def _postal(cls, value: Any) -> Any:
        value = _strings(value)
        return list(dict.fromkeys(x.upper() for x in value if re.fullmatch(r"[A-Za-z]{2}", x))) \
            if isinstance(value, list) else value

    @pydantic.field_validator("vintage", mode="before")
    @classmethod
    def _year(cls, value: Any) -> Any:
        text = str(value).strip() if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
        mt = re.fullmatch(r"(?:\d{4}-)?(\d{4})", text)  # 2016, or the period "2012-2016" ending in it
        return int(mt.group(1)) if mt and 2005 <= int(mt.group(1)) <= 2100 else None

    @pydantic.field_validator("suggestions", mode="before")
    @classmethod
    def _questions(cls, value: Any) -> Any:
        value = _strings(value)
        return list(dict.fromkeys(value))[:MAX_SUGGESTIONS] if isinstance(value, list) else value


class PlanModel(pydantic.BaseModel):
    """The JSON every answer is decoded into (see ``SYSTEM_PROMPT`` # Output).

    Lenient where that is harmless: one string of assumptions is a list of one, empty assumptions are dropped, an
    unknown (or missing) display hint is ``table``, ``display_hint`` is read like ``displayHint``, a missing
    standalone reading is empty (the planner uses the question), an unknown (or missing) comparison is ``none``,
    periods other than two ACS periods ("2014-2018") are none, and SQL loses surrounding whitespace and trailing
    semicolons.
    """

    model_config = pydantic.ConfigDict(json_schema_extra=lambda schema: _bare_schema(schema))

    #: first, so the model resolves a follow-up before it writes the SQL
    standalone: str = pydantic.Field(
        description="The question as read, standing on its own (a follow-up spelled out in full)."
    )
    #: then what the rows compare, so that the SQL is written with the columns the test reads
    comparison: Literal["none", "places", "change", "difference"]
    periods: list[str] = pydantic.Field(description="A change's two periods, earlier first; else [].")
    sql: str = pydantic.Field(description='One PostgreSQL SELECT statement, or "" when the data cannot answer.')
    assumptions: list[str] = pydantic.Field(
        description="Short plain-English assumptions a census analyst needs to trust the answer."
    )
    display_hint: DisplayHint = pydantic.Field(validation_alias=pydantic.AliasChoices("displayHint", "display_hint"))
    #: a follow-up's edits of the latest turn's reading, by name (:class:`~sage.planner.edits.EditKind`)
    edits: list[EditName] = pydantic.Field(description="A follow-up's edits, by name; [] for a question read alone.")
    decline: PlanDecline | None = pydantic.Field(default=None, description='Only with sql "".')

    @pydantic.model_validator(mode="before")
    @classmethod
    def _defaults(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = {"standalone": "", "comparison": "none", "periods": [], "assumptions": [], "edits": [], **data}
            if "displayHint" not in data and "display_hint" not in data:
                data["displayHint"] = "table"
        return data

    @pydantic.field_validator("comparison", mode="before")
    @classmethod
    def _known_comparison(cls, value: Any) -> Any:
        return value if value in COMPARISONS else "none"

    @pydantic.field_validator("periods", mode="before")
    @classmethod
    def _two_periods(cls, value: Any) -> Any:
        """Two ACS periods ("2014-2018"), earlier first; anything else is none."""
        value = _strings(value)
        if not isinstance(value, list):
            return []
        found = [p.replace("\u2013", "-") for p in value]
        if len(found) != 2 or not all(_PERIOD.match(p) for p in found) or found[0] == found[1]:
            return []
        return sorted(found, key=lambda p: (p[-4:], p))

    @pydantic.field_validator("standalone", mode="before")
    @classmethod
    def _reading(cls, value: Any) -> Any:
        return " ".join(value.split()) if isinstance(value, str) else "" if value is None else value

    @pydantic.field_validator("sql")
    @classmethod
    def _trimmed(cls, sql: str) -> str:
        sql = sql.strip()
        while sql.endswith(";"):
            sql = sql[:-1].rstrip()
        return sql

    @pydantic.field_validator("assumptions", mode="before")
    @classmethod
    def _as_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list):
            return [str(a).strip() for a in value if str(a).strip()]
        return value  # not a list: validation fails

    @pydantic.field_validator("edits", mode="before")
    @classmethod
    def _known_edits(cls, value: Any) -> Any:
        """The names of the closed set, once each; an unknown name is left out (it changes nothing that runs)."""
        value = _strings(value)
        return [k.value for k in parse_kinds(value)] if isinstance(value, list) else []

    @pydantic.field_validator("display_hint", mode="before")
    @classmethod
    def _known_hint(cls, value: Any) -> Any:
        return value if isinstance(value, str) and value in DISPLAY_HINTS else "table"


def _bare_schema(schema: dict[str, Any]) -> None:
    """The schema the model needs: pydantic's ``title`` of every field and the class docstring (this module's notes,
    not the model's) only cost tokens."""
    schema.pop("title", None)
    schema.pop("description", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
        prop.pop("default", None)


#: what ``messages.parse`` sends as ``output_config.format.schema``: :class:`PlanModel` in the SDK's strict form
PLAN_SCHEMA: dict[str, Any] = transform_schema(pydantic.TypeAdapter(PlanModel).json_schema())


__all__ = ["COMPARISONS", "DECLINE_KINDS", "PLAN_SCHEMA", "PlanDecline", "PlanModel"]
