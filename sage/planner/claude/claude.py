"""The Claude planner: one Messages API call per try, answered as JSON that always parses.

Choices, and why:

* **Structured outputs** rather than a forced tool call: ``client.messages.parse(..., output_format=PlanModel)``
  sends :class:`PlanModel`'s JSON schema (:data:`PLAN_SCHEMA`, the SDK's strict form of it; both are in
  :mod:`sage.planner.claude.plan_model`) as ``output_config.format`` and validates the reply into a ``PlanModel``.  The
  answer *is* the plan, not a pretend call to a tool nobody runs; decoding is constrained to the schema, so a reply
  that stopped normally is valid JSON of the right shape; and it stays valid when a model thinks before answering
  (a forced ``tool_choice`` cannot be combined with extended thinking).  A refused, cut-off or empty reply is
  caught before it is parsed (:func:`unusable_reply`, a client middleware), and one that does not validate (a
  server that ignores the format) becomes a ``bad_answer`` :class:`PlanningError` too, never a crash.
* **Prompt caching**: the system prompt (:mod:`sage.planner.claude.prompt`) and the worked examples
  (:mod:`sage.planner.claude.examples`) are the same for every question, so they go in the ``system`` blocks with
  ``cache_control: ephemeral`` on the last one; only the per-question message (:mod:`sage.planner.claude.message`: the
  retrieved context, the failed attempts and the question) changes.
* **The SDK does transport**: its own retries (``SAGE_CLAUDE_MAX_RETRIES``, default 2, so at most three requests)
  on 408, 409, 429, 5xx, 529 and connection errors, with ``settings.claude_timeout_s`` per try.  Between tries it
  waits 0.5 s, then 1 s, 2 s ... (at most 8 s, less up to a quarter for jitter), or what the API's
  ``retry-after-ms`` / ``retry-after`` header asks for, which the SDK obeys without an upper bound: a reply asking
  for more than :data:`MAX_RETRY_WAIT_S` is not retried at all (:func:`bounded_retry_wait`), so a rate-limited
  question ends with a clear ``rate_limited`` error within seconds instead of sleeping for as long as the server
  says.  ``ANTHROPIC_BASE_URL`` is honoured by the SDK itself (never passed here).  The key is passed explicitly
  from :class:`Settings`, so no other credential in the environment (``ANTHROPIC_AUTH_TOKEN``, profiles) is ever
  read or sent.
* Errors become :class:`PlanningError` with a ``kind`` the app and CLI can act on: ``no_key``, ``bad_key``,
  ``rate_limited``, ``network``, ``bad_answer``, ``api``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

import anthropic
import pydantic
from anthropic import APIRequest, APIResponse, CallNext
from anthropic.types import ParsedMessage, TextBlockParam

from ...census.catalog_search import CATALOG_YEAR, acs_table_catalog
from ...errors import ErrorKind, PlanningError
from ...settings import Settings
from ...types import READ_AS, Chunk
from ..base import Attempt, Plan, PriorTurn
from ..edits import Edit, describe_edits, parse_kinds
from .blocks import is_internal
from .examples import FEW_SHOT_EXAMPLES, format_examples
from .message import build_user_message
from .plan_model import PlanModel
from .prompt import SYSTEM_PROMPT

log = logging.getLogger(__name__)

#: the levels every fetch loads (the data's two geographies)
FETCH_GEOGRAPHIES = ["state", "county"]


#: the answer is ~100-600 tokens of JSON; the headroom covers a model that thinks before answering
MAX_TOKENS = 4096
#: a 429/529/5xx whose retry-after asks for a longer wait than this is not retried (the SDK would sleep that long)
MAX_RETRY_WAIT_S = 10.0

_OFFLINE_HINT = "or use the offline planner (SAGE_PLANNER=offline, or --planner offline)"


def system_blocks() -> list[TextBlockParam]:
    """The static, cached prefix: the rules, then the worked examples with the cache breakpoint after them."""
    return [
        {"type": "text", "text": SYSTEM_PROMPT},
        {"type": "text", "text": format_examples(FEW_SHOT_EXAMPLES), "cache_control": {"type": "ephemeral"}},
    ]


class ClaudePlanner:
    """:class:`~sage.planner.base.Planner` on the Anthropic Messages API.

    ``measures_fn(question) -> list`` (e.g. ``sage.census.mentions.match_measures``) adds the semantic-layer
    measures matching the question to its context; any object with ``name``, ``formula``, ``unit`` and
    ``description`` will do.  ``examples_fn(question) -> list`` (``sage.verified.examples``) adds the verified
    answers closest to it (objects with ``question``, ``standalone``, ``sql``, ``assumptions``, ``display_hint``).
    ``grounding_fn(question)`` (``sage.planner.claude.resolve.ground`` over the offline planner's catalog) reads the
    places the question names, the levels with rows and every variable's periods: the places block of the request.
    The earlier turns of a conversation (``context``) go in the request as questions, readings, SQL and assumptions,
    never rows; the reply's ``standalone`` reading of a follow-up comes first in its assumptions ("Read as: ...").
    The reply's ``comparison`` and ``periods`` become the plan's ``compare`` and ``periods``, so the question loop
    tests the rows for significance as it does the offline planner's.  One client (one connection pool) is kept
    per planner.
    """

    name = "claude"

    def __init__(
        self,
        settings: Settings,
        measures_fn: Callable[[str], Sequence[Any]] | None = None,
        *,
        examples_fn: Callable[[str], Sequence[Any]] | None = None,
        grounding_fn: Callable[[str], Any] | None = None,
        max_retries: int | None = None,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        if not settings.anthropic_api_key:
            raise PlanningError(
                "The Claude planner needs an Anthropic API key: set ANTHROPIC_API_KEY in the environment or in "
                f".streamlit/secrets.toml ({_OFFLINE_HINT}).",
                kind=ErrorKind.NO_KEY,
            )
        self.settings = settings
        self.model = settings.model
        self.max_tokens = max_tokens
        self.measures_fn = measures_fn
        self.examples_fn = examples_fn
        self.grounding_fn = grounding_fn
        self._client = anthropic.Anthropic(
            api_key=settings.anthropic_api_key,
            timeout=settings.claude_timeout_s,
            max_retries=settings.claude_max_retries if max_retries is None else max_retries,
            middleware=[bounded_retry_wait, unusable_reply],
        )
        self._system = system_blocks()

    def plan(self, question: str, chunks: Sequence[Chunk], attempts: Sequence[Attempt] = (),
             context: Sequence[PriorTurn] = ()) -> Plan:
        measures = self._aid(self.measures_fn, question, "semantic-layer measures")
        examples = self._aid(self.examples_fn, question, "verified answers")
        grounding = self._grounding(question)
        message = build_user_message(
            question, [c for c in chunks if not is_internal(c)], error_context=list(attempts), measures=measures,
            conversation=list(context), verified=examples, grounding=grounding,
        )
        response = self._call(message)
        parsed = response.parsed_output
        if parsed is None:  # no text block at all (thinking only): unusable_reply lets none through
            raise _bad_answer(f"no text in the reply (stop reason {response.stop_reason!r})")
        standalone = parsed.standalone or " ".join(question.split())
        assumptions = [a for a in parsed.assumptions if not a.startswith(READ_AS)]
        fetch = self._fetch(parsed, chunks, assumptions)
        edits = tuple(Edit(k) for k in parse_kinds(parsed.edits)) if context else ()
        if context and parsed.standalone and _differs(parsed.standalone, question):
            how = describe_edits(edits)
            # before a decline's message
            assumptions.insert(0, f"{READ_AS}{parsed.standalone.rstrip('.')}" + (f" {how}." if how else "."))
        kind, suggestions = ("needs_fetch" if fetch else "declined"), []
        if not parsed.sql and not fetch and parsed.decline is not None and parsed.decline.kind == "ambiguous" \
                and parsed.decline.suggestions:
            kind, suggestions = "ambiguous", list(parsed.decline.suggestions)
        compare = parsed.comparison if parsed.sql and parsed.comparison != "none" else None
        plan = Plan(sql=parsed.sql, assumptions=assumptions, display_hint=parsed.display_hint,
                    planner=self.name, usage=usage_of(response, self.model), standalone=standalone,
                    decline_kind=kind, fetch=fetch, suggestions=suggestions, compare=compare,
                    periods=tuple(parsed.periods) if compare == "change" else (), edits=edits)
        log.info("claude plan: model=%s usage=%s", self.model, plan.usage)
        return plan

    def _fetch(self, parsed: PlanModel, chunks: Sequence[Chunk], assumptions: list[str]) -> dict[str, Any] | None:
        """A ``needs_fetch`` decline as the question loop takes it (``{"tables", "vintage", "geographies"}``, and
        ``"states"`` when it names some), or None.  Only tables of the offline ACS catalog count, and for the
        default fetch (states and counties, the catalog's period) only those that are not loaded (a table whose
        variables are in the context is loaded); a fetch of other levels or of another period may name a loaded
        table (median household income is loaded for counties, not for places).  A made-up id is never offered
        for loading, and a decline left with none is a plain one.  The first assumption is the decline's message:
        it names the tables when Claude's does not."""
        decline = parsed.decline
        if parsed.sql or decline is None or decline.kind != "needs_fetch":
            return None
        catalog = acs_table_catalog(self.settings.data_path)
        loaded = {c.object_ref.split("_")[0] for c in chunks if c.object_type == "variable"}
        geographies = list(decline.geographies) or list(FETCH_GEOGRAPHIES)
        vintage = decline.vintage or CATALOG_YEAR
        beyond = vintage != CATALOG_YEAR or any(g not in FETCH_GEOGRAPHIES for g in geographies)
        tables = [t for t in dict.fromkeys(decline.tables) if t in catalog and (beyond or t not in loaded)]
        if not tables:
            return None
        if not assumptions or not all(t in assumptions[0] for t in tables):
            named = ", ".join(f"{t} ({catalog[t]['concept']})" for t in tables)
            where = ""
            if beyond:
                where = f" for {', '.join(geographies)}" + (f" in {', '.join(decline.states)}" if decline.states
                                                            else "") + f" ({vintage - 4}-{vintage})"
            assumptions.insert(0, f"This question needs ACS table {named}{where}, which is not loaded.")
        fetch: dict[str, Any] = {"tables": tables, "vintage": vintage, "geographies": geographies}
        if decline.states:
            fetch["states"] = list(decline.states)
        return fetch

    def _grounding(self, question: str) -> Any:
        """The places block's reading of the question, or None (an aid: a failure is logged, not raised)."""
        if self.grounding_fn is None:
            return None
        try:
            return self.grounding_fn(question)
        except Exception as exc:  # the place reader is an aid: without it Claude matches names itself
            log.warning("place reading unavailable (%s: %s)", type(exc).__name__, exc)
            return None

    @staticmethod
    def _aid(fn: Callable[[str], Sequence[Any]] | None, question: str, what: str) -> list[Any]:
        if fn is None:
            return []
        try:
            return list(fn(question) or [])
        except Exception as exc:  # measures and examples are aids: a failure there must not stop planning
            log.warning("%s unavailable (%s: %s)", what, type(exc).__name__, exc)
            return []

    def _call(self, message: str) -> ParsedMessage[PlanModel]:
        try:
            return self._client.messages.parse(
                model=self.model,
                max_tokens=self.max_tokens,
                system=self._system,
                messages=[{"role": "user", "content": message}],
                output_format=PlanModel,
            )
        except anthropic.APIError as exc:
            raise _planning_error(exc, self.settings) from exc
        except pydantic.ValidationError as exc:
            raise _not_a_plan(exc) from None


def _differs(reading: str, question: str) -> bool:
    """Whether a reading says more than the question did (a follow-up spelled out), ignoring case and punctuation."""
    def bare(text: str) -> str:
        return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())

    return bare(reading) != bare(question)


def _api_text(exc: Any) -> str:
    """The API's own error message (from its JSON body) or the SDK's, one line, short; never request headers."""
    body = getattr(exc, "body", None)
    text = ""
    if isinstance(body, dict):
        err = body.get("error")
        text = err.get("message", "") if isinstance(err, dict) else str(body.get("message") or "")
    text = text or getattr(exc, "message", "") or str(exc)
    return re.sub(r"\s+", " ", str(text)).strip()[:300]


def _planning_error(exc: Exception, settings: Settings) -> PlanningError:
    """Map an SDK exception to a :class:`PlanningError` whose message says what to do."""
    detail = _api_text(exc)
    if isinstance(exc, anthropic.APITimeoutError):
        return PlanningError(
            f"The Anthropic API did not answer within {settings.claude_timeout_s:g} s (after retries). Try again; "
            f"raise SAGE_CLAUDE_TIMEOUT_S if this keeps happening, {_OFFLINE_HINT}.",
            kind=ErrorKind.NETWORK,
            detail="timeout",
        )
    if isinstance(exc, anthropic.APIConnectionError):
        return PlanningError(
            "Could not reach the Anthropic API (network error). Check the internet connection or proxy, and "
            f"ANTHROPIC_BASE_URL if you set it, {_OFFLINE_HINT}.",
            kind=ErrorKind.NETWORK,
            detail=detail,
        )
    if isinstance(exc, anthropic.AuthenticationError):
        return PlanningError(
            "Anthropic rejected the API key (401). Check ANTHROPIC_API_KEY (environment or .streamlit/secrets.toml): "
            "it may be mistyped, revoked or from another workspace; create one at console.anthropic.com, "
            f"{_OFFLINE_HINT}.",
            kind=ErrorKind.BAD_KEY,
            detail=detail,
        )
    if isinstance(exc, (anthropic.RateLimitError, anthropic.OverloadedError)):
        limited = isinstance(exc, anthropic.RateLimitError)
        what = "rate limit was reached (429)" if limited else "API is overloaded (529)"
        wait = retry_after_s(exc.response.headers)
        if wait is not None and wait > MAX_RETRY_WAIT_S:
            message = (f"The Anthropic {what} and it asks to wait {wait:.0f} s before trying again. Ask again "
                       f"after that, {_OFFLINE_HINT}.")
        else:
            message = (f"The Anthropic {what} and the retries did not get through. Wait a minute and ask again, "
                       f"{_OFFLINE_HINT}.")
        return PlanningError(message, kind=ErrorKind.RATE_LIMITED, detail=detail)
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        if status == 403:
            hint = "The key is not allowed to use this model or workspace; check its permissions or SAGE_MODEL."
        elif status == 404:
            hint = f"Check that SAGE_MODEL ({settings.model}) names a Claude model available to your key."
        elif status == 400:
            hint = f"Check that SAGE_MODEL ({settings.model}) is a model that supports structured outputs."
        elif status >= 500:
            hint = "The service had an error; try again in a moment."
        else:
            hint = "Try again; if it persists, report it with this message."
        message = f"The Anthropic API refused the request ({status}: {detail}). {hint}"
        return PlanningError(message, kind=ErrorKind.API, detail=detail)
    return PlanningError(f"The Anthropic API call failed ({type(exc).__name__}: {detail}).", kind=ErrorKind.API,
                         detail=detail)


def _bad_answer(why: str, raw: str = "") -> PlanningError:
    return PlanningError(
        f"Claude's answer could not be used ({why}). Ask again, perhaps more precisely, {_OFFLINE_HINT}.",
        kind=ErrorKind.BAD_ANSWER,
        detail=raw[:500] or why,
    )


def bounded_retry_wait(request: APIRequest, call_next: CallNext) -> APIResponse[Any]:
    """Client middleware: an error reply that asks for a wait over :data:`MAX_RETRY_WAIT_S` is marked
    ``x-should-retry: false``, so the SDK raises it at once instead of sleeping (it obeys any retry-after)."""
    response = call_next(request)
    http = response.http_response
    if http.is_success:
        return response
    wait = retry_after_s(http.headers)
    if wait is not None and wait > MAX_RETRY_WAIT_S:
        log.info("the Anthropic API asks to wait %.0f s before retrying; not retrying", wait)
        http.headers["x-should-retry"] = "false"
    return response


def retry_after_s(headers: Any) -> float | None:
    """The wait an error reply asks for, in seconds (``retry-after-ms``, else ``retry-after`` in seconds or as an
    HTTP date), as the SDK reads it; None when it asks for none."""
    try:
        return float(headers.get("retry-after-ms")) / 1000
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    import email.utils
    import time

    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return email.utils.mktime_tz(parsed) - time.time()


def unusable_reply(request: APIRequest, call_next: CallNext) -> APIResponse[Any]:
    """Client middleware: a reply the model refused, cut off at the token limit or left without text is a
    ``bad_answer``, said as such, before the SDK parses it (it would only see JSON that does not parse)."""
    response = call_next(request)
    if not response.http_response.is_success:
        return response  # the SDK raises its own errors for these
    body = response.http_response.json()
    if not isinstance(body, dict) or body.get("type") != "message":
        return response
    stop = body.get("stop_reason")
    blocks = [b for b in body.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"]
    text = "".join(b.get("text") or "" for b in blocks)
    if stop == "refusal":
        raise _bad_answer("the model declined to answer", text)
    if stop == "max_tokens":
        raise _bad_answer("the answer was cut off at the token limit", text)
    if not text.strip():
        raise _bad_answer(f"no text in the reply (stop reason {stop!r})")
    return response


def _not_a_plan(exc: pydantic.ValidationError) -> PlanningError:
    """A reply that does not validate into a :class:`PlanModel`, said by its first problem."""
    first = exc.errors()[0]
    where = first["loc"][0] if first["loc"] else None
    raw = first["input"] if first["type"] == "json_invalid" and isinstance(first["input"], str) else ""
    if first["type"] == "json_invalid":
        why = "the reply is not JSON"
    elif where is None:
        why = "the reply is not a JSON object"
    elif where == "sql":
        why = "the reply has no 'sql' string"
    elif where == "assumptions":
        why = "'assumptions' is not a list"
    else:
        why = f"the reply does not fit the plan ({first['msg']})"
    return _bad_answer(why, raw or str(exc))


def usage_of(response: Any, model: str) -> dict[str, Any]:
    """Token usage of one call: input, output, cache read and cache creation tokens (0 when not reported)."""
    u = getattr(response, "usage", None)
    usage: dict[str, Any] = {
        key: int(getattr(u, key, 0) or 0)
        for key in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    }
    usage["model"] = getattr(response, "model", None) or model
    return usage


__all__ = ["MAX_RETRY_WAIT_S", "ClaudePlanner", "bounded_retry_wait", "retry_after_s", "system_blocks",
           "unusable_reply", "usage_of"]
