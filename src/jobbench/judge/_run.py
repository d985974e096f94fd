"""Grading a run directory (layout and rules: :mod:`jobbench.rundir`) and summarising judge
usage."""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..deliverable_policy import excluded
from ..records import GradeRecord, PrefixCacheable, TrialRecord, TrialStatus, Usage
from ..rundir import RunDir, RunDirError, RunDirProblem, RunLock
from ..tasks import Dataset, display_path, load_dataset, task_digest
from ._config import JudgeConfig
from ._grade import Grader, TrialInput, inputs_digest

UP_TO_DATE = ("complete", "unjudged", "no_deliverable")
"""Grade statuses that need no regrade while the grade's ``inputs_digest`` still matches
(``judge_error`` grades are always regraded)."""


def read_lock(run_dir: Path) -> RunLock:
    """``lock.json`` of a run directory.

    Raises:
        RunDirError: missing or invalid, naming the file and field.
    """
    return RunDir(run_dir).read_lock().get()


def finished_trials(run_dir: Path) -> list[TrialRecord]:
    """Every finished trial's record (``trials/<trial_id>/trial.json``), sorted by trial id.
    A record whose identity does not match its folder is left out with a warning on stderr.

    Raises:
        RunDirError: a trial.json cannot be read or is not a valid TrialRecord (naming every
            file and field).
    """
    scan = RunDir(run_dir).trials()
    fatal = [p for p in scan.problems if p.kind == "corrupt"]
    if fatal:
        raise RunDirError(fatal)
    for p in scan.problems:
        print(f"warning: {p}; not graded", file=sys.stderr)
    return list(scan.records.values())


def grade_path(run_dir: Path, config: JudgeConfig, trial_id: str) -> Path:
    """``grades/<judge-key>/<trial_id>.json`` (:meth:`jobbench.rundir.RunDir.grade_file`)."""
    return RunDir(run_dir).grade_file(config.key, trial_id)


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
    judge identity) matches and its status is ``complete``, ``unjudged`` or
    ``no_deliverable`` (:data:`UP_TO_DATE`). A grade with
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
        in total), beside the key folder.

    Raises:
        RunDirError: missing/invalid ``lock.json`` or ``trial.json``.
        FileNotFoundError: the dataset cannot be found.
    """
    rd = RunDir(run_dir)
    run_dir = rd.root
    lock = read_lock(run_dir)
    if dataset is None:
        if not lock.dataset_root:
            raise RunDirError(RunDirProblem(rd.lock_file, "corrupt", "missing", "dataset_root"))
        dataset = load_dataset(lock.dataset_root, strict=lock_strict(lock))
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
                skipped.append(
                    f"{trial.trial_id}: task {trial.task_id} is invalid in the dataset "
                    f"({len(invalid[trial.task_id])} problem(s); see `jobbench validate`); "
                    "not graded"
                )
            else:
                skipped.append(f"{trial.trial_id}: task {trial.task_id} not in the dataset")
            continue
        if task.id not in digests:
            digests[task.id] = task_digest(task)
        deliverables = rd.deliverables(trial.trial_id)
        deliverables_dir = deliverables.dir
        if deliverables.problem is not None:
            removed = ""
            # a grade of files that are no longer the trial's must not be reported
            if rd.remove_grade(config.key, trial.trial_id):
                stale = display_path(rd.grade_file(config.key, trial.trial_id))
                removed = f"; its earlier grade {stale} was removed"
            skipped.append(
                f"{trial.trial_id}: {display_path(deliverables_dir)} "
                f"{deliverables.problem.message}; not graded{removed}"
            )
            continue
        manifest = deliverables.manifest()
        # files collected before the deliverable policy (dotfiles, junk) are not deliverables
        recorded = sorted(
            (d.path, d.sha256) for d in trial.deliverables if excluded(d.path) is None
        )
        if manifest != recorded:
            changed = sorted(set(manifest).symmetric_difference(recorded))
            names = sorted({path for path, _ in changed})
            print(
                f"warning: {display_path(deliverables_dir)}: {len(names)} deliverable(s) "
                "differ from those recorded when the trial ran "
                f"({', '.join(names[:5])}{' …' if len(names) > 5 else ''}); "
                "grading the files as they are now",
                file=sys.stderr,
            )
        dig = inputs_digest(digests[task.id], manifest, config)
        # an unreadable or foreign grade file is regraded (and replaced)
        prior = rd.read_grade(config.key, trial.trial_id).record
        prior_dig = prior.inputs_digest if prior else None
        if prior is not None and not force and prior_dig == dig and prior.status in UP_TO_DATE:
            current[trial.trial_id] = prior
            continue
        inputs.append(
            TrialInput(
                trial_id=trial.trial_id,
                task=task,
                deliverables_dir=deliverables_dir,
                epoch=trial.epoch,
                out_path=rd.grade_file(config.key, trial.trial_id),
                prior=prior if prior_dig == dig else None,
                save=rd.grade_writer(config.key),
                extra={
                    "inputs_digest": dig,
                    "agent": trial.agent,
                    "model": trial.model,
                    "task_digest": digests[task.id],
                    "trial_status": trial.status.value,
                    "task_digest_changed": lock.tasks.get(task.id) not in (None, digests[task.id]),
                },
            )
        )
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
    rd.write_usage(config.key, usage_summary(records, config))
    return records


def lock_strict(lock: RunLock) -> bool:
    """Whether the run of ``lock`` loaded its dataset strictly (``config.strict``, written
    by ``jobbench run --strict``)."""
    return lock.config.strict is True


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

    rd = RunDir(run_dir)
    lock = rd.read_lock().record
    if lock is None or not lock.dataset_root:
        return None, set()
    try:
        strict = lock_strict(lock) if strict is None else strict
        dataset = load_dataset(lock.dataset_root, strict=strict)
    except (OSError, ValueError):
        return None, set()
    invalid = find_invalid(dataset)
    trial_tasks = {rec.task_id for rec in rd.trials().records.values()}
    hit = sorted(t for t in invalid.tasks if t in trial_tasks)
    for tid in hit:
        err.print(
            f"[yellow]warning:[/yellow] task {escape(tid)} is invalid in the dataset now, "
            "so its trials are not graded; fix it and grade again:",
            highlight=False,
        )
        for p in invalid.tasks[tid]:
            err.print(f"  {escape(str(p))}", highlight=False)
    return dataset, set(hit)


def usage_summary(records: list[GradeRecord], config: JudgeConfig) -> dict[str, Any]:
    """Judge usage totals per trial, task, agent@model and overall (kept apart from the
    agents' own usage), as written to ``grades/<key>.usage.json``.

    ``total``, ``by_task``, ``by_agent_model`` and ``by_trial`` are what the grading that
    produced each current record actually spent (a verdict served from the cache or reused
    from an earlier grade costs 0 there). ``cached_usage`` has the same four keys for what
    those cached or reused verdicts cost when they were first obtained (from each record's
    ``cached_usage``), and ``full_pass_total`` = ``total`` + ``cached_usage.total``: the cost
    of every verdict of the current records, i.e. of a full grading pass. ``prefix_cacheable``
    is the :class:`jobbench.records.PrefixCacheable` total of the calls behind ``total``.
    """

    def breakdown(usage_of: Callable[[GradeRecord], Usage]) -> dict[str, Any]:
        by_task: dict[str, Usage] = defaultdict(Usage)
        by_model: dict[str, Usage] = defaultdict(Usage)
        total = Usage()
        trials = {}
        for r in records:
            who = f"{r.agent or '-'}@{r.model or '-'}"
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
    return {
        "judge": config.identity(),
        **live,
        "cached_usage": cached,
        "full_pass_total": full.model_dump(),
        "prefix_cacheable": sum(
            (prefix_cacheable_input(r) for r in records), PrefixCacheable()
        ).model_dump(),
    }


def cached_usage(record: GradeRecord) -> Usage:
    """What the verdicts of ``record`` that were served from the verdict cache or reused
    from an earlier grade cost when first obtained (the record's ``cached_usage``; zero for
    records written before it existed)."""
    return record.cached_usage


def prefix_cacheable_input(record: GradeRecord) -> PrefixCacheable:
    """How much of the prompts of the calls the grading of ``record`` made a provider's
    prompt-prefix cache could have served: the sum of its units' ``prefix_cacheable`` (zero
    for records written before it existed, and for verdicts served from the verdict cache or
    reused, which made no call)."""
    return sum((u.prefix_cacheable for u in record.units), PrefixCacheable())
