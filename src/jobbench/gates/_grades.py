"""Reading graded runs through :mod:`jobbench.rundir` (one
:class:`jobbench.records.GradeRecord` per (trial, judge key), at the trial's own grade path).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..records import GradeRecord, TrialRecord
from ..rundir import RunDir, RunDirError, RunLock, choose_judge_key, parse_trial_id
from ..tasks import display_path


@dataclass(frozen=True)
class GradedTrial:
    """One grade record with where it came from.

    Attributes:
        run_dir: the run directory.
        judge_key: the ``grades/<judge-key>`` folder name.
        path: the grade file.
        agent, model: parsed from the trial id (``…/<agent>@<model>/epoch-<N>``).
        epoch: the epoch number.
        grade: the record.
    """

    run_dir: Path
    judge_key: str
    path: Path
    agent: str
    model: str
    epoch: int
    grade: GradeRecord


def judge_keys(run_dir: Path) -> list[str]:
    """Judge keys present under ``run_dir/grades/`` (sorted); [] when there are none."""
    return RunDir(run_dir).judge_keys()


def resolve_judge_key(run_dirs: list[Path], judge_key: str | None) -> str:
    """The judge key the gates read: :func:`jobbench.rundir.choose_judge_key` (``judge_key``
    if given, else the only key, else the one graded last in every run; the report's rule),
    which must name grades: the gates have nothing to show without them.

    Raises:
        FileNotFoundError: a run has no ``grades/`` folder.
        JudgeKeyError (a ValueError): ``judge_key`` is graded in no run, or no key is graded
            in every run (the message lists them per run).
    """
    for r in run_dirs:
        if not judge_keys(Path(r)):
            raise FileNotFoundError(
                f"{display_path(r)}: no grades/<judge-key>/ folder; grade the run first"
            )
    key = choose_judge_key([Path(r) for r in run_dirs], judge_key)
    assert key is not None  # every run has a key, so one is chosen or an error raised
    return key


def read_grades(run_dir: Path, judge_key: str) -> list[GradedTrial]:
    """Every grade record of one judge in one run, sorted by trial id (grades whose identity
    does not match their path are left out).

    Raises:
        ValueError: a grade file is not a valid GradeRecord (the message names the file
            and the field).
    """
    scan = RunDir(run_dir).grades(judge_key)
    bad = [p for p in scan.problems if p.kind == "corrupt"]
    if bad:
        raise RunDirError(bad)
    out = []
    for tid, grade in scan.records.items():
        k = parse_trial_id(tid)
        out.append(
            GradedTrial(
                run_dir=Path(run_dir),
                judge_key=judge_key,
                path=scan.paths[tid],
                agent=k.agent,
                model=k.model,
                epoch=k.epoch,
                grade=grade,
            )
        )
    return out


def read_trial(run_dir: Path, trial_id: str) -> TrialRecord | None:
    """The TrialRecord of a trial, or None when ``trial.json`` is absent or unusable."""
    return RunDir(run_dir).read_trial(trial_id).record


def read_lock(run_dir: Path) -> RunLock | None:
    """``lock.json`` of a run, or None when absent or unusable."""
    return RunDir(run_dir).read_lock().record
