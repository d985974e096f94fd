"""Small typed records passed between stages (agent → deliverables → judge → scores → report).

Each record is a pydantic model written as JSON in the run directory so that every stage
can be re-run alone: ``grade`` without re-running agents, ``report`` without re-grading.
Where the records live, and how they are read and written, is :mod:`jobbench.rundir`'s.

:class:`TrialRecord` and :class:`GradeRecord` carry ``schema_version``
(:data:`SCHEMA_VERSION`): every field is declared (unknown top-level fields are an error), and
a version that adds or changes a field bumps the number. Files without ``schema_version``
are schema 1 (JobBench before the number existed; their extra fields had the names declared
here); :mod:`jobbench.rundir` reads both.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 2
"""Schema of ``lock.json``, ``trial.json`` and grade files written by this version (1 = the
files of JobBench before ``schema_version`` existed)."""

_RECORD = ConfigDict(extra="forbid")
_PART = ConfigDict(extra="ignore")


class Usage(BaseModel):
    """Token usage and cost of one or more model calls.

    Attributes:
        calls: number of API calls (HTTP requests that returned a reply).
        input_tokens: prompt tokens as reported by the API (cached ones included).
        cached_input_tokens: the part of ``input_tokens`` served from a prompt cache.
        output_tokens: completion tokens (reasoning tokens included).
        cost_usd: US dollars, or None when no price is known for the model.
    """

    model_config = ConfigDict(extra="allow")

    calls: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None

    def __add__(self, other: Usage) -> Usage:
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cost_usd=cost,
        )


class PrefixCacheable(BaseModel):
    """The part of judge prompts a provider's prompt-prefix cache could have served: per call,
    the longest prefix its prompt shares with a call of the same trial that had completed
    before it was sent (the judge records it; no provider reports it).

    Attributes:
        calls: calls counted (completions received).
        chars: characters of those shared prefixes, in the prompt text of
            :func:`jobbench.judge._grade.prompt_text`.
        tokens: the same, estimated in tokens: per call ``round(input_tokens · chars /
            prompt_chars)`` with the call's reported input tokens, or ``chars // 4`` when the
            reply reports none.
        prompt_chars: characters of the calls' whole prompt texts.
    """

    model_config = ConfigDict(extra="allow")

    calls: int = 0
    chars: int = 0
    tokens: int = 0
    prompt_chars: int = 0

    def __add__(self, other: PrefixCacheable) -> PrefixCacheable:
        return PrefixCacheable(
            calls=self.calls + other.calls,
            chars=self.chars + other.chars,
            tokens=self.tokens + other.tokens,
            prompt_chars=self.prompt_chars + other.prompt_chars,
        )


class TrialStatus(str, Enum):
    """Failure taxonomy of a trial. Only ``infra_error`` is the harness's fault; it is
    retried and never scored as an agent failure."""

    ok = "ok"
    agent_timeout = "agent_timeout"
    agent_error = "agent_error"
    no_deliverable = "no_deliverable"
    infra_error = "infra_error"


class DeliverableFile(BaseModel):
    """One collected deliverable: POSIX path relative to the deliverables folder, size in
    bytes, hex sha256."""

    path: str
    size: int
    sha256: str


class TrialAttempt(BaseModel):
    """An earlier attempt of a trial that ended in ``infra_error`` and was retried within the
    same invocation: 1-based ``attempt``, its ``status`` and ``error``."""

    model_config = _PART

    attempt: int
    status: str
    error: str | None = None


class TrialRecord(BaseModel):
    """The outcome of one trial = (task, agent, model, epoch).

    Attributes:
        schema_version: see :data:`SCHEMA_VERSION`.
        trial_id: ``<task_id>/<agent>@<model>/epoch-<N>`` (:func:`jobbench.rundir.trial_id`).
        task_id: ``split/occupation/taskN``.
        task_digest: :func:`jobbench.tasks.task_digest` at run time.
        agent, model: agent name and model name (``-`` when the agent has none).
        epoch: 1-based epoch number.
        status: see :class:`TrialStatus`.
        deliverables: collected files (sha256 manifest).
        refused: deliverable paths refused (symlinks, special files, too large) with reason.
        ignored: files of ``output/`` that are not deliverables (dotfiles, OS and editor
            junk; :mod:`jobbench.deliverable_policy`) with reason; not collected.
        wall_seconds: agent wall-clock time in seconds.
        turns: agent turns, when known.
        usage: the agent's token usage and cost (never mixed with the judge's).
        settings: model settings passed to the agent (temperature, reasoning effort, …).
        error: message for non-``ok`` statuses.
        session_id: the CLI agent's own session id, when it reports one.
        details: agent-specific facts about how the run ended (exit code, stop reason, the
            limit that was hit, …; free-form, for people reading the record).
        attempts: earlier attempts of this trial in the same invocation that ended in
            ``infra_error`` (the record is the last attempt's).
        sandbox: the sandbox backend the trial ran in (``bwrap`` or ``none``); None in
            records of runs older than per-trial sandboxes.
        protocol: the run protocol the trial ran under (``jobbench`` or ``public``, see
            :mod:`jobbench.agents._protocol`); records older than protocols ran under
            ``jobbench``, the default.
        limits: the budget the trial ran with (:class:`jobbench.agents.AgentLimits` as a
            dict: under ``public`` a published runner's time limit and turn cap); None in
            older records.
    """

    model_config = _RECORD

    schema_version: int = Field(default=SCHEMA_VERSION, strict=True)
    trial_id: str
    task_id: str
    task_digest: str
    agent: str
    model: str
    epoch: int
    status: TrialStatus
    deliverables: list[DeliverableFile] = Field(default_factory=list)
    refused: list[str] = Field(default_factory=list)
    ignored: list[str] = Field(default_factory=list)
    started_at: str | None = None
    finished_at: str | None = None
    wall_seconds: float | None = None
    turns: int | None = None
    usage: Usage = Field(default_factory=Usage)
    settings: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    session_id: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    attempts: list[TrialAttempt] = Field(default_factory=list)
    sandbox: str | None = None
    protocol: str = "jobbench"
    limits: dict[str, Any] | None = None


Verdict = Literal["pass", "fail", "judge_error", "unjudged"]
"""A criterion verdict. ``judge_error``: no valid verdict after retries (never a pass, never
a fail); ``unjudged``: nobody was asked (e.g. ``--decide checks`` and no check)."""


class CriterionVerdict(BaseModel):
    """The verdict on one criterion of one rubric.

    Attributes:
        rubric_index, criterion_index: 0-based positions in RUBRICS.json.
        verdict: see :data:`Verdict`.
        source: ``check`` (programmatic), ``llm``, or ``none``.
        reasoning: short justification.
        evidence: quote from the deliverables supporting the verdict.
        evidence_found: whether ``evidence`` occurs in the extracted text (normalised), or
            None when not applicable.
        second_opinion: the other decider's verdict when both ran (``--decide llm`` with a
            check present), for agreement figures; it never decides the score.
        unit: for LLM verdicts, the id of the judge question that gave it (``rubric:<r>``,
            ``task``, ``rubric:<r>/criterion:<c>``; see :attr:`GradeRecord.units`).
        cached: for LLM verdicts, whether it came from the verdict cache or an earlier grade
            of the same inputs rather than from a call made for this grade.
        strict_override: a pass turned into a fail by ``--strict-evidence`` because its
            quote was not found in the deliverables.
        cause: for a ``judge_error``, why (``context_length``, ``response_format``,
            ``rejected``, ``auth``, ``not_found``, ``server_error``, ``timeout``,
            ``connection``, ``bad_response``, ``bad_reply``; see ``jobbench.judge._client``).
        downgrades: for LLM verdicts, how the call that gave it departed from the judge
            settings of the grade (``response_format json_schema -> json_object``,
            ``temperature dropped``, ``seed dropped``, ``max_tokens …``); empty when it
            was sent as configured.
    """

    model_config = _PART

    rubric_index: int
    criterion_index: int
    verdict: Verdict
    source: Literal["check", "llm", "none"]
    reasoning: str = ""
    evidence: str = ""
    evidence_found: bool | None = None
    second_opinion: dict[str, Any] | None = None
    unit: str | None = None
    cached: bool | None = None
    strict_override: bool = False
    cause: str | None = None
    downgrades: list[str] = Field(default_factory=list)


class RubricGrade(BaseModel):
    """The grade of one rubric item.

    Attributes:
        index, id, weight: as in the task.
        criteria: one verdict per criterion, in order.
        passed: z_r computed in code (all criteria pass and every required rubric passes);
            None when any verdict on its chain is ``judge_error`` or ``unjudged``.
        model_verdict: the judge model's own overall verdict, if it gave one (recorded,
            never used except in ``official`` mode).
        disagreement: True when ``model_verdict`` contradicts the criteria.
        chain_break: ``criterion:<j>`` or ``requires:<index>`` for the first failed link.
        undecided: ``judge_error`` or ``unjudged`` when ``passed`` is None (what left it
            undecided), else None.
        overall_reasoning: the judge model's overall justification for the rubric, if any.
        images: names of the images the judge was shown for this rubric.
        images_left_out: ``"<name>: <reason>"`` for the images of the deliverables in scope
            that were not shown (over the per-call limit, or the same content as another).
    """

    model_config = _PART

    index: int
    id: str
    weight: float
    criteria: list[CriterionVerdict]
    passed: bool | None
    requires: list[int] = Field(default_factory=list)
    model_verdict: bool | None = None
    disagreement: bool = False
    chain_break: str | None = None
    undecided: str | None = None
    overall_reasoning: str | None = None
    images: list[str] = Field(default_factory=list)
    images_left_out: list[str] = Field(default_factory=list)


class GradedDeliverable(BaseModel):
    """One deliverable file as the judge saw it: POSIX ``path`` relative to the deliverables
    folder, ``sha256`` (empty when refused), ``size`` in bytes, extraction ``kind``
    (``refused`` for files the extractor refused: symlinks, special files)."""

    model_config = _PART

    path: str
    sha256: str = ""
    size: int = 0
    kind: str = ""


class InjectionHit(BaseModel):
    """A deliverable that seems to address the judge: the ``file`` and an ``excerpt``."""

    model_config = _PART

    file: str
    excerpt: str = ""


class JudgeUnit(BaseModel):
    """One question put to the LLM judge for a grade (one or more calls after retries).

    Attributes:
        unit: its id within the grade (``rubric:<r>``, ``task``, ``rubric:<r>/criterion:<c>``).
        kind: ``rubric``, ``task`` or ``criterion``.
        key: the verdict-cache key; base_key: the key without the attempt-specific parts
            (used to reuse verdicts of an earlier grade of the same inputs).
        asked: rubric index (as a string) → criterion indices asked.
        complete: every asked criterion got a valid verdict.
        cached: answered from the verdict cache; reused: carried from an earlier grade.
        error: why no valid verdict was obtained, if so; cause: its kind (as
            :attr:`CriterionVerdict.cause`).
        downgrades: the judge client's downgrades in effect for any of its calls.
        images: names of the images attached; images_left_out: ``"<name>: <reason>"`` of
            the in-scope images not attached (stated in the prompt too).
        usage: what the calls made for this grade cost; cached_usage: what the cached or
            reused verdicts cost when first obtained.
        prefix_cacheable: how much of the prompts of the calls made for this grade a
            provider's prefix cache could have served (the sum of each reply's
            ``prefix_cacheable``; see :class:`PrefixCacheable`).
        elapsed_s: seconds spent on the calls.
        replies: one entry per call (raw reply text, usage, attempts, abandoned, errors, …),
            as the judge client reported it.
        payload: the verdicts parsed from the replies (``verdicts``, ``model_verdicts``,
            ``overall``), or None.
    """

    model_config = _PART

    unit: str
    kind: str = ""
    key: str = ""
    base_key: str | None = None
    asked: dict[str, list[int]] = Field(default_factory=dict)
    complete: bool = False
    cached: bool = False
    reused: bool = False
    error: str | None = None
    cause: str | None = None
    downgrades: list[str] = Field(default_factory=list)
    images: list[str] = Field(default_factory=list)
    images_left_out: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    cached_usage: Usage = Field(default_factory=Usage)
    prefix_cacheable: PrefixCacheable = Field(default_factory=PrefixCacheable)
    elapsed_s: float = 0.0
    replies: list[dict[str, Any]] = Field(default_factory=list)
    payload: dict[str, Any] | None = None


class GradeRecord(BaseModel):
    """The grade of one trial by one judge configuration.

    Attributes:
        trial_id, task_id: what was graded.
        judge: judge identity (model, mode, decide, prompt version, …).
        rubrics: one :class:`RubricGrade` per rubric, in order.
        score: s_t = Σ w_r z_r / Σ w_r in [0, 1], or None when any rubric is undecided
            (judge_error or unjudged); see ``status``.
        max_score: Σ w_r (points).
        passed_weight: Σ w_r z_r over decided rubrics (points).
        status: ``complete`` (score defined), ``judge_error`` (needs a regrade),
            ``unjudged`` (some rubric had nobody to decide it) or ``no_deliverable`` (no
            gradeable file, see :mod:`jobbench.deliverable_policy`: no judge call, every
            criterion fails, score 0; the record's ``status_reason`` says why).
        usage: the judge's token usage and cost for this grade.
        flags: e.g. ``prompt_injection`` detections per deliverable.
        created_at: when the grade was made (UTC, ISO 8601).
        epoch: the trial's epoch (part of the verdict-cache key).
        undecided_weight: Σ w_r over undecided rubrics (points).
        passed_count, total_count: rubrics passed, rubrics in the task.
        cached_usage: what the verdicts served from the cache or reused from an earlier
            grade cost when first obtained (``usage`` has only what this grade spent).
        disagreements: rubrics whose model verdict contradicts their criteria.
        injection: deliverables that seem to address the judge.
        status_reason: for ``no_deliverable``, why (``no gradeable deliverable: only …``).
        ignored: ``"path: reason"`` of the folder's files that are not deliverables (dotfiles,
            OS and editor junk), neither shown nor checked.
        deliverables: the deliverable files as the judge saw them.
        timings: seconds per step (``extract_s``, ``checks_s``, ``llm_s``, ``wall_s``).
        units: the LLM questions asked (empty for checks-only grades).
        inputs_digest: hash of (task digest, deliverable manifest, judge identity); a grade
            whose digest matches the current inputs is up to date.
        agent, model: the trial's agent and model (``-`` for none), for usage breakdowns.
        task_digest: the task's digest when graded; task_digest_changed: it differs from
            the digest recorded in ``lock.json`` for the run.
        trial_status: the trial's status when graded.
        expected_set, expected_dir: calibration only: the deliverable set with known
            verdicts that was graded, and its folder.
        public_label: public layout only: the ``model_output/<label>/`` folder graded.
    """

    model_config = _RECORD

    schema_version: int = Field(default=SCHEMA_VERSION, strict=True)
    trial_id: str
    task_id: str
    judge: dict[str, Any]
    rubrics: list[RubricGrade]
    score: float | None
    max_score: float
    passed_weight: float
    status: Literal["complete", "judge_error", "unjudged", "no_deliverable"]
    usage: Usage = Field(default_factory=Usage)
    flags: list[str] = Field(default_factory=list)
    created_at: str | None = None
    epoch: int | None = None
    undecided_weight: float = 0.0
    passed_count: int | None = None
    total_count: int | None = None
    cached_usage: Usage = Field(default_factory=Usage)
    disagreements: int = 0
    injection: list[InjectionHit] = Field(default_factory=list)
    status_reason: str | None = None
    ignored: list[str] = Field(default_factory=list)
    deliverables: list[GradedDeliverable] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)
    units: list[JudgeUnit] = Field(default_factory=list)
    inputs_digest: str | None = None
    agent: str | None = None
    model: str | None = None
    task_digest: str | None = None
    task_digest_changed: bool | None = None
    trial_status: str | None = None
    expected_set: str | None = None
    expected_dir: str | None = None
    public_label: str | None = None
