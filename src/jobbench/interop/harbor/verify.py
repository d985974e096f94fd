"""The verifier of exported Harbor tasks: ``python -m jobbench.interop.harbor.verify``.

``tests/test.sh`` of every exported task runs it in the separate verifier environment::

    python3 -m jobbench.interop.harbor.verify --dataset /tests/grading/dataset \\
        --task main/civil_engineers/task1 --deliverables /workspace/output --logs /logs/verifier

It grades the deliverables with the chained-rubric judge (:func:`jobbench.judge.grade_trial`;
the judge comes from the environment, :func:`jobbench.judge.load_judge_config`: checks only
when no endpoint is set, the LLM judge with ``JUDGE_API_BASE``/``JUDGE_MODEL``/
``JUDGE_API_KEY``) and writes, in ``--logs``:

* ``reward.json`` — Harbor's reward file (a flat object of numbers,
  ``harbor/verifier/verifier.py``): ``reward`` = s_t in [0, 1], ``rubric_pass_rate``
  (passed rubrics / rubrics), ``criteria_passed``, ``criteria_total``, ``points``,
  ``max_points``;
* ``jobbench-grade.json`` — the full :class:`jobbench.records.GradeRecord` (every verdict).

Exit codes: 0 a reward was written; 1 the grade is undecided (``judge_error``, or
``unjudged`` because a criterion has no check and no LLM judge is configured) — no reward
is written, so Harbor records a verifier failure instead of a 0; 2 bad input (the task
cannot be loaded). Deliverables are agent-written, hostile input: they are only read
through the judge's extraction, never executed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from ._layout import DETAILS_FILE, REWARD_FILE


def rewards(record: Any) -> dict[str, float | int]:
    """Harbor's ``reward.json`` of a complete or no-deliverable :class:`GradeRecord`."""
    criteria = [c for r in record.rubrics for c in r.criteria]
    total = record.total_count if record.total_count is not None else len(record.rubrics)
    passed = (
        record.passed_count
        if record.passed_count is not None
        else sum(1 for r in record.rubrics if r.passed)
    )
    return {
        "reward": round(float(record.score), 6),
        "rubric_pass_rate": round(passed / total, 6) if total else 0.0,
        "criteria_passed": sum(1 for c in criteria if c.verdict == "pass"),
        "criteria_total": len(criteria),
        "points": float(record.passed_weight),
        "max_points": float(record.max_score),
    }


def verify(
    dataset: Path, task_id: str, deliverables: Path, logs: Path, env: dict[str, str] | None = None
) -> int:
    """Grade and write the files (see the module docstring); returns the exit code."""
    from ..._io import atomic_write_json
    from ...judge import grade_trial, load_judge_config
    from ...rundir import trial_id
    from ...tasks import load_dataset

    logs.mkdir(parents=True, exist_ok=True)
    try:
        ds = load_dataset(dataset, task_glob=task_id)
    except FileNotFoundError as exc:
        print(f"jobbench verifier: {exc}", file=sys.stderr)
        return 2
    task = next((t for t in ds.tasks if t.id == task_id), None)
    if task is None:
        problems = "; ".join(str(p) for p in ds.errors) or "not found"
        print(f"jobbench verifier: task {task_id} in {dataset}: {problems}", file=sys.stderr)
        return 2
    try:
        config = load_judge_config(env=env, cache=False)
    except (ValueError, FileNotFoundError) as exc:
        print(f"jobbench verifier: judge settings: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="jobbench-empty-") as empty:
        # no collected output at all (the agent never created the folder) grades as empty
        folder = deliverables if deliverables.is_dir() else Path(empty)
        record = grade_trial(task, folder, config, trial_id=trial_id(task.id, "harbor", None, 1))
    atomic_write_json(logs / DETAILS_FILE, record.model_dump(mode="json"))
    if record.status not in ("complete", "no_deliverable") or record.score is None:
        why = (
            "some criteria have no programmatic check and no LLM judge is configured "
            "(set JUDGE_API_BASE, JUDGE_MODEL and JUDGE_API_KEY for the verifier)"
            if record.status == "unjudged"
            else "the judge gave no valid verdict for some criteria"
        )
        print(
            f"jobbench verifier: grade {record.status}: {why}; no reward written "
            f"(details in {logs / DETAILS_FILE})",
            file=sys.stderr,
        )
        return 1
    reward = rewards(record)
    atomic_write_json(logs / REWARD_FILE, reward)
    print(json.dumps({"task": task.id, "judge": config.key, "status": record.status, **reward}))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    p = argparse.ArgumentParser(
        prog="python -m jobbench.interop.harbor.verify",
        description="Grade one exported JobBench task's deliverables inside Harbor.",
    )
    p.add_argument("--dataset", type=Path, required=True, help="the grading inputs' dataset")
    p.add_argument("--task", required=True, help="the JobBench task id")
    p.add_argument("--deliverables", type=Path, required=True, help="the collected output")
    p.add_argument("--logs", type=Path, required=True, help="Harbor's verifier log folder")
    a = p.parse_args(argv)
    return verify(a.dataset, a.task, a.deliverables, a.logs)


if __name__ == "__main__":  # pragma: no cover - exercised through test.sh
    raise SystemExit(main())
