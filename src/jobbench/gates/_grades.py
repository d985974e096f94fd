"""Reading graded runs (the run-directory contract in the common brief).

Grades live at ``runs/<run>/grades/<judge-key>/<split>/<occupation>/taskN/<agent>@<model>/
epoch-<N>.json``, one :class:`jobbench.records.GradeRecord` per (trial, judge).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ..records import GradeRecord, TrialRecord
from ..tasks import display_path


@dataclass(frozen=True)
class GradedTrial:
    """One grade record with where it came from.

    Attributes:
        run_dir: the run directory.
        judge_key: the ``grades/<judge-key>`` folder name.
        path: the grade file.
        agent, model: parsed from the trial id (``…/<agent>@<model>/epoch-N``).
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
    g = Path(run_dir) / "grades"
    if not g.is_dir():
        return []
    return sorted(p.name for p in g.iterdir() if p.is_dir() and not p.is_symlink())


def resolve_judge_key(run_dirs: list[Path], judge_key: str | None) -> str:
    """The judge key to read: ``judge_key`` if given, else the only key present in all runs.

    Raises:
        FileNotFoundError: a run has no ``grades/`` (or not the requested key).
        ValueError: several keys exist and none was chosen; the message lists them.
    """
    keys_per_run = {Path(r): judge_keys(Path(r)) for r in run_dirs}
    for r, keys in keys_per_run.items():
        if not keys:
            raise FileNotFoundError(f"{display_path(r)}: no grades/<judge-key>/ folder; grade the run first")
    if judge_key:
        for r, keys in keys_per_run.items():
            if judge_key not in keys:
                raise FileNotFoundError(f"{display_path(r)}: no grades/{judge_key}/ (have: {', '.join(keys)})")
        return judge_key
    common = set.intersection(*(set(k) for k in keys_per_run.values())) if keys_per_run else set()
    if len(common) == 1:
        return next(iter(common))
    every = sorted(set().union(*keys_per_run.values()))
    raise ValueError(f"choose a judge key with --judge (found: {', '.join(every)})")


def _parse_agent(trial_id: str) -> tuple[str, str, int]:
    parts = trial_id.split("/")
    agent, model, epoch = "?", "?", 0
    if len(parts) >= 2:
        am = parts[-2]
        agent, _, model = am.partition("@")
        ep = parts[-1]
        if ep.startswith("epoch-") and ep[6:].isdigit():
            epoch = int(ep[6:])
    return agent, model or "-", epoch


def read_grades(run_dir: Path, judge_key: str) -> list[GradedTrial]:
    """Every grade record of one judge in one run, sorted by trial id.

    Raises:
        ValueError: a grade file is not a valid GradeRecord (the message names the file
            and the field).
    """
    root = Path(run_dir) / "grades" / judge_key
    out: list[GradedTrial] = []
    if not root.is_dir():
        return out
    for path in sorted(root.rglob("epoch-*.json")):
        if path.is_symlink() or not path.is_file():
            continue
        try:
            grade = GradeRecord.model_validate_json(path.read_bytes())
        except ValidationError as exc:
            e = exc.errors()[0]
            loc = ".".join(str(x) for x in e["loc"]) or "$"
            raise ValueError(f"{display_path(path)}: {loc}: {e['msg']}") from exc
        agent, model, epoch = _parse_agent(grade.trial_id)
        out.append(GradedTrial(run_dir=Path(run_dir), judge_key=judge_key, path=path, agent=agent, model=model,
                               epoch=epoch, grade=grade))
    return sorted(out, key=lambda g: g.grade.trial_id)


def read_trial(run_dir: Path, trial_id: str) -> TrialRecord | None:
    """The TrialRecord of a trial, or None when ``trial.json`` is absent or unreadable."""
    p = Path(run_dir) / "trials" / trial_id / "trial.json"
    if not p.is_file():
        return None
    try:
        return TrialRecord.model_validate_json(p.read_bytes())
    except (ValidationError, ValueError):
        return None


def read_lock(run_dir: Path) -> dict:
    """``lock.json`` of a run as a dict ({} when absent or not JSON)."""
    p = Path(run_dir) / "lock.json"
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}
