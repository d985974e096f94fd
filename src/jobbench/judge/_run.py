"""Grading a run directory (contract in COMMON.md) and summarising judge usage."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from .._io import atomic_write_json
from ..records import GradeRecord, TrialRecord, TrialStatus, Usage
from ..tasks import Dataset, display_path, load_dataset, sha256_file, task_digest
from ._config import JudgeConfig
from ._grade import Grader, TrialInput, inputs_digest


class RunDirError(ValueError):
    """The run directory is missing or malformed (message names the file)."""


def read_lock(run_dir: Path) -> dict[str, Any]:
    """``lock.json`` of a run directory.

    Raises:
        RunDirError: missing or invalid, naming the file.
    """
    p = Path(run_dir) / "lock.json"
    if not p.is_file():
        raise RunDirError(f"{display_path(p)}: missing (not a JobBench run directory)")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RunDirError(f"{display_path(p)}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise RunDirError(f"{display_path(p)}: must be a JSON object")
    return data


def finished_trials(run_dir: Path) -> list[TrialRecord]:
    """Every ``trials/**/trial.json`` (finished trials), sorted by trial id.

    Raises:
        RunDirError: a trial.json is not a valid TrialRecord (naming the file and field).
    """
    out = []
    base = Path(run_dir) / "trials"
    for p in sorted(base.rglob("trial.json")) if base.is_dir() else []:
        try:
            out.append(TrialRecord.model_validate_json(p.read_text(encoding="utf-8")))
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(x) for x in err["loc"])
            raise RunDirError(f"{display_path(p)}: {loc}: {err['msg']}") from exc
    return sorted(out, key=lambda t: t.trial_id)


def grade_path(run_dir: Path, config: JudgeConfig, trial_id: str) -> Path:
    """``grades/<judge-key>/<trial_id>.json``."""
    return Path(run_dir) / "grades" / config.key / f"{trial_id}.json"


def load_grade(path: Path) -> GradeRecord | None:
    """A grade record, or None when absent or unreadable (then it is regraded)."""
    try:
        return GradeRecord.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, ValueError):
        return None


def grade_run(
    run_dir: Path,
    config: JudgeConfig,
    *,
    dataset: Dataset | None = None,
    progress: bool | None = None,
    force: bool = False,
    grader: Grader | None = None,
    executor: Any = None,
    fresh: set[str] | None = None,
) -> list[GradeRecord]:
    """Grade every finished trial of a run that lacks an up-to-date grade.

    A grade is up to date when its ``inputs_digest`` (task digest, deliverable manifest,
    judge identity) matches and its status is ``complete`` or ``unjudged``. A grade with
    ``judge_error`` is regraded, reusing its valid verdicts (only the missing or errored
    units are asked again). Trials with status ``infra_error`` are never graded.

    Args:
        run_dir: ``runs/<run-name>/``.
        config: judge configuration (grades go to ``grades/<config.key>/``).
        dataset: the tasks (default: loaded from ``lock.json``'s ``dataset_root``).
        progress: show a progress bar (default: when stderr is a terminal).
        force: regrade even up-to-date trials (the cache still applies).
        grader: a prepared :class:`Grader` (tests); default built from ``config``.
        executor: where to grade (a :class:`jobbench.runner.Executor`, e.g. Dask workers:
            one job per trial, each record written to the run directory by the worker);
            default (or with ``grader``): this process.
        fresh: when given, the trial ids graded by this call (not kept up to date) are
            added to it, so a caller can tell what this call spent (their ``usage``) from
            what the kept records once cost.

    Returns:
        The current grade of every gradable trial (fresh or up to date), sorted by trial id.
        Also writes ``grades/<key>.usage.json`` (judge usage per trial, task, agent/model and
        in total), beside the key folder rather than inside it, because every ``*.json``
        inside ``grades/<key>/`` is read as a grade record.

    Raises:
        RunDirError: missing/invalid ``lock.json`` or ``trial.json``.
        FileNotFoundError: the dataset cannot be found.
    """
    run_dir = Path(run_dir)
    lock = read_lock(run_dir)
    if dataset is None:
        root = lock.get("dataset_root")
        if not root:
            raise RunDirError(f"{display_path(run_dir / 'lock.json')}: dataset_root missing")
        dataset = load_dataset(root, strict=lock_strict(lock))
    tasks = {t.id: t for t in dataset.tasks}
    from ..tasks import find_invalid

    invalid = find_invalid(dataset).tasks
    digests: dict[str, str] = {}
    inputs: list[TrialInput] = []
    current: dict[str, GradeRecord] = {}
    skipped: list[str] = []
    for trial in finished_trials(run_dir):
        if trial.status == TrialStatus.infra_error:
            continue
        task = tasks.get(trial.task_id)
        if task is None:
            if trial.task_id in invalid:
                skipped.append(f"{trial.trial_id}: task {trial.task_id} is invalid in the dataset "
                               f"({len(invalid[trial.task_id])} problem(s); see `jobbench validate`); not graded")
            else:
                skipped.append(f"{trial.trial_id}: task {trial.task_id} not in the dataset")
            continue
        if task.id not in digests:
            digests[task.id] = task_digest(task)
        deliverables_dir = run_dir / "trials" / trial.trial_id / "deliverables"
        if deliverables_dir.is_symlink():
            stale = grade_path(run_dir, config, trial.trial_id)
            removed = ""
            if stale.is_file() or stale.is_symlink():
                stale.unlink()  # a grade of files that are no longer the trial's must not be reported
                removed = f"; its earlier grade {display_path(stale)} was removed"
            skipped.append(f"{trial.trial_id}: {display_path(deliverables_dir)} is a symlink (the runner never "
                           f"writes one; the run directory was altered); not graded{removed}")
            continue
        manifest = current_manifest(deliverables_dir)
        recorded = sorted((d.path, d.sha256) for d in trial.deliverables)
        if manifest != recorded:
            changed = sorted(set(manifest).symmetric_difference(recorded))
            names = sorted({path for path, _ in changed})
            print(f"warning: {display_path(deliverables_dir)}: {len(names)} deliverable(s) differ from those "
                  f"recorded when the trial ran ({', '.join(names[:5])}{' …' if len(names) > 5 else ''}); "
                  "grading the files as they are now", file=sys.stderr)
        dig = inputs_digest(digests[task.id], manifest, config)
        out = grade_path(run_dir, config, trial.trial_id)
        prior = load_grade(out)
        prior_dig = (prior.model_extra or {}).get("inputs_digest") if prior else None
        if prior is not None and not force and prior_dig == dig and prior.status in ("complete", "unjudged"):
            current[trial.trial_id] = prior
            continue
        inputs.append(TrialInput(
            trial_id=trial.trial_id, task=task,
            deliverables_dir=deliverables_dir,
            epoch=trial.epoch, out_path=out, prior=prior if prior_dig == dig else None,
            extra={"inputs_digest": dig, "agent": trial.agent, "model": trial.model,
                   "task_digest": digests[task.id], "trial_status": trial.status.value,
                   "task_digest_changed": lock.get("tasks", {}).get(task.id) not in (None, digests[task.id])},
        ))
    for s in skipped:
        print(f"warning: {s}", file=sys.stderr)
    show = sys.stderr.isatty() if progress is None else progress
    if executor is not None and grader is None:
        graded = executor.grade(inputs, config, progress=show)
    else:
        own = grader is None
        if grader is None:
            grader = Grader(config, progress=show)
        try:
            graded = grader.grade(inputs)
        finally:
            if own:
                grader.close()
    for rec in graded:
        current[rec.trial_id] = rec
    if fresh is not None:
        fresh.update(rec.trial_id for rec in graded)
    records = [current[k] for k in sorted(current)]
    atomic_write_json(run_dir / "grades" / f"{config.key}.usage.json", usage_summary(records, config))
    return records


def lock_strict(lock: Any) -> bool:
    """Whether the run of ``lock`` (a parsed ``lock.json``) loaded its dataset strictly
    (``config.strict``, written by ``jobbench run --strict``)."""
    cfg = lock.get("config") if isinstance(lock, dict) else None
    return bool(isinstance(cfg, dict) and cfg.get("strict") is True)


def explain_invalid_tasks(
    run_dir: Path, err: Any, *, strict: bool | None = None
) -> tuple[Dataset | None, set[str]]:
    """Load the dataset of a run (``lock.json``'s ``dataset_root``) and print to ``err`` (a
    :class:`rich.console.Console`), once per task, why the run's trials of tasks that are
    invalid in the dataset now are not graded (every problem: file, JSON path, message).
    Used by ``jobbench grade`` and ``jobbench run`` before :func:`grade_run`. The dataset is
    loaded strictly when ``strict`` is True, or when it is None and the run was made with
    ``--strict``.

    Returns:
        ``(dataset or None, {invalid task id with trials in the run})``; None (no readable
        ``lock.json`` or dataset) lets :func:`grade_run` report the problem itself.
    Raises:
        Nothing: unreadable inputs give ``(None, set())``.
    """
    from rich.markup import escape

    from ..tasks import find_invalid

    try:
        lock = json.loads((run_dir / "lock.json").read_text(encoding="utf-8"))
        root = lock.get("dataset_root") if isinstance(lock, dict) else None
        if not root:
            return None, set()
        dataset = load_dataset(root, strict=lock_strict(lock) if strict is None else strict)
    except (OSError, ValueError):
        return None, set()
    invalid = find_invalid(dataset)
    trial_tasks = set()
    trials = run_dir / "trials"
    for p in trials.rglob("trial.json") if trials.is_dir() else []:
        rel = p.parent.relative_to(trials).parts
        if len(rel) >= 3:
            trial_tasks.add("/".join(rel[:3]))
    hit = sorted(t for t in invalid.tasks if t in trial_tasks)
    for tid in hit:
        err.print(f"[yellow]warning:[/yellow] task {escape(tid)} is invalid in the dataset now, so its trials are not "
                  "graded; fix it and grade again:", highlight=False)
        for p in invalid.tasks[tid]:
            err.print(f"  {escape(str(p))}", highlight=False)
    return dataset, set(hit)


def current_manifest(deliverables_dir: Path) -> list[tuple[str, str]]:
    """``[(relative POSIX path, sha256 hex)]`` of the regular files under ``deliverables_dir``
    now, plus ``(path, "refused:<reason>")`` for each entry the extractor refuses (symlinks,
    special files; :func:`jobbench.extract.walk_folder`), sorted; a missing folder gives ``[]``.

    Hashing at grade time, rather than trusting the manifest in ``trial.json``, means a
    deliverable edited, added, removed or replaced by a symlink after the run is regraded
    instead of served a stale grade."""
    from ..extract import walk_folder

    if not deliverables_dir.is_dir():
        return []
    return [(rel, sha256_file(path) if problem is None else f"refused:{problem}")
            for rel, path, _, problem in walk_folder(deliverables_dir)]


def usage_summary(records: list[GradeRecord], config: JudgeConfig) -> dict[str, Any]:
    """Judge usage totals per trial, task, agent@model and overall (kept apart from the
    agents' own usage), as written to ``grades/<key>.usage.json``.

    ``total``, ``by_task``, ``by_agent_model`` and ``by_trial`` are what the grading that
    produced each current record actually spent (a verdict served from the cache or reused
    from an earlier grade costs 0 there). ``cached_usage`` has the same four keys for what
    those cached or reused verdicts cost when they were first obtained (from each record's
    ``cached_usage``), and ``full_pass_total`` = ``total`` + ``cached_usage.total``: the cost
    of every verdict of the current records, i.e. of a full grading pass.
    """

    def breakdown(usage_of: Callable[[GradeRecord], Usage]) -> dict[str, Any]:
        by_task: dict[str, Usage] = defaultdict(Usage)
        by_model: dict[str, Usage] = defaultdict(Usage)
        total = Usage()
        trials = {}
        for r in records:
            extra = r.model_extra or {}
            who = f"{extra.get('agent', '-')}@{extra.get('model', '-')}"
            u = usage_of(r)
            by_task[r.task_id] = by_task[r.task_id] + u
            by_model[who] = by_model[who] + u
            total = total + u
            trials[r.trial_id] = u.model_dump()
        return {
            "total": total.model_dump(),
            "by_task": {k: v.model_dump() for k, v in sorted(by_task.items())},
            "by_agent_model": {k: v.model_dump() for k, v in sorted(by_model.items())},
            "by_trial": trials,
        }

    live = breakdown(lambda r: r.usage)
    cached = breakdown(cached_usage)
    full = Usage(**live["total"]) + Usage(**cached["total"])
    return {"judge": config.identity(), **live, "cached_usage": cached, "full_pass_total": full.model_dump()}


def cached_usage(record: GradeRecord) -> Usage:
    """What the verdicts of ``record`` that were served from the verdict cache or reused
    from an earlier grade cost when first obtained (the record's ``cached_usage``; zero for
    records written before it existed)."""
    value = (record.model_extra or {}).get("cached_usage")
    if isinstance(value, Usage):
        return value
    if isinstance(value, dict):
        try:
            return Usage(**value)
        except (TypeError, ValueError):
            return Usage()
    return Usage()
