"""Running a set of trials: plan, resume, progress; the trials themselves run on an
:class:`~jobbench.runner._executor.Executor` (default: a local pool of threads).

Resume rules (the same command run again):

* a trial with a valid ``trial.json`` whose status is not ``infra_error`` and whose task
  digest equals the task's current digest is finished and skipped;
* every other trial is run from scratch: never started, interrupted (no ``trial.json``),
  infrastructure failure, unreadable record, or a task that changed since.

Infrastructure failures are retried within the invocation (``infra_retries`` times, with
backoff); a trial still failing is recorded as ``infra_error`` and retried by the next
invocation.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .. import __version__
from ..agents import AgentLimits, Endpoint, Pricing, check_protocol, make_agent, prompt_version
from ..records import TrialRecord
from ..sandbox import DEFAULT_DISK_QUOTA_MB, DeliverableLimits, default_scratch_root
from ..tasks import (
    InvalidDatasetError,
    InvalidTasks,
    Problem,
    Task,
    display_path,
    find_invalid,
    invalid_message,
    load_dataset,
    task_digest,
)
from ._executor import Executor, LocalExecutor, TrialBatch
from ._lock import RunConfigError, RunDirLock, merge_lock, read_lock, write_lock
from ._orphans import sweep_scratch
from ._plan import PlannedTrial, load_finished
from ._spec import AgentSpec
from ._trial import TrialEnv


@dataclass
class RunConfig:
    """A run: which tasks, which agents, how many epochs, where, with which limits.

    Attributes:
        dataset: dataset root (or split/occupation/task directory).
        agents: agent configurations.
        run_dir: the run directory (``runs/<run-name>``); never inside the dataset.
        epochs: trials per (task, agent configuration).
        splits, task_glob: task selection (as :func:`jobbench.tasks.load_dataset`).
        max_trials: trials run concurrently.
        limits: per-trial budget.
        endpoint, pricing: for API agents.
        sandbox: ``auto``, ``bwrap`` or ``none``.
        scratch_root: where workspaces are made (default: system temp).
        keep_workspaces: keep scratch directories.
        infra_retries: retries of infra-failed trials within this invocation.
        retry_backoff: seconds before the first retry (doubles each time, max 60).
        deliverable_limits: caps on collected deliverables.
        disk_quota_mb: per-trial quota on what the sandbox writes (workspace with
            ``output/``, HOME, ``/tmp``), MiB (default
            :data:`jobbench.sandbox.DEFAULT_DISK_QUOTA_MB`), or None for none.
        skip_invalid: run the valid tasks of a dataset with validation errors (the invalid
            ones are recorded in ``lock.json`` ``invalid_tasks`` and count as missing in the
            report); otherwise such a dataset is refused.
        protocol: ``jobbench`` (default) or ``public``: the published JobBench runners'
            prompt, budgets, retries and CLI settings (:mod:`jobbench.agents._protocol`;
            budget fields set explicitly in ``limits`` win). Recorded in ``lock.json`` and
            every ``trial.json``; a run directory never mixes protocols.
        strict: load the dataset strictly (:func:`jobbench.tasks.load_dataset`): what is
            otherwise skipped or ignored with a warning, as the public tools do (``taskN``
            directories holding no task source, malformed extension keys), is an error.
        preflight: before the first trial, make one cheap request per distinct (API, base
            URL, model) the agents of the trials to run will call
            (:meth:`jobbench.agents.Agent.preflight_targets`, :func:`jobbench.endpoint.
            preflight`); a failure raises :class:`jobbench.endpoint.PreflightError` before
            anything is written. The checks are recorded in ``preflight.json``.
            ``jobbench run`` sets it unless ``--no-preflight``.
    """

    dataset: Path
    agents: list[AgentSpec]
    run_dir: Path
    epochs: int = 1
    splits: list[str] | None = None
    task_glob: str | None = None
    max_trials: int = 1
    limits: AgentLimits = field(default_factory=AgentLimits)
    endpoint: Endpoint | None = None
    pricing: Pricing | None = None
    sandbox: Literal["auto", "bwrap", "none"] = "auto"
    scratch_root: Path | None = None
    keep_workspaces: bool = False
    infra_retries: int = 2
    retry_backoff: float = 5.0
    deliverable_limits: DeliverableLimits = field(default_factory=DeliverableLimits)
    disk_quota_mb: int | None = DEFAULT_DISK_QUOTA_MB
    skip_invalid: bool = False
    protocol: str = "jobbench"
    strict: bool = False
    preflight: bool = False


@dataclass
class RunSummary:
    """Outcome of :func:`run_trials`.

    Attributes:
        run_dir: the run directory.
        records: the record of every planned trial that has one (finished earlier or now).
        ran: trials run by this invocation; skipped: trials already finished.
        warnings: notes about the run directory (changed tasks, configuration).
        backend: sandbox backend used.
        invalid: the dataset's invalid tasks left out (``skip_invalid``), with problems.
        dataset_warnings: what loading the dataset skipped or ignored (file, JSON path,
            message), e.g. a ``taskN`` directory holding only outputs or a malformed
            extension key.
    """

    run_dir: Path
    records: list[TrialRecord]
    ran: int
    skipped: int
    warnings: list[str] = field(default_factory=list)
    backend: str = ""
    invalid: InvalidTasks = field(default_factory=InvalidTasks)
    dataset_warnings: list[Problem] = field(default_factory=list)

    def status_counts(self) -> dict[str, Counter]:
        """``{"agent@model": Counter(status -> trials)}``."""
        out: dict[str, Counter] = {}
        for r in self.records:
            key = f"{r.agent}@{r.model}"
            out.setdefault(key, Counter())[r.status.value] += 1
        return out


def plan(
    tasks: list[Task], digests: dict[str, str], agents: list[AgentSpec], epochs: int
) -> list[PlannedTrial]:
    """Every (epoch, task, agent) combination, epoch-major so that a partial run covers
    every task once before repeating."""
    return [
        PlannedTrial(t, digests[t.id], a, e)
        for e in range(1, epochs + 1)
        for t in tasks
        for a in agents
    ]


def _check_paths(dataset_root: Path, run_dir: Path) -> None:
    if run_dir.is_relative_to(dataset_root):
        raise RunConfigError(
            f"the run directory {run_dir} is inside the dataset {dataset_root}; "
            "JobBench never writes into a dataset (use --runs-dir)"
        )
    if dataset_root.is_relative_to(run_dir):
        raise RunConfigError(f"the dataset {dataset_root} is inside the run directory {run_dir}")


ProgressHook = Callable[[str, PlannedTrial, TrialRecord | None], None]


def run_trials(
    config: RunConfig,
    *,
    on_event: ProgressHook | None = None,
    cancel: threading.Event | None = None,
    executor: Executor | None = None,
    on_dataset_warnings: Callable[[list[Problem]], None] | None = None,
) -> RunSummary:
    """Run (or resume) every trial of ``config``.

    Args:
        config: the run.
        on_event: called as ``on_event(kind, trial, record)`` with kind ``plan`` (once per
            trial to run, record None), ``start``, ``retry`` and ``end`` (record set, or None
            when interrupted); ``start``/``retry`` may come from other threads.
        on_dataset_warnings: called once, before any trial, with the dataset's warnings
            when there are any (also in :attr:`RunSummary.dataset_warnings`).
        cancel: set it (e.g. on Ctrl-C) to stop: running sandboxes are killed and
            unfinished trials are left without a record.
        executor: where trials run (default: :class:`LocalExecutor` with
            ``config.max_trials`` threads; see :mod:`jobbench.runner._executor`). The caller
            keeps ownership (it is not closed here).

    Returns:
        :class:`RunSummary`.

    Raises:
        RunConfigError: bad selection, an unknown protocol, a disk quota that is not
            positive, or a run directory that cannot
            be used (another dataset, agent settings or protocol).
        FileNotFoundError: the dataset does not exist.
        KeyError: unknown agent.
        ExecutorError: the executor cannot run this run (e.g. Dask workers that cannot see
            the run directory).
        PreflightError: ``config.preflight`` and an endpoint refused the preflight request
            or did not answer (nothing was run or written).
    """
    dataset_root = Path(os.path.abspath(config.dataset))
    run_dir = Path(os.path.abspath(config.run_dir))
    _check_paths(dataset_root, run_dir)
    if not config.agents:
        raise RunConfigError("no agent given")
    if config.disk_quota_mb is not None and config.disk_quota_mb <= 0:
        raise RunConfigError(f"disk_quota_mb must be greater than 0, got {config.disk_quota_mb}")
    try:
        protocol = check_protocol(config.protocol)
    except ValueError as exc:
        raise RunConfigError(str(exc)) from None
    agents = {}
    for spec in config.agents:
        agent = make_agent(spec.agent, **spec.options)
        if agent.needs_model and not spec.model:
            raise RunConfigError(f"agent {spec.agent} needs a --model")
        agents[spec.label] = agent
    if len(agents) != len(config.agents):
        raise RunConfigError("the same agent@model is listed twice")
    if config.epochs < 1:
        raise RunConfigError("--epochs must be at least 1")
    ds = load_dataset(
        dataset_root, splits=config.splits, task_glob=config.task_glob, strict=config.strict
    )
    invalid = find_invalid(ds, splits=config.splits, task_glob=config.task_glob)
    if invalid and not config.skip_invalid:
        raise InvalidDatasetError(invalid_message(invalid, display_path(dataset_root)), invalid)
    if ds.warnings and on_dataset_warnings is not None:
        on_dataset_warnings(ds.warnings)
    if not ds.tasks:
        what = f" matching {config.task_glob!r}" if config.task_glob else ""
        raise RunConfigError(
            f"no valid task{what} in {display_path(dataset_root)}"
            + (f" ({len(ds.errors)} invalid; run `jobbench validate`)" if ds.errors else "")
        )
    executor = executor or LocalExecutor(config.max_trials)
    scratch = Path(os.path.abspath(config.scratch_root or default_scratch_root()))
    for forbidden in (dataset_root, run_dir):
        if scratch.is_relative_to(forbidden):
            raise RunConfigError(f"scratch directory {scratch} is inside {forbidden}")
    prep = executor.prepare(
        run_dir=run_dir,
        dataset_root=dataset_root,
        sandbox=config.sandbox,
        scratch_root=Path(os.path.abspath(config.scratch_root)) if config.scratch_root else None,
    )
    backend = prep.backend
    digests = {t.id: task_digest(t) for t in ds.tasks}
    cfg_record: dict[str, Any] = {
        "limits": config.limits.model_dump(),
        "prompt_version": prompt_version(protocol),
        "splits": config.splits,
        "task_glob": config.task_glob,
        "endpoint": _public_url(config.endpoint.base_url)
        if config.endpoint and config.endpoint.base_url
        else None,
        "pricing": config.pricing.model_dump() if config.pricing else None,
        "deliverable_limits": vars(config.deliverable_limits),
        "agents": {label: a.describe() for label, a in agents.items()},
    }
    if config.strict:  # only when set: earlier runs resume without a config-change warning
        cfg_record["strict"] = True
    env = TrialEnv(
        run_dir=run_dir,
        dataset_root=dataset_root,
        limits=config.limits,
        backend=backend,
        scratch_root=scratch,
        keep_workspaces=config.keep_workspaces,
        deliverable_limits=config.deliverable_limits,
        endpoint=config.endpoint,
        pricing=config.pricing,
        cancel=cancel or threading.Event(),
        protocol=protocol,
        disk_quota_mb=config.disk_quota_mb,
    )
    batch = TrialBatch(
        env=env,
        agents=agents,
        infra_retries=config.infra_retries,
        retry_backoff=config.retry_backoff,
        scratch_explicit=config.scratch_root is not None,
    )
    trials = plan(ds.tasks, digests, config.agents, config.epochs)
    preflight = None
    if config.preflight:  # before anything is written; the plan is read again under the lock
        unfinished = [pt for pt in trials if load_finished(run_dir, pt.trial_id, pt.digest) is None]
        preflight = _preflight(config, agents, unfinished)
    run_dir.mkdir(parents=True, exist_ok=True)
    with RunDirLock(run_dir):
        done: dict[str, TrialRecord] = {}
        todo: list[PlannedTrial] = []
        for pt in trials:
            rec = load_finished(run_dir, pt.trial_id, pt.digest)
            if rec is not None:
                done[pt.trial_id] = rec
            else:
                todo.append(pt)
        lock, warnings = merge_lock(
            read_lock(run_dir),
            harness_version=__version__,
            dataset_root=dataset_root,
            digests=digests,
            agents=config.agents,
            epochs=config.epochs,
            config=cfg_record,
            sandbox=backend,
            pending=len(todo),
            invalid=invalid.lock_entries(),
            dataset_problems=[str(p) for p in invalid.other],
            protocol=protocol,
        )
        warnings = prep.notes + warnings
        write_lock(run_dir, lock)
        if preflight is not None:
            from ..rundir import RunDir

            RunDir(run_dir).add_preflight(preflight)
        swept = sweep_scratch(scratch)  # leftover sandboxes and workspaces of interrupted runs
        if swept_warning := swept.warning():
            warnings.append(swept_warning)
        for pt in todo:
            if on_event:
                on_event("plan", pt, None)

        ran = 0

        def on_result(pt: PlannedTrial, rec: TrialRecord | None) -> None:
            nonlocal ran
            if rec is not None:
                done[pt.trial_id] = rec
                ran += 1
            if on_event:
                on_event("end", pt, rec)

        try:
            executor.run_trials(todo, batch, on_event=on_event, on_result=on_result)
        except BaseException:
            env.cancel.set()
            executor.abort()
            raise
        warnings += executor.drain_warnings()
    records = [done[pt.trial_id] for pt in trials if pt.trial_id in done]
    return RunSummary(
        run_dir=run_dir,
        records=records,
        ran=ran,
        skipped=len(trials) - len(todo),
        warnings=warnings,
        backend=backend,
        invalid=invalid,
        dataset_warnings=ds.warnings,
    )


def _preflight(config: RunConfig, agents: dict, todo: list[PlannedTrial]) -> dict | None:
    """Preflight the endpoints of the agents of ``todo`` (nothing to run: no request).

    Returns:
        The record for ``preflight.json`` (with ``at``), or None when no agent calls a
        model API.

    Raises:
        PreflightError: a check failed.
    """
    from ..endpoint import preflight, preflight_record

    targets = []
    for label in dict.fromkeys(pt.spec.label for pt in todo):
        spec = next(s for s in config.agents if s.label == label)
        targets += agents[label].preflight_targets(spec.model, config.endpoint)
    if not targets:
        return None
    checks = preflight(targets)
    record = preflight_record(checks)
    if config.pricing is not None:
        record["cost_usd"] = round(
            (
                record["input_tokens"] * config.pricing.input_per_mtok
                + record["output_tokens"] * config.pricing.output_per_mtok
            )
            / 1e6,
            6,
        )
    from ._lock import now_iso

    return {"at": now_iso(), **record}


def _public_url(url: str) -> str:
    """``url`` without user-info (credentials are never recorded)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
