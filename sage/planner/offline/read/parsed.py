"""What the offline planner reads out of a question: places, thresholds and the whole parse.

Plain dataclasses shared by the place matcher, the threshold reader and the SQL builder; they live apart so
each of those modules can import them without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field

from ....census.mentions import Mention
from ....census.semantic import Measure
from ..catalog import Catalog, County, Locality, State


@dataclass
class Place:
    """A place the question names: a state, a county (``county``) or a Census place (``locality``: a city, town
    or CDP), where in the question (``span``) and how it was found (``how``: exact | abbr | fuzzy | qualifier |
    demonym | alias | unique | rule | bare | context | ambiguous ...)."""

    level: str  # 'state' | 'county' | 'place'
    state: State
    county: County | None
    span: tuple[int, int]
    how: str = "exact"
    text: str = ""
    candidates: tuple[County, ...] = ()  # an ambiguous county name without a state
    locality: Locality | None = None
    #: a county of the same name in the same state ("Maricopa, AZ": the city, and Maricopa County)
    namesake: County | None = None

    @property
    def geo_id(self) -> str:
        if self.locality is not None:
            return self.locality.geo_id
        return self.county.geo_id if self.county else self.state.geo_id

    @property
    def label(self) -> str:
        if self.locality is not None:
            return self.locality.label
        return self.county.label if self.county else self.state.name

    @property
    def full_name(self) -> str:
        """geography.name of the row: 'Austin city, Texas', 'Travis County, Texas', 'Texas'."""
        if self.locality is not None:
            return self.locality.full_name
        return f"{self.county.name}, {self.state.name}" if self.county else self.state.name


@dataclass
class Threshold:
    op: str  # '>', '>=', '<', '<=', 'between'
    value: float
    value2: float | None
    unit: str  # 'percent' | 'dollars' | 'plain'
    span: tuple[int, int]
    text: str
    noun: str = ""  # the word after the number ("people", "households")
    measure: Measure | None = None
    ref: Place | None = None  # "more people than Wyoming": the value of that place is the threshold


@dataclass
class Parse:
    """Everything read from one question; :class:`~sage.planner.offline.planner.OfflinePlanner` turns it into a plan.

    ``t`` (lowercase) and ``tc`` (case kept) are the normalised question with the same offsets, so every span
    found in one applies to the other; ``blocked`` holds the spans of places already taken."""

    question: str
    tc: str  # normalised, case kept
    t: str  # normalised, lowercase
    places: list[Place] = field(default_factory=list)
    blocked: list[tuple[int, int]] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)
    thresholds: list[Threshold] = field(default_factory=list)
    level: str | None = None
    #: for a set of Census places: "" all of them, "incorporated" (no CDPs) or "cdp" (CDPs only)
    place_kind: str = ""
    national: bool = False
    #: "the 50 states": DC and Puerto Rico are not in the set unless a clause adds them back
    fifty: bool = False
    #: postal codes a clause adds to the set ("including Puerto Rico") or leaves out ("excluding DC"), see scope.py
    include: set[str] = field(default_factory=set)
    exclude: set[str] = field(default_factory=set)
    #: "the contiguous US", "the lower 48"
    contiguous: bool = False
    scope_spans: list[tuple[int, int]] = field(default_factory=list)
    #: counties and places the question leaves out of a set ("other than Harris County")
    leave_out: list[Place] = field(default_factory=list)
    #: regions with no single definition ("the Bay Area"), declined unless the question names their places
    informal: list[tuple[int, int]] = field(default_factory=list)
    #: the parse of scene-setting text before the ask, not of the ask (a region there only sets the scene)
    scene: bool = False
    #: a whole named by its parts ("New York City's five boroughs"): one figure for it unless each is asked for
    group: str = ""
    per_n: tuple[int, str] | None = None  # "per 1,000 residents": (1000, the phrase) — a count over population
    vs_us: bool = False  # "higher than the national average", "Texas vs the US": add a US row to the places
    #: the ACS periods asked about, oldest first (none: each measure's latest); ``change``: how the value changed
    #: between the two; ``dollars``: "real" (the later period's dollars) or "nominal" for a change in dollars
    periods: tuple[str, ...] = ()
    change: bool = False
    dollars: str = ""
    notes: list[str] = field(default_factory=list)
    #: a level asked for by its code or kind that is loaded ("ZIP 78701", "census tracts"): (level, the words, the
    #: state of a district code); :mod:`.units` reads the question
    coded: tuple[str, str, str | None] | None = None

    def strong(self) -> list[Mention]:
        """The measures the question names outright (not the weak, implied ones)."""
        return [m for m in self.mentions if not m.weak]


def place_of(cat: Catalog, geo_id: str, *, text: str = "", how: str = "exact") -> Place:
    """The :class:`Place` of a geography row of the catalog (``KeyError`` when there is none)."""
    row = cat.by_geo_id[geo_id]
    if isinstance(row, County):
        return Place("county", row.state, row, (0, 0), how, text or row.label)
    if isinstance(row, Locality):
        return Place("place", row.state, None, (0, 0), how, text or row.label, locality=row)
    return Place("state", row, None, (0, 0), how, text or row.name)
