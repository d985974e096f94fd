"""``jobbench import harbor JOB_DIR RUN_DIR``: a Harbor job's trials as a JobBench run.

A Harbor job directory (``harbor`` 0.26, ``harbor/models/trial/paths.py``) holds the job's
``config.json`` and ``result.json`` and one folder per trial::

    <trial_name>/config.json  result.json  exception.txt  trial.log
                 agent/  verifier/reward.json  artifacts/workspace/output/…

Harbor is never imported: each trial's ``result.json`` is read (a regular file, never
through a symbolic link, at most :data:`MAX_JSON_BYTES`) and validated with the models
below, which declare only the fields used here. The deliverables are the files Harbor
collected from the exported tasks' output folder (:data:`._layout.OUTPUT_ARTIFACT_DIR`),
copied with :func:`jobbench.sandbox.collect_deliverables` (no link followed, the
deliverable policy and caps applied).
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ._layout import MANIFEST_FILE, OUTPUT_ARTIFACT_DIR, task_dir_name, task_id_of
from ._status import trial_status

MAX_JSON_BYTES = 16 * 1024 * 1024
"""The largest ``result.json`` (or export manifest) read, in bytes."""

RESULT_FILE = "result.json"
SANDBOX = "harbor"
"""The ``sandbox`` of imported trials (Harbor chose the environment)."""

_AGENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_TIMINGS = ("environment_setup", "agent_setup", "agent_execution", "verifier")

_PART = ConfigDict(extra="ignore")


class HarborImportError(ValueError):
    """The job cannot be imported; the message lists every problem (one per line)."""


class _Timing(BaseModel):
    model_config = _PART
    started_at: datetime | None = None
    finished_at: datetime | None = None


class _ModelInfo(BaseModel):
    model_config = _PART
    name: str = Field(min_length=1, max_length=200)
    provider: str | None = Field(default=None, max_length=100)


class _AgentInfo(BaseModel):
    model_config = _PART
    name: str
    version: str | None = Field(default=None, max_length=200)
    model_info: _ModelInfo | None = None


class _AgentResult(BaseModel):
    model_config = _PART
    n_input_tokens: int | None = Field(default=None, ge=0)
    n_cache_tokens: int | None = Field(default=None, ge=0)
    n_output_tokens: int | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)


class _ExceptionInfo(BaseModel):
    model_config = _PART
    exception_type: str = Field(min_length=1, max_length=200)
    exception_message: str = ""


class _VerifierResult(BaseModel):
    model_config = _PART
    rewards: dict[str, Any] | None = None


class HarborTrialResult(BaseModel):
    """The fields of Harbor's ``TrialResult`` (a trial's ``result.json``) the import uses."""

    model_config = _PART
    task_name: str
    trial_name: str
    agent_info: _AgentInfo
    agent_result: _AgentResult | None = None
    verifier_result: _VerifierResult | None = None
    exception_info: _ExceptionInfo | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    environment_setup: _Timing | None = None
    agent_setup: _Timing | None = None
    agent_execution: _Timing | None = None
    verifier: _Timing | None = None


@dataclass
class ImportResult:
    """What :func:`import_harbor_job` did: the ``run_dir``, the trial ids written (sorted)
    and the judge key the trials were graded under."""

    run_dir: Path
    trial_ids: list[str] = field(default_factory=list)
    judge_key: str = ""


def _read_json(root_fd: int, rel: str) -> Any:
    """The JSON of the regular file ``rel`` below ``root_fd`` (no link followed)."""
    from ...sandbox import safefs

    data = safefs.read_bytes(root_fd, rel, limit=MAX_JSON_BYTES + 1)
    if len(data) > MAX_JSON_BYTES:
        raise ValueError(f"larger than {MAX_JSON_BYTES} bytes")
    return json.loads(data.decode("utf-8"))


def _trial_folders(job_dir: Path, root_fd: int) -> list[str]:
    """Names of the trial folders of the job: real directories (not links) with a
    ``result.json`` entry, sorted (a link there is kept, so that reading it refuses it)."""
    names = []
    for name in sorted(os.listdir(root_fd)):
        st = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode):
            continue
        try:
            rst = os.stat(f"{name}/{RESULT_FILE}", dir_fd=root_fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(rst.st_mode) or stat.S_ISLNK(rst.st_mode):
            names.append(name)
    return names


def _seconds(t: _Timing | None) -> float | None:
    if t is None or t.started_at is None or t.finished_at is None:
        return None
    return round((t.finished_at - t.started_at).total_seconds(), 3)


def _iso(d: datetime | None) -> str | None:
    return d.isoformat() if d else None


def _model(r: HarborTrialResult) -> str | None:
    mi = r.agent_info.model_info
    if mi is None:
        return None
    return f"{mi.provider}/{mi.name}" if mi.provider else mi.name


def _output_problem(job: Path, name: str) -> str | None:
    """Why the trial's collected output folder must not be read (a symbolic link or not a
    folder on the way below ``job``), or None (a real folder, or absent). The copy itself
    (:func:`jobbench.sandbox.collect_deliverables`) opens the folder again without
    following its last component and walks it without following any link."""
    from ...sandbox import safefs

    fd = safefs.open_root(job)
    try:
        os.close(safefs.open_dir(fd, [name, "artifacts", *OUTPUT_ARTIFACT_DIR.parts]))
    except FileNotFoundError:
        return None
    except (OSError, safefs.UnsafePath) as exc:
        return str(exc) or "not readable"
    finally:
        os.close(fd)
    return None


def _export_manifest(root_fd: int, trials: list[str]) -> dict[str, Any]:
    """The manifest of the export the job ran (:data:`._layout.MANIFEST_FILE` beside the
    task folder named by the first readable trial ``config.json``), or ``{}``."""
    from ...sandbox import safefs

    for name in trials:
        try:
            cfg = _read_json(root_fd, f"{name}/config.json")
            task_path = Path(cfg["task"]["path"])
            fd = safefs.open_root(task_path.parent)
            try:
                manifest = _read_json(fd, MANIFEST_FILE)
            finally:
                os.close(fd)
        except (OSError, ValueError, KeyError, TypeError, safefs.UnsafePath):
            continue
        if isinstance(manifest, dict):
            return manifest
    return {}


def import_harbor_job(
    job_dir: Path | str,
    run_dir: Path | str,
    *,
    dataset: Path | str | None = None,
    judge: Any = None,
) -> ImportResult:
    """Write a Harbor job as a JobBench run directory and grade it.

    One trial per Harbor trial folder: its task from the Harbor task name
    (:func:`._layout.task_id_of`), agent = Harbor's agent name, model = ``provider/name`` of
    its model info (``-`` without one), epoch = the trial's position among the trials of the
    same task, agent and model ordered by start time then name; status by
    :func:`._status.trial_status` (an infrastructure or verifier exception is
    ``infra_error``, never graded). ``details`` keeps Harbor's trial name, agent version,
    exception and the seconds of each phase (``harbor_timings``:
    environment_setup, agent_setup, agent_execution, verifier). Then every trial is graded
    with :func:`jobbench.judge.grade_run`.

    Args:
        job_dir: the Harbor job directory (untrusted content).
        run_dir: a new or empty folder for the run.
        dataset: the JobBench dataset the job's tasks were exported from (default: the
            ``dataset_root`` of the export's manifest).
        judge: a :class:`jobbench.judge.JudgeConfig` (default: checks only).

    Returns:
        :class:`ImportResult`.

    Raises:
        HarborImportError: the job has no trial, a trial is unreadable or invalid (bad
            JSON, an unknown task, an agent name that is not ``[A-Za-z0-9._-]``, a trial
            name that is not its folder's), the dataset is missing or lacks a task, or
            a task's digest differs from the one the export's manifest recorded (the tasks
            changed since the export), or ``run_dir`` is not empty. Nothing is written then.
    """
    from ... import __version__
    from ...judge import JudgeConfig, grade_run
    from ...records import TrialRecord, TrialStatus, Usage
    from ...rundir import LockAgent, LockConfig, RunDir, RunLock, UnsafeIdError, trial_id
    from ...sandbox import collect_deliverables, safefs
    from ...tasks import display_path, load_dataset, task_digest

    job = Path(job_dir)
    run = Path(os.path.abspath(run_dir))
    try:
        root_fd = safefs.open_root(job)
    except (OSError, safefs.UnsafePath) as exc:
        raise HarborImportError(f"{display_path(job)}: {exc}") from exc
    problems: list[str] = []
    parsed: list[tuple[str, HarborTrialResult, str]] = []
    try:
        names = _trial_folders(job, root_fd)
        for name in names:
            where = f"{name}/{RESULT_FILE}"
            try:
                res = HarborTrialResult.model_validate(_read_json(root_fd, where))
            except (OSError, ValueError, safefs.UnsafePath) as exc:
                msg = str(exc).splitlines()[0] if not isinstance(exc, ValidationError) else exc
                problems.append(f"{where}: {msg}")
                continue
            tid = task_id_of(res.task_name)
            if res.trial_name != name:
                problems.append(f"{where}: trial_name {res.trial_name!r} is not the folder's")
            elif tid is None:
                problems.append(f"{where}: {res.task_name!r} is not an exported JobBench task")
            elif not _AGENT_NAME.fullmatch(res.agent_info.name):
                problems.append(f"{where}: agent name {res.agent_info.name!r} is not safe")
            else:
                parsed.append((name, res, tid))
        if not names:
            problems.append(f"{display_path(job)}: no trial folder with a {RESULT_FILE}")
        manifest = _export_manifest(root_fd, names)
    finally:
        os.close(root_fd)
    named = manifest.get("dataset_root")
    root = Path(dataset) if dataset else Path(named) if isinstance(named, str) else None
    protocol = manifest.get("protocol")
    protocol = protocol if protocol in ("public", "jobbench") else "public"
    if root is None:
        problems.append("no --dataset given and the export's manifest names none")
    if problems:
        raise HarborImportError("\n".join(problems))
    assert root is not None
    try:
        ds = load_dataset(root)
    except (FileNotFoundError, ValueError) as exc:
        raise HarborImportError(f"dataset {display_path(root)}: {exc}") from exc
    by_id = {t.id: t for t in ds.tasks}
    missing = sorted({tid for _, _, tid in parsed if tid not in by_id})
    if missing:
        raise HarborImportError(f"dataset {display_path(root)} lacks: {', '.join(missing)}")
    exported = manifest.get("tasks")
    exported = exported if isinstance(exported, dict) else {}
    changed = sorted(
        {
            tid
            for _, _, tid in parsed
            if isinstance(exported.get(task_dir_name(tid)), dict)
            and exported[task_dir_name(tid)].get("task_digest") != task_digest(by_id[tid])
        }
    )
    if changed:
        raise HarborImportError(
            f"dataset {display_path(root)}: these tasks differ from the ones exported "
            f"(task digest): {', '.join(changed)}"
        )
    rd = RunDir(run)
    if run.is_symlink() or (run.exists() and (not run.is_dir() or any(run.iterdir()))):
        raise HarborImportError(f"{display_path(run)}: not a new or empty folder")

    parsed.sort(key=lambda p: (p[1].started_at is None, p[1].started_at or datetime.min, p[0]))
    epochs: dict[tuple[str, str, str | None], int] = {}
    records: list[TrialRecord] = []
    agents: dict[tuple[str, str], dict[str, Any]] = {}
    for name, res, tid in parsed:
        agent, model = res.agent_info.name, _model(res)
        key = (tid, agent, model)
        epochs[key] = epochs.get(key, 0) + 1
        try:
            trial = trial_id(tid, agent, model, epochs[key])
        except UnsafeIdError as exc:
            raise HarborImportError(f"{name}: {exc}") from exc
        agents.setdefault((agent, model or "-"), {"harbor_agent": agent, "versions": []})
        versions = agents[(agent, model or "-")]["versions"]
        if res.agent_info.version and res.agent_info.version not in versions:
            versions.append(res.agent_info.version)
        rd.reset_trial_dir(trial)
        unsafe = _output_problem(job, name)
        if unsafe is not None:
            collected_files, refused, ignored = [], [f"{OUTPUT_ARTIFACT_DIR}: {unsafe}"], []
        else:
            got = collect_deliverables(
                job / name / "artifacts" / OUTPUT_ARTIFACT_DIR, rd.deliverables_dir(trial)
            )
            collected_files, refused, ignored = got.files, got.refused, got.ignored
        exc_info = res.exception_info
        status = trial_status(exc_info.exception_type if exc_info else None, bool(collected_files))
        error = None
        if exc_info is not None:
            error = f"{exc_info.exception_type}: {exc_info.exception_message}"[:2000]
        elif status == TrialStatus.no_deliverable:
            error = "Harbor collected no deliverable from the output folder"
        ar = res.agent_result or _AgentResult()
        usage = Usage(
            calls=0,
            input_tokens=ar.n_input_tokens or 0,
            cached_input_tokens=ar.n_cache_tokens or 0,
            output_tokens=ar.n_output_tokens or 0,
            cost_usd=ar.cost_usd,
        )
        details: dict[str, Any] = {
            "harbor_trial": name,
            "harbor_agent": agent,
            "harbor_agent_version": res.agent_info.version,
            "harbor_timings": {k: _seconds(getattr(res, k)) for k in _TIMINGS},
        }
        if exc_info is not None:
            details["harbor_exception"] = exc_info.exception_type
        if res.verifier_result is not None and res.verifier_result.rewards is not None:
            details["harbor_rewards"] = res.verifier_result.rewards
        records.append(
            TrialRecord(
                trial_id=trial,
                task_id=tid,
                task_digest=task_digest(by_id[tid]),
                agent=agent,
                model=model or "-",
                epoch=epochs[key],
                status=status,
                deliverables=collected_files,
                refused=refused,
                ignored=ignored,
                started_at=_iso(res.started_at),
                finished_at=_iso(res.finished_at),
                wall_seconds=_seconds(res.agent_execution),
                usage=usage,
                error=error,
                details=details,
                sandbox=SANDBOX,
                protocol=protocol,
            )
        )
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    rd.write_lock(
        RunLock(
            harness_version=__version__,
            created_at=stamp,
            updated_at=stamp,
            dataset_root=str(Path(os.path.abspath(root))),
            tasks={tid: task_digest(by_id[tid]) for tid in sorted({r.task_id for r in records})},
            agents=[LockAgent(agent=a, model=m) for a, m in agents],
            epochs=max(epochs.values()),
            config=LockConfig(agents={f"{a}@{m}": info for (a, m), info in agents.items()}),
            sandboxes=[SANDBOX],
            protocol=protocol,
        )
    )
    for rec in records:
        rd.write_trial(rec)
    cfg = judge or JudgeConfig()
    grade_run(run, cfg, dataset=ds, progress=False)
    return ImportResult(run, sorted(r.trial_id for r in records), cfg.key)
