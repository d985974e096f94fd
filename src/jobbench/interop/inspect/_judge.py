"""The LLM judge's calls sent to an Inspect model (the eval's ``grader`` model role).

:class:`InspectJudgeClient` has the one method :class:`jobbench.judge.Grader` calls on its
client, ``chat(messages, schema_name, schema)`` returning a
:class:`jobbench.judge.ChatReply`, so the grader's prompts, reply parsing, retries on
replies without valid verdicts and chain rule are the same as ``jobbench grade``'s; only
the transport differs: each call is ``Model.generate`` of the Inspect model, run on the
event loop of the eval (Inspect records it in the sample's transcript and its usage under
the model's role).

The grader runs in worker threads (it is synchronous); :meth:`InspectJudgeClient.chat`
schedules the coroutine on the loop given at construction, in a copy of the context the
scorer ran in (so Inspect's per-sample state, its transcript and role usage, applies), and
blocks its thread until the reply. It must therefore never be called on the loop's own
thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import time
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
    ResponseSchema,
)
from inspect_ai.util import JSONSchema

from ...judge import ChatReply, JudgeCallError
from ...records import Usage


def _content(content: Any) -> str | list[Content]:
    """Chat Completions content (a string, or ``text`` and ``image_url`` parts) as Inspect
    content."""
    if isinstance(content, str):
        return content
    parts: list[Content] = []
    for part in content or []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            parts.append(ContentText(text=str(part.get("text", ""))))
        elif part.get("type") == "image_url":
            url = part.get("image_url", {})
            url = url.get("url") if isinstance(url, dict) else url
            if isinstance(url, str):
                parts.append(ContentImage(image=url))
    return parts


def inspect_messages(messages: list[dict[str, Any]]) -> list[ChatMessage]:
    """The judge's Chat Completions messages (``system``, ``user``, ``assistant``) as
    Inspect chat messages; other roles are left out."""
    out: list[ChatMessage] = []
    for m in messages:
        role = m.get("role")
        content = _content(m.get("content"))
        if role == "system":
            out.append(ChatMessageSystem(content=content))
        elif role == "user":
            out.append(ChatMessageUser(content=content))
        elif role == "assistant":
            out.append(ChatMessageAssistant(content=content))
    return out


def _usage(output: ModelOutput) -> Usage:
    u = output.usage
    if u is None:
        return Usage(calls=1)
    return Usage(
        calls=1,
        input_tokens=u.input_tokens,
        cached_input_tokens=u.input_tokens_cache_read or 0,
        output_tokens=u.output_tokens,
        cost_usd=u.total_cost,
    )


def _schema(name: str, schema: dict[str, Any]) -> ResponseSchema | None:
    """Inspect's structured-output request for the reply schema, or None when Inspect's
    :class:`JSONSchema` cannot hold it (the reply is then asked for by the prompt alone)."""
    try:
        return ResponseSchema(name=name, json_schema=JSONSchema.model_validate(schema))
    except ValueError:
        return None


class InspectJudgeClient:
    """A judge client whose calls go to an Inspect model.

    Args:
        model: the Inspect model (``get_model(role="grader")``).
        loop: the running event loop of the eval (the scorer's).
        context: the scorer's context (:func:`contextvars.copy_context` taken on the loop).
        temperature, seed, max_tokens: sampling settings sent with every call (None: the
            model's own).
        structured: ask for the reply schema with Inspect's ``response_schema`` (dropped
            for the rest of this client's calls when a call with it fails).
    """

    def __init__(
        self,
        model: Model,
        loop: asyncio.AbstractEventLoop,
        context: contextvars.Context,
        *,
        temperature: float | None = 0.0,
        seed: int | None = 0,
        max_tokens: int | None = None,
        structured: bool = True,
    ) -> None:
        self.model = model
        self._loop = loop
        self._context = context
        self._temperature = temperature
        self._seed = seed
        self._max_tokens = max_tokens
        self._structured = structured
        self.downgrades: list[str] = []

    def _run(self, coro: Any) -> ModelOutput:
        """Run ``coro`` on the eval's loop in a copy of the scorer's context; wait for it."""
        done: concurrent.futures.Future[ModelOutput] = concurrent.futures.Future()

        def start() -> None:
            t = self._loop.create_task(coro, context=self._context.copy())

            def finish(t: asyncio.Task[ModelOutput]) -> None:
                if t.cancelled():
                    done.cancel()
                elif (exc := t.exception()) is not None:
                    done.set_exception(exc)
                else:
                    done.set_result(t.result())

            t.add_done_callback(finish)

        self._loop.call_soon_threadsafe(start)
        return done.result()

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
        """One judge call (the signature of :meth:`jobbench.judge.JudgeClient.chat`;
        ``max_attempts`` and ``headers`` are not used: Inspect's model retries on its own).

        Returns:
            :class:`jobbench.judge.ChatReply` with the reply text and usage.

        Raises:
            JudgeCallError: the model failed (cause ``rejected``, its message kept).
        """
        t0 = time.monotonic()
        errors: list[str] = []
        attempts = 0
        while True:
            response_schema = _schema(schema_name, schema) if self._structured else None
            config = GenerateConfig(
                temperature=self._temperature,
                seed=self._seed,
                max_tokens=max_tokens or self._max_tokens,
                response_schema=response_schema,
            )
            attempts += 1
            try:
                output = self._run(self.model.generate(inspect_messages(messages), config=config))
            except Exception as exc:  # noqa: BLE001 - any model failure is a judge error
                errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
                if response_schema is not None:
                    # structured output may be what the provider refused: once without it
                    self._structured = False
                    self.downgrades.append("response_format json_schema -> none")
                    continue
                raise JudgeCallError(
                    f"grader model failed: {type(exc).__name__}: {str(exc)[:300]}",
                    attempts,
                    "rejected",
                    None,
                    str(exc),
                    list(self.downgrades),
                ) from exc
            return ChatReply(
                content=output.completion,
                usage=_usage(output),
                attempts=attempts,
                errors=errors,
                elapsed=time.monotonic() - t0,
                response_format="json_schema" if response_schema is not None else "none",
                finish_reason=output.stop_reason,
                model=output.model or self.model.name,
                sent={
                    "response_format": "json_schema" if response_schema is not None else "none",
                    "temperature": self._temperature,
                    "seed": self._seed,
                    "max_tokens": max_tokens or self._max_tokens,
                },
                downgrades=list(self.downgrades),
            )
