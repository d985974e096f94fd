"""Oracle and null gates, and judge self-consistency.

* Oracle: the reference solution's deliverables (agent ``oracle``) must score 100 % on every
  task; every criterion it fails is an ``O1`` finding.
* Null: an agent that delivers nothing (agent ``null``) must score 0 %; every rubric that
  passes anyway is an ``N1`` finding (its criteria pass vacuously).
* Self-consistency: grade the same deliverables k times with the judge cache bypassed and
  report the verdict flip rate per criterion (``C1``).

The checks on grades (:func:`check_oracle_null`, :func:`flip_rates`) work on any graded run
directory. Producing that run (:func:`run_oracle_null`) and re-grading
(:func:`run_self_consistency`) need the runner and judge stages; they raise
:class:`GateUnavailable` naming what is missing.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..records import GradeRecord
from ..rundir import RunDir, copy_run_records
from ..tasks import RUBRICS, Dataset, display_path
from ._findings import Finding, GateResult, GateUnavailable, make_finding
from ._grades import GradedTrial, read_grades, read_lock, resolve_judge_key

ORACLE_AGENT = "oracle"
NULL_AGENT = "null"


def _verdict_line(g: GradedTrial, r: int, j: int) -> str:
    rg = g.grade.rubrics[r]
    cv = rg.criteria[j]
    why = cv.reasoning.strip()
    return f"{cv.verdict} ({cv.source})" + (f": {why}" if why else "")


def check_oracle_null(
    run_dir: Path,
    *,
    judge_key: str | None = None,
    dataset: Dataset | None = None,
    oracle_agent: str = ORACLE_AGENT,
    null_agent: str = NULL_AGENT,
) -> dict[str, dict[str, GateResult]]:
    """Check a graded run of the oracle and null agents.

    Args:
        run_dir: a run directory with grades of both agents.
        judge_key: which grades to read (default: the only key present).
        dataset: tasks expected to be covered (default: the tasks in ``lock.json``, else
            those with grades). A task without a grade gets ``O2``/``N2``.
        oracle_agent, null_agent: agent names as they appear in trial ids.

    Returns:
        ``{task_id: {"oracle": GateResult, "null": GateResult}}``. An oracle criterion
        that failed is an ``O1`` finding (gate ``fail``); ``judge_error``/``unjudged``
        verdicts are no verdict on the task: with no ``O1`` the oracle gate is ``error``
        (could not establish 100 %), naming the first such criterion.

    Raises:
        FileNotFoundError, ValueError: as :func:`jobbench.gates.resolve_judge_key` /
            :func:`read_grades`.
    """
    key = resolve_judge_key([Path(run_dir)], judge_key)
    grades = read_grades(Path(run_dir), key)
    by_task: dict[str, dict[str, list[GradedTrial]]] = defaultdict(lambda: defaultdict(list))
    for g in grades:
        by_task[g.grade.task_id][g.agent].append(g)
    if dataset is not None:
        ids = [t.id for t in dataset.tasks]
        files = {t.id: display_path(t.root / RUBRICS) for t in dataset.tasks}
    else:
        lock = read_lock(Path(run_dir))
        ids = sorted(lock.tasks) if lock is not None and lock.tasks else sorted(by_task)
        files = {}
    out: dict[str, dict[str, GateResult]] = {}
    for tid in ids:
        file = files.get(tid)
        res: dict[str, GateResult] = {}
        # oracle
        findings: list[Finding] = []
        oracle = by_task.get(tid, {}).get(oracle_agent, [])
        if not oracle:
            findings.append(
                make_finding(
                    "O2",
                    f"no grade of agent {oracle_agent!r} in {display_path(run_dir)}",
                    task_id=tid,
                    file=file,
                )
            )
        scores = []
        undecided: list[str] = []  # judge_error / unjudged: no verdict, so no O1
        for g in oracle:
            scores.append(g.grade.score)
            for rg in g.grade.rubrics:
                for cv in rg.criteria:
                    if cv.verdict in ("judge_error", "unjudged"):
                        undecided.append(
                            f"{g.grade.trial_id} rubrics[{rg.index}].criterion"
                            f"[{cv.criterion_index}]: {cv.verdict}"
                        )
                    elif cv.verdict != "pass":
                        findings.append(
                            make_finding(
                                "O1",
                                f"{g.grade.trial_id}: "
                                f"{_verdict_line(g, rg.index, cv.criterion_index)}",
                                task_id=tid,
                                file=file,
                                where=f"rubrics[{rg.index}].criterion[{cv.criterion_index}]",
                            )
                        )
            if (
                g.grade.score is not None
                and not undecided
                and g.grade.score < 1.0
                and not any(
                    f.rule == "O1" and f.message.startswith(g.grade.trial_id) for f in findings
                )
            ):
                # every criterion passed but a requires chain or weight rule still failed
                findings.append(
                    make_finding(
                        "O1",
                        f"{g.grade.trial_id}: score {g.grade.score:.1%} < 100 %",
                        task_id=tid,
                        file=file,
                    )
                )
        res["oracle"] = GateResult.from_findings("oracle", findings, metrics={"scores": scores})
        if undecided and res["oracle"].status not in ("fail", "error"):
            res["oracle"] = GateResult.errored(
                "oracle",
                f"{len(undecided)} oracle criterion verdict(s) under judge key {key!r} are "
                f"judge_error/unjudged, so 100 % is not established (first: {undecided[0]}); "
                "regrade the run (`jobbench grade RUN`) or pick another --judge-key",
                findings,
            ).model_copy(update={"metrics": {"scores": scores}})
        # null
        findings = []
        null = by_task.get(tid, {}).get(null_agent, [])
        if not null:
            findings.append(
                make_finding(
                    "N2",
                    f"no grade of agent {null_agent!r} in {display_path(run_dir)}",
                    task_id=tid,
                    file=file,
                )
            )
        scores = []
        for g in null:
            scores.append(g.grade.score)
            passed = [rg for rg in g.grade.rubrics if rg.passed]
            for rg in passed:
                findings.append(
                    make_finding(
                        "N1",
                        f"{g.grade.trial_id}: rubric {rg.index} (weight {rg.weight:g}) passes with "
                        "no deliverables",
                        task_id=tid,
                        file=file,
                        where=f"rubrics[{rg.index}]",
                        severity="error" if rg.weight > 0 else "warning",
                    )
                )
            if not passed and g.grade.status not in ("complete", "no_deliverable"):
                findings.append(
                    make_finding(
                        "N2",
                        f"{g.grade.trial_id}: grade is {g.grade.status}, so 0 % is not established",
                        task_id=tid,
                        file=file,
                    )
                )
        res["null"] = GateResult.from_findings("null", findings, metrics={"scores": scores})
        out[tid] = res
    return out


RunAgents = Callable[..., Any]
"""``run_agents(dataset_path, run_dir, agents, *, task_glob=None)``: run the named agents on
the tasks into ``run_dir`` (the runner contract this module expects; see docs/gates.md)."""


def resolve_runner() -> RunAgents:
    """The runner entry point used by :func:`run_oracle_null`: runs the named agents with
    :func:`jobbench.runner.run_trials` (one epoch, default limits and sandbox)."""
    from ..runner import AgentSpec, RunConfig, run_trials

    def run_agents(
        dataset: Path, run_dir: Path, agents: list[str], *, task_glob: str | None = None
    ) -> None:
        run_trials(
            RunConfig(
                dataset=Path(dataset),
                agents=[AgentSpec(agent=a) for a in agents],
                run_dir=Path(run_dir),
                task_glob=task_glob,
            )
        )

    return run_agents


def resolve_grade_run() -> Callable[..., list[GradeRecord]]:
    """``jobbench.judge.grade_run``."""
    from ..judge import grade_run

    return grade_run


def run_oracle_null(
    dataset_path: Path,
    run_dir: Path,
    *,
    task_glob: str | None = None,
    judge_config: Any = None,
    run_agents: RunAgents | None = None,
    grade_run: Callable[..., list[GradeRecord]] | None = None,
) -> dict[str, dict[str, GateResult]]:
    """Run the oracle and null agents on the tasks, grade them, and check the result.

    Args:
        dataset_path: the dataset (or a part of it).
        run_dir: where the run goes (outside the dataset).
        task_glob: only these task ids.
        judge_config: a ``jobbench.judge.JudgeConfig`` (default: ``JudgeConfig()``, checks
            only).
        run_agents, grade_run: stage entry points (default: resolved from
            :mod:`jobbench.runner` and :mod:`jobbench.judge`).

    Raises:
        GateUnavailable: the runner or the judge entry point is missing.
    """
    run_agents = run_agents or resolve_runner()
    grade_run = grade_run or resolve_grade_run()
    if judge_config is None:
        from ..judge import JudgeConfig

        judge_config = JudgeConfig()
    run_agents(Path(dataset_path), Path(run_dir), [ORACLE_AGENT, NULL_AGENT], task_glob=task_glob)
    grade_run(Path(run_dir), judge_config)
    from ..tasks import load_dataset

    ds = load_dataset(dataset_path, task_glob=task_glob)
    return check_oracle_null(Path(run_dir), dataset=ds)


# --- self-consistency ---------------------------------------------------------------------


class CriterionFlips(BaseModel):
    """Flip statistics of one criterion over trials.

    Attributes:
        task_id, rubric, criterion: which criterion.
        trials: trials with at least two decided verdicts over the repeats.
        flipped: trials whose decided verdicts were not all equal.
        flip_rate: flipped / trials (0..1), or None when ``trials`` is 0.
    """

    task_id: str
    rubric: int
    criterion: int
    trials: int
    flipped: int
    flip_rate: float | None


class Consistency(BaseModel):
    """Self-consistency of a judge.

    Attributes:
        repeats: number of gradings compared (k).
        criteria: per-criterion statistics, sorted by task, rubric, criterion.
        flip_rate: Σ flipped / Σ trials over all criteria, or None if nothing was decided twice.
    """

    repeats: int
    criteria: list[CriterionFlips] = Field(default_factory=list)
    flip_rate: float | None = None


def flip_rates(repeats: list[list[GradeRecord]]) -> Consistency:
    """Verdict flip rates from k gradings of the same trials.

    Args:
        repeats: k lists of grade records (one list per grading pass). Records are matched
            by ``trial_id``; ``judge_error``/``unjudged`` verdicts are ignored (a flip is
            between ``pass`` and ``fail`` only).

    Returns:
        A :class:`Consistency`.
    """
    seen: dict[tuple[str, str, int, int], list[str]] = defaultdict(list)
    for grades in repeats:
        for g in grades:
            for rg in g.rubrics:
                for cv in rg.criteria:
                    if cv.verdict in ("pass", "fail"):
                        seen[(g.task_id, g.trial_id, rg.index, cv.criterion_index)].append(
                            cv.verdict
                        )
    per: dict[tuple[str, int, int], list[int]] = defaultdict(lambda: [0, 0])
    for (task_id, _trial, r, j), verdicts in seen.items():
        if len(verdicts) < 2:
            continue
        s = per[(task_id, r, j)]
        s[0] += 1
        s[1] += int(len(set(verdicts)) > 1)
    crit = [
        CriterionFlips(
            task_id=t, rubric=r, criterion=j, trials=n, flipped=f, flip_rate=f / n if n else None
        )
        for (t, r, j), (n, f) in sorted(per.items())
    ]
    n_all = sum(c.trials for c in crit)
    return Consistency(
        repeats=len(repeats),
        criteria=crit,
        flip_rate=sum(c.flipped for c in crit) / n_all if n_all else None,
    )


def consistency_gate_results(
    result: Consistency, *, files: dict[str, str] | None = None
) -> dict[str, GateResult]:
    """Per-task ``consistency`` results with a ``C1`` warning per criterion that flipped."""
    by_task: dict[str, list[CriterionFlips]] = defaultdict(list)
    for c in result.criteria:
        by_task[c.task_id].append(c)
    out: dict[str, GateResult] = {}
    for tid, crit in by_task.items():
        findings = [
            make_finding(
                "C1",
                f"verdict flipped in {c.flipped}/{c.trials} trial(s) over "
                f"{result.repeats} gradings",
                task_id=tid,
                file=(files or {}).get(tid),
                where=f"rubrics[{c.rubric}].criterion[{c.criterion}]",
            )
            for c in crit
            if c.flipped
        ]
        n = sum(c.trials for c in crit)
        out[tid] = GateResult.from_findings(
            "consistency",
            findings,
            metrics={"flip_rate": sum(c.flipped for c in crit) / n if n else None},
        )
    return out


_CACHE_FIELDS = {"cache": False, "use_cache": False, "no_cache": True}


def _without_cache(config: Any) -> Any:
    """A copy of a JudgeConfig with its cache off.

    Raises:
        GateUnavailable: the config has none of the fields this module knows.
    """
    fields = getattr(type(config), "model_fields", {})
    update = {k: v for k, v in _CACHE_FIELDS.items() if k in fields}
    if not update:
        raise GateUnavailable(
            f"cannot bypass the judge cache: {type(config).__name__} has none of the fields "
            f"{', '.join(_CACHE_FIELDS)}"
        )
    return config.model_copy(update=update)


def run_self_consistency(
    run_dir: Path,
    config: Any,
    k: int,
    workdir: Path,
    *,
    grade_run: Callable[..., list[GradeRecord]] | None = None,
) -> Consistency:
    """Grade the finished trials of ``run_dir`` k times, cache bypassed, and compare.

    Each repeat grades a fresh copy of ``lock.json`` and ``trials/`` under
    ``workdir/repeat-<i>`` (the original run's grades are never touched).

    Args:
        run_dir: a run with finished trials.
        config: a ``jobbench.judge.JudgeConfig`` (its cache is switched off here).
        k: number of gradings (>= 2).
        workdir: scratch directory for the copies.
        grade_run: the judge entry point (default: :func:`resolve_grade_run`).

    Raises:
        ValueError: ``k`` < 2.
        GateUnavailable: no grade_run, or the cache cannot be switched off.
    """
    if k < 2:
        raise ValueError(f"self-consistency needs k >= 2 gradings, got {k}")
    grade_run = grade_run or resolve_grade_run()
    config = _without_cache(config)
    repeats: list[list[GradeRecord]] = []
    for i in range(1, k + 1):
        dest = Path(workdir) / f"repeat-{i}"
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        copy_run_records(RunDir(run_dir), RunDir(dest))
        repeats.append(list(grade_run(dest, config)))
    return flip_rates(repeats)
