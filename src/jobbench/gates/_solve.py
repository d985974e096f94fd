"""The solve trial (the paper's third gate): is every task reachable by some attempt?

Given graded runs, a criterion is *reached* when at least one graded trial (any agent,
model, epoch or run) has the verdict ``pass`` on it. A task's reachability is reached
criteria / all criteria; the paper keeps a task only when the union of several models'
samples passes at least 90 % of its criteria, and reports 95.4 % overall (JobBench paper,
§3 quality gates). Dataset reachability here is the micro figure Σ reached / Σ criteria
over tasks (also given: the macro mean of task figures).

Agents named in ``exclude_agents`` (default: ``oracle``, whose deliverables are the
reference solution) do not count. ``judge_error`` and ``unjudged`` verdicts are never
passes; criteria that no trial decided at all are listed as *undecided* rather than
*never passed*.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, Field

from ..rundir import judge_key_note
from ..tasks import Dataset, Task, display_path, load_dataset, task_digest
from ._findings import Finding, GateResult, make_finding
from ._grades import GradedTrial, read_grades, read_lock, read_trial, resolve_judge_key

SOLVE_THRESHOLD = 0.9
"""Minimum task reachability (the paper's 90 %)."""


class CriterionRef(BaseModel):
    """A criterion by position, with its text when the task was available."""

    rubric: int
    criterion: int
    text: str = ""


class TaskReachability(BaseModel):
    """Solve-trial figures for one task.

    Attributes:
        task_id: ``split/occupation/taskN``.
        criteria: number of criteria.
        reached: criteria passed by at least one counted trial.
        reachability: reached / criteria (0..1).
        trials: counted graded trials.
        agents: ``agent@model`` labels of the counted trials.
        pass_counts: ``"r.j" -> number of counted trials passing criterion j of rubric r``.
        never_passed: criteria decided in some trial but passed in none.
        undecided: criteria with no pass/fail verdict in any counted trial.
        flagged: reachability below the threshold.
    """

    task_id: str
    criteria: int
    reached: int
    reachability: float
    trials: int
    agents: list[str]
    pass_counts: dict[str, int] = Field(default_factory=dict)
    never_passed: list[CriterionRef] = Field(default_factory=list)
    undecided: list[CriterionRef] = Field(default_factory=list)
    flagged: bool


class SolveTrial(BaseModel):
    """Solve-trial result over a set of runs.

    Attributes:
        runs: run directories read.
        judge_key: the judge whose grades were used.
        threshold: the task threshold (0.9).
        tasks: per-task figures, sorted by task id.
        reachability: Σ reached / Σ criteria over tasks (micro; the headline figure).
        mean_task_reachability: mean of task figures (macro).
        flagged: task ids under the threshold.
        unattempted: tasks in the runs' ``lock.json`` without any counted graded trial (not
            part of the figures).
        skipped: ``trial_id: reason`` for graded trials left out (stale task, excluded agent,
            criterion count mismatch).
        excluded: task id → ``agent@model`` labels of its graded trials left out because
            their agent is excluded (the oracle and the null agent by default).
        judge_key_note: set when the runs hold several judges' grades and none was asked for:
            which key was used and how to choose (:func:`jobbench.rundir.judge_key_note`).
    """

    runs: list[str]
    judge_key: str
    threshold: float
    tasks: list[TaskReachability]
    reachability: float | None
    mean_task_reachability: float | None
    flagged: list[str]
    unattempted: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)
    excluded: dict[str, list[str]] = Field(default_factory=dict)
    judge_key_note: str | None = None

    def explain_unattempted(self, task_id: str) -> str:
        """Why ``task_id`` (one of :attr:`unattempted`) has no figure, and what to pass."""
        who = self.excluded.get(task_id)
        if not who:
            return "no counted graded trial of this task"
        return (
            f"only trials of {', '.join(who)} were given, and they do not count: "
            f"{EXCLUDED_WHY}; pass graded runs of the agents under study with --runs "
            "(--include-oracle counts the oracle)"
        )


EXCLUDED_WHY = (
    "the oracle passes by construction (its deliverables are the reference) and the "
    "null agent writes nothing, so neither is an attempt at solving the task"
)
"""Why the solve trial leaves out the oracle and null agents by default."""

DEFAULT_EXCLUDED = ("oracle", "null")
"""Agents the solve trial leaves out by default (``--include-oracle`` keeps only ``null``)."""


def _key(r: int, j: int) -> str:
    return f"{r}.{j}"


def solve_trial(
    run_dirs: list[Path],
    *,
    judge_key: str | None = None,
    dataset: Dataset | None = None,
    exclude_agents: tuple[str, ...] = DEFAULT_EXCLUDED,
    threshold: float = SOLVE_THRESHOLD,
    check_digests: bool = True,
) -> SolveTrial:
    """Compute the union over trials of passed criteria per task.

    Args:
        run_dirs: graded run directories.
        judge_key: which ``grades/<judge-key>/`` to read (default: the only one present).
        dataset: the tasks (for criterion texts, criterion counts and digests); default:
            loaded from the first run's ``lock.json`` ``dataset_root`` when it exists.
        exclude_agents: agent names that do not count.
        threshold: task reachability below this is flagged.
        check_digests: skip trials whose ``trial.json`` digest differs from the task's
            current digest (graded against another version of the task).

    Returns:
        A :class:`SolveTrial`.

    Raises:
        FileNotFoundError, ValueError: no grades, ambiguous judge key, unreadable grade file.
    """
    run_dirs = [Path(r) for r in run_dirs]
    key = resolve_judge_key(run_dirs, judge_key)
    if dataset is None:
        lock = read_lock(run_dirs[0])
        root = lock.dataset_root if lock else None
        if root and Path(root).is_dir():
            try:
                dataset = load_dataset(root)
            except FileNotFoundError:
                dataset = None
    tasks: dict[str, Task] = {t.id: t for t in dataset.tasks} if dataset else {}
    digests: dict[str, str] = {}

    graded: list[GradedTrial] = []
    for r in run_dirs:
        graded += read_grades(r, key)

    skipped: list[str] = []
    excluded: dict[str, set[str]] = defaultdict(set)
    per_task: dict[str, list[GradedTrial]] = defaultdict(list)
    for g in graded:
        tid = g.grade.task_id
        if g.agent in exclude_agents:
            skipped.append(f"{g.grade.trial_id}: agent {g.agent!r} excluded")
            excluded[tid].add(f"{g.agent}@{g.model}")
            continue
        task = tasks.get(tid)
        if task is not None:
            want = [len(r.criteria) for r in task.rubrics]
            got = [len(r.criteria) for r in g.grade.rubrics]
            if want != got:
                skipped.append(
                    f"{g.grade.trial_id}: graded {got} criteria per rubric, task has {want}"
                )
                continue
            if check_digests:
                trial = read_trial(g.run_dir, g.grade.trial_id)
                if trial is not None:
                    if tid not in digests:
                        digests[tid] = task_digest(task)
                    if trial.task_digest != digests[tid]:
                        skipped.append(
                            f"{g.grade.trial_id}: graded against an older version of the task"
                        )
                        continue
        per_task[tid].append(g)

    locked: set[str] = set()
    for r in run_dirs:
        lock = read_lock(r)
        if lock is not None:
            locked |= set(lock.tasks)
    results: list[TaskReachability] = []
    for tid in sorted(per_task):
        trials = per_task[tid]
        task = tasks.get(tid)
        if task is not None:
            shape = [(r.index, [c.text for c in r.criteria]) for r in task.rubrics]
        else:
            shape = [(rg.index, [""] * len(rg.criteria)) for rg in trials[0].grade.rubrics]
        passes: dict[str, int] = {_key(r, j): 0 for r, texts in shape for j in range(len(texts))}
        decided: set[str] = set()
        for g in trials:
            for rg in g.grade.rubrics:
                for cv in rg.criteria:
                    k = _key(rg.index, cv.criterion_index)
                    if k not in passes:
                        continue
                    if cv.verdict == "pass":
                        passes[k] += 1
                        decided.add(k)
                    elif cv.verdict == "fail":
                        decided.add(k)
        total = len(passes)
        reached = sum(1 for v in passes.values() if v > 0)
        never = [
            CriterionRef(rubric=r, criterion=j, text=texts[j])
            for r, texts in shape
            for j in range(len(texts))
            if passes[_key(r, j)] == 0 and _key(r, j) in decided
        ]
        undecided = [
            CriterionRef(rubric=r, criterion=j, text=texts[j])
            for r, texts in shape
            for j in range(len(texts))
            if _key(r, j) not in decided
        ]
        frac = reached / total if total else 0.0
        results.append(
            TaskReachability(
                task_id=tid,
                criteria=total,
                reached=reached,
                reachability=frac,
                trials=len(trials),
                agents=sorted({f"{g.agent}@{g.model}" for g in trials}),
                pass_counts=passes,
                never_passed=never,
                undecided=undecided,
                flagged=frac < threshold,
            )
        )
    sum_c = sum(t.criteria for t in results)
    micro = sum(t.reached for t in results) / sum_c if sum_c else None
    macro = sum(t.reachability for t in results) / len(results) if results else None
    return SolveTrial(
        runs=[display_path(r) for r in run_dirs],
        judge_key=key,
        threshold=threshold,
        tasks=results,
        reachability=micro,
        mean_task_reachability=macro,
        flagged=[t.task_id for t in results if t.flagged],
        unattempted=sorted((locked | set(excluded)) - set(per_task)),
        skipped=skipped,
        excluded={t: sorted(v) for t, v in sorted(excluded.items())},
        judge_key_note=judge_key_note(run_dirs, key, judge_key),
    )


def solve_gate_results(
    result: SolveTrial, *, files: dict[str, str] | None = None
) -> dict[str, GateResult]:
    """Per-task ``solve`` gate results: ``S1`` (error) under the threshold, ``S2`` (info) per
    never-passed criterion. ``files`` maps task id to its RUBRICS.json display path. Tasks in
    ``result.unattempted`` get a ``skip``."""
    out: dict[str, GateResult] = {
        tid: GateResult.skipped("solve", result.explain_unattempted(tid))
        for tid in result.unattempted
    }
    for t in result.tasks:
        file = (files or {}).get(t.task_id)
        findings: list[Finding] = []
        if t.flagged:
            findings.append(
                make_finding(
                    "S1",
                    f"{t.reached}/{t.criteria} criteria reached ({t.reachability:.1%}) over "
                    f"{t.trials} trial(s) "
                    f"by {', '.join(t.agents)}; threshold {result.threshold:.0%}",
                    task_id=t.task_id,
                    file=file,
                )
            )
        for c in t.never_passed:
            findings.append(
                make_finding(
                    "S2",
                    f"never passed in {t.trials} trial(s)" + (f": {c.text}" if c.text else ""),
                    task_id=t.task_id,
                    file=file,
                    where=f"rubrics[{c.rubric}].criterion[{c.criterion}]",
                )
            )
        out[t.task_id] = GateResult.from_findings(
            "solve",
            findings,
            metrics={
                "reachability": t.reachability,
                "reached": t.reached,
                "criteria": t.criteria,
                "trials": t.trials,
                "undecided": len(t.undecided),
            },
        )
    return out
