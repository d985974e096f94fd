"""A scripted local model server speaking the three wire formats the agent CLIs use, for the
opt-in tests that drive the real ``codex``, ``opencode``, ``claude`` and ``openclaw``
binaries (``test_cli_agents_real.py``, ``openclaw_recorded/record.py``).

* OpenAI Responses API, ``POST …/responses`` with ``stream: true`` (Codex CLI): server-sent
  events ``response.created``, ``response.output_item.done`` (a ``function_call`` or a
  ``message`` item) and ``response.completed`` carrying ``usage`` (``input_tokens``,
  ``input_tokens_details.cached_tokens``, ``output_tokens``).
* OpenAI Chat Completions, ``POST …/chat/completions`` streamed (``chat.completion.chunk``
  deltas, then a usage-only chunk and ``data: [DONE]``) or not (OpenCode through the AI SDK's
  OpenAI-compatible provider; OpenClaw's ``openai-completions`` provider, which streams with
  ``stream_options.include_usage`` and reads ``prompt_tokens_details.cached_tokens``).
* Anthropic Messages API, ``POST …/messages`` streamed (``message_start``,
  ``content_block_start/delta/stop``, ``message_delta`` with ``stop_reason`` and output
  usage, ``message_stop``) or not (Claude Code with ``ANTHROPIC_BASE_URL``).

Wire formats per the public API references of OpenAI ("Streaming API responses", "Chat
Completions streaming") and Anthropic ("Streaming Messages"). The script is a function
``(api, request_json) -> Turn``; the server records every request with the usage it
reported, so a test can compare the CLI's token accounting with what was served.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Turn:
    """One scripted model reply: a text answer or one tool call, with the usage to report.

    Attributes:
        text: assistant text (may accompany a tool call).
        tool: ``(tool name, arguments dict)`` or None.
        input_tokens: prompt tokens reported (cache reads included, OpenAI-style; for the
            Anthropic format the uncached part is ``input_tokens - cached_tokens``).
        cached_tokens: prompt tokens reported as cache reads.
        output_tokens: completion tokens reported (reasoning tokens included, as the APIs do).
        reasoning_tokens: the reasoning part of ``output_tokens`` (OpenAI formats only).
        status: an HTTP error status (429, 401, 529, …) answers with a JSON error body whose
            message is ``text`` instead of a model reply.
        body: with an error ``status``, the exact JSON error body to send instead (e.g.
            FastAPI's ``{"detail": "Not Found"}`` for a route the server lacks).
    """

    text: str | None = None
    tool: tuple[str, dict[str, Any]] | None = None
    input_tokens: int = 100
    cached_tokens: int = 0
    output_tokens: int = 10
    reasoning_tokens: int = 0
    status: int = 200
    body: dict[str, Any] | None = None


@dataclass
class Served:
    """A request the server answered: ``api`` (``responses``, ``chat``, ``messages``),
    the decoded request body, the :class:`Turn` sent back, the request path and
    ``extra`` (the ``authorization`` and ``x-api-key`` request headers)."""

    api: str
    request: dict[str, Any]
    turn: Turn
    path: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _sse(handler: BaseHTTPRequestHandler, events: list[tuple[str | None, Any]]) -> None:
    body = bytearray()
    for name, data in events:
        if name:
            body += f"event: {name}\n".encode()
        body += f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(bytes(body))


def _json(handler: BaseHTTPRequestHandler, status: int, obj: Any) -> None:
    raw = json.dumps(obj).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that gave up on a scripted hang closed the connection: nothing to report
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class FakeModelAPI:
    """Threaded HTTP server on 127.0.0.1 (random port) answering ``/v1/responses``,
    ``/v1/chat/completions`` and ``/v1/messages`` from ``script(api, request) -> Turn``.

    Attributes:
        base_url: ``http://127.0.0.1:<port>/v1``.
        served: every answered model request (:class:`Served`), in arrival order.
        other: ``(method, path)`` of every other request (answered 404 / empty list).
    """

    def __init__(self, script: Callable[[str, dict[str, Any]], Turn]) -> None:
        self.script = script
        self.served: list[Served] = []
        self.other: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._n = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return

            def do_GET(self) -> None:  # noqa: N802
                with outer._lock:
                    outer.other.append(("GET", self.path))
                if self.path.split("?")[0].rstrip("/").endswith("/models"):
                    _json(self, 200, {"object": "list", "data": [], "models": []})
                else:
                    _json(self, 404, {"error": {"message": f"no route {self.path}"}})

            def do_HEAD(self) -> None:  # noqa: N802
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    req = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    req = {"_raw": raw.decode(errors="replace")}
                path = self.path.split("?")[0].rstrip("/")
                api = (
                    "responses"
                    if path.endswith("/responses")
                    else "chat"
                    if path.endswith("/chat/completions")
                    else "messages"
                    if path.endswith("/messages")
                    else None
                )
                if api is None:
                    with outer._lock:
                        outer.other.append(("POST", self.path))
                    if path.endswith("/count_tokens"):
                        _json(self, 200, {"input_tokens": 100})
                    else:
                        _json(self, 404, {"error": {"message": f"no route {self.path}"}})
                    return
                turn = outer.script(api, req)
                with outer._lock:
                    outer._n += 1
                    n = outer._n
                    outer.served.append(
                        Served(
                            api,
                            req,
                            turn,
                            self.path,
                            {
                                "authorization": self.headers.get("authorization"),
                                "x-api-key": self.headers.get("x-api-key"),
                            },
                        )
                    )
                if turn.status != 200 and turn.body is not None:
                    _json(self, turn.status, turn.body)
                    return
                if turn.status != 200:
                    kind = {
                        401: "authentication_error",
                        429: "rate_limit_error",
                        529: "overloaded_error",
                    }
                    _json(
                        self,
                        turn.status,
                        {
                            "type": "error",
                            "error": {
                                "type": kind.get(turn.status, "api_error"),
                                "message": turn.text or "error",
                            },
                        },
                    )
                    return
                getattr(outer, f"_{api}")(self, req, turn, n)

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeModelAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    # -- OpenAI Responses (streamed) ------------------------------------------------------
    def _responses(self, h: BaseHTTPRequestHandler, req: dict, t: Turn, n: int) -> None:
        rid = f"resp_{n}"
        items: list[dict] = []
        if t.text:
            items.append(
                {
                    "type": "message",
                    "id": f"msg_{n}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": t.text, "annotations": []}],
                }
            )
        if t.tool:
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{n}",
                    "call_id": f"call_{n}",
                    "name": t.tool[0],
                    "arguments": json.dumps(t.tool[1]),
                    "status": "completed",
                }
            )
        usage = {
            "input_tokens": t.input_tokens,
            "input_tokens_details": {"cached_tokens": t.cached_tokens},
            "output_tokens": t.output_tokens,
            "output_tokens_details": {"reasoning_tokens": t.reasoning_tokens},
            "total_tokens": t.input_tokens + t.output_tokens,
        }
        base = {
            "id": rid,
            "object": "response",
            "created_at": int(time.time()),
            "model": req.get("model"),
            "status": "in_progress",
            "output": [],
        }
        events: list[tuple[str | None, Any]] = [
            ("response.created", {"type": "response.created", "response": base})
        ]
        for i, item in enumerate(items):
            events.append(
                (
                    "response.output_item.added",
                    {
                        "type": "response.output_item.added",
                        "output_index": i,
                        "item": {**item, "status": "in_progress"},
                    },
                )
            )
            events.append(
                (
                    "response.output_item.done",
                    {"type": "response.output_item.done", "output_index": i, "item": item},
                )
            )
        events.append(
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {**base, "status": "completed", "output": items, "usage": usage},
                },
            )
        )
        _sse(h, events)

    # -- OpenAI Chat Completions ----------------------------------------------------------
    def _chat(self, h: BaseHTTPRequestHandler, req: dict, t: Turn, n: int) -> None:
        usage = {
            "prompt_tokens": t.input_tokens,
            "completion_tokens": t.output_tokens,
            "total_tokens": t.input_tokens + t.output_tokens,
            "prompt_tokens_details": {"cached_tokens": t.cached_tokens},
            "completion_tokens_details": {"reasoning_tokens": t.reasoning_tokens},
        }
        tool_calls = (
            [
                {
                    "index": 0,
                    "id": f"call_{n}",
                    "type": "function",
                    "function": {"name": t.tool[0], "arguments": json.dumps(t.tool[1])},
                }
            ]
            if t.tool
            else None
        )
        finish = "tool_calls" if t.tool else "stop"
        head = {"id": f"chatcmpl-{n}", "created": int(time.time()), "model": req.get("model")}
        if not req.get("stream"):
            msg: dict[str, Any] = {"role": "assistant", "content": t.text}
            if tool_calls:
                msg["tool_calls"] = [
                    {k: v for k, v in tc.items() if k != "index"} for tc in tool_calls
                ]
            _json(
                h,
                200,
                {
                    **head,
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                    "usage": usage,
                },
            )
            return
        chunk = {**head, "object": "chat.completion.chunk"}
        events: list[tuple[str | None, Any]] = [
            (
                None,
                {
                    **chunk,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"role": "assistant", "content": ""},
                            "finish_reason": None,
                        }
                    ],
                },
            )
        ]
        if t.text:
            events.append(
                (
                    None,
                    {
                        **chunk,
                        "choices": [
                            {"index": 0, "delta": {"content": t.text}, "finish_reason": None}
                        ],
                    },
                )
            )
        if tool_calls:
            events.append(
                (
                    None,
                    {
                        **chunk,
                        "choices": [
                            {"index": 0, "delta": {"tool_calls": tool_calls}, "finish_reason": None}
                        ],
                    },
                )
            )
        events.append(
            (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        )
        events.append((None, {**chunk, "choices": [], "usage": usage}))
        events.append((None, "[DONE]"))
        _sse(h, events)

    # -- Anthropic Messages ---------------------------------------------------------------
    def _messages(self, h: BaseHTTPRequestHandler, req: dict, t: Turn, n: int) -> None:
        blocks: list[dict] = []
        if t.text:
            blocks.append({"type": "text", "text": t.text})
        if t.tool:
            blocks.append(
                {"type": "tool_use", "id": f"toolu_{n:04d}", "name": t.tool[0], "input": t.tool[1]}
            )
        stop = "tool_use" if t.tool else "end_turn"
        usage_in = {
            "input_tokens": t.input_tokens - t.cached_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": t.cached_tokens,
        }
        msg = {
            "id": f"msg_{n:04d}",
            "type": "message",
            "role": "assistant",
            "model": req.get("model"),
            "stop_sequence": None,
        }
        if not req.get("stream"):
            _json(
                h,
                200,
                {
                    **msg,
                    "content": blocks,
                    "stop_reason": stop,
                    "usage": {**usage_in, "output_tokens": t.output_tokens},
                },
            )
            return
        events: list[tuple[str | None, Any]] = [
            (
                "message_start",
                {
                    "type": "message_start",
                    "message": {
                        **msg,
                        "content": [],
                        "stop_reason": None,
                        "usage": {**usage_in, "output_tokens": 1},
                    },
                },
            )
        ]
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                events.append(
                    (
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": i,
                            "content_block": {"type": "text", "text": ""},
                        },
                    )
                )
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "text_delta", "text": b["text"]},
                        },
                    )
                )
            else:
                events.append(
                    (
                        "content_block_start",
                        {
                            "type": "content_block_start",
                            "index": i,
                            "content_block": {**b, "input": {}},
                        },
                    )
                )
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {
                                "type": "input_json_delta",
                                "partial_json": json.dumps(b["input"]),
                            },
                        },
                    )
                )
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        events.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": t.output_tokens},
                },
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        _sse(h, events)
