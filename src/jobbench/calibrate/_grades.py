"""Reading grade records of several judges and pairing them by (trial, rubric, criterion).

A *judge* here is one judge key (``grades/<judge-key>/`` in a run directory, read through
:mod:`jobbench.rundir`).
Grades of the same key found in several runs are pooled; grades of different keys are paired
by ``trial_id`` and, within a trial, by (rubric index, criterion index).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records import CriterionVerdict, GradeRecord
from ..rundir import RunDir
from ..tasks import Task, display_path, load_dataset

DECIDED = ("pass", "fail")


class CalibrateInputError(ValueError):
    """Calibration input cannot be used: the message names each file and field at fault."""


@dataclass
class JudgeGrades:
    """Every grade record of one judge key.

    Attributes:
        key: the judge key (folder name under ``grades/``).
        records: trial id → :class:`GradeRecord`.
        paths: trial id → the file the record was read from (None when built in memory).
    """

    key: str
    records: dict[str, GradeRecord] = field(default_factory=dict)
    paths: dict[str, Path | None] = field(default_factory=dict)

    @property
    def identity(self) -> dict[str, Any]:
        """The ``judge`` dict of the first record (model, mode, decide, …); {} when empty."""
        for rec in self.records.values():
            return dict(rec.judge)
        return {}

    def add(self, record: GradeRecord, path: Path | None = None) -> None:
        """Add one record.

        Raises:
            CalibrateInputError: a record for the same trial id is already present (the
                message names both files).
        """
        tid = record.trial_id
        if tid in self.records:
            first = self.paths.get(tid)
            raise CalibrateInputError(
                f"judge key {self.key!r} has two grades of trial {tid!r}: "
                f"{display_path(first) if first else '(in memory)'} and {display_path(path) if path else '(in memory)'}; "
                "calibrate those runs separately"
            )
        self.records[tid] = record
        self.paths[tid] = path


def verdict_label(v: CriterionVerdict | None) -> str | None:
    """``"pass"``/``"fail"``, or None for ``judge_error``, ``unjudged`` or no verdict."""
    if v is None:
        return None
    return v.verdict if v.verdict in DECIDED else None


def criterion_map(record: GradeRecord) -> dict[tuple[int, int], CriterionVerdict]:
    """(rubric index, criterion index) → verdict, for one grade record."""
    out: dict[tuple[int, int], CriterionVerdict] = {}
    for g in record.rubrics:
        for cv in g.criteria:
            out[(cv.rubric_index, cv.criterion_index)] = cv
    return out


def read_judge_dir(
    key_dir: Path,
    key: str | None = None,
    into: JudgeGrades | None = None,
    problems: list[str] | None = None,
) -> JudgeGrades:
    """Read every grade record of one ``grades/<key>/`` folder (each at its trial's own grade
    path, :meth:`jobbench.rundir.RunDir.grades`).

    Args:
        key_dir: the ``grades/<key>`` folder.
        key: judge key (default: the folder name).
        into: add to this collection instead of a new one (pooling runs).
        problems: collect malformed-file messages here instead of raising at once.

    Returns:
        The judge's grades.

    Raises:
        CalibrateInputError: a file is not a valid GradeRecord (file and field named), a
            grade is not its path's (its trial id differs), or a trial is graded twice under
            the same key.
    """
    key_dir = Path(key_dir)
    jg = into if into is not None else JudgeGrades(key or key_dir.name)
    own = problems is None
    problems = [] if problems is None else problems
    scan = RunDir(key_dir.parent.parent).grades(key_dir.name)
    problems.extend(str(p) for p in scan.problems)
    for tid, rec in scan.records.items():
        try:
            jg.add(rec, scan.paths[tid])
        except CalibrateInputError as exc:
            problems.append(str(exc))
    if own and problems:
        raise CalibrateInputError("\n".join(problems))
    return jg


def read_run_grades(
    run_dirs: Iterable[Path], judge_keys: Iterable[str] | None = None
) -> dict[str, JudgeGrades]:
    """Read the grades of every (or the chosen) judge key in one or more run directories.

    Args:
        run_dirs: run directories (each with a ``grades/`` folder).
        judge_keys: only these keys (None: all keys found).

    Returns:
        judge key → :class:`JudgeGrades`, pooled across runs, in sorted key order (or the
        order of ``judge_keys`` when given).

    Raises:
        CalibrateInputError: a run directory has no ``grades/`` folder, a requested key has no
            grades in any run, a grade file is malformed, or a trial is graded twice under one
            key; every problem is listed in one message.
    """
    runs = [Path(r) for r in run_dirs]
    problems: list[str] = []
    found: dict[str, JudgeGrades] = {}
    for run in runs:
        rd = RunDir(run)
        if not rd.grades_dir.is_dir():
            problems.append(
                f"{display_path(run)}: no grades/ folder (grade the run first with "
                "`jobbench grade`)"
            )
            continue
        for key in rd.judge_keys():
            if judge_keys is not None and key not in set(judge_keys):
                continue
            into = found.setdefault(key, JudgeGrades(key))
            read_judge_dir(rd.judge_dir(key), into=into, problems=problems)
    if judge_keys is not None:
        for k in judge_keys:
            if k not in found and runs:
                every = sorted({key for r in runs for key in RunDir(r).judge_keys()})
                listing = ", ".join(every) or "(none)"
                problems.append(
                    f"judge key {k!r} has no grades in {', '.join(display_path(r) for r in runs)} "
                    f"(found: {listing})"
                )
    if problems:
        raise CalibrateInputError("\n".join(problems))
    order = list(judge_keys) if judge_keys is not None else sorted(found)
    return {k: found[k] for k in order if k in found}


def tasks_of_runs(run_dirs: Iterable[Path], warnings: list[str] | None = None) -> dict[str, Task]:
    """Tasks named in the runs' ``lock.json`` (``dataset_root``), for criterion texts.

    Unreadable lock files or datasets are not errors (texts are a convenience): a warning is
    appended to ``warnings`` instead.

    Returns:
        task id → :class:`Task`.
    """
    out: dict[str, Task] = {}
    warnings = [] if warnings is None else warnings
    roots: dict[Path, None] = {}
    for run in run_dirs:
        loaded = RunDir(run).read_lock()
        if loaded.record is None or not loaded.record.dataset_root:
            why = (
                "; ".join(str(p) for p in loaded.problems)
                or f"{display_path(loaded.path)}: no dataset_root"
            )
            warnings.append(f"{why}; criterion texts left out")
            continue
        roots[Path(loaded.record.dataset_root)] = None
    for root in roots:
        try:
            ds = load_dataset(root)
        except (FileNotFoundError, OSError) as exc:
            warnings.append(
                f"dataset {display_path(root)} cannot be read ({exc}); criterion texts left out"
            )
            continue
        for t in ds.tasks:
            out.setdefault(t.id, t)
    return out


def check_same_deliverables(judges: Mapping[str, JudgeGrades]) -> list[str]:
    """Trials whose grades under different keys name different deliverables.

    The judge writes a ``deliverables`` manifest (path, sha256) into each record; when two
    judges graded the same trial id from different files (e.g. two runs of the same
    configuration), their verdicts must not be paired.

    Returns:
        The offending trial ids, sorted (empty when every pair matches or lacks a manifest).
    """
    bad: set[str] = set()
    seen: dict[str, tuple[str, Any]] = {}
    for key, jg in judges.items():
        for tid, rec in jg.records.items():
            if not rec.deliverables:
                continue
            digest = sorted((d.path, d.sha256) for d in rec.deliverables)
            if tid in seen and seen[tid][1] != digest:
                bad.add(tid)
            seen.setdefault(tid, (key, digest))
    return sorted(bad)
