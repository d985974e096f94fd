"""Optional LLM review of criteria (``jobbench gate PATH --llm``).

One chat completion per rubric on any OpenAI-compatible endpoint (``openai`` SDK, JSON
output, temperature 0). The model sees the task instructions and the rubric's numbered
criteria, and answers for each criterion whether it follows the four principles and
avoids exact-phrase traps. Its objections become advisory ``LLM1`` findings (severity
``warning``): a model's opinion never fails a task on its own.

Failures are infrastructure, not verdicts: after ``tries`` attempts (429, 5xx, timeouts,
connection errors and unparseable replies are retried with exponential backoff) the rubric
is listed in :attr:`LLMReview.errors` and the gate reports ``error``.
"""

from __future__ import annotations

import json
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic import BaseModel, Field

from ..records import Usage
from ..tasks import RUBRICS, Rubric, Task, display_path
from ._findings import Finding, make_finding

PROMPT_VERSION = "gates-llm-review-1"

SYSTEM_PROMPT = """You review grading criteria of a benchmark task for professional desk work.
An agent receives only the task instructions and its workspace files; a grader later checks each
criterion against the agent's deliverables, one criterion at a time, answering pass or fail.

A good criterion is:
- self-contained: it can be judged alone (no "as above", "the previous criterion", no pronoun
  whose antecedent is elsewhere);
- binary: a yes/no question about the deliverables (no "to what extent", "how well", scales);
- objective: two careful graders would agree (no undefined "appropriate", "good", "clear",
  "professional" without saying what that means);
- unambiguous: numbers carry units and a tolerance, "approximately" has a bound, and it tests
  one fact (not several joined by "and").
It must also not be an exact-phrase trap: demanding a literal label, wording or position
(a cell, the first line) that the instructions never ask for. And it must be answerable from
what the instructions ask the agent to deliver.

Reply with a JSON object only:
{"criteria": [{"criterion": <number as listed>, "ok": true|false,
  "principle": "self-contained"|"binary"|"objective"|"unambiguous"|"exact-phrase"|"instructions"|"",
  "problem": "<one sentence, empty when ok>", "fix": "<a rewritten criterion, empty when ok>"}]}
List every criterion exactly once."""


class LLMReviewConfig(BaseModel):
    """Endpoint and call settings for the review pass.

    Attributes:
        base_url: OpenAI-compatible base URL (``…/v1``); None = the SDK default.
        api_key: API key (a placeholder is used for local servers that need none).
        model: model name.
        timeout: seconds per HTTP request.
        tries: attempts per rubric (>= 1).
        backoff: seconds before the 2nd attempt, doubled each further attempt.
        concurrency: rubrics reviewed in parallel.
        json_mode: send ``response_format={"type": "json_object"}``.
    """

    base_url: str | None = None
    api_key: str | None = None
    model: str
    timeout: float = 60.0
    tries: int = Field(default=3, ge=1)
    backoff: float = Field(default=1.0, ge=0)
    concurrency: int = Field(default=4, ge=1)
    json_mode: bool = True

    @classmethod
    def from_env(
        cls,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        **kw: Any,
    ) -> LLMReviewConfig:
        """Fill unset values from ``JUDGE_API_BASE`` / ``JUDGE_API_KEY`` / ``JUDGE_MODEL``
        (the public JobBench judge's variables), then ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``.

        Raises:
            ValueError: no model given and ``JUDGE_MODEL`` unset.
        """
        model = model or os.environ.get("JUDGE_MODEL")
        if not model:
            raise ValueError("--llm needs a model: pass --llm-model or set JUDGE_MODEL")
        return cls(
            base_url=base_url
            or os.environ.get("JUDGE_API_BASE")
            or os.environ.get("OPENAI_BASE_URL"),
            api_key=api_key or os.environ.get("JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY"),
            model=model,
            **kw,
        )


class LLMReview(BaseModel):
    """Result of reviewing one task.

    Attributes:
        findings: ``LLM1`` findings, one per criterion the model objected to.
        errors: one message per rubric that could not be reviewed.
        reviewed: number of criteria the model gave a verdict on.
        usage: token usage summed over calls.
    """

    findings: list[Finding] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    reviewed: int = 0
    usage: Usage = Field(default_factory=Usage)


def build_messages(task: Task, rubric: Rubric) -> list[dict[str, str]]:
    """The chat messages for one rubric (system rules, then instructions, then criteria)."""
    crit = "\n".join(f"{c.index + 1}. {c.text}" for c in rubric.criteria)
    user = (
        "TASK INSTRUCTIONS (what the agent was told):\n<<<\n"
        + task.instructions.strip()
        + "\n>>>\n\n"
        f"RUBRIC QUESTION: {rubric.question}\n\nCRITERIA:\n{crit}\n\n"
        "Review every criterion and reply with the JSON object described."
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def parse_reply(content: str | None) -> dict[str, Any]:
    """Parse a reply into a dict, tolerating code fences and text around one JSON object.

    Raises:
        ValueError: no JSON object with a ``criteria`` list could be read.
    """
    if not content or not content.strip():
        raise ValueError("empty reply")
    text = content.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fence:
        text = fence.group(1)
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        s, e = text.find("{"), text.rfind("}")
        if s < 0 or e <= s:
            raise ValueError(f"reply is not JSON: {content[:80]!r}") from None
        try:
            data = json.loads(text[s : e + 1])
        except json.JSONDecodeError as exc:
            raise ValueError(f"reply is not JSON ({exc.msg}): {content[:80]!r}") from None
    if not isinstance(data, dict) or not isinstance(data.get("criteria"), list):
        raise ValueError("reply JSON lacks a 'criteria' list")
    return data


def _client(cfg: LLMReviewConfig) -> Any:
    import openai

    return openai.OpenAI(
        base_url=cfg.base_url,
        api_key=cfg.api_key or "not-needed",
        timeout=cfg.timeout,
        max_retries=0,
    )


def _call(
    client: Any, cfg: LLMReviewConfig, messages: list[dict[str, str]]
) -> tuple[dict[str, Any], Usage]:
    """One rubric, with retries. Returns (parsed reply, usage over all attempts).

    Raises:
        RuntimeError: every attempt failed; the message names the last failure.
    """
    import openai

    usage = Usage()
    last = ""
    for attempt in range(cfg.tries):
        if attempt:
            time.sleep(cfg.backoff * 2 ** (attempt - 1))
        kwargs: dict[str, Any] = {"model": cfg.model, "messages": messages, "temperature": 0}
        if cfg.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        try:
            resp = client.chat.completions.create(**kwargs)
        except openai.APITimeoutError:
            last = "timeout"
            continue
        except openai.APIConnectionError as exc:
            last = f"connection error: {exc}"
            continue
        except openai.APIStatusError as exc:
            last = f"HTTP {exc.status_code}"
            if exc.status_code == 429 or exc.status_code >= 500:
                continue
            raise RuntimeError(f"endpoint refused the request ({last}: {exc.message})") from exc
        u = resp.usage
        if u is not None:
            cached = getattr(getattr(u, "prompt_tokens_details", None), "cached_tokens", 0) or 0
            usage = usage + Usage(
                calls=1,
                input_tokens=u.prompt_tokens or 0,
                cached_input_tokens=cached,
                output_tokens=u.completion_tokens or 0,
            )
        else:
            usage = usage + Usage(calls=1)
        content = resp.choices[0].message.content if resp.choices else None
        try:
            return parse_reply(content), usage
        except ValueError as exc:
            last = str(exc)
            continue
    raise RuntimeError(f"no usable reply after {cfg.tries} attempt(s) (last: {last})")


def _review_rubric(
    client: Any, cfg: LLMReviewConfig, task: Task, rubric: Rubric
) -> tuple[list[Finding], int, str | None, Usage]:
    file = display_path(task.root / RUBRICS)
    try:
        data, usage = _call(client, cfg, build_messages(task, rubric))
    except RuntimeError as exc:
        return [], 0, f"rubrics[{rubric.index}]: {exc}", Usage()
    findings: list[Finding] = []
    seen: set[int] = set()
    for item in data["criteria"]:
        if not isinstance(item, dict):
            continue
        num = item.get("criterion")
        if isinstance(num, bool) or not isinstance(num, (int, float, str)):
            continue
        try:
            j = int(num) - 1
        except ValueError:
            continue
        if not 0 <= j < len(rubric.criteria) or j in seen:
            continue
        seen.add(j)
        ok = item.get("ok")
        if ok is True or (isinstance(ok, str) and ok.lower() in ("true", "yes", "pass")):
            continue
        principle = str(item.get("principle") or "unspecified")
        problem = str(item.get("problem") or "").strip() or "(no reason given)"
        fix = str(item.get("fix") or "").strip()
        findings.append(
            make_finding(
                "LLM1",
                f"{principle}: {problem}",
                task_id=task.id,
                file=file,
                where=f"rubrics[{rubric.index}].criterion[{j}]",
                hint=f"suggested: {fix}" if fix else None,
            )
        )
    err = None
    missing = [j for j in range(len(rubric.criteria)) if j not in seen]
    if missing:
        err = f"rubrics[{rubric.index}]: the model gave no verdict on criteria {', '.join(map(str, missing))}"
    return findings, len(seen), err, usage


def llm_review_task(task: Task, config: LLMReviewConfig, *, client: Any = None) -> LLMReview:
    """Review every rubric of ``task`` with a model.

    Args:
        task: the task.
        config: endpoint and call settings.
        client: an ``openai.OpenAI`` client to reuse (default: one built from ``config``).

    Returns:
        An :class:`LLMReview` with findings in rubric order; never raises for endpoint
        failures (they land in ``errors``).
    """
    client = client or _client(config)
    result = LLMReview()
    with ThreadPoolExecutor(max_workers=config.concurrency) as pool:
        outcomes = list(pool.map(lambda r: _review_rubric(client, config, task, r), task.rubrics))
    for findings, reviewed, err, usage in outcomes:
        result.findings += findings
        result.reviewed += reviewed
        result.usage = result.usage + usage
        if err:
            result.errors.append(err)
    return result
