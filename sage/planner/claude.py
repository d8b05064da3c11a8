"""The Claude planner: one Messages API call per try, answered as JSON that always parses.

Choices, and why:

* **Structured outputs** (``output_config={"format": {"type": "json_schema", ...}}``) rather than a forced tool
  call.  The answer *is* the plan, not a pretend call to a tool nobody runs; decoding is constrained to
  :data:`PLAN_SCHEMA`, so a reply that stopped normally is valid JSON of the right shape; and it stays valid when a
  model thinks before answering (a forced ``tool_choice`` cannot be combined with extended thinking).  The reply is
  still validated here (:func:`parse_plan`): a cut-off or refused answer, or a server that ignores the format,
  becomes a ``bad_answer`` :class:`PlanningError` instead of a crash.
* **Prompt caching**: the system prompt and the worked examples are the same for every question, so they go in
  the ``system`` blocks with ``cache_control: ephemeral`` on the last one; only the retrieved context, the failed
  attempts and the question (the user message) change.
* **The SDK does transport**: its own retries (``max_retries``, exponential back-off honouring ``retry-after``) on
  429, 5xx, 529 and connection errors, with ``settings.claude_timeout_s`` per try; ``ANTHROPIC_BASE_URL`` is
  honoured by the SDK itself (never passed here).  The key is passed explicitly from :class:`Settings`, so no other
  credential in the environment (``ANTHROPIC_AUTH_TOKEN``, profiles) is ever read or sent.
* Errors become :class:`PlanningError` with a ``kind`` the app and CLI can act on: ``no_key``, ``bad_key``,
  ``rate_limited``, ``network``, ``bad_answer``, ``api``.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import replace
from typing import Any, Callable, Sequence

from ..errors import ErrorKind, PlanningError
from ..types import Chunk
from ..settings import Settings
from ..types import DISPLAY_HINTS
from .base import Attempt, Plan
from .prompt import FEW_SHOT_EXAMPLES, SYSTEM_PROMPT, build_user_message, format_examples, is_internal

log = logging.getLogger(__name__)

#: the JSON shape every answer is decoded into (structured outputs; see ``SYSTEM_PROMPT`` # Output), written in the
#: strict form the SDK's own ``transform_schema`` produces (an enum carries no ``type``), so it is sent as is
PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sql": {"type": "string", "description": 'One PostgreSQL SELECT statement, or "" when the data cannot answer.'},
        "assumptions": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Short plain-English assumptions a census analyst needs to trust the answer.",
        },
        "displayHint": {"enum": list(DISPLAY_HINTS)},
    },
    "required": ["sql", "assumptions", "displayHint"],
    "additionalProperties": False,
}

#: the answer is ~100-600 tokens of JSON; the headroom covers a model that thinks before answering
MAX_TOKENS = 4096
#: the SDK's own retries (429, 5xx, 529, connection errors), with its back-off
MAX_RETRIES = 2

_OFFLINE_HINT = "or use the offline planner (SAGE_PLANNER=offline, or --planner offline)"


def system_blocks() -> list[dict[str, Any]]:
    """The static, cached prefix: the rules, then the worked examples with the cache breakpoint after them."""
    return [
        {"type": "text", "text": SYSTEM_PROMPT},
        {"type": "text", "text": format_examples(FEW_SHOT_EXAMPLES), "cache_control": {"type": "ephemeral"}},
    ]


class ClaudePlanner:
    """:class:`~sage.planner.base.Planner` on the Anthropic Messages API.

    ``measures_fn(question) -> list`` (e.g. ``sage.census.semantic.match_measures``) adds the semantic-layer
    measures matching the question to its context; any object with ``name``, ``formula``, ``unit`` and
    ``description`` will do.  One client (one connection pool) is kept per planner.
    """

    name = "claude"

    def __init__(
        self,
        settings: Settings,
        measures_fn: Callable[[str], Sequence[Any]] | None = None,
        *,
        max_retries: int = MAX_RETRIES,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        if not settings.anthropic_api_key:
            raise PlanningError(
                "The Claude planner needs an Anthropic API key: set ANTHROPIC_API_KEY in the environment or in "
                f".streamlit/secrets.toml ({_OFFLINE_HINT}).",
                kind=ErrorKind.NO_KEY,
            )
        import anthropic  # imported here so the offline planner never pays for it

        self.settings = settings
        self.model = settings.model
        self.max_tokens = max_tokens
        self.measures_fn = measures_fn
        self._client = anthropic.Anthropic(
            api_key=settings.anthropic_api_key,
            timeout=settings.claude_timeout_s,
            max_retries=max_retries,
        )
        self._system = system_blocks()

    def plan(self, question: str, chunks: Sequence[Chunk], attempts: Sequence[Attempt] = ()) -> Plan:
        measures = self._measures(question)
        message = build_user_message(
            question, [c for c in chunks if not is_internal(c)], error_context=list(attempts), measures=measures
        )
        response = self._call(message)
        plan = replace(parse_plan(response), usage=usage_of(response, self.model))
        log.info("claude plan: model=%s usage=%s", self.model, plan.usage)
        return plan

    def _measures(self, question: str) -> list[Any]:
        if self.measures_fn is None:
            return []
        try:
            return list(self.measures_fn(question) or [])
        except Exception as exc:  # the measures are an aid: a failure there must not stop planning
            log.warning("semantic-layer measures unavailable (%s: %s)", type(exc).__name__, exc)
            return []

    def _call(self, message: str):
        import anthropic

        try:
            return self._client.messages.create(
                model=self.model,
                max_tokens=self.max_tokens,
                system=self._system,
                messages=[{"role": "user", "content": message}],
                output_config={"format": {"type": "json_schema", "schema": PLAN_SCHEMA}},
            )
        except anthropic.APIError as exc:
            raise _planning_error(exc, self.settings) from exc


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
    import anthropic

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
        return PlanningError(
            f"The Anthropic {what} and the retries did not get through. Wait a minute and ask again, "
            f"{_OFFLINE_HINT}.",
            kind=ErrorKind.RATE_LIMITED,
            detail=detail,
        )
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
    return PlanningError(f"The Anthropic API call failed ({type(exc).__name__}: {detail}).", kind=ErrorKind.API, detail=detail)


def _bad_answer(why: str, raw: str = "") -> PlanningError:
    return PlanningError(
        f"Claude's answer could not be used ({why}). Ask again, perhaps more precisely, {_OFFLINE_HINT}.",
        kind=ErrorKind.BAD_ANSWER,
        detail=raw[:500] or why,
    )


def _strip_fence(text: str) -> str:
    m = re.fullmatch(r"\s*```(?:json)?\s*(.*?)\s*```\s*", text, re.DOTALL)
    return m.group(1) if m else text


def parse_plan(response: Any) -> Plan:
    """Validate a Messages API response into a :class:`Plan`, or raise a ``bad_answer`` :class:`PlanningError`.

    Accepts the structured-output text block; an unknown display hint becomes ``table``; SQL is trimmed of
    whitespace and trailing semicolons.  Thinking blocks are ignored.
    """
    stop = getattr(response, "stop_reason", None)
    blocks = getattr(response, "content", None) or []
    text = "".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", "") == "text")
    if stop == "refusal":
        raise _bad_answer("the model declined to answer", text)
    if stop == "max_tokens":
        raise _bad_answer("the answer was cut off at the token limit", text)
    if not text.strip():
        raise _bad_answer(f"no text in the reply (stop reason {stop!r})")
    try:
        data = json.loads(_strip_fence(text))
    except ValueError:
        raise _bad_answer("the reply is not JSON", text) from None
    return plan_from_dict(data, raw=text)


def plan_from_dict(data: Any, raw: str = "") -> Plan:
    """Check the JSON object against :data:`PLAN_SCHEMA` (leniently where harmless) and build the :class:`Plan`."""
    if not isinstance(data, dict):
        raise _bad_answer("the reply is not a JSON object", raw)
    sql = data.get("sql")
    if not isinstance(sql, str):
        raise _bad_answer("the reply has no 'sql' string", raw)
    assumptions = data.get("assumptions", [])
    if isinstance(assumptions, str):
        assumptions = [assumptions]
    if not isinstance(assumptions, list):
        raise _bad_answer("'assumptions' is not a list", raw)
    hint = data.get("displayHint", data.get("display_hint", "table"))
    hint = hint if isinstance(hint, str) and hint in DISPLAY_HINTS else "table"
    sql = sql.strip()
    while sql.endswith(";"):
        sql = sql[:-1].rstrip()
    return Plan(
        sql=sql,
        assumptions=[str(a).strip() for a in assumptions if str(a).strip()],
        display_hint=hint,
        planner=ClaudePlanner.name,
    )


def usage_of(response: Any, model: str) -> dict[str, Any]:
    """Token usage of one call: input, output, cache read and cache creation tokens (0 when not reported)."""
    u = getattr(response, "usage", None)
    usage = {
        key: int(getattr(u, key, 0) or 0)
        for key in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    }
    usage["model"] = getattr(response, "model", None) or model
    return usage


__all__ = ["ClaudePlanner", "PLAN_SCHEMA", "parse_plan", "plan_from_dict", "system_blocks", "usage_of"]
