"""A small client for the Census Data API (ACS 5-year detailed tables): metadata, data, retries, clear errors.

It speaks only the few calls ``census fetch`` needs, against ``settings.census_api_url`` (tests point it at a local
fake server):

* ``{base}.json`` — the API's dataset discovery (a DCAT catalog, ``https://api.census.gov/data.json``): every
  dataset with its ``c_vintage`` and ``c_dataset`` (``["acs", "acs5"]`` for the 5-year detailed tables), from which
  :meth:`CensusClient.releases` reads the ACS 5-year releases published (``census update`` takes the newest);
* ``{base}/{year}/acs/acs5/groups/{TABLE}.json`` — the table's variables with their labels, concept and universe;
* ``{base}/{year}/acs/acs5?get=V1,V2,...&for=...[&in=state:...]`` — a JSON array of arrays, header row first,
  every value a string, the geography columns appended.  The ``for``/``in`` clause of each geography level is in
  :data:`GEOGRAPHIES`: ``us:1``; ``state:*``; ``county:*`` in a state or all; ``place:*`` in a state or all;
  ``metropolitan statistical area/micropolitan statistical area:*``; ``congressional district:*`` in a state or
  all; ``tract:*`` in one state (the API wants the state); ``zip code tabulation area:*``.

Why plain ``urllib`` and not httpx: httpx logs every request URL at INFO level, and the URL carries
``CENSUS_API_KEY``; urllib logs nothing.  The key is appended to data requests only (metadata is served without
one) and never appears in a message, a log line or an exception chain: errors name the request by a redacted URL.

Redirects are *not* followed, on purpose: the API answers a missing or invalid key with a 302 to an HTML page
(``missing_key.html`` / ``invalid_key.html``, header ``X-DataWebAPI-KeyError``); following it would turn a key
problem into a puzzling JSON parse error.  A 200 HTML "Invalid Key" page (served directly in 2024) is recognised
too.

Transient trouble (429, 5xx, time-outs, dropped connections) is retried with exponential backoff, a bounded number
of times; ``Retry-After`` is honoured up to the backoff cap.  "Network down" (connection refused, name resolution
failed) is not retried: waiting will not fix it, and the user should know at once.
"""

from __future__ import annotations

import http.client
import json
import logging
import re
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import CensusApiError, ErrorKind
from ..settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Geography:
    """How the API names one geography level: the ``for`` predicate, whether it takes ``in=state:...`` (``"no"``,
    ``"optional"`` or ``"required"``) and the geography columns it appends to each row, in order."""

    level: str
    predicate: str
    in_state: str
    columns: tuple[str, ...]

    def fips(self, row: dict[str, str]) -> str:
        """The level's code (``public.geography.fips``) from a row's geography columns."""
        if self.level == "nation":
            return ""
        return "".join(row[c] for c in self.columns)


CBSA_PREDICATE = "metropolitan statistical area/micropolitan statistical area"
#: every level ``census fetch`` knows, by ``public.geography.level``
GEOGRAPHIES: dict[str, Geography] = {
    "nation": Geography("nation", "us", "no", ("us",)),
    "state": Geography("state", "state", "no", ("state",)),
    "county": Geography("county", "county", "optional", ("state", "county")),
    "place": Geography("place", "place", "optional", ("state", "place")),
    "cbsa": Geography("cbsa", CBSA_PREDICATE, "no", (CBSA_PREDICATE,)),
    "cd": Geography("cd", "congressional district", "optional", ("state", "congressional district")),
    "tract": Geography("tract", "tract", "required", ("state", "county", "tract")),
    "zcta": Geography("zcta", "zip code tabulation area", "no", ("zip code tabulation area",)),
}

#: the API's limit on items in ``get=`` (NAME counts; the geography columns do not)
MAX_GET_ITEMS = 50

KEY_SIGNUP_URL = "https://api.census.gov/data/key_signup.html"
KEY_HELP = (
    f"Get a free key at {KEY_SIGNUP_URL}, then set CENSUS_API_KEY (in the environment or in "
    ".streamlit/secrets.toml) and run the command again."
)

_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


def dataset_path(year: int) -> str:
    """The API path of the ACS 5-year detailed tables of ``year`` (the last year of the 5-year period)."""
    return f"{int(year)}/acs/acs5"


@dataclass
class VariableMeta:
    """One estimate line of a table, from ``groups/{TABLE}.json``."""

    code: str  # B25003_002E
    label: str
    concept: str
    universe: str | None = None
    predicate_type: str | None = None

    @property
    def margin_code(self) -> str:
        return self.code[:-1] + "M"


@dataclass
class TableMeta:
    """A table's estimate lines (in line order) and its concept and universe."""

    table_id: str
    year: int
    concept: str
    universe: str | None
    variables: list[VariableMeta] = field(default_factory=list)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Turn every redirect into an HTTPError (see the module docstring: key errors arrive as redirects)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D401 - urllib's signature
        return None


class CensusClient:
    """HTTP access to the Census Data API with retries and actionable errors.

    ``attempts`` is the number of tries per request (1 = no retry); the delay before retry *n* is
    ``backoff * 2**(n-1)`` seconds, capped at ``max_backoff``.  Tests pass tiny values and a short ``timeout``.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        attempts: int = 4,
        backoff: float = 1.0,
        max_backoff: float = 20.0,
        sleep: Callable[[float], None] = time.sleep,
        user_agent: str = "census-sage (ACS fetch)",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._key = api_key or None
        self.timeout = timeout
        self.attempts = max(1, int(attempts))
        self.backoff = max(0.0, backoff)
        self.max_backoff = max(0.0, max_backoff)
        self._sleep = sleep
        self._opener = urllib.request.build_opener(_NoRedirect())
        self._headers = {"User-Agent": user_agent, "Accept": "application/json"}
        self.requests = 0  # HTTP requests sent, retries included
        self.retries = 0

    @classmethod
    def from_settings(cls, settings: Settings, **kw: Any) -> CensusClient:
        return cls(settings.census_api_url, settings.census_api_key, **kw)

    def __repr__(self) -> str:  # never shows the key
        return f"CensusClient({self.base_url!r}, key={'set' if self._key else 'not set'})"

    # ------------------------------------------------------------------ public calls
    def releases(self) -> list[int]:
        """The years of the ACS 5-year detailed tables the API publishes, ascending, from its dataset discovery
        (``{base}.json``: datasets whose ``c_dataset`` is exactly ``["acs", "acs5"]`` — not the profile, subject or
        comparison tables of the same survey — and that are not marked unavailable)."""
        body = self.request_json(".json", {}, what="the list of datasets (data.json)", with_key=False)
        entries = body.get("dataset") if isinstance(body, dict) else None
        if not isinstance(entries, list):
            raise CensusApiError(
                "The Census Data API answered the list of datasets (data.json) with something other than a catalog.",
                kind=ErrorKind.BAD_RESPONSE, detail=_snippet(json.dumps(body)[:300]),
            )
        years = set()
        for entry in entries:
            if not isinstance(entry, dict) or entry.get("c_dataset") != ["acs", "acs5"]:
                continue
            if entry.get("c_isAvailable") is False:
                continue
            try:
                years.add(int(str(entry.get("c_vintage"))))
            except ValueError:
                continue
        if not years:
            raise CensusApiError("The Census Data API's list of datasets (data.json) names no ACS 5-year release.",
                                 kind=ErrorKind.EMPTY)
        return sorted(years)

    def table_meta(self, year: int, table_id: str) -> TableMeta:
        """The estimate lines of ``table_id`` in the ``year`` ACS 5-year, from ``groups/{TABLE}.json``.

        The group listing also carries EA/M/MA, GEO_ID and NAME entries and (since 2024) the variables of the
        race-iteration subtables (B25003A...); only ``{TABLE}_nnnE`` entries are kept.
        """
        table_id = table_id.upper()
        what = f"the metadata of table {table_id} ({year} ACS 5-year)"
        body = self.request_json(f"{dataset_path(year)}/groups/{table_id}.json", {}, what=what, with_key=False,
                                 not_found=_unknown_table_message(table_id, year))
        entries = body.get("variables") if isinstance(body, dict) else None
        if not isinstance(entries, dict):
            raise CensusApiError(
                f"The Census Data API answered {what} with something other than a variables listing.",
                kind=ErrorKind.BAD_RESPONSE, detail=_snippet(json.dumps(body)[:300]),
            )
        pattern = re.compile(rf"^{re.escape(table_id)}_(\d{{3}})E$")
        lines: list[VariableMeta] = []
        concept = universe = None
        for code, raw in entries.items():
            if not pattern.match(code) or not isinstance(raw, dict):
                continue
            entry = {str(k).strip(): v for k, v in raw.items()}  # groups.json has been seen with "universe "
            var = VariableMeta(
                code=code,
                label=str(entry.get("label") or code),
                concept=str(entry.get("concept") or ""),
                universe=(str(entry["universe"]).strip() or None) if entry.get("universe") else None,
                predicate_type=entry.get("predicateType"),
            )
            lines.append(var)
            concept = concept or var.concept or None
            universe = universe or var.universe
        if not lines:
            raise CensusApiError(_unknown_table_message(table_id, year), kind=ErrorKind.UNKNOWN_TABLE)
        lines.sort(key=lambda v: v.code)
        return TableMeta(table_id=table_id, year=int(year), concept=concept or table_id, universe=universe,
                         variables=lines)

    def group_universes(self, year: int) -> dict[str, dict]:
        """``{table_id: {"description", "universe"}}`` from ``groups.json`` (one call for every table)."""
        body = self.request_json(f"{dataset_path(year)}/groups.json", {}, what=f"the table list of {year}",
                                 with_key=False)
        out: dict[str, dict] = {}
        for g in (body.get("groups") or []) if isinstance(body, dict) else []:
            if not isinstance(g, dict):
                continue
            g = {str(k).strip(): v for k, v in g.items()}
            if g.get("name"):
                out[str(g["name"])] = {"description": g.get("description"), "universe": g.get("universe")}
        return out

    def data(self, year: int, items: list[str], geography: str, states: list[str] | None = None) -> list[list]:
        """Rows of ``items`` for every place of one level (:data:`GEOGRAPHIES`: ``"nation"``, ``"state"``,
        ``"county"``, ``"place"``, ``"cbsa"``, ``"cd"``, ``"tract"``, ``"zcta"``), in ``states`` (2-digit FIPS
        codes) when given: ``for=state:48,06`` for states, ``in=state:48`` for the levels inside a state (one state
        per request for tracts, which the API only serves within a state).

        Returns the rows as sent, header first; raises :class:`CensusApiError` on an empty answer (204 or no data
        rows), an HTML page, or anything that is not an array of arrays.
        """
        if not items or len(items) > MAX_GET_ITEMS:
            raise ValueError(f"between 1 and {MAX_GET_ITEMS} items per request, not {len(items)}")
        geo = GEOGRAPHIES.get(geography)
        if geo is None:
            raise ValueError(f"geography must be one of {', '.join(GEOGRAPHIES)}, not {geography!r}")
        params = {"get": ",".join(items)}
        where = ""
        if geography == "nation":
            params["for"] = "us:1"
        elif geography == "state":
            params["for"] = "state:" + (",".join(states) if states else "*")
        else:
            params["for"] = f"{geo.predicate}:*"
            if geo.in_state == "required" and (not states or len(states) != 1):
                raise ValueError(f"the {geography} level is fetched one state at a time")
            if geo.in_state != "no":
                params["in"] = "state:" + (",".join(states) if states else "*")
                where = f" in state {','.join(states)}" if states else ""
            elif states:
                raise ValueError(f"the {geography} level is not inside a state")
        plural = {"county": "county", "cd": "congressional district", "zcta": "ZCTA", "cbsa": "metro area"}
        what = f"{items[0].split('_')[0]} for every {plural.get(geography, geography)}{where} ({year} ACS 5-year)"
        body = self.request_json(dataset_path(year), params, what=what, with_key=True)
        if (
            not isinstance(body, list)
            or not body
            or not all(isinstance(r, list) for r in body)
            or not all(isinstance(h, str) for h in body[0])
        ):
            raise CensusApiError(
                f"The Census Data API answered the request for {what} with something other than a table "
                "(expected a JSON array of arrays with a header row).",
                kind=ErrorKind.BAD_RESPONSE, detail=_snippet(json.dumps(body)[:300]),
            )
        if len(body) < 2:
            raise _empty(what)
        width = len(body[0])
        if any(len(r) != width for r in body[1:]):
            raise CensusApiError(
                f"The Census Data API answered the request for {what} with rows of uneven length.",
                kind=ErrorKind.BAD_RESPONSE,
            )
        return body

    # ------------------------------------------------------------------ the transport
    def _url(self, path: str, params: dict[str, str], with_key: bool) -> tuple[str, str]:
        """(real URL, URL safe to show): the second never contains the key."""
        # ".json" is the discovery document beside the base ({base}.json); everything else is below it
        shown = f"{self.base_url}{path}" if path.startswith(".") else f"{self.base_url}/{path}"
        if params:
            # spaces as %20 and '/' kept, as the API's documented predicates are written ("metropolitan statistical
            # area/micropolitan statistical area:*")
            shown += "?" + urllib.parse.urlencode(params, safe=":*,()/", quote_via=urllib.parse.quote)
        real = shown
        if with_key and self._key:
            real += ("&" if params else "?") + urllib.parse.urlencode({"key": self._key})
        return real, shown

    def request_json(
        self, path: str, params: dict[str, str], *, what: str, with_key: bool, not_found: str | None = None
    ) -> Any:
        """GET ``{base}/{path}?params`` and decode the JSON answer, retrying transient failures."""
        url, shown = self._url(path, params, with_key)
        last: CensusApiError | None = None
        for attempt in range(1, self.attempts + 1):
            if attempt > 1:
                delay = min(self.max_backoff, self.backoff * 2 ** (attempt - 2))
                if last is not None and last.retry_after is not None:
                    delay = min(self.max_backoff, max(delay, last.retry_after))
                self.retries += 1
                log.info("retrying %s in %.2fs (%s)", shown, delay, last.detail if last else "")
                self._sleep(delay)
            try:
                return self._once(url, shown, what=what, not_found=not_found)
            except CensusApiError as exc:
                if not exc.retryable:
                    raise
                last = exc
        assert last is not None
        raise CensusApiError(f"{last.message} Gave up after {self.attempts} tries.", kind=last.kind,
                             detail=last.detail, retryable=True, retry_after=last.retry_after) from None

    def _once(self, url: str, shown: str, *, what: str, not_found: str | None) -> Any:
        self.requests += 1
        req = urllib.request.Request(url, headers=self._headers)
        try:
            with self._opener.open(req, timeout=self.timeout) as resp:
                status = resp.status
                headers = resp.headers
                body = resp.read()
        except urllib.error.HTTPError as exc:
            # the exception object carries the URL with the key: keep nothing of it but status, headers and body
            status, headers = exc.code, exc.headers
            try:
                body = exc.read() or b""
            except (OSError, http.client.HTTPException):
                body = b""
            finally:
                exc.close()
            raise self._http_error(status, headers, body, what=what, shown=shown, not_found=not_found) from None
        except TimeoutError as exc:
            raise _retryable(
                f"The Census Data API did not answer the request for {what} within {self.timeout:g} s.",
                ErrorKind.TIMEOUT, f"{shown}: {type(exc).__name__}",
            ) from None
        except urllib.error.URLError as exc:
            raise self._network_error(exc.reason, what=what, shown=shown) from None
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            raise self._network_error(exc, what=what, shown=shown) from None

        if status == 204 or not body.strip():
            raise _empty(what)
        ctype = (headers.get("Content-Type") or "").lower()
        text = body.decode("utf-8", errors="replace")
        if headers.get("X-DataWebAPI-KeyError") or "html" in ctype or text.lstrip()[:1] == "<":
            raise _html_answer(text, what=what, shown=shown, status=status)
        try:
            return json.loads(text)
        except ValueError:
            raise CensusApiError(
                f"The Census Data API answered the request for {what} with something that is not JSON.",
                kind=ErrorKind.BAD_RESPONSE, detail=f"{shown}: {_snippet(text)}",
            ) from None

    def _http_error(self, status: int, headers, body: bytes, *, what: str, shown: str,
                    not_found: str | None) -> CensusApiError:
        text = body.decode("utf-8", errors="replace")
        location = headers.get("Location", "") if headers else ""
        if status in (301, 302, 303, 307, 308):
            if (headers and headers.get("X-DataWebAPI-KeyError")) or "key" in location.lower():
                return _key_error(missing="missing" in location.lower() and not self._key)
            return CensusApiError(
                f"The Census Data API redirected the request for {what} to {location or 'another address'}; "
                "check SAGE_CENSUS_API_URL.",
                kind=ErrorKind.BAD_RESPONSE, detail=f"{shown}: HTTP {status}",
            )
        if status in _RETRY_STATUSES:
            return _retryable(
                f"The Census Data API is busy or failing (HTTP {status}) for {what}.",
                ErrorKind.RATE_LIMITED if status == 429 else ErrorKind.UNAVAILABLE,
                f"{shown}: HTTP {status} {_snippet(text)}",
                retry_after=_retry_after(headers),
            )
        if status == 404:
            return CensusApiError(
                not_found or f"The Census Data API has no {what}: check the vintage (ACS 5-year data exist for "
                "2009 up to the latest release).",
                kind=ErrorKind.NOT_FOUND, detail=f"{shown}: HTTP 404 {_snippet(text)}",
            )
        if status in (401, 403) or "invalid key" in text.lower():
            return _key_error(missing=False)
        if status == 400:
            low = text.lower()
            if "unknown variable" in low:
                kind = ErrorKind.UNKNOWN_VARIABLE
            elif "limited to 50" in low:
                kind = ErrorKind.TOO_MANY_VARIABLES
            elif "geography" in low or "heirarchy" in low or "hierarchy" in low:
                kind = ErrorKind.BAD_GEOGRAPHY
            else:
                kind = ErrorKind.BAD_REQUEST
            clean = re.sub(r"^(error:\s*)+", "", text.strip(), flags=re.I)
            return CensusApiError(
                f"The Census Data API refused the request for {what}: {_snippet(clean, 200)}",
                kind=kind, detail=f"{shown}: HTTP 400 {_snippet(text)}",
            )
        return CensusApiError(
            f"The Census Data API answered the request for {what} with HTTP {status}.",
            kind=ErrorKind.BAD_RESPONSE, detail=f"{shown}: HTTP {status} {_snippet(text)}",
        )

    def _network_error(self, reason: Any, *, what: str, shown: str) -> CensusApiError:
        host = urllib.parse.urlsplit(self.base_url).netloc or self.base_url
        if isinstance(reason, (TimeoutError, socket.timeout)):
            return _retryable(
                f"The Census Data API did not answer the request for {what} within {self.timeout:g} s.",
                ErrorKind.TIMEOUT, f"{shown}: timeout",
            )
        if isinstance(reason, (ConnectionResetError, ConnectionAbortedError, http.client.RemoteDisconnected,
                               http.client.IncompleteRead, BrokenPipeError)):
            return _retryable(
                f"The connection to the Census Data API at {host} was dropped while fetching {what}.",
                ErrorKind.NETWORK, f"{shown}: {type(reason).__name__}",
            )
        why = "the host name could not be resolved" if isinstance(reason, socket.gaierror) else str(reason)
        return CensusApiError(
            f"Could not reach the Census Data API at {host} ({why}). Check the internet connection (and a proxy, if "
            "you use one), or SAGE_CENSUS_API_URL; nothing was loaded.",
            kind=ErrorKind.NETWORK, detail=f"{shown}: {type(reason).__name__}: {reason}",
        )


# ---------------------------------------------------------------------- helpers
def _retryable(message: str, kind: ErrorKind, detail: str, retry_after: float | None = None) -> CensusApiError:
    return CensusApiError(message, kind=kind, detail=detail, retryable=True, retry_after=retry_after)


def _retry_after(headers) -> float | None:
    value = headers.get("Retry-After") if headers else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _empty(what: str) -> CensusApiError:
    return CensusApiError(
        f"The Census Data API returned no rows for {what} (HTTP 204 or an empty table). The table may not be "
        "published for that geography or vintage; check the table id and vintage.",
        kind=ErrorKind.EMPTY,
    )


def _key_error(*, missing: bool) -> CensusApiError:
    if missing:
        return CensusApiError(
            "The Census Data API requires a key and none is set. " + KEY_HELP, kind=ErrorKind.MISSING_KEY
        )
    return CensusApiError(
        "The Census Data API rejected CENSUS_API_KEY as invalid. " + KEY_HELP, kind=ErrorKind.BAD_KEY
    )


def _html_answer(text: str, *, what: str, shown: str, status: int) -> CensusApiError:
    low = text.lower()
    if "invalid key" in low or ("not valid" in low and "key" in low):
        return _key_error(missing=False)
    if "missing key" in low or "valid key must be included" in low:
        return _key_error(missing=True)
    return CensusApiError(
        f"The Census Data API answered the request for {what} with a web page instead of data (HTTP {status}). "
        "Check SAGE_CENSUS_API_URL and the vintage.",
        kind=ErrorKind.BAD_RESPONSE, detail=f"{shown}: {_snippet(text)}",
    )


def _unknown_table_message(table_id: str, year: int) -> str:
    return (
        f"Table {table_id} is not in the {year} ACS 5-year detailed tables (or that vintage is not published). "
        "Check the id (e.g. B25003) and the vintage, or find a table with `python -m sage census tables --search "
        "TEXT`."
    )


def _snippet(text: str, limit: int = 160) -> str:
    text = re.sub(r"\s+", " ", text or "").strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = [
    "CensusClient",
    "GEOGRAPHIES",
    "Geography",
    "KEY_SIGNUP_URL",
    "MAX_GET_ITEMS",
    "TableMeta",
    "VariableMeta",
    "dataset_path",
]
