"""Small typed records passed between stages (agent → deliverables → judge → scores → report).

Each record is a pydantic model written as JSON in the run directory so that every stage
can be re-run alone: ``grade`` without re-running agents, ``report`` without re-grading.
Fields may be added by later versions; existing fields keep their names and meaning.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


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

    def __add__(self, other: "Usage") -> "Usage":
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


class TrialRecord(BaseModel):
    """The outcome of one trial = (task, agent, model, epoch).

    Attributes:
        trial_id: ``<task_id>/<agent>@<model>/epoch-<N>``.
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
    """

    model_config = ConfigDict(extra="allow")

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
    """

    model_config = ConfigDict(extra="allow")

    rubric_index: int
    criterion_index: int
    verdict: Verdict
    source: Literal["check", "llm", "none"]
    reasoning: str = ""
    evidence: str = ""
    evidence_found: bool | None = None
    second_opinion: dict[str, Any] | None = None


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
    """

    model_config = ConfigDict(extra="allow")

    index: int
    id: str
    weight: float
    criteria: list[CriterionVerdict]
    passed: bool | None
    requires: list[int] = Field(default_factory=list)
    model_verdict: bool | None = None
    disagreement: bool = False
    chain_break: str | None = None


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
    """

    model_config = ConfigDict(extra="allow")

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
