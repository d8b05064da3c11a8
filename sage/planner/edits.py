"""Follow-ups as edits: the closed set of changes a follow-up may make to the reading of the turn it follows.

A follow-up ("and Travis?", "add median rent", "just the top 3", "which of the two is higher?") names only what
changes; the rest of the previous reading stays as it was.  Naming the change as one of a closed, reviewed set of
kinds — not as free text — is what makes a misreading visible: the card says "edit: added a measure (“add median
rent”)", and a reading that would need an edit outside the set is declined instead of guessed.

Both planners share this set: the offline reader reports the edits it applied
(:func:`sage.planner.offline.followup.followup.read_followup`), and the Claude planner is given the same names in
its conversation block (:func:`sage.planner.claude.blocks.format_conversation`) and may return them
(``"edits": [...]``), so that a follow-up reads the same way whichever planner reads it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass


class EditKind(enum.StrEnum):
    """What a follow-up changes in the previous reading.  Each member's ``gloss`` says it in words."""

    SWAP_PLACES = "swap_places"
    ADD_PLACES = "add_places"
    SWAP_MEASURE = "swap_measure"
    ADD_MEASURE = "add_measure"
    DROP_MEASURE = "drop_measure"
    NARROW = "narrow"
    WIDEN = "widen"
    RANKING = "ranking"
    PICK = "pick"
    PERIOD = "period"
    DOLLARS = "dollars"
    TOTAL = "total"
    SIGNIFICANCE = "significance"
    DISPLAY = "display"

    @property
    def gloss(self) -> str:
        return _GLOSS[self]

    @property
    def example(self) -> str:
        return _EXAMPLE[self]

    @property
    def label(self) -> str:
        """A few words for the card: "swap places"."""
        return _LABEL[self]


_GLOSS = {
    EditKind.SWAP_PLACES: "other places, the same measure",
    EditKind.ADD_PLACES: "places added beside those shown",
    EditKind.SWAP_MEASURE: "another measure, the same places",
    EditKind.ADD_MEASURE: "a measure added as a column, the same rows",
    EditKind.DROP_MEASURE: "a measure taken out, the same rows",
    EditKind.NARROW: "the set narrowed (a state, a level, a kind of place, a condition)",
    EditKind.WIDEN: "the set widened (the whole country, all places)",
    EditKind.RANKING: "the number of rows or the direction of a ranking changed",
    EditKind.PICK: "chosen from the previous answer's places",
    EditKind.PERIOD: "another period, or the change between two",
    EditKind.DOLLARS: "nominal or inflation-adjusted dollars",
    EditKind.TOTAL: "the previous set added up",
    EditKind.SIGNIFICANCE: "the same answer, its differences tested",
    EditKind.DISPLAY: "the same answer as a map, chart or table",
}
_LABEL = {
    EditKind.SWAP_PLACES: "swap places",
    EditKind.ADD_PLACES: "add places",
    EditKind.SWAP_MEASURE: "swap measure",
    EditKind.ADD_MEASURE: "add a measure",
    EditKind.DROP_MEASURE: "drop a measure",
    EditKind.NARROW: "narrow the set",
    EditKind.WIDEN: "widen the set",
    EditKind.RANKING: "change N or direction",
    EditKind.PICK: "pick from the answer",
    EditKind.PERIOD: "change the period",
    EditKind.DOLLARS: "change the dollars",
    EditKind.TOTAL: "add them up",
    EditKind.SIGNIFICANCE: "test the differences",
    EditKind.DISPLAY: "change the display",
}
_EXAMPLE = {
    EditKind.SWAP_PLACES: "what about Travis County?",
    EditKind.ADD_PLACES: "compare it with Dallas County",
    EditKind.SWAP_MEASURE: "and the poverty rate?",
    EditKind.ADD_MEASURE: "add median rent",
    EditKind.DROP_MEASURE: "drop the rent column",
    EditKind.NARROW: "only Texas",
    EditKind.WIDEN: "the whole country, not just Georgia",
    EditKind.RANKING: "just the top 3",
    EditKind.PICK: "which of the two is higher?",
    EditKind.PERIOD: "how has it changed since 2014-2018?",
    EditKind.DOLLARS: "in nominal dollars",
    EditKind.TOTAL: "how many people altogether?",
    EditKind.SIGNIFICANCE: "is that difference significant?",
    EditKind.DISPLAY: "as a map",
}


@dataclass(frozen=True)
class Edit:
    """One change a follow-up made, with the words of the follow-up that named it."""

    kind: EditKind
    words: str = ""

    def describe(self) -> str:
        return f"{self.kind.label} “{self.words}”" if self.words else self.kind.label

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind.value, "words": self.words}


def parse_kinds(names: Iterable[object]) -> tuple[EditKind, ...]:
    """The edit kinds named (by value), in order, once each; a name outside the closed set is left out."""
    known = {k.value: k for k in EditKind}
    return tuple(dict.fromkeys(known[n] for n in (str(x).strip().lower() for x in names) if n in known))


def describe_edits(edits: Iterable[Edit]) -> str:
    """``"(edit: add a measure “add median rent”)"``, as the end of a "Read as" line, or "" for none."""
    parts = [e.describe() for e in dict.fromkeys(edits)]
    if not parts:
        return ""
    return ("(edit: " if len(parts) == 1 else "(edits: ") + "; ".join(parts) + ")"


def edit_guide() -> str:
    """The closed set in words, for a planner's conversation block."""
    lines = ["A follow-up is read as edits of the reading of the latest answered turn; everything it does not name "
             "stays as it was. The edits, by name:"]
    lines += [f"- {k.value}: {k.gloss} (e.g. “{k.example}”)" for k in EditKind]
    lines.append("A turn that names its own measure and places is a new question, read alone (no edits). Name the "
                 "edits you applied in \"edits\" (an empty list for a new question).")
    return "\n".join(lines)


__all__ = ["Edit", "EditKind", "describe_edits", "edit_guide", "parse_kinds"]
