"""Test utilities: a scripted OpenAI-compatible HTTP server on 127.0.0.1.

Tests (ours and users') drive the real ``openai`` client against this server instead of a
real endpoint, so no test needs the internet or an API key. The server answers
``POST …/chat/completions`` from a script of :class:`ScriptedReply` items (or a function of
the request), and ``GET …/models``. Every request body is recorded.

Example::

    with FakeOpenAIServer([ScriptedReply(status=429), chat_reply('{"ok": true}')]) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="test")
        ...
        assert srv.calls == 2
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ScriptedReply:
    """One scripted HTTP reply.

    Attributes:
        status: HTTP status code (200, 429, 500, …).
        body: a dict (sent as JSON) or a raw string (sent as-is, e.g. malformed JSON).
        delay: seconds to sleep before answering (to provoke client timeouts).
        headers: extra response headers (e.g. ``{"retry-after": "0"}``).
    """

    status: int = 200
    body: dict[str, Any] | str = field(default_factory=dict)
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


def chat_reply(
    content: str | None = None,
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    cached_tokens: int = 0,
    model: str = "fake-model",
    finish_reason: str | None = None,
) -> ScriptedReply:
    """A 200 reply in the Chat Completions format.

    Args:
        content: the assistant message text.
        tool_calls: OpenAI-format tool calls, each ``{"name": str, "arguments": dict|str}``
            (ids are generated).
        prompt_tokens, completion_tokens, cached_tokens: the usage the server reports.
    """
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{i}_{int(time.time() * 1e6) % 10**9}",
                "type": "function",
                "function": {
                    "name": tc["name"],
                    "arguments": tc["arguments"]
                    if isinstance(tc["arguments"], str)
                    else json.dumps(tc["arguments"]),
                },
            }
            for i, tc in enumerate(tool_calls)
        ]
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        },
    }
    return ScriptedReply(status=200, body=body)


Script = Iterable[ScriptedReply] | Callable[[dict[str, Any]], ScriptedReply]


class FakeOpenAIServer:
    """A threaded HTTP server on 127.0.0.1 with a random free port.

    Args:
        script: a sequence of replies consumed in order (an exhausted script answers 500
            with an explanatory body), or a function ``request_json -> ScriptedReply``.
        models: the entries ``GET …/models`` lists (default one, ``{"id": "fake-model"}``);
            None entries list nothing and answer 404 (an endpoint without the route).
        serial: serve one chat request at a time, the others waiting their turn (as
            llama-cpp-python's server does).

    Attributes:
        base_url: ``http://127.0.0.1:<port>/v1``, for ``openai.OpenAI(base_url=…)``.
        requests: decoded JSON bodies of every chat request, in arrival order.
        bodies: the raw bytes of the same request bodies (for byte-for-byte comparisons).
    """

    def __init__(
        self,
        script: Script,
        models: list[dict[str, Any]] | None | str = "default",
        serial: bool = False,
    ):
        self.models: list[dict[str, Any]] | None = (
            [{"id": "fake-model", "object": "model"}] if models == "default" else models
        )  # type: ignore[assignment]
        self._fn: Callable[[dict[str, Any]], ScriptedReply]
        if callable(script):
            self._fn = script  # type: ignore[assignment]
        else:
            queue = list(script)
            lock = threading.Lock()

            def next_reply(_: dict[str, Any]) -> ScriptedReply:
                with lock:
                    if queue:
                        return queue.pop(0)
                return ScriptedReply(status=500, body={"error": {"message": "script exhausted"}})

            self._fn = next_reply
        self.requests: list[dict[str, Any]] = []
        self.bodies: list[bytes] = []
        self._lock = threading.Lock()
        self._serve_lock = threading.Lock() if serial else None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # silence
                return

            def _send(self, reply: ScriptedReply) -> None:
                data = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                raw = data.encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(raw)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(raw)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models") and outer.models is not None:
                    data = [{"object": "model", **m} for m in outer.models]
                    self._send(ScriptedReply(body={"object": "list", "data": data}))
                else:
                    self._send(ScriptedReply(status=404, body={"error": {"message": "not found"}}))

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    req = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    req = {"_raw": raw.decode(errors="replace")}
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(
                        ScriptedReply(
                            status=404, body={"error": {"message": f"no route {self.path}"}}
                        )
                    )
                    return
                if outer._serve_lock is not None:
                    with outer._serve_lock:
                        self._answer(req, raw)
                else:
                    self._answer(req, raw)

            def _answer(self, req: dict[str, Any], raw: bytes) -> None:
                with outer._lock:
                    outer.requests.append(req)
                    outer.bodies.append(raw)
                reply = outer._fn(req)
                if reply.delay:
                    time.sleep(reply.delay)
                self._send(reply)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def calls(self) -> int:
        """Number of chat requests received so far."""
        with self._lock:
            return len(self.requests)

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
