"""Test utilities: a scripted OpenAI-compatible HTTP server on 127.0.0.1.

Tests (ours and users') drive the real ``openai`` client against this server instead of a
real endpoint, so no test needs the internet or an API key. The server answers
``POST …/chat/completions`` from a script of :class:`ScriptedReply` items (or a function of
the request), and ``GET …/models``. Every request body is recorded.

Knobs for real-endpoint behaviour:

* ``strict="llama-cpp"`` or ``strict="vllm"`` validates each chat request as those servers'
  request models do (:func:`strict_problems`) and answers a refused body as they do
  (llama-cpp-python 0.3.x: HTTP 500 ``internal_server_error`` with the pydantic errors;
  vLLM: HTTP 400 ``BadRequestError``) instead of consulting the script;
* a request carrying the ``X-JobBench-Preflight`` header
  (:mod:`jobbench.endpoint`) is answered with a one-word reply without consuming the script
  and recorded in ``preflight_requests`` (``preflight="script"`` sends it to the script
  like any request);
* ``ScriptedReply(hang=True)`` never answers (until the server stops): an endpoint that
  stopped answering.

Example::

    with FakeOpenAIServer([ScriptedReply(status=429), chat_reply('{"ok": true}')]) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="test")
        ...
        assert srv.calls == 2
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal


@dataclass
class ScriptedReply:
    """One scripted HTTP reply.

    Attributes:
        status: HTTP status code (200, 429, 500, …).
        body: a dict (sent as JSON) or a raw string (sent as-is, e.g. malformed JSON).
        delay: seconds to sleep before answering (to provoke client timeouts).
        headers: extra response headers (e.g. ``{"retry-after": "0"}``).
        hang: never answer (the handler waits until the server stops).
    """

    status: int = 200
    body: dict[str, Any] | str = field(default_factory=dict)
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False


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

_ROLES = ("system", "developer", "user", "assistant", "tool")


def user_parts(req: dict[str, Any]) -> list[str]:
    """The text parts of a judge request's user message, in order. A prompt without images
    goes out as one string (``jobbench.judge._client.wire_messages``, parts joined by a blank
    line); it is split back here at the end of the deliverables' fence and at the last
    '## Rubric…' heading (the rubric part, always last)."""
    content = req["messages"][-1]["content"]
    if not isinstance(content, str):
        return [p["text"] for p in content if p.get("type") == "text"]
    fence = re.search(r"^BEGIN (DELIVERABLES-[0-9a-f]+)$", content, flags=re.M)
    heads = [m.start() for m in re.finditer(r"(?m)^## Rubric", content)]
    if fence is None or not heads:
        return [content]
    close = f"\nEND {fence.group(1)}"  # the deliverables part ends with that line
    end = content.rfind(close, 0, heads[-1]) + len(close)
    middle = content[end : heads[-1]].strip("\n")
    return [
        content[:end],
        *(re.split(r"\n\n(?=## )", middle) if middle else []),
        content[heads[-1] :],
    ]


def tail_text(req: dict[str, Any]) -> str:
    """The rubric part of a judge request (the last text part of the last user message)."""
    content = req["messages"][-1]["content"]
    if isinstance(content, str):  # sent as one string: from the last '## Rubric…' heading
        starts = [m.start() for m in re.finditer(r"(?m)^## Rubric", content)]
        return content[starts[-1] :] if starts else content
    texts = [p["text"] for p in content if p.get("type") == "text"]
    # the rubric part is the last one that starts with '## Rubric' / '## Criterion'
    for t in reversed(texts):
        if t.startswith("## Rubric") or t.startswith("## Rubrics"):
            return t
    return texts[-1]


def strict_problems(request: dict[str, Any], server: str = "llama-cpp") -> list[str]:
    """What a strict OpenAI-compatible server refuses in a chat request (empty: accepted).

    The rules, per server (``server``: ``llama-cpp`` or ``vllm``):

    * both: ``messages`` is a non-empty list of objects whose ``role`` is one of system,
      developer, user, assistant, tool; an assistant ``tool_calls`` item has a string
      ``id``, ``type`` ``"function"`` and ``function`` with string ``name`` and
      ``arguments``; a ``tool`` message has a string ``tool_call_id`` naming a tool call of
      an earlier assistant message, and string content; every tool call is answered before
      the next non-tool message (OpenAI's own rule, which chat templates rely on);
    * ``llama-cpp``: an assistant message's ``content``, when present, is a string (never
      null) and a system message's content is a string: llama-cpp-python 0.3.x
      ``llama_cpp/llama_types.py`` (``ChatCompletionRequestAssistantMessage.content:
      NotRequired[str]``, ``ChatCompletionRequestToolMessage.tool_call_id: str``); and an
      assistant message has a ``content`` key: 0.3.36's ``chatml-function-calling`` handler
      (``llama_cpp/llama_chat_format.py``) renders ``message.content`` with jinja's
      ``StrictUndefined``, and a message without it fails with HTTP 500 "'dict object' has no
      attribute 'content'" (seen against the real server, scripts/verify_local_model.sh);
    * ``vllm``: no more than the shared rules, minus two: vLLM's ``ChatCompletionRequest``
      (``vllm/entrypoints/openai/protocol.py``, repository commit 0052bed3) types
      ``messages`` with ``vllm/entrypoints/chat_utils.py``'s ``ChatCompletionMessageParam``,
      a union of the ``openai`` package's message types and vLLM's own
      ``CustomChatCompletionMessageParam`` (only ``role``, any string, is required;
      ``content``, ``tool_call_id`` and ``tool_calls`` optional). So a custom role, an
      assistant message with neither content nor tool calls, and a tool message without
      ``tool_call_id`` pass validation there; a malformed ``tool_calls`` item does not
      (both variants use ``ChatCompletionMessageToolCallParam``). A refusal is HTTP 400
      with ``ErrorResponse`` = ``{"error": {"message", "type", "param", "code"}}``.

    Returns:
        Messages in pydantic's style, ``messages.<i>.<field>: <what is wrong>``.
    """
    out: list[str] = []
    msgs = request.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return ["messages: Field required (a non-empty list)"]
    pending: set[str] = set()
    known: set[str] = set()
    for i, m in enumerate(msgs):
        where = f"messages.{i}"
        if not isinstance(m, dict):
            out.append(f"{where}: Input should be a valid dictionary")
            continue
        role = m.get("role")
        if server == "vllm" and isinstance(role, str) and role not in _ROLES:
            continue  # a custom role: only role is required
        if role not in _ROLES:
            out.append(f"{where}.role: Input should be one of {', '.join(_ROLES)}")
            continue
        if role != "tool" and pending:
            out.append(
                f"{where}: tool calls {sorted(pending)} of an earlier assistant message were "
                "not answered by tool messages"
            )
            pending = set()
        content = m.get("content")
        if role == "assistant":
            calls = m.get("tool_calls")
            if "content" in m and content is not None and not isinstance(content, str):
                out.append(f"{where}.content: Input should be a valid string")
            if server == "llama-cpp" and "content" in m and content is None:
                out.append(f"{where}.content: Input should be a valid string")
            if server == "llama-cpp" and "content" not in m:
                out.append(f"{where}: 'dict object' has no attribute 'content'")
            if calls is not None:
                if not isinstance(calls, list):
                    out.append(f"{where}.tool_calls: Input should be a valid list")
                    calls = []
                for j, tc in enumerate(calls):
                    tw = f"{where}.tool_calls.{j}"
                    if not isinstance(tc, dict) or not isinstance(tc.get("id"), str):
                        out.append(f"{tw}.id: Field required")
                        continue
                    if tc.get("type") != "function":
                        out.append(f"{tw}.type: Input should be 'function'")
                    fn = tc.get("function")
                    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                        out.append(f"{tw}.function.name: Field required")
                    elif not isinstance(fn.get("arguments"), str):
                        out.append(f"{tw}.function.arguments: Input should be a valid string")
                    pending.add(tc["id"])
                    known.add(tc["id"])
        elif role == "tool":
            tid = m.get("tool_call_id")
            if server == "vllm" and tid is None:
                continue  # the custom message type: tool_call_id and content optional
            if not isinstance(tid, str):
                out.append(f"{where}.tool_call_id: Field required")
            elif tid not in known:
                out.append(f"{where}.tool_call_id: {tid!r} answers no earlier tool call")
            pending.discard(tid if isinstance(tid, str) else "")
            if not isinstance(content, str):
                out.append(f"{where}.content: Input should be a valid string")
        elif role in ("system", "developer"):
            if not isinstance(content, str):
                out.append(f"{where}.content: Input should be a valid string")
        elif content is None or not isinstance(content, (str, list)):
            out.append(f"{where}.content: Input should be a valid string")
    if pending:
        out.append(f"messages: tool calls {sorted(pending)} were not answered by tool messages")
    return out


def strict_rejection(problems: list[str], server: str) -> ScriptedReply:
    """The reply ``server`` sends for a refused request body (see :func:`strict_problems`)."""
    if server == "vllm":
        return ScriptedReply(
            status=400,
            body={
                "error": {
                    "message": "1 validation error: " + "; ".join(problems),
                    "type": "BadRequestError",
                    "param": None,
                    "code": 400,
                }
            },
        )
    errors = [
        {"type": "validation_error", "loc": ("body", *p.split(":", 1)[0].split(".")), "msg": p}
        for p in problems
    ]
    return ScriptedReply(
        status=500,
        body={
            "error": {
                "message": str(errors),
                "type": "internal_server_error",
                "param": None,
                "code": None,
            }
        },
    )


def _preflight_reply(path: str) -> ScriptedReply:
    if path.endswith("/responses"):
        return ScriptedReply(
            body={
                "id": "resp_preflight",
                "object": "response",
                "status": "completed",
                "output": [
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "OK"}],
                    }
                ],
                "usage": {"input_tokens": 8, "output_tokens": 1},
            }
        )
    if path.endswith("/messages"):
        return ScriptedReply(
            body={
                "id": "msg_preflight",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": "OK"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 8, "output_tokens": 1},
            }
        )
    return chat_reply("OK", prompt_tokens=8, completion_tokens=1)


class FakeOpenAIServer:
    """A threaded HTTP server on 127.0.0.1 with a random free port.

    Args:
        script: a sequence of replies consumed in order (an exhausted script answers 500
            with an explanatory body), or a function ``request_json -> ScriptedReply``.
        models: the entries ``GET …/models`` lists (default one, ``{"id": "fake-model"}``);
            None entries list nothing and answer 404 (an endpoint without the route).
        strict: None, ``"llama-cpp"`` or ``"vllm"``: validate chat requests as that server
            does (:func:`strict_problems`); a refused request is answered as that server
            answers it and recorded in ``rejections`` (the script is not consulted).
        preflight: ``"answer"`` (default): requests with the ``X-JobBench-Preflight``
            header get a one-word reply and go to ``preflight_requests`` only;
            ``"script"``: they are handled like every request.
        serial: serve one chat request at a time, the others waiting their turn (as
            llama-cpp-python's server does).

    Attributes:
        base_url: ``http://127.0.0.1:<port>/v1``, for ``openai.OpenAI(base_url=…)``.
        requests: decoded JSON bodies of every chat request, in arrival order.
        bodies: the raw bytes of the same request bodies (for byte-for-byte comparisons).
        rejections: ``(request, problems)`` of every request refused by ``strict``.
        preflight_requests: ``(path, request)`` of every preflight request answered.
    """

    def __init__(
        self,
        script: Script,
        models: list[dict[str, Any]] | None | Literal["default"] = "default",
        *,
        strict: str | None = None,
        preflight: str = "answer",
        serial: bool = False,
    ):
        if strict not in (None, "llama-cpp", "vllm"):
            raise ValueError(f"strict must be None, 'llama-cpp' or 'vllm', not {strict!r}")
        self.strict = strict
        self.preflight = preflight
        self.rejections: list[tuple[dict[str, Any], list[str]]] = []
        self.preflight_requests: list[tuple[str, dict[str, Any]]] = []
        self._stopped = threading.Event()
        self.models: list[dict[str, Any]] | None = (
            [{"id": "fake-model", "object": "model"}] if isinstance(models, str) else models
        )
        self._fn: Callable[[dict[str, Any]], ScriptedReply]
        if callable(script):
            self._fn = script
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
                path = self.path.rstrip("/")
                if outer.preflight == "answer" and self.headers.get("x-jobbench-preflight"):
                    with outer._lock:
                        outer.preflight_requests.append((path, req))
                    self._send(_preflight_reply(path))
                    return
                if not path.endswith("/chat/completions"):
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
                problems = strict_problems(req, outer.strict) if outer.strict else []
                if problems:
                    with outer._lock:
                        outer.rejections.append((req, problems))
                    self._send(strict_rejection(problems, str(outer.strict)))
                    return
                reply = outer._fn(req)
                if reply.hang:
                    outer._stopped.wait()
                    return
                if reply.delay:
                    time.sleep(reply.delay)
                self._send(reply)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        if isinstance(host, bytes):  # typed str | bytes; an AF_INET server reports a str
            host = host.decode()
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
        self._stopped.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
