"""``lock.json`` (what a run was made of) and the exclusive lock on a run directory."""

from __future__ import annotations

import fcntl
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .._io import atomic_write_json
from ._paths import LOCK_FILE, AgentSpec


class RunConfigError(ValueError):
    """The run directory cannot be (re)used with this configuration."""


def now_iso() -> str:
    """UTC time, ISO 8601 with seconds."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def read_lock(run_dir: Path) -> dict[str, Any] | None:
    """The parsed ``lock.json`` of ``run_dir``, or None when absent.

    Raises:
        RunConfigError: the file exists but is not a JSON object (names the file).
    """
    p = run_dir / LOCK_FILE
    if not p.exists():
        return None
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RunConfigError(f"{p}: not valid JSON (line {exc.lineno}: {exc.msg})") from exc
    if not isinstance(data, dict):
        raise RunConfigError(f"{p}: expected a JSON object")
    return data


def merge_lock(
    existing: dict[str, Any] | None,
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
) -> tuple[dict[str, Any], list[str]]:
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

    Returns:
        ``(lock, warnings)``.

    Raises:
        RunConfigError: dataset root or agent settings conflict.
    """
    warnings: list[str] = []
    entries = [a.lock_entry() for a in agents]
    config = {k: v for k, v in config.items() if k != "sandbox"}
    if existing is None:
        return {
            "harness_version": harness_version,
            "created_at": now_iso(),
            "updated_at": now_iso(),
            "dataset_root": str(dataset_root),
            "tasks": dict(sorted(digests.items())),
            "agents": entries,
            "epochs": epochs,
            "config": config,
            "sandboxes": [sandbox] if sandbox and pending else [],
            "invalid_tasks": dict(sorted((invalid or {}).items())),
            "dataset_problems": list(dataset_problems or []),
        }, warnings
    lock = dict(existing)
    old_root = lock.get("dataset_root")
    if old_root and os.path.abspath(old_root) != str(dataset_root):
        raise RunConfigError(f"this run directory was made from dataset {old_root}, not {dataset_root}; "
                             "use another --run-name")
    old_agents = {(a.get("agent"), a.get("model")): a for a in lock.get("agents", []) if isinstance(a, dict)}
    merged = list(lock.get("agents", []))
    for e in entries:
        key = (e["agent"], e["model"])
        if key in old_agents:
            if (old_agents[key].get("settings") or {}) != e["settings"]:
                raise RunConfigError(
                    f"{e['agent']}@{e['model']} already ran here with settings {old_agents[key].get('settings')}, "
                    f"not {e['settings']}; use another --run-name for a different configuration")
        else:
            merged.append(e)
    tasks = dict(lock.get("tasks") or {})
    for tid, d in digests.items():
        if tid in tasks and tasks[tid] != d:
            warnings.append(f"task {tid} changed since it was run (digest {tasks[tid][:12]} → {d[:12]}); "
                            "its trials will be re-run")
        tasks[tid] = d
    old_invalid = lock.get("invalid_tasks")
    merged_invalid = {k: v for k, v in (old_invalid.items() if isinstance(old_invalid, dict) else [])
                      if k not in digests}
    for tid, entry in (invalid or {}).items():
        if tid in tasks:
            warnings.append(f"task {tid} was run before and is now invalid; its earlier trials are left out of the "
                            "report")
            del tasks[tid]
        merged_invalid[tid] = entry
    if lock.get("harness_version") != harness_version:
        warnings.append(f"run started with harness {lock.get('harness_version')}, continuing with {harness_version}")
    old_cfg = lock.get("config") or {}
    diff = sorted(k for k in set(old_cfg) | set(config) if k != "sandbox" and old_cfg.get(k) != config.get(k))
    if diff:
        warnings.append(f"run configuration differs from the previous invocation in: {', '.join(diff)}")
    used = lock.get("sandboxes")
    if not isinstance(used, list):  # a lock written before per-trial sandboxes: its config says
        used = [old_cfg["sandbox"]] if isinstance(old_cfg.get("sandbox"), str) else []
    if sandbox and pending:
        others = [b for b in used if b != sandbox]
        if others:
            how = "without a sandbox" if sandbox == "none" else f"in sandbox {sandbox}"
            warnings.append(f"this invocation runs {pending} trial(s) {how} while earlier trials of this run used "
                            f"{', '.join(others)}: the run mixes sandbox settings (each trial.json records its own; "
                            "the report warns); use another --run-name to keep them apart")
        used = sorted(set(used) | {sandbox})
    lock.update(
        harness_version=harness_version,
        updated_at=now_iso(),
        dataset_root=str(dataset_root),
        tasks=dict(sorted(tasks.items())),
        agents=merged,
        epochs=max(int(lock.get("epochs") or 0), epochs),
        config=config,
        sandboxes=used,
        invalid_tasks=dict(sorted(merged_invalid.items())),
        dataset_problems=list(dataset_problems or []),
    )
    return lock, warnings


def write_lock(run_dir: Path, lock: dict[str, Any]) -> None:
    """Write ``lock.json`` atomically."""
    atomic_write_json(run_dir / LOCK_FILE, lock)


class RunDirLock:
    """An exclusive ``flock`` on ``<run_dir>/.run.lock`` held while a run executes, so two
    processes never run trials of the same run directory at once. The kernel releases it
    when the process dies (even by SIGKILL).

    Raises:
        RunConfigError: another process holds the lock.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / ".run.lock"
        self._fd: int | None = None

    def __enter__(self) -> "RunDirLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.read(fd, 64).decode(errors="replace").strip()
            os.close(fd)
            raise RunConfigError(f"{self.path.parent} is in use by another jobbench run (pid {other or '?'})") from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
