"""The offline planner: common census questions answered with no API key and no network.

It reads a question the way an analyst writes it — a measure or several (through the semantic layer in
:mod:`sage.census.semantic`), places (state names and postal codes, "X County, ST", parishes, census areas,
independent cities, misspellings), and an intent (one value, a snapshot, a comparison, top/bottom N, thresholds,
a national figure, a count of places, a place's share of its state) — and writes the SQL in the house style.

Why rules and not a model: the answers must be right or honestly refused.  Every step that could guess is either
a stated rule (shown in the assumptions) or a refusal with two or three questions it *can* answer.  What it knows
about the data (which measures exist at which level, which states each table covers, every place name) is read
once from the database per settings and cached, so planning itself takes a few milliseconds.

Conventions (each one is repeated in the plan's assumptions when it applies):

* "states" are all state-level rows with data (50 states, DC, Puerto Rico); "the 50 states" drops DC and PR;
  "the US" is the sum over the 51 rows of the 50 states + DC (no nation rows exist), for counts and for rates
  of summed counts only — medians, means and indexes are never averaged into a state or US figure.
* a county name found in several states, with no state named, lists every match (largest first) — unless the
  question names a state that has exactly one of them, or names other counties that share one state;
* postal codes count only in capitals (or right after a county name), so "in", "or", "me", "ok" stay words;
  misspelled state and county names are matched by closeness and the match is stated;
* DC's county-equivalent row answers county-only measures (medians) for "DC";
* a question about a topic, year, place type or population group the data lacks is declined, naming what is
  missing, with two or three questions this planner can answer.

The planner is split by concern: :mod:`.vocabulary` (words, patterns, numbers), :mod:`.catalog` (places and
coverage read from the database), :mod:`.parsed` (what a question holds), :mod:`.parser` with :mod:`.places`,
:mod:`.measures`, :mod:`.thresholds` and :mod:`.ranking` (reading a question), :mod:`.intent` (from the reading to
the typed frame, :mod:`.frame`), :mod:`.compile` (the frame's SQL), :mod:`.explain` (the frame's assumptions),
:mod:`.declines` (refusals and suggestions) and this module, which ties them together.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...types import Chunk
from ..base import Attempt, Plan, PriorTurn
from ..edits import Edit, describe_edits
from .catalog import Catalog, load_catalog
from .compile.compile import compile_query
from .declines import Decline, generic_suggestions
from .explain import describe, explain
from .followup.followup import is_followup, read_followup
from .frame.frame import Op, Query
from .frame.intent import build_query
from .ledger import Ledger, account, close_readings, quoted
from .read.parsed import Parse
from .read.parser import modifies, parse_question, subject_line


class OfflinePlanner:
    """Rule-based planner over the semantic layer; see the module docstring."""

    name = "offline"

    def __init__(self, settings) -> None:
        self.settings = settings

    @property
    def catalog(self) -> Catalog:
        """Read once per database; read again after a `census fetch` has added tables."""
        return load_catalog(self.settings)

    def plan(self, question: str, chunks: Sequence[Chunk] = (), attempts: Sequence[Attempt] = (),
             context: Sequence[PriorTurn] = ()) -> Plan:
        if not isinstance(question, str) or not question.strip():
            return self._decline("The question is empty.", generic_suggestions())
        cat = self.catalog
        # the answer before came from SQL with no frame of this planner's (SQL edited by hand, or Claude's): a
        # follow-up of it cannot be an edit of an older frame, which would answer about rows no longer shown
        unframed = bool(context) and bool(context[-1].sql) and not context[-1].frame
        prior = None if unframed else _prior_frame(context, cat)
        if prior is not None and context and not context[-1].frame:
            # "whats the median income there?" was declined, then "ok, Sangamon County's then": the declined
            # question's measure is the one the conversation is now about
            prior = _with_declined_measure(prior, context[-1].question, cat, chunks)
        followup = False
        earlier = ""
        seen: list[Parse] = []
        edits: list[Edit] = []
        try:
            before = _prior_frame(context[:-1], cat) if prior is not None and len(context) > 1 else None
            query = read_followup(question, prior, cat, chunks, before=before, seen=seen,
                                  edits=edits) if prior is not None \
                else None
            followup = query is not None
            if query is None:
                earlier = context[-1].question if context and prior is None else ""
                # a subject line that sets the figures' terms ("...: 2014-2018 vs 2019-2023, in plain dollars. How
                # much did it go up?") is read as part of the question first: lent piece by piece, a word of it
                # was dropped without a trace
                subject = subject_line(question, cat.state_by_key)
                if subject and modifies(subject):
                    whole = self._with_subject(question, chunks, cat, earlier, attempts)
                    if whole is not None:
                        return whole
                parse = parse_question(question, chunks, cat, earlier=earlier)
                seen = [parse]
                query = build_query(parse, cat)
        except Decline as exc:
            whole = None if followup or prior is not None else \
                self._with_subject(question, chunks, cat, earlier, attempts)
            if whole is not None:
                return whole
            reason = exc.reason
            if unframed and is_followup(question) and exc.kind == "declined":
                reason += (" (It reads like a follow-up of the answer before, which came from SQL the offline planner "
                           "did not write — edited by hand or by another planner — so it cannot be edited: ask it "
                           "in full.)")
            elif not context and is_followup(question) and exc.kind == "declined" and len(question.split()) <= 8:
                reason += (" (It reads like a follow-up, but nothing was asked before it in this conversation: "
                           "ask it in full.)")
            return self._decline(reason, exc.suggestions or generic_suggestions(), exc.assumptions,
                                 kind=exc.kind, fetch=exc.fetch)
        ledger = account(seen[0], query, prior if followup else None, cat, edits) if seen else None
        if ledger is not None and ledger.unread:
            whole = None if followup or prior is not None else \
                self._with_subject(question, chunks, cat, earlier, attempts)
            return whole if whole is not None else self._unread(question, query, ledger, cat)
        return self._planned(query, cat, attempts, followup, edits)

    def _with_subject(self, question: str, chunks: Sequence[Chunk], cat: Catalog, earlier: str,
                      attempts: Sequence[Attempt]) -> Plan | None:
        """The plan of ``question`` read with its subject line as part of the question ("Benton County vs Washington
        County, Arkansas: is the gap in median household income real?"), when the ask alone could not be answered
        and that reading accounts for every word; else None (the first reading's decline stands)."""
        if not subject_line(question, cat.state_by_key):
            return None
        try:
            parse = parse_question(question, chunks, cat, earlier=earlier, subject=True)
            query = build_query(parse, cat)
        except Decline:
            return None
        if account(parse, query, None, cat).unread:
            return None
        return self._planned(query, cat, attempts, False, [])

    def _planned(self, query: Query, cat: Catalog, attempts: Sequence[Attempt], followup: bool,
                 edits: list[Edit]) -> Plan:
        """The SQL and the explanation of frame ``query``."""
        compiled = compile_query(query)
        retried = False
        if attempts:
            # a previous SQL failed: never propose it again; try the plain variant (no margin or map columns)
            tried = {_squash(a.sql) for a in attempts}
            if _squash(compiled.sql) in tried:
                compiled = compile_query(query, margins=False)
                retried = True
                if _squash(compiled.sql) in tried:
                    last = attempts[-1]
                    return self._decline(
                        f"the query for this question failed ({last.error.strip()[:200]}) and the offline planner "
                        "has no other way to write it.", generic_suggestions())
        assumptions = explain(query, compiled, cat.states)
        standalone = describe(query)
        if followup:
            how = describe_edits(edits)
            assumptions.insert(0, f"Read as: {standalone}" + (f" {how}." if how else "."))
        if retried:
            assumptions.append("Retried without the margin-of-error and map columns after an error.")
        return Plan(sql=compiled.sql, assumptions=assumptions, display_hint=compiled.display_hint,
                    planner=self.name, standalone=standalone, frame=query.to_dict(), compare=compiled.compare,
                    periods=query.periods, edits=tuple(edits) if followup else ())

    def _decline(self, reason: str, suggestions: Sequence[str], assumptions: Sequence[str] = (), *,
                 kind: str = "declined", fetch: dict | None = None, unread: Sequence[str] = ()) -> Plan:
        assumptions = [f"Cannot answer: {reason}", *assumptions]
        return Plan(sql="", assumptions=assumptions, display_hint="table", planner=self.name,
                    suggestions=list(dict.fromkeys(suggestions))[:3 if kind != "ambiguous" else 8],
                    decline_kind=kind, fetch=fetch, unread=tuple(unread))

    def _unread(self, question: str, query: Query, ledger: Ledger, cat: Catalog) -> Plan:
        """A question with words nothing read: asked back when a word is close to something known ("Did you mean
        Colorado?"), declined naming the words otherwise — never answered as the question that is left."""
        words = ledger.unread
        vocabulary = {w for m in cat.measures for s in m.synonyms for w in s.split() if len(w) > 3}
        readings = [(w, r) for w in words for r in close_readings(w, cat, vocabulary)]
        read_as = describe(query)
        if readings:
            choices = [_replace_word(question, w, r) for w, r in readings]
            asked = "; ".join(f"“{w}”: did you mean {r}?" for w, r in readings[:4])
            return self._decline(f"I could not read {quoted(words)} in your question ({asked}). Nothing was "
                                 "answered; pick the reading you meant.", choices, kind="ambiguous", unread=words)
        return self._decline(
            f"I could not read {quoted(words)} in your question; nothing was answered. Without "
            f"{'that word' if len(words) == 1 else 'those words'} it would read as: {read_as}.",
            generic_suggestions(), unread=words)


def _with_declined_measure(prior: Query, declined: str, cat: Catalog, chunks: Sequence[Chunk]) -> Query:
    """``prior`` with the one measure a declined later question named, if it named exactly one ("whats the median
    income there?" about a city, then "ok, Sangamon County's then").  Only for named places: a ranking's measure
    says which places "those five" are, and a topic the data lacks ("the average commute time in those states")
    names no measure to carry."""
    from ...census.semantic import load_gaps
    from ...text import normalize
    from .read.measures import find_measures
    from .read.parsed import Parse

    if prior.op is not Op.VALUE:
        return prior
    tc = normalize(declined)
    if any(g.find(tc.lower(), []) for g in load_gaps()):
        return prior
    p = Parse(question=declined, tc=tc, t=tc.lower())
    try:
        find_measures(p, cat, chunks)
    except Decline:
        return prior
    named = list(dict.fromkeys(m.measure for m in p.strong()))
    if len(named) != 1 or named[0] in prior.measures:
        return prior
    m = named[0]
    return prior.edit(measures=(m,))


def _prior_frame(context: Sequence[PriorTurn], cat: Catalog) -> Query | None:
    """The frame of the latest earlier turn that has one (a declined turn has none)."""
    for turn in reversed(context):
        if turn.frame:
            try:
                return Query.from_dict(turn.frame, cat)
            except (KeyError, ValueError):
                return None  # a place or measure that is gone: the follow-up is read as a new question
    return None


def _replace_word(question: str, word: str, reading: str) -> str:
    """``question`` with the unread ``word`` replaced by the reading it is close to."""
    return re.sub(rf"(?i)\b{re.escape(word)}\b", reading, question, count=1)


def _squash(sql: str) -> str:
    return re.sub(r"\s+", " ", sql or "").strip().rstrip(";").lower()


__all__ = ["Catalog", "OfflinePlanner", "load_catalog"]
