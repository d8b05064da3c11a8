"""The offline planner's typed question frame: what a question asks, as one value.

Reading a question (:mod:`.parser` and its helpers) ends in a :class:`Query`; :mod:`.compile` turns a Query into SQL
and its margin columns, :mod:`.explain` turns it into the assumptions shown with the answer and into the one-line
standalone reading of a follow-up.  Nothing downstream of the frame reads the question's text again, and nothing
edits SQL text: a retry, a follow-up ("and Williamson County?") or a display change is an edit of the frame.

The vocabulary:

* :class:`Op` — what is done with the measures over the places: each named place's value (``VALUE``: lookups,
  snapshots, comparisons), the top or bottom N of a set (``RANK``), every place of a set, possibly filtered
  (``LIST``: thresholds, maps), how many places of a set qualify (``COUNT``), places added together (``TOTAL``:
  the US, "combined", a filtered set's total), a place's share of its parent (``SHARE``), places per parent
  (``PER_PARENT``: counties per state), a value in two periods (``CHANGE``), and how much one place's value
  exceeds another's (``DIFFERENCE``: "how many more people live in Washington state than in DC?").
* :class:`GeoSet` — which places: a level, the places named, the parents that scope a set ("counties in Texas"),
  and the states left out of it ("excluding Puerto Rico", "the 50 states", "the contiguous US").
* :class:`Rank`, :class:`Condition` — order and limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ....census.semantic import Measure
    from ....types import DisplayHint
    from ..catalog import Catalog, County, State, Unit
    from ..read.parsed import Place


class Op(StrEnum):
    VALUE = "value"
    RANK = "rank"
    LIST = "list"
    COUNT = "count"
    TOTAL = "total"
    SHARE = "share"
    PER_PARENT = "per_parent"
    CHANGE = "change"
    DIFFERENCE = "difference"


#: geography levels, in the Census Bureau's order of summary levels
LEVELS = ("nation", "state", "county", "place", "cbsa", "cd", "tract", "zcta")

#: the postal codes of the state-level rows that are not states
NON_STATES = frozenset({"DC", "PR"})


@dataclass(frozen=True)
class GeoSet:
    """Which places a question is about.

    ``places`` are places named outright (Travis County; Texas and Ohio); for a set question they restrict the set
    to those places ("which of those ...").  ``within`` are the parents that scope a set (counties *in Texas*).
    ``exclude`` are postal codes of state-level rows left out of a set or a sum (``{"PR"}`` for the US total,
    ``{"DC", "PR"}`` for "the 50 states", ``{"AK", "HI", "DC", "PR"}`` for the 48 contiguous states); for a
    county set they leave out the counties of those states.  ``independent_cities`` keeps only the
    county-equivalents named "... city".
    """

    level: str
    places: tuple[Place, ...] = ()
    within: tuple[State, ...] = ()
    exclude: frozenset[str] = frozenset()
    independent_cities: bool = False
    #: which Census places of a place-level set: "" all of them, "incorporated" only cities, towns, villages and
    #: boroughs ("incorporated cities", "not counting CDPs"), "cdp" only census-designated places
    place_kind: str = ""
    #: the places of an earlier answer ("which of those ..."): its frame, compiled to the ids of its places
    among: Query | None = None
    #: rows of a coded level named by their code ("ZIP 78701", "TX-21", "tract 11 in Travis County", "metro
    #: Atlanta"): the set kept to them
    units: tuple[Unit, ...] = ()
    #: the counties a set of tracts is kept to ("the census tracts of Travis County")
    in_counties: tuple[County, ...] = ()
    #: the states of an earlier answer's places ("the 3 lowest counties in that state" after "which state is
    #: the lowest?"): its frame, compiled to the ids of its places
    in_states_of: Query | None = None
    #: counties or Census places a set leaves out ("the most populous Texas counties other than Harris County")
    leave_out: tuple[Place, ...] = ()

    @property
    def is_set(self) -> bool:
        """A set of places defined by a level (and parents), rather than places named one by one."""
        return not self.places


@dataclass(frozen=True)
class Rank:
    """Order and size of a ranking: by which measure, which way, how many (``n_given``: the question said so),
    and ``per_parent``: the top N within each state."""

    by: Measure
    descending: bool
    n: int
    n_given: bool = False
    per_parent: bool = False


@dataclass(frozen=True)
class Condition:
    """A limit on a measure's value: a number (``value``, and ``value2`` for "between"), another place's value
    (``ref``: "more people than Wyoming"), or another measure of the same place (``other``: "more Hispanic than
    non-Hispanic White residents")."""

    measure: Measure
    op: str  # '>', '>=', '<', '<=', '=', 'between'
    value: float = 0.0
    value2: float | None = None
    ref: Place | None = None
    other: Measure | None = None
    text: str = ""
    unit: str = "plain"


@dataclass(frozen=True)
class Change:
    """How a ``CHANGE`` is shown: ``by`` what a ranking orders ("change" or "pct_change"), ``keep`` which places a
    set keeps ("" all, "loss", "gain", "significant_gain", "significant_loss"), ``count``: how many places are kept
    (one number), ``dollars``: "real" (the earlier period's dollars put in the later period's with the CPI-U-RS),
    "nominal", or "" (not a dollar measure)."""

    by: str = "change"
    keep: str = ""
    count: bool = False
    dollars: str = ""


@dataclass(frozen=True)
class Query:
    """One question, read.  See the module docstring for the vocabulary.

    ``sums`` are the measures added up by a ``TOTAL`` over a filtered set (the others only select the places);
    ``periods`` are ACS periods (``()`` = the latest of each measure; ``CHANGE`` has the earlier and the later);
    ``per_n`` is "per 1,000 residents"; ``with_us`` adds a US row next to named places; ``notes`` are what the
    reading itself decided (a misspelling matched, a rule applied), repeated in the assumptions.
    """

    op: Op
    measures: tuple[Measure, ...]
    geo: GeoSet
    rank: Rank | None = None
    conditions: tuple[Condition, ...] = ()
    sums: tuple[Measure, ...] = ()
    periods: tuple[str, ...] = ()
    per_n: int | None = None
    per_n_phrase: str = ""
    with_us: bool = False
    #: the named places taken together ("Kings and Queens counties combined"): one share of the parent
    combined: bool = False
    #: the first measure over the second, for each place ("the ratio of residents to housing units")
    ratio: bool = False
    #: the whole of a ``SHARE``: "" its parent (a county's or a place's state, a state's US), "us" the US
    share_of: str = ""
    #: how a ``CHANGE`` is shown (``periods`` holds its two periods)
    change: Change | None = None
    display: DisplayHint | None = None
    notes: tuple[str, ...] = field(default=(), compare=False)

    def edit(self, **changes: Any) -> Query:
        """A copy with ``changes`` (frames are values: a follow-up or a retry edits a copy)."""
        return replace(self, **changes)

    # ----------------------------------------------------------------------------------------- as plain data
    def to_dict(self) -> dict[str, Any]:
        """The frame as JSON-able data (kept in the question log, so a follow-up can edit it later)."""
        def place(pl: Place) -> dict[str, str]:
            return {"level": pl.level, "geo_id": pl.geo_id, "text": pl.text, "how": pl.how}

        def cond(c: Condition) -> dict[str, Any]:
            return {"measure": c.measure.name, "op": c.op, "value": c.value, "value2": c.value2,
                    "ref": c.ref.geo_id if c.ref else None, "other": c.other.name if c.other else None,
                    "text": c.text, "unit": c.unit}

        def geo(g: GeoSet) -> dict[str, Any]:
            return {"level": g.level, "places": [place(pl) for pl in g.places], "within": [s.fips for s in g.within],
                    "exclude": sorted(g.exclude), "independent_cities": g.independent_cities,
                    "place_kind": g.place_kind,
                    "among": g.among.to_dict() if g.among else None,
                    "units": [u.geo_id for u in g.units], "in_counties": [c.geo_id for c in g.in_counties],
                    "in_states_of": g.in_states_of.to_dict() if g.in_states_of else None,
                    **({"leave_out": [place(pl) for pl in g.leave_out]} if g.leave_out else {})}

        return {
            "op": self.op.value, "measures": [m.name for m in self.measures], "geo": geo(self.geo),
            "rank": None if self.rank is None else {
                "by": self.rank.by.name if self.rank.by is not None else None, "descending": self.rank.descending,
                "n": self.rank.n, "n_given": self.rank.n_given, "per_parent": self.rank.per_parent},
            "conditions": [cond(c) for c in self.conditions], "sums": [m.name for m in self.sums],
            "periods": list(self.periods), "per_n": self.per_n, "per_n_phrase": self.per_n_phrase,
            "with_us": self.with_us, "combined": self.combined, "ratio": self.ratio, "share_of": self.share_of,
            "change": None if self.change is None else {"by": self.change.by, "keep": self.change.keep,
                                                        "count": self.change.count, "dollars": self.change.dollars},
            "display": self.display,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], cat: Catalog) -> Query:
        """A frame from :meth:`to_dict` against this database's catalog; ``KeyError`` when a measure or place it
        names is no longer there."""
        from ..read.parsed import place_of

        def measure(name: str) -> Measure:
            m = cat.measure(name)
            if m is None:
                raise KeyError(name)
            return m

        def place(d: dict[str, str]) -> Place:
            return place_of(cat, d["geo_id"], text=d.get("text", ""), how=d.get("how", "exact"))

        def geo(d: dict[str, Any]) -> GeoSet:
            by_fips = {s.fips: s for s in cat.states}
            return GeoSet(level=d["level"], places=tuple(place(x) for x in d.get("places", [])),
                          within=tuple(by_fips[f] for f in d.get("within", [])),
                          exclude=frozenset(d.get("exclude", [])),
                          independent_cities=bool(d.get("independent_cities")),
                          place_kind=d.get("place_kind", ""),
                          among=cls.from_dict(d["among"], cat) if d.get("among") else None,
                          units=tuple(unit(x) for x in d.get("units", [])),
                          in_counties=tuple(county(x) for x in d.get("in_counties", [])),
                          in_states_of=cls.from_dict(d["in_states_of"], cat) if d.get("in_states_of") else None,
                          leave_out=tuple(place(x) for x in d.get("leave_out", [])))

        def unit(geo_id: str) -> Unit:
            u = cat.unit(geo_id)
            if u is None:
                raise KeyError(geo_id)
            return u

        def county(geo_id: str) -> County:
            c = next((c for c in cat.counties if c.geo_id == geo_id), None)
            if c is None:
                raise KeyError(geo_id)
            return c

        r = data.get("rank")
        rank = None if r is None else Rank(by=measure(r["by"]) if r.get("by") else None,  # type: ignore[arg-type]
                                           descending=r["descending"], n=r["n"], n_given=r.get("n_given", False),
                                           per_parent=r.get("per_parent", False))
        conditions = tuple(
            Condition(measure(c["measure"]), c["op"], c.get("value", 0.0), c.get("value2"),
                      place({"geo_id": c["ref"]}) if c.get("ref") else None,
                      measure(c["other"]) if c.get("other") else None, c.get("text", ""), c.get("unit", "plain"))
            for c in data.get("conditions", []))
        return cls(op=Op(data["op"]), measures=tuple(measure(n) for n in data.get("measures", [])),
                   geo=geo(data["geo"]), rank=rank, conditions=conditions,
                   sums=tuple(measure(n) for n in data.get("sums", [])), periods=tuple(data.get("periods", [])),
                   per_n=data.get("per_n"), per_n_phrase=data.get("per_n_phrase", ""),
                   with_us=bool(data.get("with_us")), combined=bool(data.get("combined")),
                   ratio=bool(data.get("ratio")), share_of=data.get("share_of", ""),
                   change=Change(**data["change"]) if data.get("change") else None,
                   display=data.get("display"), notes=tuple(data.get("notes", [])))


__all__ = ["Change", "Condition", "GeoSet", "LEVELS", "NON_STATES", "Op", "Query", "Rank"]
