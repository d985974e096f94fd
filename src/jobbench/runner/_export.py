"""``jobbench export official RUN DATASET_COPY``: write a run in the public JobBench layout.

The public evaluation repository (Job-Bench/job-bench-eval, ``eval/README.md``, "Output
layout and scores") keeps results next to each task::

    <dataset>/<split>/<occupation>/taskN/
        model_output/<label>/            final deliverables
        model_traj/<label>/              structured trajectories (JSONL)
        eval_result/eval_<label>/<judge>_judge.json   detailed rubric results and score

where ``<judge>`` is the judge model name with ``.`` replaced by ``-`` and any provider
prefix removed, and the judge JSON holds ``evaluated_model``, ``judge_model``,
``total_score``, ``max_score``, ``pass_rate`` ("66%"), ``passed_count``, ``total_count`` and
``rubrics`` (``index``, ``rubric``, ``weight``, ``result`` with ``passed``, ``score``,
``criteria_count``, ``criteria_passed``, ``criteria_results`` and ``overall_reasoning``), as
written by its ``eval/judge.py``.

Labels: ``<model>-<agent>`` with ``/`` → ``_`` and ``.`` → ``-`` (the public runners'
convention), just ``<agent>`` for agents without a model, and ``-epoch<N>`` appended for
epochs after the first. The export never writes into the dataset the run was made from.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._io import atomic_write_json, atomic_write_text
from ..records import GradeRecord, TrialRecord
from ..rundir import RunDir, UnsafeIdError, check_component, safe_name
from ..tasks import discover_task_dirs, load_task, task_digest
from ._lock import RunConfigError, read_lock


@dataclass
class ExportSummary:
    """What :func:`export_official` wrote.

    Attributes:
        outputs: ``model_output`` folders written; trajectories: ``model_traj`` files;
        eval_results: judge JSON files; missing_tasks: task ids absent from the copy;
        problems: records that could not be read (file and reason).
    """

    outputs: int = 0
    trajectories: int = 0
    eval_results: int = 0
    missing_tasks: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def export_label(agent: str, model: str | None, epoch: int) -> str:
    """The public-layout label of a trial (see module docstring)."""
    if not model or model == "-":
        base = agent
    else:
        base = f"{model.replace('/', '_').replace('.', '-')}-{agent}"
    base = safe_name(base)
    return base if epoch == 1 else f"{base}-epoch{epoch}"


def judge_file_stem(judge_key: str, grade: GradeRecord) -> str:
    """``<judge model>`` with ``.`` → ``-`` and provider prefix removed (else the judge key)."""
    model = grade.judge.get("model") if isinstance(grade.judge, dict) else None
    name = str(model) if model else judge_key
    name = name.rsplit("/", 1)[-1].replace(".", "-")
    return safe_name(name)


def public_judge_json(grade: GradeRecord, label: str, judge_name: str, rubric_texts: list[tuple[str, list[str]]]) -> dict[str, Any]:
    """A :class:`GradeRecord` in the public judge JSON shape.

    Undecided rubrics (``passed`` None: judge error or unjudged) count as not passed, and
    their ``overall_reasoning`` says so.
    """
    rubrics = []
    passed_count = 0
    total = 0.0
    for rg in grade.rubrics:
        text, criteria = rubric_texts[rg.index] if rg.index < len(rubric_texts) else ("", [])
        passed = rg.passed is True
        passed_count += passed
        score = rg.weight if passed else 0
        total += score
        crit = []
        for cv in rg.criteria:
            crit.append({
                "index": cv.criterion_index,
                "criterion": criteria[cv.criterion_index] if cv.criterion_index < len(criteria) else "",
                "passed": cv.verdict == "pass",
                "reasoning": cv.reasoning,
                "evidence": cv.evidence,
            })
        if rg.passed is None:
            overall = "undecided (judge error or unjudged criterion); counted as not passed"
        elif rg.chain_break:
            overall = f"chain broken at {rg.chain_break}"
        else:
            overall = "all criteria passed"
        rubrics.append({
            "index": rg.index,
            "rubric": text,
            "weight": rg.weight,
            "result": {
                "passed": passed,
                "score": score,
                "criteria_count": len(rg.criteria),
                "criteria_passed": sum(1 for c in rg.criteria if c.verdict == "pass"),
                "criteria_results": crit,
                "overall_reasoning": overall,
            },
        })
    n = len(grade.rubrics)
    return {
        "evaluated_model": label,
        "judge_model": judge_name,
        "judge_implementation": {"jobbench_judge": grade.judge},
        "timestamp": grade.created_at,
        "total_score": total,
        "max_score": grade.max_score,
        "pass_rate": f"{int(passed_count / n * 100) if n else 0}%",
        "passed_count": passed_count,
        "total_count": n,
        "rubrics": rubrics,
    }


def _inside(a: Path, b: Path) -> bool:
    try:
        a.relative_to(b)
        return True
    except ValueError:
        return False


def _raw_events(trajectory: Path) -> str:
    """The trajectory for the public layout: a CLI agent's raw events when present,
    otherwise our events unchanged."""
    lines = trajectory.read_text(encoding="utf-8").splitlines() if trajectory.exists() else []
    raw = []
    for line in lines:
        try:
            ev = json.loads(line)
        except json.JSONDecodeError:
            continue
        if ev.get("type") == "cli_event" and isinstance(ev.get("event"), dict):
            raw.append(json.dumps(ev["event"], ensure_ascii=False))
    return "\n".join(raw) + "\n" if raw else "\n".join(lines) + ("\n" if lines else "")


class _TaskLocator:
    """Finds a run's task in a dataset copy: by ``split/occupation/taskN``, else (a copy
    whose split folder has another name, e.g. ``datasets/sample`` copied to ``dscopy``) by
    ``occupation/taskN`` when exactly one task of the copy has it, or exactly one of those
    has the run's task digest."""

    def __init__(self, copy: Path) -> None:
        self.copy = copy
        self.exact: dict[str, Path] = {}
        self.by_name: dict[tuple[str, str], list[Path]] = {}
        for split, occ, d in discover_task_dirs(copy):
            self.exact[f"{split}/{occ}/{d.name}"] = d
            self.by_name.setdefault((occ, d.name), []).append(d)
        self.found: dict[str, Path | None] = {}
        self.ambiguous: dict[str, list[Path]] = {}
        self.renamed: dict[str, Path] = {}
        self.different: dict[str, Path] = {}

    @staticmethod
    def _digest(task_dir: Path) -> str | None:
        try:
            return task_digest(load_task(task_dir))
        except Exception:  # an invalid or unreadable copy of the task: no digest to compare
            return None

    def __call__(self, task_id: str, digest: str | None) -> Path | None:
        if task_id in self.found:
            return self.found[task_id]
        d = self.exact.get(task_id)
        parts = task_id.split("/")
        if d is None and len(parts) == 3:
            cands = self.by_name.get((parts[1], parts[2]), [])
            if len(cands) == 1:
                d = cands[0]
            elif len(cands) > 1:
                same = [c for c in cands if digest and self._digest(c) == digest]
                if len(same) == 1:
                    d = same[0]
                else:
                    self.ambiguous[task_id] = cands
            if d is not None:
                self.renamed[task_id] = d
                if digest and self._digest(d) != digest:
                    self.different[task_id] = d
        self.found[task_id] = d
        return d

    def notes(self) -> list[str]:
        """Problems worth a warning: ambiguous matches and copies of another version."""
        out = []
        for tid, cands in self.ambiguous.items():
            out.append(f"task {tid}: ambiguous in {self.copy}: {len(cands)} tasks named {'/'.join(tid.split('/')[1:])} "
                       f"({', '.join(str(c) for c in cands)}) and not exactly one has the run's task digest; skipped")
        for tid, d in self.different.items():
            out.append(f"task {tid}: exported into {d}, whose files differ from the version the run used (digest)")
        return out


def _check_something_matches(trials: list[TrialRecord], locate: _TaskLocator, copy: Path) -> None:
    """Raise when the run has trials and none of their tasks is found in ``copy``."""
    wanted: dict[str, str | None] = {}
    for rec in trials:
        wanted.setdefault(rec.task_id, rec.task_digest)
    if not wanted or any(locate(t, d) is not None for t, d in wanted.items()):
        return
    ids = sorted(wanted)
    shown = ", ".join(ids[:5]) + (f", … {len(ids) - 5} more" if len(ids) > 5 else "")
    why = "; ".join(locate.notes())
    raise RunConfigError(
        f"none of the run's {len(ids)} task(s) ({shown}) is in {copy} (looked for <split>/<occupation>/taskN, then "
        f"<occupation>/taskN under any split folder){': ' + why if why else ''}; nothing was written. Is it a copy of "
        "the dataset the run used (its root, a split folder, or an occupation folder)?")


def export_official(run_dir: Path, dataset_copy: Path, *, judge_key: str | None = None) -> ExportSummary:
    """Write the run's deliverables, trajectories and grades into ``dataset_copy`` in the
    public layout (see module docstring). Existing folders for the same labels are
    replaced.

    Args:
        run_dir: a run directory (has ``lock.json``).
        dataset_copy: a copy of the dataset (public or Hugging Face layout).
        judge_key: export only grades of this judge key (default: all).

    Returns:
        :class:`ExportSummary`.

    Tasks are found in the copy by ``split/occupation/taskN``, else by
    ``occupation/taskN`` when the copy's split folder has another name (unambiguous, or
    disambiguated by the run's task digest).

    Raises:
        RunConfigError: not a run directory, ``dataset_copy`` is (inside) the dataset
            the run used or the run directory, or none of the run's tasks is found in
            ``dataset_copy`` (nothing is written then).
        FileNotFoundError: ``dataset_copy`` is not a directory.
    """
    run_dir = Path(os.path.abspath(run_dir))
    copy = Path(os.path.abspath(dataset_copy))
    lock = read_lock(run_dir)
    if lock is None:
        raise RunConfigError(f"{run_dir}: not a run directory (no lock.json)")
    if not copy.is_dir():
        raise FileNotFoundError(f"{copy}: no such directory")
    src_root = Path(os.path.abspath(lock.dataset_root or "/nonexistent"))
    for a, b in ((copy, src_root), (src_root, copy)):
        if _inside(a, b):
            raise RunConfigError(f"refusing to export into {copy}: it overlaps the dataset the run used ({src_root}); "
                                 "export into a copy")
    if _inside(copy, run_dir) or _inside(run_dir, copy):
        raise RunConfigError(f"refusing to export into {copy}: it overlaps the run directory")
    summary = ExportSummary()
    locate = _TaskLocator(copy)
    rubric_cache: dict[str, list[tuple[str, list[str]]]] = {}
    rd = RunDir(run_dir)
    if judge_key is not None:
        try:
            check_component(judge_key, "judge key")
        except UnsafeIdError as exc:
            raise RunConfigError(str(exc)) from None
    scan = rd.trials()
    summary.problems += [str(p) for p in scan.problems]
    records = list(scan.records.values())
    _check_something_matches(records, locate, copy)
    keys = [judge_key] if judge_key else rd.judge_keys()
    for rec in records:
        tdir = locate(rec.task_id, rec.task_digest)
        if tdir is None:
            if rec.task_id not in summary.missing_tasks and rec.task_id not in locate.ambiguous:
                summary.missing_tasks.append(rec.task_id)
            continue
        label = export_label(rec.agent, rec.model, rec.epoch)
        out = tdir / "model_output" / label
        if out.is_symlink() or out.is_file():
            out.unlink()
        elif out.exists():
            shutil.rmtree(out)
        deliverables = rd.deliverables(rec.trial_id)
        if deliverables.problem is not None:
            summary.problems.append(f"{deliverables.problem}; its deliverables are not exported")
        deliverables.copy_to(out)
        summary.outputs += 1
        occupation, task_name = rec.task_id.split("/")[1:3]
        traj_dir = tdir / "model_traj" / label
        traj_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_text(traj_dir / f"{occupation}_{task_name}_{label}_attempt1.jsonl",
                          _raw_events(rd.trajectory_file(rec.trial_id)))
        summary.trajectories += 1
        for key in keys:
            loaded = rd.read_grade(key, rec.trial_id)
            if loaded.missing:
                continue
            if loaded.record is None:
                summary.problems += [f"{p}: unreadable grade" for p in loaded.problems]
                continue
            grade: GradeRecord = loaded.record
            if rec.task_id not in rubric_cache:
                try:
                    task = load_task(tdir)
                    rubric_cache[rec.task_id] = [(r.question, [c.text for c in r.criteria]) for r in task.rubrics]
                except Exception:
                    rubric_cache[rec.task_id] = []
            stem = judge_file_stem(key, grade)
            payload = public_judge_json(grade, label, str(grade.judge.get("model") or key), rubric_cache[rec.task_id])
            atomic_write_json(tdir / "eval_result" / f"eval_{label}" / f"{stem}_judge.json", payload)
            summary.eval_results += 1
    summary.problems = locate.notes() + summary.problems
    return summary
