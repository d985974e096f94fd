"""The judge's preflight: one cheap request before ``jobbench grade`` spends anything.

The request is the judge's own call in miniature: Chat Completions at the judge's base URL
and model, with the sampling settings and the response format the judge will send (the
``criterion_verdict`` schema), a two-line prompt and a cap of :data:`PREFLIGHT_MAX_TOKENS`
tokens, one try. A rejected response format or parameter is adapted to exactly as in
grading (:mod:`jobbench.judge._client`), on the same client, so the grade then starts with
the downgrades already decided and records them. Any other failure raises
:class:`PreflightError`, whose one-line message names the endpoint, the API, the HTTP status
and the server's own text.

This is the judge half of issue 15's preflight; a shared endpoint preflight for every API an
agent uses (``jobbench run``) can call :func:`preflight_judge` for the judge's endpoint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..endpoint import PREFLIGHT_HEADER
from ..records import Usage
from ._client import JudgeCallError, JudgeClient
from ._endpoint import endpoint_base
from ._prompts import CRITERION_SCHEMA

PREFLIGHT_MAX_TOKENS = 48
"""Completion cap of the preflight request (tokens): enough for the server to start a
structured reply, too few to cost anything."""

PREFLIGHT_PROMPT = (
    "## Preflight\nThis is a connectivity check of a grading endpoint. Reply with the JSON "
    'object {"reasoning": "ok", "evidence": "", "verdict": "pass"}.'
)


class PreflightError(RuntimeError):
    """The judge endpoint cannot serve the judge's request.

    Attributes:
        endpoint: base URL (no credentials); model: the judge model; api: ``chat.completions``;
        status: HTTP status or None; server_message: the server's text; cause: as
        :attr:`jobbench.judge._client.JudgeCallError.cause`.
    """

    def __init__(self, endpoint: str, model: str, err: JudgeCallError):
        self.endpoint, self.model, self.api = endpoint, model, "chat.completions"
        self.status, self.server_message, self.cause = err.status, err.server_message, err.cause
        status = f"HTTP {err.status}" if err.status is not None else err.cause
        text = " ".join((err.server_message or str(err)).split())[:400]
        super().__init__(
            f"judge preflight failed: endpoint {endpoint} (model {model}), API "
            f"{self.api}: {status}: {text or '(no message)'}"
        )


@dataclass
class PreflightResult:
    """A successful preflight.

    Attributes:
        endpoint, model: what was checked; response_format: the format that was accepted;
        downgrades: what the client changed to be accepted; usage: what it cost;
        attempts: HTTP requests sent (re-sends included); abandoned: how many of them timed
        out (the server may still process and bill them).
    """

    endpoint: str
    model: str
    response_format: str
    downgrades: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    attempts: int = 1
    abandoned: int = 0

    def line(self) -> str:
        """One console line."""
        cost = "" if self.usage.cost_usd is None else f", ${self.usage.cost_usd:.4f}"
        dg = f"; downgrades: {', '.join(self.downgrades)}" if self.downgrades else ""
        ab = f", {self.abandoned} abandoned after a time-out" if self.abandoned else ""
        return (
            f"preflight: judge endpoint {self.endpoint} (model {self.model}) answered with "
            f"response_format {self.response_format} ({self.attempts} request(s){ab}, "
            f"{self.usage.input_tokens + self.usage.output_tokens} tokens{cost}){dg}"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "model": self.model,
            "response_format": self.response_format,
            "downgrades": self.downgrades,
            "usage": self.usage.model_dump(),
            "attempts": self.attempts,
            "abandoned": self.abandoned,
        }


def preflight_judge(client: JudgeClient) -> PreflightResult:
    """Send the preflight request through ``client`` (see the module docstring).

    Raises:
        PreflightError: the endpoint rejected it or could not be reached.
    """
    cfg = client.config
    base = endpoint_base(cfg)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You grade deliverables. Reply with JSON only."},
        {"role": "user", "content": [{"type": "text", "text": PREFLIGHT_PROMPT}]},
    ]
    try:
        reply = client.chat(
            messages,
            "criterion_verdict",
            CRITERION_SCHEMA,
            max_tokens=PREFLIGHT_MAX_TOKENS,
            max_attempts=1,
            headers={PREFLIGHT_HEADER: "1"},
        )
    except JudgeCallError as exc:
        raise PreflightError(base, cfg.model or "", exc) from exc
    return PreflightResult(
        endpoint=base,
        model=cfg.model or "",
        response_format=reply.response_format,
        downgrades=list(reply.downgrades),
        usage=reply.usage,
        attempts=reply.attempts,
        abandoned=reply.abandoned,
    )
