"""The judge's LLM client: any OpenAI-compatible Chat Completions endpoint via the ``openai``
SDK, with bounded retries, structured-output fallback and usage accounting.

Retries: 429, 5xx, time-outs and connection errors are retried up to ``max_attempts`` tries
in all, waiting ``min(backoff_max, backoff_base·2^k)`` seconds (or the server's Retry-After,
capped) — the SDK's own retries are off so that the count is ours. A 400/422 that names a
parameter the endpoint does not support (``response_format``/``json_schema``,
``temperature``, ``seed``) makes the client drop or downgrade that parameter for every later
call (json_schema → json_object → plain prompt) and retry at once; other 4xx are final.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ..records import Usage
from ._config import JudgeConfig
from ._prices import PriceTable


class JudgeCallError(RuntimeError):
    """No valid HTTP reply after the allowed tries (the message says why)."""

    def __init__(self, message: str, attempts: int):
        super().__init__(message)
        self.attempts = attempts


@dataclass
class ChatReply:
    """One successful completion.

    Attributes:
        content: the assistant message text ('' when none).
        usage: tokens reported by the API for this reply, with cost when priced.
        attempts: HTTP requests made for it (failed ones included).
        errors: the transient errors met before it (``HTTP 429``, ``timeout``, …).
        elapsed: seconds from the first try to the reply.
        response_format: the structured-output style that was used.
        finish_reason: as reported.
        model: the model name the server reported.
    """

    content: str
    usage: Usage
    attempts: int
    errors: list[str] = field(default_factory=list)
    elapsed: float = 0.0
    response_format: str = "none"
    finish_reason: str | None = None
    model: str | None = None


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
    """A thread-safe judge client for one configuration.

    Args:
        config: the judge configuration (model, endpoint, retries, sampling).
        prices: the price table used for ``Usage.cost_usd``.
        sleep: the function used to wait between retries (tests may pass a no-op).
    """

    FORMATS = ("json_schema", "json_object", "none")

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
        self.downgrades: list[str] = []

    def _params(self, schema_name: str, schema: dict[str, Any]) -> tuple[dict[str, Any], str]:
        with self._lock:
            fmt, temp, seed = self._format, self._send_temperature, self._send_seed
        params: dict[str, Any] = {}
        if temp:
            params["temperature"] = self.config.temperature
        if seed:
            params["seed"] = self.config.seed
        if self.config.max_tokens:
            params["max_tokens"] = self.config.max_tokens
        if fmt == "json_schema":
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            }
        elif fmt == "json_object":
            params["response_format"] = {"type": "json_object"}
        return params, fmt

    def _downgrade(self, message: str, fmt_used: str) -> bool:
        """Adapt to a 400/422 naming an unsupported parameter; False when nothing is left."""
        msg = message.lower()
        with self._lock:
            if "temperature" in msg and self._send_temperature:
                self._send_temperature = False
                self.downgrades.append("temperature dropped")
                return True
            if "seed" in msg and self._send_seed:
                self._send_seed = False
                self.downgrades.append("seed dropped")
                return True
            if self._format != fmt_used:  # another thread already downgraded
                return True
            if self._format != "none":
                nxt = self.FORMATS[self.FORMATS.index(self._format) + 1]
                self.downgrades.append(f"response_format {self._format} -> {nxt}")
                self._format = nxt
                return True
            if self._send_seed:
                self._send_seed = False
                self.downgrades.append("seed dropped")
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

    def chat(
        self, messages: list[dict[str, Any]], schema_name: str, schema: dict[str, Any]
    ) -> ChatReply:
        """Send one chat completion, retrying transient failures.

        Args:
            messages: Chat Completions messages (text and ``image_url`` parts).
            schema_name, schema: the JSON schema of the expected reply.

        Returns:
            :class:`ChatReply`.

        Raises:
            JudgeCallError: all ``max_attempts`` tries failed, or a non-retryable error.
        """
        import openai

        t0 = time.monotonic()
        errors: list[str] = []
        attempts = 0
        transient = 0
        downgrades = 0
        while True:
            params, fmt = self._params(schema_name, schema)
            attempts += 1
            try:
                resp = self._client.chat.completions.create(
                    model=self.config.model, messages=messages, **params
                )
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                errors.append(f"HTTP {exc.status_code}: {exc.message[:200]}")
                downgrades += 1
                if downgrades <= 6 and self._downgrade(str(exc.message), fmt):
                    continue
                raise JudgeCallError(
                    f"endpoint rejected the request: {exc.message[:300]}", attempts
                ) from exc
            except openai.APIStatusError as exc:
                code = exc.status_code
                errors.append(f"HTTP {code}")
                if code == 429 or code >= 500 or code == 408:
                    transient += 1
                    if transient >= self.config.max_attempts:
                        raise JudgeCallError(
                            f"HTTP {code} after {transient} tries", attempts
                        ) from exc
                    self._wait(transient - 1, exc)
                    continue
                raise JudgeCallError(f"HTTP {code}: {exc.message[:300]}", attempts) from exc
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                kind = "timeout" if isinstance(exc, openai.APITimeoutError) else "connection error"
                errors.append(kind)
                transient += 1
                if transient >= self.config.max_attempts:
                    raise JudgeCallError(f"{kind} after {transient} tries", attempts) from exc
                self._wait(transient - 1, exc)
                continue
            except (openai.APIError, ValueError) as exc:  # e.g. a 200 whose body is not JSON
                errors.append(f"bad response: {str(exc)[:100]}")
                transient += 1
                if transient >= self.config.max_attempts:
                    raise JudgeCallError(
                        f"invalid response after {transient} tries: {exc}", attempts
                    ) from exc
                self._wait(transient - 1, exc)
                continue
            usage = usage_from_response(resp)
            usage.cost_usd = self.prices.cost(self.config.model, usage)
            choice = resp.choices[0] if getattr(resp, "choices", None) else None
            content = ""
            if choice is not None and choice.message is not None:
                content = choice.message.content or ""
            return ChatReply(
                content=content,
                usage=usage,
                attempts=attempts,
                errors=errors,
                elapsed=time.monotonic() - t0,
                response_format=fmt,
                finish_reason=getattr(choice, "finish_reason", None),
                model=getattr(resp, "model", None),
            )
