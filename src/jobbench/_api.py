"""The library entry points: :func:`evaluate` (run → grade → report), :func:`grade` and
:func:`report` (which is :func:`jobbench.report.report`, in ``report/_api.py``).
``jobbench run``, ``jobbench grade`` and ``jobbench report`` are shells over the same
functions of the stage packages; these add no rule of their own.

Example (the bundled sample's main split, oracle and null agents, checks-only judge)::

    import jobbench

    result = jobbench.evaluate("datasets/sample", split="main", agents=["oracle", "null"])
    for row in result.leaderboard:
        print(row["config"], row["micro"], row["macro"])
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .report import ReportResult, report

if TYPE_CHECKING:  # pragma: no cover
    from .agents import AgentLimits, Endpoint, ModelSettings, Pricing
    from .judge import JudgeConfig
    from .records import GradeRecord
    from .runner import AgentSpec, Executor, RunSummary


@dataclass
class RunResult:
    """What :func:`evaluate` did.

    Attributes:
        run_dir: the run directory.
        summary: the trials (:class:`jobbench.runner.RunSummary`).
        grades: the current grade of every gradable trial (empty when not graded).
        report: the report (None when not graded or not reported).
    """

    run_dir: Path
    summary: RunSummary
    grades: list[GradeRecord] = field(default_factory=list)
    report: ReportResult | None = None

    @property
    def leaderboard(self) -> list[dict[str, Any]]:
        """:attr:`ReportResult.leaderboard`, or ``[]`` without a report."""
        return self.report.leaderboard if self.report else []


def evaluate(
    dataset: str | os.PathLike[str] | None = None,
    *,
    agents: Sequence[str | AgentSpec] | None = None,
    models: Sequence[str] | None = None,
    judge: JudgeConfig | None = None,
    split: str | Sequence[str] | None = None,
    tasks: str | None = None,
    epochs: int = 1,
    runs_dir: str | os.PathLike[str] = "runs",
    run_name: str | None = None,
    settings: ModelSettings | None = None,
    limits: AgentLimits | None = None,
    endpoint: Endpoint | None = None,
    pricing: Pricing | None = None,
    max_trials: int = 1,
    sandbox: Literal["auto", "bwrap", "none"] = "auto",
    protocol: str = "jobbench",
    skip_invalid: bool = False,
    strict: bool = False,
    executor: Executor | None = None,
    do_grade: bool = True,
    do_report: bool = True,
) -> RunResult:
    """Run agents on a dataset, grade the trials and write the report (resumable: the same
    arguments resume the same run directory, redoing only what is missing).

    Args:
        dataset: dataset root, split, occupation or task directory (default: the bundled
            ``datasets/sample``, split ``main`` unless ``split`` is given).
        agents: agent references (``oracle``, ``builtin@gpt-5``, an entry-point name of the
            ``jobbench.agents`` group, or ``module:Class``) or
            :class:`jobbench.runner.AgentSpec` objects (default: oracle and null).
        models: models for agents that need one and were given without ``@MODEL``.
        judge: the judge (default: :func:`jobbench.judge.load_judge_config`, i.e. the
            environment; without an endpoint only programmatic checks run).
        split, tasks: only these splits, only task ids matching this glob.
        epochs: trials per task and agent configuration.
        runs_dir, run_name: the run directory is ``runs_dir/run_name`` (default name: derived
            from the dataset, agents and settings, as ``jobbench run`` derives it).
        settings, limits, endpoint, pricing: model settings, per-trial budget, the
            OpenAI-compatible endpoint and prices of API agents.
        max_trials: trials run concurrently (local executor).
        sandbox, protocol, skip_invalid, strict: as ``jobbench run --sandbox`` etc.
        executor: where trials and grading run (default: threads of this process); the
            caller keeps ownership.
        do_grade, do_report: stop after the trials, or after grading.

    Returns:
        :class:`RunResult`.

    Raises:
        FileNotFoundError: the dataset does not exist.
        jobbench.runner.AgentSpecError: an unknown agent, or one needing a model without it.
        jobbench.runner.RunConfigError: a bad selection or a run directory made differently.
        jobbench.tasks.InvalidDatasetError: the dataset has invalid tasks (and not
            ``skip_invalid``).
        jobbench.sandbox.SandboxError: ``sandbox="bwrap"`` and bubblewrap does not work.
    """
    from .agents import AgentLimits, ModelSettings
    from .runner import (
        DEFAULT_SPLIT,
        AgentSpec,
        RunConfig,
        agent_specs,
        default_dataset,
        default_run_name,
        run_trials,
    )

    splits = [split] if isinstance(split, str) else (list(split) if split else None)
    if dataset is None:
        root = default_dataset()
        splits = splits or [DEFAULT_SPLIT]
    else:
        root = Path(dataset)
    refs = [a for a in (agents or []) if isinstance(a, str)]
    given = [a for a in (agents or []) if isinstance(a, AgentSpec)]
    specs = given + (
        agent_specs(refs, models, settings or ModelSettings()) if refs or not given else []
    )
    run_dir = Path(runs_dir) / (
        run_name or default_run_name(Path(os.path.abspath(root)), specs, splits, protocol)
    )
    config = RunConfig(
        dataset=root,
        agents=specs,
        run_dir=run_dir,
        epochs=epochs,
        splits=splits,
        task_glob=tasks,
        max_trials=max_trials,
        limits=limits or AgentLimits(),
        endpoint=endpoint,
        pricing=pricing,
        sandbox=sandbox,
        skip_invalid=skip_invalid,
        strict=strict,
        protocol=protocol,
    )
    summary = run_trials(config, executor=executor)
    result = RunResult(run_dir=summary.run_dir, summary=summary)
    if do_grade:
        judge = _judge(judge)
        result.grades = grade(summary.run_dir, judge, executor=executor, strict=strict or None)
        if do_report:
            result.report = report([summary.run_dir], judge_key=_judge(judge).key)
    return result


def _judge(judge: JudgeConfig | None) -> JudgeConfig:
    from .judge import load_judge_config

    return judge or load_judge_config()


def grade(
    run_dir: str | os.PathLike[str],
    judge: JudgeConfig | None = None,
    *,
    executor: Executor | None = None,
    force: bool = False,
    progress: bool | None = False,
    strict: bool | None = None,
) -> list[GradeRecord]:
    """Grade every finished trial of a run that lacks an up-to-date grade
    (:func:`jobbench.judge.grade_run`).

    Args:
        run_dir: the run directory.
        judge: the judge (default: :func:`jobbench.judge.load_judge_config`).
        executor: where grading runs (default: this process).
        force: regrade up-to-date trials too.
        progress: show a progress bar (None: when stderr is a terminal).
        strict: load the dataset strictly (None: as the run was made).

    Returns:
        The current grade of every gradable trial, sorted by trial id.

    Raises:
        jobbench.judge.RunDirError: missing or invalid ``lock.json``/``trial.json``.
        FileNotFoundError: the run's dataset cannot be found.
    """
    from rich.console import Console

    from .judge import explain_invalid_tasks, grade_run, load_judge_config

    run_dir = Path(run_dir)
    # as jobbench grade: stderr says why trials of tasks that are invalid now are not graded
    dataset, _ = explain_invalid_tasks(run_dir, Console(stderr=True), strict=strict)
    return grade_run(
        run_dir,
        judge or load_judge_config(),
        dataset=dataset,
        progress=progress,
        force=force,
        executor=executor,
    )
