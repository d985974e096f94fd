"""The public JobBench evaluation layout: the one writer of ``eval_result`` reports, used by
``jobbench grade DATASET`` (grading ``model_output/<label>/`` folders, below) and by
``jobbench export official`` (:mod:`jobbench.runner._export`).

Format and rules as the public tools read them (Job-Bench/job-bench-eval, ``eval/judge.py``
``build_details_report`` and ``eval/run_judge.sh``; facts, not code):

* a report is ``<task>/eval_result/eval_<label>/<judge-name>[_<RUN_LABEL>]_judge.json``;
  ``<judge-name>`` is the judge model id after its last ``/`` with ``.`` → ``-``
  (``x-ai/grok-4.3`` → ``grok-4-3``); the run label is appended as given;
* it holds ``evaluated_model``, ``judge_model``, ``timestamp``, ``total_score``,
  ``max_score``, ``pass_rate`` (an integer percent string such as ``"66%"``),
  ``passed_count``, ``total_count`` and ``rubrics`` = ``[{"index", "rubric", "weight",
  "result": {"passed", "score", "criteria_count", "criteria_passed", "criteria_results":
  [{"index", "criterion", "passed", "reasoning", "evidence"}], "overall_reasoning"}}]``;
* ``run_judge.sh`` treats a report as complete, and skips that output on a rerun, when its
  ``rubrics`` list has as many entries as the task's ``RUBRICS.json`` (``rubrics``, else
  ``evaluation_rubrics``); it writes no report for an output folder without files.

Our rules on top:

* **File names.** A grade made the public way (``--mode official``: the judge's own rubric
  verdict decides, no ``--strict-evidence``, no ``--label``) or by checks alone is written
  without a run label (``grok-4-3_judge.json``, ``checks_judge.json``), so the public tools
  find and skip it as they do their own; any other judge configuration gets the label
  ``jobbench-<rest of its judge key>`` (``grok-4-3_jobbench-rubric-auto_judge.json``), so
  every judge key has its own file and none passes for a public-rule grade.
* **Undecided rubrics** (``judge_error`` or ``unjudged``) are left out of ``rubrics``, so
  the file is incomplete by the public rule and the public tools judge the task again;
  ``max_score`` and ``total_count`` still cover every rubric (``total_score / max_score``
  never overstates), and ``jobbench.partial`` with ``jobbench.undecided_rubrics`` says so.
* **Ownership.** Every file we write carries a ``jobbench`` object (the public tools ignore
  unknown keys) with the judge key. A file without it, or one written for another judge
  key, is never replaced: :class:`OverwriteRefused` names it; with ``force`` it is first
  moved to ``<task>/.jobbench-backups/<UTC time>/<its path in the task>``. A symbolic link
  where a report or its folder should be is refused, never followed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._io import atomic_write_json
from ..records import GradeRecord
from ..rundir import folder_manifest, read_record_file, trial_id
from ..tasks import (
    InvalidDatasetError,
    Problem,
    Task,
    display_path,
    find_invalid,
    invalid_message,
    load_dataset,
    task_digest,
)
from ._config import JudgeConfig, safe_name
from ._grade import Grader, TrialInput, inputs_digest
from ._run import UP_TO_DATE

OUTPUT_DIR = "model_output"
RESULTS_DIR = "eval_result"
TRAJ_DIR = "model_traj"
BACKUP_DIR = ".jobbench-backups"
"""Where replaced files go, inside the task folder (``<task>/.jobbench-backups/<UTC time>/``)."""
MARK = "jobbench"
"""The key that marks a file as written by JobBench."""


class OverwriteRefused(RuntimeError):
    """A file JobBench would write exists and was not written by it (or was written for
    another judge key); it is never replaced without ``--force``.

    Attributes:
        paths: every refused path.
    """

    def __init__(self, paths: list[str], hint: str = "") -> None:
        self.paths = list(paths)
        shown = "; ".join(self.paths[:10]) + (
            f"; … {len(self.paths) - 10} more" if len(self.paths) > 10 else ""
        )
        super().__init__(
            f"refusing to replace {len(self.paths)} file(s) JobBench did not write for this judge: "
            f"{shown}{'; ' + hint if hint else ''}"
        )


def public_judge_name(model: str | None) -> str:
    """The ``<judge-name>`` of a report: ``model`` after its last ``/`` with ``.`` → ``-``
    (made safe for a file name); ``checks`` without a model."""
    if not model:
        return "checks"
    return safe_name(str(model).rsplit("/", 1)[-1].replace(".", "-"))


def public_run_label(judge: dict[str, Any]) -> str | None:
    """The run label of a report for a grade's ``judge`` identity (``GradeRecord.judge``):
    None for the public rule (official mode, or checks only, with nothing else in the key),
    else ``jobbench-<the key after its model part, '.' → '-'>`` (see the module docstring)."""
    key = str(judge.get("key") or "")
    model = judge.get("model")
    if not model:
        return None if key in ("", "checks") else "jobbench-" + key.replace(".", "-")
    prefix = safe_name(str(model)) + "."
    rest = key[len(prefix) :] if key.startswith(prefix) else key
    if rest == "official":
        return None
    return "jobbench-" + (rest.replace(".", "-") or "llm")


def public_report_name(
    judge: dict[str, Any], run_label: str | None = None, *, label_given: bool = False
) -> str:
    """``<judge-name>[_<run label>]_judge.json`` for ``judge`` (``GradeRecord.judge``).

    Args:
        judge: the judge identity (``key``, ``model``, …).
        run_label: an explicit run label (``--run-label``); ``""`` for none.
        label_given: use ``run_label`` as given instead of :func:`public_run_label`.
    """
    label = run_label if label_given else public_run_label(judge)
    name = public_judge_name(judge.get("model"))
    return f"{name}_{label}_judge.json" if label else f"{name}_judge.json"


def _pass_rate(passed: int, total: int) -> str:
    return f"{int(passed / total * 100) if total else 0}%"


def public_report(
    record: GradeRecord,
    rubric_texts: list[tuple[str, list[str]]],
    evaluated_model: str,
    judge_model: str,
) -> dict[str, Any]:
    """A grade in the public report shape (see the module docstring for the rules).

    Args:
        record: the grade.
        rubric_texts: per rubric of the task, ``(question, [criterion texts])`` (missing
            entries give empty texts).
        evaluated_model: the output label (``model_output/<label>``).
        judge_model: the judge model id as the report should name it.

    Returns:
        The JSON-able report.
    """
    rubrics: list[dict[str, Any]] = []
    undecided = []
    for g in record.rubrics:
        text, criteria = rubric_texts[g.index] if g.index < len(rubric_texts) else ("", [])
        if g.passed is None:
            undecided.append(g.index)
            continue
        crit = [
            {
                "index": c.criterion_index,
                "criterion": criteria[c.criterion_index]
                if c.criterion_index < len(criteria)
                else "",
                "passed": c.verdict == "pass",
                "reasoning": c.reasoning,
                "evidence": c.evidence,
            }
            for c in g.criteria
        ]
        reasoning = g.overall_reasoning or (
            "all criteria passed" if g.passed else f"chain broken at {g.chain_break}"
        )
        rubrics.append(
            {
                "index": g.index,
                "rubric": text,
                "weight": g.weight,
                "result": {
                    "passed": bool(g.passed),
                    "score": g.weight if g.passed else 0,
                    "criteria_count": len(crit),
                    "criteria_passed": sum(1 for c in crit if c["passed"]),
                    "criteria_results": crit,
                    "overall_reasoning": reasoning,
                },
            }
        )
    total_count = len(record.rubrics)
    passed_count = sum(1 for x in rubrics if x["result"]["passed"])
    return {
        "evaluated_model": evaluated_model,
        "judge_model": judge_model,
        "timestamp": record.created_at or datetime.now(UTC).isoformat(timespec="seconds"),
        "total_score": sum(x["result"]["score"] for x in rubrics),
        "max_score": record.max_score,
        "pass_rate": _pass_rate(passed_count, total_count),
        "passed_count": passed_count,
        "total_count": total_count,
        "rubrics": rubrics,
        MARK: {
            "judge_key": record.judge.get("key"),
            "status": record.status,
            "score": record.score,
            "trial_id": record.trial_id,
            "partial": bool(undecided),
            "undecided_rubrics": undecided,
            "note": (
                "undecided rubrics are left out, so the public tools judge this output again"
                if undecided
                else None
            ),
            "usage": record.usage.model_dump(),
        },
    }


def details_from_record(
    record: GradeRecord, task: Task, evaluated_model: str, judge_model: str
) -> dict[str, Any]:
    """:func:`public_report` with the rubric texts of ``task``."""
    return public_report(record, rubric_texts(task), evaluated_model, judge_model)


def rubric_texts(task: Task) -> list[tuple[str, list[str]]]:
    """Per rubric of ``task``: ``(question, [criterion texts])``."""
    return [(r.question, [c.text for c in r.criteria]) for r in task.rubrics]


def owner_key(path: Path) -> tuple[bool, str | None]:
    """``(written by JobBench, its judge key)`` of an existing report at ``path``.

    Also recognised: the marks of earlier JobBench versions (``jobbench.judge`` and
    ``judge_implementation.jobbench_judge``)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False, None
    if not isinstance(data, dict):
        return False, None
    mark = data.get(MARK)
    if isinstance(mark, dict):
        key = mark.get("judge_key", mark.get("judge"))
        return True, key if isinstance(key, str) else None
    impl = data.get("judge_implementation")
    if isinstance(impl, dict) and isinstance(impl.get("jobbench_judge"), dict):
        key = impl["jobbench_judge"].get("key")
        return True, key if isinstance(key, str) else None
    return False, None


def _utc_stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def backup(task_dir: Path, path: Path, stamp: str | None = None) -> Path:
    """Move ``path`` (a file or folder inside ``task_dir``) to
    ``<task_dir>/.jobbench-backups/<stamp>/<its path in the task>``; returns the new path.

    Raises:
        OSError: it cannot be moved.
    """
    rel = Path(os.path.relpath(path, task_dir))
    target = task_dir / BACKUP_DIR / (stamp or _utc_stamp()) / rel
    n = 1
    while target.exists() or target.is_symlink():
        target = target.with_name(f"{rel.name}.{n}")
        n += 1
    target.parent.mkdir(parents=True, exist_ok=True)
    os.rename(path, target)
    return target


@dataclass
class ReportWriter:
    """Writes public reports under the ownership rule (module docstring).

    Attributes:
        force: replace refused files after moving them to a backup.
        backups: every backup made (new paths).
        written: every report written.
    """

    force: bool = False
    backups: list[Path] = field(default_factory=list)
    written: list[Path] = field(default_factory=list)
    _stamp: str = field(default_factory=_utc_stamp)

    def problem(self, path: Path, judge_key: str | None) -> str | None:
        """Why writing a report for ``judge_key`` at ``path`` would replace a file that is
        not ours, or None when it may be written."""
        if path.parent.is_symlink() or path.parent.parent.is_symlink():
            return f"{display_path(path.parent)}: a symbolic link"
        if path.is_symlink():
            return f"{display_path(path)}: a symbolic link"
        if not path.exists():
            return None
        ours, key = owner_key(path)
        if not ours:
            return f"{display_path(path)} (not written by JobBench)"
        if judge_key is not None and key is not None and key != judge_key:
            return (
                f"{display_path(path)} (written by JobBench for judge key {key}, not {judge_key})"
            )
        return None

    def write(self, task_dir: Path, path: Path, payload: dict[str, Any]) -> None:
        """Write ``payload`` at ``path`` atomically (a refused file is backed up first when
        ``force``).

        Raises:
            OverwriteRefused: ``path`` is refused and ``force`` is off.
        """
        why = self.problem(path, (payload.get(MARK) or {}).get("judge_key"))
        if why is not None:
            if not self.force or path.parent.is_symlink() or path.parent.parent.is_symlink():
                raise OverwriteRefused([why], "rerun with --force to replace it (a backup is kept)")
            self.backups.append(backup(task_dir, path, self._stamp))
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, payload)
        self.written.append(path)


def write_public_details(
    record: GradeRecord,
    task: Task,
    path: Path,
    evaluated_model: str,
    judge_model: str,
    *,
    force: bool = False,
) -> None:
    """Write the public report of ``record`` at ``path`` (``<task>/eval_result/eval_<label>/…``).

    Raises:
        OverwriteRefused: ``path`` is not ours (see :class:`ReportWriter`) and ``force`` is off.
    """
    ReportWriter(force=force).write(
        task.root, Path(path), details_from_record(record, task, evaluated_model, judge_model)
    )


def has_files(folder: Path) -> bool:
    """``folder`` holds at least one regular file, at any depth, symbolic links not
    followed (the public judge writes no report otherwise)."""
    for _, _, files in os.walk(folder, followlinks=False):
        for _name in files:
            return True
    return False


_UNSAFE_LABEL = re.compile(r"[^A-Za-z0-9._-]")


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
    empty: list[str] | None = None,
    backups: list[Path] | None = None,
    strict: bool = False,
    on_dataset_warnings: Callable[[list[Problem]], None] | None = None,
) -> list[GradeRecord]:
    """Grade outputs left by the public runners in a dataset copy.

    For every task with ``model_output/<label>/`` folders holding files, grades each
    label's files and writes, in ``<task>/eval_result/eval_<label>/``, the public report
    (:func:`public_report_name`) and our full record ``<same stem>.jobbench.json`` beside it
    (used for resume). Up-to-date complete grades are kept.

    Args:
        target: a dataset root, split, occupation or task directory in the public layout.
        config: judge configuration.
        labels: only these output labels (default: all).
        run_label: the report's run label instead of the default (module docstring);
            ``""`` for none.
        force: regrade up-to-date outputs too, and replace reports JobBench did not write
            after moving them to ``<task>/.jobbench-backups/``.
        skip_invalid: grade the valid tasks of a dataset with validation errors (the
            invalid tasks' outputs are not graded); otherwise such a dataset is refused.
        fresh: when given, the trial ids graded by this call (not kept up to date) are
            added to it, so a caller can tell what this call spent from what the kept
            records once cost.
        empty: when given, ``<task id>: <label>`` of every output folder without files is
            added to it (no report is written for those, as the public judge does).
        backups: when given, every backup made is added to it.
        strict: load the dataset strictly (:func:`jobbench.tasks.load_dataset`).
        on_dataset_warnings: called once, before grading, with what loading the dataset
            skipped or ignored, when there is anything.

    Returns:
        One record per (task, label) graded or up to date.

    Raises:
        FileNotFoundError: no tasks under ``target``.
        ValueError: ``run_label`` holds characters outside ``[A-Za-z0-9._-]``.
        OverwriteRefused: a report we would write exists and is not ours (every such file
            is listed before anything is graded).
        jobbench.tasks.InvalidDatasetError: the dataset has validation errors and
            ``skip_invalid`` is False (the message lists every problem).
    """
    if run_label and _UNSAFE_LABEL.search(run_label):
        raise ValueError(
            f"--run-label {run_label!r}: only letters, digits, '.', '_' and '-' are allowed"
        )
    ds = load_dataset(target, strict=strict)
    invalid = find_invalid(ds)
    if invalid and not skip_invalid:
        raise InvalidDatasetError(
            invalid_message(
                invalid,
                display_path(target),
                verb="grade",
                consequence="the invalid tasks' outputs are not graded",
            ),
            invalid,
        )
    if ds.warnings and on_dataset_warnings is not None:
        on_dataset_warnings(ds.warnings)
    identity = config.identity()
    name = public_report_name(identity, run_label, label_given=run_label is not None)
    judge_model = config.model if config.uses_llm else "checks"
    writer = ReportWriter(force=force)
    inputs: list[TrialInput] = []
    current: list[GradeRecord] = []
    refused: list[str] = []
    for task in ds.tasks:
        out_base = task.root / OUTPUT_DIR
        if not out_base.is_dir():
            continue
        digest = task_digest(task)
        for d in sorted(p for p in out_base.iterdir() if p.is_dir() and not p.is_symlink()):
            label = d.name
            if labels and label not in labels:
                continue
            if not has_files(d):
                if empty is not None:
                    empty.append(f"{task.id}: {label}")
                continue
            res_dir = task.root / RESULTS_DIR / f"eval_{label}"
            details = res_dir / name
            record_path = res_dir / (name[: -len(".json")] + ".jobbench.json")
            why = writer.problem(details, config.key)
            if why is not None:
                refused.append(why)
                if not force:
                    continue
            manifest = folder_manifest(d)
            dig = inputs_digest(digest, manifest, config)
            prior = read_record_file(record_path, GradeRecord).record  # None: absent or unreadable
            prior_dig = prior.inputs_digest if prior else None
            up_to_date = prior is not None and prior_dig == dig and prior.status in UP_TO_DATE
            if prior is not None and up_to_date and not force:
                current.append(prior)
                continue

            def written(
                rec: GradeRecord, task: Task = task, details: Path = details, label: str = label
            ) -> None:
                writer.write(
                    task.root,
                    details,
                    details_from_record(rec, task, label, judge_model or "checks"),
                )

            inputs.append(
                TrialInput(
                    trial_id=trial_id(task.id, label, None, 1),
                    task=task,
                    deliverables_dir=d,
                    epoch=1,
                    out_path=record_path,
                    prior=prior if prior_dig == dig else None,
                    extra={
                        "inputs_digest": dig,
                        "agent": label,
                        "model": "-",
                        "task_digest": digest,
                        "public_label": label,
                    },
                    on_written=written,
                )
            )
    if refused and not force:
        raise OverwriteRefused(
            refused,
            "choose another --run-label, or --force to replace them (a backup is "
            "kept under <task>/.jobbench-backups/)",
        )
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
    if backups is not None:
        backups.extend(writer.backups)
    current.extend(graded)
    return sorted(current, key=lambda r: r.trial_id)
