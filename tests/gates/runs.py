"""Builders of run directories with hand-written grade records (the run-dir contract)."""

from __future__ import annotations

import json
from pathlib import Path

from jobbench._io import atomic_write_json
from jobbench.records import CriterionVerdict, GradeRecord, RubricGrade, TrialRecord, TrialStatus
from jobbench.tasks import Task, task_digest


def grade(
    task: Task, trial_id: str, verdicts: dict[tuple[int, int], str], default: str = "fail"
) -> GradeRecord:
    """A GradeRecord with the given criterion verdicts (others ``default``); z_r and s_t are
    computed here independently of the code under test (chains included)."""
    rubrics = []
    crit_ok: dict[int, bool | None] = {}
    for r in task.rubrics:
        cvs = [
            CriterionVerdict(
                rubric_index=r.index,
                criterion_index=c.index,
                verdict=verdicts.get((r.index, c.index), default),
                source="check",
                reasoning="hand-built",
            )
            for c in r.criteria
        ]
        vs = [cv.verdict for cv in cvs]
        crit_ok[r.index] = (
            None
            if any(v in ("judge_error", "unjudged") for v in vs)
            else all(v == "pass" for v in vs)
        )
        rubrics.append((r, cvs))

    def z(i: int) -> bool | None:
        own = crit_ok[i]
        reqs = [z(k) for k in task.rubrics[i].requires]
        if own is False or any(x is False for x in reqs):
            return False
        if own is None or any(x is None for x in reqs):
            return None
        return True

    grades = [
        RubricGrade(
            index=r.index,
            id=r.id,
            weight=r.weight,
            criteria=cvs,
            passed=z(r.index),
            requires=list(r.requires),
        )
        for r, cvs in rubrics
    ]
    decided = all(g.passed is not None for g in grades)
    passed_w = sum(g.weight for g in grades if g.passed)
    status = (
        "complete"
        if decided
        else (
            "judge_error"
            if any(cv.verdict == "judge_error" for g in grades for cv in g.criteria)
            else "unjudged"
        )
    )
    return GradeRecord(
        trial_id=trial_id,
        task_id=task.id,
        judge={"key": "checks"},
        rubrics=grades,
        score=passed_w / task.total_weight if decided else None,
        max_score=task.total_weight,
        passed_weight=passed_w,
        status=status,
    )


def add_trial(
    run: Path,
    task: Task,
    agent: str,
    model: str,
    epoch: int,
    verdicts: dict[tuple[int, int], str],
    *,
    default: str = "fail",
    judge_key: str = "checks",
    digest: str | None = None,
) -> GradeRecord:
    """Write trial.json and the grade of one trial into ``run``."""
    trial_id = f"{task.id}/{agent}@{model}/epoch-{epoch}"
    atomic_write_json(
        run / "trials" / trial_id / "trial.json",
        TrialRecord(
            trial_id=trial_id,
            task_id=task.id,
            task_digest=digest or task_digest(task),
            agent=agent,
            model=model,
            epoch=epoch,
            status=TrialStatus.ok,
        ),
    )
    g = grade(task, trial_id, verdicts, default)
    atomic_write_json(run / "grades" / judge_key / f"{trial_id}.json", g)
    return g


def write_lock(run: Path, dataset_root: Path, tasks: list[Task]) -> None:
    run.mkdir(parents=True, exist_ok=True)
    (run / "lock.json").write_text(
        json.dumps(
            {
                "harness_version": "0.1.0",
                "created_at": "2026-01-01T00:00:00Z",
                "dataset_root": str(dataset_root),
                "tasks": {t.id: task_digest(t) for t in tasks},
                "agents": [],
                "epochs": 1,
                "config": {},
            }
        )
    )
