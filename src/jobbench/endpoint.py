"""Model endpoints: telling a failed request's cause from its HTTP evidence, and the preflight.

The lowest layer every model caller shares (the builtin agent, the CLI adapters, the judge):
it imports nothing from the rest of JobBench and makes its requests with the standard library.

* :func:`classify_failure` decides whether a failed request is **transient** (retrying the
  same request may succeed: connection errors, timeouts, 408, 409, 429, 5xx) or
  **permanent** (the server rejects this request deterministically: any other 4xx, and a
  5xx whose body names a request-validation or chat-template error: llama-cpp-python
  0.3.x's ``llama_cpp/server/errors.py`` wraps every exception of a route, the
  ``RequestValidationError`` of a refused body and the jinja2 ``UndefinedError`` of a chat
  template included, as HTTP 500 ``internal_server_error``), and what the user should change.
* :func:`preflight` makes one cheap request per distinct (API, base URL, model) before a
  command spends anything: Chat Completions with a tool (the builtin agent, OpenCode and
  OpenClaw on a custom endpoint), the Responses API (Codex), the Anthropic Messages API
  (Claude Code), or a call with a ``response_format`` and no tools. The judge's own
  preflight goes through its client (:mod:`jobbench.judge._preflight`), so the downgrades
  it decides apply to the verdicts that follow.
  A failure raises :class:`PreflightError`, whose message names the endpoint, the API,
  the status and the server's own text.

Requests marked with the header ``X-JobBench-Preflight: 1`` are preflight requests (real
servers ignore the header; :class:`jobbench.testing.FakeOpenAIServer` answers them itself
unless told otherwise).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Api = Literal["chat", "responses", "messages"]

PREFLIGHT_HEADER = "X-JobBench-Preflight"

API_NAMES = {
    "chat": "Chat Completions API (POST {base}/chat/completions)",
    "responses": "Responses API (POST {base}/responses)",
    "messages": "Anthropic Messages API (POST {base}/v1/messages)",
}

TRANSIENT_STATUSES = frozenset({408, 409, 429})

# what a 5xx body says when the server's request model refused the body (so the same
# request will fail the same way): pydantic v2 (llama-cpp-python: "'loc': ('body', …",
# "Input should be a valid string", "Field required"), FastAPI, vLLM ("BadRequestError")
_VALIDATION_RE = re.compile(
    r"validation error|validationerror|RequestValidationError|'loc': \('body'|\"loc\": \[\"body\""
    r"|Input should be|Field required|extra_forbidden|BadRequestError|invalid request"
    r"|is not valid under any of the given schemas|unexpected keyword argument",
    re.IGNORECASE,
)
# what a 5xx body says when the server's chat template could not render the messages (the
# same messages fail the same way): llama-cpp-python renders the model's jinja2 template and
# wraps its exception as HTTP 500 ("'dict object' has no attribute 'content'",
# "UndefinedError", "TemplateSyntaxError", "TemplateError: …"); vLLM and llama.cpp's server
# name the template ("chat template", "jinja")
_TEMPLATE_RE = re.compile(
    r"UndefinedError|TemplateSyntaxError|TemplateError|TemplateRuntimeError|has no attribute"
    r"|jinja|chat[ _]template",
    re.IGNORECASE,
)
_CONTEXT_RE = re.compile(
    r"context length|context window|maximum context|context_length_exceeded|too many tokens"
    r"|exceeds the (?:model's )?(?:maximum|max)",
    re.IGNORECASE,
)
_MODEL_RE = re.compile(
    r"model[^.]{0,80}(?:not found|does not exist|not exist|unknown|not available|invalid)"
    r"|model_not_found|unknown model|no such model",
    re.IGNORECASE,
)


def server_message(body: Any, limit: int = 1000) -> str:
    """The server's own error text from a response body: ``error.message`` (OpenAI,
    Anthropic, llama-cpp-python, vLLM), ``detail`` (FastAPI), ``message``; else the body
    text. ``body`` may be bytes, a string or decoded JSON. Cut to ``limit`` characters."""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    data = body
    if isinstance(body, str):
        try:
            data = json.loads(body)
        except ValueError:
            data = None
    text: Any = None
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict):
            text = err.get("message") or err.get("msg") or err.get("type")
        elif isinstance(err, str):
            text = err
        text = text or data.get("detail") or data.get("message")
    if text is None:
        text = body if isinstance(body, str) else json.dumps(body, default=str)
    if not isinstance(text, str):
        text = json.dumps(text, default=str)
    text = " ".join(text.split())
    return text[:limit] + ("…" if len(text) > limit else "")


@dataclass
class Failure:
    """A classified failed request.

    Attributes:
        transient: retrying the same request may succeed.
        kind: ``connection`` (no HTTP answer: refused, reset, DNS, timeout), ``rate_limit``,
            ``server`` (5xx), ``validation`` (the server refused the request body),
            ``template`` (a 5xx: the server's chat template failed on these messages),
            ``auth`` (401/403), ``not_found`` (404: wrong base URL or API path),
            ``model`` (the model is unknown), ``context_length``, ``rejected`` (another 4xx).
        status: the HTTP status, or None without an HTTP answer.
        message: the server's own text (or the client's, without an answer).
        hint: what to change (permanent failures) or what the harness does (transient).
    """

    transient: bool
    kind: str
    status: int | None
    message: str
    hint: str

    def describe(self) -> str:
        """``HTTP <status>: <server text> (<hint>)``."""
        where = f"HTTP {self.status}" if self.status is not None else "no HTTP answer"
        return f"{where}: {self.message or '(empty body)'} ({self.hint})"


def classify_failure(status: int | None, body: Any = "", *, api: str = "chat") -> Failure:
    """Classify a failed model request from its evidence.

    Args:
        status: the HTTP status, or None when no answer came (connection refused, reset,
            name resolution, timeout).
        body: the response body (bytes, text or decoded JSON), or the client's exception
            text when ``status`` is None.
        api: the API called (for the hint on a 404).

    Returns:
        :class:`Failure`. Transient: no answer, 408, 409, 429, and a 5xx whose body names
        neither a request-validation error (kind ``validation``) nor a chat-template error
        (kind ``template``). Permanent: every other status ≥ 400.
    """
    msg = server_message(body)
    if status is None:
        return Failure(True, "connection", None, msg, "retried; check that the server is up")
    if _MODEL_RE.search(msg) and status in (400, 404, 422):
        return Failure(False, "model", status, msg, "check the model name the server serves")
    if _CONTEXT_RE.search(msg) and 400 <= status < 600 and status not in TRANSIENT_STATUSES:
        return Failure(
            False, "context_length", status, msg, "the prompt exceeds the model's context"
        )
    if status in TRANSIENT_STATUSES:
        kind = "rate_limit" if status == 429 else "server"
        return Failure(True, kind, status, msg, "retried with backoff")
    if status >= 500:
        if _VALIDATION_RE.search(msg):
            return Failure(
                False,
                "validation",
                status,
                msg,
                "the server refused the request body: retrying the same request cannot "
                "succeed; check that the server supports this API and its parameters "
                "(tools, messages, response format)",
            )
        if _TEMPLATE_RE.search(msg):
            return Failure(
                False,
                "template",
                status,
                msg,
                "the server's chat template could not render these messages: retrying the "
                "same request cannot succeed; serve the model with a chat template (or "
                "chat format) that supports tool calls, or use another server",
            )
        return Failure(True, "server", status, msg, "retried with backoff")
    if status in (401, 403):
        return Failure(
            False, "auth", status, msg, "check the API key (JOBBENCH_API_KEY, OPENAI_API_KEY, …)"
        )
    if status == 404:
        path = {"chat": "/chat/completions", "responses": "/responses", "messages": "/v1/messages"}
        return Failure(
            False,
            "not_found",
            status,
            msg,
            f"check the base URL: the server has no {path.get(api, 'such')} route there "
            "(an OpenAI-compatible base URL usually ends in /v1)",
        )
    if status in (400, 422):
        return Failure(
            False,
            "validation",
            status,
            msg,
            "the server rejected the request: change the parameter it names "
            "(--temperature, --reasoning-effort, --max-output-tokens, --extra) or the server",
        )
    return Failure(False, "rejected", status, msg, "the server rejected the request")


# -- preflight ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PreflightTarget:
    """One endpoint a command will call.

    Attributes:
        api: ``chat``, ``responses`` or ``messages``.
        base_url: the base URL as the client uses it (``…/v1`` for OpenAI-compatible
            servers; the Anthropic base without ``/v1``).
        model: the model name sent.
        api_key: the key (never recorded); None sends none.
        tools: send one tool definition (Chat Completions; the agents use tools).
        response_format: the judge's ``response_format`` to send, or None.
        who: who will call it (``builtin@M``, ``judge``), for the message.
    """

    api: Api
    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False, compare=False, hash=False)
    tools: bool = True
    response_format: Any = field(default=None, compare=False, hash=False)
    who: str = field(default="", compare=False, hash=False)

    def key(self) -> tuple[str, str, str]:
        """The (API, base URL, model) identity: one request per distinct key."""
        return (self.api, self.base_url.rstrip("/"), self.model)


@dataclass
class PreflightCheck:
    """The record of one preflight request (no key, no user-info in the URL).

    Attributes:
        api, base_url, model, who: as the target.
        ok: the server answered 2xx.
        status: HTTP status, or None without an answer.
        seconds: wall time of the request.
        input_tokens, output_tokens: the usage the server reported (0 when none).
        message: the server's text on failure.
    """

    api: str
    base_url: str
    model: str
    who: str
    ok: bool
    status: int | None
    seconds: float
    input_tokens: int = 0
    output_tokens: int = 0
    message: str = ""

    def as_record(self) -> dict[str, Any]:
        return asdict(self)


class PreflightError(RuntimeError):
    """A preflight request failed; ``str()`` is the one message for the console.

    Attributes:
        check: the failed check; failure: its classification.
    """

    def __init__(self, check: PreflightCheck, failure: Failure) -> None:
        self.check = check
        self.failure = failure
        api = API_NAMES.get(check.api, check.api).format(base=check.base_url.rstrip("/"))
        who = f" for {check.who}" if check.who else ""
        super().__init__(
            f"preflight failed{who}: endpoint {check.base_url} (model {check.model}), "
            f"{api}: {failure.describe()}. Nothing was run; fix the endpoint or pass "
            "--no-preflight to skip this check."
        )


def public_url(url: str) -> str:
    """``url`` without user-info (credentials are never recorded)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


# The two Chat Completions parameters that cap a reply's tokens.
TOKEN_CAP_PARAMS = ("max_tokens", "max_completion_tokens")


def token_cap_param(base_url: str | None) -> str:
    """The Chat Completions parameter that caps a reply's tokens, tried first at ``base_url``:
    ``max_completion_tokens`` for OpenAI's own API (``api.openai.com``; also ``None``, the
    ``openai`` client's default), whose reasoning models reject ``max_tokens`` with HTTP 400
    naming it; ``max_tokens`` anywhere else. Servers that implement only the older name drop
    the newer one without a word: llama-cpp-python 0.3.36's request model
    (``llama_cpp/server/types.py``) has ``max_tokens`` and no ``max_completion_tokens``, so a
    cap sent under that name is ignored and a reply runs on until the context is full.
    After a rejection naming the parameter sent, :func:`other_token_cap_param` names the one
    to try instead.
    """
    from urllib.parse import urlsplit

    host = (urlsplit(base_url).hostname or "") if base_url else "api.openai.com"
    return "max_completion_tokens" if host == "api.openai.com" else "max_tokens"


def other_cap_name(param: str) -> str:
    """The other name in :data:`TOKEN_CAP_PARAMS` (``max_tokens`` ↔ ``max_completion_tokens``).

    Raises:
        ValueError: ``param`` is neither name.
    """
    return TOKEN_CAP_PARAMS[1 - TOKEN_CAP_PARAMS.index(param)]


def other_token_cap_param(sent: str, status: int | None, body: Any) -> str | None:
    """The token-cap parameter to send instead of ``sent`` when the server rejected a request
    (``status`` 400 or 422) whose message (``body``: text, bytes or a JSON error) names
    ``sent``; ``None`` when the rejection is about something else."""
    if status not in (400, 422) or sent not in TOKEN_CAP_PARAMS:
        return None
    msg = server_message(body, 2000).lower()
    # "max_tokens" is not a substring of "max_completion_tokens": a message naming only the
    # newer parameter is not read as naming the older one
    if not re.search(rf"(?<![a-z_]){sent}(?![a-z_])", msg):
        return None
    return other_cap_name(sent)


_PROMPT = "Reply with the single word OK."
_TOOL = {
    "type": "function",
    "function": {
        "name": "finish",
        "description": "Call when done.",
        "parameters": {
            "type": "object",
            "properties": {"summary": {"type": "string"}},
            "required": ["summary"],
        },
    },
}


def _request(target: PreflightTarget) -> tuple[str, dict[str, str], dict[str, Any]]:
    base = target.base_url.rstrip("/")
    headers = {"content-type": "application/json", PREFLIGHT_HEADER: "1"}
    if target.api == "messages":
        if target.api_key:
            headers["x-api-key"] = target.api_key
        headers["anthropic-version"] = "2023-06-01"
        body: dict[str, Any] = {
            "model": target.model,
            "max_tokens": 16,
            "messages": [{"role": "user", "content": _PROMPT}],
        }
        return f"{base}/v1/messages", headers, body
    if target.api_key:
        headers["authorization"] = f"Bearer {target.api_key}"
    if target.api == "responses":
        body = {"model": target.model, "input": _PROMPT, "max_output_tokens": 16}
        return f"{base}/responses", headers, body
    body = {
        "model": target.model,
        "messages": [{"role": "user", "content": _PROMPT}],
        token_cap_param(target.base_url): 16,
    }
    if target.tools:
        body["tools"] = [_TOOL]
    if target.response_format is not None:
        body["response_format"] = target.response_format
    return f"{base}/chat/completions", headers, body


def _usage(data: Any) -> tuple[int, int]:
    u = data.get("usage") if isinstance(data, dict) else None
    if not isinstance(u, dict):
        return 0, 0

    def num(*names: str) -> int:
        for n in names:
            v = u.get(n)
            if isinstance(v, int):
                return v
        return 0

    return num("prompt_tokens", "input_tokens"), num("completion_tokens", "output_tokens")


def check_endpoint(target: PreflightTarget, *, timeout: float = 60.0) -> PreflightCheck:
    """Make the preflight request of ``target`` once (no retries beyond one for a transient
    failure) and return its record; never raises for an HTTP or connection failure.

    Args:
        target: the endpoint.
        timeout: seconds for the request (connecting: at most 10 s).
    """
    import urllib.error
    import urllib.request

    url, headers, body = _request(target)
    raw = json.dumps(body).encode()
    t0 = time.monotonic()
    status: int | None = None
    text: Any = ""
    data: Any = None
    for attempt in range(2):
        req = urllib.request.Request(url, data=raw, headers=headers, method="POST")
        try:
            with _opener().open(req, timeout=timeout) as resp:
                status, text = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, text = exc.code, exc.read()
        except TimeoutError as exc:
            status, text = None, f"no answer within {timeout:g} s ({type(exc).__name__})"
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            status, text = None, f"{type(reason).__name__}: {reason}"
        if status is not None and status < 400:
            break
        if attempt == 0 and (status is None or not classify_failure(status, text).transient):
            break  # a connection error or a permanent rejection: fail fast
        if attempt == 0 and status is not None:
            time.sleep(1.0)
    seconds = round(time.monotonic() - t0, 3)
    ok = status is not None and status < 400
    if ok:
        try:
            data = json.loads(text or b"{}")
        except ValueError:
            data = None
        if not isinstance(data, dict):
            ok = False
            text = f"the answer is not a JSON object: {server_message(text, 300)}"
    inp, out = _usage(data)
    return PreflightCheck(
        api=target.api,
        base_url=public_url(target.base_url),
        model=target.model,
        who=target.who,
        ok=ok,
        status=status,
        seconds=seconds,
        input_tokens=inp,
        output_tokens=out,
        message="" if ok else server_message(text),
    )


def _opener():
    """A urllib opener that honours the proxy variables, without redirects to other hosts
    being a concern (POSTs are not redirected by urllib)."""
    import urllib.request

    return urllib.request.build_opener()


def preflight(targets: list[PreflightTarget], *, timeout: float = 60.0) -> list[PreflightCheck]:
    """One request per distinct (API, base URL, model) of ``targets``, in order.

    Returns:
        The checks made (all passed).

    Raises:
        PreflightError: the first check that failed (the rest are not made).
    """
    seen: set[tuple[str, str, str]] = set()
    checks: list[PreflightCheck] = []
    for t in targets:
        if t.key() in seen:
            continue
        seen.add(t.key())
        check = check_endpoint(t, timeout=timeout)
        checks.append(check)
        if not check.ok:
            failure = (
                classify_failure(check.status, check.message, api=t.api)
                if check.status is not None and check.status >= 400
                else Failure(
                    check.status is None,
                    "connection" if check.status is None else "rejected",
                    check.status,
                    check.message,
                    "check the base URL and that the server is up"
                    if check.status is None
                    else "the server's answer is not an API response",
                )
            )
            raise PreflightError(check, failure)
    return checks


def preflight_record(checks: list[PreflightCheck]) -> dict[str, Any]:
    """The summary recorded for a command's preflight: ``calls``, tokens and each check."""
    return {
        "calls": len(checks),
        "input_tokens": sum(c.input_tokens for c in checks),
        "output_tokens": sum(c.output_tokens for c in checks),
        "seconds": round(sum(c.seconds for c in checks), 3),
        "checks": [c.as_record() for c in checks],
    }


__all__ = [
    "PREFLIGHT_HEADER",
    "Failure",
    "PreflightCheck",
    "PreflightError",
    "PreflightTarget",
    "check_endpoint",
    "classify_failure",
    "preflight",
    "preflight_record",
    "public_url",
    "server_message",
]
