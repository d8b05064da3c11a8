"""The places a question names, read by the offline planner's place reader, for the Claude planner's context.

The Claude planner is told, before it writes any SQL, which geography rows the question's places are: "Austin, TX"
is the place ``1600000US4805000`` 'Austin city, Texas', which has population and housing units only; "Springfield"
is one of 22 places and is not guessed (the readings, largest first); "census tracts" is a level with no rows yet.
The reading is the offline planner's own (:func:`~.places.find_places`, :mod:`.localities`,
:func:`~.bare_names.find_unknown_places`), so both planners match names the same way; nothing here changes it.

:func:`resolve_places` reads the places; :func:`ground` adds what the data holds around them (the levels with rows,
every variable's periods).  Both read the cached :class:`~.catalog.Catalog` only: no query of their own.  What they
return is data for the prompt (:func:`sage.planner.claude.blocks.format_places`), never instructions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ...census.schema import LEVELS
from ...text import normalize
from ..offline.catalog import Catalog, County, Locality
from ..offline.declines import Decline
from ..offline.read.bare_names import find_unknown_places
from ..offline.read.localities import LEVEL_NAMES, coded_level
from ..offline.read.measures import find_measures
from ..offline.read.parsed import Parse, Place
from ..offline.read.places import find_places, resolve_ambiguous
from ..offline.read.scope import read_scope
from ..offline.read.vocabulary import nice_name


@dataclass(frozen=True)
class Reading:
    """One geography row a name may mean: ``label`` as the readings list it ('Springfield city, MO')."""

    label: str
    geo_id: str = ""
    level: str = ""
    population: int | None = None


@dataclass(frozen=True)
class Resolved:
    """A place (or a level) the question names and the row it is.

    ``kind`` is the level of the row (``state``, ``county``, ``place``); ``ambiguous`` (``readings`` holds the
    rows the name may mean, largest first: never guessed); ``counties`` (a county name found in several states and
    no state given: ``readings`` holds every one, largest first, and the offline planner's rule shows them all);
    ``level`` (a level asked for by its kind or code, "census tracts", "ZIP 78701": ``level`` names it, ``loaded``
    says whether it has rows); or ``unknown`` (the reader found no such place; ``note`` says why)."""

    text: str
    kind: str
    geo_id: str = ""
    name: str = ""
    #: a Census place's figures (only population and housing units are shipped for places)
    has: tuple[str, ...] = ()
    #: the county-equivalent covering exactly a place's area (San Francisco, Denver): it has every county figure
    same_area: Reading | None = None
    readings: tuple[Reading, ...] = ()
    #: for ``kind == "level"``: the level and whether public.geography has rows of it
    level: str = ""
    loaded: bool = False
    #: how the reader got there ("read as the closest name"), or why it found nothing
    note: str = ""

    @property
    def ambiguous(self) -> bool:
        return self.kind == "ambiguous"


@dataclass(frozen=True)
class Grounding:
    """What the Claude planner is told about a question's places and the data around them."""

    places: tuple[Resolved, ...] = ()
    #: the levels public.geography has rows of, in :data:`~sage.census.schema.LEVELS` order
    levels: tuple[str, ...] = ()
    #: every variable's periods loaded, oldest first (``{"B19013_001E": ("2014-2018", "2019-2023")}``)
    periods: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def ground(question: str, catalog: Catalog) -> Grounding:
    """:func:`resolve_places` with the levels that have rows and the periods of every variable."""
    return Grounding(tuple(resolve_places(question, catalog)),
                     tuple(level for level in LEVELS if level in catalog.levels), dict(catalog.periods))


def resolve_places(question: str, catalog: Catalog) -> list[Resolved]:
    """The places ``question`` names, in the order it names them, as the offline planner reads them.

    A name with several readings is ``ambiguous`` with the readings, largest first (the offline planner's
    question back, the same six); a county name found in several states is ``counties`` (all of them).  A name
    the reader cannot place ends the reading (it raises there), so what it found before comes first and the name
    last, as ``unknown`` with the reader's reason.  A level asked for by its kind or code comes last."""
    tc = normalize(question)
    p = Parse(question=question, tc=tc, t=tc.lower())
    out: list[Resolved] = []
    stopped: Decline | None = None
    try:
        read_scope(p, catalog)
        find_places(p, catalog)
        p.places = [pl for pl in p.places if not any(a <= pl.span[0] < b for a, b in p.scope_spans)]
        try:  # the measures' words are not place names ("median household income" is no place)
            find_measures(p, catalog, ())
        except Decline:
            pass
        find_unknown_places(p, catalog)
        resolve_ambiguous(p)
    except Decline as exc:
        stopped = exc
    seen: set[str] = set()
    for pl in sorted(p.places, key=lambda pl: pl.span[0]):
        r = _resolved(pl, p, catalog)
        key = r.geo_id or r.text
        if key not in seen:
            seen.add(key)
            out.append(r)
    if stopped is not None:
        out.append(_stopped(stopped, catalog))
    try:
        coded = coded_level(p, catalog)
    except Exception:  # a level the reader cannot tell is simply not listed
        coded = None
    if coded is not None:
        level, asked, _state = coded
        loaded = level in catalog.levels
        out.append(Resolved(asked, "level", level=level, loaded=loaded,
                            note=f"{LEVEL_NAMES.get(level, level)}"))
    return out


def _resolved(pl: Place, p: Parse, cat: Catalog) -> Resolved:
    text = pl.text or p.tc[pl.span[0]:pl.span[1]]
    note = _note(pl, p)
    if pl.how == "ambiguous":
        readings = tuple(_county_reading(c) for c in pl.candidates)
        return Resolved(text, "counties", readings=readings, note=note)
    if pl.locality is not None:
        loc = pl.locality
        same = cat.same_area_county(loc)
        return Resolved(text, "place", loc.geo_id, loc.full_name, has=_figures(cat, loc.geo_id),
                        same_area=_county_reading(same) if same is not None else None, note=note)
    if pl.county is not None:
        return Resolved(text, "county", pl.county.geo_id, f"{pl.county.name}, {pl.state.name}", note=note)
    return Resolved(text, "state", pl.state.geo_id, pl.state.name, note=note)


def _note(pl: Place, p: Parse) -> str:
    """The reader's note about this place, if it wrote one (a misspelling, a rule it applied)."""
    if pl.how in ("exact", "abbr", "qualifier", "unique", "ambiguous"):
        return ""
    return next((n for n in p.notes if pl.label in n or (pl.text and pl.text in n)), "")


def _figures(cat: Catalog, geo_id: str) -> tuple[str, ...]:
    """What the semantic layer's plain measures have for a row ("population", "housing units")."""
    return tuple(nice_name(m) for m in cat.measures if len(m.codes) == 1 and not m.is_rate and cat.has(m, geo_id))


def _county_reading(c: County) -> Reading:
    return Reading(c.label, c.geo_id, "county", round(c.population))


def _place_reading(x: Locality) -> Reading:
    return Reading(x.label, x.geo_id, "place", round(x.population))


#: one reading as the offline planner's question back lists it: "Springfield city, MO (169,432 people)"
_LISTED = re.compile(r"(?:: |; )([^;:]+?) \(([\d,]+) people\)")
#: the name the question back asks about: “Springfield” is the name of ...
_ASKED = re.compile(r"^“([^”]+)”")


def _stopped(exc: Decline, cat: Catalog) -> Resolved:
    """The name the reader stopped at: the readings of an ambiguous one (as its question back lists them, mapped
    to their rows), or the reason it gives for one it cannot place."""
    asked = _ASKED.match(exc.reason)
    text = asked.group(1) if asked else ""
    if exc.kind == "ambiguous":
        rows: dict[str, Reading] = {}
        for x in cat.localities:
            rows.setdefault(x.label, _place_reading(x))
        for c in cat.counties:
            rows.setdefault(c.label, _county_reading(c))
        readings = []
        for mt in _LISTED.finditer(exc.reason):
            label, people = mt.group(1).strip(), int(mt.group(2).replace(",", ""))
            row = rows.get(label)
            readings.append(row if row is not None else Reading(label, population=people))
        more = re.search(r" and (\d+) more\.", exc.reason)
        note = f"{len(readings) + int(more.group(1))} readings in all; the largest shown" if more else ""
        return Resolved(text, "ambiguous", readings=tuple(readings), note=note)
    return Resolved(text, "unknown", note=exc.reason)


__all__ = ["Grounding", "Reading", "Resolved", "ground", "resolve_places"]
