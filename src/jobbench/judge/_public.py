"""The public JobBench evaluation layout: grading ``model_output/<label>/`` folders and
writing ``eval_result/eval_<label>/<judge>_judge.json`` details files.

Format source: Job-Bench/job-bench-eval, ``eval/judge.py`` (``build_details_report``:
``evaluated_model``, ``judge_model``, ``timestamp``, ``total_score``, ``max_score``,
``pass_rate`` as an integer percent string such as ``"66%"``, ``passed_count``,
``total_count``, ``rubrics`` = ``[{"index", "rubric", "weight", "result": {"passed",
"score", "criteria_count", "criteria_passed", "criteria_results": [{"index", "criterion",
"passed", "reasoning", "evidence"}], "overall_reasoning"}}]``) and ``eval/run_judge.sh``
(outputs in ``<task>/model_output/<label>/``, details in
``<task>/eval_result/eval_<label>/<judge>_judge.json`` where ``<judge>`` is the judge model
name after its last ``/`` with ``.`` replaced by ``-``, followed by ``_<JUDGE_RUN_LABEL>``
when a run label is set).

Differences, on purpose: a rubric whose verdict is undecided (judge_error/unjudged) is left
out of ``rubrics`` (the public judge's own convention for a file still being filled:
``len(rubrics) < total_count`` means incomplete), while ``max_score`` is the weight of all
rubrics so that ``total_score / max_score`` never overstates; and our extra key
``jobbench`` carries status, normalised score and the judge key.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from .._io import atomic_write_json
from ..tasks import InvalidDatasetError, find_invalid, invalid_message
from ..records import GradeRecord
from ..rundir import folder_manifest, read_record_file, trial_id
from ..tasks import Problem, Task, display_path, load_dataset, task_digest
from ._config import JudgeConfig
from ._grade import Grader, TrialInput, inputs_digest
from ._run import UP_TO_DATE

OUTPUT_DIR = "model_output"
RESULTS_DIR = "eval_result"


class OverwriteRefused(RuntimeError):
    """A details file exists that JobBench did not write (we never overwrite it)."""


def public_judge_name(config: JudgeConfig, run_label: str | None = None) -> str:
    """The ``<judge>`` part of the public details file name (``grok-4-3_jobbench-rubric``).

    The default run label is ``jobbench-<mode>`` (``jobbench-checks`` without an LLM), so our
    files never replace the public judge's own ``<judge>_judge.json``.
    """
    base = (config.model or "checks").rsplit("/", 1)[-1].replace(".", "-") if config.uses_llm else "checks"
    label = run_label if run_label is not None else ("jobbench-" + (config.mode if config.uses_llm else "checks"))
    return f"{base}_{label}" if label else base


def details_from_record(record: GradeRecord, task: Task, evaluated_model: str, judge_model: str) -> dict[str, Any]:
    """The public details JSON for one graded output (see module docstring)."""
    rubrics = []
    for g, r in zip(record.rubrics, task.rubrics):
        if g.passed is None:
            continue
        crit = [{"index": c.criterion_index, "criterion": r.criteria[c.criterion_index].text,
                 "passed": c.verdict == "pass", "reasoning": c.reasoning, "evidence": c.evidence}
                for c in g.criteria]
        reasoning = g.overall_reasoning or (
            "all criteria passed" if g.passed else f"chain broken at {g.chain_break}")
        rubrics.append({
            "index": g.index, "rubric": r.question, "weight": g.weight,
            "result": {"passed": bool(g.passed), "score": g.weight if g.passed else 0,
                       "criteria_count": len(crit), "criteria_passed": sum(1 for c in crit if c["passed"]),
                       "criteria_results": crit, "overall_reasoning": reasoning},
        })
    total_count = len(record.rubrics)
    passed_count = sum(1 for x in rubrics if x["result"]["passed"])
    return {
        "evaluated_model": evaluated_model,
        "judge_model": judge_model,
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "total_score": sum(x["result"]["score"] for x in rubrics),
        "max_score": record.max_score,
        "pass_rate": f"{int(passed_count / total_count * 100) if total_count else 0}%",
        "passed_count": passed_count,
        "total_count": total_count,
        "rubrics": rubrics,
        "jobbench": {"status": record.status, "score": record.score, "judge": record.judge.get("key"),
                     "trial_id": record.trial_id, "usage": record.usage.model_dump()},
    }


def write_public_details(record: GradeRecord, task: Task, path: Path, evaluated_model: str, judge_model: str) -> None:
    """Write the public details file atomically.

    Raises:
        OverwriteRefused: ``path`` exists and was not written by JobBench.
    """
    path = Path(path)
    if path.exists():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            old = None
        if not (isinstance(old, dict) and "jobbench" in old):
            raise OverwriteRefused(f"{display_path(path)}: exists and was not written by JobBench; "
                                   "choose another --run-label")
    atomic_write_json(path, details_from_record(record, task, evaluated_model, judge_model))


def grade_public_dataset(
    target: Path,
    config: JudgeConfig,
    *,
    labels: list[str] | None = None,
    run_label: str | None = None,
    progress: bool = False,
    force: bool = False,
    grader: Grader | None = None,
    skip_invalid: bool = False,
    fresh: set[str] | None = None,
    strict: bool = False,
    on_dataset_warnings: Callable[[list[Problem]], None] | None = None,
) -> list[GradeRecord]:
    """Grade outputs left by the public runners in a dataset copy.

    For every task with ``model_output/<label>/`` folders, grades each label's files and
    writes, in ``<task>/eval_result/eval_<label>/``, the public details file
    ``<judge>_judge.json`` and our full record ``<judge>_judge.jobbench.json`` (used for
    resume). Up-to-date complete grades are kept.

    Args:
        target: a dataset root, split, occupation or task directory in the public layout.
        config: judge configuration.
        labels: only these output labels (default: all).
        run_label: suffix of the judge file name (default ``jobbench-<mode>``).
        skip_invalid: grade the valid tasks of a dataset with validation errors (the
            invalid tasks' outputs are not graded); otherwise such a dataset is refused.
        fresh: when given, the trial ids graded by this call (not kept up to date) are
            added to it, so a caller can tell what this call spent from what the kept
            records once cost.
        strict: load the dataset strictly (:func:`jobbench.tasks.load_dataset`).
        on_dataset_warnings: called once, before grading, with what loading the dataset
            skipped or ignored, when there is anything.

    Returns:
        One record per (task, label), fresh or up to date.

    Raises:
        FileNotFoundError: no tasks under ``target``.
        OverwriteRefused: a details file we would write exists and is not ours.
        jobbench.tasks.InvalidDatasetError: the dataset has validation errors and
            ``skip_invalid`` is False (the message lists every problem).
    """
    ds = load_dataset(target, strict=strict)
    invalid = find_invalid(ds)
    if invalid and not skip_invalid:
        raise InvalidDatasetError(invalid_message(invalid, display_path(target), verb="grade",
                                                  consequence="the invalid tasks' outputs are not graded"), invalid)
    if ds.warnings and on_dataset_warnings is not None:
        on_dataset_warnings(ds.warnings)
    name = public_judge_name(config, run_label)
    judge_model = config.model if config.uses_llm else "checks"
    inputs: list[TrialInput] = []
    current: list[GradeRecord] = []
    for task in ds.tasks:
        out_base = task.root / OUTPUT_DIR
        if not out_base.is_dir():
            continue
        digest = task_digest(task)
        for d in sorted(p for p in out_base.iterdir() if p.is_dir() and not p.is_symlink()):
            label = d.name
            if labels and label not in labels:
                continue
            res_dir = task.root / RESULTS_DIR / f"eval_{label}"
            details = res_dir / f"{name}_judge.json"
            record_path = res_dir / f"{name}_judge.jobbench.json"
            if details.exists():
                try:
                    ours = "jobbench" in json.loads(details.read_text(encoding="utf-8"))
                except (OSError, json.JSONDecodeError, TypeError):
                    ours = False
                if not ours:
                    raise OverwriteRefused(f"{display_path(details)}: exists and was not written by JobBench; "
                                           "choose another --run-label")
            manifest = folder_manifest(d)
            dig = inputs_digest(digest, manifest, config)
            prior = read_record_file(record_path, GradeRecord).record  # None: absent or unreadable
            prior_dig = prior.inputs_digest if prior else None
            if prior is not None and not force and prior_dig == dig and prior.status in UP_TO_DATE:
                current.append(prior)
                continue

            def written(rec: GradeRecord, task: Task = task, details: Path = details, label: str = label) -> None:
                write_public_details(rec, task, details, label, judge_model or "checks")

            inputs.append(TrialInput(
                trial_id=trial_id(task.id, label, None, 1), task=task, deliverables_dir=d, epoch=1,
                out_path=record_path, prior=prior if prior_dig == dig else None,
                extra={"inputs_digest": dig, "agent": label, "model": "-", "task_digest": digest,
                       "public_label": label},
                on_written=written,
            ))
    own = grader is None
    if grader is None:
        grader = Grader(config, progress=progress)
    try:
        graded = grader.grade(inputs)
    finally:
        if own:
            grader.close()
    if fresh is not None:
        fresh.update(r.trial_id for r in graded)
    current.extend(graded)
    return sorted(current, key=lambda r: r.trial_id)
