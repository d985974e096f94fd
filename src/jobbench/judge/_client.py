"""The judge's LLM client: any OpenAI-compatible Chat Completions endpoint via the ``openai``
SDK, with bounded retries, structured-output fallback and usage accounting.

How a failed request is read (:func:`classify_rejection`, from the status and the server's
own text):

* **Response format rejected**, whatever the status (llama-cpp-python answers HTTP 500 when
  it cannot build a grammar from a schema): the body names ``response_format``,
  ``json_schema``, ``json_object``, ``grammar``, ``guided`` decoding or structured output.
  The client downgrades json_schema → json_object → none and retries at once.
* **Parameter rejected** (400/422 naming ``temperature``, ``seed``, ``max_tokens`` or
  ``max_completion_tokens``): the parameter is dropped (the token cap is first sent under
  the other name, :func:`jobbench.endpoint.token_cap_param`) and the request retried at once.
* **Context length** (the prompt does not fit the model's context): final, cause
  ``context_length``.
* Any other 4xx is final (cause ``rejected``, ``auth`` for 401/403, ``not_found`` for 404),
  with the server's message; 408, 409, 429, 5xx, time-outs and connection errors are retried
  up to ``max_attempts`` tries in all, waiting ``min(backoff_max, backoff_base·2^k)`` seconds
  (or the server's Retry-After, capped) — the SDK's own retries are off so that the count is
  ours.

Every downgrade is decided once per client, i.e. per endpoint (one base URL and model), and
stated in each reply it applies to (:attr:`ChatReply.downgrades`, :attr:`ChatReply.sent`), so
a verdict record never claims a setting that was not sent.

Time-outs: the server may serve one request at a time and queue the rest (llama-cpp-python
does), so a request sent while ``k`` other requests of this client are in flight may wait
for all of them before it is served. Its time-out is ``(k + 1) × timeout``: the time it
spends queued behind requests that were each within the time-out never makes it time out,
while a request that hangs still ends. Requests sent at nearly the same moment may reach the
server's queue in another order than they were counted; so a request that times out after
the server has answered a request sent after it with a success (2xx: it was overtaken in the
queue, not lost) is re-sent at once with its count taken again, at most ``MAX_REQUEUES``
times per :meth:`JudgeClient.chat` call (all its tries together, so a request that hangs
at a busy server costs at most ``max_attempts + MAX_REQUEUES`` time-outs), without using one
of its ``max_attempts`` tries (they bound the tries of failures);
each re-send is stated in :attr:`ChatReply.errors` and counted, like every HTTP request
sent, in :attr:`ChatReply.attempts` / :attr:`JudgeCallError.attempts`. A later request's
failure (an instant 429 or 5xx) is no sign of a queue, so it never makes a time-out a
re-send.

A request that timed out is abandoned, not cancelled: the client stops waiting and closes its
connection, but the server may still process it (and a paid endpoint may bill it), with no
usage reported. Each such request is counted in :attr:`ChatReply.abandoned` /
:attr:`JudgeCallError.abandoned` and its entry in the errors says so (:data:`ABANDONED`).

Content: a message whose parts are all text is sent as one string, the parts joined by a blank
line (:func:`wire_messages`); only a message with an image goes out as a list of parts. Every
OpenAI-compatible server reads a string, not every one reads parts: llama-cpp-python's text
chat formats render ``message.content`` with jinja, so a list reached the model as its Python
repr (``[{'type': 'text', 'text': …}]``).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from ..endpoint import TOKEN_CAP_PARAMS, other_cap_name, token_cap_param
from ..records import Usage
from ._config import JudgeConfig
from ._prices import PriceTable

MAX_REQUEUES = 3
"""Re-sends, per :meth:`JudgeClient.chat` call, of requests overtaken in the server's queue
(see the module docstring)."""

ABANDONED = "the abandoned request may still be processed and billed by the server"
"""The end of every error entry of a request that timed out (see the module docstring)."""

CAUSES = (
    "context_length",
    "response_format",
    "rejected",
    "auth",
    "not_found",
    "server_error",
    "timeout",
    "connection",
    "bad_response",
    "bad_reply",
)
"""Causes of a ``judge_error`` (:attr:`JudgeCallError.cause`; ``bad_reply``: replies came but
none held a valid verdict, set by the grader)."""

_FORMAT_WORDS = (
    "response_format",
    "response format",
    "json_schema",
    "json schema",
    "json_object",
    "grammar",
    "guided_json",
    "guided decoding",
    "structured output",
)
_CONTEXT_WORDS = (
    "context length",
    "context_length",
    "context window",
    "maximum context",
    "context size",
    "exceed_context",
    "prompt is too long",
    "too many tokens",
    "input is too long",
)


def classify_rejection(status: int | None, message: str) -> str:
    """What a failed HTTP reply means, from its status and the server's text.

    Returns:
        ``context_length``, ``response_format``, ``temperature``, ``seed``, ``max_tokens``
        (a parameter the endpoint does not take), ``transient`` (retry later), ``auth``,
        ``not_found`` or ``rejected`` (any other deterministic rejection).
    """
    msg = (message or "").lower()
    if any(w in msg for w in _CONTEXT_WORDS):
        return "context_length"
    if any(w in msg for w in _FORMAT_WORDS):
        return "response_format"
    if status in (400, 422):
        for param in ("temperature", "seed", "max_tokens"):
            if param in msg:
                return param
        if "max_completion_tokens" in msg:
            return "max_tokens"
    if status is None or status in (408, 409, 429) or status >= 500:
        return "transient"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    return "rejected"


def _server_text(exc: Exception) -> str:
    """The server's own message of an SDK error (its JSON ``error.message``, else the body)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
        if isinstance(err, str):
            return err
        if body.get("detail"):
            return str(body["detail"])
    resp = getattr(exc, "response", None)
    if resp is not None:
        try:
            text = resp.text
        except Exception:  # noqa: BLE001 - a streamed or closed body
            text = ""
        if text:
            return text
    return str(getattr(exc, "message", "") or exc)


def wire_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` as sent: a message whose content is a list of text parts only becomes one
    string, the parts' texts joined by a blank line (each part is a Markdown section); a
    message with any other part (an image) keeps its list. The input is not changed."""
    out: list[dict[str, Any]] = []
    for m in messages:
        content = m.get("content")
        if (
            isinstance(content, list)
            and content
            and all(isinstance(p, dict) and p.get("type") == "text" for p in content)
        ):
            m = {**m, "content": "\n\n".join(str(p.get("text", "")) for p in content)}
        out.append(m)
    return out


class JudgeCallError(RuntimeError):
    """No valid HTTP reply after the allowed tries (the message says why).

    Attributes:
        attempts: HTTP requests sent, every retry and re-send included (so it may exceed
            ``max_attempts``, which bounds the tries of failures only).
        cause: one of :data:`CAUSES`.
        status: the last HTTP status, or None (time-out, connection error).
        server_message: the server's own text of the last failure ('' when none).
        downgrades: the downgrades in effect for the last request.
        errors: every failure met, in order, as :attr:`ChatReply.errors`.
        abandoned: how many of the ``attempts`` timed out (the server may still process and
            bill them; see the module docstring).
    """

    def __init__(
        self,
        message: str,
        attempts: int,
        cause: str = "rejected",
        status: int | None = None,
        server_message: str = "",
        downgrades: list[str] | None = None,
        *,
        errors: list[str] | None = None,
        abandoned: int = 0,
    ):
        super().__init__(message)
        self.attempts = attempts
        self.cause = cause
        self.status = status
        self.server_message = server_message
        self.downgrades = list(downgrades or [])
        self.errors = list(errors or [])
        self.abandoned = abandoned


@dataclass
class ChatReply:
    """One successful completion.

    Attributes:
        content: the assistant message text ('' when none).
        usage: tokens reported by the API for this reply, with cost when priced.
        attempts: HTTP requests sent for it: failed ones, retries and re-sends of requests
            overtaken in the server's queue included (so it may exceed ``max_attempts``).
        errors: the errors met before it (``HTTP 429``, ``HTTP 500: <text>``, ``timeout; …``,
            ``timeout while queued: …``; a time-out's entry ends with :data:`ABANDONED`).
        abandoned: how many of the ``attempts`` timed out: requests the client stopped
            waiting for, which the server may still process and bill.
        elapsed: seconds from the first try to the reply.
        response_format: the structured-output style that was used.
        finish_reason: as reported.
        model: the model name the server reported.
        reasoning: the message's separate reasoning text (``reasoning_content``, as vLLM,
            DeepSeek and llama.cpp send it), never parsed for a verdict ('' when none).
        sent: the sampling settings the successful request carried (``response_format``,
            ``temperature``, ``seed``, ``max_tokens``; None = not sent).
        downgrades: how ``sent`` departs from the configuration
            (``response_format json_schema -> json_object``, ``temperature dropped``, …).
    """

    content: str
    usage: Usage
    attempts: int
    errors: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    response_format: str = "none"
    finish_reason: str | None = None
    model: str | None = None
    reasoning: str = ""
    sent: dict[str, Any] = field(default_factory=dict)
    downgrades: list[str] = field(default_factory=list)
    abandoned: int = 0


@dataclass
class _Sends:
    """What one :meth:`JudgeClient.chat` call sent, counted by :meth:`JudgeClient._send`.

    Attributes:
        sent: HTTP requests sent (each try, retry and re-send).
        abandoned: those of them that timed out (the server may still process them).
        requeues: re-sends of requests overtaken in the queue (at most
            :data:`MAX_REQUEUES`).
    """

    sent: int = 0
    abandoned: int = 0
    requeues: int = 0


def _after(tries: int, sends: _Sends) -> str:
    """``after N tries`` for an error message, followed in parentheses by ``M HTTP requests``
    when ``sends.sent`` differs from ``tries`` (re-sends, or retries after a downgrade) and
    by how many were abandoned after a time-out, if any."""
    extra = [f"{sends.sent} HTTP requests"] if sends.sent != tries else []
    if sends.abandoned:
        extra.append(
            f"{sends.abandoned} abandoned after a time-out: they may still be processed and "
            "billed by the server"
        )
    return f"after {tries} tries" + (f" ({'; '.join(extra)})" if extra else "")


def usage_from_response(resp: Any) -> Usage:
    """Input, cached-input and output tokens of a Chat Completions response (0 when absent).

    Cached tokens come from ``usage.prompt_tokens_details.cached_tokens`` (OpenAI, xAI,
    vLLM) or ``usage.prompt_cache_hit_tokens`` (DeepSeek).
    """
    u = getattr(resp, "usage", None)
    if u is None:
        return Usage(calls=1)
    cached = 0
    details = getattr(u, "prompt_tokens_details", None)
    if details is not None and getattr(details, "cached_tokens", None):
        cached = int(details.cached_tokens)
    extra = getattr(u, "model_extra", None) or {}
    if not cached and extra.get("prompt_cache_hit_tokens"):
        cached = int(extra["prompt_cache_hit_tokens"])
    return Usage(
        calls=1,
        input_tokens=int(getattr(u, "prompt_tokens", 0) or 0),
        cached_input_tokens=cached,
        output_tokens=int(getattr(u, "completion_tokens", 0) or 0),
    )


class JudgeClient:
    """A thread-safe judge client for one configuration (one endpoint and model).

    Args:
        config: the judge configuration (model, endpoint, retries, sampling).
        prices: the price table used for ``Usage.cost_usd``.
        sleep: the function used to wait between retries (tests may pass a no-op).

    Attributes:
        downgrades: every downgrade this client decided, in order.
    """

    FORMATS: tuple[Literal["json_schema", "json_object", "none"], ...] = (
        "json_schema",
        "json_object",
        "none",
    )

    def __init__(self, config: JudgeConfig, prices: PriceTable, sleep: Any = time.sleep):
        if not config.model:
            raise ValueError("judge model is not set (use --judge-model or JUDGE_MODEL)")
        import os

        import openai  # imported on use: a checks-only run never loads it

        self.config = config
        self.prices = prices
        self._sleep = sleep
        key = config.api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        self._client = openai.OpenAI(
            base_url=config.api_base, api_key=key, max_retries=0, timeout=config.timeout
        )
        self._lock = threading.Lock()
        self._format = config.response_format
        self._send_temperature = config.temperature is not None
        self._send_seed = config.seed is not None
        self._first_cap_param = token_cap_param(config.api_base)
        self._max_tokens_param = self._first_cap_param if config.max_tokens else None
        self._in_flight = 0
        self._sent_seq = 0  # requests sent by this client, numbered 1, 2, … in send order
        self._served_seq = 0  # the highest such number the server has answered with a 2xx
        self.downgrades: list[str] = []

    def _params(
        self, schema_name: str, schema: dict[str, Any], max_tokens: int | None = None
    ) -> tuple[dict[str, Any], str, dict[str, Any], list[str]]:
        """(request parameters, format, what is sent, downgrades in effect); ``max_tokens``
        replaces the configured cap (the preflight's small request)."""
        with self._lock:
            fmt, temp, seed = self._format, self._send_temperature, self._send_seed
            mt_param = self._max_tokens_param
            downgrades = list(self.downgrades)
        if max_tokens is not None and mt_param is None and "max_tokens dropped" not in downgrades:
            mt_param = self._first_cap_param
        cap = max_tokens if max_tokens is not None else self.config.max_tokens
        params: dict[str, Any] = {}
        sent: dict[str, Any] = {
            "response_format": fmt,
            "temperature": self.config.temperature if temp else None,
            "seed": self.config.seed if seed else None,
            "max_tokens": cap if mt_param else None,
        }
        if temp:
            params["temperature"] = self.config.temperature
        if seed:
            params["seed"] = self.config.seed
        if mt_param:
            params[mt_param] = cap
        if fmt == "json_schema":
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            }
        elif fmt == "json_object":
            params["response_format"] = {"type": "json_object"}
        return params, fmt, sent, downgrades

    def _downgrade(self, kind: str, fmt_used: str, params_used: dict[str, Any]) -> bool:
        """Adapt to a rejection of ``kind`` (:func:`classify_rejection`) of a request sent
        with ``fmt_used``/``params_used``; False when there is nothing left to change."""
        with self._lock:
            if kind == "response_format":
                if self._format != fmt_used:  # another thread already downgraded
                    return True
                if self._format == "none":
                    return False
                nxt = self.FORMATS[self.FORMATS.index(self._format) + 1]
                self.downgrades.append(f"response_format {self._format} -> {nxt}")
                self._format = nxt
                return True
            if kind == "temperature":
                if "temperature" not in params_used:
                    return True
                if self._send_temperature:
                    self._send_temperature = False
                    self.downgrades.append("temperature dropped")
                    return True
                return False
            if kind == "seed":
                if "seed" not in params_used:
                    return True
                if self._send_seed:
                    self._send_seed = False
                    self.downgrades.append("seed dropped")
                    return True
                return False
            if kind == "max_tokens":
                if self._max_tokens_param is None:
                    # the preflight's own cap, under either name
                    if any(p in params_used for p in TOKEN_CAP_PARAMS):
                        self.downgrades.append("max_tokens dropped")
                        return True
                    return False
                if self._max_tokens_param not in params_used:
                    return True
                if self._max_tokens_param == self._first_cap_param:
                    other = other_cap_name(self._first_cap_param)
                    self._max_tokens_param = other
                    self.downgrades.append(f"{self._first_cap_param} sent as {other}")
                    return True
                self._max_tokens_param = None
                self.downgrades.append("max_tokens dropped")
                return True
        return False

    def _wait(self, k: int, exc: Exception) -> None:
        base = min(self.config.backoff_max, self.config.backoff_base * (2**k))
        retry_after = 0.0
        resp = getattr(exc, "response", None)
        if resp is not None:
            try:
                retry_after = float(resp.headers.get("retry-after", 0) or 0)
            except (TypeError, ValueError):
                retry_after = 0.0
        delay = min(self.config.backoff_max, max(base, retry_after))
        if delay > 0:
            self._sleep(delay)

    def _send(
        self,
        messages: list[dict[str, Any]],
        params: dict[str, Any],
        notes: list[str],
        sends: _Sends,
    ) -> Any:
        """One request, re-sent if it timed out after the server had answered a request sent
        after it with a 2xx, while ``sends.requeues`` is below :data:`MAX_REQUEUES` (a budget
        for the whole call, see the module docstring);
        each re-send is stated in ``notes``, every HTTP request sent is counted in
        ``sends.sent`` and every one that timed out in ``sends.abandoned``.

        Raises:
            openai.APIError: the SDK's error of the last send.
        """
        import openai

        while True:
            with self._lock:
                ahead = self._in_flight
                self._in_flight += 1
                self._sent_seq += 1
                seq = self._sent_seq
            sends.sent += 1
            served = False
            try:
                resp = self._client.chat.completions.create(
                    model=self.config.model,  # type: ignore[arg-type]
                    messages=messages,  # type: ignore[arg-type]
                    timeout=self.config.timeout * (ahead + 1),
                    **params,
                )
                served = True
                return resp
            except openai.APITimeoutError:
                sends.abandoned += 1
                with self._lock:
                    overtaken = self._served_seq > seq
                if not overtaken or sends.requeues >= MAX_REQUEUES:
                    raise
                sends.requeues += 1
                notes.append(
                    f"timeout while queued: a request sent later was served first; re-sent "
                    f"({sends.requeues} of at most {MAX_REQUEUES} for this call); {ABANDONED}"
                )
            finally:
                with self._lock:
                    self._in_flight -= 1
                    if served:
                        self._served_seq = max(self._served_seq, seq)

    def chat(
        self,
        messages: list[dict[str, Any]],
        schema_name: str,
        schema: dict[str, Any],
        *,
        max_tokens: int | None = None,
        max_attempts: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> ChatReply:
        """Send one chat completion, retrying transient failures and adapting to rejected
        parameters (see the module docstring).

        Args:
            messages: Chat Completions messages (text and ``image_url`` parts).
            schema_name, schema: the JSON schema of the expected reply.
            max_tokens, max_attempts: replace the configured cap and tries (the preflight).
            headers: extra HTTP headers of the request (the preflight marks itself with
                :data:`jobbench.endpoint.PREFLIGHT_HEADER`).

        Returns:
            :class:`ChatReply`.

        Raises:
            JudgeCallError: all ``max_attempts`` tries failed, or a final rejection; its
                ``cause``, ``status`` and ``server_message`` say which.
        """
        import openai

        t0 = time.monotonic()
        errors: list[str] = []
        sends = _Sends()
        transient = 0
        adapted = 0
        tries = max_attempts or self.config.max_attempts
        messages = wire_messages(messages)
        while True:
            params, fmt, sent, downgrades = self._params(schema_name, schema, max_tokens)
            try:
                resp = self._send(
                    messages,
                    {**params, "extra_headers": headers} if headers else params,
                    errors,
                    sends,
                )
            except openai.APIStatusError as exc:
                code = exc.status_code
                text = _server_text(exc)
                errors.append(f"HTTP {code}: {text[:200]}")
                kind = classify_rejection(code, text)
                if kind in ("response_format", "temperature", "seed", "max_tokens"):
                    adapted += 1
                    if adapted <= 8 and self._downgrade(kind, fmt, params):
                        continue
                    kind = "rejected" if kind != "response_format" else kind
                if kind == "transient":
                    transient += 1
                    if transient < tries:
                        self._wait(transient - 1, exc)
                        continue
                    raise JudgeCallError(
                        f"HTTP {code} {_after(transient, sends)}: {text[:300]}",
                        sends.sent,
                        "server_error" if code >= 500 else "rejected",
                        code,
                        text,
                        downgrades,
                        errors=errors,
                        abandoned=sends.abandoned,
                    ) from exc
                raise JudgeCallError(
                    f"endpoint rejected the request (HTTP {code}): {text[:300]}",
                    sends.sent,
                    kind,
                    code,
                    text,
                    downgrades,
                    errors=errors,
                    abandoned=sends.abandoned,
                ) from exc
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                kind = "timeout" if isinstance(exc, openai.APITimeoutError) else "connection"
                label = "timeout" if kind == "timeout" else "connection error"
                errors.append(f"timeout; {ABANDONED}" if kind == "timeout" else label)
                transient += 1
                if transient >= tries:
                    raise JudgeCallError(
                        f"{label} {_after(transient, sends)}",
                        sends.sent,
                        kind,
                        None,
                        str(exc),
                        errors=errors,
                        abandoned=sends.abandoned,
                    ) from exc
                self._wait(transient - 1, exc)
                continue
            except (openai.APIError, ValueError) as exc:  # e.g. a 200 whose body is not JSON
                errors.append(f"bad response: {str(exc)[:100]}")
                transient += 1
                if transient >= tries:
                    raise JudgeCallError(
                        f"invalid response {_after(transient, sends)}: {exc}",
                        sends.sent,
                        "bad_response",
                        None,
                        str(exc),
                        errors=errors,
                        abandoned=sends.abandoned,
                    ) from exc
                self._wait(transient - 1, exc)
                continue
            usage = usage_from_response(resp)
            usage.cost_usd = self.prices.cost(self.config.model, usage)
            choice = resp.choices[0] if getattr(resp, "choices", None) else None
            content = ""
            reasoning = ""
            if choice is not None and choice.message is not None:
                content = choice.message.content or ""
                extra = getattr(choice.message, "model_extra", None) or {}
                got = extra.get("reasoning_content") or extra.get("reasoning")
                reasoning = got if isinstance(got, str) else ""
            return ChatReply(
                content=content,
                usage=usage,
                attempts=sends.sent,
                abandoned=sends.abandoned,
                errors=errors,
                elapsed=time.monotonic() - t0,
                response_format=fmt,
                finish_reason=getattr(choice, "finish_reason", None),
                model=getattr(resp, "model", None),
                reasoning=reasoning,
                sent=sent,
                downgrades=downgrades,
            )
