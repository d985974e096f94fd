"""One calibration from start to finish: read run grades and/or grade deliverable sets with
expected verdicts, compute the figures, write the outputs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..rundir import RunDir
from ..tasks import Task, TaskLoadError, display_path, load_dataset, load_task
from ._analysis import CalibrationReport, calibrate
from ._expected import ExpectedSet, discover_sets, expected_by_trial, sets_in_folder
from ._grades import (
    CalibrateInputError,
    JudgeGrades,
    check_same_deliverables,
    read_run_grades,
    tasks_of_runs,
)
from ._grading import grade_sets
from ._write import write_calibration

if TYPE_CHECKING:
    from ..judge import JudgeConfig

DEFAULT_OUT = Path("calibration-results")


def collect_sets(
    expected_paths: Sequence[Path] = (), sets_dir: Path | None = None, sets_task: Path | None = None
) -> tuple[list[ExpectedSet], list[str]]:
    """Find deliverable sets with expected verdicts.

    Args:
        expected_paths: dataset roots, splits, occupations or task folders; every
            ``solution/**/`` folder holding ``deliverables/`` and ``expected.json`` is a set.
        sets_dir: a folder of sets in the same form for one task (``sets_task``).
        sets_task: the task folder the sets of ``sets_dir`` answer.

    Returns:
        (sets sorted by trial id, warnings: malformed ``expected.json`` files left out and
        task-loading problems).

    Raises:
        CalibrateInputError: a path does not exist, holds no task, ``sets_dir`` lacks
            ``sets_task`` (or the reverse), or no set is found at all.
    """
    sets: list[ExpectedSet] = []
    warnings: list[str] = []
    for p in expected_paths:
        if not Path(p).exists():
            raise CalibrateInputError(f"{display_path(p)}: no such file or folder")
        try:
            ds = load_dataset(p)
        except FileNotFoundError as exc:
            raise CalibrateInputError(str(exc)) from exc
        warnings += [f"task left out: {prob}" for prob in ds.errors]
        if not ds.tasks:
            raise CalibrateInputError(f"{display_path(p)}: no valid task found")
        found, problems = discover_sets(ds.tasks)
        warnings += problems
        if not found:
            warnings.append(
                f"{display_path(p)}: no solution/**/ folder with deliverables/ and expected.json"
            )
        sets += found
    if (sets_dir is None) != (sets_task is None):
        raise CalibrateInputError(
            "--sets and --task go together: the sets of a folder answer one task"
        )
    if sets_dir is not None and sets_task is not None:
        if not Path(sets_dir).is_dir():
            raise CalibrateInputError(f"{display_path(sets_dir)}: not a folder")
        try:
            task: Task = load_task(Path(sets_task))
        except (TaskLoadError, FileNotFoundError, OSError) as exc:
            raise CalibrateInputError(f"--task {display_path(sets_task)}: {exc}") from exc
        sets += sets_in_folder(Path(sets_dir), task)
    if (expected_paths or sets_dir is not None) and not sets:
        raise CalibrateInputError(
            "no deliverable set with expected verdicts found"
            + (f" ({'; '.join(warnings)})" if warnings else "")
        )
    return sorted(sets, key=lambda s: s.trial_id), warnings


def run_calibration(
    run_dirs: Sequence[Path] = (),
    *,
    judge_keys: Sequence[str] | None = None,
    reference: str | None = None,
    sets: Sequence[ExpectedSet] = (),
    configs: Iterable[JudgeConfig] = (),
    out_dir: Path = DEFAULT_OUT,
    max_flips: int | None = None,
    progress: bool = False,
    warnings: Sequence[str] = (),
    reuse_grades: bool = False,
) -> tuple[CalibrationReport, dict[str, Path]]:
    """Read and/or grade, compute, write.

    Args:
        run_dirs: graded run directories; their judge keys (or ``judge_keys``) are compared.
        judge_keys: only these keys of the runs, in this order (None: all, sorted).
        reference: the reference judge key (default: the first judge).
        sets: deliverable sets with expected verdicts (see :func:`collect_sets`); graded with
            every configuration of ``configs`` into ``out_dir/grades/<key>/``.
        configs: judge configurations for the sets (required when ``sets`` is not empty).
        out_dir: where ``calibration.json``, ``calibration.md``, ``cost_vs_agreement.png``
            (and the sets' grades) are written.
        max_flips: list at most this many flips in the JSON (Markdown lists at most 50).
        progress: show the judge's progress bar while grading sets.
        warnings: warnings gathered earlier (shown in the report).
        reuse_grades: do not grade ``sets``: read the grades an earlier calibration wrote to
            ``out_dir/grades/`` (as if ``out_dir`` were one more run directory).

    Returns:
        (the report, ``{"json", "markdown", "plot"}`` → path).

    Raises:
        CalibrateInputError: nothing to calibrate, or unreadable grades (message names files).
    """
    if not run_dirs and not sets:
        raise CalibrateInputError(
            "nothing to calibrate: give graded run directories and/or --expected/--sets"
        )
    warn = list(warnings)
    given_runs = list(run_dirs)
    run_dirs = list(run_dirs)
    if reuse_grades:
        if not sets:
            raise CalibrateInputError(
                "--reuse-grades needs the deliverable sets (--expected or --sets)"
            )
        grades_dir = RunDir(out_dir).grades_dir
        if not grades_dir.is_dir():
            raise CalibrateInputError(
                f"{display_path(grades_dir)}: no grades to reuse (run once without --reuse-grades)"
            )
        run_dirs.append(Path(out_dir))
    judges: dict[str, JudgeGrades] = {}
    tasks: dict[str, Task] = {}
    if run_dirs:
        judges = read_run_grades(run_dirs, judge_keys)
        if not judges:
            raise CalibrateInputError(
                "no grades found in " + ", ".join(display_path(r) for r in run_dirs)
            )
        tasks.update(tasks_of_runs(given_runs, warn))
    for s in sets:
        tasks.setdefault(s.task.id, s.task)
    configs = list(configs)
    if sets and not reuse_grades:
        if not configs:
            raise CalibrateInputError(
                "deliverable sets need at least one judge configuration "
                "(--judge-model, --judge-config, --checks-judge or JUDGE_MODEL)"
            )
        graded = grade_sets(sets, configs, out_dir, progress=progress)
        for key, jg in graded.items():
            if key in judges:
                for tid, rec in jg.records.items():
                    judges[key].add(rec, jg.paths.get(tid))
            else:
                judges[key] = jg
    mismatched = check_same_deliverables(judges)
    if mismatched:
        for jg in judges.values():
            for tid in mismatched:
                jg.records.pop(tid, None)
                jg.paths.pop(tid, None)
        warn.append(
            f"{len(mismatched)} trial(s) were graded from different deliverables under different judge keys "
            f"and are left out: {', '.join(mismatched[:10])}{' …' if len(mismatched) > 10 else ''}"
        )
    report = calibrate(
        judges,
        reference=reference,
        expected=expected_by_trial(sets) if sets else None,
        tasks=tasks,
        max_flips=max_flips,
    )
    report.warnings = warn + report.warnings
    report.sources = {
        **({"runs": [display_path(r) for r in given_runs]} if given_runs else {}),
        **({"reused grades": display_path(RunDir(out_dir).grades_dir)} if reuse_grades else {}),
        **({"expected sets": len(sets)} if sets else {}),
        "judges": list(judges),
        "output": display_path(out_dir),
    }
    paths = write_calibration(report, out_dir)
    return report, paths
