"""Reading run directories (``lock.json``, ``trials/**/trial.json``, ``grades/<key>/**.json``).

Nothing here writes. Every malformed file raises :class:`ReportInputError` naming the file
and the field, after all files were read, so one run of ``jobbench report`` lists every
problem at once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..records import GradeRecord, TrialRecord
from ..scoring import TaskMeta
from ..tasks import Task, display_path, load_dataset, task_digest

LOCK = "lock.json"
TRIALS = "trials"
GRADES = "grades"
TRIAL_FILE = "trial.json"
TRAJECTORY = "trajectory.jsonl"


class ReportInputError(ValueError):
    """A run directory cannot be read: the message names each file and field at fault."""


def _fmt_validation(path: Path, exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ())) or "(top level)"
        out.append(f"{display_path(path)}: field {loc}: {err.get('msg')}")
    return out


def _read_model(path: Path, model: type[BaseModel], problems: list[str]) -> Any:
    try:
        return model.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        problems.extend(_fmt_validation(path, exc))
    except OSError as exc:
        problems.append(f"{display_path(path)}: cannot read ({exc.strerror or exc})")
    return None


def judge_keys(run_dir: Path) -> list[str]:
    """Judge keys graded in ``run_dir`` (sub-directories of ``grades/``), sorted."""
    g = Path(run_dir) / GRADES
    if not g.is_dir():
        return []
    return sorted(p.name for p in g.iterdir() if p.is_dir() and not p.name.startswith("."))


def resolve_judge_key(run_dirs: list[Path], judge_key: str | None = None) -> str | None:
    """Pick the judge key for a report over ``run_dirs``.

    Args:
        run_dirs: run directories.
        judge_key: the key asked for, or None for "the only one there is".

    Returns:
        ``judge_key`` when given and graded in at least one run; else the only key found
        in the runs; None when no run has any grade.

    Raises:
        ReportInputError: ``judge_key`` is graded in no run, or several keys exist and none
            was chosen (the message lists them per run).
    """
    per_run = {display_path(Path(r)): judge_keys(Path(r)) for r in run_dirs}
    found = sorted({k for ks in per_run.values() for k in ks})
    listing = "; ".join(f"{r}: {', '.join(ks) or '(none)'}" for r, ks in per_run.items())
    if judge_key is not None:
        if judge_key not in found:
            raise ReportInputError(f"judge key {judge_key!r} has no grades (found: {listing})")
        return judge_key
    if len(found) > 1:
        raise ReportInputError(f"several judge keys; choose one with --judge-key ({listing})")
    return found[0] if found else None


@dataclass
class LoadedTrial:
    """A trial record with where it came from and its grade under the chosen judge key."""

    record: TrialRecord
    rel: str
    dir: Path
    grade: GradeRecord | None = None
    grade_path: Path | None = None
    trajectory_events: int | None = None


@dataclass
class RunData:
    """Everything read from one run directory.

    Attributes:
        name: the directory name; path: its absolute path.
        lock: ``lock.json`` as a dict.
        task_ids: tasks of the run (``lock.json`` ``tasks`` keys, in file order).
        digests: task id → digest from ``lock.json``.
        lock_agents: (agent, model) pairs declared in ``lock.json``.
        epochs: ``lock.json`` ``epochs`` (>= 1).
        judge_key: grades read from ``grades/<judge_key>/`` (None: no grades).
        trials: every finished trial with its grade.
        tasks: task id → :class:`jobbench.tasks.Task` from the dataset, when it can be read.
        metas: task id → :class:`jobbench.scoring.TaskMeta` (maximum and counts).
        warnings: things the report must show (changed tasks, orphan grades, …).
        invalid: ``lock.json`` ``invalid_tasks``: tasks invalid when the run was made
            (``--skip-invalid``), not run, counted as missing; id → problems and maximum.
        dataset_problems: ``lock.json`` ``dataset_problems`` (errors outside any task).
    """

    name: str
    path: Path
    lock: dict[str, Any]
    task_ids: list[str]
    digests: dict[str, str]
    lock_agents: list[tuple[str, str]]
    epochs: int
    judge_key: str | None
    trials: list[LoadedTrial] = field(default_factory=list)
    tasks: dict[str, Task] = field(default_factory=dict)
    metas: dict[str, TaskMeta] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    invalid: dict[str, dict[str, Any]] = field(default_factory=dict)
    dataset_problems: list[str] = field(default_factory=list)


def _count_lines(path: Path) -> int | None:
    try:
        with open(path, "rb") as f:
            return sum(1 for line in f if line.strip())
    except OSError:
        return None


def _read_lock(run_dir: Path, problems: list[str]) -> dict[str, Any] | None:
    path = run_dir / LOCK
    if not path.is_file():
        problems.append(f"{display_path(path)}: missing (is {display_path(run_dir)} a run directory?)")
        return None
    try:
        lock = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        problems.append(f"{display_path(path)}: not readable JSON ({exc})")
        return None
    if not isinstance(lock, dict):
        problems.append(f"{display_path(path)}: field (top level): expected an object")
        return None
    tasks = lock.get("tasks")
    if not isinstance(tasks, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in tasks.items()):
        problems.append(f"{display_path(path)}: field tasks: expected an object {{task_id: digest}}")
    else:
        for k in tasks:
            if len(k.split("/")) != 3:
                problems.append(f"{display_path(path)}: field tasks.{k}: task id is not split/occupation/taskN")
    epochs = lock.get("epochs", 1)
    if not isinstance(epochs, int) or isinstance(epochs, bool) or epochs < 1:
        problems.append(f"{display_path(path)}: field epochs: expected an integer >= 1")
    invalid = lock.get("invalid_tasks", {})
    if not isinstance(invalid, dict):
        problems.append(f"{display_path(path)}: field invalid_tasks: expected an object {{task_id: {{problems, "
                        "max_points}}}}")
    else:
        for k, v in invalid.items():
            ok = (isinstance(v, dict) and isinstance(v.get("problems", []), list)
                  and all(isinstance(x, str) for x in v.get("problems", []))
                  and (v.get("max_points") is None or (isinstance(v.get("max_points"), (int, float))
                                                       and not isinstance(v.get("max_points"), bool))))
            if len(k.split("/")) != 3:
                problems.append(f"{display_path(path)}: field invalid_tasks.{k}: task id is not split/occupation/taskN")
            elif not ok:
                problems.append(f"{display_path(path)}: field invalid_tasks.{k}: expected {{problems: [str], "
                                "max_points: number or null}")
    dp = lock.get("dataset_problems", [])
    if not isinstance(dp, list) or not all(isinstance(x, str) for x in dp):
        problems.append(f"{display_path(path)}: field dataset_problems: expected a list of strings")
    agents = lock.get("agents", [])
    if not isinstance(agents, list) or not all(
        isinstance(a, dict) and isinstance(a.get("agent"), str) and isinstance(a.get("model", "-"), str) for a in agents
    ):
        problems.append(f"{display_path(path)}: field agents: expected a list of {{agent, model, settings}}")
    return lock


def _load_dataset_tasks(run: RunData) -> None:
    root = run.lock.get("dataset_root")
    if not isinstance(root, str) or not root:
        run.warnings.append(f"{run.name}: lock.json has no dataset_root; rubric and criterion texts are not shown")
        return
    try:
        ds = load_dataset(Path(root))
    except (FileNotFoundError, OSError) as exc:
        run.warnings.append(f"{run.name}: dataset {root} not readable ({exc}); rubric and criterion texts are not shown")
        return
    by_id = {t.id: t for t in ds.tasks}
    changed = []
    for task_id in run.task_ids:
        if task_id in run.invalid:  # judged as it was when the run was made: invalid, not run
            continue
        t = by_id.get(task_id)
        if t is None:
            continue
        run.tasks[task_id] = t
        try:
            if run.digests.get(task_id) and task_digest(t) != run.digests[task_id]:
                changed.append(task_id)
        except OSError:
            changed.append(task_id)
    absent = [t for t in run.task_ids if t not in by_id and t not in run.invalid]
    if absent:
        run.warnings.append(f"{run.name}: {len(absent)} task(s) of lock.json not in dataset {root}: {', '.join(absent[:10])}")
    if changed:
        run.warnings.append(
            f"{run.name}: {len(changed)} task(s) changed in the dataset since the run (digest differs): "
            f"{', '.join(changed[:10])}; texts shown are today's"
        )


def load_run(run_dir: Path | str, judge_key: str | None) -> RunData:
    """Read one run directory.

    Args:
        run_dir: ``runs/<name>``.
        judge_key: read grades from ``grades/<judge_key>/`` (None: ignore grades).

    Returns:
        A :class:`RunData`; trials sorted by trial id.

    Raises:
        ReportInputError: missing/malformed ``lock.json``, or any ``trial.json`` or grade file
            that is not a valid record (all problems listed, each with file and field).
    """
    run_dir = Path(run_dir).resolve()
    problems: list[str] = []
    if not run_dir.is_dir():
        raise ReportInputError(f"{display_path(run_dir)}: no such run directory")
    lock = _read_lock(run_dir, problems)
    if lock is None or problems:
        raise ReportInputError("\n".join(problems))
    agents = [(a["agent"], a.get("model", "-")) for a in lock.get("agents", [])]
    run = RunData(
        name=run_dir.name,
        path=run_dir,
        lock=lock,
        task_ids=list(lock["tasks"]),
        digests=dict(lock["tasks"]),
        lock_agents=agents,
        epochs=int(lock.get("epochs", 1)),
        judge_key=judge_key,
        invalid={k: v for k, v in (lock.get("invalid_tasks") or {}).items()},
        dataset_problems=list(lock.get("dataset_problems") or []),
    )
    run.task_ids += [t for t in run.invalid if t not in run.task_ids]
    trials_dir = run_dir / TRIALS
    by_id: dict[str, LoadedTrial] = {}
    by_rel: dict[str, LoadedTrial] = {}
    for path in sorted(trials_dir.rglob(TRIAL_FILE)) if trials_dir.is_dir() else []:
        rec = _read_model(path, TrialRecord, problems)
        if rec is None:
            continue
        rel = path.parent.relative_to(trials_dir).as_posix()
        if rec.trial_id in by_id:
            problems.append(f"{display_path(path)}: field trial_id: {rec.trial_id!r} also in "
                            f"{display_path(by_id[rec.trial_id].dir / TRIAL_FILE)}")
            continue
        if len(rec.task_id.split("/")) != 3:
            problems.append(f"{display_path(path)}: field task_id: {rec.task_id!r} is not split/occupation/taskN")
            continue
        lt = LoadedTrial(record=rec, rel=rel, dir=path.parent, trajectory_events=_count_lines(path.parent / TRAJECTORY))
        by_id[rec.trial_id] = lt
        by_rel[rel] = lt
    if judge_key is not None:
        gdir = run_dir / GRADES / judge_key
        orphans = []
        for path in sorted(gdir.rglob("*.json")) if gdir.is_dir() else []:
            if path.name.startswith("."):
                continue
            grade = _read_model(path, GradeRecord, problems)
            if grade is None:
                continue
            rel = path.relative_to(gdir).as_posix()[: -len(".json")]
            lt = by_id.get(grade.trial_id) or by_rel.get(rel)
            if lt is None:
                orphans.append(grade.trial_id)
                continue
            if lt.grade is not None:
                problems.append(f"{display_path(path)}: field trial_id: {grade.trial_id!r} graded twice "
                                f"(also {display_path(lt.grade_path)})")
                continue
            if grade.trial_id != lt.record.trial_id:
                grade = grade.model_copy(update={"trial_id": lt.record.trial_id})
            lt.grade, lt.grade_path = grade, path
        if orphans:
            run.warnings.append(f"{run.name}: {len(orphans)} grade(s) under {judge_key} without a trial.json: "
                                f"{', '.join(orphans[:10])}")
    if problems:
        raise ReportInputError("\n".join(problems))
    run.trials = sorted(by_id.values(), key=lambda t: t.record.trial_id)
    dropped = [t.record.trial_id for t in run.trials if t.record.task_id in run.invalid]
    if dropped:
        run.trials = [t for t in run.trials if t.record.task_id not in run.invalid]
        run.warnings.append(f"{run.name}: {len(dropped)} trial(s) of task(s) now listed as invalid in lock.json are "
                            f"left out (they ran on an earlier, valid version): {', '.join(dropped[:10])}")
    if run.invalid:
        listed = [f"{tid} ({(entry.get('problems') or ['invalid'])[0]})" for tid, entry in run.invalid.items()]
        run.warnings.append(f"{run.name}: {len(run.invalid)} task(s) were invalid and not run (--skip-invalid); each "
                            "counts as missing (0) in micro and macro: " + "; ".join(listed[:10])
                            + (f"; … {len(listed) - 10} more" if len(listed) > 10 else ""))
    if run.dataset_problems:
        run.warnings.append(f"{run.name}: the dataset had {len(run.dataset_problems)} problem(s) outside any task "
                            "directory when the run was made (they may hide tasks that were never run): "
                            + "; ".join(run.dataset_problems[:5]))
    extra = sorted({t.record.task_id for t in run.trials} - set(run.task_ids))
    if extra:
        run.warnings.append(f"{run.name}: {len(extra)} trial task(s) not in lock.json, reported anyway: {', '.join(extra[:10])}")
        run.task_ids += extra
    _load_dataset_tasks(run)
    graded: dict[str, GradeRecord] = {}
    for lt in run.trials:
        if lt.grade is not None:
            graded.setdefault(lt.record.task_id, lt.grade)
    for task_id in run.task_ids:
        t = run.tasks.get(task_id)
        g = graded.get(task_id)
        if task_id in run.invalid:
            entry = run.invalid[task_id]
            mp = entry.get("max_points")
            run.metas[task_id] = TaskMeta(task_id=task_id, max_points=float(mp) if mp is not None else None,
                                          invalid=list(entry.get("problems") or ["invalid"]))
        elif t is not None:
            run.metas[task_id] = TaskMeta(task_id=task_id, max_points=t.total_weight, rubrics=len(t.rubrics),
                                          criteria=t.criterion_count)
        elif g is not None:  # no dataset: any grade of the task knows its maximum and counts
            run.metas[task_id] = TaskMeta(task_id=task_id, max_points=g.max_score, rubrics=len(g.rubrics),
                                          criteria=sum(len(r.criteria) for r in g.rubrics))
        else:
            run.metas[task_id] = TaskMeta(task_id=task_id)
    return run
