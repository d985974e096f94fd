"""Aggregation of graded trials into task scores, group scores and comparisons.

Flow (all pure functions, no file access):

1. :func:`trial_result` joins one :class:`~jobbench.records.TrialRecord` with its
   :class:`~jobbench.records.GradeRecord` (if any) into a flat :class:`TrialResult` and
   decides its :data:`TrialState`.
2. :func:`task_results` folds the trials of one configuration (agent, model) into one
   :class:`TaskResult` per task of the run: the task score s_t is the mean over the epochs
   whose trial has a score; a task without any scored trial is **missing**.
3. :func:`aggregate` computes, for a set of task results, **micro** (Σ points / Σ maxima,
   the public JobBench leaderboard's overall score) and **macro** (mean of task scores), both
   with missing tasks counted as 0 and listed, plus bootstrap intervals and pass^k.
4. :func:`compare` runs the paired bootstrap between two configurations and the cost/effort
   ratios; :func:`cost_summary` and :func:`chain_break_counts` give the other views.

Trial states and what they count as:

=================  ==================================================  ===============
state              meaning                                             score
=================  ==================================================  ===============
``complete``       grade complete                                      the grade's s_t
``no_deliverable`` agent failed (timeout/error/no output) and left no  0 (agent's fault)
                   deliverable (whether or not a grade exists: a
                   grade of nothing is never worth points), or left
                   no gradeable file (trial or grade status
                   ``no_deliverable``: only empty files, dotfiles, junk)
``judge_error``    grade has criteria without a valid verdict          none (regrade)
``unjudged``       grade has criteria nobody was asked to decide       none
``ungraded``       trial finished but no grade under this judge key    none
``infra_error``    the harness failed (never the agent's fault)        none
=================  ==================================================  ===============

Trials without a score are never averaged in as 0: they make their task *missing* when no
other epoch of it is scored, and missing tasks are listed with the reason.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..records import GradeRecord, TrialRecord, TrialStatus
from ..tasks import PAPER_CATEGORIES, occupation_for
from ._stats import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Interval,
    PairedComparison,
    bootstrap_ci,
    paired_bootstrap,
    pass_hat_k,
    weighted_mean,
)

TrialState = Literal[
    "complete", "no_deliverable", "judge_error", "unjudged", "ungraded", "infra_error"
]
SCORED_STATES: frozenset[str] = frozenset({"complete", "no_deliverable"})
"""States whose trial has a score (see the module docstring)."""

STATE_DESCRIPTIONS: dict[str, str] = {
    "complete": "graded",
    "no_deliverable": "agent failed without deliverables (scored 0)",
    "judge_error": "grade incomplete: judge error (not scored)",
    "unjudged": "grade incomplete: unjudged criteria (not scored)",
    "ungraded": "not graded (not scored)",
    "infra_error": "infrastructure error (not scored, not the agent's fault)",
}

MICRO_LABEL = "micro (Σ points / Σ maxima; missing tasks count 0)"
MACRO_LABEL = "macro (mean of task scores; missing tasks count 0)"
SUCCESS_THRESHOLD = 1.0 - 1e-9
"""A trial is a success for pass^k when its task score is 1 (every rubric item passed)."""

GroupKind = Literal["overall", "paper_category", "soc_major_group", "occupation", "split"]

_AGENT_FAILURES = {TrialStatus.agent_timeout, TrialStatus.agent_error, TrialStatus.no_deliverable}


class TaskMeta(BaseModel):
    """What the aggregation needs to know about a task of the run.

    Attributes:
        task_id: ``split/occupation/taskN``.
        max_points: Σ_r w_r in points, or None when unknown (no dataset, no grade).
        rubrics, criteria: counts, or None when unknown.
        invalid: the task's validation problems when it was invalid and not run
            (``lock.json`` ``invalid_tasks``); such a task is missing and counts 0.
    """

    task_id: str
    max_points: float | None = None
    rubrics: int | None = None
    criteria: int | None = None
    invalid: list[str] = Field(default_factory=list)

    @property
    def split(self) -> str:
        return split_task_id(self.task_id)[0]

    @property
    def occupation(self) -> str:
        return split_task_id(self.task_id)[1]


def split_task_id(task_id: str) -> tuple[str, str, str]:
    """``"main/lawyers/task2"`` → ``("main", "lawyers", "task2")``.

    Raises:
        ValueError: when ``task_id`` does not have three ``/``-separated parts.
    """
    parts = task_id.split("/")
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"task id {task_id!r} is not split/occupation/taskN")
    return parts[0], parts[1], parts[2]


class TrialResult(BaseModel):
    """One trial joined with its grade: one row of ``results.jsonl``.

    Scores are fractions in [0, 1]; points and maxima are rubric weights; tokens are counts;
    costs are US dollars (None when unknown); times are seconds. ``flags`` are the grade's
    flags (e.g. ``prompt_injection:<file>``), ``refused`` the deliverable files the runner
    refused (symlinks, special or oversized files, with the reason) and ``sandbox`` the
    sandbox the trial ran in (``bwrap``, ``none``; None when the record does not say).
    """

    run: str
    config: str
    agent: str
    model: str
    trial_id: str
    task_id: str
    split: str
    occupation: str
    soc_major_code: str
    soc_major_title: str
    paper_category: str | None
    epoch: int
    trial_status: str
    trial_error: str | None = None
    judge_key: str | None = None
    grade_status: str | None = None
    state: TrialState
    scored: bool
    score: float | None = None
    points: float | None = None
    max_points: float | None = None
    rubrics_total: int = 0
    rubrics_passed: int = 0
    rubrics_failed: int = 0
    rubrics_undecided: int = 0
    criteria_total: int = 0
    criteria_passed: int = 0
    criteria_failed: int = 0
    criteria_judge_error: int = 0
    criteria_unjudged: int = 0
    rubric_pass_rate: float | None = None
    criterion_pass_rate: float | None = None
    chain_breaks: dict[str, str] = Field(default_factory=dict)
    judge_disagreements: int = 0
    agent_calls: int = 0
    agent_input_tokens: int = 0
    agent_cached_input_tokens: int = 0
    agent_output_tokens: int = 0
    agent_cost_usd: float | None = None
    judge_calls: int = 0
    judge_input_tokens: int = 0
    judge_cached_input_tokens: int = 0
    judge_output_tokens: int = 0
    judge_cost_usd: float | None = None
    wall_seconds: float | None = None
    turns: int | None = None
    trajectory_events: int | None = None
    task_digest_matches: bool | None = None
    flags: list[str] = Field(default_factory=list)
    refused: list[str] = Field(default_factory=list)
    sandbox: str | None = None


def config_label(agent: str, model: str) -> str:
    """Display name of a configuration: ``agent@model``, or ``agent`` when model is ``-``."""
    return agent if model in ("", "-") else f"{agent}@{model}"


def _chain_break(rubric) -> str:
    if rubric.chain_break:
        return rubric.chain_break
    for c in rubric.criteria:
        if c.verdict == "fail":
            return f"criterion:{c.criterion_index}"
    if rubric.requires:
        return f"requires:{rubric.requires[0]}"
    return "unknown"


def _sandbox_of(trial: TrialRecord) -> str | None:
    """The sandbox the runner recorded in ``trial.json``, or None (runs older than per-trial
    sandboxes)."""
    return trial.sandbox


def trial_result(
    trial: TrialRecord,
    grade: GradeRecord | None,
    *,
    run: str,
    config: str | None = None,
    judge_key: str | None = None,
    task: TaskMeta | None = None,
    trajectory_events: int | None = None,
    lock_digest: str | None = None,
) -> TrialResult:
    """Join a trial and its grade into a :class:`TrialResult` (see the state table above).

    Args:
        trial: the runner's record.
        grade: the judge's record for ``judge_key``, or None when there is none.
        run: run name (the run directory's name).
        config: configuration label; defaults to :func:`config_label`.
        task: task metadata (maximum, counts) used when the grade does not give them.
        trajectory_events: number of events in ``trajectory.jsonl``, if counted.
        lock_digest: the task digest in ``lock.json``, to flag trials run on another version.

    Raises:
        ValueError: when ``grade`` belongs to another trial.
    """
    if grade is not None and grade.trial_id != trial.trial_id:
        raise ValueError(f"grade of {grade.trial_id!r} joined with trial {trial.trial_id!r}")
    split, occupation, _ = split_task_id(trial.task_id)
    occ = occupation_for(occupation)
    row: dict = dict(
        run=run,
        config=config or config_label(trial.agent, trial.model),
        agent=trial.agent,
        model=trial.model,
        trial_id=trial.trial_id,
        task_id=trial.task_id,
        split=split,
        occupation=occupation,
        soc_major_code=occ.soc_major_code,
        soc_major_title=occ.soc_major_title,
        paper_category=occ.paper_category,
        epoch=trial.epoch,
        trial_status=trial.status.value,
        trial_error=trial.error,
        judge_key=judge_key,
        wall_seconds=trial.wall_seconds,
        turns=trial.turns,
        trajectory_events=trajectory_events,
        agent_calls=trial.usage.calls,
        agent_input_tokens=trial.usage.input_tokens,
        agent_cached_input_tokens=trial.usage.cached_input_tokens,
        agent_output_tokens=trial.usage.output_tokens,
        agent_cost_usd=trial.usage.cost_usd,
        task_digest_matches=None if lock_digest is None else trial.task_digest == lock_digest,
        max_points=task.max_points if task else None,
        refused=list(trial.refused),
        sandbox=_sandbox_of(trial),
    )
    if grade is not None:
        row.update(
            grade_status=grade.status,
            judge_calls=grade.usage.calls,
            judge_input_tokens=grade.usage.input_tokens,
            judge_cached_input_tokens=grade.usage.cached_input_tokens,
            judge_output_tokens=grade.usage.output_tokens,
            judge_cost_usd=grade.usage.cost_usd,
            flags=list(grade.flags),
        )
    if trial.status == TrialStatus.infra_error:
        row.update(state="infra_error", scored=False)
        return TrialResult(**row)
    nothing = trial.status == TrialStatus.no_deliverable or (
        grade is not None and grade.status == "no_deliverable"
    )
    if nothing or (trial.status in _AGENT_FAILURES and not trial.deliverables):
        # The state follows the trial status even when the judge graded the empty output:
        # nothing delivered is worth 0 (the agent's fault), whatever a rubric says of it.
        n_r = task.rubrics if task else (len(grade.rubrics) if grade is not None else None)
        n_c = (
            task.criteria
            if task
            else (sum(len(r.criteria) for r in grade.rubrics) if grade is not None else None)
        )
        if grade is not None and row["max_points"] is None:
            row["max_points"] = grade.max_score
        row.update(
            state="no_deliverable",
            scored=True,
            score=0.0,
            points=0.0,
            rubrics_total=n_r or 0,
            rubrics_failed=n_r or 0,
            criteria_total=n_c or 0,
            criteria_failed=n_c or 0,
            rubric_pass_rate=0.0 if n_r else None,
            criterion_pass_rate=0.0 if n_c else None,
        )
        return TrialResult(**row)
    if grade is None:
        row.update(state="ungraded", scored=False)
        return TrialResult(**row)

    verdicts = {"pass": 0, "fail": 0, "judge_error": 0, "unjudged": 0}
    for r in grade.rubrics:
        for c in r.criteria:
            verdicts[c.verdict] += 1  # a Verdict: one of the four keys
    passed = sum(1 for r in grade.rubrics if r.passed is True)
    failed = sum(1 for r in grade.rubrics if r.passed is False)
    decided_c = verdicts["pass"] + verdicts["fail"]
    row.update(
        max_points=grade.max_score,
        rubrics_total=len(grade.rubrics),
        rubrics_passed=passed,
        rubrics_failed=failed,
        rubrics_undecided=len(grade.rubrics) - passed - failed,
        criteria_total=sum(verdicts.values()),
        criteria_passed=verdicts["pass"],
        criteria_failed=verdicts["fail"],
        criteria_judge_error=verdicts["judge_error"],
        criteria_unjudged=verdicts["unjudged"],
        rubric_pass_rate=passed / (passed + failed) if passed + failed else None,
        criterion_pass_rate=verdicts["pass"] / decided_c if decided_c else None,
        chain_breaks={str(r.index): _chain_break(r) for r in grade.rubrics if r.passed is False},
        judge_disagreements=sum(1 for r in grade.rubrics if r.disagreement),
    )
    if grade.status == "complete":
        score = grade.score
        if score is None:
            score = grade.passed_weight / grade.max_score if grade.max_score > 0 else 0.0
        row.update(
            state="complete", scored=True, score=float(score), points=float(score) * grade.max_score
        )
    else:
        row.update(state=grade.status, scored=False)
    return TrialResult(**row)


class TaskResult(BaseModel):
    """One configuration on one task, epochs folded.

    Attributes:
        score: s_t = mean over scored epochs (fraction), or None when missing.
        points: score × max_points, or None.
        counted_score, counted_points: what micro/macro use: the score, or 0 when missing
            (``counted_points`` is None when the maximum is unknown).
        missing, missing_reason: no scored trial, and why (e.g. ``no trial``,
            ``1 judge_error``).
        epoch_scores: ``{epoch: score or None}``.
        states: trials per :data:`TrialState`.
        rubric_pass_rate, criterion_pass_rate: means over scored trials that have them.
        judge_errors, unjudged: criterion verdicts of that kind over all trials.
        successes: scored trials with a full score (for pass^k).
    """

    config: str
    run: str
    task_id: str
    split: str
    occupation: str
    soc_major_code: str
    soc_major_title: str
    paper_category: str | None
    max_points: float | None
    trials: int
    scored_trials: int
    states: dict[str, int]
    epoch_scores: dict[int, float | None]
    score: float | None
    points: float | None
    counted_score: float
    counted_points: float | None
    missing: bool
    missing_reason: str | None
    rubric_pass_rate: float | None
    criterion_pass_rate: float | None
    judge_errors: int
    unjudged: int
    successes: int


def _mean(xs: Iterable[float | None]) -> float | None:
    vals = [x for x in xs if x is not None]
    return sum(vals) / len(vals) if vals else None


def task_results(
    trials: Sequence[TrialResult],
    tasks: Sequence[TaskMeta],
    *,
    config: str,
    run: str = "",
) -> list[TaskResult]:
    """Fold one configuration's trials into one :class:`TaskResult` per task.

    Args:
        trials: this configuration's trials (others are ignored).
        tasks: the run's tasks (``lock.json``); a task with no trial is missing. Tasks that
            appear only in ``trials`` are appended (never dropped).
        config, run: identify the configuration.

    Returns:
        Task results in the order of ``tasks`` (extra tasks after, sorted).
    """
    by_task: dict[str, list[TrialResult]] = defaultdict(list)
    for t in trials:
        if t.config == config:
            by_task[t.task_id].append(t)
    metas = {m.task_id: m for m in tasks}
    order = [m.task_id for m in tasks] + sorted(set(by_task) - set(metas))
    out: list[TaskResult] = []
    for task_id in order:
        ts = sorted(by_task.get(task_id, []), key=lambda t: t.epoch)
        meta = metas.get(task_id, TaskMeta(task_id=task_id))
        split, occupation, _ = split_task_id(task_id)
        occ = occupation_for(occupation)
        scored = [t for t in ts if t.scored]
        max_points = meta.max_points
        if max_points is None:
            known = [t.max_points for t in ts if t.max_points is not None]
            max_points = max(known) if known else None
        score = _mean(t.score for t in scored)
        states = dict(Counter(t.state for t in ts))
        missing = score is None
        reason = None
        if missing and meta.invalid and not ts:
            reason = f"invalid task, not run: {meta.invalid[0]}" + (
                f" (+{len(meta.invalid) - 1} more problem(s))" if len(meta.invalid) > 1 else ""
            )
        elif missing:
            reason = (
                "no trial" if not ts else ", ".join(f"{n} {s}" for s, n in sorted(states.items()))
            )
        counted = 0.0 if score is None else score
        out.append(
            TaskResult(
                config=config,
                run=run,
                task_id=task_id,
                split=split,
                occupation=occupation,
                soc_major_code=occ.soc_major_code,
                soc_major_title=occ.soc_major_title,
                paper_category=occ.paper_category,
                max_points=max_points,
                trials=len(ts),
                scored_trials=len(scored),
                states=states,
                epoch_scores={t.epoch: t.score for t in ts},
                score=score,
                points=None if score is None or max_points is None else score * max_points,
                counted_score=counted,
                counted_points=None if max_points is None else counted * max_points,
                missing=missing,
                missing_reason=reason,
                rubric_pass_rate=_mean(t.rubric_pass_rate for t in scored),
                criterion_pass_rate=_mean(t.criterion_pass_rate for t in scored),
                judge_errors=sum(t.criteria_judge_error for t in ts),
                unjudged=sum(t.criteria_unjudged for t in ts),
                successes=sum(1 for t in scored if (t.score or 0.0) >= SUCCESS_THRESHOLD),
            )
        )
    return out


class Aggregate(BaseModel):
    """Figures of one configuration over a group of tasks.

    Attributes:
        group_kind, group: e.g. ``paper_category`` / ``Bus. Fin.``; ``overall`` / ``all``.
        tasks, tasks_scored, tasks_missing: counts; ``missing_tasks`` lists the missing ids.
        tasks_unknown_max: tasks left out of micro because their maximum is unknown.
        points, max_points: Σ counted points and Σ maxima over tasks with a known maximum.
        micro: Σ points / Σ maxima with its bootstrap interval (fractions); missing = 0.
        macro: mean of task scores with its interval (fractions); missing = 0.
        macro_scored_only: mean over scored tasks only (fraction), for reference.
        rubric_pass_rate, criterion_pass_rate: means over scored tasks.
        trials, trials_by_state: trial counts.
        judge_errors: criterion verdicts ``judge_error`` over all trials.
        pass_hat_k: ``{k: mean pass^k}`` over tasks with at least k scored trials
            (``pass_hat_k_tasks[k]`` of them); success = full task score.
    """

    config: str
    group_kind: str
    group: str
    tasks: int
    tasks_scored: int
    tasks_missing: int
    missing_tasks: list[str]
    tasks_unknown_max: list[str]
    points: float
    max_points: float
    micro: Interval
    macro: Interval
    macro_scored_only: float | None
    rubric_pass_rate: float | None
    criterion_pass_rate: float | None
    trials: int
    trials_by_state: dict[str, int]
    judge_errors: int
    unjudged: int
    pass_hat_k: dict[int, float | None]
    pass_hat_k_tasks: dict[int, int]


def aggregate(
    results: Sequence[TaskResult],
    *,
    config: str | None = None,
    group_kind: str = "overall",
    group: str = "all",
    ks: Sequence[int] = (1,),
    with_ci: bool = True,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
) -> Aggregate:
    """Micro, macro (with bootstrap intervals), coverage and pass^k over task results.

    Args:
        results: one configuration's task results for the group.
        config: label; defaults to the results' configuration.
        ks: the k values for pass^k (e.g. ``range(1, epochs + 1)``).
        with_ci: compute bootstrap intervals (else low/high are None).
        n_resamples, confidence, seed: bootstrap settings (see :mod:`._stats`).

    Raises:
        ValueError: when ``results`` mixes configurations.
    """
    configs = {r.config for r in results}
    if len(configs) > 1:
        raise ValueError(f"aggregate() got several configurations: {sorted(configs)}")
    label = config or (next(iter(configs)) if configs else "")
    known = [r for r in results if r.max_points is not None]
    micro_s = [r.counted_score for r in known]
    micro_w = [r.max_points or 0.0 for r in known]
    macro_s = [r.counted_score for r in results]
    settings: dict[str, Any] = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    if with_ci:
        micro = bootstrap_ci(micro_s, micro_w, **settings)
        macro = bootstrap_ci(macro_s, None, **settings)
    else:
        micro = Interval(
            estimate=weighted_mean(micro_s, micro_w),
            low=None,
            high=None,
            n=len(micro_s),
            **settings,
        )
        macro = Interval(
            estimate=weighted_mean(macro_s), low=None, high=None, n=len(macro_s), **settings
        )
    scored = [r for r in results if not r.missing]
    states: Counter[str] = Counter()
    for r in results:
        states.update(r.states)
    phk: dict[int, float | None] = {}
    phk_n: dict[int, int] = {}
    for k in ks:
        vals = [
            pass_hat_k(r.scored_trials, r.successes, k) for r in results if r.scored_trials >= k
        ]
        phk[k] = sum(vals) / len(vals) if vals else None
        phk_n[k] = len(vals)
    return Aggregate(
        config=label,
        group_kind=group_kind,
        group=group,
        tasks=len(results),
        tasks_scored=len(scored),
        tasks_missing=len(results) - len(scored),
        missing_tasks=[r.task_id for r in results if r.missing],
        tasks_unknown_max=[r.task_id for r in results if r.max_points is None],
        points=sum(r.counted_points or 0.0 for r in known),
        max_points=sum(micro_w),
        micro=micro,
        macro=macro,
        macro_scored_only=_mean(r.score for r in scored),
        rubric_pass_rate=_mean(r.rubric_pass_rate for r in scored),
        criterion_pass_rate=_mean(r.criterion_pass_rate for r in scored),
        trials=sum(r.trials for r in results),
        trials_by_state=dict(sorted(states.items())),
        judge_errors=sum(r.judge_errors for r in results),
        unjudged=sum(r.unjudged for r in results),
        pass_hat_k=phk,
        pass_hat_k_tasks=phk_n,
    )


def group_of(result: TaskResult | TrialResult, kind: str) -> str | None:
    """The group of a task under ``kind``: ``all`` (overall), the paper's category column
    (None for SOC groups outside the five), the SOC major code, the occupation slug or the
    split.

    Raises:
        ValueError: for an unknown ``kind``.
    """
    if kind == "overall":
        return "all"
    if kind == "paper_category":
        return result.paper_category
    if kind == "soc_major_group":
        return result.soc_major_code
    if kind == "occupation":
        return result.occupation
    if kind == "split":
        return result.split
    raise ValueError(f"unknown group kind {kind!r}")


def group_results(results: Sequence[TaskResult], kind: str) -> dict[str, list[TaskResult]]:
    """Task results by group (see :func:`group_of`), groups in a stable order: paper
    categories in the paper's column order, others sorted; tasks outside every group of
    ``kind`` are left out."""
    out: dict[str, list[TaskResult]] = defaultdict(list)
    for r in results:
        g = group_of(r, kind)
        if g is not None:
            out[g].append(r)
    if kind == "paper_category":
        order = [c for c in PAPER_CATEGORIES.values() if c in out]
    else:
        order = sorted(out)
    return {g: out[g] for g in order}


class CostSummary(BaseModel):
    """Cost and effort of one configuration's trials (agent and judge kept apart).

    Attributes:
        trials: trials counted (all states, infra errors included: they cost too).
        agent_*: token totals; ``agent_cost_usd`` sums the trials whose cost is known
            (``agent_cost_trials`` of them), None when no cost is known.
        judge_*: the same for the judge's grades.
        wall_seconds_total, wall_seconds_mean: agent wall time over trials that report it.
        turns_mean, trajectory_events_mean: per trial, over trials that report them.
    """

    config: str
    trials: int
    agent_calls: int
    agent_input_tokens: int
    agent_cached_input_tokens: int
    agent_output_tokens: int
    agent_cost_usd: float | None
    agent_cost_trials: int
    judge_calls: int
    judge_input_tokens: int
    judge_cached_input_tokens: int
    judge_output_tokens: int
    judge_cost_usd: float | None
    judge_cost_trials: int
    wall_seconds_total: float | None
    wall_seconds_mean: float | None
    turns_mean: float | None
    trajectory_events_mean: float | None

    @property
    def agent_tokens(self) -> int:
        return self.agent_input_tokens + self.agent_output_tokens

    @property
    def judge_tokens(self) -> int:
        return self.judge_input_tokens + self.judge_output_tokens


def cost_summary(trials: Sequence[TrialResult], *, config: str | None = None) -> CostSummary:
    """Sum and average cost/effort over ``trials`` (see :class:`CostSummary`)."""
    agent_costs = [t.agent_cost_usd for t in trials if t.agent_cost_usd is not None]
    judge_costs = [t.judge_cost_usd for t in trials if t.judge_cost_usd is not None]
    walls = [t.wall_seconds for t in trials if t.wall_seconds is not None]
    return CostSummary(
        config=config or (trials[0].config if trials else ""),
        trials=len(trials),
        agent_calls=sum(t.agent_calls for t in trials),
        agent_input_tokens=sum(t.agent_input_tokens for t in trials),
        agent_cached_input_tokens=sum(t.agent_cached_input_tokens for t in trials),
        agent_output_tokens=sum(t.agent_output_tokens for t in trials),
        agent_cost_usd=sum(agent_costs) if agent_costs else None,
        agent_cost_trials=len(agent_costs),
        judge_calls=sum(t.judge_calls for t in trials),
        judge_input_tokens=sum(t.judge_input_tokens for t in trials),
        judge_cached_input_tokens=sum(t.judge_cached_input_tokens for t in trials),
        judge_output_tokens=sum(t.judge_output_tokens for t in trials),
        judge_cost_usd=sum(judge_costs) if judge_costs else None,
        judge_cost_trials=len(judge_costs),
        wall_seconds_total=sum(walls) if walls else None,
        wall_seconds_mean=sum(walls) / len(walls) if walls else None,
        turns_mean=_mean(t.turns for t in trials),
        trajectory_events_mean=_mean(t.trajectory_events for t in trials),
    )


RATIO_FIELDS: dict[str, str] = {
    "wall_seconds": "runtime (agent wall time per trial)",
    "turns": "turns per trial",
    "trajectory_events": "trajectory length (events per trial)",
    "agent_tokens": "agent tokens per trial",
    "agent_cost_usd": "agent cost per trial",
    "judge_tokens": "judge tokens per trial",
    "judge_cost_usd": "judge cost per trial",
}


def _trial_value(t: TrialResult, field: str) -> float | None:
    if field == "agent_tokens":
        return t.agent_input_tokens + t.agent_output_tokens
    if field == "judge_tokens":
        return t.judge_input_tokens + t.judge_output_tokens
    v = getattr(t, field)
    return None if v is None else float(v)


def effort_ratios(
    a_trials: Sequence[TrialResult],
    b_trials: Sequence[TrialResult],
    tasks: Iterable[str] | None = None,
) -> dict[str, float | None]:
    """Ratios A / B of per-trial means of each :data:`RATIO_FIELDS` figure.

    Args:
        a_trials, b_trials: the two configurations' trials.
        tasks: restrict both sides to these task ids (e.g. the tasks they share).

    Returns:
        ``{field: mean_A / mean_B}``; None when either side has no value or B's mean is 0.
    """
    keep = None if tasks is None else set(tasks)
    out: dict[str, float | None] = {}
    for field in RATIO_FIELDS:
        ma = _mean(_trial_value(t, field) for t in a_trials if keep is None or t.task_id in keep)
        mb = _mean(_trial_value(t, field) for t in b_trials if keep is None or t.task_id in keep)
        out[field] = None if ma is None or mb is None or mb == 0 else ma / mb
    return out


class Comparison(BaseModel):
    """Paired comparison of configuration A with B (see :func:`compare`).

    Attributes:
        tasks: task ids compared (shared by both, in A's order); with
            ``pair_by="occupation_task"`` these are ``<occupation>/taskN`` (the split left out).
        missing_in_a, missing_in_b: compared tasks counted as 0 for that side.
        only_in_a, only_in_b: tasks not shared (left out).
        micro, macro: :class:`~jobbench.scoring._stats.PairedComparison` of A − B.
        ratios: :func:`effort_ratios` on the shared tasks.
        pair_by: how tasks were paired: ``task`` (same task id) or ``occupation_task``
            (same occupation and task number in different splits, e.g. main vs easy).
    """

    a: str
    b: str
    scored_only: bool
    pair_by: Literal["task", "occupation_task"] = "task"
    tasks: list[str]
    missing_in_a: list[str]
    missing_in_b: list[str]
    only_in_a: list[str]
    only_in_b: list[str]
    micro: PairedComparison
    macro: PairedComparison
    ratios: dict[str, float | None]


def compare(
    a_results: Sequence[TaskResult],
    b_results: Sequence[TaskResult],
    a_trials: Sequence[TrialResult] = (),
    b_trials: Sequence[TrialResult] = (),
    *,
    scored_only: bool = False,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = DEFAULT_SEED,
    pair_by: Literal["task", "occupation_task"] = "task",
) -> Comparison:
    """Paired bootstrap of A − B (micro and macro) on the tasks both were run on.

    Args:
        a_results, b_results: each configuration's task results.
        a_trials, b_trials: their trials, for the effort ratios (optional).
        scored_only: compare only tasks scored for both (default: missing tasks count 0, as
            on the leaderboard).
        n_resamples, confidence, seed: bootstrap settings; the same resample indices are
            used for micro and macro.
        pair_by: ``task`` pairs equal task ids; ``occupation_task`` pairs tasks with the
            same ``<occupation>/taskN`` whatever their split, the JobBench paper's main
            versus easy view (each easy task is the easy variant of the main task of the
            same occupation and number).

    Micro uses A's task maximum (B's when A's is unknown); tasks with no known maximum are
    left out of micro only.
    """

    def key(task_id: str, split: str) -> str:
        if pair_by == "task" or not task_id.startswith(split + "/"):
            return task_id
        return task_id[len(split) + 1 :]

    bmap = {key(r.task_id, r.split): r for r in b_results}
    amap = {key(r.task_id, r.split): r for r in a_results}
    a_keys = {r.task_id: key(r.task_id, r.split) for r in a_results}
    b_keys = {r.task_id: key(r.task_id, r.split) for r in b_results}
    shared = [a_keys[r.task_id] for r in a_results if a_keys[r.task_id] in bmap]
    if scored_only:
        shared = [t for t in shared if not amap[t].missing and not bmap[t].missing]
    a = [amap[t].counted_score for t in shared]
    b = [bmap[t].counted_score for t in shared]
    settings: dict[str, Any] = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    micro_ids = [
        t for t in shared if amap[t].max_points is not None or bmap[t].max_points is not None
    ]
    weights = [  # b's maximum is known whenever a's is not (micro_ids above)
        m if (m := amap[t].max_points) is not None else (bmap[t].max_points or 0.0)
        for t in micro_ids
    ]
    micro = paired_bootstrap(
        [amap[t].counted_score for t in micro_ids],
        [bmap[t].counted_score for t in micro_ids],
        weights,
        statistic="micro",
        **settings,
    )
    macro = paired_bootstrap(a, b, None, statistic="macro", **settings)
    la = a_results[0].config if a_results else "A"
    lb = b_results[0].config if b_results else "B"
    keep = set(shared)
    return Comparison(
        a=la,
        b=lb,
        scored_only=scored_only,
        pair_by=pair_by,
        tasks=shared,
        missing_in_a=[t for t in shared if amap[t].missing],
        missing_in_b=[t for t in shared if bmap[t].missing],
        only_in_a=[t for t in amap if t not in bmap],
        only_in_b=[t for t in bmap if t not in amap],
        micro=micro,
        macro=macro,
        ratios=effort_ratios(
            [t for t in a_trials if a_keys.get(t.task_id, t.task_id) in keep],
            [t for t in b_trials if b_keys.get(t.task_id, t.task_id) in keep],
        ),
    )


NO_DELIVERABLE_BREAK = "no deliverable"
"""The :func:`chain_break_counts` key of the rubric items failed by trials that delivered
nothing (state ``no_deliverable``: every item fails, no chain is examined)."""


def chain_break_counts(trials: Sequence[TrialResult]) -> dict[str, int]:
    """Where failed rubric chains break first, over scored trials: complete grades by their
    first failed link, and every rubric item of a ``no_deliverable`` trial under
    :data:`NO_DELIVERABLE_BREAK` (it failed them all, as the score counts it).

    Returns:
        ``{"criterion 1": n, "criterion 2": n, …, "requires": n, "unknown": n, "no
        deliverable": n}`` (criterion positions 1-based, in increasing order; keys with 0
        left out).
    """
    counts: Counter[str] = Counter()
    for t in trials:
        if t.state == "no_deliverable":
            counts[NO_DELIVERABLE_BREAK] += t.rubrics_failed
            continue
        if t.state != "complete":
            continue
        for brk in t.chain_breaks.values():
            kind, _, pos = brk.partition(":")
            if kind == "criterion" and pos.isdigit():
                counts[f"criterion {int(pos) + 1}"] += 1
            elif kind == "requires":
                counts["requires"] += 1
            else:
                counts["unknown"] += 1

    return {k: counts[k] for k in sorted(counts, key=chain_break_order) if counts[k]}


def chain_break_order(key: str) -> tuple[int, int]:
    """Sort key of :func:`chain_break_counts` keys: criteria by position, then ``requires``,
    ``unknown`` and :data:`NO_DELIVERABLE_BREAK`."""
    if key.startswith("criterion "):
        return (0, int(key.split()[1]))
    return (1, {"requires": 0, "unknown": 1, NO_DELIVERABLE_BREAK: 2}.get(key, 1))
