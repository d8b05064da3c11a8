"""A scriptable fake of the Anthropic Messages API: a real HTTP server on 127.0.0.1 for the real SDK to talk to.

Tests point the SDK at it with ``monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)`` and a fake key, queue the
replies they want, and afterwards read what the client actually sent::

    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        fake.enqueue(reply_plan("SELECT 1", ["..."], "big"), error_reply(429))
        ...
        fake.requests[0].body["system"]

Replies are taken from the queue in order, one per request (the SDK's retries each take one).  When the queue is
empty the server answers 500 with an error body that says so (and ``x-should-retry: false``), so a test that
under-scripts fails loudly instead of hanging.  ``POST /v1/messages/count_tokens`` answers a chars/4 estimate.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class Reply:
    """One scripted answer: status, JSON body (or raw bytes), headers, and an optional delay before answering."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    raw: bytes | None = None


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # parsed JSON, or the raw text when it was not JSON
    raw: bytes


def message(
    content: list[dict], *, stop_reason: str = "end_turn", usage: dict | None = None, model: str = "fake-model"
) -> dict:
    """A Messages API response body."""
    return {
        "id": "msg_" + uuid.uuid4().hex[:24],
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage
        or dict(input_tokens=812, output_tokens=164, cache_read_input_tokens=4480, cache_creation_input_tokens=0),
    }


def reply_plan(sql: str, assumptions: list[str] | tuple[str, ...] = (), display_hint: str = "table",
               standalone: str = "", *, comparison: str | None = None, periods: list[str] | None = None,
               **kw) -> Reply:
    """A 200 whose text block is the structured-output JSON of a plan (``standalone``: the question's reading;
    ``comparison`` and ``periods`` are sent only when given, as an older model's reply would lack them)."""
    plan: dict[str, Any] = {"standalone": standalone}
    if comparison is not None:
        plan["comparison"] = comparison
    if periods is not None:
        plan["periods"] = list(periods)
    plan.update({"sql": sql, "assumptions": list(assumptions), "displayHint": display_hint})
    return Reply(body=message([{"type": "text", "text": json.dumps(plan)}], **kw))


def reply_answer(plan: dict, **kw) -> Reply:
    """A 200 whose text block is ``plan`` as JSON, as given (a worked example's answer, say)."""
    return Reply(body=message([{"type": "text", "text": json.dumps(plan)}], **kw))


def reply_decline(kind: str, tables: list[str] | tuple[str, ...] = (), assumptions: list[str] | tuple[str, ...] = (),
                  standalone: str = "", *, fields: dict | None = None, **kw) -> Reply:
    """A 200 whose plan declines: ``sql`` "" with ``decline`` ``{"kind", "tables"}`` (``needs_fetch``,
    ``ambiguous`` or ``declined``; ``standalone``: the question's reading) plus any other decline ``fields``
    (``geographies``, ``states``, ``vintage``, ``suggestions``)."""
    text = json.dumps({"standalone": standalone, "sql": "", "assumptions": list(assumptions), "displayHint": "table",
                       "decline": {"kind": kind, "tables": list(tables), **(fields or {})}})
    return Reply(body=message([{"type": "text", "text": text}], **kw))


def reply_text(text: str, **kw) -> Reply:
    """A 200 with an arbitrary text block (e.g. malformed or off-schema JSON)."""
    return reply_content([{"type": "text", "text": text}], **kw)


def reply_content(blocks: list[dict], **kw) -> Reply:
    """A 200 with arbitrary content blocks (thinking + text, or none at all)."""
    return Reply(body=message(blocks, **kw))


def error_reply(status: int, message_text: str | None = None, *, retry_after_ms: int = 5, **headers: str) -> Reply:
    """An API error with the real error body shape; retryable ones carry a short ``retry-after-ms``."""
    kind = _ERROR_TYPES.get(status, "api_error")
    hdrs = {k.replace("_", "-"): v for k, v in headers.items()}
    if status in (408, 409, 429) or status >= 500:
        hdrs.setdefault("retry-after-ms", str(retry_after_ms))
    body = {
        "type": "error",
        "error": {"type": kind, "message": message_text or f"fake {kind}"},
        "request_id": "req_" + uuid.uuid4().hex[:16],
    }
    return Reply(status=status, body=body, headers=hdrs)


def slow(reply: Reply, seconds: float) -> Reply:
    """``reply``, sent after ``seconds`` (to trip the client's timeout)."""
    reply.delay_s = seconds
    return reply


class FakeAnthropic:
    """The server.  Use as a context manager, or call :meth:`start` / :meth:`stop`."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._queue: list[Reply] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------------------------------------
    def enqueue(self, *replies: Reply) -> FakeAnthropic:
        with self._lock:
            self._queue.extend(replies)
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.split("?")[0] == "/v1/messages"]

    # -- lifecycle -------------------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._server is not None, "start() the fake first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAnthropic:
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in a slow reply
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving ---------------------------------------------------------------------------------------------------
    def _next(self, path: str, body: Any) -> Reply:
        if path == "/v1/messages/count_tokens":
            chars = len(json.dumps(body.get("system", ""))) + len(json.dumps(body.get("messages", [])))
            return Reply(body={"input_tokens": max(1, chars // 4)})
        if path != "/v1/messages":
            return error_reply(404, f"fake server: no route {path}")
        with self._lock:
            if self._queue:
                return self._queue.pop(0)
        return error_reply(500, "fake server: no reply scripted for this request", x_should_retry="false")


def _make_handler(fake: FakeAnthropic):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep test output quiet
            pass

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body: Any = json.loads(raw or b"null")
            except ValueError:
                body = raw.decode("utf-8", "replace")
            path = self.path.split("?")[0]
            with fake._lock:
                fake.requests.append(
                    RecordedRequest("POST", path, {k.lower(): v for k, v in self.headers.items()}, body, raw)
                )
            reply = fake._next(path, body if isinstance(body, dict) else {})
            if reply.delay_s and fake._stopping.wait(reply.delay_s):
                return
            data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("request-id", "req_fake")
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout): nothing to answer
                pass

    return Handler


__all__ = [
    "FakeAnthropic",
    "RecordedRequest",
    "Reply",
    "error_reply",
    "message",
    "reply_answer",
    "reply_content",
    "reply_decline",
    "reply_plan",
    "reply_text",
    "slow",
]
