"""A question that is a place name alone ("Travis County, Texas", "Ohio", "Boulder, CO", "tell me about Ohio"):
answered with the place's profile (:mod:`sage.profile`), not declined for naming no measure.

Read with the offline planner's own parse (:func:`~.read.parser.parse_question`), unchanged: one place, found
without doubt, and nothing else asked — no measure (not even a weak or implied one), no threshold, period, level,
national scope or rate — and no word left over once the place and a few words of asking ("tell me about",
"profile of") are taken out; and not worded like a follow-up ("and Idaho?", "what about Ohio").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...types import Chunk
from .catalog import Catalog
from .declines import Decline
from .read.parsed import Place
from .read.parser import parse_question

#: words that ask for a whole place without naming anything about it
ASKING = frozenset("""
    a about all an at census data facts figure figures for give glance i info information key me my numbers of
    on overview please profile profiles quick s show snapshot stat stats statistics summary tell the what whats is
    everything know want to let see
""".split())


#: how a follow-up starts ("and Idaho?", "what about Ohio", "same for Texas"): never a profile
_FOLLOWUP_START = re.compile(r"\s*(and|also|now|then|same|what about|how about|vs\.?|versus|compared)\b")


def place_alone(question: str, cat: Catalog, chunks: Sequence[Chunk] = ()) -> Place | None:
    """The place a question names and nothing else, or None (see the module docstring)."""
    try:
        p = parse_question(question, chunks, cat, keep=True)
    except Decline:
        return None
    if len(p.places) != 1 or p.mentions or p.thresholds or p.periods or p.change or p.level or p.national \
            or p.per_n or p.vs_us or p.coded is not None or p.informal or p.fifty or p.contiguous:
        return None
    if _FOLLOWUP_START.match(p.t):  # "and Idaho?" with nothing before it: a follow-up, not a profile
        return None
    place = p.places[0]
    if place.how in ("ambiguous", "context") or place.level not in ("state", "county", "place"):
        return None
    spans = [place.span, *p.blocked]
    text = "".join(" " if any(a <= i < b for a, b in spans) else ch for i, ch in enumerate(p.t))
    words = re.findall(r"[a-z0-9]+", text)
    if any(w not in ASKING for w in words):
        return None
    return place


__all__ = ["ASKING", "place_alone"]
