"""``lock.json`` (what a run was made of) and the exclusive lock on a run directory."""

from __future__ import annotations

import fcntl
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..rundir import InvalidTaskEntry, LockConfig, RunDir, RunLock
from ._spec import AgentSpec


class RunConfigError(ValueError):
    """The run directory cannot be (re)used with this configuration."""


def now_iso() -> str:
    """UTC time, ISO 8601 with seconds."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_lock(run_dir: Path) -> RunLock | None:
    """The ``lock.json`` of ``run_dir``, or None when absent.

    Raises:
        RunConfigError: the file exists but cannot be used (names the file and field).
    """
    loaded = RunDir(run_dir).read_lock()
    if loaded.missing:
        return None
    if loaded.record is None:
        raise RunConfigError("\n".join(str(p) for p in loaded.problems))
    return loaded.record


def merge_lock(
    existing: RunLock | None,
    *,
    harness_version: str,
    dataset_root: Path,
    digests: dict[str, str],
    agents: list[AgentSpec],
    epochs: int,
    config: dict[str, Any],
    sandbox: str | None = None,
    pending: int = 0,
    invalid: dict[str, dict[str, Any]] | None = None,
    dataset_problems: list[str] | None = None,
    protocol: str = "jobbench",
) -> tuple[RunLock, list[str]]:
    """The lock content for this invocation, merged with a previous one.

    Rules: the dataset root must be the same; an ``agent@model`` already in the run must
    have the same settings (a different setting is a different configuration: use another
    run name); new agents and tasks are added; changed task digests are updated (their
    trials are re-run); ``epochs`` is the maximum; ``config`` is replaced, with a warning
    when it differs.

    The sandbox is not part of ``config`` (a resume must not silently relabel trials that
    ran in another sandbox): each ``trial.json`` records its own, and ``sandboxes`` lists
    every backend that ran trials of this run. ``sandbox`` is added to it only when this
    invocation has ``pending`` trials to run; a backend not used before gives a warning.

    ``invalid`` (task id → ``{"problems", "max_points"}``) is merged into
    ``invalid_tasks``: entries of tasks valid in this invocation are dropped, a task invalid
    now is removed from ``tasks`` (with a warning when it had been run); ``dataset_problems``
    (errors outside any task) replaces the previous list.

    ``protocol`` must be the run's (a lock without one is a run made before protocols, under
    ``jobbench``): trials of two protocols are never mixed in one run directory.

    Returns:
        ``(lock, warnings)``.

    Raises:
        RunConfigError: dataset root, agent settings or protocol conflict.
    """
    warnings: list[str] = []
    entries = [a.lock_entry() for a in agents]
    cfg = LockConfig.model_validate({k: v for k, v in config.items() if k != "sandbox"})
    bad = {k: InvalidTaskEntry.model_validate(v) for k, v in (invalid or {}).items()}
    if existing is None:
        now = now_iso()
        return RunLock(
            harness_version=harness_version,
            created_at=now,
            updated_at=now,
            dataset_root=str(dataset_root),
            tasks=dict(sorted(digests.items())),
            agents=entries,
            epochs=epochs,
            config=cfg,
            sandboxes=[sandbox] if sandbox and pending else [],
            invalid_tasks=dict(sorted(bad.items())),
            dataset_problems=list(dataset_problems or []),
            protocol=protocol,
        ), warnings
    old_root = existing.dataset_root
    if old_root and os.path.abspath(old_root) != str(dataset_root):
        raise RunConfigError(
            f"this run directory was made from dataset {old_root}, not {dataset_root}; "
            "use another --run-name"
        )
    old_protocol = existing.protocol or "jobbench"
    if old_protocol != protocol:
        raise RunConfigError(
            f"this run directory holds trials run under protocol {old_protocol!r}, not "
            f"{protocol!r}; one run directory never mixes protocols: use another --run-name "
            f"(or --protocol {old_protocol} to resume it)"
        )
    old_agents = {(a.agent, a.model): a for a in existing.agents}
    merged = list(existing.agents)
    for e in entries:
        key = (e.agent, e.model)
        if key in old_agents:
            if old_agents[key].settings != e.settings:
                raise RunConfigError(
                    f"{e.agent}@{e.model} already ran here with settings "
                    f"{old_agents[key].settings}, not {e.settings}; use another --run-name for a "
                    "different configuration"
                )
        else:
            merged.append(e)
    tasks = dict(existing.tasks)
    for tid, d in digests.items():
        if tid in tasks and tasks[tid] != d:
            warnings.append(
                f"task {tid} changed since it was run (digest {tasks[tid][:12]} → {d[:12]}); "
                "its trials will be re-run"
            )
        tasks[tid] = d
    merged_invalid = {k: v for k, v in existing.invalid_tasks.items() if k not in digests}
    for tid, entry in bad.items():
        if tid in tasks:
            warnings.append(
                f"task {tid} was run before and is now invalid; its earlier trials are left out of the "
                "report"
            )
            del tasks[tid]
        merged_invalid[tid] = entry
    if existing.harness_version != harness_version:
        warnings.append(
            f"run started with harness {existing.harness_version}, continuing with "
            f"{harness_version}"
        )
    old_cfg, new_cfg = existing.config.model_dump(), cfg.model_dump()
    diff = sorted(k for k in set(old_cfg) | set(new_cfg) if old_cfg.get(k) != new_cfg.get(k))
    if diff:
        warnings.append(
            f"run configuration differs from the previous invocation in: {', '.join(diff)}"
        )
    used = list(existing.sandboxes)
    if sandbox and pending:
        others = [b for b in used if b != sandbox]
        if others:
            how = "without a sandbox" if sandbox == "none" else f"in sandbox {sandbox}"
            warnings.append(
                f"this invocation runs {pending} trial(s) {how} while earlier trials of this run used "
                f"{', '.join(others)}: the run mixes sandbox settings (each trial.json records its own; "
                "the report warns); use another --run-name to keep them apart"
            )
        used = sorted(set(used) | {sandbox})
    lock = existing.model_copy(
        update=dict(
            harness_version=harness_version,
            updated_at=now_iso(),
            dataset_root=str(dataset_root),
            tasks=dict(sorted(tasks.items())),
            agents=merged,
            epochs=max(existing.epochs, epochs),
            config=cfg,
            sandboxes=used,
            invalid_tasks=dict(sorted(merged_invalid.items())),
            dataset_problems=list(dataset_problems or []),
            protocol=protocol,
        )
    )
    return lock, warnings


def write_lock(run_dir: Path, lock: RunLock) -> None:
    """Write ``lock.json`` atomically (:meth:`jobbench.rundir.RunDir.write_lock`)."""
    RunDir(run_dir).write_lock(lock)


class RunDirLock:
    """An exclusive ``flock`` on the run directory's ``.run.lock`` held while a run executes,
    so two processes never run trials of the same run directory at once. The kernel
    releases it when the process dies (even by SIGKILL).

    Raises:
        RunConfigError: another process holds the lock.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = RunDir(run_dir).flock_file
        self._fd: int | None = None

    def __enter__(self) -> RunDirLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.read(fd, 64).decode(errors="replace").strip()
            os.close(fd)
            raise RunConfigError(
                f"{self.path.parent} is in use by another jobbench run (pid {other or '?'})"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
