"""The values that flow between the stages: a retrieved :class:`Chunk`, the two progress callbacks, display hints.

A leaf module (it imports nothing of ``sage``), so a planner can name a chunk, or a loader its progress callback,
without importing the stage that produces it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

#: what a chunk of retrieval context describes: a table or column of the database, an ACS variable that has
#: estimates, or an ACS table of the offline catalog that is *not* loaded (fetchable from the Census Data API)
ObjectType = Literal["table", "column", "variable", "acs_table"]
OBJECT_TYPES: tuple[ObjectType, ...] = get_args(ObjectType)

#: how an answer is best drawn; a planner only names one, ``sage.charts`` decides what can really be drawn
#: ``profile``: every measure of one place, grouped by topic (a place name asked alone; :mod:`sage.profile`)
DisplayHint = Literal["big", "statrow", "bar", "grouped", "map", "table", "profile"]
#: the hints a planner may name (a profile is never planned: :mod:`sage.profile` makes it for a place name alone)
DISPLAY_HINTS: tuple[DisplayHint, ...] = tuple(h for h in get_args(DisplayHint) if h != "profile")

#: how a follow-up's reading starts its assumptions, in both planners ("Read as: median household income, ...")
READ_AS = "Read as: "

#: ``progress(step, done, total)`` of a long step (setup, loading, indexing, fetching, evaluating)
StepProgress = Callable[[str, int, int], None]
#: ``progress(stage, info)`` of the question loop; stages: retrieving, planning, checking, running, done
StageProgress = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class Chunk:
    """One retrieved piece of context: a table, a column, an ACS variable or a not-loaded ACS table, with its
    score in [0, 1]."""

    id: int
    object_type: ObjectType
    #: ``public.estimates``, ``public.estimates.estimate``, a variable code such as ``B19013_001E`` or (for an
    #: ``acs_table``) a table id such as ``B25003``
    object_ref: str
    content: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        return {"object_type": self.object_type, "object_ref": self.object_ref, "content": self.content,
                "score": self.score}


__all__ = ["DISPLAY_HINTS", "OBJECT_TYPES", "READ_AS", "Chunk", "DisplayHint", "ObjectType", "StageProgress",
           "StepProgress"]
